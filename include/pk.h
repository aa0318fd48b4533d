/*
 * pk.h — parallel kernels: the whole public API.
 *
 * Conventions every function keeps (docs/API.md has the long form):
 *
 *  - Sizes and indices are int64_t; n beyond 2^31 works on every backend.
 *  - Success is PK_OK (0). Every failure returns a status and leaves a
 *    readable message in the context (pk_ctx_error). The library never
 *    aborts, exits or prints.
 *  - Bad input (NULL pointer, negative size, a size whose byte count
 *    overflows, an unknown dtype or op, overlap that is not allowed) is
 *    refused with PK_ERR_ARG before any work is done and before any output
 *    is written.
 *  - Reductions and dots are deterministic: the same inputs give the same
 *    bits on every run and for any thread count. The summation tree is fixed
 *    by data position. On the CPU the result is also identical for every SIMD
 *    path (AVX-512, AVX2, generic): all paths run one source (the plain
 *    `reference` path, PK_CPU_ISA=reference, rounds differently).
 *  - Accuracy: float sums and dots are compensated: every addition's (and
 *    product's) rounding error is kept exactly (TwoSum, TwoProduct) and the
 *    partials are combined in double-double, then rounded once to the
 *    result's dtype. The result is correctly rounded except when data
 *    spanning a huge range also cancel, and its error is at or below NumPy's
 *    pairwise summation on the same data; a sum or dot that cancels exactly
 *    is exactly 0 (on the CPU, f64 data that cancel are summed exactly). Partial sums that overflow while
 *    every term is finite (f64 giants that cancel) are redone without
 *    overflow by pk_reduce, pk_reduce_axis and pk_dot on the CPU: Inf comes
 *    out only when the sum itself overflows (not so on the CUDA backend and
 *    in pk_dist_reduce, where such partials give Inf or NaN).
 *  - NaN follows NumPy: sum, prod and dot propagate NaN; min and max return
 *    NaN when any element is NaN; argmin and argmax return the index of the
 *    first NaN. A NaN float sum, product or dot is the default NaN
 *    (0x7fc00000, 0x7ff8000000000000) on every path and backend. Integer
 *    sums and products wrap modulo 2^64 (as NumPy's int64).
 *  - Float products are plain products (f32 accumulated in f64): relative
 *    error at most (n - 1) * 2^-53, so paths may differ by twice that. One
 *    whose partials leave the range is defined by the exact range on every
 *    CPU path: NaN if an element is NaN or the elements hold both 0 and Inf,
 *    else +-Inf if one is Inf, else +-0 if one is 0, else the product without
 *    intermediate overflow or underflow (the CUDA backend and pk_dist_reduce
 *    multiply plainly).
 *  - On the CUDA backend, every pointer may be host or device memory (found
 *    with the runtime's pointer attributes). Host inputs are staged, device
 *    inputs are read in place. Work runs on the context's stream. A result
 *    written to host memory makes the call block; a result written to device
 *    memory does not (call pk_ctx_sync or sync the stream before reading it).
 *    On the CPU backend every pointer must be host memory.
 *  - A context is not thread-safe: use one context per thread.
 */
#ifndef PK_H
#define PK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(PK_BUILDING_LIBRARY) && defined(__GNUC__)
#define PK_API __attribute__((visibility("default")))
#else
#define PK_API
#endif

/* The version of this header. CMakeLists.txt reads the project's version
 * from these three lines: they are its only source. */
#define PK_VERSION_MAJOR 0
#define PK_VERSION_MINOR 1
#define PK_VERSION_PATCH 0

/* Status codes. pk_status_str gives their fixed text; the context keeps the
 * detail of the last failure. */
typedef enum pk_status {
    PK_OK = 0,
    PK_ERR_ARG,          /* an argument is invalid; nothing was done        */
    PK_ERR_NOMEM,        /* host or device memory could not be allocated    */
    PK_ERR_UNSUPPORTED,  /* valid request this backend or build cannot run  */
    PK_ERR_NO_DEVICE,    /* the CUDA backend was asked for, no device found */
    PK_ERR_DEVICE,       /* a CUDA call failed (message names it)           */
    PK_ERR_COMPILE,      /* run-time compilation failed (message has log)   */
    PK_ERR_IO,           /* a file could not be read or written             */
    PK_ERR_INTERNAL,     /* a bug in pk: please report it                   */
    PK_ERR_COMM          /* an MPI or NCCL call failed (message names it)   */
} pk_status;

typedef enum pk_backend {
    PK_BACKEND_AUTO = 0, /* CUDA when a device exists, else CPU; PK_BACKEND
                            (cpu|cuda|auto) in the environment overrides    */
    PK_BACKEND_CPU  = 1,
    PK_BACKEND_CUDA = 2
} pk_backend;

typedef enum pk_dtype {
    PK_F32 = 0, PK_F64, PK_I32, PK_I64, PK_U32, PK_U64,
    PK_DTYPE_COUNT
} pk_dtype;

typedef enum pk_op {
    PK_SUM = 0,  /* f32->f32, f64->f64, i32/i64->i64, u32/u64->u64        */
    PK_PROD,     /* same result dtypes as PK_SUM                          */
    PK_MIN,      /* result dtype = input dtype                            */
    PK_MAX,
    PK_ARGMIN,   /* int64 index of the first occurrence (first NaN if any)*/
    PK_ARGMAX,
    PK_OP_COUNT
} pk_op;

/* ---- Version and build ------------------------------------------------ */

/* The library's version, "MAJOR.MINOR.PATCH" (a program built against one
 * header and run with another library can compare it with PK_VERSION_*).
 * Never NULL. */
PK_API const char *pk_version(void);

/* What this build of the library was compiled with. Built in is not the same
 * as usable here: PK_FEATURE_CUDA built in, with no GPU present, still makes
 * pk_ctx_create(CUDA) fail with PK_ERR_NO_DEVICE. */
typedef enum pk_feature {
    PK_FEATURE_CUDA = 0, /* the CUDA backend                                 */
    PK_FEATURE_NVRTC,    /* user-defined reductions on CUDA (NVRTC is loaded
                            at run time; without it they fail with
                            PK_ERR_UNSUPPORTED)                              */
    PK_FEATURE_MPI,      /* the distributed API (pk_dist_*)                  */
    PK_FEATURE_NCCL,     /* pk_dist_* on the CUDA backend                    */
    PK_FEATURE_COUNT
} pk_feature;

/* 1 when the feature is built in, 0 when not or f is out of range. */
PK_API int pk_has_feature(pk_feature f);
/* "cuda", "nvrtc", "mpi", "nccl"; "?" out of range. Never NULL. */
PK_API const char *pk_feature_name(pk_feature f);
/* The build as "key=value" lines, each ending in a newline, in this order:
 * version, git (the source revision, "unknown" outside a git checkout),
 * compiler, build_type, openmp, cuda ("no", or the toolkit's version),
 * cuda_arch (the architectures the GPU code was built for), nvrtc, mpi,
 * nccl ("no", or a version or "yes"). Values hold no newline. Never NULL. */
PK_API const char *pk_build_config(void);

/* An environment variable pk reads: its name ("PK_CPU_ISA"), the values it
 * takes, what it changes, and its value now (NULL when unset). */
typedef struct pk_env_var {
    const char *name, *values, *what, *value;
} pk_env_var;
/* Every environment variable pk reads: fills out[i] for i < min(count, max)
 * (out may be NULL) and returns count. `pk info` prints them. */
PK_API int pk_env_vars(pk_env_var *out, int max);

/* ---- Names, sizes, result types ------------------------------------- */

/* Fixed text of a status ("invalid argument", ...). Never NULL. */
PK_API const char *pk_status_str(pk_status s);
/* "f32", "sum", "cpu", ...; "?" for a value out of range. Never NULL. */
PK_API const char *pk_dtype_name(pk_dtype t);
PK_API const char *pk_op_name(pk_op op);
PK_API const char *pk_backend_name(pk_backend b);
/* Bytes per element, or 0 for a value out of range. */
PK_API size_t pk_dtype_size(pk_dtype t);
/* The dtype pk_reduce writes for (op, t), as NumPy would; PK_DTYPE_COUNT if
 * either is out of range. */
PK_API pk_dtype pk_reduce_result_dtype(pk_op op, pk_dtype t);
/* Parse a name as printed by the *_name functions. PK_ERR_ARG if unknown. */
PK_API pk_status pk_dtype_parse(const char *name, pk_dtype *out);
PK_API pk_status pk_op_parse(const char *name, pk_op *out);
PK_API pk_status pk_backend_parse(const char *name, pk_backend *out);

/* ---- Contexts --------------------------------------------------------- */

typedef struct pk_ctx pk_ctx;

/* Create a context on a backend. device picks the CUDA device (ignored by the
 * CPU backend). Errors: PK_ERR_ARG (ctx NULL, unknown backend, negative
 * device, bad PK_BACKEND / PK_CPU_ISA value), PK_ERR_NO_DEVICE (CUDA asked
 * for, none present or the build has no CUDA), PK_ERR_UNSUPPORTED (PK_CPU_ISA
 * names a path this CPU lacks), PK_ERR_NOMEM. On failure *ctx is NULL; the
 * reason is then available through pk_last_create_error(). */
PK_API pk_status pk_ctx_create(pk_ctx **ctx, pk_backend backend, int device);
/* Free a context and everything it owns. NULL is allowed. Waits for the
 * context's outstanding device work first. */
PK_API void pk_ctx_destroy(pk_ctx *ctx);
/* The message of the last failed call on ctx ("" if none). For ctx NULL
 * (after a failed pk_ctx_create, say) or a handle that is not a live
 * context, pk_last_create_error's. Never NULL. */
PK_API const char *pk_ctx_error(const pk_ctx *ctx);
/* The message of the last failed pk_ctx_create (or pk_dist_create) on this
 * thread, or of the last call refused because a handle was NULL, destroyed
 * or not a handle of its type (PK_ERR_ARG: such a handle cannot hold a
 * message; detection of destroyed handles is best effort, docs/API.md). */
PK_API const char *pk_last_create_error(void);
/* The backend the context runs on (never AUTO). */
PK_API pk_backend pk_ctx_backend(const pk_ctx *ctx);
/* Human-readable description of what the context runs on: the CPU SIMD path
 * ("avx512", "avx2", "generic") or the GPU's name. Never NULL. */
PK_API const char *pk_ctx_describe(const pk_ctx *ctx);
/* Limit the CPU threads a context uses (0 = OpenMP's default). Results do
 * not depend on it. PK_ERR_ARG for negative n. */
PK_API pk_status pk_ctx_set_threads(pk_ctx *ctx, int n);
/* CUDA: run the context's work on the caller's cudaStream_t (NULL = the
 * context's own stream). The caller keeps ownership. PK_ERR_ARG for a stream
 * of another device than the context's (CUDA 12.8 and later, where the
 * runtime can tell). PK_ERR_UNSUPPORTED on the CPU backend. */
PK_API pk_status pk_ctx_set_stream(pk_ctx *ctx, void *cuda_stream);
/* Wait for all work issued on the context. A no-op on the CPU. */
PK_API pk_status pk_ctx_sync(pk_ctx *ctx);

/* The CPU SIMD path in use by this process ("avx512", "avx2", "generic"),
 * picked by CPUID at the first context, or by PK_CPU_ISA. */
PK_API const char *pk_cpu_isa(void);
/* The CPU's prefetch profile: "l1" (whole-array loops hint into L1, axis-0
 * sweeps into L2: the avx512 path on Intel and AMD Zen 4 CPUs) or "l2"
 * (whole-array loops hint into L2, axis-0 sweeps into L1 and, further
 * ahead, L2, f32 axis-0 sums the next group of 8 rows into L1: every
 * other case), or what PK_CPU_PREFETCH=l1|l2|auto picks.
 * Timing only: results are the same. */
PK_API const char *pk_cpu_prefetch(void);

/* ---- Kernels ---------------------------------------------------------- */

/* Reduce n elements of x with op; write one value of pk_reduce_result_dtype
 * (op, t) to *out. n = 0: SUM gives 0, PROD gives 1, MIN/MAX/ARGMIN/ARGMAX
 * fail with PK_ERR_ARG (as NumPy raises). out must not overlap x.
 * Deterministic; see the file comment for accuracy and NaN. */
PK_API pk_status pk_reduce(pk_ctx *ctx, pk_op op, pk_dtype t, const void *x,
                           int64_t n, void *out);

/* Reduce a row-major rows x cols matrix with leading dimension ld (elements
 * between row starts, ld >= max(1, cols)) along an axis, as NumPy's axis argument:
 * axis = 0 reduces down each column and writes cols values; axis = 1 reduces
 * along each row and writes rows values. ARGMIN/ARGMAX give indices within
 * the reduced axis. An empty reduced axis is allowed for SUM/PROD only.
 * out must not overlap x. Deterministic. */
PK_API pk_status pk_reduce_axis(pk_ctx *ctx, pk_op op, pk_dtype t,
                                const void *x, int64_t rows, int64_t cols,
                                int64_t ld, int axis, void *out);

/* *out = sum_i x[i]*y[i] for t = PK_F32 or PK_F64; the result has dtype t.
 * x and y may be the same array; out must not overlap either. n = 0 gives 0.
 * Deterministic and compensated (TwoProduct + TwoSum), as the sums. */
PK_API pk_status pk_dot(pk_ctx *ctx, pk_dtype t, int64_t n, const void *x,
                        const void *y, void *out);

/* y[i] = alpha*x[i] + y[i] for t = PK_F32 or PK_F64. *alpha has dtype t and
 * is read from host memory. x and y may be the same array (x == y) but must
 * not overlap otherwise. Each element is computed as one rounding of the
 * exact product plus one of the sum (no fused multiply-add), on every
 * backend and SIMD path. */
PK_API pk_status pk_axpy(pk_ctx *ctx, pk_dtype t, int64_t n,
                         const void *alpha, const void *x, void *y);

/* ---- Matrix multiply ---------------------------------------------------- */

typedef enum pk_trans {
    PK_NO_TRANS = 0, /* op(X) = X   */
    PK_TRANS    = 1  /* op(X) = X^T */
} pk_trans;

/* How pk_gemm may compute. Explicit and never silent: a mode a backend
 * cannot honour fails with PK_ERR_UNSUPPORTED, it is never swapped for
 * another. */
typedef enum pk_gemm_mode {
    PK_GEMM_FP32 = 0,      /* IEEE arithmetic in the dtype (FP32 for f32,
                              FP64 for f64). The default.                  */
    PK_GEMM_TF32,          /* f32 only: tensor cores, inputs rounded to TF32
                              (10-bit mantissa; to nearest, or toward zero
                              on the Hopper wgmma path), FP32 accumulation.
                              CUDA only.                                    */
    PK_GEMM_FP32_ACCURATE, /* f32 only: error no worse than PK_GEMM_FP32; on
                              the GPU split-TF32 ("3xTF32") on tensor cores,
                              on the CPU plain FP32. Inf, NaN and values
                              near FLT_MAX give PK_GEMM_FP32's results (the
                              GPU computes such inputs in FP32).            */
    PK_GEMM_MODE_COUNT
} pk_gemm_mode;

/* C = alpha*op(A)*op(B) + beta*C for row-major (C order) matrices, as
 * cblas_?gemm with CblasRowMajor: op(A) is m x k, op(B) is k x n, C is m x n.
 * t is PK_F32 or PK_F64; alpha and beta point to one value of dtype t in host
 * memory. Leading dimensions count elements between row starts:
 * lda >= max(1, ta ? m : k), ldb >= max(1, tb ? k : n), ldc >= max(1, n).
 * beta = 0 never reads C (C may hold NaN); alpha = 0 or k = 0 never reads A
 * or B and scales C by beta. C must not overlap A or B (A and B may
 * overlap; alpha and beta, host memory, may point into a host C: they are
 * read once, first). m, n or k = 0 is valid. Not deterministic across backends or
 * SIMD paths (the summation order follows the tiling), but the same inputs
 * on the same path give the same bits. Out of memory (PK_ERR_NOMEM) on the
 * CPU backend leaves C unchanged, also with beta != 0. */
PK_API pk_status pk_gemm(pk_ctx *ctx, pk_dtype t, pk_gemm_mode mode,
                         pk_trans ta, pk_trans tb, int64_t m, int64_t n,
                         int64_t k, const void *alpha, const void *A,
                         int64_t lda, const void *B, int64_t ldb,
                         const void *beta, void *C, int64_t ldc);
/* "fp32", "tf32", "fp32_accurate"; "?" out of range. */
PK_API const char *pk_gemm_mode_name(pk_gemm_mode mode);

/* ---- Bit matrices, binary (+-1) matrix multiply, Hamming search --------- *
 *
 * A bit matrix of rows x k bits is stored row-major in 64-bit words
 * (uint64_t): bit j of a row is bit (j % 64) of word j / 64 of that row,
 * least significant bit first; rows start ldw words apart, ldw >=
 * max(1, pk_bits_words(k)). Bits past k in a row's last word are padding: pack
 * writes them as 0, and no kernel lets them reach a result (whatever they
 * hold). Bit 1 stands for +1, bit 0 for -1. */

/* Words per row of k bits: ceil(k / 64); -1 if k < 0. */
PK_API int64_t pk_bits_words(int64_t k);

typedef enum pk_bits_format {
    PK_BITS_F32_SIGN = 0, /* float: pack x >= 0 (also -0.0) as 1, x < 0 as 0,
                             NaN as 0; unpack writes +1.0f / -1.0f          */
    PK_BITS_U8 = 1        /* uint8_t: pack nonzero as 1, 0 as 0; unpack
                             writes 1 / 0                                   */
} pk_bits_format;

/* Pack a rows x k row-major array x (ldx elements between row starts,
 * ldx >= max(1, k)) of format fmt into the bit matrix bits (ldw words
 * between rows). Each row's pk_bits_words(k) words are written, the padding
 * bits of its last word as 0; words past them (ldw larger) are left alone. */
PK_API pk_status pk_bits_pack(pk_ctx *ctx, pk_bits_format fmt, int64_t rows,
                              int64_t k, const void *x, int64_t ldx,
                              uint64_t *bits, int64_t ldw);
/* The inverse: write rows x k elements of format fmt to x. */
PK_API pk_status pk_bits_unpack(pk_ctx *ctx, pk_bits_format fmt, int64_t rows,
                                int64_t k, const uint64_t *bits, int64_t ldw,
                                void *x, int64_t ldx);

/* Binary GEMM: C[i][j] = sum_l a_il * b_jl over the k +-1 entries of row i
 * of A (m x k bits) and row j of B (n x k bits; B is stored transposed, one
 * row per output column) = k - 2 * Hamming(A_i, B_j). C is int32, row-major,
 * ldc >= max(1, n) elements. k must be < 2^31. C must not overlap A or B.
 * Exact, hence deterministic. */
PK_API pk_status pk_bgemm(pk_ctx *ctx, int64_t m, int64_t n, int64_t k,
                          const uint64_t *A, int64_t lda, const uint64_t *B,
                          int64_t ldb, int32_t *C, int64_t ldc);

typedef enum pk_hamming_dtype {
    PK_HAMMING_I32 = 0, /* int32_t distances                                */
    PK_HAMMING_U16 = 1  /* uint16_t distances; needs k <= 65535             */
} pk_hamming_dtype;

/* D[i][j] = Hamming distance between row i of Q (m x k bits) and row j of
 * X (n x k bits), written as dtype dt, row-major with ldd >= max(1, n).
 * k must be < 2^31. D must not overlap Q or X. */
PK_API pk_status pk_hamming(pk_ctx *ctx, pk_hamming_dtype dt, int64_t m,
                            int64_t n, int64_t k, const uint64_t *Q,
                            int64_t ldq, const uint64_t *X, int64_t ldx,
                            void *D, int64_t ldd);

/* For each of the m query rows of Q, the topk rows of the database X (n rows)
 * nearest in Hamming distance, nearest first, ties broken by the lower
 * index: dist (int32) and idx (int64), each m x topk row-major. 1 <= topk <=
 * n; k must be < 2^31 (k = 0: every row ties, idx is 0 .. topk - 1). Does not
 * build the m x n distance matrix. dist and idx must not overlap each other
 * or the inputs. */
PK_API pk_status pk_hamming_topk(pk_ctx *ctx, int64_t m, int64_t n, int64_t k,
                                 const uint64_t *Q, int64_t ldq,
                                 const uint64_t *X, int64_t ldx, int64_t topk,
                                 int32_t *dist, int64_t *idx);

/* ---- Distributed: many processes (MPI) and GPUs (NCCL) ----------------- *
 *
 * A pk_dist spans the processes of an MPI communicator, one process per GPU
 * on the CUDA backend. Every pk_dist_* call is collective: all ranks call it,
 * with the same op, dtype and global shape, each with its own shard. A rank
 * whose arguments are bad, or that cannot get ready (on CUDA, no device
 * memory for staging host data), fails with its own message
 * and every other rank fails too (its status, message naming the rank): no
 * rank hangs. A rank that never comes (it failed, exited, or called
 * something else) cannot be waited for: each collective step waits at most
 * the handle's timeout (pk_dist_set_timeout), then the call returns
 * PK_ERR_COMM with a message naming the step and the time waited, and the
 * pk_dist is failed for good: every later call returns that failure at
 * once; only pk_dist_destroy is left to do (it never blocks). The build
 * needs MPI for these (found at configure time; NCCL too for the CUDA
 * backend); without it they fail with PK_ERR_UNSUPPORTED. */

typedef struct pk_dist pk_dist;

/* Create a distributed context over the communicator *mpi_comm (a pointer to
 * an MPI_Comm; NULL: MPI_COMM_WORLD); MPI must be initialized. MPI_COMM_NULL
 * and intercommunicators are refused (PK_ERR_ARG, on every rank holding
 * them, with no collective call). backend as in pk_ctx_create. CUDA: the
 * rank within its node (the ranks with its MPI processor name) picks the GPU
 * (local rank modulo the node's device count); rank 0 creates the NCCL unique id and broadcasts it over MPI. On
 * failure *d is NULL on every rank and the reason is in
 * pk_last_create_error(). */
PK_API pk_status pk_dist_create(pk_dist **d, pk_backend backend,
                                const void *mpi_comm);
/* Collective. NULL allowed (then on every rank). */
PK_API void pk_dist_destroy(pk_dist *d);
/* The rank's own context: its messages (pk_ctx_error) and its local work. */
PK_API pk_ctx *pk_dist_ctx(const pk_dist *d);
PK_API int pk_dist_rank(const pk_dist *d);
PK_API int pk_dist_size(const pk_dist *d);
/* Seconds one collective step of d may wait for the other ranks before the
 * call fails with PK_ERR_COMM and d is failed (above); 0: wait for ever.
 * Default 600, or PK_DIST_TIMEOUT=<seconds> in the environment at
 * pk_dist_create (a malformed value fails it with PK_ERR_ARG). Local: each
 * rank sets its own. Negative, NaN or infinite: PK_ERR_ARG. */
PK_API pk_status pk_dist_set_timeout(pk_dist *d, double seconds);

/* Reduce the array whose shards the ranks hold in rank order (x: n_local
 * elements on this rank, 0 allowed) with op; every rank gets the result in
 * *out (dtype pk_reduce_result_dtype). ARGMIN/ARGMAX give global indices.
 * Deterministic: each rank's partial (pk_reduce's, before its final
 * rounding) is combined with the others in rank order, so the bits never
 * depend on timing. Integer, min/max and arg results equal pk_reduce over the
 * whole array bit for bit; so do float sums (the partials are double-double:
 * a difference needs cancellation across shards beyond 100 bits); float
 * products are plain f64 products regrouped by the shards and may differ
 * from pk_reduce's in the last bits. */
PK_API pk_status pk_dist_reduce(pk_dist *d, pk_op op, pk_dtype t,
                                const void *x, int64_t n_local, void *out);

/* recv[i] = op over the ranks of send[i], i < n, on every rank; op is
 * PK_SUM, PK_PROD, PK_MIN or PK_MAX. send == recv is allowed (in place, on
 * any of the ranks); otherwise they must not overlap. CPU: MPI_Iallreduce
 * (waited on at most the handle's timeout);
 * CUDA: ncclAllReduce on the context's stream (asynchronous when both
 * buffers are device memory). The order of the ranks' additions is NCCL's
 * or MPI's; min/max with NaN as they define them. */
PK_API pk_status pk_dist_allreduce(pk_dist *d, pk_op op, pk_dtype t,
                                   const void *send, void *recv, int64_t n);

/* C = alpha*op(A)*op(B) + beta*C with A and C sharded by rows: each rank
 * holds m_local rows of op(A) and of C (arguments as pk_gemm: alpha and beta
 * may point into C, they are read once). b_root < 0:
 * every rank holds all of B. b_root = r: only rank r's B is read; it is
 * broadcast in panels of rows of B, each panel's broadcast overlapped with
 * the previous panel's multiply (needs tb = PK_NO_TRANS; other ranks may pass
 * B = NULL, and any ldb). */
PK_API pk_status pk_dist_gemm(pk_dist *d, pk_dtype t, pk_gemm_mode mode,
                              pk_trans ta, pk_trans tb, int64_t m_local,
                              int64_t n, int64_t k, const void *alpha,
                              const void *A, int64_t lda, const void *B,
                              int64_t ldb, int b_root, const void *beta,
                              void *C, int64_t ldc);

typedef struct pk_reducer pk_reducer; /* defined below (C11 allows the repeat) */

/* A user-defined reduction (pk_reducer, below) of the array whose shards the
 * ranks hold in rank order: every rank gets what pk_reducer_reduce would
 * give for the whole array (ARG: a global index; the map's i is the index in
 * the whole array, as on one process). All ranks pass reducers
 * built from the same description for their own context's backend. Each rank
 * reduces its shard (stopped before `final`; ARG reducers run twice, for the
 * index and for the kept value), and the partials are combined in rank order
 * with the reducer's combine, then `final`: element order is kept, the bits
 * never depend on timing, and combines that are exact (min, max, selects)
 * give exactly the single-process result; float sums may differ from it in
 * the last bits (the grouping differs). */
PK_API pk_status pk_dist_reducer_reduce(pk_dist *d, const pk_reducer *red,
                                        const void *x, int64_t n_local,
                                        void *out);

/* ---- User-defined reductions ------------------------------------------ *
 *
 * A reducer is built once from C expressions (or, on the CPU, C functions)
 * and run many times. Every expression evaluates in the accumulator dtype
 * (f32 or f64, as C float or double arithmetic, no contraction):
 *
 *   map      over x (the element, converted to the accumulator dtype) and
 *            i (its index within the reduced range, as a number); NULL = "x"
 *   combine  over a and b: a covers earlier elements than b. It must be
 *            associative with `identity` as its identity; it need not be
 *            commutative: element order is kept in every tree.
 *   final    over r, the combined value; NULL = "r" (VALUE kind only)
 *
 * The language: numbers, x i a b r, INFINITY, NAN, + - * / % (fmod),
 * unary - + !, < <= > >= == != && || (1 or 0), ?:, parentheses, fabs sqrt
 * exp log sin cos floor ceil isnan isinf abs (= fabs), fmin fmax pow min
 * max (min(a,b) = b < a ? b : a; max(a,b) = a < b ? b : a). fmin and fmax
 * are IEEE 754-2019 minimumNumber and maximumNumber: a NaN operand is
 * ignored, -0 < +0 (fmax(-0, +0) = fmax(+0, -0) = +0, fmin gives -0), and
 * two NaNs give the default NaN (+, quiet, payload 0: 0x7fc00000 in f32,
 * 0x7ff8000000000000 in f64), where C's fmin/fmax leave the zero's sign
 * and the NaN open; so they are commutative and associative bit for bit,
 * and every path and tree gives the same bits. The one exception: a lone
 * NaN that meets no combine keeps its bits (on the CPU a single element
 * along axis 0, or a single element with a combine other than exactly
 * fmax/fmin of a and b, comes back as mapped; elsewhere it meets the
 * identity). Other operators do not fix a NaN's payload: where two NaNs
 * meet in a + b or a * b, which one's bits the result keeps can differ
 * between paths, builds and backends (the GPU gives its canonical NaN);
 * that the result is NaN does not. Numbers are C decimal or hexadecimal constants (2, 2.5, .5,
 * 1e-3, 0x1F, 0x1p-3), with an optional f or F suffix on floating ones
 * (1.5f; ignored: the accumulator dtype decides); what C would read
 * otherwise or not at all is refused: octal (010, 08: a leading 0 on an
 * integer), integer suffixes (1u, 1L), 1f, constants out of double's range
 * (1e400), ++ and -- (C's increment and decrement). Numbers are read the
 * same under any LC_NUMERIC locale. An expression holds at most 128
 * operations and operands and nests (parentheses, calls, unary operators,
 * ?:) at most 128 deep. Both backends run the same expressions with the
 * same tree shape per backend; library math functions (exp, sin, ...) may
 * differ in the last bits between the CPU and the GPU.
 *
 * PK_REDUCER_VALUE writes final(combined) as one value of the accumulator
 * dtype. PK_REDUCER_ARG writes the int64 index of the element whose mapped
 * value the combine keeps: where combine(a, b) == a (or both are NaN) a's
 * index is kept, else b's; so fmax(a, b) over fabs(x), identity NAN, gives
 * the first index of the largest magnitude (NaN elements ignored; index 0
 * if all are NaN), and over x the first index of the largest value, -0 and
 * +0 alike (-0 == +0: where 0 is the maximum, the first zero of either
 * sign, while the VALUE is +0 if there is a +0). The identity must be one
 * for every mapped value, NaN included: for fmax and fmin that is NAN, not
 * -INFINITY or INFINITY (fmax(-INFINITY, NaN) is -INFINITY), or results
 * differ between paths. The index depends on the data alone only when the
 * combine returns a on ties (fmax, fmin, max, min do); one that returns b
 * for equal values (isnan(b) ? a : b) gives an index that depends on the
 * tree (path, axis).
 * ARG of an empty range fails with PK_ERR_ARG.
 *
 * The CUDA backend generates CUDA C++ from the expressions, compiles it with
 * NVRTC (loaded at run time: without it, PK_ERR_UNSUPPORTED) to machine code
 * for the device and caches it in memory and on disk: $PK_CACHE_DIR, else
 * ${XDG_CACHE_HOME:-~/.cache}/pk. docs/API.md has the details. */

typedef struct pk_reducer pk_reducer;

typedef enum pk_reducer_kind {
    PK_REDUCER_VALUE = 0, /* the combined value (after final)               */
    PK_REDUCER_ARG = 1    /* the int64 index of the element combine keeps   */
} pk_reducer_kind;

typedef struct pk_reducer_desc {
    pk_dtype input;        /* dtype of the elements (any)                    */
    pk_dtype acc;          /* PK_F32 or PK_F64                               */
    pk_reducer_kind kind;
    const char *map;       /* expression over x, i; NULL = "x"               */
    const char *combine;   /* expression over a, b (required unless
                              combine_fn)                                    */
    double identity;       /* combine(identity, v) = combine(v, identity) = v */
    const char *final;     /* expression over r; NULL = "r"                  */
    /* CPU only: C functions in place of the expressions (evaluated in
     * double, stored in the accumulator dtype). Each may be given instead of
     * its expression, not with it. The CUDA backend refuses them with
     * PK_ERR_UNSUPPORTED. */
    double (*map_fn)(double x, int64_t i, void *user);
    double (*combine_fn)(double a, double b, void *user);
    double (*final_fn)(double r, void *user);
    void *user;
} pk_reducer_desc;

/* Build a reducer for ctx's backend (usable with any context of that
 * backend). Expressions are parsed and checked here: an error is
 * PK_ERR_COMPILE with the expression's name, the 1-based position and the
 * token in the message (a long expression is quoted only around the error;
 * on the GPU, NVRTC's log for code it rejects). Other errors:
 * PK_ERR_ARG (NULL, unknown dtype or kind, final with ARG),
 * PK_ERR_UNSUPPORTED (function pointers on CUDA, NVRTC missing),
 * PK_ERR_DEVICE, PK_ERR_NOMEM. On failure *red is NULL. */
PK_API pk_status pk_reducer_create(pk_ctx *ctx, const pk_reducer_desc *desc,
                                   pk_reducer **red);
/* Free a reducer (NULL allowed). Its contexts' work must be finished. */
PK_API void pk_reducer_destroy(pk_reducer *red);

/* Reduce x[0..n) (dtype desc.input) to one value in *out (the accumulator
 * dtype, or int64 for ARG). n = 0 gives final(identity) (ARG: PK_ERR_ARG).
 * Pointers as for pk_reduce. Deterministic: the tree depends on n only. */
PK_API pk_status pk_reducer_reduce(pk_ctx *ctx, const pk_reducer *red,
                                   const void *x, int64_t n, void *out);
/* As pk_reduce_axis: axis 0 writes cols values, axis 1 writes rows. The
 * index i of map and the ARG result count within the reduced axis. */
PK_API pk_status pk_reducer_reduce_axis(pk_ctx *ctx, const pk_reducer *red,
                                        const void *x, int64_t rows,
                                        int64_t cols, int64_t ld, int axis,
                                        void *out);

/* Where a reducer's GPU code came from (for tests and timing). */
typedef enum pk_reducer_origin {
    PK_REDUCER_INTERPRETED = 0, /* CPU: no machine code is generated      */
    PK_REDUCER_COMPILED,        /* NVRTC compiled it in this call           */
    PK_REDUCER_MEMORY_CACHE,    /* this process had compiled it already     */
    PK_REDUCER_DISK_CACHE       /* loaded from the disk cache               */
} pk_reducer_origin;

typedef struct pk_reducer_info {
    pk_reducer_origin origin;
    int cache_rejected;   /* a disk cache file was found corrupt (ignored,
                             rebuilt and rewritten)                         */
    int cache_written;    /* the disk cache file was written                */
    double build_ms;      /* create: compile or cache load, module load     */
    int nvrtc_version;    /* major*1000 + minor*10; 0 on the CPU            */
    char arch[16];        /* "sm_90"; "" on the CPU                         */
} pk_reducer_info;

PK_API pk_status pk_reducer_get_info(const pk_reducer *red,
                                     pk_reducer_info *info);

#ifdef __cplusplus
}
#endif
#endif /* PK_H */
