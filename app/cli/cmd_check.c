/* `tgraph check FILE...`: load and validate graphs without evaluating
 * them, printing every problem with its place so a CI log points at the
 * line to fix: as compilers do (text), as JSON Lines for editors and
 * scripts (one object a message, data/schema/check-message.schema.json),
 * or as GitHub Actions workflow commands that annotate the line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgformats/tgformats.h>

#include "cli.h"

/* In the order of --format's choices. */
typedef enum
{
  CHECK_TEXT,
  CHECK_JSON,
  CHECK_GITHUB,
} CheckFormat;

/* One message about a file; ERR's path, node id and place (or none, for a note). */
typedef struct
{
  const char *file;
  const char *severity; /* "error", "warning" or "note" */
  const char *message;
  const TgError *err;   /* NULL for a note about the whole file */
} CheckMessage;

/* "key": "S" with S quoted as JSON, or "key": null. */
static void
put_json_field (const char *key, const char *s, bool first)
{
  char *q = s && s[0] ? tg_json_quote (s) : NULL;

  printf ("%s\"%s\": %s", first ? "" : ", ", key, q ? q : "null");
  free (q);
}

static void
put_json_int (const char *key, int v)
{
  if (v > 0)
    printf (", \"%s\": %d", key, v);
  else
    printf (", \"%s\": null", key);
}

static void
print_json (const CheckMessage *m)
{
  const TgError *e = m->err;

  putchar ('{');
  put_json_field ("file", m->file, true);
  put_json_int ("line", e ? e->line : 0);
  put_json_int ("column", e && e->line > 0 ? (e->column > 0 ? e->column : 1) : 0);
  put_json_field ("path", e ? e->path : NULL, false);
  put_json_field ("node_id", e ? e->node_id : NULL, false);
  put_json_field ("message", m->message, false);
  put_json_field ("severity", m->severity, false);
  fputs ("}\n", stdout);
}

/* GitHub's workflow commands read "%", CR and LF as escapes in a
 * message; a property value also ends at ':' or ','. */
static void
put_github (const char *s, bool property)
{
  for (; *s; s++)
    {
      if (*s == '%')
        fputs ("%25", stdout);
      else if (*s == '\r')
        fputs ("%0D", stdout);
      else if (*s == '\n')
        fputs ("%0A", stdout);
      else if (property && *s == ':')
        fputs ("%3A", stdout);
      else if (property && *s == ',')
        fputs ("%2C", stdout);
      else
        putchar (*s);
    }
}

static void
print_github (const CheckMessage *m)
{
  const TgError *e = m->err;
  char path[2 * TG_ERROR_PATH_MAX + 16];

  printf ("::%s file=", strcmp (m->severity, "note") == 0 ? "notice" : m->severity);
  put_github (m->file, true);
  if (e && e->line > 0)
    printf (",line=%d,col=%d", e->line, e->column > 0 ? e->column : 1);
  fputs (",title=tgraph check::", stdout);
  if (e && e->path[0])
    {
      put_github (tg_error_format_path (e, path, sizeof path), false);
      fputs (": ", stdout);
    }
  put_github (m->message, false);
  putchar ('\n');
}

static void
report (CheckFormat format, const CheckMessage *m)
{
  if (format == CHECK_JSON)
    print_json (m);
  else if (format == CHECK_GITHUB)
    print_github (m);
  else if (m->err && strcmp (m->severity, "error") == 0)
    tg__cli_print_file_error (m->file, m->err);
  else if (m->err)
    {
      char path[2 * TG_ERROR_PATH_MAX + 16];
      fprintf (stderr, "%s: %s: %s: %s\n", m->file, m->severity,
               tg_error_format_path (m->err, path, sizeof path), m->message);
    }
  else
    fprintf (stderr, "%s: %s: %s\n", m->file, m->severity, m->message);
}

/* The warnings of G's nodes (a feature smaller than two cells), which do
 * not fail the check, and a note for each bypassed node (unless QUIET). */
static void
report_nodes (const char *file, const TgGraph *g, bool quiet, CheckFormat format)
{
  for (int i = 0; i < tg_graph_n_nodes (g); i++)
    {
      TgError w;
      if (tg_graph_node_warning (g, i, &w))
        report (format, &(CheckMessage){ file, "warning", w.message, &w });
      if (!quiet && tg_graph_node_bypass (g, i))
        {
          const TgNodeDesc *d = tg_graph_node_desc (g, i);
          char path[32];
          tg_error_clear (&w);
          snprintf (path, sizeof path, "nodes[%d].ui.bypass", i);
          tg_error_set (&w, 0, path, "node \"%s\" is bypassed: its \"%s\" input passes "
                        "through to its \"%s\" output",
                        tg_graph_node_id (g, i), d->inputs[tg_node_desc_bypass_input (d)].name,
                        d->outputs[0].name);
          tg_error_set_node_id (&w, tg_graph_node_id (g, i));
          report (format, &(CheckMessage){ file, "note", w.message, &w });
        }
    }
}

/* 0 when FILE is a valid graph; reports its error otherwise, and a note
 * when it is an older format version (unless QUIET). */
static int
check_one (const char *file, bool quiet, CheckFormat format)
{
  TgTgraphLoadInfo info = { 0 };
  TgError err;
  TgGraph *g = tg__cli_load_graph_ex (file, 0, &info, &err);
  char note[1024];
  int rc = -1;

  /* The loader validates too; this also covers a loader that only parses. */
  if (g)
    {
      tg_error_clear (&err);
      rc = tg_graph_validate (g, &err);
      if (rc == 0)
        report_nodes (file, g, quiet, format);
      tg_graph_free (g);
    }
  if (rc < 0)
    {
      CheckMessage m = { file, "error", err.message[0] ? err.message : tg_strerror (err.code),
                         &err };
      report (format, &m);
      return -1;
    }
  if (!quiet && tg__cli_upgrade_note (file, &info, note, sizeof note))
    report (format, &(CheckMessage){ file, "note", note, NULL });
  return 0;
}

int
tg__cli_check (int argc, char **argv)
{
  bool quiet = false, options_done = false;
  CheckFormat format = CHECK_TEXT;
  int n_files = 0, n_bad = 0;

  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i], *value = NULL;
      if (options_done || a[0] != '-' || a[1] == '\0')
        continue;
      if (strcmp (a, "--") == 0)
        options_done = true;
      else if (strcmp (a, "-q") == 0 || strcmp (a, "--quiet") == 0)
        quiet = true;
      else
        {
          int got = tg__cli_option_value ("check", argc, argv, &i, "--format", NULL, &value);
          if (got < 0)
            return TG_CLI_EXIT_USAGE;
          if (got == 0)
            return tg__cli_usage_error ("check", "unknown option \"%s\"", a);
          static const char *const formats[] = { "text", "json", "github", NULL };
          int f;
          if (tg__cli_parse_choice ("check", "--format", value, formats, &f) < 0)
            return TG_CLI_EXIT_USAGE;
          format = (CheckFormat) f;
        }
    }

  options_done = false;
  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i];
      if (!options_done && a[0] == '-' && a[1] != '\0')
        {
          options_done = strcmp (a, "--") == 0;
          /* Skip the value of a separate "--format VALUE". */
          if (strcmp (a, "--format") == 0)
            i++;
          continue;
        }
      n_files++;
      if (check_one (a, quiet, format) < 0)
        n_bad++;
      else if (!quiet && format == CHECK_TEXT)
        printf ("%s: ok\n", a);
    }

  if (n_files == 0)
    return tg__cli_usage_error ("check", "no file given");
  fflush (stdout); /* the messages before the count, when both go to one log */
  if (n_bad && n_files > 1)
    fprintf (stderr, "%d of %d files have errors\n", n_bad, n_files);
  return n_bad ? TG_CLI_EXIT_USAGE : TG_CLI_EXIT_OK;
}
