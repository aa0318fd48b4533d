/* `pk bench`: the sets of cases of the kernels (bench_kernels.h): headline,
 * --all, --quick; --sizes lists, and the memory a case needs. */
#include "bench.h"
#include "custom.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- Building the list ------------------------------------------------ */

static bench_case *add_case(bench_plan *p, int kernel, pk_dtype t, int64_t rows,
                            int64_t cols, int axis, int on_device)
{
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 64;
        bench_case *c = realloc(p->cases, (size_t)cap * sizeof *c);
        if (!c) {
            p->oom = 1;
            return &p->spare;
        }
        p->cases = c, p->cap = cap;
    }
    bench_case *c = &p->cases[p->n++];
    memset(c, 0, sizeof *c);
    const bench_kernel *kn = &bench_kernels[kernel];
    c->c.id = kn->id;
    c->c.kernel = kn->name;
    c->c.dtype = t;
    c->c.out_on_device = on_device;
    c->op = kn->family == BENCH_F_REDUCE ? (pk_op)kernel : PK_SUM;
    switch (kn->family) {
    case BENCH_F_AXIS:
        c->c.rows = rows, c->c.cols = cols, c->c.axis = axis, c->c.n = rows * cols;
        break;
    case BENCH_F_GEMM:
    case BENCH_F_BITS:
    case BENCH_F_TOPK: c->c.rows = rows, c->c.cols = cols, c->c.n = cols; break;
    default: c->c.n = rows;
    }
    return c;
}

/* Compute kernels' shapes: m, n, k (k in bits for bgemm); hamming_topk:
 * queries, database codes, bits, topk. 0 ends a list. */
typedef struct shape4 {
    int64_t a, b, c, d;
} shape4;
static const shape4 cpu_gemm[] = {{256, 256, 256, 0}, {512, 512, 512, 0},
                                  {1024, 1024, 1024, 0}, {2048, 2048, 2048, 0},
                                  {2048, 2048, 256, 0}, {0, 0, 0, 0}};
static const shape4 cpu_gemm_quick[] = {{256, 256, 256, 0}, {512, 512, 512, 0}, {0, 0, 0, 0}};
static const shape4 gpu_gemm[] = {{512, 512, 512, 0}, {1024, 1024, 1024, 0},
                                  {2048, 2048, 2048, 0}, {4096, 4096, 4096, 0},
                                  {8192, 8192, 8192, 0}, {0, 0, 0, 0}};
static const shape4 gpu_gemm_quick[] = {{1024, 1024, 1024, 0}, {4096, 4096, 4096, 0},
                                        {0, 0, 0, 0}};
static const shape4 gpu_gemm_tc[] = {{4096, 4096, 4096, 0}, {8192, 8192, 8192, 0},
                                     {0, 0, 0, 0}};
static const shape4 gpu_gemm_tc_quick[] = {{4096, 4096, 4096, 0}, {0, 0, 0, 0}};
static const shape4 cpu_bgemm[] = {{1024, 1024, 1024, 0}, {2048, 2048, 2048, 0},
                                   {0, 0, 0, 0}};
static const shape4 cpu_bgemm_quick[] = {{512, 512, 512, 0}, {0, 0, 0, 0}};
static const shape4 gpu_bgemm[] = {{4096, 4096, 4096, 0}, {8192, 8192, 8192, 0},
                                   {0, 0, 0, 0}};
static const shape4 gpu_bgemm_quick[] = {{4096, 4096, 4096, 0}, {0, 0, 0, 0}};
static const shape4 cpu_topk[] = {{1000, 100000, 256, 10}, {1000, 100000, 256, 1000},
                                  {0, 0, 0, 0}};
static const shape4 cpu_topk_quick[] = {{100, 10000, 256, 10}, {0, 0, 0, 0}};
static const shape4 gpu_topk[] = {{10000, 1000000, 256, 10}, {10000, 1000000, 256, 1000},
                                  {0, 0, 0, 0}};
static const shape4 gpu_topk_quick[] = {{1000, 1000000, 256, 10}, {0, 0, 0, 0}};

/* The shapes of compute kernel k on a backend; NULL: not run there. */
static const shape4 *compute_shapes(int k, int gpu, int quick)
{
    if (!gpu && !bench_kernels[k].cpu) return NULL;
    switch (k) {
    case PK_BENCH_GEMM:
        return gpu ? (quick ? gpu_gemm_quick : gpu_gemm) : (quick ? cpu_gemm_quick : cpu_gemm);
    case PK_BENCH_GEMM_TF32:
    case PK_BENCH_GEMM_FP32_ACCURATE: return quick ? gpu_gemm_tc_quick : gpu_gemm_tc;
    case PK_BENCH_BGEMM:
        return gpu ? (quick ? gpu_bgemm_quick : gpu_bgemm)
                   : (quick ? cpu_bgemm_quick : cpu_bgemm);
    case PK_BENCH_HAMMING_TOPK:
        return gpu ? (quick ? gpu_topk_quick : gpu_topk) : (quick ? cpu_topk_quick : cpu_topk);
    }
    return NULL;
}

static void add_compute(bench_plan *p, int k, unsigned dtypes, const shape4 *sh)
{
    for (int t = 0; sh && t < PK_DTYPE_COUNT; t++) {
        if (!bench_kernel_takes_dtype(k, t, dtypes)) continue;
        for (int i = 0; sh[i].a; i++) {
            bench_case *c = add_case(p, k, (pk_dtype)t, sh[i].a, sh[i].b, 0, 0);
            c->c.k = sh[i].c, c->c.topk = sh[i].d;
        }
    }
}

/* The sizes of each backend and mode. */
static const int64_t cpu_sizes[] = {1 << 12, 1 << 16, 1 << 20, 1 << 24, 1 << 26};
static const int64_t cpu_quick_sizes[] = {1 << 12, 1 << 16, 1 << 20};
static const int64_t cpu_extra_sizes[] = {1 << 20, 1 << 26}; /* f64, i32 */
static const int64_t gpu_sizes[] = {1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 28};
static const int64_t gpu_quick_sizes[] = {1 << 10, 1 << 20};
static const int64_t gpu_device_out_sizes[] = {1 << 10, 1 << 16};
static const int64_t cpu_shapes[][2] = {{8192, 8192}, {10000000, 2}, {2, 10000000}};
static const int64_t cpu_quick_shapes[][2] = {{1024, 1024}, {100000, 2}, {2, 100000}};
static const int64_t gpu_shapes[][2] = {{16384, 16384}, {10000000, 2}, {2, 10000000}};
static const int64_t gpu_quick_shapes[][2] = {{4096, 4096}, {1000000, 2}, {2, 1000000}};
static const int64_t cpu_custom_sizes[] = {1 << 20, 1 << 26};
static const int64_t gpu_custom_sizes[] = {1 << 20, 1 << 24, 1 << 28};
#define COUNT(a) (int)(sizeof(a) / sizeof *(a))

static void add_sizes(bench_plan *p, int k, pk_dtype t, const int64_t *sizes, int n)
{
    for (int i = 0; i < n; i++) add_case(p, k, t, sizes[i], 0, 0, 0);
}

/* --all and --quick: every size of each wanted kernel. dtypes: the --dtype
 * set, 0 for the default mix (f32, plus f64 and i32 at two sizes). */
static void plan_full(bench_plan *p, const int *want, unsigned dtypes, int gpu, int quick)
{
    const int64_t *sizes = gpu ? (quick ? gpu_quick_sizes : gpu_sizes)
                               : (quick ? cpu_quick_sizes : cpu_sizes);
    int nsizes = gpu ? (quick ? COUNT(gpu_quick_sizes) : COUNT(gpu_sizes))
                     : (quick ? COUNT(cpu_quick_sizes) : COUNT(cpu_sizes));
    const int64_t(*shapes)[2] = gpu ? (quick ? gpu_quick_shapes : gpu_shapes)
                                    : (quick ? cpu_quick_shapes : cpu_shapes);
    for (int k = 0; k < PK_BENCH_NKERNELS; k++) {
        if (!want[k]) continue;
        bench_family fam = bench_kernels[k].family;
        if (fam == BENCH_F_CUSTOM) { /* user-defined reductions: f32, each reducer */
            if (!bench_kernel_takes_dtype(k, PK_F32, dtypes)) continue;
            const int64_t *cs = gpu ? gpu_custom_sizes : cpu_custom_sizes;
            int ncs = quick ? 1 : gpu ? COUNT(gpu_custom_sizes) : COUNT(cpu_custom_sizes);
            for (int u = 0; u < PK_BENCH_NUDR; u++)
                for (int i = 0; i < ncs; i++)
                    add_case(p, k, PK_F32, quick ? (gpu ? 1 << 24 : 1 << 20) : cs[i], 0, 0,
                             0)->c.k = u;
            /* the sum of squares along both axes of reduce_axis's shapes */
            for (int s = 0; s < 3; s++)
                for (int axis = 0; axis < 2; axis++) {
                    bench_case *c = add_case(p, k, PK_F32, shapes[s][0] * shapes[s][1], 0, 0, 0);
                    c->c.rows = shapes[s][0], c->c.cols = shapes[s][1], c->c.axis = axis;
                }
            continue;
        }
        if (bench_is_compute(k)) {
            add_compute(p, k, dtypes, compute_shapes(k, gpu, quick));
            continue;
        }
        for (int t = 0; t < PK_DTYPE_COUNT; t++) {
            if (!bench_kernel_takes_dtype(k, t, dtypes)) continue;
            if (fam == BENCH_F_AXIS) {
                for (int s = 0; s < 3; s++)
                    for (int axis = 0; axis < 2; axis++)
                        add_case(p, k, (pk_dtype)t, shapes[s][0], shapes[s][1], axis, 0);
                continue;
            }
            add_sizes(p, k, (pk_dtype)t, sizes, nsizes);
            if (gpu && k == PK_BENCH_SUM)
                for (int i = 0; i < (quick ? 1 : COUNT(gpu_device_out_sizes)); i++)
                    add_case(p, k, (pk_dtype)t, gpu_device_out_sizes[i], 0, 0, 1);
        }
        /* The default mix: f64 (and i32 for reductions) at two sizes. */
        if (dtypes || gpu || quick || fam == BENCH_F_AXIS) continue;
        add_sizes(p, k, PK_F64, cpu_extra_sizes, COUNT(cpu_extra_sizes));
        if (fam == BENCH_F_REDUCE) add_sizes(p, k, PK_I32, cpu_extra_sizes, COUNT(cpu_extra_sizes));
    }
}

/* The headline set: one case per kernel at the size that shows its ceiling
 * (memory-bound kernels well past the caches, GEMM at a size where it
 * reaches its peak), each with its peers; reduce_axis on both axes, custom
 * with its first reducer (the sum of squares, against pk_dot). Measured on
 * a 2-core AMD EPYC VM: 41 s idle, 1 min 41 s beside a CUDA build
 * (docs/CLI.md). */
static const shape4 headline[PK_BENCH_NKERNELS][2] = {
    /* CPU, CUDA: n; rows, cols; m, n, k; queries, codes, bits, topk (none:
     * not run there) */
    [PK_BENCH_SUM] = {{1 << 26, 0, 0, 0}, {1 << 28, 0, 0, 0}},
    [PK_BENCH_PROD] = {{1 << 26, 0, 0, 0}, {1 << 28, 0, 0, 0}},
    [PK_BENCH_MIN] = {{1 << 26, 0, 0, 0}, {1 << 28, 0, 0, 0}},
    [PK_BENCH_MAX] = {{1 << 26, 0, 0, 0}, {1 << 28, 0, 0, 0}},
    [PK_BENCH_ARGMIN] = {{1 << 26, 0, 0, 0}, {1 << 28, 0, 0, 0}},
    [PK_BENCH_ARGMAX] = {{1 << 26, 0, 0, 0}, {1 << 28, 0, 0, 0}},
    [PK_BENCH_DOT] = {{1 << 26, 0, 0, 0}, {1 << 28, 0, 0, 0}},
    [PK_BENCH_AXPY] = {{1 << 26, 0, 0, 0}, {1 << 28, 0, 0, 0}},
    [PK_BENCH_REDUCE_AXIS] = {{8192, 8192, 0, 0}, {16384, 16384, 0, 0}},
    [PK_BENCH_GEMM] = {{2048, 2048, 2048, 0}, {8192, 8192, 8192, 0}},
    [PK_BENCH_GEMM_TF32] = {{0, 0, 0, 0}, {8192, 8192, 8192, 0}},
    [PK_BENCH_GEMM_FP32_ACCURATE] = {{0, 0, 0, 0}, {8192, 8192, 8192, 0}},
    [PK_BENCH_BGEMM] = {{1024, 1024, 1024, 0}, {8192, 8192, 8192, 0}},
    [PK_BENCH_HAMMING_TOPK] = {{100, 100000, 256, 10}, {10000, 1000000, 256, 10}},
    [PK_BENCH_CUSTOM] = {{1 << 26, 0, 0, 0}, {1 << 28, 0, 0, 0}},
};

static void plan_headline(bench_plan *p, int gpu, unsigned dtypes)
{
    for (int k = 0; k < PK_BENCH_NKERNELS; k++) {
        const shape4 *h = &headline[k][gpu != 0];
        for (int t = 0; t < PK_DTYPE_COUNT && h->a; t++) {
            if (!bench_kernel_takes_dtype(k, t, dtypes)) continue;
            if (bench_kernels[k].family == BENCH_F_AXIS) {
                for (int axis = 0; axis < 2; axis++)
                    add_case(p, k, (pk_dtype)t, h->a, h->b, axis, 0);
                continue;
            }
            bench_case *c = add_case(p, k, (pk_dtype)t, h->a, h->b, 0, 0);
            if (bench_is_compute(k)) c->c.k = h->c, c->c.topk = h->d;
        }
    }
}

/* --sizes: n of the 1-D kernels, m = n = k of gemm and bgemm, each reducer
 * of custom; f32 unless --dtype says. */
static void plan_sizes(bench_plan *p, const int *want, unsigned dtypes, int gpu,
                       const int64_t *sizes, int nsizes)
{
    for (int k = 0; k < PK_BENCH_NKERNELS; k++) {
        if (!want[k] || (!gpu && !bench_kernels[k].cpu)) continue;
        bench_family fam = bench_kernels[k].family;
        for (int t = 0; t < PK_DTYPE_COUNT; t++)
            for (int i = 0; i < nsizes && bench_kernel_takes_dtype(k, t, dtypes); i++) {
                int64_t s = sizes[i];
                bench_case *c = add_case(p, k, (pk_dtype)t, s, s, 0, 0);
                if (fam == BENCH_F_GEMM || fam == BENCH_F_BITS) c->c.k = s;
                for (int u = 1; fam == BENCH_F_CUSTOM && u < PK_BENCH_NUDR; u++)
                    add_case(p, k, (pk_dtype)t, s, 0, 0, 0)->c.k = u;
            }
    }
}

int bench_plan_make(bench_plan *p, const bench_plan_opts *o)
{
    int want[PK_BENCH_NKERNELS], any = 0;
    for (int k = 0; k < PK_BENCH_NKERNELS; k++) any |= want[k] = o->want ? o->want[k] : 0;
    if (o->sizes) {
        /* no kernel named: the 1-D bandwidth kernels */
        for (int k = 0; k < PK_BENCH_NKERNELS && !any; k++)
            want[k] = bench_kernels[k].family == BENCH_F_REDUCE ||
                      bench_kernels[k].family == BENCH_F_BLAS1;
        plan_sizes(p, want, o->dtypes, o->gpu, o->sizes, o->nsizes);
    } else if (o->set == BENCH_SET_HEADLINE && !any) {
        plan_headline(p, o->gpu, o->dtypes);
    } else {
        for (int k = 0; k < PK_BENCH_NKERNELS && !any; k++) want[k] = 1;
        plan_full(p, want, o->dtypes, o->gpu, o->set == BENCH_SET_QUICK);
    }
    return p->oom ? -1 : 0;
}

/* ---- --sizes ---------------------------------------------------------- */

#define MAX_SIZE ((int64_t)1 << 40)
#define MAX_SIZES 256

/* A whole value: 1000, 2^20, 1e6. Returns the character after it. Any
 * value past 2^40 (2^70, 1e30, 20 digits) reads as MAX_SIZE + 1, for the
 * caller's range check, never as an overflowed number. */
static const char *parse_value(const char *s, int64_t *v)
{
    char *end;
    if (*s < '0' || *s > '9') return NULL;
    errno = 0;
    long long a = strtoll(s, &end, 10);
    if (errno == ERANGE || a > MAX_SIZE) a = MAX_SIZE + 1;
    if (*end == '^' || *end == 'e' || *end == 'E') {
        int pow2 = *end == '^';
        const char *e = end + 1;
        if (*e < '0' || *e > '9') return NULL;
        errno = 0;
        long long b = strtoll(e, &end, 10);
        if (errno == ERANGE) b = LLONG_MAX;
        int64_t base = pow2 ? a : 10, r = pow2 ? 1 : a;
        /* stops once past 2^40: b can be huge */
        for (long long i = 0; i < b && r > 0 && r <= MAX_SIZE; i++) {
            if (base <= 1) { /* 0^b = 0, 1^b = 1 */
                r = base == 0 ? 0 : r;
                break;
            }
            r = r > MAX_SIZE / base ? MAX_SIZE + 1 : r * base;
        }
        a = r;
    }
    *v = a;
    return end;
}

static int push(int64_t **out, int *n, int64_t v)
{
    for (int i = 0; i < *n; i++)
        if ((*out)[i] == v) return 0; /* a repeat adds nothing */
    if (*n == MAX_SIZES) return -1;
    (*out)[(*n)++] = v;
    return 0;
}

int bench_parse_sizes(const char *s, int64_t **out, int *n, char *why, size_t len)
{
    *n = 0;
    *out = malloc(MAX_SIZES * sizeof **out);
    if (!*out) return snprintf(why, len, "out of memory"), -1;
    for (const char *item = s;;) {
        size_t ilen = strcspn(item, ",");
        int64_t a, b = 0, step = 2;
        char kind = 'x';
        int range = 0;
        const char *e = parse_value(item, &a);
        if (e && *e == ':') {
            range = 1;
            e = parse_value(e + 1, &b);
            if (e && *e == ':') {
                kind = e[1];
                e = kind == 'x' || kind == '*' || kind == '+' ? parse_value(e + 2, &step) : NULL;
            }
        }
        if (!e || (size_t)(e - item) != ilen) {
            snprintf(why, len, "'%.*s' is not a size (1000, 2^20, 1e6) or a range "
                     "(2^20:2^28:x4, 1000:5000:+1000)", (int)ilen, item);
            return -1;
        }
        if (!range) b = a;
        if (a < 1 || b > MAX_SIZE || b < a) {
            snprintf(why, len, "'%.*s': sizes go from 1 to 2^40, ranges upwards", (int)ilen,
                     item);
            return -1;
        }
        if ((kind != '+' && step < 2) || step < 1 || step > MAX_SIZE) {
            snprintf(why, len, "'%.*s': the step must grow the size (x2 or more, +1 or more) "
                     "and stay within 2^40", (int)ilen, item);
            return -1;
        }
        for (int64_t v = a; v <= b; v = kind == '+' ? v + step : v * step) {
            if (push(out, n, v) != 0) {
                snprintf(why, len, "more than %d sizes", MAX_SIZES);
                return -1;
            }
            if (v > MAX_SIZE / step) break; /* the next one is past b */
        }
        if (!item[ilen]) return 0;
        item += ilen + 1;
    }
}

/* ---- Memory ------------------------------------------------------------ */

double bench_case_bytes(const bench_case *bc)
{
    const pk_bench_case *c = &bc->c;
    double sz = (double)pk_dtype_size(c->dtype), m = (double)c->rows, n = (double)c->cols,
           k = (double)c->k;
    switch (bench_kernel_of(c)->family) {
    case BENCH_F_GEMM: return sz * (m * k + k * n + 2 * m * n); /* A, B, pk's C, the peer's */
    case BENCH_F_BITS: /* packed operands, the +-1.0f copies and both C */
        return (m + n) * (k / 8 + 4 * k) + 8 * m * n;
    case BENCH_F_TOPK: return (m + n) * k / 8 + 4 * m * n; /* the peer's distance matrix */
    case BENCH_F_BLAS1: return 3 * sz * (double)c->n; /* x, y, the reference */
    default: return sz * (double)c->n * (bc->op == PK_PROD ? 2 : 1);
    }
}
