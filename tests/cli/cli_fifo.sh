#!/bin/bash
# Inputs that are not regular files: a FIFO as the graph of `tgraph check`,
# `eval` or `fmt`, or as an input.heightmap, would block the open until a
# writer came (and Ctrl+C with it).  Each is refused at once with a
# message naming the path; `timeout` turns a regression into a failure.
. "$(dirname "$0")/lib.sh"

mkfifo "$TMP/graph.tgraph" "$TMP/in.png" || { fail "mkfifo"; finish; }
cat > "$TMP/reads_fifo.tgraph" << 'G'
{ "format": "tgraph", "version": 2,
  "world": { "size_m": [100, 100], "height_m": 10, "resolution": 33, "seed": 1 },
  "nodes": [ { "id": "in", "type": "input.heightmap", "params": { "path": "in.png" } },
             { "id": "out", "type": "export.heightmap", "params": { "path": "h.png" } } ],
  "links": [ { "from": "in.height", "to": "out.height" } ] }
G

run timeout 10 "$TGRAPH" check "$TMP/graph.tgraph"
expect_rc 2 "check on a FIFO"
expect_in "$TMP/err" "graph.tgraph: it is a FIFO, not a regular file" "check on a FIFO"

run timeout 10 "$TGRAPH" eval "$TMP/graph.tgraph" -o "$TMP/out1"
expect_rc 2 "eval on a FIFO"
expect_in "$TMP/err" "graph.tgraph: it is a FIFO, not a regular file" "eval on a FIFO"

run timeout 10 "$TGRAPH" fmt --check "$TMP/graph.tgraph"
expect_rc 2 "fmt on a FIFO"
expect_in "$TMP/err" "graph.tgraph: it is a FIFO, not a regular file" "fmt on a FIFO"

run timeout 10 "$TGRAPH" eval "$TMP/reads_fifo.tgraph" -o "$TMP/out2"
expect_rc 1 "input.heightmap on a FIFO"
expect_in "$TMP/err" "in.png: it is a FIFO, not a regular file" "input.heightmap on a FIFO"
expect_no_files "$TMP/out2" "input.heightmap on a FIFO"

run timeout 10 "$TGRAPH" check "$TMP"
expect_rc 2 "check on a folder"
expect_in "$TMP/err" "it is a folder" "check on a folder"

finish
