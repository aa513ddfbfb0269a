/* mesh.isosurface's chunks: one welded level of the surface,
 * each triangle tagged with its chunk, cut into one mesh per chunk.
 *
 * A chunk takes the triangles of its cells in the level's order and its
 * own copy of the vertices they use, in first-use order.  A vertex on a
 * chunk face is one vertex of the level, so both chunks get the same
 * position and normal, bit for bit: the chunks of one level still close
 * up, and any 16 or 32-bit index fits the chunk, not the level.
 *
 * With levels of detail each chunk also gets its skirts
 * (mesh_isosurface_skirts.c), planned for the whole level before the
 * chunks are cut so that the chunks of a face hang the same ones. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/tgraph.h>

#include "fields.h"

void
tg__iso_chunks_clear (TgIsoChunks *list)
{
  for (int i = 0; i < list->n; i++)
    {
      TgMeshChunk *c = &list->items[i];
      free (c->name);
      free (c->positions);
      free (c->normals);
      free (c->uvs);
      free (c->indices);
    }
  free (list->items);
  memset (list, 0, sizeof *list);
}

/* One level being cut: the triangles by chunk, the chunks to write (in
 * order) and where they go. */
typedef struct
{
  const TgIsoLevel *lv;
  const TgIsoLattice *lat;
  const TgIsoOptions *o;
  const TgIsoSkirts *skirts; /* NULL: none */
  int level;
  const int64_t *start, *order;
  const int64_t *ids;   /* the chunks written, by increasing id */
  TgMeshChunk *dst;     /* one per entry of IDS */
  pthread_mutex_t lock;
  struct SplitScratch *free_scratch;
  atomic_int error;
} Split;

/* Per thread: a vertex's chunk stamp (id + 1) and its index there. */
typedef struct SplitScratch
{
  uint32_t *stamp, *local;
  struct SplitScratch *next;
} SplitScratch;

static int
split_chunk (Split *sp, SplitScratch *sc, int64_t j)
{
  const TgIsoLevel *lv = sp->lv;
  const TgIsoLattice *lat = sp->lat;
  int64_t id = sp->ids[j], s0 = sp->start[id], s1 = sp->start[id + 1];
  int64_t cid[3] = { 0, 0, 0 };
  uint32_t nlocal = 0;
  TgMeshChunk *c = &sp->dst[j];
  char name[96];

  for (int64_t i = s0; i < s1; i++)
    for (int q = 0; q < 3; q++)
      {
        uint32_t v = lv->idx[3 * sp->order[i] + q];

        if (sc->stamp[v] != (uint32_t) id + 1)
          {
            sc->stamp[v] = (uint32_t) id + 1;
            sc->local[v] = nlocal++;
          }
      }
  if (lat)
    {
      cid[0] = id % lat->nc[0];
      cid[1] = id / lat->nc[0] % lat->nc[1];
      cid[2] = id / ((int64_t) lat->nc[0] * lat->nc[1]);
      snprintf (name, sizeof name, "iso_x%lld_y%lld_z%lld_lod%d",
                (long long) (lat->c0[0] + cid[0]), (long long) (lat->c0[1] + cid[1]),
                (long long) (lat->c0[2] + cid[2]), sp->level);
    }
  else if (sp->level == 0)
    snprintf (name, sizeof name, "isosurface");
  else
    snprintf (name, sizeof name, "isosurface_lod%d", sp->level);
  if (tg_mesh_chunk_set_name (c, name) < 0
      || tg_mesh_chunk_alloc (c, (int) nlocal, 3 * (s1 - s0), 0) < 0)
    return TG_ENOMEM;
  c->lod = sp->level;
  /* Second pass: copy in first-use order. */
  for (int64_t i = s0; i < s1; i++)
    for (int q = 0; q < 3; q++)
      {
        uint32_t v = lv->idx[3 * sp->order[i] + q], w = sc->local[v];

        c->indices[3 * (i - s0) + q] = w;
        memcpy (c->positions + 3 * (size_t) w, lv->pos + 3 * (size_t) v, sizeof (float) * 3);
        memcpy (c->normals + 3 * (size_t) w, lv->nrm + 3 * (size_t) v, sizeof (float) * 3);
      }
  if (lat && sp->skirts)
    {
      uint32_t *global = malloc (sizeof (uint32_t) * ((size_t) nlocal + 1));
      int rc;

      if (global == NULL)
        return TG_ENOMEM;
      for (int64_t i = s0; i < s1; i++)
        for (int q = 0; q < 3; q++)
          {
            uint32_t v = lv->idx[3 * sp->order[i] + q];

            global[sc->local[v]] = v;
          }
      rc = tg__iso_skirts_add (sp->skirts, lat, sp->o, cid, global, c);
      free (global);
      return rc;
    }
  return 0;
}

/* Scratch is reused through a free list: allocated once per thread. */
static void
split_run (void *user, int begin, int end)
{
  Split *sp = user;
  SplitScratch *sc;

  pthread_mutex_lock (&sp->lock);
  sc = sp->free_scratch;
  if (sc)
    sp->free_scratch = sc->next;
  pthread_mutex_unlock (&sp->lock);
  if (sc == NULL && (sc = calloc (1, sizeof *sc)) != NULL)
    {
      sc->stamp = calloc ((size_t) sp->lv->nv + 1, sizeof (uint32_t));
      sc->local = malloc (sizeof (uint32_t) * ((size_t) sp->lv->nv + 1));
      if (!sc->stamp || !sc->local)
        {
          free (sc->stamp);
          free (sc->local);
          free (sc);
          sc = NULL;
        }
    }
  if (sc == NULL)
    {
      atomic_store (&sp->error, TG_ENOMEM);
      return;
    }
  for (int j = begin; j < end && atomic_load (&sp->error) == 0; j++)
    {
      int rc = split_chunk (sp, sc, j);

      if (rc < 0)
        atomic_store (&sp->error, rc);
    }
  pthread_mutex_lock (&sp->lock);
  sc->next = sp->free_scratch;
  sp->free_scratch = sc;
  pthread_mutex_unlock (&sp->lock);
}

static int
split_serial (void *ctx, int n, int grain, void (*fn) (void *, int, int), void *user)
{
  (void) ctx;
  for (int b = 0; b < n; b += grain)
    fn (user, b, b + grain < n ? b + grain : n);
  return 0;
}

int
tg__iso_split (const TgIsoLevel *lv, const TgIsoLattice *lat, const TgIsoOptions *o, int level,
               double skirt_m, const TgField *field, TgIsoParallel par, void *par_ctx,
               uint8_t *have, TgIsoChunks *out)
{
  int64_t n_chunks = lat ? (int64_t) lat->nc[0] * lat->nc[1] * lat->nc[2] : 1;
  int64_t *start = calloc ((size_t) n_chunks + 1, sizeof (int64_t));
  int64_t *order = malloc (sizeof (int64_t) * (size_t) (lv->nt + 1));
  int64_t *ids = malloc (sizeof (int64_t) * (size_t) (n_chunks + 1));
  int64_t n_ids = 0;
  Split sp;
  TgIsoSkirts *skirts = NULL;
  int rc = 0;

  memset (&sp, 0, sizeof sp);
  if (!start || !order || !ids)
    {
      rc = TG_ENOMEM;
      goto out;
    }
  if (lat && skirt_m > 0.0 && (rc = tg__iso_skirts_plan (lv, lat, o, skirt_m, field, &skirts)) < 0)
    goto out;
  /* Triangles by chunk, in their order within each (a counting sort). */
  for (int64_t t = 0; t < lv->nt; t++)
    start[(lat ? lv->tag[t] : 0) + 1]++;
  for (int64_t k = 0; k < n_chunks; k++)
    start[k + 1] += start[k];
  {
    int64_t *fill = malloc (sizeof (int64_t) * (size_t) (n_chunks + 1));

    if (fill == NULL)
      {
        rc = TG_ENOMEM;
        goto out;
      }
    memcpy (fill, start, sizeof (int64_t) * (size_t) n_chunks);
    for (int64_t t = 0; t < lv->nt; t++)
      order[fill[lat ? lv->tag[t] : 0]++] = t;
    free (fill);
  }
  /* A chunk is written when it has triangles at level 0; its coarser
   * levels only then (one level alone would draw at every distance).  The
   * whole surface's level 0 is written even when empty. */
  for (int64_t id = 0; id < n_chunks; id++)
    {
      int64_t count = start[id + 1] - start[id];

      if (lat == NULL ? level == 0 || (have[0] && count > 0)
                      : count > 0 && (level == 0 || have[id]))
        ids[n_ids++] = id;
    }
  if (out->n + n_ids > INT32_MAX / 2)
    {
      rc = TG_ERANGE;
      goto out;
    }
  while (out->cap < out->n + (int) n_ids)
    {
      int cap = out->cap ? 2 * out->cap : 64;
      TgMeshChunk *p = realloc (out->items, sizeof *p * (size_t) cap);

      if (p == NULL)
        {
          rc = TG_ENOMEM;
          goto out;
        }
      out->items = p;
      out->cap = cap;
    }
  if (n_ids > 0) /* items may still be NULL: no chunk so far */
    memset (out->items + out->n, 0, sizeof (TgMeshChunk) * (size_t) n_ids);
  sp.dst = out->items + out->n;
  out->n += (int) n_ids;
  sp.lv = lv;
  sp.lat = lat;
  sp.o = o;
  sp.skirts = skirts;
  sp.level = level;
  sp.start = start;
  sp.order = order;
  sp.ids = ids;
  atomic_init (&sp.error, 0);
  pthread_mutex_init (&sp.lock, NULL);
  /* Chunks in parallel, each into its own slot: the order is the ids'. */
  rc = (par ? par : split_serial) (par_ctx, (int) n_ids, 1, split_run, &sp);
  if (rc == 0)
    rc = atomic_load (&sp.error);
  while (sp.free_scratch)
    {
      SplitScratch *sc = sp.free_scratch;

      sp.free_scratch = sc->next;
      free (sc->stamp);
      free (sc->local);
      free (sc);
    }
  pthread_mutex_destroy (&sp.lock);
  if (rc == 0 && level == 0)
    for (int64_t j = 0; j < n_ids; j++)
      have[ids[j]] = start[ids[j] + 1] > start[ids[j]];
out:
  tg__iso_skirts_free (skirts);
  free (start);
  free (order);
  free (ids);
  return rc;
}
