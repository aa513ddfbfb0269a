/* TgCanvas's insides, shared by tg-canvas.c (the widget, selection, view,
 * document) and its parts: -draw.c, -gestures.c, -add.c (the add-node
 * popover) and -frames.c, the way gnome-text-editor splits its window. */
#pragma once

#include "tg-canvas.h"
#include "tg-node-menu.h"
#include "tg-canvas-geometry.h"

G_BEGIN_DECLS

#define NODE_W TG_CANVAS_NODE_W
#define HEADER_H TG_CANVAS_HEADER_H
#define PORT_H TG_CANVAS_PORT_H
#define THUMB TG_CANVAS_THUMB
#define PORT_R 5.0
#define ZOOM_MIN 0.2
#define ZOOM_MAX 3.0
#define FRAME_HEADER 30.0
#define FRAME_GRIP 16.0


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
  gboolean selection_pending; /* changed by a press; said on release */
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

  GtkWidget *node_menu;    /* right-click on a node (tg-node-menu.c) */

  /* During a move, everything but what moves: drawn once, repaired where
   * a node's look changes (cache_dirty, widget coordinates), and handed to
   * GTK as one render node kept from frame to frame: the GL renderer
   * keeps its texture, and the cairo renderer finds nothing changed. */
  cairo_surface_t *cache;
  GskRenderNode *cache_node;
  cairo_region_t *cache_dirty;
  double cache_view[5];    /* off_x, off_y, zoom, width, height it was drawn at */
};

#define node_has_thumb tg_canvas_node_has_thumb
#define node_height tg_canvas_node_height

/* In tg-canvas.c */
const TgGraph *tg_canvas__graph (TgCanvas *self);
gboolean tg_canvas__is_dragged (TgCanvas *self, const char *id);
void tg_canvas__frame_box (TgCanvas *self, int k, double *x, double *y, double *w, double *h);
void tg_canvas__node_pos (TgCanvas *self, int n, double *x, double *y);
void tg_canvas__port_pos (TgCanvas *self, int n, gboolean output, int port, double *x, double *y);
void tg_canvas__to_canvas (TgCanvas *self, double wx, double wy, double *cx, double *cy);
Hit tg_canvas__hit_test (TgCanvas *self, double wx, double wy);
void tg_canvas__selection_changed (TgCanvas *self);
void tg_canvas__select_only (TgCanvas *self, const char *id);
void tg_canvas__zoom_at (TgCanvas *self, double factor, double wx, double wy);
void tg_canvas__begin_rename (TgCanvas *self, const char *id);

/* In tg-canvas-draw.c */
void tg_canvas__rounded_rect (cairo_t *cr, double x, double y, double w, double h, double r);
gboolean tg_canvas__input_is_lifted (TgCanvas *self, int n, int p);
gboolean tg_canvas__port_accepts_drag (TgCanvas *self, int n, gboolean output, int p);
void tg_canvas__log_event (const char *event);
void tg_canvas__snapshot (GtkWidget *widget, GtkSnapshot *snapshot);
void tg_canvas__drop_cache (TgCanvas *self);
void tg_canvas__damage_cache (TgCanvas *self, double x, double y, double w, double h);

/* In tg-canvas-gestures.c */
void tg_canvas__report_error (TgCanvas *self, GError *error);
void tg_canvas__drag_begin (GtkGestureDrag *gesture, double x, double y, TgCanvas *self);
void tg_canvas__drag_update (GtkGestureDrag *gesture, double dx, double dy, TgCanvas *self);
void tg_canvas__drag_end (GtkGestureDrag *gesture, double dx, double dy, TgCanvas *self);
void tg_canvas__secondary_pressed (GtkGestureClick *gesture, int n_press, double x, double y,
                                   TgCanvas *self);
void tg_canvas__primary_released (GtkGestureClick *gesture, int n_press, double x, double y,
                                  TgCanvas *self);
gboolean tg_canvas__on_scroll (GtkEventControllerScroll *c, double dx, double dy, TgCanvas *self);
void tg_canvas__on_motion (GtkEventControllerMotion *c, double x, double y, TgCanvas *self);
void tg_canvas__on_leave (GtkEventControllerMotion *c, TgCanvas *self);
gboolean tg_canvas__on_key_pressed (GtkEventControllerKey *c, guint keyval, guint code,
                                    GdkModifierType mods, TgCanvas *self);
void tg_canvas__on_key_released (GtkEventControllerKey *c, guint keyval, guint code,
                                 GdkModifierType mods, TgCanvas *self);
gboolean tg_canvas__on_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard,
                                      GtkTooltip *tooltip, gpointer data);

/* In tg-canvas-add.c */
void tg_canvas__popup_add (TgCanvas *self, double wx, double wy);
void tg_canvas__clear_wire (TgCanvas *self);
void tg_canvas__add_row_activated (GtkListBox *box, GtkListBoxRow *row, TgCanvas *self);
void tg_canvas__add_popover_closed (GtkPopover *p, TgCanvas *self);
void tg_canvas__add_search_changed (GtkSearchEntry *entry, TgCanvas *self);
void tg_canvas__add_search_activate (GtkSearchEntry *entry, TgCanvas *self);
gboolean tg_canvas__add_search_key (GtkEventControllerKey *c, guint keyval, guint code,
                                    GdkModifierType mods, TgCanvas *self);
void tg_canvas__fill_add_list (TgCanvas *self);

/* In tg-canvas-frames.c */
void tg_canvas__refresh_frames (TgCanvas *self);
void tg_canvas__begin_frame_edit (TgCanvas *self, int k);
void tg_canvas__frame_title_activate (GtkEntry *entry, TgCanvas *self);
void tg_canvas__frame_popover_closed (GtkPopover *p, TgCanvas *self);
void tg_canvas__fill_frame_colours (TgCanvas *self);
void tg_canvas__action_frame (GtkWidget *w, const char *name, GVariant *param);

G_END_DECLS
