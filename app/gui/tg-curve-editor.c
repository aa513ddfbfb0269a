/* TgCurveEditor: a small cairo widget for curve points.
 *
 * The curve between points is drawn with Steffen's monotone cubic, the
 * interpolation the engine's curve node uses, so what the user shapes is
 * what the node computes.
 */
#include "config.h"

#include "tg-curve-editor.h"

#include <math.h>
#include <string.h>

#define MARGIN 8.0
#define HIT 9.0
#define MIN_DX 0.002

struct _TgCurveEditor
{
  GtkWidget parent_instance;
  GArray *xy;   /* doubles, 2 per point */
  float bins[256];
  int n_bins;
  int dragging; /* point index, or -1 */
  int hover;
};

enum
{
  SIGNAL_CHANGED,
  SIGNAL_FINISHED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (TgCurveEditor, tg_curve_editor, GTK_TYPE_WIDGET)

static int
n_points (TgCurveEditor *self)
{
  return (int) self->xy->len / 2;
}

static double *
pt (TgCurveEditor *self, int k)
{
  return &g_array_index (self->xy, double, 2 * k);
}

/* Steffen (1990) slopes: monotone, no overshoot. */
static double
eval_curve (TgCurveEditor *self, double x)
{
  int n = n_points (self), k;
  double *p = pt (self, 0);
  double h, m0 = 0, m1 = 0, t;

  if (n == 0)
    return x;
  if (x <= p[0])
    return p[1];
  if (x >= p[2 * (n - 1)])
    return p[2 * (n - 1) + 1];
  for (k = 0; k < n - 2 && x > p[2 * (k + 1)]; k++)
    ;
#define X(i) p[2 * (i)]
#define Y(i) p[2 * (i) + 1]
#define S(i) ((Y ((i) + 1) - Y (i)) / (X ((i) + 1) - X (i)))
  h = X (k + 1) - X (k);
  for (int e = 0; e < 2; e++)
    {
      int i = k + e;
      double m;
      if (i == 0 || i == n - 1)
        m = S (i == 0 ? 0 : n - 2);
      else
        {
          double s0 = S (i - 1), s1 = S (i), h0 = X (i) - X (i - 1), h1 = X (i + 1) - X (i);
          double pp = (s0 * h1 + s1 * h0) / (h0 + h1);
          m = (copysign (1.0, s0) + copysign (1.0, s1))
              * fmin (fmin (fabs (s0), fabs (s1)), 0.5 * fabs (pp));
        }
      if (e == 0)
        m0 = m;
      else
        m1 = m;
    }
  t = (x - X (k)) / h;
  {
    double t2 = t * t, t3 = t2 * t;
    return (2 * t3 - 3 * t2 + 1) * Y (k) + (t3 - 2 * t2 + t) * h * m0
           + (-2 * t3 + 3 * t2) * Y (k + 1) + (t3 - t2) * h * m1;
  }
#undef X
#undef Y
#undef S
}

static void
to_screen (TgCurveEditor *self, double x, double y, double *sx, double *sy)
{
  double w = gtk_widget_get_width (GTK_WIDGET (self)) - 2 * MARGIN;
  double h = gtk_widget_get_height (GTK_WIDGET (self)) - 2 * MARGIN;

  *sx = MARGIN + x * w;
  *sy = MARGIN + (1 - y) * h;
}

static void
to_curve (TgCurveEditor *self, double sx, double sy, double *x, double *y)
{
  double w = gtk_widget_get_width (GTK_WIDGET (self)) - 2 * MARGIN;
  double h = gtk_widget_get_height (GTK_WIDGET (self)) - 2 * MARGIN;

  *x = CLAMP ((sx - MARGIN) / w, 0, 1);
  *y = CLAMP (1 - (sy - MARGIN) / h, 0, 1);
}

static int
hit_point (TgCurveEditor *self, double sx, double sy)
{
  for (int k = 0; k < n_points (self); k++)
    {
      double px, py;
      to_screen (self, pt (self, k)[0], pt (self, k)[1], &px, &py);
      if (hypot (px - sx, py - sy) <= HIT)
        return k;
    }
  return -1;
}

static void
tg_curve_editor_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  TgCurveEditor *self = TG_CURVE_EDITOR (widget);
  double w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
  double iw = w - 2 * MARGIN, ih = h - 2 * MARGIN;

  cairo_rectangle (cr, MARGIN, MARGIN, iw, ih);
  cairo_set_source_rgb (cr, 0.13, 0.135, 0.145);
  cairo_fill (cr);
  if (self->n_bins > 0)
    {
      float mx = 0;
      for (int k = 0; k < self->n_bins; k++)
        mx = MAX (mx, self->bins[k]);
      for (int k = 0; k < self->n_bins && mx > 0; k++)
        {
          double bh = ih * 0.9 * sqrt (self->bins[k] / mx);
          cairo_rectangle (cr, MARGIN + iw * k / self->n_bins, MARGIN + ih - bh,
                           iw / self->n_bins + 0.5, bh);
        }
      cairo_set_source_rgba (cr, 1, 1, 1, 0.12);
      cairo_fill (cr);
    }
  cairo_set_line_width (cr, 1);
  cairo_set_source_rgba (cr, 1, 1, 1, 0.07);
  for (int k = 1; k < 4; k++)
    {
      cairo_move_to (cr, MARGIN + iw * k / 4, MARGIN);
      cairo_line_to (cr, MARGIN + iw * k / 4, MARGIN + ih);
      cairo_move_to (cr, MARGIN, MARGIN + ih * k / 4);
      cairo_line_to (cr, MARGIN + iw, MARGIN + ih * k / 4);
    }
  cairo_stroke (cr);
  cairo_set_source_rgba (cr, 1, 1, 1, 0.15);
  cairo_move_to (cr, MARGIN, MARGIN + ih);
  cairo_line_to (cr, MARGIN + iw, MARGIN);
  cairo_stroke (cr);

  for (int s = 0; s <= (int) iw; s++)
    {
      double x = s / iw, sx, sy;
      to_screen (self, x, CLAMP (eval_curve (self, x), 0, 1), &sx, &sy);
      if (s == 0)
        cairo_move_to (cr, sx, sy);
      else
        cairo_line_to (cr, sx, sy);
    }
  cairo_set_source_rgb (cr, 0.96, 0.62, 0.20);
  cairo_set_line_width (cr, 2);
  cairo_stroke (cr);
  for (int k = 0; k < n_points (self); k++)
    {
      double sx, sy;
      to_screen (self, pt (self, k)[0], pt (self, k)[1], &sx, &sy);
      cairo_arc (cr, sx, sy, k == self->dragging || k == self->hover ? 6 : 4.5, 0, 2 * G_PI);
      cairo_set_source_rgb (cr, 1, 1, 1);
      cairo_fill_preserve (cr);
      cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
      cairo_set_line_width (cr, 1.5);
      cairo_stroke (cr);
    }
  cairo_destroy (cr);
}

static void
remove_point (TgCurveEditor *self, int k)
{
  if (k < 0 || n_points (self) <= 2)
    return;
  g_array_remove_range (self->xy, 2 * k, 2);
  self->hover = -1;
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
  g_signal_emit (self, signals[SIGNAL_FINISHED], 0);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
pressed (GtkGestureClick *g, int n_press, double x, double y, TgCurveEditor *self)
{
  guint button = gtk_gesture_single_get_current_button (GTK_GESTURE_SINGLE (g));
  int k = hit_point (self, x, y);
  double cx, cy;

  if (button == GDK_BUTTON_SECONDARY || (n_press == 2 && k >= 0))
    {
      self->dragging = -1;
      remove_point (self, k);
      return;
    }
  if (k < 0)
    {
      int at = 0;
      to_curve (self, x, y, &cx, &cy);
      while (at < n_points (self) && pt (self, at)[0] < cx)
        at++;
      if ((at > 0 && cx - pt (self, at - 1)[0] < MIN_DX)
          || (at < n_points (self) && pt (self, at)[0] - cx < MIN_DX))
        return;
      g_array_insert_vals (self->xy, 2 * at, (double[]) { cx, cy }, 2);
      k = at;
      g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
    }
  self->dragging = k;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
drag_update (GtkGestureDrag *g, double dx, double dy, TgCurveEditor *self)
{
  double x0, y0, cx, cy, lo, hi;
  int k = self->dragging, n = n_points (self);

  if (k < 0 || k >= n)
    return;
  gtk_gesture_drag_get_start_point (g, &x0, &y0);
  to_curve (self, x0 + dx, y0 + dy, &cx, &cy);
  lo = k > 0 ? pt (self, k - 1)[0] + MIN_DX : 0;
  hi = k < n - 1 ? pt (self, k + 1)[0] - MIN_DX : 1;
  pt (self, k)[0] = CLAMP (cx, lo, hi);
  pt (self, k)[1] = cy;
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
drag_end (GtkGestureDrag *g, double dx, double dy, TgCurveEditor *self)
{
  if (self->dragging >= 0)
    g_signal_emit (self, signals[SIGNAL_FINISHED], 0);
  self->dragging = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
motion (GtkEventControllerMotion *c, double x, double y, TgCurveEditor *self)
{
  int k = hit_point (self, x, y);

  if (k != self->hover)
    {
      self->hover = k;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

static void
tg_curve_editor_measure (GtkWidget *w, GtkOrientation o, int for_size, int *min, int *nat,
                         int *min_base, int *nat_base)
{
  *min = o == GTK_ORIENTATION_HORIZONTAL ? 120 : 160;
  *nat = o == GTK_ORIENTATION_HORIZONTAL ? 240 : 200;
}

static void
tg_curve_editor_finalize (GObject *object)
{
  g_array_unref (TG_CURVE_EDITOR (object)->xy);
  G_OBJECT_CLASS (tg_curve_editor_parent_class)->finalize (object);
}

static void
tg_curve_editor_class_init (TgCurveEditorClass *klass)
{
  GtkWidgetClass *wc = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = tg_curve_editor_finalize;
  wc->snapshot = tg_curve_editor_snapshot;
  wc->measure = tg_curve_editor_measure;
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[SIGNAL_FINISHED] = g_signal_new ("finished", G_TYPE_FROM_CLASS (klass),
                                           G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE,
                                           0);
  gtk_widget_class_set_css_name (wc, "tgcurve");
}

static void
tg_curve_editor_init (TgCurveEditor *self)
{
  GtkGesture *click = gtk_gesture_click_new ();
  GtkGesture *drag = gtk_gesture_drag_new ();
  GtkEventController *mot = gtk_event_controller_motion_new ();

  self->xy = g_array_new (FALSE, FALSE, sizeof (double));
  self->dragging = self->hover = -1;
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (click), 0);
  g_signal_connect (click, "pressed", G_CALLBACK (pressed), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (drag_update), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (drag_end), self);
  g_signal_connect (mot, "motion", G_CALLBACK (motion), self);
  /* The click decides which point a drag moves; both see the press. */
  gtk_gesture_group (click, drag);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (click));
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));
  gtk_widget_add_controller (GTK_WIDGET (self), mot);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self),
                               _("Click to add a point, drag to move it, right-click to delete it"));
}

GtkWidget *
tg_curve_editor_new (void)
{
  return g_object_new (TG_TYPE_CURVE_EDITOR, NULL);
}

void
tg_curve_editor_set_points (TgCurveEditor *self, const double *xy, int n)
{
  if (self->dragging >= 0)
    return; /* our own change coming back */
  g_array_set_size (self->xy, 0);
  g_array_append_vals (self->xy, xy, (guint) (2 * n));
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

const double *
tg_curve_editor_get_points (TgCurveEditor *self, int *n)
{
  *n = n_points (self);
  return (const double *) self->xy->data;
}

void
tg_curve_editor_set_histogram (TgCurveEditor *self, const float *bins, int n)
{
  self->n_bins = bins ? MIN (n, 256) : 0;
  if (bins)
    memcpy (self->bins, bins, sizeof (float) * (gsize) self->n_bins);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}
