/* The "godot" instance-list writer: a Godot 4 text scene (.tscn, format 3)
 * with one MultiMeshInstance3D per prototype under a Node3D root, named
 * after the prototype, each drawing a marker cone (a CylinderMesh with a
 * zero top radius, centred on the instance as Godot's primitive meshes
 * are) in the prototype's colour.  Swap the mesh in Godot for the real
 * asset; the transforms stay.
 *
 * The MultiMesh sets transform_format = 1 (TRANSFORM_3D) before
 * instance_count: Godot sizes the buffer when the count is set, in the
 * format current at that moment.  The buffer holds 12 floats per
 * instance, the rows of the 3 x 4 matrix [basis | origin] as Godot's
 * multimesh_instance_set_transform stores them:
 *
 *   basis.x.x, basis.y.x, basis.z.x, origin.x,
 *   basis.x.y, basis.y.y, basis.z.y, origin.y,
 *   basis.x.z, basis.y.z, basis.z.z, origin.z
 *
 * where basis.x is the first column (the instance's local X axis, scaled),
 * i.e. rows of R(q) diag(s) followed by the position.  Godot is +Y up,
 * right-handed, metres, with -Z forward, so the matrices go out in the
 * file's frame (handedness.h: [M A M | M t], M = diag (1, 1, -1); north
 * is -Z) and the instances land as they do on the .glb terrain, not
 * mirrored.
 */
#include <stdlib.h>
#include <string.h>

#include "handedness.h"
#include "points-writers.h"
#include "tgformats-private.h"

/* Godot refuses these in node names. */
static void
node_name (const char *name, int k, char *out, size_t size)
{
  size_t n = 0;

  for (const char *s = name; *s && n + 1 < size; s++)
    out[n++] = strchr (".:@/\"%\\", *s) ? '_' : *s;
  out[n] = '\0';
  if (n == 0)
    snprintf (out, size, "Prototype%d", k);
}

static void
put_float (FILE *f, double v)
{
  char num[32];

  fwrite (num, 1, (size_t) tg__points_format_float ((float) v, num), f);
}

int
tg__write_points_godot (FILE *f, const TgPoints *p, const TgMesh *const *meshes, TgError *err)
{
  int64_t *count;
  char (*names)[128];
  locale_t old;
  int rc;

  (void) meshes;
  if ((rc = tg__points_check (p, "godot", err)) < 0)
    return rc;
  count = calloc ((size_t) (p->n_protos ? p->n_protos : 1), sizeof (int64_t));
  names = calloc ((size_t) (p->n_protos ? p->n_protos : 1), sizeof *names);
  if (!count || !names)
    {
      free (count);
      free (names);
      return tg_error_set (err, TG_ENOMEM, NULL, "godot: out of memory");
    }
  for (int64_t i = 0; i < p->n; i++)
    count[p->proto[i]]++;
  /* Sibling names must differ: a repeat gets "_2", "_3", ... */
  for (int k = 0; k < p->n_protos; k++)
    {
      char base[112];
      node_name (p->proto_names[k], k, base, sizeof base);
      snprintf (names[k], sizeof names[k], "%s", base);
      for (int suffix = 2, j = 0; j < k; j++)
        if (strcmp (names[j], names[k]) == 0)
          {
            snprintf (names[k], sizeof names[k], "%s_%d", base, suffix++);
            j = -1;
          }
    }

  old = tg__points_c_locale_push ();
  fprintf (f, "[gd_scene load_steps=%d format=3]\n", 3 * p->n_protos + 1);
  for (int k = 0; k < p->n_protos; k++)
    {
      float rgb[3];
      tg__points_proto_color (k, rgb);
      fprintf (f, "\n[sub_resource type=\"StandardMaterial3D\" id=\"StandardMaterial3D_%d\"]\n", k);
      fputs ("albedo_color = Color(", f);
      for (int c = 0; c < 3; c++)
        {
          put_float (f, rgb[c]);
          fputs (", ", f);
        }
      fputs ("1)\n", f);
      fprintf (f, "\n[sub_resource type=\"CylinderMesh\" id=\"CylinderMesh_%d\"]\n", k);
      fprintf (f, "material = SubResource(\"StandardMaterial3D_%d\")\n", k);
      fputs ("top_radius = 0.0\nbottom_radius = 0.25\nheight = 1.0\nradial_segments = 8\n"
             "rings = 0\n", f);
      fprintf (f, "\n[sub_resource type=\"MultiMesh\" id=\"MultiMesh_%d\"]\n", k);
      fputs ("transform_format = 1\n", f);
      fprintf (f, "instance_count = %lld\n", (long long) count[k]);
      fprintf (f, "mesh = SubResource(\"CylinderMesh_%d\")\n", k);
      fputs ("buffer = PackedFloat32Array(", f);
      for (int64_t i = 0, written = 0; i < p->n && !tg__write_failed (f, i); i++)
        {
          double m[12];
          if (p->proto[i] != k)
            continue;
          tg__points_matrix (p, i, m);
          tg__hand_matrix34 (m);
          for (int e = 0; e < 12; e++)
            {
              if (written++)
                fputs (", ", f);
              put_float (f, m[e]);
            }
        }
      fputs (")\n", f);
    }
  fputs ("\n[node name=\"Instances\" type=\"Node3D\"]\n", f);
  for (int k = 0; k < p->n_protos; k++)
    {
      fprintf (f, "\n[node name=\"%s\" type=\"MultiMeshInstance3D\" parent=\".\"]\n", names[k]);
      fprintf (f, "multimesh = SubResource(\"MultiMesh_%d\")\n", k);
    }
  tg__points_c_locale_pop (old);
  free (count);
  free (names);
  if (ferror (f))
    return tg_error_set (err, TG_EIO, NULL, "godot: write error");
  return 0;
}
