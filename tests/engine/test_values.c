/* Values that are not grids (meshes, instance lists, fields) and what a
 * grid carries besides its samples (an image's source pixels). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "tgtest.h"

#if defined(__SANITIZE_ADDRESS__)
/* From libasan (sanitizer/allocator_interface.h, which gcc does not
 * ship on every system). */
size_t __sanitizer_get_current_allocated_bytes (void);
#endif

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
/* Minor page faults of taking a 2048² grid, freeing it and taking
 * another, the second's counted; in an evaluation when EVAL. */
static const TgRegion grid_2048 = { .cell = 1, .full_w = 2048, .full_h = 2048, .width = 2048,
                                    .height = 2048 };
static long regrid_faults = -1;

static long
regrid (void)
{
  size_t bytes = (size_t) 2048 * 2048 * sizeof (float);
  TgValue *v = tg_value_new_grid (TG_TYPE_MASK, &grid_2048, 1);
  struct rusage before, after;

  if (v == NULL)
    return -1;
  memset (v->data, 1, bytes);
  tg_value_unref (v);
  getrusage (RUSAGE_SELF, &before);
  v = tg_value_new_grid (TG_TYPE_MASK, &grid_2048, 1);
  if (v == NULL)
    return -1;
  memset (v->data, 2, bytes);
  getrusage (RUSAGE_SELF, &after);
  tg_value_unref (v);
  return after.ru_minflt - before.ru_minflt;
}

static int
regrid_eval (TgEvalCtx *c)
{
  TgValue *out = tg_eval_new_output (c, 0, 1);

  regrid_faults = regrid ();
  if (out == NULL)
    return TG_ENOMEM;
  memset (out->data, 0, sizeof (float) * (size_t) out->region.width * (size_t) out->region.height);
  return 0;
}

static const TgPortDesc regrid_out[] = { { "height", TG_TYPE_HEIGHT, "Height", false, NULL } };
static const TgNodeDesc test_regrid = {
  .type = "test.regrid", .category = TG_CATEGORY_OTHER, .label = "Regrid",
  .outputs = regrid_out, .n_outputs = 1, .locality = TG_LOCALITY_LOCAL, .eval = regrid_eval,
};
TG_NODE_REGISTER (test_regrid);

/* In a node's run, a freed grid serves the next grid of its size: the
 * second grid's pages are not faulted in again (4096 of them). */
static void
test_freed_grid_buffer_is_reused (void)
{
  TgGraph *g = tg_graph_new ();
  TgEngine *e = tg_engine_new (NULL);
  TgError err = { 0 };
  TgValue *v = NULL;
  TgRegion r;

  tg_graph_world (g)->resolution = 33;
  TG_CHECK (tg_graph_add_node (g, "n", "test.regrid", &err) == 0);
  tg_region_for_world (&r, tg_graph_world (g), 33);
  regrid_faults = -1;
  TG_CHECK_MSG (tg_engine_pull (e, g, 0, 0, &r, NULL, &v, NULL, &err) == 0, "%s", err.message);
  TG_CHECK_MSG (regrid_faults >= 0 && regrid_faults < 256, "%ld faults", regrid_faults);
  tg_value_unref (v);
  tg_engine_free (e);
  tg_graph_free (g);
}

#if !defined(__SANITIZE_ADDRESS__)
static long
resident_pages (void)
{
  long size = 0, resident = -1;
  FILE *f = fopen ("/proc/self/statm", "r");

  if (f && fscanf (f, "%ld %ld", &size, &resident) != 2)
    resident = -1;
  if (f)
    fclose (f);
  return resident;
}
#endif

/* A grid freed while no evaluation runs (the app dropping results,
 * then idle) goes back to the system: it is not kept for a next grid.
 * AddressSanitizer's allocator holds freed blocks in its quarantine
 * instead of unmapping them, so there the test asks it how many bytes
 * are still allocated; elsewhere it counts resident pages. */
static void
test_idle_grid_buffer_is_freed (void)
{
  size_t bytes = (size_t) 2048 * 2048 * sizeof (float);
  TgValue *v;
  long held, after;

  v = tg_value_new_grid (TG_TYPE_MASK, &grid_2048, 1);
  TG_CHECK (v != NULL);
  if (v == NULL)
    return;
  memset (v->data, 1, bytes);
#if defined(__SANITIZE_ADDRESS__)
  held = (long) __sanitizer_get_current_allocated_bytes ();
  tg_value_unref (v);
  after = (long) __sanitizer_get_current_allocated_bytes ();
  TG_CHECK_MSG (held - after >= (long) bytes, "%ld bytes allocated before the free, %ld after",
                held, after);
#else
  held = resident_pages ();
  tg_value_unref (v);
  after = resident_pages ();
  if (held < 0)
    {
      printf ("  skipped: no /proc/self/statm\n");
      return;
    }
  /* 4096 pages of 4 KiB came back (or 8 of 2 MiB). */
  TG_CHECK_MSG (held - after >= 4000 || (held - after) * 4096 >= (long) bytes / 2,
                "%ld resident pages before the free, %ld after", held, after);
#endif
}

int
main (void)
{
  /* Grids in pages of their own: with its default, glibc serves a large
   * block from its heap after a first large free and keeps it there,
   * which test_idle_grid_buffer_is_freed would take for the pool. */
  mallopt (M_MMAP_THRESHOLD, 1 << 20);
  TG_RUN (test_mesh_value_owns_chunks);
  TG_RUN (test_points_grow_in_order);
  TG_RUN (test_field_batches);
  TG_RUN (test_image_pixels_ride_along_crops);
  TG_RUN (test_freed_grid_buffer_is_reused);
  TG_RUN (test_idle_grid_buffer_is_freed);
  return tgtest_result ();
}
