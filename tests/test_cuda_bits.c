/* The bit-matrix kernels on the CUDA backend against plain C references:
 * pk_bits_pack / unpack (f32 signs with -0.0, NaN, Inf; u8), pk_bgemm,
 * pk_hamming (int32 and u16) and pk_hamming_topk, on random bits with
 * garbage in every padding bit, odd m, n and k (1, 31, 33, 63, 64, 65, 255,
 * 257, 1000, 8257), odd and even row strides, rows equal to and opposite
 * to a query, ties in the top-k (short codes, duplicated rows), topk = 1, n
 * and 1000, several database chunks, host and device pointers, and bad
 * arguments. PK_TEST_QUICK (set under compute-sanitizer): small sizes. */
#include "cuda_util.h"

static int quick(void) { return getenv("PK_TEST_QUICK") != NULL; }

static int64_t words_of(int64_t k) { return pk_bits_words(k); }

/* rows x k bits with ld words; every bit random, padding included. */
static uint64_t *random_bits(int64_t rows, int64_t ld)
{
    uint64_t *b = cu_host((size_t)(rows * ld) * 8 + 8);
    for (int64_t i = 0; i < rows * ld; i++) b[i] = pk_test_next();
    return b;
}

static int bit_at(const uint64_t *row, int64_t j) { return (int)((row[j / 64] >> (j % 64)) & 1u); }

/* The reference: bit by bit. */
static int64_t ref_hamming(const uint64_t *a, const uint64_t *b, int64_t k)
{
    int64_t h = 0;
    for (int64_t j = 0; j < k; j++) h += bit_at(a, j) != bit_at(b, j);
    return h;
}

/* B row r := A row (r % m) (equal) or its complement (opposite), every
 * third and fifth row, so that distances 0 and k occur. */
static void plant_rows(const uint64_t *A, int64_t m, int64_t lda, uint64_t *B, int64_t n,
                       int64_t ldb, int64_t k)
{
    int64_t w = words_of(k);
    for (int64_t r = 0; r < n; r++) {
        if (r % 3 && r % 5) continue;
        for (int64_t j = 0; j < w; j++) {
            uint64_t v = A[(r % m) * lda + j];
            B[r * ldb + j] = r % 3 ? ~v : v;
        }
    }
}

/* A copy of host data in device memory (host pointer back without the
 * runtime). */
static void *to_dev(const void *h, size_t bytes)
{
    if (!CU_HAVE_RT) return (void *)h;
    void *d = cu_dev(bytes);
    cu_put(d, h, bytes);
    return d;
}

/* ---- bgemm and hamming -------------------------------------------------- */

/* pad: ldc - n (the wgmma kernel stores whole boxes when rows are 16-byte
 * multiples, else element pairs). */
static void check_gemm_ld(pk_ctx *ctx, int64_t m, int64_t n, int64_t k, int dev, int64_t pad)
{
    int64_t w = words_of(k);
    int64_t lda = w + pk_test_below(3), ldb = w + pk_test_below(3);
    int64_t ldc = n + pad;
    uint64_t *A = random_bits(m, lda), *B = random_bits(n, ldb);
    plant_rows(A, m, lda, B, n, ldb, k);
    size_t ab = (size_t)(m * lda) * 8, bb = (size_t)(n * ldb) * 8;
    size_t cb = (size_t)(m * ldc) * 4, db = (size_t)(m * ldc) * 2;
    int32_t *C = cu_host(cb), *D = cu_host(cb);
    uint16_t *D16 = cu_host(db);
    for (int64_t i = 0; i < m * ldc; i++) C[i] = D[i] = -7, D16[i] = 7;
    const uint64_t *pa = dev ? to_dev(A, ab) : A, *pb = dev ? to_dev(B, bb) : B;
    int32_t *pc = dev ? to_dev(C, cb) : C, *pd = dev ? to_dev(D, cb) : D;
    uint16_t *pd16 = dev ? to_dev(D16, db) : D16;
    pk_status s1 = pk_bgemm(ctx, m, n, k, pa, lda, pb, ldb, pc, ldc);
    pk_status s2 = pk_hamming(ctx, PK_HAMMING_I32, m, n, k, pa, lda, pb, ldb, pd, ldc);
    pk_status s3 = k <= 65535 ? pk_hamming(ctx, PK_HAMMING_U16, m, n, k, pa, lda, pb, ldb, pd16, ldc)
                              : PK_OK;
    PK_CHECK(s1 == PK_OK && s2 == PK_OK && s3 == PK_OK, "bgemm/hamming %lldx%lldx%lld dev %d: %s",
             (long long)m, (long long)n, (long long)k, dev, pk_ctx_error(ctx));
    if (dev && CU_HAVE_RT) {
        PK_CHECK(pk_ctx_sync(ctx) == PK_OK, "sync: %s", pk_ctx_error(ctx));
        cu_get(C, pc, cb);
        cu_get(D, pd, cb);
        cu_get(D16, pd16, db);
        cu_free((void *)pa), cu_free((void *)pb), cu_free(pc), cu_free(pd), cu_free(pd16);
    }
    int bad = 0;
    for (int64_t i = 0; i < m && bad < 3; i++)
        for (int64_t j = 0; j < ldc && bad < 3; j++) {
            int64_t c = i * ldc + j;
            if (j >= n) { /* the gap between rows is never written */
                if (C[c] != -7 || D[c] != -7 || D16[c] != 7) bad++;
                PK_CHECK(C[c] == -7 && D[c] == -7 && D16[c] == 7,
                         "%lldx%lldx%lld: gap (%lld, %lld) written", (long long)m,
                         (long long)n, (long long)k, (long long)i, (long long)j);
                continue;
            }
            int64_t h = ref_hamming(A + i * lda, B + j * ldb, k);
            int ok = C[c] == k - 2 * h && D[c] == h && (k > 65535 || D16[c] == h);
            if (!ok) bad++;
            PK_CHECK(ok, "%lldx%lldx%lld dev %d (%lld, %lld): bgemm %d, hamming %d, u16 %d, "
                     "expected h = %lld", (long long)m, (long long)n, (long long)k, dev,
                     (long long)i, (long long)j, C[c], D[c], D16[c], (long long)h);
        }
    free(A), free(B), free(C), free(D), free(D16);
}

static void check_gemm_shape(pk_ctx *ctx, int64_t m, int64_t n, int64_t k, int dev)
{
    check_gemm_ld(ctx, m, n, k, dev, pk_test_below(2));
}

static void check_gemm(pk_ctx *ctx)
{
    static const int64_t ks[] = {1, 31, 33, 63, 64, 65, 255, 256, 257, 1000, 1024, 8192 + 64 + 1};
    static const int64_t shapes[][2] = {{1, 1}, {3, 5}, {37, 53}, {129, 257}, {131, 300}};
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            int64_t m = shapes[si][0], n = shapes[si][1], k = ks[ki];
            if (quick() && (k > 1100 || m * n > 20000)) continue;
            check_gemm_shape(ctx, m, n, k, (int)((ki + si) % 2));
        }
    /* Codes over 512 bits take the wgmma kernel on Hopper: ragged tiles in
     * quick mode too (the sanitizer runs), with rows of a multiple of 16
     * bytes (bulk stores of int32 and u16 boxes) and without (pairs); then
     * tiles past the SM count (each block walks several, its pipeline
     * running on across them), host and device outputs. */
    check_gemm_ld(ctx, 130, 144, 1030, 1, 0);
    check_gemm_ld(ctx, 130, 140, 1030, 1, 1);
    check_gemm_ld(ctx, 70, 264, 700, 0, 0);
    if (!quick()) {
        check_gemm_shape(ctx, 257, 513, 2048 + 3, 1); /* several CTA tiles each way */
        check_gemm_shape(ctx, 300, 260, 4096, 0);
        check_gemm_ld(ctx, 1100, 4400, 1100, 1, 0); /* 9 x 18 tiles of 128 x 256 */
        check_gemm_ld(ctx, 1100, 4400, 1100, 0, 3);
    }
}

/* ---- top-k -------------------------------------------------------------- */

typedef struct {
    int64_t d, i;
} pair;

static int pair_cmp(const void *x, const void *y)
{
    const pair *a = x, *b = y;
    if (a->d != b->d) return a->d < b->d ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

static void check_topk_shape(pk_ctx *ctx, int64_t m, int64_t n, int64_t k, int64_t topk,
                             int dev, int dup)
{
    int64_t w = words_of(k);
    int64_t ldq = w + pk_test_below(2), ldx = w + pk_test_below(2);
    uint64_t *Q = random_bits(m, ldq), *X = random_bits(n, ldx);
    plant_rows(Q, m, ldq, X, n, ldx, k);
    if (dup) /* duplicated database rows: equal distances at many indices */
        for (int64_t r = 1; r < n; r += 2)
            for (int64_t j = 0; j < w; j++) X[r * ldx + j] = X[(r / 4) * ldx + j];
    size_t qb = (size_t)(m * ldq) * 8, xb = (size_t)(n * ldx) * 8;
    size_t db = (size_t)(m * topk) * 4, ib = (size_t)(m * topk) * 8;
    int32_t *dist = cu_host(db);
    int64_t *idx = cu_host(ib);
    const uint64_t *pq = dev ? to_dev(Q, qb) : Q, *px = dev ? to_dev(X, xb) : X;
    int32_t *pd = dev && CU_HAVE_RT ? cu_dev(db) : dist;
    int64_t *pi = dev && CU_HAVE_RT ? cu_dev(ib) : idx;
    pk_status s = pk_hamming_topk(ctx, m, n, k, pq, ldq, px, ldx, topk, pd, pi);
    PK_CHECK(s == PK_OK, "topk m %lld n %lld k %lld topk %lld: %s", (long long)m, (long long)n,
             (long long)k, (long long)topk, pk_ctx_error(ctx));
    if (dev && CU_HAVE_RT) {
        PK_CHECK(pk_ctx_sync(ctx) == PK_OK, "sync: %s", pk_ctx_error(ctx));
        cu_get(dist, pd, db);
        cu_get(idx, pi, ib);
        cu_free((void *)pq), cu_free((void *)px), cu_free(pd), cu_free(pi);
    }
    pair *ref = cu_host((size_t)n * sizeof(pair));
    int bad = 0;
    for (int64_t q = 0; q < m && bad < 3; q++) {
        for (int64_t j = 0; j < n; j++)
            ref[j] = (pair){ref_hamming(Q + q * ldq, X + j * ldx, k), j};
        qsort(ref, (size_t)n, sizeof(pair), pair_cmp);
        for (int64_t r = 0; r < topk && bad < 3; r++) {
            int ok = dist[q * topk + r] == ref[r].d && idx[q * topk + r] == ref[r].i;
            if (!ok) bad++;
            PK_CHECK(ok, "topk m %lld n %lld k %lld topk %lld dev %d dup %d: query %lld rank "
                     "%lld: (%d, %lld), expected (%lld, %lld)", (long long)m, (long long)n,
                     (long long)k, (long long)topk, dev, dup, (long long)q, (long long)r,
                     dist[q * topk + r], (long long)idx[q * topk + r], (long long)ref[r].d,
                     (long long)ref[r].i);
        }
    }
    free(ref), free(Q), free(X), free(dist), free(idx);
}

static void check_topk(pk_ctx *ctx)
{
    /* m, n, k bits, topk, device, duplicated rows */
    static const int64_t cases[][6] = {
        {1, 1, 1, 1, 0, 0},        {3, 7, 5, 7, 1, 0},          {5, 100, 8, 1, 0, 1},
        {5, 100, 8, 100, 1, 1},    {7, 300, 33, 10, 0, 0},      {64, 1000, 256, 10, 1, 0},
        {33, 2000, 65, 1000, 0, 1}, {9, 2001, 255, 2001, 1, 1}, {20, 40000, 64, 10, 1, 1},
        {6, 40000, 257, 1000, 0, 0}, {3, 5000, 100, 5000, 1, 1}, {130, 4500, 1000, 50, 0, 0},
        {2, 9000, 8257, 4097, 1, 0}, {40, 70000, 31, 3, 1, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int64_t *t = cases[c];
        if (quick() && t[0] * t[1] * words_of(t[2]) > 300000) continue;
        check_topk_shape(ctx, t[0], t[1], t[2], t[3], (int)t[4], (int)t[5]);
    }
}

/* ---- pack and unpack ------------------------------------------------------ */

static void check_pack(pk_ctx *ctx)
{
    static const int64_t ks[] = {1, 31, 32, 33, 63, 64, 65, 200, 1000};
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
        for (int fmt = 0; fmt < 2; fmt++)
            for (int dev = 0; dev < (CU_HAVE_RT ? 2 : 1); dev++) {
                int64_t k = ks[ki], rows = 1 + pk_test_below(9), w = words_of(k);
                int64_t ldx = k + pk_test_below(3), ldw = w + pk_test_below(2);
                size_t es = fmt ? 1 : 4, xb = (size_t)(rows * ldx) * es;
                size_t span = (size_t)((rows - 1) * ldw + w);
                unsigned char *x = cu_host(xb);
                for (int64_t i = 0; i < rows * ldx; i++) {
                    if (fmt) {
                        x[i] = pk_test_below(3) ? (unsigned char)pk_test_next() : 0;
                    } else {
                        static const float special[] = {-0.0f, 0.0f, NAN, -NAN, INFINITY,
                                                        -INFINITY, 1e-45f, -1e-45f};
                        float v = pk_test_below(4) ? (float)pk_test_uniform(-1, 1)
                                                   : special[pk_test_below(8)];
                        memcpy(x + 4 * i, &v, 4);
                    }
                }
                uint64_t *bits = cu_host(span * 8);
                for (size_t i = 0; i < span; i++) bits[i] = ~(uint64_t)0;
                void *px = dev ? to_dev(x, xb) : x;
                uint64_t *pb = dev ? to_dev(bits, span * 8) : bits;
                pk_status s = pk_bits_pack(ctx, (pk_bits_format)fmt, rows, k, px, ldx, pb, ldw);
                PK_CHECK(s == PK_OK, "pack fmt %d k %lld: %s", fmt, (long long)k, pk_ctx_error(ctx));
                if (dev && CU_HAVE_RT) cu_get(bits, pb, span * 8);
                int bad = 0;
                for (int64_t r = 0; r < rows; r++)
                    for (int64_t j = 0; j < (r + 1 < rows ? ldw : w) * 64 && bad < 3; j++) {
                        int want = j >= w * 64; /* words between rows: left alone (all ones) */
                        if (j < k) {
                            int64_t e = r * ldx + j;
                            if (fmt) want = x[e] != 0;
                            else {
                                float v;
                                memcpy(&v, x + 4 * e, 4);
                                want = v >= 0.0f; /* NaN compares false */
                            }
                        }
                        int got = bit_at(bits + r * ldw, j);
                        if (got != want) bad++;
                        PK_CHECK(got == want, "pack fmt %d k %lld dev %d row %lld bit %lld: %d",
                                 fmt, (long long)k, dev, (long long)r, (long long)j, got);
                    }
                /* unpack back into a fresh array */
                unsigned char *y = cu_host(xb);
                memset(y, 0x5a, xb);
                void *py = dev ? to_dev(y, xb) : y;
                s = pk_bits_unpack(ctx, (pk_bits_format)fmt, rows, k, pb, ldw, py, ldx);
                PK_CHECK(s == PK_OK, "unpack fmt %d k %lld: %s", fmt, (long long)k,
                         pk_ctx_error(ctx));
                if (dev && CU_HAVE_RT) {
                    cu_get(y, py, xb);
                    cu_free(px), cu_free(pb), cu_free(py);
                }
                for (int64_t r = 0; r < rows; r++)
                    for (int64_t j = 0; j < ldx && bad < 3; j++) {
                        int64_t e = r * ldx + j;
                        int ok;
                        if (j >= k) ok = fmt ? y[e] == 0x5a : !memcmp(y + 4 * e, "\x5a\x5a\x5a\x5a", 4);
                        else if (fmt) ok = y[e] == (unsigned char)bit_at(bits + r * ldw, j);
                        else {
                            float v;
                            memcpy(&v, y + 4 * e, 4);
                            ok = v == (bit_at(bits + r * ldw, j) ? 1.0f : -1.0f);
                        }
                        if (!ok) bad++;
                        PK_CHECK(ok, "unpack fmt %d k %lld dev %d at (%lld, %lld)", fmt,
                                 (long long)k, dev, (long long)r, (long long)j);
                    }
                free(x), free(bits), free(y);
            }
}

/* ---- bad arguments (checked by the core, same on every backend) ---------- */

static void check_bad(pk_ctx *ctx)
{
    uint64_t a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
    int32_t c[4], d[4];
    int64_t ix[4];
    uint16_t d16[4];
    PK_CHECK(pk_bgemm(ctx, 1, 1, 64, NULL, 1, b, 1, c, 1) == PK_ERR_ARG, "bgemm NULL A");
    PK_CHECK(pk_bgemm(ctx, 1, 1, 65, a, 1, b, 2, c, 1) == PK_ERR_ARG, "bgemm lda too small");
    PK_CHECK(pk_bgemm(ctx, 1, 1, -1, a, 1, b, 1, c, 1) == PK_ERR_ARG, "bgemm k < 0");
    PK_CHECK(pk_bgemm(ctx, 1, 2, 64, a, 1, b, 1, c, 1) == PK_ERR_ARG, "bgemm ldc < n");
    PK_CHECK(pk_hamming(ctx, PK_HAMMING_U16, 1, 1, 70000, a, 1100, b, 1100, d16, 1) == PK_ERR_ARG,
             "hamming u16 with k > 65535");
    PK_CHECK(pk_hamming(ctx, (pk_hamming_dtype)9, 1, 1, 64, a, 1, b, 1, d, 1) == PK_ERR_ARG,
             "hamming bad type");
    PK_CHECK(pk_hamming_topk(ctx, 1, 2, 64, a, 1, b, 1, 0, d, ix) == PK_ERR_ARG, "topk 0");
    PK_CHECK(pk_hamming_topk(ctx, 1, 2, 64, a, 1, b, 1, 3, d, ix) == PK_ERR_ARG, "topk > n");
    PK_CHECK(pk_hamming_topk(ctx, 1, 2, 64, a, 1, b, 1, 1, d, (int64_t *)d) == PK_ERR_ARG,
             "topk dist overlaps idx");
    PK_CHECK(pk_bits_pack(ctx, (pk_bits_format)5, 1, 8, a, 8, b, 1) == PK_ERR_ARG, "pack format");
    PK_CHECK(pk_bits_pack(ctx, PK_BITS_U8, 1, 8, a, 8, a, 1) == PK_ERR_ARG, "pack overlap");
    /* empty shapes are fine and touch nothing */
    PK_CHECK(pk_bgemm(ctx, 0, 3, 64, a, 1, b, 1, c, 3) == PK_OK, "bgemm m = 0");
    PK_CHECK(pk_hamming_topk(ctx, 0, 2, 64, a, 1, b, 1, 1, d, ix) == PK_OK, "topk m = 0");
    /* k = 0: every distance 0, bgemm 0 */
    c[0] = 5;
    PK_CHECK(pk_bgemm(ctx, 1, 1, 0, a, 1, b, 1, c, 1) == PK_OK && c[0] == 0, "bgemm k = 0");
    PK_CHECK(pk_hamming_topk(ctx, 1, 2, 0, a, 1, b, 1, 2, d, ix) == PK_OK && d[0] == 0 &&
                 d[1] == 0 && ix[0] == 0 && ix[1] == 1,
             "topk k = 0");
    /* k = 0 with NULL operands (nothing to read) and more codes than lists */
    int32_t d3[6];
    int64_t i3[6];
    PK_CHECK(pk_hamming_topk(ctx, 2, 1000, 0, NULL, 1, NULL, 1, 3, d3, i3) == PK_OK,
             "topk k = 0, NULL Q, X: %s", pk_ctx_error(ctx));
    for (int i = 0; i < 6; i++)
        PK_CHECK(d3[i] == 0 && i3[i] == i % 3, "topk k = 0: [%d] got (%d, %lld)", i, d3[i],
                 (long long)i3[i]);
    c[0] = 5;
    PK_CHECK(pk_bgemm(ctx, 1, 1, 0, NULL, 1, NULL, 1, c, 1) == PK_OK && c[0] == 0,
             "bgemm k = 0, NULL A, B");
}

int main(void)
{
    pk_test_init("test_cuda_bits");
    pk_ctx *ctx = cu_ctx();
    cu_note_no_rt();
    check_bad(ctx);
    check_pack(ctx);
    check_gemm(ctx);
    check_topk(ctx);
    pk_ctx_destroy(ctx);
    return pk_test_finish("test_cuda_bits");
}
