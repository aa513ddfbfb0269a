#!/usr/bin/env python3
"""Peer benchmark: VTK's Flying Edges (vtkFlyingEdges3D, with normals) on
the same dense 257^3 grid bench_isosurface sampled (x fastest, host
floats), one thread.  Prints CPU and wall time of the best of a few runs
and a RESULT line peers_isosurface.sh reads.
Usage: vtk_flying_edges.py GRID.f32 [runs]"""
import sys
import time

import numpy as np
import vtk
from vtk.util import numpy_support

path = sys.argv[1]
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
n1 = 257
values = np.fromfile(path, dtype=np.float32)
assert values.size == n1 ** 3, f"{path}: {values.size} floats, expected {n1 ** 3}"

try:
    vtk.vtkSMPTools.SetBackend("Sequential")
except AttributeError:
    pass
vtk.vtkSMPTools.Initialize(1)

image = vtk.vtkImageData()
image.SetDimensions(n1, n1, n1)
image.SetOrigin(-128.0, -128.0, -128.0)
image.SetSpacing(1.0, 1.0, 1.0)
array = numpy_support.numpy_to_vtk(values, deep=True, array_type=vtk.VTK_FLOAT)
array.SetName("f")
image.GetPointData().SetScalars(array)

best_cpu, best_wall, triangles = 1e30, 0.0, 0
for _ in range(runs):
    fe = vtk.vtkFlyingEdges3D()
    fe.SetInputData(image)
    fe.SetValue(0, 0.0)
    fe.ComputeNormalsOn()
    fe.ComputeGradientsOff()
    fe.ComputeScalarsOff()
    c0, w0 = time.process_time(), time.perf_counter()
    fe.Update()
    c, w = time.process_time() - c0, time.perf_counter() - w0
    if c < best_cpu:
        best_cpu, best_wall = c, w
        triangles = fe.GetOutput().GetNumberOfCells()
cells = 256 ** 3
print(f"VTK {vtk.vtkVersion.GetVTKVersion()} vtkFlyingEdges3D (normals), 1 thread: "
      f"wall {best_wall * 1e3:.1f} ms, CPU {best_cpu * 1e3:.1f} ms, "
      f"{cells / best_cpu * 1e-6:.1f} M cells/CPU s, {triangles} triangles")
print(f"RESULT vtk {best_cpu:.6f} triangles {triangles} wall {best_wall:.6f}")
