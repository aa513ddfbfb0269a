#!/bin/bash
# The node menu and node state on the canvas, through real input under
# Xvfb (xdotool):
#  - right-click on a node opens its actions (a screenshot of the screen
#    with the menu open is left in the build tree); on empty canvas the
#    add-node search still opens;
#  - Bypass saves "ui": {"bypass": true}, the viewer then shows the input
#    passed through, undo takes it back, and the app's export of the
#    bypassed graph equals `tgraph eval` of the saved file byte for byte;
#  - Rename, Duplicate and Pin to Viewer from the menu; the pin saved as
#    "ui": {"viewer_pin": true}, a file with one opens with that node in
#    the viewer, the viewer's pin button unpins it (saved so), the menu
#    item toggles it and undo takes an unpin back;
#  - a noise scale below two cells: a yellow warning badge on the node
#    (its pixels in the screenshot), its message in the inspector and the
#    canvas, gone once the scale is raised; a bypassed node drawn dimmed;
#  - a number typed out of range in a vector or the World tab is clamped
#    with a note (the status line; the spin button's tooltip).
# Skips (77) when no X server can start or xdotool is not installed.
# Usage: gui_nodemenu.sh TERRANE TGRAPH
set -u
terrane=$1
tgraph=$2
src=${TG_SOURCE_ROOT:-.}
out=${TG_BUILD_ROOT:-.}/tests/gui/nodemenu
. "$src/tests/gui/xserver.sh"
input_test_start "$out"
command -v import > /dev/null || { echo "SKIP: ImageMagick's import is not installed"; exit 77; }
cp "$src/tests/gui/data/nodemenu.tgraph" "$out/"

fail=0

steps=(
  "wait"
  "screenshot $out/badges.png"
  "select base"
  "wait"
  "print-node base"
  "print-viewer"
  # The menu on a node, and its screenshot (and one before, to compare).
  "hover graph:600,600"
  "sleep 300"
  "screenshot-screen $out/before_menu.png"
  "rclick node:smooth"
  "sleep 300"
  "screenshot-screen $out/menu.png"
  "click menu:Bypass"
  "wait"
  "select smooth"
  "wait"
  "print-viewer"
  "screenshot $out/bypassed.png"
  "save $out/bypassed.tgraph"
  "export $out/gui_export"
  "undo"
  "wait"
  "save $out/undone.tgraph"
  "redo"
  "wait"
  # Rename through the menu.
  "rclick node:norm"
  "click menu:Rename…"
  "sleep 300"
  "key ctrl+a"
  "type flat"
  "key Return"
  "wait"
  # Duplicate, then pin the shape and select another node.
  "rclick node:island"
  "click menu:Duplicate"
  "wait"
  "rclick node:island"
  "click menu:Pin to Viewer"
  "wait"
  "select png"
  "wait"
  "print-viewer"
  # A right-click on empty canvas keeps the add-node search.
  "rclick graph:600,600"
  "sleep 300"
  "screenshot-screen $out/add.png"
  "key Escape"
  # The warning goes once the noise's features are two cells or more.
  "set base.scale_m=100"
  "wait"
  "print-node base"
  "screenshot $out/no_warning.png"
  "save $out/final.tgraph"
  "quit"
)
run_script nodemenu "$(IFS=';'; echo "${steps[*]}")" "$out/nodemenu.tgraph"

# A typed number out of range in a vector (the shape's centre) and in
# the World tab is clamped with a note, as the node's numbers are.
steps=(
  "wait"
  "select island"
  "wait"
  "click tip:X"
  "key ctrl+a"
  "key minus"
  "type 3000000000"
  "key Tab"
  "wait"
  "status"
  "click tip:The selected node's settings, or the world's@0.75,0.5"
  "sleep 1000"
  "click css:spinbutton"
  "key ctrl+a"
  "type 5000000"
  "key Tab"
  "wait"
  "status"
  "screenshot $out/world_clamped.png"
  "save $out/clamped.tgraph"
  "quit"
)
run_script clamp "$(IFS=';'; echo "${steps[*]}")" "$out/nodemenu.tgraph"

# The pin is saved on the node: the file opens with the shape in the
# viewer whatever is selected; the viewer's pin button lets go (saved so).
steps=(
  "wait"
  "print-viewer"
  "screenshot $out/pinned_open.png"
  "select png"
  "wait"
  "print-viewer"
  "click tip:Pinned: the viewer keeps showing “island”. Click to follow the selection again"
  "wait"
  "print-viewer"
  "save $out/unpinned.tgraph"
  # The menu's item is a toggle: pin the raw export, unpin it, undo that.
  "rclick node:raw"
  "click menu:Pin to Viewer"
  "wait"
  "print-viewer"
  # The pointer goes to the node first, as a hand does: a press within a
  # frame of the menu closing reaches the closing popup under the cairo
  # renderer (the one the app picks on llvmpipe), not the canvas.
  "hover node:raw"
  "rclick node:raw"
  "click menu:Pin to Viewer"
  "wait"
  "print-viewer"
  "undo"
  "wait"
  "print-viewer"
  "save $out/repinned.tgraph"
  "quit"
)
run_script pinned "$(IFS=';'; echo "${steps[*]}")" "$out/final.tgraph"

"$tgraph" eval "$out/bypassed.tgraph" -o "$out/cli_export" --quiet 2> "$out/cli.err" ||
  { echo "FAIL: tgraph eval of the saved file"; cat "$out/cli.err"; fail=1; }
if diff -r "$out/gui_export" "$out/cli_export"; then
  echo "ok: the app's export of the bypassed graph equals tgraph eval ($(ls "$out/gui_export" | tr '\n' ' '))"
else
  echo "FAIL: the app's export of the bypassed graph differs from tgraph eval"; fail=1
fi
grep -q 'warning: node "base" (noise.fbm): Scale 20 m is smaller than two cells' "$out/cli.err" ||
  { echo "FAIL: tgraph eval did not warn about the noise scale"; fail=1; }

PYTHONPATH="$src/tests/gui" python3 - "$out" <<'PY' || fail=1
import json, re, sys
from png_stats import read_png
out = sys.argv[1]
fail = []
def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        fail.append(what)

def nodes(name):
    return {n["id"]: n for n in json.load(open(out + "/" + name))["nodes"]}

def bypassed(name):
    return sorted(i for i, n in nodes(name).items() if n.get("ui", {}).get("bypass"))

log = open(out + "/nodemenu.log").read()
warn = "Scale 20 m is smaller than two cells of the world's 15.625 m grid"
check(re.search(r"node base: (done|cached) \| " + re.escape(warn), log) is not None,
      "the canvas has the noise node's warning, and the node ran")
check("inspector message: " + warn in log, "the inspector shows the warning")
check(bypassed("bypassed.tgraph") == ["mix", "smooth"],
      "Bypass from the menu saved ui.bypass on smooth (%s)" % bypassed("bypassed.tgraph"))
check(nodes("bypassed.tgraph")["smooth"]["ui"] == {"x": 240, "y": 40, "bypass": True},
      "the node keeps its position beside the flag")
check(bypassed("undone.tgraph") == ["mix"], "undo takes the bypass back (%s)" % bypassed("undone.tgraph"))
final = nodes("final.tgraph")
check("flat" in final and "norm" not in final, "Rename from the menu renamed norm to flat")
check("island_2" in final and final["island_2"]["type"] == "gen.shape",
      "Duplicate from the menu copied the shape (%s)" % sorted(final))
check(bypassed("final.tgraph") == ["mix", "smooth"], "redo put the bypass back")
check("viewer: node island, pinned island" in log, "Pin to Viewer keeps the shape in the viewer")
def pinned(name):
    return sorted(i for i, n in nodes(name).items() if n.get("ui", {}).get("viewer_pin"))
check(pinned("final.tgraph") == ["island"], "the pin is saved as ui.viewer_pin on the shape (%s)"
      % pinned("final.tgraph"))
check(pinned("bypassed.tgraph") == [], "no pin before Pin to Viewer")
pin_log = open(out + "/pinned.log").read()
views = re.findall(r"viewer: node ([^,\s]+), pinned ([^,\s]+)", pin_log)
check(views[:2] == [("island", "island")] * 2,
      "a file with a pinned node opens with it in the viewer, and it stays there (%s)" % views)
check(len(views) == 6 and views[2][1] == "-", "the viewer's pin button lets go (%s)" % views[2:3])
check(pinned("unpinned.tgraph") == [], "and the file saves without the pin")
check([v[1] for v in views[3:]] == ["raw", "-", "raw"],
      "Pin to Viewer toggles: pins, unpins, and undo pins again (%s)" % views[3:])
check(pinned("repinned.tgraph") == ["raw"], "saved pinned on raw (%s)" % pinned("repinned.tgraph"))
check(re.search(r"node base: (done|cached) \|  \|", log) is not None,
      "no warning once the scale is 100 m")

def yellow(png):
    w, h, ch, rows = read_png(out + "/" + png)
    n = 0
    for row in rows:
        for i in range(0, w * ch, ch):
            r, g, b = row[i], row[i + 1], row[i + 2]
            if r > 225 and 170 < g < 215 and b < 90:
                n += 1
    return n
check(yellow("badges.png") > 40, "a yellow warning badge is drawn (%d pixels)" % yellow("badges.png"))
check(yellow("no_warning.png") == 0, "and none once the warning is gone (%d)" % yellow("no_warning.png"))
# A menu is on screen when the canvas (dark, the left of the screen) has
# a light popover on it that the screen before the click did not have.
def light(png):
    w, h, ch, rows = read_png(out + "/" + png)
    return sum(1 for row in rows[: h * 3 // 4] for i in range(0, 800 * ch, ch)
               if min(row[i:i + 3]) > 235)
base = light("before_menu.png")
check(light("menu.png") > base + 5000,
      "the node menu shows on the canvas (%d light pixels, %d before)" % (light("menu.png"), base))
check(light("add.png") > base + 5000,
      "the add-node search shows on empty canvas (%d, %d before)" % (light("add.png"), base))
clamp = open(out + "/clamp.log").read()
check("status: Centre: -3000000000 m is below the minimum -1000000000 m; set to -1000000000 m"
      in clamp, "a vector's typed value clamped, and the status says so")
check("status: Size X: 5000000 m is above the maximum 1000000 m; set to 1000000 m" in clamp,
      "the World tab's typed value clamped, and the status says so")
doc = json.load(open(out + "/clamped.tgraph"))
check(doc["world"]["size_m"][0] == 1000000, "the world's size was clamped (%s)" % doc["world"]["size_m"])
check([n for n in doc["nodes"] if n["id"] == "island"][0]["params"]["center_m"][0] == -1e9,
      "the centre was clamped")
sys.exit(1 if fail else 0)
PY
exit $fail
