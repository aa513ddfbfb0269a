/* TgCanvas's add-node popover: the searchable list of node types. */
#include "config.h"

#include "tg-canvas-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gboolean filter_row (GtkListBoxRow *row, gpointer data);

/* Keeps the first match selected so Enter adds it. */
static void
select_first_match (TgCanvas *self)
{
  GtkListBoxRow *row;

  for (int k = 0; (row = gtk_list_box_get_row_at_index (self->add_list, k)); k++)
    if (filter_row (row, self))
      {
        gtk_list_box_select_row (self->add_list, row);
        return;
      }
}

/* The search text changed: filter, rank and keep the best match selected. */
static void
refilter (TgCanvas *self)
{
  gtk_list_box_invalidate_filter (self->add_list);
  gtk_list_box_invalidate_sort (self->add_list);
  gtk_list_box_invalidate_headers (self->add_list);
  select_first_match (self);
}

void
tg_canvas__popup_add (TgCanvas *self, double wx, double wy)
{
  GdkRectangle r = { (int) wx, (int) wy, 1, 1 };

  tg_canvas__to_canvas (self, wx, wy, &self->add_x, &self->add_y);
  gtk_popover_set_pointing_to (self->add_popover, &r);
  gtk_editable_set_text (GTK_EDITABLE (self->add_search), "");
  refilter (self);
  gtk_popover_popup (self->add_popover);
  gtk_widget_grab_focus (GTK_WIDGET (self->add_search));
}

void
tg_canvas__clear_wire (TgCanvas *self)
{
  g_clear_pointer (&self->wire_node, g_free);
  g_clear_pointer (&self->wire_port, g_free);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Whether NEEDLE starts a word of HAY (and, when WHOLE, is that word). */
static gboolean
starts_word (const char *hay, const char *needle, gboolean whole)
{
  size_t len = strlen (needle);

  for (const char *at = hay; (at = strstr (at, needle)); at++)
    if ((at == hay || at[-1] == ' ') && (!whole || at[len] == '\0' || at[len] == ' '))
      return TRUE;
  return FALSE;
}

/* How well the search text NEEDLE (lower case) names D, best 0; -1 when it
 * does not match.  The label comes first (all of it, its start, a whole
 * word, a word's start, anywhere), then the type id and category; within
 * a tier a type id starting with it ("noise" and noise.fbm) wins. */
static int
match_rank (const TgNodeDesc *d, const char *needle)
{
  const char *labels[] = { d->label, g_dgettext (GETTEXT_PACKAGE, d->label) };
  g_autofree char *rest = g_strjoin (" ", d->type, tg_category_name (d->category),
                                     g_dgettext (GETTEXT_PACKAGE, tg_category_name (d->category)),
                                     NULL);
  g_autofree char *rest_down = g_utf8_strdown (rest, -1);
  int tier = 6;

  for (guint k = 0; k < G_N_ELEMENTS (labels); k++)
    {
      g_autofree char *l = g_utf8_strdown (labels[k], -1);
      int t = !strcmp (l, needle)                ? 0
              : g_str_has_prefix (l, needle)     ? 1
              : starts_word (l, needle, TRUE)    ? 2
              : starts_word (l, needle, FALSE)   ? 3
              : strstr (l, needle)               ? 4
                                                 : 6;
      tier = MIN (tier, t);
    }
  if (tier == 6 && strstr (rest_down, needle))
    tier = 5;
  if (tier == 6)
    return -1;
  return 2 * tier + !g_str_has_prefix (d->type, needle);
}

/* The search text in lower case, or NULL when empty (caller frees). */
static char *
search_needle (TgCanvas *self)
{
  const char *q = gtk_editable_get_text (GTK_EDITABLE (self->add_search));

  return q && *q ? g_utf8_strdown (q, -1) : NULL;
}

static gboolean
filter_row (GtkListBoxRow *row, gpointer data)
{
  TgCanvas *self = data;
  const TgNodeDesc *d = g_object_get_data (G_OBJECT (row), "desc");
  g_autofree char *needle = search_needle (self);

  /* From an output: nodes with an input it fits; into an input: nodes
   * with an output that fits it. */
  if (self->wire_node && tg_document_fitting_port (d, self->wire_type, self->wire_from_output) < 0)
    return FALSE;
  return !needle || match_rank (d, needle) >= 0;
}

static int
menu_position (TgCategory category)
{
  for (int k = 0; k < TG_CATEGORY_COUNT; k++)
    if (tg_category_at (k) == category)
      return k;
  return TG_CATEGORY_COUNT;
}

static int
sort_rows (GtkListBoxRow *a, GtkListBoxRow *b, gpointer data)
{
  const TgNodeDesc *da = g_object_get_data (G_OBJECT (a), "desc");
  const TgNodeDesc *db = g_object_get_data (G_OBJECT (b), "desc");
  g_autofree char *needle = search_needle (data);
  int c = 0;

  /* While searching: the best matches first, shorter labels first. */
  if (needle)
    c = match_rank (da, needle) - match_rank (db, needle);
  if (needle && !c)
    c = (int) g_utf8_strlen (g_dgettext (GETTEXT_PACKAGE, da->label), -1)
        - (int) g_utf8_strlen (g_dgettext (GETTEXT_PACKAGE, db->label), -1);
  if (!c)
    c = menu_position (da->category) - menu_position (db->category);
  return c ? c : g_utf8_collate (g_dgettext (GETTEXT_PACKAGE, da->label),
                                 g_dgettext (GETTEXT_PACKAGE, db->label));
}

static void
header_rows (GtkListBoxRow *row, GtkListBoxRow *before, gpointer data)
{
  const TgNodeDesc *d = g_object_get_data (G_OBJECT (row), "desc");
  const TgNodeDesc *p = before ? g_object_get_data (G_OBJECT (before), "desc") : NULL;
  g_autofree char *needle = search_needle (data);

  /* Ranked search results mix categories: headers only for the full list. */
  if (!needle && (!p || p->category != d->category))
    {
      GtkWidget *l = gtk_label_new (g_dgettext (GETTEXT_PACKAGE, tg_category_name (d->category)));
      gtk_label_set_xalign (GTK_LABEL (l), 0);
      gtk_widget_add_css_class (l, "category-header");
      gtk_list_box_row_set_header (row, l);
    }
  else
    gtk_list_box_row_set_header (row, NULL);
}

/* With no wire dropped, a node added while one is active takes that node's
 * first output that fits one of its inputs, as in Gaea or Houdini; FALSE
 * when nothing fits.  The new node then lands to the right of that port. */
static gboolean
wire_from_active (TgCanvas *self, const TgNodeDesc *d, char **node, char **port)
{
  const TgGraph *g = tg_canvas__graph (self);
  int n = self->active ? tg_graph_find_node (g, self->active) : -1;
  const TgNodeDesc *src = n >= 0 ? tg_graph_node_desc (g, n) : NULL;

  for (int p = 0; src && p < src->n_outputs; p++)
    if (tg_document_fitting_port (d, src->outputs[p].type, TRUE) >= 0)
      {
        *node = g_strdup (self->active);
        *port = g_strdup (src->outputs[p].name);
        self->wire_type = src->outputs[p].type;
        self->wire_from_output = TRUE;
        tg_canvas__port_pos (self, n, TRUE, p, &self->add_x, &self->add_y);
        self->add_x += 56;
        return TRUE;
      }
  return FALSE;
}

void
tg_canvas__add_row_activated (GtkListBox *box, GtkListBoxRow *row, TgCanvas *self)
{
  const TgNodeDesc *d = g_object_get_data (G_OBJECT (row), "desc");
  g_autoptr (GError) error = NULL;
  g_autofree char *id = NULL;
  g_autofree char *wire_node = g_steal_pointer (&self->wire_node);
  g_autofree char *wire_port = g_steal_pointer (&self->wire_port);

  gtk_popover_popdown (self->add_popover);
  if (wire_node || wire_from_active (self, d, &wire_node, &wire_port))
    {
      /* The wired port lands where the wire was dropped. */
      int p = tg_document_fitting_port (d, self->wire_type, self->wire_from_output);
      double y = self->add_y - (HEADER_H + 6 + p * PORT_H + PORT_H / 2);
      double x = self->wire_from_output ? self->add_x + 24 : self->add_x - NODE_W - 24;
      id = tg_document_add_node_linked (self->doc, d->type, x, y, wire_node, wire_port,
                                        self->wire_from_output, &error);
    }
  else
    id = tg_document_add_node (self->doc, d->type, self->add_x - NODE_W / 2, self->add_y - 12,
                               &error);
  if (id)
    {
      tg_canvas__select_only (self, id);
      tg_canvas__selection_changed (self);
    }
  else
    tg_canvas__report_error (self, error);
  gtk_widget_grab_focus (GTK_WIDGET (self));
}

void
tg_canvas__add_popover_closed (GtkPopover *p, TgCanvas *self)
{
  tg_canvas__clear_wire (self);
}

void
tg_canvas__add_search_changed (GtkSearchEntry *entry, TgCanvas *self)
{
  refilter (self);
}

static GtkListBoxRow *
first_visible_row (TgCanvas *self)
{
  GtkListBoxRow *sel = gtk_list_box_get_selected_row (self->add_list);
  GtkListBoxRow *row;

  if (sel && filter_row (sel, self))
    return sel;
  for (int k = 0; (row = gtk_list_box_get_row_at_index (self->add_list, k)); k++)
    if (filter_row (row, self))
      return row;
  return NULL;
}

void
tg_canvas__add_search_activate (GtkSearchEntry *entry, TgCanvas *self)
{
  GtkListBoxRow *row;

  /* Enter may come before the entry's search delay ran out: rank by the
   * text as typed, not by what the list last saw. */
  refilter (self);
  row = first_visible_row (self);

  if (row)
    tg_canvas__add_row_activated (self->add_list, row, self);
}

gboolean
tg_canvas__add_search_key (GtkEventControllerKey *c, guint keyval, guint code, GdkModifierType mods,
                TgCanvas *self)
{
  if (keyval == GDK_KEY_Down)
    {
      GtkListBoxRow *row = first_visible_row (self);
      if (row)
        gtk_widget_grab_focus (GTK_WIDGET (row));
      return TRUE;
    }
  return FALSE;
}

void
tg_canvas__fill_add_list (TgCanvas *self)
{
  for (int k = 0; k < tg_registry_count (); k++)
    {
      const TgNodeDesc *d = tg_registry_get (k);
      GtkWidget *row = gtk_list_box_row_new ();
      GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
      GtkWidget *label = gtk_label_new (g_dgettext (GETTEXT_PACKAGE, d->label));
      GtkWidget *type = gtk_label_new (d->type);

      gtk_label_set_xalign (GTK_LABEL (label), 0);
      gtk_widget_set_hexpand (label, TRUE);
      gtk_widget_add_css_class (type, "dim-label");
      gtk_widget_add_css_class (type, "caption");
      gtk_box_append (GTK_BOX (box), label);
      gtk_box_append (GTK_BOX (box), type);
      gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), box);
      gtk_widget_set_tooltip_text (row, g_dgettext (GETTEXT_PACKAGE, d->help));
      g_object_set_data (G_OBJECT (row), "desc", (gpointer) d);
      gtk_list_box_append (self->add_list, row);
    }
  gtk_list_box_set_filter_func (self->add_list, filter_row, self, NULL);
  gtk_list_box_set_sort_func (self->add_list, sort_rows, self, NULL);
  gtk_list_box_set_header_func (self->add_list, header_rows, self, NULL);
}
