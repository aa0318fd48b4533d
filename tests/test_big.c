/* n = 2^31 + 17 (8.6 GB of f32 / i32): sizes and indices past 2^31 work.
 * f32 sum (against the exact sum and NumPy's pairwise error), i32 sum
 * (exact, int64 result), f32 dot of x with itself (x == y is allowed),
 * argmin/argmax/min/max with the extremes placed past index 2^31, and the
 * same row through pk_reduce_axis (1 x n, axis 1). The values are k/2^23 - 1
 * for 24-bit k, so exact references are integer sums. Skips (exit 77) when
 * the machine lacks the memory. Run alone with: ctest -R test_big. */
#include "util.h"

#include <sys/mman.h>

#define N (((int64_t)1 << 31) + 17)

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* MemAvailable in bytes, or 0 if unknown. */
static uint64_t mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[256];
    uint64_t kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %" SCNu64 " kB", &kb) == 1) break;
    fclose(f);
    return kb * 1024;
}

int main(void)
{
    pk_test_init("test_big");
    size_t bytes = (size_t)N * 4;
    uint64_t avail = mem_available();
    if (avail && avail < bytes + ((uint64_t)1 << 30)) {
        printf("skipped: %.1f GB available, %.1f GB needed\n", avail / 1e9, (bytes + (1 << 30)) / 1e9);
        return PK_TEST_SKIP;
    }
    /* 2 MB-aligned and backed by huge pages where the kernel allows it:
     * faulting in 8.6 GB of 4 kB pages alone takes a minute on some VMs. */
    float *x = aligned_alloc((size_t)1 << 21, bytes);
#ifdef MADV_HUGEPAGE
    if (x) madvise(x, bytes, MADV_HUGEPAGE);
#endif
    if (!x) {
        printf("skipped: malloc(%zu) failed\n", bytes);
        return PK_TEST_SKIP;
    }
    pk_ctx *ctx = pk_test_cpu_ctx();
    printf("context: %s, n = %lld\n", pk_ctx_describe(ctx), (long long)N);
    uint64_t seed = pk_test_seed;

    /* x[i] = k_i / 2^23 - 1, exact in f32. */
    int64_t ksum = 0;
    unsigned __int128 sq = 0; /* sum of (k - 2^23)^2 */
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < N; i++)
        x[i] = (float)(mix(seed + (uint64_t)i) >> 40) * 0x1p-23f - 1.0f;
    /* Extremes past 2^31, and ties before them. */
    const int64_t imax = N - 3, imin = ((int64_t)1 << 31) + 5;
    x[imax] = 2.0f;
    x[imax + 1] = 2.0f;
    x[imin] = -2.0f;
    x[N - 1] = -2.0f;
    ksum = 0;
    for (int64_t i = 0; i < N; i++) {
        int64_t k = (int64_t)((double)(x[i] + 1.0f) * 0x1p23); /* exact */
        ksum += k;
        int64_t d = k - ((int64_t)1 << 23);
        sq += (unsigned __int128)(d * d);
    }

    /* f32 sum: exact = ksum / 2^23 - N. */
    float s = 0;
    pk_status st = pk_reduce(ctx, PK_SUM, PK_F32, x, N, &s);
    PK_CHECK(st == PK_OK, "f32 sum: %s", pk_ctx_error(ctx));
    pk_test_xsum xs;
    pk_test_xsum_init(&xs);
    pk_test_xsum_add(&xs, (double)(ksum >> 20) * 0x1p-3);
    pk_test_xsum_add(&xs, (double)(ksum & ((1 << 20) - 1)) * 0x1p-23);
    pk_test_xsum_add(&xs, -(double)N);
    double exact = pk_test_xsum_value(&xs), err = pk_test_xsum_err(&xs, s);
    double np = pk_test_pairwise_f32(x, N), nerr = pk_test_xsum_err(&xs, np);
    printf("f32 sum: %.9g, exact %.17g, error %.3g; NumPy pairwise %.9g, error %.3g\n", s, exact,
           err, np, nerr);
    PK_CHECK(err <= nerr || err <= 0.5 * pk_test_ulp(PK_F32, exact) * (1 + 0x1p-20),
             "f32 sum of 2^31+17: error %.3g > NumPy's %.3g", err, nerr);

    /* The same row through reduce_axis, 1 x N along axis 1. */
    float row = 0;
    st = pk_reduce_axis(ctx, PK_SUM, PK_F32, x, 1, N, N, 1, &row);
    PK_CHECK(st == PK_OK && memcmp(&row, &s, 4) == 0, "reduce_axis 1 x N: %.9g vs %.9g (%s)", row,
             s, pk_ctx_error(ctx));

    /* Arg and order ops: indices past 2^31, ties to the first. */
    int64_t idx = -1;
    st = pk_reduce(ctx, PK_ARGMAX, PK_F32, x, N, &idx);
    PK_CHECK(st == PK_OK && idx == imax, "argmax = %lld, want %lld", (long long)idx, (long long)imax);
    st = pk_reduce(ctx, PK_ARGMIN, PK_F32, x, N, &idx);
    PK_CHECK(st == PK_OK && idx == imin, "argmin = %lld, want %lld", (long long)idx, (long long)imin);
    st = pk_reduce_axis(ctx, PK_ARGMIN, PK_F32, x, 1, N, N, 1, &idx);
    PK_CHECK(st == PK_OK && idx == imin, "axis argmin = %lld, want %lld", (long long)idx,
             (long long)imin);
    float m = 0;
    st = pk_reduce(ctx, PK_MAX, PK_F32, x, N, &m);
    PK_CHECK(st == PK_OK && m == 2.0f, "max = %g", m);
    st = pk_reduce(ctx, PK_MIN, PK_F32, x, N, &m);
    PK_CHECK(st == PK_OK && m == -2.0f, "min = %g", m);

    /* f32 dot of x with itself: exact = sq / 2^46. */
    float d = 0;
    st = pk_dot(ctx, PK_F32, N, x, x, &d);
    PK_CHECK(st == PK_OK, "dot: %s", pk_ctx_error(ctx));
    pk_test_xsum_init(&xs);
    pk_test_xsum_add(&xs, (double)(uint64_t)(sq >> 64) * 0x1p18);
    pk_test_xsum_add(&xs, (double)(uint64_t)(sq >> 32 & 0xffffffffu) * 0x1p-14);
    pk_test_xsum_add(&xs, (double)(uint64_t)(sq & 0xffffffffu) * 0x1p-46);
    exact = pk_test_xsum_value(&xs);
    err = pk_test_xsum_err(&xs, d);
    printf("f32 dot(x, x): %.9g, exact %.17g, error %.3g\n", d, exact, err);
    PK_CHECK(err <= pk_test_ulp(PK_F32, exact), "dot error %.3g > 1 ulp", err);

    /* i32 sum over the same bytes: exact, as int64. */
    const int32_t *xi = (const int32_t *)x;
    int64_t want = 0;
#pragma omp parallel for schedule(static) reduction(+ : want)
    for (int64_t i = 0; i < N; i++) want += xi[i];
    int64_t got = 0;
    st = pk_reduce(ctx, PK_SUM, PK_I32, x, N, &got);
    PK_CHECK(st == PK_OK && got == want, "i32 sum = %lld, want %lld", (long long)got, (long long)want);
    printf("i32 sum: %lld (want %lld)\n", (long long)got, (long long)want);
    st = pk_reduce(ctx, PK_ARGMAX, PK_U32, x, N, &idx);
    int64_t wi = 0;
    const uint32_t *xu = (const uint32_t *)x;
    for (int64_t i = 1; i < N; i++)
        if (xu[i] > xu[wi]) wi = i;
    PK_CHECK(st == PK_OK && idx == wi, "u32 argmax = %lld, want %lld", (long long)idx, (long long)wi);

    free(x);
    pk_ctx_destroy(ctx);
    return pk_test_finish("test_big");
}
