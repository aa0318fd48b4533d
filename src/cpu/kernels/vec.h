/* Portable SIMD for the CPU kernels: GCC/Clang vector extensions of 64
 * bytes. The compiler lowers them to one zmm (AVX-512), two ymm (AVX2) or
 * four xmm (SSE2) per operation, so one kernel source serves every ISA and,
 * with -ffp-contract=off, gives the same bits on each. */
#ifndef PK_CPU_VEC_H
#define PK_CPU_VEC_H

#include <stdint.h>
#include <string.h>

#define PK__VEC(T, N) __attribute__((vector_size((N) * sizeof(T)))) T

typedef PK__VEC(double, 8) vf64;
typedef PK__VEC(float, 16) vf32;
typedef PK__VEC(float, 8) vf32h;     /* 8 floats: widen to vf64 */
typedef PK__VEC(int64_t, 8) vi64;
typedef PK__VEC(uint64_t, 8) vu64;
typedef PK__VEC(int32_t, 16) vi32;
typedef PK__VEC(uint32_t, 16) vu32;
typedef PK__VEC(int32_t, 8) vi32h;
typedef PK__VEC(uint32_t, 8) vu32h;

/* Software prefetch. One core's read stream is latency-bound and a
 * compensated loop carries ~8 instructions per cache line, so the
 * out-of-order window alone keeps too few lines in flight: every line is
 * hinted into L2 PK__PREFETCH_FAR bytes ahead. On the first machine (a
 * 2-core Xeon; sum f32 2^26 against a plain f32 OpenMP loop) an L1 hint
 * 2 KiB ahead was needed too: none 0.41, L1 only 0.70,
 * L1 + L2 0.96. On the 2-core EPYC (Zen 5) the L1 hint costs: with it
 * 0.92-0.95, without 0.98-1.01, and 1.16x the speed in L3 (2^23); hints
 * every other line instead of every line 0.93. The
 * axis-0 sweeps keep their own hints (PK__AXIS_HINT_GROUP, axis_sweep.h).
 * So the streaming hint of the whole-array loops (PK__PREFETCH_SPAN) has two
 * profiles, compiled into two AVX-512 tables and chosen by the CPU (isa.c):
 * L2 hints PK__PREFETCH_FAR ahead (Zen 5, and every other table), or with
 * PK__PREFETCH_L1_PROFILE L1 hints 3 KiB ahead (Intel, Zen 4). Against the
 * OpenMP loop from DRAM (2^26 f32, 2^25 f64), L2 -> L1 profile: 2-core
 * AVX-512 Xeon VM, sum f32 0.82 -> 0.91, f64 0.86 -> 0.98 (2 and
 * 4 KiB ahead were slower from L3 or DRAM); 2-core Zen 4 VM,
 * sum f32 0.94 -> 0.99, dot f32 0.945 -> 0.97, but in L3 (32 MB) 1.47 ->
 * 1.29x the loop. */
#ifndef PK__PREFETCH_FAR
#define PK__PREFETCH_FAR 8192
#endif
#define PK__PREFETCH(p) __builtin_prefetch((const char *)(p) + PK__PREFETCH_FAR, 0, 2)
/* The two profiles' hints, in one place.
 * Whole-array loops (PK__PREFETCH_STREAM, every line of a loop iteration's
 * span): "l2" hints into L2 PK__PREFETCH_FAR ahead, "l1" into L1 3 KiB ahead.
 * Axis-0 sweeps (PK__AXIS_HINT_GROUP, axis_sweep.h: every line of a
 * group's rows, PK__AXIS_AHEAD bytes ahead in each row's stream): "l2" hints
 * into L1 2 KiB ahead (Zen 5: 0.93-0.97 of the whole sum, four
 * rows a group) and into L2 PK__AXIS_FAR = 12 KiB ahead (Zen 5:
 * 0.73-0.81 -> 0.88-0.98 in memory's fast phase, but 0.90-0.93 ->
 * 0.865-0.88 in its medium one: a trade kept for the larger gain); "l1"
 * hints into L2 4 KiB ahead: on Zen 4 (8192^2 against the
 * whole sum, memory's slow phase, one process alternating builds) L1 hints
 * 2 KiB ahead gave f32 sum 0.80-0.84, max 0.78, argmax 0.81, f64 sum 0.85;
 * L2 hints 4 KiB ahead 0.91-0.97, 1.01, 0.99, 0.96 (2, 6 and 8 KiB ahead:
 * 0.88-0.97). The "l1" profile's other CPU, Intel, has not been measured
 * with either axis-0 hint. */
#if defined(PK__PREFETCH_L1_PROFILE)
#define PK__PREFETCH_L1_STREAM 3072 /* bytes ahead */
#define PK__PREFETCH_STREAM(p)                                              \
    __builtin_prefetch((const char *)(p) + PK__PREFETCH_L1_STREAM, 0, 3)
/* f32 whole-array sums (and long rows) also hint every line into L2 this
 * far ahead (comp_sum.h): their loop spends ~10 vector uops a line
 * (widening, exponent-span check), and on a 2-core Xeon VM (Sapphire
 * Rapids class) L1 hints alone left 2^26 at 0.87-0.96 of the
 * OpenMP loop from DRAM; with this hint 0.96-1.08 (old and new libpk
 * alternating in one process, ten runs; `pk bench` 0.95-1.00 -> 1.04-1.10
 * in fast-memory runs), at 2-4% in L3 (2^22-2^23). A hint every other
 * line gained nothing; 8, 12 or 16 KiB ahead, t1 or t2, all alike. dot,
 * heavier still, lost 2% with it, so only the f32 sums have it. Zen 4
 * (the profile's other CPU) has not been measured with it. */
#define PK__SUM_F32_FAR 12288
/* axpy hints x and y into L1 this far ahead (reduce_kernels.c): the same
 * Xeon VM, old and new libpk alternating in one process, 2^26 f32 24.0-26.1
 * -> 22.6-25.3 ms, 3-6% in each of five runs, 2^24 5-7% (two); an
 * intrinsics probe gave 2-4% (six runs), and non-temporal stores of y lost
 * 12%. Zen 4 has not been measured with it. y's hint is a write hint
 * (PREFETCHW: -mprfchw, CMakeLists.txt); as a read hint, 2^26
 * f32 ran at 1.00x OpenBLAS instead of 1.10x (huge pages, same probe). */
#define PK__AXPY_AHEAD 3072
/* ... and walks a range as two halves taking turns of this many bytes: four
 * streams a core instead of two. The same VM, `cblas_saxpy`
 * and pk's loop in one process (bursts after a settle, rotating order,
 * 15-25 rounds): OpenBLAS / this 1.05-1.11 at 2^26 f32 in eight runs
 * (chunks of 2^14-2^20 elements, hints 2-4 KiB ahead), 1.12-1.13 at
 * 2^24-2^25, against 0.97-1.03 for the one-stream loop; turns of 512 B to
 * 2 KiB alike, 4 KiB 1.02; four or eight parts no better (0.94-1.09). */
#define PK__AXPY_TURN 2048
/* ... from this many bytes of x: the multi-threaded driver's chunks (2^16
 * elements) and single-threaded calls as long. Shorter calls, likely in
 * L1/L2, are not hinted: one thread, warm, the hinted loop (then one vector a
 * step) took 4-6% longer at 16384 and 65536 f32 and the same at 131072. */
#define PK__AXPY_HINTED 262144
#define PK__AXIS_AHEAD 4096
#define PK__AXIS_LOCALITY 2 /* prefetcht1: L2 */
#define PK__AXIS_FAR 0      /* no second hint: not measured here */
#define PK__AXIS_BLOCK_ROWS 0 /* f32 sums: 4-row groups, hinted as above */
#else
#define PK__PREFETCH_STREAM(p) PK__PREFETCH(p)
#define PK__SUM_F32_FAR 0 /* the L2 hint above is already far */
#define PK__AXPY_AHEAD 0  /* axpy: no hints (at the loop's speed on Zen 5) */
#define PK__AXPY_TURN 0   /* and one stream (not measured there) */
#define PK__AXPY_HINTED 0
#define PK__AXIS_AHEAD 2048
#define PK__AXIS_LOCALITY 3 /* prefetcht0: L1 */
#define PK__AXIS_FAR 12288  /* and into L2 this far ahead (axis_sweep.h) */
/* f32 sums: groups of 8 rows, the next group hinted (comp_sum.h), with
 * AVX-512 only: on the avx2 and generic paths (64-byte vectors in two or
 * four registers, or in memory under GCC) 8192^2 ran 6-27% slower. */
#if defined(__AVX512F__)
#define PK__AXIS_BLOCK_ROWS 8
#else
#define PK__AXIS_BLOCK_ROWS 0
#endif
#endif
#define PK__PREFETCH_SPAN(p, bytes)                                         \
    do {                                                                    \
        for (int o_ = 0; o_ < (int)(bytes); o_ += 64)                       \
            PK__PREFETCH_STREAM((const char *)(p) + o_);                    \
    } while (0)
/* Hint every line of [p, p + bytes) `ahead` bytes ahead (rw 1: lines about
 * to be written; locality as __builtin_prefetch's), or nothing where ahead
 * is 0: the profiles' extra hints (PK__SUM_F32_FAR, PK__AXPY_AHEAD). */
#define PK__HINT_LINES(p, bytes, ahead, rw, locality)                      \
    do {                                                                    \
        if ((ahead) > 0)                                                    \
            for (int o_ = 0; o_ < (int)(bytes); o_ += 64)                   \
                __builtin_prefetch((const char *)(p) + o_ + (ahead), rw, locality); \
    } while (0)
/* PK__PREFETCH every line of [p, p + bytes). */
#define PK__PREFETCH_RANGE(p, bytes)                                        \
    do {                                                                    \
        const char *q_ = (const char *)(p);                                 \
        for (int64_t o_ = 0; o_ < (int64_t)(bytes); o_ += 64) PK__PREFETCH(q_ + o_); \
    } while (0)
/* A shallow column task (a few rows of a chunk of columns) reads a few short
 * segments; fetch the next chunk's segments of every row while this one runs
 * (past the matrix's end is harmless: prefetches never fault). */
#define PK__SHALLOW_ROWS 16
#define PK__PREFETCH_NEXT_CHUNK(x, rows, cols, ld, size)                    \
    do {                                                                    \
        if ((rows) <= PK__SHALLOW_ROWS)                                     \
            for (int64_t r_ = 0; r_ < (rows); r_++) {                       \
                const char *p_ = (const char *)((x) + r_ * (ld) + (cols));  \
                for (int64_t o_ = 0; o_ < (int64_t)((cols) * (size)); o_ += 64) \
                    __builtin_prefetch(p_ + o_, 0, 2);                      \
            }                                                               \
    } while (0)
/* Hint every line of the next row segment into L2: a short strided segment
 * is a fresh stream (often a fresh 4 KB page) that the hardware prefetcher
 * picks up late. To L2, not L1: a burst of L1 prefetches stalls on the fill
 * buffers (measured on 512-column axis-0 tasks, before those were swept 8
 * rows at a time: 0.62 of the whole-array sum with L1 hints, 0.77 with L2). */
#define PK__PREFETCH_ROW(p, bytes)                                          \
    do {                                                                    \
        const char *p_ = (const char *)(p);                                 \
        for (int64_t o_ = 0; o_ < (int64_t)(bytes); o_ += 64)               \
            __builtin_prefetch(p_ + o_, 0, 2);                              \
    } while (0)
/* Unaligned load of a whole vector. */
#define PK__LOAD(V, p) ({ V v_; memcpy(&v_, (p), sizeof v_); v_; })
/* Lane-wise m ? a : b, m a compare result (all ones / all zeros). */
#define PK__SEL(V, M, m, a, b) ((V)(((M)(a) & (m)) | ((M)(b) & ~(m))))

/* Error-free transformation on vectors or scalars (needs no contraction):
 * s + e == a + b exactly (Knuth's TwoSum). */
#define PK__TWO_SUM(a, b, s, e)                               \
    do {                                                      \
        __typeof__((a) + (a)) z_;                                     \
        (s) = (a) + (b);                                      \
        z_ = (s) - (a);                                       \
        (e) = ((a) - ((s) - z_)) + ((b) - z_);                \
    } while (0)

#endif
