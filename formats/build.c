/* The build: every export of a graph plus manifest.json, all or nothing.
 *
 * The CLI (`tgraph eval`) and the GUI's Export both call tg_build, so
 * both stage the same files through the same writers and describe them
 * with the same manifest bytes.  The manifest holds nothing that changes
 * from run to run or machine to machine (no time, no absolute path), so
 * two builds of one graph are byte-identical, manifest included.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tgformats-private.h"

#define TG__MANIFEST_NAME "manifest.json"

typedef struct
{
  const TgExportFile *file;
  char sha256[65];
  uint64_t bytes;
} Entry;

static int
entry_cmp (const void *a, const void *b)
{
  return strcmp (((const Entry *) a)->file->path, ((const Entry *) b)->file->path);
}

static json_object *
pair (double a, double b)
{
  return tg__json_numbers ((const double[]) { a, b }, 2);
}

static json_object *
int_pair (int a, int b)
{
  json_object *arr = json_object_new_array_ext (2);

  if (!arr)
    return NULL;
  if (json_object_array_add (arr, json_object_new_int (a)) != 0
      || json_object_array_add (arr, json_object_new_int (b)) != 0)
    {
      json_object_put (arr);
      return NULL;
    }
  return arr;
}

static json_object *
file_entry (const Entry *en, const TgGraph *g)
{
  const TgWorld *w = tg_graph_world_const (g);
  const TgExportFile *f = en->file;
  json_object *o = json_object_new_object (), *extent, *heightmap, *channels, *instances;
  /* The manifest says the format the file is in, and how it was encoded. */
  const char *compression, *format = tg__writer_format (f->format ? f->format : "", &compression);
  TgRegion r;
  bool ok, oom;

  if (!o)
    return NULL;
  /* The extent of the samples the file holds: the world's edges on the
   * lattice of the file's own width, or a tile's window of its lattice. */
  if (f->lattice_w > 0)
    {
      tg_region_for_world (&r, w, f->lattice_w);
      r = tg_region_window (&r, f->col0, f->row0, f->width, f->height);
    }
  else
    tg_region_for_world (&r, w, f->width);
  extent = json_object_new_object ();
  ok = extent
       && tg__json_add (extent, "min", pair (tg_region_x (&r, 0), tg_region_z (&r, r.height - 1)))
       && tg__json_add (extent, "max", pair (tg_region_x (&r, r.width - 1), tg_region_z (&r, 0)));
  ok = ok && tg__json_add (o, "path", json_object_new_string (f->path))
       && tg__json_add (o, "bytes", json_object_new_int64 ((int64_t) en->bytes))
       && tg__json_add (o, "sha256", json_object_new_string (en->sha256))
       && tg__json_add (o, "format", json_object_new_string (format))
       && (!compression || tg__json_add (o, "compression", json_object_new_string (compression)))
       && tg__json_add (o, "node", json_object_new_string (f->node_id ? f->node_id : ""))
       && tg__json_add (o, "resolution", int_pair (f->width, f->height))
       && (f->lattice_w <= 0 || tg__json_add (o, "first_sample", int_pair (f->col0, f->row0)));
  if (ok)
    {
      ok = tg__json_add (o, "extent_m", extent);
      extent = NULL;
    }
  ok = ok && tg__json_add (o, "seed", json_object_new_int64 (w->seed));
  if (ok)
    {
      heightmap = tg__manifest_heightmap (g, f, &r, &oom);
      ok = heightmap ? tg__json_add (o, "heightmap", heightmap) : !oom;
    }
  if (ok)
    {
      channels = tg__manifest_channels (f, &oom);
      ok = channels ? tg__json_add (o, "channels", channels) : !oom;
    }
  if (ok)
    {
      instances = tg__manifest_instances (g, f, &oom);
      ok = instances ? tg__json_add (o, "instances", instances) : !oom;
    }
  json_object_put (extent);
  if (!ok)
    {
      json_object_put (o);
      return NULL;
    }
  return o;
}

int
tg_graph_name_check (const char *graph_name, TgError *err)
{
  const char *slash = graph_name ? strrchr (graph_name, '/') : NULL;
  const char *name = slash ? slash + 1 : graph_name;
  size_t n = name ? strlen (name) : 0, bad = name ? tg_utf8_check (name, n) : 0;

  if (bad == n)
    return 0;
  return tg_error_set (err, TG_EINVAL, "",
                       "the graph's file name is not UTF-8 (byte %zu is 0x%02x), and the "
                       "manifest records it; rename the file",
                       bad + 1, (unsigned) (unsigned char) name[bad]);
}

static char *
manifest_text (const Entry *entries, int n, const TgGraph *g, const char *graph_name)
{
  const TgWorld *w = tg_graph_world_const (g);
  json_object *root = json_object_new_object (), *world = NULL, *files = NULL;
  const char *name = NULL;
  char *text = NULL;
  bool ok;
  TgBuf b;

  /* Only the name: a path would differ between machines. */
  if (graph_name)
    {
      const char *slash = strrchr (graph_name, '/');
      name = slash ? slash + 1 : graph_name;
    }
  ok = root && tg__json_add (root, "tgraph_version", json_object_new_string (TG_VERSION_STRING))
       && tg__json_add (root, "format_version", json_object_new_int (TG_FORMAT_VERSION))
       && (name ? tg__json_add (root, "graph", json_object_new_string (name))
                : json_object_object_add (root, "graph", NULL) == 0);
  ok = ok && (world = json_object_new_object ())
       && tg__json_add (world, "size_m", pair (w->size_x, w->size_z))
       && tg__json_add (world, "height_m", json_object_new_double (w->height_m))
       && tg__json_add (world, "resolution", json_object_new_int (w->resolution))
       && tg__json_add (world, "seed", json_object_new_int64 (w->seed));
  if (ok)
    {
      ok = tg__json_add (root, "world", world);
      world = NULL;
    }
  ok = ok && (files = json_object_new_array_ext (n > 0 ? n : 1));
  for (int i = 0; ok && i < n; i++)
    {
      json_object *f = file_entry (&entries[i], g);
      ok = f && json_object_array_add (files, f) == 0;
      if (!ok)
        json_object_put (f);
    }
  if (ok)
    {
      ok = tg__json_add (root, "files", files);
      files = NULL;
    }
  if (ok)
    {
      tg__buf_init (&b);
      tg__json_emit (&b, root, 0);
      tg__buf_putc (&b, '\n');
      text = tg__buf_steal (&b);
    }
  json_object_put (world);
  json_object_put (files);
  json_object_put (root);
  return text;
}

static int
write_manifest (TgExportList *l, const char *text, TgError *err)
{
  FILE *f = tg_export_list_stage (l, &(TgExportFile) { .path = TG__MANIFEST_NAME, .format = "json" },
                                  err);

  if (!f)
    return err->code ? err->code : TG_EIO;
  /* Commit syncs it with the other files. */
  fputs (text, f);
  return tg_export_list_close_stream (l, f, TG__MANIFEST_NAME, err);
}

/* Hashes every file L staged, adds manifest.json and commits them all.
 * GRAPH_NAME passed tg_graph_name_check in the caller, before its work. */
int
tg__build_commit (TgExportList *l, const TgGraph *g, const char *graph_name,
                  const TgCancel *cancel, TgError *err)
{
  Entry *entries = NULL;
  char *text = NULL;
  int n = tg_export_list_n_files (l), rc;

  entries = calloc ((size_t) n + 1, sizeof *entries);
  if (!entries)
    return tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
  for (int i = 0; i < n; i++)
    {
      const TgExportFile *f = tg_export_list_file (l, i);
      entries[i].file = f;
      if (strcmp (f->path, TG__MANIFEST_NAME) == 0)
        {
          rc = tg_error_set (err, TG_EPATH, "",
                             "node \"%s\" exports to %s, the name the build manifest uses",
                             f->node_id ? f->node_id : "?", TG__MANIFEST_NAME);
          goto out;
        }
      rc = tg__sha256_staged (l, i, cancel, entries[i].sha256, &entries[i].bytes, err);
      if (rc == 0)
        rc = tg_export_list_sync (l, i, cancel, err);
      if (rc)
        goto out;
    }
  qsort (entries, (size_t) n, sizeof *entries, entry_cmp);

  if (cancel && tg_cancel_is_requested (cancel))
    {
      rc = tg_error_set (err, TG_ECANCELLED, "", TG_MSG_CANCELLED);
      goto out;
    }

  text = manifest_text (entries, n, g, graph_name);
  if (!text)
    {
      rc = tg_error_set (err, TG_ENOMEM, "", "out of memory writing the manifest");
      goto out;
    }
  /* Staging may move the files ENTRIES points to: not read after this. */
  free (entries);
  entries = NULL;
  rc = write_manifest (l, text, err);
  if (rc)
    goto out;
  rc = tg_export_list_commit (l, err);

out:
  free (entries);
  free (text);
  return rc;
}

int
tg_build (TgEngine *e, const TgGraph *g, const char *graph_name, const char *out_dir,
          const TgEvalHooks *hooks, TgExportList **list, TgEvalReport *report, TgError *err)
{
  TgExportList *l = NULL;
  TgError local;
  int rc;

  if (list)
    *list = NULL;
  if (!err)
    err = &local;
  tg_error_clear (err);
  if (!e || !g || !out_dir)
    return tg_error_set (err, TG_EINVAL, "", "tg_build needs an engine, a graph and a folder");
  if ((rc = tg_graph_name_check (graph_name, err)) < 0)
    return rc;

  rc = tg_engine_export (e, g, out_dir, hooks, &l, report, err);
  if (rc == 0)
    rc = tg__build_commit (l, g, graph_name, hooks ? hooks->cancel : NULL, err);
  if (rc == 0 && list)
    *list = l;
  else
    tg_export_list_free (l);
  return rc;
}
