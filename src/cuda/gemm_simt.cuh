/* FP32 (and f64) GEMM on the CUDA cores: a SIMT kernel with block, warp and
 * register tiling; shared by gemm_simt.cu (plans, f64, f32 NN) and
 * gemm_simt_layouts.cu (f32 TN, NT, TT: other ptxas options, see there).
 *
 * A block computes a BM x BN tile of C with (BM/64) x (BN/32) warps; a warp
 * a 64 x 32 tile; a lane an 8 x 8 tile made of 2 x 2 blocks of 4 x 4 (rows
 * lm*4 + {0, 32}, columns ln*4 + {0, 16}), so that each k step reads its
 * 8 + 8 operands with four 16-byte shared loads that are conflict-free (the
 * 8 lanes of a row group read 128 consecutive bytes; the rest broadcast) and
 * issues 64 FMAs. Tiles of op(A) and op(B)^T are held in shared memory
 * k-major ([k][row], rows padded by 4 elements) in two buffers: the next
 * BK-slice is loaded from global memory into registers (16-byte vectors when
 * aligned) while the current one is multiplied, then stored, with one
 * barrier per slice (in f32, before the slice's last step: k_loop_f32).
 * A k-contiguous operand is transposed on that store; the
 * padding makes the 2 lanes per row land in different banks. */
#ifndef PK_CUDA_GEMM_SIMT_CUH
#define PK_CUDA_GEMM_SIMT_CUH

#include "cuda/gemm.cuh"

namespace pk_cuda {

namespace {

constexpr int kBK = 8;   /* k per shared-memory slice */
constexpr int kPad = 4;  /* row padding of the shared tiles (elements) */

/* 4 consecutive elements: one 16-byte load for f32, two for f64. */
__device__ __forceinline__ void ld4(const float *p, float v[4])
{
    float4 x = __ldg(reinterpret_cast<const float4 *>(p));
    v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
}
__device__ __forceinline__ void ld4(const double *p, double v[4])
{
    double2 x = __ldg(reinterpret_cast<const double2 *>(p));
    double2 y = __ldg(reinterpret_cast<const double2 *>(p) + 1);
    v[0] = x.x, v[1] = x.y, v[2] = y.x, v[3] = y.y;
}
__device__ __forceinline__ void lds4(const float *p, float v[4])
{
    float4 x = *reinterpret_cast<const float4 *>(p);
    v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
}
__device__ __forceinline__ void lds4(const double *p, double v[4])
{
    double2 x = reinterpret_cast<const double2 *>(p)[0];
    double2 y = reinterpret_cast<const double2 *>(p)[1];
    v[0] = x.x, v[1] = x.y, v[2] = y.x, v[3] = y.y;
}
__device__ __forceinline__ void st4(float *p, const float v[4])
{
    *reinterpret_cast<float4 *>(p) = make_float4(v[0], v[1], v[2], v[3]);
}
__device__ __forceinline__ void st4(double *p, const double v[4])
{
    reinterpret_cast<double2 *>(p)[0] = make_double2(v[0], v[1]);
    reinterpret_cast<double2 *>(p)[1] = make_double2(v[2], v[3]);
}

/* One operand's BK-slice in flight: ROWS x kBK elements of the logical
 * rows x k matrix, loaded by NT threads as runs of 4 elements along the
 * operand's contiguous dimension, kept in registers until stored k-major. */
template <class T, int ROWS, int NT, bool KC>
struct Slice {
    static constexpr int kRuns = ROWS * kBK / 4 / NT;
    static_assert(kRuns >= 1 && ROWS * kBK % (4 * NT) == 0, "tile / threads");
    T v[kRuns][4];

    /* Tile coordinates of run i of thread tid. */
    static __device__ __forceinline__ void at(int tid, int i, int &row, int &kk)
    {
        const int run = tid + i * NT;
        if (KC) {
            row = run / (kBK / 4);
            kk = run % (kBK / 4) * 4;
        } else {
            kk = run / (ROWS / 4);
            row = run % (ROWS / 4) * 4;
        }
    }

    const T *src[kRuns]; /* the run's first element in the next slice */
    int rows_ok[kRuns];  /* KC: 4 when the run's row exists, else 0;
                            else: how many of its 4 rows exist (0..4) */

    __device__ __forceinline__ void init(const Opnd<T> &o, int64_t nrows, int64_t r0, int tid)
    {
#pragma unroll
        for (int i = 0; i < kRuns; i++) {
            int row, kk;
            at(tid, i, row, kk);
            const int64_t gr = r0 + row, left = nrows - gr;
            rows_ok[i] = KC ? (left > 0 ? 4 : 0) : int(left < 0 ? 0 : left > 4 ? 4 : left);
            src[i] = rows_ok[i] ? (KC ? o.p + gr * o.ld + kk : o.p + kk * o.ld + gr) : o.p;
        }
    }

    /* Load the slice at k0 (k0 advances by kBK per call). */
    __device__ __forceinline__ void load(const Opnd<T> &o, int64_t K, int64_t k0, int tid)
    {
        const int64_t step = KC ? kBK : kBK * o.ld;
#pragma unroll
        for (int i = 0; i < kRuns; i++) {
            int row, kk;
            at(tid, i, row, kk);
            const int64_t kleft = K - k0 - kk;
            /* Valid run elements: KC along k, else along rows. */
            const int lim = KC ? (kleft < rows_ok[i] ? int(kleft < 0 ? 0 : kleft) : rows_ok[i])
                               : (kleft > 0 ? rows_ok[i] : 0);
            if (o.vec && lim == 4) {
                ld4(src[i], v[i]);
            } else {
#pragma unroll
                for (int j = 0; j < 4; j++) v[i][j] = j < lim ? __ldg(src[i] + j) : T(0);
            }
            if (rows_ok[i]) src[i] += step;
        }
    }

    /* ROT: each group of 4 rows is stored rotated, position p holding row
     * (p + 1) % 4 of the group (kRotateB). */
    template <bool ROT = false>
    __device__ __forceinline__ void store(T (*s)[ROWS + kPad], int tid) const
    {
#pragma unroll
        for (int i = 0; i < kRuns; i++) {
            int row, kk;
            at(tid, i, row, kk);
            if (KC) {
                const int pos = ROT ? (row & ~3) | ((row + 3) & 3) : row;
#pragma unroll
                for (int j = 0; j < 4; j++) s[kk + j][pos] = v[i][j];
            } else if (ROT) {
                const T w[4] = {v[i][1], v[i][2], v[i][3], v[i][0]};
                st4(&s[kk][row], w);
            } else {
                st4(&s[kk][row], v[i]);
            }
        }
    }
};

__device__ __forceinline__ float mad(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ __forceinline__ double mad(double a, double b, double c) { return __fma_rn(a, b, c); }

/* C element update: alpha*acc (+ beta*c unless beta is 0: C is not read). */
template <class T>
__device__ __forceinline__ T update(T acc, T alpha, T beta, const T *c)
{
    return beta == T(0) ? alpha * acc : mad(beta, *c, alpha * acc);
}

/* Resident blocks asked of the register allocator: 2 x 256 or 3 x 128
 * threads for f32 (at most 128 or 170 registers: 64 accumulators, 16
 * operands, the slices in flight), one block for f64. */
constexpr int min_blocks(int threads, bool f32)
{
    return f32 ? (threads >= 256 ? 2 : 3) : 1;
}

/* f32 except TT: B tiles are stored with each group of 4 columns rotated,
 * so that the 16-byte load of a lane's 4 columns puts column c of the group
 * in register (c + 3) % 4 of its quad, while the accumulators of those
 * columns sit in aligned quads at c (their 16-byte stores need that): an
 * FFMA then never reads its B value and its accumulator from registers of
 * one parity. An FFMA whose three sources all have one parity (one of the
 * two register banks) stalls dispatch: Nsight Compute showed 0.73 dispatch
 * stalls an issued instruction at 4096^3 on an H100, against 0.10 for
 * cuBLAS's hand-scheduled SIMT kernel. Whether ptxas then keeps the parities
 * apart depends on the layout and its options: NN with the default options
 * (such FFMAs 20% -> 1%, 3.4-5.5% faster at 2048^3-8192^3), TN and NT only
 * with --register-usage-level=0 (gemm_simt_layouts.cu; 20% -> 0%), while TT
 * is at 1% there without the rotation and 23% with it (H100;
 * docs/CUDA.md, "GEMM"). f64 (register pairs) keeps the plain layout. */
template <class T, bool KA, bool KB> constexpr bool kRotateB = sizeof(T) == 4 && (KA || !KB);

/* The k loop of the f32 kernels for sm_90 on. As the kernel's own loop
 * (below), slice kt + 1 is loaded into registers while slice kt is
 * multiplied, but the fragments of step kk + 1 are loaded while step kk's
 * FMAs run, and the next slice is stored and the barrier passed before the
 * last step's FMAs, which then cover the next slice's first fragment loads
 * (in the kernel's loop they wait after every barrier). The same products in
 * the same order: the same bits. H200, same build: 4096^3 (as
 * TN) 3.04-3.06 -> 3.00-3.01 ms, 8192^3 24.0 -> 23.9, 1024^3 (4 splits)
 * 68.4-69.7 -> 65.2-66.6 us. f64 keeps the kernel's loop (ptxas spilled its
 * 64 x 64 tiles with this one, up to 236 bytes), and so does code for GPUs
 * before sm_90 (its 128 x 128 f32 kernels spilled 8-20 bytes). */
template <bool ROT, class T, class LA, class LB, int RA, int RB>
__device__ __forceinline__ void k_loop_f32(LA &la, LB &lb, const Opnd<T> &oa, const Opnd<T> &ob,
                                           int64_t K, int64_t nk, T (*sA)[kBK][RA],
                                           T (*sB)[kBK][RB], T (&acc)[8][8], int arow,
                                           int bcol, int tid)
{
    T fa[2][8], fb[2][8];
    lds4(&sA[0][0][arow], fa[0]);
    lds4(&sA[0][0][arow + 32], fa[0] + 4);
    lds4(&sB[0][0][bcol], fb[0]);
    lds4(&sB[0][0][bcol + 16], fb[0] + 4);
    for (int64_t kt = 0; kt < nk; kt++) {
        const int buf = int(kt & 1);
        const bool more = kt + 1 < nk;
        if (more) {
            la.load(oa, K, (kt + 1) * kBK, tid);
            lb.load(ob, K, (kt + 1) * kBK, tid);
        }
#pragma unroll
        for (int kk = 0; kk < kBK; kk++) {
            const int cur = kk & 1, nxt = cur ^ 1;
            /* Next step's fragments: this slice's, or after the barrier the
             * next slice's first. */
            const int nb = kk + 1 < kBK ? buf : buf ^ 1, nk1 = kk + 1 < kBK ? kk + 1 : 0;
            if (kk == kBK - 1) {
                if (more) {
                    la.store(sA[buf ^ 1], tid);
                    lb.template store<ROT>(sB[buf ^ 1], tid);
                }
                __syncthreads();
            }
            if (kk + 1 < kBK || more) {
                lds4(&sA[nb][nk1][arow], fa[nxt]);
                lds4(&sA[nb][nk1][arow + 32], fa[nxt] + 4);
                lds4(&sB[nb][nk1][bcol], fb[nxt]);
                lds4(&sB[nb][nk1][bcol + 16], fb[nxt] + 4);
            }
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++)
                    acc[i][j] = mad(fa[cur][i], fb[cur][ROT ? (j & ~3) | ((j + 3) & 3) : j],
                                    acc[i][j]);
        }
    }
}

/* A lane's 8 x NJ tile of C (rows r0 + {0..3, 32..35}, columns c0 +
 * {0..3, 16..19, ...}: NJ / 4 runs of 4, 16 apart) = alpha*acc (+ beta*C):
 * 16-byte accesses of C where aligned and inside. */
template <class T, int NJ>
__device__ __forceinline__ void store_c_tile(const Prob<T> &p, T *cb, const T (&acc)[8][NJ],
                                             int64_t r0, int64_t c0)
{
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const int64_t gm = r0 + (i & 3) + (i >> 2) * 32;
        if (gm >= p.m) continue;
        T *crow = cb + gm * p.ldc;
#pragma unroll
        for (int h = 0; h < NJ / 4; h++) {
            const int64_t gn = c0 + h * 16;
            T *c = crow + gn;
            if (p.c_vec && gn + 4 <= p.n) {
                T v[4], old[4] = {T(0), T(0), T(0), T(0)};
                if (p.beta != T(0)) lds4(c, old); /* generic 16-byte load */
#pragma unroll
                for (int j = 0; j < 4; j++) v[j] = update(acc[i][h * 4 + j], p.alpha, p.beta, &old[j]);
                st4(c, v);
            } else {
#pragma unroll
                for (int j = 0; j < 4; j++)
                    if (gn + j < p.n) c[j] = update(acc[i][h * 4 + j], p.alpha, p.beta, c + j);
            }
        }
    }
}

template <class T, int BM, int BN, bool KA, bool KB, bool GUARD = false>
__global__ void __launch_bounds__((BM / 64) * (BN / 32) * 32,
                                  min_blocks((BM / 64) * (BN / 32) * 32, sizeof(T) == 4))
k_gemm_simt(Prob<T> p, const int *run_if)
{
    constexpr int NT = (BM / 64) * (BN / 32) * 32;
    __shared__ __align__(16) T sA[2][kBK][BM + kPad];
    __shared__ __align__(16) T sB[2][kBK][BN + kPad];

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / (BN / 32), wn = warp % (BN / 32);
    const int lm = lane >> 2, ln = lane & 3;
    const int64_t m0 = int64_t(blockIdx.x) * BM, n0 = int64_t(blockIdx.y) * BN;
    const int arow = wm * 64 + lm * 4, bcol = wn * 32 + ln * 4;

    Slice<T, BM, NT, KA> la;
    Slice<T, BN, NT, KB> lb;
    Opnd<T> oa = p.a, ob = p.b;
    int64_t K = p.k;
    T *cb = p.c;
    if (gridDim.z > 1) { /* this block's k range (a multiple of kBK) */
        const int64_t k0 = int64_t(blockIdx.z) * p.kchunk;
        K = p.k - k0 < p.kchunk ? p.k - k0 : p.kchunk;
        oa.p += KA ? k0 : k0 * oa.ld;
        ob.p += KB ? k0 : k0 * ob.ld;
        cb += int64_t(blockIdx.z) * p.split_stride;
    }
    /* The guard is a separate instantiation (and not a Prob field): either
     * moved ptxas's schedule of the plain kernel (4096^3 3.22 -> 3.4 ms on
     * an H100). */
    if constexpr (GUARD)
        if (!flag_raised(run_if)) return;
    T acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = T(0);

    const int64_t nk = (K + kBK - 1) / kBK;
    la.init(oa, p.m, m0, tid);
    lb.init(ob, p.n, n0, tid);
    la.load(oa, K, 0, tid);
    lb.load(ob, K, 0, tid);
    constexpr bool rot = kRotateB<T, KA, KB>;
    la.store(sA[0], tid);
    lb.template store<rot>(sB[0], tid);
    __syncthreads();

    /* The sm_80 pass spilled 8-20 bytes with k_loop_f32 (none without). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
    constexpr bool early = false;
#else
    constexpr bool early = sizeof(T) == 4;
#endif
    if constexpr (early) {
        k_loop_f32<rot>(la, lb, oa, ob, K, nk, sA, sB, acc, arow, bcol, tid);
    } else {
        for (int64_t kt = 0; kt < nk; kt++) {
            const int buf = int(kt & 1);
            const bool more = kt + 1 < nk;
            if (more) {
                la.load(oa, K, (kt + 1) * kBK, tid);
                lb.load(ob, K, (kt + 1) * kBK, tid);
            }
#pragma unroll
            for (int kk = 0; kk < kBK; kk++) {
                T a[8], b[8];
                lds4(&sA[buf][kk][arow], a);
                lds4(&sA[buf][kk][arow + 32], a + 4);
                lds4(&sB[buf][kk][bcol], b);
                lds4(&sB[buf][kk][bcol + 16], b + 4);
                /* Column c of a group is in b[(c + 3) % 4] when rotated. */
#pragma unroll
                for (int i = 0; i < 8; i++)
#pragma unroll
                    for (int j = 0; j < 8; j++)
                        acc[i][j] = mad(a[i], b[rot ? (j & ~3) | ((j + 3) & 3) : j], acc[i][j]);
            }
            if (more) {
                la.store(sA[buf ^ 1], tid);
                lb.template store<rot>(sB[buf ^ 1], tid);
            }
            __syncthreads();
        }
    }

    store_c_tile(p, cb, acc, m0 + arow, n0 + bcol);
}

/* C = sum of the splits' partials (in split order: deterministic) + beta*C;
 * beta = 0 does not read C. A thread takes 4 consecutive elements of a row,
 * with 16-byte accesses when VEC (n a multiple of 4, C fit for vectors);
 * one element a thread, each with a 64-bit division, cost about 3 us more
 * at 1024^3 with 4 splits (H100: 73.6 -> 70.3 us). */
template <class T, bool VEC>
__global__ void k_split_sum(const T *ws, int splits, int64_t m, int64_t n, T *c, int64_t ldc,
                            T beta)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    /* Launched as a programmatic dependent of the GEMM grid: wait for it
     * (all of its blocks done, their partials visible). Without that launch
     * attribute this returns at once. */
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    const int64_t total = m * n, nq = (n + 3) / 4;
    for (int64_t q = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; q < m * nq;
         q += int64_t(gridDim.x) * blockDim.x) {
        const int64_t r = q / nq, j = (q - r * nq) * 4;
        const T *w = ws + r * n + j;
        T *e = c + r * ldc + j;
        if (VEC) {
            T sum[4], v[4];
            ld4(w, sum);
            for (int z = 1; z < splits; z++) {
                ld4(w + z * total, v);
#pragma unroll
                for (int t = 0; t < 4; t++) sum[t] += v[t];
            }
            if (beta != T(0)) {
                lds4(e, v); /* generic 16-byte load */
#pragma unroll
                for (int t = 0; t < 4; t++) sum[t] = mad(beta, v[t], sum[t]);
            }
            st4(e, sum);
        } else {
            const int cnt = n - j < 4 ? int(n - j) : 4;
            for (int t = 0; t < cnt; t++) {
                T sum = w[t];
                for (int z = 1; z < splits; z++) sum += w[z * total + t];
                e[t] = beta == T(0) ? sum : mad(beta, e[t], sum);
            }
        }
    }
}

/* k_split_sum after the GEMM grid. On sm_90 and later as a programmatic
 * dependent launch: it is launched as the GEMM's blocks exit (their
 * implicit trigger) and waits in griddepcontrol for the grid's completion
 * and memory, instead of launching after both. 1-3 us less per split call
 * on an H100 (1024^3 70.4-71.6 -> 68.7-68.8 us, 256^3 19.4-20.0 ->
 * 17.4-17.6). An explicit trigger at the
 * GEMM's start gained no more and moved ptxas's schedule of the GEMM
 * kernels (NT 2048^3 +2-4%), so they stay as they were. */
template <class T, bool VEC>
cudaError_t launch_split_sum(State *s, unsigned grid, const T *ws, int splits, int64_t m,
                             int64_t n, T *c, int64_t ldc, T beta)
{
    /* Only where the code the device runs has the wait: an sm_90+ device
     * given PTX below compute_90 (a build for 80 only, JIT-compiled) runs
     * k_split_sum without it, and the GEMM's exit does not make its
     * partials visible. Every k_split_sum is built for the same
     * architectures, so one answer a context (a device) serves them all. */
    if (s->split_sum_pdl < 0) {
        cudaFuncAttributes fa;
        bool ok = false;
        if (s->cc_major >= 9) {
            if (cudaFuncGetAttributes(&fa, k_split_sum<T, VEC>) == cudaSuccess)
                ok = fa.ptxVersion >= 90;
            else
                (void)cudaGetLastError(); /* then plain launches */
        }
        s->split_sum_pdl = ok ? 1 : 0;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(kThreads);
    cfg.stream = s->stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = s->split_sum_pdl > 0 ? 1 : 0;
    return cudaLaunchKernelEx(&cfg, k_split_sum<T, VEC>, ws, splits, m, n, c, ldc, beta);
}

/* splits > 1: block z sums its k range into a workspace, and a second
 * kernel adds the splits in order and applies beta (deterministic). */
template <class T, int BM, int BN, bool KA, bool KB>
pk_status launch_one(pk_ctx *ctx, const Prob<T> &p, int64_t splits)
{
    constexpr int NT = (BM / 64) * (BN / 32) * 32;
    State *s = state(ctx);
    if (splits > 1 && p.n <= int64_t(65535) * BN) {
        const int64_t kchunk = ((p.k + splits - 1) / splits + kBK - 1) / kBK * kBK;
        splits = (p.k + kchunk - 1) / kchunk;
        DevScratch ws(s);
        pk_status st = dev_alloc(ctx, &ws.p, size_t(splits * p.m * p.n) * sizeof(T));
        if (st) return st;
        Prob<T> q = p;
        q.c = static_cast<T *>(ws.p), q.ldc = p.n, q.beta = T(0);
        q.c_vec = (p.n * int64_t(sizeof(T))) % 16 == 0;
        q.kchunk = kchunk, q.split_stride = p.m * p.n;
        const dim3 grid(unsigned((p.m + BM - 1) / BM), unsigned((p.n + BN - 1) / BN),
                        unsigned(splits));
        k_gemm_simt<T, BM, BN, KA, KB><<<grid, NT, 0, s->stream>>>(q, nullptr);
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess) {
            const int64_t blocks = (p.m * ((p.n + 3) / 4) + kThreads - 1) / kThreads;
            const unsigned g = unsigned(blocks < 4096 ? blocks : 4096);
            if (p.n % 4 == 0 && p.c_vec)
                e = launch_split_sum<T, true>(s, g, q.c, int(splits), p.m, p.n, p.c, p.ldc, p.beta);
            else
                e = launch_split_sum<T, false>(s, g, q.c, int(splits), p.m, p.n, p.c, p.ldc,
                                               p.beta);
            if (e == cudaSuccess) e = cudaGetLastError();
        }
        if (e != cudaSuccess) return fail_cuda(ctx, e, "k_gemm_simt (split k) launch");
        return PK_OK;
    }
    return over_column_slabs(p.n, BN, [&](int64_t c0, int64_t w) -> pk_status {
        const Prob<T> q = column_slab(p, KB, c0, w);
        const dim3 grid(unsigned((q.m + BM - 1) / BM), unsigned((q.n + BN - 1) / BN));
        k_gemm_simt<T, BM, BN, KA, KB><<<grid, NT, 0, s->stream>>>(q, nullptr);
        PK_CU_LAUNCH(ctx, "k_gemm_simt launch");
        return PK_OK;
    });
}

/* The guarded FP32 kernel: 128 x 128 tiles, no split k, so that one
 * kernel per layout holds the check (a rare path: the non-finite fallback
 * of FP32_ACCURATE, gemm.cu). */
template <bool KA, bool KB>
pk_status launch_guarded(pk_ctx *ctx, const Prob<float> &p, const int *run_if)
{
    cudaStream_t st = state(ctx)->stream;
    return over_column_slabs(p.n, 128, [&](int64_t c0, int64_t w) -> pk_status {
        const Prob<float> q = column_slab(p, KB, c0, w);
        const dim3 grid(unsigned((q.m + 127) / 128), unsigned((q.n + 127) / 128));
        k_gemm_simt<float, 128, 128, KA, KB, true><<<grid, 256, 0, st>>>(q, run_if);
        PK_CU_LAUNCH(ctx, "k_gemm_simt (guarded) launch");
        return PK_OK;
    });
}

} // namespace

/* f32 with op(A), op(B) not both as in NN (ka && !kb): 128 x 128 tiles when
 * wide, else 128 x 64 (gemm_simt_layouts.cu). */
pk_status gemm_simt_f32_layouts(pk_ctx *ctx, const Prob<float> &p, bool ka, bool kb, bool wide,
                                int64_t splits);
/* The guarded kernel (gemm_simt_f32_guarded) for those layouts. */
pk_status gemm_simt_f32_layouts_guarded(pk_ctx *ctx, const Prob<float> &p, bool ka, bool kb,
                                        const int *run_if);

} // namespace pk_cuda

#endif
