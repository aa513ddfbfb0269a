/* Where in the JSON text a value is, for error messages.
 *
 * json-c gives no positions for the values it builds, and a message like
 * "nodes[3].params.octaves: expected an integer in 1..16" is much easier
 * to act on with a line and column.  This is a small scanner over text
 * that json-c has already accepted: it walks the object keys and array
 * indices a path names, skipping every other value whole, and does not
 * build anything.
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
  char q = t[p++];
  size_t k = 0;

  while (p < n && t[p] != q)
    {
      char buf[8];
      size_t m;

      if (t[p] != '\\')
        {
          buf[0] = t[p++];
          m = 1;
        }
      else
        {
          char e = p + 1 < n ? t[p + 1] : '\0';
          p += 2;
          m = 1;
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
        }
      if (k + m > klen || memcmp (key + k, buf, m) != 0)
        return false;
      k += m;
    }
  return k == klen;
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

/* --- duplicate keys ----------------------------------------------------------------- */

/* json-c keeps the last of two equal keys without a word, which would
 * silently drop half of a hand-merged node; so the loader looks for them
 * first.  Keys are compared decoded ("\u0061" equals "a"). */

typedef struct
{
  char *key;  /* decoded */
  size_t pos; /* of the key's opening quote */
  size_t vpos;
} KeyAt;

static void
decode_string (const char *t, size_t n, size_t p, TgBuf *out)
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

static int
key_at_cmp (const void *a, const void *b)
{
  const KeyAt *x = a, *y = b;
  int c = strcmp (x->key, y->key);

  if (c)
    return c;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

typedef struct
{
  const char *t;
  size_t n;
  bool found;
  size_t found_pos; /* the later key of the first duplicate pair in the text */
  char path[TG_ERROR_PATH_MAX];
} DupScan;

static void scan_value (DupScan *s, size_t p, char *path, size_t plen, int depth);

static void
path_set (char *path, size_t plen, const char *fmt, const char *key, long index)
{
  if (plen >= TG_ERROR_PATH_MAX - 1)
    return;
  if (key)
    snprintf (path + plen, TG_ERROR_PATH_MAX - plen, fmt, key);
  else
    snprintf (path + plen, TG_ERROR_PATH_MAX - plen, fmt, index);
}

static void
scan_object (DupScan *s, size_t p, char *path, size_t plen, int depth)
{
  const char *t = s->t;
  size_t n = s->n;
  KeyAt *keys = NULL;
  size_t count = 0, cap = 0;

  p = skip_ws (t, n, p + 1);
  while (p < n && t[p] != '}')
    {
      size_t kpos = p, vpos;
      TgBuf key;

      if (t[p] != '"' && t[p] != '\'')
        break;
      p = skip_ws (t, n, skip_string (t, n, p));
      if (p >= n || t[p] != ':')
        break;
      vpos = skip_ws (t, n, p + 1);
      tg__buf_init (&key);
      decode_string (t, n, kpos, &key);
      if (count == cap)
        {
          KeyAt *grown = realloc (keys, sizeof *keys * (cap = cap ? 2 * cap : 16));
          if (!grown)
            {
              tg__buf_clear (&key);
              break;
            }
          keys = grown;
        }
      keys[count].key = key.data ? key.data : strdup ("");
      keys[count].pos = kpos;
      keys[count].vpos = vpos;
      count++;
      path_set (path, plen, plen ? ".%s" : "%s", keys[count - 1].key ? keys[count - 1].key : "", 0);
      scan_value (s, vpos, path, strlen (path), depth + 1);
      path[plen] = '\0';
      p = skip_ws (t, n, skip_value (t, n, vpos));
      if (p < n && t[p] == ',')
        p = skip_ws (t, n, p + 1);
      else
        break;
    }

  if (count > 1)
    {
      qsort (keys, count, sizeof *keys, key_at_cmp);
      for (size_t i = 1; i < count; i++)
        if (keys[i].key && keys[i - 1].key && strcmp (keys[i].key, keys[i - 1].key) == 0
            && (!s->found || keys[i].pos < s->found_pos))
          {
            s->found = true;
            s->found_pos = keys[i].pos;
            snprintf (s->path, sizeof s->path, "%s", path);
            path_set (s->path, plen, plen ? ".%s" : "%s", keys[i].key, 0);
          }
    }
  for (size_t i = 0; i < count; i++)
    free (keys[i].key);
  free (keys);
}

static void
scan_value (DupScan *s, size_t p, char *path, size_t plen, int depth)
{
  const char *t = s->t;
  size_t n = s->n;
  long index = 0;

  /* json-c refuses deeper documents anyway. */
  if (p >= n || depth > 200)
    return;
  if (t[p] == '{')
    {
      scan_object (s, p, path, plen, depth);
      return;
    }
  if (t[p] != '[')
    return;
  p = skip_ws (t, n, p + 1);
  while (p < n && t[p] != ']')
    {
      path_set (path, plen, "[%ld]", NULL, index);
      scan_value (s, p, path, strlen (path), depth + 1);
      path[plen] = '\0';
      p = skip_ws (t, n, skip_value (t, n, p));
      if (p < n && t[p] == ',')
        p = skip_ws (t, n, p + 1);
      else
        break;
      index++;
    }
}

bool
tg__json_find_duplicate_key (const char *text, size_t len, char path[TG_ERROR_PATH_MAX],
                             size_t *offset)
{
  DupScan s = { .t = text, .n = len };
  char cur[TG_ERROR_PATH_MAX] = "";
  size_t p = skip_ws (text, len, 0);

  if (len - p >= 3 && memcmp (text + p, "\xef\xbb\xbf", 3) == 0)
    p = skip_ws (text, len, p + 3);
  scan_value (&s, p, cur, 0, 0);
  if (!s.found)
    return false;
  snprintf (path, TG_ERROR_PATH_MAX, "%s", s.path);
  *offset = s.found_pos;
  return true;
}
