/* TgListEditor: edits a list parameter (palettes, splat layers, biome
 * rules, colour stops): one card per item with a widget per item field,
 * and buttons to add, remove and reorder items. */
#pragma once

#include <gtk/gtk.h>
/* Before the engine headers: gi18n.h defines N_ unconditionally. */
#include <glib/gi18n.h>
#include <tgraph/tgraph.h>

G_BEGIN_DECLS

#define TG_TYPE_LIST_EDITOR (tg_list_editor_get_type ())
G_DECLARE_FINAL_TYPE (TgListEditor, tg_list_editor, TG, LIST_EDITOR, GtkWidget)

/* D is a TG_PARAM_LIST descriptor (borrowed: descriptors are static);
 * V is copied. */
GtkWidget *tg_list_editor_new (const TgParamDesc *d, const TgParamValue *v);
/* The edited list (borrowed until the next change). */
const TgParamValue *tg_list_editor_get_value (TgListEditor *self);
/* Shows MESSAGE (NULL clears) under the list, e.g. the document's refusal. */
void tg_list_editor_set_error (TgListEditor *self, const char *message);

/* What a "changed" emission was (its guint argument).  A field edited
 * again right after itself (typing, a spin button held down) may join
 * the previous undo step; anything else starts a new one. */
typedef enum
{
  TG_LIST_EDIT_STRUCTURE,  /* an item added, removed or moved */
  TG_LIST_EDIT_FIELD,      /* a field of an item, not the one edited last */
  TG_LIST_EDIT_FIELD_MORE, /* the same field as the previous change */
} TgListEdit;

G_END_DECLS
