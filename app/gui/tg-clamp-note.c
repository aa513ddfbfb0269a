/* The note a spin button shows when a typed number was clamped to its
 * range (tg-clamp-note.h). */
#include "config.h"

#include <glib/gi18n.h>
#include <tgraph/tgraph.h>

#include "tg-clamp-note.h"

typedef struct
{
  char *label, *unit;
  GtkWidget *note; /* may be NULL */
  char *text;      /* the note shown, or NULL */
} ClampNote;

static void
clamp_note_free (gpointer p)
{
  ClampNote *c = p;

  g_free (c->label);
  g_free (c->unit);
  g_free (c->text);
  g_free (c);
}

/* "500 m", or "0.5" without a unit. */
static char *
quantity (const ClampNote *c, double x)
{
  char num[64];

  tg_describe_number (x, num, sizeof num);
  return c->unit ? g_strdup_printf ("%s %s", num, c->unit) : g_strdup (num);
}

void
tg_clamp_note_set (GtkSpinButton *spin, const char *note)
{
  ClampNote *c = g_object_get_data (G_OBJECT (spin), "tg-clamp-note");

  if (note)
    gtk_widget_add_css_class (GTK_WIDGET (spin), "warning");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (spin), "warning");
  if (c)
    {
      g_free (c->text);
      c->text = g_strdup (note);
      /* The spin's own tooltip (a vector's "X") comes back when the note goes. */
      gtk_widget_set_tooltip_text (GTK_WIDGET (spin),
                                   note ? note : g_object_get_data (G_OBJECT (spin), "tg-tip"));
      if (c->note)
        {
          gtk_label_set_text (GTK_LABEL (c->note), note ? note : "");
          gtk_widget_set_visible (c->note, note != NULL);
        }
    }
}

const char *
tg_clamp_note_get (GtkSpinButton *spin)
{
  ClampNote *c = g_object_get_data (G_OBJECT (spin), "tg-clamp-note");

  return c ? c->text : NULL;
}

static int
clamp_input (GtkSpinButton *spin, double *new_value, ClampNote *c)
{
  GtkAdjustment *a = gtk_spin_button_get_adjustment (spin);
  double lo = gtk_adjustment_get_lower (a), hi = gtk_adjustment_get_upper (a);
  const char *text = gtk_editable_get_text (GTK_EDITABLE (spin));
  g_autofree char *typed = NULL, *bound = NULL, *note = NULL;
  GtkWidget *root;
  char *end;
  double x = g_strtod (text, &end);

  if (end == text)
    return FALSE; /* not a number: GTK's own handling keeps the old value */
  while (g_ascii_isspace (*end))
    end++;
  if (*end || (x >= lo && x <= hi))
    {
      tg_clamp_note_set (spin, NULL);
      return FALSE;
    }
  *new_value = CLAMP (x, lo, hi);
  typed = quantity (c, x);
  bound = quantity (c, *new_value);
  /* TRANSLATORS: "Scale: -500 m is below the minimum 1 m; set to 1 m" */
  note = x < lo ? g_strdup_printf (_("%s: %s is below the minimum %s; set to %s"), c->label,
                                   typed, bound, bound)
                : g_strdup_printf (_("%s: %s is above the maximum %s; set to %s"), c->label,
                                   typed, bound, bound);
  tg_clamp_note_set (spin, note);
  /* The status line too, though a failing node's message may replace it. */
  root = GTK_WIDGET (gtk_widget_get_root (GTK_WIDGET (spin)));
  if (root)
    gtk_widget_activate_action (root, "win.show-message", "s", note);
  return TRUE;
}

void
tg_clamp_note_attach (GtkSpinButton *spin, const char *label, const char *unit, GtkWidget *note)
{
  ClampNote *c = g_new0 (ClampNote, 1);

  c->label = g_strdup (label);
  c->unit = g_strdup (unit);
  c->note = note;
  g_object_set_data_full (G_OBJECT (spin), "tg-tip",
                          g_strdup (gtk_widget_get_tooltip_text (GTK_WIDGET (spin))), g_free);
  g_object_set_data_full (G_OBJECT (spin), "tg-clamp-note", c, clamp_note_free);
  g_signal_connect (spin, "input", G_CALLBACK (clamp_input), c);
}
