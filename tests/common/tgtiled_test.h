/* Tiled builds in one process, for node tests: an in-memory TgTileStore
 * and tgtest_tiled_pull, which runs every step (and reduce) of a global
 * node's tiled scheme over an NX x NY tiling, as the jobs of a plan would,
 * and joins the last step's tiles into one whole-world grid.  A test then
 * compares it byte for byte with tg_engine_pull of the whole world. */
#ifndef TGTILED_TEST_H
#define TGTILED_TEST_H

#include <stdlib.h>
#include <string.h>

#include <tgraph/tgraph.h>

typedef struct
{
  int node, ix, iy;
  char *name;
  void *data;
  size_t size;
} TgtestBlob;

typedef struct
{
  TgtestBlob *blobs;
  int n;
  size_t bytes, peak_blob; /* all blobs held; the largest one */
  size_t peak_bytes;       /* the most held at once */
} TgtestStore;

static TgtestBlob *
tgtest_store_find (TgtestStore *s, int node, int ix, int iy, const char *name)
{
  for (int i = 0; i < s->n; i++)
    if (s->blobs[i].node == node && s->blobs[i].ix == ix && s->blobs[i].iy == iy
        && strcmp (s->blobs[i].name, name) == 0)
      return &s->blobs[i];
  return NULL;
}

static int
tgtest_store_put (void *user, int node, int ix, int iy, const char *name, const void *data,
                  size_t size, TgError *err)
{
  TgtestStore *s = user;
  TgtestBlob *b = tgtest_store_find (s, node, ix, iy, name);
  void *copy = malloc (size ? size : 1);

  if (copy == NULL)
    return tg_error_set (err, TG_ENOMEM, NULL, "out of memory");
  memcpy (copy, data, size);
  if (b == NULL)
    {
      TgtestBlob *grown = realloc (s->blobs, sizeof *grown * (size_t) (s->n + 1));
      if (grown == NULL)
        {
          free (copy);
          return tg_error_set (err, TG_ENOMEM, NULL, "out of memory");
        }
      s->blobs = grown;
      b = &s->blobs[s->n++];
      b->node = node;
      b->ix = ix;
      b->iy = iy;
      b->name = strdup (name);
      b->data = NULL;
      b->size = 0;
    }
  s->bytes += size - b->size;
  free (b->data);
  b->data = copy;
  b->size = size;
  if (size > s->peak_blob)
    s->peak_blob = size;
  if (s->bytes > s->peak_bytes)
    s->peak_bytes = s->bytes;
  return 0;
}

static int
tgtest_store_get (void *user, int node, int ix, int iy, const char *name, void **data,
                  size_t *size, TgError *err)
{
  TgtestBlob *b = tgtest_store_find (user, node, ix, iy, name);

  if (b == NULL)
    return tg_error_set (err, TG_EMISSING, NULL, "no blob \"%s\" of tile %d,%d", name, ix, iy);
  *data = malloc (b->size ? b->size : 1);
  if (*data == NULL)
    return tg_error_set (err, TG_ENOMEM, NULL, "out of memory");
  memcpy (*data, b->data, b->size);
  *size = b->size;
  return 0;
}

static int
tgtest_store_drop (void *user, int node, int ix, int iy, const char *name, TgError *err)
{
  TgtestStore *s = user;
  TgtestBlob *b = tgtest_store_find (s, node, ix, iy, name);

  (void) err;
  if (b != NULL)
    {
      s->bytes -= b->size;
      free (b->name);
      free (b->data);
      *b = s->blobs[--s->n];
    }
  return 0;
}

static void
tgtest_store_clear (TgtestStore *s)
{
  for (int i = 0; i < s->n; i++)
    {
      free (s->blobs[i].name);
      free (s->blobs[i].data);
    }
  free (s->blobs);
  memset (s, 0, sizeof *s);
}

/* Runs NODE's whole tiled scheme over NX x NY tiles and returns in *OUT
 * (new reference) its output OUTPUT over the whole world (grids joined
 * here, meshes and instance lists by the scheme's join).  STORE_OUT, when
 * not NULL, receives the blob statistics. */
static int
tgtest_tiled_pull (TgEngine *e, const TgGraph *g, int node, int output, int nx, int ny,
                   TgValue **out, TgtestStore *store_out, TgError *err)
{
  const TgNodeDesc *d = tg_graph_node_desc (g, node);
  const TgWorld *w = tg_graph_world_const (g);
  TgtestStore st = { 0 };
  TgTileStore ts = { .user = &st, .blob_put = tgtest_store_put, .blob_get = tgtest_store_get,
                     .blob_drop = tgtest_store_drop };
  TgTiling t = { nx, ny, 0, 0 };
  TgEvalHooks hooks = { .store = &ts, .tiling = &t };
  TgRegion full;
  TgValue *whole = NULL, **parts = calloc ((size_t) (nx * ny), sizeof (TgValue *));
  int rc = 0, n_steps, n_out = d->n_outputs;
  void *params;

  *out = NULL;
  if (d->tiled == NULL)
    return tg_error_set (err, TG_EINVAL, NULL, "%s has no tiled scheme", d->type);
  tg_region_for_world (&full, w, w->resolution);
  /* The scheme's step count from the node's parameters. */
  params = calloc (1, d->params_size ? d->params_size : 1);
  for (int k = 0; params && k < d->n_params; k++)
    tg_param_value_store (&d->params[k], tg_graph_get_param_at (g, node, k), params);
  n_steps = params ? d->tiled->n_steps (params, &full) : 0;
  for (int s = 0; rc == 0 && s < n_steps; s++)
    {
      bool last = s == n_steps - 1;
      for (t.iy = 0; rc == 0 && t.iy < ny; t.iy++)
        for (t.ix = 0; rc == 0 && t.ix < nx; t.ix++)
          {
            TgValue *res[8] = { 0 };
            rc = tg_engine_tile_step (e, g, node, s, false, &hooks, last ? res : NULL, NULL, err);
            if (rc == 0 && last && !tg_port_type_is_grid (res[output]->type))
              parts[t.iy * nx + t.ix] = tg_value_ref (res[output]);
            else if (rc == 0 && last)
              {
                const TgValue *v = res[output];
                if (whole == NULL)
                  {
                    whole = tg_value_new_grid (v->type, &full, v->channels);
                    for (int c = 0; whole && c < v->channels && v->channel_names; c++)
                      tg_value_set_channel_name (whole, c, v->channel_names[c]);
                  }
                if (whole == NULL)
                  rc = tg_error_set (err, TG_ENOMEM, NULL, "out of memory");
                for (int j = 0; rc == 0 && j < v->region.height; j++)
                  memcpy (tg_value_row (whole, v->region.row0 + j) + (size_t) v->region.col0 * v->channels,
                          tg_value_row (v, j), sizeof (float) * (size_t) v->region.width * v->channels);
              }
            for (int k = 0; k < n_out && k < 8; k++)
              tg_value_unref (res[k]);
          }
      if (rc == 0 && d->tiled->has_reduce && d->tiled->has_reduce (params, &full, s))
        rc = tg_engine_tile_step (e, g, node, s, true, &hooks, NULL, NULL, err);
    }
  /* Meshes and instances: the scheme joins the tiles' shares. */
  if (rc == 0 && parts && parts[0])
    {
      TgTiling jt = { nx, ny, -1, -1 };
      whole = d->tiled->join (params, &full, &jt, output, parts, err);
      if (whole == NULL)
        rc = err->code ? err->code : TG_EINVAL;
    }
  for (int q = 0; parts && q < nx * ny; q++)
    tg_value_unref (parts[q]);
  free (parts);
  tg_params_struct_clear (d->params, d->n_params, params);
  free (params);
  if (store_out)
    {
      store_out->bytes = st.bytes;
      store_out->peak_blob = st.peak_blob;
      store_out->peak_bytes = st.peak_bytes;
    }
  tgtest_store_clear (&st);
  if (rc < 0)
    {
      tg_value_unref (whole);
      return rc;
    }
  *out = whole;
  return 0;
}

#endif
