/* The on-disk cache of compiled kernels (user-defined reductions' cubins)
 * and the NVRTC loader. Plain C, no CUDA headers: built in every
 * configuration, so the CPU-only build compiles and tests it too. */
#ifndef PK_KCACHE_H
#define PK_KCACHE_H

#include "internal.h"

#include <stddef.h>
#include <stdint.h>

/* 128-bit FNV-1a style hash (two independent 64-bit lanes), fed in pieces:
 * h starts as pk__hash_init() and each piece is mixed in with its length. */
typedef struct pk__hash {
    uint64_t h[2];
} pk__hash;
pk__hash pk__hash_init(void);
void pk__hash_add(pk__hash *h, const void *p, size_t n);
/* 32 hex digits + NUL. */
void pk__hash_hex(const pk__hash *h, char out[33]);

/* The cache directory: $PK_CACHE_DIR, else $XDG_CACHE_HOME/pk, else
 * $HOME/.cache/pk (created on demand). 0 on success. */
int pk__kcache_dir(char *buf, size_t len);

enum { PK__KCACHE_HIT = 0, PK__KCACHE_MISS = 1, PK__KCACHE_CORRUPT = 2 };
/* Look key up: HIT sets *data (malloc'd, the caller frees) and *len after
 * verifying the header (magic, version, key, length) and the payload's
 * checksum; a file that fails any check is CORRUPT and never returned. */
int pk__kcache_load(const char *key, void **data, size_t *len);
/* Write key's entry atomically: a temporary file in the same directory,
 * then rename(2): a reader sees the old file, no file or the whole new one,
 * and two writers racing leave one whole file. 0 on success. */
int pk__kcache_store(const char *key, const void *data, size_t len);
/* The path of key's file (for tests and messages). */
int pk__kcache_path(const char *key, char *buf, size_t len);

/* NVRTC, loaded with dlopen on first use ($PK_NVRTC_LIB, else
 * libnvrtc.so.13, .so.12, .so in the library path and under
 * $CUDA_HOME/lib64 or /usr/local/cuda/lib64). */
/* major * 1000 + minor * 10, or 0 when NVRTC cannot be loaded. */
int pk__nvrtc_version(void);
/* The same, read from the cache directory's record when the library has
 * not changed (no dlopen: the warm-cache path stays in a few ms). */
int pk__nvrtc_version_fast(void);
/* Compile src for arch ("sm_90") with the options to a cubin (malloc'd).
 * PK_ERR_UNSUPPORTED without NVRTC; PK_ERR_COMPILE with NVRTC's log. */
pk_status pk__nvrtc_compile(pk_ctx *ctx, const char *src, const char *name,
                            const char *const *opts, int nopts, void **cubin,
                            size_t *len);

#endif
