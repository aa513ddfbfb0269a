/* The point- and area-filter bases: the eval of a node whose output
 * sample depends only on the same sample of its inputs (filters,
 * selectors, generators), or on the samples a fixed apron around it
 * (slope, hillshade), reduced to a per-row function.  The check of the
 * inputs, the output's allocation and the dispatch of rows over the
 * engine's threads, with cancellation and progress, live here once.
 */
#include <tgraph/node.h>

#include "grid_util.h"

typedef struct
{
  TgRowFunc row;          /* a point filter's, or */
  TgAreaRowFunc area_row; /* an area filter's */
  const void *job;
  const TgRegion *region;
  TgValue *out;
  int n_inputs;
  const TgValue *in[TG_MAP_ROWS_MAX_INPUTS];
} MapRows;

static void
map_rows (void *user, int begin, int end)
{
  const MapRows *m = user;
  const float *in[TG_MAP_ROWS_MAX_INPUTS];

  for (int j = begin; j < end; j++)
    {
      float *out = tg_value_row (m->out, j);
      if (m->area_row)
        {
          m->area_row (m->job, m->region, j, m->in, out);
          continue;
        }
      for (int k = 0; k < m->n_inputs; k++)
        in[k] = m->in[k] ? tg__grid_row (m->in[k], m->region, j) : NULL;
      m->row (m->job, m->region, j, in, out);
    }
}

/* Checks the inputs over the region grown by APRON, allocates output 0
 * and runs M's row function over the region. */
static int
map_run (TgEvalCtx *c, int apron, int channels, MapRows *m)
{
  const TgNodeDesc *d = tg_eval_desc (c);
  TgRegion need;
  int rc;

  m->region = tg_eval_region (c);
  m->n_inputs = d->n_inputs;
  need = apron > 0 ? tg_region_grow (m->region, apron) : *m->region;
  if (d->n_inputs > TG_MAP_ROWS_MAX_INPUTS)
    return tg_eval_fail (c, TG_EINVAL, "a point filter takes at most %d inputs, %s has %d",
                         TG_MAP_ROWS_MAX_INPUTS, d->type, d->n_inputs);
  for (int k = 0; k < d->n_inputs; k++)
    {
      m->in[k] = tg_eval_input (c, k);
      if (!m->in[k] && d->inputs[k].optional)
        continue;
      if ((rc = tg__check_grid_input (c, m->in[k], d->inputs[k].name, &need)) < 0)
        return rc;
    }
  m->out = tg_eval_new_output (c, 0, channels);
  if (!m->out)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  return tg_eval_parallel (c, m->region->height, tg__grain_rows (m->region->width), map_rows, m);
}

int
tg_eval_map_rows (TgEvalCtx *c, int channels, TgRowFunc row, const void *job)
{
  MapRows m = { .row = row, .job = job };

  return map_run (c, 0, channels, &m);
}

int
tg_eval_map_area_rows (TgEvalCtx *c, int apron, int channels, TgAreaRowFunc row,
                       const void *job)
{
  MapRows m = { .area_row = row, .job = job };

  return map_run (c, apron, channels, &m);
}
