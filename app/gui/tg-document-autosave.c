/* TgDocument's crash recovery: the autosave copies and their restore. */
#include "config.h"

#include "tg-document-private.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <string.h>
#include <tgformats/tgformats.h>

static char *
recovery_dir (void)
{
  return g_build_filename (g_get_user_state_dir (), "terrane", "autosave", NULL);
}

static char *
recovery_path_for (GFile *file, const char *untitled_key)
{
  g_autofree char *dir = recovery_dir ();
  g_autofree char *name = NULL;

  if (file)
    {
      g_autofree char *uri = g_file_get_uri (file);
      g_autofree char *sum = g_compute_checksum_for_string (G_CHECKSUM_SHA256, uri, -1);
      sum[16] = '\0';
      name = g_strdup_printf ("%s.tgraph", sum);
    }
  else
    name = g_strdup_printf ("%s.tgraph", untitled_key);
  return g_build_filename (dir, name, NULL);
}

gboolean
tg_document_autosave (TgDocument *doc, GError **error)
{
  g_autofree char *dir = recovery_dir ();
  g_autofree char *path = NULL, *text = NULL;
  TgError err = { 0 };

  if (!tg_document_get_dirty (doc) || doc->serial == doc->autosaved_serial)
    return TRUE;
  path = recovery_path_for (doc->file, doc->untitled_key);
  text = tg_tgraph_save_string (doc->graph, &err);
  if (!text)
    return tg_document__set_tg_error (error, &err, NULL);
  /* g_file_set_contents writes a temporary file and renames it over. */
  if (g_mkdir_with_parents (dir, 0700) < 0 || !g_file_set_contents (path, text, -1, error))
    {
      if (error && !*error)
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Cannot create %s"), dir);
      return FALSE;
    }
  /* After Save As the copy has a new name: drop the old one. */
  if (doc->recovery_path && strcmp (doc->recovery_path, path))
    g_unlink (doc->recovery_path);
  g_free (doc->recovery_path);
  doc->recovery_path = g_steal_pointer (&path);
  doc->autosaved_serial = doc->serial;
  return TRUE;
}

void
tg_document_remove_recovery (TgDocument *doc)
{
  g_autofree char *path = recovery_path_for (doc->file, doc->untitled_key);

  if (doc->recovery_path)
    g_unlink (doc->recovery_path);
  g_unlink (path);
  g_clear_pointer (&doc->recovery_path, g_free);
  doc->autosaved_serial = 0;
}

static GDateTime *
modified (GFile *file)
{
  g_autoptr (GFileInfo) info = g_file_query_info (file, G_FILE_ATTRIBUTE_TIME_MODIFIED ","
                                                  G_FILE_ATTRIBUTE_TIME_MODIFIED_USEC,
                                                  G_FILE_QUERY_INFO_NONE, NULL, NULL);
  return info ? g_file_info_get_modification_date_time (info) : NULL;
}

char *
tg_document_find_recovery (GFile *file)
{
  g_autofree char *path = recovery_path_for (file, NULL);
  g_autoptr (GFile) rf = g_file_new_for_path (path);
  g_autoptr (GDateTime) rt = modified (rf);
  g_autoptr (GDateTime) ft = NULL;

  if (!rt)
    return NULL;
  ft = modified (file);
  /* A copy older than the file is from before a later save elsewhere. */
  if (ft && g_date_time_compare (rt, ft) <= 0)
    return NULL;
  return g_steal_pointer (&path);
}

char *
tg_document_find_untitled_recovery (void)
{
  g_autofree char *dir = recovery_dir ();
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_autoptr (GDateTime) best_t = NULL;
  char *best = NULL;
  const char *name;

  while (d && (name = g_dir_read_name (d)))
    {
      long pid;
      g_autofree char *path = NULL;
      g_autoptr (GFile) f = NULL;
      g_autoptr (GDateTime) t = NULL;

      if (sscanf (name, "untitled-%ld-", &pid) != 1 || !g_str_has_suffix (name, ".tgraph"))
        continue;
      /* A copy of a window that is still open in a running Terrane is not lost. */
      if (pid == (long) getpid () || (kill ((pid_t) pid, 0) == 0 || errno == EPERM))
        continue;
      path = g_build_filename (dir, name, NULL);
      f = g_file_new_for_path (path);
      t = modified (f);
      if (t && (!best_t || g_date_time_compare (t, best_t) > 0))
        {
          g_free (best);
          best = g_steal_pointer (&path);
          g_clear_pointer (&best_t, g_date_time_unref);
          best_t = g_steal_pointer (&t);
        }
    }
  return best;
}

gboolean
tg_document_restore (TgDocument *doc, const char *path, GError **error)
{
  g_autofree char *text = NULL, *name = g_path_get_basename (path);
  gsize len;
  TgGraph *g = NULL;
  TgError err = { 0 };

  if (!g_file_get_contents (path, &text, &len, error))
    return FALSE;
  if (tg_tgraph_load_string_ex (text, len, tg_graph_base_dir (doc->graph),
                                TG_TGRAPH_LOAD_NO_VALIDATE, &g, &err) < 0)
    return tg_document__set_tg_error (error, &err, name);
  tg_graph_set_base_dir (g, tg_graph_base_dir (doc->graph));
  tg_document__commit (doc, g, _("Restore Unsaved Changes"), NULL, TG_DOC_CHANGE_ALL, NULL);
  g_unlink (path);
  return TRUE;
}

void
tg_document_discard_recovery (const char *path)
{
  g_unlink (path);
}
