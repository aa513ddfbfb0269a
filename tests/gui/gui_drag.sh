#!/bin/bash
# Dragging a node, through real input under Xvfb (xdotool), as the issue's
# "dragging a node redraws at 60 fps under llvmpipe" asks of the canvas:
#  - a frame costs under 16 ms of CPU (the main thread and llvmpipe's
#    rasteriser threads, from /proc, over the drag, per frame drawn);
#  - pressing a node that was not selected starts no evaluation while it
#    moves (no preview is asked for until the release, which shows it);
#  - a frame drawn mid-move (the still graph from the move cache, the
#    moving node and its wires on top) shows the node selected, with the
#    same pixels as the frame drawn after the release, and its wires
#    following it (the same pixels around it, but where the moving wires
#    lie over the ports they reach); and the node did move.
# Screenshots are left in the build tree.  Skips (77) when no X server can
# start or xdotool is not installed.
# Usage: gui_drag.sh TERRANE
set -u
terrane=$1
src=${TG_SOURCE_ROOT:-.}
command -v import > /dev/null && command -v convert > /dev/null ||
  { echo "SKIP: ImageMagick's import and convert are not installed"; exit 77; }
out=${TG_BUILD_ROOT:-.}/tests/gui/drag
. "$src/tests/gui/xserver.sh"
input_test_start "$out"
export LIBGL_ALWAYS_SOFTWARE=1
cp "$src/tests/gui/data/ten_nodes.tgraph" "$out/"

# No timeout(1) in between: /proc/$app is the app's.  At zoom 1 (Ctrl+0)
# a drag of whole pixels leaves the node on whole pixels, mid-move as
# after the release.
TERRANE_FRAME_LOG="$out/frames.log" TERRANE_DEBUG=timing \
  TERRANE_TEST_SCRIPT="wait;key ctrl+0;wait;print-target node:land;sleep 600000;quit" \
  "$terrane" "$out/ten_nodes.tgraph" > "$out/app.log" 2>&1 &
app=$!
target=
for i in $(seq 2400); do
  target=$(sed -n 's/^target: node:land at \([0-9.]*\),\([0-9.]*\)$/\1 \2/p' "$out/app.log")
  [ -n "$target" ] && break
  kill -0 $app 2> /dev/null || break
  sleep 0.1
done
if [ -z "$target" ]; then
  cat "$out/app.log"
  echo "FAIL: the app did not show node land"
  kill $app 2> /dev/null
  exit 1
fi
# Whatever the first evaluation left to do is done.
sleep 2
win=$(xdotool search --onlyvisible --name "ten_nodes" | head -1)
import -window root "$out/before.png"
eval "$(xdotool getwindowgeometry --shell "$win")"
set -- $target
x=${1%.*}
y=${2%.*}
args=(mousemove --window "$win" "$x" "$y" sleep 0.3 mousedown 1 sleep 0.2)
# A second of motion, a step every 16 ms, 60 px right and 180 down, to
# where no node is (one moving node is drawn over the others).
for k in $(seq 60); do
  args+=(mousemove --window "$win" $((x + k)) $((y + k * 3)) sleep 0.016)
done
thread_ticks $app > "$out/cpu0"
xdotool "${args[@]}"
# The button is still down: the last motion drawn, look at the move.
sleep 2
thread_ticks $app > "$out/cpu1"
# TERRANE_DEBUG=timing: the window says when a preview it asked for is
# painted.  None may be asked for while the node moves.
grep '^timing: preview' "$out/app.log" > "$out/previews-moving"
import -window root "$out/moving.png"
xdotool mouseup 1
sleep 3
import -window root "$out/after.png"
kill $app 2> /dev/null
wait $app 2> /dev/null

python3 - "$out" "$(getconf CLK_TCK)" $((X + x)) $((Y + y)) <<'PY'
import subprocess, sys
# x, y: the node's title on the screen before the drag.
out, tck, x, y = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
fail = False
def check(ok, what):
    global fail
    print(("ok: " if ok else "FAIL: ") + what)
    fail |= not ok
lines = [l.split() for l in open(out + "/frames.log")]
print("renderer:", " ".join(l[1] for l in lines if l[0] == "renderer"))
frames = [l for l in lines if l[0] == "frame" and l[2] == "1"]
def ticks(path):
    return {k: int(v) for k, v in (l.split() for l in open(path))}
c0, c1 = ticks(out + "/cpu0"), ticks(out + "/cpu1")
ms = {k: (c1.get(k, 0) - c0.get(k, 0)) * 1000 / tck for k in ("main", "llvmpipe", "total")}
# The evaluator's threads (GTask's and the engine's pool) come and go.
ms["pool"] = max(0, ms["total"] - ms["main"] - ms["llvmpipe"])
check(len(frames) >= 2, "the canvas drew %d frames while the node moved" % len(frames))
if frames:
    per = (ms["main"] + ms["llvmpipe"]) / len(frames)
    check(per < 16, "a frame of the drag costs %.1f ms of CPU (main %.0f ms + llvmpipe %.0f ms over %d frames), under 16"
          % (per, ms["main"], ms["llvmpipe"], len(frames)))
moving = open(out + "/previews-moving").read()
check(not moving, "the press started no evaluation during the move (%s; other threads: %.0f ms)"
      % (moving.strip() or "no preview", ms["pool"]))
after = [l for l in open(out + "/app.log") if l.startswith("timing: preview land")]
check(len(after) == 1, "the release showed land in the viewer (%s)" % "".join(after).strip())
# The screenshots around the node: from its old place to past its new
# one, and the node itself (its title to its thumbnail, short of the ports
# at its sides) where it went.
def rgb(name, w, h, bx, by):
    return subprocess.run(["convert", "%s/%s.png" % (out, name), "-crop", "%dx%d+%d+%d" % (w, h, bx, by),
                           "+repage", "-depth", "8", "rgb:-"], capture_output=True, check=True).stdout
def differ(a, b):
    return sum(1 for k in range(0, len(a), 3) if max(abs(a[k + c] - b[k + c]) for c in range(3)) > 3)
node = (140, 160, x + 60 - 70, y + 180 - 12)
d = differ(rgb("moving", *node), rgb("after", *node))
check(d == 0, "mid-move and after the release the node (%dx%d+%d+%d) has the same pixels (%d differ)"
      % (node + (d,)))
box = (400, 420, max(x - 150, 0), max(y - 60, 0))
a, b, c = rgb("moving", *box), rgb("after", *box), rgb("before", *box)
# Mid-move, the moving wires lie over the still nodes' ports they reach.
d = differ(a, b)
check(d < 600, "mid-move and after the release the %dx%d+%d+%d box around the node differs in "
      "%d pixels (< 600: where the moving wires meet still ports)" % (box + (d,)))
moved = sum(1 for k in range(0, len(b), 3) if b[k:k + 3] != c[k:k + 3])
check(moved > 2000, "the node and its wires moved: %d pixels of the box changed" % moved)
sys.exit(1 if fail else 0)
PY
