#!/usr/bin/env python3
"""Before/after hillshades of erosion.hydraulic, with the numbers that
tests/nodes/test_erosion_hydraulic.c asserts.

Evaluates steep.tgraph (1 km at 2 m cells, 400 m high: pits),
plane.tgraph (a 35 degree plane with 8 m of noise at 2 m cells:
curtains), steep-flow.tgraph or plane-flow.tgraph (the same with
erosion.flow of the input wired into erosion.hydraulic's drainage input,
which also exports it as water.r32), or any graph given by its path that
exports base.r32, eroded.r32 and optionally water.r32, with tgraph, and
writes one PNG: the input, the eroded terrain, a 2x close-up of the
eroded north-west quarter, lit from the north-west, so droplet pits
(dark and bright specks) and curtains (parallel grooves down the faces)
show, and the depth eroded (white at its 99th percentile).  Prints the
share of cells left as pits, the grooves (RMS second difference of the
erosion across the plane's mean fall line, and across the local fall
line on slopes over 19 degrees, over the mean depth), whether the
channels branch (D8 channels of the input and of the eroded surface
draining >= 2000 and 20000 m2: confluences per km of channel and the
share of channel heads that join another channel before leaving the
map, over the whole map and on faces steeper than 30 degrees; the same
count as test_erosion_hydraulic's) and, with water.r32, how much of the
erosion falls on drainage lines.  --cut BASE,ERODED[,WATER] evaluates
any graph (e.g. data/examples/alpine.tgraph --cut talus,rain,runoff)
with only those nodes exported.  The -flow graphs with
--set ero.channel_exponent=0 --set ero.face_radius_m=0
--set ero.channel_pull_m=0 give the bytes of the node without the input
(the "before").  Plain Python, no numpy.

    tools/droplets/hillshade.py build/app/cli/tgraph out.png \
        [steep|plane|steep-flow|plane-flow|PATH.tgraph] [--cut B,E[,W]] [--set ID.P=V]...
"""
import array, json, math, os, struct, subprocess, sys, tempfile, zlib

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
    lx, ly, lz = -1.0, -1.0, 1.0  # from the north-west (row 0 is north), 45 degrees up
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
    were not local minima before."""
    k = 0
    for j in range(1, n - 1):
        for i in range(1, n - 1):
            nb = [(y * n + x) for y in (j - 1, j, j + 1) for x in (i - 1, i, i + 1) if x != i or y != j]
            lo = min(ero[q] for q in nb)
            lo_in = min(base[q] for q in nb)
            k += ero[j * n + i] < lo - 0.01 and not base[j * n + i] < lo_in
    return k / (n - 2) ** 2

def grooves(base, ero, n, m=16):
    """RMS second difference of the erosion across the mean fall line over
    the mean depth, 16 cells in from the edges (on a tilted plane)."""
    gx = sum(base[j * n + n - 1] - base[j * n] for j in range(n))
    gy = sum(base[(n - 1) * n + i] - base[i] for i in range(n))
    d = [e - b for e, b in zip(ero, base)]
    s = dep = 0.0
    for j in range(m, n - m):
        for i in range(m, n - m):
            q = j * n + i
            c = d[q - n] + d[q + n] - 2 * d[q] if abs(gx) > abs(gy) else d[q - 1] + d[q + 1] - 2 * d[q]
            s += c * c
            dep += abs(d[q])
    k = (n - 2 * m) ** 2
    return math.sqrt(s / k) / (dep / k) if dep else 0.0

def drainage_area(mask, size_m):
    """Area draining through each cell (m²) from erosion.flow's mask:
    log(1 + A / a) / log(1 + W / a), a the cell area of a 1025 map."""
    a = (size_m / 1024.0) ** 2
    lm = math.log1p(size_m * size_m / a)
    return [a * math.expm1(m * lm) for m in mask]

def channel_share(base, ero, area, n, a_min):
    """Share of the volume eroded that came off cells draining at least
    A_MIN m², over the share of such cells: 1 when erosion ignores the
    drainage, more when it follows the drainage lines."""
    m = 4
    tot = on = 0.0
    cells = lines = 0
    for j in range(m, n - m):
        for i in range(m, n - m):
            q = j * n + i
            d = max(0.0, base[q] - ero[q])
            tot += d
            cells += 1
            if area[q] >= a_min:
                on += d
                lines += 1
    return (on / tot) / (lines / cells) if tot and lines else 0.0, lines / cells

def cross_grooves(base, ero, n, cell, min_slope=0.35):
    """Curtains on any terrain: the RMS second difference of the depth
    eroded across the local fall line of the input (one cell each side,
    bilinear), over the mean depth, on cells steeper than MIN_SLOPE (m/m).
    Parallel grooves down the faces make it large; smooth faces with the
    erosion gathered in broad gullies keep it small."""
    d = [b - e for b, e in zip(base, ero)]

    def at(x, y):
        i, j = int(x), int(y)
        fx, fy = x - i, y - j
        q = j * n + i
        return ((d[q] * (1 - fx) + d[q + 1] * fx) * (1 - fy)
                + (d[q + n] * (1 - fx) + d[q + n + 1] * fx) * fy)

    s = dep = 0.0
    k = 0
    for j in range(2, n - 2):
        for i in range(2, n - 2):
            q = j * n + i
            gx = (base[q + 1] - base[q - 1]) / (2 * cell)
            gy = (base[q + n] - base[q - n]) / (2 * cell)
            g = math.hypot(gx, gy)
            if g < min_slope:
                continue
            tx, ty = -gy / g, gx / g
            c = at(i + tx, j + ty) + at(i - tx, j - ty) - 2 * d[q]
            s += c * c
            dep += abs(d[q])
            k += 1
    return math.sqrt(s / k) / (dep / k) if dep else 0.0

def receivers(hm, n):
    """Each cell's receiver (-1 at the map's edge) by a priority flood
    from the edge: a cell drains to the neighbour the flood reached it
    from, its lowest one outside depressions, so pits and flats drain
    too.  Returns the receivers and the cells in the order flooded
    (every cell after its receiver)."""
    import heapq
    rec = [-2] * (n * n)
    heap = []
    for q in range(n * n):
        j, i = divmod(q, n)
        if i == 0 or j == 0 or i == n - 1 or j == n - 1:
            rec[q] = -1
            heap.append((hm[q], q))
    heapq.heapify(heap)
    order = []
    nb = (-n - 1, -n, -n + 1, -1, 1, n - 1, n, n + 1)
    while heap:
        z, q = heapq.heappop(heap)
        order.append(q)
        j, i = divmod(q, n)
        for o in nb:
            p = q + o
            pj, pi = divmod(p, n) if 0 <= p < n * n else (-9, -9)
            if pj < 0 or abs(pi - i) > 1 or rec[p] != -2:
                continue
            rec[p] = q
            heapq.heappush(heap, (max(hm[p], z), p))
    return rec, order

def faces(base, n, cell, min_slope=0.58):
    """Cells of the input steeper than MIN_SLOPE (m/m, 30 degrees)."""
    out = [False] * (n * n)
    for j in range(1, n - 1):
        for i in range(1, n - 1):
            q = j * n + i
            gx = (base[q + 1] - base[q - 1]) / (2 * cell)
            gy = (base[q + n] - base[q - n]) / (2 * cell)
            out[q] = gx * gx + gy * gy > min_slope * min_slope
    return out

def network(hm, n, cell, a_min, where=None):
    """The channels of a surface: cells whose D8 area (receivers above)
    is at least A_MIN m2.  Returns the confluences (channel cells fed by
    two channels or more) per km of channel, the share of channel heads
    whose water meets another channel's before it leaves the map, and the
    channel length in km.  Parallel grooves (curtains) give channels
    that run side by side to the edge: few confluences, few heads
    joined.  WHERE (cells) limits the counts to channel cells in it
    (heads: heads in it)."""
    rec, order = receivers(hm, n)
    where = where or [True] * (n * n)
    area = [cell * cell] * (n * n)
    for q in reversed(order):
        if rec[q] >= 0:
            area[rec[q]] += area[q]
    donors = [0] * (n * n)
    length = 0.0
    for q in range(n * n):
        if area[q] >= a_min and rec[q] >= 0:
            donors[rec[q]] += 1
            if not where[q]:
                continue
            dj, di = rec[q] // n - q // n, rec[q] % n - q % n
            length += cell * math.hypot(di, dj)
    conf = sum(1 for q in range(n * n) if area[q] >= a_min and donors[q] >= 2 and where[q])
    # Heads per tree of channels: a tree with one head never joined.
    heads_of = {}
    root = [0] * (n * n)
    heads = 0
    for q in order:  # receivers first
        if area[q] < a_min:
            continue
        root[q] = root[rec[q]] if rec[q] >= 0 and area[rec[q]] >= a_min else q
        if donors[q] == 0:
            heads_of.setdefault(root[q], []).append(q)
    heads = sum(1 for v in heads_of.values() for q in v if where[q])
    alone = sum(1 for v in heads_of.values() if len(v) == 1 and where[v[0]])
    km = length / 1000.0
    return (conf / km if km else 0.0, 1.0 - alone / heads if heads else 0.0, km)

def write_png(path, rows, w):
    raw = b"".join(b"\0" + bytes(r) for r in rows)
    def chunk(t, d):
        c = struct.pack(">I", len(d)) + t + d
        return c + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, len(rows), 8, 0, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))

def main():
    tgraph, png, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    which = rest.pop(0) if rest and not rest[0].startswith("-") else "steep"
    cut = None
    if "--cut" in rest:
        k = rest.index("--cut")
        cut = rest[k + 1].split(",")
        del rest[k:k + 2]
    graph = which if which.endswith(".tgraph") else \
        os.path.join(os.path.dirname(os.path.abspath(__file__)), which + ".tgraph")
    doc = json.load(open(graph))
    world = doc["world"]
    n = world["resolution"]
    cell = world["size_m"][0] / (n - 1)
    with tempfile.TemporaryDirectory() as d:
        if cut:
            # --cut BASE,ERODED[,WATER]: export those nodes' heights (and
            # the drainage mask) of any graph, and nothing else.
            doc["nodes"] = [x for x in doc["nodes"] if not x["type"].startswith("export.")]
            ids = {x["id"] for x in doc["nodes"]}
            doc["links"] = [l for l in doc["links"] if l["to"].split(".")[0] in ids]
            for node, name, port in zip(cut, ("base", "eroded", "water"), ("height", "height", "flow")):
                doc["nodes"].append({"id": "out_" + name, "type": "export.heightmap", "params": {
                    "path": name + ".r32", "format": "r32", "rows": "north_first",
                    "units": "normalized" if name == "water" else "metres"}})
                doc["links"].append({"from": node + "." + port, "to": "out_" + name + ".height"})
            graph = os.path.join(d, "cut.tgraph")
            json.dump(doc, open(graph, "w"))
        subprocess.run([tgraph, "eval", graph, "-o", d, "--quiet"] + rest, check=True)
        base, ero = read_r32(os.path.join(d, "base.r32"), n), read_r32(os.path.join(d, "eroded.r32"), n)
        water = os.path.join(d, "water.r32")
        area = None
        if os.path.exists(water):
            area = drainage_area(read_r32(water, n), world["size_m"][0])
    a, b = shade(base, n, cell), shade(ero, n, cell)
    z = n // 2  # close-up: the eroded north-west quarter, each cell 2 x 2 pixels
    # Last panel: the depth eroded, black 0 to white at the 99th percentile
    # (deposits black too): grooves and gullies show on any slope.
    dep = [max(0.0, x - y) for x, y in zip(base, ero)]
    top = sorted(dep)[int(0.99 * (len(dep) - 1))] or 1.0
    c = bytes(min(255, int(255 * v / top)) for v in dep)
    rows = []
    for j in range(n):
        r = bytearray(a[j * n:(j + 1) * n]) + b"\xff" * 8 + bytearray(b[j * n:(j + 1) * n]) + b"\xff" * 8
        zj = j * z // n
        r += bytearray(b[zj * n + i // 2] for i in range(2 * z))
        r += b"\xff" * 8 + c[j * n:(j + 1) * n]
        rows.append(r)
    write_png(png, rows, len(rows[0]))
    vol = sum(max(0.0, b - e) for b, e in zip(base, ero)) * cell * cell
    print("%s: pits %.4f %% of cells, grooves %.3f of the mean depth, eroded %.4g m3"
          % (which, 100 * pits(base, ero, n), grooves(base, ero, n), vol))
    print("  grooves across the local fall line on slopes over 19 degrees: %.3f of the mean depth"
          % cross_grooves(base, ero, n, cell))
    steep = faces(base, n, cell)
    print("  faces (input steeper than 30 degrees): %.1f %% of cells" % (100.0 * sum(steep) / n / n))
    for a_min in (2000.0, 20000.0):
        if a_min > 0.05 * world["size_m"][0] * world["size_m"][1]:
            continue
        for label, where in (("", None), (" on faces", steep)):
            nb = network(base, n, cell, a_min, where)
            ne = network(ero, n, cell, a_min, where)
            print("  channels draining >= %g m2%s: confluences %.2f -> %.2f per km, heads joining "
                  "another %.1f -> %.1f %%, %.1f -> %.1f km" % (a_min, label, nb[0], ne[0], 100 * nb[1],
                                                               100 * ne[1], nb[2], ne[2]))
    if area:
        for a_min in (1000.0, 5000.0):
            c, share = channel_share(base, ero, area, n, a_min)
            print("  erosion on cells draining >= %g m2 (%.1f %% of cells): %.2fx their share"
                  % (a_min, 100 * share, c))

if __name__ == "__main__":
    main()
