#!/bin/bash
# Crash recovery in the real app under Xvfb: an edit is autosaved, the app
# "crashes" (exits with no clean-up), and the next start on the same file
# offers the copy; restoring it brings the edit back (and saving removes
# the copy), declining removes it and leaves the file alone.  Skips (77)
# only when no X server can start.
# Usage: gui_autosave.sh TERRANE
set -u
terrane=$1
src=${TG_SOURCE_ROOT:-.}
out=${TG_BUILD_ROOT:-.}/tests/gui/autosave
rm -rf "$out"
mkdir -p "$out/state"

. "$src/tests/gui/xserver.sh"
if ! xserver_start "$out"; then
  echo "SKIP: no X server can start (Xvfb)"
  exit 77
fi
export GSETTINGS_BACKEND=memory NO_AT_BRIDGE=1 GDK_BACKEND=x11 LC_ALL=C.UTF-8 LANGUAGE=C
export XDG_STATE_HOME="$out/state" TERRANE_AUTOSAVE_SECONDS=1
run () {
  TERRANE_TEST_SCRIPT="$1" timeout 120 "$terrane" "$out/island.tgraph" > "$2" 2>&1
}
fail=0
cp "$src/data/examples/island.tgraph" "$out/island.tgraph"
cp "$out/island.tgraph" "$out/original.tgraph"
copies () { ls "$out/state/terrane/autosave/"*.tgraph 2> /dev/null; }

run "wait;set terrain.scale_m=1234;wait;sleep 2500;crash" "$out/crash1.log"
[ $? -eq 3 ] || { echo "FAIL: the crash step did not stop the app"; cat "$out/crash1.log"; exit 1; }
n=$(copies | wc -l)
if [ "$n" -eq 1 ] && grep -q '"scale_m": 1234' $(copies); then
  echo "ok: the edit was autosaved to $(copies)"
else
  echo "FAIL: expected one recovery copy with the edit, found $n"; fail=1
fi
cmp -s "$out/island.tgraph" "$out/original.tgraph" || { echo "FAIL: autosave touched the file"; fail=1; }

run "wait;recovery restore;wait;save $out/island.tgraph;quit" "$out/restore.log" \
  || { echo "FAIL: restoring"; cat "$out/restore.log"; fail=1; }
grep -q '"scale_m": 1234' "$out/island.tgraph" && echo "ok: restored and saved the edit" \
  || { echo "FAIL: the restored edit is not in the saved file"; fail=1; }
[ -z "$(copies)" ] && echo "ok: saving removed the recovery copy" \
  || { echo "FAIL: a recovery copy outlived the save: $(copies)"; fail=1; }

cp "$out/original.tgraph" "$out/island.tgraph"
run "wait;set terrain.scale_m=777;wait;sleep 2500;crash" "$out/crash2.log"
run "wait;recovery discard;wait;quit" "$out/discard.log" \
  || { echo "FAIL: declining"; cat "$out/discard.log"; fail=1; }
[ -z "$(copies)" ] && cmp -s "$out/island.tgraph" "$out/original.tgraph" \
  && echo "ok: declining removed the copy and left the file alone" \
  || { echo "FAIL: after declining: copies $(copies)"; fail=1; }

# No copy, no offer: the step fails when nothing was offered.
run "wait;recovery restore;quit" "$out/none.log"
[ $? -ne 0 ] && grep -q "no recovery copy was offered" "$out/none.log" \
  && echo "ok: no offer without a copy" || { echo "FAIL: an offer appeared from nowhere"; fail=1; }
exit $fail
