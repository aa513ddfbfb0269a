#!/bin/bash
# `ninja install` installs tgraph, every file of data/examples/ (the graphs
# and the inputs they read beside them), the schema and both manual pages:
# checked against meson's list of installed files, so no install runs.
. "$(dirname "$0")/lib.sh"

installed="${TG_BUILD_ROOT:-}/meson-info/intro-installed.json"
if [ ! -f "$installed" ]; then
  echo "SKIP: no $installed (run through meson test)"
  exit 77
fi
checks=$((checks + 1))
python3 - "$installed" "$SRC" << 'PY' > "$TMP/err" 2>&1 ||
import json, os, sys
installed = json.load(open(sys.argv[1]))
src = sys.argv[2]
want = {os.path.join(src, "data/examples", f): "share/terrane/examples/" + f
        for f in os.listdir(os.path.join(src, "data/examples"))}
want[os.path.join(src, "data/schema/tgraph.schema.json")] = "share/terrane/schema/tgraph.schema.json"
for name in ("check-message", "diff"):
    want[os.path.join(src, "data/schema/%s.schema.json" % name)] = "share/terrane/schema/%s.schema.json" % name
want[os.path.join(src, "docs/tgraph.1")] = "share/man/man1/tgraph.1"
want[os.path.join(src, "docs/tgraph-nodes.7")] = "share/man/man7/tgraph-nodes.7"
wrong = []
for path, dest in sorted(want.items()):
    got = installed.get(os.path.realpath(path)) or installed.get(path)
    if not got or not got.endswith("/" + dest):
        wrong.append("%s -> %s (wanted .../%s)" % (os.path.relpath(path, src), got, dest))
if not any(p.endswith("/bin/tgraph") for p in installed.values()):
    wrong.append("tgraph is not installed in bin/")
if wrong:
    sys.exit("not installed as expected:\n  " + "\n  ".join(wrong))
PY
  fail "$(cat "$TMP/err")"

finish
