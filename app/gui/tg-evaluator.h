/* TgEvaluator: evaluates snapshots of a document off the main thread.
 *
 * One per window, owning one long-lived TgEngine, so the engine's cache
 * persists between edits and only the edited node and what lies
 * downstream recompute.  A request cancels the running job (through a
 * GCancellable mapped to the engine's TgCancel) and starts again once it
 * stopped.  Results come back on the main thread as signals:
 *
 *   preview (job, node id, TgValue *, request time)   the selected output
 *   thumbnail (node id, cairo_surface_t *)             a node's small image
 *   node-state (node id, TgNodeState, message,         per node, as they finish;
 *               details)                               a failure's message in the
 *                                                      user's terms, details the
 *                                                      engine's (JSON path) or NULL;
 *                                                      for a node done or cached,
 *                                                      its warning (or NULL)
 *   progress (node id, fraction)                        a running node
 *   finished (job, cancelled)
 *   backdrop (job, node id, TgValue * or NULL)         just before a mask's or
 *                                                      instances' preview: the
 *                                                      height (or image) upstream
 *   proto-colours (job, node id, char **names,         just before each backdrop:
 *                  float *rgb, n)                      the paint colours (sRGB
 *                                                      0..1, 3 per name, dark
 *                                                      ones lightened) of the
 *                                                      instances' prototypes from
 *                                                      scatter.colormap palettes
 *                                                      upstream; n = 0 for none
 *
 * Pointers passed to handlers are borrowed for the emission.
 */
#pragma once

#include <cairo.h>
#include <gio/gio.h>
#include <glib/gi18n.h>
#include <tgraph/tgraph.h>

G_BEGIN_DECLS

#define TG_TYPE_EVALUATOR (tg_evaluator_get_type ())
G_DECLARE_FINAL_TYPE (TgEvaluator, tg_evaluator, TG, EVALUATOR, GObject)

TgEvaluator *tg_evaluator_new (void);

/* Evaluates GRAPH (taken) at PREVIEW_RES samples for output 0 of the node
 * PREVIEW_ID (may be NULL) and at THUMB_RES for every node's thumbnail.
 * REQUEST_TIME (g_get_monotonic_time) is handed back with the preview.
 * Returns the job number. */
guint tg_evaluator_request (TgEvaluator *ev, TgGraph *graph, const char *preview_id,
                            int preview_res, int thumb_res, gint64 request_time);
void tg_evaluator_cancel (TgEvaluator *ev);
gboolean tg_evaluator_is_busy (TgEvaluator *ev);
guint tg_evaluator_last_job (TgEvaluator *ev);

/* A thumbnail of grid value V: ARGB32, about SIZE pixels on its long side. */
cairo_surface_t *tg_evaluator_render_thumbnail (const TgValue *v, int size);

G_END_DECLS
