/* Evaluation: pulls, the cache, determinism across threads and tiles,
 * apron and global nodes, per-node failures, cancel, staged exports. */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <sys/stat.h>

#include "tgtest.h"
#include "test_nodes.h"

static TgGraph *
graph_with (const char *const *types, int n)
{
  TgGraph *g = tg_graph_new ();
  TgError err = { 0 };
  char id[16], prev[16];
  tg_graph_world (g)->resolution = 97;
  tg_graph_world (g)->size_x = 960;
  tg_graph_world (g)->size_z = 640;
  for (int i = 0; i < n; i++)
    {
      snprintf (id, sizeof id, "n%d", i);
      TG_CHECK (tg_graph_add_node (g, id, types[i], &err) == i);
      if (i > 0)
        TG_CHECK (tg_graph_add_link (g, prev, "height", id, "height", &err) >= 0);
      memcpy (prev, id, sizeof id);
    }
  return g;
}

static TgValue *
pull (TgEngine *e, const TgGraph *g, int node, const TgRegion *r, TgEvalReport *rep)
{
  TgValue *v = NULL;
  TgError err = { 0 };
  int rc = tg_engine_pull (e, g, node, 0, r, NULL, &v, rep, &err);
  TG_CHECK_MSG (rc == 0, "%s: %s", err.path, err.message);
  return v;
}

static bool
same_window (const TgValue *whole, const TgValue *tile)
{
  const TgRegion *t = &tile->region;
  for (int y = 0; y < t->height; y++)
    if (memcmp (tg_value_row (tile, y),
                tg_value_row (whole, t->row0 - whole->region.row0 + y) + (t->col0 - whole->region.col0),
                sizeof (float) * (size_t) t->width) != 0)
      return false;
  return true;
}

static void
test_second_pull_computes_nothing (void)
{
  const char *types[] = { "test.coord", "test.add", "test.add" };
  TgGraph *g = graph_with (types, 3);
  TgEngine *e = tg_engine_new (NULL);
  TgEvalReport rep;
  TgRegion r;
  TgValue *a, *b;
  TgParamValue v = { .type = TG_PARAM_FLOAT, .f = 0.25 };
  TgError err = { 0 };

  tg_region_for_world (&r, tg_graph_world (g), 97);
  atomic_store (&test_coord_evals, 0);
  a = pull (e, g, 2, &r, &rep);
  TG_CHECK_INT_EQ (rep.n_computed, 3);
  TG_CHECK_INT_EQ (rep.n_cached, 0);
  TG_CHECK (rep.state[0] == TG_NODE_DONE);
  tg_eval_report_clear (&rep);
  b = pull (e, g, 2, &r, &rep);
  TG_CHECK_INT_EQ (rep.n_computed, 0);
  TG_CHECK_INT_EQ (rep.n_cached, 1); /* the top hit: nothing upstream was touched */
  TG_CHECK (rep.state[0] == TG_NODE_IDLE);
  TG_CHECK (memcmp (a->data, b->data, tg_region_samples (&r) * sizeof (float)) == 0);
  TG_CHECK_INT_EQ (atomic_load (&test_coord_evals), 1);
  tg_eval_report_clear (&rep);
  tg_value_unref (b);

  /* An edit recomputes the edited node and what lies downstream only. */
  TG_CHECK_INT_EQ (tg_graph_set_param (g, 1, "amount", &v, &err), 0);
  b = pull (e, g, 2, &r, &rep);
  TG_CHECK_INT_EQ (rep.n_computed, 2);
  TG_CHECK_INT_EQ (rep.n_cached, 1);
  TG_CHECK (rep.state[0] == TG_NODE_CACHED);
  TG_CHECK_NEAR (b->data[5], a->data[5] - 0.75, 1e-5);
  TG_CHECK_INT_EQ (atomic_load (&test_coord_evals), 1);
  tg_eval_report_clear (&rep);
  /* The world seed is part of every key. */
  tg_graph_world (g)->seed = 99;
  tg_value_unref (pull (e, g, 2, &r, &rep));
  TG_CHECK_INT_EQ (rep.n_computed, 3);
  tg_eval_report_clear (&rep);
  tg_value_unref (a);
  tg_value_unref (b);
  TG_CHECK (tg_engine_cache_bytes (e) > 0);
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_threads_and_tiles_identical (void)
{
  const char *types[] = { "test.coord", "test.blur", "test.add", "test.blur" };
  TgGraph *g = graph_with (types, 4);
  TgEngine *e1, *e4;
  TgEngineOptions o1 = { .threads = 1 }, o4 = { .threads = 4 };
  TgRegion r;
  TgValue *w1, *w4;

  e1 = tg_engine_new (&o1);
  e4 = tg_engine_new (&o4);
  TG_CHECK_INT_EQ (tg_engine_threads (e4), 4);
  tg_region_for_world (&r, tg_graph_world (g), 97);
  w1 = pull (e1, g, 3, &r, NULL);
  w4 = pull (e4, g, 3, &r, NULL);
  TG_CHECK (memcmp (w1->data, w4->data, tg_region_samples (&r) * sizeof (float)) == 0);
  /* 2 x 2 tiles of uneven size, each from a fresh engine, equal the whole
   * map's windows, apron nodes included. */
  for (int ty = 0; ty < 2; ty++)
    for (int tx = 0; tx < 2; tx++)
      {
        int c0 = tx ? 41 : 0, r0 = ty ? 30 : 0;
        TgRegion t = tg_region_window (&r, c0, r0, tx ? r.full_w - 41 : 41, ty ? r.full_h - 30 : 30);
        TgEngine *et = tg_engine_new (&o4);
        TgValue *v = pull (et, g, 3, &t, NULL);
        TG_CHECK_MSG (v && same_window (w1, v), "tile %d,%d differs", tx, ty);
        tg_value_unref (v);
        tg_engine_free (et);
      }
  tg_value_unref (w1);
  tg_value_unref (w4);
  tg_engine_free (e1);
  tg_engine_free (e4);
  tg_graph_free (g);
}

static void
test_global_node_sees_whole_map (void)
{
  const char *types[] = { "test.coord", "test.center", "test.blur" };
  TgGraph *g = graph_with (types, 3);
  TgEngine *e = tg_engine_new (NULL);
  TgRegion r, t;
  TgValue *whole, *tile;
  double s = 0;

  tg_region_for_world (&r, tg_graph_world (g), 97);
  whole = pull (e, g, 1, &r, NULL);
  for (uint64_t i = 0; i < tg_region_samples (&r); i++)
    s += whole->data[i];
  TG_CHECK_NEAR (s / (double) tg_region_samples (&r), 0.0, 1e-4);
  /* A tile of a global node is the window of the whole result... */
  t = tg_region_window (&r, 10, 5, 20, 30);
  tile = pull (e, g, 1, &t, NULL);
  TG_CHECK (tile && same_window (whole, tile));
  tg_value_unref (tile);
  tg_value_unref (whole);
  /* ...and an apron below it at the world's edge gets clamped samples. */
  whole = pull (e, g, 2, &r, NULL);
  t = tg_region_window (&r, 0, 0, 16, 16);
  tile = pull (e, g, 2, &t, NULL);
  TG_CHECK (tile && same_window (whole, tile));
  tg_value_unref (tile);
  tg_value_unref (whole);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* An apron node that closes the world's edge (TG_NODE_APRON_IN_WORLD)
 * gets its grown region cut at the edge: test.edge_box's apron of 300
 * cells is 7 times the 97 x 65 world, and it fails unless its input is
 * exactly the cut region.  The whole map, tiles on edges and corners and
 * a plain apron reader below it (which asks it for samples beyond the
 * edge) agree. */
static void
test_apron_cut_at_world_edge (void)
{
  const char *types[] = { "test.coord", "test.edge_box", "test.blur" };
  TgGraph *g = graph_with (types, 3);
  TgEngine *e = tg_engine_new (NULL);
  TgRegion r, tiles[3];
  TgValue *whole, *blurred;

  tg_region_for_world (&r, tg_graph_world (g), 97);
  tiles[0] = tg_region_window (&r, 0, 0, 16, 16);
  tiles[1] = tg_region_window (&r, 40, 20, 30, 25);
  tiles[2] = tg_region_window (&r, 60, 30, 37, 35);
  whole = pull (e, g, 1, &r, NULL);
  blurred = pull (e, g, 2, &r, NULL);
  for (int k = 0; k < 3 && whole && blurred; k++)
    {
      TgEngine *et = tg_engine_new (NULL);
      TgValue *a = pull (et, g, 1, &tiles[k], NULL), *b = pull (et, g, 2, &tiles[k], NULL);
      TG_CHECK_MSG (a && same_window (whole, a), "edge_box tile %d differs", k);
      TG_CHECK_MSG (b && same_window (blurred, b), "blur tile %d differs", k);
      tg_value_unref (a);
      tg_value_unref (b);
      tg_engine_free (et);
    }
  tg_value_unref (whole);
  tg_value_unref (blurred);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* The point- and area-filter bases: inputs read over the output's rows
 * (an unlinked optional one as NULL), the channels asked for, and the
 * same bytes as the hand-written loops of test.blur. */
static void
test_map_rows (void)
{
  const char *types[] = { "test.coord", "test.mix" };
  const char *blur[] = { "test.coord", "test.blur" };
  TgGraph *g = graph_with (types, 2), *gb = graph_with (blur, 2);
  TgEngine *e = tg_engine_new (NULL);
  TgError err = { 0 };
  TgRegion r, t;
  TgValue *coord, *mix, *a, *b;

  tg_region_for_world (&r, tg_graph_world (g), 97);
  t = tg_region_window (&r, 10, 5, 20, 30);
  coord = pull (e, g, 0, &t, NULL);
  mix = pull (e, g, 1, &t, NULL);
  TG_CHECK_INT_EQ (mix->channels, 2);
  for (int y = 0; y < t.height; y++)
    for (int x = 0; x < t.width; x++)
      {
        TG_CHECK (tg_value_row (mix, y)[2 * x] == tg_value_row (coord, y)[x]);
        TG_CHECK (tg_value_row (mix, y)[2 * x + 1] == (float) y);
      }
  tg_value_unref (mix);
  TG_CHECK (tg_graph_add_link (g, "n0", "height", "n1", "detail", &err) >= 0);
  mix = pull (e, g, 1, &t, NULL);
  for (int y = 0; y < t.height; y++)
    for (int x = 0; x < t.width; x++)
      TG_CHECK (tg_value_row (mix, y)[2 * x]
                == tg_value_row (coord, y)[x] + 10.0f * tg_value_row (coord, y)[x]);
  tg_value_unref (mix);
  tg_value_unref (coord);

  /* test.box (the base) beside test.blur (a loop of its own) on the
   * same input: the same bytes, over a tile and at the world's edge. */
  TG_CHECK (tg_graph_add_node (gb, "box", "test.box", &err) == 2);
  TG_CHECK (tg_graph_add_link (gb, "n0", "height", "box", "height", &err) >= 0);
  a = pull (e, gb, 1, &t, NULL);
  b = pull (e, gb, 2, &t, NULL);
  TG_CHECK (memcmp (a->data, b->data, tg_region_samples (&t) * sizeof (float)) == 0);
  tg_value_unref (a);
  tg_value_unref (b);
  a = pull (e, gb, 1, &r, NULL);
  b = pull (e, gb, 2, &r, NULL);
  TG_CHECK (memcmp (a->data, b->data, tg_region_samples (&r) * sizeof (float)) == 0);
  tg_value_unref (a);
  tg_value_unref (b);
  tg_engine_free (e);
  tg_graph_free (gb);
  tg_graph_free (g);
}

static void
test_failure_is_per_node (void)
{
  const char *types[] = { "test.coord", "test.fail", "test.add" };
  TgGraph *g = graph_with (types, 3);
  TgEngine *e = tg_engine_new (NULL);
  TgEvalReport rep;
  TgRegion r;
  TgValue *v = NULL;
  TgError err = { 0 };

  tg_region_for_world (&r, tg_graph_world (g), 97);
  TG_CHECK_INT_EQ (tg_engine_pull (e, g, 2, 0, &r, NULL, &v, &rep, &err), TG_EEVAL);
  TG_CHECK (v == NULL);
  TG_CHECK (strcmp (err.path, "nodes[1]") == 0);
  TG_CHECK (strcmp (err.message, "node \"n1\" (test.fail): the test node always fails") == 0);
  TG_CHECK (rep.state[0] == TG_NODE_DONE);
  TG_CHECK (rep.state[1] == TG_NODE_FAILED);
  TG_CHECK (rep.state[2] == TG_NODE_SKIPPED);
  TG_CHECK_INT_EQ (tg_eval_report_first_failure (&rep), 1);
  TG_CHECK (rep.message[1] && strcmp (rep.message[1], "the test node always fails") == 0);
  tg_eval_report_clear (&rep);
  /* The good branch still previews. */
  v = pull (e, g, 0, &r, NULL);
  TG_CHECK (v != NULL);
  tg_value_unref (v);
  tg_engine_free (e);
  tg_graph_free (g);
}

typedef struct
{
  TgCancel *cancel;
  long long started;
  int running_reports;
} CancelState;

static void
cancel_on_progress (void *user, int node, TgNodeState s, double f)
{
  CancelState *cs = user;
  if (s == TG_NODE_RUNNING && f > 0.05)
    {
      cs->running_reports++;
      tg_cancel_request (cs->cancel);
    }
}

static void
test_cancel_answers_quickly (void)
{
  const char *types[] = { "test.slow", "test.add" };
  TgGraph *g = graph_with (types, 2);
  TgEngineOptions o = { .threads = 2, .cache_bytes = 0 };
  TgEngine *e = tg_engine_new (&o);
  CancelState cs = { tg_cancel_new (), 0, 0 };
  TgEvalHooks hooks = { .progress = cancel_on_progress, .user = &cs, .cancel = cs.cancel };
  TgEvalReport rep;
  TgRegion r;
  TgValue *v = NULL;
  TgError err = { 0 };
  struct timespec t0, t1;

  tg_region_for_world (&r, tg_graph_world (g), 97);
  r = tg_region_window (&r, 0, 0, 400, 400); /* about 2 s of work uncancelled */
  clock_gettime (CLOCK_MONOTONIC, &t0);
  TG_CHECK_INT_EQ (tg_engine_pull (e, g, 1, 0, &r, &hooks, &v, &rep, &err), TG_ECANCELLED);
  clock_gettime (CLOCK_MONOTONIC, &t1);
  TG_CHECK (v == NULL);
  TG_CHECK (cs.running_reports > 0);
  TG_CHECK (rep.state[0] == TG_NODE_CANCELLED);
  TG_CHECK_INT_EQ (err.code, TG_ECANCELLED);
  fprintf (stderr, "cancelled after %.3f s\n",
           (double) (t1.tv_sec - t0.tv_sec) + 1e-9 * (double) (t1.tv_nsec - t0.tv_nsec));
  tg_eval_report_clear (&rep);
  /* Nothing half-done was cached: a fresh pull computes it fully. */
  tg_cancel_reset (cs.cancel);
  hooks.progress = NULL;
  r = tg_region_window (&r, 0, 0, 8, 8);
  TG_CHECK_INT_EQ (tg_engine_pull (e, g, 1, 0, &r, &hooks, &v, &rep, &err), 0);
  TG_CHECK_INT_EQ (rep.n_computed, 2);
  tg_value_unref (v);
  tg_eval_report_clear (&rep);
  tg_cancel_free (cs.cancel);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* The program's test folder (tgtest_tmpdir, made in main, removed at exit). */
static const char *tmp_root;

/* A fresh empty folder NAME inside it, for one test; false when it
 * cannot be made. */
static bool
make_test_dir (char *dir, size_t size, const char *name)
{
  return tmp_root && snprintf (dir, size, "%s/%s", tmp_root, name) < (int) size
         && mkdir (dir, 0700) == 0;
}

static int
count_entries (const char *dir)
{
  DIR *d = opendir (dir);
  struct dirent *de;
  int n = 0;
  if (d == NULL)
    return -1;
  while ((de = readdir (d)))
    if (strcmp (de->d_name, ".") && strcmp (de->d_name, ".."))
      n++;
  closedir (d);
  return n;
}

static void
test_export_all_or_nothing (void)
{
  const char *types[] = { "test.coord", "test.add", "test.sink" };
  TgGraph *g = graph_with (types, 3);
  TgEngine *e = tg_engine_new (NULL);
  TgExportList *list;
  TgEvalReport rep;
  TgError err = { 0 };
  char dir[512];
  char path[1024];
  struct stat st;
  TgParamValue p = { .type = TG_PARAM_OUTPUT_PATH, .s = "maps/h.bin" };

  TG_CHECK (make_test_dir (dir, sizeof dir, "all-or-nothing"));
  tg_io_register_image_writer ("testfmt", testfmt_write);
  TG_CHECK_INT_EQ (tg_graph_set_param (g, 2, "path", &p, &err), 0);
  TG_CHECK_INT_EQ (tg_engine_export (e, g, dir, NULL, &list, &rep, &err), 0);
  TG_CHECK_INT_EQ (tg_export_list_n_files (list), 1);
  snprintf (path, sizeof path, "%s/maps/h.bin", dir);
  TG_CHECK (stat (path, &st) != 0); /* staged, not visible yet */
  /* The sync before commit stops at a cancel, and commits nothing. */
  {
    TgCancel *stop = tg_cancel_new ();
    tg_cancel_request (stop);
    TG_CHECK_INT_EQ (tg_export_list_sync (list, 0, stop, &err), TG_ECANCELLED);
    TG_CHECK (stat (path, &st) != 0);
    TG_CHECK_INT_EQ (tg_export_list_sync (list, 0, NULL, &err), 0);
    tg_cancel_free (stop);
  }
  TG_CHECK_INT_EQ (tg_export_list_commit (list, &err), 0);
  TG_CHECK (stat (path, &st) == 0 && st.st_size == 97 * 65);
  TG_CHECK_INT_EQ (tg_export_list_file (list, 0)->bytes, 97 * 65);
  TG_CHECK (strcmp (tg_export_list_file (list, 0)->node_id, "n2") == 0);
  tg_export_list_free (list);
  tg_eval_report_clear (&rep);
  snprintf (path, sizeof path, "%s/maps", dir);
  TG_CHECK_INT_EQ (count_entries (path), 1);

  /* A second sink on a failing branch: nothing of the good one appears. */
  {
    TgError e2 = { 0 };
    TgParamValue q = { .type = TG_PARAM_OUTPUT_PATH, .s = "b.bin" };
    tg_graph_add_node (g, "bad", "test.fail", &e2);
    tg_graph_add_node (g, "s2", "test.sink", &e2);
    tg_graph_add_link (g, "n1", "height", "bad", "height", &e2);
    tg_graph_add_link (g, "bad", "height", "s2", "height", &e2);
    tg_graph_set_param (g, 4, "path", &q, &e2);
    p.s = "fresh.bin";
    tg_graph_set_param (g, 2, "path", &p, &e2);
  }
  TG_CHECK_INT_EQ (tg_engine_export (e, g, dir, NULL, &list, &rep, &err), TG_EEVAL);
  TG_CHECK (strcmp (err.path, "nodes[3]") == 0);
  TG_CHECK (list == NULL);
  TG_CHECK (rep.state[2] == TG_NODE_DONE && rep.state[4] == TG_NODE_SKIPPED);
  TG_CHECK_INT_EQ (count_entries (dir), 1); /* only maps/ from before */
  tg_eval_report_clear (&rep);

  /* An unsafe path is refused before anything runs. */
  tg_graph_remove_node (g, 4);
  tg_graph_remove_node (g, 3);
  {
    TgGraph *bad = tg_graph_copy (g);
    /* set_param refuses it, so poke the copy's value through a fresh set on a
       valid path and check validate on a hand-made unsafe value instead */
    TgParamValue u = { .type = TG_PARAM_OUTPUT_PATH, .s = "../escape.bin" };
    TG_CHECK_INT_EQ (tg_graph_set_param (bad, 2, "path", &u, &err), TG_EPATH);
    TG_CHECK_STR_CONTAINS (err.message, "must be relative to the output folder");
    tg_graph_free (bad);
  }
  TG_CHECK_INT_EQ (count_entries (dir), 1);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* What a writer saw of tg_io_stream_cancelled, before and after the
 * build's cancel was asked (from inside the writer, as a user would while
 * it prepares), and for a stream that is not the build's. */
static struct
{
  TgCancel *cancel;
  int before, after, other;
} probe;

static int
probe_write (FILE *f, const TgImage *img, TgError *err)
{
  (void) img;
  probe.before = tg_io_stream_cancelled (f);
  tg_cancel_request (probe.cancel);
  probe.after = tg_io_stream_cancelled (f);
  probe.other = tg_io_stream_cancelled (stderr);
  return probe.after ? tg_error_set (err, TG_ECANCELLED, "", "cancelled") : 0;
}

static void
test_writer_sees_cancel_before_writing (void)
{
  const char *types[] = { "test.coord", "test.sink" };
  TgGraph *g = graph_with (types, 2);
  TgEngine *e = tg_engine_new (NULL);
  TgEvalHooks hooks = { 0 };
  TgExportList *list = NULL;
  TgEvalReport rep;
  TgError err = { 0 };
  char dir[512];

  TG_CHECK (make_test_dir (dir, sizeof dir, "writer-cancel"));
  probe.cancel = tg_cancel_new ();
  probe.before = probe.after = probe.other = -1;
  hooks.cancel = probe.cancel;
  tg_io_register_image_writer ("testfmt", probe_write);
  TG_CHECK_INT_EQ (tg_engine_export (e, g, dir, &hooks, &list, &rep, &err), TG_ECANCELLED);
  tg_io_register_image_writer ("testfmt", testfmt_write);
  TG_CHECK_INT_EQ (probe.before, 0);
  TG_CHECK_INT_EQ (probe.after, 1);
  TG_CHECK_INT_EQ (probe.other, 0);
  TG_CHECK (list == NULL);
  TG_CHECK_INT_EQ (count_entries (dir), 0);
  tg_eval_report_clear (&rep);
  tg_cancel_free (probe.cancel);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* What tg_io_stream_parallel did for a writer: which thread ran each
 * item, how often, and what it returned for the build's stream and for
 * another one. */
#define LEND_ITEMS 32
static struct
{
  pthread_t who[LEND_ITEMS], writer;
  atomic_int runs[LEND_ITEMS], started;
  int rc_build, rc_other, other_in_order;
  int other_next;
} lend;

/* Each item waits (2 s at most) until a second one has started, so a
 * second thread, when the build has one, takes an item however loaded
 * the machine. */
static void
lend_item (void *user, int begin, int end)
{
  struct timespec t0, t;

  (void) user;
  atomic_fetch_add (&lend.started, 1);
  clock_gettime (CLOCK_MONOTONIC, &t0);
  do
    clock_gettime (CLOCK_MONOTONIC, &t);
  while (atomic_load (&lend.started) < 2
         && (t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 2000000000L);
  for (int i = begin; i < end; i++)
    {
      lend.who[i] = pthread_self ();
      atomic_fetch_add (&lend.runs[i], 1);
    }
}

static void
lend_other (void *user, int begin, int end)
{
  (void) user;
  for (int i = begin; i < end; i++)
    lend.other_in_order &= i == lend.other_next++ && pthread_equal (pthread_self (), lend.writer);
}

static int
lend_write (FILE *f, const TgImage *img, TgError *err)
{
  lend.writer = pthread_self ();
  lend.rc_build = tg_io_stream_parallel (f, LEND_ITEMS, lend_item, NULL);
  /* Not a build's stream: here, in order. */
  lend.other_in_order = 1;
  lend.other_next = 0;
  lend.rc_other = tg_io_stream_parallel (stderr, LEND_ITEMS, lend_other, NULL);
  return testfmt_write (f, img, err);
}

static void
test_writer_runs_on_build_threads (void)
{
  const char *types[] = { "test.coord", "test.sink" };
  TgGraph *g = graph_with (types, 2);
  TgEngineOptions o = { .threads = 2 };
  TgEngine *e = tg_engine_new (&o);
  TgExportList *list = NULL;
  TgError err = { 0 };
  char dir[512];
  int threads = 1;

  TG_CHECK (make_test_dir (dir, sizeof dir, "writer-threads"));
  memset (&lend, 0, sizeof lend);
  lend.rc_build = lend.rc_other = -1;
  tg_io_register_image_writer ("testfmt", lend_write);
  TG_CHECK_INT_EQ (tg_engine_export (e, g, dir, NULL, &list, NULL, &err), 0);
  tg_io_register_image_writer ("testfmt", testfmt_write);
  TG_CHECK_INT_EQ (lend.rc_build, 0);
  TG_CHECK_INT_EQ (lend.rc_other, 0);
  TG_CHECK_MSG (lend.other_in_order, "another stream's items ran out of order or elsewhere");
  for (int i = 0; i < LEND_ITEMS; i++)
    {
      TG_CHECK_INT_EQ (atomic_load (&lend.runs[i]), 1);
      if (!pthread_equal (lend.who[i], lend.who[0]))
        threads = 2;
    }
  TG_CHECK_MSG (threads == 2, "every item of the build's stream ran on one thread");
  tg_export_list_free (list);
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_exports_share_upstream (void)
{
  const char *types[] = { "test.coord", "test.blur", "test.sink" };
  TgGraph *g = graph_with (types, 3);
  TgEngineOptions o = { .threads = 1, .cache_bytes = 4096 }; /* a cache too small to hold anything */
  TgEngine *e = tg_engine_new (&o);
  TgExportList *list;
  TgEvalReport rep;
  TgError err = { 0 };
  char dir[512];
  TgParamValue p = { .type = TG_PARAM_OUTPUT_PATH, .s = "second.bin" };

  TG_CHECK (make_test_dir (dir, sizeof dir, "share-upstream"));
  tg_io_register_image_writer ("testfmt", testfmt_write);
  tg_graph_add_node (g, "s2", "test.sink", &err);
  tg_graph_add_node (g, "s3", "test.sink", &err);
  tg_graph_add_link (g, "n1", "height", "s2", "height", &err);
  tg_graph_add_link (g, "n0", "height", "s3", "height", &err);
  tg_graph_set_param (g, 3, "path", &p, &err);
  p.s = "third.bin";
  tg_graph_set_param (g, 4, "path", &p, &err);
  atomic_store (&test_coord_evals, 0);
  TG_CHECK_INT_EQ (tg_engine_export (e, g, dir, NULL, &list, &rep, &err), 0);
  TG_CHECK_INT_EQ (tg_export_list_n_files (list), 3);
  /* Each upstream node ran once for all three exports. */
  TG_CHECK_INT_EQ (atomic_load (&test_coord_evals), 1);
  TG_CHECK_INT_EQ (rep.n_computed, 5);
  TG_CHECK_INT_EQ (tg_export_list_commit (list, &err), 0);
  tg_export_list_free (list);
  tg_eval_report_clear (&rep);
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
write_file (const char *path, const char *text)
{
  FILE *f = fopen (path, "w");
  TG_CHECK (f != NULL);
  if (f)
    {
      fputs (text, f);
      fclose (f);
    }
}

/* Editing a file a node names through input_files recomputes it. */
static void
test_input_files_join_the_key (void)
{
  TgGraph *g = tg_graph_new ();
  TgEngine *e = tg_engine_new (NULL);
  TgEvalReport rep;
  TgError err = { 0 };
  TgValue *v = NULL;
  TgRegion r;
  char dir[512], path[1024];
  int n;

  TG_CHECK (make_test_dir (dir, sizeof dir, "input-files"));
  tg_graph_set_base_dir (g, dir);
  n = tg_graph_add_node (g, "f", "test.files", &err);
  snprintf (path, sizeof path, "%s/data_2", dir);
  write_file (path, "one");
  tg_region_for_world (&r, tg_graph_world (g), 9);
  TG_CHECK_INT_EQ (tg_engine_pull (e, g, n, 0, &r, NULL, &v, &rep, &err), 0);
  TG_CHECK_INT_EQ (rep.n_computed, 1);
  tg_value_unref (v);
  tg_eval_report_clear (&rep);
  TG_CHECK_INT_EQ (tg_engine_pull (e, g, n, 0, &r, NULL, &v, &rep, &err), 0);
  TG_CHECK_INT_EQ (rep.n_computed, 0);
  tg_value_unref (v);
  tg_eval_report_clear (&rep);
  write_file (path, "a longer text"); /* another size, whatever the clock */
  TG_CHECK_INT_EQ (tg_engine_pull (e, g, n, 0, &r, NULL, &v, &rep, &err), 0);
  TG_CHECK_INT_EQ (rep.n_computed, 1);
  tg_value_unref (v);
  tg_eval_report_clear (&rep);
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_pull_of_export_node_refused (void)
{
  const char *types[] = { "test.coord", "test.sink" };
  TgGraph *g = graph_with (types, 2);
  TgEngine *e = tg_engine_new (NULL);
  TgError err = { 0 };
  TgValue *v = NULL;
  TgRegion r;

  /* An export node has no outputs to preview, and a pull never writes. */
  tg_region_for_world (&r, tg_graph_world (g), 97);
  TG_CHECK_INT_EQ (tg_engine_pull (e, g, 1, 0, &r, NULL, &v, NULL, &err), TG_EINVAL);
  TG_CHECK (v == NULL);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* A chain of links deeper than TG_GRAPH_MAX_DEPTH is refused with an
 * error naming the links, not a stack overflow; one just inside it
 * evaluates. */
static void
test_deep_chain (void)
{
  int n = TG_GRAPH_MAX_DEPTH + 10;
  const char **types = malloc (sizeof (char *) * (size_t) n);
  TgGraph *g;
  TgEngine *e = tg_engine_new (NULL);
  TgValue *v = NULL;
  TgError err = { 0 };
  TgRegion r;
  int rc;

  for (int i = 0; i < n; i++)
    types[i] = i == 0 ? "test.coord" : "test.add";
  g = graph_with (types, n);
  tg_graph_world (g)->resolution = 3;
  tg_region_for_world (&r, tg_graph_world (g), 3);
  rc = tg_engine_pull (e, g, n - 1, 0, &r, NULL, &v, NULL, &err);
  TG_CHECK_INT_EQ (rc, TG_ERANGE);
  TG_CHECK (v == NULL);
  TG_CHECK (strcmp (err.path, "links") == 0);
  TG_CHECK_STR_CONTAINS (err.message, "too deep");
  /* The node TG_GRAPH_MAX_DEPTH - 1 links down the chain is fine. */
  v = pull (e, g, TG_GRAPH_MAX_DEPTH - 1, &r, NULL);
  TG_CHECK (v != NULL);
  tg_value_unref (v);
  tg_engine_free (e);
  tg_graph_free (g);
  free (types);
}

static bool
same_values (const TgValue *a, const TgValue *b)
{
  return a && b && tg_region_equal (&a->region, &b->region)
         && memcmp (a->data, b->data, tg_region_samples (&a->region) * sizeof (float)) == 0;
}

/* A bypassed node passes its main input through: coord -> add (bypassed)
 * -> blur gives coord -> blur's bytes, whole or tiled; the flag is part of
 * the key (toggling it recomputes, toggling back finds the cache); a
 * bypassed node that would fail does not run; a node with no input of its
 * output's type is refused, naming ui.bypass. */
static void
test_bypass_passes_main_input (void)
{
  const char *with[] = { "test.coord", "test.add", "test.blur" };
  const char *without[] = { "test.coord", "test.blur" };
  TgGraph *g = graph_with (with, 3), *ref = graph_with (without, 2);
  TgEngine *e = tg_engine_new (NULL);
  TgEvalReport rep;
  TgRegion r, t;
  TgValue *a, *b, *c, *tile;
  TgError err = { 0 };

  tg_region_for_world (&r, tg_graph_world (g), 97);
  a = pull (e, g, 2, &r, NULL);
  tg_graph_set_node_bypass (g, 1, true);
  TG_CHECK (tg_graph_node_bypass (g, 1));
  TG_CHECK_INT_EQ (tg_node_desc_bypass_input (tg_graph_node_desc (g, 1)), 0);
  b = pull (e, g, 2, &r, &rep);
  TG_CHECK_INT_EQ (rep.n_computed, 2); /* the bypassed add and the blur; coord was cached */
  TG_CHECK (rep.state[1] == TG_NODE_DONE);
  tg_eval_report_clear (&rep);
  c = pull (e, ref, 1, &r, NULL);
  TG_CHECK (!same_values (a, b));
  TG_CHECK (same_values (b, c));
  t = tg_region_window (&r, 30, 20, 25, 17);
  {
    TgEngine *et = tg_engine_new (NULL);
    tile = pull (et, g, 2, &t, NULL);
    TG_CHECK (tile && same_window (b, tile));
    tg_value_unref (tile);
    tg_engine_free (et);
  }
  tg_graph_set_node_bypass (g, 1, false);
  tg_value_unref (pull (e, g, 2, &r, &rep));
  TG_CHECK_INT_EQ (rep.n_computed, 0);
  tg_eval_report_clear (&rep);
  tg_value_unref (a);
  tg_value_unref (b);
  tg_value_unref (c);
  tg_graph_free (g);

  /* A failing node, bypassed, does not run. */
  {
    const char *failing[] = { "test.coord", "test.fail" };
    g = graph_with (failing, 2);
    tg_graph_set_node_bypass (g, 1, true);
    a = pull (e, g, 1, &r, NULL);
    b = pull (e, g, 0, &r, NULL);
    TG_CHECK (same_values (a, b));
    tg_value_unref (a);
    tg_value_unref (b);
    tg_graph_free (g);
  }
  /* A global node, bypassed, is local: a tile is the input's window. */
  {
    const char *global[] = { "test.coord", "test.center" };
    g = graph_with (global, 2);
    tg_graph_set_node_bypass (g, 1, true);
    TG_CHECK (tg_graph_node_locality (g, 1) == TG_LOCALITY_LOCAL);
    a = pull (e, g, 0, &r, NULL);
    tile = pull (e, g, 1, &t, NULL);
    TG_CHECK (tile && tg_region_equal (&tile->region, &t) && same_window (a, tile));
    tg_value_unref (tile);
    tg_value_unref (a);
    tg_graph_free (g);
  }
  /* Nothing to pass through. */
  a = NULL;
  tg_graph_set_node_bypass (ref, 0, true);
  TG_CHECK (tg_engine_pull (e, ref, 1, 0, &r, NULL, &a, NULL, &err) < 0);
  TG_CHECK (a == NULL);
  TG_CHECK_MSG (strcmp (err.path, "nodes[0].ui.bypass") == 0, "%s", err.path);
  TG_CHECK_STR_CONTAINS (err.message, "cannot be bypassed: it has no height input");
  TG_CHECK (tg_graph_validate (ref, &err) < 0);
  tg_graph_free (ref);
  tg_engine_free (e);
}

/* A bypassed node reads only the input it passes through: test.mix's
 * other input may stay unlinked, and what feeds it is not evaluated. */
static void
test_bypass_reads_main_input_only (void)
{
  const char *types[] = { "test.coord", "test.mix" };
  TgGraph *g = graph_with (types, 2);
  TgEngine *e = tg_engine_new (NULL);
  TgEvalReport rep;
  TgError err = { 0 };
  TgRegion r;
  TgValue *a, *b;

  tg_region_for_world (&r, tg_graph_world (g), 97);
  TG_CHECK (tg_graph_add_node (g, "slow", "test.coord", &err) == 2);
  TG_CHECK (tg_graph_add_link (g, "slow", "height", "n1", "detail", &err) >= 0);
  tg_graph_set_node_bypass (g, 1, true);
  TG_CHECK_MSG (tg_graph_validate (g, &err) == 0, "%s", err.message);
  a = pull (e, g, 1, &r, &rep);
  TG_CHECK (rep.state[2] == TG_NODE_IDLE);
  TG_CHECK (a && a->channels == 1);
  tg_eval_report_clear (&rep);
  b = pull (e, g, 0, &r, NULL);
  TG_CHECK (same_values (a, b));
  tg_value_unref (a);
  tg_value_unref (b);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* Warnings: the descriptor's hook at the world's build cell (960 m over
 * 96 cells: 10 m) and tg_eval_warn from eval, in the report without
 * failing the node; the hook's warning again when the result is cached;
 * none for a bypassed node. */
static void
test_warnings_do_not_fail (void)
{
  const char *types[] = { "test.coord", "test.warn" };
  TgGraph *g = graph_with (types, 2);
  TgEngine *e = tg_engine_new (NULL);
  TgEvalReport rep;
  TgError w;
  TgRegion r;
  TgParamValue v = { .type = TG_PARAM_FLOAT, .f = 15.0 };

  tg_region_for_world (&r, tg_graph_world (g), 49); /* a preview: the build's cell counts */
  TG_CHECK_NEAR (tg_world_cell_m (tg_graph_world (g)), 10.0, 1e-12);
  TG_CHECK (tg_graph_node_warning (g, 1, &w) == 0);
  tg_value_unref (pull (e, g, 1, &r, &rep));
  TG_CHECK (rep.warning[1] == NULL);
  tg_eval_report_clear (&rep);

  TG_CHECK (tg_graph_set_param (g, 1, "size_m", &v, &w) == 0);
  TG_CHECK (tg_graph_node_warning (g, 1, &w) == 1);
  TG_CHECK_MSG (strcmp (w.path, "nodes[1].params.size_m") == 0, "%s", w.path);
  TG_CHECK (strcmp (w.node_id, "n1") == 0);
  TG_CHECK_MSG (strcmp (w.message, "Size 15 m is smaller than two cells of the world's 10 m "
                                   "grid: the detail is lost at this resolution (20 m or more "
                                   "shows it)") == 0, "%s", w.message);
  for (int pass = 0; pass < 2; pass++)
    {
      tg_value_unref (pull (e, g, 1, &r, &rep));
      TG_CHECK (rep.state[1] == (pass ? TG_NODE_CACHED : TG_NODE_DONE));
      TG_CHECK_INT_EQ (tg_eval_report_first_failure (&rep), -1);
      TG_CHECK (rep.warning[1] && strcmp (rep.warning[1], w.message) == 0);
      TG_CHECK (rep.warning[0] == NULL);
      tg_eval_report_clear (&rep);
    }
  v.f = 2000.0;
  TG_CHECK (tg_graph_set_param (g, 1, "size_m", &v, &w) == 0);
  tg_value_unref (pull (e, g, 1, &r, &rep));
  TG_CHECK (rep.state[1] == TG_NODE_DONE);
  TG_CHECK_MSG (rep.warning[1] && strcmp (rep.warning[1], "size 2000 m is over a kilometre") == 0,
                "%s", rep.warning[1] ? rep.warning[1] : "(none)");
  tg_eval_report_clear (&rep);
  v.f = 1.0;
  TG_CHECK (tg_graph_set_param (g, 1, "size_m", &v, &w) == 0);
  tg_graph_set_node_bypass (g, 1, true);
  TG_CHECK (tg_graph_node_warning (g, 1, &w) == 0);
  tg_value_unref (pull (e, g, 1, &r, &rep));
  TG_CHECK (rep.warning[1] == NULL);
  tg_eval_report_clear (&rep);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* A graph coord -> split, its outputs read as LINKS says: "h" (split's
 * height into mix), "dh" (split's double into mix, blur of split's
 * height into mix's detail). */
static TgGraph *
split_graph (bool with_blur)
{
  TgGraph *g = tg_graph_new ();
  TgError err = { 0 };

  tg_graph_world (g)->resolution = 97;
  tg_graph_world (g)->size_x = 960;
  tg_graph_world (g)->size_z = 640;
  TG_CHECK (tg_graph_add_node (g, "c", "test.coord", &err) == 0);
  TG_CHECK (tg_graph_add_node (g, "s", "test.split", &err) == 1);
  TG_CHECK (tg_graph_add_node (g, "m", "test.mix", &err) == 2);
  TG_CHECK (tg_graph_add_link (g, "c", "height", "s", "height", &err) >= 0);
  if (!with_blur)
    TG_CHECK (tg_graph_add_link (g, "s", "height", "m", "height", &err) >= 0);
  else
    {
      TG_CHECK (tg_graph_add_node (g, "b", "test.blur", &err) == 3);
      TG_CHECK (tg_graph_add_link (g, "s", "height", "b", "height", &err) >= 0);
      TG_CHECK (tg_graph_add_link (g, "s", "double", "m", "height", &err) >= 0);
      TG_CHECK (tg_graph_add_link (g, "b", "height", "m", "detail", &err) >= 0);
    }
  return g;
}

/* An output nothing reads is not made (tg_eval_output_wanted); asked for
 * later, the node runs again for it and the cache then holds both.  A
 * window cut from a result computed for another reader gets the output
 * its own reader takes, even when the window's key is in the cache
 * without it. */
static void
test_unread_outputs_skipped (void)
{
  TgGraph *g = split_graph (false), *g2 = split_graph (true);
  TgEngine *e = tg_engine_new (NULL), *e2 = tg_engine_new (NULL);
  TgEvalReport rep;
  TgError err = { 0 };
  TgRegion full, r;
  TgValue *c, *m, *d = NULL, *h;
  size_t n;

  tg_region_for_world (&full, tg_graph_world (g), 97);
  n = tg_region_samples (&full);
  c = pull (e, g, 0, &full, NULL);
  atomic_store (&test_split_evals, 0);
  atomic_store (&test_split_doubles, 0);
  atomic_store (&test_split_heights, 0);
  m = pull (e, g, 2, &full, NULL);
  TG_CHECK_INT_EQ (atomic_load (&test_split_evals), 1);
  TG_CHECK_INT_EQ (atomic_load (&test_split_doubles), 0);
  for (size_t i = 0; i < n; i++)
    TG_CHECK (m->data[2 * i] == c->data[i] + 1.0f);

  /* The double, asked for: split runs again and makes it alone (a pull
   * wants the outputs it asks for). */
  TG_CHECK (tg_engine_pull (e, g, 1, 1, &full, NULL, &d, &rep, &err) == 0);
  TG_CHECK_INT_EQ (atomic_load (&test_split_evals), 2);
  TG_CHECK_INT_EQ (atomic_load (&test_split_doubles), 1);
  TG_CHECK_INT_EQ (atomic_load (&test_split_heights), 1);
  TG_CHECK_INT_EQ (rep.n_computed, 1);
  tg_eval_report_clear (&rep);
  for (size_t i = 0; d && i < n; i++)
    TG_CHECK (d->data[i] == 2.0f * c->data[i]);
  /* Both outputs from the cache now (one entry of the two runs' outputs);
   * mix's result too. */
  h = pull (e, g, 1, &full, &rep);
  TG_CHECK_INT_EQ (rep.n_computed, 0);
  tg_eval_report_clear (&rep);
  for (size_t i = 0; i < n; i++)
    TG_CHECK (h->data[i] == c->data[i] + 1.0f);
  tg_value_unref (h);
  tg_value_unref (pull (e, g, 2, &full, &rep));
  TG_CHECK_INT_EQ (rep.n_computed, 0);
  TG_CHECK_INT_EQ (atomic_load (&test_split_evals), 2);
  tg_eval_report_clear (&rep);
  tg_value_unref (d);
  tg_value_unref (m);

  /* The window: split over R is cached with its height only (the first
   * graph), then read for its double as a window of split over R grown
   * by blur's apron, which blur reads for the height. */
  r = tg_region_window (&full, 10, 10, 40, 30);
  tg_value_unref (pull (e2, g, 2, &r, NULL));
  atomic_store (&test_split_evals, 0);
  atomic_store (&test_split_doubles, 0);
  m = pull (e2, g2, 2, &r, NULL);
  TG_CHECK_INT_EQ (atomic_load (&test_split_evals), 1);
  TG_CHECK_INT_EQ (atomic_load (&test_split_doubles), 1);
  for (int y = 0; y < r.height; y++)
    for (int x = 0; x < r.width; x++)
      {
        int fx = r.col0 + x, fy = r.row0 + y;
        float s = 0, want;
        for (int dy = -1; dy <= 1; dy++)
          for (int dx = -1; dx <= 1; dx++)
            s += c->data[(size_t) (fy + dy) * (size_t) full.width + (size_t) (fx + dx)] + 1.0f;
        want = 2.0f * c->data[(size_t) fy * (size_t) full.width + (size_t) fx] + 10.0f * (s / 9.0f);
        TG_CHECK (m->data[2 * ((size_t) y * (size_t) r.width + (size_t) x)] == want);
      }
  tg_value_unref (m);
  tg_value_unref (c);
  tg_engine_free (e);
  tg_engine_free (e2);
  tg_graph_free (g);
  tg_graph_free (g2);
}

int
main (void)
{
  tmp_root = tgtest_tmpdir ("tg-eval-");
  if (!tmp_root)
    return 1;
  TG_RUN (test_second_pull_computes_nothing);
  TG_RUN (test_threads_and_tiles_identical);
  TG_RUN (test_global_node_sees_whole_map);
  TG_RUN (test_apron_cut_at_world_edge);
  TG_RUN (test_map_rows);
  TG_RUN (test_failure_is_per_node);
  TG_RUN (test_cancel_answers_quickly);
  TG_RUN (test_export_all_or_nothing);
  TG_RUN (test_writer_sees_cancel_before_writing);
  TG_RUN (test_writer_runs_on_build_threads);
  TG_RUN (test_exports_share_upstream);
  TG_RUN (test_input_files_join_the_key);
  TG_RUN (test_pull_of_export_node_refused);
  TG_RUN (test_deep_chain);
  TG_RUN (test_bypass_passes_main_input);
  TG_RUN (test_bypass_reads_main_input_only);
  TG_RUN (test_warnings_do_not_fail);
  TG_RUN (test_unread_outputs_skipped);
  return tgtest_result ();
}
