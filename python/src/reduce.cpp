// pk.sum/prod/min/max/argmin/argmax and pk.Reducer's call: one planner for
// both (whole array, or the first or last axis of a C-contiguous array), one
// output path (a NumPy scalar, a new array of the caller's type, or out=).
#include "reduce.h"

#include <cstring>

namespace pkpy {

namespace {
// NumPy's words for a reduction of nothing, where it has no identity.
const char *const kEmptyNames[PK_OP_COUNT] = {"sum", "prod", "minimum", "maximum", "argmin",
                                              "argmax"};

// axis: None (-> *whole), or an int (NumPy integers too), normalized.
bool parse_axis(nb::handle axis, int ndim, const char *fn, int *out) {
    if (axis.is_none()) return false;
    if (PyBool_Check(axis.ptr()) || !PyIndex_Check(axis.ptr()))
        throw nb::type_error((std::string(fn) + ": axis must be None or an int").c_str());
    Py_ssize_t a = PyNumber_AsSsize_t(axis.ptr(), PyExc_OverflowError);
    if (a == -1 && PyErr_Occurred()) throw nb::python_error();
    const int nd = ndim > 0 ? ndim : 0;
    if (a < -nd || a >= nd)
        throw nb::value_error((std::string(fn) + ": axis " + std::to_string(a) +
                               " is out of bounds for an array of dimension " +
                               std::to_string(ndim))
                                  .c_str());
    *out = int(a < 0 ? a + nd : a);
    return true;
}
} // namespace

ReducePlan plan_reduction(const View &v, nb::handle axis, const char *fn) {
    ReducePlan p;
    int ax = 0;
    const bool has_axis = parse_axis(axis, v.ndim, fn, &ax);
    if (!has_axis || v.ndim <= 1) {
        require_contiguous(v, fn, "x");
        p.n = v.size();
        return p;
    }
    if (ax != 0 && ax != v.ndim - 1)
        throw nb::value_error(
            (std::string(fn) + ": axis " + std::to_string(ax) + " of a " +
             std::to_string(v.ndim) +
             "-d array: pk reduces the whole array or its first or last axis (axis=0 or "
             "-1); a middle axis would need a copy")
                .c_str());
    p.whole = false;
    p.axis = ax == 0 ? 0 : 1;
    if (v.ndim == 2) {  // rows may be padded (a slice of columns)
        Matrix m = matrix_of(v, false, fn, "x");
        p.rows = m.rows;
        p.cols = m.cols;
        p.ld = m.ld;
    } else {
        require_contiguous(v, fn, "x");
        const int split = ax == 0 ? 1 : v.ndim - 1;  // rows: dims before it
        p.rows = 1;
        p.cols = 1;
        for (int d = 0; d < v.ndim; d++) (d < split ? p.rows : p.cols) *= v.shape[d];
        p.ld = p.cols > 1 ? p.cols : 1;
    }
    p.n = p.axis == 0 ? p.rows : p.cols;  // the reduced length
    p.out_ndim = v.ndim - 1;
    for (int d = 0, o = 0; d < v.ndim; d++)
        if (d != ax) p.out_shape[o++] = v.shape[d];
    return p;
}

nb::object run_reduction(const Reduction &r, nb::handle x, nb::handle axis, nb::handle out,
                         nb::handle stream) {
    View v;
    import_view(v, x, r.fn, "x", false);
    require_dtype(v, kPkDtypes, r.fn, "x");
    ReducePlan p = plan_reduction(v, axis, r.fn);
    const DType rt = r.result(v.dtype);
    if (p.n == 0 && !r.empty_ok()) {
        std::string what = r.red ? std::string("this ARG reducer") : kEmptyNames[r.op];
        throw nb::value_error(
            (std::string(r.fn) + ": zero-size array to reduction operation " + what +
             " which has no identity")
                .c_str());
    }
    Call call(v, stream, r.fn);
    const pk_reducer *red = r.red ? r.red->get(call, v.dtype) : nullptr;
    alignas(8) unsigned char scalar[8] = {0};
    Output o;
    if (!out.is_none())
        o = use_out(out, v, p.out_shape, p.out_ndim, rt, r.fn);
    else if (!(p.whole && v.numpy_results))
        o = allocate(v, p.out_shape, p.out_ndim, rt, call.alloc_stream());
    if (!p.whole && (p.axis == 0 ? p.cols : p.rows) == 0) return o.obj;  // nothing to write
    void *dst = o.ptr ? o.ptr : scalar;
    const int64_t work = p.whole ? p.n : p.rows * p.cols;
    pk_status st;
    {
        Unlocked u(call.device() || work * int64_t(v.itemsize()) >= kReleaseBytes);
        if (red)
            st = p.whole ? pk_reducer_reduce(call.ctx(), red, v.ptr, p.n, dst)
                         : pk_reducer_reduce_axis(call.ctx(), red, v.ptr, p.rows, p.cols,
                                                  p.ld, p.axis, dst);
        else
            st = p.whole ? pk_reduce(call.ctx(), r.op, to_pk(v.dtype), v.ptr, p.n, dst)
                         : pk_reduce_axis(call.ctx(), r.op, to_pk(v.dtype), v.ptr, p.rows,
                                          p.cols, p.ld, p.axis, dst);
    }
    call.check(st);
    if (!o.obj.is_valid()) return numpy_scalar(rt, scalar);
    return o.obj;
}

// ---- built-in reductions -------------------------------------------------

DType Reduction::result(DType in) const {
    if (red) return red->result_dtype();
    return from_pk(pk_reduce_result_dtype(op, to_pk(in)));
}

bool Reduction::empty_ok() const {
    if (red) return red->kind() == PK_REDUCER_VALUE;
    return op == PK_SUM || op == PK_PROD;
}

namespace {
template <pk_op Op>
nb::object reduce_fn(nb::handle x, nb::handle axis, nb::handle out, nb::handle stream) {
    static const char *const names[PK_OP_COUNT] = {"pk.sum", "pk.prod", "pk.min",
                                                   "pk.max", "pk.argmin", "pk.argmax"};
    Reduction r;
    r.fn = names[Op];
    r.op = Op;
    return run_reduction(r, x, axis, out, stream);
}

constexpr const char *kReduceDoc = R"doc(%s of x: the whole array (axis=None), or along its first (axis=0) or last
(axis=-1, or ndim-1) axis; x is C-contiguous (a 2-D array's rows may be
padded, as a slice of columns). Any other layout or axis raises ValueError:
pk reads arrays in place and never copies them.

dtypes: float32, float64, int32, int64, uint32, uint64. %s
x: a NumPy array or any buffer-protocol object, a PyTorch tensor (CPU or
CUDA), a CuPy array, or any __cuda_array_interface__ / DLPack CUDA array.
The result has the caller's type: a NumPy scalar for a whole NumPy array
(as numpy.%s), a 0-d tensor or array on x's device for PyTorch and CuPy,
else an array on x's device. out: an array of exactly the result's shape
and dtype on x's device (returned).
stream: CUDA arrays only; default the array library's current stream.
Results on a CUDA device are asynchronous on that stream.)doc";
} // namespace

void bind_reduce(nb::module_ &m) {
    struct Doc {
        const char *name, *what, *dtype, *np;
    };
    static const Doc docs[PK_OP_COUNT] = {
        {"sum", "Sum",
         "The result dtype is NumPy's: int32 and int64 sum to int64, uint32 and uint64 to "
         "uint64 (wrapping modulo 2^64). Float sums are compensated and deterministic, with "
         "an error at or below numpy.sum's; NaN propagates.",
         "sum"},
        {"prod", "Product", "Result dtypes as pk.sum's; NaN propagates.", "prod"},
        {"min", "Minimum",
         "The result has x's dtype; NaN if any element is NaN (as numpy.min). An empty "
         "reduction raises ValueError.",
         "min"},
        {"max", "Maximum",
         "The result has x's dtype; NaN if any element is NaN (as numpy.max). An empty "
         "reduction raises ValueError.",
         "max"},
        {"argmin", "Index (int64) of the first minimum",
         "The first NaN's index if any (as numpy.argmin); with axis=None an index into the "
         "flattened array. An empty reduction raises ValueError.",
         "argmin"},
        {"argmax", "Index (int64) of the first maximum",
         "The first NaN's index if any (as numpy.argmax); with axis=None an index into the "
         "flattened array. An empty reduction raises ValueError.",
         "argmax"},
    };
    using Fn = nb::object (*)(nb::handle, nb::handle, nb::handle, nb::handle);
    static const Fn fns[PK_OP_COUNT] = {reduce_fn<PK_SUM>,    reduce_fn<PK_PROD>,
                                        reduce_fn<PK_MIN>,    reduce_fn<PK_MAX>,
                                        reduce_fn<PK_ARGMIN>, reduce_fn<PK_ARGMAX>};
    static std::string texts[PK_OP_COUNT], sigs[PK_OP_COUNT];
    for (int op = 0; op < PK_OP_COUNT; op++) {
        char buf[2048];
        snprintf(buf, sizeof buf, kReduceDoc, docs[op].what, docs[op].dtype, docs[op].np);
        texts[op] = buf;
        sigs[op] = std::string("def ") + docs[op].name + "(x, axis=None, out=None, stream=None)";
        m.def(docs[op].name, fns[op], nb::arg("x"), nb::arg("axis") = nb::none(),
              nb::arg("out") = nb::none(), nb::arg("stream") = nb::none(),
              nb::sig(sigs[op].c_str()), texts[op].c_str());
    }
}

} // namespace pkpy
