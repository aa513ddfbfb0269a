/* `tgraph check FILE...`: load and validate graphs without evaluating
 * them, printing every problem with its place so a CI log points at the
 * line to fix.
 */
#include <stdio.h>
#include <string.h>

#include <tgformats/tgformats.h>

#include "cli.h"

/* 0 when FILE is a valid graph; prints its error otherwise, and a note
 * when it is an older format version (unless QUIET). */
static int
check_one (const char *file, bool quiet)
{
  TgTgraphLoadInfo info = { 0 };
  TgGraph *g = tg__cli_load_graph_info (file, &info);
  TgError err;
  int rc;

  if (!g)
    return -1;
  /* The loader validates too; this also covers a loader that only parses. */
  tg_error_clear (&err);
  rc = tg_graph_validate (g, &err);
  if (rc < 0)
    tg__cli_print_file_error (file, &err);
  else if (!quiet)
    tg__cli_print_upgrade_note (file, &info);
  tg_graph_free (g);
  return rc < 0 ? -1 : 0;
}

int
tg__cli_check (int argc, char **argv)
{
  bool quiet = false, options_done = false;
  int n_files = 0, n_bad = 0;

  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i];
      if (!options_done && a[0] == '-' && a[1] != '\0')
        {
          if (strcmp (a, "--") == 0)
            options_done = true;
          else if (strcmp (a, "-q") == 0 || strcmp (a, "--quiet") == 0)
            quiet = true;
          else
            return tg__cli_usage_error ("check", "unknown option \"%s\"", a);
        }
    }

  options_done = false;
  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i];
      if (!options_done && a[0] == '-' && a[1] != '\0')
        {
          options_done = strcmp (a, "--") == 0;
          continue;
        }
      n_files++;
      if (check_one (a, quiet) < 0)
        n_bad++;
      else if (!quiet)
        printf ("%s: ok\n", a);
    }

  if (n_files == 0)
    return tg__cli_usage_error ("check", "no file given");
  if (n_bad && n_files > 1)
    fprintf (stderr, "%d of %d files have errors\n", n_bad, n_files);
  return n_bad ? TG_CLI_EXIT_USAGE : TG_CLI_EXIT_OK;
}
