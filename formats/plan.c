/* Tiled builds, part one: the plan (which stages, which jobs, how much
 * memory each needs).  Writing the plan folder is in plan_write.c, running
 * a job in plan_job.c, the stitch in stitch.c.
 *
 * The stages follow from the graph alone, so a job finds what its stage
 * does by planning the same graph again; plan.json records it for people
 * and batch systems. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tgformats-private.h"
#include "tgformats/plan.h"

/* Bytes the engine and the program need besides the grids. */
#define JOB_BASE_BYTES ((uint64_t) 48 << 20)

static bool
outputs_are_grids (const TgNodeDesc *d)
{
  for (int k = 0; k < d->n_outputs; k++)
    if (!tg_port_type_is_grid (d->outputs[k].type))
      return false;
  return d->n_outputs > 0;
}

/* A global node the plan builds in stages of its own: through its tiled
 * scheme, or, for grids, in one whole-world job.  (Meshes and instances
 * without a scheme are made where an export needs them.) */
static bool
staged_node (const TgGraph *g, int node)
{
  const TgNodeDesc *d = tg_graph_node_desc (g, node);

  return tg_graph_node_locality (g, node) == TG_LOCALITY_GLOBAL && !(d->flags & TG_NODE_EXPORT) && d->n_inputs > 0
         && (outputs_are_grids (d) || (d->tiled && d->tiled->join));
}

/* The node's parameter struct (free with params_free). */
static void *
params_new (const TgGraph *g, int node)
{
  const TgNodeDesc *d = tg_graph_node_desc (g, node);
  void *p = calloc (1, d->params_size ? d->params_size : 1);

  for (int k = 0; p && k < d->n_params; k++)
    if (tg_param_value_store (&d->params[k], tg_graph_get_param_at (g, node, k), p) < 0)
      {
        tg_params_struct_clear (d->params, d->n_params, p);
        free (p);
        return NULL;
      }
  return p;
}

static void
params_free (const TgGraph *g, int node, void *p)
{
  const TgNodeDesc *d = tg_graph_node_desc (g, node);

  if (p)
    tg_params_struct_clear (d->params, d->n_params, p);
  free (p);
}

static int
add_stage (TgPlan *p, TgStage st, TgError *err)
{
  TgStage *grown = realloc (p->stages, sizeof *grown * (size_t) (p->n_stages + 1));

  if (grown == NULL)
    return tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
  p->stages = grown;
  p->stages[p->n_stages++] = st;
  return 0;
}

/* Whether the plan may keep NODE's outputs per tile in a store stage:
 * grids of a node that computes any window exactly on its own, and
 * nothing besides (no source pixels). */
static bool
storable_node (const TgGraph *g, int node)
{
  const TgNodeDesc *d = tg_graph_node_desc (g, node);

  return tg_graph_node_locality (g, node) != TG_LOCALITY_GLOBAL && !(d->flags & (TG_NODE_EXPORT | TG_NODE_PIXELS))
         && outputs_are_grids (d);
}

/* Adds a store stage for every input of NODE's scheme that its first
 * step reads over a halo, unless the store has it already.  Without one,
 * each step-0 job would compute the input's whole upstream chain over its
 * tile grown by the halo: for erosion.hydraulic (four droplet reaches)
 * several times the tile's work and memory, repeated by every
 * neighbour.  Stored per tile, the input is computed once, over tiles,
 * and the step reads any window of it from the store.  Only the input
 * itself is stored: what lies above it is computed once per tile anyway. */
static int
add_store_stages (TgPlan *p, const TgGraph *g, int node, const void *params, TgError *err)
{
  const TgNodeDesc *d = tg_graph_node_desc (g, node);
  int rc = 0;

  if (d->tiled->halo (params, &p->full, 0) <= 0)
    return 0;
  for (int k = 0; k < d->n_inputs && rc == 0; k++)
    {
      int l = tg_graph_input_link (g, node, k), from;
      if (l < 0)
        continue;
      from = tg_graph_link (g, l)->from_node;
      if (p->stored_after[from] >= 0 || !storable_node (g, from))
        continue;
      rc = add_stage (p, (TgStage) { .kind = TG_STAGE_STORE, .node = from,
                                     .n_jobs = p->nx * p->ny }, err);
      if (rc == 0)
        p->stored_after[from] = p->n_stages - 1;
    }
  return rc;
}

/* Marks the nodes some export depends on. */
static void
mark_needed (const TgGraph *g, const int *order, bool *needed)
{
  int n = tg_graph_n_nodes (g);

  for (int i = 0; i < n; i++)
    needed[i] = (tg_graph_node_desc (g, i)->flags & TG_NODE_EXPORT) != 0;
  for (int k = n - 1; k >= 0; k--)
    {
      int node = order[k];
      const TgNodeDesc *d = tg_graph_node_desc (g, node);
      if (!needed[node])
        continue;
      for (int q = 0; q < d->n_inputs; q++)
        {
          int l = tg_graph_input_link (g, node, q);
          if (l >= 0 && tg_graph_node_reads_input (g, node, q))
            needed[tg_graph_link (g, l)->from_node] = true;
        }
    }
}

int
tg_plan_make (const TgGraph *g, int nx, int ny, TgPlan *p, TgError *err)
{
  const TgWorld *w = tg_graph_world_const (g);
  int n = tg_graph_n_nodes (g), rc;
  int *order = NULL;
  bool *needed = NULL, tiles = false, whole = false;

  memset (p, 0, sizeof *p);
  if ((rc = tg_graph_validate (g, err)) < 0)
    return rc;
  tg_region_for_world (&p->full, w, w->resolution);
  if (nx < 1 || ny < 1 || nx > TG_TILES_MAX || ny > TG_TILES_MAX)
    return tg_error_set (err, TG_ERANGE, "", TG_MSG_PLAN_TILE_COUNTS, TG_TILES_MAX, nx, ny);
  if (nx > p->full.full_w || ny > p->full.full_h)
    return tg_error_set (err, TG_ERANGE, "", TG_MSG_PLAN_TILES_TOO_SMALL, nx, ny, p->full.full_w,
                         p->full.full_h);
  p->nx = nx;
  p->ny = ny;
  order = malloc (sizeof *order * (size_t) (n ? n : 1));
  needed = calloc ((size_t) (n ? n : 1), sizeof *needed);
  p->stored_after = malloc (sizeof (int) * (size_t) (n ? n : 1));
  if (!order || !needed || !p->stored_after)
    {
      rc = tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
      goto out;
    }
  if ((rc = tg_graph_topo_order (g, order, err)) < 0)
    goto out;
  mark_needed (g, order, needed);
  for (int i = 0; i < n; i++)
    p->stored_after[i] = -1;

  for (int k = 0; k < n && rc == 0; k++)
    {
      int node = order[k];
      const TgNodeDesc *d = tg_graph_node_desc (g, node);
      if (!needed[node])
        continue;
      if (d->flags & TG_NODE_EXPORT)
        {
          if (d->locality == TG_LOCALITY_GLOBAL)
            whole = true;
          else
            tiles = true;
          continue;
        }
      if (!staged_node (g, node))
        continue;
      if (d->tiled == NULL)
        rc = add_stage (p, (TgStage) { .kind = TG_STAGE_NODE, .node = node, .n_jobs = 1 }, err);
      else
        {
          void *params = params_new (g, node);
          int steps = params ? d->tiled->n_steps (params, &p->full) : 0;
          if (params == NULL)
            rc = tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
          else
            rc = add_store_stages (p, g, node, params, err);
          for (int s = 0; rc == 0 && s < steps; s++)
            {
              rc = add_stage (p, (TgStage) { .kind = TG_STAGE_STEP, .node = node, .step = s,
                                             .n_jobs = nx * ny }, err);
              if (rc == 0 && d->tiled->has_reduce && d->tiled->has_reduce (params, &p->full, s))
                rc = add_stage (p, (TgStage) { .kind = TG_STAGE_REDUCE, .node = node, .step = s,
                                               .n_jobs = 1 }, err);
            }
          params_free (g, node, params);
        }
      p->stored_after[node] = p->n_stages - 1;
    }
  if (rc == 0 && !tiles && !whole)
    rc = tg_error_set (err, TG_EMISSING, "nodes", TG_MSG_PLAN_NOTHING);
  if (rc == 0)
    rc = add_stage (p, (TgStage) { .kind = TG_STAGE_EXPORT, .tiles = tiles, .whole = whole,
                                   .n_jobs = (tiles ? nx * ny : 0) + (whole ? 1 : 0) }, err);
out:
  free (order);
  free (needed);
  if (rc < 0)
    tg_plan_clear (p);
  return rc;
}

void
tg_plan_clear (TgPlan *p)
{
  free (p->stages);
  free (p->stored_after);
  memset (p, 0, sizeof *p);
}

void
tg_plan_job_tile (const TgPlan *p, int s, int j, int *ix, int *iy)
{
  const TgStage *st = &p->stages[s];
  bool tile = st->kind == TG_STAGE_STEP || st->kind == TG_STAGE_STORE
              || (st->kind == TG_STAGE_EXPORT && st->tiles && j < p->nx * p->ny);

  *ix = tile ? j % p->nx : -1;
  *iy = tile ? j / p->nx : -1;
}

/* --- memory ------------------------------------------------------------------ */

static uint64_t
grid_bytes (const TgNodeDesc *d, const TgRegion *r)
{
  uint64_t b = 0;

  for (int k = 0; k < d->n_outputs; k++)
    if (tg_port_type_is_grid (d->outputs[k].type))
      {
        int ch = d->outputs[k].type == TG_TYPE_HEIGHT || d->outputs[k].type == TG_TYPE_MASK ? 1 : 4;
        b += tg_region_samples (r) * (uint64_t) ch * sizeof (float);
      }
  return b;
}

/* The maps a job's evaluation computes: one per node and region, as the
 * engine computes each such pair once however many nodes read it. */
typedef struct
{
  int n, cap;
  int *node;
  TgRegion *region;
  uint64_t bytes;
} Maps;

/* Adds the grids NODE and what it needs upstream hold over R: every
 * input's region with the node's apron, nodes the store has taken as
 * they are.  An upper bound, since the engine frees a map after its last
 * reader.  Without memory for the list, counts a map again. */
/* What the tiled scheme of NODE says a job of its step STEP (or its
 * reduce; STEP -1: its joined value) holds; 0 when it does not say. */
static uint64_t
scheme_work_bytes (const TgPlan *p, const TgGraph *g, int node, int step, bool reduce)
{
  const TgNodeDesc *d = tg_graph_node_desc (g, node);
  TgTiling t = { p->nx, p->ny, -1, -1 };
  void *params;
  uint64_t b;

  if (!d->tiled || !d->tiled->work_bytes || !(params = params_new (g, node)))
    return 0;
  b = d->tiled->work_bytes (params, &p->full, &t, step, reduce);
  params_free (g, node, params);
  return b;
}

/* Bytes of NODE's joined non-grid outputs (a mesh, an instance list), as
 * its scheme estimates them, else as big as its inputs' (filters and
 * merges of instances, a simplified mesh). */
static uint64_t
joined_bytes (const TgPlan *p, const TgGraph *g, int node, int depth)
{
  const TgNodeDesc *d = tg_graph_node_desc (g, node);
  uint64_t b;

  if (depth > TG_GRAPH_MAX_DEPTH || outputs_are_grids (d))
    return 0;
  if ((b = scheme_work_bytes (p, g, node, -1, false)) > 0)
    return b;
  for (int k = 0; k < d->n_inputs; k++)
    {
      int l = tg_graph_input_link (g, node, k);
      if (l >= 0 && tg_graph_node_reads_input (g, node, k))
        b += joined_bytes (p, g, tg_graph_link (g, l)->from_node, depth + 1);
    }
  return b;
}

static void
maps_add (Maps *m, const TgPlan *p, const TgGraph *g, int node, const TgRegion *r, int before,
          int depth)
{
  const TgNodeDesc *d = tg_graph_node_desc (g, node);
  bool stored = p->stored_after[node] >= 0 && p->stored_after[node] < before;
  TgRegion own = *r, in_r = *r;

  if (depth > TG_GRAPH_MAX_DEPTH)
    return;
  if (!stored && tg_graph_node_locality (g, node) == TG_LOCALITY_GLOBAL)
    own = in_r = p->full;
  else if (!stored && tg_graph_node_locality (g, node) == TG_LOCALITY_APRON && d->apron)
    {
      void *params = params_new (g, node);
      if (params)
        in_r = tg_node_apron_region (d, params, r);
      params_free (g, node, params);
    }
  for (int i = 0; i < m->n; i++)
    if (m->node[i] == node && tg_region_equal (&m->region[i], &own))
      return;
  if (m->n == m->cap)
    {
      int cap = m->cap ? 2 * m->cap : 32;
      int *nodes = realloc (m->node, sizeof *nodes * (size_t) cap);
      TgRegion *regions = nodes ? realloc (m->region, sizeof *regions * (size_t) cap) : NULL;
      if (nodes)
        m->node = nodes;
      if (regions)
        {
          m->region = regions;
          m->cap = cap;
        }
    }
  if (m->n < m->cap)
    {
      m->node[m->n] = node;
      m->region[m->n++] = own;
    }
  m->bytes += grid_bytes (d, &own);
  if (stored)
    {
      /* A joined value is read as the tiles' parts and then joined (two
       * copies), and a writer may hold a third while it encodes. */
      m->bytes += 3 * joined_bytes (p, g, node, depth);
      return;
    }
  for (int k = 0; k < d->n_inputs; k++)
    {
      int l = tg_graph_input_link (g, node, k);
      if (l >= 0 && tg_graph_node_reads_input (g, node, k))
        maps_add (m, p, g, tg_graph_link (g, l)->from_node, &in_r, before, depth + 1);
    }
}

static uint64_t
maps_clear (Maps *m)
{
  uint64_t b = m->bytes;

  free (m->node);
  free (m->region);
  memset (m, 0, sizeof *m);
  return b;
}

uint64_t
tg_plan_job_memory (const TgPlan *p, const TgGraph *g, int s, int j)
{
  const TgStage *st = &p->stages[s];
  int ix, iy, n = tg_graph_n_nodes (g);
  uint64_t b = JOB_BASE_BYTES;
  Maps m = { 0 };
  TgRegion r;

  tg_plan_job_tile (p, s, j, &ix, &iy);
  {
    TgTiling t = { p->nx, p->ny, ix, iy };
    r = ix >= 0 ? tg_tiling_window (&t, &p->full, ix, iy) : p->full;
  }
  switch (st->kind)
    {
    case TG_STAGE_REDUCE:
      {
        uint64_t own = scheme_work_bytes (p, g, st->node, st->step, true);
        /* Blobs are perimeter-sized: a few floats per edge sample. */
        return b + (own ? own : (uint64_t) (p->full.full_w + p->full.full_h)
                                  * (uint64_t) (p->nx + p->ny) * 16);
      }
    case TG_STAGE_NODE:
      maps_add (&m, p, g, st->node, &p->full, s, 0);
      return b + maps_clear (&m) * 2;
    case TG_STAGE_STORE:
      maps_add (&m, p, g, st->node, &r, s, 0);
      return b + maps_clear (&m);
    case TG_STAGE_STEP:
      {
        const TgNodeDesc *d = tg_graph_node_desc (g, st->node);
        void *params = params_new (g, st->node);
        int halo = params ? d->tiled->halo (params, &p->full, st->step) : 0;
        TgRegion in_r = halo >= 0 ? tg_region_grow (&r, halo) : r;
        uint64_t own = scheme_work_bytes (p, g, st->node, st->step, false);
        params_free (g, st->node, params);
        /* The node's state over its window, copies and scratch over the
         * tile (a halo'd step keeps its state, not its outputs, there),
         * unless the scheme knows better; its outputs over the tile. */
        b += own ? own + grid_bytes (d, &r) : grid_bytes (d, &in_r) + grid_bytes (d, &r) * 2;
        for (int k = 0; halo >= 0 && k < d->n_inputs; k++)
          {
            int l = tg_graph_input_link (g, st->node, k);
            if (l >= 0)
              maps_add (&m, p, g, tg_graph_link (g, l)->from_node, &in_r, s, 0);
          }
        return b + maps_clear (&m);
      }
    case TG_STAGE_EXPORT:
    default:
      for (int node = 0; node < n; node++)
        {
          const TgNodeDesc *d = tg_graph_node_desc (g, node);
          if ((d->flags & TG_NODE_EXPORT)
              && (d->locality == TG_LOCALITY_GLOBAL) == (ix < 0))
            maps_add (&m, p, g, node, &r, s, 0);
        }
      return b + maps_clear (&m);
    }
}
