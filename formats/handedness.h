/* World frame <-> the frame of right-handed files (glTF, OBJ, PLY, Godot).
 *
 * The engine's world follows the image convention: x east, y up, z NORTH
 * (row 0 of every image is world +Z).  Geographically that frame is
 * left-handed, as Unity's is.  glTF, Blender, Godot and the OBJ/PLY
 * tools are right-handed with +Y up, where a top view shows +X right and
 * -Z up, so writing world coordinates unchanged shows the terrain
 * mirrored north-south.  The right-handed writers therefore store
 * z_file = -z_world: north becomes -Z ("forward" in glTF and Godot) and
 * the files look like the heightmaps.  CSV and JSON instance lists are
 * in world coordinates (Unity's frame) unless their options pick another
 * frame (points_frame.c).
 *
 * The change of frame is the reflection M = diag (1, 1, -1).  It is its
 * own inverse, so the same functions convert world -> file (writers) and
 * file -> world (the .glb reader):
 *   - points and normals: z negated;
 *   - triangles: a reflection turns faces inside out, so each triangle's
 *     order is reversed ((a, b, c) -> (a, c, b)) to keep front faces
 *     counter-clockwise;
 *   - rotations R -> M R M: the quaternion (x, y, z, w) becomes
 *     (-x, -y, z, w) (a turn about axis u by angle t becomes a turn about
 *     -M u by t); scales are unchanged;
 *   - whole transforms [A | t] -> [M A M | M t].
 * The Z-up right-handed frame of Blender and Houdini's Z-up scenes
 * (x east, y north, z up) swaps world y and z: also a reflection, so
 * triangles are reversed the same way (tg__hand_vec3_zup).
 * Negation is written 0 - v so that a zero stays +0 (no "-0" in text
 * files); every other value maps back exactly.
 *
 * Internal to formats/.
 */
#ifndef TG_HANDEDNESS_H
#define TG_HANDEDNESS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline float
tg__hand_neg (float v)
{
  return 0.0f - v;
}

/* A point or a normal (3 floats); OUT may be IN. */
static inline void
tg__hand_vec3 (float out[3], const float in[3])
{
  out[0] = in[0];
  out[1] = in[1];
  out[2] = tg__hand_neg (in[2]);
}

/* A point or a normal in the Z-up frame (x, north, up); OUT may be IN. */
static inline void
tg__hand_vec3_zup (float out[3], const float in[3])
{
  float up = in[1];

  out[0] = in[0];
  out[1] = in[2];
  out[2] = up;
}

/* A unit quaternion (x, y, z, w); OUT may be IN. */
static inline void
tg__hand_quat (float out[4], const float in[4])
{
  out[0] = tg__hand_neg (in[0]);
  out[1] = tg__hand_neg (in[1]);
  out[2] = in[2];
  out[3] = in[3];
}

/* One triangle's three indices, reversed; OUT may be IN. */
static inline void
tg__hand_tri (uint32_t out[3], const uint32_t in[3])
{
  uint32_t b = in[1];

  out[0] = in[0];
  out[1] = in[2];
  out[2] = b;
}

/* A 3 x 4 matrix [A | t] given row by row (m[4 * row + col], col 3 = t),
 * in place: row 2 and column 2 change sign, m[10] (in both) stays. */
static inline void
tg__hand_matrix34 (double m[12])
{
  m[2] = 0.0 - m[2];
  m[6] = 0.0 - m[6];
  m[8] = 0.0 - m[8];
  m[9] = 0.0 - m[9];
  m[11] = 0.0 - m[11];
}

/* Spans, in the form the .glb builder streams views through
 * (TgGlbEncode): N_BYTES of DST from SRC, a whole number of vec3 floats
 * or of uint32 triangles (12 bytes each).  DST may be SRC. */
static inline void
tg__hand_vec3s (void *dst, const void *src, size_t n_bytes)
{
  for (size_t off = 0; off + 12 <= n_bytes; off += 12)
    {
      float v[3];

      memcpy (v, (const char *) src + off, 12);
      tg__hand_vec3 (v, v);
      memcpy ((char *) dst + off, v, 12);
    }
}

static inline void
tg__hand_tris (void *dst, const void *src, size_t n_bytes)
{
  for (size_t off = 0; off + 12 <= n_bytes; off += 12)
    {
      uint32_t t[3];

      memcpy (t, (const char *) src + off, 12);
      tg__hand_tri (t, t);
      memcpy ((char *) dst + off, t, 12);
    }
}


/* The same triangles as uint16 (6 bytes each in DST, N_BYTES of them)
 * from uint32 ones at SRC; every index must be below 65536. */
static inline void
tg__hand_tris16 (void *dst, const void *src, size_t n_bytes)
{
  for (size_t off = 0, k = 0; off + 6 <= n_bytes; off += 6, k++)
    {
      uint32_t t[3];
      uint16_t s[3];

      memcpy (t, (const char *) src + 12 * k, 12);
      tg__hand_tri (t, t);
      for (int a = 0; a < 3; a++)
        s[a] = (uint16_t) t[a];
      memcpy ((char *) dst + off, s, 6);
    }
}

#endif
