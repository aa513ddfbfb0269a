/* The node context menu (delete, duplicate, bypass, pin to viewer,
 * rename) and the node badges and bypass marker the canvas draws.  The
 * menu's own actions live in a "node" action group on the popover;
 * delete, duplicate and pin are the window's, rename the canvas's. */
#include "config.h"

#include <glib/gi18n.h>
#include <tgraph/tgraph.h>

#include "tg-node-menu.h"

typedef struct
{
  TgDocument *doc; /* borrowed: the canvas's, while the menu is up */
  GtkWidget *canvas;
  char *id;        /* the node right-clicked */
  char **selection;
  GSimpleAction *bypass, *pin;
} MenuData;

static void
menu_data_free (gpointer p)
{
  MenuData *m = p;

  g_strfreev (m->selection);
  g_free (m->id);
  g_clear_object (&m->bypass);
  g_clear_object (&m->pin);
  g_free (m);
}

/* The viewer keeps showing the node (the window's pin), or lets go of
 * it when it is the pinned one ("" unpins). */
static void
pin_activate (GSimpleAction *action, GVariant *param, gpointer user)
{
  MenuData *m = user;
  g_autoptr (GVariant) state = g_action_get_state (G_ACTION (action));

  if (m->id)
    gtk_widget_activate_action (m->canvas, "win.pin-node", "s",
                                g_variant_get_boolean (state) ? "" : m->id);
}

/* The selection's bypass, all on or all off, as one undo step. */
static void
bypass_activate (GSimpleAction *action, GVariant *param, gpointer user)
{
  MenuData *m = user;
  g_autoptr (GVariant) state = g_action_get_state (G_ACTION (action));
  gboolean on = !g_variant_get_boolean (state);
  g_autoptr (GError) error = NULL;

  if (!m->doc || !m->selection)
    return;
  if (!tg_document_set_bypass (m->doc, (const char *const *) m->selection, on, &error))
    g_warning ("%s", error->message);
  else
    g_simple_action_set_state (action, g_variant_new_boolean (on));
}

GtkWidget *
tg_node_menu_new (GtkWidget *canvas)
{
  g_autoptr (GMenu) menu = g_menu_new ();
  g_autoptr (GMenu) edit = g_menu_new (), state = g_menu_new (), name = g_menu_new ();
  GSimpleActionGroup *group = g_simple_action_group_new ();
  MenuData *m = g_new0 (MenuData, 1);
  GtkWidget *popover;

  g_menu_append (edit, _("Duplicate"), "win.duplicate");
  g_menu_append (edit, _("Delete"), "win.delete");
  g_menu_append (state, _("Bypass"), "node.bypass");
  g_menu_append (state, _("Pin to Viewer"), "node.pin");
  g_menu_append (name, _("Rename…"), "canvas.rename");
  g_menu_append_section (menu, NULL, G_MENU_MODEL (name));
  g_menu_append_section (menu, NULL, G_MENU_MODEL (state));
  g_menu_append_section (menu, NULL, G_MENU_MODEL (edit));

  m->bypass = g_simple_action_new_stateful ("bypass", NULL, g_variant_new_boolean (FALSE));
  g_signal_connect (m->bypass, "activate", G_CALLBACK (bypass_activate), m);
  g_action_map_add_action (G_ACTION_MAP (group), G_ACTION (m->bypass));
  m->pin = g_simple_action_new_stateful ("pin", NULL, g_variant_new_boolean (FALSE));
  g_signal_connect (m->pin, "activate", G_CALLBACK (pin_activate), m);
  g_action_map_add_action (G_ACTION_MAP (group), G_ACTION (m->pin));
  m->canvas = canvas;

  popover = gtk_popover_menu_new_from_model (G_MENU_MODEL (menu));
  gtk_widget_set_name (popover, "node-menu");
  gtk_popover_set_has_arrow (GTK_POPOVER (popover), FALSE);
  gtk_widget_set_halign (popover, GTK_ALIGN_START);
  gtk_widget_set_parent (popover, canvas);
  gtk_widget_insert_action_group (popover, "node", G_ACTION_GROUP (group));
  g_object_set_data_full (G_OBJECT (popover), "tg-node-menu", m, menu_data_free);
  g_object_unref (group); /* the popover holds it */
  return popover;
}

void
tg_node_menu_popup (GtkWidget *menu, TgDocument *doc, const char *id,
                    const char *const *selection, double x, double y)
{
  MenuData *m = g_object_get_data (G_OBJECT (menu), "tg-node-menu");
  const TgGraph *g = tg_document_get_graph (doc);
  int n = tg_graph_find_node (g, id);
  gboolean can_bypass = TRUE, all_bypassed = TRUE;
  GdkRectangle r = { (int) x, (int) y, 1, 1 };

  if (n < 0)
    return;
  m->doc = doc;
  g_strfreev (m->selection);
  m->selection = g_strdupv ((char **) selection);
  for (int k = 0; m->selection[k]; k++)
    {
      int i = tg_graph_find_node (g, m->selection[k]);
      can_bypass &= i >= 0 && tg_node_desc_bypass_input (tg_graph_node_desc (g, i)) >= 0;
      all_bypassed &= i >= 0 && tg_graph_node_bypass (g, i);
    }
  /* A generator or an export has nothing to pass through (unless it is
   * bypassed already, in a file: then it may be turned off). */
  g_simple_action_set_enabled (m->bypass, can_bypass || all_bypassed);
  g_simple_action_set_state (m->bypass, g_variant_new_boolean (all_bypassed));
  g_simple_action_set_state (m->pin,
                             g_variant_new_boolean (!g_strcmp0 (tg_document_get_pinned (doc), id)));

  g_free (m->id);
  m->id = g_strdup (id);

  gtk_popover_set_pointing_to (GTK_POPOVER (menu), &r);
  gtk_popover_popup (GTK_POPOVER (menu));
}

/* --- drawing ----------------------------------------------------------------- */

gboolean
tg_node_state_is_warning (int state, const char *message)
{
  return message && message[0] && (state == TG_NODE_DONE || state == TG_NODE_CACHED);
}

gboolean
tg_node_draw_badge (cairo_t *cr, PangoLayout *layout, PangoFontDescription *fd, double x,
                    double y, int state, const char *message)
{
  gboolean warning = tg_node_state_is_warning (state, message);
  int tw, th;

  if (state != TG_NODE_FAILED && state != TG_NODE_SKIPPED && !warning)
    return FALSE;
  if (warning)
    {
      /* A triangle, as Blender's and GTK's warning icons. */
      cairo_move_to (cr, x, y - 9);
      cairo_line_to (cr, x + 9.5, y + 7.5);
      cairo_line_to (cr, x - 9.5, y + 7.5);
      cairo_close_path (cr);
      cairo_set_source_rgb (cr, 0.96, 0.76, 0.18);
      cairo_fill (cr);
    }
  else
    {
      cairo_arc (cr, x, y, 8, 0, 2 * G_PI);
      if (state == TG_NODE_FAILED)
        cairo_set_source_rgb (cr, 0.88, 0.22, 0.22);
      else
        cairo_set_source_rgb (cr, 0.55, 0.55, 0.58);
      cairo_fill (cr);
    }
  pango_font_description_set_weight (fd, PANGO_WEIGHT_BOLD);
  pango_font_description_set_absolute_size (fd, 11 * PANGO_SCALE);
  pango_layout_set_font_description (layout, fd);
  pango_layout_set_width (layout, -1);
  pango_layout_set_text (layout, "!", -1);
  pango_layout_get_pixel_size (layout, &tw, &th);
  if (warning)
    cairo_set_source_rgb (cr, 0.15, 0.12, 0.05);
  else
    cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_move_to (cr, x - tw / 2.0, y - th / 2.0 + (warning ? 1.5 : 0));
  pango_cairo_show_layout (cr, layout);
  return TRUE;
}

void
tg_node_draw_bypass (cairo_t *cr, double x, double y, double w, double in_y, double out_y)
{
  double mx = x + w / 2;

  cairo_pop_group_to_source (cr);
  cairo_paint_with_alpha (cr, 0.45);
  /* The main input's wire, drawn on through the node to its output. */
  cairo_set_line_width (cr, 3.0);
  cairo_set_line_cap (cr, CAIRO_LINE_CAP_ROUND);
  cairo_set_source_rgba (cr, 0.93, 0.55, 0.25, 0.95);
  cairo_move_to (cr, x, in_y);
  cairo_curve_to (cr, mx, in_y, mx, out_y, x + w, out_y);
  cairo_stroke (cr);
  cairo_set_line_cap (cr, CAIRO_LINE_CAP_BUTT);
  (void) y;
}
