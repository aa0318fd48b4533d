/* Disk cache of compiled kernels and the run-time NVRTC loader (kcache.h). */
#define _GNU_SOURCE
#include "kcache.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- hashing ---------------------------------------------------------------- */

pk__hash pk__hash_init(void)
{
    pk__hash h = {{0xcbf29ce484222325ull, 0x84222325cbf29ce4ull}};
    return h;
}

void pk__hash_add(pk__hash *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t l = n; /* length first: pieces cannot run into each other */
    for (int j = 0; j < 8; j++) {
        h->h[0] = (h->h[0] ^ ((l >> (8 * j)) & 255)) * 0x100000001b3ull;
        h->h[1] = (h->h[1] ^ ((l >> (8 * j)) & 255)) * 0x100000001b3ull;
    }
    for (size_t i = 0; i < n; i++) {
        h->h[0] = (h->h[0] ^ b[i]) * 0x100000001b3ull;
        h->h[1] = ((h->h[1] ^ b[i]) * 0x100000001b3ull) ^ (h->h[1] >> 29);
    }
}

void pk__hash_hex(const pk__hash *h, char out[33])
{
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)h->h[0],
             (unsigned long long)h->h[1]);
}

/* ---- the cache directory and files ------------------------------------------- */

#define KC_MAGIC "PKKCACHE"
#define KC_VERSION 1u

typedef struct kc_header {
    char magic[8];
    uint32_t version, header_bytes;
    char key[32];
    uint64_t payload_bytes;
    uint64_t checksum; /* of the payload */
} kc_header;

static uint64_t checksum(const void *p, size_t n)
{
    pk__hash h = pk__hash_init();
    pk__hash_add(&h, p, n);
    return h.h[0] ^ (h.h[1] * 31);
}

static int mkdirs(char *path)
{
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(path, 0755) && errno != EEXIST) return (*p = '/', -1);
            *p = '/';
        }
    return mkdir(path, 0755) && errno != EEXIST ? -1 : 0;
}

int pk__kcache_dir(char *buf, size_t len)
{
    const char *d = pk__env(PK__ENV_CACHE_DIR), *x = getenv("XDG_CACHE_HOME"),
               *home = getenv("HOME");
    int w;
    if (d && *d) w = snprintf(buf, len, "%s", d);
    else if (x && *x) w = snprintf(buf, len, "%s/pk", x);
    else if (home && *home) w = snprintf(buf, len, "%s/.cache/pk", home);
    else return -1;
    if (w < 0 || (size_t)w >= len) return -1;
    return mkdirs(buf);
}

int pk__kcache_path(const char *key, char *buf, size_t len)
{
    char dir[4096];
    if (pk__kcache_dir(dir, sizeof dir)) return -1;
    int w = snprintf(buf, len, "%s/%s.pkc", dir, key);
    return w < 0 || (size_t)w >= len ? -1 : 0;
}

int pk__kcache_load(const char *key, void **data, size_t *len)
{
    char path[4200];
    *data = NULL;
    if (pk__kcache_path(key, path, sizeof path)) return PK__KCACHE_MISS;
    FILE *f = fopen(path, "rb");
    if (!f) return PK__KCACHE_MISS;
    kc_header h;
    int st = PK__KCACHE_CORRUPT;
    void *p = NULL;
    struct stat sb;
    if (fread(&h, sizeof h, 1, f) == 1 && !memcmp(h.magic, KC_MAGIC, 8) &&
        h.version == KC_VERSION && h.header_bytes == sizeof h &&
        !memcmp(h.key, key, 32) && fstat(fileno(f), &sb) == 0 &&
        (uint64_t)sb.st_size == sizeof h + h.payload_bytes && h.payload_bytes > 0 &&
        (p = pk__malloc(h.payload_bytes)) && fread(p, h.payload_bytes, 1, f) == 1 &&
        checksum(p, h.payload_bytes) == h.checksum) {
        st = PK__KCACHE_HIT;
        *data = p;
        *len = h.payload_bytes;
    } else {
        pk__free(p);
    }
    fclose(f);
    return st;
}

int pk__kcache_store(const char *key, const void *data, size_t len)
{
    char path[4200], tmp[4300];
    if (pk__kcache_path(key, path, sizeof path)) return -1;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%ld", path, (long)getpid(), (long)ts.tv_nsec);
    kc_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, KC_MAGIC, 8);
    h.version = KC_VERSION;
    h.header_bytes = sizeof h;
    memcpy(h.key, key, 32);
    h.payload_bytes = len;
    h.checksum = checksum(data, len);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "wb");
    int ok = f && fwrite(&h, sizeof h, 1, f) == 1 && fwrite(data, len, 1, f) == 1;
    if (f) ok = (fclose(f) == 0) && ok;
    else close(fd);
    if (!ok || rename(tmp, path)) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* ---- NVRTC -------------------------------------------------------------------- */

typedef int (*nv_create_t)(void **, const char *, const char *, int,
                           const char *const *, const char *const *);
typedef int (*nv_compile_t)(void *, int, const char *const *);
typedef int (*nv_size_t)(void *, size_t *);
typedef int (*nv_get_t)(void *, char *);
typedef int (*nv_destroy_t)(void **);
typedef int (*nv_version_t)(int *, int *);
typedef const char *(*nv_errstr_t)(int);

static struct {
    void *lib;
    int version;
    nv_create_t create;
    nv_compile_t compile;
    nv_size_t cubin_size, log_size;
    nv_get_t cubin, log;
    nv_destroy_t destroy;
    nv_errstr_t errstr;
} nv;
static pthread_once_t nv_once = PTHREAD_ONCE_INIT;

static void *try_open(const char *dir, const char *name)
{
    char p[4096];
    if (dir) snprintf(p, sizeof p, "%s/%s", dir, name);
    else snprintf(p, sizeof p, "%s", name);
    return dlopen(p, RTLD_NOW | RTLD_LOCAL);
}

static void nv_load(void)
{
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
    const char *env = pk__env(PK__ENV_NVRTC_LIB);
    char home[4096] = "";
    const char *ch = getenv("CUDA_HOME") ? getenv("CUDA_HOME") : getenv("CUDA_PATH");
    if (ch) snprintf(home, sizeof home, "%s/lib64", ch);
    void *lib = env && *env ? try_open(NULL, env) : NULL;
    const char *dirs[3] = {NULL, home[0] ? home : NULL, "/usr/local/cuda/lib64"};
    for (int d = 0; d < 3 && !lib && !(env && *env); d++)
        for (int j = 0; j < 3 && !lib; j++)
            if (d == 0 || dirs[d]) lib = try_open(dirs[d], names[j]);
    if (!lib) return;
#define SYM(field, type, name)                                       \
    if (!(nv.field = (type)dlsym(lib, name))) {                      \
        dlclose(lib);                                                \
        return;                                                      \
    }
    nv_version_t version;
    SYM(create, nv_create_t, "nvrtcCreateProgram")
    SYM(compile, nv_compile_t, "nvrtcCompileProgram")
    SYM(cubin_size, nv_size_t, "nvrtcGetCUBINSize")
    SYM(cubin, nv_get_t, "nvrtcGetCUBIN")
    SYM(log_size, nv_size_t, "nvrtcGetProgramLogSize")
    SYM(log, nv_get_t, "nvrtcGetProgramLog")
    SYM(destroy, nv_destroy_t, "nvrtcDestroyProgram")
    SYM(errstr, nv_errstr_t, "nvrtcGetErrorString")
    if (!(version = (nv_version_t)dlsym(lib, "nvrtcVersion"))) {
        dlclose(lib);
        return;
    }
#undef SYM
    int ma = 0, mi = 0;
    if (version(&ma, &mi)) {
        dlclose(lib);
        return;
    }
    nv.version = ma * 1000 + mi * 10;
    nv.lib = lib;
}

int pk__nvrtc_version(void)
{
    pthread_once(&nv_once, nv_load);
    return nv.lib ? nv.version : 0;
}

pk_status pk__nvrtc_compile(pk_ctx *ctx, const char *src, const char *name,
                            const char *const *opts, int nopts, void **cubin,
                            size_t *len)
{
    *cubin = NULL;
    if (!pk__nvrtc_version())
        return pk__fail(ctx, PK_ERR_UNSUPPORTED,
                        "pk_reducer_create: NVRTC not found (tried $PK_NVRTC_LIB, "
                        "libnvrtc.so.13/.12/.so in the library path, $CUDA_HOME/lib64 "
                        "and /usr/local/cuda/lib64): user-defined reductions need it "
                        "on the CUDA backend");
    void *prog = NULL;
    int r = nv.create(&prog, src, name, 0, NULL, NULL);
    if (r) return pk__fail(ctx, PK_ERR_COMPILE, "nvrtcCreateProgram: %s", nv.errstr(r));
    r = nv.compile(prog, nopts, opts);
    if (r) {
        size_t ls = 0;
        char *log = NULL;
        if (!nv.log_size(prog, &ls) && ls && (log = pk__malloc(ls + 1)) && !nv.log(prog, log))
            log[ls] = 0;
        pk_status s = pk__fail(ctx, PK_ERR_COMPILE, "NVRTC: %s: %s", nv.errstr(r),
                               log ? log : "(no log)");
        pk__free(log);
        nv.destroy(&prog);
        return s;
    }
    size_t n = 0;
    if ((r = nv.cubin_size(prog, &n)) || !n || !(*cubin = pk__malloc(n)) ||
        (r = nv.cubin(prog, *cubin))) {
        pk__free(*cubin);
        *cubin = NULL;
        nv.destroy(&prog);
        return pk__fail(ctx, r ? PK_ERR_COMPILE : PK_ERR_NOMEM, "nvrtcGetCUBIN: %s",
                        r ? nv.errstr(r) : "no memory or empty cubin");
    }
    *len = n;
    nv.destroy(&prog);
    return PK_OK;
}

/* The NVRTC version without loading NVRTC (dlopen costs ~15 ms, three
 * times the warm-cache budget): the cache directory's nvrtc-id file
 * records the version with the library's path, size and mtime and a hash
 * of the variables that steer the search; while all of these still match,
 * the version is taken from there. Otherwise NVRTC is loaded and the file
 * rewritten. */
int pk__nvrtc_version_fast(void)
{
    /* PK_NVRTC_LIB first (env.c's table), then the system's variables. */
    const char *vars[] = {NULL, "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH"};
    pk__hash eh = pk__hash_init();
    for (int j = 0; j < 4; j++) {
        const char *v = j == 0 ? pk__env(PK__ENV_NVRTC_LIB) : getenv(vars[j]);
        pk__hash_add(&eh, v ? v : "", v ? strlen(v) + 1 : 0);
    }
    char env[33], dir[4096], idp[4200];
    pk__hash_hex(&eh, env);
    if (pk__kcache_dir(dir, sizeof dir)) return pk__nvrtc_version();
    snprintf(idp, sizeof idp, "%s/nvrtc-id", dir);
    FILE *f = fopen(idp, "r");
    if (f) {
        char path[4096], e[40];
        int v = 0;
        long long size = -1, mtime = -1;
        int ok = fscanf(f, "%d %39s %lld %lld %4095s", &v, e, &size, &mtime, path) == 5;
        fclose(f);
        struct stat sb;
        if (ok && !strcmp(e, env) && !stat(path, &sb) && sb.st_size == size &&
            (long long)sb.st_mtime == mtime && v > 0)
            return v;
    }
    int v = pk__nvrtc_version();
    Dl_info di;
    struct stat sb;
    if (v && dladdr((void *)nv.create, &di) && di.dli_fname && !stat(di.dli_fname, &sb) &&
        !strchr(di.dli_fname, ' ')) {
        char tmp[4300];
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld", idp, (long)getpid());
        FILE *w = fopen(tmp, "w");
        if (w) {
            int ok = fprintf(w, "%d %s %lld %lld %s\n", v, env, (long long)sb.st_size,
                             (long long)sb.st_mtime, di.dli_fname) > 0;
            ok = (fclose(w) == 0) && ok;
            if (!ok || rename(tmp, idp)) unlink(tmp);
        }
    }
    return v;
}
