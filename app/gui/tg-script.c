/* The test script: steps that drive a real window, for tests under Xvfb.
 *
 * TERRANE_TEST_SCRIPT holds steps separated by ';'.  Each step starts when
 * the window is idle (no evaluation or export running):
 *
 *   select ID             make ID the active node (the viewer shows it)
 *   set ID.PARAM=VALUE    change a parameter through the document
 *   undo | redo
 *   wait                  nothing; just wait until idle
 *   export DIR            export as the Export button does; fails on error
 *   save FILE             save the document
 *   screenshot FILE.png   render the window into a PNG
 *   sleep MS
 *   quit                  exit with status 0 (any failed step exits 1)
 *
 * Each step is printed to stderr as it runs.
 */
#include "config.h"

#include "tg-script.h"

#include <stdlib.h>
#include <string.h>

typedef struct
{
  TgWindow *window;
  char **steps;
  int next;
  gint64 sleep_until;
  gboolean exporting;
  guint settle; /* idle ticks seen in a row */
} Script;

static void
finish (Script *s, int status)
{
  GApplication *app = G_APPLICATION (gtk_window_get_application (GTK_WINDOW (s->window)));

  g_printerr ("script: %s\n", status ? "FAILED" : "done");
  /* No "save changes?" question: tests quit straight away. */
  fflush (stderr);
  exit (status);
  (void) app;
}

static gboolean
fail (Script *s, const char *fmt, const char *arg)
{
  g_printerr ("script: step %d: ", s->next);
  g_printerr (fmt, arg);
  g_printerr ("\n");
  finish (s, 1);
  return G_SOURCE_REMOVE;
}

static gboolean
tick (gpointer data)
{
  Script *s = data;
  TgWindow *w = s->window;
  g_autoptr (GError) error = NULL;
  char *step, *arg;

  if (g_get_monotonic_time () < s->sleep_until)
    return G_SOURCE_CONTINUE;
  /* Idle for a few ticks in a row: results have reached the widgets. */
  if (tg_window_is_busy (w))
    {
      s->settle = 0;
      return G_SOURCE_CONTINUE;
    }
  if (++s->settle < 3)
    return G_SOURCE_CONTINUE;
  if (s->exporting)
    {
      const char *msg = NULL;
      s->exporting = FALSE;
      if (tg_window_last_export (w, &msg) != 0)
        return fail (s, "export failed: %s", msg ? msg : "?");
    }
  if (!s->steps[s->next])
    return fail (s, "%s", "the script ended without quit");
  step = g_strstrip (s->steps[s->next++]);
  arg = strchr (step, ' ');
  if (arg)
    *arg++ = '\0', arg = g_strstrip (arg);
  g_printerr ("script: %s%s%s\n", step, arg ? " " : "", arg ? arg : "");
  s->settle = 0;

  if (!*step || !strcmp (step, "wait"))
    ;
  else if (!strcmp (step, "quit"))
    finish (s, 0);
  else if (!strcmp (step, "select") && arg)
    tg_window_select (w, arg);
  else if (!strcmp (step, "set") && arg)
    {
      char *eq = strchr (arg, '='), *dot = strchr (arg, '.');
      if (!eq || !dot || dot > eq)
        return fail (s, "expected set ID.PARAM=VALUE, got %s", arg);
      *eq = *dot = '\0';
      if (!tg_document_set_param_text (tg_window_get_document (w), arg, dot + 1, eq + 1, FALSE,
                                       &error))
        return fail (s, "%s", error->message);
      tg_document_end_merge (tg_window_get_document (w));
    }
  else if (!strcmp (step, "undo"))
    tg_document_undo (tg_window_get_document (w));
  else if (!strcmp (step, "redo"))
    tg_document_redo (tg_window_get_document (w));
  else if (!strcmp (step, "export") && arg)
    {
      s->exporting = TRUE;
      tg_window_export_to (w, arg);
    }
  else if (!strcmp (step, "save") && arg)
    {
      g_autoptr (GFile) f = g_file_new_for_path (arg);
      if (!tg_document_save (tg_window_get_document (w), f, &error))
        return fail (s, "%s", error->message);
    }
  else if (!strcmp (step, "screenshot") && arg)
    {
      if (!tg_window_save_screenshot (w, arg, &error))
        return fail (s, "%s", error->message);
    }
  else if (!strcmp (step, "sleep") && arg)
    s->sleep_until = g_get_monotonic_time () + 1000 * (gint64) atoi (arg);
  else
    return fail (s, "unknown step \"%s\"", step);
  return G_SOURCE_CONTINUE;
}

void
tg_script_run (TgWindow *window, const char *script)
{
  Script *s = g_new0 (Script, 1);

  s->window = window;
  s->steps = g_strsplit (script, ";", -1);
  /* Polling keeps the driver out of the app's own signal flow. */
  g_timeout_add (20, tick, s);
}
