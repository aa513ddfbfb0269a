/* Meshes, instance lists and fields as values. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tgraph/error.h"
#include "tgraph/field.h"
#include "tgraph/mesh.h"
#include "tgraph/points.h"

TgMesh *
tg_mesh_new (int n_chunks)
{
  TgMesh *m = calloc (1, sizeof *m);

  if (m == NULL)
    return NULL;
  m->chunks = calloc ((size_t) (n_chunks > 0 ? n_chunks : 1), sizeof (TgMeshChunk));
  if (m->chunks == NULL)
    {
      free (m);
      return NULL;
    }
  m->n_chunks = n_chunks;
  return m;
}

void
tg_mesh_free (TgMesh *m)
{
  if (m == NULL)
    return;
  for (int i = 0; i < m->n_chunks; i++)
    {
      TgMeshChunk *c = &m->chunks[i];
      free (c->name);
      free (c->positions);
      free (c->normals);
      free (c->uvs);
      free (c->indices);
    }
  free (m->chunks);
  free (m);
}

int
tg_mesh_chunk_alloc (TgMeshChunk *c, int n_vertices, int64_t n_indices, int with_uvs)
{
  size_t nv = (size_t) (n_vertices > 0 ? n_vertices : 1);
  size_t ni = (size_t) (n_indices > 0 ? n_indices : 1);

  free (c->positions);
  free (c->normals);
  free (c->uvs);
  free (c->indices);
  c->positions = malloc (sizeof (float) * 3 * nv);
  c->normals = malloc (sizeof (float) * 3 * nv);
  c->uvs = with_uvs ? malloc (sizeof (float) * 2 * nv) : NULL;
  c->indices = malloc (sizeof (uint32_t) * ni);
  c->n_vertices = n_vertices;
  c->n_indices = n_indices;
  if (!c->positions || !c->normals || (with_uvs && !c->uvs) || !c->indices)
    return TG_ENOMEM;
  return 0;
}

int
tg_mesh_chunk_set_name (TgMeshChunk *c, const char *name)
{
  char *copy = strdup (name ? name : "");

  if (copy == NULL)
    return TG_ENOMEM;
  free (c->name);
  c->name = copy;
  return 0;
}

size_t
tg_mesh_bytes (const TgMesh *m)
{
  size_t n = sizeof *m;

  for (int i = 0; i < m->n_chunks; i++)
    n += sizeof (TgMeshChunk) + (size_t) m->chunks[i].n_vertices * sizeof (float) * 8
         + (size_t) m->chunks[i].n_indices * sizeof (uint32_t);
  return n;
}

static void
mesh_free_any (void *p)
{
  tg_mesh_free (p);
}

TgValue *
tg_value_new_mesh (TgMesh *m)
{
  TgValue *v = tg__value_new_payload (TG_TYPE_MESH, m, mesh_free_any, tg_mesh_bytes (m));

  if (v == NULL)
    tg_mesh_free (m);
  return v;
}

const TgMesh *
tg_value_mesh (const TgValue *v)
{
  return v && v->type == TG_TYPE_MESH ? tg__value_payload (v) : NULL;
}

/* --- points ------------------------------------------------------------------ */

TgPoints *
tg_points_new (void)
{
  return calloc (1, sizeof (TgPoints));
}

void
tg_points_free (TgPoints *p)
{
  if (p == NULL)
    return;
  free (p->position);
  free (p->rotation);
  free (p->scale);
  free (p->proto);
  for (int i = 0; i < p->n_protos; i++)
    free (p->proto_names[i]);
  free (p->proto_names);
  free (p);
}

static int
grow (void **ptr, size_t elem, int64_t cap)
{
  void *n = realloc (*ptr, elem * (size_t) cap);

  if (n == NULL)
    return TG_ENOMEM;
  *ptr = n;
  return 0;
}

int
tg_points_reserve (TgPoints *p, int64_t n)
{
  int64_t cap = p->cap ? p->cap : 256;

  if (n <= p->cap)
    return 0;
  while (cap < n)
    cap *= 2;
  if (grow ((void **) &p->position, sizeof (float) * 3, cap) < 0
      || grow ((void **) &p->rotation, sizeof (float) * 4, cap) < 0
      || grow ((void **) &p->scale, sizeof (float) * 3, cap) < 0
      || grow ((void **) &p->proto, sizeof (int32_t), cap) < 0)
    return TG_ENOMEM;
  p->cap = cap;
  return 0;
}

int
tg_points_push (TgPoints *p, const float pos[3], const float rot[4], const float scale[3],
                int32_t proto)
{
  int64_t i = p->n;

  if (p->n == p->cap && tg_points_reserve (p, p->n + 1) < 0)
    return TG_ENOMEM;
  memcpy (p->position + 3 * i, pos, sizeof (float) * 3);
  memcpy (p->rotation + 4 * i, rot, sizeof (float) * 4);
  memcpy (p->scale + 3 * i, scale, sizeof (float) * 3);
  p->proto[i] = proto;
  p->n++;
  return 0;
}

int
tg_points_add_proto (TgPoints *p, const char *name)
{
  char **grown = realloc (p->proto_names, sizeof (char *) * (size_t) (p->n_protos + 1));
  char *copy;

  if (grown == NULL)
    return TG_ENOMEM;
  p->proto_names = grown;
  if ((copy = strdup (name ? name : "")) == NULL)
    return TG_ENOMEM;
  p->proto_names[p->n_protos] = copy;
  return p->n_protos++;
}

size_t
tg_points_bytes (const TgPoints *p)
{
  return sizeof *p + (size_t) p->cap * (sizeof (float) * 10 + sizeof (int32_t));
}

static void
points_free_any (void *p)
{
  tg_points_free (p);
}

TgValue *
tg_value_new_points (TgPoints *p)
{
  TgValue *v = tg__value_new_payload (TG_TYPE_POINTS, p, points_free_any, tg_points_bytes (p));

  if (v == NULL)
    tg_points_free (p);
  return v;
}

const TgPoints *
tg_value_points (const TgValue *v)
{
  return v && v->type == TG_TYPE_POINTS ? tg__value_payload (v) : NULL;
}

/* --- fields ------------------------------------------------------------------ */

void
tg_field_eval (const TgField *f, size_t n, const float *x, const float *y, const float *z,
               float *out)
{
  for (size_t i = 0; i < n; i += TG_FIELD_BATCH_MAX)
    {
      int k = n - i < TG_FIELD_BATCH_MAX ? (int) (n - i) : TG_FIELD_BATCH_MAX;
      f->eval (f, k, x + i, y + i, z + i, out + i);
    }
}

int
tg_field_scratch_reserve (TgFieldScratch *scratch, size_t bytes)
{
  if (bytes > scratch->cap)
    {
      /* A quarter more, so a slowly growing need does not reallocate
       * every call; aligned_alloc wants a multiple of the alignment. */
      size_t cap = (bytes + bytes / 4 + 63) & ~(size_t) 63;
      void *p = aligned_alloc (64, cap);

      if (p == NULL)
        return TG_ENOMEM;
      free (scratch->buf);
      scratch->buf = p;
      scratch->cap = cap;
    }
  return 0;
}

void
tg_field_scratch_clear (TgFieldScratch *scratch)
{
  free (scratch->buf);
  scratch->buf = NULL;
  scratch->cap = 0;
}

int
tg_field_eval_grid (const TgField *f, const TgFieldGrid *g, float *out, size_t sy, size_t sz,
                    TgFieldScratch *scratch)
{
  float *bx, *by, *bz, *bv;
  int rc, m = 0, i0 = 0, j0 = 0, k0 = 0;

  if (f->eval_grid && (rc = f->eval_grid (f, g, out, sy, sz, scratch)) <= 0)
    return rc;
  /* No grid path: the field's eval, in full batches of grid points. */
  if ((rc = tg_field_scratch_reserve (scratch, 4 * sizeof (float) * TG_FIELD_BATCH_MAX)) < 0)
    return rc;
  bx = scratch->buf;
  by = bx + TG_FIELD_BATCH_MAX;
  bz = by + TG_FIELD_BATCH_MAX;
  bv = bz + TG_FIELD_BATCH_MAX;
  for (int k = 0; k < g->nz; k++)
    for (int j = 0; j < g->ny; j++)
      for (int i = 0; i < g->nx; i++)
        {
          bx[m] = g->xs[i];
          by[m] = g->ys[j];
          bz[m] = g->zs[k];
          if (++m == TG_FIELD_BATCH_MAX || (i == g->nx - 1 && j == g->ny - 1 && k == g->nz - 1))
            {
              /* Scatter the batch back, from where it began. */
              f->eval (f, m, bx, by, bz, bv);
              for (int t = 0; t < m; t++)
                {
                  out[(size_t) k0 * sz + (size_t) j0 * sy + (size_t) i0] = bv[t];
                  if (++i0 == g->nx)
                    {
                      i0 = 0;
                      if (++j0 == g->ny)
                        {
                          j0 = 0;
                          k0++;
                        }
                    }
                }
              m = 0;
            }
        }
  return 0;
}

static void
field_free_any (void *p)
{
  TgField *f = p;

  if (f == NULL)
    return;
  if (f->free_data)
    f->free_data (f->data);
  free (f);
}

TgValue *
tg_value_new_field (TgField *f)
{
  TgValue *v = tg__value_new_payload (TG_TYPE_FIELD, f, field_free_any, sizeof *f);

  if (v == NULL)
    field_free_any (f);
  return v;
}

const TgField *
tg_value_field (const TgValue *v)
{
  return v && v->type == TG_TYPE_FIELD ? tg__value_payload (v) : NULL;
}
