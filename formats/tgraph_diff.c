/* The semantic difference of two graphs (`tgraph diff`): what changed in
 * the world, the nodes, their parameters and the links, not in the text.
 * Both graphs come from the loader, so a version-1 file compares with a
 * version-2 one after migration.  Values are kept as the one-line JSON
 * the .tgraph format writes, so every front end shows them the same way.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "tgformats-private.h"
#include <tgformats/tgformats.h>

typedef struct
{
  TgGraphDiff *d;
  bool oom;
} Differ;

static char *
dup_or_null (const char *s, Differ *df)
{
  char *c;

  if (!s)
    return NULL;
  c = strdup (s);
  if (!c)
    df->oom = true;
  return c;
}

/* Appends an entry; the strings are copied (OLD_V and NEW_V taken over). */
static void
add_entry (Differ *df, TgDiffKind kind, const char *node, const char *name, char *old_v,
           char *new_v, const char *unit)
{
  TgGraphDiff *d = df->d;
  TgDiffEntry *e;

  if (!df->oom && d->n == d->cap)
    {
      int ncap = d->cap ? 2 * d->cap : 16;
      TgDiffEntry *n = realloc (d->entries, (size_t) ncap * sizeof *n);
      if (!n)
        df->oom = true;
      else
        {
          d->entries = n;
          d->cap = ncap;
        }
    }
  if (df->oom)
    {
      free (old_v);
      free (new_v);
      return;
    }
  e = &d->entries[d->n++];
  *e = (TgDiffEntry){ .kind = kind, .unit = unit, .old_value = old_v, .new_value = new_v };
  e->node = dup_or_null (node, df);
  e->name = dup_or_null (name, df);
}

static char *
quoted (const char *s, Differ *df)
{
  char *q = tg_json_quote (s);

  if (!q)
    df->oom = true;
  return q;
}

static char *
printed (Differ *df, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static char *
printed (Differ *df, const char *fmt, ...)
{
  va_list ap;
  char *s = NULL;
  int n;

  va_start (ap, fmt);
  n = vsnprintf (NULL, 0, fmt, ap);
  va_end (ap);
  if (n >= 0 && (s = malloc ((size_t) n + 1)))
    {
      va_start (ap, fmt);
      vsnprintf (s, (size_t) n + 1, fmt, ap);
      va_end (ap);
    }
  if (!s)
    df->oom = true;
  return s;
}

static char *
number_text (double v, Differ *df)
{
  char t[32];

  tg_format_double (v, t);
  return printed (df, "%s", t);
}

static void
diff_world (Differ *df, const TgWorld *a, const TgWorld *b)
{
  if (a->size_x != b->size_x || a->size_z != b->size_z)
    {
      char ax[32], az[32], bx[32], bz[32];
      tg_format_double (a->size_x, ax);
      tg_format_double (a->size_z, az);
      tg_format_double (b->size_x, bx);
      tg_format_double (b->size_z, bz);
      add_entry (df, TG_DIFF_WORLD, NULL, "size_m", printed (df, "[%s, %s]", ax, az),
                 printed (df, "[%s, %s]", bx, bz), "m");
    }
  if (a->height_m != b->height_m)
    add_entry (df, TG_DIFF_WORLD, NULL, "height_m", number_text (a->height_m, df),
               number_text (b->height_m, df), "m");
  if (a->resolution != b->resolution)
    add_entry (df, TG_DIFF_WORLD, NULL, "resolution", printed (df, "%d", a->resolution),
               printed (df, "%d", b->resolution), NULL);
  if (a->seed != b->seed)
    add_entry (df, TG_DIFF_WORLD, NULL, "seed", printed (df, "%u", (unsigned) a->seed),
               printed (df, "%u", (unsigned) b->seed), NULL);
}

/* The value as a .tgraph file writes it, on one line. */
static char *
param_text (const TgParamDesc *d, const TgParamValue *v, Differ *df)
{
  bool oom = false;
  json_object *o = tg__param_to_json (d, v, &oom);
  char *text = oom ? NULL : tg__json_to_text (o);

  json_object_put (o);
  if (!text)
    df->oom = true;
  return text;
}

/* Whether nodes I of A and J of B have the same type and parameters. */
static bool
same_content (const TgGraph *a, int i, const TgGraph *b, int j)
{
  const TgNodeDesc *da = tg_graph_node_desc (a, i);

  if (da != tg_graph_node_desc (b, j))
    return false;
  for (int k = 0; k < da->n_params; k++)
    if (!tg_param_value_equal (tg_graph_get_param_at (a, i, k), tg_graph_get_param_at (b, j, k)))
      return false;
  return true;
}

/* How the nodes of the two graphs correspond: by id, or as a rename. */
typedef struct
{
  int *a_to_b; /* per node of A: its node in B, or -1 when it was removed */
  int *b_to_a; /* the inverse: -1 for a node added */
} Pairing;

typedef struct
{
  const char *id;
  int index;
} IdIndex;

static int
id_index_cmp (const void *pa, const void *pb)
{
  return strcmp (((const IdIndex *) pa)->id, ((const IdIndex *) pb)->id);
}

static bool
is_rename (const TgGraph *a, const TgGraph *b, const Pairing *p, int i)
{
  return p->a_to_b[i] >= 0
         && strcmp (tg_graph_node_id (a, i), tg_graph_node_id (b, p->a_to_b[i])) != 0;
}

/* Pairs nodes of the same id (sorted ids, so a big graph takes n log n),
 * then a node of A whose id is gone with a node of B whose id is new when
 * they have the same type and parameters and neither matches another
 * such node: a rename. */
static int
pair_nodes (const TgGraph *a, const TgGraph *b, Pairing *p)
{
  int na = tg_graph_n_nodes (a), nb = tg_graph_n_nodes (b);
  IdIndex *sorted = malloc (((size_t) nb + 1) * sizeof *sorted);
  int *n_match_a = calloc ((size_t) na + 1, sizeof *n_match_a);
  int *n_match_b = calloc ((size_t) nb + 1, sizeof *n_match_b);
  int *match = malloc (((size_t) na + 1) * sizeof *match);
  int rc = TG_ENOMEM;

  p->a_to_b = malloc (((size_t) na + 1) * sizeof *p->a_to_b);
  p->b_to_a = malloc (((size_t) nb + 1) * sizeof *p->b_to_a);
  if (!sorted || !n_match_a || !n_match_b || !match || !p->a_to_b || !p->b_to_a)
    goto out;
  for (int j = 0; j < nb; j++)
    {
      sorted[j] = (IdIndex){ tg_graph_node_id (b, j), j };
      p->b_to_a[j] = -1;
    }
  qsort (sorted, (size_t) nb, sizeof *sorted, id_index_cmp);
  for (int i = 0; i < na; i++)
    {
      IdIndex key = { tg_graph_node_id (a, i), -1 };
      IdIndex *hit = nb ? bsearch (&key, sorted, (size_t) nb, sizeof *sorted, id_index_cmp) : NULL;
      p->a_to_b[i] = hit ? hit->index : -1;
      if (hit)
        p->b_to_a[hit->index] = i;
    }

  for (int i = 0; i < na; i++)
    for (int j = 0; j < nb && p->a_to_b[i] < 0; j++)
      if (p->b_to_a[j] < 0 && same_content (a, i, b, j))
        {
          n_match_a[i]++;
          n_match_b[j]++;
          match[i] = j;
        }
  for (int i = 0; i < na; i++)
    if (n_match_a[i] == 1 && n_match_b[match[i]] == 1)
      {
        p->a_to_b[i] = match[i];
        p->b_to_a[match[i]] = i;
      }
  rc = 0;
out:
  free (sorted);
  free (n_match_a);
  free (n_match_b);
  free (match);
  return rc;
}

static void
diff_params (Differ *df, const TgGraph *a, int i, const TgGraph *b, int j)
{
  const TgNodeDesc *desc = tg_graph_node_desc (b, j);
  const char *id = tg_graph_node_id (b, j);

  for (int k = 0; k < desc->n_params; k++)
    {
      const TgParamDesc *p = &desc->params[k];
      const TgParamValue *va = tg_graph_get_param_at (a, i, k);
      const TgParamValue *vb = tg_graph_get_param_at (b, j, k);
      if (!tg_param_value_equal (va, vb))
        add_entry (df, TG_DIFF_PARAM, id, p->name, param_text (p, va, df),
                   param_text (p, vb, df), p->unit);
    }
}

static void
diff_nodes (Differ *df, const TgGraph *a, const TgGraph *b, const Pairing *p)
{
  int na = tg_graph_n_nodes (a), nb = tg_graph_n_nodes (b);

  for (int i = 0; i < na; i++)
    if (p->a_to_b[i] < 0)
      add_entry (df, TG_DIFF_NODE_REMOVED, tg_graph_node_id (a, i), NULL,
                 quoted (tg_graph_node_desc (a, i)->type, df), NULL, NULL);
  for (int j = 0; j < nb; j++)
    if (p->b_to_a[j] < 0)
      add_entry (df, TG_DIFF_NODE_ADDED, tg_graph_node_id (b, j), NULL, NULL,
                 quoted (tg_graph_node_desc (b, j)->type, df), NULL);
  for (int j = 0; j < nb; j++)
    {
      int i = p->b_to_a[j];
      if (i >= 0 && is_rename (a, b, p, i))
        add_entry (df, TG_DIFF_NODE_RENAMED, tg_graph_node_id (b, j), NULL,
                   quoted (tg_graph_node_id (a, i), df), quoted (tg_graph_node_id (b, j), df),
                   NULL);
    }
  for (int j = 0; j < nb; j++)
    {
      int i = p->b_to_a[j];
      if (i < 0 || is_rename (a, b, p, i))
        continue;
      if (tg_graph_node_desc (a, i) != tg_graph_node_desc (b, j))
        add_entry (df, TG_DIFF_NODE_TYPE, tg_graph_node_id (b, j), NULL,
                   quoted (tg_graph_node_desc (a, i)->type, df),
                   quoted (tg_graph_node_desc (b, j)->type, df), NULL);
      else
        diff_params (df, a, i, b, j);
    }
  for (int j = 0; j < nb; j++)
    {
      int i = p->b_to_a[j];
      if (i >= 0 && tg_graph_node_bypass (a, i) != tg_graph_node_bypass (b, j))
        add_entry (df, TG_DIFF_NODE_BYPASS, tg_graph_node_id (b, j), NULL,
                   dup_or_null (tg_graph_node_bypass (a, i) ? "true" : "false", df),
                   dup_or_null (tg_graph_node_bypass (b, j) ? "true" : "false", df), NULL);
    }
}

/* Node I of A under the id it has in B (its new id when renamed). */
static const char *
id_in_b (const TgGraph *a, const TgGraph *b, const Pairing *p, int i)
{
  return p && p->a_to_b[i] >= 0 ? tg_graph_node_id (b, p->a_to_b[i]) : tg_graph_node_id (a, i);
}

typedef struct
{
  char *from, *to; /* "node.port" */
} LinkText;

static int
link_cmp (const void *pa, const void *pb)
{
  const LinkText *x = pa, *y = pb;
  int c = strcmp (x->from, y->from);

  return c ? c : strcmp (x->to, y->to);
}

static void
link_texts_free (LinkText *t, int n)
{
  for (int k = 0; k < n && t; k++)
    {
      free (t[k].from);
      free (t[k].to);
    }
  free (t);
}

/* G's links as text, sorted; node ids through pairing P when G is the
 * old graph (OTHER the new one), so renames do not show as new links. */
static LinkText *
link_texts (Differ *df, const TgGraph *g, const TgGraph *other, const Pairing *p)
{
  int n = tg_graph_n_links (g);
  LinkText *t = calloc ((size_t) n + 1, sizeof *t);

  if (!t)
    {
      df->oom = true;
      return NULL;
    }
  for (int k = 0; k < n; k++)
    {
      const TgLink *l = tg_graph_link (g, k);
      t[k].from = printed (df, "%s.%s", id_in_b (g, other, p, l->from_node),
                           tg_graph_node_desc (g, l->from_node)->outputs[l->from_port].name);
      t[k].to = printed (df, "%s.%s", id_in_b (g, other, p, l->to_node),
                         tg_graph_node_desc (g, l->to_node)->inputs[l->to_port].name);
      if (!t[k].from || !t[k].to)
        {
          link_texts_free (t, n);
          return NULL;
        }
    }
  qsort (t, (size_t) n, sizeof *t, link_cmp);
  return t;
}

static void
diff_links (Differ *df, const TgGraph *a, const TgGraph *b, const Pairing *p)
{
  int na = tg_graph_n_links (a), nb = tg_graph_n_links (b), i = 0, j = 0;
  LinkText *ta = link_texts (df, a, b, p);
  LinkText *tb = link_texts (df, b, b, NULL);

  /* Removed links first, then added ones, each in sorted order. */
  for (int pass = 0; pass < 2 && ta && tb; pass++)
    for (i = 0, j = 0; i < na || j < nb;)
      {
        int c = i == na ? 1 : j == nb ? -1 : link_cmp (&ta[i], &tb[j]);
        if (c == 0)
          i++, j++;
        else if (c < 0)
          {
            if (pass == 0)
              add_entry (df, TG_DIFF_LINK_REMOVED, ta[i].from, ta[i].to, NULL, NULL, NULL);
            i++;
          }
        else
          {
            if (pass == 1)
              add_entry (df, TG_DIFF_LINK_ADDED, tb[j].from, tb[j].to, NULL, NULL, NULL);
            j++;
          }
      }
  link_texts_free (ta, na);
  link_texts_free (tb, nb);
}

/* The "ui" block UI parsed (NULL for none or one that is not an object),
 * with its viewer_pin taken out into *PIN. */
static json_object *
ui_without_pin (const char *ui, bool *pin)
{
  json_object *o = ui ? json_tokener_parse (ui) : NULL, *v;

  *pin = false;
  if (o && !json_object_is_type (o, json_type_object))
    {
      json_object_put (o);
      return NULL;
    }
  if (o && json_object_object_get_ex (o, "viewer_pin", &v))
    {
      *pin = json_object_get_boolean (v);
      json_object_object_del (o, "viewer_pin");
    }
  return o;
}

/* Layout changes, and the viewer's pin apart: "pinned", not a new block. */
static void
diff_moves (Differ *df, const TgGraph *a, const TgGraph *b, const Pairing *p)
{
  for (int j = 0; j < tg_graph_n_nodes (b); j++)
    {
      int i = p->b_to_a[j];
      if (i < 0)
        continue;
      const char *ua = tg_graph_node_ui (a, i), *ub = tg_graph_node_ui (b, j);
      if (!(ua || ub) || (ua && ub && strcmp (ua, ub) == 0))
        continue;
      bool pa, pb;
      json_object *oa = ui_without_pin (ua, &pa), *ob = ui_without_pin (ub, &pb);
      /* An empty block is no block: pinning a node without one adds it. */
      bool ea = !oa || json_object_object_length (oa) == 0;
      bool eb = !ob || json_object_object_length (ob) == 0;
      bool moved = !(ea && eb) && (ea || eb || !json_object_equal (oa, ob));
      json_object_put (oa);
      json_object_put (ob);
      if (pa != pb)
        add_entry (df, TG_DIFF_NODE_PIN, tg_graph_node_id (b, j), NULL,
                   dup_or_null (pa ? "true" : "false", df), dup_or_null (pb ? "true" : "false", df),
                   NULL);
      if (moved || pa == pb)
        add_entry (df, TG_DIFF_NODE_MOVED, tg_graph_node_id (b, j), NULL,
                   dup_or_null (ua ? ua : "null", df), dup_or_null (ub ? ub : "null", df), NULL);
    }
}

int
tg_graph_diff (const TgGraph *old_g, const TgGraph *new_g, TgGraphDiff *out, TgError *err)
{
  Pairing p = { NULL, NULL };
  Differ df = { .d = out };

  memset (out, 0, sizeof *out);
  df.oom = pair_nodes (old_g, new_g, &p) < 0;
  if (!df.oom)
    {
      diff_world (&df, tg_graph_world_const (old_g), tg_graph_world_const (new_g));
      diff_nodes (&df, old_g, new_g, &p);
      diff_links (&df, old_g, new_g, &p);
      diff_moves (&df, old_g, new_g, &p);
    }
  free (p.a_to_b);
  free (p.b_to_a);
  if (df.oom)
    {
      tg_graph_diff_clear (out);
      return tg_error_set (err, TG_ENOMEM, "", "out of memory comparing the graphs");
    }
  return 0;
}

void
tg_graph_diff_clear (TgGraphDiff *d)
{
  for (int k = 0; k < d->n; k++)
    {
      free (d->entries[k].node);
      free (d->entries[k].name);
      free (d->entries[k].old_value);
      free (d->entries[k].new_value);
    }
  free (d->entries);
  memset (d, 0, sizeof *d);
}

const char *
tg_diff_kind_name (TgDiffKind kind)
{
  static const char *const names[] = {
    [TG_DIFF_WORLD] = "world",
    [TG_DIFF_NODE_REMOVED] = "node-removed",
    [TG_DIFF_NODE_ADDED] = "node-added",
    [TG_DIFF_NODE_RENAMED] = "node-renamed",
    [TG_DIFF_NODE_TYPE] = "node-type",
    [TG_DIFF_PARAM] = "param",
    [TG_DIFF_LINK_REMOVED] = "link-removed",
    [TG_DIFF_LINK_ADDED] = "link-added",
    [TG_DIFF_NODE_MOVED] = "node-moved",
    [TG_DIFF_NODE_BYPASS] = "node-bypass",
    [TG_DIFF_NODE_PIN] = "node-pin",
  };

  return (unsigned) kind < TG_N_ELEMENTS (names) ? names[kind] : "unknown";
}

char *
tg_json_quote (const char *s)
{
  TgBuf b;

  tg__buf_init (&b);
  tg__json_put_string (&b, s);
  return tg__buf_steal (&b);
}
