/* TgCanvas: draws the graph and turns gestures into document commands.
 *
 * Everything is drawn with cairo in canvas units (one unit is one pixel
 * at zoom 1), under a pan/zoom transform, so text and wires scale with
 * the view as in Blender's and Houdini's editors.  The canvas is always
 * dark, like the 2D viewer, whatever the GTK theme: thumbnails and wire
 * colours read best on a dark ground.  Node positions come from the
 * document on every frame; during a move drag the dragged nodes are drawn
 * offset and the document gets one move command on release.
 */
#include "config.h"

#include "tg-canvas-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum
{
  SIGNAL_SELECTION_CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (TgCanvas, tg_canvas, GTK_TYPE_WIDGET)

/* --- geometry -------------------------------------------------------------- */

const TgGraph *
tg_canvas__graph (TgCanvas *self)
{
  return tg_document_get_graph (self->doc);
}

gboolean
tg_canvas__is_dragged (TgCanvas *self, const char *id)
{
  return (self->drag == DRAG_MOVE && g_hash_table_contains (self->selection, id))
         || (self->drag == DRAG_FRAME_MOVE && g_hash_table_contains (self->frame_nodes, id));
}

/* Frame K's box in canvas units, including a drag in progress. */
void
tg_canvas__frame_box (TgCanvas *self, int k, double *x, double *y, double *w, double *h)
{
  const TgFrame *f = &self->frames[k];

  *x = f->x;
  *y = f->y;
  *w = f->w;
  *h = f->h;
  if (k != self->drag_hit.node)
    return;
  if (self->drag == DRAG_FRAME_MOVE)
    {
      *x += self->drag_dx / self->zoom;
      *y += self->drag_dy / self->zoom;
    }
  else if (self->drag == DRAG_FRAME_RESIZE)
    {
      *w = MAX (*w + self->drag_dx / self->zoom, 120);
      *h = MAX (*h + self->drag_dy / self->zoom, 80);
    }
}

/* Top-left of node N in canvas units, including a move in progress. */
void
tg_canvas__node_pos (TgCanvas *self, int n, double *x, double *y)
{
  tg_document_get_position_at (self->doc, n, x, y);
  if (self->drag != DRAG_NONE && tg_canvas__is_dragged (self, tg_graph_node_id (tg_canvas__graph (self), n)))
    {
      *x += self->drag_dx / self->zoom;
      *y += self->drag_dy / self->zoom;
    }
}

void
tg_canvas__port_pos (TgCanvas *self, int n, gboolean output, int port, double *x, double *y)
{
  tg_canvas__node_pos (self, n, x, y);
  if (output)
    *x += NODE_W;
  *y += HEADER_H + 6 + port * PORT_H + PORT_H / 2;
}

void
tg_canvas__to_canvas (TgCanvas *self, double wx, double wy, double *cx, double *cy)
{
  *cx = (wx - self->off_x) / self->zoom;
  *cy = (wy - self->off_y) / self->zoom;
}

Hit
tg_canvas__hit_test (TgCanvas *self, double wx, double wy)
{
  Hit h = { HIT_NONE, -1, -1 };
  GHashTable *moving = NULL;
  double cx, cy;

  if (!self->doc)
    return h;
  tg_canvas__to_canvas (self, wx, wy, &cx, &cy);
  if (self->drag == DRAG_MOVE)
    moving = self->selection;
  else if (self->drag == DRAG_FRAME_MOVE)
    moving = self->frame_nodes;
  h = tg_canvas_hit_nodes (self->doc, cx, cy, moving, self->drag_dx / self->zoom,
                           self->drag_dy / self->zoom);
  if (h.kind != HIT_NONE)
    return h;
  /* Frames lie under the nodes: their title band and corner grip take hold. */
  for (int k = self->n_frames - 1; k >= 0; k--)
    {
      double x, y, w, fh;
      tg_canvas__frame_box (self, k, &x, &y, &w, &fh);
      if (cx >= x + w - FRAME_GRIP && cx <= x + w && cy >= y + fh - FRAME_GRIP && cy <= y + fh)
        return (Hit) { HIT_FRAME_RESIZE, k, -1 };
      if (cx >= x && cx <= x + w && cy >= y && cy <= y + FRAME_HEADER)
        return (Hit) { HIT_FRAME, k, -1 };
    }
  return h;
}

/* --- selection ------------------------------------------------------------- */

void
tg_canvas__selection_changed (TgCanvas *self)
{
  self->selection_pending = FALSE;
  g_signal_emit (self, signals[SIGNAL_SELECTION_CHANGED], 0);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
tg_canvas__select_only (TgCanvas *self, const char *id)
{
  g_hash_table_remove_all (self->selection);
  if (id)
    g_hash_table_add (self->selection, g_strdup (id));
  g_free (self->active);
  self->active = g_strdup (id);
}

void
tg_canvas_select (TgCanvas *self, const char *const *ids, const char *active)
{
  g_hash_table_remove_all (self->selection);
  for (int k = 0; ids && ids[k]; k++)
    g_hash_table_add (self->selection, g_strdup (ids[k]));
  g_free (self->active);
  self->active = g_strdup (active ? active : (ids && ids[0] ? ids[0] : NULL));
  tg_canvas__selection_changed (self);
}

char **
tg_canvas_dup_selection (TgCanvas *self)
{
  GPtrArray *a = g_ptr_array_new ();
  const TgGraph *g;

  if (self->doc)
    {
      /* In file order, so copies keep their order. */
      g = tg_canvas__graph (self);
      for (int n = 0; n < tg_graph_n_nodes (g); n++)
        if (g_hash_table_contains (self->selection, tg_graph_node_id (g, n)))
          g_ptr_array_add (a, g_strdup (tg_graph_node_id (g, n)));
    }
  g_ptr_array_add (a, NULL);
  return (char **) g_ptr_array_free (a, FALSE);
}

const char *
tg_canvas_get_active (TgCanvas *self)
{
  return self->active;
}

/* Drops selected ids that the document no longer has. */
static void
prune_selection (TgCanvas *self)
{
  GHashTableIter it;
  gpointer key;
  gboolean changed = FALSE;

  g_hash_table_iter_init (&it, self->selection);
  while (g_hash_table_iter_next (&it, &key, NULL))
    if (tg_graph_find_node (tg_canvas__graph (self), key) < 0)
      {
        g_hash_table_iter_remove (&it);
        changed = TRUE;
      }
  if (self->active && tg_graph_find_node (tg_canvas__graph (self), self->active) < 0)
    {
      g_clear_pointer (&self->active, g_free);
      changed = TRUE;
    }
  if (changed)
    tg_canvas__selection_changed (self);
}

/* --- view ------------------------------------------------------------------ */

void
tg_canvas__zoom_at (TgCanvas *self, double factor, double wx, double wy)
{
  double z = CLAMP (self->zoom * factor, ZOOM_MIN, ZOOM_MAX);
  double cx, cy;

  tg_canvas__to_canvas (self, wx, wy, &cx, &cy);
  self->zoom = z;
  self->off_x = wx - cx * z;
  self->off_y = wy - cy * z;
  self->view_user = TRUE;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
tg_canvas_fit_all (TgCanvas *self)
{
  double w = gtk_widget_get_width (GTK_WIDGET (self));
  double h = gtk_widget_get_height (GTK_WIDGET (self));
  double x0 = G_MAXDOUBLE, y0 = G_MAXDOUBLE, x1 = -G_MAXDOUBLE, y1 = -G_MAXDOUBLE;
  const TgGraph *g;

  if (!self->doc || w <= 1 || h <= 1)
    return;
  g = tg_canvas__graph (self);
  for (int n = 0; n < tg_graph_n_nodes (g); n++)
    {
      double x, y;
      tg_canvas__node_pos (self, n, &x, &y);
      x0 = MIN (x0, x);
      y0 = MIN (y0, y);
      x1 = MAX (x1, x + NODE_W);
      y1 = MAX (y1, y + node_height (tg_graph_node_desc (g, n)));
    }
  if (x0 > x1)
    {
      self->zoom = 1;
      self->off_x = self->off_y = 0;
    }
  else
    {
      double margin = 48;
      self->zoom = CLAMP (MIN ((w - 2 * margin) / (x1 - x0), (h - 2 * margin) / (y1 - y0)),
                          ZOOM_MIN, 1.25);
      self->off_x = w / 2 - (x0 + x1) / 2 * self->zoom;
      self->off_y = h / 2 - (y0 + y1) / 2 * self->zoom;
    }
  self->view_user = FALSE;
  self->fitted_w = (int) w;
  self->fitted_h = (int) h;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
tg_canvas_get_drop_position (TgCanvas *self, double *x, double *y)
{
  if (self->pointer_in)
    tg_canvas__to_canvas (self, self->pointer_x, self->pointer_y, x, y);
  else
    tg_canvas__to_canvas (self, gtk_widget_get_width (GTK_WIDGET (self)) / 2.0,
               gtk_widget_get_height (GTK_WIDGET (self)) / 2.0, x, y);
}

gboolean
tg_canvas_locate (TgCanvas *self, const char *spec, double *x, double *y)
{
  const char *arg = strchr (spec, ':');
  double cx, cy;

  if (!self->doc || !arg)
    return FALSE;
  arg++;
  if (g_str_has_prefix (spec, "graph:"))
    {
      if (sscanf (arg, "%lf,%lf", &cx, &cy) != 2)
        return FALSE;
    }
  else if (g_str_has_prefix (spec, "node:"))
    {
      int n = tg_graph_find_node (tg_canvas__graph (self), arg);
      if (n < 0)
        return FALSE;
      tg_canvas__node_pos (self, n, &cx, &cy);
      cx += NODE_W / 2;
      cy += HEADER_H / 2;
    }
  else if (g_str_has_prefix (spec, "frame:") || g_str_has_prefix (spec, "grip:"))
    {
      int k = atoi (arg);
      double w, h;
      if (k < 0 || k >= self->n_frames)
        return FALSE;
      tg_canvas__frame_box (self, k, &cx, &cy, &w, &h);
      if (spec[0] == 'f')
        cx += w / 2, cy += FRAME_HEADER / 2;
      else
        cx += w - 5, cy += h - 5;
    }
  else if (g_str_has_prefix (spec, "out:") || g_str_has_prefix (spec, "in:"))
    {
      gboolean out = spec[0] == 'o';
      g_autofree char *node = g_strdup (arg);
      char *dot = strrchr (node, '.');
      int n, p;
      if (!dot)
        return FALSE;
      *dot = '\0';
      if (!tg_document_find_port (self->doc, node, dot + 1, out, &n, &p))
        return FALSE;
      tg_canvas__port_pos (self, n, out, p, &cx, &cy);
    }
  else
    return FALSE;
  *x = cx * self->zoom + self->off_x;
  *y = cy * self->zoom + self->off_y;
  return TRUE;
}

void
tg_canvas_get_view (TgCanvas *self, double *zoom, double *off_x, double *off_y)
{
  *zoom = self->zoom;
  *off_x = self->off_x;
  *off_y = self->off_y;
}

/* --- node states and thumbnails --------------------------------------------- */

static void
node_state_free (gpointer p)
{
  NodeState *s = p;
  g_free (s->message);
  g_free (s->details);
  g_free (s);
}

/* Node ID's look changed: the move cache is repaired where the node is
 * (a moving node is drawn afresh each frame anyway).  An export node
 * showing this node's thumbnail may lag until the move ends. */
static void
node_changed (TgCanvas *self, const char *id)
{
  int n;
  double x, y;

  if (!self->doc || !self->cache)
    return;
  n = tg_document_find_node (self->doc, id);
  if (n < 0)
    {
      tg_canvas__drop_cache (self);
      return;
    }
  if (tg_canvas__is_dragged (self, id))
    return;
  tg_canvas__node_pos (self, n, &x, &y);
  /* Port circles and the shadow reach a little outside the box. */
  tg_canvas__damage_cache (self, x - 20, y - 20, NODE_W + 40,
                           node_height (tg_graph_node_desc (tg_canvas__graph (self), n)) + 40);
}

/* Whether two thumbnails have the same pixels. */
static gboolean
same_pixels (cairo_surface_t *a, cairo_surface_t *b)
{
  int h, stride;

  if (!a || !b)
    return a == b;
  cairo_surface_flush (a);
  cairo_surface_flush (b);
  h = cairo_image_surface_get_height (a);
  stride = cairo_image_surface_get_stride (a);
  return cairo_image_surface_get_format (a) == cairo_image_surface_get_format (b)
         && cairo_image_surface_get_width (a) == cairo_image_surface_get_width (b)
         && h == cairo_image_surface_get_height (b)
         && stride == cairo_image_surface_get_stride (b)
         && !memcmp (cairo_image_surface_get_data (a), cairo_image_surface_get_data (b),
                     (size_t) h * stride);
}

void
tg_canvas_set_thumbnail (TgCanvas *self, const char *id, cairo_surface_t *surface)
{
  /* Every evaluation sends all thumbnails again, a selection's too: one
   * that did not change must not redraw the canvas, nor its move cache. */
  if (same_pixels (g_hash_table_lookup (self->thumbs, id), surface))
    return;
  node_changed (self, id);
  if (surface)
    g_hash_table_replace (self->thumbs, g_strdup (id), cairo_surface_reference (surface));
  else
    g_hash_table_remove (self->thumbs, id);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
tg_canvas_set_node_state (TgCanvas *self, const char *id, int state, const char *message,
                          const char *details)
{
  NodeState *s = g_hash_table_lookup (self->states, id);

  /* Each evaluation reports every node it pulled: most are as they were. */
  if (s && s->state == state && state != TG_NODE_RUNNING && !g_strcmp0 (s->message, message)
      && !g_strcmp0 (s->details, details))
    return;
  s = g_new0 (NodeState, 1);

  s->state = state;
  s->message = g_strdup (message);
  s->details = g_strdup (details);
  s->fraction = state == TG_NODE_RUNNING ? 0 : 1;
  g_hash_table_replace (self->states, g_strdup (id), s);
  /* A badge changes; a running node's progress may lag in the cache. */
  node_changed (self, id);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
tg_canvas_set_running (TgCanvas *self, const char *id, double fraction)
{
  NodeState *s = g_hash_table_lookup (self->states, id);

  if (!s || s->state != TG_NODE_RUNNING)
    {
      tg_canvas_set_node_state (self, id, TG_NODE_RUNNING, NULL, NULL);
      s = g_hash_table_lookup (self->states, id);
    }
  s->fraction = fraction;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

int
tg_canvas_get_node_state (TgCanvas *self, const char *id, const char **message,
                          const char **details, double *fraction)
{
  NodeState *s = id ? g_hash_table_lookup (self->states, id) : NULL;

  if (message)
    *message = s ? s->message : NULL;
  if (details)
    *details = s ? s->details : NULL;
  if (fraction)
    *fraction = s ? s->fraction : 0;
  return s ? s->state : TG_NODE_IDLE;
}

void
tg_canvas_clear_states (TgCanvas *self)
{
  tg_canvas__drop_cache (self);
  g_hash_table_remove_all (self->states);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* --- rename ------------------------------------------------------------------- */

void
tg_canvas__begin_rename (TgCanvas *self, const char *id)
{
  int n = tg_graph_find_node (tg_canvas__graph (self), id);
  double x, y;
  GdkRectangle r;

  if (n < 0)
    return;
  tg_canvas__node_pos (self, n, &x, &y);
  r.x = (int) (x * self->zoom + self->off_x);
  r.y = (int) (y * self->zoom + self->off_y);
  r.width = (int) (NODE_W * self->zoom);
  r.height = (int) (HEADER_H * self->zoom);
  g_free (self->renaming);
  self->renaming = g_strdup (id);
  gtk_editable_set_text (GTK_EDITABLE (self->rename_entry), id);
  gtk_widget_remove_css_class (GTK_WIDGET (self->rename_entry), "error");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->rename_entry), NULL);
  gtk_popover_set_pointing_to (self->rename_popover, &r);
  gtk_popover_popup (self->rename_popover);
  gtk_widget_grab_focus (GTK_WIDGET (self->rename_entry));
  gtk_editable_select_region (GTK_EDITABLE (self->rename_entry), 0, -1);
}

static void
rename_activate (GtkEntry *entry, TgCanvas *self)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *name = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (entry))));

  if (!self->renaming)
    return;
  if (!tg_document_rename_node (self->doc, self->renaming, name, &error))
    {
      gtk_widget_add_css_class (GTK_WIDGET (entry), "error");
      gtk_widget_set_tooltip_text (GTK_WIDGET (entry), error->message);
      tg_canvas__report_error (self, error);
      return;
    }
  gtk_popover_popdown (self->rename_popover);
  gtk_widget_grab_focus (GTK_WIDGET (self));
}

static void
rename_closed (GtkPopover *p, TgCanvas *self)
{
  g_clear_pointer (&self->renaming, g_free);
}

static void
rekey (GHashTable *t, const char *old_id, const char *new_id, gboolean has_value)
{
  gpointer key, value;

  if (!g_hash_table_steal_extended (t, old_id, &key, &value))
    return;
  g_free (key);
  if (has_value)
    g_hash_table_replace (t, g_strdup (new_id), value);
  else
    g_hash_table_add (t, g_strdup (new_id));
}

/* Selection, thumbnail and state follow a renamed node. */
static void
on_doc_renamed (TgDocument *doc, const char *old_id, const char *new_id, TgCanvas *self)
{
  rekey (self->selection, old_id, new_id, FALSE);
  rekey (self->thumbs, old_id, new_id, TRUE);
  rekey (self->states, old_id, new_id, TRUE);
  if (!g_strcmp0 (self->active, old_id))
    {
      g_free (self->active);
      self->active = g_strdup (new_id);
    }
}

/* --- document ---------------------------------------------------------------- */

static void
on_doc_changed (TgDocument *doc, guint what, const char *node, TgCanvas *self)
{
  tg_canvas__drop_cache (self);
  tg_canvas__refresh_frames (self);
  prune_selection (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
tg_canvas_set_document (TgCanvas *self, TgDocument *doc)
{
  if (self->doc)
    {
      g_signal_handler_disconnect (self->doc, self->changed_id);
      g_signal_handler_disconnect (self->doc, self->renamed_id);
      g_clear_object (&self->doc);
    }
  self->doc = g_object_ref (doc);
  self->changed_id = g_signal_connect (doc, "changed", G_CALLBACK (on_doc_changed), self);
  self->renamed_id = g_signal_connect (doc, "renamed", G_CALLBACK (on_doc_renamed), self);
  g_hash_table_remove_all (self->thumbs);
  g_hash_table_remove_all (self->states);
  self->frame_sel = -1;
  tg_canvas__refresh_frames (self);
  tg_canvas__select_only (self, NULL);
  self->view_user = FALSE;
  self->fitted_w = self->fitted_h = 0;
  gtk_widget_queue_allocate (GTK_WIDGET (self));
  tg_canvas__selection_changed (self);
}

/* --- actions ------------------------------------------------------------------ */

static void
action_fit (GtkWidget *w, const char *name, GVariant *param)
{
  tg_canvas_fit_all (TG_CANVAS (w));
}

static void
action_zoom (GtkWidget *w, const char *name, GVariant *param)
{
  TgCanvas *self = TG_CANVAS (w);
  double cx = gtk_widget_get_width (w) / 2.0, cy = gtk_widget_get_height (w) / 2.0;

  if (!strcmp (name, "canvas.zoom-in"))
    tg_canvas__zoom_at (self, 1.25, cx, cy);
  else if (!strcmp (name, "canvas.zoom-out"))
    tg_canvas__zoom_at (self, 1 / 1.25, cx, cy);
  else
    tg_canvas__zoom_at (self, 1 / self->zoom, cx, cy);
}

static void
action_add (GtkWidget *w, const char *name, GVariant *param)
{
  TgCanvas *self = TG_CANVAS (w);

  tg_canvas__clear_wire (self);
  if (!self->pointer_in)
    tg_canvas__popup_add (self, gtk_widget_get_width (w) / 2.0, gtk_widget_get_height (w) / 2.0);
  else
    tg_canvas__popup_add (self, self->pointer_x, self->pointer_y);
}

static void
action_rename (GtkWidget *w, const char *name, GVariant *param)
{
  TgCanvas *self = TG_CANVAS (w);

  if (self->active)
    tg_canvas__begin_rename (self, self->active);
}

static void
action_select_all (GtkWidget *w, const char *name, GVariant *param)
{
  TgCanvas *self = TG_CANVAS (w);
  const TgGraph *g = tg_canvas__graph (self);

  for (int n = 0; n < tg_graph_n_nodes (g); n++)
    g_hash_table_add (self->selection, g_strdup (tg_graph_node_id (g, n)));
  tg_canvas__selection_changed (self);
}

/* --- class ---------------------------------------------------------------------- */

static void
tg_canvas_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  TgCanvas *self = TG_CANVAS (widget);

  if (!self->view_user && self->doc && width > 1
      && (width != self->fitted_w || height != self->fitted_h))
    tg_canvas_fit_all (self);
  gtk_popover_present (self->add_popover);
  gtk_popover_present (self->rename_popover);
  gtk_popover_present (self->frame_popover);
  gtk_popover_present (GTK_POPOVER (self->node_menu));
}

static void
tg_canvas_dispose (GObject *object)
{
  TgCanvas *self = TG_CANVAS (object);

  if (self->doc)
    {
      g_signal_handler_disconnect (self->doc, self->changed_id);
      g_signal_handler_disconnect (self->doc, self->renamed_id);
      g_clear_object (&self->doc);
    }
  g_clear_pointer (&self->node_menu, gtk_widget_unparent);
  gtk_widget_dispose_template (GTK_WIDGET (self), TG_TYPE_CANVAS);
  G_OBJECT_CLASS (tg_canvas_parent_class)->dispose (object);
}

static void
tg_canvas_finalize (GObject *object)
{
  TgCanvas *self = TG_CANVAS (object);

  g_hash_table_unref (self->selection);
  g_hash_table_unref (self->thumbs);
  g_hash_table_unref (self->states);
  g_free (self->active);
  g_free (self->lift_to);
  g_free (self->lift_port);
  g_free (self->wire_node);
  g_free (self->wire_port);
  g_free (self->renaming);
  tg_document_frames_free (self->frames, self->n_frames);
  g_hash_table_unref (self->frame_nodes);
  tg_canvas__drop_cache (self);
  G_OBJECT_CLASS (tg_canvas_parent_class)->finalize (object);
}

static void
tg_canvas_class_init (TgCanvasClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tg_canvas_dispose;
  object_class->finalize = tg_canvas_finalize;
  widget_class->snapshot = tg_canvas__snapshot;
  widget_class->size_allocate = tg_canvas_size_allocate;

  signals[SIGNAL_SELECTION_CHANGED] = g_signal_new ("selection-changed",
                                                    G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                                    0, NULL, NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/terrane/Terrane/tg-canvas.ui");
  gtk_widget_class_bind_template_child (widget_class, TgCanvas, add_popover);
  gtk_widget_class_bind_template_child (widget_class, TgCanvas, add_search);
  gtk_widget_class_bind_template_child (widget_class, TgCanvas, add_list);
  gtk_widget_class_bind_template_child (widget_class, TgCanvas, rename_popover);
  gtk_widget_class_bind_template_child (widget_class, TgCanvas, rename_entry);
  gtk_widget_class_bind_template_callback (widget_class, rename_activate);
  gtk_widget_class_bind_template_callback (widget_class, rename_closed);
  gtk_widget_class_bind_template_callback_full (widget_class, "primary_released",
                                                 G_CALLBACK (tg_canvas__primary_released));
  gtk_widget_class_bind_template_callback_full (widget_class, "add_popover_closed",
                                                 G_CALLBACK (tg_canvas__add_popover_closed));
  gtk_widget_class_bind_template_child (widget_class, TgCanvas, frame_popover);
  gtk_widget_class_bind_template_child (widget_class, TgCanvas, frame_entry);
  gtk_widget_class_bind_template_child (widget_class, TgCanvas, frame_colours);
  gtk_widget_class_bind_template_callback_full (widget_class, "frame_title_activate",
                                                 G_CALLBACK (tg_canvas__frame_title_activate));
  gtk_widget_class_bind_template_callback_full (widget_class, "frame_popover_closed",
                                                 G_CALLBACK (tg_canvas__frame_popover_closed));
  gtk_widget_class_bind_template_callback_full (widget_class, "drag_begin",
                                                 G_CALLBACK (tg_canvas__drag_begin));
  gtk_widget_class_bind_template_callback_full (widget_class, "drag_update",
                                                 G_CALLBACK (tg_canvas__drag_update));
  gtk_widget_class_bind_template_callback_full (widget_class, "drag_end",
                                                 G_CALLBACK (tg_canvas__drag_end));
  gtk_widget_class_bind_template_callback_full (widget_class, "secondary_pressed",
                                                 G_CALLBACK (tg_canvas__secondary_pressed));
  gtk_widget_class_bind_template_callback_full (widget_class, "on_scroll",
                                                 G_CALLBACK (tg_canvas__on_scroll));
  gtk_widget_class_bind_template_callback_full (widget_class, "on_motion",
                                                 G_CALLBACK (tg_canvas__on_motion));
  gtk_widget_class_bind_template_callback_full (widget_class, "on_leave",
                                                 G_CALLBACK (tg_canvas__on_leave));
  gtk_widget_class_bind_template_callback_full (widget_class, "on_key_pressed",
                                                 G_CALLBACK (tg_canvas__on_key_pressed));
  gtk_widget_class_bind_template_callback_full (widget_class, "on_key_released",
                                                 G_CALLBACK (tg_canvas__on_key_released));
  gtk_widget_class_bind_template_callback_full (widget_class, "on_query_tooltip",
                                                 G_CALLBACK (tg_canvas__on_query_tooltip));
  gtk_widget_class_bind_template_callback_full (widget_class, "add_row_activated",
                                                 G_CALLBACK (tg_canvas__add_row_activated));
  gtk_widget_class_bind_template_callback_full (widget_class, "add_search_changed",
                                                 G_CALLBACK (tg_canvas__add_search_changed));
  gtk_widget_class_bind_template_callback_full (widget_class, "add_search_activate",
                                                 G_CALLBACK (tg_canvas__add_search_activate));
  gtk_widget_class_bind_template_callback_full (widget_class, "add_search_key",
                                                 G_CALLBACK (tg_canvas__add_search_key));

  gtk_widget_class_install_action (widget_class, "canvas.fit", NULL, action_fit);
  gtk_widget_class_install_action (widget_class, "canvas.zoom-in", NULL, action_zoom);
  gtk_widget_class_install_action (widget_class, "canvas.zoom-out", NULL, action_zoom);
  gtk_widget_class_install_action (widget_class, "canvas.zoom-reset", NULL, action_zoom);
  gtk_widget_class_install_action (widget_class, "canvas.add-node", NULL, action_add);
  gtk_widget_class_install_action (widget_class, "canvas.select-all", NULL, action_select_all);
  gtk_widget_class_install_action (widget_class, "canvas.rename", NULL, action_rename);
  gtk_widget_class_install_action (widget_class, "canvas.frame", NULL, tg_canvas__action_frame);
  gtk_widget_class_set_css_name (widget_class, "tgcanvas");
}

static void
tg_canvas_init (TgCanvas *self)
{
  self->zoom = 1;
  self->selection = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->thumbs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                        (GDestroyNotify) cairo_surface_destroy);
  self->states = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, node_state_free);
  self->frame_nodes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->frame_sel = self->frame_editing = -1;
  gtk_widget_init_template (GTK_WIDGET (self));
  self->node_menu = tg_node_menu_new (GTK_WIDGET (self));
  tg_canvas__fill_add_list (self);
  tg_canvas__fill_frame_colours (self);
}
