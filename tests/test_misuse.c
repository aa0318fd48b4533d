/* Handles that are not live: NULL, a pointer to another object (a reducer
 * passed as a context, random bytes) and, where no sanitizer watches freed
 * memory, a destroyed handle. Every entry point refuses them with PK_ERR_ARG
 * and a message in pk_last_create_error() naming the function, writes
 * nothing, and the destroy functions leave them alone (docs/API.md,
 * "Misuse"). */
#include "util.h"

#include <stdint.h>

#if defined(__SANITIZE_ADDRESS__)
#define PK_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PK_TEST_ASAN 1
#endif
#endif

/* The status must be PK_ERR_ARG and the thread's message must name fn and
 * the problem. */
static void expect_refused(pk_status s, const char *fn, const char *problem, const char *what)
{
    const char *msg = pk_last_create_error();
    PK_CHECK(s == PK_ERR_ARG, "%s (%s): status %s, want invalid argument", fn, what,
             pk_status_str(s));
    PK_CHECK(strstr(msg, fn) == msg && strstr(msg, problem),
             "%s (%s): message '%s' lacks '%s'", fn, what, msg, problem);
}

/* Every entry point that takes a context, given ctx (not a live one). */
static void ctx_calls(pk_ctx *ctx, const char *problem, const char *what, pk_reducer *red)
{
    float x[64] = {1}, y[64] = {2}, out[64];
    uint64_t bits[8] = {0}, bits2[8] = {0};
    int32_t c32[4], dist[1];
    int64_t idx[1];
    const float one = 1;
    memset(out, 0x5a, sizeof out);
    pk_reducer_desc desc = {.input = PK_F32, .acc = PK_F32, .combine = "a + b"};
    pk_reducer *r = (pk_reducer *)&out;
#define CALL(fn, ...) expect_refused(fn(__VA_ARGS__), #fn, problem, what)
    CALL(pk_reduce, ctx, PK_SUM, PK_F32, x, 64, out);
    CALL(pk_reduce_axis, ctx, PK_SUM, PK_F32, x, 8, 8, 8, 0, out);
    CALL(pk_dot, ctx, PK_F32, 64, x, y, out);
    CALL(pk_axpy, ctx, PK_F32, 64, &one, x, y);
    CALL(pk_gemm, ctx, PK_F32, PK_GEMM_FP32, PK_NO_TRANS, PK_NO_TRANS, 2, 2, 2, &one, x, 2, y,
         2, &one, out, 2);
    CALL(pk_bits_pack, ctx, PK_BITS_F32_SIGN, 2, 8, x, 8, bits, 1);
    CALL(pk_bits_unpack, ctx, PK_BITS_F32_SIGN, 2, 8, bits, 1, out, 8);
    CALL(pk_bgemm, ctx, 2, 2, 8, bits, 1, bits2, 1, c32, 2);
    CALL(pk_hamming, ctx, PK_HAMMING_I32, 2, 2, 8, bits, 1, bits2, 1, c32, 2);
    CALL(pk_hamming_topk, ctx, 1, 2, 8, bits, 1, bits2, 1, 1, dist, idx);
    CALL(pk_reducer_create, ctx, &desc, &r);
    PK_CHECK(r == NULL, "pk_reducer_create (%s): *red not set to NULL", what);
    CALL(pk_reducer_reduce, ctx, red, x, 64, out);
    CALL(pk_reducer_reduce_axis, ctx, red, x, 8, 8, 8, 0, out);
    CALL(pk_ctx_set_threads, ctx, 1);
    CALL(pk_ctx_set_stream, ctx, NULL);
    CALL(pk_ctx_sync, ctx);
#undef CALL
    PK_CHECK(pk_ctx_backend(ctx) == PK_BACKEND_AUTO, "pk_ctx_backend (%s) is not AUTO", what);
    PK_CHECK(strcmp(pk_ctx_describe(ctx), "?") == 0, "pk_ctx_describe (%s): %s", what,
             pk_ctx_describe(ctx));
    const char *e = pk_ctx_error(ctx);
    if (ctx) /* NULL leaves the thread's message as it was: the last call's */
        PK_CHECK(strstr(e, "pk_ctx_error") && strstr(e, problem), "pk_ctx_error (%s): '%s'", what,
                 e);
    else
        PK_CHECK(strstr(e, "pk_ctx_sync: ctx is NULL"), "pk_ctx_error (NULL): '%s'", e);
    for (int i = 0; i < 64; i++)
        PK_CHECK(((unsigned char *)out)[i] == 0x5a, "%s: out written at byte %d", what, i);
}

/* Entry points that take a reducer, given red (not a live one), on a live
 * context: the message is the context's. */
static void reducer_calls(pk_ctx *ctx, pk_reducer *red, const char *what)
{
    const char *problem = red ? "red is not a live pk_reducer" : "red is NULL";
    float x[64] = {1}, out[8];
    PK_CHECK(pk_reducer_reduce(ctx, red, x, 64, out) == PK_ERR_ARG &&
                 strstr(pk_ctx_error(ctx), "pk_reducer_reduce: ") == pk_ctx_error(ctx) &&
                 strstr(pk_ctx_error(ctx), problem),
             "pk_reducer_reduce (%s): '%s'", what, pk_ctx_error(ctx));
    PK_CHECK(pk_reducer_reduce_axis(ctx, red, x, 8, 8, 8, 1, out) == PK_ERR_ARG &&
                 strstr(pk_ctx_error(ctx), "pk_reducer_reduce_axis: ") == pk_ctx_error(ctx) &&
                 strstr(pk_ctx_error(ctx), problem),
             "pk_reducer_reduce_axis (%s): '%s'", what, pk_ctx_error(ctx));
    pk_reducer_info info;
    expect_refused(pk_reducer_get_info(red, &info), "pk_reducer_get_info", problem, what);
}

static void dist_calls(pk_dist *d, const char *problem, const char *what)
{
    if (!pk_has_feature(PK_FEATURE_MPI)) return; /* no pk_dist can exist */
    double x[4] = {1, 2, 3, 4}, out[4];
    expect_refused(pk_dist_reduce(d, PK_SUM, PK_F64, x, 4, out), "pk_dist_reduce", problem, what);
    expect_refused(pk_dist_allreduce(d, PK_SUM, PK_F64, x, out, 4), "pk_dist_allreduce", problem,
                   what);
    expect_refused(pk_dist_set_timeout(d, 1), "pk_dist_set_timeout", problem, what);
    PK_CHECK(pk_dist_ctx(d) == NULL && pk_dist_rank(d) == -1 && pk_dist_size(d) == 0,
             "pk_dist_ctx/rank/size (%s) answered", what);
    pk_dist_destroy(d);
}

/* The usual way to print why a create failed, pk_ctx_error of the NULL it
 * left, must give that reason, not overwrite it; so must the other queries
 * of NULL. */
static void create_error_kept(void)
{
    pk_ctx *ctx = (pk_ctx *)1;
    PK_CHECK(pk_ctx_create(&ctx, (pk_backend)99, 0) == PK_ERR_ARG && ctx == NULL,
             "bad backend accepted");
    char want[256];
    snprintf(want, sizeof want, "%s", pk_last_create_error());
    PK_CHECK(strstr(want, "unknown backend"), "create message: %s", want);
    PK_CHECK(pk_ctx_backend(ctx) == PK_BACKEND_AUTO && strcmp(pk_ctx_describe(ctx), "?") == 0,
             "queries of NULL");
    PK_CHECK(strcmp(pk_ctx_error(ctx), want) == 0, "pk_ctx_error(NULL) = '%s', want '%s'",
             pk_ctx_error(ctx), want);
    PK_CHECK(strcmp(pk_last_create_error(), want) == 0, "create message replaced: '%s'",
             pk_last_create_error());
    PK_CHECK(pk_dist_ctx(NULL) == NULL && pk_dist_rank(NULL) == -1 &&
                 strcmp(pk_last_create_error(), want) == 0,
             "pk_dist queries of NULL replaced the message: '%s'", pk_last_create_error());
}

int main(void)
{
    pk_test_init("test_misuse");
    create_error_kept();
    pk_ctx *ctx = pk_test_cpu_ctx();
    pk_reducer_desc desc = {.input = PK_F32, .acc = PK_F32, .combine = "a + b"};
    pk_reducer *red = NULL;
    if (pk_reducer_create(ctx, &desc, &red) != PK_OK) {
        printf("pk_reducer_create: %s\n", pk_ctx_error(ctx));
        return 1;
    }

    /* Random bytes (never the magic), and handles of the other types. */
    uint64_t junk[512];
    for (int i = 0; i < 512; i++) junk[i] = pk_test_next();
    uint64_t before[512];
    memcpy(before, junk, sizeof junk);
    ctx_calls(NULL, "ctx is NULL", "NULL", red);
    ctx_calls((pk_ctx *)junk, "is not a live pk_ctx", "random bytes", red);
    ctx_calls((pk_ctx *)red, "is not a live pk_ctx", "a reducer", red);
    pk_ctx_destroy((pk_ctx *)junk);
    pk_ctx_destroy((pk_ctx *)red);
    reducer_calls(ctx, NULL, "NULL");
    reducer_calls(ctx, (pk_reducer *)junk, "random bytes");
    reducer_calls(ctx, (pk_reducer *)ctx, "a context");
    pk_reducer_destroy((pk_reducer *)junk);
    pk_reducer_destroy((pk_reducer *)ctx);
    dist_calls((pk_dist *)junk, "d is not a live pk_dist", "random bytes");
    dist_calls((pk_dist *)ctx, "d is not a live pk_dist", "a context");
    PK_CHECK(memcmp(before, junk, sizeof junk) == 0, "a refused handle's bytes were written");

    /* The live handles still work after all that. */
    float x[3] = {1, 2, 3}, sum = 0, rsum = 0;
    PK_CHECK(pk_reduce(ctx, PK_SUM, PK_F32, x, 3, &sum) == PK_OK && sum == 6, "live ctx: sum %g",
             sum);
    PK_CHECK(pk_reducer_reduce(ctx, red, x, 3, &rsum) == PK_OK && rsum == 6,
             "live reducer: sum %g", rsum);
    pk_reducer_destroy(red);

#ifdef PK_TEST_ASAN
    printf("destroyed handles: not checked under AddressSanitizer (reading freed memory is "
           "what it reports)\n");
    pk_ctx_destroy(ctx);
#else
    /* Best effort (docs/API.md): right after destroy, before any other
     * allocation, the old pointer is refused. */
    pk_ctx *dead = ctx;
    pk_ctx_destroy(ctx);
    float out = -1;
    expect_refused(pk_reduce(dead, PK_SUM, PK_F32, x, 3, &out), "pk_reduce",
                   "is not a live pk_ctx", "destroyed");
    PK_CHECK(out == -1, "a destroyed context wrote its result");
    pk_ctx_destroy(dead); /* a second destroy does nothing */
#endif
    return pk_test_finish("test_misuse");
}
