#!/bin/bash
# Marching cubes against VTK's Flying Edges on the same dense values, in
# one run: bench_isosurface samples a sphere's distance and a 3D fBm on a
# 257^3 grid, meshes them with mesh.isosurface (welded, normals) and
# writes the grids; vtk_flying_edges.py meshes the same grids with normals.
# Ratios in CPU time (and wall time, which a busy machine inflates), one
# thread each, twice: the whole job, where the node also samples the field
# (VTK is handed the values), and the node's mesher on the same dense
# values through the volume view field.slices uses (read in place).
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
  read -r node node_wall dense dense_wall < <(awk -v c=$case '$1 == "RESULT" && $2 == c {
    print $4, $10, $8, $12 }' "$tmp/bench")
  "$PY" "$here/vtk_flying_edges.py" "$tmp/$name.f32" 3 | tee "$tmp/vtk"
  read -r vtk vtk_wall < <(awk '$1 == "RESULT" { print $3, $7 }' "$tmp/vtk")
  awk -v n="$node" -v nw="$node_wall" -v d="$dense" -v dw="$dense_wall" -v v="$vtk" \
      -v vw="$vtk_wall" -v c="$name" 'BEGIN {
    printf "%s, whole job (samples the field): mesh.isosurface %.1f ms CPU (%.1f wall), " \
      "VTK Flying Edges %.1f ms CPU (%.1f wall): %.2fx CPU, %.2fx wall\n",
      c, n * 1e3, nw * 1e3, v * 1e3, vw * 1e3, v / n, vw / nw
    printf "%s, same dense values: mesh.isosurface %.1f ms CPU (%.1f wall), " \
      "VTK Flying Edges %.1f ms CPU (%.1f wall): %.2fx CPU, %.2fx wall\n\n",
      c, d * 1e3, dw * 1e3, v * 1e3, vw * 1e3, v / d, vw / dw }'
done
