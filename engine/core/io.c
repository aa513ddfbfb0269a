/* The registries of image readers and writers that formats/ fills, and
 * the path rules for exports. */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tgraph/io.h"

#define MAX_ENTRIES 32

typedef struct
{
  char name[16];
  void (*fn) (void);
} Entry;

static pthread_mutex_t io_lock = PTHREAD_MUTEX_INITIALIZER;
static Entry readers[MAX_ENTRIES], info_readers[MAX_ENTRIES], writers[MAX_ENTRIES];
static Entry rows_writers[MAX_ENTRIES];
static int n_rows_writers;
static const TgStreamDigest *stream_digest;
static Entry mesh_readers[MAX_ENTRIES], mesh_writers[MAX_ENTRIES], points_writers[MAX_ENTRIES];
static int n_readers, n_info_readers, n_writers, n_mesh_readers, n_mesh_writers, n_points_writers;

static int
put (Entry *table, int *n, const char *name, void (*fn) (void))
{
  int rc = 0, i;

  if (name == NULL || strlen (name) >= sizeof table[0].name || fn == NULL)
    return TG_EINVAL;
  pthread_mutex_lock (&io_lock);
  for (i = 0; i < *n; i++)
    if (strcmp (table[i].name, name) == 0)
      break;
  if (i == *n && *n == MAX_ENTRIES)
    rc = TG_ENOMEM;
  else
    {
      strcpy (table[i].name, name);
      table[i].fn = fn;
      if (i == *n)
        (*n)++;
    }
  pthread_mutex_unlock (&io_lock);
  return rc;
}

static void (*get (const Entry *table, const int *n, const char *name)) (void)
{
  void (*fn) (void) = NULL;

  if (name == NULL)
    return NULL;
  pthread_mutex_lock (&io_lock);
  for (int i = 0; i < *n; i++)
    if (strcmp (table[i].name, name) == 0)
      fn = table[i].fn;
  pthread_mutex_unlock (&io_lock);
  return fn;
}

/* Function pointers of different types round-trip through void (*) (void). */
int
tg_io_register_image_reader (const char *ext, TgImageReader fn)
{
  return put (readers, &n_readers, ext, (void (*) (void)) fn);
}

int
tg_io_register_image_info_reader (const char *ext, TgImageInfoReader fn)
{
  return put (info_readers, &n_info_readers, ext, (void (*) (void)) fn);
}

int
tg_io_register_image_writer (const char *format, TgImageWriter fn)
{
  return put (writers, &n_writers, format, (void (*) (void)) fn);
}

int
tg_io_register_image_rows_writer (const char *format, TgImageRowsWriter fn)
{
  return put (rows_writers, &n_rows_writers, format, (void (*) (void)) fn);
}

TgImageRowsWriter
tg_io_image_rows_writer (const char *format)
{
  return (TgImageRowsWriter) get (rows_writers, &n_rows_writers, format);
}

void
tg_io_register_stream_digest (const TgStreamDigest *d)
{
  pthread_mutex_lock (&io_lock);
  stream_digest = d && d->state_size <= TG_IO_DIGEST_STATE_MAX ? d : NULL;
  pthread_mutex_unlock (&io_lock);
}

const TgStreamDigest *
tg_io_stream_digest (void)
{
  const TgStreamDigest *d;

  pthread_mutex_lock (&io_lock);
  d = stream_digest;
  pthread_mutex_unlock (&io_lock);
  return d;
}

TgImageReader
tg_io_image_reader (const char *ext)
{
  return (TgImageReader) get (readers, &n_readers, ext);
}

TgImageWriter
tg_io_image_writer (const char *format)
{
  return (TgImageWriter) get (writers, &n_writers, format);
}

int
tg_io_register_mesh_writer (const char *format, TgMeshWriter fn)
{
  return put (mesh_writers, &n_mesh_writers, format, (void (*) (void)) fn);
}

int
tg_io_register_mesh_reader (const char *ext, TgMeshReader fn)
{
  return put (mesh_readers, &n_mesh_readers, ext, (void (*) (void)) fn);
}

int
tg_io_register_points_writer (const char *format, TgPointsWriter fn)
{
  return put (points_writers, &n_points_writers, format, (void (*) (void)) fn);
}

TgMeshWriter
tg_io_mesh_writer (const char *format)
{
  return (TgMeshWriter) get (mesh_writers, &n_mesh_writers, format);
}

TgMeshReader
tg_io_mesh_reader (const char *ext)
{
  return (TgMeshReader) get (mesh_readers, &n_mesh_readers, ext);
}

TgPointsWriter
tg_io_points_writer (const char *format)
{
  return (TgPointsWriter) get (points_writers, &n_points_writers, format);
}

/* The lower-case extension of PATH into EXT ("" when none). */
void
tg__path_extension (const char *path, char *ext, size_t size)
{
  const char *dot = strrchr (path, '.');

  ext[0] = '\0';
  if (dot && strlen (dot + 1) < size && strchr (dot, '/') == NULL)
    {
      size_t i = 0;
      for (; dot[1 + i]; i++)
        ext[i] = (char) tolower ((unsigned char) dot[1 + i]);
      ext[i] = '\0';
    }
}

/* The reader of TABLE for PATH's extension, or NULL and ERR set. */
static void (*reader_for (const Entry *table, const int *n, const char *path,
                          TgError *err)) (void)
{
  char ext[16];
  void (*fn) (void);

  tg__path_extension (path, ext, sizeof ext);
  fn = get (table, n, ext);
  if (fn == NULL)
    tg_error_set (err, TG_EFORMAT, NULL, TG_MSG_NO_READER, ext[0] ? ext : "extension-less", path);
  return fn;
}

int
tg_io_read_image (const char *path, TgImage *out, TgError *err)
{
  TgImageReader reader = (TgImageReader) reader_for (readers, &n_readers, path, err);

  memset (out, 0, sizeof *out);
  return reader ? reader (path, out, err) : TG_EFORMAT;
}

int
tg_io_read_image_info (const char *path, TgImage *info, TgError *err)
{
  TgImageInfoReader reader
    = (TgImageInfoReader) reader_for (info_readers, &n_info_readers, path, err);

  memset (info, 0, sizeof *info);
  return reader ? reader (path, info, err) : TG_EFORMAT;
}

bool
tg_path_is_safe_relative (const char *rel)
{
  const char *p = rel;

  if (rel == NULL || rel[0] == '\0' || rel[0] == '/' || strchr (rel, '\\'))
    return false;
  if (isalpha ((unsigned char) rel[0]) && rel[1] == ':')
    return false;
  while (*p)
    {
      size_t len = strcspn (p, "/");
      if (len == 0)
        return false; /* "a//b" or a trailing '/' */
      if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
        return false;
      p += len;
      if (*p == '/')
        p++;
      if (*p == '\0' && p[-1] == '/')
        return false;
    }
  return true;
}

void
tg_image_clear (TgImage *img)
{
  if (img == NULL)
    return;
  free (img->data);
  memset (img, 0, sizeof *img);
}

size_t
tg_image_bytes (const TgImage *img)
{
  return (size_t) img->width * (size_t) img->height * (size_t) img->channels
         * (size_t) (img->bits / 8);
}

/* --- raw tiles --------------------------------------------------------------- */

static const char tile_magic[8] = { 'T', 'G', 'T', 'I', 'L', 'E', '1', '\n' };

int
tg_tile_image_write (FILE *f, const TgImage *img, TgError *err)
{
  int32_t head[5] = { img->width, img->height, img->channels, img->bits, img->south_first };
  size_t n = tg_image_bytes (img);

  if (fwrite (tile_magic, 1, sizeof tile_magic, f) != sizeof tile_magic
      || fwrite (head, sizeof head, 1, f) != 1 || (n && fwrite (img->data, 1, n, f) != n))
    return tg_error_set (err, TG_EIO, NULL, "write error");
  return 0;
}

int
tg_tile_image_read (const char *path, TgImage *out, TgError *err)
{
  FILE *f = fopen (path, "rb");
  char magic[8];
  int32_t head[5];
  size_t n;
  int rc = 0;

  memset (out, 0, sizeof *out);
  if (f == NULL)
    return tg_error_set (err, TG_EIO, NULL, TG_MSG_CANNOT_OPEN_PLAIN, path);
  if (fread (magic, 1, sizeof magic, f) != sizeof magic || memcmp (magic, tile_magic, sizeof magic)
      || fread (head, sizeof head, 1, f) != 1)
    rc = tg_error_set (err, TG_EPARSE, NULL, TG_MSG_NOT_TILE_IMAGE, path);
  else if (head[0] < 1 || head[1] < 1 || head[0] > TG_RESOLUTION_MAX || head[1] > TG_RESOLUTION_MAX
           || head[2] < 1 || head[2] > 4 || (head[3] != 8 && head[3] != 16 && head[3] != 32)
           || (head[4] != 0 && head[4] != 1))
    rc = tg_error_set (err, TG_EPARSE, NULL, TG_MSG_BAD_TILE_HEADER, path);
  if (rc == 0)
    {
      out->width = head[0];
      out->height = head[1];
      out->channels = head[2];
      out->bits = head[3];
      out->south_first = head[4] != 0;
      n = tg_image_bytes (out);
      out->data = malloc (n ? n : 1);
      if (out->data == NULL)
        rc = tg_error_set (err, TG_ENOMEM, NULL, TG_MSG_OOM_READING_Q, path);
      else if (fread (out->data, 1, n, f) != n || fgetc (f) != EOF)
        rc = tg_error_set (err, TG_EPARSE, NULL, TG_MSG_TILE_TRUNCATED, path);
    }
  fclose (f);
  if (rc < 0)
    tg_image_clear (out);
  return rc;
}
