/* The document model at scale: a 4096-node graph (64 rows of 64, each
 * node fed by its left and upper neighbours; 129² so that the app
 * evaluates it soon) loaded through TgDocument, then one hit test, one
 * move command with its undo step's memory, one parameter change, undo,
 * a delete and a disconnect with their undo steps' memory, and save.
 * Prints wall and CPU time of each.
 *
 * With --write FILE it only writes the graph.
 *
 * "before-style" is the hit test as the canvas did it until the document
 * kept typed positions: per port, the node looked up by id and its "ui"
 * JSON parsed again. */
#include "config.h"

#include "tg-canvas-geometry.h"
#include "tg-document.h"

#include <glib/gstdio.h>
#include <json-c/json.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <tgformats/tgformats.h>

#define ROWS 64
#define COLS 64
/* The canvas's node geometry (tg-canvas.c). */
#define NODE_W 168.0
#define HEADER_H 24.0
#define PORT_H 21.0
#define PORT_HIT 10.0

typedef struct
{
  gint64 wall;
  double cpu;
} Clock;

static double
cpu_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static Clock
clock_start (void)
{
  return (Clock) { g_get_monotonic_time (), cpu_now () };
}

/* Prints "LABEL: wall X ms, cpu Y ms" for the time since C over N runs. */
static void
clock_report (const char *label, Clock c, int n)
{
  double wall = (g_get_monotonic_time () - c.wall) / 1000.0 / n;
  double cpu = (cpu_now () - c.cpu) * 1000.0 / n;
  printf ("%-44s wall %10.4f ms   cpu %10.4f ms\n", label, wall, cpu);
}

static size_t
heap_in_use (void)
{
  struct mallinfo2 mi = mallinfo2 ();
  return mi.uordblks + mi.hblkhd;
}

static char *
generate (void)
{
  GString *s = g_string_new ("{\n  \"format\": \"tgraph\",\n  \"version\": 2,\n  \"world\": "
                             "{ \"size_m\": [4096, 4096], \"height_m\": 1000, \"resolution\": 129, "
                             "\"seed\": 1 },\n  \"nodes\": [\n");
  for (int r = 0; r < ROWS; r++)
    for (int c = 0; c < COLS; c++)
      {
        int k = r * COLS + c;
        g_string_append_printf (s, "    { \"id\": \"n%d\", \"type\": \"%s\", \"ui\": { \"x\": %d, "
                                "\"y\": %d } }%s\n", k, c == 0 ? "noise.fbm" : "math.combine",
                                c * 240, r * 220, k + 1 < ROWS * COLS ? "," : "");
      }
  g_string_append (s, "  ],\n  \"links\": [\n");
  {
    gboolean first = TRUE;
    for (int r = 0; r < ROWS; r++)
      for (int c = 1; c < COLS; c++)
        {
          int k = r * COLS + c;
          g_string_append_printf (s, "%s    { \"from\": \"n%d.height\", \"to\": \"n%d.a\" }",
                                  first ? "" : ",\n", k - 1, k);
          first = FALSE;
          /* The first row takes both inputs from the left: every node
           * evaluates (no failures to report 4096 times over). */
          g_string_append_printf (s, ",\n    { \"from\": \"n%d.height\", \"to\": \"n%d.b\" }",
                                  r > 0 ? k - COLS : k - 1, k);
        }
  }
  g_string_append (s, "\n  ]\n}\n");
  return g_string_free (s, FALSE);
}

/* --- the hit test as it was: JSON parsed per port ------------------------ */

static void
old_position (const TgGraph *g, const char *id, double *x, double *y)
{
  int n = tg_graph_find_node (g, id);
  const char *ui = n >= 0 ? tg_graph_node_ui (g, n) : NULL;
  json_object *o = ui ? json_tokener_parse (ui) : NULL, *v;

  *x = *y = 0;
  if (o && json_object_object_get_ex (o, "x", &v))
    *x = json_object_get_double (v);
  if (o && json_object_object_get_ex (o, "y", &v))
    *y = json_object_get_double (v);
  json_object_put (o);
}

static int
old_hit_test (const TgGraph *g, double cx, double cy)
{
  for (int n = tg_graph_n_nodes (g) - 1; n >= 0; n--)
    {
      const TgNodeDesc *d = tg_graph_node_desc (g, n);
      for (int p = 0; p < d->n_inputs + d->n_outputs; p++)
        {
          gboolean out = p >= d->n_inputs;
          int port = out ? p - d->n_inputs : p;
          double x, y;
          old_position (g, tg_graph_node_id (g, n), &x, &y);
          x += out ? NODE_W : 0;
          y += HEADER_H + 6 + port * PORT_H + PORT_H / 2;
          if (hypot (cx - x, cy - y) <= PORT_HIT)
            return n;
        }
    }
  return -1;
}

int
main (int argc, char **argv)
{
  g_autofree char *text = generate ();
  g_autofree char *dir = g_dir_make_tmp ("bench-document-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "big.tgraph", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (GError) error = NULL;
  TgDocument *doc;
  const char *ids[] = { "n2080", NULL };
  size_t heap0;
  Clock c;
  int hit = 0, runs;

  /* --write FILE: only the graph, for tests/bench/bench_canvas_drag.sh. */
  if (argc == 3 && !strcmp (argv[1], "--write"))
    return g_file_set_contents (argv[2], text, -1, NULL) ? 0 : 1;
  tg_formats_init ();
  g_file_set_contents (path, text, -1, NULL);
  doc = tg_document_new ();
  c = clock_start ();
  if (!tg_document_load (doc, file, &error))
    {
      fprintf (stderr, "load: %s\n", error->message);
      return 1;
    }
  printf ("%d nodes, %d links\n", tg_graph_n_nodes (tg_document_get_graph (doc)),
          tg_graph_n_links (tg_document_get_graph (doc)));
  clock_report ("load", c, 1);

  /* A miss (empty canvas far away) visits every node: the worst case. */
  runs = 3;
  c = clock_start ();
  for (int k = 0; k < runs; k++)
    hit += old_hit_test (tg_document_get_graph (doc), -5000, -5000);
  clock_report ("hit test, before-style (JSON per port)", c, runs);

  runs = 1000;
  c = clock_start ();
  for (int k = 0; k < runs; k++)
    hit += tg_canvas_hit_nodes (doc, -5000, -5000, NULL, 0, 0).node;
  clock_report ("hit test (typed positions)", c, runs);
  {
    double x, y;
    TgCanvasHit h;
    tg_document_get_position (doc, "n2080", &x, &y);
    h = tg_canvas_hit_nodes (doc, x + NODE_W, y + HEADER_H + 6 + PORT_H / 2, NULL, 0, 0);
    printf ("%-44s %s\n", "hit at n2080's output",
            h.kind == TG_CANVAS_HIT_OUTPUT
                && !strcmp (tg_graph_node_id (tg_document_get_graph (doc), h.node), "n2080")
              ? "found" : "MISSED");
  }

  runs = 20;
  c = clock_start ();
  for (int k = 0; k < runs; k++)
    for (int n = 0; n < tg_graph_n_nodes (tg_document_get_graph (doc)); n++)
      {
        double x, y;
        tg_document_get_position (doc, tg_graph_node_id (tg_document_get_graph (doc), n), &x, &y);
        hit += (int) x & 1;
      }
  clock_report ("get_position of every node", c, runs);

  heap0 = heap_in_use ();
  c = clock_start ();
  tg_document_move_nodes (doc, ids, 10, 20);
  clock_report ("move one node (command)", c, 1);
  printf ("%-44s %10zd bytes\n", "heap kept by the move's undo step",
          (ssize_t) (heap_in_use () - heap0));
  printf ("%-44s %10zu bytes\n", "undo size (tg_document_get_undo_size)",
          tg_document_get_undo_size (doc));

  heap0 = heap_in_use ();
  c = clock_start ();
  tg_document_set_param_text (doc, "n2080", "op", "max", FALSE, NULL);
  clock_report ("set one parameter (command)", c, 1);
  printf ("%-44s %10zd bytes\n", "heap kept by the parameter's undo step",
          (ssize_t) (heap_in_use () - heap0));
  printf ("%-44s %10zu bytes\n", "undo size (tg_document_get_undo_size)",
          tg_document_get_undo_size (doc));

  c = clock_start ();
  tg_document_undo (doc);
  tg_document_undo (doc);
  clock_report ("undo (each of 2)", c, 2);

  /* Delete and disconnect keep what they take out; until they did, their
   * step kept the whole graph from before (its size: the graph's text,
   * as tg_document_get_undo_size counts a whole graph). */
  {
    TgError err = { 0 };
    g_autofree char *whole = tg_tgraph_save_string (tg_document_get_graph (doc), &err);
    /* Nothing to undo here (the steps above are undone), and a command
     * empties the redo list: the size after it is its step's. */
    gsize size0 = 0;

    if (tg_document_can_undo (doc))
      return 1;
    {
      TgGraph *copy;
      heap0 = heap_in_use ();
      copy = tg_document_snapshot (doc);
      printf ("%-44s %10zd bytes\n", "heap of a copy of the graph (the step before)",
              (ssize_t) (heap_in_use () - heap0));
      tg_graph_free (copy);
    }

    heap0 = heap_in_use ();
    c = clock_start ();
    tg_document_delete_nodes (doc, ids, NULL);
    clock_report ("delete one node (command)", c, 1);
    printf ("%-44s %10zd bytes\n", "heap kept by the delete's undo step",
            (ssize_t) (heap_in_use () - heap0));
    printf ("%-44s %10zu bytes (before: the graph, %zu)\n", "undo size of the delete",
            tg_document_get_undo_size (doc) - size0, whole ? strlen (whole) + 1 : 0);
    c = clock_start ();
    tg_document_undo (doc);
    clock_report ("undo the delete", c, 1);
    printf ("%-44s %s\n", "n2080 back at its index",
            tg_document_find_node (doc, "n2080") == 2080 ? "yes" : "NO");
    c = clock_start ();
    tg_document_redo (doc);
    clock_report ("redo the delete", c, 1);
    tg_document_undo (doc);

    c = clock_start ();
    tg_document_disconnect (doc, "n2080", "a");
    clock_report ("disconnect one link (command)", c, 1);
    printf ("%-44s %10zu bytes\n", "undo size of the disconnect",
            tg_document_get_undo_size (doc) - size0);
    tg_document_undo (doc);
  }

  c = clock_start ();
  if (!tg_document_save (doc, file, &error))
    {
      fprintf (stderr, "save: %s\n", error->message);
      return 1;
    }
  clock_report ("save", c, 1);

  g_object_unref (doc);
  g_unlink (path);
  g_rmdir (dir);
  return hit == 12345678 ? 1 : 0;
}
