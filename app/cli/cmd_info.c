/* `tgraph info FILE`: what a graph is and what building it will write,
 * without evaluating anything.
 */
#include <stdio.h>
#include <string.h>

#include <tgformats/tgformats.h>

#include "cli.h"

/* The choice name of enum parameter NAME of NODE, or NULL. */
static const char *
enum_choice (const TgGraph *g, int node, const char *name)
{
  const TgNodeDesc *d = tg_graph_node_desc (g, node);
  int k = tg_node_desc_find_param (d, name);
  const TgParamValue *v = k >= 0 ? tg_graph_get_param_at (g, node, k) : NULL;

  if (!v || d->params[k].type != TG_PARAM_ENUM)
    return NULL;
  if (v->s && v->s[0])
    return v->s;
  for (int c = 0; d->params[k].choices && d->params[k].choices[c]; c++)
    if (c == v->i)
      return d->params[k].choices[c];
  return NULL;
}

/* Prints the files export node NODE writes: every output-path parameter,
 * with the node's "format" and "rows" choices when it has them. */
static void
print_export (const TgGraph *g, int node, const TgRegion *full)
{
  const TgNodeDesc *d = tg_graph_node_desc (g, node);
  const char *format = enum_choice (g, node, "format");
  const char *rows = enum_choice (g, node, "rows");

  for (int k = 0; k < d->n_params; k++)
    {
      if (d->params[k].type != TG_PARAM_OUTPUT_PATH)
        continue;
      const TgParamValue *v = tg_graph_get_param_at (g, node, k);
      if (!v || !v->s || !v->s[0])
        continue;
      printf ("  %-40s %dx%d", v->s, full->width, full->height);
      if (format)
        printf ("  %s", format);
      if (rows)
        printf (", %s", rows);
      printf ("  (node \"%s\", %s)\n", tg_graph_node_id (g, node), d->type);
    }
}

/* What `tgraph eval` would hold at its peak, and what it may take. */
static void
print_memory (const TgGraph *g)
{
  TgEngineOptions opts = { .threads = 1, .no_cache = true };
  TgEngine *e = tg_engine_new (&opts);
  TgMemEstimate est;
  char what[TG_ERROR_MESSAGE_MAX], peak[32], avail[32];
  uint64_t available = tg_memory_available ();

  if (e && tg_engine_estimate (e, g, NULL, 0, &est, NULL) == 0)
    {
      printf ("memory: about %s at the peak of a build, %s\n",
              tg__cli_format_bytes (est.peak, peak, sizeof peak),
              tg_mem_estimate_describe (&est, g, what, sizeof what));
      if (available > 0)
        printf ("  available: %s%s\n", tg__cli_format_bytes (available, avail, sizeof avail),
                est.peak > available ? " (`tgraph eval` refuses this build; try `tgraph plan`)"
                                     : "");
    }
  tg_engine_free (e);
}

int
tg__cli_info (int argc, char **argv)
{
  const char *file = NULL, *v;
  int resolution = 0, m;

  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--") == 0 && i + 1 < argc && !file)
        {
          file = argv[++i];
          continue;
        }
      if ((m = tg__cli_option_value ("info", argc, argv, &i, "--resolution", "-r", &v)) != 0)
        {
          if (m < 0 || tg__cli_parse_int ("info", "--resolution", v, TG_RESOLUTION_MIN,
                                          TG_RESOLUTION_MAX, &resolution) < 0)
            return TG_CLI_EXIT_USAGE;
          continue;
        }
      if (argv[i][0] == '-' && argv[i][1] != '\0')
        return tg__cli_usage_error ("info", "unknown option \"%s\"", argv[i]);
      if (file)
        return tg__cli_usage_error ("info", "expected one FILE, got \"%s\" and \"%s\"", file,
                                    argv[i]);
      file = argv[i];
    }
  if (!file)
    return tg__cli_usage_error ("info", "no file given");

  TgGraph *g = tg__cli_load_graph (file);
  if (!g)
    return TG_CLI_EXIT_USAGE;

  if (resolution > 0)
    tg_graph_world (g)->resolution = resolution;
  const TgWorld *w = tg_graph_world_const (g);
  TgRegion full;
  tg_region_for_world (&full, w, w->resolution);

  printf ("%s\n", file);
  printf ("world: %g x %g m, height %g m, seed %u\n", w->size_x, w->size_z, w->height_m,
          (unsigned) w->seed);
  printf ("resolution: %d (%d x %d samples, %g m between samples)\n", w->resolution,
          full.width, full.height, full.cell);

  int n = tg_graph_n_nodes (g), n_exports = 0;
  size_t id_w = 4;
  for (int i = 0; i < n; i++)
    {
      size_t l = strlen (tg_graph_node_id (g, i));
      if (l > id_w)
        id_w = l;
    }
  printf ("nodes: %d\n", n);
  for (int i = 0; i < n; i++)
    {
      const TgNodeDesc *d = tg_graph_node_desc (g, i);
      printf ("  %-*s  %-20s %s\n", (int) id_w, tg_graph_node_id (g, i), d->type, d->label);
      if (d->flags & TG_NODE_EXPORT)
        n_exports++;
    }
  printf ("links: %d\n", tg_graph_n_links (g));
  printf ("exports: %d node%s\n", n_exports, n_exports == 1 ? "" : "s");
  for (int i = 0; i < n; i++)
    if (tg_graph_node_desc (g, i)->flags & TG_NODE_EXPORT)
      print_export (g, i, &full);
  print_memory (g);

  tg_graph_free (g);
  return TG_CLI_EXIT_OK;
}
