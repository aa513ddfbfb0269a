/* Small helpers for the format code: a growing text buffer and file
 * helpers (read a whole file, replace a file atomically).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tgformats-private.h"

/* --- text buffer ----------------------------------------------------------- */

void
tg__buf_init (TgBuf *b)
{
  memset (b, 0, sizeof *b);
}

void
tg__buf_clear (TgBuf *b)
{
  free (b->data);
  tg__buf_init (b);
}

static bool
buf_reserve (TgBuf *b, size_t extra)
{
  size_t need, cap;
  char *p;

  if (b->oom)
    return false;
  need = b->len + extra + 1;
  if (need <= b->cap)
    return true;
  cap = b->cap ? b->cap : 256;
  while (cap < need)
    cap *= 2;
  p = realloc (b->data, cap);
  if (!p)
    {
      b->oom = true;
      return false;
    }
  b->data = p;
  b->cap = cap;
  return true;
}

void
tg__buf_append (TgBuf *b, const char *s, size_t n)
{
  if (!buf_reserve (b, n))
    return;
  memcpy (b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void
tg__buf_puts (TgBuf *b, const char *s)
{
  tg__buf_append (b, s, strlen (s));
}

void
tg__buf_putc (TgBuf *b, char c)
{
  tg__buf_append (b, &c, 1);
}

void
tg__buf_indent (TgBuf *b, int n)
{
  if (n <= 0 || !buf_reserve (b, (size_t) n))
    return;
  memset (b->data + b->len, ' ', (size_t) n);
  b->len += (size_t) n;
  b->data[b->len] = '\0';
}

void
tg__buf_printf (TgBuf *b, const char *fmt, ...)
{
  va_list ap;
  int n;

  va_start (ap, fmt);
  n = vsnprintf (NULL, 0, fmt, ap);
  va_end (ap);
  if (n < 0 || !buf_reserve (b, (size_t) n))
    return;
  va_start (ap, fmt);
  vsnprintf (b->data + b->len, (size_t) n + 1, fmt, ap);
  va_end (ap);
  b->len += (size_t) n;
}

char *
tg__buf_steal (TgBuf *b)
{
  char *s;

  if (b->oom)
    {
      tg__buf_clear (b);
      return NULL;
    }
  if (!b->data && !buf_reserve (b, 0))
    return NULL;
  if (b->len == 0)
    b->data[0] = '\0';
  s = b->data;
  tg__buf_init (b);
  return s;
}

/* --- files -------------------------------------------------------------------- */

/* .tgraph files are small; this only stops a wrong path (a disk image)
 * from eating the memory. */
#define TG__READ_MAX ((size_t) 512 << 20)

FILE *
tg__fopen_regular (const char *path, TgError *err)
{
  int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), flags;
  struct stat st;
  FILE *f;

  if (fd < 0)
    {
      tg_error_set (err, TG_EIO, "", TG_MSG_CANNOT_OPEN, path, strerror (errno));
      return NULL;
    }
  if (fstat (fd, &st) != 0)
    {
      int e = errno;
      close (fd);
      tg_error_set (err, TG_EIO, "", TG_MSG_CANNOT_OPEN, path, strerror (e));
      return NULL;
    }
  if (!S_ISREG (st.st_mode))
    {
      close (fd);
      tg_error_set (err, TG_EIO, "", TG_MSG_CANNOT_READ_FILE, path,
                    S_ISDIR (st.st_mode)    ? TG_MSG_IS_FOLDER
                    : S_ISFIFO (st.st_mode) ? TG_MSG_IS_FIFO
                                            : TG_MSG_NOT_REGULAR);
      return NULL;
    }
  /* Reads of a regular file never block; clear the flag all the same. */
  flags = fcntl (fd, F_GETFL);
  if (flags < 0 || fcntl (fd, F_SETFL, flags & ~O_NONBLOCK) < 0 || !(f = fdopen (fd, "rb")))
    {
      tg_error_set (err, TG_EIO, "", TG_MSG_CANNOT_OPEN, path, strerror (errno));
      close (fd);
      return NULL;
    }
  return f;
}

int
tg__read_file (const char *path, char **data, size_t *len, TgError *err)
{
  FILE *f;
  char *buf = NULL;
  size_t n = 0, cap = 0;

  *data = NULL;
  *len = 0;
  f = tg__fopen_regular (path, err);
  if (!f)
    return err && err->code ? err->code : TG_EIO;
  for (;;)
    {
      size_t got;
      if (cap - n < 65536)
        {
          size_t ncap = cap ? cap * 2 : 65536 + 1;
          char *p;
          if (ncap > TG__READ_MAX + 1)
            {
              free (buf);
              fclose (f);
              return tg_error_set (err, TG_EIO, "", TG_MSG_TOO_LARGE_GRAPH, path);
            }
          p = realloc (buf, ncap);
          if (!p)
            {
              free (buf);
              fclose (f);
              return tg_error_set (err, TG_ENOMEM, "", TG_MSG_OOM_READING, path);
            }
          buf = p;
          cap = ncap;
        }
      got = fread (buf + n, 1, cap - n - 1, f);
      n += got;
      if (got == 0)
        break;
    }
  if (ferror (f))
    {
      int e = errno;
      free (buf);
      fclose (f);
      return tg_error_set (err, TG_EIO, "", TG_MSG_CANNOT_READ_FILE, path, strerror (e));
    }
  fclose (f);
  buf[n] = '\0';
  *data = buf;
  *len = n;
  return 0;
}

static atomic_uint tmp_counter;

int
tg__write_file_atomic (const char *path, const void *data, size_t len, TgError *err)
{
  const char *slash = strrchr (path, '/');
  size_t dir_len = slash ? (size_t) (slash - path) : 0;
  const char *base = slash ? slash + 1 : path;
  char *tmp;
  size_t tmp_size;
  int fd = -1, e;
  const char *p = data;
  size_t left = len;

  if (!*base)
    return tg_error_set (err, TG_EINVAL, "", TG_MSG_SAVE_NOT_FILE_NAME, path);

  /* A hidden name in the same folder, so rename() stays on one file system. */
  tmp_size = strlen (path) + 64;
  tmp = malloc (tmp_size);
  if (!tmp)
    return tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
  for (int attempt = 0; attempt < 100 && fd < 0; attempt++)
    {
      unsigned k = atomic_fetch_add (&tmp_counter, 1);
      snprintf (tmp, tmp_size, "%.*s%s.%s.tmp%ld-%u", (int) dir_len, path, slash ? "/" : "",
                base, (long) getpid (), k);
      fd = open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd < 0 && errno != EEXIST)
        break;
    }
  if (fd < 0)
    {
      e = errno;
      tg_error_set (err, TG_EIO, "", TG_MSG_CANNOT_SAVE, path, strerror (e));
      free (tmp);
      return TG_EIO;
    }

  while (left > 0)
    {
      ssize_t w = write (fd, p, left);
      if (w < 0)
        {
          if (errno == EINTR)
            continue;
          goto fail;
        }
      p += w;
      left -= (size_t) w;
    }
  /* Saving over a file keeps its permissions; a new file gets the umask's. */
  {
    struct stat st;
    if (stat (path, &st) == 0 && S_ISREG (st.st_mode))
      fchmod (fd, st.st_mode & 07777);
  }
  if (fsync (fd) != 0)
    goto fail;
  if (close (fd) != 0)
    {
      fd = -1;
      goto fail;
    }
  fd = -1;
  if (rename (tmp, path) != 0)
    goto fail;
  free (tmp);

  /* Make the rename itself durable; failure here loses nothing already saved. */
  {
    char *dir = strndup (dir_len ? path : ".", dir_len ? dir_len : 1);
    if (dir)
      {
        int dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0)
          {
            fsync (dfd);
            close (dfd);
          }
        free (dir);
      }
  }
  return 0;

fail:
  e = errno;
  if (fd >= 0)
    close (fd);
  unlink (tmp);
  free (tmp);
  return tg_error_set (err, TG_EIO, "", TG_MSG_CANNOT_SAVE, path, strerror (e));
}
