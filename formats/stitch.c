/* Tiled builds, part four: `tgraph stitch`.  Checks every export job's
 * job.json (present, made from the plan's graph, every file's hash as
 * listed), joins the tiles of each image, encodes it with the writer its
 * export named, copies the whole-world job's meshes and instance lists,
 * and commits them with the same manifest tg_build writes: the same bytes
 * as `tgraph eval` of the whole world.  Nothing is written unless every
 * check passes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan-private.h"
#include "tgformats-private.h"

typedef struct
{
  char *path, *file, *format, *node, *sha256;
  int width, height;
  char **channels;  /* what each channel holds (export.splat), or NULL */
  int n_channels;
} JobFile;

typedef struct
{
  JobFile *files;
  int n;
} JobManifest;

static void
job_manifest_clear (JobManifest *m)
{
  for (int i = 0; i < m->n; i++)
    {
      free (m->files[i].path);
      free (m->files[i].file);
      free (m->files[i].format);
      free (m->files[i].node);
      free (m->files[i].sha256);
      for (int k = 0; k < m->files[i].n_channels; k++)
        free (m->files[i].channels[k]);
      free (m->files[i].channels);
    }
  free (m->files);
  memset (m, 0, sizeof *m);
}

static char *
dup_field (json_object *o, const char *key)
{
  json_object *v;
  const char *s = json_object_object_get_ex (o, key, &v) ? json_object_get_string (v) : NULL;
  return s ? strdup (s) : NULL;
}

/* The writer of file entry O: its "format" and "compression" as the
 * manifest says them, or (a job.json of an older tgraph) the writer's
 * name as the format, "png16.small"; NULL when no writer has them. */
static char *
dup_writer (json_object *o)
{
  json_object *v;
  const char *format = json_object_object_get_ex (o, "format", &v) ? json_object_get_string (v)
                                                                   : NULL;
  const char *compression = json_object_object_get_ex (o, "compression", &v)
                              ? json_object_get_string (v)
                              : NULL;
  const char *writer = format ? tg__format_writer (format, compression) : NULL;
  return writer ? strdup (writer) : NULL;
}

/* Reads JOB_DIR/job.json of the job named WHAT, checks it against the plan
 * and every file's hash. */
static int
job_manifest_read (const char *job_dir, const char *what, const TgPlanInfo *info, int stage,
                   JobManifest *m, TgError *err)
{
  char path[4300], *text = NULL;
  size_t len;
  json_object *root, *v, *files;
  int rc = 0;

  memset (m, 0, sizeof *m);
  snprintf (path, sizeof path, "%s/%s", job_dir, TG__JOB_MANIFEST);
  if (access (path, F_OK) != 0)
    return tg_error_set (err, TG_EMISSING, "", "%s is missing (no %s): its job has not run or failed",
                         what, path);
  if ((rc = tg__read_file (path, &text, &len, err)) < 0)
    return rc;
  root = json_tokener_parse (text);
  free (text);
  if (!root || !json_object_object_get_ex (root, "graph_sha256", &v)
      || !json_object_object_get_ex (root, "files", &files)
      || !json_object_is_type (files, json_type_array))
    {
      json_object_put (root);
      return tg_error_set (err, TG_EPARSE, "", "%s: %s is damaged", what, path);
    }
  if (strcmp (json_object_get_string (v), info->sha_hex) != 0)
    {
      rc = tg_error_set (err, TG_EINVAL, "",
                         "%s is stale: made from another graph or resolution (sha256 %.12s, the "
                         "plan's %.12s); rerun its job",
                         what, json_object_get_string (v), info->sha_hex);
      json_object_put (root);
      return rc;
    }
  if (!json_object_object_get_ex (root, "stage", &v) || json_object_get_int (v) != stage)
    {
      json_object_put (root);
      return tg_error_set (err, TG_EINVAL, "", "%s: %s is from another stage", what, path);
    }
  m->n = (int) json_object_array_length (files);
  m->files = calloc ((size_t) (m->n ? m->n : 1), sizeof *m->files);
  if (!m->files)
    rc = tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
  for (int i = 0; rc == 0 && i < m->n; i++)
    {
      json_object *o = json_object_array_get_idx (files, (size_t) i);
      JobFile *f = &m->files[i];
      char hex[65], fpath[4300];
      f->path = dup_field (o, "path");
      f->file = dup_field (o, "file");
      f->format = dup_writer (o);
      f->node = dup_field (o, "node");
      f->sha256 = dup_field (o, "sha256");
      f->width = json_object_object_get_ex (o, "width", &v) ? json_object_get_int (v) : 0;
      f->height = json_object_object_get_ex (o, "height", &v) ? json_object_get_int (v) : 0;
      if (json_object_object_get_ex (o, "channels", &v) && json_object_is_type (v, json_type_array))
        {
          size_t nc = json_object_array_length (v);
          f->channels = calloc (nc + 1, sizeof *f->channels);
          for (size_t k = 0; f->channels && k < nc; k++)
            {
              const char *s = json_object_get_string (json_object_array_get_idx (v, k));
              if (!(f->channels[k] = strdup (s ? s : "")))
                break;
              f->n_channels++;
            }
          if ((size_t) f->n_channels != nc)
            {
              rc = tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
              break;
            }
        }
      if (!f->path || !f->file || !f->format || !f->node || !f->sha256
          || !tg_path_is_safe_relative (f->file) || !tg_path_is_safe_relative (f->path))
        {
          rc = tg_error_set (err, TG_EPARSE, "", "%s: %s lists a damaged file entry", what, path);
          break;
        }
      snprintf (fpath, sizeof fpath, "%s/%s", job_dir, f->file);
      if (tg_sha256_file (fpath, hex, err) < 0)
        rc = tg_error_set (err, TG_EMISSING, "", "%s: %s is missing", what, fpath);
      else if (strcmp (hex, f->sha256) != 0)
        rc = tg_error_set (err, TG_EINVAL, "", "%s: %s does not have the hash its job.json gives",
                           what, fpath);
    }
  json_object_put (root);
  if (rc < 0)
    job_manifest_clear (m);
  return rc;
}

/* The window [C0, C0 + W) x [R0, R0 + H) of image K, north first, from
 * the raw tiles that cover it; *SOUTH_FIRST says how the export wrote it. */
static int
read_window (const char *dir, const TgPlan *p, const JobManifest *tiles, int k, int c0, int r0,
             int w, int h, TgImage *out, bool *south_first, TgError *err)
{
  size_t px = 0;
  int rc = 0;

  memset (out, 0, sizeof *out);
  for (int iy = 0; iy < p->ny && rc == 0; iy++)
    for (int ix = 0; ix < p->nx && rc == 0; ix++)
      {
        TgTiling t = { p->nx, p->ny, ix, iy };
        TgRegion win = tg_tiling_window (&t, &p->full, ix, iy);
        int a0 = win.col0 > c0 ? win.col0 : c0, a1 = win.col0 + win.width < c0 + w ? win.col0 + win.width : c0 + w;
        int b0 = win.row0 > r0 ? win.row0 : r0, b1 = win.row0 + win.height < r0 + h ? win.row0 + win.height : r0 + h;
        TgImage part;
        char path[4300];
        if (a0 >= a1 || b0 >= b1)
          continue;
        snprintf (path, sizeof path, "%s/tiles/%d_%d/%s", dir, ix, iy,
                  tiles[iy * p->nx + ix].files[k].file);
        if ((rc = tg_tile_image_read (path, &part, err)) < 0)
          break;
        if (out->data == NULL)
          {
            out->width = w;
            out->height = h;
            out->channels = part.channels;
            out->bits = part.bits;
            *south_first = part.south_first;
            px = (size_t) (part.bits / 8) * (size_t) part.channels;
            out->data = malloc (tg_image_bytes (out));
            if (!out->data)
              rc = tg_error_set (err, TG_ENOMEM, "", "out of memory joining %s",
                                 tiles[0].files[k].path);
          }
        if (rc == 0 && (part.width != win.width || part.height != win.height
                        || part.channels != out->channels || part.bits != out->bits
                        || part.south_first != *south_first))
          rc = tg_error_set (err, TG_EPARSE, "", "%s: %dx%d, %d channels, %d bits where tile "
                             "%d,%d needs %dx%d like its neighbours", path, part.width,
                             part.height, part.channels, part.bits, ix, iy, win.width, win.height);
        /* A south-first tile holds its window's rows last row first. */
        for (int r = b0; rc == 0 && r < b1; r++)
          {
            int j = part.south_first ? win.height - 1 - (r - win.row0) : r - win.row0;
            memcpy ((char *) out->data + ((size_t) (r - r0) * (size_t) w + (size_t) (a0 - c0)) * px,
                    (char *) part.data + ((size_t) j * (size_t) part.width + (size_t) (a0 - win.col0)) * px,
                    (size_t) (a1 - a0) * px);
          }
        tg_image_clear (&part);
      }
  if (rc < 0)
    tg_image_clear (out);
  return rc;
}

static void
flip_rows (TgImage *img)
{
  size_t row = tg_image_bytes (img) / (size_t) img->height;
  char *tmp = malloc (row ? row : 1);

  for (int j = 0; tmp && j < img->height / 2; j++)
    {
      char *a = (char *) img->data + (size_t) j * row;
      char *b = (char *) img->data + (size_t) (img->height - 1 - j) * row;
      memcpy (tmp, a, row);
      memcpy (a, b, row);
      memcpy (b, tmp, row);
    }
  free (tmp);
}

/* Encodes ROWS with the writer of FILE's format and stages it as FILE
 * describes. */
static int
stage_rows (TgExportList *l, const TgExportFile *file, const TgImageRows *rows, TgError *err)
{
  TgImageRowsWriter writer = tg__image_rows_writer (file->format);
  FILE *out;
  int rc, close_rc;

  if (!writer)
    return tg_error_set (err, TG_EFORMAT, "", "no image writer for format \"%s\"", file->format);
  out = tg_export_list_stage (l, file, err);
  if (!out)
    return err->code ? err->code : TG_EIO;
  rc = writer (out, rows, err);
  /* A failed write's reason (a full disk) wins over the writer's. */
  close_rc = tg_export_list_close_stream (l, out, file->path, err);
  return close_rc < 0 ? close_rc : rc;
}

/* Image K of every tile as rows of the whole world, in the order its
 * export writes them, holding one row of tiles at a time: stitch's
 * memory is a band of the world, not the world. */
typedef struct
{
  const char *dir;
  const TgPlan *p;
  const JobManifest *tiles;
  int k;
  int band_iy;      /* the row of tiles in PARTS, -1 for none */
  TgImage *parts;   /* P->nx tiles */
  TgImage first;    /* the shape every tile must have (data unused) */
} TileRows;

static void
tile_rows_drop (TileRows *tr)
{
  for (int ix = 0; ix < tr->p->nx; ix++)
    tg_image_clear (&tr->parts[ix]);
  tr->band_iy = -1;
}

/* Loads the row IY of tiles, each checked against its window. */
static int
tile_rows_load (TileRows *tr, int iy, TgError *err)
{
  const TgPlan *p = tr->p;
  int rc = 0;

  tile_rows_drop (tr);
  for (int ix = 0; ix < p->nx && rc == 0; ix++)
    {
      TgTiling t = { p->nx, p->ny, ix, iy };
      TgRegion win = tg_tiling_window (&t, &p->full, ix, iy);
      TgImage *part = &tr->parts[ix];
      char path[4300];
      snprintf (path, sizeof path, "%s/tiles/%d_%d/%s", tr->dir, ix, iy,
                tr->tiles[iy * p->nx + ix].files[tr->k].file);
      if ((rc = tg_tile_image_read (path, part, err)) < 0)
        break;
      if (tr->first.width == 0)
        tr->first = (TgImage) { 1, 1, part->channels, part->bits, NULL, part->south_first };
      if (part->width != win.width || part->height != win.height
          || part->channels != tr->first.channels || part->bits != tr->first.bits
          || part->south_first != tr->first.south_first)
        rc = tg_error_set (err, TG_EPARSE, "", "%s: %dx%d, %d channels, %d bits where tile "
                           "%d,%d needs %dx%d like its neighbours", path, part->width,
                           part->height, part->channels, part->bits, ix, iy, win.width,
                           win.height);
    }
  if (rc < 0)
    tile_rows_drop (tr);
  else
    tr->band_iy = iy;
  return rc;
}

static int
tile_rows_get (void *user, int y, int n, void *dst, TgError *err)
{
  TileRows *tr = user;
  const TgPlan *p = tr->p;
  int H = p->full.full_h;
  size_t px = (size_t) (tr->first.bits / 8) * (size_t) tr->first.channels;
  size_t row = px * (size_t) p->full.full_w;
  int rc = 0;

  for (int q = 0; q < n && rc == 0; q++)
    {
      /* South-first exports write the world's last row first. */
      int r = tr->first.south_first ? H - 1 - (y + q) : y + q;
      int iy = tr->band_iy;
      if (iy < 0 || r < tg_tile_start (H, p->ny, iy) || r >= tg_tile_start (H, p->ny, iy + 1))
        {
          iy = 0;
          while (r >= tg_tile_start (H, p->ny, iy + 1))
            iy++;
          if ((rc = tile_rows_load (tr, iy, err)) < 0)
            break;
        }
      for (int ix = 0; ix < p->nx; ix++)
        {
          TgTiling t = { p->nx, p->ny, ix, iy };
          TgRegion win = tg_tiling_window (&t, &p->full, ix, iy);
          const TgImage *part = &tr->parts[ix];
          /* A south-first tile holds its window's rows last row first. */
          int j = part->south_first ? win.height - 1 - (r - win.row0) : r - win.row0;
          memcpy ((char *) dst + (size_t) q * row + (size_t) win.col0 * px,
                  (const char *) part->data + (size_t) j * (size_t) part->width * px,
                  (size_t) part->width * px);
        }
    }
  return rc;
}

/* Joins image K of every tile and stages it, encoded, a band at a time. */
static int
stitch_image (const char *dir, const TgPlan *p, const JobManifest *tiles, int k, TgExportList *l,
              TgError *err)
{
  const JobFile *f = &tiles[0].files[k];
  TileRows tr = { dir, p, tiles, k, -1, NULL, { 0 } };
  TgImageRows rows;
  int rc;

  tr.parts = calloc ((size_t) p->nx, sizeof *tr.parts);
  if (!tr.parts)
    return tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
  /* The first row of tiles gives the shape (and is the first band of a
   * north-first export). */
  if ((rc = tile_rows_load (&tr, 0, err)) == 0)
    {
      rows = (TgImageRows) { p->full.full_w, p->full.full_h, tr.first.channels, tr.first.bits,
                             NULL, tile_rows_get, &tr };
      rc = stage_rows (l,
                       &(TgExportFile) { .path = f->path, .format = f->format, .node_id = f->node,
                                         .width = rows.width, .height = rows.height,
                                         .south_first = tr.first.south_first,
                                         .channel_names = (const char *const *) f->channels,
                                         .n_channel_names = f->n_channels },
                       &rows, err);
    }
  tile_rows_drop (&tr);
  free (tr.parts);
  return rc;
}

static const int unreal_sizes[] = { 8129, 4033, 2017, 1009, 505, 253, 127 };
static const int unity_sizes[] = { 4097, 2049, 1025, 513, 257, 129 };

/* The side of the per-tile files: OPTS's, or the largest allowed size
 * that tiles the world exactly, preferring the plan's own tile count. */
static int
tile_file_size (const TgStitchOptions *o, const TgPlan *p, TgError *err)
{
  const int *sizes = o->tile_files == TG_TILE_FILES_UNREAL ? unreal_sizes : unity_sizes;
  int n = o->tile_files == TG_TILE_FILES_UNREAL ? TG_N_ELEMENTS (unreal_sizes)
                                                : TG_N_ELEMENTS (unity_sizes);
  const char *engine = o->tile_files == TG_TILE_FILES_UNREAL ? "Unreal" : "Unity";
  int w = p->full.full_w - 1, h = p->full.full_h - 1, best = 0;
  bool allowed = false;

  for (int i = 0; i < n; i++)
    {
      int q = sizes[i] - 1;
      if (o->tile_size == sizes[i])
        allowed = true;
      if (o->tile_size == 0 && w % q == 0 && h % q == 0)
        {
          if (best == 0)
            best = sizes[i];
          /* The plan's own tiles, when they fit, keep the files its size. */
          if (w / q == p->nx)
            {
              best = sizes[i];
              break;
            }
        }
    }
  if (o->tile_size != 0)
    {
      if (!allowed)
        return tg_error_set (err, TG_ERANGE, "", "--tile-size %d is not a size %s accepts",
                             o->tile_size, engine);
      if (w % (o->tile_size - 1) || h % (o->tile_size - 1))
        return tg_error_set (err, TG_ERANGE, "",
                             "--tile-size %d does not tile a %dx%d world with shared edges: "
                             "it needs (samples - 1) a multiple of %d",
                             o->tile_size, p->full.full_w, p->full.full_h, o->tile_size - 1);
      return o->tile_size;
    }
  if (best == 0)
    {
      int q = sizes[n > 3 ? 3 : 0] - 1, lo = (w / q > 0 ? w / q : 1) * q + 1;
      return tg_error_set (err, TG_ERANGE, "",
                           "no tile size %s accepts tiles a %dx%d world with shared edges; "
                           "a resolution of k x %d + 1 (e.g. %d or %d) does",
                           engine, p->full.full_w, p->full.full_h, q, lo, lo + q);
    }
  return best;
}

/* The name of tile (I, J) of PATH: "dir/height_x1_y0.png". */
static char *
tile_file_name (const char *path, TgTileFiles kind, int i, int j)
{
  const char *slash = strrchr (path, '/'), *dot = strrchr (path, '.');
  size_t stem = dot && (!slash || dot > slash) ? (size_t) (dot - path) : strlen (path);
  size_t n = stem + 64;
  char *out = malloc (n);

  if (!out)
    return NULL;
  snprintf (out, n, "%.*s_x%d_%c%d%s", (int) stem, path, i, kind == TG_TILE_FILES_UNITY ? 'z' : 'y',
            j, dot && (!slash || dot > slash) ? dot : "");
  return out;
}

/* Image K as per-tile files of SIZE samples sharing their edges. */
static int
stitch_tile_files (const char *dir, const TgPlan *p, const JobManifest *tiles, int k,
                   const TgStitchOptions *o, int size, TgExportList *l,
                   TgError *err)
{
  const JobFile *f = &tiles[0].files[k];
  int kx = (p->full.full_w - 1) / (size - 1), ky = (p->full.full_h - 1) / (size - 1), rc = 0;
  /* Unity reads a terrain tile's heights from RAW16, south first: a raw16
   * export becomes that whatever its rows; other images stay as they are. */
  bool unity_raw = o->tile_files == TG_TILE_FILES_UNITY && strcmp (f->format, "raw16") == 0;

  for (int ty = 0; ty < ky && rc == 0; ty++)
    for (int tx = 0; tx < kx && rc == 0; tx++)
      {
        TgImage img;
        bool south_first = false;
        /* Unity counts terrain rows from the south. */
        int j = o->tile_files == TG_TILE_FILES_UNITY ? ky - 1 - ty : ty;
        char *name;
        rc = read_window (dir, p, tiles, k, tx * (size - 1), ty * (size - 1), size, size, &img,
                          &south_first, err);
        if (rc < 0)
          break;
        if (unity_raw || south_first)
          flip_rows (&img);
        img.south_first = unity_raw || south_first;
        name = tile_file_name (f->path, o->tile_files, tx, j);
        if (rc == 0 && !name)
          rc = tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
        if (rc == 0)
          {
            TgImageRows rows;
            tg__image_rows_from (&rows, &img);
            rc = stage_rows (l,
                             &(TgExportFile) { .path = name, .format = f->format,
                                               .node_id = f->node, .width = rows.width,
                                               .height = rows.height,
                                               .south_first = img.south_first,
                                               .channel_names
                                               = (const char *const *) f->channels,
                                               .n_channel_names = f->n_channels,
                                               .lattice_w = p->full.full_w,
                                               .col0 = tx * (size - 1),
                                               .row0 = ty * (size - 1) },
                             &rows, err);
          }
        free (name);
        tg_image_clear (&img);
      }
  return rc;
}

static int
copy_whole_file (const char *dir, const JobFile *f, TgExportList *l, TgError *err)
{
  char path[4300], buf[1 << 16];
  FILE *in, *out;
  size_t n;
  int rc = 0, close_rc;

  snprintf (path, sizeof path, "%s/whole/%s", dir, f->file);
  if (!(in = fopen (path, "rb")))
    return tg_error_set (err, TG_EIO, "", TG_MSG_CANNOT_READ_FILE, path, strerror (errno));
  out = tg_export_list_stage (l,
                              &(TgExportFile) { .path = f->path, .format = f->format,
                                                .node_id = f->node, .width = f->width,
                                                .height = f->height },
                              err);
  if (!out)
    {
      fclose (in);
      return err->code ? err->code : TG_EIO;
    }
  /* A short write leaves the stream's error for close to report. */
  while ((n = fread (buf, 1, sizeof buf, in)) > 0 && fwrite (buf, 1, n, out) == n)
    ;
  if (ferror (in))
    rc = tg_error_set (err, TG_EIO, "", TG_MSG_CANNOT_READ_FILE, path, strerror (errno));
  fclose (in);
  close_rc = tg_export_list_close_stream (l, out, f->path, err);
  return close_rc < 0 ? close_rc : rc;
}

/* Every tile must list the same files from the same nodes. */
static int
check_same_files (const TgPlan *p, const JobManifest *tiles, TgError *err)
{
  for (int t = 1; t < p->nx * p->ny; t++)
    {
      bool same = tiles[t].n == tiles[0].n;
      for (int k = 0; same && k < tiles[0].n; k++)
        same = strcmp (tiles[t].files[k].path, tiles[0].files[k].path) == 0
               && strcmp (tiles[t].files[k].format, tiles[0].files[k].format) == 0
               && strcmp (tiles[t].files[k].node, tiles[0].files[k].node) == 0;
      if (!same)
        return tg_error_set (err, TG_EINVAL, "", "tile %d,%d lists other files than tile 0,0",
                             t % p->nx, t / p->nx);
    }
  return 0;
}

int
tg_stitch (const char *dir, const char *out_dir, const TgStitchOptions *opts,
           const TgCancel *cancel, void (*progress) (void *user, int done, int total),
           void *user, TgExportList **list, TgError *err)
{
  TgStitchOptions none = { 0 };
  int size = 0;
  TgPlanInfo info;
  TgPlan p = { 0 };
  TgGraph *g = NULL;
  JobManifest *tiles = NULL, whole = { 0 };
  TgExportList *l = NULL;
  char path[4300];
  const TgStage *st;
  int rc, n_tiles = 0, done = 0, total;

  if (list)
    *list = NULL;
  /* The manifest records the name plan.json carries: checked before any
   * tile is read, not after the stitch. */
  if ((rc = tg__plan_info_read (dir, &info, err)) < 0 || (rc = tg__plan_check_graph (dir, &info, err)) < 0
      || (rc = tg_graph_name_check (info.graph_name, err)) < 0)
    return rc;
  snprintf (path, sizeof path, "%s/%s", dir, TG__PLAN_GRAPH);
  if ((rc = tg_tgraph_load_file (path, &g, err)) < 0)
    return rc;
  if ((rc = tg_plan_make (g, info.nx, info.ny, &p, err)) < 0)
    goto out;
  st = &p.stages[p.n_stages - 1];
  n_tiles = st->tiles ? p.nx * p.ny : 0;
  tiles = calloc ((size_t) (n_tiles ? n_tiles : 1), sizeof *tiles);
  if (!tiles)
    {
      rc = tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
      goto out;
    }
  /* Every check first: nothing is written for a build with a missing or
   * stale part. */
  for (int t = 0; t < n_tiles && rc == 0; t++)
    {
      char job_dir[4300], what[64];
      snprintf (job_dir, sizeof job_dir, "%s/tiles/%d_%d", dir, t % p.nx, t / p.nx);
      snprintf (what, sizeof what, "tile %d,%d", t % p.nx, t / p.nx);
      rc = job_manifest_read (job_dir, what, &info, p.n_stages - 1, &tiles[t], err);
    }
  if (rc == 0 && n_tiles)
    rc = check_same_files (&p, tiles, err);
  if (rc == 0 && st->whole)
    {
      snprintf (path, sizeof path, "%s/whole", dir);
      rc = job_manifest_read (path, "the whole-world job", &info, p.n_stages - 1, &whole, err);
    }
  if (!opts)
    opts = &none;
  if (rc == 0 && opts->tile_files != TG_TILE_FILES_NONE && n_tiles)
    rc = (size = tile_file_size (opts, &p, err)) < 0 ? size : 0;
  if (rc < 0)
    goto out;

  if ((rc = tg__mkdir_p (out_dir, err)) == 0 && (l = tg_export_list_new (out_dir, err)) == NULL)
    rc = err->code;
  total = (n_tiles ? tiles[0].n : 0) + whole.n;
  for (int k = 0; rc == 0 && n_tiles && k < tiles[0].n; k++)
    {
      if (cancel && tg_cancel_is_requested (cancel))
        rc = tg_error_set (err, TG_ECANCELLED, "", TG_MSG_CANCELLED);
      else if (size > 0)
        rc = stitch_tile_files (dir, &p, tiles, k, opts, size, l, err);
      else
        rc = stitch_image (dir, &p, tiles, k, l, err);
      if (progress && rc == 0)
        progress (user, ++done, total);
    }
  for (int k = 0; rc == 0 && k < whole.n; k++)
    {
      rc = copy_whole_file (dir, &whole.files[k], l, err);
      if (progress && rc == 0)
        progress (user, ++done, total);
    }
  if (rc == 0)
    rc = tg__build_commit (l, g, info.graph_name[0] ? info.graph_name : NULL, cancel, err);
  if (rc == 0 && list)
    *list = l;
  else
    tg_export_list_free (l);
out:
  for (int t = 0; tiles && t < n_tiles; t++)
    job_manifest_clear (&tiles[t]);
  free (tiles);
  job_manifest_clear (&whole);
  tg_plan_clear (&p);
  tg_graph_free (g);
  return rc;
}
