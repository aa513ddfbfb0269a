/* TgViewer3d: draws terrains, meshes and scatter instances with GL 3.3 core.
 *
 * The terrain needs no vertex buffer: the heights go into one R32F texture
 * and the vertex shader places vertex gl_VertexID of the grid and takes
 * its normal from the neighbouring samples, so a 1025² terrain costs a
 * 4 MB texture plus one index buffer of triangle strips, and vertical
 * exaggeration is a uniform, not a re-upload.  While the camera moves, a
 * big terrain is drawn from a coarser index buffer over the same texture.
 *
 * The scene is drawn into our own framebuffer (4× multisampled when the
 * driver has it) and blitted to the GtkGLArea's; keeping it lets the
 * wheel read back the depth under the pointer for zoom-to-cursor and the
 * tests read back the frame.  GL objects are made in realize (programs)
 * or on the first render after a new scene (buffers), and all of them are
 * deleted in unrealize.
 */
#include "config.h"

#include "tg-viewer3d.h"

#include <epoxy/gl.h>
#include <math.h>
#include <string.h>

#include "tg-gl.h"
#include "tg-gl-math.h"

/* Terrain geometry levels: every 1, 2, 4, ... 32nd sample. */
#define N_LEVELS 6
/* The level is the coarsest whose cells stay below this many pixels
 * where the terrain is nearest to the eye: the shading keeps every
 * sample (normals per fragment), only silhouettes are this coarse. */
#define CELL_PIXELS 3.0
#define N_PALETTE 10
/* Shadow map texels on a side: covers the scene's bounding sphere. */
#define SHADOW_SIZE 2048
/* The finest terrain level drawn into the shadow map has at most this
 * many vertices on a side: a 1025² terrain goes in at every other sample,
 * about three texels per vertex, which keeps shadows sharp enough at a
 * quarter of the cost. */
#define SHADOW_GRID 600
/* The default camera: from the south-south-east, looking down a little
 * more than a third; the top view looks straight down with north up. */
#define HOME_YAW_DEG 20.0
#define HOME_PITCH_DEG 35.0
#define TOP_PITCH_DEG 89.5

enum
{
  PROG_TERRAIN,
  PROG_MESH,
  PROG_INSTANCE,
  PROG_SKY,
  PROG_WATER,
  /* Depth only, from the sun: the same order as the first three. */
  PROG_TERRAIN_SHADOW,
  PROG_MESH_SHADOW,
  PROG_INSTANCE_SHADOW,
  N_PROGS
};

/* Marker colours per prototype (sRGB) when it has no paint colour
 * (tg_viewer3d_set_proto_colours): the 2D viewer's fixed dot colours
 * (tg-image-view.c), so a prototype looks the same in both views. */
static const float palette[N_PALETTE][3] = {
  { 1.000f, 0.824f, 0.247f }, { 0.247f, 0.655f, 1.000f }, { 1.000f, 0.353f, 0.373f },
  { 0.310f, 0.878f, 0.541f }, { 0.780f, 0.490f, 1.000f }, { 1.000f, 0.624f, 0.110f },
  { 0.180f, 0.769f, 0.714f }, { 0.945f, 0.357f, 0.710f }, { 0.710f, 0.894f, 0.549f },
  { 1.000f, 1.000f, 1.000f },
};

/* Colours of the channels of a `layers` value draped over the terrain. */
static const float layer_colours[8][3] = {
  { 0.40f, 0.58f, 0.28f }, { 0.55f, 0.53f, 0.50f }, { 0.78f, 0.70f, 0.50f },
  { 0.95f, 0.96f, 0.98f }, { 0.30f, 0.45f, 0.65f }, { 0.62f, 0.42f, 0.28f },
  { 0.25f, 0.40f, 0.20f }, { 0.80f, 0.45f, 0.30f },
};

typedef struct
{
  GLuint vao, vbo[2], ibo;
  GLsizei n_indices;
} GlChunk;

struct _TgViewer3d
{
  GtkWidget parent_instance;

  GtkGLArea *area;
  GtkLabel *message, *legend;
  GtkToggleButton *wireframe;
  GtkCheckButton *antialias, *shadows, *water, *grid;
  GtkAdjustment *exaggeration, *marker_size, *water_level;
  GtkDropDown *splat_layer;  /* 0: every layer in its colour; k: layer k - 1 */
  GtkStringList *splat_names;

  /* The scene, on the main thread. */
  TgValue *value;
  TgValue *ground;   /* the height drawn as terrain, or NULL */
  TgValue *drape;    /* image, layers or mask coloured over it, or NULL */
  TgWorld world;
  char *id;
  int type;
  guint scene_serial, uploaded_serial;
  guint drape_wanted, drape_serial; /* drape colourings asked for and uploaded */
  guint redraw_serial, drawn_serial; /* frames asked for and drawn */
  gboolean frame_pending;
  double bmin[3], bmax[3]; /* display space, exaggeration 1 */
  gboolean has_bounds;
  float marker_m[N_PALETTE]; /* marker height per prototype (mod N_PALETTE) */
  float marker_rgb[N_PALETTE][3]; /* marker colour per prototype (mod N_PALETTE) */
  double sun[3];           /* towards the sun, display space */
  float height_lo, height_hi; /* the ground's range in metres */

  TgOrbitCamera cam, cam0;
  gboolean panning, moving;
  double pointer_x, pointer_y;

  /* GL state, between realize and unrealize. */
  char *error;
  gboolean gl_ready;
  GLuint prog[N_PROGS];
  GLuint empty_vao, terrain_vao;
  GLuint height_tex, drape_tex;
  int ter_w, ter_h;
  GLuint strip_ibo[N_LEVELS];
  GLsizei strip_count[N_LEVELS];
  int strip_step[N_LEVELS], grid_w[N_LEVELS], n_levels, level;
  GlChunk *chunks;
  int n_chunks;
  GLuint cone_vao, cone_vbo, cone_ibo;
  GLsizei cone_count;
  GLuint inst_vbo[4];
  GLsizei n_inst;
  GLuint shadow_tex, shadow_fbo;
  TgMat4 shadow_vp;
  double shadow_texel;      /* metres per shadow texel */
  double shadow_key[5];     /* sun, exaggeration of the map drawn */
  gboolean shadow_valid;    /* the map shows the uploaded scene */
  double shadow_ms;         /* time to draw it, for TERRANE_DEBUG=timing */
  GLuint fbo, fbo_color, fbo_depth, rfbo, rfbo_color, rfbo_depth;
  int fb_w, fb_h, fb_samples, max_samples;
  TgMat4 last_inv_vp;
  int last_w, last_h;
  gint64 n_triangles;
  gboolean timing;
};

G_DEFINE_FINAL_TYPE (TgViewer3d, tg_viewer3d, GTK_TYPE_WIDGET)

/* --- scene ------------------------------------------------------------------ */

static void
queue_redraw (TgViewer3d *self)
{
  self->redraw_serial++;
  gtk_gl_area_queue_render (self->area);
}

static double
exaggeration (TgViewer3d *self)
{
  return gtk_adjustment_get_value (self->exaggeration);
}

static void
bounds_add (TgViewer3d *self, double x, double y, double z_data)
{
  double p[3] = { x, y, -z_data };

  if (!self->has_bounds)
    {
      memcpy (self->bmin, p, sizeof p);
      memcpy (self->bmax, p, sizeof p);
      self->has_bounds = TRUE;
      return;
    }
  for (int k = 0; k < 3; k++)
    {
      self->bmin[k] = MIN (self->bmin[k], p[k]);
      self->bmax[k] = MAX (self->bmax[k], p[k]);
    }
}

static void
scene_bounds (TgViewer3d *self)
{
  self->has_bounds = FALSE;
  if (self->ground || self->drape)
    {
      const TgValue *g = self->ground ? self->ground : self->drape;
      const TgRegion *r = &g->region;
      float lo = 0, hi = 0;
      if (self->ground)
        {
          lo = G_MAXFLOAT, hi = -G_MAXFLOAT;
          for (gsize k = 0; k < (gsize) r->width * r->height; k++)
            {
              float h = g->data[k * g->channels];
              lo = MIN (lo, h);
              hi = MAX (hi, h);
            }
        }
      self->height_lo = lo * (float) self->world.height_m;
      self->height_hi = hi * (float) self->world.height_m;
      bounds_add (self, tg_region_x (r, 0), lo * self->world.height_m, tg_region_z (r, 0));
      bounds_add (self, tg_region_x (r, r->width - 1), hi * self->world.height_m,
                  tg_region_z (r, r->height - 1));
    }
  if (self->value && self->value->type == TG_TYPE_MESH)
    {
      const TgMesh *m = tg_value_mesh (self->value);
      for (int c = 0; c < m->n_chunks; c++)
        if (m->chunks[c].lod == 0)
          for (int i = 0; i < m->chunks[c].n_vertices; i++)
            {
              const float *p = m->chunks[c].positions + 3 * (gsize) i;
              bounds_add (self, p[0], p[1], p[2]);
            }
    }
  if (self->value && self->value->type == TG_TYPE_POINTS)
    {
      const TgPoints *pts = tg_value_points (self->value);
      for (gint64 i = 0; i < pts->n; i++)
        {
          const float *p = pts->position + 3 * i;
          bounds_add (self, p[0], p[1], p[2]);
        }
    }
}

/* Each prototype's markers a little taller than the mean spacing of its
 * instances (their footprint a little narrower), so a dense carpet of
 * grass and a sparse forest both read: one size for all would hide the
 * sparse ones or pile up the dense ones. */
static void
auto_marker_sizes (TgViewer3d *self, const TgPoints *pts)
{
  double dx = self->bmax[0] - self->bmin[0], dz = self->bmax[2] - self->bmin[2];
  double cap = MAX (sqrt (dx * dx + dz * dz) / 25, 0.5);
  double lo[N_PALETTE][2], hi[N_PALETTE][2];
  gint64 n[N_PALETTE] = { 0 };

  for (gint64 i = 0; i < pts->n; i++)
    {
      int p = (int) ((guint32) pts->proto[i] % N_PALETTE);
      double x = pts->position[3 * i], z = pts->position[3 * i + 2];
      if (!n[p]++)
        lo[p][0] = hi[p][0] = x, lo[p][1] = hi[p][1] = z;
      lo[p][0] = MIN (lo[p][0], x), hi[p][0] = MAX (hi[p][0], x);
      lo[p][1] = MIN (lo[p][1], z), hi[p][1] = MAX (hi[p][1], z);
    }
  for (int p = 0; p < N_PALETTE; p++)
    {
      double area = n[p] ? MAX ((hi[p][0] - lo[p][0]) * (hi[p][1] - lo[p][1]), 1.0) : 1.0;
      self->marker_m[p] = (float) CLAMP (1.4 * sqrt (area / MAX (n[p], 1)), 0.5, cap);
    }
}

/* The metre grid's spacing: a round 1, 2 or 5 × 10^k giving about eight
 * lines across the terrain; 0 when the grid is off or there is no ground. */
static double
grid_spacing (TgViewer3d *self)
{
  double extent, step;

  if (!gtk_check_button_get_active (self->grid) || !(self->ground || self->drape)
      || !self->has_bounds)
    return 0;
  extent = MAX (self->bmax[0] - self->bmin[0], self->bmax[2] - self->bmin[2]);
  step = pow (10, floor (log10 (MAX (extent / 8, 1e-3))));
  if (step * 5 <= extent / 8)
    return step * 5;
  if (step * 2 <= extent / 8)
    return step * 2;
  return step;
}

static void
update_legend (TgViewer3d *self)
{
  double grid = grid_spacing (self);
  g_autoptr (GString) s = g_string_new (NULL);
  const TgValue *v = self->value;

  if (v && v->type == TG_TYPE_POINTS)
    {
      const TgPoints *pts = tg_value_points (v);
      gint64 *count = g_new0 (gint64, MAX (pts->n_protos, 1));
      for (gint64 i = 0; i < pts->n; i++)
        if (pts->proto[i] >= 0 && pts->proto[i] < pts->n_protos)
          count[pts->proto[i]]++;
      for (int p = 0; p < pts->n_protos; p++)
        {
          const float *c = self->marker_rgb[p % N_PALETTE];
          g_autofree char *name = g_markup_escape_text (pts->proto_names[p], -1);
          g_string_append_printf (s, "%s<span foreground=\"#%02x%02x%02x\">●</span> %s %" G_GINT64_FORMAT,
                                  p ? "   " : "", (int) lrintf (c[0] * 255),
                                  (int) lrintf (c[1] * 255), (int) lrintf (c[2] * 255), name,
                                  count[p]);
        }
      if (pts->n_protos == 0)
        g_string_append (s, _("no instances"));
      g_free (count);
    }
  else if (v && v->type == TG_TYPE_MESH)
    {
      const TgMesh *m = tg_value_mesh (v);
      gint64 tris = 0;
      int n = 0;
      for (int c = 0; c < m->n_chunks; c++)
        if (m->chunks[c].lod == 0)
          tris += m->chunks[c].n_indices / 3, n++;
      g_string_printf (s, g_dngettext (NULL, "%d chunk, %lld triangles", "%d chunks, %lld triangles", n),
                       n, (long long) tris);
    }
  else if (self->ground)
    g_string_printf (s, _("%d × %d samples"), self->ground->region.width,
                     self->ground->region.height);
  if (grid > 0)
    {
      g_autofree char *len = grid >= 1000 ? g_strdup_printf (_("%g km"), grid / 1000)
                                          : g_strdup_printf (_("%g m"), grid);
      g_string_append (s, s->len ? "   " : "");
      /* TRANSLATORS: the spacing of the metre grid drawn on the terrain. */
      g_string_append_printf (s, _("grid %s"), len);
    }
  gtk_label_set_markup (self->legend, s->str);
}

/* The splat layer choice lists the layers of a layers output; an edit
 * of the same layers keeps the choice. */
static void
update_splat_names (TgViewer3d *self)
{
  const TgValue *d = self->drape && self->drape->type == TG_TYPE_LAYERS ? self->drape : NULL;
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->splat_names)) - 1;
  guint keep = gtk_drop_down_get_selected (self->splat_layer);
  g_autoptr (GPtrArray) names = g_ptr_array_new ();

  for (int c = 0; d && c < d->channels; c++)
    g_ptr_array_add (names, d->channel_names && d->channel_names[c] ? d->channel_names[c] : "?");
  g_ptr_array_add (names, NULL);
  gtk_string_list_splice (self->splat_names, 1, n, (const char *const *) names->pdata);
  gtk_drop_down_set_selected (self->splat_layer, keep <= names->len - 1 ? keep : 0);
  gtk_widget_set_sensitive (GTK_WIDGET (self->splat_layer), d != NULL);
}

static void
set_message (TgViewer3d *self, const char *text)
{
  gtk_label_set_text (self->message, text ? text : "");
  gtk_widget_set_visible (GTK_WIDGET (self->message), text != NULL);
}

static void
update_message (TgViewer3d *self)
{
  if (self->error)
    {
      g_autofree char *msg = g_strdup_printf (_("The 3D view is not available: %s"), self->error);
      set_message (self, msg);
    }
  else if (!self->value)
    set_message (self, _("Select a node to see its output"));
  else if (self->type == TG_TYPE_FIELD)
    set_message (self, _("A field has no surface of its own: feed it to mesh.isosurface to see it"));
  else if (!self->has_bounds)
    set_message (self, _("Nothing to draw: the output is empty"));
  else
    set_message (self, NULL);
}

void
tg_viewer3d_set_proto_colours (TgViewer3d *self, const float *rgb, int n)
{
  g_return_if_fail (TG_IS_VIEWER3D (self));
  memcpy (self->marker_rgb, palette, sizeof palette);
  /* Prototypes past N_PALETTE share the uniform's slots, as their sizes do. */
  for (int k = 0; k < MIN (n, N_PALETTE); k++)
    memcpy (self->marker_rgb[k], rgb + 3 * k, 3 * sizeof (float));
}

void
tg_viewer3d_set_scene (TgViewer3d *self, TgValue *v, TgValue *terrain, const TgWorld *world,
                       const char *id)
{
  int type = v ? (int) v->type : -1;

  g_return_if_fail (TG_IS_VIEWER3D (self));
  if (v)
    tg_value_ref (v);
  if (self->value)
    tg_value_unref (self->value);
  self->value = v;
  g_clear_pointer (&self->ground, tg_value_unref);
  g_clear_pointer (&self->drape, tg_value_unref);
  if (world)
    self->world = *world;

  /* What stands on what: see the header. */
  if (terrain && (terrain->type != TG_TYPE_HEIGHT && terrain->type != TG_TYPE_MASK))
    terrain = NULL;
  switch (type)
    {
    case TG_TYPE_HEIGHT:
      self->ground = tg_value_ref (v);
      break;
    case TG_TYPE_MASK:
      self->ground = tg_value_ref (terrain ? terrain : v);
      if (terrain)
        self->drape = tg_value_ref (v);
      break;
    case TG_TYPE_IMAGE:
    case TG_TYPE_LAYERS:
      self->ground = terrain ? tg_value_ref (terrain) : NULL;
      self->drape = tg_value_ref (v);
      break;
    case TG_TYPE_POINTS:
      self->ground = terrain ? tg_value_ref (terrain) : NULL;
      break;
    default:
      break;
    }

  update_splat_names (self);
  scene_bounds (self);
  if (type == TG_TYPE_POINTS)
    auto_marker_sizes (self, tg_value_points (v));
  if (g_strcmp0 (id, self->id) || type != self->type)
    self->frame_pending = TRUE;
  g_free (self->id);
  self->id = g_strdup (id);
  self->type = type;
  self->scene_serial++;
  update_legend (self);
  update_message (self);
  queue_redraw (self);
}

void
tg_viewer3d_set_sun (TgViewer3d *self, double azimuth_deg, double elevation_deg)
{
  double az = azimuth_deg * G_PI / 180, el = elevation_deg * G_PI / 180;

  /* Azimuth clockwise from north (+z in the engine, -z on screen). */
  self->sun[0] = sin (az) * cos (el);
  self->sun[1] = sin (el);
  self->sun[2] = -cos (az) * cos (el);
  queue_redraw (self);
}

static void
scaled_bounds (TgViewer3d *self, double bmin[3], double bmax[3])
{
  double e = exaggeration (self);

  memcpy (bmin, self->bmin, sizeof self->bmin);
  memcpy (bmax, self->bmax, sizeof self->bmax);
  bmin[1] *= e;
  bmax[1] *= e;
}

static void
frame_now (TgViewer3d *self, int width, int height)
{
  double bmin[3], bmax[3];

  if (!self->has_bounds)
    return;
  scaled_bounds (self, bmin, bmax);
  tg_orbit_camera_frame (&self->cam, bmin, bmax, height > 0 ? (double) width / height : 1.5);
}

void
tg_viewer3d_frame (TgViewer3d *self)
{
  self->frame_pending = TRUE;
  queue_redraw (self);
}

void
tg_viewer3d_set_wireframe (TgViewer3d *self, gboolean wireframe)
{
  gtk_toggle_button_set_active (self->wireframe, wireframe);
}

void
tg_viewer3d_set_antialias (TgViewer3d *self, gboolean antialias)
{
  gtk_check_button_set_active (self->antialias, antialias);
}

void
tg_viewer3d_set_exaggeration (TgViewer3d *self, double e)
{
  gtk_adjustment_set_value (self->exaggeration, e);
}

void
tg_viewer3d_set_view_angles (TgViewer3d *self, double yaw_deg, double pitch_deg)
{
  self->cam.yaw = yaw_deg * G_PI / 180;
  self->cam.pitch = pitch_deg * G_PI / 180;
  self->frame_pending = TRUE;
  queue_redraw (self);
}

void
tg_viewer3d_set_splat_layer (TgViewer3d *self, int layer)
{
  gtk_drop_down_set_selected (self->splat_layer, (guint) MAX (layer + 1, 0));
}

void
tg_viewer3d_set_shadows (TgViewer3d *self, gboolean shadows)
{
  gtk_check_button_set_active (self->shadows, shadows);
}

void
tg_viewer3d_set_grid (TgViewer3d *self, gboolean grid)
{
  gtk_check_button_set_active (self->grid, grid);
}

void
tg_viewer3d_set_water (TgViewer3d *self, gboolean water, double level_m)
{
  gtk_adjustment_set_value (self->water_level, level_m);
  gtk_check_button_set_active (self->water, water);
}

/* --- GL objects -------------------------------------------------------------- */

/* A cone of unit height and radius 0.3 with its base at y = 0: the
 * marker.  Each side face has its own apex vertex so the shading is
 * smooth around and sharp at the tip. */
static void
make_cone (TgViewer3d *self)
{
  enum { SEG = 12 };
  const float r = 0.3f, hgt = 1.0f, len = sqrtf (hgt * hgt + r * r);
  float v[(3 * SEG + 1) * 6];
  GLushort idx[SEG * 6];
  int nv = 0, ni = 0;

  for (int k = 0; k < SEG; k++)
    {
      float a = 2 * (float) G_PI * k / SEG, am = 2 * (float) G_PI * (k + 0.5f) / SEG;
      float *ring = v + 6 * (gsize) k, *apex = v + 6 * (gsize) (SEG + k), *base = v + 6 * (gsize) (2 * SEG + k);
      ring[0] = r * cosf (a), ring[1] = 0, ring[2] = r * sinf (a);
      ring[3] = hgt / len * cosf (a), ring[4] = r / len, ring[5] = hgt / len * sinf (a);
      apex[0] = 0, apex[1] = hgt, apex[2] = 0;
      apex[3] = hgt / len * cosf (am), apex[4] = r / len, apex[5] = hgt / len * sinf (am);
      memcpy (base, ring, 3 * sizeof (float));
      base[3] = 0, base[4] = -1, base[5] = 0;
    }
  nv = 3 * SEG;
  v[6 * nv + 0] = 0, v[6 * nv + 1] = 0, v[6 * nv + 2] = 0;
  v[6 * nv + 3] = 0, v[6 * nv + 4] = -1, v[6 * nv + 5] = 0;
  nv++;
  for (int k = 0; k < SEG; k++)
    {
      int k1 = (k + 1) % SEG;
      /* Counter-clockwise seen from outside. */
      idx[ni++] = (GLushort) k, idx[ni++] = (GLushort) (SEG + k), idx[ni++] = (GLushort) k1;
      idx[ni++] = (GLushort) (2 * SEG + k), idx[ni++] = (GLushort) (2 * SEG + k1),
      idx[ni++] = (GLushort) (3 * SEG);
    }
  glGenVertexArrays (1, &self->cone_vao);
  glBindVertexArray (self->cone_vao);
  glGenBuffers (1, &self->cone_vbo);
  glBindBuffer (GL_ARRAY_BUFFER, self->cone_vbo);
  glBufferData (GL_ARRAY_BUFFER, (GLsizeiptr) (nv * 6 * sizeof (float)), v, GL_STATIC_DRAW);
  glEnableVertexAttribArray (0);
  glVertexAttribPointer (0, 3, GL_FLOAT, GL_FALSE, 6 * sizeof (float), (void *) 0);
  glEnableVertexAttribArray (1);
  glVertexAttribPointer (1, 3, GL_FLOAT, GL_FALSE, 6 * sizeof (float),
                         (void *) (3 * sizeof (float)));
  glGenBuffers (1, &self->cone_ibo);
  glBindBuffer (GL_ELEMENT_ARRAY_BUFFER, self->cone_ibo);
  glBufferData (GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr) (ni * sizeof (GLushort)), idx,
                GL_STATIC_DRAW);
  self->cone_count = ni;
  glBindVertexArray (0);
}

static void
free_scene_objects (TgViewer3d *self)
{
  glDeleteTextures (1, &self->height_tex);
  glDeleteTextures (1, &self->drape_tex);
  self->height_tex = self->drape_tex = 0;
  glDeleteBuffers (N_LEVELS, self->strip_ibo);
  memset (self->strip_ibo, 0, sizeof self->strip_ibo);
  self->n_levels = 0;
  for (int c = 0; c < self->n_chunks; c++)
    {
      glDeleteVertexArrays (1, &self->chunks[c].vao);
      glDeleteBuffers (2, self->chunks[c].vbo);
      glDeleteBuffers (1, &self->chunks[c].ibo);
    }
  g_clear_pointer (&self->chunks, g_free);
  self->n_chunks = 0;
  glDeleteBuffers (4, self->inst_vbo);
  memset (self->inst_vbo, 0, sizeof self->inst_vbo);
  self->n_inst = 0;
  self->n_triangles = 0;
  self->shadow_valid = FALSE;
}

static void
free_framebuffers (TgViewer3d *self)
{
  GLuint fbos[2] = { self->fbo, self->rfbo };
  GLuint rbs[4] = { self->fbo_color, self->fbo_depth, self->rfbo_color, self->rfbo_depth };

  glDeleteFramebuffers (2, fbos);
  glDeleteRenderbuffers (4, rbs);
  self->fbo = self->rfbo = self->fbo_color = self->fbo_depth = 0;
  self->rfbo_color = self->rfbo_depth = 0;
  self->fb_w = self->fb_h = 0;
}

/* Our framebuffer of W x H, multisampled when asked and possible; the
 * single-sampled twin resolves it for read-back. */
static gboolean
ensure_framebuffers (TgViewer3d *self, int w, int h)
{
  int samples = gtk_check_button_get_active (self->antialias) ? MIN (4, self->max_samples) : 0;

  if (self->fbo && self->fb_w == w && self->fb_h == h && self->fb_samples == samples)
    return TRUE;
  free_framebuffers (self);
  self->fb_samples = samples;
  self->fbo_color = tg_gl_renderbuffer (GL_RGBA8, samples, w, h);
  self->fbo_depth = tg_gl_renderbuffer (GL_DEPTH_COMPONENT24, samples, w, h);
  self->fbo = tg_gl_framebuffer (self->fbo_color, self->fbo_depth);
  if (glCheckFramebufferStatus (GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
    return FALSE;
  self->rfbo_color = tg_gl_renderbuffer (GL_RGBA8, 0, w, h);
  self->rfbo_depth = tg_gl_renderbuffer (GL_DEPTH_COMPONENT24, 0, w, h);
  self->rfbo = tg_gl_framebuffer (self->rfbo_color, self->rfbo_depth);
  if (glCheckFramebufferStatus (GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
    return FALSE;
  self->fb_w = w;
  self->fb_h = h;
  return TRUE;
}

/* The drape's colour at one sample P of V: an image as it is, layers
 * each in its colour by weight (or, with LAYER >= 0, that layer's weight
 * alone as the mask overlay), a mask in red.  The 2D view colours
 * layers with it too, so both views agree. */
void
tg_viewer3d_drape_pixel (const TgValue *v, const float *p, int layer, guint8 *o)
{
  float rgb[3] = { 0, 0, 0 }, a = 1;

  if (v->type == TG_TYPE_LAYERS && layer >= 0 && layer < v->channels)
    {
      p += layer;
      v = NULL;
    }
  switch (v ? (int) v->type : TG_TYPE_MASK)
    {
    case TG_TYPE_IMAGE:
      for (int c = 0; c < 3; c++)
        rgb[c] = p[MIN (c, v->channels - 1)];
      break;
    case TG_TYPE_LAYERS:
      {
        float sum = 0;
        for (int c = 0; c < v->channels; c++)
          {
            float w = CLAMP (p[c], 0.f, 1.f);
            for (int k = 0; k < 3; k++)
              rgb[k] += w * layer_colours[c % 8][k];
            sum += w;
          }
        for (int k = 0; k < 3; k++)
          rgb[k] /= MAX (sum, 1e-6f);
        a = MIN (sum, 1.f);
      }
      break;
    default:
      /* A mask: red over the terrain's own colours, as the 2D overlay. */
      rgb[0] = 0.95f, rgb[1] = 0.20f, rgb[2] = 0.15f;
      a = 0.75f * CLAMP (p[0], 0.f, 1.f);
    }
  for (int k = 0; k < 3; k++)
    o[k] = (guint8) lrintf (CLAMP (rgb[k], 0.f, 1.f) * 255.f);
  o[3] = (guint8) lrintf (a * 255.f);
}

/* The drape's colours into their own texture: a new splat layer choice
 * replaces only this. */
static void
upload_drape (TgViewer3d *self)
{
  int layer = (int) gtk_drop_down_get_selected (self->splat_layer) - 1, dw, dh;
  const TgValue *d;
  guint8 *px;

  glDeleteTextures (1, &self->drape_tex);
  self->drape_tex = 0;
  self->drape_serial = self->drape_wanted;
  if (!self->drape)
    return;
  d = self->drape;
  dw = d->region.width, dh = d->region.height;
  px = g_malloc ((gsize) dw * dh * 4);
  for (int j = 0; j < dh; j++)
    {
      const float *row = tg_value_row (d, j);
      for (int i = 0; i < dw; i++)
        tg_viewer3d_drape_pixel (d, row + (gsize) i * d->channels, layer, px + ((gsize) j * dw + i) * 4);
    }
  glGenTextures (1, &self->drape_tex);
  glBindTexture (GL_TEXTURE_2D, self->drape_tex);
  glTexImage2D (GL_TEXTURE_2D, 0, GL_RGBA8, dw, dh, 0, GL_RGBA, GL_UNSIGNED_BYTE, px);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  g_free (px);
}

static void
upload_terrain (TgViewer3d *self)
{
  const TgValue *g = self->ground ? self->ground : self->drape;
  int w = g->region.width, h = g->region.height, step = 1;
  float *heights = g_new0 (float, (gsize) w * h);

  if (self->ground)
    for (gsize k = 0; k < (gsize) w * h; k++)
      heights[k] = self->ground->data[k * self->ground->channels];
  glGenTextures (1, &self->height_tex);
  glBindTexture (GL_TEXTURE_2D, self->height_tex);
  glPixelStorei (GL_UNPACK_ALIGNMENT, 4);
  glTexImage2D (GL_TEXTURE_2D, 0, GL_R32F, w, h, 0, GL_RED, GL_FLOAT, heights);
  /* Linear for the fragment shader's normals; the vertices use texelFetch. */
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  g_free (heights);
  self->ter_w = w;
  self->ter_h = h;
  upload_drape (self);

  glBindVertexArray (self->terrain_vao);
  self->n_levels = 0;
  for (int level = 0; level < N_LEVELS && (level == 0 || (w - 1) / step >= 16); level++)
    {
      int gw = (w - 2) / step + 2, gh = (h - 2) / step + 2;
      self->strip_ibo[level] = tg_gl_strip_indices (gw, gh, &self->strip_count[level]);
      self->strip_step[level] = step;
      self->grid_w[level] = gw;
      self->n_levels++;
      step *= 2;
    }
  glBindVertexArray (0);
  self->n_triangles += 2 * (gint64) (w - 1) * (h - 1);
}

static void
upload_mesh (TgViewer3d *self, const TgMesh *m)
{
  self->chunks = g_new0 (GlChunk, MAX (m->n_chunks, 1));
  for (int c = 0; c < m->n_chunks; c++)
    {
      const TgMeshChunk *src = &m->chunks[c];
      GlChunk *dst;
      if (src->lod != 0 || src->n_indices <= 0 || src->n_indices > G_MAXINT32)
        continue;
      dst = &self->chunks[self->n_chunks++];
      glGenVertexArrays (1, &dst->vao);
      glBindVertexArray (dst->vao);
      glGenBuffers (2, dst->vbo);
      glBindBuffer (GL_ARRAY_BUFFER, dst->vbo[0]);
      glBufferData (GL_ARRAY_BUFFER, (GLsizeiptr) src->n_vertices * 3 * sizeof (float),
                    src->positions, GL_STATIC_DRAW);
      glEnableVertexAttribArray (0);
      glVertexAttribPointer (0, 3, GL_FLOAT, GL_FALSE, 0, (void *) 0);
      glBindBuffer (GL_ARRAY_BUFFER, dst->vbo[1]);
      glBufferData (GL_ARRAY_BUFFER, (GLsizeiptr) src->n_vertices * 3 * sizeof (float),
                    src->normals, GL_STATIC_DRAW);
      glEnableVertexAttribArray (1);
      glVertexAttribPointer (1, 3, GL_FLOAT, GL_FALSE, 0, (void *) 0);
      glGenBuffers (1, &dst->ibo);
      glBindBuffer (GL_ELEMENT_ARRAY_BUFFER, dst->ibo);
      glBufferData (GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr) src->n_indices * sizeof (guint32),
                    src->indices, GL_STATIC_DRAW);
      dst->n_indices = (GLsizei) src->n_indices;
      self->n_triangles += src->n_indices / 3;
    }
  glBindVertexArray (0);
}

static void
upload_points (TgViewer3d *self, const TgPoints *p)
{
  gint64 n = MIN (p->n, (gint64) G_MAXINT32);
  struct
  {
    const void *data;
    int size, comps;
  } attr[4] = {
    { p->position, sizeof (float), 3 },
    { p->rotation, sizeof (float), 4 },
    { p->scale, sizeof (float), 3 },
    { p->proto, sizeof (gint32), 1 },
  };

  if (n <= 0)
    return;
  glBindVertexArray (self->cone_vao);
  glGenBuffers (4, self->inst_vbo);
  for (int a = 0; a < 4; a++)
    {
      glBindBuffer (GL_ARRAY_BUFFER, self->inst_vbo[a]);
      glBufferData (GL_ARRAY_BUFFER, (GLsizeiptr) n * attr[a].size * attr[a].comps, attr[a].data,
                    GL_STATIC_DRAW);
      glEnableVertexAttribArray (2 + a);
      if (a == 3)
        glVertexAttribIPointer (2 + a, 1, GL_INT, 0, (void *) 0);
      else
        glVertexAttribPointer (2 + a, attr[a].comps, GL_FLOAT, GL_FALSE, 0, (void *) 0);
      glVertexAttribDivisor (2 + a, 1);
    }
  glBindVertexArray (0);
  self->n_inst = (GLsizei) n;
  self->n_triangles += n * self->cone_count / 3;
}

static void
upload_scene (TgViewer3d *self)
{
  free_scene_objects (self);
  if (self->ground || self->drape)
    upload_terrain (self);
  if (self->value && self->value->type == TG_TYPE_MESH)
    upload_mesh (self, tg_value_mesh (self->value));
  if (self->value && self->value->type == TG_TYPE_POINTS)
    upload_points (self, tg_value_points (self->value));
  self->uploaded_serial = self->scene_serial;
}

/* Uploads a new scene, or only the drape's colours when they changed. */
static void
ensure_uploaded (TgViewer3d *self)
{
  if (self->uploaded_serial != self->scene_serial)
    upload_scene (self);
  else if (self->drape_serial != self->drape_wanted && self->height_tex)
    upload_drape (self);
}

/* --- drawing ----------------------------------------------------------------- */

static GLint
loc (GLuint prog, const char *name)
{
  return glGetUniformLocation (prog, name);
}

static void
srgb_to_linear (const float in[3], float out[3])
{
  for (int k = 0; k < 3; k++)
    out[k] = powf (in[k], 2.2f);
}

/* Sets the uniforms every surface program shares. */
static void
common_uniforms (TgViewer3d *self, GLuint p, const TgMat4 *vp, const double eye[3], double radius)
{
  static const float horizon_srgb[3] = { 0.74f, 0.81f, 0.89f };
  float horizon[3];
  double e = exaggeration (self);
  /* Engine space to display space: exaggerate y, mirror z.  The normal
   * matrix is its inverse transpose. */
  TgMat4 model;
  float nmat[9] = { 1, 0, 0, 0, (float) (1 / e), 0, 0, 0, -1 };

  tg_mat4_identity (&model);
  model.m[5] = (float) e;
  model.m[10] = -1;
  srgb_to_linear (horizon_srgb, horizon);
  glUseProgram (p);
  glUniformMatrix4fv (loc (p, "u_view_proj"), 1, GL_FALSE, vp->m);
  glUniformMatrix4fv (loc (p, "u_model"), 1, GL_FALSE, model.m);
  glUniformMatrix3fv (loc (p, "u_normal_mat"), 1, GL_FALSE, nmat);
  glUniform3f (loc (p, "u_sun"), (float) self->sun[0], (float) self->sun[1], (float) self->sun[2]);
  glUniform3f (loc (p, "u_eye"), (float) eye[0], (float) eye[1], (float) eye[2]);
  glUniform1f (loc (p, "u_haze_m"), (float) MAX (radius * 6, 1.0));
  glUniform3fv (loc (p, "u_horizon"), 1, horizon);
  glUniform1i (loc (p, "u_wire"), 0);
  glUniform1i (loc (p, "u_shadow"), 2);
  glUniform1i (loc (p, "u_has_shadow"),
               self->shadow_valid && gtk_check_button_get_active (self->shadows));
  glUniformMatrix4fv (loc (p, "u_light_vp"), 1, GL_FALSE, self->shadow_vp.m);
  glUniform1f (loc (p, "u_shadow_texel"), (float) self->shadow_texel);
}

/* Sets the terrain's uniforms on P (terrain or water program). */
static void
terrain_uniforms (TgViewer3d *self, GLuint p)
{
  const TgRegion *r = self->ground ? &self->ground->region : &self->drape->region;

  glUniform2i (loc (p, "u_size"), self->ter_w, self->ter_h);
  glUniform2f (loc (p, "u_origin"), (float) tg_region_x (r, 0), (float) tg_region_z (r, 0));
  glUniform1f (loc (p, "u_cell"), (float) r->cell);
  glUniform1f (loc (p, "u_height_m"), self->ground ? (float) self->world.height_m : 0.f);
  glActiveTexture (GL_TEXTURE0);
  glBindTexture (GL_TEXTURE_2D, self->height_tex);
  glUniform1i (loc (p, "u_height"), 0);
}

/* Draws what there is with PROG, the terrain, mesh and instance programs
 * (of the colour pass or the shadow pass), the terrain at LEVEL.  Without
 * TERRAIN, only the meshes and instances (the wireframe's line pass: the
 * terrain draws its wireframe itself). */
static void
draw_geometry (TgViewer3d *self, const GLuint prog[3], int level, gboolean terrain)
{
  if (self->height_tex && terrain)
    {
      GLuint p = prog[0];
      glUseProgram (p);
      terrain_uniforms (self, p);
      glActiveTexture (GL_TEXTURE1);
      glBindTexture (GL_TEXTURE_2D, self->drape_tex);
      glUniform1i (loc (p, "u_drape"), 1);
      glUniform1i (loc (p, "u_has_drape"), self->drape_tex != 0);
      if (self->drape)
        glUniform2i (loc (p, "u_drape_size"), self->drape->region.width,
                     self->drape->region.height);
      glUniform1i (loc (p, "u_grid_w"), self->grid_w[level]);
      glUniform1i (loc (p, "u_step"), self->strip_step[level]);
      glBindVertexArray (self->terrain_vao);
      glBindBuffer (GL_ELEMENT_ARRAY_BUFFER, self->strip_ibo[level]);
      glEnable (GL_PRIMITIVE_RESTART);
      glPrimitiveRestartIndex (TG_GL_RESTART_INDEX);
      glDrawElements (GL_TRIANGLE_STRIP, self->strip_count[level], GL_UNSIGNED_INT, (void *) 0);
      glDisable (GL_PRIMITIVE_RESTART);
    }
  if (self->n_chunks)
    {
      glUseProgram (prog[1]);
      glUniform1f (loc (prog[1], "u_emit"), 0.f);
      for (int c = 0; c < self->n_chunks; c++)
        {
          glBindVertexArray (self->chunks[c].vao);
          glDrawElements (GL_TRIANGLES, self->chunks[c].n_indices, GL_UNSIGNED_INT, (void *) 0);
        }
    }
  if (self->n_inst)
    {
      GLuint p = prog[2];
      float size[N_PALETTE];
      for (int k = 0; k < N_PALETTE; k++)
        size[k] = self->marker_m[k] * (float) gtk_adjustment_get_value (self->marker_size);
      glUseProgram (p);
      glUniform1fv (loc (p, "u_marker_m"), N_PALETTE, size);
      glUniform1f (loc (p, "u_emit"), 0.3f);
      glUniform3fv (loc (p, "u_palette"), N_PALETTE, &self->marker_rgb[0][0]);
      glBindVertexArray (self->cone_vao);
      glDrawElementsInstanced (GL_TRIANGLES, self->cone_count, GL_UNSIGNED_SHORT, (void *) 0,
                               self->n_inst);
    }
  glBindVertexArray (0);
}

/* Draws the sun's depth map when the sun, the exaggeration or the scene
 * changed since it was drawn: the camera does not enter into it, so
 * orbiting costs only the lookups.  The terrain goes in at a level of
 * about the map's resolution.  Leaves our framebuffer bound. */
static void
update_shadow_map (TgViewer3d *self, const double centre[3], double radius)
{
  const GLuint prog[3] = { self->prog[PROG_TERRAIN_SHADOW], self->prog[PROG_MESH_SHADOW],
                           self->prog[PROG_INSTANCE_SHADOW] };
  double key[5] = { self->sun[0], self->sun[1], self->sun[2], exaggeration (self), radius };
  int level = 0;
  gint64 t0 = g_get_monotonic_time ();

  if (self->shadow_valid && !memcmp (key, self->shadow_key, sizeof key))
    return;
  memcpy (self->shadow_key, key, sizeof key);
  tg_mat4_light (&self->shadow_vp, self->sun, centre, radius);
  self->shadow_texel = 2 * radius / SHADOW_SIZE;
  while (level + 1 < self->n_levels && self->grid_w[level] > SHADOW_GRID)
    level++;
  glBindFramebuffer (GL_FRAMEBUFFER, self->shadow_fbo);
  glViewport (0, 0, SHADOW_SIZE, SHADOW_SIZE);
  glClearDepth (1);
  glClear (GL_DEPTH_BUFFER_BIT);
  glEnable (GL_DEPTH_TEST);
  glDepthFunc (GL_LEQUAL);
  /* A slope-scaled bias against the surface shadowing itself. */
  glEnable (GL_POLYGON_OFFSET_FILL);
  glPolygonOffset (1.5f, 4.f);
  for (int k = 0; k < 3; k++)
    common_uniforms (self, prog[k], &self->shadow_vp, centre, radius);
  draw_geometry (self, prog, level, TRUE);
  glDisable (GL_POLYGON_OFFSET_FILL);
  if (self->timing)
    {
      glFinish ();
      self->shadow_ms = (g_get_monotonic_time () - t0) / 1000.0;
    }
  glBindFramebuffer (GL_FRAMEBUFFER, self->fbo);
  self->shadow_valid = TRUE;
}

/* The water plane over the terrain's rectangle, blended over what is
 * drawn, without writing depth. */
static void
draw_water (TgViewer3d *self, const TgMat4 *vp, const double eye[3], double radius,
            const float zenith[3])
{
  GLuint p = self->prog[PROG_WATER];

  common_uniforms (self, p, vp, eye, radius);
  terrain_uniforms (self, p);
  glUniform1f (loc (p, "u_level_m"), (float) gtk_adjustment_get_value (self->water_level));
  glUniform1f (loc (p, "u_murk_m"), (float) MAX (self->world.height_m * 0.04, 0.5));
  glUniform3fv (loc (p, "u_zenith"), 1, zenith);
  glEnable (GL_BLEND);
  glBlendFunc (GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
  glDepthMask (GL_FALSE);
  glBindVertexArray (self->empty_vao);
  glDrawArrays (GL_TRIANGLE_STRIP, 0, 4);
  glBindVertexArray (0);
  glDepthMask (GL_TRUE);
  glDisable (GL_BLEND);
}

/* Draws the scene into our framebuffer (bound by the caller), W x H. */
static void
draw_scene (TgViewer3d *self, int w, int h, gboolean coarse)
{
  static const float zenith_srgb[3] = { 0.33f, 0.53f, 0.80f };
  float zenith[3];
  double eye[3], centre[3], radius = 1, bmin[3] = { 0 }, bmax[3] = { 0 };
  TgMat4 view, proj, vp;
  int level = 0, wire_step = 0;
  gboolean wire = gtk_toggle_button_get_active (self->wireframe);
  const GLuint prog[3] = { self->prog[PROG_TERRAIN], self->prog[PROG_MESH],
                           self->prog[PROG_INSTANCE] };

  if (self->has_bounds)
    {
      scaled_bounds (self, bmin, bmax);
      radius = 0;
      for (int k = 0; k < 3; k++)
        {
          centre[k] = (bmin[k] + bmax[k]) / 2;
          radius += (bmax[k] - bmin[k]) * (bmax[k] - bmin[k]) / 4;
        }
      radius = MAX (sqrt (radius), 1e-3);
    }
  else
    centre[0] = centre[1] = centre[2] = 0;
  if (self->frame_pending)
    {
      frame_now (self, w, h);
      self->frame_pending = FALSE;
    }
  tg_orbit_camera_matrices (&self->cam, w, h, centre, radius, &view, &proj);
  tg_mat4_mul (&vp, &proj, &view);
  tg_mat4_invert (&self->last_inv_vp, &vp);
  self->last_w = w;
  self->last_h = h;
  tg_orbit_camera_eye (&self->cam, eye);

  if (self->n_levels > 0)
    {
      /* Pixels per metre where the box is nearest to the eye. */
      const TgRegion *r = self->ground ? &self->ground->region : &self->drape->region;
      double near2 = 0, ppm;
      for (int k = 0; k < 3; k++)
        {
          double d = eye[k] < bmin[k] ? bmin[k] - eye[k] : eye[k] > bmax[k] ? eye[k] - bmax[k] : 0;
          near2 += d * d;
        }
      ppm = h / (2 * MAX (sqrt (near2), 1e-6) * tan (self->cam.fovy / 2));
      while (level + 1 < self->n_levels
             && self->strip_step[level + 1] * r->cell * ppm <= CELL_PIXELS)
        level++;
      /* While the camera moves, one level coarser still. */
      if (coarse && level + 1 < self->n_levels)
        level++;
      /* The terrain's wireframe is never finer than its triangles; the
       * shader makes it coarser where they are small on screen. */
      wire_step = self->strip_step[level];
    }
  self->level = level;
  if (self->has_bounds && gtk_check_button_get_active (self->shadows))
    update_shadow_map (self, centre, radius);

  glViewport (0, 0, w, h);
  glClearColor (0, 0, 0, 1);
  glClearDepth (1);
  glClear (GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);

  /* The sky first, behind everything, without depth. */
  glDisable (GL_DEPTH_TEST);
  glDepthMask (GL_FALSE);
  srgb_to_linear (zenith_srgb, zenith);
  common_uniforms (self, self->prog[PROG_SKY], &vp, eye, radius);
  glUniformMatrix4fv (loc (self->prog[PROG_SKY], "u_inv_view_proj"), 1, GL_FALSE,
                      self->last_inv_vp.m);
  glUniform3fv (loc (self->prog[PROG_SKY], "u_zenith"), 1, zenith);
  glBindVertexArray (self->empty_vao);
  glDrawArrays (GL_TRIANGLES, 0, 3);
  glDepthMask (GL_TRUE);
  glEnable (GL_DEPTH_TEST);
  glDepthFunc (GL_LEQUAL);
  /* The z mirror turns the engine's counter-clockwise faces clockwise. */
  glFrontFace (GL_CW);

  glActiveTexture (GL_TEXTURE2);
  glBindTexture (GL_TEXTURE_2D, self->shadow_tex);
  for (int k = 0; k < 3; k++)
    common_uniforms (self, prog[k], &vp, eye, radius);
  glUseProgram (prog[0]);
  glUniform1f (loc (prog[0], "u_grid_m"), (float) grid_spacing (self));
  glUniform1f (loc (prog[0], "u_wire_step"), wire ? (float) wire_step : 0.f);
  if (wire)
    {
      glEnable (GL_POLYGON_OFFSET_FILL);
      glPolygonOffset (1, 1);
    }
  draw_geometry (self, prog, level, TRUE);
  if (wire)
    {
      glDisable (GL_POLYGON_OFFSET_FILL);
      glPolygonMode (GL_FRONT_AND_BACK, GL_LINE);
      for (int k = 1; k < 3; k++)
        {
          glUseProgram (prog[k]);
          glUniform1i (loc (prog[k], "u_wire"), 1);
        }
      draw_geometry (self, prog, level, FALSE);
      glPolygonMode (GL_FRONT_AND_BACK, GL_FILL);
    }
  if (self->height_tex && self->ground && gtk_check_button_get_active (self->water))
    draw_water (self, &vp, eye, radius, zenith);
  glFrontFace (GL_CCW);
  glUseProgram (0);
}

static void
area_realize (TgViewer3d *self)
{
  g_autoptr (GError) error = NULL;
  static const char *const src[N_PROGS][2] = {
    { "terrain.vert", "terrain.frag" },
    { "mesh.vert", "surface.frag" },
    { "instance.vert", "surface.frag" },
    { "sky.vert", "sky.frag" },
    { "water.vert", "water.frag" },
    { "terrain.vert", "shadow.frag" },
    { "mesh.vert", "shadow.frag" },
    { "instance.vert", "shadow.frag" },
  };

  g_clear_pointer (&self->error, g_free);
  gtk_gl_area_make_current (self->area);
  if (gtk_gl_area_get_error (self->area))
    {
      self->error = g_strdup (gtk_gl_area_get_error (self->area)->message);
      g_printerr ("3d: no GL context: %s\n", self->error);
      update_message (self);
      return;
    }
  for (int p = 0; p < N_PROGS && !error; p++)
    self->prog[p] = tg_gl_program (src[p][0], src[p][1], &error);
  if (error)
    {
      self->error = g_strdup (error->message);
      g_printerr ("3d: %s\n", self->error);
      gtk_gl_area_set_error (self->area, error);
      for (int p = 0; p < N_PROGS; p++)
        glDeleteProgram (self->prog[p]), self->prog[p] = 0;
      update_message (self);
      return;
    }
  glGenVertexArrays (1, &self->empty_vao);
  glGenVertexArrays (1, &self->terrain_vao);
  make_cone (self);
  tg_gl_shadow_map (SHADOW_SIZE, &self->shadow_tex, &self->shadow_fbo);
  glGetIntegerv (GL_MAX_SAMPLES, &self->max_samples);
  {
    /* Software rasterisers shade every sample: 4× MSAA costs them 4×
     * the frame, so they start without it (the setting turns it on). */
    const char *renderer = (const char *) glGetString (GL_RENDERER);
    if (renderer && (strstr (renderer, "llvmpipe") || strstr (renderer, "softpipe")
                     || strstr (renderer, "SwiftShader") || strstr (renderer, "Software")))
      gtk_check_button_set_active (self->antialias, FALSE);
  }
  self->uploaded_serial = self->scene_serial - 1;
  self->gl_ready = TRUE;
  if (self->timing)
    g_printerr ("timing: 3d GL %s, GLSL %s, %s, up to %d× MSAA\n", glGetString (GL_VERSION),
                glGetString (GL_SHADING_LANGUAGE_VERSION), glGetString (GL_RENDERER),
                self->max_samples);
}

static void
area_unrealize (TgViewer3d *self)
{
  gtk_gl_area_make_current (self->area);
  if (!self->gl_ready || gtk_gl_area_get_error (self->area))
    return;
  free_scene_objects (self);
  free_framebuffers (self);
  for (int p = 0; p < N_PROGS; p++)
    glDeleteProgram (self->prog[p]), self->prog[p] = 0;
  glDeleteVertexArrays (1, &self->empty_vao);
  glDeleteVertexArrays (1, &self->terrain_vao);
  glDeleteVertexArrays (1, &self->cone_vao);
  glDeleteTextures (1, &self->shadow_tex);
  glDeleteFramebuffers (1, &self->shadow_fbo);
  self->shadow_tex = self->shadow_fbo = 0;
  glDeleteBuffers (1, &self->cone_vbo);
  glDeleteBuffers (1, &self->cone_ibo);
  self->empty_vao = self->terrain_vao = self->cone_vao = self->cone_vbo = self->cone_ibo = 0;
  self->gl_ready = FALSE;
  if (self->timing)
    g_printerr ("timing: 3d unrealize: GL objects freed (GL error 0x%x)\n", glGetError ());
}

static gboolean
area_render (TgViewer3d *self, GdkGLContext *context)
{
  int scale = gtk_widget_get_scale_factor (GTK_WIDGET (self->area));
  int w = gtk_widget_get_width (GTK_WIDGET (self->area)) * scale;
  int h = gtk_widget_get_height (GTK_WIDGET (self->area)) * scale;
  gint64 t0 = g_get_monotonic_time (), t1;
  GLint target = 0;

  if (!self->gl_ready || w <= 0 || h <= 0)
    {
      glClearColor (0.74f, 0.81f, 0.89f, 1);
      glClear (GL_COLOR_BUFFER_BIT);
      return TRUE;
    }
  glGetIntegerv (GL_DRAW_FRAMEBUFFER_BINDING, &target);
  ensure_uploaded (self);
  t1 = g_get_monotonic_time ();
  if (!ensure_framebuffers (self, w, h))
    {
      g_autoptr (GError) e = g_error_new (G_IO_ERROR, G_IO_ERROR_FAILED,
                                          "no usable framebuffer of %d × %d", w, h);
      g_free (self->error);
      self->error = g_strdup (e->message);
      gtk_gl_area_set_error (self->area, e);
      update_message (self);
      return TRUE;
    }
  glBindFramebuffer (GL_FRAMEBUFFER, self->fbo);
  draw_scene (self, w, h, self->moving);
  glBindFramebuffer (GL_READ_FRAMEBUFFER, self->fbo);
  glBindFramebuffer (GL_DRAW_FRAMEBUFFER, (GLuint) target);
  glBlitFramebuffer (0, 0, w, h, 0, 0, w, h, GL_COLOR_BUFFER_BIT, GL_NEAREST);
  glBindFramebuffer (GL_FRAMEBUFFER, (GLuint) target);
  self->drawn_serial = self->redraw_serial;
  if (self->timing)
    {
      gint64 t2;
      glFinish ();
      t2 = g_get_monotonic_time ();
      g_printerr ("timing: 3d frame %s %d×%d %d× MSAA%s: %.1f ms, upload %.1f ms, %" G_GINT64_FORMAT
                  " triangles, terrain level %d, shadow map %.1f ms\n",
                  self->id ? self->id : "-", w, h, self->fb_samples,
                  self->moving ? " moving" : "", (t2 - t1) / 1000.0,
                  (t1 - t0) / 1000.0, self->n_triangles, self->level, self->shadow_ms);
      self->shadow_ms = 0;
    }
  return TRUE;
}

/* --- read-back --------------------------------------------------------------- */

/* Binds for reading the single-sampled copy of the last frame's buffer
 * BITS within the rectangle; returns FALSE when there is no frame. */
static gboolean
bind_readback (TgViewer3d *self, GLbitfield bits, int x0, int y0, int x1, int y1)
{
  if (!self->gl_ready || !self->fbo || self->last_w != self->fb_w || self->last_h != self->fb_h)
    return FALSE;
  gtk_gl_area_make_current (self->area);
  if (gtk_gl_area_get_error (self->area))
    return FALSE;
  if (self->fb_samples > 0)
    {
      /* A multisampled source needs equal rectangles. */
      glBindFramebuffer (GL_READ_FRAMEBUFFER, self->fbo);
      glBindFramebuffer (GL_DRAW_FRAMEBUFFER, self->rfbo);
      glBlitFramebuffer (x0, y0, x1, y1, x0, y0, x1, y1, bits, GL_NEAREST);
      glBindFramebuffer (GL_READ_FRAMEBUFFER, self->rfbo);
    }
  else
    glBindFramebuffer (GL_READ_FRAMEBUFFER, self->fbo);
  return TRUE;
}

/* The surface point under widget position (X, Y) in the last frame. */
static gboolean
pick (TgViewer3d *self, double x, double y, double out[3])
{
  int scale = gtk_widget_get_scale_factor (GTK_WIDGET (self->area));
  int px = (int) floor (x * scale), py = (int) floor (y * scale), gy;
  float depth = 1;

  if (px < 0 || py < 0 || px >= self->last_w || py >= self->last_h)
    return FALSE;
  gy = self->last_h - 1 - py;
  if (!bind_readback (self, GL_DEPTH_BUFFER_BIT, px, gy, px + 1, gy + 1))
    return FALSE;
  glReadPixels (px, gy, 1, 1, GL_DEPTH_COMPONENT, GL_FLOAT, &depth);
  glBindFramebuffer (GL_FRAMEBUFFER, 0);
  if (depth >= 1.0f)
    return FALSE;
  tg_unproject_depth (&self->last_inv_vp, px + 0.5, py + 0.5, depth, self->last_w, self->last_h,
                      out);
  return TRUE;
}

gboolean
tg_viewer3d_save_png (TgViewer3d *self, const char *path, GError **error)
{
  int w = self->last_w, h = self->last_h;
  g_autoptr (GBytes) bytes = NULL;
  g_autoptr (GdkTexture) tex = NULL;
  guint8 *px;

  if (self->error || !bind_readback (self, GL_COLOR_BUFFER_BIT, 0, 0, w, h))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "the 3D view has drawn nothing%s%s",
                   self->error ? ": " : "", self->error ? self->error : "");
      return FALSE;
    }
  px = g_malloc ((gsize) w * h * 4);
  glPixelStorei (GL_PACK_ALIGNMENT, 4);
  /* GL rows run bottom up. */
  for (int j = 0; j < h; j++)
    glReadPixels (0, h - 1 - j, w, 1, GL_RGBA, GL_UNSIGNED_BYTE, px + (gsize) j * w * 4);
  glBindFramebuffer (GL_FRAMEBUFFER, 0);
  for (gsize k = 0; k < (gsize) w * h; k++)
    px[4 * k + 3] = 255;
  bytes = g_bytes_new_take (px, (gsize) w * h * 4);
  tex = gdk_memory_texture_new (w, h, GDK_MEMORY_R8G8B8A8, bytes, (gsize) w * 4);
  if (!gdk_texture_save_to_png (tex, path))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "could not write %s", path);
      return FALSE;
    }
  return TRUE;
}

/* Draws a frame off screen now, into our framebuffer. */
static gboolean
draw_offscreen (TgViewer3d *self)
{
  int scale = gtk_widget_get_scale_factor (GTK_WIDGET (self->area));
  int w = gtk_widget_get_width (GTK_WIDGET (self->area)) * scale;
  int h = gtk_widget_get_height (GTK_WIDGET (self->area)) * scale;

  if (!self->gl_ready || w <= 0 || h <= 0)
    return FALSE;
  gtk_gl_area_make_current (self->area);
  ensure_uploaded (self);
  if (!ensure_framebuffers (self, w, h))
    return FALSE;
  glBindFramebuffer (GL_FRAMEBUFFER, self->fbo);
  draw_scene (self, w, h, FALSE);
  glBindFramebuffer (GL_FRAMEBUFFER, 0);
  return TRUE;
}

gboolean
tg_viewer3d_zoom_at (TgViewer3d *self, double factor, double fx, double fy, double *drift)
{
  double x = fx * gtk_widget_get_width (GTK_WIDGET (self->area));
  double y = fy * gtk_widget_get_height (GTK_WIDGET (self->area));
  double p[3], q[3], eye[3];

  if (!pick (self, x, y, p))
    return FALSE;
  tg_orbit_camera_zoom_to (&self->cam, factor, p);
  if (!draw_offscreen (self) || !pick (self, x, y, q))
    return FALSE;
  tg_orbit_camera_eye (&self->cam, eye);
  *drift = sqrt ((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1])
                 + (p[2] - q[2]) * (p[2] - q[2]))
           / MAX (sqrt ((p[0] - eye[0]) * (p[0] - eye[0]) + (p[1] - eye[1]) * (p[1] - eye[1])
                        + (p[2] - eye[2]) * (p[2] - eye[2])),
                  1e-9);
  queue_redraw (self);
  return TRUE;
}

gboolean
tg_viewer3d_benchmark (TgViewer3d *self, int n, double *mean_ms, double *min_ms, GError **error)
{
  TgOrbitCamera saved = self->cam;
  double sum = 0, best = G_MAXDOUBLE;

  if (self->error || !draw_offscreen (self))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "the 3D view cannot draw%s%s",
                   self->error ? ": " : "", self->error ? self->error : "");
      return FALSE;
    }
  glFinish ();
  for (int k = 0; k < n; k++)
    {
      gint64 t0 = g_get_monotonic_time ();
      double ms;
      tg_orbit_camera_rotate (&self->cam, 2 * G_PI / 180, 0);
      draw_offscreen (self);
      glFinish ();
      ms = (g_get_monotonic_time () - t0) / 1000.0;
      sum += ms;
      best = MIN (best, ms);
    }
  self->cam = saved;
  *mean_ms = sum / MAX (n, 1);
  *min_ms = best;
  queue_redraw (self);
  return TRUE;
}

gboolean
tg_viewer3d_is_drawn (TgViewer3d *self)
{
  return self->error != NULL || (self->gl_ready && self->drawn_serial == self->redraw_serial);
}

const char *
tg_viewer3d_get_error (TgViewer3d *self)
{
  return self->error;
}

/* --- input ------------------------------------------------------------------- */

static void
drag_begin (TgViewer3d *self, double x, double y, GtkGestureDrag *g)
{
  GdkModifierType mods
      = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (g));

  self->cam0 = self->cam;
  self->panning = gtk_gesture_single_get_current_button (GTK_GESTURE_SINGLE (g)) == 2
                  || (mods & GDK_SHIFT_MASK);
  self->moving = TRUE;
  gtk_widget_grab_focus (GTK_WIDGET (self->area));
}

static void
drag_update (TgViewer3d *self, double dx, double dy, GtkGestureDrag *g)
{
  self->cam = self->cam0;
  if (self->panning)
    tg_orbit_camera_pan (&self->cam, dx, dy, gtk_widget_get_height (GTK_WIDGET (self->area)));
  else
    /* The scene turns with the pointer: a drag to the right turns it
     * anticlockwise seen from above, as in Blender and Gaea. */
    tg_orbit_camera_rotate (&self->cam, -dx * 0.008, dy * 0.008);
  queue_redraw (self);
}

static void
drag_end (TgViewer3d *self, double dx, double dy, GtkGestureDrag *g)
{
  self->moving = FALSE;
  queue_redraw (self);
}

static void
click_pressed (TgViewer3d *self, int n_press, double x, double y, GtkGestureClick *g)
{
  double p[3], eye[3], d[3], len;

  gtk_widget_grab_focus (GTK_WIDGET (self->area));
  if (n_press != 2 || !pick (self, x, y, p))
    return;
  /* Orbit around the point from where the eye is now. */
  tg_orbit_camera_eye (&self->cam, eye);
  for (int k = 0; k < 3; k++)
    d[k] = eye[k] - p[k];
  len = sqrt (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  if (len <= 0)
    return;
  memcpy (self->cam.target, p, sizeof p);
  self->cam.distance = len;
  self->cam.pitch = asin (CLAMP (d[1] / len, -1, 1));
  self->cam.yaw = atan2 (d[0], d[2]);
  queue_redraw (self);
}

static void
pointer_motion (TgViewer3d *self, double x, double y)
{
  self->pointer_x = x;
  self->pointer_y = y;
}

/* The view takes the keys while the pointer is over it, as 3D views do,
 * unless the user is typing in an entry. */
static void
pointer_enter (TgViewer3d *self, double x, double y)
{
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));
  GtkWidget *focus = root ? gtk_root_get_focus (root) : NULL;

  pointer_motion (self, x, y);
  if (!focus || !GTK_IS_EDITABLE (focus))
    gtk_widget_grab_focus (GTK_WIDGET (self->area));
}

static void
view_top (TgViewer3d *self)
{
  tg_viewer3d_set_view_angles (self, 0, TOP_PITCH_DEG);
}

static void
view_home (TgViewer3d *self)
{
  tg_viewer3d_set_view_angles (self, HOME_YAW_DEG, HOME_PITCH_DEG);
}

static void
toggle_check (GtkCheckButton *b)
{
  gtk_check_button_set_active (b, !gtk_check_button_get_active (b));
}

static gboolean
scrolled (TgViewer3d *self, double dx, double dy)
{
  double p[3], factor = pow (1.2, dy), radius = 1;

  if (self->has_bounds)
    radius = MAX (self->bmax[0] - self->bmin[0], self->bmax[2] - self->bmin[2]);
  /* Neither through the surface nor out of sight. */
  if (self->cam.distance * factor < radius * 1e-4 || self->cam.distance * factor > radius * 50)
    return TRUE;
  if (pick (self, self->pointer_x, self->pointer_y, p))
    tg_orbit_camera_zoom_to (&self->cam, factor, p);
  else
    self->cam.distance *= factor;
  queue_redraw (self);
  return TRUE;
}

static gboolean
key_pressed (TgViewer3d *self, guint keyval, guint keycode, GdkModifierType state)
{
  if (state & (GDK_CONTROL_MASK | GDK_ALT_MASK))
    return FALSE;
  switch (keyval)
    {
    case GDK_KEY_f:
    case GDK_KEY_F:
      /* From where the user has turned to, at a sensible height. */
      tg_viewer3d_set_view_angles (self, self->cam.yaw * 180 / G_PI, HOME_PITCH_DEG);
      return TRUE;
    case GDK_KEY_Home:
    case GDK_KEY_KP_Home:
      view_home (self);
      return TRUE;
    case GDK_KEY_t:
    case GDK_KEY_T:
    case GDK_KEY_KP_7:
      view_top (self);
      return TRUE;
    case GDK_KEY_g:
    case GDK_KEY_G:
      toggle_check (self->grid);
      return TRUE;
    case GDK_KEY_s:
    case GDK_KEY_S:
      toggle_check (self->shadows);
      return TRUE;
    case GDK_KEY_w:
    case GDK_KEY_W:
      gtk_toggle_button_set_active (self->wireframe,
                                    !gtk_toggle_button_get_active (self->wireframe));
      return TRUE;
    default:
      return FALSE;
    }
}

static void
option_changed (TgViewer3d *self)
{
  queue_redraw (self);
}

static void
splat_layer_changed (TgViewer3d *self)
{
  self->drape_wanted++;
  queue_redraw (self);
}

static void
grid_toggled (TgViewer3d *self)
{
  update_legend (self);
  queue_redraw (self);
}

/* Water turned on at a level outside the ground's heights would show
 * nothing or drown it all: start a quarter of the way up instead. */
static void
water_toggled (TgViewer3d *self)
{
  double level = gtk_adjustment_get_value (self->water_level);

  if (gtk_check_button_get_active (self->water) && self->ground
      && (level <= self->height_lo || level >= self->height_hi))
    gtk_adjustment_set_value (self->water_level,
                              round (self->height_lo + 0.25 * (self->height_hi - self->height_lo)));
  queue_redraw (self);
}

static void
frame_clicked (TgViewer3d *self)
{
  tg_viewer3d_frame (self);
}

/* --- class ------------------------------------------------------------------- */

static void
tg_viewer3d_dispose (GObject *object)
{
  TgViewer3d *self = TG_VIEWER3D (object);

  g_clear_pointer (&self->value, tg_value_unref);
  g_clear_pointer (&self->ground, tg_value_unref);
  g_clear_pointer (&self->drape, tg_value_unref);
  gtk_widget_dispose_template (GTK_WIDGET (self), TG_TYPE_VIEWER3D);
  G_OBJECT_CLASS (tg_viewer3d_parent_class)->dispose (object);
}

static void
tg_viewer3d_finalize (GObject *object)
{
  TgViewer3d *self = TG_VIEWER3D (object);

  g_free (self->id);
  g_free (self->error);
  G_OBJECT_CLASS (tg_viewer3d_parent_class)->finalize (object);
}

static void
tg_viewer3d_class_init (TgViewer3dClass *klass)
{
  GtkWidgetClass *wc = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = tg_viewer3d_dispose;
  G_OBJECT_CLASS (klass)->finalize = tg_viewer3d_finalize;
  gtk_widget_class_set_layout_manager_type (wc, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_template_from_resource (wc, "/io/github/terrane/Terrane/tg-viewer3d.ui");
  gtk_widget_class_bind_template_child (wc, TgViewer3d, area);
  gtk_widget_class_bind_template_child (wc, TgViewer3d, message);
  gtk_widget_class_bind_template_child (wc, TgViewer3d, legend);
  gtk_widget_class_bind_template_child (wc, TgViewer3d, wireframe);
  gtk_widget_class_bind_template_child (wc, TgViewer3d, antialias);
  gtk_widget_class_bind_template_child (wc, TgViewer3d, shadows);
  gtk_widget_class_bind_template_child (wc, TgViewer3d, water);
  gtk_widget_class_bind_template_child (wc, TgViewer3d, water_level);
  gtk_widget_class_bind_template_child (wc, TgViewer3d, grid);
  gtk_widget_class_bind_template_child (wc, TgViewer3d, splat_layer);
  gtk_widget_class_bind_template_child (wc, TgViewer3d, splat_names);
  gtk_widget_class_bind_template_child (wc, TgViewer3d, exaggeration);
  gtk_widget_class_bind_template_child (wc, TgViewer3d, marker_size);
  gtk_widget_class_bind_template_callback (wc, area_realize);
  gtk_widget_class_bind_template_callback (wc, area_unrealize);
  gtk_widget_class_bind_template_callback (wc, area_render);
  gtk_widget_class_bind_template_callback (wc, drag_begin);
  gtk_widget_class_bind_template_callback (wc, drag_update);
  gtk_widget_class_bind_template_callback (wc, drag_end);
  gtk_widget_class_bind_template_callback (wc, click_pressed);
  gtk_widget_class_bind_template_callback (wc, pointer_motion);
  gtk_widget_class_bind_template_callback (wc, pointer_enter);
  gtk_widget_class_bind_template_callback (wc, view_top);
  gtk_widget_class_bind_template_callback (wc, view_home);
  gtk_widget_class_bind_template_callback (wc, grid_toggled);
  gtk_widget_class_bind_template_callback (wc, splat_layer_changed);
  gtk_widget_class_bind_template_callback (wc, water_toggled);
  gtk_widget_class_bind_template_callback (wc, scrolled);
  gtk_widget_class_bind_template_callback (wc, key_pressed);
  gtk_widget_class_bind_template_callback (wc, option_changed);
  gtk_widget_class_bind_template_callback (wc, frame_clicked);
  gtk_widget_class_set_css_name (wc, "tgviewer3d");
}

static void
tg_viewer3d_init (TgViewer3d *self)
{
  const char *debug = g_getenv ("TERRANE_DEBUG");

  gtk_widget_init_template (GTK_WIDGET (self));
  memcpy (self->marker_rgb, palette, sizeof palette);
  gtk_gl_area_set_required_version (self->area, 3, 3);
  self->timing = debug && strstr (debug, "timing");
  self->type = -1;
  self->cam.fovy = 40 * G_PI / 180;
  self->cam.yaw = HOME_YAW_DEG * G_PI / 180;
  self->cam.pitch = HOME_PITCH_DEG * G_PI / 180;
  self->cam.distance = 1000;
  tg_viewer3d_set_sun (self, 315, 40);
}
