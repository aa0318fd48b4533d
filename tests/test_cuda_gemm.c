/* pk_gemm on the CUDA backend against an f64 host reference (plain loops),
 * with error bounds per mode relative to |alpha| sum |a||b| + |beta c|:
 * FP32 and FP32_ACCURATE 1e-6 sqrt(k), TF32 1e-3, f64 1e-14 sqrt(k). All four
 * transposes, degenerate and odd shapes around the tile sizes (128 x 128,
 * k slices of 8 and 16), ld > width, unaligned device pointers (the scalar
 * load paths), alpha/beta cases, NaN in C with beta = 0, NaN in A and B with
 * alpha = 0, +-Inf and TF32-overflowing values in A and B (FP32 and
 * FP32_ACCURATE give IEEE's results), host and device pointers, f64; split
 * k (few tiles, long k); FP32_ACCURATE no less accurate than FP32 on the
 * same data. The Hopper
 * wgmma kernel (TF32 and FP32_ACCURATE from m, n >= 64, k >= 16 and
 * m n k >= 2^22 on a compute capability 9.0 device) is exercised by
 * wgmma_sweep (always, PK_TEST_QUICK too) and by the larger shapes above:
 * operands used in place (aligned, k-contiguous) and packed (transposed,
 * unaligned, odd ld), tiles of 128 x 256 / 128 x 128 with edges in m, n, k,
 * and a k that wraps the stage rings in PK_TEST_QUICK runs too; an operand
 * packed in more tiles than the packing kernel's grid. TF32 with B not
 * transposed (or, in TT, A) and fit for the copy engine reads that operand
 * in place (k_gemm_wgmma_rs, 256 x 128 tiles; rs_odd_c covers its
 * per-element stores); under PK_GEMM_TF32_PACK=always
 * (test_cuda_gemm_tf32_pack) it is packed instead. */
#include "cuda_util.h"

typedef struct shape {
    int64_t m, n, k;
} shape;

static const shape shapes[] = {
    {1, 1, 1},     {1, 1, 1000},  {4, 5, 0},     {1, 300, 17},  {300, 1, 17},
    {2, 3, 1},     {127, 129, 9}, {128, 128, 8}, {129, 127, 7}, {128, 128, 16},
    {64, 32, 33},  {65, 33, 15},  {257, 255, 100}, {1000, 3, 2}, {3, 1000, 65},
    {200, 300, 513}, {130, 260, 1}, {255, 257, 17}, {31, 7, 300}, {520, 600, 129},
    {96, 130, 1500},
};
#define NSHAPES (int)(sizeof shapes / sizeof shapes[0])

static bool quick(void) { return getenv("PK_TEST_QUICK") != NULL; }

/* Element (i, j) of op(X) for a row-major X with leading dimension ld. */
static double opx(pk_dtype t, const void *x, int trans, int64_t ld, int64_t i, int64_t j)
{
    return cu_getf(t, x, trans ? j * ld + i : i * ld + j);
}

typedef struct gcase {
    pk_dtype t;
    pk_gemm_mode mode;
    int ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    double alpha, beta;
    int where;    /* bit 0: A, B on device; bit 1: C on device; bit 2: offset by 1 */
    bool nan_ab;  /* A and B hold NaN (alpha = 0: never read) */
    int specials; /* bit 0: +Inf in op(A) (1, 0) and in (3, 1) a finite value
                     that TF32 rounding takes to Inf; bit 1: -Inf in op(B)
                     (2, 2); bit 2: that finite value in op(B) (1, 3) */
    int64_t row_step; /* > 0: check only rows i % row_step == 0 and the last
                         (the others' gaps past n unchecked too) */
} gcase;

static double mode_tol(const gcase *c)
{
    double sk = sqrt((double)c->k + 1.0);
    if (c->t == PK_F64) return 1e-14 * sk;
    return c->mode == PK_GEMM_TF32 ? 1e-3 : 1e-6 * sk;
}

/* Runs one case; returns the largest error relative to the bound's scale
 * (|err| / mag), or -1 after a failed check. */
static double run_case(pk_ctx *ctx, const gcase *c)
{
    const size_t sz = cu_size(c->t);
    const int64_t ar = c->ta ? c->k : c->m;
    const int64_t br = c->tb ? c->n : c->k;
    const int64_t na = ar * c->lda, nb = br * c->ldb, nc = c->m * c->ldc;
    void *A = cu_host((size_t)na * sz), *B = cu_host((size_t)nb * sz);
    void *C0 = cu_host((size_t)nc * sz), *C = cu_host((size_t)nc * sz);
    cu_fill(c->t, A, na, -1.0, 1.0);
    cu_fill(c->t, B, nb, -1.0, 1.0);
    cu_fill(c->t, C0, nc, -1.0, 1.0);
    if (c->nan_ab) {
        for (int64_t i = 0; i < na; i++) cu_setf(c->t, A, i, NAN);
        for (int64_t i = 0; i < nb; i++) cu_setf(c->t, B, i, NAN);
    }
    if (c->specials & 1) {
        cu_setf(c->t, A, c->ta ? 0 * c->lda + 1 : 1 * c->lda + 0, INFINITY);
        cu_setf(c->t, A, c->ta ? 1 * c->lda + 3 : 3 * c->lda + 1, 3.4025e38);
    }
    if (c->specials & 2) cu_setf(c->t, B, 2 * c->ldb + 2, -INFINITY); /* (2, 2) either way */
    if (c->specials & 4) cu_setf(c->t, B, c->tb ? 3 * c->ldb + 1 : 1 * c->ldb + 3, 3.4025e38);
    if (c->beta == 0)
        for (int64_t i = 0; i < c->m; i++)
            for (int64_t j = 0; j < c->n; j++) cu_setf(c->t, C0, i * c->ldc + j, NAN);
    memcpy(C, C0, (size_t)nc * sz);

    unsigned char al[8], be[8];
    cu_setf(c->t, al, 0, c->alpha);
    cu_setf(c->t, be, 0, c->beta);
    const int64_t off = c->where & 4 ? 1 : 0;
    void *dA = NULL, *dB = NULL, *dC = NULL;
    const void *pA = A, *pB = B;
    void *pC = C;
    if (c->where & 1) {
        dA = cu_dev((size_t)(na + off) * sz);
        dB = cu_dev((size_t)(nb + off) * sz);
        cu_put((char *)dA + off * sz, A, (size_t)na * sz);
        cu_put((char *)dB + off * sz, B, (size_t)nb * sz);
        pA = (char *)dA + off * sz;
        pB = (char *)dB + off * sz;
    }
    if (c->where & 2) {
        dC = cu_dev((size_t)(nc + off) * sz);
        cu_put((char *)dC + off * sz, C, (size_t)nc * sz);
        pC = (char *)dC + off * sz;
    }
    pk_status s = pk_gemm(ctx, c->t, c->mode, c->ta ? PK_TRANS : PK_NO_TRANS,
                          c->tb ? PK_TRANS : PK_NO_TRANS, c->m, c->n, c->k, al, pA, c->lda,
                          pB, c->ldb, be, pC, c->ldc);
    if (s == PK_OK && (c->where & 2)) {
        s = pk_ctx_sync(ctx);
        cu_get(C, (char *)dC + off * sz, (size_t)nc * sz);
    }
    char what[200];
    snprintf(what, sizeof what, "%s %s ta=%d tb=%d m=%lld n=%lld k=%lld ld=%lld,%lld,%lld "
             "alpha=%g beta=%g where=%d%s%s%s", pk_dtype_name(c->t), pk_gemm_mode_name(c->mode),
             c->ta, c->tb, (long long)c->m, (long long)c->n, (long long)c->k,
             (long long)c->lda, (long long)c->ldb, (long long)c->ldc, c->alpha, c->beta,
             c->where, c->nan_ab ? " nan A,B" : "", c->specials & 1 ? " inf/huge A" : "",
             c->specials & 6 ? " inf/huge B" : "");
    double worst = 0;
    PK_CHECK(s == PK_OK, "%s: %s", what, pk_ctx_error(ctx));
    if (s != PK_OK) worst = -1;
    const double tol = mode_tol(c);
    int bad = 0;
    for (int64_t i = 0; s == PK_OK && i < c->m; i++) {
        if (c->row_step > 0 && i % c->row_step && i != c->m - 1) continue;
        for (int64_t j = 0; j < c->n; j++) {
            double acc = 0, mag = 0;
            if (c->alpha != 0)
                for (int64_t l = 0; l < c->k; l++) {
                    double a = opx(c->t, A, c->ta, c->lda, i, l), b = opx(c->t, B, c->tb, c->ldb, l, j);
                    acc += a * b;
                    mag += fabs(a * b);
                }
            double want = c->alpha * acc, scale = fabs(c->alpha) * mag;
            if (c->beta != 0) {
                double c0 = cu_getf(c->t, C0, i * c->ldc + j);
                want += c->beta * c0;
                scale += fabs(c->beta * c0);
            }
            double got = cu_getf(c->t, C, i * c->ldc + j);
            if (!isfinite(want)) { /* IEEE: the same Inf, or NaN */
                const bool same = isnan(want) ? isnan(got) : got == want;
                if (!same && bad++ < 3)
                    PK_CHECK(same, "%s: C[%lld][%lld] = %g, expected %g", what, (long long)i,
                             (long long)j, got, want);
                continue;
            }
            double err = fabs(got - want);
            double lim = tol * scale + (c->t == PK_F32 ? 1e-30 : 1e-300);
            if (!(err <= lim) && bad++ < 3)
                PK_CHECK(err <= lim, "%s: C[%lld][%lld] = %.9g, expected %.9g (err %.3g > %.3g)",
                         what, (long long)i, (long long)j, got, want, err, lim);
            if (scale > 0 && err / scale > worst) worst = err / scale;
        }
        /* The gap between rows is never written. */
        for (int64_t j = c->n; j < c->ldc; j++)
            if (memcmp((char *)C + (i * c->ldc + j) * sz, (char *)C0 + (i * c->ldc + j) * sz, sz) &&
                bad++ < 3)
                PK_CHECK(false, "%s: C[%lld][%lld] past n was written", what, (long long)i,
                         (long long)j);
    }
    PK_CHECK(bad == 0, "%s: %d bad elements", what, bad);
    if (dA) cu_free(dA);
    if (dB) cu_free(dB);
    if (dC) cu_free(dC);
    free(A), free(B), free(C0), free(C);
    return bad ? -1 : worst;
}

static const double ab_cases[][2] = {{1, 0}, {1.5, -0.5}, {0, 2}, {-1, 1}, {0, 0}};

static void sweep(pk_ctx *ctx)
{
    const int combos = CU_HAVE_RT ? 8 : 1;
    int ci = 0;
    for (int si = 0; si < NSHAPES; si++) {
        const shape sh = shapes[si];
        if (quick() && sh.m * sh.n * (sh.k + 1) > 2000000) continue;
        for (int ti = 0; ti < 4; ti++)
            for (int mi = 0; mi < 4; mi++, ci++) {
                gcase c = {0};
                c.t = mi == 3 ? PK_F64 : PK_F32;
                c.mode = mi == 3 ? PK_GEMM_FP32 : (pk_gemm_mode)mi;
                c.ta = ti & 1, c.tb = ti >> 1;
                c.m = sh.m, c.n = sh.n, c.k = sh.k;
                /* ld: the width, or a little more (odd: unaligned rows). */
                const int64_t pad = ci % 3 == 0 ? 0 : ci % 3 == 1 ? 4 : 1 + cu_below(3);
                c.lda = (c.ta ? c.m : c.k) + pad;
                c.ldb = (c.tb ? c.k : c.n) + pad;
                /* vi: ci varied within each mode too (FP32, mi 0, has
                 * ci % 4 == 0: it would never see ldc > n nor most
                 * placements). */
                const int vi = ci + ci / 4;
                c.ldc = c.n + (vi % 2 ? pad : 0);
                if (c.lda < 1) c.lda = 1;
                if (c.ldb < 1) c.ldb = 1;
                const double *ab = ab_cases[ci % 5];
                c.alpha = ab[0], c.beta = ab[1];
                c.nan_ab = c.alpha == 0 && ci % 2 == 0;
                c.where = vi % combos;
                run_case(ctx, &c);
            }
    }
}

/* Shapes that take the wgmma kernels on an H100/H200: whole tiles (128 x
 * 256 and 128 x 128 of k_gemm_wgmma, 256 x 128 of k_gemm_wgmma_rs; k slices
 * of 32), one past each tile edge (k not a multiple of 4 either), a wide
 * one, a k long enough to wrap the 4-stage rings (13 slices; the sweep's
 * larger shapes do too, but not under PK_TEST_QUICK), and 18 m tiles of 128
 * (9 of 256), past the launch order's first group of 16 (8)
 * (gemm_wgmma.cu). Each runs all transposes, both tensor-core modes and
 * three operand placements. */
static const shape wgmma_shapes[] = {{384, 512, 64},   {129, 257, 127}, {1031, 300, 65},
                                     {300, 200, 400},  {2177, 300, 40}, {512, 384, 96}};

static void wgmma_sweep(pk_ctx *ctx)
{
    int ci = 0;
    for (size_t si = 0; si < sizeof wgmma_shapes / sizeof wgmma_shapes[0]; si++)
        for (int ti = 0; ti < 4; ti++)
            for (int mi = 1; mi <= 2; mi++)
                for (int v = 0; v < 3; v++, ci++) {
                    if (quick() && v != ci / 3 % 3) continue;
                    const shape sh = wgmma_shapes[si];
                    gcase c = {0};
                    c.t = PK_F32, c.mode = (pk_gemm_mode)mi;
                    c.ta = ti & 1, c.tb = ti >> 1;
                    c.m = sh.m, c.n = sh.n, c.k = sh.k;
                    /* v 0: ld = width, on the device (in place when k-contiguous);
                     * v 1: odd ld and pointers off by one float (packed);
                     * v 2: ld + 4, host C (staged). */
                    const int64_t pad = v == 0 ? 0 : v == 1 ? 1 + 2 * cu_below(2) : 4;
                    c.lda = (c.ta ? c.m : c.k) + pad;
                    c.ldb = (c.tb ? c.k : c.n) + pad;
                    c.ldc = c.n + pad;
                    static const double ab[3][2] = {{1, 0}, {1.5, -0.5}, {-1, 1}};
                    c.alpha = ab[(ci / 3 + v) % 3][0], c.beta = ab[(ci / 3 + v) % 3][1];
                    c.where = !CU_HAVE_RT ? 0 : v == 0 ? 3 : v == 1 ? 7 : 1;
                    run_case(ctx, &c);
                }
}

/* TF32 with a row-contiguous operand read in place (k_gemm_wgmma_rs: B in
 * NN and TN, A in TT and tall TN, which write C transposed) and C that the
 * copy engine cannot take: odd ldc (257, 259), so that its stores go one
 * element at a time, with beta 0 and not. */
static void rs_odd_c(pk_ctx *ctx)
{
    static const int layouts[3][2] = {{0, 0}, {1, 0}, {1, 1}};
    for (int li = 0; li < 3; li++)
        for (int v = 0; v < 2; v++) {
            gcase c = {.t = PK_F32, .mode = PK_GEMM_TF32, .ta = layouts[li][0],
                       .tb = layouts[li][1], .m = 300, .n = 257, .k = 65, .alpha = 1.25,
                       .beta = v ? 0.5 : 0, .where = CU_HAVE_RT ? 3 : 0};
            c.lda = c.ta ? c.m : c.k, c.ldb = c.tb ? c.k : c.n + 3, c.ldc = c.n + 2 * v;
            run_case(ctx, &c);
        }
    /* TN with m > n reads op(A) in place (C^T's route) and packs op(B):
     * B fit for the copy engine or not (ldb n + 4, n + 3), C with the
     * copy engine's alignment or not. */
    for (int v = 0; v < 4; v++) {
        gcase c = {.t = PK_F32, .mode = PK_GEMM_TF32, .ta = 1, .tb = 0, .m = 640, .n = 96,
                   .k = 136, .alpha = -0.75, .beta = v & 1 ? 0.5 : 0,
                   .where = CU_HAVE_RT ? 3 : 0};
        c.lda = c.m, c.ldb = c.n + (v & 2 ? 3 : 4), c.ldc = c.n + (v & 1);
        run_case(ctx, &c);
    }
}

/* FP32_ACCURATE is no less accurate than FP32 on the same data (the same
 * seed state before each run). */
static void accurate_vs_fp32(pk_ctx *ctx)
{
    const int64_t m = quick() ? 96 : 384, n = quick() ? 80 : 320, k = quick() ? 300 : 2048;
    const uint64_t st = pk_test_state;
    double err[2];
    for (int i = 0; i < 2; i++) {
        pk_test_state = st;
        gcase c = {.t = PK_F32, .mode = i ? PK_GEMM_FP32_ACCURATE : PK_GEMM_FP32, .m = m,
                   .n = n, .k = k, .lda = k, .ldb = n, .ldc = n, .alpha = 1, .beta = 0,
                   .where = CU_HAVE_RT ? 3 : 0};
        err[i] = run_case(ctx, &c);
    }
    printf("max |err| / sum|a||b| at %lldx%lldx%lld: fp32 %.3g, fp32_accurate %.3g\n",
           (long long)m, (long long)n, (long long)k, err[0], err[1]);
    /* This shape runs FP32 with split k (8 partial sums), which makes the
     * FP32 path unusually accurate here; "no worse" is then within 1.5x of
     * it or below 2^-23 of sum |a||b| (one FP32 rounding of the scale).
     * Measured on an H200: fp32 4.4e-8..5.9e-8, fp32_accurate 6.2e-8..7.2e-8;
     * at 4096^3 (no split) fp32 1.0e-7, fp32_accurate 2.2e-8. */
    PK_CHECK(err[1] >= 0 && (err[1] <= 1.5 * err[0] || err[1] <= 0x1p-23),
             "fp32_accurate %.3g vs fp32 %.3g", err[1], err[0]);
}

/* +-Inf and values that TF32 rounding overflows give what FP32 gives in
 * every mode that promises FP32's results: FP32, and FP32_ACCURATE, whose
 * tensor-core split would turn them into NaN (gemm.cu hands such inputs to
 * the FP32 kernel). 256^2 x 128 takes the wgmma kernel on Hopper, 40 x 30 x
 * 20 the mma.sync one. |alpha| <= 1 keeps the huge row (or column) below
 * FLT_MAX.
 * Special values in both operands, and in B alone (-Inf, and the huge
 * value, apart): with A clean, B's own check must catch them. */
static void nonfinite(pk_ctx *ctx)
{
    static const shape shapes[] = {{256, 256, 128}, {40, 30, 20}};
    static const int specials[] = {1 | 2, 2, 4};
    for (int si = 0; si < 2; si++)
        for (int mi = 0; mi < 3; mi += 2)
            for (int ti = 0; ti < 4; ti += 3)
                for (int sp = 0; sp < 3; sp++) {
                    const shape sh = shapes[si];
                    gcase c = {.t = PK_F32, .mode = (pk_gemm_mode)mi, .ta = ti & 1,
                               .tb = ti >> 1, .m = sh.m, .n = sh.n, .k = sh.k,
                               .alpha = ti ? -0.5 : 1, .beta = ti ? 0.5 : 0,
                               .where = CU_HAVE_RT ? 3 : 0, .specials = specials[sp]};
                    c.lda = c.ta ? c.m : c.k, c.ldb = c.tb ? c.k : c.n, c.ldc = c.n;
                    run_case(ctx, &c);
                }
}

/* Split k: the splits' blocks finish in a different order each run; the
 * bits must not change (a second kernel adds the partials in split order).
 * Few tiles and a long k give 8 splits; beta != 0 reads C in that sum. */
static void split_deterministic(pk_ctx *ctx)
{
    const int64_t m = 200, n = 150, k = quick() ? 1500 : 5000;
    const pk_dtype types[] = {PK_F32, PK_F64};
    for (int ti = 0; ti < 2; ti++) {
        const pk_dtype t = types[ti];
        const size_t sz = cu_size(t);
        void *A = cu_host((size_t)(m * k) * sz), *B = cu_host((size_t)(k * n) * sz);
        void *C0 = cu_host((size_t)(m * n) * sz), *C = cu_host((size_t)(m * n) * sz);
        void *first = cu_host((size_t)(m * n) * sz);
        cu_fill(t, A, m * k, -1.0, 1.0);
        cu_fill(t, B, k * n, -1.0, 1.0);
        cu_fill(t, C0, m * n, -1.0, 1.0);
        unsigned char al[8], be[8];
        cu_setf(t, al, 0, 1.25);
        cu_setf(t, be, 0, 0.75);
        for (int rep = 0; rep < 5; rep++) {
            memcpy(C, C0, (size_t)(m * n) * sz);
            const pk_status s = pk_gemm(ctx, t, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, m, n, k,
                                        al, A, k, B, n, be, C, n);
            PK_CHECK(s == PK_OK, "%s split k run %d: %s", pk_dtype_name(t), rep,
                     pk_ctx_error(ctx));
            if (rep == 0)
                memcpy(first, C, (size_t)(m * n) * sz);
            else
                PK_CHECK(memcmp(first, C, (size_t)(m * n) * sz) == 0,
                         "%s %lldx%lldx%lld: run %d gave other bits than run 0", pk_dtype_name(t),
                         (long long)m, (long long)n, (long long)k, rep);
        }
        free(A), free(B), free(C0), free(C), free(first);
    }
}

/* Operands packed (or copied row-contiguous) in more 32 x 32 tiles than the
 * packing kernel's grid (65536 blocks), so that its blocks step through
 * several tiles: B of 8256 x 8224 (258 x 257 tiles; a step is 255 rows of
 * tiles and one tile, with a carry; the FP32 row copy transposes it as
 * 257 x 258 tiles, 254 rows and 4 tiles a step). Sampled rows of C cover
 * every tile of the packed operand (each output reads its whole k). The
 * FP32 case copies B only under PK_GEMM_ROW_COPY=always with
 * PK_GEMM_SIMT_RAW=never (test_cuda_gemm_row_copy, which runs it alone
 * under PK_TEST_QUICK), and
 * the TF32 case packs B only under PK_GEMM_TF32_PACK=always (otherwise B
 * is read in place; test_cuda_gemm_tf32_pack runs it alone under
 * PK_TEST_QUICK). */
static void pack_many_tiles(pk_ctx *ctx)
{
    const char *rc = getenv("PK_GEMM_ROW_COPY"), *tp = getenv("PK_GEMM_TF32_PACK");
    const bool row_copy = rc && !strcmp(rc, "always"), tf32_pack = tp && !strcmp(tp, "always");
    if (!CU_HAVE_RT || (quick() && !row_copy && !tf32_pack)) return;
    const struct {
        pk_gemm_mode mode;
        int ta, tb;
        int64_t m, n, k, row_step;
    } cases[] = {
        {PK_GEMM_TF32, 0, 0, 64, 8256, 8224, 21},
        {PK_GEMM_FP32_ACCURATE, 0, 0, 64, 8256, 8224, 63},
        {PK_GEMM_FP32, 0, 1, 64, 8256, 8224, 63},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* Under PK_TEST_QUICK: the case whose copy is forced only. */
        if (quick() && !(row_copy && cases[i].mode == PK_GEMM_FP32) &&
            !(tf32_pack && cases[i].mode == PK_GEMM_TF32))
            continue;
        gcase c = {.t = PK_F32, .mode = cases[i].mode, .ta = cases[i].ta, .tb = cases[i].tb,
                   .m = cases[i].m, .n = cases[i].n, .k = cases[i].k, .alpha = 1, .beta = 0,
                   .where = 3, .row_step = cases[i].row_step};
        c.lda = c.ta ? c.m : c.k, c.ldb = c.tb ? c.k : c.n, c.ldc = c.n;
        printf("pack_many_tiles %s ta=%d tb=%d %lldx%lldx%lld: max |err| / sum|a||b| %.3g\n",
               pk_gemm_mode_name(c.mode), c.ta, c.tb, (long long)c.m, (long long)c.n,
               (long long)c.k, run_case(ctx, &c));
    }
}

static void bad_args(pk_ctx *ctx)
{
    double one = 1, A = 1, B = 1, C = 0;
    pk_status s = pk_gemm(ctx, PK_F64, PK_GEMM_TF32, PK_NO_TRANS, PK_NO_TRANS, 1, 1, 1, &one,
                          &A, 1, &B, 1, &one, &C, 1);
    PK_CHECK(s == PK_ERR_ARG, "f64 with TF32: %s", pk_status_str(s));
    float fa = 1, fb = 1, fc = 0, f1 = 1;
    s = pk_gemm(ctx, PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, 1, 2, 1, &f1, &fa, 1, &fb,
                1, &f1, &fc, 1);
    PK_CHECK(s == PK_ERR_ARG, "ldc < n: %s", pk_status_str(s));
}

int main(void)
{
    pk_test_init("test_cuda_gemm");
    pk_ctx *ctx = cu_ctx();
    cu_note_no_rt();
    sweep(ctx);
    wgmma_sweep(ctx);
    rs_odd_c(ctx);
    accurate_vs_fp32(ctx);
    nonfinite(ctx);
    split_deterministic(ctx);
    pack_many_tiles(ctx);
    bad_args(ctx);
    pk_ctx_destroy(ctx);
    return pk_test_finish("test_cuda_gemm");
}
