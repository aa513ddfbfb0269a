/* `tgraph eval`: evaluate a graph and write its exports.
 *
 * Loads the file, applies the command-line overrides (--resolution,
 * --set), validates, and hands the graph to tg_build, the same call the
 * GUI's export uses, so both write the same bytes.  Progress goes to
 * stderr; SIGINT, SIGTERM, SIGHUP and SIGQUIT request the engine's cancel
 * token from a signal-waiting thread, so an interrupted build leaves no
 * partial files (and what a second signal or SIGKILL leaves, the next
 * build into the folder removes).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tgformats/plan.h>
#include <tgformats/tgformats.h>

#include "cli.h"
#include "eval_report.h"

#define CMD "eval"

/* --- progress ------------------------------------------------------------ */

typedef struct
{
  pthread_mutex_t lock;
  const TgGraph *graph;
  int n_nodes;
  bool *needed;        /* nodes an export depends on: the denominator of the bar */
  int n_needed;
  TgNodeState *state;
  double *fraction;
  double *t_start;
  double *t_end;       /* when the node reached a final state; 0 before */
  double *cpu_start;   /* process CPU seconds when the node started */
  int current;         /* node shown on the bar */
  const TgCancel *cancel;
  TgCliNodeResult *results; /* --report: per node, what it shows */
  TgRegion world;
  bool tty, quiet;
  bool drawn;          /* a bar is on the terminal line */
  double last_draw;
} Progress;

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* CPU seconds of the whole process, every thread: a node's share while it
 * is the only one running (the log says "process CPU" for that reason). */
static double
cpu_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static bool
state_is_final (TgNodeState s)
{
  return s == TG_NODE_DONE || s == TG_NODE_CACHED || s == TG_NODE_FAILED
         || s == TG_NODE_SKIPPED || s == TG_NODE_CANCELLED;
}

/* Marks every node that an export node depends on, walking the topological
 * order backwards so each node is visited after everything it feeds. */
static void
mark_needed (const TgGraph *g, bool *needed)
{
  int n = tg_graph_n_nodes (g);
  int *order = calloc ((size_t) (n > 0 ? n : 1), sizeof *order);

  for (int i = 0; i < n; i++)
    needed[i] = (tg_graph_node_desc (g, i)->flags & TG_NODE_EXPORT) != 0;
  if (!order || tg_graph_topo_order (g, order, NULL) < 0)
    {
      /* Validation already refused cycles; count every node if it did not. */
      for (int i = 0; i < n; i++)
        needed[i] = true;
      free (order);
      return;
    }
  for (int k = n - 1; k >= 0; k--)
    {
      int node = order[k];
      if (!needed[node])
        continue;
      const TgNodeDesc *d = tg_graph_node_desc (g, node);
      for (int p = 0; p < d->n_inputs; p++)
        {
          int l = tg_graph_input_link (g, node, p);
          if (l >= 0)
            needed[tg_graph_link (g, l)->from_node] = true;
        }
    }
  free (order);
}

static int
progress_init (Progress *p, const TgGraph *g, bool quiet)
{
  memset (p, 0, sizeof *p);
  pthread_mutex_init (&p->lock, NULL);
  p->graph = g;
  p->n_nodes = tg_graph_n_nodes (g);
  size_t n = (size_t) (p->n_nodes > 0 ? p->n_nodes : 1);
  p->needed = calloc (n, sizeof *p->needed);
  p->state = calloc (n, sizeof *p->state);
  p->fraction = calloc (n, sizeof *p->fraction);
  p->t_start = calloc (n, sizeof *p->t_start);
  p->t_end = calloc (n, sizeof *p->t_end);
  p->cpu_start = calloc (n, sizeof *p->cpu_start);
  if (!p->needed || !p->state || !p->fraction || !p->t_start || !p->t_end || !p->cpu_start)
    return TG_ENOMEM;
  mark_needed (g, p->needed);
  for (int i = 0; i < p->n_nodes; i++)
    p->n_needed += p->needed[i];
  p->current = -1;
  p->quiet = quiet;
  p->tty = isatty (STDERR_FILENO) == 1;
  return 0;
}

static void
progress_clear (Progress *p)
{
  pthread_mutex_destroy (&p->lock);
  free (p->needed);
  free (p->state);
  free (p->fraction);
  free (p->t_start);
  free (p->t_end);
  free (p->cpu_start);
}

/* Redraws the one-line bar: overall share of the needed nodes, then the
 * node being computed and its own percentage. */
static void
progress_draw (Progress *p)
{
  double done = 0.0;
  char bar[31];
  const int width = (int) sizeof bar - 1;

  for (int i = 0; i < p->n_nodes; i++)
    if (p->needed[i])
      done += state_is_final (p->state[i]) ? 1.0 : p->fraction[i];
  double total = p->n_needed > 0 ? done / p->n_needed : 1.0;
  if (total > 1.0)
    total = 1.0;
  int fill = (int) (total * width);
  for (int i = 0; i < width; i++)
    bar[i] = i < fill ? '#' : '-';
  bar[width] = '\0';

  fprintf (stderr, "\r\033[K[%s] %3d%%", bar, (int) (total * 100.0));
  if (p->current >= 0)
    fprintf (stderr, "  %.32s %3d%%", tg_graph_node_id (p->graph, p->current),
             (int) (p->fraction[p->current] * 100.0));
  fflush (stderr);
  p->drawn = true;
}

static void
progress_erase (Progress *p)
{
  if (p->drawn)
    {
      fprintf (stderr, "\r\033[K");
      fflush (stderr);
      p->drawn = false;
    }
}

static void
on_progress (void *user, int node, TgNodeState state, double fraction)
{
  Progress *p = user;

  if (node < 0 || node >= p->n_nodes)
    return;
  pthread_mutex_lock (&p->lock);
  double t = now_s ();
  TgNodeState before = p->state[node];
  /* Times are kept for --report even when nothing is printed. */
  if (p->t_start[node] == 0.0)
    {
      p->t_start[node] = t;
      p->cpu_start[node] = cpu_s ();
    }
  if (state_is_final (state) && p->t_end[node] == 0.0)
    p->t_end[node] = t;
  p->state[node] = state;
  if (fraction >= 0.0 && fraction <= 1.0)
    p->fraction[node] = fraction;
  if (p->quiet)
    {
      pthread_mutex_unlock (&p->lock);
      return;
    }

  if (p->tty)
    {
      if (state == TG_NODE_RUNNING)
        p->current = node;
      /* At most ten redraws a second, whatever the number of threads. */
      if (t - p->last_draw >= 0.1 || (state != before && state == TG_NODE_RUNNING))
        {
          progress_draw (p);
          p->last_draw = t;
        }
    }
  else if (state != before && state_is_final (state))
    {
      const char *id = tg_graph_node_id (p->graph, node);
      switch (state)
        {
        case TG_NODE_DONE:
          fprintf (stderr, "%s: done (%.2f s, process CPU %.2f s)\n", id,
                   t - p->t_start[node], cpu_s () - p->cpu_start[node]);
          break;
        case TG_NODE_CACHED:
          fprintf (stderr, "%s: cached\n", id);
          break;
        case TG_NODE_FAILED:
          fprintf (stderr, "%s: failed\n", id);
          break;
        case TG_NODE_SKIPPED:
          fprintf (stderr, "%s: skipped (%s)\n", id,
                   p->cancel && tg_cancel_is_requested (p->cancel) ? "cancelled"
                                                                    : "an input failed");
          break;
        default:
          fprintf (stderr, "%s: cancelled\n", id);
          break;
        }
      fflush (stderr);
    }
  pthread_mutex_unlock (&p->lock);
}

/* The engine's result hook: --report's thumbnails, made as the build
 * gets each result (it keeps none to be pulled again afterwards). */
static void
on_result (void *user, int node, const TgRegion *region, TgValue *const *outs, int n)
{
  Progress *p = user;

  if (p->results && node >= 0 && node < p->n_nodes)
    tg__cli_report_note (&p->results[node], &p->world, region, outs, n);
}

/* --- --set ----------------------------------------------------------------- */

/* Applies one "ID.PARAM=VALUE"; errors name the flag and the node.  A
 * parameter's name from an older format version is taken under its new
 * name, with a note (unless QUIET), so that scripts keep working. */
static int
apply_set (const char *cmd, TgGraph *g, const char *arg, bool quiet)
{
  const char *eq = strchr (arg, '=');
  const char *dot = strchr (arg, '.');
  char id[TG_NODE_ID_BYTES], name[256];
  size_t len = strlen (arg), bad = tg_utf8_check (arg, len);
  TgError err;

  /* Said before the argument is echoed, so the message is UTF-8 too. */
  if (bad < len)
    return tg__cli_usage_error (cmd, "--set: the argument is not valid UTF-8 (byte %zu is 0x%02x)",
                                bad + 1, (unsigned) (unsigned char) arg[bad]);
  if (!eq || !dot || dot > eq || dot == arg || dot + 1 == eq)
    return tg__cli_usage_error (cmd, "--set \"%s\": expected ID.PARAM=VALUE", arg);
  if ((size_t) (dot - arg) >= sizeof id || (size_t) (eq - dot - 1) >= sizeof name)
    return tg__cli_usage_error (cmd, "--set \"%s\": name too long", arg);
  memcpy (id, arg, (size_t) (dot - arg));
  id[dot - arg] = '\0';
  memcpy (name, dot + 1, (size_t) (eq - dot - 1));
  name[eq - dot - 1] = '\0';

  int node = tg_graph_find_node (g, id);
  if (node < 0)
    return tg__cli_usage_error (cmd, "--set %s: the graph has no node \"%s\"", arg, id);
  const TgNodeDesc *d = tg_graph_node_desc (g, node);
  int pi = tg_node_desc_find_param (d, name);
  const char *renamed = pi < 0 ? tg_tgraph_param_new_name (d->type, name) : NULL;
  if (renamed && tg_node_desc_find_param (d, renamed) >= 0)
    {
      if (!quiet)
        fprintf (stderr,
                 "tgraph %s: note: --set %s: \"%s\" of %s is called \"%s\" since format "
                 "version 2; setting %s.%s\n",
                 cmd, arg, name, d->type, renamed, id, renamed);
      snprintf (name, sizeof name, "%s", renamed);
      pi = tg_node_desc_find_param (d, name);
    }
  if (pi < 0)
    {
      fprintf (stderr, "tgraph %s: --set %s: node \"%s\" (%s) has no parameter \"%s\"", cmd, arg,
               id, d->type, name);
      for (int k = 0; k < d->n_params; k++)
        fprintf (stderr, "%s%s", k == 0 ? "; it has: " : ", ", d->params[k].name);
      fprintf (stderr, "\n");
      return TG_CLI_EXIT_USAGE;
    }

  tg_error_clear (&err);
  int rc = tg_graph_set_param_text (g, node, name, eq + 1, &err);
  if (rc < 0)
    {
      /* Named as the file loader names it, so both say the same thing. */
      char msg[TG_ERROR_PATH_MAX + TG_ERROR_MESSAGE_MAX + 64];
      if (!err.message[0])
        snprintf (err.message, sizeof err.message, "%s", tg_strerror (rc));
      tg_error_prefix_node (&err, node, id);
      return tg__cli_usage_error (cmd, "--set %s: %s", arg, tg_error_format (&err, msg, sizeof msg));
    }
  return TG_CLI_EXIT_OK;
}

/* --- the command -------------------------------------------------------- */

static const char *
base_name (const char *path)
{
  const char *s = strrchr (path, '/');
  return s ? s + 1 : path;
}

/* Prints what was written, one line per file, from the committed list. */
static void
print_files (const TgExportList *list, const char *out_dir, double seconds)
{
  unsigned long long total = 0;
  char size[32];

  int n = tg_export_list_n_files (list);

  printf ("wrote %d file%s to %s/ in %.2f s:\n", n, n == 1 ? "" : "s", out_dir, seconds);
  for (int i = 0; i < n; i++)
    {
      const TgExportFile *f = tg_export_list_file (list, i);
      char full[4096];
      struct stat st;
      unsigned long long bytes = f->bytes;

      /* The size on disk, in case the list was filled before the final flush. */
      if (snprintf (full, sizeof full, "%s/%s", out_dir, f->path) < (int) sizeof full
          && stat (full, &st) == 0)
        bytes = (unsigned long long) st.st_size;
      total += bytes;
      char dims[64] = "";
      if (f->width > 0 && f->height > 0)
        snprintf (dims, sizeof dims, "%dx%d", f->width, f->height);
      printf ("  %-32s %10s  %-11s %s\n", f->path, tg__cli_format_bytes (bytes, size, sizeof size),
              dims, f->format ? f->format : "");
    }
  printf ("  total %s\n", tg__cli_format_bytes (total, size, sizeof size));
}

/* The nodes' warnings, which do not fail the build: `warning: node "base"
 * (noise.fbm): message`, a line for each. */
static void
print_warnings (const char *file, const TgGraph *g, const TgEvalReport *report)
{
  for (int node = 0; report->warning && node < report->n_nodes; node++)
    for (const char *w = report->warning[node]; w && *w;)
      {
        const char *nl = strchr (w, '\n');
        int len = nl ? (int) (nl - w) : (int) strlen (w);
        fprintf (stderr, "tgraph %s: %s: warning: node \"%s\" (%s): %.*s\n", CMD, file,
                 tg_graph_node_id (g, node), tg_graph_node_desc (g, node)->type, len, w);
        w += len + (nl ? 1 : 0);
      }
}

/* Names the node that failed: `node "erode" (erosion.thermal): message`. */
static void
print_failure (const char *file, const TgGraph *g, const TgEvalReport *report, const TgError *err)
{
  int node = tg_eval_report_first_failure (report);

  if (node >= 0 && node < tg_graph_n_nodes (g))
    {
      const char *msg = report->message && report->message[node] ? report->message[node]
                        : err->message[0]                       ? err->message
                                                                : tg_strerror (err->code);
      fprintf (stderr, "tgraph %s: %s: node \"%s\" (%s): %s\n", CMD, file,
               tg_graph_node_id (g, node), tg_graph_node_desc (g, node)->type, msg);
    }
  else
    {
      char buf[TG_ERROR_PATH_MAX + TG_ERROR_MESSAGE_MAX + 8];
      fprintf (stderr, "tgraph %s: %s: %s\n", CMD, file,
               err->code ? tg_error_format (err, buf, sizeof buf) : "build failed");
    }
}

/* "A,B" with both in MIN..MAX. */
static int
parse_pair (const char *cmd, const char *option, const char *text, int min, int max, int *a,
            int *b)
{
  char first[32];
  const char *comma = strchr (text, ',');

  if (!comma || (size_t) (comma - text) >= sizeof first)
    return tg__cli_usage_error (cmd, "%s: expected two integers A,B, got \"%s\"", option, text);
  memcpy (first, text, (size_t) (comma - text));
  first[comma - text] = '\0';
  if (tg__cli_parse_int (cmd, option, first, min, max, a) < 0
      || tg__cli_parse_int (cmd, option, comma + 1, min, max, b) < 0)
    return TG_CLI_EXIT_USAGE;
  return 0;
}

int
tg__cli_eval_parse (int argc, char **argv, TgCliEvalOptions *o)
{
  const char *CMD_ = o->cmd;
  bool plan = strcmp (o->cmd, "plan") == 0;
  bool options_done = false;

  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i], *v = NULL;
      int m;

      if (options_done || a[0] != '-' || a[1] == '\0')
        {
          if (o->file)
            return tg__cli_usage_error (CMD_, "expected one FILE, got \"%s\" and \"%s\"",
                                        o->file, a);
          o->file = a;
        }
      else if (strcmp (a, "--") == 0)
        options_done = true;
      else if (strcmp (a, "-q") == 0 || strcmp (a, "--quiet") == 0)
        o->quiet = true;
      else if ((m = tg__cli_option_value (CMD_, argc, argv, &i, "--output", "-o", &v)) != 0)
        {
          if (m < 0)
            return TG_CLI_EXIT_USAGE;
          if (!v[0])
            return tg__cli_usage_error (CMD_, "--output: empty folder name");
          o->out_dir = v;
        }
      else if ((m = tg__cli_option_value (CMD_, argc, argv, &i, "--resolution", "-r", &v)) != 0)
        {
          if (m < 0 || tg__cli_parse_int (CMD_, "--resolution", v, TG_RESOLUTION_MIN,
                                          TG_RESOLUTION_MAX, &o->resolution) < 0)
            return TG_CLI_EXIT_USAGE;
        }
      else if ((m = tg__cli_option_value (CMD_, argc, argv, &i, "--threads", "-j", &v)) != 0)
        {
          if (m < 0 || tg__cli_parse_int (CMD_, "--threads", v, 0, 1024, &o->threads) < 0)
            return TG_CLI_EXIT_USAGE;
        }
      else if (!plan
               && (m = tg__cli_option_value (CMD_, argc, argv, &i, "--memory-limit", NULL, &v)) != 0)
        {
          TgError err = { 0 };
          if (m < 0)
            return TG_CLI_EXIT_USAGE;
          if (tg_parse_bytes (v, &o->memory_limit, &err) < 0)
            return tg__cli_usage_error (CMD_, "--memory-limit: %s", err.message);
        }
      else if (!plan && (m = tg__cli_option_value (CMD_, argc, argv, &i, "--report", NULL, &v)) != 0)
        {
          if (m < 0)
            return TG_CLI_EXIT_USAGE;
          if (!v[0])
            return tg__cli_usage_error (CMD_, "--report: empty file name");
          o->report = v;
        }
      else if ((m = tg__cli_option_value (CMD_, argc, argv, &i, "--set", "-s", &v)) != 0)
        {
          if (m < 0)
            return TG_CLI_EXIT_USAGE;
          o->sets[o->n_sets++] = v;
        }
      else if ((m = tg__cli_option_value (CMD_, argc, argv, &i, "--tiles", NULL, &v)) != 0)
        {
          if (m < 0 || parse_pair (CMD_, "--tiles", v, 1, TG_TILES_MAX, &o->nx, &o->ny) < 0)
            return TG_CLI_EXIT_USAGE;
        }
      else if (!plan && (m = tg__cli_option_value (CMD_, argc, argv, &i, "--tile", NULL, &v)) != 0)
        {
          if (m < 0 || parse_pair (CMD_, "--tile", v, 0, TG_TILES_MAX - 1, &o->ix, &o->iy) < 0)
            return TG_CLI_EXIT_USAGE;
        }
      else if (!plan && (m = tg__cli_option_value (CMD_, argc, argv, &i, "--stage", NULL, &v)) != 0)
        {
          if (m < 0 || tg__cli_parse_int (CMD_, "--stage", v, 0, 1 << 20, &o->stage) < 0)
            return TG_CLI_EXIT_USAGE;
        }
      else if (plan && (m = tg__cli_option_value (CMD_, argc, argv, &i, "--partition", NULL, &v)) != 0)
        {
          if (m < 0)
            return TG_CLI_EXIT_USAGE;
          o->partition = v;
        }
      else if (plan && (m = tg__cli_option_value (CMD_, argc, argv, &i, "--time", NULL, &v)) != 0)
        {
          if (m < 0)
            return TG_CLI_EXIT_USAGE;
          o->time = v;
        }
      else if (plan && (m = tg__cli_option_value (CMD_, argc, argv, &i, "--mem", NULL, &v)) != 0)
        {
          if (m < 0)
            return TG_CLI_EXIT_USAGE;
          o->mem = v;
        }
      else
        return tg__cli_usage_error (CMD_, "unknown option \"%s\"", a);
    }
  if (!o->file)
    return tg__cli_usage_error (CMD_, "no file given");
  if (plan && o->nx == 0)
    return tg__cli_usage_error (CMD_, "--tiles NX,NY is required");
  if (o->ix >= 0 && o->nx == 0)
    return tg__cli_usage_error (CMD_, "--tile needs --tiles NX,NY");
  if (o->nx > 0 && (o->ix >= o->nx || o->iy >= o->ny))
    return tg__cli_usage_error (CMD_, "--tile %d,%d: tiles are 0..%d, 0..%d", o->ix, o->iy,
                                o->nx - 1, o->ny - 1);
  if (!plan && o->nx > 0 && o->stage < 0 && o->ix < 0)
    return tg__cli_usage_error (CMD_, "--tiles needs --tile IX,IY (one tile of the world) or "
                                "--stage N (a job of a plan)");
  if (o->report && o->nx > 0)
    return tg__cli_usage_error (CMD_, "--report describes a whole build; it cannot be given with "
                                "--tiles");
  if (o->stage >= 0 && (o->n_sets > 0 || o->resolution > 0))
    return tg__cli_usage_error (CMD_, "a plan's job takes the plan's graph as it is: "
                                "give --set and --resolution to `tgraph plan`");
  return 0;
}

/* Loads the file and applies --resolution and --set, then validates, so
 * an override that breaks a rule is refused before anything runs. */
TgGraph *
tg__cli_eval_prepare (const TgCliEvalOptions *o)
{
  TgGraph *g = tg__cli_load_graph (o->file);
  TgError err;

  if (!g)
    return NULL;
  if (o->resolution > 0)
    tg_graph_world (g)->resolution = o->resolution;
  for (int k = 0; k < o->n_sets; k++)
    if (apply_set (o->cmd, g, o->sets[k], o->quiet) != TG_CLI_EXIT_OK)
      {
        tg_graph_free (g);
        return NULL;
      }
  tg_error_clear (&err);
  if (tg_graph_name_check (o->file, &err) < 0 || tg_graph_validate (g, &err) < 0)
    {
      tg__cli_print_file_error (o->file, &err);
      tg_graph_free (g);
      return NULL;
    }
  return g;
}

/* --- memory ------------------------------------------------------------ */

/* What a plan's job holds, as the plan estimated it for the batch system;
 * 0 when the job is not in the plan (tg_plan_run_job says so). */
static uint64_t
plan_job_memory (const TgCliEvalOptions *o, const TgGraph *g)
{
  TgPlan p;
  uint64_t need = 0;
  int ix, iy;

  if (tg_plan_make (g, o->nx, o->ny, &p, NULL) < 0)
    return 0;
  for (int j = 0; o->stage < p.n_stages && j < p.stages[o->stage].n_jobs; j++)
    {
      tg_plan_job_tile (&p, o->stage, j, &ix, &iy);
      if (ix == o->ix && iy == o->iy)
        need = tg_plan_job_memory (&p, g, o->stage, j);
    }
  tg_plan_clear (&p);
  return need;
}

/* Refuses, before anything runs, a build whose estimate is over
 * --memory-limit or the memory available (the kernel would kill it
 * without a word).  Returns 0 or the exit status, the message printed. */
static int
check_memory (const TgCliEvalOptions *o, TgEngine *engine, const TgGraph *g,
              const TgEvalHooks *hooks)
{
  uint64_t limit = o->memory_limit ? o->memory_limit : tg_memory_available ();
  char what[TG_ERROR_MESSAGE_MAX], lim[32];
  TgMemEstimate est;

  if (limit == 0)
    return 0;
  if (o->stage >= 0)
    {
      char need[32];
      est.peak = plan_job_memory (o, g);
      snprintf (what, sizeof what, "stage %d job%s needs about %s", o->stage,
                o->ix >= 0 ? " of a tile" : "", tg__cli_format_bytes (est.peak, need, sizeof need));
    }
  else if (tg_engine_estimate (engine, g, hooks, limit, &est, NULL) == 0)
    tg_mem_estimate_describe (&est, g, what, sizeof what);
  else
    return 0; /* the build names what is wrong with the graph */
  if (est.peak <= limit)
    return 0;
  fprintf (stderr, "tgraph %s: %s: %s; limit %s (%s)\ntgraph %s: nothing was written to %s/\n",
           CMD, o->file, what, tg__cli_format_bytes (limit, lim, sizeof lim),
           o->memory_limit ? "--memory-limit" : "the memory available; see --memory-limit", CMD,
           o->out_dir);
  return TG_CLI_EXIT_USAGE;
}

/* The HTML report of a finished build; returns the exit status. */
static int
write_report (const TgCliEvalOptions *o, const TgGraph *g, TgEngine *engine,
              const TgEvalReport *report, const Progress *progress, double seconds,
              const TgMemEstimate *est)
{
  TgCliReportInput in = {
    .path = o->report,
    .graph_file = o->file,
    .out_dir = o->out_dir,
    .graph = g,
    .results = progress->results,
    .report = report,
    .t_start = progress->t_start,
    .t_end = progress->t_end,
    .seconds = seconds,
    .threads = tg_engine_threads (engine),
    .estimate_peak = est->peak,
    .estimate_node = est->node,
  };
  TgError err;

  tg_error_clear (&err);
  if (tg__cli_eval_report_write (&in, &err) < 0)
    {
      fprintf (stderr, "tgraph %s: %s: cannot write the report: %s\n", CMD, o->report,
               err.message[0] ? err.message : tg_strerror (err.code));
      return TG_CLI_EXIT_FAILED;
    }
  if (!o->quiet)
    printf ("report: %s\n", o->report);
  return TG_CLI_EXIT_OK;
}

/* Builds G into the output folder with progress and cancellation; returns
 * the exit status. */
static int
build (const TgCliEvalOptions *o, const TgGraph *g)
{
  Progress progress;
  TgError err;

  tg_error_clear (&err);
  if (progress_init (&progress, g, o->quiet) < 0)
    {
      progress_clear (&progress);
      fprintf (stderr, "tgraph %s: out of memory\n", CMD);
      return TG_CLI_EXIT_FAILED;
    }

  TgCancel *cancel = tg_cancel_new ();
  progress.cancel = cancel;
  TgCliSignalWatch watch;
  bool watching = cancel && tg__cli_signal_watch_start (&watch, cancel) == 0;
  /* Created after the signals are blocked, so its threads never take them. */
  /* One-shot: no result is kept past its last reader, with or without a
   * report (which takes its thumbnails as the results come, on_result). */
  TgEngineOptions opts = { .threads = o->threads, .no_cache = true };
  TgEngine *engine = tg_engine_new (&opts);
  TgTiling tile = { o->nx, o->ny, o->ix, o->iy };
  TgEvalHooks hooks = { .progress = on_progress, .user = &progress, .cancel = cancel };
  if (o->report)
    {
      progress.results = calloc ((size_t) (progress.n_nodes > 0 ? progress.n_nodes : 1),
                                 sizeof *progress.results);
      tg_region_for_world (&progress.world, tg_graph_world_const (g),
                           tg_graph_world_const (g)->resolution);
      hooks.result = on_result;
    }
  /* --tile without --stage: that tile's grid exports, encoded, as a window
   * of the whole build (global nodes computed over the whole world). */
  if (o->stage < 0 && o->ix >= 0)
    {
      hooks.tiling = &tile;
      hooks.encode_tiles = true;
    }
  TgExportList *list = NULL;
  TgEvalReport report;
  memset (&report, 0, sizeof report);

  int rc, refused = 0;
  TgMemEstimate est = { .node = -1 };
  double t0 = now_s ();
  if (!engine || !cancel || (o->report && !progress.results))
    rc = tg_error_set (&err, TG_ENOMEM, "", "cannot start the engine");
  else if ((refused = check_memory (o, engine, g, &hooks)) != 0)
    rc = TG_ENOMEM;
  else if (o->report && tg_engine_estimate (engine, g, &hooks, 0, &est, &err) < 0)
    rc = err.code;
  else if (o->stage >= 0)
    rc = tg_plan_run_job (engine, g, o->out_dir, o->nx, o->ny, o->stage, o->ix, o->iy, &hooks,
                          &report, &err);
  else
    rc = tg_build (engine, g, base_name (o->file), o->out_dir, &hooks, &list, &report, &err);
  double seconds = now_s () - t0;

  int sig = watching ? tg__cli_signal_watch_stop (&watch) : 0;
  pthread_mutex_lock (&progress.lock);
  progress_erase (&progress);
  progress.quiet = true; /* no more drawing, whatever a late worker reports */
  pthread_mutex_unlock (&progress.lock);

  int status;
  print_warnings (o->file, g, &report);
  if (refused)
    status = refused;
  else if (rc == TG_ECANCELLED || (rc < 0 && sig))
    {
      fprintf (stderr, "tgraph %s: %s: cancelled; nothing was written to %s/\n", CMD, o->file,
               o->out_dir);
      status = 128 + (sig ? sig : SIGINT);
    }
  else if (rc < 0)
    {
      print_failure (o->file, g, &report, &err);
      status = TG_CLI_EXIT_FAILED;
      /* A failed build's report shows which node failed and why, and
       * what the others computed; it has no exports. */
      if (o->report && engine && tg_eval_report_first_failure (&report) >= 0)
        write_report (o, g, engine, &report, &progress, seconds, &est);
    }
  else
    {
      if (!o->quiet && o->stage >= 0)
        printf ("stage %d job%s done in %.2f s\n", o->stage, o->ix >= 0 ? " of a tile" : "",
                seconds);
      else if (!o->quiet)
        print_files (list, o->out_dir, seconds);
      status = TG_CLI_EXIT_OK;
      if (o->report)
        status = write_report (o, g, engine, &report, &progress, seconds, &est);
    }

  tg_export_list_free (list);
  tg_eval_report_clear (&report);
  if (engine)
    tg_engine_free (engine);
  if (cancel)
    tg_cancel_free (cancel);
  tg__cli_report_results_free (progress.results, progress.n_nodes);
  progress_clear (&progress);
  return status;
}

int
tg__cli_eval (int argc, char **argv)
{
  TgCliEvalOptions o = { .cmd = CMD, .out_dir = "out", .ix = -1, .iy = -1, .stage = -1 };
  int status;

  o.sets = calloc ((size_t) argc, sizeof *o.sets);
  if (!o.sets)
    return TG_CLI_EXIT_FAILED;
  status = tg__cli_eval_parse (argc, argv, &o);
  if (status == 0)
    {
      TgGraph *g = tg__cli_eval_prepare (&o);
      status = g ? build (&o, g) : TG_CLI_EXIT_USAGE;
      if (g)
        tg_graph_free (g);
    }
  free (o.sets);
  return status;
}
