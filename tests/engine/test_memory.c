/* The memory estimate: maps counted while a reader needs them and freed
 * after, aprons growing what upstream nodes compute, the first node over
 * a limit named, cached results free; sizes parsed and printed. */
#include "tgtest.h"
#include "test_nodes.h"

/* A chain TYPES[0] -> ... -> test.sink over a 960 x 640 m world. */
static TgGraph *
chain (const char *const *types, int n, int resolution)
{
  TgGraph *g = tg_graph_new ();
  TgError err = { 0 };
  char id[16], prev[16];

  tg_graph_world (g)->resolution = resolution;
  tg_graph_world (g)->size_x = 960;
  tg_graph_world (g)->size_z = 640;
  for (int i = 0; i <= n; i++)
    {
      snprintf (id, sizeof id, "n%d", i);
      TG_CHECK (tg_graph_add_node (g, id, i < n ? types[i] : "test.sink", &err) == i);
      if (i > 0)
        TG_CHECK (tg_graph_add_link (g, prev, "height", id, "height", &err) >= 0);
      memcpy (prev, id, sizeof id);
    }
  return g;
}

static TgMemEstimate
estimate (TgEngine *e, const TgGraph *g, uint64_t limit)
{
  TgMemEstimate est;
  TgError err = { 0 };

  TG_CHECK_MSG (tg_engine_estimate (e, g, NULL, limit, &est, &err) == 0, "%s", err.message);
  return est;
}

static uint64_t
map_bytes (const TgGraph *g)
{
  TgRegion r;

  tg_region_for_world (&r, tg_graph_world_const (g), tg_graph_world_const (g)->resolution);
  return tg_region_samples (&r) * sizeof (float);
}

/* At most two maps are alive at once along a chain however long: each is
 * freed once its reader has run. */
static void
test_chain_holds_two_maps (void)
{
  const char *types[] = { "test.coord", "test.add", "test.add", "test.add", "test.add" };
  TgEngineOptions opts = { .no_cache = true };
  TgEngine *e = tg_engine_new (&opts);
  TgGraph *short3 = chain (types, 3, 97), *long5 = chain (types, 5, 97);
  TgGraph *big = chain (types, 3, 385);
  TgMemEstimate a = estimate (e, short3, 0), b = estimate (e, long5, 0);
  TgMemEstimate c = estimate (e, big, 0);

  TG_CHECK (a.peak > 2 * map_bytes (short3));
  TG_CHECK (a.peak == b.peak);
  TG_CHECK (c.peak - a.peak == 2 * (map_bytes (big) - map_bytes (short3)));
  TG_CHECK_INT_EQ (a.node, 1); /* the first add: coord's map and its own */
  TG_CHECK_INT_EQ (a.region.width, 97);
  TG_CHECK_INT_EQ (a.region.height, 65);
  tg_graph_free (short3);
  tg_graph_free (long5);
  tg_graph_free (big);
  tg_engine_free (e);
}

/* An apron node asks for its region grown; the node upstream computes that. */
static void
test_apron_grows_the_input (void)
{
  const char *plain[] = { "test.coord", "test.add" }, *blur[] = { "test.coord", "test.blur" };
  TgEngineOptions opts = { .no_cache = true };
  TgEngine *e = tg_engine_new (&opts);
  TgGraph *g = chain (plain, 2, 97), *gb = chain (blur, 2, 97);
  TgMemEstimate a = estimate (e, g, 0), b = estimate (e, gb, 0);
  char text[256];

  TG_CHECK_INT_EQ (b.node, 1);
  TG_CHECK_INT_EQ (b.input.width, 99);
  TG_CHECK_INT_EQ (b.input.height, 67);
  TG_CHECK (b.peak - a.peak == (99 * 67 - 97 * 65) * sizeof (float));
  tg_mem_estimate_describe (&b, gb, text, sizeof text);
  TG_CHECK_STR_CONTAINS (text, "node \"n1\": needs about ");
  TG_CHECK_STR_CONTAINS (text, " at 97x65 (input 99x67 with its apron)");
  tg_graph_free (g);
  tg_graph_free (gb);
  tg_engine_free (e);
}

/* An apron cut at the world's edge (TG_NODE_APRON_IN_WORLD): test.edge_box's
 * 300 cells of apron cost nothing over the world itself. */
static void
test_apron_cut_at_world_edge (void)
{
  const char *plain[] = { "test.coord", "test.add" }, *edge[] = { "test.coord", "test.edge_box" };
  TgEngineOptions opts = { .no_cache = true };
  TgEngine *e = tg_engine_new (&opts);
  TgGraph *g = chain (plain, 2, 97), *ge = chain (edge, 2, 97);
  TgMemEstimate a = estimate (e, g, 0), b = estimate (e, ge, 0);

  TG_CHECK_INT_EQ (b.node, 1);
  TG_CHECK_INT_EQ (b.input.width, 97);
  TG_CHECK_INT_EQ (b.input.height, 65);
  TG_CHECK (b.peak == a.peak);
  tg_graph_free (g);
  tg_graph_free (ge);
  tg_engine_free (e);
}

/* With a limit, the node named is the first whose run goes over it. */
static void
test_limit_names_the_first_node_over (void)
{
  const char *types[] = { "test.coord", "test.add", "test.add" };
  TgEngineOptions opts = { .no_cache = true };
  TgEngine *e = tg_engine_new (&opts);
  TgGraph *g = chain (types, 3, 97);
  TgMemEstimate whole = estimate (e, g, 0);
  TgMemEstimate over = estimate (e, g, whole.peak - map_bytes (g) - 1);

  TG_CHECK_INT_EQ (over.node, 0);
  TG_CHECK (over.node_bytes == whole.peak - map_bytes (g));
  TG_CHECK (over.peak == whole.peak);
  over = estimate (e, g, whole.peak - 1);
  TG_CHECK_INT_EQ (over.node, 1);
  tg_graph_free (g);
  tg_engine_free (e);
}

/* What the cache already holds costs nothing more. */
static void
test_cached_results_are_free (void)
{
  const char *types[] = { "test.coord", "test.add" };
  TgEngine *e = tg_engine_new (NULL);
  TgGraph *g = chain (types, 2, 97);
  TgMemEstimate before = estimate (e, g, 0), after;
  TgRegion r;
  TgValue *v = NULL;
  TgError err = { 0 };

  tg_region_for_world (&r, tg_graph_world (g), 97);
  TG_CHECK_INT_EQ (tg_engine_pull (e, g, 1, 0, &r, NULL, &v, NULL, &err), 0);
  tg_value_unref (v);
  after = estimate (e, g, 0);
  TG_CHECK (after.peak < before.peak);
  TG_CHECK_INT_EQ (after.node, 2); /* only the sink runs */
  tg_graph_free (g);
  tg_engine_free (e);
}

static void
test_sizes_parse_and_print (void)
{
  static const struct
  {
    const char *text;
    uint64_t bytes;
  } good[] = {
    { "1", 1 },
    { "4096", 4096 },
    { "512M", 512ULL << 20 },
    { "512MiB", 512ULL << 20 },
    { "20G", 20ULL << 30 },
    { "20gb", 20ULL << 30 },
    { "1.5K", 1536 },
    { "2T", 2ULL << 40 },
  };
  static const char *const bad[] = { "", "G", "-5", "0", "12X", "1.5.2G", "5 G", "1e400", "0.1" };
  char buf[32];
  uint64_t b;

  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
    {
      TgError err = { 0 };
      TG_CHECK_MSG (tg_parse_bytes (good[i].text, &b, &err) == 0 && b == good[i].bytes,
                    "\"%s\": %s", good[i].text, err.message);
    }
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      TgError err = { 0 };
      TG_CHECK_MSG (tg_parse_bytes (bad[i], &b, &err) == TG_EINVAL, "\"%s\" was taken", bad[i]);
      TG_CHECK_STR_CONTAINS (err.message, "expected a size such as 512M, 20G");
    }
  TG_CHECK (strcmp (tg_format_bytes (512, buf, sizeof buf), "512 B") == 0);
  TG_CHECK (strcmp (tg_format_bytes (20ULL << 20, buf, sizeof buf), "20.0 MiB") == 0);
  TG_CHECK (strcmp (tg_format_bytes (38ULL << 30, buf, sizeof buf), "38.00 GiB") == 0);
  /* Some memory is always available to a running process. */
  TG_CHECK (tg_memory_available () > 0);
}

int
main (void)
{
  TG_RUN (test_chain_holds_two_maps);
  TG_RUN (test_apron_grows_the_input);
  TG_RUN (test_apron_cut_at_world_edge);
  TG_RUN (test_limit_names_the_first_node_over);
  TG_RUN (test_cached_results_are_free);
  TG_RUN (test_sizes_parse_and_print);
  return tgtest_result ();
}
