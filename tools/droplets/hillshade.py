#!/usr/bin/env python3
"""Before/after hillshades of erosion.hydraulic on a steep terrain.

Evaluates steep.tgraph (1 km at 2 m cells, 400 m high) with tgraph and
writes one PNG: the input, the eroded terrain and a 2x close-up of the
eroded north-west corner, lit from the north-west, so droplet pits (dark
and bright specks) and curtains (parallel grooves down the faces) show.
No numpy: plain Python over 513 x 513 floats.

    tools/droplets/hillshade.py build/app/cli/tgraph out.png [--set ID.P=V]...
"""
import array, math, os, struct, subprocess, sys, tempfile, zlib

def read_r32(path, n):
    a = array.array("f")
    with open(path, "rb") as f:
        a.frombytes(f.read())
    if sys.byteorder != "little":
        a.byteswap()
    assert len(a) == n * n, (len(a), n)
    return a

def shade(hm, n, cell):
    out = bytearray(n * n)
    lx, ly, lz = -1.0, -1.0, 1.0  # from the north-west (row 0 is north), 45 deg up
    ll = math.sqrt(lx * lx + ly * ly + lz * lz)
    for j in range(n):
        jm, jp = max(j - 1, 0), min(j + 1, n - 1)
        for i in range(n):
            im, ip = max(i - 1, 0), min(i + 1, n - 1)
            gx = (hm[j * n + ip] - hm[j * n + im]) / ((ip - im) * cell)
            gy = (hm[jp * n + i] - hm[jm * n + i]) / ((jp - jm) * cell)
            d = (-gx * lx - gy * ly + lz) / (math.sqrt(gx * gx + gy * gy + 1) * ll)
            out[j * n + i] = max(0, min(255, int(255 * d)))
    return out

def pits(base, ero, n):
    """Share of interior cells more than 1 cm below all 8 neighbours that
    were not local minima before (as test_erosion_hydraulic counts)."""
    k = 0
    for j in range(1, n - 1):
        for i in range(1, n - 1):
            nb = [(i + dx, j + dy) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dx or dy]
            lo = min(ero[y * n + x] for x, y in nb)
            lo_in = min(base[y * n + x] for x, y in nb)
            k += ero[j * n + i] < lo - 0.01 and not base[j * n + i] < lo_in
    return k / (n - 2) ** 2

def write_png(path, rows, w):
    raw = b"".join(b"\0" + bytes(r) for r in rows)
    def chunk(t, d):
        c = struct.pack(">I", len(d)) + t + d
        return c + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, len(rows), 8, 0, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))

def main():
    tgraph, png, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    graph = os.path.join(os.path.dirname(os.path.abspath(__file__)), "steep.tgraph")
    n, cell = 513, 1024 / 512
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([tgraph, "eval", graph, "-o", d, "--quiet"] + extra, check=True)
        base, ero = read_r32(os.path.join(d, "base.r32"), n), read_r32(os.path.join(d, "eroded.r32"), n)
    a, b = shade(base, n, cell), shade(ero, n, cell)
    z = 256  # close-up: the eroded north-west quarter, each cell 2 x 2 pixels
    rows = []
    for j in range(n):
        r = bytearray(a[j * n:(j + 1) * n]) + b"\xff" * 8 + bytearray(b[j * n:(j + 1) * n]) + b"\xff" * 8
        zj = j * z // n
        r += bytearray(b[zj * n + i * z // (2 * z)] for i in range(2 * z))
        rows.append(r)
    write_png(png, rows, len(rows[0]))
    print("pits %.4f %% of cells" % (100 * pits(base, ero, n)))

if __name__ == "__main__":
    main()
