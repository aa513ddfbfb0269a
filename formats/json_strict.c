/* What RFC 8259 refuses and json-c lets through, found with its place.
 *
 * json-c's strict mode still takes control characters in strings, bytes
 * that are not UTF-8, lone UTF-16 surrogates, "5." and NaN / Infinity,
 * and keeps the last of two equal keys without a word.  Each of these
 * would end up in a saved graph or a manifest that strict readers refuse
 * (or, for a key given twice, silently drop half of what was meant), so
 * the loader walks the text json-c accepted once more with this checker
 * and refuses the first problem with its path and byte offset.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tgformats-private.h"

/* json-c refuses documents nested deeper than the loader allows it. */
#define MAX_DEPTH 200

typedef struct
{
  const char *t;
  size_t n;
  char path[TG_ERROR_PATH_MAX]; /* of the value being walked */
  TgJsonProblem *out;
  bool failed;   /* a problem in the text: the walk stops */
  bool have_dup; /* a key given twice, kept while the walk goes on */
} Walk;

static size_t
fail_at (Walk *w, size_t at, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

static size_t
fail_at (Walk *w, size_t at, const char *fmt, ...)
{
  va_list ap;

  w->failed = true;
  w->out->code = TG_EPARSE;
  snprintf (w->out->path, sizeof w->out->path, "%s", w->path);
  w->out->offset = at;
  va_start (ap, fmt);
  vsnprintf (w->out->message, sizeof w->out->message, fmt, ap);
  va_end (ap);
  return w->n;
}

/* Whether C ends a number or a literal. */
static bool
is_delim (char c)
{
  return c && strchr (",]}: \t\r\n", c);
}

static size_t
skip_ws (const Walk *w, size_t p)
{
  while (p < w->n && w->t[p] && strchr (" \t\r\n", w->t[p]))
    p++;
  return p;
}

static int
hex4 (const Walk *w, size_t p)
{
  int u = 0;

  for (int k = 0; k < 4; k++)
    {
      int h = p + (size_t) k < w->n ? tg_hex_digit (w->t[p + (size_t) k]) : -1;
      if (h < 0)
        return -1;
      u = u * 16 + h;
    }
  return u;
}

/* P at the opening quote; the position after the closing one. */
static size_t
walk_string (Walk *w, size_t p)
{
  const char *t = w->t;
  size_t start = p++;

  while (p < w->n && t[p] != '"')
    {
      unsigned char c = (unsigned char) t[p];
      char u[7];

      if (c < 0x20)
        return fail_at (w, p, "control character U+%04X in a string; JSON writes it as %s", c,
                        tg_string_escape (c, u));
      if (c >= 0x80)
        {
          int len = tg_utf8_char_len (t + p, w->n - p);
          if (len == 0)
            return fail_at (w, p, "invalid UTF-8 (byte 0x%02x); a .tgraph file is UTF-8 text", c);
          p += (size_t) len;
          continue;
        }
      if (c != '\\')
        {
          p++;
          continue;
        }
      if (p + 1 < w->n && t[p + 1] && strchr ("\"\\/bfnrt", t[p + 1]))
        {
          p += 2;
          continue;
        }
      if (p + 1 >= w->n || t[p + 1] != 'u' || hex4 (w, p + 2) < 0)
        return fail_at (w, p, "invalid escape in a string");
      {
        int cp = hex4 (w, p + 2);
        /* A surrogate is half of a character: the high one must be
         * followed by the low one, as \ud83c\udfd4. */
        if (cp >= 0xdc00 && cp < 0xe000)
          return fail_at (w, p, "\\u%04x is the second half of a UTF-16 surrogate pair, alone",
                          (unsigned) cp);
        if (cp >= 0xd800 && cp < 0xdc00)
          {
            int lo = p + 7 < w->n && t[p + 6] == '\\' && t[p + 7] == 'u' ? hex4 (w, p + 8) : -1;
            if (lo < 0xdc00 || lo >= 0xe000)
              return fail_at (w, p, "\\u%04x is the first half of a UTF-16 surrogate pair, alone",
                              (unsigned) cp);
            p += 6;
          }
        p += 6;
      }
    }
  if (p >= w->n)
    return fail_at (w, start, "unterminated string");
  return p + 1;
}

static bool
is_digit (char c)
{
  return c >= '0' && c <= '9';
}

/* RFC 8259's number: -? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)? */
static size_t
walk_number (Walk *w, size_t p)
{
  const char *t = w->t;
  size_t start = p, end = p, q = p;
  bool ok = true;

  while (end < w->n && !is_delim (t[end]))
    end++;
  if (q < end && t[q] == '-')
    q++;
  if (q < end && t[q] == '0')
    q++;
  else if (q < end && is_digit (t[q]))
    while (q < end && is_digit (t[q]))
      q++;
  else
    ok = false;
  if (ok && q < end && t[q] == '.')
    {
      ok = ++q < end && is_digit (t[q]);
      while (q < end && is_digit (t[q]))
        q++;
    }
  if (ok && q < end && (t[q] == 'e' || t[q] == 'E'))
    {
      q++;
      if (q < end && (t[q] == '+' || t[q] == '-'))
        q++;
      ok = q < end && is_digit (t[q]);
      while (q < end && is_digit (t[q]))
        q++;
    }
  if (ok && q == end)
    return end;
  {
    char word[48];
    size_t len = end - start < sizeof word - 4 ? end - start : sizeof word - 4;
    bool nonfinite = false;

    memcpy (word, t + start, len);
    word[len] = '\0';
    if (len < end - start)
      strcat (word, "...");
    for (size_t k = start; k < end && !nonfinite; k++)
      nonfinite = strchr ("NnIi", t[k]) && t[k];
    return fail_at (w, start, "%s is not a JSON number%s", word,
                    nonfinite ? " (JSON has no NaN or Infinity)" : "");
  }
}

static size_t walk_value (Walk *w, size_t p, int depth);

typedef struct
{
  char *key; /* decoded */
  size_t pos; /* of its opening quote */
} KeyAt;

static int
key_at_cmp (const void *a, const void *b)
{
  const KeyAt *x = a, *y = b;
  int c = strcmp (x->key, y->key);

  if (c)
    return c;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Appends ".KEY" (or "[INDEX]" when KEY is NULL) to W's path; returns the
 * old length to cut back to.  A path that does not fit is cut short. */
static size_t
path_push (Walk *w, const char *key, size_t index)
{
  size_t len = strlen (w->path);

  if (key)
    snprintf (w->path + len, sizeof w->path - len, "%s%s", len ? "." : "", key);
  else
    snprintf (w->path + len, sizeof w->path - len, "[%zu]", index);
  return len;
}

/* The second of two equal keys that comes first in the text is reported
 * when the text has nothing worse. */
static void
note_duplicates (Walk *w, KeyAt *keys, size_t count)
{
  qsort (keys, count, sizeof *keys, key_at_cmp);
  for (size_t i = 1; i < count; i++)
    if (strcmp (keys[i].key, keys[i - 1].key) == 0
        && (!w->have_dup || keys[i].pos < w->out->offset))
      {
        size_t len = path_push (w, keys[i].key, 0);
        w->have_dup = true;
        w->out->code = TG_EPARSE;
        snprintf (w->out->path, sizeof w->out->path, "%s", w->path);
        w->out->offset = keys[i].pos;
        snprintf (w->out->message, sizeof w->out->message,
                  "the key \"%s\" appears twice in one object", keys[i].key);
        w->path[len] = '\0';
      }
}

/* Walks the member or element value at *P under W's path, cuts the path
 * back to LEN and reads what follows: true after a ',', false after
 * CLOSE or a problem (*P past either). */
static bool
walk_item (Walk *w, size_t *p, size_t len, int depth, char close)
{
  *p = skip_ws (w, walk_value (w, *p, depth + 1));
  if (w->failed)
    return false;
  w->path[len] = '\0';
  if (*p < w->n && w->t[*p] == ',')
    {
      *p = skip_ws (w, *p + 1);
      return true;
    }
  if (*p < w->n && w->t[*p] == close)
    {
      (*p)++;
      return false;
    }
  *p = fail_at (w, *p, "expected ',' or '%c'", close);
  return false;
}

static size_t
walk_object (Walk *w, size_t p, int depth)
{
  const char *t = w->t;
  KeyAt *keys = NULL;
  size_t count = 0, cap = 0;

  p = skip_ws (w, p + 1);
  if (p < w->n && t[p] == '}')
    return p + 1;
  while (!w->failed)
    {
      size_t kpos = p, len;
      TgBuf key;

      if (p >= w->n || t[p] != '"')
        {
          p = fail_at (w, p, "expected a quoted key");
          break;
        }
      p = walk_string (w, p);
      if (w->failed)
        break;
      if (count == cap)
        {
          KeyAt *grown = realloc (keys, sizeof *keys * (cap = cap ? 2 * cap : 16));
          if (!grown)
            {
              p = fail_at (w, kpos, "out of memory");
              w->out->code = TG_ENOMEM;
              break;
            }
          keys = grown;
        }
      tg__buf_init (&key);
      tg__json_decode_string (t, w->n, kpos, &key);
      keys[count].key = key.data ? key.data : strdup ("");
      keys[count].pos = kpos;
      if (!keys[count].key)
        {
          p = fail_at (w, kpos, "out of memory");
          w->out->code = TG_ENOMEM;
          break;
        }
      count++;
      p = skip_ws (w, p);
      if (p >= w->n || t[p] != ':')
        {
          p = fail_at (w, p, "expected ':' after a key");
          break;
        }
      len = path_push (w, keys[count - 1].key, 0);
      p = skip_ws (w, p + 1);
      if (!walk_item (w, &p, len, depth, '}'))
        break;
    }
  if (!w->failed && count > 1)
    note_duplicates (w, keys, count);
  for (size_t i = 0; i < count; i++)
    free (keys[i].key);
  free (keys);
  return p;
}

static size_t
walk_array (Walk *w, size_t p, int depth)
{
  const char *t = w->t;
  size_t index = 0;

  p = skip_ws (w, p + 1);
  if (p < w->n && t[p] == ']')
    return p + 1;
  while (walk_item (w, &p, path_push (w, NULL, index++), depth, ']'))
    ;
  return p;
}

static size_t
walk_value (Walk *w, size_t p, int depth)
{
  const char *t = w->t;
  static const char *const words[] = { "true", "false", "null" };

  if (depth > MAX_DEPTH)
    return fail_at (w, p, "nested too deeply");
  if (p >= w->n)
    return fail_at (w, p, "expected a value");
  if (t[p] == '{')
    return walk_object (w, p, depth);
  if (t[p] == '[')
    return walk_array (w, p, depth);
  if (t[p] == '"')
    return walk_string (w, p);
  for (size_t k = 0; k < sizeof words / sizeof words[0]; k++)
    {
      size_t len = strlen (words[k]);
      if (w->n - p >= len && memcmp (t + p, words[k], len) == 0
          && (p + len == w->n || is_delim (t[p + len])))
        return p + len;
    }
  return walk_number (w, p);
}

bool
tg__json_strict_problem (const char *text, size_t len, TgJsonProblem *out)
{
  Walk w = { .t = text, .n = len, .out = out };
  size_t p = 0;

  memset (out, 0, sizeof *out);
  if (len >= 3 && memcmp (text, "\xef\xbb\xbf", 3) == 0)
    p = 3;
  p = skip_ws (&w, walk_value (&w, skip_ws (&w, p), 0));
  if (!w.failed && p < len)
    {
      w.path[0] = '\0';
      fail_at (&w, p, "text after the end of the document");
    }
  return w.failed || w.have_dup;
}
