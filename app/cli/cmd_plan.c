/* `tgraph plan` and `tgraph stitch`: a tiled world build on GNU parallel
 * or Slurm.  `plan` writes the plan folder (formats/plan_write.c), its
 * jobs are `tgraph eval ... --stage N [--tile IX,IY]` (cmd_eval.c), and
 * `stitch` joins their results into the whole world's exports, the same
 * bytes as `tgraph eval` of the whole world.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tgformats/plan.h>
#include <tgformats/tgformats.h>

#include "cli.h"

static const char *
base_name (const char *path)
{
  const char *s = strrchr (path, '/');
  return s ? s + 1 : path;
}

static const char *
stage_kind (TgStageKind k)
{
  switch (k)
    {
    case TG_STAGE_STEP:
      return "tiles";
    case TG_STAGE_REDUCE:
      return "reduce";
    case TG_STAGE_NODE:
      return "whole";
    case TG_STAGE_STORE:
      return "store";
    case TG_STAGE_EXPORT:
    default:
      return "export";
    }
}

static void
print_summary (const TgGraph *g, const TgPlan *p, const char *dir)
{
  char size[32];
  uint64_t peak = 0;
  int jobs = 0;

  printf ("plan in %s/: %d,%d tiles of about %dx%d samples, %d stage%s\n", dir, p->nx, p->ny,
          p->full.full_w / p->nx, p->full.full_h / p->ny, p->n_stages, p->n_stages == 1 ? "" : "s");
  for (int s = 0; s < p->n_stages; s++)
    {
      const TgStage *st = &p->stages[s];
      uint64_t m = 0;
      for (int j = 0; j < st->n_jobs; j++)
        {
          uint64_t mj = tg_plan_job_memory (p, g, s, j);
          m = mj > m ? mj : m;
        }
      peak = m > peak ? m : peak;
      jobs += st->n_jobs;
      printf ("  %02d  %-6s %4d job%s  up to %9s", s, stage_kind (st->kind), st->n_jobs,
              st->n_jobs == 1 ? " " : "s", tg__cli_format_bytes (m, size, sizeof size));
      if (st->kind == TG_STAGE_EXPORT)
        printf ("  exports%s%s\n", st->tiles ? " (tiles)" : "", st->whole ? " (meshes, points)" : "");
      else if (st->kind == TG_STAGE_NODE)
        printf ("  %s (%s, no tiled scheme: one job over the whole world)\n",
                tg_graph_node_id (g, st->node), tg_graph_node_desc (g, st->node)->type);
      else if (st->kind == TG_STAGE_STORE)
        printf ("  %s (%s) kept per tile for the halo of a step after it\n",
                tg_graph_node_id (g, st->node), tg_graph_node_desc (g, st->node)->type);
      else
        printf ("  %s (%s) step %d\n", tg_graph_node_id (g, st->node),
                tg_graph_node_desc (g, st->node)->type, st->step);
    }
  printf ("%d jobs; the largest needs about %s\n", jobs, tg__cli_format_bytes (peak, size, sizeof size));
  printf ("run:    %s/run-parallel.sh        (GNU parallel; --sshloginfile FILE for many machines)\n"
          "   or:  %s/submit-slurm.sh        (Slurm job arrays)\n"
          "then:   tgraph stitch %s -o OUT\n",
          dir, dir, dir);
}

int
tg__cli_plan (int argc, char **argv)
{
  TgCliEvalOptions o = { .cmd = "plan", .out_dir = "plan", .ix = -1, .iy = -1, .stage = -1 };
  TgPlanWriteOptions wo = { 0 };
  TgPlan p;
  TgError err;
  TgGraph *g = NULL;
  char exe[PATH_MAX];
  ssize_t n;
  int status;

  o.sets = calloc ((size_t) argc, sizeof *o.sets);
  if (!o.sets)
    return TG_CLI_EXIT_FAILED;
  status = tg__cli_eval_parse (argc, argv, &o);
  if (status == 0 && !(g = tg__cli_eval_prepare (&o)))
    status = TG_CLI_EXIT_USAGE;
  if (status == 0)
    {
      tg_error_clear (&err);
      if (tg_plan_make (g, o.nx, o.ny, &p, &err) < 0)
        {
          tg__cli_print_file_error (o.file, &err);
          status = TG_CLI_EXIT_USAGE;
        }
    }
  if (status == 0)
    {
      /* Jobs run the tgraph that planned them unless TGRAPH says otherwise. */
      n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
      exe[n > 0 ? n : 0] = '\0';
      wo.graph_name = base_name (o.file);
      wo.tgraph = n > 0 ? exe : "tgraph";
      wo.threads = o.threads;
      wo.partition = o.partition;
      wo.time = o.time;
      wo.mem = o.mem;
      tg_error_clear (&err);
      if (tg_plan_write (g, &p, o.out_dir, &wo, &err) < 0)
        {
          fprintf (stderr, "tgraph plan: %s\n", err.message);
          status = TG_CLI_EXIT_USAGE;
        }
      else if (!o.quiet)
        print_summary (g, &p, o.out_dir);
      tg_plan_clear (&p);
    }
  tg_graph_free (g);
  free (o.sets);
  return status;
}

/* --- stitch ------------------------------------------------------------------ */

typedef struct
{
  bool tty, drawn;
} StitchProgress;

static void
stitch_progress (void *user, int done, int total)
{
  StitchProgress *sp = user;

  if (!sp->tty)
    return;
  fprintf (stderr, "\r\033[Kstitch: %d/%d files", done, total);
  fflush (stderr);
  sp->drawn = true;
}

int
tg__cli_stitch (int argc, char **argv)
{
  const char *dir = NULL, *out = "out", *v;
  TgStitchOptions so = { 0 };
  bool quiet = false;
  StitchProgress sp = { isatty (STDERR_FILENO) == 1, false };
  TgCliSignalWatch watch;
  TgExportList *list;
  TgCancel *cancel;
  TgError err;
  bool watching;
  int rc, sig, m;

  for (int i = 1; i < argc; i++)
    {
      if ((m = tg__cli_option_value ("stitch", argc, argv, &i, "--output", "-o", &v)) != 0)
        {
          if (m < 0)
            return TG_CLI_EXIT_USAGE;
          out = v;
        }
      else if ((m = tg__cli_option_value ("stitch", argc, argv, &i, "--tile-files", NULL, &v)) != 0)
        {
          static const char *const kinds[] = { "unreal", "unity", NULL };
          static const TgTileFiles as[] = { TG_TILE_FILES_UNREAL, TG_TILE_FILES_UNITY };
          int k;
          if (m < 0 || tg__cli_parse_choice ("stitch", "--tile-files", v, kinds, &k) < 0)
            return TG_CLI_EXIT_USAGE;
          so.tile_files = as[k];
        }
      else if ((m = tg__cli_option_value ("stitch", argc, argv, &i, "--tile-size", NULL, &v)) != 0)
        {
          if (m < 0 || tg__cli_parse_int ("stitch", "--tile-size", v, 2, 16385, &so.tile_size) < 0)
            return TG_CLI_EXIT_USAGE;
        }
      else if (strcmp (argv[i], "-q") == 0 || strcmp (argv[i], "--quiet") == 0)
        quiet = true;
      else if (argv[i][0] == '-')
        return tg__cli_usage_error ("stitch", "unknown option \"%s\"", argv[i]);
      else if (dir)
        return tg__cli_usage_error ("stitch", "expected one plan folder, got \"%s\" and \"%s\"",
                                    dir, argv[i]);
      else
        dir = argv[i];
    }
  if (!dir)
    return tg__cli_usage_error ("stitch", "no plan folder given");
  if (so.tile_size && !so.tile_files)
    return tg__cli_usage_error ("stitch", "--tile-size needs --tile-files unreal|unity");
  sp.tty = sp.tty && !quiet;
  cancel = tg_cancel_new ();
  watching = cancel && tg__cli_signal_watch_start (&watch, cancel) == 0;
  tg_error_clear (&err);
  rc = tg_stitch (dir, out, &so, cancel, stitch_progress, &sp, &list, &err);
  sig = watching ? tg__cli_signal_watch_stop (&watch) : 0;
  if (sp.drawn)
    fprintf (stderr, "\r\033[K");
  if (rc == TG_ECANCELLED || (rc < 0 && sig))
    {
      fprintf (stderr, "tgraph stitch: cancelled; nothing was written to %s/\n", out);
      rc = 128 + (sig ? sig : 2);
    }
  else if (rc < 0)
    {
      fprintf (stderr, "tgraph stitch: %s: %s\n", dir, err.message);
      /* A missing or stale part is the plan's state, not a usage error. */
      rc = rc == TG_EMISSING || rc == TG_EINVAL || rc == TG_EPARSE || rc == TG_ERANGE
               ? TG_CLI_EXIT_USAGE
               : TG_CLI_EXIT_FAILED;
    }
  else
    {
      int n = tg_export_list_n_files (list);
      if (!quiet)
        printf ("stitched %d file%s into %s/\n", n, n == 1 ? "" : "s", out);
      tg_export_list_free (list);
      rc = TG_CLI_EXIT_OK;
    }
  tg_cancel_free (cancel);
  return rc;
}
