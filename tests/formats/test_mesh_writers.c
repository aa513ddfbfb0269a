/* The mesh writers (glb, obj, ply) and the glb builder: files parsed back
 * (glb header and chunk lengths, the JSON with json-c, accessor counts
 * and bounds, the binary data; OBJ and PLY counts and values) in the
 * files' right-handed frame (z = -north, triangles reversed), a terrain
 * with one bump in the north-west that must land at -X, -Z (north is -Z)
 * in every format with front faces agreeing with the normals (and at -X,
 * +Y, faces towards +Z, in OBJ and PLY written Z-up), the first level of
 * detail alone when asked, 16-bit glb indices up to 65535 vertices and
 * 32-bit ones above, the .glb
 * read back into the world exactly, golden hashes of the bytes, errors
 * that name the chunk and write nothing, a locale that must not leak into
 * OBJ numbers, a colour map embedded in the .glb (decoded back, its
 * north-west pixel at the north-west corner's UV) and named by an OBJ's
 * .mtl and a PLY, KHR_mesh_quantization and EXT_meshopt_compression read
 * back (meshoptimizer's decoder) within half a quantization step of the
 * floats with tiles still sharing their edge exactly, and every .glb
 * written here passed through the Khronos glTF-Validator with 0 errors
 * and 0 warnings (skipped only when npm is missing). */
#include <locale.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>
#ifdef TG_HAVE_MESHOPT
#include <meshoptimizer.h>
#endif

#include <tgformats/tgformats.h>

#include "glb-builder.h"
#include "tggraph_test.h"

/* SHA-256 of the sample mesh in each format.  Change only with a reason
 * (a writer's output changed on purpose) and say so in the commit.  OBJ
 * and PLY last changed when the writers moved to the files' right-handed
 * frame (z = -north, triangles reversed); glb when chunks of at most
 * 65535 vertices got 16-bit indices. */
#define GOLDEN_GLB "10ab314795435c38b41d7bf36b15a1e9803a62c8a2de62c63abcf4a800b0c4bd"
#define GOLDEN_OBJ "4eabbc7d7801cfad2559b211decd9b1a6b72976067c35b8d23828cd7e4f0f293"
#define GOLDEN_PLY "22b29527052f094337d9ace5b64b804cfc789171db6cad64adb5530f4e8aafb5"

/* The test folder, from tgtest_tmpdir: removed when the program exits. */
static const char *tmpdir;
static char glb_list[8192]; /* every .glb written, for the validator */

static const char *
tmp_path (const char *name)
{
  static char buf[4][512];
  static int k;
  char *b = buf[k++ & 3];
  snprintf (b, sizeof buf[0], "%s/%s", tmpdir, name);
  return b;
}

static void
remember_glb (const char *path)
{
  strncat (glb_list, " ", sizeof glb_list - strlen (glb_list) - 1);
  strncat (glb_list, path, sizeof glb_list - strlen (glb_list) - 1);
}

static uint8_t *
read_all (const char *path, size_t *len)
{
  FILE *f = fopen (path, "rb");
  uint8_t *data;
  long n;

  if (!f)
    return NULL;
  fseek (f, 0, SEEK_END);
  n = ftell (f);
  fseek (f, 0, SEEK_SET);
  data = malloc ((size_t) n + 1);
  if (fread (data, 1, (size_t) n, f) != (size_t) n)
    n = 0;
  data[n] = 0;
  fclose (f);
  *len = (size_t) n;
  return data;
}

static int
write_mesh_opt (const char *format, const char *path, const TgMesh *m,
                const TgMeshWriteOptions *opt, TgError *err)
{
  TgMeshWriter w = tg_io_mesh_writer (format);
  FILE *f;
  int rc;

  TG_CHECK_MSG (w != NULL, "no writer %s", format);
  if (!w || !(f = fopen (path, "wb")))
    return -1;
  rc = w (f, m, opt, err);
  fclose (f);
  return rc;
}

static int
write_mesh (const char *format, const char *path, const TgMesh *m, TgError *err)
{
  return write_mesh_opt (format, path, m, NULL, err);
}

static void
sha_hex (const char *path, char hex[65])
{
  TgError err = { 0 };
  TG_CHECK (tg_sha256_file (path, hex, &err) == 0);
}

/* What the files must hold, written out here rather than taken from the
 * writers' header: world (x, y, z) is (x, y, -z) in a right-handed file,
 * and triangle (a, b, c) is (a, c, b) so that it still faces the same way.
 * Callers free the result. */
static float *
mirrored (const float *v, int n_vec3)
{
  float *out = malloc (sizeof (float) * 3 * (size_t) (n_vec3 ? n_vec3 : 1));

  for (int i = 0; i < n_vec3; i++)
    {
      out[3 * i] = v[3 * i];
      out[3 * i + 1] = v[3 * i + 1];
      out[3 * i + 2] = -v[3 * i + 2];
    }
  return out;
}

static uint32_t *
reversed (const uint32_t *idx, int64_t n)
{
  uint32_t *out = malloc (sizeof (uint32_t) * (size_t) (n ? n : 1));

  for (int64_t t = 0; t + 2 < n; t += 3)
    {
      out[t] = idx[t];
      out[t + 1] = idx[t + 2];
      out[t + 2] = idx[t + 1];
    }
  return out;
}

/* Chunk 0 "tile_a": 3 x 3 grid with UVs; chunk 1 "tile_b": one triangle,
 * no UVs; chunk 2 "empty": nothing (writers leave it out). */
static TgMesh *
sample_mesh (void)
{
  TgMesh *m = tg_mesh_new (3);
  TgMeshChunk *a = &m->chunks[0], *b = &m->chunks[1];

  tg_mesh_chunk_set_name (a, "tile_a");
  tg_mesh_chunk_alloc (a, 9, 24, 1);
  for (int j = 0; j < 3; j++)
    for (int i = 0; i < 3; i++)
      {
        int v = j * 3 + i;
        float nx = 0.1f * (float) (i - 1), nz = -0.2f * (float) (j - 1);
        float inv = 1.0f / sqrtf (nx * nx + 1.0f + nz * nz);
        a->positions[3 * v] = 10.0f * (float) (i - 1) + 0.1f;
        a->positions[3 * v + 1] = 0.3f * (float) (v * v % 7) - 1.0f / 3.0f;
        a->positions[3 * v + 2] = -10.0f * (float) (j - 1);
        a->normals[3 * v] = nx * inv;
        a->normals[3 * v + 1] = inv;
        a->normals[3 * v + 2] = nz * inv;
        a->uvs[2 * v] = (float) i / 2.0f;
        a->uvs[2 * v + 1] = (float) j / 2.0f;
      }
  uint32_t *idx = a->indices;
  for (int j = 0; j < 2; j++)
    for (int i = 0; i < 2; i++)
      {
        uint32_t q = (uint32_t) (j * 3 + i);
        *idx++ = q, *idx++ = q + 1, *idx++ = q + 3;
        *idx++ = q + 1, *idx++ = q + 4, *idx++ = q + 3;
      }

  tg_mesh_chunk_set_name (b, "tile_b");
  tg_mesh_chunk_alloc (b, 3, 3, 0);
  static const float bp[9] = { 0, 5, 0, 1, 5, 0, 0, 5, -1 };
  static const float bn[9] = { 0, 1, 0, 0, 1, 0, 0, 1, 0 };
  memcpy (b->positions, bp, sizeof bp);
  memcpy (b->normals, bn, sizeof bn);
  b->indices[0] = 0, b->indices[1] = 1, b->indices[2] = 2;

  tg_mesh_chunk_set_name (&m->chunks[2], "empty");
  return m;
}

/* --- glb parse-back ---------------------------------------------------------- */

typedef struct
{
  uint8_t *data;
  size_t len;
  json_object *doc;
  const uint8_t *bin;
  size_t bin_len;
} Glb;

static uint32_t
rd32 (const uint8_t *p)
{
  return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

/* Parses PATH as GLB, checking the container rules on the way. */
static int
glb_open (const char *path, Glb *g)
{
  memset (g, 0, sizeof *g);
  g->data = read_all (path, &g->len);
  TG_CHECK (g->data && g->len >= 20);
  if (!g->data || g->len < 20)
    return -1;
  TG_CHECK (memcmp (g->data, "glTF", 4) == 0);
  TG_CHECK_INT_EQ (rd32 (g->data + 4), 2);
  TG_CHECK_INT_EQ (rd32 (g->data + 8), g->len);
  uint32_t jlen = rd32 (g->data + 12);
  TG_CHECK_INT_EQ (jlen % 4, 0);
  TG_CHECK (memcmp (g->data + 16, "JSON", 4) == 0);
  TG_CHECK (20 + (size_t) jlen <= g->len);
  if (20 + (size_t) jlen > g->len)
    return -1;
  char *text = strndup ((const char *) g->data + 20, jlen);
  g->doc = json_tokener_parse (text);
  free (text);
  TG_CHECK (g->doc != NULL);
  size_t at = 20 + jlen;
  if (at < g->len)
    {
      TG_CHECK (at + 8 <= g->len);
      g->bin_len = rd32 (g->data + at);
      TG_CHECK (memcmp (g->data + at + 4, "BIN\0", 4) == 0);
      TG_CHECK_INT_EQ (g->bin_len % 4, 0);
      TG_CHECK_INT_EQ (at + 8 + g->bin_len, g->len);
      g->bin = g->data + at + 8;
    }
  return g->doc ? 0 : -1;
}

static void
glb_close (Glb *g)
{
  json_object_put (g->doc);
  free (g->data);
}

static json_object *
jget (json_object *o, const char *key)
{
  json_object *v = NULL;
  json_object_object_get_ex (o, key, &v);
  return v;
}

static json_object *
jidx (json_object *o, const char *key, int i)
{
  json_object *a = jget (o, key);
  return a && (int) json_object_array_length (a) > i ? json_object_array_get_idx (a, i) : NULL;
}

static int
jint (json_object *o, const char *key)
{
  json_object *v = jget (o, key);
  return v ? json_object_get_int (v) : -1;
}

/* The bytes accessor ACC points at, checking view alignment on the way. */
static const uint8_t *
accessor_data (Glb *g, int acc, int *count, size_t *bytes)
{
  json_object *a = jidx (g->doc, "accessors", acc);
  json_object *v = a ? jidx (g->doc, "bufferViews", jint (a, "bufferView")) : NULL;

  TG_CHECK (v != NULL);
  if (!v)
    return NULL;
  int off = jint (v, "byteOffset") < 0 ? 0 : jint (v, "byteOffset");
  TG_CHECK_INT_EQ (off % 4, 0);
  TG_CHECK_INT_EQ (jint (v, "buffer"), 0);
  *bytes = (size_t) jint (v, "byteLength");
  TG_CHECK ((size_t) off + *bytes <= g->bin_len);
  *count = jint (a, "count");
  return g->bin + off;
}

/* The indices accessor ACC holds, widened to uint32 (malloc'd), with its
 * component type in *TYPE (5123 or 5125, checked against the view's
 * length). */
static uint32_t *
accessor_indices (Glb *g, int acc, int *count, int *type)
{
  json_object *a = jidx (g->doc, "accessors", acc);
  size_t bytes = 0;
  const uint8_t *p = accessor_data (g, acc, count, &bytes);
  uint32_t *out;

  *type = jint (a, "componentType");
  TG_CHECK_MSG (*type == 5123 || *type == 5125, "index component type %d", *type);
  if (!p || (*type != 5123 && *type != 5125))
    return NULL;
  size_t size = *type == 5123 ? 2 : 4;
  TG_CHECK_INT_EQ (bytes, (size_t) *count * size);
  out = malloc (4 * (size_t) (*count > 0 ? *count : 1));
  for (int i = 0; i < *count; i++)
    {
      uint16_t s16;
      if (size == 2)
        memcpy (&s16, p + 2 * i, 2), out[i] = s16;
      else
        memcpy (&out[i], p + 4 * i, 4);
    }
  return out;
}

/* Checks a primitive's attribute NAME against DATA (N floats per vertex). */
static void
check_float_attr (Glb *g, json_object *prim, const char *name, const float *data, int nv, int n,
                  bool bounds)
{
  int acc = jint (jget (prim, "attributes"), name);
  json_object *a = jidx (g->doc, "accessors", acc);
  int count = 0;
  size_t bytes = 0;
  const uint8_t *p = accessor_data (g, acc, &count, &bytes);

  TG_CHECK_MSG (a != NULL, "no %s", name);
  if (!a || !p)
    return;
  TG_CHECK_INT_EQ (jint (a, "componentType"), 5126);
  TG_CHECK_STR_CONTAINS (json_object_get_string (jget (a, "type")), n == 3 ? "VEC3" : "VEC2");
  TG_CHECK_INT_EQ (count, nv);
  TG_CHECK_INT_EQ (bytes, (size_t) nv * n * 4);
  /* By value: a zero may be stored as +0 where -(+0) would be -0. */
  for (int i = 0; i < nv * n; i++)
    {
      float f;
      memcpy (&f, p + 4 * i, 4);
      TG_CHECK_MSG (f == data[i], "%s[%d]: %g, want %g", name, i, f, data[i]);
    }
  TG_CHECK ((jget (a, "min") != NULL) == bounds);
  if (bounds && jget (a, "min"))
    for (int c = 0; c < n; c++)
      {
        float lo = data[c], hi = data[c];
        for (int i = 1; i < nv; i++)
          {
            lo = fminf (lo, data[i * n + c]);
            hi = fmaxf (hi, data[i * n + c]);
          }
        /* Exactly the float values, as the validator wants. */
        TG_CHECK (json_object_get_double (json_object_array_get_idx (jget (a, "min"), c))
                  == (double) lo);
        TG_CHECK (json_object_get_double (json_object_array_get_idx (jget (a, "max"), c))
                  == (double) hi);
      }
}

static void
test_glb_structure (void)
{
  TgMesh *m = sample_mesh ();
  TgError err = { 0 };
  const char *path = tmp_path ("sample.glb");
  Glb g;

  TG_CHECK (write_mesh ("glb", path, m, &err) == 0);
  remember_glb (path);
  if (glb_open (path, &g) < 0)
    {
      tg_mesh_free (m);
      return;
    }
  json_object *asset = jget (g.doc, "asset");
  TG_CHECK_STR_CONTAINS (json_object_get_string (jget (asset, "version")), "2.0");
  TG_CHECK (strcmp (json_object_get_string (jget (asset, "generator")),
                    "Terrane " TG_VERSION_STRING) == 0);
  /* The empty chunk is left out: two nodes, two meshes, one per chunk. */
  TG_CHECK_INT_EQ (json_object_array_length (jget (g.doc, "nodes")), 2);
  TG_CHECK_INT_EQ (json_object_array_length (jget (g.doc, "meshes")), 2);
  TG_CHECK_INT_EQ (jint (g.doc, "scene"), 0);
  TG_CHECK_INT_EQ (json_object_array_length (jget (jidx (g.doc, "scenes", 0), "nodes")), 2);
  TG_CHECK_INT_EQ (jint (jget (g.doc, "buffers") ? jidx (g.doc, "buffers", 0) : NULL,
                         "byteLength"),
                   g.bin_len);

  for (int k = 0; k < 2; k++)
    {
      const TgMeshChunk *c = &m->chunks[k];
      json_object *node = jidx (g.doc, "nodes", k);
      json_object *mesh = jidx (g.doc, "meshes", jint (node, "mesh"));
      json_object *prim = jidx (mesh, "primitives", 0);

      TG_CHECK (strcmp (json_object_get_string (jget (node, "name")), c->name) == 0);
      TG_CHECK (strcmp (json_object_get_string (jget (mesh, "name")), c->name) == 0);
      TG_CHECK (jget (prim, "mode") == NULL); /* default: triangles */
      /* In the file's frame: z = -north, winding reversed; UVs as they are. */
      float *fpos = mirrored (c->positions, c->n_vertices);
      float *fnrm = mirrored (c->normals, c->n_vertices);
      uint32_t *fidx = reversed (c->indices, c->n_indices);
      check_float_attr (&g, prim, "POSITION", fpos, c->n_vertices, 3, true);
      check_float_attr (&g, prim, "NORMAL", fnrm, c->n_vertices, 3, false);
      if (c->uvs)
        check_float_attr (&g, prim, "TEXCOORD_0", c->uvs, c->n_vertices, 2, false);
      else
        TG_CHECK (jget (jget (prim, "attributes"), "TEXCOORD_0") == NULL);

      int count = 0, type = 0;
      json_object *ia = jidx (g.doc, "accessors", jint (prim, "indices"));
      uint32_t *p = accessor_indices (&g, jint (prim, "indices"), &count, &type);
      /* A few vertices: 16-bit indices. */
      TG_CHECK_INT_EQ (type, 5123);
      TG_CHECK_INT_EQ (count, c->n_indices);
      TG_CHECK (p && memcmp (p, fidx, (size_t) c->n_indices * 4) == 0);
      TG_CHECK_INT_EQ (jint (jidx (g.doc, "bufferViews", jint (ia, "bufferView")), "target"),
                       34963);
      free (p);
      free (fpos);
      free (fnrm);
      free (fidx);
    }
  /* tile_a spans world z -10..10, so the file's bounds are -10..10 too,
   * but tile_b's (world z -1..0) become 0..1. */
  {
    json_object *prim = jidx (jidx (g.doc, "meshes", 1), "primitives", 0);
    json_object *a = jidx (g.doc, "accessors", jint (jget (prim, "attributes"), "POSITION"));
    TG_CHECK (json_object_get_double (json_object_array_get_idx (jget (a, "min"), 2)) == 0.0);
    TG_CHECK (json_object_get_double (json_object_array_get_idx (jget (a, "max"), 2)) == 1.0);
  }
  glb_close (&g);
  tg_mesh_free (m);
}

/* --- golden bytes -------------------------------------------------------------- */

static void
test_golden_hashes (void)
{
  static const struct
  {
    const char *format, *file, *sha;
  } golden[] = {
    { "glb", "golden.glb", GOLDEN_GLB },
    { "obj", "golden.obj", GOLDEN_OBJ },
    { "ply", "golden.ply", GOLDEN_PLY },
  };
  TgMesh *m = sample_mesh ();

  for (size_t i = 0; i < sizeof golden / sizeof golden[0]; i++)
    {
      TgError err = { 0 };
      char hex[65], hex2[65];
      const char *path = tmp_path (golden[i].file);

      TG_CHECK (write_mesh (golden[i].format, path, m, &err) == 0);
      sha_hex (path, hex);
      TG_CHECK_MSG (strcmp (hex, golden[i].sha) == 0, "%s: sha256 %s", golden[i].format, hex);
      /* Twice the same bytes. */
      TG_CHECK (write_mesh (golden[i].format, path, m, &err) == 0);
      sha_hex (path, hex2);
      TG_CHECK (strcmp (hex, hex2) == 0);
    }
  tg_mesh_free (m);
}

/* --- obj ------------------------------------------------------------------------ */

static void
check_obj (const char *path, const TgMesh *m)
{
  size_t len;
  char *text = (char *) read_all (path, &len);
  float *v = calloc (64 * 3, sizeof (float)), *vn = calloc (64 * 3, sizeof (float));
  float *vt = calloc (64 * 2, sizeof (float));
  int nv = 0, nvn = 0, nvt = 0, nf = 0, no = 0, chunk = -1, tri = 0;

  TG_CHECK (text != NULL);
  for (char *line = text ? strtok (text, "\n") : NULL; line; line = strtok (NULL, "\n"))
    {
      TG_CHECK_MSG (strchr (line, ',') == NULL, "locale leaked into \"%s\"", line);
      if (strncmp (line, "o ", 2) == 0)
        {
          TG_CHECK (strcmp (line + 2, m->chunks[++chunk].name) == 0);
          tri = 0;
          no++;
        }
      else if (strncmp (line, "v ", 2) == 0 && nv < 64)
        {
          char *e = line + 1;
          for (int a = 0; a < 3; a++)
            v[3 * nv + a] = strtof (e, &e);
          nv++;
        }
      else if (strncmp (line, "vn ", 3) == 0 && nvn < 64)
        {
          char *e = line + 2;
          for (int a = 0; a < 3; a++)
            vn[3 * nvn + a] = strtof (e, &e);
          nvn++;
        }
      else if (strncmp (line, "vt ", 3) == 0 && nvt < 64)
        {
          char *e = line + 2;
          for (int a = 0; a < 2; a++)
            vt[2 * nvt + a] = strtof (e, &e);
          nvt++;
        }
      else if (strncmp (line, "f ", 2) == 0)
        {
          /* Each corner must give back the chunk's vertex exactly. */
          const TgMeshChunk *c = &m->chunks[chunk];
          char *e = line + 1;
          for (int k = 0; k < 3; k++)
            {
              long a = strtol (e, &e, 10), t = 0, n;
              TG_CHECK (*e == '/');
              e++;
              if (*e != '/')
                t = strtol (e, &e, 10);
              TG_CHECK (*e == '/');
              n = strtol (e + 1, &e, 10);
              /* Corners in reverse order (a, c, b), points and normals
               * with z = -north: the file's right-handed frame. */
              uint32_t want = c->indices[3 * tri + (3 - k) % 3];
              TG_CHECK (a >= 1 && a <= nv && n == a);
              if (a < 1 || a > nv)
                continue;
              for (int x = 0; x < 3; x++)
                {
                  float sign = x == 2 ? -1.0f : 1.0f;
                  TG_CHECK (v[3 * (a - 1) + x] == sign * c->positions[3 * want + x]);
                  TG_CHECK (vn[3 * (n - 1) + x] == sign * c->normals[3 * want + x]);
                }
              TG_CHECK ((t != 0) == (c->uvs != NULL));
              if (c->uvs && t >= 1 && t <= nvt)
                {
                  TG_CHECK (vt[2 * (t - 1)] == c->uvs[2 * want]);
                  TG_CHECK (vt[2 * (t - 1) + 1] == 1.0f - c->uvs[2 * want + 1]);
                }
            }
          tri++;
          nf++;
        }
    }
  TG_CHECK_INT_EQ (no, 2);
  TG_CHECK_INT_EQ (nv, 12);
  TG_CHECK_INT_EQ (nvn, 12);
  TG_CHECK_INT_EQ (nvt, 9);
  TG_CHECK_INT_EQ (nf, 9);
  free (v);
  free (vn);
  free (vt);
  free (text);
}

static void
test_obj (void)
{
  TgMesh *m = sample_mesh ();
  TgError err = { 0 };
  const char *path = tmp_path ("sample.obj");

  TG_CHECK (write_mesh ("obj", path, m, &err) == 0);
  check_obj (path, m);

  /* Chunk order with UVs after a chunk without: vt numbering stays right. */
  TgMeshChunk t = m->chunks[0];
  m->chunks[0] = m->chunks[1];
  m->chunks[1] = t;
  TG_CHECK (write_mesh ("obj", path, m, &err) == 0);
  check_obj (path, m);

  /* A user locale with a decimal comma must not change the file. */
  if (setlocale (LC_NUMERIC, "de_DE.UTF-8") || setlocale (LC_NUMERIC, "fr_FR.UTF-8"))
    {
      TG_CHECK (write_mesh ("obj", path, m, &err) == 0);
      setlocale (LC_NUMERIC, "C");
      check_obj (path, m);
    }
  else
    fprintf (stderr, "  (no de_DE/fr_FR locale here: decimal-comma case not run)\n");
  tg_mesh_free (m);
}

/* --- ply ------------------------------------------------------------------------- */

static void
test_ply (void)
{
  TgMesh *m = sample_mesh ();
  TgError err = { 0 };
  const char *path = tmp_path ("sample.ply");

  for (int with_b = 1; with_b >= 0; with_b--)
    {
      int saved = m->chunks[1].n_indices;
      if (!with_b)
        m->chunks[1].n_indices = 0; /* tile_a alone: every chunk has UVs */
      TG_CHECK (write_mesh ("ply", path, m, &err) == 0);
      m->chunks[1].n_indices = saved;

      size_t len;
      uint8_t *data = read_all (path, &len);
      char *end = data ? strstr ((char *) data, "end_header\n") : NULL;
      TG_CHECK (end != NULL);
      if (!end)
        {
          free (data);
          continue;
        }
      *end = 0;
      const char *hdr = (const char *) data;
      int nv = with_b ? 12 : 9, nf = with_b ? 9 : 8, stride = with_b ? 24 : 32;
      char want[64];
      TG_CHECK (strncmp (hdr, "ply\nformat binary_little_endian 1.0\n", 36) == 0);
      snprintf (want, sizeof want, "element vertex %d\n", nv);
      TG_CHECK_STR_CONTAINS (hdr, want);
      snprintf (want, sizeof want, "element face %d\n", nf);
      TG_CHECK_STR_CONTAINS (hdr, want);
      TG_CHECK_STR_CONTAINS (hdr, "property list uchar uint vertex_indices\n");
      TG_CHECK_STR_CONTAINS (hdr, "comment chunk tile_a 0 9 0 8\n");
      TG_CHECK ((strstr (hdr, "property float s\nproperty float t\n") != NULL) == !with_b);

      const uint8_t *body = (const uint8_t *) end + 11;
      TG_CHECK_INT_EQ ((size_t) (data + len - body), (size_t) nv * stride + (size_t) nf * 13);
      /* Vertices 4 and 1 of tile_a (world z 0 and +10, file z 0 and -10),
       * and t = 1 - v. */
      float rec[8];
      for (int k = 4; k >= 1; k -= 3)
        {
          const float *wp = &m->chunks[0].positions[3 * k], *wn = &m->chunks[0].normals[3 * k];
          memcpy (rec, body + (size_t) k * stride, (size_t) stride);
          TG_CHECK (rec[0] == wp[0] && rec[1] == wp[1] && rec[2] == -wp[2]);
          TG_CHECK (rec[3] == wn[0] && rec[4] == wn[1] && rec[5] == -wn[2]);
          if (!with_b)
            TG_CHECK (rec[6] == m->chunks[0].uvs[2 * k]
                      && rec[7] == 1.0f - m->chunks[0].uvs[2 * k + 1]);
        }
      TG_CHECK (rec[2] == -10.0f);
      /* The first face is tile_a's (0, 1, 3) reversed; the last tile_b's
       * triangle (0, 1, 2) reversed, its indices offset by 9. */
      const uint8_t *fp = body + (size_t) nv * stride;
      TG_CHECK_INT_EQ (fp[0], 3);
      TG_CHECK_INT_EQ (rd32 (fp + 1), 0);
      TG_CHECK_INT_EQ (rd32 (fp + 5), 3);
      TG_CHECK_INT_EQ (rd32 (fp + 9), 1);
      if (with_b)
        {
          fp = body + (size_t) nv * stride + (size_t) (nf - 1) * 13;
          TG_CHECK_INT_EQ (fp[0], 3);
          TG_CHECK_INT_EQ (rd32 (fp + 1), 9);
          TG_CHECK_INT_EQ (rd32 (fp + 5), 11);
          TG_CHECK_INT_EQ (rd32 (fp + 9), 10);
        }
      free (data);
    }
  tg_mesh_free (m);
}

/* --- orientation: north is -Z, front faces up -------------------------------------- */

/* One triangle mesh read back from a file, in the file's frame. */
typedef struct
{
  float *pos, *nrm;
  int nv;
  uint32_t *idx;
  int64_t ni;
} FileMesh;

static void
file_mesh_clear (FileMesh *fm)
{
  free (fm->pos);
  free (fm->nrm);
  free (fm->idx);
  memset (fm, 0, sizeof *fm);
}

/* Every triangle's face normal (right-handed cross product of its edges,
 * the rule glTF, OBJ and PLY readers use for counter-clockwise fronts)
 * agrees with the normals of its corners and, on a terrain, points up
 * (along axis UP of the file: 1 for y, 2 for z).  Raises *TOP to the
 * highest vertex seen.  Returns the triangles checked. */
static int64_t
check_faces (const char *what, const FileMesh *fm, int up, float top[3])
{
  int64_t bad_n = 0, bad_up = 0;

  for (int64_t t = 0; t + 2 < fm->ni; t += 3)
    {
      const float *a = fm->pos + 3 * fm->idx[t], *b = fm->pos + 3 * fm->idx[t + 1];
      const float *c = fm->pos + 3 * fm->idx[t + 2];
      double e1[3] = { b[0] - a[0], b[1] - a[1], b[2] - a[2] };
      double e2[3] = { c[0] - a[0], c[1] - a[1], c[2] - a[2] };
      double n[3] = { e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                      e1[0] * e2[1] - e1[1] * e2[0] };
      for (int k = 0; k < 3; k++)
        {
          const float *vn = fm->nrm + 3 * fm->idx[t + k];
          if (n[0] * vn[0] + n[1] * vn[1] + n[2] * vn[2] <= 0.0)
            bad_n++;
        }
      if (n[up] <= 0.0)
        bad_up++;
    }
  TG_CHECK_MSG (bad_n == 0, "%s: %lld corners whose normal disagrees with the face", what,
                (long long) bad_n);
  TG_CHECK_MSG (bad_up == 0, "%s: %lld triangles face down", what, (long long) bad_up);
  for (int i = 0; i < fm->nv; i++)
    if (fm->pos[3 * i + up] > top[up])
      memcpy (top, fm->pos + 3 * i, 12);
  return fm->ni / 3;
}

/* The triangles of every primitive of a .glb, checked with check_faces. */
static int64_t
glb_faces (const char *path, float top[3])
{
  Glb g;
  int64_t n = 0;

  if (glb_open (path, &g) < 0)
    return 0;
  for (int mi = 0; mi < (int) json_object_array_length (jget (g.doc, "meshes")); mi++)
    {
      json_object *prim = jidx (jidx (g.doc, "meshes", mi), "primitives", 0);
      json_object *attrs = jget (prim, "attributes");
      int cp = 0, cn = 0, ci = 0, type;
      size_t bytes;
      const uint8_t *pp = accessor_data (&g, jint (attrs, "POSITION"), &cp, &bytes);
      const uint8_t *np = accessor_data (&g, jint (attrs, "NORMAL"), &cn, &bytes);
      uint32_t *ip = accessor_indices (&g, jint (prim, "indices"), &ci, &type);
      FileMesh fm = { .nv = cp, .ni = ci, .idx = ip };
      TG_CHECK (pp && np && ip && cn == cp);
      if (!pp || !np || !ip)
        {
          free (ip);
          break;
        }
      fm.pos = malloc (12 * (size_t) cp);
      fm.nrm = malloc (12 * (size_t) cp);
      memcpy (fm.pos, pp, 12 * (size_t) cp);
      memcpy (fm.nrm, np, 12 * (size_t) cp);
      n += check_faces ("glb", &fm, 1, top);
      file_mesh_clear (&fm);
    }
  glb_close (&g);
  return n;
}

/* v, vn and f lines of an .obj (one global vertex list). */
static int64_t
obj_faces (const char *path, int nv_max, int64_t nf_max, int up, float top[3])
{
  size_t len;
  char *text = (char *) read_all (path, &len);
  FileMesh fm = { 0 };
  int nvn = 0;
  int64_t n;

  TG_CHECK (text != NULL);
  if (!text)
    return 0;
  fm.pos = calloc ((size_t) nv_max * 3, sizeof (float));
  fm.nrm = calloc ((size_t) nv_max * 3, sizeof (float));
  fm.idx = calloc ((size_t) nf_max * 3, sizeof (uint32_t));
  for (char *line = strtok (text, "\n"); line; line = strtok (NULL, "\n"))
    {
      char *e = line + 2;
      if (strncmp (line, "v ", 2) == 0 && fm.nv < nv_max)
        {
          for (int a = 0; a < 3; a++)
            fm.pos[3 * fm.nv + a] = strtof (e, &e);
          fm.nv++;
        }
      else if (strncmp (line, "vn ", 3) == 0 && nvn < nv_max)
        {
          for (int a = 0; a < 3; a++)
            fm.nrm[3 * nvn + a] = strtof (e + 1, &e);
          nvn++;
        }
      else if (strncmp (line, "f ", 2) == 0 && fm.ni < 3 * nf_max)
        for (int k = 0; k < 3; k++)
          {
            /* "v/vt/vn": the position index, the rest skipped. */
            fm.idx[fm.ni++] = (uint32_t) (strtol (e, &e, 10) - 1);
            while (*e && *e != ' ')
              e++;
          }
    }
  TG_CHECK_INT_EQ (nvn, fm.nv);
  n = check_faces ("obj", &fm, up, top);
  file_mesh_clear (&fm);
  free (text);
  return n;
}

/* The vertex and face lists of a binary .ply with x y z nx ny nz [s t]. */
static int64_t
ply_faces (const char *path, int up, float top[3])
{
  size_t len;
  uint8_t *data = read_all (path, &len);
  char *end = data ? strstr ((char *) data, "end_header\n") : NULL;
  const char *ev, *ef;
  FileMesh fm = { 0 };
  long long nv = 0, nf = 0;
  int64_t n;

  TG_CHECK (end != NULL);
  if (!end)
    {
      free (data);
      return 0;
    }
  ev = strstr ((char *) data, "element vertex ");
  ef = strstr ((char *) data, "element face ");
  TG_CHECK (ev && ef && sscanf (ev, "element vertex %lld", &nv) == 1
            && sscanf (ef, "element face %lld", &nf) == 1);
  int stride = strstr ((char *) data, "property float s\n") ? 32 : 24;
  const uint8_t *body = (const uint8_t *) end + 11;
  TG_CHECK_INT_EQ ((size_t) (data + len - body), (size_t) nv * stride + (size_t) nf * 13);
  fm.nv = (int) nv;
  fm.ni = 3 * nf;
  fm.pos = malloc (12 * (size_t) nv);
  fm.nrm = malloc (12 * (size_t) nv);
  fm.idx = malloc (12 * (size_t) nf);
  for (long long i = 0; i < nv; i++)
    {
      memcpy (fm.pos + 3 * i, body + i * stride, 12);
      memcpy (fm.nrm + 3 * i, body + i * stride + 12, 12);
    }
  for (long long f = 0; f < nf; f++)
    {
      const uint8_t *fp = body + nv * stride + f * 13;
      TG_CHECK_INT_EQ (fp[0], 3);
      for (int k = 0; k < 3; k++)
        fm.idx[3 * f + k] = rd32 (fp + 1 + 4 * k);
    }
  n = check_faces ("ply", &fm, up, top);
  file_mesh_clear (&fm);
  free (data);
  return n;
}

/* A 1 km world with a single bump centred in the north-west quadrant
 * (world x = -250, z = +250), meshed by mesh.heightfield: the heightmap
 * shows it top-left (image convention), and every right-handed file must
 * put it at x < 0 and z < 0, north being -Z there (Blender: +Y), with all
 * triangles facing up and agreeing with their normals.  Written unchanged,
 * world coordinates would put the bump at +Z: mirrored north-south. */
static void
test_north_west_bump (void)
{
  TgGraph *g = new_graph (1000.0, 1000.0, 65);
  TgEngine *e = new_engine (2);
  static const char *const formats[] = { "glb", "obj", "ply" };

  tg_graph_world (g)->height_m = 200.0;
  int b = add_node (g, "bump", "gen.shape");
  SET (g, b, "shape", "radial");
  SET (g, b, "radius_m", "120");
  SET (g, b, "falloff_m", "120");
  SET (g, b, "center_m", "-250,250");
  int hf = add_node (g, "hf", "mesh.heightfield");
  SET (g, hf, "chunk_cells", "32");
  add_link (g, "bump", "height", "hf", "height");

  TgRegion r = world_region (g);
  TgValue *h = pull (e, g, "bump", &r);
  TgValue *mv = pull (e, g, "hf", &r);
  const TgMesh *m = mv ? tg_value_mesh (mv) : NULL;
  if (!h || !m)
    goto out;

  /* The heightmap: brightest sample in the top-left quarter. */
  int bi = 0, bj = 0;
  for (int j = 0; j < 65; j++)
    for (int i = 0; i < 65; i++)
      if (at (h, i, j) > at (h, bi, bj))
        bi = i, bj = j;
  TG_CHECK_MSG (bi < 32 && bj < 32 && at (h, bi, bj) > 0.9f, "brightest sample (%d, %d)", bi,
                bj);

  int nv = 0;
  int64_t nt = 0;
  for (int c = 0; c < m->n_chunks; c++)
    {
      nv += m->chunks[c].n_vertices;
      nt += m->chunks[c].n_indices / 3;
    }
  /* Then OBJ and PLY with up = z: north +Y, up +Z, still right-handed,
   * so the bump is at about (-250, +250, 200) with faces towards +Z. */
  for (int f = 0; f < 5; f++)
    {
      TgError err = { 0 };
      TgMeshWriteOptions opt = { .up = f >= 3 ? TG_MESH_UP_Z : TG_MESH_UP_Y };
      const char *format = formats[f < 3 ? f : f - 2];
      int up = f >= 3 ? 2 : 1, north = f >= 3 ? 1 : 2;
      float sign = f >= 3 ? 1.0f : -1.0f; /* of north in the file */
      char name[32];
      float top[3] = { -1e30f, -1e30f, -1e30f };
      int64_t n = 0;

      snprintf (name, sizeof name, "bump%s.%s", f >= 3 ? "_zup" : "", format);
      TG_CHECK (write_mesh_opt (format, tmp_path (name), m, &opt, &err) == 0);
      if (f == 0)
        {
          remember_glb (tmp_path (name));
          n = glb_faces (tmp_path (name), top);
        }
      else if (f % 2 == 1)
        n = obj_faces (tmp_path (name), nv, nt, up, top);
      else
        n = ply_faces (tmp_path (name), up, top);
      TG_CHECK_INT_EQ (n, nt);
      TG_CHECK_MSG (top[0] < -200.0f && top[0] > -300.0f && sign * top[north] > 200.0f
                      && sign * top[north] < 300.0f && top[up] > 180.0f,
                    "%s (up %c): highest vertex at (%g, %g, %g)", format, f >= 3 ? 'z' : 'y',
                    top[0], top[1], top[2]);
    }
out:
  tg_value_unref (h);
  tg_value_unref (mv);
  tg_graph_free (g);
  tg_engine_free (e);
}

/* The .glb reader undoes the writer: world positions and UVs exactly,
 * the same triangles in the same order, normals to rounding. */
static void
test_glb_round_trip (void)
{
  TgMesh *m = sample_mesh ();
  TgMeshReader read = tg_io_mesh_reader ("glb");
  TgMesh *back = NULL;
  TgError err = { 0 };
  const char *path = tmp_path ("round.glb");

  TG_CHECK (read != NULL);
  TG_CHECK (write_mesh ("glb", path, m, &err) == 0);
  TG_CHECK_MSG (read && read (path, &back, &err) == 0, "%s", err.message);
  if (!back)
    {
      tg_mesh_free (m);
      return;
    }
  TG_CHECK_INT_EQ (back->n_chunks, 2);
  for (int c = 0; c < 2 && c < back->n_chunks; c++)
    {
      const TgMeshChunk *w = &m->chunks[c], *r = &back->chunks[c];
      TG_CHECK_INT_EQ (r->n_vertices, w->n_vertices);
      TG_CHECK_INT_EQ (r->n_indices, w->n_indices);
      if (r->n_vertices != w->n_vertices || r->n_indices != w->n_indices)
        continue;
      for (int i = 0; i < 3 * w->n_vertices; i++)
        {
          TG_CHECK_MSG (r->positions[i] == w->positions[i], "chunk %d position %d: %g vs %g", c,
                        i, r->positions[i], w->positions[i]);
          TG_CHECK_NEAR (r->normals[i], w->normals[i], 1e-6);
        }
      TG_CHECK (memcmp (r->indices, w->indices, 4 * (size_t) w->n_indices) == 0);
      TG_CHECK ((r->uvs != NULL) == (w->uvs != NULL));
      if (r->uvs && w->uvs)
        TG_CHECK (memcmp (r->uvs, w->uvs, 8 * (size_t) w->n_vertices) == 0);
    }
  tg_mesh_free (back);
  tg_mesh_free (m);
}

/* --- errors ----------------------------------------------------------------------- */

static void
test_bad_mesh (void)
{
  static const char *const formats[] = { "glb", "obj", "ply" };
  TgMesh *m = sample_mesh ();

  m->chunks[0].indices[7] = 9; /* one past the last vertex */
  for (int i = 0; i < 3; i++)
    {
      TgError err = { 0 };
      const char *path = tmp_path ("bad.out");
      size_t len = 99;

      TG_CHECK (write_mesh (formats[i], path, m, &err) == TG_EINVAL);
      TG_CHECK_STR_CONTAINS (err.path, "chunks[0]");
      TG_CHECK_STR_CONTAINS (err.message, "tile_a");
      TG_CHECK_STR_CONTAINS (err.message, "index 7 is 9, past its 9 vertices");
      free (read_all (path, &len));
      TG_CHECK_INT_EQ (len, 0);
    }
  m->chunks[0].indices[7] = 4;
  m->chunks[1].positions[4] = NAN;
  {
    TgError err = { 0 };
    TG_CHECK (write_mesh ("glb", tmp_path ("bad.out"), m, &err) == TG_EINVAL);
    TG_CHECK_STR_CONTAINS (err.message, "tile_b: vertex 1 has a non-finite position");
  }
  tg_mesh_free (m);
}

/* --- the builder on its own -------------------------------------------------------- */

/* Writes the builder's document to PATH (for the validator too), frees
 * the builder and opens the file as GB; < 0 when it cannot be read. */
static int
finish_builder (TgGlb *g, const char *path, Glb *gb)
{
  TgError err = { 0 };
  FILE *f = fopen (path, "wb");

  TG_CHECK (f && tg_glb_write (g, f, &err) == 0);
  if (f)
    fclose (f);
  tg_glb_free (g);
  remember_glb (path);
  return glb_open (path, gb);
}

static void
test_builder_instancing (void)
{
  static const float tri_p[9] = { 0, 0, 0, 1, 0, 0, 0, 1, 0 };
  static const float tri_n[9] = { 0, 0, 1, 0, 0, 1, 0, 0, 1 };
  static const uint32_t tri_i[3] = { 0, 1, 2 };
  static const float tr[9] = { 0, 0, 0, 5, 0, 0, 0, 0, 5 };
  static const float rot[12] = { 0, 0, 0, 1, 0, 0.70710678f, 0, 0.70710678f, 0, 1, 0, 0 };
  static const float sc[9] = { 1, 1, 1, 2, 2, 2, 0.5f, 0.5f, 0.5f };
  const char *path = tmp_path ("builder.glb");
  TgGlb *g = tg_glb_new ("test");

  int pos = tg_glb_add_floats (g, tri_p, 3, 3, TG_GLB_ARRAY_BUFFER, true);
  int nrm = tg_glb_add_floats (g, tri_n, 3, 3, TG_GLB_ARRAY_BUFFER, false);
  int idx = tg_glb_add_indices (g, tri_i, 3);
  int mat = tg_glb_add_material (g, "red", (const float[4]) { 1, 0, 0, 1 }, 0, 0.5f, true);
  int mesh = tg_glb_add_mesh (g, "tri");
  TgGlbAttribute attrs[] = { { "POSITION", pos }, { "NORMAL", nrm } };
  TG_CHECK_INT_EQ (tg_glb_add_primitive (g, mesh, attrs, 2, idx, mat, TG_GLB_TRIANGLES), 0);

  int root = tg_glb_add_node (g, "root", -1);
  int inst = tg_glb_add_node (g, "instances", mesh);
  int t = tg_glb_add_floats (g, tr, 3, 3, TG_GLB_TARGET_NONE, false);
  int r = tg_glb_add_floats (g, rot, 3, 4, TG_GLB_TARGET_NONE, false);
  int s = tg_glb_add_floats (g, sc, 3, 3, TG_GLB_TARGET_NONE, false);
  TG_CHECK_INT_EQ (tg_glb_node_set_instancing (g, inst, t, r, s), 0);
  TG_CHECK_INT_EQ (tg_glb_node_add_child (g, root, inst), 0);
  TG_CHECK_INT_EQ (tg_glb_node_set_trs (g, root, (const float[3]) { 0, 1, 0 }, NULL, NULL), 0);

  /* Refused: cycles, second parents, empty accessors, unknown indices. */
  TG_CHECK_INT_EQ (tg_glb_node_add_child (g, inst, root), TG_EINVAL);
  TG_CHECK_INT_EQ (tg_glb_node_add_child (g, root, inst), TG_EINVAL);
  TG_CHECK_INT_EQ (tg_glb_add_floats (g, tri_p, 0, 3, TG_GLB_ARRAY_BUFFER, true), TG_EINVAL);
  TG_CHECK_INT_EQ (tg_glb_add_primitive (g, 7, attrs, 2, idx, -1, 4), TG_EINVAL);
  TG_CHECK_INT_EQ (tg_glb_node_set_instancing (g, root, t, r, s), TG_EINVAL);

  json_object_object_add (tg_glb_object (g, "nodes", root), "extras",
                          json_object_new_string ("kept"));

  Glb gb;
  if (finish_builder (g, path, &gb) < 0)
    return;
  TG_CHECK (strcmp (json_object_get_string (jidx (gb.doc, "extensionsUsed", 0)),
                    "EXT_mesh_gpu_instancing") == 0);
  TG_CHECK (jget (gb.doc, "extensionsRequired") == NULL);
  json_object *scene_nodes = jget (jidx (gb.doc, "scenes", 0), "nodes");
  TG_CHECK_INT_EQ (json_object_array_length (scene_nodes), 1); /* the child is not a root */
  json_object *n1 = jidx (gb.doc, "nodes", 1);
  json_object *ext = jget (jget (jget (n1, "extensions"), "EXT_mesh_gpu_instancing"), "attributes");
  TG_CHECK_INT_EQ (jint (ext, "TRANSLATION"), t);
  TG_CHECK_INT_EQ (jint (ext, "ROTATION"), r);
  TG_CHECK_INT_EQ (jint (ext, "SCALE"), s);
  TG_CHECK (jget (jidx (gb.doc, "bufferViews", 3), "target") == NULL);
  TG_CHECK_STR_CONTAINS (json_object_get_string (jget (jidx (gb.doc, "nodes", 0), "extras")),
                         "kept");
  glb_close (&gb);
}

/* MSFT_lod through the builder: the coarser nodes leave the scene, the
 * finest names them with its screen coverages; misuse is refused. */
static void
test_builder_lods (void)
{
  static const float tri_p[9] = { 0, 0, 0, 1, 0, 0, 0, 1, 0 };
  static const uint32_t tri_i[3] = { 0, 1, 2 };
  static const float cov[3] = { 0.25f, 0.0625f, 0.015625f };
  const char *path = tmp_path ("lods.glb");
  TgGlb *g = tg_glb_new ("test");
  int pos = tg_glb_add_floats (g, tri_p, 3, 3, TG_GLB_ARRAY_BUFFER, true);
  int idx = tg_glb_add_indices (g, tri_i, 3);
  int mesh = tg_glb_add_mesh (g, "tri");
  TgGlbAttribute attrs[] = { { "POSITION", pos } };
  int n[5];

  TG_CHECK_INT_EQ (tg_glb_add_primitive (g, mesh, attrs, 1, idx, -1, TG_GLB_TRIANGLES), 0);
  for (int k = 0; k < 5; k++)
    n[k] = tg_glb_add_node (g, NULL, mesh);
  TG_CHECK_INT_EQ (tg_glb_node_add_child (g, n[4], n[3]), 0);
  /* Refused: itself, twice the same, a child, no levels. */
  TG_CHECK_INT_EQ (tg_glb_node_set_lods (g, n[0], (const int[]) { n[0] }, 1, cov), TG_EINVAL);
  TG_CHECK_INT_EQ (tg_glb_node_set_lods (g, n[0], (const int[]) { n[1], n[1] }, 2, cov),
                   TG_EINVAL);
  TG_CHECK_INT_EQ (tg_glb_node_set_lods (g, n[0], (const int[]) { n[3] }, 1, cov), TG_EINVAL);
  TG_CHECK_INT_EQ (tg_glb_node_set_lods (g, n[0], n + 1, 0, cov), TG_EINVAL);
  TG_CHECK_INT_EQ (tg_glb_node_set_lods (g, n[0], n + 1, 2, cov), 0);
  /* A level of another has no levels of its own, and is nobody's child. */
  TG_CHECK_INT_EQ (tg_glb_node_set_lods (g, n[1], (const int[]) { n[4] }, 1, cov), TG_EINVAL);
  TG_CHECK_INT_EQ (tg_glb_node_set_lods (g, n[4], (const int[]) { n[0] }, 1, cov), TG_EINVAL);
  TG_CHECK_INT_EQ (tg_glb_node_add_child (g, n[4], n[2]), TG_EINVAL);

  Glb gb;
  if (finish_builder (g, path, &gb) < 0)
    return;
  TG_CHECK (strcmp (json_object_get_string (jidx (gb.doc, "extensionsUsed", 0)), "MSFT_lod")
            == 0);
  TG_CHECK (jget (gb.doc, "extensionsRequired") == NULL);
  /* The scene: n[0] and n[4] (n[3] is its child; n[1], n[2] are levels). */
  json_object *scene_nodes = jget (jidx (gb.doc, "scenes", 0), "nodes");
  TG_CHECK_INT_EQ (json_object_array_length (scene_nodes), 2);
  TG_CHECK_INT_EQ (json_object_get_int (json_object_array_get_idx (scene_nodes, 0)), n[0]);
  TG_CHECK_INT_EQ (json_object_get_int (json_object_array_get_idx (scene_nodes, 1)), n[4]);
  json_object *n0 = jidx (gb.doc, "nodes", n[0]);
  json_object *ids = jget (jget (jget (n0, "extensions"), "MSFT_lod"), "ids");
  TG_CHECK_INT_EQ (json_object_array_length (ids), 2);
  TG_CHECK_INT_EQ (json_object_get_int (json_object_array_get_idx (ids, 0)), n[1]);
  TG_CHECK_INT_EQ (json_object_get_int (json_object_array_get_idx (ids, 1)), n[2]);
  json_object *c = jget (jget (n0, "extras"), "MSFT_screencoverage");
  TG_CHECK_INT_EQ (json_object_array_length (c), 3);
  for (int k = 0; k < 3; k++)
    TG_CHECK (json_object_get_double (json_object_array_get_idx (c, k)) == cov[k]);
  glb_close (&gb);
}

static void
test_empty_mesh (void)
{
  TgMesh *m = tg_mesh_new (1);
  TgError err = { 0 };
  const char *path = tmp_path ("empty.glb");
  Glb g;

  TG_CHECK (write_mesh ("glb", path, m, &err) == 0);
  remember_glb (path);
  if (glb_open (path, &g) == 0)
    {
      TG_CHECK (jget (g.doc, "nodes") == NULL);
      TG_CHECK (jget (g.doc, "buffers") == NULL);
      TG_CHECK (g.bin == NULL);
      glb_close (&g);
    }
  tg_mesh_free (m);
}

/* --- options: up axis, first level only; index widths -------------------------------- */

/* PLY with up = z: world (x, y, z) is (x, z, y) in the file, normals too,
 * and triangles are still reversed (the swap is a reflection), so the
 * first face of tile_a is (0, 3, 1) and its normal points along +Z. */
static void
test_ply_up_z (void)
{
  TgMesh *m = sample_mesh ();
  TgError err = { 0 };
  TgMeshWriteOptions opt = { .up = TG_MESH_UP_Z };
  const char *path = tmp_path ("sample_zup.ply");
  size_t len;
  uint8_t *data;
  char *end;

  m->chunks[1].n_indices = 0; /* tile_a alone: stride 32 */
  TG_CHECK (write_mesh_opt ("ply", path, m, &opt, &err) == 0);
  data = read_all (path, &len);
  end = data ? strstr ((char *) data, "end_header\n") : NULL;
  TG_CHECK (end != NULL);
  if (end)
    {
      const uint8_t *body = (const uint8_t *) end + 11;
      const TgMeshChunk *c = &m->chunks[0];
      float rec[8], pos[9], nrm[3];

      for (int k = 0; k < 9; k++)
        {
          memcpy (rec, body + (size_t) k * 32, 32);
          TG_CHECK (rec[0] == c->positions[3 * k] && rec[1] == c->positions[3 * k + 2]
                    && rec[2] == c->positions[3 * k + 1]);
          TG_CHECK (rec[3] == c->normals[3 * k] && rec[4] == c->normals[3 * k + 2]
                    && rec[5] == c->normals[3 * k + 1]);
        }
      const uint8_t *fp = body + 9 * 32;
      TG_CHECK_INT_EQ (rd32 (fp + 1), 0);
      TG_CHECK_INT_EQ (rd32 (fp + 5), 3);
      TG_CHECK_INT_EQ (rd32 (fp + 9), 1);
      /* The face's right-handed normal agrees with its vertices' (+Z). */
      for (int k = 0; k < 3; k++)
        memcpy (pos + 3 * k, body + (size_t) rd32 (fp + 1 + 4 * k) * 32, 12);
      memcpy (nrm, body + 12, 12);
      double e1[3] = { pos[3] - pos[0], pos[4] - pos[1], pos[5] - pos[2] };
      double e2[3] = { pos[6] - pos[0], pos[7] - pos[1], pos[8] - pos[2] };
      double n[3] = { e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                      e1[0] * e2[1] - e1[1] * e2[0] };
      TG_CHECK_MSG (n[2] > 0.0 && n[0] * nrm[0] + n[1] * nrm[1] + n[2] * nrm[2] > 0.0,
                    "face normal (%g, %g, %g)", n[0], n[1], n[2]);
    }
  free (data);
  tg_mesh_free (m);
}

/* Counts lines of OBJ text starting with PREFIX. */
static int
count_lines (const char *path, const char *prefix)
{
  size_t len;
  char *text = (char *) read_all (path, &len);
  int n = 0;

  for (char *line = text ? strtok (text, "\n") : NULL; line; line = strtok (NULL, "\n"))
    n += strncmp (line, prefix, strlen (prefix)) == 0;
  free (text);
  return n;
}

/* With tile_b a coarser level (lod 1), lods = first leaves it out of OBJ
 * and PLY; the default writes both, as before. */
static void
test_first_lod_only (void)
{
  TgMesh *m = sample_mesh ();
  TgError err = { 0 };
  TgMeshWriteOptions first = { .first_lod_only = 1 };
  const char *obj = tmp_path ("lods.obj"), *ply = tmp_path ("lods.ply");
  size_t len;
  uint8_t *data;

  m->chunks[1].lod = 1;
  TG_CHECK (write_mesh ("obj", obj, m, &err) == 0);
  TG_CHECK_INT_EQ (count_lines (obj, "o "), 2);
  TG_CHECK_INT_EQ (count_lines (obj, "f "), 9);
  TG_CHECK (write_mesh_opt ("obj", obj, m, &first, &err) == 0);
  TG_CHECK_INT_EQ (count_lines (obj, "o tile_a"), 1);
  TG_CHECK_INT_EQ (count_lines (obj, "o "), 1);
  TG_CHECK_INT_EQ (count_lines (obj, "v "), 9);
  TG_CHECK_INT_EQ (count_lines (obj, "f "), 8);

  TG_CHECK (write_mesh_opt ("ply", ply, m, &first, &err) == 0);
  data = read_all (ply, &len);
  TG_CHECK (data != NULL);
  if (data)
    {
      char *end = strstr ((char *) data, "end_header\n");
      TG_CHECK (end != NULL);
      if (end)
        *end = 0;
      TG_CHECK_STR_CONTAINS ((char *) data, "element vertex 9\n");
      TG_CHECK_STR_CONTAINS ((char *) data, "element face 8\n");
      TG_CHECK (strstr ((char *) data, "tile_b") == NULL);
      /* Every chunk written has UVs now. */
      TG_CHECK_STR_CONTAINS ((char *) data, "property float s\n");
      TG_CHECK_INT_EQ (len - (size_t) (end + 11 - (char *) data), (size_t) 9 * 32 + 8 * 13);
    }
  free (data);
  tg_mesh_free (m);
}

/* lods = first is one rule for every format: a glb leaves the coarser
 * level out too (no MSFT_lod), where by default it hangs off the first. */
static void
test_first_lod_only_glb (void)
{
  TgMesh *m = sample_mesh ();
  TgError err = { 0 };
  TgMeshWriteOptions first = { .first_lod_only = 1 };
  const char *path = tmp_path ("lods_first.glb");
  Glb gb;

  tg_mesh_chunk_set_name (&m->chunks[0], "tile_lod0");
  tg_mesh_chunk_set_name (&m->chunks[1], "tile_lod1");
  m->chunks[1].lod = 1;
  TG_CHECK (write_mesh ("glb", path, m, &err) == 0);
  if (glb_open (path, &gb) == 0)
    {
      TG_CHECK_INT_EQ (json_object_array_length (jget (gb.doc, "nodes")), 2);
      TG_CHECK (jget (jget (jidx (gb.doc, "nodes", 0), "extensions"), "MSFT_lod") != NULL);
    }
  glb_close (&gb);
  TG_CHECK (write_mesh_opt ("glb", path, m, &first, &err) == 0);
  if (glb_open (path, &gb) == 0)
    {
      TG_CHECK_INT_EQ (json_object_array_length (jget (gb.doc, "nodes")), 1);
      TG_CHECK_INT_EQ (json_object_array_length (jget (gb.doc, "meshes")), 1);
      TG_CHECK (strcmp (json_object_get_string (jget (jidx (gb.doc, "nodes", 0), "name")),
                        "tile_lod0")
                == 0);
      TG_CHECK (jget (gb.doc, "extensionsUsed") == NULL);
    }
  glb_close (&gb);
  tg_mesh_free (m);
}

/* A flat grid chunk of N vertices in rows of 256 (the last row short),
 * its quads' triangles where all four corners exist. */
static void
grid_chunk (TgMeshChunk *c, const char *name, int n)
{
  int rows = (n + 255) / 256, t = 0;

  tg_mesh_chunk_set_name (c, name);
  tg_mesh_chunk_alloc (c, n, (int64_t) 6 * 255 * (rows - 1), 0);
  for (int v = 0; v < n; v++)
    {
      c->positions[3 * v] = (float) (v % 256);
      c->positions[3 * v + 1] = 0.0f;
      c->positions[3 * v + 2] = -(float) (v / 256);
      c->normals[3 * v] = 0.0f;
      c->normals[3 * v + 1] = 1.0f;
      c->normals[3 * v + 2] = 0.0f;
    }
  for (int j = 0; j + 1 < rows; j++)
    for (int i = 0; i < 255; i++)
      {
        uint32_t q = (uint32_t) (j * 256 + i);
        if (q + 257 < (uint32_t) n)
          {
            c->indices[t++] = q, c->indices[t++] = q + 1, c->indices[t++] = q + 256;
            c->indices[t++] = q + 1, c->indices[t++] = q + 257, c->indices[t++] = q + 256;
          }
        else if (q + 256 < (uint32_t) n)
          c->indices[t++] = q, c->indices[t++] = q + 1, c->indices[t++] = q + 256;
      }
  c->n_indices = t;
}

/* 65535 vertices (largest index 65534) fit 16-bit indices; 65536 need
 * 32 bits, since 65535 is the restart value.  Both read back. */
static void
test_glb_index_width (void)
{
  TgMesh *m = tg_mesh_new (2);
  TgMeshReader read = tg_io_mesh_reader ("glb");
  TgMesh *back = NULL;
  TgError err = { 0 };
  const char *path = tmp_path ("widths.glb");
  float top[3] = { -1e30f, -1e30f, -1e30f };
  Glb g;

  grid_chunk (&m->chunks[0], "short", 65535);
  grid_chunk (&m->chunks[1], "long", 65536);
  TG_CHECK (write_mesh ("glb", path, m, &err) == 0);
  remember_glb (path);
  if (glb_open (path, &g) == 0)
    {
      static const int want[2] = { 5123, 5125 };
      for (int k = 0; k < 2; k++)
        {
          json_object *prim = jidx (jidx (g.doc, "meshes", k), "primitives", 0);
          int count = 0, type = 0;
          uint32_t *idx = accessor_indices (&g, jint (prim, "indices"), &count, &type);
          uint32_t *fidx = reversed (m->chunks[k].indices, m->chunks[k].n_indices);

          TG_CHECK_INT_EQ (type, want[k]);
          TG_CHECK_INT_EQ (count, m->chunks[k].n_indices);
          TG_CHECK (idx && memcmp (idx, fidx, 4 * (size_t) count) == 0);
          free (idx);
          free (fidx);
        }
      glb_close (&g);
    }
  TG_CHECK_INT_EQ (glb_faces (path, top), (m->chunks[0].n_indices + m->chunks[1].n_indices) / 3);
  TG_CHECK (read && read (path, &back, &err) == 0);
  for (int k = 0; back && k < 2 && k < back->n_chunks; k++)
    TG_CHECK (back->chunks[k].n_indices == m->chunks[k].n_indices
              && memcmp (back->chunks[k].indices, m->chunks[k].indices,
                         4 * (size_t) m->chunks[k].n_indices) == 0);
  tg_mesh_free (back);
  tg_mesh_free (m);
}


/* --- textures, quantization and meshopt ------------------------------------- */

/* A 3 x 2 colour map whose north-west pixel (row 0, column 0) is red. */
static const float texture_rgb[18] = { 1, 0, 0, 0, 1, 0, 0, 0, 1,
                                       1, 1, 0, 0, 1, 1, 0.5f, 0.5f, 0.5f };

static void
test_glb_texture (void)
{
  TgMesh *m = sample_mesh ();
  TgImage tex = { .width = 3, .height = 2, .channels = 3, .bits = 32,
                  .data = (void *) texture_rgb };
  TgMeshWriteOptions opt = { .texture = &tex };
  const char *path = tmp_path ("textured.glb"), *png = tmp_path ("textured_embedded.png");
  TgError err = { 0 };
  Glb g;

  TG_CHECK (write_mesh_opt ("glb", path, m, &opt, &err) == 0);
  remember_glb (path);
  if (glb_open (path, &g) == 0)
    {
      json_object *pbr = jget (jidx (g.doc, "materials", 0), "pbrMetallicRoughness");
      json_object *tinfo = jget (pbr, "baseColorTexture");
      json_object *t = jidx (g.doc, "textures", jint (tinfo, "index"));
      json_object *im = jidx (g.doc, "images", jint (t, "source"));
      json_object *v = jidx (g.doc, "bufferViews", jint (im, "bufferView"));
      json_object *smp = jidx (g.doc, "samplers", jint (t, "sampler"));

      TG_CHECK (tinfo && t && im && v && smp);
      /* The map as it is: a white factor, clamped at the terrain's edges. */
      for (int c = 0; c < 4; c++)
        TG_CHECK (json_object_get_double (json_object_array_get_idx (jget (pbr, "baseColorFactor"),
                                                                     c)) == 1.0);
      TG_CHECK_INT_EQ (jint (smp, "wrapS"), 33071);
      TG_CHECK_INT_EQ (jint (smp, "wrapT"), 33071);
      if (v && im)
        {
          TG_CHECK_STR_CONTAINS (json_object_get_string (jget (im, "mimeType")), "image/png");
          FILE *f = fopen (png, "wb");
          int off = jint (v, "byteOffset") < 0 ? 0 : jint (v, "byteOffset");
          fwrite (g.bin + off, 1, (size_t) jint (v, "byteLength"), f);
          fclose (f);
          TgImage back = { 0 };
          TG_CHECK (tg_io_read_image (png, &back, &err) == 0);
          TG_CHECK_INT_EQ (back.width, 3);
          TG_CHECK_INT_EQ (back.height, 2);
          TG_CHECK_INT_EQ (back.channels, 3);
          TG_CHECK_INT_EQ (back.bits, 8);
          for (int i = 0; back.data && i < 18; i++)
            TG_CHECK_INT_EQ (((uint8_t *) back.data)[i], tg_quantise (texture_rgb[i], 255.0));
          free (back.data);
        }
      /* glTF samples UV (0, 0) at the first pixel of the PNG: the red
       * north-west one must sit at the north-west corner of tile_a
       * (file -X, -Z). */
      json_object *prim = jidx (jidx (g.doc, "meshes", 0), "primitives", 0);
      int count = 0, nw = -1;
      size_t bytes = 0;
      const uint8_t *pos
        = accessor_data (&g, jint (jget (prim, "attributes"), "POSITION"), &count, &bytes);
      const uint8_t *uv
        = accessor_data (&g, jint (jget (prim, "attributes"), "TEXCOORD_0"), &count, &bytes);
      float best[3] = { 0 };
      for (int i = 0; pos && i < count; i++)
        {
          float p[3];
          memcpy (p, pos + 12 * i, 12);
          if (nw < 0 || p[0] + p[2] < best[0] + best[2])
            nw = i, memcpy (best, p, 12);
        }
      if (uv && nw >= 0)
        {
          float st[2];
          memcpy (st, uv + 8 * nw, 8);
          TG_CHECK_MSG (st[0] == 0.0f && st[1] == 0.0f, "north-west UV (%g, %g)", st[0], st[1]);
        }
      /* tile_b has no UVs: the plain material, not the textured one. */
      json_object *pb = jidx (jidx (g.doc, "meshes", 1), "primitives", 0);
      TG_CHECK (jint (pb, "material") >= 0 && jint (pb, "material") != jint (prim, "material"));
      TG_CHECK (!jget (jget (jidx (g.doc, "materials", jint (pb, "material")),
                             "pbrMetallicRoughness"), "baseColorTexture"));
      glb_close (&g);
    }
  tg_mesh_free (m);
}

static void
test_obj_material (void)
{
  TgMesh *m = sample_mesh ();
  TgMeshWriteOptions opt = { .material_file = "terrain.mtl", .texture_file = "terrain_color.png" };
  TgError err = { 0 };
  size_t len = 0;
  char *text;
  int groups = 0, uses = 0;

  TG_CHECK (write_mesh_opt ("obj", tmp_path ("material.obj"), m, &opt, &err) == 0);
  text = (char *) read_all (tmp_path ("material.obj"), &len);
  TG_CHECK (text && strncmp (strchr (text, '\n') + 1, "mtllib terrain.mtl\n", 19) == 0);
  for (char *l = text; l && *l; l = strchr (l, '\n') ? strchr (l, '\n') + 1 : NULL)
    {
      groups += strncmp (l, "o ", 2) == 0;
      uses += strncmp (l, "usemtl terrane\n", 15) == 0;
    }
  TG_CHECK_INT_EQ (groups, 2);
  TG_CHECK_INT_EQ (uses, 2);
  /* OBJ's v runs up the image: the north-west vertex (the first) shows
   * the image's top-left pixel at (0, 1). */
  TG_CHECK (text && strstr (text, "\nvt 0 1\n") != NULL
            && strstr (text, "\nvt ") == strstr (text, "\nvt 0 1\n"));
  free (text);

  TG_CHECK (write_mesh_opt ("mtl", tmp_path ("terrain.mtl"), m, &opt, &err) == 0);
  text = (char *) read_all (tmp_path ("terrain.mtl"), &len);
  TG_CHECK (text && strstr (text, "\nnewmtl terrane\n") && strstr (text, "\nKd 1 1 1\n")
            && strstr (text, "\nmap_Kd terrain_color.png\n"));
  free (text);
  opt.texture_file = NULL;
  TG_CHECK (write_mesh_opt ("mtl", tmp_path ("none.mtl"), m, &opt, &err) < 0);

  /* PLY names the map the MeshLab way. */
  opt = (TgMeshWriteOptions) { .texture_file = "terrain_color.png" };
  TG_CHECK (write_mesh_opt ("ply", tmp_path ("material.ply"), m, &opt, &err) == 0);
  text = (char *) read_all (tmp_path ("material.ply"), &len);
  TG_CHECK (text && strstr (text, "\ncomment TextureFile terrain_color.png\n"));
  free (text);
  tg_mesh_free (m);
}

/* Two 40 x 40 tiles of a bumpy terrain side by side, sharing the column
 * of vertices on their common edge, with world-wide UVs. */
static TgMesh *
two_tiles (void)
{
  enum { N = 40 };
  TgMesh *m = tg_mesh_new (2);

  for (int t = 0; t < 2; t++)
    {
      TgMeshChunk *c = &m->chunks[t];
      uint32_t *idx;
      tg_mesh_chunk_set_name (c, t ? "chunk_x1_z0_lod0" : "chunk_x0_z0_lod0");
      tg_mesh_chunk_alloc (c, N * N, 6 * (N - 1) * (N - 1), 1);
      for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++)
          {
            int v = j * N + i, gi = t * (N - 1) + i;
            double x = -300.0 + 7.7 * gi, z = 150.0 - 7.7 * j;
            double y = 40.0 * sin (x / 37.0) * cos (z / 53.0) + 0.01 * gi;
            double nx = -40.0 / 37.0 * cos (x / 37.0) * cos (z / 53.0);
            double nz = 40.0 / 53.0 * sin (x / 37.0) * sin (z / 53.0);
            double l = sqrt (nx * nx + 1.0 + nz * nz);
            c->positions[3 * v] = (float) x;
            c->positions[3 * v + 1] = (float) y;
            c->positions[3 * v + 2] = (float) z;
            c->normals[3 * v] = (float) (nx / l);
            c->normals[3 * v + 1] = (float) (1.0 / l);
            c->normals[3 * v + 2] = (float) (nz / l);
            c->uvs[2 * v] = (float) gi / (float) (2 * N - 2);
            c->uvs[2 * v + 1] = (float) j / (float) (N - 1);
          }
      idx = c->indices;
      for (int j = 0; j + 1 < N; j++)
        for (int i = 0; i + 1 < N; i++)
          {
            uint32_t q = (uint32_t) (j * N + i);
            *idx++ = q, *idx++ = q + 1, *idx++ = q + N;
            *idx++ = q + 1, *idx++ = q + N + 1, *idx++ = q + N;
          }
    }
  return m;
}

/* The bytes of view VIEW as a reader gets them: EXT_meshopt_compression
 * views decoded with meshoptimizer's decoder (checking the codec's
 * header byte and that the data lies in the BIN chunk), others copied.
 * malloc'd; *LEN its length. */
static uint8_t *
view_decoded (Glb *g, int view, size_t *len)
{
  json_object *v = jidx (g->doc, "bufferViews", view);
  json_object *mo = jget (jget (v, "extensions"), "EXT_meshopt_compression");
  uint8_t *out;

  *len = (size_t) jint (v, "byteLength");
  out = malloc (*len ? *len : 1);
  if (!mo)
    {
      int off = jint (v, "byteOffset") < 0 ? 0 : jint (v, "byteOffset");
      TG_CHECK_INT_EQ (jint (v, "buffer"), 0);
      memcpy (out, g->bin + off, *len);
      return out;
    }
#ifdef TG_HAVE_MESHOPT
  {
    const char *mode = json_object_get_string (jget (mo, "mode"));
    size_t off = (size_t) jint (mo, "byteOffset"), n = (size_t) jint (mo, "byteLength");
    size_t count = (size_t) jint (mo, "count"), stride = (size_t) jint (mo, "byteStride");
    int rc;

    TG_CHECK_INT_EQ (jint (v, "buffer"), 1);
    TG_CHECK_INT_EQ (jint (mo, "buffer"), 0);
    TG_CHECK (off + n <= g->bin_len);
    TG_CHECK_INT_EQ (*len, count * stride);
    if (strcmp (mode, "ATTRIBUTES") == 0)
      {
        TG_CHECK_INT_EQ (g->bin[off], 0xa0);
        TG_CHECK_INT_EQ (jint (v, "byteStride"), (int) stride);
        rc = meshopt_decodeVertexBuffer (out, count, stride, g->bin + off, n);
      }
    else
      {
        TG_CHECK_STR_CONTAINS (mode, "TRIANGLES");
        TG_CHECK_INT_EQ (g->bin[off], 0xe1);
        rc = meshopt_decodeIndexBuffer (out, count, stride, g->bin + off, n);
      }
    TG_CHECK_MSG (rc == 0, "meshopt decode of view %d: %d", view, rc);
  }
#else
  TG_CHECK_MSG (0, "a meshopt view in a build without meshoptimizer");
#endif
  return out;
}

/* Reads glb PATH (written with COMPRESS) back through its quantized
 * accessors and checks each chunk of M within half a step of the grid,
 * normals within half an int8 step, UVs within half a uint16 step, the
 * triangles exactly; stores every decoded view, concatenated, in *ALL. */
static void
check_quantized (const char *path, const TgMesh *m, bool meshopt, uint8_t **all, size_t *all_len)
{
  Glb g;
  float step = 0.0f, origin[3] = { 0 };

  *all = NULL;
  *all_len = 0;
  if (glb_open (path, &g) != 0)
    return;
  json_object *req = jget (g.doc, "extensionsRequired");
  TG_CHECK (req && strstr (json_object_get_string (req), "KHR_mesh_quantization"));
  TG_CHECK (meshopt == (req && strstr (json_object_get_string (req), "EXT_meshopt_compression")));
  if (meshopt)
    {
      json_object *fb = jidx (g.doc, "buffers", 1);
      TG_CHECK (fb && !jget (fb, "uri")
                && json_object_get_boolean (
                  jget (jget (jget (fb, "extensions"), "EXT_meshopt_compression"), "fallback")));
    }
  for (int v = 0; v < (int) json_object_array_length (jget (g.doc, "bufferViews")); v++)
    {
      size_t n;
      uint8_t *d = view_decoded (&g, v, &n);
      *all = realloc (*all, *all_len + n);
      memcpy (*all + *all_len, d, n);
      *all_len += n;
      free (d);
    }
  for (int ci = 0; ci < m->n_chunks; ci++)
    {
      const TgMeshChunk *c = &m->chunks[ci];
      json_object *node = jidx (g.doc, "nodes", ci);
      json_object *prim = jidx (jidx (g.doc, "meshes", jint (node, "mesh")), "primitives", 0);
      json_object *attrs = jget (prim, "attributes");
      json_object *sc = jget (node, "scale"), *tr = jget (node, "translation");
      size_t n;

      TG_CHECK (sc && tr);
      if (!sc || !tr || !prim)
        continue;
      /* One grid for every chunk, the same step on all axes. */
      float s0 = (float) json_object_get_double (json_object_array_get_idx (sc, 0));
      for (int a = 0; a < 3; a++)
        {
          float o = (float) json_object_get_double (json_object_array_get_idx (tr, a));
          TG_CHECK ((float) json_object_get_double (json_object_array_get_idx (sc, a)) == s0);
          TG_CHECK (ci == 0 || (o == origin[a] && s0 == step));
          origin[a] = o;
        }
      step = s0;

      json_object *pa = jidx (g.doc, "accessors", jint (attrs, "POSITION"));
      json_object *na = jidx (g.doc, "accessors", jint (attrs, "NORMAL"));
      json_object *ua = jidx (g.doc, "accessors", jint (attrs, "TEXCOORD_0"));
      TG_CHECK_INT_EQ (jint (pa, "componentType"), 5123);
      TG_CHECK_INT_EQ (jint (na, "componentType"), 5120);
      TG_CHECK (json_object_get_boolean (jget (na, "normalized")));
      TG_CHECK_INT_EQ (jint (ua, "componentType"), 5123);
      TG_CHECK (json_object_get_boolean (jget (ua, "normalized")));
      TG_CHECK_INT_EQ (jint (pa, "count"), c->n_vertices);

      uint8_t *pos = view_decoded (&g, jint (pa, "bufferView"), &n);
      TG_CHECK_INT_EQ (n, (size_t) c->n_vertices * 8);
      uint8_t *nrm = view_decoded (&g, jint (na, "bufferView"), &n);
      TG_CHECK_INT_EQ (n, (size_t) c->n_vertices * 4);
      uint8_t *uv = view_decoded (&g, jint (ua, "bufferView"), &n);
      TG_CHECK_INT_EQ (n, (size_t) c->n_vertices * 4);
      double worst = 0.0, worst_n = 0.0, worst_uv = 0.0;
      for (int i = 0; i < c->n_vertices; i++)
        {
          uint16_t q[3], t[2];
          int8_t qn[3];
          memcpy (q, pos + 8 * i, 6);
          memcpy (qn, nrm + 4 * i, 3);
          memcpy (t, uv + 4 * i, 4);
          for (int a = 0; a < 3; a++)
            {
              /* As a reader computes it: translation + scale * q. */
              float got = origin[a] + step * (float) q[a];
              float want = a == 2 ? -c->positions[3 * i + a] : c->positions[3 * i + a];
              float wn = a == 2 ? -c->normals[3 * i + a] : c->normals[3 * i + a];
              worst = fmax (worst, fabs ((double) got - want));
              worst_n = fmax (worst_n, fabs (qn[a] / 127.0 - wn));
            }
          for (int a = 0; a < 2; a++)
            worst_uv = fmax (worst_uv, fabs (t[a] / 65535.0 - c->uvs[2 * i + a]));
        }
      TG_CHECK_MSG (worst <= 0.5 * step * 1.001 + 1e-4, "chunk %d: position off by %g (step %g)",
                    ci, worst, step);
      TG_CHECK_MSG (worst_n <= 0.5 / 127.0 + 1e-6, "chunk %d: normal off by %g", ci, worst_n);
      TG_CHECK_MSG (worst_uv <= 0.5 / 65535.0 + 1e-7, "chunk %d: uv off by %g", ci, worst_uv);

      json_object *ia = jidx (g.doc, "accessors", jint (prim, "indices"));
      uint8_t *idx = view_decoded (&g, jint (ia, "bufferView"), &n);
      uint32_t *want = reversed (c->indices, c->n_indices);
      TG_CHECK_INT_EQ (jint (ia, "componentType"), 5123);
      TG_CHECK_INT_EQ (n, (size_t) c->n_indices * 2);
      for (int64_t i = 0; i < c->n_indices; i++)
        {
          uint16_t got;
          memcpy (&got, idx + 2 * i, 2);
          TG_CHECK_MSG (got == want[i], "chunk %d index %lld: %u, want %u", ci, (long long) i,
                        got, want[i]);
        }
      free (want);
      free (idx);
      free (pos);
      free (nrm);
      free (uv);
    }
  glb_close (&g);
}

/* The shared edge: the last column of tile 0 and the first of tile 1
 * hold the same floats, so they must get the same steps (no crack). */
static void
check_shared_edge (const char *path)
{
  Glb g;
  size_t n0, n1;

  if (glb_open (path, &g) != 0)
    return;
  json_object *p0 = jidx (jidx (g.doc, "meshes", 0), "primitives", 0);
  json_object *p1 = jidx (jidx (g.doc, "meshes", 1), "primitives", 0);
  json_object *a0 = jidx (g.doc, "accessors", jint (jget (p0, "attributes"), "POSITION"));
  json_object *a1 = jidx (g.doc, "accessors", jint (jget (p1, "attributes"), "POSITION"));
  uint8_t *q0 = view_decoded (&g, jint (a0, "bufferView"), &n0);
  uint8_t *q1 = view_decoded (&g, jint (a1, "bufferView"), &n1);
  for (int j = 0; n0 == n1 && n0 == 40 * 40 * 8 && j < 40; j++)
    TG_CHECK_MSG (memcmp (q0 + 8 * (j * 40 + 39), q1 + 8 * (j * 40), 6) == 0,
                  "row %d: the shared vertex differs between the tiles", j);
  free (q0);
  free (q1);
  glb_close (&g);
}

static void
test_glb_compress (void)
{
  TgMesh *m = two_tiles ();
  TgError err = { 0 };
  const char *plain = tmp_path ("c_none.glb"), *quant = tmp_path ("c_quantize.glb");
  const char *mopt = tmp_path ("c_meshopt.glb");
  uint8_t *q_views = NULL, *m_views = NULL;
  size_t q_len = 0, m_len = 0, sz[3];

  TG_CHECK (write_mesh_opt ("glb", plain, m, &(TgMeshWriteOptions) { 0 }, &err) == 0);
  TG_CHECK (write_mesh_opt ("glb", quant, m,
                            &(TgMeshWriteOptions) { .compress = TG_MESH_COMPRESS_QUANTIZE },
                            &err) == 0);
  remember_glb (plain);
  remember_glb (quant);
  check_quantized (quant, m, false, &q_views, &q_len);
  check_shared_edge (quant);
  free (read_all (plain, &sz[0]));
  free (read_all (quant, &sz[1]));
#ifdef TG_HAVE_MESHOPT
  TG_CHECK (write_mesh_opt ("glb", mopt, m,
                            &(TgMeshWriteOptions) { .compress = TG_MESH_COMPRESS_MESHOPT },
                            &err) == 0);
  remember_glb (mopt);
  check_quantized (mopt, m, true, &m_views, &m_len);
  check_shared_edge (mopt);
  /* meshopt is the quantized data, compressed: decoded, the same bytes. */
  TG_CHECK (q_len > 0 && m_len == q_len && memcmp (q_views, m_views, q_len) == 0);
  free (read_all (mopt, &sz[2]));
  fprintf (stderr, "  two 40x40 tiles: none %zu B, quantize %zu B, meshopt %zu B\n", sz[0], sz[1],
           sz[2]);
  TG_CHECK (sz[2] * 2 < sz[1] && sz[1] * 3 < sz[0] * 2);
#else
  TG_CHECK (write_mesh_opt ("glb", mopt, m,
                            &(TgMeshWriteOptions) { .compress = TG_MESH_COMPRESS_MESHOPT },
                            &err) < 0);
  TG_CHECK_STR_CONTAINS (err.message, "meshoptimizer");
  fprintf (stderr, "  (no meshoptimizer: meshopt refused, not decoded)\n");
#endif
  free (q_views);
  free (m_views);
  tg_mesh_free (m);
}

static void
test_validator (void)
{
  char cmd[9000];
  int rc;

  snprintf (cmd, sizeof cmd, "bash '%s'%s", tgtest_src ("tests/common/gltf_validate.sh"),
            glb_list);
  rc = system (cmd);
  rc = WIFEXITED (rc) ? WEXITSTATUS (rc) : 1;
  if (rc == 77)
    fprintf (stderr, "  (npm missing: glTF-Validator not run)\n");
  else
    TG_CHECK_MSG (rc == 0, "glTF-Validator: exit %d on%s", rc, glb_list);
}

int
main (void)
{
  TG_CHECK (tg_formats_init () == 0);
  tmpdir = tgtest_tmpdir ("tgfmt-mesh-");
  if (!tmpdir)
    return 1;
  TG_RUN (test_glb_structure);
  TG_RUN (test_golden_hashes);
  TG_RUN (test_obj);
  TG_RUN (test_ply);
  TG_RUN (test_north_west_bump);
  TG_RUN (test_glb_round_trip);
  TG_RUN (test_bad_mesh);
  TG_RUN (test_builder_instancing);
  TG_RUN (test_builder_lods);
  TG_RUN (test_empty_mesh);
  TG_RUN (test_ply_up_z);
  TG_RUN (test_first_lod_only);
  TG_RUN (test_first_lod_only_glb);
  TG_RUN (test_glb_index_width);
  TG_RUN (test_glb_texture);
  TG_RUN (test_obj_material);
  TG_RUN (test_glb_compress);
  TG_RUN (test_validator);
  return tgtest_result ();
}
