/* TgImageView: the 2D viewer's zoomable image with an overlay of dots.
 *
 * The view is a zoom relative to the fitted image and the image point at
 * the widget's centre, so a resize keeps what the user looked at in the
 * middle.  Up to two screen pixels per image pixel the texture goes to
 * GSK as it is (scaled on the GPU, filtered); closer in, the visible part
 * is drawn through cairo with nearest filtering, so single samples show
 * as crisp squares when inspecting a map, as in an image editor.  Dots
 * keep their screen size at every zoom.
 */
#include "config.h"

#include "tg-image-view.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#define ZOOM_MIN 0.5
#define ZOOM_MAX 64.0
#define NEAREST_FROM 2.0 /* screen pixels per image pixel */

struct _TgImageView
{
  GtkWidget parent_instance;

  GdkTexture *texture;
  cairo_surface_t *surface; /* the texture for cairo, made when first needed */
  int tw, th;

  double zoom, cu, cv;
  double pointer_x, pointer_y;
  double drag_cu, drag_cv;

  float *dot_xy;
  int *dot_group;
  gsize n_dots;
  char **names;
  int n_groups;
  float *group_rgb; /* 3 per group, the first n_group_rgb groups */
  int n_group_rgb;
};

G_DEFINE_FINAL_TYPE (TgImageView, tg_image_view, GTK_TYPE_WIDGET)

void
tg_image_view_group_colour (int k, GdkRGBA *c)
{
  /* Distinct, bright enough to read on a hillshade and on painted maps. */
  static const guint32 colours[] = {
    0xffd23f, 0x3fa7ff, 0xff5a5f, 0x4fe08a, 0xc77dff, 0xff9f1c, 0x2ec4b6, 0xf15bb5,
    0xb5e48c, 0xffffff,
  };
  guint32 x = colours[(guint) k % G_N_ELEMENTS (colours)];

  c->red = ((x >> 16) & 0xff) / 255.0;
  c->green = ((x >> 8) & 0xff) / 255.0;
  c->blue = (x & 0xff) / 255.0;
  c->alpha = 1;
}

/* The colour dot group K is drawn in. */
static void
group_colour (TgImageView *self, int k, GdkRGBA *c)
{
  if (k >= 0 && k < self->n_group_rgb)
    {
      c->red = self->group_rgb[3 * k];
      c->green = self->group_rgb[3 * k + 1];
      c->blue = self->group_rgb[3 * k + 2];
      c->alpha = 1;
    }
  else
    tg_image_view_group_colour (k, c);
}

void
tg_image_view_set_group_colours (TgImageView *self, const float *rgb, int n)
{
  g_clear_pointer (&self->group_rgb, g_free);
  self->n_group_rgb = MAX (n, 0);
  if (n > 0)
    self->group_rgb = g_memdup2 (rgb, sizeof (float) * 3 * n);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Screen pixels per image pixel, and the widget position of image (0, 0). */
static double
transform (TgImageView *self, double *ox, double *oy)
{
  double w = gtk_widget_get_width (GTK_WIDGET (self)), h = gtk_widget_get_height (GTK_WIDGET (self));
  double fit = self->tw > 0 ? MIN (w / self->tw, h / self->th) : 1;
  double s = fit * self->zoom;

  *ox = w / 2 - self->cu * s;
  *oy = h / 2 - self->cv * s;
  return s;
}

gboolean
tg_image_view_to_image (TgImageView *self, double x, double y, double *u, double *v)
{
  double ox, oy, s = transform (self, &ox, &oy);

  *u = (x - ox) / s;
  *v = (y - oy) / s;
  return self->texture && *u >= 0 && *v >= 0 && *u < self->tw && *v < self->th;
}

void
tg_image_view_get_view (TgImageView *self, double *zoom, double *cu, double *cv)
{
  *zoom = self->zoom;
  *cu = self->cu;
  *cv = self->cv;
}

void
tg_image_view_set_view (TgImageView *self, double zoom, double cu, double cv)
{
  self->zoom = CLAMP (zoom, ZOOM_MIN, ZOOM_MAX);
  /* Keep some of the image in view. */
  self->cu = CLAMP (cu, 0, MAX (self->tw, 1));
  self->cv = CLAMP (cv, 0, MAX (self->th, 1));
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
tg_image_view_fit (TgImageView *self)
{
  tg_image_view_set_view (self, 1, self->tw / 2.0, self->th / 2.0);
}

static cairo_surface_t *
cairo_copy (TgImageView *self)
{
  if (!self->surface && self->texture)
    {
      self->surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, self->tw, self->th);
      gdk_texture_download (self->texture, cairo_image_surface_get_data (self->surface),
                            (gsize) cairo_image_surface_get_stride (self->surface));
      cairo_surface_mark_dirty (self->surface);
    }
  return self->surface;
}

static void
draw_legend (TgImageView *self, cairo_t *cr)
{
  PangoLayout *layout = pango_cairo_create_layout (cr);
  PangoFontDescription *fd = pango_font_description_from_string ("Sans 9");
  g_autofree char *count = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%lu instance",
                                                         "%lu instances", self->n_dots),
                                            (unsigned long) self->n_dots);
  double x = 10, y = 10, w = 0, line = 18;
  int tw, th;

  pango_layout_set_font_description (layout, fd);
  pango_layout_set_text (layout, count, -1);
  pango_layout_get_pixel_size (layout, &tw, &th);
  w = tw + 16;
  for (int k = 0; k < self->n_groups; k++)
    {
      pango_layout_set_text (layout, self->names[k], -1);
      pango_layout_get_pixel_size (layout, &tw, &th);
      w = MAX (w, tw + 34);
    }
  cairo_rectangle (cr, x, y, w, line * (self->n_groups + 1) + 8);
  cairo_set_source_rgba (cr, 0.08, 0.08, 0.09, 0.72);
  cairo_fill (cr);
  for (int k = 0; k < self->n_groups; k++)
    {
      GdkRGBA c;
      double cy = y + 4 + line * k + line / 2;
      group_colour (self, k, &c);
      cairo_arc (cr, x + 13, cy, 4.5, 0, 2 * G_PI);
      gdk_cairo_set_source_rgba (cr, &c);
      cairo_fill_preserve (cr);
      cairo_set_source_rgba (cr, 0, 0, 0, 0.8);
      cairo_set_line_width (cr, 1);
      cairo_stroke (cr);
      pango_layout_set_text (layout, self->names[k], -1);
      pango_layout_get_pixel_size (layout, &tw, &th);
      cairo_move_to (cr, x + 24, cy - th / 2.0);
      cairo_set_source_rgba (cr, 1, 1, 1, 0.92);
      pango_cairo_show_layout (cr, layout);
    }
  pango_layout_set_text (layout, count, -1);
  pango_layout_get_pixel_size (layout, &tw, &th);
  cairo_move_to (cr, x + 8, y + 4 + line * self->n_groups + (line - th) / 2.0);
  cairo_set_source_rgba (cr, 1, 1, 1, 0.7);
  pango_cairo_show_layout (cr, layout);
  pango_font_description_free (fd);
  g_object_unref (layout);
}

/* Adds the visible dots of group K (all when K < 0) to the path. */
static void
dot_path (TgImageView *self, cairo_t *cr, int k, double ox, double oy, double s, double w,
          double h, double r, gboolean squares)
{
  for (gsize i = 0; i < self->n_dots; i++)
    {
      double x, y;
      if (k >= 0 && self->dot_group[i] != k)
        continue;
      x = ox + self->dot_xy[2 * i] * s;
      y = oy + self->dot_xy[2 * i + 1] * s;
      if (x < -r || y < -r || x > w + r || y > h + r)
        continue;
      if (squares)
        cairo_rectangle (cr, x - r, y - r, 2 * r, 2 * r);
      else
        {
          cairo_new_sub_path (cr);
          cairo_arc (cr, x, y, r, 0, 2 * G_PI);
        }
    }
}

static void
draw_dots (TgImageView *self, cairo_t *cr, double ox, double oy, double s, double w, double h)
{
  gsize visible = 0;
  double r, area;
  gboolean squares;

  for (gsize i = 0; i < self->n_dots; i++)
    {
      double x = ox + self->dot_xy[2 * i] * s, y = oy + self->dot_xy[2 * i + 1] * s;
      visible += x >= 0 && y >= 0 && x <= w && y <= h;
    }
  if (!visible)
    return;
  /* Dots shrink where they crowd, so dense forests stay readable. */
  area = MIN (w, self->tw * s) * MIN (h, self->th * s);
  r = CLAMP (0.3 * sqrt (area / visible), 1.0, MIN (2.6 * sqrt (self->zoom), 7.0));
  /* Many dots: squares fill much faster than arcs and look alike when small. */
  squares = visible > 20000 || r < 2;
  /* Dark rims first, all colours over them, so no rim hides a neighbour. */
  if (r >= 2)
    {
      dot_path (self, cr, -1, ox, oy, s, w, h, r, squares);
      cairo_set_source_rgba (cr, 0, 0, 0, 0.8);
      cairo_set_line_width (cr, 2.0);
      cairo_stroke (cr);
    }
  for (int k = 0; k < MAX (self->n_groups, 1); k++)
    {
      GdkRGBA c;
      group_colour (self, k, &c);
      dot_path (self, cr, self->n_groups ? k : -1, ox, oy, s, w, h, r, squares);
      gdk_cairo_set_source_rgba (cr, &c);
      cairo_fill (cr);
    }
}

static void
tg_image_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  TgImageView *self = TG_IMAGE_VIEW (widget);
  double w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  double ox, oy, s;
  cairo_t *cr = NULL;

  if (!self->texture)
    return;
  s = transform (self, &ox, &oy);
  gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
  if (s < NEAREST_FROM)
    gtk_snapshot_append_texture (snapshot, self->texture,
                                 &GRAPHENE_RECT_INIT (ox, oy, self->tw * s, self->th * s));
  else
    {
      cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
      cairo_save (cr);
      cairo_rectangle (cr, ox, oy, self->tw * s, self->th * s);
      cairo_clip (cr);
      cairo_translate (cr, ox, oy);
      cairo_scale (cr, s, s);
      cairo_set_source_surface (cr, cairo_copy (self), 0, 0);
      cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_NEAREST);
      cairo_paint (cr);
      cairo_restore (cr);
    }
  if (self->n_dots > 0 || self->n_groups > 0)
    {
      if (!cr)
        cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
      draw_dots (self, cr, ox, oy, s, w, h);
      draw_legend (self, cr);
    }
  if (cr)
    cairo_destroy (cr);
  gtk_snapshot_pop (snapshot);
}

/* --- input ---------------------------------------------------------------------- */

static void
zoom_at (TgImageView *self, double factor, double x, double y)
{
  double u, v, ox, oy, s;
  double z = CLAMP (self->zoom * factor, ZOOM_MIN, ZOOM_MAX);

  tg_image_view_to_image (self, x, y, &u, &v);
  self->zoom = z;
  /* Keep (u, v) under the pointer: solve for the new centre. */
  s = transform (self, &ox, &oy);
  self->cu = u - (x - gtk_widget_get_width (GTK_WIDGET (self)) / 2.0) / s;
  self->cv = v - (y - gtk_widget_get_height (GTK_WIDGET (self)) / 2.0) / s;
  tg_image_view_set_view (self, self->zoom, self->cu, self->cv);
}

static gboolean
on_scroll (GtkEventControllerScroll *c, double dx, double dy, TgImageView *self)
{
  if (!self->texture)
    return FALSE;
  zoom_at (self, pow (1.15, -dy), self->pointer_x, self->pointer_y);
  return TRUE;
}

static void
on_motion (GtkEventControllerMotion *c, double x, double y, TgImageView *self)
{
  self->pointer_x = x;
  self->pointer_y = y;
}

static void
on_drag_begin (GtkGestureDrag *g, double x, double y, TgImageView *self)
{
  self->drag_cu = self->cu;
  self->drag_cv = self->cv;
  gtk_widget_set_cursor_from_name (GTK_WIDGET (self), "grabbing");
}

static void
on_drag_update (GtkGestureDrag *g, double dx, double dy, TgImageView *self)
{
  double ox, oy, s = transform (self, &ox, &oy);

  tg_image_view_set_view (self, self->zoom, self->drag_cu - dx / s, self->drag_cv - dy / s);
}

static void
on_drag_end (GtkGestureDrag *g, double dx, double dy, TgImageView *self)
{
  gtk_widget_set_cursor (GTK_WIDGET (self), NULL);
}

static void
on_pressed (GtkGestureClick *g, int n_press, double x, double y, TgImageView *self)
{
  if (n_press == 2)
    tg_image_view_fit (self);
}

/* --- public ----------------------------------------------------------------------- */

void
tg_image_view_set_texture (TgImageView *self, GdkTexture *texture)
{
  int w = texture ? gdk_texture_get_width (texture) : 0;
  int h = texture ? gdk_texture_get_height (texture) : 0;
  gboolean same = w == self->tw && h == self->th;

  if (texture)
    g_object_ref (texture);
  g_clear_object (&self->texture);
  g_clear_pointer (&self->surface, cairo_surface_destroy);
  self->texture = texture;
  if (!same)
    {
      /* A new size (another preview resolution): keep the view in world terms. */
      double fu = self->tw > 0 ? self->cu / self->tw : 0.5;
      double fv = self->th > 0 ? self->cv / self->th : 0.5;
      self->tw = w;
      self->th = h;
      self->cu = fu * w;
      self->cv = fv * h;
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
tg_image_view_set_dots (TgImageView *self, const float *xy, const int *group, gsize n,
                        const char *const *names, int n_groups)
{
  g_clear_pointer (&self->dot_xy, g_free);
  g_clear_pointer (&self->dot_group, g_free);
  g_clear_pointer (&self->names, g_strfreev);
  self->n_dots = n;
  self->n_groups = n_groups;
  if (n)
    {
      self->dot_xy = g_memdup2 (xy, sizeof (float) * 2 * n);
      self->dot_group = g_memdup2 (group, sizeof (int) * n);
    }
  self->names = g_new0 (char *, n_groups + 1);
  for (int k = 0; k < n_groups; k++)
    self->names[k] = g_strdup (names[k]);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

GtkWidget *
tg_image_view_new (void)
{
  return g_object_new (TG_TYPE_IMAGE_VIEW, NULL);
}

static void
tg_image_view_finalize (GObject *object)
{
  TgImageView *self = TG_IMAGE_VIEW (object);

  g_clear_object (&self->texture);
  g_clear_pointer (&self->surface, cairo_surface_destroy);
  g_free (self->dot_xy);
  g_free (self->dot_group);
  g_strfreev (self->names);
  g_free (self->group_rgb);
  G_OBJECT_CLASS (tg_image_view_parent_class)->finalize (object);
}

static void
tg_image_view_class_init (TgImageViewClass *klass)
{
  GtkWidgetClass *wc = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = tg_image_view_finalize;
  wc->snapshot = tg_image_view_snapshot;
  gtk_widget_class_set_css_name (wc, "tgimageview");
}

static void
tg_image_view_init (TgImageView *self)
{
  GtkEventController *c;
  GtkGesture *g;

  self->zoom = 1;
  gtk_widget_set_overflow (GTK_WIDGET (self), GTK_OVERFLOW_HIDDEN);
  c = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
  g_signal_connect (c, "scroll", G_CALLBACK (on_scroll), self);
  gtk_widget_add_controller (GTK_WIDGET (self), c);
  c = gtk_event_controller_motion_new ();
  g_signal_connect (c, "motion", G_CALLBACK (on_motion), self);
  gtk_widget_add_controller (GTK_WIDGET (self), c);
  /* Pan with the primary or the middle button. */
  g = gtk_gesture_drag_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (g), 0);
  g_signal_connect (g, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (g, "drag-update", G_CALLBACK (on_drag_update), self);
  g_signal_connect (g, "drag-end", G_CALLBACK (on_drag_end), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (g));
  g = gtk_gesture_click_new ();
  g_signal_connect (g, "pressed", G_CALLBACK (on_pressed), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (g));
}
