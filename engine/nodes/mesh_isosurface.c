/* mesh.isosurface: the surface f = iso of a field, by marching cubes.
 *
 * The box is cut into blocks of 32^3 cells that run in parallel on the
 * engine's pool, a fixed number at a time (a wave), so memory is bounded
 * by the wave and the mesh, never by a dense grid of the box.  A block,
 * and each 8^3 sub-block of it, whose centre value is farther from the
 * iso level than the field's Lipschitz bound times its half-diagonal
 * cannot hold any surface and is neither sampled nor scanned.
 *
 * A block's corners are sampled as a regular grid (tg_field_eval_grid: a
 * field with a grid path, as field.noise, shares its lattice work between
 * grid points), with one more sample on every side when gradient normals
 * are wanted: the normals are central differences of the sampled values,
 * interpolated along the edge, so they cost no extra field evaluation and
 * a vertex on a block face gets the same normal from either block.  For a
 * field with a grid path, a wave's blocks share their face corners and
 * that border through one slab, and a layer of blocks takes the corners
 * it shares with the layer below from that layer's slab, so each corner
 * of a dense field is sampled once (see SLAB_MAX).  A field that keeps
 * its values on the box's lattice (a dense volume's view) is not sampled
 * at all: each block reads its corners where they lie.
 *
 * Each edge crossing is one vertex, named by its global edge id (the
 * lower corner's lattice index, times 3, plus the axis): inside a block
 * through a ring of edge slots over two corner slices, across blocks
 * through a hash of the boundary edges that the stitcher fills in block
 * order.  Vertex and triangle order follow the block order and, within a
 * block, the cell order (z, y, x), so the bytes never depend on the
 * threads.  On a CPU with AVX-512 a block's vertices (positions and
 * normals) are made sixteen at a time, bit for bit the scalar loop's
 * (TG_ISO_ISA=generic asks for that one).  The case table (mc_tables.h)
 * resolves every ambiguous face the same way in both cells that share it,
 * so a closed surface is watertight: each mesh edge belongs to exactly
 * two triangles, wound counter-clockwise seen from outside (where
 * f > iso). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#endif

#include <tgraph/tgraph.h>

#include "fields.h"
#include "mc_tables.h"
#include "noise_fbm.h"

#ifdef TG__FBM_HAVE_X86
#include <immintrin.h>
#endif

#define BLOCK 32                 /* cells per block side */
#define SUB 8                    /* cells per sub-block side */
#define NSUB (BLOCK / SUB)
_Static_assert (SUB == 8, "block_mesh takes a row's cells eight at a time, a sub-block each");
#define WAVE 64                  /* blocks meshed before each stitch */

/* Edge e of a cell: offset of its lower corner and its axis. */
static const uint8_t edge_corner[12][3] = {
  { 0, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 }, { 0, 1, 1 }, /* x */
  { 0, 0, 0 }, { 1, 0, 0 }, { 0, 0, 1 }, { 1, 0, 1 }, /* y */
  { 0, 0, 0 }, { 1, 0, 0 }, { 0, 1, 0 }, { 1, 1, 0 }, /* z */
};

#define VSLOT_FACE (1u << 31) /* BlockOut.vslot: the edge is on a face of the block */

/* The order in which a cell makes its vertices.  A vertex is made at the
 * first use of its edge, and every cell around a crossed edge uses it (a
 * case's triangles use exactly its crossed edges), so in a block whose
 * cells are all marched the edge's vertex is made by the first of those
 * cells in z, y, x order that is inside the block: the cell owns the edge
 * when the others before it are outside. */
typedef struct
{
  uint16_t first[256]; /* per case, bit t: use t is its edge's first in tg__mc_tris */
  uint16_t owned[32];  /* the edges a cell owns, by where it sits: bit 0 x == 0, 1 the
                          last x, 2 y == 0, 3 the last y, 4 z == 0 */
  uint16_t fresh[32][256]; /* by where it sits and its case, bit t: use t makes its
                              edge's vertex (first & the uses of owned edges) */
  /* A cell inside the block (where 0) owns three edges (INNER_OK): per
   * case, those it crosses in the order of their first use, then the
   * others; CROSS, per case, the crossed edges. */
  bool inner_ok;
  uint8_t inner[256][3];
  uint16_t cross[256];
} McOrder;

static McOrder mc_order_tables;
static pthread_once_t mc_order_once = PTHREAD_ONCE_INIT;

static void
mc_order_init (void)
{
  McOrder *m = &mc_order_tables;

  for (int cs = 0; cs < 256; cs++)
    {
      unsigned seen = 0;

      m->first[cs] = 0;
      for (int t = 0; t < 3 * tg__mc_ntri[cs]; t++)
        {
          int e = tg__mc_tris[cs][t];

          if (!(seen >> e & 1))
            m->first[cs] |= (uint16_t) (1u << t);
          seen |= 1u << e;
        }
      m->cross[cs] = (uint16_t) seen;
    }
  for (int w = 0; w < 32; w++)
    {
      m->owned[w] = 0;
      for (int e = 0; e < 12; e++)
        {
          bool owns = true;

          /* The four cells around edge E: its lower corner minus 0 or 1
           * along each other axis; the cell is the one at (0, 0, 0). */
          for (int q = 0; q < 4; q++)
            {
              int d[3] = { edge_corner[e][0], edge_corner[e][1], edge_corner[e][2] };
              int a0 = ((e >> 2) + 1) % 3, a1 = ((e >> 2) + 2) % 3;
              bool outside;

              d[a0] -= q & 1;
              d[a1] -= q >> 1;
              if (!(d[2] < 0 || (d[2] == 0 && (d[1] < 0 || (d[1] == 0 && d[0] < 0)))))
                continue; /* not before the cell */
              outside = (d[0] < 0 && (w & 1)) || (d[0] > 0 && (w & 2)) || (d[1] < 0 && (w & 4))
                        || (d[1] > 0 && (w & 8)) || (d[2] < 0 && (w & 16));
              owns &= outside;
            }
          m->owned[w] |= (uint16_t) (owns << e);
        }
      for (int cs = 0; cs < 256; cs++)
        {
          m->fresh[w][cs] = 0;
          for (int t = 0; t < 3 * tg__mc_ntri[cs]; t++)
            if (m->owned[w] >> tg__mc_tris[cs][t] & 1)
              m->fresh[w][cs] |= (uint16_t) (m->first[cs] & (1u << t));
        }
    }
  m->inner_ok = __builtin_popcount (m->owned[0]) == 3;
  for (int cs = 0; cs < 256 && m->inner_ok; cs++)
    {
      int n = 0;

      for (int t = 0; t < 3 * tg__mc_ntri[cs]; t++)
        if (m->fresh[0][cs] >> t & 1)
          m->inner[cs][n++] = (uint8_t) tg__mc_tris[cs][t];
      for (int e = 0; e < 12; e++)
        if ((m->owned[0] >> e & 1) && !(m->cross[cs] >> e & 1))
          m->inner[cs][n++] = (uint8_t) e;
    }
}

static const McOrder *
mc_order (void)
{
  pthread_once (&mc_order_once, mc_order_init);
  return &mc_order_tables;
}

typedef struct
{
  int nv;
  float *pos, *nrm;
  int64_t nt;
  uint32_t *tri;    /* block-local vertex indices */
  uint32_t *tag;    /* per triangle: its chunk, when the level is chunked */
  uint32_t *vslot;  /* per vertex: its edge, x | y << 8 | z << 16 | axis << 24, the lower
                       corner in block coordinates; then VSLOT_FACE when on a face */
  int g0[3], c[3];  /* the block's first cell and cells per axis (for the edges' ids) */
  int cap_v;
  int64_t cap_t;
  int error;
} BlockOut;

typedef struct
{
  const TgField *f;
  const TgIsoOptions *o;
  int n[3];        /* cells per axis */
  int nb[3];       /* blocks per axis */
  int step;        /* a cell is STEP cells of cell_m (a coarser level) */
  int64_t org[3];  /* lattice point 0 is cell_m lattice point ORG of the box */
  const TgIsoLattice *chunks; /* tag each triangle with its chunk, or NULL */
  float lip;       /* with a margin for float rounding; 0 = never skip */
  bool use_box;    /* the field's box proves emptiness (iso <= 0) */
  bool grid;       /* the field has a grid path */
  /* The field's view of the box's lattice points -1 .. n + 1 (see
   * block_src), when DIRECT: blocks are marched from it in place. */
  bool direct;
  TgFieldView view;
  int wave0;
  BlockOut *out;
  struct BlockPlan *plan; /* per block of the wave, with a slab */
  /* The wave's shared corners (see SLAB_MAX): lattice points SLAB_ORG +
   * [0, SLAB_N) per axis, x fastest, at coordinates SLAB_XS; NEED marks
   * the slab's sub-blocks (SLAB_NS per axis) to sample.  NULL: none. */
  float *slab;
  /* A wave through the slab is sampled and marched a chunk of blocks at
   * a time (see wave_shared), SAMPLE0 + i then into MOUT (blocks MESH0 +
   * i), each chunk stitched into MESH at once, while its corners and
   * output are still in cache; STITCH_RC is the stitcher's answer. */
  BlockOut *mout;
  int sample0, mesh0, stitch_rc;
  bool stitched;
  struct Mesh *mesh;
  TgError *err;
  int64_t n_blocks, ns_stitch;
  int slab_n[3], slab_ns[3];
  int64_t slab_org[3];
  float *slab_xs[3];
  uint8_t *need;
  /* Layers: the previous layer's slab (its top corners, shared with this
   * one's bottom) was sampled; CARRIED marks the slab's sub-block columns
   * whose bottom corners were copied from it. */
  bool prev_slab;
  uint8_t *carried;
  atomic_llong evaluations, skipped, sub_skipped;
  bool timed;      /* the caller wants the phases' times */
  bool avx512;     /* make the vertices with block_vertices_avx512 */
  atomic_llong ns_eval, ns_mesh;
  pthread_mutex_t lock;
  struct Scratch *free_scratch;
  int n_scratch;   /* made so far: as many as threads ran blocks at once */
} Iso;

/* Lattice coordinate G along AXIS, in metres, from integers only, so every
 * block and every level computes bit-identical positions for a shared
 * corner (a coarser level's points are points of the finest lattice). */
static inline double
coord_d (const Iso *iso, int axis, int64_t g)
{
  return iso->o->min[axis] + (double) (iso->org[axis] + g * iso->step) * iso->o->cell;
}

static inline float
coord (const Iso *iso, int axis, int64_t g)
{
  return (float) coord_d (iso, axis, g);
}

/* The phases' clock: this thread's CPU time, so that other work on a
 * busy machine does not count (the stats sum it over threads). */
static int64_t
now_ns (void)
{
  struct timespec t;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &t);
  return (int64_t) t.tv_sec * 1000000000 + t.tv_nsec;
}

/* True when no surface can cross the box [LO, HI] (metres), whose centre
 * value is FC (the box test needs nothing sampled). */
static bool
provably_empty (const Iso *iso, const double lo[3], const double hi[3], float fc)
{
  const TgField *f = iso->f;
  double hd2 = 0.0, mag = fabs (fc) + fabs (iso->o->iso);
  double d = (double) fc - iso->o->iso;

  if (iso->o->no_skip)
    return false;
  if (iso->use_box
      && (hi[0] < f->min[0] || lo[0] > f->max[0] || hi[1] < f->min[1] || lo[1] > f->max[1]
          || hi[2] < f->min[2] || lo[2] > f->max[2]))
    return true;
  if (!(iso->lip > 0.0f) || !isfinite (fc))
    return false;
  for (int k = 0; k < 3; k++)
    {
      hd2 += 0.25 * (hi[k] - lo[k]) * (hi[k] - lo[k]);
      mag += fabs (lo[k]) + fabs (hi[k]);
    }
  /* Margin: the field is evaluated in float, a few ulps of the values and
   * coordinates involved. */
  return fabs (d) > (double) iso->lip * sqrt (hd2) * 1.001 + 1e-6 * mag;
}

typedef struct Scratch Scratch;

/* A block's corners, with a border of one sample on every side (for the
 * gradient normals): corner (x, y, z), -1 <= x <= BLOCK + 1, is entry
 * (x + 1) + (y + 1) sx + (z + 1) sxy. */
#define PAD (BLOCK + 3)
#define NPAD ((size_t) PAD * PAD * PAD)
#define COLS ((BLOCK + 1 + 7) / 8 * 8) /* a row's corners, read 8 at a time */
#define NIN ((NPAD + 63) / 64 * 64 + COLS) /* inside flags, with slack for both */

struct Scratch
{
  float *val;       /* corner values */
  uint8_t *in;      /* corner inside flags (1 = inside) */
  int32_t *slot;    /* per (corner, axis) of two corner slices: a vertex index */
  float *bx, *by, *bz, *bv; /* batches */
  TgFieldScratch work;          /* the grid sampler's */
  Scratch *next;            /* in the pool's free list */
};

static void
scratch_free (Scratch *s)
{
  free (s->val);
  free (s->in);
  free (s->slot);
  free (s->bx);
  free (s->by);
  free (s->bz);
  free (s->bv);
  tg_field_scratch_clear (&s->work);
}

static int
scratch_init (Scratch *s)
{
  memset (s, 0, sizeof *s);
  s->val = calloc (NIN, sizeof (float));
  s->in = calloc (NIN, 1);
  s->slot = malloc (sizeof (int32_t) * 3 * 2 * (BLOCK + 1) * (BLOCK + 1));
  s->bx = malloc (sizeof (float) * TG_FIELD_BATCH_MAX);
  s->by = malloc (sizeof (float) * TG_FIELD_BATCH_MAX);
  s->bz = malloc (sizeof (float) * TG_FIELD_BATCH_MAX);
  s->bv = malloc (sizeof (float) * TG_FIELD_BATCH_MAX);
  if (!s->val || !s->in || !s->slot || !s->bx || !s->by || !s->bz || !s->bv)
    {
      scratch_free (s);
      return TG_ENOMEM;
    }
  memset (s->slot, 0xff, sizeof (int32_t) * 3 * 2 * (BLOCK + 1) * (BLOCK + 1));
  return 0;
}

static int
out_grow (BlockOut *b, int nv, int64_t nt, bool tagged)
{
  if (nv > b->cap_v)
    {
      int cap = b->cap_v ? b->cap_v : 1024;
      void *p, *q, *u;

      while (cap < nv)
        cap *= 2;
      p = realloc (b->pos, sizeof (float) * 3 * (size_t) cap);
      if (p)
        b->pos = p;
      q = realloc (b->nrm, sizeof (float) * 3 * (size_t) cap);
      if (q)
        b->nrm = q;
      u = realloc (b->vslot, sizeof (uint32_t) * (size_t) cap);
      if (u)
        b->vslot = u;
      if (!p || !q || !u)
        return TG_ENOMEM;
      b->cap_v = cap;
    }
  if (nt > b->cap_t)
    {
      int64_t cap = b->cap_t ? b->cap_t : 2048;
      void *p;

      while (cap < nt)
        cap *= 2;
      p = realloc (b->tri, sizeof (uint32_t) * 3 * (size_t) cap);
      if (p == NULL)
        return TG_ENOMEM;
      b->tri = p;
      if (tagged)
        {
          p = realloc (b->tag, sizeof (uint32_t) * (size_t) cap);
          if (p == NULL)
            return TG_ENOMEM;
          b->tag = p;
        }
      b->cap_t = cap;
    }
  return 0;
}

/* Samples the field at the N points queued in S's batch into OUT. */
static void
flush (const Iso *iso, Scratch *s, int n)
{
  if (n > 0)
    iso->f->eval (iso->f, n, s->bx, s->by, s->bz, s->bv);
}

/* Gradient normals from the sampled corners: the central differences at
 * the two ends CA and CB of the vertex's edge (strides ST), interpolated
 * to the vertex by TT like its position.  Every corner an edge of a live
 * cell touches has its six neighbours sampled (the border), so a vertex on
 * a block face gets the same normal from both blocks, and no extra field
 * evaluation is needed.  A zero gradient is left zero; the stitcher fills
 * it from the faces. */
static inline void
grid_normal_of (const float ap[3], const float am[3], const float bp[3], const float bm[3],
                float tt, float *nrm)
{
  float g[3], len2;

  for (int k = 0; k < 3; k++)
    {
      float ga = ap[k] - am[k];
      float gb = bp[k] - bm[k];
      g[k] = ga + tt * (gb - ga);
    }
  len2 = g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
  if (len2 > 0.0f && isfinite (len2))
    {
      float inv = 1.0f / sqrtf (len2);
      for (int k = 0; k < 3; k++)
        nrm[k] = g[k] * inv;
    }
  else
    nrm[0] = nrm[1] = nrm[2] = 0.0f;
}

static inline void
grid_normal (const float *val, const size_t st[3], size_t ca, size_t cb, float tt, float *nrm)
{
  float ap[3], am[3], bp[3], bm[3];

  for (int k = 0; k < 3; k++)
    {
      ap[k] = val[ca + st[k]];
      am[k] = val[ca - st[k]];
      bp[k] = val[cb + st[k]];
      bm[k] = val[cb - st[k]];
    }
  grid_normal_of (ap, am, bp, bm, tt, nrm);
}

/* A block's corners read where a field's view keeps them (TgFieldView):
 * corner L (block coordinates, -1 .. c + 1) has the value LEVEL - V[BASE
 * + L0 + L1 SY + L2 SZ] when (unsigned) (L[a] - LO[a]) < N[a] on every
 * axis, else LEVEL - 0.0f. */
typedef struct
{
  const float *v;
  int32_t base, sy, sz;
  int lo[3], n[3];
  float level;
} BlockSrc;

static inline bool
src_stored (const BlockSrc *b, int x, int y, int z)
{
  return (unsigned) (x - b->lo[0]) < (unsigned) b->n[0]
         && (unsigned) (y - b->lo[1]) < (unsigned) b->n[1]
         && (unsigned) (z - b->lo[2]) < (unsigned) b->n[2];
}

static inline float
src_at (const BlockSrc *b, int x, int y, int z)
{
  return b->level - (src_stored (b, x, y, z)
                       ? b->v[(ptrdiff_t) b->base + x + (ptrdiff_t) y * b->sy
                              + (ptrdiff_t) z * b->sz]
                       : 0.0f);
}

/* Samples the corners LO .. HI (inclusive, block coordinates, -1 .. c + 1)
 * into S->val through the field's grid path. */
static int
sample_box (const Iso *iso, Scratch *s, const float *xs, const float *ys, const float *zs,
            const int lo[3], const int hi[3], size_t sx, size_t sxy, int64_t *evals)
{
  TgFieldGrid g = { xs + lo[0] + 1, ys + lo[1] + 1, zs + lo[2] + 1,
                    hi[0] - lo[0] + 1, hi[1] - lo[1] + 1, hi[2] - lo[2] + 1 };
  size_t at = (size_t) (lo[0] + 1) + (size_t) (lo[1] + 1) * sx + (size_t) (lo[2] + 1) * sxy;

  *evals += (int64_t) g.nx * g.ny * g.nz;
  return tg_field_eval_grid (iso->f, &g, s->val + at, sx, sxy, &s->work);
}

/* Samples, through the field's eval, the corners of the live sub-blocks
 * and BORDER samples around them, each once (for fields without a grid
 * path, whose samples cost the same one by one): row by row, the runs of
 * a row that some live sub-block's box covers, straight into the row. */
static void
sample_need (const Iso *iso, Scratch *s, const float *xs, const float *ys, const float *zs,
             const int c[3], const int nsub[3], const bool *sub_skip, int border, size_t sx,
             size_t sxy, int64_t *evals)
{
  for (int z = -1; z <= c[2] + 1; z++)
    {
      /* The sub-block layers whose boxes (grown by BORDER) may hold Z
       * (floor division of a non-negative numerator). */
      int k0 = (z - border + 2 * SUB) / SUB - 3, k1 = (z + border) / SUB;

      k0 = k0 < 0 ? 0 : k0;
      k1 = k1 < nsub[2] - 1 ? k1 : nsub[2] - 1;
      for (int y = -1; y <= c[1] + 1; y++)
        {
          int j0 = (y - border + 2 * SUB) / SUB - 3, j1 = (y + border) / SUB;
          bool need[NSUB] = { false };
          float *row = s->val + (size_t) (z + 1) * sxy + (size_t) (y + 1) * sx + 1;
          int any = 0;

          j0 = j0 < 0 ? 0 : j0;
          j1 = j1 < nsub[1] - 1 ? j1 : nsub[1] - 1;
          for (int sk = k0; sk <= k1; sk++)
            {
              int zl = sk * SUB - border;
              int zh = (sk * SUB + SUB < c[2] ? sk * SUB + SUB : c[2]) + border;

              if (z < zl || z > zh)
                continue;
              for (int sj = j0; sj <= j1; sj++)
                {
                  int yl = sj * SUB - border;
                  int yh = (sj * SUB + SUB < c[1] ? sj * SUB + SUB : c[1]) + border;
                  const bool *sk_row = sub_skip + (sk * nsub[1] + sj) * nsub[0];

                  if (y < yl || y > yh)
                    continue;
                  for (int si = 0; si < nsub[0]; si++)
                    {
                      need[si] |= !sk_row[si];
                      any |= !sk_row[si];
                    }
                }
            }
          if (!any)
            continue;
          for (int si = 0; si < nsub[0]; si++)
            if (need[si])
              {
                int si1 = si, a, e;

                /* Boxes of neighbouring sub-blocks overlap: one run. */
                while (si1 + 1 < nsub[0] && need[si1 + 1])
                  si1++;
                a = si * SUB - border;
                e = ((si1 + 1) * SUB < c[0] ? (si1 + 1) * SUB : c[0]) + border;
                for (int x = a; x <= e;)
                  {
                    int n = e - x + 1 < TG_FIELD_BATCH_MAX ? e - x + 1 : TG_FIELD_BATCH_MAX;

                    for (int t = 0; t < n; t++)
                      {
                        s->by[t] = ys[y + 1];
                        s->bz[t] = zs[z + 1];
                      }
                    iso->f->eval (iso->f, n, xs + x + 1, s->by, s->bz, row + x);
                    *evals += n;
                    x += n;
                  }
                si = si1;
              }
        }
    }
}

/* Scratch is reused across blocks and waves through a free list, so its
 * 600 kB are allocated once per thread, not once per block. */
static Scratch *
scratch_take (Iso *iso)
{
  Scratch *s;

  pthread_mutex_lock (&iso->lock);
  s = iso->free_scratch;
  if (s)
    iso->free_scratch = s->next;
  pthread_mutex_unlock (&iso->lock);
  if (s == NULL)
    {
      s = malloc (sizeof *s);
      if (s && scratch_init (s) < 0)
        {
          free (s);
          s = NULL;
        }
      if (s)
        {
          pthread_mutex_lock (&iso->lock);
          iso->n_scratch++;
          pthread_mutex_unlock (&iso->lock);
        }
    }
  return s;
}

static void
scratch_give (Iso *iso, Scratch *s)
{
  pthread_mutex_lock (&iso->lock);
  s->next = iso->free_scratch;
  iso->free_scratch = s;
  pthread_mutex_unlock (&iso->lock);
}

/* A block's cells and sub-blocks, and which of them its skip tests left
 * live; made before anything is sampled. */
typedef struct BlockPlan
{
  int g0[3], c[3], nsub[3];
  int n_live;                        /* 0: nothing to sample or mesh */
  bool sub_skip[NSUB * NSUB * NSUB];
  float sub_val[NSUB * NSUB * NSUB]; /* the sub-blocks' centre values */
} BlockPlan;

/* The skip tests of block B: its centre and its sub-blocks' centres, in
 * one batch. */
static void
block_plan (Iso *iso, int b, BlockPlan *p, Scratch *s)
{
  const TgIsoOptions *o = iso->o;
  int bi = b % iso->nb[0], bj = (b / iso->nb[0]) % iso->nb[1], bk = b / (iso->nb[0] * iso->nb[1]);
  int *c = p->c, *nsub = p->nsub, n_sub;
  double lo[3], hi[3];
  int64_t t0 = iso->timed ? now_ns () : 0;

  p->g0[0] = bi * BLOCK;
  p->g0[1] = bj * BLOCK;
  p->g0[2] = bk * BLOCK;
  p->n_live = 0;
  for (int k = 0; k < 3; k++)
    {
      c[k] = iso->n[k] - p->g0[k] < BLOCK ? iso->n[k] - p->g0[k] : BLOCK;
      nsub[k] = (c[k] + SUB - 1) / SUB;
      lo[k] = coord_d (iso, k, p->g0[k]);
      hi[k] = coord_d (iso, k, p->g0[k] + c[k]);
    }
  n_sub = nsub[0] * nsub[1] * nsub[2];
  s->bx[0] = (float) (0.5 * (lo[0] + hi[0]));
  s->by[0] = (float) (0.5 * (lo[1] + hi[1]));
  s->bz[0] = (float) (0.5 * (lo[2] + hi[2]));
  for (int q = 0; q < n_sub; q++)
    {
      int si = q % nsub[0], sj = (q / nsub[0]) % nsub[1], sk = q / (nsub[0] * nsub[1]);
      int a[3] = { si * SUB, sj * SUB, sk * SUB }, e[3];
      const int *g0 = p->g0;

      for (int k = 0; k < 3; k++)
        e[k] = a[k] + SUB < c[k] ? a[k] + SUB : c[k];
      s->bx[1 + q] = (float) (0.5 * (coord (iso, 0, g0[0] + a[0]) + (double) coord (iso, 0, g0[0] + e[0])));
      s->by[1 + q] = (float) (0.5 * (coord (iso, 1, g0[1] + a[1]) + (double) coord (iso, 1, g0[1] + e[1])));
      s->bz[1 + q] = (float) (0.5 * (coord (iso, 2, g0[2] + a[2]) + (double) coord (iso, 2, g0[2] + e[2])));
    }
  if (!o->no_skip)
    {
      flush (iso, s, 1 + n_sub);
      if (provably_empty (iso, lo, hi, s->bv[0]))
        {
          atomic_fetch_add (&iso->skipped, 1);
          if (iso->timed)
            atomic_fetch_add (&iso->ns_eval, now_ns () - t0);
          return;
        }
    }
  for (int q = 0; q < n_sub; q++)
    {
      int si = q % nsub[0], sj = (q / nsub[0]) % nsub[1], sk = q / (nsub[0] * nsub[1]);
      int a[3] = { si * SUB, sj * SUB, sk * SUB };
      double sl[3], sh[3];

      for (int k = 0; k < 3; k++)
        {
          int e = a[k] + SUB < c[k] ? a[k] + SUB : c[k];
          sl[k] = coord_d (iso, k, p->g0[k] + a[k]);
          sh[k] = coord_d (iso, k, p->g0[k] + e);
        }
      p->sub_val[q] = o->no_skip ? 0.0f : s->bv[1 + q];
      p->sub_skip[q] = provably_empty (iso, sl, sh, p->sub_val[q]);
      p->n_live += !p->sub_skip[q];
    }
  atomic_fetch_add (&iso->sub_skipped, n_sub - p->n_live);
  if (iso->timed)
    atomic_fetch_add (&iso->ns_eval, now_ns () - t0);
}

/* Samples block P's corners into S->val on its own (no shared slab):
 * those of live sub-blocks (and, for gradient normals, their neighbours),
 * on one grid for the whole block or per run of live sub-blocks along x.
 * The others keep whatever an earlier block left: block_mesh marches only
 * the cells of live sub-blocks, whose corners, and the neighbours their
 * normals difference, are all sampled.  0 or a negative TG_E*. */
static int
block_sample (Iso *iso, const BlockPlan *p, Scratch *s)
{
  const TgIsoOptions *o = iso->o;
  const int *c = p->c, *nsub = p->nsub, *g0 = p->g0;
  int n_sub = nsub[0] * nsub[1] * nsub[2], rc = 0;
  size_t sx = (size_t) c[0] + 3, sxy = sx * (size_t) (c[1] + 3);
  bool grad = o->normals == TG__ISO_NORMALS_GRADIENT && o->shading == TG__ISO_SMOOTH;
  int border = grad ? 1 : 0;
  float xs[PAD], ys[PAD], zs[PAD]; /* corner -1 at [0] */
  int64_t evals = 0, t0 = iso->timed ? now_ns () : 0;

  for (int x = -1; x <= c[0] + 1; x++)
    xs[x + 1] = coord (iso, 0, g0[0] + x);
  for (int y = -1; y <= c[1] + 1; y++)
    ys[y + 1] = coord (iso, 1, g0[1] + y);
  for (int z = -1; z <= c[2] + 1; z++)
    zs[z + 1] = coord (iso, 2, g0[2] + z);

  if (p->n_live == n_sub)
    {
      int a[3] = { -border, -border, -border };
      int e[3] = { c[0] + border, c[1] + border, c[2] + border };

      rc = sample_box (iso, s, xs, ys, zs, a, e, sx, sxy, &evals);
    }
  else
    {
      if (iso->grid)
        for (int sk = 0; sk < nsub[2] && rc == 0; sk++)
          for (int sj = 0; sj < nsub[1] && rc == 0; sj++)
            for (int si = 0; si < nsub[0] && rc == 0; si++)
              {
                int q = (sk * nsub[1] + sj) * nsub[0] + si, si1 = si;
                int a[3], e[3];

                if (p->sub_skip[q])
                  continue;
                while (si1 + 1 < nsub[0] && !p->sub_skip[q + si1 + 1 - si])
                  si1++;
                a[0] = si * SUB - border;
                a[1] = sj * SUB - border;
                a[2] = sk * SUB - border;
                e[0] = ((si1 + 1) * SUB < c[0] ? (si1 + 1) * SUB : c[0]) + border;
                e[1] = ((sj + 1) * SUB < c[1] ? (sj + 1) * SUB : c[1]) + border;
                e[2] = ((sk + 1) * SUB < c[2] ? (sk + 1) * SUB : c[2]) + border;
                rc = sample_box (iso, s, xs, ys, zs, a, e, sx, sxy, &evals);
                si = si1;
              }
      else
        sample_need (iso, s, xs, ys, zs, c, nsub, p->sub_skip, border, sx, sxy, &evals);
    }
  atomic_fetch_add (&iso->evaluations, evals);
  if (iso->timed)
    atomic_fetch_add (&iso->ns_eval, now_ns () - t0);
  return rc < 0 ? rc : 0;
}

/* The positions and normals of the block's NV vertices, from their edges
 * in OUT->vslot (marking those on the block's faces) and the corners in
 * VAL; XS, YS, ZS are the corners' coordinates, corner -1 at [0]. */
static void
block_vertices (const Iso *iso, BlockOut *out, int nv, const float *val,
                size_t sx, size_t sxy, const BlockSrc *src, const float *xs, const float *ys,
                const float *zs)
{
  const size_t st[3] = { 1, sx, sxy };
  const int *c = out->c;
  const float *cc[3] = { xs + 1, ys + 1, zs + 1 }; /* corner 0 at [0] */
  float iso_l = (float) iso->o->iso;
  bool grad = iso->o->normals == TG__ISO_NORMALS_GRADIENT && iso->o->shading == TG__ISO_SMOOTH;

  for (int v = 0; v < nv; v++)
    {
      uint32_t k = out->vslot[v];
      int l[3] = { (int) (k & 0xff), (int) (k >> 8 & 0xff), (int) (k >> 16 & 0xff) };
      int ax = (int) (k >> 24);
      size_t ca = (size_t) (l[0] + 1) + (size_t) (l[1] + 1) * sx + (size_t) (l[2] + 1) * sxy;
      size_t cb = ca + st[ax];
      int lb[3] = { l[0] + (ax == 0), l[1] + (ax == 1), l[2] + (ax == 2) };
      float v0 = src ? src_at (src, l[0], l[1], l[2]) : val[ca];
      float v1 = src ? src_at (src, lb[0], lb[1], lb[2]) : val[cb];
      float tt = (iso_l - v0) / (v1 - v0);
      float *pp = out->pos + 3 * (size_t) v;
      float pa = cc[ax][l[ax]], pb = cc[ax][l[ax] + 1];

      pp[0] = cc[0][l[0]];
      pp[1] = cc[1][l[1]];
      pp[2] = cc[2][l[2]];
      pp[ax] = pa + tt * (pb - pa);
      if (grad && src)
        {
          float ap[3], am[3], bp[3], bm[3];

          for (int q = 0; q < 3; q++)
            {
              int d[3] = { q == 0, q == 1, q == 2 };

              ap[q] = src_at (src, l[0] + d[0], l[1] + d[1], l[2] + d[2]);
              am[q] = src_at (src, l[0] - d[0], l[1] - d[1], l[2] - d[2]);
              bp[q] = src_at (src, lb[0] + d[0], lb[1] + d[1], lb[2] + d[2]);
              bm[q] = src_at (src, lb[0] - d[0], lb[1] - d[1], lb[2] - d[2]);
            }
          grid_normal_of (ap, am, bp, bm, tt, out->nrm + 3 * (size_t) v);
        }
      else if (grad)
        grid_normal (val, st, ca, cb, tt, out->nrm + 3 * (size_t) v);
      else
        memset (out->nrm + 3 * (size_t) v, 0, sizeof (float) * 3);
      /* On a face of the block: shared with a neighbour (the stitcher's). */
      out->vslot[v] = k | (uint32_t) (((ax != 0) & ((l[0] == 0) | (l[0] == c[0])))
                                       | ((ax != 1) & ((l[1] == 0) | (l[1] == c[1])))
                                       | ((ax != 2) & ((l[2] == 0) | (l[2] == c[2]))))
                              << 31;
    }
}

/* Whether the vertices are made by block_vertices_avx512: on a CPU with
 * AVX-512, unless TG_ISO_ISA=generic asks for the scalar loop (so a test
 * can compare their bytes). */
static bool
iso_avx512 (void)
{
#ifdef TG__FBM_HAVE_X86
  const char *want = getenv ("TG_ISO_ISA");

  return tg__fbm_isa_supported (TG__FBM_ISA_AVX512) && !(want && strcmp (want, "generic") == 0);
#else
  return false;
#endif
}

#ifdef TG__FBM_HAVE_X86
/* Lanes of three vectors A, B, C of 16 interleaved (a0 b0 c0 a1 ...) into
 * OUT[0 .. 3 N), N <= 16. */
__attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq"))) static inline void
store3_avx512 (float *out, int n, __m512 a, __m512 b, __m512 c)
{
  /* Output float f = 16 j + i is component f % 3 of vertex f / 3: lane
   * f / 3 of A (0 ..) or B (16 ..) first, then of C where F_C says. */
  static const int32_t from_ab[3][16] = {
    { 0, 16, 0, 1, 17, 1, 2, 18, 2, 3, 19, 3, 4, 20, 4, 5 },
    { 21, 5, 6, 22, 6, 7, 23, 7, 8, 24, 8, 9, 25, 9, 10, 26 },
    { 10, 11, 27, 11, 12, 28, 12, 13, 29, 13, 14, 30, 14, 15, 31, 15 },
  };
  static const int32_t lane[3][16] = {
    { 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5 },
    { 5, 5, 6, 6, 6, 7, 7, 7, 8, 8, 8, 9, 9, 9, 10, 10 },
    { 10, 11, 11, 11, 12, 12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15 },
  };
  static const __mmask16 f_c[3] = { 0x4924, 0x2492, 0x9249 };

  for (int j = 0; j < 3; j++)
    {
      int left = 3 * n - 16 * j;
      __m512 v = _mm512_permutex2var_ps (a, _mm512_loadu_si512 (from_ab[j]), b);

      v = _mm512_mask_permutexvar_ps (v, f_c[j], _mm512_loadu_si512 (lane[j]), c);
      if (left >= 16)
        _mm512_storeu_ps (out + 16 * j, v);
      else if (left > 0)
        _mm512_mask_storeu_ps (out + 16 * j, (__mmask16) ((1u << left) - 1), v);
    }
}

/* Lanes of corner values: VAL[IDX] or, from a view SRC (VAL unused), its
 * LEVEL - V[IDX] where corner (X, Y, Z) is stored and LEVEL - 0 where not
 * (src_at; without CLIP every corner is stored); lanes off M are 0 (VAL)
 * or LEVEL - 0 (SRC). */
__attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq"), always_inline)) static inline __m512
corner_gather (__mmask16 m, __m512i idx, const float *val, const BlockSrc *src, bool clip,
               __m512i x, __m512i y, __m512i z)
{
  if (src == NULL)
    return _mm512_mask_i32gather_ps (_mm512_setzero_ps (), m, idx, val, 4);
  if (clip)
    m &= _mm512_cmplt_epu32_mask (_mm512_sub_epi32 (x, _mm512_set1_epi32 (src->lo[0])),
                                _mm512_set1_epi32 (src->n[0]))
       & _mm512_cmplt_epu32_mask (_mm512_sub_epi32 (y, _mm512_set1_epi32 (src->lo[1])),
                                  _mm512_set1_epi32 (src->n[1]))
       & _mm512_cmplt_epu32_mask (_mm512_sub_epi32 (z, _mm512_set1_epi32 (src->lo[2])),
                                  _mm512_set1_epi32 (src->n[2]));
  return _mm512_sub_ps (_mm512_set1_ps (src->level),
                        _mm512_mask_i32gather_ps (_mm512_setzero_ps (), m, idx, src->v, 4));
}

/* block_vertices sixteen vertices at a time, in lanes: the same
 * arithmetic in the same order (no FMA: -ffp-contract=off, and the
 * intrinsics round each step), so the same bits, the corners' values and
 * coordinates gathered.  VAL's strides SX, SXY, or the view SRC (indices
 * from its V; VAL then unused); CAT holds the x, y and z coordinates (XS,
 * YS, ZS of block_vertices) at 0, PAD and 2 PAD. */
__attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq"), always_inline)) static inline void
vertices_avx512 (BlockOut *out, int nv, const float *val, int sx, int sxy, const BlockSrc *src,
                 bool clip, const float *cat, float iso_l, bool grad)
{
  const __m512i one_i = _mm512_set1_epi32 (1), ff = _mm512_set1_epi32 (0xff);
  /* Corner (x, y, z) is entry x + y SY + z SZ + ORG of VAL or of the view. */
  const int syi = src ? src->sy : sx, szi = src ? src->sz : sxy;
  const int org = src ? src->base : 1 + sx + sxy;
  const __m512i vsx = _mm512_set1_epi32 (syi), vsxy = _mm512_set1_epi32 (szi);
  const __m512i vorg = _mm512_set1_epi32 (org);
  const __m512i strides = _mm512_setr_epi32 (1, syi, szi, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m512i pad = _mm512_set1_epi32 (PAD);
  const __m512i c0 = _mm512_set1_epi32 (out->c[0]), c1 = _mm512_set1_epi32 (out->c[1]);
  const __m512i c2 = _mm512_set1_epi32 (out->c[2]);
  const __m512 iso_v = _mm512_set1_ps (iso_l), one = _mm512_set1_ps (1.0f);
  const __m512 inf = _mm512_set1_ps (INFINITY);

  for (int v = 0; v < nv; v += 16)
    {
      int n = nv - v < 16 ? nv - v : 16;
      __mmask16 m = (__mmask16) (n == 16 ? 0xffff : (1u << n) - 1);
      __m512i k = _mm512_maskz_loadu_epi32 (m, out->vslot + v);
      __m512i l0 = _mm512_and_si512 (k, ff);
      __m512i l1 = _mm512_and_si512 (_mm512_srli_epi32 (k, 8), ff);
      __m512i l2 = _mm512_and_si512 (_mm512_srli_epi32 (k, 16), ff);
      __m512i ax = _mm512_srli_epi32 (k, 24);
      __mmask16 a0 = _mm512_cmpeq_epi32_mask (ax, _mm512_setzero_si512 ());
      __mmask16 a1 = _mm512_cmpeq_epi32_mask (ax, one_i);
      __mmask16 a2 = (__mmask16) (~(a0 | a1));
      __m512i ca = _mm512_add_epi32 (
        _mm512_add_epi32 (_mm512_add_epi32 (l0, vorg), _mm512_mullo_epi32 (l1, vsx)),
        _mm512_mullo_epi32 (l2, vsxy));
      __m512i cb = _mm512_add_epi32 (ca, _mm512_permutexvar_epi32 (ax, strides));
      /* The edge's upper corner. */
      __m512i lb0 = _mm512_mask_add_epi32 (l0, a0, l0, one_i);
      __m512i lb1 = _mm512_mask_add_epi32 (l1, a1, l1, one_i);
      __m512i lb2 = _mm512_mask_add_epi32 (l2, a2, l2, one_i);
      __m512 v0 = corner_gather (m, ca, val, src, clip, l0, l1, l2);
      __m512 v1 = corner_gather (m, cb, val, src, clip, lb0, lb1, lb2);
      __m512 tt = _mm512_div_ps (_mm512_sub_ps (iso_v, v0), _mm512_sub_ps (v1, v0));
      __m512i i0 = _mm512_add_epi32 (l0, one_i);
      __m512i i1 = _mm512_add_epi32 (_mm512_add_epi32 (l1, one_i), pad);
      __m512i i2 = _mm512_add_epi32 (_mm512_add_epi32 (l2, one_i), _mm512_add_epi32 (pad, pad));
      __m512 p0 = _mm512_mask_i32gather_ps (_mm512_setzero_ps (), m, i0, cat, 4);
      __m512 p1 = _mm512_mask_i32gather_ps (_mm512_setzero_ps (), m, i1, cat, 4);
      __m512 p2 = _mm512_mask_i32gather_ps (_mm512_setzero_ps (), m, i2, cat, 4);
      __m512i iax = _mm512_mask_blend_epi32 (a2, _mm512_mask_blend_epi32 (a1, i0, i1), i2);
      __m512 pa = _mm512_mask_blend_ps (a2, _mm512_mask_blend_ps (a1, p0, p1), p2);
      __m512 pb = _mm512_mask_i32gather_ps (_mm512_setzero_ps (), m,
                                            _mm512_add_epi32 (iax, one_i), cat, 4);
      __m512 pp = _mm512_add_ps (pa, _mm512_mul_ps (tt, _mm512_sub_ps (pb, pa)));
      __m512 nrm[3];
      __mmask16 face;

      p0 = _mm512_mask_blend_ps (a0, p0, pp);
      p1 = _mm512_mask_blend_ps (a1, p1, pp);
      p2 = _mm512_mask_blend_ps (a2, p2, pp);
      store3_avx512 (out->pos + 3 * (size_t) v, n, p0, p1, p2);
      if (grad)
        {
          __m512 g[3], len2;
          __mmask16 ok;
          const __m512i st[3] = { one_i, vsx, vsxy };

          for (int q = 0; q < 3; q++)
            {
              /* Corners A and B moved by -1 and +1 along Q. */
              __m512i a[3] = { l0, l1, l2 }, b[3] = { lb0, lb1, lb2 };
              __m512i ap[3], am[3], bp[3], bm[3];

              for (int d = 0; d < 3; d++)
                {
                  ap[d] = d == q ? _mm512_add_epi32 (a[d], one_i) : a[d];
                  am[d] = d == q ? _mm512_sub_epi32 (a[d], one_i) : a[d];
                  bp[d] = d == q ? _mm512_add_epi32 (b[d], one_i) : b[d];
                  bm[d] = d == q ? _mm512_sub_epi32 (b[d], one_i) : b[d];
                }
              __m512 ga = _mm512_sub_ps (corner_gather (m, _mm512_add_epi32 (ca, st[q]), val, src,
                                                        clip, ap[0], ap[1], ap[2]),
                                         corner_gather (m, _mm512_sub_epi32 (ca, st[q]), val, src,
                                                        clip, am[0], am[1], am[2]));
              __m512 gb = _mm512_sub_ps (corner_gather (m, _mm512_add_epi32 (cb, st[q]), val, src,
                                                        clip, bp[0], bp[1], bp[2]),
                                         corner_gather (m, _mm512_sub_epi32 (cb, st[q]), val, src,
                                                        clip, bm[0], bm[1], bm[2]));

              g[q] = _mm512_add_ps (ga, _mm512_mul_ps (tt, _mm512_sub_ps (gb, ga)));
            }
          len2 = _mm512_add_ps (_mm512_add_ps (_mm512_mul_ps (g[0], g[0]),
                                               _mm512_mul_ps (g[1], g[1])),
                                _mm512_mul_ps (g[2], g[2]));
          ok = _mm512_cmp_ps_mask (len2, _mm512_setzero_ps (), _CMP_GT_OQ)
               & _mm512_cmp_ps_mask (len2, inf, _CMP_LT_OQ);
          {
            __m512 inv = _mm512_div_ps (one, _mm512_sqrt_ps (len2));

            for (int q = 0; q < 3; q++)
              nrm[q] = _mm512_maskz_mul_ps (ok, g[q], inv);
          }
        }
      else
        nrm[0] = nrm[1] = nrm[2] = _mm512_setzero_ps ();
      store3_avx512 (out->nrm + 3 * (size_t) v, n, nrm[0], nrm[1], nrm[2]);
      /* On a face of the block (see block_vertices). */
      face = (__mmask16) ((~a0 & (_mm512_cmpeq_epi32_mask (l0, _mm512_setzero_si512 ())
                                  | _mm512_cmpeq_epi32_mask (l0, c0)))
                          | (~a1 & (_mm512_cmpeq_epi32_mask (l1, _mm512_setzero_si512 ())
                                    | _mm512_cmpeq_epi32_mask (l1, c1)))
                          | (~a2 & (_mm512_cmpeq_epi32_mask (l2, _mm512_setzero_si512 ())
                                    | _mm512_cmpeq_epi32_mask (l2, c2))));
      _mm512_mask_storeu_epi32 (out->vslot + v, m,
                                _mm512_mask_or_epi32 (k, face, k,
                                                      _mm512_set1_epi32 ((int) VSLOT_FACE)));
    }
}

__attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq"))) static void
block_vertices_avx512 (BlockOut *out, int nv, const float *val, int sx, int sxy,
                       const float *cat, float iso_l, bool grad)
{
  vertices_avx512 (out, nv, val, sx, sxy, NULL, false, cat, iso_l, grad);
}

/* From a view: masked to the stored corners only for a block that reaches
 * past them (on the volume's faces or beyond). */
__attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq"))) static void
block_vertices_view_avx512 (BlockOut *out, int nv, const BlockSrc *src, const float *cat,
                            float iso_l, bool grad)
{
  bool clip = false;

  for (int k = 0; k < 3; k++)
    clip |= src->lo[k] > -1 || src->lo[k] + src->n[k] < out->c[k] + 2;
  if (clip)
    vertices_avx512 (out, nv, NULL, 0, 0, src, true, cat, iso_l, grad);
  else
    vertices_avx512 (out, nv, NULL, 0, 0, src, false, cat, iso_l, grad);
}
#endif

/* The inside flags of a block's corners 0 .. C from the view SRC, into IN
 * with the block's strides (corner (x, y, z) at (x + 1) + (y + 1) SX +
 * (z + 1) SXY): each row of voxels read once where it lies, the next
 * rows' prefetched (they are a plane apart, which the hardware does not
 * follow). */
#define SRC_AHEAD 16

static void
src_flags (const BlockSrc *src, const int c[3], float iso_l, uint8_t *in, size_t sx, size_t sxy)
{
  const float level = src->level;
  const uint8_t out_in = level - 0.0f < iso_l;
  int xa = src->lo[0] > 0 ? src->lo[0] : 0;
  int xb = src->lo[0] + src->n[0] < c[0] + 1 ? src->lo[0] + src->n[0] : c[0] + 1;

  xa = xa < c[0] + 1 ? xa : c[0] + 1;
  xb = xb > xa ? xb : xa;
  int yp = SRC_AHEAD % (c[1] + 1), zp = SRC_AHEAD / (c[1] + 1); /* the row SRC_AHEAD on */

  for (int z = 0; z <= c[2]; z++)
    for (int y = 0; y <= c[1]; y++)
      {
        uint8_t *restrict f = in + (size_t) (z + 1) * sxy + (size_t) (y + 1) * sx + 1;
        bool row = (unsigned) (y - src->lo[1]) < (unsigned) src->n[1]
                   && (unsigned) (z - src->lo[2]) < (unsigned) src->n[2];

        if (zp <= c[2] && xa < xb && (unsigned) (yp - src->lo[1]) < (unsigned) src->n[1]
            && (unsigned) (zp - src->lo[2]) < (unsigned) src->n[2])
          {
            const float *q = src->v + ((ptrdiff_t) src->base + xa + (ptrdiff_t) yp * src->sy
                                       + (ptrdiff_t) zp * src->sz);

            for (int x = 0; x < xb - xa; x += 16)
              __builtin_prefetch (q + x);
            __builtin_prefetch (q + (xb - xa - 1));
          }
        if (++yp > c[1])
          {
            yp = 0;
            zp++;
          }

        if (!row)
          {
            memset (f, out_in, (size_t) c[0] + 1);
            continue;
          }
        {
          const float *restrict v = src->v + ((ptrdiff_t) src->base + xa + (ptrdiff_t) y * src->sy
                                              + (ptrdiff_t) z * src->sz);

          for (int x = 0; x < xa; x++)
            f[x] = out_in;
          for (int x = xa; x < xb; x++)
            f[x] = level - v[x - xa] < iso_l;
          for (int x = xb; x <= c[0]; x++)
            f[x] = out_in;
        }
      }
}

/* Marches the live cells of block P into OUT from its corners in VAL
 * (corner (x, y, z), -1 <= x <= BLOCK + 1, at (x + 1) + (y + 1) VSX
 * + (z + 1) VSXY): S->val, or the block's window of the wave's slab read
 * in place; or, when SRC is not NULL (VAL unused), where the field's view
 * keeps them. */
static void
block_mesh (Iso *iso, const BlockPlan *p, BlockOut *out, Scratch *s, const float *val,
            size_t vsx, size_t vsxy, const BlockSrc *src)
{
  const TgIsoOptions *o = iso->o;
  const int *c = p->c, *nsub = p->nsub, *g0 = p->g0;
  const bool *sub_skip = p->sub_skip;
  size_t sx = (size_t) c[0] + 3, sxy = sx * (size_t) (c[1] + 3);
  int nv = 0;
  int64_t nt = 0;
  float iso_l = (float) o->iso;
  float xs[PAD], ys[PAD], zs[PAD]; /* corner -1 at [0] */
  int64_t t1 = iso->timed ? now_ns () : 0;

  for (int x = -1; x <= c[0] + 1; x++)
    xs[x + 1] = coord (iso, 0, g0[0] + x);
  for (int y = -1; y <= c[1] + 1; y++)
    ys[y + 1] = coord (iso, 1, g0[1] + y);
  for (int z = -1; z <= c[2] + 1; z++)
    zs[z + 1] = coord (iso, 2, g0[2] + z);

  /* Inside flags, in S->in with the block's strides: of the whole padded
   * array 64 at a time when VAL has those strides too (a fixed count the
   * vectoriser takes; values past the block's are never read), else of
   * the rows of corners 0 .. c (the cells' corners) from the slab, 48 a
   * row (a row's slack is the next row's, rewritten after). */
  if (src)
    src_flags (src, c, iso_l, s->in, sx, sxy);
  else if (vsx == sx && vsxy == sxy)
    {
      const float *restrict v = val;
      uint8_t *restrict in = s->in;

      for (size_t q = 0; q < sxy * (size_t) (c[2] + 3); q += 64)
        for (int t = 0; t < 64; t++)
          in[q + (size_t) t] = v[q + (size_t) t] < iso_l;
    }
  else
    for (size_t z = 1; z <= (size_t) c[2] + 1; z++)
      for (size_t y = 1; y <= (size_t) c[1] + 1; y++)
        {
          const float *restrict v = val + z * vsxy + y * vsx;
          uint8_t *restrict in = s->in + z * sxy + y * sx;

          for (int x = 0; x < 48; x++)
            in[x] = v[x] < iso_l;
        }

  /* Cells of the live sub-blocks, in z, y, x order; vertices are numbered
   * on first use, so their order is fixed too.  Edge slots live in a ring
   * of two corner slices (an edge's lower corner is in the cell's slice or
   * the next), small enough to stay in L1; an entry is a vertex index,
   * valid only when that vertex names the same edge (vslot), so the ring
   * is never cleared.  This pass only numbers: whether a vertex is new is
   * data, not a branch (a new one's edge is written to vslot[nv] either
   * way and kept by counting it), and block_vertices then makes every new
   * vertex in one loop. */
  {
    size_t slice = (size_t) (c[0] + 1) * (size_t) (c[1] + 1);
    size_t soff[2][12]; /* an edge's slot from its cell's, by the cell's z parity */
    uint32_t epack[12]; /* an edge's vslot from its cell's packed corner */
    uint32_t *restrict vslot;
    int32_t *restrict slot = s->slot;
    const McOrder *mc = mc_order ();
    bool full = p->n_live == nsub[0] * nsub[1] * nsub[2];

    for (int e = 0; e < 12; e++)
      {
        size_t d = (size_t) edge_corner[e][1] * (size_t) (c[0] + 1) + edge_corner[e][0];

        for (int par = 0; par < 2; par++)
          soff[par][e] = 3 * ((size_t) (par ^ edge_corner[e][2]) * slice + d) + (size_t) (e >> 2);
        epack[e] = (uint32_t) edge_corner[e][0] | (uint32_t) edge_corner[e][1] << 8
                   | (uint32_t) edge_corner[e][2] << 16 | (uint32_t) (e >> 2) << 24;
      }
    for (int k = 0; k < 3; k++)
      {
        out->g0[k] = g0[k];
        out->c[k] = c[k];
      }
    if (out_grow (out, 1, 0, false) < 0)
      out->error = TG_ENOMEM;
    else
      out->vslot[0] = UINT32_MAX; /* read before any vertex is made */
    for (int z = 0; z < c[2] && out->error == 0; z++)
      for (int y = 0; y < c[1] && out->error == 0; y++)
        {
          size_t c0 = (size_t) (z + 1) * sxy + (size_t) (y + 1) * sx + 1;
          const bool *skip = sub_skip + ((z / SUB) * nsub[1] + y / SUB) * nsub[0];
          const size_t *so = soff[z & 1];
          const uint16_t *fresh_of[4]; /* McOrder.fresh, by (x == 0) | (x == c[0] - 1) << 1 */
          bool inner_row;
          uint8_t col[COLS], row_cs[COLS];
          uint64_t act_all;
          uint64_t any = 0, all = ~(uint64_t) 0;
          int live = 0;
          uint32_t *restrict tri_out;

          for (int si = 0; si < nsub[0]; si++)
            live |= !skip[si];
          if (!live)
            continue;
          /* The inside bits of each column of four corners, at the case
           * bits of a cell's lower x corners (a cell's case is its two
           * columns), eight columns at a time.  A row with no sign change
           * has no surface. */
          for (int w = 0; w < COLS / 8; w++)
            {
              uint64_t r00, r10, r01, r11, cc;

              memcpy (&r00, s->in + c0 + 8 * w, 8);
              memcpy (&r10, s->in + c0 + sx + 8 * w, 8);
              memcpy (&r01, s->in + c0 + sxy + 8 * w, 8);
              memcpy (&r11, s->in + c0 + sxy + sx + 8 * w, 8);
              cc = r00 | r10 << 2 | r01 << 4 | r11 << 6;
              memcpy (col + 8 * w, &cc, 8);
              if (8 * w + 8 > c[0] + 1) /* past the row's last column */
                {
                  uint64_t keep = 8 * w >= c[0] + 1
                                    ? 0 : ~(uint64_t) 0 >> (64 - 8 * (c[0] + 1 - 8 * w));
                  any |= cc & keep;
                  all &= cc | ~keep;
                }
              else
                {
                  any |= cc;
                  all &= cc;
                }
            }
          if (any == 0 || all == 0x5555555555555555ull)
            continue;
          /* Room for the row: a cell makes at most 12 vertices (one more
           * slot for vslot[nv]) and TG__MC_MAX_TRIS triangles. */
          if (out_grow (out, nv + 12 * c[0] + 1, nt + TG__MC_MAX_TRIS * c[0], iso->chunks != NULL)
              < 0)
            {
              out->error = TG_ENOMEM;
              break;
            }
          vslot = out->vslot;
          tri_out = out->tri;
          for (int q = 0; q < 4; q++)
            fresh_of[q] = mc->fresh[q | (y == 0) << 2 | (y == c[1] - 1) << 3 | (z == 0) << 4];
          inner_row = mc->inner_ok && y > 0 && y < c[1] - 1 && z > 0;
          /* Cases eight cells at a time; a cell has triangles unless its
           * case is 0 or 255, so only those are visited: one bit a cell of
           * the row (BLOCK <= 64), so one loop runs over the row's live
           * cells (a loop a word would end, unpredictably, once a word). */
          act_all = 0;
          for (int w = 0; w < (c[0] + 7) / 8; w++)
            {
              uint64_t c_lo, c_hi, cs8, act;
              const uint64_t k7f = 0x7f7f7f7f7f7f7f7full, k80 = 0x8080808080808080ull;

              memcpy (&c_lo, col + 8 * w, 8);
              memcpy (&c_hi, col + 8 * w + 1, 8);
              cs8 = c_lo | c_hi << 1; /* bytes of at most 0x55 and 0xaa: no carries */
              memcpy (row_cs + 8 * w, &cs8, 8);
              act = (((cs8 & k7f) + k7f) | cs8) & ((((~cs8) & k7f) + k7f) | ~cs8) & k80;
              /* The eight cells are sub-block W's (SUB is 8); the high
               * bits of the bytes gathered into one byte. */
              act = skip[w] ? 0 : (act >> 7) * 0x0102040810204080ull >> 56;
              act_all |= act << (8 * w);
            }
          act_all &= ~(uint64_t) 0 >> (64 - c[0]);
          while (act_all)
            {
              int x = __builtin_ctzll (act_all);
              int cs = row_cs[x];
              int nref = 3 * tg__mc_ntri[cs];
              const int8_t *tri = tg__mc_tris[cs];
              const size_t sbase = 3 * ((size_t) y * (size_t) (c[0] + 1) + (size_t) x);
              const uint32_t cpack = (uint32_t) x | (uint32_t) y << 8 | (uint32_t) z << 16;
              uint32_t unv = (uint32_t) nv;

              act_all &= act_all - 1;
              if (iso->chunks)
                {
                  int64_t gc[3] = { g0[0] + x, g0[1] + y, g0[2] + z };
                  uint32_t tag = tg__iso_chunk_of (iso->chunks, iso->org, iso->step, gc);

                  for (int t = 0; t < nref / 3; t++)
                    out->tag[nt + t] = tag;
                }
              if (full && inner_row && x > 0 && x < c[0] - 1)
                {
                  /* Inside the block: its three edges first, each a
                   * new vertex where crossed, in the order of first
                   * use (an edge no cell crosses gets a number no
                   * cell reads); then its triangles read the slots. */
                  const uint8_t *in3 = mc->inner[cs];
                  uint32_t cross = mc->cross[cs];

                  for (int i = 0; i < 3; i++)
                    {
                      int e = in3[i];

                      slot[sbase + so[e]] = (int32_t) unv;
                      vslot[unv] = cpack + epack[e];
                      unv += cross >> e & 1u;
                    }
                  /* Twelve uses whatever the case (a fixed count: no
                   * branch on it; the table pads with edge 0 and the
                   * row's room takes the spill), the rare fifth
                   * triangle apart. */
                  for (int t = 0; t < 12; t++)
                    tri_out[3 * nt + t] = (uint32_t) slot[sbase + so[tri[t]]];
                  if (nref > 12)
                    for (int t = 12; t < 15; t++)
                      tri_out[3 * nt + t] = (uint32_t) slot[sbase + so[tri[t]]];
                }
              else if (full)
                {
                  /* Which of the cell's edges it makes is known: those
                   * it owns, at their first use. */
                  uint32_t fm = fresh_of[(x == 0) | (x == c[0] - 1) << 1][cs];

                  for (int t = 0; t < nref; t++)
                    {
                      int e = tri[t];
                      int32_t *sl = slot + sbase + so[e];
                      uint32_t v = (uint32_t) *sl;
                      uint32_t fresh = fm >> t & 1u;

                      v ^= (v ^ unv) & (0u - fresh);
                      vslot[unv] = cpack + epack[e];
                      *sl = (int32_t) v;
                      tri_out[3 * nt + t] = v;
                      unv += fresh;
                    }
                }
              else
                for (int t = 0; t < nref; t++)
                  {
                    int e = tri[t];
                    int32_t *sl = slot + sbase + so[e];
                    uint32_t key = cpack + epack[e];
                    uint32_t v = (uint32_t) *sl;
                    uint32_t fresh = (uint32_t) (v >= unv)
                                     | (uint32_t) (vslot[v < unv ? v : unv] != key);

                    v ^= (v ^ unv) & (0u - fresh);
                    vslot[unv] = key;
                    *sl = (int32_t) v;
                    tri_out[3 * nt + t] = v;
                    unv += fresh;
                  }
              nv = (int) unv;
              nt += nref / 3;
            }
        }
  }
#ifdef TG__FBM_HAVE_X86
  if (out->error == 0 && iso->avx512)
    {
      float cat[3 * PAD];

      memcpy (cat, xs, sizeof (float) * PAD);
      memcpy (cat + PAD, ys, sizeof (float) * PAD);
      memcpy (cat + 2 * PAD, zs, sizeof (float) * PAD);
      if (src)
        block_vertices_view_avx512 (out, nv, src, cat, iso_l,
                                    o->normals == TG__ISO_NORMALS_GRADIENT
                                      && o->shading == TG__ISO_SMOOTH);
      else
        block_vertices_avx512 (out, nv, val, (int) vsx, (int) vsxy, cat, iso_l,
                               o->normals == TG__ISO_NORMALS_GRADIENT
                                 && o->shading == TG__ISO_SMOOTH);
    }
  else
#endif
  if (out->error == 0)
    block_vertices (iso, out, nv, val, vsx, vsxy, src, xs, ys, zs);
  out->nv = nv;
  out->nt = nt;
  if (iso->timed)
    atomic_fetch_add (&iso->ns_mesh, now_ns () - t1);
}

/* --- sharing the corners of a wave --------------------------------------------- */

/* A wave of a field with a grid path is a layer of blocks (a row, when a
 * layer's slab would pass SLAB_MAX points), whose corners are sampled
 * once into one slab, each block its own part, so a corner on a block
 * face (and the gradient border) is not sampled twice; each block then
 * marches its window of the slab where it is.  A block's part ends two
 * corners past its cells along x and y (own_range), so its window takes
 * only corners of blocks before it in the wave: blocks are sampled and
 * marched a few at a time, each window still in cache when it is read.
 * A wave whose blocks would sample fewer corners on their own (a sparse
 * surface: the slab takes whole sub-blocks next to live ones) goes block
 * by block as before. */
#define SLAB_MAX ((size_t) 4 << 20)
#define MESH_CHUNK 16 /* at most this many blocks of a slab's wave sampled, marched, stitched */

/* The slab's sub-block of block P's sub-block S along AXIS. */
static inline int
slab_sub (const Iso *iso, const BlockPlan *p, int axis, int s)
{
  return (int) ((p->g0[axis] - (iso->slab_org[axis] + 1)) / SUB) + s;
}

/* Block P's part of the slab along AXIS for its sub-block S: lattice
 * points [*LO, *HI) of the block, along x and y shifted up by the border
 * and one (the corners a window reads past its cells), so that a block's
 * window [-1, c + 1] holds its own part and corners of the blocks before
 * it only; the slab's first and last blocks also take its outer points
 * (and the border, for gradient normals); along z, a column CARRIED from
 * the layer below starts above what it holds. */
static void
own_range (const Iso *iso, const BlockPlan *p, int axis, int s, bool carried, int *lo, int *hi)
{
  bool first = p->g0[axis] - 1 == iso->slab_org[axis];
  bool last = p->g0[axis] + p->c[axis] + 2 == iso->slab_org[axis] + iso->slab_n[axis];
  int border = iso->o->normals == TG__ISO_NORMALS_GRADIENT && iso->o->shading == TG__ISO_SMOOTH;
  int sh = axis < 2 ? 1 + border : 0;

  *lo = s == 0 && first ? -border : s * SUB + sh;
  *hi = s == p->nsub[axis] - 1 ? (last ? p->c[axis] + 1 + border : p->c[axis] + sh)
                               : s * SUB + SUB + sh;
  if (axis == 2 && s == 0 && carried)
    *lo = border + 1; /* the layer below sampled up to here */
}

/* Whether the bottom corners of block P's sub-block column (SI, SJ) were
 * carried over from the layer below. */
static inline bool
carried_at (const Iso *iso, const BlockPlan *p, int si, int sj)
{
  return iso->prev_slab
         && iso->carried[(size_t) slab_sub (iso, p, 1, sj) * (size_t) iso->slab_ns[0]
                         + (size_t) slab_sub (iso, p, 0, si)];
}


/* Samples the sub-blocks SA .. SB (inclusive, per axis) of block P's part
 * of the slab as one grid, whose columns are all CARRIED or none; along x
 * SB is a sub-block of block Q (P, or the next block of its slab row). */
static int
slab_grid (Iso *iso, const BlockPlan *p, const BlockPlan *q, Scratch *s, const int sa[3],
           const int sb[3], bool carried, int64_t *evals)
{
  size_t sx = (size_t) iso->slab_n[0], sxy = sx * (size_t) iso->slab_n[1];
  int lo[3], hi[3], unused;
  TgFieldGrid g;

  for (int k = 0; k < 3; k++)
    {
      const BlockPlan *e = k == 0 ? q : p;

      own_range (iso, p, k, sa[k], carried, &lo[k], &unused);
      own_range (iso, e, k, sb[k], carried, &unused, &hi[k]);
      lo[k] += (int) (p->g0[k] - iso->slab_org[k]);
      hi[k] += (int) (e->g0[k] - iso->slab_org[k]);
    }
  g = (TgFieldGrid) { iso->slab_xs[0] + lo[0], iso->slab_xs[1] + lo[1], iso->slab_xs[2] + lo[2],
                      hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2] };
  *evals += (int64_t) g.nx * g.ny * g.nz;
  return tg_field_eval_grid (iso->f, &g,
                             iso->slab + (size_t) lo[0] + (size_t) lo[1] * sx + (size_t) lo[2] * sxy,
                             sx, sxy, &s->work);
}

#define NEED(si, sj, sk)                                                                          \
  iso->need[((size_t) slab_sub (iso, p, 2, sk) * (size_t) ns[1] + (size_t) slab_sub (iso, p, 1, sj)) \
              * (size_t) ns[0] + (size_t) slab_sub (iso, p, 0, si)]

/* Whether block P's part of the slab is one grid: every sub-block to be
 * sampled, and the columns all carried from the layer below (*CARRIED)
 * or none. */
static bool
slab_whole (const Iso *iso, const BlockPlan *p, bool *carried)
{
  const int *nsub = p->nsub, *ns = iso->slab_ns;
  int n_need = 0, n_carried = 0;

  for (int sk = 0; sk < nsub[2]; sk++)
    for (int sj = 0; sj < nsub[1]; sj++)
      for (int si = 0; si < nsub[0]; si++)
        n_need += NEED (si, sj, sk);
  for (int sj = 0; sj < nsub[1]; sj++)
    for (int si = 0; si < nsub[0]; si++)
      n_carried += carried_at (iso, p, si, sj);
  *carried = n_carried > 0;
  return n_need == nsub[0] * nsub[1] * nsub[2]
         && (n_carried == 0 || n_carried == nsub[0] * nsub[1]);
}

/* Whether block B of the wave samples the next block's part of the slab
 * with its own, as one grid: B at an even place of its slab row, both
 * parts whole and alike, at most TG_FIELD_GRID_MAX corners along x.  Rows
 * twice as long share the grid's per-row work (a 256^3 fBm's noise costs
 * about 15 % less a sample). */
static bool
slab_pair (const Iso *iso, int b)
{
  const BlockPlan *p = &iso->plan[b], *q = &iso->plan[b + 1];
  int bi = (iso->wave0 + b) % iso->nb[0], lo, hi, unused;
  bool cp, cq;

  if (bi % 2 != 0 || bi + 1 >= iso->nb[0] || iso->out[b].error || iso->out[b + 1].error
      || !slab_whole (iso, p, &cp) || !slab_whole (iso, q, &cq) || cp != cq)
    return false;
  own_range (iso, p, 0, 0, cp, &lo, &unused);
  own_range (iso, q, 0, q->nsub[0] - 1, cq, &unused, &hi);
  return hi + q->g0[0] - (lo + p->g0[0]) <= TG_FIELD_GRID_MAX;
}

/* Samples block B's part of the slab: the sub-blocks that are live, or
 * next to a live one of any block of the wave; in one grid when that is
 * all of them (with the next block's, see slab_pair), else per run along
 * x.  Nothing when the block before took it. */
static int
block_sample_slab (Iso *iso, int b, Scratch *s)
{
  const BlockPlan *p = &iso->plan[b];
  const int *nsub = p->nsub, *ns = iso->slab_ns;
  int64_t evals = 0, t0 = iso->timed ? now_ns () : 0;
  int rc = 0, n_need = 0;
  bool carried_all;

  if ((iso->wave0 + b) % iso->nb[0] % 2 == 1 && slab_pair (iso, b - 1))
    return 0;
  for (int sk = 0; sk < nsub[2]; sk++)
    for (int sj = 0; sj < nsub[1]; sj++)
      for (int si = 0; si < nsub[0]; si++)
        n_need += NEED (si, sj, sk);
  if (slab_whole (iso, p, &carried_all))
    {
      const BlockPlan *q = slab_pair (iso, b) ? &iso->plan[b + 1] : p;
      int sa[3] = { 0, 0, 0 }, sb[3] = { q->nsub[0] - 1, nsub[1] - 1, nsub[2] - 1 };

      rc = slab_grid (iso, p, q, s, sa, sb, carried_all, &evals);
    }
  else if (n_need > 0)
    for (int sk = 0; sk < nsub[2] && rc >= 0; sk++)
      for (int sj = 0; sj < nsub[1] && rc >= 0; sj++)
        for (int si = 0; si < nsub[0] && rc >= 0; si++)
          if (NEED (si, sj, sk))
            {
              int sa[3] = { si, sj, sk }, sb[3] = { si, sj, sk };
              bool carried = sk == 0 && carried_at (iso, p, si, sj);

              while (sb[0] + 1 < nsub[0] && NEED (sb[0] + 1, sj, sk)
                     && (sk > 0 || carried_at (iso, p, sb[0] + 1, sj) == carried))
                sb[0]++;
              rc = slab_grid (iso, p, p, s, sa, sb, carried, &evals);
              si = sb[0];
            }
#undef NEED
  atomic_fetch_add (&iso->evaluations, evals);
  if (iso->timed)
    atomic_fetch_add (&iso->ns_eval, now_ns () - t0);
  return rc < 0 ? rc : 0;
}

/* The workers of the phases: skip tests, shared sampling, marching from
 * the slab; and, for a wave without a slab, all three per block. */
static void
plans_run (void *user, int begin, int end)
{
  Iso *iso = user;
  Scratch *s = scratch_take (iso);

  for (int b = begin; b < end; b++)
    {
      iso->out[b].nv = 0;
      iso->out[b].nt = 0;
      iso->out[b].error = s ? 0 : TG_ENOMEM;
      iso->plan[b].n_live = 0;
      if (s)
        block_plan (iso, iso->wave0 + b, &iso->plan[b], s);
    }
  if (s)
    scratch_give (iso, s);
}

static void
slab_sample_run (void *user, int begin, int end)
{
  Iso *iso = user;
  Scratch *s = scratch_take (iso);

  for (int b = iso->sample0 + begin; b < iso->sample0 + end; b++)
    if (iso->out[b].error == 0)
      iso->out[b].error = s ? block_sample_slab (iso, b, s) : TG_ENOMEM;
  if (s)
    scratch_give (iso, s);
}

static void
slab_mesh_run (void *user, int begin, int end)
{
  Iso *iso = user;
  Scratch *s = scratch_take (iso);
  size_t sx = (size_t) iso->slab_n[0], sxy = sx * (size_t) iso->slab_n[1];

  for (int i = begin; i < end; i++)
    {
      const BlockPlan *p = &iso->plan[iso->mesh0 + i];
      BlockOut *out = &iso->mout[i];

      out->nv = 0;
      out->nt = 0;
      out->error = iso->out[iso->mesh0 + i].error;
      if (out->error || p->n_live == 0)
        continue;
      if (s == NULL)
        {
          out->error = TG_ENOMEM;
          continue;
        }
      /* Marched from its window of the slab, in place. */
      block_mesh (iso, p, out, s,
                  iso->slab + (size_t) (p->g0[0] - 1 - iso->slab_org[0])
                    + (size_t) (p->g0[1] - 1 - iso->slab_org[1]) * sx
                    + (size_t) (p->g0[2] - 1 - iso->slab_org[2]) * sxy,
                  sx, sxy, NULL);
    }
  if (s)
    scratch_give (iso, s);
}

/* Block P's corners in ISO's view: the view's grid point of the box's
 * lattice point g is g + 1. */
static void
block_src (const Iso *iso, const BlockPlan *p, BlockSrc *b)
{
  const TgFieldView *w = &iso->view;

  b->v = w->v;
  b->sy = (int32_t) w->sy;
  b->sz = (int32_t) w->sz;
  b->base = (int32_t) (w->at + (p->g0[0] + 1) + (ptrdiff_t) (p->g0[1] + 1) * w->sy
                       + (ptrdiff_t) (p->g0[2] + 1) * w->sz);
  b->level = w->level;
  for (int k = 0; k < 3; k++)
    {
      b->lo[k] = w->lo[k] - (p->g0[k] + 1);
      b->n[k] = w->hi[k] - w->lo[k];
    }
}

static void
blocks_run (void *user, int begin, int end)
{
  Iso *iso = user;
  Scratch *s = scratch_take (iso);

  for (int b = begin; b < end; b++)
    {
      BlockOut *out = &iso->out[b];
      BlockPlan p;

      out->nv = 0;
      out->nt = 0;
      out->error = s ? 0 : TG_ENOMEM;
      if (s == NULL)
        continue;
      block_plan (iso, iso->wave0 + b, &p, s);
      if (p.n_live == 0)
        continue;
      if (iso->direct)
        {
          BlockSrc src;

          block_src (iso, &p, &src);
          block_mesh (iso, &p, out, s, NULL, 0, 0, &src);
          continue;
        }
      out->error = block_sample (iso, &p, s);
      if (out->error == 0)
        block_mesh (iso, &p, out, s, s->val, (size_t) p.c[0] + 3,
                    ((size_t) p.c[0] + 3) * ((size_t) p.c[1] + 3), NULL);
    }
  if (s)
    scratch_give (iso, s);
}

static void
block_out_clear (BlockOut *b)
{
  free (b->pos);
  free (b->nrm);
  free (b->tri);
  free (b->tag);
  free (b->vslot);
  memset (b, 0, sizeof *b);
}

/* --- stitching ---------------------------------------------------------------- */

/* Open addressing from boundary edge ids to mesh vertex indices. */
typedef struct
{
  uint64_t *key; /* 0 = empty (ids are stored + 1) */
  uint32_t *val;
  size_t cap, n;
} EdgeMap;

static inline size_t
edge_hash (uint64_t k, size_t mask)
{
  return (size_t) (tg_mix64 (k) & mask);
}

/* The slot of KEY in M: where it is, or the empty slot where it goes. */
static inline size_t
edge_map_slot (const EdgeMap *m, uint64_t key)
{
  size_t h = edge_hash (key, m->cap - 1);

  while (m->key[h] && m->key[h] != key)
    h = (h + 1) & (m->cap - 1);
  return h;
}

static int
edge_map_grow (EdgeMap *m)
{
  size_t cap = m->cap ? m->cap * 2 : 4096;
  uint64_t *key = calloc (cap, sizeof *key);
  uint32_t *val = malloc (cap * sizeof *val);

  if (!key || !val)
    {
      free (key);
      free (val);
      return TG_ENOMEM;
    }
  for (size_t i = 0; i < m->cap; i++)
    if (m->key[i])
      {
        size_t h = edge_hash (m->key[i], cap - 1);
        while (key[h])
          h = (h + 1) & (cap - 1);
        key[h] = m->key[i];
        val[h] = m->val[i];
      }
  free (m->key);
  free (m->val);
  m->key = key;
  m->val = val;
  m->cap = cap;
  return 0;
}

typedef struct Mesh
{
  float *pos, *nrm;
  uint32_t *idx;
  uint32_t *tag;   /* per triangle: its chunk, when the level is chunked */
  bool tagged;
  int64_t nv, nt, cap_v, cap_t;
  /* The ids of the edges on block faces made so far: MAP[CUR] those of
   * the layer of blocks whose lowest cell is MAP_Z, MAP[1 - CUR] the layer
   * below's; an edge is shared by at most those two layers, so older
   * ones are dropped and the maps stay small enough for the cache. */
  EdgeMap map[2];
  int cur;
  int64_t map_z;
  /* Or, when a plane of the box is small (see FACE_DIRECT_MAX), the same
   * by position (no hashing: neighbouring edges, neighbouring entries),
   * each entry a vertex index or UINT32_MAX:
   * ZPLANE[P & 1], the x and y edges of lattice plane z = P BLOCK (or the
   * box's top), (x, y, axis) with x fastest, valid from vertex ZTHR[P & 1]
   * on (the layers below and above the plane make them);
   * XFACE, the y and z edges on x = FX BLOCK (or the box's side) of the
   * layer of blocks being stitched, (axis, y, z - the layer's z, FX);
   * YFACE the same for y faces, (axis, x, z - the layer's z, FY), both
   * valid from LAYER_V0 (this layer's first vertex) on: entries older
   * than the layer are never cleared, only outnumbered. */
  bool direct;
  uint32_t *zplane[2], *xface, *yface;
  uint32_t zthr[2], layer_v0;
  int64_t dn[3];
  bool any_zero_normal;
  int64_t blocks_done, blocks; /* for growing to the projected size */
  int64_t first_v, first_t;    /* the first capacities, when not 0 (see mesh_first) */
} Mesh;

/* A capacity of at least N and twice OLD, or N projected from the blocks
 * done to all of them (at most 8 N): growing once or twice instead of
 * doubling ten times, each time copying into new pages. */
static int64_t
mesh_grow (const Mesh *m, int64_t old, int64_t n)
{
  int64_t cap = old * 2 > n ? old * 2 : n;

  if (m->blocks_done > 0)
    {
      double proj = (double) n * 1.1 * (double) m->blocks / (double) m->blocks_done;

      proj = proj < 8.0 * (double) n ? proj : 8.0 * (double) n;
      if (proj > (double) cap)
        cap = (int64_t) proj;
    }
  return cap;
}

/* Arrays of several MB ask for transparent huge pages (as core/value.c's
 * grids): 2 M triangles are 24 MB of indices, 6000 small pages that a
 * first touch each faults in and clears, 12 huge ones.  Advice only, and
 * only before the first touch (pages already there stay small). */
static void
huge_pages (void *data, size_t bytes)
{
#ifdef MADV_HUGEPAGE
  const uintptr_t page = (uintptr_t) 2 << 20;
  uintptr_t a = ((uintptr_t) data + page - 1) & ~(page - 1);
  uintptr_t b = ((uintptr_t) data + bytes) & ~(page - 1);

  if (bytes >= ((size_t) 4 << 20) && b > a)
    (void) madvise ((void *) a, b - a, MADV_HUGEPAGE);
#else
  (void) data;
  (void) bytes;
#endif
}

/* OLD (USED bytes of it kept) grown to BYTES: an array of many MB is a
 * new one, given huge pages before anything touches it, and the used part
 * copied over (realloc would copy or remap it into small pages first, and
 * every page the mesh then fills would fault on its own); a small one is
 * realloc'ed.  NULL when out of memory, OLD left as it was. */
static void *
grow_array (void *old, size_t used, size_t bytes)
{
  void *p;

  if (bytes < ((size_t) 4 << 20))
    return realloc (old, bytes);
  if ((p = malloc (bytes)) == NULL)
    return NULL;
  huge_pages (p, bytes);
  if (used > 0)
    memcpy (p, old, used);
  free (old);
  return p;
}

/* The first capacities of the mesh of a box of N cells: three vertices
 * and six triangles per cell of the box's faces (a 256^3 fBm of 4 octaves
 * makes 2.75 vertices and a sphere in it 0.5; iso_memory declares 64
 * bytes a face cell, twice, the same order), at most MESH_FIRST_MAX
 * vertices.  Reserved, not touched: pages a small surface never reaches
 * cost nothing, and the mesh is not grown and copied step by step (each
 * copy faulting in new pages); arrays of 4 MB and more also get huge
 * pages (grow_array).  The mesh is shrunk to size when handed over. */
#define MESH_FIRST_MAX ((int64_t) 1 << 21)

static void
mesh_first (Mesh *m, const int n[3])
{
  int64_t faces = 2 * ((int64_t) n[0] * n[1] + (int64_t) n[1] * n[2] + (int64_t) n[2] * n[0]);

  m->first_v = 3 * faces < MESH_FIRST_MAX ? 3 * faces : MESH_FIRST_MAX;
  m->first_t = 2 * m->first_v;
}

static int
mesh_reserve (Mesh *m, int64_t nv, int64_t nt)
{
  if (nv > m->cap_v)
    {
      int64_t cap = mesh_grow (m, m->cap_v ? m->cap_v : m->first_v ? m->first_v / 2 : 2048, nv);
      size_t used = sizeof (float) * 3 * (size_t) m->nv, bytes = sizeof (float) * 3 * (size_t) cap;
      void *p, *q;

      p = grow_array (m->pos, used, bytes);
      if (p)
        m->pos = p;
      q = grow_array (m->nrm, used, bytes);
      if (q)
        m->nrm = q;
      if (!p || !q)
        return TG_ENOMEM;
      m->cap_v = cap;
    }
  if (nt > m->cap_t)
    {
      int64_t cap = mesh_grow (m, m->cap_t ? m->cap_t : m->first_t ? m->first_t / 2 : 4096, nt);
      void *p;

      p = grow_array (m->idx, sizeof (uint32_t) * 3 * (size_t) m->nt,
                      sizeof (uint32_t) * 3 * (size_t) cap);
      if (p == NULL)
        return TG_ENOMEM;
      m->idx = p;
      if (m->tagged)
        {
          p = grow_array (m->tag, sizeof (uint32_t) * (size_t) m->nt,
                          sizeof (uint32_t) * (size_t) cap);
          if (p == NULL)
            return TG_ENOMEM;
          m->tag = p;
        }
      m->cap_t = cap;
    }
  return 0;
}

/* The face table entry of vertex K (BlockOut.vslot, on a face) of block
 * B, and in *THR the first vertex from which its entries are valid: a
 * plane z = P BLOCK, else a side of the layer's blocks (the box's far
 * sides count as the next multiple of BLOCK). */
static inline uint32_t *
face_entry (const Mesh *m, const BlockOut *b, uint32_t k, uint32_t *thr)
{
  int l[3] = { (int) (k & 0xff), (int) (k >> 8 & 0xff), (int) (k >> 16 & 0xff) };
  int ax = (int) (k >> 24 & 3);
  int64_t g[3] = { b->g0[0] + l[0], b->g0[1] + l[1], b->g0[2] + l[2] };

  if (ax != 2 && (l[2] == 0 || l[2] == b->c[2]))
    {
      int64_t pz = (g[2] + BLOCK - 1) / BLOCK;

      *thr = m->zthr[pz & 1];
      return m->zplane[pz & 1] + 2 * (g[1] * (m->dn[0] + 1) + g[0]) + ax;
    }
  *thr = m->layer_v0;
  if (ax != 0 && (l[0] == 0 || l[0] == b->c[0]))
    {
      int64_t fx = (g[0] + BLOCK - 1) / BLOCK;

      return m->xface + 2 * ((fx * (BLOCK + 1) + l[2]) * (m->dn[1] + 1) + g[1]) + (ax - 1);
    }
  {
    int64_t fy = (g[1] + BLOCK - 1) / BLOCK;

    return m->yface + 2 * ((fy * (BLOCK + 1) + l[2]) * (m->dn[0] + 1) + g[0]) + (ax >> 1);
  }
}

/* Appends block B to M, sharing the vertices of edges already seen: those
 * on a face of the block, by their global edge id (the lower corner's
 * lattice index, times 3, plus the axis) in the box of N cells. */
static int
stitch (Mesh *m, const BlockOut *b, const int n[3], TgError *err)
{
  uint64_t n0 = (uint64_t) n[0] + 1, n1 = (uint64_t) n[1] + 1;
  uint32_t *map;
  int rc;

  if (b->nv == 0)
    return 0;
  if (m->nv + b->nv > (int64_t) UINT32_MAX)
    return tg_error_set (err, TG_ERANGE, "params.cell_m", TG_MSG_TOO_MANY_VERTICES);
  if ((rc = mesh_reserve (m, m->nv + b->nv, m->nt + b->nt)) < 0)
    return tg_error_set (err, rc, NULL, "out of memory for the mesh");
  map = malloc (sizeof (uint32_t) * (size_t) b->nv);
  if (map == NULL)
    return tg_error_set (err, TG_ENOMEM, NULL, TG_MSG_OUT_OF_MEMORY);
  /* A new layer of blocks: the one below the previous layer is done. */
  if (b->g0[2] != m->map_z && m->direct)
    {
      int p = b->g0[2] / BLOCK; /* its bottom plane; the top one is P + 1 */

      if (b->g0[2] != m->map_z + BLOCK)
        m->zthr[p & 1] = (uint32_t) m->nv; /* the layer below made none */
      m->zthr[(p + 1) & 1] = (uint32_t) m->nv;
      m->layer_v0 = (uint32_t) m->nv;
      m->map_z = b->g0[2];
    }
  else if (b->g0[2] != m->map_z)
    {
      int drop = b->g0[2] == m->map_z + BLOCK ? 1 - m->cur : -1;

      for (int q = 0; q < 2; q++)
        if (drop < 0 || q == drop)
          {
            if (m->map[q].cap)
              memset (m->map[q].key, 0, sizeof (uint64_t) * m->map[q].cap);
            m->map[q].n = 0;
          }
      m->cur = drop < 0 ? 0 : drop;
      m->map_z = b->g0[2];
    }
  /* The face tables are a few MB, their entries a block reads written a
   * block, a row or a layer of blocks ago: all of them asked for first,
   * so their misses overlap instead of each waiting in turn. */
  if (m->direct)
    for (int v = 0; v < b->nv; v++)
      if (b->vslot[v] & VSLOT_FACE)
        {
          uint32_t thr;

          __builtin_prefetch (face_entry (m, b, b->vslot[v], &thr), 1);
        }
  for (int v = 0; v < b->nv; v++)
    {
      uint32_t k = b->vslot[v];
      int l[3] = { (int) (k & 0xff), (int) (k >> 8 & 0xff), (int) (k >> 16 & 0xff) };
      int ax = (int) (k >> 24 & 3);

      if ((k & VSLOT_FACE) && m->direct)
        {
          uint32_t thr, *e = face_entry (m, b, k, &thr);

          if (*e != UINT32_MAX && *e >= thr)
            {
              map[v] = *e;
              continue;
            }
          *e = (uint32_t) m->nv;
        }
      else if (k & VSLOT_FACE)
        {
          uint64_t key = ((((uint64_t) (b->g0[2] + l[2]) * n1 + (uint64_t) (b->g0[1] + l[1])) * n0
                           + (uint64_t) (b->g0[0] + l[0])) * 3u + (uint64_t) ax) + 1;

          EdgeMap *em = &m->map[1 - m->cur];
          size_t h;

          if (em->n > 0)
            {
              h = edge_map_slot (em, key);
              if (em->key[h])
                {
                  map[v] = em->val[h];
                  continue;
                }
            }
          em = &m->map[m->cur];
          if ((em->n + 1) * 2 > em->cap && edge_map_grow (em) < 0)
            {
              free (map);
              return tg_error_set (err, TG_ENOMEM, NULL, TG_MSG_OUT_OF_MEMORY);
            }
          h = edge_map_slot (em, key);
          if (em->key[h])
            {
              map[v] = em->val[h];
              continue;
            }
          em->key[h] = key;
          em->val[h] = (uint32_t) m->nv;
          em->n++;
        }
      map[v] = (uint32_t) m->nv;
      memcpy (m->pos + 3 * m->nv, b->pos + 3 * (size_t) v, sizeof (float) * 3);
      memcpy (m->nrm + 3 * m->nv, b->nrm + 3 * (size_t) v, sizeof (float) * 3);
      m->any_zero_normal |= b->nrm[3 * (size_t) v] == 0.0f && b->nrm[3 * (size_t) v + 1] == 0.0f
                            && b->nrm[3 * (size_t) v + 2] == 0.0f;
      m->nv++;
    }
  for (int64_t t = 0; t < 3 * b->nt; t++)
    m->idx[3 * m->nt + t] = map[b->tri[t]];
  if (m->tagged)
    memcpy (m->tag + m->nt, b->tag, sizeof (uint32_t) * (size_t) b->nt);
  m->nt += b->nt;
  free (map);
  return 0;
}

/* Stitches block B of the wave, marched into O, into ISO's mesh, or
 * names the block that could not be marched. */
static int
stitch_one (Iso *iso, int b, const BlockOut *o)
{
  int error = iso->out[b].error ? iso->out[b].error : o->error;

  iso->mesh->blocks = iso->n_blocks;
  iso->mesh->blocks_done = iso->wave0 + b + 1;
  if (error)
    return tg_error_set (iso->err, error, NULL, "out of memory meshing block %lld",
                         (long long) (iso->wave0 + b));
  return stitch (iso->mesh, o, iso->n, iso->err);
}

/* Face tables when a lattice plane of the box has at most this many
 * points (a 256^2 box has 66049: 1 MB of tables; a plane of more would
 * make them large next to the mesh, and the hash takes over). */
#define FACE_DIRECT_MAX ((int64_t) 1 << 18)

/* The entries of the face tables of a box of N0 x N1 x any cells: of a z
 * plane, of the x faces of a layer, of its y faces; 0 when a lattice
 * plane has more than FACE_DIRECT_MAX points (no tables). */
static int64_t
face_tables_size (int64_t n0, int64_t n1, size_t *nz, size_t *nx, size_t *ny)
{
  int64_t plane = (n0 + 1) * (n1 + 1);

  if (plane > FACE_DIRECT_MAX)
    return 0;
  *nz = 2 * (size_t) plane;
  *nx = 2 * (size_t) (n1 + 1) * (BLOCK + 1) * (size_t) ((n0 + BLOCK - 1) / BLOCK + 1);
  *ny = 2 * (size_t) (n0 + 1) * (BLOCK + 1) * (size_t) ((n1 + BLOCK - 1) / BLOCK + 1);
  return (int64_t) (2 * *nz + *nx + *ny);
}

/* Sets up M's face tables for a box of N cells, when small enough. */
static int
face_tables_init (Mesh *m, const int n[3])
{
  size_t nz, nx, ny;

  if (face_tables_size (n[0], n[1], &nz, &nx, &ny) == 0)
    return 0;
  m->zplane[0] = malloc (sizeof (uint32_t) * nz);
  m->zplane[1] = malloc (sizeof (uint32_t) * nz);
  m->xface = malloc (sizeof (uint32_t) * nx);
  m->yface = malloc (sizeof (uint32_t) * ny);
  if (!m->zplane[0] || !m->zplane[1] || !m->xface || !m->yface)
    return TG_ENOMEM;
  memset (m->zplane[0], 0xff, sizeof (uint32_t) * nz);
  memset (m->zplane[1], 0xff, sizeof (uint32_t) * nz);
  memset (m->xface, 0xff, sizeof (uint32_t) * nx);
  memset (m->yface, 0xff, sizeof (uint32_t) * ny);
  for (int k = 0; k < 3; k++)
    m->dn[k] = n[k];
  m->direct = true;
  return 0;
}

static void
face_tables_free (Mesh *m)
{
  free (m->zplane[0]);
  free (m->zplane[1]);
  free (m->xface);
  free (m->yface);
  m->zplane[0] = m->zplane[1] = m->xface = m->yface = NULL;
  m->direct = false;
}

static void
face_normal (const float *a, const float *b, const float *c, double n[3])
{
  double u[3], w[3];

  for (int k = 0; k < 3; k++)
    {
      u[k] = (double) b[k] - a[k];
      w[k] = (double) c[k] - a[k];
    }
  n[0] = u[1] * w[2] - u[2] * w[1];
  n[1] = u[2] * w[0] - u[0] * w[2];
  n[2] = u[0] * w[1] - u[1] * w[0];
}

static inline bool
is_zero3 (const float *n)
{
  return n[0] == 0.0f && n[1] == 0.0f && n[2] == 0.0f;
}

/* Area-weighted face normals at vertices, in triangle order; ONLY_ZERO
 * fills just the vertices whose normal is still zero (and so looks only at
 * the triangles around them: usually there are none). */
static int
face_normals (Mesh *m, bool only_zero)
{
  double *acc;

  if (only_zero && !m->any_zero_normal)
    return 0;
  acc = calloc ((size_t) (m->nv ? m->nv : 1) * 3, sizeof (double));
  if (acc == NULL)
    return TG_ENOMEM;
  for (int64_t t = 0; t < m->nt; t++)
    {
      const uint32_t *ix = m->idx + 3 * t;
      double n[3];

      if (only_zero && !is_zero3 (m->nrm + 3 * (size_t) ix[0])
          && !is_zero3 (m->nrm + 3 * (size_t) ix[1]) && !is_zero3 (m->nrm + 3 * (size_t) ix[2]))
        continue;
      face_normal (m->pos + 3 * (size_t) ix[0], m->pos + 3 * (size_t) ix[1],
                   m->pos + 3 * (size_t) ix[2], n);
      for (int q = 0; q < 3; q++)
        for (int k = 0; k < 3; k++)
          acc[3 * (size_t) ix[q] + k] += n[k];
    }
  for (int64_t v = 0; v < m->nv; v++)
    {
      float *nrm = m->nrm + 3 * v;
      double *a = acc + 3 * v;
      double len = sqrt (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);

      if (only_zero && !is_zero3 (nrm))
        continue;
      if (len > 0.0)
        for (int k = 0; k < 3; k++)
          nrm[k] = (float) (a[k] / len);
      else
        {
          nrm[0] = 0.0f;
          nrm[1] = 1.0f;
          nrm[2] = 0.0f;
        }
    }
  free (acc);
  return 0;
}

/* Flat shading: three vertices of its own per triangle, with its normal. */
static int
flatten (Mesh *m)
{
  int64_t nv = 3 * m->nt;
  float *pos, *nrm;
  uint32_t *idx;

  if (nv > (int64_t) UINT32_MAX)
    return TG_ERANGE;
  pos = malloc (sizeof (float) * 3 * (size_t) (nv ? nv : 1));
  nrm = malloc (sizeof (float) * 3 * (size_t) (nv ? nv : 1));
  idx = malloc (sizeof (uint32_t) * (size_t) (nv ? nv : 1));
  if (!pos || !nrm || !idx)
    {
      free (pos);
      free (nrm);
      free (idx);
      return TG_ENOMEM;
    }
  for (int64_t t = 0; t < m->nt; t++)
    {
      double n[3], len;
      float fn[3];

      face_normal (m->pos + 3 * (size_t) m->idx[3 * t], m->pos + 3 * (size_t) m->idx[3 * t + 1],
                   m->pos + 3 * (size_t) m->idx[3 * t + 2], n);
      len = sqrt (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
      for (int k = 0; k < 3; k++)
        fn[k] = len > 0.0 ? (float) (n[k] / len) : (k == 1 ? 1.0f : 0.0f);
      for (int q = 0; q < 3; q++)
        {
          int64_t v = 3 * t + q;
          memcpy (pos + 3 * v, m->pos + 3 * (size_t) m->idx[3 * t + q], sizeof (float) * 3);
          memcpy (nrm + 3 * v, fn, sizeof fn);
          idx[v] = (uint32_t) v;
        }
    }
  free (m->pos);
  free (m->nrm);
  free (m->idx);
  m->pos = pos;
  m->nrm = nrm;
  m->idx = idx;
  m->nv = nv;
  m->cap_v = nv;
  m->cap_t = m->nt;
  return 0;
}

/* --- the mesher ----------------------------------------------------------------- */

/* The chunk lattice of O (chunk_cells > 0): world-anchored, so a chunk's
 * name and cells do not depend on where the box starts. */
static void
lattice_init (const TgIsoOptions *o, TgIsoLattice *l)
{
  memset (l, 0, sizeof *l);
  l->cells = o->chunk_cells;
  for (int k = 0; k < 3; k++)
    {
      int64_t n = (int64_t) ceil ((o->max[k] - o->min[k]) / o->cell - 1e-9);

      if (n < 1)
        n = 1;
      l->off[k] = (int64_t) floor (o->min[k] / o->cell + 1e-6);
      l->c0[k] = tg__floor_div (l->off[k], l->cells);
      l->nc[k] = (int) (tg__floor_div (l->off[k] + n - 1, l->cells) - l->c0[k] + 1);
      l->n[k] = n;
    }
}

int
tg__isosurface_check (const TgIsoOptions *o, TgError *err)
{
  static const char *const axis[] = { "x", "y", "z" };
  double total = 1.0;

  if (!(o->cell > 0.0) || !isfinite (o->cell))
    return tg_error_set (err, TG_ERANGE, "params.cell_m", TG_MSG_CELL_ABOVE_0, o->cell);
  for (int k = 0; k < 3; k++)
    {
      double cells;

      if (!(o->min[k] < o->max[k]))
        return tg_error_set (err, TG_ERANGE, "params.max_m", TG_MSG_MAX_ABOVE_MIN_AXIS, axis[k],
                             o->max[k], o->min[k]);
      cells = ceil ((o->max[k] - o->min[k]) / o->cell - 1e-9);
      if (cells > TG__ISO_MAX_AXIS_CELLS)
        return tg_error_set (err, TG_ERANGE, "params.cell_m", TG_MSG_CELLS_ALONG, cells, axis[k],
                             TG__ISO_MAX_AXIS_CELLS);
      total *= cells;
    }
  if (total > TG__ISO_MAX_CELLS)
    return tg_error_set (err, TG_ERANGE, "params.cell_m", TG_MSG_CELLS_IN_BOX, total,
                         TG__ISO_MAX_CELLS);
  if (o->lods < 0 || o->lods > TG__ISO_MAX_LODS)
    return tg_error_set (err, TG_ERANGE, "params.lods", TG_MSG_LODS_RANGE, TG__ISO_MAX_LODS,
                         o->lods);
  if (o->chunk_cells != 0)
    {
      int step = 1 << (o->lods > 1 ? o->lods - 1 : 0);
      TgIsoLattice lat;
      double chunks;

      if (o->chunk_cells < TG__ISO_MIN_CHUNK || o->chunk_cells > TG__ISO_MAX_CHUNK)
        return tg_error_set (err, TG_ERANGE, "params.chunk_cells", TG_MSG_CHUNK_CELLS_RANGE,
                             TG__ISO_MIN_CHUNK, TG__ISO_MAX_CHUNK, o->chunk_cells);
      if (o->chunk_cells % step != 0)
        return tg_error_set (err, TG_ERANGE, "params.chunk_cells", TG_MSG_CHUNK_NOT_DIVISIBLE,
                             o->chunk_cells, step);
      lattice_init (o, &lat);
      chunks = (double) lat.nc[0] * lat.nc[1] * lat.nc[2];
      if (chunks > TG__ISO_MAX_CHUNKS)
        return tg_error_set (err, TG_ERANGE, "params.chunk_cells", TG_MSG_CHUNKS_IN_BOX, chunks,
                             TG__ISO_MAX_CHUNKS);
    }
  return 0;
}

static int
serial (void *ctx, int n, int grain, void (*fn) (void *, int, int), void *user)
{
  for (int b = 0; b < n; b += grain)
    fn (user, b, b + grain < n ? b + grain : n);
  return 0;
}

static void
mesh_clear (Mesh *m)
{
  free (m->pos);
  free (m->nrm);
  free (m->idx);
  free (m->tag);
  for (int q = 0; q < 2; q++)
    {
      free (m->map[q].key);
      free (m->map[q].val);
    }
  face_tables_free (m);
  memset (m, 0, sizeof *m);
}

/* The samples block P takes on its own (block_sample's grids). */
static int64_t
own_cost (const Iso *iso, const BlockPlan *p)
{
  const int *c = p->c, *nsub = p->nsub;
  int border = iso->o->normals == TG__ISO_NORMALS_GRADIENT && iso->o->shading == TG__ISO_SMOOTH;
  int64_t n = 0;

  if (p->n_live == nsub[0] * nsub[1] * nsub[2])
    return (int64_t) (c[0] + 1 + 2 * border) * (c[1] + 1 + 2 * border) * (c[2] + 1 + 2 * border);
  for (int sk = 0; sk < nsub[2]; sk++)
    for (int sj = 0; sj < nsub[1]; sj++)
      for (int si = 0; si < nsub[0]; si++)
        {
          int q = (sk * nsub[1] + sj) * nsub[0] + si, si1 = si;
          int e0, e1, e2;

          if (p->sub_skip[q])
            continue;
          while (si1 + 1 < nsub[0] && !p->sub_skip[q + si1 + 1 - si])
            si1++;
          e0 = ((si1 + 1) * SUB < c[0] ? (si1 + 1) * SUB : c[0]) - si * SUB;
          e1 = ((sj + 1) * SUB < c[1] ? (sj + 1) * SUB : c[1]) - sj * SUB;
          e2 = ((sk + 1) * SUB < c[2] ? (sk + 1) * SUB : c[2]) - sk * SUB;
          n += (int64_t) (e0 + 1 + 2 * border) * (e1 + 1 + 2 * border) * (e2 + 1 + 2 * border);
          si = si1;
        }
  return n;
}

/* The samples block P's part of the slab takes. */
static int64_t
slab_cost (const Iso *iso, const BlockPlan *p)
{
  const int *nsub = p->nsub, *ns = iso->slab_ns;
  int64_t n = 0;

  for (int q = 0; q < nsub[0] * nsub[1] * nsub[2]; q++)
    {
      int s[3] = { q % nsub[0], (q / nsub[0]) % nsub[1], q / (nsub[0] * nsub[1]) };
      int64_t v = 1;

      if (!iso->need[((size_t) slab_sub (iso, p, 2, s[2]) * (size_t) ns[1]
                      + (size_t) slab_sub (iso, p, 1, s[1])) * (size_t) ns[0]
                     + (size_t) slab_sub (iso, p, 0, s[0])])
        continue;
      for (int k = 0; k < 3; k++)
        {
          int lo, hi;

          own_range (iso, p, k, s[k], carried_at (iso, p, s[0], s[1]), &lo, &hi);
          v *= hi - lo;
        }
      n += v;
    }
  return n;
}

static void
blocks_own_run (void *user, int begin, int end)
{
  Iso *iso = user;
  Scratch *s = scratch_take (iso);

  for (int b = begin; b < end; b++)
    {
      const BlockPlan *p = &iso->plan[b];
      BlockOut *out = &iso->out[b];

      if (out->error || p->n_live == 0)
        continue;
      if (s == NULL)
        {
          out->error = TG_ENOMEM;
          continue;
        }
      out->error = block_sample (iso, p, s);
      if (out->error == 0)
        block_mesh (iso, p, out, s, s->val, (size_t) p->c[0] + 3,
                    ((size_t) p->c[0] + 3) * ((size_t) p->c[1] + 3), NULL);
    }
  if (s)
    scratch_give (iso, s);
}

/* One wave of blocks W0 .. W0 + N (a layer or a row) through the slab:
 * the skip tests, the live sub-blocks and their neighbours marked, the
 * slab sampled, each block marched from its window.  0 or what PAR
 * returned. */
static int
wave_shared (Iso *iso, int n, TgIsoParallel par, void *par_ctx)
{
  int b0 = iso->wave0;
  int bj = (b0 / iso->nb[0]) % iso->nb[1], bk = b0 / (iso->nb[0] * iso->nb[1]);
  bool layer = n > iso->nb[0] || iso->nb[1] == 1;
  int c1 = iso->n[1] - bj * BLOCK < BLOCK ? iso->n[1] - bj * BLOCK : BLOCK;
  int c2 = iso->n[2] - bk * BLOCK < BLOCK ? iso->n[2] - bk * BLOCK : BLOCK;
  const int *ns = iso->slab_ns;
  int rc;

  iso->slab_org[0] = -1;
  iso->slab_org[1] = layer ? -1 : bj * BLOCK - 1;
  iso->slab_org[2] = bk * BLOCK - 1;
  iso->slab_n[0] = iso->n[0] + 3;
  iso->slab_n[1] = layer ? iso->n[1] + 3 : c1 + 3;
  iso->slab_n[2] = c2 + 3;
  iso->slab_ns[0] = (iso->n[0] + SUB - 1) / SUB;
  iso->slab_ns[1] = ((layer ? iso->n[1] : c1) + SUB - 1) / SUB;
  iso->slab_ns[2] = (c2 + SUB - 1) / SUB;
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < iso->slab_n[k]; i++)
      iso->slab_xs[k][i] = coord (iso, k, iso->slab_org[k] + i);

  /* A layer above a sampled one takes its shared corners: the columns its
   * top sub-blocks sampled, lattice z bk BLOCK - border .. + border, from
   * the slab's top planes to its bottom ones. */
  iso->prev_slab = iso->prev_slab && layer && bk > 0;
  if (iso->prev_slab)
    {
      int border = iso->o->normals == TG__ISO_NORMALS_GRADIENT
                   && iso->o->shading == TG__ISO_SMOOTH;
      size_t plane = (size_t) iso->slab_n[0] * (size_t) iso->slab_n[1];

      /* The layer below was whole (BLOCK cells): its top sub-blocks are
       * NSUB - 1, its planes BLOCK + 1 - border .. up. */
      memcpy (iso->carried, iso->need + (size_t) (NSUB - 1) * (size_t) ns[0] * (size_t) ns[1],
              (size_t) ns[0] * (size_t) ns[1]);
      for (int t = 0; t <= 2 * border; t++)
        memcpy (iso->slab + (size_t) (1 - border + t) * plane,
                iso->slab + (size_t) (BLOCK + 1 - border + t) * plane, sizeof (float) * plane);
    }

  if ((rc = par (par_ctx, n, 1, plans_run, iso)) < 0)
    return rc;
  memset (iso->need, 0, (size_t) ns[0] * (size_t) ns[1] * (size_t) ns[2]);
  for (int b = 0; b < n; b++)
    {
      const BlockPlan *p = &iso->plan[b];
      int n_sub = p->nsub[0] * p->nsub[1] * p->nsub[2];

      for (int q = 0; q < n_sub && p->n_live > 0 && iso->out[b].error == 0; q++)
        if (!p->sub_skip[q])
          {
            int g[3] = { slab_sub (iso, p, 0, q % p->nsub[0]),
                         slab_sub (iso, p, 1, (q / p->nsub[0]) % p->nsub[1]),
                         slab_sub (iso, p, 2, q / (p->nsub[0] * p->nsub[1])) };

            for (int dz = -1; dz <= 1; dz++)
              for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                  {
                    int x = g[0] + dx, y = g[1] + dy, z = g[2] + dz;

                    if (x >= 0 && x < ns[0] && y >= 0 && y < ns[1] && z >= 0 && z < ns[2])
                      iso->need[((size_t) z * (size_t) ns[1] + (size_t) y) * (size_t) ns[0]
                                + (size_t) x] = 1;
                  }
          }
    }
  /* A sparse surface: its blocks sample fewer corners on their own (the
   * slab samples whole sub-blocks next to live ones). */
  {
    int64_t own = 0, shared = 0;

    for (int b = 0; b < n; b++)
      if (iso->out[b].error == 0)
        {
          own += iso->plan[b].n_live ? own_cost (iso, &iso->plan[b]) : 0;
          shared += slab_cost (iso, &iso->plan[b]);
        }
    if (own < shared)
      {
        iso->prev_slab = false;
        return par (par_ctx, n, 1, blocks_own_run, iso);
      }
  }
  /* Sampled and marched a chunk at a time, in block order (a block's
   * window needs only blocks up to it sampled): four blocks a thread
   * (the threads seen so far, by their scratch), so that on one thread a
   * window is read while it is in the core's cache, and with more the
   * chunk still has a block for each. */
  iso->prev_slab = true;
  iso->stitched = true;
  for (int i0 = 0; i0 < n && iso->stitch_rc == 0;)
    {
      int chunk = iso->n_scratch < 1 ? 4 : 4 * iso->n_scratch < MESH_CHUNK ? 4 * iso->n_scratch
                                                                          : MESH_CHUNK;
      int k = n - i0 < chunk ? n - i0 : chunk;
      int64_t t0;

      iso->sample0 = i0;
      if ((rc = par (par_ctx, k, 1, slab_sample_run, iso)) < 0)
        return rc;
      iso->mesh0 = i0;
      if ((rc = par (par_ctx, k, 1, slab_mesh_run, iso)) < 0)
        return rc;
      t0 = iso->timed ? now_ns () : 0;
      for (int b = i0; b < i0 + k && iso->stitch_rc == 0; b++)
        iso->stitch_rc = stitch_one (iso, b, &iso->mout[b - i0]);
      if (iso->timed)
        iso->ns_stitch += now_ns () - t0;
      i0 += k;
    }
  return 0;
}

/* Level LEVEL of the surface (cells of 2^LEVEL cell_m) into M, welded,
 * with its normals; with LAT, each triangle tagged with its chunk.  STATS
 * (may be NULL) gets this level's figures added. */
static int
mesh_level (const TgField *f, const TgIsoOptions *o, int level, const TgIsoLattice *lat,
            TgIsoParallel par, void *par_ctx, Mesh *mp, TgIsoStats *stats, TgError *err)
{
  Iso iso;
  Mesh m = { 0 };
  BlockOut *wave = NULL;
  int64_t n_blocks, t_stitch = 0;
  int rc = 0, wave_len = 0;

  memset (&iso, 0, sizeof iso);
  iso.f = f;
  iso.o = o;
  iso.step = 1 << level;
  iso.chunks = lat;
  m.tagged = lat != NULL;
  for (int k = 0; k < 3; k++)
    {
      int64_t n = (int64_t) ceil ((o->max[k] - o->min[k]) / o->cell - 1e-9);

      if (n < 1)
        n = 1;
      /* A coarser level's lattice holds the chunk faces: it starts on the
       * world's lattice of its step, at or below the box. */
      iso.org[k] = lat ? -(((lat->off[k] % iso.step) + iso.step) % iso.step) : 0;
      iso.n[k] = (int) ((n - iso.org[k] + iso.step - 1) / iso.step);
      iso.nb[k] = (iso.n[k] + BLOCK - 1) / BLOCK;
    }
  iso.lip = f->lipschitz > 0.0f && isfinite (f->lipschitz) ? f->lipschitz : 0.0f;
  iso.use_box = f->bounded && o->iso <= 0.0;
  iso.grid = f->eval_grid != NULL;
  atomic_init (&iso.evaluations, 0);
  atomic_init (&iso.skipped, 0);
  atomic_init (&iso.sub_skipped, 0);
  atomic_init (&iso.ns_eval, 0);
  atomic_init (&iso.ns_mesh, 0);
  iso.timed = stats != NULL;
  iso.avx512 = iso_avx512 ();
  n_blocks = (int64_t) iso.nb[0] * iso.nb[1] * iso.nb[2];
  if (par == NULL)
    par = serial;

  /* A field with a grid path that costs more than reading shares the
   * corners of a wave (a layer of blocks, or a row) in a slab, when the
   * slab stays small. */
  /* A field that keeps its values on the box's lattice (a dense volume)
   * lends them: each block is marched where they lie, nothing copied. */
  if (f->view && !o->no_share)
    {
      float *cs[3] = { NULL, NULL, NULL };

      for (int k = 0; k < 3; k++)
        if ((cs[k] = malloc (sizeof (float) * ((size_t) iso.n[k] + 3))) != NULL)
          for (int i = 0; i < iso.n[k] + 3; i++)
            cs[k][i] = coord (&iso, k, i - 1);
      if (cs[0] && cs[1] && cs[2])
        {
          TgFieldGrid g = { cs[0], cs[1], cs[2], iso.n[0] + 3, iso.n[1] + 3, iso.n[2] + 3 };

          iso.direct = f->view (f, &g, &iso.view) == 0;
        }
      else
        rc = tg_error_set (err, TG_ENOMEM, NULL, TG_MSG_OUT_OF_MEMORY);
      for (int k = 0; k < 3; k++)
        free (cs[k]);
    }
  if (iso.grid && !f->grid_cheap && !o->no_share && !iso.direct)
    {
      size_t layer = (size_t) (iso.n[0] + 3) * (size_t) (iso.n[1] + 3) * PAD;
      size_t row = (size_t) (iso.n[0] + 3) * PAD * PAD;

      if (layer <= SLAB_MAX)
        wave_len = iso.nb[0] * iso.nb[1];
      else if (row <= SLAB_MAX)
        wave_len = iso.nb[0];
      if (wave_len > 0)
        {
          size_t npts = (wave_len == iso.nb[0] * iso.nb[1] ? layer : row) + 64;
          size_t nsub = (size_t) ((iso.n[0] + SUB - 1) / SUB)
                        * (size_t) (wave_len == iso.nb[0] * iso.nb[1]
                                      ? (iso.n[1] + SUB - 1) / SUB : NSUB)
                        * NSUB;

          /* Zeroed (its unsampled corners are read, for inside flags no
           * marched cell uses), in huge pages when large: a 256^2 layer is
           * 9 MB.  calloc: fresh pages come zeroed, untouched, so the
           * advice still holds (and reused ones it clears itself). */
          iso.slab = calloc (npts, sizeof (float));
          if (iso.slab)
            huge_pages (iso.slab, sizeof (float) * npts);
          iso.need = malloc (nsub);
          iso.plan = malloc (sizeof (BlockPlan) * (size_t) wave_len);
          iso.carried = calloc (nsub / NSUB, 1);
          iso.mout = calloc (MESH_CHUNK, sizeof (BlockOut));
          for (int k = 0; k < 3; k++)
            iso.slab_xs[k] = malloc (sizeof (float) * (size_t) (iso.n[k] + 3));
          if (!iso.slab || !iso.need || !iso.plan || !iso.carried || !iso.mout || !iso.slab_xs[0]
              || !iso.slab_xs[1] || !iso.slab_xs[2])
            rc = tg_error_set (err, TG_ENOMEM, NULL, TG_MSG_OUT_OF_MEMORY);
        }
    }
  if (wave_len == 0)
    wave_len = WAVE;
  wave = calloc ((size_t) wave_len, sizeof *wave);
  if (wave == NULL && rc == 0)
    rc = tg_error_set (err, TG_ENOMEM, NULL, TG_MSG_OUT_OF_MEMORY);
  pthread_mutex_init (&iso.lock, NULL);
  iso.out = wave;
  iso.mesh = &m;
  iso.err = err;
  iso.n_blocks = n_blocks;
  mesh_first (&m, iso.n);
  if (rc == 0 && face_tables_init (&m, iso.n) < 0)
    rc = tg_error_set (err, TG_ENOMEM, NULL, TG_MSG_OUT_OF_MEMORY);
  for (int64_t w0 = 0; w0 < n_blocks && rc == 0; w0 += wave_len)
    {
      int n = n_blocks - w0 < wave_len ? (int) (n_blocks - w0) : wave_len;

      iso.wave0 = (int) w0;
      iso.stitched = false;
      if (iso.slab)
        rc = wave_shared (&iso, n, par, par_ctx);
      else
        rc = par (par_ctx, n, 1, blocks_run, &iso);
      if (rc < 0)
        tg_error_set (err, rc, NULL, "%s", tg_strerror (rc));
      else if (iso.stitched)
        rc = iso.stitch_rc;
      if (stats)
        t_stitch -= now_ns ();
      for (int b = 0; b < n && rc == 0 && !iso.stitched; b++)
        rc = stitch_one (&iso, b, &wave[b]);
      if (stats)
        t_stitch += now_ns ();
    }
  for (int b = 0; wave && b < wave_len; b++)
    block_out_clear (&wave[b]);
  free (wave);
  for (int b = 0; iso.mout && b < MESH_CHUNK; b++)
    block_out_clear (&iso.mout[b]);
  free (iso.mout);
  free (iso.slab);
  free (iso.need);
  free (iso.plan);
  free (iso.carried);
  for (int k = 0; k < 3; k++)
    free (iso.slab_xs[k]);
  while (iso.free_scratch)
    {
      Scratch *s = iso.free_scratch;
      iso.free_scratch = s->next;
      scratch_free (s);
      free (s);
    }
  pthread_mutex_destroy (&iso.lock);
  for (int q = 0; q < 2; q++)
    {
      free (m.map[q].key);
      free (m.map[q].val);
      m.map[q].key = NULL;
      m.map[q].val = NULL;
    }
  face_tables_free (&m);

  if (stats)
    t_stitch -= now_ns ();
  if (rc == 0)
    {
      if (o->shading == TG__ISO_FLAT)
        rc = flatten (&m);
      else if (o->normals == TG__ISO_NORMALS_FACES)
        rc = face_normals (&m, false);
      else
        rc = face_normals (&m, true);
      if (rc < 0)
        tg_error_set (err, rc, NULL, "%s", tg_strerror (rc));
    }
  /* The cell size sets how big the mesh grows: name it, with how far the
   * mesh got, rather than a bare "out of memory". */
  if (rc == TG_ENOMEM)
    tg_error_set (err, TG_ENOMEM, "params.cell_m",
                  "out of memory meshing %.3g cells of %g m (the mesh had %lld vertices and "
                  "%lld triangles, %.2f GB); raise cell_m or shrink the box",
                  (double) iso.n[0] * iso.n[1] * iso.n[2], o->cell * iso.step, (long long) m.nv,
                  (long long) m.nt,
                  1e-9 * (double) (m.cap_v * 6 * sizeof (float) + m.cap_t * 3 * sizeof (uint32_t)));
  if (stats)
    {
      stats->evaluations += atomic_load (&iso.evaluations);
      stats->blocks += n_blocks;
      stats->blocks_skipped += atomic_load (&iso.skipped);
      stats->subblocks_skipped += atomic_load (&iso.sub_skipped);
      stats->seconds_eval += 1e-9 * (double) atomic_load (&iso.ns_eval);
      stats->seconds_mesh += 1e-9 * (double) atomic_load (&iso.ns_mesh);
      stats->seconds_stitch += 1e-9 * (double) (t_stitch + now_ns () + iso.ns_stitch);
    }
  if (rc < 0)
    mesh_clear (&m);
  *mp = m;
  return rc;
}

int
tg__isosurface (const TgField *f, const TgIsoOptions *o, TgIsoParallel par, void *par_ctx,
                TgMesh **out, TgIsoStats *stats, TgError *err)
{
  Mesh m = { 0 };
  int lods = o->lods > 1 ? o->lods : 1;
  int rc;

  *out = NULL;
  if ((rc = tg__isosurface_check (o, err)) < 0)
    return rc;
  if (stats)
    memset (stats, 0, sizeof *stats);
  if (o->chunk_cells <= 0 && lods == 1)
    {
      rc = mesh_level (f, o, 0, NULL, par, par_ctx, &m, stats, err);
      if (rc == 0)
        {
          TgMesh *mesh = tg_mesh_new (1);
          TgMeshChunk *ch;

          if (mesh == NULL || tg_mesh_chunk_set_name (&mesh->chunks[0], "isosurface") < 0)
            {
              tg_mesh_free (mesh);
              rc = tg_error_set (err, TG_ENOMEM, NULL, TG_MSG_OUT_OF_MEMORY);
            }
          else
            {
              /* Hand the arrays over; shrink them to size. */
              ch = &mesh->chunks[0];
              ch->n_vertices = (int) m.nv;
              ch->n_indices = 3 * m.nt;
              ch->positions = m.nv ? realloc (m.pos, sizeof (float) * 3 * (size_t) m.nv) : m.pos;
              ch->normals = m.nv ? realloc (m.nrm, sizeof (float) * 3 * (size_t) m.nv) : m.nrm;
              ch->indices = m.nt ? realloc (m.idx, sizeof (uint32_t) * 3 * (size_t) m.nt) : m.idx;
              if (ch->positions == NULL)
                ch->positions = m.pos;
              if (ch->normals == NULL)
                ch->normals = m.nrm;
              if (ch->indices == NULL)
                ch->indices = m.idx;
              ch->uvs = NULL;
              m.pos = m.nrm = NULL;
              m.idx = NULL;
              *out = mesh;
            }
        }
      mesh_clear (&m);
      return rc;
    }

  /* Chunks and levels: each level meshed whole (so a vertex on a chunk
   * face has one position and one normal), then cut into its chunks. */
  {
    TgIsoLattice lat;
    TgIsoChunks list = { 0 };
    uint8_t *have;
    bool chunked = o->chunk_cells > 0;

    if (chunked)
      lattice_init (o, &lat);
    else
      {
        memset (&lat, 0, sizeof lat);
        lat.nc[0] = lat.nc[1] = lat.nc[2] = 1;
      }
    have = calloc ((size_t) lat.nc[0] * lat.nc[1] * lat.nc[2], 1);
    if (have == NULL)
      return tg_error_set (err, TG_ENOMEM, NULL, TG_MSG_OUT_OF_MEMORY);
    for (int level = 0; level < lods && rc == 0; level++)
      {
        TgIsoLevel lv;
        double skirt_m = chunked && lods > 1 && !o->no_skirts ? tg__iso_skirt_m (o) : 0.0;

        rc = mesh_level (f, o, level, chunked ? &lat : NULL, par, par_ctx, &m, stats, err);
        if (rc < 0)
          break;
        lv = (TgIsoLevel) { .pos = m.pos, .nrm = m.nrm, .idx = m.idx,
                            .tag = chunked ? m.tag : NULL, .nv = m.nv, .nt = m.nt };
        rc = tg__iso_split (&lv, chunked ? &lat : NULL, o, level, skirt_m, f, par, par_ctx, have,
                            &list);
        if (rc == TG_ENOMEM)
          tg_error_set (err, rc, NULL, "out of memory cutting the surface into chunks");
        else if (rc < 0)
          tg_error_set (err, rc, NULL, "%s", tg_strerror (rc));
        mesh_clear (&m);
      }
    free (have);
    if (rc == 0)
      {
        TgMesh *mesh = tg_mesh_new (list.n);

        if (mesh == NULL)
          rc = tg_error_set (err, TG_ENOMEM, NULL, TG_MSG_OUT_OF_MEMORY);
        else
          {
            if (list.n > 0)
              memcpy (mesh->chunks, list.items, sizeof (TgMeshChunk) * (size_t) list.n);
            list.n = 0;
            *out = mesh;
          }
      }
    tg__iso_chunks_clear (&list);
  }
  return rc;
}

/* --- the node ---------------------------------------------------------------------- */

typedef struct
{
  double min_m[3];
  double max_m[3];
  double cell_m;
  double iso;
  int normals;
  int shading;
  int chunk_cells;
  int lods;
} IsoParams;

static const char *const normals_choices[] = { "gradient", "faces", NULL };
static const char *const shading_choices[] = { "smooth", "flat", NULL };

static const TgParamDesc iso_params[] = {
  TG_PARAM_VEC3 (IsoParams, min_m, .label = N_("Box minimum"), .def_v = { -50.0, -50.0, -50.0 },
                 .unit = "m", .help = N_("Lowest corner of the box to mesh (x, y, z), in metres")),
  TG_PARAM_VEC3 (IsoParams, max_m, .label = N_("Box maximum"), .def_v = { 50.0, 50.0, 50.0 },
                 .unit = "m", .help = N_("Highest corner of the box to mesh, in metres")),
  TG_PARAM_FLOAT (IsoParams, cell_m, .label = N_("Cell size"), .def = 1.0, .min = 0.0, .max = 1e6,
                  .soft_min = 0.05, .soft_max = 20.0, .unit = "m",
                  .help = N_("Edge of a marching-cubes cell, in "
                             "metres: smaller is finer and slower")),
  TG_PARAM_FLOAT (IsoParams, iso, .label = N_("Iso level"), .def = 0.0, .min = -1e6, .max = 1e6,
                  .soft_min = -10.0, .soft_max = 10.0,
                  .help = N_("Field value of the surface; positive values grow the shape of a "
                             "signed distance by that many metres")),
  TG_PARAM_ENUM (IsoParams, normals, .label = N_("Normals"), .def_s = "gradient",
                 .choices = normals_choices,
                 .help = N_("gradient: from the field (smoothest); faces: averaged from the "
                            "triangles around each vertex")),
  TG_PARAM_ENUM (IsoParams, shading, .label = N_("Shading"), .def_s = "smooth",
                 .choices = shading_choices,
                 .help = N_("smooth shares vertices between triangles; flat gives each triangle "
                            "its own, with its face normal")),
  TG_PARAM_INT (IsoParams, chunk_cells, .label = N_("Chunk cells"), .def = 0, .min = 0,
                .max = TG__ISO_MAX_CHUNK,
                .help = N_("0: one mesh; 16 to 64: cells along each side of a chunk, on a "
                           "lattice anchored at the world's origin, one mesh per chunk named "
                           "iso_x<i>_y<j>_z<k>_lod<level>; chunks the surface misses are left "
                           "out")),
  TG_PARAM_INT (IsoParams, lods, .label = N_("LOD levels"), .def = 1, .min = 1,
                .max = TG__ISO_MAX_LODS,
                .help = N_("Levels of detail per chunk, each sampling the field at twice the "
                           "previous cell size; chunks hang skirts (twice the coarsest cell "
                           "deep) on their inner faces so neighbours at different levels show "
                           "no crack; chunk_cells must divide by 2^(lods - 1)")),
};

static const TgPortDesc iso_inputs[] = {
  { .name = "field", .type = TG_TYPE_FIELD, .label = N_("Field"),
    .help = N_("The field to mesh") },
};

static const TgPortDesc iso_outputs[] = {
  { .name = "mesh", .type = TG_TYPE_MESH, .label = N_("Mesh"),
    .help = N_("The surface, welded: one chunk, or one per chunk and level") },
};

static void
iso_options (const IsoParams *p, TgIsoOptions *o)
{
  memset (o, 0, sizeof *o);
  memcpy (o->min, p->min_m, sizeof o->min);
  memcpy (o->max, p->max_m, sizeof o->max);
  o->cell = p->cell_m;
  o->iso = p->iso;
  o->normals = p->normals;
  o->shading = p->shading;
  o->chunk_cells = p->chunk_cells;
  o->lods = p->lods;
}

static int
iso_check (const void *params, TgError *err)
{
  TgIsoOptions o;

  iso_options (params, &o);
  return tg__isosurface_check (&o, err);
}

static int
node_parallel (void *ctx, int n, int grain, void (*fn) (void *, int, int), void *user)
{
  return tg_eval_parallel (ctx, n, grain, fn, user);
}

static int
iso_eval (TgEvalCtx *c)
{
  const TgValue *in = tg_eval_input (c, 0);
  const TgField *f = tg_value_field (in);
  TgIsoOptions o;
  TgError e = { 0 };
  TgMesh *mesh = NULL;
  TgValue *v;
  int rc;

  if (f == NULL)
    return tg_eval_fail (c, TG_EMISSING, TG_MSG_INPUT_NO_FIELD, "field");
  iso_options (tg_eval_params (c), &o);
  rc = tg__isosurface (f, &o, node_parallel, c, &mesh, NULL, &e);
  if (rc < 0)
    {
      if (rc == TG_ECANCELLED)
        return rc;
      return tg_eval_fail (c, rc, "%s%s%s", e.path, e.path[0] ? ": " : "", e.message);
    }
  v = tg_value_new_mesh (mesh);
  if (v == NULL)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  tg_eval_set_output (c, 0, v);
  return 0;
}

/* The mesh of a surface that crosses about as many cells as the box's own
 * faces (2 (nx ny + ny nz + nz nx)), at 64 bytes a crossed cell while it
 * is built and stitched (53 measured on the arch example). */
static void
iso_memory (TgMemQuery *q)
{
  const IsoParams *p = q->params;
  double n[3];

  for (int k = 0; k < 3; k++)
    n[k] = p->cell_m > 0.0 ? fmax (0.0, ceil ((p->max_m[k] - p->min_m[k]) / p->cell_m)) : 0.0;
  /* Chunks: a level is cut while it is whole (twice its bytes), and
   * coarser levels add a quarter, a sixteenth, ... */
  q->outputs += (uint64_t) (2.0 * (n[0] * n[1] + n[1] * n[2] + n[2] * n[0]) * 64.0
                            * (p->chunk_cells > 0 || p->lods > 1 ? 2.0 * 4.0 / 3.0 : 1.0));
  /* The slab of shared corners, when the field has a grid path. */
  {
    double layer = (n[0] + 3.0) * (n[1] + 3.0) * PAD, row = (n[0] + 3.0) * PAD * PAD;

    q->work += (uint64_t) (sizeof (float)
                           * (layer <= (double) SLAB_MAX ? layer
                              : row <= (double) SLAB_MAX ? row : 0.0));
  }
  /* The stitcher's face tables (none for a large box). */
  {
    size_t nz, nx, ny;

    q->work += sizeof (uint32_t) * (uint64_t) face_tables_size ((int64_t) n[0], (int64_t) n[1],
                                                                &nz, &nx, &ny);
  }
}

static const TgNodeDesc iso_desc = {
  .type = "mesh.isosurface",
  .category = TG_CATEGORY_MESH,
  .label = N_("Iso-surface"),
  .help = N_("Meshes the surface of a field inside a box by marching cubes: welded, "
             "watertight for closed shapes, wound counter-clockwise seen from outside, with "
             "normals from the field's gradient or from the faces; optionally in chunks with "
             "coarser levels of detail"),
  TG_INPUTS (iso_inputs),
  TG_OUTPUTS (iso_outputs),
  TG_PARAMS (IsoParams, iso_params),
  .locality = TG_LOCALITY_GLOBAL,
  .check = iso_check,
  .eval = iso_eval,
  .memory = iso_memory,
  .version = 2,
};
TG_NODE_REGISTER (iso_desc);
