#!/usr/bin/python3
"""Clean cases for erosion.thermal's converge mode and measures of how
isotropic and streak-free its talus is (issue 14).

  talus_cases.py TGRAPH OUTDIR RES [key=value ...]

Builds two graphs over a 4096 m world, 850 m high (alpine's), at RES
samples a side: `cone`, a radially symmetric smoothstep spike (up to 58
degrees steep), and `fbm`, an isotropic steep simplex fBm; runs each
through erosion.thermal (alpine's talus params, overridable as
key=value), exports input and output as r32 and prints:

  axis   high-pass (Laplacian) spectral power on the kx / ky axis lines
         over an isotropic spectrum's share (1.0 = no grid direction);
  diag   the same on the two diagonals;
  round  cone only: contour roundness, the spread (max - min) / mean of
         a contour's radius over 720 directions, worst over the contours
         at 20..60 % of the cone's height (an octagon: 1 - cos 22.5 deg,
         0.076);
  d2x    RMS of the 1-cell second difference across the fall line
         (height in metres, bilinear) on the talus faces (slopes within
         talus - 5 .. talus + 3 degrees);
  over   share of samples whose central-difference slope is over
         talus + 2 degrees.
"""
import json, os, subprocess, sys
import numpy as np

SIZE, HM = 4096.0, 850.0


def graph(case, res, tparams):
    if case == "cone":
        src = {"id": "src", "type": "gen.shape",
               "params": {"shape": "radial", "radius_m": 960, "falloff_m": 900}}
    else:
        src = {"id": "src", "type": "noise.fbm",
               "params": {"basis": "simplex", "mode": "fbm", "scale_m": 1400, "octaves": 8,
                          "persistence": 0.55, "seed": 7}}
    t = {"talus_deg": 38, "iterations": 200, "strength": 1, "reference_cell_m": 0,
         "deposit_full_m": 15, "mode": "converge", "tolerance_deg": 1}
    t.update(tparams)
    nodes = [src, {"id": "talus", "type": "erosion.thermal", "params": t}]
    links = [{"from": "src.height", "to": "talus.height"}]
    for n in ("src", "talus"):
        nodes.append({"id": "out_" + n, "type": "export.heightmap",
                      "params": {"path": n + ".r32", "format": "r32", "rows": "north_first",
                                 "units": "metres"}})
        links.append({"from": n + ".height", "to": "out_" + n + ".height"})
    return {"format": "tgraph", "version": 2,
            "world": {"size_m": [SIZE, SIZE], "height_m": HM, "resolution": res, "seed": 3},
            "nodes": nodes, "links": links}


def spectral(h):
    lap = h[1:-1, 2:] + h[1:-1, :-2] + h[2:, 1:-1] + h[:-2, 1:-1] - 4 * h[1:-1, 1:-1]
    n = lap.shape[0]
    w = np.hanning(n)
    P = np.abs(np.fft.fft2((lap - lap.mean()) * np.outer(w, w))) ** 2
    k = np.fft.fftfreq(n) * n
    KX, KY = np.meshgrid(k, k)
    band = np.hypot(KX, KY) > n / 64
    axis = band & ((np.abs(KX) <= 2) | (np.abs(KY) <= 2))
    diag = band & (np.abs(np.abs(KX) - np.abs(KY)) <= 2)
    tot = P[band].sum()
    return (P[axis].sum() / tot) / (axis.sum() / band.sum()), \
           (P[diag].sum() / tot) / (diag.sum() / band.sum())


def bilinear(h, x, y):
    n = h.shape[0]
    x = np.clip(x, 0, n - 1.001)
    y = np.clip(y, 0, n - 1.001)
    i, j = np.floor(x).astype(int), np.floor(y).astype(int)
    fx, fy = x - i, y - j
    return ((1 - fx) * (1 - fy) * h[j, i] + fx * (1 - fy) * h[j, i + 1]
            + (1 - fx) * fy * h[j + 1, i] + fx * fy * h[j + 1, i + 1])


def cross_d2(h, cell, lo_deg, hi_deg):
    """RMS (m) of the 1-cell second difference across the fall line on
    samples whose slope is within [LO_DEG, HI_DEG] (the talus faces)."""
    gy, gx = np.gradient(h, cell)
    s = np.hypot(gx, gy)
    n = h.shape[0]
    J, I = np.mgrid[2:n - 2, 2:n - 2]
    sx, sy, ss = gx[2:-2, 2:-2], gy[2:-2, 2:-2], s[2:-2, 2:-2]
    sel = (ss > np.tan(np.radians(lo_deg))) & (ss < np.tan(np.radians(hi_deg)))
    px, py = -sy[sel] / ss[sel], sx[sel] / ss[sel]
    I, J = I[sel].astype(float), J[sel].astype(float)
    d2 = bilinear(h, I + px, J + py) - 2 * h[J.astype(int), I.astype(int)] + bilinear(h, I - px, J - py)
    return float(np.sqrt(np.mean(d2 * d2))) if d2.size else 0.0


def roundness(h):
    """Worst (max - min) / mean of a contour's radius over 720 directions,
    over contours at 20..60 % of the cone's height."""
    n = h.shape[0]
    c = (n - 1) / 2.0
    ang = np.linspace(0, 2 * np.pi, 720, endpoint=False)
    rr = np.arange(0, c - 2, 0.25)
    prof = bilinear(h, c + np.outer(np.cos(ang), rr), c + np.outer(np.sin(ang), rr))
    top = h.max()
    worst = 0.0
    for lev in np.linspace(0.2 * top, 0.6 * top, 9):
        radii = []
        for a in range(720):
            p = prof[a]
            k = np.where((p[:-1] >= lev) & (p[1:] < lev))[0]
            k = k[0]
            radii.append(rr[k] + (p[k] - lev) / (p[k] - p[k + 1]) * 0.25)
        radii = np.array(radii)
        worst = max(worst, (radii.max() - radii.min()) / radii.mean())
    return worst


def over_share(h, cell, deg):
    gx = (h[1:-1, 2:] - h[1:-1, :-2]) / (2 * cell)
    gy = (h[2:, 1:-1] - h[:-2, 1:-1]) / (2 * cell)
    return float(np.mean(np.hypot(gx, gy) > np.tan(np.radians(deg))))


def main():
    tg, out, res = sys.argv[1], sys.argv[2], int(sys.argv[3])
    tparams = {}
    for kv in sys.argv[4:]:
        k, v = kv.split("=", 1)
        try:
            v = json.loads(v)
        except ValueError:
            pass
        tparams[k] = v
    talus = float(tparams.get("talus_deg", 38))
    cell = SIZE / (res - 1)
    for case in ("cone", "fbm"):
        d = os.path.join(out, case)
        os.makedirs(d, exist_ok=True)
        json.dump(graph(case, res, tparams), open(d + "/case.tgraph", "w"))
        subprocess.run([tg, "eval", d + "/case.tgraph", "-o", d, "-q", "-j", "2"], check=True)
        hs = np.fromfile(d + "/src.r32", "<f4").reshape(res, res).astype(np.float64)
        ht = np.fromfile(d + "/talus.r32", "<f4").reshape(res, res).astype(np.float64)
        a0, g0 = spectral(hs)
        a1, g1 = spectral(ht)
        line = (f"{case} {res}: axis {a0:.2f} -> {a1:.2f}, diag {g0:.2f} -> {g1:.2f}, "
                f"d2x {cross_d2(hs, cell, talus - 5, talus + 3):.4f} -> "
                f"{cross_d2(ht, cell, talus - 5, talus + 3):.4f} m, "
                f"over talus+2 {100 * over_share(hs, cell, talus + 2):.2f} -> "
                f"{100 * over_share(ht, cell, talus + 2):.3f} %, "
                f"volume {hs.sum():.6e} -> {ht.sum():.6e}")
        if case == "cone":
            line += f", round {roundness(hs):.4f} -> {roundness(ht):.4f}"
        print(line, flush=True)


main()
