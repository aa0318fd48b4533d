// The pieces every binding source shares: the dtype table, array views
// (NumPy and other buffer-protocol objects read here; device arrays and torch
// tensors through the Python adapters of pk/_adapters.py), per-thread
// contexts with the caller's stream, outputs in the caller's array type, and
// pk's statuses raised as pk.Error subclasses.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <pk.h>

#include <cstdint>
#include <memory>
#include <string>

namespace nb = nanobind;

namespace pkpy {

// pk's six dtypes first, with pk_dtype's values, then the bit-matrix ones.
enum class DType : int { f32, f64, i32, i64, u32, u64, u8, u16, boolean, other };

struct DTypeInfo {
    const char *name;  // NumPy's name: "float32", ...
    size_t size;
};
const DTypeInfo &dtype_info(DType t);
inline const char *dtype_name(DType t) { return dtype_info(t).name; }
inline bool is_pk_dtype(DType t) { return int(t) < int(PK_DTYPE_COUNT); }
inline pk_dtype to_pk(DType t) { return pk_dtype(int(t)); }
inline DType from_pk(pk_dtype t) { return DType(int(t)); }
// "float32" / "f32" and the other names of the table; DType::other if none.
DType parse_dtype_name(const char *name);

constexpr int kHost = -1;   // View::device of host memory
constexpr int kMaxDims = 64; // NumPy's limit

// An array as pk sees it. Filled by import_view; holds what keeps the memory
// exported (a Py_buffer, the adapter's owner) until it is destroyed.
struct View {
    void *ptr = nullptr;
    DType dtype = DType::other;
    std::string other_dtype;  // the name of an unsupported dtype, for errors
    int ndim = 0;
    int64_t shape[kMaxDims];
    int64_t strides[kMaxDims];  // bytes
    int device = kHost;         // CUDA device, or kHost
    bool readonly = false;
    bool numpy_results = false; // a buffer-protocol input: results are NumPy
    uintptr_t stream = 0;       // the array library's current stream (device)
    nb::object alloc;           // the adapter's allocator (non-buffer inputs)
    nb::object keep;            // anything that must outlive the call
    Py_buffer buf{};
    bool has_buf = false;

    View() = default;
    View(const View &) = delete;
    View &operator=(const View &) = delete;
    ~View();

    int64_t size() const;
    size_t itemsize() const { return dtype_info(dtype).size; }
    bool c_contiguous() const;
};

// Fill v from obj (name is the argument's name in messages). writable: the
// array is written (an output). Raises TypeError for what is no array or has
// a dtype pk cannot name, ValueError for a read-only output.
void import_view(View &v, nb::handle obj, const char *fn, const char *name, bool writable);

// The NumPy name of a dtype argument ("float32", np.float32, a torch.dtype).
std::string dtype_arg_name(nb::handle dtype);

// Require v's dtype to be one of `allowed` (a bit set of 1 << DType).
void require_dtype(const View &v, unsigned allowed, const char *fn, const char *name);
constexpr unsigned bit(DType t) { return 1u << unsigned(t); }
constexpr unsigned kPkDtypes = bit(DType::f32) | bit(DType::f64) | bit(DType::i32) |
                               bit(DType::i64) | bit(DType::u32) | bit(DType::u64);
constexpr unsigned kFloatDtypes = bit(DType::f32) | bit(DType::f64);
// Raise ValueError unless v is C-contiguous.
void require_contiguous(const View &v, const char *fn, const char *name);
// Raise ValueError unless a and b are in the same memory space.
void require_same_device(const View &a, const View &b, const char *fn, const char *name);

// A 2-D operand's layout: rows x cols with leading dimension ld, stored
// row-major, or (transposed) the transpose of a row-major cols x rows one.
struct Matrix {
    int64_t rows = 0, cols = 0, ld = 1;
    bool transposed = false;
};
// Row-major (rows may be padded: ld >= cols) or, if allow_transposed, also
// column-major. A 1-D view is one row. ValueError for anything else.
Matrix matrix_of(const View &v, bool allow_transposed, const char *fn, const char *name);

// An output allocated like `like` (NumPy for buffer inputs, else the
// caller's library on like's device), with the given shape and dtype, for
// `stream` (kCurrentStream: the library's current one, the cheap case).
constexpr uintptr_t kCurrentStream = ~uintptr_t(0);
struct Output {
    nb::object obj;
    void *ptr = nullptr;
    // An out= or c= argument's buffer export, held until the kernel has
    // written: while it is held, a bytearray or array.array cannot be
    // resized (and its memory freed) by another thread (the GIL is released
    // around the kernel).
    std::unique_ptr<View> view;
};
Output allocate(const View &like, const int64_t *shape, int ndim, DType t, uintptr_t stream);
// A checked out= argument: shape, dtype and device must match exactly.
Output use_out(nb::handle out, const View &like, const int64_t *shape, int ndim, DType t,
               const char *fn);
// A NumPy scalar of dtype t from the value at p (host memory).
nb::object numpy_scalar(DType t, const void *p);
nb::tuple shape_tuple(const int64_t *shape, int ndim);

// ---- contexts ------------------------------------------------------------

// The calling thread's context for x's memory (the CPU backend for host
// memory, CUDA for x's device), running on the resolved stream for the
// call's lifetime. stream_arg: None (the array library's current stream),
// an int (a cudaStream_t; 0 is the legacy default stream), or a stream
// object (.ptr as CuPy's, .cuda_stream as PyTorch's, __cuda_stream__).
class Call {
  public:
    Call(const View &x, nb::handle stream_arg, const char *fn);
    ~Call();
    Call(const Call &) = delete;
    Call &operator=(const Call &) = delete;
    pk_ctx *ctx() const { return ctx_; }
    bool device() const { return device_; }
    uintptr_t stream() const { return stream_; }
    // The stream outputs are allocated for: kCurrentStream when the caller
    // named none (the array library's current stream needs no switching).
    uintptr_t alloc_stream() const { return current_ ? kCurrentStream : stream_; }
    // Raise the pk.Error subclass of st with the context's message.
    void check(pk_status st) const;

  private:
    pk_ctx *ctx_ = nullptr;
    bool device_ = false;
    uintptr_t stream_ = 0;
    bool current_ = false;
};

// Releases the GIL for its lifetime when `release` (kernel calls that may
// take long; tiny host calls keep it: releasing costs more than they do).
class Unlocked {
  public:
    explicit Unlocked(bool release) : state_(release ? PyEval_SaveThread() : nullptr) {}
    ~Unlocked() {
        if (state_) PyEval_RestoreThread(state_);
    }
    Unlocked(const Unlocked &) = delete;
    Unlocked &operator=(const Unlocked &) = delete;

  private:
    PyThreadState *state_;
};
// Host work below this many bytes runs with the GIL held.
constexpr int64_t kReleaseBytes = 1 << 17;

pk_ctx *cpu_context();
pk_ctx *cuda_context(int device);
// Wait for all work on every CUDA device (before a reducer's code is freed).
void sync_all_devices();
// The interpreter is exiting: leave the main thread's contexts to the OS.
void mark_exiting();
int cuda_device_count();
// The CUDA device owning ptr; kHost for host (or unregistered) memory.
int pointer_device(uintptr_t ptr);

[[noreturn]] void raise_status(pk_status st, const std::string &msg);

// ---- Python hooks (pk/_adapters.py), set once at import --------------------
struct Hooks {
    nb::object adapt;        // adapt(x) -> (ptr, shape, strides, dtype, device, ro, stream, alloc)
    nb::object pad_codes;    // pad_codes(x, stream) -> uint64 words
    nb::object dtype_name;   // dtype_name(obj) -> "float32" ...
    nb::object stream_handle; // stream_handle(obj) -> int (a stream object's handle)
    nb::object errors;       // tuple of exception classes indexed by pk_status
    nb::object np_empty;     // numpy.empty
    nb::object np_dtypes;    // tuple of numpy dtypes indexed by DType
    nb::object np_cells;     // tuple of 1-element NumPy arrays indexed by DType
    void *cell_ptr[int(DType::other)] = {};  // their memory
    PyTypeObject *ndarray = nullptr;
};
Hooks &hooks();

// Registration of each source's functions (module.cpp calls them).
void bind_reduce(nb::module_ &m);
void bind_reducer(nb::module_ &m);
void bind_blas(nb::module_ &m);
void bind_bits(nb::module_ &m);
void bind_info(nb::module_ &m);

} // namespace pkpy
