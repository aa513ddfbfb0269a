/* `tgraph nodes [--json|--markdown|--man]`: the node catalogue of this
 * build, read from the registry (the single source the schema and the
 * GUI's menus also use).  The reference documents are in nodes_doc.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgformats/tgformats.h>

#include "cli.h"

static void
print_ports (const char *what, const TgPortDesc *ports, int n)
{
  printf ("  %-8s", what);
  if (n == 0)
    printf ("-");
  for (int i = 0; i < n; i++)
    printf ("%s%s (%s%s)", i ? ", " : "", ports[i].name, tg_port_type_name (ports[i].type),
            ports[i].optional ? ", optional" : "");
  printf ("\n");
}

void
tg__cli_param_default (const TgParamDesc *d, char *buf, size_t size)
{
  switch (d->type)
    {
    case TG_PARAM_FLOAT:
      snprintf (buf, size, "%.10g", d->def);
      break;
    case TG_PARAM_INT:
    case TG_PARAM_SEED:
      snprintf (buf, size, "%d", (int) d->def);
      break;
    case TG_PARAM_BOOL:
      snprintf (buf, size, "%s", d->def != 0.0 ? "true" : "false");
      break;
    case TG_PARAM_ENUM:
      snprintf (buf, size, "%s", d->def_s ? d->def_s : (d->choices ? d->choices[0] : ""));
      break;
    case TG_PARAM_STRING:
    case TG_PARAM_INPUT_PATH:
    case TG_PARAM_OUTPUT_PATH:
      if (d->flags & TG_PARAM_REQUIRED)
        snprintf (buf, size, "(required)");
      else
        snprintf (buf, size, "\"%s\"", d->def_s ? d->def_s : "");
      break;
    case TG_PARAM_VEC2:
      snprintf (buf, size, "[%.10g, %.10g]", d->def_v[0], d->def_v[1]);
      break;
    case TG_PARAM_VEC3:
      snprintf (buf, size, "[%.10g, %.10g, %.10g]", d->def_v[0], d->def_v[1], d->def_v[2]);
      break;
    case TG_PARAM_COLOR:
      {
        char hex[10];
        snprintf (buf, size, "%s", tg_color_format (d->def_v, hex));
      }
      break;
    case TG_PARAM_CURVE:
      {
        size_t n = 0;
        buf[0] = '\0';
        for (int k = 0; k < d->def_curve_n && n + 1 < size; k++)
          n += (size_t) snprintf (buf + n, size - n, "%s[%.6g, %.6g]", k ? " " : "",
                                  d->def_curve[2 * k], d->def_curve[2 * k + 1]);
      }
      break;
    case TG_PARAM_LIST:
      snprintf (buf, size, "%s", d->def_s ? d->def_s : "");
      break;
    default:
      buf[0] = '\0';
      break;
    }
}

void
tg__cli_param_range (const TgParamDesc *d, char *buf, size_t size)
{
  buf[0] = '\0';
  switch (d->type)
    {
    case TG_PARAM_FLOAT:
    case TG_PARAM_INT:
    case TG_PARAM_SEED:
      snprintf (buf, size, "%.10g..%.10g", d->min, d->max);
      break;
    case TG_PARAM_ENUM:
      {
        size_t n = 0;
        for (int k = 0; d->choices && d->choices[k] && n + 1 < size; k++)
          n += (size_t) snprintf (buf + n, size - n, "%s%s", k ? "|" : "", d->choices[k]);
      }
      break;
    case TG_PARAM_COLOR:
      snprintf (buf, size, "#rrggbb[aa]");
      break;
    case TG_PARAM_CURVE:
      snprintf (buf, size, "[x, y] in 0..1");
      break;
    case TG_PARAM_LIST:
      {
        size_t n = (size_t) snprintf (buf, size, "%.0f..%.0f items of", d->min, d->max);
        for (int k = 0; k < d->n_item_params && n + 1 < size; k++)
          n += (size_t) snprintf (buf + n, size - n, "%s%s", k ? ", " : " ", d->item_params[k].name);
      }
      break;
    default:
      break;
    }
}

/* Prints TEXT indented by INDENT spaces, wrapped at word boundaries to
 * stay within WIDTH columns (a longer word gets a line of its own). */
static void
print_wrapped (const char *text, int indent, int width)
{
  const char *p = text;

  while (*p)
    {
      while (*p == ' ')
        p++;
      if (!*p)
        break;
      int room = width - indent, len = (int) strlen (p), cut = len;
      if (len > room)
        {
          cut = room;
          while (cut > 0 && p[cut] != ' ')
            cut--;
          if (cut == 0)
            for (cut = room; p[cut] && p[cut] != ' '; cut++)
              ;
        }
      printf ("%*s%.*s\n", indent, "", cut, p);
      p += cut;
    }
}

static void
print_node (const TgNodeDesc *d)
{
  printf ("%s  %s", d->type, d->label ? d->label : "");
  /* Local is the common case; say so only for nodes that need more. */
  if (d->locality != TG_LOCALITY_LOCAL)
    printf ("  [%s]", tg_locality_name (d->locality));
  printf ("\n");
  if (d->help && d->help[0])
    print_wrapped (d->help, 2, 96);
  print_ports ("in:", d->inputs, d->n_inputs);
  print_ports ("out:", d->outputs, d->n_outputs);
  if (d->n_params == 0)
    return;
  printf ("  params:\n");
  for (int k = 0; k < d->n_params; k++)
    {
      const TgParamDesc *p = &d->params[k];
      char def[256], range[256], unit[32] = "";
      tg__cli_param_default (p, def, sizeof def);
      tg__cli_param_range (p, range, sizeof range);
      if (p->unit && p->unit[0])
        snprintf (unit, sizeof unit, " %s", p->unit);
      printf ("    %-18s %-11s %-14s %s%s", p->name, tg_param_type_name (p->type), def, range,
              range[0] ? unit : "");
      if (p->label && p->label[0])
        printf ("%s%s", range[0] ? "  " : "", p->label);
      printf ("\n");
    }
}

int
tg__cli_node_categories (TgCategory cats[TG_CATEGORY_COUNT])
{
  int n_cats = 0;

  for (int k = 0; k < TG_CATEGORY_COUNT; k++)
    {
      TgCategory c = tg_category_at (k);
      for (int i = 0; i < tg_registry_count (); i++)
        if (tg_registry_get (i)->category == c)
          {
            cats[n_cats++] = c;
            break;
          }
    }
  return n_cats;
}

static void
print_table (void)
{
  TgCategory cats[TG_CATEGORY_COUNT];
  int n = tg_registry_count (), n_cats = tg__cli_node_categories (cats);

  printf ("%d node types\n", n);
  for (int k = 0; k < n_cats; k++)
    {
      printf ("\n== %s ==\n", tg_category_name (cats[k]));
      for (int i = 0; i < n; i++)
        {
          const TgNodeDesc *d = tg_registry_get (i);
          if (d->category != cats[k])
            continue;
          printf ("\n");
          print_node (d);
        }
    }
}

int
tg__cli_nodes (int argc, char **argv)
{
  bool json = false, markdown = false, man = false;

  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--json") == 0)
        json = true;
      else if (strcmp (argv[i], "--markdown") == 0)
        markdown = true;
      else if (strcmp (argv[i], "--man") == 0)
        man = true;
      else
        return tg__cli_usage_error ("nodes", "unexpected argument \"%s\"", argv[i]);
    }
  if (json + markdown + man > 1)
    return tg__cli_usage_error ("nodes", "--json, --markdown and --man exclude each other");
  if (markdown || man)
    {
      if (man)
        tg__cli_nodes_man (stdout);
      else
        tg__cli_nodes_markdown (stdout);
      return fflush (stdout) == 0 ? TG_CLI_EXIT_OK : TG_CLI_EXIT_FAILED;
    }
  if (!json)
    {
      print_table ();
      return TG_CLI_EXIT_OK;
    }

  char *text = tg_catalogue_json ();
  if (!text)
    {
      fprintf (stderr, "tgraph nodes: cannot build the catalogue\n");
      return TG_CLI_EXIT_FAILED;
    }
  size_t n = strlen (text);
  fputs (text, stdout);
  if (n == 0 || text[n - 1] != '\n')
    fputc ('\n', stdout);
  free (text);
  return TG_CLI_EXIT_OK;
}
