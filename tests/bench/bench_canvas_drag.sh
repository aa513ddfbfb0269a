#!/bin/bash
# Frame time of a node drag on the 4096-node graph of bench_document, in
# the real app under Xvfb (GDK_BACKEND=x11, LIBGL_ALWAYS_SOFTWARE=1:
# llvmpipe), by real input (xdotool): the canvas logs each frame's drawing
# time (TERRANE_FRAME_LOG) and this prints the frames drawn while the node
# moved, their wall and CPU time, and the frame rate the drag reached.
# Skips (77) without Xvfb or xdotool.
# Usage: bench_canvas_drag.sh TERRANE BENCH_DOCUMENT
set -u
terrane=$1
bench_document=$2
src=${TG_SOURCE_ROOT:-.}
out=${TG_BUILD_ROOT:-.}/tests/bench/canvas-drag
. "$src/tests/gui/xserver.sh"
input_test_start "$out"
export LIBGL_ALWAYS_SOFTWARE=1
"$bench_document" --write "$out/big.tgraph" || exit 1

TERRANE_FRAME_LOG="$out/frames.log" \
  GSETTINGS_SCHEMA_DIR=${TG_BUILD_ROOT:-.}/data \
  TERRANE_TEST_SCRIPT="${BENCH_SCRIPT_START-wait;}print-target node:n2080;sleep 600000;quit" \
  "$terrane" "$out/big.tgraph" > "$out/app.log" 2>&1 &
app=$!
# The app says where the node is once the graph has evaluated ("wait";
# BENCH_SCRIPT_START= drags while it evaluates): drag it at once.
target=
for i in $(seq 3000); do
  target=$(sed -n 's/^target: node:n2080 at \([0-9.]*\),\([0-9.]*\)$/\1 \2/p' "$out/app.log")
  [ -n "$target" ] && break
  kill -0 $app 2> /dev/null || break
  sleep 0.1
done
if [ -z "$target" ]; then
  cat "$out/app.log"
  echo "FAIL: the app did not show node n2080"
  kill $app 2> /dev/null
  exit 1
fi
win=$(xdotool search --onlyvisible --name "big" | head -1)
echo "window $win ($(xdotool getwindowname $win)), node at $target"
set -- $target
# Into the node's body: the title is at its top-left corner, and xdotool's
# window coordinates sit a few pixels off the app's own.
x=$((${1%.*} + 15))
y=$((${2%.*} + 12))
args=(mousemove --window "$win" "$x" "$y" sleep 0.3 mousedown 1 sleep 0.2)
# Two seconds of motion, a step every 16 ms, as a hand moves.
for k in $(seq 120); do
  args+=(mousemove --window "$win" $((x + k * 2)) $((y + k)) sleep 0.016)
done
args+=(mouseup 1 sleep 0.5)
xdotool "${args[@]}" || echo "xdotool failed: $?"
# A slow canvas is still working through the motion: wait for the
# release, and a frame after it.
for i in $(seq 120); do
  awk '/^release/ { r = 1 } r && /^frame/ { e = 1 } END { exit !e }' "$out/frames.log" && break
  sleep 1
done
kill $app 2> /dev/null
wait $app 2> /dev/null

python3 - "$out/frames.log" <<'PY'
import statistics, sys
lines = [l.split() for l in open(sys.argv[1])]
rows = [l for l in lines if l[0] == "frame"]
press = [int(l[1]) for l in lines if l[0] == "press"]
release = [int(l[1]) for l in lines if l[0] == "release"]
if press and release:
    print("press to release as the canvas saw it: %.2f s" % ((release[-1] - press[-1]) / 1e6))
drag = [(int(r[1]), float(r[3]), float(r[4])) for r in rows if r[2] == "1"]
if len(drag) < 2:
    # Frames slower than the whole motion: the release came before the
    # next frame, so the drag was never drawn on its way.
    walls = sorted(float(r[3]) for r in rows)
    cpus = sorted(float(r[4]) for r in rows)
    print("FAIL: %d frames drawn during the drag; every frame: wall median %.1f ms, "
          "cpu median %.1f ms (%d frames)" % (len(drag), statistics.median(walls),
                                             statistics.median(cpus), len(rows)))
    sys.exit(1)
walls = sorted(d[1] for d in drag)
cpus = sorted(d[2] for d in drag)
span = (drag[-1][0] - drag[0][0]) / 1e6
print("frames during the drag: %d in %.2f s: %.1f fps" % (len(drag), span, (len(drag) - 1) / span))
print("canvas drawing per frame: wall median %.2f ms, p90 %.2f ms; cpu median %.2f ms, p90 %.2f ms"
      % (statistics.median(walls), walls[int(len(walls) * 0.9)],
         statistics.median(cpus), cpus[int(len(cpus) * 0.9)]))
PY
