#!/usr/bin/env python3
"""Counts the colours of an 8-bit PNG (grey, grey+alpha, RGB or RGBA,
not interlaced) with nothing but zlib, for tests that look at pictures:
prints `WIDTH HEIGHT distinct=N white=N red=N blue=N other=N`.  Red and
blue are the difference map's sides (red clearly above green and blue,
blue clearly above red)."""
import struct
import sys
import zlib


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG")
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or interlace or ctype not in (0, 2, 4, 6):
        sys.exit(f"{path}: only 8-bit, non-interlaced grey/RGB(A) PNGs")
    bpp = {0: 1, 2: 3, 4: 2, 6: 4}[ctype]
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


w, h, bpp, rows = read_png(sys.argv[1])
counts = {"white": 0, "red": 0, "blue": 0, "other": 0}
distinct = set()
for row in rows:
    for x in range(w):
        px = row[x * bpp:(x + 1) * bpp]
        r, g, b = (px[0], px[0], px[0]) if bpp < 3 else (px[0], px[1], px[2])
        distinct.add((r, g, b))
        if r == g == b == 255:
            counts["white"] += 1
        elif r > g + 20 and r > b + 20:
            counts["red"] += 1
        elif b > r + 20:
            counts["blue"] += 1
        else:
            counts["other"] += 1
print(w, h, f"distinct={len(distinct)}", " ".join(f"{k}={v}" for k, v in counts.items()))
