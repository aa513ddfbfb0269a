/* The canvas's geometry, without widgets: node and port sizes in canvas
 * units and the hit test over the document's nodes, so that tests and
 * benchmarks run it headless (it lives in the terrane-doc library). */
#pragma once

#include "tg-document.h"

G_BEGIN_DECLS

#define TG_CANVAS_NODE_W 168.0
#define TG_CANVAS_HEADER_H 24.0
#define TG_CANVAS_PORT_H 21.0
#define TG_CANVAS_THUMB 84.0
#define TG_CANVAS_PORT_HIT 10.0

typedef enum
{
  TG_CANVAS_HIT_NONE,
  TG_CANVAS_HIT_NODE,
  TG_CANVAS_HIT_INPUT,
  TG_CANVAS_HIT_OUTPUT,
  TG_CANVAS_HIT_FRAME,        /* a frame's title band (node = the frame's index) */
  TG_CANVAS_HIT_FRAME_RESIZE, /* its bottom-right corner */
} TgCanvasHitKind;

typedef struct
{
  TgCanvasHitKind kind;
  int node, port;
} TgCanvasHit;

/* Whether D's node shows a thumbnail of its output. */
gboolean tg_canvas_node_has_thumb (const TgNodeDesc *d);
/* The height of D's node in canvas units (its width is TG_CANVAS_NODE_W). */
double tg_canvas_node_height (const TgNodeDesc *d);

/* The port or node of DOC at canvas point (CX, CY): ports first (they
 * overhang the node edges), the topmost (last drawn) node first.  The
 * nodes in MOVING (ids, or NULL) are taken to be offset by (MDX, MDY).
 * A hit test reads the document's typed positions: no JSON, no lookups
 * by id unless MOVING is given. */
TgCanvasHit tg_canvas_hit_nodes (TgDocument *doc, double cx, double cy, GHashTable *moving,
                                 double mdx, double mdy);

G_END_DECLS
