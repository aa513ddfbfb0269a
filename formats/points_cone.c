/* The marker cone every instance-list writer that draws meshes (glb,
 * godot) shows for a prototype without a mesh of its own, built once
 * here so both formats show the same shape with the same origin.  See
 * points-writers.h.
 */
#include <math.h>

#include "points-writers.h"

#define CONE_RADIUS 0.25
#define CONE_HEIGHT 1.0

static void
normalize3 (double v[3])
{
  double l = sqrt (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);

  for (int c = 0; c < 3; c++)
    v[c] /= l;
}

void
tg__points_cone_init (TgPointsCone *k)
{
  int v = 0, n = 0;
  uint32_t centre;

  /* Sides, one flat-shaded triangle each, counter-clockwise seen from outside. */
  for (int s = 0; s < TG_POINTS_CONE_SEGMENTS; s++)
    {
      double a0 = 2.0 * M_PI * s / TG_POINTS_CONE_SEGMENTS;
      double a1 = 2.0 * M_PI * (s + 1) / TG_POINTS_CONE_SEGMENTS;
      double p[3][3] = { { CONE_RADIUS * cos (a0), 0.0, -CONE_RADIUS * sin (a0) },
                         { CONE_RADIUS * cos (a1), 0.0, -CONE_RADIUS * sin (a1) },
                         { 0.0, CONE_HEIGHT, 0.0 } };
      double e1[3], e2[3], nrm[3];
      for (int c = 0; c < 3; c++)
        {
          e1[c] = p[1][c] - p[0][c];
          e2[c] = p[2][c] - p[0][c];
        }
      nrm[0] = e1[1] * e2[2] - e1[2] * e2[1];
      nrm[1] = e1[2] * e2[0] - e1[0] * e2[2];
      nrm[2] = e1[0] * e2[1] - e1[1] * e2[0];
      normalize3 (nrm);
      for (int q = 0; q < 3; q++)
        {
          for (int c = 0; c < 3; c++)
            {
              k->pos[3 * v + c] = (float) p[q][c];
              k->nrm[3 * v + c] = (float) nrm[c];
            }
          k->idx[n++] = (uint32_t) v++;
        }
    }
  /* The base, a fan around its centre at the origin, faces down. */
  centre = (uint32_t) v;
  k->pos[3 * v] = k->pos[3 * v + 1] = k->pos[3 * v + 2] = 0.0f;
  k->nrm[3 * v] = k->nrm[3 * v + 2] = 0.0f;
  k->nrm[3 * v + 1] = -1.0f;
  v++;
  for (int s = 0; s < TG_POINTS_CONE_SEGMENTS; s++)
    {
      double a = 2.0 * M_PI * s / TG_POINTS_CONE_SEGMENTS;
      k->pos[3 * v] = (float) (CONE_RADIUS * cos (a));
      k->pos[3 * v + 1] = 0.0f;
      k->pos[3 * v + 2] = (float) (-CONE_RADIUS * sin (a));
      k->nrm[3 * v] = k->nrm[3 * v + 2] = 0.0f;
      k->nrm[3 * v + 1] = -1.0f;
      v++;
    }
  for (int s = 0; s < TG_POINTS_CONE_SEGMENTS; s++)
    {
      k->idx[n++] = centre;
      k->idx[n++] = centre + 1 + (uint32_t) ((s + 1) % TG_POINTS_CONE_SEGMENTS);
      k->idx[n++] = centre + 1 + (uint32_t) s;
    }
  k->chunk = (TgMeshChunk) { .n_vertices = TG_POINTS_CONE_VERTICES, .positions = k->pos,
                             .normals = k->nrm, .n_indices = TG_POINTS_CONE_INDICES,
                             .indices = k->idx };
  k->mesh = (TgMesh) { .n_chunks = 1, .chunks = &k->chunk };
}
