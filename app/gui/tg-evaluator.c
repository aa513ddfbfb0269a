/* TgEvaluator: background evaluation of document snapshots.
 *
 * A job runs in a GTask thread: first the previewed output (what the user
 * is looking at), then every node's thumbnail at a small resolution.  The
 * engine runs one evaluation at a time, so a new request cancels the
 * running job and waits for it to stop before it starts.  Worker threads
 * never touch GObjects: they post messages that an idle callback on the
 * main context turns into signals.
 */
#include "config.h"

#include "tg-evaluator.h"
#include "tg-messages.h"

#include <math.h>
#include <string.h>

typedef struct
{
  guint job;
  TgGraph *graph;
  char *preview_id;
  int preview_res, thumb_res;
  gint64 request_time;
  TgCancel *cancel;
} Job;

struct _TgEvaluator
{
  GObject parent_instance;

  TgEngine *engine;
  guint next_job;
  Job *running;      /* owned by the task while it runs */
  GCancellable *cancellable;
  Job *pending;      /* the newest request while one is running */

  /* Messages from the worker, drained on the main context. */
  GMutex lock;
  GQueue messages;
  guint idle_id;
  /* Progress is the latest only, not queued: the hook fires often. */
  char *progress_node;
  double progress_fraction;
  gboolean progress_dirty;
};

enum
{
  MSG_PREVIEW,
  MSG_THUMBNAIL,
  MSG_NODE_STATE,
  MSG_BACKDROP,
};

typedef struct
{
  int kind;
  guint job;
  char *node_id;
  TgValue *value;
  cairo_surface_t *thumb;
  int state;
  char *message;
  char *details; /* MSG_NODE_STATE: the engine's path and wording, or NULL */
  gint64 request_time;
  /* MSG_BACKDROP: the paint colours of the shown instances' prototypes. */
  char **colour_names;
  float *colour_rgb;
  int n_colours;
} Msg;

enum
{
  SIGNAL_PREVIEW,
  SIGNAL_THUMBNAIL,
  SIGNAL_NODE_STATE,
  SIGNAL_PROGRESS,
  SIGNAL_FINISHED,
  SIGNAL_BACKDROP,
  SIGNAL_PROTO_COLOURS,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (TgEvaluator, tg_evaluator, G_TYPE_OBJECT)

static void
job_free (Job *j)
{
  if (!j)
    return;
  tg_graph_free (j->graph);
  g_free (j->preview_id);
  tg_cancel_free (j->cancel);
  g_free (j);
}

static void
msg_free (Msg *m)
{
  g_free (m->node_id);
  if (m->value)
    tg_value_unref (m->value);
  if (m->thumb)
    cairo_surface_destroy (m->thumb);
  g_free (m->message);
  g_free (m->details);
  g_strfreev (m->colour_names);
  g_free (m->colour_rgb);
  g_free (m);
}

static gboolean
drain (gpointer data)
{
  TgEvaluator *ev = data;
  GQueue q = G_QUEUE_INIT;
  char *pnode = NULL;
  double pfrac = 0;
  gboolean pdirty;
  Msg *m;

  g_mutex_lock (&ev->lock);
  q = ev->messages;
  g_queue_init (&ev->messages);
  pdirty = ev->progress_dirty;
  if (pdirty)
    {
      pnode = ev->progress_node;
      ev->progress_node = NULL;
      pfrac = ev->progress_fraction;
      ev->progress_dirty = FALSE;
    }
  ev->idle_id = 0;
  g_mutex_unlock (&ev->lock);

  while ((m = g_queue_pop_head (&q)))
    {
      switch (m->kind)
        {
        case MSG_PREVIEW:
          g_signal_emit (ev, signals[SIGNAL_PREVIEW], 0, m->job, m->node_id, m->value,
                         m->request_time);
          break;
        case MSG_THUMBNAIL:
          g_signal_emit (ev, signals[SIGNAL_THUMBNAIL], 0, m->node_id, m->thumb);
          break;
        case MSG_NODE_STATE:
          g_signal_emit (ev, signals[SIGNAL_NODE_STATE], 0, m->node_id, m->state, m->message,
                         m->details);
          break;
        case MSG_BACKDROP:
          g_signal_emit (ev, signals[SIGNAL_PROTO_COLOURS], 0, m->job, m->node_id,
                         m->colour_names, m->colour_rgb, m->n_colours);
          g_signal_emit (ev, signals[SIGNAL_BACKDROP], 0, m->job, m->node_id, m->value);
          break;
        }
      msg_free (m);
    }
  if (pdirty)
    g_signal_emit (ev, signals[SIGNAL_PROGRESS], 0, pnode, pfrac);
  g_free (pnode);
  return G_SOURCE_REMOVE;
}

/* Any thread.  Schedules the drain unless one is pending. */
static void
post_locked (TgEvaluator *ev)
{
  if (!ev->idle_id)
    ev->idle_id = g_idle_add_full (G_PRIORITY_DEFAULT, drain, g_object_ref (ev),
                                   g_object_unref);
}

static void
post (TgEvaluator *ev, Msg *m)
{
  g_mutex_lock (&ev->lock);
  g_queue_push_tail (&ev->messages, m);
  post_locked (ev);
  g_mutex_unlock (&ev->lock);
}

typedef struct
{
  TgEvaluator *ev;
  const TgGraph *g;
} HookData;

static void
on_progress (void *user, int node, TgNodeState state, double fraction)
{
  HookData *h = user;
  TgEvaluator *ev = h->ev;

  g_mutex_lock (&ev->lock);
  /* A node that stopped is no longer running: its pending progress would
   * land after its state (posted once per pass) and leave a failed node
   * looking stuck at 0 %. */
  if (state != TG_NODE_RUNNING)
    {
      if (ev->progress_dirty && !g_strcmp0 (ev->progress_node, tg_graph_node_id (h->g, node)))
        ev->progress_dirty = FALSE;
      g_mutex_unlock (&ev->lock);
      return;
    }
  g_free (ev->progress_node);
  ev->progress_node = g_strdup (tg_graph_node_id (h->g, node));
  ev->progress_fraction = fraction;
  ev->progress_dirty = TRUE;
  post_locked (ev);
  g_mutex_unlock (&ev->lock);
}

/* "Curve needs an input: connect a height to it", by the input's type. */
static const char *const missing_input[TG_TYPE_COUNT] = {
  [TG_TYPE_HEIGHT] = N_("%s needs an input: connect a height to it"),
  [TG_TYPE_MASK] = N_("%s needs an input: connect a mask to it"),
  [TG_TYPE_IMAGE] = N_("%s needs an input: connect an image to it"),
  [TG_TYPE_LAYERS] = N_("%s needs an input: connect layers to it"),
  [TG_TYPE_FIELD] = N_("%s needs an input: connect a field to it"),
  [TG_TYPE_MESH] = N_("%s needs an input: connect a mesh to it"),
  [TG_TYPE_POINTS] = N_("%s needs an input: connect instances to it"),
};

/* Why a graph was refused before it ran, in the user's terms: the
 * validator's wording names JSON paths and type ids.  Returns a new
 * string; falls back to the engine's message. */
static char *
describe_refusal (const TgGraph *g, const TgError *err)
{
  int n = err->node_id[0] ? tg_graph_find_node (g, err->node_id) : -1;
  const char *port = strstr (err->path, ".inputs.");
  const TgNodeDesc *d = n >= 0 ? tg_graph_node_desc (g, n) : NULL;

  if (err->code == TG_EMISSING && d && port)
    for (int k = 0; k < d->n_inputs; k++)
      if (!strcmp (d->inputs[k].name, port + strlen (".inputs."))
          && missing_input[d->inputs[k].type])
        return g_strdup_printf (_(missing_input[d->inputs[k].type]),
                                g_dgettext (GETTEXT_PACKAGE, d->label));
  return tg_message_translate (err->message);
}

/* Posts the state of every node REPORT saw, with failure messages. */
static void
post_report (TgEvaluator *ev, Job *j, const TgEvalReport *r, int pulled, int rc,
             const TgError *err, gboolean *seen)
{
  for (int n = 0; n < r->n_nodes; n++)
    {
      Msg *m;
      if (r->state[n] == TG_NODE_IDLE || seen[n])
        continue;
      seen[n] = TRUE;
      m = g_new0 (Msg, 1);
      m->kind = MSG_NODE_STATE;
      m->job = j->job;
      m->node_id = g_strdup (tg_graph_node_id (j->graph, n));
      m->state = r->state[n];
      m->message = r->message ? tg_message_translate (r->message[n]) : NULL;
      /* A node that ran carries its warning, if any, as its message. */
      if (!m->message && r->warning
          && (r->state[n] == TG_NODE_DONE || r->state[n] == TG_NODE_CACHED))
        m->message = tg_message_translate (r->warning[n]);
      post (ev, m);
    }
  /* Refused before any node ran (an unlinked input): the message is on
   * the pulled node. */
  if (rc < 0 && rc != TG_ECANCELLED && tg_eval_report_first_failure (r) < 0 && !seen[pulled])
    {
      Msg *m = g_new0 (Msg, 1);
      char buf[TG_ERROR_MESSAGE_MAX + TG_ERROR_PATH_MAX + 8];
      seen[pulled] = TRUE;
      m->kind = MSG_NODE_STATE;
      m->job = j->job;
      m->node_id = g_strdup (tg_graph_node_id (j->graph, pulled));
      m->state = TG_NODE_FAILED;
      m->details = tg_message_translate (tg_error_format (err, buf, sizeof buf));
      m->message = describe_refusal (j->graph, err);
      post (ev, m);
    }
}

/* The node whose output 0 shows for node N: itself, or for a node with
 * no outputs (an export) what feeds its first input. */
static int
shown_node (const TgGraph *g, int n)
{
  const TgNodeDesc *d = tg_graph_node_desc (g, n);
  int l;

  if (d->n_outputs > 0)
    return n;
  if (d->n_inputs == 0 || (l = tg_graph_input_link (g, n, 0)) < 0)
    return -1;
  return tg_graph_link (g, l)->from_node;
}

static int
pull (TgEvaluator *ev, Job *j, int n, int res, TgValue **out, gboolean *seen)
{
  HookData h = { ev, j->graph };
  TgEvalHooks hooks = { .progress = on_progress, .user = &h, .cancel = j->cancel };
  TgEvalReport report = { 0 };
  TgError err = { 0 };
  TgRegion region;
  const TgNodeDesc *d = tg_graph_node_desc (j->graph, n);
  int rc;

  *out = NULL;
  /* Grids, instances for the 2D viewer's dots, meshes for the 3D view. */
  if (d->n_outputs == 0
      || !(tg_port_type_is_grid (d->outputs[0].type) || d->outputs[0].type == TG_TYPE_POINTS
           || d->outputs[0].type == TG_TYPE_MESH))
    return 0;
  tg_region_for_world (&region, tg_graph_world_const (j->graph), res);
  rc = tg_engine_pull (ev->engine, j->graph, n, 0, &region, &hooks, out, &report, &err);
  post_report (ev, j, &report, n, rc, &err, seen);
  tg_eval_report_clear (&report);
  return rc;
}

/* What the 2D viewer draws under a mask or instances of node N: the
 * nearest height upstream (breadth first, inputs in order), else the
 * nearest image (a scatter's distribution map), else any grid.  -1: none. */
static int
backdrop_node (const TgGraph *g, int n)
{
  int count = tg_graph_n_nodes (g), best = -1, best_rank = 3;
  g_autofree int *queue = g_new (int, count + 1);
  g_autofree gboolean *seen = g_new0 (gboolean, count + 1);
  int head = 0, tail = 0;

  queue[tail++] = n;
  seen[n] = TRUE;
  while (head < tail)
    {
      int m = queue[head++];
      const TgNodeDesc *d = tg_graph_node_desc (g, m);
      if (m != n && d->n_outputs > 0)
        {
          TgPortType t = d->outputs[0].type;
          int rank = t == TG_TYPE_HEIGHT ? 0 : t == TG_TYPE_IMAGE ? 1
                     : tg_port_type_is_grid (t) ? 2 : 3;
          if (rank == 0)
            return m;
          if (rank < best_rank)
            best = m, best_rank = rank;
        }
      for (int p = 0; p < d->n_inputs; p++)
        {
          int l = tg_graph_input_link (g, m, p);
          int from = l >= 0 ? tg_graph_link (g, l)->from_node : -1;
          if (from >= 0 && !seen[from])
            {
              seen[from] = TRUE;
              queue[tail++] = from;
            }
        }
    }
  return best;
}

/* Index of field NAME in list parameter D's items, or -1. */
static int
item_field (const TgParamDesc *d, const char *name)
{
  for (int k = 0; k < d->n_item_params; k++)
    if (!strcmp (d->item_params[k].name, name))
      return k;
  return -1;
}

/* A paint colour made visible as a marker: black or very dark paint
 * (a valid palette colour in plain palette mode) keeps its hue and is
 * lifted to a brightness that reads on a dark terrain. */
static void
visible_colour (const double *c, float *out)
{
  double m = MAX (c[0], MAX (c[1], c[2])), lo = 0.6;

  for (int k = 0; k < 3; k++)
    out[k] = (float) (m <= 0 ? lo : m < lo ? CLAMP (c[k], 0, 1) * lo / m : CLAMP (c[k], 0, 1));
}

/* The paint colours of the prototypes that reach the instances of node
 * N from scatter.colormap palettes, walking up through instance nodes
 * (points.filter, points.merge...) breadth first, inputs in order; the
 * first colour found for a name wins.  Prototypes from other scatters
 * get none (the viewers use their fixed hues). */
static void
proto_colours (const TgGraph *g, int n, Msg *b)
{
  int count = tg_graph_n_nodes (g);
  g_autofree int *queue = g_new (int, count + 1);
  g_autofree gboolean *seen = g_new0 (gboolean, count + 1);
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  g_autoptr (GArray) rgb = g_array_new (FALSE, FALSE, sizeof (float));
  int head = 0, tail = 0;

  queue[tail++] = n;
  seen[n] = TRUE;
  while (head < tail)
    {
      int m = queue[head++];
      const TgNodeDesc *d = tg_graph_node_desc (g, m);
      if (!strcmp (d->type, "scatter.colormap"))
        {
          const TgParamValue *pal = tg_graph_get_param (g, m, "palette");
          const TgParamDesc *pd = NULL;
          for (int k = 0; k < d->n_params; k++)
            if (!strcmp (d->params[k].name, "palette"))
              pd = &d->params[k];
          int fn = pd ? item_field (pd, "name") : -1, fc = pd ? item_field (pd, "color") : -1;
          for (int i = 0; pal && fn >= 0 && fc >= 0 && i < pal->n_items; i++)
            {
              const TgParamValue *name = tg_param_list_field (pal, i, fn);
              const TgParamValue *col = tg_param_list_field (pal, i, fc);
              gboolean dup = FALSE;
              float c[3];
              if (!name || !name->s || !col)
                continue;
              for (guint k = 0; k < names->len && !dup; k++)
                dup = !strcmp (names->pdata[k], name->s);
              if (dup)
                continue;
              g_ptr_array_add (names, g_strdup (name->s));
              visible_colour (col->v, c);
              g_array_append_vals (rgb, c, 3);
            }
          continue; /* its inputs are grids */
        }
      for (int p = 0; p < d->n_inputs; p++)
        {
          int l = tg_graph_input_link (g, m, p);
          int from = l >= 0 ? tg_graph_link (g, l)->from_node : -1;
          const TgNodeDesc *fd = from >= 0 ? tg_graph_node_desc (g, from) : NULL;
          if (fd && !seen[from] && fd->n_outputs > 0
              && fd->outputs[tg_graph_link (g, l)->from_port].type == TG_TYPE_POINTS)
            {
              seen[from] = TRUE;
              queue[tail++] = from;
            }
        }
    }
  b->n_colours = (int) names->len;
  g_ptr_array_add (names, NULL);
  b->colour_names = (char **) g_ptr_array_steal (names, NULL);
  b->colour_rgb = (float *) (void *) g_array_free (g_steal_pointer (&rgb), FALSE);
}

/* Masks and instances are shown over the terrain they belong to (and in
 * 3D, images and splats are draped over it); the backdrop message always
 * comes just before its preview (NULL: none). */
static void
post_backdrop (TgEvaluator *ev, Job *j, int shown, const TgValue *v, gboolean *seen)
{
  Msg *b = g_new0 (Msg, 1);
  int bn = v->type == TG_TYPE_MASK || v->type == TG_TYPE_POINTS || v->type == TG_TYPE_IMAGE
                   || v->type == TG_TYPE_LAYERS
               ? backdrop_node (j->graph, shown)
               : -1;

  b->kind = MSG_BACKDROP;
  b->job = j->job;
  b->node_id = g_strdup (j->preview_id);
  if (v->type == TG_TYPE_POINTS)
    proto_colours (j->graph, shown, b);
  if (bn >= 0)
    pull (ev, j, bn, j->preview_res, &b->value, seen);
  post (ev, b);
}

static void
run_job (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  TgEvaluator *ev = source;
  Job *j = task_data;
  int n_nodes = tg_graph_n_nodes (j->graph);
  gboolean *seen_preview = g_new0 (gboolean, n_nodes + 1);
  gboolean *seen_thumb = g_new0 (gboolean, n_nodes + 1);
  int shown = -1, rc = 0;

  if (j->preview_id)
    {
      int n = tg_graph_find_node (j->graph, j->preview_id);
      shown = n >= 0 ? shown_node (j->graph, n) : -1;
    }
  if (shown >= 0)
    {
      TgValue *v = NULL;
      rc = pull (ev, j, shown, j->preview_res, &v, seen_preview);
      if (rc == 0 && v)
        {
          Msg *m;
          post_backdrop (ev, j, shown, v, seen_preview);
          m = g_new0 (Msg, 1);
          m->kind = MSG_PREVIEW;
          m->job = j->job;
          m->node_id = g_strdup (j->preview_id);
          m->value = v;
          m->request_time = j->request_time;
          post (ev, m);
        }
    }
  /* Thumbnails in file order; each one posts as soon as it exists. */
  for (int n = 0; n < n_nodes && !tg_cancel_is_requested (j->cancel); n++)
    {
      const TgNodeDesc *d = tg_graph_node_desc (j->graph, n);
      TgValue *v = NULL;
      if (d->n_outputs > 0 && !tg_port_type_is_grid (d->outputs[0].type))
        continue;
      if (pull (ev, j, n, j->thumb_res, &v, seen_thumb) == 0 && v)
        {
          Msg *m = g_new0 (Msg, 1);
          m->kind = MSG_THUMBNAIL;
          m->job = j->job;
          m->node_id = g_strdup (tg_graph_node_id (j->graph, n));
          m->thumb = tg_evaluator_render_thumbnail (v, 96);
          tg_value_unref (v);
          post (ev, m);
        }
    }
  /* Export nodes have no output of their own: they show what they write,
   * and take their state from the thumbnail pass. */
  g_free (seen_preview);
  g_free (seen_thumb);
  g_task_return_boolean (task, !tg_cancel_is_requested (j->cancel));
}

static void start_job (TgEvaluator *ev, Job *j);

static void
on_job_done (GObject *source, GAsyncResult *res, gpointer data)
{
  TgEvaluator *ev = TG_EVALUATOR (source);
  GTask *task = G_TASK (res);
  Job *j = g_task_get_task_data (task);
  guint job = j->job;
  gboolean cancelled = tg_cancel_is_requested (j->cancel);

  (void) data;
  /* Deliver what the worker posted before saying it finished. */
  drain (ev);
  ev->running = NULL;
  g_clear_object (&ev->cancellable);
  g_signal_emit (ev, signals[SIGNAL_FINISHED], 0, job, cancelled);
  if (ev->pending)
    {
      Job *next = ev->pending;
      ev->pending = NULL;
      start_job (ev, next);
    }
}

static void
on_cancelled (GCancellable *c, gpointer data)
{
  tg_cancel_request (data);
}

static void
start_job (TgEvaluator *ev, Job *j)
{
  g_autoptr (GTask) task = NULL;

  ev->running = j;
  ev->cancellable = g_cancellable_new ();
  /* The engine polls its own token; the cancellable is what GTask and the
   * UI hold. */
  g_cancellable_connect (ev->cancellable, G_CALLBACK (on_cancelled), j->cancel, NULL);
  task = g_task_new (ev, ev->cancellable, on_job_done, NULL);
  g_task_set_task_data (task, j, (GDestroyNotify) job_free);
  g_task_set_return_on_cancel (task, FALSE);
  g_task_run_in_thread (task, run_job);
}

guint
tg_evaluator_request (TgEvaluator *ev, TgGraph *graph, const char *preview_id, int preview_res,
                      int thumb_res, gint64 request_time)
{
  Job *j = g_new0 (Job, 1);

  j->job = ++ev->next_job;
  j->graph = graph;
  j->preview_id = g_strdup (preview_id);
  j->preview_res = preview_res;
  j->thumb_res = thumb_res;
  j->request_time = request_time;
  j->cancel = tg_cancel_new ();
  if (ev->running)
    {
      job_free (ev->pending);
      ev->pending = j;
      g_cancellable_cancel (ev->cancellable);
    }
  else
    start_job (ev, j);
  return j->job;
}

void
tg_evaluator_cancel (TgEvaluator *ev)
{
  g_clear_pointer (&ev->pending, job_free);
  if (ev->cancellable)
    g_cancellable_cancel (ev->cancellable);
}

gboolean
tg_evaluator_is_busy (TgEvaluator *ev)
{
  return ev->running != NULL || ev->pending != NULL;
}

guint
tg_evaluator_last_job (TgEvaluator *ev)
{
  return ev->next_job;
}

static void
tg_evaluator_dispose (GObject *object)
{
  TgEvaluator *ev = TG_EVALUATOR (object);

  tg_evaluator_cancel (ev);
  G_OBJECT_CLASS (tg_evaluator_parent_class)->dispose (object);
}

static void
tg_evaluator_finalize (GObject *object)
{
  TgEvaluator *ev = TG_EVALUATOR (object);

  /* The task holds a reference while it runs, so nothing runs now. */
  tg_engine_free (ev->engine);
  g_queue_clear_full (&ev->messages, (GDestroyNotify) msg_free);
  g_free (ev->progress_node);
  g_mutex_clear (&ev->lock);
  G_OBJECT_CLASS (tg_evaluator_parent_class)->finalize (object);
}

static void
tg_evaluator_class_init (TgEvaluatorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = tg_evaluator_dispose;
  object_class->finalize = tg_evaluator_finalize;

  signals[SIGNAL_PREVIEW] = g_signal_new ("preview", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 4, G_TYPE_UINT,
                                          G_TYPE_STRING, G_TYPE_POINTER, G_TYPE_INT64);
  signals[SIGNAL_THUMBNAIL] = g_signal_new ("thumbnail", G_TYPE_FROM_CLASS (klass),
                                            G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE,
                                            2, G_TYPE_STRING, G_TYPE_POINTER);
  signals[SIGNAL_NODE_STATE] = g_signal_new ("node-state", G_TYPE_FROM_CLASS (klass),
                                             G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE,
                                             4, G_TYPE_STRING, G_TYPE_INT, G_TYPE_STRING,
                                             G_TYPE_STRING);
  signals[SIGNAL_PROGRESS] = g_signal_new ("progress", G_TYPE_FROM_CLASS (klass),
                                           G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 2,
                                           G_TYPE_STRING, G_TYPE_DOUBLE);
  signals[SIGNAL_FINISHED] = g_signal_new ("finished", G_TYPE_FROM_CLASS (klass),
                                           G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 2,
                                           G_TYPE_UINT, G_TYPE_BOOLEAN);
  signals[SIGNAL_BACKDROP] = g_signal_new ("backdrop", G_TYPE_FROM_CLASS (klass),
                                           G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 3,
                                           G_TYPE_UINT, G_TYPE_STRING, G_TYPE_POINTER);
  signals[SIGNAL_PROTO_COLOURS] = g_signal_new ("proto-colours", G_TYPE_FROM_CLASS (klass),
                                                G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                                G_TYPE_NONE, 5, G_TYPE_UINT, G_TYPE_STRING,
                                                G_TYPE_POINTER, G_TYPE_POINTER, G_TYPE_INT);
}

static void
tg_evaluator_init (TgEvaluator *ev)
{
  TgEngineOptions opts = { 0 };

  g_mutex_init (&ev->lock);
  g_queue_init (&ev->messages);
  ev->engine = tg_engine_new (&opts);
}

TgEvaluator *
tg_evaluator_new (void)
{
  return g_object_new (TG_TYPE_EVALUATOR, NULL);
}

cairo_surface_t *
tg_evaluator_render_thumbnail (const TgValue *v, int size)
{
  int w = v->region.width, h = v->region.height;
  int tw = w >= h ? size : MAX (1, size * w / h);
  int th = w >= h ? MAX (1, size * h / w) : size;
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, tw, th);
  unsigned char *data = cairo_image_surface_get_data (s);
  int stride = cairo_image_surface_get_stride (s);
  int ch = v->channels;

  cairo_surface_flush (s);
  for (int y = 0; y < th; y++)
    {
      const float *row = tg_value_row (v, (int) ((gint64) y * (h - 1) / MAX (1, th - 1)));
      guint32 *out = (guint32 *) (data + (gsize) y * stride);
      for (int x = 0; x < tw; x++)
        {
          const float *p = row + (gsize) ((gint64) x * (w - 1) / MAX (1, tw - 1)) * ch;
          int r, g, b;
          if (v->type == TG_TYPE_IMAGE && ch >= 3)
            {
              r = (int) lrintf (CLAMP (p[0], 0.f, 1.f) * 255.f);
              g = (int) lrintf (CLAMP (p[1], 0.f, 1.f) * 255.f);
              b = (int) lrintf (CLAMP (p[2], 0.f, 1.f) * 255.f);
            }
          else
            r = g = b = (int) lrintf (CLAMP (p[0], 0.f, 1.f) * 255.f);
          out[x] = 0xff000000u | ((guint32) r << 16) | ((guint32) g << 8) | (guint32) b;
        }
    }
  cairo_surface_mark_dirty (s);
  return s;
}
