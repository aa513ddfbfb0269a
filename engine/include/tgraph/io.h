/* Readers and writers that formats/ registers at start-up.
 *
 * The engine writes no file format itself.  An export node names a format
 * ("png16", "raw16") and the writer registered under that name turns an
 * in-memory TgImage into bytes; input nodes read through the reader
 * registered for a file extension.  The CLI and the GUI call the same
 * registration (tg_formats_init), so they write the same bytes.
 */
#ifndef TGRAPH_IO_H
#define TGRAPH_IO_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "mesh.h"
#include "node.h"
#include "points.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads PATH into OUT (OUT->data malloc'd, caller frees with tg_image_clear). */
typedef int (*TgImageReader) (const char *path, TgImage *out, TgError *err);
/* Reads only PATH's header into INFO: the size, channels and bits the
 * reader would decode, with its checks; INFO->data stays NULL. */
typedef int (*TgImageInfoReader) (const char *path, TgImage *info, TgError *err);
/* Writes IMG to the open stream F; must not close it. */
typedef int (*TgImageWriter) (FILE *f, const TgImage *img, TgError *err);

/* An image handed to a writer a band of rows at a time, in file order,
 * so that neither an export node nor `tgraph stitch` holds a second copy
 * of a map in the file's layout.  WHOLE, when set, serves the rows from
 * memory; else ROWS fills DST with rows [Y, Y + N), WIDTH x CHANNELS
 * samples of BITS a row. */
typedef struct
{
  int width, height, channels, bits;
  const TgImage *whole;
  int (*rows) (void *user, int y, int n, void *dst, TgError *err);
  void *user;
} TgImageRows;

/* Writes the rows of SRC to F, as the TgImageWriter of the same format
 * writes the whole image, byte for byte. */
typedef int (*TgImageRowsWriter) (FILE *f, const TgImageRows *src, TgError *err);

/* tg_eval_write_image (node.h) for an image given as rows: the writer
 * takes them a band at a time.  FORMAT must have a rows writer; raw tiles
 * of a tiled build are gathered whole. */
int tg_eval_write_image_rows (TgEvalCtx *c, const char *rel_path, const char *format,
                              const TgImageRows *rows, bool south_first);
/* The same, naming what each of the image's channels holds (ROWS->channels
 * names, "" for none) for the build's manifest (tg_eval_write_image_named). */
int tg_eval_write_image_rows_named (TgEvalCtx *c, const char *rel_path, const char *format,
                                    const TgImageRows *rows, bool south_first,
                                    const char *const *channel_names);

/* EXT is the lower-case file extension without the dot ("png"). */
int tg_io_register_image_reader (const char *ext, TgImageReader fn);
int tg_io_register_image_info_reader (const char *ext, TgImageInfoReader fn);
/* FORMAT is the name export nodes use ("png16", "png8", "raw16"). */
int tg_io_register_image_writer (const char *format, TgImageWriter fn);

int tg_io_register_image_rows_writer (const char *format, TgImageRowsWriter fn);

TgImageReader tg_io_image_reader (const char *ext);
TgImageWriter tg_io_image_writer (const char *format);
/* NULL when FORMAT has no writer on rows. */
TgImageRowsWriter tg_io_image_rows_writer (const char *format);

/* A digest of every staged export, fed with its bytes as the writer
 * writes them (formats/ registers SHA-256 for the manifest), so a build
 * does not read its files back to hash them.  STATE is STATE_SIZE bytes
 * (at most TG_IO_DIGEST_STATE_MAX), aligned for any type.  A file whose
 * writer seeks (OpenEXR) has no digest: it is read back. */
#define TG_IO_DIGEST_STATE_MAX 256
typedef struct
{
  size_t state_size;
  void (*init) (void *state);
  void (*update) (void *state, const void *data, size_t n);
  void (*final) (void *state, uint8_t digest[32]);
} TgStreamDigest;

/* D (static, not copied) or NULL: no digest. */
void tg_io_register_stream_digest (const TgStreamDigest *d);
const TgStreamDigest *tg_io_stream_digest (void);

/* Meshes: FORMAT "glb", "obj", "ply"; readers by extension.  OPT may be
 * NULL (the defaults). */
typedef int (*TgMeshWriter) (FILE *f, const TgMesh *m, const TgMeshWriteOptions *opt,
                             TgError *err);
typedef int (*TgMeshReader) (const char *path, TgMesh **out, TgError *err);
/* Instance lists: FORMAT "csv", "json", "glb", "godot".  PROTO_MESHES has
 * one entry per prototype (NULL: the writer's own marker mesh), or is
 * NULL altogether.  OPT (csv and json; NULL: the defaults) picks the
 * frame and origin; glb and godot have their formats' own frame. */
typedef int (*TgPointsWriter) (FILE *f, const TgPoints *p, const TgMesh *const *proto_meshes,
                               const TgPointsWriteOptions *opt, TgError *err);

int tg_io_register_mesh_writer (const char *format, TgMeshWriter fn);
int tg_io_register_mesh_reader (const char *ext, TgMeshReader fn);
int tg_io_register_points_writer (const char *format, TgPointsWriter fn);
TgMeshWriter tg_io_mesh_writer (const char *format);
TgMeshReader tg_io_mesh_reader (const char *ext);
TgPointsWriter tg_io_points_writer (const char *format);

/* Whether cancel was asked for the build that handed a writer F.  Writes
 * to such a stream fail once it is; a writer that works long before its
 * first write asks this between pieces of that work.  False for any
 * other stream. */
bool tg_io_stream_cancelled (FILE *f);

/* Runs FN over [0, N), one item a call, on the threads of the build that
 * handed the writer F: the calls may run at once, in any order, so each
 * writes only its own outputs.  For any other stream, on the calling
 * thread in order.  0, or TG_ECANCELLED when the build was cancelled
 * (then some items did not run). */
int tg_io_stream_parallel (FILE *f, int n, void (*fn) (void *user, int begin, int end),
                           void *user);

/* A tile job's share of an image export, raw: the exact pixels the
 * export's writer would get, for `tgraph stitch` to join and encode.
 * Host byte order (the jobs of one build run on one kind of machine). */
int tg_tile_image_write (FILE *f, const TgImage *img, TgError *err);
/* Reads what tg_tile_image_write wrote (OUT->data malloc'd). */
int tg_tile_image_read (const char *path, TgImage *out, TgError *err);

/* Reads PATH with the reader for its extension (for tests and tools). */
int tg_io_read_image (const char *path, TgImage *out, TgError *err);
/* Reads PATH's header with the info reader for its extension. */
int tg_io_read_image_info (const char *path, TgImage *info, TgError *err);

/* Whether REL is an acceptable export path: relative, no "..", no empty
 * component, no backslash or drive letter. */
bool tg_path_is_safe_relative (const char *rel);

/* Temporary files are named NAME.tmp-HOST-PID-N: HOST and PID tell whose
 * they are, in folders that many machines share (NFS).  Writes that name
 * into BUF; TG_EPATH if it does not fit. */
int tg_temp_name (char *buf, size_t size, const char *name);
/* Removes from the folder DIR_FD the regular files named by tg_temp_name
 * on this host whose process is gone (kill (PID, 0) fails with ESRCH);
 * another host's are never touched.  Returns how many it removed. */
int tg_temp_remove_stale (int dir_fd);

#ifdef __cplusplus
}
#endif
#endif
