/* The "glb" mesh writer (glTF 2.0 binary) and the mesh checks all mesh
 * writers share.
 *
 * Each chunk with triangles becomes one mesh with one primitive
 * (POSITION with min/max, NORMAL, TEXCOORD_0 when the chunk has UVs,
 * indices as uint16 when the chunk has at most 65535 vertices, so that no
 * index is the restart value 65535, uint32 otherwise) and one node named
 * after the chunk, all sharing one plain material.  Chunks without
 * triangles are left out, and with the first level only (lods: first, as
 * in every mesh writer) the chunks of lod > 0 too.  Levels of detail of
 * one tile ("chunk_x1_z2_lod0", "..._lod1", ...) are grouped
 * with MSFT_lod: the scene shows the full-resolution chunks, each naming
 * its coarser levels and the screen coverage at which each takes over
 * (a quarter as much for every halving), so a reader without the
 * extension draws each tile once instead of its levels on top of one
 * another.  glTF is
 * right-handed, so positions and normals go out with z = -north and each
 * triangle's order reversed (handedness.h): north is -Z, the file is not
 * mirrored.  UVs are unchanged: glTF puts v = 0 at the image's top row,
 * as our image convention does.  The views point straight into the mesh
 * and are converted as the file is written: nothing is copied.
 *
 * With a colour map in the options the material (white factor) takes it
 * as baseColorTexture, a PNG in the buffer; chunks without UVs keep a
 * plain grey material.  compress quantize/meshopt (KHR_mesh_quantization,
 * EXT_meshopt_compression) copies each chunk into quantized arrays on one
 * grid for the whole mesh (Quant below) and, for meshopt, compresses
 * them with meshoptimizer; the defaults write the bytes they always did.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef TG_HAVE_MESHOPT
#include <meshoptimizer.h>
#endif

#include "glb-builder.h"
#include "handedness.h"
#include "mesh-writers.h"
#include "tgformats-private.h"

static const char *
chunk_label (const TgMeshChunk *c)
{
  return c->name ? c->name : "unnamed";
}

/* Whether the build writing F was cancelled, looked at once every
 * CANCEL_EVERY items of a loop over a mesh (about a millisecond). */
#define CANCEL_EVERY (1 << 20)

static bool
cancelled_at (FILE *f, int64_t i)
{
  return i % CANCEL_EVERY == 0 && tg_io_stream_cancelled (f);
}

static int
cancelled_error (const char *format, TgError *err)
{
  return tg_error_set (err, TG_ECANCELLED, "", "%s: cancelled", format);
}

int
tg__mesh_check (FILE *f, const TgMesh *m, const char *format, TgError *err)
{
  if (!m)
    return tg_error_set (err, TG_EINVAL, "", "%s: no mesh", format);
  for (int ci = 0; ci < m->n_chunks; ci++)
    {
      const TgMeshChunk *c = &m->chunks[ci];
      char where[64];

      if (tg_io_stream_cancelled (f))
        return cancelled_error (format, err);
      snprintf (where, sizeof where, "chunks[%d]", ci);
      if (c->n_vertices < 0 || c->n_indices < 0 || c->n_indices % 3 != 0)
        return tg_error_set (err, TG_EINVAL, where,
                             "%s: chunk %s has %lld indices, not a whole number of triangles",
                             format, chunk_label (c), (long long) c->n_indices);
      if (c->n_indices == 0)
        continue;
      if (!c->positions || !c->normals || !c->indices)
        return tg_error_set (err, TG_EINVAL, where, "%s: chunk %s lacks positions or normals",
                             format, chunk_label (c));
      for (int64_t i = 0; i < c->n_indices; i++)
        if (cancelled_at (f, i + 1))
          return cancelled_error (format, err);
        else if (c->indices[i] >= (uint32_t) c->n_vertices)
          return tg_error_set (err, TG_EINVAL, where,
                               "%s: chunk %s: index %lld is %u, past its %d vertices", format,
                               chunk_label (c), (long long) i, c->indices[i], c->n_vertices);
      for (int64_t i = 0; i < 3 * (int64_t) c->n_vertices; i++)
        if (cancelled_at (f, i + 1))
          return cancelled_error (format, err);
        else if (!isfinite (c->positions[i]) || !isfinite (c->normals[i]))
          return tg_error_set (err, TG_EINVAL, where,
                               "%s: chunk %s: vertex %lld has a non-finite position or normal",
                               format, chunk_label (c), (long long) (i / 3));
    }
  return 0;
}

/* COUNT float vec3s of DATA (world) as an accessor in the file's frame;
 * WITH_BOUNDS adds min/max of the converted floats, exactly as stored. */
static int
add_vec3s (TgGlb *g, const float *data, int64_t count, bool with_bounds)
{
  double lo[3], hi[3];
  int view;

  if (with_bounds)
    {
      float flo[3], fhi[3], v[3];

      tg__hand_vec3 (flo, data);
      memcpy (fhi, flo, sizeof fhi);
      for (int64_t i = 1; i < count; i++)
        {
          tg__hand_vec3 (v, data + 3 * i);
          for (int c = 0; c < 3; c++)
            {
              flo[c] = v[c] < flo[c] ? v[c] : flo[c];
              fhi[c] = v[c] > fhi[c] ? v[c] : fhi[c];
            }
        }
      for (int c = 0; c < 3; c++)
        {
          lo[c] = flo[c];
          hi[c] = fhi[c];
        }
    }
  view = tg_glb_add_view_encoded (g, data, (size_t) count * 12, TG_GLB_ARRAY_BUFFER, 12,
                                  tg__hand_vec3s);
  if (view < 0)
    return view;
  return tg_glb_add_accessor (g, view, 0, TG_GLB_FLOAT, "VEC3", count, false,
                              with_bounds ? lo : NULL, with_bounds ? hi : NULL);
}

int
tg__glb_add_chunk (TgGlb *g, const TgMeshChunk *c, TgGlbAttribute attrs[3], int *indices)
{
  int n = 0, view;
  bool short16;

  if (c->n_vertices < 1 || c->n_indices < 3)
    return TG_EINVAL;
  attrs[n++] = (TgGlbAttribute) { "POSITION", add_vec3s (g, c->positions, c->n_vertices, true) };
  attrs[n++] = (TgGlbAttribute) { "NORMAL", add_vec3s (g, c->normals, c->n_vertices, false) };
  if (c->uvs)
    attrs[n++] = (TgGlbAttribute) {
      "TEXCOORD_0", tg_glb_add_floats (g, c->uvs, c->n_vertices, 2, TG_GLB_ARRAY_BUFFER, false)
    };
  /* Half the index bytes for the chunks that fit in 16 bits. */
  short16 = c->n_vertices <= TG_GLB_MAX_SHORT_VERTICES;
  view = short16 ? tg_glb_add_view_converted (g, c->indices, (size_t) c->n_indices * 2,
                                              TG_GLB_ELEMENT_ARRAY_BUFFER, 6, 12, tg__hand_tris16)
                 : tg_glb_add_view_encoded (g, c->indices, (size_t) c->n_indices * 4,
                                            TG_GLB_ELEMENT_ARRAY_BUFFER, 12, tg__hand_tris);
  *indices = view < 0 ? view
                      : tg_glb_add_accessor (g, view, 0,
                                             short16 ? TG_GLB_UNSIGNED_SHORT : TG_GLB_UNSIGNED_INT,
                                             "SCALAR", c->n_indices, false, NULL, NULL);
  for (int a = 0; a < n; a++)
    if (attrs[a].accessor < 0)
      return attrs[a].accessor;
  return *indices < 0 ? *indices : n;
}

/* --- quantized and compressed chunks --------------------------------------- */

/* One grid for the positions of every chunk (KHR_mesh_quantization): the
 * file-frame position p is stored as q = round ((p - ORIGIN) / STEP),
 * 0..65535 on each axis, and every node carries translation ORIGIN and
 * the uniform scale STEP.  One grid, so that a vertex two chunks share
 * lands on the same step in both (no cracks between tiles); one step for
 * all three axes, so that the node's scale leaves normals as they are. */
typedef struct
{
  float origin[3];
  float step;
  bool meshopt;
} Quant;

static void
quant_grid (const TgMesh *m, Quant *q)
{
  float lo[3] = { 0 }, hi[3] = { 0 };
  bool any = false;
  double extent = 0.0;

  for (int ci = 0; ci < m->n_chunks; ci++)
    {
      const TgMeshChunk *c = &m->chunks[ci];
      if (c->n_indices == 0)
        continue;
      for (int i = 0; i < c->n_vertices; i++)
        {
          float v[3];
          tg__hand_vec3 (v, c->positions + 3 * i);
          for (int a = 0; a < 3; a++)
            {
              lo[a] = !any || v[a] < lo[a] ? v[a] : lo[a];
              hi[a] = !any || v[a] > hi[a] ? v[a] : hi[a];
            }
          any = true;
        }
    }
  for (int a = 0; a < 3; a++)
    {
      q->origin[a] = lo[a];
      if ((double) hi[a] - (double) lo[a] > extent)
        extent = (double) hi[a] - (double) lo[a];
    }
  /* Rounded up, so that the largest coordinate stays within 65535 steps. */
  q->step = extent > 0.0 ? nextafterf ((float) (extent / 65535.0), INFINITY) : 1.0f;
}

static uint16_t
quant_position (const Quant *q, float v, int axis)
{
  double s = ((double) v - (double) q->origin[axis]) / (double) q->step;
  s = floor (s + 0.5);
  return (uint16_t) (s < 0.0 ? 0.0 : s > 65535.0 ? 65535.0 : s);
}

static int8_t
quant_snorm8 (float v)
{
  double s = floor ((double) v * 127.0 + 0.5);
  return (int8_t) (s < -127.0 ? -127.0 : s > 127.0 ? 127.0 : s);
}

/* A view of BYTES at DATA (owned): plain, or meshopt-compressed as
 * COUNT elements of STRIDE bytes (MODE), then freed. */
static int
quant_view (TgGlb *g, const Quant *q, void *data, size_t count, size_t stride, int mode,
            int target)
{
#ifdef TG_HAVE_MESHOPT
  if (q->meshopt)
    {
      size_t bound, n;
      uint8_t *out;

      if (mode == TG_GLB_MESHOPT_ATTRIBUTES)
        bound = meshopt_encodeVertexBufferBound (count, stride);
      else
        bound = meshopt_encodeIndexBufferBound (count, count);
      if (!(out = malloc (bound)))
        {
          free (data);
          return TG_ENOMEM;
        }
      if (mode == TG_GLB_MESHOPT_ATTRIBUTES)
        n = meshopt_encodeVertexBuffer (out, bound, data, count, stride);
      else
        {
          /* The codec takes 32-bit indices whatever the file stores;
           * version 1 is the one the extension's TRIANGLES mode reads. */
          uint32_t *idx = malloc (count * sizeof *idx);
          if (!idx)
            {
              free (data);
              free (out);
              return TG_ENOMEM;
            }
          for (size_t i = 0; i < count; i++)
            idx[i] = stride == 2 ? ((const uint16_t *) data)[i] : ((const uint32_t *) data)[i];
          meshopt_encodeIndexVersion (1);
          n = meshopt_encodeIndexBuffer (out, bound, idx, count);
          free (idx);
        }
      free (data);
      if (n == 0)
        {
          free (out);
          return TG_EINVAL;
        }
      return tg_glb_add_view_meshopt (g, out, n, target,
                                      &(TgGlbMeshopt) { mode, count, stride });
    }
#endif
  return tg_glb_add_view_owned (g, data, count * stride, target,
                                mode == TG_GLB_MESHOPT_ATTRIBUTES ? stride : 0);
}

/* Like tg__glb_add_chunk, with KHR_mesh_quantization under Q: POSITION
 * as uint16 (VEC3 in 8 bytes) on Q's grid, NORMAL as normalized int8
 * (in 4 bytes), TEXCOORD_0 as normalized uint16 when every UV lies in
 * 0..1 (floats otherwise), the same indices; all copied now. */
static int
add_chunk_quantized (TgGlb *g, const Quant *q, const TgMeshChunk *c, TgGlbAttribute attrs[3],
                     int *indices)
{
  size_t nv = (size_t) c->n_vertices, ni = (size_t) c->n_indices;
  uint16_t *pos = calloc (nv, 8);
  int8_t *nrm = calloc (nv, 4);
  uint16_t *uv = NULL;
  bool short16 = c->n_vertices <= TG_GLB_MAX_SHORT_VERTICES, uv_unit = c->uvs != NULL;
  void *idx = malloc (ni * (short16 ? 2 : 4));
  double lo[3] = { 65535, 65535, 65535 }, hi[3] = { 0, 0, 0 };
  int n = 0, view;

  for (size_t i = 0; uv_unit && i < 2 * nv; i++)
    uv_unit = c->uvs[i] >= 0.0f && c->uvs[i] <= 1.0f;
  if (uv_unit)
    uv = malloc (nv * 4);
  if (!pos || !nrm || !idx || (uv_unit && !uv))
    {
      free (pos);
      free (nrm);
      free (uv);
      free (idx);
      return TG_ENOMEM;
    }
  for (size_t i = 0; i < nv; i++)
    {
      float p[3], nn[3];
      tg__hand_vec3 (p, c->positions + 3 * i);
      tg__hand_vec3 (nn, c->normals + 3 * i);
      for (int a = 0; a < 3; a++)
        {
          pos[4 * i + a] = quant_position (q, p[a], a);
          lo[a] = pos[4 * i + a] < lo[a] ? pos[4 * i + a] : lo[a];
          hi[a] = pos[4 * i + a] > hi[a] ? pos[4 * i + a] : hi[a];
          nrm[4 * i + a] = quant_snorm8 (nn[a]);
        }
      if (uv)
        for (int a = 0; a < 2; a++)
          uv[2 * i + a] = (uint16_t) tg_quantise (c->uvs[2 * i + a], 65535.0);
    }
  for (size_t t = 0; t < ni; t += 3)
    {
      uint32_t tri[3];
      tg__hand_tri (tri, c->indices + t);
      for (int a = 0; a < 3; a++)
        if (short16)
          ((uint16_t *) idx)[t + a] = (uint16_t) tri[a];
        else
          ((uint32_t *) idx)[t + a] = tri[a];
    }

  view = quant_view (g, q, pos, nv, 8, TG_GLB_MESHOPT_ATTRIBUTES, TG_GLB_ARRAY_BUFFER);
  attrs[n++] = (TgGlbAttribute) {
    "POSITION", view < 0 ? view
                         : tg_glb_add_accessor (g, view, 0, TG_GLB_UNSIGNED_SHORT, "VEC3",
                                                c->n_vertices, false, lo, hi) };
  view = quant_view (g, q, nrm, nv, 4, TG_GLB_MESHOPT_ATTRIBUTES, TG_GLB_ARRAY_BUFFER);
  attrs[n++] = (TgGlbAttribute) {
    "NORMAL", view < 0 ? view
                       : tg_glb_add_accessor (g, view, 0, TG_GLB_BYTE, "VEC3", c->n_vertices,
                                              true, NULL, NULL) };
  if (uv)
    {
      view = quant_view (g, q, uv, nv, 4, TG_GLB_MESHOPT_ATTRIBUTES, TG_GLB_ARRAY_BUFFER);
      attrs[n++] = (TgGlbAttribute) {
        "TEXCOORD_0", view < 0 ? view
                               : tg_glb_add_accessor (g, view, 0, TG_GLB_UNSIGNED_SHORT, "VEC2",
                                                      c->n_vertices, true, NULL, NULL) };
    }
  else if (c->uvs)
    attrs[n++] = (TgGlbAttribute) {
      "TEXCOORD_0", tg_glb_add_floats (g, c->uvs, c->n_vertices, 2, TG_GLB_ARRAY_BUFFER, false)
    };
  view = quant_view (g, q, idx, ni, short16 ? 2 : 4, TG_GLB_MESHOPT_TRIANGLES,
                     TG_GLB_ELEMENT_ARRAY_BUFFER);
  *indices = view < 0 ? view
                      : tg_glb_add_accessor (g, view, 0,
                                             short16 ? TG_GLB_UNSIGNED_SHORT : TG_GLB_UNSIGNED_INT,
                                             "SCALAR", c->n_indices, false, NULL, NULL);
  for (int a = 0; a < n; a++)
    if (attrs[a].accessor < 0)
      return attrs[a].accessor;
  return *indices < 0 ? *indices : n;
}

/* The colour map's rows for the PNG encoder, a band at a time, with a
 * look at the build's cancel before each: encoding a large map takes a
 * while before the file sees a byte. */
typedef struct
{
  const TgImage *img;
  FILE *outer;
} TexRows;

static int
tex_rows (void *user, int y, int n, void *dst, TgError *err)
{
  const TexRows *t = user;
  size_t row = (size_t) t->img->width * (size_t) t->img->channels * (size_t) (t->img->bits / 8);

  if (tg_io_stream_cancelled (t->outer))
    return cancelled_error ("glb", err);
  memcpy (dst, (const char *) t->img->data + (size_t) y * row, (size_t) n * row);
  return 0;
}

/* The colour map TEX as a PNG in G's buffer and MATERIAL's base colour
 * texture: 0 or a negative TG_E* code (ERR filled). */
static int
add_texture (FILE *f, TgGlb *g, int material, const TgImage *tex, TgError *err)
{
  TexRows src = { tex, f };
  TgImageRows rows = { .width = tex->width, .height = tex->height, .channels = tex->channels,
                       .bits = tex->bits, .rows = tex_rows, .user = &src };
  char *buf = NULL;
  size_t len = 0;
  FILE *mem;
  int rc, view, image, sampler, texture;

  if (!(mem = open_memstream (&buf, &len)))
    return tg_error_set (err, TG_ENOMEM, "", "glb: out of memory for the colour map");
  rc = tg__png_write_rows (mem, &rows, 8, false, err);
  if (fclose (mem) != 0 && rc == 0)
    rc = tg_error_set (err, TG_ENOMEM, "", "glb: out of memory for the colour map");
  if (rc < 0)
    {
      free (buf);
      return rc;
    }
  view = tg_glb_add_view_owned (g, buf, len, TG_GLB_TARGET_NONE, 0);
  image = view < 0 ? view : tg_glb_add_image (g, view, "image/png");
  /* Linear with mipmaps, clamped: the map covers the terrain once. */
  sampler = tg_glb_add_sampler (g, 9729, 9987, 33071, 33071);
  texture = image < 0 || sampler < 0 ? TG_ENOMEM : tg_glb_add_texture (g, sampler, image);
  rc = texture < 0 ? texture : tg_glb_material_set_base_color_texture (g, material, texture);
  if (rc < 0)
    return tg_error_set (err, rc, "", "glb: could not add the colour map: %s", tg_strerror (rc));
  return 0;
}

/* The length of NAME without a trailing "_lod<digits>": chunks with the
 * same stem are levels of detail of one tile. */
static size_t
lod_stem_len (const char *name)
{
  size_t n = strlen (name), d = n;

  while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
    d--;
  if (d < n && d >= 4 && strncmp (name + d - 4, "_lod", 4) == 0)
    return d - 4;
  return n;
}

/* Groups each full-resolution chunk that has a node with its coarser
 * levels (one per level, the first chunk found, by increasing lod).
 * NODE_OF gives each chunk's node or -1.  Looks at all chunks for each
 * (16M pairs for 4096 chunks): TG_ECANCELLED once the build writing F is
 * cancelled. */
static int
group_lods (FILE *f, TgGlb *g, const TgMesh *m, const int *node_of)
{
  size_t *stem;
  int *lods, *lod_of, rc = 0;
  float *coverage;

  if (m->n_chunks < 2)
    return 0;
  stem = malloc (sizeof (size_t) * (size_t) m->n_chunks);
  lods = malloc (sizeof (int) * (size_t) m->n_chunks);
  lod_of = malloc (sizeof (int) * (size_t) m->n_chunks);
  coverage = malloc (sizeof (float) * ((size_t) m->n_chunks + 1));
  if (!stem || !lods || !lod_of || !coverage)
    rc = TG_ENOMEM;
  for (int ci = 0; rc == 0 && ci < m->n_chunks; ci++)
    stem[ci] = m->chunks[ci].name ? lod_stem_len (m->chunks[ci].name) : 0;
  for (int ci = 0; rc == 0 && ci < m->n_chunks; ci++)
    {
      const TgMeshChunk *c = &m->chunks[ci];
      int n = 0;

      if (tg_io_stream_cancelled (f))
        {
          rc = TG_ECANCELLED;
          break;
        }
      if (c->lod != 0 || node_of[ci] < 0 || !c->name)
        continue;
      /* The coarser chunks of this stem, kept sorted by lod (stable:
       * of two of one level, the first found comes first). */
      for (int cj = 0; cj < m->n_chunks; cj++)
        {
          const TgMeshChunk *d = &m->chunks[cj];
          int k;
          if (node_of[cj] < 0 || d->lod <= 0 || !d->name || stem[cj] != stem[ci]
              || strncmp (d->name, c->name, stem[ci]) != 0)
            continue;
          for (k = n; k > 0 && lod_of[k - 1] > d->lod; k--)
            {
              lods[k] = lods[k - 1];
              lod_of[k] = lod_of[k - 1];
            }
          lods[k] = node_of[cj];
          lod_of[k] = d->lod;
          n++;
        }
      /* One node per level. */
      {
        int kept = 0;
        for (int k = 0; k < n; k++)
          if (kept == 0 || lod_of[k] != lod_of[kept - 1])
            {
              lods[kept] = lods[k];
              lod_of[kept] = lod_of[k];
              kept++;
            }
        n = kept;
      }
      if (n == 0)
        continue;
      for (int k = 0; k <= n; k++)
        coverage[k] = 0.25f / (float) (1 << (2 * (k < 12 ? k : 12)));
      rc = tg_glb_node_set_lods (g, node_of[ci], lods, n, coverage);
    }
  free (stem);
  free (lods);
  free (lod_of);
  free (coverage);
  return rc;
}

int
tg__write_mesh_glb (FILE *f, const TgMesh *m, const TgMeshWriteOptions *opt, TgError *err)
{
  static const float grey[4] = { 0.8f, 0.8f, 0.8f, 1.0f };
  static const float white[4] = { 1.0f, 1.0f, 1.0f, 1.0f };
  int rc = tg__mesh_check (f, m, "glb", err);
  TgMeshCompress compress = opt ? opt->compress : TG_MESH_COMPRESS_NONE;
  const TgImage *texture = opt ? opt->texture : NULL;
  Quant q = { .meshopt = compress == TG_MESH_COMPRESS_MESHOPT };
  TgGlb *g;
  int material = -1, textured = -1, *node_of;

  /* glTF is +Y up by definition, and MSFT_lod keeps the levels apart. */
  if (rc < 0)
    return rc;
#ifndef TG_HAVE_MESHOPT
  if (q.meshopt)
    return tg_error_set (err, TG_EFORMAT, "", "glb: compress meshopt needs meshoptimizer, "
                         "which this build lacks (Debian: libmeshoptimizer-dev)");
#endif
  if (compress != TG_MESH_COMPRESS_NONE)
    quant_grid (m, &q);
  g = tg_glb_new (NULL);
  node_of = malloc (sizeof (int) * (size_t) (m->n_chunks > 0 ? m->n_chunks : 1));
  if (!g || !node_of)
    {
      tg_glb_free (g);
      free (node_of);
      return tg_error_set (err, TG_ENOMEM, "", "glb: out of memory");
    }

  for (int ci = 0; ci < m->n_chunks; ci++)
    {
      const TgMeshChunk *c = &m->chunks[ci];
      TgGlbAttribute attrs[3];
      int n_attrs = 0, mesh, indices;
      char name[32];

      node_of[ci] = -1;
      if (!tg__mesh_chunk_wanted (c, opt))
        continue;
      /* Each chunk's bounds are taken before the first byte is written. */
      if (tg_io_stream_cancelled (f))
        {
          tg_glb_free (g);
          free (node_of);
          return cancelled_error ("glb", err);
        }
      if (compress != TG_MESH_COMPRESS_NONE)
        tg_glb_use_extension (g, "KHR_mesh_quantization", true);
      /* A texture is shown as it is (a white factor) on the chunks with
       * UVs; a chunk without them gets the plain material. */
      if (texture && c->uvs && textured < 0)
        {
          textured = tg_glb_add_material (g, "terrane", white, 0.0f, 1.0f, false);
          if ((rc = add_texture (f, g, textured, texture, err)) < 0)
            {
              tg_glb_free (g);
              free (node_of);
              return rc;
            }
        }
      else if (!(texture && c->uvs) && material < 0)
        material = tg_glb_add_material (g, texture ? "terrane_untextured" : "terrane", grey,
                                        0.0f, 1.0f, false);
      if (!c->name)
        snprintf (name, sizeof name, "chunk_%d", ci);

      n_attrs = compress != TG_MESH_COMPRESS_NONE ? add_chunk_quantized (g, &q, c, attrs, &indices)
                                                  : tg__glb_add_chunk (g, c, attrs, &indices);
      mesh = tg_glb_add_mesh (g, c->name ? c->name : name);
      rc = n_attrs < 0 ? n_attrs
                       : tg_glb_add_primitive (g, mesh, attrs, n_attrs, indices,
                                               texture && c->uvs ? textured : material,
                                               TG_GLB_TRIANGLES);
      if (rc >= 0)
        rc = node_of[ci] = tg_glb_add_node (g, c->name ? c->name : name, mesh);
      if (rc >= 0 && compress != TG_MESH_COMPRESS_NONE)
        rc = tg_glb_node_set_trs (g, node_of[ci], q.origin, NULL,
                                  (const float[3]) { q.step, q.step, q.step });
      if (rc < 0)
        {
          tg_glb_free (g);
          free (node_of);
          return tg_error_set (err, rc, "", "glb: could not add chunk %s: %s", chunk_label (c),
                               tg_strerror (rc));
        }
    }

  rc = group_lods (f, g, m, node_of);
  free (node_of);
  if (rc == TG_ECANCELLED)
    {
      tg_glb_free (g);
      return cancelled_error ("glb", err);
    }
  if (rc < 0)
    {
      tg_glb_free (g);
      return tg_error_set (err, rc, "", "glb: could not group levels of detail: %s",
                           tg_strerror (rc));
    }
  rc = tg_glb_write (g, f, err);
  tg_glb_free (g);
  return rc;
}
