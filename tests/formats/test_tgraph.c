/* .tgraph load and save: the canonical text, the load -> save fixed point
 * with "ui" and unknown keys kept, exact numbers, atomic saves, and every
 * kind of bad input reported with its path, message, line and column. */
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tgformats/tgformats.h>

#include "fmt_test_nodes.h"
#include "tgtest.h"

/* --- helpers ---------------------------------------------------------------------- */

#define HEAD                                                                               \
  "{\n"                                                                                    \
  "  \"format\": \"tgraph\",\n"                                                            \
  "  \"version\": 2,\n"                                                                    \
  "  \"world\": { \"size_m\": [1000, 1000], \"height_m\": 100, \"resolution\": 33, \"seed\": 7 },\n"

/* A document with NODES from line 6 and LINKS after them. */
static const char *
doc (const char *nodes, const char *links)
{
  static char buf[4][8192];
  static int k;
  char *b = buf[k++ & 3];

  snprintf (b, sizeof buf[0], HEAD "  \"nodes\": [\n%s\n  ],\n  \"links\": [\n%s\n  ]\n}\n", nodes,
            links ? links : "");
  return b;
}

/* Line and column of the first occurrence of NEEDLE: an oracle for the
 * locator that shares no code with it. */
static void
pos_of (const char *text, const char *needle, int *line, int *col)
{
  const char *at = strstr (text, needle);
  *line = 0;
  *col = 0;
  if (!at)
    {
      TG_CHECK_MSG (0, "test bug: \"%s\" not in the document", needle);
      return;
    }
  *line = 1;
  *col = 1;
  for (const char *p = text; p < at; p++)
    {
      if (*p == '\n')
        {
          (*line)++;
          *col = 1;
        }
      else if (((unsigned char) *p & 0xc0) != 0x80)
        (*col)++;
    }
}

static TgGraph *
load_ok (const char *text)
{
  TgGraph *g = NULL;
  TgError err = { 0 };
  int rc = tg_tgraph_load_string (text, strlen (text), "/tmp", &g, &err);

  TG_CHECK_MSG (rc == 0 && g, "load failed: %s: %s (%d:%d)", err.path, err.message, err.line,
                err.column);
  return g;
}

/* Loads TEXT expecting CODE at PATH with MSG in the message, positioned
 * where NEEDLE starts (or at LINE:COL when NEEDLE is NULL). */
static void
expect_error_at (int src_line, const char *text, int code, const char *path, const char *msg,
                 const char *needle, int line, int col)
{
  TgGraph *g = (TgGraph *) 1;
  TgError err = { 0 };
  int rc = tg_tgraph_load_string (text, strlen (text), "/tmp", &g, &err);

  if (needle)
    pos_of (text, needle, &line, &col);
  TG_CHECK_MSG (rc == code, "line %d: rc %d (%s), want %d; %s: %s", src_line, rc,
                tg_strerror (rc), code, err.path, err.message);
  TG_CHECK_MSG (g == (TgGraph *) 1, "line %d: *out set on failure", src_line);
  TG_CHECK_MSG (err.code == code, "line %d: err.code %d", src_line, err.code);
  TG_CHECK_MSG (strcmp (err.path, path) == 0, "line %d: path \"%s\", want \"%s\"", src_line,
                err.path, path);
  TG_CHECK_MSG (strstr (err.message, msg) != NULL, "line %d: message \"%s\" lacks \"%s\"",
                src_line, err.message, msg);
  TG_CHECK_MSG (err.line == line && err.column == col, "line %d: at %d:%d, want %d:%d (%s)",
                src_line, err.line, err.column, line, col, err.message);
}

#define EXPECT_ERROR(text, code, path, msg, needle) \
  expect_error_at (__LINE__, text, code, path, msg, needle, 0, 0)
#define EXPECT_ERROR_LC(text, code, path, msg, line, col) \
  expect_error_at (__LINE__, text, code, path, msg, NULL, line, col)

static char *
save (const TgGraph *g)
{
  TgError err = { 0 };
  char *s = tg_tgraph_save_string (g, &err);

  TG_CHECK_MSG (s != NULL, "save failed: %s: %s", err.path, err.message);
  return s;
}

/* --- canonical text and round trips -------------------------------------------------- */

/* The whole canonical text of a small graph, byte for byte: the layout is
 * part of the format (diffs stay small), so a change must be deliberate. */
static void
test_save_canonical_text (void)
{
  const char *in = "{\"links\":[{\"to\":\"out.height\",\"from\":\"base.height\"}],"
                   "\"version\":2,\"format\":\"tgraph\","
                   "\"world\":{\"seed\":1234,\"resolution\":1025,\"height_m\":1200,\"size_m\":[4096,4096.5]},"
                   "\"nodes\":[{\"ui\":{\"x\":40,\"y\":80.5},\"type\":\"gen.constant\",\"id\":\"base\","
                   "\"params\":{\"value\":0.3}},"
                   "{\"id\":\"out\",\"type\":\"export.heightmap\",\"params\":{\"path\":\"maps/h.png\"},"
                   "\"note\":\"kept\"}],"
                   "\"zz_tool\":{\"name\":\"x\"},\"aa_more\":[1,2]}";
  const char *want = "{\n"
                     "  \"format\": \"tgraph\",\n"
                     "  \"version\": 2,\n"
                     "  \"world\": {\n"
                     "    \"size_m\": [4096, 4096.5],\n"
                     "    \"height_m\": 1200,\n"
                     "    \"resolution\": 1025,\n"
                     "    \"seed\": 1234\n"
                     "  },\n"
                     "  \"nodes\": [\n"
                     "    {\n"
                     "      \"id\": \"base\",\n"
                     "      \"type\": \"gen.constant\",\n"
                     "      \"params\": {\n"
                     "        \"value\": 0.3\n"
                     "      },\n"
                     "      \"ui\": { \"x\": 40, \"y\": 80.5 }\n"
                     "    },\n"
                     "    {\n"
                     "      \"id\": \"out\",\n"
                     "      \"type\": \"export.heightmap\",\n"
                     "      \"params\": {\n"
                     "        \"path\": \"maps/h.png\",\n"
                     "        \"format\": \"png16\",\n"
                     "        \"rows\": \"north_first\",\n"
                     "        \"units\": \"normalized\",\n"
                     "        \"compression\": \"fast\"\n"
                     "      },\n"
                     "      \"note\": \"kept\"\n"
                     "    }\n"
                     "  ],\n"
                     "  \"links\": [\n"
                     "    { \"from\": \"base.height\", \"to\": \"out.height\" }\n"
                     "  ],\n"
                     "  \"zz_tool\": { \"name\": \"x\" },\n"
                     "  \"aa_more\": [1, 2]\n"
                     "}\n";
  TgGraph *g = load_ok (in);
  char *out;

  if (!g)
    return;
  out = save (g);
  TG_CHECK_MSG (out && strcmp (out, want) == 0, "canonical text:\n%s", out);
  free (out);
  tg_graph_free (g);
}

/* Every parameter type, a curve, ui blocks of every JSON shape, unknown
 * keys: load -> save -> load -> save gives the same text and values. */
static void
test_round_trip_fixed_point (void)
{
  const char *text = doc (
    "    { \"id\": \"all\", \"type\": \"test.all\", \"params\": { \"f\": -2.5, \"i\": 16, \"b\": true,\n"
    "      \"e\": \"gamma\", \"seed\": 2147483647, \"s\": \"caf\\u00e9 \\\"q\\\" \\\\ \\n\",\n"
    "      \"v2\": [0.1, -1e-7], \"v3\": [123456.789, 0, -0.0], \"col\": \"#ff8000\",\n"
    "      \"curve\": [[0, 0.1], [0.25, 0.75], [0.5, 0.5], [0.75, 0.25], [0.875, 0.5], [0.9375, 0.6],\n"
    "                [0.96875, 0.7], [0.984375, 0.8], [1, 1]] },\n"
    "      \"ui\": { \"x\": 1.5, \"y\": -3, \"collapsed\": true, \"colour\": \"#abcdef\",\n"
    "              \"tags\": [\"a\", \"b\"], \"deep\": { \"k\": [1, { \"z\": null }] } },\n"
    "      \"x-editor\": { \"frame\": 3 }, \"comment\": \"keep me\" },\n"
    "    { \"id\": \"c\", \"type\": \"curve\", \"ui\": [1, 2, 3] },\n"
    "    { \"id\": \"e\", \"type\": \"export.heightmap\", \"params\": { \"path\": \"a/b.png\", \"format\": \"raw16\" } }",
    "    { \"from\": \"all.height\", \"to\": \"c.height\" },\n"
    "    { \"from\": \"c.height\", \"to\": \"e.height\" }");
  TgGraph *g1 = load_ok (text), *g2;
  char *s1, *s2;

  if (!g1)
    return;
  s1 = save (g1);
  g2 = load_ok (s1);
  s2 = g2 ? save (g2) : NULL;
  TG_CHECK_MSG (s1 && s2 && strcmp (s1, s2) == 0, "not a fixed point:\n%s\n---\n%s", s1 ? s1 : "-",
                s2 ? s2 : "-");

  /* Values survive exactly. */
  if (g2)
    {
      TG_CHECK_INT_EQ (tg_graph_n_nodes (g2), 3);
      TG_CHECK_INT_EQ (tg_graph_n_links (g2), 2);
      for (int n = 0; n < 3; n++)
        {
          const TgNodeDesc *d = tg_graph_node_desc (g1, n);
          for (int k = 0; k < d->n_params; k++)
            TG_CHECK_MSG (tg_param_value_equal (tg_graph_get_param_at (g1, n, k),
                                                tg_graph_get_param_at (g2, n, k)),
                          "node %d param %s changed", n, d->params[k].name);
        }
      TG_CHECK (tg_graph_get_param (g2, 0, "v2")->v[1] == -1e-7);
      TG_CHECK (tg_graph_get_param (g2, 0, "v3")->v[0] == 123456.789);
      TG_CHECK (tg_graph_get_param (g2, 0, "col")->v[1] == 128.0 / 255.0);
      TG_CHECK (strcmp (tg_graph_get_param (g2, 0, "s")->s, "caf\xc3\xa9 \"q\" \\ \n") == 0);
      TG_CHECK_INT_EQ (tg_graph_get_param (g2, 0, "e")->i, 2);
      TG_CHECK_INT_EQ (tg_graph_get_param (g2, 0, "curve")->n_points, 9);
    }

  /* ui and unknown keys come back unchanged (as JSON), in their order. */
  TG_CHECK_STR_CONTAINS (s1, "      \"ui\": {\n        \"x\": 1.5,\n        \"y\": -3,\n"
                             "        \"collapsed\": true,\n        \"colour\": \"#abcdef\",\n"
                             "        \"tags\": [\"a\", \"b\"],\n"
                             "        \"deep\": {\n          \"k\": [1, { \"z\": null }]\n");
  TG_CHECK_STR_CONTAINS (s1, "      \"x-editor\": { \"frame\": 3 },\n      \"comment\": \"keep me\"\n");
  TG_CHECK_STR_CONTAINS (s1, "      \"ui\": [1, 2, 3]\n");
  /* Every parameter is written, in descriptor order, defaults included. */
  TG_CHECK_STR_CONTAINS (s1, "        \"path\": \"a/b.png\",\n        \"format\": \"raw16\",\n"
                             "        \"rows\": \"north_first\",\n"
                             "        \"units\": \"normalized\",\n"
                             "        \"compression\": \"fast\"\n");
  TG_CHECK_STR_CONTAINS (s1, "\"v3\": [123456.789, 0, -0.0]");
  TG_CHECK_STR_CONTAINS (s1, "\"v2\": [0.1, -1e-07]");
  /* A long curve breaks into one point per line. */
  TG_CHECK_STR_CONTAINS (s1, "        \"curve\": [\n          [0, 0.1],\n          [0.25, 0.75],\n");
  TG_CHECK_STR_CONTAINS (s1, "\"s\": \"caf\xc3\xa9 \\\"q\\\" \\\\ \\n\"");
  if (g2)
    {
      TG_CHECK (strcmp (tg_graph_node_extra (g2, 0), tg_graph_node_extra (g1, 0)) == 0);
      TG_CHECK (strcmp (tg_graph_node_ui (g2, 0), tg_graph_node_ui (g1, 0)) == 0);
      TG_CHECK (tg_graph_node_ui (g2, 2) == NULL);
      TG_CHECK (tg_graph_extra (g2) == NULL);
    }
  free (s1);
  free (s2);
  tg_graph_free (g1);
  tg_graph_free (g2);
}

/* Doubles that need 16 or 17 digits come back bit-exact. */
static void
test_round_trip_exact_doubles (void)
{
  static const double values[] = { 0.1 + 0.2, 1.0 / 3.0, 0.7, 1e-300, 2.0 / 3.0 * 1e-5,
                                   0.30000000000000004, 0.9999999999999999, 5e-324 };
  TgGraph *g = tg_graph_new ();
  TgError err = { 0 };
  int node;

  node = tg_graph_add_node (g, "c", "gen.constant", &err);
  TG_CHECK (node == 0);
  for (size_t i = 0; i < sizeof values / sizeof values[0] && node == 0; i++)
    {
      TgParamValue v = { .type = TG_PARAM_FLOAT, .f = values[i] };
      TgGraph *back;
      char *s;
      TG_CHECK_INT_EQ (tg_graph_set_param (g, 0, "value", &v, &err), 0);
      s = save (g);
      back = s ? load_ok (s) : NULL;
      if (back)
        TG_CHECK_MSG (tg_graph_get_param (back, 0, "value")->f == values[i], "%.17g came back as %.17g",
                      values[i], tg_graph_get_param (back, 0, "value")->f);
      tg_graph_free (back);
      free (s);
    }
  tg_graph_free (g);
}

/* A graph built in code (as the GUI does) saves, loads and saves again
 * to the same text; unset strings are written as null. */
static void
test_round_trip_built_graph (void)
{
  TgGraph *g = tg_graph_new (), *back;
  TgError err = { 0 };
  TgParamValue v = { .type = TG_PARAM_STRING, .s = NULL };
  char *s1, *s2;

  tg_graph_world (g)->seed = 4000000000u;
  tg_graph_world (g)->size_x = 2000.25;
  TG_CHECK (tg_graph_add_node (g, "g", "gen.gradient", &err) == 0);
  TG_CHECK (tg_graph_add_node (g, "t", "test.all", &err) == 1);
  TG_CHECK (tg_graph_add_node (g, "x", "export.heightmap", &err) == 2);
  TG_CHECK_INT_EQ (tg_graph_set_param (g, 1, "s", &v, &err), 0);
  TG_CHECK (tg_graph_add_link (g, "g", "height", "t", "height", &err) >= 0);
  TG_CHECK (tg_graph_add_link (g, "t", "height", "x", "height", &err) >= 0);
  tg_graph_set_node_ui (g, 0, "{\"x\": 10, \"y\": 20}");
  tg_graph_set_extra (g, "{\"meta\": {\"author\": \"me\"}}");
  s1 = save (g);
  TG_CHECK_STR_CONTAINS (s1, "\"seed\": 4000000000\n");
  TG_CHECK_STR_CONTAINS (s1, "\"size_m\": [2000.25, 4096]");
  TG_CHECK_STR_CONTAINS (s1, "        \"s\": null,\n");
  TG_CHECK_STR_CONTAINS (s1, "      \"ui\": { \"x\": 10, \"y\": 20 }\n");
  TG_CHECK_STR_CONTAINS (s1, "  ],\n  \"meta\": { \"author\": \"me\" }\n}\n");
  back = s1 ? load_ok (s1) : NULL;
  s2 = back ? save (back) : NULL;
  TG_CHECK (s1 && s2 && strcmp (s1, s2) == 0);
  if (back)
    {
      TG_CHECK (tg_graph_get_param (back, 1, "s")->s == NULL);
      TG_CHECK (tg_graph_world (back)->seed == 4000000000u);
    }
  free (s1);
  free (s2);
  tg_graph_free (back);

  /* Kept text that is not JSON, or that reuses a key we write, is refused
   * rather than written as a broken file. */
  tg_graph_set_node_ui (g, 1, "{oops");
  TG_CHECK (tg_tgraph_save_string (g, &err) == NULL);
  TG_CHECK_INT_EQ (err.code, TG_EINVAL);
  TG_CHECK (strcmp (err.path, "nodes[1].ui") == 0);
  tg_graph_set_node_ui (g, 1, NULL);
  tg_graph_set_extra (g, "{\"nodes\": []}");
  TG_CHECK (tg_tgraph_save_string (g, &err) == NULL);
  TG_CHECK_STR_CONTAINS (err.message, "\"nodes\"");
  tg_graph_free (g);
}

static void
test_save_file_atomic_and_base_dir (void)
{
  /* The program's one test folder, removed at exit. */
  const char *dir = tgtest_tmpdir ("tgfmt-save-");
  char path[PATH_MAX], real[PATH_MAX], sub[PATH_MAX];
  TgGraph *g = load_ok (doc ("    { \"id\": \"c\", \"type\": \"gen.constant\" }", NULL)), *back = NULL;
  TgError err = { 0 };
  char *text, *disk;
  FILE *f;
  long n;
  struct stat st;

  if (!g || !dir)
    return;
  snprintf (path, sizeof path, "%s/sub", dir);
  mkdir (path, 0777);
  snprintf (path, sizeof path, "%s/sub/graph.tgraph", dir);
  /* Over an existing file, so rename has something to replace. */
  f = fopen (path, "w");
  fputs ("old", f);
  fclose (f);
  TG_CHECK_INT_EQ (tg_tgraph_save_file (g, path, &err), 0);
  text = save (g);
  f = fopen (path, "rb");
  disk = calloc (1, 65536);
  n = (long) fread (disk, 1, 65535, f);
  fclose (f);
  TG_CHECK (text && n == (long) strlen (text) && strcmp (text, disk) == 0);
  /* No temporary file left beside it; mode follows the umask like any file. */
  snprintf (sub, sizeof sub, "%s/sub", dir);
  TG_CHECK_INT_EQ (tgtest_count_entries (sub), 1);
  TG_CHECK (stat (path, &st) == 0 && (st.st_mode & 0444) == 0444);
  /* Saving over a file keeps its mode. */
  chmod (path, 0640);
  TG_CHECK_INT_EQ (tg_tgraph_save_file (g, path, &err), 0);
  TG_CHECK (stat (path, &st) == 0 && (st.st_mode & 07777) == 0640);

  /* Loading sets the base dir to the file's folder, absolute. */
  TG_CHECK_INT_EQ (tg_tgraph_load_file (path, &back, &err), 0);
  TG_CHECK (realpath (sub, real) != NULL);
  TG_CHECK_MSG (back && strcmp (tg_graph_base_dir (back), real) == 0, "base dir %s",
                back ? tg_graph_base_dir (back) : "-");
  tg_graph_free (back);

  /* Failures name the file. */
  snprintf (path, sizeof path, "%s/no/such/dir/g.tgraph", dir);
  TG_CHECK_INT_EQ (tg_tgraph_save_file (g, path, &err), TG_EIO);
  TG_CHECK_STR_CONTAINS (err.message, "no/such/dir/g.tgraph");
  back = (TgGraph *) 1;
  TG_CHECK_INT_EQ (tg_tgraph_load_file (path, &back, &err), TG_EIO);
  TG_CHECK_STR_CONTAINS (err.message, "no/such/dir/g.tgraph");
  TG_CHECK (back == (TgGraph *) 1);

  free (text);
  free (disk);
  tg_graph_free (g);
}

/* --- accepted variations ------------------------------------------------------------ */

static void
test_load_accepts (void)
{
  TgGraph *g;

  /* A float parameter takes an integer; an int takes 3.0; a BOM is fine. */
  g = load_ok ("\xef\xbb\xbf" HEAD "  \"nodes\": [ { \"id\": \"c\", \"type\": \"gen.constant\", "
               "\"params\": { \"value\": 1 } },\n"
               "  { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"i\": 3.0, \"col\": \"#FFFFFF80\" } } ]\n}");
  if (g)
    {
      TG_CHECK (tg_graph_get_param (g, 0, "value")->f == 1.0);
      TG_CHECK_INT_EQ (tg_graph_get_param (g, 1, "i")->i, 3);
      TG_CHECK (tg_graph_get_param (g, 1, "col")->v[3] == 128.0 / 255.0);
      TG_CHECK (strcmp (tg_graph_base_dir (g), "/tmp") == 0);
      TG_CHECK_INT_EQ (tg_graph_world (g)->resolution, 33);
      TG_CHECK (tg_graph_world (g)->height_m == 100.0);
    }
  tg_graph_free (g);
  /* No links key, params omitted. */
  g = load_ok (HEAD "  \"nodes\": [ { \"id\": \"c\", \"type\": \"gen.constant\" } ]\n}");
  tg_graph_free (g);
}

/* --- errors ------------------------------------------------------------------------------ */

static void
test_error_syntax_has_line_and_column (void)
{
  /* Trailing comma: json-c stops at the '}' after it. */
  EXPECT_ERROR_LC ("{\n  \"format\": \"tgraph\",\n  \"version\": 2,\n}\n", TG_EPARSE, "",
                   "syntax error", 4, 1);
  EXPECT_ERROR_LC ("{\n  \"format\" \"tgraph\"\n}", TG_EPARSE, "", "':' expected", 2, 12);
  EXPECT_ERROR_LC ("{\n  \"nodes\": [\n    { \"id\": \"x\" ", TG_EPARSE, "",
                   "unexpected end of file", 3, 17);
  EXPECT_ERROR_LC ("", TG_EPARSE, "", "unexpected end of file", 1, 1);
  /* Text after the document. */
  EXPECT_ERROR_LC ("{}\n\n  x", TG_EPARSE, "", "syntax error", 3, 3);
  /* Columns count characters: "é" (two bytes) is one, as "e" is. */
  EXPECT_ERROR_LC ("{ \"e\": tru }", TG_EPARSE, "", "syntax error", 1, 11);
  EXPECT_ERROR_LC ("{ \"\xc3\xa9\": tru }", TG_EPARSE, "", "syntax error", 1, 11);
  EXPECT_ERROR_LC ("[1, 2]", TG_EPARSE, "", "expected a JSON object at the top level, got an array",
                   1, 1);
  EXPECT_ERROR_LC ("5", TG_EPARSE, "", "expected a JSON object at the top level, got 5", 1, 1);
}

/* json-c would keep the second of two equal keys and drop the first without
 * a word; a hand-merged file must not lose half a node that way. */
static void
test_error_duplicate_keys (void)
{
  const char *t;

  t = doc ("    { \"id\": \"a\", \"type\": \"gen.constant\", \"params\": { \"value\": 0.1 },\n"
           "      \"params\": { \"value\": 0.2 } }",
           NULL);
  EXPECT_ERROR_LC (t, TG_EPARSE, "nodes[0].params", "the key \"params\" appears twice", 7, 7);
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"i\": 1, \"\\u0069\": 2 } }",
           NULL);
  EXPECT_ERROR (t, TG_EPARSE, "nodes[0].params.i", "the key \"i\" appears twice", "\"\\u0069\"");
  EXPECT_ERROR ("{ \"format\": \"tgraph\", \"version\": 2, \"version\": 3 }", TG_EPARSE, "version",
                "the key \"version\" appears twice", "\"version\": 3");
}

/* RFC 8259, not json-c's laxer reading: what either refuses is refused
 * with the place, and so is text that is not UTF-8 (a saved graph or a
 * manifest would carry it to readers that refuse it). */
static void
test_error_strict_json (void)
{
  const char *t;

  /* json-c's strict mode: single quotes, trailing commas, comments. */
  t = doc ("    { \"id\": \"a\", \"type\": 'test.all' }", NULL);
  EXPECT_ERROR (t, TG_EPARSE, "", "syntax error", "'test.all'");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", }", NULL);
  EXPECT_ERROR_LC (t, TG_EPARSE, "", "syntax error", 6, 38);
  t = doc ("    { \"id\": \"a\", /* c */ \"type\": \"test.all\" }", NULL);
  EXPECT_ERROR (t, TG_EPARSE, "", "syntax error", "/* c");
  /* What json-c's strict mode lets through, with the node's id. */
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"s\": \"x\ty\" } }", NULL);
  EXPECT_ERROR (t, TG_EPARSE, "nodes[0].params.s", "control character U+0009", "\ty");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"s\": \"x\xff\" } }",
           NULL);
  EXPECT_ERROR (t, TG_EPARSE, "nodes[0].params.s", "invalid UTF-8 (byte 0xff)", "\xff");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"items\": [ { \"name\": "
           "\"\\udfff\" } ] } }",
           NULL);
  EXPECT_ERROR (t, TG_EPARSE, "nodes[0].params.items[0].name", "surrogate pair, alone", "\\udfff");
  t = doc ("    { \"id\": \"b\xe9\", \"type\": \"test.all\" }", NULL);
  EXPECT_ERROR (t, TG_EPARSE, "nodes[0].id", "invalid UTF-8 (byte 0xe9)", "\xe9");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"f\": NaN } }", NULL);
  EXPECT_ERROR (t, TG_EPARSE, "nodes[0].params.f", "NaN is not a JSON number", "NaN");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"v2\": [1, -Infinity] } }",
           NULL);
  EXPECT_ERROR (t, TG_EPARSE, "nodes[0].params.v2[1]", "-Infinity is not a JSON number", "-Inf");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"f\": 5. } }", NULL);
  EXPECT_ERROR (t, TG_EPARSE, "nodes[0].params.f", "5. is not a JSON number", "5. }");
  {
    TgError err = { 0 };
    TgGraph *g = NULL;
    t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"f\": NaN } }", NULL);
    tg_tgraph_load_string (t, strlen (t), "/tmp", &g, &err);
    TG_CHECK_MSG (strcmp (err.node_id, "a") == 0, "node id \"%s\"", err.node_id);
  }
}

/* A number in a message reads as the file writes it, not as json-c
 * turned it into a double or a saturated integer. */
static void
test_error_numbers_as_written (void)
{
  const char *t;

  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"f\": 1e400 } }", NULL);
  EXPECT_ERROR (t, TG_ERANGE, "nodes[0].params.f", "expected a number in -10..10, got 1e400",
                "1e400");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"v3\": [1, -1E+999, 2] } }",
           NULL);
  EXPECT_ERROR (t, TG_ERANGE, "nodes[0].params.v3[1]", "got -1E+999", "-1E");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"i\": 1.2e29 } }", NULL);
  EXPECT_ERROR (t, TG_ETYPE, "nodes[0].params.i", "expected an integer in 1..16, got 1.2e29",
                "1.2e29");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"i\": "
           "123456789012345678901234567890 } }",
           NULL);
  EXPECT_ERROR (t, TG_ERANGE, "nodes[0].params.i", "got 123456789012345678901234567890", "123");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"s\": 1e400 } }", NULL);
  EXPECT_ERROR (t, TG_ETYPE, "nodes[0].params.s", "expected a string, got 1e400", "1e400");
  EXPECT_ERROR ("{ \"format\": \"tgraph\", \"version\": 3e40 }", TG_ETYPE, "version",
                "expected an integer format version, got 3e40", "3e40");
  EXPECT_ERROR ("{ \"format\": \"tgraph\", \"version\": 30000000000000000000000 }", TG_EVERSION,
                "version", "this file is format version 30000000000000000000000,", "3000");
  EXPECT_ERROR ("{\n  \"format\": \"tgraph\",\n  \"version\": 2,\n"
                "  \"world\": { \"size_m\": [1000, 1000], \"height_m\": 100, \"resolution\": 33, "
                "\"seed\": 42949672950000 } }",
                TG_ERANGE, "world.seed", "got 42949672950000", "42949");
}

static void
test_error_format_and_version (void)
{
  const char *newer = "{\n  \"format\": \"tgraph\",\n  \"version\": 3,\n  \"world\": 5,\n"
                      "  \"nodes\": [ { \"type\": \"no.such\" } ]\n}\n";

  EXPECT_ERROR_LC ("{ \"version\": 1 }", TG_EPARSE, "format", "missing \"format\"", 1, 1);
  EXPECT_ERROR ("{ \"format\": \"gltf\", \"version\": 1 }", TG_EPARSE, "format",
                "expected \"tgraph\", got \"gltf\"", "\"gltf\"");
  /* Newer: refused before anything else is read (world and nodes are junk here). */
  EXPECT_ERROR (newer, TG_EVERSION, "version", "this file is format version 3", "3,");
  EXPECT_ERROR (newer, TG_EVERSION, "version", "up to version 2", "3,");
  EXPECT_ERROR ("{ \"format\": \"tgraph\", \"version\": 0 }", TG_EVERSION, "version",
                "expected a format version from 1 to 2, got 0", "0 }");
  EXPECT_ERROR ("{ \"format\": \"tgraph\", \"version\": \"1\" }", TG_ETYPE, "version",
                "expected an integer format version, got \"1\"", "\"1\"");
  EXPECT_ERROR ("{ \"format\": \"tgraph\", \"version\": 1.5 }", TG_ETYPE, "version",
                "got 1.5", "1.5");
  EXPECT_ERROR_LC ("{ \"format\": \"tgraph\" }", TG_EMISSING, "version", "missing", 1, 1);
}

static void
test_error_world (void)
{
  const char *head = "{ \"format\": \"tgraph\", \"version\": 2,\n  \"world\": ";
  char t[512];

#define WORLD(w) (snprintf (t, sizeof t, "%s%s,\n  \"nodes\": []\n}", head, w), t)
  EXPECT_ERROR (WORLD ("{ \"size_m\": [100, 100], \"height_m\": 10, \"resolution\": 1, \"seed\": 0 }"),
                TG_ERANGE, "world.resolution", "expected an integer in 2..16385, got 1", "1, \"seed");
  EXPECT_ERROR (WORLD ("{ \"size_m\": [100], \"height_m\": 10, \"resolution\": 9, \"seed\": 0 }"),
                TG_ETYPE, "world.size_m", "expected [x, z] in metres", "[100]");
  EXPECT_ERROR (WORLD ("{ \"size_m\": [100, -5], \"height_m\": 10, \"resolution\": 9, \"seed\": 0 }"),
                TG_ERANGE, "world.size_m[1]", "expected a size > 0 metres, got -5", "-5");
  EXPECT_ERROR (WORLD ("{ \"size_m\": [100, 100], \"height_m\": \"tall\", \"resolution\": 9, \"seed\": 0 }"),
                TG_ETYPE, "world.height_m", "expected a number, got \"tall\"", "\"tall\"");
  EXPECT_ERROR (WORLD ("{ \"size_m\": [100, 100], \"height_m\": 10, \"resolution\": 9, \"seed\": -1 }"),
                TG_ERANGE, "world.seed", "expected an integer in 0..4294967295, got -1", "-1");
  EXPECT_ERROR (WORLD ("{ \"size_m\": [100, 100], \"heigth_m\": 10, \"resolution\": 9, \"seed\": 0 }"),
                TG_EUNKNOWN, "world.heigth_m", "unknown world setting (did you mean \"height_m\"?)",
                "10,");
  EXPECT_ERROR (WORLD ("{ \"size_m\": [100, 100], \"height_m\": 10, \"resolution\": 9 }"),
                TG_EMISSING, "world.seed", "missing world setting", "{ \"size_m");
  /* The engine's own world check (size limit) is located too. */
  EXPECT_ERROR (WORLD ("{ \"size_m\": [1e9, 100], \"height_m\": 10, \"resolution\": 9, \"seed\": 0 }"),
                TG_ERANGE, "world.size_m", "up to 1e7", "[1e9");
  EXPECT_ERROR (WORLD ("[]"), TG_ETYPE, "world", "expected an object, got an array", "[]");
#undef WORLD
}

static void
test_error_nodes (void)
{
  const char *t;

  /* The example from the design: octaves out of range on the fourth node. */
  t = doc ("    { \"id\": \"a\", \"type\": \"gen.constant\" },\n"
           "    { \"id\": \"b\", \"type\": \"gen.constant\" },\n"
           "    { \"id\": \"c\", \"type\": \"gen.constant\" },\n"
           "    { \"id\": \"n\", \"type\": \"noise.fbm\", \"params\": { \"octaves\": 40 } }",
           NULL);
  if (tg_registry_lookup ("noise.fbm"))
    EXPECT_ERROR_LC (t, TG_ERANGE, "nodes[3].params.octaves",
                     "expected an integer in 1..16, got 40", 9, 62);
  else
    TG_CHECK_MSG (0, "noise.fbm is not registered (engine/nodes/noise.c)");

  t = doc ("    { \"id\": \"a\", \"type\": \"gen.constant\" },\n"
           "    { \"id\": \"b\", \"type\": \"gen.constant\" },\n"
           "    { \"id\": \"c\", \"type\": \"noise.fbn\" }",
           NULL);
  if (tg_registry_lookup ("noise.fbm"))
    EXPECT_ERROR (t, TG_EUNKNOWN, "nodes[2].type",
                  "unknown node type \"noise.fbn\" (did you mean \"noise.fbm\"?)", "\"noise.fbn\"");
  t = doc ("    { \"id\": \"a\", \"type\": \"gen.constnt\" }", NULL);
  EXPECT_ERROR (t, TG_EUNKNOWN, "nodes[0].type",
                "unknown node type \"gen.constnt\" (did you mean \"gen.constant\"?)", "\"gen.constnt\"");
  t = doc ("    { \"id\": \"a\", \"type\": \"zzz.qqqqqq\" }", NULL);
  EXPECT_ERROR (t, TG_EUNKNOWN, "nodes[0].type", "unknown node type \"zzz.qqqqqq\"", "\"zzz.");
  /* Errors about a node carry its id; the path stays a plain JSON path. */
  {
    TgGraph *g = NULL;
    TgError err = { 0 };
    char buf[TG_ERROR_MESSAGE_MAX + 2 * TG_ERROR_PATH_MAX];

    t = doc ("    { \"id\": \"mystery\", \"type\": \"zzz.qqqqqq\" }", NULL);
    TG_CHECK (tg_tgraph_load_string (t, strlen (t), "/tmp", &g, &err) == TG_EUNKNOWN);
    TG_CHECK (strcmp (err.path, "nodes[0].type") == 0);
    TG_CHECK (strcmp (err.node_id, "mystery") == 0);
    TG_CHECK_STR_CONTAINS (tg_error_format (&err, buf, sizeof buf),
                           "nodes[0] \"mystery\".type: unknown node type \"zzz.qqqqqq\"");
    /* The engine's errors (set_param) and the validator's (a node's
     * check) name it too; one about a later node names that one. */
    t = doc ("    { \"id\": \"g\", \"type\": \"gen.constant\", \"params\": { \"value\": 2 } }",
             NULL);
    TG_CHECK (tg_tgraph_load_string (t, strlen (t), "/tmp", &g, &err) == TG_ERANGE);
    TG_CHECK (strcmp (tg_error_format_path (&err, buf, sizeof buf),
                      "nodes[0] \"g\".params.value") == 0);
    t = doc ("    { \"id\": \"g\", \"type\": \"gen.constant\" },\n"
             "    { \"id\": \"s\", \"type\": \"select.height\",\n"
             "      \"params\": { \"min_height\": 0.8, \"max_height\": 0.2 } }",
             "    { \"from\": \"g.height\", \"to\": \"s.height\" }");
    TG_CHECK (tg_tgraph_load_string (t, strlen (t), "/tmp", &g, &err) == TG_ERANGE);
    TG_CHECK (strcmp (tg_error_format_path (&err, buf, sizeof buf),
                      "nodes[1] \"s\".params.max_height") == 0);
    /* Not about a node: no id. */
    t = doc ("    { \"id\": \"g\", \"type\": \"gen.constant\" }",
             "    { \"from\": \"g.x\", \"to\": \"q.y\" }");
    TG_CHECK (tg_tgraph_load_string (t, strlen (t), "/tmp", &g, &err) == TG_ELINK);
    TG_CHECK (err.node_id[0] == '\0');
  }

  t = doc ("    { \"id\": \"a\", \"type\": \"gen.constant\" },\n"
           "    { \"id\": \"a\", \"type\": \"gen.constant\" }",
           NULL);
  EXPECT_ERROR_LC (t, TG_EINVAL, "nodes[1].id", "duplicate node id \"a\" (already used by nodes[0])",
                   7, 13);
  t = doc ("    { \"id\": \"a.b\", \"type\": \"gen.constant\" }", NULL);
  EXPECT_ERROR (t, TG_EINVAL, "nodes[0].id", "contains a '.'", "\"a.b\"");
  t = doc ("    { \"id\": \"\", \"type\": \"gen.constant\" }", NULL);
  EXPECT_ERROR (t, TG_EINVAL, "nodes[0].id", "empty", "\"\"");
  t = doc ("    { \"id\": \"q\\\"\", \"type\": \"gen.constant\" }", NULL);
  EXPECT_ERROR (t, TG_EINVAL, "nodes[0].id", "may not contain", "\"q\\");
  t = doc ("    { \"type\": \"gen.constant\" }", NULL);
  EXPECT_ERROR (t, TG_EMISSING, "nodes[0].id", "missing node id", "{ \"type");
  t = doc ("    { \"id\": 7, \"type\": \"gen.constant\" }", NULL);
  EXPECT_ERROR (t, TG_ETYPE, "nodes[0].id", "expected a string, got 7", "7,");
  t = doc ("    { \"id\": \"a\" }", NULL);
  EXPECT_ERROR (t, TG_EMISSING, "nodes[0].type", "missing node type", "{ \"id");
  t = doc ("    \"a\"", NULL);
  EXPECT_ERROR (t, TG_ETYPE, "nodes[0]", "expected a node object, got \"a\"", "\"a\"");
  EXPECT_ERROR (HEAD "  \"nodes\": {}\n}", TG_ETYPE, "nodes", "expected an array of nodes", "{}");
  EXPECT_ERROR_LC (HEAD "  \"links\": []\n}", TG_EMISSING, "nodes", "missing node list", 1, 1);
}

static void
test_error_params (void)
{
  const char *t;

  t = doc ("    { \"id\": \"a\", \"type\": \"gen.constant\", \"params\": { \"bogus\": 1 } }", NULL);
  EXPECT_ERROR (t, TG_EUNKNOWN, "nodes[0].params.bogus", "unknown parameter of gen.constant", "1 }");
  t = doc ("    { \"id\": \"a\", \"type\": \"gen.constant\", \"params\": { \"valeu\": 1 } }", NULL);
  EXPECT_ERROR (t, TG_EUNKNOWN, "nodes[0].params.valeu", "(did you mean \"value\"?)", "1 }");
  t = doc ("    { \"id\": \"a\", \"type\": \"gen.constant\", \"params\": [] }", NULL);
  EXPECT_ERROR (t, TG_ETYPE, "nodes[0].params", "expected an object of parameters, got an array",
                "[] }");

  /* float */
  t = doc ("    { \"id\": \"a\", \"type\": \"gen.constant\", \"params\": { \"value\": 2 } }", NULL);
  EXPECT_ERROR (t, TG_ERANGE, "nodes[0].params.value", "expected a number in 0..1, got 2", "2 }");
  t = doc ("    { \"id\": \"a\", \"type\": \"gen.constant\", \"params\": { \"value\": \"0.5\" } }", NULL);
  EXPECT_ERROR (t, TG_ETYPE, "nodes[0].params.value", "expected a number in 0..1, got \"0.5\"",
                "\"0.5\"");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"f\": 1e400 } }", NULL);
  EXPECT_ERROR (t, TG_ERANGE, "nodes[0].params.f", "expected a number in -10..10", "1e400");
  /* int */
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"i\": 2.5 } }", NULL);
  EXPECT_ERROR (t, TG_ETYPE, "nodes[0].params.i", "expected an integer in 1..16, got 2.5", "2.5");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"i\": 9223372036854775808 } }",
           NULL);
  EXPECT_ERROR (t, TG_ERANGE, "nodes[0].params.i", "got 9223372036854775808", "922");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"i\": 0 } }", NULL);
  EXPECT_ERROR (t, TG_ERANGE, "nodes[0].params.i", "expected an integer in 1..16, got 0", "0 }");
  /* seed */
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"seed\": 2147483648 } }", NULL);
  EXPECT_ERROR (t, TG_ERANGE, "nodes[0].params.seed", "expected an integer in 0..2147483647",
                "2147483648");
  /* bool */
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"b\": 1 } }", NULL);
  EXPECT_ERROR (t, TG_ETYPE, "nodes[0].params.b", "expected true or false, got 1", "1 }");
  /* enum: the valid choices are listed, a close one suggested */
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"e\": \"gama\" } }", NULL);
  EXPECT_ERROR (t, TG_ERANGE, "nodes[0].params.e",
                "expected one of \"alpha\", \"beta\", \"gamma\", got \"gama\" (did you mean \"gamma\"?)",
                "\"gama\"");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"e\": 1 } }", NULL);
  EXPECT_ERROR (t, TG_ETYPE, "nodes[0].params.e", "expected one of \"alpha\", \"beta\", \"gamma\", got 1",
                "1 }");
  /* string */
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"s\": 5 } }", NULL);
  EXPECT_ERROR (t, TG_ETYPE, "nodes[0].params.s", "expected a string, got 5", "5 }");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"s\": \"a\\u0000b\" } }", NULL);
  EXPECT_ERROR (t, TG_EINVAL, "nodes[0].params.s", "NUL", "\"a\\u");
  /* colour */
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"col\": \"#12345\" } }", NULL);
  EXPECT_ERROR (t, TG_ETYPE, "nodes[0].params.col",
                "expected a colour \"#rrggbb\" or \"#rrggbbaa\", got \"#12345\"", "\"#12345\"");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"col\": [1, 0, 0] } }", NULL);
  EXPECT_ERROR (t, TG_ETYPE, "nodes[0].params.col", "got an array", "[1, 0, 0]");
  /* vectors */
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"v2\": [1] } }", NULL);
  EXPECT_ERROR (t, TG_ETYPE, "nodes[0].params.v2", "expected an array of 2 numbers", "[1]");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"v3\": [1, \"y\", 3] } }", NULL);
  EXPECT_ERROR (t, TG_ETYPE, "nodes[0].params.v3[1]", "expected a number", "\"y\"");
  /* curves */
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"curve\": 3 } }", NULL);
  EXPECT_ERROR (t, TG_ETYPE, "nodes[0].params.curve", "expected an array of [x, y] points, got 3",
                "3 }");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"curve\": [[0, 0], [0.5]] } }",
           NULL);
  EXPECT_ERROR (t, TG_ETYPE, "nodes[0].params.curve[1]", "expected an [x, y] pair", "[0.5]");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"curve\": [[0, 0], [0.5, 1.5]] } }",
           NULL);
  EXPECT_ERROR (t, TG_ERANGE, "nodes[0].params.curve[1][1]", "expected a number in 0..1, got 1.5",
                "1.5");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\",\n"
           "      \"params\": { \"curve\": [[0, 0], [0.5, 0.5], [0.4, 1]] } }",
           NULL);
  EXPECT_ERROR (t, TG_ERANGE, "nodes[0].params.curve[2][0]",
                "curve x must increase from point to point: 0.4 follows 0.5", "0.4");
  /* The engine's own check (a curve needs 2 points) is located too. */
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"curve\": [[0, 0]] } }", NULL);
  EXPECT_ERROR (t, TG_ERANGE, "nodes[0].params.curve", "at least 2 points", "[[0, 0]]");

  /* paths: an export may not leave the output folder */
  t = doc ("    { \"id\": \"x\", \"type\": \"export.heightmap\", \"params\": { \"path\": \"../evil.png\" } }",
           NULL);
  EXPECT_ERROR (t, TG_EPATH, "nodes[0].params.path", "must be relative to the output folder",
                "\"../evil.png\"");
  t = doc ("    { \"id\": \"x\", \"type\": \"export.heightmap\", \"params\": { \"path\": \"/etc/passwd\" } }",
           NULL);
  EXPECT_ERROR (t, TG_EPATH, "nodes[0].params.path", "must be relative", "\"/etc/passwd\"");
  /* missing required parameter: placed at the node's params (or the node) */
  t = doc ("    { \"id\": \"g\", \"type\": \"gen.constant\" },\n"
           "    { \"id\": \"in\", \"type\": \"input.heightmap\", \"params\": { \"min_height\": 0 } }",
           NULL);
  EXPECT_ERROR (t, TG_EMISSING, "nodes[1].params.path",
                "missing required parameter of input.heightmap", "{ \"min_height");
  t = doc ("    { \"id\": \"in\", \"type\": \"input.heightmap\" }", NULL);
  EXPECT_ERROR (t, TG_EMISSING, "nodes[0].params.path", "missing required parameter", "{ \"id\": \"in");
  t = doc ("    { \"id\": \"in\", \"type\": \"input.heightmap\", \"params\": { \"path\": null } }", NULL);
  EXPECT_ERROR (t, TG_EMISSING, "nodes[0].params.path", "a file path is required", "null");
}

static void
test_error_links (void)
{
  const char *nodes = "    { \"id\": \"g\", \"type\": \"gen.constant\" },\n"
                      "    { \"id\": \"c\", \"type\": \"curve\" },\n"
                      "    { \"id\": \"t\", \"type\": \"test.all\" },\n"
                      "    { \"id\": \"x\", \"type\": \"export.heightmap\" }";
  const char *t;

  t = doc (nodes, "    { \"from\": \"g\", \"to\": \"c.height\" }");
  EXPECT_ERROR (t, TG_EINVAL, "links[0].from", "expected \"node.port\", got \"g\"", "\"g\", \"to");
  t = doc (nodes, "    { \"from\": \"g.height.x\", \"to\": \"c.height\" }");
  EXPECT_ERROR (t, TG_EINVAL, "links[0].from", "expected \"node.port\", got \"g.height.x\"",
                "\"g.height.x\"");
  t = doc (nodes, "    { \"from\": \"g.height\", \"to\": \".height\" }");
  EXPECT_ERROR (t, TG_EINVAL, "links[0].to", "expected \"node.port\"", "\".height\"");
  t = doc (nodes, "    { \"from\": \"g.height\", \"to\": \"c.height\" },\n"
                  "    { \"from\": \"c.height\", \"to\": \"q.height\" }");
  EXPECT_ERROR (t, TG_ELINK, "links[1].to", "no node \"q\"", "\"q.height\"");
  t = doc (nodes, "    { \"from\": \"g.height\", \"to\": \"c.height\" },\n"
                  "    { \"from\": \"c.height\", \"to\": \"x.heigth\" }");
  EXPECT_ERROR (t, TG_ELINK, "links[1].to",
                "node \"x\" (export.heightmap) has no input \"heigth\" (did you mean \"height\"?)",
                "\"x.heigth\"");
  t = doc (nodes, "    { \"from\": \"g.hieght\", \"to\": \"c.height\" }");
  EXPECT_ERROR (t, TG_ELINK, "links[0].from", "has no output \"hieght\"", "\"g.hieght\"");
  t = doc (nodes, "    { \"from\": \"x.height\", \"to\": \"c.height\" }");
  EXPECT_ERROR (t, TG_ELINK, "links[0].from", "its outputs: none", "\"x.height\"");
  t = doc (nodes, "    { \"from\": \"g.height\", \"to\": \"c.height\", \"via\": 1 }");
  EXPECT_ERROR (t, TG_EUNKNOWN, "links[0].via", "unknown key in a link", "1 }");
  t = doc (nodes, "    { \"to\": \"c.height\" }");
  EXPECT_ERROR (t, TG_EMISSING, "links[0].from", "missing \"from\"", "{ \"to");
  t = doc (nodes, "    [\"g.height\", \"c.height\"]");
  EXPECT_ERROR (t, TG_ETYPE, "links[0]", "expected a link object", "[\"g.height\"");
  /* Two links into one input. */
  t = doc (nodes, "    { \"from\": \"g.height\", \"to\": \"c.height\" },\n"
                  "    { \"from\": \"t.height\", \"to\": \"c.height\" }");
  EXPECT_ERROR_LC (t, TG_ELINK, "links[1].to", "input \"c.height\" is already fed by links[0]", 13, 33);
  /* Types that do not connect. */
  t = doc (nodes, "    { \"from\": \"t.image\", \"to\": \"c.height\" }");
  EXPECT_ERROR (t, TG_ETYPE, "links[0]", "cannot connect t.image (image) to c.height (height)",
                "{ \"from\": \"t.image");
  /* A cycle: the engine names the nodes on it. */
  t = doc (nodes, "    { \"from\": \"c.height\", \"to\": \"t.height\" },\n"
                  "    { \"from\": \"t.height\", \"to\": \"c.height\" }");
  EXPECT_ERROR (t, TG_ECYCLE, "links[1].to", "cycle", "\"c.height\" }");
  /* Validation after loading: an unlinked required input, placed at the node. */
  t = doc (nodes, "    { \"from\": \"g.height\", \"to\": \"c.height\" }");
  EXPECT_ERROR (t, TG_EMISSING, "nodes[3].inputs.height", "needs a link into its \"height\" input",
                "{ \"id\": \"x\"");
  /* ... and two exports writing one file. */
  t = doc ("    { \"id\": \"g\", \"type\": \"gen.constant\" },\n"
           "    { \"id\": \"x\", \"type\": \"export.heightmap\", \"params\": { \"path\": \"h.png\" } },\n"
           "    { \"id\": \"y\", \"type\": \"export.heightmap\", \"params\": { \"path\": \"h.png\" } }",
           "    { \"from\": \"g.height\", \"to\": \"x.height\" },\n"
           "    { \"from\": \"g.height\", \"to\": \"y.height\" }");
  EXPECT_ERROR (t, TG_EPATH, "nodes[2].params.path", "also written by node \"x\"", "\"h.png\" } }\n  ]");
  EXPECT_ERROR (HEAD "  \"nodes\": [],\n  \"links\": {}\n}", TG_ETYPE, "links",
                "expected an array of links", "{}");
}

/* Unknown top-level keys are kept, not refused; a node's "ui" is not
 * checked by the engine at all. */
/* Lists of objects: values, defaults for fields left out, canonical text,
 * and errors that name the item and field. */
static void
test_list_params (void)
{
  const char *t = doc ("    { \"id\": \"all\", \"type\": \"test.all\", \"params\": { \"items\": [\n"
                       "      { \"name\": \"snow\", \"weight\": 2, \"tint\": \"#ffffff\" },\n"
                       "      { \"weight\": 0.25 } ] } }",
                       NULL);
  TgGraph *g = load_ok (t);
  const TgParamValue *v;
  char *s1;

  if (!g)
    return;
  v = tg_graph_get_param (g, 0, "items");
  TG_CHECK_INT_EQ (v->n_items, 2);
  TG_CHECK (strcmp (tg_param_list_field (v, 0, 0)->s, "snow") == 0);
  TG_CHECK (tg_param_list_field (v, 0, 1)->f == 2.0);
  TG_CHECK (strcmp (tg_param_list_field (v, 1, 0)->s, "layer") == 0); /* field default */
  TG_CHECK (tg_param_list_field (v, 1, 1)->f == 0.25);
  s1 = save (g);
  TG_CHECK_STR_CONTAINS (s1, "{ \"name\": \"snow\", \"weight\": 2, \"tint\": \"#ffffff\" }");
  TG_CHECK_STR_CONTAINS (s1, "{ \"name\": \"layer\", \"weight\": 0.25, \"tint\": \"#ffffff\" }");
  free (s1);
  tg_graph_free (g);

  /* The descriptor's default, parsed from its text form. */
  g = load_ok (doc ("    { \"id\": \"all\", \"type\": \"test.all\" }", NULL));
  if (g)
    {
      v = tg_graph_get_param (g, 0, "items");
      TG_CHECK_INT_EQ (v->n_items, 2);
      TG_CHECK (strcmp (tg_param_list_field (v, 1, 0)->s, "rock") == 0);
      TG_CHECK (tg_param_list_field (v, 0, 2)->v[1] == 1.0 && tg_param_list_field (v, 0, 2)->v[0] == 0);
      tg_graph_free (g);
    }

  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"items\": [ { \"wieght\": 1 } ] } }", NULL);
  EXPECT_ERROR (t, TG_EUNKNOWN, "nodes[0].params.items[0].wieght", "unknown field of a items item", "1 }");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"items\": [ {}, { \"weight\": 11 } ] } }", NULL);
  EXPECT_ERROR (t, TG_ERANGE, "nodes[0].params.items[1].weight", "expected a number in 0..10, got 11", "11 }");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"items\": [ {}, {}, {}, {} ] } }", NULL);
  EXPECT_ERROR (t, TG_ERANGE, "nodes[0].params.items", "expected 0 to 3 items, got 4", "[ {}");
  t = doc ("    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { \"items\": [ 3 ] } }", NULL);
  EXPECT_ERROR (t, TG_ETYPE, "nodes[0].params.items[0]", "expected an object, got 3", "3 ]");
}

/* A bad value says the same thing from a file and from `--set` text
 * (tg_graph_set_param_text): one codec checks both. */
static void
same_message (const char *json_param, const char *name, const char *text, const char *want)
{
  char nodes[512], file_path[TG_ERROR_PATH_MAX + 16];
  TgGraph *g = NULL;
  TgError file_err = { 0 }, set_err = { 0 };
  const char *t;

  snprintf (nodes, sizeof nodes,
            "    { \"id\": \"a\", \"type\": \"test.all\", \"params\": { %s } }", json_param);
  t = doc (nodes, NULL);
  TG_CHECK (tg_tgraph_load_string (t, strlen (t), "/tmp", &g, &file_err) < 0);
  g = load_ok (doc ("    { \"id\": \"a\", \"type\": \"test.all\" }", NULL));
  if (!g)
    return;
  TG_CHECK_INT_EQ (tg_graph_set_param_text (g, 0, name, text, &set_err), file_err.code);
  snprintf (file_path, sizeof file_path, "nodes[0].%s", set_err.path);
  TG_CHECK_MSG (strcmp (file_err.path, file_path) == 0, "%s vs %s", file_err.path, file_path);
  TG_CHECK_MSG (strcmp (file_err.message, set_err.message) == 0, "file: %s\n--set: %s",
                file_err.message, set_err.message);
  TG_CHECK_STR_CONTAINS (set_err.message, want);
  tg_graph_free (g);
}

static void
test_file_and_set_say_the_same (void)
{
  /* an enum typo, with the suggestion */
  same_message ("\"e\": \"gama\"", "e", "gama",
                "expected one of \"alpha\", \"beta\", \"gamma\", got \"gama\" (did you mean \"gamma\"?)");
  /* numbers out of range */
  same_message ("\"i\": 40", "i", "40", "expected an integer in 1..16, got 40");
  same_message ("\"f\": 12.5", "f", "12.5", "expected a number in -10..10, got 12.5");
  /* a bad colour */
  same_message ("\"col\": \"#12345\"", "col", "#12345",
                "expected a colour \"#rrggbb\" or \"#rrggbbaa\", got \"#12345\"");
  /* the wrong type */
  same_message ("\"i\": 2.5", "i", "2.5", "expected an integer in 1..16, got 2.5");
  same_message ("\"f\": \"tall\"", "f", "tall", "expected a number in -10..10, got \"tall\"");
  /* list items: the item and field are named both ways */
  same_message ("\"items\": [ {}, { \"weight\": 11 } ]", "items", "name=a; weight=11",
                "expected a number in 0..10, got 11");
  same_message ("\"items\": [ { \"weight\": \"x\" } ]", "items", "weight=x",
                "expected a number in 0..10, got \"x\"");
  same_message ("\"items\": [ { \"wieght\": 1 } ]", "items", "wieght=1",
                "unknown field of a items item (did you mean \"weight\"?)");
}

static void
test_unknown_keys_are_kept (void)
{
  TgGraph *g = load_ok ("{ \"format\": \"tgraph\", \"version\": 2, \"future\": [1, {\"a\": 2}],\n"
                        "  \"world\": { \"size_m\": [10, 10], \"height_m\": 1, \"resolution\": 2, \"seed\": 0 },\n"
                        "  \"nodes\": [ { \"id\": \"a\", \"type\": \"gen.constant\", \"ui\": \"anything\", "
                        "\"future_node_key\": null } ], \"x\": \"\" }");
  if (!g)
    return;
  TG_CHECK (tg_graph_extra (g)
            && strcmp (tg_graph_extra (g), "{ \"future\": [1, { \"a\": 2 }], \"x\": \"\" }") == 0);
  TG_CHECK (tg_graph_node_ui (g, 0) && strcmp (tg_graph_node_ui (g, 0), "\"anything\"") == 0);
  TG_CHECK (tg_graph_node_extra (g, 0)
            && strcmp (tg_graph_node_extra (g, 0), "{ \"future_node_key\": null }") == 0);
  tg_graph_free (g);
}

/* "ui": {"bypass": true} is the engine's bypass flag: the loader takes it
 * out of the editor's ui text and sets the flag, the saver writes it back
 * at the end of "ui" (and "false" not at all); a value that is not a
 * boolean, or a node with nothing to pass through, is refused there. */
static void
test_bypass_in_ui (void)
{
  const char *t;
  TgGraph *g;
  char *s1, *s2;

  t = doc ("    { \"id\": \"a\", \"type\": \"gen.constant\" },\n"
           "    { \"id\": \"b\", \"type\": \"filter.invert\", \"ui\": { \"bypass\": true, \"x\": 1 } },\n"
           "    { \"id\": \"c\", \"type\": \"filter.invert\", \"ui\": { \"bypass\": false } },\n"
           "    { \"id\": \"d\", \"type\": \"filter.invert\", \"ui\": { \"bypass\": true } }",
           "    { \"from\": \"a.height\", \"to\": \"b.height\" },\n"
           "    { \"from\": \"b.height\", \"to\": \"c.height\" },\n"
           "    { \"from\": \"c.height\", \"to\": \"d.height\" }");
  g = load_ok (t);
  if (!g)
    return;
  TG_CHECK (!tg_graph_node_bypass (g, 0) && tg_graph_node_bypass (g, 1));
  TG_CHECK (!tg_graph_node_bypass (g, 2) && tg_graph_node_bypass (g, 3));
  TG_CHECK (tg_graph_node_ui (g, 1) && strcmp (tg_graph_node_ui (g, 1), "{ \"x\": 1 }") == 0);
  TG_CHECK (tg_graph_node_ui (g, 2) == NULL && tg_graph_node_ui (g, 3) == NULL);
  s1 = save (g);
  TG_CHECK_STR_CONTAINS (s1, "      \"ui\": { \"x\": 1, \"bypass\": true }\n");
  TG_CHECK_STR_CONTAINS (s1, "      \"ui\": { \"bypass\": true }\n");
  TG_CHECK (s1 && strstr (s1, "false") == NULL);
  tg_graph_set_node_bypass (g, 1, false);
  tg_graph_set_node_bypass (g, 2, true);
  s2 = save (g);
  TG_CHECK_STR_CONTAINS (s2, "      \"ui\": { \"x\": 1 }\n");
  {
    int n = 0;
    for (const char *q = s2; q && (q = strstr (q, "\"bypass\": true")); q++)
      n++;
    TG_CHECK_INT_EQ (n, 2); /* c and d */
  }
  tg_graph_free (g);
  g = s2 ? load_ok (s2) : NULL;
  TG_CHECK (g && !tg_graph_node_bypass (g, 1) && tg_graph_node_bypass (g, 2)
            && tg_graph_node_bypass (g, 3));
  tg_graph_free (g);
  free (s1);
  free (s2);

  t = doc ("    { \"id\": \"a\", \"type\": \"gen.constant\" },\n"
           "    { \"id\": \"b\", \"type\": \"filter.invert\", \"ui\": { \"bypass\": 1 } }",
           "    { \"from\": \"a.height\", \"to\": \"b.height\" }");
  EXPECT_ERROR (t, TG_ETYPE, "nodes[1].ui.bypass", "expected true or false, got 1", "1 }");
  t = doc ("    { \"id\": \"a\", \"type\": \"gen.constant\", \"ui\": { \"bypass\": true } }",
           NULL);
  EXPECT_ERROR (t, TG_EINVAL, "nodes[0].ui.bypass",
                "node \"a\" (gen.constant) cannot be bypassed: it has no height input to pass "
                "through to its \"height\" output", "true }");
}

int
main (void)
{
  TG_RUN (test_save_canonical_text);
  TG_RUN (test_round_trip_fixed_point);
  TG_RUN (test_round_trip_exact_doubles);
  TG_RUN (test_round_trip_built_graph);
  TG_RUN (test_save_file_atomic_and_base_dir);
  TG_RUN (test_load_accepts);
  TG_RUN (test_error_syntax_has_line_and_column);
  TG_RUN (test_error_duplicate_keys);
  TG_RUN (test_error_strict_json);
  TG_RUN (test_error_numbers_as_written);
  TG_RUN (test_error_format_and_version);
  TG_RUN (test_error_world);
  TG_RUN (test_error_nodes);
  TG_RUN (test_error_params);
  TG_RUN (test_error_links);
  TG_RUN (test_list_params);
  TG_RUN (test_file_and_set_say_the_same);
  TG_RUN (test_unknown_keys_are_kept);
  TG_RUN (test_bypass_in_ui);
  return tgtest_result ();
}
