#!/bin/bash
# The start page by real input: a window opened without a file shows the
# bundled examples with thumbnails the engine renders (kept in the cache
# folder), clicking one opens it; "New Graph" gives the empty canvas,
# where Tab adds a node.  A second run takes every thumbnail from the
# cache but the one of an example that was edited, which is made anew
# (no stale thumbnail).  Skips (77) only without xdotool or an X server.
# Usage: gui_start.sh TERRANE
set -u
terrane=$1
src=${TG_SOURCE_ROOT:-.}
out=${TG_BUILD_ROOT:-.}/tests/gui/start-artifacts
. "$src/tests/gui/xserver.sh"
input_test_start "$out"
fail=0

mkdir -p "$out/data/examples"
cp "$src"/data/examples/* "$out/data/examples/"
export TERRANE_DATADIR="$out/data" XDG_CACHE_HOME="$out/cache"
# Settings kept between the runs: the second start lists the file the first opened.
export GSETTINGS_BACKEND=keyfile XDG_CONFIG_HOME="$out/config"
thumbs="$out/cache/terrane/thumbnails"
n=$(ls "$out/data/examples/"*.tgraph | wc -l)

t0=$(date +%s.%N)
script="wait;thumbnails;screenshot $out/start.png"
script="$script;click tip:$out/data/examples/island.tgraph;wait;save $out/opened.tgraph"
script="$script;screenshot $out/opened.png;quit"
run_script cold "$script"
t1=$(date +%s.%N)
ls "$thumbs" > "$out/cold.list"
# An edited example: its thumbnail is made again, the others come from the cache.
sed -i 's/"seed": [0-9]*/"seed": 4242/' "$out/data/examples/ridges.tgraph"
run_script warm "wait;thumbnails;screenshot $out/warm.png;click tip:$out/data/examples/island.tgraph;wait;save $out/reopened.tgraph;quit"
t2=$(date +%s.%N)
run_script new "wait;click tip:Start with an empty graph;key Tab;type noise;key Return;wait;save $out/new.tgraph;quit"
echo "timing: first start (thumbnails made) $(echo "$t1 - $t0" | bc) s, second (from the cache) $(echo "$t2 - $t1" | bc) s"

SRC="$src" python3 - "$out" "$n" <<'PY' || fail=1
import json, os, re, sys
sys.path.insert(0, os.path.join(os.environ['SRC'], 'tests', 'gui'))
from png_stats import read_png
out, n = sys.argv[1], int(sys.argv[2])
thumbs = f'{out}/cache/terrane/thumbnails'
bad = 0
def check(ok, what):
    global bad
    print(('ok: ' if ok else 'FAIL: ') + what)
    bad += not ok
cold = open(f'{out}/cold.log').read()
check(f'script: thumbnails: {n} examples, {n} with a thumbnail, 0 recent files' in cold,
      f'the start page lists the {n} examples, each with its thumbnail')
first = open(f'{out}/cold.list').read().split()
check(len(first) == n, f'{len(first)} thumbnails in the cache after the first start')
for f in first:
    w, h, ch, rows = read_png(f'{thumbs}/{f}')
    flat = len({r[i] for r in rows for i in range(0, w * ch, ch)}) == 1
    check(max(w, h) == 160 and not flat, f'{f[:12]}…: {w}x{h}, not one flat colour')
# Clicking Island opened it: its nodes and links.
want = json.load(open(f'{out}/data/examples/island.tgraph'))
got = json.load(open(f'{out}/opened.tgraph'))
check([x['id'] for x in got['nodes']] == [x['id'] for x in want['nodes']]
      and got['links'] == want['links'], 'a click on Island opened island.tgraph')
warm = open(f'{out}/warm.log').read()
now = sorted(os.listdir(thumbs))
check(f'script: thumbnails: {n} examples, {n} with a thumbnail, 1 recent files' in warm
      and len(now) == n + 1
      and set(first) <= set(now),
      'the second start made one new thumbnail (the edited example) and kept the rest')
# The recent row comes first on the page: its click opened the file again.
got = json.load(open(f'{out}/reopened.tgraph'))
check(got['links'] == want['links'], 'Recent lists island.tgraph and a click opens it')
new = json.load(open(f'{out}/new.tgraph'))
check([x['type'] for x in new['nodes']] == ['noise.fbm'], 'New Graph, then Tab added a node')
sys.exit(1 if bad else 0)
PY
exit $fail
