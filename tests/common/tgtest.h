/* A tiny test harness: checks that report the place and carry on, and a
 * runner that names each test.  One test program per module; exit status
 * is what meson reads (0 pass, 77 skip, other fail). */
#ifndef TGTEST_H
#define TGTEST_H

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tgtest_failures;

/* How many names DIR holds but "." and ".."; -1 when it cannot be read. */
static inline int
tgtest_count_entries (const char *dir)
{
  DIR *d = opendir (dir);
  struct dirent *e;
  int n = 0;

  if (!d)
    return -1;
  while ((e = readdir (d)))
    if (strcmp (e->d_name, ".") && strcmp (e->d_name, ".."))
      n++;
  closedir (d);
  return n;
}
static const char *tgtest_current;

#define TG_CHECK(cond)                                                                  \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      fprintf (stderr, "%s:%d: [%s] check failed: %s\n", __FILE__, __LINE__,            \
               tgtest_current, #cond);                                                  \
      tgtest_failures++;                                                                \
    }                                                                                   \
  } while (0)

#define TG_CHECK_MSG(cond, ...)                                                         \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      fprintf (stderr, "%s:%d: [%s] check failed: %s: ", __FILE__, __LINE__,            \
               tgtest_current, #cond);                                                  \
      fprintf (stderr, __VA_ARGS__);                                                    \
      fputc ('\n', stderr);                                                             \
      tgtest_failures++;                                                                \
    }                                                                                   \
  } while (0)

#define TG_CHECK_INT_EQ(a, b)                                                           \
  do {                                                                                  \
    long long tg__a = (long long) (a), tg__b = (long long) (b);                         \
    TG_CHECK_MSG (tg__a == tg__b, "%lld != %lld", tg__a, tg__b);                        \
  } while (0)

#define TG_CHECK_NEAR(a, b, tol)                                                        \
  do {                                                                                  \
    double tg__a = (double) (a), tg__b = (double) (b);                                  \
    TG_CHECK_MSG (fabs (tg__a - tg__b) <= (tol), "%.9g vs %.9g (tol %g)", tg__a, tg__b,  \
                  (double) (tol));                                                      \
  } while (0)

#define TG_CHECK_STR_CONTAINS(hay, needle)                                              \
  do {                                                                                  \
    const char *tg__h = (hay), *tg__n = (needle);                                       \
    TG_CHECK_MSG (tg__h && strstr (tg__h, tg__n), "\"%s\" does not contain \"%s\"",     \
                  tg__h ? tg__h : "(null)", tg__n);                                     \
  } while (0)

#define TG_RUN(fn)                                                                      \
  do {                                                                                  \
    int tg__before = tgtest_failures;                                                   \
    tgtest_current = #fn;                                                               \
    fn ();                                                                              \
    fprintf (stderr, "%s %s\n", tgtest_failures == tg__before ? "ok  " : "FAIL", #fn);  \
  } while (0)

static inline int
tgtest_result (void)
{
  if (tgtest_failures)
    fprintf (stderr, "%d check(s) failed\n", tgtest_failures);
  return tgtest_failures ? 1 : 0;
}

static char tgtest_tmp_root[256];

static void
tgtest_tmpdir_remove (void)
{
  char cmd[300];

  if (strncmp (tgtest_tmp_root, "/tmp/", 5) != 0)
    return;
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", tgtest_tmp_root);
  if (system (cmd) != 0)
    fprintf (stderr, "could not remove %s\n", tgtest_tmp_root);
}

/* A fresh folder /tmp/PREFIXxxxxxx for this test program, removed when
 * it exits; NULL (with a message) when it cannot be made. */
static inline const char *
tgtest_tmpdir (const char *prefix)
{
  snprintf (tgtest_tmp_root, sizeof tgtest_tmp_root, "/tmp/%sXXXXXX", prefix);
  if (!mkdtemp (tgtest_tmp_root))
    {
      perror ("mkdtemp");
      return NULL;
    }
  atexit (tgtest_tmpdir_remove);
  return tgtest_tmp_root;
}

/* NAME in the folder tgtest_tmpdir made; valid for the next three calls. */
static inline const char *
tgtest_tmp_path (const char *name)
{
  static char buf[4][512];
  static int k;
  char *b = buf[k++ & 3];
  snprintf (b, sizeof buf[0], "%s/%s", tgtest_tmp_root, name);
  return b;
}

/* A path under the source tree, from TG_SOURCE_ROOT set by meson. */
static inline const char *
tgtest_src (const char *rel)
{
  static char buf[4][4096];
  static int k;
  const char *root = getenv ("TG_SOURCE_ROOT");
  char *b = buf[k++ & 3];
  snprintf (b, sizeof buf[0], "%s/%s", root ? root : ".", rel);
  return b;
}

#endif
