/* The fuzz corpus as a regression test: every file under CORPUS/<kind>/
 * goes through the same entry point as that kind's fuzz target
 * (fuzz_inputs.c), in name order.  A crash, a sanitizer report or a broken
 * invariant (which aborts) fails the test; an empty corpus folder too, so
 * the test cannot pass by reading nothing.
 *
 * Usage: fuzz_replay CORPUS_DIR
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_inputs.h"

typedef int (*OneInput) (const uint8_t *data, size_t size);

static int
by_name (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static uint8_t *
read_all (const char *path, size_t *size)
{
  FILE *f = fopen (path, "rb");
  uint8_t *buf = NULL;
  long n;

  if (!f)
    return NULL;
  if (fseek (f, 0, SEEK_END) == 0 && (n = ftell (f)) >= 0 && fseek (f, 0, SEEK_SET) == 0)
    {
      /* One byte more, so an empty file still gives a buffer. */
      buf = malloc ((size_t) n + 1);
      if (buf && fread (buf, 1, (size_t) n, f) != (size_t) n)
        {
          free (buf);
          buf = NULL;
        }
      *size = (size_t) n;
    }
  fclose (f);
  return buf;
}

/* Runs every file of DIR/KIND through FN; the number of files, or -1. */
static int
replay_kind (const char *dir, const char *kind, OneInput fn)
{
  char path[4096];
  DIR *d;
  struct dirent *e;
  char **names = NULL;
  int n = 0, cap = 0, rc = 0;

  snprintf (path, sizeof path, "%s/%s", dir, kind);
  d = opendir (path);
  if (!d)
    {
      fprintf (stderr, "cannot open %s\n", path);
      return -1;
    }
  while ((e = readdir (d)))
    {
      if (e->d_name[0] == '.')
        continue;
      if (n == cap)
        {
          cap = cap ? 2 * cap : 64;
          names = realloc (names, sizeof *names * (size_t) cap);
          if (!names)
            abort ();
        }
      names[n] = strdup (e->d_name);
      if (!names[n++])
        abort ();
    }
  closedir (d);
  if (n > 0)
    qsort (names, (size_t) n, sizeof *names, by_name);

  for (int i = 0; i < n; i++)
    {
      uint8_t *data;
      size_t size = 0;

      snprintf (path, sizeof path, "%s/%s/%s", dir, kind, names[i]);
      data = read_all (path, &size);
      if (!data)
        {
          fprintf (stderr, "cannot read %s\n", path);
          rc = -1;
        }
      else
        {
          /* Named first, so the log shows which file a crash came from. */
          fprintf (stderr, "%s/%s\n", kind, names[i]);
          fn (data, size);
        }
      free (data);
      free (names[i]);
    }
  free (names);
  if (n == 0)
    fprintf (stderr, "%s: no corpus files\n", kind);
  return rc < 0 || n == 0 ? -1 : n;
}

int
main (int argc, char **argv)
{
  static const struct
  {
    const char *kind;
    OneInput fn;
  } kinds[] = {
    { "tgraph", fuzz_one_tgraph },
    { "glb", fuzz_one_glb },
    { "png", fuzz_one_png },
  };
  int failed = 0;

  if (argc != 2)
    {
      fprintf (stderr, "usage: %s CORPUS_DIR\n", argv[0]);
      return 2;
    }
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
    {
      int n = replay_kind (argv[1], kinds[k].kind, kinds[k].fn);
      if (n < 0)
        failed = 1;
      else
        fprintf (stderr, "ok   %s: %d files\n", kinds[k].kind, n);
    }
  return failed;
}
