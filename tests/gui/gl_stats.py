#!/usr/bin/env python3
"""Checks a 3D view frame (the PNG `screenshot3d` writes: RGBA, 8 bits),
with only the standard library.  Prints the grey-level standard
deviation, the fraction of pixels that are not sky (the sky is a bright
blue gradient: blue well above red) and the fraction of saturated warm pixels
(markers in red/yellow: in the forest example the grass, drawn in its
red paint colour; the lit terrain ramp and rock colours stay below 0.45
saturation), and the fraction of near-black pixels (a wireframe too
dense to read turns the terrain into a dark sheet).

Usage: gl_stats.py FILE [--min-sd X] [--min-object F] [--min-markers F] [--max-markers F]
                        [--max-dark F]
Exit 1 when a bound fails."""
import colorsys, struct, sys, zlib

def read_png(path):
    data = open(path, 'rb').read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
    pos, idat = 8, b''
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR':
            w, h, depth, ctype, _, _, interlace = struct.unpack('>IIBBBBB', body)
            assert depth == 8 and interlace == 0 and ctype in (2, 6), 'unsupported PNG'
            ch = 3 if ctype == 2 else 4
        elif kind == b'IDAT':
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * ch
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - ch] if i >= ch else 0
            b = prev[i]
            c = prev[i - ch] if i >= ch else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, ch, rows

def main():
    args = sys.argv[1:]
    path = args.pop(0)
    bounds = {'--min-sd': 8.0, '--min-object': 0.15, '--min-markers': None, '--max-markers': None,
              '--max-dark': None}
    while args:
        k = args.pop(0)
        bounds[k] = float(args.pop(0))
    w, h, ch, rows = read_png(path)
    grey, obj, warm, dark, n = [], 0, 0, 0, 0
    for row in rows[::2]:
        for i in range(0, w * ch, ch * 2):
            r, g, b = row[i], row[i + 1], row[i + 2]
            n += 1
            grey.append((r + g + b) / 3)
            if grey[-1] < 40:
                dark += 1
            if not (b > r + 30 and b >= g and b > 190):
                obj += 1
            hue, sat, val = colorsys.rgb_to_hsv(r / 255, g / 255, b / 255)
            if sat > 0.45 and val > 0.35 and (hue < 60 / 360 or hue > 330 / 360):
                warm += 1
    mean = sum(grey) / n
    sd = (sum((v - mean) ** 2 for v in grey) / n) ** 0.5
    print(f'{path}: {w}x{h} grey sd {sd:.1f}, object {obj / n:.3f}, warm markers {warm / n:.4f}, '
          f'dark {dark / n:.3f}')
    ok = sd > bounds['--min-sd'] and obj / n > bounds['--min-object']
    if bounds['--min-markers'] is not None:
        ok = ok and warm / n >= bounds['--min-markers']
    if bounds['--max-markers'] is not None:
        ok = ok and warm / n <= bounds['--max-markers']
    if bounds['--max-dark'] is not None:
        ok = ok and dark / n <= bounds['--max-dark']
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
