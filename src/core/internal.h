/* Internal declarations shared by the core and the backends. Nothing here is
 * exported from the library. */
#ifndef PK_INTERNAL_H
#define PK_INTERNAL_H

#include "pk.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PK__MSG_MAX 1024

/* The operations a backend provides. The core validates every public argument
 * once, then calls these; a backend never re-validates and never calls into
 * another backend. */
typedef struct pk__backend_ops {
    pk_status (*init)(pk_ctx *ctx, int device);
    void (*fini)(pk_ctx *ctx);
    pk_status (*set_stream)(pk_ctx *ctx, void *stream);
    pk_status (*sync)(pk_ctx *ctx);
    pk_status (*reduce)(pk_ctx *ctx, pk_op op, pk_dtype t, const void *x,
                        int64_t n, void *out);
    pk_status (*reduce_axis)(pk_ctx *ctx, pk_op op, pk_dtype t, const void *x,
                             int64_t rows, int64_t cols, int64_t ld, int axis,
                             void *out);
    pk_status (*dot)(pk_ctx *ctx, pk_dtype t, int64_t n, const void *x,
                     const void *y, void *out);
    pk_status (*axpy)(pk_ctx *ctx, pk_dtype t, int64_t n, const void *alpha,
                      const void *x, void *y);
} pk__backend_ops;

struct pk_ctx {
    pk_backend backend;
    const pk__backend_ops *ops;
    int device;
    int threads;            /* CPU: 0 = OpenMP default */
    void *impl;             /* backend-private state */
    char describe[256];
    char msg[PK__MSG_MAX];
};

/* Record a failure in ctx (printf-style) and return s. The single place
 * where error messages originate. */
pk_status pk__fail(pk_ctx *ctx, pk_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

extern const pk__backend_ops pk__cpu_ops;
/* Defined by the CUDA backend when the build has it. */
extern const pk__backend_ops pk__cuda_ops;
/* Whether this build has a CUDA backend, and how many devices it sees (0 on
 * any error). Defined in src/core/cuda_stub.c when the build has no CUDA. */
int pk__cuda_device_count(void);

/* Identity and name tables (src/core/types.c). */
typedef struct pk__dtype_info {
    const char *name;
    size_t size;
    bool is_float;
    bool is_signed;
} pk__dtype_info;
extern const pk__dtype_info pk__dtypes[PK_DTYPE_COUNT];

#ifdef __cplusplus
}
#endif
#endif
