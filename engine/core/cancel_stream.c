/* A stream that fails its writes once a cancel was asked.
 *
 * Export writers (formats/) know nothing of the engine's cancel token:
 * they write through a FILE and stop at the first write that fails, as on
 * a full disk.  The engine hands them this stream over the staged file,
 * so a cancel reaches a writer at its next buffer flush (a few tens of
 * KiB of output) and the staged file is then removed with the export.
 * A writer that works a while before its first write (a .glb takes its
 * bounds first) asks tg_io_stream_cancelled between pieces of that work:
 * live streams are kept in a short list so it can find the token.
 *
 * The same stream hashes what passes through it with the digest formats/
 * registers (SHA-256 for the manifest), so a build need not read its
 * files back; a writer that seeks (OpenEXR) leaves its file unhashed.
 * It also lends the writer its node's threads (tg_io_stream_parallel):
 * a PNG deflates its strips side by side.
 */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <tgraph/engine.h>
#include <tgraph/io.h>

#include "internal.h"

/* Output is handed to the staged file in pieces of this size: how much a
 * writer may produce between two looks at the token. */
#define CANCEL_STREAM_BUFFER (64 * 1024)

typedef struct CancelStream CancelStream;
struct CancelStream
{
  FILE *inner;
  FILE *outer; /* the stream handed to the writer */
  const TgCancel *cancel;
  TgEvalCtx *ctx; /* the node writing, whose threads the writer may use */
  CancelStream *next;
  /* The digest of the bytes written so far, while DIGEST is set. */
  const TgStreamDigest *digest;
  TgExportList *list;
  int index;
  uint64_t bytes;
  _Alignas (max_align_t) unsigned char state[TG_IO_DIGEST_STATE_MAX];
};

/* The open cancel streams (a build has one per writer at a time). */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static CancelStream *live;

bool
tg_io_stream_cancelled (FILE *f)
{
  bool yes = false;

  pthread_mutex_lock (&live_lock);
  for (const CancelStream *s = live; s; s = s->next)
    if (s->outer == f)
      {
        yes = tg_cancel_is_requested (s->cancel);
        break;
      }
  pthread_mutex_unlock (&live_lock);
  return yes;
}

int
tg_io_stream_parallel (FILE *f, int n, void (*fn) (void *user, int begin, int end), void *user)
{
  TgEvalCtx *ctx = NULL;

  pthread_mutex_lock (&live_lock);
  for (const CancelStream *s = live; s; s = s->next)
    if (s->outer == f)
      {
        ctx = s->ctx;
        break;
      }
  pthread_mutex_unlock (&live_lock);
  if (ctx)
    return tg__eval_parallel_quiet (ctx, n, fn, user);
  if (n > 0)
    fn (user, 0, n);
  return 0;
}

/* Big writes (a whole mesh buffer) bypass the buffer: they go through
 * in pieces, the token read before each. */
static ssize_t
cancel_stream_write (void *cookie, const char *buf, size_t size)
{
  CancelStream *s = cookie;
  size_t done = 0;

  while (done < size)
    {
      size_t piece = size - done < CANCEL_STREAM_BUFFER ? size - done : CANCEL_STREAM_BUFFER;
      if (tg_cancel_is_requested (s->cancel))
        {
          errno = ECANCELED;
          break;
        }
      if (fwrite (buf + done, 1, piece, s->inner) != piece)
        break;
      if (s->digest)
        {
          s->digest->update (s->state, buf + done, piece);
          s->bytes += piece;
        }
      done += piece;
    }
  return (ssize_t) done;
}

/* Writers whose format puts a table before the data it indexes (OpenEXR)
 * come back to write it: the staged file seeks. */
static int
cancel_stream_seek (void *cookie, off64_t *offset, int whence)
{
  CancelStream *s = cookie;
  off64_t at;

  /* Bytes may now be written over: no digest of the stream's bytes. */
  s->digest = NULL;
  if (fseeko64 (s->inner, *offset, whence) != 0 || (at = ftello64 (s->inner)) < 0)
    return -1;
  *offset = at;
  return 0;
}

static int
cancel_stream_close (void *cookie)
{
  CancelStream *s = cookie;
  int rc = fclose (s->inner);

  if (rc == 0 && s->digest)
    {
      uint8_t d[32];

      s->digest->final (s->state, d);
      tg__export_list_set_digest (s->list, s->index, d, s->bytes);
    }

  pthread_mutex_lock (&live_lock);
  for (CancelStream **p = &live; *p; p = &(*p)->next)
    if (*p == s)
      {
        *p = s->next;
        break;
      }
  pthread_mutex_unlock (&live_lock);
  free (s);
  return rc;
}

FILE *
tg__cancel_stream_new (FILE *inner, const TgCancel *cancel)
{
  return tg__cancel_stream_new_hashed (inner, cancel, NULL, -1, NULL);
}

FILE *
tg__cancel_stream_new_hashed (FILE *inner, const TgCancel *cancel, TgExportList *list, int index,
                              TgEvalCtx *ctx)
{
  static const cookie_io_functions_t io = {
    .write = cancel_stream_write,
    .seek = cancel_stream_seek,
    .close = cancel_stream_close,
  };
  CancelStream *s = malloc (sizeof *s);
  FILE *f;

  if (s == NULL)
    return NULL;
  s->inner = inner;
  s->cancel = cancel;
  s->ctx = ctx;
  s->digest = list ? tg_io_stream_digest () : NULL;
  s->list = list;
  s->index = index;
  s->bytes = 0;
  if (s->digest)
    s->digest->init (s->state);
  f = fopencookie (s, "wb", io);
  if (f == NULL)
    {
      free (s);
      return NULL;
    }
  /* The outer buffer is the only one: the inner stream writes straight
   * through, so the staged file holds what was flushed. */
  setvbuf (inner, NULL, _IONBF, 0);
  setvbuf (f, NULL, _IOFBF, CANCEL_STREAM_BUFFER);
  s->outer = f;
  pthread_mutex_lock (&live_lock);
  s->next = live;
  live = s;
  pthread_mutex_unlock (&live_lock);
  return f;
}
