/* Error codes, messages and the error record. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tgraph/error.h"
#include "tgraph/messages.h"

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
  err->node_id[0] = '\0';
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
tg_error_prefix_node (TgError *err, int index, const char *id)
{
  char prefix[32];

  if (err == NULL)
    return;
  snprintf (prefix, sizeof prefix, "nodes[%d]", index);
  tg_error_prefix_path (err, prefix);
  tg_error_set_node_id (err, id);
}

void
tg_error_set_node_id (TgError *err, const char *id)
{
  if (err)
    snprintf (err->node_id, sizeof err->node_id, "%s", id ? id : "");
}

void
tg_error_clear (TgError *err)
{
  if (err)
    memset (err, 0, sizeof *err);
}

const char *
tg_error_format_path (const TgError *err, char *buf, unsigned long size)
{
  const char *close;
  size_t used;

  if (size == 0)
    return buf;
  buf[0] = '\0';
  if (err == NULL)
    return buf;
  close = strchr (err->path, ']');
  if (!err->node_id[0] || strncmp (err->path, "nodes[", 6) != 0 || !close)
    {
      snprintf (buf, size, "%s", err->path);
      return buf;
    }
  /* nodes[N] "id" and the rest of the path; the id quoted as JSON would
   * (an id that fails validation may hold any character). */
  used = (size_t) snprintf (buf, size, "%.*s \"", (int) (close + 1 - err->path), err->path);
  for (const char *p = err->node_id; *p && used + 8 < size; p++)
    {
      unsigned char c = (unsigned char) *p;
      if (c == '"' || c == '\\')
        used += (size_t) snprintf (buf + used, size - used, "\\%c", c);
      else if (c < 0x20)
        used += (size_t) snprintf (buf + used, size - used, "\\u%04x", c);
      else
        buf[used++] = (char) c;
    }
  if (used < size)
    snprintf (buf + used, size - used, "\"%s", close + 1);
  else
    buf[size - 1] = '\0';
  return buf;
}

const char *
tg_error_format (const TgError *err, char *buf, unsigned long size)
{
  char path[TG_ERROR_PATH_MAX + TG_ERROR_PATH_MAX + 16];

  if (size == 0)
    return buf;
  if (err == NULL || err->code == 0)
    snprintf (buf, size, "no error");
  else if (err->path[0])
    snprintf (buf, size, "%s: %s", tg_error_format_path (err, path, sizeof path), err->message);
  else
    snprintf (buf, size, "%s", err->message);
  return buf;
}

/* --- suggestions -------------------------------------------------------------- */

int
tg_edit_distance (const char *a, const char *b)
{
  size_t la = strlen (a), lb = strlen (b);
  int row[64];

  /* Names are short; anything longer is not a typo we can help with. */
  if (lb >= 64 || la >= 64)
    return 1000;
  for (size_t j = 0; j <= lb; j++)
    row[j] = (int) j;
  for (size_t i = 1; i <= la; i++)
    {
      int diag = row[0];
      row[0] = (int) i;
      for (size_t j = 1; j <= lb; j++)
        {
          int up = row[j];
          int cost = a[i - 1] == b[j - 1] ? 0 : 1;
          int best = diag + cost;
          if (up + 1 < best)
            best = up + 1;
          if (row[j - 1] + 1 < best)
            best = row[j - 1] + 1;
          row[j] = best;
          diag = up;
        }
    }
  return row[lb];
}

void
tg_suggest_init (TgSuggest *s, const char *name)
{
  s->name = name;
  s->best = NULL;
  s->best_distance = 1000;
}

void
tg_suggest_add (TgSuggest *s, const char *candidate)
{
  int d;

  if (!candidate)
    return;
  d = tg_edit_distance (s->name, candidate);
  /* Ties keep the first candidate, so the suggestion is stable. */
  if (d < s->best_distance)
    {
      s->best_distance = d;
      s->best = candidate;
    }
}

const char *
tg_suggest_result (const TgSuggest *s)
{
  int len = (int) strlen (s->name);
  int limit = len <= 4 ? 1 : len <= 10 ? 2 : 3;

  return s->best && s->best_distance <= limit ? s->best : NULL;
}

static const char *const message_formats[] = {
#define TG__MSG_ENTRY(fmt) fmt,
  TG_MESSAGE_LIST (TG__MSG_ENTRY)
#undef TG__MSG_ENTRY
};

const char *const *
tg_message_formats (int *n)
{
  if (n)
    *n = (int) (sizeof message_formats / sizeof message_formats[0]);
  return message_formats;
}
