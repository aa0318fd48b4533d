/* User-defined reductions on the CUDA backend (NVRTC): the shared cases of
 * reducer_cases.h on device and host pointers, the same bits on every run,
 * C callbacks refused, and the kernel caches: compiled once, then found in
 * memory, then on disk by a second process; a corrupt or truncated cache
 * file is detected, never loaded, and rebuilt. Skips (77) without a GPU or
 * without NVRTC. A child mode (argv[1] = "child") is the second process. */
#define _GNU_SOURCE
#include "cuda_util.h"
#include "reducer_cases.h"

#include <dirent.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static void *host_mem(size_t b) { return pk_test_alloc(b); }
static void host_put(void *d, const void *s, size_t b) { if (b) memcpy(d, s, b); }
static void host_release(void *p) { free(p); }
/* Results written to device memory are asynchronous: the context is
 * synchronized before they are read or their memory freed. */
static pk_ctx *g_ctx;
static void *dev_mem(size_t b) { return cu_dev(b); }
static void dev_put(void *d, const void *s, size_t b) { if (b) cu_put(d, s, b); }
static void dev_get(void *d, const void *s, size_t b)
{
    pk_ctx_sync(g_ctx);
    if (b) cu_get(d, s, b);
}
static void dev_release(void *p)
{
    pk_ctx_sync(g_ctx);
    cu_free(p);
}

/* The second process: build the reducer of map argv[2], run it once, report
 * where its code came from as the exit status 10 + origin + 4 * rejected. */
static int child(const char *map)
{
    double t0 = now_ms();
    pk_ctx *ctx = cu_ctx();
    double t1 = now_ms();
    pk_reducer_desc d = {.input = PK_F32, .acc = PK_F32, .map = map, .combine = "a + b"};
    pk_reducer *r = NULL;
    if (pk_reducer_create(ctx, &d, &r)) {
        printf("child: %s\n", pk_ctx_error(ctx));
        return 1;
    }
    float x[1000], out = 0;
    for (int i = 0; i < 1000; i++) x[i] = 1;
    pk_status s = pk_reducer_reduce(ctx, r, x, 1000, &out);
    double t2 = now_ms();
    pk_reducer_info info;
    pk_reducer_get_info(r, &info);
    printf("child: origin %d rejected %d: context %.1f ms, reducer create + first reduce "
           "%.2f ms (create %.2f ms), result %g\n",
           (int)info.origin, info.cache_rejected, t1 - t0, t2 - t1, info.build_ms, out);
    pk_reducer_destroy(r);
    pk_ctx_destroy(ctx);
    if (s || out != 1000) return 2;
    return 10 + (int)info.origin + 4 * info.cache_rejected;
}

static int spawn_child(const char *self, const char *map)
{
    char *argv[] = {(char *)self, "child", (char *)map, NULL};
    pid_t pid;
    int st = 0;
    if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ)) return -1;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

static int cache_file(const char *dir, char *path, size_t len)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".pkc") && !strstr(e->d_name, ".tmp"))
            found++, snprintf(path, len, "%s/%s", dir, e->d_name);
    if (d) closedir(d);
    return found;
}

static void caches(pk_ctx *ctx, const char *self)
{
    char dir[] = "/tmp/pk_udr_cache_XXXXXX", path[4096], map[64];
    if (!mkdtemp(dir)) return;
    const char *old = getenv("PK_CACHE_DIR");
    char *saved = old ? strdup(old) : NULL;
    setenv("PK_CACHE_DIR", dir, 1);
    snprintf(map, sizeof map, "x * x + 0 * %d", (int)pk_test_below(1000000000));
    pk_reducer_desc d = {.input = PK_F32, .acc = PK_F32, .map = map, .combine = "a + b"};
    pk_reducer *r = NULL, *r2 = NULL;
    double t0 = now_ms();
    pk_status s = pk_reducer_create(ctx, &d, &r);
    double t1 = now_ms();
    if (s == PK_ERR_UNSUPPORTED) {
        printf("skipped: %s\n", pk_ctx_error(ctx));
        exit(PK_TEST_SKIP);
    }
    pk_reducer_info info;
    PK_CHECK(!s && !pk_reducer_get_info(r, &info), "create: %s", pk_ctx_error(ctx));
    if (s) return;
    printf("cold: NVRTC %d, %s: create %.1f ms (build %.1f ms)\n", info.nvrtc_version,
           info.arch, t1 - t0, info.build_ms);
    PK_CHECK(info.origin == PK_REDUCER_COMPILED && info.cache_written, "cold origin %d written %d",
             (int)info.origin, info.cache_written);
    PK_CHECK(pk_reducer_create(ctx, &d, &r2) == PK_OK && !pk_reducer_get_info(r2, &info) &&
                 info.origin == PK_REDUCER_MEMORY_CACHE,
             "second create in process: origin %d", (int)info.origin);
    pk_reducer_destroy(r2);
    PK_CHECK(cache_file(dir, path, sizeof path) == 1, "one cache file in %s", dir);
    int st = spawn_child(self, map);
    PK_CHECK(st == 10 + PK_REDUCER_DISK_CACHE, "second process: exit %d (13 = disk hit)", st);
    st = spawn_child(self, map); /* the warm figure, once more */
    PK_CHECK(st == 10 + PK_REDUCER_DISK_CACHE, "third process: exit %d", st);
    /* corrupt one payload byte: detected, recompiled, rewritten */
    FILE *f = fopen(path, "r+b");
    PK_CHECK(f != NULL, "open %s", path);
    if (f) {
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        fseek(f, size / 2, SEEK_SET);
        int c = fgetc(f);
        fseek(f, size / 2, SEEK_SET);
        fputc(c ^ 0x20, f);
        fclose(f);
        st = spawn_child(self, map);
        PK_CHECK(st == 10 + PK_REDUCER_COMPILED + 4, "corrupt file: exit %d (15 = rejected, "
                 "compiled)", st);
        st = spawn_child(self, map);
        PK_CHECK(st == 10 + PK_REDUCER_DISK_CACHE, "after rebuild: exit %d", st);
        PK_CHECK(truncate(path, size / 3) == 0, "truncate");
        st = spawn_child(self, map);
        PK_CHECK(st == 10 + PK_REDUCER_COMPILED + 4, "truncated file: exit %d", st);
    }
    pk_reducer_destroy(r);
    unlink(path);
    snprintf(path, sizeof path, "%s/nvrtc-id", dir);
    unlink(path);
    rmdir(dir);
    if (saved) setenv("PK_CACHE_DIR", saved, 1);
    else unsetenv("PK_CACHE_DIR");
    free(saved);
}

static void determinism(pk_ctx *ctx)
{
    int64_t n = 3000017;
    float *h = pk_test_alloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) h[i] = (float)pk_test_uniform(-1, 1);
    void *x = cu_dev((size_t)n * 4);
    cu_put(x, h, (size_t)n * 4);
    pk_reducer *r = rc_make(ctx, PK_F32, PK_F32, PK_REDUCER_VALUE, "x*x - 0.25", "a + b", 0, NULL);
    if (!r) return;
    float o[3];
    PK_CHECK(!pk_reducer_reduce(ctx, r, x, n, &o[0]) && !pk_reducer_reduce(ctx, r, x, n, &o[1]) &&
                 !pk_reducer_reduce(ctx, r, h, n, &o[2]),
             "%s", pk_ctx_error(ctx));
    PK_CHECK(!memcmp(&o[0], &o[1], 4) && !memcmp(&o[0], &o[2], 4), "bits differ: %a %a %a",
             o[0], o[1], o[2]);
    pk_reducer_destroy(r);
    cu_free(x);
    free(h);
}

#if CU_HAVE_RT
/* One reducer used at once by two contexts on each of every GPU (two or
 * more), a thread each, started together: each device builds its module
 * once (under the reducer's lock) and every result has device 0's bits. */
enum { DEV_CALLS = 4 };
typedef struct dev_run {
    pk_ctx *ctx;
    const pk_reducer *red;
    const float *x;
    int64_t n;
    pthread_barrier_t *go;
    pk_status s;
    double out[DEV_CALLS];
} dev_run;

static void *dev_thread(void *p)
{
    dev_run *r = p;
    pthread_barrier_wait(r->go);
    for (int i = 0; i < DEV_CALLS && !r->s; i++)
        r->s = pk_reducer_reduce(r->ctx, r->red, r->x, r->n, &r->out[i]);
    return NULL;
}

static void every_device(pk_ctx *ctx)
{
    int ndev = 0;
    CU_OK(cudaGetDeviceCount(&ndev));
    if (ndev < 2) {
        printf("one reducer on every GPU: skipped (one GPU)\n");
        return;
    }
    if (ndev > 4) ndev = 4;
    const int64_t n = (1 << 20) + 3;
    float *x = pk_test_alloc((size_t)n * sizeof *x);
    long double want = 0;
    for (int64_t i = 0; i < n; i++) {
        x[i] = (float)pk_test_uniform(-1, 1);
        want += (long double)x[i] * x[i];
    }
    pk_reducer_desc d = {.input = PK_F32, .acc = PK_F64, .map = "x*x", .combine = "a + b"};
    pk_reducer *red = NULL;
    PK_CHECK(pk_reducer_create(ctx, &d, &red) == PK_OK, "create: %s", pk_ctx_error(ctx));
    dev_run run[8] = {{0}};
    pthread_t th[8];
    pthread_barrier_t go;
    int nt = 2 * ndev, started = 0;
    pthread_barrier_init(&go, NULL, (unsigned)nt);
    for (int i = 0; i < nt; i++) {
        run[i] = (dev_run){.red = red, .x = x, .n = n, .go = &go};
        run[i].s = pk_ctx_create(&run[i].ctx, PK_BACKEND_CUDA, i / 2);
    }
    for (int i = 0; i < nt; i++) started += pthread_create(&th[i], NULL, dev_thread, &run[i]) == 0;
    PK_CHECK(started == nt, "pthread_create");
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    double ref = 0;
    PK_CHECK(red && pk_reducer_reduce(ctx, red, x, n, &ref) == PK_OK, "%s", pk_ctx_error(ctx));
    PK_CHECK(fabsl(ref - want) <= 1e-12L * want, "sum of squares %.17g, want %.17Lg", ref, want);
    for (int i = 0; i < nt; i++) {
        PK_CHECK(run[i].s == PK_OK, "device %d, thread %d: %s", i / 2, i,
                 run[i].ctx ? pk_ctx_error(run[i].ctx) : pk_last_create_error());
        for (int k = 0; k < DEV_CALLS && !run[i].s; k++)
            PK_CHECK(!memcmp(&run[i].out[k], &ref, sizeof ref),
                     "device %d, thread %d, call %d: %.17g, device 0 alone %.17g", i / 2, i, k,
                     run[i].out[k], ref);
        pk_ctx_destroy(run[i].ctx);
    }
    pthread_barrier_destroy(&go);
    pk_reducer_destroy(red);
    free(x);
    printf("one reducer on %d GPUs, %d threads: checked\n", ndev, nt);
}
#else
static void every_device(pk_ctx *ctx) { (void)ctx; } /* called only with the runtime */
#endif

static double sq(double x, int64_t i, void *u) { (void)i, (void)u; return x * x; }

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "child")) return child(argv[2]);
    pk_test_init("test_cuda_reducer");
    pk_ctx *ctx = g_ctx = cu_ctx();
    cu_note_no_rt();
    caches(ctx, argv[0]);
    pk_reducer_desc d = {.input = PK_F32, .acc = PK_F32, .map_fn = sq, .combine = "a+b"};
    pk_reducer *r = NULL;
    PK_CHECK(pk_reducer_create(ctx, &d, &r) == PK_ERR_UNSUPPORTED &&
                 strstr(pk_ctx_error(ctx), "CPU backend only"),
             "callbacks on CUDA: %s", pk_ctx_error(ctx));
    rc_errors(ctx);
    rc_locale(ctx);
    rc_sums(ctx, host_mem, host_put, host_release);
    rc_order(ctx, host_mem, host_put, host_release);
    rc_axes(ctx, host_mem, host_put, host_put, host_release);
    rc_index_base(ctx, host_mem, host_put, host_release);
    if (CU_HAVE_RT) {
        rc_index_base(ctx, dev_mem, dev_put, dev_release);
        rc_sums(ctx, dev_mem, dev_put, dev_release);
        rc_order(ctx, dev_mem, dev_put, dev_release);
        rc_axes(ctx, dev_mem, dev_put, dev_get, dev_release);
        determinism(ctx);
        every_device(ctx);
    }
    pk_ctx_destroy(ctx);
    return pk_test_finish("test_cuda_reducer");
}
