/* User-defined reductions on the GPU: CUDA C++ generated from the reducer's
 * expressions (udr_source.h), compiled by NVRTC (loaded at run time,
 * src/core/kcache.c) to a cubin for the device's own architecture, cached
 * in this process and on disk, loaded and launched through the driver API
 * obtained from the runtime (cudaGetDriverEntryPointByVersion): libpk does
 * not link libcuda or NVRTC. */
#include "cuda/cuda_internal.cuh"

extern "C" {
#include "core/kcache.h"
#include "core/reducer.h"
}
#include "cuda/udr_source.h"

#include <cuda.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace pk_cuda {

namespace {

constexpr int kMaxDevices = 16;
/* Chunks per slice at most (PK_MAX_CHUNKS in udr_source.h). */
constexpr int64_t kMaxChunks = 512;
/* A launch aims at kTargetSlices slices: one round of resident blocks on
 * 132 SMs, as the built-in reductions. Rows longer than that many slices of
 * kMaxChunks take kLongSlices: about three rounds (1024 slices, a round and
 * a half, ran 3-10% slower at 2^28 f32 on an H200). */
constexpr int64_t kTargetSlices = 512;
constexpr int64_t kLongSlices = 2048;
/* Lines (axis 0, and axis 1 of rows shorter than kShortRow elements): about
 * kLineThreads (segment, line) threads, at most one segment per kMinSeg
 * elements, and the fold of the segments' partials in groups of kFoldGroup
 * per warp. Rows of 1024 f32 took 41 us as slices and 81 as lines at 2^24
 * elements, rows of 256 171 and 91 (H200). */
constexpr int64_t kShortRow = 1024;
constexpr int64_t kLineThreads = 1 << 19;
constexpr int64_t kMinSeg = 32;
constexpr int64_t kFoldGroup = 1024;
/* A partial on the device (udr_source.h's Acc: the value, the index). */
struct Acc16 {
    unsigned char bytes[16];
};

/* ---- the driver API, without linking libcuda ----------------------------- */

struct Driver {
    CUresult (*load)(CUmodule *, const void *) = nullptr;
    CUresult (*get)(CUfunction *, CUmodule, const char *) = nullptr;
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                       unsigned, unsigned, CUstream, void **, void **) = nullptr;
    CUresult (*unload)(CUmodule) = nullptr;
    CUresult (*occupancy)(int *, CUfunction, int, size_t) = nullptr;
    CUresult (*errname)(CUresult, const char **) = nullptr;
    bool ok = false;
};

const Driver &driver()
{
    static Driver d;
    static std::once_flag once;
    std::call_once(once, [] {
        auto sym = [](const char *name, void **fn) {
            cudaDriverEntryPointQueryResult q;
            return cudaGetDriverEntryPointByVersion(name, fn, 12000, cudaEnableDefault, &q) ==
                       cudaSuccess &&
                   q == cudaDriverEntryPointSuccess && *fn;
        };
        d.ok = sym("cuModuleLoadData", (void **)&d.load) &&
               sym("cuModuleGetFunction", (void **)&d.get) &&
               sym("cuLaunchKernel", (void **)&d.launch) &&
               sym("cuModuleUnload", (void **)&d.unload) &&
               sym("cuOccupancyMaxActiveBlocksPerMultiprocessor", (void **)&d.occupancy) &&
               sym("cuGetErrorName", (void **)&d.errname);
        (void)cudaGetLastError();
    });
    return d;
}

pk_status fail_cu(pk_ctx *ctx, CUresult r, const char *what)
{
    const char *name = "?";
    if (driver().errname) driver().errname(r, &name);
    return pk__fail(ctx, r == CUDA_ERROR_OUT_OF_MEMORY ? PK_ERR_NOMEM : PK_ERR_DEVICE,
                    "CUDA driver: %s failed: %s", what, name);
}

/* The source, the cubin and the process's cubin cache are std::string and
 * std::vector: out of host memory they throw, which must not cross the C
 * API (it would terminate the caller). */
pk_status no_host_memory(pk_ctx *ctx, const char *fn)
{
    return pk__fail(ctx, PK_ERR_NOMEM, "%s: out of host memory", fn);
}

/* ---- the process-wide memory cache of cubins -------------------------------- */

struct CachedCubin {
    std::string key;
    std::vector<char> bytes;
};
std::mutex g_cache_mu;
std::vector<CachedCubin> g_cache;

bool memory_lookup(const char *key, std::vector<char> &out)
{
    std::lock_guard<std::mutex> l(g_cache_mu);
    for (auto &c : g_cache)
        if (c.key == key) {
            out = c.bytes;
            return true;
        }
    return false;
}

void memory_store(const char *key, const void *p, size_t n)
{
    std::lock_guard<std::mutex> l(g_cache_mu);
    if (g_cache.size() >= 256) g_cache.erase(g_cache.begin()); /* bounded */
    g_cache.push_back({key, std::vector<char>((const char *)p, (const char *)p + n)});
}

/* ---- the reducer's GPU state ------------------------------------------------- */

struct Loaded {
    CUmodule mod = nullptr;
    CUfunction slices = nullptr, lines = nullptr, fold = nullptr;
    int blocks_per_sm = 0;
};

/* One module per device, loaded on first use. A reducer may be used by
 * contexts on several threads at once: `ready` is the lock-free fast path,
 * `mu` makes the first use build once. */
struct Udr {
    std::string src;
    std::mutex mu;
    std::atomic<bool> ready[kMaxDevices] = {};
    Loaded dev[kMaxDevices];
};

const char *c_type(pk_dtype t)
{
    static const char *const names[PK_DTYPE_COUNT] = {
        "float", "double", "int", "long long", "unsigned int", "unsigned long long"};
    return names[t];
}

pk_status generate(pk_ctx *ctx, const pk_reducer *red, std::string &src)
{
    char e[3][8192];
    const int f32 = red->d.acc == PK_F32;
    for (int j = 0; j < PK__R_NEXPR; j++) {
        size_t len = 0;
        e[j][0] = 0;
        if (pk__expr_emit(&red->expr[j], f32, e[j], sizeof e[j], &len))
            return pk__fail(ctx, PK_ERR_COMPILE, "pk_reducer_create: %s expression too long",
                            j == 0 ? "map" : j == 1 ? "combine" : "final");
    }
    long long idbits;
    double id = red->d.identity;
    memcpy(&idbits, &id, 8);
    std::vector<char> pre(sizeof kUdrPrelude + 3 * 8192 + 256);
    int w = snprintf(pre.data(), pre.size(), kUdrPrelude, c_type(red->d.input), f32 ? "float" : "double",
                     red->d.kind == PK_REDUCER_ARG ? 1 : 0,
                     (int)(16 / pk__dtypes[red->d.input].size), idbits, e[0], e[1], e[2]);
    if (w < 0 || (size_t)w >= pre.size())
        return pk__fail(ctx, PK_ERR_INTERNAL, "pk_reducer_create: source generation failed");
    src.assign(pre.data());
    src += kUdrKernels;
    return PK_OK;
}

/* The cubin for the context's device: memory cache, disk cache, NVRTC.
 * `info` (pk_reducer_get_info) records the build at create only: a later
 * build for another device, maybe on another thread, leaves it alone. */
pk_status build(pk_ctx *ctx, Udr *u, pk_reducer_info *info)
{
    pk_reducer_info scratch = {};
    if (!info) info = &scratch;
    State *s = state(ctx);
    auto t0 = std::chrono::steady_clock::now();
    const Driver &d = driver();
    if (!d.ok)
        return pk__fail(ctx, PK_ERR_UNSUPPORTED,
                        "pk_reducer: the CUDA driver's module API is not available");
    char arch[16], archopt[48];
    snprintf(arch, sizeof arch, "sm_%d%d", s->cc_major, s->cc_minor);
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
    const char *opts[] = {archopt, "--fmad=false", "--std=c++17", "-default-device"};
    const int nopts = 4;
    int nv = pk__nvrtc_version_fast();
    if (!nv) {
        void *none = nullptr;
        size_t n0 = 0;
        return pk__nvrtc_compile(ctx, "", "pk_udr.cu", opts, 0, &none, &n0); /* the message */
    }
    pk__hash h = pk__hash_init();
    pk__hash_add(&h, u->src.data(), u->src.size());
    for (int j = 0; j < nopts; j++) pk__hash_add(&h, opts[j], strlen(opts[j]));
    pk__hash_add(&h, &nv, sizeof nv);
    char key[33];
    pk__hash_hex(&h, key);

    std::vector<char> cubin;
    info->cache_rejected = 0;
    info->cache_written = 0;
    if (memory_lookup(key, cubin)) {
        info->origin = PK_REDUCER_MEMORY_CACHE;
    } else {
        void *p = nullptr;
        size_t n = 0;
        int st = pk__kcache_load(key, &p, &n);
        if (st == PK__KCACHE_HIT) {
            info->origin = PK_REDUCER_DISK_CACHE;
        } else {
            info->cache_rejected = st == PK__KCACHE_CORRUPT;
            pk_status c = pk__nvrtc_compile(ctx, u->src.c_str(), "pk_udr.cu", opts, nopts, &p, &n);
            if (c) return c;
            info->origin = PK_REDUCER_COMPILED;
            info->cache_written = pk__kcache_store(key, p, n) == 0;
        }
        try {
            cubin.assign((char *)p, (char *)p + n);
        } catch (...) {
            free(p);
            throw;
        }
        free(p);
        memory_store(key, cubin.data(), cubin.size());
    }
    Loaded &L = u->dev[ctx->device];
    /* Loading a module allocates device memory: a failure to inject. */
    CUresult r = pk__fault_hit_device() ? CUDA_ERROR_OUT_OF_MEMORY : d.load(&L.mod, cubin.data());
    if (r != CUDA_SUCCESS) {
        L.mod = nullptr;
        return fail_cu(ctx, r, "cuModuleLoadData");
    }
    if ((r = d.get(&L.slices, L.mod, "pk_udr_slices")) ||
        (r = d.get(&L.lines, L.mod, "pk_udr_lines")) ||
        (r = d.get(&L.fold, L.mod, "pk_udr_fold"))) {
        d.unload(L.mod);
        L.mod = nullptr;
        return fail_cu(ctx, r, "cuModuleGetFunction");
    }
    if (d.occupancy(&L.blocks_per_sm, L.slices, kThreads, 0) || L.blocks_per_sm < 1)
        L.blocks_per_sm = 1;
    snprintf(info->arch, sizeof info->arch, "%s", arch);
    info->nvrtc_version = nv;
    info->build_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return PK_OK;
}

pk_status ensure_loaded(pk_ctx *ctx, const pk_reducer *red, Loaded **L,
                        pk_reducer_info *info = nullptr)
{
    /* the driver API works on the thread's current context: make it the
     * device's primary context (what the runtime uses) on this thread */
    PK_CU(ctx, cudaSetDevice(ctx->device));
    Udr *u = static_cast<Udr *>(red->impl);
    if (ctx->device >= kMaxDevices)
        return pk__fail(ctx, PK_ERR_UNSUPPORTED, "pk_reducer: device %d: at most %d devices",
                        ctx->device, kMaxDevices);
    *L = &u->dev[ctx->device];
    if (u->ready[ctx->device].load(std::memory_order_acquire)) return PK_OK;
    std::lock_guard<std::mutex> lock(u->mu);
    if ((*L)->mod) return PK_OK; /* built by another thread meanwhile */
    pk_status s = build(ctx, u, info);
    if (!s) u->ready[ctx->device].store(true, std::memory_order_release);
    return s;
}

pk_status launch(pk_ctx *ctx, CUfunction f, int grid, void **args)
{
    CUresult r = driver().launch(f, (unsigned)grid, 1, 1, kThreads, 1, 1, 0,
                                 (CUstream)state(ctx)->stream, args, nullptr);
    return r ? fail_cu(ctx, r, "cuLaunchKernel") : PK_OK;
}

/* x on the device: host input is staged first (stage_input). */
pk_status device_input(pk_ctx *ctx, const void *x, size_t bytes, const void **dx)
{
    Where w;
    pk_status s = where(ctx, x, "x", &w);
    return s ? s : stage_input(ctx, x, w, bytes, dx);
}

/* The slices kernel over rows x cols (the whole array: rows = 1, its
 * indices from ibase). */
pk_status run_slices(pk_ctx *ctx, const pk_reducer *red, Loaded *L, const void *x,
                     int64_t rows, int64_t cols, int64_t ld, int64_t ibase, void *dout)
{
    State *st = state(ctx);
    /* chunk: 32 lanes x 4 vectors (udr_source.h); a slice holds 8 to
     * kMaxChunks chunks, a multiple of 8 */
    const int64_t chunk = 32 * 4 * (16 / (int64_t)pk__dtypes[red->d.input].size);
    const int64_t gran = 8 * chunk;
    int64_t target = kTargetSlices;
    if ((cols + target - 1) / target > kMaxChunks * chunk) target = kLongSlices;
    int64_t want = (target + rows - 1) / rows;
    int64_t slice = (cols + want - 1) / want;
    slice = (slice + gran - 1) / gran * gran;
    if (slice < gran) slice = gran;
    if (slice > kMaxChunks * chunk) slice = kMaxChunks * chunk;
    long long slices = (cols + slice - 1) / slice;
    if (slices < 1) slices = 1;
    pk_status s;
    if (slices > 1 && (s = ensure_partials(ctx, size_t(rows * slices) * 16))) return s;
    /* Counters only when rows have several slices: 10^8 short rows would
     * otherwise hold 400 MB of them for the context's life. */
    if (slices > 1 && (s = ensure_counters(ctx, size_t(rows)))) return s;
    long long r = rows, c = cols, l = ld, ib = ibase, sl = slice;
    void *part = st->part;
    unsigned *cnt = st->cnt;
    void *args[] = {(void *)&x, &r, &c, &l, &ib, &sl, &slices, &part, &cnt, &dout};
    int64_t items = rows * slices, res = (int64_t)L->blocks_per_sm * st->sms;
    return launch(ctx, L->slices, (int)(items < res ? items : res), args);
}

/* `lines` lines of `along` elements (element k of line j at x[k * sa +
 * j * sl]) into out[j]: a thread per (segment, line), then, with several
 * segments, their partials folded per line in levels of kFoldGroup. Short
 * lines of few outputs still give every SM threads: a thread per output
 * alone left a 10^7 x 2 matrix's axis 0 to two threads (0.6 s on an H200).
 * The plan depends on the shape alone. */
pk_status run_lines(pk_ctx *ctx, Loaded *L, const void *x, int64_t along, int64_t lines,
                    int64_t sa, int64_t sl, void *dout)
{
    int64_t segs = (kLineThreads + lines - 1) / lines;
    const int64_t by_len = (along + kMinSeg - 1) / kMinSeg;
    if (segs > by_len) segs = by_len;
    if (segs < 1) segs = 1;
    long long seg = (along + segs - 1) / segs;
    if (seg < 1) seg = 1;
    long long n = (along + seg - 1) / seg;
    if (n < 1) n = 1;
    /* partials: the segments' [n x lines], then each fold level's output,
     * alternating between the two halves */
    const int64_t n2 = (n + kFoldGroup - 1) / kFoldGroup;
    pk_status s;
    if (n > 1 && (s = ensure_partials(ctx, size_t((n + n2) * lines) * 16))) return s;
    State *st = state(ctx);
    Acc16 *part = static_cast<Acc16 *>(st->part), *next = part + n * lines;
    long long a = along, j = lines, ssa = sa, ssl = sl;
    void *args[] = {(void *)&x, &a, &j, &ssa, &ssl, &seg, &n, &part, &dout};
    const int64_t cap = (int64_t)L->blocks_per_sm * st->sms * 8;
    int64_t blocks = (n * lines + kThreads - 1) / kThreads;
    if ((s = launch(ctx, L->lines, (int)(blocks < cap ? blocks : cap), args))) return s;
    while (n > 1) {
        long long group = kFoldGroup, groups = (n + group - 1) / group;
        void *fargs[] = {&part, &j, &n, &group, &next, &dout};
        blocks = (groups * lines + 7) / 8;
        if ((s = launch(ctx, L->fold, (int)(blocks < cap ? blocks : cap), fargs))) return s;
        std::swap(part, next);
        n = groups;
    }
    return PK_OK;
}

} // namespace

pk_status reducer_init(pk_ctx *ctx, pk_reducer *red)
{
    if (red->has_fn)
        return pk__fail(ctx, PK_ERR_UNSUPPORTED,
                        "pk_reducer_create: C function callbacks (map_fn, combine_fn, "
                        "final_fn) run on the CPU backend only; use expressions on CUDA");
    Udr *u = pk__fault_hit() ? nullptr : new (std::nothrow) Udr;
    if (!u) return pk__fail(ctx, PK_ERR_NOMEM, "pk_reducer_create: no memory");
    red->impl = u;
    try {
        pk_status s = generate(ctx, red, u->src);
        if (s) return s;
        DeviceGuard g(ctx);
        if (g.status()) return g.status();
        Loaded *L = nullptr;
        return ensure_loaded(ctx, red, &L, &red->info);
    } catch (const std::bad_alloc &) {
        return no_host_memory(ctx, "pk_reducer_create");
    }
}

void reducer_fini(pk_reducer *red)
{
    Udr *u = static_cast<Udr *>(red->impl);
    for (auto &L : u->dev)
        if (L.mod && driver().unload) driver().unload(L.mod);
    delete u;
    red->impl = nullptr;
}

namespace {
pk_status reduce_whole(pk_ctx *ctx, const pk_reducer *red, const void *x, int64_t n,
                       int64_t ibase, void *out)
{
    Loaded *L = nullptr;
    pk_status s = ensure_loaded(ctx, red, &L);
    const size_t osize = red->d.kind == PK_REDUCER_ARG ? 8 : pk__dtypes[red->d.acc].size;
    Where wo;
    const void *dx;
    if (s || (s = where(ctx, out, "out", &wo)) ||
        (s = device_input(ctx, x, size_t(n) * pk__dtypes[red->d.input].size, &dx)))
        return s;
    State *st = state(ctx);
    void *dout = wo == kDevice ? out : st->res_dev;
    if (n == 0) { /* final(identity): one line of nothing */
        s = run_lines(ctx, L, dx, 0, 1, 1, 1, dout);
    } else {
        s = run_slices(ctx, red, L, dx, 1, n, n, ibase, dout);
    }
    if (s || wo == kDevice) return s;
    PK_CU(ctx, cudaStreamSynchronize(st->stream));
    memcpy(out, st->res_host, osize);
    return PK_OK;
}

pk_status reduce_along(pk_ctx *ctx, const pk_reducer *red, const void *x, int64_t rows,
                       int64_t cols, int64_t ld, int axis, void *out)
{
    Loaded *L = nullptr;
    pk_status s = ensure_loaded(ctx, red, &L);
    const size_t isize = pk__dtypes[red->d.input].size;
    const size_t osize = red->d.kind == PK_REDUCER_ARG ? 8 : pk__dtypes[red->d.acc].size;
    const int64_t nout = axis == 0 ? cols : rows;
    /* Nothing is read from empty rows or an empty matrix (x may be NULL). */
    const size_t xbytes = rows && cols ? size_t((rows - 1) * ld + cols) * isize : 0;
    Where wo;
    const void *dx;
    if (s || (s = where(ctx, out, "out", &wo)) || (s = device_input(ctx, x, xbytes, &dx)))
        return s;
    State *st = state(ctx);
    void *dout = out;
    if (wo != kDevice) {
        if ((s = ensure_buffer(ctx, &st->axis_out, &st->axis_out_bytes, size_t(nout) * osize)))
            return s;
        dout = st->axis_out;
    }
    if (axis == 1 && cols >= kShortRow)
        s = run_slices(ctx, red, L, dx, rows, cols, ld, 0, dout);
    else if (axis == 1) /* short rows (or none): a row is a line of stride 1 */
        s = run_lines(ctx, L, dx, cols, rows, 1, ld, dout);
    else
        s = run_lines(ctx, L, dx, rows, cols, ld, 1, dout);
    if (s || wo == kDevice) return s;
    PK_CU(ctx, cudaMemcpyAsync(out, dout, size_t(nout) * osize, cudaMemcpyDeviceToHost,
                               st->stream));
    PK_CU(ctx, cudaStreamSynchronize(st->stream));
    return PK_OK;
}
} // namespace

pk_status reducer_reduce(pk_ctx *ctx, const pk_reducer *red, const void *x, int64_t n,
                         int64_t ibase, void *out)
{
    DeviceGuard g(ctx);
    if (g.status()) return g.status();
    pk_status s;
    try {
        s = reduce_whole(ctx, red, x, n, ibase, out);
    } catch (const std::bad_alloc &) {
        s = no_host_memory(ctx, "pk_reducer_reduce");
    }
    trim_staged_input(state(ctx));
    return s;
}

pk_status reducer_reduce_axis(pk_ctx *ctx, const pk_reducer *red, const void *x,
                              int64_t rows, int64_t cols, int64_t ld, int axis, void *out)
{
    DeviceGuard g(ctx);
    if (g.status()) return g.status();
    pk_status s;
    try {
        s = reduce_along(ctx, red, x, rows, cols, ld, axis, out);
    } catch (const std::bad_alloc &) {
        s = no_host_memory(ctx, "pk_reducer_reduce_axis");
    }
    trim_staged_input(state(ctx));
    return s;
}

} // namespace pk_cuda
