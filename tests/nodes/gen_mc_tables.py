#!/usr/bin/env python3
# Generates engine/nodes/mc_tables.h, a consistent marching-cubes triangle
# table: on an ambiguous face the positive (outside) corners are always
# kept apart, so two cells sharing a face agree on its segments and a
# closed surface is watertight.  Usage: gen_mc_tables.py OUT.h
# (test_mc_tables checks that the header in the tree is this output).
import sys
corner = [((c>>0)&1, (c>>1)&1, (c>>2)&1) for c in range(8)]
edges = []
for axis in range(3):
    for c in range(8):
        if (c >> axis) & 1 == 0:
            edges.append((c, c | (1 << axis), axis))
# edge order: axis-major then corner order -> 0..3 x, 4..7 y, 8..11 z
edge_of = {}
for e,(a,b,ax) in enumerate(edges):
    edge_of[(a,b)] = e; edge_of[(b,a)] = e
def sub(a,b): return tuple(x-y for x,y in zip(a,b))
def cross(u,v): return (u[1]*v[2]-u[2]*v[1], u[2]*v[0]-u[0]*v[2], u[0]*v[1]-u[1]*v[0])
def dot(u,v): return sum(x*y for x,y in zip(u,v))
def mid(e):
    a,b,_ = edges[e]
    return tuple((x+y)/2 for x,y in zip(corner[a],corner[b]))
# faces: axis, side -> 4 corners in cyclic order
faces = []
for axis in range(3):
    for side in (0,1):
        cs = [c for c in range(8) if ((c>>axis)&1) == side]
        # cyclic order on the face
        o = [a for a in range(3) if a != axis]
        def key(c):
            u = (c>>o[0])&1; v=(c>>o[1])&1
            return [(0,0),(1,0),(1,1),(0,1)].index((u,v))
        cs.sort(key=key)
        n = [0,0,0]; n[axis] = 1 if side else -1
        faces.append((cs, tuple(n)))
tables = []
def efaces(e):
    a, b, _ = edges[e]
    return set(fi for fi, (cs, nf) in enumerate(faces) if a in cs and b in cs)
maxtri = 0
for case in range(256):
    pos = [not ((case >> c) & 1) for c in range(8)]   # bit set = inside
    segs = []
    for cs, nf in faces:
        p = [pos[c] for c in cs]
        if all(p) or not any(p): continue
        # runs of consecutive positive corners (cyclic)
        start = next(i for i in range(4) if p[i] and not p[(i-1)%4])
        i = start
        seen = 0
        while seen < 4:
            if p[i%4] and not p[(i-1)%4]:
                j = i
                run = []
                while p[j%4]:
                    run.append(cs[j%4]); j += 1
                e_in = edge_of[(cs[(i-1)%4], cs[i%4])]
                e_out = edge_of[(cs[(j-1)%4], cs[j%4])]
                # orient so that (d x pdir) . nf > 0
                m0, m1 = mid(e_in), mid(e_out)
                d = sub(m1, m0)
                cen = tuple(sum(corner[c][k] for c in run)/len(run) for k in range(3))
                mm = tuple((x+y)/2 for x,y in zip(m0,m1))
                pd = sub(cen, mm)
                s = dot(cross(d,pd), nf)
                assert s != 0
                segs.append((e_in, e_out) if s > 0 else (e_out, e_in))
            i += 1; seen += 1
    nxt = {}
    for a,b in segs:
        assert a not in nxt, (case, segs)
        nxt[a] = b
    tris = []
    used = set()
    for a in sorted(nxt):
        if a in used: continue
        cyc = [a]; used.add(a); x = nxt[a]
        while x != a:
            cyc.append(x); used.add(x); x = nxt[x]
        # fan from the first vertex (from the smallest edge on) none of
        # whose diagonals joins two edges of one cube face: such a diagonal
        # could be made by the neighbour across that face too
        n = len(cyc)
        for s0 in range(n):
            if all(not (efaces(cyc[s0]) & efaces(cyc[(s0 + k) % n])) for k in range(2, n - 1)):
                break
        else:
            raise SystemExit('no fan for case %d' % case)
        cyc = cyc[s0:] + cyc[:s0]
        for k in range(1, len(cyc)-1):
            tris.append((cyc[0], cyc[k], cyc[k+1]))
    maxtri = max(maxtri, len(tris))
    tables.append(tris)
out = open(sys.argv[1], 'w')
out.write('''/* Marching-cubes tables (internal to engine/nodes/mesh_isosurface.c).
 *
 * Corner c of a cell sits at (c & 1, (c >> 1) & 1, (c >> 2) & 1) in
 * (x, y, z); bit c of the case index is set when corner c is inside
 * (f < iso).  Edges 0-3 run along x from corners 0, 2, 4, 6; edges 4-7
 * along y from corners 0, 1, 4, 5; edges 8-11 along z from corners 0-3.
 *
 * Not the Lorensen/Bourke table, which resolves an ambiguous face one way
 * in a case and the other way in its complement, and so leaves holes
 * between cells.  Here every face is resolved by one rule, "outside
 * corners on a face diagonal stay apart", which both cells sharing the
 * face apply identically, so the segments on a face always match and a
 * closed surface is watertight.  Each case's polygons are the cycles of
 * its face segments, oriented counter-clockwise seen from outside
 * (right-handed, normal toward f > iso), and fanned from the first vertex
 * (from the lowest edge on) none of whose diagonals joins two edges of
 * one cube face: the neighbour across that face could make the same
 * diagonal, and its edge would then belong to four triangles.
 * Written by tests/nodes/gen_mc_tables.py; test_isosurface checks the
 * properties on random volumes that contain all 256 cases.
 */
#ifndef TG_MC_TABLES_H
#define TG_MC_TABLES_H

#include <stdint.h>

#define TG__MC_MAX_TRIS %d

/* Number of triangles per case. */
static const uint8_t tg__mc_ntri[256] = {
''' % maxtri)
for r in range(0,256,16):
    out.write('  ' + ', '.join('%d' % len(tables[c]) for c in range(r, r+16)) + ',\n')
out.write('};\n\n/* Edges of each triangle, 3 per triangle. */\nstatic const int8_t tg__mc_tris[256][3 * TG__MC_MAX_TRIS] = {\n')
for c in range(256):
    flat = [e for t in tables[c] for e in t]
    out.write('  { ' + ', '.join(str(e) for e in flat) + ' },\n' if flat else '  { 0 },\n')
out.write('};\n\n#endif\n')
