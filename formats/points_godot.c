/* The "godot" instance-list writer: a Godot 4 text scene (.tscn, format 3)
 * with one MultiMeshInstance3D per prototype under a Node3D root, named
 * after the prototype, drawing the prototype's mesh (from a .glb given to
 * export.points) or the marker cone (points-writers.h), in the
 * prototype's colour: the same meshes with the same origins as the glb
 * writer, so an instance stands on its base in both.  Swap the mesh in
 * Godot for the real asset; the transforms stay.
 *
 * Each mesh is an ArrayMesh sub-resource with one surface per chunk, in
 * the surface layout of Godot 4.2 and later (format version 2):
 * vertex_data holds every position (3 floats) and then, per vertex, the
 * normal and a tangent octahedron-encoded as two 16-bit unorms each;
 * index_data holds 16-bit indices up to 65536 vertices, 32-bit above;
 * all little-endian.  Godot's front faces are clockwise where glTF's are
 * counter-clockwise, so after the change of frame (which reverses the
 * turn once) the triangles keep the world's index order.
 *
 * The MultiMesh sets transform_format = 1 (TRANSFORM_3D) before
 * instance_count: Godot sizes the buffer when the count is set, in the
 * format current at that moment.  The buffer holds 12 floats per
 * instance, the rows of the 3 x 4 matrix [basis | origin] as Godot's
 * multimesh_instance_set_transform stores them:
 *
 *   basis.x.x, basis.y.x, basis.z.x, origin.x,
 *   basis.x.y, basis.y.y, basis.z.y, origin.y,
 *   basis.x.z, basis.y.z, basis.z.z, origin.z
 *
 * where basis.x is the first column (the instance's local X axis, scaled),
 * i.e. rows of R(q) diag(s) followed by the position.  Godot is +Y up,
 * right-handed, metres, with -Z forward, so the matrices go out in the
 * file's frame (handedness.h: [M A M | M t], M = diag (1, 1, -1); north
 * is -Z) and the instances land as they do on the .glb terrain, not
 * mirrored.
 *
 * In chunks (chunk_m > 0, points_chunk.c) the root holds one Node3D per
 * chunk that has instances, "chunk_x<cx>_z<cz>" (north-west first), and
 * each of those one MultiMeshInstance3D per prototype found in it, named
 * after the prototype ("chunk_x3_z1/tree"), with a MultiMesh of its own
 * holding that chunk's instances of it in list order; the prototypes'
 * materials and meshes are shared, and only prototypes with instances
 * get them.  Streaming a chunk is showing or freeing one node.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "handedness.h"
#include "mesh-writers.h"
#include "points-writers.h"
#include "tgformats-private.h"

/* Godot refuses these in node names. */
static void
node_name (const char *name, int k, char *out, size_t size)
{
  size_t n = 0;

  for (const char *s = name; *s && n + 1 < size; s++)
    out[n++] = strchr (".:@/\"%\\", *s) ? '_' : *s;
  out[n] = '\0';
  if (n == 0)
    snprintf (out, size, "Prototype%d", k);
}

static void
put_float (FILE *f, double v)
{
  char num[32];

  fwrite (num, 1, (size_t) tg__points_format_float ((float) v, num), f);
}

/* RenderingServer::ArrayFormat bits and the primitive Godot stores. */
#define GD_FORMAT_VERTEX (UINT64_C (1) << 0)
#define GD_FORMAT_NORMAL (UINT64_C (1) << 1)
#define GD_FORMAT_TANGENT (UINT64_C (1) << 2)
#define GD_FORMAT_INDEX (UINT64_C (1) << 12)
#define GD_FORMAT_VERSION_2 (UINT64_C (1) << 35)
#define GD_PRIMITIVE_TRIANGLES 3
#define GD_MAX_SURFACES 256

/* Writes bytes as the decimal list of a PackedByteArray. */
typedef struct
{
  FILE *f;
  bool any;
} ByteList;

static void
put_byte (ByteList *b, unsigned v)
{
  fprintf (b->f, b->any ? ", %u" : "%u", v & 0xffu);
  b->any = true;
}

static void
put_u16 (ByteList *b, uint32_t v)
{
  put_byte (b, v);
  put_byte (b, v >> 8);
}

static void
put_u32 (ByteList *b, uint32_t v)
{
  put_u16 (b, v);
  put_u16 (b, v >> 16);
}

static void
put_f32 (ByteList *b, float v)
{
  uint32_t u;

  memcpy (&u, &v, sizeof u);
  put_u32 (b, u);
}

/* Godot's Vector3::octahedron_encode of unit vector N, in [0, 1]^2. */
static void
oct_encode (const double n[3], double o[2])
{
  double l = fabs (n[0]) + fabs (n[1]) + fabs (n[2]);
  double x = n[0] / l, y = n[1] / l, z = n[2] / l;

  if (z >= 0.0)
    o[0] = x, o[1] = y;
  else
    {
      o[0] = (1.0 - fabs (y)) * (x >= 0.0 ? 1.0 : -1.0);
      o[1] = (1.0 - fabs (x)) * (y >= 0.0 ? 1.0 : -1.0);
    }
  o[0] = o[0] * 0.5 + 0.5;
  o[1] = o[1] * 0.5 + 0.5;
}

static uint32_t
unorm16 (double v)
{
  v = v * 65535.0;
  return (uint32_t) (v < 0.0 ? 0.0 : (v > 65535.0 ? 65535.0 : v));
}

/* The normal N (file frame) and a tangent across it (sign +1), as the
 * 8 bytes of Godot's normal/tangent stream. */
static void
put_normal_tangent (ByteList *b, const float nf[3])
{
  double n[3] = { nf[0], nf[1], nf[2] }, a[3], t[3], o[2], l;

  /* Any unit vector across the normal will do: the meshes carry no tangents. */
  if (fabs (n[1]) < 0.9)
    a[0] = 0.0, a[1] = 1.0, a[2] = 0.0;
  else
    a[0] = 1.0, a[1] = 0.0, a[2] = 0.0;
  t[0] = a[1] * n[2] - a[2] * n[1];
  t[1] = a[2] * n[0] - a[0] * n[2];
  t[2] = a[0] * n[1] - a[1] * n[0];
  l = sqrt (t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
  for (int c = 0; c < 3; c++)
    t[c] /= l;
  oct_encode (n, o);
  put_u16 (b, unorm16 (o[0]));
  put_u16 (b, unorm16 (o[1]));
  /* Vector3::octahedron_tangent_encode: y biased into the upper half for sign +1. */
  oct_encode (t, o);
  o[1] = fmax (o[1], 1.0 / 32767.0) * 0.5 + 0.5;
  put_u16 (b, unorm16 (o[0]));
  put_u16 (b, unorm16 (o[1]));
}

/* Whether chunk CH has triangles to draw. */
static bool
chunk_drawn (const TgMeshChunk *ch)
{
  return ch->n_vertices > 0 && ch->n_indices >= 3;
}

/* One surface of an ArrayMesh: chunk CH (world frame) in the file's frame. */
static void
put_surface (FILE *f, const TgMeshChunk *ch, int material)
{
  float lo[3] = { INFINITY, INFINITY, INFINITY }, hi[3] = { -INFINITY, -INFINITY, -INFINITY };
  bool wide = ch->n_vertices > 65536;
  ByteList b = { .f = f };

  for (int v = 0; v < ch->n_vertices; v++)
    {
      float q[3];
      tg__hand_vec3 (q, ch->positions + 3 * v);
      for (int c = 0; c < 3; c++)
        {
          lo[c] = q[c] < lo[c] ? q[c] : lo[c];
          hi[c] = q[c] > hi[c] ? q[c] : hi[c];
        }
    }
  fputs ("{\n\"aabb\": AABB(", f);
  for (int c = 0; c < 6; c++)
    {
      put_float (f, c < 3 ? lo[c] : (double) hi[c - 3] - lo[c - 3]);
      fputs (c < 5 ? ", " : ")", f);
    }
  fprintf (f, ",\n\"format\": %llu,\n\"index_count\": %lld,\n\"index_data\": PackedByteArray(",
           (unsigned long long) (GD_FORMAT_VERTEX | GD_FORMAT_NORMAL | GD_FORMAT_TANGENT
                                 | GD_FORMAT_INDEX | GD_FORMAT_VERSION_2),
           (long long) ch->n_indices);
  for (int64_t i = 0; i < ch->n_indices; i++)
    {
      if (wide)
        put_u32 (&b, ch->indices[i]);
      else
        put_u16 (&b, ch->indices[i]);
    }
  fprintf (f, "),\n\"material\": SubResource(\"StandardMaterial3D_%d\"),\n"
              "\"primitive\": %d,\n\"uv_scale\": Vector4(0, 0, 0, 0),\n"
              "\"vertex_count\": %d,\n\"vertex_data\": PackedByteArray(",
           material, GD_PRIMITIVE_TRIANGLES, ch->n_vertices);
  b.any = false;
  for (int v = 0; v < ch->n_vertices; v++)
    {
      float q[3];
      tg__hand_vec3 (q, ch->positions + 3 * v);
      for (int c = 0; c < 3; c++)
        put_f32 (&b, q[c]);
    }
  for (int v = 0; v < ch->n_vertices; v++)
    {
      float n[3];
      tg__hand_vec3 (n, ch->normals + 3 * v);
      put_normal_tangent (&b, n);
    }
  fputs (")\n}", f);
}

/* The ArrayMesh sub-resource "ArrayMesh_K" showing M with material K. */
static void
put_array_mesh (FILE *f, const TgMesh *m, int k)
{
  bool first = true;

  fprintf (f, "\n[sub_resource type=\"ArrayMesh\" id=\"ArrayMesh_%d\"]\n", k);
  fputs ("_surfaces = [", f);
  for (int ci = 0; ci < m->n_chunks && !ferror (f); ci++)
    {
      if (!chunk_drawn (&m->chunks[ci]))
        continue;
      if (!first)
        fputs (", ", f);
      put_surface (f, &m->chunks[ci], k);
      first = false;
    }
  fputs ("]\n", f);
}

/* The MultiMesh sub-resource "MultiMesh_ID" drawing mesh K at the N
 * instances IDX of P. */
static void
put_multimesh (FILE *f, int64_t id, int k, const TgPoints *p, const int64_t *idx, int64_t n)
{
  fprintf (f, "\n[sub_resource type=\"MultiMesh\" id=\"MultiMesh_%lld\"]\n", (long long) id);
  fputs ("transform_format = 1\n", f);
  fprintf (f, "instance_count = %lld\n", (long long) n);
  fprintf (f, "mesh = SubResource(\"ArrayMesh_%d\")\n", k);
  fputs ("buffer = PackedFloat32Array(", f);
  for (int64_t j = 0; j < n && !tg__write_failed (f, j); j++)
    {
      double m[12];
      tg__points_matrix (p, idx[j], m);
      tg__hand_matrix34 (m);
      for (int e = 0; e < 12; e++)
        {
          if (j || e)
            fputs (", ", f);
          put_float (f, m[e]);
        }
    }
  fputs (")\n", f);
}

int
tg__write_points_godot (FILE *f, const TgPoints *p, const TgMesh *const *meshes,
                        const TgPointsWriteOptions *opt, TgError *err)
{
  TgPointsChunks ch;
  int64_t *first, *count;
  char (*names)[128];
  locale_t old;
  TgPointsCone cone;
  int rc, used = 0;

  /* The format fixes its frame (handedness.h); OPT only chunks. */
  if ((rc = tg__points_check (p, "godot", err)) < 0)
    return rc;
  for (int k = 0; meshes && k < p->n_protos; k++)
    if (meshes[k])
      {
        int n = 0;
        if ((rc = tg__mesh_check (f, meshes[k], "godot", err)) < 0)
          return rc;
        for (int ci = 0; ci < meshes[k]->n_chunks; ci++)
          n += chunk_drawn (&meshes[k]->chunks[ci]);
        if (n > GD_MAX_SURFACES)
          return tg_error_set (err, TG_ERANGE, NULL,
                               "godot: the mesh of prototype \"%s\" has %d parts; a Godot mesh "
                               "holds at most %d",
                               p->proto_names[k], n, GD_MAX_SURFACES);
      }
  if ((rc = tg__points_chunks_init (&ch, p, opt, true, "godot", err)) < 0)
    return rc;
  tg__points_cone_init (&cone);
  first = calloc ((size_t) (p->n_protos ? p->n_protos : 1), sizeof (int64_t));
  count = calloc ((size_t) (p->n_protos ? p->n_protos : 1), sizeof (int64_t));
  names = calloc ((size_t) (p->n_protos ? p->n_protos : 1), sizeof *names);
  if (!first || !count || !names)
    {
      free (first);
      free (count);
      free (names);
      tg__points_chunks_clear (&ch);
      return tg_error_set (err, TG_ENOMEM, NULL, "godot: out of memory");
    }
  /* Instances per prototype (over all chunks), and where one list's are. */
  for (int64_t gi = 0; gi < ch.n_groups; gi++)
    {
      if (count[ch.groups[gi].proto] == 0)
        used++;
      first[ch.groups[gi].proto] = ch.groups[gi].first;
      count[ch.groups[gi].proto] += ch.groups[gi].count;
    }
  /* Sibling names must differ: a repeat gets "_2", "_3", ... */
  for (int k = 0; k < p->n_protos; k++)
    {
      char base[112];
      node_name (p->proto_names[k], k, base, sizeof base);
      snprintf (names[k], sizeof names[k], "%s", base);
      for (int suffix = 2, j = 0; j < k; j++)
        if (strcmp (names[j], names[k]) == 0)
          {
            snprintf (names[k], sizeof names[k], "%s_%d", base, suffix++);
            j = -1;
          }
    }

  old = tg__points_c_locale_push ();
  /* One list: a material, a mesh and a MultiMesh for every prototype,
   * with instances or not.  Chunks: a material and a mesh for each
   * prototype that has instances, a MultiMesh per chunk and prototype. */
  fprintf (f, "[gd_scene load_steps=%lld format=3]\n",
           ch.chunked ? 2 * (long long) used + (long long) ch.n_groups + 1
                      : 3 * (long long) p->n_protos + 1);
  for (int k = 0; k < p->n_protos; k++)
    {
      float rgb[3];
      if (ch.chunked && count[k] == 0)
        continue;
      tg__points_proto_color (k, rgb);
      fprintf (f, "\n[sub_resource type=\"StandardMaterial3D\" id=\"StandardMaterial3D_%d\"]\n", k);
      fputs ("albedo_color = Color(", f);
      for (int c = 0; c < 3; c++)
        {
          put_float (f, rgb[c]);
          fputs (", ", f);
        }
      fputs ("1)\n", f);
      put_array_mesh (f, meshes && meshes[k] ? meshes[k] : &cone.mesh, k);
      if (!ch.chunked)
        put_multimesh (f, k, k, p, ch.order + first[k], count[k]);
    }
  for (int64_t gi = 0; ch.chunked && gi < ch.n_groups && !ferror (f); gi++)
    put_multimesh (f, gi, ch.groups[gi].proto, p, ch.order + ch.groups[gi].first,
                   ch.groups[gi].count);
  fputs ("\n[node name=\"Instances\" type=\"Node3D\"]\n", f);
  for (int k = 0; !ch.chunked && k < p->n_protos; k++)
    {
      fprintf (f, "\n[node name=\"%s\" type=\"MultiMeshInstance3D\" parent=\".\"]\n", names[k]);
      fprintf (f, "multimesh = SubResource(\"MultiMesh_%d\")\n", k);
    }
  for (int64_t gi = 0; ch.chunked && gi < ch.n_groups; gi++)
    {
      const TgPointsGroup *gr = &ch.groups[gi];
      char chunk[48];
      tg__points_chunk_name (gr->cx, gr->cz, chunk);
      if (gi == 0 || gr->cx != gr[-1].cx || gr->cz != gr[-1].cz)
        fprintf (f, "\n[node name=\"%s\" type=\"Node3D\" parent=\".\"]\n", chunk);
      fprintf (f, "\n[node name=\"%s\" type=\"MultiMeshInstance3D\" parent=\"%s\"]\n",
               names[gr->proto], chunk);
      fprintf (f, "multimesh = SubResource(\"MultiMesh_%lld\")\n", (long long) gi);
    }
  tg__points_c_locale_pop (old);
  tg__points_chunks_clear (&ch);
  free (first);
  free (count);
  free (names);
  if (ferror (f))
    return tg_error_set (err, TG_EIO, NULL, "godot: write error");
  return 0;
}
