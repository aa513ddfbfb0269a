# Sourced by the CLI tests: the tgraph under test, a scratch folder that is
# removed on exit, and checks that report what they expected and what they
# got.  Each test script takes the tgraph executable as its first argument
# (meson passes the one it built) and finds data through TG_SOURCE_ROOT.
set -u

TGRAPH="${1:?usage: $0 PATH/TO/tgraph}"
case "$TGRAPH" in /*) ;; *) TGRAPH="$PWD/$TGRAPH" ;; esac
[ -x "$TGRAPH" ] || { echo "not executable: $TGRAPH" >&2; exit 1; }
SRC="${TG_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}"
DATA="$SRC/tests/cli/data"
EXAMPLES="$SRC/data/examples"

TMP="$(mktemp -d "${TMPDIR:-/tmp}/tgraph-test.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

failures=0
checks=0

fail () {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# run CMD...: runs it, keeping stdout in $TMP/out, stderr in $TMP/err and
# the exit status in $rc.
run () {
  "$@" > "$TMP/out" 2> "$TMP/err"
  rc=$?
}

# expect_rc WANT WHAT: the last run exited with WANT.
expect_rc () {
  checks=$((checks + 1))
  if [ "$rc" -ne "$1" ]; then
    fail "$2: exit status $rc, expected $1"
    sed 's/^/  stdout: /' "$TMP/out" >&2
    sed 's/^/  stderr: /' "$TMP/err" >&2
  fi
}

# expect_in FILE TEXT WHAT: FILE ($TMP/out or $TMP/err) contains TEXT (fixed string).
expect_in () {
  checks=$((checks + 1))
  if ! grep -qF -- "$2" "$1"; then
    fail "$3: $(basename "$1") lacks \"$2\""
    sed 's/^/  | /' "$1" >&2
  fi
}

expect_not_in () {
  checks=$((checks + 1))
  if grep -qF -- "$2" "$1"; then
    fail "$3: $(basename "$1") should not contain \"$2\""
    sed 's/^/  | /' "$1" >&2
  fi
}

# expect_same A B WHAT: files A and B have the same bytes.
expect_same () {
  checks=$((checks + 1))
  if ! cmp -s "$1" "$2"; then
    fail "$3: $1 and $2 differ"
  fi
}

# expect_no_files DIR WHAT: DIR is missing or holds nothing (no staged leftovers either).
expect_no_files () {
  checks=$((checks + 1))
  if [ -d "$1" ] && [ -n "$(ls -A "$1")" ]; then
    fail "$2: $1 should be empty but holds: $(ls -A "$1" | tr '\n' ' ')"
  fi
}

# sha256 FILE: its hex digest.
sha256 () {
  sha256sum "$1" | cut -d' ' -f1
}

finish () {
  if [ "$failures" -ne 0 ]; then
    echo "$failures of $checks checks failed" >&2
    exit 1
  fi
  echo "all $checks checks passed"
  exit 0
}
