/* Tiled builds, part three: one job of a plan, and the store it reads
 * earlier stages' results from.
 *
 * Every file a job writes carries the graph's SHA-256 and appears by
 * rename only when complete, so a killed job leaves nothing a later job
 * or the stitch would take, and a file from another graph is refused.
 *
 *   store/nNODE/oOUTPUT/IX_IY.grid   a global node's output over one tile
 *   store/nNODE/b/IX_IY.NAME         a tiled scheme's blob (r.NAME: its reduce)
 *   tiles/IX_IY/, whole/             export jobs' files, listed in job.json
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan-private.h"
#include "tgformats-private.h"

static const char grid_magic[8] = { 'T', 'G', 'G', 'R', 'I', 'D', '1', '\n' };
static const char blob_magic[8] = { 'T', 'G', 'B', 'L', 'O', 'B', '1', '\n' };

/* --- files ----------------------------------------------------------------- */

int
tg__mkdir_p (const char *path, TgError *err)
{
  char buf[4096];
  size_t n = strlen (path);

  if (n >= sizeof buf)
    return tg_error_set (err, TG_EPATH, "", "path too long: %s", path);
  memcpy (buf, path, n + 1);
  for (size_t i = 1; i <= n; i++)
    if (buf[i] == '/' || buf[i] == '\0')
      {
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir (buf, 0777) != 0 && errno != EEXIST)
          return tg_error_set (err, TG_EIO, "", "cannot create the folder %s: %s", buf,
                               strerror (errno));
        buf[i] = c;
      }
  return 0;
}

/* Removes this host's temporaries of dead jobs from DIR (a job killed
 * while writing leaves one), once per folder in a row: a job writes its
 * tiles of one output into one folder. */
static void
remove_stale_once (const char *dir)
{
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static char last[4096];
  int fd;

  pthread_mutex_lock (&lock);
  if (strcmp (last, dir) != 0)
    {
      snprintf (last, sizeof last, "%s", dir);
      fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd >= 0)
        {
          tg_temp_remove_stale (fd);
          close (fd);
        }
    }
  pthread_mutex_unlock (&lock);
}

int
tg__write_parts_atomic (const char *path, const TgPart *parts, int n_parts, TgError *err)
{
  char tmp[4200], dir[4096];
  const char *slash = strrchr (path, '/');
  int fd, rc = 0;

  if (slash && (size_t) (slash - path) < sizeof dir)
    {
      memcpy (dir, path, (size_t) (slash - path));
      dir[slash - path] = '\0';
      if ((rc = tg__mkdir_p (dir, err)) < 0)
        return rc;
      remove_stale_once (dir);
    }
  if (tg_temp_name (tmp, sizeof tmp, path) < 0)
    return tg_error_set (err, TG_EPATH, "", "path too long: %s", path);
  fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0)
    return tg_error_set (err, TG_EIO, "", "cannot create %s: %s", tmp, strerror (errno));
  for (int k = 0; k < n_parts && rc == 0; k++)
    {
      const char *p = parts[k].data;
      size_t left = parts[k].size;
      while (left > 0 && rc == 0)
        {
          ssize_t w = write (fd, p, left);
          if (w < 0 && errno == EINTR)
            continue;
          if (w <= 0)
            rc = tg_error_set (err, TG_EIO, "", "cannot write %s: %s", path,
                               w < 0 ? strerror (errno) : "short write");
          else
            {
              p += w;
              left -= (size_t) w;
            }
        }
    }
  if (rc == 0 && fsync (fd) != 0)
    rc = tg_error_set (err, TG_EIO, "", "cannot write %s: %s", path, strerror (errno));
  if (close (fd) != 0 && rc == 0)
    rc = tg_error_set (err, TG_EIO, "", "cannot write %s: %s", path, strerror (errno));
  if (rc == 0 && rename (tmp, path) != 0)
    rc = tg_error_set (err, TG_EIO, "", "cannot write %s: %s", path, strerror (errno));
  if (rc < 0)
    unlink (tmp);
  return rc;
}

static void
tile_tag (char *buf, size_t size, int ix, int iy)
{
  if (ix < 0)
    snprintf (buf, size, "r");
  else
    snprintf (buf, size, "%d_%d", ix, iy);
}

/* --- the store ------------------------------------------------------------- */

static bool
store_has (void *user, int node)
{
  const TgDirStore *s = user;
  int after = s->plan->stored_after[node];

  return after >= 0 && after < s->stage;
}

/* The tile whose samples along N (in NT tiles) include X. */
static int
tile_of (int n, int nt, int x)
{
  int i = (int) (((int64_t) x * nt) / n);

  while (i > 0 && tg_tile_start (n, nt, i) > x)
    i--;
  while (i + 1 < nt && tg_tile_start (n, nt, i + 1) <= x)
    i++;
  return i;
}

static int
clampi (int v, int lo, int hi)
{
  return v < lo ? lo : v > hi ? hi : v;
}

typedef struct
{
  int fd;
  int32_t head[6]; /* col0, row0, width, height, channels, names */
  off_t data_at;
  char **names;
} GridFile;

static void
grid_file_close (GridFile *f)
{
  if (f->fd >= 0)
    close (f->fd);
  for (int k = 0; f->names && k < f->head[5]; k++)
    free (f->names[k]);
  free (f->names);
  memset (f, 0, sizeof *f);
  f->fd = -1;
}

static int
read_exact (int fd, void *buf, size_t n, off_t at)
{
  char *p = buf;

  while (n > 0)
    {
      ssize_t r = pread (fd, p, n, at);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        return -1;
      p += r;
      n -= (size_t) r;
      at += r;
    }
  return 0;
}

/* Opens the tile file of NODE's output K for tile (IX, IY) and checks it
 * belongs to this graph and this tile. */
static int
grid_file_open (const TgDirStore *s, int node, int k, int ix, int iy, GridFile *f, TgError *err)
{
  char path[4300];
  uint8_t sha[32];
  char magic[8];
  off_t at = sizeof grid_magic + sizeof sha + sizeof f->head;
  TgTiling t = { s->plan->nx, s->plan->ny, ix, iy };
  TgRegion win = tg_tiling_window (&t, &s->plan->full, ix, iy);

  memset (f, 0, sizeof *f);
  snprintf (path, sizeof path, "%s/store/n%d/o%d/%d_%d.grid", s->dir, node, k, ix, iy);
  f->fd = open (path, O_RDONLY | O_CLOEXEC);
  if (f->fd < 0)
    return tg_error_set (err, TG_EMISSING, "", "%s is missing: run the stage that writes it first",
                         path);
  if (read_exact (f->fd, magic, sizeof magic, 0) < 0 || memcmp (magic, grid_magic, sizeof magic)
      || read_exact (f->fd, sha, sizeof sha, sizeof magic) < 0
      || read_exact (f->fd, f->head, sizeof f->head, sizeof magic + sizeof sha) < 0)
    {
      grid_file_close (f);
      return tg_error_set (err, TG_EPARSE, "", "%s is not a tile of the plan's store", path);
    }
  if (memcmp (sha, s->sha, sizeof sha) != 0)
    {
      grid_file_close (f);
      return tg_error_set (err, TG_EINVAL, "", "%s was written for another graph", path);
    }
  if (f->head[0] != win.col0 || f->head[1] != win.row0 || f->head[2] != win.width
      || f->head[3] != win.height || f->head[4] < 1 || f->head[4] > 64 || f->head[5] < 0
      || f->head[5] > f->head[4])
    {
      f->head[5] = 0;
      grid_file_close (f);
      return tg_error_set (err, TG_EPARSE, "", "%s does not hold tile %d,%d", path, ix, iy);
    }
  f->names = calloc ((size_t) f->head[5] + 1, sizeof (char *));
  for (int q = 0; f->names && q < f->head[5]; q++)
    {
      int32_t len;
      if (read_exact (f->fd, &len, sizeof len, at) < 0 || len < 0 || len > 4096
          || (f->names[q] = calloc ((size_t) len + 1, 1)) == NULL
          || read_exact (f->fd, f->names[q], (size_t) len, at + (off_t) sizeof len) < 0)
        {
          grid_file_close (f);
          return tg_error_set (err, TG_EPARSE, "", "%s: damaged channel names", path);
        }
      at += (off_t) sizeof len + len;
    }
  f->data_at = at;
  return 0;
}

/* NODE's output K over REGION, from the tiles that cover it; samples
 * outside the world repeat the edge, as a whole-world result windowed
 * with its edges clamped would. */
static TgValue *store_get_grid (const TgDirStore *s, int node, int k, const TgRegion *region,
                                TgError *err);

/* A mesh or instance list from every tile's share, joined by the node's
 * scheme into the whole-world value. */
static TgValue *
store_get_joined (const TgDirStore *s, int node, int k, TgError *err)
{
  const TgNodeDesc *d = tg_graph_node_desc (s->g, node);
  int n = s->plan->nx * s->plan->ny;
  TgValue **parts = calloc ((size_t) n, sizeof *parts), *v = NULL;
  TgTiling t = { s->plan->nx, s->plan->ny, -1, -1 };
  void *params = NULL;
  bool ok = parts != NULL;

  for (int q = 0; ok && q < n; q++)
    {
      char path[4300];
      snprintf (path, sizeof path, "%s/store/n%d/o%d/%d_%d.part", s->dir, node, k, q % t.nx,
                q / t.nx);
      ok = (parts[q] = tg__store_read_value (path, s->sha, d->outputs[k].type, err)) != NULL;
    }
  if (ok)
    {
      params = calloc (1, d->params_size ? d->params_size : 1);
      for (int q = 0; params && q < d->n_params; q++)
        tg_param_value_store (&d->params[q], tg_graph_get_param_at (s->g, node, q), params);
      v = params ? d->tiled->join (params, &s->plan->full, &t, k, parts, err) : NULL;
      if (params)
        tg_params_struct_clear (d->params, d->n_params, params);
      free (params);
    }
  else if (!parts)
    tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
  for (int q = 0; parts && q < n; q++)
    tg_value_unref (parts[q]);
  free (parts);
  return v;
}

static TgValue *
store_get (void *user, int node, int k, const TgRegion *region, TgError *err)
{
  const TgDirStore *s = user;
  const TgNodeDesc *d = tg_graph_node_desc (s->g, node);

  if (!tg_port_type_is_grid (d->outputs[k].type))
    return store_get_joined (s, node, k, err);
  return store_get_grid (s, node, k, region, err);
}

static TgValue *
store_get_grid (const TgDirStore *s, int node, int k, const TgRegion *region, TgError *err)
{
  const TgRegion *full = &s->plan->full;
  const TgNodeDesc *d = tg_graph_node_desc (s->g, node);
  int nx = s->plan->nx, ny = s->plan->ny;
  int cc0 = clampi (region->col0, 0, full->full_w - 1);
  int cc1 = clampi (region->col0 + region->width - 1, 0, full->full_w - 1);
  int rr0 = clampi (region->row0, 0, full->full_h - 1);
  int rr1 = clampi (region->row0 + region->height - 1, 0, full->full_h - 1);
  int ix0 = tile_of (full->full_w, nx, cc0), ix1 = tile_of (full->full_w, nx, cc1);
  int iy0 = tile_of (full->full_h, ny, rr0), iy1 = tile_of (full->full_h, ny, rr1);
  int ntx = ix1 - ix0 + 1, nty = iy1 - iy0 + 1, ch = 0;
  GridFile *files = calloc ((size_t) (ntx * nty), sizeof *files);
  float *seg = NULL;
  TgValue *v = NULL;
  int rc = 0;

  if (files == NULL)
    {
      tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
      return NULL;
    }
  for (int q = 0; q < ntx * nty; q++)
    files[q].fd = -1;
  for (int q = 0; q < ntx * nty && rc == 0; q++)
    {
      rc = grid_file_open (s, node, k, ix0 + q % ntx, iy0 + q / ntx, &files[q], err);
      if (rc == 0 && q > 0 && files[q].head[4] != files[0].head[4])
        rc = tg_error_set (err, TG_EPARSE, "", "node %d: tiles disagree on channels", node);
    }
  if (rc == 0)
    {
      ch = files[0].head[4];
      v = tg_value_new_grid (d->outputs[k].type, region, ch);
      seg = malloc (sizeof (float) * (size_t) ch * (size_t) (cc1 - cc0 + 1));
      if (v == NULL || seg == NULL)
        rc = tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
      for (int c = 0; rc == 0 && c < files[0].head[5]; c++)
        if (tg_value_set_channel_name (v, c, files[0].names[c]) < 0)
          rc = tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
    }
  for (int j = 0; rc == 0 && j < region->height; j++)
    {
      int wr = clampi (region->row0 + j, 0, full->full_h - 1), iy = tile_of (full->full_h, ny, wr);
      float *dst = tg_value_row (v, j);
      for (int ix = ix0; ix <= ix1 && rc == 0; ix++)
        {
          GridFile *f = &files[(iy - iy0) * ntx + (ix - ix0)];
          int a = f->head[0] > cc0 ? f->head[0] : cc0;
          int b = f->head[0] + f->head[2] - 1 < cc1 ? f->head[0] + f->head[2] - 1 : cc1;
          off_t at = f->data_at + (off_t) sizeof (float) * ch
                                      * ((off_t) (wr - f->head[1]) * f->head[2] + (a - f->head[0]));
          if (read_exact (f->fd, seg, sizeof (float) * (size_t) ch * (size_t) (b - a + 1), at) < 0)
            {
              rc = tg_error_set (err, TG_EPARSE, "", "node %d: tile %d,%d is truncated", node, ix,
                                 iy);
              break;
            }
          for (int i = 0; i < region->width; i++)
            {
              int wc = clampi (region->col0 + i, 0, full->full_w - 1);
              if (wc >= a && wc <= b)
                memcpy (dst + (size_t) i * ch, seg + (size_t) (wc - a) * ch, sizeof (float) * ch);
            }
        }
    }
  for (int q = 0; q < ntx * nty; q++)
    grid_file_close (&files[q]);
  free (files);
  free (seg);
  if (rc < 0)
    {
      tg_value_unref (v);
      return NULL;
    }
  return v;
}

static int
blob_path (const TgDirStore *s, int node, int ix, int iy, const char *name, char *path,
           size_t size, TgError *err)
{
  char tag[32];

  for (const char *c = name; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')
          || *c == '_' || *c == '-' || *c == '.'))
      return tg_error_set (err, TG_EINVAL, "", "blob name \"%s\": letters, digits, _ - . only",
                           name);
  if (name[0] == '\0' || name[0] == '.')
    return tg_error_set (err, TG_EINVAL, "", "blob name \"%s\" is not allowed", name);
  tile_tag (tag, sizeof tag, ix, iy);
  snprintf (path, size, "%s/store/n%d/b/%s.%s", s->dir, node, tag, name);
  return 0;
}

static int
store_blob_put (void *user, int node, int ix, int iy, const char *name, const void *data,
                size_t size, TgError *err)
{
  const TgDirStore *s = user;
  char path[4300];
  int rc = blob_path (s, node, ix, iy, name, path, sizeof path, err);
  TgPart parts[3] = { { blob_magic, sizeof blob_magic }, { s->sha, sizeof s->sha }, { data, size } };

  return rc < 0 ? rc : tg__write_parts_atomic (path, parts, 3, err);
}

static int
store_blob_get (void *user, int node, int ix, int iy, const char *name, void **data,
                size_t *size, TgError *err)
{
  const TgDirStore *s = user;
  char path[4300], *text = NULL;
  size_t len = 0, head = sizeof blob_magic + sizeof s->sha;
  int rc = blob_path (s, node, ix, iy, name, path, sizeof path, err);

  if (rc < 0)
    return rc;
  if (access (path, F_OK) != 0)
    return tg_error_set (err, TG_EMISSING, "", "%s is missing: run the stage that writes it first",
                         path);
  if ((rc = tg__read_file (path, &text, &len, err)) < 0)
    return rc;
  if (len < head || memcmp (text, blob_magic, sizeof blob_magic) != 0)
    rc = tg_error_set (err, TG_EPARSE, "", "%s is not a blob of the plan's store", path);
  else if (memcmp (text + sizeof blob_magic, s->sha, sizeof s->sha) != 0)
    rc = tg_error_set (err, TG_EINVAL, "", "%s was written for another graph", path);
  if (rc < 0)
    {
      free (text);
      return rc;
    }
  memmove (text, text + head, len - head);
  *data = text;
  *size = len - head;
  return 0;
}

/* A blob already gone is no error: the rerun of a job that dropped it
 * before it failed drops it again. */
static int
store_blob_drop (void *user, int node, int ix, int iy, const char *name, TgError *err)
{
  const TgDirStore *s = user;
  char path[4300];
  int rc = blob_path (s, node, ix, iy, name, path, sizeof path, err);

  if (rc < 0)
    return rc;
  if (unlink (path) != 0 && errno != ENOENT)
    return tg_error_set (err, TG_EIO, "", "cannot remove %s: %s", path, strerror (errno));
  return 0;
}

void
tg__dir_store_init (TgDirStore *s, const char *dir, const TgGraph *g, const TgPlan *p,
                    const uint8_t sha[32], int stage)
{
  memset (s, 0, sizeof *s);
  s->dir = dir;
  s->g = g;
  s->plan = p;
  s->stage = stage;
  memcpy (s->sha, sha, 32);
  s->store.user = s;
  s->store.has = store_has;
  s->store.get = store_get;
  s->store.blob_put = store_blob_put;
  s->store.blob_get = store_blob_get;
  s->store.blob_drop = store_blob_drop;
}

/* Writes V (a window of NODE's output K) as the tile files it covers. */
static int
store_put_grid (const TgDirStore *s, int node, int k, const TgValue *v, int ix, int iy,
                TgError *err)
{
  TgTiling t = { s->plan->nx, s->plan->ny, ix, iy };
  TgRegion win = tg_tiling_window (&t, &s->plan->full, ix, iy);
  TgValue *tile = tg_region_equal (&win, &v->region) ? tg_value_ref ((TgValue *) v)
                                                      : tg_value_crop (v, &win);
  int32_t head[6];
  TgPart parts[4 + 2 * 64];
  int32_t lens[64];
  int n = 0, rc;
  char path[4300];

  if (tile == NULL)
    return tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
  head[0] = win.col0;
  head[1] = win.row0;
  head[2] = win.width;
  head[3] = win.height;
  head[4] = tile->channels;
  head[5] = tile->channel_names ? tile->channels : 0;
  if (head[4] > 64)
    {
      tg_value_unref (tile);
      return tg_error_set (err, TG_ERANGE, "", "node %d: more than 64 channels", node);
    }
  parts[n++] = (TgPart) { grid_magic, sizeof grid_magic };
  parts[n++] = (TgPart) { s->sha, sizeof s->sha };
  parts[n++] = (TgPart) { head, sizeof head };
  for (int c = 0; c < head[5]; c++)
    {
      const char *name = tile->channel_names[c] ? tile->channel_names[c] : "";
      lens[c] = (int32_t) strlen (name);
      parts[n++] = (TgPart) { &lens[c], sizeof lens[c] };
      parts[n++] = (TgPart) { name, (size_t) lens[c] };
    }
  parts[n++] = (TgPart) { tile->data, sizeof (float) * tg_region_samples (&win) * tile->channels };
  snprintf (path, sizeof path, "%s/store/n%d/o%d/%d_%d.grid", s->dir, node, k, ix, iy);
  rc = tg__write_parts_atomic (path, parts, n, err);
  tg_value_unref (tile);
  return rc;
}

/* --- job manifests --------------------------------------------------------------- */

/* Stages job.json into L: the graph, the job, and every file with its hash. */
static int
stage_job_manifest (TgExportList *l, const char *sha_hex, int stage, int ix, int iy,
                    const TgCancel *cancel, TgError *err)
{
  json_object *root = json_object_new_object (), *files = json_object_new_array ();
  TgBuf b;
  char *text;
  FILE *f;
  int rc = 0;

  if (!root || !files)
    {
      json_object_put (root);
      json_object_put (files);
      return tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
    }
  json_object_object_add (root, "graph_sha256", json_object_new_string (sha_hex));
  json_object_object_add (root, "stage", json_object_new_int (stage));
  if (ix >= 0)
    {
      json_object *t = json_object_new_array ();
      json_object_array_add (t, json_object_new_int (ix));
      json_object_array_add (t, json_object_new_int (iy));
      json_object_object_add (root, "tile", t);
    }
  else
    json_object_object_add (root, "tile", NULL);
  for (int i = 0; i < tg_export_list_n_files (l) && rc == 0; i++)
    {
      const TgExportFile *ef = tg_export_list_file (l, i);
      json_object *o = json_object_new_object ();
      char hex[65], *path = strdup (ef->path);
      uint64_t bytes = 0;
      size_t n = path ? strlen (path) : 0;
      if (!o || !path)
        rc = tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
      if (rc == 0)
        rc = tg__sha256_staged (l, i, cancel, hex, &bytes, err);
      if (rc == 0 && ix >= 0 && n > 5 && strcmp (path + n - 5, ".tile") == 0)
        path[n - 5] = '\0';
      if (rc == 0)
        {
          json_object_object_add (o, "path", json_object_new_string (path));
          json_object_object_add (o, "file", json_object_new_string (ef->path));
          /* As the manifest says it: stitch encodes the tiles again with it. */
          const char *compression, *format = tg__writer_format (ef->format ? ef->format : "",
                                                                &compression);
          json_object_object_add (o, "format", json_object_new_string (format));
          if (compression)
            json_object_object_add (o, "compression", json_object_new_string (compression));
          json_object_object_add (o, "node", json_object_new_string (ef->node_id ? ef->node_id : ""));
          json_object_object_add (o, "width", json_object_new_int (ef->width));
          json_object_object_add (o, "height", json_object_new_int (ef->height));
          if (ef->n_channel_names > 0)
            {
              json_object *names = json_object_new_array ();
              for (int k = 0; k < ef->n_channel_names; k++)
                json_object_array_add (names, json_object_new_string (ef->channel_names[k]));
              json_object_object_add (o, "channels", names);
            }
          json_object_object_add (o, "bytes", json_object_new_int64 ((int64_t) bytes));
          json_object_object_add (o, "sha256", json_object_new_string (hex));
          json_object_array_add (files, o);
          o = NULL;
        }
      json_object_put (o);
      free (path);
    }
  json_object_object_add (root, "files", files);
  if (rc < 0)
    {
      json_object_put (root);
      return rc;
    }
  tg__buf_init (&b);
  tg__json_emit (&b, root, 0);
  tg__buf_putc (&b, '\n');
  json_object_put (root);
  text = tg__buf_steal (&b);
  if (text == NULL)
    return tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
  f = tg_export_list_stage (l, &(TgExportFile) { .path = TG__JOB_MANIFEST, .format = "json" },
                            err);
  if (f == NULL)
    rc = err->code ? err->code : TG_EIO;
  else
    {
      fputs (text, f);
      rc = tg_export_list_close_stream (l, f, TG__JOB_MANIFEST, err);
    }
  free (text);
  return rc;
}

/* --- running a job ---------------------------------------------------------------- */

static int
run_export_job (TgEngine *e, const TgGraph *g, const TgDirStore *ds, const char *sha_hex,
                int stage, int ix, int iy, const TgEvalHooks *hooks, TgEvalReport *report,
                TgError *err)
{
  TgTiling t = { ds->plan->nx, ds->plan->ny, ix, iy };
  TgEvalHooks h = *hooks;
  TgExportList *l;
  char out[4300];
  int rc;

  if (ix >= 0)
    snprintf (out, sizeof out, "%s/tiles/%d_%d", ds->dir, ix, iy);
  else
    snprintf (out, sizeof out, "%s/whole", ds->dir);
  if ((rc = tg__mkdir_p (out, err)) < 0)
    return rc;
  h.store = &ds->store;
  h.tiling = &t;
  rc = tg_engine_export (e, g, out, &h, &l, report, err);
  if (rc < 0)
    return rc;
  /* A rerun replaces the job's manifest last: until then the old one
   * still matches the old files, which are only replaced by rename. */
  rc = stage_job_manifest (l, sha_hex, stage, ix, iy, hooks->cancel, err);
  /* Synced here, commit's own sync has nothing left a cancel waits for. */
  for (int i = 0; rc == 0 && i < tg_export_list_n_files (l); i++)
    rc = tg_export_list_sync (l, i, hooks->cancel, err);
  if (rc == 0 && hooks->cancel && tg_cancel_is_requested (hooks->cancel))
    rc = tg_error_set (err, TG_ECANCELLED, "", TG_MSG_CANCELLED);
  if (rc == 0)
    rc = tg_export_list_commit (l, err);
  tg_export_list_free (l);
  return rc;
}

int
tg_plan_run_job (TgEngine *e, const TgGraph *g, const char *dir, int nx, int ny, int stage,
                 int tile_x, int tile_y, const TgEvalHooks *hooks, TgEvalReport *report,
                 TgError *err)
{
  int job;
  TgPlanInfo info;
  TgPlan p;
  TgDirStore ds;
  TgEvalHooks none = { 0 };
  const TgStage *st;
  int rc, ix, iy;

  if (!hooks)
    hooks = &none;
  if ((rc = tg__plan_info_read (dir, &info, err)) < 0)
    return rc;
  if ((rc = tg__plan_check_graph (dir, &info, err)) < 0)
    return rc;
  if (info.nx != nx || info.ny != ny)
    return tg_error_set (err, TG_EINVAL, "", "the plan in %s has %d,%d tiles, not %d,%d", dir,
                         info.nx, info.ny, nx, ny);
  if ((rc = tg_plan_make (g, info.nx, info.ny, &p, err)) < 0)
    return rc;
  if (stage < 0 || stage >= p.n_stages)
    {
      rc = tg_error_set (err, TG_ERANGE, "", "stage %d: the plan has stages 0..%d", stage,
                         p.n_stages - 1);
      goto out;
    }
  st = &p.stages[stage];
  if (st->kind == TG_STAGE_STEP || st->kind == TG_STAGE_STORE
      || (st->kind == TG_STAGE_EXPORT && st->tiles && tile_x >= 0))
    job = tile_x >= 0 ? tile_y * nx + tile_x : -1;
  else if (tile_x >= 0)
    job = -1;
  else
    job = st->n_jobs - 1;
  if (job < 0)
    {
      rc = tg_error_set (err, TG_EINVAL, "", "stage %d (%s) %s", stage,
                         st->kind == TG_STAGE_STEP    ? "a step"
                         : st->kind == TG_STAGE_STORE ? "a store stage"
                                                      : "one job",
                         tile_x >= 0 ? "has no tiles: leave out --tile" : "needs --tile IX,IY");
      goto out;
    }
  tg_plan_job_tile (&p, stage, job, &ix, &iy);
  tg__dir_store_init (&ds, dir, g, &p, info.sha, stage);
  switch (st->kind)
    {
    case TG_STAGE_STEP:
    case TG_STAGE_REDUCE:
      {
        const TgNodeDesc *d = tg_graph_node_desc (g, st->node);
        TgTiling t = { p.nx, p.ny, ix, iy };
        TgEvalHooks h = *hooks;
        TgValue *outs[16] = { 0 };
        bool last = st->kind == TG_STAGE_STEP && stage == p.stored_after[st->node];
        h.store = &ds.store;
        h.tiling = &t;
        rc = tg_engine_tile_step (e, g, st->node, st->step, st->kind == TG_STAGE_REDUCE, &h,
                                  last ? outs : NULL, report, err);
        for (int k = 0; rc == 0 && last && k < d->n_outputs && k < 16; k++)
          if (tg_port_type_is_grid (outs[k]->type))
            rc = store_put_grid (&ds, st->node, k, outs[k], ix, iy, err);
          else
            {
              char path[4300];
              snprintf (path, sizeof path, "%s/store/n%d/o%d/%d_%d.part", dir, st->node, k, ix, iy);
              rc = tg__store_write_value (path, info.sha, outs[k], err);
            }
        for (int k = 0; k < 16; k++)
          tg_value_unref (outs[k]);
        break;
      }
    case TG_STAGE_NODE:
    case TG_STAGE_STORE:
      {
        /* One evaluation for all outputs: a job's engine keeps no results
         * between pulls.  A NODE job cuts the whole world into every tile,
         * a STORE job computes its tile. */
        const TgNodeDesc *d = tg_graph_node_desc (g, st->node);
        TgTiling t = { p.nx, p.ny, ix, iy };
        TgRegion win = st->kind == TG_STAGE_STORE ? tg_tiling_window (&t, &p.full, ix, iy) : p.full;
        TgEvalHooks h = *hooks;
        TgValue *outs[64] = { 0 };
        h.store = &ds.store;
        if (d->n_outputs > 64)
          rc = tg_error_set (err, TG_ERANGE, "", "node %d: more than 64 outputs", st->node);
        else
          rc = tg_engine_pull_outputs (e, g, st->node, &win, &h, outs, report, err);
        for (int k = 0; rc == 0 && k < d->n_outputs; k++)
          if (st->kind == TG_STAGE_STORE)
            rc = store_put_grid (&ds, st->node, k, outs[k], ix, iy, err);
          else
            for (int q = 0; rc == 0 && q < p.nx * p.ny; q++)
              rc = store_put_grid (&ds, st->node, k, outs[k], q % p.nx, q / p.nx, err);
        for (int k = 0; k < 64; k++)
          tg_value_unref (outs[k]);
        break;
      }
    case TG_STAGE_EXPORT:
    default:
      rc = run_export_job (e, g, &ds, info.sha_hex, stage, ix, iy, hooks, report, err);
      break;
    }
out:
  tg_plan_clear (&p);
  return rc;
}
