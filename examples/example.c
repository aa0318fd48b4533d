/* A complete pk program: sum, argmax, a column sum, a dot and an axpy on the
 * best backend of this machine, with error handling. Build it against an
 * installed pk (PKG_CONFIG_PATH=PREFIX/lib/pkgconfig) with
 *     cc example.c $(pkg-config --cflags --libs pk) \
 *        -Wl,-rpath,$(pkg-config --variable=libdir pk) -o example
 * or through CMake (examples/CMakeLists.txt). The tests build and run it both
 * ways (tests/CMakeLists.txt, tests/install_check.sh). */
#include <pk.h>

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    pk_ctx *ctx;
    pk_status s = pk_ctx_create(&ctx, PK_BACKEND_AUTO, 0); /* CUDA if present, else CPU */
    if (s != PK_OK) {
        fprintf(stderr, "pk_ctx_create: %s: %s\n", pk_status_str(s), pk_last_create_error());
        return 1;
    }
    printf("running on: %s\n", pk_ctx_describe(ctx));

    enum { N = 1000000 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    if (!x || !y) return 1;
    for (int i = 0; i < N; i++) {
        x[i] = 0.5f;
        y[i] = (float)(i % 7);
    }
    x[123456] = 9.0f;

    /* Whole-array reductions: the result dtype follows NumPy. */
    float sum;
    int64_t where;
    if ((s = pk_reduce(ctx, PK_SUM, PK_F32, x, N, &sum)) != PK_OK ||
        (s = pk_reduce(ctx, PK_ARGMAX, PK_F32, x, N, &where)) != PK_OK)
        goto fail;
    printf("sum = %.1f, argmax = %lld\n", sum, (long long)where);

    /* A 1000 x 1000 row-major matrix: sum down each column (axis 0). */
    float colsum[1000];
    if ((s = pk_reduce_axis(ctx, PK_SUM, PK_F32, y, 1000, 1000, 1000, 0, colsum)) != PK_OK)
        goto fail;
    printf("column sums: %.0f %.0f %.0f ...\n", colsum[0], colsum[1], colsum[2]);

    /* dot, then y = 2*x + y. */
    float d, two = 2.0f;
    if ((s = pk_dot(ctx, PK_F32, N, x, y, &d)) != PK_OK ||
        (s = pk_axpy(ctx, PK_F32, N, &two, x, y)) != PK_OK)
        goto fail;
    printf("dot = %.1f, y[0] after axpy = %.1f\n", d, y[0]);

    /* Errors come back as a status with a message; nothing aborts. */
    s = pk_reduce(ctx, PK_MIN, PK_F32, x, 0, &sum);
    printf("min of nothing: %s (%s)\n", pk_status_str(s), pk_ctx_error(ctx));

    free(x);
    free(y);
    pk_ctx_destroy(ctx);
    return 0;
fail:
    fprintf(stderr, "pk: %s: %s\n", pk_status_str(s), pk_ctx_error(ctx));
    pk_ctx_destroy(ctx);
    return 1;
}
