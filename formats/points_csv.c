/* The "csv" instance-list writer, and the helpers every instance-list
 * writer shares (points-writers.h).
 *
 * One header line, `prototype,px,py,pz,qx,qy,qz,qw,sx,sy,sz`, then one row
 * per instance in the list's order: the prototype by name (quoted as RFC
 * 4180 wants when it holds a comma, quote or line break), the position,
 * the rotation quaternion and the scale in the frame the options ask for
 * (points_frame.c; by default the world's: x east, +Y up, z north in
 * metres from the world's centre, Unity's left-handed frame).  The unreal
 * frame writes what a DataTable imports instead:
 * `Name,Prototype,X,Y,Z,Pitch,Yaw,Roll,ScaleX,ScaleY,ScaleZ`, the row name
 * the instance's index, centimetres and FRotator degrees.  Numbers are
 * the shortest text that reads back as the same float, with '.' whatever
 * the locale, so a file round-trips exactly and is the same on every
 * machine.
 *
 * In chunks (chunk_m > 0, points_chunk.c) the rows come chunk by chunk,
 * north-west first, each chunk's in the list's order, with a last column
 * `chunk` (`Chunk` for unreal) naming it: `chunk_x<cx>_z<cz>`.  The
 * unreal frame's Name stays the instance's index in the whole list.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "points-writers.h"
#include "tgformats-private.h"

/* --- shared helpers ------------------------------------------------------------ */

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void
c_locale_make (void)
{
  c_locale = newlocale (LC_ALL_MASK, "C", (locale_t) 0);
}

locale_t
tg__points_c_locale_push (void)
{
  pthread_once (&c_locale_once, c_locale_make);
  return c_locale ? uselocale (c_locale) : (locale_t) 0;
}

void
tg__points_c_locale_pop (locale_t old)
{
  if (old)
    uselocale (old);
}

int
tg__points_format_float (float v, char out[32])
{
  int n = 0;

  if (v == 0.0f)
    {
      out[0] = '0';
      out[1] = '\0';
      return 1;
    }
  for (int prec = 6; prec <= 9; prec++)
    {
      n = snprintf (out, 32, "%.*g", prec, (double) v);
      if (strtof (out, NULL) == v)
        break;
    }
  return n;
}

int
tg__points_check (const TgPoints *p, const char *format, TgError *err)
{
  if (!p)
    return tg_error_set (err, TG_EINVAL, NULL, "%s: no instance list", format);
  if (p->n > 0 && (!p->position || !p->rotation || !p->scale || !p->proto))
    return tg_error_set (err, TG_EINVAL, NULL, "%s: the instance list has no data", format);
  for (int k = 0; k < p->n_protos; k++)
    if (!p->proto_names[k])
      return tg_error_set (err, TG_EINVAL, NULL, "%s: prototype %d has no name", format, k);
  for (int64_t i = 0; i < p->n; i++)
    {
      bool finite = true;
      if (p->proto[i] < 0 || p->proto[i] >= p->n_protos)
        return tg_error_set (err, TG_EINVAL, NULL,
                             "%s: instance %lld has prototype %d; the list has %d prototypes",
                             format, (long long) i, p->proto[i], p->n_protos);
      for (int c = 0; c < 3; c++)
        finite &= isfinite (p->position[3 * i + c]) && isfinite (p->scale[3 * i + c]);
      for (int c = 0; c < 4; c++)
        finite &= isfinite (p->rotation[4 * i + c]);
      if (!finite)
        return tg_error_set (err, TG_EINVAL, NULL,
                             "%s: instance %lld has a position, rotation or scale that is not "
                             "a finite number",
                             format, (long long) i);
    }
  return 0;
}

void
tg__points_proto_color (int k, float rgb[3])
{
  /* Distinct hues that read well on a terrain: green, grey-blue, orange,
   * purple, yellow, cyan, red, brown. */
  static const float cycle[8][3] = {
    { 0.10f, 0.55f, 0.10f }, { 0.35f, 0.40f, 0.55f }, { 0.90f, 0.45f, 0.05f },
    { 0.50f, 0.20f, 0.65f }, { 0.90f, 0.80f, 0.10f }, { 0.10f, 0.70f, 0.75f },
    { 0.80f, 0.10f, 0.10f }, { 0.45f, 0.30f, 0.15f },
  };
  memcpy (rgb, cycle[(k % 8 + 8) % 8], sizeof cycle[0]);
}

void
tg__points_rotation (const float q[4], double r[3][3])
{
  double x = q[0], y = q[1], z = q[2], w = q[3];
  double len = sqrt (x * x + y * y + z * z + w * w);

  /* A writer may get a slightly denormalised quaternion; normalise so the
   * basis stays orthogonal (zero means identity). */
  if (len > 0.0)
    {
      x /= len;
      y /= len;
      z /= len;
      w /= len;
    }
  else
    w = 1.0;
  r[0][0] = 1.0 - 2.0 * (y * y + z * z);
  r[0][1] = 2.0 * (x * y - z * w);
  r[0][2] = 2.0 * (x * z + y * w);
  r[1][0] = 2.0 * (x * y + z * w);
  r[1][1] = 1.0 - 2.0 * (x * x + z * z);
  r[1][2] = 2.0 * (y * z - x * w);
  r[2][0] = 2.0 * (x * z - y * w);
  r[2][1] = 2.0 * (y * z + x * w);
  r[2][2] = 1.0 - 2.0 * (x * x + y * y);
}

void
tg__points_matrix (const TgPoints *p, int64_t i, double m[12])
{
  const float *s = p->scale + 3 * i, *t = p->position + 3 * i;
  double r[3][3];

  tg__points_rotation (p->rotation + 4 * i, r);
  for (int row = 0; row < 3; row++)
    {
      for (int col = 0; col < 3; col++)
        m[4 * row + col] = r[row][col] * s[col];
      m[4 * row + 3] = t[row];
    }
}

/* --- csv -------------------------------------------------------------------------- */

static void
put_csv_name (FILE *f, const char *name)
{
  if (!strpbrk (name, ",\"\r\n"))
    {
      fputs (name, f);
      return;
    }
  fputc ('"', f);
  for (const char *s = name; *s; s++)
    {
      if (*s == '"')
        fputc ('"', f);
      fputc (*s, f);
    }
  fputc ('"', f);
}

/* Writes the N floats at V, each after a comma. */
static void
put_csv_floats (FILE *f, const float *v, int n)
{
  char num[32];

  for (int c = 0; c < n; c++)
    {
      fputc (',', f);
      fwrite (num, 1, (size_t) tg__points_format_float (v[c], num), f);
    }
}

int
tg__write_points_csv (FILE *f, const TgPoints *p, const TgMesh *const *meshes,
                      const TgPointsWriteOptions *opt, TgError *err)
{
  TgPointsFrameInfo fr;
  TgPointsChunks ch;
  bool unreal;
  locale_t old;
  int rc;

  (void) meshes;
  if ((rc = tg__points_check (p, "csv", err)) < 0
      || (rc = tg__points_frame_init (&fr, opt, "csv", err)) < 0
      || (rc = tg__points_chunks_init (&ch, p, opt, false, "csv", err)) < 0)
    return rc;
  unreal = fr.frame == TG_POINTS_FRAME_UNREAL;
  old = tg__points_c_locale_push ();
  fputs (unreal ? "Name,Prototype,X,Y,Z,Pitch,Yaw,Roll,ScaleX,ScaleY,ScaleZ"
                : "prototype,px,py,pz,qx,qy,qz,qw,sx,sy,sz",
         f);
  fputs (!ch.chunked ? "\n" : unreal ? ",Chunk\n" : ",chunk\n", f);
  for (int64_t gi = 0, o = 0; gi < ch.n_groups; gi++)
    {
      char chunk[48];
      tg__points_chunk_name (ch.groups[gi].cx, ch.groups[gi].cz, chunk);
      for (int64_t e = 0; e < ch.groups[gi].count && !tg__write_failed (f, o); e++, o++)
        {
          int64_t i = ch.order[o];
          float pos[3], rot[4], scale[3], pyr[3];

          tg__points_frame_instance (&fr, p, i, pos, rot, scale);
      /* A DataTable takes the first column as the row's unique name. */
          if (unreal)
            fprintf (f, "%lld,", (long long) i);
          put_csv_name (f, p->proto_names[p->proto[i]]);
          put_csv_floats (f, pos, 3);
          if (unreal)
            {
              tg__points_unreal_rotator (rot, pyr);
              put_csv_floats (f, pyr, 3);
            }
          else
            put_csv_floats (f, rot, 4);
          put_csv_floats (f, scale, 3);
          if (ch.chunked)
            {
              fputc (',', f);
              fputs (chunk, f);
            }
          fputc ('\n', f);
        }
    }
  tg__points_c_locale_pop (old);
  tg__points_chunks_clear (&ch);
  if (ferror (f))
    return tg_error_set (err, TG_EIO, NULL, "csv: write error");
  return 0;
}
