/* Hamming-distance tiles, the top-k threshold scan and row packing, compiled
 * once per popcount path (see bits_kernels.h). PK_BITS_SYMBOL and
 * PK_BITS_NAME name the table; the ISA flags pick the code:
 *
 *  - AVX-512 VPOPCNTDQ: a 4 x 4 register block of A rows x B rows; per 512
 *    bits one XOR, one VPOPCNTQ and one add per pair into 64-bit lanes, the
 *    16 accumulators reduced by one shuffle tree at the end.
 *  - AVX2: 2 x 2 blocks; popcount by nibble lookup (vpshufb) into byte
 *    lanes, widened by vpsadbw every 31 steps before a byte can overflow;
 *    a single pair with a long row takes Harley-Seal carry-save adders, which
 *    need one lookup per 16 vectors instead of one per vector.
 *  - popcnt: 2 x 2 blocks of scalar POPCNT.
 *  - reference: one pair at a time, plain C.
 *
 * The padding of the last word never counts: it is masked (tailmask). */
#include "bits_kernels.h"

#include <string.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#define MR 4 /* the 4 x 4 row-major tile of the AVX2, popcnt, reference paths */
#define NR 4

static inline int64_t popc(uint64_t x) { return __builtin_popcountll(x); }

/* base + scale * d in wrapping arithmetic: bgemm's k - 2d is in range, the
 * product alone may not be (k near 2^31). */
/* (unused: not every ISA build calls out32 and dist_words) */
__attribute__((unused)) static inline int32_t out32(int32_t base, int32_t scale, int64_t d)
{
    return (int32_t)((uint32_t)base + (uint32_t)scale * (uint32_t)d);
}

/* Distance of one pair, word by word. */
__attribute__((unused)) static inline int64_t dist_words(const uint64_t *a, const uint64_t *b,
                                                        int64_t fw, uint64_t tailmask)
{
    int64_t d = 0;
    for (int64_t w = 0; w < fw; w++) d += popc(a[w] ^ b[w]);
    if (tailmask) d += popc((a[fw] ^ b[fw]) & tailmask);
    return d;
}

#if defined(__AVX512VPOPCNTDQ__) && defined(__AVX512VL__)
/* Panels of 16 B rows: per word, two vectors hold that word of the 16 rows;
 * each of 8 A rows broadcasts its word against both. 16 accumulators, each
 * lane one (A row, B row) pair: no horizontal sum at the end. */
#define TILE_MR 8
#define TILE_NR 16
#define PANEL 1

static inline __m512i out16(__m512i lo, __m512i hi, int32_t base, int32_t scale)
{
    /* The low dwords of both (the counts fit 32 bits): one permute. */
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24,
                                           26, 28, 30);
    __m512i d = _mm512_permutex2var_epi32(lo, even, hi);
    __m512i vb = _mm512_set1_epi32(base);
    if (scale == 1) return _mm512_add_epi32(vb, d);
    if (scale == -2) return _mm512_sub_epi32(vb, _mm512_add_epi32(d, d));
    return _mm512_add_epi32(vb, _mm512_mullo_epi32(d, _mm512_set1_epi32(scale)));
}

static void tile(const uint64_t *A, int64_t lda, const uint64_t *P, int64_t ldb,
                 int64_t fw, uint64_t tailmask, int mr, int nr, int32_t base,
                 int32_t scale, int32_t *C, int64_t ldc)
{
    (void)ldb;
    const uint64_t *a[TILE_MR]; /* rows past mr repeat the last one */
    for (int i = 0; i < TILE_MR; i++) a[i] = A + (i < mr ? i : mr - 1) * lda;
    __m512i acc[TILE_MR][2];
#pragma GCC unroll 8
    for (int i = 0; i < TILE_MR; i++) acc[i][0] = acc[i][1] = _mm512_setzero_si512();
    /* Full words broadcast straight from memory; the partial last word is
     * masked (the panel's copy of it already is). */
#define STEP(w, MASK)                                                                   \
    do {                                                                                \
        __m512i b0 = _mm512_loadu_si512(P + (w) * TILE_NR);                             \
        __m512i b1 = _mm512_loadu_si512(P + (w) * TILE_NR + 8);                         \
        _Pragma("GCC unroll 8") for (int i = 0; i < TILE_MR; i++) {                     \
            __m512i x = _mm512_set1_epi64((long long)(a[i][w] MASK));                   \
            acc[i][0] = _mm512_add_epi64(acc[i][0], _mm512_popcnt_epi64(_mm512_xor_si512(x, b0))); \
            acc[i][1] = _mm512_add_epi64(acc[i][1], _mm512_popcnt_epi64(_mm512_xor_si512(x, b1))); \
        }                                                                               \
    } while (0)
    for (int64_t w = 0; w < fw; w++) STEP(w, );
    if (tailmask) STEP(fw, &tailmask);
#undef STEP
    __mmask16 store = (__mmask16)((1u << nr) - 1);
#pragma GCC unroll 8
    for (int i = 0; i < TILE_MR; i++)
        if (i < mr)
            _mm512_mask_storeu_epi32(C + i * ldc, store, out16(acc[i][0], acc[i][1], base, scale));
}

#elif defined(__AVX2__)
static inline __m256i popcnt_bytes(__m256i x)
{
    const __m256i lut = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
                                         0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
    const __m256i low = _mm256_set1_epi8(0x0f);
    __m256i lo = _mm256_and_si256(x, low);
    __m256i hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), low);
    return _mm256_add_epi8(_mm256_shuffle_epi8(lut, lo), _mm256_shuffle_epi8(lut, hi));
}

static inline int64_t hsum_epi64(__m256i v)
{
    __m128i s = _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    return _mm_cvtsi128_si64(s) + _mm_extract_epi64(s, 1);
}

/* Full 4-word vectors of a 2 x 2 block over words [0, fw4): sums in d. */
static void block2x2(const uint64_t *A, int64_t lda, const uint64_t *B,
                     int64_t ldb, int64_t fw4, int64_t d[2][2])
{
    __m256i wide[2][2], bytes[2][2];
    const __m256i zero = _mm256_setzero_si256();
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) wide[i][j] = bytes[i][j] = zero;
    int steps = 0;
    for (int64_t w = 0; w < fw4; w += 4) {
        __m256i a0 = _mm256_loadu_si256((const __m256i *)(A + w));
        __m256i a1 = _mm256_loadu_si256((const __m256i *)(A + lda + w));
        __m256i b0 = _mm256_loadu_si256((const __m256i *)(B + w));
        __m256i b1 = _mm256_loadu_si256((const __m256i *)(B + ldb + w));
        bytes[0][0] = _mm256_add_epi8(bytes[0][0], popcnt_bytes(_mm256_xor_si256(a0, b0)));
        bytes[0][1] = _mm256_add_epi8(bytes[0][1], popcnt_bytes(_mm256_xor_si256(a0, b1)));
        bytes[1][0] = _mm256_add_epi8(bytes[1][0], popcnt_bytes(_mm256_xor_si256(a1, b0)));
        bytes[1][1] = _mm256_add_epi8(bytes[1][1], popcnt_bytes(_mm256_xor_si256(a1, b1)));
        /* A byte gains at most 8 per step: widen before 31 steps (248). */
        if (++steps == 31 || w + 4 >= fw4) {
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2; j++) {
                    wide[i][j] = _mm256_add_epi64(wide[i][j], _mm256_sad_epu8(bytes[i][j], zero));
                    bytes[i][j] = zero;
                }
            steps = 0;
        }
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) d[i][j] = hsum_epi64(wide[i][j]);
}

/* Harley-Seal: carry-save adders fold 16 vectors into ones, twos, fours,
 * eights and one sixteens vector, which alone is counted. */
#define CSA(h, l, a, b, c)                                                   \
    do {                                                                     \
        __m256i u_ = _mm256_xor_si256(a, b);                                 \
        h = _mm256_or_si256(_mm256_and_si256(a, b), _mm256_and_si256(u_, c)); \
        l = _mm256_xor_si256(u_, c);                                         \
    } while (0)

static int64_t harley_seal(const uint64_t *a, const uint64_t *b, int64_t nv)
{
#define X(i) _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(a + 4 * (i))), \
                              _mm256_loadu_si256((const __m256i *)(b + 4 * (i))))
    const __m256i zero = _mm256_setzero_si256();
    __m256i total = zero, ones = zero, twos = zero, fours = zero, eights = zero;
    __m256i sixteens, twosA, twosB, foursA, foursB, eightsA, eightsB;
    int64_t i = 0;
    for (; i + 16 <= nv; i += 16) {
        CSA(twosA, ones, ones, X(i), X(i + 1));
        CSA(twosB, ones, ones, X(i + 2), X(i + 3));
        CSA(foursA, twos, twos, twosA, twosB);
        CSA(twosA, ones, ones, X(i + 4), X(i + 5));
        CSA(twosB, ones, ones, X(i + 6), X(i + 7));
        CSA(foursB, twos, twos, twosA, twosB);
        CSA(eightsA, fours, fours, foursA, foursB);
        CSA(twosA, ones, ones, X(i + 8), X(i + 9));
        CSA(twosB, ones, ones, X(i + 10), X(i + 11));
        CSA(foursA, twos, twos, twosA, twosB);
        CSA(twosA, ones, ones, X(i + 12), X(i + 13));
        CSA(twosB, ones, ones, X(i + 14), X(i + 15));
        CSA(foursB, twos, twos, twosA, twosB);
        CSA(eightsB, fours, fours, foursA, foursB);
        CSA(sixteens, eights, eights, eightsA, eightsB);
        total = _mm256_add_epi64(total, _mm256_sad_epu8(popcnt_bytes(sixteens), zero));
    }
    total = _mm256_slli_epi64(total, 4);
    total = _mm256_add_epi64(total, _mm256_slli_epi64(_mm256_sad_epu8(popcnt_bytes(eights), zero), 3));
    total = _mm256_add_epi64(total, _mm256_slli_epi64(_mm256_sad_epu8(popcnt_bytes(fours), zero), 2));
    total = _mm256_add_epi64(total, _mm256_slli_epi64(_mm256_sad_epu8(popcnt_bytes(twos), zero), 1));
    total = _mm256_add_epi64(total, _mm256_sad_epu8(popcnt_bytes(ones), zero));
    for (; i < nv; i++) total = _mm256_add_epi64(total, _mm256_sad_epu8(popcnt_bytes(X(i)), zero));
    return hsum_epi64(total);
#undef X
}

/* Rows of at least this many 256-bit vectors take Harley-Seal. */
#define HS_MIN_VECTORS 64

static int64_t dist_pair(const uint64_t *a, const uint64_t *b, int64_t fw,
                         uint64_t tailmask)
{
    int64_t fw4 = fw & ~(int64_t)3, d;
    if (fw4 / 4 >= HS_MIN_VECTORS) {
        d = harley_seal(a, b, fw4 / 4);
    } else {
        int64_t dd[2][2];
        block2x2(a, 0, b, 0, fw4, dd);
        d = dd[0][0];
    }
    for (int64_t w = fw4; w < fw; w++) d += popc(a[w] ^ b[w]);
    if (tailmask) d += popc((a[fw] ^ b[fw]) & tailmask);
    return d;
}

static void tile_full(const uint64_t *A, int64_t lda, const uint64_t *B,
                      int64_t ldb, int64_t fw, uint64_t tailmask, int32_t base,
                      int32_t scale, int32_t *C, int64_t ldc)
{
    int64_t fw4 = fw & ~(int64_t)3;
    for (int i = 0; i < MR; i += 2)
        for (int j = 0; j < NR; j += 2) {
            const uint64_t *a = A + i * lda, *b = B + j * ldb;
            int64_t d[2][2];
            if (fw4 / 4 >= HS_MIN_VECTORS) {
                for (int r = 0; r < 2; r++)
                    for (int c = 0; c < 2; c++)
                        d[r][c] = harley_seal(a + r * lda, b + c * ldb, fw4 / 4);
            } else {
                block2x2(a, lda, b, ldb, fw4, d);
            }
            for (int r = 0; r < 2; r++)
                for (int c = 0; c < 2; c++) {
                    const uint64_t *ar = a + r * lda, *bc = b + c * ldb;
                    for (int64_t w = fw4; w < fw; w++) d[r][c] += popc(ar[w] ^ bc[w]);
                    if (tailmask) d[r][c] += popc((ar[fw] ^ bc[fw]) & tailmask);
                    C[(i + r) * ldc + j + c] = out32(base, scale, d[r][c]);
                }
        }
}
#define HAVE_TILE_FULL 1
#define TILE_MR 4
#define TILE_NR 4
#define PANEL 0

#elif defined(__POPCNT__)
static int64_t dist_pair(const uint64_t *a, const uint64_t *b, int64_t fw,
                         uint64_t tailmask)
{
    return dist_words(a, b, fw, tailmask);
}

static void tile_full(const uint64_t *A, int64_t lda, const uint64_t *B,
                      int64_t ldb, int64_t fw, uint64_t tailmask, int32_t base,
                      int32_t scale, int32_t *C, int64_t ldc)
{
    for (int i = 0; i < MR; i += 2)
        for (int j = 0; j < NR; j += 2) {
            const uint64_t *a0 = A + i * lda, *a1 = a0 + lda;
            const uint64_t *b0 = B + j * ldb, *b1 = b0 + ldb;
            int64_t d00 = 0, d01 = 0, d10 = 0, d11 = 0;
            for (int64_t w = 0; w < fw; w++) {
                d00 += popc(a0[w] ^ b0[w]), d01 += popc(a0[w] ^ b1[w]);
                d10 += popc(a1[w] ^ b0[w]), d11 += popc(a1[w] ^ b1[w]);
            }
            if (tailmask) {
                d00 += popc((a0[fw] ^ b0[fw]) & tailmask);
                d01 += popc((a0[fw] ^ b1[fw]) & tailmask);
                d10 += popc((a1[fw] ^ b0[fw]) & tailmask);
                d11 += popc((a1[fw] ^ b1[fw]) & tailmask);
            }
            int32_t *c = C + i * ldc + j;
            c[0] = out32(base, scale, d00), c[1] = out32(base, scale, d01);
            c[ldc] = out32(base, scale, d10), c[ldc + 1] = out32(base, scale, d11);
        }
}
#define HAVE_TILE_FULL 1
#define TILE_MR 4
#define TILE_NR 4
#define PANEL 0

#else
#define dist_pair dist_words
#define HAVE_TILE_FULL 0
#define TILE_MR 4
#define TILE_NR 4
#define PANEL 0
#endif

#if !PANEL
static void tile(const uint64_t *A, int64_t lda, const uint64_t *B, int64_t ldb,
                 int64_t fw, uint64_t tailmask, int mr, int nr, int32_t base,
                 int32_t scale, int32_t *C, int64_t ldc)
{
#if HAVE_TILE_FULL
    if (mr == MR && nr == NR) {
        tile_full(A, lda, B, ldb, fw, tailmask, base, scale, C, ldc);
        return;
    }
#endif
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nr; j++)
            C[i * ldc + j] =
                out32(base, scale, dist_pair(A + i * lda, B + j * ldb, fw, tailmask));
}
#endif

static int64_t first_below(const int32_t *d, int64_t n, int32_t thr)
{
    int64_t j = 0;
#if defined(__AVX512F__)
    __m512i t = _mm512_set1_epi32(thr);
    for (; j + 16 <= n; j += 16) {
        __mmask16 lt = _mm512_cmplt_epi32_mask(_mm512_loadu_si512(d + j), t);
        if (lt) return j + __builtin_ctz(lt);
    }
#endif
    /* Whole chunks first: the compiler turns this into vector compares. */
    for (; j + 16 <= n; j += 16) {
        int any = 0;
        for (int t = 0; t < 16; t++) any |= d[j + t] < thr;
        if (any) break;
    }
    for (; j < n; j++)
        if (d[j] < thr) return j;
    return n;
}

static int64_t select_below(const int32_t *d, int64_t n, int32_t thr, int32_t *sel)
{
    int64_t c = 0, j = 0;
#if defined(__AVX512F__)
    __m512i t = _mm512_set1_epi32(thr), lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8,
                                                                 9, 10, 11, 12, 13, 14, 15);
    for (; j + 16 <= n; j += 16) {
        __mmask16 lt = _mm512_cmplt_epi32_mask(_mm512_loadu_si512(d + j), t);
        if (lt) {
            __m512i at = _mm512_add_epi32(lane, _mm512_set1_epi32((int)j));
            _mm512_storeu_si512(sel + c, _mm512_maskz_compress_epi32(lt, at));
            c += __builtin_popcount(lt);
        }
    }
#endif
    for (; j < n; j++) sel[c] = (int32_t)j, c += d[j] < thr; /* branch-free */
    return c;
}

static void pack_f32(const float *x, int64_t k, uint64_t *w)
{
    int64_t j = 0;
#if defined(__AVX512F__)
    /* Ordered >= : NaN compares false, -0.0 >= 0 is true. */
    for (; j + 64 <= k; j += 64) {
        uint64_t v = 0;
        for (int q = 0; q < 4; q++)
            v |= (uint64_t)_mm512_cmp_ps_mask(_mm512_loadu_ps(x + j + 16 * q),
                                              _mm512_setzero_ps(), _CMP_GE_OQ)
                 << (16 * q);
        w[j / 64] = v;
    }
#elif defined(__AVX2__)
    for (; j + 64 <= k; j += 64) {
        uint64_t v = 0;
        for (int q = 0; q < 8; q++)
            v |= (uint64_t)(uint32_t)_mm256_movemask_ps(_mm256_cmp_ps(
                     _mm256_loadu_ps(x + j + 8 * q), _mm256_setzero_ps(), _CMP_GE_OQ))
                 << (8 * q);
        w[j / 64] = v;
    }
#endif
    for (; j < k; j += 64) {
        uint64_t v = 0;
        int64_t e = k - j < 64 ? k - j : 64;
        for (int64_t t = 0; t < e; t++) v |= (uint64_t)(x[j + t] >= 0.0f) << t;
        w[j / 64] = v;
    }
}

static void pack_u8(const uint8_t *x, int64_t k, uint64_t *w)
{
    int64_t j = 0;
#if defined(__AVX512BW__)
    for (; j + 64 <= k; j += 64) {
        __m512i v = _mm512_loadu_si512(x + j);
        w[j / 64] = _mm512_test_epi8_mask(v, v);
    }
#elif defined(__AVX2__)
    for (; j + 64 <= k; j += 64) {
        const __m256i zero = _mm256_setzero_si256();
        uint32_t lo = ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(
            _mm256_loadu_si256((const __m256i *)(x + j)), zero));
        uint32_t hi = ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(
            _mm256_loadu_si256((const __m256i *)(x + j + 32)), zero));
        w[j / 64] = (uint64_t)hi << 32 | lo;
    }
#endif
    for (; j < k; j += 64) {
        uint64_t v = 0;
        int64_t e = k - j < 64 ? k - j : 64;
        for (int64_t t = 0; t < e; t++) v |= (uint64_t)(x[j + t] != 0) << t;
        w[j / 64] = v;
    }
}

const pk__bits_kernels PK_BITS_SYMBOL = {
    .name = PK_BITS_NAME,
    .mr = TILE_MR,
    .nr = TILE_NR,
    .panel = PANEL,
    .tile = tile,
    .first_below = first_below,
    .select_below = select_below,
    .pack_f32 = pack_f32,
    .pack_u8 = pack_u8,
};
