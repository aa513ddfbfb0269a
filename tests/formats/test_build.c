/* tg_build: every export plus manifest.json with the right digests,
 * sizes and extents; the same bytes for any thread count; and all or
 * nothing: a failing export, a name clash or a cancel leaves no file. */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tgformats/tgformats.h>

#include "fmt_test_nodes.h"
#include "tgtest.h"

/* The test folder, from tgtest_tmpdir: removed when the program exits. */
static const char *root;

static const char *
dir_path (const char *name)
{
  static char buf[8][PATH_MAX];
  static int k;
  char *b = buf[k++ & 7];
  snprintf (b, sizeof buf[0], "%s/%s", root, name);
  return b;
}

/* Files (recursively) under DIR, as "a b/c" sorted; directories are
 * listed with a trailing '/'. */
static void
list_tree (const char *dir, const char *prefix, char *out, size_t size)
{
  DIR *d = opendir (dir);
  struct dirent *e;
  char *names[64];
  int n = 0;

  if (!d)
    return;
  while ((e = readdir (d)) && n < 64)
    if (strcmp (e->d_name, ".") && strcmp (e->d_name, ".."))
      names[n++] = strdup (e->d_name);
  closedir (d);
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (strcmp (names[j], names[i]) < 0)
        {
          char *t = names[i];
          names[i] = names[j];
          names[j] = t;
        }
  for (int i = 0; i < n; i++)
    {
      char full[PATH_MAX], rel[PATH_MAX];
      struct stat st;
      snprintf (full, sizeof full, "%s/%s", dir, names[i]);
      snprintf (rel, sizeof rel, "%s%s", prefix, names[i]);
      stat (full, &st);
      if (S_ISDIR (st.st_mode))
        {
          char sub[PATH_MAX + 2];
          snprintf (out + strlen (out), size - strlen (out), "%s%s/", *out ? " " : "", rel);
          snprintf (sub, sizeof sub, "%s/", rel);
          list_tree (full, sub, out, size);
        }
      else
        snprintf (out + strlen (out), size - strlen (out), "%s%s", *out ? " " : "", rel);
      free (names[i]);
    }
}

static char *
read_all (const char *path, long *len)
{
  FILE *f = fopen (path, "rb");
  char *buf;

  *len = -1;
  if (!f)
    return NULL;
  fseek (f, 0, SEEK_END);
  *len = ftell (f);
  rewind (f);
  buf = calloc (1, (size_t) *len + 1);
  if (fread (buf, 1, (size_t) *len, f) != (size_t) *len)
    *len = -1;
  fclose (f);
  return buf;
}

static TgGraph *
load (const char *text)
{
  TgGraph *g = NULL;
  TgError err = { 0 };

  TG_CHECK_MSG (tg_tgraph_load_string (text, strlen (text), root, &g, &err) == 0, "%s: %s",
                err.path, err.message);
  return g;
}

#define WORLD                                                                                     \
  "{ \"format\": \"tgraph\", \"version\": 2,\n"                                                   \
  "  \"world\": { \"size_m\": [1000, 500], \"height_m\": 200, \"resolution\": 33, \"seed\": 99 },\n"

static const char *good_graph =
  WORLD "  \"nodes\": [\n"
  "    { \"id\": \"ramp\", \"type\": \"gen.gradient\", \"params\": { \"angle_deg\": 30 } },\n"
  "    { \"id\": \"png\", \"type\": \"export.heightmap\", \"params\": { \"path\": \"maps/h.png\" } },\n"
  "    { \"id\": \"raw\", \"type\": \"export.heightmap\", \"params\": { \"path\": \"h.raw\", \"format\": \"raw16\" } }\n"
  "  ],\n"
  "  \"links\": [ { \"from\": \"ramp.height\", \"to\": \"png.height\" },\n"
  "             { \"from\": \"ramp.height\", \"to\": \"raw.height\" } ]\n}\n";

static void
test_build_writes_files_and_manifest (void)
{
  TgEngineOptions opts = { .threads = 3 };
  TgEngine *e = tg_engine_new (&opts);
  TgGraph *g = load (good_graph);
  TgExportList list;
  TgEvalReport report = { 0 };
  TgError err = { 0 };
  char tree[1024] = "", sha_png[65], sha_raw[65], want[4096];
  char *manifest;
  long len, png_len, raw_len;
  int rc;

  if (!g)
    return;
  rc = tg_build (e, g, "/home/someone/graphs/island.tgraph", dir_path ("out1"), NULL, &list,
                 &report, &err);
  TG_CHECK_MSG (rc == 0, "%s: %s", err.path, err.message);

  list_tree (dir_path ("out1"), "", tree, sizeof tree);
  TG_CHECK_MSG (strcmp (tree, "h.raw manifest.json maps/ maps/h.png") == 0, "tree: %s", tree);

  /* The list holds the committed files, the manifest among them. */
  TG_CHECK_INT_EQ (list.n_files, 3);
  for (int i = 0; i < list.n_files; i++)
    TG_CHECK (list.files[i].tmp_path == NULL);

  free (read_all (dir_path ("out1/maps/h.png"), &png_len));
  free (read_all (dir_path ("out1/h.raw"), &raw_len));
  TG_CHECK_INT_EQ (raw_len, 33 * 17 * 2);
  TG_CHECK_INT_EQ (tg_sha256_file (dir_path ("out1/maps/h.png"), sha_png, &err), 0);
  TG_CHECK_INT_EQ (tg_sha256_file (dir_path ("out1/h.raw"), sha_raw, &err), 0);

  /* The whole manifest, byte for byte: sorted by path, no time, no
   * absolute path (only the graph's file name). */
  snprintf (want, sizeof want,
            "{\n"
            "  \"tgraph_version\": \"%s\",\n"
            "  \"format_version\": 2,\n"
            "  \"graph\": \"island.tgraph\",\n"
            "  \"world\": {\n"
            "    \"size_m\": [1000, 500],\n"
            "    \"height_m\": 200,\n"
            "    \"resolution\": 33,\n"
            "    \"seed\": 99\n"
            "  },\n"
            "  \"files\": [\n"
            "    {\n"
            "      \"path\": \"h.raw\",\n"
            "      \"bytes\": %ld,\n"
            "      \"sha256\": \"%s\",\n"
            "      \"format\": \"raw16\",\n"
            "      \"node\": \"raw\",\n"
            "      \"resolution\": [33, 17],\n"
            "      \"extent_m\": {\n"
            "        \"min\": [-500, -250],\n"
            "        \"max\": [500, 250]\n"
            "      },\n"
            "      \"seed\": 99\n"
            "    },\n"
            "    {\n"
            "      \"path\": \"maps/h.png\",\n"
            "      \"bytes\": %ld,\n"
            "      \"sha256\": \"%s\",\n"
            "      \"format\": \"png16\",\n"
            "      \"node\": \"png\",\n"
            "      \"resolution\": [33, 17],\n"
            "      \"extent_m\": {\n"
            "        \"min\": [-500, -250],\n"
            "        \"max\": [500, 250]\n"
            "      },\n"
            "      \"seed\": 99\n"
            "    }\n"
            "  ]\n"
            "}\n",
            TG_VERSION_STRING, raw_len, sha_raw, png_len, sha_png);
  manifest = read_all (dir_path ("out1/manifest.json"), &len);
  TG_CHECK_MSG (manifest && strcmp (manifest, want) == 0, "manifest:\n%s", manifest ? manifest : "-");
  free (manifest);

  /* The PNG reads back as the 16-bit map the export node made. */
  {
    TgImage img = { 0 };
    TG_CHECK_INT_EQ (tg_png_read (dir_path ("out1/maps/h.png"), &img, &err), 0);
    TG_CHECK (img.width == 33 && img.height == 17 && img.bits == 16 && img.channels == 1);
    tg_image_clear (&img);
  }

  tg_export_list_clear (&list);
  tg_eval_report_clear (&report);
  tg_graph_free (g);
  tg_engine_free (e);
}

/* Another engine with another thread count, no graph name: the same
 * data bytes, and a manifest that differs only in "graph". */
static void
test_build_same_bytes_any_thread_count (void)
{
  TgEngineOptions one = { .threads = 1 };
  TgEngine *e = tg_engine_new (&one);
  TgGraph *g = load (good_graph);
  TgError err = { 0 };
  char a[65], b[65];
  char *m1, *m2, *p;
  long l1, l2;

  if (!g)
    return;
  TG_CHECK_INT_EQ (tg_build (e, g, NULL, dir_path ("out2"), NULL, NULL, NULL, &err), 0);
  static const char *files[] = { "maps/h.png", "h.raw" };
  for (int i = 0; i < 2; i++)
    {
      char p1[64], p2[64];
      snprintf (p1, sizeof p1, "out1/%s", files[i]);
      snprintf (p2, sizeof p2, "out2/%s", files[i]);
      TG_CHECK_INT_EQ (tg_sha256_file (dir_path (p1), a, &err), 0);
      TG_CHECK_INT_EQ (tg_sha256_file (dir_path (p2), b, &err), 0);
      TG_CHECK_MSG (strcmp (a, b) == 0, "%s differs between 3 threads and 1", files[i]);
    }
  m1 = read_all (dir_path ("out1/manifest.json"), &l1);
  m2 = read_all (dir_path ("out2/manifest.json"), &l2);
  TG_CHECK_STR_CONTAINS (m2, "  \"graph\": null,\n");
  if (m1 && m2 && (p = strstr (m1, "\"island.tgraph\"")))
    {
      /* Put the names side by side: everything else is equal. */
      char fixed[8192];
      snprintf (fixed, sizeof fixed, "%.*snull%s", (int) (p - m1), m1, p + strlen ("\"island.tgraph\""));
      TG_CHECK (strcmp (fixed, m2) == 0);
    }
  free (m1);
  free (m2);
  tg_graph_free (g);
  tg_engine_free (e);
}

/* The second export fails after the first staged its file: nothing of
 * either is left, and the report names the failing node. */
static void
test_build_failure_leaves_nothing (void)
{
  TgEngine *e = tg_engine_new (NULL);
  TgGraph *g = load (WORLD "  \"nodes\": [\n"
                     "    { \"id\": \"ramp\", \"type\": \"gen.gradient\" },\n"
                     "    { \"id\": \"first\", \"type\": \"export.heightmap\", \"params\": { \"path\": \"sub/first.png\" } },\n"
                     "    { \"id\": \"second\", \"type\": \"test.export_fail\" }\n"
                     "  ],\n"
                     "  \"links\": [ { \"from\": \"ramp.height\", \"to\": \"first.height\" },\n"
                     "             { \"from\": \"ramp.height\", \"to\": \"second.height\" } ]\n}\n");
  TgExportList list;
  TgEvalReport report = { 0 };
  TgError err = { 0 };
  char tree[1024] = "";
  int rc;

  if (!g)
    return;
  mkdir (dir_path ("fail"), 0777);
  rc = tg_build (e, g, "g.tgraph", dir_path ("fail"), NULL, &list, &report, &err);
  TG_CHECK (rc < 0);
  list_tree (dir_path ("fail"), "", tree, sizeof tree);
  TG_CHECK_MSG (strcmp (tree, "") == 0, "left behind: %s", tree);
  TG_CHECK_INT_EQ (list.n_files, 0);
  TG_CHECK (list.files == NULL);
  TG_CHECK_INT_EQ (tg_eval_report_first_failure (&report), 2);
  if (report.message && report.message[2])
    TG_CHECK_STR_CONTAINS (report.message[2], "disk full (test)");
  tg_eval_report_clear (&report);
  tg_graph_free (g);
  tg_engine_free (e);
}

static void
test_build_refuses_manifest_name_and_cancel (void)
{
  TgEngine *e = tg_engine_new (NULL);
  TgGraph *g = load (WORLD "  \"nodes\": [\n"
                     "    { \"id\": \"ramp\", \"type\": \"gen.gradient\" },\n"
                     "    { \"id\": \"x\", \"type\": \"export.heightmap\", \"params\": { \"path\": \"manifest.json\" } }\n"
                     "  ],\n"
                     "  \"links\": [ { \"from\": \"ramp.height\", \"to\": \"x.height\" } ]\n}\n");
  TgGraph *ok = load (good_graph);
  TgCancel *cancel = tg_cancel_new ();
  TgEvalHooks hooks = { .cancel = cancel };
  TgError err = { 0 };
  char tree[1024] = "";

  if (!g || !ok)
    return;
  TG_CHECK_INT_EQ (tg_build (e, g, NULL, dir_path ("clash"), NULL, NULL, NULL, &err), TG_EPATH);
  TG_CHECK_STR_CONTAINS (err.message, "manifest.json");
  TG_CHECK_STR_CONTAINS (err.message, "\"x\"");
  list_tree (dir_path ("clash"), "", tree, sizeof tree);
  TG_CHECK_MSG (strcmp (tree, "") == 0, "left behind: %s", tree);

  tg_cancel_request (cancel);
  TG_CHECK_INT_EQ (tg_build (e, ok, NULL, dir_path ("cancel"), &hooks, NULL, NULL, &err),
                   TG_ECANCELLED);
  /* The build made the folder; a failed build takes it away again. */
  TG_CHECK_MSG (access (dir_path ("cancel"), F_OK) != 0, "the output folder was left behind");
  TG_CHECK_MSG (access (dir_path ("clash"), F_OK) != 0, "the output folder was left behind");

  tg_cancel_free (cancel);
  tg_graph_free (g);
  tg_graph_free (ok);
  tg_engine_free (e);
}

int
main (void)
{
  root = tgtest_tmpdir ("tgfmt-build-");
  if (!root)
    return 1;
  TG_CHECK_INT_EQ (tg_formats_init (), 0);
  TG_RUN (test_build_writes_files_and_manifest);
  TG_RUN (test_build_same_bytes_any_thread_count);
  TG_RUN (test_build_failure_leaves_nothing);
  TG_RUN (test_build_refuses_manifest_name_and_cancel);
  return tgtest_result ();
}
