/* Internal declarations shared by the core and the backends. Nothing here is
 * exported from the library. */
#ifndef PK_INTERNAL_H
#define PK_INTERNAL_H

#include "acc_type.h"
#include "alloc.h"
#include "env.h"
#include "pk.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PK__MSG_MAX 1024

/* Arguments of the matrix kernels, validated by the core (src/core/api_*.c).
 * Sizes are in elements (bits for k, words for the bit matrices' ld). */
typedef struct pk__gemm_args {
    pk_dtype t;
    pk_gemm_mode mode;
    pk_trans ta, tb;
    int64_t m, n, k;
    const void *alpha, *beta; /* host, dtype t */
    const void *A, *B;
    void *C;
    int64_t lda, ldb, ldc;
} pk__gemm_args;

typedef struct pk__bits_args {
    int64_t m, n, k;          /* k in bits (may be 0) */
    const uint64_t *A, *B;    /* bgemm A, B; hamming and topk Q, X */
    int64_t lda, ldb;         /* words */
} pk__bits_args;

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
    /* The slots below may be NULL: the call then fails with
     * PK_ERR_UNSUPPORTED naming the backend. */
    pk_status (*gemm)(pk_ctx *ctx, const pk__gemm_args *a);
    pk_status (*bits_pack)(pk_ctx *ctx, pk_bits_format fmt, int64_t rows,
                           int64_t k, const void *x, int64_t ldx,
                           uint64_t *bits, int64_t ldw);
    pk_status (*bits_unpack)(pk_ctx *ctx, pk_bits_format fmt, int64_t rows,
                             int64_t k, const uint64_t *bits, int64_t ldw,
                             void *x, int64_t ldx);
    /* C int32, ldc elements. */
    pk_status (*bgemm)(pk_ctx *ctx, const pk__bits_args *a, int32_t *C,
                       int64_t ldc);
    pk_status (*hamming)(pk_ctx *ctx, const pk__bits_args *a, pk_hamming_dtype dt,
                         void *D, int64_t ldd);
    pk_status (*hamming_topk)(pk_ctx *ctx, const pk__bits_args *a,
                              int64_t topk, int32_t *dist, int64_t *idx);
    /* The partial of pk_reduce(op, t, x, n) before finish (n >= 1), as the
     * core's rules define it (src/core/op_rules.h), in host memory: the
     * distributed layer combines the ranks' partials in rank order. */
    pk_status (*reduce_partial)(pk_ctx *ctx, pk_op op, pk_dtype t,
                                const void *x, int64_t n, pk__acc *acc);
    /* User-defined reductions (src/core/api_reducer.c). reducer_init builds
     * the backend's part of red (red->impl) and may fail with
     * PK_ERR_COMPILE; reducer_fini frees it (no context). */
    pk_status (*reducer_init)(pk_ctx *ctx, pk_reducer *red);
    void (*reducer_fini)(pk_reducer *red);
    /* x[0..n) as the elements at ibase.. of a larger array: the map's i
     * and the ARG index count from ibase (the distributed layer's shards;
     * pk_reducer_reduce passes 0). The tree depends on n only. */
    pk_status (*reducer_reduce)(pk_ctx *ctx, const pk_reducer *red,
                                const void *x, int64_t n, int64_t ibase, void *out);
    pk_status (*reducer_reduce_axis)(pk_ctx *ctx, const pk_reducer *red,
                                     const void *x, int64_t rows,
                                     int64_t cols, int64_t ld, int axis,
                                     void *out);
} pk__backend_ops;

/* Handles carry a magic number so that a NULL, destroyed or foreign handle
 * is refused (PK_ERR_ARG) where that can be seen, instead of being used. A
 * destroyed handle's memory is freed: its magic is checked only as far as
 * the allocator has not reused it (docs/API.md, "Misuse"). */
#define PK__MAGIC_CTX 0x786370u     /* "pcx" */
#define PK__MAGIC_REDUCER 0x647270u /* "prd" */
#define PK__MAGIC_DIST 0x736470u    /* "pds" */
#define PK__MAGIC_DEAD 0xdeadu      /* set by the destroy functions */

struct pk_ctx {
    uint32_t magic;         /* PK__MAGIC_CTX while alive */
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

/* Set the message pk_last_create_error() returns on this thread (for
 * creators other than pk_ctx_create, such as pk_dist_create). */
void pk__set_create_error(const char *msg);

/* NULL when h is a live handle with this magic, else why not ("is NULL",
 * "is not a live pk_ctx (...)"). */
const char *pk__handle_problem(const void *h, uint32_t magic);
/* Whether h (a handle of the given magic, named `what` in messages) is
 * live. If not (NULL, destroyed, another object), the thread's
 * pk_last_create_error says so, with fn: the handle itself cannot hold
 * the message. */
bool pk__handle_live(const void *h, uint32_t magic, const char *fn, const char *what);
/* Return PK_ERR_ARG from the calling function unless ctx is live. */
#define PK__CHECK_CTX(ctx, fn)                                            \
    do {                                                                  \
        if (!pk__handle_live((ctx), PK__MAGIC_CTX, (fn), "ctx"))         \
            return PK_ERR_ARG;                                            \
    } while (0)

extern const pk__backend_ops pk__cpu_ops;
/* Defined by the CUDA backend when the build has it. */
extern const pk__backend_ops pk__cuda_ops;
/* Whether this build has a CUDA backend, and how many devices it sees (0 on
 * any error). Defined in src/core/cuda_stub.c when the build has no CUDA. */
int pk__cuda_device_count(void);
/* The cudaStream_t a CUDA context's work runs on (NULL without CUDA). */
void *pk__cuda_stream(pk_ctx *ctx);

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
