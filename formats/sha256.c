/* SHA-256 (FIPS 180-4), for the build manifest: each exported file is
 * listed with its digest so a pipeline can check what it received and
 * tests can compare builds.  Our own short implementation keeps the
 * formats library free of a crypto dependency; it is not used for
 * anything secret.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tgformats-private.h"

static const uint32_t K[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t
rotr (uint32_t x, int n)
{
  return (x >> n) | (x << (32 - n));
}

static void
compress (uint32_t state[8], const uint8_t block[64])
{
  uint32_t w[64], a, b, c, d, e, f, g, h;

  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t) block[4 * i] << 24 | (uint32_t) block[4 * i + 1] << 16
           | (uint32_t) block[4 * i + 2] << 8 | (uint32_t) block[4 * i + 3];
  for (int i = 16; i < 64; i++)
    {
      uint32_t s0 = rotr (w[i - 15], 7) ^ rotr (w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = rotr (w[i - 2], 17) ^ rotr (w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
  a = state[0];
  b = state[1];
  c = state[2];
  d = state[3];
  e = state[4];
  f = state[5];
  g = state[6];
  h = state[7];
  for (int i = 0; i < 64; i++)
    {
      uint32_t s1 = rotr (e, 6) ^ rotr (e, 11) ^ rotr (e, 25);
      uint32_t ch = (e & f) ^ (~e & g);
      uint32_t t1 = h + s1 + ch + K[i] + w[i];
      uint32_t s0 = rotr (a, 2) ^ rotr (a, 13) ^ rotr (a, 22);
      uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
      uint32_t t2 = s0 + maj;
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
  state[5] += f;
  state[6] += g;
  state[7] += h;
}

void
tg_sha256_init (TgSha256 *s)
{
  static const uint32_t H0[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
  memcpy (s->state, H0, sizeof H0);
  s->length = 0;
  s->used = 0;
}

void
tg_sha256_update (TgSha256 *s, const void *data, size_t n)
{
  const uint8_t *p = data;

  s->length += (uint64_t) n;
  if (s->used)
    {
      size_t take = 64 - s->used < n ? 64 - s->used : n;
      memcpy (s->block + s->used, p, take);
      s->used += take;
      p += take;
      n -= take;
      if (s->used < 64)
        return;
      compress (s->state, s->block);
      s->used = 0;
    }
  for (; n >= 64; n -= 64, p += 64)
    compress (s->state, p);
  memcpy (s->block, p, n);
  s->used = n;
}

void
tg_sha256_final (TgSha256 *s, uint8_t digest[32])
{
  uint64_t bits = s->length * 8;

  s->block[s->used++] = 0x80;
  if (s->used > 56)
    {
      memset (s->block + s->used, 0, 64 - s->used);
      compress (s->state, s->block);
      s->used = 0;
    }
  memset (s->block + s->used, 0, 56 - s->used);
  for (int i = 0; i < 8; i++)
    s->block[56 + i] = (uint8_t) (bits >> (56 - 8 * i));
  compress (s->state, s->block);
  for (int i = 0; i < 8; i++)
    {
      digest[4 * i] = (uint8_t) (s->state[i] >> 24);
      digest[4 * i + 1] = (uint8_t) (s->state[i] >> 16);
      digest[4 * i + 2] = (uint8_t) (s->state[i] >> 8);
      digest[4 * i + 3] = (uint8_t) s->state[i];
    }
  s->used = 0;
}

/* Hashes F (closed here); NAME for messages. */
static int
sha256_stream (FILE *f, const char *name, const TgCancel *cancel, char hex[65], uint64_t *bytes,
               TgError *err)
{
  static const char digits[] = "0123456789abcdef";
  uint8_t buf[16384], digest[32];
  TgSha256 s;
  size_t n;

  tg_sha256_init (&s);
  while ((n = fread (buf, 1, sizeof buf, f)) > 0)
    {
      if (tg_cancel_is_requested (cancel))
        {
          fclose (f);
          return tg_error_set (err, TG_ECANCELLED, "", "cancelled");
        }
      tg_sha256_update (&s, buf, n);
      *bytes += n;
    }
  if (ferror (f))
    {
      int e = errno;
      fclose (f);
      return tg_error_set (err, TG_EIO, "", "cannot read %s: %s", name, strerror (e));
    }
  fclose (f);
  tg_sha256_final (&s, digest);
  for (int i = 0; i < 32; i++)
    {
      hex[2 * i] = digits[digest[i] >> 4];
      hex[2 * i + 1] = digits[digest[i] & 15];
    }
  hex[64] = '\0';
  return 0;
}

int
tg_sha256_file (const char *path, char hex[65], TgError *err)
{
  uint64_t bytes = 0;
  FILE *f;

  hex[0] = '\0';
  f = fopen (path, "rb");
  if (!f)
    return tg_error_set (err, TG_EIO, "", "cannot open %s: %s", path, strerror (errno));
  return sha256_stream (f, path, NULL, hex, &bytes, err);
}

int
tg__sha256_export_file (TgExportList *l, int i, const TgCancel *cancel, char hex[65],
                        uint64_t *bytes, TgError *err)
{
  const char *path = tg_export_list_file (l, i)->path;
  FILE *f;
  int fd;

  hex[0] = '\0';
  *bytes = 0;
  /* Opened as commit will find it: no link below the output folder. */
  if ((fd = tg_export_list_open_staged (l, i, err)) < 0)
    return fd;
  if ((f = fdopen (fd, "rb")) == NULL)
    {
      close (fd);
      return tg_error_set (err, TG_EIO, "", "cannot read the staged %s: %s", path,
                           strerror (errno));
    }
  return sha256_stream (f, path, cancel, hex, bytes, err);
}
