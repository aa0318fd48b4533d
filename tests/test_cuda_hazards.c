/* The CUDA backend's memory, stream and asynchrony hazards, and the parts of
 * outputs no call may write: each case against a plain host reference. The
 * cases run each in its own process (tests/cuda_cases.h): "test_cuda_hazards
 * NAME" runs one. Skips (77) without a GPU.
 *
 *   pinned_reuse       page-locked x overwritten right after a call that writes
 *                      its result to device memory returned: the result must be
 *                      that of the data at the call, for pk_reducer calls (the
 *                      copy of x in src/cuda/udr.cu's device_input) as for the
 *                      built-in ones: no call returns while the device still
 *                      reads x.
 *   notready           a host-result pk_reduce long enough that its wait calls
 *                      cudaStreamQuery (cudaErrorNotReady), then calls whose
 *                      launch check reads cudaGetLastError (<<<>>> launches:
 *                      gemm's k_scale, k_pack, k_cols): they must succeed (the
 *                      wait's NotReady is no launch error). A guard: the CUDA 13
 *                      runtime does not keep NotReady as its last error.
 *   host_reuse_async   calls with device results, their pageable and page-locked
 *                      host inputs reused at once, on the context's stream and
 *                      on an adopted one (staging buffers, scratch, streams):
 *                      results must be those of the inputs at the call.
 *   chain              pk_axpy, then pk_reduce and pk_dot of its output, over
 *                      and over with device results and no sync between: each
 *                      call must read what the one before it wrote (a launch
 *                      allowed to overlap the kernel ahead of it, such as a
 *                      programmatic dependent launch without griddepcontrol's
 *                      wait, would not).
 *   gaps               pk_gemm, pk_bits_pack/unpack, pk_hamming, pk_bgemm with
 *                      ld > width, host and device outputs: gaps never written;
 *                      alpha and beta pointing into a host C; beta = 0 over NaN.
 */
#define _GNU_SOURCE
#include "cuda_cases.h"

/* ---- gaps ------------------------------------------------------------------- */

static float small_int(void) { return (float)((int)(pk_test_next() % 7) - 3); }

static void gaps_gemm(pk_ctx *ctx, int dev)
{
    enum { M = 5, N = 7, K = 3, LDA = 3, LDB = 7, LDC = 10, SPAN = (M - 1) * LDC + N };
    float A[M * LDA], B[K * LDB], C[SPAN], C0[SPAN];
    const float gap = 1234.5f;
    for (int i = 0; i < M * LDA; i++) A[i] = small_int();
    for (int i = 0; i < K * LDB; i++) B[i] = small_int();
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: alpha = 2 and beta = 0.5 read from C[0][0] and C[1][2]
         * (host C); pass 1: beta = 0 over a C of NaN (gaps NaN too). */
        for (int e = 0; e < SPAN; e++) C[e] = pass ? NAN : gap;
        for (int i = 0; i < M && !pass; i++)
            for (int j = 0; j < N; j++) C[i * LDC + j] = small_int();
        float alpha = 2.0f, beta = pass ? 0.0f : 0.5f;
        if (!pass) C[0] = alpha, C[LDC + 2] = beta;
        memcpy(C0, C, sizeof C);
        pk_status s;
        if (!dev) {
            const float *pa = pass ? &alpha : &C[0], *pb = pass ? &beta : &C[LDC + 2];
            s = pk_gemm(ctx, PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, M, N, K, pa, A, LDA,
                        B, LDB, pb, C, LDC);
        } else {
            float *dA = cu_dev(sizeof A), *dB = cu_dev(sizeof B), *dC = cu_dev(sizeof C);
            cu_put(dA, A, sizeof A), cu_put(dB, B, sizeof B), cu_put(dC, C, sizeof C);
            s = pk_gemm(ctx, PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, M, N, K, &alpha, dA,
                        LDA, dB, LDB, &beta, dC, LDC);
            if (s == PK_OK) s = pk_ctx_sync(ctx);
            cu_get(C, dC, sizeof C);
            cu_free(dA), cu_free(dB), cu_free(dC);
        }
        PK_CHECK(s == PK_OK, "gemm %s C, pass %d: %s", dev ? "device" : "host", pass,
                 pk_ctx_error(ctx));
        if (s) continue;
        int bad = 0;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < LDC; j++) {
                const int e = i * LDC + j;
                if (e >= SPAN) break;
                if (j >= N) {
                    bad += memcmp(&C[e], &C0[e], 4) != 0;
                    continue;
                }
                float acc = 0;
                for (int l = 0; l < K; l++) acc += A[i * LDA + l] * B[l * LDB + j];
                const float want = pass ? alpha * acc : alpha * acc + beta * C0[e];
                bad += C[e] != want;
            }
        PK_CHECK(bad == 0, "gemm %s C (ldc %d > n %d), pass %d: %d elements or gaps wrong",
                 dev ? "device" : "host", LDC, N, pass, bad);
    }
}

static int popc64(uint64_t v) { return __builtin_popcountll(v); }

static void gaps_bits(pk_ctx *ctx, int dev)
{
    const char *where = dev ? "device" : "host";
    /* hamming (i32 and u16) and bgemm: Q 3 x 100 bits (ld 2), X 5 x 100 bits
     * (ld 3, the spare word and the padding bits random). */
    enum { QM = 3, XN = 5, KB = 100, LDQ = 2, LDX = 3 };
    uint64_t Q[QM * LDQ], X[XN * LDX];
    for (int i = 0; i < QM * LDQ; i++) Q[i] = pk_test_next();
    for (int i = 0; i < XN * LDX; i++) X[i] = pk_test_next();
    const uint64_t mask = ((uint64_t)1 << (KB - 64)) - 1;
    int hw[QM][XN];
    for (int i = 0; i < QM; i++)
        for (int j = 0; j < XN; j++)
            hw[i][j] = popc64(Q[i * LDQ] ^ X[j * LDX]) +
                       popc64((Q[i * LDQ + 1] ^ X[j * LDX + 1]) & mask);
    const void *q = Q, *xp = X;
    void *dq = NULL, *dx = NULL;
    if (dev) {
        dq = cu_dev(sizeof Q), dx = cu_dev(sizeof X);
        cu_put(dq, Q, sizeof Q), cu_put(dx, X, sizeof X);
        q = dq, xp = dx;
    }
    for (int v = 0; v < 3; v++) { /* hamming i32, hamming u16, bgemm */
        const int64_t ld = v == 1 ? 8 : 9;
        const size_t esz = v == 1 ? 2 : 4, span = (size_t)((QM - 1) * ld + XN);
        unsigned char *D = cu_host(span * esz), *D0 = cu_host(span * esz);
        memset(D, 0x7e, span * esz);
        memcpy(D0, D, span * esz);
        void *dd = dev ? cu_dev(span * esz) : NULL;
        if (dd) cu_put(dd, D, span * esz);
        pk_status s = v == 2 ? pk_bgemm(ctx, QM, XN, KB, q, LDQ, xp, LDX, dd ? dd : (void *)D, ld)
                             : pk_hamming(ctx, v ? PK_HAMMING_U16 : PK_HAMMING_I32, QM, XN, KB, q, LDQ,
                                          xp, LDX, dd ? dd : (void *)D, ld);
        if (s == PK_OK && dd) s = pk_ctx_sync(ctx);
        if (dd) cu_get(D, dd, span * esz);
        PK_CHECK(s == PK_OK, "%s %s out: %s", v == 2 ? "bgemm" : "hamming", where,
                 pk_ctx_error(ctx));
        int bad = 0;
        for (int64_t e = 0; s == PK_OK && e < (int64_t)span; e++) {
            const int64_t i = e / ld, j = e % ld;
            if (j >= XN) {
                bad += memcmp(D + e * esz, D0 + e * esz, esz) != 0;
                continue;
            }
            const int64_t want = v == 2 ? KB - 2 * hw[i][j] : hw[i][j];
            const int64_t got = v == 1 ? ((uint16_t *)D)[e] : ((int32_t *)D)[e];
            bad += got != want;
        }
        PK_CHECK(bad == 0, "%s %s out (ld %lld > n %d): %d elements or gaps wrong",
                 v == 2 ? "bgemm" : v ? "hamming u16" : "hamming i32", where, (long long)ld, XN,
                 bad);
        if (dd) cu_free(dd);
        free(D), free(D0);
    }
    if (dev) cu_free(dq), cu_free(dx);

    /* pack: 4 rows x 70 floats (ldx 71) into ldw 5: words 2..4 kept. */
    {
        enum { R = 4, KP = 70, LDXP = 71, LDW = 5, SPANW = (R - 1) * LDW + 2 };
        float xf[R * LDXP];
        for (int i = 0; i < R * LDXP; i++) xf[i] = (float)pk_test_uniform(-1, 1);
        uint64_t bits[SPANW];
        for (int i = 0; i < SPANW; i++) bits[i] = 0xDEADBEEFCAFEF00Dull;
        void *dxf = dev ? cu_dev(sizeof xf) : NULL, *db = dev ? cu_dev(sizeof bits) : NULL;
        if (dev) cu_put(dxf, xf, sizeof xf), cu_put(db, bits, sizeof bits);
        pk_status s = pk_bits_pack(ctx, PK_BITS_F32_SIGN, R, KP, dev ? dxf : (void *)xf, LDXP,
                                   dev ? db : (void *)bits, LDW);
        if (s == PK_OK && dev) s = pk_ctx_sync(ctx);
        if (dev) cu_get(bits, db, sizeof bits);
        PK_CHECK(s == PK_OK, "pack %s: %s", where, pk_ctx_error(ctx));
        int bad = 0;
        for (int r = 0; s == PK_OK && r < R; r++)
            for (int w = 0; w < LDW && r * LDW + w < SPANW; w++) {
                uint64_t want = 0xDEADBEEFCAFEF00Dull;
                if (w < 2) {
                    want = 0;
                    for (int b = 0; b < 64 && w * 64 + b < KP; b++)
                        if (xf[r * LDXP + w * 64 + b] >= 0) want |= (uint64_t)1 << b;
                }
                bad += bits[r * LDW + w] != want;
            }
        PK_CHECK(bad == 0, "pack %s out (ldw %d > 2 words): %d words wrong", where, LDW, bad);
        if (dev) cu_free(dxf), cu_free(db);
    }
    /* unpack: 3 rows x 10 bits into floats with ldx 13: gaps kept. */
    {
        enum { R = 3, KU = 10, LDW = 2, LDXU = 13, SPANX = (R - 1) * LDXU + KU };
        uint64_t bits[(R - 1) * LDW + 1];
        for (int i = 0; i < (R - 1) * LDW + 1; i++) bits[i] = pk_test_next();
        float xf[SPANX];
        for (int i = 0; i < SPANX; i++) xf[i] = 77.0f;
        void *db = dev ? cu_dev(sizeof bits) : NULL, *dxf = dev ? cu_dev(sizeof xf) : NULL;
        if (dev) cu_put(db, bits, sizeof bits), cu_put(dxf, xf, sizeof xf);
        pk_status s = pk_bits_unpack(ctx, PK_BITS_F32_SIGN, R, KU, dev ? db : (void *)bits, LDW,
                                     dev ? dxf : (void *)xf, LDXU);
        if (s == PK_OK && dev) s = pk_ctx_sync(ctx);
        if (dev) cu_get(xf, dxf, sizeof xf);
        PK_CHECK(s == PK_OK, "unpack %s: %s", where, pk_ctx_error(ctx));
        int bad = 0;
        for (int e = 0; s == PK_OK && e < SPANX; e++) {
            const int r = e / LDXU, c = e % LDXU;
            const float want = c >= KU ? 77.0f : ((bits[r * LDW] >> c) & 1) ? 1.0f : -1.0f;
            bad += xf[e] != want;
        }
        PK_CHECK(bad == 0, "unpack %s out (ldx %d > k %d): %d elements or gaps wrong", where,
                 LDXU, KU, bad);
        if (dev) cu_free(db), cu_free(dxf);
    }
}

static void case_gaps(void)
{
    pk_ctx *ctx = cu_ctx();
    for (int dev = 0; dev <= CU_HAVE_RT; dev++) {
        gaps_gemm(ctx, dev);
        gaps_bits(ctx, dev);
    }
    pk_ctx_destroy(ctx);
}

#ifdef PK_TEST_CUDA

/* ---- pinned_reuse ------------------------------------------------------------ */

/* Zero x's last `tail` elements, its last page first (DMA reads front to
 * back): what a caller that reuses its buffer does. */
static void scribble_tail(float *x, int64_t n, int64_t tail)
{
    memset(x + n - 1024, 0, 1024 * sizeof(float));
    memset(x + n - tail, 0, (size_t)(tail - 1024) * sizeof(float));
}

static void case_pinned_reuse(void)
{
    pk_ctx *ctx = cu_ctx();
    const int64_t n = quick() ? (int64_t)1 << 24 : (int64_t)1 << 26, tail = n / 16, rows = 4;
    float *x = NULL;
    CU_OK(cudaMallocHost((void **)&x, (size_t)n * sizeof(float)));
    void *d = cu_dev(64);
    pk_reducer *r = udr_make(ctx, false, PK_F32, PK_F64, PK_REDUCER_VALUE, "x", "a + b", 0, NULL);
    static const char *const names[] = {"pk_reduce (sum)", "pk_reduce_axis (sum, axis 1)",
                                        "pk_dot", "pk_reducer_reduce",
                                        "pk_reducer_reduce_axis (axis 1)"};
    for (int v = 0; v < 5; v++) {
        if (v >= 3 && !r) continue;
        for (int rep = 0; rep < 3; rep++) {
            for (int64_t i = 0; i < n; i++) x[i] = 1.0f;
            pk_status s;
            switch (v) {
            case 0: s = pk_reduce(ctx, PK_SUM, PK_F32, x, n, d); break;
            case 1: s = pk_reduce_axis(ctx, PK_SUM, PK_F32, x, rows, n / rows, n / rows, 1, d); break;
            case 2: s = pk_dot(ctx, PK_F32, n, x, x, d); break;
            case 3: s = pk_reducer_reduce(ctx, r, x, n, d); break;
            default: s = pk_reducer_reduce_axis(ctx, r, x, rows, n / rows, n / rows, 1, d); break;
            }
            scribble_tail(x, n, tail);
            if (s == PK_OK) s = pk_ctx_sync(ctx);
            PK_CHECK(s == PK_OK, "%s: %s", names[v], pk_ctx_error(ctx));
            if (s) break;
            float gf[4];
            double gd[4], got;
            if (v >= 3) {
                cu_get(gd, d, (size_t)(v == 3 ? 1 : rows) * 8);
                got = v == 3 ? gd[0] : gd[rows - 1];
            } else {
                cu_get(gf, d, (size_t)(v == 1 ? rows : 1) * 4);
                got = v == 1 ? gf[rows - 1] : gf[0];
            }
            const double want = v == 1 || v == 4 ? (double)(n / rows) : (double)n;
            PK_CHECK(got == want,
                     "%s of page-locked x (%lld ones), result in device memory, x's last %lld "
                     "elements zeroed as soon as the call returned (rep %d): %.17g, expected "
                     "%.17g: the call returned while the device was still reading x%s",
                     names[v], (long long)n, (long long)tail, rep, got, want,
                     v >= 3 ? " (src/cuda/udr.cu device_input: cudaMemcpyAsync from page-locked "
                              "memory, never waited for when out is device memory)"
                            : "");
        }
    }
    if (r) pk_reducer_destroy(r);
    cu_free(d);
    CU_OK(cudaFreeHost(x));
    pk_ctx_destroy(ctx);
}

/* ---- notready ---------------------------------------------------------------- */

static void case_notready(void)
{
    pk_ctx *ctx = cu_ctx();
    const int64_t n = quick() ? (int64_t)1 << 24 : (int64_t)1 << 27;
    float *d = cu_dev((size_t)n * 4);
    CU_OK(cudaMemset(d, 0, (size_t)n * 4));
    {
        /* What this runtime does (informational). */
        cudaStream_t st;
        CU_OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        for (int i = 0; i < 8; i++) CU_OK(cudaMemsetAsync(d, 0, (size_t)n * 4, st));
        cudaError_t q = cudaStreamQuery(st), last = cudaGetLastError();
        printf("note: cudaStreamQuery on a busy stream gave %s; cudaGetLastError right after "
               "gave %s\n", cudaGetErrorName(q), cudaGetErrorName(last));
        CU_OK(cudaStreamSynchronize(st));
        CU_OK(cudaStreamDestroy(st));
    }
    const int64_t rows = 64, cols = 128;
    float *hx = cu_host((size_t)(rows * cols) * 4);
    for (int64_t i = 0; i < rows * cols; i++) hx[i] = 1.0f;
    float *xs = cu_dev((size_t)(rows * cols) * 4), *c = cu_dev(16 * 4), *ao = cu_dev((size_t)cols * 4);
    uint64_t *bits = cu_dev((size_t)rows * 2 * 8);
    cu_put(xs, hx, (size_t)(rows * cols) * 4);
    CU_OK(cudaMemset(c, 0, 16 * 4));
    for (int rep = 0; rep < 6; rep++) {
        float r = -1;
        pk_status s = pk_reduce(ctx, PK_SUM, PK_F32, d, n, &r);
        PK_CHECK(s == PK_OK && r == 0.0f, "host-result pk_reduce of %lld floats: %g: %s",
                 (long long)n, r, pk_ctx_error(ctx));
        const char *what;
        switch (rep % 3) {
        case 0: {
            const float a = 0, b = 2;
            what = "pk_gemm (alpha = 0: k_scale)";
            s = pk_gemm(ctx, PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, 4, 4, 4, &a, xs, 4,
                        xs, 4, &b, c, 4);
            break;
        }
        case 1:
            what = "pk_bits_pack (k_pack)";
            s = pk_bits_pack(ctx, PK_BITS_F32_SIGN, rows, cols, xs, cols, bits, 2);
            break;
        default:
            what = "pk_reduce_axis (axis 0: k_cols)";
            s = pk_reduce_axis(ctx, PK_SUM, PK_F32, xs, rows, cols, cols, 0, ao);
            break;
        }
        if (s == PK_OK) s = pk_ctx_sync(ctx);
        PK_CHECK(s == PK_OK, "%s right after a host-result pk_reduce whose wait polled "
                 "cudaStreamQuery: %s: %s (cudaErrorNotReady kept as the runtime's last error "
                 "and then read by the launch check? src/cuda/ctx.cu finish_host_result)",
                 what, pk_status_str(s), pk_ctx_error(ctx));
    }
    float got[128];
    cu_get(got, ao, sizeof got);
    PK_CHECK(got[0] == (float)rows && got[cols - 1] == (float)rows, "axis 0 sums %g %g", got[0],
             got[cols - 1]);
    cu_free(d), cu_free(xs), cu_free(c), cu_free(ao), cu_free(bits);
    free(hx);
    pk_ctx_destroy(ctx);
}

/* ---- chain --------------------------------------------------------------------- */

/* Small integers: every sum and dot below is exact in f64, so the f32
 * results are the exact values rounded once. */
static void case_chain(void)
{
    pk_ctx *ctx = cu_ctx();
    const int64_t sizes[] = {1000, ((int64_t)1 << 16) + 3, ((int64_t)1 << 20) + 5};
    const int iters = quick() ? 16 : 64;
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        const int64_t n = sizes[z];
        float *hx = cu_host((size_t)n * 4), *hy = cu_host((size_t)n * 4);
        int64_t *yref = malloc((size_t)n * 8);
        PK_CHECK(yref != NULL, "malloc");
        for (int64_t i = 0; i < n; i++) {
            hx[i] = small_int();
            hy[i] = small_int();
            yref[i] = (int64_t)hy[i];
        }
        float *dx = cu_dev((size_t)n * 4), *dy = cu_dev((size_t)n * 4);
        float *dres = cu_dev((size_t)iters * 2 * 4);
        cu_put(dx, hx, (size_t)n * 4);
        cu_put(dy, hy, (size_t)n * 4);
        const float one = 1.0f;
        for (int it = 0; it < iters; it++) {
            pk_status s = pk_axpy(ctx, PK_F32, n, &one, dx, dy);
            if (s == PK_OK) s = pk_reduce(ctx, PK_SUM, PK_F32, dy, n, dres + 2 * it);
            if (s == PK_OK) s = pk_dot(ctx, PK_F32, n, dx, dy, dres + 2 * it + 1);
            PK_CHECK(s == PK_OK, "n %lld step %d: %s", (long long)n, it, pk_ctx_error(ctx));
        }
        float *got = malloc((size_t)iters * 2 * 4);
        PK_CHECK(got != NULL, "malloc");
        PK_CHECK(pk_ctx_sync(ctx) == PK_OK, "sync: %s", pk_ctx_error(ctx));
        cu_get(got, dres, (size_t)iters * 2 * 4);
        for (int it = 0; it < iters; it++) {
            int64_t sum = 0, dot = 0;
            for (int64_t i = 0; i < n; i++) {
                yref[i] += (int64_t)hx[i];
                sum += yref[i];
                dot += (int64_t)hx[i] * yref[i];
            }
            PK_CHECK(got[2 * it] == (float)sum && got[2 * it + 1] == (float)dot,
                     "n %lld step %d: sum %.9g (want %lld), dot %.9g (want %lld): a call "
                     "read its input before the axpy ahead of it had written it?",
                     (long long)n, it, got[2 * it], (long long)sum, got[2 * it + 1],
                     (long long)dot);
        }
        free(got);
        free(yref);
        cu_free(dx), cu_free(dy), cu_free(dres);
        free(hx), free(hy);
    }
    pk_ctx_destroy(ctx);
}

/* ---- host_reuse_async --------------------------------------------------------- */

enum { EK_F32, EK_F64, EK_I64, EK_U64 };
typedef struct expect {
    char name[96];
    int kind;
    int64_t count;
    void *dev, *want;
} expect;
#define MAX_EXPECT 40
static expect g_ex[MAX_EXPECT];
static int g_nex;

static size_t ek_size(int kind) { return kind == EK_F32 ? 4 : 8; }

/* A device result of count values; fills *want (host) later. */
static void *expect_add(const char *name, int pass, int kind, int64_t count, void **want)
{
    expect *e = &g_ex[g_nex++];
    snprintf(e->name, sizeof e->name, "%s (%s stream)", name, pass ? "adopted" : "own");
    e->kind = kind;
    e->count = count;
    e->dev = cu_dev((size_t)count * ek_size(kind));
    e->want = cu_host((size_t)count * ek_size(kind));
    *want = e->want;
    return e->dev;
}

static void fill_small(float *h, int64_t n)
{
    for (int64_t i = 0; i < n; i++) h[i] = small_int();
}

static void case_host_reuse(void)
{
    pk_ctx *ctx = cu_ctx();
    const int64_t n = quick() ? 300007 : 5000011; /* 3 staging chunks of f32 */
    const size_t nb = (size_t)n * 4;
    float *h = cu_host(nb), *h2 = cu_host(nb), *yexp = cu_host(nb), *pin = NULL;
    int32_t *hi = cu_host(nb);
    CU_OK(cudaMallocHost((void **)&pin, nb));
    float *dy = cu_dev(nb);
    CU_OK(cudaMemset(dy, 0, nb));
    memset(yexp, 0, nb);
    /* gemm: A (host) 200 x 64, B (device) 64 x 48; pack: 300 x 200 floats. */
    enum { GM = 200, GK = 64, GN = 48, PR = 300, PK = 200, PW = 4 };
    float *B = cu_host(GK * GN * 4), *dB = cu_dev(GK * GN * 4);
    fill_small(B, GK * GN);
    cu_put(dB, B, GK * GN * 4);
    pk_reducer *r = udr_make(ctx, false, PK_F32, PK_F64, PK_REDUCER_VALUE, "x", "a + b", 0, NULL);
    cudaStream_t st;
    CU_OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    const int64_t R = 1000, Cc = n / R;
    g_nex = 0;
    /* What a caller that reuses its buffers does once a call returns. */
#define SCRIBBLE()                                                                     \
    do {                                                                               \
        memset(h, 0x7f, nb), memset(h2, 0x7f, nb), memset(pin, 0x7f, nb);              \
        memset(hi, 0x7f, nb);                                                          \
    } while (0)
    for (int pass = 0; pass < 2; pass++) {
        if (pass) PK_CHECK(pk_ctx_set_stream(ctx, st) == PK_OK, "%s", pk_ctx_error(ctx));
        void *want;
        pk_status s;
        /* sum of pageable x */
        fill_small(h, n);
        {
            void *d = expect_add("pk_reduce sum, pageable x", pass, EK_F32, 1, &want);
            double a = 0;
            for (int64_t i = 0; i < n; i++) a += h[i];
            *(float *)want = (float)a;
            s = pk_reduce(ctx, PK_SUM, PK_F32, h, n, d);
            SCRIBBLE();
            PK_CHECK(s == PK_OK, "reduce: %s", pk_ctx_error(ctx));
        }
        /* dot of two pageable arrays */
        fill_small(h, n), fill_small(h2, n);
        {
            void *d = expect_add("pk_dot, pageable x and y", pass, EK_F32, 1, &want);
            double a = 0;
            for (int64_t i = 0; i < n; i++) a += (double)h[i] * h2[i];
            *(float *)want = (float)a;
            s = pk_dot(ctx, PK_F32, n, h, h2, d);
            SCRIBBLE();
            PK_CHECK(s == PK_OK, "dot: %s", pk_ctx_error(ctx));
        }
        /* argmax of page-locked x */
        fill_small(pin, n);
        {
            void *d = expect_add("pk_reduce argmax, page-locked x", pass, EK_I64, 1, &want);
            int64_t best = 0;
            for (int64_t i = 1; i < n; i++)
                if (pin[i] > pin[best]) best = i;
            *(int64_t *)want = best;
            s = pk_reduce(ctx, PK_ARGMAX, PK_F32, pin, n, d);
            SCRIBBLE();
            PK_CHECK(s == PK_OK, "argmax: %s", pk_ctx_error(ctx));
        }
        /* axpy: pageable x into device y (checked at the end) */
        fill_small(h, n);
        {
            const float two = 2.0f;
            for (int64_t i = 0; i < n; i++) yexp[i] += 2.0f * h[i];
            s = pk_axpy(ctx, PK_F32, n, &two, h, dy);
            SCRIBBLE();
            PK_CHECK(s == PK_OK, "axpy: %s", pk_ctx_error(ctx));
        }
        /* axis reductions of a pageable R x Cc matrix */
        for (int axis = 0; axis < 2; axis++) {
            fill_small(h, n);
            const int64_t nout = axis ? R : Cc;
            void *d = expect_add(axis ? "pk_reduce_axis axis 1, pageable x"
                                      : "pk_reduce_axis axis 0, pageable x",
                                 pass, EK_F32, nout, &want);
            for (int64_t j = 0; j < nout; j++) {
                double a = 0;
                for (int64_t e = 0; e < (axis ? Cc : R); e++) a += h[axis ? j * Cc + e : e * Cc + j];
                ((float *)want)[j] = (float)a;
            }
            s = pk_reduce_axis(ctx, PK_SUM, PK_F32, h, R, Cc, Cc, axis, d);
            SCRIBBLE();
            PK_CHECK(s == PK_OK, "reduce_axis: %s", pk_ctx_error(ctx));
        }
        /* gemm: host A, device B and C */
        fill_small(h, GM * GK);
        {
            void *d = expect_add("pk_gemm, host A", pass, EK_F32, GM * GN, &want);
            for (int i = 0; i < GM; i++)
                for (int j = 0; j < GN; j++) {
                    float a = 0;
                    for (int l = 0; l < GK; l++) a += h[i * GK + l] * B[l * GN + j];
                    ((float *)want)[i * GN + j] = a;
                }
            const float one = 1, zero = 0;
            s = pk_gemm(ctx, PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, GM, GN, GK, &one, h,
                        GK, dB, GN, &zero, d, GN);
            SCRIBBLE();
            PK_CHECK(s == PK_OK, "gemm: %s", pk_ctx_error(ctx));
        }
        /* pack: host x, device bits */
        fill_small(h, PR * PK);
        {
            void *d = expect_add("pk_bits_pack, host x", pass, EK_U64, PR * PW, &want);
            uint64_t *w = want;
            for (int rr = 0; rr < PR; rr++)
                for (int wd = 0; wd < PW; wd++) {
                    uint64_t v = 0;
                    for (int b = 0; b < 64 && wd * 64 + b < PK; b++)
                        if (h[rr * PK + wd * 64 + b] >= 0) v |= (uint64_t)1 << b;
                    w[rr * PW + wd] = v;
                }
            s = pk_bits_pack(ctx, PK_BITS_F32_SIGN, PR, PK, h, PK, d, PW);
            SCRIBBLE();
            PK_CHECK(s == PK_OK, "pack: %s", pk_ctx_error(ctx));
        }
        /* user-defined sum of pageable x */
        if (r) {
            fill_small(h, n);
            void *d = expect_add("pk_reducer_reduce, pageable x", pass, EK_F64, 1, &want);
            double a = 0;
            for (int64_t i = 0; i < n; i++) a += h[i];
            *(double *)want = a;
            s = pk_reducer_reduce(ctx, r, h, n, d);
            SCRIBBLE();
            PK_CHECK(s == PK_OK, "reducer: %s", pk_ctx_error(ctx));
        }
        /* i32 sum (wraps in 64 bits) of pageable x */
        for (int64_t i = 0; i < n; i++) hi[i] = (int32_t)(uint32_t)pk_test_next();
        {
            void *d = expect_add("pk_reduce sum i32, pageable x", pass, EK_I64, 1, &want);
            uint64_t a = 0;
            for (int64_t i = 0; i < n; i++) a += (uint64_t)(int64_t)hi[i];
            memcpy(want, &a, 8);
            s = pk_reduce(ctx, PK_SUM, PK_I32, hi, n, d);
            SCRIBBLE();
            PK_CHECK(s == PK_OK, "reduce i32: %s", pk_ctx_error(ctx));
        }
    }
#undef SCRIBBLE
    PK_CHECK(pk_ctx_set_stream(ctx, NULL) == PK_OK, "%s", pk_ctx_error(ctx));
    PK_CHECK(pk_ctx_sync(ctx) == PK_OK, "%s", pk_ctx_error(ctx));
    CU_OK(cudaStreamSynchronize(st));
    for (int k = 0; k < g_nex; k++) {
        expect *e = &g_ex[k];
        const size_t es = ek_size(e->kind);
        unsigned char *got = cu_host((size_t)e->count * es);
        cu_get(got, e->dev, (size_t)e->count * es);
        int64_t bad = 0, first = -1;
        for (int64_t j = 0; j < e->count; j++)
            if (memcmp(got + j * es, (unsigned char *)e->want + j * es, es)) {
                if (first < 0) first = j;
                bad++;
            }
        double gv = 0, wv = 0;
        if (first >= 0) {
            const void *gp = got + first * es, *wp = (unsigned char *)e->want + first * es;
            if (e->kind == EK_F32) gv = *(const float *)gp, wv = *(const float *)wp;
            else if (e->kind == EK_F64) gv = *(const double *)gp, wv = *(const double *)wp;
            else gv = (double)*(const int64_t *)gp, wv = (double)*(const int64_t *)wp;
        }
        PK_CHECK(bad == 0, "%s: %lld of %lld results wrong, first [%lld] = %.17g, expected "
                 "%.17g (host input reused right after the call returned)", e->name,
                 (long long)bad, (long long)e->count, (long long)first, gv, wv);
        free(got);
        cu_free(e->dev);
        free(e->want);
    }
    float *y = cu_host(nb);
    cu_get(y, dy, nb);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) bad += y[i] != yexp[i];
    PK_CHECK(bad == 0, "pk_axpy from pageable x reused at once: %lld of %lld elements of y wrong",
             (long long)bad, (long long)n);
    free(y);
    if (r) pk_reducer_destroy(r);
    CU_OK(cudaStreamDestroy(st));
    cu_free(dy), cu_free(dB);
    CU_OK(cudaFreeHost(pin));
    free(h), free(h2), free(yexp), free(hi), free(B);
    pk_ctx_destroy(ctx);
}

#endif /* PK_TEST_CUDA */

/* ---- the cases, each in its own process ------------------------------------ */

static const cc_case cases[] = {
#ifdef PK_TEST_CUDA
    {"pinned_reuse", case_pinned_reuse},
    {"notready", case_notready},
    {"host_reuse_async", case_host_reuse},
    {"chain", case_chain},
#endif
    {"gaps", case_gaps},
};

int main(int argc, char **argv)
{
    return cc_main(argc, argv, "test_cuda_hazards", cases, (int)(sizeof cases / sizeof cases[0]));
}
