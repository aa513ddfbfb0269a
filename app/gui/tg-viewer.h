/* TgViewer: the 2D view of the active node's output at preview resolution.
 *
 * Modes: greyscale, colour ramp, hillshade (sun azimuth and elevation),
 * mask overlay; a read-out of the world position under the pointer and
 * the height there in metres.  The views live in a GtkStack so a 3D view
 * can join as a second page.
 */
#pragma once

#include <gtk/gtk.h>

#include "tg-document.h"

G_BEGIN_DECLS

#define TG_TYPE_VIEWER (tg_viewer_get_type ())
G_DECLARE_FINAL_TYPE (TgViewer, tg_viewer, TG, VIEWER, GtkWidget)

/* What the next tg_viewer_set_value draws under a mask (in overlay mode)
 * or under instances: a height or image grid (a reference is taken; NULL
 * for none). */
void tg_viewer_set_backdrop (TgViewer *self, TgValue *v);
/* Paint colours by prototype name for the next tg_viewer_set_value of
 * instances (N names, RGB sRGB 0..1, 3 per name; copied; N = 0 for
 * none): those prototypes are drawn in their colour in 2D and 3D, the
 * others in the fixed per-index hues. */
void tg_viewer_set_proto_colours (TgViewer *self, const char *const *names, const float *rgb,
                                  int n);
/* Shows V (a reference is taken; NULL clears) of node ID in WORLD. */
void tg_viewer_set_value (TgViewer *self, TgValue *v, const TgWorld *world, const char *id);
/* The node whose output is shown (or awaited), or NULL. */
/* The read-out under the 2D picture (range and mean, or the layers'
 * shares) without markup, or NULL when none shows; borrowed. */
const char *tg_viewer_get_stats (TgViewer *self);
const char *tg_viewer_get_node (TgViewer *self);
/* What to say while no output is shown: NULL for the default hint, or
 * "Computing…", or why the node failed (IS_ERROR). */
void tg_viewer_set_message (TgViewer *self, const char *message, gboolean is_error);
/* The text shown instead of an output, or NULL when an output shows. */
const char *tg_viewer_get_message (TgViewer *self);
/* The node the pin keeps in the viewer whatever is selected, or NULL;
 * "pin-changed" tells when the user (or tg_viewer_set_pinned) changes it. */
const char *tg_viewer_get_pinned (TgViewer *self);
void tg_viewer_set_pinned (TgViewer *self, const char *id);
int tg_viewer_get_preview_resolution (TgViewer *self);
/* Shows the "2d" or the "3d" page (TgViewer3d). */
void tg_viewer_set_view (TgViewer *self, const char *name);
void tg_viewer_set_preview_resolution (TgViewer *self, int res);
/* The shown image as a texture (for tests), or NULL. */
GdkTexture *tg_viewer_get_texture (TgViewer *self);

G_END_DECLS
