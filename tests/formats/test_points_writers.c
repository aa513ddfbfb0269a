/* Tests for the instance-list writers (csv, json, glb, godot) and the .glb
 * mesh reader: each file is parsed back and compared with the instances
 * value for value (csv and json numbers read back as the same floats, in
 * world coordinates); the Godot scene's structure (transform_format
 * before instance_count, 12 floats per instance that rebuild the
 * instance's transform in the file's right-handed frame) and its
 * prototype meshes (the glb's: the marker cone standing on its base, or
 * the mesh given, decoded from Godot's surface layout); the glb's
 * EXT_mesh_gpu_instancing rules checked here (types, equal counts, unit
 * quaternions, data equal to the instances in the file's frame: z =
 * -north, quaternion (-x, -y, z, w)) and by the Khronos glTF-Validator;
 * a yawed instance whose axes must point the same geographic way in the
 * glb and the Godot scene as in the world (R' = M R M, M = diag (1, 1,
 * -1)); prototype meshes read from a .glb with their node transforms and
 * brought back to world coordinates; bad input refused with a message
 * naming the instance. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include <tgformats/tgformats.h>
#include <tgraph/tgraph.h>

#include "glb-builder.h"
#include "tgtest.h"

/* The test folder, from tgtest_tmpdir: removed when the program exits. */
static const char *tmpdir;
static char glb_list[4096];

static const char *
tmp_path (const char *name)
{
  static char buf[4][600];
  static int k;
  char *b = buf[k++ & 3];

  snprintf (b, sizeof buf[0], "%s/%s", tmpdir, name);
  return b;
}

static unsigned char *
read_all (const char *path, size_t *len)
{
  FILE *f = fopen (path, "rb");
  unsigned char *buf;
  long n;

  if (!f)
    return NULL;
  fseek (f, 0, SEEK_END);
  n = ftell (f);
  fseek (f, 0, SEEK_SET);
  buf = malloc ((size_t) n + 1);
  if (buf && fread (buf, 1, (size_t) n, f) != (size_t) n)
    {
      free (buf);
      buf = NULL;
    }
  fclose (f);
  if (buf)
    buf[n] = '\0';
  *len = (size_t) n;
  return buf;
}

/* Writes P with the writer for FORMAT to NAME in the frame OPT asks for
 * (NULL: the defaults); returns the writer's code. */
static int
write_points_opt (const char *format, const char *name, const TgPoints *p,
                  const TgMesh *const *meshes, const TgPointsWriteOptions *opt, TgError *err)
{
  TgPointsWriter w = tg_io_points_writer (format);
  FILE *f;
  int rc;

  TG_CHECK_MSG (w != NULL, "no points writer \"%s\"", format);
  if (!w)
    return TG_EFORMAT;
  f = fopen (tmp_path (name), "wb");
  if (!f)
    return TG_EIO;
  rc = w (f, p, meshes, opt, err);
  fclose (f);
  return rc;
}

static int
write_points (const char *format, const char *name, const TgPoints *p,
              const TgMesh *const *meshes, TgError *err)
{
  return write_points_opt (format, name, p, meshes, NULL, err);
}

/* Instances with awkward names and values: a comma and a quote in a name,
 * a prototype with no instances, turned and unevenly scaled instances,
 * fractions that need 9 digits. */
static TgPoints *
sample_points (void)
{
  TgPoints *p = tg_points_new ();
  static const char *names[] = { "pine", "rock, big", "say \"hi\"", "unused" };

  for (int k = 0; k < 4; k++)
    tg_points_add_proto (p, names[k]);
  for (int i = 0; i < 7; i++)
    {
      double yaw = 0.7 * i - 1.0, tilt = 0.1 * i;
      /* A yaw about +Y, then a small tilt about X. */
      double qy[4] = { 0, sin (yaw / 2), 0, cos (yaw / 2) };
      double qx[4] = { sin (tilt / 2), 0, 0, cos (tilt / 2) };
      float rot[4] = {
        (float) (qy[3] * qx[0] + qy[0] * qx[3] + qy[1] * qx[2] - qy[2] * qx[1]),
        (float) (qy[3] * qx[1] - qy[0] * qx[2] + qy[1] * qx[3] + qy[2] * qx[0]),
        (float) (qy[3] * qx[2] + qy[0] * qx[1] - qy[1] * qx[0] + qy[2] * qx[3]),
        (float) (qy[3] * qx[3] - qy[0] * qx[0] - qy[1] * qx[1] - qy[2] * qx[2]),
      };
      float pos[3] = { (float) (-1234.5678 + 101.1 * i), (float) (0.1 * i), (float) (3.0 / (i + 1)) };
      float scale[3] = { 1.0f + 0.1f * i, 0.5f, 1.0f / 3.0f };
      tg_points_push (p, pos, rot, scale, i % 3);
    }
  return p;
}

/* --- csv ---------------------------------------------------------------------- */

/* Splits one CSV record at LINE into FIELDS (RFC 4180 quotes); returns
 * the field count.  Modifies LINE. */
static int
csv_fields (char *line, char **fields, int max)
{
  int n = 0;
  char *s = line;

  while (n < max)
    {
      char *out = s;
      fields[n++] = s;
      if (*s == '"')
        {
          char *r = s + 1;
          fields[n - 1] = out;
          for (;;)
            {
              if (*r == '"' && r[1] == '"')
                {
                  *out++ = '"';
                  r += 2;
                }
              else if (*r == '"')
                {
                  r++;
                  break;
                }
              else
                *out++ = *r++;
            }
          *out = '\0';
          s = r;
        }
      else
        {
          while (*s && *s != ',' && *s != '\n')
            s++;
        }
      if (*s != ',')
        {
          *s = '\0';
          break;
        }
      *s++ = '\0';
    }
  return n;
}

static void
test_csv_reads_back_exactly (void)
{
  TgPoints *p = sample_points ();
  TgError err = { 0 };
  size_t len;
  unsigned char *text;
  char *line, *save = NULL;
  int64_t row = 0;

  TG_CHECK_INT_EQ (write_points ("csv", "i.csv", p, NULL, &err), 0);
  text = read_all (tmp_path ("i.csv"), &len);
  TG_CHECK (text != NULL);
  if (!text)
    goto out;
  TG_CHECK (strncmp ((char *) text, "prototype,px,py,pz,qx,qy,qz,qw,sx,sy,sz\n", 40) == 0);
  /* Shortest text: 0.5 is "0.5", not "0.500000000"; names quoted as RFC
   * 4180 wants. */
  TG_CHECK (strstr ((char *) text, ",0.5,0.33333334\n") != NULL);
  TG_CHECK (strstr ((char *) text, "\n\"rock, big\",") != NULL);
  TG_CHECK (strstr ((char *) text, "\n\"say \"\"hi\"\"\",") != NULL);
  line = strtok_r ((char *) text, "\n", &save);
  for (line = strtok_r (NULL, "\n", &save); line; line = strtok_r (NULL, "\n", &save), row++)
    {
      char *f[16];
      int n = csv_fields (line, f, 16);
      TG_CHECK_INT_EQ (n, 11);
      if (n != 11 || row >= p->n)
        break;
      TG_CHECK_MSG (strcmp (f[0], p->proto_names[p->proto[row]]) == 0, "row %lld: \"%s\"",
                    (long long) row, f[0]);
      for (int c = 0; c < 3; c++)
        {
          TG_CHECK (strtof (f[1 + c], NULL) == p->position[3 * row + c]);
          TG_CHECK (strtof (f[8 + c], NULL) == p->scale[3 * row + c]);
        }
      for (int c = 0; c < 4; c++)
        TG_CHECK (strtof (f[4 + c], NULL) == p->rotation[4 * row + c]);
    }
  TG_CHECK_INT_EQ (row, p->n);
  free (text);
out:
  tg_points_free (p);
}

/* --- json --------------------------------------------------------------------- */

static void
test_json_reads_back_exactly (void)
{
  TgPoints *p = sample_points ();
  TgError err = { 0 };
  size_t len;
  unsigned char *text;
  json_object *doc, *v, *inst;

  TG_CHECK_INT_EQ (write_points ("json", "i.json", p, NULL, &err), 0);
  text = read_all (tmp_path ("i.json"), &len);
  doc = text ? json_tokener_parse ((char *) text) : NULL;
  TG_CHECK (doc != NULL);
  if (!doc)
    goto out;
  TG_CHECK (json_object_object_get_ex (doc, "format", &v)
            && strcmp (json_object_get_string (v), "terrane-instances") == 0);
  TG_CHECK (json_object_object_get_ex (doc, "count", &v) && json_object_get_int64 (v) == p->n);
  TG_CHECK (json_object_object_get_ex (doc, "prototypes", &v)
            && json_object_array_length (v) == 4
            && strcmp (json_object_get_string (json_object_array_get_idx (v, 2)), "say \"hi\"")
                 == 0);
  TG_CHECK (json_object_object_get_ex (doc, "instances", &inst)
            && (int64_t) json_object_array_length (inst) == p->n);
  for (int64_t i = 0; inst && i < p->n && i < (int64_t) json_object_array_length (inst); i++)
    {
      json_object *o = json_object_array_get_idx (inst, (size_t) i), *a;
      static const char *keys[3] = { "position", "rotation", "scale" };
      const float *src[3] = { p->position + 3 * i, p->rotation + 4 * i, p->scale + 3 * i };
      TG_CHECK (json_object_object_get_ex (o, "prototype", &a)
                && strcmp (json_object_get_string (a), p->proto_names[p->proto[i]]) == 0);
      for (int k = 0; k < 3; k++)
        {
          int n = k == 1 ? 4 : 3;
          TG_CHECK (json_object_object_get_ex (o, keys[k], &a)
                    && (int) json_object_array_length (a) == n);
          for (int c = 0; a && c < n; c++)
            TG_CHECK ((float) json_object_get_double (json_object_array_get_idx (a, (size_t) c))
                      == src[k][c]);
        }
    }
  json_object_put (doc);
out:
  free (text);
  tg_points_free (p);
}

/* --- godot --------------------------------------------------------------------- */

static void
test_godot_scene_structure (void)
{
  TgPoints *p = sample_points ();
  TgError err = { 0 };
  size_t len;
  unsigned char *text;
  int found = 0;

  TG_CHECK_INT_EQ (write_points ("godot", "i.tscn", p, NULL, &err), 0);
  text = read_all (tmp_path ("i.tscn"), &len);
  TG_CHECK (text && strncmp ((char *) text, "[gd_scene load_steps=13 format=3]\n", 34) == 0);
  if (!text)
    goto out;
  TG_CHECK (strstr ((char *) text, "\n[node name=\"Instances\" type=\"Node3D\"]\n") != NULL);
  /* Names without the characters Godot refuses. */
  TG_CHECK (strstr ((char *) text, "[node name=\"say _hi_\" type=\"MultiMeshInstance3D\" "
                                   "parent=\".\"]\nmultimesh = SubResource(\"MultiMesh_2\")")
            != NULL);
  for (int k = 0; k < p->n_protos; k++)
    {
      char head[64];
      const char *sec, *tf, *ic, *buf, *end;
      long long count = -1, want = 0;
      double *vals;
      int nv = 0;
      for (int64_t i = 0; i < p->n; i++)
        want += p->proto[i] == k;
      snprintf (head, sizeof head, "[sub_resource type=\"MultiMesh\" id=\"MultiMesh_%d\"]", k);
      sec = strstr ((char *) text, head);
      TG_CHECK_MSG (sec != NULL, "no %s", head);
      if (!sec)
        continue;
      end = strstr (sec + 1, "\n[");
      tf = strstr (sec, "\ntransform_format = 1\n");
      ic = strstr (sec, "\ninstance_count = ");
      buf = strstr (sec, "\nbuffer = PackedFloat32Array(");
      TG_CHECK (tf && ic && buf && tf < ic && ic < buf && buf < end);
      if (!(tf && ic && buf))
        continue;
      TG_CHECK (sscanf (ic, "\ninstance_count = %lld", &count) == 1 && count == want);
      /* 12 floats per instance: rows of [R(q) diag(s) | t]. */
      vals = malloc (sizeof (double) * (size_t) (12 * want + 1));
      for (const char *s = strchr (buf, '(') + 1; *s != ')';)
        {
          char *e;
          double d = strtod (s, &e);
          if (e == s)
            break;
          if (nv < 12 * want)
            vals[nv] = d;
          nv++;
          s = e;
          while (*s == ',' || *s == ' ')
            s++;
        }
      TG_CHECK_INT_EQ (nv, 12 * want);
      for (int64_t i = 0, j = 0; i < p->n && nv == 12 * want; i++)
        {
          const double *m;
          const float *q, *t, *sc;
          double v[3] = { 0.3, -0.2, 0.9 }, want_v[3], qv[3], u[3];
          if (p->proto[i] != k)
            continue;
          m = vals + 12 * j++;
          q = p->rotation + 4 * i;
          t = p->position + 3 * i;
          sc = p->scale + 3 * i;
          /* Expected, for the file-local point v: M (t + q (s * M v) q^-1),
           * M = diag (1, 1, -1) taking the world to the file's frame, by
           * the vector form of the rotation. */
          for (int c = 0; c < 3; c++)
            qv[c] = (c == 2 ? -v[c] : v[c]) * sc[c];
          u[0] = q[1] * qv[2] - q[2] * qv[1];
          u[1] = q[2] * qv[0] - q[0] * qv[2];
          u[2] = q[0] * qv[1] - q[1] * qv[0];
          for (int c = 0; c < 3; c++)
            u[c] *= 2.0;
          want_v[0] = qv[0] + q[3] * u[0] + (q[1] * u[2] - q[2] * u[1]) + t[0];
          want_v[1] = qv[1] + q[3] * u[1] + (q[2] * u[0] - q[0] * u[2]) + t[1];
          want_v[2] = -(qv[2] + q[3] * u[2] + (q[0] * u[1] - q[1] * u[0]) + t[2]);
          for (int row = 0; row < 3; row++)
            {
              double got = m[4 * row] * v[0] + m[4 * row + 1] * v[1] + m[4 * row + 2] * v[2]
                           + m[4 * row + 3];
              TG_CHECK_NEAR (got, want_v[row], 1e-4 * (1.0 + fabs (want_v[row])));
            }
        }
      free (vals);
      found++;
    }
  TG_CHECK_INT_EQ (found, 4);
  free (text);
out:
  tg_points_free (p);
}

/* --- glb ------------------------------------------------------------------------ */

typedef struct
{
  unsigned char *data;
  size_t len;
  json_object *doc;
  const unsigned char *bin;
  size_t bin_len;
} Glb;

static uint32_t
le32 (const unsigned char *p)
{
  return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static bool
glb_open (Glb *g, const char *path)
{
  memset (g, 0, sizeof *g);
  g->data = read_all (path, &g->len);
  if (!g->data || g->len < 28 || le32 (g->data) != 0x46546C67u || le32 (g->data + 8) != g->len)
    return false;
  {
    uint32_t jl = le32 (g->data + 12);
    char *js = malloc (jl + 1);
    memcpy (js, g->data + 20, jl);
    js[jl] = '\0';
    g->doc = json_tokener_parse (js);
    free (js);
    if (20 + jl + 8 <= g->len)
      {
        g->bin_len = le32 (g->data + 20 + jl);
        g->bin = g->data + 28 + jl;
      }
  }
  return g->doc != NULL;
}

static void
glb_close (Glb *g)
{
  json_object_put (g->doc);
  free (g->data);
}

static json_object *
jget (json_object *o, const char *k)
{
  json_object *v = NULL;

  return o && json_object_object_get_ex (o, k, &v) ? v : NULL;
}

static json_object *
jidx (json_object *arr, int64_t i)
{
  return arr && i >= 0 && (size_t) i < json_object_array_length (arr)
           ? json_object_array_get_idx (arr, (size_t) i)
           : NULL;
}

/* Float component C of element I of accessor A. */
static float
acc_f (const Glb *g, int64_t a, int64_t i, int c, int n)
{
  json_object *acc = jidx (jget (g->doc, "accessors"), a);
  json_object *view = jidx (jget (g->doc, "bufferViews"), json_object_get_int64 (jget (acc, "bufferView")));
  size_t off = (size_t) json_object_get_int64 (jget (view, "byteOffset"))
               + (size_t) json_object_get_int64 (jget (acc, "byteOffset"));
  float f;

  memcpy (&f, g->bin + off + (size_t) (i * n + c) * 4, 4);
  return f;
}

static void
add_to_validate (const char *name)
{
  size_t used = strlen (glb_list);

  snprintf (glb_list + used, sizeof glb_list - used, " '%s'", tmp_path (name));
}

/* The EXT_mesh_gpu_instancing rules the Khronos validator does not check
 * (it reports the extension as unsupported), and the data itself. */
static void
check_instancing (const Glb *g, const TgPoints *p)
{
  json_object *nodes = jget (g->doc, "nodes"), *used = jget (g->doc, "extensionsUsed");
  int seen = 0;
  bool listed = false;

  for (size_t i = 0; used && i < json_object_array_length (used); i++)
    listed |= strcmp (json_object_get_string (json_object_array_get_idx (used, i)),
                      "EXT_mesh_gpu_instancing") == 0;
  TG_CHECK (listed);
  TG_CHECK (jget (g->doc, "extensionsRequired") == NULL);
  for (size_t n = 0; nodes && n < json_object_array_length (nodes); n++)
    {
      json_object *node = json_object_array_get_idx (nodes, n);
      json_object *attrs = jget (jget (jget (node, "extensions"), "EXT_mesh_gpu_instancing"),
                                 "attributes");
      const char *name = json_object_get_string (jget (node, "name"));
      int k = 0;
      int64_t count = -1;
      static const char *sem[3] = { "TRANSLATION", "ROTATION", "SCALE" };
      static const char *type[3] = { "VEC3", "VEC4", "VEC3" };
      if (!attrs)
        continue;
      TG_CHECK (jget (node, "mesh") != NULL);
      while (k < p->n_protos && strcmp (p->proto_names[k], name) != 0)
        k++;
      TG_CHECK_MSG (k < p->n_protos, "node \"%s\" is no prototype", name);
      for (int s = 0; s < 3 && k < p->n_protos; s++)
        {
          int64_t a = json_object_get_int64 (jget (attrs, sem[s]));
          json_object *acc = jidx (jget (g->doc, "accessors"), a);
          int64_t c = json_object_get_int64 (jget (acc, "count"));
          int nc = s == 1 ? 4 : 3;
          TG_CHECK (strcmp (json_object_get_string (jget (acc, "type")), type[s]) == 0);
          TG_CHECK_INT_EQ (json_object_get_int64 (jget (acc, "componentType")), 5126);
          if (count >= 0)
            TG_CHECK_INT_EQ (c, count);
          count = c;
          /* Element j is the prototype's j-th instance in list order. */
          for (int64_t i = 0, j = 0; i < p->n; i++)
            {
              const float *src = s == 0 ? p->position + 3 * i
                                 : s == 1 ? p->rotation + 4 * i
                                          : p->scale + 3 * i;
              double qlen = 0.0;
              if (p->proto[i] != k)
                continue;
              for (int cc = 0; cc < nc; cc++)
                {
                  /* The file's frame: translation (x, y, -z), rotation
                   * (-x, -y, z, w), scale unchanged. */
                  bool neg = (s == 0 && cc == 2) || (s == 1 && cc < 2);
                  float f = acc_f (g, a, j, cc, nc);
                  qlen += (double) f * f;
                  TG_CHECK_NEAR (f, neg ? -src[cc] : src[cc], s == 1 ? 1e-6 : 0.0);
                }
              if (s == 1)
                TG_CHECK_NEAR (sqrt (qlen), 1.0, 1e-3);
              j++;
            }
        }
      {
        int64_t want = 0;
        for (int64_t i = 0; i < p->n; i++)
          want += k < p->n_protos && p->proto[i] == k;
        TG_CHECK_INT_EQ (count, want);
      }
      seen++;
    }
  /* Prototypes without instances get no node. */
  TG_CHECK_INT_EQ (seen, 3);
}

static void
test_glb_instancing (void)
{
  TgPoints *p = sample_points ();
  TgError err = { 0 };
  Glb g;

  TG_CHECK_INT_EQ (write_points ("glb", "markers.glb", p, NULL, &err), 0);
  add_to_validate ("markers.glb");
  TG_CHECK (glb_open (&g, tmp_path ("markers.glb")));
  if (g.doc)
    {
      /* One marker mesh per prototype with instances, sharing one cone. */
      TG_CHECK_INT_EQ (json_object_array_length (jget (g.doc, "meshes")), 3);
      check_instancing (&g, p);
    }
  glb_close (&g);
  tg_points_free (p);
}

/* --- orientation of instances ------------------------------------------------------ */

/* The rotation matrix of unit quaternion Q, row-major (R applies to
 * column vectors, as in glTF and Godot). */
static void
quat_matrix (const double q[4], double r[9])
{
  double x = q[0], y = q[1], z = q[2], w = q[3];

  r[0] = 1 - 2 * (y * y + z * z);
  r[1] = 2 * (x * y - z * w);
  r[2] = 2 * (x * z + y * w);
  r[3] = 2 * (x * y + z * w);
  r[4] = 1 - 2 * (x * x + z * z);
  r[5] = 2 * (y * z - x * w);
  r[6] = 2 * (x * z - y * w);
  r[7] = 2 * (y * z + x * w);
  r[8] = 1 - 2 * (x * x + y * y);
}

/* Two "tree" instances: one north-west of the centre turned 30 degrees
 * about +Y (its forward axis, local +Z, then points north-east: east =
 * +X, north = world +Z), one turned about a skewed axis and scaled
 * unevenly. */
static TgPoints *
turned_points (void)
{
  TgPoints *p = tg_points_new ();
  double yaw = M_PI / 6.0, ax[3] = { 0.3, 0.8, 0.52 }, l, a = 1.1;
  float pos0[3] = { -100.0f, 5.0f, 200.0f }, pos1[3] = { 300.0f, 1.0f, -40.0f };
  float one[3] = { 1, 1, 1 }, sc1[3] = { 1, 2, 3 };
  float q0[4] = { 0.0f, (float) sin (yaw / 2), 0.0f, (float) cos (yaw / 2) }, q1[4];

  l = sqrt (ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
  for (int c = 0; c < 3; c++)
    q1[c] = (float) (ax[c] / l * sin (a / 2));
  q1[3] = (float) cos (a / 2);
  tg_points_add_proto (p, "tree");
  tg_points_push (p, pos0, q0, one, 0);
  tg_points_push (p, pos1, q1, sc1, 0);
  return p;
}

/* FILE_A = [A' | t'] of instance I as written (row-major 3 x 4, scale
 * included) must be [M A M | M t] of the world's A = R(q) diag (s);
 * for the yawed instance, A' applied to the file-local forward axis (the
 * world's local +Z, which is -Z in the file, as prototype meshes are
 * converted) must point north-east in the file: (+0.5, 0, -0.866). */
static void
check_file_transform (const char *what, const TgPoints *p, int64_t i, const double file_a[12])
{
  const float *qf = p->rotation + 4 * i, *sc = p->scale + 3 * i, *t = p->position + 3 * i;
  double q[4] = { qf[0], qf[1], qf[2], qf[3] }, r[9];
  static const double m[3] = { 1, 1, -1 };

  quat_matrix (q, r);
  for (int row = 0; row < 3; row++)
    {
      for (int col = 0; col < 3; col++)
        TG_CHECK_MSG (fabs (file_a[4 * row + col] - m[row] * r[3 * row + col] * sc[col] * m[col])
                        < 1e-5,
                      "%s instance %lld: A'[%d][%d] = %g, want %g", what, (long long) i, row, col,
                      file_a[4 * row + col], m[row] * r[3 * row + col] * sc[col] * m[col]);
      TG_CHECK_NEAR (file_a[4 * row + 3], m[row] * t[row], 1e-3);
    }
  if (i == 0)
    {
      double fwd[3];
      for (int row = 0; row < 3; row++)
        fwd[row] = -file_a[4 * row + 2];
      TG_CHECK_MSG (fabs (fwd[0] - 0.5) < 1e-5 && fabs (fwd[1]) < 1e-6
                      && fabs (fwd[2] + sqrt (0.75)) < 1e-5,
                    "%s: forward axis (%g, %g, %g), want north-east (0.5, 0, -0.866)", what,
                    fwd[0], fwd[1], fwd[2]);
      /* And it sits north-west: x < 0, z < 0 in the file. */
      TG_CHECK (file_a[3] < 0.0 && file_a[11] < 0.0);
    }
}

static void
test_instances_keep_their_heading (void)
{
  TgPoints *p = turned_points ();
  TgError err = { 0 };
  Glb g;

  /* The world transform itself: forward (local +Z) is north-east. */
  {
    double q[4] = { p->rotation[0], p->rotation[1], p->rotation[2], p->rotation[3] }, r[9];
    quat_matrix (q, r);
    TG_CHECK (fabs (r[2] - 0.5) < 1e-6 && fabs (r[8] - sqrt (0.75)) < 1e-6);
  }

  TG_CHECK_INT_EQ (write_points ("glb", "turned.glb", p, NULL, &err), 0);
  add_to_validate ("turned.glb");
  TG_CHECK (glb_open (&g, tmp_path ("turned.glb")));
  for (size_t n = 0; g.doc && n < json_object_array_length (jget (g.doc, "nodes")); n++)
    {
      json_object *attrs = jget (jget (jget (json_object_array_get_idx (jget (g.doc, "nodes"), n),
                                             "extensions"),
                                        "EXT_mesh_gpu_instancing"),
                                   "attributes");
      if (!attrs)
        continue;
      int64_t at = json_object_get_int64 (jget (attrs, "TRANSLATION"));
      int64_t ar = json_object_get_int64 (jget (attrs, "ROTATION"));
      int64_t as = json_object_get_int64 (jget (attrs, "SCALE"));
      for (int64_t i = 0; i < p->n; i++)
        {
          double q[4], r[9], a[12];
          for (int c = 0; c < 4; c++)
            q[c] = acc_f (&g, ar, i, c, 4);
          quat_matrix (q, r);
          for (int row = 0; row < 3; row++)
            {
              for (int col = 0; col < 3; col++)
                a[4 * row + col] = r[3 * row + col] * acc_f (&g, as, i, col, 3);
              a[4 * row + 3] = acc_f (&g, at, i, row, 3);
            }
          check_file_transform ("glb", p, i, a);
        }
    }
  glb_close (&g);

  /* Godot: the 12 floats of each instance are the rows of [A' | t']. */
  TG_CHECK_INT_EQ (write_points ("godot", "turned.tscn", p, NULL, &err), 0);
  {
    size_t len;
    unsigned char *text = read_all (tmp_path ("turned.tscn"), &len);
    const char *b = text ? strstr ((char *) text, "buffer = PackedFloat32Array(") : NULL;
    double vals[24];
    int nv = 0;
    TG_CHECK (b != NULL);
    for (const char *c = b ? strchr (b, '(') + 1 : NULL; c && *c != ')' && nv < 24;)
      {
        char *e;
        vals[nv] = strtod (c, &e);
        if (e == c)
          break;
        nv++;
        for (c = e; *c == ',' || *c == ' '; c++)
          ;
      }
    TG_CHECK_INT_EQ (nv, 24);
    if (nv == 24)
      for (int64_t i = 0; i < 2; i++)
        check_file_transform ("godot", p, i, vals + 12 * i);
    free (text);
  }
  tg_points_free (p);
}

/* --- frames (csv and json) ------------------------------------------------------ */

/* One pine at x 10 (east), y 5 (up), z 20 (north), turned 30 degrees
 * about +Y (east towards south, clockwise seen from above), scaled 1, 2,
 * 3 along its local x, y, z, in a 100 m (east-west) x 200 m world. */
static TgPoints *
known_point (void)
{
  TgPoints *p = tg_points_new ();
  const float pos[3] = { 10, 5, 20 }, scale[3] = { 1, 2, 3 };
  const float rot[4] = { 0, (float) sin (M_PI / 12), 0, (float) cos (M_PI / 12) };

  tg_points_add_proto (p, "pine");
  tg_points_push (p, pos, rot, scale, 0);
  return p;
}

/* The csv row of the one instance in NAME, split into F (16 fields). */
static int
csv_row (const char *name, const char *header, char *buf, size_t size, char **f)
{
  size_t len;
  unsigned char *text = read_all (tmp_path (name), &len);
  const char *row = text ? strchr ((char *) text, '\n') : NULL;
  int n = 0;

  TG_CHECK_MSG (text && strncmp ((char *) text, header, strlen (header)) == 0
                  && text[strlen (header)] == '\n',
                "%s: header %.60s, want %s", name, text ? (char *) text : "(none)", header);
  if (row)
    {
      snprintf (buf, size, "%s", row + 1);
      n = csv_fields (buf, f, 16);
    }
  free (text);
  return n;
}

static void
check_fields (const char *what, char **f, int n, const double *want, int n_want, double tol)
{
  TG_CHECK_INT_EQ (n, n_want + 1);
  for (int k = 0; k < n_want && k + 1 < n; k++)
    TG_CHECK_MSG (fabs (strtod (f[k + 1], NULL) - want[k]) <= tol, "%s column %d: %s, want %g",
                  what, k + 1, f[k + 1], want[k]);
}

static void
test_csv_frames_move_a_known_instance (void)
{
  TgPoints *p = known_point ();
  TgError err = { 0 };
  const double s15 = sin (M_PI / 12), c15 = cos (M_PI / 12);
  static const char *xyz = "prototype,px,py,pz,qx,qy,qz,qw,sx,sy,sz";
  static const char *unreal = "Name,Prototype,X,Y,Z,Pitch,Yaw,Roll,ScaleX,ScaleY,ScaleZ";
  const struct
  {
    TgPointsFrame frame;
    TgPointsOrigin origin;
    const char *header;
    double want[10];
    int n_want;
  } cases[] = {
    /* Unity: the world frame; the corner is south-west (x, z >= 0). */
    { TG_POINTS_FRAME_UNITY, TG_POINTS_ORIGIN_CORNER, xyz,
      { 60, 5, 120, 0, s15, 0, c15, 1, 2, 3 }, 10 },
    /* Unreal: x east, y south, z up in cm; the yaw is Unity's (both turn
     * clockwise seen from above); local y, z scales swap; the corner is
     * north-west. */
    { TG_POINTS_FRAME_UNREAL, TG_POINTS_ORIGIN_CENTRE, unreal,
      { 1000, -2000, 500, 0, 30, 0, 1, 3, 2 }, 9 },
    { TG_POINTS_FRAME_UNREAL, TG_POINTS_ORIGIN_CORNER, unreal,
      { 6000, 8000, 500, 0, 30, 0, 1, 3, 2 }, 9 },
    /* Houdini: glTF's frame, z = -north; the corner is north-west. */
    { TG_POINTS_FRAME_HOUDINI, TG_POINTS_ORIGIN_CENTRE, xyz,
      { 10, 5, -20, 0, -s15, 0, c15, 1, 2, 3 }, 10 },
    { TG_POINTS_FRAME_HOUDINI, TG_POINTS_ORIGIN_CORNER, xyz,
      { 60, 5, 80, 0, -s15, 0, c15, 1, 2, 3 }, 10 },
    /* Blender: y north, z up; clockwise from above is -30 about +Z. */
    { TG_POINTS_FRAME_BLENDER, TG_POINTS_ORIGIN_CENTRE, xyz,
      { 10, 20, 5, 0, 0, -s15, c15, 1, 3, 2 }, 10 },
    { TG_POINTS_FRAME_BLENDER, TG_POINTS_ORIGIN_CORNER, xyz,
      { 60, 120, 5, 0, 0, -s15, c15, 1, 3, 2 }, 10 },
  };

  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
    {
      TgPointsWriteOptions opt = { .frame = cases[k].frame, .origin = cases[k].origin,
                                   .size_x = 100, .size_z = 200 };
      char buf[512], *f[16], what[32];
      int n;

      snprintf (what, sizeof what, "case %zu", k);
      TG_CHECK_INT_EQ (write_points_opt ("csv", "frame.csv", p, NULL, &opt, &err), 0);
      n = csv_row ("frame.csv", cases[k].header, buf, sizeof buf, f);
      if (cases[k].frame == TG_POINTS_FRAME_UNREAL)
        {
          TG_CHECK (n > 1 && strcmp (f[0], "0") == 0 && strcmp (f[1], "pine") == 0);
          check_fields (what, f + 1, n - 1, cases[k].want, cases[k].n_want, 1e-4);
        }
      else
        {
          TG_CHECK (n > 0 && strcmp (f[0], "pine") == 0);
          check_fields (what, f, n, cases[k].want, cases[k].n_want, 1e-6);
        }
    }

  /* The default frame is the world's: the bytes of no options at all. */
  {
    TgPointsWriteOptions unity = { .size_x = 100, .size_z = 200 };
    size_t la, lb;
    unsigned char *a, *b;
    TgPoints *many = sample_points ();
    TG_CHECK_INT_EQ (write_points ("csv", "plain.csv", many, NULL, &err), 0);
    TG_CHECK_INT_EQ (write_points_opt ("csv", "unity.csv", many, NULL, &unity, &err), 0);
    a = read_all (tmp_path ("plain.csv"), &la);
    b = read_all (tmp_path ("unity.csv"), &lb);
    TG_CHECK (a && b && la == lb && memcmp (a, b, la) == 0);
    free (a);
    free (b);
    tg_points_free (many);
  }

  /* A corner needs the world's extent. */
  {
    TgPointsWriteOptions bad = { .origin = TG_POINTS_ORIGIN_CORNER };
    TG_CHECK_INT_EQ (write_points_opt ("csv", "bad.csv", p, NULL, &bad, &err), TG_EINVAL);
    TG_CHECK (strstr (err.message, "corner") != NULL);
  }
  tg_points_free (p);
}

/* Every instance of sample_points (yawed and tilted) in the unreal csv: a
 * unique Name per row, and a rotator whose matrix, built as Unreal's
 * FRotationMatrix builds it, has as rows where the instance's rotation
 * takes Unreal's local X, Y and Z (world east, -north and up). */
static void
test_unreal_rotators_rebuild_the_rotation (void)
{
  TgPoints *p = sample_points ();
  TgPointsWriteOptions opt = { .frame = TG_POINTS_FRAME_UNREAL };
  TgError err = { 0 };
  size_t len;
  unsigned char *text;
  char *line, *save = NULL;
  int64_t row = 0;

  TG_CHECK_INT_EQ (write_points_opt ("csv", "unreal.csv", p, NULL, &opt, &err), 0);
  text = read_all (tmp_path ("unreal.csv"), &len);
  TG_CHECK (text != NULL);
  line = text ? strtok_r ((char *) text, "\n", &save) : NULL;
  for (line = line ? strtok_r (NULL, "\n", &save) : NULL; line;
       line = strtok_r (NULL, "\n", &save), row++)
    {
      /* Unreal's axes in world terms: X east, Y south, Z up. */
      static const double axes[3][3] = { { 1, 0, 0 }, { 0, 0, -1 }, { 0, 1, 0 } };
      const float *qf = p->rotation + 4 * row;
      double q[4] = { qf[0], qf[1], qf[2], qf[3] }, r[9], ue[3][3], d2r = M_PI / 180.0;
      double sp, cp, sy, cy, sr, cr;
      char *f[16], name[32];
      int n = csv_fields (line, f, 16);

      TG_CHECK_INT_EQ (n, 11);
      if (n != 11 || row >= p->n)
        break;
      snprintf (name, sizeof name, "%lld", (long long) row);
      TG_CHECK_MSG (strcmp (f[0], name) == 0, "row %lld is named \"%s\"", (long long) row, f[0]);
      TG_CHECK (strcmp (f[1], p->proto_names[p->proto[row]]) == 0);
      for (int c = 0; c < 3; c++)
        TG_CHECK_NEAR (strtod (f[2 + c], NULL),
                       100.0 * (c == 0   ? p->position[3 * row]
                                : c == 1 ? -p->position[3 * row + 2]
                                         : p->position[3 * row + 1]),
                       1e-2);
      sp = sin (strtod (f[5], NULL) * d2r), cp = cos (strtod (f[5], NULL) * d2r);
      sy = sin (strtod (f[6], NULL) * d2r), cy = cos (strtod (f[6], NULL) * d2r);
      sr = sin (strtod (f[7], NULL) * d2r), cr = cos (strtod (f[7], NULL) * d2r);
      /* FRotationMatrix, row k = the image of local axis k. */
      ue[0][0] = cp * cy, ue[0][1] = cp * sy, ue[0][2] = sp;
      ue[1][0] = sr * sp * cy - cr * sy, ue[1][1] = sr * sp * sy + cr * cy, ue[1][2] = -sr * cp;
      ue[2][0] = -(cr * sp * cy + sr * sy), ue[2][1] = cy * sr - cr * sp * sy, ue[2][2] = cr * cp;
      quat_matrix (q, r);
      for (int k = 0; k < 3; k++)
        {
          double img[3] = { 0, 0, 0 };
          /* R applied to Unreal's axis k, in world terms, then in Unreal's. */
          for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
              img[a] += r[3 * a + b] * axes[k][b];
          for (int c = 0; c < 3; c++)
            {
              double want = img[0] * axes[c][0] + img[1] * axes[c][1] + img[2] * axes[c][2];
              TG_CHECK_MSG (fabs (ue[k][c] - want) < 1e-5,
                            "row %lld: rotator axis %d component %d is %g, want %g",
                            (long long) row, k, c, ue[k][c], want);
            }
        }
    }
  TG_CHECK_INT_EQ (row, p->n);
  free (text);
  tg_points_free (p);
}

/* The json states its frame, and writes the numbers of the csv. */
static void
test_json_states_its_frame (void)
{
  TgPoints *p = known_point ();
  TgPointsWriteOptions opt = { .frame = TG_POINTS_FRAME_UNREAL,
                               .origin = TG_POINTS_ORIGIN_CORNER, .size_x = 100, .size_z = 200 };
  TgError err = { 0 };
  size_t len;
  unsigned char *text;
  json_object *doc, *fr, *o;
  static const char *keys[][2] = { { "name", "unreal" }, { "handedness", "left" },
                                   { "east", "+X" },     { "up", "+Z" },
                                   { "north", "-Y" },    { "units", "cm" },
                                   { "origin", "north-west corner" } };
  static const double pos[3] = { 6000, 8000, 500 }, pyr[3] = { 0, 30, 0 };

  TG_CHECK_INT_EQ (write_points_opt ("json", "frame.json", p, NULL, &opt, &err), 0);
  text = read_all (tmp_path ("frame.json"), &len);
  doc = text ? json_tokener_parse ((char *) text) : NULL;
  TG_CHECK (doc != NULL);
  TG_CHECK (doc && json_object_get_int (jget (doc, "version")) == 2);
  fr = doc ? jget (doc, "frame") : NULL;
  for (size_t k = 0; fr && k < sizeof keys / sizeof keys[0]; k++)
    TG_CHECK_MSG (jget (fr, keys[k][0])
                    && strcmp (json_object_get_string (jget (fr, keys[k][0])), keys[k][1]) == 0,
                  "frame.%s: want \"%s\"", keys[k][0], keys[k][1]);
  o = doc ? json_object_array_get_idx (jget (doc, "instances"), 0) : NULL;
  TG_CHECK (o != NULL);
  for (int c = 0; o && c < 3; c++)
    {
      TG_CHECK_NEAR (json_object_get_double (json_object_array_get_idx (jget (o, "position"), (size_t) c)),
                     pos[c], 1e-3);
      TG_CHECK_NEAR (json_object_get_double (json_object_array_get_idx (jget (o, "rotator"), (size_t) c)),
                     pyr[c], 1e-4);
    }
  json_object_put (doc);
  free (text);
  tg_points_free (p);
}

/* A unit right triangle in the XY plane facing +Z, as a one-chunk mesh. */
static TgMesh *
triangle_mesh (void)
{
  TgMesh *m = tg_mesh_new (1);
  TgMeshChunk *c = &m->chunks[0];
  static const float pos[9] = { 0, 0, 0, 1, 0, 0, 0, 1, 0 };

  tg_mesh_chunk_alloc (c, 3, 3, 1);
  tg_mesh_chunk_set_name (c, "tri");
  memcpy (c->positions, pos, sizeof pos);
  for (int i = 0; i < 3; i++)
    {
      c->normals[3 * i] = c->normals[3 * i + 1] = 0.0f;
      c->normals[3 * i + 2] = 1.0f;
      c->uvs[2 * i] = pos[3 * i];
      c->uvs[2 * i + 1] = pos[3 * i + 1];
      c->indices[i] = (uint32_t) i;
    }
  return m;
}

static void
test_glb_with_prototype_mesh (void)
{
  TgPoints *p = sample_points ();
  TgMesh *tri = triangle_mesh ();
  const TgMesh *meshes[4] = { NULL, tri, NULL, NULL };
  TgError err = { 0 };
  Glb g;

  TG_CHECK_INT_EQ (write_points ("glb", "protos.glb", p, meshes, &err), 0);
  add_to_validate ("protos.glb");
  TG_CHECK (glb_open (&g, tmp_path ("protos.glb")));
  if (g.doc)
    {
      json_object *nodes = jget (g.doc, "nodes");
      for (size_t n = 0; n < json_object_array_length (nodes); n++)
        {
          json_object *node = json_object_array_get_idx (nodes, n);
          const char *name = json_object_get_string (jget (node, "name"));
          json_object *mesh, *prim, *acc;
          if (!name || strcmp (name, "rock, big") != 0)
            continue;
          mesh = jidx (jget (g.doc, "meshes"), json_object_get_int64 (jget (node, "mesh")));
          prim = jidx (jget (mesh, "primitives"), 0);
          acc = jidx (jget (g.doc, "accessors"),
                      json_object_get_int64 (jget (jget (prim, "attributes"), "POSITION")));
          TG_CHECK_INT_EQ (json_object_get_int64 (jget (acc, "count")), 3);
          TG_CHECK (jget (jget (prim, "attributes"), "TEXCOORD_0") != NULL);
        }
      check_instancing (&g, p);
    }
  glb_close (&g);
  tg_mesh_free (tri);
  tg_points_free (p);
}

/* The first surface of sub-resource "ArrayMesh_K" in scene TEXT, decoded
 * from Godot's layout: positions, normals (octahedron-decoded as Godot's
 * Vector3::octahedron_decode does) and indices.  False when it is not there
 * or does not add up.  The caller frees *POS, *NRM and *IDX. */
static bool
godot_surface (const char *text, int k, int *nv, float **pos, float **nrm, int64_t *ni,
               uint32_t **idx)
{
  char head[64];
  const char *sec, *s;
  unsigned char *bytes = NULL;
  size_t nb = 0, cap = 0;
  long long count;
  bool ok = true;

  *pos = *nrm = NULL;
  *idx = NULL;
  snprintf (head, sizeof head, "[sub_resource type=\"ArrayMesh\" id=\"ArrayMesh_%d\"]", k);
  if (!(sec = strstr (text, head)) || !(s = strstr (sec, "\"index_count\": "))
      || sscanf (s, "\"index_count\": %lld", &count) != 1)
    return false;
  *ni = count;
  if (!(s = strstr (sec, "\"vertex_count\": ")) || sscanf (s, "\"vertex_count\": %lld", &count) != 1)
    return false;
  *nv = (int) count;
  /* index_data, then vertex_data: both PackedByteArray lists. */
  for (int pass = 0; pass < 2 && ok; pass++)
    {
      const char *key = pass == 0 ? "\"index_data\": PackedByteArray(" : "\"vertex_data\": PackedByteArray(";
      char *end;
      nb = 0;
      if (!(s = strstr (sec, key)))
        return false;
      s += strlen (key);
      while (*s != ')')
        {
          long b = strtol (s, &end, 10);
          if (end == s || b < 0 || b > 255)
            {
              ok = false;
              break;
            }
          if (nb == cap)
            {
              cap = cap ? 2 * cap : 4096;
              bytes = realloc (bytes, cap);
            }
          bytes[nb++] = (unsigned char) b;
          s = end;
          if (*s == ',')
            s += 2;
        }
      if (pass == 0 && ok)
        {
          int w = *nv > 65536 ? 4 : 2;
          ok = nb == (size_t) (w * *ni);
          *idx = malloc (sizeof (uint32_t) * (size_t) (*ni ? *ni : 1));
          for (int64_t i = 0; ok && i < *ni; i++)
            (*idx)[i] = w == 2 ? (uint32_t) (bytes[2 * i] | bytes[2 * i + 1] << 8)
                               : (uint32_t) bytes[4 * i] | (uint32_t) bytes[4 * i + 1] << 8
                                   | (uint32_t) bytes[4 * i + 2] << 16
                                   | (uint32_t) bytes[4 * i + 3] << 24;
        }
    }
  ok = ok && nb == (size_t) (20 * *nv);
  if (ok)
    {
      *pos = malloc (sizeof (float) * 3 * (size_t) *nv);
      *nrm = malloc (sizeof (float) * 3 * (size_t) *nv);
      memcpy (*pos, bytes, sizeof (float) * 3 * (size_t) *nv);
      for (int v = 0; v < *nv; v++)
        {
          const unsigned char *q = bytes + 12 * (size_t) *nv + 8 * (size_t) v;
          double fx = (q[0] | q[1] << 8) / 65535.0 * 2.0 - 1.0;
          double fy = (q[2] | q[3] << 8) / 65535.0 * 2.0 - 1.0;
          double n[3] = { fx, fy, 1.0 - fabs (fx) - fabs (fy) };
          double t = fmin (fmax (-n[2], 0.0), 1.0), l;
          n[0] += n[0] >= 0 ? -t : t;
          n[1] += n[1] >= 0 ? -t : t;
          l = sqrt (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
          for (int c = 0; c < 3; c++)
            (*nrm)[3 * v + c] = (float) (n[c] / l);
        }
    }
  free (bytes);
  return ok;
}

/* The Godot scene draws the same prototype meshes as the glb, with the
 * same origins: the marker cone stands on its base (y from 0 to 1 m, the
 * base centred on the origin), a prototype mesh given to the writer is
 * its triangles in the file's frame with Godot's clockwise front faces,
 * and the normals decode to the file-frame normals. */
static void
test_godot_draws_the_glb_prototype_meshes (void)
{
  TgPoints *p = sample_points ();
  TgMesh *tri = triangle_mesh ();
  const TgMesh *meshes[4] = { NULL, tri, NULL, NULL };
  TgError err = { 0 };
  size_t len;
  unsigned char *text;
  int nv;
  int64_t ni;
  float *pos, *nrm;
  uint32_t *idx;

  TG_CHECK_INT_EQ (write_points ("godot", "protos.tscn", p, meshes, &err), 0);
  text = read_all (tmp_path ("protos.tscn"), &len);
  TG_CHECK (text != NULL);
  if (!text)
    goto out;
  TG_CHECK (strstr ((char *) text, "CylinderMesh") == NULL);
  /* Prototype 0: the cone. */
  TG_CHECK (godot_surface ((char *) text, 0, &nv, &pos, &nrm, &ni, &idx));
  if (pos)
    {
      double lo = INFINITY, hi = -INFINITY, base_r = 0.0;
      bool apex = false, normals_ok = true;
      for (int v = 0; v < nv; v++)
        {
          lo = fmin (lo, pos[3 * v + 1]);
          hi = fmax (hi, pos[3 * v + 1]);
          if (pos[3 * v + 1] == 0.0f)
            base_r = fmax (base_r, hypot (pos[3 * v], pos[3 * v + 2]));
          apex |= pos[3 * v] == 0.0f && pos[3 * v + 1] == 1.0f && pos[3 * v + 2] == 0.0f;
          if (fabs (hypot (hypot (nrm[3 * v], nrm[3 * v + 1]), nrm[3 * v + 2]) - 1.0) > 1e-3)
            normals_ok = false;
        }
      TG_CHECK_MSG (lo == 0.0 && hi == 1.0 && apex && fabs (base_r - 0.25) < 1e-6,
                    "the cone spans y %g..%g m (apex %d, base radius %g): it must stand on its "
                    "base at the origin",
                    lo, hi, apex, base_r);
      TG_CHECK (normals_ok && ni == 48);
      /* The base faces down: its fan's normals decode to -Y. */
      TG_CHECK (fabs (nrm[3 * (nv - 1) + 1] + 1.0) < 1e-4);
    }
  free (pos);
  free (nrm);
  free (idx);
  /* Prototype 1: the triangle given to the writer, z negated, same index order. */
  TG_CHECK (godot_surface ((char *) text, 1, &nv, &pos, &nrm, &ni, &idx));
  if (pos)
    {
      TG_CHECK_INT_EQ (nv, 3);
      TG_CHECK_INT_EQ (ni, 3);
      for (int v = 0; v < nv && v < 3; v++)
        {
          TG_CHECK (pos[3 * v] == tri->chunks[0].positions[3 * v]
                    && pos[3 * v + 1] == tri->chunks[0].positions[3 * v + 1]
                    && pos[3 * v + 2] == -tri->chunks[0].positions[3 * v + 2]);
          TG_CHECK (fabs (nrm[3 * v + 2] + 1.0) < 1e-4);
          TG_CHECK_INT_EQ (idx[v], tri->chunks[0].indices[v]);
        }
      TG_CHECK (strstr ((char *) text, "mesh = SubResource(\"ArrayMesh_1\")") != NULL);
    }
  free (pos);
  free (nrm);
  free (idx);
out:
  free (text);
  tg_mesh_free (tri);
  tg_points_free (p);
}

static void
test_empty_list_writes_valid_files (void)
{
  TgPoints *p = tg_points_new ();
  TgError err = { 0 };
  size_t len;
  unsigned char *text;

  tg_points_add_proto (p, "grass");
  TG_CHECK_INT_EQ (write_points ("glb", "empty.glb", p, NULL, &err), 0);
  add_to_validate ("empty.glb");
  TG_CHECK_INT_EQ (write_points ("csv", "empty.csv", p, NULL, &err), 0);
  text = read_all (tmp_path ("empty.csv"), &len);
  TG_CHECK (text && strcmp ((char *) text, "prototype,px,py,pz,qx,qy,qz,qw,sx,sy,sz\n") == 0);
  free (text);
  TG_CHECK_INT_EQ (write_points ("json", "empty.json", p, NULL, &err), 0);
  text = read_all (tmp_path ("empty.json"), &len);
  {
    json_object *doc = text ? json_tokener_parse ((char *) text) : NULL;
    TG_CHECK (doc && json_object_array_length (jget (doc, "instances")) == 0);
    json_object_put (doc);
  }
  free (text);
  TG_CHECK_INT_EQ (write_points ("godot", "empty.tscn", p, NULL, &err), 0);
  text = read_all (tmp_path ("empty.tscn"), &len);
  TG_CHECK (text && strstr ((char *) text, "instance_count = 0\nmesh = SubResource(\"ArrayMesh_0\")\n"
                                           "buffer = PackedFloat32Array()\n"));
  free (text);
  tg_points_free (p);
}

static void
test_bad_instances_are_refused (void)
{
  TgPoints *p = sample_points ();
  static const char *formats[] = { "csv", "json", "glb", "godot" };
  TgError err = { 0 };

  p->proto[4] = 9;
  for (int f = 0; f < 4; f++)
    {
      memset (&err, 0, sizeof err);
      TG_CHECK (write_points (formats[f], "bad.out", p, NULL, &err) < 0);
      TG_CHECK_STR_CONTAINS (err.message, "instance 4 has prototype 9");
    }
  p->proto[4] = 1;
  p->position[3 * 5 + 1] = NAN;
  memset (&err, 0, sizeof err);
  TG_CHECK (write_points ("csv", "bad.out", p, NULL, &err) < 0);
  TG_CHECK_STR_CONTAINS (err.message, "instance 5");
  tg_points_free (p);
}

/* --- the .glb mesh reader -------------------------------------------------------- */

static int
write_builder (TgGlb *g, const char *name)
{
  FILE *f = fopen (tmp_path (name), "wb");
  TgError err = { 0 };
  int rc = tg_glb_write (g, f, &err);

  fclose (f);
  return rc;
}

static void
test_glb_reader_applies_node_transforms (void)
{
  static const float pos[9] = { 0, 0, 0, 1, 0, 0, 0, 1, 0 };
  static const float nrm[9] = { 0, 0, 1, 0, 0, 1, 0, 0, 1 };
  static const uint16_t idx16[3] = { 0, 1, 2 };
  TgGlb *g = tg_glb_new ("test");
  TgMeshReader read = tg_io_mesh_reader ("glb");
  TgMesh *m = NULL;
  TgError err = { 0 };
  int pa, na, view, ia, mesh, mesh_n, parent, child, child_n;

  TG_CHECK (read != NULL);
  /* Positions, 16-bit indices, without normals ("leaf") and with normals
   * ("leaf_n"); a parent that moves by (10, 0, 0) and children that
   * mirror X and double Y.  The triangle faces +Z in the file. */
  pa = tg_glb_add_floats (g, pos, 3, 3, TG_GLB_ARRAY_BUFFER, true);
  na = tg_glb_add_floats (g, nrm, 3, 3, TG_GLB_ARRAY_BUFFER, false);
  view = tg_glb_add_view (g, idx16, sizeof idx16, TG_GLB_ELEMENT_ARRAY_BUFFER);
  ia = tg_glb_add_accessor (g, view, 0, TG_GLB_UNSIGNED_SHORT, "SCALAR", 3, false, NULL, NULL);
  mesh = tg_glb_add_mesh (g, "leaf");
  tg_glb_add_primitive (g, mesh, (TgGlbAttribute[]) { { "POSITION", pa } }, 1, ia, -1,
                        TG_GLB_TRIANGLES);
  mesh_n = tg_glb_add_mesh (g, "leaf_n");
  tg_glb_add_primitive (g, mesh_n, (TgGlbAttribute[]) { { "POSITION", pa }, { "NORMAL", na } }, 2,
                        ia, -1, TG_GLB_TRIANGLES);
  parent = tg_glb_add_node (g, "root", -1);
  child = tg_glb_add_node (g, "leaf", mesh);
  child_n = tg_glb_add_node (g, "leaf_n", mesh_n);
  tg_glb_node_set_trs (g, parent, (const float[3]) { 10, 0, 0 }, NULL, NULL);
  tg_glb_node_set_trs (g, child, NULL, NULL, (const float[3]) { -1, 2, 1 });
  tg_glb_node_set_trs (g, child_n, NULL, NULL, (const float[3]) { -1, 2, 1 });
  tg_glb_node_add_child (g, parent, child);
  tg_glb_node_add_child (g, parent, child_n);
  TG_CHECK_INT_EQ (write_builder (g, "leaf.glb"), 0);
  tg_glb_free (g);

  TG_CHECK_INT_EQ (read (tmp_path ("leaf.glb"), &m, &err), 0);
  TG_CHECK_MSG (m != NULL, "%s", err.message);
  if (m)
    {
      TG_CHECK_INT_EQ (m->n_chunks, 2);
      for (int k = 0; k < m->n_chunks && k < 2; k++)
        {
          const TgMeshChunk *c = &m->chunks[k];
          TG_CHECK_INT_EQ (c->n_vertices, 3);
          TG_CHECK (c->positions[0] == 10.0f && c->positions[3] == 9.0f
                    && c->positions[7] == 2.0f);
          /* The mirror flips the winding to (0, 2, 1), still facing +Z in
           * the file; the file's +Z is the world's -Z (south), and going
           * to the world reverses the winding once more.  Normals, read
           * or computed, follow: a mirroring node must not turn them. */
          TG_CHECK (c->indices[0] == 0 && c->indices[1] == 1 && c->indices[2] == 2);
          for (int v = 0; v < 3; v++)
            TG_CHECK_MSG (c->normals[3 * v + 2] == -1.0f, "%s: normal z %g", c->name,
                          c->normals[3 * v + 2]);
        }
      tg_mesh_free (m);
    }

  /* Not a glb, and a truncated one: errors that name the file. */
  {
    FILE *f = fopen (tmp_path ("not.glb"), "wb");
    size_t len;
    unsigned char *data = read_all (tmp_path ("leaf.glb"), &len);
    fputs ("hello", f);
    fclose (f);
    memset (&err, 0, sizeof err);
    TG_CHECK (read (tmp_path ("not.glb"), &m, &err) < 0);
    TG_CHECK_STR_CONTAINS (err.message, "not.glb");
    f = fopen (tmp_path ("short.glb"), "wb");
    fwrite (data, 1, len - 8, f);
    fclose (f);
    memset (&err, 0, sizeof err);
    TG_CHECK (read (tmp_path ("short.glb"), &m, &err) < 0);
    TG_CHECK_STR_CONTAINS (err.message, "short.glb");
    free (data);
  }
}

static void
test_glb_reader_round_trips_our_points_file (void)
{
  TgMeshReader read = tg_io_mesh_reader ("glb");
  TgMesh *m = NULL;
  TgError err = { 0 };

  /* Read back the markers file: the root's children, one cone each. */
  TG_CHECK_INT_EQ (read (tmp_path ("markers.glb"), &m, &err), 0);
  if (m)
    {
      TG_CHECK_INT_EQ (m->n_chunks, 3);
      TG_CHECK_INT_EQ (m->chunks[0].n_indices, 48);
      tg_mesh_free (m);
    }
}

/* --- chunks ----------------------------------------------------------------------- */

/* A 1000 x 600 m world in 256 m chunks: 4 x 3 of them, the last column
 * 232 m wide and the last row 88 m tall. */
#define CHUNK_WORLD_X 1000.0
#define CHUNK_WORLD_Z 600.0
#define CHUNK_M 256.0
#define CHUNKS_X 4
#define CHUNKS_Z 3

static const TgPointsWriteOptions chunk_opt = { .size_x = CHUNK_WORLD_X, .size_z = CHUNK_WORLD_Z,
                                                .chunk_m = CHUNK_M };

/* Instances strewn over the world in no order of place (and a few just
 * outside it, as jitter leaves them), three prototypes mixed, plus some on
 * the lines between chunks and on the world's edges. */
static TgPoints *
strewn_points (void)
{
  TgPoints *p = tg_points_new ();
  static const char *names[] = { "tree", "bush", "rock" };
  static const float edges[][2] = {
    { -500.0f + 256.0f, 0.0f },  /* on the line between columns 0 and 1 */
    { 0.0f, 300.0f - 256.0f },   /* on the line between rows 0 and 1 */
    { 500.0f, -300.0f },         /* the world's south-east corner */
    { -500.0f, 300.0f },         /* its north-west corner */
    { 12.0f, 300.0f - 512.0f },  /* between rows 1 and 2 */
  };
  uint32_t s = 12345;

  for (int k = 0; k < 3; k++)
    tg_points_add_proto (p, names[k]);
  for (int i = 0; i < 300; i++)
    {
      float pos[3], rot[4] = { 0.0f, 0.0f, 0.0f, 1.0f }, scale[3] = { 1.0f, 1.0f, 1.0f };
      s = s * 1664525u + 1013904223u;
      pos[0] = (float) (-520.0 + 1040.0 * (s >> 8) / 16777216.0);
      s = s * 1664525u + 1013904223u;
      pos[2] = (float) (-320.0 + 640.0 * (s >> 8) / 16777216.0);
      pos[1] = (float) i * 0.25f;
      if (i < (int) (sizeof edges / sizeof edges[0]))
        {
          pos[0] = edges[i][0];
          pos[2] = edges[i][1];
        }
      s = s * 1664525u + 1013904223u;
      rot[1] = (float) sin (i);
      rot[3] = (float) cos (i);
      tg_points_push (p, pos, rot, scale, (int32_t) ((s >> 16) % 3));
    }
  return p;
}

/* The chunk holding world point POS, from the grid's statement: anchored
 * at the north-west corner, [west, east) x (south, north], the last
 * chunk taking the world's far edge, points outside to the nearest. */
static void
chunk_of (const float *pos, int *cx, int *cz)
{
  double west = -0.5 * CHUNK_WORLD_X, north = 0.5 * CHUNK_WORLD_Z;
  double x = pos[0], z = pos[2];

  *cx = (int) floor ((x - west) / CHUNK_M);
  *cz = (int) floor ((north - z) / CHUNK_M);
  *cx = *cx < 0 ? 0 : *cx >= CHUNKS_X ? CHUNKS_X - 1 : *cx;
  *cz = *cz < 0 ? 0 : *cz >= CHUNKS_Z ? CHUNKS_Z - 1 : *cz;
  /* Inside the world, the chunk's square holds the point. */
  if (x >= west && x <= -west && z >= -north && z <= north)
    {
      double x0 = west + *cx * CHUNK_M, z0 = north - *cz * CHUNK_M;
      TG_CHECK (x >= x0 && (x < x0 + CHUNK_M || (*cx == CHUNKS_X - 1 && x <= -west)));
      TG_CHECK (z <= z0 && (z > z0 - CHUNK_M || (*cz == CHUNKS_Z - 1 && z >= -north)));
    }
}

/* The instance of P at world position POS (each is unique), or -1. */
static int64_t
instance_at (const TgPoints *p, const float pos[3])
{
  for (int64_t i = 0; i < p->n; i++)
    if (p->position[3 * i] == pos[0] && p->position[3 * i + 1] == pos[1]
        && p->position[3 * i + 2] == pos[2])
      return i;
  return -1;
}

/* What a chunked file held, in file order: the instance and the chunk it
 * was filed under. */
typedef struct
{
  int64_t n, idx[512];
  int cx[512], cz[512];
} Filed;

static void
filed_add (Filed *f, int64_t i, int cx, int cz)
{
  if (f->n < 512)
    {
      f->idx[f->n] = i;
      f->cx[f->n] = cx;
      f->cz[f->n] = cz;
    }
  f->n++;
}

/* The rules every format keeps: every instance once, each filed under the
 * chunk holding it, chunks north-west first and each in one run, and the
 * list's order inside a chunk (and a prototype, BY_PROTO). */
static void
check_filed (const char *what, const TgPoints *p, const Filed *f, bool by_proto)
{
  int seen[512] = { 0 }, chunks = 0;

  TG_CHECK_MSG (f->n == p->n, "%s: %lld instances of %lld", what, (long long) f->n,
                (long long) p->n);
  for (int64_t j = 0; j < f->n && j < 512; j++)
    {
      int64_t i = f->idx[j];
      int cx, cz;
      TG_CHECK_MSG (i >= 0 && i < p->n, "%s: row %lld is no instance", what, (long long) j);
      if (i < 0 || i >= p->n)
        continue;
      seen[i]++;
      chunk_of (p->position + 3 * i, &cx, &cz);
      TG_CHECK_MSG (f->cx[j] == cx && f->cz[j] == cz,
                    "%s: instance %lld at (%g, %g) filed in chunk_x%d_z%d, not chunk_x%d_z%d",
                    what, (long long) i, p->position[3 * i], p->position[3 * i + 2], f->cx[j],
                    f->cz[j], cx, cz);
      if (j == 0 || f->cx[j] != f->cx[j - 1] || f->cz[j] != f->cz[j - 1])
        chunks++;
      if (j > 0)
        {
          int a = f->cz[j - 1] * CHUNKS_X + f->cx[j - 1], b = f->cz[j] * CHUNKS_X + f->cx[j];
          int64_t h = f->idx[j - 1];
          TG_CHECK_MSG (a <= b, "%s: chunk_x%d_z%d after chunk_x%d_z%d", what, f->cx[j], f->cz[j],
                        f->cx[j - 1], f->cz[j - 1]);
          if (a == b && h >= 0 && h < p->n && (!by_proto || p->proto[h] == p->proto[i]))
            TG_CHECK_MSG (h < i, "%s: instance %lld after %lld in one chunk", what, (long long) i,
                          (long long) h);
          if (a == b && by_proto && h >= 0 && h < p->n)
            TG_CHECK_MSG (p->proto[h] <= p->proto[i], "%s: prototypes out of order in a chunk",
                          what);
        }
    }
  for (int64_t i = 0; i < p->n && i < 512; i++)
    TG_CHECK_MSG (seen[i] == 1, "%s: instance %lld written %d times", what, (long long) i, seen[i]);
  /* The instances fill every chunk of this world. */
  TG_CHECK_MSG (chunks == CHUNKS_X * CHUNKS_Z, "%s: %d chunks", what, chunks);
}

static bool
parse_chunk (const char *s, int *cx, int *cz)
{
  int n = 0;

  return sscanf (s, "chunk_x%d_z%d%n", cx, cz, &n) == 2 && n > 0;
}

static void
test_csv_in_chunks (void)
{
  TgPoints *p = strewn_points ();
  TgError err = { 0 };
  Filed filed = { 0 }, named = { 0 };
  TgPointsWriteOptions unreal = chunk_opt;
  size_t len;
  unsigned char *text;
  char *line, *save = NULL;

  TG_CHECK_INT_EQ (write_points_opt ("csv", "chunks.csv", p, NULL, &chunk_opt, &err), 0);
  text = read_all (tmp_path ("chunks.csv"), &len);
  TG_CHECK (text && strncmp ((char *) text, "prototype,px,py,pz,qx,qy,qz,qw,sx,sy,sz,chunk\n", 46)
                      == 0);
  for (line = text ? strtok_r ((char *) text, "\n", &save) : NULL,
      line = line ? strtok_r (NULL, "\n", &save) : NULL;
       line; line = strtok_r (NULL, "\n", &save))
    {
      char *f[16];
      int cx = -1, cz = -1, n = csv_fields (line, f, 16);
      float pos[3];
      int64_t i;
      TG_CHECK_INT_EQ (n, 12);
      if (n != 12)
        break;
      for (int c = 0; c < 3; c++)
        pos[c] = strtof (f[1 + c], NULL);
      i = instance_at (p, pos);
      TG_CHECK (parse_chunk (f[11], &cx, &cz));
      TG_CHECK (i < 0 || strcmp (f[0], p->proto_names[p->proto[i]]) == 0);
      filed_add (&filed, i, cx, cz);
    }
  free (text);
  check_filed ("csv", p, &filed, false);

  /* Unreal's rows keep the instance's index in the whole list as Name. */
  unreal.frame = TG_POINTS_FRAME_UNREAL;
  TG_CHECK_INT_EQ (write_points_opt ("csv", "chunks_unreal.csv", p, NULL, &unreal, &err), 0);
  text = read_all (tmp_path ("chunks_unreal.csv"), &len);
  TG_CHECK (text && strncmp ((char *) text, "Name,Prototype,X,Y,Z,Pitch,Yaw,Roll,ScaleX,ScaleY,"
                                            "ScaleZ,Chunk\n", 62) == 0);
  save = NULL;
  for (line = text ? strtok_r ((char *) text, "\n", &save) : NULL,
      line = line ? strtok_r (NULL, "\n", &save) : NULL;
       line; line = strtok_r (NULL, "\n", &save))
    {
      char *f[16];
      int cx = -1, cz = -1, n = csv_fields (line, f, 16);
      TG_CHECK_INT_EQ (n, 12);
      if (n != 12)
        break;
      TG_CHECK (parse_chunk (f[11], &cx, &cz));
      filed_add (&named, strtoll (f[0], NULL, 10), cx, cz);
    }
  free (text);
  check_filed ("unreal csv", p, &named, false);
  for (int64_t j = 0; j < filed.n && j < named.n; j++)
    TG_CHECK (filed.idx[j] == named.idx[j]);
  tg_points_free (p);
}

static void
test_json_in_chunks (void)
{
  TgPoints *p = strewn_points ();
  TgError err = { 0 };
  Filed filed = { 0 };
  size_t len;
  unsigned char *text;
  json_object *doc, *chunks, *inst;
  int64_t next = 0;

  TG_CHECK_INT_EQ (write_points_opt ("json", "chunks.json", p, NULL, &chunk_opt, &err), 0);
  text = read_all (tmp_path ("chunks.json"), &len);
  doc = text ? json_tokener_parse ((char *) text) : NULL;
  TG_CHECK (doc != NULL);
  TG_CHECK (json_object_get_double (jget (doc, "chunk_m")) == CHUNK_M);
  chunks = jget (doc, "chunks");
  inst = jget (doc, "instances");
  TG_CHECK (chunks && inst && (int64_t) json_object_array_length (inst) == p->n);
  /* The table's runs tile the instance array in order, and every
   * instance in a run names that run's chunk. */
  for (size_t c = 0; chunks && inst && c < json_object_array_length (chunks); c++)
    {
      json_object *e = json_object_array_get_idx (chunks, c);
      int cx = -1, cz = -1;
      int64_t first = json_object_get_int64 (jget (e, "first"));
      int64_t count = json_object_get_int64 (jget (e, "count"));
      TG_CHECK (parse_chunk (json_object_get_string (jget (e, "name")), &cx, &cz));
      TG_CHECK (json_object_get_int (jget (e, "x")) == cx && json_object_get_int (jget (e, "z")) == cz);
      TG_CHECK_INT_EQ (first, next);
      TG_CHECK (count > 0);
      next = first + count;
      for (int64_t j = first; j < first + count && j < (int64_t) json_object_array_length (inst); j++)
        {
          json_object *o = json_object_array_get_idx (inst, (size_t) j), *pa = jget (o, "position");
          float pos[3];
          int ix = -1, iz = -1;
          for (int k = 0; k < 3; k++)
            pos[k] = (float) json_object_get_double (json_object_array_get_idx (pa, (size_t) k));
          TG_CHECK (parse_chunk (json_object_get_string (jget (o, "chunk")), &ix, &iz)
                    && ix == cx && iz == cz);
          filed_add (&filed, instance_at (p, pos), cx, cz);
        }
    }
  TG_CHECK_INT_EQ (next, p->n);
  check_filed ("json", p, &filed, false);
  json_object_put (doc);
  free (text);
  tg_points_free (p);
}

static void
test_glb_in_chunks (void)
{
  TgPoints *p = strewn_points ();
  TgError err = { 0 };
  Filed filed = { 0 };
  json_object *nodes, *root = NULL, *kids;
  int chunk_nodes = 0;
  Glb g;

  TG_CHECK_INT_EQ (write_points_opt ("glb", "chunks.glb", p, NULL, &chunk_opt, &err), 0);
  add_to_validate ("chunks.glb");
  TG_CHECK (glb_open (&g, tmp_path ("chunks.glb")));
  nodes = jget (g.doc, "nodes");
  for (size_t n = 0; nodes && n < json_object_array_length (nodes); n++)
    if (strcmp (json_object_get_string (jget (json_object_array_get_idx (nodes, n), "name")),
                "instances") == 0)
      root = json_object_array_get_idx (nodes, n);
  kids = jget (root, "children");
  TG_CHECK (kids != NULL);
  /* One mesh per prototype, shared by the chunks. */
  TG_CHECK_INT_EQ (json_object_array_length (jget (g.doc, "meshes")), 3);
  /* instances -> chunk_x<cx>_z<cz> -> chunk_x<cx>_z<cz>_<prototype> with the instancing. */
  for (size_t c = 0; kids && c < json_object_array_length (kids); c++)
    {
      json_object *chunk = jidx (nodes, json_object_get_int64 (json_object_array_get_idx (kids, c)));
      json_object *inner = jget (chunk, "children");
      const char *cname = json_object_get_string (jget (chunk, "name"));
      int cx = -1, cz = -1;
      TG_CHECK (parse_chunk (cname, &cx, &cz) && jget (chunk, "mesh") == NULL);
      chunk_nodes++;
      for (size_t k = 0; inner && k < json_object_array_length (inner); k++)
        {
          json_object *node = jidx (nodes, json_object_get_int64 (json_object_array_get_idx (inner, k)));
          json_object *attrs = jget (jget (jget (node, "extensions"), "EXT_mesh_gpu_instancing"),
                                     "attributes");
          const char *name = json_object_get_string (jget (node, "name"));
          int64_t a = json_object_get_int64 (jget (attrs, "TRANSLATION"));
          int64_t count = json_object_get_int64 (jget (jidx (jget (g.doc, "accessors"), a), "count"));
          TG_CHECK (attrs != NULL && jget (node, "mesh") != NULL);
          TG_CHECK_MSG (name && strncmp (name, cname, strlen (cname)) == 0
                          && name[strlen (cname)] == '_',
                        "instancing node \"%s\" in chunk \"%s\"", name, cname);
          for (int64_t j = 0; attrs && j < count; j++)
            {
              /* The file's frame: (x, y, -z). */
              float pos[3] = { acc_f (&g, a, j, 0, 3), acc_f (&g, a, j, 1, 3),
                               -acc_f (&g, a, j, 2, 3) };
              int64_t i = instance_at (p, pos);
              TG_CHECK (i >= 0 && strcmp (name + strlen (cname) + 1, p->proto_names[p->proto[i]]) == 0);
              filed_add (&filed, i, cx, cz);
            }
        }
    }
  TG_CHECK_INT_EQ (chunk_nodes, CHUNKS_X * CHUNKS_Z);
  check_filed ("glb", p, &filed, true);
  glb_close (&g);
  tg_points_free (p);
}

static void
test_godot_in_chunks (void)
{
  TgPoints *p = strewn_points ();
  TgError err = { 0 };
  Filed filed = { 0 };
  size_t len;
  char *text, *s;
  int chunk_nodes = 0, mmi = 0;

  TG_CHECK_INT_EQ (write_points_opt ("godot", "chunks.tscn", p, NULL, &chunk_opt, &err), 0);
  text = (char *) read_all (tmp_path ("chunks.tscn"), &len);
  TG_CHECK (text != NULL);
  if (!text)
    goto out;
  for (s = strstr (text, "\n[node name=\""); s; s = strstr (s + 1, "\n[node name=\""))
    {
      char name[128], type[64], parent[128];
      int cx = -1, cz = -1, id = -1, mesh = -1;
      long long count = -1;
      char head[80];
      const char *sec;
      if (sscanf (s, "\n[node name=\"%127[^\"]\" type=\"%63[^\"]\" parent=\"%127[^\"]\"]", name,
                  type, parent) != 3)
        continue;
      if (strcmp (type, "Node3D") == 0)
        {
          TG_CHECK (strcmp (parent, ".") == 0 && parse_chunk (name, &cx, &cz));
          chunk_nodes++;
          continue;
        }
      TG_CHECK (strcmp (type, "MultiMeshInstance3D") == 0 && parse_chunk (parent, &cx, &cz));
      mmi++;
      TG_CHECK (sscanf (strchr (s + 1, '\n'), "\nmultimesh = SubResource(\"MultiMesh_%d\")", &id) == 1);
      snprintf (head, sizeof head, "[sub_resource type=\"MultiMesh\" id=\"MultiMesh_%d\"]", id);
      sec = strstr (text, head);
      TG_CHECK_MSG (sec != NULL, "no %s", head);
      if (!sec)
        continue;
      TG_CHECK (sscanf (strstr (sec, "\ninstance_count = "), "\ninstance_count = %lld\nmesh = "
                        "SubResource(\"ArrayMesh_%d\")", &count, &mesh) == 2);
      TG_CHECK (mesh >= 0 && mesh < p->n_protos && strcmp (name, p->proto_names[mesh]) == 0);
      /* Origins: every 4th float of each row, z = -north. */
      {
        const char *b = strchr (strstr (sec, "\nbuffer = PackedFloat32Array("), '(') + 1;
        for (long long j = 0; j < count; j++)
          {
            double m[12];
            float pos[3];
            int64_t i;
            for (int e = 0; e < 12; e++)
              {
                char *end;
                m[e] = strtod (b, &end);
                b = end;
                while (*b == ',' || *b == ' ')
                  b++;
              }
            pos[0] = (float) m[3];
            pos[1] = (float) m[7];
            pos[2] = (float) -m[11];
            i = instance_at (p, pos);
            TG_CHECK (i >= 0 && p->proto[i] == mesh);
            filed_add (&filed, i, cx, cz);
          }
        TG_CHECK (*b == ')');
      }
    }
  TG_CHECK_INT_EQ (chunk_nodes, CHUNKS_X * CHUNKS_Z);
  TG_CHECK (mmi >= chunk_nodes);
  check_filed ("godot", p, &filed, true);
  free (text);
out:
  tg_points_free (p);
}

/* chunk_m 0 is one list, the bytes of no options at all; a chunk size
 * that is no size, or chunks without the world's extent, are refused. */
static void
test_chunk_options (void)
{
  TgPoints *p = strewn_points ();
  static const char *formats[] = { "csv", "json", "glb", "godot" };
  TgPointsWriteOptions zero = { .size_x = CHUNK_WORLD_X, .size_z = CHUNK_WORLD_Z };
  TgPointsWriteOptions bad = chunk_opt, no_world = { .chunk_m = 64.0 };

  bad.chunk_m = -1.0;
  for (int f = 0; f < 4; f++)
    {
      TgError err = { 0 };
      size_t la, lb;
      unsigned char *a, *b;
      TG_CHECK_INT_EQ (write_points_opt (formats[f], "plain.out", p, NULL, NULL, &err), 0);
      TG_CHECK_INT_EQ (write_points_opt (formats[f], "zero.out", p, NULL, &zero, &err), 0);
      a = read_all (tmp_path ("plain.out"), &la);
      b = read_all (tmp_path ("zero.out"), &lb);
      TG_CHECK_MSG (a && b && la == lb && memcmp (a, b, la) == 0, "%s: chunk_m 0 changed bytes",
                    formats[f]);
      free (a);
      free (b);
      TG_CHECK (write_points_opt (formats[f], "bad.out", p, NULL, &bad, &err) < 0);
      TG_CHECK_STR_CONTAINS (err.message, "chunk size -1 m");
      memset (&err, 0, sizeof err);
      TG_CHECK (write_points_opt (formats[f], "bad.out", p, NULL, &no_world, &err) < 0);
      TG_CHECK_STR_CONTAINS (err.message, "chunks need the world's extent");
    }
  tg_points_free (p);
}

static void
test_validator (void)
{
  char cmd[5000];
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
  tmpdir = tgtest_tmpdir ("tg-points-");
  if (!tmpdir)
    return 1;
  TG_RUN (test_csv_reads_back_exactly);
  TG_RUN (test_json_reads_back_exactly);
  TG_RUN (test_godot_scene_structure);
  TG_RUN (test_godot_draws_the_glb_prototype_meshes);
  TG_RUN (test_glb_instancing);
  TG_RUN (test_glb_with_prototype_mesh);
  TG_RUN (test_instances_keep_their_heading);
  TG_RUN (test_csv_frames_move_a_known_instance);
  TG_RUN (test_unreal_rotators_rebuild_the_rotation);
  TG_RUN (test_json_states_its_frame);
  TG_RUN (test_empty_list_writes_valid_files);
  TG_RUN (test_bad_instances_are_refused);
  TG_RUN (test_glb_reader_applies_node_transforms);
  TG_RUN (test_glb_reader_round_trips_our_points_file);
  TG_RUN (test_csv_in_chunks);
  TG_RUN (test_json_in_chunks);
  TG_RUN (test_glb_in_chunks);
  TG_RUN (test_godot_in_chunks);
  TG_RUN (test_chunk_options);
  TG_RUN (test_validator);
  return tgtest_result ();
}
