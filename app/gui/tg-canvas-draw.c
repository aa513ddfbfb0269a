/* TgCanvas drawing: nodes, wires, frames and the grid with cairo, only
 * what is in view; during a move what stands still comes from a cache. */
#include "config.h"

#include "tg-canvas-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef enum
{
  LAYER_ALL,
  LAYER_STILL,  /* all but the nodes being moved and their wires */
  LAYER_MOVING, /* only those */
} Layer;

static void tg_canvas_draw (GtkWidget *widget, GtkSnapshot *snapshot);

static void
type_colour (TgPortType t, double rgb[3])
{
  static const double c[TG_TYPE_COUNT][3] = {
    [TG_TYPE_HEIGHT] = { 0.91, 0.66, 0.28 }, [TG_TYPE_MASK] = { 0.78, 0.80, 0.84 },
    [TG_TYPE_IMAGE] = { 0.90, 0.38, 0.58 },  [TG_TYPE_LAYERS] = { 0.68, 0.46, 0.92 },
    [TG_TYPE_FIELD] = { 0.32, 0.72, 0.90 },  [TG_TYPE_MESH] = { 0.38, 0.82, 0.56 },
    [TG_TYPE_POINTS] = { 0.92, 0.86, 0.36 },
  };
  memcpy (rgb, c[(int) t < TG_TYPE_COUNT ? (int) t : 0], sizeof c[0]);
}

/* A node's title colour, by category.  Selectors, Texturing, Scatter, Mesh
 * and Other keep the muted hues the canvas used to derive from their names. */
static void
category_colour (TgCategory category, double rgb[3])
{
  static const double colours[TG_CATEGORY_COUNT][3] = {
    [TG_CATEGORY_OTHER] = { 0.33, 0.51, 0.41 },
    [TG_CATEGORY_INPUT] = { 0.45, 0.40, 0.24 },
    [TG_CATEGORY_GENERATORS] = { 0.22, 0.42, 0.62 },
    [TG_CATEGORY_FILTERS] = { 0.36, 0.30, 0.55 },
    [TG_CATEGORY_MATH] = { 0.26, 0.48, 0.42 },
    [TG_CATEGORY_SELECTORS] = { 0.51, 0.49, 0.51 },
    [TG_CATEGORY_EROSION] = { 0.52, 0.36, 0.20 },
    [TG_CATEGORY_TEXTURING] = { 0.42, 0.25, 0.35 },
    [TG_CATEGORY_SCATTER] = { 0.55, 0.52, 0.53 },
    [TG_CATEGORY_FIELDS] = { 0.20, 0.46, 0.55 },
    [TG_CATEGORY_MESH] = { 0.42, 0.26, 0.41 },
    [TG_CATEGORY_OUTPUT] = { 0.55, 0.28, 0.26 },
  };

  memcpy (rgb, colours[(unsigned) category < TG_CATEGORY_COUNT ? category : TG_CATEGORY_OTHER],
          sizeof colours[0]);
}

void
tg_canvas__rounded_rect (cairo_t *cr, double x, double y, double w, double h, double r)
{
  cairo_new_sub_path (cr);
  cairo_arc (cr, x + w - r, y + r, r, -G_PI / 2, 0);
  cairo_arc (cr, x + w - r, y + h - r, r, 0, G_PI / 2);
  cairo_arc (cr, x + r, y + h - r, r, G_PI / 2, G_PI);
  cairo_arc (cr, x + r, y + r, r, G_PI, 3 * G_PI / 2);
  cairo_close_path (cr);
}

static void
draw_text (cairo_t *cr, PangoLayout *layout, const char *text, double x, double y, double w,
           int align, double r, double g, double b, double a)
{
  int tw, th;

  pango_layout_set_text (layout, text, -1);
  pango_layout_set_width (layout, w > 0 ? (int) (w * PANGO_SCALE) : -1);
  pango_layout_set_ellipsize (layout, w > 0 ? PANGO_ELLIPSIZE_END : PANGO_ELLIPSIZE_NONE);
  pango_layout_get_pixel_size (layout, &tw, &th);
  if (align > 0)
    x -= tw;
  cairo_set_source_rgba (cr, r, g, b, a);
  cairo_move_to (cr, x, y - th / 2.0);
  pango_cairo_show_layout (cr, layout);
  /* The move_to leaves a current point: the next cairo_arc would join it
   * with a line, which a stroked (hollow) port then draws. */
  cairo_new_path (cr);
}

static void
wire_path (cairo_t *cr, double x1, double y1, double x2, double y2)
{
  double dx = MAX (40.0, fabs (x2 - x1) * 0.5);

  cairo_move_to (cr, x1, y1);
  cairo_curve_to (cr, x1 + dx, y1, x2 - dx, y2, x2, y2);
}

static void
draw_wire (cairo_t *cr, double x1, double y1, double x2, double y2, TgPortType t, double alpha)
{
  double rgb[3];

  type_colour (t, rgb);
  wire_path (cr, x1, y1, x2, y2);
  cairo_set_source_rgba (cr, 0, 0, 0, 0.45 * alpha);
  cairo_set_line_width (cr, 5.0);
  cairo_stroke_preserve (cr);
  cairo_set_source_rgba (cr, rgb[0], rgb[1], rgb[2], alpha);
  cairo_set_line_width (cr, 2.4);
  cairo_stroke (cr);
}

gboolean
tg_canvas__input_is_lifted (TgCanvas *self, int n, int p)
{
  const TgGraph *g = tg_canvas__graph (self);
  const TgNodeDesc *d = tg_graph_node_desc (g, n);

  return self->lift_to && !strcmp (self->lift_to, tg_graph_node_id (g, n))
         && !strcmp (self->lift_port, d->inputs[p].name);
}

/* The type a wire being dragged carries, or -1. */
static int
drag_type (TgCanvas *self)
{
  const TgNodeDesc *d;

  if (self->drag != DRAG_WIRE_OUT && self->drag != DRAG_WIRE_IN)
    return -1;
  d = tg_graph_node_desc (tg_canvas__graph (self), self->drag_hit.node);
  return self->drag == DRAG_WIRE_OUT ? (int) d->outputs[self->drag_hit.port].type
                                     : (int) d->inputs[self->drag_hit.port].type;
}

gboolean
tg_canvas__port_accepts_drag (TgCanvas *self, int n, gboolean output, int p)
{
  const TgNodeDesc *d = tg_graph_node_desc (tg_canvas__graph (self), n);
  int t = drag_type (self);

  if (t < 0 || n == self->drag_hit.node)
    return FALSE;
  if (self->drag == DRAG_WIRE_OUT && !output)
    return tg_port_type_compatible ((TgPortType) t, d->inputs[p].type);
  if (self->drag == DRAG_WIRE_IN && output)
    return tg_port_type_compatible (d->outputs[p].type, (TgPortType) t);
  return FALSE;
}

static void
draw_port (TgCanvas *self, cairo_t *cr, double x, double y, TgPortType t, gboolean filled,
           gboolean highlight)
{
  double rgb[3];

  type_colour (t, rgb);
  if (highlight)
    {
      cairo_arc (cr, x, y, PORT_R + 4, 0, 2 * G_PI);
      cairo_set_source_rgba (cr, rgb[0], rgb[1], rgb[2], 0.35);
      cairo_fill (cr);
    }
  cairo_arc (cr, x, y, PORT_R, 0, 2 * G_PI);
  cairo_set_source_rgb (cr, 0.09, 0.09, 0.10);
  cairo_fill_preserve (cr);
  cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
  if (filled)
    cairo_fill (cr);
  else
    {
      cairo_set_line_width (cr, 2.0);
      cairo_stroke (cr);
    }
}

/* A map pin centred on (cx, cy): a white head with a dark ring and a
 * needle below it, readable on every category colour. */
static void
draw_pin_mark (cairo_t *cr, double cx, double cy)
{
  cairo_save (cr);
  cairo_set_line_width (cr, 1.6);
  cairo_set_source_rgb (cr, 0.10, 0.10, 0.12);
  cairo_move_to (cr, cx, cy - 1);
  cairo_line_to (cr, cx, cy + 7);
  cairo_stroke (cr);
  cairo_arc (cr, cx, cy - 3, 4.2, 0, 2 * G_PI);
  cairo_set_source_rgb (cr, 0.10, 0.10, 0.12);
  cairo_fill_preserve (cr);
  cairo_arc (cr, cx, cy - 3, 3.0, 0, 2 * G_PI);
  cairo_set_source_rgb (cr, 1.0, 1.0, 1.0);
  cairo_fill (cr);
  cairo_restore (cr);
}

static void
draw_node (TgCanvas *self, cairo_t *cr, PangoLayout *layout, PangoFontDescription *fd, int n)
{
  const TgGraph *g = tg_canvas__graph (self);
  const TgNodeDesc *d = tg_graph_node_desc (g, n);
  const char *id = tg_graph_node_id (g, n);
  NodeState *st = g_hash_table_lookup (self->states, id);
  gboolean selected = g_hash_table_contains (self->selection, id);
  gboolean active = selected && !g_strcmp0 (self->active, id);
  double x, y, h = node_height (d), cat[3];
  int rows = MAX (d->n_inputs, d->n_outputs);
  gboolean pinned = self->doc && tg_document_get_node_ui (self->doc, n)->viewer_pin;
  int title_w = NODE_W - (pinned ? 54 : 40);

  tg_canvas__node_pos (self, n, &x, &y);
  category_colour (d->category, cat);
  if (tg_graph_node_bypass (g, n))
    cairo_push_group (cr);

  /* Shadow, body, header. */
  tg_canvas__rounded_rect (cr, x + 1, y + 4, NODE_W, h, 7);
  cairo_set_source_rgba (cr, 0, 0, 0, 0.35);
  cairo_fill (cr);
  tg_canvas__rounded_rect (cr, x, y, NODE_W, h, 7);
  cairo_set_source_rgb (cr, 0.17, 0.18, 0.20);
  cairo_fill (cr);
  cairo_save (cr);
  tg_canvas__rounded_rect (cr, x, y, NODE_W, h, 7);
  cairo_clip (cr);
  cairo_rectangle (cr, x, y, NODE_W, HEADER_H);
  cairo_set_source_rgb (cr, cat[0], cat[1], cat[2]);
  cairo_fill (cr);
  if (st && st->state == TG_NODE_RUNNING)
    {
      cairo_rectangle (cr, x, y + HEADER_H - 3, NODE_W * CLAMP (st->fraction, 0.02, 1.0), 3);
      cairo_set_source_rgb (cr, 0.40, 0.70, 1.0);
      cairo_fill (cr);
    }
  cairo_restore (cr);
  tg_canvas__rounded_rect (cr, x, y, NODE_W, h, 7);
  if (selected)
    {
      cairo_set_line_width (cr, active ? 2.5 : 2.0);
      cairo_set_source_rgb (cr, 0.96, 0.62, 0.20);
      if (!active)
        cairo_set_source_rgb (cr, 0.85, 0.55, 0.22);
    }
  else
    {
      cairo_set_line_width (cr, 1.0);
      cairo_set_source_rgb (cr, 0.06, 0.06, 0.07);
    }
  cairo_stroke (cr);

  /* Title: the id, then the type's label, dimmer. */
  {
    int idw, th;
    pango_font_description_set_weight (fd, PANGO_WEIGHT_BOLD);
    pango_font_description_set_absolute_size (fd, 12 * PANGO_SCALE);
    pango_layout_set_font_description (layout, fd);
    draw_text (cr, layout, id, x + 9, y + HEADER_H / 2, title_w, 0, 1, 1, 1, 0.95);
    pango_layout_get_pixel_size (layout, &idw, &th);
    pango_font_description_set_weight (fd, PANGO_WEIGHT_NORMAL);
    pango_font_description_set_absolute_size (fd, 10 * PANGO_SCALE);
    pango_layout_set_font_description (layout, fd);
    if (idw < title_w - 20)
      draw_text (cr, layout, g_dgettext (GETTEXT_PACKAGE, d->label), x + 9 + idw + 6,
                 y + HEADER_H / 2 + 1, title_w + 10 - idw - 15, 0, 1, 1, 1, 0.6);
  }

  /* The viewer pin (Houdini's display flag): a map pin left of the badge. */
  if (pinned)
    draw_pin_mark (cr, x + NODE_W - 32, y + HEADER_H / 2);

  /* Error or warning badge at the header's right end. */
  if (st)
    tg_node_draw_badge (cr, layout, fd, x + NODE_W - 14, y + HEADER_H / 2, st->state, st->message);

  /* Ports with their names. */
  pango_font_description_set_weight (fd, PANGO_WEIGHT_NORMAL);
  pango_font_description_set_absolute_size (fd, 10.5 * PANGO_SCALE);
  pango_layout_set_font_description (layout, fd);
  for (int p = 0; p < d->n_inputs; p++)
    {
      double px, py;
      gboolean linked = tg_graph_input_link (g, n, p) >= 0 && !tg_canvas__input_is_lifted (self, n, p);
      tg_canvas__port_pos (self, n, FALSE, p, &px, &py);
      draw_port (self, cr, px, py, d->inputs[p].type, linked || !d->inputs[p].optional,
                 tg_canvas__port_accepts_drag (self, n, FALSE, p));
      draw_text (cr, layout, g_dgettext (GETTEXT_PACKAGE, d->inputs[p].label), px + 11, py,
                 NODE_W / 2 - 14, 0, 0.86, 0.87, 0.90, d->inputs[p].optional ? 0.6 : 0.9);
    }
  for (int p = 0; p < d->n_outputs; p++)
    {
      double px, py;
      tg_canvas__port_pos (self, n, TRUE, p, &px, &py);
      draw_port (self, cr, px, py, d->outputs[p].type, TRUE,
                 tg_canvas__port_accepts_drag (self, n, TRUE, p));
      draw_text (cr, layout, g_dgettext (GETTEXT_PACKAGE, d->outputs[p].label), px - 11, py,
                 -1, 1, 0.86, 0.87, 0.90, 0.9);
    }

  /* Thumbnail of the output (an export node shows what it writes). */
  if (node_has_thumb (d))
    {
      double ty = y + HEADER_H + 6 + rows * PORT_H + 4;
      double tx = x + (NODE_W - THUMB) / 2;
      cairo_surface_t *s = g_hash_table_lookup (self->thumbs, id);
      if (!s && d->n_outputs == 0)
        {
          int l = tg_graph_input_link (g, n, 0);
          if (l >= 0)
            s = g_hash_table_lookup (self->thumbs,
                                     tg_graph_node_id (g, tg_graph_link (g, l)->from_node));
        }
      tg_canvas__rounded_rect (cr, tx, ty, THUMB, THUMB, 3);
      cairo_set_source_rgb (cr, 0.10, 0.10, 0.11);
      cairo_fill (cr);
      if (s)
        {
          double sw = cairo_image_surface_get_width (s), sh = cairo_image_surface_get_height (s);
          double sc = THUMB / MAX (sw, sh);
          cairo_save (cr);
          tg_canvas__rounded_rect (cr, tx, ty, THUMB, THUMB, 3);
          cairo_clip (cr);
          cairo_translate (cr, tx + (THUMB - sw * sc) / 2, ty + (THUMB - sh * sc) / 2);
          cairo_scale (cr, sc, sc);
          cairo_set_source_surface (cr, s, 0, 0);
          cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_GOOD);
          cairo_paint_with_alpha (cr, st && st->state == TG_NODE_SKIPPED ? 0.3 : 1.0);
          cairo_restore (cr);
        }
      tg_canvas__rounded_rect (cr, tx, ty, THUMB, THUMB, 3);
      cairo_set_line_width (cr, 1);
      cairo_set_source_rgba (cr, 1, 1, 1, 0.08);
      cairo_stroke (cr);
    }
  if (tg_graph_node_bypass (g, n))
    {
      double iy = 0, oy = 0, px;
      int k = tg_node_desc_bypass_input (d);
      if (k >= 0)
        tg_canvas__port_pos (self, n, FALSE, k, &px, &iy);
      if (d->n_outputs > 0)
        tg_canvas__port_pos (self, n, TRUE, 0, &px, &oy);
      tg_node_draw_bypass (cr, x, y, NODE_W, iy, oy);
    }
}

static void
draw_frames (TgCanvas *self, cairo_t *cr, PangoLayout *layout, PangoFontDescription *fd)
{
  for (int k = 0; k < self->n_frames; k++)
    {
      const TgFrame *f = &self->frames[k];
      double x, y, w, h;
      const double *c = f->rgb;
      gboolean sel = k == self->frame_sel;

      tg_canvas__frame_box (self, k, &x, &y, &w, &h);
      tg_canvas__rounded_rect (cr, x, y, w, h, 8);
      cairo_set_source_rgba (cr, c[0], c[1], c[2], 0.16);
      cairo_fill (cr);
      cairo_save (cr);
      tg_canvas__rounded_rect (cr, x, y, w, h, 8);
      cairo_clip (cr);
      cairo_rectangle (cr, x, y, w, FRAME_HEADER);
      cairo_set_source_rgba (cr, c[0], c[1], c[2], 0.55);
      cairo_fill (cr);
      cairo_restore (cr);
      tg_canvas__rounded_rect (cr, x, y, w, h, 8);
      cairo_set_source_rgba (cr, c[0], c[1], c[2], sel ? 1.0 : 0.6);
      cairo_set_line_width (cr, sel ? 2.5 : 1.2);
      cairo_stroke (cr);
      /* The grip: three short diagonals in the corner. */
      cairo_set_line_width (cr, 1.2);
      cairo_set_source_rgba (cr, 1, 1, 1, 0.35);
      for (int g = 1; g <= 3; g++)
        {
          cairo_move_to (cr, x + w - 4 * g - 2, y + h - 3);
          cairo_line_to (cr, x + w - 3, y + h - 4 * g - 2);
        }
      cairo_stroke (cr);
      pango_font_description_set_weight (fd, PANGO_WEIGHT_BOLD);
      pango_font_description_set_absolute_size (fd, 14 * PANGO_SCALE);
      pango_layout_set_font_description (layout, fd);
      draw_text (cr, layout, f->title && *f->title ? f->title : _("Frame"), x + 12,
                 y + FRAME_HEADER / 2, w - 24, 0, 1, 1, 1, 0.92);
    }
}

static void
draw_grid (TgCanvas *self, cairo_t *cr, double w, double h)
{
  double x0, y0, x1, y1;

  cairo_set_source_rgb (cr, 0.118, 0.122, 0.133);
  cairo_paint (cr);
  tg_canvas__to_canvas (self, 0, 0, &x0, &y0);
  tg_canvas__to_canvas (self, w, h, &x1, &y1);
  for (int level = 0; level < 2; level++)
    {
      double step = level ? 120 : 24;
      if (!level && self->zoom < 0.5)
        continue;
      cairo_set_source_rgba (cr, 1, 1, 1, level ? 0.06 : 0.025);
      cairo_set_line_width (cr, 1.0 / self->zoom);
      for (double gx = floor (x0 / step) * step; gx <= x1; gx += step)
        {
          cairo_move_to (cr, gx, y0);
          cairo_line_to (cr, gx, y1);
        }
      for (double gy = floor (y0 / step) * step; gy <= y1; gy += step)
        {
          cairo_move_to (cr, x0, gy);
          cairo_line_to (cr, x1, gy);
        }
      cairo_stroke (cr);
    }
}

/* Whether the box (X, Y, W, H) in canvas units meets AREA (widget
 * coordinates). */
static gboolean
visible (TgCanvas *self, const graphene_rect_t *area, double x, double y, double w, double h)
{
  double x0, y0, x1, y1;

  tg_canvas__to_canvas (self, area->origin.x, area->origin.y, &x0, &y0);
  tg_canvas__to_canvas (self, area->origin.x + area->size.width,
                        area->origin.y + area->size.height, &x1, &y1);
  return x + w >= x0 && x <= x1 && y + h >= y0 && y <= y1;
}

/* The box in canvas units that link LK's wire stays inside: the curve
 * stays inside its end and control points (wire_path). */
static void
wire_box (TgCanvas *self, const TgLink *lk, double box[4])
{
  double x1, y1, x2, y2, dx;

  tg_canvas__port_pos (self, lk->from_node, TRUE, lk->from_port, &x1, &y1);
  tg_canvas__port_pos (self, lk->to_node, FALSE, lk->to_port, &x2, &y2);
  dx = MAX (40.0, fabs (x2 - x1) * 0.5);
  box[0] = MIN (x1, x2 - dx) - 4;
  box[1] = MIN (y1, y2) - 4;
  box[2] = MAX (x1 + dx, x2) - MIN (x1, x2 - dx) + 8;
  box[3] = fabs (y2 - y1) + 8;
}

static gboolean
link_moves (TgCanvas *self, const TgLink *lk)
{
  const TgGraph *g = tg_canvas__graph (self);

  return tg_canvas__is_dragged (self, tg_graph_node_id (g, lk->from_node))
         || tg_canvas__is_dragged (self, tg_graph_node_id (g, lk->to_node));
}

/* Frames, wires and nodes of LAYER, those outside AREA (widget
 * coordinates) left out. */
static void
draw_scene (TgCanvas *self, cairo_t *cr, PangoLayout *layout, PangoFontDescription *fd,
            const graphene_rect_t *area, Layer layer)
{
  const TgGraph *g = tg_canvas__graph (self);
  /* Port circles and shadows reach a little outside a node's box. */
  const double m = PORT_R + 8;

  pango_layout_set_font_description (layout, fd);
  if (layer != LAYER_MOVING)
    draw_frames (self, cr, layout, fd);
  /* Wires under the nodes. */
  for (int l = 0; l < tg_graph_n_links (g); l++)
    {
      const TgLink *lk = tg_graph_link (g, l);
      const TgNodeDesc *d = tg_graph_node_desc (g, lk->from_node);
      double x1, y1, x2, y2, box[4];
      if (tg_canvas__input_is_lifted (self, lk->to_node, lk->to_port))
        continue;
      if (layer != LAYER_ALL && link_moves (self, lk) != (layer == LAYER_MOVING))
        continue;
      wire_box (self, lk, box);
      if (!visible (self, area, box[0], box[1], box[2], box[3]))
        continue;
      tg_canvas__port_pos (self, lk->from_node, TRUE, lk->from_port, &x1, &y1);
      tg_canvas__port_pos (self, lk->to_node, FALSE, lk->to_port, &x2, &y2);
      draw_wire (cr, x1, y1, x2, y2, d->outputs[lk->from_port].type, 0.95);
    }
  for (int n = 0; n < tg_graph_n_nodes (g); n++)
    {
      double x, y;
      if (layer != LAYER_ALL
          && tg_canvas__is_dragged (self, tg_graph_node_id (g, n)) != (layer == LAYER_MOVING))
        continue;
      tg_canvas__node_pos (self, n, &x, &y);
      if (visible (self, area, x - m, y - m, NODE_W + 2 * m,
                   node_height (tg_graph_node_desc (g, n)) + 2 * m))
        draw_node (self, cr, layout, fd, n);
    }
}

/* Grows the extent E (x0, y0, x1, y1) to take in the box (X, Y, W, H). */
static void
grow (double e[4], double x, double y, double w, double h)
{
  e[0] = MIN (e[0], x);
  e[1] = MIN (e[1], y);
  e[2] = MAX (e[2], x + w);
  e[3] = MAX (e[3], y + h);
}

/* Where the moving nodes and their wires are, in whole widget pixels
 * inside the W x H widget; FALSE when none of it is in view. */
static gboolean
moving_area (TgCanvas *self, double w, double h, graphene_rect_t *out)
{
  const TgGraph *g = tg_canvas__graph (self);
  const double m = PORT_R + 8;
  double e[4] = { G_MAXDOUBLE, G_MAXDOUBLE, -G_MAXDOUBLE, -G_MAXDOUBLE }, x0, y0, x1, y1;

  for (int l = 0; l < tg_graph_n_links (g); l++)
    {
      const TgLink *lk = tg_graph_link (g, l);
      double box[4];
      if (!link_moves (self, lk))
        continue;
      wire_box (self, lk, box);
      grow (e, box[0], box[1], box[2], box[3]);
    }
  for (int n = 0; n < tg_graph_n_nodes (g); n++)
    {
      double x, y;
      if (!tg_canvas__is_dragged (self, tg_graph_node_id (g, n)))
        continue;
      tg_canvas__node_pos (self, n, &x, &y);
      grow (e, x - m, y - m, NODE_W + 2 * m, node_height (tg_graph_node_desc (g, n)) + 2 * m);
    }
  /* To widget pixels, clipped to the widget. */
  x0 = MAX (floor (e[0] * self->zoom + self->off_x) - 1, 0);
  y0 = MAX (floor (e[1] * self->zoom + self->off_y) - 1, 0);
  x1 = MIN (ceil (e[2] * self->zoom + self->off_x) + 1, ceil (w));
  y1 = MIN (ceil (e[3] * self->zoom + self->off_y) + 1, ceil (h));
  if (x1 <= x0 || y1 <= y0)
    return FALSE;
  graphene_rect_init (out, x0, y0, x1 - x0, y1 - y0);
  return TRUE;
}

void
tg_canvas__drop_cache (TgCanvas *self)
{
  g_clear_pointer (&self->cache, cairo_surface_destroy);
  g_clear_pointer (&self->cache_node, gsk_render_node_unref);
  g_clear_pointer (&self->cache_dirty, cairo_region_destroy);
}

/* The box (X, Y, W, H) in canvas units is to be drawn again in the move
 * cache. */
void
tg_canvas__damage_cache (TgCanvas *self, double x, double y, double w, double h)
{
  cairo_rectangle_int_t r;

  if (!self->cache)
    return;
  r.x = (int) floor (x * self->zoom + self->off_x);
  r.y = (int) floor (y * self->zoom + self->off_y);
  r.width = (int) ceil ((x + w) * self->zoom + self->off_x) - r.x;
  r.height = (int) ceil ((y + h) * self->zoom + self->off_y) - r.y;
  /* Out of view is out of the cache: nothing to repair (and each repaired
   * rectangle walks the graph). */
  if (!gdk_rectangle_intersect (&r, &(GdkRectangle) { 0, 0, (int) ceil (self->cache_view[3]),
                                                      (int) ceil (self->cache_view[4]) },
                                &r))
    return;
  if (!self->cache_dirty)
    self->cache_dirty = cairo_region_create ();
  cairo_region_union_rectangle (self->cache_dirty, &r);
}

/* Draws the still layer into the cache, within AREA (widget coordinates). */
static void
draw_cache (TgCanvas *self, PangoFontDescription *fd, const graphene_rect_t *area)
{
  cairo_t *cc = cairo_create (self->cache);
  PangoLayout *layout;

  cairo_rectangle (cc, area->origin.x, area->origin.y, area->size.width, area->size.height);
  cairo_clip (cc);
  cairo_translate (cc, self->off_x, self->off_y);
  cairo_scale (cc, self->zoom, self->zoom);
  draw_grid (self, cc, self->cache_view[3], self->cache_view[4]);
  layout = pango_cairo_create_layout (cc);
  draw_scene (self, cc, layout, fd, area, LAYER_STILL);
  g_object_unref (layout);
  cairo_destroy (cc);
}

/* The move cache, drawn or repaired as needed, as a render node. */
static GskRenderNode *
still_node (TgCanvas *self, PangoFontDescription *fd, double w, double h)
{
  int scale = gtk_widget_get_scale_factor (GTK_WIDGET (self));
  const double view[5] = { self->off_x, self->off_y, self->zoom, w, h };
  cairo_t *cr;

  /* A scroll zooms, a resize changes the view: draw it all again. */
  if (self->cache && memcmp (view, self->cache_view, sizeof view))
    tg_canvas__drop_cache (self);
  if (!self->cache)
    {
      self->cache = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, (int) ceil (w) * scale,
                                                (int) ceil (h) * scale);
      cairo_surface_set_device_scale (self->cache, scale, scale);
      memcpy (self->cache_view, view, sizeof view);
      draw_cache (self, fd, &GRAPHENE_RECT_INIT (0, 0, w, h));
    }
  else if (self->cache_dirty)
    {
      for (int k = 0; k < cairo_region_num_rectangles (self->cache_dirty); k++)
        {
          cairo_rectangle_int_t r;
          cairo_region_get_rectangle (self->cache_dirty, k, &r);
          draw_cache (self, fd, &GRAPHENE_RECT_INIT (r.x, r.y, r.width, r.height));
        }
      g_clear_pointer (&self->cache_dirty, cairo_region_destroy);
      g_clear_pointer (&self->cache_node, gsk_render_node_unref);
    }
  if (!self->cache_node)
    {
      /* Not a GdkTexture: the cairo renderer would convert it pixel by
       * pixel each frame (GTK 4.8). */
      self->cache_node = gsk_cairo_node_new (&GRAPHENE_RECT_INIT (0, 0, w, h));
      cr = gsk_cairo_node_get_draw_context (self->cache_node);
      cairo_set_source_surface (cr, self->cache, 0, 0);
      cairo_paint (cr);
      cairo_destroy (cr);
    }
  return self->cache_node;
}

static double
thread_cpu_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* With TERRANE_FRAME_LOG=FILE, each frame appends "frame TIME_US DRAG
 * WALL_MS CPU_MS": when it was drawn, whether nodes were being moved, and
 * what drawing the canvas took (tests/bench/bench_canvas_drag.sh), and a
 * "paint" line with the same fields for the whole frame; a drag's press
 * and release are logged too. */
static FILE *
frame_log (void)
{
  static FILE *log;
  static gboolean checked;

  if (!checked)
    {
      const char *path = g_getenv ("TERRANE_FRAME_LOG");
      checked = TRUE;
      log = path ? fopen (path, "w") : NULL;
    }
  return log;
}

/* In the frame log: "EVENT TIME_US" (press, release of a drag). */
void
tg_canvas__log_event (const char *event)
{
  FILE *log = frame_log ();

  if (log)
    {
      fprintf (log, "%s %" G_GINT64_FORMAT "\n", event, g_get_monotonic_time ());
      fflush (log);
    }
}

/* The whole frame as the window's frame clock runs it: from the events
 * (a drag's motion) through layout, snapshots and GTK's renderer to the
 * end of the paint: "paint TIME_US DRAG WALL_MS CPU_MS", CPU being the
 * main thread's (llvmpipe rasterises in threads of its own). */
static gint64 paint_t0;
static double paint_c0;

static void
on_flush_events (GdkFrameClock *clock, TgCanvas *self)
{
  paint_t0 = g_get_monotonic_time ();
  paint_c0 = thread_cpu_ms ();
}

static void
on_after_paint (GdkFrameClock *clock, TgCanvas *self)
{
  FILE *log = frame_log ();

  if (!paint_t0)
    return;
  fprintf (log, "paint %" G_GINT64_FORMAT " %d %.3f %.3f\n", paint_t0, self->drag == DRAG_MOVE,
           (g_get_monotonic_time () - paint_t0) / 1000.0, thread_cpu_ms () - paint_c0);
  fflush (log);
  paint_t0 = 0;
}

void
tg_canvas__snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  FILE *log = frame_log ();
  static GdkFrameClock *logged;
  gint64 t0;
  double c0;

  if (!log)
    {
      tg_canvas_draw (widget, snapshot);
      return;
    }
  if (!logged && gtk_widget_get_frame_clock (widget))
    {
      logged = gtk_widget_get_frame_clock (widget);
      fprintf (log, "renderer %s\n",
               G_OBJECT_TYPE_NAME (gtk_native_get_renderer (gtk_widget_get_native (widget))));
      g_signal_connect_object (logged, "flush-events", G_CALLBACK (on_flush_events), widget, 0);
      g_signal_connect_object (logged, "after-paint", G_CALLBACK (on_after_paint), widget, 0);
    }
  t0 = g_get_monotonic_time ();
  c0 = thread_cpu_ms ();
  tg_canvas_draw (widget, snapshot);
  fprintf (log, "frame %" G_GINT64_FORMAT " %d %.3f %.3f\n", t0,
           TG_CANVAS (widget)->drag == DRAG_MOVE, (g_get_monotonic_time () - t0) / 1000.0,
           thread_cpu_ms () - c0);
  fflush (log);
}

static void
tg_canvas_draw (GtkWidget *widget, GtkSnapshot *snapshot)
{
  TgCanvas *self = TG_CANVAS (widget);
  double w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  const TgGraph *g;
  cairo_t *cr;
  PangoLayout *layout;
  PangoFontDescription *fd;

  if (!self->doc)
    {
      cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
      cairo_translate (cr, self->off_x, self->off_y);
      cairo_scale (cr, self->zoom, self->zoom);
      draw_grid (self, cr, w, h);
      cairo_destroy (cr);
      return;
    }
  g = tg_canvas__graph (self);
  fd = pango_font_description_from_string ("Sans 10");
  if (self->drag == DRAG_MOVE)
    {
      /* While nodes move, all else stays still: one node drawn once and
       * appended each frame, and on it only the box of what moves is drawn
       * afresh, so GTK's renderer has a small picture to draw. */
      graphene_rect_t area;
      gtk_snapshot_append_node (snapshot, still_node (self, fd, w, h));
      if (!moving_area (self, w, h, &area))
        {
          pango_font_description_free (fd);
          return;
        }
      cr = gtk_snapshot_append_cairo (snapshot, &area);
      cairo_translate (cr, self->off_x, self->off_y);
      cairo_scale (cr, self->zoom, self->zoom);
      layout = pango_cairo_create_layout (cr);
      draw_scene (self, cr, layout, fd, &area, LAYER_MOVING);
    }
  else
    {
      tg_canvas__drop_cache (self);
      cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
      cairo_translate (cr, self->off_x, self->off_y);
      cairo_scale (cr, self->zoom, self->zoom);
      draw_grid (self, cr, w, h);
      layout = pango_cairo_create_layout (cr);
      draw_scene (self, cr, layout, fd, &GRAPHENE_RECT_INIT (0, 0, w, h), LAYER_ALL);
    }
  pango_layout_set_font_description (layout, fd);

  /* What a drag is drawing. */
  if (self->drag == DRAG_WIRE_OUT || self->drag == DRAG_WIRE_IN)
    {
      double px, py, cx, cy;
      tg_canvas__port_pos (self, self->drag_hit.node, self->drag == DRAG_WIRE_OUT, self->drag_hit.port, &px,
                &py);
      tg_canvas__to_canvas (self, self->pointer_x, self->pointer_y, &cx, &cy);
      if (self->drag == DRAG_WIRE_OUT)
        draw_wire (cr, px, py, cx, cy, (TgPortType) drag_type (self), 0.8);
      else
        draw_wire (cr, cx, cy, px, py, (TgPortType) drag_type (self), 0.8);
    }
  else if (self->wire_node)
    {
      /* A dropped wire waiting for the add-node popover's choice. */
      int n = tg_graph_find_node (g, self->wire_node), p;
      double px, py;
      if (n >= 0 && tg_document_find_port (self->doc, self->wire_node, self->wire_port,
                                           self->wire_from_output, NULL, &p))
        {
          tg_canvas__port_pos (self, n, self->wire_from_output, p, &px, &py);
          if (self->wire_from_output)
            draw_wire (cr, px, py, self->add_x, self->add_y, self->wire_type, 0.8);
          else
            draw_wire (cr, self->add_x, self->add_y, px, py, self->wire_type, 0.8);
        }
    }
  else if (self->drag == DRAG_RUBBER)
    {
      double x0, y0, x1, y1;
      tg_canvas__to_canvas (self, self->drag_x0, self->drag_y0, &x0, &y0);
      tg_canvas__to_canvas (self, self->drag_x0 + self->drag_dx, self->drag_y0 + self->drag_dy, &x1, &y1);
      cairo_rectangle (cr, MIN (x0, x1), MIN (y0, y1), fabs (x1 - x0), fabs (y1 - y0));
      cairo_set_source_rgba (cr, 0.96, 0.62, 0.20, 0.12);
      cairo_fill_preserve (cr);
      cairo_set_source_rgba (cr, 0.96, 0.62, 0.20, 0.7);
      cairo_set_line_width (cr, 1 / self->zoom);
      cairo_stroke (cr);
    }

  if (tg_graph_n_nodes (g) == 0)
    {
      cairo_identity_matrix (cr);
      pango_font_description_set_absolute_size (fd, 15 * PANGO_SCALE);
      pango_layout_set_font_description (layout, fd);
      pango_layout_set_alignment (layout, PANGO_ALIGN_CENTER);
      draw_text (cr, layout, _("Press Tab or right-click to add a node"), 0, h / 2, w, 0, 1, 1,
                 1, 0.45);
    }
  pango_font_description_free (fd);
  g_object_unref (layout);
  cairo_destroy (cr);
}
