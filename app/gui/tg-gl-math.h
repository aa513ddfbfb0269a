/* Small 3D math for the 3D viewer: column-major 4x4 matrices (as GLSL
 * takes them), vectors, and the orbit camera with its zoom-to-point, pan
 * and framing rules.  Plain C with no GL or GTK calls, so a headless test
 * checks the camera behaviour.
 */
#pragma once

typedef struct
{
  float m[16]; /* column-major: m[col * 4 + row] */
} TgMat4;

void tg_mat4_identity (TgMat4 *r);
void tg_mat4_mul (TgMat4 *r, const TgMat4 *a, const TgMat4 *b); /* r = a * b; r may alias */
void tg_mat4_perspective (TgMat4 *r, double fovy_rad, double aspect, double znear, double zfar);
/* The box [L, R] x [B, T] x [-N, -F] of eye space to clip space. */
void tg_mat4_ortho (TgMat4 *r, double l, double rt, double b, double t, double n, double f);
void tg_mat4_look_at (TgMat4 *r, const double eye[3], const double target[3], const double up[3]);
/* View and projection of a directional light shining along -TO_LIGHT
 * (unit) onto the sphere of RADIUS around CENTRE: the sphere fills the
 * clip cube, and points nearer the light get smaller depths (for a
 * shadow map). */
void tg_mat4_light (TgMat4 *r, const double to_light[3], const double centre[3], double radius);
/* Returns 0, or -1 when A is singular (R is then the identity). */
int tg_mat4_invert (TgMat4 *r, const TgMat4 *a);
/* P' = M * (p, 1), divided by w; returns w. */
double tg_mat4_project (const TgMat4 *m, const double p[3], double out[3]);

/* An orbit camera around TARGET: the eye sits at DISTANCE along the
 * direction given by YAW (around +Y, 0 = looking towards -Z) and PITCH
 * (above the horizon).  Units are metres of the displayed scene. */
typedef struct
{
  double target[3];
  double distance;
  double yaw, pitch;  /* radians */
  double fovy;        /* radians */
} TgOrbitCamera;

void tg_orbit_camera_eye (const TgOrbitCamera *c, double eye[3]);
/* View and projection for a WIDTH x HEIGHT viewport; the clip planes fit
 * a scene of radius SCENE_RADIUS around SCENE_CENTRE. */
void tg_orbit_camera_matrices (const TgOrbitCamera *c, int width, int height,
                               const double scene_centre[3], double scene_radius, TgMat4 *view,
                               TgMat4 *proj);
void tg_orbit_camera_rotate (TgOrbitCamera *c, double dyaw, double dpitch);
/* Moves the target by DX, DY pixels of a viewport HEIGHT pixels high, so
 * that the point at the target's depth follows the pointer. */
void tg_orbit_camera_pan (TgOrbitCamera *c, double dx, double dy, int height);
/* Scales the distance by FACTOR (< 1 zooms in) keeping POINT where it is
 * on screen: eye and target move along their lines to POINT. */
void tg_orbit_camera_zoom_to (TgOrbitCamera *c, double factor, const double point[3]);
/* Aims at the centre of the box and, keeping the view direction, backs
 * off until all its corners fit a viewport of ASPECT with a margin. */
void tg_orbit_camera_frame (TgOrbitCamera *c, const double bmin[3], const double bmax[3],
                            double aspect);
/* The world-space ray through pixel (X, Y) (origin top left) of a WIDTH x
 * HEIGHT viewport, from the inverse of PROJ * VIEW. */
void tg_unproject_ray (const TgMat4 *inv_view_proj, double x, double y, int width, int height,
                       double origin[3], double dir[3]);
/* The world point at window depth DEPTH (0..1, as the depth buffer holds
 * it) under pixel (X, Y). */
void tg_unproject_depth (const TgMat4 *inv_view_proj, double x, double y, double depth, int width,
                         int height, double out[3]);
