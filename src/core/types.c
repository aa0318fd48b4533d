/* Name, size and result-type tables: each fact about a dtype, op, backend or
 * status is written once here. */
#include "internal.h"

#include <string.h>

#define PK__STATUS_LIST(X)                                   \
    X(PK_OK, "ok")                                           \
    X(PK_ERR_ARG, "invalid argument")                        \
    X(PK_ERR_NOMEM, "out of memory")                         \
    X(PK_ERR_UNSUPPORTED, "not supported")                   \
    X(PK_ERR_NO_DEVICE, "no CUDA device")                    \
    X(PK_ERR_DEVICE, "CUDA device error")                    \
    X(PK_ERR_COMPILE, "compilation failed")                  \
    X(PK_ERR_IO, "input/output error")                       \
    X(PK_ERR_INTERNAL, "internal error")                     \
    X(PK_ERR_COMM, "communication failed")

const char *pk_status_str(pk_status s)
{
    switch (s) {
#define PK__STATUS_CASE(code, text) case code: return text;
        PK__STATUS_LIST(PK__STATUS_CASE)
#undef PK__STATUS_CASE
    }
    return "unknown status";
}

const pk__dtype_info pk__dtypes[PK_DTYPE_COUNT] = {
    [PK_F32] = {"f32", 4, true, true},
    [PK_F64] = {"f64", 8, true, true},
    [PK_I32] = {"i32", 4, false, true},
    [PK_I64] = {"i64", 8, false, true},
    [PK_U32] = {"u32", 4, false, false},
    [PK_U64] = {"u64", 8, false, false},
};

static const char *const op_names[PK_OP_COUNT] = {
    [PK_SUM] = "sum", [PK_PROD] = "prod", [PK_MIN] = "min",
    [PK_MAX] = "max", [PK_ARGMIN] = "argmin", [PK_ARGMAX] = "argmax",
};

static const char *const backend_names[] = {
    [PK_BACKEND_AUTO] = "auto", [PK_BACKEND_CPU] = "cpu",
    [PK_BACKEND_CUDA] = "cuda",
};
#define PK__BACKEND_COUNT (int)(sizeof backend_names / sizeof *backend_names)

static const char *const gemm_mode_names[PK_GEMM_MODE_COUNT] = {
    [PK_GEMM_FP32] = "fp32", [PK_GEMM_TF32] = "tf32",
    [PK_GEMM_FP32_ACCURATE] = "fp32_accurate",
};

const char *pk_gemm_mode_name(pk_gemm_mode mode)
{
    return ((unsigned)mode < PK_GEMM_MODE_COUNT) ? gemm_mode_names[mode] : "?";
}

const char *pk_dtype_name(pk_dtype t)
{
    return ((unsigned)t < PK_DTYPE_COUNT) ? pk__dtypes[t].name : "?";
}

const char *pk_op_name(pk_op op)
{
    return ((unsigned)op < PK_OP_COUNT) ? op_names[op] : "?";
}

const char *pk_backend_name(pk_backend b)
{
    return ((unsigned)b < (unsigned)PK__BACKEND_COUNT) ? backend_names[b] : "?";
}

size_t pk_dtype_size(pk_dtype t)
{
    return ((unsigned)t < PK_DTYPE_COUNT) ? pk__dtypes[t].size : 0;
}

pk_dtype pk_reduce_result_dtype(pk_op op, pk_dtype t)
{
    if ((unsigned)op >= PK_OP_COUNT || (unsigned)t >= PK_DTYPE_COUNT)
        return PK_DTYPE_COUNT;
    switch (op) {
    case PK_SUM:
    case PK_PROD:
        /* NumPy: integer sums and products accumulate in 64 bits. */
        if (pk__dtypes[t].is_float) return t;
        return pk__dtypes[t].is_signed ? PK_I64 : PK_U64;
    case PK_ARGMIN:
    case PK_ARGMAX:
        return PK_I64;
    default:
        return t;
    }
}

/* The index of name in names, or -1 (also for a NULL name). */
static int find_name(const char *name, const char *const *names, int count)
{
    for (int i = 0; name && i < count; i++)
        if (names[i] && strcmp(name, names[i]) == 0) return i;
    return -1;
}

pk_status pk_dtype_parse(const char *name, pk_dtype *out)
{
    const char *names[PK_DTYPE_COUNT];
    for (int i = 0; i < PK_DTYPE_COUNT; i++) names[i] = pk__dtypes[i].name;
    int v = find_name(name, names, PK_DTYPE_COUNT);
    if (v < 0 || !out) return PK_ERR_ARG;
    *out = (pk_dtype)v;
    return PK_OK;
}

pk_status pk_op_parse(const char *name, pk_op *out)
{
    int v = find_name(name, op_names, PK_OP_COUNT);
    if (v < 0 || !out) return PK_ERR_ARG;
    *out = (pk_op)v;
    return PK_OK;
}

pk_status pk_backend_parse(const char *name, pk_backend *out)
{
    int v = find_name(name, backend_names, PK__BACKEND_COUNT);
    if (v < 0 || !out) return PK_ERR_ARG;
    *out = (pk_backend)v;
    return PK_OK;
}
