#!/bin/bash
# The canvas as one first meets it, through real input under Xvfb (xdotool):
#  - Tab in a fresh window opens the node search without a click first;
#  - the search ranks the label's exact and prefix matches first ("noise"
#    adds FBM Noise, "field" adds Field CSG, not 3D Noise Field);
#  - a node added while another is selected is wired to it when a type
#    fits, and left unwired when none does;
#  - the canvas keeps a usable width at 815×617 and at the minimum window
#    size, beside a viewer that shrinks too, and the graph is refitted;
#  - hollow (unlinked optional) ports are circles with no stray line to
#    the next port, checked in the screenshot's pixels.
# Screenshots are left in the build tree.  Skips (77) when no X server can
# start or xdotool is not installed.
# Usage: gui_canvas.sh TERRANE
set -u
terrane=$1
src=${TG_SOURCE_ROOT:-.}
out=${TG_BUILD_ROOT:-.}/tests/gui/canvas
. "$src/tests/gui/xserver.sh"
input_test_start "$out"
cp "$src/tests/gui/data/layout.tgraph" "$out/"

fail=0

steps=(
  "wait"
  # No click anywhere: the fresh window's canvas has the keys.
  "key Tab"
  "type noise"
  "key Return"
  "wait"
  # The new noise node is selected: a terrace added now takes its height.
  "key Tab"
  "type terrace"
  "key Return"
  "wait"
  # The terrace is selected, but nothing of Field CSG takes a height.
  "key Tab"
  "type field"
  "key Return"
  "wait"
  "screenshot $out/fresh.png"
  "save $out/fresh.tgraph"
  "quit"
)
run_script fresh "$(IFS=';'; echo "${steps[*]}")"

# Where the canvas says the splat node's hollow ports are, for the pixels.
steps=("wait" "print-layout" "print-view")
for k in 1 2 3 4 5 6 7 8; do steps+=("print-target in:splat.mask$k"); done
steps+=(
  "screenshot $out/ports.png"
  "resize 815x617"
  "wait"
  "print-layout"
  "print-view"
  "screenshot $out/small.png"
  "resize min"
  "wait"
  "print-layout"
  "print-view"
  "screenshot $out/minimum.png"
  "quit"
)
run_script layout "$(IFS=';'; echo "${steps[*]}")" "$out/layout.tgraph"

PYTHONPATH="$src/tests/gui" python3 - "$out" <<'EOF' || fail=1
import json, re, sys
from png_stats import read_png
out = sys.argv[1]
fail = []
def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        fail.append(what)

doc = json.load(open(out + "/fresh.tgraph"))
types = [n["type"] for n in doc["nodes"]]
ids = {n["type"]: n["id"] for n in doc["nodes"]}
links = {(l["from"], l["to"]) for l in doc["links"]}
check(types[:1] == ["noise.fbm"], "Tab in a fresh window, \"noise\" and Enter added FBM Noise (%s)" % types)
check(types[2:3] == ["field.csg"], "\"field\" ranks the label prefix Field CSG first (%s)" % types)
check(len(types) == 3 and types[1] == "filter.terrace"
      and ("%s.height" % ids["noise.fbm"], "%s.height" % ids["filter.terrace"]) in links,
      "the terrace added with the noise selected is wired to it (%s)" % sorted(links))
check(len(links) == 1, "Field CSG, fitting nothing of the terrace, stayed unwired (%s)" % sorted(links))

log = open(out + "/layout.log").read()
lay = [dict(window=tuple(map(int, m[0:2])), canvas=tuple(map(int, m[2:4])),
            viewer=tuple(map(int, m[5:7])))
       for m in re.findall(r"layout: window (\d+)x(\d+), canvas (\d+)x(\d+) \(min width (\d+)\), "
                           r"viewer (\d+)x(\d+)", log)]
zooms = [float(z) for z in re.findall(r"view: canvas zoom ([\d.]+)", log)]
check(len(lay) == 3 and len(zooms) == 3, "three layouts printed (%s)" % lay)
if len(lay) == 3 and len(zooms) == 3:
    big, small, least = lay
    check(small["window"][0] <= 815 and small["canvas"][0] >= small["window"][0] // 2,
          "at 815×617 the canvas has half the width or more (%s)" % small)
    check(small["viewer"][0] >= 360, "and the viewer keeps a usable width (%s)" % small)
    check(least["window"][0] <= 700 and least["window"][1] <= 480,
          "the minimum window is small (%s)" % (least["window"],))
    check(least["canvas"][0] >= 280 and least["canvas"][1] >= 200,
          "at the minimum size the canvas keeps 280×200 or more (%s)" % (least["canvas"],))
    check(least["viewer"][0] >= 360 and least["viewer"][1] >= 180,
          "and the viewer 360×180 or more (%s)" % (least["viewer"],))
    check(zooms[1] < zooms[0] and zooms[2] < zooms[1],
          "the graph is refitted as the canvas shrinks (zoom %s)" % zooms)

# Between two hollow ports, left of their labels, the node's body only.
# Each ring is found near where the canvas says its port is: the centre of
# its bright pixels.
pts = [tuple(map(float, m)) for m in re.findall(r"target: in:splat.mask\d at ([\d.]+),([\d.]+)", log)]
w, h, ch, rows = read_png(out + "/ports.png")
z = zooms[0] if zooms else 1
def ring_centre(x, y):
    xs = ys = n = 0
    for j in range(int(y - 9 * z), int(y + 9 * z) + 1):
        for i in range(int(x - 9 * z), int(x + 9 * z) + 1):
            if min(rows[j][i * ch:i * ch + 3]) > 150:
                xs, ys, n = xs + i, ys + j, n + 1
    return (xs / n, ys / n) if n else (x, y)
rings = [ring_centre(x, y) for x, y in pts]
body = (0.17 * 255, 0.18 * 255, 0.20 * 255)
worst = 0
for (x0, y0), (x1, y1) in zip(rings, rings[1:]):
    # Below and above the rings (radius 6 with the stroke), right of the
    # node's outline, short of the label (at 11).
    for y in range(int(y0 + 7.5 * z), int(y1 - 7.5 * z) + 1):
        for x in range(int(x0 + 2 * z) + 1, int(x0 + 9.5 * z) + 1):
            px = rows[y][x * ch:x * ch + 3]
            worst = max(worst, max(abs(px[c] - body[c]) for c in range(3)))
check(len(pts) == 8, "eight hollow ports located (%d)" % len(pts))
check(worst < 30, "no stray line between the hollow ports (largest difference from the "
      "node's body %d of 255)" % worst)
sys.exit(1 if fail else 0)
EOF
exit $fail
