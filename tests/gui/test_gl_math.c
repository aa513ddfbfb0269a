/* The 3D viewer's camera without a display: matrices invert and
 * round-trip through projection, zoom-to-point keeps the point on its
 * pixel, a pan moves the scene with the pointer, framing fits every
 * corner of the box tightly, the pitch stays off the poles, and the
 * sun's shadow matrix holds the scene. */
#include "tg-gl-math.h"

#include <math.h>

#include "tgtest.h"

static const double bmin[3] = { -2048, -30, -1024 }, bmax[3] = { 2048, 1170, 1024 };

static void
camera (TgOrbitCamera *c)
{
  c->target[0] = 100, c->target[1] = 200, c->target[2] = -300;
  c->distance = 5000;
  c->yaw = 0.35;
  c->pitch = 0.6;
  c->fovy = 40 * M_PI / 180;
}

static void
view_proj (const TgOrbitCamera *c, int w, int h, TgMat4 *vp)
{
  TgMat4 view, proj;
  double centre[3] = { 0, 570, 0 };

  tg_orbit_camera_matrices (c, w, h, centre, 2400, &view, &proj);
  tg_mat4_mul (vp, &proj, &view);
}

/* Pixel position (origin top left) of world point P. */
static void
to_pixel (const TgMat4 *vp, const double p[3], int w, int h, double px[2])
{
  double ndc[3];

  tg_mat4_project (vp, p, ndc);
  px[0] = (ndc[0] + 1) / 2 * w;
  px[1] = (1 - ndc[1]) / 2 * h;
}

static void
test_invert_and_unproject (void)
{
  TgOrbitCamera c;
  TgMat4 vp, inv, id;
  double p[3] = { 321, 45, -678 }, px[2], depth, ndc[3], q[3];

  camera (&c);
  view_proj (&c, 800, 600, &vp);
  TG_CHECK_INT_EQ (tg_mat4_invert (&inv, &vp), 0);
  tg_mat4_mul (&id, &inv, &vp);
  for (int k = 0; k < 16; k++)
    TG_CHECK_NEAR (id.m[k], k % 5 == 0 ? 1 : 0, 5e-4); /* float, translations of km */
  to_pixel (&vp, p, 800, 600, px);
  tg_mat4_project (&vp, p, ndc);
  depth = (ndc[2] + 1) / 2;
  tg_unproject_depth (&inv, px[0], px[1], depth, 800, 600, q);
  for (int k = 0; k < 3; k++)
    TG_CHECK_NEAR (q[k], p[k], 0.5); /* float matrices, 5 km away */
  {
    TgMat4 singular = { { 0 } };
    TG_CHECK_INT_EQ (tg_mat4_invert (&inv, &singular), -1);
  }
}

static void
test_zoom_keeps_point_on_pixel (void)
{
  TgOrbitCamera c;
  TgMat4 vp;
  double p[3] = { -700, 80, 450 }, before[2], after[2], d0;

  camera (&c);
  d0 = c.distance;
  view_proj (&c, 1000, 700, &vp);
  to_pixel (&vp, p, 1000, 700, before);
  tg_orbit_camera_zoom_to (&c, 0.5, p);
  TG_CHECK_NEAR (c.distance, d0 * 0.5, 1e-9);
  view_proj (&c, 1000, 700, &vp);
  to_pixel (&vp, p, 1000, 700, after);
  TG_CHECK_NEAR (after[0], before[0], 0.05);
  TG_CHECK_NEAR (after[1], before[1], 0.05);
  /* Zooming towards the target leaves the target where it was. */
  {
    double t[3] = { c.target[0], c.target[1], c.target[2] };
    tg_orbit_camera_zoom_to (&c, 1.7, t);
    for (int k = 0; k < 3; k++)
      TG_CHECK_NEAR (c.target[k], t[k], 1e-9);
  }
}

static void
test_pan_follows_pointer (void)
{
  TgOrbitCamera c;
  TgMat4 vp;
  double t[3], px[2];

  camera (&c);
  for (int k = 0; k < 3; k++)
    t[k] = c.target[k];
  tg_orbit_camera_pan (&c, 120, -45, 600);
  view_proj (&c, 800, 600, &vp);
  to_pixel (&vp, t, 800, 600, px);
  /* The old target was at the centre; it followed the pointer. */
  TG_CHECK_NEAR (px[0], 400 + 120, 0.5);
  TG_CHECK_NEAR (px[1], 300 - 45, 0.5);
}

static void
test_frame_fits_box (void)
{
  for (int a = 0; a < 3; a++)
    {
      int w = a == 0 ? 1200 : a == 1 ? 600 : 800, h = a == 0 ? 700 : a == 1 ? 900 : 800;
      TgOrbitCamera c;
      TgMat4 vp, view, proj;
      double extent = 0;
      camera (&c);
      tg_orbit_camera_frame (&c, bmin, bmax, (double) w / h);
      {
        double centre[3] = { 0, 570, 0 };
        tg_orbit_camera_matrices (&c, w, h, centre, 2400, &view, &proj);
        tg_mat4_mul (&vp, &proj, &view);
      }
      for (int k = 0; k < 8; k++)
        {
          double p[3], ndc[3];
          for (int i = 0; i < 3; i++)
            p[i] = (k >> i) & 1 ? bmax[i] : bmin[i];
          tg_mat4_project (&vp, p, ndc);
          TG_CHECK_MSG (fabs (ndc[0]) <= 0.95 && fabs (ndc[1]) <= 0.95 && fabs (ndc[2]) < 1,
                        "aspect %d: corner %d at %.3f %.3f %.3f", a, k, ndc[0], ndc[1], ndc[2]);
          extent = fmax (extent, fmax (fabs (ndc[0]), fabs (ndc[1])));
        }
      /* Tight: some corner reaches the margin. */
      TG_CHECK_MSG (extent > 0.85, "aspect %d: the box spans only %.3f", a, extent);
    }
}

static void
test_pitch_clamped (void)
{
  TgOrbitCamera c;

  camera (&c);
  tg_orbit_camera_rotate (&c, 0.1, 10);
  TG_CHECK (c.pitch < M_PI / 2 && c.pitch > 1.5);
  tg_orbit_camera_rotate (&c, 0, -20);
  TG_CHECK (c.pitch > -M_PI / 2 && c.pitch < -1.5);
}

/* The sun's matrix holds the whole scene sphere, and what is nearer the
 * sun is nearer in depth, whatever the sun's height (overhead too). */
static void
test_light_holds_scene (void)
{
  const double centre[3] = { 100, 500, -200 }, radius = 3000;
  const double suns[3][3] = { { 0.6, 0.64, -0.48 }, { 0, 1, 0 }, { -0.8, 0.6, 0 } };

  for (int s = 0; s < 3; s++)
    {
      TgMat4 m;
      double p[3], q[3], a[3], b[3];
      tg_mat4_light (&m, suns[s], centre, radius);
      for (int k = 0; k < 3; k++)
        {
          p[k] = centre[k] + suns[s][k] * radius * 0.9;
          q[k] = centre[k] - suns[s][k] * radius * 0.9;
        }
      tg_mat4_project (&m, p, a);
      tg_mat4_project (&m, q, b);
      TG_CHECK (a[2] > -1 && a[2] < b[2] && b[2] < 1);
      TG_CHECK_NEAR (a[0], 0, 1e-4);
      TG_CHECK_NEAR (a[1], 0, 1e-4);
      /* A point on the sphere across the light's rays stays inside. */
      p[0] = centre[0] + suns[s][1] * radius * 0.99, p[1] = centre[1] - suns[s][0] * radius * 0.99;
      p[2] = centre[2];
      tg_mat4_project (&m, p, a);
      TG_CHECK (fabs (a[0]) < 1 && fabs (a[1]) < 1 && fabs (a[2]) < 1);
    }
}

int
main (void)
{
  TG_RUN (test_invert_and_unproject);
  TG_RUN (test_zoom_keeps_point_on_pixel);
  TG_RUN (test_pan_follows_pointer);
  TG_RUN (test_frame_fits_box);
  TG_RUN (test_pitch_clamped);
  TG_RUN (test_light_holds_scene);
  return tgtest_result ();
}
