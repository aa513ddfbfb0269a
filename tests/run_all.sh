#!/bin/sh
# The whole test suite, as CI runs it (README command 2, .ci/run):
#   1. build-ci: a warnings-as-errors build, every default suite;
#   2. build-asan: AddressSanitizer + UBSan, the engine, nodes, formats and
#      cli suites (halting on the first report), then the gui suite with
#      leak checking off;
# then a summary from both builds' meson-logs/testlog.json.  The last line
# is always "N passed, N failed"; the exit status is non-zero when anything
# failed, including a build that did not configure or compile.
set -u

cd "$(dirname "$0")/.." || exit 1
root="$(pwd)"
jobs="${TG_JOBS:-$(nproc 2>/dev/null || echo 2)}"
# Build folders are build-ci and build-asan; TG_BUILD_PREFIX=build-x gives
# build-x-ci and build-x-asan, so two checkouts' runs need not share them.
prefix="${TG_BUILD_PREFIX:-build}"
ci="$prefix-ci"
asan="$prefix-asan"
build_failures=""

note () {
  printf '\n==> %s\n' "$*"
}

# setup DIR OPTIONS...: configure DIR afresh or update its options.
setup () {
  dir="$1"
  shift
  if [ -f "$dir/build.ninja" ]; then
    meson setup --reconfigure "$dir" "$@"
  else
    rm -rf "$dir"
    meson setup "$dir" "$@"
  fi
}

# build_and_test DIR [SUITE...]: compile, then run the suites (all default
# suites when none is given).  A configure or compile failure is recorded.
build_and_test () {
  dir="$1"
  shift
  rm -f "$dir/meson-logs/testlog.json"
  if ! ninja -C "$dir" -j "$jobs"; then
    build_failures="$build_failures $dir:compile"
    return
  fi
  suites=""
  for s in "$@"; do
    suites="$suites --suite $s"
  done
  # shellcheck disable=SC2086 # word splitting of $suites is wanted
  meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes "$jobs" $suites
}

note "$ci: -Dwerror=true, all default suites"
if setup "$ci" -Dwerror=true -Dtests=true -Dbuildtype=debugoptimized; then
  build_and_test "$ci"
else
  build_failures="$build_failures $ci:configure"
fi

# The engine must not leak: its tests again under valgrind (the log goes
# to meson-logs/leakcheck-valgrind.json, read by the summary below).
note "$ci: engine suite under valgrind"
if [ -f "$ci/build.ninja" ] && command -v valgrind > /dev/null 2>&1; then
  rm -f "$ci"/meson-logs/leakcheck*
  meson test -C "$ci" --no-rebuild --print-errorlogs --suite engine --logbase leakcheck \
    --timeout-multiplier 10 \
    --wrap='valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99'
else
  build_failures="$build_failures $ci-valgrind:not-run"
fi

note "$asan: address and undefined-behaviour sanitizers"
ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:print_summary=1"
UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1:print_summary=1"
export ASAN_OPTIONS UBSAN_OPTIONS
if setup "$asan" -Db_sanitize=address,undefined -Db_lundef=false -Dtests=true \
  -Dbuildtype=debugoptimized; then
  build_and_test "$asan" engine nodes formats cli
  # The app under both sanitizers too: a memory error aborts it and fails
  # its test.  Leak checking is off for it: GTK, fontconfig and Mesa keep
  # allocations for the life of the process, which LeakSanitizer reports.
  case "$build_failures" in
    *"$asan:"*) ;;
    *)
      note "$asan: the app (gui suite), leak checking off"
      rm -f "$asan/meson-logs/gui-asan.json"
      ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=0:print_summary=1" \
        meson test -C "$asan" --no-rebuild --print-errorlogs --num-processes "$jobs" \
        --suite gui --logbase gui-asan --timeout-multiplier 3
      ;;
  esac
else
  build_failures="$build_failures $asan:configure"
fi
unset ASAN_OPTIONS UBSAN_OPTIONS

note "summary"
python3 - "$root/$ci/meson-logs/testlog.json" "$root/$ci/meson-logs/leakcheck-valgrind.json" \
  "$root/$asan/meson-logs/testlog.json" "$root/$asan/meson-logs/gui-asan.json" \
  $build_failures <<'PY'
import json, os, sys

logs = [a for a in sys.argv[1:] if a.endswith(".json")]
build_failures = [a for a in sys.argv[1:] if not a.endswith(".json")]
passed = failed = skipped = 0
failed_names = []
for log in logs:
    build = os.path.basename(os.path.dirname(os.path.dirname(log)))
    if log.endswith("leakcheck-valgrind.json"):
        build += "-valgrind"
    elif log.endswith("gui-asan.json"):
        build += "-gui"
    if not os.path.exists(log):
        if not any(f.startswith(build + ":") for f in build_failures):
            build_failures.append(build + ":no test log")
        continue
    with open(log) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            t = json.loads(line)
            r = t.get("result", "")
            if r in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif r == "SKIP":
                skipped += 1
            else:
                failed += 1
                failed_names.append("%s: %s (%s)" % (build, t.get("name"), r))
for b in build_failures:
    failed += 1
    failed_names.append(b.replace(":", ": ", 1) + " failed")
for n in failed_names:
    print("failed: " + n)
print("%d skipped" % skipped)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
PY
