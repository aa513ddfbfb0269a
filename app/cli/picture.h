/* Small RGB pictures for `tgraph compare` and `eval --report`: grey and
 * colour thumbnails of grids, the diverging difference map, and PNG
 * bytes written to a file (atomically) or into memory for a data: URI.
 */
#ifndef TGRAPH_CLI_PICTURE_H
#define TGRAPH_CLI_PICTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tgraph/tgraph.h>

typedef struct
{
  int width, height;
  uint8_t *rgb; /* width * height * 3 */
} TgPicture;

int tg__picture_init (TgPicture *p, int width, int height, const uint8_t fill[3]);
void tg__picture_clear (TgPicture *p);

/* Widens LO..HI to the finite values among N floats of DATA taken every
 * STRIDE-th (start with LO = +inf, HI = -inf); tg__grid_range_done then
 * makes an empty or flat range 0..1 (or 0..HI). */
void tg__grid_range (const float *data, size_t n, int stride, double *lo, double *hi);
void tg__grid_range_done (double *lo, double *hi);

/* A picture of at most MAX_SIDE samples a side from the grid DATA
 * (WIDTH x HEIGHT x CHANNELS floats): one or two channels as grey from LO
 * (black) to HI (white), three or four as RGB over LO..HI.  FLIP: the
 * grid's first row is the south edge (the picture puts north up). */
int tg__picture_from_grid (TgPicture *p, const float *data, int width, int height, int channels,
                           double lo, double hi, bool flip, int max_side);
/* The same of a window of a larger grid: its rows STRIDE samples apart. */
int tg__picture_from_window (TgPicture *p, const float *data, int stride, int width, int height,
                             int channels, double lo, double hi, bool flip, int max_side);

/* The diverging map of the signed DIFF (WIDTH x HEIGHT): blue where it is
 * below 0, red above, white at 0, full colour at +-SCALE; each picture
 * sample shows the largest difference of the grid samples it covers. */
int tg__picture_diverging (TgPicture *p, const float *diff, int width, int height, double scale,
                           bool flip, int max_side);

/* SRC drawn into DST with its top-left corner at X, Y. */
void tg__picture_blit (TgPicture *dst, const TgPicture *src, int x, int y);

/* PNG bytes of P into *DATA (caller frees). */
int tg__picture_png (const TgPicture *p, uint8_t **data, size_t *len);
/* Writes P as PATH atomically; 0 or a negative TG_E* with ERR set. */
int tg__picture_write (const TgPicture *p, const char *path, TgError *err);

/* "data:image/png;base64,..." of DATA (caller frees). */
char *tg__data_uri (const char *mime, const uint8_t *data, size_t len);

#endif
