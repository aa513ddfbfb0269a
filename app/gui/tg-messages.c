/* Engine messages in the user's language: the format a message came from
 * is found by matching it, text for text, with the engine's list; each
 * conversion (%s, %d, %g, ...) takes the text it stood for.  The matcher
 * backtracks, shortest capture first, so "expected %s, got %s" splits
 * "expected an integer in 1..16, got 40" at the first ", got ".  The
 * translated format may put the arguments in another order ("%2$s").
 * A "place: message" line translates its message after the place.
 */
#include "config.h"

#include "tg-messages.h"

#include <glib/gi18n.h>
#include <string.h>
#include <tgraph/tgraph.h>

#define MAX_ARGS 8
#define MAX_DEPTH 3

/* The length of the conversion at F (just after its '%'): flags, an
 * argument position, width, precision, length and the conversion letter;
 * 0 when it is not one.  *POS gets the position (1-based) or 0. */
static int
conversion_length (const char *f, int *pos)
{
  const char *p = f;

  *pos = 0;
  if (g_ascii_isdigit (*p))
    {
      const char *q = p;
      int n = 0;
      while (g_ascii_isdigit (*q))
        n = 10 * n + (*q++ - '0');
      if (*q == '$')
        {
          *pos = n;
          p = q + 1;
        }
    }
  while (*p && strchr ("-+ #0'", *p))
    p++;
  while (g_ascii_isdigit (*p) || *p == '.')
    p++;
  while (*p && strchr ("hlLqjzt", *p))
    p++;
  return *p && strchr ("diouxXeEfFgGaAcsp", *p) ? (int) (p - f) + 1 : 0;
}

/* Does MSG match FMT from here?  Conversion N on takes CAP_AT[N] and
 * CAP_LEN[N]; *N_CAPS gets how many there were. */
static gboolean
match (const char *fmt, const char *msg, const char **cap_at, int *cap_len, int n, int *n_caps)
{
  while (*fmt)
    {
      int pos, len;
      if (fmt[0] == '%' && fmt[1] == '%')
        {
          if (*msg != '%')
            return FALSE;
          fmt += 2, msg++;
          continue;
        }
      if (fmt[0] == '%' && (len = conversion_length (fmt + 1, &pos)) > 0)
        {
          int rest = (int) strlen (msg);
          if (n >= MAX_ARGS)
            return FALSE;
          /* Shortest first; only %s may stand for nothing. */
          for (int k = fmt[len] == 's' ? 0 : 1; k <= rest; k++)
            {
              cap_at[n] = msg;
              cap_len[n] = k;
              if (match (fmt + 1 + len, msg + k, cap_at, cap_len, n + 1, n_caps))
                return TRUE;
            }
          return FALSE;
        }
      if (*fmt != *msg)
        return FALSE;
      fmt++, msg++;
    }
  *n_caps = n;
  return *msg == '\0';
}

static char *translate (const char *message, TgTranslateFunc tr, gpointer user, int depth);

/* FORMAT with each conversion replaced by its argument, in the order of
 * the conversions or of their positions. */
static char *
substitute (const char *format, char **args, int n)
{
  GString *out = g_string_new (NULL);
  int next = 0;

  for (const char *f = format; *f;)
    {
      int pos, len;
      if (f[0] == '%' && f[1] == '%')
        {
          g_string_append_c (out, '%');
          f += 2;
        }
      else if (f[0] == '%' && (len = conversion_length (f + 1, &pos)) > 0)
        {
          int k = pos > 0 ? pos - 1 : next++;
          if (k >= 0 && k < n)
            g_string_append (out, args[k]);
          f += 1 + len;
        }
      else
        g_string_append_c (out, *f++);
    }
  return g_string_free (out, FALSE);
}

/* MESSAGE made from one of the engine's formats, translated; NULL when it
 * is from none.  Where several formats match ("unknown parameter of %s"
 * and the longer one that names the old name), the one whose own text
 * covers most of the message wins: its arguments say the least. */
static char *
translate_whole (const char *message, TgTranslateFunc tr, gpointer user, int depth)
{
  int n_formats, best = -1, best_text = -1, n = 0;
  const char *const *formats = tg_message_formats (&n_formats);
  const char *cap_at[MAX_ARGS];
  int cap_len[MAX_ARGS];
  char *args[MAX_ARGS], *out;
  int len = (int) strlen (message);

  for (int k = 0; k < n_formats; k++)
    {
      int text = len;

      if (!match (formats[k], message, cap_at, cap_len, 0, &n))
        continue;
      for (int i = 0; i < n; i++)
        text -= cap_len[i];
      if (text > best_text)
        best = k, best_text = text;
    }
  if (best < 0)
    return NULL;
  match (formats[best], message, cap_at, cap_len, 0, &n);
  for (int i = 0; i < n; i++)
    {
      g_autofree char *arg = g_strndup (cap_at[i], (gsize) cap_len[i]);
      args[i] = translate (arg, tr, user, depth + 1);
    }
  out = substitute (tr (formats[best], user), args, n);
  for (int i = 0; i < n; i++)
    g_free (args[i]);
  return out;
}

static char *
translate (const char *message, TgTranslateFunc tr, gpointer user, int depth)
{
  char *whole;
  const char *colon;

  if (depth > MAX_DEPTH)
    return g_strdup (message);
  if ((whole = translate_whole (message, tr, user, depth)))
    return whole;
  /* "nodes[3] "base".params.octaves: expected ...": the place stays. */
  for (colon = strstr (message, ": "); colon; colon = strstr (colon + 2, ": "))
    if ((whole = translate_whole (colon + 2, tr, user, depth)))
      {
        char *out = g_strdup_printf ("%.*s: %s", (int) (colon - message), message, whole);
        g_free (whole);
        return out;
      }
  return g_strdup (message);
}

char *
tg_message_translate_with (const char *message, TgTranslateFunc translate_fn, gpointer user)
{
  return message ? translate (message, translate_fn, user, 0) : NULL;
}

static const char *
gettext_format (const char *format, gpointer user)
{
  return g_dgettext (GETTEXT_PACKAGE, format);
}

char *
tg_message_translate (const char *message)
{
  return tg_message_translate_with (message, gettext_format, NULL);
}
