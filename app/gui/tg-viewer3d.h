/* TgViewer3d: the 3D view of the active node's output (GtkGLArea, GL 3.3
 * core, shaders from the gresource).
 *
 * What it draws for each output type:
 *   height          a lit terrain, coloured by the 2D viewer's height ramp
 *   image, layers   draped over TERRAIN (flat when there is none)
 *   mask            a red overlay on TERRAIN, or a terrain of its own
 *   mesh            every LOD 0 chunk as lit geometry
 *   points          instanced cone markers, coloured per prototype, on TERRAIN
 *   field           nothing (a message: fields show through mesh.isosurface)
 *
 * The engine's world has x east, y up and z north; the view mirrors z so
 * that, seen from above with north up, east is on the right as on the 2D
 * map.  Orbit with the left button, pan with the middle button or
 * Shift+left, zoom towards the point under the pointer with the wheel,
 * double-click to orbit around a point, F to frame from a 3/4 angle on
 * the side the view is turned to, Home for the default perspective, T
 * (or keypad 7) for the top view, W for wireframe, G for the metre grid,
 * S for sun shadows.  Keys reach the view while the pointer is over it.
 */
#pragma once

#include <glib/gi18n.h>
#include <gtk/gtk.h>
#include <tgraph/tgraph.h>

G_BEGIN_DECLS

#define TG_TYPE_VIEWER3D (tg_viewer3d_get_type ())
G_DECLARE_FINAL_TYPE (TgViewer3d, tg_viewer3d, TG, VIEWER3D, GtkWidget)

/* Shows V (a reference is taken; NULL clears) of node ID.  TERRAIN (may
 * be NULL) is the height that images, masks and points stand on.  A new
 * ID or output type frames the camera; an edit of the same node keeps it. */
void tg_viewer3d_set_scene (TgViewer3d *self, TgValue *v, TgValue *terrain, const TgWorld *world,
                            const char *id);
/* Marker colours of the first N prototypes (RGB sRGB 0..1, 3 each) for
 * the next set_scene of instances and its legend; the rest take the fixed
 * hues.  Markers index N_PALETTE (10) colours by prototype modulo 10. */
void tg_viewer3d_set_proto_colours (TgViewer3d *self, const float *rgb, int n);
/* Sun direction: azimuth clockwise from north, elevation above the horizon. */
void tg_viewer3d_set_sun (TgViewer3d *self, double azimuth_deg, double elevation_deg);
void tg_viewer3d_frame (TgViewer3d *self);
void tg_viewer3d_set_wireframe (TgViewer3d *self, gboolean wireframe);
void tg_viewer3d_set_antialias (TgViewer3d *self, gboolean antialias);
void tg_viewer3d_set_exaggeration (TgViewer3d *self, double exaggeration);
/* Orbit angles in degrees (yaw 0 looks north, from the south). */
void tg_viewer3d_set_view_angles (TgViewer3d *self, double yaw_deg, double pitch_deg);

/* Sun shadows (on by default), the metre grid, and the water plane at
 * LEVEL_M metres (engine heights, before exaggeration). */
void tg_viewer3d_set_shadows (TgViewer3d *self, gboolean shadows);
void tg_viewer3d_set_grid (TgViewer3d *self, gboolean grid);
void tg_viewer3d_set_water (TgViewer3d *self, gboolean water, double level_m);
/* A layers output: every layer in its colour (LAYER -1) or the weight of
 * layer LAYER alone, as the mask overlay. */
void tg_viewer3d_set_splat_layer (TgViewer3d *self, int layer);
/* The RGBA colour a drape shows at sample P (V's channels): an image's
 * colour, layers each in its colour by weight (LAYER < 0) or LAYER alone,
 * a mask in red; alpha is the coverage. */
void tg_viewer3d_drape_pixel (const TgValue *v, const float *p, int layer, guint8 *o);

/* For tests and timing.  TRUE once the latest scene has been drawn, or
 * when the view cannot draw (see get_error). */
gboolean tg_viewer3d_is_drawn (TgViewer3d *self);
/* Why the view cannot draw (no GL context, a shader failed), or NULL. */
const char *tg_viewer3d_get_error (TgViewer3d *self);
/* Saves the last drawn frame (what the GL view shows) as a PNG. */
gboolean tg_viewer3d_save_png (TgViewer3d *self, const char *path, GError **error);
/* Zooms by FACTOR towards the surface point under (FX, FY), fractions of
 * the view's size, as the wheel does, and draws.  *DRIFT gets how far the
 * surface point under that pixel moved, over its distance from the eye
 * (about 0 when zoom-to-cursor works; the terrain's level of detail may
 * change with the zoom); FALSE when nothing is under the pixel. */
gboolean tg_viewer3d_zoom_at (TgViewer3d *self, double factor, double fx, double fy,
                              double *drift);
/* Draws N frames off screen, orbiting a little each time, and returns the
 * mean and the fastest time per frame in milliseconds (with glFinish). */
gboolean tg_viewer3d_benchmark (TgViewer3d *self, int n, double *mean_ms, double *min_ms,
                                GError **error);

G_END_DECLS
