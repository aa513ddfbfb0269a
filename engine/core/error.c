/* Error codes, messages and the error record. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tgraph/error.h"

const char *
tg_strerror (int code)
{
  switch (code)
    {
    case TG_OK:
      return "success";
#define TG__ERR_CASE(name, msg) \
    case TG_E##name:            \
      return msg;
      TG_ERRNO_MAP (TG__ERR_CASE)
#undef TG__ERR_CASE
    default:
      return "unknown error";
    }
}

int
tg_error_set (TgError *err, int code, const char *path, const char *fmt, ...)
{
  if (err == NULL)
    return code;
  err->code = code;
  err->line = 0;
  err->column = 0;
  snprintf (err->path, sizeof err->path, "%s", path ? path : "");
  if (fmt)
    {
      va_list ap;
      va_start (ap, fmt);
      vsnprintf (err->message, sizeof err->message, fmt, ap);
      va_end (ap);
    }
  else
    snprintf (err->message, sizeof err->message, "%s", tg_strerror (code));
  return code;
}

void
tg_error_prefix_path (TgError *err, const char *prefix)
{
  char joined[2 * TG_ERROR_PATH_MAX + 2];
  const char *sep;

  if (err == NULL || prefix == NULL || prefix[0] == '\0')
    return;
  sep = err->path[0] == '\0' || err->path[0] == '[' ? "" : ".";
  snprintf (joined, sizeof joined, "%s%s%s", prefix, sep, err->path);
  /* Paths are short; if one is not, keep its start. */
  joined[TG_ERROR_PATH_MAX - 1] = '\0';
  memcpy (err->path, joined, TG_ERROR_PATH_MAX);
}

void
tg_error_clear (TgError *err)
{
  if (err)
    memset (err, 0, sizeof *err);
}

const char *
tg_error_format (const TgError *err, char *buf, unsigned long size)
{
  if (size == 0)
    return buf;
  if (err == NULL || err->code == 0)
    snprintf (buf, size, "no error");
  else if (err->path[0])
    snprintf (buf, size, "%s: %s", err->path, err->message);
  else
    snprintf (buf, size, "%s", err->message);
  return buf;
}
