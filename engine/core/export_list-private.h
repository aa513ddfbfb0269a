/* Export staging, for tests only: the temporary names staging chose and a
 * hook that runs inside a commit.  Nothing outside tests/ includes this;
 * the engine's callers see the list through tgraph/engine.h alone.
 */
#ifndef TG_EXPORT_LIST_PRIVATE_H
#define TG_EXPORT_LIST_PRIVATE_H

#include "tgraph/engine.h"

typedef void (*TgExportListHook) (TgExportList *list, int i, void *data);

/* HOOK (may be NULL) is called by tg_export_list_commit before it renames
 * file I, after every destination was checked: a test changes the folder
 * in between. */
void tg__export_list_set_before_rename (TgExportList *list, TgExportListHook hook, void *data);

/* Where file I is staged (the output folder's path, then the file's
 * folder and its temporary name), or NULL once committed. */
const char *tg__export_list_staged_path (const TgExportList *list, int i);

#endif
