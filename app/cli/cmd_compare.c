/* `tgraph compare`: what changed between two output folders of `tgraph
 * eval` (main's build and a merge request's, say).  Files are matched by
 * path and told same or changed by the manifests' SHA-256; a changed
 * grid (heightmap, mask, image) is read back and measured sample by
 * sample (in metres when the manifest gives the heightmap's units) and
 * drawn as a difference map and old | new | difference thumbnails; a
 * mesh gives its counts and bounds, an instance list (csv, json, an
 * instancing glb) its counts per prototype and how many instances moved.  Text for people, JSON for
 * scripts (data/schema/compare.schema.json), Markdown for a merge
 * request with the pictures beside it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <tgformats/outputs.h>
#include <tgformats/tgformats.h>

#include "cli.h"
#include "picture.h"

#define CMD "compare"
#define DIFF_SIDE 1024 /* largest side of a difference map */
#define THUMB_SIDE 256 /* of each thumbnail of a side-by-side picture */

enum { SAME, CHANGED, ADDED, REMOVED };
static const char *const status_names[] = { "same", "changed", "added", "removed" };
enum { FORMAT_TEXT, FORMAT_JSON, FORMAT_MARKDOWN };

typedef struct
{
  char *name;
  int64_t old_n, new_n;
} ProtoCount;

typedef struct
{
  const char *path;
  const TgManifestFile *a, *b; /* old and new entries (NULL when absent) */
  int status;
  bool within;                 /* changed, but by no more than --tolerance */
  char note[256];              /* why it was not measured, or "" */
  /* grids */
  bool grid, metres;
  int width, height, old_w, old_h;
  int64_t n_changed;
  double max_diff, rms_diff;
  char diff_png[512], sides_png[512]; /* file names in the output folder, or "" */
  /* meshes */
  bool mesh;
  TgMeshStats ms[2];
  /* instance lists */
  bool points;
  ProtoCount *protos;
  int n_protos;
  int64_t moved, compared;
} Entry;

typedef struct
{
  const char *old_dir, *new_dir, *out_dir;
  double tolerance;
  int format;
  TgManifest m[2];
  Entry *e;
  int n;
  int count[4];
  int n_within;
} Compare;

/* --- measuring ------------------------------------------------------------- */

static void
join (char *buf, size_t size, const char *dir, const char *path)
{
  snprintf (buf, size, "%s/%s", dir, path);
}

/* "forest/height.png" -> "forest_height.png" + SUFFIX, a name in one folder. */
static void
picture_name (char *buf, size_t size, const char *path, const char *suffix)
{
  snprintf (buf, size, "%s%s", path, suffix);
  for (char *s = buf; *s; s++)
    if (*s == '/')
      *s = '_';
}

/* The value range of both grids, for thumbnails on one scale. */
static void
range2 (const TgImage *a, const TgImage *b, double *lo, double *hi)
{
  *lo = INFINITY;
  *hi = -INFINITY;
  tg__grid_range (a->data, (size_t) a->width * (size_t) a->height * (size_t) a->channels, 1, lo, hi);
  tg__grid_range (b->data, (size_t) b->width * (size_t) b->height * (size_t) b->channels, 1, lo, hi);
  tg__grid_range_done (lo, hi);
}

/* The difference map and the side-by-side picture of E into the output folder. */
static int
draw_grid (const Compare *c, Entry *e, const TgImage *a, const TgImage *b, const float *diff,
           TgError *err)
{
  static const uint8_t grey[3] = { 96, 96, 96 };
  TgPicture map = { 0 }, ta = { 0 }, tb = { 0 }, td = { 0 }, sides = { 0 };
  char path[4096];
  double lo, hi;
  bool flip = e->b->south_first;
  int rc;

  range2 (a, b, &lo, &hi);
  /* Channels beyond a grey one: an image's values are 0..1 of their code. */
  if (a->channels >= 3)
    {
      lo = 0.0;
      hi = tg_grid_format_max (e->b->format);
    }
  picture_name (e->diff_png, sizeof e->diff_png, e->path, ".diff.png");
  picture_name (e->sides_png, sizeof e->sides_png, e->path, ".sides.png");
  rc = tg__picture_diverging (&map, diff, e->width, e->height, e->max_diff, flip, DIFF_SIDE);
  if (rc == 0)
    rc = tg__picture_from_grid (&ta, a->data, a->width, a->height, a->channels, lo, hi, flip,
                                THUMB_SIDE);
  if (rc == 0)
    rc = tg__picture_from_grid (&tb, b->data, b->width, b->height, b->channels, lo, hi, flip,
                                THUMB_SIDE);
  if (rc == 0)
    rc = tg__picture_diverging (&td, diff, e->width, e->height, e->max_diff, flip, THUMB_SIDE);
  if (rc == 0)
    rc = tg__picture_init (&sides, 3 * ta.width + 16, ta.height, grey);
  if (rc < 0)
    rc = tg_error_set (err, TG_ENOMEM, "", "out of memory drawing %s", e->path);
  if (rc == 0)
    {
      tg__picture_blit (&sides, &ta, 0, 0);
      tg__picture_blit (&sides, &tb, ta.width + 8, 0);
      tg__picture_blit (&sides, &td, 2 * ta.width + 16, 0);
      join (path, sizeof path, c->out_dir, e->diff_png);
      rc = tg__picture_write (&map, path, err);
    }
  if (rc == 0)
    {
      join (path, sizeof path, c->out_dir, e->sides_png);
      rc = tg__picture_write (&sides, path, err);
    }
  tg__picture_clear (&map);
  tg__picture_clear (&ta);
  tg__picture_clear (&tb);
  tg__picture_clear (&td);
  tg__picture_clear (&sides);
  return rc;
}

static int
measure_grid (const Compare *c, Entry *e, TgError *err)
{
  TgImage im[2];
  char path[4096];
  int rc;

  memset (im, 0, sizeof im);
  for (int k = 0; k < 2; k++)
    {
      const TgManifestFile *f = k ? e->b : e->a;
      join (path, sizeof path, k ? c->new_dir : c->old_dir, f->path);
      rc = tg_grid_file_read (path, f->format, f->width, f->height, &im[k], err);
      if (rc < 0)
        {
          tg_image_clear (&im[0]);
          return rc;
        }
    }
  e->grid = true;
  e->width = im[1].width;
  e->height = im[1].height;
  e->old_w = im[0].width;
  e->old_h = im[0].height;
  e->metres = e->a->heightmap && e->b->heightmap;
  if (im[0].width != im[1].width || im[0].height != im[1].height
      || im[0].channels != im[1].channels)
    {
      snprintf (e->note, sizeof e->note, "size changed from %dx%dx%d to %dx%dx%d, not measured",
                im[0].width, im[0].height, im[0].channels, im[1].width, im[1].height,
                im[1].channels);
      tg_image_clear (&im[0]);
      tg_image_clear (&im[1]);
      return 0;
    }

  /* Each sample's difference in metres (heightmaps: each file's own
   * units and offset) or in 0..1 of the format's range. */
  size_t n = (size_t) e->width * (size_t) e->height;
  int ch = im[1].channels;
  double ua = e->metres ? e->a->metres_per_unit : 1.0 / tg_grid_format_max (e->a->format);
  double ub = e->metres ? e->b->metres_per_unit : 1.0 / tg_grid_format_max (e->b->format);
  double oa = e->metres ? e->a->height_min_m : 0.0, ob = e->metres ? e->b->height_min_m : 0.0;
  float *diff = malloc (n * sizeof *diff);
  double sum2 = 0.0;
  if (!diff)
    rc = tg_error_set (err, TG_ENOMEM, "", "out of memory comparing %s", e->path);
  else
    rc = 0;
  for (size_t i = 0; rc == 0 && i < n; i++)
    {
      double d = 0.0;
      for (int k = 0; k < ch; k++)
        {
          double va = ((const float *) im[0].data)[i * ch + k] * ua + oa;
          double vb = ((const float *) im[1].data)[i * ch + k] * ub + ob;
          double dk = vb - va;
          if (va != vb && !(fabs (dk) > 0.0))
            dk = INFINITY; /* a NaN on one side only */
          if (fabs (dk) > fabs (d))
            d = dk;
        }
      diff[i] = (float) d;
      if (d != 0.0)
        e->n_changed++;
      if (fabs (d) > e->max_diff)
        e->max_diff = fabs (d);
      sum2 += d * d;
    }
  if (rc == 0)
    {
      e->rms_diff = n ? sqrt (sum2 / (double) n) : 0.0;
      e->within = e->metres && e->max_diff <= c->tolerance;
      if (c->out_dir && e->n_changed > 0)
        rc = draw_grid (c, e, &im[0], &im[1], diff, err);
    }
  free (diff);
  tg_image_clear (&im[0]);
  tg_image_clear (&im[1]);
  return rc;
}

static int
measure_mesh (const Compare *c, Entry *e, TgError *err)
{
  char path[4096];
  for (int k = 0; k < 2; k++)
    {
      const TgManifestFile *f = k ? e->b : e->a;
      join (path, sizeof path, k ? c->new_dir : c->old_dir, f->path);
      int rc = tg_mesh_file_stats (path, f->format, &e->ms[k], err);
      if (rc < 0)
        return rc;
    }
  e->mesh = true;
  bool close = e->ms[0].n_vertices == e->ms[1].n_vertices
               && e->ms[0].n_triangles == e->ms[1].n_triangles;
  for (int k = 0; k < 3; k++)
    close = close && fabs (e->ms[0].min[k] - e->ms[1].min[k]) <= c->tolerance
            && fabs (e->ms[0].max[k] - e->ms[1].max[k]) <= c->tolerance;
  e->within = close && c->tolerance > 0.0;
  return 0;
}

static ProtoCount *
proto_slot (Entry *e, const char *name)
{
  for (int i = 0; i < e->n_protos; i++)
    if (strcmp (e->protos[i].name, name) == 0)
      return &e->protos[i];
  ProtoCount *p = realloc (e->protos, (size_t) (e->n_protos + 1) * sizeof *p);
  if (!p)
    return NULL;
  e->protos = p;
  p = &e->protos[e->n_protos];
  p->name = strdup (name);
  p->old_n = p->new_n = 0;
  if (!p->name)
    return NULL;
  e->n_protos++;
  return p;
}

/* Instances are matched by their rank among their prototype's: the k-th
 * tree of the old list with the k-th tree of the new one.  Moved: more
 * than --tolerance apart.  Returns 1 when a glb turns out to be a mesh. */
static int
measure_points (const Compare *c, Entry *e, TgError *err)
{
  TgPoints *p[2] = { NULL, NULL };
  char path[4096];
  int rc = 0;

  for (int k = 0; k < 2 && rc == 0; k++)
    {
      const TgManifestFile *f = k ? e->b : e->a;
      join (path, sizeof path, k ? c->new_dir : c->old_dir, f->path);
      rc = tg_points_file_read (path, f->format, &p[k], err);
      if (rc == 0 && !p[k])
        {
          tg_points_free (p[0]);
          return 1; /* not an instance list */
        }
    }
  for (int k = 0; k < 2 && rc == 0; k++)
    for (int64_t i = 0; i < p[k]->n && rc == 0; i++)
      {
        ProtoCount *s = proto_slot (e, p[k]->proto_names[p[k]->proto[i]]);
        if (!s)
          rc = tg_error_set (err, TG_ENOMEM, "", "out of memory");
        else if (k)
          s->new_n++;
        else
          s->old_n++;
      }
  for (int q = 0; q < e->n_protos && rc == 0; q++)
    {
      int64_t ia = 0, ib = 0;
      int pa = -1, pb = -1;
      for (int k = 0; k < p[0]->n_protos; k++)
        if (strcmp (p[0]->proto_names[k], e->protos[q].name) == 0)
          pa = k;
      for (int k = 0; k < p[1]->n_protos; k++)
        if (strcmp (p[1]->proto_names[k], e->protos[q].name) == 0)
          pb = k;
      for (;;)
        {
          while (ia < p[0]->n && p[0]->proto[ia] != pa)
            ia++;
          while (ib < p[1]->n && p[1]->proto[ib] != pb)
            ib++;
          if (ia >= p[0]->n || ib >= p[1]->n)
            break;
          const float *x = &p[0]->position[3 * ia], *y = &p[1]->position[3 * ib];
          double d = sqrt ((double) (x[0] - y[0]) * (x[0] - y[0]) + (x[1] - y[1]) * (x[1] - y[1])
                           + (x[2] - y[2]) * (x[2] - y[2]));
          e->compared++;
          if (d > c->tolerance)
            e->moved++;
          ia++;
          ib++;
        }
    }
  if (rc == 0)
    {
      e->points = true;
      bool same_counts = true;
      for (int q = 0; q < e->n_protos; q++)
        same_counts = same_counts && e->protos[q].old_n == e->protos[q].new_n;
      e->within = same_counts && e->moved == 0 && c->tolerance > 0.0;
    }
  tg_points_free (p[0]);
  tg_points_free (p[1]);
  return rc;
}

static int
measure (const Compare *c, Entry *e, TgError *err)
{
  const char *fa = e->a->format, *fb = e->b->format;

  if (strcmp (fa, fb) != 0)
    {
      snprintf (e->note, sizeof e->note, "format changed from %s to %s", fa, fb);
      return 0;
    }
  if (tg_grid_format_readable (fb))
    return measure_grid (c, e, err);
  if (strcmp (fb, "csv") == 0 || strcmp (fb, "json") == 0 || strcmp (fb, "glb") == 0)
    {
      /* A glb is an instance list when it instances its meshes, else a mesh. */
      int rc = measure_points (c, e, err);
      if (rc != 1)
        return rc;
    }
  if (strcmp (fb, "glb") == 0 || strcmp (fb, "obj") == 0 || strcmp (fb, "ply") == 0)
    return measure_mesh (c, e, err);
  snprintf (e->note, sizeof e->note, "%s files are compared by their hash only", fb);
  return 0;
}

static int
compare_sort (const void *x, const void *y)
{
  return strcmp (((const Entry *) x)->path, ((const Entry *) y)->path);
}

static int
run_compare (Compare *c)
{
  TgError err;
  const char *dirs[2] = { c->old_dir, c->new_dir };

  for (int k = 0; k < 2; k++)
    {
      tg_error_clear (&err);
      if (tg_manifest_read (dirs[k], &c->m[k], &err) < 0)
        {
          fprintf (stderr, "tgraph %s: %s\n", CMD, err.message);
          return TG_CLI_EXIT_USAGE;
        }
    }
  c->e = calloc ((size_t) (c->m[0].n_files + c->m[1].n_files + 1), sizeof *c->e);
  if (!c->e)
    return TG_CLI_EXIT_FAILED;
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < c->m[k].n_files; i++)
      {
        const TgManifestFile *f = &c->m[k].files[i];
        const TgManifestFile *other = tg_manifest_find (&c->m[!k], f->path);
        if (k == 1 && other)
          continue; /* paired from the old side */
        Entry *e = &c->e[c->n++];
        e->path = f->path;
        e->a = k ? NULL : f;
        e->b = k ? f : other;
        e->status = !e->b ? REMOVED : !e->a ? ADDED
                    : strcmp (e->a->sha256, e->b->sha256) == 0 ? SAME : CHANGED;
      }
  qsort (c->e, (size_t) c->n, sizeof *c->e, compare_sort);

  if (c->out_dir && mkdir (c->out_dir, 0777) < 0 && errno != EEXIST)
    {
      fprintf (stderr, "tgraph %s: cannot create the output folder \"%s\": %s\n", CMD, c->out_dir,
               strerror (errno));
      return TG_CLI_EXIT_USAGE;
    }
  for (int i = 0; i < c->n; i++)
    {
      Entry *e = &c->e[i];
      c->count[e->status]++;
      if (e->status != CHANGED)
        continue;
      tg_error_clear (&err);
      if (measure (c, e, &err) < 0)
        {
          fprintf (stderr, "tgraph %s: %s\n", CMD, err.message);
          return TG_CLI_EXIT_USAGE;
        }
      c->n_within += e->within;
    }
  return 0;
}

/* --- printing ----------------------------------------------------------- */

static void
print_number (FILE *f, double v)
{
  char buf[32];
  if (!isfinite (v))
    {
      fputs ("null", f);
      return;
    }
  tg_format_double (v, buf);
  fputs (buf, f);
}

/* One line of details about a changed entry, for text and markdown. */
static void
details (FILE *f, const Entry *e, bool markdown)
{
  const char *unit = e->metres ? " m" : "";

  if (e->note[0])
    fprintf (f, "%s", e->note);
  else if (e->grid)
    fprintf (f, "%s %dx%d: %lld of %lld samples differ, max %.4g%s, RMS %.4g%s%s", e->b->format,
             e->width, e->height, (long long) e->n_changed,
             (long long) e->width * (long long) e->height, e->max_diff, unit, e->rms_diff,
             unit, e->metres ? "" : " (of the full range)");
  else if (e->mesh)
    {
      for (int k = 0; k < 2; k++)
        fprintf (f, "%s%lld vertices, %lld triangles, bounds (%.6g, %.6g, %.6g)..(%.6g, %.6g, "
                 "%.6g)", k ? (markdown ? " → " : " -> ") : "",
                 (long long) e->ms[k].n_vertices, (long long) e->ms[k].n_triangles,
                 e->ms[k].min[0], e->ms[k].min[1], e->ms[k].min[2], e->ms[k].max[0],
                 e->ms[k].max[1], e->ms[k].max[2]);
    }
  else if (e->points)
    {
      for (int q = 0; q < e->n_protos; q++)
        fprintf (f, "%s%s %lld%s%lld", q ? ", " : "", e->protos[q].name,
                 (long long) e->protos[q].old_n, markdown ? " → " : " -> ",
                 (long long) e->protos[q].new_n);
      fprintf (f, "; %lld of %lld matched instances moved", (long long) e->moved,
               (long long) e->compared);
    }
  if (e->within)
    fprintf (f, " (within the tolerance)");
}

static void
print_text (const Compare *c)
{
  for (int i = 0; i < c->n; i++)
    {
      const Entry *e = &c->e[i];
      if (e->status == SAME)
        continue;
      printf ("%-8s %s", status_names[e->status], e->path);
      if (e->status == CHANGED)
        {
          printf (": ");
          details (stdout, e, false);
          if (e->diff_png[0])
            printf ("\n         difference: %s/%s, side by side: %s/%s", c->out_dir, e->diff_png,
                    c->out_dir, e->sides_png);
        }
      putchar ('\n');
    }
  printf ("%d same, %d changed%s, %d added, %d removed\n", c->count[SAME], c->count[CHANGED],
          c->n_within ? " (some within the tolerance)" : "", c->count[ADDED], c->count[REMOVED]);
}

static void
put_string (FILE *f, const char *s)
{
  char *q = tg_json_quote (s);
  fputs (q ? q : "null", f);
  free (q);
}

static void
put_bounds (FILE *f, const TgMeshStats *s)
{
  fprintf (f, "{\"vertices\": %lld, \"triangles\": %lld, \"min\": [", (long long) s->n_vertices,
           (long long) s->n_triangles);
  for (int k = 0; k < 3; k++)
    {
      fputs (k ? ", " : "", f);
      print_number (f, s->min[k]);
    }
  fputs ("], \"max\": [", f);
  for (int k = 0; k < 3; k++)
    {
      fputs (k ? ", " : "", f);
      print_number (f, s->max[k]);
    }
  fputs ("]}", f);
}

static void
print_json (const Compare *c, bool equal)
{
  printf ("{\"old\": ");
  put_string (stdout, c->old_dir);
  printf (", \"new\": ");
  put_string (stdout, c->new_dir);
  printf (", \"equal\": %s, \"tolerance_m\": ", equal ? "true" : "false");
  print_number (stdout, c->tolerance);
  printf (",\n \"summary\": {\"same\": %d, \"changed\": %d, \"within_tolerance\": %d, "
          "\"added\": %d, \"removed\": %d},\n \"files\": [",
          c->count[SAME], c->count[CHANGED], c->n_within, c->count[ADDED], c->count[REMOVED]);
  for (int i = 0; i < c->n; i++)
    {
      const Entry *e = &c->e[i];
      const TgManifestFile *f = e->b ? e->b : e->a;
      printf ("%s\n  {\"path\": ", i ? "," : "");
      put_string (stdout, e->path);
      printf (", \"status\": \"%s\", \"format\": ", status_names[e->status]);
      put_string (stdout, f->format);
      if (e->a)
        printf (", \"old_sha256\": \"%s\", \"old_bytes\": %llu", e->a->sha256,
                (unsigned long long) e->a->bytes);
      if (e->b)
        printf (", \"new_sha256\": \"%s\", \"new_bytes\": %llu", e->b->sha256,
                (unsigned long long) e->b->bytes);
      if (e->status == CHANGED)
        printf (", \"within_tolerance\": %s", e->within ? "true" : "false");
      if (e->note[0])
        {
          printf (", \"note\": ");
          put_string (stdout, e->note);
        }
      if (e->grid && !e->note[0])
        {
          printf (",\n   \"grid\": {\"width\": %d, \"height\": %d, \"changed_samples\": %lld, "
                  "\"unit\": \"%s\", \"max_diff\": ",
                  e->width, e->height, (long long) e->n_changed, e->metres ? "m" : "fraction");
          print_number (stdout, e->max_diff);
          printf (", \"rms_diff\": ");
          print_number (stdout, e->rms_diff);
          if (e->diff_png[0])
            {
              printf (", \"difference_png\": ");
              put_string (stdout, e->diff_png);
              printf (", \"sides_png\": ");
              put_string (stdout, e->sides_png);
            }
          putchar ('}');
        }
      if (e->mesh)
        {
          printf (",\n   \"mesh\": {\"old\": ");
          put_bounds (stdout, &e->ms[0]);
          printf (", \"new\": ");
          put_bounds (stdout, &e->ms[1]);
          putchar ('}');
        }
      if (e->points)
        {
          printf (",\n   \"instances\": {\"moved\": %lld, \"matched\": %lld, \"prototypes\": [",
                  (long long) e->moved, (long long) e->compared);
          for (int q = 0; q < e->n_protos; q++)
            {
              printf ("%s{\"name\": ", q ? ", " : "");
              put_string (stdout, e->protos[q].name);
              printf (", \"old\": %lld, \"new\": %lld}", (long long) e->protos[q].old_n,
                      (long long) e->protos[q].new_n);
            }
          printf ("]}");
        }
      putchar ('}');
    }
  printf ("%s]}\n", c->n ? "\n " : "");
}

/* Markdown for a merge request: a table of what is not the same, the
 * pictures (links relative to the output folder) below it. */
static void
print_markdown (FILE *f, const Compare *c, bool equal)
{
  fprintf (f, "### Terrain outputs: %s\n\n",
           !equal ? "changed" : c->n_within ? "within the tolerance" : "no change");
  fprintf (f, "%d same, %d changed, %d added, %d removed", c->count[SAME], c->count[CHANGED],
           c->count[ADDED], c->count[REMOVED]);
  if (c->tolerance > 0.0)
    fprintf (f, " (tolerance %g m)", c->tolerance);
  fprintf (f, ".\n");
  if (c->count[SAME] == c->n)
    return;
  fprintf (f, "\n| File | Status | Details |\n|---|---|---|\n");
  for (int i = 0; i < c->n; i++)
    {
      const Entry *e = &c->e[i];
      if (e->status == SAME)
        continue;
      fprintf (f, "| `%s` | %s | ", e->path, status_names[e->status]);
      if (e->status == CHANGED)
        details (f, e, true);
      else
        fprintf (f, "%s, %llu bytes", (e->b ? e->b : e->a)->format,
                 (unsigned long long) (e->b ? e->b : e->a)->bytes);
      fprintf (f, " |\n");
    }
  for (int i = 0; i < c->n; i++)
    if (c->e[i].sides_png[0])
      fprintf (f, "\n**`%s`**: old, new, difference (blue lower, red higher)\n\n"
               "![%s](%s)\n",
               c->e[i].path, c->e[i].path, c->e[i].sides_png);
}

static void
compare_clear (Compare *c)
{
  for (int i = 0; i < c->n; i++)
    {
      for (int q = 0; q < c->e[i].n_protos; q++)
        free (c->e[i].protos[q].name);
      free (c->e[i].protos);
    }
  free (c->e);
  tg_manifest_clear (&c->m[0]);
  tg_manifest_clear (&c->m[1]);
}

int
tg__cli_compare (int argc, char **argv)
{
  static const char *const formats[] = { "text", "json", "markdown", NULL };
  Compare c = { .format = FORMAT_TEXT };
  const char *dirs[2] = { NULL, NULL };
  int n_dirs = 0, status;

  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i], *v = NULL;
      int m;
      if (a[0] != '-' || a[1] == '\0')
        {
          if (n_dirs == 2)
            return tg__cli_usage_error (CMD, "expected two folders, got a third: \"%s\"", a);
          dirs[n_dirs++] = a;
        }
      else if ((m = tg__cli_option_value (CMD, argc, argv, &i, "--output", "-o", &v)) != 0)
        {
          if (m < 0)
            return TG_CLI_EXIT_USAGE;
          if (!v[0])
            return tg__cli_usage_error (CMD, "--output: empty folder name");
          c.out_dir = v;
        }
      else if ((m = tg__cli_option_value (CMD, argc, argv, &i, "--format", NULL, &v)) != 0)
        {
          if (m < 0 || tg__cli_parse_choice (CMD, "--format", v, formats, &c.format) < 0)
            return TG_CLI_EXIT_USAGE;
        }
      else if ((m = tg__cli_option_value (CMD, argc, argv, &i, "--tolerance", NULL, &v)) != 0)
        {
          char *end;
          if (m < 0)
            return TG_CLI_EXIT_USAGE;
          errno = 0;
          c.tolerance = strtod (v, &end);
          if (end == v || *end || errno || !(c.tolerance >= 0.0) || !isfinite (c.tolerance))
            return tg__cli_usage_error (CMD, "--tolerance: expected metres, a number >= 0, got "
                                        "\"%s\"", v);
        }
      else
        return tg__cli_usage_error (CMD, "unknown option \"%s\"", a);
    }
  if (n_dirs != 2)
    return tg__cli_usage_error (CMD, "expected two output folders, OLD_DIR and NEW_DIR");
  c.old_dir = dirs[0];
  c.new_dir = dirs[1];

  status = run_compare (&c);
  if (status == 0)
    {
      bool equal = c.count[CHANGED] == c.n_within && c.count[ADDED] == 0 && c.count[REMOVED] == 0;
      if (c.format == FORMAT_JSON)
        print_json (&c, equal);
      else if (c.format == FORMAT_MARKDOWN)
        {
          print_markdown (stdout, &c, equal);
          if (c.out_dir)
            {
              char path[4096];
              char *buf = NULL;
              size_t len = 0;
              FILE *f = open_memstream (&buf, &len);
              TgError err;
              tg_error_clear (&err);
              if (f)
                {
                  print_markdown (f, &c, equal);
                  fclose (f);
                }
              snprintf (path, sizeof path, "%s/summary.md", c.out_dir);
              if (!buf || tg_write_file_atomic (path, buf, len, &err) < 0)
                {
                  fprintf (stderr, "tgraph %s: %s\n", CMD, buf ? err.message : "out of memory");
                  status = TG_CLI_EXIT_FAILED;
                }
              free (buf);
            }
        }
      else
        print_text (&c);
      if (status == 0)
        status = equal ? TG_CLI_EXIT_OK : TG_CLI_EXIT_FAILED;
    }
  compare_clear (&c);
  return status;
}
