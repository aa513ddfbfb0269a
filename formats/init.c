/* Registers the readers and writers of this library with the engine.
 *
 * The engine names formats but writes none; the CLI and the GUI both call
 * tg_formats_init at start-up, so an export from either goes through the
 * same writer and comes out as the same bytes.
 */
#include <pthread.h>
#include <string.h>

#include "tgformats-private.h"
#include "mesh-writers.h"
#include "points-writers.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_result;

/* The image writers, whole and on rows (one list), and what a file
 * says of each: its format and its encoder option (NULL: the default). */
static const struct
{
  const char *writer, *format, *compression;
  TgImageWriter fn;
  TgImageRowsWriter rows;
} image_writers[] = {
  { "png16", "png16", NULL, tg__write_png16, tg__write_png16_rows },
  { "png8", "png8", NULL, tg__write_png8, tg__write_png8_rows },
  /* The export nodes' `compression: small` (zlib 9, every filter). */
  { "png16.small", "png16", "small", tg__write_png16_small, tg__write_png16_small_rows },
  { "png8.small", "png8", "small", tg__write_png8_small, tg__write_png8_small_rows },
  { "raw16", "raw16", NULL, tg__write_raw16, tg__write_raw16_rows },
  { "r32", "r32", NULL, tg__write_r32, tg__write_r32_rows },
  { "exr", "exr", NULL, tg_exr_write, tg__exr_write_rows },
};

/* The index of image writer WRITER in the table, -1 when none. */
static int
find_writer (const char *writer)
{
  for (int i = 0; writer && i < TG_N_ELEMENTS (image_writers); i++)
    if (strcmp (image_writers[i].writer, writer) == 0)
      return i;
  return -1;
}

TgImageRowsWriter
tg__image_rows_writer (const char *writer)
{
  int i = find_writer (writer);
  return i < 0 ? NULL : image_writers[i].rows;
}

const char *
tg__writer_format (const char *writer, const char **compression)
{
  int i = find_writer (writer);

  *compression = i < 0 ? NULL : image_writers[i].compression;
  return i < 0 ? writer : image_writers[i].format;
}

const char *
tg__format_writer (const char *format, const char *compression)
{
  if (!compression)
    return format;
  for (int i = 0; format && i < TG_N_ELEMENTS (image_writers); i++)
    if (image_writers[i].compression && strcmp (image_writers[i].format, format) == 0
        && strcmp (image_writers[i].compression, compression) == 0)
      return image_writers[i].writer;
  return NULL;
}

static void
register_all (void)
{
  int rc = tg_io_register_image_reader ("png", tg_png_read);

  rc = rc ? rc : tg_io_register_image_info_reader ("png", tg_png_read_info);

  for (size_t i = 0; rc == 0 && i < sizeof image_writers / sizeof image_writers[0]; i++)
    {
      rc = tg_io_register_image_writer (image_writers[i].writer, image_writers[i].fn);
      rc = rc ? rc
              : tg_io_register_image_rows_writer (image_writers[i].writer, image_writers[i].rows);
    }
  rc = rc ? rc : tg_io_register_mesh_writer ("glb", tg__write_mesh_glb);
  rc = rc ? rc : tg_io_register_mesh_writer ("obj", tg__write_mesh_obj);
  rc = rc ? rc : tg_io_register_mesh_writer ("ply", tg__write_mesh_ply);
  rc = rc ? rc : tg_io_register_mesh_writer ("mtl", tg__write_mesh_mtl);
  rc = rc ? rc : tg_io_register_points_writer ("csv", tg__write_points_csv);
  rc = rc ? rc : tg_io_register_points_writer ("json", tg__write_points_json);
  rc = rc ? rc : tg_io_register_points_writer ("glb", tg__write_points_glb);
  rc = rc ? rc : tg_io_register_points_writer ("godot", tg__write_points_godot);
  rc = rc ? rc : tg_io_register_mesh_reader ("glb", tg__read_mesh_glb);
  /* The manifest's SHA-256, computed as the exports are written. */
  tg_io_register_stream_digest (&tg__sha256_stream_digest);
  init_result = rc;
}

int
tg_formats_init (void)
{
  pthread_once (&init_once, register_all);
  return init_result;
}
