/* TgExportDialog: the folder and the resolution of an export.
 *
 * The resolution starts at the world's and changes only this export (the
 * graph is not edited), as `tgraph eval --resolution N` does; the folder
 * is typed or chosen.  Export emits "export" (folder, resolution) and
 * closes; the window runs the build.
 */
#include "config.h"

#include "tg-export-dialog.h"

#include <glib/gi18n.h>

struct _TgExportDialog
{
  GtkWindow parent_instance;

  GtkSpinButton *resolution;
  GtkEntry *folder;
  GtkLabel *cell_label;
  GtkWidget *export_button;
  double size_x_m;
};

enum
{
  SIGNAL_EXPORT,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (TgExportDialog, tg_export_dialog, GTK_TYPE_WINDOW)

static void
update (TgExportDialog *self)
{
  int res = gtk_spin_button_get_value_as_int (self->resolution);
  const char *dir = gtk_editable_get_text (GTK_EDITABLE (self->folder));
  g_autofree char *text = NULL;

  text = g_strdup_printf (_("%d samples along X, %.3g m between samples"), res,
                          self->size_x_m / MAX (res - 1, 1));
  gtk_label_set_text (self->cell_label, text);
  /* A relative folder would depend on where the app was started. */
  gtk_widget_set_sensitive (self->export_button, g_path_is_absolute (dir));
}

static void
resolution_changed (TgExportDialog *self)
{
  update (self);
}

static void
folder_changed (TgExportDialog *self)
{
  update (self);
}

static void
cancel_clicked (TgExportDialog *self)
{
  gtk_window_destroy (GTK_WINDOW (self));
}

static void
export_clicked (TgExportDialog *self)
{
  g_autofree char *dir = g_strdup (gtk_editable_get_text (GTK_EDITABLE (self->folder)));
  int res;

  if (!gtk_widget_get_sensitive (self->export_button))
    return;
  gtk_spin_button_update (self->resolution);
  res = gtk_spin_button_get_value_as_int (self->resolution);
  g_object_ref (self);
  gtk_window_destroy (GTK_WINDOW (self));
  g_signal_emit (self, signals[SIGNAL_EXPORT], 0, dir, res);
  g_object_unref (self);
}

static void
choose_response (GtkNativeDialog *dialog, int response, TgExportDialog *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) dir = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = dir ? g_file_get_path (dir) : NULL;
      if (path)
        gtk_editable_set_text (GTK_EDITABLE (self->folder), path);
    }
  g_object_unref (dialog);
}

static void
choose_clicked (TgExportDialog *self)
{
  GtkFileChooserNative *fc = gtk_file_chooser_native_new (
    _("Export to Folder"), GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER, _("_Select"),
    _("_Cancel"));
  const char *dir = gtk_editable_get_text (GTK_EDITABLE (self->folder));

  if (g_path_is_absolute (dir) && g_file_test (dir, G_FILE_TEST_IS_DIR))
    {
      g_autoptr (GFile) f = g_file_new_for_path (dir);
      gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (fc), f, NULL);
    }
  g_signal_connect (fc, "response", G_CALLBACK (choose_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (fc));
}

static void
tg_export_dialog_class_init (TgExportDialogClass *klass)
{
  GtkWidgetClass *wc = GTK_WIDGET_CLASS (klass);

  signals[SIGNAL_EXPORT] = g_signal_new ("export", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                         NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING,
                                         G_TYPE_INT);
  gtk_widget_class_set_template_from_resource (wc,
                                               "/io/github/terrane/Terrane/tg-export-dialog.ui");
  gtk_widget_class_bind_template_child (wc, TgExportDialog, resolution);
  gtk_widget_class_bind_template_child (wc, TgExportDialog, folder);
  gtk_widget_class_bind_template_child (wc, TgExportDialog, cell_label);
  gtk_widget_class_bind_template_child (wc, TgExportDialog, export_button);
  gtk_widget_class_bind_template_callback (wc, resolution_changed);
  gtk_widget_class_bind_template_callback (wc, folder_changed);
  gtk_widget_class_bind_template_callback (wc, cancel_clicked);
  gtk_widget_class_bind_template_callback (wc, export_clicked);
  gtk_widget_class_bind_template_callback (wc, choose_clicked);
  gtk_widget_class_add_binding_action (wc, GDK_KEY_Escape, 0, "window.close", NULL);
}

static void
tg_export_dialog_init (TgExportDialog *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

TgExportDialog *
tg_export_dialog_new (GtkWindow *parent, const char *dir, int resolution, double size_x_m)
{
  TgExportDialog *self = g_object_new (TG_TYPE_EXPORT_DIALOG, "transient-for", parent, NULL);

  self->size_x_m = size_x_m;
  gtk_spin_button_set_value (self->resolution, resolution);
  gtk_editable_set_text (GTK_EDITABLE (self->folder), dir ? dir : "");
  update (self);
  return self;
}
