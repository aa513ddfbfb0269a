/* TgCanvas's gestures: drags (move, wire, rubber band, frames), clicks,
 * keys, scrolling and tooltips, turned into document commands. */
#include "config.h"

#include "tg-canvas-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *
port_name (TgCanvas *self, int n, gboolean output, int p)
{
  const TgNodeDesc *d = tg_graph_node_desc (tg_canvas__graph (self), n);
  return g_strdup (output ? d->outputs[p].name : d->inputs[p].name);
}

void
tg_canvas__report_error (TgCanvas *self, GError *error)
{
  GtkWidget *root = GTK_WIDGET (gtk_widget_get_root (GTK_WIDGET (self)));

  if (error && root)
    gtk_widget_activate_action (root, "win.show-message", "s", error->message);
}

void
tg_canvas__drag_begin (GtkGestureDrag *gesture, double x, double y, TgCanvas *self)
{
  guint button = gtk_gesture_single_get_current_button (GTK_GESTURE_SINGLE (gesture));
  GdkModifierType mods = gtk_event_controller_get_current_event_state (
    GTK_EVENT_CONTROLLER (gesture));
  const TgGraph *g;
  Hit h;

  tg_canvas__log_event ("press");
  gtk_widget_grab_focus (GTK_WIDGET (self));
  self->drag_x0 = x;
  self->drag_y0 = y;
  self->drag_dx = self->drag_dy = 0;
  self->drag_moved = FALSE;
  self->drag_mods = mods;
  self->drag = DRAG_NONE;
  if (!self->doc)
    return;
  if (button == GDK_BUTTON_MIDDLE || (button == GDK_BUTTON_PRIMARY && self->space_down))
    {
      self->drag = DRAG_PAN;
      gtk_widget_set_cursor_from_name (GTK_WIDGET (self), "grabbing");
      return;
    }
  if (button != GDK_BUTTON_PRIMARY)
    {
      gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_DENIED);
      return;
    }
  g = tg_canvas__graph (self);
  h = tg_canvas__hit_test (self, x, y);
  self->drag_hit = h;
  switch (h.kind)
    {
    case HIT_OUTPUT:
      self->drag = DRAG_WIRE_OUT;
      break;
    case HIT_INPUT:
      {
        int l = tg_graph_input_link (g, h.node, h.port);
        if (l >= 0 && (mods & GDK_CONTROL_MASK))
          {
            g_autofree char *p = port_name (self, h.node, FALSE, h.port);
            tg_document_disconnect (self->doc, tg_graph_node_id (g, h.node), p);
            gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_DENIED);
          }
        else if (l >= 0)
          {
            /* Lift the link off this input: it follows the pointer from its source. */
            const TgLink *lk = tg_graph_link (g, l);
            self->lift_to = g_strdup (tg_graph_node_id (g, h.node));
            self->lift_port = port_name (self, h.node, FALSE, h.port);
            self->drag_hit = (Hit) { HIT_OUTPUT, lk->from_node, lk->from_port };
            self->drag = DRAG_WIRE_OUT;
          }
        else
          self->drag = DRAG_WIRE_IN;
        break;
      }
    case HIT_NODE:
      {
        const char *id = tg_graph_node_id (g, h.node);
        gboolean was = g_hash_table_contains (self->selection, id);
        self->press_was_selected = was;
        if (mods & GDK_CONTROL_MASK)
          {
            if (was)
              g_hash_table_remove (self->selection, id);
            else
              g_hash_table_add (self->selection, g_strdup (id));
          }
        else if (mods & GDK_SHIFT_MASK)
          g_hash_table_add (self->selection, g_strdup (id));
        else if (!was)
          g_hash_table_remove_all (self->selection), g_hash_table_add (self->selection,
                                                                       g_strdup (id));
        if (g_hash_table_contains (self->selection, id) && g_strcmp0 (self->active, id))
          {
            g_free (self->active);
            self->active = g_strdup (id);
            self->selection_pending = TRUE;
          }
        /* The window hears of a new selection on release: its inspector,
         * viewer and the evaluation of a new preview would compete with
         * drawing the move (two cores under llvmpipe). */
        if (was != g_hash_table_contains (self->selection, id))
          self->selection_pending = TRUE;
        self->drag = DRAG_MOVE;
        break;
      }
    case HIT_FRAME:
    case HIT_FRAME_RESIZE:
      {
        /* Selecting a frame drops the node selection; its nodes ride along. */
        double fx, fy, fw, fh;
        self->frame_sel = h.node;
        tg_canvas__select_only (self, NULL);
        tg_canvas__selection_changed (self);
        g_hash_table_remove_all (self->frame_nodes);
        tg_canvas__frame_box (self, h.node, &fx, &fy, &fw, &fh);
        for (int n = 0; n < tg_graph_n_nodes (g); n++)
          {
            double nx, ny;
            tg_canvas__node_pos (self, n, &nx, &ny);
            if (nx >= fx && ny >= fy && nx + NODE_W <= fx + fw
                && ny + node_height (tg_graph_node_desc (g, n)) <= fy + fh)
              g_hash_table_add (self->frame_nodes, g_strdup (tg_graph_node_id (g, n)));
          }
        self->drag = h.kind == HIT_FRAME ? DRAG_FRAME_MOVE : DRAG_FRAME_RESIZE;
        break;
      }
    case HIT_NONE:
      self->drag = DRAG_RUBBER;
      break;
    }
  if (h.kind != HIT_FRAME && h.kind != HIT_FRAME_RESIZE)
    self->frame_sel = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
tg_canvas__drag_update (GtkGestureDrag *gesture, double dx, double dy, TgCanvas *self)
{
  if (self->drag == DRAG_PAN)
    {
      self->off_x += dx - self->drag_dx;
      self->off_y += dy - self->drag_dy;
      self->view_user = TRUE;
    }
  self->drag_dx = dx;
  self->drag_dy = dy;
  if (hypot (dx, dy) > 3)
    self->drag_moved = TRUE;
  self->pointer_x = self->drag_x0 + dx;
  self->pointer_y = self->drag_y0 + dy;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* A wire dropped on empty canvas: offer the nodes it fits, as Blender
 * and Houdini do; the pending wire stays drawn while the popover is up. */
static void
offer_nodes_for_wire (TgCanvas *self, gboolean from_output)
{
  const TgNodeDesc *d = tg_graph_node_desc (tg_canvas__graph (self), self->drag_hit.node);

  g_free (self->wire_node);
  g_free (self->wire_port);
  self->wire_node = g_strdup (tg_graph_node_id (tg_canvas__graph (self), self->drag_hit.node));
  self->wire_port = port_name (self, self->drag_hit.node, from_output, self->drag_hit.port);
  self->wire_from_output = from_output;
  self->wire_type = from_output ? d->outputs[self->drag_hit.port].type
                                : d->inputs[self->drag_hit.port].type;
  tg_canvas__popup_add (self, self->drag_x0 + self->drag_dx, self->drag_y0 + self->drag_dy);
}

static void
finish_wire (TgCanvas *self, Hit target)
{
  const TgGraph *g = tg_canvas__graph (self);
  g_autoptr (GError) error = NULL;
  gboolean ok = TRUE;

  if (self->drag == DRAG_WIRE_OUT)
    {
      const char *from = tg_graph_node_id (g, self->drag_hit.node);
      g_autofree char *from_port = port_name (self, self->drag_hit.node, TRUE,
                                              self->drag_hit.port);
      if (target.kind == HIT_INPUT && tg_canvas__port_accepts_drag (self, target.node, FALSE, target.port))
        {
          g_autofree char *to_port = port_name (self, target.node, FALSE, target.port);
          const char *to = tg_graph_node_id (g, target.node);
          if (self->lift_to)
            ok = tg_document_move_link (self->doc, self->lift_to, self->lift_port, to, to_port,
                                        &error);
          else
            ok = tg_document_connect (self->doc, from, from_port, to, to_port, &error);
        }
      else if (self->lift_to && !(target.kind == HIT_INPUT && tg_canvas__input_is_lifted (self, target.node,
                                                                               target.port)))
        tg_document_disconnect (self->doc, self->lift_to, self->lift_port);
      else if (!self->lift_to && target.kind == HIT_NONE)
        offer_nodes_for_wire (self, TRUE);
    }
  else if (target.kind == HIT_NONE)
    offer_nodes_for_wire (self, FALSE);
  else if (target.kind == HIT_OUTPUT && tg_canvas__port_accepts_drag (self, target.node, TRUE, target.port))
    {
      g_autofree char *from_port = port_name (self, target.node, TRUE, target.port);
      g_autofree char *to_port = port_name (self, self->drag_hit.node, FALSE,
                                            self->drag_hit.port);
      ok = tg_document_connect (self->doc, tg_graph_node_id (g, target.node), from_port,
                                tg_graph_node_id (g, self->drag_hit.node), to_port, &error);
    }
  if (!ok)
    tg_canvas__report_error (self, error);
}

void
tg_canvas__drag_end (GtkGestureDrag *gesture, double dx, double dy, TgCanvas *self)
{
  DragKind kind = self->drag;
  const TgGraph *g;

  tg_canvas__log_event ("release");
  if (!self->doc)
    return;
  g = tg_canvas__graph (self);
  tg_canvas__drag_update (gesture, dx, dy, self);
  switch (kind)
    {
    case DRAG_MOVE:
      self->drag = DRAG_NONE;
      if (self->drag_moved)
        {
          g_auto (GStrv) ids = tg_canvas_dup_selection (self);
          tg_document_move_nodes (self->doc, (const char *const *) ids, dx / self->zoom,
                                  dy / self->zoom);
        }
      else if (self->press_was_selected
               && !(self->drag_mods & (GDK_SHIFT_MASK | GDK_CONTROL_MASK)))
        {
          const char *id = tg_graph_node_id (g, self->drag_hit.node);
          if (g_hash_table_size (self->selection) != 1 || g_strcmp0 (self->active, id))
            self->selection_pending = TRUE;
          tg_canvas__select_only (self, id);
        }
      if (self->selection_pending)
        tg_canvas__selection_changed (self);
      break;
    case DRAG_FRAME_MOVE:
      if (self->drag_moved)
        {
          GPtrArray *ids = g_ptr_array_new ();
          GHashTableIter it;
          gpointer key;
          int k = self->drag_hit.node;
          g_hash_table_iter_init (&it, self->frame_nodes);
          while (g_hash_table_iter_next (&it, &key, NULL))
            g_ptr_array_add (ids, key);
          g_ptr_array_add (ids, NULL);
          self->drag = DRAG_NONE;
          tg_document_move_frame (self->doc, k, dx / self->zoom, dy / self->zoom,
                                  (const char *const *) ids->pdata);
          g_ptr_array_free (ids, TRUE);
        }
      break;
    case DRAG_FRAME_RESIZE:
      if (self->drag_moved)
        {
          TgFrame f;
          double x, y;
          tg_canvas__frame_box (self, self->drag_hit.node, &x, &y, &f.w, &f.h);
          f = (TgFrame) { self->frames[self->drag_hit.node].title, x, y, f.w, f.h,
                          { self->frames[self->drag_hit.node].rgb[0],
                            self->frames[self->drag_hit.node].rgb[1],
                            self->frames[self->drag_hit.node].rgb[2] } };
          self->drag = DRAG_NONE;
          tg_document_set_frame (self->doc, self->drag_hit.node, &f);
        }
      break;
    case DRAG_WIRE_OUT:
    case DRAG_WIRE_IN:
      {
        Hit target = tg_canvas__hit_test (self, self->drag_x0 + dx, self->drag_y0 + dy);
        finish_wire (self, target);
        break;
      }
    case DRAG_RUBBER:
      {
        double x0, y0, x1, y1;
        if (!(self->drag_mods & (GDK_SHIFT_MASK | GDK_CONTROL_MASK)))
          tg_canvas__select_only (self, NULL);
        if (self->drag_moved)
          {
            tg_canvas__to_canvas (self, self->drag_x0, self->drag_y0, &x0, &y0);
            tg_canvas__to_canvas (self, self->drag_x0 + dx, self->drag_y0 + dy, &x1, &y1);
            for (int n = 0; n < tg_graph_n_nodes (g); n++)
              {
                double x, y, h = node_height (tg_graph_node_desc (g, n));
                tg_canvas__node_pos (self, n, &x, &y);
                if (x < MAX (x0, x1) && x + NODE_W > MIN (x0, x1) && y < MAX (y0, y1)
                    && y + h > MIN (y0, y1))
                  {
                    g_hash_table_add (self->selection, g_strdup (tg_graph_node_id (g, n)));
                    if (!self->active)
                      self->active = g_strdup (tg_graph_node_id (g, n));
                  }
              }
          }
        tg_canvas__selection_changed (self);
        break;
      }
    default:
      break;
    }
  self->drag = DRAG_NONE;
  g_hash_table_remove_all (self->frame_nodes);
  g_clear_pointer (&self->lift_to, g_free);
  g_clear_pointer (&self->lift_port, g_free);
  gtk_widget_set_cursor (GTK_WIDGET (self), NULL);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
tg_canvas__secondary_pressed (GtkGestureClick *gesture, int n_press, double x, double y, TgCanvas *self)
{
  Hit h = tg_canvas__hit_test (self, x, y);

  /* On a node: its actions, for the selection it joins (or is in). */
  if (self->doc && (h.kind == HIT_NODE || h.kind == HIT_INPUT || h.kind == HIT_OUTPUT))
    {
      const char *id = tg_graph_node_id (tg_canvas__graph (self), h.node);
      g_auto (GStrv) sel = NULL;
      if (!g_hash_table_contains (self->selection, id))
        tg_canvas_select (self, (const char *const[]) { id, NULL }, id);
      else if (g_strcmp0 (self->active, id))
        tg_canvas_select (self, (const char *const *) (sel = tg_canvas_dup_selection (self)), id);
      g_clear_pointer (&sel, g_strfreev);
      sel = tg_canvas_dup_selection (self);
      tg_node_menu_popup (self->node_menu, self->doc, id, (const char *const *) sel, x, y);
    }
  else if (self->doc)
    {
      tg_canvas__clear_wire (self);
      tg_canvas__popup_add (self, x, y);
    }
}

/* On the second release, not the press: a popover opened while the
 * button is down cannot take the keyboard from the pointer's grab. */
void
tg_canvas__primary_released (GtkGestureClick *gesture, int n_press, double x, double y, TgCanvas *self)
{
  Hit h;
  double nx, ny, cx, cy;

  if (n_press != 2 || !self->doc)
    return;
  h = tg_canvas__hit_test (self, x, y);
  if (h.kind == HIT_FRAME)
    {
      tg_canvas__begin_frame_edit (self, h.node);
      return;
    }
  if (h.kind != HIT_NODE)
    return;
  tg_canvas__node_pos (self, h.node, &nx, &ny);
  tg_canvas__to_canvas (self, x, y, &cx, &cy);
  /* A double click on the title renames, as in Blender's and Gaea's editors. */
  if (cy <= ny + HEADER_H)
    tg_canvas__begin_rename (self, tg_graph_node_id (tg_canvas__graph (self), h.node));
}

gboolean
tg_canvas__on_scroll (GtkEventControllerScroll *c, double dx, double dy, TgCanvas *self)
{
  tg_canvas__zoom_at (self, pow (1.12, -dy), self->pointer_x, self->pointer_y);
  return TRUE;
}

void
tg_canvas__on_motion (GtkEventControllerMotion *c, double x, double y, TgCanvas *self)
{
  self->pointer_x = x;
  self->pointer_y = y;
  self->pointer_in = TRUE;
  if (self->drag == DRAG_WIRE_OUT || self->drag == DRAG_WIRE_IN)
    gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
tg_canvas__on_leave (GtkEventControllerMotion *c, TgCanvas *self)
{
  self->pointer_in = FALSE;
}

gboolean
tg_canvas__on_key_pressed (GtkEventControllerKey *c, guint keyval, guint code, GdkModifierType mods,
                TgCanvas *self)
{
  if (keyval == GDK_KEY_space)
    {
      self->space_down = TRUE;
      gtk_widget_set_cursor_from_name (GTK_WIDGET (self), "grab");
      return TRUE;
    }
  /* A selected frame goes, its nodes stay (as in Blender). */
  if ((keyval == GDK_KEY_Delete || keyval == GDK_KEY_BackSpace) && self->frame_sel >= 0
      && g_hash_table_size (self->selection) == 0)
    {
      int k = self->frame_sel;
      self->frame_sel = -1;
      tg_document_delete_frame (self->doc, k);
      return TRUE;
    }
  return FALSE;
}

void
tg_canvas__on_key_released (GtkEventControllerKey *c, guint keyval, guint code, GdkModifierType mods,
                 TgCanvas *self)
{
  if (keyval == GDK_KEY_space)
    {
      self->space_down = FALSE;
      if (self->drag != DRAG_PAN)
        gtk_widget_set_cursor (GTK_WIDGET (self), NULL);
    }
}

gboolean
tg_canvas__on_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                  gpointer data)
{
  TgCanvas *self = TG_CANVAS (widget);
  const TgGraph *g;
  const TgNodeDesc *d;
  Hit h;

  if (!self->doc || keyboard)
    return FALSE;
  g = tg_canvas__graph (self);
  h = tg_canvas__hit_test (self, x, y);
  if (h.kind == HIT_NONE)
    return FALSE;
  d = tg_graph_node_desc (g, h.node);
  if (h.kind == HIT_INPUT || h.kind == HIT_OUTPUT)
    {
      const TgPortDesc *p = h.kind == HIT_INPUT ? &d->inputs[h.port] : &d->outputs[h.port];
      g_autofree char *t = g_strdup_printf ("%s (%s)%s%s", g_dgettext (GETTEXT_PACKAGE, p->label),
                                            tg_port_type_name (p->type), p->help ? "\n" : "",
                                            p->help ? g_dgettext (GETTEXT_PACKAGE, p->help) : "");
      gtk_tooltip_set_text (tooltip, t);
      return TRUE;
    }
  else
    {
      const char *id = tg_graph_node_id (g, h.node);
      NodeState *st = g_hash_table_lookup (self->states, id);
      double nx, ny, cx, cy;
      tg_canvas__node_pos (self, h.node, &nx, &ny);
      tg_canvas__to_canvas (self, x, y, &cx, &cy);
      if (cy > ny + HEADER_H)
        return FALSE;
      if (st && st->message
          && (st->state == TG_NODE_FAILED || st->state == TG_NODE_SKIPPED
              || tg_node_state_is_warning (st->state, st->message)))
        gtk_tooltip_set_text (tooltip, st->message);
      else if (st && st->state == TG_NODE_SKIPPED)
        gtk_tooltip_set_text (tooltip, _("Not evaluated: an input failed"));
      else
        {
          g_autofree char *t = g_strdup_printf ("%s — %s\n%s", g_dgettext (GETTEXT_PACKAGE,
                                                                         d->label),
                                                d->type, g_dgettext (GETTEXT_PACKAGE, d->help));
          gtk_tooltip_set_text (tooltip, t);
        }
      return TRUE;
    }
}
