/* Argument checks of the bit-matrix kernels: packing, binary GEMM, Hamming
 * distances and top-k. */
#include "check.h"

int64_t pk_bits_words(int64_t k)
{
    return k < 0 ? -1 : k / 64 + (k % 64 != 0);
}

static pk_status check_format(pk_ctx *ctx, const char *fn, pk_bits_format fmt,
                              size_t *size)
{
    CHECK(fmt == PK_BITS_F32_SIGN || fmt == PK_BITS_U8,
          "%s: unknown format %d", fn, (int)fmt);
    *size = fmt == PK_BITS_F32_SIGN ? sizeof(float) : 1;
    return PK_OK;
}

/* The array side (x) and the bit side (bits) of pack and unpack. */
static pk_status check_pack(pk_ctx *ctx, const char *fn, pk_bits_format fmt,
                            int64_t rows, int64_t k, const void *x,
                            int64_t ldx, const void *bits, int64_t ldw)
{
    size_t size = 1;
    pk_status s = check_format(ctx, fn, fmt, &size);
    if (s) return s;
    CHECK(rows >= 0 && k >= 0, "%s: rows = %lld, k = %lld: negative", fn,
          (long long)rows, (long long)k);
    int64_t xb = 0, wb = 0;
    if ((s = check_matrix(ctx, fn, "x", x, rows, k, ldx, size, &xb))) return s;
    if ((s = check_matrix(ctx, fn, "bits", bits, rows, pk_bits_words(k), ldw,
                          sizeof(uint64_t), &wb)))
        return s;
    CHECK(!ranges_overlap(x, xb, bits, wb), "%s: x overlaps bits", fn);
    return PK_OK;
}

pk_status pk_bits_pack(pk_ctx *ctx, pk_bits_format fmt, int64_t rows,
                       int64_t k, const void *x, int64_t ldx, uint64_t *bits,
                       int64_t ldw)
{
    static const char fn[] = "pk_bits_pack";
    PK__CHECK_CTX(ctx, fn);
    pk_status s = check_pack(ctx, fn, fmt, rows, k, x, ldx, bits, ldw);
    if (s) return s;
    if (rows == 0 || k == 0) return PK_OK;
    CHECK_SLOT(bits_pack, fn);
    return ctx->ops->bits_pack(ctx, fmt, rows, k, x, ldx, bits, ldw);
}

pk_status pk_bits_unpack(pk_ctx *ctx, pk_bits_format fmt, int64_t rows,
                         int64_t k, const uint64_t *bits, int64_t ldw, void *x,
                         int64_t ldx)
{
    static const char fn[] = "pk_bits_unpack";
    PK__CHECK_CTX(ctx, fn);
    pk_status s = check_pack(ctx, fn, fmt, rows, k, x, ldx, bits, ldw);
    if (s) return s;
    if (rows == 0 || k == 0) return PK_OK;
    CHECK_SLOT(bits_unpack, fn);
    return ctx->ops->bits_unpack(ctx, fmt, rows, k, bits, ldw, x, ldx);
}

/* The two bit-matrix operands; fills a and the byte spans of both. */
static pk_status check_operands(pk_ctx *ctx, const char *fn, const char *an,
                                const char *bn, int64_t m, int64_t n, int64_t k,
                                const uint64_t *A, int64_t lda,
                                const uint64_t *B, int64_t ldb,
                                pk__bits_args *a, int64_t *ab, int64_t *bb)
{
    CHECK(m >= 0 && n >= 0 && k >= 0, "%s: m = %lld, n = %lld, k = %lld: negative",
          fn, (long long)m, (long long)n, (long long)k);
    CHECK(k <= INT32_MAX, "%s: k = %lld bits: at most 2^31 - 1", fn,
          (long long)k);
    int64_t words = pk_bits_words(k);
    pk_status s;
    if ((s = check_matrix(ctx, fn, an, A, m, words, lda, sizeof(uint64_t), ab)))
        return s;
    if ((s = check_matrix(ctx, fn, bn, B, n, words, ldb, sizeof(uint64_t), bb)))
        return s;
    *a = (pk__bits_args){.m = m, .n = n, .k = k, .A = A, .B = B, .lda = lda,
                         .ldb = ldb};
    return PK_OK;
}

pk_status pk_bgemm(pk_ctx *ctx, int64_t m, int64_t n, int64_t k,
                   const uint64_t *A, int64_t lda, const uint64_t *B,
                   int64_t ldb, int32_t *C, int64_t ldc)
{
    static const char fn[] = "pk_bgemm";
    PK__CHECK_CTX(ctx, fn);
    pk__bits_args a;
    int64_t ab = 0, bb = 0, cb = 0;
    pk_status s = check_operands(ctx, fn, "A", "B", m, n, k, A, lda, B, ldb, &a,
                                 &ab, &bb);
    if (s) return s;
    if ((s = check_matrix(ctx, fn, "C", C, m, n, ldc, sizeof(int32_t), &cb)))
        return s;
    CHECK(!ranges_overlap(A, ab, C, cb) && !ranges_overlap(B, bb, C, cb),
          "%s: C overlaps A or B", fn);
    if (m == 0 || n == 0) return PK_OK;
    CHECK_SLOT(bgemm, fn);
    return ctx->ops->bgemm(ctx, &a, C, ldc);
}

pk_status pk_hamming(pk_ctx *ctx, pk_hamming_dtype dt, int64_t m, int64_t n,
                     int64_t k, const uint64_t *Q, int64_t ldq,
                     const uint64_t *X, int64_t ldx, void *D, int64_t ldd)
{
    static const char fn[] = "pk_hamming";
    PK__CHECK_CTX(ctx, fn);
    CHECK(dt == PK_HAMMING_I32 || dt == PK_HAMMING_U16, "%s: unknown distance type %d",
          fn, (int)dt);
    pk__bits_args a;
    int64_t qb = 0, xb = 0, db = 0;
    pk_status s = check_operands(ctx, fn, "Q", "X", m, n, k, Q, ldq, X, ldx, &a,
                                 &qb, &xb);
    if (s) return s;
    CHECK(dt == PK_HAMMING_I32 || k <= UINT16_MAX,
          "%s: k = %lld bits does not fit u16 distances (at most 65535)", fn,
          (long long)k);
    size_t size = dt == PK_HAMMING_I32 ? sizeof(int32_t) : sizeof(uint16_t);
    if ((s = check_matrix(ctx, fn, "D", D, m, n, ldd, size, &db))) return s;
    CHECK(!ranges_overlap(Q, qb, D, db) && !ranges_overlap(X, xb, D, db),
          "%s: D overlaps Q or X", fn);
    if (m == 0 || n == 0) return PK_OK;
    CHECK_SLOT(hamming, fn);
    return ctx->ops->hamming(ctx, &a, dt, D, ldd);
}

pk_status pk_hamming_topk(pk_ctx *ctx, int64_t m, int64_t n, int64_t k,
                          const uint64_t *Q, int64_t ldq, const uint64_t *X,
                          int64_t ldx, int64_t topk, int32_t *dist,
                          int64_t *idx)
{
    static const char fn[] = "pk_hamming_topk";
    PK__CHECK_CTX(ctx, fn);
    pk__bits_args a;
    int64_t qb = 0, xb = 0, db = 0, ib = 0;
    pk_status s = check_operands(ctx, fn, "Q", "X", m, n, k, Q, ldq, X, ldx, &a,
                                 &qb, &xb);
    if (s) return s;
    CHECK(topk >= 1 && topk <= n, "%s: topk = %lld must be in [1, n = %lld]",
          fn, (long long)topk, (long long)n);
    if ((s = check_matrix(ctx, fn, "dist", dist, m, topk, topk, sizeof(int32_t),
                          &db)))
        return s;
    if ((s = check_matrix(ctx, fn, "idx", idx, m, topk, topk, sizeof(int64_t),
                          &ib)))
        return s;
    CHECK(!ranges_overlap(dist, db, idx, ib), "%s: dist overlaps idx", fn);
    CHECK(!ranges_overlap(Q, qb, dist, db) && !ranges_overlap(X, xb, dist, db) &&
              !ranges_overlap(Q, qb, idx, ib) && !ranges_overlap(X, xb, idx, ib),
          "%s: dist or idx overlaps Q or X", fn);
    if (m == 0) return PK_OK;
    CHECK_SLOT(hamming_topk, fn);
    return ctx->ops->hamming_topk(ctx, &a, topk, dist, idx);
}
