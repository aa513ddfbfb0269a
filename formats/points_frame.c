/* The frames the csv and json instance lists can be written in
 * (TgPointsWriteOptions, points.h): each is a signed permutation of the
 * world's axes (x east, y up, z north), a unit and an origin.
 *
 * A frame's axes are the world's, each maybe negated: out[k] = sign[k]
 * in[axis[k]].  Points map that way (times the unit, plus the corner
 * shift), scales along the same local axes without the sign, and
 * rotations R -> P R P^T, which for a quaternion maps the vector part by
 * det (P) P (a reflection turns a turn about u into one about -P u, as
 * handedness.h says for its own M).  The mesh's local axes follow the
 * world's, as an engine's importer converts a model's axes.
 */
#include <math.h>

#include "points-writers.h"

typedef struct
{
  const char *name, *handedness, *up, *north, *units;
  int axis[3], sign[3], det;
  double unit;
} FrameDesc;

/* In TgPointsFrame order.  Unreal: x east, y south, z up, the frame in
 * which a heightmap whose row 0 is north imports with its first sample at
 * the landscape's origin. */
static const FrameDesc frames[] = {
  { "unity", "left", "+Y", "+Z", "m", { 0, 1, 2 }, { 1, 1, 1 }, 1, 1.0 },
  { "unreal", "left", "+Z", "-Y", "cm", { 0, 2, 1 }, { 1, -1, 1 }, 1, 100.0 },
  { "houdini", "right", "+Y", "-Z", "m", { 0, 1, 2 }, { 1, 1, -1 }, -1, 1.0 },
  { "blender", "right", "+Z", "+Y", "m", { 0, 2, 1 }, { 1, 1, 1 }, -1, 1.0 },
};

static float
signed_value (int sign, float v)
{
  return sign < 0 ? 0.0f - v : v;
}

int
tg__points_frame_init (TgPointsFrameInfo *fr, const TgPointsWriteOptions *opt,
                       const char *format, TgError *err)
{
  TgPointsWriteOptions def = { 0 };
  const FrameDesc *d;

  if (!opt)
    opt = &def;
  if ((int) opt->frame < 0 || (size_t) opt->frame >= sizeof frames / sizeof frames[0])
    return tg_error_set (err, TG_EINVAL, NULL, "%s: unknown frame %d", format, (int) opt->frame);
  if (opt->origin != TG_POINTS_ORIGIN_CENTRE && opt->origin != TG_POINTS_ORIGIN_CORNER)
    return tg_error_set (err, TG_EINVAL, NULL, "%s: unknown origin %d", format,
                         (int) opt->origin);
  if (opt->origin == TG_POINTS_ORIGIN_CORNER && !(opt->size_x > 0.0 && opt->size_z > 0.0))
    return tg_error_set (err, TG_EINVAL, NULL,
                         "%s: origin \"corner\" needs the world's extent (%g x %g m given)",
                         format, opt->size_x, opt->size_z);
  d = &frames[opt->frame];
  *fr = (TgPointsFrameInfo) { .frame = opt->frame, .name = d->name, .handedness = d->handedness,
                              .up = d->up, .north = d->north, .units = d->units,
                              .origin = "centre", .unit = d->unit, .det = d->det };
  for (int k = 0; k < 3; k++)
    {
      double half = d->axis[k] == 0 ? 0.5 * opt->size_x : d->axis[k] == 2 ? 0.5 * opt->size_z : 0.0;
      fr->axis[k] = d->axis[k];
      fr->sign[k] = d->sign[k];
      if (opt->origin == TG_POINTS_ORIGIN_CORNER)
        fr->offset[k] = half * d->unit;
    }
  if (opt->origin == TG_POINTS_ORIGIN_CORNER)
    fr->origin = d->north[0] == '+' ? "south-west corner" : "north-west corner";
  return 0;
}

void
tg__points_frame_instance (const TgPointsFrameInfo *fr, const TgPoints *p, int64_t i,
                           float pos[3], float rot[4], float scale[3])
{
  const float *t = p->position + 3 * i, *q = p->rotation + 4 * i, *s = p->scale + 3 * i;

  for (int k = 0; k < 3; k++)
    {
      int a = fr->axis[k];
      pos[k] = (float) ((double) signed_value (fr->sign[k], t[a]) * fr->unit + fr->offset[k]);
      rot[k] = signed_value (fr->sign[k] * fr->det, q[a]);
      scale[k] = s[a];
    }
  rot[3] = q[3];
}

void
tg__points_unreal_rotator (const float q[4], float pyr[3])
{
  double r[3][3], pitch, yaw, sy, cy, deg = 180.0 / M_PI;

  /* FMatrix::Rotator: pitch and yaw from where the local X axis points
   * (R's column 0), roll from the Y axis that the yaw alone would give,
   * (-sin yaw, cos yaw, 0), against where R takes Z (column 2) and Y. */
  tg__points_rotation (q, r);
  pitch = atan2 (r[2][0], sqrt (r[0][0] * r[0][0] + r[1][0] * r[1][0]));
  yaw = atan2 (r[1][0], r[0][0]);
  sy = sin (yaw);
  cy = cos (yaw);
  pyr[0] = (float) (pitch * deg);
  pyr[1] = (float) (yaw * deg);
  pyr[2] = (float) (atan2 (cy * r[1][2] - sy * r[0][2], cy * r[1][1] - sy * r[0][1]) * deg);
}
