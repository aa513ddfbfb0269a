# Sourced by the GUI tests: one private Xvfb for the whole test script.
# The server picks its own display (-displayfd), so tests running side by
# side never race for a number, and it is stopped when the script exits,
# however it exits.  The app then runs as a plain child of the test, so
# its exit status is its own: xvfb-run's clean-up can replace it (exit 5
# when its temporary folder will not go) and leaves the server running
# when it is killed by a timeout.
#
# xserver_start DIR: starts the server (its log in DIR/xvfb.log) and
# exports DISPLAY; returns 1 when no server can start.
xserver_start () {
  command -v Xvfb > /dev/null || return 1
  rm -f "$1/display"
  unset XAUTHORITY
  Xvfb -displayfd 3 -nolisten tcp -screen 0 1600x1000x24 \
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
