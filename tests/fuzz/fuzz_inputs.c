/* What the CLI and the engine do with a file a user hands us, as one
 * function per kind of file, for the libFuzzer targets and the corpus
 * replay test (fuzz_inputs.h).  Readers that take a path get the bytes
 * through a file in a private temporary folder, removed at exit; the
 * engine that evaluates the PNG nodes is made once and its cache (which
 * also holds loaded images) cleared before every input.
 */
#include "fuzz_inputs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tgformats/tgformats.h>
#include <tgraph/tgraph.h>

/* Small, so one input evaluates in well under a millisecond. */
#define PNG_WORLD_RESOLUTION 9

static char tmp_dir[64];
static char glb_path[96], png_path[96], out_path[96];

static void
die (const char *what, const TgError *err)
{
  fprintf (stderr, "fuzz: %s", what);
  if (err)
    fprintf (stderr, ": code %d, path \"%s\", message \"%s\"", err->code, err->path,
             err->message);
  fputc ('\n', stderr);
  abort ();
}

/* A failure must say what failed: a TG_E* code and a message. */
static void
check_failure (int rc, const TgError *err, const char *what)
{
  if (rc >= 0 || err->code >= 0 || err->message[0] == '\0')
    die (what, err);
}

static void
remove_tmp (void)
{
  unlink (glb_path);
  unlink (png_path);
  unlink (out_path);
  rmdir (tmp_dir);
}

static void
setup (void)
{
  const char *base;

  if (tmp_dir[0])
    return;
  if (tg_formats_init () < 0)
    die ("tg_formats_init failed", NULL);
  base = getenv ("TMPDIR");
  snprintf (tmp_dir, sizeof tmp_dir, "%s/tg-fuzz-XXXXXX",
            base && base[0] && strlen (base) < 40 ? base : "/tmp");
  if (!mkdtemp (tmp_dir))
    die ("cannot make a temporary folder", NULL);
  snprintf (glb_path, sizeof glb_path, "%s/in.glb", tmp_dir);
  snprintf (png_path, sizeof png_path, "%s/in.png", tmp_dir);
  snprintf (out_path, sizeof out_path, "%s/out.glb", tmp_dir);
  atexit (remove_tmp);
}

static void
write_file (const char *path, const uint8_t *data, size_t size)
{
  FILE *f = fopen (path, "wb");

  if (!f || (size && fwrite (data, 1, size, f) != size) || fclose (f) != 0)
    die ("cannot write the input to a temporary file", NULL);
}

/* --- .tgraph --------------------------------------------------------------- */

static void
tgraph_round_trip (TgGraph *g, unsigned flags)
{
  TgGraph *again = NULL;
  TgError err;
  char *text, *text2;

  text = tg_tgraph_save_string (g, &err);
  if (!text)
    die ("a loaded graph does not save", &err);
  if (tg_tgraph_load_string_ex (text, strlen (text), "/nonexistent", flags, &again, &err) < 0)
    {
      fprintf (stderr, "%s\n", text);
      die ("a saved graph does not load again", &err);
    }
  text2 = tg_tgraph_save_string (again, &err);
  if (!text2)
    die ("a reloaded graph does not save", &err);
  if (strcmp (text, text2) != 0)
    {
      fprintf (stderr, "first save:\n%s\nsecond save:\n%s\n", text, text2);
      die ("load -> save is not a fixed point", NULL);
    }
  free (text2);
  free (text);
  tg_graph_free (again);
}

int
fuzz_one_tgraph (const uint8_t *data, size_t size)
{
  static const unsigned flag_sets[] = { 0, TG_TGRAPH_LOAD_NO_VALIDATE };

  setup ();
  for (size_t i = 0; i < sizeof flag_sets / sizeof flag_sets[0]; i++)
    {
      TgGraph *g = NULL;
      TgError err;
      int rc;

      /* The bytes as they are: not NUL-terminated, maybe with NULs inside. */
      rc = tg_tgraph_load_string_ex ((const char *) data, size, "/nonexistent", flag_sets[i],
                                     &g, &err);
      if (rc < 0)
        {
          check_failure (rc, &err, "load failed without a message");
          if (g)
            die ("a failed load set its result", NULL);
          continue;
        }
      if (!g)
        die ("a load succeeded without a graph", NULL);
      /* What `tgraph check` does after loading. */
      tg_error_clear (&err);
      rc = tg_graph_validate (g, &err);
      if (rc < 0)
        check_failure (rc, &err, "validation failed without a message");
      else if (flag_sets[i] == 0 && rc != 0)
        die ("validation returned a positive value", NULL);
      tgraph_round_trip (g, flag_sets[i]);
      tg_graph_free (g);
    }
  return 0;
}

/* --- .glb ------------------------------------------------------------------ */

/* One instance of one prototype showing MESH, as export.points writes it. */
static void
glb_write_instances (const TgMesh *mesh)
{
  static const float pos[3] = { 1, 2, 3 }, rot[4] = { 0, 0, 0, 1 }, scale[3] = { 1, 1, 1 };
  TgPointsWriter w = tg_io_points_writer ("glb");
  TgPoints *p = tg_points_new ();
  const TgMesh *protos[1] = { mesh };
  TgError err = { 0 };
  FILE *f;
  int rc;

  if (!w || !p || tg_points_add_proto (p, "rock") < 0 || tg_points_push (p, pos, rot, scale, 0) < 0)
    die ("cannot set up the instance list", NULL);
  f = fopen ("/dev/null", "wb");
  if (!f)
    die ("cannot open /dev/null", NULL);
  rc = w (f, p, protos, NULL, &err);
  if (rc < 0)
    check_failure (rc, &err, "the instance writer failed without a message");
  fclose (f);
  tg_points_free (p);
}

/* What the glb mesh writer makes of MESH must read back. */
static void
glb_write_mesh (const TgMesh *mesh)
{
  TgMeshWriter w = tg_io_mesh_writer ("glb");
  TgMeshReader r = tg_io_mesh_reader ("glb");
  TgMesh *back = NULL;
  TgError err = { 0 };
  FILE *f = fopen (out_path, "wb");
  int rc;

  if (!w || !r || !f)
    die ("cannot set up the mesh writer", NULL);
  rc = w (f, mesh, NULL, &err);
  if (fclose (f) != 0 && rc == 0)
    die ("cannot write a temporary file", NULL);
  if (rc < 0)
    {
      check_failure (rc, &err, "the mesh writer failed without a message");
      return;
    }
  rc = r (out_path, &back, &err);
  if (rc < 0)
    die ("a mesh the glb writer wrote does not read back", &err);
  tg_mesh_free (back);
}

int
fuzz_one_glb (const uint8_t *data, size_t size)
{
  TgMeshReader reader;
  TgMesh *mesh = NULL;
  TgError err;
  int rc;

  setup ();
  reader = tg_io_mesh_reader ("glb");
  if (!reader)
    die ("no glb mesh reader registered", NULL);
  write_file (glb_path, data, size);
  tg_error_clear (&err);
  rc = reader (glb_path, &mesh, &err);
  if (rc < 0)
    {
      check_failure (rc, &err, "the glb reader failed without a message");
      if (mesh)
        die ("a failed read set its result", NULL);
      return 0;
    }
  if (!mesh || mesh->n_chunks < 1)
    die ("the glb reader succeeded without a mesh", NULL);
  for (int c = 0; c < mesh->n_chunks; c++)
    {
      const TgMeshChunk *ch = &mesh->chunks[c];
      if (ch->n_vertices < 1 || ch->n_indices < 3 || ch->n_indices % 3 || !ch->positions
          || !ch->normals || !ch->indices)
        die ("the glb reader made an inconsistent chunk", NULL);
      for (int64_t i = 0; i < ch->n_indices; i++)
        if (ch->indices[i] >= (uint32_t) ch->n_vertices)
          die ("the glb reader made an index past the vertices", NULL);
    }
  glb_write_instances (mesh);
  glb_write_mesh (mesh);
  tg_mesh_free (mesh);
  return 0;
}

/* --- PNG ------------------------------------------------------------------- */

static const char png_graph[] =
  "{ \"format\": \"tgraph\", \"version\": 2,\n"
  "  \"world\": { \"size_m\": [100, 80], \"height_m\": 50, \"resolution\": 9, \"seed\": 1 },\n"
  "  \"nodes\": [\n"
  "    { \"id\": \"h\", \"type\": \"input.heightmap\", \"params\": { \"path\": \"in.png\" } },\n"
  "    { \"id\": \"i\", \"type\": \"input.image\", \"params\": { \"path\": \"in.png\" } }\n"
  "  ],\n"
  "  \"links\": [] }\n";

static void
png_eval (void)
{
  static TgEngine *engine;
  static TgGraph *graph;
  static const char *const ids[] = { "h", "i" };
  TgRegion region;
  TgError err;

  if (!engine)
    {
      TgEngineOptions o = { .threads = 1, .cache_bytes = 0 };
      engine = tg_engine_new (&o);
      if (!engine)
        die ("cannot make an engine", NULL);
      if (tg_tgraph_load_string (png_graph, strlen (png_graph), tmp_dir, &graph, &err) < 0)
        die ("the PNG graph does not load", &err);
    }
  tg_engine_clear_cache (engine);
  tg_region_for_world (&region, tg_graph_world (graph), PNG_WORLD_RESOLUTION);
  for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++)
    {
      TgValue *v = NULL;
      int rc;

      tg_error_clear (&err);
      rc = tg_engine_pull (engine, graph, tg_graph_find_node (graph, ids[k]), 0, &region, NULL,
                           &v, NULL, &err);
      if (rc < 0)
        check_failure (rc, &err, "a PNG node failed without a message");
      else if (!v)
        die ("a PNG node succeeded without a value", NULL);
      tg_value_unref (v);
    }
}

static volatile unsigned png_sink;

int
fuzz_one_png (const uint8_t *data, size_t size)
{
  TgImage img;
  TgError err;
  size_t bytes;
  unsigned sum = 0;
  int rc;

  setup ();
  write_file (png_path, data, size);
  tg_error_clear (&err);
  rc = tg_png_read (png_path, &img, &err);
  if (rc < 0)
    {
      check_failure (rc, &err, "the PNG reader failed without a message");
      if (img.data)
        die ("a failed read left image data", NULL);
      return 0;
    }
  if (!img.data || img.width < 1 || img.height < 1 || img.channels < 1 || img.channels > 4
      || (img.bits != 8 && img.bits != 16))
    die ("the PNG reader made an inconsistent image", NULL);
  /* Every byte is there and initialised (ASan and MSan see the reads). */
  bytes = tg_image_bytes (&img);
  for (size_t i = 0; i < bytes; i++)
    sum += ((const uint8_t *) img.data)[i];
  png_sink = sum;
  tg_image_clear (&img);
  png_eval ();
  return 0;
}
