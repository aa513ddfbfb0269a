/* The canvas's hit test over the document's nodes (see tg-canvas-geometry.h). */
#include "config.h"

#include "tg-canvas-geometry.h"

#include <math.h>

gboolean
tg_canvas_node_has_thumb (const TgNodeDesc *d)
{
  return (d->n_outputs > 0 && tg_port_type_is_grid (d->outputs[0].type))
         || (d->n_outputs == 0 && d->n_inputs > 0 && tg_port_type_is_grid (d->inputs[0].type));
}

double
tg_canvas_node_height (const TgNodeDesc *d)
{
  int rows = MAX (d->n_inputs, d->n_outputs);
  return TG_CANVAS_HEADER_H + 6 + rows * TG_CANVAS_PORT_H
         + (tg_canvas_node_has_thumb (d) ? TG_CANVAS_THUMB + 12 : 6);
}

static void
position (TgDocument *doc, const TgGraph *g, int n, GHashTable *moving, double mdx, double mdy,
          double *x, double *y)
{
  tg_document_get_position_at (doc, n, x, y);
  if (moving && g_hash_table_contains (moving, tg_graph_node_id (g, n)))
    {
      *x += mdx;
      *y += mdy;
    }
}

TgCanvasHit
tg_canvas_hit_nodes (TgDocument *doc, double cx, double cy, GHashTable *moving, double mdx,
                     double mdy)
{
  const TgGraph *g = tg_document_get_graph (doc);
  int count = tg_graph_n_nodes (g);

  for (int n = count - 1; n >= 0; n--)
    {
      const TgNodeDesc *d = tg_graph_node_desc (g, n);
      double x, y, py;
      int port;

      position (doc, g, n, moving, mdx, mdy, &x, &y);
      /* Ports sit on the left and right edges, one row each. */
      port = (int) floor ((cy - y - TG_CANVAS_HEADER_H - 6) / TG_CANVAS_PORT_H);
      for (int k = port - 1; k <= port + 1; k++)
        {
          if (k < 0)
            continue;
          py = y + TG_CANVAS_HEADER_H + 6 + k * TG_CANVAS_PORT_H + TG_CANVAS_PORT_H / 2;
          if (k < d->n_inputs && hypot (cx - x, cy - py) <= TG_CANVAS_PORT_HIT)
            return (TgCanvasHit) { TG_CANVAS_HIT_INPUT, n, k };
          if (k < d->n_outputs && hypot (cx - x - TG_CANVAS_NODE_W, cy - py) <= TG_CANVAS_PORT_HIT)
            return (TgCanvasHit) { TG_CANVAS_HIT_OUTPUT, n, k };
        }
    }
  for (int n = count - 1; n >= 0; n--)
    {
      double x, y;
      position (doc, g, n, moving, mdx, mdy, &x, &y);
      if (cx >= x && cx <= x + TG_CANVAS_NODE_W && cy >= y
          && cy <= y + tg_canvas_node_height (tg_graph_node_desc (g, n)))
        return (TgCanvasHit) { TG_CANVAS_HIT_NODE, n, -1 };
    }
  return (TgCanvasHit) { TG_CANVAS_HIT_NONE, -1, -1 };
}
