#!/bin/bash
# Marching cubes against VTK's Flying Edges on the same dense values, in
# one run: bench_isosurface samples a sphere's distance and a 3D fBm on a
# 257^3 grid, meshes them with mesh.isosurface (welded, normals) and
# writes the grids; vtk_flying_edges.py meshes the same grids with normals.
# Ratios in CPU time, one thread each.  Note the node also samples the
# field itself (VTK is handed the values).
# Usage: peers_isosurface.sh BENCH_ISOSURFACE
set -u
bench=$1
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Debian's python3-vtk9 is for the system Python, not one from pyenv.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
if ! "$PY" -c 'import vtk, numpy' 2> /dev/null; then
  echo "VTK: skipped (no python3-vtk9: apt-get install python3-vtk9 python3-numpy)"
  exit 0
fi
"$bench" 3 both "$tmp" | tee "$tmp/bench"
for case in s n; do
  name=$([ $case = s ] && echo sphere || echo fbm)
  node=$(awk -v c=$case '$1 == "RESULT" && $2 == c { print $4 }' "$tmp/bench")
  "$PY" "$here/vtk_flying_edges.py" "$tmp/$name.f32" 3 | tee "$tmp/vtk"
  vtk=$(awk '$1 == "RESULT" { print $3 }' "$tmp/vtk")
  awk -v n="$node" -v v="$vtk" -v c="$name" 'BEGIN {
    printf "%s: mesh.isosurface %.1f ms CPU, VTK Flying Edges %.1f ms CPU: %.2fx\n\n",
      c, n * 1e3, v * 1e3, v / n }'
done
