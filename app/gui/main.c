/* terrane: sets up the locale and translations, then runs the app.
 *
 * LC_NUMERIC stays "C": engine messages and .tgraph numbers use C number
 * formatting, whatever the user's language.  TERRANE_LOCALEDIR points at
 * uninstalled translations (the tests use the build tree's).
 */
#include "config.h"

#include <glib/gi18n.h>
#include <locale.h>

#include "tg-application.h"

int
main (int argc, char **argv)
{
  g_autoptr (TgApplication) app = NULL;
  const char *localedir = g_getenv ("TERRANE_LOCALEDIR");

  /* gtk_init would call setlocale (LC_ALL, "") and undo LC_NUMERIC. */
  gtk_disable_setlocale ();
  setlocale (LC_ALL, "");
  setlocale (LC_NUMERIC, "C");
  bindtextdomain (GETTEXT_PACKAGE, localedir && *localedir ? localedir : LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  app = tg_application_new ();
  return g_application_run (G_APPLICATION (app), argc, argv);
}
