/* `pk pack`, `pk bgemm`, `pk hamming` and `pk knn` on .npy files against
 * plain loops: bits by element, +-1 products, popcounts, and a sorted
 * nearest-neighbour list; word files from pk pack and FAISS-layout uint8
 * codes. Usage: test_cli_bits PK [cpu|cuda]. */
#include "cli_util.h"

/* Bit j of row i of a bit file's data (words or bytes). */
static int bit_at(const void *data, int bytes, int64_t width, int64_t i, int64_t j)
{
    if (bytes) return ((const uint8_t *)data)[i * width + j / 8] >> (j % 8) & 1;
    return (int)(((const uint64_t *)data)[i * width + j / 64] >> (j % 64) & 1);
}

static void test_pack(void)
{
    static const int64_t ks[] = {1, 63, 64, 65, 130};
    for (int ki = 0; ki < 5; ki++)
        for (int kind = 0; kind < 3; kind++) { /* f32, u8, bool */
            const int64_t rows = 5, k = ks[ki], words = (k + 63) / 64;
            const pk_npy_type t = kind == 0 ? PK_NPY_F32 : kind == 1 ? PK_NPY_U8 : PK_NPY_BOOL;
            const size_t es = pk_npy_type_size(t);
            unsigned char *x = pk_test_alloc((size_t)(rows * k) * es);
            for (int64_t i = 0; i < rows * k; i++) {
                if (kind == 0) {
                    float v = (float)pk_test_uniform(-1, 1);
                    if (i % 17 == 3) v = -0.0f;
                    if (i % 29 == 5) v = NAN;
                    ((float *)x)[i] = v;
                } else {
                    x[i] = (uint8_t)(kind == 2 ? pk_test_below(2) : pk_test_below(3) * 100);
                }
            }
            const int64_t shape[2] = {rows, k};
            cli_save("x.npy", t, 2, shape, x);
            int rc = PK("pack", "x.npy", "-o", "bits.npy");
            const int64_t oshape[2] = {rows, words};
            pk_npy_array a;
            const uint64_t *w = cli_load(&a, "bits.npy", PK_NPY_U64, 2, oshape);
            int bad = rc != 0 || !w;
            for (int64_t i = 0; !bad && i < rows; i++)
                for (int64_t j = 0; !bad && j < 64 * words; j++) {
                    int want = 0;
                    if (j < k && kind == 0) {
                        float v = ((float *)x)[i * k + j];
                        want = !(v < 0) && !isnan(v); /* -0.0 is 1, NaN 0 */
                    } else if (j < k) {
                        want = x[i * k + j] != 0;
                    }
                    bad = bit_at(w, 0, words, i, j) != want;
                }
            char note[64];
            snprintf(note, sizeof note, "| %lld bits a row (pass --bits %lld", (long long)k,
                     (long long)k);
            PK_CHECK(!bad && strstr(cli_out, note), "pack %s k=%lld: %d %s %s",
                     pk_npy_type_name(t), (long long)k, rc, cli_out, cli_err);
            uint64_t first[3] = {0};
            if (w) memcpy(first, w, (size_t)words * 8);
            pk_npy_close(&a);
            /* one row, 1-D in and out */
            cli_save("row.npy", t, 1, &k, x);
            rc = PK("pack", "row.npy", "-o", "rowbits.npy");
            w = cli_load(&a, "rowbits.npy", PK_NPY_U64, 1, &words);
            PK_CHECK(rc == 0 && w && memcmp(w, first, (size_t)words * 8) == 0, "1-D pack");
            pk_npy_close(&a);
            free(x);
        }
}

/* A bit file of rows x k random bits: words (as pk pack writes: padding 0)
 * or bytes (FAISS codes: k = 8 x bytes). */
static void *random_codes(int bytes, int64_t rows, int64_t k, int64_t *width)
{
    *width = bytes ? k / 8 : (k + 63) / 64;
    const size_t es = bytes ? 1 : 8;
    unsigned char *d = pk_test_alloc((size_t)(rows * *width) * es + 8);
    for (size_t i = 0; i < (size_t)(rows * *width) * es; i++) d[i] = (unsigned char)pk_test_next();
    if (!bytes && k % 64)
        for (int64_t i = 0; i < rows; i++)
            ((uint64_t *)d)[i * *width + *width - 1] &= ((uint64_t)1 << (k % 64)) - 1;
    return d;
}

static int32_t hamming(const void *q, const void *x, int bytes, int64_t width, int64_t i,
                       int64_t j, int64_t k)
{
    int32_t d = 0;
    for (int64_t l = 0; l < k; l++) d += bit_at(q, bytes, width, i, l) != bit_at(x, bytes, width, j, l);
    return d;
}

static void test_bgemm_hamming(void)
{
    static const int64_t ks[] = {64, 100, 256, 8};
    for (int bytes = 0; bytes < 2; bytes++)
        for (int ki = 0; ki < 4; ki++) {
            const int64_t k = ks[ki], m = 13, n = 29;
            if (bytes && k % 8) continue;
            int64_t width;
            void *q = random_codes(bytes, m, k, &width), *x = random_codes(bytes, n, k, &width);
            const pk_npy_type t = bytes ? PK_NPY_U8 : PK_NPY_U64;
            cli_save("q.npy", t, 2, (int64_t[]){m, width}, q);
            cli_save("x.npy", t, 2, (int64_t[]){n, width}, x);
            char kb[24];
            snprintf(kb, sizeof kb, "%lld", (long long)k);
            const int64_t dshape[2] = {m, n};
            int rc = PK("bgemm", "q.npy", "x.npy", "--bits", kb, "-o", "c.npy", "--json");
            pk_npy_array a, b;
            const int32_t *c = cli_load(&a, "c.npy", PK_NPY_I32, 2, dshape);
            rc |= PK("hamming", "q.npy", "x.npy", "-o", "d.npy") << 8;
            const int32_t *d = cli_load(&b, "d.npy", PK_NPY_I32, 2, dshape);
            int bad = rc != 0 || !c || !d;
            for (int64_t i = 0; !bad && i < m; i++)
                for (int64_t j = 0; !bad && j < n; j++) {
                    int32_t h = hamming(q, x, bytes, width, i, j, k);
                    bad = c[i * n + j] != (int32_t)k - 2 * h || d[i * n + j] != h;
                }
            PK_CHECK(!bad, "bgemm/hamming %s k=%lld: status %x %s", bytes ? "bytes" : "words",
                     (long long)k, rc, cli_err);
            pk_npy_close(&a);
            pk_npy_close(&b);
            /* u16 distances over the first half of the bits (--bits) */
            snprintf(kb, sizeof kb, "%lld", (long long)k / 2);
            rc = PK("hamming", "q.npy", "x.npy", "-o", "d16.npy", "--dtype", "u16", "--bits", kb);
            const uint16_t *d16 = cli_load(&a, "d16.npy", PK_NPY_U16, 2, dshape);
            bad = rc != 0 || !d16;
            for (int64_t i = 0; !bad && i < m; i++)
                for (int64_t j = 0; !bad && j < n; j++)
                    bad = d16[i * n + j] != hamming(q, x, bytes, width, i, j, k / 2);
            PK_CHECK(!bad, "hamming u16 --bits %s: %s", kb, cli_err);
            pk_npy_close(&a);
            free(q);
            free(x);
        }
    /* bgemm of word files needs --bits; too many bits; different widths */
    const int64_t s2[2] = {2, 2}, s3[2] = {2, 3};
    cli_save("w2.npy", PK_NPY_U64, 2, s2, (uint64_t[]){1, 2, 3, 4});
    cli_save("w3.npy", PK_NPY_U64, 2, s3, (uint64_t[]){1, 2, 3, 4, 5, 6});
    int before = cli_entries();
    int rc = PK("bgemm", "w2.npy", "w2.npy", "-o", "c.npy");
    PK_CHECK(rc == 2 && cli_lines(cli_err) == 1 && strstr(cli_err, "--bits") &&
                 cli_entries() == before, "bgemm without --bits: %d %s", rc, cli_err);
    rc = PK("hamming", "w2.npy", "w2.npy", "--bits", "129", "-o", "c.npy");
    CHECK_FAILS(before, "w2.npy", rc, "--bits past the words");
    rc = PK("hamming", "w2.npy", "w3.npy", "-o", "c.npy");
    CHECK_FAILS(before, "w3.npy", rc, "different widths");
    cli_save("f.npy", PK_NPY_F32, 2, s2, (float[]){1, 2, 3, 4});
    rc = PK("hamming", "f.npy", "w2.npy", "-o", "c.npy");
    CHECK_FAILS(before + 1, "f.npy", rc, "float codes");
}

/* The topk nearest by (distance, index), as pk_hamming_topk promises. */
static void test_knn(void)
{
    for (int bytes = 0; bytes < 2; bytes++)
        for (int ti = 0; ti < 3; ti++) {
            const int topk = (int[]){1, 20, 40}[ti];
            const int64_t m = 11, n = 40, k = bytes ? 96 : 200;
            int64_t width;
            void *q = random_codes(bytes, m, k, &width), *x = random_codes(bytes, n, k, &width);
            /* duplicates: ties broken by the lower index */
            memcpy((char *)x + 7 * width * (bytes ? 1 : 8), x, (size_t)width * (bytes ? 1 : 8));
            const pk_npy_type t = bytes ? PK_NPY_U8 : PK_NPY_U64;
            cli_save("db.npy", t, 2, (int64_t[]){n, width}, x);
            cli_save("q.npy", t, 2, (int64_t[]){m, width}, q);
            char ks[16];
            snprintf(ks, sizeof ks, "%d", topk);
            int rc = PK("knn", "--db", "db.npy", "--queries", "q.npy", "-k", ks, "-o", "ids.npy",
                        "--dist", "dist.npy");
            const int64_t shape[2] = {m, topk};
            pk_npy_array a, b;
            const int64_t *ids = cli_load(&a, "ids.npy", PK_NPY_I64, 2, shape);
            const int32_t *dist = cli_load(&b, "dist.npy", PK_NPY_I32, 2, shape);
            int bad = rc != 0 || !ids || !dist;
            for (int64_t i = 0; !bad && i < m; i++) {
                char taken[40] = {0};
                for (int r = 0; !bad && r < topk; r++) { /* the r-th nearest, lowest index first */
                    int64_t best = -1;
                    int32_t bd = 0;
                    for (int64_t j = 0; j < n; j++) {
                        int32_t h = hamming(q, x, bytes, width, i, j, k);
                        if (!taken[j] && (best < 0 || h < bd)) best = j, bd = h;
                    }
                    taken[best] = 1;
                    bad = ids[i * topk + r] != best || dist[i * topk + r] != bd;
                }
            }
            PK_CHECK(!bad, "knn %s k=%d: status %d %s", bytes ? "bytes" : "words", topk, rc, cli_err);
            pk_npy_close(&a);
            pk_npy_close(&b);
            free(q);
            free(x);
        }
    int before = cli_entries();
    int rc = PK("knn", "--db", "db.npy", "--queries", "q.npy", "-k", "41", "-o", "new.npy");
    CHECK_FAILS(before, "db.npy", rc, "k past the database");
    rc = PK("knn", "--db", "db.npy", "--queries", "q.npy", "-k", "3", "-o", "only_ids.npy", "--json");
    PK_CHECK(rc == 0 && cli_entries() == before + 1 && strstr(cli_out, "\"tops\": ") &&
                 strstr(cli_out, "\"bits\": 96"), "knn without --dist: %s", cli_out);
}

static void test(void)
{
    test_pack();
    test_bgemm_hamming();
    test_knn();
}

int main(int argc, char **argv) { return cli_main(argc, argv, "test_cli_bits", test); }
