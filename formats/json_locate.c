/* Where in the JSON text a value is, for error messages.
 *
 * json-c gives no positions for the values it builds, and a message like
 * "nodes[3].params.octaves: expected an integer in 1..16" is much easier
 * to act on with a line and column.  This is a small scanner over text
 * that json-c has already accepted: it walks the object keys and array
 * indices a path names, skipping every other value whole, and builds
 * nothing but the keys it compares.  The string decoder here serves the
 * strict check (json_strict.c) too.
 */
#include <stdlib.h>
#include <string.h>

#include "tgformats-private.h"

void
tg__text_position (const char *text, size_t len, size_t offset, int *line, int *column)
{
  int l = 1, c = 1;

  if (offset > len)
    offset = len;
  for (size_t i = 0; i < offset; i++)
    {
      unsigned char ch = (unsigned char) text[i];
      if (ch == '\n')
        {
          l++;
          c = 1;
        }
      else if ((ch & 0xc0) != 0x80)
        c++; /* count characters, not UTF-8 continuation bytes */
    }
  *line = l;
  *column = c;
}

static size_t
skip_ws (const char *t, size_t n, size_t p)
{
  while (p < n && (t[p] == ' ' || t[p] == '\t' || t[p] == '\n' || t[p] == '\r'))
    p++;
  return p;
}

/* P at the opening quote; returns the position after the closing one. */
static size_t
skip_string (const char *t, size_t n, size_t p)
{
  char q = t[p++];

  while (p < n && t[p] != q)
    p += t[p] == '\\' ? 2 : 1;
  return p < n ? p + 1 : n;
}

static size_t
skip_value (const char *t, size_t n, size_t p)
{
  int depth = 0;

  if (p >= n)
    return n;
  if (t[p] == '"' || t[p] == '\'')
    return skip_string (t, n, p);
  if (t[p] != '{' && t[p] != '[')
    {
      while (p < n && !strchr (",]}: \t\r\n", t[p]))
        p++;
      return p;
    }
  while (p < n)
    {
      char c = t[p];
      if (c == '"' || c == '\'')
        {
          p = skip_string (t, n, p);
          continue;
        }
      if (c == '{' || c == '[')
        depth++;
      else if (c == '}' || c == ']')
        {
          depth--;
          if (depth == 0)
            return p + 1;
        }
      p++;
    }
  return n;
}

static unsigned
read_u4 (const char *t, size_t n, size_t p)
{
  unsigned u = 0;

  for (int k = 0; k < 4; k++)
    {
      int h = p + (size_t) k < n ? tg_hex_digit (t[p + (size_t) k]) : -1;
      if (h < 0)
        return 0xfffdu;
      u = u * 16 + (unsigned) h;
    }
  return u;
}

static size_t
put_utf8 (char *out, unsigned cp)
{
  if (cp < 0x80)
    {
      out[0] = (char) cp;
      return 1;
    }
  if (cp < 0x800)
    {
      out[0] = (char) (0xc0 | (cp >> 6));
      out[1] = (char) (0x80 | (cp & 0x3f));
      return 2;
    }
  if (cp < 0x10000)
    {
      out[0] = (char) (0xe0 | (cp >> 12));
      out[1] = (char) (0x80 | ((cp >> 6) & 0x3f));
      out[2] = (char) (0x80 | (cp & 0x3f));
      return 3;
    }
  out[0] = (char) (0xf0 | (cp >> 18));
  out[1] = (char) (0x80 | ((cp >> 12) & 0x3f));
  out[2] = (char) (0x80 | ((cp >> 6) & 0x3f));
  out[3] = (char) (0x80 | (cp & 0x3f));
  return 4;
}

/* Whether the string literal at P (quote included) decodes to KEY[0..KLEN). */
static bool
string_equals (const char *t, size_t n, size_t p, const char *key, size_t klen)
{
  TgBuf b;
  bool equal;

  tg__buf_init (&b);
  tg__json_decode_string (t, n, p, &b);
  equal = b.data && b.len == klen + 1 && memcmp (b.data, key, klen) == 0;
  tg__buf_clear (&b);
  return equal;
}

/* P at '{'.  The position of KEY's value, or 0 when absent.  json-c keeps
 * the last of duplicate keys, so the last one is where the value is. */
static size_t
find_member (const char *t, size_t n, size_t p, const char *key, size_t klen)
{
  size_t found = 0;

  p = skip_ws (t, n, p + 1);
  while (p < n && t[p] != '}')
    {
      size_t kpos = p, vpos;
      if (t[p] != '"' && t[p] != '\'')
        return found;
      p = skip_ws (t, n, skip_string (t, n, p));
      if (p >= n || t[p] != ':')
        return found;
      vpos = skip_ws (t, n, p + 1);
      if (string_equals (t, n, kpos, key, klen))
        found = vpos;
      p = skip_ws (t, n, skip_value (t, n, vpos));
      if (p < n && t[p] == ',')
        p = skip_ws (t, n, p + 1);
      else
        break;
    }
  return found;
}

/* P at '['.  The position of element INDEX, or 0 when absent. */
static size_t
find_element (const char *t, size_t n, size_t p, long index)
{
  long i = 0;

  p = skip_ws (t, n, p + 1);
  while (p < n && t[p] != ']')
    {
      if (i == index)
        return p;
      p = skip_ws (t, n, skip_value (t, n, p));
      if (p < n && t[p] == ',')
        p = skip_ws (t, n, p + 1);
      else
        break;
      i++;
    }
  return 0;
}

int
tg__json_locate (const char *text, size_t len, const char *path, size_t *offset)
{
  size_t p = skip_ws (text, len, 0);
  int matched = 0;
  const char *s = path ? path : "";

  /* A UTF-8 byte order mark is not whitespace to JSON but editors add it. */
  if (len - p >= 3 && memcmp (text + p, "\xef\xbb\xbf", 3) == 0)
    p = skip_ws (text, len, p + 3);
  if (p >= len)
    return -1;
  *offset = p;

  while (*s)
    {
      size_t next = 0;

      if (*s == '.')
        s++;
      if (*s == '[')
        {
          char *end;
          long index = strtol (s + 1, &end, 10);
          if (end == s + 1 || *end != ']' || text[p] != '[')
            break;
          next = find_element (text, len, p, index);
          s = end + 1;
        }
      else
        {
          size_t klen = strcspn (s, ".[");
          if (klen == 0 || text[p] != '{')
            break;
          next = find_member (text, len, p, s, klen);
          s += klen;
        }
      if (!next)
        break;
      p = next;
      *offset = p;
      matched++;
    }
  return matched;
}

void
tg__error_locate (TgError *err, const char *path, const char *text, size_t len)
{
  size_t offset;

  if (!err || !text)
    return;
  if (tg__json_locate (text, len, path ? path : err->path, &offset) < 0)
    return;
  tg__text_position (text, len, offset, &err->line, &err->column);
}

/* --- decoding ----------------------------------------------------------------- */

void
tg__json_decode_string (const char *t, size_t n, size_t p, TgBuf *out)
{
  char q = t[p++];

  while (p < n && t[p] != q)
    {
      if (t[p] != '\\')
        {
          size_t run = 0;
          while (p + run < n && t[p + run] != q && t[p + run] != '\\')
            run++;
          tg__buf_append (out, t + p, run);
          p += run;
          continue;
        }
      {
        char e = p + 1 < n ? t[p + 1] : '\0';
        char buf[8];
        size_t m = 1;
        p += 2;
        switch (e)
          {
          case 'n': buf[0] = '\n'; break;
          case 't': buf[0] = '\t'; break;
          case 'r': buf[0] = '\r'; break;
          case 'b': buf[0] = '\b'; break;
          case 'f': buf[0] = '\f'; break;
          case 'u':
            {
              unsigned cp = read_u4 (t, n, p);
              p += 4;
              if (cp >= 0xd800 && cp < 0xdc00 && p + 1 < n && t[p] == '\\' && t[p + 1] == 'u')
                {
                  unsigned lo = read_u4 (t, n, p + 2);
                  if (lo >= 0xdc00 && lo < 0xe000)
                    {
                      cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                      p += 6;
                    }
                }
              m = put_utf8 (buf, cp);
              break;
            }
          default: buf[0] = e; break;
          }
        tg__buf_append (out, buf, m);
      }
    }
  tg__buf_putc (out, '\0');
}
