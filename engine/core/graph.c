/* The graph model: world settings, nodes, parameters and links, and the
 * graph's validation, done once per change: every edit bumps a
 * generation, and a graph that passed tg_graph_validate remembers at
 * which generation (and with which world, whose fields callers edit in
 * place), so the engine does not check an unchanged graph again. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tgraph/graph.h"
#include "tgraph/registry.h"
#include "tgraph/messages.h"

typedef struct
{
  char *id;
  const TgNodeDesc *desc;
  TgParamValue *params; /* desc->n_params */
  char *ui;
  char *extra;
  bool bypass; /* passes its main input through (tg_node_desc_bypass_input) */
} Node;

struct TgGraph
{
  TgWorld world;
  char *base_dir;
  char *extra;
  Node *nodes;
  int n_nodes, cap_nodes;
  TgLink *links;
  int n_links, cap_links;
  unsigned long generation; /* bumped by every edit that validation reads */
  /* The last successful tg_graph_validate, under LOCK: validate takes a
   * const graph, which worker threads may share. */
  pthread_mutex_t lock;
  bool valid;
  unsigned long valid_generation;
  TgWorld valid_world;
};

static char *
dup_or_null (const char *s)
{
  return s ? strdup (s) : NULL;
}

TgGraph *
tg_graph_new (void)
{
  TgGraph *g = calloc (1, sizeof *g);

  if (g == NULL)
    return NULL;
  if (pthread_mutex_init (&g->lock, NULL) != 0)
    {
      free (g);
      return NULL;
    }
  tg_world_init_default (&g->world);
  return g;
}

static void
node_clear (Node *n)
{
  if (n->params)
    for (int i = 0; i < n->desc->n_params; i++)
      tg_param_value_clear (&n->params[i]);
  free (n->params);
  free (n->id);
  free (n->ui);
  free (n->extra);
}

void
tg_graph_free (TgGraph *g)
{
  if (g == NULL)
    return;
  for (int i = 0; i < g->n_nodes; i++)
    node_clear (&g->nodes[i]);
  free (g->nodes);
  free (g->links);
  free (g->base_dir);
  free (g->extra);
  pthread_mutex_destroy (&g->lock);
  free (g);
}

TgGraph *
tg_graph_copy (const TgGraph *g)
{
  TgGraph *c = tg_graph_new ();

  if (c == NULL)
    return NULL;
  c->world = g->world;
  c->base_dir = dup_or_null (g->base_dir);
  c->extra = dup_or_null (g->extra);
  c->nodes = calloc ((size_t) (g->n_nodes ? g->n_nodes : 1), sizeof (Node));
  c->links = malloc (sizeof (TgLink) * (size_t) (g->n_links ? g->n_links : 1));
  if (c->nodes == NULL || c->links == NULL)
    goto fail;
  c->cap_nodes = g->n_nodes ? g->n_nodes : 1;
  c->cap_links = g->n_links ? g->n_links : 1;
  for (int i = 0; i < g->n_nodes; i++)
    {
      const Node *s = &g->nodes[i];
      Node *d = &c->nodes[i];
      d->desc = s->desc;
      d->id = dup_or_null (s->id);
      d->ui = dup_or_null (s->ui);
      d->extra = dup_or_null (s->extra);
      d->bypass = s->bypass;
      d->params = calloc ((size_t) (s->desc->n_params ? s->desc->n_params : 1),
                          sizeof (TgParamValue));
      c->n_nodes++;
      if (d->params == NULL || d->id == NULL)
        goto fail;
      for (int k = 0; k < s->desc->n_params; k++)
        if (tg_param_value_copy (&d->params[k], &s->params[k]) < 0)
          goto fail;
    }
  if (g->n_links > 0)
    memcpy (c->links, g->links, sizeof (TgLink) * (size_t) g->n_links);
  c->n_links = g->n_links;
  c->generation = g->generation;
  pthread_mutex_lock ((pthread_mutex_t *) &g->lock);
  c->valid = g->valid;
  c->valid_generation = g->valid_generation;
  c->valid_world = g->valid_world;
  pthread_mutex_unlock ((pthread_mutex_t *) &g->lock);
  return c;

fail:
  tg_graph_free (c);
  return NULL;
}

TgWorld *
tg_graph_world (TgGraph *g)
{
  return &g->world;
}

const TgWorld *
tg_graph_world_const (const TgGraph *g)
{
  return &g->world;
}

int
tg_world_check (const TgWorld *w, TgError *err)
{
  if (!isfinite (w->size_x) || w->size_x <= 0 || w->size_x > 1e7)
    return tg_error_set (err, TG_ERANGE, "world.size_m",
                         TG_MSG_WORLD_WIDTH, w->size_x);
  if (!isfinite (w->size_z) || w->size_z <= 0 || w->size_z > 1e7)
    return tg_error_set (err, TG_ERANGE, "world.size_m",
                         TG_MSG_WORLD_DEPTH, w->size_z);
  if (!isfinite (w->height_m) || w->height_m <= 0 || w->height_m > 1e6)
    return tg_error_set (err, TG_ERANGE, "world.height_m",
                         TG_MSG_WORLD_HEIGHT, w->height_m);
  if (w->resolution < TG_RESOLUTION_MIN || w->resolution > TG_RESOLUTION_MAX)
    return tg_error_set (err, TG_ERANGE, "world.resolution",
                         TG_MSG_INT_RANGE, TG_RESOLUTION_MIN,
                         TG_RESOLUTION_MAX, w->resolution);
  if (w->size_z / (w->size_x / (w->resolution - 1)) + 1 > TG_RESOLUTION_MAX)
    return tg_error_set (err, TG_ERANGE, "world.size_m", TG_MSG_WORLD_TOO_DEEP, TG_RESOLUTION_MAX);
  return 0;
}

void
tg_graph_set_base_dir (TgGraph *g, const char *dir)
{
  free (g->base_dir);
  g->base_dir = dup_or_null (dir);
}

const char *
tg_graph_base_dir (const TgGraph *g)
{
  return g->base_dir ? g->base_dir : ".";
}

/* Characters (UTF-8 code points) of S: bytes that do not continue one. */
static size_t
id_chars (const char *s)
{
  size_t n = 0;

  for (; *s; s++)
    n += ((unsigned char) *s & 0xc0) != 0x80;
  return n;
}

static int
id_error (const char *id, TgError *err)
{
  size_t bad = id ? tg_utf8_check (id, strlen (id)) : 0;

  if (id && id[bad])
    return tg_error_set (err, TG_EINVAL, "id", TG_MSG_ID_NOT_UTF8, bad + 1,
                         (unsigned) (unsigned char) id[bad]);
  if (id && id[0] && id_chars (id) > TG_NODE_ID_MAX)
    return tg_error_set (err, TG_EINVAL, "id", TG_MSG_ID_TOO_LONG, TG_NODE_ID_MAX, id_chars (id));
  return tg_error_set (err, TG_EINVAL, "id", TG_MSG_ID_INVALID, id ? id : "");
}

static bool
valid_id (const char *id)
{
  if (id == NULL || id[0] == '\0' || strlen (id) >= TG_NODE_ID_BYTES
      || id_chars (id) > TG_NODE_ID_MAX || tg_utf8_check (id, strlen (id)) < strlen (id))
    return false;
  for (const char *p = id; *p; p++)
    if (*p == '.' || *p == '"' || *p == '\\' || (unsigned char) *p < 0x20)
      return false;
  return true;
}

int
tg_graph_find_node (const TgGraph *g, const char *id)
{
  for (int i = 0; i < g->n_nodes; i++)
    if (strcmp (g->nodes[i].id, id) == 0)
      return i;
  return -1;
}

int
tg_graph_add_node (TgGraph *g, const char *id, const char *type, TgError *err)
{
  return tg_graph_insert_node (g, g->n_nodes, id, type, err);
}

int
tg_graph_insert_node (TgGraph *g, int index, const char *id, const char *type, TgError *err)
{
  const TgNodeDesc *desc = tg_registry_lookup (type);
  Node *n;

  if (index < 0 || index > g->n_nodes)
    return tg_error_set (err, TG_EINVAL, NULL, "no node index %d in 0..%d", index, g->n_nodes);
  if (desc == NULL)
    return tg_error_set (err, TG_EUNKNOWN, "type", TG_MSG_UNKNOWN_TYPE, type ? type : "");
  if (!valid_id (id))
    return id_error (id, err);
  if (tg_graph_find_node (g, id) >= 0)
    return tg_error_set (err, TG_EINVAL, "id", TG_MSG_DUPLICATE_ID, id);
  if (g->n_nodes == g->cap_nodes)
    {
      int cap = g->cap_nodes ? g->cap_nodes * 2 : 16;
      Node *grown = realloc (g->nodes, sizeof (Node) * (size_t) cap);
      if (grown == NULL)
        return tg_error_set (err, TG_ENOMEM, NULL, NULL);
      g->nodes = grown;
      g->cap_nodes = cap;
    }
  n = &g->nodes[index];
  memmove (n + 1, n, sizeof (Node) * (size_t) (g->n_nodes - index));
  memset (n, 0, sizeof *n);
  n->desc = desc;
  n->id = strdup (id);
  n->params = calloc ((size_t) (desc->n_params ? desc->n_params : 1), sizeof (TgParamValue));
  if (n->id == NULL || n->params == NULL)
    {
      free (n->id);
      free (n->params);
      memmove (n, n + 1, sizeof (Node) * (size_t) (g->n_nodes - index));
      return tg_error_set (err, TG_ENOMEM, NULL, NULL);
    }
  for (int k = 0; k < desc->n_params; k++)
    tg_param_value_init_default (&n->params[k], &desc->params[k]);
  /* The links name nodes by index: those at INDEX and after moved up. */
  for (int i = 0; i < g->n_links; i++)
    {
      g->links[i].from_node += g->links[i].from_node >= index;
      g->links[i].to_node += g->links[i].to_node >= index;
    }
  g->n_nodes++;
  g->generation++;
  return index;
}

int
tg_graph_insert_node_copy (TgGraph *g, int index, const TgGraph *src, int node, TgError *err)
{
  const Node *s;
  Node *d;
  char *ui, *extra;
  int rc;

  if (node < 0 || node >= src->n_nodes)
    return tg_error_set (err, TG_EINVAL, NULL, "no node %d", node);
  s = &src->nodes[node];
  ui = dup_or_null (s->ui);
  extra = dup_or_null (s->extra);
  if ((s->ui && !ui) || (s->extra && !extra))
    rc = tg_error_set (err, TG_ENOMEM, NULL, NULL);
  else
    rc = tg_graph_insert_node (g, index, s->id, s->desc->type, err);
  if (rc < 0)
    {
      free (ui);
      free (extra);
      return rc;
    }
  d = &g->nodes[index];
  d->ui = ui;
  d->extra = extra;
  d->bypass = s->bypass;
  for (int k = 0; k < s->desc->n_params; k++)
    {
      TgParamValue v;
      if (tg_param_value_copy (&v, &s->params[k]) < 0)
        {
          tg_graph_remove_node (g, index);
          return tg_error_set (err, TG_ENOMEM, NULL, NULL);
        }
      tg_param_value_clear (&d->params[k]);
      d->params[k] = v;
    }
  return index;
}

void
tg_graph_remove_node (TgGraph *g, int node)
{
  int w = 0;

  if (node < 0 || node >= g->n_nodes)
    return;
  for (int i = 0; i < g->n_links; i++)
    {
      TgLink l = g->links[i];
      if (l.from_node == node || l.to_node == node)
        continue;
      if (l.from_node > node)
        l.from_node--;
      if (l.to_node > node)
        l.to_node--;
      g->links[w++] = l;
    }
  g->n_links = w;
  node_clear (&g->nodes[node]);
  memmove (&g->nodes[node], &g->nodes[node + 1], sizeof (Node) * (size_t) (g->n_nodes - node - 1));
  g->n_nodes--;
  g->generation++;
}

int
tg_graph_n_nodes (const TgGraph *g)
{
  return g->n_nodes;
}

const char *
tg_graph_node_id (const TgGraph *g, int node)
{
  return node >= 0 && node < g->n_nodes ? g->nodes[node].id : NULL;
}

int
tg_graph_set_node_id (TgGraph *g, int node, const char *id, TgError *err)
{
  int other;
  char *copy;

  if (!valid_id (id))
    return id_error (id, err);
  other = tg_graph_find_node (g, id);
  if (other >= 0 && other != node)
    return tg_error_set (err, TG_EINVAL, "id", TG_MSG_DUPLICATE_ID, id);
  if ((copy = strdup (id)) == NULL)
    return tg_error_set (err, TG_ENOMEM, NULL, NULL);
  free (g->nodes[node].id);
  g->nodes[node].id = copy;
  g->generation++;
  return 0;
}

const TgNodeDesc *
tg_graph_node_desc (const TgGraph *g, int node)
{
  return node >= 0 && node < g->n_nodes ? g->nodes[node].desc : NULL;
}

/* Sets parameter NAME of NODE to a copy of V; CHECK: refuse a value
 * tg_param_value_check refuses. */
static int
put_param (TgGraph *g, int node, const char *name, const TgParamValue *v, bool check, TgError *err)
{
  const Node *n;
  TgParamValue copy;
  int k, rc;

  if (node < 0 || node >= g->n_nodes)
    return tg_error_set (err, TG_EINVAL, NULL, "no node %d", node);
  n = &g->nodes[node];
  k = tg_node_desc_find_param (n->desc, name);
  if (k < 0)
    return tg_error_set (err, TG_EUNKNOWN, NULL, TG_MSG_UNKNOWN_PARAM, name,
                         n->desc->type);
  if (check && (rc = tg_param_value_check (&n->desc->params[k], v, err)) < 0)
    return rc;
  if (tg_param_value_copy (&copy, v) < 0)
    return tg_error_set (err, TG_ENOMEM, NULL, NULL);
  if (n->desc->params[k].type == TG_PARAM_ENUM)
    copy.i = tg_param_enum_index (&n->desc->params[k], copy.s);
  tg_param_value_clear (&n->params[k]);
  n->params[k] = copy;
  g->generation++;
  return 0;
}

int
tg_graph_set_param (TgGraph *g, int node, const char *name, const TgParamValue *v, TgError *err)
{
  return put_param (g, node, name, v, true, err);
}

int
tg_graph_restore_param (TgGraph *g, int node, const char *name, const TgParamValue *v,
                        TgError *err)
{
  return put_param (g, node, name, v, false, err);
}

int
tg_graph_set_param_text (TgGraph *g, int node, const char *name, const char *text, TgError *err)
{
  const TgNodeDesc *d = tg_graph_node_desc (g, node);
  TgParamValue v;
  int k, rc;

  if (d == NULL)
    return tg_error_set (err, TG_EINVAL, NULL, "no node %d", node);
  k = tg_node_desc_find_param (d, name);
  if (k < 0)
    return tg_error_set (err, TG_EUNKNOWN, NULL, TG_MSG_UNKNOWN_PARAM, name,
                         d->type);
  if ((rc = tg_param_value_parse (&d->params[k], text, &v, err)) < 0)
    return rc;
  rc = tg_graph_set_param (g, node, name, &v, err);
  tg_param_value_clear (&v);
  return rc;
}

const TgParamValue *
tg_graph_get_param (const TgGraph *g, int node, const char *name)
{
  int k;

  if (node < 0 || node >= g->n_nodes)
    return NULL;
  k = tg_node_desc_find_param (g->nodes[node].desc, name);
  return k < 0 ? NULL : &g->nodes[node].params[k];
}

const TgParamValue *
tg_graph_get_param_at (const TgGraph *g, int node, int param_index)
{
  if (node < 0 || node >= g->n_nodes || param_index < 0
      || param_index >= g->nodes[node].desc->n_params)
    return NULL;
  return &g->nodes[node].params[param_index];
}

int
tg_graph_input_link (const TgGraph *g, int node, int to_port)
{
  for (int i = 0; i < g->n_links; i++)
    if (g->links[i].to_node == node && g->links[i].to_port == to_port)
      return i;
  return -1;
}

/* Depth-first search for a path of links from FROM to TO; fills PATH
 * (node indices, FROM first) and returns its length, 0 when there is
 * none, or TG_ENOMEM.  Iterative over an adjacency built per call: a
 * recursion that scanned every link at every step took time cubic in a
 * long chain (a file listing its links back to front) and could run out
 * of stack. */
static int
find_path (const TgGraph *g, int from, int to, int *path, char *seen)
{
  int n = g->n_nodes, depth = 0, found = 0;
  /* Each node's successors, in link order: succ[start[v]] .. succ[start[v + 1] - 1]. */
  int *start = calloc ((size_t) n + 1, sizeof (int));
  int *succ = malloc (sizeof (int) * (size_t) (g->n_links ? g->n_links : 1));
  int *cursor = malloc (sizeof (int) * (size_t) (n ? n : 1));

  if (start == NULL || succ == NULL || cursor == NULL)
    {
      free (start);
      free (succ);
      free (cursor);
      return TG_ENOMEM;
    }
  for (int i = 0; i < g->n_links; i++)
    start[g->links[i].from_node + 1]++;
  for (int v = 0; v < n; v++)
    start[v + 1] += start[v];
  for (int v = 0; v < n; v++)
    cursor[v] = start[v];
  for (int i = 0; i < g->n_links; i++)
    succ[cursor[g->links[i].from_node]++] = g->links[i].to_node;

  /* PATH is the stack; CURSOR[d] the next successor of PATH[d] to try. */
  path[0] = from;
  if (from == to)
    found = 1;
  else
    {
      seen[from] = 1;
      cursor[0] = start[from];
    }
  while (!found && depth >= 0)
    {
      int v = path[depth], w;
      if (cursor[depth] == start[v + 1])
        {
          depth--;
          continue;
        }
      w = succ[cursor[depth]++];
      if (seen[w])
        continue;
      path[++depth] = w;
      if (w == to)
        found = depth + 1;
      else
        {
          seen[w] = 1;
          cursor[depth] = start[w];
        }
    }
  free (start);
  free (succ);
  free (cursor);
  return found;
}

/* "a -> b -> c -> a" into BUF. */
static void
format_cycle (const TgGraph *g, const int *path, int n, char *buf, size_t size)
{
  size_t used = 0;

  buf[0] = '\0';
  for (int i = 0; i <= n; i++)
    {
      int w = snprintf (buf + used, size - used, "%s%s", i ? " -> " : "",
                        g->nodes[path[i % n]].id);
      if (w < 0 || (size_t) w >= size - used)
        break;
      used += (size_t) w;
    }
}

int
tg_graph_add_link (TgGraph *g, const char *from_node, const char *from_port,
                   const char *to_node, const char *to_port, TgError *err)
{
  int fn = tg_graph_find_node (g, from_node), tn = tg_graph_find_node (g, to_node);
  TgLink l;

  if (fn < 0)
    return tg_error_set (err, TG_ELINK, "from", TG_MSG_NO_NODE, from_node);
  if (tn < 0)
    return tg_error_set (err, TG_ELINK, "to", TG_MSG_NO_NODE, to_node);
  l.from_node = fn;
  l.to_node = tn;
  l.from_port = tg_node_desc_find_output (g->nodes[fn].desc, from_port);
  if (l.from_port < 0)
    return tg_error_set (err, TG_ELINK, "from", TG_MSG_NO_OUTPUT_PORT, from_node,
                         g->nodes[fn].desc->type, from_port);
  l.to_port = tg_node_desc_find_input (g->nodes[tn].desc, to_port);
  if (l.to_port < 0)
    return tg_error_set (err, TG_ELINK, "to", TG_MSG_NO_INPUT_PORT, to_node,
                         g->nodes[tn].desc->type, to_port);
  return tg_graph_insert_link (g, g->n_links, &l, err);
}

int
tg_graph_insert_link (TgGraph *g, int index, const TgLink *link, TgError *err)
{
  int fn = link->from_node, fp = link->from_port, tn = link->to_node, tp = link->to_port;
  const TgPortDesc *out, *in;
  const char *from_node, *to_node;

  if (index < 0 || index > g->n_links)
    return tg_error_set (err, TG_EINVAL, NULL, "no link index %d in 0..%d", index, g->n_links);
  if (fn < 0 || fn >= g->n_nodes || tn < 0 || tn >= g->n_nodes)
    return tg_error_set (err, TG_ELINK, "links", "no node %d",
                         fn < 0 || fn >= g->n_nodes ? fn : tn);
  from_node = g->nodes[fn].id;
  to_node = g->nodes[tn].id;
  if (fp < 0 || fp >= g->nodes[fn].desc->n_outputs)
    return tg_error_set (err, TG_ELINK, "from", "node \"%s\" has no output %d", from_node, fp);
  if (tp < 0 || tp >= g->nodes[tn].desc->n_inputs)
    return tg_error_set (err, TG_ELINK, "to", "node \"%s\" has no input %d", to_node, tp);
  out = &g->nodes[fn].desc->outputs[fp];
  in = &g->nodes[tn].desc->inputs[tp];
  if (!tg_port_type_compatible (out->type, in->type))
    return tg_error_set (err, TG_ETYPE, "to", TG_MSG_TYPES_MISMATCH, from_node, out->name,
                         tg_port_type_name (out->type), to_node, in->name,
                         tg_port_type_name (in->type));
  if (tg_graph_input_link (g, tn, tp) >= 0)
    return tg_error_set (err, TG_ELINK, "to", TG_MSG_ALREADY_LINKED, to_node, in->name);
  {
    int *path = malloc (sizeof (int) * (size_t) (g->n_nodes + 1));
    char *seen = calloc ((size_t) g->n_nodes, 1);
    int n = 0;
    if (path == NULL || seen == NULL)
      {
        free (path);
        free (seen);
        return tg_error_set (err, TG_ENOMEM, NULL, NULL);
      }
    n = find_path (g, tn, fn, path, seen);
    if (n < 0)
      {
        free (path);
        free (seen);
        return tg_error_set (err, TG_ENOMEM, NULL, NULL);
      }
    if (n)
      {
        char cyc[TG_ERROR_MESSAGE_MAX - 64];
        format_cycle (g, path, n, cyc, sizeof cyc);
        free (path);
        free (seen);
        return tg_error_set (err, TG_ECYCLE, "to", TG_MSG_WOULD_CYCLE, cyc);
      }
    free (path);
    free (seen);
  }
  if (g->n_links == g->cap_links)
    {
      int cap = g->cap_links ? g->cap_links * 2 : 16;
      TgLink *grown = realloc (g->links, sizeof (TgLink) * (size_t) cap);
      if (grown == NULL)
        return tg_error_set (err, TG_ENOMEM, NULL, NULL);
      g->links = grown;
      g->cap_links = cap;
    }
  memmove (&g->links[index + 1], &g->links[index],
           sizeof (TgLink) * (size_t) (g->n_links - index));
  g->links[index] = (TgLink) { fn, fp, tn, tp };
  g->n_links++;
  g->generation++;
  return index;
}

void
tg_graph_remove_link (TgGraph *g, int link)
{
  if (link < 0 || link >= g->n_links)
    return;
  memmove (&g->links[link], &g->links[link + 1], sizeof (TgLink) * (size_t) (g->n_links - link - 1));
  g->n_links--;
  g->generation++;
}

int
tg_graph_n_links (const TgGraph *g)
{
  return g->n_links;
}

const TgLink *
tg_graph_link (const TgGraph *g, int link)
{
  return link >= 0 && link < g->n_links ? &g->links[link] : NULL;
}

static void
replace_string (char **slot, const char *s)
{
  free (*slot);
  *slot = dup_or_null (s);
}

void
tg_graph_set_node_ui (TgGraph *g, int node, const char *json)
{
  if (node >= 0 && node < g->n_nodes)
    replace_string (&g->nodes[node].ui, json);
}

int
tg_node_desc_bypass_input (const TgNodeDesc *d)
{
  if (d == NULL || d->n_outputs == 0)
    return -1;
  for (int k = 0; k < d->n_inputs; k++)
    if (d->inputs[k].type == d->outputs[0].type)
      return k;
  return -1;
}

void
tg_graph_set_node_bypass (TgGraph *g, int node, bool bypass)
{
  if (node >= 0 && node < g->n_nodes && g->nodes[node].bypass != bypass)
    {
      g->nodes[node].bypass = bypass;
      g->generation++;
    }
}

bool
tg_graph_node_bypass (const TgGraph *g, int node)
{
  return node >= 0 && node < g->n_nodes && g->nodes[node].bypass;
}

TgLocality
tg_graph_node_locality (const TgGraph *g, int node)
{
  if (node < 0 || node >= g->n_nodes)
    return TG_LOCALITY_LOCAL;
  return g->nodes[node].bypass ? TG_LOCALITY_LOCAL : g->nodes[node].desc->locality;
}

bool
tg_graph_node_reads_input (const TgGraph *g, int node, int input)
{
  if (node < 0 || node >= g->n_nodes)
    return false;
  return !g->nodes[node].bypass || input == tg_node_desc_bypass_input (g->nodes[node].desc);
}

const char *
tg_graph_node_ui (const TgGraph *g, int node)
{
  return node >= 0 && node < g->n_nodes ? g->nodes[node].ui : NULL;
}

void
tg_graph_set_node_extra (TgGraph *g, int node, const char *json)
{
  if (node >= 0 && node < g->n_nodes)
    replace_string (&g->nodes[node].extra, json);
}

const char *
tg_graph_node_extra (const TgGraph *g, int node)
{
  return node >= 0 && node < g->n_nodes ? g->nodes[node].extra : NULL;
}

void
tg_graph_set_extra (TgGraph *g, const char *json)
{
  replace_string (&g->extra, json);
}

const char *
tg_graph_extra (const TgGraph *g)
{
  return g->extra;
}

int
tg_graph_topo_order (const TgGraph *g, int *order, TgError *err)
{
  int n = g->n_nodes, done = 0;
  int *indeg = calloc ((size_t) (n ? n : 1), sizeof (int));

  if (indeg == NULL)
    return tg_error_set (err, TG_ENOMEM, NULL, NULL);
  for (int i = 0; i < g->n_links; i++)
    indeg[g->links[i].to_node]++;
  /* Kahn's algorithm, always taking the lowest ready index, so the order
   * is a pure function of the graph. */
  while (done < n)
    {
      int pick = -1;
      for (int i = 0; i < n; i++)
        if (indeg[i] == 0)
          {
            pick = i;
            break;
          }
      if (pick < 0)
        break;
      indeg[pick] = -1;
      order[done++] = pick;
      for (int i = 0; i < g->n_links; i++)
        if (g->links[i].from_node == pick)
          indeg[g->links[i].to_node]--;
    }
  if (done < n)
    {
      /* Every node left has an unfinished input: walk back from one until a
       * node repeats, which gives a cycle to name. */
      int *path = malloc (sizeof (int) * (size_t) (n + 1));
      char *seen = calloc ((size_t) n, 1);
      char cyc[TG_ERROR_MESSAGE_MAX - 64] = "";
      if (path && seen)
        {
          for (int i = 0; i < n; i++)
            if (indeg[i] > 0)
              {
                for (int k = 0; k < g->n_links; k++)
                  if (g->links[k].to_node == i && indeg[g->links[k].from_node] > 0)
                    {
                      int len = find_path (g, i, g->links[k].from_node, path, seen);
                      if (len > 0)
                        format_cycle (g, path, len, cyc, sizeof cyc);
                      break;
                    }
                break;
              }
        }
      free (path);
      free (seen);
      free (indeg);
      return tg_error_set (err, TG_ECYCLE, "links", TG_MSG_CYCLE, cyc);
    }
  free (indeg);
  return 0;
}

/* The node's own check of which of its inputs are linked. */
static int
check_links (const TgGraph *g, int node, const void *params, TgError *err)
{
  const TgNodeDesc *d = g->nodes[node].desc;
  bool *linked = calloc ((size_t) d->n_inputs + 1, sizeof *linked);
  int rc;

  if (linked == NULL)
    return tg_error_set (err, TG_ENOMEM, NULL, NULL);
  for (int k = 0; k < d->n_inputs; k++)
    linked[k] = tg_graph_input_link (g, node, k) >= 0;
  rc = d->check_links (params, linked, err);
  free (linked);
  return rc;
}

/* A bypassed node needs an input to pass through, and a link into it. */
static int
check_bypass (const TgGraph *g, int node, TgError *err)
{
  const Node *n = &g->nodes[node];
  const TgNodeDesc *d = n->desc;
  int k = tg_node_desc_bypass_input (d);
  char path[TG_ERROR_PATH_MAX];
  int rc;

  if (k >= 0 && d->inputs[k].optional && tg_graph_input_link (g, node, k) < 0)
    {
      snprintf (path, sizeof path, "nodes[%d].inputs.%s", node, d->inputs[k].name);
      rc = tg_error_set (err, TG_EMISSING, path, TG_MSG_BYPASS_NEEDS_LINK, n->id, d->type,
                         d->inputs[k].name);
    }
  else if (k < 0)
    {
      snprintf (path, sizeof path, "nodes[%d].ui.bypass", node);
      if (d->n_outputs == 0)
        rc = tg_error_set (err, TG_EINVAL, path, TG_MSG_BYPASS_NO_OUTPUT, n->id, d->type);
      else
        rc = tg_error_set (err, TG_EINVAL, path, TG_MSG_BYPASS_NO_INPUT, n->id, d->type,
                           tg_port_type_name (d->outputs[0].type), d->outputs[0].name);
    }
  else
    return 0;
  tg_error_set_node_id (err, n->id);
  return rc;
}

int
tg_graph_check_node (const TgGraph *g, int node, const void *params, TgError *err)
{
  const Node *n;
  const TgNodeDesc *d;
  void *own = NULL;
  int rc = 0;

  if (node < 0 || node >= g->n_nodes)
    return tg_error_set (err, TG_EINVAL, NULL, "no node %d", node);
  n = &g->nodes[node];
  d = n->desc;
  if (n->bypass && (rc = check_bypass (g, node, err)) < 0)
    return rc;
  for (int k = 0; k < d->n_params && rc == 0; k++)
    rc = tg_param_value_check (&d->params[k], &n->params[k], err);
  if (rc == 0 && (d->check || (d->check_links && !n->bypass)))
    {
      if (params == NULL)
        {
          own = calloc (1, d->params_size ? d->params_size : 1);
          for (int k = 0; own && k < d->n_params && rc == 0; k++)
            rc = tg_param_value_store (&d->params[k], &n->params[k], own);
          if (own == NULL || rc < 0)
            rc = tg_error_set (err, TG_ENOMEM, NULL, NULL);
          params = own;
        }
      if (rc == 0 && d->check)
        rc = d->check (params, err);
      if (rc == 0 && d->check_links && !n->bypass)
        rc = check_links (g, node, params, err);
      if (own)
        tg_params_struct_clear (d->params, d->n_params, own);
      free (own);
    }
  if (rc < 0)
    {
      tg_error_prefix_node (err, node, n->id);
      return rc;
    }
  for (int k = 0; k < d->n_inputs; k++)
    if (!d->inputs[k].optional && tg_graph_input_link (g, node, k) < 0
        && tg_graph_node_reads_input (g, node, k))
      {
        char path[TG_ERROR_PATH_MAX];
        snprintf (path, sizeof path, "nodes[%d].inputs.%s", node, d->inputs[k].name);
        tg_error_set (err, TG_EMISSING, path, TG_MSG_NEEDS_LINK,
                      n->id, d->type, d->inputs[k].name);
        tg_error_set_node_id (err, n->id);
        return TG_EMISSING;
      }
  return 0;
}

static bool
world_equal (const TgWorld *a, const TgWorld *b)
{
  return a->size_x == b->size_x && a->size_z == b->size_z && a->height_m == b->height_m
         && a->resolution == b->resolution && a->seed == b->seed;
}

double
tg_world_cell_m (const TgWorld *w)
{
  TgRegion r;

  tg_region_for_world (&r, w, w->resolution);
  return r.cell;
}

int
tg_warn_below_cells (TgError *warn, const char *name, const char *label, double value_m,
                     double cell_m, int cells)
{
  char path[TG_ERROR_PATH_MAX], v[32], c[32], least[32];

  if (!(value_m < cells * cell_m))
    return 0;
  tg_format_double (value_m, v);
  tg_format_double (cell_m, c);
  tg_format_double (cells * cell_m, least);
  snprintf (path, sizeof path, "params.%s", name);
  tg_error_set (warn, TG_ERANGE, path, TG_MSG_BELOW_CELLS, label, v,
                cells == 1 ? TG_MSG_ONE_CELL : TG_MSG_TWO_CELLS, c, least);
  return 1;
}

int
tg_graph_node_warning (const TgGraph *g, int node, TgError *warn)
{
  const Node *n;
  void *p;
  int rc = 0;

  if (node < 0 || node >= g->n_nodes)
    return 0;
  n = &g->nodes[node];
  if (n->desc->warn == NULL || n->bypass)
    return 0;
  if ((p = calloc (1, n->desc->params_size ? n->desc->params_size : 1)) == NULL)
    return 0;
  for (int k = 0; k < n->desc->n_params && rc == 0; k++)
    rc = tg_param_value_store (&n->desc->params[k], &n->params[k], p);
  tg_error_clear (warn);
  if (rc == 0)
    rc = n->desc->warn (p, tg_world_cell_m (&g->world), warn) > 0;
  else
    rc = 0;
  tg_params_struct_clear (n->desc->params, n->desc->n_params, p);
  free (p);
  if (rc)
    tg_error_prefix_node (warn, node, n->id);
  return rc;
}

bool
tg_graph_is_validated (const TgGraph *g)
{
  bool valid;

  pthread_mutex_lock ((pthread_mutex_t *) &g->lock);
  valid = g->valid && g->valid_generation == g->generation
          && world_equal (&g->valid_world, &g->world);
  pthread_mutex_unlock ((pthread_mutex_t *) &g->lock);
  return valid;
}

unsigned long
tg_graph_generation (const TgGraph *g)
{
  return g->generation;
}

/* Whether P lies inside folder DIR ("a/h.png" in "a"). */
static bool
path_inside (const char *p, const char *dir)
{
  size_t n = strlen (dir);
  return strncmp (p, dir, n) == 0 && p[n] == '/';
}

/* Refuses output path K of node N (index I) against path Q of node M. */
static int
output_paths_clash (const Node *n, int k, int i, const Node *m, int q, TgError *err)
{
  const char *a = n->params[k].s, *b = m->params[q].s;
  char path[TG_ERROR_PATH_MAX];

  snprintf (path, sizeof path, "nodes[%d].params.%s", i, n->desc->params[k].name);
  if (strcmp (a, b) == 0)
    tg_error_set (err, TG_EPATH, path, TG_MSG_ALSO_WRITTEN, a, m->id);
  else if (path_inside (a, b))
    tg_error_set (err, TG_EPATH, path, TG_MSG_NEEDS_FOLDER, a, b, m->id);
  else if (path_inside (b, a))
    tg_error_set (err, TG_EPATH, path, TG_MSG_WRITTEN_AS_FILE, a, m->id, b);
  else
    return 0;
  tg_error_set_node_id (err, n->id);
  return TG_EPATH;
}

/* Everything tg_graph_validate checks, without the record. */
static int
validate (const TgGraph *g, TgError *err)
{
  int rc, *order;

  if ((rc = tg_world_check (&g->world, err)) < 0)
    return rc;
  for (int i = 0; i < g->n_nodes; i++)
    {
      const Node *n = &g->nodes[i];
      if ((rc = tg_graph_check_node (g, i, NULL, err)) < 0)
        return rc;
      /* Two exports writing the same file would race for it; a file and
       * a folder of one name cannot both be. */
      for (int k = 0; k < n->desc->n_params; k++)
        if (n->desc->params[k].type == TG_PARAM_OUTPUT_PATH)
          for (int j = 0; j < i; j++)
            for (int q = 0; q < g->nodes[j].desc->n_params; q++)
              if (g->nodes[j].desc->params[q].type == TG_PARAM_OUTPUT_PATH
                  && g->nodes[j].params[q].s && n->params[k].s
                  && (rc = output_paths_clash (n, k, i, &g->nodes[j], q, err)) < 0)
                return rc;
    }
  for (int i = 0; i < g->n_links; i++)
    {
      const TgLink *l = &g->links[i];
      if (l->from_node < 0 || l->from_node >= g->n_nodes || l->to_node < 0
          || l->to_node >= g->n_nodes)
        return tg_error_set (err, TG_ELINK, "links", TG_MSG_LINK_MISSING_NODE, i);
    }
  order = malloc (sizeof (int) * (size_t) (g->n_nodes ? g->n_nodes : 1));
  if (order == NULL)
    return tg_error_set (err, TG_ENOMEM, NULL, NULL);
  rc = tg_graph_topo_order (g, order, err);
  free (order);
  return rc;
}

int
tg_graph_validate (const TgGraph *g, TgError *err)
{
  pthread_mutex_t *lock = (pthread_mutex_t *) &g->lock;
  TgGraph *rec = (TgGraph *) g; /* the record is not part of the graph's value */
  int rc;

  if (tg_graph_is_validated (g))
    return 0;
  rc = validate (g, err);
  if (rc == 0)
    {
      pthread_mutex_lock (lock);
      rec->valid = true;
      rec->valid_generation = g->generation;
      rec->valid_world = g->world;
      pthread_mutex_unlock (lock);
    }
  return rc;
}
