/* Values that are not grids (meshes, instance lists, fields) and what a
 * grid carries besides its samples (an image's source pixels). */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "tgtest.h"

#include <tgraph/tgraph.h>

static void
test_mesh_value_owns_chunks (void)
{
  TgMesh *m = tg_mesh_new (2);
  TgValue *v;
  TG_CHECK (m != NULL);
  TG_CHECK_INT_EQ (tg_mesh_chunk_alloc (&m->chunks[0], 3, 3, 1), 0);
  TG_CHECK_INT_EQ (tg_mesh_chunk_alloc (&m->chunks[1], 4, 6, 0), 0);
  TG_CHECK_INT_EQ (tg_mesh_chunk_set_name (&m->chunks[0], "chunk_0_0_lod0"), 0);
  TG_CHECK (m->chunks[1].uvs == NULL);
  v = tg_value_new_mesh (m);
  TG_CHECK (tg_value_mesh (v) == m);
  TG_CHECK (tg_value_points (v) == NULL);
  TG_CHECK (tg_value_bytes (v) >= (3 + 4) * 8 * sizeof (float) + 9 * sizeof (uint32_t));
  tg_value_unref (v);
}

static void
test_points_grow_in_order (void)
{
  TgPoints *p = tg_points_new ();
  float rot[4] = { 0, 0, 0, 1 }, s[3] = { 1, 1, 1 };
  TgValue *v;
  TG_CHECK_INT_EQ (tg_points_add_proto (p, "tree"), 0);
  TG_CHECK_INT_EQ (tg_points_add_proto (p, "rock"), 1);
  for (int i = 0; i < 1000; i++)
    {
      float pos[3] = { (float) i, 0, (float) -i };
      TG_CHECK (tg_points_push (p, pos, rot, s, i % 2) == 0);
    }
  TG_CHECK_INT_EQ (p->n, 1000);
  TG_CHECK (p->position[3 * 999] == 999.0f && p->position[3 * 999 + 2] == -999.0f);
  TG_CHECK_INT_EQ (p->proto[998], 0);
  v = tg_value_new_points (p);
  TG_CHECK (tg_value_points (v) == p);
  tg_value_unref (v);
}

static void
sphere_eval (const TgField *f, int n, const float *x, const float *y, const float *z, float *out)
{
  const float *r = f->data;
  TG_CHECK (n <= TG_FIELD_BATCH_MAX);
  for (int i = 0; i < n; i++)
    out[i] = sqrtf (x[i] * x[i] + y[i] * y[i] + z[i] * z[i]) - *r;
}

static void
test_field_batches (void)
{
  TgField *f = calloc (1, sizeof *f);
  float *r = malloc (sizeof *r);
  size_t n = 3 * TG_FIELD_BATCH_MAX + 17;
  float *x = calloc (n, sizeof (float)), *y = calloc (n, sizeof (float)),
        *z = calloc (n, sizeof (float)), *out = calloc (n, sizeof (float));
  TgValue *v;
  *r = 2.0f;
  f->eval = sphere_eval;
  f->data = r;
  f->free_data = free;
  f->lipschitz = 1.0f;
  for (size_t i = 0; i < n; i++)
    x[i] = (float) i * 0.001f;
  v = tg_value_new_field (f);
  tg_field_eval (tg_value_field (v), n, x, y, z, out);
  TG_CHECK_NEAR (out[0], -2.0, 1e-6);
  TG_CHECK_NEAR (out[n - 1], x[n - 1] - 2.0, 1e-5);
  tg_value_unref (v);
  free (x);
  free (y);
  free (z);
  free (out);
}

static void
test_image_pixels_ride_along_crops (void)
{
  TgRegion r = { .origin_x = -8, .origin_z = 8, .cell = 4, .full_w = 5, .full_h = 5,
                 .width = 5, .height = 5 };
  TgRegion win = tg_region_window (&r, 1, 2, 3, 2);
  TgValue *v = tg_value_new_grid (TG_TYPE_IMAGE, &r, 4), *w;
  float *rgba = calloc (3 * 2 * 4, sizeof (float));
  size_t plain;

  TG_CHECK (v != NULL && rgba != NULL);
  TG_CHECK (tg_value_pixels (v) == NULL);
  plain = tg_value_bytes (v);
  rgba[4] = 0.5f; /* pixel (1, 0) red */
  TG_CHECK_INT_EQ (tg_value_attach_pixels (v, 3, 2, rgba), 0);
  TG_CHECK (tg_value_pixels (v) != NULL && tg_value_pixels (v)->rgba == rgba);
  TG_CHECK_INT_EQ (tg_value_pixels (v)->width, 3);
  TG_CHECK_INT_EQ (tg_value_pixels (v)->height, 2);
  TG_CHECK (tg_value_bytes (v) >= plain + 3 * 2 * 4 * sizeof (float));
  /* A window shares the pixels and keeps them after the original goes. */
  w = tg_value_crop (v, &win);
  tg_value_unref (v);
  TG_CHECK (w != NULL && tg_value_pixels (w) != NULL);
  if (w && tg_value_pixels (w))
    TG_CHECK (tg_value_pixels (w)->rgba[4] == 0.5f);
  tg_value_unref (w);
}

/* A grid's buffer, freed, serves the next grid of its size (value.c's
 * pool): writing it all again costs no page faults, where a fresh 16 MB
 * buffer faults in its 4096 pages one by one. */
static void
test_freed_grid_buffer_is_reused (void)
{
  TgRegion r = { .cell = 1, .full_w = 2048, .full_h = 2048, .width = 2048, .height = 2048 };
  size_t bytes = (size_t) 2048 * 2048 * sizeof (float);
  TgValue *v = tg_value_new_grid (TG_TYPE_MASK, &r, 1);
  struct rusage before, after;

  TG_CHECK (v != NULL);
  if (v == NULL)
    return;
  memset (v->data, 1, bytes);
  tg_value_unref (v);
  getrusage (RUSAGE_SELF, &before);
  v = tg_value_new_grid (TG_TYPE_MASK, &r, 1);
  TG_CHECK (v != NULL);
  if (v)
    memset (v->data, 2, bytes);
  getrusage (RUSAGE_SELF, &after);
  TG_CHECK (after.ru_minflt - before.ru_minflt < 256);
  tg_value_unref (v);
}

int
main (void)
{
  TG_RUN (test_mesh_value_owns_chunks);
  TG_RUN (test_points_grow_in_order);
  TG_RUN (test_field_batches);
  TG_RUN (test_image_pixels_ride_along_crops);
  TG_RUN (test_freed_grid_buffer_is_reused);
  return tgtest_result ();
}
