// pk.dot, pk.axpy, pk.gemm and pk.matmul.
#include "pk_py.h"

#include <cstring>

namespace pkpy {

namespace {
// alpha/beta as one host value of dtype t.
struct HostScalar {
    alignas(8) unsigned char bytes[8];
    HostScalar(DType t, double v) {
        if (t == DType::f32) {
            float f = float(v);
            memcpy(bytes, &f, 4);
        } else {
            memcpy(bytes, &v, 8);
        }
    }
};

double number(nb::handle h, const char *fn, const char *name) {
    double v = PyFloat_AsDouble(h.ptr());
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        throw nb::type_error((std::string(fn) + ": " + name + " must be a number").c_str());
    }
    return v;
}

void require_same_dtype(const View &a, const View &b, const char *fn, const char *name) {
    if (a.dtype != b.dtype)
        throw nb::type_error((std::string(fn) + ": " + name + " has dtype " +
                              dtype_name(b.dtype) + ", the first operand " +
                              dtype_name(a.dtype) + " (pk does not convert)")
                                 .c_str());
}

// Two operands of one float dtype on one device (y written when y_out).
void import_float_pair(View &vx, View &vy, nb::handle x, nb::handle y, const char *fn,
                       bool y_out) {
    import_view(vx, x, fn, "x", false);
    import_view(vy, y, fn, "y", y_out);
    require_dtype(vx, kFloatDtypes, fn, "x");
    require_same_dtype(vx, vy, fn, "y");
    require_same_device(vx, vy, fn, "y");
}

std::string shape_text(const View &v) {
    return nb::cast<std::string>(nb::str(shape_tuple(v.shape, v.ndim)));
}

nb::object dot(nb::handle x, nb::handle y, nb::handle out, nb::handle stream) {
    const char *fn = "pk.dot";
    View vx, vy;
    import_float_pair(vx, vy, x, y, fn, false);
    if (vx.ndim != 1 || vy.ndim != 1 || vx.shape[0] != vy.shape[0])
        throw nb::value_error((std::string(fn) + ": x and y must be 1-D of the same length; "
                                                 "their shapes are " +
                               shape_text(vx) + " and " + shape_text(vy))
                                  .c_str());
    require_contiguous(vx, fn, "x");
    require_contiguous(vy, fn, "y");
    Call call(vx, stream, fn);
    alignas(8) unsigned char scalar[8] = {0};
    Output o;
    if (!out.is_none())
        o = use_out(out, vx, nullptr, 0, vx.dtype, fn);
    else if (!vx.numpy_results)
        o = allocate(vx, nullptr, 0, vx.dtype, call.alloc_stream());
    pk_status st;
    {
        Unlocked u(call.device() || vx.shape[0] * 2 * int64_t(vx.itemsize()) >= kReleaseBytes);
        st = pk_dot(call.ctx(), to_pk(vx.dtype), vx.shape[0], vx.ptr, vy.ptr,
                    o.ptr ? o.ptr : scalar);
    }
    call.check(st);
    return o.obj.is_valid() ? o.obj : numpy_scalar(vx.dtype, scalar);
}

nb::object axpy(nb::handle alpha, nb::handle x, nb::handle y, nb::handle stream) {
    const char *fn = "pk.axpy";
    View vx, vy;
    import_float_pair(vx, vy, x, y, fn, true);
    bool same = vx.ndim == vy.ndim;
    for (int d = 0; same && d < vx.ndim; d++) same = vx.shape[d] == vy.shape[d];
    if (!same)
        throw nb::value_error((std::string(fn) + ": x has shape " + shape_text(vx) +
                               ", y has shape " + shape_text(vy) + " (no broadcasting)")
                                  .c_str());
    require_contiguous(vx, fn, "x");
    require_contiguous(vy, fn, "y");
    HostScalar a(vx.dtype, number(alpha, fn, "alpha"));
    Call call(vx, stream, fn);
    if (vx.size() == 0) return nb::borrow(y);
    pk_status st;
    {
        Unlocked u(call.device() || vx.size() * 3 * int64_t(vx.itemsize()) >= kReleaseBytes);
        st = pk_axpy(call.ctx(), to_pk(vx.dtype), vx.size(), a.bytes, vx.ptr, vy.ptr);
    }
    call.check(st);
    return nb::borrow(y);
}

pk_gemm_mode parse_mode(nb::handle mode, const char *fn) {
    if (PyUnicode_Check(mode.ptr())) {
        std::string s = nb::cast<std::string>(mode);
        for (int m = 0; m < PK_GEMM_MODE_COUNT; m++)
            if (s == pk_gemm_mode_name(pk_gemm_mode(m))) return pk_gemm_mode(m);
    }
    throw nb::value_error(
        (std::string(fn) + ": mode must be \"fp32\", \"tf32\" or \"fp32_accurate\"").c_str());
}

nb::object gemm_impl(const char *fn, nb::handle a, nb::handle b, nb::handle c, double alpha,
                     double beta, bool trans_a, bool trans_b, nb::handle mode_arg,
                     nb::handle stream) {
    const pk_gemm_mode mode = parse_mode(mode_arg, fn);
    View va, vb;
    import_view(va, a, fn, "a", false);
    import_view(vb, b, fn, "b", false);
    require_dtype(va, kFloatDtypes, fn, "a");
    require_same_dtype(va, vb, fn, "b");
    require_same_device(va, vb, fn, "b");
    if (va.ndim != 2 || vb.ndim != 2)
        throw nb::value_error((std::string(fn) + ": a and b must be 2-D; their shapes are " +
                               shape_text(va) + " and " + shape_text(vb))
                                  .c_str());
    const Matrix ma = matrix_of(va, true, fn, "a"), mb = matrix_of(vb, true, fn, "b");
    const int64_t m = trans_a ? ma.cols : ma.rows, k = trans_a ? ma.rows : ma.cols;
    const int64_t kb = trans_b ? mb.cols : mb.rows, n = trans_b ? mb.rows : mb.cols;
    if (k != kb)
        throw nb::value_error((std::string(fn) + ": op(a) is " + std::to_string(m) + " x " +
                               std::to_string(k) + ", op(b) is " + std::to_string(kb) + " x " +
                               std::to_string(n) + ": inner dimensions differ")
                                  .c_str());
    const int64_t shape[2] = {m, n};
    Call call(va, stream, fn);
    Output o;
    int64_t ldc = n > 1 ? n : 1;
    if (!c.is_none()) {
        o.view = std::make_unique<View>();
        View &vc = *o.view;
        import_view(vc, c, fn, "c", true);
        require_same_dtype(va, vc, fn, "c");
        require_same_device(va, vc, fn, "c");
        if (vc.ndim != 2 || vc.shape[0] != m || vc.shape[1] != n)
            throw nb::value_error((std::string(fn) + ": c has shape " + shape_text(vc) +
                                   "; the product is " + std::to_string(m) + " x " +
                                   std::to_string(n))
                                      .c_str());
        ldc = matrix_of(vc, false, fn, "c").ld;
        o.obj = nb::borrow(c);
        o.ptr = vc.ptr;
    } else {
        if (beta != 0.0)
            throw nb::value_error((std::string(fn) + ": beta != 0 needs c").c_str());
        o = allocate(va, shape, 2, va.dtype, call.alloc_stream());
    }
    if (m == 0 || n == 0) return o.obj;  // nothing to write
    HostScalar al(va.dtype, alpha), be(va.dtype, beta);
    // A column-major operand is the transpose of a row-major one.
    const pk_trans ta = (trans_a != ma.transposed) ? PK_TRANS : PK_NO_TRANS;
    const pk_trans tb = (trans_b != mb.transposed) ? PK_TRANS : PK_NO_TRANS;
    pk_status st;
    {
        Unlocked u(call.device() || m * n * (k + 1) >= kReleaseBytes);
        st = pk_gemm(call.ctx(), to_pk(va.dtype), mode, ta, tb, m, n, k, al.bytes, va.ptr,
                     ma.ld, vb.ptr, mb.ld, be.bytes, o.ptr, ldc);
    }
    call.check(st);
    return o.obj;
}
} // namespace

void bind_blas(nb::module_ &m) {
    m.def("dot", &dot, nb::arg("x"), nb::arg("y"), nb::kw_only(), nb::arg("out") = nb::none(),
          nb::arg("stream") = nb::none(),
          nb::sig("def dot(x, y, *, out=None, stream=None)"),
          R"doc(Sum of x[i]*y[i] of two 1-D C-contiguous arrays of one dtype (float32 or
float64), compensated and deterministic as pk.sum. The result: a NumPy
scalar for NumPy inputs, else a 0-d array of the caller's type on the
arrays' device (or out, a 0-d array).)doc");
    m.def("axpy", &axpy, nb::arg("alpha"), nb::arg("x"), nb::arg("y"), nb::kw_only(),
          nb::arg("stream") = nb::none(),
          nb::sig("def axpy(alpha, x, y, *, stream=None)"),
          R"doc(y += alpha * x in place, and returns y. x and y: C-contiguous arrays of one
shape and dtype (float32 or float64); x may be y, other overlap raises
pk.ArgumentError. Each element is one rounding of the product and one of
the sum (no fused multiply-add) on every backend.)doc");
    m.def(
        "gemm",
        [](nb::handle a, nb::handle b, nb::handle c, double alpha, double beta, bool trans_a,
           bool trans_b, nb::handle mode, nb::handle stream) {
            return gemm_impl("pk.gemm", a, b, c, alpha, beta, trans_a, trans_b, mode, stream);
        },
        nb::arg("a"), nb::arg("b"), nb::arg("c") = nb::none(), nb::kw_only(),
        nb::arg("alpha") = 1.0, nb::arg("beta") = 0.0, nb::arg("trans_a") = false,
        nb::arg("trans_b") = false, nb::arg("mode") = "fp32", nb::arg("stream") = nb::none(),
        nb::sig("def gemm(a, b, c=None, *, alpha=1.0, beta=0.0, trans_a=False, trans_b=False, mode=\"fp32\", stream=None)"),
          R"doc(c = alpha * op(a) @ op(b) + beta * c, where op(a) is a.T if trans_a; returns
c (a new array when c is None, which needs beta == 0). a, b, c: 2-D, one
dtype (float32 or float64), on one device. a and b may be row-major or
column-major (a transposed view such as x.T is read in place), with padded
rows or columns; c is row-major (rows may be padded) and must not overlap a
or b. beta == 0 never reads c.

mode: "fp32" (IEEE arithmetic in the dtype), "tf32" (float32 on CUDA tensor
cores: inputs rounded to TF32, FP32 accumulation; pk.UnsupportedError on
the CPU), "fp32_accurate" (float32: error no worse than "fp32"; split-TF32
on CUDA). A mode is never silently swapped for another.)doc");
    m.def(
        "matmul",
        [](nb::handle a, nb::handle b, nb::handle mode, nb::handle out, nb::handle stream) {
            return gemm_impl("pk.matmul", a, b, out, 1.0, 0.0, false, false, mode, stream);
        },
        nb::arg("a"), nb::arg("b"), nb::kw_only(), nb::arg("mode") = "fp32",
        nb::arg("out") = nb::none(), nb::arg("stream") = nb::none(),
        nb::sig("def matmul(a, b, *, mode=\"fp32\", out=None, stream=None)"),
          R"doc(a @ b for 2-D a and b (pk.gemm with alpha=1, beta=0): no batching or
broadcasting. mode as in pk.gemm. out: a 2-D row-major array of the
product's shape and dtype (returned).)doc");
}

} // namespace pkpy
