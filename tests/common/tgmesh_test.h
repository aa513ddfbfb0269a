/* Geometry for the mesh tests: whether a ray crosses a triangle (the
 * iso-surface's watertightness and skirt tests shoot rays out of solids). */
#ifndef TGMESH_TEST_H
#define TGMESH_TEST_H

#include <math.h>
#include <stdbool.h>

/* Whether the ray from O along D hits triangle A B C (its edges count). */
static inline bool
tgtest_ray_hits (const double o[3], const double d[3], const float *a, const float *b, const float *c)
{
  double e1[3], e2[3], p[3], q[3], s[3], det, u, v, t;

  for (int k = 0; k < 3; k++)
    {
      e1[k] = (double) b[k] - a[k];
      e2[k] = (double) c[k] - a[k];
      s[k] = o[k] - a[k];
    }
  p[0] = d[1] * e2[2] - d[2] * e2[1];
  p[1] = d[2] * e2[0] - d[0] * e2[2];
  p[2] = d[0] * e2[1] - d[1] * e2[0];
  det = e1[0] * p[0] + e1[1] * p[1] + e1[2] * p[2];
  if (fabs (det) < 1e-18)
    return false;
  u = (s[0] * p[0] + s[1] * p[1] + s[2] * p[2]) / det;
  q[0] = s[1] * e1[2] - s[2] * e1[1];
  q[1] = s[2] * e1[0] - s[0] * e1[2];
  q[2] = s[0] * e1[1] - s[1] * e1[0];
  v = (d[0] * q[0] + d[1] * q[1] + d[2] * q[2]) / det;
  t = (e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]) / det;
  return u >= -1e-9 && v >= -1e-9 && u + v <= 1.0 + 1e-9 && t > 0.0;
}

#endif
