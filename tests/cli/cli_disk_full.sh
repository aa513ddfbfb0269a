#!/bin/bash
# A full disk: every way a build writes (an export, the manifest, a tiled
# job's job.json, a stitched file) fails with the system's reason and the
# file's name, exits non-zero, and leaves the output folder as it was: the
# old files intact and no temporary file behind.  The disk is a small
# tmpfs filled up to a chosen number of free pages; the test is skipped
# where mounting one is not allowed.
. "$(dirname "$0")/lib.sh"

DISK="$TMP/disk"
mkdir -p "$DISK"
if ! mount -t tmpfs -o size=512k tmpfs "$DISK" 2> "$TMP/mount.err"; then
  echo "SKIP: cannot mount a tmpfs to fill ($(tr '\n' ' ' < "$TMP/mount.err")); run as root"
  exit 77
fi
trap 'umount "$DISK" 2> /dev/null || umount -l "$DISK"; rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM HUP
PAGE=$(stat -f -c %S "$DISK")

# Fixed-size exports (raw), so the pages a rebuild needs are known.
cat > "$TMP/g.tgraph" << 'EOF'
{
  "format": "tgraph",
  "version": 2,
  "world": { "size_m": [1000, 1000], "height_m": 200, "resolution": 65, "seed": 7 },
  "nodes": [
    { "id": "base", "type": "noise.fbm", "params": { "scale_m": 400, "octaves": 5 } },
    { "id": "raw", "type": "export.heightmap", "params": { "path": "h.r16", "format": "raw16" } },
    { "id": "float", "type": "export.heightmap", "params": { "path": "sub/h.r32", "format": "r32" } }
  ],
  "links": [
    { "from": "base.height", "to": "raw.height" },
    { "from": "base.height", "to": "float.height" }
  ]
}
EOF

# pages_but NAME DIR: the pages the files in DIR take, but those called NAME.
pages_but () {
  find "$2" -type f ! -name "$1" -printf '%s\n' |
    awk -v p="$PAGE" '{ n += int(($1 + p - 1) / p) } END { print n + 0 }'
}

# fill_leaving N: fills the disk but N pages.
fill_leaving () {
  rm -f "$DISK/fill"
  local free
  free=$(stat -f -c %a "$DISK")
  dd if=/dev/zero of="$DISK/fill" bs="$PAGE" count=$((free - $1)) status=none
}

# tree_state DIR: every name below DIR with the digest of each file.
tree_state () {
  (cd "$1" && find . -print | LC_ALL=C sort | while read -r f; do
    if [ -f "$f" ]; then echo "$f $(sha256 "$f")"; else echo "$f"; fi
  done)
}

# expect_disk_full WHAT FILE: the last run failed saying the disk is full
# and naming FILE; $TMP/before holds the state of $OUT before it.
expect_disk_full () {
  checks=$((checks + 1))
  if [ "$rc" -eq 0 ]; then
    fail "$1: succeeded on a full disk"
  fi
  checks=$((checks + 1))
  if ! grep -qi "no space left" "$TMP/err"; then
    fail "$1: the message does not say \"no space left\""
    sed 's/^/  stderr: /' "$TMP/err" >&2
  fi
  expect_in "$TMP/err" "$2" "$1"
  tree_state "$OUT" > "$TMP/after"
  checks=$((checks + 1))
  if ! cmp -s "$TMP/before" "$TMP/after"; then
    fail "$1: $OUT changed"
    diff "$TMP/before" "$TMP/after" | sed 's/^/  /' >&2
  fi
  checks=$((checks + 1))
  if [ -n "$(find "$DISK" -name '*.tmp-*')" ]; then
    fail "$1: temporary files left: $(find "$DISK" -name '*.tmp-*' | tr '\n' ' ')"
  fi
}

# --- tgraph eval ---------------------------------------------------------------

OUT="$DISK/out"
run "$TGRAPH" eval "$TMP/g.tgraph" -o "$OUT" --quiet
expect_rc 0 "eval onto an empty disk"
tree_state "$OUT" > "$TMP/before"
need=$(pages_but manifest.json "$OUT")

# The disk fills while an export is written.
fill_leaving 1
run "$TGRAPH" eval "$TMP/g.tgraph" -o "$OUT" --quiet --set base.octaves=6
expect_disk_full "eval, disk full at an export" "$OUT/"

# Room for the exports but not the manifest.
fill_leaving "$need"
run "$TGRAPH" eval "$TMP/g.tgraph" -o "$OUT" --quiet --set base.octaves=6
expect_disk_full "eval, disk full at the manifest" "$OUT/manifest.json"

# With room again the same build goes through.
rm -f "$DISK/fill"
run "$TGRAPH" eval "$TMP/g.tgraph" -o "$OUT" --quiet --set base.octaves=6
expect_rc 0 "eval once the disk has room"
rm -rf "$OUT"

# --- a tiled job's job.json ------------------------------------------------------

run "$TGRAPH" plan "$TMP/g.tgraph" --tiles 2,2 -o "$DISK/plan"
expect_rc 0 "plan"
run sh -c "cd '$DISK/plan' && TGRAPH='$TGRAPH' && $(sed -n 1p "$DISK/plan/stages/00.txt")"
expect_rc 0 "tile 0,0 onto the disk"
OUT="$DISK/plan/tiles/0_0"
tree_state "$OUT" > "$TMP/before"
fill_leaving "$(pages_but job.json "$OUT")"
run sh -c "cd '$DISK/plan' && TGRAPH='$TGRAPH' && $(sed -n 1p "$DISK/plan/stages/00.txt")"
expect_disk_full "tile job, disk full at job.json" "job.json"

# --- tgraph stitch ---------------------------------------------------------------

# Two plans of different terrain: the second is stitched over the first.
rm -f "$DISK/fill"
rm -rf "$DISK/plan"
for octaves in 5 6; do
  run "$TGRAPH" plan "$TMP/g.tgraph" --tiles 2,2 --set base.octaves=$octaves -o "$TMP/plan$octaves"
  expect_rc 0 "plan with $octaves octaves"
  for stage in "$TMP/plan$octaves"/stages/*.txt; do
    (cd "$TMP/plan$octaves" && TGRAPH="$TGRAPH" xargs -d '\n' -I {} sh -c '{}' < "$stage") ||
      fail "running $stage"
  done
done
OUT="$DISK/stitched"
run "$TGRAPH" stitch "$TMP/plan5" -o "$OUT" --quiet
expect_rc 0 "stitch onto the disk"
tree_state "$OUT" > "$TMP/before"
fill_leaving 1
run "$TGRAPH" stitch "$TMP/plan6" -o "$OUT" --quiet
expect_disk_full "stitch, disk full at a file" "$OUT/"
fill_leaving "$(pages_but manifest.json "$OUT")"
run "$TGRAPH" stitch "$TMP/plan6" -o "$OUT" --quiet
expect_disk_full "stitch, disk full at the manifest" "$OUT/manifest.json"

finish
