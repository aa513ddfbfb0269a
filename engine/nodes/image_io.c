/* Colour and weight map files: input.image reads an RGBA picture over the
 * world; export.splat, export.mask and export.image write layers, masks
 * and colour maps as PNGs through the writers formats/ registers.
 *
 * input.image gives two views of one picture.  Its grid is the picture
 * resampled onto the world's lattice with input.heightmap's mapping
 * (image_util.h): row 0 north, column 0 west, corner pixels on the
 * world's corners, bilinear, clamped at the borders; texturing and the
 * exports read that.  It also carries the file's own pixels
 * (tg_value_pixels), each an equal area of the world's box, for a node
 * that means the painted pixels themselves (scatter.colormap), so a
 * colour is never blended with its neighbours before it is matched and
 * does not depend on the world's resolution.  Values are raw: an 8-bit
 * 255 is 1.0 with no gamma curve, as a distribution map painted by an
 * artist means its numbers literally.
 *
 * Splat weights are quantised per pixel with largest-remainder rounding,
 * so the 8-bit weights of a pixel always add up to exactly 255 across all
 * its layers (and files), which Unity's and Unreal's blending expect.
 * export.splat's pow2 size resamples the normalised float weights
 * bilinearly onto a square power-of-two grid first, corner pixels on the
 * world's corners, and quantises those the same way.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/io.h>
#include <tgraph/node.h>
#include <tgraph/param.h>

#include "grid_util.h"
#include "image_util.h"

/* --- input.image --------------------------------------------------------------- */

typedef struct
{
  const char *path;
} InputImageParams;

static const TgParamDesc input_image_params[] = {
  TG_PARAM_INPUT_PATH (InputImageParams, path, .label = N_("File"),
                       .help = N_("PNG, 8 or 16 bits, grey, grey + alpha, RGB or RGBA; read as raw "
                                  "values (no gamma). Relative to the graph file's folder")),
};

static const TgPortDesc input_image_outputs[] = {
  { .name = "image", .type = TG_TYPE_IMAGE, .label = N_("Image"),
    .help = N_("The picture over the world, RGBA 0..1 (grey repeats into RGB; alpha 1 "
               "when the file has none)") },
};

typedef struct
{
  const TgImage *img;
  const int *col_x0;
  const double *col_fx;
  double size_z;
  double inv_full;
} InputImageJob;

/* Pixel (X, Y) as RGBA in raw units. */
static inline void
pixel_rgba (const TgImage *img, int x, int y, double px[4])
{
  size_t k = ((size_t) y * (size_t) img->width + (size_t) x) * (size_t) img->channels;
  double v[4] = { 0, 0, 0, 0 };
  int ch = img->channels;

  switch (img->bits)
    {
    case 8:
      for (int c = 0; c < ch; c++)
        v[c] = ((const uint8_t *) img->data)[k + c];
      break;
    case 16:
      for (int c = 0; c < ch; c++)
        v[c] = ((const uint16_t *) img->data)[k + c];
      break;
    default:
      for (int c = 0; c < ch; c++)
        v[c] = ((const float *) img->data)[k + c];
      break;
    }
  if (ch <= 2)
    {
      px[0] = px[1] = px[2] = v[0];
      px[3] = ch == 2 ? v[1] : -1.0;
    }
  else
    {
      px[0] = v[0];
      px[1] = v[1];
      px[2] = v[2];
      px[3] = ch == 4 ? v[3] : -1.0;
    }
}

static void
input_image_row (const void *user, const TgRegion *r, int j, const float *const *in, float *dst)
{
  const InputImageJob *job = user;
  const TgImage *img = job->img;
  bool has_alpha = img->channels == 2 || img->channels == 4;
  double fy;
  int y1, y0 = tg__image_rows (img, tg_region_z (r, j), job->size_z, &y1, &fy);

  (void) in;
  for (int i = 0; i < r->width; i++)
    {
      int x0 = job->col_x0[i], x1 = img->width > 1 ? x0 + 1 : x0;
      double fx = job->col_fx[i];
      double p00[4], p10[4], p01[4], p11[4];
      float *px = dst + (size_t) i * 4;

      pixel_rgba (img, x0, y0, p00);
      pixel_rgba (img, x1, y0, p10);
      pixel_rgba (img, x0, y1, p01);
      pixel_rgba (img, x1, y1, p11);
      for (int c = 0; c < 4; c++)
        {
          double top = fx == 0.0 ? p00[c] : p00[c] + (p10[c] - p00[c]) * fx;
          double bot = fx == 0.0 ? p01[c] : p01[c] + (p11[c] - p01[c]) * fx;
          double v = fy == 0.0 ? top : top + (bot - top) * fy;
          px[c] = (float) (v * job->inv_full);
        }
      if (!has_alpha)
        px[3] = 1.0f;
    }
}

/* Gives output 0 the file's own pixels as RGBA 0..1 (alpha 1 when the
 * file has none), the same on every tile of a build. */
static int
attach_file_pixels (TgEvalCtx *c, const TgImage *img, double inv_full)
{
  size_t n = (size_t) img->width * (size_t) img->height;
  float *rgba = malloc (n * 4 * sizeof (float));

  if (!rgba)
    return tg_eval_fail (c, TG_ENOMEM, "out of memory for the image's %d x %d pixels", img->width,
                         img->height);
  for (int y = 0; y < img->height; y++)
    for (int x = 0; x < img->width; x++)
      {
        double px[4];
        float *dst = rgba + ((size_t) y * (size_t) img->width + (size_t) x) * 4;
        pixel_rgba (img, x, y, px);
        for (int k = 0; k < 3; k++)
          dst[k] = (float) (px[k] * inv_full);
        dst[3] = px[3] < 0.0 ? 1.0f : (float) (px[3] * inv_full);
      }
  if (tg_value_attach_pixels (tg_eval_output (c, 0), img->width, img->height, rgba) < 0)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  return 0;
}

static int
input_image_eval (TgEvalCtx *c)
{
  const InputImageParams *p = tg_eval_params (c);
  const TgWorld *world = tg_eval_world (c);
  const TgImage *img = NULL;
  InputImageJob job = { 0 };
  int *col_x0 = NULL;
  double *col_fx = NULL;
  int rc;

  if ((rc = tg__image_load_checked (c, p->path, "image", &img)) < 0)
    return rc;
  if ((rc = tg__image_columns (c, img->width, &col_fx, &col_x0)) < 0)
    return rc;
  job.img = img;
  job.col_x0 = col_x0;
  job.col_fx = col_fx;
  job.size_z = world->size_z;
  job.inv_full = img->bits == 8 ? 1.0 / 255.0 : (img->bits == 16 ? 1.0 / 65535.0 : 1.0);
  rc = tg_eval_map_rows (c, 4, input_image_row, &job);
  free (col_fx);
  if (rc == 0)
    rc = attach_file_pixels (c, img, job.inv_full);
  return rc;
}

static void
input_image_memory (TgMemQuery *q)
{
  const char *path = ((const InputImageParams *) q->params)->path;
  TgImage info;

  tg__image_memory (q, path);
  /* The file's pixels ride along with the grid (attach_file_pixels). */
  if (q->image_info (q, path, &info) == 0)
    q->outputs += (uint64_t) info.width * (uint64_t) info.height * 4 * sizeof (float);
}

static const TgNodeDesc input_image_desc = {
  .type = "input.image",
  .category = TG_CATEGORY_INPUT,
  .label = N_("Image file"),
  .help = N_("Reads an RGBA picture (a painted distribution or colour map) stretched over "
             "the whole world, as raw values"),
  TG_OUTPUTS (input_image_outputs),
  TG_PARAMS (InputImageParams, input_image_params),
  .locality = TG_LOCALITY_LOCAL,
  .eval = input_image_eval,
  .memory = input_image_memory,
  .flags = TG_NODE_INPUT | TG_NODE_PIXELS,
  /* 2: carries the file's pixels. */
  .version = 2,
};
TG_NODE_REGISTER (input_image_desc);

/* --- shared by the exports --------------------------------------------------------- */

/* Also the writer names formats/ registers; exr keeps the float values. */
enum
{
  FMT_PNG8,
  FMT_PNG16,
  FMT_EXR,
};

static const char *const image_formats[] = { "png8", "png16", "exr", NULL };

/* Quantises the first CHANNELS channels of grid IN over REGION to BITS
 * (8 or 16), or copies them (32: float, unclamped), a band of rows at a
 * time as the writer asks for them; a band's rows on the node's threads. */
typedef struct
{
  TgEvalCtx *c;
  const TgValue *in;
  const TgRegion *region;
  int channels, bits;
  /* The band being filled: rows Y0 .. into DST. */
  int y0;
  void *dst;
} QuantJob;

static void
quant_band_rows (void *user, int begin, int end)
{
  const QuantJob *job = user;
  const TgValue *in = job->in;
  int w = job->region->width, ich = in->channels, och = job->channels;
  size_t dx = (size_t) (job->region->col0 - in->region.col0);

  for (int k = begin; k < end; k++)
    {
      const float *src = tg_value_row (in, job->region->row0 - in->region.row0 + job->y0 + k)
                         + dx * (size_t) ich;
      size_t o = (size_t) k * (size_t) w * (size_t) och;
      if (job->bits == 32)
        {
          float *dst = (float *) job->dst + o;
          for (int i = 0; i < w; i++)
            for (int c = 0; c < och; c++)
              dst[(size_t) i * och + c] = src[(size_t) i * ich + c];
        }
      else if (job->bits == 16)
        {
          uint16_t *dst = (uint16_t *) job->dst + o;
          for (int i = 0; i < w; i++)
            for (int c = 0; c < och; c++)
              dst[(size_t) i * och + c] = (uint16_t) tg_quantise (src[(size_t) i * ich + c],
                                                                   65535.0);
        }
      else
        {
          uint8_t *dst = (uint8_t *) job->dst + o;
          for (int i = 0; i < w; i++)
            for (int c = 0; c < och; c++)
              dst[(size_t) i * och + c] = (uint8_t) tg_quantise (src[(size_t) i * ich + c],
                                                                  255.0);
        }
    }
}

static int
quant_rows (void *user, int y, int n, void *dst_rows, TgError *err)
{
  QuantJob *job = user;
  int rc;

  job->y0 = y;
  job->dst = dst_rows;
  rc = tg_eval_parallel_part (job->c, n, tg__grain_rows (job->region->width * job->channels),
                              quant_band_rows, job, (double) y / job->region->height,
                              (double) (y + n) / job->region->height);
  return rc < 0 ? tg_error_set (err, rc, "", "%s", tg_strerror (rc)) : 0;
}

/* Checks IN (CHANNELS channels, covering REGION) and writes it to PATH
 * with FORMAT, quantised (exr: the floats) row by row as the writer
 * takes them. */
static int
quantise_and_write (TgEvalCtx *c, const TgValue *in, const char *port, int in_channels,
                    int out_channels, int format, int compression, const char *path)
{
  const TgRegion *region = tg_eval_region (c);
  TgImageRows rows = { 0 };
  QuantJob job;

  if (format < 0 || format >= TG_N_ELEMENTS (image_formats) - 1)
    return tg_eval_fail (c, TG_EFORMAT, "params.format: unknown format %d", format);
  if (!path || !path[0])
    return tg_eval_fail (c, TG_EMISSING, "params.path: %s", TG_MSG_NO_OUTPUT_FILE);
  if (!in || !in->data)
    return tg_eval_fail (c, TG_EMISSING, TG_MSG_INPUT_NO_DATA, port);
  if (in->channels != in_channels)
    return tg_eval_fail (c, TG_ETYPE, TG_MSG_INPUT_CHANNELS, port, in->channels, in_channels);
  if (!tg_region_contains (&in->region, region))
    return tg_eval_fail (c, TG_EINVAL, TG_MSG_INPUT_NOT_COVERED, port);
  job.c = c;
  job.in = in;
  job.region = region;
  job.channels = out_channels;
  job.bits = format == FMT_PNG8 ? 8 : (format == FMT_EXR ? 32 : 16);
  rows.width = region->width;
  rows.height = region->height;
  rows.channels = out_channels;
  rows.bits = job.bits;
  rows.rows = quant_rows;
  rows.user = &job;
  /* The writer records its own message (naming the path) on failure. */
  return tg_eval_write_image_rows (c, path, tg__png_writer (image_formats[format], compression),
                                   &rows, false);
}

/* --- export.mask ---------------------------------------------------------------- */

typedef struct
{
  const char *path;
  int format;
  int compression;
} ExportMaskParams;

static const TgParamDesc export_mask_params[] = {
  TG_PARAM_OUTPUT_PATH (ExportMaskParams, path, .label = N_("File"), .def_s = "mask.png",
                        .help = N_("Output file, relative to the output folder")),
  TG_PARAM_ENUM (ExportMaskParams, format, .label = N_("Format"), .def_s = "png8",
                 .choices = image_formats,
                 .help = N_("png8: 8-bit greyscale PNG; png16: 16-bit greyscale PNG; exr: 32-bit "
                            "float OpenEXR, unclamped")),
  TG__PARAM_PNG_COMPRESSION (ExportMaskParams),
};

static const TgPortDesc export_mask_inputs[] = {
  { .name = "mask", .type = TG_TYPE_MASK, .label = N_("Mask"),
    .help = N_("Mask to write; clamped to 0..1 except in exr") },
};

static int
export_mask_eval (TgEvalCtx *c)
{
  const ExportMaskParams *p = tg_eval_params (c);

  return quantise_and_write (c, tg_eval_input (c, 0), "mask", 1, 1, p->format, p->compression,
                             p->path);
}

static const TgNodeDesc export_mask_desc = {
  .type = "export.mask",
  .category = TG_CATEGORY_OUTPUT,
  .label = N_("Export mask"),
  .help = N_("Writes a mask as an 8-bit or 16-bit greyscale PNG or a 32-bit float OpenEXR"),
  TG_INPUTS (export_mask_inputs),
  TG_PARAMS (ExportMaskParams, export_mask_params),
  .locality = TG_LOCALITY_LOCAL,
  .eval = export_mask_eval,
  .flags = TG_NODE_EXPORT,
  /* 3: PNGs deflated in strips side by side: new bytes, the same pixels. */
  .version = 3,
};
TG_NODE_REGISTER (export_mask_desc);

/* --- export.image ---------------------------------------------------------------- */

typedef struct
{
  const char *path;
  int format;
  bool alpha;
  int compression;
} ExportImageParams;

static const TgParamDesc export_image_params[] = {
  TG_PARAM_OUTPUT_PATH (ExportImageParams, path, .label = N_("File"), .def_s = "color.png",
                        .help = N_("Output file, relative to the output folder")),
  TG_PARAM_ENUM (ExportImageParams, format, .label = N_("Format"), .def_s = "png8",
                 .choices = image_formats,
                 .help = N_("png8: 8 bits per channel; png16: 16 bits per channel; exr: 32-bit "
                            "float OpenEXR, unclamped (linear values, no gamma)")),
  TG_PARAM_BOOL (ExportImageParams, alpha, .label = N_("Alpha"), .def = true,
                 .help = N_("Write RGBA; off writes RGB and drops the alpha channel")),
  TG__PARAM_PNG_COMPRESSION (ExportImageParams),
};

static const TgPortDesc export_image_inputs[] = {
  { .name = "image", .type = TG_TYPE_IMAGE, .label = N_("Image"),
    .help = N_("Colour to write; raw values clamped to 0..1 except in exr, no gamma applied") },
};

static int
export_image_eval (TgEvalCtx *c)
{
  const ExportImageParams *p = tg_eval_params (c);

  return quantise_and_write (c, tg_eval_input (c, 0), "image", 4, p->alpha ? 4 : 3, p->format,
                             p->compression, p->path);
}

static const TgNodeDesc export_image_desc = {
  .type = "export.image",
  .category = TG_CATEGORY_OUTPUT,
  .label = N_("Export image"),
  .help = N_("Writes a colour image as an RGBA (or RGB) PNG, 8 or 16 bits per channel, or a "
             "32-bit float OpenEXR"),
  TG_INPUTS (export_image_inputs),
  TG_PARAMS (ExportImageParams, export_image_params),
  .locality = TG_LOCALITY_LOCAL,
  .eval = export_image_eval,
  .flags = TG_NODE_EXPORT,
  /* 3: PNGs deflated in strips side by side: new bytes, the same pixels. */
  .version = 3,
};
TG_NODE_REGISTER (export_image_desc);

/* --- export.splat ------------------------------------------------------------------ */

/* unity:  PREFIX_0.png, PREFIX_1.png, ...: RGBA8, layers 0-3 in the first
 *         file's R, G, B, A, layers 4-7 in the second, ...; channels past
 *         the last layer are 0.  The order is the layers' order (the base
 *         layer first), as Unity's terrain layers are listed.
 * unreal: PREFIX_NAME.png, one 8-bit greyscale weight map per layer, named
 *         after it, for Unreal's landscape layer import.
 * Both: the weights of a pixel sum to exactly 255.
 *
 * size world: one pixel per world sample.  size pow2: Unity's alphamaps
 * (terrainData.alphamapResolution) are square powers of two, so the maps
 * are P x P with P the largest power of two not above the world's
 * samples (1025 -> 1024, 513 -> 512; 1024 stays 1024 and is written as
 * world), resampled from the whole world's lattice: a tile of a tiled
 * build cannot write it, and a world that is not square is refused. */

enum
{
  PRESET_UNITY,
  PRESET_UNREAL,
};

static const char *const splat_presets[] = { "unity", "unreal", NULL };

enum
{
  SIZE_WORLD,
  SIZE_POW2,
};

static const char *const splat_sizes[] = { "world", "pow2", NULL };

#define SPLAT_EXPORT_MAX 32

typedef struct
{
  const char *path;
  int preset;
  int size;
  int compression;
} ExportSplatParams;

static const TgParamDesc export_splat_params[] = {
  TG_PARAM_OUTPUT_PATH (ExportSplatParams, path, .label = N_("File prefix"), .def_s = "splat",
                        .help = N_("Start of the file names, relative to the output "
                                   "folder: unity writes PREFIX_0.png, PREFIX_1.png, "
                                   "...; unreal writes PREFIX_LAYER.png")),
  TG_PARAM_ENUM (ExportSplatParams, preset, .label = N_("Preset"), .def_s = "unity",
                 .choices = splat_presets,
                 .help = N_("unity: RGBA8 PNGs holding 4 layers each; unreal: one 8-bit greyscale "
                            "PNG per layer named after it")),
  TG_PARAM_ENUM (ExportSplatParams, size, .label = N_("Size"), .def_s = "world",
                 .choices = splat_sizes,
                 .help = N_("world: one pixel per world sample; pow2: square, the largest power "
                            "of two not above the world's samples (1025 gives 1024), resampled "
                            "for Unity's alphamaps; needs a square world and a whole (not "
                            "tiled) build")),
  TG__PARAM_PNG_COMPRESSION (ExportSplatParams),
};

static const TgPortDesc export_splat_inputs[] = {
  { .name = "layers", .type = TG_TYPE_LAYERS, .label = N_("Layers"),
    .help = N_("Weights to write (e.g. from Splat layers); each pixel is normalised and "
               "rounded so its weights add up to 255") },
};

typedef struct
{
  const TgValue *in;
  const TgRegion *region; /* the world samples read */
  int width, height;      /* of the maps written */
  int n;                  /* layers */
  int per_file;           /* layers per image: 4 (unity) or 1 (unreal) */
  int n_files;
  /* The band of rows being written: of image FILE, rows Y0 .. into DST. */
  int file, y0;
  uint8_t *dst;
  TgEvalCtx *c;
  /* Resampling (pow2): per map column, the world column left of it and
   * the weight of the one right of it; the same per map row. */
  const int *col_x0, *row_y0;
  const double *col_fx, *row_fy;
  /* The bytes of the layers past the first file's (n - per_file a
   * pixel), kept while the first file is written so that the others
   * copy them instead of quantising every pixel again; NULL: quantise. */
  uint8_t *rest;
} SplatQuantJob;

/* The N weights W clamped at 0 (NaN = 0) into S; returns their sum. */
static inline double
splat_clamp (const float *w, int n, double *s)
{
  double total = 0.0;

  for (int k = 0; k < n; k++)
    {
      s[k] = w[k] > 0.0f ? (double) w[k] : 0.0;
      total += s[k];
    }
  return total;
}

/* Weights summing to TOTAL say nothing (none, or an overflow): they
 * count as all layer 0. */
static inline bool
splat_none (double total)
{
  return !(total > 0.0) || !isfinite (total);
}

/* Largest-remainder rounding of the N clamped weights S (summing to
 * TOTAL; S is used up) to bytes summing to 255; all-zero weights go to
 * layer 0. */
static inline void
splat_quantise (double *s, int n, double total, uint8_t *q)
{
  int sum = 0;

  if (splat_none (total))
    {
      for (int k = 0; k < n; k++)
        q[k] = k == 0 ? 255 : 0;
      return;
    }
  /* One layer holding the whole sum (the others 0, or too small to move
   * it) gets 255 and the others floor (tiny * 255) = 0 with nothing left
   * to hand out: the general rule's bytes, without its divisions. */
  for (int k = 0; k < n; k++)
    if (s[k] == total)
      {
        for (int i = 0; i < n; i++)
          q[i] = i == k ? 255 : 0;
        return;
      }
  for (int k = 0; k < n; k++)
    {
      double f;
      s[k] = s[k] / total * 255.0;
      /* floor: 0 <= s[k] <= total, so the scaled weight is in 0..255
       * and truncation is floor. */
      f = (double) (int) s[k];
      q[k] = (uint8_t) f;
      sum += q[k];
      s[k] -= f; /* the remainder */
    }
  /* Hand out what is missing to the largest remainders, lower layers first
   * on ties; at most n - 1 units. */
  while (sum < 255)
    {
      int best = 0;
      for (int k = 1; k < n; k++)
        if (s[k] > s[best])
          best = k;
      q[best]++;
      s[best] = -1.0;
      sum++;
    }
}

/* Adds A times the weights W, normalised to sum to 1 as the quantiser
 * would (all-zero: all layer 0), to ACC. */
static inline void
splat_accumulate (const float *w, int n, double a, double *acc)
{
  double s[SPLAT_EXPORT_MAX], total = splat_clamp (w, n, s);

  if (splat_none (total))
    {
      acc[0] += a;
      return;
    }
  for (int k = 0; k < n; k++)
    acc[k] += a * (s[k] / total);
}

/* The weights of map pixel (I, J) into S (SPLAT_EXPORT_MAX of them);
 * returns their sum. */
static inline double
splat_pixel (const SplatQuantJob *job, int i, int j, double *s)
{
  const TgValue *in = job->in;
  int n = job->n;
  size_t dx = (size_t) (job->region->col0 - in->region.col0);
  int dy = job->region->row0 - in->region.row0;

  if (!job->col_x0)
    return splat_clamp (tg_value_row (in, dy + j) + (dx + (size_t) i) * (size_t) n, n, s);

  int x0 = job->col_x0[i], y0 = job->row_y0[j];
  int x1 = x0 + 1 < job->region->width ? x0 + 1 : x0;
  int y1 = y0 + 1 < job->region->height ? y0 + 1 : y0;
  double fx = job->col_fx[i], fy = job->row_fy[j], total = 0.0;
  const float *r0 = tg_value_row (in, dy + y0), *r1 = tg_value_row (in, dy + y1);

  memset (s, 0, sizeof *s * SPLAT_EXPORT_MAX);
  splat_accumulate (r0 + (dx + (size_t) x0) * (size_t) n, n, (1.0 - fx) * (1.0 - fy), s);
  splat_accumulate (r0 + (dx + (size_t) x1) * (size_t) n, n, fx * (1.0 - fy), s);
  splat_accumulate (r1 + (dx + (size_t) x0) * (size_t) n, n, (1.0 - fx) * fy, s);
  splat_accumulate (r1 + (dx + (size_t) x1) * (size_t) n, n, fx * fy, s);
  for (int k = 0; k < n; k++)
    total += s[k];
  return total;
}

/* Band rows [BEGIN, END) of image JOB->file: every layer of a pixel is
 * quantised (they share the 255), the file's own are kept; channels past
 * the last layer are 0. */
static void
splat_quant_rows (void *user, int begin, int end)
{
  const SplatQuantJob *job = user;
  int w = job->width, n = job->n, pf = job->per_file, k0 = job->file * pf, nr = n - pf;

  for (int r = begin; r < end; r++)
    for (int i = 0; i < w; i++)
      {
        double s[SPLAT_EXPORT_MAX];
        uint8_t q[SPLAT_EXPORT_MAX];
        size_t at = (size_t) (job->y0 + r) * (size_t) w + (size_t) i;
        uint8_t *px = job->dst + ((size_t) r * (size_t) w + (size_t) i) * (size_t) pf;
        if (job->rest && job->file > 0)
          {
            /* Layers k0 .. of the rest, which starts at layer pf. */
            const uint8_t *kept = job->rest + at * (size_t) nr - (size_t) pf;
            for (int ch = 0; ch < pf; ch++)
              px[ch] = k0 + ch < n ? kept[k0 + ch] : 0;
            continue;
          }
        double total = splat_pixel (job, i, job->y0 + r, s);
        splat_quantise (s, n, total, q);
        for (int ch = 0; ch < pf; ch++)
          px[ch] = k0 + ch < n ? q[k0 + ch] : 0;
        if (job->rest)
          memcpy (job->rest + at * (size_t) nr, q + pf, (size_t) nr);
      }
}

/* The writer's rows [Y, Y + N) of the image being written, quantised a
 * band at a time as it asks for them: the maps are never held whole. */
static int
splat_band (void *user, int y, int n, void *dst, TgError *err)
{
  SplatQuantJob *job = user;
  int rc;

  job->y0 = y;
  job->dst = dst;
  rc = tg_eval_parallel_part (job->c, n, tg__grain_rows (job->width), splat_quant_rows, job,
                              (job->file + (double) y / job->height) / job->n_files,
                              (job->file + (double) (y + n) / job->height) / job->n_files);
  return rc < 0 ? tg_error_set (err, rc, "", "%s", tg_strerror (rc)) : 0;
}

/* Map index I of SIZE over SAMPLES world samples, corner on corner: the
 * world sample at or left of it and the weight of the next, from
 * integers so every thread count and run sees the same numbers. */
static void
splat_axis (int size, int samples, int *x0, double *fx)
{
  for (int i = 0; i < size; i++)
    {
      int64_t num = (int64_t) i * (samples - 1);
      x0[i] = (int) (num / (size - 1));
      fx[i] = (double) (num % (size - 1)) / (double) (size - 1);
    }
}

/* The largest power of two not above N (N >= 1). */
static int
pow2_floor (int n)
{
  int p = 1;

  while (p <= n / 2)
    p *= 2;
  return p;
}

static int
export_splat_eval (TgEvalCtx *c)
{
  const ExportSplatParams *p = tg_eval_params (c);
  const TgRegion *region = tg_eval_region (c);
  const TgValue *in = tg_eval_input (c, 0);
  SplatQuantJob job = { 0 };
  int *axis_x0 = NULL;
  double *axis_fx = NULL;
  char prefix[1024], name[1200];
  int n_files, rc = 0;
  size_t len;

  if (!p->path || !p->path[0])
    return tg_eval_fail (c, TG_EMISSING, "params.path: %s", TG_MSG_NO_OUTPUT_PREFIX);
  if (!in || !in->data)
    return tg_eval_fail (c, TG_EMISSING, TG_MSG_INPUT_NO_DATA, "layers");
  if (in->channels < 1 || in->channels > SPLAT_EXPORT_MAX)
    return tg_eval_fail (c, TG_ETYPE, "input 'layers' has %d layers; 1 to %d can be exported",
                         in->channels, SPLAT_EXPORT_MAX);
  if (!tg_region_contains (&in->region, region))
    return tg_eval_fail (c, TG_EINVAL, TG_MSG_INPUT_NOT_COVERED, "layers");
  if (p->size == SIZE_POW2 && (region->col0 != 0 || region->row0 != 0
                               || region->width != region->full_w
                               || region->height != region->full_h))
    return tg_eval_fail (c, TG_EINVAL,
                         "params.size: pow2 resamples the whole world, and this is a %dx%d window "
                         "of it (a tile of a tiled build): build the world whole, or use size "
                         "world", region->width, region->height);
  if (p->size == SIZE_POW2 && region->full_w != region->full_h)
    return tg_eval_fail (c, TG_EINVAL,
                         "params.size: pow2 writes square maps for Unity, and this world's "
                         "lattice is %dx%d; make the world square, or use size world",
                         region->full_w, region->full_h);
  /* A ".png" the user typed is not part of the prefix. */
  len = strlen (p->path);
  if (len >= sizeof prefix)
    return tg_eval_fail (c, TG_EINVAL, "params.path: %s", TG_MSG_PATH_TOO_LONG);
  memcpy (prefix, p->path, len + 1);
  if (len > 4 && strcmp (prefix + len - 4, ".png") == 0)
    prefix[len - 4] = '\0';

  job.in = in;
  job.region = region;
  job.n = in->channels;
  job.per_file = p->preset == PRESET_UNITY ? 4 : 1;
  job.c = c;
  n_files = job.n_files = (job.n + job.per_file - 1) / job.per_file;
  if (p->preset == PRESET_UNREAL)
    for (int k = 0; k < job.n; k++)
      {
        const char *ln = in->channel_names ? in->channel_names[k] : NULL;
        if (!ln || !ln[0] || strchr (ln, '/') || strcmp (ln, "..") == 0 || strcmp (ln, ".") == 0)
          return tg_eval_fail (c, TG_EINVAL,
                               "layer %d has no name usable in a file name; the unreal preset "
                               "names files after layers", k);
        for (int q = 0; q < k; q++)
          if (in->channel_names[q] && strcmp (in->channel_names[q], ln) == 0)
            return tg_eval_fail (c, TG_EINVAL, "layers %d and %d are both named \"%s\"", q, k,
                                 ln);
      }
  job.width = region->width;
  job.height = region->height;
  if (p->size == SIZE_POW2 && pow2_floor (region->width) != region->width)
    {
      int size = pow2_floor (region->width);
      /* Columns' first, then rows'. */
      axis_x0 = malloc (sizeof *axis_x0 * 2 * (size_t) size);
      axis_fx = malloc (sizeof *axis_fx * 2 * (size_t) size);
      if (!axis_x0 || !axis_fx)
        rc = tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
      else
        {
          splat_axis (size, region->width, axis_x0, axis_fx);
          splat_axis (size, region->height, axis_x0 + size, axis_fx + size);
          job.col_x0 = axis_x0;
          job.col_fx = axis_fx;
          job.row_y0 = axis_x0 + size;
          job.row_fy = axis_fx + size;
        }
      job.width = job.height = size;
    }
  /* Under a quarter of the input's bytes (n - per_file bytes a pixel
   * against 4 n); without it every file quantises every layer again. */
  if (n_files > 1 && rc == 0)
    job.rest = malloc ((size_t) job.width * (size_t) job.height * (size_t) (job.n - job.per_file));
  for (int f = 0; f < n_files && rc == 0; f++)
    {
      TgImageRows rows = { .width = job.width, .height = job.height, .channels = job.per_file,
                           .bits = 8, .rows = splat_band, .user = &job };
      /* For the manifest: which layer each channel holds. */
      char unnamed[4][32];
      const char *layers[4];
      for (int ch = 0; ch < job.per_file; ch++)
        {
          int k = f * job.per_file + ch;
          const char *ln = k < job.n && in->channel_names ? in->channel_names[k] : NULL;
          snprintf (unnamed[ch], sizeof unnamed[ch], "layer %d", k);
          layers[ch] = k >= job.n ? "" : (ln && ln[0] ? ln : unnamed[ch]);
        }
      if (p->preset == PRESET_UNITY)
        snprintf (name, sizeof name, "%s_%d.png", prefix, f);
      else
        snprintf (name, sizeof name, "%s_%s.png", prefix, in->channel_names[f]);
      job.file = f;
      /* The writer records its own message (naming the path) on failure. */
      rc = tg_eval_write_image_rows_named (c, name, tg__png_writer ("png8", p->compression),
                                           &rows, false, layers);
    }
  free (job.rest);
  free (axis_x0);
  free (axis_fx);
  return rc;
}

static const TgNodeDesc export_splat_desc = {
  .type = "export.splat",
  .category = TG_CATEGORY_OUTPUT,
  .label = N_("Export splat maps"),
  .help = N_("Writes texture layer weights as splat maps for Unity (RGBA, 4 layers a file, "
             "optionally at a power-of-two size) or Unreal (one weight map per layer); each "
             "pixel's weights add up to 255"),
  TG_INPUTS (export_splat_inputs),
  TG_PARAMS (ExportSplatParams, export_splat_params),
  .locality = TG_LOCALITY_LOCAL,
  .eval = export_splat_eval,
  .flags = TG_NODE_EXPORT,
  /* 3: PNGs deflated in strips side by side: new bytes, the same pixels. */
  .version = 3,
};
TG_NODE_REGISTER (export_splat_desc);
