/* The graph model, the registry and validation: every error names its place. */
#include "tgtest.h"
#include "test_nodes.h"

static TgGraph *
chain (void)
{
  TgGraph *g = tg_graph_new ();
  TgError err = { 0 };
  tg_graph_add_node (g, "src", "test.coord", &err);
  tg_graph_add_node (g, "add", "test.add", &err);
  tg_graph_add_link (g, "src", "height", "add", "height", &err);
  return g;
}

static void
test_registry_finds_section_nodes (void)
{
  const TgNodeDesc *d = tg_registry_lookup ("test.coord");
  TG_CHECK (d != NULL);
  TG_CHECK (tg_registry_lookup ("test.nope") == NULL);
  TG_CHECK (tg_registry_count () >= 9);
  for (int i = 1; i < tg_registry_count (); i++)
    TG_CHECK (strcmp (tg_registry_get (i - 1)->type, tg_registry_get (i)->type) < 0);
  TG_CHECK_INT_EQ (tg_node_desc_find_param (d, "steps"), 1);
  TG_CHECK_INT_EQ (tg_node_desc_find_output (d, "height"), 0);
  TG_CHECK_INT_EQ (tg_node_desc_find_input (d, "height"), -1);
}

/* The macros fill the fields they are given and those the kind fixes; a
 * slider without soft limits spans the hard range. */
typedef struct
{
  double radius_m, gain;
  int count, seed;
  bool on;
} MacroParams;

static void
test_param_macros (void)
{
  static const TgParamDesc d[] = {
    TG_PARAM_FLOAT (MacroParams, radius_m, .label = "Radius", .def = 50.0, .min = 0.0,
                    .max = 1e5, .soft_min = 0.0, .soft_max = 1000.0, .unit = "m", .help = "R"),
    TG_PARAM_FLOAT (MacroParams, gain, .label = "Gain", .def = 1.0, .min = -2.0, .max = 4.0,
                    .help = "G"),
    TG_PARAM_INT (MacroParams, count, .label = "Count", .def = 3, .min = 1, .max = 9, .help = "C"),
    TG_PARAM_SEED (MacroParams, seed, .label = "Seed", .help = "S"),
    TG_PARAM_BOOL (MacroParams, on, .label = "On", .def = true, .help = "O"),
  };
  double lo, hi;

  TG_CHECK (strcmp (d[0].name, "radius_m") == 0 && d[0].type == TG_PARAM_FLOAT);
  TG_CHECK (d[0].offset == offsetof (MacroParams, radius_m) && strcmp (d[0].unit, "m") == 0);
  TG_CHECK (d[0].def == 50.0 && d[0].min == 0.0 && d[0].max == 1e5);
  tg_param_soft_range (&d[0], &lo, &hi);
  TG_CHECK (lo == 0.0 && hi == 1000.0);
  tg_param_soft_range (&d[1], &lo, &hi);
  TG_CHECK (lo == -2.0 && hi == 4.0);
  tg_param_soft_range (&d[2], &lo, &hi);
  TG_CHECK (lo == 1.0 && hi == 9.0 && d[2].offset == offsetof (MacroParams, count));
  TG_CHECK (d[3].type == TG_PARAM_SEED && d[3].def == 0 && d[3].max == 2147483647.0);
  tg_param_soft_range (&d[3], &lo, &hi);
  TG_CHECK (lo == 0.0 && hi == 2147483647.0);
  TG_CHECK (d[4].def == 1.0 && d[4].min == 0.0 && d[4].max == 1.0 && !d[4].unit);
}

/* The menu lists every category once, Other (where a descriptor without
 * one lands) last; the test nodes are there. */
static void
test_categories (void)
{
  bool seen[TG_CATEGORY_COUNT] = { false };

  for (int k = 0; k < TG_CATEGORY_COUNT; k++)
    {
      TgCategory c = tg_category_at (k);
      TG_CHECK ((unsigned) c < TG_CATEGORY_COUNT && !seen[c]);
      seen[c] = true;
      TG_CHECK (tg_category_name (c) && tg_category_name (c)[0]);
    }
  TG_CHECK (tg_category_at (0) == TG_CATEGORY_INPUT);
  TG_CHECK (tg_category_at (TG_CATEGORY_COUNT - 1) == TG_CATEGORY_OTHER);
  TG_CHECK (strcmp (tg_category_name (TG_CATEGORY_GENERATORS), "Generators") == 0);
  TG_CHECK (strcmp (tg_category_name (TG_CATEGORY_OTHER), "Other") == 0);
  TG_CHECK (tg_registry_lookup ("test.coord")->category == TG_CATEGORY_OTHER);
}

static void
test_add_node_errors (void)
{
  TgGraph *g = tg_graph_new ();
  TgError err = { 0 };
  TG_CHECK_INT_EQ (tg_graph_add_node (g, "a", "test.coord", &err), 0);
  TG_CHECK_INT_EQ (tg_graph_add_node (g, "a", "test.coord", &err), TG_EINVAL);
  TG_CHECK_STR_CONTAINS (err.message, "duplicate node id \"a\"");
  TG_CHECK_INT_EQ (tg_graph_add_node (g, "b", "noise.fbn", &err), TG_EUNKNOWN);
  TG_CHECK_STR_CONTAINS (err.message, "unknown node type \"noise.fbn\"");
  TG_CHECK (strcmp (err.path, "type") == 0);
  TG_CHECK_INT_EQ (tg_graph_add_node (g, "a.b", "test.coord", &err), TG_EINVAL);
  TG_CHECK_INT_EQ (tg_graph_add_node (g, "", "test.coord", &err), TG_EINVAL);
  TG_CHECK_INT_EQ (tg_graph_n_nodes (g), 1);
  tg_graph_free (g);
}

static void
test_param_checks_name_the_place (void)
{
  TgGraph *g = chain ();
  TgError err = { 0 };
  TgParamValue v = { .type = TG_PARAM_INT, .i = 40 };
  TG_CHECK_INT_EQ (tg_graph_set_param (g, 0, "steps", &v, &err), TG_ERANGE);
  TG_CHECK (strcmp (err.path, "params.steps") == 0);
  TG_CHECK (strcmp (err.message, "expected an integer in 1..16, got 40") == 0);
  tg_error_prefix_path (&err, "nodes[0]");
  TG_CHECK (strcmp (err.path, "nodes[0].params.steps") == 0);
  v.i = 5;
  TG_CHECK_INT_EQ (tg_graph_set_param (g, 0, "steps", &v, &err), 0);
  TG_CHECK_INT_EQ (tg_graph_get_param (g, 0, "steps")->i, 5);
  v = (TgParamValue) { .type = TG_PARAM_FLOAT, .f = 2.5 };
  TG_CHECK_INT_EQ (tg_graph_set_param (g, 0, "steps", &v, &err), TG_ETYPE);
  TG_CHECK_STR_CONTAINS (err.message, "expected a int value");
  TG_CHECK_INT_EQ (tg_graph_set_param (g, 0, "bogus", &v, &err), TG_EUNKNOWN);
  v.f = 1e9;
  TG_CHECK_INT_EQ (tg_graph_set_param (g, 0, "scale", &v, &err), TG_ERANGE);
  TG_CHECK_STR_CONTAINS (err.message, "expected a number in 0..100, got 1000000000");
  tg_graph_free (g);
}

static void
test_param_parse (void)
{
  const TgNodeDesc *d = tg_registry_lookup ("test.coord");
  TgParamValue v;
  TgError err = { 0 };
  TG_CHECK_INT_EQ (tg_param_value_parse (&d->params[0], "2.5", &v, &err), 0);
  TG_CHECK (v.f == 2.5);
  tg_param_value_clear (&v);
  TG_CHECK_INT_EQ (tg_param_value_parse (&d->params[1], "2.5", &v, &err), TG_ETYPE);
  TG_CHECK_INT_EQ (tg_param_value_parse (&d->params[1], "99", &v, &err), TG_ERANGE);
  TG_CHECK_INT_EQ (tg_param_value_parse (&d->params[0], "abc", &v, &err), TG_ETYPE);
  /* Numbers as written, and none that JSON cannot hold. */
  TG_CHECK_INT_EQ (tg_param_value_parse (&d->params[1], "1.2e29", &v, &err), TG_ERANGE);
  TG_CHECK_STR_CONTAINS (err.message, "got 1.2e29");
  TG_CHECK_INT_EQ (tg_param_value_parse (&d->params[0], "NaN", &v, &err), TG_ETYPE);
  TG_CHECK_STR_CONTAINS (err.message, "expected a number in 0..100, got NaN");
  TG_CHECK_INT_EQ (tg_param_value_parse (&d->params[0], "1e400", &v, &err), TG_ETYPE);
  TG_CHECK_STR_CONTAINS (err.message, "got 1e400");
}

/* Text that is not UTF-8 would reach file names, manifests and saved
 * graphs; the codec refuses it wherever it comes from. */
static void
test_text_must_be_utf8 (void)
{
  const TgNodeDesc *sink = tg_registry_lookup ("test.sink");
  TgParamValue v = { .type = TG_PARAM_OUTPUT_PATH, .s = (char *) "a\xc3(b.png" };
  TgGraph *g = tg_graph_new ();
  TgError err = { 0 };

  TG_CHECK_INT_EQ (tg_param_value_check (&sink->params[0], &v, &err), TG_EINVAL);
  TG_CHECK_STR_CONTAINS (err.message, "not valid UTF-8 (byte 2 is 0xc3)");
  TG_CHECK (strcmp (err.path, "params.path") == 0);
  v.s = (char *) "\xc3\xa9t\xc3\xa9.png";
  TG_CHECK_INT_EQ (tg_param_value_check (&sink->params[0], &v, &err), 0);
  TG_CHECK_INT_EQ (tg_param_value_parse (&sink->params[0], "x\xff.png", &v, &err), TG_EINVAL);
  TG_CHECK_INT_EQ (tg_graph_add_node (g, "n\xe9", "test.sink", &err), TG_EINVAL);
  TG_CHECK_STR_CONTAINS (err.message, "a node id must be valid UTF-8 (byte 2 is 0xe9)");
  TG_CHECK_INT_EQ (tg_graph_add_node (g, "n\xc3\xa9", "test.sink", &err), 0);
  tg_graph_free (g);
}

static void
test_output_paths_refused (void)
{
  const TgNodeDesc *d = tg_registry_lookup ("test.sink");
  const char *bad[] = { "/etc/passwd", "../x.png", "a/../../x", "a//b", "", "c:\\x", "a/", "./a" };
  TgError err = { 0 };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      TgParamValue v = { .type = TG_PARAM_OUTPUT_PATH, .s = (char *) bad[i] };
      TG_CHECK_MSG (tg_param_value_check (&d->params[0], &v, &err) < 0, "%s accepted", bad[i]);
    }
  TG_CHECK (tg_path_is_safe_relative ("height.png"));
  TG_CHECK (tg_path_is_safe_relative ("maps/height.png"));
  TG_CHECK (tg_path_is_safe_relative ("a..b.png"));
}

static void
test_links (void)
{
  TgGraph *g = chain ();
  TgError err = { 0 };
  tg_graph_add_node (g, "img", "test.image", &err);
  tg_graph_add_node (g, "add2", "test.add", &err);
  TG_CHECK_INT_EQ (tg_graph_add_link (g, "src", "height", "add", "height", &err), TG_ELINK);
  TG_CHECK_STR_CONTAINS (err.message, "already has a link");
  TG_CHECK_INT_EQ (tg_graph_add_link (g, "nope", "height", "add2", "height", &err), TG_ELINK);
  TG_CHECK_STR_CONTAINS (err.message, "no node \"nope\"");
  TG_CHECK (strcmp (err.path, "from") == 0);
  TG_CHECK_INT_EQ (tg_graph_add_link (g, "src", "height", "add2", "heigth", &err), TG_ELINK);
  TG_CHECK_STR_CONTAINS (err.message, "has no input \"heigth\"");
  TG_CHECK (strcmp (err.path, "to") == 0);
  TG_CHECK_INT_EQ (tg_graph_add_link (g, "img", "image", "add2", "height", &err), TG_ETYPE);
  TG_CHECK_STR_CONTAINS (err.message, "(image) to add2.height (height)");
  TG_CHECK_INT_EQ (tg_graph_add_link (g, "add", "height", "add2", "height", &err), 1);
  tg_graph_free (g);
}

static void
test_cycle_named (void)
{
  TgGraph *g = tg_graph_new ();
  TgError err = { 0 };
  tg_graph_add_node (g, "a", "test.add", &err);
  tg_graph_add_node (g, "b", "test.add", &err);
  tg_graph_add_node (g, "c", "test.add", &err);
  TG_CHECK (tg_graph_add_link (g, "a", "height", "b", "height", &err) >= 0);
  TG_CHECK (tg_graph_add_link (g, "b", "height", "c", "height", &err) >= 0);
  TG_CHECK_INT_EQ (tg_graph_add_link (g, "c", "height", "a", "height", &err), TG_ECYCLE);
  TG_CHECK_STR_CONTAINS (err.message, "a -> b -> c -> a");
  tg_graph_free (g);
}

static void
test_validate (void)
{
  TgGraph *g = chain ();
  TgError err = { 0 };
  TG_CHECK_INT_EQ (tg_graph_validate (g, &err), 0);
  tg_graph_add_node (g, "lonely", "test.add", &err);
  TG_CHECK_INT_EQ (tg_graph_validate (g, &err), TG_EMISSING);
  TG_CHECK (strcmp (err.path, "nodes[2].inputs.height") == 0);
  TG_CHECK_STR_CONTAINS (err.message, "\"lonely\" (test.add) needs a link into its \"height\" input");
  tg_graph_remove_node (g, 2);
  tg_graph_world (g)->resolution = 1;
  TG_CHECK_INT_EQ (tg_graph_validate (g, &err), TG_ERANGE);
  TG_CHECK (strcmp (err.path, "world.resolution") == 0);
  tg_graph_world (g)->resolution = 65;
  tg_graph_add_node (g, "s1", "test.sink", &err);
  tg_graph_add_node (g, "s2", "test.sink", &err);
  tg_graph_add_link (g, "add", "height", "s1", "height", &err);
  tg_graph_add_link (g, "add", "height", "s2", "height", &err);
  TG_CHECK_INT_EQ (tg_graph_validate (g, &err), TG_EPATH);
  TG_CHECK (strcmp (err.path, "nodes[3].params.path") == 0);
  TG_CHECK_STR_CONTAINS (err.message, "also written by node \"s1\"");
  tg_graph_free (g);
}

/* The validator's errors about a node carry its id beside the path, which
 * stays a plain JSON path; the formatted path and message show both. */
/* A graph is validated once per change: each edit (and a world field
 * changed in place) makes tg_graph_validate check again, and a pull
 * checks a node with the same function validate uses. */
static void
test_validate_once_per_change (void)
{
  TgGraph *g = chain (), *c;
  TgEngine *e = tg_engine_new (NULL);
  TgError err = { 0 }, pull_err = { 0 };
  TgParamValue v = { .type = TG_PARAM_INT, .i = 3 };
  TgValue *out = NULL;
  TgRegion r;
  unsigned long gen = tg_graph_generation (g);

  TG_CHECK (!tg_graph_is_validated (g));
  TG_CHECK_INT_EQ (tg_graph_validate (g, &err), 0);
  TG_CHECK (tg_graph_is_validated (g));
  c = tg_graph_copy (g);
  TG_CHECK (c && tg_graph_is_validated (c));
  tg_graph_free (c);
  TG_CHECK_INT_EQ (tg_graph_set_param (g, 0, "steps", &v, &err), 0);
  TG_CHECK (tg_graph_generation (g) > gen);
  TG_CHECK (!tg_graph_is_validated (g));
  TG_CHECK_INT_EQ (tg_graph_validate (g, &err), 0);
  tg_graph_world (g)->resolution = 1;
  TG_CHECK (!tg_graph_is_validated (g));
  TG_CHECK_INT_EQ (tg_graph_validate (g, &err), TG_ERANGE);
  tg_graph_world (g)->resolution = 65;
  TG_CHECK_INT_EQ (tg_graph_validate (g, &err), 0);
  tg_graph_remove_link (g, 0);
  TG_CHECK (!tg_graph_is_validated (g));
  /* The pull and the validator say the same about the same node. */
  TG_CHECK_INT_EQ (tg_graph_validate (g, &err), TG_EMISSING);
  tg_region_for_world (&r, tg_graph_world (g), 9);
  TG_CHECK_INT_EQ (tg_engine_pull (e, g, 1, 0, &r, NULL, &out, NULL, &pull_err), TG_EMISSING);
  TG_CHECK_MSG (strcmp (err.path, pull_err.path) == 0, "%s vs %s", err.path, pull_err.path);
  TG_CHECK (strcmp (err.message, pull_err.message) == 0);
  TG_CHECK (strcmp (err.node_id, pull_err.node_id) == 0);
  /* The source alone still previews on the unfinished graph. */
  TG_CHECK_INT_EQ (tg_engine_pull (e, g, 0, 0, &r, NULL, &out, NULL, &pull_err), 0);
  tg_value_unref (out);
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_validate_names_node_id (void)
{
  TgGraph *g = chain ();
  TgError err = { 0 };
  char buf[TG_ERROR_MESSAGE_MAX + 2 * TG_ERROR_PATH_MAX];

  tg_graph_add_node (g, "lonely", "test.add", &err);
  TG_CHECK_INT_EQ (tg_graph_validate (g, &err), TG_EMISSING);
  TG_CHECK (strcmp (err.path, "nodes[2].inputs.height") == 0);
  TG_CHECK (strcmp (err.node_id, "lonely") == 0);
  TG_CHECK (strcmp (tg_error_format_path (&err, buf, sizeof buf),
                    "nodes[2] \"lonely\".inputs.height") == 0);
  TG_CHECK_STR_CONTAINS (tg_error_format (&err, buf, sizeof buf),
                         "nodes[2] \"lonely\".inputs.height: node \"lonely\"");
  tg_graph_free (g);

  /* A parameter's check: prefixed with the node. */
  tg_error_set (&err, TG_ERANGE, "params.steps", "too many");
  TG_CHECK (err.node_id[0] == '\0');
  tg_error_prefix_node (&err, 7, "base");
  TG_CHECK (strcmp (err.path, "nodes[7].params.steps") == 0);
  TG_CHECK (strcmp (tg_error_format (&err, buf, sizeof buf),
                    "nodes[7] \"base\".params.steps: too many") == 0);
  /* The bare node, and an id that needs quoting. */
  tg_error_set (&err, TG_EEVAL, "nodes[1]", "failed");
  tg_error_set_node_id (&err, "a\"b");
  TG_CHECK (strcmp (tg_error_format_path (&err, buf, sizeof buf), "nodes[1] \"a\\\"b\"") == 0);
  /* A new error forgets the old node; paths not about a node ignore it. */
  tg_error_set (&err, TG_ERANGE, "world.seed", "bad");
  TG_CHECK (err.node_id[0] == '\0');
  tg_error_set_node_id (&err, "x");
  TG_CHECK (strcmp (tg_error_format_path (&err, buf, sizeof buf), "world.seed") == 0);
  /* A small buffer is cut short, still terminated. */
  tg_error_set (&err, TG_ERANGE, "nodes[12].params.octaves", "bad");
  tg_error_set_node_id (&err, "a-rather-long-node-id");
  tg_error_format_path (&err, buf, 16);
  TG_CHECK (strlen (buf) == 15);
}

/* Every link as "from.port>to.port" in list order, for comparing graphs. */
static void
links_text (const TgGraph *g, char *buf, size_t size)
{
  size_t used = 0;

  buf[0] = '\0';
  for (int i = 0; i < tg_graph_n_links (g); i++)
    {
      const TgLink *l = tg_graph_link (g, i);
      used += (size_t) snprintf (buf + used, size - used, "%s.%d>%s.%d ",
                                 tg_graph_node_id (g, l->from_node), l->from_port,
                                 tg_graph_node_id (g, l->to_node), l->to_port);
    }
}

/* A node removed from the middle and inserted back at its index, with
 * its links inserted back at their positions, gives the graph from
 * before: the same nodes in the same order, the same links in the same
 * order (what undo of a delete needs). */
static void
test_insert_restores_removed (void)
{
  TgGraph *g = tg_graph_new (), *was;
  TgError err = { 0 };
  char before[512], after[512];
  TgLink kept[4];
  int at[4], n = 0;

  tg_graph_add_node (g, "src", "test.coord", &err);
  tg_graph_add_node (g, "mid", "test.add", &err);
  tg_graph_add_node (g, "m2", "test.mix", &err);
  tg_graph_add_node (g, "end", "test.add", &err);
  tg_graph_add_link (g, "src", "height", "m2", "detail", &err);
  tg_graph_add_link (g, "src", "height", "mid", "height", &err);
  tg_graph_add_link (g, "m2", "height", "end", "height", &err);
  tg_graph_add_link (g, "mid", "height", "m2", "height", &err);
  tg_graph_set_param_text (g, 1, "amount", "0.25", &err);
  tg_graph_set_node_ui (g, 1, "{\"x\": 7}");
  tg_graph_set_node_extra (g, 1, "{\"note\": 1}");
  tg_graph_set_node_bypass (g, 1, true);
  was = tg_graph_copy (g);
  links_text (g, before, sizeof before);
  for (int i = 0; i < tg_graph_n_links (g); i++)
    if (tg_graph_link (g, i)->from_node == 1 || tg_graph_link (g, i)->to_node == 1)
      {
        kept[n] = *tg_graph_link (g, i);
        at[n++] = i;
      }
  TG_CHECK_INT_EQ (n, 2);
  tg_graph_remove_node (g, 1);
  TG_CHECK_INT_EQ (tg_graph_n_links (g), 2);
  /* Out of range and taken ids are refused, changing nothing. */
  TG_CHECK (tg_graph_insert_node (g, 4, "mid", "test.add", &err) < 0);
  TG_CHECK (tg_graph_insert_node (g, -1, "mid", "test.add", &err) < 0);
  TG_CHECK_INT_EQ (tg_graph_insert_node (g, 1, "end", "test.add", &err), TG_EINVAL);
  TG_CHECK_INT_EQ (tg_graph_n_nodes (g), 3);
  TG_CHECK_INT_EQ (tg_graph_insert_node_copy (g, 1, was, 1, &err), 1);
  /* The copy is the node as it was, whatever it had set. */
  TG_CHECK (tg_graph_node_bypass (g, 1) && !strcmp (tg_graph_node_ui (g, 1), "{\"x\": 7}"));
  TG_CHECK (!strcmp (tg_graph_node_extra (g, 1), "{\"note\": 1}"));
  TG_CHECK (tg_graph_get_param (g, 1, "amount")->f == 0.25);
  TG_CHECK (!strcmp (tg_graph_node_id (g, 1), "mid") && !strcmp (tg_graph_node_id (g, 2), "m2"));
  /* The links that stayed still name the same nodes. */
  TG_CHECK (!strcmp (tg_graph_node_id (g, tg_graph_link (g, 1)->from_node), "m2"));
  TG_CHECK (!strcmp (tg_graph_node_id (g, tg_graph_link (g, 1)->to_node), "end"));
  for (int k = 0; k < n; k++)
    TG_CHECK_INT_EQ (tg_graph_insert_link (g, at[k], &kept[k], &err), at[k]);
  links_text (g, after, sizeof after);
  TG_CHECK_MSG (!strcmp (before, after), "links %s, want %s", after, before);
  TG_CHECK_INT_EQ (tg_graph_validate (g, &err), 0);

  /* tg_graph_insert_link checks as tg_graph_add_link does. */
  {
    TgLink twice = kept[0], bad_port = { 0, 5, 1, 0 }, cycle = { 3, 0, 1, 0 };
    TgLink bad_type, no_node = { 0, 0, 9, 0 };
    TG_CHECK_INT_EQ (tg_graph_insert_link (g, 0, &twice, &err), TG_ELINK);
    TG_CHECK_STR_CONTAINS (err.message, "already has a link");
    TG_CHECK_INT_EQ (tg_graph_insert_link (g, 0, &bad_port, &err), TG_ELINK);
    TG_CHECK_INT_EQ (tg_graph_insert_link (g, 0, &no_node, &err), TG_ELINK);
    TG_CHECK (tg_graph_insert_link (g, 9, &kept[0], &err) < 0);
    tg_graph_remove_link (g, tg_graph_input_link (g, 1, 0));
    TG_CHECK_INT_EQ (tg_graph_insert_link (g, 0, &cycle, &err), TG_ECYCLE);
    TG_CHECK_STR_CONTAINS (err.message, "mid");
    tg_graph_add_node (g, "img", "test.image", &err);
    bad_type = (TgLink) { 4, 0, 1, 0 };
    TG_CHECK_INT_EQ (tg_graph_insert_link (g, 0, &bad_type, &err), TG_ETYPE);
    TG_CHECK_INT_EQ (tg_graph_n_links (g), 3);
  }
  /* Undo puts back any value a node had, unchecked; validation still
   * names it. */
  {
    TgParamValue big = { .type = TG_PARAM_FLOAT, .f = 99 };
    TG_CHECK_INT_EQ (tg_graph_set_param (g, 1, "amount", &big, &err), TG_ERANGE);
    TG_CHECK_INT_EQ (tg_graph_restore_param (g, 1, "amount", &big, &err), 0);
    TG_CHECK (tg_graph_get_param (g, 1, "amount")->f == 99);
    TG_CHECK (tg_graph_restore_param (g, 1, "nope", &big, &err) < 0);
    TG_CHECK (tg_graph_validate (g, &err) < 0);
    TG_CHECK_STR_CONTAINS (err.path, "nodes[1].params.amount");
  }
  /* Inserting at the front moves every link's ends. */
  TG_CHECK_INT_EQ (tg_graph_insert_node (g, 0, "first", "test.coord", &err), 0);
  TG_CHECK (!strcmp (tg_graph_node_id (g, tg_graph_link (g, 0)->from_node), "src"));
  TG_CHECK (!strcmp (tg_graph_node_id (g, tg_graph_link (g, 0)->to_node), "m2"));
  tg_graph_free (was);
  tg_graph_free (g);
}

static void
test_remove_and_copy (void)
{
  TgGraph *g = chain (), *c;
  TgError err = { 0 };
  int order[3];
  tg_graph_add_node (g, "add2", "test.add", &err);
  tg_graph_add_link (g, "add", "height", "add2", "height", &err);
  tg_graph_set_node_ui (g, 2, "{\"x\": 1}");
  c = tg_graph_copy (g);
  TG_CHECK_INT_EQ (tg_graph_topo_order (c, order, &err), 0);
  TG_CHECK (order[0] == 0 && order[1] == 1 && order[2] == 2);
  tg_graph_remove_node (g, 0);
  TG_CHECK_INT_EQ (tg_graph_n_nodes (g), 2);
  TG_CHECK_INT_EQ (tg_graph_n_links (g), 1);
  TG_CHECK (tg_graph_link (g, 0)->from_node == 0 && tg_graph_link (g, 0)->to_node == 1);
  TG_CHECK (strcmp (tg_graph_node_ui (g, 1), "{\"x\": 1}") == 0);
  /* the copy is independent */
  TG_CHECK_INT_EQ (tg_graph_n_nodes (c), 3);
  TG_CHECK_INT_EQ (tg_graph_n_links (c), 2);
  TG_CHECK (strcmp (tg_graph_node_ui (c, 2), "{\"x\": 1}") == 0);
  tg_graph_free (g);
  tg_graph_free (c);
}

static void
test_region_lattice (void)
{
  TgWorld w;
  TgRegion r, t;
  tg_world_init_default (&w);
  w.size_x = 1000;
  w.size_z = 500;
  tg_region_for_world (&r, &w, 101);
  TG_CHECK_INT_EQ (r.full_w, 101);
  TG_CHECK_INT_EQ (r.full_h, 51);
  TG_CHECK (tg_region_x (&r, 0) == -500 && tg_region_x (&r, 100) == 500);
  TG_CHECK (tg_region_z (&r, 0) == 250 && tg_region_z (&r, 50) == -250);
  t = tg_region_window (&r, 40, 10, 20, 20);
  TG_CHECK (tg_region_x (&t, 3) == tg_region_x (&r, 43));
  TG_CHECK (tg_region_contains (&r, &t));
  t = tg_region_grow (&t, 50);
  TG_CHECK (!tg_region_contains (&r, &t));
}

static void
test_list_params (void)
{
  TgGraph *g = tg_graph_new ();
  TgEngine *e = tg_engine_new (NULL);
  TgError err = { 0 };
  const TgParamValue *v;
  TgRegion r;
  TgValue *out = NULL;
  int n = tg_graph_add_node (g, "pal", "test.palette", &err);

  v = tg_graph_get_param (g, n, "entries");
  TG_CHECK_INT_EQ (v->n_items, 2);
  TG_CHECK (strcmp (tg_param_list_field (v, 0, 0)->s, "grass") == 0);
  TG_CHECK (tg_param_list_field (v, 0, 1)->f == 0.25);
  TG_CHECK (tg_param_list_field (v, 0, 2)->v[1] == 1.0 && tg_param_list_field (v, 0, 2)->v[0] == 0);
  TG_CHECK (tg_param_list_field (v, 1, 1)->f == 1.0); /* a default field */
  tg_region_for_world (&r, tg_graph_world (g), 9);
  TG_CHECK_INT_EQ (tg_engine_pull (e, g, n, 0, &r, NULL, &out, NULL, &err), 0);
  TG_CHECK_NEAR (out->data[0], 1.25, 1e-6);
  tg_value_unref (out);
  /* An item's field is part of the cache key. */
  TG_CHECK_INT_EQ (tg_graph_set_param_text (g, n, "entries", "name=a|weight=2; name=b|weight=3", &err), 0);
  TG_CHECK_INT_EQ (tg_engine_pull (e, g, n, 0, &r, NULL, &out, NULL, &err), 0);
  TG_CHECK_NEAR (out->data[0], 5.0, 1e-6);
  tg_value_unref (out);
  /* Errors name the item and field. */
  TG_CHECK_INT_EQ (tg_graph_set_param_text (g, n, "entries", "name=a; weight=20", &err), TG_ERANGE);
  TG_CHECK_MSG (strcmp (err.path, "params.entries[1].weight") == 0, "%s", err.path);
  TG_CHECK_STR_CONTAINS (err.message, "expected a number in 0..10, got 20");
  TG_CHECK_INT_EQ (tg_graph_set_param_text (g, n, "entries", "name=a|bogus=1", &err), TG_EUNKNOWN);
  TG_CHECK_MSG (strcmp (err.path, "params.entries[0].bogus") == 0, "%s", err.path);
  TG_CHECK_STR_CONTAINS (err.message, "unknown field of a entries item");
  TG_CHECK_INT_EQ (tg_graph_set_param_text (g, n, "entries", "a;b;c;d;e", &err), TG_ETYPE);
  TG_CHECK_INT_EQ (tg_graph_set_param_text (g, n, "entries", "name=1;name=2;name=3;name=4;name=5", &err),
                   TG_ERANGE);
  TG_CHECK_STR_CONTAINS (err.message, "expected 0 to 4 items, got 5");
  TG_CHECK_INT_EQ (tg_graph_set_param_text (g, n, "entries", "", &err), 0);
  TG_CHECK_INT_EQ (tg_graph_get_param (g, n, "entries")->n_items, 0);
  /* Editing helpers. */
  {
    TgParamValue copy;
    const TgNodeDesc *d = tg_graph_node_desc (g, n);
    tg_param_value_copy (&copy, tg_graph_get_param (g, n, "entries"));
    TG_CHECK_INT_EQ (tg_param_list_append_default (&copy, &d->params[0]), 0);
    TG_CHECK_INT_EQ (tg_param_list_append_default (&copy, &d->params[0]), 1);
    tg_param_list_field_mut (&copy, 1, 1)->f = 7;
    tg_param_list_remove (&copy, 0);
    TG_CHECK_INT_EQ (copy.n_items, 1);
    TG_CHECK (tg_param_list_field (&copy, 0, 1)->f == 7);
    TG_CHECK_INT_EQ (tg_graph_set_param (g, n, "entries", &copy, &err), 0);
    TG_CHECK (tg_param_value_equal (&copy, tg_graph_get_param (g, n, "entries")));
    tg_param_value_clear (&copy);
  }
  tg_engine_free (e);
  tg_graph_free (g);
}

int
main (void)
{
  TG_RUN (test_registry_finds_section_nodes);
  TG_RUN (test_param_macros);
  TG_RUN (test_categories);
  TG_RUN (test_add_node_errors);
  TG_RUN (test_param_checks_name_the_place);
  TG_RUN (test_param_parse);
  TG_RUN (test_text_must_be_utf8);
  TG_RUN (test_output_paths_refused);
  TG_RUN (test_links);
  TG_RUN (test_cycle_named);
  TG_RUN (test_validate);
  TG_RUN (test_validate_once_per_change);
  TG_RUN (test_validate_names_node_id);
  TG_RUN (test_remove_and_copy);
  TG_RUN (test_insert_restores_removed);
  TG_RUN (test_region_lattice);
  TG_RUN (test_list_params);
  return tgtest_result ();
}
