/* The CPU GEMM's microkernels and packing, compiled once per ISA (see
 * CMakeLists.txt: PK_GEMM_SYMBOL names the table, the flags pick the ISA)
 * with -ffp-contract=fast, so that a*b + c becomes one FMA where the ISA has
 * it. Results may therefore differ between ISAs in the last bits (pk.h says
 * so for pk_gemm); within one ISA they are deterministic.
 *
 * The microkernel keeps an MR x NR tile of C in vector registers: per step p
 * it loads NV vectors of one packed-B row and broadcasts MR packed-A values,
 * MR*NV independent FMAs. GCC vector extensions, fully unrolled: the
 * accumulators live in registers (checked with objdump: per k step on
 * AVX-512 f32, 2 vmovaps of B, 12 vbroadcastss of A, 24 vfmadd231ps on zmm,
 * no spills; AVX2 the same on ymm with 6 rows). */
#include "gemm.h"

#include <string.h>

#ifndef PK_GEMM_SYMBOL
#error "PK_GEMM_SYMBOL must name the table this build defines"
#endif

/* Microtiles: MR rows x NV vectors of VBYTES. 2 FMA units x 4-cycle latency
 * need >= 8 independent accumulators; the tile takes most of the register
 * file (AVX-512: 24 of 32 zmm; AVX2: 12 of 16 ymm; SSE2: 8 of 16 xmm). */
#if defined(__AVX512F__)
#define VBYTES 64
#define MR 12
#elif defined(__AVX2__)
#define VBYTES 32
#define MR 6
#else
#define VBYTES 16
#define MR 4
#endif
#define NV 2

/* Cache blocks (elements). L1 48 KB holds a kc x NR micro-panel of B (32 KB
 * on AVX-512 f32) plus the streaming A micro-panel; L2 (2 MB) the mc x kc
 * block of A; the shared L3 the kc x nc panel of B. */
#define KC 256
#define MC 384
#define NC 4096

#define INLINE static inline __attribute__((always_inline))

#define DEFINE_GEMM(D, T)                                                   \
    typedef T v##D __attribute__((vector_size(VBYTES)));                    \
    enum { L_##D = VBYTES / sizeof(T), NR_##D = NV * VBYTES / sizeof(T) };  \
                                                                            \
    /* Write back one row of the tile: the full-width row by vectors. */    \
    INLINE void row_full_##D(T *c, const v##D *acc, T alpha,                \
                             const T *beta)                                 \
    {                                                                       \
        for (int v = 0; v < NV; v++) {                                      \
            v##D r = alpha * acc[v], old;                                   \
            if (beta) {                                                     \
                memcpy(&old, c + v * L_##D, sizeof old);                    \
                r = r + *beta * old;                                        \
            }                                                               \
            memcpy(c + v * L_##D, &r, sizeof r);                            \
        }                                                                   \
    }                                                                       \
                                                                            \
    static void ukr_##D(int64_t kc, const void *Ap, const void *Bp,         \
                        void *Cv, int64_t ldc, int rows, int cols,          \
                        const void *alphap, const void *betap)              \
    {                                                                       \
        const T *a = Ap;                                                    \
        const v##D *b = Bp;                                                 \
        T *C = Cv;                                                          \
        v##D acc[MR][NV];                                                   \
        _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)               \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)            \
                acc[i][v] = (v##D){0};                                      \
        for (int64_t p = 0; p < kc; p++) {                                  \
            /* C's rows, one per step: all at once they stall the loop on  \
             * TLB misses (a 2048-wide C has a page per row). */            \
            if (p < rows)                                                   \
                __builtin_prefetch(C + p * ldc, 1, 3),                      \
                    __builtin_prefetch(C + p * ldc + NR_##D - 1, 1, 3);     \
            v##D bv[NV];                                                    \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)            \
                bv[v] = b[v];                                               \
            __builtin_prefetch(a + 8 * MR, 0, 3);                           \
            _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)           \
            {                                                               \
                T ai = a[i];                                                \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)        \
                    acc[i][v] += ai * bv[v];                                \
            }                                                               \
            a += MR;                                                        \
            b += NV;                                                        \
        }                                                                   \
        T alpha = *(const T *)alphap;                                       \
        const T *beta = betap;                                              \
        if (cols == NR_##D) {                                               \
            _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)           \
                if (i < rows) row_full_##D(C + i * ldc, acc[i], alpha, beta); \
            return;                                                         \
        }                                                                   \
        /* Edge tile: through memory, only the valid part. */               \
        T tile[MR][NR_##D];                                                 \
        memcpy(tile, acc, sizeof tile);                                     \
        for (int i = 0; i < rows; i++)                                      \
            for (int j = 0; j < cols; j++) {                                \
                T r = alpha * tile[i][j];                                   \
                C[i * ldc + j] = beta ? r + *beta * C[i * ldc + j] : r;     \
            }                                                               \
    }                                                                       \
                                                                            \
    static void pack_a_##D(const void *Av, int64_t lda, int trans,          \
                           int64_t rows, int64_t kc, void *Apv)             \
    {                                                                       \
        const T *A = Av;                                                    \
        T *Ap = Apv;                                                        \
        for (int64_t i0 = 0; i0 < rows; i0 += MR, Ap += MR * kc) {          \
            int r = rows - i0 < MR ? (int)(rows - i0) : MR;                 \
            if (trans) { /* op(A)(i, p) = A[p*lda + i]: rows contiguous */  \
                for (int64_t p = 0; p < kc; p++) {                          \
                    const T *src = A + p * lda + i0;                        \
                    T *dst = Ap + p * MR;                                   \
                    if (r == MR) memcpy(dst, src, MR * sizeof(T));          \
                    else                                                    \
                        for (int i = 0; i < MR; i++)                        \
                            dst[i] = i < r ? src[i] : 0;                    \
                }                                                           \
            } else if (r == MR) {                                           \
                const T *src[MR];                                           \
                for (int i = 0; i < MR; i++) src[i] = A + (i0 + i) * lda;   \
                for (int64_t p = 0; p < kc; p++)                            \
                    _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)   \
                        Ap[p * MR + i] = src[i][p];                         \
            } else {                                                        \
                for (int64_t p = 0; p < kc; p++)                            \
                    for (int i = 0; i < MR; i++)                            \
                        Ap[p * MR + i] = i < r ? A[(i0 + i) * lda + p] : 0; \
            }                                                               \
        }                                                                   \
    }                                                                       \
                                                                            \
    static void pack_b_##D(const void *Bv, int64_t ldb, int trans,          \
                           int64_t kc, int64_t cols, void *Bpv)             \
    {                                                                       \
        enum { NR = NR_##D };                                               \
        const T *B = Bv;                                                    \
        T *Bp = Bpv;                                                        \
        if (!trans) { /* op(B)(p, j) = B[p*ldb + j]: row by row of B, each \
                         read once, front to back, into every panel */      \
            int64_t full = cols / NR * NR;                                  \
            for (int64_t p = 0; p < kc; p++) {                              \
                const T *src = B + p * ldb;                                 \
                T *dst = Bp + p * NR;                                       \
                for (int64_t j0 = 0; j0 < full; j0 += NR)                   \
                    memcpy(dst + j0 * kc, src + j0, NR * sizeof(T));        \
                for (int j = 0; full < cols && j < NR; j++)                 \
                    dst[full * kc + j] = full + j < cols ? src[full + j] : 0; \
            }                                                               \
            return;                                                         \
        }                                                                   \
        for (int64_t j0 = 0; j0 < cols; j0 += NR, Bp += NR * kc) {          \
            int c = cols - j0 < NR ? (int)(cols - j0) : NR;                 \
            if (c == NR) {                                                  \
                const T *src[NR];                                           \
                for (int j = 0; j < NR; j++) src[j] = B + (j0 + j) * ldb;   \
                for (int64_t p = 0; p < kc; p++)                            \
                    _Pragma("GCC unroll 32") for (int j = 0; j < NR; j++)   \
                        Bp[p * NR + j] = src[j][p];                         \
            } else {                                                        \
                for (int64_t p = 0; p < kc; p++)                            \
                    for (int j = 0; j < NR; j++)                            \
                        Bp[p * NR + j] = j < c ? B[(j0 + j) * ldb + p] : 0; \
            }                                                               \
        }                                                                   \
    }

DEFINE_GEMM(f32, float)
DEFINE_GEMM(f64, double)

#define KERNEL(D)                                                           \
    {.mr = MR, .nr = NR_##D, .kc = KC, .mc = MC, .nc = NC, .ukr = ukr_##D,  \
     .pack_a = pack_a_##D, .pack_b = pack_b_##D}

const pk__gemm_kernels PK_GEMM_SYMBOL = {
    .f32 = KERNEL(f32),
    .f64 = KERNEL(f64),
};
