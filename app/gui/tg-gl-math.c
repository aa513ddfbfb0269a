/* Matrices and the orbit camera of the 3D viewer.
 *
 * Double precision for the camera state (a 16 km world seen from a metre
 * away still orbits smoothly); single precision only in the matrices
 * handed to GL.
 */
#include "tg-gl-math.h"

#include <math.h>
#include <string.h>

void
tg_mat4_identity (TgMat4 *r)
{
  memset (r, 0, sizeof *r);
  r->m[0] = r->m[5] = r->m[10] = r->m[15] = 1;
}

void
tg_mat4_mul (TgMat4 *r, const TgMat4 *a, const TgMat4 *b)
{
  TgMat4 t;

  for (int c = 0; c < 4; c++)
    for (int row = 0; row < 4; row++)
      {
        double s = 0;
        for (int k = 0; k < 4; k++)
          s += (double) a->m[k * 4 + row] * b->m[c * 4 + k];
        t.m[c * 4 + row] = (float) s;
      }
  *r = t;
}

void
tg_mat4_perspective (TgMat4 *r, double fovy_rad, double aspect, double znear, double zfar)
{
  double f = 1.0 / tan (fovy_rad / 2);

  memset (r, 0, sizeof *r);
  r->m[0] = (float) (f / aspect);
  r->m[5] = (float) f;
  r->m[10] = (float) ((zfar + znear) / (znear - zfar));
  r->m[11] = -1;
  r->m[14] = (float) (2 * zfar * znear / (znear - zfar));
}

void
tg_mat4_ortho (TgMat4 *r, double l, double rt, double b, double t, double n, double f)
{
  tg_mat4_identity (r);
  r->m[0] = (float) (2 / (rt - l));
  r->m[5] = (float) (2 / (t - b));
  r->m[10] = (float) (-2 / (f - n));
  r->m[12] = (float) (-(rt + l) / (rt - l));
  r->m[13] = (float) (-(t + b) / (t - b));
  r->m[14] = (float) (-(f + n) / (f - n));
}

static void
normalize3 (double v[3])
{
  double l = sqrt (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  if (l > 0)
    v[0] /= l, v[1] /= l, v[2] /= l;
}

static void
cross3 (const double a[3], const double b[3], double r[3])
{
  r[0] = a[1] * b[2] - a[2] * b[1];
  r[1] = a[2] * b[0] - a[0] * b[2];
  r[2] = a[0] * b[1] - a[1] * b[0];
}

void
tg_mat4_look_at (TgMat4 *r, const double eye[3], const double target[3], const double up[3])
{
  double f[3] = { target[0] - eye[0], target[1] - eye[1], target[2] - eye[2] };
  double s[3], u[3];

  normalize3 (f);
  cross3 (f, up, s);
  normalize3 (s);
  cross3 (s, f, u);
  tg_mat4_identity (r);
  for (int k = 0; k < 3; k++)
    {
      r->m[k * 4 + 0] = (float) s[k];
      r->m[k * 4 + 1] = (float) u[k];
      r->m[k * 4 + 2] = (float) -f[k];
    }
  r->m[12] = (float) -(s[0] * eye[0] + s[1] * eye[1] + s[2] * eye[2]);
  r->m[13] = (float) -(u[0] * eye[0] + u[1] * eye[1] + u[2] * eye[2]);
  r->m[14] = (float) (f[0] * eye[0] + f[1] * eye[1] + f[2] * eye[2]);
}

void
tg_mat4_light (TgMat4 *r, const double to_light[3], const double centre[3], double radius)
{
  double eye[3], up[3] = { 0, 1, 0 };
  TgMat4 view, proj;

  /* A sun straight overhead needs another up. */
  if (fabs (to_light[1]) > 0.99)
    up[1] = 0, up[2] = -1;
  for (int k = 0; k < 3; k++)
    eye[k] = centre[k] + to_light[k] * 2 * radius;
  tg_mat4_look_at (&view, eye, centre, up);
  tg_mat4_ortho (&proj, -radius, radius, -radius, radius, radius, 3 * radius);
  tg_mat4_mul (r, &proj, &view);
}

int
tg_mat4_invert (TgMat4 *r, const TgMat4 *a)
{
  /* Gauss-Jordan with partial pivoting, in double. */
  double t[4][8];

  for (int row = 0; row < 4; row++)
    for (int c = 0; c < 4; c++)
      {
        t[row][c] = a->m[c * 4 + row];
        t[row][c + 4] = row == c;
      }
  for (int c = 0; c < 4; c++)
    {
      int p = c;
      for (int row = c + 1; row < 4; row++)
        if (fabs (t[row][c]) > fabs (t[p][c]))
          p = row;
      if (fabs (t[p][c]) < 1e-300)
        {
          tg_mat4_identity (r);
          return -1;
        }
      if (p != c)
        for (int k = 0; k < 8; k++)
          {
            double x = t[c][k];
            t[c][k] = t[p][k];
            t[p][k] = x;
          }
      {
        double inv = 1.0 / t[c][c];
        for (int k = 0; k < 8; k++)
          t[c][k] *= inv;
      }
      for (int row = 0; row < 4; row++)
        if (row != c && t[row][c] != 0)
          {
            double f = t[row][c];
            for (int k = 0; k < 8; k++)
              t[row][k] -= f * t[c][k];
          }
    }
  for (int row = 0; row < 4; row++)
    for (int c = 0; c < 4; c++)
      r->m[c * 4 + row] = (float) t[row][c + 4];
  return 0;
}

double
tg_mat4_project (const TgMat4 *m, const double p[3], double out[3])
{
  double v[4];

  for (int row = 0; row < 4; row++)
    v[row] = m->m[0 * 4 + row] * p[0] + m->m[1 * 4 + row] * p[1] + m->m[2 * 4 + row] * p[2]
             + m->m[3 * 4 + row];
  for (int k = 0; k < 3; k++)
    out[k] = v[3] != 0 ? v[k] / v[3] : v[k];
  return v[3];
}

void
tg_orbit_camera_eye (const TgOrbitCamera *c, double eye[3])
{
  double cp = cos (c->pitch);

  eye[0] = c->target[0] + c->distance * cp * sin (c->yaw);
  eye[1] = c->target[1] + c->distance * sin (c->pitch);
  eye[2] = c->target[2] + c->distance * cp * cos (c->yaw);
}

void
tg_orbit_camera_matrices (const TgOrbitCamera *c, int width, int height,
                          const double scene_centre[3], double scene_radius, TgMat4 *view,
                          TgMat4 *proj)
{
  static const double up[3] = { 0, 1, 0 };
  double eye[3], l, znear, zfar;

  tg_orbit_camera_eye (c, eye);
  tg_mat4_look_at (view, eye, c->target, up);
  l = sqrt ((eye[0] - scene_centre[0]) * (eye[0] - scene_centre[0])
            + (eye[1] - scene_centre[1]) * (eye[1] - scene_centre[1])
            + (eye[2] - scene_centre[2]) * (eye[2] - scene_centre[2]));
  /* Planes hug the scene's sphere; inside it, the near plane follows
   * the orbit distance so close-ups do not clip. */
  zfar = l + 1.05 * scene_radius + 1e-3;
  znear = l - 1.05 * scene_radius;
  if (znear < fmin (0.05 * c->distance, 1e-3 * zfar))
    znear = fmin (0.05 * c->distance, 1e-3 * zfar);
  if (znear < 1e-5 * zfar)
    znear = 1e-5 * zfar;
  tg_mat4_perspective (proj, c->fovy, height > 0 ? (double) width / height : 1, znear, zfar);
}

void
tg_orbit_camera_rotate (TgOrbitCamera *c, double dyaw, double dpitch)
{
  const double lim = 89.5 * M_PI / 180;

  c->yaw = fmod (c->yaw + dyaw, 2 * M_PI);
  c->pitch = fmax (-lim, fmin (lim, c->pitch + dpitch));
}

void
tg_orbit_camera_pan (TgOrbitCamera *c, double dx, double dy, int height)
{
  double k = 2 * c->distance * tan (c->fovy / 2) / (height > 0 ? height : 1);
  double eye[3], f[3], s[3], u[3];
  static const double up[3] = { 0, 1, 0 };

  tg_orbit_camera_eye (c, eye);
  for (int i = 0; i < 3; i++)
    f[i] = c->target[i] - eye[i];
  normalize3 (f);
  cross3 (f, up, s);
  normalize3 (s);
  cross3 (s, f, u);
  /* The scene follows the pointer: the target moves the other way. */
  for (int i = 0; i < 3; i++)
    c->target[i] += k * (-dx * s[i] + dy * u[i]);
}

void
tg_orbit_camera_zoom_to (TgOrbitCamera *c, double factor, const double point[3])
{
  /* Eye' = P + (Eye - P) * factor and Target' = P + (Target - P) * factor
   * keep the view direction, so P stays on the same pixel. */
  for (int i = 0; i < 3; i++)
    c->target[i] = point[i] + (c->target[i] - point[i]) * factor;
  c->distance *= factor;
}

void
tg_orbit_camera_frame (TgOrbitCamera *c, const double bmin[3], const double bmax[3],
                       double aspect)
{
  /* Keeps the view direction and finds the nearest distance at which all
   * eight corners of the box are inside the view, with a margin.  For a
   * corner at (x, y) across and z towards the eye from the target, it is
   * inside when |x| <= (d - z) tan(hfov/2), and likewise for y. */
  double eye[3], f[3], s[3], u[3], d = 0;
  double tv = tan (c->fovy / 2) * 0.9, th = tv * (aspect > 0 ? aspect : 1);
  static const double up[3] = { 0, 1, 0 };

  for (int i = 0; i < 3; i++)
    c->target[i] = (bmin[i] + bmax[i]) / 2;
  c->distance = 1;
  tg_orbit_camera_eye (c, eye);
  for (int i = 0; i < 3; i++)
    f[i] = c->target[i] - eye[i];
  normalize3 (f);
  cross3 (f, up, s);
  normalize3 (s);
  cross3 (s, f, u);
  for (int k = 0; k < 8; k++)
    {
      double p[3], x = 0, y = 0, z = 0;
      for (int i = 0; i < 3; i++)
        {
          p[i] = ((k >> i) & 1 ? bmax[i] : bmin[i]) - c->target[i];
          x += p[i] * s[i];
          y += p[i] * u[i];
          z -= p[i] * f[i];
        }
      d = fmax (d, z + fabs (x) / th);
      d = fmax (d, z + fabs (y) / tv);
    }
  c->distance = d > 0 ? d : 1;
}

void
tg_unproject_depth (const TgMat4 *inv_view_proj, double x, double y, double depth, int width,
                    int height, double out[3])
{
  double ndc[3] = { 2 * x / width - 1, 1 - 2 * y / height, 2 * depth - 1 };

  tg_mat4_project (inv_view_proj, ndc, out);
}

void
tg_unproject_ray (const TgMat4 *inv_view_proj, double x, double y, int width, int height,
                  double origin[3], double dir[3])
{
  double far[3];

  tg_unproject_depth (inv_view_proj, x, y, 0, width, height, origin);
  tg_unproject_depth (inv_view_proj, x, y, 1, width, height, far);
  for (int i = 0; i < 3; i++)
    dir[i] = far[i] - origin[i];
  normalize3 (dir);
}
