/* Reading a build's output folder back: its manifest.json and the files
 * it lists (grid samples of PNG, RAW16, R32 and EXR files, meshes' counts
 * and bounds, instance lists), for `tgraph compare` and build reports.
 */
#ifndef TGFORMATS_OUTPUTS_H
#define TGFORMATS_OUTPUTS_H

#include <stdbool.h>
#include <stdint.h>

#include <tgraph/tgraph.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct
{
  char *path, *sha256, *format, *node; /* owned; node may be "" */
  uint64_t bytes;
  int width, height;                   /* 0 for meshes and instance lists */
  bool heightmap;                      /* the entry has a "heightmap" block */
  double height_min_m, height_max_m;   /* its height range */
  double metres_per_unit;              /* metres one step of a stored value stands for */
  bool south_first;
} TgManifestFile;

typedef struct
{
  char *graph;                         /* owned, may be NULL */
  double size_x_m, size_z_m, height_m;
  int resolution;
  uint32_t seed;
  int n_files;
  TgManifestFile *files;
  char *text;                          /* the whole manifest.json, owned */
} TgManifest;

/* Reads DIR/manifest.json.  Errors name the file and the JSON path
 * ("out/manifest.json: files[2].sha256: expected a string"). */
int tg_manifest_read (const char *dir, TgManifest *out, TgError *err);
void tg_manifest_clear (TgManifest *m);
/* The entry for PATH, or NULL. */
const TgManifestFile *tg_manifest_find (const TgManifest *m, const char *path);

/* Whether FORMAT ("png16", "r32", ...) is a grid of samples that
 * tg_grid_file_read reads. */
bool tg_grid_format_readable (const char *format);
/* The samples of the grid file PATH, written as FORMAT, as 32-bit floats
 * in the file's units (a 16-bit code, an 8-bit code or the float stored)
 * and the file's row order: OUT->bits is 32, data is float.  RAW16 and
 * R32 have no header: WIDTH x HEIGHT (from the manifest) tells their
 * shape; the file's size must match.  Clear OUT with tg_image_clear. */
int tg_grid_file_read (const char *path, const char *format, int width, int height, TgImage *out,
                       TgError *err);
/* The largest stored value of FORMAT (65535, 255, or 1 for floats). */
double tg_grid_format_max (const char *format);

typedef struct
{
  int64_t n_vertices, n_triangles;
  double min[3], max[3];               /* bounds as the file stores positions */
} TgMeshStats;

/* Counts and bounds of the mesh file PATH (glb, obj or ply by FORMAT). */
int tg_mesh_file_stats (const char *path, const char *format, TgMeshStats *out, TgError *err);

/* Reads the instance list PATH written as "csv" (the world frame's
 * header) into a new list (free with tg_points_free). */
int tg_points_csv_read (const char *path, TgPoints **out, TgError *err);
/* The instance list PATH written as FORMAT: "csv", "json" or "glb" (an
 * EXT_mesh_gpu_instancing file: each instanced node a prototype, its
 * translations the positions).  A glb that instances nothing (a mesh)
 * gives 0 and *OUT NULL. */
int tg_points_file_read (const char *path, const char *format, TgPoints **out, TgError *err);

/* Writes DATA as PATH atomically: a temporary file beside it, renamed
 * over it once whole. */
int tg_write_file_atomic (const char *path, const void *data, size_t len, TgError *err);

#ifdef __cplusplus
}
#endif
#endif
