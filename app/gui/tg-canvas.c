/* TgCanvas: draws the graph and turns gestures into document commands.
 *
 * Everything is drawn with cairo in canvas units (one unit is one pixel
 * at zoom 1), under a pan/zoom transform, so text and wires scale with
 * the view as in Blender's and Houdini's editors.  The canvas is always
 * dark, like the 2D viewer, whatever the GTK theme: thumbnails and wire
 * colours read best on a dark ground.  Node positions come from the
 * document on every frame; during a move drag the dragged nodes are drawn
 * offset and the document gets one move command on release.
 */
#include "config.h"

#include "tg-canvas.h"
#include "tg-canvas-geometry.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NODE_W TG_CANVAS_NODE_W
#define HEADER_H TG_CANVAS_HEADER_H
#define PORT_H TG_CANVAS_PORT_H
#define THUMB TG_CANVAS_THUMB
#define PORT_R 5.0
#define ZOOM_MIN 0.2
#define ZOOM_MAX 3.0
#define FRAME_HEADER 30.0
#define FRAME_GRIP 16.0

static const guint32 frame_palette[] = {
  0x4a6fa5, 0x3f8f8a, 0x5a8a3c, 0x8a853c, 0xb0703a, 0xa84a4a, 0x7a5aa5, 0x6a6d73,
};

#define HIT_NONE TG_CANVAS_HIT_NONE
#define HIT_NODE TG_CANVAS_HIT_NODE
#define HIT_INPUT TG_CANVAS_HIT_INPUT
#define HIT_OUTPUT TG_CANVAS_HIT_OUTPUT
#define HIT_FRAME TG_CANVAS_HIT_FRAME
#define HIT_FRAME_RESIZE TG_CANVAS_HIT_FRAME_RESIZE
typedef TgCanvasHit Hit;

typedef enum
{
  DRAG_NONE,
  DRAG_PAN,
  DRAG_MOVE,
  DRAG_WIRE_OUT, /* from an output (or a link lifted off an input) towards an input */
  DRAG_WIRE_IN,  /* from an unlinked input towards an output */
  DRAG_RUBBER,
  DRAG_FRAME_MOVE,
  DRAG_FRAME_RESIZE,
} DragKind;

typedef struct
{
  int state;
  char *message;
  char *details;
  double fraction;
} NodeState;

struct _TgCanvas
{
  GtkWidget parent_instance;

  GtkPopover *add_popover;
  GtkSearchEntry *add_search;
  GtkListBox *add_list;
  GtkPopover *rename_popover;
  GtkEntry *rename_entry;

  TgDocument *doc;
  gulong changed_id, renamed_id;

  double off_x, off_y, zoom;
  /* The graph stays fitted to the canvas as it is resized until the user
   * pans or zooms; fitted_w/h is the size it was last fitted to. */
  gboolean view_user;
  int fitted_w, fitted_h;
  double pointer_x, pointer_y; /* widget coordinates */
  gboolean pointer_in;
  gboolean space_down;

  GHashTable *selection; /* id -> id */
  char *active;
  GHashTable *thumbs;    /* id -> cairo_surface_t */
  GHashTable *states;    /* id -> NodeState */

  DragKind drag;
  double drag_x0, drag_y0; /* widget coordinates at the start */
  double drag_dx, drag_dy; /* offset so far, widget units */
  Hit drag_hit;
  char *lift_to, *lift_port; /* a link lifted off this input */
  gboolean drag_moved;
  gboolean press_was_selected;
  GdkModifierType drag_mods;
  double add_x, add_y;     /* canvas position for the add-node popover */
  /* A wire dropped on empty canvas: the add-node popover offers the nodes
   * it fits, and the chosen one is wired to this port. */
  char *wire_node, *wire_port;
  gboolean wire_from_output;
  TgPortType wire_type;
  char *renaming;          /* the node the rename popover edits */

  /* Frames (from the document, refreshed on change). */
  GtkPopover *frame_popover;
  GtkEntry *frame_entry;
  GtkBox *frame_colours;
  TgFrame *frames;
  int n_frames;
  int frame_sel;           /* selected frame, or -1 */
  int frame_editing;       /* the frame the frame popover edits, or -1 */
  GHashTable *frame_nodes; /* ids moving with a dragged frame */

  cairo_surface_t *cache;  /* during a move: everything but what moves */
};

enum
{
  SIGNAL_SELECTION_CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (TgCanvas, tg_canvas, GTK_TYPE_WIDGET)

/* --- colours --------------------------------------------------------------- */

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

/* --- geometry -------------------------------------------------------------- */

static const TgGraph *
graph (TgCanvas *self)
{
  return tg_document_get_graph (self->doc);
}

#define node_has_thumb tg_canvas_node_has_thumb
#define node_height tg_canvas_node_height

static gboolean
is_dragged (TgCanvas *self, const char *id)
{
  return (self->drag == DRAG_MOVE && g_hash_table_contains (self->selection, id))
         || (self->drag == DRAG_FRAME_MOVE && g_hash_table_contains (self->frame_nodes, id));
}

/* Frame K's box in canvas units, including a drag in progress. */
static void
frame_box (TgCanvas *self, int k, double *x, double *y, double *w, double *h)
{
  const TgFrame *f = &self->frames[k];

  *x = f->x;
  *y = f->y;
  *w = f->w;
  *h = f->h;
  if (k != self->drag_hit.node)
    return;
  if (self->drag == DRAG_FRAME_MOVE)
    {
      *x += self->drag_dx / self->zoom;
      *y += self->drag_dy / self->zoom;
    }
  else if (self->drag == DRAG_FRAME_RESIZE)
    {
      *w = MAX (*w + self->drag_dx / self->zoom, 120);
      *h = MAX (*h + self->drag_dy / self->zoom, 80);
    }
}

/* Top-left of node N in canvas units, including a move in progress. */
static void
node_pos (TgCanvas *self, int n, double *x, double *y)
{
  tg_document_get_position_at (self->doc, n, x, y);
  if (self->drag != DRAG_NONE && is_dragged (self, tg_graph_node_id (graph (self), n)))
    {
      *x += self->drag_dx / self->zoom;
      *y += self->drag_dy / self->zoom;
    }
}

static void
port_pos (TgCanvas *self, int n, gboolean output, int port, double *x, double *y)
{
  node_pos (self, n, x, y);
  if (output)
    *x += NODE_W;
  *y += HEADER_H + 6 + port * PORT_H + PORT_H / 2;
}

static void
to_canvas (TgCanvas *self, double wx, double wy, double *cx, double *cy)
{
  *cx = (wx - self->off_x) / self->zoom;
  *cy = (wy - self->off_y) / self->zoom;
}

static Hit
hit_test (TgCanvas *self, double wx, double wy)
{
  Hit h = { HIT_NONE, -1, -1 };
  GHashTable *moving = NULL;
  double cx, cy;

  if (!self->doc)
    return h;
  to_canvas (self, wx, wy, &cx, &cy);
  if (self->drag == DRAG_MOVE)
    moving = self->selection;
  else if (self->drag == DRAG_FRAME_MOVE)
    moving = self->frame_nodes;
  h = tg_canvas_hit_nodes (self->doc, cx, cy, moving, self->drag_dx / self->zoom,
                           self->drag_dy / self->zoom);
  if (h.kind != HIT_NONE)
    return h;
  /* Frames lie under the nodes: their title band and corner grip take hold. */
  for (int k = self->n_frames - 1; k >= 0; k--)
    {
      double x, y, w, fh;
      frame_box (self, k, &x, &y, &w, &fh);
      if (cx >= x + w - FRAME_GRIP && cx <= x + w && cy >= y + fh - FRAME_GRIP && cy <= y + fh)
        return (Hit) { HIT_FRAME_RESIZE, k, -1 };
      if (cx >= x && cx <= x + w && cy >= y && cy <= y + FRAME_HEADER)
        return (Hit) { HIT_FRAME, k, -1 };
    }
  return h;
}

/* --- drawing --------------------------------------------------------------- */

static void
rounded_rect (cairo_t *cr, double x, double y, double w, double h, double r)
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

static gboolean
input_is_lifted (TgCanvas *self, int n, int p)
{
  const TgGraph *g = graph (self);
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
  d = tg_graph_node_desc (graph (self), self->drag_hit.node);
  return self->drag == DRAG_WIRE_OUT ? (int) d->outputs[self->drag_hit.port].type
                                     : (int) d->inputs[self->drag_hit.port].type;
}

static gboolean
port_accepts_drag (TgCanvas *self, int n, gboolean output, int p)
{
  const TgNodeDesc *d = tg_graph_node_desc (graph (self), n);
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

static void
draw_node (TgCanvas *self, cairo_t *cr, PangoLayout *layout, PangoFontDescription *fd, int n)
{
  const TgGraph *g = graph (self);
  const TgNodeDesc *d = tg_graph_node_desc (g, n);
  const char *id = tg_graph_node_id (g, n);
  NodeState *st = g_hash_table_lookup (self->states, id);
  gboolean selected = g_hash_table_contains (self->selection, id);
  gboolean active = selected && !g_strcmp0 (self->active, id);
  double x, y, h = node_height (d), cat[3];
  int rows = MAX (d->n_inputs, d->n_outputs);

  node_pos (self, n, &x, &y);
  category_colour (d->category, cat);

  /* Shadow, body, header. */
  rounded_rect (cr, x + 1, y + 4, NODE_W, h, 7);
  cairo_set_source_rgba (cr, 0, 0, 0, 0.35);
  cairo_fill (cr);
  rounded_rect (cr, x, y, NODE_W, h, 7);
  cairo_set_source_rgb (cr, 0.17, 0.18, 0.20);
  cairo_fill (cr);
  cairo_save (cr);
  rounded_rect (cr, x, y, NODE_W, h, 7);
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
  rounded_rect (cr, x, y, NODE_W, h, 7);
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
    draw_text (cr, layout, id, x + 9, y + HEADER_H / 2, NODE_W - 40, 0, 1, 1, 1, 0.95);
    pango_layout_get_pixel_size (layout, &idw, &th);
    pango_font_description_set_weight (fd, PANGO_WEIGHT_NORMAL);
    pango_font_description_set_absolute_size (fd, 10 * PANGO_SCALE);
    pango_layout_set_font_description (layout, fd);
    if (idw < NODE_W - 60)
      draw_text (cr, layout, g_dgettext (GETTEXT_PACKAGE, d->label), x + 9 + idw + 6,
                 y + HEADER_H / 2 + 1, NODE_W - 30 - idw - 15, 0, 1, 1, 1, 0.6);
  }

  /* Error badge at the header's right end. */
  if (st && (st->state == TG_NODE_FAILED || st->state == TG_NODE_SKIPPED))
    {
      double bx = x + NODE_W - 14, by = y + HEADER_H / 2;
      cairo_arc (cr, bx, by, 8, 0, 2 * G_PI);
      if (st->state == TG_NODE_FAILED)
        cairo_set_source_rgb (cr, 0.88, 0.22, 0.22);
      else
        cairo_set_source_rgb (cr, 0.55, 0.55, 0.58);
      cairo_fill (cr);
      pango_font_description_set_weight (fd, PANGO_WEIGHT_BOLD);
      pango_font_description_set_absolute_size (fd, 11 * PANGO_SCALE);
      pango_layout_set_font_description (layout, fd);
      draw_text (cr, layout, "!", bx - 2, by, -1, 0, 1, 1, 1, 1);
    }

  /* Ports with their names. */
  pango_font_description_set_weight (fd, PANGO_WEIGHT_NORMAL);
  pango_font_description_set_absolute_size (fd, 10.5 * PANGO_SCALE);
  pango_layout_set_font_description (layout, fd);
  for (int p = 0; p < d->n_inputs; p++)
    {
      double px, py;
      gboolean linked = tg_graph_input_link (g, n, p) >= 0 && !input_is_lifted (self, n, p);
      port_pos (self, n, FALSE, p, &px, &py);
      draw_port (self, cr, px, py, d->inputs[p].type, linked || !d->inputs[p].optional,
                 port_accepts_drag (self, n, FALSE, p));
      draw_text (cr, layout, g_dgettext (GETTEXT_PACKAGE, d->inputs[p].label), px + 11, py,
                 NODE_W / 2 - 14, 0, 0.86, 0.87, 0.90, d->inputs[p].optional ? 0.6 : 0.9);
    }
  for (int p = 0; p < d->n_outputs; p++)
    {
      double px, py;
      port_pos (self, n, TRUE, p, &px, &py);
      draw_port (self, cr, px, py, d->outputs[p].type, TRUE,
                 port_accepts_drag (self, n, TRUE, p));
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
      rounded_rect (cr, tx, ty, THUMB, THUMB, 3);
      cairo_set_source_rgb (cr, 0.10, 0.10, 0.11);
      cairo_fill (cr);
      if (s)
        {
          double sw = cairo_image_surface_get_width (s), sh = cairo_image_surface_get_height (s);
          double sc = THUMB / MAX (sw, sh);
          cairo_save (cr);
          rounded_rect (cr, tx, ty, THUMB, THUMB, 3);
          cairo_clip (cr);
          cairo_translate (cr, tx + (THUMB - sw * sc) / 2, ty + (THUMB - sh * sc) / 2);
          cairo_scale (cr, sc, sc);
          cairo_set_source_surface (cr, s, 0, 0);
          cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_GOOD);
          cairo_paint_with_alpha (cr, st && st->state == TG_NODE_SKIPPED ? 0.3 : 1.0);
          cairo_restore (cr);
        }
      rounded_rect (cr, tx, ty, THUMB, THUMB, 3);
      cairo_set_line_width (cr, 1);
      cairo_set_source_rgba (cr, 1, 1, 1, 0.08);
      cairo_stroke (cr);
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

      frame_box (self, k, &x, &y, &w, &h);
      rounded_rect (cr, x, y, w, h, 8);
      cairo_set_source_rgba (cr, c[0], c[1], c[2], 0.16);
      cairo_fill (cr);
      cairo_save (cr);
      rounded_rect (cr, x, y, w, h, 8);
      cairo_clip (cr);
      cairo_rectangle (cr, x, y, w, FRAME_HEADER);
      cairo_set_source_rgba (cr, c[0], c[1], c[2], 0.55);
      cairo_fill (cr);
      cairo_restore (cr);
      rounded_rect (cr, x, y, w, h, 8);
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
  to_canvas (self, 0, 0, &x0, &y0);
  to_canvas (self, w, h, &x1, &y1);
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

typedef enum
{
  LAYER_ALL,
  LAYER_STILL,  /* all but the nodes being moved and their wires */
  LAYER_MOVING, /* only those */
} Layer;

/* Whether the box (X, Y, W, H) in canvas units meets the visible area. */
static gboolean
visible (TgCanvas *self, double ww, double wh, double x, double y, double w, double h)
{
  double x0, y0, x1, y1;

  to_canvas (self, 0, 0, &x0, &y0);
  to_canvas (self, ww, wh, &x1, &y1);
  return x + w >= x0 && x <= x1 && y + h >= y0 && y <= y1;
}

/* Frames, wires and nodes of LAYER, those outside the WW x WH widget
 * left out. */
static void
draw_scene (TgCanvas *self, cairo_t *cr, PangoLayout *layout, PangoFontDescription *fd,
            double ww, double wh, Layer layer)
{
  const TgGraph *g = graph (self);
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
      double x1, y1, x2, y2, dx;
      if (input_is_lifted (self, lk->to_node, lk->to_port))
        continue;
      if (layer != LAYER_ALL)
        {
          gboolean moving = is_dragged (self, tg_graph_node_id (g, lk->from_node))
                            || is_dragged (self, tg_graph_node_id (g, lk->to_node));
          if (moving != (layer == LAYER_MOVING))
            continue;
        }
      port_pos (self, lk->from_node, TRUE, lk->from_port, &x1, &y1);
      port_pos (self, lk->to_node, FALSE, lk->to_port, &x2, &y2);
      /* The curve stays inside its end and control points (wire_path). */
      dx = MAX (40.0, fabs (x2 - x1) * 0.5);
      if (!visible (self, ww, wh, MIN (x1, x2 - dx) - 4, MIN (y1, y2) - 4,
                    MAX (x1 + dx, x2) - MIN (x1, x2 - dx) + 8, fabs (y2 - y1) + 8))
        continue;
      draw_wire (cr, x1, y1, x2, y2, d->outputs[lk->from_port].type, 0.95);
    }
  for (int n = 0; n < tg_graph_n_nodes (g); n++)
    {
      double x, y;
      if (layer != LAYER_ALL
          && is_dragged (self, tg_graph_node_id (g, n)) != (layer == LAYER_MOVING))
        continue;
      node_pos (self, n, &x, &y);
      if (visible (self, ww, wh, x - m, y - m, NODE_W + 2 * m,
                   node_height (tg_graph_node_desc (g, n)) + 2 * m))
        draw_node (self, cr, layout, fd, n);
    }
}

static double
thread_cpu_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static void tg_canvas_draw (GtkWidget *widget, GtkSnapshot *snapshot);

/* With TERRANE_FRAME_LOG=FILE, each frame appends "frame TIME_US DRAG
 * WALL_MS CPU_MS": when it was drawn, whether nodes were being moved, and
 * what drawing the canvas took (tests/bench/bench_canvas_drag.sh); a
 * drag's press and release are logged too. */
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
static void
log_event (const char *event)
{
  FILE *log = frame_log ();

  if (log)
    {
      fprintf (log, "%s %" G_GINT64_FORMAT "\n", event, g_get_monotonic_time ());
      fflush (log);
    }
}

static void
tg_canvas_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  FILE *log = frame_log ();
  gint64 t0;
  double c0;

  if (!log)
    {
      tg_canvas_draw (widget, snapshot);
      return;
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

  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
  if (!self->doc)
    {
      cairo_translate (cr, self->off_x, self->off_y);
      cairo_scale (cr, self->zoom, self->zoom);
      draw_grid (self, cr, w, h);
      cairo_destroy (cr);
      return;
    }
  g = graph (self);
  fd = pango_font_description_from_string ("Sans 10");
  if (self->drag == DRAG_MOVE)
    {
      /* While nodes move, all else stays still: drawn once into a cache,
       * and each frame paints it and draws what moves on top. */
      if (!self->cache)
        {
          int scale = gtk_widget_get_scale_factor (widget);
          cairo_t *cc;
          self->cache = cairo_image_surface_create (CAIRO_FORMAT_RGB24, (int) ceil (w) * scale,
                                                    (int) ceil (h) * scale);
          cairo_surface_set_device_scale (self->cache, scale, scale);
          cc = cairo_create (self->cache);
          cairo_translate (cc, self->off_x, self->off_y);
          cairo_scale (cc, self->zoom, self->zoom);
          draw_grid (self, cc, w, h);
          layout = pango_cairo_create_layout (cc);
          draw_scene (self, cc, layout, fd, w, h, LAYER_STILL);
          g_object_unref (layout);
          cairo_destroy (cc);
        }
      cairo_set_source_surface (cr, self->cache, 0, 0);
      cairo_paint (cr);
      cairo_translate (cr, self->off_x, self->off_y);
      cairo_scale (cr, self->zoom, self->zoom);
      layout = pango_cairo_create_layout (cr);
      draw_scene (self, cr, layout, fd, w, h, LAYER_MOVING);
    }
  else
    {
      g_clear_pointer (&self->cache, cairo_surface_destroy);
      cairo_translate (cr, self->off_x, self->off_y);
      cairo_scale (cr, self->zoom, self->zoom);
      draw_grid (self, cr, w, h);
      layout = pango_cairo_create_layout (cr);
      draw_scene (self, cr, layout, fd, w, h, LAYER_ALL);
    }
  pango_layout_set_font_description (layout, fd);

  /* What a drag is drawing. */
  if (self->drag == DRAG_WIRE_OUT || self->drag == DRAG_WIRE_IN)
    {
      double px, py, cx, cy;
      port_pos (self, self->drag_hit.node, self->drag == DRAG_WIRE_OUT, self->drag_hit.port, &px,
                &py);
      to_canvas (self, self->pointer_x, self->pointer_y, &cx, &cy);
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
          port_pos (self, n, self->wire_from_output, p, &px, &py);
          if (self->wire_from_output)
            draw_wire (cr, px, py, self->add_x, self->add_y, self->wire_type, 0.8);
          else
            draw_wire (cr, self->add_x, self->add_y, px, py, self->wire_type, 0.8);
        }
    }
  else if (self->drag == DRAG_RUBBER)
    {
      double x0, y0, x1, y1;
      to_canvas (self, self->drag_x0, self->drag_y0, &x0, &y0);
      to_canvas (self, self->drag_x0 + self->drag_dx, self->drag_y0 + self->drag_dy, &x1, &y1);
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

/* --- selection ------------------------------------------------------------- */

static void
selection_changed (TgCanvas *self)
{
  g_signal_emit (self, signals[SIGNAL_SELECTION_CHANGED], 0);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
select_only (TgCanvas *self, const char *id)
{
  g_hash_table_remove_all (self->selection);
  if (id)
    g_hash_table_add (self->selection, g_strdup (id));
  g_free (self->active);
  self->active = g_strdup (id);
}

void
tg_canvas_select (TgCanvas *self, const char *const *ids, const char *active)
{
  g_hash_table_remove_all (self->selection);
  for (int k = 0; ids && ids[k]; k++)
    g_hash_table_add (self->selection, g_strdup (ids[k]));
  g_free (self->active);
  self->active = g_strdup (active ? active : (ids && ids[0] ? ids[0] : NULL));
  selection_changed (self);
}

char **
tg_canvas_dup_selection (TgCanvas *self)
{
  GPtrArray *a = g_ptr_array_new ();
  const TgGraph *g;

  if (self->doc)
    {
      /* In file order, so copies keep their order. */
      g = graph (self);
      for (int n = 0; n < tg_graph_n_nodes (g); n++)
        if (g_hash_table_contains (self->selection, tg_graph_node_id (g, n)))
          g_ptr_array_add (a, g_strdup (tg_graph_node_id (g, n)));
    }
  g_ptr_array_add (a, NULL);
  return (char **) g_ptr_array_free (a, FALSE);
}

const char *
tg_canvas_get_active (TgCanvas *self)
{
  return self->active;
}

/* Drops selected ids that the document no longer has. */
static void
prune_selection (TgCanvas *self)
{
  GHashTableIter it;
  gpointer key;
  gboolean changed = FALSE;

  g_hash_table_iter_init (&it, self->selection);
  while (g_hash_table_iter_next (&it, &key, NULL))
    if (tg_graph_find_node (graph (self), key) < 0)
      {
        g_hash_table_iter_remove (&it);
        changed = TRUE;
      }
  if (self->active && tg_graph_find_node (graph (self), self->active) < 0)
    {
      g_clear_pointer (&self->active, g_free);
      changed = TRUE;
    }
  if (changed)
    selection_changed (self);
}

/* --- view ------------------------------------------------------------------ */

static void
zoom_at (TgCanvas *self, double factor, double wx, double wy)
{
  double z = CLAMP (self->zoom * factor, ZOOM_MIN, ZOOM_MAX);
  double cx, cy;

  to_canvas (self, wx, wy, &cx, &cy);
  self->zoom = z;
  self->off_x = wx - cx * z;
  self->off_y = wy - cy * z;
  self->view_user = TRUE;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
tg_canvas_fit_all (TgCanvas *self)
{
  double w = gtk_widget_get_width (GTK_WIDGET (self));
  double h = gtk_widget_get_height (GTK_WIDGET (self));
  double x0 = G_MAXDOUBLE, y0 = G_MAXDOUBLE, x1 = -G_MAXDOUBLE, y1 = -G_MAXDOUBLE;
  const TgGraph *g;

  if (!self->doc || w <= 1 || h <= 1)
    return;
  g = graph (self);
  for (int n = 0; n < tg_graph_n_nodes (g); n++)
    {
      double x, y;
      node_pos (self, n, &x, &y);
      x0 = MIN (x0, x);
      y0 = MIN (y0, y);
      x1 = MAX (x1, x + NODE_W);
      y1 = MAX (y1, y + node_height (tg_graph_node_desc (g, n)));
    }
  if (x0 > x1)
    {
      self->zoom = 1;
      self->off_x = self->off_y = 0;
    }
  else
    {
      double margin = 48;
      self->zoom = CLAMP (MIN ((w - 2 * margin) / (x1 - x0), (h - 2 * margin) / (y1 - y0)),
                          ZOOM_MIN, 1.25);
      self->off_x = w / 2 - (x0 + x1) / 2 * self->zoom;
      self->off_y = h / 2 - (y0 + y1) / 2 * self->zoom;
    }
  self->view_user = FALSE;
  self->fitted_w = (int) w;
  self->fitted_h = (int) h;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
tg_canvas_get_drop_position (TgCanvas *self, double *x, double *y)
{
  if (self->pointer_in)
    to_canvas (self, self->pointer_x, self->pointer_y, x, y);
  else
    to_canvas (self, gtk_widget_get_width (GTK_WIDGET (self)) / 2.0,
               gtk_widget_get_height (GTK_WIDGET (self)) / 2.0, x, y);
}

gboolean
tg_canvas_locate (TgCanvas *self, const char *spec, double *x, double *y)
{
  const char *arg = strchr (spec, ':');
  double cx, cy;

  if (!self->doc || !arg)
    return FALSE;
  arg++;
  if (g_str_has_prefix (spec, "graph:"))
    {
      if (sscanf (arg, "%lf,%lf", &cx, &cy) != 2)
        return FALSE;
    }
  else if (g_str_has_prefix (spec, "node:"))
    {
      int n = tg_graph_find_node (graph (self), arg);
      if (n < 0)
        return FALSE;
      node_pos (self, n, &cx, &cy);
      cx += NODE_W / 2;
      cy += HEADER_H / 2;
    }
  else if (g_str_has_prefix (spec, "frame:") || g_str_has_prefix (spec, "grip:"))
    {
      int k = atoi (arg);
      double w, h;
      if (k < 0 || k >= self->n_frames)
        return FALSE;
      frame_box (self, k, &cx, &cy, &w, &h);
      if (spec[0] == 'f')
        cx += w / 2, cy += FRAME_HEADER / 2;
      else
        cx += w - 5, cy += h - 5;
    }
  else if (g_str_has_prefix (spec, "out:") || g_str_has_prefix (spec, "in:"))
    {
      gboolean out = spec[0] == 'o';
      g_autofree char *node = g_strdup (arg);
      char *dot = strrchr (node, '.');
      int n, p;
      if (!dot)
        return FALSE;
      *dot = '\0';
      if (!tg_document_find_port (self->doc, node, dot + 1, out, &n, &p))
        return FALSE;
      port_pos (self, n, out, p, &cx, &cy);
    }
  else
    return FALSE;
  *x = cx * self->zoom + self->off_x;
  *y = cy * self->zoom + self->off_y;
  return TRUE;
}

void
tg_canvas_get_view (TgCanvas *self, double *zoom, double *off_x, double *off_y)
{
  *zoom = self->zoom;
  *off_x = self->off_x;
  *off_y = self->off_y;
}

/* --- node states and thumbnails --------------------------------------------- */

static void
node_state_free (gpointer p)
{
  NodeState *s = p;
  g_free (s->message);
  g_free (s->details);
  g_free (s);
}

void
tg_canvas_set_thumbnail (TgCanvas *self, const char *id, cairo_surface_t *surface)
{
  g_clear_pointer (&self->cache, cairo_surface_destroy);
  if (surface)
    g_hash_table_replace (self->thumbs, g_strdup (id), cairo_surface_reference (surface));
  else
    g_hash_table_remove (self->thumbs, id);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
tg_canvas_set_node_state (TgCanvas *self, const char *id, int state, const char *message,
                          const char *details)
{
  NodeState *s = g_new0 (NodeState, 1);

  s->state = state;
  s->message = g_strdup (message);
  s->details = g_strdup (details);
  s->fraction = state == TG_NODE_RUNNING ? 0 : 1;
  g_hash_table_replace (self->states, g_strdup (id), s);
  /* A badge changes; a running node's progress may lag in the cache. */
  g_clear_pointer (&self->cache, cairo_surface_destroy);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
tg_canvas_set_running (TgCanvas *self, const char *id, double fraction)
{
  NodeState *s = g_hash_table_lookup (self->states, id);

  if (!s || s->state != TG_NODE_RUNNING)
    {
      tg_canvas_set_node_state (self, id, TG_NODE_RUNNING, NULL, NULL);
      s = g_hash_table_lookup (self->states, id);
    }
  s->fraction = fraction;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

int
tg_canvas_get_node_state (TgCanvas *self, const char *id, const char **message,
                          const char **details, double *fraction)
{
  NodeState *s = id ? g_hash_table_lookup (self->states, id) : NULL;

  if (message)
    *message = s ? s->message : NULL;
  if (details)
    *details = s ? s->details : NULL;
  if (fraction)
    *fraction = s ? s->fraction : 0;
  return s ? s->state : TG_NODE_IDLE;
}

void
tg_canvas_clear_states (TgCanvas *self)
{
  g_clear_pointer (&self->cache, cairo_surface_destroy);
  g_hash_table_remove_all (self->states);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* --- the add-node popover ---------------------------------------------------- */

static gboolean filter_row (GtkListBoxRow *row, gpointer data);
static void report_error (TgCanvas *self, GError *error);

/* Keeps the first match selected so Enter adds it. */
static void
select_first_match (TgCanvas *self)
{
  GtkListBoxRow *row;

  for (int k = 0; (row = gtk_list_box_get_row_at_index (self->add_list, k)); k++)
    if (filter_row (row, self))
      {
        gtk_list_box_select_row (self->add_list, row);
        return;
      }
}

/* The search text changed: filter, rank and keep the best match selected. */
static void
refilter (TgCanvas *self)
{
  gtk_list_box_invalidate_filter (self->add_list);
  gtk_list_box_invalidate_sort (self->add_list);
  gtk_list_box_invalidate_headers (self->add_list);
  select_first_match (self);
}

static void
popup_add (TgCanvas *self, double wx, double wy)
{
  GdkRectangle r = { (int) wx, (int) wy, 1, 1 };

  to_canvas (self, wx, wy, &self->add_x, &self->add_y);
  gtk_popover_set_pointing_to (self->add_popover, &r);
  gtk_editable_set_text (GTK_EDITABLE (self->add_search), "");
  refilter (self);
  gtk_popover_popup (self->add_popover);
  gtk_widget_grab_focus (GTK_WIDGET (self->add_search));
}

static void
clear_wire (TgCanvas *self)
{
  g_clear_pointer (&self->wire_node, g_free);
  g_clear_pointer (&self->wire_port, g_free);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Whether NEEDLE starts a word of HAY (and, when WHOLE, is that word). */
static gboolean
starts_word (const char *hay, const char *needle, gboolean whole)
{
  size_t len = strlen (needle);

  for (const char *at = hay; (at = strstr (at, needle)); at++)
    if ((at == hay || at[-1] == ' ') && (!whole || at[len] == '\0' || at[len] == ' '))
      return TRUE;
  return FALSE;
}

/* How well the search text NEEDLE (lower case) names D, best 0; -1 when it
 * does not match.  The label comes first (all of it, its start, a whole
 * word, a word's start, anywhere), then the type id and category; within
 * a tier a type id starting with it ("noise" and noise.fbm) wins. */
static int
match_rank (const TgNodeDesc *d, const char *needle)
{
  const char *labels[] = { d->label, g_dgettext (GETTEXT_PACKAGE, d->label) };
  g_autofree char *rest = g_strjoin (" ", d->type, tg_category_name (d->category),
                                     g_dgettext (GETTEXT_PACKAGE, tg_category_name (d->category)),
                                     NULL);
  g_autofree char *rest_down = g_utf8_strdown (rest, -1);
  int tier = 6;

  for (guint k = 0; k < G_N_ELEMENTS (labels); k++)
    {
      g_autofree char *l = g_utf8_strdown (labels[k], -1);
      int t = !strcmp (l, needle)                ? 0
              : g_str_has_prefix (l, needle)     ? 1
              : starts_word (l, needle, TRUE)    ? 2
              : starts_word (l, needle, FALSE)   ? 3
              : strstr (l, needle)               ? 4
                                                 : 6;
      tier = MIN (tier, t);
    }
  if (tier == 6 && strstr (rest_down, needle))
    tier = 5;
  if (tier == 6)
    return -1;
  return 2 * tier + !g_str_has_prefix (d->type, needle);
}

/* The search text in lower case, or NULL when empty (caller frees). */
static char *
search_needle (TgCanvas *self)
{
  const char *q = gtk_editable_get_text (GTK_EDITABLE (self->add_search));

  return q && *q ? g_utf8_strdown (q, -1) : NULL;
}

static gboolean
filter_row (GtkListBoxRow *row, gpointer data)
{
  TgCanvas *self = data;
  const TgNodeDesc *d = g_object_get_data (G_OBJECT (row), "desc");
  g_autofree char *needle = search_needle (self);

  /* From an output: nodes with an input it fits; into an input: nodes
   * with an output that fits it. */
  if (self->wire_node && tg_document_fitting_port (d, self->wire_type, self->wire_from_output) < 0)
    return FALSE;
  return !needle || match_rank (d, needle) >= 0;
}

static int
menu_position (TgCategory category)
{
  for (int k = 0; k < TG_CATEGORY_COUNT; k++)
    if (tg_category_at (k) == category)
      return k;
  return TG_CATEGORY_COUNT;
}

static int
sort_rows (GtkListBoxRow *a, GtkListBoxRow *b, gpointer data)
{
  const TgNodeDesc *da = g_object_get_data (G_OBJECT (a), "desc");
  const TgNodeDesc *db = g_object_get_data (G_OBJECT (b), "desc");
  g_autofree char *needle = search_needle (data);
  int c = 0;

  /* While searching: the best matches first, shorter labels first. */
  if (needle)
    c = match_rank (da, needle) - match_rank (db, needle);
  if (needle && !c)
    c = (int) g_utf8_strlen (g_dgettext (GETTEXT_PACKAGE, da->label), -1)
        - (int) g_utf8_strlen (g_dgettext (GETTEXT_PACKAGE, db->label), -1);
  if (!c)
    c = menu_position (da->category) - menu_position (db->category);
  return c ? c : g_utf8_collate (g_dgettext (GETTEXT_PACKAGE, da->label),
                                 g_dgettext (GETTEXT_PACKAGE, db->label));
}

static void
header_rows (GtkListBoxRow *row, GtkListBoxRow *before, gpointer data)
{
  const TgNodeDesc *d = g_object_get_data (G_OBJECT (row), "desc");
  const TgNodeDesc *p = before ? g_object_get_data (G_OBJECT (before), "desc") : NULL;
  g_autofree char *needle = search_needle (data);

  /* Ranked search results mix categories: headers only for the full list. */
  if (!needle && (!p || p->category != d->category))
    {
      GtkWidget *l = gtk_label_new (g_dgettext (GETTEXT_PACKAGE, tg_category_name (d->category)));
      gtk_label_set_xalign (GTK_LABEL (l), 0);
      gtk_widget_add_css_class (l, "category-header");
      gtk_list_box_row_set_header (row, l);
    }
  else
    gtk_list_box_row_set_header (row, NULL);
}

/* With no wire dropped, a node added while one is active takes that node's
 * first output that fits one of its inputs, as in Gaea or Houdini; FALSE
 * when nothing fits.  The new node then lands to the right of that port. */
static gboolean
wire_from_active (TgCanvas *self, const TgNodeDesc *d, char **node, char **port)
{
  const TgGraph *g = graph (self);
  int n = self->active ? tg_graph_find_node (g, self->active) : -1;
  const TgNodeDesc *src = n >= 0 ? tg_graph_node_desc (g, n) : NULL;

  for (int p = 0; src && p < src->n_outputs; p++)
    if (tg_document_fitting_port (d, src->outputs[p].type, TRUE) >= 0)
      {
        *node = g_strdup (self->active);
        *port = g_strdup (src->outputs[p].name);
        self->wire_type = src->outputs[p].type;
        self->wire_from_output = TRUE;
        port_pos (self, n, TRUE, p, &self->add_x, &self->add_y);
        self->add_x += 56;
        return TRUE;
      }
  return FALSE;
}

static void
add_row_activated (GtkListBox *box, GtkListBoxRow *row, TgCanvas *self)
{
  const TgNodeDesc *d = g_object_get_data (G_OBJECT (row), "desc");
  g_autoptr (GError) error = NULL;
  g_autofree char *id = NULL;
  g_autofree char *wire_node = g_steal_pointer (&self->wire_node);
  g_autofree char *wire_port = g_steal_pointer (&self->wire_port);

  gtk_popover_popdown (self->add_popover);
  if (wire_node || wire_from_active (self, d, &wire_node, &wire_port))
    {
      /* The wired port lands where the wire was dropped. */
      int p = tg_document_fitting_port (d, self->wire_type, self->wire_from_output);
      double y = self->add_y - (HEADER_H + 6 + p * PORT_H + PORT_H / 2);
      double x = self->wire_from_output ? self->add_x + 24 : self->add_x - NODE_W - 24;
      id = tg_document_add_node_linked (self->doc, d->type, x, y, wire_node, wire_port,
                                        self->wire_from_output, &error);
    }
  else
    id = tg_document_add_node (self->doc, d->type, self->add_x - NODE_W / 2, self->add_y - 12,
                               &error);
  if (id)
    {
      select_only (self, id);
      selection_changed (self);
    }
  else
    report_error (self, error);
  gtk_widget_grab_focus (GTK_WIDGET (self));
}

static void
add_popover_closed (GtkPopover *p, TgCanvas *self)
{
  clear_wire (self);
}

static void
add_search_changed (GtkSearchEntry *entry, TgCanvas *self)
{
  refilter (self);
}

static GtkListBoxRow *
first_visible_row (TgCanvas *self)
{
  GtkListBoxRow *sel = gtk_list_box_get_selected_row (self->add_list);
  GtkListBoxRow *row;

  if (sel && filter_row (sel, self))
    return sel;
  for (int k = 0; (row = gtk_list_box_get_row_at_index (self->add_list, k)); k++)
    if (filter_row (row, self))
      return row;
  return NULL;
}

static void
add_search_activate (GtkSearchEntry *entry, TgCanvas *self)
{
  GtkListBoxRow *row;

  /* Enter may come before the entry's search delay ran out: rank by the
   * text as typed, not by what the list last saw. */
  refilter (self);
  row = first_visible_row (self);

  if (row)
    add_row_activated (self->add_list, row, self);
}

static gboolean
add_search_key (GtkEventControllerKey *c, guint keyval, guint code, GdkModifierType mods,
                TgCanvas *self)
{
  if (keyval == GDK_KEY_Down)
    {
      GtkListBoxRow *row = first_visible_row (self);
      if (row)
        gtk_widget_grab_focus (GTK_WIDGET (row));
      return TRUE;
    }
  return FALSE;
}

static void
fill_add_list (TgCanvas *self)
{
  for (int k = 0; k < tg_registry_count (); k++)
    {
      const TgNodeDesc *d = tg_registry_get (k);
      GtkWidget *row = gtk_list_box_row_new ();
      GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
      GtkWidget *label = gtk_label_new (g_dgettext (GETTEXT_PACKAGE, d->label));
      GtkWidget *type = gtk_label_new (d->type);

      gtk_label_set_xalign (GTK_LABEL (label), 0);
      gtk_widget_set_hexpand (label, TRUE);
      gtk_widget_add_css_class (type, "dim-label");
      gtk_widget_add_css_class (type, "caption");
      gtk_box_append (GTK_BOX (box), label);
      gtk_box_append (GTK_BOX (box), type);
      gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), box);
      gtk_widget_set_tooltip_text (row, g_dgettext (GETTEXT_PACKAGE, d->help));
      g_object_set_data (G_OBJECT (row), "desc", (gpointer) d);
      gtk_list_box_append (self->add_list, row);
    }
  gtk_list_box_set_filter_func (self->add_list, filter_row, self, NULL);
  gtk_list_box_set_sort_func (self->add_list, sort_rows, self, NULL);
  gtk_list_box_set_header_func (self->add_list, header_rows, self, NULL);
}

/* --- gestures ---------------------------------------------------------------- */

static char *
port_name (TgCanvas *self, int n, gboolean output, int p)
{
  const TgNodeDesc *d = tg_graph_node_desc (graph (self), n);
  return g_strdup (output ? d->outputs[p].name : d->inputs[p].name);
}

static void
report_error (TgCanvas *self, GError *error)
{
  GtkWidget *root = GTK_WIDGET (gtk_widget_get_root (GTK_WIDGET (self)));

  if (error && root)
    gtk_widget_activate_action (root, "win.show-message", "s", error->message);
}

static void
drag_begin (GtkGestureDrag *gesture, double x, double y, TgCanvas *self)
{
  guint button = gtk_gesture_single_get_current_button (GTK_GESTURE_SINGLE (gesture));
  GdkModifierType mods = gtk_event_controller_get_current_event_state (
    GTK_EVENT_CONTROLLER (gesture));
  const TgGraph *g;
  Hit h;

  log_event ("press");
  gtk_widget_grab_focus (GTK_WIDGET (self));
  self->drag_x0 = x;
  self->drag_y0 = y;
  self->drag_dx = self->drag_dy = 0;
  self->drag_moved = FALSE;
  self->drag_mods = mods;
  self->drag = DRAG_NONE;
  if (!self->doc)
    return;
  if (button == GDK_BUTTON_MIDDLE || (button == GDK_BUTTON_PRIMARY && self->space_down))
    {
      self->drag = DRAG_PAN;
      gtk_widget_set_cursor_from_name (GTK_WIDGET (self), "grabbing");
      return;
    }
  if (button != GDK_BUTTON_PRIMARY)
    {
      gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_DENIED);
      return;
    }
  g = graph (self);
  h = hit_test (self, x, y);
  self->drag_hit = h;
  switch (h.kind)
    {
    case HIT_OUTPUT:
      self->drag = DRAG_WIRE_OUT;
      break;
    case HIT_INPUT:
      {
        int l = tg_graph_input_link (g, h.node, h.port);
        if (l >= 0 && (mods & GDK_CONTROL_MASK))
          {
            g_autofree char *p = port_name (self, h.node, FALSE, h.port);
            tg_document_disconnect (self->doc, tg_graph_node_id (g, h.node), p);
            gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_DENIED);
          }
        else if (l >= 0)
          {
            /* Lift the link off this input: it follows the pointer from its source. */
            const TgLink *lk = tg_graph_link (g, l);
            self->lift_to = g_strdup (tg_graph_node_id (g, h.node));
            self->lift_port = port_name (self, h.node, FALSE, h.port);
            self->drag_hit = (Hit) { HIT_OUTPUT, lk->from_node, lk->from_port };
            self->drag = DRAG_WIRE_OUT;
          }
        else
          self->drag = DRAG_WIRE_IN;
        break;
      }
    case HIT_NODE:
      {
        const char *id = tg_graph_node_id (g, h.node);
        gboolean was = g_hash_table_contains (self->selection, id);
        self->press_was_selected = was;
        if (mods & GDK_CONTROL_MASK)
          {
            if (was)
              g_hash_table_remove (self->selection, id);
            else
              g_hash_table_add (self->selection, g_strdup (id));
          }
        else if (mods & GDK_SHIFT_MASK)
          g_hash_table_add (self->selection, g_strdup (id));
        else if (!was)
          g_hash_table_remove_all (self->selection), g_hash_table_add (self->selection,
                                                                       g_strdup (id));
        if (g_hash_table_contains (self->selection, id))
          {
            g_free (self->active);
            self->active = g_strdup (id);
          }
        selection_changed (self);
        self->drag = DRAG_MOVE;
        break;
      }
    case HIT_FRAME:
    case HIT_FRAME_RESIZE:
      {
        /* Selecting a frame drops the node selection; its nodes ride along. */
        double fx, fy, fw, fh;
        self->frame_sel = h.node;
        select_only (self, NULL);
        selection_changed (self);
        g_hash_table_remove_all (self->frame_nodes);
        frame_box (self, h.node, &fx, &fy, &fw, &fh);
        for (int n = 0; n < tg_graph_n_nodes (g); n++)
          {
            double nx, ny;
            node_pos (self, n, &nx, &ny);
            if (nx >= fx && ny >= fy && nx + NODE_W <= fx + fw
                && ny + node_height (tg_graph_node_desc (g, n)) <= fy + fh)
              g_hash_table_add (self->frame_nodes, g_strdup (tg_graph_node_id (g, n)));
          }
        self->drag = h.kind == HIT_FRAME ? DRAG_FRAME_MOVE : DRAG_FRAME_RESIZE;
        break;
      }
    case HIT_NONE:
      self->drag = DRAG_RUBBER;
      break;
    }
  if (h.kind != HIT_FRAME && h.kind != HIT_FRAME_RESIZE)
    self->frame_sel = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
drag_update (GtkGestureDrag *gesture, double dx, double dy, TgCanvas *self)
{
  if (self->drag == DRAG_PAN)
    {
      self->off_x += dx - self->drag_dx;
      self->off_y += dy - self->drag_dy;
      self->view_user = TRUE;
    }
  self->drag_dx = dx;
  self->drag_dy = dy;
  if (hypot (dx, dy) > 3)
    self->drag_moved = TRUE;
  self->pointer_x = self->drag_x0 + dx;
  self->pointer_y = self->drag_y0 + dy;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* A wire dropped on empty canvas: offer the nodes it fits, as Blender
 * and Houdini do; the pending wire stays drawn while the popover is up. */
static void
offer_nodes_for_wire (TgCanvas *self, gboolean from_output)
{
  const TgNodeDesc *d = tg_graph_node_desc (graph (self), self->drag_hit.node);

  g_free (self->wire_node);
  g_free (self->wire_port);
  self->wire_node = g_strdup (tg_graph_node_id (graph (self), self->drag_hit.node));
  self->wire_port = port_name (self, self->drag_hit.node, from_output, self->drag_hit.port);
  self->wire_from_output = from_output;
  self->wire_type = from_output ? d->outputs[self->drag_hit.port].type
                                : d->inputs[self->drag_hit.port].type;
  popup_add (self, self->drag_x0 + self->drag_dx, self->drag_y0 + self->drag_dy);
}

static void
finish_wire (TgCanvas *self, Hit target)
{
  const TgGraph *g = graph (self);
  g_autoptr (GError) error = NULL;
  gboolean ok = TRUE;

  if (self->drag == DRAG_WIRE_OUT)
    {
      const char *from = tg_graph_node_id (g, self->drag_hit.node);
      g_autofree char *from_port = port_name (self, self->drag_hit.node, TRUE,
                                              self->drag_hit.port);
      if (target.kind == HIT_INPUT && port_accepts_drag (self, target.node, FALSE, target.port))
        {
          g_autofree char *to_port = port_name (self, target.node, FALSE, target.port);
          const char *to = tg_graph_node_id (g, target.node);
          if (self->lift_to)
            ok = tg_document_move_link (self->doc, self->lift_to, self->lift_port, to, to_port,
                                        &error);
          else
            ok = tg_document_connect (self->doc, from, from_port, to, to_port, &error);
        }
      else if (self->lift_to && !(target.kind == HIT_INPUT && input_is_lifted (self, target.node,
                                                                               target.port)))
        tg_document_disconnect (self->doc, self->lift_to, self->lift_port);
      else if (!self->lift_to && target.kind == HIT_NONE)
        offer_nodes_for_wire (self, TRUE);
    }
  else if (target.kind == HIT_NONE)
    offer_nodes_for_wire (self, FALSE);
  else if (target.kind == HIT_OUTPUT && port_accepts_drag (self, target.node, TRUE, target.port))
    {
      g_autofree char *from_port = port_name (self, target.node, TRUE, target.port);
      g_autofree char *to_port = port_name (self, self->drag_hit.node, FALSE,
                                            self->drag_hit.port);
      ok = tg_document_connect (self->doc, tg_graph_node_id (g, target.node), from_port,
                                tg_graph_node_id (g, self->drag_hit.node), to_port, &error);
    }
  if (!ok)
    report_error (self, error);
}

static void
drag_end (GtkGestureDrag *gesture, double dx, double dy, TgCanvas *self)
{
  DragKind kind = self->drag;
  const TgGraph *g;

  log_event ("release");
  if (!self->doc)
    return;
  g = graph (self);
  drag_update (gesture, dx, dy, self);
  switch (kind)
    {
    case DRAG_MOVE:
      self->drag = DRAG_NONE;
      if (self->drag_moved)
        {
          g_auto (GStrv) ids = tg_canvas_dup_selection (self);
          tg_document_move_nodes (self->doc, (const char *const *) ids, dx / self->zoom,
                                  dy / self->zoom);
        }
      else if (self->press_was_selected
               && !(self->drag_mods & (GDK_SHIFT_MASK | GDK_CONTROL_MASK)))
        {
          select_only (self, tg_graph_node_id (g, self->drag_hit.node));
          selection_changed (self);
        }
      break;
    case DRAG_FRAME_MOVE:
      if (self->drag_moved)
        {
          GPtrArray *ids = g_ptr_array_new ();
          GHashTableIter it;
          gpointer key;
          int k = self->drag_hit.node;
          g_hash_table_iter_init (&it, self->frame_nodes);
          while (g_hash_table_iter_next (&it, &key, NULL))
            g_ptr_array_add (ids, key);
          g_ptr_array_add (ids, NULL);
          self->drag = DRAG_NONE;
          tg_document_move_frame (self->doc, k, dx / self->zoom, dy / self->zoom,
                                  (const char *const *) ids->pdata);
          g_ptr_array_free (ids, TRUE);
        }
      break;
    case DRAG_FRAME_RESIZE:
      if (self->drag_moved)
        {
          TgFrame f;
          double x, y;
          frame_box (self, self->drag_hit.node, &x, &y, &f.w, &f.h);
          f = (TgFrame) { self->frames[self->drag_hit.node].title, x, y, f.w, f.h,
                          { self->frames[self->drag_hit.node].rgb[0],
                            self->frames[self->drag_hit.node].rgb[1],
                            self->frames[self->drag_hit.node].rgb[2] } };
          self->drag = DRAG_NONE;
          tg_document_set_frame (self->doc, self->drag_hit.node, &f);
        }
      break;
    case DRAG_WIRE_OUT:
    case DRAG_WIRE_IN:
      {
        Hit target = hit_test (self, self->drag_x0 + dx, self->drag_y0 + dy);
        finish_wire (self, target);
        break;
      }
    case DRAG_RUBBER:
      {
        double x0, y0, x1, y1;
        if (!(self->drag_mods & (GDK_SHIFT_MASK | GDK_CONTROL_MASK)))
          select_only (self, NULL);
        if (self->drag_moved)
          {
            to_canvas (self, self->drag_x0, self->drag_y0, &x0, &y0);
            to_canvas (self, self->drag_x0 + dx, self->drag_y0 + dy, &x1, &y1);
            for (int n = 0; n < tg_graph_n_nodes (g); n++)
              {
                double x, y, h = node_height (tg_graph_node_desc (g, n));
                node_pos (self, n, &x, &y);
                if (x < MAX (x0, x1) && x + NODE_W > MIN (x0, x1) && y < MAX (y0, y1)
                    && y + h > MIN (y0, y1))
                  {
                    g_hash_table_add (self->selection, g_strdup (tg_graph_node_id (g, n)));
                    if (!self->active)
                      self->active = g_strdup (tg_graph_node_id (g, n));
                  }
              }
          }
        selection_changed (self);
        break;
      }
    default:
      break;
    }
  self->drag = DRAG_NONE;
  g_hash_table_remove_all (self->frame_nodes);
  g_clear_pointer (&self->lift_to, g_free);
  g_clear_pointer (&self->lift_port, g_free);
  gtk_widget_set_cursor (GTK_WIDGET (self), NULL);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
secondary_pressed (GtkGestureClick *gesture, int n_press, double x, double y, TgCanvas *self)
{
  if (self->doc)
    {
      clear_wire (self);
      popup_add (self, x, y);
    }
}

/* --- frames ------------------------------------------------------------------- */

static void
refresh_frames (TgCanvas *self)
{
  tg_document_frames_free (self->frames, self->n_frames);
  self->frames = self->doc ? tg_document_dup_frames (self->doc, &self->n_frames) : NULL;
  if (!self->doc)
    self->n_frames = 0;
  if (self->frame_sel >= self->n_frames)
    self->frame_sel = -1;
}

static void
begin_frame_edit (TgCanvas *self, int k)
{
  double x, y, w, h;
  GdkRectangle r;

  frame_box (self, k, &x, &y, &w, &h);
  r.x = (int) (x * self->zoom + self->off_x);
  r.y = (int) (y * self->zoom + self->off_y);
  r.width = (int) (w * self->zoom);
  r.height = (int) (FRAME_HEADER * self->zoom);
  self->frame_editing = k;
  self->frame_sel = k;
  gtk_editable_set_text (GTK_EDITABLE (self->frame_entry), self->frames[k].title);
  gtk_popover_set_pointing_to (self->frame_popover, &r);
  gtk_popover_popup (self->frame_popover);
  gtk_widget_grab_focus (GTK_WIDGET (self->frame_entry));
  gtk_editable_select_region (GTK_EDITABLE (self->frame_entry), 0, -1);
}

static void
frame_title_activate (GtkEntry *entry, TgCanvas *self)
{
  int k = self->frame_editing;
  TgFrame f;

  if (k < 0 || k >= self->n_frames)
    return;
  f = self->frames[k];
  f.title = (char *) gtk_editable_get_text (GTK_EDITABLE (entry));
  tg_document_set_frame (self->doc, k, &f);
  gtk_popover_popdown (self->frame_popover);
  gtk_widget_grab_focus (GTK_WIDGET (self));
}

static void
frame_colour_clicked (GtkButton *b, TgCanvas *self)
{
  guint32 c = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (b), "colour"));
  int k = self->frame_editing;
  TgFrame f;

  if (k < 0 || k >= self->n_frames)
    return;
  f = self->frames[k];
  f.rgb[0] = ((c >> 16) & 0xff) / 255.0;
  f.rgb[1] = ((c >> 8) & 0xff) / 255.0;
  f.rgb[2] = (c & 0xff) / 255.0;
  tg_document_set_frame (self->doc, k, &f);
}

static void
frame_popover_closed (GtkPopover *p, TgCanvas *self)
{
  self->frame_editing = -1;
}

static void
draw_swatch (GtkDrawingArea *area, cairo_t *cr, int w, int h, gpointer data)
{
  guint32 c = GPOINTER_TO_UINT (data);

  rounded_rect (cr, 0.5, 0.5, w - 1, h - 1, 4);
  cairo_set_source_rgb (cr, ((c >> 16) & 0xff) / 255.0, ((c >> 8) & 0xff) / 255.0,
                        (c & 0xff) / 255.0);
  cairo_fill (cr);
}

static void
fill_frame_colours (TgCanvas *self)
{
  for (gsize k = 0; k < G_N_ELEMENTS (frame_palette); k++)
    {
      GtkWidget *b = gtk_button_new ();
      GtkWidget *area = gtk_drawing_area_new ();
      gtk_drawing_area_set_content_width (GTK_DRAWING_AREA (area), 18);
      gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (area), 18);
      gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (area), draw_swatch,
                                      GUINT_TO_POINTER (frame_palette[k]), NULL);
      gtk_button_set_child (GTK_BUTTON (b), area);
      gtk_widget_add_css_class (b, "flat");
      g_object_set_data (G_OBJECT (b), "colour", GUINT_TO_POINTER (frame_palette[k]));
      g_signal_connect (b, "clicked", G_CALLBACK (frame_colour_clicked), self);
      gtk_box_append (self->frame_colours, b);
    }
}

/* Ctrl+G: a frame around the selected nodes (or an empty one at the
 * pointer), then its title popover. */
static void
action_frame (GtkWidget *w, const char *name, GVariant *param)
{
  TgCanvas *self = TG_CANVAS (w);
  const TgGraph *g = graph (self);
  double x0 = G_MAXDOUBLE, y0 = G_MAXDOUBLE, x1 = -G_MAXDOUBLE, y1 = -G_MAXDOUBLE;
  TgFrame f = { (char *) _("Frame"), 0, 0, 0, 0, { 0x4a / 255.0, 0x6f / 255.0, 0xa5 / 255.0 } };
  int k;

  if (!self->doc)
    return;
  for (int n = 0; n < tg_graph_n_nodes (g); n++)
    if (g_hash_table_contains (self->selection, tg_graph_node_id (g, n)))
      {
        double x, y;
        node_pos (self, n, &x, &y);
        x0 = MIN (x0, x);
        y0 = MIN (y0, y);
        x1 = MAX (x1, x + NODE_W);
        y1 = MAX (y1, y + node_height (tg_graph_node_desc (g, n)));
      }
  if (x0 > x1)
    {
      tg_canvas_get_drop_position (self, &x0, &y0);
      x1 = x0 + 360;
      y1 = y0 + 220;
    }
  f.x = x0 - 24;
  f.y = y0 - 24 - FRAME_HEADER;
  f.w = x1 - x0 + 48;
  f.h = y1 - y0 + 48 + FRAME_HEADER;
  k = tg_document_add_frame (self->doc, &f);
  refresh_frames (self);
  if (k >= 0 && k < self->n_frames)
    begin_frame_edit (self, k);
}

/* --- rename ------------------------------------------------------------------- */

static void
begin_rename (TgCanvas *self, const char *id)
{
  int n = tg_graph_find_node (graph (self), id);
  double x, y;
  GdkRectangle r;

  if (n < 0)
    return;
  node_pos (self, n, &x, &y);
  r.x = (int) (x * self->zoom + self->off_x);
  r.y = (int) (y * self->zoom + self->off_y);
  r.width = (int) (NODE_W * self->zoom);
  r.height = (int) (HEADER_H * self->zoom);
  g_free (self->renaming);
  self->renaming = g_strdup (id);
  gtk_editable_set_text (GTK_EDITABLE (self->rename_entry), id);
  gtk_widget_remove_css_class (GTK_WIDGET (self->rename_entry), "error");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->rename_entry), NULL);
  gtk_popover_set_pointing_to (self->rename_popover, &r);
  gtk_popover_popup (self->rename_popover);
  gtk_widget_grab_focus (GTK_WIDGET (self->rename_entry));
  gtk_editable_select_region (GTK_EDITABLE (self->rename_entry), 0, -1);
}

static void
rename_activate (GtkEntry *entry, TgCanvas *self)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *name = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (entry))));

  if (!self->renaming)
    return;
  if (!tg_document_rename_node (self->doc, self->renaming, name, &error))
    {
      gtk_widget_add_css_class (GTK_WIDGET (entry), "error");
      gtk_widget_set_tooltip_text (GTK_WIDGET (entry), error->message);
      report_error (self, error);
      return;
    }
  gtk_popover_popdown (self->rename_popover);
  gtk_widget_grab_focus (GTK_WIDGET (self));
}

static void
rename_closed (GtkPopover *p, TgCanvas *self)
{
  g_clear_pointer (&self->renaming, g_free);
}

/* On the second release, not the press: a popover opened while the
 * button is down cannot take the keyboard from the pointer's grab. */
static void
primary_released (GtkGestureClick *gesture, int n_press, double x, double y, TgCanvas *self)
{
  Hit h;
  double nx, ny, cx, cy;

  if (n_press != 2 || !self->doc)
    return;
  h = hit_test (self, x, y);
  if (h.kind == HIT_FRAME)
    {
      begin_frame_edit (self, h.node);
      return;
    }
  if (h.kind != HIT_NODE)
    return;
  node_pos (self, h.node, &nx, &ny);
  to_canvas (self, x, y, &cx, &cy);
  /* A double click on the title renames, as in Blender's and Gaea's editors. */
  if (cy <= ny + HEADER_H)
    begin_rename (self, tg_graph_node_id (graph (self), h.node));
}

static void
rekey (GHashTable *t, const char *old_id, const char *new_id, gboolean has_value)
{
  gpointer key, value;

  if (!g_hash_table_steal_extended (t, old_id, &key, &value))
    return;
  g_free (key);
  if (has_value)
    g_hash_table_replace (t, g_strdup (new_id), value);
  else
    g_hash_table_add (t, g_strdup (new_id));
}

/* Selection, thumbnail and state follow a renamed node. */
static void
on_doc_renamed (TgDocument *doc, const char *old_id, const char *new_id, TgCanvas *self)
{
  rekey (self->selection, old_id, new_id, FALSE);
  rekey (self->thumbs, old_id, new_id, TRUE);
  rekey (self->states, old_id, new_id, TRUE);
  if (!g_strcmp0 (self->active, old_id))
    {
      g_free (self->active);
      self->active = g_strdup (new_id);
    }
}

static gboolean
on_scroll (GtkEventControllerScroll *c, double dx, double dy, TgCanvas *self)
{
  zoom_at (self, pow (1.12, -dy), self->pointer_x, self->pointer_y);
  return TRUE;
}

static void
on_motion (GtkEventControllerMotion *c, double x, double y, TgCanvas *self)
{
  self->pointer_x = x;
  self->pointer_y = y;
  self->pointer_in = TRUE;
  if (self->drag == DRAG_WIRE_OUT || self->drag == DRAG_WIRE_IN)
    gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_leave (GtkEventControllerMotion *c, TgCanvas *self)
{
  self->pointer_in = FALSE;
}

static gboolean
on_key_pressed (GtkEventControllerKey *c, guint keyval, guint code, GdkModifierType mods,
                TgCanvas *self)
{
  if (keyval == GDK_KEY_space)
    {
      self->space_down = TRUE;
      gtk_widget_set_cursor_from_name (GTK_WIDGET (self), "grab");
      return TRUE;
    }
  /* A selected frame goes, its nodes stay (as in Blender). */
  if ((keyval == GDK_KEY_Delete || keyval == GDK_KEY_BackSpace) && self->frame_sel >= 0
      && g_hash_table_size (self->selection) == 0)
    {
      int k = self->frame_sel;
      self->frame_sel = -1;
      tg_document_delete_frame (self->doc, k);
      return TRUE;
    }
  return FALSE;
}

static void
on_key_released (GtkEventControllerKey *c, guint keyval, guint code, GdkModifierType mods,
                 TgCanvas *self)
{
  if (keyval == GDK_KEY_space)
    {
      self->space_down = FALSE;
      if (self->drag != DRAG_PAN)
        gtk_widget_set_cursor (GTK_WIDGET (self), NULL);
    }
}

static gboolean
on_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                  gpointer data)
{
  TgCanvas *self = TG_CANVAS (widget);
  const TgGraph *g;
  const TgNodeDesc *d;
  Hit h;

  if (!self->doc || keyboard)
    return FALSE;
  g = graph (self);
  h = hit_test (self, x, y);
  if (h.kind == HIT_NONE)
    return FALSE;
  d = tg_graph_node_desc (g, h.node);
  if (h.kind == HIT_INPUT || h.kind == HIT_OUTPUT)
    {
      const TgPortDesc *p = h.kind == HIT_INPUT ? &d->inputs[h.port] : &d->outputs[h.port];
      g_autofree char *t = g_strdup_printf ("%s (%s)%s%s", g_dgettext (GETTEXT_PACKAGE, p->label),
                                            tg_port_type_name (p->type), p->help ? "\n" : "",
                                            p->help ? g_dgettext (GETTEXT_PACKAGE, p->help) : "");
      gtk_tooltip_set_text (tooltip, t);
      return TRUE;
    }
  else
    {
      const char *id = tg_graph_node_id (g, h.node);
      NodeState *st = g_hash_table_lookup (self->states, id);
      double nx, ny, cx, cy;
      node_pos (self, h.node, &nx, &ny);
      to_canvas (self, x, y, &cx, &cy);
      if (cy > ny + HEADER_H)
        return FALSE;
      if (st && st->message && (st->state == TG_NODE_FAILED || st->state == TG_NODE_SKIPPED))
        gtk_tooltip_set_text (tooltip, st->message);
      else if (st && st->state == TG_NODE_SKIPPED)
        gtk_tooltip_set_text (tooltip, _("Not evaluated: an input failed"));
      else
        {
          g_autofree char *t = g_strdup_printf ("%s — %s\n%s", g_dgettext (GETTEXT_PACKAGE,
                                                                         d->label),
                                                d->type, g_dgettext (GETTEXT_PACKAGE, d->help));
          gtk_tooltip_set_text (tooltip, t);
        }
      return TRUE;
    }
}

/* --- document ---------------------------------------------------------------- */

static void
on_doc_changed (TgDocument *doc, guint what, const char *node, TgCanvas *self)
{
  g_clear_pointer (&self->cache, cairo_surface_destroy);
  refresh_frames (self);
  prune_selection (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
tg_canvas_set_document (TgCanvas *self, TgDocument *doc)
{
  if (self->doc)
    {
      g_signal_handler_disconnect (self->doc, self->changed_id);
      g_signal_handler_disconnect (self->doc, self->renamed_id);
      g_clear_object (&self->doc);
    }
  self->doc = g_object_ref (doc);
  self->changed_id = g_signal_connect (doc, "changed", G_CALLBACK (on_doc_changed), self);
  self->renamed_id = g_signal_connect (doc, "renamed", G_CALLBACK (on_doc_renamed), self);
  g_hash_table_remove_all (self->thumbs);
  g_hash_table_remove_all (self->states);
  self->frame_sel = -1;
  refresh_frames (self);
  select_only (self, NULL);
  self->view_user = FALSE;
  self->fitted_w = self->fitted_h = 0;
  gtk_widget_queue_allocate (GTK_WIDGET (self));
  selection_changed (self);
}

/* --- actions ------------------------------------------------------------------ */

static void
action_fit (GtkWidget *w, const char *name, GVariant *param)
{
  tg_canvas_fit_all (TG_CANVAS (w));
}

static void
action_zoom (GtkWidget *w, const char *name, GVariant *param)
{
  TgCanvas *self = TG_CANVAS (w);
  double cx = gtk_widget_get_width (w) / 2.0, cy = gtk_widget_get_height (w) / 2.0;

  if (!strcmp (name, "canvas.zoom-in"))
    zoom_at (self, 1.25, cx, cy);
  else if (!strcmp (name, "canvas.zoom-out"))
    zoom_at (self, 1 / 1.25, cx, cy);
  else
    zoom_at (self, 1 / self->zoom, cx, cy);
}

static void
action_add (GtkWidget *w, const char *name, GVariant *param)
{
  TgCanvas *self = TG_CANVAS (w);

  clear_wire (self);
  if (!self->pointer_in)
    popup_add (self, gtk_widget_get_width (w) / 2.0, gtk_widget_get_height (w) / 2.0);
  else
    popup_add (self, self->pointer_x, self->pointer_y);
}

static void
action_rename (GtkWidget *w, const char *name, GVariant *param)
{
  TgCanvas *self = TG_CANVAS (w);

  if (self->active)
    begin_rename (self, self->active);
}

static void
action_select_all (GtkWidget *w, const char *name, GVariant *param)
{
  TgCanvas *self = TG_CANVAS (w);
  const TgGraph *g = graph (self);

  for (int n = 0; n < tg_graph_n_nodes (g); n++)
    g_hash_table_add (self->selection, g_strdup (tg_graph_node_id (g, n)));
  selection_changed (self);
}

/* --- class ---------------------------------------------------------------------- */

static void
tg_canvas_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  TgCanvas *self = TG_CANVAS (widget);

  if (!self->view_user && self->doc && width > 1
      && (width != self->fitted_w || height != self->fitted_h))
    tg_canvas_fit_all (self);
  gtk_popover_present (self->add_popover);
  gtk_popover_present (self->rename_popover);
  gtk_popover_present (self->frame_popover);
}

static void
tg_canvas_dispose (GObject *object)
{
  TgCanvas *self = TG_CANVAS (object);

  if (self->doc)
    {
      g_signal_handler_disconnect (self->doc, self->changed_id);
      g_signal_handler_disconnect (self->doc, self->renamed_id);
      g_clear_object (&self->doc);
    }
  gtk_widget_dispose_template (GTK_WIDGET (self), TG_TYPE_CANVAS);
  G_OBJECT_CLASS (tg_canvas_parent_class)->dispose (object);
}

static void
tg_canvas_finalize (GObject *object)
{
  TgCanvas *self = TG_CANVAS (object);

  g_hash_table_unref (self->selection);
  g_hash_table_unref (self->thumbs);
  g_hash_table_unref (self->states);
  g_free (self->active);
  g_free (self->lift_to);
  g_free (self->lift_port);
  g_free (self->wire_node);
  g_free (self->wire_port);
  g_free (self->renaming);
  tg_document_frames_free (self->frames, self->n_frames);
  g_hash_table_unref (self->frame_nodes);
  g_clear_pointer (&self->cache, cairo_surface_destroy);
  G_OBJECT_CLASS (tg_canvas_parent_class)->finalize (object);
}

static void
tg_canvas_class_init (TgCanvasClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tg_canvas_dispose;
  object_class->finalize = tg_canvas_finalize;
  widget_class->snapshot = tg_canvas_snapshot;
  widget_class->size_allocate = tg_canvas_size_allocate;

  signals[SIGNAL_SELECTION_CHANGED] = g_signal_new ("selection-changed",
                                                    G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                                    0, NULL, NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/terrane/Terrane/tg-canvas.ui");
  gtk_widget_class_bind_template_child (widget_class, TgCanvas, add_popover);
  gtk_widget_class_bind_template_child (widget_class, TgCanvas, add_search);
  gtk_widget_class_bind_template_child (widget_class, TgCanvas, add_list);
  gtk_widget_class_bind_template_child (widget_class, TgCanvas, rename_popover);
  gtk_widget_class_bind_template_child (widget_class, TgCanvas, rename_entry);
  gtk_widget_class_bind_template_callback (widget_class, rename_activate);
  gtk_widget_class_bind_template_callback (widget_class, rename_closed);
  gtk_widget_class_bind_template_callback (widget_class, primary_released);
  gtk_widget_class_bind_template_callback (widget_class, add_popover_closed);
  gtk_widget_class_bind_template_child (widget_class, TgCanvas, frame_popover);
  gtk_widget_class_bind_template_child (widget_class, TgCanvas, frame_entry);
  gtk_widget_class_bind_template_child (widget_class, TgCanvas, frame_colours);
  gtk_widget_class_bind_template_callback (widget_class, frame_title_activate);
  gtk_widget_class_bind_template_callback (widget_class, frame_popover_closed);
  gtk_widget_class_bind_template_callback (widget_class, drag_begin);
  gtk_widget_class_bind_template_callback (widget_class, drag_update);
  gtk_widget_class_bind_template_callback (widget_class, drag_end);
  gtk_widget_class_bind_template_callback (widget_class, secondary_pressed);
  gtk_widget_class_bind_template_callback (widget_class, on_scroll);
  gtk_widget_class_bind_template_callback (widget_class, on_motion);
  gtk_widget_class_bind_template_callback (widget_class, on_leave);
  gtk_widget_class_bind_template_callback (widget_class, on_key_pressed);
  gtk_widget_class_bind_template_callback (widget_class, on_key_released);
  gtk_widget_class_bind_template_callback (widget_class, on_query_tooltip);
  gtk_widget_class_bind_template_callback (widget_class, add_row_activated);
  gtk_widget_class_bind_template_callback (widget_class, add_search_changed);
  gtk_widget_class_bind_template_callback (widget_class, add_search_activate);
  gtk_widget_class_bind_template_callback (widget_class, add_search_key);

  gtk_widget_class_install_action (widget_class, "canvas.fit", NULL, action_fit);
  gtk_widget_class_install_action (widget_class, "canvas.zoom-in", NULL, action_zoom);
  gtk_widget_class_install_action (widget_class, "canvas.zoom-out", NULL, action_zoom);
  gtk_widget_class_install_action (widget_class, "canvas.zoom-reset", NULL, action_zoom);
  gtk_widget_class_install_action (widget_class, "canvas.add-node", NULL, action_add);
  gtk_widget_class_install_action (widget_class, "canvas.select-all", NULL, action_select_all);
  gtk_widget_class_install_action (widget_class, "canvas.rename", NULL, action_rename);
  gtk_widget_class_install_action (widget_class, "canvas.frame", NULL, action_frame);
  gtk_widget_class_set_css_name (widget_class, "tgcanvas");
}

static void
tg_canvas_init (TgCanvas *self)
{
  self->zoom = 1;
  self->selection = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->thumbs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                        (GDestroyNotify) cairo_surface_destroy);
  self->states = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, node_state_free);
  self->frame_nodes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->frame_sel = self->frame_editing = -1;
  gtk_widget_init_template (GTK_WIDGET (self));
  fill_add_list (self);
  fill_frame_colours (self);
}
