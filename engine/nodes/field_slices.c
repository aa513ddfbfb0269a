/* field.slices: a volume from a stack of greyscale slices (CT or MRI scans,
 * sculpted layers), sampled trilinearly as a field.
 *
 * The node reads the first slice's file and the ones whose names count on
 * from it (ct_000.png, ct_001.png, ...), through the image readers that
 * formats/ registers; slice k lies at height min_m.y + k * spacing_m.  In
 * each slice row 0 is north (+Z maximum) and column 0 west (-X minimum),
 * the project's image convention.  The field is threshold - value (grey
 * levels in 0..1, not metres), negative where the scan is brighter than
 * the threshold (or darker, inverted).  One ring of empty voxels around
 * the stack closes the surface where the scan is cut off.
 */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/tgraph.h>

#include "fields.h"

#define SLICES_MAX 8192

typedef struct
{
  const char *path;
  int count;
  double spacing_m;
  double pixel_m;
  double min_m[3];
  double threshold;
  bool invert;
} SlicesParams;

static const TgParamDesc slices_params[] = {
  TG_PARAM_INPUT_PATH (SlicesParams, path, .label = N_("First slice"),
                       .help = N_("The bottom slice's image (greyscale PNG, 8 or 16 "
                                  "bits); the others are the files whose number at the "
                                  "end of the name counts up from it, e.g. ct_000.png, "
                                  "ct_001.png. Relative to the graph file's folder")),
  TG_PARAM_INT (SlicesParams, count, .label = N_("Slices"), .def = 1, .min = 1, .max = SLICES_MAX,
                .help = N_("Number of slices in the stack")),
  TG_PARAM_FLOAT (SlicesParams, spacing_m, .label = N_("Slice spacing"), .def = 1.0, .min = 1e-6,
                  .max = 1e6, .soft_min = 0.01, .soft_max = 100.0, .unit = "m",
                  .help = N_("Distance between slices (along y), in metres")),
  TG_PARAM_FLOAT (SlicesParams, pixel_m, .label = N_("Pixel size"), .def = 1.0, .min = 1e-6,
                  .max = 1e6, .soft_min = 0.01, .soft_max = 100.0, .unit = "m",
                  .help = N_("Distance between pixel centres within a slice (x and z), in metres")),
  TG_PARAM_VEC3 (SlicesParams, min_m, .label = N_("Position"), .def_v = { 0.0, 0.0, 0.0 },
                 .unit = "m",
                 .help = N_("Where the bottom slice's south-west pixel sits (x, y, z), in metres")),
  TG_PARAM_FLOAT (SlicesParams, threshold, .label = N_("Threshold"), .def = 0.5, .min = 0.0,
                  .max = 1.0, .help = N_("Grey level of the surface, 0 = black, 1 = white")),
  TG_PARAM_BOOL (SlicesParams, invert, .label = N_("Dark is solid"), .def = false,
                 .help = N_("Treat pixels darker than the threshold as solid instead of brighter")),
};

static const TgPortDesc slices_out[] = {
  { .name = "field", .type = TG_TYPE_FIELD, .label = N_("Field"),
    .help = N_("Threshold minus the scan's grey level, negative inside") },
};

typedef struct
{
  float *v;          /* solidness in 0..1, w * h * n, slice by slice, row 0 north */
  int w, h, n;
  TgVolume vol;      /* v as a volume: x east, y up the stack, z north */
} Slices;

static void
slices_free (void *p)
{
  Slices *s = p;

  free (s->v);
  free (s);
}

static void
slices_field_eval (const TgField *f, int n, const float *x, const float *y, const float *z,
                   float *out)
{
  const Slices *s = f->data;

  tg__volume_eval (&s->vol, n, x, y, z, out);
}

/* The mesher's grid path: a grid on the voxels is read straight. */
static int
slices_field_grid (const TgField *f, const TgFieldGrid *g, float *out, size_t sy, size_t sz,
                   TgFieldScratch *scratch)
{
  const Slices *s = f->data;

  (void) scratch;
  return tg__volume_grid (&s->vol, g, out, sy, sz);
}

/* The mesher's view: the voxels read where they lie. */
static int
slices_field_view (const TgField *f, const TgFieldGrid *g, TgFieldView *view)
{
  const Slices *s = f->data;

  return tg__volume_view (&s->vol, g, view);
}

/* PATH with the number ending its file name advanced by K, same width:
 * "ct/s_009.png" + 1 -> "ct/s_010.png".  NULL when there is no number. */
static char *
slice_path (const char *path, int k)
{
  const char *base = strrchr (path, '/');
  const char *end = NULL, *start;
  char *out;
  unsigned long long num;
  int width;
  size_t len;

  base = base ? base + 1 : path;
  for (const char *p = base; *p; p++)
    if (isdigit ((unsigned char) *p))
      end = p + 1;
  if (end == NULL)
    return NULL;
  start = end;
  while (start > base && isdigit ((unsigned char) start[-1]))
    start--;
  width = (int) (end - start);
  if (width > 18)
    return NULL;
  num = strtoull (start, NULL, 10) + (unsigned long long) k;
  len = strlen (path) + 32;
  out = malloc (len);
  if (out == NULL)
    return NULL;
  snprintf (out, len, "%.*s%0*llu%s", (int) (start - path), path, width, num, end);
  return out;
}

static float
pixel01 (const TgImage *img, size_t idx)
{
  size_t k = idx * (size_t) img->channels;
  double r, g, b, full;

  switch (img->bits)
    {
    case 8:
      {
        const uint8_t *p = (const uint8_t *) img->data + k;
        r = p[0], g = img->channels >= 3 ? p[1] : r, b = img->channels >= 3 ? p[2] : r;
        full = 255.0;
      }
      break;
    case 16:
      {
        const uint16_t *p = (const uint16_t *) img->data + k;
        r = p[0], g = img->channels >= 3 ? p[1] : r, b = img->channels >= 3 ? p[2] : r;
        full = 65535.0;
      }
      break;
    default:
      {
        const float *p = (const float *) img->data + k;
        r = p[0], g = img->channels >= 3 ? p[1] : r, b = img->channels >= 3 ? p[2] : r;
        full = 1.0;
      }
      break;
    }
  if (!(r == g && g == b))
    r = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return (float) (r / full);
}

static int
slices_eval (TgEvalCtx *c)
{
  const SlicesParams *p = tg_eval_params (c);
  Slices *s = calloc (1, sizeof *s);
  double lip;
  TgField *f;
  int rc = 0;

  if (s == NULL)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  if (p->count > 1)
    {
      char *probe = slice_path (p->path, 1);
      if (probe == NULL)
        {
          slices_free (s);
          return tg_eval_fail (c, TG_EINVAL,
                               "params.path: \"%s\" has no number at the end of its name to "
                               "count the other %d slices from",
                               p->path, p->count - 1);
        }
      free (probe);
    }
  s->n = p->count;
  for (int k = 0; k < p->count && rc == 0; k++)
    {
      char *name = k == 0 ? strdup (p->path) : slice_path (p->path, k);
      const TgImage *img = NULL;

      if (name == NULL)
        {
          rc = tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
          break;
        }
      rc = tg_eval_load_image (c, name, &img);
      if (rc == 0 && k == 0)
        {
          s->w = img->width;
          s->h = img->height;
          s->v = malloc (sizeof (float) * (size_t) s->w * (size_t) s->h * (size_t) s->n);
          if (s->v == NULL)
            rc = tg_eval_fail (c, TG_ENOMEM, "cannot hold %d slices of %dx%d", s->n, s->w,
                               s->h);
        }
      else if (rc == 0 && (img->width != s->w || img->height != s->h))
        rc = tg_eval_fail (c, TG_EINVAL, TG_MSG_SLICE_SIZE, k, name, img->width, img->height, s->w,
                           s->h);
      if (rc == 0)
        {
          float *dst = s->v + (size_t) k * (size_t) s->w * (size_t) s->h;
          size_t np = (size_t) s->w * (size_t) s->h;

          for (size_t q = 0; q < np; q++)
            {
              float v = pixel01 (img, q);
              dst[q] = p->invert ? 1.0f - v : v;
            }
        }
      free (name);
    }
  if (rc < 0)
    {
      slices_free (s);
      return rc;
    }

  /* Voxel (i, j, k): column i, slice j, row h - 1 - k (rows run north
   * to south, z south to north). */
  s->vol = (TgVolume) {
    .v = s->v + (size_t) (s->h - 1) * (size_t) s->w,
    .st = { 1, (ptrdiff_t) s->w * s->h, -(ptrdiff_t) s->w },
    .n = { s->w, s->n, s->h },
    .org = { (float) p->min_m[0], (float) p->min_m[1], (float) p->min_m[2] },
    .inv = { (float) (1.0 / p->pixel_m), (float) (1.0 / p->spacing_m),
             (float) (1.0 / p->pixel_m) },
    .level = (float) (p->invert ? 1.0 - p->threshold : p->threshold),
  };
  /* The trilinear field's steepest cell, the padding included. */
  lip = tg__volume_scan (&s->vol, true);

  f = tg__field_new (slices_field_eval, s, slices_free);
  if (f == NULL)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  f->eval_grid = slices_field_grid;
  f->grid_cheap = true;
  f->view = slices_field_view;
  /* A flat stack (all one value) has L = 0, "unknown"; any tiny bound
   * would do, the mesher then skips all of it. */
  f->lipschitz = (float) (lip * 1.001 + 1e-6);
  f->bounded = s->vol.level > 0.0f;
  f->min[0] = (float) (p->min_m[0] - p->pixel_m);
  f->min[1] = (float) (p->min_m[1] - p->spacing_m);
  f->min[2] = (float) (p->min_m[2] - p->pixel_m);
  f->max[0] = (float) (p->min_m[0] + p->pixel_m * s->w);
  f->max[1] = (float) (p->min_m[1] + p->spacing_m * s->n);
  f->max[2] = (float) (p->min_m[2] + p->pixel_m * s->h);
  return tg__field_output (c, f);
}

/* Every slice after the first joins the cache key (the first is the path
 * parameter), so editing any slice recomputes the volume. */
static void
slices_input_files (const void *params, void (*add) (void *user, const char *path), void *user)
{
  const SlicesParams *p = params;

  for (int k = 1; p->path && k < p->count; k++)
    {
      char *name = slice_path (p->path, k);
      if (name)
        add (user, name);
      free (name);
    }
}

static const TgNodeDesc slices_desc = {
  .type = "field.slices",
  .category = TG_CATEGORY_FIELDS,
  .label = N_("Slice Stack"),
  .help = N_("A volume from a stack of greyscale images (CT scans, layered masks), sampled "
             "trilinearly; the surface is where the grey level crosses the threshold"),
  TG_OUTPUTS (slices_out),
  TG_PARAMS (SlicesParams, slices_params),
  .locality = TG_LOCALITY_GLOBAL,
  .flags = TG_NODE_INPUT,
  .eval = slices_eval,
  .input_files = slices_input_files,
  .version = 1,
};
TG_NODE_REGISTER (slices_desc);
