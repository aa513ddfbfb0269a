/* Engine internals shared between core files. */
#ifndef TG_INTERNAL_H
#define TG_INTERNAL_H

#include <stddef.h>

#include "tgraph/engine.h"
#include "tgraph/param.h"
#include "tgraph/value.h"

/* A new value owning PAYLOAD (a mesh, points or field), freed with
 * PAYLOAD_FREE; PAYLOAD_BYTES counts towards the cache's budget. */
TgValue *tg__value_new_payload (TgPortType type, void *payload, void (*payload_free) (void *),
                                size_t payload_bytes);
/* The payload of a value tg__value_new_payload made. */
void *tg__value_payload (const TgValue *v);

/* A grid over WIN from V, whose samples outside V's region take the
 * nearest sample of V (clamp to edge).  Caller owns the result. */
TgValue *tg__value_window_clamped (const TgValue *v, const TgRegion *win);
/* Frees the grid buffers value.c keeps for reuse (the end of a node's
 * run, the end of an evaluation). */
void tg__value_pool_trim (void);
/* An evaluation starts or ends: buffers are kept only while one runs
 * (close trims). */
void tg__value_pool_open (void);
void tg__value_pool_close (void);

/* The lower-case extension of PATH, without the dot, into EXT. */
void tg__path_extension (const char *path, char *ext, size_t size);

/* Numbers in a vec2, vec3 or colour value (0 for other types). */
int tg__param_vec_len (TgParamType t);

/* A stream over INNER (which it takes: closing it closes INNER) whose
 * writes fail with ECANCELED once CANCEL (may be NULL) is requested, so
 * that a writer stops at its next flush.  NULL when out of memory (INNER
 * is then left open). */
FILE *tg__cancel_stream_new (FILE *inner, const TgCancel *cancel);
/* The same, and the registered stream digest (io.h) fed with every byte
 * written: at the close, when the writer never seeked, it becomes the
 * digest of staged file INDEX of LIST.  CTX (may be NULL): the node
 * writing, whose threads tg_io_stream_parallel lends the writer. */
FILE *tg__cancel_stream_new_hashed (FILE *inner, const TgCancel *cancel, TgExportList *list,
                                    int index, TgEvalCtx *ctx);
/* tg_eval_parallel in chunks of one item, without progress reports: for
 * a writer, whose many short parallel runs are not the node's progress. */
int tg__eval_parallel_quiet (TgEvalCtx *c, int n, void (*fn) (void *user, int begin, int end),
                             void *user);
/* Records the digest of every byte of staged file I (cancel_stream.c). */
void tg__export_list_set_digest (TgExportList *list, int i, const uint8_t digest[32],
                                 uint64_t bytes);

#endif
