/* The chunk grid every instance-list writer groups by when export.points
 * asks for chunk_m > 0 (TgPointsWriteOptions, points.h), so that an
 * engine streams instances with the terrain.
 *
 * The grid is anchored at the world's north-west corner, the heightmap's
 * first sample, where mesh.heightfield's chunks and Unreal's landscape
 * start: with chunk_m = chunk_cells x cell size, instance chunk
 * "chunk_x<cx>_z<cz>" covers the terrain's chunk_x<cx>_z<cz>_lod<L>.  cx
 * counts from the west, cz from the north; a chunk holds
 * [west, east) x (south, north], so a point on a line between chunks
 * belongs to the one east or south of it; the last chunk along an axis
 * takes what is left of the world, its far edge included, and a point
 * outside the world (a jittered one) goes to the nearest chunk.
 *
 * Chunks come north-west first, row by row (cz, then cx), as the
 * terrain's do; inside a chunk (and a prototype, for the formats that
 * group by it) the instances keep the list's order.  Only chunks that
 * hold instances are listed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "points-writers.h"

/* More chunks along an axis than any engine streams; keeps keys in range. */
#define MAX_CHUNKS_PER_AXIS (INT64_C (1) << 24)

int
tg__points_chunk_grid_init (TgPointsChunkGrid *g, const TgPointsWriteOptions *opt,
                            const char *format, TgError *err)
{
  double c = opt ? opt->chunk_m : 0.0;

  *g = (TgPointsChunkGrid) { .ncx = 1, .ncz = 1 };
  if (!(c >= 0.0) || !isfinite (c))
    return tg_error_set (err, TG_EINVAL, NULL, "%s: chunk size %g m is not a size", format, c);
  if (c == 0.0)
    return 0;
  if (!(opt->size_x > 0.0 && opt->size_z > 0.0))
    return tg_error_set (err, TG_EINVAL, NULL,
                         "%s: chunks need the world's extent (%g x %g m given)", format,
                         opt->size_x, opt->size_z);
  if (opt->size_x / c > (double) MAX_CHUNKS_PER_AXIS
      || opt->size_z / c > (double) MAX_CHUNKS_PER_AXIS)
    return tg_error_set (err, TG_ERANGE, NULL,
                         "%s: chunks of %g m cut the %g x %g m world into too many; use larger "
                         "chunks",
                         format, c, opt->size_x, opt->size_z);
  g->chunk_m = c;
  g->west_m = -0.5 * opt->size_x;
  g->north_m = 0.5 * opt->size_z;
  g->ncx = (int64_t) ceil (opt->size_x / c);
  g->ncz = (int64_t) ceil (opt->size_z / c);
  g->ncx = g->ncx < 1 ? 1 : g->ncx;
  g->ncz = g->ncz < 1 ? 1 : g->ncz;
  return 0;
}

static int64_t
clamp_index (double v, int64_t n)
{
  double f = floor (v);

  return f < 0.0 ? 0 : f >= (double) n ? n - 1 : (int64_t) f;
}

void
tg__points_chunk_of (const TgPointsChunkGrid *g, const float pos[3], int64_t *cx, int64_t *cz)
{
  if (g->chunk_m <= 0.0)
    {
      *cx = *cz = 0;
      return;
    }
  *cx = clamp_index (((double) pos[0] - g->west_m) / g->chunk_m, g->ncx);
  *cz = clamp_index ((g->north_m - (double) pos[2]) / g->chunk_m, g->ncz);
}

void
tg__points_chunk_name (int64_t cx, int64_t cz, char out[48])
{
  snprintf (out, 48, "chunk_x%lld_z%lld", (long long) cx, (long long) cz);
}

typedef struct
{
  uint64_t key;
  int64_t index;
} Keyed;

/* Sorts A (N items) by key, keeping the order of equal keys: a radix
 * sort, 16 bits a pass, skipping the digits every key shares.  Linear,
 * so a million instances sort in milliseconds (the writer checks for a
 * cancel only between the writes that follow). */
static int
sort_keyed (Keyed *a, int64_t n)
{
  Keyed *tmp = malloc (sizeof (Keyed) * (size_t) (n ? n : 1)), *src = a, *dst = tmp;
  uint64_t all_or = 0, all_and = ~UINT64_C (0);
  int64_t *count = calloc (65536, sizeof (int64_t));

  if (!tmp || !count)
    {
      free (tmp);
      free (count);
      return TG_ENOMEM;
    }
  for (int64_t i = 0; i < n; i++)
    {
      all_or |= a[i].key;
      all_and &= a[i].key;
    }
  for (int shift = 0; shift < 64; shift += 16)
    {
      int64_t sum = 0;
      Keyed *t;
      if ((((all_or ^ all_and) >> shift) & 0xffff) == 0)
        continue;
      memset (count, 0, 65536 * sizeof (int64_t));
      for (int64_t i = 0; i < n; i++)
        count[(src[i].key >> shift) & 0xffff]++;
      for (int d = 0; d < 65536; d++)
        {
          int64_t c = count[d];
          count[d] = sum;
          sum += c;
        }
      for (int64_t i = 0; i < n; i++)
        dst[count[(src[i].key >> shift) & 0xffff]++] = src[i];
      t = src;
      src = dst;
      dst = t;
    }
  if (src != a)
    memcpy (a, src, sizeof (Keyed) * (size_t) n);
  free (tmp);
  free (count);
  return 0;
}

int
tg__points_chunks_init (TgPointsChunks *c, const TgPoints *p, const TgPointsWriteOptions *opt,
                        bool by_proto, const char *format, TgError *err)
{
  int64_t n = p->n, protos = by_proto ? (p->n_protos > 0 ? p->n_protos : 1) : 1;
  Keyed *keyed = NULL;
  int rc;

  *c = (TgPointsChunks) { 0 };
  if ((rc = tg__points_chunk_grid_init (&c->grid, opt, format, err)) < 0)
    return rc;
  c->chunked = c->grid.chunk_m > 0.0;
  if ((double) c->grid.ncx * (double) c->grid.ncz * (double) protos > 4e18)
    return tg_error_set (err, TG_ERANGE, NULL, "%s: too many chunks and prototypes", format);
  keyed = malloc (sizeof (Keyed) * (size_t) (n ? n : 1));
  c->order = malloc (sizeof (int64_t) * (size_t) (n ? n : 1));
  c->groups = malloc (sizeof (TgPointsGroup) * (size_t) (n ? n : 1));
  if (!keyed || !c->order || !c->groups)
    {
      free (keyed);
      tg__points_chunks_clear (c);
      return tg_error_set (err, TG_ENOMEM, NULL, "%s: out of memory", format);
    }
  for (int64_t i = 0; i < n; i++)
    {
      int64_t cx, cz;
      tg__points_chunk_of (&c->grid, p->position + 3 * i, &cx, &cz);
      keyed[i]
          = (Keyed) { (uint64_t) ((cz * c->grid.ncx + cx) * protos + (by_proto ? p->proto[i] : 0)),
                     i };
    }
  if (sort_keyed (keyed, n) < 0)
    {
      free (keyed);
      tg__points_chunks_clear (c);
      return tg_error_set (err, TG_ENOMEM, NULL, "%s: out of memory", format);
    }
  for (int64_t i = 0; i < n; i++)
    {
      c->order[i] = keyed[i].index;
      if (i == 0 || keyed[i].key != keyed[i - 1].key)
        {
          int64_t chunk = (int64_t) keyed[i].key / protos;
          c->groups[c->n_groups++]
              = (TgPointsGroup) { .cx = chunk % c->grid.ncx,
                                 .cz = chunk / c->grid.ncx,
                                 .proto = by_proto ? (int) ((int64_t) keyed[i].key % protos) : -1,
                                 .first = i };
        }
      c->groups[c->n_groups - 1].count++;
    }
  free (keyed);
  return 0;
}

void
tg__points_chunks_clear (TgPointsChunks *c)
{
  free (c->order);
  free (c->groups);
  *c = (TgPointsChunks) { 0 };
}
