/* The internal JSON pieces the .tgraph code stands on: shortest
 * round-trip numbers (in any locale), the emitter's layout, byte offsets
 * to line:column, and the position locator behind error messages. */
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tgformats-private.h"
#include "tgtest.h"

static void
check_format (double v, const char *want)
{
  char got[32];

  tg_format_double (v, got);
  TG_CHECK_MSG (strcmp (got, want) == 0, "%.17g -> \"%s\", want \"%s\"", v, got, want);
  if (strcmp (want, "null") != 0)
    TG_CHECK_MSG (tg_strtod (got, NULL) == v || (v == 0 && tg_strtod (got, NULL) == 0),
                  "\"%s\" does not read back", got);
}

static void
test_format_double_shortest_round_trip (void)
{
  check_format (0, "0");
  check_format (-0.0, "-0.0");
  check_format (900, "900");
  check_format (-1200, "-1200");
  check_format (0.5, "0.5");
  check_format (0.1, "0.1");
  check_format (1.0 / 3.0, "0.3333333333333333");
  check_format (0.1 + 0.2, "0.30000000000000004");
  check_format (2147483647.0, "2147483647");
  check_format (1e21, "1e+21");
  check_format (1e-7, "1e-07");
  check_format (5e-324, "4.94065645841247e-324");
  check_format (1.7976931348623157e308, "1.7976931348623157e+308");
  check_format (123456789012345680.0, "1.2345678901234568e+17");
  check_format (INFINITY, "null");
  check_format (NAN, "null");
  /* Every double of a sweep reads back bit-exact. */
  for (int i = 1; i < 20000; i++)
    {
      double v = (double) i / 7919.0 * (i % 2 ? 1e-3 : 1e5);
      char buf[32];
      tg_format_double (v, buf);
      if (tg_strtod (buf, NULL) != v)
        {
          TG_CHECK_MSG (0, "%.17g -> %s", v, buf);
          break;
        }
    }
}

/* A locale with a decimal comma: the system's, or one compiled with
 * localedef into the test folder (tgtest_tmpdir, removed at exit; glibc
 * reads LOCPATH in setlocale).  Called once: it makes that folder. */
static bool
use_decimal_comma_locale (void)
{
  char cmd[512];
  const char *dir;

  if (setlocale (LC_ALL, "de_DE.UTF-8") || setlocale (LC_ALL, "fr_FR.UTF-8"))
    return true;
  dir = tgtest_tmpdir ("tgfmt-locale-");
  if (!dir)
    return false;
  snprintf (cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 '%s/de_DE.UTF-8' > /dev/null 2>&1",
            dir);
  if (system (cmd) != 0)
    return false;
  setenv ("LOCPATH", dir, 1);
  return setlocale (LC_ALL, "de_DE.UTF-8") != NULL;
}

static void
test_format_double_ignores_locale (void)
{
  char got[32];
  bool comma = use_decimal_comma_locale ();

  if (comma)
    {
      snprintf (got, sizeof got, "%g", 0.5);
      TG_CHECK_MSG (strcmp (got, "0,5") == 0, "the test locale prints %s", got);
    }
  else
    fprintf (stderr, "  (no decimal-comma locale available; checking the C locale only)\n");
  tg_format_double (0.25, got);
  TG_CHECK_MSG (strcmp (got, "0.25") == 0, "got %s", got);
  tg_format_double (1e-7, got);
  TG_CHECK_MSG (strcmp (got, "1e-07") == 0, "got %s", got);
  TG_CHECK (tg_strtod ("0.75", NULL) == 0.75);
  setlocale (LC_ALL, "C");
  unsetenv ("LOCPATH");
}

static char *
emit (const char *json)
{
  bool ok;
  json_object *o = tg__json_parse (json, &ok);
  TgBuf b;

  TG_CHECK_MSG (ok, "cannot parse %s", json);
  tg__buf_init (&b);
  tg__json_emit (&b, o, 0);
  json_object_put (o);
  return tg__buf_steal (&b);
}

static void
check_emit (const char *json, const char *want)
{
  char *got = emit (json);
  TG_CHECK_MSG (got && strcmp (got, want) == 0, "emit %s:\n%s\nwant:\n%s", json, got, want);
  free (got);
}

static void
test_emitter_layout (void)
{
  check_emit ("[4096,4096]", "[4096, 4096]");
  check_emit ("{\"x\":40,\"y\":80}", "{ \"x\": 40, \"y\": 80 }");
  check_emit ("[[0,0],[0.5,0.25],[1,1]]", "[[0, 0], [0.5, 0.25], [1, 1]]");
  check_emit ("{}", "{}");
  check_emit ("[]", "[]");
  check_emit ("{\"a\":{\"b\":1}}", "{\n  \"a\": { \"b\": 1 }\n}");
  check_emit ("{\"s\":\"q\\\"\\\\\\n\\u0001\\u00e9\"}", "{ \"s\": \"q\\\"\\\\\\n\\u0001\xc3\xa9\" }");
  check_emit ("{\"big\":18446744073709551615,\"neg\":-9223372036854775808}",
              "{ \"big\": 18446744073709551615, \"neg\": -9223372036854775808 }");
  check_emit ("[1.0,2.50,1e2,null,true,false]", "[1, 2.5, 100, null, true, false]");
  /* Too long for one line: one element per line, nested pairs still compact. */
  {
    TgBuf in;
    char *got;
    tg__buf_init (&in);
    tg__buf_putc (&in, '[');
    for (int i = 0; i < 12; i++)
      tg__buf_printf (&in, "%s[0.%d123456, 0.%d654321]", i ? "," : "", i, i);
    tg__buf_putc (&in, ']');
    got = emit (in.data);
    TG_CHECK_STR_CONTAINS (got, "[\n  [0.0123456, 0.0654321],\n  [0.1123456, 0.1654321],\n");
    TG_CHECK_STR_CONTAINS (got, "  [0.11123456, 0.11654321]\n]");
    free (got);
    tg__buf_clear (&in);
  }
  /* Parsing is strict: trailing text and bad syntax are refused. */
  {
    bool ok;
    json_object *o = tg__json_parse ("{} x", &ok);
    TG_CHECK (!ok && o == NULL);
    o = tg__json_parse ("null", &ok);
    TG_CHECK (ok && o == NULL);
  }
}

static void
test_text_position (void)
{
  const char *t = "ab\ncd\n\xc3\xa9x\n";
  int line, col;

  tg__text_position (t, strlen (t), 0, &line, &col);
  TG_CHECK (line == 1 && col == 1);
  tg__text_position (t, strlen (t), 4, &line, &col);
  TG_CHECK (line == 2 && col == 2);
  /* 'x' follows a two-byte character: column 2, not 3. */
  tg__text_position (t, strlen (t), 8, &line, &col);
  TG_CHECK_MSG (line == 3 && col == 2, "%d:%d", line, col);
  tg__text_position (t, strlen (t), 1000, &line, &col);
  TG_CHECK (line == 4 && col == 1);
}

static void
check_locate (const char *text, const char *path, int want_matched, const char *want_at)
{
  size_t off = 0;
  int matched = tg__json_locate (text, strlen (text), path, &off);
  TG_CHECK_MSG (matched == want_matched, "%s: matched %d, want %d", path, matched, want_matched);
  TG_CHECK_MSG (strncmp (text + off, want_at, strlen (want_at)) == 0, "%s: at \"%.20s\", want \"%s\"",
                path, text + off, want_at);
}

static void
test_locate_paths (void)
{
  const char *t = "{\n"
                  "  \"nodes\": [\n"
                  "    { \"id\": \"a\", \"params\": { \"x\": [1, {\"y\": \"]\"}], \"s\": \"}\" } },\n"
                  "    { \"id\": \"b\", \"params\": { \"octaves\": 40, \"o\\u0063t\": 7 } }\n"
                  "  ],\n"
                  "  \"k.ey\": 1,\n"
                  "  \"dup\": 1, \"dup\": 2\n"
                  "}\n";

  check_locate (t, "", 0, "{");
  check_locate (t, "nodes", 1, "[");
  check_locate (t, "nodes[1]", 2, "{ \"id\": \"b\"");
  check_locate (t, "nodes[1].params.octaves", 4, "40");
  /* Escapes in keys are decoded before comparing. */
  check_locate (t, "nodes[1].params.oct", 4, "7 }");
  /* Brackets and braces inside strings do not confuse the skipping. */
  check_locate (t, "nodes[0].params.s", 4, "\"}\"");
  check_locate (t, "nodes[0].params.x[1].y", 6, "\"]\"");
  /* Missing parts: the deepest part that exists. */
  check_locate (t, "nodes[1].params.bogus", 3, "{ \"octaves\"");
  check_locate (t, "nodes[7].id", 1, "[");
  check_locate (t, "links[0].to", 0, "{");
  /* json-c keeps the last of duplicate keys; so does the locator. */
  check_locate (t, "dup", 1, "2");
  TG_CHECK (tg__json_locate ("  ", 2, "a", &(size_t) { 0 }) == -1);
}

static void
check_duplicate (const char *text, const char *want_path, const char *want_at)
{
  char path[TG_ERROR_PATH_MAX] = "";
  size_t off = 0;
  bool found = tg__json_find_duplicate_key (text, strlen (text), path, &off);

  if (!want_path)
    {
      TG_CHECK_MSG (!found, "%s: found %s", text, path);
      return;
    }
  TG_CHECK_MSG (found && strcmp (path, want_path) == 0, "%s: path \"%s\", want \"%s\"", text, path,
                want_path);
  TG_CHECK_MSG (strncmp (text + off, want_at, strlen (want_at)) == 0, "%s: at \"%s\"", text,
                text + off);
}

static void
test_duplicate_keys (void)
{
  check_duplicate ("{\"a\": 1, \"b\": {\"a\": 2}, \"c\": [{\"a\": 1}, {\"a\": 2}]}", NULL, NULL);
  check_duplicate ("{\"a\": 1, \"b\": 2, \"a\": 3}", "a", "\"a\": 3");
  check_duplicate ("{\"n\": [{}, {\"p\": {\"x\": 1, \"y\": 2, \"x\": 3}}]}", "n[1].p.x", "\"x\": 3");
  /* Decoded before comparing. */
  check_duplicate ("{\"k\": {\"\\u00e9\": 1, \"\xc3\xa9\": 2}}", "k.\xc3\xa9", "\"\xc3\xa9\"");
  /* The first duplicate in the text wins over a deeper, later one. */
  check_duplicate ("{\"z\": {\"q\": 1, \"q\": 2}, \"z\": 0}", "z.q", "\"q\": 2");
  /* Strings that look like keys are not keys. */
  check_duplicate ("{\"a\": \"\\\"a\\\": 1\", \"b\": [\"a\", \"a\"]}", NULL, NULL);
}

static void
test_error_locate_fills_line_and_column (void)
{
  const char *t = "{\n  \"world\": {\n    \"seed\": -1\n  }\n}\n";
  TgError e = { 0 };

  tg_error_set (&e, TG_ERANGE, "world.seed", "x");
  tg__error_locate (&e, NULL, t, strlen (t));
  TG_CHECK_INT_EQ (e.line, 3);
  TG_CHECK_INT_EQ (e.column, 13);
  /* Another path than err->path: where the text has it (the old name of
   * a renamed key), the error keeping its own path. */
  tg__error_locate (&e, "world", t, strlen (t));
  TG_CHECK_INT_EQ (e.line, 2);
  TG_CHECK_INT_EQ (e.column, 12);
  TG_CHECK (strcmp (e.path, "world.seed") == 0);
}

static void
test_suggestions (void)
{
  TgSuggest s;

  TG_CHECK_INT_EQ (tg_edit_distance ("heigth", "height"), 2);
  TG_CHECK_INT_EQ (tg_edit_distance ("", "abc"), 3);
  tg_suggest_init (&s, "noise.fbn");
  tg_suggest_add (&s, "curve");
  tg_suggest_add (&s, "noise.fbm");
  tg_suggest_add (&s, "noise.fbx");
  TG_CHECK (s.best && strcmp (tg_suggest_result (&s), "noise.fbm") == 0);
  tg_suggest_init (&s, "zzzzzz");
  tg_suggest_add (&s, "curve");
  TG_CHECK (tg_suggest_result (&s) == NULL);
}

int
main (void)
{
  TG_RUN (test_format_double_shortest_round_trip);
  TG_RUN (test_format_double_ignores_locale);
  TG_RUN (test_emitter_layout);
  TG_RUN (test_text_position);
  TG_RUN (test_locate_paths);
  TG_RUN (test_duplicate_keys);
  TG_RUN (test_error_locate_fills_line_and_column);
  TG_RUN (test_suggestions);
  return tgtest_result ();
}
