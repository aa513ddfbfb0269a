/* TgApplication: start-up (formats, styles, theme, accelerators), app.*
 * actions, and one window per file on the command line.
 *
 * The theme follows the desktop's colour-scheme preference from
 * org.gnome.desktop.interface when that schema exists (GTK 4.8 without
 * libadwaita does not read it itself).  TERRANE_TEST_SCRIPT runs the
 * steps of tg-script.c in the first window after it loaded.
 *
 * On a software GL (llvmpipe) the windows draw with GTK's cairo renderer
 * (choose_renderer); GSK_RENDERER set by the user wins.
 */
#include "config.h"

#include "tg-application.h"
#include "tg-script.h"
#include "tg-window.h"

#include <epoxy/gl.h>
#include <string.h>
#include <tgformats/tgformats.h>

struct _TgApplication
{
  GtkApplication parent_instance;
  GSettings *interface;
};

G_DEFINE_FINAL_TYPE (TgApplication, tg_application, GTK_TYPE_APPLICATION)

static void
apply_color_scheme (GSettings *s, const char *key, gpointer data)
{
  g_autofree char *scheme = g_settings_get_string (s, "color-scheme");

  g_object_set (gtk_settings_get_default (), "gtk-application-prefer-dark-theme",
                !g_strcmp0 (scheme, "prefer-dark"), NULL);
}

static void
follow_system_theme (TgApplication *self)
{
  GSettingsSchemaSource *src = g_settings_schema_source_get_default ();
  g_autoptr (GSettingsSchema) schema = NULL;

  if (src)
    schema = g_settings_schema_source_lookup (src, "org.gnome.desktop.interface", TRUE);
  if (!schema || !g_settings_schema_has_key (schema, "color-scheme"))
    return;
  self->interface = g_settings_new ("org.gnome.desktop.interface");
  g_signal_connect (self->interface, "changed::color-scheme", G_CALLBACK (apply_color_scheme),
                    NULL);
  apply_color_scheme (self->interface, "color-scheme", NULL);
}

static void
action_new_window (GSimpleAction *a, GVariant *p, gpointer app)
{
  gtk_window_present (GTK_WINDOW (tg_window_new (GTK_APPLICATION (app))));
}

static void
action_quit (GSimpleAction *a, GVariant *p, gpointer app)
{
  /* Closing each window asks about unsaved changes. */
  GList *l = g_list_copy (gtk_application_get_windows (GTK_APPLICATION (app)));

  g_list_foreach (l, (GFunc) (void (*) (void)) g_object_ref, NULL);
  for (GList *k = l; k; k = k->next)
    gtk_window_close (k->data);
  g_list_free_full (l, g_object_unref);
}

static void
action_about (GSimpleAction *a, GVariant *p, gpointer app)
{
  const char *authors[] = { "The Terrane authors", NULL };

  gtk_show_about_dialog (gtk_application_get_active_window (GTK_APPLICATION (app)),
                         "program-name", "Terrane", "logo-icon-name", APP_ID, "version",
                         PACKAGE_VERSION, "comments",
                         _("Node-based terrain authoring: heightmaps, masks and meshes for "
                           "game engines"),
                         "license-type", GTK_LICENSE_GPL_3_0, "authors", authors, NULL);
}

static const GActionEntry app_actions[] = {
  { .name = "new-window", .activate = action_new_window },
  { .name = "quit", .activate = action_quit },
  { .name = "about", .activate = action_about },
};

/* GTK's GL renderer draws the whole window every frame when the GL cannot
 * say what the last frame left in the buffer, as llvmpipe under X cannot:
 * ~50 ms of software rasterising per frame, whatever changed (a node drag
 * on a 10-node graph ran at 1.5 frames/s on a loaded two-core machine).
 * The cairo renderer draws only what changed, on the main thread; the 3D
 * view still renders with GL and is read back.  Must run before a window
 * exists: GSK reads GSK_RENDERER once, for the first one. */
static void
choose_renderer (void)
{
  GdkDisplay *display = gdk_display_get_default ();
  g_autoptr (GdkGLContext) context = NULL;
  const char *name;

  if (g_getenv ("GSK_RENDERER") || !display)
    return;
  context = gdk_display_create_gl_context (display, NULL);
  if (!context || !gdk_gl_context_realize (context, NULL))
    return;
  gdk_gl_context_make_current (context);
  name = (const char *) glGetString (GL_RENDERER);
  if (name && (strstr (name, "llvmpipe") || strstr (name, "softpipe") || strstr (name, "swrast")))
    g_setenv ("GSK_RENDERER", "cairo", TRUE);
  gdk_gl_context_clear_current ();
}

static void
tg_application_startup (GApplication *app)
{
  static const struct
  {
    const char *action;
    const char *accels[3];
  } accels[] = {
    { "app.new-window", { "<Control>n", NULL } },
    { "app.quit", { "<Control>q", NULL } },
    { "win.open", { "<Control>o", NULL } },
    { "win.save", { "<Control>s", NULL } },
    { "win.save-as", { "<Control><Shift>s", NULL } },
    { "win.export", { "<Control>e", NULL } },
    { "win.undo", { "<Control>z", NULL } },
    { "win.redo", { "<Control><Shift>z", "<Control>y", NULL } },
    { "window.close", { "<Control>w", NULL } },
  };
  g_autoptr (GtkCssProvider) css = gtk_css_provider_new ();

  G_APPLICATION_CLASS (tg_application_parent_class)->startup (app);
  choose_renderer ();
  tg_formats_init ();
  g_action_map_add_action_entries (G_ACTION_MAP (app), app_actions, G_N_ELEMENTS (app_actions),
                                   app);
  for (gsize k = 0; k < G_N_ELEMENTS (accels); k++)
    gtk_application_set_accels_for_action (GTK_APPLICATION (app), accels[k].action,
                                           accels[k].accels);
  gtk_css_provider_load_from_resource (css, "/io/github/terrane/Terrane/style.css");
  gtk_style_context_add_provider_for_display (gdk_display_get_default (),
                                              GTK_STYLE_PROVIDER (css),
                                              GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
  gtk_window_set_default_icon_name (APP_ID);
  follow_system_theme (TG_APPLICATION (app));
}

static TgWindow *
new_window (GApplication *app, GFile *file)
{
  TgWindow *w = tg_window_new (GTK_APPLICATION (app));
  const char *script = g_getenv ("TERRANE_TEST_SCRIPT");

  gtk_window_present (GTK_WINDOW (w));
  if (file)
    tg_window_open_file (w, file);
  if (script && *script)
    tg_script_run (w, script);
  return w;
}

static void
tg_application_activate (GApplication *app)
{
  tg_window_offer_untitled_recovery (new_window (app, NULL));
}

static void
tg_application_open (GApplication *app, GFile **files, int n_files, const char *hint)
{
  for (int k = 0; k < n_files; k++)
    new_window (app, files[k]);
}

static void
tg_application_dispose (GObject *object)
{
  g_clear_object (&TG_APPLICATION (object)->interface);
  G_OBJECT_CLASS (tg_application_parent_class)->dispose (object);
}

static void
tg_application_class_init (TgApplicationClass *klass)
{
  GApplicationClass *ac = G_APPLICATION_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = tg_application_dispose;
  ac->startup = tg_application_startup;
  ac->activate = tg_application_activate;
  ac->open = tg_application_open;
}

static void
tg_application_init (TgApplication *self)
{
}

TgApplication *
tg_application_new (void)
{
  GApplicationFlags flags = G_APPLICATION_HANDLES_OPEN;

  /* Tests run their own instance even when a user's Terrane is open. */
  if (g_getenv ("TERRANE_TEST_SCRIPT"))
    flags |= G_APPLICATION_NON_UNIQUE;
  return g_object_new (TG_TYPE_APPLICATION, "application-id", APP_ID, "flags", flags,
                       "resource-base-path", "/io/github/terrane/Terrane", NULL);
}
