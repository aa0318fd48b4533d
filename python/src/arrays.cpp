// Array views: buffer-protocol objects (NumPy, array.array, memoryview) read
// here, zero copy; everything else through pk/_adapters.py (PyTorch, CuPy,
// Numba and other __cuda_array_interface__ / DLPack arrays). Outputs: NumPy
// for buffer inputs, else the input's own library on its device.
#include "pk_py.h"

#include <cstring>

namespace pkpy {

namespace {
// One row per DType, in its order.
const DTypeInfo kDtypes[] = {
    {"float32", 4}, {"float64", 8}, {"int32", 4},  {"int64", 8}, {"uint32", 4},
    {"uint64", 8},  {"uint8", 1},   {"uint16", 2}, {"bool", 1},  {"?", 0},
};
// pk's short names ("f32"), accepted wherever a dtype name is.
const char *const kShortNames[] = {"f32", "f64", "i32", "i64", "u32",
                                   "u64", "u8",  "u16", "b1"};

// A buffer format ("<f", "=q", "B") as a DType, by kind and item size.
DType dtype_of_format(const char *fmt, Py_ssize_t itemsize) {
    if (*fmt == '@' || *fmt == '=' || *fmt == '<') fmt++;  // x86-64/ARM: little-endian
    if (!fmt[0] || fmt[1]) return DType::other;
    switch (fmt[0]) {
    case 'f': return DType::f32;
    case 'd': return DType::f64;
    case 'B': return DType::u8;
    case 'H': return DType::u16;
    case '?': return DType::boolean;
    case 'i': case 'l': case 'q':
        return itemsize == 4 ? DType::i32 : itemsize == 8 ? DType::i64 : DType::other;
    case 'I': case 'L': case 'Q':
        return itemsize == 4 ? DType::u32 : itemsize == 8 ? DType::u64 : DType::other;
    default: return DType::other;
    }
}

// NumPy's name for a format pk has no DType for, for the error message.
std::string format_name(const char *fmt) {
    static const struct { const char *fmt; const char *name; } names[] = {
        {"e", "float16"}, {"b", "int8"}, {"h", "int16"}, {"g", "float128"},
        {"Zf", "complex64"}, {"Zd", "complex128"}, {"O", "object"}};
    const char *f = fmt;
    if (*f == '@' || *f == '=' || *f == '<') f++;
    if (*fmt == '>' || *fmt == '!') return std::string("big-endian '") + fmt + "'";
    for (const auto &n : names)
        if (!strcmp(f, n.fmt)) return n.name;
    return std::string("buffer format '") + fmt + "'";
}

bool import_buffer(View &v, nb::handle obj, bool writable) {
    int flags = PyBUF_STRIDES | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj.ptr(), &v.buf, flags) != 0) return false;
    v.has_buf = true;
    v.ptr = v.buf.buf;
    v.ndim = v.buf.ndim;
    v.readonly = v.buf.readonly;
    v.numpy_results = true;
    const char *fmt = v.buf.format ? v.buf.format : "B";
    v.dtype = dtype_of_format(fmt, v.buf.itemsize);
    if (v.dtype == DType::other) v.other_dtype = format_name(fmt);
    for (int d = 0; d < v.ndim; d++) {
        v.shape[d] = v.buf.shape[d];
        v.strides[d] = v.buf.strides[d];
    }
    return true;
}

int64_t to_i64(nb::handle h) { return nb::cast<int64_t>(h); }

// The adapter's tuple: (ptr, shape, strides or None, dtype name, device,
// readonly, stream, alloc).
void import_adapted(View &v, nb::handle obj, const char *fn, const char *name) {
    nb::object t = hooks().adapt(obj, fn, name);
    v.keep = t;
    if (!PyTuple_Check(t.ptr())) {  // a NumPy view of host memory (DLPack CPU)
        if (!import_buffer(v, t, false)) throw nb::python_error();
        return;
    }
    nb::tuple tup = nb::borrow<nb::tuple>(t);
    v.ptr = reinterpret_cast<void *>(nb::cast<uintptr_t>(tup[0]));
    nb::tuple shape = nb::borrow<nb::tuple>(tup[1]);
    if (shape.size() > size_t(kMaxDims))
        throw nb::value_error("pk: more than 64 dimensions");
    v.ndim = int(shape.size());
    std::string dt = nb::cast<std::string>(tup[3]);
    v.dtype = parse_dtype_name(dt.c_str());
    if (v.dtype == DType::other) v.other_dtype = dt;
    int64_t stride = int64_t(v.itemsize());
    for (int d = v.ndim - 1; d >= 0; d--) {
        v.shape[d] = to_i64(shape[d]);
        v.strides[d] = stride;
        stride *= v.shape[d];
    }
    if (!tup[2].is_none()) {
        nb::tuple strides = nb::borrow<nb::tuple>(tup[2]);
        for (int d = 0; d < v.ndim; d++) v.strides[d] = to_i64(strides[d]);
    }
    v.device = nb::cast<int>(tup[4]);
    v.readonly = nb::cast<bool>(tup[5]);
    v.stream = nb::cast<uintptr_t>(tup[6]);
    v.alloc = nb::borrow(tup[7]);
    if (v.ptr == nullptr && v.size() == 0) {
        // An empty tensor may have no memory; pk refuses NULL even for n = 0.
        alignas(16) static unsigned char nothing[16];
        v.ptr = nothing;
    }
}
} // namespace

const DTypeInfo &dtype_info(DType t) { return kDtypes[int(t)]; }

DType parse_dtype_name(const char *name) {
    for (int t = 0; t < int(DType::other); t++)
        if (!strcmp(name, kDtypes[t].name) || !strcmp(name, kShortNames[t])) return DType(t);
    return DType::other;
}

View::~View() {
    if (has_buf) PyBuffer_Release(&buf);
}

int64_t View::size() const {
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    return n;
}

bool View::c_contiguous() const {
    // As NumPy's flag: dimensions of length 1 may have any stride; an empty
    // array is contiguous.
    for (int d = 0; d < ndim; d++)
        if (shape[d] == 0) return true;
    int64_t expect = int64_t(itemsize());
    for (int d = ndim - 1; d >= 0; d--) {
        if (shape[d] != 1 && strides[d] != expect) return false;
        expect *= shape[d];
    }
    return true;
}

// Types whose buffer protocol refuses host access (CuPy's __getbuffer__
// raises TypeError for device memory): once one has been read as a device
// array, its type skips the buffer attempt (and its exception's cost).
// Types live as long as the interpreter keeps them; a stale entry only costs
// a lookup.
constexpr int kDeviceTypes = 16;
PyTypeObject *device_types[kDeviceTypes];

bool known_device_type(PyTypeObject *tp) {
    for (PyTypeObject *t : device_types)
        if (t == tp) return true;
    return false;
}

void remember_device_type(PyTypeObject *tp) {
    for (PyTypeObject *&t : device_types)
        if (!t) {
            t = tp;
            return;
        }
}

void import_view(View &v, nb::handle obj, const char *fn, const char *name, bool writable) {
    PyTypeObject *tp = Py_TYPE(obj.ptr());
    bool buffer_refused = false;
    if (tp == hooks().ndarray ||
        (!known_device_type(tp) && PyObject_CheckBuffer(obj.ptr()) &&
         !PyObject_HasAttrString(obj.ptr(), "mask"))) {
        if (import_buffer(v, obj, writable)) return;
        if (writable && PyErr_ExceptionMatches(PyExc_BufferError)) {
            PyErr_Clear();
            throw nb::value_error(
                (std::string(fn) + ": " + name + " is read-only").c_str());
        }
        if (tp == hooks().ndarray || !PyErr_ExceptionMatches(PyExc_TypeError))
            throw nb::python_error();
        PyErr_Clear(); // maybe a device array: try it as one below
        buffer_refused = true;
    }
    import_adapted(v, obj, fn, name);
    if (buffer_refused) remember_device_type(tp);
    if (writable && v.readonly)
        throw nb::value_error((std::string(fn) + ": " + name + " is read-only").c_str());
}

std::string dtype_arg_name(nb::handle dtype) {
    return PyUnicode_Check(dtype.ptr()) ? nb::cast<std::string>(dtype)
                                        : nb::cast<std::string>(hooks().dtype_name(dtype));
}

void require_dtype(const View &v, unsigned allowed, const char *fn, const char *name) {
    if (v.dtype != DType::other && (allowed & bit(v.dtype))) return;
    std::string msg = std::string(fn) + ": " + name + " has dtype " +
                      (v.dtype == DType::other ? v.other_dtype : dtype_name(v.dtype)) +
                      "; expected ";
    const char *sep = "";
    for (int t = 0; t < int(DType::other); t++)
        if (allowed & (1u << t)) {
            msg += sep;
            msg += kDtypes[t].name;
            sep = ", ";
        }
    throw nb::type_error(msg.c_str());
}

void require_contiguous(const View &v, const char *fn, const char *name) {
    if (!v.c_contiguous())
        throw nb::value_error((std::string(fn) + ": " + name +
                               " is not C-contiguous (pk reads arrays in place and never "
                               "copies them; pass a contiguous array, e.g. "
                               "numpy.ascontiguousarray)")
                                  .c_str());
}

void require_same_device(const View &a, const View &b, const char *fn, const char *name) {
    if (a.device == b.device) return;
    auto where = [](int d) {
        return d == kHost ? std::string("host memory") : "CUDA device " + std::to_string(d);
    };
    throw nb::value_error((std::string(fn) + ": " + name + " is in " + where(b.device) +
                           ", the first array in " + where(a.device))
                              .c_str());
}

Matrix matrix_of(const View &v, bool allow_transposed, const char *fn, const char *name) {
    Matrix m;
    if (v.ndim == 1) {
        m.rows = 1;
        m.cols = v.shape[0];
        m.ld = m.cols > 1 ? m.cols : 1;
        if (m.cols > 1 && v.strides[0] != int64_t(v.itemsize())) require_contiguous(v, fn, name);
        return m;
    }
    if (v.ndim != 2)
        throw nb::value_error((std::string(fn) + ": " + name + " has " +
                               std::to_string(v.ndim) + " dimensions; expected 2")
                                  .c_str());
    const int64_t s = int64_t(v.itemsize());
    const int64_t r = v.shape[0], c = v.shape[1];
    auto fits = [&](int64_t inner_len, int64_t inner_stride, int64_t outer_len,
                    int64_t outer_stride, int64_t *ld) {
        if (inner_len > 1 && inner_stride != s) return false;
        if (outer_len <= 1) {
            *ld = inner_len > 1 ? inner_len : 1;
            return true;
        }
        if (outer_stride % s || outer_stride / s < inner_len || outer_stride <= 0) return false;
        *ld = outer_stride / s > 1 ? outer_stride / s : 1;
        return true;
    };
    if (r == 0 || c == 0) {  // nothing is read: any layout will do
        m.rows = r;
        m.cols = c;
        m.ld = c > 1 ? c : 1;
        return m;
    }
    if (fits(c, v.strides[1], r, v.strides[0], &m.ld)) {
        m.rows = r;
        m.cols = c;
        return m;
    }
    if (allow_transposed && fits(r, v.strides[0], c, v.strides[1], &m.ld)) {
        m.rows = r;
        m.cols = c;
        m.transposed = true;
        return m;
    }
    throw nb::value_error(
        (std::string(fn) + ": " + name +
         (allow_transposed ? " is neither row-major nor column-major with unit element stride"
                           : " is not row-major with unit element stride") +
         " (pk never copies an input; pass a contiguous array)")
            .c_str());
}

nb::tuple shape_tuple(const int64_t *shape, int ndim) {
    PyObject *t = PyTuple_New(ndim);
    if (!t) throw nb::python_error();
    for (int d = 0; d < ndim; d++) PyTuple_SET_ITEM(t, d, PyLong_FromLongLong(shape[d]));
    return nb::steal<nb::tuple>(t);
}

Output allocate(const View &like, const int64_t *shape, int ndim, DType t, uintptr_t stream) {
    Output o;
    nb::tuple st = shape_tuple(shape, ndim);
    if (like.numpy_results || !like.alloc.is_valid()) {
        o.obj = hooks().np_empty(st, hooks().np_dtypes[int(t)]);
        Py_buffer b;
        if (PyObject_GetBuffer(o.obj.ptr(), &b, PyBUF_WRITABLE) != 0) throw nb::python_error();
        o.ptr = b.buf;
        PyBuffer_Release(&b);  // the array keeps its memory: o.obj holds it
        return o;
    }
    nb::object s = stream == kCurrentStream ? nb::object(nb::none()) : nb::object(nb::int_(stream));
    nb::tuple r = nb::borrow<nb::tuple>(like.alloc(st, dtype_name(t), s));
    o.obj = r[0];
    o.ptr = reinterpret_cast<void *>(nb::cast<uintptr_t>(r[1]));
    return o;
}

Output use_out(nb::handle out, const View &like, const int64_t *shape, int ndim, DType t,
               const char *fn) {
    auto held = std::make_unique<View>();
    View &v = *held;
    import_view(v, out, fn, "out", true);
    require_same_device(like, v, fn, "out");
    if (v.dtype != t)
        throw nb::type_error((std::string(fn) + ": out has dtype " +
                              (v.dtype == DType::other ? v.other_dtype : dtype_name(v.dtype)) +
                              "; the result is " + dtype_name(t))
                                 .c_str());
    bool same = v.ndim == ndim;
    for (int d = 0; same && d < ndim; d++) same = v.shape[d] == shape[d];
    if (!same) {
        std::string got = nb::cast<std::string>(nb::str(shape_tuple(v.shape, v.ndim)));
        std::string want = nb::cast<std::string>(nb::str(shape_tuple(shape, ndim)));
        throw nb::value_error(
            (std::string(fn) + ": out has shape " + got + "; the result has shape " + want)
                .c_str());
    }
    require_contiguous(v, fn, "out");
    Output o;
    o.obj = nb::borrow(out);
    o.ptr = v.ptr;
    o.view = std::move(held);
    return o;
}

nb::object numpy_scalar(DType t, const void *p) {
    // NumPy makes a scalar from an array element far faster than from a
    // Python number (numpy.float32(1.0) costs about as much as the whole
    // pk.sum call): the value goes into a 1-element array, under the GIL.
    if (!is_pk_dtype(t)) throw nb::type_error("pk: no scalar of this dtype");
    memcpy(hooks().cell_ptr[int(t)], p, dtype_info(t).size);
    PyObject *s = PySequence_GetItem(hooks().np_cells[int(t)].ptr(), 0);
    if (!s) throw nb::python_error();
    return nb::steal(s);
}

} // namespace pkpy
