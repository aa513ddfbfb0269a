#!/bin/bash
# The real app under Xvfb: opens the island example, evaluates it, edits a
# parameter, saves, exports and takes a screenshot; the export must equal
# `tgraph eval` of the saved file byte for byte (files and manifest), and
# the screenshot must not be blank.  Then the 10-node graph, for the
# edit-to-preview timing (printed, not asserted: tests are not
# benchmarks).  Skips (77) only when no X server can start.
# Usage: gui_app.sh TERRANE TGRAPH
set -u
terrane=$1
tgraph=$2
src=${TG_SOURCE_ROOT:-.}
out=${TG_BUILD_ROOT:-.}/tests/gui/artifacts
rm -rf "$out"
mkdir -p "$out"

. "$src/tests/gui/xserver.sh"
if ! xserver_start "$out"; then
  echo "SKIP: no X server can start (Xvfb)"
  exit 77
fi

export GSETTINGS_BACKEND=memory
export NO_AT_BRIDGE=1
export GDK_BACKEND=x11
run () {
  TERRANE_DEBUG=timing TERRANE_TEST_SCRIPT="$1" timeout 300 "$terrane" "$2" > "$3" 2>&1
}

fail=0
script="select profile;wait;set terrain.scale_m=1500;wait;set coast.max_input=0.7;wait"
script="$script;screenshot $out/island.png;save $out/island_edited.tgraph;export $out/gui_export;quit"
if ! run "$script" "$src/data/examples/island.tgraph" "$out/island.log"; then
  echo "FAIL: the app did not finish its script:"; cat "$out/island.log"; exit 1
fi
cat "$out/island.log"
grep -q "timing: preview profile 513" "$out/island.log" || { echo "FAIL: no preview was shown"; fail=1; }

"$tgraph" eval "$out/island_edited.tgraph" -o "$out/cli_export" --quiet || { echo "FAIL: tgraph eval"; exit 1; }
if diff -r "$out/gui_export" "$out/cli_export"; then
  echo "ok: GUI export equals tgraph eval ($(ls "$out/gui_export" | tr '\n' ' '))"
else
  echo "FAIL: the GUI export differs from tgraph eval"; fail=1
fi
# The status counts the files the export nodes wrote; the manifest apart.
n=$(ls "$out/gui_export" | grep -vc '^manifest.json$')
if grep -q "script: status: Exported $n files and manifest.json to $out/gui_export$" "$out/island.log"; then
  echo "ok: the status counts $n files and the manifest"
else
  echo "FAIL: the status miscounts the $n exported files: $(grep 'status: Exported' "$out/island.log")"; fail=1
fi
grep -q '"graph": "island_edited.tgraph"' "$out/gui_export/manifest.json" || { echo "FAIL: manifest graph name"; fail=1; }
grep -q '"scale_m": 1500' "$out/island_edited.tgraph" || { echo "FAIL: the edit was not saved"; fail=1; }
grep -q '"ui": { "x": 1000, "y": 40 }' "$out/island_edited.tgraph" || { echo "FAIL: node positions not kept"; fail=1; }

if python3 "$src/tests/gui/png_stats.py" "$out/island.png"; then
  echo "ok: screenshot $out/island.png is not blank"
else
  echo "FAIL: the screenshot is blank"; fail=1
fi

# An export over the memory limit is refused before it starts, naming the
# node, and writes nothing.
script="wait;memory-limit 8M;export-refused $out/refused;quit"
if ! run "$script" "$src/data/examples/island.tgraph" "$out/refused.log"; then
  echo "FAIL: an export over the memory limit was not refused:"; cat "$out/refused.log"; fail=1
elif ! grep -q 'script: refused: Not enough memory: node ".*": needs about .* at 1025²; 8.0 MiB available' "$out/refused.log"; then
  echo "FAIL: the refusal does not name the node and the figures:"; cat "$out/refused.log"; fail=1
else
  echo "ok: $(grep 'script: refused' "$out/refused.log")"
fi

# A file that does not load: the engine's message, the window stays empty.
if ! run "wait;quit" "$src/tests/cli/data/bad_syntax.tgraph" "$out/bad.log"; then
  echo "FAIL: the app did not survive a bad file:"; cat "$out/bad.log"; fail=1
fi

script="select limit;wait;set base.scale_m=1700;wait;set steps.steps=10;wait;set detail.octaves=5;wait"
script="$script;screenshot $out/ten_nodes.png;quit"
run "$script" "$src/tests/gui/data/ten_nodes.tgraph" "$out/ten.log" || { cat "$out/ten.log"; fail=1; }
grep timing "$out/ten.log"
exit $fail
