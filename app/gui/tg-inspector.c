/* TgInspector: widgets generated from the active node's TgParamDesc list.
 *
 * One row per parameter: label (translated through the engine's N_()
 * strings) and an editor chosen by type, with the unit after it.  Number
 * sliders cover the soft range (logarithmic when it spans decades) and
 * their spin buttons the hard one; a typed value beyond the hard range is
 * clamped with a note saying so.  The rows are rebuilt when the node
 * changes from elsewhere (undo, another widget); changes this inspector
 * makes itself do not rebuild it, so a drag in progress keeps its widget.
 */
#include "config.h"

#include "tg-inspector.h"
#include "tg-clamp-note.h"
#include "tg-messages.h"

#include <math.h>
#include <string.h>

#include "tg-curve-editor.h"
#include "tg-list-editor.h"

struct _TgInspector
{
  GtkWidget parent_instance;

  GtkStack *stack;
  GtkEditableLabel *title;
  GtkLabel *subtitle, *help, *message, *details;
  GtkWidget *problem;
  GtkGrid *grid;
  GtkSpinButton *world_x, *world_z, *world_h, *world_res, *world_seed;

  TgDocument *doc;
  gulong changed_id, renamed_id;
  char *node;
  gboolean building;  /* filling widgets: ignore their signals */
  gboolean editing;   /* our own command: do not rebuild */
  TgCurveEditor *curve;
  char *curve_source; /* node feeding the curve node's input */
};

G_DEFINE_FINAL_TYPE (TgInspector, tg_inspector, GTK_TYPE_WIDGET)

static void rebuild (TgInspector *self);

static const TgParamDesc *
param_of (GtkWidget *w)
{
  return g_object_get_data (G_OBJECT (w), "param");
}

/* Applies V to the parameter that widget W edits; marks W on error. */
static void
apply (TgInspector *self, GtkWidget *w, const TgParamValue *v, gboolean merge)
{
  const TgParamDesc *d = param_of (w);
  g_autoptr (GError) error = NULL;

  if (self->building || !self->node)
    return;
  self->editing = TRUE;
  if (tg_document_set_param (self->doc, self->node, d->name, v, merge, &error))
    {
      gtk_widget_remove_css_class (w, "error");
      gtk_widget_set_tooltip_text (w, NULL);
    }
  else
    {
      g_autofree char *text = tg_message_translate (error->message);
      gtk_widget_add_css_class (w, "error");
      gtk_widget_set_tooltip_text (w, text);
    }
  self->editing = FALSE;
}

static void
value_for (const TgParamDesc *d, TgParamValue *v)
{
  memset (v, 0, sizeof *v);
  v->type = d->type;
}

/* --- number rows -------------------------------------------------------- */

/* How a number row's slider position maps to its value.  A quantity whose
 * soft range spans more than two decades (noise scale 10..20000 m) gets a
 * logarithmic slider, so each pixel changes the value by the same ratio.
 * A soft minimum of 0 maps log1p-style, ln (1 + x / knee) with the knee one
 * unit (1 m), so 0 stays on the slider.  Angles and quantities that may be
 * negative stay linear, as do integers. */
typedef struct
{
  gboolean log;
  double lo, hi, knee;
  int digits; /* the spin button's decimals */
} SliderMap;

/* Log slider positions: fine enough for a pixel at any sane width. */
#define LOG_STEPS 1000.0

static SliderMap
slider_map_for (const TgParamDesc *d, double lo, double hi, int digits)
{
  SliderMap m = { FALSE, lo, hi, lo > 0 ? 0.0 : 1.0, digits };

  m.log = d->type == TG_PARAM_FLOAT && d->min >= 0 && lo >= 0 && hi > lo
          && !(d->unit && !strcmp (d->unit, "deg")) && (hi + m.knee) / (lo + m.knee) > 100;
  return m;
}

static double
slider_from_value (const SliderMap *m, double x)
{
  if (!m->log)
    return x;
  x = CLAMP (x, m->lo, m->hi);
  return LOG_STEPS * log ((x + m->knee) / (m->lo + m->knee))
         / log ((m->hi + m->knee) / (m->lo + m->knee));
}

/* On a log slider the value keeps three significant digits, and no more
 * decimals than the spin button shows (or leaving it would change the
 * value): a drag gives 1230 m, not 1234.5678 m. */
static double
value_from_slider (const SliderMap *m, double t)
{
  double x, p;

  if (!m->log)
    return t;
  x = (m->lo + m->knee) * pow ((m->hi + m->knee) / (m->lo + m->knee), t / LOG_STEPS) - m->knee;
  if (x <= 0)
    return MAX (m->lo, 0.0);
  /* Divide by a power of ten that is a whole number: 63.9, not 63.900000000000006. */
  p = MAX (floor (log10 (x)) - 2, -m->digits);
  x = p < 0 ? round (x * pow (10, -p)) / pow (10, -p) : round (x / pow (10, p)) * pow (10, p);
  return CLAMP (x, m->lo, m->hi);
}

static void
apply_number (TgInspector *self, GtkWidget *box, double x)
{
  const TgParamDesc *d = param_of (box);
  TgParamValue v;

  value_for (d, &v);
  if (d->type == TG_PARAM_FLOAT)
    v.f = x;
  else
    v.i = (int) llround (x);
  apply (self, box, &v, TRUE);
}

/* Says under number row BOX, on its spin button's style and tooltip, that
 * a typed value was clamped (NOTE), or clears that (NULL). */
static void
set_clamp_note (GtkWidget *box, const char *note)
{
  tg_clamp_note_set (GTK_SPIN_BUTTON (g_object_get_data (G_OBJECT (box), "spin")), note);
}

static void
slider_moved (GtkAdjustment *sa, GtkWidget *box)
{
  TgInspector *self = g_object_get_data (G_OBJECT (box), "inspector");
  const SliderMap *m = g_object_get_data (G_OBJECT (box), "map");
  GtkWidget *spin = g_object_get_data (G_OBJECT (box), "spin");
  double x = value_from_slider (m, gtk_adjustment_get_value (sa));

  if (self->building)
    return;
  /* Keep the spin button with the slider without a second command. */
  self->building = TRUE;
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), x);
  self->building = FALSE;
  set_clamp_note (box, NULL);
  apply_number (self, box, x);
}

static void
spin_changed (GtkAdjustment *ha, GtkWidget *box)
{
  TgInspector *self = g_object_get_data (G_OBJECT (box), "inspector");
  const SliderMap *m = g_object_get_data (G_OBJECT (box), "map");
  GtkWidget *scale = g_object_get_data (G_OBJECT (box), "scale");
  double x = gtk_adjustment_get_value (ha);

  if (self->building)
    return;
  if (scale)
    {
      self->building = TRUE;
      gtk_range_set_value (GTK_RANGE (scale), slider_from_value (m, x));
      self->building = FALSE;
    }
  apply_number (self, box, x);
}

static void
seed_dice (GtkButton *b, GtkSpinButton *spin)
{
  gtk_spin_button_set_value (spin, g_random_int_range (0, G_MAXINT32));
  tg_document_end_merge (TG_INSPECTOR (g_object_get_data (G_OBJECT (spin), "inspector"))->doc);
}

static void
bool_changed (GtkSwitch *sw, GParamSpec *pspec, TgInspector *self)
{
  TgParamValue v;

  value_for (param_of (GTK_WIDGET (sw)), &v);
  v.i = gtk_switch_get_active (sw);
  apply (self, GTK_WIDGET (sw), &v, FALSE);
}

static void
enum_changed (GtkDropDown *dd, GParamSpec *pspec, TgInspector *self)
{
  const TgParamDesc *d = param_of (GTK_WIDGET (dd));
  guint k = gtk_drop_down_get_selected (dd);
  TgParamValue v;

  if (k == GTK_INVALID_LIST_POSITION)
    return;
  value_for (d, &v);
  v.s = (char *) d->choices[k];
  v.i = (int) k;
  apply (self, GTK_WIDGET (dd), &v, FALSE);
}

static void
text_changed (GtkEditable *e, TgInspector *self)
{
  const TgParamDesc *d = param_of (GTK_WIDGET (e));
  TgParamValue v;

  if (self->building)
    return;
  value_for (d, &v);
  v.s = (char *) gtk_editable_get_text (e);
  apply (self, GTK_WIDGET (e), &v, TRUE);
}

/* A file path applies when confirmed (Enter, leaving the entry, a file
 * chosen), not per keystroke: a half-typed name is no file to read. */
static void
path_confirmed (GtkEditable *e, TgInspector *self)
{
  const TgParamDesc *d = param_of (GTK_WIDGET (e));
  const char *text = gtk_editable_get_text (e);
  TgParamValue v;

  /* Focus leaves too when the inspector moves to another node. */
  if (self->building || g_strcmp0 (g_object_get_data (G_OBJECT (e), "node"), self->node)
      || !g_strcmp0 (text, g_object_get_data (G_OBJECT (e), "applied")))
    return;
  g_object_set_data_full (G_OBJECT (e), "applied", g_strdup (text), g_free);
  value_for (d, &v);
  v.s = (char *) text;
  apply (self, GTK_WIDGET (e), &v, FALSE);
}

static void
path_focus_left (GtkEventControllerFocus *focus, TgInspector *self)
{
  path_confirmed (GTK_EDITABLE (gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (focus))),
                  self);
}

static void
vec_changed (GtkAdjustment *adj, GtkWidget *box)
{
  TgInspector *self = g_object_get_data (G_OBJECT (box), "inspector");
  const TgParamDesc *d = param_of (box);
  TgParamValue v;
  int n = d->type == TG_PARAM_VEC2 ? 2 : 3;

  value_for (d, &v);
  for (int k = 0; k < n; k++)
    {
      char key[8];
      g_snprintf (key, sizeof key, "c%d", k);
      v.v[k] = gtk_adjustment_get_value (g_object_get_data (G_OBJECT (box), key));
    }
  apply (self, box, &v, TRUE);
}

static void
color_set (GtkColorButton *b, TgInspector *self)
{
  GdkRGBA c;
  TgParamValue v;

  gtk_color_chooser_get_rgba (GTK_COLOR_CHOOSER (b), &c);
  value_for (param_of (GTK_WIDGET (b)), &v);
  v.v[0] = c.red;
  v.v[1] = c.green;
  v.v[2] = c.blue;
  v.v[3] = c.alpha;
  apply (self, GTK_WIDGET (b), &v, FALSE);
}

static void
curve_changed (TgCurveEditor *ce, TgInspector *self)
{
  TgParamValue v;
  int n;
  const double *xy = tg_curve_editor_get_points (ce, &n);

  value_for (param_of (GTK_WIDGET (ce)), &v);
  v.xy = (double *) xy;
  v.n_points = n;
  apply (self, GTK_WIDGET (ce), &v, TRUE);
}

/* A list edit: a field typed or dragged again joins the previous undo
 * step; a new field, an added, removed or moved item starts one. */
static void
list_changed (TgListEditor *le, guint edit, TgInspector *self)
{
  const TgParamDesc *d = param_of (GTK_WIDGET (le));
  g_autoptr (GError) error = NULL;

  if (self->building || !self->node)
    return;
  if (edit != TG_LIST_EDIT_FIELD_MORE)
    tg_document_end_merge (self->doc);
  self->editing = TRUE;
  if (tg_document_set_param (self->doc, self->node, d->name, tg_list_editor_get_value (le),
                             edit != TG_LIST_EDIT_STRUCTURE, &error))
    tg_list_editor_set_error (le, NULL);
  else
    {
      g_autofree char *text = tg_message_translate (error->message);
      tg_list_editor_set_error (le, text);
    }
  self->editing = FALSE;
}

static void
curve_finished (TgCurveEditor *ce, TgInspector *self)
{
  tg_document_end_merge (self->doc);
}

static void
file_chosen (GtkNativeDialog *dialog, int response, GtkEntry *entry)
{
  TgInspector *self = g_object_get_data (G_OBJECT (entry), "inspector");

  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) f = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      const char *base = tg_graph_base_dir (tg_document_get_graph (self->doc));
      g_autoptr (GFile) bf = base ? g_file_new_for_path (base) : NULL;
      /* Input paths are relative to the graph's folder when they can be. */
      g_autofree char *rel = bf ? g_file_get_relative_path (bf, f) : NULL;
      g_autofree char *abs = g_file_get_path (f);
      gtk_editable_set_text (GTK_EDITABLE (entry), rel ? rel : abs);
      path_confirmed (GTK_EDITABLE (entry), self);
    }
  g_object_unref (dialog);
}

static void
browse_clicked (GtkButton *b, GtkEntry *entry)
{
  GtkFileChooserNative *fc = gtk_file_chooser_native_new (
    _("Choose a File"), GTK_WINDOW (gtk_widget_get_root (GTK_WIDGET (b))),
    GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));

  g_signal_connect (fc, "response", G_CALLBACK (file_chosen), entry);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (fc));
}

/* --- building rows -------------------------------------------------------- */

static GtkWidget *
tag (TgInspector *self, GtkWidget *w, const TgParamDesc *d)
{
  g_object_set_data (G_OBJECT (w), "param", (gpointer) d);
  g_object_set_data (G_OBJECT (w), "inspector", self);
  return w;
}

static int
digits_for (double span)
{
  return span <= 2 ? 3 : span <= 200 ? 2 : span <= 20000 ? 1 : 0;
}

static GtkWidget *
number_row (TgInspector *self, const TgParamDesc *d, double value)
{
  gboolean is_int = d->type != TG_PARAM_FLOAT;
  double lo, hi, span, step;
  int digits;
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkAdjustment *ha;
  GtkWidget *spin, *note;
  SliderMap *m = g_new (SliderMap, 1);

  tg_param_soft_range (d, &lo, &hi);
  span = hi - lo;
  digits = is_int ? 0 : digits_for (span);
  step = is_int ? 1 : pow (10, floor (log10 (MAX (span, 1e-6))) - 2);
  *m = slider_map_for (d, lo, hi, digits);
  ha = gtk_adjustment_new (value, d->min, d->max, step, step * 10, 0);
  spin = gtk_spin_button_new (ha, step, (guint) digits);

  tag (self, box, d);
  g_object_set_data_full (G_OBJECT (box), "map", m, g_free);
  g_object_set_data (G_OBJECT (box), "spin", spin);
  /* Under the row, shown when a typed value was clamped (rebuild places it). */
  note = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (note), 0);
  gtk_label_set_wrap (GTK_LABEL (note), TRUE);
  gtk_widget_add_css_class (note, "clamp-note");
  gtk_widget_set_visible (note, FALSE);
  g_object_set_data (G_OBJECT (box), "note", note);
  gtk_spin_button_set_numeric (GTK_SPIN_BUTTON (spin), TRUE);
  gtk_editable_set_width_chars (GTK_EDITABLE (spin), 7);
  if (span < 1e6 && d->type != TG_PARAM_SEED)
    {
      GtkAdjustment *sa = m->log ? gtk_adjustment_new (slider_from_value (m, value), 0, LOG_STEPS,
                                                       LOG_STEPS / 100, LOG_STEPS / 10, 0)
                                 : gtk_adjustment_new (value, lo, hi, step, step * 10, 0);
      GtkWidget *scale = gtk_scale_new (GTK_ORIENTATION_HORIZONTAL, sa);
      gtk_scale_set_draw_value (GTK_SCALE (scale), FALSE);
      gtk_widget_set_hexpand (scale, TRUE);
      gtk_range_set_round_digits (GTK_RANGE (scale), m->log ? 0 : digits);
      gtk_box_append (GTK_BOX (box), scale);
      g_object_set_data (G_OBJECT (box), "scale", scale);
      g_signal_connect (sa, "value-changed", G_CALLBACK (slider_moved), box);
    }
  else
    gtk_widget_set_hexpand (spin, TRUE);
  g_signal_connect (ha, "value-changed", G_CALLBACK (spin_changed), box);
  tg_clamp_note_attach (GTK_SPIN_BUTTON (spin), g_dgettext (GETTEXT_PACKAGE, d->label), d->unit,
                        note);
  gtk_box_append (GTK_BOX (box), spin);
  if (d->type == TG_PARAM_SEED)
    {
      GtkWidget *dice = gtk_button_new_from_icon_name ("media-playlist-shuffle-symbolic");
      gtk_widget_set_tooltip_text (dice, _("Random seed"));
      gtk_widget_add_css_class (dice, "flat");
      g_object_set_data (G_OBJECT (spin), "inspector", self);
      g_signal_connect (dice, "clicked", G_CALLBACK (seed_dice), spin);
      gtk_box_append (GTK_BOX (box), dice);
    }
  return box;
}

static GtkWidget *
editor_for (TgInspector *self, const TgParamDesc *d, const TgParamValue *v)
{
  switch (d->type)
    {
    case TG_PARAM_FLOAT:
      return number_row (self, d, v->f);
    case TG_PARAM_INT:
    case TG_PARAM_SEED:
      return number_row (self, d, v->i);
    case TG_PARAM_BOOL:
      {
        GtkWidget *sw = tag (self, gtk_switch_new (), d);
        gtk_switch_set_active (GTK_SWITCH (sw), v->i != 0);
        gtk_widget_set_halign (sw, GTK_ALIGN_START);
        g_signal_connect (sw, "notify::active", G_CALLBACK (bool_changed), self);
        return sw;
      }
    case TG_PARAM_ENUM:
      {
        GtkWidget *dd = tag (self, gtk_drop_down_new_from_strings (d->choices), d);
        int k = v->s ? tg_param_enum_index (d, v->s) : v->i;
        gtk_drop_down_set_selected (GTK_DROP_DOWN (dd), k >= 0 ? (guint) k : 0);
        g_signal_connect (dd, "notify::selected", G_CALLBACK (enum_changed), self);
        return dd;
      }
    case TG_PARAM_LIST:
      {
        GtkWidget *le = tag (self, tg_list_editor_new (d, v), d);
        g_signal_connect (le, "changed", G_CALLBACK (list_changed), self);
        return le;
      }
    case TG_PARAM_STRING:
    case TG_PARAM_OUTPUT_PATH:
    case TG_PARAM_INPUT_PATH:
      {
        GtkWidget *entry = tag (self, gtk_entry_new (), d);
        gtk_editable_set_text (GTK_EDITABLE (entry), v->s ? v->s : "");
        gtk_widget_set_hexpand (entry, TRUE);
        if (d->type == TG_PARAM_STRING)
          g_signal_connect (entry, "changed", G_CALLBACK (text_changed), self);
        else
          {
            GtkEventController *focus = gtk_event_controller_focus_new ();
            g_object_set_data_full (G_OBJECT (entry), "applied", g_strdup (v->s ? v->s : ""),
                                    g_free);
            g_object_set_data_full (G_OBJECT (entry), "node", g_strdup (self->node), g_free);
            g_signal_connect (entry, "activate", G_CALLBACK (path_confirmed), self);
            g_signal_connect (focus, "leave", G_CALLBACK (path_focus_left), self);
            gtk_widget_add_controller (entry, focus);
          }
        if (d->type == TG_PARAM_INPUT_PATH)
          {
            GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 4);
            GtkWidget *b = gtk_button_new_from_icon_name ("document-open-symbolic");
            gtk_widget_set_tooltip_text (b, _("Choose a file"));
            g_signal_connect (b, "clicked", G_CALLBACK (browse_clicked), entry);
            gtk_box_append (GTK_BOX (box), entry);
            gtk_box_append (GTK_BOX (box), b);
            gtk_widget_add_css_class (box, "linked");
            if (!v->s || !*v->s)
              gtk_widget_add_css_class (entry, "error");
            return box;
          }
        return entry;
      }
    case TG_PARAM_VEC2:
    case TG_PARAM_VEC3:
      {
        GtkWidget *box = tag (self, gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 4), d);
        int n = d->type == TG_PARAM_VEC2 ? 2 : 3;
        for (int k = 0; k < n; k++)
          {
            GtkAdjustment *a = gtk_adjustment_new (v->v[k], d->min, d->max, 10, 100, 0);
            GtkWidget *spin = gtk_spin_button_new (a, 10, 1);
            char key[8];
            g_snprintf (key, sizeof key, "c%d", k);
            g_object_set_data (G_OBJECT (box), key, a);
            gtk_editable_set_width_chars (GTK_EDITABLE (spin), 6);
            gtk_widget_set_hexpand (spin, TRUE);
            gtk_widget_set_tooltip_text (spin, (const char *[]) { "X", n == 2 ? "Z" : "Y", "Z" }[k]);
            gtk_spin_button_set_numeric (GTK_SPIN_BUTTON (spin), TRUE);
            tg_clamp_note_attach (GTK_SPIN_BUTTON (spin), g_dgettext (GETTEXT_PACKAGE, d->label),
                                  d->unit, NULL);
            g_signal_connect (a, "value-changed", G_CALLBACK (vec_changed), box);
            gtk_box_append (GTK_BOX (box), spin);
          }
        return box;
      }
    case TG_PARAM_COLOR:
      {
        GdkRGBA c = { v->v[0], v->v[1], v->v[2], v->v[3] };
        GtkWidget *b = tag (self, gtk_color_button_new_with_rgba (&c), d);
        gtk_color_chooser_set_use_alpha (GTK_COLOR_CHOOSER (b), TRUE);
        gtk_widget_set_halign (b, GTK_ALIGN_START);
        g_signal_connect (b, "color-set", G_CALLBACK (color_set), self);
        return b;
      }
    case TG_PARAM_CURVE:
      {
        GtkWidget *ce = tag (self, tg_curve_editor_new (), d);
        tg_curve_editor_set_points (TG_CURVE_EDITOR (ce), v->xy, v->n_points);
        gtk_widget_set_hexpand (ce, TRUE);
        g_signal_connect (ce, "changed", G_CALLBACK (curve_changed), self);
        g_signal_connect (ce, "finished", G_CALLBACK (curve_finished), self);
        self->curve = TG_CURVE_EDITOR (ce);
        return ce;
      }
    default:
      return gtk_label_new (tg_param_type_name (d->type));
    }
}

static void
clear_grid (TgInspector *self)
{
  GtkWidget *c;

  while ((c = gtk_widget_get_first_child (GTK_WIDGET (self->grid))))
    gtk_grid_remove (self->grid, c);
  self->curve = NULL;
  g_clear_pointer (&self->curve_source, g_free);
}

static void
rebuild (TgInspector *self)
{
  const TgGraph *g;
  const TgNodeDesc *d;
  int n;

  clear_grid (self);
  if (!self->doc || !self->node || (n = tg_graph_find_node (tg_document_get_graph (self->doc),
                                                            self->node)) < 0)
    {
      gtk_editable_set_text (GTK_EDITABLE (self->title), _("No node selected"));
      gtk_editable_set_editable (GTK_EDITABLE (self->title), FALSE);
      gtk_label_set_text (self->subtitle, "");
      gtk_label_set_text (self->help, _("Click a node in the graph to edit its parameters, or "
                                        "press Tab over the graph to add one."));
      return;
    }
  g = tg_document_get_graph (self->doc);
  d = tg_graph_node_desc (g, n);
  self->building = TRUE;
  gtk_editable_set_text (GTK_EDITABLE (self->title), self->node);
  gtk_editable_set_editable (GTK_EDITABLE (self->title), TRUE);
  {
    g_autofree char *sub = g_strdup_printf ("%s · %s", g_dgettext (GETTEXT_PACKAGE, d->label),
                                            d->type);
    gtk_label_set_text (self->subtitle, sub);
  }
  gtk_label_set_text (self->help, d->help ? g_dgettext (GETTEXT_PACKAGE, d->help) : "");
  for (int k = 0; k < d->n_params; k++)
    {
      const TgParamDesc *p = &d->params[k];
      const TgParamValue *v = tg_graph_get_param_at (g, n, k);
      GtkWidget *label = gtk_label_new (g_dgettext (GETTEXT_PACKAGE, p->label));
      GtkWidget *ed = editor_for (self, p, v);
      int row = k;

      gtk_label_set_xalign (GTK_LABEL (label), 0);
      gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
      gtk_label_set_width_chars (GTK_LABEL (label), 10);
      gtk_label_set_max_width_chars (GTK_LABEL (label), 14);
      if (p->help)
        gtk_widget_set_tooltip_text (label, g_dgettext (GETTEXT_PACKAGE, p->help));
      if (p->type == TG_PARAM_CURVE || p->type == TG_PARAM_LIST)
        {
          /* Curves and lists get the whole width under their label. */
          gtk_grid_attach (self->grid, label, 0, 2 * row, 3, 1);
          gtk_grid_attach (self->grid, ed, 0, 2 * row + 1, 3, 1);
          continue;
        }
      gtk_grid_attach (self->grid, label, 0, 2 * row, 1, 1);
      gtk_grid_attach (self->grid, ed, 1, 2 * row, 1, 1);
      gtk_widget_set_hexpand (ed, TRUE);
      if (g_object_get_data (G_OBJECT (ed), "note"))
        gtk_grid_attach (self->grid, g_object_get_data (G_OBJECT (ed), "note"), 1, 2 * row + 1, 2,
                         1);
      if (p->unit)
        {
          GtkWidget *u = gtk_label_new (p->unit);
          gtk_widget_add_css_class (u, "dim-label");
          gtk_label_set_xalign (GTK_LABEL (u), 0);
          gtk_label_set_width_chars (GTK_LABEL (u), 3);
          gtk_grid_attach (self->grid, u, 2, 2 * row, 1, 1);
        }
    }
  if (self->curve && d->n_inputs > 0)
    {
      int l = tg_graph_input_link (g, n, 0);
      if (l >= 0)
        self->curve_source = g_strdup (tg_graph_node_id (g, tg_graph_link (g, l)->from_node));
    }
  self->building = FALSE;
}

/* --- rename ----------------------------------------------------------------- */

/* The title is the node's name: editing it and pressing Enter renames. */
static void
title_editing_changed (GtkEditableLabel *label, GParamSpec *pspec, TgInspector *self)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *name = NULL;

  if (gtk_editable_label_get_editing (label) || self->building || !self->node || !self->doc)
    return;
  name = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (label))));
  if (!strcmp (name, self->node))
    return;
  if (!tg_document_rename_node (self->doc, self->node, name, &error))
    {
      GtkWidget *root = GTK_WIDGET (gtk_widget_get_root (GTK_WIDGET (self)));
      gtk_editable_set_text (GTK_EDITABLE (label), self->node);
      if (root)
        {
          g_autofree char *text = tg_message_translate (error->message);
          gtk_widget_activate_action (root, "win.show-message", "s", text);
        }
    }
}

static void
on_doc_renamed (TgDocument *doc, const char *old_id, const char *new_id, TgInspector *self)
{
  if (!g_strcmp0 (self->node, old_id))
    {
      g_free (self->node);
      self->node = g_strdup (new_id);
    }
  if (!g_strcmp0 (self->curve_source, old_id))
    {
      g_free (self->curve_source);
      self->curve_source = g_strdup (new_id);
    }
}

/* --- world ------------------------------------------------------------------ */

static void
fill_world (TgInspector *self)
{
  const TgWorld *w = tg_graph_world_const (tg_document_get_graph (self->doc));

  self->building = TRUE;
  gtk_spin_button_set_value (self->world_x, w->size_x);
  gtk_spin_button_set_value (self->world_z, w->size_z);
  gtk_spin_button_set_value (self->world_h, w->height_m);
  gtk_spin_button_set_value (self->world_res, w->resolution);
  gtk_spin_button_set_value (self->world_seed, w->seed);
  self->building = FALSE;
}

static void
world_changed (GtkSpinButton *spin, TgInspector *self)
{
  TgWorld w;
  g_autoptr (GError) error = NULL;

  if (self->building || !self->doc)
    return;
  w = *tg_graph_world_const (tg_document_get_graph (self->doc));
  w.size_x = gtk_spin_button_get_value (self->world_x);
  w.size_z = gtk_spin_button_get_value (self->world_z);
  w.height_m = gtk_spin_button_get_value (self->world_h);
  w.resolution = gtk_spin_button_get_value_as_int (self->world_res);
  w.seed = (uint32_t) gtk_spin_button_get_value (self->world_seed);
  self->editing = TRUE;
  if (!tg_document_set_world (self->doc, &w, &error))
    {
      g_autofree char *text = tg_message_translate (error->message);
      gtk_widget_add_css_class (GTK_WIDGET (spin), "error");
      gtk_widget_set_tooltip_text (GTK_WIDGET (spin), text);
    }
  else
    gtk_widget_remove_css_class (GTK_WIDGET (spin), "error");
  self->editing = FALSE;
}

static void
world_dice (GtkButton *b, TgInspector *self)
{
  gtk_spin_button_set_value (self->world_seed, g_random_int_range (0, G_MAXINT32));
}

/* --- document ---------------------------------------------------------------- */

static void
on_doc_changed (TgDocument *doc, guint what, const char *node, TgInspector *self)
{
  if (self->editing)
    return;
  if (what & (TG_DOC_CHANGE_WORLD))
    fill_world (self);
  if (!(what & ~(TG_DOC_CHANGE_POSITION | TG_DOC_CHANGE_FRAMES | TG_DOC_CHANGE_PIN)))
    return;
  if ((what & (TG_DOC_CHANGE_NODES | TG_DOC_CHANGE_LINKS)) || !node || !g_strcmp0 (node, self->node))
    rebuild (self);
}

void
tg_inspector_set_document (TgInspector *self, TgDocument *doc)
{
  if (self->doc)
    {
      g_signal_handler_disconnect (self->doc, self->changed_id);
      g_signal_handler_disconnect (self->doc, self->renamed_id);
      g_clear_object (&self->doc);
    }
  self->doc = g_object_ref (doc);
  self->changed_id = g_signal_connect (doc, "changed", G_CALLBACK (on_doc_changed), self);
  self->renamed_id = g_signal_connect (doc, "renamed", G_CALLBACK (on_doc_renamed), self);
  g_clear_pointer (&self->node, g_free);
  fill_world (self);
  rebuild (self);
}

void
tg_inspector_set_node (TgInspector *self, const char *id)
{
  if (!g_strcmp0 (id, self->node) && gtk_widget_get_first_child (GTK_WIDGET (self->grid)))
    return;
  g_free (self->node);
  self->node = g_strdup (id);
  if (self->doc)
    tg_document_end_merge (self->doc);
  rebuild (self);
  if (id)
    gtk_stack_set_visible_child_name (self->stack, "node");
}

void
tg_inspector_set_message (TgInspector *self, const char *message, const char *details)
{
  gtk_widget_remove_css_class (GTK_WIDGET (self->message), "warning");
  gtk_widget_add_css_class (GTK_WIDGET (self->message), "error");
  gtk_widget_set_visible (self->problem, message != NULL);
  gtk_label_set_text (self->message, message ? message : "");
  gtk_label_set_text (self->details, details ? details : "");
  gtk_widget_set_visible (GTK_WIDGET (self->details), details != NULL);
}

void
tg_inspector_set_warning (TgInspector *self, const char *message)
{
  tg_inspector_set_message (self, message, NULL);
  gtk_widget_remove_css_class (GTK_WIDGET (self->message), "error");
  gtk_widget_add_css_class (GTK_WIDGET (self->message), "warning");
}

const char *
tg_inspector_get_message (TgInspector *self)
{
  return gtk_widget_get_visible (self->problem) ? gtk_label_get_text (self->message) : NULL;
}

void
tg_inspector_set_histogram (TgInspector *self, const char *id, const float *bins, int n)
{
  if (self->curve && !g_strcmp0 (id, self->curve_source))
    tg_curve_editor_set_histogram (self->curve, bins, n);
}

/* The number row of parameter NAME, or NULL. */
static GtkWidget *
number_row_of (TgInspector *self, const char *name)
{
  for (GtkWidget *c = gtk_widget_get_first_child (GTK_WIDGET (self->grid)); c;
       c = gtk_widget_get_next_sibling (c))
    {
      const TgParamDesc *d = param_of (c);
      if (d && !strcmp (d->name, name) && g_object_get_data (G_OBJECT (c), "spin"))
        return c;
    }
  return NULL;
}

GtkWidget *
tg_inspector_get_number_widget (TgInspector *self, const char *name, gboolean spin)
{
  GtkWidget *row = number_row_of (self, name);

  return row ? g_object_get_data (G_OBJECT (row), spin ? "spin" : "scale") : NULL;
}

const char *
tg_inspector_get_number_note (TgInspector *self, const char *name)
{
  GtkWidget *row = number_row_of (self, name);
  GtkWidget *note = row ? g_object_get_data (G_OBJECT (row), "note") : NULL;

  return note && gtk_widget_get_visible (note) ? gtk_label_get_text (GTK_LABEL (note)) : NULL;
}

static void
tg_inspector_dispose (GObject *object)
{
  TgInspector *self = TG_INSPECTOR (object);

  if (self->doc)
    {
      g_signal_handler_disconnect (self->doc, self->changed_id);
      g_signal_handler_disconnect (self->doc, self->renamed_id);
      g_clear_object (&self->doc);
    }
  gtk_widget_dispose_template (GTK_WIDGET (self), TG_TYPE_INSPECTOR);
  /* The template's top box has no id, so the call above leaves it. */
  for (GtkWidget *c; (c = gtk_widget_get_first_child (GTK_WIDGET (self)));)
    gtk_widget_unparent (c);
  G_OBJECT_CLASS (tg_inspector_parent_class)->dispose (object);
}

static void
tg_inspector_finalize (GObject *object)
{
  TgInspector *self = TG_INSPECTOR (object);

  g_free (self->node);
  g_free (self->curve_source);
  G_OBJECT_CLASS (tg_inspector_parent_class)->finalize (object);
}

static void
tg_inspector_class_init (TgInspectorClass *klass)
{
  GtkWidgetClass *wc = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = tg_inspector_dispose;
  G_OBJECT_CLASS (klass)->finalize = tg_inspector_finalize;
  gtk_widget_class_set_layout_manager_type (wc, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_template_from_resource (wc, "/io/github/terrane/Terrane/tg-inspector.ui");
  gtk_widget_class_bind_template_child (wc, TgInspector, stack);
  gtk_widget_class_bind_template_child (wc, TgInspector, title);
  gtk_widget_class_bind_template_child (wc, TgInspector, subtitle);
  gtk_widget_class_bind_template_child (wc, TgInspector, help);
  gtk_widget_class_bind_template_child (wc, TgInspector, message);
  gtk_widget_class_bind_template_child (wc, TgInspector, details);
  gtk_widget_class_bind_template_child (wc, TgInspector, problem);
  gtk_widget_class_bind_template_child (wc, TgInspector, grid);
  gtk_widget_class_bind_template_child (wc, TgInspector, world_x);
  gtk_widget_class_bind_template_child (wc, TgInspector, world_z);
  gtk_widget_class_bind_template_child (wc, TgInspector, world_h);
  gtk_widget_class_bind_template_child (wc, TgInspector, world_res);
  gtk_widget_class_bind_template_child (wc, TgInspector, world_seed);
  gtk_widget_class_bind_template_callback (wc, world_changed);
  gtk_widget_class_bind_template_callback (wc, world_dice);
  gtk_widget_class_bind_template_callback (wc, title_editing_changed);
  gtk_widget_class_set_css_name (wc, "tginspector");
}

static void
tg_inspector_init (TgInspector *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  /* The World tab's numbers say when a typed one was clamped, as the
   * node's do (the labels are the tab's own). */
  tg_clamp_note_attach (self->world_x, _("Size X"), "m", NULL);
  tg_clamp_note_attach (self->world_z, _("Size Z"), "m", NULL);
  tg_clamp_note_attach (self->world_h, _("Height"), "m", NULL);
  tg_clamp_note_attach (self->world_res, _("Build resolution"), NULL, NULL);
  tg_clamp_note_attach (self->world_seed, _("Seed"), NULL, NULL);
}
