/* TgExportDialog: asks where an export goes and at what resolution before
 * the window runs it ("export" signal with the folder and resolution). */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TG_TYPE_EXPORT_DIALOG (tg_export_dialog_get_type ())
G_DECLARE_FINAL_TYPE (TgExportDialog, tg_export_dialog, TG, EXPORT_DIALOG, GtkWindow)

/* A dialog over PARENT offering DIR and RESOLUTION (the world's) first;
 * SIZE_X_M is the world's extent along x, for the cell size it shows. */
TgExportDialog *tg_export_dialog_new (GtkWindow *parent, const char *dir, int resolution,
                                      double size_x_m);

G_END_DECLS
