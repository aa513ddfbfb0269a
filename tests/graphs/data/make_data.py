#!/usr/bin/env python3
"""Writes the small input files of the golden graphs (tests/graphs/data/):
a 16-bit heightmap, an RGB paint map and a stack of four 8-bit slices.
Rerun it only to change them, then rerun the golden update."""
import math
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def write_png(name, width, height, channels, bits, rows):
    """ROWS: lists of integer samples, north row first, channels interleaved."""
    color_type = {1: 0, 3: 2, 4: 6}[channels]
    raw = bytearray()
    for row in rows:
        raw.append(0)
        for v in row:
            raw += struct.pack(">H", v) if bits == 16 else bytes((v,))

    def chunk(tag, data):
        c = tag + data
        return struct.pack(">I", len(data)) + c + struct.pack(">I", zlib.crc32(c) & 0xFFFFFFFF)

    head = struct.pack(">IIBBBBB", width, height, bits, color_type, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(bytes(raw), 9))
    png += chunk(b"IEND", b"")
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(png)


def clamp01(v):
    return 0.0 if v < 0 else 1.0 if v > 1 else v


# A 65x65 heightmap: a ridge running south-west to north-east on a bump.
n = 65
rows = []
for j in range(n):
    row = []
    for i in range(n):
        x, z = i / (n - 1) - 0.5, 0.5 - j / (n - 1)
        bump = math.exp(-(x * x + z * z) * 6.0)
        ridge = math.exp(-((x - z) ** 2) * 40.0) * 0.3
        row.append(round(clamp01(0.1 + 0.6 * bump + ridge) * 65535))
    rows.append(row)
write_png("height.png", n, n, 1, 16, rows)

# A 33x33 RGB paint map: red west, green east, blue in a disc at the centre.
n = 33
rows = []
for j in range(n):
    row = []
    for i in range(n):
        x, z = i / (n - 1) - 0.5, 0.5 - j / (n - 1)
        if x * x + z * z < 0.04:
            row += [0, 0, 255]
        elif x < 0:
            row += [255, 0, 0]
        else:
            row += [0, 255, 0]
    rows.append(row)
write_png("paint.png", n, n, 3, 8, rows)

# Four 16x16 slices of a ball, bottom first: slice_000.png .. slice_003.png.
n, count = 16, 4
for k in range(count):
    rows = []
    for j in range(n):
        row = []
        for i in range(n):
            d = math.sqrt((i - 7.5) ** 2 + (j - 7.5) ** 2 + ((k - 1.5) * 3.0) ** 2)
            row.append(round(clamp01(0.5 - (d - 6.0) * 0.25) * 255))
        rows.append(row)
    write_png("slice_%03d.png" % k, n, n, 1, 8, rows)
