#!/bin/bash
# The Export dialog by real input: Ctrl+E opens it, a resolution and a
# folder are typed, Export writes the graph's exports there at that
# resolution; the files must equal `tgraph eval --resolution N` of the
# same file byte for byte, the status must count them, and the graph keeps
# its own resolution.  Skips (77) only without xdotool or an X server.
# Usage: gui_export.sh TERRANE TGRAPH
set -u
terrane=$1
tgraph=$2
src=${TG_SOURCE_ROOT:-.}
out=${TG_BUILD_ROOT:-.}/tests/gui/export-artifacts
. "$src/tests/gui/xserver.sh"
input_test_start "$out"
fail=0

cp "$src/data/examples/island.tgraph" "$out/island.tgraph"
dir="$out/gui 129"
res=129
script="wait;key ctrl+e;sleep 400;screenshot-dialog $out/dialog_default.png"
script="$script;click tip:Samples along X: the graph's own resolution, or any other for this export (as tgraph eval --resolution)"
script="$script;key ctrl+a;type $res;key Tab"
script="$script;click tip:The folder the files and manifest.json are written into;key ctrl+a;type $dir"
script="$script;sleep 200;screenshot-dialog $out/dialog.png"
script="$script;click tip:Write every export of the graph into the folder;sleep 300;wait;status"
script="$script;save $out/saved.tgraph;quit"
run_script export "$script" "$out/island.tgraph"

"$tgraph" eval "$out/island.tgraph" --resolution $res -o "$out/cli" --quiet || { echo "FAIL: tgraph eval"; exit 1; }
if [ -d "$dir" ] && diff -r "$dir" "$out/cli"; then
  echo "ok: the dialog's export at $res equals tgraph eval --resolution $res ($(ls "$dir" | tr '\n' ' '))"
else
  echo "FAIL: the dialog's export differs from tgraph eval --resolution $res"; fail=1
fi
grep -q "\"resolution\": $res" "$dir/manifest.json" || { echo "FAIL: manifest resolution is not $res"; fail=1; }
n=$(ls "$out/cli" | grep -vc '^manifest.json$')
if grep -q "script: status: Exported $n files and manifest.json to $dir$" "$out/export.log"; then
  echo "ok: the status counts $n files and the manifest"
else
  echo "FAIL: the status does not count $n files: $(grep 'status:' "$out/export.log")"; fail=1
fi
# The export's resolution is not an edit of the graph.
grep -q '"resolution": 1025' "$out/saved.tgraph" || { echo "FAIL: the graph's resolution changed"; fail=1; }
grep -q "script: window: Export" "$out/export.log" || { echo "FAIL: no Export dialog was shown"; fail=1; }
exit $fail
