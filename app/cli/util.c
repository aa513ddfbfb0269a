/* Helpers every `tgraph` subcommand shares: option values, integer
 * arguments, error messages in the FILE:LINE:COL form, file reading.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tgformats/tgformats.h>

#include "cli.h"

int
tg__cli_usage_error (const char *cmd, const char *fmt, ...)
{
  va_list ap;

  fprintf (stderr, "tgraph %s: ", cmd);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fprintf (stderr, "\nRun 'tgraph help %s' for usage.\n", cmd);
  return TG_CLI_EXIT_USAGE;
}

bool
tg__cli_is_help (const char *arg)
{
  return strcmp (arg, "--help") == 0 || strcmp (arg, "-h") == 0;
}

int
tg__cli_option_value (const char *cmd, int argc, char **argv, int *i, const char *long_name,
                      const char *short_name, const char **value)
{
  const char *arg = argv[*i];
  size_t n = strlen (long_name);

  if (strncmp (arg, long_name, n) == 0 && arg[n] == '=')
    {
      *value = arg + n + 1;
      return 1;
    }
  if (strcmp (arg, long_name) != 0 && !(short_name && strcmp (arg, short_name) == 0))
    return 0;
  if (*i + 1 >= argc)
    {
      tg__cli_usage_error (cmd, "%s needs a value", arg);
      return -1;
    }
  *i += 1;
  *value = argv[*i];
  return 1;
}

int
tg__cli_parse_int (const char *cmd, const char *option, const char *text, long min, long max,
                   int *out)
{
  char *end = NULL;
  long v;

  errno = 0;
  v = strtol (text, &end, 10);
  if (errno || end == text || *end != '\0' || v < min || v > max)
    {
      tg__cli_usage_error (cmd, "%s: expected an integer in %ld..%ld, got \"%s\"", option, min,
                           max, text);
      return -1;
    }
  *out = (int) v;
  return 0;
}

int
tg__cli_parse_choice (const char *cmd, const char *option, const char *text,
                      const char *const *choices, int *out)
{
  char expected[256] = "";
  int n = 0;

  for (; choices[n]; n++)
    if (strcmp (text, choices[n]) == 0)
      {
        *out = n;
        return 0;
      }
  for (int k = 0; k < n; k++)
    {
      size_t used = strlen (expected);
      snprintf (expected + used, sizeof expected - used, "%s%s",
                k == 0 ? "" : k == n - 1 ? " or " : ", ", choices[k]);
    }
  tg__cli_usage_error (cmd, "%s: expected %s, got \"%s\"", option, expected, text);
  return -1;
}

void
tg__cli_print_file_error (const char *file, const TgError *err)
{
  const char *msg = err->message[0] ? err->message : tg_strerror (err->code);
  char path[2 * TG_ERROR_PATH_MAX + 16];

  if (err->line > 0)
    fprintf (stderr, "%s:%d:%d: ", file, err->line, err->column > 0 ? err->column : 1);
  else
    fprintf (stderr, "%s: ", file);
  if (err->path[0])
    fprintf (stderr, "%s: ", tg_error_format_path (err, path, sizeof path));
  fprintf (stderr, "%s\n", msg);
}

TgGraph *
tg__cli_load_graph (const char *file)
{
  return tg__cli_load_graph_info (file, NULL);
}

TgGraph *
tg__cli_load_graph_info (const char *file, TgTgraphLoadInfo *info)
{
  TgError err;
  TgGraph *g = tg__cli_load_graph_ex (file, 0, info, &err);

  if (!g)
    tg__cli_print_file_error (file, &err);
  return g;
}

TgGraph *
tg__cli_load_graph_ex (const char *file, unsigned flags, TgTgraphLoadInfo *info, TgError *err)
{
  TgGraph *g = NULL;

  tg_error_clear (err);
  if (tg_tgraph_load_file_info (file, flags, info, &g, err) < 0 || !g)
    {
      if (!err->code)
        tg_error_set (err, TG_EIO, "", "cannot load the graph");
      return NULL;
    }
  return g;
}

bool
tg__cli_upgrade_note (const char *file, const TgTgraphLoadInfo *info, char *buf, size_t size)
{
  if (info->version >= TG_FORMAT_VERSION)
    return false;
  snprintf (buf, size,
            "format version %d, upgraded to %d on loading (%d parameter name%s changed); "
            "'tgraph fmt %s' writes it as version %d",
            info->version, TG_FORMAT_VERSION, info->n_renamed, info->n_renamed == 1 ? "" : "s",
            file, TG_FORMAT_VERSION);
  return true;
}

void
tg__cli_print_upgrade_note (const char *file, const TgTgraphLoadInfo *info)
{
  char note[1024];

  if (tg__cli_upgrade_note (file, info, note, sizeof note))
    fprintf (stderr, "%s: note: %s\n", file, note);
}

char *
tg__cli_read_file (const char *path, size_t *len)
{
  FILE *f = fopen (path, "rb");
  char *buf = NULL;
  size_t cap = 0, n = 0;

  if (!f)
    return NULL;
  for (;;)
    {
      if (n + 4096 + 1 > cap)
        {
          size_t ncap = cap ? cap * 2 : 65536;
          char *nbuf = realloc (buf, ncap);
          if (!nbuf)
            {
              free (buf);
              fclose (f);
              errno = ENOMEM;
              return NULL;
            }
          buf = nbuf;
          cap = ncap;
        }
      size_t got = fread (buf + n, 1, cap - n - 1, f);
      n += got;
      if (got == 0)
        break;
    }
  if (ferror (f))
    {
      int e = errno ? errno : EIO;
      free (buf);
      fclose (f);
      errno = e;
      return NULL;
    }
  fclose (f);
  buf[n] = '\0';
  if (len)
    *len = n;
  return buf;
}

const char *
tg__cli_format_bytes (unsigned long long bytes, char *buf, size_t size)
{
  return tg_format_bytes (bytes, buf, size);
}

/* --- signals --------------------------------------------------------------- */

/* Runs with SIGINT, SIGTERM, SIGHUP and SIGQUIT blocked in every thread, so they arrive
 * here synchronously: no async-signal-safety concerns for the cancel
 * token.  A second signal gives up on a clean stop. */
static void *
signal_thread (void *data)
{
  TgCliSignalWatch *w = data;

  for (;;)
    {
      int sig = 0;
      if (sigwait (&w->set, &sig) != 0)
        continue;
      if (w->signal == 0)
        {
          w->signal = sig;
          tg_cancel_request (w->cancel);
          static const char msg[] = "\ntgraph: cancelling (press again to quit at once)\n";
          if (write (STDERR_FILENO, msg, sizeof msg - 1) < 0)
            { /* nothing more to do */ }
        }
      else
        _exit (128 + sig);
    }
  return NULL;
}

/* Blocks the signals in the calling thread (and so in every thread it
 * starts later, the engine's pool included) and starts the watcher. */
int
tg__cli_signal_watch_start (TgCliSignalWatch *w, TgCancel *cancel)
{
  memset (w, 0, sizeof *w);
  w->cancel = cancel;
  sigemptyset (&w->set);
  sigaddset (&w->set, SIGINT);
  sigaddset (&w->set, SIGTERM);
  sigaddset (&w->set, SIGHUP);
  sigaddset (&w->set, SIGQUIT);
  if (pthread_sigmask (SIG_BLOCK, &w->set, NULL) != 0)
    return -1;
  if (pthread_create (&w->thread, NULL, signal_thread, w) != 0)
    {
      pthread_sigmask (SIG_UNBLOCK, &w->set, NULL);
      return -1;
    }
  return 0;
}

int
tg__cli_signal_watch_stop (TgCliSignalWatch *w)
{
  pthread_cancel (w->thread);
  pthread_join (w->thread, NULL);
  return w->signal;
}

