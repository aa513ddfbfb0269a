/* TgImageView: an image with its own pan and zoom, and dots over it.
 *
 * The 2D viewer's surface: the texture fits the widget at zoom 1; the
 * wheel zooms at the pointer, a drag pans, a double click fits again.
 * Dots (scatter instances) are given in image pixel coordinates and
 * drawn at a constant screen size over the image, coloured per group,
 * with a legend of the group names.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TG_TYPE_IMAGE_VIEW (tg_image_view_get_type ())
G_DECLARE_FINAL_TYPE (TgImageView, tg_image_view, TG, IMAGE_VIEW, GtkWidget)

GtkWidget *tg_image_view_new (void);
/* Shows TEXTURE (a reference is taken; NULL clears).  The view keeps its
 * pan and zoom while the image size stays the same. */
void tg_image_view_set_texture (TgImageView *self, GdkTexture *texture);
/* N dots at XY (2 * N floats, image pixels: 0,0 is the top-left corner of
 * the first pixel), GROUP[k] indexing NAMES (N_GROUPS of them).  Copied.
 * N = 0 clears. */
void tg_image_view_set_dots (TgImageView *self, const float *xy, const int *group, gsize n,
                             const char *const *names, int n_groups);
/* The fixed colour of dot group K. */
void tg_image_view_group_colour (int k, GdkRGBA *c);
/* Colours of the first N dot groups (RGB 0..1, 3 per group; copied), for
 * the dots and the legend; groups beyond N take the fixed colours.
 * N = 0 goes back to the fixed colours. */
void tg_image_view_set_group_colours (TgImageView *self, const float *rgb, int n);
/* Widget point (X, Y) in image pixels; FALSE when outside the image. */
gboolean tg_image_view_to_image (TgImageView *self, double x, double y, double *u, double *v);
/* Zoom relative to the fitted image (1 = fit) and the image pixel at the
 * widget's centre. */
void tg_image_view_get_view (TgImageView *self, double *zoom, double *cu, double *cv);
void tg_image_view_set_view (TgImageView *self, double zoom, double cu, double cv);
void tg_image_view_fit (TgImageView *self);

G_END_DECLS
