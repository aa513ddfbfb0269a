#!/usr/bin/python3
"""Volume eroded and droplet pits of erosion.hydraulic on any graph, at any
resolution, fast enough for alpine at 2049 or 4097 samples (numpy; the
same definitions as hillshade.py and test_erosion_hydraulic.c).

Evaluates GRAPH with tgraph (all its exports kept, so the output folder
also serves tools/render_terrain.py), plus the heights of BASE and ERODED
(default: alpine's talus and rain) as r32 metres, and prints:
  eroded  m3 taken away (sum of max(0, base - eroded) x cell area)
  deposit m3 laid down
  pits    share of interior cells more than 1 cm below all 8 neighbours
          that were not local minima before
  pits on faces  the same, among cells whose input is steeper than 30 deg

    /usr/bin/python3 tools/droplets/measure.py build/app/cli/tgraph GRAPH OUTDIR \
        [-r RES] [--cut BASE,ERODED] [--only] [--set ID.P=V]... [-j N]

--only drops the graph's own exports (measure without the render files).
"""
import json, os, subprocess, sys, time

import numpy as np


def pits(base, ero):
    """Boolean map (interior cells) of the pits erosion left."""
    n0, n1 = base.shape
    lo = np.full((n0 - 2, n1 - 2), np.inf, dtype=np.float32)
    lo_in = lo.copy()
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            if dx or dy:
                lo = np.minimum(lo, ero[1 + dy:n0 - 1 + dy, 1 + dx:n1 - 1 + dx])
                lo_in = np.minimum(lo_in, base[1 + dy:n0 - 1 + dy, 1 + dx:n1 - 1 + dx])
    c, c_in = ero[1:-1, 1:-1], base[1:-1, 1:-1]
    return (c < lo - 0.01) & ~(c_in < lo_in)


def main():
    args = sys.argv[1:]
    tgraph, graph, out = args[0], args[1], args[2]
    rest = args[3:]
    cut = ["talus", "rain"]
    only = False
    if "--cut" in rest:
        k = rest.index("--cut")
        cut = rest[k + 1].split(",")
        del rest[k:k + 2]
    if "--only" in rest:
        rest.remove("--only")
        only = True
    doc = json.load(open(graph))
    res = doc["world"]["resolution"]
    for flag in ("-r", "--resolution"):
        if flag in rest:
            res = int(rest[rest.index(flag) + 1])
    if only:
        doc["nodes"] = [x for x in doc["nodes"] if not x["type"].startswith("export.")]
        ids = {x["id"] for x in doc["nodes"]}
        doc["links"] = [l for l in doc["links"] if l["to"].split(".")[0] in ids]
    for node, name in zip(cut, ("m_base", "m_eroded")):
        doc["nodes"].append({"id": "out_" + name, "type": "export.heightmap", "params": {
            "path": name + ".r32", "format": "r32", "rows": "north_first", "units": "metres"}})
        doc["links"].append({"from": node + ".height", "to": "out_" + name + ".height"})
    os.makedirs(out, exist_ok=True)
    g = os.path.join(out, "measured.tgraph")
    json.dump(doc, open(g, "w"), indent=1)
    t0 = time.time()
    r0 = os.times()
    log = subprocess.run([tgraph, "eval", g, "-o", out] + rest, check=True,
                         capture_output=True, text=True).stderr
    r1 = os.times()
    wall = time.time() - t0
    for line in log.splitlines():
        if cut[1] + ":" in line or line.strip().startswith(cut[1] + " "):
            print("  " + line.strip())
    cpu = (r1.children_user - r0.children_user) + (r1.children_system - r0.children_system)
    base = np.fromfile(os.path.join(out, "m_base.r32"), dtype="<f4").reshape(res, res)
    ero = np.fromfile(os.path.join(out, "m_eroded.r32"), dtype="<f4").reshape(res, res)
    cell = doc["world"]["size_m"][0] / (res - 1)
    d = base.astype(np.float64) - ero
    gy, gx = np.gradient(base.astype(np.float64), cell)
    face = (gx * gx + gy * gy > 0.58 ** 2)[1:-1, 1:-1]
    p = pits(base, ero)
    print("%s at %d: eroded %.4g m3, deposit %.4g m3, pits %.4f %% of cells (%d), "
          "on faces > 30 deg %.4f %% (faces %.1f %% of cells); eval %.1f s wall, %.1f s CPU"
          % (os.path.basename(graph), res, np.maximum(d, 0).sum() * cell * cell,
             np.maximum(-d, 0).sum() * cell * cell, 100.0 * p.mean(), p.sum(),
             100.0 * p[face].mean() if face.any() else 0.0, 100.0 * face.mean(), wall, cpu))


if __name__ == "__main__":
    main()
