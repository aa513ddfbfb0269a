/* TgViewer: turns a grid value into an RGBA texture and shows it.
 *
 * Heights map 0..1 to black..white (not the map's own min/max, which
 * would change the picture whenever a far corner changes); the hillshade
 * takes its slopes in metres from the world settings, so a 257 and a 1025
 * preview shade alike.  A value of several channels (splat layers, an
 * image) shows all of them in colour, or one channel picked, which the
 * modes then draw as any single map.  Under the picture: the shown
 * value's minimum, maximum, mean and histogram (metres for heights), or
 * each layer's share of the world.
 */
#include "config.h"

#include "tg-viewer.h"
#include "tg-image-view.h"
#include "tg-viewer3d.h"

#include <float.h>
#include <math.h>
#include <string.h>

enum
{
  MODE_GREY,
  MODE_RAMP,
  MODE_HILLSHADE,
  MODE_OVERLAY,
};

static const int resolutions[] = { 257, 513, 1025 };

#define HIST_BINS 64

struct _TgViewer
{
  GtkWidget parent_instance;

  GtkDropDown *mode, *resolution, *layer;
  GtkStringList *layer_names;
  GtkWidget *stats_box;
  GtkDrawingArea *histogram;
  GtkLabel *stats;
  guint hist[HIST_BINS];
  GtkAdjustment *azimuth, *elevation;
  GtkLabel *readout;
  GtkStack *views;
  TgImageView *area;
  GtkWidget *placeholder;
  GtkToggleButton *pin;
  TgViewer3d *viewer3d;

  char *message;     /* said while nothing is shown (tg_viewer_set_message) */
  gboolean is_error;
  char *pinned;      /* the node kept in the viewer, or NULL */

  TgValue *value;
  TgValue *backdrop; /* the terrain under a mask or instances, or NULL */
  char **colour_names; /* paint colours by prototype name (tg_viewer_set_proto_colours) */
  float *colour_rgb;
  TgWorld world;
  char *id;
  GdkTexture *texture;
  int layers_of;     /* channels and type the layer list was made for */
  TgPortType layers_type;
};

enum
{
  SIGNAL_RESOLUTION_CHANGED,
  SIGNAL_PIN_CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (TgViewer, tg_viewer, GTK_TYPE_WIDGET)

/* A hypsometric ramp: shore, lowland, upland, rock, snow. */
static void
ramp (float h, guint8 *out)
{
  static const float stops[][4] = {
    { 0.00f, 0.16f, 0.29f, 0.43f }, { 0.02f, 0.80f, 0.76f, 0.58f }, { 0.10f, 0.38f, 0.55f, 0.30f },
    { 0.35f, 0.55f, 0.62f, 0.36f }, { 0.60f, 0.55f, 0.46f, 0.34f }, { 0.80f, 0.55f, 0.53f, 0.52f },
    { 0.95f, 0.95f, 0.96f, 0.98f }, { 1.00f, 1.00f, 1.00f, 1.00f },
  };
  int k = 0;
  float t;

  h = CLAMP (h, 0.f, 1.f);
  while (k < (int) G_N_ELEMENTS (stops) - 2 && h > stops[k + 1][0])
    k++;
  t = (h - stops[k][0]) / (stops[k + 1][0] - stops[k][0]);
  t = CLAMP (t, 0.f, 1.f);
  for (int c = 0; c < 3; c++)
    out[c] = (guint8) lrintf (255.f * (stops[k][c + 1] + t * (stops[k + 1][c + 1] - stops[k][c + 1])));
}

/* The colour of each prototype of P (3 floats each): its paint colour
 * when one was given for its name, else the fixed hue of its index. */
static float *
proto_rgb (TgViewer *self, const TgPoints *p)
{
  float *rgb = g_new (float, 3 * p->n_protos + 3);

  for (int k = 0; k < p->n_protos; k++)
    {
      GdkRGBA c;
      int i = 0;
      while (self->colour_names && self->colour_names[i]
             && g_strcmp0 (self->colour_names[i], p->proto_names[k]))
        i++;
      if (self->colour_names && self->colour_names[i])
        {
          memcpy (rgb + 3 * k, self->colour_rgb + 3 * i, 3 * sizeof (float));
          continue;
        }
      tg_image_view_group_colour (k, &c);
      rgb[3 * k] = (float) c.red, rgb[3 * k + 1] = (float) c.green, rgb[3 * k + 2] = (float) c.blue;
    }
  return rgb;
}

void
tg_viewer_set_proto_colours (TgViewer *self, const char *const *names, const float *rgb, int n)
{
  g_clear_pointer (&self->colour_names, g_strfreev);
  g_clear_pointer (&self->colour_rgb, g_free);
  if (n <= 0)
    return;
  self->colour_names = g_new0 (char *, n + 1);
  for (int k = 0; k < n; k++)
    self->colour_names[k] = g_strdup (names[k]);
  self->colour_rgb = g_memdup2 (rgb, sizeof (float) * 3 * n);
}

/* Instances of V as dots in the pixels of REGION (sample centres). */
static void
set_dots (TgViewer *self, const TgValue *v, const TgRegion *region)
{
  const TgPoints *p = v->type == TG_TYPE_POINTS ? tg_value_points (v) : NULL;
  g_autofree float *xy = NULL;
  g_autofree int *group = NULL;
  g_autofree float *rgb = NULL;

  if (!p)
    {
      tg_image_view_set_dots (self->area, NULL, NULL, 0, NULL, 0);
      return;
    }
  xy = g_new (float, 2 * p->n + 2);
  group = g_new (int, p->n + 1);
  for (gint64 k = 0; k < p->n; k++)
    {
      double x = p->position[3 * k], z = p->position[3 * k + 2];
      xy[2 * k] = (float) ((x - region->origin_x) / region->cell - region->col0 + 0.5);
      xy[2 * k + 1] = (float) ((region->origin_z - z) / region->cell - region->row0 + 0.5);
      group[k] = p->proto[k];
    }
  rgb = proto_rgb (self, p);
  tg_image_view_set_group_colours (self->area, rgb, p->n_protos);
  tg_image_view_set_dots (self->area, xy, group, (gsize) p->n,
                          (const char *const *) p->proto_names, p->n_protos);
}

/* The text in place of a picture: none when one shows. */
static void
update_placeholder (TgViewer *self)
{
  const TgValue *v = self->value;
  gboolean only_3d = v && (v->type == TG_TYPE_MESH || v->type == TG_TYPE_FIELD);

  gtk_label_set_text (GTK_LABEL (self->placeholder),
                      only_3d         ? _("This output shows in the 3D view")
                      : self->message ? self->message
                                      : _("Select a node to see its output"));
  if (!v && self->is_error)
    {
      gtk_widget_remove_css_class (self->placeholder, "dim-label");
      gtk_widget_add_css_class (self->placeholder, "error");
    }
  else
    {
      gtk_widget_remove_css_class (self->placeholder, "error");
      gtk_widget_add_css_class (self->placeholder, "dim-label");
    }
  gtk_widget_set_visible (self->placeholder, !v || only_3d);
}

/* The channel the picture shows: -1 for all of a multi-channel value in
 * colour, else the one picked (0 for a single map). */
static int
shown_channel (TgViewer *self, const TgValue *v)
{
  int k = (int) gtk_drop_down_get_selected (self->layer) - 1;

  if (!v || v->channels < 2 || v->type == TG_TYPE_POINTS)
    return 0;
  return k < v->channels ? k : -1;
}

/* The layer list offers the channels of V: a layers value's names, an
 * image's colours.  Another value of the same kind keeps the choice. */
static void
update_layer_names (TgViewer *self, const TgValue *v)
{
  static const char *const rgba[] = { N_("Red"), N_("Green"), N_("Blue"), N_("Alpha") };
  gboolean multi = v && tg_port_type_is_grid (v->type) && v->channels > 1;
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->layer_names)) - 1;
  g_autoptr (GPtrArray) names = g_ptr_array_new ();

  gtk_widget_set_visible (GTK_WIDGET (self->layer), multi);
  if (!multi)
    return;
  for (int c = 0; c < v->channels; c++)
    g_ptr_array_add (names, (char *) (v->type == TG_TYPE_LAYERS
                                          ? (v->channel_names && v->channel_names[c]
                                                 ? v->channel_names[c]
                                                 : "?")
                                          : _(rgba[MIN (c, 3)])));
  g_ptr_array_add (names, NULL);
  /* Unchanged names: leave the list (and the drop-down's choice) alone. */
  if (n == (guint) v->channels)
    {
      guint k = 0;
      while (k < n && !g_strcmp0 (gtk_string_list_get_string (self->layer_names, k + 1),
                                  names->pdata[k]))
        k++;
      if (k == n)
        return;
    }
  g_signal_handlers_block_matched (self->layer, G_SIGNAL_MATCH_DATA, 0, 0, NULL, NULL, self);
  {
    guint keep = gtk_drop_down_get_selected (self->layer);
    gboolean same = v->channels == self->layers_of && v->type == self->layers_type;
    gtk_string_list_splice (self->layer_names, 1, n, (const char *const *) names->pdata);
    gtk_drop_down_set_selected (self->layer, same && keep <= (guint) v->channels ? keep : 0);
  }
  g_signal_handlers_unblock_matched (self->layer, G_SIGNAL_MATCH_DATA, 0, 0, NULL, NULL, self);
  self->layers_of = v->channels;
  self->layers_type = v->type;
}

/* A number of the shown value as the read-out gives it. */
static void
format_value (TgViewer *self, const TgValue *v, double x, char *buf, gsize size)
{
  if (v->type == TG_TYPE_HEIGHT)
    g_snprintf (buf, size, _("%.1f m"), x * self->world.height_m);
  else
    g_snprintf (buf, size, "%.3f", x);
}

/* The read-out under the picture: for one map (or channel, or an image's
 * luminance) its range, mean and histogram; for all layers each one's
 * share of the world, in its colour. */
static void
update_stats (TgViewer *self, const TgValue *v, int channel)
{
  int w = v->region.width, h = v->region.height, ch = v->channels;
  gsize n = (gsize) w * h;
  g_autoptr (GString) text = g_string_new (NULL);

  memset (self->hist, 0, sizeof self->hist);
  if (channel < 0 && v->type == TG_TYPE_LAYERS)
    {
      double *sum = g_new0 (double, ch);
      float *one = g_new0 (float, ch);
      for (int j = 0; j < h; j++)
        {
          const float *row = tg_value_row (v, j);
          for (int i = 0; i < w; i++)
            for (int c = 0; c < ch; c++)
              sum[c] += row[(gsize) i * ch + c];
        }
      for (int c = 0; c < ch; c++)
        {
          guint8 o[4];
          g_autofree char *name = g_markup_escape_text (
            v->channel_names && v->channel_names[c] ? v->channel_names[c] : "?", -1);
          memset (one, 0, sizeof (float) * ch);
          one[c] = 1;
          tg_viewer3d_drape_pixel (v, one, -1, o);
          /* TRANSLATORS: a layer's colour swatch, its name and its share of the world. */
          g_string_append_printf (text, _("%s<span foreground=\"#%02x%02x%02x\">■</span> %s %.1f %%"),
                                  c ? "   " : "", o[0], o[1], o[2], name, 100.0 * sum[c] / n);
        }
      g_free (sum);
      g_free (one);
      gtk_widget_set_visible (GTK_WIDGET (self->histogram), FALSE);
    }
  else
    {
      double lo = DBL_MAX, hi = -DBL_MAX, mean = 0;
      char a[32], b[32], m[32];
      for (int pass = 0; pass < 2; pass++)
        for (int j = 0; j < h; j++)
          {
            const float *row = tg_value_row (v, j);
            for (int i = 0; i < w; i++)
              {
                const float *p = row + (gsize) i * ch;
                /* An image in colour: its luminance (Rec. 709). */
                double x = channel >= 0 ? p[channel]
                                        : 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
                if (pass == 0)
                  {
                    lo = MIN (lo, x), hi = MAX (hi, x);
                    mean += x;
                  }
                else
                  {
                    int k = hi > lo ? (int) ((x - lo) / (hi - lo) * HIST_BINS) : 0;
                    self->hist[CLAMP (k, 0, HIST_BINS - 1)]++;
                  }
              }
          }
      mean /= n;
      format_value (self, v, lo, a, sizeof a);
      format_value (self, v, hi, b, sizeof b);
      format_value (self, v, mean, m, sizeof m);
      g_string_printf (text, _("min %s   max %s   mean %s"), a, b, m);
      gtk_widget_set_visible (GTK_WIDGET (self->histogram), TRUE);
    }
  /* The same text again would only queue a relayout. */
  if (g_strcmp0 (gtk_label_get_label (self->stats), text->str))
    gtk_label_set_markup (self->stats, text->str);
  gtk_widget_queue_draw (GTK_WIDGET (self->histogram));
}

static void
draw_histogram (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  TgViewer *self = data;
  guint top = 1;
  GdkRGBA fg;

  for (int k = 0; k < HIST_BINS; k++)
    top = MAX (top, self->hist[k]);
  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (area)), &fg);
  cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.12);
  cairo_rectangle (cr, 0, 0, width, height);
  cairo_fill (cr);
  cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.8);
  for (int k = 0; k < HIST_BINS; k++)
    {
      /* Square root: a spike at sea level leaves the rest readable. */
      double bh = height * sqrt ((double) self->hist[k] / top);
      cairo_rectangle (cr, (double) k * width / HIST_BINS, height - bh,
                       (double) width / HIST_BINS, bh);
    }
  cairo_fill (cr);
}

static void
render (TgViewer *self)
{
  const TgValue *v = self->value;
  int w, h, ch, mode = (int) gtk_drop_down_get_selected (self->mode), channel;
  double az = gtk_adjustment_get_value (self->azimuth) * G_PI / 180;
  double el = gtk_adjustment_get_value (self->elevation) * G_PI / 180;
  /* Sun vector: azimuth clockwise from north (-row direction), +Z north. */
  double sx = sin (az) * cos (el), sz = cos (az) * cos (el), sy = sin (el);
  guint8 *px;
  GBytes *bytes;
  /* GRID is what the picture shows; RELIEF, whose slopes shade it: a mask
   * in overlay mode lies over the terrain's relief, instances over their
   * terrain (or over nothing when none is upstream). */
  const TgValue *grid = v, *relief = v;
  TgValue *flat = NULL;
  int rch, roff;

  g_clear_object (&self->texture);
  update_placeholder (self);
  /* Meshes and fields have no 2D picture: the 3D page shows them. */
  if (v && (v->type == TG_TYPE_MESH || v->type == TG_TYPE_FIELD))
    v = NULL;
  update_layer_names (self, v);
  gtk_widget_set_visible (self->stats_box, v && v->type != TG_TYPE_POINTS);
  if (!v)
    {
      tg_image_view_set_texture (self->area, NULL);
      tg_image_view_set_dots (self->area, NULL, NULL, 0, NULL, 0);
      return;
    }
  channel = shown_channel (self, v);
  /* All channels in colour: the mode has nothing to choose. */
  gtk_widget_set_sensitive (GTK_WIDGET (self->mode), channel >= 0);
  if (v->type == TG_TYPE_POINTS)
    {
      if (self->backdrop)
        grid = relief = self->backdrop;
      else
        {
          TgRegion r;
          tg_region_for_world (&r, &self->world, 513);
          grid = relief = flat = tg_value_new_grid (TG_TYPE_MASK, &r, 1);
          memset (flat->data, 0, sizeof (float) * tg_region_samples (&r));
        }
    }
  else if (self->backdrop && self->backdrop->type == TG_TYPE_HEIGHT && mode == MODE_OVERLAY
           && self->backdrop->region.width == v->region.width
           && self->backdrop->region.height == v->region.height)
    relief = self->backdrop;
  w = grid->region.width;
  h = grid->region.height;
  ch = grid->channels;
  rch = relief->channels;
  /* A picked channel shades by its own slopes unless a terrain lies under it. */
  roff = relief == grid && channel > 0 ? channel : 0;
  px = g_malloc ((gsize) w * h * 4);
  for (int j = 0; j < h; j++)
    {
      const float *row = tg_value_row (grid, j);
      const float *rrow = tg_value_row (relief, j) + roff;
      const float *up = tg_value_row (relief, MAX (j - 1, 0)) + roff;
      const float *dn = tg_value_row (relief, MIN (j + 1, h - 1)) + roff;
      guint8 *o = px + (gsize) j * w * 4;
      for (int i = 0; i < w; i++, o += 4)
        {
          float x = row[(gsize) i * ch + MAX (channel, 0)];
          double shade = 1;
          o[3] = 255;
          if (channel < 0)
            {
              /* All layers in their colours (as the 3D drape) over a dark
               * ground where they do not cover it; an image as it is. */
              guint8 c[4];
              tg_viewer3d_drape_pixel (grid, row + (gsize) i * ch, -1, c);
              if (grid->type == TG_TYPE_IMAGE)
                c[3] = 255;
              for (int k = 0; k < 3; k++)
                o[k] = (guint8) ((c[k] * c[3] + 30 * (255 - c[3]) + 127) / 255);
              continue;
            }
          if (mode == MODE_HILLSHADE || mode == MODE_OVERLAY || mode == MODE_RAMP)
            {
              /* Slopes in metres per metre; central differences. */
              double hm = self->world.height_m;
              int il = MAX (i - 1, 0), ir = MIN (i + 1, w - 1);
              double dx = (rrow[(gsize) ir * rch] - rrow[(gsize) il * rch]) * hm
                          / (MAX (ir - il, 1) * relief->region.cell);
              double dz = (up[(gsize) i * rch] - dn[(gsize) i * rch]) * hm
                          / (MAX (MIN (j + 1, h - 1) - MAX (j - 1, 0), 1) * relief->region.cell);
              /* Normal of y = f(x, z): (-dx, 1, -dz), normalised. */
              double len = sqrt (dx * dx + 1 + dz * dz);
              shade = MAX (0.0, (-dx * sx + sy - dz * sz) / len);
            }
          switch (mode)
            {
            case MODE_GREY:
              o[0] = o[1] = o[2] = (guint8) lrintf (CLAMP (x, 0.f, 1.f) * 255.f);
              break;
            case MODE_RAMP:
              ramp (x, o);
              for (int c = 0; c < 3; c++)
                o[c] = (guint8) lrint (o[c] * (0.55 + 0.45 * shade));
              break;
            case MODE_HILLSHADE:
              o[0] = o[1] = o[2] = (guint8) lrint (CLAMP (0.08 + 0.92 * shade, 0, 1) * 255);
              break;
            default:
              {
                /* The value as a red mask over the relief (the terrain's
                 * when one lies upstream, else the value's own). */
                double a = CLAMP (x, 0.f, 1.f) * 0.75;
                double g = CLAMP (0.15 + 0.7 * shade, 0, 1);
                o[0] = (guint8) lrint (255 * (g * (1 - a) + 0.95 * a));
                o[1] = (guint8) lrint (255 * (g * (1 - a) + 0.20 * a));
                o[2] = (guint8) lrint (255 * (g * (1 - a) + 0.15 * a));
              }
            }
        }
    }
  bytes = g_bytes_new_take (px, (gsize) w * h * 4);
  self->texture = gdk_memory_texture_new (w, h, GDK_MEMORY_R8G8B8A8, bytes, (gsize) w * 4);
  g_bytes_unref (bytes);
  /* GSK scales the texture on the GPU: no per-frame copy or cairo resample. */
  tg_image_view_set_texture (self->area, self->texture);
  set_dots (self, v, &grid->region);
  if (v->type != TG_TYPE_POINTS)
    update_stats (self, v, channel);
  if (flat)
    tg_value_unref (flat);
}

static void
area_motion (GtkEventControllerMotion *c, double x, double y, TgViewer *self)
{
  const TgValue *v = self->value;
  int i, j;
  char buf[160];
  double u, t;

  /* Instances: read out the terrain under them. */
  if (v && v->type == TG_TYPE_POINTS)
    v = self->backdrop;
  if (!v)
    return;
  if (!tg_image_view_to_image (self->area, x, y, &u, &t))
    {
      gtk_label_set_text (self->readout, "");
      return;
    }
  i = (int) floor (u);
  j = (int) floor (t);
  if (i < 0 || j < 0 || i >= v->region.width || j >= v->region.height)
    {
      gtk_label_set_text (self->readout, "");
      return;
    }
  {
    const float *p = tg_value_row (v, j) + (gsize) i * v->channels;
    int channel = v == self->value ? shown_channel (self, v) : 0;
    double wx = tg_region_x (&v->region, i), wz = tg_region_z (&v->region, j);
    if (channel < 0)
      {
        /* Every channel's value: the layers' weights, or R G B A. */
        GString *line = g_string_new (NULL);
        g_string_printf (line, _("X %.1f m  Z %.1f m "), wx, wz);
        for (int k = 0; k < v->channels; k++)
          g_string_append_printf (line, " %.2f", p[k]);
        g_strlcpy (buf, line->str, sizeof buf);
        g_string_free (line, TRUE);
      }
    else if (v->type == TG_TYPE_HEIGHT)
      g_snprintf (buf, sizeof buf, _("X %.1f m  Z %.1f m  height %.1f m"), wx, wz,
                  p[channel] * self->world.height_m);
    else
      g_snprintf (buf, sizeof buf, _("X %.1f m  Z %.1f m  value %.3f"), wx, wz, p[channel]);
  }
  gtk_label_set_text (self->readout, buf);
}

static void
area_leave (GtkEventControllerMotion *c, TgViewer *self)
{
  gtk_label_set_text (self->readout, "");
}

static void
mode_changed (TgViewer *self)
{
  render (self);
}

static void
sun_changed (TgViewer *self)
{
  tg_viewer3d_set_sun (self->viewer3d, gtk_adjustment_get_value (self->azimuth),
                       gtk_adjustment_get_value (self->elevation));
  render (self);
}

static void
resolution_changed (TgViewer *self)
{
  g_signal_emit (self, signals[SIGNAL_RESOLUTION_CHANGED], 0);
}

void
tg_viewer_set_backdrop (TgViewer *self, TgValue *v)
{
  if (v)
    tg_value_ref (v);
  if (self->backdrop)
    tg_value_unref (self->backdrop);
  self->backdrop = v;
}

void
tg_viewer_set_value (TgViewer *self, TgValue *v, const TgWorld *world, const char *id)
{
  if (v)
    tg_value_ref (v);
  if (self->value)
    tg_value_unref (self->value);
  self->value = v;
  if (world)
    self->world = *world;
  g_free (self->id);
  self->id = g_strdup (id);
  gtk_widget_set_sensitive (GTK_WIDGET (self->pin), id || self->pinned);
  render (self);
  if (v && v->type == TG_TYPE_POINTS)
    {
      const TgPoints *p = tg_value_points (v);
      g_autofree float *rgb = proto_rgb (self, p);
      tg_viewer3d_set_proto_colours (self->viewer3d, rgb, p->n_protos);
    }
  tg_viewer3d_set_scene (self->viewer3d, v, self->backdrop, world, id);
  /* A mesh has nothing to show in 2D. */
  if (v && v->type == TG_TYPE_MESH)
    tg_viewer_set_view (self, "3d");
}

void
tg_viewer_set_view (TgViewer *self, const char *name)
{
  gtk_stack_set_visible_child_name (self->views, name);
}

int
tg_viewer_get_preview_resolution (TgViewer *self)
{
  guint k = gtk_drop_down_get_selected (self->resolution);
  return resolutions[k < G_N_ELEMENTS (resolutions) ? k : 1];
}

void
tg_viewer_set_preview_resolution (TgViewer *self, int res)
{
  for (guint k = 0; k < G_N_ELEMENTS (resolutions); k++)
    if (resolutions[k] == res)
      gtk_drop_down_set_selected (self->resolution, k);
}

void
tg_viewer_set_message (TgViewer *self, const char *message, gboolean is_error)
{
  if (!g_strcmp0 (message, self->message) && is_error == self->is_error)
    return;
  g_free (self->message);
  self->message = g_strdup (message);
  self->is_error = message && is_error;
  update_placeholder (self);
}

const char *
tg_viewer_get_message (TgViewer *self)
{
  return gtk_widget_get_visible (self->placeholder)
             ? gtk_label_get_text (GTK_LABEL (self->placeholder))
             : NULL;
}

const char *
tg_viewer_get_stats (TgViewer *self)
{
  return gtk_widget_get_visible (self->stats_box) ? gtk_label_get_text (self->stats) : NULL;
}

const char *
tg_viewer_get_node (TgViewer *self)
{
  return self->id;
}

const char *
tg_viewer_get_pinned (TgViewer *self)
{
  return self->pinned;
}

void
tg_viewer_set_pinned (TgViewer *self, const char *id)
{
  g_autofree char *tip = NULL;

  if (!g_strcmp0 (id, self->pinned))
    return;
  g_free (self->pinned);
  self->pinned = g_strdup (id);
  g_signal_handlers_block_matched (self->pin, G_SIGNAL_MATCH_DATA, 0, 0, NULL, NULL, self);
  gtk_toggle_button_set_active (self->pin, id != NULL);
  g_signal_handlers_unblock_matched (self->pin, G_SIGNAL_MATCH_DATA, 0, 0, NULL, NULL, self);
  tip = id ? g_strdup_printf (_("Pinned: the viewer keeps showing “%s”. Click to follow the "
                                "selection again"), id)
           : g_strdup (_("Keep this node in the viewer while others are selected"));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->pin), tip);
  gtk_widget_set_sensitive (GTK_WIDGET (self->pin), id || self->id);
  g_signal_emit (self, signals[SIGNAL_PIN_CHANGED], 0);
}

static void
pin_toggled (TgViewer *self, GtkToggleButton *button)
{
  tg_viewer_set_pinned (self, gtk_toggle_button_get_active (button) ? self->id : NULL);
}

GdkTexture *
tg_viewer_get_texture (TgViewer *self)
{
  return self->texture;
}

static void
tg_viewer_dispose (GObject *object)
{
  TgViewer *self = TG_VIEWER (object);

  g_clear_object (&self->texture);
  if (self->value)
    tg_value_unref (self->value);
  self->value = NULL;
  tg_viewer_set_backdrop (self, NULL);
  gtk_widget_dispose_template (GTK_WIDGET (self), TG_TYPE_VIEWER);
  /* The template's top box has no id, so the call above leaves it. */
  for (GtkWidget *c; (c = gtk_widget_get_first_child (GTK_WIDGET (self)));)
    gtk_widget_unparent (c);
  G_OBJECT_CLASS (tg_viewer_parent_class)->dispose (object);
}

static void
tg_viewer_finalize (GObject *object)
{
  g_free (TG_VIEWER (object)->id);
  g_free (TG_VIEWER (object)->message);
  g_free (TG_VIEWER (object)->pinned);
  g_strfreev (TG_VIEWER (object)->colour_names);
  g_free (TG_VIEWER (object)->colour_rgb);
  G_OBJECT_CLASS (tg_viewer_parent_class)->finalize (object);
}

static void
tg_viewer_class_init (TgViewerClass *klass)
{
  GtkWidgetClass *wc = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = tg_viewer_dispose;
  G_OBJECT_CLASS (klass)->finalize = tg_viewer_finalize;
  signals[SIGNAL_RESOLUTION_CHANGED] = g_signal_new ("resolution-changed",
                                                     G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                                     0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[SIGNAL_PIN_CHANGED] = g_signal_new ("pin-changed", G_TYPE_FROM_CLASS (klass),
                                              G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE,
                                              0);
  gtk_widget_class_set_layout_manager_type (wc, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_template_from_resource (wc, "/io/github/terrane/Terrane/tg-viewer.ui");
  gtk_widget_class_bind_template_child (wc, TgViewer, mode);
  gtk_widget_class_bind_template_child (wc, TgViewer, layer);
  gtk_widget_class_bind_template_child (wc, TgViewer, layer_names);
  gtk_widget_class_bind_template_child (wc, TgViewer, stats_box);
  gtk_widget_class_bind_template_child (wc, TgViewer, histogram);
  gtk_widget_class_bind_template_child (wc, TgViewer, stats);
  gtk_widget_class_bind_template_child (wc, TgViewer, resolution);
  gtk_widget_class_bind_template_child (wc, TgViewer, azimuth);
  gtk_widget_class_bind_template_child (wc, TgViewer, elevation);
  gtk_widget_class_bind_template_child (wc, TgViewer, readout);
  gtk_widget_class_bind_template_child (wc, TgViewer, views);
  gtk_widget_class_bind_template_child (wc, TgViewer, area);
  gtk_widget_class_bind_template_child (wc, TgViewer, placeholder);
  gtk_widget_class_bind_template_child (wc, TgViewer, pin);
  gtk_widget_class_bind_template_child (wc, TgViewer, viewer3d);
  gtk_widget_class_bind_template_callback (wc, mode_changed);
  gtk_widget_class_bind_template_callback (wc, sun_changed);
  gtk_widget_class_bind_template_callback (wc, resolution_changed);
  gtk_widget_class_bind_template_callback (wc, pin_toggled);
  gtk_widget_class_bind_template_callback (wc, area_motion);
  gtk_widget_class_bind_template_callback (wc, area_leave);
  gtk_widget_class_set_css_name (wc, "tgviewer");
}

static void
tg_viewer_init (TgViewer *self)
{
  g_type_ensure (TG_TYPE_IMAGE_VIEW);
  g_type_ensure (TG_TYPE_VIEWER3D);
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_drawing_area_set_draw_func (self->histogram, draw_histogram, self, NULL);
  tg_viewer3d_set_sun (self->viewer3d, gtk_adjustment_get_value (self->azimuth),
                       gtk_adjustment_get_value (self->elevation));
}
