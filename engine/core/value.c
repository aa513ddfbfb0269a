/* Reference-counted values that flow on wires. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"
#include "tgraph/value.h"

static const char *const type_names[TG_TYPE_COUNT] = {
  "height", "mask", "image", "layers", "field", "mesh", "points",
};

const char *
tg_port_type_name (TgPortType t)
{
  return (unsigned) t < TG_TYPE_COUNT ? type_names[t] : "?";
}

int
tg_port_type_from_name (const char *name)
{
  for (int i = 0; i < TG_TYPE_COUNT; i++)
    if (strcmp (name, type_names[i]) == 0)
      return i;
  return -1;
}

bool
tg_port_type_compatible (TgPortType from, TgPortType to)
{
  if (from == to)
    return true;
  return (from == TG_TYPE_HEIGHT || from == TG_TYPE_MASK)
         && (to == TG_TYPE_HEIGHT || to == TG_TYPE_MASK);
}

/* Source pixels, shared by a value and its crops. */
typedef struct
{
  TgPixels pub;
  atomic_int refcount;
} Pixels;

static Pixels *
pixels_ref (Pixels *px)
{
  if (px)
    atomic_fetch_add_explicit (&px->refcount, 1, memory_order_relaxed);
  return px;
}

static void
pixels_unref (Pixels *px)
{
  if (px == NULL || atomic_fetch_sub_explicit (&px->refcount, 1, memory_order_acq_rel) != 1)
    return;
  free ((void *) px->pub.rgba);
  free (px);
}

static size_t
pixels_bytes (const Pixels *px)
{
  return px ? sizeof *px + (size_t) px->pub.width * (size_t) px->pub.height * 4 * sizeof (float)
            : 0;
}

/* A value as the engine allocates it: the public part first, so a
 * TgValue pointer is a pointer to its Value (as GLib's GArray and
 * GRealArray). */
typedef struct
{
  TgValue pub;
  atomic_int refcount;
  void *payload;                        /* mesh, points, field */
  void (*payload_free) (void *payload);
  size_t payload_bytes;                 /* for the cache's memory budget */
  Pixels *pixels;                       /* an image's source pixels, or NULL */
  size_t grid_bytes;                    /* of data, when tg_value_new_grid made it */
} Value;

static Value *
value_of (const TgValue *v)
{
  return (Value *) (void *) v;
}

/* Grids of many MB ask for transparent huge pages (where the kernel
 * gives them on request): a 268 MB grid is then 128 pages instead of
 * 65536, each of which a first touch faults in and freeing walks.  Freeing
 * two such grids after a cancel took 30-100 ms on a loaded machine. */
#define HUGE_PAGE ((uintptr_t) 2 << 20)
#define HUGE_GRID ((size_t) 64 << 20)

static void
advise_huge_pages (void *data, size_t bytes)
{
#ifdef MADV_HUGEPAGE
  uintptr_t a = ((uintptr_t) data + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
  uintptr_t b = ((uintptr_t) data + bytes) & ~(HUGE_PAGE - 1);

  /* Advice only: where it is refused, the grid keeps small pages. */
  if (bytes >= HUGE_GRID && b > a)
    (void) madvise ((void *) a, b - a, MADV_HUGEPAGE);
#else
  (void) data;
  (void) bytes;
#endif
}

/* Grid buffers freed lately, kept for the next grid of their size: a
 * 4097² build frees and allocates hundreds of MB per node, and the kernel
 * zeroes every page of a fresh allocation on first touch (12 % of the
 * texturing and export CPU time).  The buffers of one node's inputs wait
 * here for the next node's outputs; what that node did not take is freed
 * when it ends (tg__value_pool_trim), and a grid of another size frees
 * them all before it is allocated, so the pool never holds memory while
 * a node builds up more.  Only an evaluation keeps buffers: one freed
 * while none runs (the app dropping its results, an idle window) goes
 * back to the system at once. */
#define POOL_MIN ((size_t) 8 << 20)
#define POOL_SLOTS 8

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct
{
  void *data;
  size_t bytes;
} pool[POOL_SLOTS];
static int pool_n;
static int pool_evals;  /* evaluations running: the pool keeps buffers */

/* A pooled buffer of BYTES bytes, or NULL; frees the others. */
static void *
pool_take (size_t bytes)
{
  void *found = NULL, *drop[POOL_SLOTS];
  int n_drop = 0;

  pthread_mutex_lock (&pool_lock);
  for (int k = 0; k < pool_n; k++)
    if (found == NULL && pool[k].bytes == bytes)
      found = pool[k].data;
    else
      drop[n_drop++] = pool[k].data;
  pool_n = 0;
  pthread_mutex_unlock (&pool_lock);
  for (int k = 0; k < n_drop; k++)
    free (drop[k]);
  return found;
}

/* Keeps DATA (BYTES bytes) for pool_take, or frees it. */
static void
pool_give (void *data, size_t bytes)
{
  pthread_mutex_lock (&pool_lock);
  if (pool_evals > 0 && pool_n < POOL_SLOTS)
    {
      pool[pool_n].data = data;
      pool[pool_n].bytes = bytes;
      pool_n++;
      data = NULL;
    }
  pthread_mutex_unlock (&pool_lock);
  free (data);
}

void
tg__value_pool_open (void)
{
  pthread_mutex_lock (&pool_lock);
  pool_evals++;
  pthread_mutex_unlock (&pool_lock);
}

void
tg__value_pool_close (void)
{
  pthread_mutex_lock (&pool_lock);
  pool_evals--;
  pthread_mutex_unlock (&pool_lock);
  tg__value_pool_trim ();
}

void
tg__value_pool_trim (void)
{
  void *drop[POOL_SLOTS];
  int n_drop;

  pthread_mutex_lock (&pool_lock);
  n_drop = pool_n;
  for (int k = 0; k < n_drop; k++)
    drop[k] = pool[k].data;
  pool_n = 0;
  pthread_mutex_unlock (&pool_lock);
  for (int k = 0; k < n_drop; k++)
    free (drop[k]);
}

TgValue *
tg_value_new_grid (TgPortType type, const TgRegion *region, int channels)
{
  Value *v;
  size_t n;

  if (region->width <= 0 || region->height <= 0 || channels <= 0)
    return NULL;
  v = calloc (1, sizeof *v);
  if (v == NULL)
    return NULL;
  n = (size_t) region->width * (size_t) region->height * (size_t) channels;
  if (n * sizeof (float) >= POOL_MIN && (v->pub.data = pool_take (n * sizeof (float))) != NULL)
    v->grid_bytes = n * sizeof (float);
  else if ((v->pub.data = malloc (n * sizeof (float))) != NULL)
    {
      v->grid_bytes = n * sizeof (float);
      advise_huge_pages (v->pub.data, n * sizeof (float));
    }
  if (v->pub.data == NULL)
    {
      free (v);
      return NULL;
    }
  v->pub.type = type;
  v->pub.region = *region;
  v->pub.channels = channels;
  atomic_init (&v->refcount, 1);
  return &v->pub;
}

TgValue *
tg__value_new_payload (TgPortType type, void *payload, void (*payload_free) (void *),
                       size_t payload_bytes)
{
  Value *v = calloc (1, sizeof *v);

  if (v == NULL)
    return NULL;
  v->pub.type = type;
  v->payload = payload;
  v->payload_free = payload_free;
  v->payload_bytes = payload_bytes;
  atomic_init (&v->refcount, 1);
  return &v->pub;
}

void *
tg__value_payload (const TgValue *v)
{
  return value_of (v)->payload;
}

TgValue *
tg_value_ref (TgValue *v)
{
  if (v)
    atomic_fetch_add_explicit (&value_of (v)->refcount, 1, memory_order_relaxed);
  return v;
}

void
tg_value_unref (TgValue *v)
{
  Value *priv = value_of (v);

  if (v == NULL)
    return;
  if (atomic_fetch_sub_explicit (&priv->refcount, 1, memory_order_acq_rel) != 1)
    return;
  if (v->channel_names)
    {
      for (int c = 0; c < v->channels; c++)
        free (v->channel_names[c]);
      free (v->channel_names);
    }
  if (priv->payload_free)
    priv->payload_free (priv->payload);
  pixels_unref (priv->pixels);
  if (priv->grid_bytes >= POOL_MIN)
    pool_give (v->data, priv->grid_bytes);
  else
    free (v->data);
  free (priv);
}

size_t
tg_value_bytes (const TgValue *v)
{
  size_t n = sizeof (Value) + value_of (v)->payload_bytes + pixels_bytes (value_of (v)->pixels);

  if (v->data)
    n += tg_region_samples (&v->region) * (size_t) v->channels * sizeof (float);
  return n;
}

/* Gives OUT, a window of V, V's channel names and source pixels: returns
 * OUT, or NULL (having released it) when out of memory. */
static TgValue *
copy_extras (const TgValue *v, TgValue *out)
{
  if (v->channel_names)
    for (int c = 0; c < v->channels; c++)
      if (v->channel_names[c] && tg_value_set_channel_name (out, c, v->channel_names[c]) < 0)
        {
          tg_value_unref (out);
          return NULL;
        }
  value_of (out)->pixels = pixels_ref (value_of (v)->pixels);
  return out;
}

TgValue *
tg_value_crop (const TgValue *v, const TgRegion *win)
{
  TgValue *out;
  size_t row_bytes;

  if (!tg_region_contains (&v->region, win))
    return NULL;
  out = tg_value_new_grid (v->type, win, v->channels);
  if (out == NULL)
    return NULL;
  row_bytes = (size_t) win->width * (size_t) v->channels * sizeof (float);
  for (int j = 0; j < win->height; j++)
    {
      const float *src = tg_value_row (v, win->row0 - v->region.row0 + j)
                         + (size_t) (win->col0 - v->region.col0) * (size_t) v->channels;
      memcpy (tg_value_row (out, j), src, row_bytes);
    }
  return copy_extras (v, out);
}

const TgPixels *
tg_value_pixels (const TgValue *v)
{
  Pixels *px = v ? value_of (v)->pixels : NULL;

  return px ? &px->pub : NULL;
}

int
tg_value_attach_pixels (TgValue *v, int width, int height, float *rgba)
{
  Pixels *px = calloc (1, sizeof *px);

  if (px == NULL)
    {
      free (rgba);
      return TG_ENOMEM;
    }
  px->pub.width = width;
  px->pub.height = height;
  px->pub.rgba = rgba;
  atomic_init (&px->refcount, 1);
  pixels_unref (value_of (v)->pixels);
  value_of (v)->pixels = px;
  return 0;
}

int
tg_value_set_channel_name (TgValue *v, int channel, const char *name)
{
  char *copy;

  if (channel < 0 || channel >= v->channels)
    return -1;
  if (v->channel_names == NULL)
    {
      v->channel_names = calloc ((size_t) v->channels, sizeof (char *));
      if (v->channel_names == NULL)
        return -1;
    }
  copy = strdup (name);
  if (copy == NULL)
    return -1;
  free (v->channel_names[channel]);
  v->channel_names[channel] = copy;
  return 0;
}

TgValue *
tg__value_window_clamped (const TgValue *v, const TgRegion *win)
{
  const TgRegion *src = &v->region;
  TgValue *out;
  int ch = v->channels;

  if (tg_region_contains (src, win))
    return tg_value_crop (v, win);
  if ((out = tg_value_new_grid (v->type, win, v->channels)) == NULL)
    return NULL;
  for (int j = 0; j < win->height; j++)
    {
      int sj = win->row0 + j - src->row0;
      const float *srow;
      float *drow = tg_value_row (out, j);
      sj = sj < 0 ? 0 : sj >= src->height ? src->height - 1 : sj;
      srow = tg_value_row (v, sj);
      for (int i = 0; i < win->width; i++)
        {
          int si = win->col0 + i - src->col0;
          si = si < 0 ? 0 : si >= src->width ? src->width - 1 : si;
          memcpy (drow + (size_t) i * (size_t) ch, srow + (size_t) si * (size_t) ch,
                  sizeof (float) * (size_t) ch);
        }
    }
  return copy_extras (v, out);
}
