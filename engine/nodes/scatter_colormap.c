/* scatter.colormap: places object instances where an artist painted a
 * distribution map (red = grass, blue = rock, green = tree, black =
 * nothing), as described in MISSION.md section 2.
 *
 * Candidates lie on a jittered grid of cell_m cells (one per cell, drawn
 * from a hash of the seed and the cell), optionally displaced by smooth
 * noise to hide the grid.  Each reads exactly one pixel of the map, as
 * seed 001 maps it: its world x, z through the world's box to the image
 * (row 0 north, column 0 west), clamped, floored.  The pixels are the
 * map's own (tg_value_pixels, an input file's), each an equal area of the
 * box, so what a candidate sees does not depend on the world's resolution
 * and colours are never blended before they are matched; a map made on
 * the lattice by another node has its samples as pixels, each the area
 * around its sample.  Only the density of rgb mode may be blended
 * bilinearly between pixels, when asked.  The pixel is classified through
 * a lookup table, not a loop over the palette.  Then the chance, the
 * transform, the terrain filters and the minimum spacing decide whether
 * it becomes an instance.
 *
 * The minimum spacing runs in world-anchored blocks of max (spacing,
 * cell) metres in four phases (scatter_common.h), so an instance depends
 * only on candidates within five blocks of it.  Instances come ordered by
 * the world sample that owns them (north rows first, then west first),
 * ties by candidate cell, row-major.
 *
 * Determinism: candidate bands run in parallel but write their own
 * buffers, joined in band order, so the candidate sequence is row-major
 * by cell whatever the thread count; the spacing and the order are
 * sequential passes over it.
 *
 * Tiled builds: one step per tile computes the candidates within the
 * spacing's reach of the tile (its inputs grown by that halo), runs the
 * same passes and keeps the instances its samples own; the join puts the
 * tiles' runs back in row order.  The whole-world eval is the same code
 * over the whole lattice, so both give the same bytes.  Either works in
 * bands of rows computed the same way, so its memory follows the band.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/hash.h>
#include <tgraph/node.h>
#include <tgraph/param.h>
#include <tgraph/points.h>

#include "scatter_common.h"

#define MAX_PALETTE 64

/* --- parameters ------------------------------------------------------------ */

typedef struct
{
  const char *name;
  double color[4];
  double tolerance;
} PaletteItem;

static const TgParamDesc palette_item_params[] = {
  TG_PARAM_STRING (PaletteItem, name, .label = N_("Prototype"), .def_s = "grass",
                   .help = N_("The kind of object this colour places; colours with the same name "
                              "place the same prototype")),
  TG_PARAM_COLOR (PaletteItem, color, .label = N_("Colour"), .def_v = { 1.0, 0.0, 0.0, 1.0 },
                  .help = N_("Colour painted in the distribution map (its alpha is not used)")),
  TG_PARAM_FLOAT (PaletteItem, tolerance, .label = N_("Tolerance"), .def = 0.0, .min = 0.0,
                  .max = 1.0,
                  .help = N_("How far a pixel may be from the colour and still match, in 0..1 "
                             "units; 0 uses the node's tolerance")),
};

enum
{
  MODE_PALETTE,
  MODE_RGB,
};
static const char *const mode_choices[] = { "palette", "rgb", NULL };

enum
{
  METRIC_MAX_CHANNEL,
  METRIC_EUCLIDEAN,
};
static const char *const metric_choices[] = { "max_channel", "euclidean", NULL };

enum
{
  LUM_LUMA,
  LUM_RELATIVE,
};
static const char *const luminance_choices[] = { "luma", "relative", NULL };

enum
{
  SPACING_GLOBAL,
  SPACING_PER_PROTOTYPE,
};
static const char *const spacing_choices[] = { "global", "per_prototype", NULL };

typedef struct
{
  TgList palette;
  int channel_mode;
  int metric;
  double tolerance;
  bool luminance_chance;
  int luminance_mode;
  bool smooth_density;
  double base_chance;
  double cell_m;
  double jitter;
  double warp_m;
  double warp_scale_m;
  double min_spacing_m;
  int spacing_mode;
  TG__SCATTER_XFORM_FIELDS;
  int seed;
} ColormapParams;

static const TgParamDesc colormap_params[] = {
  TG_PARAM_LIST (ColormapParams, palette, PaletteItem, palette_item_params, .label = N_("Palette"),
                 .def_s = "name=grass|color=#ff0000; name=rock|color=#0000ff; "
                          "name=tree|color=#00ff00", .min = 1, .max = MAX_PALETTE,
                 .help = N_("Which colour places which prototype.  In rgb mode only each colour's "
                            "red value is used: it selects the prototype")),
  TG_PARAM_ENUM (ColormapParams, channel_mode, .label = N_("Channels"), .def_s = "palette",
                 .choices = mode_choices,
                 .help = N_("palette: match colours against the palette; rgb: red selects the "
                            "prototype (nearest palette red within tolerance), green is the "
                            "density and blue the scale")),
  TG_PARAM_ENUM (ColormapParams, metric, .label = N_("Colour distance"), .def_s = "max_channel",
                 .choices = metric_choices,
                 .help = N_("max_channel: largest difference of R, "
                            "G, B; euclidean: distance in RGB space")),
  TG_PARAM_FLOAT (ColormapParams, tolerance, .label = N_("Tolerance"), .def = 0.12, .min = 0.0,
                  .max = 1.0,
                  .help = N_("Default colour tolerance (0.10-0.15 suits hand-painted maps); a "
                             "pixel further from every colour places nothing")),
  TG_PARAM_BOOL (ColormapParams, luminance_chance, .label = N_("Brightness is density"),
                 .def = false,
                 .help = N_("Darker paint places fewer objects: the chance is multiplied by the "
                            "pixel's brightness, measured as Brightness measure says")),
  TG_PARAM_ENUM (ColormapParams, luminance_mode, .label = N_("Brightness measure"), .def_s = "luma",
                 .choices = luminance_choices,
                 .help = N_("luma: the pixel's luminance (0.2126 R + 0.7152 G + 0.0722 B, as "
                            "Godot's Color.get_luminance), colours matched as usual, so pure red "
                            "places at most 21% of the chance; relative: colours match by hue and "
                            "the chance follows the brightness relative to the palette colour, so "
                            "half-bright paint of any colour is half the density")),
  TG_PARAM_BOOL (ColormapParams, smooth_density, .label = N_("Smooth density"), .def = false,
                 .help = N_("rgb mode: blend the density (green) bilinearly between neighbouring "
                            "pixels instead of taking the candidate's pixel; the prototype (red) "
                            "and the scale (blue) always come from its pixel")),
  TG_PARAM_FLOAT (ColormapParams, base_chance, .label = N_("Chance"), .def = 1.0, .min = 0.0,
                  .max = 1.0,
                  .help = N_("Probability that a matching candidate becomes an instance")),
  TG_PARAM_FLOAT (ColormapParams, cell_m, .label = N_("Cell size"), .def = 2.0, .min = 0.01,
                  .max = 100000.0, .soft_min = 0.25, .soft_max = 50.0, .unit = "m",
                  .help = N_("Candidate grid spacing: one candidate per cell, so about the densest "
                             "spacing of instances")),
  TG_PARAM_FLOAT (ColormapParams, jitter, .label = N_("Jitter"), .def = 1.0, .min = 0.0, .max = 1.0,
                  .help = N_("How far a candidate may move from its cell's centre, as a fraction "
                             "of the cell (0: a regular grid; 1: anywhere in the cell)")),
  TG_PARAM_FLOAT (ColormapParams, warp_m, .label = N_("Warp"), .def = 0.0, .min = 0.0,
                  .max = 100000.0, .soft_min = 0.0, .soft_max = 50.0, .unit = "m",
                  .help = N_("Largest displacement of candidates "
                             "by smooth noise, to hide the grid")),
  TG_PARAM_FLOAT (ColormapParams, warp_scale_m, .label = N_("Warp size"), .def = 50.0, .min = 0.01,
                  .max = 1000000.0, .soft_min = 1.0, .soft_max = 1000.0, .unit = "m",
                  .help = N_("Feature size of the displacement noise")),
  TG_PARAM_FLOAT (ColormapParams, min_spacing_m, .label = N_("Minimum spacing"), .def = 0.0,
                  .min = 0.0, .max = 100000.0, .soft_min = 0.0, .soft_max = 50.0, .unit = "m",
                  .help = N_("No two instances closer than this (0: no limit); candidates are "
                             "thinned in world blocks, earlier ones (north first, then west first) "
                             "winning within a block")),
  TG_PARAM_ENUM (ColormapParams, spacing_mode, .label = N_("Spacing between"), .def_s = "global",
                 .choices = spacing_choices,
                 .help = N_("global: between all instances; per_prototype: only between instances "
                            "of the same prototype")),
  TG__SCATTER_XFORM_PARAMS (ColormapParams),
  TG_PARAM_SEED (ColormapParams, seed, .label = N_("Seed"),
                 .help = N_("Seed of every random choice")),
};

static const TgPortDesc colormap_inputs[] = {
  { .name = "image", .type = TG_TYPE_IMAGE, .label = N_("Distribution map"),
    .help = N_("The painted map, raw RGBA values (no gamma), stretched over the world; each "
               "candidate reads the one pixel under it (a file's own pixels, not a blend)") },
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"), .optional = true,
    .help = N_("Terrain to snap to and to filter by height and slope") },
};

static const TgPortDesc colormap_outputs[] = {
  { .name = "points", .type = TG_TYPE_POINTS, .label = N_("Instances"),
    .help = N_("The placed instances, by the world sample under them: north rows first, "
               "then west first") },
};

static int
colormap_check (const void *params, TgError *err)
{
  const ColormapParams *p = params;
  const PaletteItem *items = p->palette.items;
  int rc;

  if ((rc = tg__scatter_xform_check (p->min_yaw_deg, p->max_yaw_deg, p->min_scale,
                                     p->max_scale, p->min_height_m, p->max_height_m, err))
      < 0)
    return rc;
  if (p->palette.n < 1 || !items)
    return tg_error_set (err, TG_EMISSING, "params.palette", TG_MSG_PALETTE_EMPTY);
  if (p->palette.n > MAX_PALETTE)
    return tg_error_set (err, TG_ERANGE, "params.palette", TG_MSG_PALETTE_TOO_MANY, p->palette.n,
                         MAX_PALETTE);
  for (int i = 0; i < p->palette.n; i++)
    {
      char path[64];
      snprintf (path, sizeof path, "params.palette[%d].name", i);
      if (!items[i].name || !items[i].name[0])
        return tg_error_set (err, TG_EMISSING, path, TG_MSG_PALETTE_NO_PROTO, i);
      if (p->channel_mode == MODE_PALETTE && p->luminance_chance
          && p->luminance_mode == LUM_RELATIVE && fmax (items[i].color[0], fmax (items[i].color[1], items[i].color[2])) <= 0.0)
        {
          snprintf (path, sizeof path, "params.palette[%d].color", i);
          return tg_error_set (err, TG_EINVAL, path, TG_MSG_PALETTE_BLACK);
        }
    }
  return 0;
}

/* --- classification ---------------------------------------------------------- */

/* Colours are looked up in a table of 32 levels per channel (32K cells).
 * A cell holds the one palette entry whose tolerance region reaches into
 * it, NONE when none does, or SEVERAL; a hit is then checked exactly. */
#define LUT_BITS 5
#define LUT_LEVELS (1 << LUT_BITS)
#define LUT_SIZE (LUT_LEVELS * LUT_LEVELS * LUT_LEVELS)
/* rgb mode: the red value alone, finer. */
#define LUT1_SIZE 1024
#define LUT_NONE (-1)
#define LUT_SEVERAL (-2)
/* Paint darker than this counts as black (nothing). */
#define BLACK_LEVEL (1.0f / 1024.0f)

typedef struct
{
  int n;
  int mode, metric;
  bool lum;                 /* brightness relative to the palette colour */
  bool luma;                /* the pixel's luminance */
  float col[MAX_PALETTE][3]; /* the colours matched against (by hue in relative mode) */
  float tol[MAX_PALETTE];
  float inv_v[MAX_PALETTE]; /* relative mode: 1 / the entry's brightness */
  int proto[MAX_PALETTE];
  bool black_matches;       /* a palette colour is near black: no early skip */
  int16_t lut[LUT_SIZE];
  int16_t lut1[LUT1_SIZE];
} Classifier;

static inline float
clamp01f (float v)
{
  return v > 0.0f ? (v < 1.0f ? v : 1.0f) : 0.0f;
}

/* Distance from C to the interval [LO, HI]. */
static inline double
interval_distance (double c, double lo, double hi)
{
  return c < lo ? lo - c : (c > hi ? c - hi : 0.0);
}

static inline float
colour_distance (const Classifier *cl, int e, float r, float g, float b)
{
  float dr = fabsf (r - cl->col[e][0]), dg = fabsf (g - cl->col[e][1]);
  float db = fabsf (b - cl->col[e][2]);

  if (cl->metric == METRIC_MAX_CHANNEL)
    return fmaxf (dr, fmaxf (dg, db));
  return sqrtf (dr * dr + dg * dg + db * db);
}

static void
classifier_build (Classifier *cl, const ColormapParams *p, const int *proto_of_entry)
{
  const PaletteItem *items = p->palette.items;

  memset (cl, 0, sizeof *cl);
  cl->n = p->palette.n;
  cl->mode = p->channel_mode;
  cl->metric = p->metric;
  cl->lum = p->luminance_chance && p->channel_mode == MODE_PALETTE
            && p->luminance_mode == LUM_RELATIVE;
  cl->luma = p->luminance_chance && p->channel_mode == MODE_PALETTE
             && p->luminance_mode == LUM_LUMA;
  for (int e = 0; e < cl->n; e++)
    {
      double r = items[e].color[0], g = items[e].color[1], b = items[e].color[2];
      double v = fmax (r, fmax (g, b));
      if (cl->lum && v > 0.0)
        {
          r /= v;
          g /= v;
          b /= v;
          cl->inv_v[e] = (float) (1.0 / v);
        }
      cl->col[e][0] = (float) r;
      cl->col[e][1] = (float) g;
      cl->col[e][2] = (float) b;
      cl->tol[e] = (float) (items[e].tolerance > 0.0 ? items[e].tolerance : p->tolerance);
      cl->proto[e] = proto_of_entry[e];
    }

  /* A small margin keeps float rounding from dropping a colour the exact
   * check would accept. */
  for (int ri = 0; ri < LUT_LEVELS; ri++)
    for (int gi = 0; gi < LUT_LEVELS; gi++)
      for (int bi = 0; bi < LUT_LEVELS; bi++)
        {
          int found = LUT_NONE;
          for (int e = 0; e < cl->n; e++)
            {
              double d[3], dist;
              const int q[3] = { ri, gi, bi };
              for (int k = 0; k < 3; k++)
                d[k] = interval_distance (cl->col[e][k], (double) q[k] / LUT_LEVELS,
                                          (double) (q[k] + 1) / LUT_LEVELS);
              dist = cl->metric == METRIC_MAX_CHANNEL ? fmax (d[0], fmax (d[1], d[2]))
                                                      : sqrt (d[0] * d[0] + d[1] * d[1]
                                                              + d[2] * d[2]);
              if (dist <= (double) cl->tol[e] + 1e-6)
                found = found == LUT_NONE ? e : LUT_SEVERAL;
            }
          cl->lut[(ri << (2 * LUT_BITS)) | (gi << LUT_BITS) | bi] = (int16_t) found;
        }
  for (int k = 0; k < LUT1_SIZE; k++)
    {
      int found = LUT_NONE;
      for (int e = 0; e < cl->n; e++)
        if (interval_distance (cl->col[e][0], (double) k / LUT1_SIZE,
                               (double) (k + 1) / LUT1_SIZE)
            <= (double) cl->tol[e] + 1e-6)
          found = found == LUT_NONE ? e : LUT_SEVERAL;
      cl->lut1[k] = (int16_t) found;
    }
  cl->black_matches = !cl->lum && cl->mode == MODE_PALETTE && cl->lut[0] != LUT_NONE;
}

/* The palette entry the pixel PX (RGBA) places, or -1; *DENSITY gets the
 * factor on the chance (brightness, or green in rgb mode) and *SCALE01
 * the blue value (rgb mode). */
static inline int
classify (const Classifier *cl, const float *px, float *density, float *scale01)
{
  float r = clamp01f (px[0]), g = clamp01f (px[1]), b = clamp01f (px[2]);
  float v = 1.0f, best = INFINITY;
  int e, key, found = -1;

  if (!(px[3] >= 0.5f))
    return -1;
  if (cl->mode == MODE_RGB)
    {
      if (!(g > 0.0f))
        return -1;
      key = (int) (r * LUT1_SIZE);
      e = cl->lut1[key < LUT1_SIZE ? key : LUT1_SIZE - 1];
      if (e == LUT_NONE)
        return -1;
      for (int k = e >= 0 ? e : 0; k < (e >= 0 ? e + 1 : cl->n); k++)
        {
          float d = fabsf (r - cl->col[k][0]);
          if (d <= cl->tol[k] && d < best)
            {
              best = d;
              found = k;
            }
        }
      *density = g;
      *scale01 = b;
      return found;
    }
  if (cl->lum)
    {
      v = fmaxf (r, fmaxf (g, b));
      if (v < BLACK_LEVEL)
        return -1;
      r /= v;
      g /= v;
      b /= v;
    }
  key = ((int) (r * LUT_LEVELS) - (r >= 1.0f)) << (2 * LUT_BITS)
        | ((int) (g * LUT_LEVELS) - (g >= 1.0f)) << LUT_BITS
        | ((int) (b * LUT_LEVELS) - (b >= 1.0f));
  e = cl->lut[key];
  if (e == LUT_NONE)
    return -1;
  /* The exact check: the entry itself, or the nearest of all on a cell
   * that several reach (ties go to the earlier entry). */
  for (int k = e >= 0 ? e : 0; k < (e >= 0 ? e + 1 : cl->n); k++)
    {
      float d = colour_distance (cl, k, r, g, b);
      if (d <= cl->tol[k] && d < best)
        {
          best = d;
          found = k;
        }
    }
  if (found >= 0)
    *density = cl->lum    ? fminf (1.0f, v * cl->inv_v[found])
               : cl->luma ? clamp01f (0.2126f * r + 0.7152f * g + 0.0722f * b)
                          : 1.0f;
  *scale01 = 0.0f;
  return found;
}

/* --- the map ------------------------------------------------------------------ */

/* The pixels a candidate reads: the map's own (tg_value_pixels) or else
 * its lattice samples.  Pixel column of world X is
 * floor ((X - x0) / span_x * nx + half) - col0 and row of world Z is
 * floor ((z0 - Z) / span_z * nz + half) - row0, both clamped: for the
 * map's pixels the world's west / north edges, its size, its pixel counts
 * and half = 0 (seed 001's mapping); for the lattice the sample (0, 0),
 * one cell, 1 and half = 0.5 (the nearest sample). */
typedef struct
{
  const float *rgba; /* w * h * 4, row-major */
  int w, h;
  double x0, z0, span_x, span_z, nx, nz, half;
  int col0, row0;
} ColorMap;

static void
color_map_init (ColorMap *m, const TgValue *img, const TgWorld *world)
{
  const TgPixels *px = tg_value_pixels (img);

  if (px)
    *m = (ColorMap) { .rgba = px->rgba, .w = px->width, .h = px->height,
                      .x0 = -0.5 * world->size_x, .z0 = 0.5 * world->size_z,
                      .span_x = world->size_x, .span_z = world->size_z,
                      .nx = px->width, .nz = px->height };
  else
    *m = (ColorMap) { .rgba = img->data, .w = img->region.width, .h = img->region.height,
                      .x0 = img->region.origin_x, .z0 = img->region.origin_z,
                      .span_x = img->region.cell, .span_z = img->region.cell, .nx = 1.0,
                      .nz = 1.0, .half = 0.5, .col0 = img->region.col0,
                      .row0 = img->region.row0 };
}

static inline const float *
map_row_ptr (const ColorMap *m, int row)
{
  return m->rgba + (size_t) row * (size_t) m->w * 4;
}

static inline int
clampi (int64_t v, int lo, int hi)
{
  return v < lo ? lo : (v > hi ? hi : (int) v);
}

/* Position of world X / Z in pixels, pixel centres at whole numbers. */
static inline double
map_px_x (const ColorMap *m, double x)
{
  return (x - m->x0) / m->span_x * m->nx + m->half - 0.5 - (double) m->col0;
}

static inline double
map_px_y (const ColorMap *m, double z)
{
  return (m->z0 - z) / m->span_z * m->nz + m->half - 0.5 - (double) m->row0;
}

/* The pixel under world X / Z (the explicit floor). */
static inline int
map_col (const ColorMap *m, double x)
{
  return clampi ((int64_t) floor ((x - m->x0) / m->span_x * m->nx + m->half) - m->col0, 0,
                 m->w - 1);
}

static inline int
map_row (const ColorMap *m, double z)
{
  return clampi ((int64_t) floor ((m->z0 - z) / m->span_z * m->nz + m->half) - m->row0, 0,
                 m->h - 1);
}

/* Green blended bilinearly between the four pixel centres around world
 * X / Z, clamped at the borders (smooth_density). */
static float
map_green_bilinear (const ColorMap *m, double x, double z)
{
  double fx = map_px_x (m, x), fy = map_px_y (m, z);
  double x0 = floor (fx), y0 = floor (fy);
  int c0 = clampi ((int64_t) x0, 0, m->w - 1), c1 = clampi ((int64_t) x0 + 1, 0, m->w - 1);
  int r0 = clampi ((int64_t) y0, 0, m->h - 1), r1 = clampi ((int64_t) y0 + 1, 0, m->h - 1);
  double tx = fx - x0, ty = fy - y0;
  const float *a = map_row_ptr (m, r0), *b = map_row_ptr (m, r1);
  double top = a[4 * c0 + 1] + (a[4 * c1 + 1] - a[4 * c0 + 1]) * tx;
  double bot = b[4 * c0 + 1] + (b[4 * c1 + 1] - b[4 * c0 + 1]) * tx;

  return (float) (top + (bot - top) * ty);
}

/* --- the early skip ------------------------------------------------------------ */

/* Blocks of BLOCK x BLOCK map pixels that hold any paint (not black, not
 * transparent; green above 0 in rgb mode) are flagged, and a summed-area
 * table over the flags answers "is anything painted in this box" in O(1),
 * so whole tiles of candidates over empty map are never generated. */
#define BLOCK 16

typedef struct
{
  const ColorMap *map;
  int mode;
  int bw, bh;
  uint8_t *flags;
} OccJob;

static void
occupancy_rows (void *user, int begin, int end)
{
  const OccJob *job = user;
  const ColorMap *m = job->map;

  for (int br = begin; br < end; br++)
    {
      uint8_t *flags = job->flags + (size_t) br * (size_t) job->bw;
      int j_end = (br + 1) * BLOCK < m->h ? (br + 1) * BLOCK : m->h;
      for (int j = br * BLOCK; j < j_end; j++)
        {
          const float *row = map_row_ptr (m, j);
          for (int bx = 0; bx < job->bw; bx++)
            {
              int i_end = (bx + 1) * BLOCK < m->w ? (bx + 1) * BLOCK : m->w;
              int any = 0;
              if (flags[bx])
                continue;
              for (int i = bx * BLOCK; i < i_end; i++)
                {
                  const float *px = row + 4 * i;
                  float paint = job->mode == MODE_RGB ? px[1] : fmaxf (px[0], fmaxf (px[1], px[2]));
                  any |= (paint >= BLACK_LEVEL) & (px[3] >= 0.5f);
                }
              flags[bx] = (uint8_t) any;
            }
        }
    }
}

/* --- candidates ---------------------------------------------------------------- */

/* Candidate cells per tile side: the unit of the early skip. */
#define TILE 16

typedef struct
{
  const Classifier *cl;
  ColorMap map;
  TgScatterFilter filter;
  uint32_t seed, warp_seed_x, warp_seed_z;
  double west, north, east, south;
  double cell_m, jitter, warp_m, inv_warp_scale;
  double yaw_lo, yaw_hi, scale_lo, scale_hi, base_chance;
 bool rgb, smooth_density;
  int64_t nx, nz;          /* candidate cells over the world */
  int64_t cx0, cx1, cz0, cz1, ntx; /* the cells this evaluation visits */
  /* Candidates outside this box (metres) cannot change this region's instances. */
  double box_w, box_e, box_s, box_n;
  /* the block table */
  const int32_t *sat;
  int bw, bh;
  bool skip_ok;
  TgScatterBuf *bands;
} CandJob;

/* Whether any paint lies within the world box [XA, XB] x [ZA, ZB], or a
 * pixel beside it (which a blended density reads). */
static bool
box_painted (const CandJob *job, double xa, double xb, double za, double zb)
{
  const ColorMap *m = &job->map;
  int c0 = clampi (map_col (m, xa) - 1, 0, m->w - 1) / BLOCK;
  int c1 = clampi (map_col (m, xb) + 1, 0, m->w - 1) / BLOCK;
  int r0 = clampi (map_row (m, zb) - 1, 0, m->h - 1) / BLOCK;
  int r1 = clampi (map_row (m, za) + 1, 0, m->h - 1) / BLOCK;
  int w = job->bw + 1;
  int32_t s = job->sat[(r1 + 1) * w + c1 + 1] - job->sat[r0 * w + c1 + 1]
              - job->sat[(r1 + 1) * w + c0] + job->sat[r0 * w + c0];

  return s > 0;
}

static inline void
candidate (const CandJob *job, int64_t cx, int64_t cz, TgScatterBuf *out)
{
  uint32_t seed = job->seed;
  int32_t ix = (int32_t) cx, iz = (int32_t) cz;
  double u = tg_hash_unit (tg_hash3 (seed, ix, iz, 0)) - 0.5;
  double v = tg_hash_unit (tg_hash3 (seed, ix, iz, 1)) - 0.5;
  double x = job->west + ((double) cx + 0.5 + job->jitter * u) * job->cell_m;
  double z = job->north - ((double) cz + 0.5 + job->jitter * v) * job->cell_m;
  const float *px;
  float seen[4];
  float density = 1.0f, scale01 = 0.0f;
  TgScatterCand c;
  int e;

  if (job->warp_m > 0.0)
    {
      double sx = x * job->inv_warp_scale, sz = z * job->inv_warp_scale;
      double dx = job->warp_m * tg__scatter_value_noise (job->warp_seed_x, sx, sz);
      double dz = job->warp_m * tg__scatter_value_noise (job->warp_seed_z, sx, sz);
      x += dx;
      z += dz;
    }
  c.x = (float) x;
  c.z = (float) z;
  if (!((double) c.x >= job->west && (double) c.x <= job->east && (double) c.z >= job->south
        && (double) c.z <= job->north))
    return;
  if (!((double) c.x >= job->box_w && (double) c.x <= job->box_e && (double) c.z >= job->box_s
        && (double) c.z <= job->box_n))
    return;
  c.seq = (uint64_t) cz * (uint64_t) job->nx + (uint64_t) cx;
  c.prio = 0;
  px = map_row_ptr (&job->map, map_row (&job->map, c.z)) + 4 * map_col (&job->map, c.x);
  if (job->smooth_density)
    {
      memcpy (seen, px, sizeof seen);
      seen[1] = map_green_bilinear (&job->map, c.x, c.z);
      px = seen;
    }
  e = classify (job->cl, px, &density, &scale01);
  if (e < 0)
    return;
  if (!(tg_hash_unit (tg_hash3 (seed, ix, iz, 2)) < job->base_chance * (double) density))
    return;
  c.proto = job->cl->proto[e];
  c.yaw = (float) tg__scatter_lerp_hash (job->yaw_lo, job->yaw_hi, tg_hash3 (seed, ix, iz, 3));
  c.scale = job->rgb ? (float) (job->scale_lo + (job->scale_hi - job->scale_lo) * scale01)
                     : (float) tg__scatter_lerp_hash (job->scale_lo, job->scale_hi,
                                                      tg_hash3 (seed, ix, iz, 4));
  if (!tg__scatter_filter (&job->filter, &c))
    return;
  tg__scatter_buf_push (out, &c);
}

static void
candidate_bands (void *user, int begin, int end)
{
  const CandJob *job = user;
  uint8_t tile_on[4096];
  uint8_t *on;

  for (int band = begin; band < end; band++)
    {
      int64_t cz0 = job->cz0 + (int64_t) band * TILE;
      int64_t cz1 = cz0 + TILE < job->cz1 ? cz0 + TILE : job->cz1;
      TgScatterBuf *out = &job->bands[band];

      on = job->ntx <= (int64_t) sizeof tile_on ? tile_on : malloc ((size_t) job->ntx);
      if (!on)
        {
          out->oom = true;
          continue;
        }
      /* Which tiles of this band can see paint, allowing for the warp. */
      for (int64_t tx = 0; tx < job->ntx; tx++)
        {
          double xa = job->west + (double) (job->cx0 + tx * TILE) * job->cell_m - job->warp_m;
          double xb = job->west + (double) (job->cx0 + tx * TILE + TILE) * job->cell_m
                      + job->warp_m;
          double zb = job->north - (double) cz0 * job->cell_m + job->warp_m;
          double za = job->north - (double) cz1 * job->cell_m - job->warp_m;
          on[tx] = !job->skip_ok || box_painted (job, xa, xb, za, zb);
        }
      for (int64_t cz = cz0; cz < cz1; cz++)
        for (int64_t tx = 0; tx < job->ntx; tx++)
          {
            int64_t cxa = job->cx0 + tx * TILE;
            int64_t cxb = cxa + TILE < job->cx1 ? cxa + TILE : job->cx1;
            if (!on[tx])
              continue;
            for (int64_t cx = cxa; cx < cxb; cx++)
              candidate (job, cx, cz, out);
          }
      if (on != tile_on)
        free (on);
    }
}

/* --- eval ------------------------------------------------------------------------ */

/* Candidate cells one evaluation may visit. */
#define MAX_CELLS ((int64_t) 1 << 32)
/* Candidate cells one band of an evaluation visits, about. */
#define BAND_CELLS ((double) (1 << 22))

/* Metres around a region whose candidates decide its instances. */
static double
colormap_ring_m (const ColormapParams *p)
{
  return tg__scatter_ring_m (p->min_spacing_m, p->cell_m);
}

static inline int64_t
clamp64 (double v, int64_t lo, int64_t hi)
{
  return v < (double) lo ? lo : (v > (double) hi ? hi : (int64_t) v);
}

/* Appends to PTS the instances the samples of window WIN of FULL own,
 * from the candidates within the spacing's reach of it (plus a cell for
 * where a sample's ownership ends), made from the cells their jitter and
 * warp allow.  JOB is set up but for its box and cells. */
static int
colormap_window (TgEvalCtx *c, CandJob *job, const ColormapParams *p, const TgRegion *full,
                 const TgRegion *win, TgPoints *pts)
{
  TgScatterCand *all = NULL;
  int64_t nbands, total = 0;
  double reach = colormap_ring_m (p) + full->cell;
  int rc;

  job->box_w = tg_region_x (full, win->col0) - reach;
  job->box_e = tg_region_x (full, win->col0 + win->width) + reach;
  job->box_n = tg_region_z (full, win->row0) + reach;
  job->box_s = tg_region_z (full, win->row0 + win->height) - reach;
  job->cx0 = clamp64 (floor ((job->box_w - job->warp_m - job->west) / p->cell_m) - 1.0, 0,
                      job->nx);
  job->cx1 = clamp64 (floor ((job->box_e + job->warp_m - job->west) / p->cell_m) + 2.0, 0,
                      job->nx);
  job->cz0 = clamp64 (floor ((job->north - job->box_n - job->warp_m) / p->cell_m) - 1.0, 0,
                      job->nz);
  job->cz1 = clamp64 (floor ((job->north - job->box_s + job->warp_m) / p->cell_m) + 2.0, 0,
                      job->nz);
  job->ntx = (job->cx1 - job->cx0 + TILE - 1) / TILE;

  nbands = (job->cz1 - job->cz0 + TILE - 1) / TILE;
  job->bands = calloc ((size_t) (nbands ? nbands : 1), sizeof (TgScatterBuf));
  if (!job->bands)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  if ((rc = tg_eval_parallel (c, (int) nbands, 1, candidate_bands, job)) < 0)
    goto out;
  for (int64_t b = 0; b < nbands; b++)
    {
      if (job->bands[b].oom)
        {
          rc = tg_eval_fail (c, TG_ENOMEM, "out of memory for the candidates");
          goto out;
        }
      total += job->bands[b].n;
    }

  /* Join the bands in order, releasing each as it is copied. */
  all = malloc (sizeof (TgScatterCand) * (size_t) (total ? total : 1));
  if (!all)
    {
      rc = tg_eval_fail (c, TG_ENOMEM, "out of memory for %lld candidates", (long long) total);
      goto out;
    }
  total = 0;
  for (int64_t b = 0; b < nbands; b++)
    {
      if (job->bands[b].n)
        memcpy (all + total, job->bands[b].c,
                sizeof (TgScatterCand) * (size_t) job->bands[b].n);
      total += job->bands[b].n;
      tg__scatter_buf_clear (&job->bands[b]);
    }
  if (tg_eval_cancelled (c))
    {
      rc = TG_ECANCELLED;
      goto out;
    }
  total = tg__scatter_space_blocks (c, all, total, p->min_spacing_m, p->cell_m,
                                    p->spacing_mode == SPACING_PER_PROTOTYPE, pts->n_protos,
                                    job->west, job->north);
  if (total == TG_ECANCELLED)
    {
      rc = TG_ECANCELLED;
      goto out;
    }
  if (total < 0)
    {
      rc = tg_eval_fail (c, TG_ENOMEM, "out of memory for the spacing pass");
      goto out;
    }
  total = tg__scatter_keep_owned (all, total, full, win);
  rc = 0;
  if (tg__scatter_order (all, total, full) < 0 || tg__scatter_emit (pts, all, total) < 0)
    rc = tg_eval_fail (c, TG_ENOMEM, "out of memory for %lld instances", (long long) total);

out:
  for (int64_t b = 0; b < nbands; b++)
    tg__scatter_buf_clear (&job->bands[b]);
  free (job->bands);
  job->bands = NULL;
  free (all);
  return rc;
}

/* The instances the samples of the evaluation's region own: the whole
 * world in an eval, a tile in a tiled step (with inputs grown by the
 * halo).  Both run this, so a tile's share is the whole result's. */
static int
colormap_eval (TgEvalCtx *c)
{
  const ColormapParams *p = tg_eval_params (c);
  const TgWorld *world = tg_eval_world (c);
  const TgRegion *region = tg_eval_region (c);
  const TgValue *img = tg_eval_input (c, 0);
  const TgValue *height = tg_eval_input (c, 1);
  const PaletteItem *items;
  TgRegion full = tg_region_full (region);
  Classifier *cl = NULL;
  CandJob job = { 0 };
  OccJob occ = { 0 };
  TgPoints *pts = NULL;
  TgValue *out;
  int proto_of_entry[MAX_PALETTE];
  double reach, per_row;
  int rc, band_rows;

  items = p->palette.items;
  if (!img || !img->data || img->channels != 4)
    return tg_eval_fail (c, TG_ETYPE, TG_MSG_INPUT_RGBA, "image", img ? img->channels : 0);
  if (height && (!height->data || height->channels != 1))
    return tg_eval_fail (c, TG_ETYPE, TG_MSG_INPUT_ONE_CHANNEL, "height");
  if (!(world->size_x > 0.0) || !(world->size_z > 0.0))
    return tg_eval_fail (c, TG_EINVAL, TG_MSG_WORLD_NO_EXTENT);

  job.nx = (int64_t) ceil (world->size_x / p->cell_m - 1e-9);
  job.nz = (int64_t) ceil (world->size_z / p->cell_m - 1e-9);
  if (job.nx < 1)
    job.nx = 1;
  if (job.nz < 1)
    job.nz = 1;
  if ((double) job.nx * (double) job.nz > (double) MAX_CELLS || job.nx > INT32_MAX
      || job.nz > INT32_MAX)
    return tg_eval_fail (c, TG_ERANGE,
                         "params.cell_m: %g m cells over a %g x %g m world give %.3g candidates; "
                         "the limit is %.3g, use larger cells",
                         p->cell_m, world->size_x, world->size_z,
                         (double) job.nx * (double) job.nz, (double) MAX_CELLS);

  /* Prototypes by name, in palette order of first appearance. */
  pts = tg_points_new ();
  if (!pts)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  for (int i = 0; i < p->palette.n; i++)
    {
      int k = 0;
      while (k < pts->n_protos && strcmp (pts->proto_names[k], items[i].name) != 0)
        k++;
      if (k == pts->n_protos && (k = tg_points_add_proto (pts, items[i].name)) < 0)
        {
          tg_points_free (pts);
          return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
        }
      proto_of_entry[i] = k;
    }

  cl = malloc (sizeof *cl);
  if (!cl)
    {
      rc = tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
      goto out;
    }
  classifier_build (cl, p, proto_of_entry);

  /* The early-skip table. */
  color_map_init (&job.map, img, world);
  occ.map = &job.map;
  occ.mode = p->channel_mode;
  occ.bw = (job.map.w + BLOCK - 1) / BLOCK;
  occ.bh = (job.map.h + BLOCK - 1) / BLOCK;
  occ.flags = calloc ((size_t) occ.bw * (size_t) occ.bh, 1);
  job.sat = calloc ((size_t) (occ.bw + 1) * (size_t) (occ.bh + 1), sizeof (int32_t));
  if (!occ.flags || !job.sat)
    {
      rc = tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
      goto out;
    }
  job.skip_ok = !cl->black_matches;
  if (job.skip_ok)
    {
      int32_t *sat = (int32_t *) job.sat;
      int w = occ.bw + 1;
      if ((rc = tg_eval_parallel (c, occ.bh, 1, occupancy_rows, &occ)) < 0)
        goto out;
      for (int by = 0; by < occ.bh; by++)
        for (int bx = 0; bx < occ.bw; bx++)
          sat[(by + 1) * w + bx + 1] = occ.flags[(size_t) by * (size_t) occ.bw + (size_t) bx]
                                       + sat[by * w + bx + 1] + sat[(by + 1) * w + bx]
                                       - sat[by * w + bx];
    }
  job.bw = occ.bw;
  job.bh = occ.bh;

  job.cl = cl;
  tg__scatter_filter_init (&job.filter, height, world->height_m, p->snap, p->min_height_m,
                           p->max_height_m, p->max_slope_deg);
  job.seed = tg_eval_seed (c, p->seed);
  job.warp_seed_x = tg_mix32 (job.seed ^ 0x5bd1e995U);
  job.warp_seed_z = tg_mix32 (job.seed ^ 0x27d4eb2fU);
  job.west = -0.5 * world->size_x;
  job.east = 0.5 * world->size_x;
  job.north = 0.5 * world->size_z;
  job.south = -0.5 * world->size_z;
  job.cell_m = p->cell_m;
  job.jitter = p->jitter;
  job.warp_m = p->warp_m;
  job.inv_warp_scale = 1.0 / p->warp_scale_m;
  job.yaw_lo = p->min_yaw_deg * (M_PI / 180.0);
  job.yaw_hi = p->max_yaw_deg * (M_PI / 180.0);
  job.scale_lo = p->min_scale;
  job.scale_hi = p->max_scale;
  job.base_chance = p->base_chance;
  job.rgb = p->channel_mode == MODE_RGB;
  job.smooth_density = job.rgb && p->smooth_density;

  /* Bands of whole rows: each band's instances follow the last band's in
   * the instance order, and a band needs only the candidates near it, so
   * memory follows the band, not the world (or the tile). */
  reach = colormap_ring_m (p) + full.cell;
  per_row = world->size_x * full.cell / (p->cell_m * p->cell_m);
  band_rows = (int) fmin ((double) region->height,
                          fmax (2.0 * reach / full.cell, BAND_CELLS / fmax (per_row, 1.0)));
  if (band_rows < 1)
    band_rows = 1;
  for (int r0 = 0; r0 < region->height; r0 += band_rows)
    {
      int rows = region->height - r0 < band_rows ? region->height - r0 : band_rows;
      TgRegion band = tg_region_window (&full, region->col0, region->row0 + r0, region->width,
                                        rows);
      if ((rc = colormap_window (c, &job, p, &full, &band, pts)) < 0)
        goto out;
    }
  out = tg_value_new_points (pts);
  pts = NULL;
  if (!out)
    {
      rc = tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
      goto out;
    }
  tg_eval_set_output (c, 0, out);
  rc = 0;

out:
  free ((void *) job.sat);
  free (occ.flags);
  free (cl);
  tg_points_free (pts);
  return rc;
}

/* --- tiled builds ------------------------------------------------------------------ */

static int
colormap_n_steps (const void *params, const TgRegion *full)
{
  (void) params;
  (void) full;
  return 1;
}

static int
colormap_halo (const void *params, const TgRegion *full, int step)
{
  (void) step;
  return tg__scatter_halo (full, colormap_ring_m (params));
}

static int
colormap_tile_step (TgEvalCtx *c, int step)
{
  (void) step;
  return colormap_eval (c);
}

static TgValue *
colormap_join (const void *params, const TgRegion *full, const TgTiling *t, int output,
               TgValue *const *parts, TgError *err)
{
  (void) params;
  (void) output;
  return tg__scatter_join (full, t, parts, err);
}

/* The whole instance list the export job reads. */
static uint64_t
colormap_work_bytes (const void *params, const TgRegion *full, const TgTiling *t, int step,
                     bool reduce)
{
  const ColormapParams *p = params;

  (void) t;
  return step == -1 && !reduce ? tg__scatter_joined_bytes (full, p->cell_m, p->min_spacing_m) : 0;
}

static const TgTiledScheme colormap_tiled = {
  .n_steps = colormap_n_steps,
  .halo = colormap_halo,
  .tile_step = colormap_tile_step,
  .join = colormap_join,
  .work_bytes = colormap_work_bytes,
};

static const TgNodeDesc colormap_desc = {
  .type = "scatter.colormap",
  .category = TG_CATEGORY_SCATTER,
  .label = N_("Scatter by colour map"),
  .help = N_("Places instances where a painted distribution map has a palette colour: "
             "one candidate per grid cell, matched by colour, thinned by chance, "
             "terrain height and slope and a minimum spacing"),
  TG_INPUTS (colormap_inputs),
  TG_OUTPUTS (colormap_outputs),
  TG_PARAMS (ColormapParams, colormap_params),
  .locality = TG_LOCALITY_GLOBAL,
  .check = colormap_check,
  .eval = colormap_eval,
  .tiled = &colormap_tiled,
  /* 4: one pixel of the map's own, not the lattice's blend of them. */
  .version = 5,
};
TG_NODE_REGISTER (colormap_desc);
