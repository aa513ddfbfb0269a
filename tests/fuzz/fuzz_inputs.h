/* The entry points that the libFuzzer targets (fuzz_*.c) and the corpus
 * replay test (replay.c) share: one per kind of file a user hands us.
 * Each takes any bytes, runs them through what the CLI and the engine do
 * with such a file, and returns 0; a broken invariant (an error without
 * a message, a saved graph that does not load again) aborts, so both the
 * fuzzer and the replay test see it as a crash. */
#ifndef TG_FUZZ_INPUTS_H
#define TG_FUZZ_INPUTS_H

#include <stddef.h>
#include <stdint.h>

/* A .tgraph text: load (validating and not), `tgraph check`'s validation,
 * then the canonical save, which must load again and save the same. */
int fuzz_one_tgraph (const uint8_t *data, size_t size);

/* A .glb prototype mesh for export.points: the registered mesh reader,
 * then the glb writers that take the mesh further (instances and mesh). */
int fuzz_one_glb (const uint8_t *data, size_t size);

/* A PNG for input.heightmap / input.image: tg_png_read, then both nodes
 * evaluated over a small world from the file. */
int fuzz_one_png (const uint8_t *data, size_t size);

#endif
