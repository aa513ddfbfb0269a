#!/bin/bash
# zh_CN.po is well formed and translates every string of the GUI's own
# files (the node descriptors' strings are translated as they come).
set -u
src=${TG_SOURCE_ROOT:-.}
command -v xgettext > /dev/null && command -v msgmerge > /dev/null || { echo "SKIP: no gettext"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$src"
msgfmt --check -o /dev/null po/zh_CN.po || exit 1
xgettext --from-code=UTF-8 --keyword=_ --keyword=N_ --keyword=g_dngettext:2,3 -o "$tmp/gui.pot" \
  $(grep -E '^(app/gui|data)/' po/POTFILES) || exit 1
msgmerge -q --no-fuzzy-matching po/zh_CN.po "$tmp/gui.pot" -o "$tmp/merged.po" || exit 1
untranslated=$(msgattrib --untranslated --no-obsolete "$tmp/merged.po" | grep -c '^msgid ' || true)
total=$(grep -c '^msgid ' "$tmp/gui.pot")
echo "GUI strings: $total, untranslated in zh_CN: $((untranslated > 0 ? untranslated - 1 : 0))"
[ "$untranslated" -le 1 ] || { msgattrib --untranslated --no-obsolete "$tmp/merged.po"; exit 1; }
