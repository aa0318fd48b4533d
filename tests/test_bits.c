/* The bit-matrix kernels against plain references on random data:
 * pk_bits_pack / pk_bits_unpack (bit layout, -0.0, NaN, Inf, padding written
 * as 0, nothing written past a row), pk_bgemm and pk_hamming (i32 and u16)
 * computed from the unpacked 0/1 arrays (never from the packed words), with
 * garbage in every padding bit and in the words between rows (ld > words),
 * odd m, n and k (1, 31, 33, 63, 64, 65, 127, 255, 257, 1000, long rows),
 * all-equal and all-opposite rows; pk_hamming_topk against a counting sort
 * of all distances (ties by lower index), topk = 1 and topk = n, few and
 * many ties, both threading schemes; k = 0 with NULL operands; and the bad
 * arguments of each. */
#include "util.h"

static pk_ctx *ctx;

/* A random 0/1 matrix with a few rows repeated or complemented. */
static uint8_t *random_bits(int64_t rows, int64_t k, const uint8_t *like, int64_t like_rows)
{
    uint8_t *x = pk_test_alloc((size_t)(rows * k));
    for (int64_t i = 0; i < rows * k; i++) x[i] = (uint8_t)(pk_test_next() & 1);
    for (int64_t r = 0; like && r < rows; r++) {
        int64_t pick = pk_test_below(4);
        if (pick > 1) continue;
        int64_t src = pk_test_below(like_rows);
        for (int64_t j = 0; j < k; j++)
            x[r * k + j] = (uint8_t)(like[src * k + j] ^ (pick == 1)); /* equal, opposite */
    }
    return x;
}

/* Pack with pk, then fill padding bits and the ld gap with garbage. */
static uint64_t *pack_garbage(const uint8_t *x, int64_t rows, int64_t k, int64_t ldw)
{
    uint64_t *w = pk_test_alloc((size_t)(rows * ldw) * 8);
    pk_status s = pk_bits_pack(ctx, PK_BITS_U8, rows, k, x, k, w, ldw);
    PK_CHECK(s == PK_OK, "pack: %s", pk_ctx_error(ctx));
    int64_t words = pk_bits_words(k);
    for (int64_t r = 0; r < rows; r++) {
        if (k % 64) w[r * ldw + words - 1] |= pk_test_next() << (k % 64);
        for (int64_t q = words; q < ldw; q++) w[r * ldw + q] = pk_test_next();
    }
    return w;
}

static int64_t ref_dist(const uint8_t *a, const uint8_t *b, int64_t k)
{
    int64_t d = 0;
    for (int64_t j = 0; j < k; j++) d += a[j] != b[j];
    return d;
}

static void check_products(int64_t m, int64_t n, int64_t k)
{
    uint8_t *qa = random_bits(m, k, NULL, 0);
    uint8_t *xa = random_bits(n, k, qa, m);
    int64_t words = pk_bits_words(k), lq = words + pk_test_below(3), lx = words + pk_test_below(3);
    uint64_t *Q = pack_garbage(qa, m, k, lq), *X = pack_garbage(xa, n, k, lx);
    int64_t ld = n + pk_test_below(3);
    int32_t *C = pk_test_alloc((size_t)(m * ld) * 4), *D = pk_test_alloc((size_t)(m * ld) * 4);
    uint16_t *D16 = pk_test_alloc((size_t)(m * ld) * 2);
    memset(C, 0x5A, (size_t)(m * ld) * 4), memset(D, 0x5A, (size_t)(m * ld) * 4);
    memset(D16, 0x5A, (size_t)(m * ld) * 2);
    pk_status s1 = pk_bgemm(ctx, m, n, k, Q, lq, X, lx, C, ld);
    pk_status s2 = pk_hamming(ctx, PK_HAMMING_I32, m, n, k, Q, lq, X, lx, D, ld);
    pk_status s3 = k <= 65535 ? pk_hamming(ctx, PK_HAMMING_U16, m, n, k, Q, lq, X, lx, D16, ld)
                              : PK_OK;
    PK_CHECK(s1 == PK_OK && s2 == PK_OK && s3 == PK_OK, "%lldx%lldx%lld: %s", (long long)m,
             (long long)n, (long long)k, pk_ctx_error(ctx));
    int bad = 0;
    for (int64_t i = 0; i < m && bad < 5; i++)
        for (int64_t j = 0; j < ld && bad < 5; j++) {
            int32_t g1 = C[i * ld + j], g2 = D[i * ld + j];
            uint16_t g3 = D16[i * ld + j];
            if (j >= n) { /* the gap between rows is never written */
                bad += g1 != 0x5A5A5A5A || g2 != 0x5A5A5A5A || g3 != 0x5A5A;
                PK_CHECK(g1 == 0x5A5A5A5A && g2 == 0x5A5A5A5A && g3 == 0x5A5A,
                         "%lldx%lldx%lld: wrote C/D[%lld][%lld] past n", (long long)m,
                         (long long)n, (long long)k, (long long)i, (long long)j);
                continue;
            }
            int64_t d = ref_dist(qa + i * k, xa + j * k, k);
            int ok = g1 == (int32_t)(k - 2 * d) && g2 == (int32_t)d &&
                     (k > 65535 || g3 == (uint16_t)d);
            bad += !ok;
            PK_CHECK(ok, "%lldx%lldx%lld [%lld][%lld]: bgemm %d hamming %d u16 %u, want d = %lld",
                     (long long)m, (long long)n, (long long)k, (long long)i, (long long)j, g1,
                     g2, g3, (long long)d);
        }
    free(qa), free(xa), free(Q), free(X), free(C), free(D), free(D16);
}

/* Reference top-k: all distances, counting sort by distance (stable: ties
 * stay in index order). */
static void check_topk(int64_t m, int64_t n, int64_t k, int64_t topk, int mostly_ties)
{
    uint8_t *qa = random_bits(m, k, NULL, 0);
    uint8_t *xa = random_bits(n, k, qa, m);
    if (mostly_ties) /* few distinct codes: long runs of equal distances */
        for (int64_t r = 1; r < n; r++)
            if (pk_test_below(8)) memcpy(xa + r * k, xa + pk_test_below(r) * k, (size_t)k);
    int64_t words = pk_bits_words(k), lq = words + pk_test_below(2), lx = words + pk_test_below(2);
    uint64_t *Q = pack_garbage(qa, m, k, lq), *X = pack_garbage(xa, n, k, lx);
    int32_t *dist = pk_test_alloc((size_t)(m * topk) * 4);
    int64_t *idx = pk_test_alloc((size_t)(m * topk) * 8);
    pk_status s = pk_hamming_topk(ctx, m, n, k, Q, lq, X, lx, topk, dist, idx);
    PK_CHECK(s == PK_OK, "topk %lld of %lld, k %lld: %s", (long long)topk, (long long)n,
             (long long)k, pk_ctx_error(ctx));
    int64_t *d = pk_test_alloc((size_t)n * 8), *count = pk_test_alloc((size_t)(k + 2) * 8);
    int64_t *order = pk_test_alloc((size_t)n * 8);
    int bad = 0;
    for (int64_t q = 0; q < m && !bad && s == PK_OK; q++) {
        memset(count, 0, (size_t)(k + 2) * 8);
        for (int64_t j = 0; j < n; j++) d[j] = ref_dist(qa + q * k, xa + j * k, k), count[d[j] + 1]++;
        for (int64_t v = 1; v <= k + 1; v++) count[v] += count[v - 1];
        for (int64_t j = 0; j < n; j++) order[count[d[j]]++] = j;
        for (int64_t r = 0; r < topk && !bad; r++) {
            int64_t want = order[r];
            bad = dist[q * topk + r] != d[want] || idx[q * topk + r] != want;
            PK_CHECK(!bad, "topk m %lld n %lld k %lld topk %lld: query %lld rank %lld: got (%d, %lld), "
                     "want (%lld, %lld)", (long long)m, (long long)n, (long long)k, (long long)topk,
                     (long long)q, (long long)r, dist[q * topk + r], (long long)idx[q * topk + r],
                     (long long)d[want], (long long)want);
        }
    }
    free(qa), free(xa), free(Q), free(X), free(dist), free(idx), free(d), free(count), free(order);
}

static void check_pack(void)
{
    static const int64_t ks[] = {1, 5, 31, 63, 64, 65, 100, 127, 128, 129, 300};
    for (size_t c = 0; c < sizeof ks / sizeof *ks; c++) {
        int64_t k = ks[c], rows = 1 + pk_test_below(5), ldx = k + pk_test_below(3);
        int64_t words = pk_bits_words(k), ldw = words + pk_test_below(3);
        float *f = pk_test_alloc((size_t)(rows * ldx) * 4), *fo = pk_test_alloc((size_t)(rows * ldx) * 4);
        uint8_t *u = pk_test_alloc((size_t)(rows * ldx)), *uo = pk_test_alloc((size_t)(rows * ldx));
        uint64_t *wf = pk_test_alloc((size_t)(rows * ldw) * 8), *wu = pk_test_alloc((size_t)(rows * ldw) * 8);
        static const float special[] = {0.0f, -0.0f, NAN, -NAN, INFINITY, -INFINITY, 1e-45f, -1e-45f};
        for (int64_t i = 0; i < rows * ldx; i++) {
            uint64_t r = pk_test_next();
            f[i] = r % 4 == 0 ? special[(r >> 8) % 8] : (float)pk_test_uniform(-1, 1);
            u[i] = r % 3 == 0 ? 0 : (uint8_t)(r >> 16);
        }
        memset(wf, 0xFF, (size_t)(rows * ldw) * 8), memset(wu, 0xFF, (size_t)(rows * ldw) * 8);
        PK_CHECK(pk_bits_pack(ctx, PK_BITS_F32_SIGN, rows, k, f, ldx, wf, ldw) == PK_OK &&
                     pk_bits_pack(ctx, PK_BITS_U8, rows, k, u, ldx, wu, ldw) == PK_OK,
                 "pack k %lld: %s", (long long)k, pk_ctx_error(ctx));
        for (int64_t r = 0; r < rows; r++)
            for (int64_t j = 0; j < ldw * 64; j++) {
                int bf = (int)(wf[r * ldw + j / 64] >> (j % 64) & 1);
                int bu = (int)(wu[r * ldw + j / 64] >> (j % 64) & 1);
                float x = j < k ? f[r * ldx + j] : 0;
                int want_f = j < k && !isnan(x) && !signbit(x) ? 1 : 0;
                if (j < k && x == 0.0f) want_f = 1; /* -0.0 >= 0 */
                int want_u = j < k && u[r * ldx + j] != 0;
                if (j >= words * 64) want_f = want_u = 1; /* between rows: left alone */
                PK_CHECK(bf == want_f && bu == want_u, "pack k %lld row %lld bit %lld: f32 %d (x = %g) u8 %d",
                         (long long)k, (long long)r, (long long)j, bf, (double)x, bu);
            }
        memset(fo, 0x77, (size_t)(rows * ldx) * 4), memset(uo, 0x77, (size_t)(rows * ldx));
        PK_CHECK(pk_bits_unpack(ctx, PK_BITS_F32_SIGN, rows, k, wf, ldw, fo, ldx) == PK_OK &&
                     pk_bits_unpack(ctx, PK_BITS_U8, rows, k, wu, ldw, uo, ldx) == PK_OK,
                 "unpack k %lld: %s", (long long)k, pk_ctx_error(ctx));
        for (int64_t r = 0; r < rows; r++)
            for (int64_t j = 0; j < ldx; j++) {
                float x = f[r * ldx + j], g = fo[r * ldx + j];
                uint32_t gb;
                memcpy(&gb, &g, 4);
                if (j >= k) {
                    PK_CHECK(gb == 0x77777777u && uo[r * ldx + j] == 0x77, "unpack wrote past k");
                    continue;
                }
                PK_CHECK(g == (x >= 0.0f ? 1.0f : -1.0f), "unpack f32 k %lld [%lld][%lld]: %g for %g",
                         (long long)k, (long long)r, (long long)j, (double)g, (double)x);
                PK_CHECK(uo[r * ldx + j] == (u[r * ldx + j] != 0), "unpack u8 k %lld", (long long)k);
            }
        free(f), free(fo), free(u), free(uo), free(wf), free(wu);
    }
}

static void expect(pk_status got, pk_status want, const char *what)
{
    PK_CHECK(got == want, "%s: got %s, want %s", what, pk_status_str(got), pk_status_str(want));
}

static void check_bad_args(void)
{
    uint64_t A[8] = {0}, B[8] = {0};
    int32_t C[16], dist[8];
    int64_t idx[8];
    uint16_t D16[16];
    float f[16] = {0};
    expect(pk_bits_pack(ctx, (pk_bits_format)7, 1, 4, f, 4, A, 1), PK_ERR_ARG, "unknown format");
    expect(pk_bits_unpack(ctx, (pk_bits_format)-1, 1, 4, A, 1, f, 4), PK_ERR_ARG, "unknown format");
    expect(pk_bits_pack(ctx, PK_BITS_F32_SIGN, 2, 70, f, 70, A, 1), PK_ERR_ARG, "ldw too small");
    expect(pk_bits_pack(ctx, PK_BITS_F32_SIGN, 1, 64, A, 64, A + 4, 1), PK_ERR_ARG, "x overlaps bits");
    expect(pk_bgemm(ctx, 2, 2, 128, A, 1, B, 2, C, 2), PK_ERR_ARG, "lda too small");
    expect(pk_bgemm(ctx, 2, 2, 64, A, 1, B, 1, C, 1), PK_ERR_ARG, "ldc too small");
    expect(pk_bgemm(ctx, 2, 2, 64, A, 1, B, 1, (int32_t *)(void *)A, 2), PK_ERR_ARG, "C overlaps A");
    expect(pk_bgemm(ctx, -1, 2, 64, A, 1, B, 1, C, 2), PK_ERR_ARG, "negative m");
    expect(pk_hamming(ctx, PK_HAMMING_U16, 1, 1, 65536, A, 1024, B, 1024, D16, 1), PK_ERR_ARG,
           "u16 with k > 65535");
    expect(pk_hamming(ctx, (pk_hamming_dtype)5, 1, 1, 64, A, 1, B, 1, D16, 1), PK_ERR_ARG,
           "unknown distance type");
    expect(pk_hamming_topk(ctx, 1, 4, 64, A, 1, B, 1, 0, dist, idx), PK_ERR_ARG, "topk 0");
    expect(pk_hamming_topk(ctx, 1, 4, 64, A, 1, B, 1, 5, dist, idx), PK_ERR_ARG, "topk > n");
    expect(pk_hamming_topk(ctx, 1, 4, 64, A, 1, B, 1, 2, dist, (int64_t *)(void *)dist),
           PK_ERR_ARG, "dist overlaps idx");
    expect(pk_hamming_topk(ctx, 1, 4, 64, A, 1, B, 1, 2, (int32_t *)(void *)B, idx),
           PK_ERR_ARG, "dist overlaps X");
    /* Valid neighbours: empty shapes, k = 0. */
    expect(pk_bgemm(ctx, 0, 2, 64, NULL, 1, B, 1, NULL, 2), PK_OK, "m = 0");
    C[0] = C[1] = 7;
    expect(pk_bgemm(ctx, 1, 2, 0, A, 1, B, 1, C, 2), PK_OK, "k = 0");
    PK_CHECK(C[0] == 0 && C[1] == 0, "k = 0 gives 0");
    expect(pk_hamming_topk(ctx, 1, 3, 0, A, 1, B, 1, 2, dist, idx), PK_OK, "topk k = 0");
    PK_CHECK(dist[0] == 0 && dist[1] == 0 && idx[0] == 0 && idx[1] == 1, "k = 0: first indices");
}

/* k = 0: every distance is 0; A and B hold no words (NULL is valid) and
 * nothing bounds n, so top-k must be the first topk rows without a scan
 * (it once overflowed n + nr and returned idx 0, 0, 0). */
static void check_k_zero(void)
{
    int32_t C[9 * 7], dist[2 * 3];
    uint16_t D16[9 * 7];
    int64_t idx[2 * 3];
    memset(C, 0x5A, sizeof C), memset(D16, 0x5A, sizeof D16);
    expect(pk_bgemm(ctx, 9, 7, 0, NULL, 1, NULL, 1, C, 7), PK_OK, "bgemm k = 0, NULL A, B");
    expect(pk_hamming(ctx, PK_HAMMING_U16, 9, 7, 0, NULL, 1, NULL, 1, D16, 7), PK_OK,
           "hamming k = 0, NULL Q, X");
    for (int i = 0; i < 9 * 7; i++)
        PK_CHECK(C[i] == 0 && D16[i] == 0, "k = 0: [%d] bgemm %d hamming %u", i, C[i], D16[i]);
    memset(dist, 0x5A, sizeof dist), memset(idx, 0x5A, sizeof idx);
    expect(pk_hamming_topk(ctx, 2, INT64_MAX, 0, NULL, 1, NULL, 1, 3, dist, idx), PK_OK,
           "topk k = 0, n = INT64_MAX");
    for (int i = 0; i < 2 * 3; i++)
        PK_CHECK(dist[i] == 0 && idx[i] == i % 3, "topk k = 0: [%d] got (%d, %lld)", i, dist[i],
                 (long long)idx[i]);
}

int main(void)
{
    pk_test_init("test_bits");
    ctx = pk_test_cpu_ctx();
    printf("CPU path %s\n", pk_ctx_describe(ctx));
    check_pack();
    check_bad_args();
    check_k_zero();
    static const int64_t ks[] = {1, 2, 31, 33, 63, 64, 65, 127, 128, 255, 256, 257, 511, 513, 1000};
    for (size_t c = 0; c < sizeof ks / sizeof *ks; c++) {
        int64_t m = 1 + pk_test_below(13), n = 1 + pk_test_below(13);
        check_products(m, n, ks[c]);
        check_products(4, 4, ks[c]);
        check_products(9, 7, ks[c]);
    }
    check_products(150, 151, 1000);   /* threaded, many full tiles */
    check_products(6, 5, 16500);      /* long rows (Harley-Seal on AVX2) */
    check_products(3, 70, 66000);     /* k > 65535: no u16 */
    /* Top-k. */
    check_topk(5, 40, 64, 1, 0);
    check_topk(5, 40, 64, 40, 0);     /* topk = n */
    check_topk(7, 33, 3, 10, 1);      /* distances in [0, 3]: all ties */
    check_topk(3, 100, 1, 50, 0);
    check_topk(9, 1000, 127, 100, 1);
    check_topk(9, 1000, 300, 999, 0);
    check_topk(4, 20000, 256, 10, 0);    /* few queries: database ranges */
    check_topk(3, 20000, 64, 700, 1);
    check_topk(40, 5000, 256, 10, 1);    /* query blocks */
    check_topk(40, 5000, 100, 333, 0);
    check_topk(2, 3000, 65, 3000, 1);    /* topk = n, threaded */
    check_topk(3, 300, 5000, 40, 1);     /* long codes: quickselect lists */
    check_topk(2, 200, 4097, 200, 0);
    check_topk(20, 3000, 4200, 70, 1);
    pk_ctx_destroy(ctx);
    return pk_test_finish("test_bits");
}
