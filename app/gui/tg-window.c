/* TgWindow: wires one document to the canvas, inspector, viewer and the
 * background evaluator, and holds the window's actions (files, export,
 * undo, clipboard).
 *
 * Every document change that can alter an output asks the evaluator for
 * a new preview of the active node (which cancels the running job); the
 * canvas's gestures and the inspector's edits reach the document
 * directly.  Export runs in its own GTask with its own engine, through
 * tg_build, the same call as `tgraph eval`.
 */
#include "config.h"

#include "tg-window.h"
#include "tg-node-menu.h"
#include "tg-canvas.h"
#include "tg-evaluator.h"
#include "tg-export-dialog.h"
#include "tg-messages.h"
#include "tg-start-page.h"
#include "tg-inspector.h"
#include "tg-viewer.h"

#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <tgformats/tgformats.h>

#define THUMB_RES 97
#define RECENT_MAX 8

struct _TgWindow
{
  GtkApplicationWindow parent_instance;

  TgCanvas *canvas;
  TgInspector *inspector;
  TgViewer *viewer;
  gboolean pin_from_doc; /* the viewer's pin is being set to the document's */
  TgStartPage *start_page;
  gboolean start_dismissed; /* "New Graph" was chosen */
  GtkLabel *title_label, *subtitle_label, *status_label, *progress_label;
  GtkProgressBar *progress_bar;
  GtkWidget *progress_box;
  GMenu *recent_menu;

  TgDocument *doc;
  TgEvaluator *evaluator;
  GSettings *settings; /* NULL when the schema is not installed */
  gboolean timing;

  guint shown_job;
  gint64 edit_time;    /* the edit the next preview answers */
  char *status_node;   /* the node whose failure the status bar tells, or NULL */
  char *running_node;  /* the node the evaluator last said it was running */
  double running_fraction;

  /* export */
  GCancellable *export_cancel;
  TgCancel *export_token;
  int export_rc;
  char *export_message;
  char *export_dir;     /* the last export's folder, offered next time */
  guint64 memory_limit; /* an export's; 0: the memory available */
  gboolean close_after_save;

  /* autosave */
  guint autosave_id;
  char *recovery_offer;    /* a recovery copy the user has not answered yet */
  GtkWidget *recovery_dialog;
};

G_DEFINE_FINAL_TYPE (TgWindow, tg_window, GTK_TYPE_APPLICATION_WINDOW)

static void
set_status (TgWindow *self, const char *text)
{
  gtk_label_set_text (self->status_label, text ? text : "");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->status_label), NULL);
  g_clear_pointer (&self->status_node, g_free);
}

/* The node the viewer shows: the pinned one, else the active one. */
static const char *
shown_id (TgWindow *self)
{
  const char *pinned = tg_viewer_get_pinned (self->viewer);

  return pinned ? pinned : tg_canvas_get_active (self->canvas);
}

/* What the viewer and the inspector say about the nodes they show while
 * the viewer has no output: computing (with the running node's share
 * done), why the node failed, or that an input failed. */
static void
update_node_messages (TgWindow *self)
{
  const char *id = shown_id (self), *msg = NULL, *details = NULL;
  int state = tg_canvas_get_node_state (self->canvas, id, &msg, &details, NULL);
  const char *active = tg_canvas_get_active (self->canvas);
  const char *amsg = NULL, *adetails = NULL;
  g_autofree char *text = NULL;

  if (!id)
    tg_viewer_set_message (self->viewer, NULL, FALSE);
  else if (state == TG_NODE_FAILED)
    tg_viewer_set_message (self->viewer, msg, TRUE);
  else if (state == TG_NODE_SKIPPED)
    tg_viewer_set_message (self->viewer, _("Not evaluated: an input failed"), FALSE);
  else if (tg_evaluator_is_busy (self->evaluator))
    {
      /* TRANSLATORS: the node being computed and how much of it is done. */
      text = self->running_node ? g_strdup_printf (_("Computing… %s %d %%"), self->running_node,
                                                   (int) (100 * self->running_fraction))
                                : g_strdup (_("Computing…"));
      tg_viewer_set_message (self->viewer, text, FALSE);
    }
  else
    tg_viewer_set_message (self->viewer, NULL, FALSE);

  state = tg_canvas_get_node_state (self->canvas, active, &amsg, &adetails, NULL);
  if (state == TG_NODE_FAILED)
    tg_inspector_set_message (self->inspector, amsg, adetails);
  else if (tg_node_state_is_warning (state, amsg))
    tg_inspector_set_warning (self->inspector, amsg);
  else
    tg_inspector_set_message (self->inspector, NULL, NULL);
}

/* --- title and action states -------------------------------------------------- */

static void
update_title (TgWindow *self)
{
  g_autofree char *name = tg_document_dup_title (self->doc);
  gboolean dirty = tg_document_get_dirty (self->doc);
  g_autofree char *shown = g_strdup_printf ("%s%s", dirty ? "• " : "", name);
  g_autofree char *title = g_strdup_printf ("%s — Terrane", shown);
  GFile *f = tg_document_get_file (self->doc);
  g_autoptr (GFile) parent = f ? g_file_get_parent (f) : NULL;
  g_autofree char *dir = parent ? g_file_get_parse_name (parent) : NULL;

  gtk_label_set_text (self->title_label, shown);
  gtk_label_set_text (self->subtitle_label, dir ? dir : _("Not saved yet"));
  gtk_widget_set_visible (GTK_WIDGET (self->subtitle_label), TRUE);
  gtk_window_set_title (GTK_WINDOW (self), title);
}

static void
update_actions (TgWindow *self)
{
  g_auto (GStrv) sel = tg_canvas_dup_selection (self->canvas);
  gboolean has_sel = sel && sel[0];
  gboolean exporting = self->export_cancel != NULL;

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.undo", tg_document_can_undo (self->doc));
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.redo", tg_document_can_redo (self->doc));
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.delete", has_sel);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.duplicate", has_sel);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.copy", has_sel);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.cut", has_sel);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.export", !exporting);
}

/* --- evaluation ---------------------------------------------------------------- */

static void
request_eval (TgWindow *self)
{
  int res = tg_viewer_get_preview_resolution (self->viewer);

  tg_evaluator_request (self->evaluator, tg_document_snapshot (self->doc),
                        shown_id (self), res, THUMB_RES,
                        self->edit_time ? self->edit_time : g_get_monotonic_time ());
  gtk_widget_set_visible (self->progress_box, TRUE);
}

/* The start page covers the canvas while the window has no graph: no
 * file, no node, and "New Graph" not chosen. */
static void
update_start_page (TgWindow *self)
{
  gboolean show = !self->start_dismissed && !tg_document_get_file (self->doc)
                  && tg_graph_n_nodes (tg_document_get_graph (self->doc)) == 0;

  if (show && !gtk_widget_get_visible (GTK_WIDGET (self->start_page)))
    {
      g_auto (GStrv) recent = self->settings ? g_settings_get_strv (self->settings, "recent-files")
                                             : NULL;
      tg_start_page_set_recent (self->start_page, (const char *const *) recent);
    }
  gtk_widget_set_visible (GTK_WIDGET (self->start_page), show);
}

static void
on_start_open (TgWindow *self, GFile *file)
{
  tg_window_open_file (self, file);
}

static void
on_start_new (TgWindow *self)
{
  self->start_dismissed = TRUE;
  update_start_page (self);
  gtk_widget_grab_focus (GTK_WIDGET (self->canvas));
}

static void
on_doc_changed (TgDocument *doc, guint what, const char *node, TgWindow *self)
{
  const char *pinned = tg_document_get_pinned (doc);

  /* The document keeps the pin: loaded, undone, renamed and deleted with
   * its node. */
  if (g_strcmp0 (pinned, tg_viewer_get_pinned (self->viewer)))
    {
      self->pin_from_doc = TRUE;
      tg_viewer_set_pinned (self->viewer, pinned);
      self->pin_from_doc = FALSE;
    }
  update_actions (self);
  update_start_page (self);
  if (!(what & ~(TG_DOC_CHANGE_POSITION | TG_DOC_CHANGE_FRAMES | TG_DOC_CHANGE_PIN)))
    return;
  self->edit_time = g_get_monotonic_time ();
  request_eval (self);
}

static void
on_doc_notify (TgDocument *doc, GParamSpec *pspec, TgWindow *self)
{
  update_title (self);
  update_actions (self);
  update_start_page (self);
}

static void
on_doc_renamed (TgDocument *doc, const char *old_id, const char *new_id, TgWindow *self)
{
  if (!g_strcmp0 (self->status_node, old_id))
    {
      g_free (self->status_node);
      self->status_node = g_strdup (new_id);
    }
}

static void
on_selection_changed (TgWindow *self)
{
  const char *active = tg_canvas_get_active (self->canvas);

  tg_inspector_set_node (self->inspector, active);
  update_actions (self);
  update_node_messages (self);
  if (tg_viewer_get_pinned (self->viewer))
    return;
  if (!active)
    {
      tg_viewer_set_value (self->viewer, NULL, NULL, NULL);
      return;
    }
  self->edit_time = g_get_monotonic_time ();
  request_eval (self);
  /* Another node's picture would pass for this one's until it arrives. */
  if (g_strcmp0 (tg_viewer_get_node (self->viewer), active))
    {
      tg_viewer_set_value (self->viewer, NULL, NULL, active);
      update_node_messages (self);
    }
}

static void
on_pin_changed (TgWindow *self)
{
  const char *id;

  /* The viewer's pin button: the document's command, saved with the file. */
  if (!self->pin_from_doc
      && g_strcmp0 (tg_viewer_get_pinned (self->viewer), tg_document_get_pinned (self->doc))
      && !tg_document_set_pinned (self->doc, tg_viewer_get_pinned (self->viewer)))
    {
      self->pin_from_doc = TRUE;
      tg_viewer_set_pinned (self->viewer, tg_document_get_pinned (self->doc));
      self->pin_from_doc = FALSE;
    }
  id = shown_id (self);

  if (g_strcmp0 (tg_viewer_get_node (self->viewer), id))
    tg_viewer_set_value (self->viewer, NULL, NULL, id);
  if (id)
    {
      self->edit_time = g_get_monotonic_time ();
      request_eval (self);
    }
  update_node_messages (self);
}

/* The node menu's "Pin to Viewer": the viewer keeps showing node ID ("": none). */
static void
action_pin_node (GtkWidget *w, const char *name, GVariant *param)
{
  TgWindow *self = TG_WINDOW (w);

  const char *id = g_variant_get_string (param, NULL);

  /* The document's change sets the viewer's pin (on_doc_changed); "" unpins. */
  tg_document_set_pinned (self->doc, *id ? id : NULL);
}

static void
on_resolution_changed (TgWindow *self)
{
  if (self->settings)
    g_settings_set_int (self->settings, "preview-resolution",
                        tg_viewer_get_preview_resolution (self->viewer));
  self->edit_time = g_get_monotonic_time ();
  request_eval (self);
}

typedef struct
{
  TgWindow *self;
  gint64 edit_time, ready_time;
  int size;
  char *id;
  gulong handler;
} PaintTiming;

static void
after_paint (GdkFrameClock *clock, PaintTiming *t)
{
  gint64 now = g_get_monotonic_time ();

  g_printerr ("timing: preview %s %d²: edit→result %.1f ms, edit→painted %.1f ms\n", t->id,
              t->size, (t->ready_time - t->edit_time) / 1000.0, (now - t->edit_time) / 1000.0);
  g_signal_handler_disconnect (clock, t->handler);
  g_free (t->id);
  g_free (t);
}

static void
on_preview (TgEvaluator *ev, guint job, const char *id, TgValue *v, gint64 request_time,
            TgWindow *self)
{
  if (g_strcmp0 (id, shown_id (self)))
    return;
  tg_viewer_set_value (self->viewer, v, tg_graph_world_const (tg_document_get_graph (self->doc)),
                       id);
  self->shown_job = job;
  if (self->timing)
    {
      GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (self));
      PaintTiming *t = g_new0 (PaintTiming, 1);
      t->self = self;
      t->edit_time = request_time;
      t->ready_time = g_get_monotonic_time ();
      /* Instances have no lattice: report the preview resolution they show at. */
      t->size = v->type == TG_TYPE_POINTS ? tg_viewer_get_preview_resolution (self->viewer)
                                          : v->region.width;
      t->id = g_strdup (id);
      if (clock)
        t->handler = g_signal_connect (clock, "after-paint", G_CALLBACK (after_paint), t);
      else
        {
          g_printerr ("timing: preview %s %d²: edit→result %.1f ms\n", id, t->size,
                      (t->ready_time - t->edit_time) / 1000.0);
          g_free (t->id);
          g_free (t);
        }
    }
}

static void
on_backdrop (TgEvaluator *ev, guint job, const char *id, TgValue *v, TgWindow *self)
{
  if (!g_strcmp0 (id, shown_id (self)))
    tg_viewer_set_backdrop (self->viewer, v);
}

static void
on_proto_colours (TgEvaluator *ev, guint job, const char *id, char **names, float *rgb, int n,
                  TgWindow *self)
{
  if (!g_strcmp0 (id, shown_id (self)))
    tg_viewer_set_proto_colours (self->viewer, (const char *const *) names, rgb, n);
}

static void
on_thumbnail (TgEvaluator *ev, const char *id, cairo_surface_t *s, TgWindow *self)
{
  float bins[64] = { 0 };
  int w = cairo_image_surface_get_width (s), h = cairo_image_surface_get_height (s);
  int stride = cairo_image_surface_get_stride (s);
  const guint8 *data = cairo_image_surface_get_data (s);

  tg_canvas_set_thumbnail (self->canvas, id, s);
  /* The curve editor's histogram: the thumbnail's grey levels suffice. */
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      bins[(((const guint32 *) (data + (gsize) y * stride))[x] & 0xff) * 64 / 256] += 1;
  tg_inspector_set_histogram (self->inspector, id, bins, 64);
}

/* A failure shows in the status bar, its details in the bar's tooltip,
 * until that node runs again without failing. */
static void
on_node_state (TgEvaluator *ev, const char *id, int state, const char *message,
               const char *details, TgWindow *self)
{
  tg_canvas_set_node_state (self->canvas, id, state, message, details);
  if (state == TG_NODE_FAILED && message)
    {
      /* A refusal's message names the node already; a node's own does not. */
      g_autofree char *named = details ? NULL : g_strdup_printf (_("%s: %s"), id, message);
      set_status (self, named ? named : message);
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->status_label), details);
      self->status_node = g_strdup (id);
    }
  else if (state != TG_NODE_RUNNING && !g_strcmp0 (id, self->status_node))
    set_status (self, NULL);
  if (!g_strcmp0 (id, shown_id (self)) && state == TG_NODE_FAILED)
    tg_viewer_set_value (self->viewer, NULL, NULL, id);
  update_node_messages (self);
}

static void
on_progress (TgEvaluator *ev, const char *id, double fraction, TgWindow *self)
{
  g_autofree char *t = NULL;

  if (!id)
    return;
  g_free (self->running_node);
  self->running_node = g_strdup (id);
  self->running_fraction = fraction;
  tg_canvas_set_running (self->canvas, id, fraction);
  if (!self->export_cancel)
    {
      t = g_strdup_printf (_("Evaluating %s"), id);
      gtk_label_set_text (self->progress_label, t);
      gtk_progress_bar_set_fraction (self->progress_bar, fraction);
      update_node_messages (self);
    }
}

static void
on_finished (TgEvaluator *ev, guint job, gboolean cancelled, TgWindow *self)
{
  if (!tg_evaluator_is_busy (ev) && !self->export_cancel)
    gtk_widget_set_visible (self->progress_box, FALSE);
  if (!tg_evaluator_is_busy (ev))
    g_clear_pointer (&self->running_node, g_free);
  /* The failed node is gone (deleted, or renamed away): so is its message. */
  if (!cancelled && self->status_node
      && tg_canvas_get_node_state (self->canvas, self->status_node, NULL, NULL, NULL)
           != TG_NODE_FAILED)
    set_status (self, NULL);
  update_node_messages (self);
}

/* --- files ----------------------------------------------------------------------- */

static void
fill_recent_menu (TgWindow *self)
{
  g_auto (GStrv) list = NULL;

  g_menu_remove_all (self->recent_menu);
  if (!self->settings)
    return;
  list = g_settings_get_strv (self->settings, "recent-files");
  for (int k = 0; list[k]; k++)
    {
      g_autofree char *base = g_path_get_basename (list[k]);
      g_autoptr (GMenuItem) item = g_menu_item_new (base, NULL);
      g_menu_item_set_action_and_target_value (item, "win.open-recent",
                                               g_variant_new_string (list[k]));
      g_menu_append_item (self->recent_menu, item);
    }
}

/* Puts FILE first in the recent files (REMEMBER) or takes it out. */
static void
update_recent (TgWindow *self, GFile *file, gboolean remember)
{
  g_autofree char *uri = g_file_get_uri (file);
  g_autofree char *path = g_file_get_path (file);

  if (remember)
    gtk_recent_manager_add_item (gtk_recent_manager_get_default (), uri);
  else
    gtk_recent_manager_remove_item (gtk_recent_manager_get_default (), uri, NULL);
  if (self->settings && path)
    {
      g_auto (GStrv) old = g_settings_get_strv (self->settings, "recent-files");
      g_autoptr (GStrvBuilder) b = g_strv_builder_new ();
      g_auto (GStrv) list = NULL;
      int n = remember;
      if (remember)
        g_strv_builder_add (b, path);
      for (int k = 0; old[k] && n < RECENT_MAX; k++)
        if (strcmp (old[k], path))
          g_strv_builder_add (b, old[k]), n++;
      list = g_strv_builder_end (b);
      g_settings_set_strv (self->settings, "recent-files", (const char *const *) list);
    }
  fill_recent_menu (self);
}

static void
error_dialog (TgWindow *self, const char *primary, const char *secondary)
{
  GtkWidget *d = gtk_message_dialog_new (GTK_WINDOW (self), GTK_DIALOG_MODAL
                                                              | GTK_DIALOG_DESTROY_WITH_PARENT,
                                         GTK_MESSAGE_ERROR, GTK_BUTTONS_CLOSE, "%s", primary);
  gtk_message_dialog_format_secondary_text (GTK_MESSAGE_DIALOG (d), "%s", secondary);
  g_signal_connect (d, "response", G_CALLBACK (gtk_window_destroy), NULL);
  gtk_window_present (GTK_WINDOW (d));
}

/* --- autosave ------------------------------------------------------------------- */

static gboolean
autosave_tick (gpointer data)
{
  TgWindow *self = data;
  g_autoptr (GError) error = NULL;

  /* Not while the user decides about an older copy: it would replace it. */
  if (!self->recovery_offer && !tg_document_autosave (self->doc, &error))
    set_status (self, error->message);
  return G_SOURCE_CONTINUE;
}

void
tg_window_answer_recovery (TgWindow *self, gboolean restore)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_steal_pointer (&self->recovery_offer);

  if (self->recovery_dialog)
    gtk_window_destroy (GTK_WINDOW (g_steal_pointer (&self->recovery_dialog)));
  if (!path)
    return;
  if (!restore)
    {
      tg_document_discard_recovery (path);
      return;
    }
  if (tg_document_restore (self->doc, path, &error))
    set_status (self, _("Restored the unsaved changes"));
  else
    error_dialog (self, _("Could not restore the unsaved changes"), error->message);
}

gboolean
tg_window_has_recovery_offer (TgWindow *self)
{
  return self->recovery_offer != NULL;
}

static void
recovery_response (GtkDialog *d, int response, TgWindow *self)
{
  self->recovery_dialog = NULL;
  gtk_window_destroy (GTK_WINDOW (d));
  tg_window_answer_recovery (self, response == GTK_RESPONSE_ACCEPT);
}

/* Asks whether to restore the recovery copy at PATH (of the open file, or
 * of an untitled graph when the window has none). */
static void
offer_recovery (TgWindow *self, char *path)
{
  g_autoptr (GFile) rf = g_file_new_for_path (path);
  g_autoptr (GFileInfo) info = g_file_query_info (rf, G_FILE_ATTRIBUTE_TIME_MODIFIED,
                                                  G_FILE_QUERY_INFO_NONE, NULL, NULL);
  g_autoptr (GDateTime) t = info ? g_file_info_get_modification_date_time (info) : NULL;
  g_autoptr (GDateTime) local = t ? g_date_time_to_local (t) : NULL;
  g_autofree char *when = local ? g_date_time_format (local, "%x %X") : g_strdup ("?");
  g_autofree char *name = tg_document_dup_title (self->doc);
  GtkWidget *d;

  g_free (self->recovery_offer);
  self->recovery_offer = path;
  d = gtk_message_dialog_new (GTK_WINDOW (self), GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT,
                              GTK_MESSAGE_QUESTION, GTK_BUTTONS_NONE,
                              _("Restore unsaved changes to “%s”?"), name);
  gtk_message_dialog_format_secondary_text (
    GTK_MESSAGE_DIALOG (d),
    _("Terrane kept a copy of changes made at %s that were never saved, most likely because "
      "it stopped unexpectedly. Restoring them can be undone."), when);
  gtk_dialog_add_buttons (GTK_DIALOG (d), _("_Discard"), GTK_RESPONSE_REJECT, _("_Restore"),
                          GTK_RESPONSE_ACCEPT, NULL);
  gtk_dialog_set_default_response (GTK_DIALOG (d), GTK_RESPONSE_ACCEPT);
  g_signal_connect (d, "response", G_CALLBACK (recovery_response), self);
  self->recovery_dialog = d;
  gtk_window_present (GTK_WINDOW (d));
}

void
tg_window_offer_untitled_recovery (TgWindow *self)
{
  char *path = tg_document_find_untitled_recovery ();

  if (path)
    offer_recovery (self, path);
}

/* Loads FILE into the window's document; the caller reports a failure. */
static gboolean
load_file (TgWindow *self, GFile *file, GError **error)
{
  if (!tg_document_load (self->doc, file, error))
    return FALSE;
  update_recent (self, file, TRUE);
  tg_canvas_set_document (self->canvas, self->doc);
  tg_inspector_set_document (self->inspector, self->doc);
  tg_canvas_fit_all (self->canvas);
  set_status (self, NULL);
  return TRUE;
}

/* Once the window with FILE is on screen: its unsaved changes, if a
 * crash left a copy of them. */
static void
offer_file_recovery (TgWindow *self, GFile *file)
{
  char *recovery = tg_document_find_recovery (file);

  if (recovery)
    offer_recovery (self, recovery);
}

/* One way to say a file did not open, whichever way it was asked for.
 * The file chooser has put it in the recent files already: take it out,
 * so Recent lists only graphs that open. */
static void
report_open_error (TgWindow *self, GFile *file, const GError *error)
{
  g_autofree char *name = g_file_get_basename (file);
  g_autofree char *primary = g_strdup_printf (_("Could not open “%s”"), name);

  g_autofree char *text = tg_message_translate (error->message);

  update_recent (self, file, FALSE);
  error_dialog (self, primary, text);
  set_status (self, primary);
}

gboolean
tg_window_open_file (TgWindow *self, GFile *file)
{
  g_autoptr (GError) error = NULL;

  if (load_file (self, file, &error))
    {
      offer_file_recovery (self, file);
      return TRUE;
    }
  report_open_error (self, file, error);
  return FALSE;
}

/* An untouched empty window takes FILE; otherwise a new window does, and
 * a file that does not load leaves no empty window behind: its error
 * shows on this one. */
static void
open_in_window (TgWindow *self, GFile *file)
{
  g_autoptr (GError) error = NULL;
  TgWindow *w;

  if (tg_graph_n_nodes (tg_document_get_graph (self->doc)) == 0
      && !tg_document_get_dirty (self->doc))
    {
      tg_window_open_file (self, file);
      return;
    }
  w = tg_window_new (gtk_window_get_application (GTK_WINDOW (self)));
  if (load_file (w, file, &error))
    {
      gtk_window_present (GTK_WINDOW (w));
      offer_file_recovery (w, file);
    }
  else
    {
      gtk_window_destroy (GTK_WINDOW (w));
      report_open_error (self, file, error);
    }
}

static void
open_response (GtkNativeDialog *dialog, int response, TgWindow *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      open_in_window (self, file);
    }
  g_object_unref (dialog);
}

static GtkFileFilter *
tgraph_filter (void)
{
  GtkFileFilter *f = gtk_file_filter_new ();
  gtk_file_filter_set_name (f, _("Terrane graphs"));
  gtk_file_filter_add_pattern (f, "*.tgraph");
  return f;
}

static void
action_open (GtkWidget *w, const char *name, GVariant *param)
{
  GtkFileChooserNative *fc = gtk_file_chooser_native_new (
    _("Open Graph"), GTK_WINDOW (w), GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));

  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (fc), tgraph_filter ());
  g_signal_connect (fc, "response", G_CALLBACK (open_response), w);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (fc));
}

static void
action_open_recent (GtkWidget *w, const char *name, GVariant *param)
{
  g_autoptr (GFile) file = g_file_new_for_path (g_variant_get_string (param, NULL));

  open_in_window (TG_WINDOW (w), file);
}

static gboolean
save_to (TgWindow *self, GFile *file)
{
  g_autoptr (GError) error = NULL;

  if (!tg_document_save (self->doc, file, &error))
    {
      error_dialog (self, _("Could not save the graph"), error->message);
      return FALSE;
    }
  update_recent (self, file ? file : tg_document_get_file (self->doc), TRUE);
  set_status (self, _("Saved"));
  if (self->close_after_save)
    gtk_window_destroy (GTK_WINDOW (self));
  return TRUE;
}

static void
save_as_response (GtkNativeDialog *dialog, int response, TgWindow *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      save_to (self, file);
    }
  else
    self->close_after_save = FALSE;
  g_object_unref (dialog);
}

static void
action_save_as (GtkWidget *w, const char *name, GVariant *param)
{
  TgWindow *self = TG_WINDOW (w);
  GtkFileChooserNative *fc = gtk_file_chooser_native_new (
    _("Save Graph"), GTK_WINDOW (w), GTK_FILE_CHOOSER_ACTION_SAVE, _("_Save"), _("_Cancel"));
  g_autofree char *title = tg_document_dup_title (self->doc);

  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (fc), tgraph_filter ());
  if (!tg_document_get_file (self->doc))
    {
      g_autofree char *name_ext = g_strdup_printf ("%s.tgraph", title);
      gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (fc), name_ext);
    }
  else
    gtk_file_chooser_set_file (GTK_FILE_CHOOSER (fc), tg_document_get_file (self->doc), NULL);
  g_signal_connect (fc, "response", G_CALLBACK (save_as_response), w);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (fc));
}

static void
action_save (GtkWidget *w, const char *name, GVariant *param)
{
  TgWindow *self = TG_WINDOW (w);

  if (tg_document_get_file (self->doc))
    save_to (self, NULL);
  else
    action_save_as (w, name, param);
}

/* --- export --------------------------------------------------------------------- */

typedef struct
{
  TgGraph *graph;
  char *name, *dir;
  TgCancel *cancel;
  TgWindow *self; /* for progress only: posted to the main loop */
  int rc;
  char message[2 * TG_ERROR_MESSAGE_MAX + TG_ERROR_PATH_MAX];
  int n_files;
  guint64 memory_limit;
} ExportJob;

static void
export_job_free (ExportJob *j)
{
  tg_graph_free (j->graph);
  g_free (j->name);
  g_free (j->dir);
  g_free (j);
}

typedef struct
{
  TgWindow *self;
  char *id;
  double fraction;
} ExportProgress;

static gboolean
export_progress_idle (gpointer data)
{
  ExportProgress *p = data;
  g_autofree char *t = g_strdup_printf (_("Exporting: %s"), p->id);

  gtk_label_set_text (p->self->progress_label, t);
  gtk_progress_bar_set_fraction (p->self->progress_bar, p->fraction);
  g_object_unref (p->self);
  g_free (p->id);
  g_free (p);
  return G_SOURCE_REMOVE;
}

static void
export_hook (void *user, int node, TgNodeState state, double fraction)
{
  ExportJob *j = user;
  /* The engine calls this at most every few milliseconds per node. */
  ExportProgress *p = g_new0 (ExportProgress, 1);

  p->self = g_object_ref (j->self);
  p->id = g_strdup (tg_graph_node_id (j->graph, node));
  p->fraction = fraction;
  g_idle_add (export_progress_idle, p);
}

typedef struct
{
  TgWindow *self;
  char *text;
} ExportStatus;

static gboolean
export_status_idle (gpointer data)
{
  ExportStatus *st = data;

  /* A quick export can finish before this idle runs: keep its result. */
  if (st->self->export_cancel)
    set_status (st->self, st->text);
  g_object_unref (st->self);
  g_free (st->text);
  g_free (st);
  return G_SOURCE_REMOVE;
}

/* Before anything runs: shows what the export will need in the status
 * line, or refuses it (TG_ENOMEM, J's message naming the node) when that
 * is more than the memory available, which the kernel would answer by
 * killing the app. */
static int
export_check_memory (ExportJob *j, TgEngine *engine, const TgEvalHooks *hooks)
{
  guint64 limit = j->memory_limit ? j->memory_limit : tg_memory_available ();
  char what[TG_ERROR_MESSAGE_MAX], need[32], room[32];
  TgMemEstimate est;
  ExportStatus *st;

  if (limit == 0 || tg_engine_estimate (engine, j->graph, hooks, limit, &est, NULL) < 0)
    return 0; /* nothing to compare with, or the build names what is wrong */
  tg_format_bytes (est.peak, need, sizeof need);
  tg_format_bytes (limit, room, sizeof room);
  if (est.peak > limit)
    {
      tg_mem_estimate_describe (&est, j->graph, what, sizeof what);
      g_snprintf (j->message, sizeof j->message,
                  _("Not enough memory: %s; %s available. Nothing was written: lower the "
                    "resolution, or build the world in tiles with tgraph plan."),
                  what, room);
      return TG_ENOMEM;
    }
  st = g_new0 (ExportStatus, 1);
  st->self = g_object_ref (j->self);
  st->text = g_strdup_printf (_("Exporting: needs about %s of memory at its peak, %s available"),
                              need, room);
  g_idle_add (export_status_idle, st);
  return 0;
}

/* The files the export nodes wrote: the committed list also holds the
 * manifest, which the status names on its own. */
static int
count_node_files (const TgExportList *list)
{
  int n = 0;

  for (int i = 0; i < tg_export_list_n_files (list); i++)
    n += strcmp (tg_export_list_file (list, i)->path, "manifest.json") != 0;
  return n;
}

static void
export_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  ExportJob *j = data;
  /* A one-shot build, as `tgraph eval`: nothing kept for later. */
  TgEngineOptions opts = { .no_cache = TRUE };
  TgEngine *engine;
  TgEvalHooks hooks = { .progress = export_hook, .user = j, .cancel = j->cancel };
  TgExportList *list = NULL;
  TgEvalReport report = { 0 };
  TgError err = { 0 };

  j->rc = tg_graph_validate (j->graph, &err);
  if (j->rc == 0)
    {
      engine = tg_engine_new (&opts);
      if ((j->rc = export_check_memory (j, engine, &hooks)) == 0)
        j->rc = tg_build (engine, j->graph, j->name, j->dir, &hooks, &list, &report, &err);
      j->n_files = list ? count_node_files (list) : 0;
      tg_export_list_free (list);
      tg_eval_report_clear (&report);
      tg_engine_free (engine);
    }
  if (j->rc < 0 && err.code != 0)
    {
      g_autofree char *text = tg_message_translate (tg_error_format (&err, j->message,
                                                                     sizeof j->message));
      g_strlcpy (j->message, text, sizeof j->message);
    }
  g_task_return_boolean (task, j->rc == 0);
}

static void
export_done (GObject *source, GAsyncResult *res, gpointer data)
{
  TgWindow *self = TG_WINDOW (source);
  ExportJob *j = g_task_get_task_data (G_TASK (res));
  g_autofree char *status = NULL;

  self->export_rc = j->rc;
  g_free (self->export_message);
  self->export_message = g_strdup (j->message);
  if (j->rc == 0)
    status = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "Exported %d file and manifest.json to %s",
                                           "Exported %d files and manifest.json to %s", j->n_files),
                              j->n_files, j->dir);
  else if (j->rc == TG_ECANCELLED)
    status = g_strdup (_("Export cancelled: no files were written"));
  else
    {
      status = g_strdup_printf (_("Export failed: %s"), j->message);
      if (!g_getenv ("TERRANE_TEST_SCRIPT"))
        error_dialog (self, _("Export failed"), j->message);
    }
  set_status (self, status);
  g_clear_object (&self->export_cancel);
  g_clear_pointer (&self->export_token, tg_cancel_free);
  if (!tg_evaluator_is_busy (self->evaluator))
    gtk_widget_set_visible (self->progress_box, FALSE);
  update_actions (self);
}

static void
export_cancelled (GCancellable *c, TgCancel *token)
{
  tg_cancel_request (token);
}

void
tg_window_export_to (TgWindow *self, const char *dir)
{
  tg_window_export_at (self, dir, 0);
}

void
tg_window_export_at (TgWindow *self, const char *dir, int resolution)
{
  g_autoptr (GTask) task = NULL;
  ExportJob *j;
  GFile *f = tg_document_get_file (self->doc);

  if (self->export_cancel)
    return;
  j = g_new0 (ExportJob, 1);
  j->graph = tg_document_snapshot (self->doc);
  /* This export's resolution only, as `tgraph eval --resolution`. */
  if (resolution > 0)
    tg_graph_world (j->graph)->resolution = resolution;
  if (g_strcmp0 (self->export_dir, dir))
    {
      g_free (self->export_dir);
      self->export_dir = g_strdup (dir);
    }
  /* The manifest names the graph as `tgraph eval` does: its file name. */
  j->name = f ? g_file_get_basename (f) : NULL;
  j->dir = g_strdup (dir);
  j->self = self;
  j->memory_limit = self->memory_limit;
  self->export_token = j->cancel = tg_cancel_new ();
  self->export_cancel = g_cancellable_new ();
  g_cancellable_connect (self->export_cancel, G_CALLBACK (export_cancelled), j->cancel, NULL);
  self->export_rc = 1;
  gtk_label_set_text (self->progress_label, _("Exporting"));
  gtk_progress_bar_set_fraction (self->progress_bar, 0);
  gtk_widget_set_visible (self->progress_box, TRUE);
  update_actions (self);
  task = g_task_new (self, self->export_cancel, export_done, NULL);
  g_task_set_task_data (task, j, (GDestroyNotify) export_job_free);
  g_task_run_in_thread (task, export_thread);
}

void
tg_window_set_memory_limit (TgWindow *self, guint64 bytes)
{
  self->memory_limit = bytes;
}

int
tg_window_last_export (TgWindow *self, const char **message)
{
  if (message)
    *message = self->export_message;
  return self->export_rc;
}

static void
export_chosen (TgExportDialog *dialog, const char *dir, int resolution, TgWindow *self)
{
  tg_window_export_at (self, dir, resolution);
}

/* The folder the dialog offers first: the last one, else "export" beside
 * the graph's file when that folder is writable (not an installed
 * example's), else in the home folder. */
static char *
default_export_dir (TgWindow *self)
{
  GFile *f = tg_document_get_file (self->doc);
  g_autoptr (GFile) parent = f ? g_file_get_parent (f) : NULL;
  g_autofree char *base = parent ? g_file_get_path (parent) : NULL;

  if (self->export_dir)
    return g_strdup (self->export_dir);
  return g_build_filename (base && g_access (base, W_OK) == 0 ? base : g_get_home_dir (),
                           "export", NULL);
}

static void
action_export (GtkWidget *w, const char *name, GVariant *param)
{
  TgWindow *self = TG_WINDOW (w);
  g_autofree char *dir = default_export_dir (self);
  const TgWorld *world = tg_graph_world_const (tg_document_get_graph (self->doc));
  TgExportDialog *dialog = tg_export_dialog_new (GTK_WINDOW (w), dir, world->resolution,
                                                 world->size_x);

  g_signal_connect_object (dialog, "export", G_CALLBACK (export_chosen), self, 0);
  gtk_window_present (GTK_WINDOW (dialog));
}

static void
action_cancel (GtkWidget *w, const char *name, GVariant *param)
{
  TgWindow *self = TG_WINDOW (w);

  if (self->export_cancel)
    g_cancellable_cancel (self->export_cancel);
  tg_evaluator_cancel (self->evaluator);
}

/* --- edit actions ------------------------------------------------------------------ */

static void
action_undo (GtkWidget *w, const char *name, GVariant *param)
{
  TgWindow *self = TG_WINDOW (w);
  g_autofree char *label = g_strdup (tg_document_undo_label (self->doc));

  if (tg_document_undo (self->doc) && label)
    {
      g_autofree char *t = g_strdup_printf (_("Undid “%s”"), label);
      set_status (self, t);
    }
}

static void
action_redo (GtkWidget *w, const char *name, GVariant *param)
{
  TgWindow *self = TG_WINDOW (w);
  g_autofree char *label = g_strdup (tg_document_redo_label (self->doc));

  if (tg_document_redo (self->doc) && label)
    {
      g_autofree char *t = g_strdup_printf (_("Redid “%s”"), label);
      set_status (self, t);
    }
}

static void
action_delete (GtkWidget *w, const char *name, GVariant *param)
{
  TgWindow *self = TG_WINDOW (w);
  g_auto (GStrv) sel = tg_canvas_dup_selection (self->canvas);

  tg_document_delete_nodes (self->doc, (const char *const *) sel, NULL);
}

static void
select_new (TgWindow *self, char **ids)
{
  if (ids && ids[0])
    tg_canvas_select (self->canvas, (const char *const *) ids, ids[0]);
}

static void
action_duplicate (GtkWidget *w, const char *name, GVariant *param)
{
  TgWindow *self = TG_WINDOW (w);
  g_auto (GStrv) sel = tg_canvas_dup_selection (self->canvas);
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) ids = tg_document_duplicate (self->doc, (const char *const *) sel, 40, 40,
                                              &error);

  if (!ids && error)
    set_status (self, error->message);
  select_new (self, ids);
}

static void
action_copy (GtkWidget *w, const char *name, GVariant *param)
{
  TgWindow *self = TG_WINDOW (w);
  g_auto (GStrv) sel = tg_canvas_dup_selection (self->canvas);
  g_autofree char *text = NULL;

  if (!sel || !sel[0])
    return;
  text = tg_document_copy_text (self->doc, (const char *const *) sel, NULL);
  if (text)
    gdk_clipboard_set_text (gtk_widget_get_clipboard (w), text);
  if (!strcmp (name, "win.cut"))
    tg_document_delete_nodes (self->doc, (const char *const *) sel, NULL);
}

static void
paste_ready (GObject *source, GAsyncResult *res, gpointer data)
{
  TgWindow *self = data;
  g_autoptr (GError) error = NULL;
  g_autofree char *text = gdk_clipboard_read_text_finish (GDK_CLIPBOARD (source), res, &error);
  g_auto (GStrv) ids = NULL;
  double x, y;

  if (text)
    {
      tg_canvas_get_drop_position (self->canvas, &x, &y);
      ids = tg_document_paste_text (self->doc, text, x, y, &error);
    }
  if (!ids && error)
    set_status (self, error->message);
  select_new (self, ids);
  g_object_unref (self);
}

static void
action_paste (GtkWidget *w, const char *name, GVariant *param)
{
  gdk_clipboard_read_text_async (gtk_widget_get_clipboard (w), NULL, paste_ready,
                                 g_object_ref (w));
}

const char *
tg_window_get_status (TgWindow *self)
{
  return gtk_label_get_text (self->status_label);
}

char **
tg_window_dup_recent_files (TgWindow *self)
{
  return self->settings ? g_settings_get_strv (self->settings, "recent-files") : g_new0 (char *, 1);
}

static void
action_show_message (GtkWidget *w, const char *name, GVariant *param)
{
  set_status (TG_WINDOW (w), g_variant_get_string (param, NULL));
}

/* --- closing -------------------------------------------------------------------------- */

static void
close_response (GtkDialog *d, int response, TgWindow *self)
{
  gtk_window_destroy (GTK_WINDOW (d));
  if (response == GTK_RESPONSE_ACCEPT)
    {
      self->close_after_save = TRUE;
      action_save (GTK_WIDGET (self), "win.save", NULL);
    }
  else if (response == GTK_RESPONSE_REJECT)
    gtk_window_destroy (GTK_WINDOW (self));
}

static gboolean
tg_window_close_request (GtkWindow *window)
{
  TgWindow *self = TG_WINDOW (window);
  g_autofree char *name = NULL;
  GtkWidget *d;

  if (!tg_document_get_dirty (self->doc))
    return FALSE;
  name = tg_document_dup_title (self->doc);
  d = gtk_message_dialog_new (window, GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT,
                              GTK_MESSAGE_QUESTION, GTK_BUTTONS_NONE,
                              _("Save changes to “%s” before closing?"), name);
  gtk_message_dialog_format_secondary_text (GTK_MESSAGE_DIALOG (d), "%s",
                                            _("Your changes will be lost if you don’t save them."));
  gtk_dialog_add_buttons (GTK_DIALOG (d), _("_Cancel"), GTK_RESPONSE_CANCEL, _("_Discard"),
                          GTK_RESPONSE_REJECT, _("_Save"), GTK_RESPONSE_ACCEPT, NULL);
  gtk_dialog_set_default_response (GTK_DIALOG (d), GTK_RESPONSE_ACCEPT);
  g_signal_connect (d, "response", G_CALLBACK (close_response), self);
  gtk_window_present (GTK_WINDOW (d));
  return TRUE;
}

/* --- public --------------------------------------------------------------------------- */

TgDocument *
tg_window_get_document (TgWindow *self)
{
  return self->doc;
}

gboolean
tg_window_is_busy (TgWindow *self)
{
  return tg_evaluator_is_busy (self->evaluator) || self->export_cancel != NULL;
}

void
tg_window_select (TgWindow *self, const char *id)
{
  const char *ids[] = { id, NULL };
  tg_canvas_select (self->canvas, id ? ids : NULL, id);
}

gboolean
tg_window_save_screenshot (TgWindow *self, const char *path, GError **error)
{
  return tg_widget_save_png (GTK_WIDGET (self), path, error);
}

gboolean
tg_widget_save_png (GtkWidget *w, const char *path, GError **error)
{
  int width = gtk_widget_get_width (w), height = gtk_widget_get_height (w);
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (w);
  GtkSnapshot *snap = gtk_snapshot_new ();
  GskRenderNode *node;
  GdkTexture *tex;
  gboolean ok;

  gdk_paintable_snapshot (paintable, snap, width, height);
  node = gtk_snapshot_free_to_node (snap);
  if (!node)
    {
      /* GTK renders nothing of a widget waiting for its layout: a later
       * frame will have it. */
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_BUSY, "nothing to render yet");
      return FALSE;
    }
  tex = gsk_renderer_render_texture (gtk_native_get_renderer (gtk_widget_get_native (w)), node,
                                     &GRAPHENE_RECT_INIT (0, 0, width, height));
  gsk_render_node_unref (node);
  ok = gdk_texture_save_to_png (tex, path);
  g_object_unref (tex);
  if (!ok)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "could not write %s", path);
  return ok;
}

/* --- class ------------------------------------------------------------------------------ */

static void
tg_window_dispose (GObject *object)
{
  TgWindow *self = TG_WINDOW (object);

  g_clear_handle_id (&self->autosave_id, g_source_remove);
  /* Closed on purpose (saved, or the user discarded the changes): no
   * recovery copy outlives the window.  A crash never gets here. */
  if (self->doc)
    tg_document_remove_recovery (self->doc);
  if (self->export_cancel)
    g_cancellable_cancel (self->export_cancel);
  if (self->evaluator)
    {
      g_signal_handlers_disconnect_by_data (self->evaluator, self);
      tg_evaluator_cancel (self->evaluator);
      g_clear_object (&self->evaluator);
    }
  if (self->doc)
    g_signal_handlers_disconnect_by_data (self->doc, self);
  g_clear_object (&self->doc);
  g_clear_object (&self->settings);
  gtk_widget_dispose_template (GTK_WIDGET (self), TG_TYPE_WINDOW);
  G_OBJECT_CLASS (tg_window_parent_class)->dispose (object);
}

static void
tg_window_finalize (GObject *object)
{
  g_free (TG_WINDOW (object)->export_message);
  g_free (TG_WINDOW (object)->export_dir);
  g_free (TG_WINDOW (object)->recovery_offer);
  g_free (TG_WINDOW (object)->status_node);
  g_free (TG_WINDOW (object)->running_node);
  G_OBJECT_CLASS (tg_window_parent_class)->finalize (object);
}

static void
tg_window_class_init (TgWindowClass *klass)
{
  GtkWidgetClass *wc = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = tg_window_dispose;
  G_OBJECT_CLASS (klass)->finalize = tg_window_finalize;
  GTK_WINDOW_CLASS (klass)->close_request = tg_window_close_request;

  g_type_ensure (TG_TYPE_CANVAS);
  g_type_ensure (TG_TYPE_INSPECTOR);
  g_type_ensure (TG_TYPE_VIEWER);
  g_type_ensure (TG_TYPE_START_PAGE);
  gtk_widget_class_set_template_from_resource (wc, "/io/github/terrane/Terrane/tg-window.ui");
  gtk_widget_class_bind_template_child (wc, TgWindow, canvas);
  gtk_widget_class_bind_template_child (wc, TgWindow, start_page);
  gtk_widget_class_bind_template_child (wc, TgWindow, inspector);
  gtk_widget_class_bind_template_child (wc, TgWindow, viewer);
  gtk_widget_class_bind_template_child (wc, TgWindow, title_label);
  gtk_widget_class_bind_template_child (wc, TgWindow, subtitle_label);
  gtk_widget_class_bind_template_child (wc, TgWindow, status_label);
  gtk_widget_class_bind_template_child (wc, TgWindow, progress_label);
  gtk_widget_class_bind_template_child (wc, TgWindow, progress_bar);
  gtk_widget_class_bind_template_child (wc, TgWindow, progress_box);
  gtk_widget_class_bind_template_child (wc, TgWindow, recent_menu);
  gtk_widget_class_bind_template_callback (wc, on_selection_changed);
  gtk_widget_class_bind_template_callback (wc, on_start_open);
  gtk_widget_class_bind_template_callback (wc, on_start_new);
  gtk_widget_class_bind_template_callback (wc, on_pin_changed);
  gtk_widget_class_bind_template_callback (wc, on_resolution_changed);

  gtk_widget_class_install_action (wc, "win.open", NULL, action_open);
  gtk_widget_class_install_action (wc, "win.open-recent", "s", action_open_recent);
  gtk_widget_class_install_action (wc, "win.save", NULL, action_save);
  gtk_widget_class_install_action (wc, "win.save-as", NULL, action_save_as);
  gtk_widget_class_install_action (wc, "win.export", NULL, action_export);
  gtk_widget_class_install_action (wc, "win.cancel", NULL, action_cancel);
  gtk_widget_class_install_action (wc, "win.undo", NULL, action_undo);
  gtk_widget_class_install_action (wc, "win.redo", NULL, action_redo);
  gtk_widget_class_install_action (wc, "win.delete", NULL, action_delete);
  gtk_widget_class_install_action (wc, "win.duplicate", NULL, action_duplicate);
  gtk_widget_class_install_action (wc, "win.copy", NULL, action_copy);
  gtk_widget_class_install_action (wc, "win.cut", NULL, action_copy);
  gtk_widget_class_install_action (wc, "win.paste", NULL, action_paste);
  gtk_widget_class_install_action (wc, "win.show-message", "s", action_show_message);
  gtk_widget_class_install_action (wc, "win.pin-node", "s", action_pin_node);
  gtk_widget_class_add_binding_action (wc, GDK_KEY_Escape, 0, "win.cancel", NULL);
}

static GSettings *
settings_if_installed (void)
{
  GSettingsSchemaSource *src = g_settings_schema_source_get_default ();
  g_autoptr (GSettingsSchema) schema = src ? g_settings_schema_source_lookup (src, APP_ID, TRUE)
                                           : NULL;
  return schema ? g_settings_new (APP_ID) : NULL;
}

static void
tg_window_init (TgWindow *self)
{
  const char *debug = g_getenv ("TERRANE_DEBUG");

  gtk_widget_init_template (GTK_WIDGET (self));
  self->timing = debug && strstr (debug, "timing");
  self->settings = settings_if_installed ();
  if (self->settings)
    tg_viewer_set_preview_resolution (self->viewer,
                                      g_settings_get_int (self->settings, "preview-resolution"));
  fill_recent_menu (self);

  self->doc = tg_document_new ();
  g_signal_connect (self->doc, "changed", G_CALLBACK (on_doc_changed), self);
  g_signal_connect (self->doc, "renamed", G_CALLBACK (on_doc_renamed), self);
  g_signal_connect (self->doc, "notify::dirty", G_CALLBACK (on_doc_notify), self);
  g_signal_connect (self->doc, "notify::file", G_CALLBACK (on_doc_notify), self);
  g_signal_connect (self->doc, "notify::can-undo", G_CALLBACK (on_doc_notify), self);
  g_signal_connect (self->doc, "notify::can-redo", G_CALLBACK (on_doc_notify), self);

  self->evaluator = tg_evaluator_new ();
  g_signal_connect (self->evaluator, "preview", G_CALLBACK (on_preview), self);
  g_signal_connect (self->evaluator, "thumbnail", G_CALLBACK (on_thumbnail), self);
  g_signal_connect (self->evaluator, "backdrop", G_CALLBACK (on_backdrop), self);
  g_signal_connect (self->evaluator, "proto-colours", G_CALLBACK (on_proto_colours), self);
  g_signal_connect (self->evaluator, "node-state", G_CALLBACK (on_node_state), self);
  g_signal_connect (self->evaluator, "progress", G_CALLBACK (on_progress), self);
  g_signal_connect (self->evaluator, "finished", G_CALLBACK (on_finished), self);

  tg_canvas_set_document (self->canvas, self->doc);
  tg_inspector_set_document (self->inspector, self->doc);
  /* The canvas has the keys from the start: Tab adds a node in a fresh
   * window without a click first. */
  gtk_window_set_focus (GTK_WINDOW (self), GTK_WIDGET (self->canvas));
  update_title (self);
  update_actions (self);
  update_start_page (self);
  {
    const char *secs = g_getenv ("TERRANE_AUTOSAVE_SECONDS");
    int interval = secs ? atoi (secs) : 30;
    self->autosave_id = g_timeout_add_seconds (MAX (interval, 1), autosave_tick, self);
  }
}

TgWindow *
tg_window_new (GtkApplication *app)
{
  return g_object_new (TG_TYPE_WINDOW, "application", app, NULL);
}
