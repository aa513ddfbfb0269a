/* Node types that exist only in the engine tests: small, exactly
 * predictable kernels that exercise locality, caching, failure, cancel and
 * export without depending on the real node families. */
#ifndef TEST_NODES_H
#define TEST_NODES_H

#include <stdatomic.h>
#include <string.h>

#include <tgraph/tgraph.h>

static atomic_int test_coord_evals;

typedef struct
{
  double scale;
  int steps;
} CoordParams;

static const TgParamDesc coord_params[] = {
  TG_PARAM_FLOAT (CoordParams, scale, .label = "Scale", .def = 1.0, .min = 0.0, .max = 100.0,
                  .help = "Multiplier"),
  TG_PARAM_INT (CoordParams, steps, .label = "Steps", .def = 4, .min = 1, .max = 16,
                .help = "Unused; range checks"),
};
static const TgPortDesc height_out[] = { { "height", TG_TYPE_HEIGHT, "Height", false, NULL } };
static const TgPortDesc image_out[] = { { "image", TG_TYPE_IMAGE, "Image", false, NULL } };
static const TgPortDesc height_in[] = { { "height", TG_TYPE_HEIGHT, "Height", false, NULL } };
static const TgPortDesc image_in[] = { { "image", TG_TYPE_IMAGE, "Image", false, NULL } };

typedef struct
{
  TgEvalCtx *c;
  TgValue *out;
  const TgValue *in;
  double scale;
} RowJob;

static void
coord_rows (void *user, int begin, int end)
{
  RowJob *j = user;
  const TgRegion *r = &j->out->region;
  for (int y = begin; y < end; y++)
    {
      float *row = tg_value_row (j->out, y);
      for (int x = 0; x < r->width; x++)
        {
          double wx = tg_region_x (r, x), wz = tg_region_z (r, y);
          row[x] = (float) (j->scale * (0.001 * wx + 0.0001 * wz)
                            + tg_hash_unit (tg_hash2 (7, r->col0 + x, r->row0 + y)));
        }
    }
}

static int
coord_eval (TgEvalCtx *c)
{
  const CoordParams *p = tg_eval_params (c);
  RowJob j = { c, tg_eval_new_output (c, 0, 1), NULL, p->scale };
  atomic_fetch_add (&test_coord_evals, 1);
  return tg_eval_parallel (c, tg_eval_region (c)->height, 3, coord_rows, &j);
}

static const TgNodeDesc test_coord = {
  .type = "test.coord", .category = TG_CATEGORY_OTHER, .label = "Coordinates",
  .outputs = height_out, .n_outputs = 1,
  TG_PARAMS (CoordParams, coord_params), .locality = TG_LOCALITY_LOCAL, .eval = coord_eval,
};
TG_NODE_REGISTER (test_coord);

typedef struct
{
  double amount;
} AddParams;
static const TgParamDesc add_params[] = {
  TG_PARAM_FLOAT (AddParams, amount, .label = "Amount", .def = 1.0, .min = -10.0, .max = 10.0,
                  .help = "Added"),
};

static int
add_eval (TgEvalCtx *c)
{
  const AddParams *p = tg_eval_params (c);
  const TgValue *in = tg_eval_input (c, 0);
  TgValue *out = tg_eval_new_output (c, 0, 1);
  size_t n = tg_region_samples (&out->region);
  for (size_t i = 0; i < n; i++)
    out->data[i] = in->data[i] + (float) p->amount;
  return 0;
}

static const TgNodeDesc test_add = {
  .type = "test.add", .category = TG_CATEGORY_OTHER, .label = "Add",
  .inputs = height_in, .n_inputs = 1, .outputs = height_out, .n_outputs = 1,
  TG_PARAMS (AddParams, add_params), .locality = TG_LOCALITY_LOCAL, .eval = add_eval,
};
TG_NODE_REGISTER (test_add);

/* 3x3 box average: needs one sample of border. */
static int
blur_apron (const void *params, double cell)
{
  return 1;
}

static int
blur_eval (TgEvalCtx *c)
{
  const TgValue *in = tg_eval_input (c, 0);
  TgValue *out = tg_eval_new_output (c, 0, 1);
  const TgRegion *r = &out->region;
  for (int y = 0; y < r->height; y++)
    for (int x = 0; x < r->width; x++)
      {
        float s = 0;
        for (int dy = -1; dy <= 1; dy++)
          for (int dx = -1; dx <= 1; dx++)
            {
              int ix = r->col0 + x + dx - in->region.col0, iy = r->row0 + y + dy - in->region.row0;
              s += tg_value_row (in, iy)[ix];
            }
        tg_value_row (out, y)[x] = s / 9.0f;
      }
  return 0;
}

static const TgNodeDesc test_blur = {
  .type = "test.blur", .category = TG_CATEGORY_OTHER, .label = "Blur",
  .inputs = height_in, .n_inputs = 1, .outputs = height_out, .n_outputs = 1,
  .locality = TG_LOCALITY_APRON, .apron = blur_apron, .eval = blur_eval,
};
TG_NODE_REGISTER (test_blur);

/* test.blur with the world's edge closed: neighbours beyond it repeat the
 * edge sample, so no sample beyond the world is read.  Its apron is far
 * larger than it needs (300 cells, as a long-running thermal erosion's),
 * and it declares TG_NODE_APRON_IN_WORLD: its eval fails unless its input
 * is exactly its region grown by 300 and cut at the world's edge. */
static int
edge_box_apron (const void *params, double cell)
{
  (void) params;
  (void) cell;
  return 300;
}

static int
edge_box_eval (TgEvalCtx *c)
{
  const TgValue *in = tg_eval_input (c, 0);
  TgValue *out;
  TgRegion want = tg_region_grow (tg_eval_region (c), 300);

  want = tg_region_clip (&want);
  if (!in || !tg_region_equal (&in->region, &want))
    return tg_eval_fail (c, TG_EINVAL, "input %dx%d at %d,%d, not the clipped apron %dx%d at %d,%d",
                         in ? in->region.width : 0, in ? in->region.height : 0,
                         in ? in->region.col0 : 0, in ? in->region.row0 : 0, want.width,
                         want.height, want.col0, want.row0);
  if (!(out = tg_eval_new_output (c, 0, 1)))
    return tg_eval_fail (c, TG_ENOMEM, "out of memory");
  for (int y = 0; y < out->region.height; y++)
    for (int x = 0; x < out->region.width; x++)
      {
        float s = 0;
        for (int dy = -1; dy <= 1; dy++)
          for (int dx = -1; dx <= 1; dx++)
            {
              int gx = out->region.col0 + x + dx, gy = out->region.row0 + y + dy;
              gx = gx < 0 ? 0 : gx >= in->region.full_w ? in->region.full_w - 1 : gx;
              gy = gy < 0 ? 0 : gy >= in->region.full_h ? in->region.full_h - 1 : gy;
              s += tg_value_row (in, gy - in->region.row0)[gx - in->region.col0];
            }
        tg_value_row (out, y)[x] = s / 9.0f;
      }
  return 0;
}

static const TgNodeDesc test_edge_box = {
  .type = "test.edge_box", .category = TG_CATEGORY_OTHER, .label = "Edge box",
  TG_INPUTS (height_in), TG_OUTPUTS (height_out),
  .locality = TG_LOCALITY_APRON, .apron = edge_box_apron, .eval = edge_box_eval,
  .flags = TG_NODE_APRON_IN_WORLD,
};
TG_NODE_REGISTER (test_edge_box);

/* test.blur again, as an area filter through tg_eval_map_area_rows. */
static void
box_row (const void *job, const TgRegion *r, int j, const TgValue *const *in, float *out)
{
  (void) job;
  for (int x = 0; x < r->width; x++)
    {
      float s = 0;
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
          {
            int ix = r->col0 + x + dx - in[0]->region.col0;
            int iy = r->row0 + j + dy - in[0]->region.row0;
            s += tg_value_row (in[0], iy)[ix];
          }
      out[x] = s / 9.0f;
    }
}

static int
box_eval (TgEvalCtx *c)
{
  return tg_eval_map_area_rows (c, 1, 1, box_row, NULL);
}

static const TgNodeDesc test_box = {
  .type = "test.box", .category = TG_CATEGORY_OTHER, .label = "Box",
  TG_INPUTS (height_in), TG_OUTPUTS (height_out),
  .locality = TG_LOCALITY_APRON, .apron = blur_apron, .eval = box_eval,
};
TG_NODE_REGISTER (test_box);

/* A point filter through tg_eval_map_rows: height + 10 * detail, the
 * optional detail counting 0 while unlinked, and the row's index in a
 * second channel. */
static const TgPortDesc mix_in[] = {
  { "height", TG_TYPE_HEIGHT, "Height", false, NULL },
  { "detail", TG_TYPE_HEIGHT, "Detail", true, NULL },
};
static const TgPortDesc mix_out[] = { { "height", TG_TYPE_HEIGHT, "Height", false, NULL } };

static void
mix_row (const void *job, const TgRegion *r, int j, const float *const *in, float *out)
{
  (void) job;
  for (int x = 0; x < r->width; x++)
    {
      out[2 * x] = in[0][x] + (in[1] ? 10.0f * in[1][x] : 0.0f);
      out[2 * x + 1] = (float) j;
    }
}

static int
mix_eval (TgEvalCtx *c)
{
  return tg_eval_map_rows (c, 2, mix_row, NULL);
}

static const TgNodeDesc test_mix = {
  .type = "test.mix", .category = TG_CATEGORY_OTHER, .label = "Mix",
  TG_INPUTS (mix_in), TG_OUTPUTS (mix_out),
  .locality = TG_LOCALITY_LOCAL, .eval = mix_eval,
};
TG_NODE_REGISTER (test_mix);

/* Subtracts the whole map's mean: a global node. */
static int
center_eval (TgEvalCtx *c)
{
  const TgValue *in = tg_eval_input (c, 0);
  TgValue *out = tg_eval_new_output (c, 0, 1);
  size_t n = tg_region_samples (&out->region);
  double s = 0;
  if (out->region.width != out->region.full_w || out->region.col0 != 0)
    return tg_eval_fail (c, TG_EEVAL, "global node got a partial region");
  for (size_t i = 0; i < n; i++)
    s += in->data[i];
  for (size_t i = 0; i < n; i++)
    out->data[i] = in->data[i] - (float) (s / (double) n);
  return 0;
}

static const TgNodeDesc test_center = {
  .type = "test.center", .category = TG_CATEGORY_OTHER, .label = "Center",
  .inputs = height_in, .n_inputs = 1, .outputs = height_out, .n_outputs = 1,
  .locality = TG_LOCALITY_GLOBAL, .eval = center_eval,
};
TG_NODE_REGISTER (test_center);

static int
fail_eval (TgEvalCtx *c)
{
  return tg_eval_fail (c, TG_EEVAL, "the test node always fails");
}

static const TgNodeDesc test_fail = {
  .type = "test.fail", .category = TG_CATEGORY_OTHER, .label = "Fail",
  .inputs = height_in, .n_inputs = 1, .outputs = height_out, .n_outputs = 1,
  .locality = TG_LOCALITY_LOCAL, .eval = fail_eval,
};
TG_NODE_REGISTER (test_fail);

/* Spins per row so a cancel arrives mid-node. */
static void
slow_rows (void *user, int begin, int end)
{
  RowJob *j = user;
  for (int y = begin; y < end; y++)
    {
      float *row = tg_value_row (j->out, y);
      for (int x = 0; x < j->out->region.width; x++)
        {
          float v = 0;
          for (int k = 0; k < 2000; k++)
            v += tg_hash_unit (tg_hash3 (1, x, y, k));
          row[x] = v;
        }
    }
}

static int
slow_eval (TgEvalCtx *c)
{
  RowJob j = { c, tg_eval_new_output (c, 0, 1), NULL, 0 };
  return tg_eval_parallel (c, tg_eval_region (c)->height, 1, slow_rows, &j);
}

static const TgNodeDesc test_slow = {
  .type = "test.slow", .category = TG_CATEGORY_OTHER, .label = "Slow",
  .outputs = height_out, .n_outputs = 1, .locality = TG_LOCALITY_LOCAL, .eval = slow_eval,
};
TG_NODE_REGISTER (test_slow);

static int
to_image_eval (TgEvalCtx *c)
{
  TgValue *out = tg_eval_new_output (c, 0, 4);
  memset (out->data, 0, tg_region_samples (&out->region) * 4 * sizeof (float));
  return 0;
}

static const TgNodeDesc test_image = {
  .type = "test.image", .category = TG_CATEGORY_OTHER, .label = "Image",
  .outputs = image_out, .n_outputs = 1, .locality = TG_LOCALITY_LOCAL, .eval = to_image_eval,
};
TG_NODE_REGISTER (test_image);

static const TgNodeDesc test_image_sink = {
  .type = "test.image_in", .category = TG_CATEGORY_OTHER, .label = "Image in",
  .inputs = image_in, .n_inputs = 1, .outputs = height_out, .n_outputs = 1,
  .locality = TG_LOCALITY_LOCAL, .eval = to_image_eval,
};
TG_NODE_REGISTER (test_image_sink);

/* Writes the height as 8-bit through the "testfmt" writer. */
typedef struct
{
  const char *path;
} SinkParams;
static const TgParamDesc sink_params[] = {
  TG_PARAM_OUTPUT_PATH (SinkParams, path, .label = "Path", .def_s = "out.bin", .help = "File"),
};

static int
sink_eval (TgEvalCtx *c)
{
  const SinkParams *p = tg_eval_params (c);
  const TgValue *in = tg_eval_input (c, 0);
  TgImage img = { .width = in->region.width, .height = in->region.height, .channels = 1, .bits = 8 };
  size_t n = tg_region_samples (&in->region);
  int rc;
  unsigned char *px = malloc (n);
  if (px == NULL)
    return tg_eval_fail (c, TG_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++)
    px[i] = (unsigned char) (in->data[i] < 0 ? 0 : in->data[i] > 1 ? 255 : in->data[i] * 255 + 0.5f);
  img.data = px;
  rc = tg_eval_write_image (c, p->path, "testfmt", &img);
  free (px);
  return rc;
}

static const TgNodeDesc test_sink = {
  .type = "test.sink", .category = TG_CATEGORY_OTHER, .label = "Sink",
  .inputs = height_in, .n_inputs = 1,
  TG_PARAMS (SinkParams, sink_params), .locality = TG_LOCALITY_LOCAL, .eval = sink_eval,
  .flags = TG_NODE_EXPORT,
};
TG_NODE_REGISTER (test_sink);

/* A list parameter: constant output = sum of the items' weights. */
typedef struct
{
  const char *name;
  double weight;
  double color[4];
} PaletteItem;

static const TgParamDesc palette_item_params[] = {
  TG_PARAM_STRING (PaletteItem, name, .label = "Name", .def_s = "item", .help = "Item name"),
  TG_PARAM_FLOAT (PaletteItem, weight, .label = "Weight", .def = 1.0, .min = 0.0, .max = 10.0,
                  .help = "Weight"),
  TG_PARAM_COLOR (PaletteItem, color, .label = "Colour", .def_v = { 1, 0, 0, 1 }, .help = "Colour"),
};

typedef struct
{
  TgList entries;
} PaletteParams;

static const TgParamDesc palette_params[] = {
  TG_PARAM_LIST (PaletteParams, entries, PaletteItem, palette_item_params, .label = "Entries",
                 .def_s = "name=grass|weight=0.25|color=#00ff00; name=rock", .min = 0, .max = 4,
                 .help = "Palette"),
};

static int
palette_eval (TgEvalCtx *c)
{
  const PaletteParams *p = tg_eval_params (c);
  const PaletteItem *items = p->entries.items;
  TgValue *out = tg_eval_new_output (c, 0, 1);
  float s = 0;
  for (int i = 0; i < p->entries.n; i++)
    s += (float) items[i].weight;
  for (uint64_t i = 0; i < tg_region_samples (&out->region); i++)
    out->data[i] = s;
  return 0;
}

static const TgNodeDesc test_palette = {
  .type = "test.palette", .category = TG_CATEGORY_OTHER, .label = "Palette",
  .outputs = height_out, .n_outputs = 1,
  TG_PARAMS (PaletteParams, palette_params), .locality = TG_LOCALITY_LOCAL, .eval = palette_eval,
};
TG_NODE_REGISTER (test_palette);

/* Reads files named by its parameter (through input_files only). */
typedef struct
{
  const char *stem;
} FilesParams;

static const TgParamDesc files_params[] = {
  TG_PARAM_STRING (FilesParams, stem, .label = "Stem", .def_s = "data",
                   .help = "Files STEM_1 and STEM_2"),
};

static void
files_input_files (const void *params, void (*add) (void *user, const char *path), void *user)
{
  const FilesParams *p = params;
  char name[256];
  for (int k = 1; k <= 2; k++)
    {
      snprintf (name, sizeof name, "%s_%d", p->stem, k);
      add (user, name);
    }
}

static const TgNodeDesc test_files = {
  .type = "test.files", .category = TG_CATEGORY_OTHER, .label = "Files",
  .outputs = height_out, .n_outputs = 1,
  TG_PARAMS (FilesParams, files_params), .locality = TG_LOCALITY_LOCAL, .eval = to_image_eval,
  .input_files = files_input_files,
};
TG_NODE_REGISTER (test_files);

/* A pass-through with a size in metres: its warn hook flags a size below
 * two cells, and its eval warns itself about sizes over a kilometre. */
typedef struct
{
  double size_m;
} WarnParams;
static const TgParamDesc warn_params[] = {
  TG_PARAM_FLOAT (WarnParams, size_m, .label = "Size", .def = 100.0, .min = 0.0, .max = 1e5,
                  .unit = "m", .help = "A feature size"),
};

static int
warn_hook (const void *params, double cell_m, TgError *warn)
{
  const WarnParams *p = params;
  return tg_warn_below_cells (warn, "size_m", "Size", p->size_m, cell_m, 2);
}

static int
warn_eval (TgEvalCtx *c)
{
  const WarnParams *p = tg_eval_params (c);
  const TgValue *in = tg_eval_input (c, 0);
  TgValue *out = tg_eval_new_output (c, 0, 1);
  memcpy (out->data, in->data, tg_region_samples (&out->region) * sizeof (float));
  if (p->size_m > 1000.0)
    tg_eval_warn (c, "size %g m is over a kilometre", p->size_m);
  return 0;
}

static const TgNodeDesc test_warn = {
  .type = "test.warn", .category = TG_CATEGORY_OTHER, .label = "Warn",
  TG_INPUTS (height_in), TG_OUTPUTS (height_out),
  TG_PARAMS (WarnParams, warn_params), .locality = TG_LOCALITY_LOCAL, .eval = warn_eval,
  .warn = warn_hook,
};
TG_NODE_REGISTER (test_warn);

/* Two outputs, the second made only when something reads it
 * (tg_eval_output_wanted): height + 1 and 2 x height. */
static atomic_int test_split_evals, test_split_doubles, test_split_heights;
static const TgPortDesc split_out[] = {
  { "height", TG_TYPE_HEIGHT, "Height", false, NULL },
  { "double", TG_TYPE_HEIGHT, "Double", false, NULL },
};

static int
split_eval (TgEvalCtx *c)
{
  const TgValue *in = tg_eval_input (c, 0);
  const TgRegion *r = tg_eval_region (c);
  TgValue *one = tg_eval_output_wanted (c, 0) ? tg_eval_new_output (c, 0, 1) : NULL;
  TgValue *two = tg_eval_output_wanted (c, 1) ? tg_eval_new_output (c, 1, 1) : NULL;

  atomic_fetch_add (&test_split_evals, 1);
  if (two)
    atomic_fetch_add (&test_split_doubles, 1);
  if (one)
    atomic_fetch_add (&test_split_heights, 1);
  for (int y = 0; y < r->height; y++)
    for (int x = 0; x < r->width; x++)
      {
        float h = tg_value_row (in, r->row0 - in->region.row0 + y)[r->col0 - in->region.col0 + x];
        if (one)
          tg_value_row (one, y)[x] = h + 1.0f;
        if (two)
          tg_value_row (two, y)[x] = 2.0f * h;
      }
  return 0;
}

static const TgNodeDesc test_split = {
  .type = "test.split", .category = TG_CATEGORY_OTHER, .label = "Split",
  TG_INPUTS (height_in), TG_OUTPUTS (split_out),
  .locality = TG_LOCALITY_LOCAL, .eval = split_eval,
};
TG_NODE_REGISTER (test_split);

static inline int
testfmt_write (FILE *f, const TgImage *img, TgError *err)
{
  if (fwrite (img->data, 1, tg_image_bytes (img), f) != tg_image_bytes (img))
    return tg_error_set (err, TG_EIO, NULL, "short write");
  return 0;
}

#endif
