/* libFuzzer harness of the reducer expression compiler (src/core/expr.c,
 * through pk_reducer_create) and of the CPU interpreter that runs what it
 * compiles (src/cpu/udr*.c). The input:
 *
 *   byte 0   input dtype (low 3 bits, mod 6), accumulator f64 (bit 3), ARG
 *            kind (bit 4), map given (bit 5), final given (bit 6)
 *   byte 1   the identity (an index into `identities`)
 *   byte 2   the array: its length and shape (see shape_of)
 *   rest     the expressions, map, combine and final, separated by a
 *            newline or a NUL (a missing one is NULL)
 *
 * A refusal must be PK_ERR_COMPILE or PK_ERR_ARG with a message. A reducer
 * that compiles runs on a small array of random values (special ones
 * included), seeded from the input so that a crash replays: pk_reducer_reduce
 * twice (the same bits: the reductions are deterministic) and
 * pk_reducer_reduce_axis along both axes. Built with -DPK_BUILD_FUZZERS=ON by
 * Clang (tests/files/files.cmake); run:
 *   fuzz_expr NEW_CORPUS_DIR tests/fuzz/corpus_expr -max_total_time=60 */
#include "fuzz.h"
#include "pk.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_N 1200

static const double identities[] = {0, 1, -1, NAN, INFINITY, -INFINITY, 0.5, -0.0, 1e300, 2};

/* splitmix64 over a seed taken from the input. */
static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void fill(pk_dtype t, void *x, int64_t n, uint64_t *s)
{
    static const double special[] = {0.0, -0.0, NAN, -NAN, INFINITY, -INFINITY, 1e-310, 3e38};
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = next(s);
        double v = (double)(int64_t)(r >> 40) / (double)(1 << 20) - 8; /* [-8, 8) */
        if ((r & 15) == 0) v = special[(r >> 4) & 7];
        switch (t) {
        case PK_F32: ((float *)x)[i] = (float)v; break;
        case PK_F64: ((double *)x)[i] = v; break;
        case PK_I32: ((int32_t *)x)[i] = (int32_t)(uint32_t)r; break;
        case PK_U32: ((uint32_t *)x)[i] = (uint32_t)r; break;
        case PK_I64: ((int64_t *)x)[i] = (int64_t)r; break;
        default: ((uint64_t *)x)[i] = r; break;
        }
    }
}

/* Mostly short arrays (fast runs); one in eight long enough for several
 * interpreted blocks and for axis 1's folding of many short rows. */
static void shape_of(unsigned b, int64_t *n, int64_t *rows, int64_t *cols)
{
    if ((b & 7) == 7) {
        *rows = 600, *cols = 2;
    } else {
        *rows = 1 + (b >> 3) % 8, *cols = (b >> 6) + (b & 7);
    }
    *n = *rows * *cols;
}

/* The next expression: up to a newline or a NUL; NULL when the input has
 * ended. */
static char *field(const unsigned char **p, const unsigned char *end)
{
    if (*p >= end) return NULL;
    const unsigned char *s = *p, *e = s;
    while (e < end && *e != '\n' && *e != '\0') e++;
    char *f = malloc((size_t)(e - s) + 1);
    REQUIRE(f);
    memcpy(f, s, (size_t)(e - s));
    f[e - s] = 0;
    *p = e < end ? e + 1 : e;
    return f;
}

static pk_ctx *cpu_ctx(void)
{
    static pk_ctx *ctx; /* one for the whole run; freed at exit by the OS */
    if (!ctx) {
        REQUIRE(pk_ctx_create(&ctx, PK_BACKEND_CPU, 0) == PK_OK);
        REQUIRE(pk_ctx_set_threads(ctx, 1) == PK_OK);
    }
    return ctx;
}

static void run(pk_ctx *ctx, const pk_reducer *red, const pk_reducer_desc *d, unsigned shape,
                uint64_t seed)
{
    static unsigned char x[MAX_N * 8];
    double out[2 * MAX_N], again[2 * MAX_N];
    int64_t n, rows, cols;
    shape_of(shape, &n, &rows, &cols);
    REQUIRE(n <= MAX_N);
    fill(d->input, x, n, &seed);
    const size_t osize = d->kind == PK_REDUCER_ARG ? 8 : pk_dtype_size(d->acc);
    pk_status s = pk_reducer_reduce(ctx, red, x, n, out);
    if (n == 0 && d->kind == PK_REDUCER_ARG) {
        REQUIRE(s == PK_ERR_ARG);
        return;
    }
    REQUIRE(s == PK_OK);
    REQUIRE(pk_reducer_reduce(ctx, red, x, n, again) == PK_OK);
    REQUIRE(memcmp(out, again, osize) == 0);
    if (d->kind == PK_REDUCER_ARG) {
        int64_t idx;
        memcpy(&idx, out, sizeof idx);
        REQUIRE(idx >= 0 && idx < n);
    }
    for (int axis = 0; axis < 2; axis++) {
        const int64_t along = axis == 0 ? rows : cols, nout = axis == 0 ? cols : rows;
        s = pk_reducer_reduce_axis(ctx, red, x, rows, cols, cols > 0 ? cols : 1, axis, out);
        if (along == 0 && nout > 0 && d->kind == PK_REDUCER_ARG) {
            REQUIRE(s == PK_ERR_ARG);
            continue;
        }
        REQUIRE(s == PK_OK);
        for (int64_t j = 0; d->kind == PK_REDUCER_ARG && j < nout; j++) {
            int64_t idx;
            memcpy(&idx, (const char *)out + 8 * j, sizeof idx);
            REQUIRE(idx >= 0 && idx < along);
        }
    }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 3) return 0;
    const unsigned flags = data[0];
    pk_reducer_desc d = {.input = (pk_dtype)((flags & 7) % PK_DTYPE_COUNT),
                         .acc = flags & 8 ? PK_F64 : PK_F32,
                         .kind = flags & 16 ? PK_REDUCER_ARG : PK_REDUCER_VALUE,
                         .identity = identities[data[1] % (sizeof identities / sizeof *identities)]};
    const unsigned char *p = data + 3, *end = data + size;
    char *map = flags & 32 ? field(&p, end) : NULL;
    char *combine = field(&p, end);
    char *final = flags & 64 ? field(&p, end) : NULL;
    d.map = map, d.combine = combine, d.final = final;

    pk_ctx *ctx = cpu_ctx();
    pk_reducer *red = (pk_reducer *)1; /* must become NULL on failure */
    pk_status s = pk_reducer_create(ctx, &d, &red);
    if (s != PK_OK) {
        REQUIRE(s == PK_ERR_COMPILE || s == PK_ERR_ARG);
        REQUIRE(red == NULL);
        REQUIRE(pk_ctx_error(ctx)[0] != 0);
        /* The checks that give PK_ERR_ARG, and only they. */
        int bad_desc = !combine || (d.kind == PK_REDUCER_ARG && final);
        REQUIRE((s == PK_ERR_ARG) == bad_desc);
    } else {
        REQUIRE(red && combine && !(d.kind == PK_REDUCER_ARG && final));
        uint64_t seed = 0xcbf29ce484222325ull; /* FNV-1a of the input */
        for (size_t i = 0; i < size; i++) seed = (seed ^ data[i]) * 0x100000001b3ull;
        run(ctx, red, &d, data[2], seed);
        pk_reducer_destroy(red);
    }
    free(map), free(combine), free(final);
    return 0;
}
