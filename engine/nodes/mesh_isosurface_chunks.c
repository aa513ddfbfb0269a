/* mesh.isosurface's chunks and skirts: one welded level of the surface,
 * each triangle tagged with its chunk, cut into one mesh per chunk.
 *
 * A chunk takes the triangles of its cells in the level's order and its
 * own copy of the vertices they use, in first-use order.  A vertex on a
 * chunk face is one vertex of the level, so both chunks get the same
 * position and normal, bit for bit: the chunks of one level still close
 * up, and any 16 or 32-bit index fits the chunk, not the level.
 *
 * Skirts (when the surface has levels of detail).  Two neighbouring
 * chunks drawn at different levels meet along two different polylines on
 * their common face, which leaves a crack.  Every open edge that lies in
 * a chunk face inside the box gets a skirt: a quad hanging from it into
 * the solid, in the face's plane (so the skirt covers the part of the
 * plane between the two polylines), as deep along the surface's normal as
 * tg__iso_skirt_m says, and pulled back where that would leave the solid
 * (a thin part).  Both chunks of a face, at every level, hang one, so
 * whichever side is the higher the gap is closed from both sides; at the
 * same level the two skirts coincide, wound both ways.  Skirt triangles
 * continue the surface's winding over the edge, so they face out of
 * their chunk; they come after the chunk's own triangles and vertices. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/tgraph.h>

#include "fields.h"

double
tg__iso_skirt_m (const TgIsoOptions *o)
{
  int lods = o->lods > 1 ? o->lods : 1;

  /* Two levels' surfaces stray apart by about a coarse cell at most on a
   * smooth field: twice the coarsest cell covers it. */
  return 2.0 * o->cell * (double) (1 << (lods - 1));
}

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

/* The planes of a chunk's faces that lie inside the box (a neighbour is
 * across them): along each axis, the low and the high one. */
typedef struct
{
  float at[3][2];
  bool inner[3][2];
} Faces;

static void
chunk_faces (const TgIsoLattice *l, const TgIsoOptions *o, const int64_t id[3], Faces *f)
{
  for (int k = 0; k < 3; k++)
    for (int side = 0; side < 2; side++)
      {
        /* The face's lattice index in the box: points of every level. */
        int64_t g = (l->c0[k] + id[k] + side) * l->cells - l->off[k];

        f->at[k][side] = (float) (o->min[k] + (double) g * o->cell);
        f->inner[k][side] = g > 0 && g < l->n[k];
      }
}

typedef struct
{
  uint64_t key; /* undirected edge: low vertex << 32 | high vertex */
  int64_t at;   /* 3 triangle + corner */
} EdgeUse;

static int
cmp_edge (const void *a, const void *b)
{
  uint64_t x = ((const EdgeUse *) a)->key, y = ((const EdgeUse *) b)->key;

  return x < y ? -1 : x > y;
}

/* The way down of a skirt vertex hanging from P (normal N) on the face
 * across axis AX: in the face's plane, into the solid, far enough to lie
 * DEPTH below the surface along the normal (at most twice DEPTH away);
 * straight down the normal where the surface nearly lies in the plane.
 * DIR gets the unit direction, the result is the distance. */
static double
skirt_way (const float *n, int ax, double depth, double dir[3])
{
  double m[3] = { n[0], n[1], n[2] }, len2;

  m[ax] = 0.0;
  len2 = m[0] * m[0] + m[1] * m[1] + m[2] * m[2];
  if (len2 > 0.0625)
    {
      double len = sqrt (len2);

      for (int k = 0; k < 3; k++)
        dir[k] = m[k] / len;
      return fmin (depth / len, 2.0 * depth);
    }
  for (int k = 0; k < 3; k++)
    dir[k] = n[k];
  return depth;
}

static void
skirt_place (const float *p, const double dir[3], double t, float *out)
{
  for (int k = 0; k < 3; k++)
    out[k] = dir[k] == 0.0 ? p[k] : (float) (p[k] - t * dir[k]);
}

/* Adds skirts of DEPTH to C on its inner faces F, their bottoms kept
 * inside the solid of FIELD.  0 or TG_ENOMEM. */
static int
add_skirts (TgMeshChunk *c, const Faces *f, double depth, const TgField *field, double iso)
{
  int64_t nt = c->n_indices / 3, n_open = 0;
  EdgeUse *uses = malloc (sizeof *uses * (size_t) (3 * nt + 1));
  uint8_t *face_of = calloc ((size_t) (3 * nt + 1), 1); /* 1 + 2 axis + side, or 0 */
  int32_t *sk = malloc (sizeof (int32_t) * 3 * (size_t) (c->n_vertices + 1));
  int nv = c->n_vertices, rc = 0;

  if (!uses || !face_of || !sk)
    {
      rc = TG_ENOMEM;
      goto out;
    }
  for (int64_t t = 0; t < 3 * nt; t++)
    {
      uint32_t a = c->indices[t], b = c->indices[t - t % 3 + (t % 3 + 1) % 3];

      uses[t].key = (uint64_t) (a < b ? a : b) << 32 | (a < b ? b : a);
      uses[t].at = t;
    }
  qsort (uses, (size_t) (3 * nt), sizeof *uses, cmp_edge);
  /* Open edges (one use) in a face plane; the new vertices and triangles
   * follow the triangle order, whatever the sort did with ties. */
  for (int64_t i = 0; i < 3 * nt; i++)
    {
      bool open = (i == 0 || uses[i - 1].key != uses[i].key)
                  && (i + 1 == 3 * nt || uses[i + 1].key != uses[i].key);
      int64_t t = uses[i].at;
      const float *pa, *pb;

      if (!open)
        continue;
      pa = c->positions + 3 * (size_t) c->indices[t];
      pb = c->positions + 3 * (size_t) c->indices[t - t % 3 + (t % 3 + 1) % 3];
      for (int k = 0; k < 3 && !face_of[t]; k++)
        for (int side = 0; side < 2; side++)
          if (f->inner[k][side] && pa[k] == f->at[k][side] && pb[k] == f->at[k][side])
            {
              face_of[t] = (uint8_t) (1 + 2 * k + side);
              n_open++;
              break;
            }
    }
  if (n_open == 0)
    goto out;
  for (int64_t i = 0; i < 3 * (int64_t) nv; i++)
    sk[i] = -1;
  {
    int64_t cap_v = nv + 2 * n_open, cap_i = c->n_indices + 6 * n_open;
    float *pos = realloc (c->positions, sizeof (float) * 3 * (size_t) cap_v);
    float *nrm = pos ? realloc (c->normals, sizeof (float) * 3 * (size_t) cap_v) : NULL;
    uint32_t *idx = nrm ? realloc (c->indices, sizeof (uint32_t) * (size_t) cap_i) : NULL;
    int64_t ni = c->n_indices;

    if (pos)
      c->positions = pos;
    if (nrm)
      c->normals = nrm;
    if (idx)
      c->indices = idx;
    if (!pos || !nrm || !idx || cap_v > INT32_MAX)
      {
        rc = TG_ENOMEM;
        goto out;
      }
    /* The skirt vertices first, then their bottoms pulled back, in
     * batches, wherever the field puts them outside the solid (a thin
     * part, where a skirt would poke out of the far side): halving the
     * way, at most five times. */
    {
      int n_new = 0, *src = malloc (sizeof (int) * (size_t) (2 * n_open + 1));
      double *way = malloc (sizeof (double) * 4 * (size_t) (2 * n_open + 1));
      float *bx = malloc (sizeof (float) * 4 * TG_FIELD_BATCH_MAX);

      if (!src || !way || !bx)
        {
          free (src);
          free (way);
          free (bx);
          rc = TG_ENOMEM;
          goto out;
        }
      for (int64_t t = 0; t < 3 * nt; t++)
        if (face_of[t])
          {
            int k = (face_of[t] - 1) / 2;
            uint32_t ab[2] = { c->indices[t], c->indices[t - t % 3 + (t % 3 + 1) % 3] };

            for (int q = 0; q < 2; q++)
              if (sk[3 * (size_t) ab[q] + (size_t) k] < 0)
                {
                  uint32_t v = ab[q];
                  double *w = way + 4 * n_new;

                  w[3] = skirt_way (nrm + 3 * (size_t) v, k, depth, w);
                  skirt_place (pos + 3 * (size_t) v, w, w[3], pos + 3 * (size_t) (nv + n_new));
                  memcpy (nrm + 3 * (size_t) (nv + n_new), nrm + 3 * (size_t) v,
                          sizeof (float) * 3);
                  src[n_new] = (int) v;
                  sk[3 * (size_t) v + (size_t) k] = nv + n_new++;
                }
          }
      for (int round = 0; field && round < 5; round++)
        {
          int n_out = 0;

          for (int i0 = 0; i0 < n_new; i0 += TG_FIELD_BATCH_MAX)
            {
              int nb = 0, at[TG_FIELD_BATCH_MAX];
              float *by = bx + TG_FIELD_BATCH_MAX, *bz = by + TG_FIELD_BATCH_MAX,
                    *bv = bz + TG_FIELD_BATCH_MAX;

              for (int i = i0; i < n_new && i < i0 + TG_FIELD_BATCH_MAX; i++)
                if (way[4 * i + 3] > 0.0)
                  {
                    const float *q = pos + 3 * (size_t) (nv + i);
                    bx[nb] = q[0];
                    by[nb] = q[1];
                    bz[nb] = q[2];
                    at[nb++] = i;
                  }
              if (nb > 0)
                field->eval (field, nb, bx, by, bz, bv);
              for (int j = 0; j < nb; j++)
                {
                  double *w = way + 4 * at[j];

                  if (bv[j] < iso)
                    w[3] = 0.0; /* inside: done */
                  else
                    {
                      w[3] *= 0.5;
                      skirt_place (pos + 3 * (size_t) src[at[j]], w, w[3],
                                   pos + 3 * (size_t) (nv + at[j]));
                      n_out++;
                    }
                }
            }
          if (n_out == 0)
            break;
        }
      free (src);
      free (way);
      free (bx);
      nv += n_new;
    }
    for (int64_t t = 0; t < 3 * nt; t++)
      if (face_of[t])
        {
          int k = (face_of[t] - 1) / 2;
          uint32_t a = c->indices[t], b = c->indices[t - t % 3 + (t % 3 + 1) % 3];
          uint32_t d[2] = { (uint32_t) sk[3 * (size_t) a + (size_t) k],
                            (uint32_t) sk[3 * (size_t) b + (size_t) k] };

          /* The triangle has a -> b; the skirt goes on with b -> a. */
          idx[ni++] = b;
          idx[ni++] = a;
          idx[ni++] = d[0];
          idx[ni++] = b;
          idx[ni++] = d[0];
          idx[ni++] = d[1];
        }
    c->n_vertices = nv;
    c->n_indices = ni;
  }
out:
  free (uses);
  free (face_of);
  free (sk);
  return rc;
}

/* One level being cut: the triangles by chunk, the chunks to write (in
 * order) and where they go. */
typedef struct
{
  const TgIsoLevel *lv;
  const TgIsoLattice *lat;
  const TgIsoOptions *o;
  const TgField *field;
  int level;
  double skirt_m;
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
  if (lat && sp->skirt_m > 0.0)
    {
      Faces f;

      chunk_faces (lat, sp->o, cid, &f);
      return add_skirts (c, &f, sp->skirt_m, sp->field, sp->o->iso);
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
  int rc = 0;

  memset (&sp, 0, sizeof sp);
  if (!start || !order || !ids)
    {
      rc = TG_ENOMEM;
      goto out;
    }
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
  memset (out->items + out->n, 0, sizeof (TgMeshChunk) * (size_t) n_ids);
  sp.dst = out->items + out->n;
  out->n += (int) n_ids;
  sp.lv = lv;
  sp.lat = lat;
  sp.o = o;
  sp.field = field;
  sp.level = level;
  sp.skirt_m = skirt_m;
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
  free (start);
  free (order);
  free (ids);
  return rc;
}
