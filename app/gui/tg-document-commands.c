/* TgDocument's commands: each changes the graph and records one undo
 * step with what it changed (see tg-document.c). */
#include "config.h"

#include "tg-document-private.h"

#include <glib/gi18n.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tgformats/tgformats.h>

static json_object *
frame_json (const TgFrame *f)
{
  json_object *o = json_object_new_object ();
  const double rgba[4] = { f->rgb[0], f->rgb[1], f->rgb[2], 1 };
  char colour[10];

  tg_color_format (rgba, colour);
  json_object_object_add (o, "title", json_object_new_string (f->title ? f->title : ""));
  json_object_object_add (o, "color", json_object_new_string (colour));
  json_object_object_add (o, "x", json_object_new_int64 ((int64_t) llround (f->x)));
  json_object_object_add (o, "y", json_object_new_int64 ((int64_t) llround (f->y)));
  json_object_object_add (o, "w", json_object_new_int64 ((int64_t) llround (f->w)));
  json_object_object_add (o, "h", json_object_new_int64 ((int64_t) llround (f->h)));
  return o;
}

/* The graph's top-level extra text with frame K set to F (K == n:
 * appended; F NULL: removed), caller frees; NULL when K is out of range. */
static char *
extra_with_frame (TgDocument *doc, int k, const TgFrame *f)
{
  json_object *extra = tg_document__graph_extra (doc->graph), *frames = tg_document__frames_array (extra), *ui;
  int n = frames ? (int) json_object_array_length (frames) : 0;
  char *text;

  if (k < 0 || k > n || (k == n && !f))
    {
      json_object_put (extra);
      return NULL;
    }
  if (!frames)
    {
      if (!json_object_object_get_ex (extra, "ui", &ui) || !json_object_is_type (ui, json_type_object))
        {
          ui = json_object_new_object ();
          json_object_object_add (extra, "ui", ui);
        }
      frames = json_object_new_array ();
      json_object_object_add (ui, "frames", frames);
    }
  if (!f)
    json_object_array_del_idx (frames, (size_t) k, 1);
  else if (k == n)
    json_object_array_add (frames, frame_json (f));
  else
    json_object_array_put_idx (frames, (size_t) k, frame_json (f));
  text = g_strdup (json_object_to_json_string_ext (extra, JSON_C_TO_STRING_PLAIN));
  json_object_put (extra);
  return text;
}

static void move_nodes_into (TgDocument *doc, Step *s, const char *const *ids, double dx,
                             double dy);

/* One undo step: the graph's extra becomes EXTRA (owned), and the nodes
 * IDS move by (DX, DY). */
static void
commit_extra (TgDocument *doc, char *extra, const char *label, TgDocChange change,
              const char *const *ids, double dx, double dy)
{
  Step *s = tg_document__step_new (STEP_UI, label, change);

  s->has_extra = TRUE;
  s->extra_before = g_strdup (tg_graph_extra (doc->graph));
  s->extra_after = extra;
  tg_graph_set_extra (doc->graph, extra);
  tg_document__reload_frames (doc);
  if (ids)
    move_nodes_into (doc, s, ids, dx, dy);
  tg_document__commit_step (doc, s, NULL, NULL);
}

int
tg_document_add_frame (TgDocument *doc, const TgFrame *f)
{
  int n = doc->n_frames;

  commit_extra (doc, extra_with_frame (doc, n, f), _("Add Frame"), TG_DOC_CHANGE_FRAMES, NULL,
                0, 0);
  return n;
}

gboolean
tg_document_set_frame (TgDocument *doc, int k, const TgFrame *f)
{
  const TgFrame *cur = k >= 0 && k < doc->n_frames ? &doc->frames[k] : NULL;
  gboolean same = cur && !g_strcmp0 (cur->title, f->title) && cur->x == f->x && cur->y == f->y
                  && cur->w == f->w && cur->h == f->h && !memcmp (cur->rgb, f->rgb, sizeof f->rgb);
  char *extra = !same && cur ? extra_with_frame (doc, k, f) : NULL;

  if (!extra)
    return same;
  commit_extra (doc, extra, _("Change Frame"), TG_DOC_CHANGE_FRAMES, NULL, 0, 0);
  return TRUE;
}

gboolean
tg_document_delete_frame (TgDocument *doc, int k)
{
  char *extra = k >= 0 && k < doc->n_frames ? extra_with_frame (doc, k, NULL) : NULL;

  if (!extra)
    return FALSE;
  commit_extra (doc, extra, _("Delete Frame"), TG_DOC_CHANGE_FRAMES, NULL, 0, 0);
  return TRUE;
}

gboolean
tg_document_move_frame (TgDocument *doc, int k, double dx, double dy, const char *const *ids)
{
  TgFrame f;
  char *extra;

  if (k < 0 || k >= doc->n_frames || (dx == 0 && dy == 0))
    return FALSE;
  f = doc->frames[k];
  f.x += dx;
  f.y += dy;
  extra = extra_with_frame (doc, k, &f);
  if (!extra)
    return FALSE;
  commit_extra (doc, extra, _("Move Frame"), TG_DOC_CHANGE_POSITION | TG_DOC_CHANGE_FRAMES, ids,
                dx, dy);
  return TRUE;
}

char *
tg_document__unique_id (TgDocument *doc, const char *base, GHashTable *taken)
{
  char *id = g_strdup (base);

  for (int k = 2;
       tg_document_find_node (doc, id) >= 0 || (taken && g_hash_table_contains (taken, id)); k++)
    {
      g_free (id);
      id = g_strdup_printf ("%s_%d", base, k);
    }
  return id;
}

/* Whether N_NEW more nodes fit in a graph that still loads again: a
 * .tgraph file holds at most TG_TGRAPH_MAX_NODES. */
gboolean
tg_document__room_for (const TgGraph *g, int n_new, GError **error)
{
  if (tg_graph_n_nodes (g) + n_new <= TG_TGRAPH_MAX_NODES)
    return TRUE;
  g_set_error (error, TG_DOCUMENT_ERROR, 0,
               _("A graph holds at most %d nodes; this one would have %d"), TG_TGRAPH_MAX_NODES,
               tg_graph_n_nodes (g) + n_new);
  return FALSE;
}

/* Adds node K of SRC to DST as ID: type, the parameters it sets, ui and
 * kept keys.  FALSE with ERR when refused (DST may then hold the node). */
gboolean
tg_document__copy_node (TgGraph *dst, const TgGraph *src, int k, const char *id, TgError *err)
{
  const TgNodeDesc *d = tg_graph_node_desc (src, k);
  int m = tg_graph_add_node (dst, id, d->type, err);

  if (m < 0)
    return FALSE;
  for (int p = 0; p < d->n_params; p++)
    {
      const TgParamValue *v = tg_graph_get_param_at (src, k, p);
      /* An unset file path stays unset (an unfinished node). */
      if (!v || ((v->type == TG_PARAM_INPUT_PATH || v->type == TG_PARAM_STRING) && !v->s))
        continue;
      if (tg_graph_set_param (dst, m, d->params[p].name, v, err) < 0)
        {
          tg_error_prefix_path (err, id);
          return FALSE;
        }
    }
  tg_graph_set_node_ui (dst, m, tg_graph_node_ui (src, k));
  tg_graph_set_node_extra (dst, m, tg_graph_node_extra (src, k));
  tg_graph_set_node_bypass (dst, m, tg_graph_node_bypass (src, k));
  return TRUE;
}

void
tg_document__commit_splice (TgDocument *doc, Step *s, int n0, int l0, const char *node_id)
{
  s->n_nodes = tg_graph_n_nodes (doc->graph) - n0;
  s->n_links = tg_graph_n_links (doc->graph) - l0;
  tg_document__commit_step (doc, s, NULL, node_id);
}

/* Nodes and links were added at the end since N0 and L0: one undo step. */
void
tg_document__commit_append (TgDocument *doc, int n0, int l0, const char *label, TgDocChange change,
               const char *node_id)
{
  tg_document__commit_splice (doc, tg_document__step_new (STEP_SPLICE, label, change), n0, l0,
                              node_id);
}

/* Takes out what was added at the end since N0 and L0 (a command refused
 * half way). */
void
tg_document__roll_back_append (TgDocument *doc, int n0, int l0)
{
  for (int l = tg_graph_n_links (doc->graph) - 1; l >= l0; l--)
    tg_graph_remove_link (doc->graph, l);
  tg_document__truncate_nodes (doc, n0);
}

char *
tg_document_add_node (TgDocument *doc, const char *type, double x, double y, GError **error)
{
  const TgNodeDesc *desc = tg_registry_lookup (type);
  const char *dot;
  g_autofree char *base = NULL;
  char *id;
  TgError err = { 0 };
  int n;

  if (!desc)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("Unknown node type “%s”"), type);
      return NULL;
    }
  if (!tg_document__room_for (doc->graph, 1, error))
    return NULL;
  dot = strrchr (type, '.');
  base = g_strdup (dot ? dot + 1 : type);
  id = tg_document__unique_id (doc, base, NULL);
  n = tg_graph_add_node (doc->graph, id, type, &err);
  if (n < 0)
    {
      g_free (id);
      tg_document__set_tg_error (error, &err, NULL);
      return NULL;
    }
  tg_document__set_ui_position (doc->graph, n, x, y);
  tg_document__append_node_ui (doc, n);
  tg_document__commit_append (doc, n, tg_graph_n_links (doc->graph), _("Add Node"), TG_DOC_CHANGE_NODES, id);
  return id;
}

int
tg_document_fitting_port (const TgNodeDesc *d, TgPortType type, gboolean input)
{
  int n = input ? d->n_inputs : d->n_outputs;
  const TgPortDesc *ports = input ? d->inputs : d->outputs;

  for (int pass = 0; pass < 2; pass++)
    for (int p = 0; p < n; p++)
      {
        TgPortType t = ports[p].type;
        gboolean fits = pass == 0 ? t == type
                                  : input ? tg_port_type_compatible (type, t)
                                          : tg_port_type_compatible (t, type);
        if (fits)
          return p;
      }
  return -1;
}

char *
tg_document_add_node_linked (TgDocument *doc, const char *type, double x, double y,
                             const char *other, const char *other_port, gboolean other_is_output,
                             GError **error)
{
  const TgNodeDesc *desc = tg_registry_lookup (type);
  const TgNodeDesc *od;
  g_autofree char *base = NULL;
  const char *dot;
  char *id;
  TgError err = { 0 };
  int on, op, n, p, rc = 0, n0, l0;
  Step *s;

  if (!desc)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("Unknown node type “%s”"), type);
      return NULL;
    }
  if (!tg_document__room_for (doc->graph, 1, error))
    return NULL;
  if (!tg_document_find_port (doc, other, other_port, other_is_output, &on, &op))
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("No port “%s.%s”"), other, other_port);
      return NULL;
    }
  od = tg_graph_node_desc (doc->graph, on);
  p = tg_document_fitting_port (desc, other_is_output ? od->outputs[op].type : od->inputs[op].type,
                                other_is_output);
  if (p < 0)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("%s has no port that fits “%s.%s”"), type, other,
                   other_port);
      return NULL;
    }
  dot = strrchr (type, '.');
  base = g_strdup (dot ? dot + 1 : type);
  id = tg_document__unique_id (doc, base, NULL);
  s = tg_document__step_new (STEP_SPLICE, _("Add Node"), TG_DOC_CHANGE_NODES | TG_DOC_CHANGE_LINKS);
  /* A link the new node replaces comes out first; the node and its link
   * go at the end. */
  if (!other_is_output)
    {
      int old = tg_graph_input_link (doc->graph, on, op);
      tg_document__splice_take (doc, s, NULL, 0, &old, 1);
    }
  n0 = tg_graph_n_nodes (doc->graph);
  l0 = tg_graph_n_links (doc->graph);
  n = tg_graph_add_node (doc->graph, id, type, &err);
  if (n >= 0)
    {
      tg_document__set_ui_position (doc->graph, n, x, y);
      tg_document__append_node_ui (doc, n);
      if (other_is_output)
        rc = tg_graph_add_link (doc->graph, other, other_port, id, desc->inputs[p].name, &err);
      else
        rc = tg_graph_add_link (doc->graph, id, desc->outputs[p].name, other, other_port, &err);
    }
  if (n < 0 || rc < 0)
    {
      tg_document__roll_back_append (doc, n0, l0);
      tg_document__splice_put_back (doc, s);
      tg_document__step_free (s);
      g_free (id);
      tg_document__set_tg_error (error, &err, NULL);
      return NULL;
    }
  tg_document__commit_splice (doc, s, n0, l0, id);
  return id;
}

gboolean
tg_document_set_bypass (TgDocument *doc, const char *const *ids, gboolean bypass, GError **error)
{
  gboolean change = FALSE;
  Step *s;
  int count = 0;

  for (int k = 0; ids && ids[k]; k++)
    {
      int n = tg_document_find_node (doc, ids[k]);
      if (n < 0)
        {
          g_set_error (error, TG_DOCUMENT_ERROR, 0, _("No node “%s”"), ids[k]);
          return FALSE;
        }
      if (bypass && tg_node_desc_bypass_input (tg_graph_node_desc (doc->graph, n)) < 0)
        {
          g_set_error (error, TG_DOCUMENT_ERROR, 0,
                       _("“%s” cannot be bypassed: it has no input to pass through"), ids[k]);
          return FALSE;
        }
      change |= tg_graph_node_bypass (doc->graph, n) != bypass;
    }
  if (!change)
    return TRUE;
  s = tg_document__step_new (STEP_BYPASS, bypass ? _("Bypass Node") : _("Stop Bypassing Node"),
                             TG_DOC_CHANGE_PARAMS);
  count = (int) g_strv_length ((char **) ids);
  s->ui_ids = g_new (char *, count);
  s->bypass_before = g_new (gboolean, count);
  s->bypass_after = bypass;
  for (int k = 0; k < count; k++)
    {
      int n = tg_document_find_node (doc, ids[k]);
      s->ui_ids[s->n_ui] = g_strdup (ids[k]);
      s->bypass_before[s->n_ui++] = tg_graph_node_bypass (doc->graph, n);
      tg_graph_set_node_bypass (doc->graph, n, bypass);
    }
  tg_document__commit_step (doc, s, NULL, ids[0]);
  return TRUE;
}

gboolean
tg_document_rename_node (TgDocument *doc, const char *id, const char *new_id, GError **error)
{
  int n = tg_document_find_node (doc, id);
  TgError err = { 0 };
  Step *s;

  if (n < 0)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("No node “%s”"), id);
      return FALSE;
    }
  if (!strcmp (id, new_id))
    return TRUE;
  if (!*new_id)
    {
      g_set_error_literal (error, TG_DOCUMENT_ERROR, 0, _("A node needs a name"));
      return FALSE;
    }
  for (const char *c = new_id; *c; c++)
    if (*c == '.' || *c == '"' || *c == '\\' || (unsigned char) *c < 0x20)
      {
        g_set_error_literal (error, TG_DOCUMENT_ERROR, 0,
                             _("A node name cannot contain “.”, quotes or backslashes"));
        return FALSE;
      }
  if (tg_document_find_node (doc, new_id) >= 0)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("There is already a node named “%s”"), new_id);
      return FALSE;
    }
  s = tg_document__step_new (STEP_RENAME, _("Rename Node"), TG_DOC_CHANGE_NODES | TG_DOC_CHANGE_LINKS);
  s->node = g_strdup (id);
  s->new_id = g_strdup (new_id);
  if (tg_graph_set_node_id (doc->graph, n, new_id, &err) < 0)
    {
      tg_document__step_free (s);
      return tg_document__set_tg_error (error, &err, NULL);
    }
  g_hash_table_remove (doc->index, s->node);
  g_hash_table_insert (doc->index, g_strdup (new_id), GINT_TO_POINTER (n + 1));
  tg_document__emit_renamed (doc, s->node, new_id);
  tg_document__commit_step (doc, s, NULL, new_id);
  return TRUE;
}

static int
cmp_desc (gconstpointer a, gconstpointer b)
{
  return *(const int *) b - *(const int *) a;
}

void
tg_document__remove_nodes (TgGraph *g, const int *idx, int n)
{
  int *sorted;

  if (n <= 0)
    return;
  sorted = g_memdup2 (idx, sizeof (int) * (gsize) n);
  qsort (sorted, (size_t) n, sizeof (int), cmp_desc);
  for (int k = 0; k < n; k++)
    if (k == 0 || sorted[k] != sorted[k - 1])
      tg_graph_remove_node (g, sorted[k]);
  g_free (sorted);
}

gboolean
tg_document_delete_nodes (TgDocument *doc, const char *const *ids, GError **error)
{
  g_autofree int *idx = NULL;
  int n = 0, count = ids ? (int) g_strv_length ((char **) ids) : 0;
  Step *s;

  if (count == 0)
    return TRUE;
  idx = g_new (int, count);
  for (int k = 0; k < count; k++)
    {
      int i = tg_document_find_node (doc, ids[k]);
      if (i >= 0)
        idx[n++] = i;
    }
  if (n == 0)
    return TRUE;
  s = tg_document__step_new (STEP_SPLICE, n == 1 ? _("Delete Node") : _("Delete Nodes"),
                             TG_DOC_CHANGE_NODES | TG_DOC_CHANGE_LINKS);
  tg_document__splice_take (doc, s, idx, n, NULL, 0);
  tg_document__commit_splice (doc, s, tg_graph_n_nodes (doc->graph),
                              tg_graph_n_links (doc->graph), NULL);
  return TRUE;
}

/* Moves the nodes IDS by (DX, DY), keeping their ui blocks from before
 * and after in S. */
static void
move_nodes_into (TgDocument *doc, Step *s, const char *const *ids, double dx, double dy)
{
  int count = (int) g_strv_length ((char **) ids);

  s->ui_ids = g_renew (char *, s->ui_ids, s->n_ui + count);
  s->ui_before = g_renew (char *, s->ui_before, s->n_ui + count);
  s->ui_after = g_renew (char *, s->ui_after, s->n_ui + count);
  for (int k = 0; ids[k]; k++)
    {
      int n = tg_document_find_node (doc, ids[k]);
      const char *ui;
      double x, y;

      if (n < 0 || !tg_document_get_position_at (doc, n, &x, &y))
        continue;
      ui = tg_graph_node_ui (doc->graph, n);
      s->ui_ids[s->n_ui] = g_strdup (ids[k]);
      s->ui_before[s->n_ui] = g_strdup (ui);
      s->ui_after[s->n_ui] = tg_document__ui_with_position (ui, x + dx, y + dy);
      tg_document__set_node_ui (doc, n, s->ui_after[s->n_ui]);
      s->n_ui++;
    }
}

gboolean
tg_document_move_nodes (TgDocument *doc, const char *const *ids, double dx, double dy)
{
  Step *s;

  if (!ids || !ids[0] || (dx == 0 && dy == 0))
    return FALSE;
  s = tg_document__step_new (STEP_UI, NULL, TG_DOC_CHANGE_POSITION);
  move_nodes_into (doc, s, ids, dx, dy);
  if (!s->n_ui)
    {
      tg_document__step_free (s);
      return FALSE;
    }
  s->label = g_strdup (s->n_ui == 1 ? _("Move Node") : _("Move Nodes"));
  tg_document__commit_step (doc, s, NULL, s->n_ui == 1 ? ids[0] : NULL);
  return TRUE;
}

gboolean
tg_document_find_port (TgDocument *doc, const char *node, const char *port, gboolean output,
                       int *node_index, int *port_index)
{
  int n = tg_document_find_node (doc, node);
  const TgNodeDesc *d;
  int p;

  if (n < 0)
    return FALSE;
  d = tg_graph_node_desc (doc->graph, n);
  p = output ? tg_node_desc_find_output (d, port) : tg_node_desc_find_input (d, port);
  if (p < 0)
    return FALSE;
  if (node_index)
    *node_index = n;
  if (port_index)
    *port_index = p;
  return TRUE;
}

/* One undo step: the links OLD out, FROM.FROM_PORT -> TO.TO_PORT in at
 * the end; nothing changed when that link is refused. */
static gboolean
replace_links (TgDocument *doc, const int *old, int n_old, const char *from, const char *from_port,
               const char *to, const char *to_port, GError **error)
{
  Step *s = tg_document__step_new (STEP_SPLICE, _("Connect"), TG_DOC_CHANGE_LINKS);
  int l0;
  TgError err = { 0 };

  tg_document__splice_take (doc, s, NULL, 0, old, n_old);
  l0 = tg_graph_n_links (doc->graph);
  if (tg_graph_add_link (doc->graph, from, from_port, to, to_port, &err) < 0)
    {
      tg_document__splice_put_back (doc, s);
      tg_document__step_free (s);
      return tg_document__set_tg_error (error, &err, NULL);
    }
  tg_document__commit_splice (doc, s, tg_graph_n_nodes (doc->graph), l0, to);
  return TRUE;
}

gboolean
tg_document_connect (TgDocument *doc, const char *from, const char *from_port, const char *to,
                     const char *to_port, GError **error)
{
  TgError err = { 0 };
  int to_n, to_p, old;

  if (!tg_document_find_port (doc, to, to_port, FALSE, &to_n, &to_p))
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("No input “%s.%s”"), to, to_port);
      return FALSE;
    }
  old = tg_graph_input_link (doc->graph, to_n, to_p);
  if (old < 0)
    {
      /* A new link goes at the end: the undo step is that one link. */
      int l0 = tg_graph_n_links (doc->graph);
      if (tg_graph_add_link (doc->graph, from, from_port, to, to_port, &err) < 0)
        return tg_document__set_tg_error (error, &err, NULL);
      tg_document__commit_append (doc, tg_graph_n_nodes (doc->graph), l0, _("Connect"), TG_DOC_CHANGE_LINKS,
                     to);
      return TRUE;
    }
  {
    const TgLink *l = tg_graph_link (doc->graph, old);
    const TgNodeDesc *fd = tg_graph_node_desc (doc->graph, l->from_node);
    if (!strcmp (tg_graph_node_id (doc->graph, l->from_node), from)
        && !strcmp (fd->outputs[l->from_port].name, from_port))
      return TRUE; /* already so */
  }
  return replace_links (doc, &old, 1, from, from_port, to, to_port, error);
}

gboolean
tg_document_disconnect (TgDocument *doc, const char *to, const char *to_port)
{
  Step *s;
  int n, p, l;

  if (!tg_document_find_port (doc, to, to_port, FALSE, &n, &p))
    return FALSE;
  l = tg_graph_input_link (doc->graph, n, p);
  if (l < 0)
    return FALSE;
  s = tg_document__step_new (STEP_SPLICE, _("Disconnect"), TG_DOC_CHANGE_LINKS);
  tg_document__splice_take (doc, s, NULL, 0, &l, 1);
  tg_document__commit_splice (doc, s, tg_graph_n_nodes (doc->graph),
                              tg_graph_n_links (doc->graph), to);
  return TRUE;
}

gboolean
tg_document_move_link (TgDocument *doc, const char *to, const char *to_port, const char *new_to,
                       const char *new_to_port, GError **error)
{
  const TgLink *lk;
  const TgNodeDesc *fd;
  g_autofree char *from = NULL, *from_port = NULL;
  int n, p, nn, np, old[2];

  if (!tg_document_find_port (doc, to, to_port, FALSE, &n, &p)
      || (old[0] = tg_graph_input_link (doc->graph, n, p)) < 0)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("No link into “%s.%s”"), to, to_port);
      return FALSE;
    }
  if (!tg_document_find_port (doc, new_to, new_to_port, FALSE, &nn, &np))
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("No input “%s.%s”"), new_to, new_to_port);
      return FALSE;
    }
  if (nn == n && np == p)
    return TRUE;
  lk = tg_graph_link (doc->graph, old[0]);
  fd = tg_graph_node_desc (doc->graph, lk->from_node);
  from = g_strdup (tg_graph_node_id (doc->graph, lk->from_node));
  from_port = g_strdup (fd->outputs[lk->from_port].name);
  /* The dragged link and the one it replaces at its new input. */
  old[1] = tg_graph_input_link (doc->graph, nn, np);
  return replace_links (doc, old, 2, from, from_port, new_to, new_to_port, error);
}

/* Whether parameter D holds input paths, which are relative to the
 * file's folder: its undo step keeps that folder. */
static gboolean
param_has_paths (const TgParamDesc *d)
{
  if (d->type == TG_PARAM_INPUT_PATH)
    return TRUE;
  for (int k = 0; d->type == TG_PARAM_LIST && k < d->n_item_params; k++)
    if (d->item_params[k].type == TG_PARAM_INPUT_PATH)
      return TRUE;
  return FALSE;
}

gboolean
tg_document_set_param (TgDocument *doc, const char *node, const char *name,
                       const TgParamValue *value, gboolean merge, GError **error)
{
  int n = tg_document_find_node (doc, node);
  const TgParamValue *old;
  g_autofree char *key = NULL;
  g_autofree char *label = NULL;
  const TgNodeDesc *d;
  TgError err = { 0 };
  int k;

  if (n < 0)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("No node “%s”"), node);
      return FALSE;
    }
  old = tg_graph_get_param (doc->graph, n, name);
  if (old && tg_param_value_equal (old, value))
    return TRUE;
  d = tg_graph_node_desc (doc->graph, n);
  k = tg_node_desc_find_param (d, name);
  key = g_strdup_printf ("%s\037%s", node, name);
  /* Translators: %s is a parameter label, e.g. "Scale" */
  label = g_strdup_printf (_("Set %s"), k >= 0 ? g_dgettext (GETTEXT_PACKAGE, d->params[k].label)
                                                : name);
  if (!old || k < 0)
    {
      /* Not a parameter of the node: the engine's message. */
      tg_graph_set_param (doc->graph, n, name, value, &err);
      return tg_document__set_tg_error (error, &err, NULL);
    }
  {
    Step *s = tg_document__step_new (STEP_PARAM, label, TG_DOC_CHANGE_PARAMS);
    s->node = g_strdup (node);
    s->param = g_strdup (name);
    if (param_has_paths (&d->params[k]))
      s->param_dir = g_strdup (tg_graph_base_dir (doc->graph));
    if (tg_param_value_copy (&s->value_before, old) < 0
        || tg_param_value_copy (&s->value_after, value) < 0
        || tg_graph_set_param (doc->graph, n, name, value, &err) < 0)
      {
        tg_document__step_free (s);
        return tg_document__set_tg_error (error, &err, NULL);
      }
    tg_document__commit_step (doc, s, merge ? key : NULL, node);
  }
  return TRUE;
}

gboolean
tg_document_set_param_text (TgDocument *doc, const char *node, const char *name,
                            const char *text, gboolean merge, GError **error)
{
  int n = tg_document_find_node (doc, node);
  const TgNodeDesc *d;
  TgParamValue v;
  TgError err = { 0 };
  gboolean ok;
  int k;

  if (n < 0)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("No node “%s”"), node);
      return FALSE;
    }
  d = tg_graph_node_desc (doc->graph, n);
  k = tg_node_desc_find_param (d, name);
  if (k < 0)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("No parameter “%s” in %s"), name, d->type);
      return FALSE;
    }
  if (tg_param_value_parse (&d->params[k], text, &v, &err) < 0)
    return tg_document__set_tg_error (error, &err, NULL);
  ok = tg_document_set_param (doc, node, name, &v, merge, error);
  tg_param_value_clear (&v);
  return ok;
}

gboolean
tg_document_set_world (TgDocument *doc, const TgWorld *world, GError **error)
{
  const TgWorld *cur = tg_graph_world_const (doc->graph);
  TgError err = { 0 };
  Step *s;

  if (tg_world_check (world, &err) < 0)
    return tg_document__set_tg_error (error, &err, NULL);
  if (!memcmp (cur, world, sizeof *world))
    return TRUE;
  s = tg_document__step_new (STEP_WORLD, _("Change World Settings"), TG_DOC_CHANGE_WORLD);
  s->world_before = *cur;
  s->world_after = *world;
  *tg_graph_world (doc->graph) = *world;
  tg_document__commit_step (doc, s, "\037world", NULL);
  return TRUE;
}

const char *
tg_document_get_pinned (TgDocument *doc)
{
  for (guint n = 0; n < doc->ui->len; n++)
    if (g_array_index (doc->ui, TgNodeUi, n).viewer_pin)
      return tg_graph_node_id (doc->graph, (int) n);
  return NULL;
}

/* Sets or clears node N's pin in S (a UI step) and in the document. */
static void
pin_into (TgDocument *doc, Step *s, int n, gboolean on)
{
  const char *ui = tg_graph_node_ui (doc->graph, n);

  s->ui_ids = g_renew (char *, s->ui_ids, s->n_ui + 1);
  s->ui_before = g_renew (char *, s->ui_before, s->n_ui + 1);
  s->ui_after = g_renew (char *, s->ui_after, s->n_ui + 1);
  s->ui_ids[s->n_ui] = g_strdup (tg_graph_node_id (doc->graph, n));
  s->ui_before[s->n_ui] = g_strdup (ui);
  s->ui_after[s->n_ui] = tg_document__ui_with_flag (ui, "viewer_pin", on);
  tg_document__set_node_ui (doc, n, s->ui_after[s->n_ui]);
  s->n_ui++;
}

gboolean
tg_document_set_pinned (TgDocument *doc, const char *id)
{
  int target = id ? tg_document_find_node (doc, id) : -1;
  Step *s;

  if (id && target < 0)
    return FALSE;
  if (!g_strcmp0 (id, tg_document_get_pinned (doc)))
    return TRUE;
  s = tg_document__step_new (STEP_UI, id ? _("Pin to Viewer") : _("Unpin from Viewer"),
                             TG_DOC_CHANGE_PIN);
  for (guint n = 0; n < doc->ui->len; n++)
    if ((int) n != target && g_array_index (doc->ui, TgNodeUi, n).viewer_pin)
      pin_into (doc, s, (int) n, FALSE);
  if (target >= 0)
    pin_into (doc, s, target, TRUE);
  tg_document__commit_step (doc, s, NULL, id);
  return TRUE;
}
