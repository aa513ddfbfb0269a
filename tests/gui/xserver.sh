# Sourced by the GUI tests: one private Xvfb for the whole test script.
# The server picks its own display (-displayfd), so tests running side by
# side never race for a number, and it is stopped when the script exits,
# however it exits.  The app then runs as a plain child of the test, so
# its exit status is its own: xvfb-run's clean-up can replace it (exit 5
# when its temporary folder will not go) and leaves the server running
# when it is killed by a timeout.  -noreset: by default an X server
# resets when its last client leaves, and an app started in that moment
# cannot open the display (9 of 300 back-to-back clients failed so; one
# failed gui_3d's run without GL).
#
# xserver_start DIR: starts the server (its log in DIR/xvfb.log) and
# exports DISPLAY; returns 1 when no server can start.
xserver_start () {
  command -v Xvfb > /dev/null || return 1
  rm -f "$1/display"
  unset XAUTHORITY
  Xvfb -displayfd 3 -nolisten tcp -noreset -screen 0 1600x1000x24 \
    3> "$1/display" > "$1/xvfb.log" 2>&1 &
  XSERVER_PID=$!
  trap 'kill $XSERVER_PID 2> /dev/null; wait $XSERVER_PID 2> /dev/null' EXIT
  local i n
  for i in $(seq 200); do
    n=$(cat "$1/display" 2> /dev/null)
    if [ -n "$n" ]; then
      export DISPLAY=":$n"
      return 0
    fi
    kill -0 $XSERVER_PID 2> /dev/null || return 1
    sleep 0.05
  done
  return 1
}

# input_test_start DIR: for tests that drive the app with xdotool: a clean
# DIR, the server, and the environment the app runs in.  Exits 77 (skip)
# when xdotool or the server is missing.
input_test_start () {
  rm -rf "$1"
  mkdir -p "$1"
  command -v xdotool > /dev/null || { echo "SKIP: xdotool is not installed"; exit 77; }
  if ! xserver_start "$1"; then
    echo "SKIP: no X server can start (Xvfb)"
    exit 77
  fi
  export GSETTINGS_BACKEND=memory NO_AT_BRIDGE=1 GDK_BACKEND=x11 LC_ALL=C.UTF-8 LANGUAGE=C
}

# run_script NAME SCRIPT [ARG...]: runs the app ($terrane) on ARGs with the
# test script SCRIPT, its output kept in $out/NAME.log and printed; sets
# fail=1 when the app does not finish its script.
run_script () {
  local name=$1 script=$2
  shift 2
  TERRANE_TEST_SCRIPT="$script" timeout 300 "$terrane" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  cat "$out/$name.log"
  [ $rc -eq 0 ] || { echo "FAIL: $name: the app did not finish its script (status $rc)"; fail=1; }
}

# thread_ticks PID: CPU ticks of app PID ("total", threads that ended
# included) and of its threads: "main" (the thread whose id is the
# process's), "llvmpipe" (the rasteriser's), "other".
thread_ticks () {
  local t s comm rest
  s=$(cat "/proc/$1/stat")
  rest=(${s##*) })
  echo "total $((rest[11] + rest[12]))"
  for t in /proc/$1/task/*; do
    s=$(cat "$t/stat" 2> /dev/null) || continue
    comm=${s#*(}
    comm=${comm%%)*}
    rest=(${s##*) })
    case $comm in
      llvmpipe*) comm=llvmpipe ;;
      *) comm=other ;;
    esac
    [ "${t##*/}" = "$1" ] && comm=main
    echo "$comm $((rest[11] + rest[12]))"
  done | awk '{ a[$1] += $2 } END { for (k in a) print k, a[k] }'
}
