/* SHA-256 against the FIPS 180-4 / NIST example vectors, streamed in
 * awkward chunk sizes, and over files. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgformats/tgformats.h>

#include "tgtest.h"

static void
hex (const uint8_t d[32], char out[65])
{
  for (int i = 0; i < 32; i++)
    snprintf (out + 2 * i, 3, "%02x", d[i]);
}

static void
digest_chunks (const void *data, size_t n, size_t chunk, char out[65])
{
  TgSha256 s;
  uint8_t d[32];
  const uint8_t *p = data;

  tg_sha256_init (&s);
  while (n > 0)
    {
      size_t k = n < chunk ? n : chunk;
      tg_sha256_update (&s, p, k);
      p += k;
      n -= k;
    }
  tg_sha256_final (&s, d);
  hex (d, out);
}

static const struct
{
  const char *msg;
  const char *digest;
} vectors[] = {
  { "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
  { "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
  { "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
  { "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
    "mnopqrstnopqrstu",
    "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
};

static void
test_sha256_standard_vectors (void)
{
  for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++)
    {
      size_t n = strlen (vectors[i].msg);
      static const size_t chunks[] = { 1, 3, 55, 56, 63, 64, 65, 1000 };
      for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++)
        {
          char got[65];
          digest_chunks (vectors[i].msg, n, chunks[c], got);
          TG_CHECK_MSG (strcmp (got, vectors[i].digest) == 0, "vector %zu chunk %zu: %s", i,
                        chunks[c], got);
        }
    }
}

static void
test_sha256_million_a (void)
{
  size_t n = 1000000;
  char *a = malloc (n), got[65];

  memset (a, 'a', n);
  digest_chunks (a, n, n, got);
  TG_CHECK_MSG (strcmp (got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0,
                "%s", got);
  /* 1000 x 1000 bytes crosses block boundaries at every offset mod 64. */
  digest_chunks (a, n, 1000, got);
  TG_CHECK_MSG (strcmp (got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0,
                "%s", got);
  free (a);
}

/* Lengths around the padding boundary (55, 56, 64 bytes) against the
 * one-shot digest of the same bytes fed in two parts. */
static void
test_sha256_padding_boundaries (void)
{
  uint8_t buf[200];
  static const struct
  {
    size_t len;
    const char *digest;
  } known[] = {
    /* sha256 of N bytes 0x00, 0x01, ..., (N-1) & 0xff */
    { 55, "463eb28e72f82e0a96c0a4cc53690c571281131f672aa229e0d45ae59b598b59" },
    { 56, "da2ae4d6b36748f2a318f23e7ab1dfdf45acdc9d049bd80e59de82a60895f562" },
    { 64, "fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1d9151108" },
  };

  for (int i = 0; i < 200; i++)
    buf[i] = (uint8_t) i;
  for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
    {
      char got[65];
      digest_chunks (buf, known[k].len, 7, got);
      TG_CHECK_MSG (strcmp (got, known[k].digest) == 0, "len %zu: %s", known[k].len, got);
    }
}

static void
test_sha256_file (void)
{
  /* The program's one test folder, removed at exit. */
  const char *dir = tgtest_tmpdir ("tgfmt-sha-");
  char path[512], hexd[65];
  TgError err = { 0 };
  FILE *f;

  TG_CHECK (dir != NULL);
  if (!dir)
    return;
  snprintf (path, sizeof path, "%s/abc.txt", dir);
  f = fopen (path, "wb");
  fputs ("abc", f);
  fclose (f);
  TG_CHECK_INT_EQ (tg_sha256_file (path, hexd, &err), 0);
  TG_CHECK (strcmp (hexd, vectors[1].digest) == 0);

  snprintf (path, sizeof path, "%s/missing.bin", dir);
  TG_CHECK_INT_EQ (tg_sha256_file (path, hexd, &err), TG_EIO);
  TG_CHECK_STR_CONTAINS (err.message, "missing.bin");
}

int
main (void)
{
  TG_RUN (test_sha256_standard_vectors);
  TG_RUN (test_sha256_million_a);
  TG_RUN (test_sha256_padding_boundaries);
  TG_RUN (test_sha256_file);
  return tgtest_result ();
}
