/* TgStartPage: what a window without a graph shows over its canvas: a
 * new graph, the recent files and the bundled examples with thumbnails. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TG_TYPE_START_PAGE (tg_start_page_get_type ())
G_DECLARE_FINAL_TYPE (TgStartPage, tg_start_page, TG, START_PAGE, GtkWidget)

/* Lists PATHS (newest first; NULL-terminated) under "Recent". */
void tg_start_page_set_recent (TgStartPage *self, const char *const *paths);
/* How many recent files the page lists. */
int tg_start_page_n_recent (TgStartPage *self);
/* The folder of the bundled examples: TERRANE_DATADIR/examples when that
 * is set (tests, uninstalled runs), else the installed one.  New string. */
char *tg_start_page_examples_dir (void);
/* How many example thumbnails are still being made; *N_EXAMPLES and
 * *N_SHOWN get how many examples the page lists and how many show a
 * thumbnail. */
int tg_start_page_pending_thumbnails (TgStartPage *self, int *n_examples, int *n_shown);

G_END_DECLS
