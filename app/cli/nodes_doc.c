/* The node reference, generated from the registry: `tgraph nodes --markdown`
 * writes docs/nodes.md and `tgraph nodes --man` the manual page
 * tgraph-nodes(7).  Both say the same things in the same order (category,
 * type, help, locality, ports, parameters with default, range, unit and
 * help); only the markup differs.  tests/cli/cli_nodes_doc.sh keeps the
 * checked-in files current.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MD_REGENERATE "build/app/cli/tgraph nodes --markdown > docs/nodes.md"
#define MAN_REGENERATE "build/app/cli/tgraph nodes --man > docs/tgraph-nodes.7"

static const char intro[] =
  "Every node type of this build, grouped by category as in the app's add-node menu: its "
  "ports, and its parameters as a .tgraph file spells them, with their defaults, accepted "
  "ranges and units.  Heights are fractions of the world's height (0..1) unless a unit says "
  "otherwise.";

/* What a node's locality means for evaluation and for tiled builds. */
static const char *
locality_text (const TgNodeDesc *d)
{
  switch (d->locality)
    {
    case TG_LOCALITY_LOCAL:
      return "Local: each sample depends only on the same sample of its inputs.";
    case TG_LOCALITY_APRON:
      return "Apron: reads a border of input samples around the region it computes.";
    case TG_LOCALITY_GLOBAL:
      return d->tiled ? "Global: needs the whole world; a tiled build runs it tile by tile "
                        "in steps."
                      : "Global: needs the whole world; a tiled build computes it in one job.";
    }
  return "";
}

static const char *
files_text (const TgNodeDesc *d)
{
  if (d->flags & TG_NODE_EXPORT)
    return " Writes files.";
  if (d->flags & TG_NODE_INPUT)
    return " Reads files.";
  return "";
}

/* A list parameter's range in the reference: its item count (the fields
 * get rows of their own). */
static void
doc_range (const TgParamDesc *p, char *buf, size_t size)
{
  size_t n = 0;

  buf[0] = '\0';
  if (p->type == TG_PARAM_LIST)
    snprintf (buf, size, "%.0f..%.0f items", p->min, p->max);
  else if (p->type == TG_PARAM_ENUM)
    for (int k = 0; p->choices && p->choices[k] && n + 1 < size; k++)
      n += (size_t) snprintf (buf + n, size - n, "%s%s", k ? ", " : "", p->choices[k]);
  else
    tg__cli_param_range (p, buf, size);
}

/* --- Markdown ------------------------------------------------------------------------ */

/* TEXT with the characters that Markdown or a table cell would take as markup escaped. */
static void
md_text (FILE *out, const char *text)
{
  for (const char *c = text ? text : ""; *c; c++)
    {
      if (strchr ("\\`*_<>|[]", *c))
        fputc ('\\', out);
      fputc (*c, out);
    }
}

/* TEXT as a code span in a table cell: only '|' needs escaping there. */
static void
md_code (FILE *out, const char *text)
{
  fputc ('`', out);
  for (const char *c = text; *c; c++)
    {
      if (*c == '|')
        fputc ('\\', out);
      fputc (*c, out);
    }
  fputc ('`', out);
}

static void
md_described (FILE *out, const char *label, const char *help)
{
  if (label && label[0])
    {
      fputs ("**", out);
      md_text (out, label);
      fputs (".**", out);
    }
  if (help && help[0])
    {
      fputs (label && label[0] ? " " : "", out);
      md_text (out, help);
    }
}

static void
md_ports (FILE *out, const char *dir, const TgPortDesc *ports, int n)
{
  for (int i = 0; i < n; i++)
    {
      fprintf (out, "| %s ", dir);
      md_code (out, ports[i].name);
      fprintf (out, " | %s%s | ", tg_port_type_name (ports[i].type),
               ports[i].optional ? ", optional" : "");
      md_described (out, ports[i].label, ports[i].help);
      fputs (" |\n", out);
    }
}

static void
md_param (FILE *out, const char *prefix, const TgParamDesc *p)
{
  char name[256], def[1024], range[512];

  snprintf (name, sizeof name, "%s%s", prefix, p->name);
  tg__cli_param_default (p, def, sizeof def);
  doc_range (p, range, sizeof range);
  fputs ("| ", out);
  md_code (out, name);
  fprintf (out, " | %s | ", tg_param_type_name (p->type));
  if (def[0])
    md_code (out, def);
  fputs (" | ", out);
  if (p->type == TG_PARAM_ENUM && p->choices)
    for (int k = 0; p->choices[k]; k++)
      {
        fputs (k ? ", " : "", out);
        md_code (out, p->choices[k]);
      }
  else
    md_text (out, range);
  fputs (" | ", out);
  md_text (out, p->unit);
  fputs (" | ", out);
  md_described (out, p->label, p->help);
  fputs (" |\n", out);
}

static void
md_node (FILE *out, const TgNodeDesc *d)
{
  fprintf (out, "\n### `%s`: ", d->type);
  md_text (out, d->label);
  fputs ("\n\n", out);
  if (d->help && d->help[0])
    {
      md_text (out, d->help);
      fputs (".\n\n", out);
    }
  fprintf (out, "%s%s Version %d.\n", locality_text (d), files_text (d), d->version);

  if (d->n_inputs + d->n_outputs > 0)
    {
      fputs ("\n| Port | Type | Description |\n|---|---|---|\n", out);
      md_ports (out, "in", d->inputs, d->n_inputs);
      md_ports (out, "out", d->outputs, d->n_outputs);
    }
  if (d->n_params == 0)
    return;
  fputs ("\n| Parameter | Type | Default | Range | Unit | Description |\n"
         "|---|---|---|---|---|---|\n",
         out);
  for (int k = 0; k < d->n_params; k++)
    {
      const TgParamDesc *p = &d->params[k];
      char prefix[256];

      md_param (out, "", p);
      snprintf (prefix, sizeof prefix, "%s[].", p->name);
      for (int f = 0; p->type == TG_PARAM_LIST && f < p->n_item_params; f++)
        md_param (out, prefix, &p->item_params[f]);
    }
}

void
tg__cli_nodes_markdown (FILE *out)
{
  TgCategory cats[TG_CATEGORY_COUNT];
  int n = tg_registry_count (), n_cats = tg__cli_node_categories (cats);

  fputs ("# Node reference\n\n"
         "<!-- Generated by `tgraph nodes --markdown` from the node registry: do not edit.\n"
         "     Regenerate with: " MD_REGENERATE " -->\n\n",
         out);
  fprintf (out, "%s The same text is the manual page tgraph-nodes(7).\n\n", intro);
  fprintf (out, "%d node types:\n\n", n);
  for (int k = 0; k < n_cats; k++)
    {
      bool first = true;
      fprintf (out, "- %s:", tg_category_name (cats[k]));
      for (int i = 0; i < n; i++)
        if (tg_registry_get (i)->category == cats[k])
          {
            fprintf (out, "%s `%s`", first ? "" : ",", tg_registry_get (i)->type);
            first = false;
          }
      fputs ("\n", out);
    }
  for (int k = 0; k < n_cats; k++)
    {
      fprintf (out, "\n## %s\n", tg_category_name (cats[k]));
      for (int i = 0; i < n; i++)
        if (tg_registry_get (i)->category == cats[k])
          md_node (out, tg_registry_get (i));
    }
}

/* --- roff (man(7)) --------------------------------------------------------------------- */

/* TEXT for roff: backslashes escaped, a '.' or '\'' that would start a
 * line kept from being read as a request, and UTF-8 as \[uXXXX] so the
 * page is ASCII (groff reads Latin-1 unless preconv runs).  VALUE: '-' as
 * a minus sign, not a hyphen, and a break point after each '|' of a long
 * list default. */
static void
man_text_full (FILE *out, const char *text, bool line_start, bool value)
{
  for (const unsigned char *c = (const unsigned char *) (text ? text : ""); *c; c++)
    {
      if (line_start && (*c == '.' || *c == '\''))
        fputs ("\\&", out);
      line_start = false;
      if (*c >= 0xc0)
        {
          int extra = *c >= 0xf0 ? 3 : *c >= 0xe0 ? 2 : 1;
          unsigned cp = *c & (0x3fu >> extra);
          for (; extra > 0 && (c[1] & 0xc0) == 0x80; extra--)
            cp = (cp << 6) | (*++c & 0x3fu);
          fprintf (out, "\\[u%04X]", cp);
        }
      else if (*c == '\\')
        fputs ("\\e", out);
      else if (*c == '-' && value)
        fputs ("\\-", out);
      else if (*c == '|' && value)
        fputs ("|\\:", out);
      else
        fputc (*c, out);
    }
}

static void
man_text (FILE *out, const char *text)
{
  man_text_full (out, text, true, false);
}

static void
man_described (FILE *out, const char *label, const char *help)
{
  if (label && label[0])
    {
      fputs ("\\fI", out);
      man_text_full (out, label, false, false);
      fputs (".\\fR", out);
    }
  if (help && help[0])
    {
      fputs (label && label[0] ? " " : "", out);
      man_text_full (out, help, !(label && label[0]), false);
    }
  fputs ("\n", out);
}

static void
man_ports (FILE *out, const char *dir, const TgPortDesc *ports, int n)
{
  for (int i = 0; i < n; i++)
    {
      fprintf (out, ".TP\n%s \\fB", dir);
      man_text_full (out, ports[i].name, false, false);
      fprintf (out, "\\fR (%s%s)\n", tg_port_type_name (ports[i].type),
               ports[i].optional ? ", optional" : "");
      man_described (out, ports[i].label, ports[i].help);
    }
}

static void
man_param (FILE *out, const char *prefix, const TgParamDesc *p)
{
  char def[1024], range[512];

  tg__cli_param_default (p, def, sizeof def);
  doc_range (p, range, sizeof range);
  fputs (".TP\n.B ", out);
  man_text_full (out, prefix, false, false);
  man_text_full (out, p->name, false, false);
  fprintf (out, "\n%s", tg_param_type_name (p->type));
  if (def[0])
    {
      fputs (", default ", out);
      man_text_full (out, def, false, true);
    }
  if (range[0])
    {
      fputs (", ", out);
      if (p->type == TG_PARAM_ENUM)
        fputs ("one of ", out);
      man_text_full (out, range, false, true);
    }
  if (p->unit && p->unit[0])
    {
      fputs (" ", out);
      man_text_full (out, p->unit, false, false);
    }
  fputs (".\n.br\n", out);
  man_described (out, p->label, p->help);
}

static void
man_node (FILE *out, const TgNodeDesc *d)
{
  fputs (".SS ", out);
  man_text_full (out, d->type, false, false);
  fputs (" \\(em ", out);
  man_text_full (out, d->label, false, false);
  fputs ("\n", out);
  if (d->help && d->help[0])
    {
      man_text (out, d->help);
      fputs (".\n.PP\n", out);
    }
  fprintf (out, "%s%s Version %d.\n", locality_text (d), files_text (d), d->version);
  if (d->n_inputs + d->n_outputs > 0)
    {
      fputs (".PP\nPorts:\n", out);
      man_ports (out, "in", d->inputs, d->n_inputs);
      man_ports (out, "out", d->outputs, d->n_outputs);
    }
  if (d->n_params > 0)
    {
      fputs (".PP\nParameters:\n", out);
      for (int k = 0; k < d->n_params; k++)
        {
          const TgParamDesc *p = &d->params[k];
          char prefix[256];

          man_param (out, "", p);
          snprintf (prefix, sizeof prefix, "%s[].", p->name);
          for (int f = 0; p->type == TG_PARAM_LIST && f < p->n_item_params; f++)
            man_param (out, prefix, &p->item_params[f]);
        }
    }
  fputs (".PP\n", out);
}

void
tg__cli_nodes_man (FILE *out)
{
  TgCategory cats[TG_CATEGORY_COUNT];
  int n = tg_registry_count (), n_cats = tg__cli_node_categories (cats);

  fputs (".\\\" Generated by `tgraph nodes --man` from the node registry: do not edit.\n"
         ".\\\" Regenerate with: " MAN_REGENERATE "\n"
         ".TH TGRAPH-NODES 7 \"\" \"Terrane " TG_VERSION_STRING "\" \"Terrane Manual\"\n"
         ".nh\n"
         ".SH NAME\n"
         "tgraph-nodes \\- the node types of Terrane graphs\n"
         ".SH DESCRIPTION\n",
         out);
  man_text (out, intro);
  fputs (" The same text is docs/nodes.md in the source tree.\n.PP\n", out);
  fprintf (out, "%d node types:\n", n);
  for (int k = 0; k < n_cats; k++)
    {
      fputs (".TP\n", out);
      man_text (out, tg_category_name (cats[k]));
      fputs ("\n", out);
      bool first = true;
      for (int i = 0; i < n; i++)
        if (tg_registry_get (i)->category == cats[k])
          {
            fprintf (out, "%s%s", first ? "" : ", ", tg_registry_get (i)->type);
            first = false;
          }
      fputs ("\n", out);
    }
  for (int k = 0; k < n_cats; k++)
    {
      fputs (".SH ", out);
      for (const char *c = tg_category_name (cats[k]); *c; c++)
        fputc (toupper ((unsigned char) *c), out);
      fputs ("\n", out);
      for (int i = 0; i < n; i++)
        if (tg_registry_get (i)->category == cats[k])
          man_node (out, tg_registry_get (i));
    }
  fputs (".SH SEE ALSO\n.BR tgraph (1)\n", out);
}
