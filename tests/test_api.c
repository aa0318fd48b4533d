/* The non-kernel API: status texts, dtype/op/backend names and their parse
 * round trips, dtype sizes, the result-dtype table (NumPy's), context life
 * cycle and accessors, the per-context message (the last failure, kept
 * across later successes), the per-thread create error, and one context per
 * thread used concurrently. */
#include "util.h"

#include <pthread.h>

static void statuses(void)
{
    const pk_status all[] = {PK_OK,           PK_ERR_ARG,    PK_ERR_NOMEM,
                             PK_ERR_UNSUPPORTED, PK_ERR_NO_DEVICE, PK_ERR_DEVICE,
                             PK_ERR_COMPILE,  PK_ERR_IO,     PK_ERR_INTERNAL};
    const int n = (int)(sizeof all / sizeof *all);
    PK_CHECK(PK_OK == 0, "PK_OK must be 0");
    for (int i = 0; i < n; i++) {
        const char *s = pk_status_str(all[i]);
        PK_CHECK(s && s[0], "pk_status_str(%d) empty", (int)all[i]);
        for (int j = 0; j < i; j++)
            PK_CHECK(strcmp(s, pk_status_str(all[j])) != 0, "statuses %d and %d share \"%s\"", i,
                     j, s);
    }
    PK_CHECK(strcmp(pk_status_str(PK_OK), "ok") == 0, "PK_OK text: %s", pk_status_str(PK_OK));
    PK_CHECK(strcmp(pk_status_str(PK_ERR_NO_DEVICE), "no CUDA device") == 0, "no device text");
    PK_CHECK(pk_status_str((pk_status)-1) && pk_status_str((pk_status)-1)[0], "status -1");
    PK_CHECK(pk_status_str((pk_status)1000) && pk_status_str((pk_status)1000)[0], "status 1000");
}

static void names(void)
{
    const char *dn[] = {"f32", "f64", "i32", "i64", "u32", "u64"};
    const size_t ds[] = {4, 8, 4, 8, 4, 8};
    for (int t = 0; t < PK_DTYPE_COUNT; t++) {
        PK_CHECK(strcmp(pk_dtype_name((pk_dtype)t), dn[t]) == 0, "dtype %d name %s", t,
                 pk_dtype_name((pk_dtype)t));
        PK_CHECK(pk_dtype_size((pk_dtype)t) == ds[t], "dtype %d size %zu", t,
                 pk_dtype_size((pk_dtype)t));
        pk_dtype back = PK_DTYPE_COUNT;
        PK_CHECK(pk_dtype_parse(pk_dtype_name((pk_dtype)t), &back) == PK_OK && (int)back == t,
                 "dtype %d round trip", t);
    }
    const char *on[] = {"sum", "prod", "min", "max", "argmin", "argmax"};
    for (int o = 0; o < PK_OP_COUNT; o++) {
        PK_CHECK(strcmp(pk_op_name((pk_op)o), on[o]) == 0, "op %d name %s", o,
                 pk_op_name((pk_op)o));
        pk_op back = PK_OP_COUNT;
        PK_CHECK(pk_op_parse(pk_op_name((pk_op)o), &back) == PK_OK && (int)back == o,
                 "op %d round trip", o);
    }
    const char *bn[] = {"auto", "cpu", "cuda"};
    for (int b = 0; b < 3; b++) {
        PK_CHECK(strcmp(pk_backend_name((pk_backend)b), bn[b]) == 0, "backend %d name %s", b,
                 pk_backend_name((pk_backend)b));
        pk_backend back = (pk_backend)99;
        PK_CHECK(pk_backend_parse(pk_backend_name((pk_backend)b), &back) == PK_OK && (int)back == b,
                 "backend %d round trip", b);
    }
    /* Out of range: "?" and 0, never NULL. */
    const int bad[] = {-1, 6, 99, INT32_MIN};
    for (int i = 0; i < 4; i++) {
        PK_CHECK(strcmp(pk_dtype_name((pk_dtype)bad[i]), "?") == 0, "dtype %d", bad[i]);
        PK_CHECK(pk_dtype_size((pk_dtype)bad[i]) == 0, "dtype size %d", bad[i]);
        PK_CHECK(strcmp(pk_op_name((pk_op)bad[i]), "?") == 0, "op %d", bad[i]);
        PK_CHECK(strcmp(pk_backend_name((pk_backend)(bad[i] == 6 ? 3 : bad[i])), "?") == 0,
                 "backend %d", bad[i]);
    }
}

/* NumPy's result dtypes: np.sum/np.prod of int32 -> int64, uint32 ->
 * uint64, floats keep theirs; argmin/argmax -> int64 (intp); min/max keep
 * the input dtype. */
static void result_dtypes(void)
{
    const pk_dtype want[PK_OP_COUNT][PK_DTYPE_COUNT] = {
        /*            f32     f64     i32     i64     u32     u64 */
        [PK_SUM] = {PK_F32, PK_F64, PK_I64, PK_I64, PK_U64, PK_U64},
        [PK_PROD] = {PK_F32, PK_F64, PK_I64, PK_I64, PK_U64, PK_U64},
        [PK_MIN] = {PK_F32, PK_F64, PK_I32, PK_I64, PK_U32, PK_U64},
        [PK_MAX] = {PK_F32, PK_F64, PK_I32, PK_I64, PK_U32, PK_U64},
        [PK_ARGMIN] = {PK_I64, PK_I64, PK_I64, PK_I64, PK_I64, PK_I64},
        [PK_ARGMAX] = {PK_I64, PK_I64, PK_I64, PK_I64, PK_I64, PK_I64},
    };
    for (int o = 0; o < PK_OP_COUNT; o++)
        for (int t = 0; t < PK_DTYPE_COUNT; t++)
            PK_CHECK(pk_reduce_result_dtype((pk_op)o, (pk_dtype)t) == want[o][t],
                     "result dtype of %s %s: %s", pk_op_name((pk_op)o), pk_dtype_name((pk_dtype)t),
                     pk_dtype_name(pk_reduce_result_dtype((pk_op)o, (pk_dtype)t)));
    PK_CHECK(pk_reduce_result_dtype((pk_op)-1, PK_F32) == PK_DTYPE_COUNT, "bad op");
    PK_CHECK(pk_reduce_result_dtype(PK_OP_COUNT, PK_F32) == PK_DTYPE_COUNT, "bad op");
    PK_CHECK(pk_reduce_result_dtype(PK_SUM, (pk_dtype)-1) == PK_DTYPE_COUNT, "bad dtype");
    PK_CHECK(pk_reduce_result_dtype(PK_SUM, PK_DTYPE_COUNT) == PK_DTYPE_COUNT, "bad dtype");
}

static void contexts(void)
{
    pk_ctx *c = pk_test_cpu_ctx();
    PK_CHECK(pk_last_create_error()[0] == '\0', "create error after a success: %s",
             pk_last_create_error());
    PK_CHECK(pk_ctx_backend(c) == PK_BACKEND_CPU, "backend %d", (int)pk_ctx_backend(c));
    PK_CHECK(pk_ctx_error(c)[0] == '\0', "new context has a message");
    const char *isa = pk_cpu_isa();
    PK_CHECK(strcmp(isa, "avx512") == 0 || strcmp(isa, "avx2") == 0 ||
                 strcmp(isa, "generic") == 0 || strcmp(isa, "reference") == 0,
             "pk_cpu_isa() = %s", isa);
    const char *env = getenv("PK_CPU_ISA");
    if (env && *env && strcmp(env, "auto") != 0)
        PK_CHECK(strcmp(isa, env) == 0, "PK_CPU_ISA=%s but the path is %s", env, isa);
    PK_CHECK(strstr(pk_ctx_describe(c), isa) != NULL, "describe \"%s\" lacks the path %s",
             pk_ctx_describe(c), isa);
    printf("context: %s; SIMD path %s\n", pk_ctx_describe(c), isa);
    for (int t = 0; t <= 8; t++)
        PK_CHECK(pk_ctx_set_threads(c, t) == PK_OK, "set_threads(%d)", t);
    PK_CHECK(pk_ctx_sync(c) == PK_OK, "sync");

    /* The message is the last failure's, kept across successes. */
    float x[4] = {1, 2, 3, 4}, s = 0;
    PK_CHECK(pk_reduce(c, PK_SUM, PK_F32, x, -1, &s) == PK_ERR_ARG, "n = -1");
    char first[1024];
    snprintf(first, sizeof first, "%s", pk_ctx_error(c));
    PK_CHECK(first[0] != '\0', "no message");
    PK_CHECK(pk_reduce(c, PK_SUM, PK_F32, x, 4, &s) == PK_OK && s == 10.0f, "sum");
    PK_CHECK(strcmp(pk_ctx_error(c), first) == 0, "a success changed the message to \"%s\"",
             pk_ctx_error(c));
    PK_CHECK(pk_dot(c, PK_I32, 4, x, x, &s) == PK_ERR_ARG, "dot i32");
    PK_CHECK(strcmp(pk_ctx_error(c), first) != 0 && strstr(pk_ctx_error(c), "pk_dot"),
             "the second failure's message: \"%s\"", pk_ctx_error(c));
    pk_ctx_destroy(c);

    /* AUTO without a device and without PK_BACKEND: the CPU. */
    if (!getenv("PK_BACKEND")) {
        pk_ctx *a = NULL;
        pk_status st = pk_ctx_create(&a, PK_BACKEND_AUTO, 0);
        PK_CHECK(st == PK_OK, "AUTO: %s", pk_last_create_error());
        if (st == PK_OK)
            printf("AUTO picked %s (%s)\n", pk_backend_name(pk_ctx_backend(a)),
                   pk_ctx_describe(a));
        PK_CHECK(st != PK_OK || pk_ctx_backend(a) != PK_BACKEND_AUTO, "AUTO stays AUTO");
        pk_ctx_destroy(a);
    }
    /* Many contexts at once are independent. */
    pk_ctx *many[16];
    for (int i = 0; i < 16; i++) many[i] = pk_test_cpu_ctx();
    PK_CHECK(pk_ctx_set_threads(many[3], -5) == PK_ERR_ARG, "set_threads -5");
    PK_CHECK(pk_ctx_error(many[4])[0] == '\0', "a failure leaked into another context");
    for (int i = 0; i < 16; i++) pk_ctx_destroy(many[i]);
}

/* One context per thread, all at once: every thread gets the same bits. */
#define NT 4
#define TN 300001
static float tdata[TN];
typedef struct {
    double sum;
    int64_t arg;
    pk_status s;
    char create_error[256];
} tres;

static void *worker(void *p)
{
    tres *r = p;
    pk_ctx *c = NULL;
    r->s = pk_ctx_create(&c, PK_BACKEND_CPU, 0);
    if (r->s != PK_OK) return NULL;
    pk_ctx_set_threads(c, 2);
    float s = 0;
    for (int k = 0; k < 20 && r->s == PK_OK; k++) {
        r->s = pk_reduce(c, PK_SUM, PK_F32, tdata, TN, &s);
        if (r->s == PK_OK) r->s = pk_reduce(c, PK_ARGMAX, PK_F32, tdata, TN, &r->arg);
    }
    r->sum = s;
    pk_ctx_destroy(c);
    /* A create error in this thread is this thread's only. */
    pk_ctx *bad = NULL;
    pk_ctx_create(&bad, (pk_backend)42, 0);
    snprintf(r->create_error, sizeof r->create_error, "%s", pk_last_create_error());
    return NULL;
}

static void threads(void)
{
    for (int i = 0; i < TN; i++) tdata[i] = (float)pk_test_uniform(-1, 1);
    pthread_t th[NT];
    tres r[NT];
    memset(r, 0, sizeof r);
    for (int i = 0; i < NT; i++) pthread_create(&th[i], NULL, worker, &r[i]);
    for (int i = 0; i < NT; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < NT; i++) {
        PK_CHECK(r[i].s == PK_OK, "thread %d: %s", i, pk_status_str(r[i].s));
        PK_CHECK(r[i].sum == r[0].sum && r[i].arg == r[0].arg, "thread %d: other results", i);
        PK_CHECK(strstr(r[i].create_error, "backend 42") != NULL, "thread %d create error: %s", i,
                 r[i].create_error);
    }
    PK_CHECK(pk_last_create_error()[0] == '\0',
             "another thread's create error is visible here: %s", pk_last_create_error());
}

/* pk_version matches the header; pk_build_config is the documented keys in
 * order, one "key=value" line each; the features agree with it. */
static void build_info(void)
{
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", PK_VERSION_MAJOR, PK_VERSION_MINOR,
             PK_VERSION_PATCH);
    PK_CHECK(strcmp(pk_version(), want) == 0, "pk_version %s, header %s", pk_version(), want);
    static const char *const keys[] = {"version", "git", "compiler", "build_type", "openmp",
                                       "cuda", "cuda_arch", "nvrtc", "mpi", "nccl"};
    const char *p = pk_build_config();
    char values[10][128];
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        size_t len = strlen(keys[k]);
        PK_CHECK(strncmp(p, keys[k], len) == 0 && p[len] == '=',
                 "pk_build_config: line %zu is not %s=...: %.40s", k + 1, keys[k], p);
        p += len + 1;
        const char *nl = strchr(p, '\n');
        PK_CHECK(nl && nl > p && (size_t)(nl - p) < sizeof values[k],
                 "pk_build_config: %s has no value or no newline", keys[k]);
        snprintf(values[k], sizeof values[k], "%.*s", (int)(nl - p), p);
        p = nl + 1;
    }
    PK_CHECK(*p == '\0', "pk_build_config: more than the documented keys: %s", p);
    PK_CHECK(strcmp(values[0], want) == 0, "pk_build_config: version=%s", values[0]);
    static const struct {
        pk_feature f;
        const char *name;
        int key;
    } features[] = {{PK_FEATURE_CUDA, "cuda", 5}, {PK_FEATURE_NVRTC, "nvrtc", 7},
                    {PK_FEATURE_MPI, "mpi", 8}, {PK_FEATURE_NCCL, "nccl", 9}};
    for (size_t i = 0; i < sizeof features / sizeof *features; i++) {
        int has = pk_has_feature(features[i].f);
        PK_CHECK(has == 0 || has == 1, "pk_has_feature(%s) = %d", features[i].name, has);
        PK_CHECK(strcmp(pk_feature_name(features[i].f), features[i].name) == 0,
                 "pk_feature_name: %s", pk_feature_name(features[i].f));
        PK_CHECK(has == (strcmp(values[features[i].key], "no") != 0),
                 "pk_has_feature(%s) = %d but the build config says %s=%s", features[i].name,
                 has, keys[features[i].key], values[features[i].key]);
    }
    PK_CHECK(pk_has_feature(PK_FEATURE_COUNT) == 0 && pk_has_feature((pk_feature)-1) == 0,
             "pk_has_feature out of range is not 0");
    PK_CHECK(strcmp(pk_feature_name(PK_FEATURE_COUNT), "?") == 0,
             "pk_feature_name out of range: %s", pk_feature_name(PK_FEATURE_COUNT));
    PK_CHECK(pk_has_feature(PK_FEATURE_NVRTC) == pk_has_feature(PK_FEATURE_CUDA) &&
                 (!pk_has_feature(PK_FEATURE_NCCL) || pk_has_feature(PK_FEATURE_MPI)),
             "features disagree: nvrtc without cuda, or nccl without mpi");
}

int main(void)
{
    pk_test_init("test_api");
    printf("pk %s (header %d.%d.%d)\n", pk_version(), PK_VERSION_MAJOR, PK_VERSION_MINOR,
           PK_VERSION_PATCH);
    build_info();
    statuses();
    names();
    result_dtypes();
    contexts();
    threads();
    return pk_test_finish("test_api");
}
