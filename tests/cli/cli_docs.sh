#!/bin/bash
# README.md starts with the two commands a new user copies (install + build
# + evaluate the island; run the tests), .ci/run installs exactly the
# packages of the first (and then the outside components that only
# cli_outside and the Slurm tests use) and runs the second, and
# po/POTFILES is complete.
. "$(dirname "$0")/lib.sh"

checks=$((checks + 1))
python3 - "$SRC/README.md" "$SRC/.ci/run" <<'PY' || fail "README.md and .ci/run disagree (see above)"
import re, sys

readme = open(sys.argv[1]).read()
ci = open(sys.argv[2]).read()
blocks = re.findall(r"^```[a-z]*\n(.*?)^```", readme, re.S | re.M)
ok = True
def check(cond, msg):
    global ok
    if not cond:
        print(msg); ok = False

check(len(blocks) >= 2, "README.md needs two code blocks")
first, second = blocks[0], blocks[1]
before = readme[: readme.index("```")]
check(before.count("\n") < 12, "the first code block must come right at the start")
check("apt-get install" in first, "command 1 installs packages")
check("meson setup" in first and "ninja -C" in first, "command 1 builds")
check("tgraph eval data/examples/island.tgraph" in first and "-o out" in first,
      "command 1 evaluates the island into out/")
check(second.strip() == "tests/run_all.sh", "command 2 is exactly tests/run_all.sh, got %r" % second)
check(re.search(r"^tests/run_all\.sh$", ci, re.M) is not None, ".ci/run runs tests/run_all.sh")

def packages(text):
    # Every "apt-get install ..." up to the end of the shell command.
    text = text.replace("\\\n", " ")
    found = []
    for m in re.finditer(r"apt-get install([^;&|}\n]*)", text):
        found.append(sorted(t for t in m.group(1).split() if not t.startswith("-")))
    return found

# The outside checkers .ci/run adds for cli_outside come after the marker.
ci_main = ci.split("# Outside checkers")[0]
check("# Outside checkers" in ci, ".ci/run installs the outside checkers")
check(packages(first) == packages(ci_main),
      "apt-get install lists differ:\n  README: %s\n  .ci/run: %s" % (packages(first), packages(ci_main)))
sys.exit(0 if ok else 1)
PY

# po/POTFILES lists every engine, formats or CLI source with N_() strings
# (the GUI adds its own files), and every file it lists exists.
checks=$((checks + 1))
grep -v '^#' "$SRC/po/POTFILES" | grep -v '^$' | LC_ALL=C sort > "$TMP/listed"
(cd "$SRC" && grep -l 'N_ *(' engine/nodes/*.c engine/core/*.c formats/*.c app/cli/*.c 2> /dev/null) |
  LC_ALL=C sort > "$TMP/marked"
missing="$(LC_ALL=C comm -13 "$TMP/listed" "$TMP/marked")"
[ -z "$missing" ] || fail "po/POTFILES lacks: $missing"
while read -r f; do
  [ -f "$SRC/$f" ] || fail "po/POTFILES lists a missing file: $f"
done < "$TMP/listed"

# Every command of `tgraph help` is in README.md's command list and in
# tgraph(1)'s synopsis, with every long option its help lists.
checks=$((checks + 1))
"$TGRAPH" help > "$TMP/help"
: > "$TMP/helps"
for cmd in $(awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ && $1 != "help" { print $1 }' "$TMP/help"); do
  { echo "@@ $cmd"; "$TGRAPH" help "$cmd"; } >> "$TMP/helps"
done
python3 - "$TMP/helps" "$SRC/README.md" "$SRC/docs/tgraph.1" <<'PY' || fail "README.md or docs/tgraph.1 is behind tgraph help (above)"
import re, sys
helps = open(sys.argv[1]).read().split("@@ ")[1:]
readme, man = open(sys.argv[2]).read(), open(sys.argv[3]).read()
man_text = man.replace("\\-", "-")
missing = []
for h in helps:
    cmd, text = h.split("\n", 1)
    if not re.search(r"^tgraph %s\b" % cmd, readme, re.M):
        missing.append("README.md: tgraph %s" % cmd)
    if not re.search(r"^\.B tgraph %s$" % cmd, man, re.M):
        missing.append("tgraph.1 SYNOPSIS: tgraph %s" % cmd)
    options = text.split("\nOptions:\n", 1)[1] if "\nOptions:\n" in text else ""
    for opt in sorted(set(re.findall(r"^  (?:-[a-z], )?(--[a-z-]+)", options, re.M))):
        if opt not in man_text:
            missing.append("tgraph.1: %s %s" % (cmd, opt))
if missing:
    sys.exit("missing:\n  " + "\n  ".join(missing))
PY

finish
