/* Export staging and commit: the files of a build appear in the output
 * folder together or not at all, and never outside it.
 *
 * Every name below the output folder is resolved one component at a time
 * from a descriptor of that folder with O_NOFOLLOW, so a symbolic link
 * planted under it, before or during the build, cannot redirect a write;
 * the output folder itself may be a link the user chose.  Files are
 * staged as hidden temporaries (.NAME.tmp-HOST-PID-N) beside their final
 * names.  Commit checks every destination before the first rename, keeps
 * the old files aside (hard links) until the last file, the manifest, is
 * in place, and puts them back if a rename fails.
 */
#define _GNU_SOURCE /* sync_file_range */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export_list-private.h"
#include "internal.h"
#include "tgraph/engine.h"
#include "tgraph/io.h"

/* A file of the list: what callers see, and where it is staged. */
typedef struct
{
  TgExportFile pub;  /* its strings are owned here */
  char *tmp_path;    /* the staged file while not yet committed, else NULL */
  bool has_digest;   /* DIGEST and DIGEST_BYTES: every byte written, hashed */
  uint8_t digest[32];
  uint64_t digest_bytes;
} Entry;

struct TgExportList
{
  char *out_dir;
  Entry *files;
  int n_files;
  char **new_dirs;   /* folders staging created, parents first, relative to
                      * out_dir ("": out_dir itself) */
  int n_new_dirs;
  bool committed;
  int out_fd;        /* out_dir, while out_fd_open: every name below it is
                      * resolved from here without following links */
  bool out_fd_open;
  TgExportListHook before_rename;
  void *before_rename_data;
};

/* --- temporary names --------------------------------------------------------- */

static char host_name[72];
static pthread_once_t host_once = PTHREAD_ONCE_INIT;

/* The host part of a temporary name: the host name, with anything that
 * could end or confuse a file name replaced. */
static void
host_init (void)
{
  char buf[256] = "";

  if (gethostname (buf, sizeof buf - 1) != 0 || buf[0] == '\0')
    strcpy (buf, "localhost");
  snprintf (host_name, sizeof host_name, "%s", buf);
  for (char *p = host_name; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')
          || *p == '.' || *p == '-' || *p == '_'))
      *p = '_';
}

static const char *
host (void)
{
  pthread_once (&host_once, host_init);
  return host_name;
}

int
tg_temp_name (char *buf, size_t size, const char *name)
{
  static atomic_uint counter;
  int n = snprintf (buf, size, "%s.tmp-%s-%ld-%u", name, host (), (long) getpid (),
                    atomic_fetch_add (&counter, 1));

  return n >= 0 && (size_t) n < size ? 0 : TG_EPATH;
}

/* The PID in NAME if it is a temporary name tg_temp_name gave on this
 * host, else 0. */
static long
temp_name_pid (const char *name)
{
  char infix[96];
  size_t len = (size_t) snprintf (infix, sizeof infix, ".tmp-%s-", host ());

  for (const char *p = strstr (name, infix); p; p = strstr (p + 1, infix))
    {
      const char *s = p + len;
      char *end;
      long pid;
      if (*s < '0' || *s > '9')
        continue;
      pid = strtol (s, &end, 10);
      if (*end != '-' || end[1] == '\0' || pid <= 0 || pid > INT_MAX)
        continue;
      for (s = end + 1; *s >= '0' && *s <= '9'; s++)
        ;
      if (*s == '\0')
        return pid;
    }
  return 0;
}

int
tg_temp_remove_stale (int dir_fd)
{
  int fd = dup (dir_fd), removed = 0;
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *e;

  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return 0;
    }
  while ((e = readdir (d)) != NULL)
    {
      long pid = temp_name_pid (e->d_name);
      struct stat st;
      /* EPERM: alive, someone else's.  A PID reused since is kept too. */
      if (pid <= 0 || pid == (long) getpid () || kill ((pid_t) pid, 0) == 0 || errno != ESRCH)
        continue;
      if (fstatat (dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG (st.st_mode)
          && unlinkat (dir_fd, e->d_name, 0) == 0)
        removed++;
    }
  closedir (d);
  return removed;
}

/* --- resolving names below the output folder ------------------------------ */

static int
open_out (TgExportList *list, TgError *err)
{
  if (list->out_fd_open)
    return 0;
  if (list->out_dir == NULL)
    return tg_error_set (err, TG_EINVAL, NULL, "no output folder");
  list->out_fd = open (list->out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (list->out_fd < 0)
    return tg_error_set (err, TG_EIO, NULL, "cannot open the output folder \"%s\": %s",
                         list->out_dir, strerror (errno));
  list->out_fd_open = true;
  return 0;
}

static void
remember_dir (TgExportList *list, const char *rel, size_t len)
{
  char **grown = realloc (list->new_dirs, sizeof (char *) * (size_t) (list->n_new_dirs + 1));
  char *copy = strndup (rel, len);

  /* Without memory the folder stays; only the tidy-up is lost. */
  if (grown)
    list->new_dirs = grown;
  if (grown == NULL || copy == NULL)
    {
      free (copy);
      return;
    }
  list->new_dirs[list->n_new_dirs++] = copy;
}

/* Says why component REL[0..LEN) (named NAME in PARENT) cannot be entered. */
static int
walk_error (int parent, const char *rel, size_t len, const char *name, int errnum,
            TgError *err)
{
  struct stat st;

  if (fstatat (parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    {
      if (S_ISLNK (st.st_mode))
        return tg_error_set (err, TG_EPATH, NULL,
                             "export path \"%s\": \"%.*s\" is a symbolic link; refusing to "
                             "write outside the output folder",
                             rel, (int) len, rel);
      if (!S_ISDIR (st.st_mode))
        return tg_error_set (err, TG_EPATH, NULL,
                             "export path \"%s\": \"%.*s\" is a file, not a folder", rel,
                             (int) len, rel);
    }
  return tg_error_set (err, TG_EIO, NULL, "export path \"%s\": cannot open the folder \"%.*s\": %s",
                       rel, (int) len, rel, strerror (errnum));
}

/* A descriptor (the caller closes it) of the folder that holds REL, every
 * component entered without following a link; with CREATE, missing
 * folders are made and remembered.  A negative TG_E* on failure. */
static int
open_parent (TgExportList *list, const char *rel, bool create, TgError *err)
{
  const char *p = rel, *slash;
  int rc, cur;

  if ((rc = open_out (list, err)) < 0)
    return rc;
  cur = dup (list->out_fd);
  if (cur < 0)
    return tg_error_set (err, TG_EIO, NULL, "%s", strerror (errno));
  while ((slash = strchr (p, '/')) != NULL)
    {
      char name[NAME_MAX + 1];
      size_t n = (size_t) (slash - p);
      int next;
      if (n > NAME_MAX)
        {
          close (cur);
          return tg_error_set (err, TG_EPATH, NULL, "export path \"%s\": name too long", rel);
        }
      memcpy (name, p, n);
      name[n] = '\0';
      next = openat (cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next < 0 && errno == ENOENT && create)
        {
          if (mkdirat (cur, name, 0777) == 0)
            remember_dir (list, rel, (size_t) (slash - rel));
          else if (errno != EEXIST)
            {
              rc = tg_error_set (err, TG_EIO, NULL, "cannot create the folder \"%.*s\": %s",
                                 (int) (slash - rel), rel, strerror (errno));
              close (cur);
              return rc;
            }
          next = openat (cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
      if (next < 0)
        {
          rc = walk_error (cur, rel, (size_t) (slash - rel), name, errno, err);
          close (cur);
          return rc;
        }
      close (cur);
      cur = next;
      p = slash + 1;
    }
  return cur;
}

static const char *
leaf (const char *path)
{
  const char *slash = strrchr (path, '/');
  return slash ? slash + 1 : path;
}

/* --- staging --------------------------------------------------------------- */

TgExportList *
tg_export_list_new (const char *out_dir, TgError *err)
{
  TgExportList *list = calloc (1, sizeof *list);

  if (list == NULL || (list->out_dir = strdup (out_dir)) == NULL)
    {
      free (list);
      tg_error_set (err, TG_ENOMEM, NULL, NULL);
      return NULL;
    }
  if (mkdir (out_dir, 0777) == 0)
    remember_dir (list, "", 0);
  else if (errno != EEXIST)
    {
      tg_error_set (err, TG_EIO, NULL, "cannot create the output folder \"%s\": %s", out_dir,
                    strerror (errno));
      tg_export_list_free (list);
      return NULL;
    }
  if (open_out (list, err) < 0)
    {
      tg_export_list_free (list);
      return NULL;
    }
  return list;
}

int
tg_export_list_n_files (const TgExportList *list)
{
  return list->n_files;
}

const TgExportFile *
tg_export_list_file (const TgExportList *list, int i)
{
  return &list->files[i].pub;
}

static char *
strdup_or_empty (const char *s)
{
  return strdup (s ? s : "");
}

/* A copy of the N strings of V (NULL when V is NULL or memory ran out:
 * *OOM tells which). */
static char **
strv_dup (const char *const *v, int n, bool *oom)
{
  char **out;

  *oom = false;
  if (!v || n <= 0)
    return NULL;
  if (!(out = calloc ((size_t) n, sizeof *out)))
    {
      *oom = true;
      return NULL;
    }
  for (int i = 0; i < n; i++)
    if (!(out[i] = strdup_or_empty (v[i])))
      {
        while (i-- > 0)
          free (out[i]);
        free (out);
        *oom = true;
        return NULL;
      }
  return out;
}

static void
strv_free (const char *const *v, int n)
{
  for (int i = 0; v && i < n; i++)
    free ((char *) v[i]);
  free ((void *) v);
}

static int
add_entry (TgExportList *list, const TgExportFile *file, const char *tmp)
{
  Entry *grown = realloc (list->files, sizeof (Entry) * (size_t) (list->n_files + 1));
  Entry *en;
  char *path, *format, *node_id, *tmp_path, **names;
  bool names_oom;

  if (grown == NULL)
    return TG_ENOMEM;
  list->files = grown;
  path = strdup (file->path);
  format = strdup_or_empty (file->format);
  node_id = strdup_or_empty (file->node_id);
  tmp_path = strdup (tmp);
  names = strv_dup (file->channel_names, file->n_channel_names, &names_oom);
  if (!path || !format || !node_id || !tmp_path || names_oom)
    {
      free (path);
      free (format);
      free (node_id);
      free (tmp_path);
      strv_free ((const char *const *) names, file->n_channel_names);
      return TG_ENOMEM;
    }
  en = &list->files[list->n_files++];
  en->pub = *file;
  en->pub.path = path;
  en->pub.format = format;
  en->pub.node_id = node_id;
  en->pub.channel_names = (const char *const *) names;
  en->pub.n_channel_names = names ? file->n_channel_names : 0;
  en->pub.bytes = 0;
  en->tmp_path = tmp_path;
  en->has_digest = false;
  return 0;
}

/* Whether no file staged so far lies in the folder of REL. */
static bool
first_in_folder (const TgExportList *list, const char *rel)
{
  size_t n = (size_t) (leaf (rel) - rel);

  for (int i = 0; i < list->n_files; i++)
    {
      const char *p = list->files[i].pub.path;
      if ((size_t) (leaf (p) - p) == n && strncmp (p, rel, n) == 0)
        return false;
    }
  return true;
}

FILE *
tg_export_list_stage (TgExportList *list, const TgExportFile *file, TgError *err)
{
  const char *rel = file->path;
  char name[NAME_MAX + 1], tmp_name[NAME_MAX + 1], tmp[PATH_MAX];
  int dir, fd;
  FILE *f;

  if (!tg_path_is_safe_relative (rel))
    {
      tg_error_set (err, TG_EPATH, NULL,
                    "export path \"%s\" must be relative to the output folder", rel);
      return NULL;
    }
  for (int i = 0; i < list->n_files; i++)
    if (strcmp (list->files[i].pub.path, rel) == 0)
      {
        tg_error_set (err, TG_EPATH, NULL, "\"%s\" is written twice", rel);
        return NULL;
      }
  if ((dir = open_parent (list, rel, true, err)) < 0)
    return NULL;
  /* A build that died (SIGKILL, a crash) left its temporaries here. */
  if (first_in_folder (list, rel))
    tg_temp_remove_stale (dir);
  if ((size_t) snprintf (name, sizeof name, ".%s", leaf (rel)) >= sizeof name
      || tg_temp_name (tmp_name, sizeof tmp_name, name) < 0
      || (size_t) snprintf (tmp, sizeof tmp, "%s/%.*s%s", list->out_dir,
                            (int) (leaf (rel) - rel), rel, tmp_name) >= sizeof tmp)
    {
      close (dir);
      tg_error_set (err, TG_EPATH, NULL, "export path \"%s\": name too long", rel);
      return NULL;
    }
  fd = openat (dir, tmp_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  f = fd >= 0 ? fdopen (fd, "wb") : NULL;
  if (f == NULL)
    {
      tg_error_set (err, TG_EIO, NULL, "cannot create \"%s\": %s", tmp, strerror (errno));
      if (fd >= 0)
        {
          close (fd);
          unlinkat (dir, tmp_name, 0);
        }
    }
  else if (add_entry (list, file, tmp) < 0)
    {
      /* Recorded or not, the file goes now: free finds nothing left. */
      fclose (f);
      f = NULL;
      unlinkat (dir, tmp_name, 0);
      tg_error_set (err, TG_ENOMEM, NULL, NULL);
    }
  close (dir);
  return f;
}

int
tg_export_list_close_stream (TgExportList *list, FILE *f, const char *rel_path, TgError *err)
{
  /* The failed write set errno; nothing since has failed to reset it. */
  int e = ferror (f) ? errno : 0;
  bool failed = ferror (f) != 0;

  if (fflush (f) != 0)
    {
      e = e ? e : errno;
      failed = true;
    }
  if (fclose (f) != 0)
    {
      e = e ? e : errno;
      failed = true;
    }
  if (!failed)
    return 0;
  return tg_error_set (err, TG_EIO, NULL, "cannot write \"%s/%s\": %s", list->out_dir, rel_path,
                       strerror (e ? e : EIO));
}

int
tg_export_list_open_staged (TgExportList *list, int i, TgError *err)
{
  const Entry *en = &list->files[i];
  const char *path = en->pub.path;
  int dir, fd;

  if (en->tmp_path == NULL)
    return tg_error_set (err, TG_EINVAL, path, "\"%s\" is not staged", path);
  if ((dir = open_parent (list, path, false, err)) < 0)
    return dir;
  fd = openat (dir, leaf (en->tmp_path), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  close (dir);
  if (fd < 0)
    return tg_error_set (err, TG_EIO, path, "cannot open \"%s\": %s", en->tmp_path,
                         strerror (errno));
  return fd;
}

/* How much of a staged file goes to the disk between two looks at the
 * token: a few milliseconds of writing.  Each piece is started before the
 * previous one is waited for, so the disk always has work queued; the
 * last is left to commit's fsync. */
#define SYNC_PIECE (4 << 20)
#define SYNC_WAIT (SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER)

int
tg_export_list_sync (TgExportList *list, int i, const TgCancel *cancel, TgError *err)
{
  const char *path = list->files[i].pub.path;
  struct stat st;
  int fd = tg_export_list_open_staged (list, i, err), rc = 0;

  if (fd < 0)
    return fd;
  if (fstat (fd, &st) != 0)
    rc = tg_error_set (err, TG_EIO, path, "cannot sync \"%s\": %s", path, strerror (errno));
  for (off_t off = 0; rc == 0 && off < st.st_size; off += SYNC_PIECE)
    {
      if (tg_cancel_is_requested (cancel))
        rc = tg_error_set (err, TG_ECANCELLED, "", TG_MSG_CANCELLED);
      else if (sync_file_range (fd, off, SYNC_PIECE, SYNC_FILE_RANGE_WRITE) != 0
               || (off > 0 && sync_file_range (fd, off - SYNC_PIECE, SYNC_PIECE, SYNC_WAIT) != 0))
        {
          /* Not every file system has it: commit's fsync does it all. */
          if (errno == ENOSYS || errno == EINVAL || errno == ESPIPE)
            break;
          rc = tg_error_set (err, TG_EIO, path, "cannot sync \"%s\": %s", path,
                             strerror (errno));
        }
    }
  close (fd);
  return rc;
}

/* --- commit ---------------------------------------------------------------- */

typedef struct
{
  int dir;              /* the folder that holds the file, or -1 */
  char aside[NAME_MAX + 1]; /* the old file's temporary name, or "" */
  bool aside_by_rename; /* no hard links here: moved aside just before */
  bool renamed;
} Commit;

/* Puts back what commit did to the first N files, in reverse. */
static void
undo (const TgExportList *list, Commit *c, int n)
{
  for (int i = n - 1; i >= 0; i--)
    {
      const Entry *f = &list->files[i];
      const char *name = leaf (f->pub.path);
      if (c[i].aside[0] && (c[i].renamed || c[i].aside_by_rename))
        {
          /* Should this fail, the old file stays under its aside name. */
          renameat (c[i].dir, c[i].aside, c[i].dir, name);
          c[i].aside[0] = '\0';
        }
      else if (c[i].renamed)
        renameat (c[i].dir, name, c[i].dir, leaf (f->tmp_path));
    }
}

/* Checks where F goes and keeps a link to the file it replaces. */
static int
prepare (TgExportList *list, Entry *f, Commit *c, TgError *err)
{
  const char *name = leaf (f->pub.path);
  char hidden[NAME_MAX + 1];
  struct stat st;
  int fd;

  if ((c->dir = open_parent (list, f->pub.path, false, err)) < 0)
    return c->dir;
  /* Make the data durable before the name appears. */
  fd = openat (c->dir, leaf (f->tmp_path), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || fsync (fd) != 0 || fstat (fd, &st) != 0)
    {
      int e = errno;
      if (fd >= 0)
        close (fd);
      return tg_error_set (err, TG_EIO, f->pub.path, "cannot sync \"%s\": %s", f->tmp_path,
                           strerror (e));
    }
  close (fd);
  f->pub.bytes = (uint64_t) st.st_size;
  if (fstatat (c->dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? 0
                           : tg_error_set (err, TG_EIO, f->pub.path, "cannot write \"%s\": %s",
                                           f->pub.path, strerror (errno));
  if (S_ISDIR (st.st_mode))
    return tg_error_set (err, TG_EPATH, f->pub.path,
                         "%s%s%sa folder of that name is in the way; nothing was replaced",
                         f->pub.node_id && f->pub.node_id[0] ? "node \"" : "",
                         f->pub.node_id && f->pub.node_id[0] ? f->pub.node_id : "",
                         f->pub.node_id && f->pub.node_id[0] ? "\" cannot write here: " : "");
  /* A link at the final name is replaced, never written through. */
  if (snprintf (hidden, sizeof hidden, ".%s", name) >= (int) sizeof hidden
      || tg_temp_name (c->aside, sizeof c->aside, hidden) < 0)
    {
      c->aside[0] = '\0';
      return tg_error_set (err, TG_EPATH, f->pub.path, "\"%s\": name too long", f->pub.path);
    }
  if (linkat (c->dir, name, c->dir, c->aside, 0) == 0)
    return 0;
  if (errno == EPERM || errno == EOPNOTSUPP || errno == ENOSYS || errno == EMLINK)
    {
      c->aside_by_rename = true;
      return 0;
    }
  c->aside[0] = '\0';
  return tg_error_set (err, TG_EIO, f->pub.path, "cannot keep the old \"%s\" aside: %s", f->pub.path,
                       strerror (errno));
}

int
tg_export_list_commit (TgExportList *list, TgError *err)
{
  Commit *c = calloc ((size_t) list->n_files + 1, sizeof *c);
  int rc = 0, i;

  if (c == NULL)
    return tg_error_set (err, TG_ENOMEM, NULL, NULL);
  for (i = 0; i < list->n_files; i++)
    c[i].dir = -1;
  /* Every destination is checked, and every old file kept, before the
   * first rename. */
  for (i = 0; i < list->n_files && rc == 0; i++)
    if (list->files[i].tmp_path)
      rc = prepare (list, &list->files[i], &c[i], err);
  for (i = 0; i < list->n_files && rc == 0; i++)
    {
      Entry *f = &list->files[i];
      const char *name = leaf (f->pub.path);
      if (f->tmp_path == NULL)
        continue;
      if (list->before_rename)
        list->before_rename (list, i, list->before_rename_data);
      if (c[i].aside_by_rename && renameat (c[i].dir, name, c[i].dir, c[i].aside) != 0)
        {
          c[i].aside_by_rename = false;
          c[i].aside[0] = '\0';
          rc = tg_error_set (err, TG_EIO, f->pub.path, "cannot move the old \"%s\" aside: %s",
                             f->pub.path, strerror (errno));
        }
      else if (renameat (c[i].dir, leaf (f->tmp_path), c[i].dir, name) != 0)
        rc = tg_error_set (err, TG_EIO, f->pub.path, "cannot rename to \"%s/%s\": %s", list->out_dir,
                           f->pub.path, strerror (errno));
      else
        c[i].renamed = true;
    }
  if (rc < 0)
    undo (list, c, i);
  for (i = 0; i < list->n_files; i++)
    {
      if (c[i].aside[0])
        unlinkat (c[i].dir, c[i].aside, 0);
      if (c[i].dir >= 0)
        close (c[i].dir);
      if (rc == 0)
        {
          free (list->files[i].tmp_path);
          list->files[i].tmp_path = NULL;
        }
    }
  free (c);
  if (rc == 0)
    list->committed = true;
  return rc;
}

void
tg_export_list_free (TgExportList *list)
{
  if (list == NULL)
    return;
  for (int i = 0; i < list->n_files; i++)
    {
      Entry *f = &list->files[i];
      int dir;
      if (f->tmp_path && (dir = open_parent (list, f->pub.path, false, NULL)) >= 0)
        {
          unlinkat (dir, leaf (f->tmp_path), 0);
          close (dir);
        }
      free (f->tmp_path);
      free ((char *) f->pub.path);
      free ((char *) f->pub.format);
      free ((char *) f->pub.node_id);
      strv_free (f->pub.channel_names, f->pub.n_channel_names);
    }
  /* Children were created after their parents: remove in reverse.  A
   * folder that holds something stays. */
  for (int i = list->n_new_dirs - 1; i >= 0; i--)
    {
      const char *rel = list->new_dirs[i];
      int dir;
      if (list->committed)
        ;
      else if (rel[0] == '\0')
        rmdir (list->out_dir);
      else if ((dir = open_parent (list, rel, false, NULL)) >= 0)
        {
          unlinkat (dir, leaf (rel), AT_REMOVEDIR);
          close (dir);
        }
      free (list->new_dirs[i]);
    }
  free (list->new_dirs);
  free (list->files);
  free (list->out_dir);
  if (list->out_fd_open)
    close (list->out_fd);
  free (list);
}

void
tg__export_list_set_digest (TgExportList *list, int i, const uint8_t digest[32], uint64_t bytes)
{
  Entry *en = &list->files[i];

  memcpy (en->digest, digest, sizeof en->digest);
  en->digest_bytes = bytes;
  en->has_digest = true;
}

bool
tg_export_list_digest (const TgExportList *list, int i, uint8_t digest[32], uint64_t *bytes)
{
  const Entry *en = &list->files[i];

  if (!en->has_digest || en->tmp_path == NULL)
    return false;
  memcpy (digest, en->digest, sizeof en->digest);
  *bytes = en->digest_bytes;
  return true;
}

/* --- for tests --------------------------------------------------------------- */

void
tg__export_list_set_before_rename (TgExportList *list, TgExportListHook hook, void *data)
{
  list->before_rename = hook;
  list->before_rename_data = data;
}

const char *
tg__export_list_staged_path (const TgExportList *list, int i)
{
  return list->files[i].tmp_path;
}
