/* `pk reduce`: a built-in reduction (pk_reduce, pk_reduce_axis) or a
 * user-defined one (pk_reducer_*) of a 1-D or 2-D .npy array. */
#include "files.h"

#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: pk reduce FILE.npy --op OP [--axis 0|1] [-o OUT.npy] [--json]\n"
    "       pk reduce FILE.npy --expr MAP [--combine C --identity V] [--final F]\n"
    "                 [--acc f32|f64] [--arg] [--axis 0|1] [-o OUT.npy] [--json]\n"
    "\n"
    "Reduce a 1-D or 2-D array (f32 f64 i32 i64 u32 u64) as NumPy's a.sum(),\n"
    "a.argmax(axis=0), ...: without --axis, over all elements (argmin/argmax\n"
    "give the index in the flattened array); --axis 0 down each column, --axis\n"
    "1 along each row. The result: printed (a scalar in the summary line; an\n"
    "array below it, at most 1000 values), or written to OUT.npy (a scalar as a\n"
    "0-d array).\n"
    "\n"
    "built-in reductions:\n"
    "  --op OP        sum prod min max argmin argmax. Results as NumPy's: f32\n"
    "                 and f64 sums stay in their dtype (compensated, correctly\n"
    "                 rounded but for huge cancellation), integer sums and\n"
    "                 products are int64/uint64 (wrapping), arg* are int64; NaN\n"
    "                 propagates (min/max), arg* give the first NaN\n"
    "\n"
    "user-defined reductions (pk_reducer; the expression language is in\n"
    "docs/API.md: numbers, + - * / %, comparisons, ?:, fabs sqrt exp log sin\n"
    "cos floor ceil isnan isinf fmin fmax pow min max, INFINITY, NAN):\n"
    "  --expr MAP     what each element becomes, over x (the element) and i\n"
    "                 (its index); --map is the same option; default x\n"
    "  --combine C    how two partial results a (earlier elements) and b\n"
    "                 combine (associative); default a+b with identity 0\n"
    "  --identity V   the combine's identity (a number, inf, -inf or nan);\n"
    "                 required with --combine\n"
    "  --final F      applied to the combined result r; default r\n"
    "  --acc T        accumulator dtype f32 or f64 (default: f32 for f32\n"
    "                 input, else f64); the result has this dtype\n"
    "  --arg          give the int64 index of the element the combine keeps\n"
    "                 (e.g. --expr 'fabs(x)' --combine 'fmax(a,b)' --identity\n"
    "                 nan --arg: the first index of the largest magnitude)\n"
    "  e.g. the 2-norm: pk reduce x.npy --expr 'x*x' --final 'sqrt(r)'\n"
    "\n"
    "options:\n"
    "  --axis A       0 or 1 (2-D input; 0 on 1-D input is the whole array)\n"
    "  -o FILE        write the result to FILE (.npy); else it is printed\n"
    "  --backend B    cpu, cuda or auto (default: auto: PK_BACKEND when set,\n"
    "                 else CUDA when a device exists)\n"
    "  --json         print one JSON object instead of the summary line\n"
    "  -h, --help     this text\n"
    "\n"
    "time: the kernel call alone (inputs already mapped); GB/s = input bytes\n"
    "+ output bytes / time. Exit status: 0 ok, 1 failure (bad file, kernel\n"
    "error), 2 usage error (an expression that does not compile too).\n";

typedef struct reduce_opts {
    const char *op, *axis, *map, *combine, *identity, *final, *acc;
    int arg;
} reduce_opts;

static const int reduce_types[] = {PK_NPY_F32, PK_NPY_F64, PK_NPY_I32, PK_NPY_I64,
                                   PK_NPY_U32, PK_NPY_U64, -1};

/* The user-defined reducer's description from the options; 0 or 2. */
static int reducer_desc(const fc_cmd *c, const reduce_opts *o, pk_dtype input,
                        pk_reducer_desc *d)
{
    memset(d, 0, sizeof *d);
    d->input = input;
    d->acc = input == PK_F32 ? PK_F32 : PK_F64;
    if (o->acc && (pk_dtype_parse(o->acc, &d->acc) != PK_OK ||
                   (d->acc != PK_F32 && d->acc != PK_F64)))
        return fc_usage(c, "--acc: expected f32 or f64, got '%s'", o->acc);
    d->kind = o->arg ? PK_REDUCER_ARG : PK_REDUCER_VALUE;
    d->map = o->map;
    d->combine = o->combine ? o->combine : "a+b";
    d->final = o->final;
    return o->identity ? fc_parse_double(c, "--identity", o->identity, &d->identity) : 0;
}

/* Usage checks that need no file. */
static int check_options(const fc_cmd *c, const reduce_opts *o, int user, int *axis)
{
    *axis = -1;
    if (o->axis) {
        if (strcmp(o->axis, "0") != 0 && strcmp(o->axis, "1") != 0)
            return fc_usage(c, "--axis: expected 0 or 1, got '%s'", o->axis);
        *axis = o->axis[0] - '0';
    }
    if (user && o->op)
        return fc_usage(c, "--op is for built-in reductions; --expr, --combine, --final and "
                           "--arg describe a user-defined one: give one or the other");
    if (!user && !o->op)
        return fc_usage(c, "give --op (sum prod min max argmin argmax) or --expr MAP");
    if (!user && (o->identity || o->acc))
        return fc_usage(c, "--identity and --acc are for user-defined reductions (--expr)");
    if (o->combine && !o->identity)
        return fc_usage(c, "--combine needs --identity (the value V with combine(V, v) = v)");
    if (o->arg && o->final) return fc_usage(c, "--final does not apply to --arg reductions");
    return 0;
}

int pk_cmd_reduce(int argc, char **argv, pk_cli_mode mode)
{
    reduce_opts o = {0};
    const fc_opt opts[] = {{"--op", &o.op, NULL, FC_ARG},
                           {"--axis", &o.axis, NULL, FC_ARG},
                           {"--expr", &o.map, NULL, FC_ARG},
                           {"--map", &o.map, NULL, FC_ARG},
                           {"--combine", &o.combine, NULL, FC_ARG},
                           {"--identity", &o.identity, NULL, FC_ARG},
                           {"--final", &o.final, NULL, FC_ARG},
                           {"--acc", &o.acc, NULL, FC_ARG},
                           {"--arg", NULL, &o.arg, FC_ARG},
                           {0}};
    fc_cmd c = {.name = "reduce", .usage = usage, .opts = opts, .min_files = 1, .max_files = 1};
    int rc = fc_parse(&c, argc, argv), axis;
    if (rc) return rc == FC_HELP ? 0 : rc;
    const int user = o.map || o.combine || o.final || o.arg;
    pk_op op = PK_SUM;
    if ((rc = check_options(&c, &o, user, &axis))) return rc;
    if (!user && pk_op_parse(o.op, &op) != PK_OK)
        return fc_usage(&c, "--op: expected sum, prod, min, max, argmin or argmax, got '%s'", o.op);
    pk_reducer_desc desc;
    if (user && (rc = reducer_desc(&c, &o, PK_F32, &desc))) return rc; /* options only */

    if (mode == PK_CLI_CHECK) return 0; /* the command line is good */
    fc_run r;
    fc_init(&r, &c);
    const void *x;
    const pk_npy_header *h = fc_load(&r, c.files[0], &x);
    if (!h || fc_expect(&r, c.files[0], h, reduce_types, 0, 2)) return fc_cleanup(&r, 1);
    if (axis >= 0 && h->ndim <= axis) {
        fc_file_error(&r, c.files[0], "--axis %d needs a %d-D array, the file holds %d-D", axis,
                      axis + 1, h->ndim);
        return fc_cleanup(&r, PK_EXIT_FAIL);
    }
    if (h->ndim < 2) axis = -1; /* --axis 0 of a 1-D array: all of it */
    const pk_dtype t = (pk_dtype)h->type;
    if (user) reducer_desc(&c, &o, t, &desc);
    if ((rc = fc_open_backend(&r))) return fc_cleanup(&r, rc);

    const pk_dtype rt = user ? (o.arg ? PK_I64 : desc.acc) : pk_reduce_result_dtype(op, t);
    const int64_t rows = axis >= 0 ? h->shape[0] : 1, cols = axis >= 0 ? h->shape[1] : h->count;
    const int64_t nout = axis == 0 ? cols : axis == 1 ? rows : 1;
    void *out = NULL, *buffer = NULL;
    int64_t oshape[1] = {nout};
    if (c.out) {
        if ((rc = fc_create(&r, c.out, (pk_npy_type)rt, axis >= 0, oshape, &out)))
            return fc_cleanup(&r, rc);
    } else if (!(out = buffer = malloc((size_t)nout * pk_dtype_size(rt) + 8))) {
        fprintf(stderr, "pk reduce: out of memory for %lld results\n", (long long)nout);
        return fc_cleanup(&r, PK_EXIT_FAIL);
    }

    pk_reducer *red = NULL;
    pk_status s = user ? pk_reducer_create(r.ctx, &desc, &red) : PK_OK;
    double t0 = fc_now();
    if (s == PK_OK) {
        const int64_t ld = cols > 1 ? cols : 1;
        if (user && axis >= 0) s = pk_reducer_reduce_axis(r.ctx, red, x, rows, cols, ld, axis, out);
        else if (user) s = pk_reducer_reduce(r.ctx, red, x, h->count, out);
        else if (axis >= 0) s = pk_reduce_axis(r.ctx, op, t, x, rows, cols, ld, axis, out);
        else s = pk_reduce(r.ctx, op, t, x, h->count, out);
        if (s == PK_OK) s = pk_ctx_sync(r.ctx);
    }
    fc_report rep = {.seconds = fc_now() - t0};
    if (s != PK_OK) rc = fc_kernel_error(&r, s);
    pk_reducer_destroy(red);

    rep.bytes = (double)h->data_bytes + (double)nout * (double)pk_dtype_size(rt);
    if (user)
        snprintf(rep.what, sizeof rep.what, "%s map %s, combine %s, identity %g%s%s",
                 o.arg ? "arg" : "value", o.map ? o.map : "x", desc.combine, desc.identity,
                 o.final ? ", final " : "", o.final ? o.final : "");
    else
        snprintf(rep.what, sizeof rep.what, "%s", pk_op_name(op));
    if (axis >= 0)
        snprintf(rep.what + strlen(rep.what), sizeof rep.what - strlen(rep.what),
                 " along axis %d", axis);
    if (rc == 0 && axis < 0) {
        fc_fmt_value(rep.value, sizeof rep.value, (pk_npy_type)rt, out, c.json);
    } else if (rc == 0) {
        rep.values = out, rep.values_type = (pk_npy_type)rt, rep.nvalues = nout;
    }
    rc = fc_finish(&r, &rep, rc);
    free(buffer);
    return rc;
}
