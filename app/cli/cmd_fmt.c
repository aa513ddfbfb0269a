/* `tgraph fmt FILE... [--check]`: rewrite graphs in the canonical form
 * that tg_tgraph_save_string defines (stable key order, every parameter),
 * so that diffs of .tgraph files in version control stay meaningful.
 * The rewrite is atomic (tg_tgraph_save_file: temp file + rename).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgformats/tgformats.h>

#include "cli.h"

/* 1-based line of the first byte where A and B differ. */
static int
first_difference_line (const char *a, const char *b)
{
  int line = 1;
  for (; *a && *a == *b; a++, b++)
    if (*a == '\n')
      line++;
  return line;
}

/* Returns 0 (canonical or rewritten), 1 (--check: differs), 2 (error). */
static int
fmt_one (const char *file, bool check)
{
  /* The graph first: its loader refuses a FIFO or a folder with a clear
   * message, where reading the text would block on a FIFO. */
  TgTgraphLoadInfo info = { 0 };
  TgGraph *g = tg__cli_load_graph_info (file, &info);
  if (!g)
    return TG_CLI_EXIT_USAGE;

  size_t len = 0;
  char *text = tg__cli_read_file (file, &len);
  if (!text)
    {
      fprintf (stderr, "%s: cannot read: %s\n", file, strerror (errno));
      tg_graph_free (g);
      return TG_CLI_EXIT_USAGE;
    }

  TgError err;
  tg_error_clear (&err);
  char *canon = tg_tgraph_save_string (g, &err);
  int status = TG_CLI_EXIT_OK;
  if (!canon)
    {
      tg__cli_print_file_error (file, &err);
      status = TG_CLI_EXIT_USAGE;
    }
  else if (strlen (canon) == len && memcmp (canon, text, len) == 0)
    {
      if (!check)
        printf ("%s: already canonical\n", file);
    }
  else if (check)
    {
      tg__cli_print_upgrade_note (file, &info);
      fprintf (stderr, "%s:%d: not in canonical form (run 'tgraph fmt %s')\n", file,
               first_difference_line (text, canon), file);
      status = TG_CLI_EXIT_FAILED;
    }
  else
    {
      /* Write through a symlink rather than replacing it with a file. */
      char real[PATH_MAX];
      const char *target = realpath (file, real) ? real : file;
      if (tg_tgraph_save_file (g, target, &err) < 0)
        {
          tg__cli_print_file_error (file, &err);
          status = TG_CLI_EXIT_USAGE;
        }
      else if (info.version < TG_FORMAT_VERSION)
        printf ("%s: reformatted, upgraded from format version %d to %d\n", file, info.version,
                TG_FORMAT_VERSION);
      else
        printf ("%s: reformatted\n", file);
    }

  free (canon);
  free (text);
  tg_graph_free (g);
  return status;
}

int
tg__cli_fmt (int argc, char **argv)
{
  bool check = false, options_done = false;
  int n_files = 0, status = TG_CLI_EXIT_OK;

  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i];
      if (options_done || a[0] != '-' || a[1] == '\0')
        continue;
      if (strcmp (a, "--") == 0)
        options_done = true;
      else if (strcmp (a, "--check") == 0)
        check = true;
      else
        return tg__cli_usage_error ("fmt", "unknown option \"%s\"", a);
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
      int rc = fmt_one (a, check);
      /* A load error (2) outranks a formatting difference (1). */
      if (rc > status)
        status = rc;
    }
  if (n_files == 0)
    return tg__cli_usage_error ("fmt", "no file given");
  return status;
}
