/* TgDocument without a display: every command, undo/redo back to the
 * exact graph text, one undo step per slider drag, copy/paste with links
 * and fresh ids, dirty state across save and undo, unfinished graphs that
 * save and reopen, and a failed load that leaves the document alone.
 * The typed UI state: positions and the id index agree with the graph
 * after any run of commands, undo and redo; undo steps hold only what
 * their command changed (a delete the nodes it took out, which undo puts
 * back at their indices: the file saves byte for byte as before); the
 * hit test finds the ports and nodes a brute force over the graph finds. */
#include "config.h"

#include "tg-canvas-geometry.h"
#include "tg-document.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <tgformats/tgformats.h>

#include "tgtest.h"

static char *
graph_text (TgDocument *doc)
{
  TgError err = { 0 };
  char *t = tg_tgraph_save_string (tg_document_get_graph (doc), &err);
  TG_CHECK_MSG (t != NULL, "save_string: %s", err.message);
  return t;
}

static TgDocument *
load_example (const char *rel)
{
  TgDocument *doc = tg_document_new ();
  g_autoptr (GFile) f = g_file_new_for_path (tgtest_src (rel));
  g_autoptr (GError) error = NULL;
  gboolean ok = tg_document_load (doc, f, &error);
  TG_CHECK_MSG (ok, "load %s: %s", rel, error ? error->message : "");
  return doc;
}

static TgDocument *load_grid (int rows, int cols);

typedef struct
{
  int count;
  guint last_flags;
  char *last_node;
} Changes;

static void
on_changed (TgDocument *doc, guint flags, const char *node, Changes *c)
{
  c->count++;
  c->last_flags = flags;
  g_free (c->last_node);
  c->last_node = g_strdup (node);
}

static int
n_links (TgDocument *doc)
{
  return tg_graph_n_links (tg_document_get_graph (doc));
}

static int
find (TgDocument *doc, const char *id)
{
  return tg_graph_find_node (tg_document_get_graph (doc), id);
}

static void
test_add_move_delete_undo_redo (void)
{
  TgDocument *doc = load_example ("data/examples/island.tgraph");
  g_autofree char *t0 = graph_text (doc);
  g_autofree char *id = NULL, *id2 = NULL;
  const char *ids[2] = { NULL, NULL };
  Changes c = { 0 };
  double x, y;

  g_signal_connect (doc, "changed", G_CALLBACK (on_changed), &c);
  TG_CHECK (!tg_document_get_dirty (doc));
  TG_CHECK (!tg_document_can_undo (doc));

  id = tg_document_add_node (doc, "noise.fbm", 100, 300, NULL);
  TG_CHECK (id && !strcmp (id, "fbm"));
  TG_CHECK_INT_EQ (c.count, 1);
  TG_CHECK (c.last_flags & TG_DOC_CHANGE_NODES);
  TG_CHECK (tg_document_get_dirty (doc));
  TG_CHECK (tg_document_get_position (doc, "fbm", &x, &y));
  TG_CHECK_NEAR (x, 100, 0);
  TG_CHECK_NEAR (y, 300, 0);
  id2 = tg_document_add_node (doc, "noise.fbm", 0, 0, NULL);
  TG_CHECK (id2 && !strcmp (id2, "fbm_2"));

  ids[0] = "fbm";
  TG_CHECK (tg_document_move_nodes (doc, ids, 15, -20));
  TG_CHECK (tg_document_get_position (doc, "fbm", &x, &y));
  TG_CHECK_NEAR (x, 115, 0);
  TG_CHECK_NEAR (y, 280, 0);
  TG_CHECK (c.last_flags == TG_DOC_CHANGE_POSITION);

  ids[0] = "peaks";
  TG_CHECK (tg_document_delete_nodes (doc, ids, NULL));
  TG_CHECK (find (doc, "peaks") < 0);
  TG_CHECK_INT_EQ (n_links (doc), 8); /* peaks.height -> mountains.b went with it */
  TG_CHECK_STR_CONTAINS (tg_document_undo_label (doc), "Delete");

  /* Undo everything: the graph text is what was loaded, and clean again. */
  for (int k = 0; k < 4; k++)
    TG_CHECK (tg_document_undo (doc));
  TG_CHECK (!tg_document_can_undo (doc));
  TG_CHECK (!tg_document_get_dirty (doc));
  {
    g_autofree char *t = graph_text (doc);
    TG_CHECK (!strcmp (t, t0));
  }
  TG_CHECK (c.last_flags == TG_DOC_CHANGE_ALL);

  /* Redo all four and the deletion is back. */
  for (int k = 0; k < 4; k++)
    TG_CHECK (tg_document_redo (doc));
  TG_CHECK (!tg_document_can_redo (doc));
  TG_CHECK (find (doc, "peaks") < 0 && find (doc, "fbm_2") >= 0);
  TG_CHECK (tg_document_get_dirty (doc));

  /* A new command after an undo drops the redo branch. */
  TG_CHECK (tg_document_undo (doc));
  TG_CHECK (tg_document_can_redo (doc));
  g_free (tg_document_add_node (doc, "curve", 0, 0, NULL));
  TG_CHECK (!tg_document_can_redo (doc));

  g_free (c.last_node);
  g_object_unref (doc);
}

static void
test_connect_replaces_and_refuses (void)
{
  TgDocument *doc = load_example ("data/examples/island.tgraph");
  g_autoptr (GError) error = NULL;
  const TgGraph *g;
  int n, p, l;

  /* Replacing the link into coast.height: one link, from the new source. */
  TG_CHECK (tg_document_connect (doc, "island", "height", "coast", "height", NULL));
  TG_CHECK_INT_EQ (n_links (doc), 9);
  g = tg_document_get_graph (doc);
  TG_CHECK (tg_document_find_port (doc, "coast", "height", FALSE, &n, &p));
  l = tg_graph_input_link (g, n, p);
  TG_CHECK (l >= 0 && tg_graph_link (g, l)->from_node == find (doc, "island"));
  TG_CHECK_STR_CONTAINS (tg_document_undo_label (doc), "Connect");

  /* A cycle is refused with the engine's message and changes nothing. */
  TG_CHECK (!tg_document_connect (doc, "profile", "height", "coast", "height", &error));
  TG_CHECK (error != NULL);
  if (error)
    TG_CHECK_STR_CONTAINS (error->message, "cycle");
  TG_CHECK_INT_EQ (n_links (doc), 9);

  TG_CHECK (tg_document_disconnect (doc, "coast", "height"));
  TG_CHECK_INT_EQ (n_links (doc), 8);
  TG_CHECK (!tg_document_disconnect (doc, "coast", "height"));
  TG_CHECK (tg_document_undo (doc));
  TG_CHECK_INT_EQ (n_links (doc), 9);
  TG_CHECK (tg_document_undo (doc));
  g = tg_document_get_graph (doc);
  l = tg_graph_input_link (g, n, p);
  TG_CHECK (l >= 0 && tg_graph_link (g, l)->from_node == find (doc, "land"));
  g_object_unref (doc);
}

static void
test_param_drag_is_one_step (void)
{
  TgDocument *doc = load_example ("data/examples/island.tgraph");
  g_autoptr (GError) error = NULL;
  const TgParamValue *v;
  char text[32];
  int n = find (doc, "terrain");

  /* A drag: many values, one undo step back to the original. */
  for (int k = 0; k < 20; k++)
    {
      g_snprintf (text, sizeof text, "%d", 1000 + 10 * k);
      TG_CHECK (tg_document_set_param_text (doc, "terrain", "scale_m", text, TRUE, NULL));
    }
  tg_document_end_merge (doc);
  v = tg_graph_get_param (tg_document_get_graph (doc), n, "scale_m");
  TG_CHECK_NEAR (v->f, 1190, 0);
  TG_CHECK_STR_CONTAINS (tg_document_undo_label (doc), "Scale");

  /* A second drag of the same slider is a second step. */
  TG_CHECK (tg_document_set_param_text (doc, "terrain", "scale_m", "900", TRUE, NULL));
  TG_CHECK (tg_document_undo (doc));
  v = tg_graph_get_param (tg_document_get_graph (doc), n, "scale_m");
  TG_CHECK_NEAR (v->f, 1190, 0);
  TG_CHECK (tg_document_undo (doc));
  v = tg_graph_get_param (tg_document_get_graph (doc), n, "scale_m");
  TG_CHECK_NEAR (v->f, 1400, 0);
  TG_CHECK (!tg_document_can_undo (doc));
  TG_CHECK (!tg_document_get_dirty (doc));

  /* Changes of different parameters never merge. */
  TG_CHECK (tg_document_set_param_text (doc, "terrain", "octaves", "4", TRUE, NULL));
  TG_CHECK (tg_document_set_param_text (doc, "terrain", "persistence", "0.4", TRUE, NULL));
  TG_CHECK (tg_document_undo (doc));
  TG_CHECK_INT_EQ (tg_graph_get_param (tg_document_get_graph (doc), n, "octaves")->i, 4);

  /* Out of range: refused with the place, nothing recorded. */
  TG_CHECK (!tg_document_set_param_text (doc, "terrain", "octaves", "40", FALSE, &error));
  TG_CHECK (error && strstr (error->message, "params.octaves"));
  TG_CHECK_INT_EQ (tg_graph_get_param (tg_document_get_graph (doc), n, "octaves")->i, 4);

  /* Setting the same value is no step at all. */
  TG_CHECK (tg_document_set_param_text (doc, "terrain", "octaves", "4", FALSE, NULL));
  TG_CHECK (tg_document_undo (doc));
  TG_CHECK (!tg_document_can_undo (doc));
  g_object_unref (doc);
}

static void
test_world_settings (void)
{
  TgDocument *doc = load_example ("data/examples/island.tgraph");
  g_autoptr (GError) error = NULL;
  TgWorld w = *tg_graph_world_const (tg_document_get_graph (doc));

  w.height_m = 900;
  w.seed = 77;
  TG_CHECK (tg_document_set_world (doc, &w, NULL));
  TG_CHECK_NEAR (tg_graph_world_const (tg_document_get_graph (doc))->height_m, 900, 0);
  w.resolution = 1;
  TG_CHECK (!tg_document_set_world (doc, &w, &error));
  TG_CHECK (error && strstr (error->message, "world.resolution"));
  TG_CHECK (tg_document_undo (doc));
  TG_CHECK_NEAR (tg_graph_world_const (tg_document_get_graph (doc))->height_m, 600, 0);
  TG_CHECK_INT_EQ (tg_graph_world_const (tg_document_get_graph (doc))->seed, 1234);
  g_object_unref (doc);
}

static void
test_copy_paste (void)
{
  TgDocument *doc = load_example ("data/examples/island.tgraph");
  TgDocument *other = tg_document_new ();
  const char *sel[] = { "terrain", "peaks", "mountains", NULL };
  g_autofree char *text = NULL;
  g_auto (GStrv) ids = NULL, ids2 = NULL, dup = NULL;
  g_autoptr (GError) error = NULL;
  double x, y;

  text = tg_document_copy_text (doc, sel, &error);
  TG_CHECK_MSG (text != NULL, "%s", error ? error->message : "");
  if (!text)
    return;
  /* Only the links inside the selection travel. */
  TG_CHECK_STR_CONTAINS (text, "\"terrain.height\"");
  TG_CHECK (strstr (text, "\"land.a\"") == NULL);
  TG_CHECK (strstr (text, "\"island\"") == NULL);

  /* Into the same document: new ids, same parameters, links kept. */
  ids = tg_document_paste_text (doc, text, 500, 600, &error);
  TG_CHECK_MSG (ids != NULL, "%s", error ? error->message : "");
  if (!ids)
    return;
  TG_CHECK_INT_EQ (g_strv_length (ids), 3);
  TG_CHECK (!strcmp (ids[0], "terrain_2") && !strcmp (ids[2], "mountains_2"));
  TG_CHECK_INT_EQ (n_links (doc), 9 + 3);
  TG_CHECK (tg_document_get_position (doc, "terrain_2", &x, &y));
  TG_CHECK_NEAR (x, 500, 0);
  TG_CHECK_NEAR (y, 600, 0); /* terrain was the top-left of the selection */
  TG_CHECK (tg_document_get_position (doc, "peaks_2", &x, &y));
  TG_CHECK_NEAR (y, 760, 0);
  TG_CHECK_NEAR (tg_graph_get_param (tg_document_get_graph (doc), find (doc, "peaks_2"),
                                     "scale_m")->f, 1100, 0);
  TG_CHECK_STR_CONTAINS (tg_document_undo_label (doc), "Paste");
  TG_CHECK (tg_document_undo (doc));
  TG_CHECK (find (doc, "terrain_2") < 0);

  /* Into another window's (empty) document: the ids stay as they were. */
  ids2 = tg_document_paste_text (other, text, 0, 0, &error);
  TG_CHECK (ids2 && !strcmp (ids2[0], "terrain"));
  TG_CHECK_INT_EQ (n_links (other), 3);

  /* Duplicate: one step named so. */
  dup = tg_document_duplicate (other, (const char *const *) ids2, 30, 30, NULL);
  TG_CHECK (dup && g_strv_length (dup) == 3);
  TG_CHECK_INT_EQ (n_links (other), 6);
  TG_CHECK_STR_CONTAINS (tg_document_undo_label (other), "Duplicate");

  /* Not a graph: refused, nothing changes. */
  g_clear_error (&error);
  TG_CHECK (tg_document_paste_text (other, "hello", 0, 0, &error) == NULL);
  TG_CHECK (error != NULL);
  TG_CHECK_INT_EQ (tg_graph_n_nodes (tg_document_get_graph (other)), 6);
  g_object_unref (other);
  g_object_unref (doc);

  /* A bypassed node pastes bypassed, and comes back so with redo. */
  {
    TgDocument *b = load_example ("tests/cli/data/bypass.tgraph");
    const char *one[] = { "smooth", NULL };
    g_auto (GStrv) copy = tg_document_duplicate (b, one, 40, 40, NULL);
    const TgGraph *g;
    TG_CHECK (copy && copy[0]);
    TG_CHECK (tg_document_undo (b) && tg_document_redo (b));
    g = tg_document_get_graph (b);
    TG_CHECK (tg_graph_node_bypass (g, tg_graph_find_node (g, copy[0])));
    g_object_unref (b);
  }
}

static void
test_save_reopen_unfinished_and_bad_load (void)
{
  g_autofree char *dir = g_dir_make_tmp ("terrane-doc-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "wip.tgraph", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (GFile) bad = g_file_new_for_path (tgtest_src ("tests/cli/data/bad_syntax.tgraph"));
  g_autoptr (GError) error = NULL;
  TgDocument *doc = tg_document_new (), *doc2 = tg_document_new ();
  g_autofree char *a = NULL, *b = NULL, *id = NULL, *title = NULL;

  /* An unfinished graph: a combine with nothing linked, an unset input path. */
  g_free (tg_document_add_node (doc, "math.combine", 10, 20, NULL));
  id = tg_document_add_node (doc, "input.heightmap", 300, 20, NULL);
  TG_CHECK (tg_document_get_dirty (doc));
  TG_CHECK_MSG (tg_document_save (doc, file, &error), "%s", error ? error->message : "");
  TG_CHECK (!tg_document_get_dirty (doc));
  title = tg_document_dup_title (doc);
  TG_CHECK (!strcmp (title, "wip.tgraph"));

  TG_CHECK_MSG (tg_document_load (doc2, file, &error), "%s", error ? error->message : "");
  a = graph_text (doc);
  b = graph_text (doc2);
  TG_CHECK (a && b && !strcmp (a, b));
  TG_CHECK_STR_CONTAINS (b, "\"ui\": { \"x\": 300, \"y\": 20 }");

  /* Undo after a save makes it dirty; redo back to the saved state is clean. */
  TG_CHECK (tg_document_undo (doc));
  TG_CHECK (tg_document_get_dirty (doc));
  TG_CHECK (tg_document_redo (doc));
  TG_CHECK (!tg_document_get_dirty (doc));

  /* A bad file: the engine's placed message, the document untouched. */
  g_clear_error (&error);
  TG_CHECK (!tg_document_load (doc2, bad, &error));
  TG_CHECK (error && strstr (error->message, "bad_syntax.tgraph:"));
  TG_CHECK (error && strstr (error->message, "syntax error"));
  TG_CHECK_INT_EQ (tg_graph_n_nodes (tg_document_get_graph (doc2)), 2);
  TG_CHECK (tg_document_get_file (doc2) && g_file_equal (tg_document_get_file (doc2), file));

  g_unlink (path);
  g_rmdir (dir);
  g_object_unref (doc);
  g_object_unref (doc2);
}

static void
on_renamed (TgDocument *doc, const char *old_id, const char *new_id, GString *log)
{
  g_string_append_printf (log, "%s>%s;", old_id, new_id);
}

/* A document stops at the node count a .tgraph file may hold, so what
 * it saves always loads again: adding, adding linked and pasting past it
 * are refused with a message and change nothing. */
static void
test_node_limit (void)
{
  TgDocument *doc = tg_document_new ();
  GString *text = g_string_new ("{\"format\": \"tgraph\", \"version\": 2, "
                                "\"world\": {\"size_m\": [100, 100], \"height_m\": 10, "
                                "\"resolution\": 17, \"seed\": 1}, \"nodes\": [");
  g_autoptr (GError) error = NULL;
  char **ids;
  char *id;

  for (int k = 0; k < TG_TGRAPH_MAX_NODES; k++)
    g_string_append_printf (text, "%s{\"id\": \"c%d\", \"type\": \"gen.constant\"}",
                            k ? ", " : "", k);
  g_string_append (text, "], \"links\": []}");
  ids = tg_document_paste_text (doc, text->str, 0, 0, &error);
  TG_CHECK_MSG (ids != NULL, "%s", error ? error->message : "");
  g_strfreev (ids);
  TG_CHECK_INT_EQ (tg_graph_n_nodes (tg_document_get_graph (doc)), TG_TGRAPH_MAX_NODES);

  id = tg_document_add_node (doc, "gen.constant", 0, 0, &error);
  TG_CHECK (id == NULL && error != NULL);
  if (error)
    TG_CHECK_STR_CONTAINS (error->message, "at most 4096 nodes");
  g_clear_error (&error);
  id = tg_document_add_node_linked (doc, "filter.invert", 0, 0, "c0", "height", TRUE, &error);
  TG_CHECK (id == NULL && error != NULL);
  g_clear_error (&error);
  ids = tg_document_paste_text (doc, text->str, 0, 0, &error);
  TG_CHECK (ids == NULL && error != NULL);
  TG_CHECK_INT_EQ (tg_graph_n_nodes (tg_document_get_graph (doc)), TG_TGRAPH_MAX_NODES);
  g_string_free (text, TRUE);
  g_object_unref (doc);
}

static void
test_add_linked_and_rename (void)
{
  TgDocument *doc = load_example ("data/examples/island.tgraph");
  g_autofree char *t0 = graph_text (doc);
  g_autofree char *id = NULL, *id2 = NULL, *text = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) log = g_string_new (NULL);
  const TgGraph *g;
  int links = n_links (doc), n, l;

  /* A wire from terrain.height dropped on empty canvas, then "Terraces":
   * one step adds the node and the link into its height input. */
  id = tg_document_add_node_linked (doc, "filter.terrace", 500, 600, "terrain", "height", TRUE,
                                    &error);
  TG_CHECK_MSG (id != NULL, "%s", error ? error->message : "");
  g = tg_document_get_graph (doc);
  n = tg_graph_find_node (g, id);
  TG_CHECK (n >= 0);
  l = tg_graph_input_link (g, n, 0);
  TG_CHECK (l >= 0 && !strcmp (tg_graph_node_id (g, tg_graph_link (g, l)->from_node), "terrain"));
  TG_CHECK_INT_EQ (n_links (doc), links + 1);
  TG_CHECK (!strcmp (tg_document_undo_label (doc), "Add Node"));
  TG_CHECK (tg_document_undo (doc));
  text = graph_text (doc);
  TG_CHECK (!strcmp (text, t0));

  /* Into an input: the new node's output replaces the link into coast.height. */
  id2 = tg_document_add_node_linked (doc, "gen.constant", 0, 0, "coast", "height", FALSE, &error);
  TG_CHECK_MSG (id2 != NULL, "%s", error ? error->message : "");
  g = tg_document_get_graph (doc);
  l = tg_graph_input_link (g, tg_graph_find_node (g, "coast"), 0);
  TG_CHECK (l >= 0 && !strcmp (tg_graph_node_id (g, tg_graph_link (g, l)->from_node), id2));
  TG_CHECK_INT_EQ (n_links (doc), links);
  /* A node with no fitting port is refused and nothing changes. */
  TG_CHECK (!tg_document_add_node_linked (doc, "noise.fbm", 0, 0, "coast", "height", TRUE,
                                          &error));
  TG_CHECK (error && strstr (error->message, "no port that fits"));
  g_clear_error (&error);
  TG_CHECK (tg_document_undo (doc));

  /* Rename: links follow, one step, "renamed" on the command and on undo/redo. */
  g_signal_connect (doc, "renamed", G_CALLBACK (on_renamed), log);
  TG_CHECK_MSG (tg_document_rename_node (doc, "terrain", "base_noise", &error), "%s",
                error ? error->message : "");
  g = tg_document_get_graph (doc);
  TG_CHECK (tg_graph_find_node (g, "terrain") < 0 && tg_graph_find_node (g, "base_noise") >= 0);
  g_free (text);
  text = graph_text (doc);
  TG_CHECK_STR_CONTAINS (text, "\"from\": \"base_noise.height\"");
  TG_CHECK (tg_document_undo (doc));
  TG_CHECK (tg_document_redo (doc));
  TG_CHECK (!strcmp (log->str, "terrain>base_noise;base_noise>terrain;terrain>base_noise;"));
  /* Refused: taken, empty, dotted; the message says why. */
  TG_CHECK (!tg_document_rename_node (doc, "base_noise", "coast", &error));
  TG_CHECK (error && strstr (error->message, "already a node named"));
  g_clear_error (&error);
  TG_CHECK (!tg_document_rename_node (doc, "base_noise", "", &error));
  g_clear_error (&error);
  TG_CHECK (!tg_document_rename_node (doc, "base_noise", "a.b", &error));
  TG_CHECK (error && strstr (error->message, "cannot contain"));
  g_object_unref (doc);
}

/* Save As into another folder keeps input paths pointing at the same files. */
static void
test_save_as_rebases_input_paths (void)
{
  g_autofree char *root = g_dir_make_tmp ("terrane-rebase-XXXXXX", NULL);
  g_autofree char *a = g_build_filename (root, "a", NULL);
  g_autofree char *data = g_build_filename (root, "a", "data", NULL);
  g_autofree char *deep = g_build_filename (root, "b", "deep", NULL);
  g_autofree char *p1 = g_build_filename (a, "one.tgraph", NULL);
  g_autofree char *p2 = g_build_filename (deep, "two.tgraph", NULL);
  g_autofree char *p3 = g_build_filename (data, "three.tgraph", NULL);
  g_autoptr (GFile) f1 = g_file_new_for_path (p1);
  g_autoptr (GFile) f2 = g_file_new_for_path (p2);
  g_autoptr (GFile) f3 = g_file_new_for_path (p3);
  g_autoptr (GError) error = NULL;
  TgDocument *doc = tg_document_new (), *back = tg_document_new ();
  g_autofree char *id = NULL, *id2 = NULL, *text = NULL;
  const TgParamValue *v;
  const TgGraph *g;

  g_mkdir_with_parents (data, 0755);
  g_mkdir_with_parents (deep, 0755);
  id = tg_document_add_node (doc, "input.heightmap", 0, 0, NULL);
  id2 = tg_document_add_node (doc, "input.heightmap", 0, 200, NULL);
  TG_CHECK (tg_document_save (doc, f1, &error));
  TG_CHECK (tg_document_set_param_text (doc, id, "path", "data/scan.png", FALSE, &error));
  TG_CHECK (tg_document_set_param_text (doc, id2, "path", "/abs/scan.png", FALSE, &error));
  TG_CHECK (tg_document_save (doc, f1, &error));

  TG_CHECK_MSG (tg_document_save (doc, f2, &error), "%s", error ? error->message : "");
  g = tg_document_get_graph (doc);
  v = tg_graph_get_param (g, tg_graph_find_node (g, id), "path");
  TG_CHECK_MSG (!strcmp (v->s, "../../a/data/scan.png"), "got %s", v->s);
  v = tg_graph_get_param (g, tg_graph_find_node (g, id2), "path");
  TG_CHECK (!strcmp (v->s, "/abs/scan.png"));
  TG_CHECK (!tg_document_get_dirty (doc));
  /* The file says the same, and reopens to the same file. */
  TG_CHECK (tg_document_load (back, f2, &error));
  g = tg_document_get_graph (back);
  v = tg_graph_get_param (g, tg_graph_find_node (g, id), "path");
  TG_CHECK (!strcmp (v->s, "../../a/data/scan.png"));
  /* Into the data folder itself: the plain name. */
  TG_CHECK (tg_document_save (doc, f3, &error));
  g = tg_document_get_graph (doc);
  v = tg_graph_get_param (g, tg_graph_find_node (g, id), "path");
  TG_CHECK_MSG (!strcmp (v->s, "scan.png"), "got %s", v->s);
  /* Undo returns a graph in its own folder's terms, still the same file. */
  TG_CHECK (tg_document_undo (doc));
  g = tg_document_get_graph (doc);
  v = tg_graph_get_param (g, tg_graph_find_node (g, id2), "path");
  TG_CHECK (!v->s || !*v->s);
  /* A node deleted, the file saved elsewhere, the delete undone: the node
   * comes back with its path in the new folder's terms. */
  {
    TgDocument *d3 = tg_document_new ();
    g_autofree char *n3 = tg_document_add_node (d3, "input.heightmap", 0, 0, NULL);
    const char *one[] = { n3, NULL };
    TG_CHECK (tg_document_save (d3, f1, &error));
    TG_CHECK (tg_document_set_param_text (d3, n3, "path", "data/scan.png", FALSE, &error));
    TG_CHECK (tg_document_delete_nodes (d3, one, &error));
    TG_CHECK (tg_document_save (d3, f2, &error));
    TG_CHECK (tg_document_undo (d3));
    g = tg_document_get_graph (d3);
    v = tg_graph_get_param (g, tg_graph_find_node (g, n3), "path");
    TG_CHECK_MSG (v && !strcmp (v->s, "../../a/data/scan.png"), "got %s", v ? v->s : "-");
    g_object_unref (d3);
  }
  /* A path set, the file saved elsewhere, the setting undone and redone:
   * the path comes back in the new folder's terms, and its step holds two
   * values, not the graph. */
  {
    TgDocument *d4 = load_grid (8, 8);
    g_autofree char *n4 = tg_document_add_node (d4, "input.heightmap", 0, 0, NULL);
    g_autofree char *saved = NULL;
    gsize size;
    TG_CHECK (tg_document_save (d4, f1, &error));
    size = tg_document_get_undo_size (d4);
    TG_CHECK (tg_document_set_param_text (d4, n4, "path", "data/scan.png", FALSE, &error));
    TG_CHECK_MSG (tg_document_get_undo_size (d4) - size < 1024, "path step %zu",
                  tg_document_get_undo_size (d4) - size);
    TG_CHECK (tg_document_save (d4, f2, &error));
    TG_CHECK (tg_document_undo (d4));
    g = tg_document_get_graph (d4);
    v = tg_graph_get_param (g, tg_graph_find_node (g, n4), "path");
    TG_CHECK (!v->s || !*v->s);
    TG_CHECK (tg_document_redo (d4));
    g = tg_document_get_graph (d4);
    v = tg_graph_get_param (g, tg_graph_find_node (g, n4), "path");
    TG_CHECK_MSG (!strcmp (v->s, "../../a/data/scan.png"), "got %s", v->s);
    TG_CHECK (tg_document_save (d4, NULL, &error));
    TG_CHECK (g_file_get_contents (p2, &saved, NULL, NULL));
    TG_CHECK_STR_CONTAINS (saved, "\"path\": \"../../a/data/scan.png\"");
    g_object_unref (d4);
  }
  g_object_unref (doc);
  g_object_unref (back);
  g_unlink (p1);
  g_unlink (p2);
  g_unlink (p3);
  g_rmdir (data);
  g_rmdir (a);
  g_rmdir (deep);
  {
    g_autofree char *b = g_build_filename (root, "b", NULL);
    g_rmdir (b);
  }
  g_rmdir (root);
}

/* Autosave: a copy only while dirty and changed, found when newer than
 * the file, restored as one undoable step, gone after a save. */
static void
test_autosave_and_restore (void)
{
  const char *root = g_get_user_state_dir (); /* main () points it at a temporary folder */
  g_autofree char *path = g_build_filename (root, "g.tgraph", NULL);
  g_autofree char *copy = NULL, *text = NULL, *dead = NULL, *found = NULL;
  g_autofree char *adir = g_build_filename (root, "terrane", "autosave", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (GError) error = NULL;
  TgDocument *doc, *doc2;
  const TgGraph *g;

  doc = tg_document_new ();
  g_free (tg_document_add_node (doc, "noise.fbm", 0, 0, NULL));
  TG_CHECK (tg_document_save (doc, file, &error));
  TG_CHECK (tg_document_autosave (doc, &error));
  TG_CHECK (tg_document_find_recovery (file) == NULL); /* clean: nothing written */
  g_usleep (20000);
  TG_CHECK (tg_document_set_param_text (doc, "fbm", "scale_m", "321", FALSE, &error));
  TG_CHECK_MSG (tg_document_autosave (doc, &error), "%s", error ? error->message : "");
  copy = tg_document_find_recovery (file);
  TG_CHECK_MSG (copy != NULL, "no recovery copy under %s", root);
  TG_CHECK (copy && g_str_has_prefix (copy, adir));
  TG_CHECK (copy && g_file_get_contents (copy, &text, NULL, NULL));
  TG_CHECK (text && strstr (text, "\"scale_m\": 321"));

  /* Another document opening the file (after a crash) restores it. */
  doc2 = tg_document_new ();
  TG_CHECK (tg_document_load (doc2, file, &error));
  TG_CHECK (copy && tg_document_restore (doc2, copy, &error));
  g = tg_document_get_graph (doc2);
  TG_CHECK (tg_graph_get_param (g, 0, "scale_m")->f == 321);
  TG_CHECK (tg_document_get_dirty (doc2));
  TG_CHECK (!strcmp (tg_document_undo_label (doc2), "Restore Unsaved Changes"));
  TG_CHECK (!g_file_test (copy, G_FILE_TEST_EXISTS));
  TG_CHECK (tg_document_undo (doc2));
  TG_CHECK (!tg_document_get_dirty (doc2));

  /* Saving removes the copy. */
  TG_CHECK (tg_document_set_param_text (doc, "fbm", "scale_m", "322", FALSE, &error));
  TG_CHECK (tg_document_autosave (doc, &error));
  g_free (copy);
  copy = tg_document_find_recovery (file);
  TG_CHECK (copy != NULL);
  TG_CHECK (tg_document_save (doc, NULL, &error));
  TG_CHECK (copy && !g_file_test (copy, G_FILE_TEST_EXISTS));

  /* An untitled copy of a process that is gone is offered; ours is not. */
  {
    TgDocument *u = tg_document_new ();
    g_free (tg_document_add_node (u, "gen.constant", 0, 0, NULL));
    TG_CHECK (tg_document_autosave (u, &error));
    TG_CHECK (tg_document_find_untitled_recovery () == NULL);
    dead = g_build_filename (adir, "untitled-999999999-1.tgraph", NULL);
    TG_CHECK (g_file_set_contents (dead, "{}", -1, NULL));
    found = tg_document_find_untitled_recovery ();
    TG_CHECK (found && !strcmp (found, dead));
    tg_document_remove_recovery (u);
    g_object_unref (u);
  }
  g_unlink (dead);
  g_unlink (path);
  g_rmdir (adir);
  {
    g_autofree char *t = g_build_filename (root, "terrane", NULL);
    g_rmdir (t);
  }
  g_object_unref (doc);
  g_object_unref (doc2);
}

/* Frames live in the file's top-level "ui" block: add, change, move with
 * their nodes, delete, each one undo step, and a save/load round trip. */
static void
test_frames (void)
{
  TgDocument *doc = load_example ("data/examples/island.tgraph");
  g_autofree char *t0 = graph_text (doc), *text = NULL;
  TgFrame f = { (char *) "Coast", 10, 20, 300, 200, { 0.5, 0.25, 0.0 } };
  const char *ids[] = { "terrain", NULL };
  TgFrame *all;
  double x0, y0, x, y;
  int n;

  TG_CHECK_INT_EQ (tg_document_add_frame (doc, &f), 0);
  text = graph_text (doc);
  TG_CHECK_STR_CONTAINS (text, "\"frames\": [");
  TG_CHECK_STR_CONTAINS (text, "\"title\": \"Coast\", \"color\": \"#804000\"");
  f.title = (char *) "Shore";
  TG_CHECK (tg_document_set_frame (doc, 0, &f));
  tg_document_get_position (doc, "terrain", &x0, &y0);
  TG_CHECK (tg_document_move_frame (doc, 0, 15, -5, ids));
  tg_document_get_position (doc, "terrain", &x, &y);
  TG_CHECK (x == x0 + 15 && y == y0 - 5);
  all = tg_document_dup_frames (doc, &n);
  TG_CHECK (n == 1 && !strcmp (all[0].title, "Shore") && all[0].x == 25 && all[0].y == 15);
  tg_document_frames_free (all, n);
  TG_CHECK (!strcmp (tg_document_undo_label (doc), "Move Frame"));
  TG_CHECK (tg_document_undo (doc));
  tg_document_get_position (doc, "terrain", &x, &y);
  TG_CHECK (x == x0 && y == y0);
  TG_CHECK (tg_document_delete_frame (doc, 0));
  all = tg_document_dup_frames (doc, &n);
  TG_CHECK_INT_EQ (n, 0);
  tg_document_frames_free (all, n);
  TG_CHECK (!tg_document_delete_frame (doc, 0));
  TG_CHECK (tg_document_undo (doc) && tg_document_undo (doc) && tg_document_undo (doc));
  g_free (text);
  text = graph_text (doc);
  TG_CHECK (!strcmp (text, t0));
  g_object_unref (doc);
}

/* The typed state agrees with the graph: every node found by id at its
 * index, and its position the one its ui block says. */
static void
check_typed_state (TgDocument *doc)
{
  const TgGraph *g = tg_document_get_graph (doc);

  TG_CHECK_INT_EQ (tg_document_find_node (doc, "no such node"), -1);
  for (int n = 0; n < tg_graph_n_nodes (g); n++)
    {
      const char *ui = tg_graph_node_ui (g, n);
      const TgNodeUi *u = tg_document_get_node_ui (doc, n);
      TG_CHECK_INT_EQ (tg_document_find_node (doc, tg_graph_node_id (g, n)), n);
      TG_CHECK (u != NULL);
      if (ui && strstr (ui, "\"x\""))
        {
          g_autofree char *want = g_strdup_printf ("\"x\": %ld", lround (u->x));
          TG_CHECK_MSG (u->has_position && strstr (ui, want), "node %d: ui %s, typed x %g", n,
                        ui, u->x);
        }
      else
        TG_CHECK (!u->has_position);
    }
  TG_CHECK (tg_document_get_node_ui (doc, tg_graph_n_nodes (g)) == NULL);
}

/* A run of every kind of command, then undo to the start and redo to the
 * end: the graph text matches the one recorded at each step, both ways. */
static void
test_undo_redo_every_step_exact (void)
{
  TgDocument *doc = load_example ("data/examples/island.tgraph");
  g_autoptr (GPtrArray) texts = g_ptr_array_new_with_free_func (g_free);
  const char *one[2] = { NULL, NULL };
  g_autofree char *fbm = NULL, *linked = NULL, *clip = NULL;
  g_auto (GStrv) pasted = NULL;
  TgFrame f = { .title = (char *) "Group", .x = 10, .y = 20, .w = 400, .h = 300,
                .rgb = { 0.2, 0.4, 0.6 } };
  int steps = 0;

#define RECORD()                                                    \
  do                                                                \
    {                                                               \
      check_typed_state (doc);                                      \
      g_ptr_array_add (texts, graph_text (doc));                    \
    }                                                               \
  while (0)

  RECORD ();
  fbm = tg_document_add_node (doc, "noise.fbm", 100, 300, NULL);
  RECORD ();
  one[0] = fbm;
  TG_CHECK (tg_document_move_nodes (doc, one, 15, -20));
  RECORD ();
  TG_CHECK (tg_document_set_param_text (doc, fbm, "octaves", "3", FALSE, NULL));
  RECORD ();
  TG_CHECK (tg_document_connect (doc, fbm, "height", "mountains", "b", NULL));  /* replaces */
  RECORD ();
  linked = tg_document_add_node_linked (doc, "filter.terrace", 400, 300, fbm, "height", TRUE,
                                        NULL);
  TG_CHECK (linked != NULL);
  RECORD ();
  TG_CHECK (tg_document_rename_node (doc, linked, "steps", NULL));
  RECORD ();
  one[0] = "peaks";
  clip = tg_document_copy_text (doc, one, NULL);
  pasted = tg_document_paste_text (doc, clip, 900, 900, NULL);
  TG_CHECK (pasted && pasted[0]);
  RECORD ();
  TG_CHECK (tg_document_disconnect (doc, "mountains", "a"));
  RECORD ();
  TG_CHECK (tg_document_add_frame (doc, &f) == 0);
  RECORD ();
  one[0] = "steps";
  TG_CHECK (tg_document_move_frame (doc, 0, 30, 40, one));
  RECORD ();
  one[0] = "steps";
  TG_CHECK (tg_document_set_bypass (doc, one, TRUE, NULL));
  RECORD ();
  one[0] = "peaks";
  TG_CHECK (tg_document_delete_nodes (doc, one, NULL));
  RECORD ();
  {
    TgWorld w = *tg_graph_world_const (tg_document_get_graph (doc));
    w.height_m *= 2;
    TG_CHECK (tg_document_set_world (doc, &w, NULL));
  }
  RECORD ();
#undef RECORD
  steps = (int) texts->len - 1;

  for (int k = steps - 1; k >= 0; k--)
    {
      g_autofree char *t = NULL;
      TG_CHECK (tg_document_undo (doc));
      check_typed_state (doc);
      t = graph_text (doc);
      TG_CHECK_MSG (!strcmp (t, g_ptr_array_index (texts, k)), "undo to step %d differs", k);
    }
  TG_CHECK (!tg_document_can_undo (doc) && !tg_document_get_dirty (doc));
  for (int k = 1; k <= steps; k++)
    {
      g_autofree char *t = NULL;
      TG_CHECK (tg_document_redo (doc));
      check_typed_state (doc);
      t = graph_text (doc);
      TG_CHECK_MSG (!strcmp (t, g_ptr_array_index (texts, k)), "redo to step %d differs", k);
    }
  g_object_unref (doc);
}

/* Saves DOC to PATH and returns the file's bytes (caller frees). */
static char *
saved_bytes (TgDocument *doc, const char *path)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (GError) error = NULL;
  char *bytes = NULL;

  TG_CHECK_MSG (tg_document_save (doc, file, &error), "save: %s", error ? error->message : "");
  TG_CHECK (g_file_get_contents (path, &bytes, NULL, NULL));
  return bytes;
}

/* Copies the graph at REL into the temporary folder (through a document,
 * so that its paths are that folder's), with EXTRA commands applied, and
 * opens the copy. */
static TgDocument *
load_copy (const char *rel, gboolean frames_and_bypass)
{
  TgDocument *doc = load_example (rel), *copy = tg_document_new ();
  g_autofree char *path = g_strdup (tgtest_tmp_path ("splice-src.tgraph"));
  g_autofree char *bytes = NULL;
  g_autoptr (GFile) file = g_file_new_for_path (path);

  if (frames_and_bypass)
    {
      const TgGraph *g = tg_document_get_graph (doc);
      TgFrame f = { .title = (char *) "Back", .x = -20, .y = -30, .w = 700, .h = 400,
                    .rgb = { 0.3, 0.5, 0.2 } };
      int bypassed = 0;
      TG_CHECK (tg_document_add_frame (doc, &f) == 0);
      f.title = (char *) "Front";
      f.x = 500;
      TG_CHECK (tg_document_add_frame (doc, &f) == 1);
      for (int n = 0; n < tg_graph_n_nodes (g) && bypassed < 2; n++)
        if (tg_node_desc_bypass_input (tg_graph_node_desc (g, n)) >= 0)
          {
            const char *one[] = { tg_graph_node_id (g, n), NULL };
            TG_CHECK (tg_document_set_bypass (doc, one, TRUE, NULL));
            bypassed++;
          }
      TG_CHECK (bypassed == 2);
    }
  g_free (saved_bytes (doc, path));
  g_object_unref (doc);
  {
    g_autoptr (GError) error = NULL;
    TG_CHECK_MSG (tg_document_load (copy, file, &error), "%s", error ? error->message : "");
  }
  return copy;
}

/* Runs EDIT (which must change the graph) on DOC, then undo, redo and
 * undo: the file saves byte for byte as before the edit after each undo
 * and as right after the edit after the redo; the typed state agrees. */
#define CHECK_SPLICE(doc, what, EDIT)                                                  \
  do                                                                                 \
    {                                                                                \
      g_autofree char *before_ = saved_bytes (doc, tgtest_tmp_path ("splice.tgraph")); \
      g_autofree char *after_ = NULL, *undone_ = NULL, *redone_ = NULL, *again_ = NULL; \
      EDIT;                                                                          \
      check_typed_state (doc);                                                       \
      after_ = saved_bytes (doc, tgtest_tmp_path ("splice.tgraph"));                 \
      TG_CHECK_MSG (strcmp (before_, after_), "%s: changed nothing", what);          \
      TG_CHECK (tg_document_undo (doc));                                             \
      check_typed_state (doc);                                                       \
      undone_ = saved_bytes (doc, tgtest_tmp_path ("splice.tgraph"));                \
      TG_CHECK_MSG (!strcmp (before_, undone_), "%s: undo differs", what);           \
      TG_CHECK (tg_document_redo (doc));                                             \
      check_typed_state (doc);                                                       \
      redone_ = saved_bytes (doc, tgtest_tmp_path ("splice.tgraph"));                \
      TG_CHECK_MSG (!strcmp (after_, redone_), "%s: redo differs", what);            \
      TG_CHECK (tg_document_undo (doc));                                             \
      again_ = saved_bytes (doc, tgtest_tmp_path ("splice.tgraph"));                 \
      TG_CHECK_MSG (!strcmp (before_, again_), "%s: second undo differs", what);     \
      checked++;                                                                     \
    }                                                                                \
  while (0)

/* Delete (of one node, first, middle or last, and of several), disconnect
 * and a replaced link keep only what they take out, and undo puts it back
 * where it was: the saved file is the file from before, byte for byte, on
 * graphs with frames and bypassed nodes too; redo saves as the edit did. */
static void
test_splice_undo_restores_bytes (void)
{
  const struct
  {
    const char *rel;
    gboolean frames_and_bypass;
  } graphs[] = {
    { "data/examples/island.tgraph", FALSE }, { "data/examples/alpine.tgraph", TRUE },
    { "data/examples/forest.tgraph", FALSE }, { "data/examples/valley.tgraph", TRUE },
    { "tests/cli/data/bypass.tgraph", FALSE }, { "tests/gui/data/nodemenu.tgraph", TRUE },
  };
  int checked = 0, moved = 0;

  for (size_t e = 0; e < G_N_ELEMENTS (graphs); e++)
    {
      TgDocument *doc = load_copy (graphs[e].rel, graphs[e].frames_and_bypass);
      /* Saving replaces the document's graph: G is read again after each. */
#define g tg_document_get_graph (doc)
      int n = tg_graph_n_nodes (g), links = tg_graph_n_links (g);
      const int picks[][4] = { { 0, -1 }, { n / 2, -1 }, { n - 1, -1 }, { 0, n / 2, n - 1, -1 },
                               { 1, 2, -1 } };

      TG_CHECK (n >= 4 && links >= 3);
      for (size_t p = 0; p < G_N_ELEMENTS (picks); p++)
        {
          g_auto (GStrv) ids = g_new0 (char *, 5);
          for (int k = 0; picks[p][k] >= 0; k++)
            ids[k] = g_strdup (tg_graph_node_id (g, picks[p][k]));
          CHECK_SPLICE (doc, graphs[e].rel,
                        TG_CHECK (tg_document_delete_nodes (doc, (const char *const *) ids, NULL)));
        }
      /* Links from first to last (a file save syncs to disk: not all). */
      for (int l = 0; l < links; l += MAX (links / 6, 1))
        {
          const TgLink *lk = tg_graph_link (g, l);
          g_autofree char *to = g_strdup (tg_graph_node_id (g, lk->to_node));
          g_autofree char *port = g_strdup (tg_graph_node_desc (g, lk->to_node)
                                              ->inputs[lk->to_port].name);
          CHECK_SPLICE (doc, graphs[e].rel, TG_CHECK (tg_document_disconnect (doc, to, port)));
        }
      /* A link replaced: the first link's input fed from a node before it
       * that is not already its source. */
      {
        const TgLink last = *tg_graph_link (g, links - 1);
        const TgNodeDesc *td = tg_graph_node_desc (g, last.to_node);
        TgPortType type = td->inputs[last.to_port].type;
        g_autofree char *to = g_strdup (tg_graph_node_id (g, last.to_node));
        g_autofree char *port = g_strdup (td->inputs[last.to_port].name);
        for (int m = 0; m < n; m++)
          {
            const TgNodeDesc *d = tg_graph_node_desc (g, m);
            int out = tg_document_fitting_port (d, type, FALSE);
            g_autofree char *from = g_strdup (tg_graph_node_id (g, m));
            g_autofree char *from_port = NULL;
            g_autoptr (GError) error = NULL;
            gboolean ok;
            if (m == last.from_node || m == last.to_node || out < 0
                || !tg_port_type_compatible (d->outputs[out].type, type))
              continue;
            from_port = g_strdup (d->outputs[out].name);
            /* Refused (a cycle) changes nothing; otherwise one step. */
            g_autofree char *before = graph_text (doc);

            ok = tg_document_connect (doc, from, from_port, to, port, &error);
            if (!ok)
              {
                g_autofree char *same = graph_text (doc);
                TG_CHECK (!strcmp (before, same));
                check_typed_state (doc);
                continue;
              }
            TG_CHECK (tg_document_undo (doc));
            CHECK_SPLICE (doc, "connect",
                          TG_CHECK (tg_document_connect (doc, from, from_port, to, port, NULL)));
            /* The same link dragged to the input of the first link. */
            {
              const TgLink first = *tg_graph_link (g, 0);
              g_autofree char *to2 = g_strdup (tg_graph_node_id (g, first.to_node));
              g_autofree char *port2 = g_strdup (tg_graph_node_desc (g, first.to_node)
                                                   ->inputs[first.to_port].name);
              if (first.to_node != last.to_node || first.to_port != last.to_port)
                {
                  g_free (before);
                  before = graph_text (doc);
                  if (tg_document_move_link (doc, to, port, to2, port2, NULL))
                    {
                      TG_CHECK (tg_document_undo (doc));
                      CHECK_SPLICE (doc, "move link",
                                    TG_CHECK (tg_document_move_link (doc, to, port, to2, port2,
                                                                     NULL)));
                      moved++;
                    }
                  else
                    {
                      g_autofree char *same = graph_text (doc);
                      TG_CHECK (!strcmp (before, same));
                    }
                }
            }
            break;
          }
      }
#undef g
      g_object_unref (doc);
    }
  printf ("# %d splice edits undone and redone to the byte\n", checked);
  TG_CHECK (checked > 60 && moved >= 3);
}

/* The viewer pin is a node state kept in its ui block: one node at a
 * time, saved and loaded, an undo step, renamed and deleted (and undone)
 * with its node, dropped by a paste; the engine's graph is the same
 * with it or without. */
static void
test_viewer_pin (void)
{
  TgDocument *doc = load_copy ("data/examples/island.tgraph", FALSE), *back = tg_document_new ();
  g_autofree char *path = g_strdup (tgtest_tmp_path ("pinned.tgraph"));
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autofree char *plain = NULL, *bytes = NULL, *clip = NULL, *unpinned = NULL;
  g_auto (GStrv) pasted = NULL;
  const char *one[] = { "peaks", NULL };
  const TgGraph *g;
  TgGraph *a = NULL, *b = NULL;
  TgGraphDiff diff;
  TgError err = { 0 };
  Changes c = { 0 };
  int pins = 0;

  g_signal_connect (doc, "changed", G_CALLBACK (on_changed), &c);
  TG_CHECK (tg_document_get_pinned (doc) == NULL);
  plain = graph_text (doc);
  TG_CHECK (!tg_document_set_pinned (doc, "no such node"));
  TG_CHECK (tg_document_set_pinned (doc, "peaks"));
  TG_CHECK (!g_strcmp0 (tg_document_get_pinned (doc), "peaks"));
  TG_CHECK (tg_document_get_dirty (doc) && c.last_flags == TG_DOC_CHANGE_PIN);
  TG_CHECK_STR_CONTAINS (tg_document_undo_label (doc), "Pin");
  TG_CHECK (tg_document_set_pinned (doc, "mountains"));
  TG_CHECK (!g_strcmp0 (tg_document_get_pinned (doc), "mountains"));
  TG_CHECK (!tg_document_get_node_ui (doc, tg_document_find_node (doc, "peaks"))->viewer_pin);

  /* Saved on that node only, and loaded back. */
  bytes = saved_bytes (doc, path);
  for (const char *p = bytes; (p = strstr (p, "\"viewer_pin\": true")); p++)
    pins++;
  TG_CHECK_INT_EQ (pins, 1);
  TG_CHECK (tg_document_load (back, file, NULL));
  TG_CHECK (!g_strcmp0 (tg_document_get_pinned (back), "mountains"));
  /* The engine reads the same graph: only the pin differs, which diff names. */
  TG_CHECK (tg_tgraph_load_string_ex (plain, strlen (plain), ".", TG_TGRAPH_LOAD_NO_VALIDATE, &a,
                                      &err) == 0);
  TG_CHECK (tg_tgraph_load_string_ex (bytes, strlen (bytes), ".", TG_TGRAPH_LOAD_NO_VALIDATE, &b,
                                      &err) == 0);
  TG_CHECK (tg_graph_diff (a, b, &diff, &err) == 0);
  TG_CHECK_INT_EQ (diff.n, 1);
  TG_CHECK (diff.entries[0].kind == TG_DIFF_NODE_PIN);
  TG_CHECK (!g_strcmp0 (diff.entries[0].node, "mountains"));
  tg_graph_diff_clear (&diff);
  tg_graph_free (a);
  tg_graph_free (b);

  /* Rename and delete carry it; undo brings it back. */
  TG_CHECK (tg_document_rename_node (back, "mountains", "range", NULL));
  TG_CHECK (!g_strcmp0 (tg_document_get_pinned (back), "range"));
  one[0] = "range";
  TG_CHECK (tg_document_delete_nodes (back, one, NULL));
  TG_CHECK (tg_document_get_pinned (back) == NULL);
  TG_CHECK (tg_document_undo (back));
  TG_CHECK (!g_strcmp0 (tg_document_get_pinned (back), "range"));
  TG_CHECK (tg_document_undo (back));
  TG_CHECK (!g_strcmp0 (tg_document_get_pinned (back), "mountains"));

  /* A copy of the pinned node is not pinned. */
  one[0] = "mountains";
  clip = tg_document_copy_text (back, one, NULL);
  TG_CHECK_STR_CONTAINS (clip, "viewer_pin");
  pasted = tg_document_paste_text (back, clip, 800, 800, NULL);
  TG_CHECK (pasted && pasted[0] && !pasted[1]);
  TG_CHECK (!g_strcmp0 (tg_document_get_pinned (back), "mountains"));
  g = tg_document_get_graph (back);
  TG_CHECK (!tg_graph_node_ui (g, tg_graph_find_node (g, pasted[0]))
            || !strstr (tg_graph_node_ui (g, tg_graph_find_node (g, pasted[0])), "viewer_pin"));

  /* Unpinned: the file is the file from before (the pin's key gone). */
  TG_CHECK (tg_document_set_pinned (doc, NULL));
  TG_CHECK (tg_document_get_pinned (doc) == NULL);
  unpinned = graph_text (doc);
  TG_CHECK (!strcmp (unpinned, plain));
  TG_CHECK (tg_document_undo (doc));
  TG_CHECK (!g_strcmp0 (tg_document_get_pinned (doc), "mountains"));
  g_free (c.last_node);
  g_object_unref (back);
  g_object_unref (doc);
}

/* A graph of ROWS x COLS nodes, each fed by its left neighbour. */
static TgDocument *
load_grid (int rows, int cols)
{
  GString *s = g_string_new ("{ \"format\": \"tgraph\", \"version\": 2, \"world\": { "
                             "\"size_m\": [4096, 4096], \"height_m\": 1000, \"resolution\": 257, "
                             "\"seed\": 1 }, \"nodes\": [");
  g_autofree char *path = g_strdup (tgtest_tmp_path ("grid.tgraph"));
  g_autoptr (GFile) file = g_file_new_for_path (path);
  TgDocument *doc = tg_document_new ();
  gboolean ok;

  for (int k = 0; k < rows * cols; k++)
    g_string_append_printf (s, "%s{ \"id\": \"n%d\", \"type\": \"%s\", \"ui\": { \"x\": %d, "
                            "\"y\": %d } }", k ? "," : "", k,
                            k % cols ? "filter.terrace" : "noise.fbm", k % cols * 240,
                            k / cols * 220);
  g_string_append (s, "], \"links\": [");
  for (int k = 1, first = 1; k < rows * cols; k++)
    if (k % cols)
      {
        g_string_append_printf (s, "%s{ \"from\": \"n%d.height\", \"to\": \"n%d.height\" }",
                                first ? "" : ",", k - 1, k);
        first = 0;
      }
  g_string_append (s, "] }");
  TG_CHECK (g_file_set_contents (path, s->str, -1, NULL));
  g_string_free (s, TRUE);
  {
    g_autoptr (GError) error = NULL;
    ok = tg_document_load (doc, file, &error);
    TG_CHECK_MSG (ok, "load: %s", error ? error->message : "");
  }
  return doc;
}

/* Undo memory follows the edit, not the graph: on a 1024-node graph a
 * move, a parameter, a delete, a disconnect or a replaced link costs a
 * kilobyte or two at most, about the same as on a small graph. */
static void
test_undo_memory_follows_the_edit (void)
{
  TgDocument *doc = load_grid (32, 32);
  TgDocument *small = load_grid (1, 2);
  const char *one[] = { "n500", NULL };
  const char *small_one[] = { "n1", NULL };
  g_autofree char *text = graph_text (doc);
  gsize move, param, param_small, move_small;

  TG_CHECK (tg_document_move_nodes (doc, one, 10, 10));
  move = tg_document_get_undo_size (doc);
  TG_CHECK (tg_document_set_param_text (doc, "n500", "steps", "7", FALSE, NULL));
  param = tg_document_get_undo_size (doc) - move;
  TG_CHECK (tg_document_move_nodes (small, small_one, 10, 10));
  move_small = tg_document_get_undo_size (small);
  TG_CHECK (tg_document_set_param_text (small, "n1", "steps", "7", FALSE, NULL));
  param_small = tg_document_get_undo_size (small) - move_small;
  printf ("# undo step at 1024 nodes: move %zu bytes, parameter %zu bytes (graph text %zu)\n",
          move, param, strlen (text));
  /* The same edit on 2 and on 1024 nodes: the same size but for the
   * longer id ("n500" against "n1"). */
  TG_CHECK_MSG (move < 1024 && move < move_small + 32, "move step %zu vs %zu", move, move_small);
  TG_CHECK_MSG (param < 1024 && param < param_small + 32, "param step %zu vs %zu", param,
                param_small);
  /* Twenty moves of one node: twenty small steps. */
  for (int k = 0; k < 20; k++)
    TG_CHECK (tg_document_move_nodes (doc, one, 1, 0));
  TG_CHECK (tg_document_get_undo_size (doc) < 22 * 1024);

  /* Deleting a node keeps that node and its two links; disconnecting
   * and replacing a link keep the links; the same on 2 nodes. */
  {
    gsize before = tg_document_get_undo_size (doc), del, cut, swap, del_small;
    TG_CHECK (tg_document_disconnect (doc, "n600", "height"));
    cut = tg_document_get_undo_size (doc) - before;
    before = tg_document_get_undo_size (doc);
    TG_CHECK (tg_document_connect (doc, "n0", "height", "n700", "height", NULL));
    swap = tg_document_get_undo_size (doc) - before;
    before = tg_document_get_undo_size (doc);
    {
      const char *two[] = { "n801", "n802", NULL };
      gsize bypass;
      TG_CHECK (tg_document_set_bypass (doc, two, TRUE, NULL));
      bypass = tg_document_get_undo_size (doc) - before;
      printf ("# undo step at 1024 nodes: bypass of 2 nodes %zu bytes\n", bypass);
      TG_CHECK_MSG (bypass < 1024, "bypass step %zu", bypass);
    }
    before = tg_document_get_undo_size (doc);
    TG_CHECK (tg_document_delete_nodes (doc, one, NULL));
    del = tg_document_get_undo_size (doc) - before;
    TG_CHECK (tg_document_undo (doc));
    check_typed_state (doc);
    TG_CHECK_INT_EQ (tg_document_find_node (doc, "n500"), 500);
    TG_CHECK (tg_document_delete_nodes (small, small_one, NULL));
    del_small = tg_document_get_undo_size (small) - move_small - param_small;
    printf ("# undo step at 1024 nodes: delete %zu bytes (at 2 nodes %zu), disconnect %zu, "
            "replace a link %zu\n", del, del_small, cut, swap);
    TG_CHECK_MSG (del < 2048 && del < del_small + 128, "delete step %zu vs %zu", del, del_small);
    TG_CHECK_MSG (cut < 512 && swap < 1024, "disconnect %zu, replace %zu", cut, swap);
  }
  g_object_unref (small);
  g_object_unref (doc);
}

/* The hit test finds what a brute force over every port and node finds,
 * at points around a few nodes of a 1024-node graph, and with a node
 * being dragged. */
static void
test_hit_test_matches_brute_force (void)
{
  TgDocument *doc = load_grid (32, 32);
  const TgGraph *g = tg_document_get_graph (doc);
  g_autoptr (GHashTable) moving = g_hash_table_new (g_str_hash, g_str_equal);
  int checked = 0;

  g_hash_table_add (moving, (gpointer) "n33");
  for (int pass = 0; pass < 2; pass++)
    for (int n = 0; n < 64; n += 7)
      for (double dy = -15; dy < 220; dy += 3.5)
        for (double dx = -15; dx < 190; dx += 4.5)
          {
            double x0, y0, cx, cy, mdx = pass ? 250 : 0, mdy = pass ? 30 : 0;
            TgCanvasHit want = { TG_CANVAS_HIT_NONE, -1, -1 }, got;

            tg_document_get_position_at (doc, n, &x0, &y0);
            cx = x0 + dx;
            cy = y0 + dy;
            for (int m = tg_graph_n_nodes (g) - 1; m >= 0 && want.kind == TG_CANVAS_HIT_NONE; m--)
              {
                const TgNodeDesc *d = tg_graph_node_desc (g, m);
                double x, y;
                tg_document_get_position_at (doc, m, &x, &y);
                if (pass && !strcmp (tg_graph_node_id (g, m), "n33"))
                  x += mdx, y += mdy;
                for (int p = 0; p < d->n_inputs + d->n_outputs; p++)
                  {
                    gboolean out = p >= d->n_inputs;
                    int k = out ? p - d->n_inputs : p;
                    double px = x + (out ? TG_CANVAS_NODE_W : 0);
                    double py = y + TG_CANVAS_HEADER_H + 6 + k * TG_CANVAS_PORT_H
                                + TG_CANVAS_PORT_H / 2;
                    if (hypot (cx - px, cy - py) <= TG_CANVAS_PORT_HIT)
                      {
                        want = (TgCanvasHit) { out ? TG_CANVAS_HIT_OUTPUT : TG_CANVAS_HIT_INPUT,
                                               m, k };
                        break;
                      }
                  }
              }
            for (int m = tg_graph_n_nodes (g) - 1; m >= 0 && want.kind == TG_CANVAS_HIT_NONE; m--)
              {
                double x, y;
                tg_document_get_position_at (doc, m, &x, &y);
                if (pass && !strcmp (tg_graph_node_id (g, m), "n33"))
                  x += mdx, y += mdy;
                if (cx >= x && cx <= x + TG_CANVAS_NODE_W && cy >= y
                    && cy <= y + tg_canvas_node_height (tg_graph_node_desc (g, m)))
                  want = (TgCanvasHit) { TG_CANVAS_HIT_NODE, m, -1 };
              }
            got = tg_canvas_hit_nodes (doc, cx, cy, pass ? moving : NULL, mdx, mdy);
            TG_CHECK_MSG (got.kind == want.kind && got.node == want.node && got.port == want.port,
                          "at %g,%g: got %d %d %d, want %d %d %d", cx, cy, got.kind, got.node,
                          got.port, want.kind, want.node, want.port);
            checked += want.kind != TG_CANVAS_HIT_NONE;
          }
  TG_CHECK (checked > 1000);
  g_object_unref (doc);
}

/* Loading and saving a file nobody changed gives its bytes back (the
 * examples are written by `tgraph fmt`), and so does a move undone. */
static void
test_unchanged_file_saves_same_bytes (void)
{
  const char *examples[] = { "data/examples/island.tgraph", "data/examples/alpine.tgraph" };

  for (size_t e = 0; e < G_N_ELEMENTS (examples); e++)
    {
      TgDocument *doc = load_example (examples[e]);
      g_autofree char *orig = NULL, *saved = NULL;
      g_autofree char *path = g_strdup (tgtest_tmp_path ("same.tgraph"));
      g_autoptr (GFile) file = g_file_new_for_path (path);
      const TgGraph *g = tg_document_get_graph (doc);
      const char *one[2] = { tg_graph_node_id (g, 0), NULL };

      TG_CHECK (g_file_get_contents (tgtest_src (examples[e]), &orig, NULL, NULL));
      TG_CHECK (tg_document_move_nodes (doc, one, 40, 40));
      TG_CHECK (tg_document_undo (doc));
      TG_CHECK (tg_document_save (doc, file, NULL));
      TG_CHECK (g_file_get_contents (path, &saved, NULL, NULL));
      TG_CHECK_MSG (!strcmp (orig, saved), "%s saved differs", examples[e]);
      g_object_unref (doc);
    }
}

int
main (void)
{
  g_autofree char *state = g_dir_make_tmp ("terrane-state-XXXXXX", NULL);

  /* Before GLib reads it: recovery copies of the tests stay out of $HOME. */
  g_setenv ("XDG_STATE_HOME", state, TRUE);
  tg_formats_init ();
  tgtest_tmpdir ("test-document-");
  TG_RUN (test_add_move_delete_undo_redo);
  TG_RUN (test_connect_replaces_and_refuses);
  TG_RUN (test_param_drag_is_one_step);
  TG_RUN (test_world_settings);
  TG_RUN (test_copy_paste);
  TG_RUN (test_save_reopen_unfinished_and_bad_load);
  TG_RUN (test_add_linked_and_rename);
  TG_RUN (test_node_limit);
  TG_RUN (test_save_as_rebases_input_paths);
  TG_RUN (test_autosave_and_restore);
  TG_RUN (test_frames);
  TG_RUN (test_undo_redo_every_step_exact);
  TG_RUN (test_splice_undo_restores_bytes);
  TG_RUN (test_viewer_pin);
  TG_RUN (test_undo_memory_follows_the_edit);
  TG_RUN (test_hit_test_matches_brute_force);
  TG_RUN (test_unchanged_file_saves_same_bytes);
  g_rmdir (state);
  return tgtest_result ();
}
