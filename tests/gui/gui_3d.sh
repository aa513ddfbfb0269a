#!/bin/bash
# The 3D viewer in the real app under Xvfb (Mesa llvmpipe): the arch
# example's iso-surface, the island at 1025² and the forest's instances
# are drawn, saved (the GL frame and the whole window) and checked: not
# blank, enough of the view covered by the object, marker colours present
# where there are instances and absent where there are none.  Zoom to the
# cursor keeps the point under the pointer; orbit and wheel through real
# pointer events (xdotool) change the picture; the island's look (sun
# shadows, water, grid, a readable wireframe) and the camera keys are
# checked against frames with each feature off, and a splat shows all
# its layers or one.  Without GL the 3D page
# says so and the app carries on.  Frame times are printed (TERRANE_DEBUG
# =timing), not asserted.  Skips (77) only when no X server can start.
# Usage: gui_3d.sh TERRANE
set -u
terrane=$1
src=${TG_SOURCE_ROOT:-.}
out=${TG_BUILD_ROOT:-.}/tests/gui/artifacts-3d
stats="python3 $src/tests/gui/gl_stats.py"
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
check () { # FILE ARGS...: gl_stats bounds
  if $stats "$@"; then echo "ok: $1"; else echo "FAIL: $1 out of bounds"; fail=1; fi
}

# The arch: a mesh switches the viewer to 3D by itself.
script="select surface;wait;msaa on;wait3d;screenshot3d $out/arch.png;screenshot $out/arch_window.png"
script="$script;zoom3d 0.5 0.45 0.55;wait3d;screenshot3d $out/arch_zoom.png"
script="$script;wireframe on;wait3d;screenshot3d $out/arch_wire.png;quit"
if ! run "$script" "$src/data/examples/arch.tgraph" "$out/arch.log"; then
  echo "FAIL: arch:"; cat "$out/arch.log"; exit 1
fi
grep -E "timing: 3d|zoom3d" "$out/arch.log"
check "$out/arch.png" --min-sd 10 --min-object 0.2 --max-markers 0.001
check "$out/arch_zoom.png" --min-sd 10 --min-object 0.5
check "$out/arch_wire.png" --min-sd 10 --min-object 0.2
python3 "$src/tests/gui/png_stats.py" "$out/arch_window.png" || { echo "FAIL: window screenshot blank"; fail=1; }
cmp -s "$out/arch.png" "$out/arch_wire.png" && { echo "FAIL: wireframe changed nothing"; fail=1; }

# The island at 1025²: the figure is the frame time.
script="resolution 1025;select profile;wait;view 3d;wait3d;screenshot3d $out/island.png"
script="$script;bench3d 10;msaa on;wait3d;bench3d 3;exaggeration 2.5;wait3d;screenshot3d $out/island_x2.5.png;quit"
if ! run "$script" "$src/data/examples/island.tgraph" "$out/island.log"; then
  echo "FAIL: island:"; cat "$out/island.log"; exit 1
fi
grep -E "timing: 3d" "$out/island.log"
grep -q "timing: 3d frame profile .* 2097152 triangles" "$out/island.log" \
  || { echo "FAIL: the 1025² terrain was not drawn"; fail=1; }
check "$out/island.png" --min-sd 10 --min-object 0.1 --max-markers 0.001
check "$out/island_x2.5.png" --min-sd 10 --min-object 0.1
cmp -s "$out/island.png" "$out/island_x2.5.png" && { echo "FAIL: exaggeration changed nothing"; fail=1; }

# The island's look: sun shadows only darken (the lee of the peaks), the
# wireframe of 1025² samples stays lines over a lit terrain rather than a
# dark sheet, water at 15 m changes the low ground and leaves the peaks
# in the middle of the top view alone, the grid draws lines.  Then keys
# with the pointer over the view and no click: T gives the top view as
# the camera step does, Home the default perspective, F after an orbit
# frames from the orbit's side at the default height.
compare="python3 $src/tests/gui/gl_compare.py"
cmpck () { # A B ARGS...: gl_compare bounds
  if $compare "$@"; then :; else echo "FAIL: $(basename "$1") -> $(basename "$2") out of bounds"; fail=1; fi
}
script="resolution 1025;select profile;wait;view 3d;wait3d;screenshot3d $out/look_home.png"
script="$script;zoom3d 0.35 0.5 0.5;wait3d;screenshot3d $out/look_sun.png"
script="$script;shadows off;wait3d;screenshot3d $out/look_nosun.png;shadows on"
script="$script;wireframe on;wait3d;screenshot3d $out/look_wire.png;wireframe off"
script="$script;camera 0 89.5;wait3d;screenshot3d $out/look_top.png"
script="$script;water 15;wait3d;screenshot3d $out/look_water.png;water off"
script="$script;grid on;wait3d;screenshot3d $out/look_grid.png;screenshot $out/look_window.png;grid off"
script="$script;camera 20 35;wait3d"
if command -v xdotool > /dev/null; then
  script="$script;hover css:tgviewer3d@0.5,0.5;key t;sleep 300;wait3d;screenshot3d $out/key_top.png"
  script="$script;key Home;sleep 300;wait3d;screenshot3d $out/key_home.png"
  script="$script;drag css:tgviewer3d@0.4,0.5 css:tgviewer3d@0.7,0.3;sleep 300;wait3d"
  script="$script;screenshot3d $out/key_orbit.png;key f;sleep 300;wait3d;screenshot3d $out/key_f.png"
fi
script="$script;quit"
if ! run "$script" "$src/data/examples/island.tgraph" "$out/look.log"; then
  echo "FAIL: island look:"; cat "$out/look.log"; exit 1
fi
grep -E "shadow map [1-9]" "$out/look.log" | head -1
cmpck "$out/look_nosun.png" "$out/look_sun.png" --min-darker 0.03 --max-brighter 0.002
cmpck "$out/look_sun.png" "$out/look_wire.png" --region 0.1,0.3,0.9,0.9 --min-darker 0.1
check "$out/look_wire.png" --min-sd 10 --min-object 0.3 --max-dark 0.05
cmpck "$out/look_top.png" "$out/look_water.png" --min-changed 0.2
cmpck "$out/look_top.png" "$out/look_water.png" --region 0.45,0.45,0.55,0.55 --max-changed 0.05
cmpck "$out/look_top.png" "$out/look_grid.png" --min-darker 0.01 --max-brighter 0.002
python3 "$src/tests/gui/png_stats.py" "$out/look_window.png" || { echo "FAIL: window screenshot blank"; fail=1; }
if command -v xdotool > /dev/null; then
  cmp -s "$out/key_top.png" "$out/look_top.png" && echo "ok: T over the view gives the top view" \
    || { echo "FAIL: T over the view (no click) did not give the top view"; fail=1; }
  cmp -s "$out/key_home.png" "$out/look_home.png" && echo "ok: Home gives the default view" \
    || { echo "FAIL: Home did not give the default view"; fail=1; }
  cmp -s "$out/key_orbit.png" "$out/key_f.png" && { echo "FAIL: F changed nothing"; fail=1; }
  cmp -s "$out/key_home.png" "$out/key_f.png" && { echo "FAIL: F forgot the orbit's side"; fail=1; }
fi

# The alpine splat: every layer in its colour, then one layer's weight
# alone in red (grass in the valleys, then snow on the crests).
script="select splat;wait;view 3d;wait3d;screenshot3d $out/splat_all.png"
script="$script;splat-layer 0;wait3d;screenshot3d $out/splat_0.png"
script="$script;splat-layer 2;wait3d;screenshot3d $out/splat_2.png;quit"
if ! run "$script" "$src/data/examples/alpine.tgraph" "$out/splat.log"; then
  echo "FAIL: alpine splat:"; cat "$out/splat.log"; exit 1
fi
check "$out/splat_all.png" --min-sd 10 --min-object 0.2 --max-markers 0.001
check "$out/splat_0.png" --min-sd 10 --min-object 0.2 --min-markers 0.01
cmpck "$out/splat_0.png" "$out/splat_2.png" --min-changed 0.03

# The forest's instances stand on the eroded terrain, coloured per
# prototype; the scatter's own terrain comes along.  Then real input.
script="select all;wait;view 3d;msaa on;wait3d;screenshot3d $out/forest.png"
script="$script;camera 0 89;wait3d;screenshot3d $out/forest_top.png;view 2d;screenshot $out/forest_2d.png"
script="$script;view 3d;camera 30 25;wait3d;zoom3d 0.25 0.5 0.6;wait3d;screenshot3d $out/forest_close.png"
if command -v xdotool > /dev/null; then
  script="$script;view 3d;camera 20 35;wait3d;screenshot3d $out/forest_before.png"
  script="$script;drag css:tgviewer3d@0.5,0.6 css:tgviewer3d@0.7,0.55;sleep 300;wait3d"
  script="$script;screenshot3d $out/forest_orbit.png;scroll css:tgviewer3d@0.4,0.6 3;sleep 300;wait3d"
  script="$script;screenshot3d $out/forest_wheel.png"
fi
script="$script;quit"
if ! run "$script" "$src/data/examples/forest.tgraph" "$out/forest.log"; then
  echo "FAIL: forest:"; cat "$out/forest.log"; exit 1
fi
grep -E "timing: 3d" "$out/forest.log"
grep -q "timing: 3d frame all .*, terrain level" "$out/forest.log" || { echo "FAIL: no terrain under the instances"; fail=1; }
check "$out/forest.png" --min-sd 10 --min-object 0.2 --min-markers 0.02
check "$out/forest_top.png" --min-sd 10 --min-object 0.4 --min-markers 0.04
check "$out/forest_close.png" --min-sd 10 --min-object 0.4 --min-markers 0.02
if command -v xdotool > /dev/null; then
  cmp -s "$out/forest_before.png" "$out/forest_orbit.png" && { echo "FAIL: a left drag did not orbit"; fail=1; }
  cmp -s "$out/forest_orbit.png" "$out/forest_wheel.png" && { echo "FAIL: the wheel did not zoom"; fail=1; }
  check "$out/forest_wheel.png" --min-sd 10 --min-object 0.3
fi

# Closing the window (Ctrl+Q) frees the GL objects without a GL error.
if command -v xdotool > /dev/null; then
  run "select surface;wait;wait3d;key ctrl+q;sleep 5000;quit" "$src/data/examples/arch.tgraph" \
    "$out/close.log"
  grep -q "timing: 3d unrealize: GL objects freed (GL error 0x0)" "$out/close.log" \
    && echo "ok: unrealize frees the GL objects" \
    || { echo "FAIL: unrealize"; cat "$out/close.log"; fail=1; }
fi

# No GL at all: a message on the 3D page, no crash.
if ! GDK_DEBUG=gl-disable run "select surface;wait;wait3d;screenshot $out/nogl.png;quit" \
     "$src/data/examples/arch.tgraph" "$out/nogl.log"; then
  echo "FAIL: the app did not survive without GL:"; cat "$out/nogl.log"; fail=1
fi
grep -q "3d: no GL context" "$out/nogl.log" && echo "ok: without GL the 3D view says so" \
  || { echo "FAIL: no message without GL"; cat "$out/nogl.log"; fail=1; }
exit $fail
