#!/bin/bash
# `tgraph eval --report`: the exports and manifest are the same bytes with
# and without a report (and for 1 and 2 threads); the page is one
# self-contained file (no script, nothing fetched, pictures as data:
# URIs) naming every node; headless Chromium renders it (a screenshot
# that is not blank, a DOM with every node id); refusals and failures.
# The Chromium part is skipped, saying so, when chromium is missing.
. "$(dirname "$0")/lib.sh"

G="$EXAMPLES/alpine.tgraph"
run "$TGRAPH" eval "$G" -r 65 -o "$TMP/plain" -j 1 -q
expect_rc 0 "eval without a report"
run "$TGRAPH" eval "$G" -r 65 -o "$TMP/rep" -j 2 --report "$TMP/pages/report.html"
expect_rc 1 "eval --report into a missing folder"
expect_in "$TMP/err" "$TMP/pages/report.html: cannot write the report" "report failure named"
mkdir "$TMP/pages"
run "$TGRAPH" eval "$G" -r 65 -o "$TMP/rep" -j 2 --report "$TMP/pages/report.html"
expect_rc 0 "eval --report"
expect_in "$TMP/out" "report: $TMP/pages/report.html" "report announced"
H="$TMP/pages/report.html"
checks=$((checks + 1))
[ "$(ls -A "$TMP/pages")" = "report.html" ] || fail "pages/ should hold report.html alone: $(ls -A "$TMP/pages")"

# Same exports, same manifest; the report is no file of the build.
for f in $(cd "$TMP/plain" && find . -type f | sort); do
  expect_same "$TMP/plain/$f" "$TMP/rep/$f" "$f with and without --report"
done
checks=$((checks + 1))
[ "$(cd "$TMP/plain" && find . | sort)" = "$(cd "$TMP/rep" && find . | sort)" ] \
  || fail "the output folders hold different files"
run "$TGRAPH" eval "$G" -r 65 -o "$TMP/inside" -q --report "$TMP/inside/report.html"
expect_rc 0 "eval --report into the output folder"
expect_same "$TMP/plain/manifest.json" "$TMP/inside/manifest.json" "manifest with the report beside it"
expect_not_in "$TMP/inside/manifest.json" "report.html" "the manifest lists no report"

# Self-contained: no script, nothing fetched, every picture embedded.
expect_in "$H" "<!DOCTYPE html>" "an HTML page"
for bad in "<script" "<link" "src=\"http" "href=\"http" "url(" "@import"; do
  expect_not_in "$H" "$bad" "self-contained page"
done
checks=$((checks + 1))
n_img=$(grep -o '<img [^>]*>' "$H" | wc -l)
n_data=$(grep -o '<img [^>]*src="data:image/png;base64,[A-Za-z0-9+/=]*"' "$H" | wc -l)
[ "$n_img" -gt 20 ] && [ "$n_img" -eq "$n_data" ] \
  || fail "$n_img images, $n_data of them data: URIs"
# Every node in the drawing and the table; times and exports listed.
ids=$(python3 -c 'import json,sys; print(" ".join(n["id"] for n in json.load(open(sys.argv[1]))["nodes"]))' "$G")
for id in $ids; do
  expect_in "$H" "id=\"node-$id\"" "node $id drawn"
  expect_in "$H" "<tr><td><code>$id</code></td>" "node $id in the table"
done
for f in color.png height.png hillshade.png normal.png preview.png splat_0.png splat_1.png; do
  expect_in "$H" "<tr><td><code>$f</code></td>" "export $f listed"
done
expect_in "$H" "\"sha256\": \"$(sha256 "$TMP/rep/height.png")\"" "the manifest, as written"
checks=$((checks + 1))
python3 - "$H" <<'PY' || fail "node times (see above)"
import re, sys
html = open(sys.argv[1]).read()
rows = re.findall(r'<tr><td><code>([^<]+)</code></td><td>([^<]+)</td><td>(done|cached)</td><td class="num">([0-9.]+)</td>', html)
print(len(rows), "nodes with a time; slowest:", max(rows, key=lambda r: float(r[3]))[:2])
total = sum(float(r[3]) for r in rows)
sys.exit(0 if len(rows) >= 20 and total > 0 else 1)
PY

# A failed build: exit 1, nothing written, a report naming the node and
# its message, with the nodes that did compute and no exports.
run "$TGRAPH" eval "$DATA/partial_fail.tgraph" -o "$TMP/pf" --report "$TMP/pf.html"
expect_rc 1 "eval --report of a failing build"
expect_no_files "$TMP/pf" "a failed build with --report"
expect_in "$TMP/pf.html" '<strong>The build failed</strong>: node <code>scan</code>: cannot read &quot;no_such_scan.png&quot;' "failed node in the report"
expect_in "$TMP/pf.html" '<g class="node failed" id="node-scan">' "failed node drawn as failed"
expect_in "$TMP/pf.html" '<tr><td><code>flat</code></td><td>gen.constant</td><td>done</td>' "computed node listed"
expect_not_in "$TMP/pf.html" "<h2>Exports</h2>" "no exports of a failed build"

# Refused with a tiled build, and with no file name.
run "$TGRAPH" eval "$G" -o "$TMP/t" --tiles 2,2 --tile 0,0 --report "$TMP/t.html"
expect_rc 2 "--report with --tiles"
expect_in "$TMP/err" "--report describes a whole build" "tiles refusal"
run "$TGRAPH" eval "$G" -o "$TMP/t" --report ""
expect_rc 2 "--report with an empty name"

# A real browser: a screenshot that is not blank, and every node id in the DOM.
chrome=""
for c in chromium chromium-browser google-chrome; do
  command -v "$c" > /dev/null 2>&1 && { chrome="$c"; break; }
done
if [ -z "$chrome" ]; then
  echo "SKIP: chromium not installed (Debian package chromium); the page was not rendered"
  finish
fi
chrome_run () {
  timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$TMP/chrome" "$@" "file://$H"
}
chrome_run --screenshot="$TMP/shot.png" --window-size=1400,1000 > "$TMP/out" 2> "$TMP/err"
checks=$((checks + 1))
[ -s "$TMP/shot.png" ] || { fail "chromium wrote no screenshot"; sed 's/^/  | /' "$TMP/err" >&2; }
if [ -s "$TMP/shot.png" ]; then
  python3 "$SRC/tests/cli/png_colours.py" "$TMP/shot.png" > "$TMP/colours"
  read -r w h distinct white red blue other < "$TMP/colours"
  echo "screenshot: $(cat "$TMP/colours")"
  checks=$((checks + 1))
  # A blank page is one colour; the drawing and thumbnails are thousands.
  [ "$w" -eq 1400 ] && [ "${distinct#distinct=}" -gt 500 ] \
    || fail "the screenshot looks blank: $(cat "$TMP/colours")"
fi
chrome_run --dump-dom > "$TMP/dom.html" 2> "$TMP/err"
for id in $ids; do
  expect_in "$TMP/dom.html" "id=\"node-$id\"" "node $id in Chromium's DOM"
done
expect_in "$TMP/dom.html" "<svg" "the graph drawing in the DOM"

finish
