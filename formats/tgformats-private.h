/* Internal helpers shared by the libtgformats sources: a growing text
 * buffer, our own JSON emitter (stable layout, shortest round-trip
 * numbers), the JSON position locator for error messages, parameter values
 * as JSON, and file helpers (whole-file read, atomic write).  Not
 * installed; nothing outside formats/ includes it.
 */
#ifndef TGFORMATS_PRIVATE_H
#define TGFORMATS_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <json-c/json.h>

#include "tgformats/tgformats.h"

/* For a writer's loop over items: every 4096th item, whether a write to
 * F failed (a full disk, or the engine's stream of a cancelled export),
 * so that the writer stops soon instead of formatting the rest. */
static inline bool
tg__write_failed (FILE *f, int64_t i)
{
  return (i & 4095) == 0 && ferror (f);
}

/* Whether this machine stores the low byte of a 16-bit sample first (the
 * files it writes are big-endian: PNG; or little-endian: raw). */
static inline bool
tg__host_little_endian (void)
{
  const uint16_t one = 1;
  uint8_t first;

  memcpy (&first, &one, 1);
  return first == 1;
}

/* Lines the emitter tries to keep short enough for side-by-side diffs. */
#define TG__JSON_WIDTH 100

/* --- text buffer ----------------------------------------------------------- */

typedef struct
{
  char *data;  /* always NUL-terminated once anything was appended */
  size_t len, cap;
  bool oom;    /* an allocation failed; the content is incomplete */
} TgBuf;

void tg__buf_init (TgBuf *b);
void tg__buf_clear (TgBuf *b);
void tg__buf_append (TgBuf *b, const char *s, size_t n);
void tg__buf_puts (TgBuf *b, const char *s);
void tg__buf_putc (TgBuf *b, char c);
void tg__buf_indent (TgBuf *b, int n);
void tg__buf_printf (TgBuf *b, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
/* The text (caller frees), or NULL when an allocation failed. */
char *tg__buf_steal (TgBuf *b);

/* --- JSON text (numbers: tg_format_double in the engine) --------------------- */

/* A JSON string literal (quotes included) of S[0..N). */
void tg__json_put_string_n (TgBuf *b, const char *s, size_t n);
void tg__json_put_string (TgBuf *b, const char *s);
void tg__json_put_double (TgBuf *b, double v);

/* Pretty-prints O (NULL is JSON null) at the buffer's current position,
 * nested lines indented from INDENT.  Small arrays of numbers (and of
 * pairs) and objects of scalars stay on one line when they fit. */
void tg__json_emit (TgBuf *b, json_object *o, int indent);
/* Adds VAL to OBJ under KEY, taking it; false (VAL released) when VAL is
 * NULL (a failed allocation) or the add failed. */
bool tg__json_add (json_object *obj, const char *key, json_object *val);
/* A new array of the N numbers V; NULL when memory ran out. */
json_object *tg__json_numbers (const double *v, int n);
/* One-line form of O. */
void tg__json_emit_compact (TgBuf *b, json_object *o);
/* One-line text of O (caller frees), or NULL on allocation failure. */
char *tg__json_to_text (json_object *o);
/* Parses TEXT strictly; NULL when it is not valid JSON. *OK tells a
 * successful "null" apart from a failure. */
json_object *tg__json_parse (const char *text, bool *ok);

/* --- positions --------------------------------------------------------------- */

/* 1-based line and column (in characters) of byte OFFSET of TEXT. */
void tg__text_position (const char *text, size_t len, size_t offset, int *line, int *column);

/* Finds the value that PATH ("nodes[3].params.octaves", "" for the whole
 * document) names in the JSON TEXT.  When the full path does not exist
 * (a missing key) it finds the deepest part that does.  Returns the
 * number of path components matched (0 means only the root), or -1 when
 * TEXT does not start with a JSON value; *OFFSET gets the value's byte
 * offset. */
int tg__json_locate (const char *text, size_t len, const char *path, size_t *offset);

/* The JSON string literal at P of TEXT (at its opening quote), escapes
 * decoded, appended to OUT with a terminating NUL. */
void tg__json_decode_string (const char *text, size_t len, size_t p, TgBuf *out);

/* The first thing in a JSON text that RFC 8259 refuses and json-c's
 * strict mode lets through (json_strict.c), or a key given twice. */
typedef struct
{
  int code;                     /* TG_EPARSE, or TG_ENOMEM when the check could not finish */
  char path[TG_ERROR_PATH_MAX]; /* "nodes[0].params.path"; "" for the document */
  size_t offset;                /* byte offset in the text */
  char message[160];
} TgJsonProblem;

/* Whether TEXT, which json-c's strict mode accepted, has such a problem:
 * a control character, a byte that is not UTF-8 or a lone surrogate
 * escape in a string, a number RFC 8259 does not allow ("5.", NaN,
 * Infinity), or a key twice in one object (reported only when nothing
 * else is; the second key's offset).  *OUT says which and where. */
bool tg__json_strict_problem (const char *text, size_t len, TgJsonProblem *out);

/* Fills err->line/column with where PATH's value is in TEXT (PATH NULL:
 * err->path; the loader passes the path as the text spells it). */
void tg__error_locate (TgError *err, const char *path, const char *text, size_t len);

/* --- format upgrades (tgraph_migrate.c) ----------------------------------------- */

/* One renamed parameter: of nodes of TYPE, or when LIST is set, a field
 * of the items of that list parameter. */
typedef struct
{
  const char *type;
  const char *list;
  const char *old_name;
  const char *new_name;
} TgTgraphRename;

/* The renames of format version 2 (from version 1). */
extern const TgTgraphRename tg__tgraph_renames_v2[];
extern const int tg__tgraph_n_renames_v2;

/* What one upgrade renamed: in nodes[NODE], a parameter (ITEM -1) or the
 * field of list item ITEM. */
typedef struct
{
  int node, item;
  const TgTgraphRename *rename;
} TgRenamed;

typedef struct
{
  TgRenamed *v;
  size_t n, cap;
} TgRenameLog;

void tg__rename_log_clear (TgRenameLog *log);

/* Renames the version 1 parameter names in the parsed document ROOT to
 * their version 2 names, in place and in the same key order, and logs
 * each.  A node that gives both names of one parameter is an error. */
int tg__tgraph_migrate_v1 (json_object *root, TgRenameLog *log, TgError *err);

/* PATH ("nodes[2].params.center_m") as the text spells it before the
 * renames in LOG ("nodes[2].params.centre_m"), into OUT. */
void tg__rename_log_text_path (const TgRenameLog *log, const char *path, char *out, size_t size);

/* --- manifest ------------------------------------------------------------------ */

/* The "heightmap" object of F's manifest entry (units, Unreal's and
 * Unity's import numbers; manifest_import.c), R the samples' extent; NULL
 * when F is not a heightmap, or with *OOM set when memory ran out. */
json_object *tg__manifest_heightmap (const TgGraph *g, const TgExportFile *f, const TgRegion *r,
                                     bool *oom);
/* The "channels" object of F's entry: which layer each channel ("R",
 * "G", "B", "A", or "grey") holds, null for none; NULL when F names no
 * channels, or with *OOM set. */
json_object *tg__manifest_channels (const TgExportFile *f, bool *oom);
/* The "instances" object of F's entry: an instance list's frame, origin,
 * rotations and chunk grid (points_manifest.c); NULL when F is not an
 * instance list, or with *OOM set. */
json_object *tg__manifest_instances (const TgGraph *g, const TgExportFile *f, bool *oom);

/* --- parameters as JSON ------------------------------------------------------- */

/* The file form of V, described by D: a new json-c object (NULL for JSON
 * null, e.g. an unset input path).  *OOM set on allocation failure. */
json_object *tg__param_to_json (const TgParamDesc *d, const TgParamValue *v, bool *oom);

/* --- files ---------------------------------------------------------------------- */

/* Opens PATH for reading if it is a regular file; a FIFO, a device or a
 * folder is refused with a message naming PATH (opened without blocking,
 * so a FIFO with no writer cannot hang the caller).  NULL with ERR set. */
FILE *tg__fopen_regular (const char *path, TgError *err);

/* Reads PATH whole (NUL-terminated; caller frees *DATA); a regular file
 * only (tg__fopen_regular). */
int tg__read_file (const char *path, char **data, size_t *len, TgError *err);
/* Writes DATA to PATH through a temporary file in the same folder,
 * fsync and rename, so PATH holds either the old or the new content. */
int tg__write_file_atomic (const char *path, const void *data, size_t len, TgError *err);

/* SHA-256 as the engine's stream digest (tgraph/io.h): the build's
 * exports are hashed as they are written. */
extern const TgStreamDigest tg__sha256_stream_digest;

/* The SHA-256 of staged file I of L and its size: the digest taken as it
 * was written when there is one, else read back (tg__sha256_export_file). */
int tg__sha256_staged (TgExportList *l, int i, const TgCancel *cancel, char hex[65],
                       uint64_t *bytes, TgError *err);

/* tg_sha256_file of staged file I of L, read as commit resolves it, and
 * the bytes it hashed.  Stops with TG_ECANCELLED once CANCEL (may be
 * NULL) is requested: a staged export may be gigabytes. */
int tg__sha256_export_file (TgExportList *l, int i, const TgCancel *cancel, char hex[65],
                            uint64_t *bytes, TgError *err);

/* The second half of tg_build, for `tgraph stitch` too: hashes every file
 * L staged, adds the manifest (the same bytes for the same files) and
 * commits everything.  The caller checked GRAPH_NAME (tg_graph_name_check)
 * before it evaluated or stitched anything: this does not again. */
int tg__build_commit (TgExportList *l, const TgGraph *g, const char *graph_name,
                      const TgCancel *cancel, TgError *err);

/* --- images ------------------------------------------------------------------------ */

/* The largest image side we read or write: larger than any map we build
 * (TG_RESOLUTION_MAX), with room for painted inputs. */
#define TG__IMAGE_MAX_SIDE 65536

/* Checks an image's shape: 1..4 channels, BITS one of 8/16/32, data set
 * (image.c, which every reader and writer uses). */
int tg__image_check (const TgImage *img, TgError *err);
/* *USE is SRC with BITS per sample: SRC itself when it already has them,
 * else a converted copy in TMP (free TMP->data after use).  Floats are
 * clamped to 0..1 and rounded to the nearest integer step; integers
 * widen exactly (8 -> 16 is v * 257). */
int tg__image_as_bits (const TgImage *src, int bits, TgImage *tmp, const TgImage **use,
                       TgError *err);

/* TgImageRows, an image a band of rows at a time: tgraph/io.h. */

/* ROWS serving IMG (borrowed) from memory. */
void tg__image_rows_from (TgImageRows *rows, const TgImage *img);

/* Walks the rows of SRC in bands converted to BITS per sample (as
 * tg__image_as_bits converts whole images). */
typedef struct
{
  const TgImageRows *src;
  int bits, band, y;
  void *buf;
  TgImage cur, tmp;
} TgRowBands;

int tg__row_bands_init (TgRowBands *b, const TgImageRows *src, int bits, TgError *err);
/* The same in bands of ROWS rows (the last may be shorter). */
int tg__row_bands_init_rows (TgRowBands *b, const TgImageRows *src, int bits, int rows,
                             TgError *err);
/* *BAND: the next rows, valid until the next call; returns how many (0 at
 * the end) or a negative TG_E* code. */
int tg__row_bands_next (TgRowBands *b, const TgImage **band, TgError *err);
void tg__row_bands_clear (TgRowBands *b);

/* The encoders behind the image formats, on rows. */
/* SMALL: zlib level 9 and every filter instead of the fast default. */
int tg__png_write_rows (FILE *f, const TgImageRows *src, int bits, bool small, TgError *err);
/* The fast default: strips deflated side by side (png_fast.c). */
int tg__png_write_fast (FILE *f, const TgImageRows *src, int bits, TgError *err);
int tg__raw_write_rows (FILE *f, const TgImageRows *src, int bits, TgError *err);
/* 32-bit float OpenEXR (exr.c); F must be able to seek. */
int tg__exr_write_rows (FILE *f, const TgImageRows *src, TgError *err);

/* The writers registered under the export format names, and the same on
 * rows (NULL for a format that has none). */
int tg__write_png16 (FILE *f, const TgImage *img, TgError *err);
int tg__write_png8 (FILE *f, const TgImage *img, TgError *err);
int tg__write_png16_small (FILE *f, const TgImage *img, TgError *err);
int tg__write_png8_small (FILE *f, const TgImage *img, TgError *err);
int tg__write_raw16 (FILE *f, const TgImage *img, TgError *err);
int tg__write_r32 (FILE *f, const TgImage *img, TgError *err);
int tg__write_png16_rows (FILE *f, const TgImageRows *src, TgError *err);
int tg__write_png8_rows (FILE *f, const TgImageRows *src, TgError *err);
int tg__write_png16_small_rows (FILE *f, const TgImageRows *src, TgError *err);
int tg__write_png8_small_rows (FILE *f, const TgImageRows *src, TgError *err);
int tg__write_raw16_rows (FILE *f, const TgImageRows *src, TgError *err);
int tg__write_r32_rows (FILE *f, const TgImageRows *src, TgError *err);
TgImageRowsWriter tg__image_rows_writer (const char *writer);

/* What files say of image writer WRITER: the format of the file it
 * writes, and in *COMPRESSION its encoder option or NULL.  The writer
 * "png16.small" writes "format": "png16", "compression": "small"; a name
 * that is no image writer's ("glb") is its own format.  The one place
 * that spelling is taken apart: manifest.json, job.json and the manifest
 * readers call it, and it reads "png16.small" where an older manifest or
 * job.json wrote that as the format. */
const char *tg__writer_format (const char *writer, const char **compression);
/* The writer of FORMAT with COMPRESSION (NULL: FORMAT itself), or NULL
 * when no writer has that option: tg__writer_format backwards. */
const char *tg__format_writer (const char *format, const char *compression);

#endif
