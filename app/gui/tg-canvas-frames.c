/* TgCanvas's frames: the frame popover (title, colour) and Ctrl+G. */
#include "config.h"

#include "tg-canvas-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const guint32 frame_palette[] = {
  0x4a6fa5, 0x3f8f8a, 0x5a8a3c, 0x8a853c, 0xb0703a, 0xa84a4a, 0x7a5aa5, 0x6a6d73,
};

void
tg_canvas__refresh_frames (TgCanvas *self)
{
  tg_document_frames_free (self->frames, self->n_frames);
  self->frames = self->doc ? tg_document_dup_frames (self->doc, &self->n_frames) : NULL;
  if (!self->doc)
    self->n_frames = 0;
  if (self->frame_sel >= self->n_frames)
    self->frame_sel = -1;
}

void
tg_canvas__begin_frame_edit (TgCanvas *self, int k)
{
  double x, y, w, h;
  GdkRectangle r;

  tg_canvas__frame_box (self, k, &x, &y, &w, &h);
  r.x = (int) (x * self->zoom + self->off_x);
  r.y = (int) (y * self->zoom + self->off_y);
  r.width = (int) (w * self->zoom);
  r.height = (int) (FRAME_HEADER * self->zoom);
  self->frame_editing = k;
  self->frame_sel = k;
  gtk_editable_set_text (GTK_EDITABLE (self->frame_entry), self->frames[k].title);
  gtk_popover_set_pointing_to (self->frame_popover, &r);
  gtk_popover_popup (self->frame_popover);
  gtk_widget_grab_focus (GTK_WIDGET (self->frame_entry));
  gtk_editable_select_region (GTK_EDITABLE (self->frame_entry), 0, -1);
}

void
tg_canvas__frame_title_activate (GtkEntry *entry, TgCanvas *self)
{
  int k = self->frame_editing;
  TgFrame f;

  if (k < 0 || k >= self->n_frames)
    return;
  f = self->frames[k];
  f.title = (char *) gtk_editable_get_text (GTK_EDITABLE (entry));
  tg_document_set_frame (self->doc, k, &f);
  gtk_popover_popdown (self->frame_popover);
  gtk_widget_grab_focus (GTK_WIDGET (self));
}

static void
frame_colour_clicked (GtkButton *b, TgCanvas *self)
{
  guint32 c = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (b), "colour"));
  int k = self->frame_editing;
  TgFrame f;

  if (k < 0 || k >= self->n_frames)
    return;
  f = self->frames[k];
  f.rgb[0] = ((c >> 16) & 0xff) / 255.0;
  f.rgb[1] = ((c >> 8) & 0xff) / 255.0;
  f.rgb[2] = (c & 0xff) / 255.0;
  tg_document_set_frame (self->doc, k, &f);
}

void
tg_canvas__frame_popover_closed (GtkPopover *p, TgCanvas *self)
{
  self->frame_editing = -1;
}

static void
draw_swatch (GtkDrawingArea *area, cairo_t *cr, int w, int h, gpointer data)
{
  guint32 c = GPOINTER_TO_UINT (data);

  tg_canvas__rounded_rect (cr, 0.5, 0.5, w - 1, h - 1, 4);
  cairo_set_source_rgb (cr, ((c >> 16) & 0xff) / 255.0, ((c >> 8) & 0xff) / 255.0,
                        (c & 0xff) / 255.0);
  cairo_fill (cr);
}

void
tg_canvas__fill_frame_colours (TgCanvas *self)
{
  for (gsize k = 0; k < G_N_ELEMENTS (frame_palette); k++)
    {
      GtkWidget *b = gtk_button_new ();
      GtkWidget *area = gtk_drawing_area_new ();
      gtk_drawing_area_set_content_width (GTK_DRAWING_AREA (area), 18);
      gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (area), 18);
      gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (area), draw_swatch,
                                      GUINT_TO_POINTER (frame_palette[k]), NULL);
      gtk_button_set_child (GTK_BUTTON (b), area);
      gtk_widget_add_css_class (b, "flat");
      g_object_set_data (G_OBJECT (b), "colour", GUINT_TO_POINTER (frame_palette[k]));
      g_signal_connect (b, "clicked", G_CALLBACK (frame_colour_clicked), self);
      gtk_box_append (self->frame_colours, b);
    }
}

/* Ctrl+G: a frame around the selected nodes (or an empty one at the
 * pointer), then its title popover. */
void
tg_canvas__action_frame (GtkWidget *w, const char *name, GVariant *param)
{
  TgCanvas *self = TG_CANVAS (w);
  const TgGraph *g = tg_canvas__graph (self);
  double x0 = G_MAXDOUBLE, y0 = G_MAXDOUBLE, x1 = -G_MAXDOUBLE, y1 = -G_MAXDOUBLE;
  TgFrame f = { (char *) _("Frame"), 0, 0, 0, 0, { 0x4a / 255.0, 0x6f / 255.0, 0xa5 / 255.0 } };
  int k;

  if (!self->doc)
    return;
  for (int n = 0; n < tg_graph_n_nodes (g); n++)
    if (g_hash_table_contains (self->selection, tg_graph_node_id (g, n)))
      {
        double x, y;
        tg_canvas__node_pos (self, n, &x, &y);
        x0 = MIN (x0, x);
        y0 = MIN (y0, y);
        x1 = MAX (x1, x + NODE_W);
        y1 = MAX (y1, y + node_height (tg_graph_node_desc (g, n)));
      }
  if (x0 > x1)
    {
      tg_canvas_get_drop_position (self, &x0, &y0);
      x1 = x0 + 360;
      y1 = y0 + 220;
    }
  f.x = x0 - 24;
  f.y = y0 - 24 - FRAME_HEADER;
  f.w = x1 - x0 + 48;
  f.h = y1 - y0 + 48 + FRAME_HEADER;
  k = tg_document_add_frame (self->doc, &f);
  tg_canvas__refresh_frames (self);
  if (k >= 0 && k < self->n_frames)
    tg_canvas__begin_frame_edit (self, k);
}
