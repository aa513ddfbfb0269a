/* Reading a build's outputs back (outputs.h): the manifest with json-c,
 * grid files through the PNG reader, RAW16/R32 by their manifest shape
 * and EXR through OpenEXR's C API, glb meshes through the glb reader and
 * OBJ/PLY by their own simple layouts as our writers make them, and the
 * CSV instance list.  What a compare needs, not general importers.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openexr.h>

#include "points-writers.h"
#include "tgformats-private.h"
#include "tgformats/outputs.h"

/* --- manifest ------------------------------------------------------------- */

static char *
dup_or_empty (const char *s)
{
  return strdup (s ? s : "");
}

static const char *
get_string (json_object *o, const char *key)
{
  json_object *v;
  return json_object_object_get_ex (o, key, &v) && json_object_is_type (v, json_type_string)
           ? json_object_get_string (v)
           : NULL;
}

static bool
get_number (json_object *o, const char *key, double *out)
{
  json_object *v;
  if (!json_object_object_get_ex (o, key, &v)
      || !(json_object_is_type (v, json_type_int) || json_object_is_type (v, json_type_double)))
    return false;
  *out = json_object_get_double (v);
  return true;
}

/* Element I of array KEY of O as a number. */
static bool
get_index (json_object *o, const char *key, int i, double *out)
{
  json_object *a, *v;
  if (!json_object_object_get_ex (o, key, &a) || !json_object_is_type (a, json_type_array)
      || (int) json_object_array_length (a) <= i)
    return false;
  v = json_object_array_get_idx (a, (size_t) i);
  if (!(json_object_is_type (v, json_type_int) || json_object_is_type (v, json_type_double)))
    return false;
  *out = json_object_get_double (v);
  return true;
}

static int
read_file_entry (json_object *e, int i, const char *file, TgManifestFile *f, TgError *err)
{
  const char *path = get_string (e, "path"), *sha = get_string (e, "sha256"), *compression;
  double bytes, w = 0, h = 0;
  json_object *hm;

  if (!json_object_is_type (e, json_type_object))
    return tg_error_set (err, TG_EPARSE, "", "%s: files[%d]: expected an object", file, i);
  if (!path || !path[0] || !tg_path_is_safe_relative (path))
    return tg_error_set (err, TG_EPARSE, "", "%s: files[%d].path: expected a relative path "
                         "inside the folder", file, i);
  if (!sha || strlen (sha) != 64)
    return tg_error_set (err, TG_EPARSE, "", "%s: files[%d].sha256: expected 64 hex digits", file,
                         i);
  if (!get_number (e, "bytes", &bytes) || bytes < 0)
    return tg_error_set (err, TG_EPARSE, "", "%s: files[%d].bytes: expected a size", file, i);
  get_index (e, "resolution", 0, &w);
  get_index (e, "resolution", 1, &h);
  f->path = strdup (path);
  f->sha256 = strdup (sha);
  /* An older manifest may say "png16.small" for png16 written small. */
  f->format = dup_or_empty (tg__writer_format (get_string (e, "format"), &compression));
  f->node = dup_or_empty (get_string (e, "node"));
  if (!f->path || !f->sha256 || !f->format || !f->node)
    return tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
  f->bytes = (uint64_t) bytes;
  f->width = w > 0 && w <= TG__IMAGE_MAX_SIDE ? (int) w : 0;
  f->height = h > 0 && h <= TG__IMAGE_MAX_SIDE ? (int) h : 0;
  f->metres_per_unit = 1.0;
  if (json_object_object_get_ex (e, "heightmap", &hm) && json_object_is_type (hm, json_type_object))
    {
      const char *rows = get_string (hm, "rows");
      if (!get_index (hm, "height_range_m", 0, &f->height_min_m)
          || !get_index (hm, "height_range_m", 1, &f->height_max_m)
          || !get_number (hm, "metres_per_unit", &f->metres_per_unit))
        return tg_error_set (err, TG_EPARSE, "", "%s: files[%d].heightmap: expected "
                             "height_range_m and metres_per_unit", file, i);
      f->heightmap = true;
      f->south_first = rows && strcmp (rows, "south_first") == 0;
    }
  return 0;
}

int
tg_manifest_read (const char *dir, TgManifest *out, TgError *err)
{
  char file[4096];
  size_t len;
  bool ok;
  json_object *root, *files, *world;
  int rc = 0;

  memset (out, 0, sizeof *out);
  if (snprintf (file, sizeof file, "%s/manifest.json", dir) >= (int) sizeof file)
    return tg_error_set (err, TG_EINVAL, "", "%s: folder name too long", dir);
  if (access (file, F_OK) != 0)
    return tg_error_set (err, TG_EIO, "", "%s: no manifest.json (%s; not an output folder of "
                         "tgraph eval?)", dir, strerror (errno));
  rc = tg__read_file (file, &out->text, &len, err);
  if (rc < 0)
    return rc;
  root = tg__json_parse (out->text, &ok);
  if (!root || !json_object_is_type (root, json_type_object))
    {
      json_object_put (root);
      tg_manifest_clear (out);
      return tg_error_set (err, TG_EPARSE, "", "%s: not a JSON object", file);
    }
  if (!json_object_object_get_ex (root, "files", &files)
      || !json_object_is_type (files, json_type_array))
    rc = tg_error_set (err, TG_EPARSE, "", "%s: files: expected an array", file);
  if (rc == 0 && json_object_object_get_ex (root, "world", &world))
    {
      double v = 0;
      get_index (world, "size_m", 0, &out->size_x_m);
      get_index (world, "size_m", 1, &out->size_z_m);
      get_number (world, "height_m", &out->height_m);
      if (get_number (world, "resolution", &v))
        out->resolution = (int) v;
      if (get_number (world, "seed", &v))
        out->seed = (uint32_t) v;
    }
  if (rc == 0 && get_string (root, "graph"))
    out->graph = strdup (get_string (root, "graph"));
  if (rc == 0)
    {
      int n = (int) json_object_array_length (files);
      out->files = calloc ((size_t) (n > 0 ? n : 1), sizeof *out->files);
      if (!out->files)
        rc = tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
      for (int i = 0; rc == 0 && i < n; i++)
        {
          out->n_files = i + 1;
          rc = read_file_entry (json_object_array_get_idx (files, (size_t) i), i, file,
                                &out->files[i], err);
          for (int k = 0; rc == 0 && k < i; k++)
            if (strcmp (out->files[k].path, out->files[i].path) == 0)
              rc = tg_error_set (err, TG_EPARSE, "", "%s: files[%d].path: \"%s\" is listed twice",
                                 file, i, out->files[i].path);
        }
    }
  json_object_put (root);
  if (rc < 0)
    tg_manifest_clear (out);
  return rc;
}

void
tg_manifest_clear (TgManifest *m)
{
  for (int i = 0; i < m->n_files; i++)
    {
      free (m->files[i].path);
      free (m->files[i].sha256);
      free (m->files[i].format);
      free (m->files[i].node);
    }
  free (m->files);
  free (m->graph);
  free (m->text);
  memset (m, 0, sizeof *m);
}

const TgManifestFile *
tg_manifest_find (const TgManifest *m, const char *path)
{
  for (int i = 0; i < m->n_files; i++)
    if (strcmp (m->files[i].path, path) == 0)
      return &m->files[i];
  return NULL;
}

/* --- grid files ------------------------------------------------------------- */

bool
tg_grid_format_readable (const char *format)
{
  static const char *const formats[] = { "png16", "png8", "raw16", "r32", "exr" };
  for (int i = 0; i < TG_N_ELEMENTS (formats); i++)
    if (strcmp (format, formats[i]) == 0)
      return true;
  return false;
}

double
tg_grid_format_max (const char *format)
{
  if (strcmp (format, "png16") == 0 || strcmp (format, "raw16") == 0)
    return 65535.0;
  if (strcmp (format, "png8") == 0)
    return 255.0;
  return 1.0;
}

static int
float_image (TgImage *out, int width, int height, int channels, TgError *err)
{
  memset (out, 0, sizeof *out);
  out->data = malloc ((size_t) width * (size_t) height * (size_t) channels * sizeof (float));
  if (!out->data)
    return tg_error_set (err, TG_ENOMEM, "", "out of memory for a %dx%d image", width, height);
  out->width = width;
  out->height = height;
  out->channels = channels;
  out->bits = 32;
  return 0;
}

static int
read_raw (const char *path, int bits, int width, int height, TgImage *out, TgError *err)
{
  size_t n = (size_t) width * (size_t) height, len;
  char *data;
  int rc;

  if (width < 1 || height < 1)
    return tg_error_set (err, TG_EPARSE, "", "%s: the manifest gives no resolution", path);
  rc = tg__read_file (path, &data, &len, err);
  if (rc < 0)
    return rc;
  if (len != n * (size_t) (bits / 8))
    {
      free (data);
      return tg_error_set (err, TG_EPARSE, "", "%s: %zu bytes, expected %zu for %dx%d samples of "
                           "%d bits", path, len, n * (size_t) (bits / 8), width, height, bits);
    }
  rc = float_image (out, width, height, 1, err);
  float *dst = out->data;
  const uint8_t *p = (const uint8_t *) data;
  for (size_t i = 0; rc == 0 && i < n; i++)
    if (bits == 16)
      dst[i] = (float) (p[2 * i] | p[2 * i + 1] << 8);
    else
      {
        uint32_t u = (uint32_t) p[4 * i] | (uint32_t) p[4 * i + 1] << 8
                     | (uint32_t) p[4 * i + 2] << 16 | (uint32_t) p[4 * i + 3] << 24;
        memcpy (&dst[i], &u, sizeof u);
      }
  free (data);
  return rc;
}

static int
read_png (const char *path, TgImage *out, TgError *err)
{
  TgImage img;
  int rc = tg_png_read (path, &img, err);
  if (rc < 0)
    return rc;
  size_t n = (size_t) img.width * (size_t) img.height * (size_t) img.channels;
  rc = float_image (out, img.width, img.height, img.channels, err);
  for (size_t i = 0; rc == 0 && i < n; i++)
    ((float *) out->data)[i] = img.bits == 16 ? (float) ((const uint16_t *) img.data)[i]
                                              : (float) ((const uint8_t *) img.data)[i];
  tg_image_clear (&img);
  return rc;
}

static int
exr_fail (exr_context_t *ctxt, exr_result_t r, const char *path, TgError *err)
{
  if (*ctxt)
    exr_finish (ctxt);
  return tg_error_set (err, TG_EPARSE, "", "%s: OpenEXR: %s", path,
                       exr_get_default_error_message (r));
}

/* Scanline EXR, any channel count up to 4, decoded to float in the
 * file's channel order (OpenEXR's: alphabetical). */
static int
read_exr (const char *path, TgImage *out, TgError *err)
{
  exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
  exr_context_t ctxt = NULL;
  exr_attr_box2i_t dw;
  const exr_attr_chlist_t *chl;
  int32_t lines;
  exr_result_t r;
  int rc;

  init.flags |= EXR_CONTEXT_FLAG_SILENT_HEADER_PARSE;
  init.error_handler_fn = NULL;
  if ((r = exr_start_read (&ctxt, path, &init)) != EXR_ERR_SUCCESS
      || (r = exr_get_data_window (ctxt, 0, &dw)) != EXR_ERR_SUCCESS
      || (r = exr_get_channels (ctxt, 0, &chl)) != EXR_ERR_SUCCESS
      || (r = exr_get_scanlines_per_chunk (ctxt, 0, &lines)) != EXR_ERR_SUCCESS)
    return exr_fail (&ctxt, r, path, err);
  int width = dw.max.x - dw.min.x + 1, height = dw.max.y - dw.min.y + 1, nc = chl->num_channels;
  if (width < 1 || height < 1 || width > TG__IMAGE_MAX_SIDE || height > TG__IMAGE_MAX_SIDE
      || nc < 1 || nc > 4 || lines < 1)
    {
      exr_finish (&ctxt);
      return tg_error_set (err, TG_EFORMAT, "", "%s: a %dx%d EXR with %d channels is not "
                           "supported", path, width, height, nc);
    }
  rc = float_image (out, width, height, nc, err);
  for (int y = dw.min.y; rc == 0 && y <= dw.max.y; y += lines)
    {
      exr_chunk_info_t cinfo;
      exr_decode_pipeline_t dec = EXR_DECODE_PIPELINE_INITIALIZER;
      uint8_t *row = (uint8_t *) out->data
                     + (size_t) (y - dw.min.y) * (size_t) width * (size_t) nc * sizeof (float);

      r = exr_read_scanline_chunk_info (ctxt, 0, y, &cinfo);
      if (r == EXR_ERR_SUCCESS)
        r = exr_decoding_initialize (ctxt, 0, &cinfo, &dec);
      for (int c = 0; r == EXR_ERR_SUCCESS && c < dec.channel_count; c++)
        {
          dec.channels[c].decode_to_ptr = row + (size_t) c * sizeof (float);
          dec.channels[c].user_pixel_stride = nc * (int32_t) sizeof (float);
          dec.channels[c].user_line_stride = width * nc * (int32_t) sizeof (float);
          dec.channels[c].user_data_type = EXR_PIXEL_FLOAT;
          dec.channels[c].user_bytes_per_element = sizeof (float);
        }
      if (r == EXR_ERR_SUCCESS)
        r = exr_decoding_choose_default_routines (ctxt, 0, &dec);
      if (r == EXR_ERR_SUCCESS)
        r = exr_decoding_run (ctxt, 0, &dec);
      exr_decoding_destroy (ctxt, &dec);
      if (r != EXR_ERR_SUCCESS)
        {
          tg_image_clear (out);
          return exr_fail (&ctxt, r, path, err);
        }
    }
  exr_finish (&ctxt);
  return rc;
}

int
tg_grid_file_read (const char *path, const char *format, int width, int height, TgImage *out,
                   TgError *err)
{
  memset (out, 0, sizeof *out);
  if (strcmp (format, "png16") == 0 || strcmp (format, "png8") == 0)
    return read_png (path, out, err);
  if (strcmp (format, "raw16") == 0)
    return read_raw (path, 16, width, height, out, err);
  if (strcmp (format, "r32") == 0)
    return read_raw (path, 32, width, height, out, err);
  if (strcmp (format, "exr") == 0)
    return read_exr (path, out, err);
  return tg_error_set (err, TG_EFORMAT, "", "%s: format \"%s\" is not a grid file", path, format);
}

/* --- meshes ----------------------------------------------------------------- */

static void
stats_add (TgMeshStats *s, double x, double y, double z)
{
  const double p[3] = { x, y, z };
  for (int k = 0; k < 3; k++)
    {
      if (s->n_vertices == 0 || p[k] < s->min[k])
        s->min[k] = p[k];
      if (s->n_vertices == 0 || p[k] > s->max[k])
        s->max[k] = p[k];
    }
  s->n_vertices++;
}

static int
stats_obj (const char *path, TgMeshStats *s, TgError *err)
{
  char *data;
  size_t len;
  int rc = tg__read_file (path, &data, &len, err);
  if (rc < 0)
    return rc;
  for (char *line = data; line && *line; )
    {
      char *next = strchr (line, '\n');
      double x, y, z;
      if (next)
        *next++ = '\0';
      if (line[0] == 'v' && line[1] == ' ' && sscanf (line + 2, "%lf %lf %lf", &x, &y, &z) == 3)
        stats_add (s, x, y, z);
      else if (line[0] == 'f' && line[1] == ' ')
        s->n_triangles++;
      line = next;
    }
  free (data);
  return 0;
}

/* Our PLY writer's layout: binary little-endian, float x y z first in a
 * vertex of 24 or 32 bytes, then faces of three uint indices. */
static int
stats_ply (const char *path, TgMeshStats *s, TgError *err)
{
  char *data;
  size_t len;
  long long nv = -1, nf = -1;
  int stride = 0;
  int rc = tg__read_file (path, &data, &len, err);
  if (rc < 0)
    return rc;
  char *end = strstr (data, "end_header\n");
  if (strncmp (data, "ply\nformat binary_little_endian 1.0\n", 36) != 0 || !end)
    {
      free (data);
      return tg_error_set (err, TG_EPARSE, "", "%s: not a binary little-endian PLY", path);
    }
  for (char *p = data; p < end; p = strchr (p, '\n') + 1)
    {
      if (sscanf (p, "element vertex %lld", &nv) == 1 || sscanf (p, "element face %lld", &nf) == 1)
        continue;
      if (strncmp (p, "property float", 14) == 0 && nf < 0)
        stride += 4;
    }
  size_t body = (size_t) (end + 11 - data);
  if (nv < 0 || nf < 0 || stride < 12 || len - body < (size_t) nv * (size_t) stride)
    {
      free (data);
      return tg_error_set (err, TG_EPARSE, "", "%s: a PLY header this reader does not know",
                           path);
    }
  for (long long i = 0; i < nv; i++)
    {
      float v[3];
      memcpy (v, data + body + (size_t) i * (size_t) stride, sizeof v);
      stats_add (s, v[0], v[1], v[2]);
    }
  s->n_triangles = nf;
  free (data);
  return 0;
}

int
tg_mesh_file_stats (const char *path, const char *format, TgMeshStats *out, TgError *err)
{
  memset (out, 0, sizeof *out);
  if (strcmp (format, "obj") == 0)
    return stats_obj (path, out, err);
  if (strcmp (format, "ply") == 0)
    return stats_ply (path, out, err);
  if (strcmp (format, "glb") != 0)
    return tg_error_set (err, TG_EFORMAT, "", "%s: format \"%s\" is not a mesh file", path,
                         format);
  TgMesh *m = NULL;
  int rc = tg__read_mesh_glb (path, &m, err);
  if (rc < 0)
    return rc;
  for (int c = 0; c < m->n_chunks; c++)
    {
      const TgMeshChunk *ch = &m->chunks[c];
      for (int i = 0; i < ch->n_vertices; i++)
        stats_add (out, ch->positions[3 * i], ch->positions[3 * i + 1], ch->positions[3 * i + 2]);
      out->n_triangles += ch->n_indices / 3;
    }
  tg_mesh_free (m);
  return 0;
}

/* --- instance lists ------------------------------------------------------------ */

/* One CSV field at *P (RFC 4180 quotes), copied into BUF; *P moves past
 * its comma. */
static void
csv_field (char **p, char *buf, size_t size)
{
  size_t n = 0;
  char *s = *p;
  if (*s == '"')
    {
      for (s++; *s && !(*s == '"' && s[1] != '"'); s++)
        {
          if (*s == '"')
            s++;
          if (n + 1 < size)
            buf[n++] = *s;
        }
      if (*s == '"')
        s++;
    }
  else
    for (; *s && *s != ',' && *s != '\n' && *s != '\r'; s++)
      if (n + 1 < size)
        buf[n++] = *s;
  buf[n] = '\0';
  *p = *s == ',' ? s + 1 : s;
}

int
tg_points_csv_read (const char *path, TgPoints **out, TgError *err)
{
  static const char header[] = "prototype,px,py,pz,qx,qy,qz,qw,sx,sy,sz";
  char *data;
  size_t len;
  int rc = tg__read_file (path, &data, &len, err);
  TgPoints *p;

  *out = NULL;
  if (rc < 0)
    return rc;
  if (strncmp (data, header, sizeof header - 1) != 0)
    {
      free (data);
      return tg_error_set (err, TG_EFORMAT, "", "%s: line 1: expected the header \"%s\"", path,
                           header);
    }
  p = tg_points_new ();
  rc = p ? 0 : tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
  int line_no = 1;
  for (char *line = strchr (data, '\n'); rc == 0 && line && line[1]; )
    {
      char *s = line + 1, name[256], num[64];
      float v[10];
      int proto = -1;
      line_no++;
      csv_field (&s, name, sizeof name);
      for (int k = 0; k < 10; k++)
        {
          char *e;
          csv_field (&s, num, sizeof num);
          v[k] = strtof (num, &e);
          if (e == num || *e)
            rc = tg_error_set (err, TG_EPARSE, "", "%s: line %d: field %d: expected a number", path,
                               line_no, k + 2);
        }
      for (int k = 0; rc == 0 && k < p->n_protos && proto < 0; k++)
        if (strcmp (p->proto_names[k], name) == 0)
          proto = k;
      if (rc == 0 && proto < 0 && (proto = tg_points_add_proto (p, name)) < 0)
        rc = tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
      if (rc == 0 && tg_points_push (p, v, v + 3, v + 7, proto) < 0)
        rc = tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
      line = strchr (s, '\n');
    }
  free (data);
  if (rc < 0)
    {
      tg_points_free (p);
      return rc;
    }
  *out = p;
  return 0;
}

/* The "json" instance list (points_json.c): prototypes and instances. */
static int
points_json_read (const char *path, TgPoints *p, TgError *err)
{
  char *data;
  size_t len;
  bool ok;
  int rc = tg__read_file (path, &data, &len, err);
  json_object *root, *protos, *list;

  if (rc < 0)
    return rc;
  root = tg__json_parse (data, &ok);
  free (data);
  if (!root || !json_object_object_get_ex (root, "prototypes", &protos)
      || !json_object_object_get_ex (root, "instances", &list)
      || !json_object_is_type (protos, json_type_array)
      || !json_object_is_type (list, json_type_array))
    {
      json_object_put (root);
      return tg_error_set (err, TG_EPARSE, "", "%s: not a terrane-instances JSON file", path);
    }
  for (size_t k = 0; rc == 0 && k < json_object_array_length (protos); k++)
    if (tg_points_add_proto (p, json_object_get_string (json_object_array_get_idx (protos, k))) < 0)
      rc = tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
  for (size_t i = 0; rc == 0 && i < json_object_array_length (list); i++)
    {
      json_object *e = json_object_array_get_idx (list, i);
      const char *name = get_string (e, "prototype");
      float v[10] = { 0, 0, 0, 0, 0, 0, 1, 1, 1, 1 };
      double x;
      int proto = -1;
      for (int k = 0; name && k < p->n_protos; k++)
        if (strcmp (p->proto_names[k], name) == 0)
          proto = k;
      for (int k = 0; k < 3; k++)
        if (get_index (e, "position", k, &x))
          v[k] = (float) x;
        else
          proto = -1;
      if (proto < 0)
        rc = tg_error_set (err, TG_EPARSE, "", "%s: instances[%zu]: expected a known prototype "
                           "and a position", path, i);
      else if (tg_points_push (p, v, v + 3, v + 7, proto) < 0)
        rc = tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
    }
  json_object_put (root);
  return rc;
}

/* The prototype an instancing node stands for: its name, less the
 * "chunk_x<cx>_z<cz>_" of a chunked list (points_glb.c names them
 * chunk_x1_z2_tree). */
static const char *
glb_proto_name (const char *name)
{
  int cx, cz, used = 0;

  if (!name)
    return "";
  if (sscanf (name, "chunk_x%d_z%d_%n", &cx, &cz, &used) == 2 && used > 0)
    return name + used;
  return name;
}

/* A glb instance list (points_glb.c): each node with
 * EXT_mesh_gpu_instancing is a prototype (its name), its TRANSLATION
 * accessor the positions.  0 with nothing added when the file instances
 * nothing (a mesh). */
static int
points_glb_read (const char *path, TgPoints *p, bool *instanced, TgError *err)
{
  char *data;
  size_t len;
  bool ok;
  int rc = tg__read_file (path, &data, &len, err);
  json_object *root = NULL, *nodes, *accessors, *views;
  const uint8_t *bin = NULL;
  size_t bin_len = 0;

  *instanced = false;
  if (rc < 0)
    return rc;
  const uint8_t *u = (const uint8_t *) data;
  uint32_t json_len = len >= 20 ? (uint32_t) u[12] | (uint32_t) u[13] << 8
                                    | (uint32_t) u[14] << 16 | (uint32_t) u[15] << 24 : 0;
  if (len < 20 || memcmp (data, "glTF", 4) != 0 || memcmp (data + 16, "JSON", 4) != 0
      || json_len > len - 20)
    rc = tg_error_set (err, TG_EPARSE, "", "%s: not a glb file", path);
  if (rc == 0 && len - 20 - json_len >= 8)
    {
      bin = u + 20 + json_len + 8;
      bin_len = len - 20 - json_len - 8;
    }
  if (rc == 0)
    {
      char *text = strndup (data + 20, json_len);
      root = text ? tg__json_parse (text, &ok) : NULL;
      free (text);
    }
  if (rc == 0 && (!root || !json_object_object_get_ex (root, "nodes", &nodes)
                  || !json_object_object_get_ex (root, "accessors", &accessors)
                  || !json_object_object_get_ex (root, "bufferViews", &views)))
    rc = root ? 0 : tg_error_set (err, TG_EPARSE, "", "%s: its JSON chunk does not parse", path);
  else
    for (size_t n = 0; rc == 0 && n < json_object_array_length (nodes); n++)
      {
        json_object *node = json_object_array_get_idx (nodes, n), *ext, *inst, *attrs, *acc,
                    *view;
        double ai, vi, count, off = 0, voff = 0, stride = 0;
        if (!json_object_object_get_ex (node, "extensions", &ext)
            || !json_object_object_get_ex (ext, "EXT_mesh_gpu_instancing", &inst)
            || !json_object_object_get_ex (inst, "attributes", &attrs)
            || !get_number (attrs, "TRANSLATION", &ai))
          continue;
        *instanced = true;
        acc = json_object_array_get_idx (accessors, (size_t) ai);
        view = acc && get_number (acc, "bufferView", &vi)
                 ? json_object_array_get_idx (views, (size_t) vi) : NULL;
        if (!view || !get_number (acc, "count", &count))
          {
            rc = tg_error_set (err, TG_EPARSE, "", "%s: nodes[%zu]: no TRANSLATION data", path, n);
            break;
          }
        get_number (acc, "byteOffset", &off);
        get_number (view, "byteOffset", &voff);
        get_number (view, "byteStride", &stride);
        if (stride < 12)
          stride = 12;
        if (!bin || voff + off + (count > 0 ? (count - 1) * stride + 12 : 0) > (double) bin_len)
          {
            rc = tg_error_set (err, TG_EPARSE, "", "%s: nodes[%zu]: positions outside the "
                               "binary chunk", path, n);
            break;
          }
        const char *name = glb_proto_name (get_string (node, "name"));
        int proto = -1;
        /* A chunked list has one instancing node per chunk and prototype. */
        for (int k = 0; k < p->n_protos && proto < 0; k++)
          if (strcmp (p->proto_names[k], name) == 0)
            proto = k;
        if (proto < 0)
          proto = tg_points_add_proto (p, name);
        for (int64_t i = 0; proto >= 0 && rc == 0 && i < (int64_t) count; i++)
          {
            float v[10] = { 0, 0, 0, 0, 0, 0, 1, 1, 1, 1 };
            memcpy (v, bin + (size_t) (voff + off) + (size_t) i * (size_t) stride, 12);
            if (tg_points_push (p, v, v + 3, v + 7, proto) < 0)
              proto = -1;
          }
        if (proto < 0)
          rc = tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
      }
  json_object_put (root);
  free (data);
  return rc;
}

int
tg_points_file_read (const char *path, const char *format, TgPoints **out, TgError *err)
{
  bool instanced = true;
  int rc;

  *out = NULL;
  if (strcmp (format, "csv") == 0)
    return tg_points_csv_read (path, out, err);
  if (strcmp (format, "json") != 0 && strcmp (format, "glb") != 0)
    return tg_error_set (err, TG_EFORMAT, "", "%s: format \"%s\" is not an instance list", path,
                         format);
  TgPoints *p = tg_points_new ();
  if (!p)
    return tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
  rc = strcmp (format, "json") == 0 ? points_json_read (path, p, err)
                                    : points_glb_read (path, p, &instanced, err);
  if (rc < 0 || !instanced)
    {
      tg_points_free (p);
      return rc;
    }
  *out = p;
  return 0;
}

int
tg_write_file_atomic (const char *path, const void *data, size_t len, TgError *err)
{
  return tg__write_file_atomic (path, data, len, err);
}
