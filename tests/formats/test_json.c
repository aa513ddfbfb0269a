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

/* TEXT has its first problem at WANT_PATH, at the text WANT_AT, with a
 * message containing WANT_MSG; WANT_PATH NULL: no problem. */
static void
check_strict (const char *text, const char *want_path, const char *want_at, const char *want_msg)
{
  TgJsonProblem pb;
  bool found = tg__json_strict_problem (text, strlen (text), &pb);

  if (!want_path)
    {
      TG_CHECK_MSG (!found, "%s: found %s: %s", text, pb.path, pb.message);
      return;
    }
  TG_CHECK_MSG (found && strcmp (pb.path, want_path) == 0, "%s: path \"%s\", want \"%s\"", text,
                pb.path, want_path);
  TG_CHECK_MSG (found && strncmp (text + pb.offset, want_at, strlen (want_at)) == 0,
                "%s: at \"%s\"", text, text + pb.offset);
  TG_CHECK_MSG (found && strstr (pb.message, want_msg), "%s: \"%s\", want \"%s\"", text,
                pb.message, want_msg);
}

static void
check_duplicate (const char *text, const char *want_path, const char *want_at)
{
  check_strict (text, want_path, want_at, "appears twice in one object");
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

/* What RFC 8259 refuses and json-c's strict mode takes. */
static void
test_strict_refuses_what_rfc8259_refuses (void)
{
  /* Good text, all of it: escapes, a surrogate pair, UTF-8, numbers. */
  check_strict ("\xef\xbb\xbf {\"a\": [\"\\u00e9\\ud83c\\udfd4\\n\\/\", "
                "\"\xc3\xa9\xf0\x9f\x8f\x94\"],"
                " \"n\": [0, -0, 1.5, -2e10, 3E+2, 4e-1, 1e400], \"t\": [true, false, null], "
                "\"e\": {}, \"f\": []}",
                NULL, NULL, NULL);
  /* Strings: control characters, bytes that are not UTF-8, lone surrogates. */
  check_strict ("{\"p\": [\"a\tb\"]}", "p[0]", "\tb", "U+0009 in a string; JSON writes it as \\t");
  check_strict ("{\"p\": \"sm\xff" "all\"}", "p", "\xff", "invalid UTF-8 (byte 0xff)");
  check_strict ("{\"p\": \"\xc0\xaf\"}", "p", "\xc0", "invalid UTF-8 (byte 0xc0)"); /* overlong */
  check_strict ("{\"p\": \"\xed\xa0\x80\"}", "p", "\xed", "invalid UTF-8"); /* a surrogate */
  check_strict ("{\"p\": \"\xf4\x90\x80\x80\"}", "p", "\xf4", "invalid UTF-8"); /* > U+10FFFF */
  check_strict ("{\"p\": \"\xe2\x82\"}", "p", "\xe2", "invalid UTF-8"); /* cut short */
  check_strict ("{\"k\xfe" "\": 1}", "", "\xfe", "invalid UTF-8 (byte 0xfe)");
  check_strict ("{\"p\": \"a\\ud800b\"}", "p", "\\ud800", "first half of a UTF-16 surrogate pair");
  check_strict ("{\"p\": \"\\udc00\"}", "p", "\\udc00", "second half");
  check_strict ("{\"p\": \"\\ud800\\u0041\"}", "p", "\\ud800", "first half");
  /* Numbers as RFC 8259 writes them, and NaN and Infinity, as written. */
  check_strict ("{\"n\": {\"x\": 5.}}", "n.x", "5.}", "5. is not a JSON number");
  check_strict ("{\"n\": [1, NaN]}", "n[1]", "NaN", "NaN is not a JSON number (JSON has no NaN");
  check_strict ("{\"n\": -Infinity}", "n", "-Inf", "-Infinity is not a JSON number (JSON has");
  check_strict ("{\"n\": 1e}", "n", "1e", "1e is not a JSON number");
  check_strict ("{\"n\": 01}", "n", "01", "01 is not a JSON number");
  /* The first problem in the text; a problem wins over a duplicate key. */
  check_strict ("{\"a\": 1, \"a\": 2, \"b\": \"\x80\"}", "b", "\x80", "invalid UTF-8");
  check_strict ("{\"a\": \"\x01\", \"b\": \"\x80\"}", "a", "\x01", "U+0001");
  check_strict ("{\"a\": 1} x", "", "x", "text after the end");
}

static void
test_utf8_check (void)
{
  TG_CHECK_INT_EQ (tg_utf8_char_len ("a", 1), 1);
  TG_CHECK_INT_EQ (tg_utf8_char_len ("\xc3\xa9", 2), 2);
  TG_CHECK_INT_EQ (tg_utf8_char_len ("\xc3\xa9", 1), 0);
  TG_CHECK_INT_EQ (tg_utf8_char_len ("\xe5\xb1\xb1", 3), 3);
  TG_CHECK_INT_EQ (tg_utf8_char_len ("\xe0\x9f\xbf", 3), 0); /* overlong */
  TG_CHECK_INT_EQ (tg_utf8_char_len ("\xef\xbf\xbf", 3), 3);
  TG_CHECK_INT_EQ (tg_utf8_char_len ("\xf4\x8f\xbf\xbf", 4), 4); /* U+10FFFF */
  TG_CHECK_INT_EQ (tg_utf8_char_len ("\xf5\x80\x80\x80", 4), 0);
  TG_CHECK_INT_EQ (tg_utf8_char_len ("\x80", 1), 0);
  TG_CHECK_INT_EQ ((int) tg_utf8_check ("ab\xc3\xa9\xffz", 6), 4);
  TG_CHECK_INT_EQ ((int) tg_utf8_check ("ab\xc3\xa9", 4), 4);
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
  TG_RUN (test_strict_refuses_what_rfc8259_refuses);
  TG_RUN (test_utf8_check);
  TG_RUN (test_error_locate_fills_line_and_column);
  TG_RUN (test_suggestions);
  return tgtest_result ();
}
