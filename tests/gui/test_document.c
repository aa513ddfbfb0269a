/* TgDocument without a display: every command, undo/redo back to the
 * exact graph text, one undo step per slider drag, copy/paste with links
 * and fresh ids, dirty state across save and undo, unfinished graphs that
 * save and reopen, and a failed load that leaves the document alone. */
#include "config.h"

#include "tg-document.h"

#include <glib/gstdio.h>
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

int
main (void)
{
  tg_formats_init ();
  TG_RUN (test_add_move_delete_undo_redo);
  TG_RUN (test_connect_replaces_and_refuses);
  TG_RUN (test_param_drag_is_one_step);
  TG_RUN (test_world_settings);
  TG_RUN (test_copy_paste);
  TG_RUN (test_save_reopen_unfinished_and_bad_load);
  return tgtest_result ();
}
