/* The canvas's node actions and how a node's state is drawn on it.
 *
 * Right-click on a node opens its actions (as Blender's node context
 * menu): delete, duplicate, bypass, pin to viewer, rename.  They act on
 * the selection, which the right-click made hold the node (or kept, when
 * the node was in it).  Bypass and the badges are drawn here: a bypassed
 * node dimmed with a wire drawn through it, a red badge for a failure, a
 * grey one for a node not evaluated, a yellow one for a warning.
 */
#pragma once

#include <gtk/gtk.h>

#include "tg-document.h"

G_BEGIN_DECLS

/* A popover menu of node actions parented to CANVAS (unparent it in
 * CANVAS's dispose, present it in its size_allocate). */
GtkWidget *tg_node_menu_new (GtkWidget *canvas);
/* Shows MENU for node ID of DOC at (X, Y) in the canvas; SELECTION (the
 * canvas's, holding ID) is what its actions act on. */
void tg_node_menu_popup (GtkWidget *menu, TgDocument *doc, const char *id,
                         const char *const *selection, double x, double y);

/* The badge of a node in STATE with MESSAGE (a failure's, or for a node
 * done or cached, its warning): drawn at (X, Y), its centre, when there
 * is one to draw; returns whether it drew one. */
gboolean tg_node_draw_badge (cairo_t *cr, PangoLayout *layout, PangoFontDescription *fd,
                             double x, double y, int state, const char *message);
/* Whether a node in STATE with MESSAGE shows MESSAGE as a warning. */
gboolean tg_node_state_is_warning (int state, const char *message);

/* Dims what was drawn of a bypassed node since cairo_push_group and draws
 * its marker: a wire from its main input to its first output. */
void tg_node_draw_bypass (cairo_t *cr, double x, double y, double w, double in_y, double out_y);

G_END_DECLS
