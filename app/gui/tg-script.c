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
 *   memory-limit SIZE     the most an export may need (512M, 2G, bytes)
 *   export-refused DIR    export; fails unless refused for memory, DIR untouched
 *   save FILE             save the document
 *   screenshot FILE.png   render the window into a PNG
 *   screenshot-screen FILE.png  the X screen (ImageMagick's import), with
 *                         open menus and tooltips
 *   view 2d|3d            show the viewer's 2D or 3D page
 *   resolution N          set the preview resolution (257, 513, 1025)
 *   wait3d                wait until the 3D view has drawn the latest output
 *   camera YAW PITCH      3D view angles in degrees, then frame the output
 *   exaggeration X        3D vertical exaggeration
 *   wireframe on|off
 *   shadows on|off        3D sun shadows
 *   grid on|off           3D metre grid
 *   water off|LEVEL       3D water plane at LEVEL metres
 *   splat-layer N         3D: layer N of a layers output alone, -1 for all
 *   msaa on|off           3D antialiasing
 *   screenshot3d FILE.png save what the 3D view drew
 *   zoom3d F FX FY        wheel-zoom by F towards the point under (FX, FY),
 *                         fractions of the view; fails if that point moves
 *   bench3d N             draw N frames and print the time per frame
 *   status                print the status bar's text
 *   print-node ID         print the node's state and message as the canvas has them
 *   print-viewer          print the viewer's node, pin and message, and the
 *                         inspector's message
 *   screenshot2d FILE.png render the 2D view's picture alone into a PNG
 *   print-choice TARGET   print the item a drop-down (css: or tip:) shows
 *   thumbnails            wait until the start page's example thumbnails are
 *                         made, print how many examples show one
 *   screenshot-popover FILE.png  render the open popover (the node search)
 *   print-labels CLASS    print the text of every shown label with that CSS
 *                         class (category-header: the node search's headers)
 *   print-stats           print the 2D view's read-out (range and mean, or the
 *                         layers' shares)
 *   print-param ID.PARAM  print a number parameter's value, and the
 *                         inspector's note on it that a typed value was clamped
 *   recent                print the Recent menu's files and the .tgraph files
 *                         GTK's recent files list
 *   dialog FILE.png       render the message dialog on screen into FILE.png,
 *                         print its texts and close it; fails without one
 *   screenshot-dialog FILE.png   render the app's other window on screen (a
 *                         dialog such as Export) into FILE.png, print its title
 *   sleep MS
 *   quit                  exit with status 0 (any failed step exits 1)
 *
 * Pointer and keyboard steps drive the real input path through xdotool
 * (X11 only; they fail when it is missing):
 *
 *   drag FROM TO          press the left button at FROM, move, release at TO
 *   click | dblclick | rclick TARGET
 *   hover TARGET          move the pointer there, no button
 *   scroll TARGET N       N wheel steps there (N < 0: towards the user)
 *   key KEYS              e.g. "Delete", "ctrl+z", "Tab"
 *   type TEXT
 *   resize WxH | min      resize the window (min: its minimum size)
 *   print-view            print the canvas and 2D viewer zoom
 *   print-layout          print the window's size and the canvas, viewer and
 *                         inspector widths (allocated and minimum)
 *   print-target TARGET   print where TARGET is in the window (its screenshots)
 *   choose TARGET N       select item N of the drop-down at TARGET (css: or tip:)
 *   recovery restore|discard   answer the offer of a recovery copy (fails without one)
 *   crash                 stop at once, as a crash would (no clean-up)
 *
 * A target is "node:ID" (its title), "out:ID.PORT", "in:ID.PORT",
 * "graph:X,Y" (canvas units), "css:NAME[@FX,FY]" (the first widget with
 * that CSS name, at fractions of its size; the middle by default),
 * "tip:TOOLTIP[@FX,FY]" (the first visible widget with that tooltip), or
 * "slider:PARAM[@FX,FY]" and "spin:PARAM[@FX,FY]" (the inspector's slider
 * and spin button of number parameter PARAM), or "menu:LABEL" (the item
 * LABEL of the popover menu that is open, such as the node menu).  css:
 * and tip: look in the main window first, then in the app's other windows
 * (dialogs).  "@FX,FY+DX" (or -DX) moves
 * the point DX pixels across from there.
 *
 * Each step is printed to stderr as it runs.  A step written "now STEP"
 * starts without waiting for idle: it sees the window mid-evaluation.
 */
#include "config.h"

#include "tg-script.h"
#include "tg-viewer.h"
#include "tg-viewer3d.h"
#include "tg-canvas.h"
#include "tg-image-view.h"
#include "tg-inspector.h"
#include "tg-start-page.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef GDK_WINDOWING_X11
#include <gdk/x11/gdkx.h>
#endif

typedef struct
{
  TgWindow *window;
  char **steps;
  int next;
  gint64 sleep_until;
  gboolean exporting;
  char *refused_dir; /* an export-refused step's folder */
  gboolean waiting_3d;
  guint settle; /* idle ticks seen in a row */
  GtkNative *native; /* the window the last target lies in (the main one or a dialog) */
  guint retries; /* of a screenshot of a widget still to be laid out */
  gboolean child_running; /* an xdotool step */
  int child_status;
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

/* --- pointer and keyboard, through xdotool -------------------------------- */

static GtkWidget *
find_widget (GtkWidget *w, const char *css_name, const char *tip)
{
  const char *t;

  if (!gtk_widget_get_mapped (w))
    return NULL;
  if (css_name && !strcmp (gtk_widget_get_css_name (w), css_name))
    return w;
  if (tip && (t = gtk_widget_get_tooltip_text (w)) && !strcmp (t, tip))
    return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_widget (c, css_name, tip);
      if (found)
        return found;
    }
  return NULL;
}

static GtkWidget *find_by_type (GtkWidget *w, GType type);

/* The widget a "css:", "tip:", "slider:" or "spin:" target names (without
 * its "@..." part), or NULL. */
static GtkWidget *
find_target (Script *s, const char *spec)
{
  GtkWidget *root = GTK_WIDGET (s->window), *i;

  if (g_str_has_prefix (spec, "css:") || g_str_has_prefix (spec, "tip:"))
    {
      gboolean css = g_str_has_prefix (spec, "css:");
      GListModel *tops = gtk_window_get_toplevels (); /* borrowed */
      GtkWidget *w = find_widget (root, css ? spec + 4 : NULL, css ? NULL : spec + 4);
      /* Then the app's other windows: a dialog over the main one. */
      for (guint k = 0; !w && k < g_list_model_get_n_items (tops); k++)
        {
          g_autoptr (GtkWidget) top = g_list_model_get_item (tops, k);
          if (top != root)
            w = find_widget (top, css ? spec + 4 : NULL, css ? NULL : spec + 4);
        }
      return w;
    }
  i = find_by_type (root, TG_TYPE_INSPECTOR);
  if (i && g_str_has_prefix (spec, "slider:"))
    return tg_inspector_get_number_widget (TG_INSPECTOR (i), spec + 7, FALSE);
  if (i && g_str_has_prefix (spec, "spin:"))
    return tg_inspector_get_number_widget (TG_INSPECTOR (i), spec + 5, TRUE);
  return NULL;
}

/* The mapped menu item (a popover menu's model button) labelled LABEL. */
static GtkWidget *
find_menu_item (GtkWidget *w, const char *label)
{
  if (!gtk_widget_get_mapped (w))
    return NULL;
  if (!strcmp (gtk_widget_get_css_name (w), "modelbutton"))
    for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
      if (GTK_IS_LABEL (c) && !strcmp (gtk_label_get_text (GTK_LABEL (c)), label))
        return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_menu_item (c, label);
      if (found)
        return found;
    }
  return NULL;
}

/* A "menu:LABEL" target, an item of an open popover menu, in the window's
 * coordinates: the popover is a surface of its own, placed relative to
 * the window's. */
static gboolean
locate_menu_item (Script *s, const char *label, double *x, double *y)
{
  GtkWidget *item = find_menu_item (GTK_WIDGET (s->window), label);
  GtkNative *native = item ? gtk_widget_get_native (item) : NULL;
  graphene_point_t p = GRAPHENE_POINT_INIT (0, 0), out;
  double px, py, wx, wy;

  if (!native || !GDK_IS_POPUP (gtk_native_get_surface (native)))
    return FALSE;
  p.x = gtk_widget_get_width (item) / 2.0f;
  p.y = gtk_widget_get_height (item) / 2.0f;
  if (!gtk_widget_compute_point (item, GTK_WIDGET (native), &p, &out))
    return FALSE;
  gtk_native_get_surface_transform (native, &px, &py);
  gtk_native_get_surface_transform (GTK_NATIVE (s->window), &wx, &wy);
  *x = out.x + px + gdk_popup_get_position_x (GDK_POPUP (gtk_native_get_surface (native))) - wx;
  *y = out.y + py + gdk_popup_get_position_y (GDK_POPUP (gtk_native_get_surface (native))) - wy;
  return TRUE;
}

/* TARGET in the window's coordinates (those of its screenshots). */
static gboolean
locate_in_window (Script *s, const char *target, double *x, double *y, GError **error)
{
  GtkWidget *root = GTK_WIDGET (s->window), *w = NULL;
  g_autofree char *spec = g_strdup (target);
  char *at = NULL;
  double lx = 0, ly = 0, fx = 0.5, fy = 0.5, dx = 0;
  graphene_point_t p, out;

  if (g_str_has_prefix (spec, "menu:"))
    {
      /* A popover still on its way up: the step runs again at the next
       * tick (for up to a second), as a screenshot of a widget does. */
      if (!locate_menu_item (s, spec + 5, x, y))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_BUSY, "no target \"%s\"", target);
          return FALSE;
        }
      return TRUE;
    }
  if (g_str_has_prefix (spec, "css:") || g_str_has_prefix (spec, "tip:")
      || g_str_has_prefix (spec, "slider:") || g_str_has_prefix (spec, "spin:"))
    {
      if ((at = strrchr (spec, '@')))
        {
          *at = '\0';
          if (sscanf (at + 1, "%lf,%lf%lf", &fx, &fy, &dx) < 2)
            goto bad;
        }
      if (!(w = find_target (s, spec)) || !gtk_widget_get_mapped (w))
        goto bad;
      lx = fx * gtk_widget_get_width (w) + dx;
      ly = fy * gtk_widget_get_height (w);
    }
  else
    {
      w = find_widget (root, "tgcanvas", NULL);
      if (!w || !tg_canvas_locate (TG_CANVAS (w), spec, &lx, &ly))
        goto bad;
    }
  root = GTK_WIDGET (gtk_widget_get_native (w));
  s->native = GTK_NATIVE (root);
  p = GRAPHENE_POINT_INIT ((float) lx, (float) ly);
  if (!gtk_widget_compute_point (w, root, &p, &out))
    goto bad;
  *x = out.x;
  *y = out.y;
  return TRUE;
bad:
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "no target \"%s\"", target);
  return FALSE;
}

/* TARGET in the window surface's coordinates, where xdotool points. */
static gboolean
locate (Script *s, const char *target, double *x, double *y, GError **error)
{
  double sx, sy;

  if (!locate_in_window (s, target, x, y, error))
    return FALSE;
  /* Client-side decorations put the window's widgets inside its surface. */
  gtk_native_get_surface_transform (s->native, &sx, &sy);
  *x += sx;
  *y += sy;
  return TRUE;
}

static void
child_done (GPid pid, int status, gpointer data)
{
  Script *s = data;

  s->child_running = FALSE;
  s->child_status = g_spawn_check_wait_status (status, NULL) ? 0 : 1;
  g_spawn_close_pid (pid);
}

/* The X window of the last target's native (a dialog's), else XID. */
static unsigned long
native_xid (Script *s, unsigned long xid)
{
#ifdef GDK_WINDOWING_X11
  GdkSurface *surface = s->native ? gtk_native_get_surface (s->native) : NULL;
  if (surface && GDK_IS_X11_SURFACE (surface))
    return gdk_x11_surface_get_xid (surface);
#endif
  return xid;
}

static gboolean
pointer_step (Script *s, const char *step, const char *arg, GError **error)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  /* drag FROM TO (or FROM -> TO when a target has spaces); scroll TARGET N;
   * otherwise the whole argument is the target. */
  g_auto (GStrv) words = strstr (arg, " -> ") ? g_strsplit (arg, " -> ", 2)
                         : !strcmp (step, "drag") ? g_strsplit (arg, " ", 2)
                                                  : g_strsplit (arg, "\n", 1);
  unsigned long xid = 0;
  double x, y, x2, y2;
  GPid pid;

#ifdef GDK_WINDOWING_X11
  GdkSurface *surface = gtk_native_get_surface (GTK_NATIVE (s->window));
  if (GDK_IS_X11_SURFACE (surface))
    xid = gdk_x11_surface_get_xid (surface);
#endif
  if (!xid)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           "pointer steps need an X11 window");
      return FALSE;
    }
#define ARG(...) g_ptr_array_add (argv, g_strdup_printf (__VA_ARGS__))
#define MOVE(X, Y) (ARG ("mousemove"), ARG ("--window"), ARG ("%lu", native_xid (s, xid)), \
                    ARG ("%d", (int) lround (X)), ARG ("%d", (int) lround (Y)), ARG ("sleep"), \
                    ARG ("0.15"))
  ARG ("xdotool");
  if (!strcmp (step, "resize"))
    {
      int w = 0, h = 0, min_w = 0, min_h = 0;
      gtk_widget_measure (GTK_WIDGET (s->window), GTK_ORIENTATION_HORIZONTAL, -1, &min_w, NULL,
                          NULL, NULL);
      gtk_widget_measure (GTK_WIDGET (s->window), GTK_ORIENTATION_VERTICAL, min_w, &min_h, NULL,
                          NULL, NULL);
      if (!strcmp (arg, "min"))
        w = min_w, h = min_h;
      else if (sscanf (arg, "%dx%d", &w, &h) != 2)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "expected resize WxH or resize min, got %s", arg);
          return FALSE;
        }
      ARG ("windowsize");
      ARG ("--sync");
      ARG ("%lu", xid);
      ARG ("%d", w);
      ARG ("%d", h);
      ARG ("sleep");
      ARG ("0.3");
    }
  else if (!strcmp (step, "key") || !strcmp (step, "type"))
    {
      ARG ("%s", step);
      ARG ("--delay");
      ARG ("60");
      ARG ("%s", arg);
    }
  else if (!strcmp (step, "drag"))
    {
      if (!words[0] || !words[1] || !locate (s, words[0], &x, &y, error)
          || !locate (s, g_strstrip (words[1]), &x2, &y2, error))
        {
          if (error && !*error)
            g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                         "expected drag FROM TO, got %s", arg);
          return FALSE;
        }
      /* Motion in steps, as a hand makes it: gestures see a real drag. */
      MOVE (x, y);
      ARG ("mousedown");
      ARG ("1");
      ARG ("sleep");
      ARG ("0.1");
      for (int k = 1; k <= 4; k++)
        MOVE (x + (x2 - x) * k / 4, y + (y2 - y) * k / 4);
      ARG ("mouseup");
      ARG ("1");
      ARG ("sleep");
      ARG ("0.1");
    }
  else
    {
      int n = 1;
      if (!words[0])
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "no target in %s", arg);
          return FALSE;
        }
      if (!strcmp (step, "scroll"))
        {
          char *sp = strrchr (words[0], ' ');
          if (!sp)
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "expected scroll TARGET N, got %s", arg);
              return FALSE;
            }
          *sp = '\0';
          n = atoi (sp + 1);
        }
      if (!locate (s, words[0], &x, &y, error))
        return FALSE;
      MOVE (x, y);
      if (!strcmp (step, "hover"))
        goto spawn;
      ARG ("click");
      ARG ("--repeat");
      ARG ("%d", !strcmp (step, "dblclick") ? 2 : ABS (n));
      ARG ("--delay");
      ARG ("%d", !strcmp (step, "dblclick") ? 80 : 40);
      ARG ("%d", !strcmp (step, "rclick") ? 3 : !strcmp (step, "scroll") ? (n > 0 ? 4 : 5) : 1);
      ARG ("sleep");
      ARG ("0.1");
    }
spawn:
#undef MOVE
#undef ARG
  g_ptr_array_add (argv, NULL);
  if (!g_spawn_async (NULL, (char **) argv->pdata, NULL,
                      G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid, error))
    return FALSE;
  s->child_running = TRUE;
  g_child_watch_add (pid, child_done, s);
  return TRUE;
}

static void
print_view (Script *s)
{
  GtkWidget *c = find_widget (GTK_WIDGET (s->window), "tgcanvas", NULL);
  GtkWidget *v = find_widget (GTK_WIDGET (s->window), "tgimageview", NULL);
  double z = 0, a = 0, b = 0, vz = 0, cu = 0, cv = 0;

  if (c)
    tg_canvas_get_view (TG_CANVAS (c), &z, &a, &b);
  if (v)
    tg_image_view_get_view (TG_IMAGE_VIEW (v), &vz, &cu, &cv);
  g_printerr ("view: canvas zoom %.3f, 2d zoom %.3f centre %.1f,%.1f\n", z, vz, cu, cv);
}


static void
print_layout (Script *s)
{
  static const char *const names[] = { "canvas", "viewer", "inspector" };
  GType types[] = { TG_TYPE_CANVAS, TG_TYPE_VIEWER, TG_TYPE_INSPECTOR };
  GString *line = g_string_new (NULL);

  g_string_printf (line, "layout: window %dx%d", gtk_widget_get_width (GTK_WIDGET (s->window)),
                   gtk_widget_get_height (GTK_WIDGET (s->window)));
  for (guint k = 0; k < G_N_ELEMENTS (types); k++)
    {
      GtkWidget *w = find_by_type (GTK_WIDGET (s->window), types[k]);
      int min = 0;
      gtk_widget_measure (w, GTK_ORIENTATION_HORIZONTAL, -1, &min, NULL, NULL, NULL);
      g_string_append_printf (line, ", %s %dx%d (min width %d)", names[k],
                              gtk_widget_get_width (w), gtk_widget_get_height (w), min);
    }
  g_printerr ("%s\n", line->str);
  g_string_free (line, TRUE);
}

static GtkWidget *
find_by_type (GtkWidget *w, GType type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (w, type))
    return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *r = find_by_type (c, type);
      if (r)
        return r;
    }
  return NULL;
}

/* The 3D steps; FALSE when the step is not one of them. */
static gboolean
step_3d (Script *s, const char *step, const char *arg, gboolean *failed)
{
  TgViewer *viewer = TG_VIEWER (find_by_type (GTK_WIDGET (s->window), TG_TYPE_VIEWER));
  TgViewer3d *v3 = TG_VIEWER3D (find_by_type (GTK_WIDGET (s->window), TG_TYPE_VIEWER3D));
  g_autoptr (GError) error = NULL;
  double a = 0, b = 0, c = 0;

  *failed = FALSE;
  if (!strcmp (step, "view") && arg)
    tg_viewer_set_view (viewer, arg);
  else if (!strcmp (step, "resolution") && arg)
    tg_viewer_set_preview_resolution (viewer, atoi (arg));
  else if (!strcmp (step, "wait3d"))
    s->waiting_3d = TRUE;
  else if (!strcmp (step, "camera") && arg && sscanf (arg, "%lf %lf", &a, &b) == 2)
    {
      tg_viewer3d_set_view_angles (v3, a, b);
      s->waiting_3d = TRUE;
    }
  else if (!strcmp (step, "exaggeration") && arg)
    {
      tg_viewer3d_set_exaggeration (v3, g_ascii_strtod (arg, NULL));
      s->waiting_3d = TRUE;
    }
  else if (!strcmp (step, "wireframe") && arg)
    tg_viewer3d_set_wireframe (v3, !strcmp (arg, "on"));
  else if (!strcmp (step, "shadows") && arg)
    tg_viewer3d_set_shadows (v3, !strcmp (arg, "on"));
  else if (!strcmp (step, "splat-layer") && arg)
    tg_viewer3d_set_splat_layer (v3, atoi (arg));
  else if (!strcmp (step, "grid") && arg)
    tg_viewer3d_set_grid (v3, !strcmp (arg, "on"));
  else if (!strcmp (step, "water") && arg)
    tg_viewer3d_set_water (v3, strcmp (arg, "off") != 0, g_ascii_strtod (arg, NULL));
  else if (!strcmp (step, "msaa") && arg)
    tg_viewer3d_set_antialias (v3, !strcmp (arg, "on"));
  else if (!strcmp (step, "screenshot3d") && arg)
    {
      if (!tg_viewer3d_save_png (v3, arg, &error))
        *failed = (fail (s, "%s", error->message), TRUE);
    }
  else if (!strcmp (step, "zoom3d") && arg && sscanf (arg, "%lf %lf %lf", &a, &b, &c) == 3)
    {
      double drift = 0;
      if (!tg_viewer3d_zoom_at (v3, a, b, c, &drift))
        *failed = (fail (s, "%s", "zoom3d: nothing under that point"), TRUE);
      else
        {
          g_printerr ("script: zoom3d: the point under the pointer moved %.4f of its distance\n",
                      drift);
          if (drift > 0.01)
            *failed = (fail (s, "%s", "zoom3d: the point under the pointer moved"), TRUE);
        }
    }
  else if (!strcmp (step, "bench3d") && arg)
    {
      double mean = 0, best = 0;
      int n = MAX (atoi (arg), 1);
      if (!tg_viewer3d_benchmark (v3, n, &mean, &best, &error))
        *failed = (fail (s, "%s", error->message), TRUE);
      else
        g_printerr ("timing: 3d draw %d frames: mean %.1f ms, best %.1f ms\n", n, mean, best);
    }
  else
    return FALSE;
  return TRUE;
}

static void
print_node (Script *s, const char *id)
{
  static const char *const names[] = { "idle", "running", "done", "cached",
                                        "failed", "skipped", "cancelled" };
  TgCanvas *c = TG_CANVAS (find_by_type (GTK_WIDGET (s->window), TG_TYPE_CANVAS));
  const char *msg = NULL, *details = NULL;
  int state = tg_canvas_get_node_state (c, id, &msg, &details, NULL);

  g_printerr ("script: node %s: %s | %s | %s\n", id,
              state >= 0 && state < (int) G_N_ELEMENTS (names) ? names[state] : "?",
              msg ? msg : "", details ? details : "");
}

static GtkWidget *
find_shown_popover (GtkWidget *w)
{
  if (GTK_IS_POPOVER (w) && gtk_widget_get_mapped (w))
    return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *r = find_shown_popover (c);
      if (r)
        return r;
    }
  return NULL;
}

/* The texts of the mapped labels with CSS class CLASS under W. */
static void
print_labels (GtkWidget *w, const char *css_class)
{
  if (!gtk_widget_get_mapped (w))
    return;
  if (GTK_IS_LABEL (w) && gtk_widget_has_css_class (w, css_class))
    g_printerr ("script: label: %s\n", gtk_label_get_text (GTK_LABEL (w)));
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    print_labels (c, css_class);
}

static void
print_viewer (Script *s)
{
  TgViewer *v = TG_VIEWER (find_by_type (GTK_WIDGET (s->window), TG_TYPE_VIEWER));
  TgInspector *i = TG_INSPECTOR (find_by_type (GTK_WIDGET (s->window), TG_TYPE_INSPECTOR));
  const char *node = tg_viewer_get_node (v), *pinned = tg_viewer_get_pinned (v);
  const char *msg = tg_viewer_get_message (v), *imsg = tg_inspector_get_message (i);

  g_printerr ("script: viewer: node %s, pinned %s, picture %s, message %s\n",
              node ? node : "-", pinned ? pinned : "-", tg_viewer_get_texture (v) ? "yes" : "no",
              msg ? msg : "-");
  g_printerr ("script: inspector message: %s\n", imsg ? imsg : "-");
}

/* print-param ID.PARAM: a number parameter's value as the document has it,
 * and the inspector's note that it was clamped when the node is shown. */
static gboolean
print_param (Script *s, const char *arg, GError **error)
{
  const TgGraph *g = tg_document_get_graph (tg_window_get_document (s->window));
  g_autofree char *id = g_strdup (arg);
  char *dot = strchr (id, '.');
  const TgParamValue *v = NULL;
  TgCanvas *c = TG_CANVAS (find_by_type (GTK_WIDGET (s->window), TG_TYPE_CANVAS));
  TgInspector *i = TG_INSPECTOR (find_by_type (GTK_WIDGET (s->window), TG_TYPE_INSPECTOR));
  const char *note;
  char num[32];
  int n;

  if (dot)
    *dot = '\0';
  if (dot && (n = tg_graph_find_node (g, id)) >= 0)
    v = tg_graph_get_param (g, n, dot + 1);
  if (!v || (v->type != TG_PARAM_FLOAT && v->type != TG_PARAM_INT && v->type != TG_PARAM_SEED))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "print-param: no number %s", arg);
      return FALSE;
    }
  tg_format_double (v->type == TG_PARAM_FLOAT ? v->f : v->i, num);
  g_printerr ("script: param %s = %s\n", arg, num);
  if (!g_strcmp0 (id, tg_canvas_get_active (c)) && (note = tg_inspector_get_number_note (i, dot + 1)))
    g_printerr ("script: param %s note: %s\n", arg, note);
  return TRUE;
}

/* The visible message dialog, or NULL. */
static GtkMessageDialog *
find_message_dialog (void)
{
  GListModel *tops = gtk_window_get_toplevels (); /* borrowed */

  for (guint i = 0; i < g_list_model_get_n_items (tops); i++)
    {
      g_autoptr (GObject) o = g_list_model_get_item (tops, i);
      if (GTK_IS_MESSAGE_DIALOG (o) && gtk_widget_get_mapped (GTK_WIDGET (o)))
        return GTK_MESSAGE_DIALOG (o);
    }
  return NULL;
}

static gboolean
dialog_step (Script *s, const char *png, GError **error)
{
  GtkMessageDialog *d = find_message_dialog ();
  g_autofree char *text = NULL, *secondary = NULL;

  if (!d)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "no message dialog is shown");
      return FALSE;
    }
  g_object_get (d, "text", &text, "secondary-text", &secondary, NULL);
  g_printerr ("script: dialog: %s | %s\n", text, secondary ? secondary : "");
  if (!tg_widget_save_png (GTK_WIDGET (d), png, error))
    return FALSE;
  gtk_dialog_response (GTK_DIALOG (d), GTK_RESPONSE_CLOSE);
  return TRUE;
}

/* Renders the app's window other than the main one (a dialog) into PNG. */
static gboolean
dialog_shot (Script *s, const char *png, GError **error)
{
  GListModel *tops = gtk_window_get_toplevels (); /* borrowed */

  for (guint k = 0; k < g_list_model_get_n_items (tops); k++)
    {
      g_autoptr (GtkWidget) top = g_list_model_get_item (tops, k);
      if (top != GTK_WIDGET (s->window) && GTK_IS_WINDOW (top) && gtk_widget_get_mapped (top))
        {
          g_printerr ("script: window: %s\n", gtk_window_get_title (GTK_WINDOW (top)));
          return tg_widget_save_png (top, png, error);
        }
    }
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "no other window is shown");
  return FALSE;
}

static void
print_recent (Script *s)
{
  g_auto (GStrv) files = tg_window_dup_recent_files (s->window);
  GList *items = gtk_recent_manager_get_items (gtk_recent_manager_get_default ());

  for (int k = 0; files[k]; k++)
    g_printerr ("script: recent: %s\n", files[k]);
  for (GList *l = items; l; l = l->next)
    if (g_str_has_suffix (gtk_recent_info_get_uri (l->data), ".tgraph"))
      g_printerr ("script: recent-manager: %s\n", gtk_recent_info_get_uri (l->data));
  g_list_free_full (items, (GDestroyNotify) gtk_recent_info_unref);
}

/* A screenshot of a widget GTK has not laid out yet, or a click on an item
 * of a menu not yet shown, runs again at the next tick (for up to a
 * second); any other failure ends the script.
 * WHOLE is the step as written. */
static gboolean
retry_or_fail (Script *s, const GError *error, char **whole)
{
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_BUSY) && s->retries++ < 50)
    {
      g_free (s->steps[--s->next]);
      s->steps[s->next] = g_steal_pointer (whole);
      s->settle = 3;
      return G_SOURCE_CONTINUE;
    }
  return fail (s, "%s", error->message);
}

static gboolean
tick (gpointer data)
{
  Script *s = data;
  TgWindow *w = s->window;
  g_autoptr (GError) error = NULL;
  char *step, *arg;
  g_autofree char *whole = NULL;
  gboolean failed = FALSE;

  if (g_get_monotonic_time () < s->sleep_until || s->child_running)
    return G_SOURCE_CONTINUE;
  if (s->child_status)
    return fail (s, "%s", "xdotool failed");
  /* Idle for a few ticks in a row: results have reached the widgets. */
  if (s->steps[s->next] && g_str_has_prefix (g_strstrip (s->steps[s->next]), "now "))
    memmove (s->steps[s->next], s->steps[s->next] + 4, strlen (s->steps[s->next] + 4) + 1);
  else if (tg_window_is_busy (w))
    {
      s->settle = 0;
      return G_SOURCE_CONTINUE;
    }
  else if (++s->settle < 3)
    return G_SOURCE_CONTINUE;
  if (s->waiting_3d)
    {
      TgViewer3d *v3 = TG_VIEWER3D (find_by_type (GTK_WIDGET (w), TG_TYPE_VIEWER3D));
      if (!tg_viewer3d_is_drawn (v3))
        return G_SOURCE_CONTINUE;
      s->waiting_3d = FALSE;
    }
  /* "thumbnails" waits for the start page's example thumbnails. */
  if (s->steps[s->next] && !strcmp (g_strstrip (s->steps[s->next]), "thumbnails"))
    {
      GtkWidget *page = find_by_type (GTK_WIDGET (w), TG_TYPE_START_PAGE);
      int n = 0, shown = 0;
      if (page && tg_start_page_pending_thumbnails (TG_START_PAGE (page), &n, &shown) > 0)
        return G_SOURCE_CONTINUE;
    }
  if (s->exporting)
    {
      const char *msg = NULL;
      s->exporting = FALSE;
      int rc = tg_window_last_export (w, &msg);
      g_autofree char *dir = g_steal_pointer (&s->refused_dir);
      if (dir && (rc != TG_ENOMEM || g_file_test (dir, G_FILE_TEST_EXISTS)))
        return fail (s, "export was not refused for memory: %s", msg ? msg : "done");
      g_printerr ("script: status: %s\n", tg_window_get_status (w));
      if (dir)
        g_printerr ("script: refused: %s\n", msg);
      else if (rc != 0)
        return fail (s, "export failed: %s", msg ? msg : "?");
    }
  if (!s->steps[s->next])
    return fail (s, "%s", "the script ended without quit");
  whole = g_strdup (s->steps[s->next]);
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
  else if ((!strcmp (step, "export") || !strcmp (step, "export-refused")) && arg)
    {
      s->exporting = TRUE;
      if (!strcmp (step, "export-refused"))
        s->refused_dir = g_strdup (arg);
      tg_window_export_to (w, arg);
    }
  else if (!strcmp (step, "memory-limit") && arg)
    {
      guint64 bytes;
      TgError err = { 0 };
      if (tg_parse_bytes (arg, &bytes, &err) < 0)
        return fail (s, "memory-limit: %s", err.message);
      tg_window_set_memory_limit (w, bytes);
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
        return retry_or_fail (s, error, &whole);
    }
  else if (!strcmp (step, "screenshot-screen") && arg)
    {
      /* The X screen as it shows, popovers and tooltips included. */
      const char *argv[] = { "import", "-window", "root", arg, NULL };
      int status = 0;
      if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL,
                         &status, &error)
          || !g_spawn_check_wait_status (status, &error))
        return fail (s, "%s", error->message);
    }
  else if (step_3d (s, step, arg, &failed))
    {
      if (failed)
        return G_SOURCE_REMOVE;
    }
  else if (!strcmp (step, "status"))
    g_printerr ("script: status: %s\n", tg_window_get_status (w));
  else if (!strcmp (step, "print-node") && arg)
    print_node (s, arg);
  else if (!strcmp (step, "print-viewer"))
    print_viewer (s);
  else if (!strcmp (step, "screenshot2d") && arg)
    {
      GtkWidget *v = find_by_type (GTK_WIDGET (w), TG_TYPE_IMAGE_VIEW);
      if (!v)
        return fail (s, "%s", "no 2D view");
      if (!tg_widget_save_png (v, arg, &error))
        return retry_or_fail (s, error, &whole);
    }
  else if (!strcmp (step, "print-choice") && arg)
    {
      GtkWidget *dd = find_target (s, arg);
      GObject *item;
      if (!dd || !GTK_IS_DROP_DOWN (dd))
        return fail (s, "no drop-down at %s", arg);
      item = gtk_drop_down_get_selected_item (GTK_DROP_DOWN (dd));
      g_printerr ("script: choice: %s\n", GTK_IS_STRING_OBJECT (item)
                                              ? gtk_string_object_get_string (GTK_STRING_OBJECT (item))
                                              : "(none)");
    }
  else if (!strcmp (step, "screenshot-popover") && arg)
    {
      GtkWidget *pop = find_shown_popover (GTK_WIDGET (w));
      if (!pop)
        return fail (s, "%s", "no popover is shown");
      if (!tg_widget_save_png (pop, arg, &error))
        return retry_or_fail (s, error, &whole);
    }
  else if (!strcmp (step, "thumbnails"))
    {
      GtkWidget *page = find_by_type (GTK_WIDGET (w), TG_TYPE_START_PAGE);
      int n = 0, shown = 0;
      if (!page || !gtk_widget_get_mapped (page))
        return fail (s, "%s", "no start page is shown");
      tg_start_page_pending_thumbnails (TG_START_PAGE (page), &n, &shown);
      g_printerr ("script: thumbnails: %d examples, %d with a thumbnail, %d recent files\n", n,
                  shown, tg_start_page_n_recent (TG_START_PAGE (page)));
    }
  else if (!strcmp (step, "print-labels") && arg)
    print_labels (GTK_WIDGET (w), arg);
  else if (!strcmp (step, "print-stats"))
    {
      GtkWidget *v = find_by_type (GTK_WIDGET (w), TG_TYPE_VIEWER);
      const char *t = v ? tg_viewer_get_stats (TG_VIEWER (v)) : NULL;
      g_printerr ("script: stats: %s\n", t ? t : "(none)");
    }
  else if (!strcmp (step, "print-param") && arg)
    {
      if (!print_param (s, arg, &error))
        return fail (s, "%s", error->message);
    }
  else if (!strcmp (step, "recent"))
    print_recent (s);
  else if (!strcmp (step, "dialog") && arg)
    {
      if (!dialog_step (s, arg, &error))
        return fail (s, "%s", error->message);
    }
  else if (!strcmp (step, "screenshot-dialog") && arg)
    {
      if (!dialog_shot (s, arg, &error))
        return fail (s, "%s", error->message);
    }
  else if (!strcmp (step, "sleep") && arg)
    s->sleep_until = g_get_monotonic_time () + 1000 * (gint64) atoi (arg);
  else if (!strcmp (step, "recovery") && arg)
    {
      if (!tg_window_has_recovery_offer (w))
        return fail (s, "%s", "no recovery copy was offered");
      tg_window_answer_recovery (w, !strcmp (arg, "restore"));
    }
  else if (!strcmp (step, "crash"))
    {
      fflush (stderr);
      _exit (3);
    }
  else if (!strcmp (step, "print-view"))
    print_view (s);
  else if (!strcmp (step, "print-layout"))
    print_layout (s);
  else if (!strcmp (step, "print-target") && arg)
    {
      double x, y;
      if (!locate_in_window (s, arg, &x, &y, &error))
        return fail (s, "%s", error->message);
      g_printerr ("target: %s at %.1f,%.1f\n", arg, x, y);
    }
  else if (!strcmp (step, "choose") && arg && strrchr (arg, ' '))
    {
      char *sp = strrchr (arg, ' ');
      GtkWidget *dd;
      *sp = '\0';
      dd = find_target (s, arg);
      if (!dd || !GTK_IS_DROP_DOWN (dd))
        return fail (s, "no drop-down at %s", arg);
      gtk_drop_down_set_selected (GTK_DROP_DOWN (dd), (guint) atoi (sp + 1));
    }
  else if (!strcmp (step, "drag") || !strcmp (step, "click") || !strcmp (step, "dblclick")
           || !strcmp (step, "rclick") || !strcmp (step, "scroll") || !strcmp (step, "key")
           || !strcmp (step, "type") || !strcmp (step, "hover") || !strcmp (step, "resize"))
    {
      if (!pointer_step (s, step, arg ? arg : "", &error))
        return retry_or_fail (s, error, &whole);
    }
  else
    return fail (s, "unknown step \"%s\"", step);
  s->retries = 0;
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
