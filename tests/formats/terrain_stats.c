/* terrain_stats: measures of a graph's terrain that a geomorphologist
 * would read, at any resolution, so that a change to a graph or an
 * erosion node is measured and not only looked at:
 *
 *   terrain_stats GRAPH.tgraph --height NODE.PORT [--river NODE.PORT]
 *                 [--resolution N] [--threads N] [--channel-area-m2 A]
 *                 [--strahler-area-m2 A] [--talus-deg T] [--loose NODE.PORT]
 *
 * It loads the graph, pulls the height (and the river mask) over the whole
 * world and prints one "name value" a line:
 *
 * - drainage density: total channel length over the world's area, in
 *   km/km², where channels are the D8 flow paths (on the pit-filled height)
 *   draining at least --channel-area-m2 square metres: an area, not a cell
 *   count, so the measure means the same at any resolution;
 * - river share: the share of samples where the river mask is at least 0.5;
 * - the hypsometric integral (mean - min) / (max - min) of the height;
 * - the Strahler orders of the channels draining --strahler-area-m2 (by
 *   default the same as the drainage density's): the streams of each
 *   order and the bifurcation ratio, the geometric mean of N(k) / N(k+1)
 *   over the orders whose next order has at least 5 streams (natural
 *   basins: 3 to 5, Horton 1945, Strahler 1957);
 * - the slope histogram in 10 degree bins, and the share of slopes steeper
 *   than --talus-deg + 2 degrees (central differences, as select.slope);
 * - with --loose (erosion.thermal's loose-material mask): the share of
 *   samples on loose ground (the mask at least 0.999 on the sample and
 *   its 8 neighbours: a slope between loose ground and bedrock may stand
 *   steeper) and the share of those steeper than talus + 2 degrees.
 *
 * tests/formats/terrain_measures.sh asserts ranges of these. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgformats/tgformats.h>
#include <tgraph/tgraph.h>

typedef struct
{
  float h;
  uint32_t seq; /* push order: ties pop first-in first-out */
  int32_t idx;
} HeapItem;

typedef struct
{
  HeapItem *a;
  size_t n;
} Heap;

static int
heap_less (const HeapItem *x, const HeapItem *y)
{
  return x->h < y->h || (x->h == y->h && x->seq < y->seq);
}

static void
heap_push (Heap *hp, HeapItem it)
{
  size_t i = hp->n++;

  while (i > 0 && heap_less (&it, &hp->a[(i - 1) / 2]))
    {
      hp->a[i] = hp->a[(i - 1) / 2];
      i = (i - 1) / 2;
    }
  hp->a[i] = it;
}

static HeapItem
heap_pop (Heap *hp)
{
  HeapItem top = hp->a[0], last = hp->a[--hp->n];
  size_t i = 0;

  for (;;)
    {
      size_t c = 2 * i + 1;
      if (c >= hp->n)
        break;
      if (c + 1 < hp->n && heap_less (&hp->a[c + 1], &hp->a[c]))
        c++;
      if (!heap_less (&hp->a[c], &last))
        break;
      hp->a[i] = hp->a[c];
      i = c;
    }
  hp->a[i] = last;
  return top;
}

#define MAX_ORDER 32

typedef struct
{
  double length;           /* metres of channel */
  long streams[MAX_ORDER]; /* Strahler streams of each order (1..) */
  int max_order;
} Network;

static const int DX[8] = { 1, 1, 0, -1, -1, -1, 0, 1 };
static const int DY[8] = { 0, 1, 1, 1, 0, -1, -1, -1 };

/* The D8 network draining at least MIN_AREA m² over the W x H height Z
 * (metres) with CELL metres between samples: its length and its Strahler
 * streams.  Pits
 * are filled by a priority flood from the edges (Barnes 2014); a sample's
 * receiver is its steepest lower neighbour on the filled height, or, on a
 * flat or a filled pit, the neighbour the flood reached it from.  Either is
 * popped earlier, so the receivers form a forest rooted on the edges. */
static Network
channel_network (const float *z, int w, int h, double cell, double min_area, double min_strahler)
{
  size_t n = (size_t) w * h;
  float *f = malloc (n * sizeof *f);
  int32_t *rec = malloc (n * sizeof *rec);
  int32_t *order = malloc (n * sizeof *order);
  double *area = malloc (n * sizeof *area);
  unsigned char *seen = calloc (n, 1);
  Heap hp = { malloc (n * sizeof (HeapItem)), 0 };
  uint8_t *strahler = calloc (n, 1), *top = calloc (n, 1), *n_top = calloc (n, 1);
  uint32_t seq = 0;
  size_t n_order = 0;
  Network net = { 0 };

  if (!f || !rec || !order || !area || !seen || !hp.a || !strahler || !top || !n_top)
    {
      fprintf (stderr, "terrain_stats: out of memory\n");
      exit (2);
    }
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      if (x == 0 || y == 0 || x == w - 1 || y == h - 1)
        {
          size_t i = (size_t) y * w + x;
          seen[i] = 1;
          f[i] = z[i];
          rec[i] = -1;
          heap_push (&hp, (HeapItem){ z[i], seq++, (int32_t) i });
        }
  while (hp.n > 0)
    {
      HeapItem it = heap_pop (&hp);
      int x = it.idx % w, y = it.idx / w;

      order[n_order++] = it.idx;
      for (int k = 0; k < 8; k++)
        {
          int nx = x + DX[k], ny = y + DY[k];
          if (nx < 0 || ny < 0 || nx >= w || ny >= h)
            continue;
          size_t j = (size_t) ny * w + nx;
          if (seen[j])
            continue;
          seen[j] = 1;
          f[j] = z[j] > f[it.idx] ? z[j] : f[it.idx];
          rec[j] = it.idx; /* the flood's way; the steepest descent below may replace it */
          heap_push (&hp, (HeapItem){ f[j], seq++, (int32_t) j });
        }
    }
  for (size_t i = 0; i < n; i++)
    {
      int x = (int) (i % w), y = (int) (i / w);
      double best = 0.0;
      if (rec[i] < 0)
        continue;
      for (int k = 0; k < 8; k++)
        {
          int nx = x + DX[k], ny = y + DY[k];
          if (nx < 0 || ny < 0 || nx >= w || ny >= h)
            continue;
          size_t j = (size_t) ny * w + nx;
          double s = (f[i] - f[j]) / (k & 1 ? M_SQRT2 : 1.0);
          if (s > best)
            {
              best = s;
              rec[i] = (int32_t) j;
            }
        }
    }
  for (size_t i = 0; i < n; i++)
    area[i] = cell * cell;
  for (size_t k = n_order; k-- > 0;)
    {
      int32_t i = order[k];
      if (rec[i] >= 0)
        area[rec[i]] += area[i];
    }
  for (size_t i = 0; i < n; i++)
    if (rec[i] >= 0 && area[i] >= min_area)
      {
        int dx = abs ((int) (i % w) - rec[i] % w), dy = abs ((int) (i / w) - rec[i] / w);
        net.length += cell * (dx && dy ? M_SQRT2 : 1.0);
      }
  /* Strahler: upstream first (a receiver is popped before its donors), a
   * channel sample with no channel tributary is order 1, and two or more
   * tributaries of the highest order among them raise it by one. */
  for (size_t k = n_order; k-- > 0;)
    {
      int32_t i = order[k];
      if (area[i] < min_strahler)
        continue;
      int o = top[i] == 0 ? 1 : top[i] + (n_top[i] >= 2);
      strahler[i] = (uint8_t) (o < MAX_ORDER - 1 ? o : MAX_ORDER - 1);
      int32_t r = rec[i];
      if (r < 0)
        continue;
      if (strahler[i] > top[r])
        top[r] = strahler[i], n_top[r] = 1;
      else if (strahler[i] == top[r] && n_top[r] < 255)
        n_top[r]++;
    }
  /* A stream ends where its order changes or its channel leaves the map. */
  for (size_t i = 0; i < n; i++)
    if (strahler[i] && (rec[i] < 0 || strahler[rec[i]] != strahler[i]))
      {
        net.streams[strahler[i]]++;
        net.max_order = strahler[i] > net.max_order ? strahler[i] : net.max_order;
      }
  free (strahler);
  free (top);
  free (n_top);
  free (f);
  free (rec);
  free (order);
  free (area);
  free (seen);
  free (hp.a);
  return net;
}

/* Output PORT of node NODE ("node.port") over the whole world. */
static TgValue *
pull_port (TgEngine *e, TgGraph *g, const char *spec)
{
  char id[256];
  const char *dot = strrchr (spec, '.');
  TgError err = { 0 };
  TgValue *v = NULL;
  TgRegion r;

  if (!dot || (size_t) (dot - spec) >= sizeof id)
    {
      fprintf (stderr, "terrain_stats: %s: expected NODE.PORT\n", spec);
      exit (2);
    }
  memcpy (id, spec, (size_t) (dot - spec));
  id[dot - spec] = '\0';
  int node = tg_graph_find_node (g, id);
  if (node < 0)
    {
      fprintf (stderr, "terrain_stats: %s: no node \"%s\" in the graph\n", spec, id);
      exit (2);
    }
  int port = tg_node_desc_find_output (tg_graph_node_desc (g, node), dot + 1);
  if (port < 0)
    {
      fprintf (stderr, "terrain_stats: %s: node \"%s\" has no output \"%s\"\n", spec, id, dot + 1);
      exit (2);
    }
  tg_region_for_world (&r, tg_graph_world (g), tg_graph_world (g)->resolution);
  if (tg_engine_pull (e, g, node, port, &r, NULL, &v, NULL, &err) != 0)
    {
      fprintf (stderr, "terrain_stats: %s: %s: %s\n", spec, err.path, err.message);
      exit (1);
    }
  return v;
}

static double
arg_number (int argc, char **argv, int *i)
{
  char *end;
  double v;

  if (*i + 1 >= argc)
    {
      fprintf (stderr, "terrain_stats: %s needs a value\n", argv[*i]);
      exit (2);
    }
  v = strtod (argv[++*i], &end);
  if (*end != '\0' || !isfinite (v))
    {
      fprintf (stderr, "terrain_stats: %s: expected a number, got %s\n", argv[*i - 1], argv[*i]);
      exit (2);
    }
  return v;
}

int
main (int argc, char **argv)
{
  const char *path = NULL, *height_spec = NULL, *river_spec = NULL, *loose_spec = NULL;
  int resolution = 0, threads = 0;
  double channel_area = 1e5, strahler_area = -1.0, talus = 38.0;
  TgGraph *g = NULL;
  TgError err = { 0 };

  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--height") == 0 && i + 1 < argc)
        height_spec = argv[++i];
      else if (strcmp (argv[i], "--river") == 0 && i + 1 < argc)
        river_spec = argv[++i];
      else if (strcmp (argv[i], "--resolution") == 0)
        resolution = (int) arg_number (argc, argv, &i);
      else if (strcmp (argv[i], "--threads") == 0)
        threads = (int) arg_number (argc, argv, &i);
      else if (strcmp (argv[i], "--channel-area-m2") == 0)
        channel_area = arg_number (argc, argv, &i);
      else if (strcmp (argv[i], "--strahler-area-m2") == 0)
        strahler_area = arg_number (argc, argv, &i);
      else if (strcmp (argv[i], "--loose") == 0 && i + 1 < argc)
        loose_spec = argv[++i];
      else if (strcmp (argv[i], "--talus-deg") == 0)
        talus = arg_number (argc, argv, &i);
      else if (argv[i][0] != '-' && !path)
        path = argv[i];
      else
        {
          fprintf (stderr, "terrain_stats: unknown argument %s\n", argv[i]);
          return 2;
        }
    }
  if (!path || !height_spec)
    {
      fprintf (stderr, "usage: terrain_stats GRAPH.tgraph --height NODE.PORT [--river NODE.PORT]\n"
                       "         [--resolution N] [--threads N] [--channel-area-m2 A] "
                       "[--strahler-area-m2 A] [--talus-deg T] [--loose NODE.PORT]\n");
      return 2;
    }
  tg_formats_init ();
  if (tg_tgraph_load_file (path, &g, &err) != 0)
    {
      fprintf (stderr, "%s: %s: %s\n", path, err.path, err.message);
      return 2;
    }
  TgWorld *world = tg_graph_world (g);
  if (resolution > 0)
    world->resolution = resolution;
  TgEngineOptions opts = { .threads = threads, .cache_bytes = 0 };
  TgEngine *e = tg_engine_new (&opts);

  TgValue *hv = pull_port (e, g, height_spec);
  int w = hv->region.width, h = hv->region.height;
  size_t n = (size_t) w * h;
  double cell = hv->region.cell, height_m = world->height_m;
  float *z = malloc (n * sizeof *z);
  double zmin = INFINITY, zmax = -INFINITY, zsum = 0.0;

  for (int y = 0; y < h; y++)
    {
      const float *row = tg_value_row (hv, y);
      for (int x = 0; x < w; x++)
        {
          double m = (double) row[x] * height_m;
          z[(size_t) y * w + x] = (float) m;
          zmin = m < zmin ? m : zmin;
          zmax = m > zmax ? m : zmax;
          zsum += m;
        }
    }

  TgValue *loose = loose_spec ? pull_port (e, g, loose_spec) : NULL;

  /* Slopes inside the map (central differences need both neighbours). */
  long hist[9] = { 0 }, n_slopes = 0, n_over = 0, n_loose = 0, n_loose_over = 0;
  for (int y = 1; y < h - 1; y++)
    {
      /* The loose-material mask's rows around this one. */
      const float *lr[3] = { NULL, NULL, NULL };
      for (int dy = 0; loose && dy < 3; dy++)
        lr[dy] = tg_value_row (loose, y + dy - 1);
      for (int x = 1; x < w - 1; x++)
        {
          size_t i = (size_t) y * w + x;
          double gx = (z[i + 1] - z[i - 1]) / (2.0 * cell);
          double gy = (z[i + w] - z[i - w]) / (2.0 * cell);
          double deg = atan (hypot (gx, gy)) * 180.0 / M_PI;
          int b = (int) (deg / 10.0);
          hist[b > 8 ? 8 : b]++;
          n_slopes++;
          n_over += deg > talus + 2.0;
          if (loose)
            {
              /* The loose-material mask's least value over the 3 x 3. */
              float m = 1.0f;
              for (int dy = 0; dy < 3; dy++)
                for (int dx = -1; dx <= 1; dx++)
                  m = fminf (m, lr[dy][x + dx]);
              if (m >= 0.999f)
                {
                  n_loose++;
                  n_loose_over += deg > talus + 2.0;
                }
            }
        }
    }

  double world_area = cell * (w - 1) * cell * (h - 1);
  Network net = channel_network (z, w, h, cell, channel_area,
                                 strahler_area > 0 ? strahler_area : channel_area);
  double length = net.length, logsum = 0.0;
  int pairs = 0;
  for (int o = 1; o < net.max_order; o++)
    if (net.streams[o + 1] >= 5)
      {
        logsum += log ((double) net.streams[o] / (double) net.streams[o + 1]);
        pairs++;
      }

  printf ("resolution %d\n", w);
  printf ("cell_m %.4f\n", cell);
  printf ("channel_area_m2 %.0f\n", channel_area);
  printf ("drainage_density_km_per_km2 %.4f\n", (length / 1000.0) / (world_area / 1e6));
  printf ("strahler_area_m2 %.0f\n", strahler_area > 0 ? strahler_area : channel_area);
  printf ("strahler_max_order %d\n", net.max_order);
  printf ("strahler_streams");
  for (int o = 1; o <= net.max_order; o++)
    printf (" %ld", net.streams[o]);
  printf ("\n");
  printf ("bifurcation_ratio %.3f\n", pairs ? exp (logsum / pairs) : 0.0);
  if (river_spec)
    {
      TgValue *rv = pull_port (e, g, river_spec);
      long wet = 0;
      for (int y = 0; y < h; y++)
        {
          const float *row = tg_value_row (rv, y);
          for (int x = 0; x < w; x++)
            wet += row[x] >= 0.5f;
        }
      printf ("river_share %.5f\n", (double) wet / (double) n);
      tg_value_unref (rv);
    }
  printf ("hypsometric_integral %.4f\n", zmax > zmin ? (zsum / n - zmin) / (zmax - zmin) : 0.0);
  printf ("relief_m %.1f\n", zmax - zmin);
  printf ("slope_histogram_10deg");
  for (int b = 0; b < 9; b++)
    printf (" %.4f", (double) hist[b] / (double) n_slopes);
  printf ("\n");
  printf ("over_talus_plus_2deg %.5f\n", (double) n_over / (double) n_slopes);
  if (loose)
    {
      printf ("loose_share %.5f\n", (double) n_loose / (double) n_slopes);
      printf ("loose_over_talus_plus_2deg %.5f\n",
              n_loose ? (double) n_loose_over / (double) n_loose : 0.0);
    }

  if (loose)
    tg_value_unref (loose);
  free (z);
  tg_value_unref (hv);
  tg_engine_free (e);
  tg_graph_free (g);
  return 0;
}
