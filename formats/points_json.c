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
 *
 * In chunks (chunk_m > 0, points_chunk.c) "count" is followed by
 * "chunk_m" and a table of the chunks that hold instances, north-west
 * first, each a run of the instance array:
 *
 *     "chunk_m": 256,
 *     "chunks": [
 *       {"name": "chunk_x0_z0", "x": 0, "z": 0, "first": 0, "count": 12},
 *       ...
 *     ],
 *
 * and the instances come chunk by chunk (each chunk's in the list's
 * order), each with its "chunk" name after its "prototype".  x counts
 * chunks from the world's west edge, z from its north edge, whatever the
 * frame.  Readers of version 2 without chunks see the same keys.
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
  TgPointsChunks ch;
  char **quoted;
  locale_t old;
  int rc;

  (void) meshes;
  if ((rc = tg__points_check (p, "json", err)) < 0
      || (rc = tg__points_frame_init (&fr, opt, "json", err)) < 0
      || (rc = tg__points_chunks_init (&ch, p, opt, false, "json", err)) < 0)
    return rc;
  /* Each name quoted once, not per instance. */
  quoted = calloc ((size_t) (p->n_protos ? p->n_protos : 1), sizeof (char *));
  if (!quoted)
    {
      tg__points_chunks_clear (&ch);
      return tg_error_set (err, TG_ENOMEM, NULL, "json: out of memory");
    }
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
          tg__points_chunks_clear (&ch);
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
  fprintf (f, "],\n  \"count\": %lld,\n", (long long) p->n);
  if (ch.chunked)
    {
      char num[32];
      fputs ("  \"chunk_m\": ", f);
      fwrite (num, 1, (size_t) tg__points_format_float ((float) ch.grid.chunk_m, num), f);
      fputs (",\n  \"chunks\": [", f);
      for (int64_t gi = 0; gi < ch.n_groups; gi++)
        {
          const TgPointsGroup *gr = &ch.groups[gi];
          char name[48];
          tg__points_chunk_name (gr->cx, gr->cz, name);
          fprintf (f,
                   "%s\n    {\"name\": \"%s\", \"x\": %lld, \"z\": %lld, \"first\": %lld, "
                   "\"count\": %lld}",
                   gi ? "," : "", name, (long long) gr->cx, (long long) gr->cz,
                   (long long) gr->first, (long long) gr->count);
        }
      fputs (ch.n_groups ? "\n  ],\n" : "],\n", f);
    }
  fputs ("  \"instances\": [", f);
  for (int64_t o = 0, gi = 0; o < p->n && !tg__write_failed (f, o); o++)
    {
      int64_t i = ch.order[o];
      float pos[3], rot[4], scale[3], pyr[3];

      while (o >= ch.groups[gi].first + ch.groups[gi].count)
        gi++;
      tg__points_frame_instance (&fr, p, i, pos, rot, scale);
      fputs (o ? ",\n    {\"prototype\": " : "\n    {\"prototype\": ", f);
      fputs (quoted[p->proto[i]], f);
      if (ch.chunked)
        {
          char name[48];
          tg__points_chunk_name (ch.groups[gi].cx, ch.groups[gi].cz, name);
          fprintf (f, ", \"chunk\": \"%s\"", name);
        }
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
  tg__points_chunks_clear (&ch);
  for (int k = 0; k < p->n_protos; k++)
    free (quoted[k]);
  free (quoted);
  if (ferror (f))
    return tg_error_set (err, TG_EIO, NULL, "json: write error");
  return 0;
}
