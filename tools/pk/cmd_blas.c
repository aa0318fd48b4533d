/* `pk dot`, `pk axpy` and `pk gemm` on .npy files. */
#include "files.h"
#include "gemm_check.h"

#include <math.h>
#include <string.h>

static const char dot_usage[] =
    "usage: pk dot X.npy Y.npy [-o OUT.npy] [--backend cpu|cuda|auto] [--json]\n"
    "\n"
    "The dot product sum_i x[i]*y[i] of two 1-D arrays of one dtype (f32 or\n"
    "f64), compensated and deterministic as pk_dot. The result is printed in\n"
    "the summary line, and written to OUT.npy (a 0-d array) with -o.\n"
    "\n"
    "options:\n"
    "  -o FILE        also write the result to FILE\n"
    "  --backend B    cpu, cuda or auto (default: auto: PK_BACKEND when set,\n"
    "                 else CUDA when a device exists)\n"
    "  --json         print one JSON object instead of the summary line\n"
    "  -h, --help     this text\n"
    "\n"
    "time: the kernel call; GB/s = the bytes of x and y / time.\n";

static const char axpy_usage[] =
    "usage: pk axpy [--alpha A] X.npy Y.npy -o OUT.npy [--backend B] [--json]\n"
    "\n"
    "OUT = alpha*X + Y for two arrays of one dtype (f32 or f64) and one shape\n"
    "(any number of dimensions), as pk_axpy: each element is one rounding of\n"
    "the product and one of the sum (no fused multiply-add).\n"
    "\n"
    "options:\n"
    "  --alpha A      the scale of X (default 1; rounded to f32 for f32 data)\n"
    "  -o FILE        the output (required; it may name Y.npy: the file is\n"
    "                 replaced only when the result is complete)\n"
    "  --backend B    cpu, cuda or auto (default: auto)\n"
    "  --json         print one JSON object instead of the summary line\n"
    "  -h, --help     this text\n"
    "\n"
    "time: the kernel call; GB/s = 3 x the bytes of X (read x, read y, write\n"
    "the result) / time.\n";

static const char gemm_usage[] =
    "usage: pk gemm A.npy B.npy -o C.npy [--mode fp32|tf32|fp32_accurate]\n"
    "               [--trans-a] [--trans-b] [--alpha A] [--beta B --c C0.npy]\n"
    "               [--check] [--backend B] [--json]\n"
    "\n"
    "C = alpha*op(A)*op(B) + beta*C0 for 2-D arrays of one dtype (f32 or f64),\n"
    "as pk_gemm: op(A) is m x k, op(B) is k x n, C is m x n.\n"
    "\n"
    "options:\n"
    "  --mode M       fp32 (IEEE arithmetic in the dtype, the default), tf32\n"
    "                 (f32 on CUDA tensor cores, inputs rounded to TF32),\n"
    "                 fp32_accurate (f32; split-TF32 on the GPU, FP32 on the\n"
    "                 CPU); a mode the backend cannot run fails (status 1)\n"
    "  --trans-a      op(A) = A^T (A is k x m); --trans-b likewise for B\n"
    "  --alpha A      default 1\n"
    "  --c FILE       C0 (m x n); --beta B scales it (default 1 with --c; a\n"
    "                 nonzero --beta needs --c)\n"
    "  --check        compare C with a reference computed on the CPU in higher\n"
    "                 precision (f32: double, f64: long double) and print the\n"
    "                 largest error relative to |alpha| |op(A)||op(B)| + |beta||C0|\n"
    "                 per element; above the bound of the mode (2(k+2)u, u the\n"
    "                 accumulation's unit roundoff, plus 4 x 2^-10 for tf32),\n"
    "                 the check fails: status 1 and no output file. O(mnk) on\n"
    "                 the CPU: slow for large matrices\n"
    "  -o FILE        the output (required)\n"
    "  --backend B    cpu, cuda or auto (default: auto)\n"
    "  --json         print one JSON object instead of the summary line\n"
    "  -h, --help     this text\n"
    "\n"
    "time: the kernel call (CUDA: with host copies); GFLOP/s = 2mnk / time.\n";

static const int float_types[] = {PK_NPY_F32, PK_NPY_F64, -1};

/* Two inputs of one float dtype with ndim in [lo, hi]; 0 or 1. */
static int load_pair(fc_run *r, int lo, int hi, const pk_npy_header **ha, const void **a,
                     const pk_npy_header **hb, const void **b)
{
    const char *fa = r->cmd->files[0], *fb = r->cmd->files[1];
    if (!(*ha = fc_load(r, fa, a)) || fc_expect(r, fa, *ha, float_types, lo, hi) ||
        !(*hb = fc_load(r, fb, b)) || fc_expect(r, fb, *hb, float_types, lo, hi))
        return PK_EXIT_FAIL;
    if ((*ha)->type != (*hb)->type)
        return fc_file_error(r, fb, "dtype %s differs from %s's %s", pk_npy_type_name((*hb)->type),
                             fa, pk_npy_type_name((*ha)->type));
    return 0;
}

static int same_shape(const pk_npy_header *a, const pk_npy_header *b)
{
    if (a->ndim != b->ndim) return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}

static int shape_mismatch(const fc_run *r, const pk_npy_header *a, const pk_npy_header *b)
{
    char sa[64], sb[64];
    fc_fmt_shape(sa, sizeof sa, a);
    fc_fmt_shape(sb, sizeof sb, b);
    return fc_file_error(r, r->cmd->files[1], "shape %s differs from %s's %s", sb,
                         r->cmd->files[0], sa);
}

/* A double as the dtype t at dst. */
static void store(pk_dtype t, double v, void *dst)
{
    if (t == PK_F32) *(float *)dst = (float)v;
    else *(double *)dst = v;
}

int pk_cmd_dot(int argc, char **argv, pk_cli_mode mode)
{
    fc_cmd c = {.name = "dot", .usage = dot_usage, .min_files = 2, .max_files = 2};
    int rc = fc_parse(&c, argc, argv);
    if (rc) return rc == FC_HELP ? 0 : rc;
    if (mode == PK_CLI_CHECK) return 0; /* the command line is good */
    fc_run r;
    fc_init(&r, &c);
    const pk_npy_header *hx, *hy;
    const void *x, *y;
    if ((rc = load_pair(&r, 1, 1, &hx, &x, &hy, &y))) return fc_cleanup(&r, rc);
    if (!same_shape(hx, hy)) return fc_cleanup(&r, shape_mismatch(&r, hx, hy));
    if ((rc = fc_open_backend(&r))) return fc_cleanup(&r, rc);
    const pk_dtype t = (pk_dtype)hx->type;
    double result[1];
    void *out = result;
    if (c.out && (rc = fc_create(&r, c.out, hx->type, 0, NULL, &out))) return fc_cleanup(&r, rc);
    double t0 = fc_now();
    pk_status s = pk_dot(r.ctx, t, hx->count, x, y, out);
    fc_report rep = {.seconds = fc_now() - t0, .bytes = 2.0 * (double)hx->data_bytes};
    if (s != PK_OK) return fc_cleanup(&r, fc_kernel_error(&r, s));
    snprintf(rep.what, sizeof rep.what, "%s", "x.y");
    fc_fmt_value(rep.value, sizeof rep.value, hx->type, out, c.json);
    return fc_finish(&r, &rep, 0);
}

int pk_cmd_axpy(int argc, char **argv, pk_cli_mode mode)
{
    const char *alpha_s = NULL;
    const fc_opt opts[] = {{"--alpha", &alpha_s, NULL, FC_ARG}, {0}};
    fc_cmd c = {.name = "axpy", .usage = axpy_usage, .opts = opts, .min_files = 2, .max_files = 2,
                .updated_operand = 2};
    int rc = fc_parse(&c, argc, argv);
    if (rc) return rc == FC_HELP ? 0 : rc;
    double alpha = 1;
    if (alpha_s && (rc = fc_parse_double(&c, "--alpha", alpha_s, &alpha))) return rc;
    if (!c.out) return fc_usage(&c, "-o OUT.npy is required (the result alpha*X + Y)");
    if (mode == PK_CLI_CHECK) return 0; /* the command line is good */
    fc_run r;
    fc_init(&r, &c);
    const pk_npy_header *hx, *hy;
    const void *x, *y;
    if ((rc = load_pair(&r, 0, PK_NPY_MAX_DIMS, &hx, &x, &hy, &y))) return fc_cleanup(&r, rc);
    if (!same_shape(hx, hy)) return fc_cleanup(&r, shape_mismatch(&r, hx, hy));
    if ((rc = fc_open_backend(&r))) return fc_cleanup(&r, rc);
    const pk_dtype t = (pk_dtype)hx->type;
    void *out;
    if ((rc = fc_create(&r, c.out, hy->type, hy->ndim, hy->shape, &out))) return fc_cleanup(&r, rc);
    memcpy(out, y, (size_t)hy->data_bytes);
    double a[1];
    store(t, alpha, a);
    double t0 = fc_now();
    pk_status s = pk_axpy(r.ctx, t, hx->count, a, x, out);
    if (s == PK_OK) s = pk_ctx_sync(r.ctx);
    fc_report rep = {.seconds = fc_now() - t0, .bytes = 3.0 * (double)hx->data_bytes};
    if (s != PK_OK) return fc_cleanup(&r, fc_kernel_error(&r, s));
    char v[48];
    fc_fmt_value(v, sizeof v, hx->type, a, 0);
    snprintf(rep.what, sizeof rep.what, "alpha*x + y, alpha %s", v);
    fc_fmt_value(v, sizeof v, hx->type, a, 1);
    snprintf(rep.json, sizeof rep.json, ", \"alpha\": %s", v);
    return fc_finish(&r, &rep, 0);
}

/* ---- gemm ------------------------------------------------------------------ */

typedef struct gemm_opts {
    const char *mode, *alpha, *beta, *c;
    int ta, tb, check;
} gemm_opts;

/* Parse gemm's option values; 0 or 2. */
static int gemm_values(const fc_cmd *c, const gemm_opts *o, pk_gemm_mode *mode, double *alpha,
                       double *beta)
{
    int rc;
    *mode = PK_GEMM_FP32, *alpha = 1, *beta = o->c ? 1 : 0;
    if (o->mode) {
        int m = 0;
        while (m < PK_GEMM_MODE_COUNT && strcmp(o->mode, pk_gemm_mode_name((pk_gemm_mode)m)))
            m++;
        if (m == PK_GEMM_MODE_COUNT)
            return fc_usage(c, "--mode: expected fp32, tf32 or fp32_accurate, got '%s'", o->mode);
        *mode = (pk_gemm_mode)m;
    }
    if (o->alpha && (rc = fc_parse_double(c, "--alpha", o->alpha, alpha))) return rc;
    if (o->beta && (rc = fc_parse_double(c, "--beta", o->beta, beta))) return rc;
    if (*beta != 0 && !o->c) return fc_usage(c, "--beta needs --c C0.npy (the matrix beta scales)");
    if (!c->out) return fc_usage(c, "-o C.npy is required (the result)");
    return 0;
}

int pk_cmd_gemm(int argc, char **argv, pk_cli_mode cli_mode)
{
    gemm_opts o = {0};
    const fc_opt opts[] = {{"--mode", &o.mode, NULL, FC_ARG},  {"--alpha", &o.alpha, NULL, FC_ARG},
                           {"--beta", &o.beta, NULL, FC_ARG},  {"--c", &o.c, NULL, FC_IN_UPDATED},
                           {"--trans-a", NULL, &o.ta, FC_ARG}, {"--trans-b", NULL, &o.tb, FC_ARG},
                           {"--check", NULL, &o.check, FC_ARG}, {0}};
    fc_cmd c = {.name = "gemm", .usage = gemm_usage, .opts = opts, .min_files = 2, .max_files = 2};
    int rc = fc_parse(&c, argc, argv);
    if (rc) return rc == FC_HELP ? 0 : rc;
    pk_gemm_mode mode;
    double alpha, beta;
    if ((rc = gemm_values(&c, &o, &mode, &alpha, &beta))) return rc;
    if (cli_mode == PK_CLI_CHECK) return 0; /* the command line is good */
    fc_run r;
    fc_init(&r, &c);
    const pk_npy_header *ha, *hb, *hc = NULL;
    const void *A, *B, *C0 = NULL;
    if ((rc = load_pair(&r, 2, 2, &ha, &A, &hb, &B))) return fc_cleanup(&r, rc);
    const int64_t m = ha->shape[o.ta ? 1 : 0], k = ha->shape[o.ta ? 0 : 1];
    const int64_t kb = hb->shape[o.tb ? 1 : 0], n = hb->shape[o.tb ? 0 : 1];
    if (k != kb)
        return fc_cleanup(&r, fc_file_error(&r, c.files[1], "op(B) is %lld x %lld: its %lld rows "
                                            "differ from the %lld columns of op(A) (%s)",
                                            (long long)kb, (long long)n, (long long)kb,
                                            (long long)k, c.files[0]));
    const int64_t cshape[2] = {m, n};
    if (o.c) {
        if (!(hc = fc_load(&r, o.c, &C0))) return fc_cleanup(&r, PK_EXIT_FAIL);
        pk_npy_header want;
        pk_npy_header_init(&want, ha->type, 2, cshape);
        char has[64];
        fc_fmt_shape(has, sizeof has, hc);
        if (hc->type != ha->type || !same_shape(hc, &want))
            return fc_cleanup(&r, fc_file_error(&r, o.c, "C0 must be %s (%lld, %lld) like the "
                                                "result, it is %s %s", pk_npy_type_name(ha->type),
                                                (long long)m, (long long)n,
                                                pk_npy_type_name(hc->type), has));
    }
    if ((rc = fc_open_backend(&r))) return fc_cleanup(&r, rc);
    const pk_dtype t = (pk_dtype)ha->type;
    void *out;
    if ((rc = fc_create(&r, c.out, ha->type, 2, cshape, &out))) return fc_cleanup(&r, rc);
    if (C0) memcpy(out, C0, (size_t)hc->data_bytes);
    double a[1], b[1];
    store(t, alpha, a);
    store(t, beta, b);
    const int64_t lda = ha->shape[1] > 1 ? ha->shape[1] : 1, ldb = hb->shape[1] > 1 ? hb->shape[1] : 1;
    double t0 = fc_now();
    pk_status s = pk_gemm(r.ctx, t, mode, o.ta ? PK_TRANS : PK_NO_TRANS,
                          o.tb ? PK_TRANS : PK_NO_TRANS, m, n, k, a, A, lda, B, ldb, b, out,
                          n > 1 ? n : 1);
    if (s == PK_OK) s = pk_ctx_sync(r.ctx);
    fc_report rep = {.seconds = fc_now() - t0, .ops = 2.0 * (double)m * (double)n * (double)k,
                     .ops_unit = "gflops"};
    if (s != PK_OK) return fc_cleanup(&r, fc_kernel_error(&r, s));
    const double size = (double)pk_dtype_size(t);
    rep.bytes = size * ((double)m * (double)k + (double)k * (double)n +
                        (double)m * (double)n * (C0 && beta != 0 ? 2 : 1));
    snprintf(rep.what, sizeof rep.what, "%s%s%s", pk_gemm_mode_name(mode),
             o.ta ? " A^T" : "", o.tb ? " B^T" : "");
    if (o.check) {
        gemm_check_args g = {t, mode, o.ta, o.tb, m, n, k, alpha, A, lda, B, ldb, beta,
                             C0 && beta != 0 ? C0 : NULL, out};
        double err = NAN, bound = gemm_error_bound(t, mode, k);
        const int nomem = gemm_max_rel_error(&g, &err) != 0;
        rep.failed = nomem || !(err <= bound);
        if (nomem) gemm_check_nomem_text(rep.note, sizeof rep.note, &g);
        else snprintf(rep.note, sizeof rep.note, "check: max rel err %.3g (bound %.3g): %s", err,
                      bound, rep.failed ? "FAILED" : "ok");
        char e[40];
        fc_fmt_json_num(e, sizeof e, err);
        snprintf(rep.json, sizeof rep.json, ", \"check\": {\"max_rel_err\": %s, \"bound\": "
                 "%.17g, \"ok\": %s%s}", e, bound, rep.failed ? "false" : "true",
                 nomem ? ", \"error\": \"out of memory\"" : "");
    }
    return fc_finish(&r, &rep, 0);
}
