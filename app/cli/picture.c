/* Small RGB pictures (picture.h): thumbnails and difference maps, encoded
 * with the formats library's PNG writer so they are the same bytes on
 * every machine.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgformats/outputs.h>
#include <tgformats/tgformats.h>

#include "picture.h"

int
tg__picture_init (TgPicture *p, int width, int height, const uint8_t fill[3])
{
  size_t n = (size_t) width * (size_t) height;

  p->width = width;
  p->height = height;
  p->rgb = malloc (n > 0 ? n * 3 : 1);
  if (!p->rgb)
    return TG_ENOMEM;
  for (size_t i = 0; i < n; i++)
    memcpy (p->rgb + 3 * i, fill, 3);
  return 0;
}

void
tg__picture_clear (TgPicture *p)
{
  free (p->rgb);
  memset (p, 0, sizeof *p);
}

void
tg__grid_range (const float *data, size_t n, int stride, double *lo, double *hi)
{
  for (size_t i = 0; i < n; i += (size_t) stride)
    if (isfinite (data[i]))
      {
        if (data[i] < *lo)
          *lo = data[i];
        if (data[i] > *hi)
          *hi = data[i];
      }
}

void
tg__grid_range_done (double *lo, double *hi)
{
  if (!(*hi > *lo))
    {
      *lo = 0.0;
      *hi = *hi > 0.0 ? *hi : 1.0;
    }
}

/* The picture's size for a grid of W x H within MAX_SIDE, and the grid
 * step between picture samples; a grid under half of MAX_SIDE is
 * enlarged *ZOOM times (each sample a square), so it can be seen. */
static int
fit (int w, int h, int max_side, int *pw, int *ph, int *zoom)
{
  int step = 1, side = w > h ? w : h;
  while ((w + step - 1) / step > max_side || (h + step - 1) / step > max_side)
    step++;
  *zoom = step == 1 && side <= max_side / 2 ? max_side / side : 1;
  *pw = (w + step - 1) / step * *zoom;
  *ph = (h + step - 1) / step * *zoom;
  return step;
}

static uint8_t
byte_of (double t)
{
  if (!(t > 0.0))
    return 0;
  if (t >= 1.0)
    return 255;
  return (uint8_t) lrint (t * 255.0);
}

int
tg__picture_from_grid (TgPicture *p, const float *data, int width, int height, int channels,
                       double lo, double hi, bool flip, int max_side)
{
  return tg__picture_from_window (p, data, width, width, height, channels, lo, hi, flip, max_side);
}

int
tg__picture_from_window (TgPicture *p, const float *data, int stride, int width, int height,
                         int channels, double lo, double hi, bool flip, int max_side)
{
  static const uint8_t black[3] = { 0, 0, 0 };
  int pw, ph, zoom, step = fit (width, height, max_side, &pw, &ph, &zoom);
  double span = hi > lo ? hi - lo : 1.0;

  if (tg__picture_init (p, pw, ph, black) < 0)
    return TG_ENOMEM;
  for (int y = 0; y < ph; y++)
    {
      int gy = flip ? height - 1 - y / zoom * step : y / zoom * step;
      for (int x = 0; x < pw; x++)
        {
          const float *s
            = data + ((size_t) gy * (size_t) stride + (size_t) (x / zoom * step)) * channels;
          uint8_t *d = p->rgb + 3 * ((size_t) y * (size_t) pw + (size_t) x);
          for (int c = 0; c < 3; c++)
            d[c] = byte_of ((s[channels >= 3 ? c : 0] - lo) / span);
        }
    }
  return 0;
}

int
tg__picture_diverging (TgPicture *p, const float *diff, int width, int height, double scale,
                       bool flip, int max_side)
{
  static const uint8_t white[3] = { 255, 255, 255 };
  static const double blue[3] = { 33, 102, 172 }, red[3] = { 178, 24, 43 };
  int pw, ph, zoom, step = fit (width, height, max_side, &pw, &ph, &zoom);

  if (tg__picture_init (p, pw, ph, white) < 0)
    return TG_ENOMEM;
  for (int y = 0; y < ph; y++)
    for (int x = 0; x < pw; x++)
      {
        double d = 0.0;
        int gy = y / zoom * step, gx = x / zoom * step;
        for (int j = gy; j < gy + step && j < height; j++)
          for (int i = gx; i < gx + step && i < width; i++)
            {
              double v = diff[(size_t) (flip ? height - 1 - j : j) * (size_t) width + (size_t) i];
              if (fabs (v) > fabs (d))
                d = v;
            }
        if (d == 0.0 || !(scale > 0.0))
          continue;
        double t = fabs (d) / scale;
        /* A square root, so that small differences beside a large one still show. */
        t = sqrt (t > 1.0 ? 1.0 : t);
        const double *to = d < 0.0 ? blue : red;
        uint8_t *o = p->rgb + 3 * ((size_t) y * (size_t) pw + (size_t) x);
        for (int c = 0; c < 3; c++)
          o[c] = (uint8_t) lrint (255.0 + (to[c] - 255.0) * t);
      }
  return 0;
}

void
tg__picture_blit (TgPicture *dst, const TgPicture *src, int x, int y)
{
  for (int j = 0; j < src->height && y + j < dst->height; j++)
    {
      int n = src->width;
      if (x + n > dst->width)
        n = dst->width - x;
      if (n > 0)
        memcpy (dst->rgb + 3 * ((size_t) (y + j) * (size_t) dst->width + (size_t) x),
                src->rgb + 3 * (size_t) j * (size_t) src->width, 3 * (size_t) n);
    }
}

int
tg__picture_png (const TgPicture *p, uint8_t **data, size_t *len)
{
  TgImage img = { .width = p->width, .height = p->height, .channels = 3, .bits = 8,
                  .data = p->rgb };
  char *buf = NULL;
  size_t size = 0;
  FILE *f = open_memstream (&buf, &size);
  int rc;

  *data = NULL;
  *len = 0;
  if (!f)
    return TG_ENOMEM;
  rc = tg_png_write (f, &img, NULL);
  if (fclose (f) != 0 && rc == 0)
    rc = TG_EIO;
  if (rc < 0)
    {
      free (buf);
      return rc;
    }
  *data = (uint8_t *) buf;
  *len = size;
  return 0;
}

int
tg__picture_write (const TgPicture *p, const char *path, TgError *err)
{
  uint8_t *data;
  size_t len;
  int rc = tg__picture_png (p, &data, &len);

  if (rc < 0)
    return tg_error_set (err, rc, "", "cannot encode %s", path);
  rc = tg_write_file_atomic (path, data, len, err);
  free (data);
  return rc;
}

char *
tg__data_uri (const char *mime, const uint8_t *data, size_t len)
{
  static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t head = strlen (mime) + 14, n = head + (len + 2) / 3 * 4 + 1;
  char *out = malloc (n), *o;

  if (!out)
    return NULL;
  o = out + snprintf (out, n, "data:%s;base64,", mime);
  for (size_t i = 0; i < len; i += 3)
    {
      uint32_t v = (uint32_t) data[i] << 16;
      if (i + 1 < len)
        v |= (uint32_t) data[i + 1] << 8;
      if (i + 2 < len)
        v |= data[i + 2];
      *o++ = b64[v >> 18 & 63];
      *o++ = b64[v >> 12 & 63];
      *o++ = i + 1 < len ? b64[v >> 6 & 63] : '=';
      *o++ = i + 2 < len ? b64[v & 63] : '=';
    }
  *o = '\0';
  return out;
}
