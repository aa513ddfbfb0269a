/* Error codes and the error record every fallible engine call can fill.
 *
 * Functions return 0 or a negative TG_E* code.  When the caller passes a
 * TgError, it also receives a message and the place the error refers to
 * (for example "nodes[3].params.octaves"), so a user can find the mistake.
 * There is no global error state: the engine runs on worker threads.
 */
#ifndef TGRAPH_ERROR_H
#define TGRAPH_ERROR_H

/* The messages people read, as formats the app can translate. */
#include "messages.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One list; tg_strerror() and the enum both come from it. */
#define TG_ERRNO_MAP(X)                                              \
  X (INVAL, "invalid argument")                                      \
  X (NOMEM, "out of memory")                                         \
  X (IO, "input/output error")                                       \
  X (PARSE, "malformed file")                                        \
  X (VERSION, "unsupported file version")                            \
  X (UNKNOWN, "unknown name")                                        \
  X (TYPE, "wrong type")                                             \
  X (RANGE, "value out of range")                                    \
  X (MISSING, "required value missing")                              \
  X (LINK, "invalid link")                                           \
  X (CYCLE, "graph has a cycle")                                     \
  X (PATH, "path not allowed")                                       \
  X (FORMAT, "unsupported format")                                   \
  X (EVAL, "node evaluation failed")                                 \
  X (CANCELLED, "cancelled")

typedef enum
{
  TG_OK = 0,
#define TG__ERR_ENUM(name, msg) TG_E##name,
  TG__ERR_FIRST = -1000,
  TG_ERRNO_MAP (TG__ERR_ENUM)
#undef TG__ERR_ENUM
} TgErrorCode;

#define TG_ERROR_PATH_MAX 256
#define TG_ERROR_MESSAGE_MAX 512

typedef struct
{
  int code;                           /* a TG_E* value, 0 when no error */
  char path[TG_ERROR_PATH_MAX];       /* "nodes[3].params.octaves", or "" */
  char message[TG_ERROR_MESSAGE_MAX]; /* human-readable, no trailing newline */
  int line, column;                   /* 1-based source position, 0 when unknown */
  char node_id[TG_ERROR_PATH_MAX];    /* id of the node a "nodes[N]" path names, or "" */
} TgError;

const char *tg_strerror (int code);

/* Fills ERR (when not NULL) and returns CODE, so callers can write
 * `return tg_error_set (err, TG_ERANGE, path, "...")`. */
int tg_error_set (TgError *err, int code, const char *path, const char *fmt, ...)
  __attribute__ ((format (printf, 4, 5)));

/* Prepends PREFIX to err->path ("nodes[2]" + "params.x" -> "nodes[2].params.x"). */
void tg_error_prefix_path (TgError *err, const char *prefix);

/* Prepends "nodes[INDEX]" to err->path and records the node's ID, so that
 * messages name the node both ways while err->path stays a plain JSON
 * path that tools can follow. */
void tg_error_prefix_node (TgError *err, int index, const char *id);
/* Records ID as the node that err->path's "nodes[N]" names (NULL clears). */
void tg_error_set_node_id (TgError *err, const char *id);

void tg_error_clear (TgError *err);

/* "Did you mean": the closest of several candidate names to NAME, when
 * it is close enough to be a likely typo.  One place for suggestions:
 * parameter choices, parameter and node type names, ports, settings. */
typedef struct
{
  const char *name;
  const char *best;
  int best_distance;
} TgSuggest;

void tg_suggest_init (TgSuggest *s, const char *name);
void tg_suggest_add (TgSuggest *s, const char *candidate);
/* The best candidate, or NULL when nothing was close. */
const char *tg_suggest_result (const TgSuggest *s);
/* Edit distance between two short names (1000 past 63 characters). */
int tg_edit_distance (const char *a, const char *b);

/* The path as people read it: "nodes[3] \"base\".params.octaves" when the
 * node's id is known, else err->path.  Into BUF; returns BUF. */
const char *tg_error_format_path (const TgError *err, char *buf, unsigned long size);

/* "path: message" (or just the message) into BUF, the path as
 * tg_error_format_path writes it; returns BUF. */
const char *tg_error_format (const TgError *err, char *buf, unsigned long size);

#ifdef __cplusplus
}
#endif
#endif
