#!/bin/bash
# Frame rate and CPU time of a node drag on the 4096-node graph of
# bench_document, in the real app under Xvfb (GDK_BACKEND=x11,
# LIBGL_ALWAYS_SOFTWARE=1: llvmpipe), by real input (xdotool).  The press
# lands on an unselected node, as a hand picks one up.  The canvas logs
# each frame (TERRANE_FRAME_LOG: its own drawing, and the whole frame from
# the events to the end of GTK's paint); the app's threads' CPU time over
# the drag comes from /proc.  Printed per run: the frames drawn while the
# node moved and the rate they reached, and CPU per frame: the main
# thread's, llvmpipe's rasteriser threads', and the evaluator's pool's.
# With a second app binary (BEFORE, e.g. main's build), the same drag runs
# on it first, in the same X server, for a before/after in one run.
# BENCH_GRAPH=FILE BENCH_NODE=ID drag another graph's node (a quick look
# at what the rest of the window costs).  Skips (77) without Xvfb or xdotool.
# Usage: bench_canvas_drag.sh TERRANE BENCH_DOCUMENT [BEFORE_TERRANE]
set -u
terrane=$1
bench_document=$2
before=${3:-${BENCH_BEFORE_TERRANE-}}
src=${TG_SOURCE_ROOT:-.}
out=${TG_BUILD_ROOT:-.}/tests/bench/canvas-drag
. "$src/tests/gui/xserver.sh"
input_test_start "$out"
export LIBGL_ALWAYS_SOFTWARE=1
node=${BENCH_NODE:-n2080}
if [ -n "${BENCH_GRAPH-}" ]; then
  cp "$BENCH_GRAPH" "$out/big.tgraph" || exit 1
else
  "$bench_document" --write "$out/big.tgraph" || exit 1
fi

# run NAME APP: one drag in APP; its figures in $out/NAME.*
run () {
  local name=$1 app_bin=$2 app target win x y k args
  rm -f "$out/$name.frames"
  TERRANE_FRAME_LOG="$out/$name.frames" \
    GSETTINGS_SCHEMA_DIR=${TG_BUILD_ROOT:-.}/data \
    TERRANE_TEST_SCRIPT="${BENCH_SCRIPT_START-wait;}print-target node:$node;sleep 600000;quit" \
    "$app_bin" "$out/big.tgraph" > "$out/$name.log" 2>&1 &
  app=$!
  # The app says where the node is once the graph has evaluated ("wait";
  # BENCH_SCRIPT_START= drags while it evaluates): drag it at once.
  target=
  for k in $(seq 6000); do
    target=$(sed -n "s/^target: node:$node at \([0-9.]*\),\([0-9.]*\)$/\1 \2/p" "$out/$name.log")
    [ -n "$target" ] && break
    kill -0 $app 2> /dev/null || break
    sleep 0.1
  done
  if [ -z "$target" ]; then
    cat "$out/$name.log"
    echo "FAIL: $name: the app did not show node $node"
    kill $app 2> /dev/null
    return 1
  fi
  win=$(xdotool search --onlyvisible --name "big" | head -1)
  echo "$name: $app_bin, window $win, node at $target"
  set -- $target
  # Into the node's body: the title is at its top-left corner, and
  # xdotool's window coordinates sit a few pixels off the app's own.
  x=$((${1%.*} + 15))
  y=$((${2%.*} + 12))
  args=(mousemove --window "$win" "$x" "$y" sleep 0.3 mousedown 1 sleep 0.2)
  # Two seconds of motion, a step every 16 ms, as a hand moves.
  for k in $(seq 120); do
    args+=(mousemove --window "$win" $((x + k * 2)) $((y + k)) sleep 0.016)
  done
  args+=(mouseup 1)
  thread_ticks $app > "$out/$name.cpu0"
  xdotool "${args[@]}" || echo "xdotool failed: $?"
  # A slow canvas is still working through the motion: wait for the
  # release, and a frame after it.
  for k in $(seq 120); do
    awk '/^release/ { r = 1 } r && /^frame/ { e = 1 } END { exit !e }' "$out/$name.frames" && break
    sleep 0.05
  done
  thread_ticks $app > "$out/$name.cpu1"
  kill $app 2> /dev/null
  wait $app 2> /dev/null
  python3 - "$out/$name" "$(getconf CLK_TCK)" <<'PY'
import statistics, sys
base, tck = sys.argv[1], float(sys.argv[2])
lines = [l.split() for l in open(base + ".frames")]
for l in lines:
    if l[0] == "renderer":
        print("  renderer: %s" % l[1])
press = [int(l[1]) for l in lines if l[0] == "press"]
release = [int(l[1]) for l in lines if l[0] == "release"]
if press and release:
    print("  press to release as the canvas saw it: %.2f s" % ((release[-1] - press[-1]) / 1e6))
drag = [(int(r[1]), float(r[3]), float(r[4])) for r in lines if r[0] == "frame" and r[2] == "1"]
if len(drag) < 2:
    # Frames slower than the whole motion: the release came before the
    # next frame, so the drag was never drawn on its way.
    print("FAIL: %d frames drawn during the drag" % len(drag))
    sys.exit(1)
span = (drag[-1][0] - drag[0][0]) / 1e6
fps = (len(drag) - 1) / span
print("  frames during the drag: %d in %.2f s: %.1f fps" % (len(drag), span, fps))
walls = sorted(d[1] for d in drag)
cpus = sorted(d[2] for d in drag)
print("  canvas snapshot per frame: wall median %.2f ms, p90 %.2f ms; cpu median %.2f ms, p90 %.2f ms"
      % (statistics.median(walls), walls[int(len(walls) * 0.9)],
         statistics.median(cpus), cpus[int(len(cpus) * 0.9)]))
paint = [(float(r[3]), float(r[4])) for r in lines if r[0] == "paint" and r[2] == "1"]
if paint:
    pw = sorted(p[0] for p in paint)
    pc = sorted(p[1] for p in paint)
    print("  whole frame (events to end of paint): wall median %.2f ms, p90 %.2f ms; "
          "main thread cpu median %.2f ms, p90 %.2f ms"
          % (statistics.median(pw), pw[int(len(pw) * 0.9)],
             statistics.median(pc), pc[int(len(pc) * 0.9)]))
def ticks(path):
    return {k: int(v) for k, v in (l.split() for l in open(path))}
c0, c1 = ticks(base + ".cpu0"), ticks(base + ".cpu1")
ms = {k: (c1.get(k, 0) - c0.get(k, 0)) * 1000 / tck for k in ("main", "llvmpipe", "total")}
# The evaluator's threads (GTask's and the engine's pool) come and go.
ms["pool"] = max(0, ms["total"] - ms["main"] - ms["llvmpipe"])
print("  cpu per frame over the drag: main %.1f ms + llvmpipe %.1f ms = %.1f ms drawing; "
      "evaluator pool %.1f ms" % (ms["main"] / len(drag), ms["llvmpipe"] / len(drag),
                                  (ms["main"] + ms["llvmpipe"]) / len(drag), ms["pool"] / len(drag)))
open(base + ".summary", "w").write("%.1f %.1f\n" % (fps, (ms["main"] + ms["llvmpipe"]) / len(drag)))
PY
}

fail=0
if [ -n "$before" ]; then
  run before "$before" || fail=1
fi
run after "$terrane" || fail=1
if [ -n "$before" ] && [ -s "$out/before.summary" ] && [ -s "$out/after.summary" ]; then
  read bf bc < "$out/before.summary"
  read af ac < "$out/after.summary"
  echo "before: $bf fps, $bc ms cpu per frame; after: $af fps, $ac ms cpu per frame"
fi
exit $fail
