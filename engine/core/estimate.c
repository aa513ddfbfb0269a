/* The memory estimate (tgraph/memory.h): an export's jobs, keyed as
 * tg_engine_export keys them and walked in the order pull_job runs them,
 * with each job's bytes counted from the moment its node runs to the
 * moment its last reader is done.  Nothing is computed and no file is
 * decoded: input images are measured from their headers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eval.h"
#include "tgraph/io.h"
#include "tgraph/memory.h"

/* The process itself (code, libraries, a stack per pool thread) and
 * the allocator's slack, measured as the peak RSS of a tiny build. */
#define BASE_BYTES ((uint64_t) 5 << 20)

typedef struct
{
  Eval *ev;
  uint64_t limit;
  TgMemEstimate *est;
  uint64_t **port;  /* per job, per output: the bytes of that output alive */
  uint64_t *extra;  /* per job: what it holds besides its grids (meshes,
                     * instance lists, an input file's pixels), alive until
                     * its last reader is done */
  uint64_t *values; /* per job: of its outputs, those that are not grids */
  bool *alive;
  uint64_t live;    /* results alive */
  uint64_t kept;    /* input files kept decoded */
  uint64_t cached;  /* results the cache keeps after their last reader */
  uint64_t room;    /* what the cache's budget has left */
  char **images;    /* files counted in KEPT */
  int n_images;
} Walk;

static int
channels_of (TgPortType t)
{
  return t == TG_TYPE_HEIGHT || t == TG_TYPE_MASK ? 1 : 4;
}

/* Grid output K of NODE over R (0 for an output that is no grid). */
static uint64_t
grid_output (const TgNodeDesc *d, int k, const TgRegion *r)
{
  if (!tg_port_type_is_grid (d->outputs[k].type))
    return 0;
  return tg_region_samples (r) * (uint64_t) channels_of (d->outputs[k].type) * sizeof (float);
}

/* The grid outputs of NODE over R. */
static uint64_t
grid_outputs (const TgNodeDesc *d, const TgRegion *r)
{
  uint64_t b = 0;

  for (int k = 0; k < d->n_outputs; k++)
    b += grid_output (d, k, r);
  return b;
}

static bool
outputs_are_grids (const TgNodeDesc *d)
{
  for (int k = 0; k < d->n_outputs; k++)
    if (!tg_port_type_is_grid (d->outputs[k].type))
      return false;
  return true;
}

/* The query's image_info: the header of an image not yet held, else 0 x 0. */
static int
image_info (const TgMemQuery *q, const char *path, TgImage *info)
{
  Walk *w = q->priv;
  TgEngine *e = w->ev->e;
  char *full, **grown;
  struct stat st;
  int rc;

  memset (info, 0, sizeof *info);
  if (path == NULL || path[0] == '\0')
    return TG_EMISSING;
  if ((full = tg__resolve_input_path (w->ev->g, path)) == NULL)
    return TG_ENOMEM;
  for (int i = 0; i < e->n_images; i++)
    if (strcmp (e->images[i].path, full) == 0 && stat (full, &st) == 0
        && e->images[i].size == st.st_size && e->images[i].mtime.tv_sec == st.st_mtim.tv_sec
        && e->images[i].mtime.tv_nsec == st.st_mtim.tv_nsec)
      goto held;
  for (int i = 0; i < w->n_images; i++)
    if (strcmp (w->images[i], full) == 0)
      goto held;
  if ((rc = tg_io_read_image_info (full, info, NULL)) < 0
      || (grown = realloc (w->images, sizeof *grown * (size_t) (w->n_images + 1))) == NULL)
    {
      free (full);
      return rc < 0 ? rc : TG_ENOMEM;
    }
  w->images = grown;
  w->images[w->n_images++] = full;
  return 0;
held:
  free (full);
  return 0;
}

/* Records that NODE runs holding NEED bytes. */
static void
note (Walk *w, int node, uint64_t need, const TgRegion *r, const TgRegion *in, uint64_t files)
{
  TgMemEstimate *m = w->est;
  bool over = w->limit > 0 && m->node >= 0 && m->node_bytes > w->limit;

  if (need > m->peak)
    m->peak = need;
  if (!over && (m->node < 0 || need > m->node_bytes))
    {
      m->node = node;
      m->node_bytes = need;
      m->region = *r;
      m->input = *in;
      m->files = files;
    }
}

/* Bytes let go go to the cache while its budget has room. */
static void
let_go (Walk *w, uint64_t bytes)
{
  uint64_t c = bytes < w->room ? bytes : w->room;

  w->live -= bytes;
  w->cached += c;
  w->room -= c;
}

/* Eval's drop: output PORT of job J (-1: all it holds) is let go. */
static void
walk_drop (Eval *ev, int j, int port)
{
  Walk *w = ev->drop_user;
  int n = tg_graph_node_desc (ev->g, ev->jobs[j].node)->n_outputs;

  if (!w->alive[j])
    return;
  for (int k = 0; k < n; k++)
    if (port < 0 || port == k)
      {
        let_go (w, w->port[j][k]);
        w->port[j][k] = 0;
      }
  if (port < 0)
    {
      let_go (w, w->extra[j]);
      w->extra[j] = 0;
      w->alive[j] = false;
    }
}

/* Job J's outputs alive: the grids of those in NEED (NULL: all) over R,
 * and EXTRA besides. */
static int
alive (Walk *w, int j, const TgRegion *r, const bool *need, uint64_t extra)
{
  const TgNodeDesc *d = tg_graph_node_desc (w->ev->g, w->ev->jobs[j].node);

  if (!(w->port[j] = calloc ((size_t) (d->n_outputs ? d->n_outputs : 1), sizeof (uint64_t))))
    return TG_ENOMEM;
  for (int k = 0; r && k < d->n_outputs; k++)
    if (need == NULL || need[k])
      {
        w->port[j][k] = grid_output (d, k, r);
        w->live += w->port[j][k];
      }
  w->extra[j] = extra;
  w->live += extra;
  w->alive[j] = true;
  return 0;
}

/* The job of NODE's input K over IN_R, or -1 when it is unlinked (or
 * not read: a bypassed node reads only what it passes through). */
static int
input_job (Walk *w, int node, int k, const TgRegion *in_r)
{
  int l = tg_graph_input_link (w->ev->g, node, k), from;
  TgRegion r;

  if (l < 0 || !tg_graph_node_reads_input (w->ev->g, node, k))
    return -1;
  from = tg_graph_link (w->ev->g, l)->from_node;
  r = tg__compute_region (w->ev, from, in_r);
  return tg__find_job (w->ev, from, &r);
}

/* Streamed exports (tg_eval_write_image_rows) hold a band of rows in the
 * file's layout (formats/image.c: 256 KiB) and its conversion, whatever
 * the size of the image, or the image whole when it is smaller;
 * BASE_BYTES has the encoder's state. */
#define EXPORT_BAND_BYTES ((uint64_t) 512 << 10)

/* What export D holds while it writes maps of READ_MAPS samples: a band
 * when it streams them; the image whole (at most 16 bits a channel) when
 * it writes meshes or instance lists (a mesh's colour map is converted
 * whole) or the raw image of a tile for stitch (gathered whole). */
static uint64_t
export_work (const Walk *w, const TgNodeDesc *d, uint64_t read_maps)
{
  if (read_maps == 0)
    return 0;
  if (w->ev->raw_tiles)
    return read_maps * sizeof (uint16_t);
  for (int k = 0; k < d->n_inputs; k++)
    if (!tg_port_type_is_grid (d->inputs[k].type))
      return read_maps * sizeof (uint16_t);
  return read_maps * sizeof (uint16_t) < EXPORT_BAND_BYTES ? read_maps * sizeof (uint16_t)
                                                           : EXPORT_BAND_BYTES;
}

/* pull_job's path through job J, counting instead of computing; 0 or
 * TG_ENOMEM. */
static int
walk_job (Walk *w, int j)
{
  Eval *ev = w->ev;
  Job *job = &ev->jobs[j];
  int node = job->node, rc;
  const TgNodeDesc *d = tg_graph_node_desc (ev->g, node);
  TgRegion region = job->region, in_r;
  uint64_t windows = 0, read_maps = 0, read_values = 0, values = 0;
  TgMemQuery q;

  if (job->done)
    return 0;
  job->done = true;
  if (!(d->flags & TG_NODE_EXPORT) && tg__cache_has (ev->e->cache, job->key))
    {
      if ((rc = alive (w, j, NULL, NULL, 0)) < 0)
        return rc;
      if (job->source >= 0)
        tg__job_release (ev, job->source, -1);
      tg__job_release_reads (ev, j);
      tg__job_drop_unread (ev, j);
      return 0;
    }
  if (tg__stored (ev, node))
    {
      if ((rc = alive (w, j, &region, NULL, 0)) < 0)
        return rc;
      if (job->source >= 0)
        tg__job_release (ev, job->source, -1);
      tg__job_drop_unread (ev, j);
      return 0;
    }
  if (job->source >= 0)
    {
      /* pull_window: cut from the job the window is read from. */
      int from = tg__read_job (ev, job->source);
      bool need[64], linked = job->consumers > 0;
      uint64_t cut = 0;
      if ((rc = walk_job (w, from)) < 0)
        return rc;
      for (int k = 0; k < d->n_outputs && k < 64; k++)
        {
          need[k] = !linked || tg__job_port_needed (ev, j, k);
          cut += need[k] ? grid_output (d, k, &region) : 0;
        }
      note (w, node, BASE_BYTES + w->live + w->kept + w->cached + cut, &region, &region, w->kept);
      if ((rc = alive (w, j, &region, need, 0)) < 0)
        return rc;
      tg__job_release (ev, job->source, -1);
      tg__job_release_reads (ev, j);
      return 0;
    }
  in_r = tg__input_region (ev, node, &region);
  memset (&q, 0, sizeof q);
  for (int k = 0; k < d->n_inputs; k++)
    {
      int ij = input_job (w, node, k, &in_r);
      const TgLink *link;
      if (ij < 0)
        continue;
      if (k < 64)
        q.linked |= UINT64_C (1) << k;
      /* A window not cut yet is read from the larger result. */
      ij = tg__read_job (ev, ij);
      if ((rc = walk_job (w, ij)) < 0)
        return rc;
      /* An input over another region than the node's (a global input
       * computed the whole lattice, a window read from a larger result):
       * the node reads a copy of its window (pull_inputs). */
      link = tg_graph_link (ev->g, tg_graph_input_link (ev->g, node, k));
      TgPortType t = tg_graph_node_desc (ev->g, link->from_node)->outputs[link->from_port].type;
      if (tg_port_type_is_grid (t) && !tg_region_equal (&ev->jobs[ij].region, &in_r))
        windows += tg_region_samples (&in_r) * (uint64_t) channels_of (t) * sizeof (float);
      if (tg_port_type_is_grid (t))
        read_maps += tg_region_samples (&in_r) * (uint64_t) channels_of (t);
      else
        read_values += w->values[ij];
    }
  if (!outputs_are_grids (d))
    {
      /* A mesh or an instance list: as the node's tiled scheme sizes the
       * whole-world value, else as big as what it is made from (filters
       * and merges of instances). */
      const TgTiling one = { 1, 1, -1, -1 };
      TgRegion full = tg_region_full (&region);
      values = d->tiled && d->tiled->work_bytes && tg__node_params (ev, node)
               ? d->tiled->work_bytes (tg__node_params (ev, node), &full, &one, -1, false)
               : 0;
      if (values == 0)
        values = read_values;
    }
  q.params = tg__node_params (ev, node);
  q.region = &region;
  q.input = &in_r;
  q.image_info = image_info;
  q.priv = w;
  q.outputs = grid_outputs (d, &region) + values;
  if (d->flags & TG_NODE_EXPORT)
    q.work += export_work (w, d, read_maps);
  if (d->memory && q.params && !tg_graph_node_bypass (ev->g, node))
    d->memory (&q);
  note (w, node, BASE_BYTES + w->live + w->kept + w->cached + windows + q.outputs + q.work + q.kept,
        &region, &in_r, w->kept + q.kept);
  w->kept += q.kept;
  if ((rc = alive (w, j, &region, NULL, q.outputs - grid_outputs (d, &region))) < 0)
    return rc;
  w->values[j] = q.outputs - grid_outputs (d, &region);
  tg__job_release_reads (ev, j);
  tg__job_drop_unread (ev, j);
  return 0;
}

int
tg_engine_estimate (TgEngine *e, const TgGraph *g, const TgEvalHooks *hooks, uint64_t limit,
                    TgMemEstimate *est, TgError *err)
{
  const TgTiling *tiling = hooks ? hooks->tiling : NULL;
  int n = tg_graph_n_nodes (g), *exports, rc = 0;
  TgRegion region;
  Walk w;
  Eval ev;

  memset (est, 0, sizeof *est);
  est->node = -1;
  if ((rc = tg_graph_validate (g, err)) < 0 || (rc = tg_world_check (tg_graph_world_const (g), err)) < 0)
    return rc;
  tg_region_for_world (&region, tg_graph_world_const (g), tg_graph_world_const (g)->resolution);
  if (tiling && tiling->ix >= 0)
    region = tg_tiling_window (tiling, &region, tiling->ix, tiling->iy);
  if ((rc = tg__eval_begin (&ev, e, g, hooks, NULL, err)) < 0)
    return rc;
  memset (&w, 0, sizeof w);
  w.ev = &ev;
  ev.drop = walk_drop;
  ev.drop_user = &w;
  ev.raw_tiles = tiling && tiling->ix >= 0 && !hooks->encode_tiles;
  w.limit = limit;
  w.est = est;
  {
    size_t budget = tg__cache_budget (e->cache), used = tg__cache_bytes (e->cache);
    w.room = budget > used ? budget - used : 0;
  }
  exports = malloc (sizeof (int) * (size_t) (n ? n : 1));
  if (exports == NULL)
    rc = tg_error_set (err, TG_ENOMEM, NULL, NULL);
  /* Every export keyed before any runs, as tg_engine_export does, so each
   * shared result knows all its readers. */
  for (int i = 0; rc == 0 && i < n; i++)
    {
      exports[i] = -1;
      if (tg__export_in_part (tg_graph_node_desc (g, i), tiling)
          && (exports[i] = tg__job_for (&ev, i, &region, 0)) < 0)
        rc = exports[i];
    }
  if (rc == 0)
    {
      size_t nj = (size_t) (ev.n_jobs ? ev.n_jobs : 1);
      w.port = calloc (nj, sizeof *w.port);
      w.extra = calloc (nj, sizeof *w.extra);
      w.values = calloc (nj, sizeof *w.values);
      w.alive = calloc (nj, sizeof *w.alive);
      if (w.port == NULL || w.extra == NULL || w.values == NULL || w.alive == NULL)
        rc = tg_error_set (err, TG_ENOMEM, NULL, NULL);
    }
  if (rc == 0)
    tg__jobs_keyed (&ev);
  for (int i = 0; rc == 0 && i < n; i++)
    if (exports[i] >= 0 && (rc = walk_job (&w, exports[i])) < 0)
      tg_error_set (err, rc, NULL, NULL);
  /* The walk's jobs are no evaluation's: nothing for eval_end to free. */
  for (int i = 0; i < ev.n_jobs; i++)
    ev.jobs[i].outs = NULL;
  for (int i = 0; i < w.n_images; i++)
    free (w.images[i]);
  free (w.images);
  for (int i = 0; w.port && i < ev.n_jobs; i++)
    free (w.port[i]);
  free (w.port);
  free (w.extra);
  free (w.values);
  free (w.alive);
  free (exports);
  tg__eval_end (&ev);
  return rc;
}

/* "16385²" or "16385x8193". */
static void
format_size (const TgRegion *r, char *buf, size_t size)
{
  if (r->width == r->height)
    snprintf (buf, size, "%d\u00b2", r->width);
  else
    snprintf (buf, size, "%dx%d", r->width, r->height);
}

const char *
tg_mem_estimate_describe (const TgMemEstimate *est, const TgGraph *g, char *buf, size_t size)
{
  char bytes[32], at[32], in[64] = "", files[64] = "";

  tg_format_bytes (est->node_bytes, bytes, sizeof bytes);
  if (est->node < 0)
    {
      snprintf (buf, size, "needs about %s", bytes);
      return buf;
    }
  format_size (&est->region, at, sizeof at);
  if (est->input.width > est->region.width || est->input.height > est->region.height)
    {
      char s[32];
      format_size (&est->input, s, sizeof s);
      snprintf (in, sizeof in, " (input %s with its apron)", s);
    }
  /* A file is named when it is what weighs: a small PNG may declare 65536². */
  if (est->files > est->node_bytes / 4)
    {
      char f[32];
      snprintf (files, sizeof files, ", %s of it input files decoded",
                tg_format_bytes (est->files, f, sizeof f));
    }
  snprintf (buf, size, "node \"%s\": needs about %s at %s%s%s", tg_graph_node_id (g, est->node),
            bytes, at, in, files);
  return buf;
}
