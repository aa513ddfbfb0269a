/* A spin button that says when a typed number was clamped.
 *
 * GTK clamps a number typed outside a spin button's range silently
 * (-500 becomes 1).  One place says so instead, for the inspector's
 * number rows, its vectors, the list editor's fields and the World tab:
 * the spin button in the warning style with the note as its tooltip, the
 * note under the row when there is a label for it, and the status line.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Makes SPIN clamp a typed number to its adjustment's range itself and
 * say so, naming LABEL ("Scale") with UNIT ("m", or NULL); NOTE: a label
 * to show the note in (hidden while there is none), or NULL. */
void tg_clamp_note_attach (GtkSpinButton *spin, const char *label, const char *unit,
                           GtkWidget *note);
/* Shows NOTE on SPIN, or clears it (NULL: the value was set another way). */
void tg_clamp_note_set (GtkSpinButton *spin, const char *note);
/* The note SPIN shows, or NULL. */
const char *tg_clamp_note_get (GtkSpinButton *spin);

G_END_DECLS
