/* tg_build: every export plus manifest.json with the right digests,
 * sizes and extents; the same bytes for any thread count; and all or
 * nothing: a failing export, a name clash or a cancel leaves no file,
 * a failed commit leaves the folder as it was; never a write through a
 * link below the output folder; stale temporaries of this host removed. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tgformats/outputs.h>
#include <tgformats/tgformats.h>

#include "export_list-private.h"
#include "fmt_test_nodes.h"
#include "plan-private.h"
#include "tgformats-private.h"
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

/* The names in DIR but "." and "..", sorted, into NAMES (at most 64;
 * the caller frees each); returns how many. */
static int
sorted_names (const char *dir, char **names)
{
  DIR *d = opendir (dir);
  struct dirent *e;
  int n = 0;

  if (!d)
    return 0;
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
  return n;
}

/* Files (recursively) under DIR, as "a b/c" sorted; directories are
 * listed with a trailing '/'. */
static void
list_tree (const char *dir, const char *prefix, char *out, size_t size)
{
  char *names[64];
  int n = sorted_names (dir, names);

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


/* Both heightmaps' import numbers in test_build_writes_files_and_manifest:
 * 1000 m over 32 cells is 31.25 m a sample (3125 cm), 200 m x 100 / 512
 * is Unreal's Z scale 39.0625, and the actor stands half the range up
 * (10000 cm) at the north-west corner. */
#define HEIGHTMAP_ENTRY \
  "      \"heightmap\": {\n" \
  "        \"metres_per_sample\": 31.25,\n" \
  "        \"height_range_m\": [0, 200],\n" \
  "        \"metres_per_unit\": 0.0030518043793392844,\n" \
  "        \"rows\": \"north_first\",\n" \
  "        \"unreal\": {\n" \
  "          \"location_cm\": [-50000, -25000, 10000],\n" \
  "          \"scale\": [3125, 3125, 39.0625]\n" \
  "        },\n" \
  "        \"unity\": {\n" \
  "          \"terrain_size_m\": [1000, 200, 500],\n" \
  "          \"position_m\": [-500, 0, -250]\n" \
  "        }\n" \
  "      }\n"

static void
test_build_writes_files_and_manifest (void)
{
  TgEngineOptions opts = { .threads = 3 };
  TgEngine *e = tg_engine_new (&opts);
  TgGraph *g = load (good_graph);
  TgExportList *list = NULL;
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
  TG_CHECK_INT_EQ (list ? tg_export_list_n_files (list) : 0, 3);
  for (int i = 0; list && i < tg_export_list_n_files (list); i++)
    TG_CHECK (tg__export_list_staged_path (list, i) == NULL);

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
            "      \"seed\": 99,\n"
            HEIGHTMAP_ENTRY
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
            "      \"seed\": 99,\n"
            HEIGHTMAP_ENTRY
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

  tg_export_list_free (list);
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
  TgExportList *list = NULL;
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
  TG_CHECK (list == NULL);
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

/* --- links, all files or none, temporaries --------------------------------- */

/* Everything under DIR, links not followed, as one string: each entry's
 * path, kind and content (SHA-256 of a file, target of a link), sorted. */
static void
tree_state (const char *dir, const char *prefix, char *out, size_t size)
{
  char *names[64];
  int n = sorted_names (dir, names);

  for (int i = 0; i < n; i++)
    {
      char full[PATH_MAX], rel[PATH_MAX], what[PATH_MAX] = "?";
      struct stat st;
      TgError err = { 0 };
      snprintf (full, sizeof full, "%s/%s", dir, names[i]);
      snprintf (rel, sizeof rel, "%s%s", prefix, names[i]);
      lstat (full, &st);
      if (S_ISLNK (st.st_mode))
        {
          ssize_t k = readlink (full, what + 2, sizeof what - 3);
          what[0] = '-';
          what[1] = '>';
          what[k > 0 ? k + 2 : 2] = '\0';
        }
      else if (S_ISREG (st.st_mode))
        tg_sha256_file (full, what, &err);
      snprintf (out + strlen (out), size - strlen (out), "%s%s%s%s", *out ? " " : "", rel,
                S_ISDIR (st.st_mode) ? "/" : "=", S_ISDIR (st.st_mode) ? "" : what);
      if (S_ISDIR (st.st_mode))
        {
          char sub[PATH_MAX + 2];
          snprintf (sub, sizeof sub, "%s/", rel);
          tree_state (full, sub, out, size);
        }
      free (names[i]);
    }
}

static void
write_text (const char *path, const char *text)
{
  FILE *f = fopen (path, "wb");
  TG_CHECK_MSG (f != NULL, "cannot write %s", path);
  if (f)
    {
      fputs (text, f);
      fclose (f);
    }
}

/* Three files at three depths; ANGLE changes their bytes. */
static TgGraph *
deep_graph (int angle)
{
  char text[2048];
  snprintf (text, sizeof text,
            WORLD "  \"nodes\": [\n"
            "    { \"id\": \"ramp\", \"type\": \"gen.gradient\", \"params\": { \"angle_deg\": %d } },\n"
            "    { \"id\": \"out_a\", \"type\": \"export.heightmap\", \"params\": { \"path\": \"a.png\" } },\n"
            "    { \"id\": \"out_b\", \"type\": \"export.heightmap\", \"params\": { \"path\": \"sub/b.png\" } },\n"
            "    { \"id\": \"out_c\", \"type\": \"export.heightmap\", \"params\": { \"path\": \"sub/deep/c.png\" } }\n"
            "  ],\n"
            "  \"links\": [ { \"from\": \"ramp.height\", \"to\": \"out_a.height\" },\n"
            "             { \"from\": \"ramp.height\", \"to\": \"out_b.height\" },\n"
            "             { \"from\": \"ramp.height\", \"to\": \"out_c.height\" } ]\n}\n",
            angle);
  return load (text);
}

/* The build fails with a message holding WANT and changes neither OUT
 * nor the folder ELSEWHERE the links point into. */
static void
check_refused (TgEngine *e, TgGraph *g, const char *out, const char *want)
{
  char before[8192] = "", after[8192] = "", ebefore[4096] = "", eafter[4096] = "";
  TgEvalReport report = { 0 };
  TgError err = { 0 };
  int failed;

  tree_state (out, "", before, sizeof before);
  tree_state (dir_path ("elsewhere"), "", ebefore, sizeof ebefore);
  TG_CHECK_MSG (tg_build (e, g, NULL, out, NULL, NULL, &report, &err) < 0, "%s: built", out);
  failed = tg_eval_report_first_failure (&report);
  TG_CHECK_MSG (failed >= 0 && report.message && report.message[failed]
                  && strstr (report.message[failed], want),
                "%s: wanted \"%s\", got \"%s\"", out, want,
                failed >= 0 && report.message && report.message[failed] ? report.message[failed]
                                                                       : err.message);
  tree_state (out, "", after, sizeof after);
  tree_state (dir_path ("elsewhere"), "", eafter, sizeof eafter);
  TG_CHECK_MSG (strcmp (before, after) == 0, "%s changed:\n%s\n%s", out, before, after);
  TG_CHECK_MSG (strcmp (ebefore, eafter) == 0, "elsewhere changed:\n%s\n%s", ebefore, eafter);
  tg_eval_report_clear (&report);
}

/* A link below the output folder, to a folder or a file, at any depth,
 * dangling or not, is refused: nothing is written through it.  The
 * output folder itself may be a link. */
static void
test_build_refuses_links_below_output_folder (void)
{
  TgEngine *e = tg_engine_new (NULL);
  TgGraph *g = deep_graph (30);
  TgError err = { 0 };
  char victim[65], now[65], tree[2048] = "";
  struct stat st;

  if (!g)
    return;
  mkdir (dir_path ("elsewhere"), 0777);
  mkdir (dir_path ("elsewhere/deep"), 0777);
  write_text (dir_path ("elsewhere/victim.png"), "precious");
  write_text (dir_path ("elsewhere/b.png"), "precious b");

  /* A link to a folder, one level down. */
  mkdir (dir_path ("l1"), 0777);
  TG_CHECK (symlink (dir_path ("elsewhere"), dir_path ("l1/sub")) == 0);
  check_refused (e, g, dir_path ("l1"),
                 "export path \"sub/b.png\": \"sub\" is a symbolic link; refusing to write "
                 "outside the output folder");

  /* Two levels down. */
  mkdir (dir_path ("l2"), 0777);
  mkdir (dir_path ("l2/sub"), 0777);
  TG_CHECK (symlink (dir_path ("elsewhere/deep"), dir_path ("l2/sub/deep")) == 0);
  check_refused (e, g, dir_path ("l2"), "\"sub/deep\" is a symbolic link");

  /* Relative, and dangling: mkdir is not tried through it either. */
  mkdir (dir_path ("l3"), 0777);
  TG_CHECK (symlink ("../elsewhere/missing", dir_path ("l3/sub")) == 0);
  check_refused (e, g, dir_path ("l3"), "\"sub\" is a symbolic link");
  TG_CHECK (access (dir_path ("elsewhere/missing"), F_OK) != 0);

  /* A link to a file where a folder should be. */
  mkdir (dir_path ("l4"), 0777);
  TG_CHECK (symlink (dir_path ("elsewhere/victim.png"), dir_path ("l4/sub")) == 0);
  check_refused (e, g, dir_path ("l4"), "\"sub\" is a symbolic link");

  /* A link to a file at a file's own name is replaced, not written
   * through. */
  mkdir (dir_path ("l5"), 0777);
  mkdir (dir_path ("l5/sub"), 0777);
  TG_CHECK_INT_EQ (tg_sha256_file (dir_path ("elsewhere/victim.png"), victim, &err), 0);
  TG_CHECK (symlink (dir_path ("elsewhere/victim.png"), dir_path ("l5/a.png")) == 0);
  TG_CHECK (symlink (dir_path ("elsewhere/b.png"), dir_path ("l5/sub/b.png")) == 0);
  TG_CHECK_MSG (tg_build (e, g, NULL, dir_path ("l5"), NULL, NULL, NULL, &err) == 0, "%s",
                err.message);
  TG_CHECK (lstat (dir_path ("l5/a.png"), &st) == 0 && S_ISREG (st.st_mode));
  TG_CHECK (lstat (dir_path ("l5/sub/b.png"), &st) == 0 && S_ISREG (st.st_mode));
  TG_CHECK_INT_EQ (tg_sha256_file (dir_path ("elsewhere/victim.png"), now, &err), 0);
  TG_CHECK (strcmp (victim, now) == 0);
  tree_state (dir_path ("elsewhere"), "", tree, sizeof tree);
  TG_CHECK_MSG (strstr (tree, ".png.tmp") == NULL && strstr (tree, "c.png") == NULL, "%s", tree);

  /* The output folder itself may be a link the user chose. */
  TG_CHECK (symlink (dir_path ("l5"), dir_path ("l6")) == 0);
  TG_CHECK_MSG (tg_build (e, g, NULL, dir_path ("l6"), NULL, NULL, NULL, &err) == 0, "%s",
                err.message);

  tg_graph_free (g);
  tg_engine_free (e);
}

/* Swaps "sub" for a link to ELSEWHERE that holds files of the staged
 * names, as someone racing the build would. */
static void
swap_sub_for_link (TgExportList *list, const char *out)
{
  char real[PATH_MAX], sub[PATH_MAX], trap[PATH_MAX];

  snprintf (sub, sizeof sub, "%s/sub", out);
  snprintf (real, sizeof real, "%s/sub.real", out);
  TG_CHECK (rename (sub, real) == 0);
  TG_CHECK (symlink (dir_path ("elsewhere2"), sub) == 0);
  for (int i = 0; i < tg_export_list_n_files (list); i++)
    if (tg__export_list_staged_path (list, i)
        && strncmp (tg_export_list_file (list, i)->path, "sub/", 4) == 0)
      {
        snprintf (trap, sizeof trap, "%s/%s", dir_path ("elsewhere2"),
                  strrchr (tg__export_list_staged_path (list, i), '/') + 1);
        write_text (trap, "trap");
      }
}

static void
swap_hook (TgExportList *list, int i, void *data)
{
  if (strcmp (tg_export_list_file (list, i)->path, "sub/b.png") == 0)
    swap_sub_for_link (list, data);
}

/* A folder swapped for a link after staging: commit refuses it before
 * any rename; swapped between the checks and the renames: the renames
 * go through the folders commit holds open, so they stay inside. */
static void
test_commit_link_swapped_in (void)
{
  TgEngine *e = tg_engine_new (NULL);
  TgGraph *g = deep_graph (30);
  TgExportList *list;
  TgError err = { 0 };
  char tree[4096] = "", etree[4096] = "";

  if (!g)
    return;
  mkdir (dir_path ("elsewhere2"), 0777);
  TG_CHECK_INT_EQ (tg_engine_export (e, g, dir_path ("swap1"), NULL, &list, NULL, &err), 0);
  swap_sub_for_link (list, dir_path ("swap1"));
  tree_state (dir_path ("elsewhere2"), "", etree, sizeof etree);
  TG_CHECK_INT_EQ (tg_export_list_commit (list, &err), TG_EPATH);
  TG_CHECK_STR_CONTAINS (err.message, "\"sub\" is a symbolic link");
  tree_state (dir_path ("swap1"), "", tree, sizeof tree);
  TG_CHECK_MSG (strstr (tree, "a.png=") == NULL, "a file was committed: %s", tree);
  tg_export_list_free (list);
  tree[0] = '\0';
  tree_state (dir_path ("elsewhere2"), "", tree, sizeof tree);
  TG_CHECK_MSG (strcmp (tree, etree) == 0, "elsewhere2 changed:\n%s\n%s", etree, tree);

  TG_CHECK_INT_EQ (tg_engine_export (e, g, dir_path ("swap2"), NULL, &list, NULL, &err), 0);
  tg__export_list_set_before_rename (list, swap_hook, (void *) dir_path ("swap2"));
  TG_CHECK_MSG (tg_export_list_commit (list, &err) == 0, "%s", err.message);
  tg_export_list_free (list);
  TG_CHECK (access (dir_path ("swap2/sub.real/b.png"), F_OK) == 0);
  TG_CHECK (access (dir_path ("swap2/sub.real/deep/c.png"), F_OK) == 0);
  tree[0] = '\0';
  tree_state (dir_path ("elsewhere2"), "", tree, sizeof tree);
  TG_CHECK_MSG (strstr (tree, "b.png=") == NULL && strstr (tree, "c.png=") == NULL,
                "written outside: %s", tree);

  tg_graph_free (g);
  tg_engine_free (e);
}

/* Builds ANGLE into OUT expecting a failure, and checks OUT is byte for
 * byte what it was. */
static void
check_unchanged_after_failure (TgEngine *e, const char *out, int angle)
{
  TgGraph *g = deep_graph (angle);
  char before[8192] = "", after[8192] = "";
  TgError err = { 0 };

  if (!g)
    return;
  tree_state (out, "", before, sizeof before);
  TG_CHECK_MSG (tg_build (e, g, NULL, out, NULL, NULL, NULL, &err) < 0, "%s: built", out);
  TG_CHECK_STR_CONTAINS (err.message, "a folder of that name is in the way");
  tree_state (out, "", after, sizeof after);
  TG_CHECK_MSG (strcmp (before, after) == 0, "%s changed:\n%s\n%s", out, before, after);
  tg_graph_free (g);
}

static void
unlink_staged (TgExportList *list, int i, void *data)
{
  (void) data;
  if (i == tg_export_list_n_files (list) - 1)
    TG_CHECK (unlink (tg__export_list_staged_path (list, i)) == 0);
}

/* A folder where a file goes, or a rename that fails partway, leaves the
 * output folder as it was: old files, old manifest, no new file. */
static void
test_commit_failure_leaves_folder_as_it_was (void)
{
  TgEngine *e = tg_engine_new (NULL);
  TgGraph *g = deep_graph (30);
  TgExportList *list;
  TgError err = { 0 };
  char before[8192] = "", after[8192] = "";

  if (!g)
    return;
  /* mkdir -p out/sub/b.png, into an empty folder and over a build. */
  mkdir (dir_path ("in_way0"), 0777);
  mkdir (dir_path ("in_way0/sub"), 0777);
  mkdir (dir_path ("in_way0/sub/b.png"), 0777);
  check_unchanged_after_failure (e, dir_path ("in_way0"), 45);
  TG_CHECK_INT_EQ (tg_build (e, g, NULL, dir_path ("in_way1"), NULL, NULL, NULL, &err), 0);
  TG_CHECK (unlink (dir_path ("in_way1/sub/b.png")) == 0);
  TG_CHECK (mkdir (dir_path ("in_way1/sub/b.png"), 0777) == 0);
  check_unchanged_after_failure (e, dir_path ("in_way1"), 45);
  /* mkdir out/manifest.json */
  TG_CHECK_INT_EQ (tg_build (e, g, NULL, dir_path ("in_way2"), NULL, NULL, NULL, &err), 0);
  TG_CHECK (unlink (dir_path ("in_way2/manifest.json")) == 0);
  TG_CHECK (mkdir (dir_path ("in_way2/manifest.json"), 0777) == 0);
  check_unchanged_after_failure (e, dir_path ("in_way2"), 45);

  /* The last rename fails after the others were done: they are undone. */
  TG_CHECK_INT_EQ (tg_build (e, g, NULL, dir_path ("undo"), NULL, NULL, NULL, &err), 0);
  tree_state (dir_path ("undo"), "", before, sizeof before);
  {
    TgGraph *g2 = load (WORLD "  \"nodes\": [\n"
                        "    { \"id\": \"ramp\", \"type\": \"gen.gradient\", \"params\": { \"angle_deg\": 45 } },\n"
                        "    { \"id\": \"out_a\", \"type\": \"export.heightmap\", \"params\": { \"path\": \"a.png\" } },\n"
                        "    { \"id\": \"out_b\", \"type\": \"export.heightmap\", \"params\": { \"path\": \"sub/b.png\" } },\n"
                        "    { \"id\": \"out_n\", \"type\": \"export.heightmap\", \"params\": { \"path\": \"new/n.png\" } }\n"
                        "  ],\n"
                        "  \"links\": [ { \"from\": \"ramp.height\", \"to\": \"out_a.height\" },\n"
                        "             { \"from\": \"ramp.height\", \"to\": \"out_b.height\" },\n"
                        "             { \"from\": \"ramp.height\", \"to\": \"out_n.height\" } ]\n}\n");
    if (g2)
      {
        TG_CHECK_INT_EQ (tg_engine_export (e, g2, dir_path ("undo"), NULL, &list, NULL, &err), 0);
        tg__export_list_set_before_rename (list, unlink_staged, NULL);
        TG_CHECK_INT_EQ (tg_export_list_commit (list, &err), TG_EIO);
        tg_export_list_free (list);
        tree_state (dir_path ("undo"), "", after, sizeof after);
        TG_CHECK_MSG (strcmp (before, after) == 0, "undo changed:\n%s\n%s", before, after);
        tg_graph_free (g2);
      }
  }
  tg_graph_free (g);
  tg_engine_free (e);
}

/* This host's part of a temporary name, as tg_temp_name writes it. */
static void
this_host (char *buf, size_t size)
{
  char name[256];
  const char *p, *end;

  tg_temp_name (name, sizeof name, "x");
  p = name + strlen ("x.tmp-");
  end = strrchr (name, '-');
  while (end > p && end[-1] != '-')
    end--;
  snprintf (buf, size, "%.*s", (int) (end - 1 - p), p);
}

/* A PID no process has: a child that has been reaped. */
static long
dead_pid (void)
{
  pid_t pid = fork ();
  if (pid == 0)
    _exit (0);
  waitpid (pid, NULL, 0);
  return (long) pid;
}

/* The next build into a folder removes this host's temporaries whose
 * process is gone, in every folder it writes to, and keeps another
 * host's and a live process's. */
static void
test_build_removes_stale_temporaries (void)
{
  TgEngine *e = tg_engine_new (NULL);
  TgGraph *g = deep_graph (30);
  TgError err = { 0 };
  char host[128], name[256], tree[4096] = "";
  long dead = dead_pid ();

  if (!g)
    return;
  this_host (host, sizeof host);
  mkdir (dir_path ("stale"), 0777);
  mkdir (dir_path ("stale/sub"), 0777);
  static const char *kinds[] = { "dead", "dead", "other host", "other host", "alive", "not ours" };
  char names[6][256];
  snprintf (names[0], sizeof names[0], "stale/.a.png.tmp-%s-%ld-0", host, dead);
  snprintf (names[1], sizeof names[1], "stale/sub/.b.png.tmp-%s-%ld-7", host, dead);
  snprintf (names[2], sizeof names[2], "stale/.a.png.tmp-%s-x-%ld-0", host, dead);
  snprintf (names[3], sizeof names[3], "stale/.a.png.tmp-other-host-%ld-0", dead);
  snprintf (names[4], sizeof names[4], "stale/.a.png.tmp-%s-1-0", host);
  snprintf (names[5], sizeof names[5], "stale/keep.tmp-%s-%ld", host, dead);
  for (int i = 0; i < 6; i++)
    write_text (dir_path (names[i]), kinds[i]);
  TG_CHECK_MSG (tg_build (e, g, NULL, dir_path ("stale"), NULL, NULL, NULL, &err) == 0, "%s",
                err.message);
  for (int i = 0; i < 6; i++)
    TG_CHECK_MSG ((access (dir_path (names[i]), F_OK) == 0) == (i >= 2), "%s (%s) %s", names[i],
                  kinds[i], i >= 2 ? "removed" : "left");
  list_tree (dir_path ("stale"), "", tree, sizeof tree);
  TG_CHECK_MSG (strstr (tree, " a.png ") && strstr (tree, "manifest.json sub/ sub/b.png sub/deep/ "
                                                      "sub/deep/c.png"),
                "%s", tree);
  snprintf (name, sizeof name, "-%ld-", (long) getpid ());
  TG_CHECK_MSG (strstr (tree, name) == NULL, "the build left its own: %s", tree);

  /* A plan job's store write removes its folder's dead temporaries:
   * NAME.tmp-HOST-PID-N, not hidden. */
  {
    TgPart part = { "grid", 4 };
    mkdir (dir_path ("store"), 0777);
    snprintf (names[0], sizeof names[0], "store/3_4.grid.tmp-%s-%ld-12", host, dead);
    snprintf (names[1], sizeof names[1], "store/3_4.grid.tmp-node7-%ld-12", dead);
    write_text (dir_path (names[0]), "dead");
    write_text (dir_path (names[1]), "other host");
    TG_CHECK_INT_EQ (tg__write_parts_atomic (dir_path ("store/3_5.grid"), &part, 1, &err), 0);
    tree[0] = '\0';
    list_tree (dir_path ("store"), "", tree, sizeof tree);
    snprintf (name, sizeof name, "3_4.grid.tmp-node7-%ld-12 3_5.grid", dead);
    TG_CHECK_MSG (strcmp (tree, name) == 0, "left: %s", tree);
  }

  tg_graph_free (g);
  tg_engine_free (e);
}

/* A file and a folder of one name are refused when the graph is
 * checked, naming both export nodes. */
static void
test_file_and_folder_of_one_name_refused (void)
{
  static const char *text =
    WORLD "  \"nodes\": [\n"
    "    { \"id\": \"ramp\", \"type\": \"gen.gradient\" },\n"
    "    { \"id\": \"as_file\", \"type\": \"export.heightmap\", \"params\": { \"path\": \"a\", \"format\": \"raw16\" } },\n"
    "    { \"id\": \"in_folder\", \"type\": \"export.heightmap\", \"params\": { \"path\": \"a/h.png\" } }\n"
    "  ],\n"
    "  \"links\": [ { \"from\": \"ramp.height\", \"to\": \"as_file.height\" },\n"
    "             { \"from\": \"ramp.height\", \"to\": \"in_folder.height\" } ]\n}\n";
  TgGraph *g = NULL;
  TgError err = { 0 };

  TG_CHECK_INT_EQ (tg_tgraph_load_string (text, strlen (text), root, &g, &err), TG_EPATH);
  TG_CHECK_STR_CONTAINS (err.message, "\"as_file\"");
  TG_CHECK_STR_CONTAINS (err.message, "\"a/h.png\"");
  TG_CHECK_MSG (strcmp (err.node_id, "in_folder") == 0, "node: %s", err.node_id);
  tg_graph_free (g);
}

/* Each export's SHA-256 is taken as its writer writes it (no read back),
 * and equals the digest of the file read back; a writer that seeks
 * (OpenEXR) gets none, and its file is read back by the build. */
static void
test_exports_hashed_as_written (void)
{
  static const char *text =
    WORLD "  \"nodes\": [\n"
    "    { \"id\": \"ramp\", \"type\": \"gen.gradient\", \"params\": { \"angle_deg\": 30 } },\n"
    "    { \"id\": \"png\", \"type\": \"export.heightmap\", \"params\": { \"path\": \"h.png\" } },\n"
    "    { \"id\": \"r32\", \"type\": \"export.heightmap\", \"params\": { \"path\": \"h.r32\", \"format\": \"r32\", \"rows\": \"south_first\" } },\n"
    "    { \"id\": \"exr\", \"type\": \"export.heightmap\", \"params\": { \"path\": \"h.exr\", \"format\": \"exr\" } }\n"
    "  ],\n"
    "  \"links\": [ { \"from\": \"ramp.height\", \"to\": \"png.height\" },\n"
    "             { \"from\": \"ramp.height\", \"to\": \"r32.height\" },\n"
    "             { \"from\": \"ramp.height\", \"to\": \"exr.height\" } ]\n}\n";
  TgEngine *e = tg_engine_new (NULL);
  TgGraph *g = load (text);
  TgExportList *list = NULL;
  TgError err = { 0 };
  int hashed = 0;

  TG_CHECK_MSG (tg_engine_export (e, g, dir_path ("hashed"), NULL, &list, NULL, &err) == 0, "%s",
                err.message);
  TG_CHECK_INT_EQ (list ? tg_export_list_n_files (list) : 0, 3);
  for (int i = 0; list && i < tg_export_list_n_files (list); i++)
    {
      const TgExportFile *f = tg_export_list_file (list, i);
      bool is_exr = strcmp (f->format, "exr") == 0;
      uint8_t d[32];
      uint64_t bytes = 0, read_bytes = 0;
      char hex[65], read_hex[65];
      bool has = tg_export_list_digest (list, i, d, &bytes);

      TG_CHECK_MSG (has == !is_exr, "%s: digest taken while writing: %d", f->path, has);
      TG_CHECK_INT_EQ (tg__sha256_export_file (list, i, NULL, read_hex, &read_bytes, &err), 0);
      TG_CHECK_INT_EQ (tg__sha256_staged (list, i, NULL, hex, &bytes, &err), 0);
      TG_CHECK_MSG (strcmp (hex, read_hex) == 0, "%s: %s, read back %s", f->path, hex, read_hex);
      TG_CHECK_INT_EQ ((long long) bytes, (long long) read_bytes);
      if (strcmp (f->format, "r32") == 0)
        TG_CHECK_INT_EQ ((long long) bytes, 33LL * 17 * 4);
      hashed += has;
    }
  TG_CHECK_INT_EQ (hashed, 2);
  tg_export_list_free (list);
  tg_graph_free (g);
  tg_engine_free (e);
}

/* One spelling for a small PNG: the writer "png16.small" is "format":
 * "png16" with "compression": "small" in a file; a manifest that an older
 * tgraph wrote with the writer's name reads as the same format. */
static void
test_manifest_format_one_spelling (void)
{
  const char *sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  char text[1024];
  const char *compression;
  TgManifest m;
  TgError err = { 0 };

  TG_CHECK (strcmp (tg__writer_format ("png16.small", &compression), "png16") == 0);
  TG_CHECK (compression && strcmp (compression, "small") == 0);
  TG_CHECK (strcmp (tg__writer_format ("png8", &compression), "png8") == 0 && !compression);
  TG_CHECK (strcmp (tg__writer_format ("glb", &compression), "glb") == 0 && !compression);
  TG_CHECK (strcmp (tg__format_writer ("png8", "small"), "png8.small") == 0);
  TG_CHECK (strcmp (tg__format_writer ("png16", NULL), "png16") == 0);
  TG_CHECK (tg__format_writer ("exr", "small") == NULL);

  TG_CHECK (mkdir (dir_path ("old_manifest"), 0777) == 0);
  snprintf (text, sizeof text,
            "{ \"files\": [\n"
            "  { \"path\": \"a.png\", \"bytes\": 9, \"sha256\": \"%s\", \"format\": \"png16.small\","
            " \"node\": \"a\", \"resolution\": [3, 3] },\n"
            "  { \"path\": \"b.png\", \"bytes\": 9, \"sha256\": \"%s\", \"format\": \"png16\","
            " \"compression\": \"small\", \"node\": \"b\", \"resolution\": [3, 3] }\n] }\n",
            sha, sha);
  write_text (dir_path ("old_manifest/manifest.json"), text);
  TG_CHECK_MSG (tg_manifest_read (dir_path ("old_manifest"), &m, &err) == 0, "%s", err.message);
  if (m.n_files == 2)
    {
      TG_CHECK (strcmp (m.files[0].format, "png16") == 0);
      TG_CHECK (strcmp (m.files[1].format, "png16") == 0);
      TG_CHECK (tg_grid_format_readable (m.files[0].format));
    }
  else
    TG_CHECK_INT_EQ (m.n_files, 2);
  tg_manifest_clear (&m);
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
  TG_RUN (test_build_refuses_links_below_output_folder);
  TG_RUN (test_commit_link_swapped_in);
  TG_RUN (test_commit_failure_leaves_folder_as_it_was);
  TG_RUN (test_build_removes_stale_temporaries);
  TG_RUN (test_file_and_folder_of_one_name_refused);
  TG_RUN (test_exports_hashed_as_written);
  TG_RUN (test_manifest_format_one_spelling);
  return tgtest_result ();
}
