#!/bin/bash
# Number parameters in the inspector, through real input under Xvfb
# (xdotool):
#  - the noise scale slider (soft range 10..20000 m) is logarithmic: the
#    same 40 px drag multiplies the value by the same ratio wherever it
#    starts, where a linear slider would add the same number of metres;
#  - warp (soft range 0..5000 m) is log1p-style: 0 is on the slider, and a
#    quarter of the way along is a few metres;
#  - octaves (1..16, an integer) keeps a linear slider in whole steps;
#  - a value typed beyond the hard range (scale -500 m, octaves 999) is
#    clamped with a note under the row (and on the entry's tooltip), and
#    the saved value is the bound.
# Screenshots are left in the build tree.  Skips (77) when no X server can
# start or xdotool is not installed.
# Usage: gui_sliders.sh TERRANE
set -u
terrane=$1
src=${TG_SOURCE_ROOT:-.}
out=${TG_BUILD_ROOT:-.}/tests/gui/sliders
. "$src/tests/gui/xserver.sh"
input_test_start "$out"
cp "$src/tests/gui/data/pointer.tgraph" "$out/"

fail=0
a="slider:scale_m@0.25,0.5"
c="slider:scale_m@0.5,0.5"
o="slider:octaves@0.25,0.5"
steps=(
  "click node:noise"
  "wait"
  "print-target slider:scale_m"
  # A press in the trough away from the knob warps the knob there: set the
  # value at the far end first, press and release in place, then again
  # with 40 px of motion.
  "set noise.scale_m=20000" "drag $a -> $a" "wait" "print-param noise.scale_m"
  "set noise.scale_m=20000" "drag $a -> $a+40" "wait" "print-param noise.scale_m"
  "set noise.scale_m=10" "drag $c -> $c" "wait" "print-param noise.scale_m"
  "set noise.scale_m=10" "drag $c -> $c+40" "wait" "print-param noise.scale_m"
  "screenshot $out/dragged.png"
  "set noise.octaves=16" "drag $o -> $o" "wait" "print-param noise.octaves"
  "set noise.octaves=16" "drag $o -> $o+40" "wait" "print-param noise.octaves"
  # Typed beyond the hard range.
  "click spin:scale_m"
  "key ctrl+a"
  "key minus"
  "type 500"
  "key Return"
  "wait"
  "status"
  "print-param noise.scale_m"
  "screenshot $out/clamped.png"
  # Octaves is below the fold: scroll the inspector over the scale's label.
  "scroll tip:Feature size of the first octave: the lattice cell, in metres -3"
  "click spin:octaves"
  "key ctrl+a"
  "type 999"
  "key Return"
  "wait"
  "status"
  "print-param noise.octaves"
  "screenshot $out/clamped_octaves.png"
  # Warp, soft range 0..5000 m: log1p-style, so 0 is on the slider and a
  # quarter of the way is metres, not a quarter of 5000 m.
  "set noise.warp_m=5000"
  "wait"
  "scroll tip:Feature size of the first octave: the lattice cell, in metres -10"
  "drag slider:warp_m@0.25,0.5 -> slider:warp_m@0.25,0.5"
  "wait" "print-param noise.warp_m"
  "drag slider:warp_m@0.25,0.5 -> slider:warp_m@0,0.5" "wait" "print-param noise.warp_m"
  "screenshot $out/warp.png"
  "save $out/clamped.tgraph"
  "quit"
)
run_script sliders "$(IFS=';'; echo "${steps[*]}")" "$out/pointer.tgraph"

python3 - "$out" <<'EOF' || fail=1
import json, sys
out = sys.argv[1]
log = open(out + "/sliders.log").read().splitlines()
def values(name):
    p = "script: param noise.%s = " % name
    return [float(l[len(p):]) for l in log if l.startswith(p)]
fail = []
def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        fail.append(what)

s = values("scale_m")
check(len(s) == 5, "five scale values printed (%s)" % s)
if len(s) == 5:
    a, b, c, d = s[:4]
    r1, r2 = b / a, d / c
    check(10 <= a < c and a < b and c < d <= 20000,
          "the drags move the scale up its soft range (%s)" % s[:4])
    # A log slider: the same ratio; a linear one adds the same metres, so
    # its ratio at the upper start would be far smaller.
    check(abs(r1 / r2 - 1) < 0.03, "the same 40 px is the same ratio: x%.3f and x%.3f" % (r1, r2))
    check((d - c) > 2 * (b - a), "and not the same metres: +%g m and +%g m" % (b - a, d - c))
    check(s[4] == 1, "-500 m typed is clamped to the minimum 1 m (%s)" % s[4])
o = values("octaves")
check(len(o) == 3 and o[0] < o[1] < 16, "octaves drag in whole steps (%s)" % o)
check(len(o) == 3 and o[2] == 16, "999 octaves typed is clamped to 16 (%s)" % o[2:])
notes = [l[len("script: param "):] for l in log if " note: " in l]
check(notes[:1] == ["noise.scale_m note: Scale: -500 m is below the minimum 1 m; set to 1 m"],
      "a note under the scale says it was clamped (%s)" % notes[:1])
check(notes[1:2] == ["noise.octaves note: Octaves: 999 is above the maximum 16; set to 16"],
      "and under the octaves (%s)" % notes[1:2])
w = values("warp_m")
check(len(w) == 2 and 0 < w[0] < 100 and w[1] == 0,
      "warp: a quarter of the slider is a few metres, its left end 0 (%s)" % w)
params = [n for n in json.load(open(out + "/clamped.tgraph"))["nodes"] if n["id"] == "noise"][0]["params"]
check(params.get("scale_m") == 1 and params.get("octaves") == 16,
      "the saved file has the bounds (%s)" % params)
sys.exit(1 if fail else 0)
EOF
exit $fail
