/* The parameter codec: the one place a parameter value is checked, read
 * from text (`--set`, the GUI's entries) and written as text, with the
 * colour and number forms every front end shares.  The .tgraph loader
 * turns JSON into values and reports a value of the wrong kind through
 * tg_param_error_got; everything else about a value is said here, once,
 * so a file and `--set` give the same message for the same bad value. */
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tgraph/io.h"
#include "tgraph/param.h"
#include "tgraph/messages.h"

/* --- numbers ------------------------------------------------------------------ */

/* The GUI runs under the user's locale, where printf may write "0,5".
 * A per-thread C locale (uselocale) keeps files the same everywhere
 * without touching the process locale other threads read. */
static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void
c_locale_make (void)
{
  c_locale = newlocale (LC_ALL_MASK, "C", (locale_t) 0);
}

static locale_t
c_locale_push (void)
{
  pthread_once (&c_locale_once, c_locale_make);
  if (!c_locale)
    return (locale_t) 0;
  return uselocale (c_locale);
}

static void
c_locale_pop (locale_t old)
{
  if (old)
    uselocale (old);
}

double
tg_strtod (const char *s, char **end)
{
  locale_t old = c_locale_push ();
  double v = strtod (s, end);
  c_locale_pop (old);
  return v;
}

void
tg_format_double (double v, char out[32])
{
  locale_t old;

  if (!isfinite (v))
    {
      /* JSON has no infinities; callers reject them before writing. */
      strcpy (out, "null");
      return;
    }
  if (v == 0.0)
    {
      strcpy (out, signbit (v) ? "-0.0" : "0");
      return;
    }
  old = c_locale_push ();
  for (int prec = 15; prec <= 17; prec++)
    {
      snprintf (out, 32, "%.*g", prec, v);
      if (strtod (out, NULL) == v)
        break;
    }
  c_locale_pop (old);
}

/* The whole of S (spaces after it allowed) as a finite number: JSON,
 * where values end up, has no NaN or Infinity. */
static bool
parse_double (const char *s, double *out)
{
  char *end;

  errno = 0;
  *out = tg_strtod (s, &end);
  while (*end == ' ')
    end++;
  return end != s && *end == '\0' && errno == 0 && isfinite (*out);
}

/* --- how values read in messages ------------------------------------------------- */

const char *
tg_describe_number (double v, char *buf, size_t size)
{
  char tmp[32];

  if (isnan (v))
    snprintf (buf, size, "nan");
  else if (isinf (v))
    snprintf (buf, size, "%sinf", v < 0 ? "-" : "");
  else
    {
      tg_format_double (v, tmp);
      snprintf (buf, size, "%s", tmp);
    }
  return buf;
}

const char *
tg_string_escape (unsigned char c, char u[7])
{
  static const char hex[] = "0123456789abcdef";

  switch (c)
    {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    case '\b': return "\\b";
    case '\f': return "\\f";
    default:
      if (c >= 0x20 && c != 0x7f)
        return NULL;
      snprintf (u, 7, "\\u00%c%c", hex[c >> 4], hex[c & 15]);
      return u;
    }
}

const char *
tg_describe_string (const char *s, char *buf, size_t size)
{
  char q[64];
  size_t n = 0;

  /* Escaped as JSON writes it; past 48 characters cut to 44 and "...". */
  q[n++] = '"';
  for (; *s && n < 56; s++)
    {
      char u[7];
      const char *esc = tg_string_escape ((unsigned char) *s, u);
      if (esc)
        for (; *esc && n < sizeof q - 1; esc++)
          q[n++] = *esc;
      else
        q[n++] = *s;
    }
  if (*s == '\0' && n < sizeof q - 1)
    q[n++] = '"';
  q[n] = '\0';
  if (n > 48 || *s)
    snprintf (buf, size, "%.44s...\"", q);
  else
    snprintf (buf, size, "%s", q);
  return buf;
}

int
tg_utf8_char_len (const char *s, size_t n)
{
  const unsigned char *u = (const unsigned char *) s;
  unsigned lo = 0x80, hi = 0xbf;
  int len;

  if (n == 0)
    return 0;
  if (u[0] < 0x80)
    return 1;
  /* The second byte's range (RFC 3629's table) rules out overlong forms,
   * surrogates (ED A0..BF) and code points past U+10FFFF. */
  if (u[0] >= 0xc2 && u[0] <= 0xdf)
    len = 2;
  else if (u[0] >= 0xe0 && u[0] <= 0xef)
    {
      len = 3;
      lo = u[0] == 0xe0 ? 0xa0 : 0x80;
      hi = u[0] == 0xed ? 0x9f : 0xbf;
    }
  else if (u[0] >= 0xf0 && u[0] <= 0xf4)
    {
      len = 4;
      lo = u[0] == 0xf0 ? 0x90 : 0x80;
      hi = u[0] == 0xf4 ? 0x8f : 0xbf;
    }
  else
    return 0;
  if ((size_t) len > n || u[1] < lo || u[1] > hi)
    return 0;
  for (int k = 2; k < len; k++)
    if ((u[k] & 0xc0) != 0x80)
      return 0;
  return len;
}

size_t
tg_utf8_check (const char *s, size_t n)
{
  size_t p = 0;

  while (p < n)
    {
      int len = tg_utf8_char_len (s + p, n - p);
      if (len == 0)
        return p;
      p += (size_t) len;
    }
  return n;
}

/* TEXT as a message says it: a number as it is written (1.2e29, 1e400,
 * NaN), anything else quoted. */
static const char *
describe_text (const char *text, char *buf, size_t size)
{
  char *end;

  tg_strtod (text, &end);
  while (*end == ' ')
    end++;
  if (end != text && *end == '\0' && text[0] != ' ')
    {
      snprintf (buf, size, "%s", text);
      return buf;
    }
  return tg_describe_string (text, buf, size);
}

/* --- colours -------------------------------------------------------------------- */

int
tg_hex_digit (int ch)
{
  if (ch >= '0' && ch <= '9')
    return ch - '0';
  if (ch >= 'a' && ch <= 'f')
    return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F')
    return ch - 'A' + 10;
  return -1;
}

int
tg_color_parse (const char *text, double rgba[4])
{
  double c[4] = { 0, 0, 0, 1 };
  size_t n = text ? strlen (text) : 0;

  if (n == 0 || text[0] != '#' || (n != 7 && n != 9))
    return TG_ETYPE;
  for (size_t k = 0; k < (n - 1) / 2; k++)
    {
      int hi = tg_hex_digit (text[1 + 2 * k]), lo = tg_hex_digit (text[2 + 2 * k]);
      if (hi < 0 || lo < 0)
        return TG_ETYPE;
      c[k] = (double) (hi * 16 + lo) / 255.0;
    }
  memcpy (rgba, c, sizeof c);
  return 0;
}

static int
color_byte (double c)
{
  double v = c * 255.0 + 0.5;

  if (!(v >= 0.0))
    return 0;
  if (v >= 255.0)
    return 255;
  return (int) v;
}

const char *
tg_color_format (const double rgba[4], char out[10])
{
  int a = color_byte (rgba[3]);

  if (a == 255)
    snprintf (out, 10, "#%02x%02x%02x", color_byte (rgba[0]), color_byte (rgba[1]),
              color_byte (rgba[2]));
  else
    snprintf (out, 10, "#%02x%02x%02x%02x", color_byte (rgba[0]), color_byte (rgba[1]),
              color_byte (rgba[2]), a);
  return out;
}

/* --- messages ------------------------------------------------------------------- */

/* "an integer in 1..16", "a number >= 0", "a number": each a message of
 * its own, so the app translates the phrase inside "expected %s, got %s". */
static const char *
number_text (bool integer, double min, double max, char *buf, size_t size)
{
  char a[32], b[32];
  bool has_min = isfinite (min) && min > -1e300;
  bool has_max = isfinite (max) && max < 1e300;

  tg_describe_number (min, a, sizeof a);
  tg_describe_number (max, b, sizeof b);
  if (has_min && has_max)
    snprintf (buf, size, integer ? TG_MSG_AN_INTEGER_IN : TG_MSG_A_NUMBER_IN, a, b);
  else if (has_min)
    snprintf (buf, size, integer ? TG_MSG_AN_INTEGER_MIN : TG_MSG_A_NUMBER_MIN, a);
  else if (has_max)
    snprintf (buf, size, integer ? TG_MSG_AN_INTEGER_MAX : TG_MSG_A_NUMBER_MAX, b);
  else
    snprintf (buf, size, "%s", integer ? TG_MSG_AN_INTEGER : TG_MSG_A_NUMBER);
  return buf;
}

/* How many [index] steps WHERE takes into a value ("[2][0]" is 2). */
static int
depth_of (const char *where)
{
  int n = 0;

  for (; where && *where; where++)
    n += *where == '[';
  return n;
}

const char *
tg_param_expected (const TgParamDesc *d, const char *where, char *buf, size_t size)
{
  int depth = depth_of (where);
  bool integer = d->type == TG_PARAM_INT || d->type == TG_PARAM_SEED;

  switch (d->type)
    {
    case TG_PARAM_FLOAT:
    case TG_PARAM_INT:
    case TG_PARAM_SEED:
      number_text (integer, d->min, d->max, buf, size);
      break;
    case TG_PARAM_BOOL:
      snprintf (buf, size, "%s", TG_MSG_TRUE_OR_FALSE);
      break;
    case TG_PARAM_ENUM:
      {
        char list[256] = "";
        size_t used = 0;
        for (int i = 0; d->choices && d->choices[i] && used < sizeof list; i++)
          {
            char q[64];
            used += (size_t) snprintf (list + used, sizeof list - used, "%s%s", i ? ", " : "",
                                       tg_describe_string (d->choices[i], q, sizeof q));
          }
        snprintf (buf, size, TG_MSG_ONE_OF, list);
      }
      break;
    case TG_PARAM_STRING:
      snprintf (buf, size, "%s", TG_MSG_A_STRING);
      break;
    case TG_PARAM_INPUT_PATH:
    case TG_PARAM_OUTPUT_PATH:
      snprintf (buf, size, "%s", TG_MSG_A_PATH);
      break;
    case TG_PARAM_VEC2:
    case TG_PARAM_VEC3:
      if (depth > 0)
        number_text (integer, d->min, d->max, buf, size);
      else
        snprintf (buf, size, "an array of %d numbers", tg__param_vec_len (d->type));
      break;
    case TG_PARAM_COLOR:
      snprintf (buf, size, "a colour \"#rrggbb\" or \"#rrggbbaa\"");
      break;
    case TG_PARAM_CURVE:
      if (depth > 1)
        number_text (integer, d->min, d->max, buf, size);
      else if (depth == 1)
        snprintf (buf, size, "an [x, y] pair");
      else
        snprintf (buf, size, "an array of [x, y] points");
      break;
    case TG_PARAM_LIST:
      snprintf (buf, size, depth > 0 ? "an object" : "an array of objects");
      break;
    case TG_PARAM_TYPE_COUNT:
      snprintf (buf, size, "a value");
      break;
    }
  return buf;
}

int
tg_param_error_got (const TgParamDesc *d, int code, const char *where, const char *got,
                    TgError *err)
{
  char path[TG_ERROR_PATH_MAX], what[256];

  snprintf (path, sizeof path, "params.%s%s", d->name, where ? where : "");
  return tg_error_set (err, code, path, TG_MSG_EXPECTED_GOT,
                       tg_param_expected (d, where, what, sizeof what), got);
}

/* An error about field FIELD of item ITEM of list D: "params.FIELD..."
 * from the field's own check becomes "params.NAME[ITEM].FIELD...". */
static int
item_error (const TgParamDesc *d, int item, int rc, TgError *err)
{
  char buf[2 * TG_ERROR_PATH_MAX + 32];
  const char *rest;

  if (err == NULL)
    return rc;
  rest = strncmp (err->path, "params.", 7) == 0 ? err->path + 7 : err->path;
  snprintf (buf, sizeof buf, "params.%s[%d].%s", d->name, item, rest);
  buf[TG_ERROR_PATH_MAX - 1] = '\0';
  memcpy (err->path, buf, TG_ERROR_PATH_MAX);
  return rc;
}

int
tg_param_item_field (const TgParamDesc *d, int item, const char *key, TgError *err)
{
  char path[TG_ERROR_PATH_MAX], what[TG_ERROR_MESSAGE_MAX];
  const char *hint;
  TgSuggest sg;

  for (int k = 0; k < d->n_item_params; k++)
    if (strcmp (d->item_params[k].name, key) == 0)
      return k;
  tg_suggest_init (&sg, key);
  for (int k = 0; k < d->n_item_params; k++)
    tg_suggest_add (&sg, d->item_params[k].name);
  hint = tg_suggest_result (&sg);
  snprintf (path, sizeof path, "params.%s[%d].%s", d->name, item, key);
  if (!hint)
    return tg_error_set (err, TG_EUNKNOWN, path, TG_MSG_UNKNOWN_FIELD, d->name);
  snprintf (what, sizeof what, TG_MSG_UNKNOWN_FIELD, d->name);
  return tg_error_set (err, TG_EUNKNOWN, path, TG_MSG_DID_YOU_MEAN, what, hint);
}

/* --- the validator ------------------------------------------------------------ */

static int
check_choice (const TgParamDesc *d, const TgParamValue *v, TgError *err)
{
  char got[64];
  const char *hint;
  TgSuggest sg;
  int rc;

  if (tg_param_enum_index (d, v->s) >= 0)
    return 0;
  rc = tg_param_error_got (d, TG_ERANGE, NULL, tg_describe_string (v->s ? v->s : "", got, sizeof got),
                           err);
  tg_suggest_init (&sg, v->s ? v->s : "");
  for (int i = 0; d->choices && d->choices[i]; i++)
    tg_suggest_add (&sg, d->choices[i]);
  hint = tg_suggest_result (&sg);
  if (hint && err)
    {
      /* The message is short; keeping its start leaves room for the hint. */
      char plain[TG_ERROR_MESSAGE_MAX / 2];
      memcpy (plain, err->message, sizeof plain - 1);
      plain[sizeof plain - 1] = '\0';
      snprintf (err->message, sizeof err->message, TG_MSG_DID_YOU_MEAN, plain, hint);
    }
  return rc;
}

/* Component K of a vector, or [x, y] of curve point K, out of D's range? */
static int
check_number (const TgParamDesc *d, double x, const char *where, TgError *err)
{
  char got[32];

  if (isfinite (x) && x >= d->min && x <= d->max)
    return 0;
  return tg_param_error_got (d, TG_ERANGE, where, tg_describe_number (x, got, sizeof got), err);
}

/* Text reaches file names, manifests and saved graphs, which strict
 * JSON readers refuse when it is not UTF-8. */
static int
check_utf8 (const char *path, const char *s, TgError *err)
{
  size_t n = strlen (s), bad = tg_utf8_check (s, n);

  if (bad == n)
    return 0;
  return tg_error_set (err, TG_EINVAL, path, TG_MSG_NOT_UTF8, bad + 1,
                       (unsigned) (unsigned char) s[bad]);
}

int
tg_param_value_check (const TgParamDesc *d, const TgParamValue *v, TgError *err)
{
  char path[TG_ERROR_PATH_MAX], where[32];
  char a[32], b[32];
  int rc;

  snprintf (path, sizeof path, "params.%s", d->name);
  if (v->type != d->type)
    return tg_error_set (err, TG_ETYPE, path, TG_MSG_EXPECTED_TYPE_VALUE,
                         tg_param_type_name (d->type));
  if (v->s && (rc = check_utf8 (path, v->s, err)) < 0)
    return rc;
  switch (d->type)
    {
    case TG_PARAM_FLOAT:
      return check_number (d, v->f, NULL, err);
    case TG_PARAM_INT:
    case TG_PARAM_SEED:
      if (v->i < d->min || v->i > d->max)
        {
          snprintf (a, sizeof a, "%d", v->i);
          return tg_param_error_got (d, TG_ERANGE, NULL, a, err);
        }
      return 0;
    case TG_PARAM_BOOL:
      if (v->i != 0 && v->i != 1)
        {
          snprintf (a, sizeof a, "%d", v->i);
          return tg_param_error_got (d, TG_ERANGE, NULL, a, err);
        }
      return 0;
    case TG_PARAM_ENUM:
      return check_choice (d, v, err);
    case TG_PARAM_STRING:
      if (v->s == NULL && (d->flags & TG_PARAM_REQUIRED))
        return tg_error_set (err, TG_EMISSING, path, TG_MSG_REQUIRED_MISSING);
      return 0;
    case TG_PARAM_INPUT_PATH:
      if (v->s == NULL || v->s[0] == '\0')
        return tg_error_set (err, TG_EMISSING, path, TG_MSG_PATH_REQUIRED);
      return 0;
    case TG_PARAM_OUTPUT_PATH:
      if (v->s == NULL || v->s[0] == '\0')
        return tg_error_set (err, TG_EMISSING, path, TG_MSG_OUTPUT_NAME_REQUIRED);
      if (!tg_path_is_safe_relative (v->s))
        return tg_error_set (err, TG_EPATH, path, TG_MSG_EXPORT_PATH_RELATIVE, v->s);
      return 0;
    case TG_PARAM_VEC2:
    case TG_PARAM_VEC3:
    case TG_PARAM_COLOR:
      for (int k = 0; k < tg__param_vec_len (d->type); k++)
        {
          snprintf (where, sizeof where, "[%d]", k);
          if ((rc = check_number (d, v->v[k], where, err)) < 0)
            return rc;
        }
      return 0;
    case TG_PARAM_CURVE:
      if (v->n_points < 2 || v->xy == NULL)
        return tg_error_set (err, TG_ERANGE, path, TG_MSG_CURVE_TWO_POINTS, v->n_points);
      for (int k = 0; k < v->n_points; k++)
        {
          for (int c = 0; c < 2; c++)
            {
              snprintf (where, sizeof where, "[%d][%d]", k, c);
              if ((rc = check_number (d, v->xy[2 * k + c], where, err)) < 0)
                return rc;
            }
          if (k > 0 && !(v->xy[2 * k] > v->xy[2 * k - 2]))
            {
              snprintf (path, sizeof path, "params.%s[%d][0]", d->name, k);
              return tg_error_set (err, TG_ERANGE, path, TG_MSG_CURVE_X_INCREASE,
                                   tg_describe_number (v->xy[2 * k], a, sizeof a),
                                   tg_describe_number (v->xy[2 * k - 2], b, sizeof b));
            }
        }
      return 0;
    case TG_PARAM_LIST:
      if (v->n_items < d->min || v->n_items > d->max)
        return tg_error_set (err, TG_ERANGE, path, TG_MSG_ITEMS_COUNT,
                             tg_describe_number (d->min, a, sizeof a),
                             tg_describe_number (d->max, b, sizeof b), v->n_items);
      if (v->n_items > 0 && v->n_item_params != d->n_item_params)
        return tg_error_set (err, TG_ETYPE, path, TG_MSG_ITEMS_FIELDS, v->n_item_params,
                             d->n_item_params);
      for (int i = 0; i < v->n_items; i++)
        for (int k = 0; k < d->n_item_params; k++)
          if ((rc = tg_param_value_check (&d->item_params[k], tg_param_list_field (v, i, k), err)) < 0)
            return item_error (d, i, rc, err);
      return 0;
    case TG_PARAM_TYPE_COUNT:
      break;
    }
  return tg_error_set (err, TG_ETYPE, path, "unknown parameter type");
}

/* --- reading text ----------------------------------------------------------------- */

/* Copies [B, E) trimmed of spaces into a new string. */
static char *
trimmed (const char *b, const char *e)
{
  char *out;

  while (b < e && (*b == ' ' || *b == '\t' || *b == '\n'))
    b++;
  while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n'))
    e--;
  out = malloc ((size_t) (e - b) + 1);
  if (out)
    {
      memcpy (out, b, (size_t) (e - b));
      out[e - b] = '\0';
    }
  return out;
}

static int parse_text (const TgParamDesc *d, const char *text, TgParamValue *v, TgError *err);

/* One "field=value|field=value" item into item IDX of V. */
static int
parse_item (const TgParamDesc *d, char *item, int idx, TgParamValue *v, TgError *err)
{
  char path[TG_ERROR_PATH_MAX], got[64];

  for (char *q = item; *q;)
    {
      char *field_end = q + strcspn (q, "|"), *eq, *key, *val;
      char save = *field_end;
      TgParamValue fv;
      int k, rc;

      *field_end = '\0';
      eq = strchr (q, '=');
      if (eq == NULL)
        {
          snprintf (path, sizeof path, "params.%s[%d]", d->name, idx);
          return tg_error_set (err, TG_ETYPE, path, TG_MSG_FIELD_VALUE,
                               tg_describe_string (q, got, sizeof got));
        }
      key = trimmed (q, eq);
      val = trimmed (eq + 1, field_end);
      if (key == NULL || val == NULL)
        rc = tg_error_set (err, TG_ENOMEM, NULL, NULL);
      else if ((k = tg_param_item_field (d, idx, key, err)) < 0)
        rc = k;
      else if ((rc = parse_text (&d->item_params[k], val, &fv, err)) < 0)
        item_error (d, idx, rc, err);
      else
        {
          tg_param_value_clear (tg_param_list_field_mut (v, idx, k));
          *tg_param_list_field_mut (v, idx, k) = fv;
        }
      free (key);
      free (val);
      if (rc < 0)
        return rc;
      *field_end = save;
      q = save ? field_end + 1 : field_end;
    }
  return 0;
}

/* "name=grass|color=#ff0000; name=rock": items split by ';', fields by
 * '|', each "field=value" in the field's own text form; fields left out
 * keep their defaults. */
static int
parse_list (const TgParamDesc *d, const char *text, TgParamValue *v, TgError *err)
{
  const char *p = text;

  v->n_item_params = d->n_item_params;
  while (*p)
    {
      const char *item_end = p + strcspn (p, ";");
      char *item = trimmed (p, item_end);
      int idx, rc;

      if (item == NULL)
        return tg_error_set (err, TG_ENOMEM, NULL, NULL);
      if (item[0] != '\0')
        {
          idx = tg_param_list_append_default (v, d);
          rc = idx < 0 ? tg_error_set (err, TG_ENOMEM, NULL, NULL)
                       : parse_item (d, item, idx, v, err);
          if (rc < 0)
            {
              free (item);
              return rc;
            }
        }
      free (item);
      p = *item_end ? item_end + 1 : item_end;
    }
  return 0;
}

/* "x,y[,z]" into N numbers. */
static bool
parse_vec (const char *text, int n, double *out)
{
  const char *p = text;

  for (int k = 0; k < n; k++)
    {
      char part[64];
      size_t len = strcspn (p, ",");
      if (len >= sizeof part)
        return false;
      memcpy (part, p, len);
      part[len] = '\0';
      if (!parse_double (part, &out[k]))
        return false;
      p += len;
      if (k < n - 1)
        {
          if (*p != ',')
            return false;
          p++;
        }
    }
  return *p == '\0';
}

/* "x:y,x:y,..." into V's points; 0, TG_ETYPE or TG_ENOMEM. */
static int
parse_curve (const char *text, TgParamValue *v)
{
  const char *p = text;
  int cap = 0;

  while (*p)
    {
      double px, py;
      char *end;
      px = tg_strtod (p, &end);
      if (end == p || *end != ':')
        return TG_ETYPE;
      p = end + 1;
      py = tg_strtod (p, &end);
      if (end == p || (*end != ',' && *end != '\0'))
        return TG_ETYPE;
      p = *end ? end + 1 : end;
      if (v->n_points == cap)
        {
          double *grown;
          cap = cap ? cap * 2 : 8;
          grown = realloc (v->xy, sizeof (double) * 2 * (size_t) cap);
          if (grown == NULL)
            return TG_ENOMEM;
          v->xy = grown;
        }
      v->xy[2 * v->n_points] = px;
      v->xy[2 * v->n_points + 1] = py;
      v->n_points++;
    }
  return 0;
}

/* TEXT as a value of D's type, unchecked: only text that is not of the
 * type at all is an error here. */
static int
parse_text (const TgParamDesc *d, const char *text, TgParamValue *out, TgError *err)
{
  char got[64];
  TgParamValue v;
  double x;
  int rc = 0;

  memset (&v, 0, sizeof v);
  v.type = d->type;
  switch (d->type)
    {
    case TG_PARAM_FLOAT:
      if (!parse_double (text, &v.f))
        rc = TG_ETYPE;
      break;
    case TG_PARAM_INT:
    case TG_PARAM_SEED:
      if (!parse_double (text, &x) || x != floor (x))
        rc = TG_ETYPE;
      else if (x < INT_MIN || x > INT_MAX)
        return tg_param_error_got (d, TG_ERANGE, NULL, describe_text (text, got, sizeof got), err);
      else
        v.i = (int) x;
      break;
    case TG_PARAM_BOOL:
      if (strcmp (text, "true") == 0 || strcmp (text, "1") == 0)
        v.i = 1;
      else if (strcmp (text, "false") == 0 || strcmp (text, "0") == 0)
        v.i = 0;
      else
        rc = TG_ETYPE;
      break;
    case TG_PARAM_ENUM:
    case TG_PARAM_STRING:
    case TG_PARAM_INPUT_PATH:
    case TG_PARAM_OUTPUT_PATH:
      if ((v.s = strdup (text)) == NULL)
        rc = TG_ENOMEM;
      v.i = tg_param_enum_index (d, text);
      break;
    case TG_PARAM_VEC2:
    case TG_PARAM_VEC3:
      if (!parse_vec (text, tg__param_vec_len (d->type), v.v))
        rc = TG_ETYPE;
      break;
    case TG_PARAM_COLOR:
      rc = tg_color_parse (text, v.v);
      break;
    case TG_PARAM_CURVE:
      rc = parse_curve (text, &v);
      break;
    case TG_PARAM_LIST:
      if ((rc = parse_list (d, text, &v, err)) < 0)
        {
          tg_param_value_clear (&v);
          return rc;
        }
      break;
    case TG_PARAM_TYPE_COUNT:
      rc = TG_ETYPE;
      break;
    }
  if (rc < 0)
    {
      tg_param_value_clear (&v);
      if (rc == TG_ENOMEM)
        return tg_error_set (err, TG_ENOMEM, NULL, NULL);
      return tg_param_error_got (d, rc, NULL, describe_text (text, got, sizeof got), err);
    }
  *out = v;
  return 0;
}

int
tg_param_value_parse (const TgParamDesc *d, const char *text, TgParamValue *out, TgError *err)
{
  TgParamValue v;
  int rc;

  if ((rc = parse_text (d, text, &v, err)) < 0)
    return rc;
  if ((rc = tg_param_value_check (d, &v, err)) < 0)
    {
      tg_param_value_clear (&v);
      return rc;
    }
  *out = v;
  return 0;
}
