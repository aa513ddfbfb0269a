/* The "json" instance-list writer.
 *
 *   {
 *     "format": "terrane-instances",
 *     "version": 1,
 *     "prototypes": ["grass", "rock"],
 *     "count": 2,
 *     "instances": [
 *       {"prototype": "grass", "position": [x, y, z], "rotation": [x, y, z, w], "scale": [x, y, z]},
 *       ...
 *     ]
 *   }
 *
 * Positions in metres in world coordinates (x east, +Y up, z north:
 * Unity's left-handed frame, unlike the glb and Godot writers, see
 * handedness.h); rotation a unit quaternion (x, y, z, w);
 * instances in the list's order, one per line so diffs stay readable.
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
tg__write_points_json (FILE *f, const TgPoints *p, const TgMesh *const *meshes, TgError *err)
{
  char **quoted;
  locale_t old;
  int rc;

  (void) meshes;
  if ((rc = tg__points_check (p, "json", err)) < 0)
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
  fputs ("{\n  \"format\": \"terrane-instances\",\n  \"version\": 1,\n  \"prototypes\": [", f);
  for (int k = 0; k < p->n_protos; k++)
    {
      if (k)
        fputs (", ", f);
      put_string (f, p->proto_names[k]);
    }
  fprintf (f, "],\n  \"count\": %lld,\n  \"instances\": [", (long long) p->n);
  for (int64_t i = 0; i < p->n && !tg__write_failed (f, i); i++)
    {
      fputs (i ? ",\n    {\"prototype\": " : "\n    {\"prototype\": ", f);
      fputs (quoted[p->proto[i]], f);
      fputs (", \"position\": ", f);
      put_floats (f, p->position + 3 * i, 3);
      fputs (", \"rotation\": ", f);
      put_floats (f, p->rotation + 4 * i, 4);
      fputs (", \"scale\": ", f);
      put_floats (f, p->scale + 3 * i, 3);
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
