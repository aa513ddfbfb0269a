#!/bin/bash
# The alpine example (data/examples/alpine.tgraph) at 257 samples: it
# evaluates, writes every export with the sizes and formats it promises,
# the manifest's sizes and SHA-256 match the files, the Unity splat maps'
# weights add up to exactly 255 at every pixel, every one of the six
# layers is used somewhere, and the bytes do not depend on the thread count.
. "$(dirname "$0")/lib.sh"

alpine="$EXAMPLES/alpine.tgraph"
files="height.png splat_0.png splat_1.png color.png preview.png hillshade.png normal.png"

run "$TGRAPH" eval "$alpine" -o "$TMP/a" --resolution 257 --threads 2 --quiet
expect_rc 0 "eval alpine"
for f in $files manifest.json; do
  checks=$((checks + 1))
  [ -f "$TMP/a/$f" ] || fail "alpine did not write $f"
done

# PNG layout, manifest, splat sums and layer coverage, in one pass of a
# small PNG decoder (8/16-bit, non-interlaced; the Python standard library
# has zlib but no PNG reader).
run python3 - "$TMP/a" <<'PY'
import hashlib, json, os, struct, sys, zlib

def read_png(path):
    d = open(path, "rb").read()
    assert d[:8] == b"\x89PNG\r\n\x1a\n", path + ": not a PNG"
    pos, idat = 8, b""
    while pos < len(d):
        n, t = struct.unpack(">I4s", d[pos:pos + 8])
        body = d[pos + 8:pos + 8 + n]
        pos += 12 + n
        if t == b"IHDR":
            w, h, bits, ctype, _, _, inter = struct.unpack(">IIBBBBB", body)
        elif t == b"IDAT":
            idat += body
    assert inter == 0
    ch = {0: 1, 4: 2, 2: 3, 6: 4}[ctype]
    bpp = ch * bits // 8
    stride = w * bpp
    raw = zlib.decompress(idat)
    out, prev, p = bytearray(), bytearray(stride), 0
    for _ in range(h):
        f, row = raw[p], bytearray(raw[p + 1:p + 1 + stride])
        p += 1 + stride
        for i in range(stride):
            a = row[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                row[i] = (row[i] + a) & 255
            elif f == 2:
                row[i] = (row[i] + b) & 255
            elif f == 3:
                row[i] = (row[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                row[i] = (row[i] + (a if pa <= pb and pa <= pc else (b if pb <= pc else c))) & 255
        out += row
        prev = row
    return w, h, ch, bits, out

out = sys.argv[1]
bad = []
want = {"height.png": (1, 16), "splat_0.png": (4, 8), "splat_1.png": (4, 8),
        "color.png": (4, 8), "preview.png": (3, 8), "hillshade.png": (1, 8),
        "normal.png": (3, 8)}
img = {}
for name, (ch, bits) in want.items():
    img[name] = read_png(os.path.join(out, name))
    w, h, c, b, _ = img[name]
    if (w, h, c, b) != (257, 257, ch, bits):
        bad.append("%s is %dx%d, %d channels, %d bits; want 257x257, %d, %d"
                   % (name, w, h, c, b, ch, bits))

m = json.load(open(os.path.join(out, "manifest.json")))
listed = {f["path"]: f for f in m["files"]}
for name in want:
    f = listed.get(name)
    data = open(os.path.join(out, name), "rb").read()
    if not f:
        bad.append("manifest lacks " + name)
    elif f["bytes"] != len(data) or f["sha256"] != hashlib.sha256(data).hexdigest():
        bad.append("manifest entry of %s does not match the file" % name)

# Layers: grass rock snow scree | river gravel - -.
s0, s1 = img["splat_0.png"][4], img["splat_1.png"][4]
n = 257 * 257
off = sum(1 for k in range(n)
          if s0[4 * k] + s0[4 * k + 1] + s0[4 * k + 2] + s0[4 * k + 3] + s1[4 * k] + s1[4 * k + 1]
          != 255)
if off:
    bad.append("%d pixels whose splat weights do not add up to 255" % off)
if any(s1[4 * k + c] for k in range(n) for c in (2, 3)):
    bad.append("splat_1.png has weight in channels past the sixth layer")
names = ["grass", "rock", "snow", "scree", "river", "gravel"]
for l, nm in enumerate(names):
    src, c = (s0, l) if l < 4 else (s1, l - 4)
    share = sum(1 for k in range(n) if src[4 * k + c] >= 128) / n
    # Each layer dominates somewhere, none everywhere.
    if not (0.001 < share < 0.9):
        bad.append("layer %s dominates %.1f%% of the map" % (nm, 100 * share))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
expect_rc 0 "alpine exports (layout, manifest, splat sums)"

# One thread gives the same bytes.
run "$TGRAPH" eval "$alpine" -o "$TMP/b" --resolution 257 --threads 1 --quiet
expect_rc 0 "eval alpine, 1 thread"
for f in $files; do
  expect_same "$TMP/a/$f" "$TMP/b/$f" "alpine $f, 1 vs 2 threads"
done

finish
