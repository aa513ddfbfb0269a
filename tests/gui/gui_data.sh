#!/bin/bash
# The GUI's data files through their own validators (each check skipped
# when its tool is missing), and the schema compiles strictly.
# Usage: gui_data.sh DESKTOP METAINFO SCHEMA_XML
set -u
ran=0; fail=0
if command -v desktop-file-validate > /dev/null; then
  ran=1; desktop-file-validate "$1" && echo "ok: $1" || fail=1
fi
if command -v appstreamcli > /dev/null; then
  ran=1; appstreamcli validate --no-net --pedantic "$2" && echo "ok: $2" || fail=1
fi
if command -v glib-compile-schemas > /dev/null; then
  ran=1; dir=$(mktemp -d); cp "$3" "$dir/"
  glib-compile-schemas --strict --dry-run "$dir" && echo "ok: $3" || fail=1
  rm -rf "$dir"
fi
[ $ran = 1 ] || { echo "SKIP: no validator installed"; exit 77; }
exit $fail
