/* The "json" instance-list writer.
 *
 *   {
 *     "format": "terrane-instances",
 *     "version": 2,
 *     "frame": {"name": "unity", "handedness": "left", "east": "+X", "up": "+Y",
 *               "north": "+Z", "units": "m", "origin": "centre"},
 *     "prototypes": ["grass", "rock"],
 *     "count": 2,
 *     "instances": [
 *       {"prototype": "grass", "position": [x, y, z], "rotation": [x, y, z, w], "scale": [x, y, z]},
 *       ...
 *     ]
 *   }
 *
 * Positions, rotations (unit quaternions x, y, z, w) and scales in the
 * frame "frame" states (points_frame.c; by default the world's: x east,
 * +Y up, z north in metres from the world's centre, Unity's left-handed
 * frame); the unreal frame adds each instance's "rotator": [Pitch, Yaw,
 * Roll] in degrees.  Version 1 had no "frame" and was always the default.
 * Instances in the list's order, one per line so diffs stay readable.
 * Streamed straight to the file: a million instances need no document in
 * memory.  Numbers as in the csv writer (shortest round-trip, '.').
 */
#include <stdlib.h>
#include <string.h>

#include "points-writers.h"
#include "tgformats-private.h"

static void
put_string (FILE *f, const char *s)
{
  TgBuf b;

  tg__buf_init (&b);
  tg__json_put_string (&b, s);
  if (b.data)
    fwrite (b.data, 1, b.len, f);
  tg__buf_clear (&b);
}

static void
put_floats (FILE *f, const float *v, int n)
{
  char num[32];

  fputc ('[', f);
  for (int c = 0; c < n; c++)
    {
      if (c)
        fputs (", ", f);
      fwrite (num, 1, (size_t) tg__points_format_float (v[c], num), f);
    }
  fputc (']', f);
}

int
tg__write_points_json (FILE *f, const TgPoints *p, const TgMesh *const *meshes,
                       const TgPointsWriteOptions *opt, TgError *err)
{
  TgPointsFrameInfo fr;
  char **quoted;
  locale_t old;
  int rc;

  (void) meshes;
  if ((rc = tg__points_check (p, "json", err)) < 0
      || (rc = tg__points_frame_init (&fr, opt, "json", err)) < 0)
    return rc;
  /* Each name quoted once, not per instance. */
  quoted = calloc ((size_t) (p->n_protos ? p->n_protos : 1), sizeof (char *));
  if (!quoted)
    return tg_error_set (err, TG_ENOMEM, NULL, "json: out of memory");
  for (int k = 0; k < p->n_protos; k++)
    {
      TgBuf b;
      tg__buf_init (&b);
      tg__json_put_string (&b, p->proto_names[k]);
      if (!(quoted[k] = tg__buf_steal (&b)))
        {
          for (int j = 0; j < k; j++)
            free (quoted[j]);
          free (quoted);
          return tg_error_set (err, TG_ENOMEM, NULL, "json: out of memory");
        }
    }

  old = tg__points_c_locale_push ();
  fprintf (f,
           "{\n  \"format\": \"terrane-instances\",\n  \"version\": 2,\n  \"frame\": "
           "{\"name\": \"%s\", \"handedness\": \"%s\", \"east\": \"+X\", \"up\": \"%s\", "
           "\"north\": \"%s\", \"units\": \"%s\", \"origin\": \"%s\"},\n  \"prototypes\": [",
           fr.name, fr.handedness, fr.up, fr.north, fr.units, fr.origin);
  for (int k = 0; k < p->n_protos; k++)
    {
      if (k)
        fputs (", ", f);
      put_string (f, p->proto_names[k]);
    }
  fprintf (f, "],\n  \"count\": %lld,\n  \"instances\": [", (long long) p->n);
  for (int64_t i = 0; i < p->n && !tg__write_failed (f, i); i++)
    {
      float pos[3], rot[4], scale[3], pyr[3];

      tg__points_frame_instance (&fr, p, i, pos, rot, scale);
      fputs (i ? ",\n    {\"prototype\": " : "\n    {\"prototype\": ", f);
      fputs (quoted[p->proto[i]], f);
      fputs (", \"position\": ", f);
      put_floats (f, pos, 3);
      fputs (", \"rotation\": ", f);
      put_floats (f, rot, 4);
      if (fr.frame == TG_POINTS_FRAME_UNREAL)
        {
          tg__points_unreal_rotator (rot, pyr);
          fputs (", \"rotator\": ", f);
          put_floats (f, pyr, 3);
        }
      fputs (", \"scale\": ", f);
      put_floats (f, scale, 3);
      fputc ('}', f);
    }
  fputs (p->n ? "\n  ]\n}\n" : "]\n}\n", f);
  tg__points_c_locale_pop (old);
  for (int k = 0; k < p->n_protos; k++)
    free (quoted[k]);
  free (quoted);
  if (ferror (f))
    return tg_error_set (err, TG_EIO, NULL, "json: write error");
  return 0;
}
