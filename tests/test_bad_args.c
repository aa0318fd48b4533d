/* Every public function with each kind of bad argument: NULL context, NULL
 * pointers, negative sizes, sizes whose byte count overflows, buffers that
 * wrap the address space, unknown ops, dtypes and backends (cast integers),
 * bad axis, ld < cols, overlapping outputs, partially overlapping axpy
 * arrays, empty min/max/argmin/argmax, negative device or thread count,
 * garbage in PK_BACKEND and PK_CPU_ISA, the CUDA backend without a device.
 * Each case asserts the status, that the message is non-empty and names the
 * function (a fresh context per case, so the message is the case's own),
 * and that no output (nor input) byte was written. The number of cases is
 * printed at the end. Valid edge cases next to each boundary (adjacent but
 * not overlapping buffers, x == y, n = 0 with NULL) must succeed. */
#include "util.h"

#include <sys/wait.h>
#include <unistd.h>

static int ncases;          /* bad-argument cases checked */
static int nvalid;          /* valid neighbours checked */

/* All buffers live in one arena; a case must leave it untouched. */
static _Alignas(64) unsigned char arena[8192];
static unsigned char pattern[8192];
#define X ((void *)(arena + 64))          /* input, 256 bytes */
#define Y ((void *)(arena + 1024))        /* second input, 256 bytes */
#define OUT ((void *)(arena + 2048))      /* output, up to 1024 bytes */
#define AT(p, off) ((void *)((unsigned char *)(p) + (off)))

static void arena_reset(void)
{
    for (size_t i = 0; i < sizeof arena; i++) pattern[i] = (unsigned char)(i * 131 + 7);
    /* Inputs hold valid numbers (small floats): a kernel that ran anyway
     * would not fault, it would write. */
    for (int i = 0; i < 64; i++) {
        float f = 1.0f + (float)i;
        memcpy(pattern + 64 + 4 * i, &f, 4);
        memcpy(pattern + 1024 + 4 * i, &f, 4);
    }
    memcpy(arena, pattern, sizeof arena);
}

static bool arena_untouched(void) { return memcmp(arena, pattern, sizeof arena) == 0; }

static pk_ctx *fresh(void)
{
    pk_ctx *c = pk_test_cpu_ctx();
    PK_CHECK(pk_ctx_error(c)[0] == '\0', "a new context has a message: %s", pk_ctx_error(c));
    return c;
}

static void expect_bad(pk_ctx *c, pk_status got, pk_status want, const char *fn,
                       const char *desc, int line)
{
    ncases++;
    PK_CHECK(got == want, "line %d: %s: %s: got %s, want %s", line, fn, desc,
             pk_status_str(got), pk_status_str(want));
    if (c) {
        const char *msg = pk_ctx_error(c);
        PK_CHECK(msg && msg[0] != '\0', "line %d: %s: %s: no message", line, fn, desc);
        PK_CHECK(msg && strstr(msg, fn), "line %d: %s: %s: message \"%s\" does not name %s",
                 line, fn, desc, msg ? msg : "(null)", fn);
    }
    PK_CHECK(arena_untouched(), "line %d: %s: %s: a refused call wrote memory", line, fn, desc);
    if (getenv("PK_TEST_VERBOSE"))
        printf("  case %3d: %-16s %-55s -> %s: %s\n", ncases, fn, desc, pk_status_str(got),
               c ? pk_ctx_error(c) : "");
}

/* A bad call on a fresh context c. */
#define BAD(want, fn, desc, CALL)                                              \
    do {                                                                       \
        pk_ctx *c = fresh();                                                   \
        arena_reset();                                                         \
        pk_status s_ = (CALL);                                                 \
        expect_bad(c, s_, want, fn, desc, __LINE__);                           \
        pk_ctx_destroy(c);                                                     \
    } while (0)

/* A bad call with no context to hold a message. */
#define BAD_NOCTX(want, fn, desc, CALL)                                        \
    do {                                                                       \
        arena_reset();                                                         \
        pk_status s_ = (CALL);                                                 \
        expect_bad(NULL, s_, want, fn, desc, __LINE__);                        \
    } while (0)

/* A valid call next to a boundary: must succeed. */
#define VALID(fn, desc, CALL)                                                  \
    do {                                                                       \
        pk_ctx *c = fresh();                                                   \
        arena_reset();                                                         \
        pk_status s_ = (CALL);                                                 \
        nvalid++;                                                              \
        PK_CHECK(s_ == PK_OK, "line %d: %s: %s (valid): %s: %s", __LINE__, fn, desc,       \
                 pk_status_str(s_), pk_ctx_error(c));                          \
        pk_ctx_destroy(c);                                                     \
    } while (0)

#define WRAPPING ((const void *)(UINTPTR_MAX - 63))   /* 64 bytes below the top */

static void bad_reduce(void)
{
    const char *f = "pk_reduce";
    pk_ctx *c0 = NULL;
    BAD_NOCTX(PK_ERR_ARG, f, "NULL ctx", pk_reduce(c0, PK_SUM, PK_F32, X, 4, OUT));
    BAD(PK_ERR_ARG, f, "op -1", pk_reduce(c, (pk_op)-1, PK_F32, X, 4, OUT));
    BAD(PK_ERR_ARG, f, "op PK_OP_COUNT", pk_reduce(c, PK_OP_COUNT, PK_F32, X, 4, OUT));
    BAD(PK_ERR_ARG, f, "op 1000", pk_reduce(c, (pk_op)1000, PK_F32, X, 4, OUT));
    BAD(PK_ERR_ARG, f, "dtype -1", pk_reduce(c, PK_SUM, (pk_dtype)-1, X, 4, OUT));
    BAD(PK_ERR_ARG, f, "dtype PK_DTYPE_COUNT", pk_reduce(c, PK_SUM, PK_DTYPE_COUNT, X, 4, OUT));
    BAD(PK_ERR_ARG, f, "dtype INT32_MIN", pk_reduce(c, PK_MAX, (pk_dtype)INT32_MIN, X, 4, OUT));
    BAD(PK_ERR_ARG, f, "n = -1", pk_reduce(c, PK_SUM, PK_F32, X, -1, OUT));
    BAD(PK_ERR_ARG, f, "n = INT64_MIN", pk_reduce(c, PK_SUM, PK_F64, X, INT64_MIN, OUT));
    BAD(PK_ERR_ARG, f, "n = INT64_MAX/2 (f32 bytes overflow)",
        pk_reduce(c, PK_SUM, PK_F32, X, INT64_MAX / 2, OUT));
    BAD(PK_ERR_ARG, f, "n = INT64_MAX/4+1 (f32 bytes overflow)",
        pk_reduce(c, PK_MIN, PK_F32, X, INT64_MAX / 4 + 1, OUT));
    BAD(PK_ERR_ARG, f, "n = INT64_MAX/8+1 (u64 bytes overflow)",
        pk_reduce(c, PK_ARGMAX, PK_U64, X, INT64_MAX / 8 + 1, OUT));
    BAD(PK_ERR_ARG, f, "n = INT64_MAX", pk_reduce(c, PK_PROD, PK_I32, X, INT64_MAX, OUT));
    BAD(PK_ERR_ARG, f, "x NULL, n = 4", pk_reduce(c, PK_SUM, PK_F32, NULL, 4, OUT));
    BAD(PK_ERR_ARG, f, "x NULL, n = 1 (argmin)", pk_reduce(c, PK_ARGMIN, PK_I64, NULL, 1, OUT));
    BAD(PK_ERR_ARG, f, "out NULL", pk_reduce(c, PK_SUM, PK_F32, X, 4, NULL));
    BAD(PK_ERR_ARG, f, "out NULL, n = 0", pk_reduce(c, PK_SUM, PK_F32, X, 0, NULL));
    BAD(PK_ERR_ARG, f, "x wraps the address space",
        pk_reduce(c, PK_SUM, PK_F64, WRAPPING, 100, OUT));
    BAD(PK_ERR_ARG, f, "out wraps the address space",
        pk_reduce(c, PK_SUM, PK_F64, X, 4, (void *)(UINTPTR_MAX - 3)));
    for (int o = PK_MIN; o <= PK_ARGMAX; o++)
        for (int d = 0; d < PK_TEST_NDTYPES; d++) {
            char desc[64];
            snprintf(desc, sizeof desc, "n = 0 for %s %s", pk_op_name((pk_op)o),
                     pk_dtype_name(pk_test_dtypes[d]));
            BAD(PK_ERR_ARG, f, desc, pk_reduce(c, (pk_op)o, pk_test_dtypes[d], X, 0, OUT));
        }
    BAD(PK_ERR_ARG, f, "n = 0 for min, x NULL", pk_reduce(c, PK_MIN, PK_F32, NULL, 0, OUT));
    BAD(PK_ERR_ARG, f, "out == x", pk_reduce(c, PK_SUM, PK_F32, X, 16, X));
    BAD(PK_ERR_ARG, f, "out inside x", pk_reduce(c, PK_MAX, PK_I32, X, 16, AT(X, 20)));
    BAD(PK_ERR_ARG, f, "out overlaps x's last element (8-byte i64 sum of i32)",
        pk_reduce(c, PK_SUM, PK_I32, X, 16, AT(X, 60)));
    BAD(PK_ERR_ARG, f, "out overlaps x's first element from below",
        pk_reduce(c, PK_ARGMIN, PK_F32, X, 16, AT(X, -4)));
    VALID(f, "out just after x", pk_reduce(c, PK_SUM, PK_I32, X, 16, AT(X, 64)));
    VALID(f, "out just before x", pk_reduce(c, PK_ARGMIN, PK_F32, X, 16, AT(X, -8)));
    VALID(f, "n = 0 sum, x NULL", pk_reduce(c, PK_SUM, PK_F32, NULL, 0, OUT));
    VALID(f, "n = 0 prod, x NULL", pk_reduce(c, PK_PROD, PK_U64, NULL, 0, OUT));
}

static void bad_reduce_axis(void)
{
    const char *f = "pk_reduce_axis";
    pk_ctx *c0 = NULL;
    BAD_NOCTX(PK_ERR_ARG, f, "NULL ctx", pk_reduce_axis(c0, PK_SUM, PK_F32, X, 2, 3, 3, 0, OUT));
    BAD(PK_ERR_ARG, f, "op -1", pk_reduce_axis(c, (pk_op)-1, PK_F32, X, 2, 3, 3, 0, OUT));
    BAD(PK_ERR_ARG, f, "op PK_OP_COUNT", pk_reduce_axis(c, PK_OP_COUNT, PK_F32, X, 2, 3, 3, 1, OUT));
    BAD(PK_ERR_ARG, f, "dtype -1", pk_reduce_axis(c, PK_SUM, (pk_dtype)-1, X, 2, 3, 3, 0, OUT));
    BAD(PK_ERR_ARG, f, "dtype 77", pk_reduce_axis(c, PK_SUM, (pk_dtype)77, X, 2, 3, 3, 0, OUT));
    BAD(PK_ERR_ARG, f, "rows = -1", pk_reduce_axis(c, PK_SUM, PK_F32, X, -1, 3, 3, 0, OUT));
    BAD(PK_ERR_ARG, f, "cols = -1", pk_reduce_axis(c, PK_SUM, PK_F32, X, 2, -1, 3, 1, OUT));
    BAD(PK_ERR_ARG, f, "rows = INT64_MIN", pk_reduce_axis(c, PK_SUM, PK_F32, X, INT64_MIN, 3, 3, 1, OUT));
    BAD(PK_ERR_ARG, f, "ld = cols - 1", pk_reduce_axis(c, PK_SUM, PK_F32, X, 2, 3, 2, 0, OUT));
    BAD(PK_ERR_ARG, f, "ld = -1", pk_reduce_axis(c, PK_SUM, PK_F32, X, 2, 3, -1, 0, OUT));
    BAD(PK_ERR_ARG, f, "ld = 0, cols = 0", pk_reduce_axis(c, PK_SUM, PK_F32, X, 2, 0, 0, 0, OUT));
    BAD(PK_ERR_ARG, f, "axis = 2", pk_reduce_axis(c, PK_SUM, PK_F32, X, 2, 3, 3, 2, OUT));
    BAD(PK_ERR_ARG, f, "axis = -1", pk_reduce_axis(c, PK_SUM, PK_F32, X, 2, 3, 3, -1, OUT));
    BAD(PK_ERR_ARG, f, "axis = INT32_MAX",
        pk_reduce_axis(c, PK_SUM, PK_F32, X, 2, 3, 3, INT32_MAX, OUT));
    BAD(PK_ERR_ARG, f, "rows*ld overflows int64",
        pk_reduce_axis(c, PK_SUM, PK_F32, X, INT64_MAX / 2, 4, 4, 1, OUT));
    BAD(PK_ERR_ARG, f, "ld huge: (rows-1)*ld overflows",
        pk_reduce_axis(c, PK_SUM, PK_F32, X, 3, 4, INT64_MAX / 2, 0, OUT));
    BAD(PK_ERR_ARG, f, "element count fits, bytes overflow",
        pk_reduce_axis(c, PK_SUM, PK_F64, X, 2, 4, INT64_MAX / 8, 0, OUT));
    BAD(PK_ERR_ARG, f, "outputs' bytes overflow (cols huge)",
        pk_reduce_axis(c, PK_SUM, PK_F64, X, 1, INT64_MAX / 4, INT64_MAX / 4, 0, OUT));
    BAD(PK_ERR_ARG, f, "x NULL", pk_reduce_axis(c, PK_SUM, PK_F32, NULL, 2, 3, 3, 0, OUT));
    BAD(PK_ERR_ARG, f, "out NULL", pk_reduce_axis(c, PK_SUM, PK_F32, X, 2, 3, 3, 1, NULL));
    BAD(PK_ERR_ARG, f, "x wraps the address space",
        pk_reduce_axis(c, PK_SUM, PK_F64, WRAPPING, 4, 4, 4, 1, OUT));
    const pk_op empty_ops[] = {PK_MIN, PK_MAX, PK_ARGMIN, PK_ARGMAX};
    for (int o = 0; o < 4; o++) {
        char desc[64];
        snprintf(desc, sizeof desc, "%s along an empty axis 0", pk_op_name(empty_ops[o]));
        BAD(PK_ERR_ARG, f, desc, pk_reduce_axis(c, empty_ops[o], PK_F64, X, 0, 3, 3, 0, OUT));
        snprintf(desc, sizeof desc, "%s along an empty axis 1", pk_op_name(empty_ops[o]));
        BAD(PK_ERR_ARG, f, desc, pk_reduce_axis(c, empty_ops[o], PK_I32, X, 3, 0, 1, 1, OUT));
    }
    BAD(PK_ERR_ARG, f, "out == x", pk_reduce_axis(c, PK_SUM, PK_F32, X, 4, 4, 4, 0, X));
    BAD(PK_ERR_ARG, f, "out overlaps x's last row",
        pk_reduce_axis(c, PK_SUM, PK_F32, X, 4, 4, 4, 1, AT(X, 60)));
    BAD(PK_ERR_ARG, f, "out overlaps x from below",
        pk_reduce_axis(c, PK_ARGMAX, PK_F32, X, 4, 4, 4, 0, AT(X, -16)));
    VALID(f, "out just after x", pk_reduce_axis(c, PK_SUM, PK_F32, X, 4, 4, 4, 1, AT(X, 64)));
    VALID(f, "ld > cols", pk_reduce_axis(c, PK_MIN, PK_F32, X, 3, 4, 6, 0, OUT));
    VALID(f, "sum along an empty axis", pk_reduce_axis(c, PK_SUM, PK_F32, X, 0, 3, 3, 0, OUT));
    VALID(f, "min with no outputs", pk_reduce_axis(c, PK_MIN, PK_F32, X, 0, 3, 3, 1, OUT));
}

static void bad_dot(void)
{
    const char *f = "pk_dot";
    pk_ctx *c0 = NULL;
    BAD_NOCTX(PK_ERR_ARG, f, "NULL ctx", pk_dot(c0, PK_F32, 4, X, Y, OUT));
    const pk_dtype nonfloat[] = {PK_I32, PK_I64, PK_U32, PK_U64, (pk_dtype)-1, PK_DTYPE_COUNT};
    for (int d = 0; d < 6; d++) {
        char desc[64];
        snprintf(desc, sizeof desc, "dtype %d (%s)", (int)nonfloat[d], pk_dtype_name(nonfloat[d]));
        BAD(PK_ERR_ARG, f, desc, pk_dot(c, nonfloat[d], 4, X, Y, OUT));
    }
    BAD(PK_ERR_ARG, f, "n = -1", pk_dot(c, PK_F32, -1, X, Y, OUT));
    BAD(PK_ERR_ARG, f, "n = INT64_MAX/2 (bytes overflow)", pk_dot(c, PK_F32, INT64_MAX / 2, X, Y, OUT));
    BAD(PK_ERR_ARG, f, "n = INT64_MAX/8+1 (f64 bytes overflow)",
        pk_dot(c, PK_F64, INT64_MAX / 8 + 1, X, Y, OUT));
    BAD(PK_ERR_ARG, f, "x NULL", pk_dot(c, PK_F32, 4, NULL, Y, OUT));
    BAD(PK_ERR_ARG, f, "y NULL", pk_dot(c, PK_F32, 4, X, NULL, OUT));
    BAD(PK_ERR_ARG, f, "out NULL", pk_dot(c, PK_F64, 4, X, Y, NULL));
    BAD(PK_ERR_ARG, f, "out NULL, n = 0", pk_dot(c, PK_F64, 0, X, Y, NULL));
    BAD(PK_ERR_ARG, f, "x wraps", pk_dot(c, PK_F64, 100, WRAPPING, Y, OUT));
    BAD(PK_ERR_ARG, f, "y wraps", pk_dot(c, PK_F64, 100, X, WRAPPING, OUT));
    BAD(PK_ERR_ARG, f, "out == x", pk_dot(c, PK_F32, 4, X, Y, X));
    BAD(PK_ERR_ARG, f, "out == y", pk_dot(c, PK_F32, 4, X, Y, Y));
    BAD(PK_ERR_ARG, f, "out overlaps x's last element", pk_dot(c, PK_F64, 4, X, Y, AT(X, 28)));
    BAD(PK_ERR_ARG, f, "out overlaps y's first element", pk_dot(c, PK_F64, 4, X, Y, AT(Y, -4)));
    VALID(f, "x == y", pk_dot(c, PK_F32, 4, X, X, OUT));
    VALID(f, "x and y partly overlap (read only)", pk_dot(c, PK_F32, 8, X, AT(X, 4), OUT));
    VALID(f, "out just after x", pk_dot(c, PK_F32, 4, X, Y, AT(X, 16)));
    VALID(f, "n = 0, NULL inputs", pk_dot(c, PK_F32, 0, NULL, NULL, OUT));
}

static void bad_axpy(void)
{
    const char *f = "pk_axpy";
    pk_ctx *c0 = NULL;
    static const double alpha64 = 2.0;
    static const float alpha32 = 2.0f;
    BAD_NOCTX(PK_ERR_ARG, f, "NULL ctx", pk_axpy(c0, PK_F32, 4, &alpha32, X, Y));
    const pk_dtype nonfloat[] = {PK_I32, PK_I64, PK_U32, PK_U64, (pk_dtype)-1, PK_DTYPE_COUNT};
    for (int d = 0; d < 6; d++) {
        char desc[64];
        snprintf(desc, sizeof desc, "dtype %d (%s)", (int)nonfloat[d], pk_dtype_name(nonfloat[d]));
        BAD(PK_ERR_ARG, f, desc, pk_axpy(c, nonfloat[d], 4, &alpha64, X, Y));
    }
    BAD(PK_ERR_ARG, f, "n = -1", pk_axpy(c, PK_F32, -1, &alpha32, X, Y));
    BAD(PK_ERR_ARG, f, "n = INT64_MAX/2 (bytes overflow)", pk_axpy(c, PK_F32, INT64_MAX / 2, &alpha32, X, Y));
    BAD(PK_ERR_ARG, f, "alpha NULL", pk_axpy(c, PK_F32, 4, NULL, X, Y));
    BAD(PK_ERR_ARG, f, "alpha NULL, n = 0", pk_axpy(c, PK_F64, 0, NULL, X, Y));
    BAD(PK_ERR_ARG, f, "x NULL", pk_axpy(c, PK_F32, 4, &alpha32, NULL, Y));
    BAD(PK_ERR_ARG, f, "y NULL", pk_axpy(c, PK_F32, 4, &alpha32, X, NULL));
    BAD(PK_ERR_ARG, f, "x wraps", pk_axpy(c, PK_F64, 100, &alpha64, WRAPPING, Y));
    BAD(PK_ERR_ARG, f, "y wraps", pk_axpy(c, PK_F64, 100, &alpha64, X, (void *)WRAPPING));
    BAD(PK_ERR_ARG, f, "y = x + 1 element (partial overlap)",
        pk_axpy(c, PK_F32, 8, &alpha32, X, AT(X, 4)));
    BAD(PK_ERR_ARG, f, "y = x - 1 element (partial overlap)",
        pk_axpy(c, PK_F64, 8, &alpha64, X, AT(X, -8)));
    BAD(PK_ERR_ARG, f, "x = y + 1 byte", pk_axpy(c, PK_F32, 8, &alpha32, AT(Y, 1), Y));
    BAD(PK_ERR_ARG, f, "y's last element overlaps x's first",
        pk_axpy(c, PK_F32, 8, &alpha32, X, AT(X, -28)));
    VALID(f, "x == y", pk_axpy(c, PK_F32, 8, &alpha32, X, X));
    VALID(f, "y just after x", pk_axpy(c, PK_F32, 8, &alpha32, X, AT(X, 32)));
    VALID(f, "y just before x", pk_axpy(c, PK_F32, 8, &alpha32, X, AT(X, -32)));
    VALID(f, "n = 0, NULL arrays", pk_axpy(c, PK_F32, 0, &alpha32, NULL, NULL));
}

static void bad_ctx_functions(void)
{
    pk_ctx *c0 = NULL;
    BAD_NOCTX(PK_ERR_ARG, "pk_ctx_set_threads", "NULL ctx", pk_ctx_set_threads(c0, 2));
    BAD(PK_ERR_ARG, "pk_ctx_set_threads", "n = -1", pk_ctx_set_threads(c, -1));
    BAD(PK_ERR_ARG, "pk_ctx_set_threads", "n = INT32_MIN", pk_ctx_set_threads(c, INT32_MIN));
    BAD_NOCTX(PK_ERR_ARG, "pk_ctx_set_stream", "NULL ctx", pk_ctx_set_stream(c0, NULL));
    BAD(PK_ERR_UNSUPPORTED, "pk_ctx_set_stream", "on the CPU backend",
        pk_ctx_set_stream(c, (void *)arena));
    BAD_NOCTX(PK_ERR_ARG, "pk_ctx_sync", "NULL ctx", pk_ctx_sync(c0));
    VALID("pk_ctx_set_threads", "n = 0", pk_ctx_set_threads(c, 0));
    VALID("pk_ctx_sync", "CPU", pk_ctx_sync(c));
    /* Accessors with NULL never crash and never return NULL. */
    PK_CHECK(pk_ctx_error(NULL) && pk_ctx_error(NULL)[0], "pk_ctx_error(NULL)");
    PK_CHECK(pk_ctx_describe(NULL) && pk_ctx_describe(NULL)[0], "pk_ctx_describe(NULL)");
    PK_CHECK(pk_ctx_backend(NULL) == PK_BACKEND_AUTO, "pk_ctx_backend(NULL)");
    pk_ctx_destroy(NULL);
}

static void bad_parse(void)
{
    pk_dtype t = PK_F32;
    pk_op op = PK_SUM;
    pk_backend b = PK_BACKEND_CPU;
    const char *bad_names[] = {"", "F32", "float32", "f32 ", "?", "summ"};
    for (int i = 0; i < 6; i++) {
        char desc[64];
        snprintf(desc, sizeof desc, "name \"%s\"", bad_names[i]);
        BAD_NOCTX(PK_ERR_ARG, "pk_dtype_parse", desc, pk_dtype_parse(bad_names[i], &t));
        BAD_NOCTX(PK_ERR_ARG, "pk_op_parse", desc, pk_op_parse(bad_names[i], &op));
        BAD_NOCTX(PK_ERR_ARG, "pk_backend_parse", desc, pk_backend_parse(bad_names[i], &b));
    }
    BAD_NOCTX(PK_ERR_ARG, "pk_dtype_parse", "NULL name", pk_dtype_parse(NULL, &t));
    BAD_NOCTX(PK_ERR_ARG, "pk_op_parse", "NULL name", pk_op_parse(NULL, &op));
    BAD_NOCTX(PK_ERR_ARG, "pk_backend_parse", "NULL name", pk_backend_parse(NULL, &b));
    /* NULL out with a valid name: run in a child, so that a crash is a
     * failure of this case and not the end of the test. */
    for (int k = 0; k < 3; k++) {
        static const char *const fns[] = {"pk_dtype_parse", "pk_op_parse", "pk_backend_parse"};
        ncases++;
        pid_t pid = fork();
        if (pid == 0) {
            pk_status s = k == 0 ? pk_dtype_parse("f32", NULL)
                        : k == 1 ? pk_op_parse("sum", NULL)
                                 : pk_backend_parse("cpu", NULL);
            _exit(s == PK_ERR_ARG ? 0 : 1);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        PK_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                 "%s(valid name, NULL out): %s, want PK_ERR_ARG", fns[k],
                 WIFSIGNALED(st) ? "crashed" : "wrong status");
    }
    PK_CHECK(t == PK_F32 && op == PK_SUM && b == PK_BACKEND_CPU, "a failed parse wrote *out");
}

/* pk_ctx_create: the message is pk_last_create_error(), *ctx becomes NULL. */
static void expect_create(pk_status want, pk_backend backend, int device, const char *desc,
                          const char *mention, int line)
{
    pk_ctx *c = (pk_ctx *)arena; /* must be overwritten with NULL */
    arena_reset();
    pk_status s = pk_ctx_create(&c, backend, device);
    if (want == PK_ERR_NO_DEVICE && s == PK_OK) {
        printf("  (a CUDA device is present: \"%s\" not checked)\n", desc);
        pk_ctx_destroy(c);
        return;
    }
    ncases++;
    PK_CHECK(s == want, "line %d: pk_ctx_create: %s: got %s, want %s (%s)", line, desc,
             pk_status_str(s), pk_status_str(want), pk_last_create_error());
    PK_CHECK(c == NULL, "line %d: pk_ctx_create: %s: *ctx not NULL", line, desc);
    const char *msg = pk_last_create_error();
    PK_CHECK(msg && msg[0], "line %d: pk_ctx_create: %s: no message", line, desc);
    PK_CHECK(msg && strstr(msg, mention), "line %d: pk_ctx_create: %s: message \"%s\" lacks \"%s\"",
             line, desc, msg ? msg : "", mention);
    PK_CHECK(arena_untouched(), "line %d: pk_ctx_create: %s wrote memory", line, desc);
    if (getenv("PK_TEST_VERBOSE"))
        printf("  case %3d: %-16s %-55s -> %s: %s\n", ncases, "pk_ctx_create", desc,
               pk_status_str(s), msg);
    if (s == PK_OK) pk_ctx_destroy(c);
}

static void bad_create(void)
{
    arena_reset();
    ncases++;
    PK_CHECK(pk_ctx_create(NULL, PK_BACKEND_CPU, 0) == PK_ERR_ARG, "pk_ctx_create(NULL)");
    PK_CHECK(pk_last_create_error()[0], "pk_ctx_create(NULL): no message");
    expect_create(PK_ERR_ARG, (pk_backend)3, 0, "backend 3", "backend", __LINE__);
    expect_create(PK_ERR_ARG, (pk_backend)-1, 0, "backend -1", "backend", __LINE__);
    expect_create(PK_ERR_ARG, PK_BACKEND_CPU, -1, "device -1", "device", __LINE__);
    expect_create(PK_ERR_ARG, PK_BACKEND_AUTO, INT32_MIN, "device INT32_MIN", "device", __LINE__);
    expect_create(PK_ERR_NO_DEVICE, PK_BACKEND_CUDA, 0, "CUDA without a device", "CUDA", __LINE__);
    expect_create(PK_ERR_NO_DEVICE, PK_BACKEND_CUDA, 7, "CUDA device 7", "CUDA", __LINE__);
    setenv("PK_BACKEND", "gpu", 1);
    expect_create(PK_ERR_ARG, PK_BACKEND_AUTO, 0, "PK_BACKEND=gpu", "PK_BACKEND", __LINE__);
    setenv("PK_BACKEND", "CPU ", 1);
    expect_create(PK_ERR_ARG, PK_BACKEND_AUTO, 0, "PK_BACKEND=\"CPU \"", "PK_BACKEND", __LINE__);
    setenv("PK_BACKEND", "cuda", 1);
    expect_create(PK_ERR_NO_DEVICE, PK_BACKEND_AUTO, 0, "PK_BACKEND=cuda without a device", "CUDA",
                  __LINE__);
    /* An explicit backend ignores PK_BACKEND; "auto" in it means auto. */
    setenv("PK_BACKEND", "gpu", 1);
    pk_ctx *c = NULL;
    nvalid++;
    PK_CHECK(pk_ctx_create(&c, PK_BACKEND_CPU, 0) == PK_OK && pk_last_create_error()[0] == '\0',
             "explicit CPU with PK_BACKEND=gpu: %s", pk_last_create_error());
    pk_ctx_destroy(c);
    setenv("PK_BACKEND", "cpu", 1);
    nvalid++;
    PK_CHECK(pk_ctx_create(&c, PK_BACKEND_AUTO, 0) == PK_OK && pk_ctx_backend(c) == PK_BACKEND_CPU,
             "PK_BACKEND=cpu");
    pk_ctx_destroy(c);
    unsetenv("PK_BACKEND");
}

/* PK_CPU_ISA and PK_CPU_PREFETCH are read once per process: garbage is
 * tried in a child, which must fail with `want` and a message naming `var`. */
static int env_child(const char *var, const char *value, const char *isa,
                     pk_backend backend, pk_status want)
{
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        setenv(var, value, 1);
        if (isa) setenv("PK_CPU_ISA", isa, 1);
        /* AUTO must resolve to the CPU for PK_CPU_ISA to matter: on a GPU
         * machine it would pick CUDA, which rightly ignores the variable. */
        if (backend == PK_BACKEND_AUTO) setenv("PK_BACKEND", "cpu", 1);
        pk_ctx *c = (pk_ctx *)arena;
        pk_status s = pk_ctx_create(&c, backend, 0);
        const char *msg = pk_last_create_error();
        bool ok = s == want && c == NULL && msg[0] && strstr(msg, var);
        if (!ok) printf("  child: %s=%s: %s: \"%s\"\n", var, value, pk_status_str(s), msg);
        else if (getenv("PK_TEST_VERBOSE"))
            printf("  case: pk_ctx_create %s=%s -> %s: %s\n", var, value, pk_status_str(s), msg);
        /* A second attempt fails the same way. */
        s = pk_ctx_create(&c, backend, 0);
        ok = ok && s == want && c == NULL;
        _exit(ok ? 0 : 1);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

static int isa_child(const char *value, pk_backend backend)
{
    return env_child("PK_CPU_ISA", value, NULL, backend, PK_ERR_ARG);
}

static void bad_isa_env(void)
{
    const char *values[] = {"avx9000", "AVX2", "sse", " generic"};
    for (int i = 0; i < 4; i++) {
        ncases++;
        int rc = isa_child(values[i], PK_BACKEND_CPU);
        PK_CHECK(rc == 0, "PK_CPU_ISA=%s with the CPU backend: not refused with a message", values[i]);
    }
    ncases++;
    PK_CHECK(isa_child("avx9000", PK_BACKEND_AUTO) == 0, "PK_CPU_ISA=avx9000 with AUTO resolved to the CPU");
    const char *profiles[] = {"L1", "l3", "none", " l2"};
    for (int i = 0; i < 4; i++) {
        ncases++;
        int rc = env_child("PK_CPU_PREFETCH", profiles[i], NULL, PK_BACKEND_CPU, PK_ERR_ARG);
        PK_CHECK(rc == 0, "PK_CPU_PREFETCH=%s: not refused with a message", profiles[i]);
    }
    /* L1 hints exist on the avx512 path only. */
    ncases++;
    PK_CHECK(env_child("PK_CPU_PREFETCH", "l1", "generic", PK_BACKEND_CPU,
                       PK_ERR_UNSUPPORTED) == 0,
             "PK_CPU_PREFETCH=l1 with PK_CPU_ISA=generic: not refused with a message");
}

int main(void)
{
    pk_test_init("test_bad_args");
    if (getenv("PK_CPU_ISA") || getenv("PK_CPU_PREFETCH")) {
        printf("skipped under PK_CPU_ISA / PK_CPU_PREFETCH (the test sets them itself)\n");
        return PK_TEST_SKIP;
    }
    bad_isa_env(); /* first: before this process picks its SIMD path */
    bad_create();
    bad_ctx_functions();
    bad_parse();
    bad_reduce();
    bad_reduce_axis();
    bad_dot();
    bad_axpy();
    printf("%d bad-argument cases checked; %d valid neighbours checked\n",
           ncases, nvalid);
    return pk_test_finish("test_bad_args");
}
