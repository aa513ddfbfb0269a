#!/bin/bash
# README.md's "CI" section: its ci/terrain-compare.sh runs in a real git
# repository (main and a merge request that changes a graph's seed, adds
# a graph and leaves one alone): exit 1, one section a graph, the pictures
# linked where they are, the build reports written, the worktree gone;
# bad input exits 2.  The GitHub Actions and GitLab CI jobs are valid
# YAML with the steps they need (skipped without PyYAML).
. "$(dirname "$0")/lib.sh"

python3 - "$SRC/README.md" "$TMP" <<'PY' || { fail "README.md's CI section (see above)"; finish; }
import re, sys
readme = open(sys.argv[1]).read()
ci = readme.split("\n## CI\n", 1)[1].split("\n## ", 1)[0]
blocks = re.findall(r"^```([a-z]*)\n(.*?)^```", ci, re.S | re.M)
script = [b for lang, b in blocks if lang == "sh" and "ci/terrain-compare.sh" in b]
yamls = [b for lang, b in blocks if lang == "yaml"]
assert len(script) == 1 and len(yamls) == 2, "one script and two YAML jobs"
open(sys.argv[2] + "/terrain-compare.sh", "w").write(script[0])
for i, y in enumerate(yamls):
    open("%s/job%d.yml" % (sys.argv[2], i), "w").write(y)
PY

if python3 -c 'import yaml' 2> /dev/null; then
  python3 - "$TMP/job0.yml" "$TMP/job1.yml" <<'PY' || fail "CI jobs (see above)"
import sys, yaml
gh = yaml.safe_load(open(sys.argv[1]))
steps = gh["jobs"]["terrain"]["steps"]
uses = [s.get("uses", "").split("@")[0] for s in steps]
assert gh[True if True in gh else "on"] == "pull_request", "runs on pull requests"
assert gh["permissions"]["pull-requests"] == "write", "may comment"
assert uses.count("actions/checkout") == 1 and steps[0]["with"]["fetch-depth"] == 0, "full history"
assert "actions/github-script" in uses and "actions/upload-artifact" in uses, "comment and artifact"
assert any("ci/terrain-compare.sh" in s.get("run", "") for s in steps), "runs the script"
gl = yaml.safe_load(open(sys.argv[2]))["terrain"]
assert gl["rules"][0]["if"] == '$CI_PIPELINE_SOURCE == "merge_request_event"', "on merge requests"
assert any("ci/terrain-compare.sh" in l for l in gl["script"]), "runs the script"
assert any("/merge_requests/$CI_MERGE_REQUEST_IID/notes" in l for l in gl["script"]), "posts a note"
assert gl["artifacts"]["paths"] == ["terrain/report"], "keeps the report"
print("both CI jobs parse")
PY
else
  echo "SKIP: PyYAML missing; the CI jobs' YAML was not parsed"
fi

# tgraph on the PATH, as the jobs' images have it.
mkdir -p "$TMP/bin" "$TMP/repo/graphs"
ln -s "$TGRAPH" "$TMP/bin/tgraph"
export PATH="$TMP/bin:$PATH"
cd "$TMP/repo" || exit 1
git init -q -b main
git config user.email ci@example.invalid
git config user.name ci
cp "$DATA/small.tgraph" graphs/changed.tgraph
cp "$DATA/small.tgraph" graphs/same.tgraph
git add graphs && git commit -qm main
git checkout -qb mr
sed -i 's/"seed": 7/"seed": 8/' graphs/changed.tgraph
sed 's/"radius_m": 350/"radius_m": 300/' "$DATA/small.tgraph" > graphs/added.tgraph
git add graphs && git commit -qm "the merge request"

run sh "$TMP/terrain-compare.sh" main
expect_rc 1 "terrain-compare.sh on a merge request that changes the terrain"
S=terrain/report/summary.md
for g in added changed same; do
  expect_in "$S" "## \`graphs/$g.tgraph\`" "section of $g"
  checks=$((checks + 1))
  [ -s "terrain/report/$g.html" ] || fail "no build report of $g"
done
python3 - "$S" <<'PY' || fail "summary sections (see above)"
import re, sys
s = open(sys.argv[1]).read()
sec = dict(re.findall(r"^## `graphs/(\w+)\.tgraph`\n\n(.*?)(?=^## `|\Z)", s, re.S | re.M))
assert "### Terrain outputs: no change" in sec["same"], sec["same"]
assert "| `small.png` | changed | png16 65x65:" in sec["changed"], sec["changed"]
assert "| `small.png` | added |" in sec["added"], sec["added"]
PY
grep -o '](\([^)]*\.png\))' "$S" | sed 's/^](//; s/)$//' > "$TMP/links"
checks=$((checks + 1))
[ "$(wc -l < "$TMP/links")" -eq 2 ] || fail "two pictures linked (changed.tgraph's two files): $(cat "$TMP/links")"
while read -r link; do
  checks=$((checks + 1))
  [ -s "terrain/report/$link" ] || fail "summary.md links $link, not a file beside it"
done < "$TMP/links"
checks=$((checks + 1))
[ "$(git worktree list | wc -l)" -eq 1 ] || fail "the base worktree was left: $(git worktree list)"

# Where the pictures will be served from.
run env PICTURES_URL=https://ci.example.invalid/raw sh "$TMP/terrain-compare.sh" main
expect_rc 1 "terrain-compare.sh with PICTURES_URL"
expect_in "$S" "](https://ci.example.invalid/raw/changed/small.png.sides.png)" "picture URL"

# Nothing changed: 0; a graph that fails to load: 2.
git checkout -q main
run sh "$TMP/terrain-compare.sh" main
expect_rc 0 "terrain-compare.sh with no change"
git checkout -q mr
echo '{' > graphs/added.tgraph
run sh "$TMP/terrain-compare.sh" main
expect_rc 2 "terrain-compare.sh with a broken graph"

finish
