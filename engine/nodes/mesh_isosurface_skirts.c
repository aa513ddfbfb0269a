/* mesh.isosurface's skirts: quads that close the cracks between chunks
 * drawn at different levels of detail.
 *
 * Two neighbouring chunks drawn at different levels meet along two
 * different polylines on their common face, which leaves a crack.  Every
 * open edge that lies in a chunk face inside the box gets a skirt: a quad
 * hanging from it into the solid, in the face's plane (so the skirt
 * covers the part of the plane between the two polylines), as deep along
 * the surface's normal as tg__iso_skirt_m says, and cut short where it
 * would leave the level's section of the solid or the field's solid (a
 * thin part: see below).  Both chunks of a face, at every level, hang
 * one, so whichever side is the higher the gap is closed from both sides;
 * at the same level the two skirts coincide, wound both ways.  Skirt
 * triangles continue the surface's winding over the edge, so they face
 * out of their chunk; they come after the chunk's own triangles and
 * vertices.  Where a skirt is cut to nothing its triangles are left out. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/tgraph.h>

#include "fields.h"

double
tg__iso_skirt_m (const TgIsoOptions *o)
{
  int lods = o->lods > 1 ? o->lods : 1;

  /* Two levels' surfaces stray apart by about a coarse cell at most on a
   * smooth field: twice the coarsest cell covers it. */
  return 2.0 * o->cell * (double) (1 << (lods - 1));
}

/* The planes of a chunk's faces that lie inside the box (a neighbour is
 * across them): along each axis, the low and the high one. */
typedef struct
{
  float at[3][2];
  bool inner[3][2];
} Faces;

static void
chunk_faces (const TgIsoLattice *l, const TgIsoOptions *o, const int64_t id[3], Faces *f)
{
  for (int k = 0; k < 3; k++)
    for (int side = 0; side < 2; side++)
      {
        /* The face's lattice index in the box: points of every level. */
        int64_t g = (l->c0[k] + id[k] + side) * l->cells - l->off[k];

        f->at[k][side] = (float) (o->min[k] + (double) g * o->cell);
        f->inner[k][side] = g > 0 && g < l->n[k];
      }
}

typedef struct
{
  uint64_t key; /* undirected edge: low vertex << 32 | high vertex */
  int64_t at;   /* 3 triangle + corner */
} EdgeUse;

static int
cmp_edge (const void *a, const void *b)
{
  uint64_t x = ((const EdgeUse *) a)->key, y = ((const EdgeUse *) b)->key;

  return x < y ? -1 : x > y;
}

/* The way down of a skirt vertex hanging from P (normal N) on the face
 * across axis AX: in the face's plane, into the solid, far enough to lie
 * DEPTH below the surface along the normal (at most twice DEPTH away);
 * straight down the normal where the surface nearly lies in the plane.
 * DIR gets the unit direction, the result is the distance. */
static double
skirt_way (const float *n, int ax, double depth, double dir[3])
{
  double m[3] = { n[0], n[1], n[2] }, len2;

  m[ax] = 0.0;
  len2 = m[0] * m[0] + m[1] * m[1] + m[2] * m[2];
  if (len2 > 0.0625)
    {
      double len = sqrt (len2);

      for (int k = 0; k < 3; k++)
        dir[k] = m[k] / len;
      return fmin (depth / len, 2.0 * depth);
    }
  for (int k = 0; k < 3; k++)
    dir[k] = n[k];
  return depth;
}

static void
skirt_place (const float *p, const double dir[3], double t, float *out)
{
  for (int k = 0; k < 3; k++)
    out[k] = dir[k] == 0.0 ? p[k] : (float) (p[k] - t * dir[k]);
}

/* --- a level's skirts, planned whole -------------------------------------------------
 *
 * A chunk face plane cuts the level's surface along its open face edges:
 * polylines around the solid's section, which both chunks of the face
 * share.  A skirt hangs from each of their edges into the section; it
 * shows wherever it leaves the section (through the drawn surface, as a
 * black face: it points away from the viewer) or the field's solid.  So
 * each skirt vertex's way down is cut three times, in this order:
 *
 * - at half the distance to the first outline edge it would cross: a
 *   thin part's far side (half, so that the skirts of the two sides meet
 *   in the middle and keep clear of the surface);
 * - at the last sample inside the solid (every quarter cell down the way,
 *   the field below the iso level) before the way leaves it: a part
 *   thinner than its section shows (a coarse level).  Where the top
 *   itself is outside (the drawn surface lies off the field's) the way
 *   may first cross that stretch;
 * - until no outline vertex lies in the quad between two neighbouring
 *   ways (the tip of a thin part pointing at an edge between its ends).
 *
 * (Checking the bottom alone missed both a way that crosses a thin part
 * and comes back into the solid further on, the skirt spanning the air
 * between, and a skirt inside the field's solid but outside a section
 * the mesh draws thinner: the arch example's black triangles.)
 *
 * Each bottom is one of its way's samples found inside.  The plan covers
 * the whole level at once, so the chunks of a face hang the same skirts
 * whatever their order, and a vertex on a chunk edge (two faces of one
 * plane) goes down the same way from both. */

typedef struct
{
  uint64_t plane; /* axis << 40 | the face's lattice index */
  uint32_t a, b;  /* the level's vertices, a < b */
  float lo;       /* least first coordinate in the plane */
} PlaneEdge;

typedef struct
{
  uint64_t plane;
  uint32_t v;
  int steps, j;   /* samples down the way; the bottom's (0: none) */
  uint64_t in;    /* bit j - 1: sample j inside the solid */
  bool top_in;    /* the top itself (sample 0) inside */
  double dir[3], way;
} PlaneEnd;

typedef struct
{
  uint64_t key; /* vertex << 2 | axis */
  float bottom[3];
} SkirtEnd;

struct TgIsoSkirts
{
  SkirtEnd *ends; /* by key; only the skirts that hang */
  int64_t n;
};

/* An end of a plane by its first coordinate there. */
typedef struct
{
  float u;
  int64_t i;
} EndLo;

static int
cmp_end_lo (const void *x, const void *y)
{
  const EndLo *a = x, *b = y;

  if (a->u != b->u)
    return a->u < b->u ? -1 : 1;
  return (a->i > b->i) - (a->i < b->i);
}

static int
cmp_edge_lo (const void *x, const void *y)
{
  const PlaneEdge *a = x, *b = y;

  if (a->lo != b->lo)
    return a->lo < b->lo ? -1 : 1;
  if (a->a != b->a)
    return a->a < b->a ? -1 : 1;
  return (a->b > b->b) - (a->b < b->b);
}

static int
cmp_plane_edge (const void *x, const void *y)
{
  const PlaneEdge *a = x, *b = y;

  if (a->plane != b->plane)
    return a->plane < b->plane ? -1 : 1;
  if (a->a != b->a)
    return a->a < b->a ? -1 : 1;
  return (a->b > b->b) - (a->b < b->b);
}

static int
cmp_plane_end (const void *x, const void *y)
{
  const PlaneEnd *a = x, *b = y;

  if (a->plane != b->plane)
    return a->plane < b->plane ? -1 : 1;
  return (a->v > b->v) - (a->v < b->v);
}

static int
cmp_skirt_end (const void *x, const void *y)
{
  uint64_t a = ((const SkirtEnd *) x)->key, b = ((const SkirtEnd *) y)->key;

  return (a > b) - (a < b);
}

/* The lattice index of the inner chunk face at X along axis K, or -1. */
static int64_t
face_at (const TgIsoLattice *l, const TgIsoOptions *o, int k, float x)
{
  double gd = ((double) x - o->min[k]) / o->cell;
  int64_t g;

  if (!(gd > 0.5 && gd < (double) l->n[k] - 0.5))
    return -1;
  g = (int64_t) floor (gd + 0.5);
  if ((g + l->off[k]) % l->cells != 0 || (float) (o->min[k] + (double) g * o->cell) != x)
    return -1;
  return g;
}

static void
in_plane (const float *p, int k, double q[2])
{
  q[0] = p[(k + 1) % 3];
  q[1] = p[(k + 2) % 3];
}

static double
cross2 (const double o[2], const double a[2], const double b[2])
{
  return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

/* Whether X lies strictly inside triangle A B C (either winding). */
static bool
inside_tri (const double a[2], const double b[2], const double c[2], const double x[2])
{
  double d = cross2 (a, b, c), u, v, w;

  if (fabs (d) < 1e-12)
    return false;
  u = cross2 (b, c, x) / d;
  v = cross2 (c, a, x) / d;
  w = cross2 (a, b, x) / d;
  return u > 1e-6 && v > 1e-6 && w > 1e-6;
}

/* The largest sample at or below J found inside along E's way (0: none). */
static int
inside_at_most (const PlaneEnd *e, int j)
{
  while (j > 0 && !(e->in >> (j - 1) & 1))
    j--;
  return j;
}

/* The point of E's way at sample J, in the plane of axis K. */
static void
end_at (const PlaneEnd *e, const float *pos, int k, int j, double q[2])
{
  float p[3];

  skirt_place (pos + 3 * (size_t) e->v, e->dir, e->steps ? e->way * j / e->steps : 0.0, p);
  in_plane (p, k, q);
}

/* Cuts the ways of the ends E[0..NE) of one plane (axis K) at half the
 * distance to the first outline edge of EDGES[0..NEDGE) (sorted by lo)
 * they cross, in samples. */
static void
plan_cut_at_outline (PlaneEnd *e, int64_t ne, const PlaneEdge *edges, int64_t nedge,
                     double max_edge, const float *pos, int k)
{
  for (int64_t i = 0; i < ne; i++)
    {
      double p[2], d[2], lo, hi, t_hit = e[i].way;
      int64_t s0 = 0, s1 = nedge;

      in_plane (pos + 3 * (size_t) e[i].v, k, p);
      d[0] = -e[i].dir[(k + 1) % 3];
      d[1] = -e[i].dir[(k + 2) % 3];
      if (e[i].steps == 0 || d[0] * d[0] + d[1] * d[1] < 1e-12)
        continue;
      lo = fmin (p[0], p[0] + e[i].way * d[0]) - max_edge;
      hi = fmax (p[0], p[0] + e[i].way * d[0]);
      while (s0 < s1) /* the first edge whose lo reaches LO */
        {
          int64_t mid = s0 + (s1 - s0) / 2;

          if (edges[mid].lo < lo)
            s0 = mid + 1;
          else
            s1 = mid;
        }
      for (int64_t s = s0; s < nedge && edges[s].lo <= hi; s++)
        {
          double a[2], b[2], r[2], den, t, u;

          if (edges[s].a == e[i].v || edges[s].b == e[i].v)
            continue;
          in_plane (pos + 3 * (size_t) edges[s].a, k, a);
          in_plane (pos + 3 * (size_t) edges[s].b, k, b);
          /* p + t d = a + u (b - a) */
          r[0] = b[0] - a[0];
          r[1] = b[1] - a[1];
          den = d[0] * r[1] - d[1] * r[0];
          if (fabs (den) < 1e-18)
            continue;
          t = ((a[0] - p[0]) * r[1] - (a[1] - p[1]) * r[0]) / den;
          u = ((a[0] - p[0]) * d[1] - (a[1] - p[1]) * d[0]) / den;
          if (t > 0.0 && t < t_hit && u >= 0.0 && u <= 1.0)
            t_hit = t;
        }
      if (t_hit < e[i].way)
        {
          int j = (int) floor (0.5 * t_hit / e[i].way * e[i].steps);

          if (j < e[i].j)
            e[i].j = j;
        }
    }
}

/* Samples the field down every way as far as it was cut (E[i].j), sets
 * the inside bits, and cuts each way at the last sample inside before it
 * leaves the solid (after any first stretch outside).  0 or TG_ENOMEM. */
static int
plan_cut_at_field (PlaneEnd *e, int64_t ne, const float *pos, const TgField *field, double iso)
{
  float *bx = malloc (sizeof (float) * 4 * TG_FIELD_BATCH_MAX);
  int64_t *at = malloc (sizeof (int64_t) * TG_FIELD_BATCH_MAX);
  int64_t i = 0;
  int j = 0;

  if (!bx || !at)
    {
      free (bx);
      free (at);
      return TG_ENOMEM;
    }
  /* Samples in (end, sample) order, in batches. */
  while (i < ne)
    {
      float *by = bx + TG_FIELD_BATCH_MAX, *bz = by + TG_FIELD_BATCH_MAX,
            *bv = bz + TG_FIELD_BATCH_MAX;
      int nb = 0;

      while (i < ne && nb < TG_FIELD_BATCH_MAX)
        if (j > e[i].j)
          {
            i++;
            j = 0;
          }
        else
          {
            float q[3];

            skirt_place (pos + 3 * (size_t) e[i].v, e[i].dir, e[i].way * j / e[i].steps, q);
            bx[nb] = q[0];
            by[nb] = q[1];
            bz[nb] = q[2];
            at[nb++] = i << 7 | j++;
          }
      if (nb > 0)
        field->eval (field, nb, bx, by, bz, bv);
      for (int b = 0; b < nb; b++)
        if (bv[b] < iso)
          {
            PlaneEnd *x = &e[at[b] >> 7];
            int jb = (int) (at[b] & 127);

            if (jb == 0)
              x->top_in = true;
            else
              x->in |= (uint64_t) 1 << (jb - 1);
          }
    }
  free (at);
  free (bx);
  for (int64_t n = 0; n < ne; n++)
    {
      int first = 1, last;

      /* From a top inside, the way must stay in from the start. */
      while (!e[n].top_in && first <= e[n].j && !(e[n].in >> (first - 1) & 1))
        first++;
      last = first;
      while (last + 1 <= e[n].j && (e[n].in >> last & 1))
        last++;
      e[n].j = first <= e[n].j && (e[n].in >> (first - 1) & 1) ? last : 0;
    }
  return 0;
}

/* The end of vertex V among E[0..NE) (sorted by vertex), or NULL. */
static PlaneEnd *
find_end (PlaneEnd *e, int64_t ne, uint32_t v)
{
  int64_t lo = 0, hi = ne;

  while (lo < hi)
    {
      int64_t mid = lo + (hi - lo) / 2;

      if (e[mid].v < v)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo < ne && e[lo].v == v ? &e[lo] : NULL;
}

/* Shortens the two ways of each outline edge, halving them (to samples
 * inside) until no outline vertex of the plane lies in the quad between
 * them.  BY_LO: E's indices by their first coordinate in the plane. */
static void
plan_clear_quads (PlaneEnd *e, int64_t ne, const EndLo *by_lo, const PlaneEdge *edges,
                  int64_t nedge, const float *pos, int k)
{
  for (int64_t s = 0; s < nedge; s++)
    {
      PlaneEnd *ea = find_end (e, ne, edges[s].a), *eb = find_end (e, ne, edges[s].b);

      if (!ea || !eb)
        continue;
      for (int round = 0; round < 8 && (ea->j > 0 || eb->j > 0); round++)
        {
          double q[4][2], lo = INFINITY, hi = -INFINITY, lo2 = INFINITY, hi2 = -INFINITY;
          bool hit = false;
          int64_t r0 = 0, r1 = ne;

          end_at (ea, pos, k, 0, q[0]);
          end_at (eb, pos, k, 0, q[1]);
          end_at (eb, pos, k, eb->j, q[2]);
          end_at (ea, pos, k, ea->j, q[3]);
          for (int c = 0; c < 4; c++)
            {
              lo = fmin (lo, q[c][0]);
              hi = fmax (hi, q[c][0]);
              lo2 = fmin (lo2, q[c][1]);
              hi2 = fmax (hi2, q[c][1]);
            }
          while (r0 < r1)
            {
              int64_t mid = r0 + (r1 - r0) / 2;

              if (by_lo[mid].u < lo)
                r0 = mid + 1;
              else
                r1 = mid;
            }
          for (int64_t r = r0; r < ne && !hit; r++)
            {
              const PlaneEnd *x = &e[by_lo[r].i];
              double xp[2];

              in_plane (pos + 3 * (size_t) x->v, k, xp);
              if (xp[0] > hi)
                break;
              if (x == ea || x == eb || xp[1] < lo2 || xp[1] > hi2)
                continue;
              /* Either diagonal: the chunks of the face split it both ways. */
              hit = inside_tri (q[0], q[1], q[2], xp) || inside_tri (q[0], q[2], q[3], xp)
                    || inside_tri (q[0], q[1], q[3], xp) || inside_tri (q[1], q[2], q[3], xp);
            }
          if (!hit)
            break;
          ea->j = round == 7 ? 0 : inside_at_most (ea, ea->j / 2);
          eb->j = round == 7 ? 0 : inside_at_most (eb, eb->j / 2);
        }
    }
}

int
tg__iso_skirts_plan (const TgIsoLevel *lv, const TgIsoLattice *lat, const TgIsoOptions *o,
                     double depth, const TgField *field, TgIsoSkirts **out)
{
  TgIsoSkirts *plan = calloc (1, sizeof *plan);
  PlaneEdge *edges = NULL;
  PlaneEnd *ends = NULL;
  EndLo *by_lo = NULL;
  int64_t nedge = 0, cap = 0, nend = 0, nkept = 0;
  double step = 0.25 * o->cell;
  int rc = 0;

  *out = NULL;
  if (plan == NULL)
    return TG_ENOMEM;
  /* The outline edges. */
  for (int64_t t = 0; t < 3 * lv->nt; t++)
    {
      uint32_t a = lv->idx[t], b = lv->idx[t - t % 3 + (t % 3 + 1) % 3];
      const float *pa = lv->pos + 3 * (size_t) a, *pb = lv->pos + 3 * (size_t) b;

      for (int k = 0; k < 3; k++)
        {
          int64_t g;

          if (pa[k] != pb[k] || (g = face_at (lat, o, k, pa[k])) < 0)
            continue;
          if (nedge == cap)
            {
              PlaneEdge *p;

              cap = cap ? 2 * cap : 1024;
              p = realloc (edges, sizeof *p * (size_t) cap);
              if (p == NULL)
                {
                  rc = TG_ENOMEM;
                  goto out;
                }
              edges = p;
            }
          edges[nedge].plane = (uint64_t) k << 40 | (uint64_t) g;
          edges[nedge].a = a < b ? a : b;
          edges[nedge].b = a < b ? b : a;
          edges[nedge++].lo = fminf (pa[(k + 1) % 3], pb[(k + 1) % 3]);
        }
    }
  /* Each inner edge twice (once each way), an edge on the box's faces
   * once: sorted, each once. */
  if (nedge == 0)
    goto out;
  qsort (edges, (size_t) nedge, sizeof *edges, cmp_plane_edge);
  {
    int64_t w = 0;

    for (int64_t i = 0; i < nedge; i++)
      if (w == 0 || cmp_plane_edge (&edges[w - 1], &edges[i]) != 0)
        edges[w++] = edges[i];
    nedge = w;
  }
  ends = malloc (sizeof *ends * (size_t) (2 * nedge));
  by_lo = malloc (sizeof *by_lo * (size_t) (2 * nedge));
  if (!ends || !by_lo)
    {
      rc = TG_ENOMEM;
      goto out;
    }
  for (int64_t i = 0; i < nedge; i++)
    for (int q = 0; q < 2; q++)
      {
        PlaneEnd *e = &ends[nend++];

        memset (e, 0, sizeof *e);
        e->plane = edges[i].plane;
        e->v = q ? edges[i].b : edges[i].a;
      }
  qsort (ends, (size_t) nend, sizeof *ends, cmp_plane_end);
  {
    int64_t w = 0;

    for (int64_t i = 0; i < nend; i++)
      if (w == 0 || cmp_plane_end (&ends[w - 1], &ends[i]) != 0)
        ends[w++] = ends[i];
    nend = w;
  }
  for (int64_t i = 0; i < nend; i++)
    {
      PlaneEnd *e = &ends[i];
      int k = (int) (e->plane >> 40);

      e->way = skirt_way (lv->nrm + 3 * (size_t) e->v, k, depth, e->dir);
      e->steps = (int) fmin (ceil (e->way / step), 64.0);
      e->j = e->steps;
    }
  /* Plane by plane: the outline cut. */
  for (int64_t e0 = 0, s0 = 0; e0 < nend;)
    {
      uint64_t plane = ends[e0].plane;
      int64_t e1 = e0, s1;
      int k = (int) (plane >> 40);
      double max_edge = 0.0;
      PlaneEdge *pe;

      while (e1 < nend && ends[e1].plane == plane)
        e1++;
      while (edges[s0].plane != plane)
        s0++;
      s1 = s0;
      while (s1 < nedge && edges[s1].plane == plane)
        s1++;
      pe = edges + s0;
      for (int64_t s = 0; s < s1 - s0; s++)
        {
          const float *pa = lv->pos + 3 * (size_t) pe[s].a, *pb = lv->pos + 3 * (size_t) pe[s].b;

          max_edge = fmax (max_edge, fabs ((double) pa[(k + 1) % 3] - pb[(k + 1) % 3]));
        }
      /* By lo, in a copy: the quads go by the (plane, a, b) order. */
      {
        PlaneEdge *sorted = malloc (sizeof *sorted * (size_t) (s1 - s0));

        if (sorted == NULL)
          {
            rc = TG_ENOMEM;
            goto out;
          }
        memcpy (sorted, pe, sizeof *sorted * (size_t) (s1 - s0));
        qsort (sorted, (size_t) (s1 - s0), sizeof *sorted, cmp_edge_lo);
        plan_cut_at_outline (ends + e0, e1 - e0, sorted, s1 - s0, max_edge, lv->pos, k);
        free (sorted);
      }
      e0 = e1;
      s0 = s1;
    }
  if (field)
    {
      rc = plan_cut_at_field (ends, nend, lv->pos, field, o->iso);
      if (rc < 0)
        goto out;
    }
  /* Plane by plane: clear the quads. */
  for (int64_t e0 = 0, s0 = 0; e0 < nend;)
    {
      uint64_t plane = ends[e0].plane;
      int64_t e1 = e0, s1;
      int k = (int) (plane >> 40);

      while (e1 < nend && ends[e1].plane == plane)
        e1++;
      while (edges[s0].plane != plane)
        s0++;
      s1 = s0;
      while (s1 < nedge && edges[s1].plane == plane)
        s1++;
      for (int64_t i = e0; i < e1; i++)
        {
          by_lo[i - e0].u = lv->pos[3 * (size_t) ends[i].v + (k + 1) % 3];
          by_lo[i - e0].i = i - e0;
        }
      qsort (by_lo, (size_t) (e1 - e0), sizeof *by_lo, cmp_end_lo);
      plan_clear_quads (ends + e0, e1 - e0, by_lo, edges + s0, s1 - s0, lv->pos, k);
      e0 = e1;
      s0 = s1;
    }
  /* The bottoms of the skirts that hang, by vertex and axis. */
  plan->ends = malloc (sizeof *plan->ends * (size_t) (nend + 1));
  if (plan->ends == NULL)
    {
      rc = TG_ENOMEM;
      goto out;
    }
  for (int64_t i = 0; i < nend; i++)
    if (ends[i].j > 0)
      {
        SkirtEnd *s = &plan->ends[nkept++];

        s->key = (uint64_t) ends[i].v << 2 | (ends[i].plane >> 40);
        skirt_place (lv->pos + 3 * (size_t) ends[i].v, ends[i].dir,
                     ends[i].way * ends[i].j / ends[i].steps, s->bottom);
      }
  qsort (plan->ends, (size_t) nkept, sizeof *plan->ends, cmp_skirt_end);
  plan->n = nkept;
out:
  free (edges);
  free (ends);
  free (by_lo);
  if (rc < 0)
    tg__iso_skirts_free (plan);
  else
    *out = plan;
  return rc;
}

void
tg__iso_skirts_free (TgIsoSkirts *plan)
{
  if (plan)
    free (plan->ends);
  free (plan);
}

static const SkirtEnd *
plan_find (const TgIsoSkirts *plan, uint32_t v, int k)
{
  SkirtEnd key = { .key = (uint64_t) v << 2 | (uint64_t) k };

  return plan->n ? bsearch (&key, plan->ends, (size_t) plan->n, sizeof key, cmp_skirt_end)
                 : NULL;
}

int
tg__iso_skirts_add (const TgIsoSkirts *plan, const TgIsoLattice *lat, const TgIsoOptions *o,
                    const int64_t cid[3], const uint32_t *global, TgMeshChunk *c)
{
  Faces faces, *f = &faces;
  int64_t nt = c->n_indices / 3, n_open = 0;
  EdgeUse *uses = malloc (sizeof *uses * (size_t) (3 * nt + 1));
  uint8_t *face_of = calloc ((size_t) (3 * nt + 1), 1); /* 1 + 2 axis + side, or 0 */
  int32_t *sk = malloc (sizeof (int32_t) * 3 * (size_t) (c->n_vertices + 1));
  int nv = c->n_vertices, rc = 0;

  chunk_faces (lat, o, cid, f);
  if (!uses || !face_of || !sk)
    {
      rc = TG_ENOMEM;
      goto out;
    }
  for (int64_t t = 0; t < 3 * nt; t++)
    {
      uint32_t a = c->indices[t], b = c->indices[t - t % 3 + (t % 3 + 1) % 3];

      uses[t].key = (uint64_t) (a < b ? a : b) << 32 | (a < b ? b : a);
      uses[t].at = t;
    }
  qsort (uses, (size_t) (3 * nt), sizeof *uses, cmp_edge);
  /* Open edges (one use) in a face plane; the new vertices and triangles
   * follow the triangle order, whatever the sort did with ties. */
  for (int64_t i = 0; i < 3 * nt; i++)
    {
      bool open = (i == 0 || uses[i - 1].key != uses[i].key)
                  && (i + 1 == 3 * nt || uses[i + 1].key != uses[i].key);
      int64_t t = uses[i].at;
      const float *pa, *pb;

      if (!open)
        continue;
      pa = c->positions + 3 * (size_t) c->indices[t];
      pb = c->positions + 3 * (size_t) c->indices[t - t % 3 + (t % 3 + 1) % 3];
      for (int k = 0; k < 3 && !face_of[t]; k++)
        for (int side = 0; side < 2; side++)
          if (f->inner[k][side] && pa[k] == f->at[k][side] && pb[k] == f->at[k][side])
            {
              face_of[t] = (uint8_t) (1 + 2 * k + side);
              n_open++;
              break;
            }
    }
  if (n_open == 0)
    goto out;
  for (int64_t i = 0; i < 3 * (int64_t) nv; i++)
    sk[i] = -1;
  {
    int64_t cap_v = nv + 2 * n_open, cap_i = c->n_indices + 6 * n_open;
    float *pos = realloc (c->positions, sizeof (float) * 3 * (size_t) cap_v);
    float *nrm = pos ? realloc (c->normals, sizeof (float) * 3 * (size_t) cap_v) : NULL;
    uint32_t *idx = nrm ? realloc (c->indices, sizeof (uint32_t) * (size_t) cap_i) : NULL;
    int64_t ni = c->n_indices;

    if (pos)
      c->positions = pos;
    if (nrm)
      c->normals = nrm;
    if (idx)
      c->indices = idx;
    if (!pos || !nrm || !idx || cap_v > INT32_MAX)
      {
        rc = TG_ENOMEM;
        goto out;
      }
    /* A skirt vertex where the plan hangs one, else the top vertex
     * itself (the skirt's triangles there are left out). */
    for (int64_t t = 0; t < 3 * nt; t++)
      if (face_of[t])
        {
          int k = (face_of[t] - 1) / 2;
          uint32_t ab[2] = { c->indices[t], c->indices[t - t % 3 + (t % 3 + 1) % 3] };

          for (int q = 0; q < 2; q++)
            if (sk[3 * (size_t) ab[q] + (size_t) k] < 0)
              {
                uint32_t v = ab[q];
                const SkirtEnd *e = plan_find (plan, global[v], k);

                if (e == NULL)
                  {
                    sk[3 * (size_t) v + (size_t) k] = (int32_t) v;
                    continue;
                  }
                memcpy (pos + 3 * (size_t) nv, e->bottom, sizeof (float) * 3);
                memcpy (nrm + 3 * (size_t) nv, nrm + 3 * (size_t) v, sizeof (float) * 3);
                sk[3 * (size_t) v + (size_t) k] = nv++;
              }
        }
    for (int64_t t = 0; t < 3 * nt; t++)
      if (face_of[t])
        {
          int k = (face_of[t] - 1) / 2;
          uint32_t a = c->indices[t], b = c->indices[t - t % 3 + (t % 3 + 1) % 3];
          uint32_t d[2] = { (uint32_t) sk[3 * (size_t) a + (size_t) k],
                            (uint32_t) sk[3 * (size_t) b + (size_t) k] };

          /* The triangle has a -> b; the skirt goes on with b -> a. */
          if (d[0] != a)
            {
              idx[ni++] = b;
              idx[ni++] = a;
              idx[ni++] = d[0];
            }
          if (d[1] != b)
            {
              idx[ni++] = b;
              idx[ni++] = d[0];
              idx[ni++] = d[1];
            }
        }
    c->n_vertices = nv;
    c->n_indices = ni;
  }
out:
  free (uses);
  free (face_of);
  free (sk);
  return rc;
}
