#!/usr/bin/env python3
"""Compares two 3D view frames of the same size (PNGs from `screenshot3d`)
inside a region: the fraction of pixels that changed (grey level or any
channel by more than 12), that got darker, and that got bluer (blue
minus red up by more than 12).  Bounds turn it into a check.

Usage: gl_compare.py A B [--region FX0,FY0,FX1,FY1] [--min-changed F]
       [--max-changed F] [--min-darker F] [--max-brighter F] [--min-bluer F]
Exit 1 when a bound fails."""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gl_stats import read_png

args = sys.argv[1:]
a_path, b_path = args.pop(0), args.pop(0)
region = (0.0, 0.0, 1.0, 1.0)
bounds = {}
while args:
    k = args.pop(0)
    v = args.pop(0)
    if k == '--region':
        region = tuple(float(x) for x in v.split(','))
    else:
        bounds[k] = float(v)
wa, ha, cha, ra = read_png(a_path)
wb, hb, chb, rb = read_png(b_path)
assert (wa, ha) == (wb, hb), 'frames differ in size'
x0, y0 = int(region[0] * wa), int(region[1] * ha)
x1, y1 = int(region[2] * wa), int(region[3] * ha)
n = changed = darker = brighter = bluer = 0
for y in range(y0, y1):
    for x in range(x0, x1):
        p = ra[y][x * cha:x * cha + 3]
        q = rb[y][x * chb:x * chb + 3]
        ga, gb = sum(p) / 3, sum(q) / 3
        n += 1
        if max(abs(p[k] - q[k]) for k in range(3)) > 12:
            changed += 1
        if gb < ga - 12:
            darker += 1
        if gb > ga + 12:
            brighter += 1
        if (q[2] - q[0]) > (p[2] - p[0]) + 12:
            bluer += 1
n = max(n, 1)
print(f'{os.path.basename(a_path)} -> {os.path.basename(b_path)} in {region}: changed '
      f'{changed / n:.3f}, darker {darker / n:.3f}, brighter {brighter / n:.3f}, '
      f'bluer {bluer / n:.3f}')
ok = True
for k, frac in (('--min-changed', changed), ('--min-darker', darker), ('--min-bluer', bluer)):
    if k in bounds and frac / n < bounds[k]:
        ok = False
for k, frac in (('--max-changed', changed), ('--max-brighter', brighter)):
    if k in bounds and frac / n > bounds[k]:
        ok = False
sys.exit(0 if ok else 1)
