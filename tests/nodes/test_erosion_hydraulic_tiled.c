/* Tests for the tiled scheme of erosion.hydraulic on plain float maps:
 * every step of tg__hydraulic_tile_step run over an NX x NY tiling, with
 * an in-memory blob store that refuses blobs of the stage being run (the
 * jobs of a stage run at once), gives the bytes of the whole-world
 * tg__hydraulic_simulate for uneven tile counts, tiles narrower than the
 * halo, 1 and 2 threads and any job order; the owned droplet counts add
 * up to the whole run's; a job holds no more than its tile and halos, the
 * same for a larger world; and the store holds two steps' blobs, not all. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/tgraph.h>

#include "../../engine/nodes/erosion_hydraulic.h"
#include "tgtest.h"

/* --- an in-memory blob store ----------------------------------------------- */

typedef struct
{
  int ix, iy, stage;
  char name[32];
  void *data;
  size_t size;
} Blob;

typedef struct
{
  Blob *b;
  int n, cap;
  int stage;         /* the stage being run */
  int ix, iy;        /* the job being run */
  size_t bytes, peak;
} Store;

static int
store_get (void *user, int ix, int iy, const char *name, void **data, size_t *size)
{
  Store *st = user;

  for (int k = 0; k < st->n; k++)
    if (st->b[k].ix == ix && st->b[k].iy == iy && strcmp (st->b[k].name, name) == 0)
      {
        /* A job of this stage may not see what another job of it wrote. */
        if (st->b[k].stage >= st->stage)
          return TG_EMISSING;
        *data = malloc (st->b[k].size);
        memcpy (*data, st->b[k].data, st->b[k].size);
        *size = st->b[k].size;
        return 0;
      }
  return TG_EMISSING;
}

static int
store_put (void *user, const char *name, const void *data, size_t size)
{
  Store *st = user;
  Blob *b;

  for (int k = 0; k < st->n; k++)
    if (st->b[k].ix == st->ix && st->b[k].iy == st->iy && strcmp (st->b[k].name, name) == 0)
      return TG_EINVAL; /* written twice */
  if (st->n == st->cap)
    {
      st->cap = st->cap ? 2 * st->cap : 64;
      st->b = realloc (st->b, sizeof (Blob) * (size_t) st->cap);
    }
  b = &st->b[st->n++];
  b->ix = st->ix;
  b->iy = st->iy;
  b->stage = st->stage;
  snprintf (b->name, sizeof b->name, "%s", name);
  b->data = malloc (size);
  memcpy (b->data, data, size);
  b->size = size;
  st->bytes += size;
  st->peak = st->bytes > st->peak ? st->bytes : st->peak;
  return 0;
}

/* Dropping a blob that a job of this stage may still read (one written
 * by the stage before or this one), or another tile's, is a bug. */
static int
store_drop (void *user, const char *name)
{
  Store *st = user;

  for (int k = 0; k < st->n; k++)
    if (st->b[k].ix == st->ix && st->b[k].iy == st->iy && strcmp (st->b[k].name, name) == 0)
      {
        if (st->b[k].stage >= st->stage - 1)
          return TG_EINVAL;
        st->bytes -= st->b[k].size;
        free (st->b[k].data);
        st->b[k] = st->b[--st->n];
        return 0;
      }
  return 0; /* dropped before: a rerun */
}

static void
store_clear (Store *st)
{
  for (int k = 0; k < st->n; k++)
    free (st->b[k].data);
  free (st->b);
  memset (st, 0, sizeof *st);
}

/* --- runners ---------------------------------------------------------------- */

static int
run_forward (void *ctx, int n, void (*fn) (void *, int, int), void *user)
{
  (void) ctx;
  for (int k = 0; k < n; k++)
    fn (user, k, k + 1);
  return 0;
}

typedef struct
{
  int n;
  void (*fn) (void *, int, int);
  void *user;
  atomic_int next;
} Work;

static void *
worker (void *arg)
{
  Work *w = arg;
  int k;

  while ((k = atomic_fetch_add (&w->next, 1)) < w->n)
    w->fn (w->user, k, k + 1);
  return NULL;
}

/* Two threads taking chunks as they come. */
static int
run_two (void *ctx, int n, void (*fn) (void *, int, int), void *user)
{
  Work w = { n, fn, user, 0 };
  pthread_t t;

  (void) ctx;
  pthread_create (&t, NULL, worker, &w);
  worker (&w);
  pthread_join (t, NULL);
  return 0;
}

/* --- terrains and setups ------------------------------------------------------ */

static float *
terrain (int kind, int w, int h)
{
  float *m = malloc (sizeof (float) * (size_t) w * h);

  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        double u = (double) x / w, v = (double) y / h, z;
        uint32_t k = tg_hash2 (17u + (uint32_t) kind, x, y);
        if (kind == 0) /* ridges and valleys */
          z = 0.5 + 0.2 * sin (11.0 * u + 3.0 * sin (7.0 * v)) * cos (9.0 * v) + 0.3 * u * v;
        else if (kind == 1) /* a cone: droplets run off every edge */
          z = 1.0 - 1.2 * sqrt ((u - 0.5) * (u - 0.5) + (v - 0.45) * (v - 0.45));
        else /* a tilted plane with flats and noise */
          z = floor (8.0 * (0.6 * u + 0.4 * v)) / 8.0 + 0.002 * tg_hash_unit (k);
        m[(size_t) y * w + x] = (float) z;
      }
  return m;
}

/* KIND 0: the node's kind of defaults, a 48-step lifetime; 1: short
 * droplets with a wide brush, so tiles can be wider than the halo. */
static void
setup (TgHydraulicSetup *s, int kind, long long droplets)
{
  memset (s, 0, sizeof *s);
  s->seed = 99 + (uint32_t) kind;
  s->droplets = droplets;
  s->rounds = kind == 0 ? 4 : 3;
  s->max_steps = kind == 0 ? 48 : 10;
  s->inertia = 0.1f;
  s->capacity = 0.002f;
  s->min_slope = 0.01f;
  s->erode = 0.3f;
  s->deposit = 0.3f;
  s->evaporate = 0.98f;
  s->friction = 0.9f;
  s->gravity = 2.0f * 9.81f * 300.0f;
  s->height_scale = 300.0f;
  s->cell_m = 4.0f;
  s->brush_radius = kind == 0 ? 2.5f : 4.0f;
}

typedef struct
{
  float *height, *flow, *src; /* the stitched world */
  TgHydraulicStats owned;     /* summed over the jobs */
  long long computed;
  size_t max_work;            /* over all jobs and steps */
  int max_tile_w, max_tile_h;
  size_t store_peak;
} Tiled;

/* Runs every step of the scheme over an NX x NY tiling of IN (W x H),
 * the jobs of a stage in reverse order when BACKWARD. */
static int
run_tiled (const TgHydraulicSetup *s, const float *in, int w, int h, int nx, int ny,
           TgHydraulicParallel par, bool backward, Tiled *out)
{
  int phases = tg__hydraulic_phases (s, w, h), steps = phases > 0 ? phases : 1;
  int halo = tg__hydraulic_halo (s);
  Store st = { 0 };
  TgTiling t = { nx, ny, 0, 0 };
  size_t n = (size_t) w * h;
  int rc = 0;

  memset (out, 0, sizeof *out);
  out->height = malloc (sizeof (float) * n);
  out->flow = malloc (sizeof (float) * n);
  out->src = malloc (sizeof (float) * n);
  for (int step = 0; step < steps && rc == 0; step++)
    {
      st.stage = step;
      for (int q = 0; q < nx * ny && rc == 0; q++)
        {
          int job = backward ? nx * ny - 1 - q : q;
          int ix = job % nx, iy = job / nx;
          int x0 = tg_tile_start (w, nx, ix), x1 = tg_tile_start (w, nx, ix + 1);
          int y0 = tg_tile_start (h, ny, iy), y1 = tg_tile_start (h, ny, iy + 1);
          int tw = x1 - x0, th = y1 - y0;
          TgHydraulicBlobs io = { &st, store_get, store_put, store_drop };
          TgHydraulicStepInfo info;
          TgHydraulicRect ir = { 0 };
          float *input = NULL, *hb = NULL, *fb = NULL, *sb = NULL, *chan = NULL;
          bool last = step == steps - 1;
          /* A channel map comes with the input (at step 0, over IR). */
          TgHydraulicSetup js = *s;

          t.ix = ix;
          t.iy = iy;
          st.ix = ix;
          st.iy = iy;
          if (step == 0)
            {
              /* What the engine gives: the tile grown by the halo, cut at
               * the world's edge. */
              ir.x0 = x0 - halo > 0 ? x0 - halo : 0;
              ir.y0 = y0 - halo > 0 ? y0 - halo : 0;
              ir.w = (x1 + halo < w ? x1 + halo : w) - ir.x0;
              ir.h = (y1 + halo < h ? y1 + halo : h) - ir.y0;
              input = malloc (sizeof (float) * (size_t) ir.w * ir.h);
              for (int y = 0; y < ir.h; y++)
                memcpy (input + (size_t) y * ir.w, in + (size_t) (ir.y0 + y) * w + ir.x0,
                        sizeof (float) * (size_t) ir.w);
              if (s->channel)
                {
                  chan = malloc (sizeof (float) * (size_t) ir.w * ir.h);
                  for (int y = 0; y < ir.h; y++)
                    memcpy (chan + (size_t) y * ir.w, s->channel + (size_t) (ir.y0 + y) * w + ir.x0,
                            sizeof (float) * (size_t) ir.w);
                }
            }
          js.channel = chan;
          if (last)
            {
              hb = malloc (sizeof (float) * (size_t) tw * th);
              fb = malloc (sizeof (float) * (size_t) tw * th);
              sb = malloc (sizeof (float) * (size_t) tw * th);
            }
          rc = tg__hydraulic_tile_step (&js, w, h, &t, step, input, &ir, &io, hb, fb, sb, par,
                                        NULL, &info);
          TG_CHECK_MSG (rc == 0, "step %d of tile %d,%d of %dx%d: %s", step, ix, iy, nx, ny,
                        tg_strerror (rc));
          if (rc == 0 && last)
            for (int y = 0; y < th; y++)
              {
                size_t o = (size_t) (y0 + y) * w + x0;
                memcpy (out->height + o, hb + (size_t) y * tw, sizeof (float) * (size_t) tw);
                memcpy (out->flow + o, fb + (size_t) y * tw, sizeof (float) * (size_t) tw);
                memcpy (out->src + o, sb + (size_t) y * tw, sizeof (float) * (size_t) tw);
              }
          out->owned.droplets_run += info.owned.droplets_run;
          out->owned.steps += info.owned.steps;
          out->owned.eroded += info.owned.eroded;
          out->owned.deposited += info.owned.deposited;
          out->computed += info.droplets_computed;
          if (info.work_bytes > out->max_work)
            out->max_work = info.work_bytes;
          out->max_tile_w = tw > out->max_tile_w ? tw : out->max_tile_w;
          out->max_tile_h = th > out->max_tile_h ? th : out->max_tile_h;
          free (input);
          free (chan);
          free (hb);
          free (fb);
          free (sb);
        }
    }
  out->store_peak = st.peak;
  store_clear (&st);
  return rc;
}

static void
tiled_free (Tiled *t)
{
  free (t->height);
  free (t->flow);
  free (t->src);
}

/* What a job may hold: the state (height and flow) over its tile grown
 * by the halo, one tile's blob or copy, and its list of lattice tiles
 * (generously bounded).  Nothing here grows with the world. */
static size_t
work_bound (const TgHydraulicSetup *s, int tw, int th)
{
  size_t halo = (size_t) tg__hydraulic_halo (s), gw = tw + 2 * halo, gh = th + 2 * halo;

  return sizeof (float) * ((s->face_radius > 0 ? 3 : 2) * gw * gh + 2 * (size_t) tw * th)
         + 64 * (gw * gh / 4 + 64);
}

static void
check_tiled (const TgHydraulicSetup *s, int kind, int w, int h, int nx, int ny,
             const float *in, const float *whole, const float *whole_flow,
             const TgHydraulicStats *ws, TgHydraulicParallel par, bool backward)
{
  Tiled t;
  size_t n = (size_t) w * h;

  if (run_tiled (s, in, w, h, nx, ny, par, backward, &t) == 0)
    {
      TG_CHECK_MSG (memcmp (t.height, whole, sizeof (float) * n) == 0,
                    "terrain %d, %dx%d: height differs from the whole world", kind, nx, ny);
      TG_CHECK_MSG (memcmp (t.flow, whole_flow, sizeof (float) * n) == 0,
                    "terrain %d, %dx%d: flow differs from the whole world", kind, nx, ny);
      TG_CHECK_MSG (memcmp (t.src, in, sizeof (float) * n) == 0,
                    "terrain %d, %dx%d: the input does not come back", kind, nx, ny);
      TG_CHECK_MSG (t.owned.droplets_run == ws->droplets_run && t.owned.steps == ws->steps,
                    "%dx%d: owned droplets %lld (steps %lld), whole %lld (%lld)", nx, ny,
                    t.owned.droplets_run, t.owned.steps, ws->droplets_run, ws->steps);
      TG_CHECK_NEAR (t.owned.eroded, ws->eroded, 1e-9 * ws->eroded);
      /* The blobs held at once: every tile's input and two steps' state
       * (height and flow), never one per step. */
      TG_CHECK_MSG (t.store_peak <= sizeof (float) * (s->channel ? 6 : 5) * n,
                    "%dx%d: the blobs peaked at %zu bytes", nx, ny, t.store_peak);
      TG_CHECK_MSG (t.max_work <= work_bound (s, t.max_tile_w, t.max_tile_h),
                    "%dx%d: a job held %zu bytes, bound %zu", nx, ny, t.max_work,
                    work_bound (s, t.max_tile_w, t.max_tile_h));
      fprintf (stderr, "  terrain %d, %2dx%-2d: same bytes; %.2fx droplets computed, job <= %zu kB\n",
               kind, nx, ny, (double) t.computed / (double) ws->droplets_run,
               t.max_work >> 10);
    }
  tiled_free (&t);
}

static void
run_whole (const TgHydraulicSetup *s, const float *in, int w, int h, float **hm, float **flow,
           TgHydraulicStats *st)
{
  size_t n = (size_t) w * h;

  *hm = malloc (sizeof (float) * n);
  *flow = calloc (n, sizeof (float));
  memcpy (*hm, in, sizeof (float) * n);
  TG_CHECK_INT_EQ (tg__hydraulic_simulate (s, *hm, *flow, w, h, run_forward, NULL, st), 0);
}

/* Runs S and PLAIN (S without its option) whole: S's height must differ
 * from PLAIN's and its books balance.  Keeps S's result. */
static void
run_whole_option (const TgHydraulicSetup *s, const TgHydraulicSetup *plain, const float *in, int w,
                  int h, float **hm, float **flow, TgHydraulicStats *st)
{
  float *hm0, *flow0;
  TgHydraulicStats st0;

  run_whole (s, in, w, h, hm, flow, st);
  run_whole (plain, in, w, h, &hm0, &flow0, &st0);
  TG_CHECK (memcmp (*hm, hm0, sizeof (float) * (size_t) w * h) != 0);
  TG_CHECK_MSG (fabs (st->eroded - (st->deposited + st->carried + st->left)) < 1e-9 * st->eroded,
                "eroded %.12g, deposited %.12g + carried %.12g + left %.12g", st->eroded,
                st->deposited, st->carried, st->left);
  free (hm0);
  free (flow0);
}

static void
test_hydraulic_tiled_matches_whole (void)
{
  /* Long droplets (halo 213 cells) on 201 x 157: most tiles are narrower
   * than the halo. */
  static const int tilings0[][2] = { { 1, 1 }, { 2, 2 }, { 3, 2 }, { 1, 9 }, { 4, 4 } };
  /* Short droplets with a wide brush (halo 65): 2 x 2 tiles are wider. */
  static const int tilings1[][2] = { { 2, 2 }, { 3, 2 }, { 4, 4 }, { 7, 5 }, { 1, 9 },
                                     { 9, 1 }, { 16, 11 } };

  for (int kind = 0; kind < 3; kind++)
    {
      int w = kind == 1 ? 160 : 201, h = kind == 1 ? 224 : 157;
      float *in = terrain (kind, w, h);
      for (int sk = 0; sk < 2; sk++)
        {
          TgHydraulicSetup s;
          TgHydraulicStats ws;
          float *hm, *flow;
          int nt = sk == 0 ? TG_N_ELEMENTS (tilings0) : TG_N_ELEMENTS (tilings1);
          setup (&s, sk, sk == 0 ? 3000 : 6000);
          run_whole (&s, in, w, h, &hm, &flow, &ws);
          TG_CHECK (ws.eroded > 0.0 && ws.droplets_run == s.droplets);
          /* Sanity: something changed, and not everywhere the same way. */
          TG_CHECK (memcmp (hm, in, sizeof (float) * (size_t) w * h) != 0);
          for (int k = 0; k < nt; k++)
            {
              const int *tl = sk == 0 ? tilings0[k] : tilings1[k];
              /* Jobs in reverse order on two threads every other time. */
              check_tiled (&s, kind, w, h, tl[0], tl[1], in, hm, flow, &ws,
                           k % 2 ? run_two : run_forward, k % 2 == 1);
            }
          free (hm);
          free (flow);
        }
      free (in);
    }
}

/* A job's working set depends on its tile and the halo, not on the world:
 * 64 x 64 tiles of a 320 and of a 512 world (both with tiles whose halo
 * the world's edge does not cut) hold the same at most. */
static void
test_hydraulic_tiled_memory_bounded (void)
{
  size_t work[2] = { 0, 0 };
  int sides[2] = { 321, 513 };
  TgHydraulicSetup s;

  setup (&s, 1, 0);
  for (int k = 0; k < 2; k++)
    {
      int w = sides[k];
      float *in = terrain (0, w, w);
      Tiled t;
      s.droplets = (long long) (w - 1) * (w - 1) / 8; /* the same rain per area */
      if (run_tiled (&s, in, w, w, (w - 1) / 64, (w - 1) / 64, run_forward, false, &t) == 0)
        {
          work[k] = t.max_work;
          TG_CHECK (t.max_work <= work_bound (&s, t.max_tile_w, t.max_tile_h));
          fprintf (stderr, "  %d^2 world, %d^2 tiles: a job holds at most %zu kB\n", w,
                   t.max_tile_w, t.max_work >> 10);
        }
      tiled_free (&t);
      free (in);
    }
  TG_CHECK_MSG (work[1] <= work[0] + work[0] / 8, "%zu bytes at 513 vs %zu at 129", work[1],
                work[0]);
}

/* No rain: one step that gives the terrain back. */
static void
test_hydraulic_tiled_no_rain (void)
{
  TgHydraulicSetup s;
  float *in = terrain (2, 50, 40);
  Tiled t;

  setup (&s, 1, 0);
  TG_CHECK_INT_EQ (tg__hydraulic_phases (&s, 50, 40), 0);
  if (run_tiled (&s, in, 50, 40, 3, 2, run_forward, false, &t) == 0)
    {
      TG_CHECK (memcmp (t.height, in, sizeof (float) * 50 * 40) == 0);
      TG_CHECK (memcmp (t.src, in, sizeof (float) * 50 * 40) == 0);
      for (int k = 0; k < 50 * 40; k++)
        TG_CHECK (t.flow[k] == 0.0f);
    }
  tiled_free (&t);
  free (in);
}

/* With a channel map (the drainage input's): a wider brush on faces and
 * droplets pulled into drainage lines, and still the whole world's bytes
 * for any tiling, and books that balance. */
static void
test_hydraulic_tiled_channel (void)
{
  static const int tilings[][2] = { { 1, 1 }, { 2, 2 }, { 3, 2 }, { 7, 5 }, { 1, 9 } };
  int w = 201, h = 157;
  float *in = terrain (0, w, h), *chan = malloc (sizeof (float) * (size_t) w * h);
  float *hm, *flow;
  TgHydraulicSetup s, s0;
  TgHydraulicStats ws;

  /* Drainage lines across the ridges, faces at the floor between. */
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        double v = sin (0.21 * x + 0.5 * sin (0.07 * y));
        chan[(size_t) y * w + x] = (float) (v > 0.0 ? 0.35 + 1.65 * v * v : 0.35);
      }
  setup (&s, 1, 6000);
  s0 = s;
  s.channel = chan;
  s.channel_floor = 0.35f;
  s.face_radius = 9.0f;
  s.channel_pull = 3.0f;
  run_whole_option (&s, &s0, in, w, h, &hm, &flow, &ws);
  for (int k = 0; k < TG_N_ELEMENTS (tilings); k++)
    check_tiled (&s, 3, w, h, tilings[k][0], tilings[k][1], in, hm, flow, &ws,
                 k % 2 ? run_two : run_forward, k % 2 == 1);
  free (hm);
  free (flow);
  free (chan);
  free (in);
}

/* Gully feedback on S: droplets read the water of the droplets before
 * them (no channel map: the gullies' pull only). */
static void
gully_feedback (TgHydraulicSetup *s)
{
  s->discharge_area = 40.0f;
  s->channel_exponent = 1.0f;
  s->channel_floor = 0.35f;
  s->channel_ceil = 2.0f;
  s->face_radius = 6.0f;
  s->channel_pull = 5.0f;
}

/* With feedback from the droplets' own water: droplets read the flow
 * of the droplets before them, so the flow lives in the phases like the
 * height (gathered from the tiles around, halo and all).  Still the whole
 * world's bytes for any tiling, and books that balance; and without
 * gathering the flow (each job only its own tile's) the bytes differ. */
static void
test_hydraulic_tiled_feedback (void)
{
  static const int tilings[][2] = { { 1, 1 }, { 2, 2 }, { 3, 2 }, { 7, 5 }, { 1, 9 } };
  int w = 201, h = 157;
  float *in = terrain (0, w, h);
  float *hm, *flow;
  TgHydraulicSetup s, s0;
  TgHydraulicStats ws;

  setup (&s, 1, 6000);
  s0 = s;
  gully_feedback (&s);
  run_whole_option (&s, &s0, in, w, h, &hm, &flow, &ws);
  /* The flow NULL: the run keeps its own, same heights. */
  {
    float *hm2 = malloc (sizeof (float) * (size_t) w * h);
    TgHydraulicStats ws2;
    memcpy (hm2, in, sizeof (float) * (size_t) w * h);
    TG_CHECK_INT_EQ (tg__hydraulic_simulate (&s, hm2, NULL, w, h, run_forward, NULL, &ws2), 0);
    TG_CHECK (memcmp (hm2, hm, sizeof (float) * (size_t) w * h) == 0);
    free (hm2);
  }
  for (int k = 0; k < TG_N_ELEMENTS (tilings); k++)
    check_tiled (&s, 4, w, h, tilings[k][0], tilings[k][1], in, hm, flow, &ws,
                 k % 2 ? run_two : run_forward, k % 2 == 1);
  free (hm);
  free (flow);
  free (in);
}

/* Droplets that step 2.5 cells (2 m steps at 0.8 m cells), with gully
 * feedback so the water they lay along each step is read back: the
 * margin, the halo and the water's window follow the longer reach, so any
 * tiling still gives the whole world's bytes.  A margin of one cell a
 * step gives other bytes (tried). */
static void
test_hydraulic_tiled_long_steps (void)
{
  static const int tilings[][2] = { { 1, 1 }, { 2, 2 }, { 3, 2 }, { 7, 5 }, { 1, 9 } };
  int w = 201, h = 157;
  float *in = terrain (0, w, h);
  float *hm, *flow;
  TgHydraulicSetup s, s0;
  TgHydraulicStats ws;

  setup (&s, 1, 6000);
  s.step = 2.5f;
  s.max_steps = 8;
  gully_feedback (&s);
  s0 = s;
  s0.step = 1.0f;
  run_whole_option (&s, &s0, in, w, h, &hm, &flow, &ws);
  for (int k = 0; k < TG_N_ELEMENTS (tilings); k++)
    check_tiled (&s, 5, w, h, tilings[k][0], tilings[k][1], in, hm, flow, &ws,
                 k % 2 ? run_two : run_forward, k % 2 == 1);
  free (hm);
  free (flow);
  free (in);
}

int
main (void)
{
  TG_RUN (test_hydraulic_tiled_matches_whole);
  TG_RUN (test_hydraulic_tiled_memory_bounded);
  TG_RUN (test_hydraulic_tiled_no_rain);
  TG_RUN (test_hydraulic_tiled_channel);
  TG_RUN (test_hydraulic_tiled_feedback);
  TG_RUN (test_hydraulic_tiled_long_steps);
  return tgtest_result ();
}
