/* TgStartPage: the page a window shows over its canvas until it has a
 * graph, after gnome-text-editor's and Builder's: a new graph, the
 * recent files and the bundled examples with thumbnails.
 *
 * An example's thumbnail is rendered by the engine from the example
 * itself at THUMB_SIZE samples (the map its first colour or height export
 * writes), off the main thread, one example after the other, and kept in
 * the user's cache folder under a hash of the example's bytes, the app's
 * version and the other files beside it (the paint maps it reads): an
 * edited example gets a new thumbnail, never a stale one.
 */
#include "config.h"

#include "tg-start-page.h"
#include "tg-evaluator.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>
#include <tgformats/tgformats.h>

#define THUMB_SIZE 160

typedef struct
{
  char *path;
  GtkPicture *picture;
} Example;

struct _TgStartPage
{
  GtkWidget parent_instance;

  GtkWidget *scroller, *recent_title;
  GtkListBox *recent;
  GtkFlowBox *examples;

  GPtrArray *items; /* Example */
  guint next_thumb; /* the next item whose thumbnail is made */
  GCancellable *cancel;
  gboolean loaded;
};

enum
{
  SIGNAL_OPEN_FILE,
  SIGNAL_NEW_GRAPH,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (TgStartPage, tg_start_page, GTK_TYPE_WIDGET)

char *
tg_start_page_examples_dir (void)
{
  const char *dir = g_getenv ("TERRANE_DATADIR");

  return g_build_filename (dir && *dir ? dir : PKGDATADIR, "examples", NULL);
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static void
example_free (Example *e)
{
  g_free (e->path);
  g_free (e);
}

/* --- thumbnails ---------------------------------------------------------------- */

/* The output a thumbnail shows: what the first export of a colour map
 * writes, else of a height; else the last node with a height output. */
static int
thumbnail_node (const TgGraph *g, int *output)
{
  static const TgPortType wanted[] = { TG_TYPE_IMAGE, TG_TYPE_HEIGHT };

  for (guint w = 0; w < G_N_ELEMENTS (wanted); w++)
    for (int n = 0; n < tg_graph_n_nodes (g); n++)
      {
        const TgNodeDesc *d = tg_graph_node_desc (g, n);
        int l;
        if (!(d->flags & TG_NODE_EXPORT) || d->n_inputs < 1
            || (l = tg_graph_input_link (g, n, 0)) < 0)
          continue;
        const TgLink *link = tg_graph_link (g, l);
        const TgNodeDesc *from = tg_graph_node_desc (g, link->from_node);
        if (from->outputs[link->from_port].type == wanted[w])
          {
            *output = link->from_port;
            return link->from_node;
          }
      }
  for (int n = tg_graph_n_nodes (g) - 1; n >= 0; n--)
    {
      const TgNodeDesc *d = tg_graph_node_desc (g, n);
      if (d->n_outputs > 0 && d->outputs[0].type == TG_TYPE_HEIGHT)
        {
          *output = 0;
          return n;
        }
    }
  return -1;
}

/* The cache file of PATH's thumbnail: its name hashes what the picture
 * depends on. */
static char *
thumbnail_cache_path (const char *path)
{
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  g_autofree char *text = NULL, *dir = g_path_get_dirname (path), *name = NULL;
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  gsize len = 0;
  const char *f;

  if (!g_file_get_contents (path, &text, &len, NULL))
    return NULL;
  g_checksum_update (sum, (const guchar *) PACKAGE_VERSION "\n" G_STRINGIFY (THUMB_SIZE) "\n", -1);
  g_checksum_update (sum, (const guchar *) text, (gssize) len);
  /* The files an example reads lie beside it; sorted, so the order of the
   * folder's listing does not matter. */
  if (d)
    {
      g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
      while ((f = g_dir_read_name (d)))
        if (!g_str_has_suffix (f, ".tgraph"))
          g_ptr_array_add (names, g_strdup (f));
      g_ptr_array_sort (names, compare_names);
      for (guint k = 0; k < names->len; k++)
        {
          g_autofree char *full = g_build_filename (dir, names->pdata[k], NULL);
          g_autofree char *line = NULL;
          GStatBuf st;
          if (g_stat (full, &st) != 0)
            continue;
          line = g_strdup_printf ("%s %lld %lld\n", (char *) names->pdata[k], (long long) st.st_size,
                                  (long long) st.st_mtime);
          g_checksum_update (sum, (const guchar *) line, -1);
        }
    }
  name = g_strconcat (g_checksum_get_string (sum), ".png", NULL);
  return g_build_filename (g_get_user_cache_dir (), "terrane", "thumbnails", name, NULL);
}

/* Renders PATH's thumbnail into CACHE (written whole or not at all). */
static gboolean
render_thumbnail (const char *path, const char *cache, GError **error)
{
  TgGraph *g = NULL;
  TgError err = { 0 };
  TgEngineOptions opts = { .threads = 1, .no_cache = true };
  TgEngine *engine;
  TgValue *v = NULL;
  TgRegion region;
  int node, output = 0, rc;
  g_autofree char *dir = g_path_get_dirname (cache);
  g_autofree char *tmp = g_strconcat (cache, ".part", NULL);

  if (tg_tgraph_load_file (path, &g, &err) < 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", err.message);
      return FALSE;
    }
  if ((node = thumbnail_node (g, &output)) < 0)
    {
      tg_graph_free (g);
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "nothing to show");
      return FALSE;
    }
  tg_region_for_world (&region, tg_graph_world_const (g), THUMB_SIZE);
  engine = tg_engine_new (&opts);
  rc = tg_engine_pull (engine, g, node, output, &region, NULL, &v, NULL, &err);
  tg_engine_free (engine);
  tg_graph_free (g);
  if (rc < 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", err.message);
      return FALSE;
    }
  {
    cairo_surface_t *s = tg_evaluator_render_thumbnail (v, THUMB_SIZE);
    gboolean ok = g_mkdir_with_parents (dir, 0755) == 0
                  && cairo_surface_write_to_png (s, tmp) == CAIRO_STATUS_SUCCESS
                  && g_rename (tmp, cache) == 0;
    cairo_surface_destroy (s);
    tg_value_unref (v);
    if (!ok)
      {
        g_unlink (tmp);
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "cannot write %s", cache);
      }
    return ok;
  }
}

static void
thumbnail_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  const char *path = data;
  g_autofree char *cache = thumbnail_cache_path (path);
  GError *error = NULL;

  if (cache && !g_file_test (cache, G_FILE_TEST_EXISTS) && !render_thumbnail (path, cache, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  g_task_return_pointer (task, g_steal_pointer (&cache), g_free);
}

static void next_thumbnail (TgStartPage *self);

static void
thumbnail_done (GObject *source, GAsyncResult *res, gpointer data)
{
  TgStartPage *self = TG_START_PAGE (source);
  g_autoptr (GError) error = NULL;
  g_autofree char *cache = g_task_propagate_pointer (G_TASK (res), &error);
  Example *e;

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  e = self->items->pdata[self->next_thumb];
  if (cache)
    gtk_picture_set_filename (e->picture, cache);
  else if (error)
    g_warning ("no thumbnail for an example: %s", error->message);
  self->next_thumb++;
  next_thumbnail (self);
}

static void
next_thumbnail (TgStartPage *self)
{
  g_autoptr (GTask) task = NULL;
  Example *e;

  if (self->next_thumb >= self->items->len)
    return;
  e = self->items->pdata[self->next_thumb];
  task = g_task_new (self, self->cancel, thumbnail_done, NULL);
  g_task_set_task_data (task, g_strdup (e->path), g_free);
  g_task_run_in_thread (task, thumbnail_thread);
}

int
tg_start_page_pending_thumbnails (TgStartPage *self, int *n_examples, int *n_shown)
{
  *n_examples = (int) self->items->len;
  *n_shown = 0;
  for (guint k = 0; k < self->items->len; k++)
    *n_shown += gtk_picture_get_paintable (((Example *) self->items->pdata[k])->picture) != NULL;
  return (int) (self->items->len - MIN (self->next_thumb, self->items->len));
}

/* --- the lists --------------------------------------------------------------------- */

static void
emit_open (TgStartPage *self, const char *path)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);

  g_signal_emit (self, signals[SIGNAL_OPEN_FILE], 0, file);
}

static void
example_clicked (GtkButton *button, TgStartPage *self)
{
  emit_open (self, g_object_get_data (G_OBJECT (button), "path"));
}

static void
recent_activated (TgStartPage *self, GtkListBoxRow *row)
{
  emit_open (self, g_object_get_data (G_OBJECT (row), "path"));
}

static void
new_clicked (TgStartPage *self)
{
  g_signal_emit (self, signals[SIGNAL_NEW_GRAPH], 0);
}

void
tg_start_page_set_recent (TgStartPage *self, const char *const *paths)
{
  GtkWidget *c;
  int n = 0;

  while ((c = gtk_widget_get_first_child (GTK_WIDGET (self->recent))))
    gtk_list_box_remove (self->recent, c);
  for (int k = 0; paths && paths[k]; k++)
    {
      g_autofree char *base = g_path_get_basename (paths[k]);
      g_autofree char *dir = g_path_get_dirname (paths[k]);
      GtkWidget *row, *box, *name, *where;

      /* A file moved or deleted since: not offered. */
      if (!g_file_test (paths[k], G_FILE_TEST_IS_REGULAR))
        continue;
      row = gtk_list_box_row_new ();
      box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
      name = gtk_label_new (base);
      where = gtk_label_new (dir);
      gtk_label_set_xalign (GTK_LABEL (name), 0);
      gtk_label_set_xalign (GTK_LABEL (where), 0);
      gtk_label_set_ellipsize (GTK_LABEL (where), PANGO_ELLIPSIZE_START);
      gtk_widget_add_css_class (where, "dim-label");
      gtk_widget_add_css_class (where, "caption");
      gtk_widget_set_margin_start (box, 12);
      gtk_widget_set_margin_end (box, 12);
      gtk_widget_set_margin_top (box, 8);
      gtk_widget_set_margin_bottom (box, 8);
      gtk_box_append (GTK_BOX (box), name);
      gtk_box_append (GTK_BOX (box), where);
      gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), box);
      gtk_widget_set_tooltip_text (row, paths[k]);
      g_object_set_data_full (G_OBJECT (row), "path", g_strdup (paths[k]), g_free);
      gtk_list_box_append (self->recent, row);
      n++;
    }
  gtk_widget_set_visible (GTK_WIDGET (self->recent), n > 0);
  gtk_widget_set_visible (self->recent_title, n > 0);
}

int
tg_start_page_n_recent (TgStartPage *self)
{
  int n = 0;

  for (GtkWidget *c = gtk_widget_get_first_child (GTK_WIDGET (self->recent)); c;
       c = gtk_widget_get_next_sibling (c))
    n++;
  return n;
}

/* One card per example, in name order; thumbnails follow. */
static void
load_examples (TgStartPage *self)
{
  g_autofree char *dir = tg_start_page_examples_dir ();
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *f;

  while (d && (f = g_dir_read_name (d)))
    if (g_str_has_suffix (f, ".tgraph"))
      g_ptr_array_add (names, g_strdup (f));
  g_ptr_array_sort (names, compare_names);
  for (guint k = 0; k < names->len; k++)
    {
      Example *e = g_new0 (Example, 1);
      g_autofree char *title = g_strndup (names->pdata[k], strlen (names->pdata[k]) - 7);
      GtkWidget *button = gtk_button_new ();
      GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
      GtkWidget *label;

      e->path = g_build_filename (dir, names->pdata[k], NULL);
      e->picture = GTK_PICTURE (gtk_picture_new ());
      gtk_picture_set_can_shrink (e->picture, FALSE);
      gtk_widget_set_size_request (GTK_WIDGET (e->picture), THUMB_SIZE, THUMB_SIZE);
      title[0] = g_ascii_toupper (title[0]);
      label = gtk_label_new (title);
      gtk_box_append (GTK_BOX (box), GTK_WIDGET (e->picture));
      gtk_box_append (GTK_BOX (box), label);
      gtk_button_set_child (GTK_BUTTON (button), box);
      gtk_widget_add_css_class (button, "example");
      gtk_widget_set_tooltip_text (button, e->path);
      g_object_set_data_full (G_OBJECT (button), "path", g_strdup (e->path), g_free);
      g_signal_connect (button, "clicked", G_CALLBACK (example_clicked), self);
      gtk_flow_box_append (self->examples, button);
      g_ptr_array_add (self->items, e);
    }
  next_thumbnail (self);
}

/* --- the widget -------------------------------------------------------------------- */

/* The examples and their thumbnails only once the page shows: a window
 * opened on a file never makes them. */
static void
tg_start_page_map (GtkWidget *widget)
{
  TgStartPage *self = TG_START_PAGE (widget);

  GTK_WIDGET_CLASS (tg_start_page_parent_class)->map (widget);
  if (!self->loaded)
    {
      self->loaded = TRUE;
      load_examples (self);
    }
}

static void
tg_start_page_dispose (GObject *object)
{
  TgStartPage *self = TG_START_PAGE (object);

  g_cancellable_cancel (self->cancel);
  gtk_widget_dispose_template (GTK_WIDGET (self), TG_TYPE_START_PAGE);
  G_OBJECT_CLASS (tg_start_page_parent_class)->dispose (object);
}

static void
tg_start_page_finalize (GObject *object)
{
  TgStartPage *self = TG_START_PAGE (object);

  g_clear_object (&self->cancel);
  g_ptr_array_unref (self->items);
  G_OBJECT_CLASS (tg_start_page_parent_class)->finalize (object);
}

static void
tg_start_page_class_init (TgStartPageClass *klass)
{
  GtkWidgetClass *wc = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = tg_start_page_dispose;
  G_OBJECT_CLASS (klass)->finalize = tg_start_page_finalize;
  wc->map = tg_start_page_map;
  signals[SIGNAL_OPEN_FILE] = g_signal_new ("open-file", G_TYPE_FROM_CLASS (klass),
                                            G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE,
                                            1, G_TYPE_FILE);
  signals[SIGNAL_NEW_GRAPH] = g_signal_new ("new-graph", G_TYPE_FROM_CLASS (klass),
                                            G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE,
                                            0);
  gtk_widget_class_set_layout_manager_type (wc, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_template_from_resource (wc, "/io/github/terrane/Terrane/tg-start-page.ui");
  gtk_widget_class_bind_template_child (wc, TgStartPage, scroller);
  gtk_widget_class_bind_template_child (wc, TgStartPage, recent_title);
  gtk_widget_class_bind_template_child (wc, TgStartPage, recent);
  gtk_widget_class_bind_template_child (wc, TgStartPage, examples);
  gtk_widget_class_bind_template_callback (wc, recent_activated);
  gtk_widget_class_bind_template_callback (wc, new_clicked);
  gtk_widget_class_set_css_name (wc, "tgstartpage");
}

static void
tg_start_page_init (TgStartPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->items = g_ptr_array_new_with_free_func ((GDestroyNotify) example_free);
  self->cancel = g_cancellable_new ();
}
