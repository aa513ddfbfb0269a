/* Node types that exist only in the formats tests: one with a parameter
 * of every TgParamType (so the loader, the saver and the schema are
 * checked for each whatever the real catalogue holds), an image source
 * (for type-mismatch links) and an export that writes a file and then
 * fails (for the all-or-nothing build). */
#ifndef FMT_TEST_NODES_H
#define FMT_TEST_NODES_H

#include <stdlib.h>

#include <tgraph/tgraph.h>

typedef struct
{
  const char *name;
  double weight;
  double tint[4];
} TestAllItem;

static const TgParamDesc test_all_item_params[] = {
  TG_PARAM_STRING (TestAllItem, name, .label = "Name", .def_s = "layer", .help = "Item name"),
  TG_PARAM_FLOAT (TestAllItem, weight, .label = "Weight", .def = 1, .min = 0, .max = 10,
                  .help = "Item weight"),
  TG_PARAM_COLOR (TestAllItem, tint, .label = "Tint", .def_v = { 1, 1, 1, 1 },
                  .help = "Item colour"),
};

typedef struct
{
  double f;
  int i;
  bool b;
  int e;
  int seed;
  const char *s;
  double v2[2];
  double v3[3];
  double col[4];
  TgCurve curve;
  TgList items;
} TestAllParams;

static const char *const test_all_choices[] = { "alpha", "beta", "gamma", NULL };
static const double test_all_curve[] = { 0, 0, 0.5, 0.25, 1, 1 };

static const TgParamDesc test_all_params[] = {
  TG_PARAM_FLOAT (TestAllParams, f, .label = "F", .def = 0.25, .min = -10, .max = 10, .unit = "m",
                  .help = "A float"),
  TG_PARAM_INT (TestAllParams, i, .label = "I", .def = 3, .min = 1, .max = 16, .help = "An int"),
  TG_PARAM_BOOL (TestAllParams, b, .label = "B", .def = false, .help = "A bool"),
  TG_PARAM_ENUM (TestAllParams, e, .label = "E", .def_s = "beta", .choices = test_all_choices,
                 .help = "An enum"),
  TG_PARAM_SEED (TestAllParams, seed, .label = "Seed", .help = "A seed"),
  TG_PARAM_STRING (TestAllParams, s, .label = "S", .def_s = "hello", .help = "A string"),
  TG_PARAM_VEC2 (TestAllParams, v2, .label = "V2", .def_v = { 1, 2 }, .unit = "m",
                 .help = "A vec2"),
  TG_PARAM_VEC3 (TestAllParams, v3, .label = "V3", .def_v = { 1, 2, 3 }, .unit = "m",
                 .help = "A vec3"),
  TG_PARAM_COLOR (TestAllParams, col, .label = "Colour", .def_v = { 1, 0.5, 0, 1 },
                  .help = "A colour"),
  TG_PARAM_CURVE (TestAllParams, curve, test_all_curve, .label = "Curve", .help = "A curve"),
  TG_PARAM_LIST (TestAllParams, items, TestAllItem, test_all_item_params, .label = "Items",
                 .def_s = "name=grass|weight=0.5|tint=#00ff00; name=rock", .min = 0, .max = 3,
                 .help = "A list of objects"),
};

static const TgPortDesc test_all_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = "Height", .optional = true },
};
static const TgPortDesc test_all_outputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = "Height" },
  { .name = "image", .type = TG_TYPE_IMAGE, .label = "Image" },
};

static const TgNodeDesc test_all_desc = {
  .type = "test.all",
  .category = TG_CATEGORY_OTHER,
  .label = "Every parameter type",
  .help = "Formats tests only",
  .inputs = test_all_inputs,
  .n_inputs = 1,
  .outputs = test_all_outputs,
  .n_outputs = 2,
  TG_PARAMS (TestAllParams, test_all_params),
  .locality = TG_LOCALITY_LOCAL,
  .version = 1,
};
TG_NODE_REGISTER (test_all_desc);

typedef struct
{
  const char *path;
} TestFailParams;

static const TgParamDesc test_fail_params[] = {
  TG_PARAM_OUTPUT_PATH (TestFailParams, path, .label = "File", .def_s = "partial.png",
                        .help = "Written before failing"),
};
static const TgPortDesc test_fail_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = "Height" },
};

/* Writes a real file through the png16 writer, then fails as a full disk would. */
static int
test_fail_eval (TgEvalCtx *c)
{
  const TestFailParams *p = tg_eval_params (c);
  uint16_t px[4] = { 1, 2, 3, 4 };
  TgImage img = { .width = 2, .height = 2, .channels = 1, .bits = 16, .data = px };
  int rc = tg_eval_write_image (c, p->path, "png16", &img);

  if (rc < 0)
    return rc;
  return tg_eval_fail (c, TG_EIO, "disk full (test)");
}

static const TgNodeDesc test_fail_desc = {
  .type = "test.export_fail",
  .category = TG_CATEGORY_OTHER,
  .label = "Failing export",
  .inputs = test_fail_inputs,
  .n_inputs = 1,
  .params = test_fail_params,
  .n_params = 1,
  .params_size = sizeof (TestFailParams),
  .locality = TG_LOCALITY_LOCAL,
  .eval = test_fail_eval,
  .flags = TG_NODE_EXPORT,
  .version = 1,
};
TG_NODE_REGISTER (test_fail_desc);

#endif
