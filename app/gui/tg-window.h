/* TgWindow: one document, its canvas, inspector and viewer, and the
 * evaluation and export that run behind them. */
#pragma once

#include <gtk/gtk.h>

#include "tg-document.h"

G_BEGIN_DECLS

#define TG_TYPE_WINDOW (tg_window_get_type ())
G_DECLARE_FINAL_TYPE (TgWindow, tg_window, TG, WINDOW, GtkApplicationWindow)

TgWindow *tg_window_new (GtkApplication *app);
TgDocument *tg_window_get_document (TgWindow *self);
/* Loads FILE; on failure shows the engine's message and keeps the document. */
gboolean tg_window_open_file (TgWindow *self, GFile *file);
/* TRUE while an evaluation or an export runs or is queued. */
gboolean tg_window_is_busy (TgWindow *self);
void tg_window_select (TgWindow *self, const char *id);
/* Exports to DIR in the background; tg_window_is_busy until done.  The
 * result: 0, or a negative TG_E* with MESSAGE (borrowed). */
void tg_window_export_to (TgWindow *self, const char *dir);
/* The same at RESOLUTION samples along x (0: the world's), as the Export
 * dialog runs it; the graph keeps its own resolution. */
void tg_window_export_at (TgWindow *self, const char *dir, int resolution);
int tg_window_last_export (TgWindow *self, const char **message);
/* The most an export may need (its estimate is checked before it starts);
 * 0, the default: the memory available. */
void tg_window_set_memory_limit (TgWindow *self, guint64 bytes);
/* Renders the window (or any widget of a realised window) into a PNG. */
gboolean tg_window_save_screenshot (TgWindow *self, const char *path, GError **error);
gboolean tg_widget_save_png (GtkWidget *w, const char *path, GError **error);
/* The status bar's text (borrowed). */
const char *tg_window_get_status (TgWindow *self);
/* The files the Recent menu lists, newest first; free with g_strfreev. */
char **tg_window_dup_recent_files (TgWindow *self);

/* Crash recovery: whether a recovery copy waits for an answer, and the
 * answer (as the dialog's buttons give it). */
gboolean tg_window_has_recovery_offer (TgWindow *self);
void tg_window_answer_recovery (TgWindow *self, gboolean restore);
/* Offers the newest recovery copy of an untitled graph that a crashed
 * Terrane left (for a window opened without a file). */
void tg_window_offer_untitled_recovery (TgWindow *self);

G_END_DECLS
