/* Upgrades of older .tgraph files, as tables.
 *
 * Format version 2 renamed parameters so that every node spells one idea
 * one way (center_m, min_height, max_slope_deg: see docs/HACKING.md,
 * "Parameter names").  The loader runs these steps on the parsed tree
 * before it reads anything, and keeps a log of what it renamed so that an
 * error about a renamed parameter still points at the key the file
 * holds.  A table row never changes once released: a later rename adds a
 * table for the next version.
 */
#include <stdlib.h>
#include <string.h>

#include "tgformats-private.h"

/* Version 1 -> 2.  Rows with a LIST rename a field of that list
 * parameter's items (the list named as in version 2). */
const TgTgraphRename tg__tgraph_renames_v2[] = {
  { "field.box", NULL, "centre_m", "center_m" },
  { "field.sphere", NULL, "centre_m", "center_m" },
  { "field.torus", NULL, "centre_m", "center_m" },
  { "filter.clamp", NULL, "min", "min_height" },
  { "filter.clamp", NULL, "max", "max_height" },
  { "filter.remap", NULL, "in_min", "min_input" },
  { "filter.remap", NULL, "in_max", "max_input" },
  { "filter.remap", NULL, "out_min", "min_output" },
  { "filter.remap", NULL, "out_max", "max_output" },
  { "input.heightmap", NULL, "height_min", "min_height" },
  { "input.heightmap", NULL, "height_max", "max_height" },
  { "scatter.colormap", NULL, "yaw_min_deg", "min_yaw_deg" },
  { "scatter.colormap", NULL, "yaw_max_deg", "max_yaw_deg" },
  { "scatter.colormap", NULL, "scale_min", "min_scale" },
  { "scatter.colormap", NULL, "scale_max", "max_scale" },
  { "scatter.mask", NULL, "yaw_min_deg", "min_yaw_deg" },
  { "scatter.mask", NULL, "yaw_max_deg", "max_yaw_deg" },
  { "scatter.mask", NULL, "scale_min", "min_scale" },
  { "scatter.mask", NULL, "scale_max", "max_scale" },
  { "select.height", NULL, "min", "min_height" },
  { "select.height", NULL, "max", "max_height" },
  { "select.slope", NULL, "min_deg", "min_slope_deg" },
  { "select.slope", NULL, "max_deg", "max_slope_deg" },
  { "texture.biome", "rules", "height_min", "min_height" },
  { "texture.biome", "rules", "height_max", "max_height" },
  { "texture.biome", "rules", "moisture_min", "min_moisture" },
  { "texture.biome", "rules", "moisture_max", "max_moisture" },
  { "texture.biome", "rules", "heat_min", "min_heat" },
  { "texture.biome", "rules", "heat_max", "max_heat" },
  { "texture.colorize", NULL, "input_min", "min_input" },
  { "texture.colorize", NULL, "input_max", "max_input" },
};
const int tg__tgraph_n_renames_v2
  = (int) (sizeof tg__tgraph_renames_v2 / sizeof tg__tgraph_renames_v2[0]);

const char *
tg_tgraph_param_new_name (const char *type, const char *old_name)
{
  if (!type || !old_name)
    return NULL;
  for (int k = 0; k < tg__tgraph_n_renames_v2; k++)
    {
      const TgTgraphRename *r = &tg__tgraph_renames_v2[k];
      if (!r->list && strcmp (r->type, type) == 0 && strcmp (r->old_name, old_name) == 0)
        return r->new_name;
    }
  return NULL;
}

void
tg__rename_log_clear (TgRenameLog *log)
{
  free (log->v);
  memset (log, 0, sizeof *log);
}

static int
log_add (TgRenameLog *log, int node, int item, const TgTgraphRename *r)
{
  if (log->n == log->cap)
    {
      size_t cap = log->cap ? 2 * log->cap : 16;
      TgRenamed *grown = realloc (log->v, cap * sizeof *grown);
      if (!grown)
        return TG_ENOMEM;
      log->v = grown;
      log->cap = cap;
    }
  log->v[log->n++] = (TgRenamed){ .node = node, .item = item, .rename = r };
  return 0;
}

/* The row renaming KEY of a node of TYPE (in LIST's items when LIST). */
static const TgTgraphRename *
find_rename (const char *type, const char *list, const char *key)
{
  for (int k = 0; k < tg__tgraph_n_renames_v2; k++)
    {
      const TgTgraphRename *r = &tg__tgraph_renames_v2[k];
      if (strcmp (r->type, type) != 0 || strcmp (r->old_name, key) != 0)
        continue;
      if (list ? r->list && strcmp (r->list, list) == 0 : !r->list)
        return r;
    }
  return NULL;
}

/* OBJ with its keys renamed by the rows for TYPE (and LIST), in the same
 * order, or OBJ itself (a new reference) when nothing is renamed.  ITEM
 * is the list item index for the log, -1 for the parameters. */
static json_object *
renamed_object (json_object *obj, const char *type, const char *list, int node, int item,
                TgRenameLog *log, const char *path, TgError *err, int *rc)
{
  json_object *out;
  bool any = false;

  *rc = 0;
  json_object_object_foreach (obj, key0, val0)
    {
      const TgTgraphRename *r = find_rename (type, list, key0);
      (void) val0;
      if (!r)
        continue;
      any = true;
      if (json_object_object_get_ex (obj, r->new_name, NULL))
        {
          char at[2 * TG_ERROR_PATH_MAX];
          snprintf (at, sizeof at, "%s.%s", path, r->new_name);
          *rc = tg_error_set (err, TG_EUNKNOWN, at,
                              "\"%s\" is the version 2 name of \"%s\", and this version 1 file "
                              "gives both; keep \"%s\"",
                              r->new_name, r->old_name, r->old_name);
          return NULL;
        }
    }
  if (!any)
    return json_object_get (obj);

  out = json_object_new_object ();
  if (!out)
    {
      *rc = tg_error_set (err, TG_ENOMEM, path, TG_MSG_OUT_OF_MEMORY);
      return NULL;
    }
  json_object_object_foreach (obj, key, val)
    {
      const TgTgraphRename *r = find_rename (type, list, key);
      if (r && (*rc = log_add (log, node, item, r)) < 0)
        break;
      if (json_object_object_add (out, r ? r->new_name : key, json_object_get (val)) < 0)
        {
          *rc = TG_ENOMEM;
          break;
        }
    }
  if (*rc)
    {
      json_object_put (out);
      tg_error_set (err, TG_ENOMEM, path, TG_MSG_OUT_OF_MEMORY);
      return NULL;
    }
  return out;
}

/* Renames the item fields of the list parameters of node NODE's PARAMS. */
static int
rename_list_fields (json_object *params, const char *type, int node, TgRenameLog *log,
                    const char *params_path, TgError *err)
{
  const char *done = NULL;

  for (int k = 0; k < tg__tgraph_n_renames_v2; k++)
    {
      const TgTgraphRename *r = &tg__tgraph_renames_v2[k];
      json_object *list;
      char path[2 * TG_ERROR_PATH_MAX]; /* cut to TG_ERROR_PATH_MAX by tg_error_set */

      if (!r->list || strcmp (r->type, type) != 0 || (done && strcmp (done, r->list) == 0))
        continue;
      done = r->list;
      if (!json_object_object_get_ex (params, r->list, &list)
          || json_object_get_type (list) != json_type_array)
        continue;
      for (size_t i = 0; i < json_object_array_length (list); i++)
        {
          json_object *item = json_object_array_get_idx (list, i), *renamed;
          int rc;

          if (json_object_get_type (item) != json_type_object)
            continue;
          snprintf (path, sizeof path, "%s.%s[%zu]", params_path, r->list, i);
          renamed = renamed_object (item, type, r->list, node, (int) i, log, path, err, &rc);
          if (!renamed)
            return rc;
          if (renamed == item)
            json_object_put (renamed);
          else if (json_object_array_put_idx (list, i, renamed) < 0)
            {
              json_object_put (renamed);
              return tg_error_set (err, TG_ENOMEM, path, TG_MSG_OUT_OF_MEMORY);
            }
        }
    }
  return 0;
}

int
tg__tgraph_migrate_v1 (json_object *root, TgRenameLog *log, TgError *err)
{
  json_object *nodes;

  /* Anything malformed is left for the loader to report in its place. */
  if (!json_object_object_get_ex (root, "nodes", &nodes)
      || json_object_get_type (nodes) != json_type_array)
    return 0;
  for (size_t n = 0; n < json_object_array_length (nodes); n++)
    {
      json_object *node = json_object_array_get_idx (nodes, n), *jtype, *params, *renamed;
      char path[TG_ERROR_PATH_MAX];
      const char *type;
      int rc;

      if (json_object_get_type (node) != json_type_object
          || !json_object_object_get_ex (node, "type", &jtype)
          || json_object_get_type (jtype) != json_type_string
          || !json_object_object_get_ex (node, "params", &params)
          || json_object_get_type (params) != json_type_object)
        continue;
      type = json_object_get_string (jtype);
      snprintf (path, sizeof path, "nodes[%zu].params", n);
      renamed = renamed_object (params, type, NULL, (int) n, -1, log, path, err, &rc);
      if (renamed)
        {
          if (renamed != params)
            json_object_object_add (node, "params", renamed); /* in place: same key order */
          else
            json_object_put (renamed);
          rc = rename_list_fields (renamed, type, (int) n, log, path, err);
        }
      if (rc)
        {
          json_object *jid;
          if (json_object_object_get_ex (node, "id", &jid)
              && json_object_get_type (jid) == json_type_string)
            tg_error_set_node_id (err, json_object_get_string (jid));
          return rc;
        }
    }
  return 0;
}

/* Reads "[N]" at *S into *OUT and moves past it. */
static bool
read_index (const char **s, long *out)
{
  char *end;

  if (**s != '[')
    return false;
  *out = strtol (*s + 1, &end, 10);
  if (end == *s + 1 || *end != ']')
    return false;
  *s = end + 1;
  return true;
}

static bool
name_is (const char *name, const char *s, size_t len)
{
  return strlen (name) == len && strncmp (name, s, len) == 0;
}

void
tg__rename_log_text_path (const TgRenameLog *log, const char *path, char *out, size_t size)
{
  const char *s = path, *name, *after, *field = NULL;
  const char *old_param = NULL, *old_field = NULL;
  size_t name_len, field_len = 0;
  long node, item = -1;

  snprintf (out, size, "%s", path);
  if (!log || log->n == 0 || strncmp (s, "nodes", 5) != 0)
    return;
  s += 5;
  if (!read_index (&s, &node) || strncmp (s, ".params.", 8) != 0)
    return;
  /* nodes[N].params.NAME, or nodes[N].params.NAME[I].FIELD... */
  name = s + 8;
  name_len = strcspn (name, ".[");
  after = name + name_len;
  s = after;
  if (read_index (&s, &item) && *s == '.')
    {
      field = s + 1;
      field_len = strcspn (field, ".[");
    }

  for (size_t k = 0; k < log->n; k++)
    {
      const TgRenamed *e = &log->v[k];
      if (e->node != node)
        continue;
      if (e->item < 0 && name_is (e->rename->new_name, name, name_len))
        old_param = e->rename->old_name;
      else if (field && e->item == item && name_is (e->rename->list, name, name_len)
               && name_is (e->rename->new_name, field, field_len))
        old_field = e->rename->old_name;
    }
  if (old_field)
    snprintf (out, size, "%.*s%s%s", (int) (field - path), path, old_field, field + field_len);
  else if (old_param)
    snprintf (out, size, "%.*s%s%s", (int) (name - path), path, old_param, after);
}
