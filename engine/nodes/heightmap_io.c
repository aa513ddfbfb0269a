/* Heightmap files: input.heightmap samples a greyscale image over the world
 * and export.heightmap quantises a height to 8 or 16 bits for a writer (or
 * hands it over as 32-bit float for r32 and exr).
 *
 * Float formats carry any height unclamped: r32 as the engine holds it
 * (1.0 = the world's height) or in metres, exr always in metres.
 *
 * Both follow the project's image convention (region.h): row 0 is north
 * (world +Z maximum), column 0 is west (world -X minimum), and the corner
 * pixels sit exactly on the world's corners, as Unity and Unreal
 * heightmaps do.  The engine never decodes or encodes a file itself: it
 * reads through tg_eval_load_image and writes through tg_eval_write_image,
 * with the readers and writers that formats/ registers.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/io.h>
#include <tgraph/node.h>
#include <tgraph/param.h>

#include "grid_util.h"
#include "image_util.h"

/* --- input.heightmap ------------------------------------------------------ */

typedef struct
{
  const char *path;
  double min_height;
  double max_height;
} InputParams;

static const TgParamDesc input_params[] = {
  TG_PARAM_INPUT_PATH (InputParams, path, .label = N_("File"),
                       .help = N_("Greyscale PNG, 8 or 16 bits; colour images are read as their "
                                  "luminance. Relative to the graph file's folder")),
  TG_PARAM_FLOAT (InputParams, min_height, .label = N_("Height at black"), .def = 0.0, .min = 0.0,
                  .max = 1.0,
                  .help = N_("Height that the darkest possible pixel value stands for")),
  TG_PARAM_FLOAT (InputParams, max_height, .label = N_("Height at white"), .def = 1.0, .min = 0.0,
                  .max = 1.0,
                  .help = N_("Height that the brightest possible pixel value stands for")),
};

static const TgPortDesc input_outputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("The image's values over the world") },
};

typedef struct
{
  const TgImage *img;
  const int *col_x0;      /* per output column: left pixel, and ... */
  const double *col_fx;   /* ... the weight of the one to its right */
  double sz;              /* world extent along Z */
  double full;            /* full-scale pixel value: 255, 65535, or 1 for float */
  double hmin, hspan;
} InputJob;

/* Pixel (X, Y) in raw units (0..255, 0..65535, or float).  Grey(+alpha)
 * takes the grey channel; colour takes Rec. 709 luminance of the raw
 * values, or the value itself when R = G = B so grey-as-RGB stays exact. */
static inline double
pixel_value (const TgImage *img, int x, int y)
{
  size_t k = ((size_t) y * (size_t) img->width + (size_t) x) * (size_t) img->channels;
  double r, g, b;

  switch (img->bits)
    {
    case 8:
      {
        const uint8_t *p = (const uint8_t *) img->data + k;
        r = p[0];
        if (img->channels < 3)
          return r;
        g = p[1];
        b = p[2];
      }
      break;
    case 16:
      {
        const uint16_t *p = (const uint16_t *) img->data + k;
        r = p[0];
        if (img->channels < 3)
          return r;
        g = p[1];
        b = p[2];
      }
      break;
    default:
      {
        const float *p = (const float *) img->data + k;
        r = p[0];
        if (img->channels < 3)
          return r;
        g = p[1];
        b = p[2];
      }
      break;
    }
  if (r == g && g == b)
    return r;
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

static void
input_row (const void *user, const TgRegion *r, int j, const float *const *in, float *dst)
{
  const InputJob *job = user;
  const TgImage *img = job->img;
  double fy;
  int y1, y0 = tg__image_rows (img, tg_region_z (r, j), job->sz, &y1, &fy);

  (void) in;
  for (int i = 0; i < r->width; i++)
    {
      int x0 = job->col_x0[i], x1 = img->width > 1 ? x0 + 1 : x0;
      double fx = job->col_fx[i];
      double p00 = pixel_value (img, x0, y0), p10 = pixel_value (img, x1, y0);
      double p01 = pixel_value (img, x0, y1), p11 = pixel_value (img, x1, y1);
      double top = fx == 0.0 ? p00 : p00 + (p10 - p00) * fx;
      double bot = fx == 0.0 ? p01 : p01 + (p11 - p01) * fx;
      double v = fy == 0.0 ? top : top + (bot - top) * fy;
      dst[i] = (float) (job->hmin + job->hspan * (v / job->full));
    }
}

static int
input_eval (TgEvalCtx *c)
{
  const InputParams *p = tg_eval_params (c);
  const TgWorld *world = tg_eval_world (c);
  const TgImage *img = NULL;
  InputJob job = { 0 };
  int *col_x0 = NULL;
  double *col_fx = NULL;
  int rc;

  if ((rc = tg__image_load_checked (c, p->path, "heightmap", &img)) < 0)
    return rc;
  if ((rc = tg__image_columns (c, img->width, &col_fx, &col_x0)) < 0)
    return rc;
  job.img = img;
  job.col_x0 = col_x0;
  job.col_fx = col_fx;
  job.sz = world->size_z;
  job.full = img->bits == 8 ? 255.0 : (img->bits == 16 ? 65535.0 : 1.0);
  job.hmin = p->min_height;
  job.hspan = p->max_height - p->min_height;
  rc = tg_eval_map_rows (c, 1, input_row, &job);
  free (col_fx);
  return rc;
}

static void
input_memory (TgMemQuery *q)
{
  tg__image_memory (q, ((const InputParams *) q->params)->path);
}

static const TgNodeDesc input_heightmap_desc = {
  .type = "input.heightmap",
  .category = TG_CATEGORY_INPUT,
  .label = N_("Heightmap file"),
  .help = N_("Reads a greyscale heightmap image stretched over the whole world"),
  TG_OUTPUTS (input_outputs),
  TG_PARAMS (InputParams, input_params),
  .locality = TG_LOCALITY_LOCAL,
  .eval = input_eval,
  .memory = input_memory,
  .flags = TG_NODE_INPUT,
  .version = 1,
};
TG_NODE_REGISTER (input_heightmap_desc);

/* --- export.heightmap ----------------------------------------------------- */

enum
{
  FMT_PNG16,
  FMT_PNG8,
  FMT_RAW16,
  FMT_R32,
  FMT_EXR,
};

/* Also the writer names formats/ registers. */
static const char *const export_formats[] = { "png16", "png8", "raw16", "r32", "exr", NULL };

enum
{
  ROWS_NORTH_FIRST,
  ROWS_SOUTH_FIRST,
};

static const char *const export_rows[] = { "north_first", "south_first", NULL };

enum
{
  UNITS_NORMALIZED,
  UNITS_METRES,
};

static const char *const export_units[] = { "normalized", "metres", NULL };

typedef struct
{
  const char *path;
  int format;
  int rows;
  int units;
  int compression;
} ExportParams;

static const TgParamDesc export_params[] = {
  TG_PARAM_OUTPUT_PATH (ExportParams, path, .label = N_("File"), .def_s = "height.png",
                        .help = N_("Output file, relative to the output folder")),
  TG_PARAM_ENUM (ExportParams, format, .label = N_("Format"), .def_s = "png16",
                 .choices = export_formats,
                 .help = N_("png16: 16-bit greyscale PNG; png8: 8-bit PNG; raw16: headerless "
                            "16-bit little-endian samples (Unity, Unreal); r32: headerless 32-bit "
                            "float little-endian samples, unclamped (see Units); exr: 32-bit "
                            "float OpenEXR in metres, unclamped (Blender, Houdini, Godot "
                            "terrain plugins)")),
  TG_PARAM_ENUM (ExportParams, rows, .label = N_("Row order"), .def_s = "north_first",
                 .choices = export_rows,
                 .help = N_("Which edge the file starts with; "
                            "Unity's RAW import wants south first")),
  TG_PARAM_ENUM (ExportParams, units, .label = N_("Units"), .def_s = "normalized",
                 .choices = export_units,
                 .help = N_("What an r32 sample counts: normalized: 1.0 = the world's height; "
                            "metres: metres above the world's base. exr is always in metres")),
  TG__PARAM_PNG_COMPRESSION (ExportParams),
};

static const TgPortDesc export_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Height to write; clamped to 0..1 except in r32 and exr") },
};

typedef struct
{
  TgEvalCtx *c;
  const TgValue *in;
  const TgRegion *region;
  int bits;
  float scale;  /* float formats: what 1.0 becomes */
  bool flip;
  /* The band being filled: file rows Y0 .. into DST. */
  int y0;
  void *dst;
} ExportJob;

static void
export_band_rows (void *user, int begin, int end)
{
  const ExportJob *job = user;
  int w = job->region->width;

  for (int k = begin; k < end; k++)
    {
      int y = job->y0 + k, j = job->flip ? job->region->height - 1 - y : y;
      const float *src = tg__grid_row (job->in, job->region, j);
      if (job->bits == 32)
        {
          /* Full precision, unclamped: float formats carry any height. */
          float *out = (float *) job->dst + (size_t) k * (size_t) w;
          for (int i = 0; i < w; i++)
            out[i] = src[i] * job->scale;
        }
      else if (job->bits == 16)
        {
          uint16_t *out = (uint16_t *) job->dst + (size_t) k * (size_t) w;
          for (int i = 0; i < w; i++)
            out[i] = (uint16_t) tg_quantise (src[i], 65535.0);
        }
      else
        {
          uint8_t *out = (uint8_t *) job->dst + (size_t) k * (size_t) w;
          for (int i = 0; i < w; i++)
            out[i] = (uint8_t) tg_quantise (src[i], 255.0);
        }
    }
}

/* Rows [Y, Y + N) of the file into DST, converted from the input grid a
 * band at a time as the writer asks for them (the file's layout is never
 * held whole), the band's rows on the node's threads. */
static int
export_rows_fn (void *user, int y, int n, void *dst, TgError *err)
{
  ExportJob *job = user;
  int rc;

  job->y0 = y;
  job->dst = dst;
  rc = tg_eval_parallel_part (job->c, n, tg__grain_rows (job->region->width), export_band_rows,
                              job, (double) y / job->region->height,
                              (double) (y + n) / job->region->height);
  return rc < 0 ? tg_error_set (err, rc, "", "%s", tg_strerror (rc)) : 0;
}

static int
export_eval (TgEvalCtx *c)
{
  const ExportParams *p = tg_eval_params (c);
  const TgRegion *region = tg_eval_region (c);
  ExportJob job = { 0 };
  TgImageRows rows = { 0 };
  const char *format;
  int rc;

  if (p->format < 0 || p->format >= TG_N_ELEMENTS (export_formats) - 1)
    return tg_eval_fail (c, TG_EFORMAT, "params.format: unknown format %d", p->format);
  format = export_formats[p->format];
  if (!p->path || !p->path[0])
    return tg_eval_fail (c, TG_EMISSING, "params.path: %s", TG_MSG_NO_OUTPUT_FILE);
  job.in = tg_eval_input (c, 0);
  if ((rc = tg__check_grid_input (c, job.in, "height", region)) < 0)
    return rc;

  job.c = c;
  job.region = region;
  job.bits = p->format == FMT_PNG8 ? 8 : (p->format == FMT_R32 || p->format == FMT_EXR ? 32 : 16);
  /* Times 1.0 keeps normalized r32 bit for bit what it was. */
  job.scale = p->format == FMT_EXR || p->units == UNITS_METRES
              ? (float) tg_eval_world (c)->height_m : 1.0f;
  job.flip = p->rows == ROWS_SOUTH_FIRST;
  rows.width = region->width;
  rows.height = region->height;
  rows.channels = 1;
  rows.bits = job.bits;
  rows.rows = export_rows_fn;
  rows.user = &job;
  /* The writer records its own message (naming the path) on failure. */
  return tg_eval_write_image_rows (c, p->path, tg__png_writer (format, p->compression), &rows,
                                   job.flip);
}

static const TgNodeDesc export_heightmap_desc = {
  .type = "export.heightmap",
  .category = TG_CATEGORY_OUTPUT,
  .label = N_("Export heightmap"),
  .help = N_("Writes the height as a 16-bit or 8-bit PNG, a 16-bit RAW, a 32-bit float "
             "RAW file or a 32-bit float OpenEXR in metres"),
  TG_INPUTS (export_inputs),
  TG_PARAMS (ExportParams, export_params),
  .locality = TG_LOCALITY_LOCAL,
  .eval = export_eval,
  .flags = TG_NODE_EXPORT,
  /* 3: PNGs deflated in strips side by side: new bytes, the same pixels. */
  .version = 3,
};
TG_NODE_REGISTER (export_heightmap_desc);
