/* Argument checks shared by the public entry points (src/core/api*.c). Each
 * records the failure with pk__fail and returns its status. */
#ifndef PK_CHECK_H
#define PK_CHECK_H

#include "internal.h"

#include <stdint.h>

/* Bytes spanned by count elements of size bytes, or -1 on overflow. A
 * multiply with an overflow check, not a division by size: two 64-bit
 * divisions were half of pk_axpy's own time at n = 256 (perf, Xeon). */
static inline int64_t span_bytes(int64_t count, size_t size)
{
    int64_t bytes;
    if (count < 0 || size > (size_t)INT64_MAX ||
        __builtin_mul_overflow(count, (int64_t)size, &bytes))
        return -1;
    return bytes;
}

static inline bool ranges_overlap(const void *a, int64_t abytes, const void *b,
                           int64_t bbytes)
{
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    return abytes > 0 && bbytes > 0 && a0 < b0 + (uintptr_t)bbytes &&
           b0 < a0 + (uintptr_t)abytes;
}

/* A buffer of bytes at p must not wrap the address space. */
static inline bool wraps(const void *p, int64_t bytes)
{
    return (uintptr_t)p + (uintptr_t)bytes < (uintptr_t)p;
}

#define CHECK(cond, ...)                                    \
    do {                                                    \
        if (!(cond)) return pk__fail(ctx, PK_ERR_ARG, __VA_ARGS__); \
    } while (0)

static inline pk_status check_op_dtype(pk_ctx *ctx, const char *fn, pk_op op,
                                pk_dtype t)
{
    CHECK((unsigned)op < PK_OP_COUNT, "%s: unknown op %d", fn, (int)op);
    CHECK((unsigned)t < PK_DTYPE_COUNT, "%s: unknown dtype %d", fn, (int)t);
    return PK_OK;
}

/* An input or output of count elements at p. */
static inline pk_status check_buffer(pk_ctx *ctx, const char *fn, const char *name,
                              const void *p, int64_t count, size_t size,
                              int64_t *bytes)
{
    *bytes = span_bytes(count, size);
    CHECK(*bytes >= 0, "%s: %s size %lld elements overflows", fn, name,
          (long long)count);
    CHECK(p || count == 0, "%s: %s is NULL", fn, name);
    CHECK(!wraps(p, *bytes), "%s: %s wraps the address space", fn, name);
    return PK_OK;
}

/* A rows x cols row-major matrix with leading dimension ld (>= max(1, cols)),
 * elements of size bytes: sets *bytes to the span it covers. */
static inline pk_status check_matrix(pk_ctx *ctx, const char *fn,
                                     const char *name, const void *p,
                                     int64_t rows, int64_t cols, int64_t ld,
                                     size_t size, int64_t *bytes)
{
    *bytes = 0;
    CHECK(rows >= 0 && cols >= 0, "%s: %s is %lld x %lld: negative", fn, name,
          (long long)rows, (long long)cols);
    CHECK(ld >= cols && ld >= 1, "%s: ld of %s = %lld must be >= max(1, %lld)",
          fn, name, (long long)ld, (long long)cols);
    int64_t count = 0;
    if (rows > 0 && cols > 0) {
        CHECK(rows - 1 <= (INT64_MAX - cols) / ld,
              "%s: %s %lld x %lld with ld %lld overflows", fn, name,
              (long long)rows, (long long)cols, (long long)ld);
        count = (rows - 1) * ld + cols;
    }
    return check_buffer(ctx, fn, name, p, count, size, bytes);
}

/* A backend slot that is NULL: the request is valid, the backend lacks it. */
#define CHECK_SLOT(slot, fn)                                                 \
    do {                                                                     \
        if (!ctx->ops->slot)                                                 \
            return pk__fail(ctx, PK_ERR_UNSUPPORTED,                         \
                            "%s: not available on the %s backend", fn,       \
                            pk_backend_name(ctx->backend));                  \
    } while (0)

#endif
