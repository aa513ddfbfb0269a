/* Tests for erosion.flow's tiled scheme on plain arrays: for terrains made
 * to cross tile edges (noise with pits and lakes, terraced noise full of
 * flats, a flat-floored valley, a lake over four tiles, a river that
 * crosses one tile edge back and forth, a lake over most of the world, a
 * C-shaped flat that leaves a tile and comes back) and many tilings (1 x 1
 * to one sample a tile, counts that do not divide the size), every step
 * and reduce run through an in-memory blob store gives exactly the bytes
 * of the whole-world evaluation, for MFD and D8; and the reduce of the
 * flats holds about one tile's flats, not the world's. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/tgraph.h>

#include "erosion_flow.h"
#include "tgtest.h"

/* --- an in-memory blob store ------------------------------------------- */

typedef struct
{
  int ix, iy;
  char name[48];
  void *data;
  size_t size;
} Blob;

typedef struct
{
  Blob *slot;
  size_t cap, n;
  int ix, iy;             /* the job that writes */
  size_t bytes_max_tile;  /* largest total a tile job wrote in one step */
  size_t bytes_job;
} Store;

static uint64_t
blob_hash (int ix, int iy, const char *name)
{
  uint64_t h = 1469598103934665603ull ^ (uint64_t) (ix * 7919 + iy * 104729);

  for (; *name; name++)
    h = (h ^ (unsigned char) *name) * 1099511628211ull;
  return h;
}

static Blob *
store_find (Store *s, int ix, int iy, const char *name, bool add)
{
  size_t k = blob_hash (ix, iy, name) & (s->cap - 1);

  for (;; k = (k + 1) & (s->cap - 1))
    {
      Blob *b = &s->slot[k];
      if (!b->data)
        {
          if (!add)
            return NULL;
          b->ix = ix;
          b->iy = iy;
          snprintf (b->name, sizeof b->name, "%s", name);
          s->n++;
          return b;
        }
      if (b->ix == ix && b->iy == iy && strcmp (b->name, name) == 0)
        return b;
    }
}

static void
store_init (Store *s, size_t cap)
{
  memset (s, 0, sizeof *s);
  s->cap = cap;
  s->slot = calloc (cap, sizeof (Blob));
}

static void
store_clear (Store *s)
{
  for (size_t k = 0; k < s->cap; k++)
    free (s->slot[k].data);
  free (s->slot);
}

static int
store_put (void *user, const char *name, const void *data, size_t size)
{
  Store *s = user;
  Blob *b;

  TG_CHECK (s->n < s->cap / 2);
  b = store_find (s, s->ix, s->iy, name, true);
  TG_CHECK_MSG (b->data == NULL, "blob %s of %d,%d written twice", name, s->ix, s->iy);
  b->data = malloc (size ? size : 1);
  memcpy (b->data, data, size);
  b->size = size;
  s->bytes_job += size;
  return 0;
}

static int
store_get (void *user, int ix, int iy, const char *name, void **data, size_t *size)
{
  Store *s = user;
  Blob *b = store_find (s, ix, iy, name, false);

  if (!b)
    return TG_EMISSING;
  *data = malloc (b->size ? b->size : 1);
  memcpy (*data, b->data, b->size);
  *size = b->size;
  return 0;
}

/* Runs every step and reduce over an NX x NY tiling; ACC gets the
 * assembled result, *MAX_TILE_BYTES (may be NULL) the most a tile job
 * wrote in one step, *FLATS_BYTES (may be NULL) the most the reduce of
 * the flats held and *LISTS_BYTES the size of all the tiles' flat lists
 * it read.  Returns 0 or the first error. */
static int
run_tiled (const TgFlowOpts *o, const float *hm, int w, int h, int nx, int ny, double *acc,
           size_t *max_tile_bytes, size_t *flats_bytes, size_t *lists_bytes)
{
  Store s;
  TgFlowBlobs io = { &s, store_put, store_get };
  int rc = 0;

  if (lists_bytes)
    *lists_bytes = 0;
  size_t cap = 1u << 12;

  /* At most four blobs a tile and three a tile from the reduces. */
  while (cap < (size_t) nx * ny * 16)
    cap *= 2;
  store_init (&s, cap);
  for (int step = 0; step < TG__FLOW_N_STEPS && rc == 0; step++)
    {
      for (int iy = 0; iy < ny && rc == 0; iy++)
        for (int ix = 0; ix < nx && rc == 0; ix++)
          {
            TgTiling t = { nx, ny, ix, iy };
            int x0 = tg_tile_start (w, nx, ix), x1 = tg_tile_start (w, nx, ix + 1);
            int y0 = tg_tile_start (h, ny, iy), y1 = tg_tile_start (h, ny, iy + 1);
            int tw = x1 - x0, th = y1 - y0;
            float *thm = malloc (sizeof (float) * ((size_t) tw * th + 1));
            double *tacc = malloc (sizeof (double) * ((size_t) tw * th + 1));
            for (int y = 0; y < th; y++)
              memcpy (thm + (size_t) y * tw, hm + (size_t) (y0 + y) * w + x0, sizeof (float) * tw);
            s.ix = ix;
            s.iy = iy;
            s.bytes_job = 0;
            rc = tg__flow_tile_step (o, &t, w, h, thm, step, &io, tacc);
            if (s.bytes_job > s.bytes_max_tile)
              s.bytes_max_tile = s.bytes_job;
            if (step == 2 && lists_bytes)
              {
                Blob *b = store_find (&s, ix, iy, "flats", false);
                *lists_bytes += b ? b->size : 0;
              }
            if (rc == 0 && step == TG__FLOW_N_STEPS - 1)
              for (int y = 0; y < th; y++)
                memcpy (acc + (size_t) (y0 + y) * w + x0, tacc + (size_t) y * tw,
                        sizeof (double) * tw);
            free (thm);
            free (tacc);
          }
      if (rc == 0 && tg__flow_has_reduce (step))
        {
          TgTiling t = { nx, ny, -1, -1 };
          size_t bytes = 0;
          s.ix = s.iy = -1;
          rc = tg__flow_reduce (o, &t, w, h, step, &io, &bytes);
          if (step == 2 && flats_bytes)
            *flats_bytes = bytes;
        }
    }
  if (max_tile_bytes)
    *max_tile_bytes = s.bytes_max_tile;
  store_clear (&s);
  return rc;
}

/* --- terrains ------------------------------------------------------------ */

static double
hash01 (int x, int y, int seed)
{
  uint32_t h = (uint32_t) x * 374761393u + (uint32_t) y * 668265263u + (uint32_t) seed * 2246822519u;

  h = (h ^ (h >> 13)) * 1274126177u;
  return (double) ((h ^ (h >> 16)) & 0xffffff) / 16777216.0;
}

/* Smooth value noise plus a rough term: pits, small lakes and ridges. */
static double
noise (double x, double y, int seed)
{
  double sum = 0.0, amp = 1.0;

  for (int o = 0; o < 4; o++, amp *= 0.5, x *= 2.0, y *= 2.0)
    {
      int ix = (int) floor (x), iy = (int) floor (y);
      double fx = x - ix, fy = y - iy;
      double a = hash01 (ix, iy, seed + o), b = hash01 (ix + 1, iy, seed + o);
      double c = hash01 (ix, iy + 1, seed + o), d = hash01 (ix + 1, iy + 1, seed + o);
      fx = fx * fx * (3 - 2 * fx);
      fy = fy * fy * (3 - 2 * fy);
      sum += amp * (a + (b - a) * fx + (c - a) * fy + (a - b - c + d) * fx * fy);
    }
  return sum;
}

enum
{
  T_NOISE,
  T_TERRACES,
  T_VALLEY,
  T_LAKE,
  T_RIVER,
  T_BIG_LAKE,
  T_C_FLAT,
  T_COUNT
};

static const char *const terrain_names[T_COUNT] = {
  "noise", "terraces", "flat valley", "lake over four tiles", "meandering river",
  "lake over most tiles", "C-shaped flat",
};

static void
make_terrain (int kind, int w, int h, float *hm)
{
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        double u = (double) x / (w - 1), v = (double) y / (h - 1), z = 0.0;
        switch (kind)
          {
          case T_NOISE:
            z = noise (u * 5, v * 5, 1) + 0.05 * hash01 (x, y, 9);
            break;
          case T_TERRACES:
            z = floor (noise (u * 4, v * 4, 2) * 8.0) / 8.0;
            break;
          case T_VALLEY:
            /* Open at both ends, a floor exactly level down the middle. */
            z = fmax (0.0, fabs (u - 0.5) - 0.2);
            break;
          case T_LAKE:
            {
              /* A crater on the point where the four middle tiles of an
               * even tiling meet, spilling east through a notch. */
              double r = hypot (u - 0.5, v - 0.5);
              z = 0.3 + 0.4 * exp (-pow ((r - 0.3) / 0.08, 2)) - 0.2 * (r < 0.3) * (0.3 - r)
                  + 0.02 * noise (u * 6, v * 6, 3);
              if (fabs (v - 0.5) < 0.03 && u > 0.5)
                z = fmin (z, 0.35 - 0.1 * u);
              break;
            }
          case T_RIVER:
            {
              /* A valley whose line swings across x = 0.5 again and again. */
              double line = 0.5 + 0.12 * sin (v * 6.0 * M_PI);
              z = 0.3 * fabs (u - line) + 0.2 * (1 - v) + 0.01 * hash01 (x, y, 4);
              break;
            }
          case T_BIG_LAKE:
            {
              /* A rough basin over most of the world, with an island,
               * spilling south through a notch: one lake over most tiles. */
              double r = hypot (u - 0.5, v - 0.5);
              z = 0.2 + 3.0 * fmax (0.0, r - 0.42) + 0.05 * noise (u * 7, v * 7, 5)
                  + 0.2 * exp (-pow (r / 0.06, 2));
              if (fabs (u - 0.5) < 0.02 && v > 0.88)
                z = fmin (z, 0.35 - 0.2 * (v - 0.88));
              break;
            }
          case T_C_FLAT:
            {
              /* A level channel round a C open to the east, walled in; it
               * drains only from its northern end, eastwards out of the
               * world, so its southern end (in the same tile column) is
               * reached the long way round, through the tiles on the west. */
              double a = atan2 (v - 0.5, u - 0.5), r = hypot (u - 0.5, v - 0.5);
              double off = fmax (0.0, fabs (r - 0.3) - 0.06), shut = fmax (0.0, 0.5 - fabs (a));
              double ue = 0.5 + 0.3 * cos (0.5), ve = 0.5 - 0.3 * sin (0.5);
              z = 0.5 + hypot (off, 0.3 * shut);
              if (fabs (v - ve) < 0.04 && u > ue - 0.03)
                z = fmin (z, 0.5 - 0.2 * fmax (0.0, u - ue));
              break;
            }
          }
        hm[(size_t) y * w + x] = (float) z;
      }
}

/* --- the test ------------------------------------------------------------ */

static void
test_flow_tiled_exact (void)
{
  static const int tilings[][2] = { { 1, 1 }, { 2, 2 }, { 3, 2 }, { 3, 3 }, { 4, 4 },
                                    { 5, 5 }, { 7, 5 }, { 1, 9 }, { 9, 1 }, { 2, 7 } };
  /* Tiles of 1 to 3 samples on a smaller world. */
  static const int tiny[][2] = { { 23, 19 }, { 11, 9 }, { 8, 7 }, { 23, 1 }, { 1, 19 } };
  const int w = 61, h = 47, sw = 23, sh = 19;
  float *hm = malloc (sizeof (float) * w * h);
  double *whole = malloc (sizeof (double) * w * h), *tiled = malloc (sizeof (double) * w * h);
  size_t worst = 0;

  for (int r = 0; r < 2; r++)
    {
      TgFlowOpts o = { .routing = r == 0 ? TG__FLOW_MFD : TG__FLOW_D8, .exponent = 1.1 };
      const char *rname = r == 0 ? "mfd" : "d8";
      for (int kind = 0; kind < T_COUNT; kind++)
        for (int size = 0; size < 2; size++)
          {
            int ww = size ? sw : w, wh = size ? sh : h;
            int nt = size ? TG_N_ELEMENTS (tiny) : TG_N_ELEMENTS (tilings);
            make_terrain (kind, ww, wh, hm);
            TG_CHECK (tg__flow_whole (&o, hm, ww, wh, whole) == 0);
            for (int k = 0; k < nt; k++)
              {
                int nx = size ? tiny[k][0] : tilings[k][0], ny = size ? tiny[k][1] : tilings[k][1];
                size_t bytes = 0;
                int rc;
                memset (tiled, 0xff, sizeof (double) * ww * wh);
                rc = run_tiled (&o, hm, ww, wh, nx, ny, tiled, &bytes, NULL, NULL);
                TG_CHECK_MSG (rc == 0, "%s, %s %dx%d, %d x %d tiles: error %d", rname,
                              terrain_names[kind], ww, wh, nx, ny, rc);
                if (rc == 0)
                  {
                    int diff = 0;
                    for (size_t i = 0; i < (size_t) ww * wh; i++)
                      diff += memcmp (&whole[i], &tiled[i], sizeof (double)) != 0;
                    TG_CHECK_MSG (diff == 0, "%s, %s %dx%d, %d x %d tiles: %d samples differ",
                                  rname, terrain_names[kind], ww, wh, nx, ny, diff);
                  }
                if (!size && nx * ny == 16 && bytes > worst)
                  worst = bytes;
              }
          }
    }
  fprintf (stderr, "  most a tile job wrote in one step (4 x 4 tiles of ~15 x 12): %zu bytes\n",
           worst);
  free (hm);
  free (whole);
  free (tiled);
}

/* The reduce of the flats holds one tile's list and border-sized arrays:
 * for a lake over most of a world growing at a fixed tile size, its
 * working bytes stay within a few bytes a tile sample plus a few a border
 * sample, while the lists of all tiles (which it used to hold at once)
 * grow with the world. */
static void
test_flow_flats_reduce_bounded (void)
{
  const int tile = 48;
  TgFlowOpts o = { .routing = TG__FLOW_D8, .exponent = 1.1 };

  for (int nt = 2; nt <= 8; nt *= 2)
    {
      int w = nt * tile;
      float *hm = malloc (sizeof (float) * w * w);
      double *whole = malloc (sizeof (double) * w * w), *tiled = malloc (sizeof (double) * w * w);
      size_t flats = 0, lists = 0, border = 0, bound;
      int rc;
      make_terrain (T_BIG_LAKE, w, w, hm);
      TG_CHECK (tg__flow_whole (&o, hm, w, w, whole) == 0);
      rc = run_tiled (&o, hm, w, w, nt, nt, tiled, NULL, &flats, &lists);
      TG_CHECK_MSG (rc == 0, "%d x %d tiles: error %d", nt, nt, rc);
      TG_CHECK (rc != 0 || memcmp (whole, tiled, sizeof (double) * w * w) == 0);
      border = (size_t) nt * nt * tg__flow_border_count (tile, tile);
      bound = 64 * (size_t) tile * tile + 32 * border + 64 * (size_t) nt * nt;
      fprintf (stderr, "  %dx%d, %d x %d tiles: the reduce held %zu bytes (bound %zu), lists %zu\n",
               w, w, nt, nt, flats, bound, lists);
      TG_CHECK_MSG (flats > 0 && flats <= bound, "%d x %d tiles: %zu bytes", nt, nt, flats);
      if (nt == 8)
        TG_CHECK (flats < lists / 2);
      free (hm);
      free (whole);
      free (tiled);
    }
}

static bool
always_cancelled (void *ctx)
{
  (*(int *) ctx)++;
  return true;
}

/* The fill of a tile (steps 0 and 1) looks at the cancel hook as it
 * floods: a tile of 512² samples stops, and says so. */
static void
test_flow_tile_fill_cancels (void)
{
  const int w = 512;
  int asked = 0;
  TgFlowOpts o = { .routing = TG__FLOW_D8, .exponent = 1.1, .cancelled = always_cancelled,
                   .parallel_ctx = &asked };
  TgTiling t = { 1, 1, 0, 0 };
  Store s;
  TgFlowBlobs io = { &s, store_put, store_get };
  float *hm = malloc (sizeof (float) * w * w);
  double *acc = malloc (sizeof (double) * w * w);

  store_init (&s, 64);
  make_terrain (T_BIG_LAKE, w, w, hm);
  TG_CHECK_INT_EQ (tg__flow_tile_step (&o, &t, w, w, hm, 0, &io, acc), TG_ECANCELLED);
  TG_CHECK (asked > 0);
  store_clear (&s);
  free (hm);
  free (acc);
}

/* A parallel hook that runs the chunks on this thread, last first (the
 * order threads might take them in). */
static int
backwards (void *ctx, int n, int grain, void (*fn) (void *, int, int), void *user)
{
  (*(int *) ctx)++;
  for (int b = (n - 1) / grain * grain; b >= 0; b -= grain)
    fn (user, b, b + grain < n ? b + grain : n);
  return 0;
}

/* The textbook Priority-Flood (Barnes, Lehman and Mulla 2014, without
 * the pit queue or the slope tracing), on the binary heap: the reference
 * for the floods. */
static void
reference_fill (const float *hm, int w, int h, float *filled)
{
  TgFlowHeap q = { 0 };
  uint8_t *done = calloc ((size_t) w * h, 1);

  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      if (x == 0 || y == 0 || x == w - 1 || y == h - 1)
        {
          size_t i = (size_t) y * w + x;
          done[i] = 1;
          filled[i] = hm[i];
          TG_CHECK (tg__flow_heap_push (&q, hm[i], (int32_t) i) == 0);
        }
  while (q.n > 0)
    {
      TgFlowHeapItem c = tg__flow_heap_pop (&q);
      int cx = c.idx % w, cy = c.idx / w;
      for (int k = 0; k < 8; k++)
        {
          int x = cx + tg__flow_dx[k], y = cy + tg__flow_dy[k];
          size_t i = (size_t) y * w + x;
          if (x < 0 || y < 0 || x >= w || y >= h || done[i])
            continue;
          done[i] = 1;
          filled[i] = hm[i] > c.key ? hm[i] : c.key;
          TG_CHECK (tg__flow_heap_push (&q, filled[i], (int32_t) i) == 0);
        }
    }
  free (q.a);
  free (done);
}

/* The floods (the whole one, the one on threads, and a tile's flood over
 * the whole world, whose local fill is then the fill) give the reference
 * fill's bytes on every terrain, on white noise (rough: the slopes the
 * floods trace are short) and on a cone with a crater (long ones). */
static void
test_flow_fill_reference (void)
{
  static const int sizes[][2] = { { 97, 130 }, { 200, 257 }, { 3, 300 } };

  for (size_t k = 0; k < TG_N_ELEMENTS (sizes); k++)
    for (int kind = 0; kind < T_COUNT + 2; kind++)
      {
        int w = sizes[k][0], h = sizes[k][1], calls = 0, diff[3] = { 0, 0, 0 };
        size_t n = (size_t) w * h;
        TgFlowOpts o = { .routing = TG__FLOW_MFD, .exponent = 1.1, .parallel = backwards,
                         .parallel_ctx = &calls };
        float *hm = malloc (sizeof (float) * n), *ref = malloc (sizeof (float) * n);
        float *got = malloc (sizeof (float) * n);
        int32_t *label = malloc (sizeof (int32_t) * n);
        const char *name = kind < T_COUNT ? terrain_names[kind]
                           : kind == T_COUNT ? "white noise" : "cone with a crater";
        if (kind < T_COUNT)
          make_terrain (kind, w, h, hm);
        else
          for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
              {
                double r = hypot (x - 0.5 * w, y - 0.5 * h) / (0.5 * w);
                hm[(size_t) y * w + x]
                  = kind == T_COUNT ? (float) hash01 (x, y, 11)
                                    : (float) (1.0 - r + (r < 0.3 ? 2.0 * r - 0.5 : 0.0)
                                               + 0.001 * hash01 (x, y, 12));
              }
        reference_fill (hm, w, h, ref);
        for (int f = 0; f < 3; f++)
          {
            memset (got, 0xff, sizeof (float) * n);
            if (f == 0)
              TG_CHECK (tg__flow_fill (NULL, hm, w, h, got) == 0);
            else if (f == 1)
              TG_CHECK (tg__flow_fill_parallel (&o, hm, w, h, got) == 0);
            else
              TG_CHECK (tg__flow_fill_tile (NULL, hm, w, h, got, label, NULL, NULL) == 0);
            for (size_t i = 0; i < n; i++)
              diff[f] += memcmp (&ref[i], &got[i], sizeof (float)) != 0;
          }
        TG_CHECK_MSG (diff[0] == 0 && diff[1] == 0 && diff[2] == 0,
                      "%s %dx%d: filled heights differ from the reference: %d (whole), %d "
                      "(threads), %d (one tile)",
                      name, w, h, diff[0], diff[1], diff[2]);
        free (hm);
        free (ref);
        free (got);
        free (label);
      }
}

/* The whole fill on several threads (bands of rows flooded as tiles, then
 * the spill reduce) gives the one flood's bytes, on every terrain and on
 * sizes that cut into 2 to 4 bands of unequal heights. */
static void
test_flow_fill_parallel_exact (void)
{
  static const int sizes[][2] = { { 97, 130 }, { 200, 257 }, { 3, 300 }, { 151, 199 } };

  for (size_t k = 0; k < TG_N_ELEMENTS (sizes); k++)
    for (int kind = 0; kind < T_COUNT; kind++)
      {
        int w = sizes[k][0], h = sizes[k][1], calls = 0, diff = 0;
        TgFlowOpts o = { .routing = TG__FLOW_MFD, .exponent = 1.1, .parallel = backwards,
                         .parallel_ctx = &calls };
        float *hm = malloc (sizeof (float) * w * h), *one = malloc (sizeof (float) * w * h);
        float *par = malloc (sizeof (float) * w * h);
        make_terrain (kind, w, h, hm);
        TG_CHECK (tg__flow_fill (NULL, hm, w, h, one) == 0);
        memset (par, 0xff, sizeof (float) * w * h);
        TG_CHECK (tg__flow_fill_parallel (&o, hm, w, h, par) == 0);
        TG_CHECK_MSG (calls >= 2, "%s %dx%d: the bands were not run in parallel jobs",
                      terrain_names[kind], w, h);
        for (size_t i = 0; i < (size_t) w * h; i++)
          diff += memcmp (&one[i], &par[i], sizeof (float)) != 0;
        TG_CHECK_MSG (diff == 0, "%s %dx%d: %d filled heights differ", terrain_names[kind], w, h,
                      diff);
        free (hm);
        free (one);
        free (par);
      }
}

/* The dense flat ranks of a whole world (two walks on threads, seeds
 * joined into flats by union-find) give, on one thread and on several,
 * the ranks of the sparse walk (the tiled reduce's) over the list of all
 * flat samples with their flags found here by brute force, and -1 off
 * the flats, on every terrain. */
static void
test_flow_ranks_dense_sparse (void)
{
  static const int sizes[][2] = { { 97, 130 }, { 61, 47 } };

  for (size_t k = 0; k < TG_N_ELEMENTS (sizes); k++)
    for (int kind = 0; kind < T_COUNT; kind++)
      {
        int w = sizes[k][0], h = sizes[k][1], calls = 0, diff = 0;
        size_t n = (size_t) w * h, nf = 0;
        TgFlowOpts one = { .routing = TG__FLOW_MFD, .exponent = 1.1 };
        TgFlowOpts par = { .routing = TG__FLOW_MFD, .exponent = 1.1, .parallel = backwards,
                           .parallel_ctx = &calls };
        float *hm = malloc (sizeof (float) * n), *f = malloc (sizeof (float) * n);
        float *level = malloc (sizeof (float) * n);
        int32_t *r1 = malloc (sizeof (int32_t) * n), *r2 = malloc (sizeof (int32_t) * n);
        int32_t *rs = malloc (sizeof (int32_t) * n);
        int64_t *gidx = malloc (sizeof (int64_t) * n);
        uint8_t *flat = calloc (n, 1), *flags = malloc (n);
        make_terrain (kind, w, h, hm);
        TG_CHECK (tg__flow_fill (NULL, hm, w, h, f) == 0);
        for (int y = 1; y < h - 1; y++)
          for (int x = 1; x < w - 1; x++)
            {
              bool lower = false;
              for (int q = 0; q < 8; q++)
                lower |= f[(y + tg__flow_dy[q]) * w + x + tg__flow_dx[q]] < f[y * w + x];
              flat[y * w + x] = !lower;
            }
        for (int y = 0; y < h; y++)
          for (int x = 0; x < w; x++)
            if (flat[y * w + x])
              {
                uint8_t fl = 0;
                for (int q = 0; q < 8; q++)
                  {
                    int nb = (y + tg__flow_dy[q]) * w + x + tg__flow_dx[q];
                    if (f[nb] > f[y * w + x])
                      fl |= TG__FLAT_HIGH;
                    else if (f[nb] == f[y * w + x] && !flat[nb])
                      fl |= TG__FLAT_DRAIN;
                  }
                gidx[nf] = (int64_t) y * w + x;
                level[nf] = f[y * w + x];
                flags[nf++] = fl;
              }
        TG_CHECK (tg__flow_ranks_sparse (gidx, level, flags, nf, w, rs) == 0);
        TG_CHECK (tg__flow_ranks (&one, f, w, h, r1) == 0);
        TG_CHECK (tg__flow_ranks (&par, f, w, h, r2) == 0);
        TG_CHECK_MSG (nf > 0 && calls >= 2, "%s %dx%d: %zu flat samples, %d parallel calls",
                      terrain_names[kind], w, h, nf, calls);
        for (size_t i = 0, s = 0; i < n; i++)
          {
            int32_t want = flat[i] ? rs[s++] : -1;
            diff += (r1[i] != want) + (r2[i] != want);
          }
        TG_CHECK_MSG (diff == 0, "%s %dx%d: %d ranks differ from the sparse walk's",
                      terrain_names[kind], w, h, diff);
        free (hm);
        free (f);
        free (level);
        free (r1);
        free (r2);
        free (rs);
        free (gidx);
        free (flat);
        free (flags);
      }
}

/* The MFD steps' kernels (TG_FLOW_ISA: generic SSE2, AVX2, the best,
 * which may be AVX-512) give the same bytes, on every terrain and on
 * widths that leave every kernel a tail of samples. */
static void
test_flow_kernels_agree (void)
{
  static const int sizes[][2] = { { 97, 61 }, { 203, 130 }, { 4, 40 } };
  static const char *const isas[] = { "generic", "avx2", NULL };

  for (size_t k = 0; k < TG_N_ELEMENTS (sizes); k++)
    for (int kind = 0; kind < T_COUNT; kind++)
      {
        int w = sizes[k][0], h = sizes[k][1];
        TgFlowOpts o = { .routing = TG__FLOW_MFD, .exponent = 1.7 };
        float *hm = malloc (sizeof (float) * w * h);
        double *acc[3];
        make_terrain (kind, w, h, hm);
        for (int i = 0; i < 3; i++)
          {
            acc[i] = malloc (sizeof (double) * w * h);
            if (isas[i])
              setenv ("TG_FLOW_ISA", isas[i], 1);
            else
              unsetenv ("TG_FLOW_ISA");
            TG_CHECK (tg__flow_whole (&o, hm, w, h, acc[i]) == 0);
          }
        for (int i = 1; i < 3; i++)
          {
            int diff = 0;
            for (size_t s = 0; s < (size_t) w * h; s++)
              diff += memcmp (&acc[0][s], &acc[i][s], sizeof (double)) != 0;
            TG_CHECK_MSG (diff == 0, "%s %dx%d: %s and %s differ in %d samples",
                          terrain_names[kind], w, h, isas[0], isas[i] ? isas[i] : "the best",
                          diff);
          }
        for (int i = 0; i < 3; i++)
          free (acc[i]);
        free (hm);
      }
  unsetenv ("TG_FLOW_ISA");
}

/* The same where the shares' sums vanish: relief of ~1e-30 at exponent
 * 10 makes drop^10 underflow to 0 for every receiver of a slope sample,
 * whose water then all goes to the steepest (the flats' drops, ranks,
 * do not underflow), and the kernels still agree; and no share is NaN
 * (0 / 0): every sample's area is at least its own. */
static void
test_flow_kernels_agree_underflow (void)
{
  static const int sizes[][2] = { { 97, 61 }, { 203, 130 } };
  static const char *const isas[] = { "generic", "avx2", NULL };

  for (size_t k = 0; k < TG_N_ELEMENTS (sizes); k++)
    for (int kind = 0; kind < T_COUNT; kind++)
      {
        int w = sizes[k][0], h = sizes[k][1];
        TgFlowOpts o = { .routing = TG__FLOW_MFD, .exponent = 10.0 };
        float *hm = malloc (sizeof (float) * w * h);
        double *acc[3];
        make_terrain (kind, w, h, hm);
        for (size_t i = 0; i < (size_t) w * h; i++)
          hm[i] *= 1e-30f;
        for (int i = 0; i < 3; i++)
          {
            acc[i] = malloc (sizeof (double) * w * h);
            if (isas[i])
              setenv ("TG_FLOW_ISA", isas[i], 1);
            else
              unsetenv ("TG_FLOW_ISA");
            TG_CHECK (tg__flow_whole (&o, hm, w, h, acc[i]) == 0);
          }
        for (int i = 1; i < 3; i++)
          {
            int diff = 0;
            for (size_t s = 0; s < (size_t) w * h; s++)
              diff += memcmp (&acc[0][s], &acc[i][s], sizeof (double)) != 0;
            TG_CHECK_MSG (diff == 0, "%s %dx%d, relief 1e-30: %s and %s differ in %d samples",
                          terrain_names[kind], w, h, isas[0], isas[i] ? isas[i] : "the best",
                          diff);
          }
        for (int i = 0; i < 3; i++)
          {
            int bad = 0;
            for (size_t s = 0; s < (size_t) w * h; s++)
              bad += !(acc[i][s] >= 1.0 - 1e-6);
            TG_CHECK_MSG (bad == 0, "%s %dx%d, relief 1e-30, %s: %d samples drain less than "
                          "themselves (or NaN)", terrain_names[kind], w, h,
                          isas[i] ? isas[i] : "the best", bad);
          }
        for (int i = 0; i < 3; i++)
          free (acc[i]);
        free (hm);
      }
  unsetenv ("TG_FLOW_ISA");
}

/* The MFD power (no libm): within 2e-13 of libm's pow (itself within an
 * ulp) from 1e-30 to 1e30 for exponents 0.1 to 10, results outside
 * [2^-1021, 2^1023) aside, and within 5e-15 for the MFD's drops (1e-6 to
 * 1e6, exponent 1.1); exact at P = 1 and at X = 1; 0 and infinity
 * beyond that range; and the vector kernels (TG_FLOW_ISA) give its bits,
 * on lengths that leave each kernel a tail. */
static void
test_flow_pow (void)
{
  static const double ps[] = { 0.1, 0.5, 1.1, 1.7, 3.0, 10.0 };
  static const char *const isas[] = { "generic", "avx2", NULL };
  double worst = 0.0, worst_x = 0.0, worst_p = 0.0, worst_mfd = 0.0;
  int n = 0, diff = 0;

  for (size_t k = 0; k < TG_N_ELEMENTS (ps); k++)
    for (double x = 1e-30; x < 1e30; x *= 1.000123456789)
      {
        double a = tg__flow_pow (x, ps[k]), b = pow (x, ps[k]), e;
        if (!(b >= 0x1p-1021 && b < 0x1p1023))
          continue;
        e = fabs (a - b) / b;
        n++;
        if (ps[k] == 1.1 && x > 1e-6 && x < 1e6 && e > worst_mfd)
          worst_mfd = e;
        if (e > worst)
          {
            worst = e;
            worst_x = x;
            worst_p = ps[k];
          }
      }
  TG_CHECK_MSG (worst < 2e-13, "relative error %.3g at %.17g^%g", worst, worst_x, worst_p);
  TG_CHECK_MSG (worst_mfd < 5e-15, "relative error %.3g for the MFD's drops", worst_mfd);
  fprintf (stderr, "  %d powers, largest relative error %.3g (%.6g^%g), %.3g for x^1.1\n", n,
           worst, worst_x, worst_p, worst_mfd);
  for (double x = 1e-6; x < 1e6; x *= 1.37)
    TG_CHECK (tg__flow_pow (x, 1.0) == x);
  for (size_t k = 0; k < TG_N_ELEMENTS (ps); k++)
    TG_CHECK (tg__flow_pow (1.0, ps[k]) == 1.0);
  TG_CHECK (tg__flow_pow (1e-300, 10.0) == 0.0);
  TG_CHECK (tg__flow_pow (0x1p-1074, 0.5) > 0.0); /* a subnormal X */
  TG_CHECK (fabs (tg__flow_pow (0x1p-1074, 0.5) / pow (0x1p-1074, 0.5) - 1.0) < 1e-13);
  TG_CHECK (isinf (tg__flow_pow (1e300, 10.0)));

  for (int i = 0; i < 3; i++)
    for (size_t len = 0; len < 40; len += 3)
      {
        double v[40], ref[40];
        if (isas[i])
          setenv ("TG_FLOW_ISA", isas[i], 1);
        else
          unsetenv ("TG_FLOW_ISA");
        for (size_t j = 0; j < len; j++)
          v[j] = ref[j] = exp ((double) (j * 7 % 40) - 20.0) * (1.0 + 0.01 * (double) len);
        tg__flow_pow_n (v, len, 1.1);
        for (size_t j = 0; j < len; j++)
          diff += memcmp (&v[j], (double[]) { tg__flow_pow (ref[j], 1.1) }, sizeof (double)) != 0;
      }
  unsetenv ("TG_FLOW_ISA");
  TG_CHECK_MSG (diff == 0, "%d vector powers differ from the scalar one", diff);
}

/* A slope down to a valley along rows 127 and 128, the lower of the two
 * samples of each column alternating between them, so the river zigzags
 * across the row where the parallel sums cut their first band (128 rows)
 * hundreds of times, running east. */
static void
make_zigzag (int w, int h, float *hm)
{
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        double z = 1.0 + 0.01 * fabs (y - 127.5) - 0.001 * x;
        if ((y == 127 && x % 2 == 1) || (y == 128 && x % 2 == 0))
          z += 0.0008;
        hm[(size_t) y * w + x] = (float) z;
      }
}

/* The D8 sums on several threads (bands of rows, the water crossing band
 * edges passed on in rounds, the rest on one thread after many) give the
 * one thread's bytes, on every terrain and on a river that crosses a band
 * edge at every step. */
static void
test_flow_sums_parallel_exact (void)
{
  static const int sizes[][2] = { { 150, 300 }, { 600, 260 }, { 31, 129 } };

  for (size_t k = 0; k < TG_N_ELEMENTS (sizes); k++)
    for (int kind = 0; kind <= T_COUNT; kind++)
      {
        int w = sizes[k][0], h = sizes[k][1], calls = 0, diff = 0;
        TgFlowOpts one = { .routing = TG__FLOW_D8, .exponent = 1.1 };
        TgFlowOpts par = { .routing = TG__FLOW_D8, .exponent = 1.1, .parallel = backwards,
                           .parallel_ctx = &calls };
        float *hm = malloc (sizeof (float) * w * h);
        double *a = malloc (sizeof (double) * w * h), *b = malloc (sizeof (double) * w * h);
        const char *name = kind < T_COUNT ? terrain_names[kind] : "zigzag river";
        if (kind < T_COUNT)
          make_terrain (kind, w, h, hm);
        else
          make_zigzag (w, h, hm);
        for (int r = 0; r < 2; r++)
          {
            one.routing = par.routing = r == 0 ? TG__FLOW_D8 : TG__FLOW_MFD;
            TG_CHECK (tg__flow_whole (&one, hm, w, h, a) == 0);
            memset (b, 0xff, sizeof (double) * w * h);
            TG_CHECK (tg__flow_whole (&par, hm, w, h, b) == 0);
            for (size_t i = 0; i < (size_t) w * h; i++)
              diff += memcmp (&a[i], &b[i], sizeof (double)) != 0;
          }
        TG_CHECK_MSG (diff == 0, "%s %dx%d: %d samples differ", name, w, h, diff);
        if (kind == T_COUNT && w == 600)
          {
            /* The river carries the whole slope east along the valley. */
            TG_CHECK (a[(size_t) 127 * w + w - 1] + a[(size_t) 128 * w + w - 1] > 0.4 * w * h);
          }
        free (hm);
        free (a);
        free (b);
      }
}

/* The floods' radix queue takes items in the binary heap's order: the
 * smallest key first, the smallest index among equal keys, with keys
 * pushed above the last taken as a flood does and many ties. */
static void
test_flow_queue_order (void)
{
  TgFlowQueue q = { 0 };
  TgFlowHeap ref = { 0 };
  uint32_t seed = 12345;
  int taken = 0, wrong = 0;
  float level = -5.0f;

  for (int round = 0; round < 20000; round++)
    {
      int pushes;
      seed = seed * 1664525u + 1013904223u;
      pushes = round < 100 ? 8 : (int) (seed >> 29);
      for (int k = 0; k < pushes; k++)
        {
          float key;
          int32_t idx;
          seed = seed * 1664525u + 1013904223u;
          /* Few distinct keys above the level: many ties. */
          key = level + (float) ((seed >> 8) % 16) * 0.25f + 0.25f;
          idx = (int32_t) ((seed >> 3) % 100000);
          TG_CHECK (tg__flow_queue_push (&q, tg__flow_key_f32 (key), idx) == 0);
          TG_CHECK (tg__flow_heap_push (&ref, key, idx) == 0);
        }
      for (int k = 0; k < 6 && ref.n > 0; k++)
        {
          TgFlowHeapItem it = tg__flow_heap_pop (&ref);
          int32_t got = tg__flow_queue_pop (&q);
          wrong += got != it.idx;
          taken++;
          level = it.key;
        }
    }
  while (ref.n > 0)
    {
      wrong += tg__flow_queue_pop (&q) != tg__flow_heap_pop (&ref).idx;
      taken++;
    }
  TG_CHECK_INT_EQ ((int) q.n, 0);
  TG_CHECK_MSG (wrong == 0, "%d of %d taken out of order", wrong, taken);
  fprintf (stderr, "  %d items taken in the heap's order\n", taken);
  tg__flow_queue_free (&q);
  free (ref.a);
}

int
main (void)
{
  TG_RUN (test_flow_pow);
  TG_RUN (test_flow_queue_order);
  TG_RUN (test_flow_fill_reference);
  TG_RUN (test_flow_fill_parallel_exact);
  TG_RUN (test_flow_ranks_dense_sparse);
  TG_RUN (test_flow_sums_parallel_exact);
  TG_RUN (test_flow_kernels_agree);
  TG_RUN (test_flow_kernels_agree_underflow);
  TG_RUN (test_flow_tiled_exact);
  TG_RUN (test_flow_flats_reduce_bounded);
  TG_RUN (test_flow_tile_fill_cancels);
  return tgtest_result ();
}
