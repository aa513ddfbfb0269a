/* TgCurveEditor: edits the points of a `curve` parameter.
 *
 * Click to add a point, drag to move it, right-click or double-click to
 * delete it; the curve is drawn over a histogram of the node's input.
 * "changed" fires while a point moves, "finished" when the drag ends (the
 * inspector merges one drag into one undo step).
 */
#pragma once

#include <glib/gi18n.h>
#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TG_TYPE_CURVE_EDITOR (tg_curve_editor_get_type ())
G_DECLARE_FINAL_TYPE (TgCurveEditor, tg_curve_editor, TG, CURVE_EDITOR, GtkWidget)

GtkWidget *tg_curve_editor_new (void);
/* XY: N points, x strictly increasing in 0..1. */
void tg_curve_editor_set_points (TgCurveEditor *self, const double *xy, int n);
const double *tg_curve_editor_get_points (TgCurveEditor *self, int *n);
/* BINS: N counts (any scale), or NULL to hide. */
void tg_curve_editor_set_histogram (TgCurveEditor *self, const float *bins, int n);

G_END_DECLS
