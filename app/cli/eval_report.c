/* `tgraph eval --report FILE.html`: one self-contained HTML page about a
 * build, for a CI job's artifacts: the graph drawn from its nodes' editor
 * positions (SVG), each node's thumbnail, time and the memory of its
 * results, the exports with thumbnails and sizes, and the manifest.  No
 * script, no network: pictures are data: URIs.  The page is written
 * atomically after the build has committed its files (after a node
 * failed: which node and why, no exports), and it is no file of the
 * build (not in the manifest), so the exports are the same bytes with
 * and without it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <tgformats/outputs.h>
#include <tgformats/tgformats.h>

#include "cli.h"
#include "eval_report.h"
#include "picture.h"

#define THUMB 96   /* node thumbnails in the drawing */
#define EXPORT_THUMB 192
#define BOX_W 200
#define HEAD_H 40
#define PORT_H 16

/* S as HTML text; QUOTES: also as an attribute's value. */
static void
put_html (FILE *f, const char *s, bool quotes)
{
  for (; s && *s; s++)
    switch (*s)
      {
      case '<': fputs ("&lt;", f); break;
      case '>': fputs ("&gt;", f); break;
      case '&': fputs ("&amp;", f); break;
      case '"':
        fputs (quotes ? "&quot;" : "\"", f);
        break;
      default: fputc (*s, f);
      }
}

static void
put_escaped (FILE *f, const char *s)
{
  put_html (f, s, true);
}

/* The picture as a data: URI (caller frees), or NULL. */
static char *
picture_uri (const TgPicture *p)
{
  uint8_t *png;
  size_t len;
  char *uri;

  if (!p->rgb || tg__picture_png (p, &png, &len) < 0)
    return NULL;
  uri = tg__data_uri ("image/png", png, len);
  free (png);
  return uri;
}

static void
value_range (const float *d, size_t n, int stride, double *lo, double *hi)
{
  *lo = INFINITY;
  *hi = -INFINITY;
  tg__grid_range (d, n, stride, lo, hi);
  tg__grid_range_done (lo, hi);
}

/* Positions (x, y up, z) seen from above, brighter higher, on black. */
static int
dots_picture (TgPicture *p, const float *pos, int64_t n, int side)
{
  static const uint8_t black[3] = { 16, 16, 24 };
  double lo[3] = { INFINITY, INFINITY, INFINITY }, hi[3] = { -INFINITY, -INFINITY, -INFINITY };

  if (tg__picture_init (p, side, side, black) < 0)
    return TG_ENOMEM;
  for (int64_t i = 0; i < n; i++)
    for (int k = 0; k < 3; k++)
      {
        lo[k] = pos[3 * i + k] < lo[k] ? pos[3 * i + k] : lo[k];
        hi[k] = pos[3 * i + k] > hi[k] ? pos[3 * i + k] : hi[k];
      }
  double span = fmax (hi[0] - lo[0], hi[2] - lo[2]);
  if (n == 0 || !(span > 0.0))
    return 0;
  for (int64_t i = 0; i < n; i++)
    {
      int x = (int) ((pos[3 * i] - lo[0]) / span * (side - 1));
      int y = (int) ((pos[3 * i + 2] - lo[2]) / span * (side - 1));
      double t = hi[1] > lo[1] ? (pos[3 * i + 1] - lo[1]) / (hi[1] - lo[1]) : 1.0;
      uint8_t *o = p->rgb + 3 * ((size_t) y * (size_t) side + (size_t) x);
      o[0] = (uint8_t) (90 + 150 * t);
      o[1] = (uint8_t) (160 + 90 * t);
      o[2] = (uint8_t) (90 + 120 * t);
    }
  return 0;
}

/* The bytes of grid V over WIN (which it contains), as a copy of that
 * window would hold them. */
static uint64_t
window_bytes (const TgValue *v, const TgRegion *win)
{
  uint64_t all = tg_value_bytes (v);

  if (!tg_port_type_is_grid (v->type) || !v->data || !tg_region_contains (&v->region, win))
    return all;
  return all - (tg_region_samples (&v->region) - tg_region_samples (win)) * (uint64_t) v->channels
                 * sizeof (float);
}

void
tg__cli_report_note (TgCliNodeResult *r, const TgRegion *world, const TgRegion *region,
                     TgValue *const *outs, int n)
{
  TgPicture *p = &r->thumb;

  if (r->seen || n < 1 || !tg_region_contains (region, world))
    return;
  r->seen = true;
  r->bytes = 0;
  r->what[0] = '\0';
  for (int k = 0; k < n; k++)
    r->bytes += outs[k] ? window_bytes (outs[k], world) : 0;
  const TgValue *v = outs[0];
  if (v && tg_port_type_is_grid (v->type) && v->data && tg_region_contains (&v->region, world))
    {
      /* The world's window of the grid, read in place. */
      int stride = v->region.width, ch = v->channels;
      const float *at = v->data
                        + ((size_t) (world->row0 - v->region.row0) * (size_t) stride
                           + (size_t) (world->col0 - v->region.col0)) * (size_t) ch;
      double lo = 0.0, hi = 1.0;
      if (v->type == TG_TYPE_HEIGHT)
        {
          lo = INFINITY;
          hi = -INFINITY;
          for (int j = 0; j < world->height; j++)
            tg__grid_range (at + (size_t) j * (size_t) stride * (size_t) ch,
                            (size_t) world->width * (size_t) ch, 1, &lo, &hi);
          tg__grid_range_done (&lo, &hi);
        }
      tg__picture_from_window (p, at, stride, world->width, world->height, ch, lo, hi, false,
                               THUMB);
      snprintf (r->what, sizeof r->what, "%s %dx%d", tg_port_type_name (v->type), world->width,
                world->height);
    }
  else if (v && v->type == TG_TYPE_MESH && tg_value_mesh (v))
    {
      const TgMesh *m = tg_value_mesh (v);
      int64_t nv = 0, nt = 0;
      for (int c = 0; c < m->n_chunks; c++)
        if (m->chunks[c].lod == 0)
          {
            nv += m->chunks[c].n_vertices;
            nt += m->chunks[c].n_indices / 3;
          }
      /* The first chunk of full detail stands for the shape. */
      for (int c = 0; c < m->n_chunks; c++)
        if (m->chunks[c].lod == 0)
          {
            dots_picture (p, m->chunks[c].positions, m->chunks[c].n_vertices, THUMB);
            break;
          }
      snprintf (r->what, sizeof r->what, "mesh: %lld vertices, %lld triangles", (long long) nv,
                (long long) nt);
    }
  else if (v && v->type == TG_TYPE_POINTS && tg_value_points (v))
    {
      const TgPoints *pts = tg_value_points (v);
      dots_picture (p, pts->position, pts->n, THUMB);
      snprintf (r->what, sizeof r->what, "points: %lld instances, %d prototypes",
                (long long) pts->n, pts->n_protos);
    }
  else if (v)
    snprintf (r->what, sizeof r->what, "%s", tg_port_type_name (v->type));
}

void
tg__cli_report_results_free (TgCliNodeResult *r, int n)
{
  for (int i = 0; r && i < n; i++)
    tg__picture_clear (&r[i].thumb);
  free (r);
}

/* The node's editor position from its "ui" block; false when it has none. */
static bool
node_position (const TgGraph *g, int node, double *x, double *y)
{
  const char *ui = tg_graph_node_ui (g, node), *px, *py;
  if (!ui || !(px = strstr (ui, "\"x\"")) || !(py = strstr (ui, "\"y\"")))
    return false;
  px = strchr (px + 3, ':');
  py = strchr (py + 3, ':');
  return px && py && sscanf (px + 1, "%lf", x) == 1 && sscanf (py + 1, "%lf", y) == 1;
}

typedef struct
{
  double x, y, h;
  char *thumb;   /* data: URI or NULL */
  char what[128];
  uint64_t bytes;
} Box;

static double
port_y (const Box *b, int port)
{
  return b->y + HEAD_H + PORT_H * (port + 0.5);
}

static void
draw_graph (FILE *f, const TgGraph *g, Box *boxes, const TgEvalReport *report)
{
  int n = tg_graph_n_nodes (g);
  double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;

  for (int i = 0; i < n; i++)
    {
      x0 = fmin (x0, boxes[i].x);
      y0 = fmin (y0, boxes[i].y);
      x1 = fmax (x1, boxes[i].x + BOX_W);
      y1 = fmax (y1, boxes[i].y + boxes[i].h);
    }
  if (n == 0)
    x0 = y0 = x1 = y1 = 0;
  fprintf (f, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"graph\" width=\"%.0f\" "
           "height=\"%.0f\" viewBox=\"%.0f %.0f %.0f %.0f\">\n",
           x1 - x0 + 40, y1 - y0 + 40, x0 - 20, y0 - 20, x1 - x0 + 40, y1 - y0 + 40);
  for (int l = 0; l < tg_graph_n_links (g); l++)
    {
      const TgLink *k = tg_graph_link (g, l);
      const Box *a = &boxes[k->from_node], *b = &boxes[k->to_node];
      double ax = a->x + BOX_W, ay = port_y (a, k->from_port), bx = b->x, by = port_y (b, k->to_port);
      double dx = fmax (40.0, fabs (bx - ax) / 2);
      fprintf (f, "<path class=\"link\" d=\"M%.1f %.1f C%.1f %.1f %.1f %.1f %.1f %.1f\"/>\n", ax,
               ay, ax + dx, ay, bx - dx, by, bx, by);
    }
  for (int i = 0; i < n; i++)
    {
      const TgNodeDesc *d = tg_graph_node_desc (g, i);
      const Box *b = &boxes[i];
      TgNodeState s = report && i < report->n_nodes ? report->state[i] : TG_NODE_IDLE;
      fprintf (f, "<g class=\"node %s\" id=\"node-", tg_node_state_name (s));
      put_escaped (f, tg_graph_node_id (g, i));
      fprintf (f, "\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" rx=\"6\"/>"
               "<text class=\"id\" x=\"%.1f\" y=\"%.1f\">", b->x, b->y, BOX_W, b->h, b->x + 8,
               b->y + 17);
      put_escaped (f, tg_graph_node_id (g, i));
      fprintf (f, "</text><text class=\"type\" x=\"%.1f\" y=\"%.1f\">", b->x + 8, b->y + 33);
      put_escaped (f, d->type);
      fputs ("</text>", f);
      for (int p = 0; p < d->n_inputs; p++)
        {
          fprintf (f, "<circle class=\"port\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"/>"
                   "<text class=\"port\" x=\"%.1f\" y=\"%.1f\">", b->x, port_y (b, p), b->x + 8,
                   port_y (b, p) + 4);
          put_escaped (f, d->inputs[p].name);
          fputs ("</text>", f);
        }
      for (int p = 0; p < d->n_outputs; p++)
        {
          fprintf (f, "<circle class=\"port\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"/>"
                   "<text class=\"port out\" x=\"%.1f\" y=\"%.1f\">", b->x + BOX_W,
                   port_y (b, p), b->x + BOX_W - 8, port_y (b, p) + 4);
          put_escaped (f, d->outputs[p].name);
          fputs ("</text>", f);
        }
      if (b->thumb)
        fprintf (f, "<image x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" href=\"%s\"/>",
                 b->x + (BOX_W - THUMB) / 2.0, b->h + b->y - THUMB - 8, THUMB, THUMB, b->thumb);
      fputs ("</g>\n", f);
    }
  fputs ("</svg>\n", f);
}

/* Places nodes without a position in columns by their depth. */
static void
layout (const TgGraph *g, Box *boxes)
{
  int n = tg_graph_n_nodes (g);
  int *order = calloc ((size_t) (n > 0 ? n : 1), sizeof *order);
  int *depth = calloc ((size_t) (n > 0 ? n : 1), sizeof *depth);
  int *row = calloc ((size_t) (n > 0 ? n : 1), sizeof *row);
  bool ok = order && depth && row && tg_graph_topo_order (g, order, NULL) == 0;

  for (int k = 0; k < n; k++)
    {
      int i = ok ? order[k] : k;
      const TgNodeDesc *d = tg_graph_node_desc (g, i);
      int ports = d->n_inputs > d->n_outputs ? d->n_inputs : d->n_outputs;
      boxes[i].h = HEAD_H + PORT_H * ports + (boxes[i].thumb ? THUMB + 16 : 8);
      if (!ok)
        continue;
      for (int p = 0; p < d->n_inputs; p++)
        {
          int l = tg_graph_input_link (g, i, p);
          if (l >= 0 && depth[tg_graph_link (g, l)->from_node] + 1 > depth[i])
            depth[i] = depth[tg_graph_link (g, l)->from_node] + 1;
        }
    }
  /* Editor positions are spaced for the editor's smaller boxes: spread
   * them until no two boxes overlap. */
  bool *placed = calloc ((size_t) (n > 0 ? n : 1), sizeof *placed);
  double max_h = 0.0, sx = 1.0, sy = 1.0;
  for (int i = 0; placed && i < n; i++)
    {
      placed[i] = node_position (g, i, &boxes[i].x, &boxes[i].y);
      max_h = fmax (max_h, boxes[i].h);
    }
  for (int i = 0; placed && i < n; i++)
    for (int j = 0; j < n; j++)
      if (i != j && placed[i] && placed[j])
        {
          double dx = fabs (boxes[i].x - boxes[j].x), dy = fabs (boxes[i].y - boxes[j].y);
          if (dx < BOX_W && dy > 0.0 && dy * sy < max_h + 16)
            sy = (max_h + 16) / dy;
          if (dy < 1.0 && dx > 0.0 && dx * sx < BOX_W + 60)
            sx = (BOX_W + 60) / dx;
        }
  for (int i = 0; placed && i < n; i++)
    if (placed[i])
      {
        boxes[i].x *= sx;
        boxes[i].y *= sy;
      }
  for (int k = 0; k < n; k++)
    {
      int i = ok ? order[k] : k;
      if (placed && placed[i])
        continue;
      int c = ok ? depth[i] : 0;
      boxes[i].x = c * (BOX_W + 80);
      boxes[i].y = row[c] * (HEAD_H + 4 * PORT_H + THUMB + 40);
      row[c < n ? c : 0]++;
    }
  free (order);
  free (depth);
  free (row);
  free (placed);
}

/* A thumbnail of the exported grid file F in DIR, or NULL. */
static char *
export_thumbnail (const char *dir, const TgManifestFile *f)
{
  TgImage img;
  TgPicture p = { 0 };
  char path[4096];
  char *uri = NULL;

  if (!tg_grid_format_readable (f->format))
    return NULL;
  snprintf (path, sizeof path, "%s/%s", dir, f->path);
  if (tg_grid_file_read (path, f->format, f->width, f->height, &img, NULL) < 0)
    return NULL;
  double lo = 0.0, hi = tg_grid_format_max (f->format);
  size_t n = (size_t) img.width * (size_t) img.height * (size_t) img.channels;
  if (f->heightmap || strcmp (f->format, "r32") == 0 || strcmp (f->format, "exr") == 0)
    value_range (img.data, n, img.channels, &lo, &hi);
  if (tg__picture_from_grid (&p, img.data, img.width, img.height, img.channels, lo, hi,
                             f->south_first, EXPORT_THUMB) == 0)
    uri = picture_uri (&p);
  tg__picture_clear (&p);
  tg_image_clear (&img);
  return uri;
}

static const char style[] =
  "body{font:14px/1.4 sans-serif;margin:24px;color:#222;background:#fafafa}"
  "h1{font-size:22px}h2{font-size:18px;margin-top:32px}"
  "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;"
  "vertical-align:middle}th{background:#eee}td.num{text-align:right;font-variant-numeric:"
  "tabular-nums}"
  "svg.graph{background:#2b2d31;border-radius:8px;max-width:100%;height:auto}"
  ".node rect{fill:#3c3f45;stroke:#8a8f98;stroke-width:1.5}.node.failed rect{stroke:#e5484d;"
  "stroke-width:3}.node.skipped rect{stroke:#d4a72c}"
  ".node text{fill:#f2f2f2;font:13px sans-serif}.node text.type{fill:#b8bcc4;font-size:11px}"
  ".node text.port{fill:#c8ccd4;font-size:10px}.node text.out{text-anchor:end}"
  "circle.port{fill:#9ecbff}path.link{fill:none;stroke:#9ecbff;stroke-width:2;opacity:.8}"
  "p.failed{color:#b42318}pre{background:#fff;border:1px solid #ccc;padding:8px;overflow:auto;max-height:480px}"
  "img.thumb{image-rendering:pixelated;display:block}";

int
tg__cli_eval_report_write (const TgCliReportInput *in, TgError *err)
{
  const TgGraph *g = in->graph;
  int n = tg_graph_n_nodes (g);
  Box *boxes = calloc ((size_t) (n > 0 ? n : 1), sizeof *boxes);
  TgManifest m;
  char *buf = NULL, size[32];
  size_t len = 0;
  int rc;

  if (!boxes)
    return tg_error_set (err, TG_ENOMEM, "", "out of memory");
  tg_error_clear (err);
  /* A failed build committed nothing: its report has no exports. */
  int failed = tg_eval_report_first_failure (in->report);
  if (failed >= 0)
    memset (&m, 0, sizeof m);
  else if (tg_manifest_read (in->out_dir, &m, err) < 0)
    {
      free (boxes);
      return err->code;
    }
  for (int i = 0; i < n; i++)
    {
      TgNodeState s = i < in->report->n_nodes ? in->report->state[i] : TG_NODE_IDLE;
      const TgCliNodeResult *r = in->results ? &in->results[i] : NULL;
      if ((s == TG_NODE_DONE || s == TG_NODE_CACHED) && r && r->seen)
        {
          boxes[i].bytes = r->bytes;
          snprintf (boxes[i].what, sizeof boxes[i].what, "%s", r->what);
          boxes[i].thumb = picture_uri (&r->thumb);
        }
    }
  layout (g, boxes);

  FILE *f = open_memstream (&buf, &len);
  if (!f)
    {
      free (boxes);
      tg_manifest_clear (&m);
      return tg_error_set (err, TG_ENOMEM, "", "out of memory");
    }
  const TgWorld *w = tg_graph_world_const (g);
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  fputs ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", f);
  put_escaped (f, in->graph_file);
  fprintf (f, " - tgraph build report</title>\n<style>%s</style></head><body>\n<h1>", style);
  put_escaped (f, in->graph_file);
  fprintf (f, "</h1>\n<p>tgraph %s; world %g x %g m, height %g m, %d samples along X, seed %u; "
           "%d threads; built in %.2f s; peak memory estimated %s, ",
           TG_VERSION_STRING, w->size_x, w->size_z, w->height_m, w->resolution, w->seed,
           in->threads, in->seconds, tg__cli_format_bytes (in->estimate_peak, size, sizeof size));
  if (in->estimate_node >= 0 && in->estimate_node < n)
    {
      fputs ("while <code>", f);
      put_escaped (f, tg_graph_node_id (g, in->estimate_node));
      fputs ("</code> runs, ", f);
    }
  fprintf (f, "measured (process peak RSS) %s.  A node's memory below is what its "
           "results hold at the build's resolution.</p>\n",
           tg__cli_format_bytes ((unsigned long long) ru.ru_maxrss * 1024ULL, size, sizeof size));

  if (failed >= 0)
    {
      fputs ("<p class=\"failed\"><strong>The build failed</strong>: node <code>", f);
      put_escaped (f, tg_graph_node_id (g, failed));
      fputs ("</code>: ", f);
      put_escaped (f, in->report->message && in->report->message[failed]
                        ? in->report->message[failed] : "failed");
      fputs ("; nothing was written.</p>\n", f);
    }
  fputs ("<h2>Graph</h2>\n", f);
  draw_graph (f, g, boxes, in->report);

  fputs ("<h2>Nodes</h2>\n<table class=\"nodes\"><tr><th>Node</th><th>Type</th><th>State</th>"
         "<th>Time (s)</th><th>Results' memory</th><th>Output</th><th>Thumbnail</th></tr>\n", f);
  for (int i = 0; i < n; i++)
    {
      TgNodeState s = i < in->report->n_nodes ? in->report->state[i] : TG_NODE_IDLE;
      fputs ("<tr><td><code>", f);
      put_escaped (f, tg_graph_node_id (g, i));
      fputs ("</code></td><td>", f);
      put_escaped (f, tg_graph_node_desc (g, i)->type);
      fprintf (f, "</td><td>%s", tg_node_state_name (s));
      if (in->report->message && in->report->message[i])
        {
          fputs (": ", f);
          put_escaped (f, in->report->message[i]);
        }
      fputs ("</td><td class=\"num\">", f);
      if (in->t_end[i] > 0.0)
        fprintf (f, "%.3f", in->t_end[i] - in->t_start[i]);
      fprintf (f, "</td><td class=\"num\">%s</td><td>",
               boxes[i].bytes ? tg__cli_format_bytes (boxes[i].bytes, size, sizeof size) : "");
      put_escaped (f, boxes[i].what);
      fputs ("</td><td>", f);
      if (boxes[i].thumb)
        fprintf (f, "<img class=\"thumb\" alt=\"\" width=\"%d\" height=\"%d\" src=\"%s\">", THUMB,
                 THUMB, boxes[i].thumb);
      fputs ("</td></tr>\n", f);
    }
  fputs ("</table>\n", f);

  if (failed >= 0)
    goto done;
  fputs ("<h2>Exports</h2>\n<table class=\"exports\"><tr><th>File</th><th>Format</th>"
         "<th>Resolution</th><th>Size</th><th>Node</th><th>SHA-256</th><th>Picture</th></tr>\n",
         f);
  for (int i = 0; i < m.n_files; i++)
    {
      const TgManifestFile *e = &m.files[i];
      char *thumb = export_thumbnail (in->out_dir, e);
      fputs ("<tr><td><code>", f);
      put_escaped (f, e->path);
      fputs ("</code></td><td>", f);
      put_escaped (f, e->format);
      fputs ("</td><td>", f);
      if (e->width > 0)
        fprintf (f, "%dx%d", e->width, e->height);
      fprintf (f, "</td><td class=\"num\">%s</td><td><code>",
               tg__cli_format_bytes (e->bytes, size, sizeof size));
      put_escaped (f, e->node);
      fprintf (f, "</code></td><td><code>%.12s…</code></td><td>", e->sha256);
      if (thumb)
        fprintf (f, "<img class=\"thumb\" alt=\"\" src=\"%s\">", thumb);
      fputs ("</td></tr>\n", f);
      free (thumb);
    }
  fputs ("</table>\n<h2>Manifest</h2>\n<pre class=\"manifest\">", f);
  put_html (f, m.text, false);
  fputs ("</pre>\n", f);
done:
  fputs ("</body></html>\n", f);
  rc = fclose (f) == 0 ? 0 : tg_error_set (err, TG_ENOMEM, "", "out of memory");
  if (rc == 0)
    rc = tg_write_file_atomic (in->path, buf, len, err);
  free (buf);
  for (int i = 0; i < n; i++)
    free (boxes[i].thumb);
  free (boxes);
  tg_manifest_clear (&m);
  return rc;
}
