/* Tiled builds: a tile's share of a mesh or of an instance list in the
 * plan's store, as raw arrays behind a header that names the graph. */
#include <stdlib.h>
#include <string.h>

#include "plan-private.h"
#include "tgformats-private.h"

static const char points_magic[8] = { 'T', 'G', 'P', 'N', 'T', 'S', '1', '\n' };
static const char mesh_magic[8] = { 'T', 'G', 'M', 'E', 'S', 'H', '1', '\n' };

/* --- writing ---------------------------------------------------------------- */

typedef struct
{
  TgPart *parts;
  int n, cap;
  int32_t *ints; /* lengths and counts the parts point at */
  int n_ints, cap_ints;
  bool oom;
} Parts;

static void
parts_add (Parts *p, const void *data, size_t size)
{
  if (p->n == p->cap)
    {
      int cap = p->cap ? 2 * p->cap : 32;
      TgPart *g = realloc (p->parts, sizeof *g * (size_t) cap);
      if (!g)
        {
          p->oom = true;
          return;
        }
      p->parts = g;
      p->cap = cap;
    }
  p->parts[p->n++] = (TgPart) { data, size };
}

/* Adds the integer V, kept in INTS (sized up front, so pointers stay). */
static void
parts_int (Parts *p, int32_t v)
{
  if (p->n_ints == p->cap_ints)
    {
      p->oom = true;
      return;
    }
  p->ints[p->n_ints] = v;
  parts_add (p, &p->ints[p->n_ints++], sizeof (int32_t));
}

static void
parts_str (Parts *p, const char *s)
{
  s = s ? s : "";
  parts_int (p, (int32_t) strlen (s));
  parts_add (p, s, strlen (s));
}

int
tg__store_write_value (const char *path, const uint8_t sha[32], const TgValue *v, TgError *err)
{
  Parts p = { 0 };
  int64_t counts[2];
  int rc;

  if (v->type == TG_TYPE_POINTS)
    {
      const TgPoints *pt = tg_value_points (v);
      p.cap_ints = 2 + 2 * pt->n_protos;
      p.ints = calloc ((size_t) p.cap_ints, sizeof (int32_t));
      counts[0] = pt->n;
      parts_add (&p, points_magic, sizeof points_magic);
      parts_add (&p, sha, 32);
      parts_add (&p, &counts[0], sizeof counts[0]);
      parts_int (&p, pt->n_protos);
      for (int k = 0; k < pt->n_protos; k++)
        parts_str (&p, pt->proto_names[k]);
      parts_add (&p, pt->position, sizeof (float) * 3 * (size_t) pt->n);
      parts_add (&p, pt->rotation, sizeof (float) * 4 * (size_t) pt->n);
      parts_add (&p, pt->scale, sizeof (float) * 3 * (size_t) pt->n);
      parts_add (&p, pt->proto, sizeof (int32_t) * (size_t) pt->n);
    }
  else if (v->type == TG_TYPE_MESH)
    {
      const TgMesh *m = tg_value_mesh (v);
      p.cap_ints = 1 + 5 * m->n_chunks;
      p.ints = calloc ((size_t) p.cap_ints, sizeof (int32_t));
      parts_add (&p, mesh_magic, sizeof mesh_magic);
      parts_add (&p, sha, 32);
      parts_int (&p, m->n_chunks);
      for (int c = 0; c < m->n_chunks; c++)
        {
          const TgMeshChunk *ch = &m->chunks[c];
          parts_str (&p, ch->name);
          parts_int (&p, ch->lod);
          parts_int (&p, ch->n_vertices);
          parts_int (&p, ch->uvs != NULL);
          if (ch->n_indices < 0 || ch->n_indices > (int64_t) UINT32_MAX)
            p.oom = true; /* refused below: more indices than 32 bits count */
          parts_int (&p, (int32_t) (uint32_t) ch->n_indices);
          parts_add (&p, ch->positions, sizeof (float) * 3 * (size_t) ch->n_vertices);
        }
      /* The big arrays after the small header, chunk by chunk. */
      for (int c = 0; c < m->n_chunks; c++)
        {
          const TgMeshChunk *ch = &m->chunks[c];
          parts_add (&p, ch->normals, sizeof (float) * 3 * (size_t) ch->n_vertices);
          if (ch->uvs)
            parts_add (&p, ch->uvs, sizeof (float) * 2 * (size_t) ch->n_vertices);
          parts_add (&p, ch->indices, sizeof (uint32_t) * (size_t) ch->n_indices);
        }
    }
  else
    return tg_error_set (err, TG_ETYPE, "", "the store keeps grids, meshes and instances only");
  rc = p.oom || !p.ints ? tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY)
                        : tg__write_parts_atomic (path, p.parts, p.n, err);
  free (p.parts);
  free (p.ints);
  return rc;
}

/* --- reading ---------------------------------------------------------------- */

typedef struct
{
  const char *p, *end;
  bool bad;
} Reader;

static void
take (Reader *r, void *dst, size_t n)
{
  if (r->bad || (size_t) (r->end - r->p) < n)
    {
      r->bad = true;
      if (dst && n)
        memset (dst, 0, n);
      return;
    }
  if (dst && n)
    memcpy (dst, r->p, n);
  r->p += n;
}

static int32_t
take_int (Reader *r)
{
  int32_t v = 0;
  take (r, &v, sizeof v);
  return v;
}

static char *
take_str (Reader *r)
{
  int32_t n = take_int (r);
  char *s;

  if (n < 0 || n > 4096 || r->bad)
    {
      r->bad = true;
      return NULL;
    }
  s = calloc ((size_t) n + 1, 1);
  if (!s)
    {
      r->bad = true;
      return NULL;
    }
  take (r, s, (size_t) n);
  return s;
}

static TgValue *
read_points (Reader *r)
{
  TgPoints *pt = tg_points_new ();
  int64_t n = 0;
  int32_t n_protos;

  take (r, &n, sizeof n);
  n_protos = take_int (r);
  if (!pt || n < 0 || n_protos < 0 || n_protos > 65536 || r->bad)
    {
      tg_points_free (pt);
      return NULL;
    }
  for (int k = 0; k < n_protos; k++)
    {
      char *name = take_str (r);
      if (!name || tg_points_add_proto (pt, name) < 0)
        r->bad = true;
      free (name);
    }
  if (r->bad || (uint64_t) (r->end - r->p) != (uint64_t) n * 44 || tg_points_reserve (pt, n) < 0)
    {
      tg_points_free (pt);
      return NULL;
    }
  take (r, pt->position, sizeof (float) * 3 * (size_t) n);
  take (r, pt->rotation, sizeof (float) * 4 * (size_t) n);
  take (r, pt->scale, sizeof (float) * 3 * (size_t) n);
  take (r, pt->proto, sizeof (int32_t) * (size_t) n);
  pt->n = n;
  for (int64_t i = 0; i < n; i++)
    if (pt->proto[i] < 0 || pt->proto[i] >= n_protos)
      r->bad = true;
  if (r->bad)
    {
      tg_points_free (pt);
      return NULL;
    }
  return tg_value_new_points (pt);
}

static TgValue *
read_mesh (Reader *r)
{
  int32_t n_chunks = take_int (r);
  TgMesh *m = n_chunks >= 0 && n_chunks <= (1 << 20) && !r->bad ? tg_mesh_new (n_chunks) : NULL;
  int32_t *uv = NULL;

  if (!m)
    return NULL;
  uv = calloc ((size_t) (n_chunks ? n_chunks : 1), sizeof *uv);
  for (int c = 0; uv && c < n_chunks && !r->bad; c++)
    {
      TgMeshChunk *ch = &m->chunks[c];
      char *name = take_str (r);
      int32_t lod = take_int (r), nv = take_int (r), has_uv = take_int (r);
      uint32_t ni = (uint32_t) take_int (r);
      if (!name || nv < 0 || r->bad || tg_mesh_chunk_alloc (ch, nv, (int64_t) ni, has_uv != 0) < 0
          || tg_mesh_chunk_set_name (ch, name) < 0)
        r->bad = true;
      free (name);
      ch->lod = lod;
      uv[c] = has_uv;
      take (r, r->bad ? NULL : ch->positions, sizeof (float) * 3 * (size_t) nv);
    }
  for (int c = 0; uv && c < n_chunks && !r->bad; c++)
    {
      TgMeshChunk *ch = &m->chunks[c];
      take (r, ch->normals, sizeof (float) * 3 * (size_t) ch->n_vertices);
      if (uv[c])
        take (r, ch->uvs, sizeof (float) * 2 * (size_t) ch->n_vertices);
      take (r, ch->indices, sizeof (uint32_t) * (size_t) ch->n_indices);
    }
  if (!uv || r->bad || r->p != r->end)
    {
      free (uv);
      tg_mesh_free (m);
      return NULL;
    }
  free (uv);
  return tg_value_new_mesh (m);
}

TgValue *
tg__store_read_value (const char *path, const uint8_t sha[32], TgPortType type, TgError *err)
{
  char *text = NULL;
  size_t len = 0;
  Reader r;
  TgValue *v = NULL;
  const char *magic = type == TG_TYPE_POINTS ? points_magic : mesh_magic;

  if (tg__read_file (path, &text, &len, err) < 0)
    {
      tg_error_set (err, TG_EMISSING, "", "%s is missing: run the stage that writes it first",
                    path);
      return NULL;
    }
  r = (Reader) { text, text + len, false };
  if (len < 40 || memcmp (text, magic, 8) != 0)
    tg_error_set (err, TG_EPARSE, "", "%s is not a part of the plan's store", path);
  else if (memcmp (text + 8, sha, 32) != 0)
    tg_error_set (err, TG_EINVAL, "", "%s was written for another graph", path);
  else
    {
      r.p += 40;
      v = type == TG_TYPE_POINTS ? read_points (&r) : read_mesh (&r);
      if (!v)
        tg_error_set (err, TG_EPARSE, "", "%s is damaged", path);
    }
  free (text);
  return v;
}
