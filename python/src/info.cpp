// What the build has and what this machine offers (pk.info() is built from
// these in pk/_info.py), the hooks pk/__init__.py registers, and a timing
// hook for the per-call overhead benchmark.
#include "pk_py.h"

#include <nanobind/ndarray.h>

#include <chrono>

namespace pkpy {

namespace {
nb::dict features() {
    nb::dict d;
    for (int f = 0; f < PK_FEATURE_COUNT; f++)
        d[pk_feature_name(pk_feature(f))] = bool(pk_has_feature(pk_feature(f)));
    return d;
}

// Name and description of each CUDA device (creating this thread's context
// for it), or the reason none can be used.
nb::list devices() {
    nb::list out;
    const int n = cuda_device_count();
    for (int i = 0; i < n; i++) {
        nb::dict d;
        d["index"] = i;
        try {
            d["name"] = pk_ctx_describe(cuda_context(i));
        } catch (nb::python_error &e) {
            d["error"] = nb::str(e.value());
        }
        out.append(d);
    }
    return out;
}

// pk_reduce(SUM) of x `reps` times in a C loop: the C call's own host time
// in ns per call, the baseline of the per-call overhead. Host x: the result
// goes to a host scalar; CUDA x: to out (a 1-element array on x's device),
// on pk's own stream, and the time is the host's launch cost alone.
double c_call_ns(nb::handle x, int64_t reps, nb::handle out) {
    View v;
    import_view(v, x, "pk._c_call_ns", "x", false);
    require_dtype(v, kPkDtypes, "pk._c_call_ns", "x");
    require_contiguous(v, "pk._c_call_ns", "x");
    if (reps < 1) throw nb::value_error("pk._c_call_ns: reps must be >= 1");
    alignas(8) unsigned char scalar[8];
    void *dst = scalar;
    View o;
    if (v.device != kHost) {
        if (out.is_none()) throw nb::value_error("pk._c_call_ns: a CUDA x needs out=");
        import_view(o, out, "pk._c_call_ns", "out", true);
        require_same_device(v, o, "pk._c_call_ns", "out");
        if (o.size() != 1 || o.dtype != from_pk(pk_reduce_result_dtype(PK_SUM, to_pk(v.dtype))))
            throw nb::value_error("pk._c_call_ns: out must be one element of the sum's dtype");
        dst = o.ptr;
    }
    pk_ctx *ctx = v.device == kHost ? cpu_context() : cuda_context(v.device);
    if (v.device != kHost && pk_ctx_set_stream(ctx, nullptr) != PK_OK)
        raise_status(PK_ERR_DEVICE, pk_ctx_error(ctx));
    const pk_dtype t = to_pk(v.dtype);
    const int64_t n = v.size();
    pk_status st = PK_OK;
    auto t0 = std::chrono::steady_clock::now();
    for (int64_t r = 0; r < reps && st == PK_OK; r++) st = pk_reduce(ctx, PK_SUM, t, v.ptr, n, dst);
    auto t1 = std::chrono::steady_clock::now();
    if (st != PK_OK) raise_status(st, pk_ctx_error(ctx));
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / double(reps);
}

// (ptr, shape, strides in bytes, dtype name, device) of a DLPack capsule:
// the reader of pk/_adapters.py for CUDA arrays without
// __cuda_array_interface__. The capsule's owner must outlive the use.
nb::tuple dlpack_view(nb::ndarray<> a) {
    const nb::dlpack::dtype t = a.dtype();
    const char *name = "?";
    static const struct { uint8_t code, bits; const char *name; } names[] = {
        {uint8_t(nb::dlpack::dtype_code::Float), 32, "float32"},
        {uint8_t(nb::dlpack::dtype_code::Float), 64, "float64"},
        {uint8_t(nb::dlpack::dtype_code::Int), 32, "int32"},
        {uint8_t(nb::dlpack::dtype_code::Int), 64, "int64"},
        {uint8_t(nb::dlpack::dtype_code::UInt), 32, "uint32"},
        {uint8_t(nb::dlpack::dtype_code::UInt), 64, "uint64"},
        {uint8_t(nb::dlpack::dtype_code::UInt), 8, "uint8"},
        {uint8_t(nb::dlpack::dtype_code::UInt), 16, "uint16"},
        {uint8_t(nb::dlpack::dtype_code::Bool), 8, "bool"}};
    for (const auto &n : names)
        if (t.code == n.code && t.bits == n.bits && t.lanes == 1) name = n.name;
    nb::list shape, strides;
    const int64_t item = (t.bits + 7) / 8;
    for (size_t d = 0; d < a.ndim(); d++) {
        shape.append(int64_t(a.shape(d)));
        strides.append(int64_t(a.stride(d)) * item);
    }
    const int device = a.device_type() == nb::device::cuda::value ||
                               a.device_type() == nb::device::cuda_managed::value
                           ? int(a.device_id())
                           : kHost;
    return nb::make_tuple(reinterpret_cast<uintptr_t>(a.data()), nb::tuple(shape),
                          nb::tuple(strides), name, device);
}

void register_hooks(nb::object adapters, nb::object errors, nb::object numpy) {
    Hooks &h = hooks();
    h.adapt = adapters.attr("adapt");
    h.pad_codes = adapters.attr("pad_codes");
    h.dtype_name = adapters.attr("dtype_name");
    h.stream_handle = adapters.attr("stream_handle");
    h.errors = errors;
    h.np_empty = numpy.attr("empty");
    nb::list dtypes, cells;
    for (int t = 0; t < int(DType::other); t++) {
        nb::object dt = numpy.attr("dtype")(dtype_name(DType(t)));
        dtypes.append(dt);
        nb::object cell = numpy.attr("zeros")(1, dt);
        Py_buffer b;
        if (PyObject_GetBuffer(cell.ptr(), &b, PyBUF_WRITABLE) != 0) throw nb::python_error();
        h.cell_ptr[t] = b.buf;  // the cell lives as long as the hooks
        PyBuffer_Release(&b);
        cells.append(cell);
    }
    h.np_dtypes = nb::tuple(dtypes);
    h.np_cells = nb::tuple(cells);
    h.ndarray = reinterpret_cast<PyTypeObject *>(numpy.attr("ndarray").ptr());
}
} // namespace

void bind_info(nb::module_ &m) {
    m.def("version", &pk_version, "The C library's version, \"MAJOR.MINOR.PATCH\".");
    m.def("build_config", &pk_build_config, "pk_build_config(): the build as key=value lines.");
    m.def("features", &features, "{feature: built in} for cuda, nvrtc, mpi, nccl.");
    m.def("cpu_isa", &pk_cpu_isa, "The CPU SIMD path in use (avx512, avx2, generic).");
    m.def("cpu_prefetch", &pk_cpu_prefetch, "The CPU prefetch profile in use (l1, l2).");
    m.def("cpu_describe", []() { return pk_ctx_describe(cpu_context()); });
    m.def("cuda_device_count", &cuda_device_count);
    m.def("devices", &devices);
    m.def("pointer_device", [](uintptr_t p) { return pointer_device(p); });
    m.def("_c_call_ns", &c_call_ns, nb::arg("x"), nb::arg("reps"), nb::arg("out") = nb::none());
    m.def("_register", &register_hooks);
    m.def("_shutdown", &mark_exiting);
    m.def("dlpack_view", &dlpack_view, nb::arg("capsule").noconvert());
}

} // namespace pkpy
