/* `tgraph diff OLD NEW`: what changed between two graphs, by meaning
 * rather than by text (tg_graph_diff), for people (text), for merge
 * requests (markdown) and for scripts (JSON, data/schema/diff.schema.json).
 * Exit status as diff(1): 0 equal, 1 different, 2 trouble.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgformats/tgformats.h>

#include "cli.h"

/* In the order of --format's choices. */
typedef enum
{
  DIFF_TEXT,
  DIFF_JSON,
  DIFF_MARKDOWN,
} DiffFormat;

/* Whether KIND is a change of the editor's data only (the "ui" block:
 * a move, the viewer's pin), which --no-ui leaves out. */
static bool
editor_only (TgDiffKind kind)
{
  return kind == TG_DIFF_NODE_MOVED || kind == TG_DIFF_NODE_PIN;
}

/* A value and its unit: "350 m". */
static void
put_value (FILE *f, const char *v, const char *unit, bool code)
{
  const char *tick = code ? (strchr (v, '`') ? "`` " : "`") : "";
  const char *tock = code ? (strchr (v, '`') ? " ``" : "`") : "";

  fprintf (f, "%s%s%s%s%s", tick, v, tock, unit ? " " : "", unit ? unit : "");
}

/* One change as a line of text or a markdown list item (CODE: values in
 * code spans). */
static void
print_change (FILE *f, const TgDiffEntry *e, bool code)
{
  const char *q = code ? "`" : "";

  switch (e->kind)
    {
    case TG_DIFF_WORLD:
      fprintf (f, "world %s%s%s: ", q, e->name, q);
      break;
    case TG_DIFF_NODE_REMOVED:
    case TG_DIFF_NODE_ADDED:
      {
        /* The type, a JSON string of plain characters, without its quotes. */
        const char *type = e->kind == TG_DIFF_NODE_ADDED ? e->new_value : e->old_value;
        fprintf (f, "%s node %s%s%s (%.*s)\n", e->kind == TG_DIFF_NODE_ADDED ? "added" : "removed",
                 q, e->node, q, (int) strlen (type) - 2, type + 1);
        return;
      }
    case TG_DIFF_NODE_RENAMED:
      fprintf (f, "renamed node ");
      break;
    case TG_DIFF_NODE_TYPE:
      fprintf (f, "node %s%s%s type: ", q, e->node, q);
      break;
    case TG_DIFF_PARAM:
      fprintf (f, "%s%s.%s%s: ", q, e->node, e->name, q);
      break;
    case TG_DIFF_LINK_REMOVED:
    case TG_DIFF_LINK_ADDED:
      fprintf (f, "%s link %s%s → %s%s\n", e->kind == TG_DIFF_LINK_ADDED ? "added" : "removed", q,
               e->node, e->name, q);
      return;
    case TG_DIFF_NODE_MOVED:
      fprintf (f, "moved %s%s%s: ", q, e->node, q);
      break;
    case TG_DIFF_NODE_BYPASS:
      fprintf (f, "node %s%s%s bypass: ", q, e->node, q);
      break;
    case TG_DIFF_NODE_PIN:
      fprintf (f, "%s %s%s%s\n", strcmp (e->new_value, "true") == 0 ? "pinned" : "unpinned", q,
               e->node, q);
      return;
    }
  put_value (f, e->old_value, e->unit, code);
  fputs (" → ", f);
  put_value (f, e->new_value, e->unit, code);
  fputc ('\n', f);
}

/* The mark before a change in the text form, as diff -u marks lines. */
static const char *
sign (TgDiffKind kind)
{
  if (kind == TG_DIFF_NODE_ADDED || kind == TG_DIFF_LINK_ADDED)
    return "+ ";
  if (kind == TG_DIFF_NODE_REMOVED || kind == TG_DIFF_LINK_REMOVED)
    return "- ";
  return "~ ";
}

static void
print_text (const TgGraphDiff *d, const char *old_file, const char *new_file, bool ui)
{
  bool moves = false;

  printf ("--- %s\n+++ %s\n", old_file, new_file);
  for (int k = 0; k < d->n; k++)
    {
      const TgDiffEntry *e = &d->entries[k];
      if (editor_only (e->kind))
        {
          if (!ui)
            continue;
          if (!moves)
            printf ("editor layout only (the nodes' \"ui\" blocks):\n");
          moves = true;
          fputs ("  ", stdout);
        }
      else
        fputs (sign (e->kind), stdout);
      print_change (stdout, e, false);
    }
}

static void
print_markdown (const TgGraphDiff *d, const char *old_file, const char *new_file, int n_shown,
                bool ui)
{
  int n_moves = 0, n_pins = 0;

  printf ("#### Graph changes: `%s` → `%s`\n\n", old_file, new_file);
  if (n_shown == 0)
    {
      printf ("No changes.\n");
      return;
    }
  for (int k = 0; k < d->n; k++)
    if (!editor_only (d->entries[k].kind))
      {
        fputs ("- ", stdout);
        print_change (stdout, &d->entries[k], true);
      }
    else if (d->entries[k].kind == TG_DIFF_NODE_MOVED)
      n_moves++;
    else
      n_pins++;
  if (!ui || n_moves + n_pins == 0)
    return;
  printf ("\n<details><summary>Layout only: ");
  if (n_moves)
    printf ("%d node%s moved", n_moves, n_moves == 1 ? "" : "s");
  if (n_pins)
    printf ("%s%d pin%s changed", n_moves ? " and " : "", n_pins, n_pins == 1 ? "" : "s");
  printf (" in the editor</summary>\n\n");
  for (int k = 0; k < d->n; k++)
    if (editor_only (d->entries[k].kind))
      {
        fputs ("- ", stdout);
        print_change (stdout, &d->entries[k], true);
      }
  printf ("\n</details>\n");
}

static void
put_json_string (const char *key, const char *s)
{
  char *q = tg_json_quote (s);

  printf (", \"%s\": %s", key, q ? q : "null");
  free (q);
}

static void
print_json (const TgGraphDiff *d, const char *old_file, const char *new_file, int n_shown,
            bool ui)
{
  char *qo = tg_json_quote (old_file), *qn = tg_json_quote (new_file);
  bool first = true;

  printf ("{\"old\": %s, \"new\": %s, \"equal\": %s, \"changes\": [", qo ? qo : "null",
          qn ? qn : "null", n_shown ? "false" : "true");
  free (qo);
  free (qn);
  for (int k = 0; k < d->n; k++)
    {
      const TgDiffEntry *e = &d->entries[k];
      if (editor_only (e->kind) && !ui)
        continue;
      printf ("%s\n  {\"kind\": \"%s\"", first ? "" : ",", tg_diff_kind_name (e->kind));
      first = false;
      if (e->kind == TG_DIFF_LINK_ADDED || e->kind == TG_DIFF_LINK_REMOVED)
        {
          put_json_string ("from", e->node);
          put_json_string ("to", e->name);
        }
      else if (e->kind == TG_DIFF_NODE_ADDED || e->kind == TG_DIFF_NODE_REMOVED)
        {
          put_json_string ("node", e->node);
          printf (", \"type\": %s",
                  e->kind == TG_DIFF_NODE_ADDED ? e->new_value : e->old_value);
        }
      else
        {
          if (e->node)
            put_json_string ("node", e->node);
          if (e->name)
            put_json_string ("name", e->name);
          printf (", \"old\": %s, \"new\": %s", e->old_value, e->new_value);
          if (e->unit)
            put_json_string ("unit", e->unit);
        }
      putchar ('}');
    }
  printf ("%s]}\n", first ? "" : "\n");
}

/* Loads FILE for comparing: an unfinished graph (not yet valid for
 * evaluation) compares too.  NULL, the error printed, on failure. */
static TgGraph *
load (const char *file)
{
  TgError err;
  TgGraph *g = tg__cli_load_graph_ex (file, TG_TGRAPH_LOAD_NO_VALIDATE, NULL, &err);

  if (!g)
    tg__cli_print_file_error (file, &err);
  return g;
}

int
tg__cli_diff (int argc, char **argv)
{
  DiffFormat format = DIFF_TEXT;
  const char *files[2] = { NULL, NULL };
  bool ui = true, options_done = false;
  int n_files = 0, n_shown = 0, rc;
  TgGraph *a = NULL, *b = NULL;
  TgGraphDiff d;
  TgError err;

  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i], *value = NULL;
      if (options_done || arg[0] != '-' || arg[1] == '\0')
        {
          if (n_files == 2)
            return tg__cli_usage_error ("diff", "expected two files, got a third: \"%s\"", arg);
          files[n_files++] = arg;
          continue;
        }
      if (strcmp (arg, "--") == 0)
        options_done = true;
      else if (strcmp (arg, "--no-ui") == 0)
        ui = false;
      else if ((rc = tg__cli_option_value ("diff", argc, argv, &i, "--format", NULL, &value)) != 0)
        {
          static const char *const formats[] = { "text", "json", "markdown", NULL };
          int f;
          if (rc < 0 || tg__cli_parse_choice ("diff", "--format", value, formats, &f) < 0)
            return TG_CLI_EXIT_USAGE;
          format = (DiffFormat) f;
        }
      else
        return tg__cli_usage_error ("diff", "unknown option \"%s\"", arg);
    }
  if (n_files != 2)
    return tg__cli_usage_error ("diff", "expected two files, OLD and NEW");

  if (!(a = load (files[0])) || !(b = load (files[1])))
    {
      tg_graph_free (a);
      return TG_CLI_EXIT_USAGE;
    }
  tg_error_clear (&err);
  rc = tg_graph_diff (a, b, &d, &err);
  tg_graph_free (a);
  tg_graph_free (b);
  if (rc < 0)
    {
      fprintf (stderr, "tgraph diff: %s\n", err.message);
      return TG_CLI_EXIT_USAGE;
    }

  for (int k = 0; k < d.n; k++)
    if (ui || !editor_only (d.entries[k].kind))
      n_shown++;
  if (format == DIFF_JSON)
    print_json (&d, files[0], files[1], n_shown, ui);
  else if (format == DIFF_MARKDOWN)
    print_markdown (&d, files[0], files[1], n_shown, ui);
  else if (n_shown)
    print_text (&d, files[0], files[1], ui);
  tg_graph_diff_clear (&d);
  return n_shown ? TG_CLI_EXIT_FAILED : TG_CLI_EXIT_OK;
}
