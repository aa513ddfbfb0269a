/* Graph-building helpers for node tests: set parameters from text, add
 * nodes and links by name (failing the test with the engine's message),
 * pull a node's output over a region, and compare windows. */
#ifndef TGGRAPH_TEST_H
#define TGGRAPH_TEST_H

#include <stdint.h>
#include <string.h>

#include <tgraph/tgraph.h>

#include "tgtest.h"


static inline int
set_param_err (TgGraph *g, int node, const char *name, const char *text, TgError *err)
{
  return tg_graph_set_param_text (g, node, name, text, err);
}

static inline int
set_param (TgGraph *g, int node, const char *name, const char *text)
{
  TgError err = { 0 };

  return set_param_err (g, node, name, text, &err);
}

#define SET(g, n, name, text)                                                           \
  do {                                                                                  \
    TgError set__err = { 0 };                                                           \
    int set__rc = set_param_err ((g), (n), (name), (text), &set__err);                  \
    TG_CHECK_MSG (set__rc == 0, "%s=%s: %s: %s", (name), (text), set__err.path,         \
                  set__err.message);                                                    \
  } while (0)

static inline int
add_node (TgGraph *g, const char *id, const char *type)
{
  TgError err = { 0 };
  int n = tg_graph_add_node (g, id, type, &err);

  TG_CHECK_MSG (n >= 0, "add %s (%s): %s", id, type, err.message);
  return n;
}

static inline void
add_link (TgGraph *g, const char *from, const char *from_port, const char *to,
          const char *to_port)
{
  TgError err = { 0 };
  int rc = tg_graph_add_link (g, from, from_port, to, to_port, &err);

  TG_CHECK_MSG (rc >= 0, "link %s.%s -> %s.%s: %s", from, from_port, to, to_port, err.message);
}

/* A graph whose world is SX x SZ metres, sampled with RES samples along X. */
static inline TgGraph *
new_graph (double sx, double sz, int res)
{
  TgGraph *g = tg_graph_new ();
  TgWorld *w = tg_graph_world (g);

  w->size_x = sx;
  w->size_z = sz;
  w->resolution = res;
  return g;
}

static inline TgRegion
world_region (TgGraph *g)
{
  TgRegion r;

  tg_region_for_world (&r, tg_graph_world (g), tg_graph_world (g)->resolution);
  return r;
}

/* Output 0 of node ID over R; NULL (with the error in *ERR) on failure. */
static inline TgValue *
pull_err (TgEngine *e, TgGraph *g, const char *id, const TgRegion *r, TgError *err)
{
  TgValue *v = NULL;
  int n = tg_graph_find_node (g, id);
  int rc = tg_engine_pull (e, g, n, 0, r, NULL, &v, NULL, err);

  return rc == 0 ? v : NULL;
}

static inline TgValue *
pull (TgEngine *e, TgGraph *g, const char *id, const TgRegion *r)
{
  TgError err = { 0 };
  TgValue *v = pull_err (e, g, id, r, &err);

  TG_CHECK_MSG (v != NULL, "pull %s: %s: %s", id, err.path, err.message);
  return v;
}

static inline float
at (const TgValue *v, int i, int j)
{
  return tg_value_row (v, j)[i];
}

/* Output PORT of node ID over R (NULL, the test failed, on an error). */
static inline TgValue *
pull_port (TgEngine *e, TgGraph *g, const char *id, int port, const TgRegion *r)
{
  TgError err = { 0 };
  TgValue *v = NULL;
  int rc = tg_engine_pull (e, g, tg_graph_find_node (g, id), port, r, NULL, &v, NULL, &err);

  TG_CHECK_MSG (rc == 0, "pull %s.%d: %s: %s", id, port, err.path, err.message);
  return rc == 0 ? v : NULL;
}

/* The sum of a map's samples. */
static inline double
sum_of (const TgValue *v)
{
  double s = 0.0;

  for (int j = 0; j < v->region.height; j++)
    for (int i = 0; i < v->region.width; i++)
      s += at (v, i, j);
  return s;
}

/* FNV-1a over a map's samples (tests pin some of these). */
static inline uint64_t
hash_value (const TgValue *v)
{
  const unsigned char *b = (const unsigned char *) v->data;
  size_t n = sizeof (float) * (size_t) tg_region_samples (&v->region);
  uint64_t h = 1469598103934665603ull;

  for (size_t k = 0; k < n; k++)
    h = (h ^ b[k]) * 1099511628211ull;
  return h;
}

static inline TgEngine *
new_engine (int threads)
{
  TgEngineOptions o = { .threads = threads, .cache_bytes = 0 };

  return tg_engine_new (&o);
}

/* Bytes of V's samples are the same as W's over W's window. */
static inline int
same_window (const TgValue *full, const TgValue *win)
{
  for (int j = 0; j < win->region.height; j++)
    {
      const float *a = tg_value_row (full, win->region.row0 - full->region.row0 + j)
                       + (win->region.col0 - full->region.col0);
      if (memcmp (a, tg_value_row (win, j), sizeof (float) * (size_t) win->region.width) != 0)
        return 0;
    }
  return 1;
}

#endif
