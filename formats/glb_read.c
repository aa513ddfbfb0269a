/* A reader for self-contained glTF 2.0 binaries (.glb), registered for the
 * "glb" extension: export.points reads prototype meshes with it.
 *
 * The default scene (or, without one, every root node) is walked with its
 * node transforms (matrix or translation/rotation/scale) applied, and each
 * triangle primitive becomes one chunk: float positions, normals
 * (transformed by the inverse transpose; computed from the faces when the
 * file has none), float TEXCOORD_0 when present, and indices of any
 * unsigned type.  The result is in world coordinates: glTF is right-handed
 * with north at -Z, so z is negated and each triangle's order reversed
 * (handedness.h), the inverse of what the glb writers do.  Materials,
 * skins, morph targets and animations are not read.  Every offset and
 * index is checked against the file, so a broken or hostile file gives an
 * error, never a read outside the data.  Each node is read at most once
 * (glTF's hierarchy is a set of trees), and the scene's geometry is
 * bounded, so a small file cannot make us build an enormous mesh by
 * referencing a node or a mesh over and over.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "handedness.h"
#include "points-writers.h"
#include "tgformats-private.h"

#define GLB_MAGIC 0x46546C67u
#define CHUNK_JSON 0x4E4F534Au
#define CHUNK_BIN 0x004E4942u
/* Node nesting deeper than this is refused (the walk recurses). */
#define MAX_DEPTH 64
/* At most this many vertices (and three times as many indices) in the
 * whole scene: far more than any prototype mesh needs, and under 1 GiB of
 * mesh, where a file that instances one mesh on many nodes could
 * otherwise ask for any amount. */
#define MAX_VERTICES (1 << 24)
#define MAX_INDICES (3 * (int64_t) MAX_VERTICES)

typedef struct
{
  const char *path;
  json_object *doc;
  const uint8_t *bin;
  size_t bin_len;
  TgMesh *mesh;
  TgError *err;
  bool *visited;       /* per entry of "nodes" */
  int64_t n_vertices;  /* read so far, for the limits */
  int64_t n_indices;
} Reader;

static uint32_t
rd32 (const uint8_t *p)
{
  return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static int fail (Reader *r, int code, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

static int
fail (Reader *r, int code, const char *fmt, ...)
{
  char what[256];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (what, sizeof what, fmt, ap);
  va_end (ap);
  return tg_error_set (r->err, code, NULL, "%s: %s", r->path, what);
}

static json_object *
get (json_object *o, const char *key)
{
  json_object *v = NULL;

  return o && json_object_object_get_ex (o, key, &v) ? v : NULL;
}

static json_object *
item (Reader *r, const char *kind, int64_t index)
{
  json_object *arr = get (r->doc, kind);

  if (!arr || !json_object_is_type (arr, json_type_array) || index < 0
      || (size_t) index >= json_object_array_length (arr))
    return NULL;
  return json_object_array_get_idx (arr, (size_t) index);
}

/* KEY of O into *OUT when it is an array (NULL when absent); an error
 * naming it when it is anything else, on which json-c's array calls
 * would abort. */
static int
get_array (Reader *r, json_object *o, const char *key, const char *owner, json_object **out)
{
  json_object *v = get (o, key);

  *out = NULL;
  if (v && !json_object_is_type (v, json_type_array))
    return fail (r, TG_EPARSE, "%s\"%s\" is not an array", owner, key);
  *out = v;
  return 0;
}

static int64_t
get_int (json_object *o, const char *key, int64_t def)
{
  json_object *v = get (o, key);

  return v && json_object_is_type (v, json_type_int) ? json_object_get_int64 (v) : def;
}

/* An accessor resolved to bytes: COUNT elements of N components of
 * COMP_SIZE bytes, element i at BASE + i * STRIDE. */
typedef struct
{
  const uint8_t *base;
  int64_t count;
  int n, comp_type, comp_size;
  size_t stride;
  bool normalized;
} Acc;

static int
accessor (Reader *r, int64_t index, Acc *a)
{
  json_object *o = item (r, "accessors", index), *view;
  const char *type;
  int64_t view_i, byte_off, view_off, view_len, stride;

  memset (a, 0, sizeof *a);
  if (!o)
    return fail (r, TG_EPARSE, "an accessor index is out of range");
  if (get (o, "sparse"))
    return fail (r, TG_EFORMAT, "sparse accessors are not supported");
  type = json_object_get_string (get (o, "type"));
  a->n = !type ? 0
         : !strcmp (type, "SCALAR") ? 1
         : !strcmp (type, "VEC2")   ? 2
         : !strcmp (type, "VEC3")   ? 3
         : !strcmp (type, "VEC4")   ? 4
                                    : 0;
  a->comp_type = (int) get_int (o, "componentType", 0);
  a->comp_size = a->comp_type == 5126 || a->comp_type == 5125 ? 4
                 : a->comp_type == 5123 || a->comp_type == 5122 ? 2
                 : a->comp_type == 5121 || a->comp_type == 5120 ? 1
                                                                : 0;
  a->count = get_int (o, "count", -1);
  a->normalized = json_object_get_boolean (get (o, "normalized"));
  if (!a->n || !a->comp_size || a->count < 1)
    return fail (r, TG_EPARSE, "an accessor has a bad type, component type or count");
  view_i = get_int (o, "bufferView", -1);
  view = item (r, "bufferViews", view_i);
  if (!view)
    return fail (r, TG_EFORMAT, "an accessor without a buffer view is not supported");
  if (get_int (view, "buffer", -1) != 0)
    return fail (r, TG_EFORMAT, "only the GLB's own binary chunk can hold data");
  byte_off = get_int (o, "byteOffset", 0);
  view_off = get_int (view, "byteOffset", 0);
  view_len = get_int (view, "byteLength", -1);
  stride = get_int (view, "byteStride", 0);
  if (stride == 0)
    stride = (int64_t) a->n * a->comp_size;
  if (byte_off < 0 || view_off < 0 || view_len < 0 || stride < (int64_t) a->n * a->comp_size
      || (uint64_t) view_off + (uint64_t) view_len > r->bin_len)
    return fail (r, TG_EPARSE, "a buffer view lies outside the binary chunk");
  /* The last element must end inside the view. */
  if ((uint64_t) byte_off + (uint64_t) (a->count - 1) * (uint64_t) stride
        + (uint64_t) a->n * (uint64_t) a->comp_size
      > (uint64_t) view_len)
    return fail (r, TG_EPARSE, "an accessor runs past the end of its buffer view");
  a->base = r->bin + view_off + byte_off;
  a->stride = (size_t) stride;
  return 0;
}

static float
acc_float (const Acc *a, int64_t i, int c)
{
  const uint8_t *p = a->base + (size_t) i * a->stride + (size_t) c * (size_t) a->comp_size;
  float f;

  memcpy (&f, p, sizeof f);
  return f;
}

static uint32_t
acc_index (const Acc *a, int64_t i)
{
  const uint8_t *p = a->base + (size_t) i * a->stride;

  switch (a->comp_type)
    {
    case 5121:
      return p[0];
    case 5123:
      return (uint32_t) p[0] | (uint32_t) p[1] << 8;
    default:
      return rd32 (p);
    }
}

/* 4 x 4 column-major matrices, as glTF writes them. */
static void
mat_mul (const double a[16], const double b[16], double out[16])
{
  double t[16];

  for (int col = 0; col < 4; col++)
    for (int row = 0; row < 4; row++)
      {
        double s = 0.0;
        for (int k = 0; k < 4; k++)
          s += a[k * 4 + row] * b[col * 4 + k];
        t[col * 4 + row] = s;
      }
  memcpy (out, t, sizeof t);
}

static int
node_matrix (Reader *r, json_object *node, const char *owner, double m[16])
{
  json_object *mat = get (node, "matrix"), *tr, *rot, *sc;
  double t[3] = { 0, 0, 0 }, q[4] = { 0, 0, 0, 1 }, s[3] = { 1, 1, 1 };
  double x, y, z, w;
  int rc;

  if (mat && json_object_is_type (mat, json_type_array) && json_object_array_length (mat) == 16)
    {
      for (int i = 0; i < 16; i++)
        m[i] = json_object_get_double (json_object_array_get_idx (mat, (size_t) i));
      return 0;
    }
  if ((rc = get_array (r, node, "translation", owner, &tr)) < 0
      || (rc = get_array (r, node, "rotation", owner, &rot)) < 0
      || (rc = get_array (r, node, "scale", owner, &sc)) < 0)
    return rc;
  for (int i = 0; tr && i < 3 && (size_t) i < json_object_array_length (tr); i++)
    t[i] = json_object_get_double (json_object_array_get_idx (tr, (size_t) i));
  for (int i = 0; rot && i < 4 && (size_t) i < json_object_array_length (rot); i++)
    q[i] = json_object_get_double (json_object_array_get_idx (rot, (size_t) i));
  for (int i = 0; sc && i < 3 && (size_t) i < json_object_array_length (sc); i++)
    s[i] = json_object_get_double (json_object_array_get_idx (sc, (size_t) i));
  x = q[0];
  y = q[1];
  z = q[2];
  w = q[3];
  m[0] = (1 - 2 * (y * y + z * z)) * s[0];
  m[1] = 2 * (x * y + z * w) * s[0];
  m[2] = 2 * (x * z - y * w) * s[0];
  m[3] = 0;
  m[4] = 2 * (x * y - z * w) * s[1];
  m[5] = (1 - 2 * (x * x + z * z)) * s[1];
  m[6] = 2 * (y * z + x * w) * s[1];
  m[7] = 0;
  m[8] = 2 * (x * z + y * w) * s[2];
  m[9] = 2 * (y * z - x * w) * s[2];
  m[10] = (1 - 2 * (x * x + y * y)) * s[2];
  m[11] = 0;
  m[12] = t[0];
  m[13] = t[1];
  m[14] = t[2];
  m[15] = 1;
  return 0;
}

static int
add_chunk (Reader *r, TgMeshChunk **out)
{
  TgMesh *m = r->mesh;
  TgMeshChunk *grown = realloc (m->chunks, sizeof (TgMeshChunk) * (size_t) (m->n_chunks + 1));

  if (!grown)
    return fail (r, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  m->chunks = grown;
  memset (&m->chunks[m->n_chunks], 0, sizeof (TgMeshChunk));
  *out = &m->chunks[m->n_chunks++];
  return 0;
}

static int
read_primitive (Reader *r, json_object *prim, const double m[16], const char *name)
{
  json_object *attrs = get (prim, "attributes");
  int64_t mode = get_int (prim, "mode", 4), ind_i = get_int (prim, "indices", -1);
  Acc pos, nrm = { 0 }, uv = { 0 }, ind = { 0 };
  bool has_nrm = false, has_uv = false;
  TgMeshChunk *ch = NULL;
  double det, sign, nm[9];
  int64_t n_idx;
  int rc;

  if (mode != 4)
    return 0; /* points, lines and strips: not a surface */
  if ((rc = accessor (r, get_int (attrs, "POSITION", -1), &pos)) < 0)
    return rc;
  if (pos.n != 3 || pos.comp_type != 5126)
    return fail (r, TG_EFORMAT, "POSITION must be float VEC3");
  if (pos.count > INT32_MAX)
    return fail (r, TG_ERANGE, "too many vertices");
  if (get (attrs, "NORMAL"))
    {
      if ((rc = accessor (r, get_int (attrs, "NORMAL", -1), &nrm)) < 0)
        return rc;
      has_nrm = nrm.n == 3 && nrm.comp_type == 5126 && nrm.count == pos.count;
    }
  if (get (attrs, "TEXCOORD_0"))
    {
      if ((rc = accessor (r, get_int (attrs, "TEXCOORD_0", -1), &uv)) < 0)
        return rc;
      has_uv = uv.n == 2 && uv.comp_type == 5126 && uv.count == pos.count;
    }
  if (ind_i >= 0)
    {
      if ((rc = accessor (r, ind_i, &ind)) < 0)
        return rc;
      if (ind.n != 1 || (ind.comp_type != 5121 && ind.comp_type != 5123 && ind.comp_type != 5125))
        return fail (r, TG_EFORMAT, "indices must be unsigned integer scalars");
      n_idx = ind.count;
    }
  else
    n_idx = pos.count;
  n_idx -= n_idx % 3;
  if (n_idx < 3)
    return 0;
  r->n_vertices += pos.count;
  r->n_indices += n_idx;
  if (r->n_vertices > MAX_VERTICES || r->n_indices > MAX_INDICES)
    return fail (r, TG_ERANGE, "the scene has more than %d vertices or %" PRId64 " indices",
                 MAX_VERTICES, MAX_INDICES);

  if ((rc = add_chunk (r, &ch)) < 0)
    return rc;
  if (tg_mesh_chunk_alloc (ch, (int) pos.count, n_idx, has_uv) < 0
      || tg_mesh_chunk_set_name (ch, name) < 0)
    return fail (r, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);

  /* Normals go through the inverse transpose of the upper 3 x 3, i.e. its
   * cofactor matrix divided by the determinant (only the determinant's
   * sign matters after normalising: a mirror must not turn them inward);
   * nm[3 * k + c] is the cofactor of row c, column k. */
  nm[0] = m[5] * m[10] - m[6] * m[9];
  nm[1] = m[6] * m[8] - m[4] * m[10];
  nm[2] = m[4] * m[9] - m[5] * m[8];
  nm[3] = m[2] * m[9] - m[1] * m[10];
  nm[4] = m[0] * m[10] - m[2] * m[8];
  nm[5] = m[1] * m[8] - m[0] * m[9];
  nm[6] = m[1] * m[6] - m[2] * m[5];
  nm[7] = m[2] * m[4] - m[0] * m[6];
  nm[8] = m[0] * m[5] - m[1] * m[4];
  det = m[0] * nm[0] + m[4] * nm[3] + m[8] * nm[6];
  sign = det < 0.0 ? -1.0 : 1.0;

  for (int64_t i = 0; i < pos.count; i++)
    {
      double p[3] = { acc_float (&pos, i, 0), acc_float (&pos, i, 1), acc_float (&pos, i, 2) };
      for (int c = 0; c < 3; c++)
        ch->positions[3 * i + c] = (float) (m[c] * p[0] + m[4 + c] * p[1] + m[8 + c] * p[2]
                                            + m[12 + c]);
      if (has_nrm)
        {
          double n[3] = { acc_float (&nrm, i, 0), acc_float (&nrm, i, 1),
                          acc_float (&nrm, i, 2) }, o[3], l;
          for (int c = 0; c < 3; c++)
            o[c] = (nm[c] * n[0] + nm[3 + c] * n[1] + nm[6 + c] * n[2]) * sign;
          l = sqrt (o[0] * o[0] + o[1] * o[1] + o[2] * o[2]);
          for (int c = 0; c < 3; c++)
            ch->normals[3 * i + c] = l > 0.0 ? (float) (o[c] / l) : (c == 1 ? 1.0f : 0.0f);
        }
      if (has_uv)
        {
          ch->uvs[2 * i] = acc_float (&uv, i, 0);
          ch->uvs[2 * i + 1] = acc_float (&uv, i, 1);
        }
    }
  for (int64_t i = 0; i < n_idx; i++)
    {
      uint32_t v = ind_i >= 0 ? acc_index (&ind, i) : (uint32_t) i;
      if ((int64_t) v >= pos.count)
        return fail (r, TG_EPARSE, "an index points past the vertices");
      ch->indices[i] = v;
    }
  /* A mirroring transform turns the faces inside out: swap the winding. */
  if (det < 0.0)
    for (int64_t i = 0; i < n_idx; i += 3)
      {
        uint32_t t = ch->indices[i + 1];
        ch->indices[i + 1] = ch->indices[i + 2];
        ch->indices[i + 2] = t;
      }
  if (!has_nrm)
    {
      /* Area-weighted face normals summed per vertex. */
      memset (ch->normals, 0, sizeof (float) * 3 * (size_t) pos.count);
      for (int64_t i = 0; i < n_idx; i += 3)
        {
          const float *a = ch->positions + 3 * ch->indices[i];
          const float *b = ch->positions + 3 * ch->indices[i + 1];
          const float *c = ch->positions + 3 * ch->indices[i + 2];
          double e1[3] = { b[0] - a[0], b[1] - a[1], b[2] - a[2] };
          double e2[3] = { c[0] - a[0], c[1] - a[1], c[2] - a[2] };
          double n[3] = { e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                          e1[0] * e2[1] - e1[1] * e2[0] };
          for (int k = 0; k < 3; k++)
            for (int cc = 0; cc < 3; cc++)
              ch->normals[3 * ch->indices[i + k] + cc] += (float) n[cc];
        }
      for (int64_t i = 0; i < pos.count; i++)
        {
          float *n = ch->normals + 3 * i;
          double l = sqrt ((double) n[0] * n[0] + (double) n[1] * n[1] + (double) n[2] * n[2]);
          if (l > 0.0)
            for (int cc = 0; cc < 3; cc++)
              n[cc] = (float) (n[cc] / l);
          else
            {
              n[0] = n[2] = 0.0f;
              n[1] = 1.0f;
            }
        }
    }
  /* File frame -> world. */
  for (int64_t i = 0; i < pos.count; i++)
    {
      tg__hand_vec3 (ch->positions + 3 * i, ch->positions + 3 * i);
      tg__hand_vec3 (ch->normals + 3 * i, ch->normals + 3 * i);
    }
  for (int64_t i = 0; i < n_idx; i += 3)
    tg__hand_tri (ch->indices + i, ch->indices + i);
  return 0;
}

static int
read_node (Reader *r, int64_t index, const double parent[16], int depth)
{
  json_object *node = item (r, "nodes", index), *children;
  double local[16], world[16];
  char owner[48];
  int64_t mesh_i;
  int rc;

  if (!node)
    return fail (r, TG_EPARSE, "a node index is out of range");
  /* Also catches cycles. */
  if (r->visited[index])
    return fail (r, TG_EPARSE,
                 "node %" PRId64 " is reached twice: the node hierarchy is not a tree", index);
  r->visited[index] = true;
  if (depth > MAX_DEPTH)
    return fail (r, TG_EPARSE, "the node hierarchy is more than %d levels deep", MAX_DEPTH);
  snprintf (owner, sizeof owner, "node %" PRId64 ": ", index);
  if ((rc = node_matrix (r, node, owner, local)) < 0
      || (rc = get_array (r, node, "children", owner, &children)) < 0)
    return rc;
  mat_mul (parent, local, world);
  mesh_i = get_int (node, "mesh", -1);
  if (mesh_i >= 0)
    {
      json_object *mesh = item (r, "meshes", mesh_i), *prims;
      const char *mname;
      if (!mesh)
        return fail (r, TG_EPARSE, "a mesh index is out of range");
      snprintf (owner, sizeof owner, "mesh %" PRId64 ": ", mesh_i);
      if ((rc = get_array (r, mesh, "primitives", owner, &prims)) < 0)
        return rc;
      mname = json_object_get_string (get (mesh, "name"));
      for (size_t p = 0; prims && p < json_object_array_length (prims); p++)
        {
          char name[160];
          snprintf (name, sizeof name, "%s_%zu", mname ? mname : "mesh", p);
          if ((rc = read_primitive (r, json_object_array_get_idx (prims, p), world, name)) < 0)
            return rc;
        }
    }
  for (size_t c = 0; children && c < json_object_array_length (children); c++)
    if ((rc = read_node (r, json_object_get_int64 (json_object_array_get_idx (children, c)),
                         world, depth + 1))
        < 0)
      return rc;
  return 0;
}

int
tg__read_mesh_glb (const char *path, TgMesh **out, TgError *err)
{
  static const double identity[16] = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1 };
  Reader r = { .path = path, .err = err };
  char *data = NULL, *json_text = NULL;
  size_t len = 0, off;
  uint32_t total;
  json_object *scenes, *roots = NULL, *scene, *nodes;
  size_t n_nodes;
  bool ok;
  int rc;

  *out = NULL;
  if ((rc = tg__read_file (path, &data, &len, err)) < 0)
    return rc;
  if (len < 20 || rd32 ((uint8_t *) data) != GLB_MAGIC || rd32 ((uint8_t *) data + 4) != 2)
    {
      rc = fail (&r, TG_EFORMAT, "not a glTF 2.0 binary (.glb)");
      goto out;
    }
  total = rd32 ((uint8_t *) data + 8);
  if (total > len)
    {
      rc = fail (&r, TG_EPARSE, "the file is shorter than its header says");
      goto out;
    }
  for (off = 12; off + 8 <= total;)
    {
      uint32_t clen = rd32 ((uint8_t *) data + off), ctype = rd32 ((uint8_t *) data + off + 4);
      if ((uint64_t) off + 8 + clen > total)
        {
          rc = fail (&r, TG_EPARSE, "a chunk runs past the end of the file");
          goto out;
        }
      if (ctype == CHUNK_JSON && !json_text)
        {
          /* The JSON parser takes an int length. */
          if (clen >= INT32_MAX)
            {
              rc = fail (&r, TG_ERANGE, "the JSON chunk is too large");
              goto out;
            }
          json_text = malloc ((size_t) clen + 1);
          if (!json_text)
            {
              rc = fail (&r, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
              goto out;
            }
          memcpy (json_text, data + off + 8, clen);
          json_text[clen] = '\0';
        }
      else if (ctype == CHUNK_BIN && !r.bin)
        {
          r.bin = (const uint8_t *) data + off + 8;
          r.bin_len = clen;
        }
      off += 8 + (size_t) clen;
    }
  if (!json_text)
    {
      rc = fail (&r, TG_EPARSE, "no JSON chunk");
      goto out;
    }
  r.doc = tg__json_parse (json_text, &ok);
  if (!r.doc || !json_object_is_type (r.doc, json_type_object))
    {
      rc = fail (&r, TG_EPARSE, "the JSON chunk is not a JSON object");
      goto out;
    }
  if ((rc = get_array (&r, r.doc, "nodes", "", &nodes)) < 0)
    goto out;
  n_nodes = nodes ? json_object_array_length (nodes) : 0;
  r.visited = calloc (n_nodes ? n_nodes : 1, sizeof (bool));
  r.mesh = tg_mesh_new (0);
  if (!r.mesh || !r.visited)
    {
      rc = fail (&r, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
      goto out;
    }

  scenes = get (r.doc, "scenes");
  scene = item (&r, "scenes", get_int (r.doc, "scene", 0));
  if (scene && (rc = get_array (&r, scene, "nodes", "the scene: ", &roots)) < 0)
    goto out;
  if (roots)
    {
      for (size_t i = 0; i < json_object_array_length (roots); i++)
        if ((rc = read_node (&r, json_object_get_int64 (json_object_array_get_idx (roots, i)),
                             identity, 0))
            < 0)
          goto out;
    }
  else if (!scenes)
    {
      /* No scene: every node that is nobody's child is a root. */
      size_t n = n_nodes;
      bool *child = calloc (n ? n : 1, sizeof (bool));
      if (!child)
        {
          rc = fail (&r, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
          goto out;
        }
      for (size_t i = 0; i < n; i++)
        {
          json_object *ch = get (json_object_array_get_idx (nodes, i), "children");
          if (ch && !json_object_is_type (ch, json_type_array))
            continue; /* read_node names it */
          for (size_t c = 0; ch && c < json_object_array_length (ch); c++)
            {
              int64_t k = json_object_get_int64 (json_object_array_get_idx (ch, c));
              if (k >= 0 && (size_t) k < n)
                child[k] = true;
            }
        }
      for (size_t i = 0; i < n && rc == 0; i++)
        if (!child[i])
          rc = read_node (&r, (int64_t) i, identity, 0);
      free (child);
      if (rc < 0)
        goto out;
    }
  if (r.mesh->n_chunks == 0)
    {
      rc = fail (&r, TG_EFORMAT, "no triangle meshes in the scene");
      goto out;
    }
  *out = r.mesh;
  r.mesh = NULL;
  rc = 0;

out:
  if (r.mesh)
    tg_mesh_free (r.mesh);
  free (r.visited);
  json_object_put (r.doc);
  free (json_text);
  free (data);
  return rc;
}
