/* libtgformats: the file formats around the engine.
 *
 * .tgraph JSON (json-c), PNG (libpng), RAW, the JSON Schema and the node
 * catalogue generated from the registry, SHA-256, and the build (export
 * files plus manifest.json) that the CLI and the GUI share, so that both
 * write the same bytes.  Depends on the engine, never the reverse.
 */
#ifndef TGFORMATS_H
#define TGFORMATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <tgraph/tgraph.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Registers every reader and writer with the engine.  Idempotent and
 * thread-safe; call once at start-up. */
int tg_formats_init (void);

/* --- .tgraph ------------------------------------------------------------ */

/* The most nodes a .tgraph file may hold: far beyond any hand-made graph,
 * and few enough that checking a hostile file's links, cycles, ids and
 * export paths takes well under a second, and that evaluation, which
 * recurses along a chain of nodes (about 1 KiB of stack per node), stays
 * inside a thread's stack. */
#define TG_TGRAPH_MAX_NODES TG_GRAPH_MAX_DEPTH

/* Loads PATH; input paths in the graph become relative to PATH's folder.
 * Errors carry the place: err->path ("nodes[3].params.octaves") and, for
 * syntax errors, err->line/err->column.  *OUT is only set on success.
 * A graph of more than TG_TGRAPH_MAX_NODES nodes is refused. */
int tg_tgraph_load_file (const char *path, TgGraph **out, TgError *err);
int tg_tgraph_load_string (const char *text, size_t len, const char *base_dir, TgGraph **out,
                           TgError *err);

/* Flags of the _ex loaders. */
typedef enum
{
  /* Skip tg_graph_validate and the required-parameter checks, so that an
   * unfinished graph (unlinked required inputs, an unset input path) that
   * the GUI saved opens again.  Syntax, types, ranges, unknown names and
   * links are still checked.  Validate before evaluating. */
  TG_TGRAPH_LOAD_NO_VALIDATE = 1 << 0,
} TgTgraphLoadFlags;

int tg_tgraph_load_file_ex (const char *path, unsigned flags, TgGraph **out, TgError *err);
int tg_tgraph_load_string_ex (const char *text, size_t len, const char *base_dir, unsigned flags,
                              TgGraph **out, TgError *err);

/* What a load found out about the file besides the graph. */
typedef struct
{
  int version;   /* the format version the file is written in */
  int n_renamed; /* parameter names the upgrade to TG_FORMAT_VERSION changed */
} TgTgraphLoadInfo;

/* The _ex loaders that also fill *INFO (may be NULL) on success. */
int tg_tgraph_load_file_info (const char *path, unsigned flags, TgTgraphLoadInfo *info,
                              TgGraph **out, TgError *err);
int tg_tgraph_load_string_info (const char *text, size_t len, const char *base_dir,
                                unsigned flags, TgTgraphLoadInfo *info, TgGraph **out,
                                TgError *err);

/* The current name of parameter OLD_NAME of node type TYPE when an older
 * format version called it that (tg_tgraph_param_new_name ("field.box",
 * "centre_m") is "center_m"), else NULL.  For names typed by people, such
 * as `tgraph eval --set`. */
const char *tg_tgraph_param_new_name (const char *type, const char *old_name);

/* The canonical text: pretty-printed, keys in a stable order, every
 * parameter in descriptor order, "ui" and unknown keys kept.  Caller frees. */
char *tg_tgraph_save_string (const TgGraph *g, TgError *err);
/* Writes the canonical text to PATH atomically (temp file + rename). */
int tg_tgraph_save_file (const TgGraph *g, const char *path, TgError *err);

/* --- comparing graphs (`tgraph diff`) ------------------------------------ */

typedef enum
{
  TG_DIFF_WORLD,        /* NAME: the world field ("size_m", "seed", ...) */
  TG_DIFF_NODE_REMOVED, /* NODE: its id; OLD: its type */
  TG_DIFF_NODE_ADDED,   /* NODE: its id; NEW: its type */
  TG_DIFF_NODE_RENAMED, /* NODE: the new id; OLD, NEW: the ids */
  TG_DIFF_NODE_TYPE,    /* NODE: the id both graphs give it; OLD, NEW: the types */
  TG_DIFF_PARAM,        /* NODE, NAME: the parameter; OLD, NEW, UNIT */
  TG_DIFF_LINK_REMOVED, /* NODE: "from.port", NAME: "to.port" */
  TG_DIFF_LINK_ADDED,   /* as LINK_REMOVED */
  TG_DIFF_NODE_MOVED,   /* NODE; OLD, NEW: the "ui" blocks (only the editor reads them) */
  TG_DIFF_NODE_BYPASS,  /* NODE; OLD, NEW: "true" or "false" (ui.bypass, which the engine reads) */
  TG_DIFF_NODE_PIN,     /* NODE; OLD, NEW: "true" or "false" (ui.viewer_pin: the editor's viewer
                         * keeps the node); a change of the pin alone is not a move */
} TgDiffKind;

typedef struct
{
  TgDiffKind kind;
  char *node, *name;
  char *old_value, *new_value; /* one-line JSON as a .tgraph file writes it, or NULL */
  const char *unit;            /* "m", "deg", ... or NULL */
} TgDiffEntry;

typedef struct
{
  TgDiffEntry *entries;
  int n, cap;
} TgGraphDiff;

/* What changed from OLD_G to NEW_G, in a fixed order: world fields;
 * nodes removed (OLD_G's order), added, renamed (NEW_G's order); node by
 * node in NEW_G's order, a new type or else the parameters changed (in
 * descriptor order); links removed, then added (each sorted by text);
 * then moves (NEW_G's order).  A node whose id is gone and a
 * new one with the same type and parameters, matching no other, is a
 * rename, and links through it compare under its new id.  Clear *OUT
 * with tg_graph_diff_clear. */
int tg_graph_diff (const TgGraph *old_g, const TgGraph *new_g, TgGraphDiff *out, TgError *err);
void tg_graph_diff_clear (TgGraphDiff *d);
/* "node-added", "param", ...: the kind as the JSON output names it. */
const char *tg_diff_kind_name (TgDiffKind kind);

/* S as a JSON string literal, quotes included.  Caller frees; NULL when
 * out of memory. */
char *tg_json_quote (const char *s);

/* --- generated from the registry --------------------------------------- */

/* JSON Schema (draft 2020-12) of the .tgraph format.  Caller frees. */
char *tg_schema_generate (void);
/* The node catalogue as JSON (for `tgraph nodes --json`).  Caller frees. */
char *tg_catalogue_json (void);

/* --- images -------------------------------------------------------------- */

/* 8- or 16-bit grey, grey+alpha, RGB or RGBA PNGs; no gamma conversion. */
int tg_png_read (const char *path, TgImage *out, TgError *err);
/* What tg_png_read would give (size, channels, bits) from the header
 * alone, with the same checks; INFO's data stays NULL. */
int tg_png_read_info (const char *path, TgImage *info, TgError *err);
/* Writes IMG (8 or 16 bits, 1-4 channels) as PNG, deterministic bytes. */
int tg_png_write (FILE *f, const TgImage *img, TgError *err);
/* Raw samples, little-endian, no header: 16-bit unsigned or 32-bit float. */
int tg_raw_write (FILE *f, const TgImage *img, TgError *err);
/* Writes IMG (1-4 channels; integer samples become 0..1) as a 32-bit
 * float, ZIP-compressed OpenEXR, deterministic bytes.  F must seek: the
 * chunk table goes before the chunks and is written last. */
int tg_exr_write (FILE *f, const TgImage *img, TgError *err);

/* --- hashing ------------------------------------------------------------- */

/* Storage for the hash state (nettle's context, opaque here). */
typedef struct
{
  uint64_t opaque[24];
} TgSha256;

void tg_sha256_init (TgSha256 *s);
void tg_sha256_update (TgSha256 *s, const void *data, size_t n);
void tg_sha256_final (TgSha256 *s, uint8_t digest[32]);
/* Lower-case hex digest of a file's bytes into HEX (65 bytes). */
int tg_sha256_file (const char *path, char hex[65], TgError *err);

/* --- build ----------------------------------------------------------------- */

/* Whether GRAPH_NAME's file name (what a manifest or a plan records of
 * it; NULL is fine) is UTF-8; else TG_EINVAL saying so. */
int tg_graph_name_check (const char *graph_name, TgError *err);

/* Evaluates every export node of G into OUT_DIR and writes manifest.json
 * beside them (each file: path, bytes, sha256, format, resolution, world
 * extent, seed; and the tgraph version).  All files appear together or,
 * on failure or cancel, none do.  On success *LIST (LIST may be NULL)
 * is a new list of the committed files, to free with tg_export_list_free.
 * GRAPH_NAME is recorded in the manifest (may be NULL). */
int tg_build (TgEngine *e, const TgGraph *g, const char *graph_name, const char *out_dir,
              const TgEvalHooks *hooks, TgExportList **list, TgEvalReport *report,
              TgError *err);

#ifdef __cplusplus
}
#endif
#endif
