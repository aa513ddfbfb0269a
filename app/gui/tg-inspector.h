/* TgInspector: the parameters of the active node and the world settings,
 * generated from the node's descriptor.  Edits become document commands;
 * a slider drag is one undo step. */
#pragma once

#include <gtk/gtk.h>

#include "tg-document.h"

G_BEGIN_DECLS

#define TG_TYPE_INSPECTOR (tg_inspector_get_type ())
G_DECLARE_FINAL_TYPE (TgInspector, tg_inspector, TG, INSPECTOR, GtkWidget)

void tg_inspector_set_document (TgInspector *self, TgDocument *doc);
/* The node to show (NULL: none). */
void tg_inspector_set_node (TgInspector *self, const char *id);
/* Why the shown node failed, above its parameters (NULL: it did not),
 * and where in the file, in a dimmer line (may be NULL). */
void tg_inspector_set_message (TgInspector *self, const char *message, const char *details);
/* MESSAGE as a warning (the node ran): in the warning colour. */
void tg_inspector_set_warning (TgInspector *self, const char *message);
const char *tg_inspector_get_message (TgInspector *self);
/* A histogram of node ID's output; a curve editor whose input comes
 * from ID draws it. */
void tg_inspector_set_histogram (TgInspector *self, const char *id, const float *bins, int n);
/* The slider (SPIN false) or the spin button of number parameter NAME of
 * the shown node, or NULL (for the test script). */
GtkWidget *tg_inspector_get_number_widget (TgInspector *self, const char *name, gboolean spin);
/* The note under number parameter NAME that a typed value was clamped, or NULL. */
const char *tg_inspector_get_number_note (TgInspector *self, const char *name);

G_END_DECLS
