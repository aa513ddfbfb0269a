/* TgListEditor: a list parameter as rows of widgets.
 *
 * The editor keeps its own copy of the list.  A field edit changes the
 * copy in place and leaves the widgets alone (an entry being typed into
 * keeps its cursor); adding, removing or moving an item rebuilds the
 * rows.  Either way it emits "changed" and the inspector turns the copy
 * into one document command.  Lists of up to three fields (palettes,
 * layer colours, gradient stops) are a table with a header; longer items
 * (biome rules) are cards: colour and name on top, the numbers two per
 * line beneath.
 */
#include "config.h"

#include "tg-list-editor.h"
#include "tg-clamp-note.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TABLE_MAX_FIELDS 3

struct _TgListEditor
{
  GtkWidget parent_instance;

  GtkBox *rows;
  GtkButton *add_button;
  GtkLabel *count_label, *error_label;

  const TgParamDesc *desc;
  TgParamValue value;
  int last_item, last_field; /* the field edited last, for undo merging */
};

enum
{
  SIGNAL_CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (TgListEditor, tg_list_editor, GTK_TYPE_WIDGET)

static void rebuild (TgListEditor *self);

static void
emit_field (TgListEditor *self, int item, int field)
{
  TgListEdit e = item == self->last_item && field == self->last_field ? TG_LIST_EDIT_FIELD_MORE
                                                                      : TG_LIST_EDIT_FIELD;
  self->last_item = item;
  self->last_field = field;
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0, (guint) e);
}

static void
emit_structure (TgListEditor *self)
{
  self->last_item = self->last_field = -1;
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0, (guint) TG_LIST_EDIT_STRUCTURE);
}

/* Field widgets carry their editor, item and field index. */
static void
tag (GObject *w, TgListEditor *self, int item, int field)
{
  g_object_set_data (w, "editor", self);
  g_object_set_data (w, "item", GINT_TO_POINTER (item));
  g_object_set_data (w, "field", GINT_TO_POINTER (field));
}

static TgParamValue *
field_of (GObject *w, TgListEditor **self_out, int *item, int *field)
{
  TgListEditor *self = g_object_get_data (w, "editor");

  *self_out = self;
  *item = GPOINTER_TO_INT (g_object_get_data (w, "item"));
  *field = GPOINTER_TO_INT (g_object_get_data (w, "field"));
  return tg_param_list_field_mut (&self->value, *item, *field);
}

/* --- field edits ------------------------------------------------------------ */

static void
entry_changed (GtkEditable *e)
{
  TgListEditor *self;
  int item, field;
  TgParamValue *fv = field_of (G_OBJECT (e), &self, &item, &field);

  /* The engine's values own malloc'd strings. */
  free (fv->s);
  fv->s = strdup (gtk_editable_get_text (e));
  emit_field (self, item, field);
}

static void
colour_set (GtkColorButton *b)
{
  TgListEditor *self;
  int item, field;
  TgParamValue *fv = field_of (G_OBJECT (b), &self, &item, &field);
  GdkRGBA c;

  gtk_color_chooser_get_rgba (GTK_COLOR_CHOOSER (b), &c);
  fv->v[0] = c.red;
  fv->v[1] = c.green;
  fv->v[2] = c.blue;
  fv->v[3] = c.alpha;
  /* A colour pick is a deliberate act: its own undo step. */
  self->last_item = -1;
  emit_field (self, item, field);
}

static void
number_changed (GtkAdjustment *adj, GObject *w)
{
  TgListEditor *self;
  int item, field;
  TgParamValue *fv = field_of (w, &self, &item, &field);
  double x = gtk_adjustment_get_value (adj);
  int comp = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (adj), "component"));

  switch (fv->type)
    {
    case TG_PARAM_FLOAT:
      fv->f = x;
      break;
    case TG_PARAM_VEC2:
    case TG_PARAM_VEC3:
      fv->v[comp] = x;
      break;
    default:
      fv->i = (int) llround (x);
    }
  emit_field (self, item, field);
}

static void
check_toggled (GtkCheckButton *b)
{
  TgListEditor *self;
  int item, field;
  TgParamValue *fv = field_of (G_OBJECT (b), &self, &item, &field);

  fv->i = gtk_check_button_get_active (b);
  self->last_item = -1;
  emit_field (self, item, field);
}

static void
choice_changed (GtkDropDown *dd, GParamSpec *pspec)
{
  TgListEditor *self;
  int item, field;
  TgParamValue *fv = field_of (G_OBJECT (dd), &self, &item, &field);
  const TgParamDesc *f = &self->desc->item_params[field];
  guint k = gtk_drop_down_get_selected (dd);

  if (k == GTK_INVALID_LIST_POSITION)
    return;
  free (fv->s);
  fv->s = strdup (f->choices[k]);
  fv->i = (int) k;
  self->last_item = -1;
  emit_field (self, item, field);
}

/* --- structure -------------------------------------------------------------- */

static void
swap_items (TgParamValue *list, int a, int b)
{
  int n = list->n_item_params;
  TgParamValue *tmp = g_new (TgParamValue, n);

  /* Items are N consecutive values; moving the structs moves ownership. */
  memcpy (tmp, &list->items[a * n], sizeof *tmp * n);
  memcpy (&list->items[a * n], &list->items[b * n], sizeof *tmp * n);
  memcpy (&list->items[b * n], tmp, sizeof *tmp * n);
  g_free (tmp);
}

/* A new item copies the last one, as a new colour stop or palette entry
 * in Blender and Gaea does: a default item (position 0 after the last
 * stop, a name taken already) would often be invalid right away. */
static void
add_clicked (TgListEditor *self)
{
  int n = self->value.n_items, k;

  if (n >= (int) self->desc->max || (k = tg_param_list_append_default (&self->value,
                                                                        self->desc)) < 0)
    return;
  for (int f = 0; n > 0 && f < self->desc->n_item_params; f++)
    {
      TgParamValue *dst = tg_param_list_field_mut (&self->value, k, f), copy;
      if (tg_param_value_copy (&copy, tg_param_list_field (&self->value, n - 1, f)) == 0)
        {
          tg_param_value_clear (dst);
          *dst = copy;
        }
    }
  rebuild (self);
  emit_structure (self);
}

static void
item_action (GtkButton *b, TgListEditor *self)
{
  int item = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (b), "item"));
  const char *what = g_object_get_data (G_OBJECT (b), "what");

  if (!strcmp (what, "remove"))
    {
      if (self->value.n_items <= (int) self->desc->min)
        return;
      tg_param_list_remove (&self->value, item);
    }
  else if (!strcmp (what, "up") && item > 0)
    swap_items (&self->value, item, item - 1);
  else if (!strcmp (what, "down") && item + 1 < self->value.n_items)
    swap_items (&self->value, item, item + 1);
  else
    return;
  rebuild (self);
  emit_structure (self);
}

/* --- building ---------------------------------------------------------------- */

static const char *
field_label (const TgParamDesc *f)
{
  return g_dgettext (GETTEXT_PACKAGE, f->label);
}

static int
digits_for (double span)
{
  return span <= 2 ? 3 : span <= 200 ? 2 : span <= 20000 ? 1 : 0;
}

static GtkWidget *
spin_for (TgListEditor *self, const TgParamDesc *f, double value, double lo, double hi,
          int item, int field, int comp, gboolean is_int)
{
  double soft_lo, soft_hi, span, step;
  GtkAdjustment *a;
  GtkWidget *spin;

  tg_param_soft_range (f, &soft_lo, &soft_hi);
  span = soft_hi - soft_lo;
  step = is_int ? 1 : pow (10, floor (log10 (MAX (span, 1e-6))) - 2);
  a = gtk_adjustment_new (value, lo, hi, step, step * 10, 0);
  spin = gtk_spin_button_new (a, step, is_int ? 0 : (guint) digits_for (span));

  gtk_spin_button_set_numeric (GTK_SPIN_BUTTON (spin), TRUE);
  gtk_editable_set_width_chars (GTK_EDITABLE (spin), 5);
  tag (G_OBJECT (spin), self, item, field);
  tg_clamp_note_attach (GTK_SPIN_BUTTON (spin), g_dgettext (GETTEXT_PACKAGE, f->label), f->unit,
                        NULL);
  g_object_set_data (G_OBJECT (a), "component", GINT_TO_POINTER (comp));
  g_signal_connect (a, "value-changed", G_CALLBACK (number_changed), spin);
  return spin;
}

static GtkWidget *
field_widget (TgListEditor *self, int item, int field)
{
  const TgParamDesc *f = &self->desc->item_params[field];
  const TgParamValue *fv = tg_param_list_field (&self->value, item, field);
  GtkWidget *w;

  switch (f->type)
    {
    case TG_PARAM_COLOR:
      {
        GdkRGBA c = { fv->v[0], fv->v[1], fv->v[2], fv->v[3] };
        w = gtk_color_button_new_with_rgba (&c);
        gtk_color_chooser_set_use_alpha (GTK_COLOR_CHOOSER (w), FALSE);
        gtk_widget_set_valign (w, GTK_ALIGN_CENTER);
        tag (G_OBJECT (w), self, item, field);
        g_signal_connect (w, "color-set", G_CALLBACK (colour_set), NULL);
        break;
      }
    case TG_PARAM_FLOAT:
      w = spin_for (self, f, fv->f, f->min, f->max, item, field, 0, FALSE);
      break;
    case TG_PARAM_INT:
    case TG_PARAM_SEED:
      w = spin_for (self, f, fv->i, f->min, f->max, item, field, 0, TRUE);
      break;
    case TG_PARAM_VEC2:
    case TG_PARAM_VEC3:
      w = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 2);
      for (int c = 0; c < (f->type == TG_PARAM_VEC2 ? 2 : 3); c++)
        gtk_box_append (GTK_BOX (w),
                        spin_for (self, f, fv->v[c], f->min, f->max, item, field, c, FALSE));
      break;
    case TG_PARAM_BOOL:
      w = gtk_check_button_new ();
      gtk_check_button_set_active (GTK_CHECK_BUTTON (w), fv->i != 0);
      tag (G_OBJECT (w), self, item, field);
      g_signal_connect (w, "toggled", G_CALLBACK (check_toggled), NULL);
      break;
    case TG_PARAM_ENUM:
      {
        int k = fv->s ? tg_param_enum_index (f, fv->s) : fv->i;
        w = gtk_drop_down_new_from_strings (f->choices);
        gtk_drop_down_set_selected (GTK_DROP_DOWN (w), k >= 0 ? (guint) k : 0);
        tag (G_OBJECT (w), self, item, field);
        g_signal_connect (w, "notify::selected", G_CALLBACK (choice_changed), NULL);
        break;
      }
    default:
      w = gtk_entry_new ();
      gtk_editable_set_text (GTK_EDITABLE (w), fv->s ? fv->s : "");
      gtk_editable_set_width_chars (GTK_EDITABLE (w), 6);
      gtk_widget_set_hexpand (w, TRUE);
      tag (G_OBJECT (w), self, item, field);
      g_signal_connect (w, "changed", G_CALLBACK (entry_changed), NULL);
    }
  if (f->help)
    {
      g_autofree char *tip = g_strdup_printf ("%s: %s", field_label (f),
                                              g_dgettext (GETTEXT_PACKAGE, f->help));
      gtk_widget_set_tooltip_text (w, tip);
    }
  return w;
}

static GtkWidget *
icon_button (TgListEditor *self, const char *icon, const char *tip, const char *what, int item,
             gboolean sensitive)
{
  GtkWidget *b = gtk_button_new_from_icon_name (icon);

  gtk_widget_add_css_class (b, "flat");
  gtk_widget_add_css_class (b, "list-item-button");
  gtk_widget_set_valign (b, GTK_ALIGN_CENTER);
  gtk_widget_set_tooltip_text (b, tip);
  gtk_widget_set_sensitive (b, sensitive);
  g_object_set_data (G_OBJECT (b), "item", GINT_TO_POINTER (item));
  g_object_set_data (G_OBJECT (b), "what", (gpointer) what);
  g_signal_connect (b, "clicked", G_CALLBACK (item_action), self);
  return b;
}

static void
append_buttons (TgListEditor *self, GtkWidget *box, int item)
{
  int n = self->value.n_items;

  gtk_box_append (GTK_BOX (box), icon_button (self, "go-up-symbolic", _("Move up"), "up", item,
                                              item > 0));
  gtk_box_append (GTK_BOX (box), icon_button (self, "go-down-symbolic", _("Move down"), "down",
                                              item, item + 1 < n));
  gtk_box_append (GTK_BOX (box), icon_button (self, "list-remove-symbolic", _("Remove"),
                                              "remove", item, n > (int) self->desc->min));
}

/* Field order on screen: colours first (a swatch leads the row, as in
 * Blender's colour ramp and Gaea's palettes), then the rest in order. */
static int
field_order (const TgParamDesc *d, int *order)
{
  int n = 0;

  for (int k = 0; k < d->n_item_params; k++)
    if (d->item_params[k].type == TG_PARAM_COLOR)
      order[n++] = k;
  for (int k = 0; k < d->n_item_params; k++)
    if (d->item_params[k].type != TG_PARAM_COLOR)
      order[n++] = k;
  return n;
}

static gboolean
is_top_field (const TgParamDesc *f)
{
  return f->type == TG_PARAM_COLOR || f->type == TG_PARAM_STRING
         || f->type == TG_PARAM_INPUT_PATH || f->type == TG_PARAM_OUTPUT_PATH;
}

static void
build_table (TgListEditor *self)
{
  const TgParamDesc *d = self->desc;
  int order[64], n = field_order (d, order);
  GtkWidget *grid = gtk_grid_new ();

  gtk_grid_set_row_spacing (GTK_GRID (grid), 4);
  gtk_grid_set_column_spacing (GTK_GRID (grid), 6);
  for (int c = 0; c < n; c++)
    {
      GtkWidget *h = gtk_label_new (field_label (&d->item_params[order[c]]));
      gtk_label_set_xalign (GTK_LABEL (h), 0);
      gtk_label_set_ellipsize (GTK_LABEL (h), PANGO_ELLIPSIZE_END);
      gtk_widget_add_css_class (h, "dim-label");
      gtk_widget_add_css_class (h, "caption");
      gtk_grid_attach (GTK_GRID (grid), h, c, 0, 1, 1);
    }
  for (int i = 0; i < self->value.n_items; i++)
    {
      GtkWidget *buttons = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);
      for (int c = 0; c < n; c++)
        gtk_grid_attach (GTK_GRID (grid), field_widget (self, i, order[c]), c, i + 1, 1, 1);
      append_buttons (self, buttons, i);
      gtk_grid_attach (GTK_GRID (grid), buttons, n, i + 1, 1, 1);
    }
  gtk_box_append (self->rows, grid);
}

static void
build_cards (TgListEditor *self)
{
  const TgParamDesc *d = self->desc;
  int order[64], n = field_order (d, order);

  for (int i = 0; i < self->value.n_items; i++)
    {
      GtkWidget *card = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);
      GtkWidget *top = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
      GtkWidget *grid = gtk_grid_new ();
      char num[16];
      GtkWidget *idx;
      int cell = 0;

      gtk_widget_add_css_class (card, "list-item");
      g_snprintf (num, sizeof num, "%d", i + 1);
      idx = gtk_label_new (num);
      gtk_widget_add_css_class (idx, "dim-label");
      gtk_widget_add_css_class (idx, "numeric");
      gtk_box_append (GTK_BOX (top), idx);
      for (int c = 0; c < n; c++)
        if (is_top_field (&d->item_params[order[c]]))
          gtk_box_append (GTK_BOX (top), field_widget (self, i, order[c]));
      append_buttons (self, top, i);
      gtk_box_append (GTK_BOX (card), top);

      gtk_grid_set_row_spacing (GTK_GRID (grid), 4);
      gtk_grid_set_column_spacing (GTK_GRID (grid), 6);
      for (int c = 0; c < n; c++)
        {
          const TgParamDesc *f = &d->item_params[order[c]];
          GtkWidget *l, *w;
          if (is_top_field (f))
            continue;
          l = gtk_label_new (field_label (f));
          w = field_widget (self, i, order[c]);
          gtk_label_set_xalign (GTK_LABEL (l), 0);
          gtk_label_set_ellipsize (GTK_LABEL (l), PANGO_ELLIPSIZE_END);
          gtk_widget_set_hexpand (l, TRUE);
          gtk_widget_add_css_class (l, "caption");
          gtk_grid_attach (GTK_GRID (grid), l, (cell % 2) * 2, cell / 2, 1, 1);
          gtk_grid_attach (GTK_GRID (grid), w, (cell % 2) * 2 + 1, cell / 2, 1, 1);
          cell++;
        }
      if (cell)
        gtk_box_append (GTK_BOX (card), grid);
      else
        g_object_ref_sink (grid), g_object_unref (grid);
      gtk_box_append (self->rows, card);
    }
}

static void
rebuild (TgListEditor *self)
{
  GtkWidget *c;
  g_autofree char *count = NULL;
  int n = self->value.n_items;

  while ((c = gtk_widget_get_first_child (GTK_WIDGET (self->rows))))
    gtk_box_remove (self->rows, c);
  if (n > 0)
    {
      if (self->desc->n_item_params <= TABLE_MAX_FIELDS)
        build_table (self);
      else
        build_cards (self);
    }
  count = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%d item", "%d items", n), n);
  gtk_label_set_text (self->count_label, count);
  gtk_widget_set_sensitive (GTK_WIDGET (self->add_button), n < (int) self->desc->max);
}

/* --- public ------------------------------------------------------------------ */

GtkWidget *
tg_list_editor_new (const TgParamDesc *d, const TgParamValue *v)
{
  TgListEditor *self = g_object_new (TG_TYPE_LIST_EDITOR, NULL);

  g_return_val_if_fail (d->type == TG_PARAM_LIST, GTK_WIDGET (self));
  self->desc = d;
  if (!v || tg_param_value_copy (&self->value, v) < 0)
    tg_param_value_init_default (&self->value, d);
  rebuild (self);
  return GTK_WIDGET (self);
}

const TgParamValue *
tg_list_editor_get_value (TgListEditor *self)
{
  return &self->value;
}

void
tg_list_editor_set_error (TgListEditor *self, const char *message)
{
  gtk_label_set_text (self->error_label, message ? message : "");
  gtk_widget_set_visible (GTK_WIDGET (self->error_label), message != NULL);
}

static void
tg_list_editor_dispose (GObject *object)
{
  GtkWidget *c;

  gtk_widget_dispose_template (GTK_WIDGET (object), TG_TYPE_LIST_EDITOR);
  /* The template's root box is not bound to a field: unparent it too. */
  while ((c = gtk_widget_get_first_child (GTK_WIDGET (object))))
    gtk_widget_unparent (c);
  G_OBJECT_CLASS (tg_list_editor_parent_class)->dispose (object);
}

static void
tg_list_editor_finalize (GObject *object)
{
  tg_param_value_clear (&TG_LIST_EDITOR (object)->value);
  G_OBJECT_CLASS (tg_list_editor_parent_class)->finalize (object);
}

static void
tg_list_editor_class_init (TgListEditorClass *klass)
{
  GtkWidgetClass *wc = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = tg_list_editor_dispose;
  G_OBJECT_CLASS (klass)->finalize = tg_list_editor_finalize;
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
  gtk_widget_class_set_layout_manager_type (wc, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_template_from_resource (wc, "/io/github/terrane/Terrane/tg-list-editor.ui");
  gtk_widget_class_bind_template_child (wc, TgListEditor, rows);
  gtk_widget_class_bind_template_child (wc, TgListEditor, add_button);
  gtk_widget_class_bind_template_child (wc, TgListEditor, count_label);
  gtk_widget_class_bind_template_child (wc, TgListEditor, error_label);
  gtk_widget_class_bind_template_callback (wc, add_clicked);
  gtk_widget_class_set_css_name (wc, "tglisteditor");
}

static void
tg_list_editor_init (TgListEditor *self)
{
  self->last_item = self->last_field = -1;
  gtk_widget_init_template (GTK_WIDGET (self));
}
