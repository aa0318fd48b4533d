// Per-thread contexts (a pk context is not thread-safe), the caller's stream,
// and pk's statuses as Python exceptions.
#include "pk_py.h"

#include <vector>

#ifdef PKPY_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace pkpy {

Hooks &hooks() {
    // Never freed: its Python objects must not be released after the
    // interpreter is gone.
    static Hooks *h = new Hooks();
    return *h;
}

namespace {
// Set when the interpreter shuts down: the main thread's contexts are then
// left to the process's exit (the CUDA runtime may be tearing down).
bool g_exiting = false;

struct ThreadContexts {
    pk_ctx *cpu = nullptr;
    std::vector<pk_ctx *> cuda;
    ~ThreadContexts() {
        if (g_exiting) return;
        pk_ctx_destroy(cpu);
        for (pk_ctx *c : cuda) pk_ctx_destroy(c);
    }
};
thread_local ThreadContexts tls;

pk_ctx *create(pk_backend backend, int device) {
    pk_ctx *ctx = nullptr;
    pk_status st = pk_ctx_create(&ctx, backend, device);
    if (st != PK_OK) raise_status(st, pk_last_create_error());
    return ctx;
}

// cudaStreamLegacy and cudaStreamPerThread, as the CUDA runtime defines them.
constexpr uintptr_t kLegacyStream = 1, kPerThreadStream = 2;

uintptr_t stream_value(nb::handle s) {
    nb::object v = PyLong_Check(s.ptr()) ? nb::borrow(s) : hooks().stream_handle(s);
    if (PyLong_Check(v.ptr()) && PyLong_AsLongLong(v.ptr()) < 0) {
        PyErr_Clear();
        throw nb::value_error("pk: a stream handle cannot be negative");
    }
    return nb::cast<uintptr_t>(v);
}
} // namespace

pk_ctx *cpu_context() {
    if (!tls.cpu) tls.cpu = create(PK_BACKEND_CPU, 0);
    return tls.cpu;
}

pk_ctx *cuda_context(int device) {
    if (device < 0) throw nb::value_error("pk: negative CUDA device");
    if (size_t(device) >= tls.cuda.size()) tls.cuda.resize(size_t(device) + 1, nullptr);
    if (!tls.cuda[size_t(device)]) tls.cuda[size_t(device)] = create(PK_BACKEND_CUDA, device);
    return tls.cuda[size_t(device)];
}

void sync_all_devices() {
#ifdef PKPY_HAVE_CUDA
    // Device-wide: another thread's context, or a caller's stream, may run
    // work that uses what is about to be freed.
    int current = 0;
    if (cudaGetDevice(&current) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    for (int d = 0, n = cuda_device_count(); d < n; d++)
        if (cudaSetDevice(d) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
            (void)cudaGetLastError(); // nothing to report from a destructor
    (void)cudaSetDevice(current);
#endif
}

void mark_exiting() { g_exiting = true; }

int cuda_device_count() {
#ifdef PKPY_HAVE_CUDA
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
#else
    return 0;
#endif
}

int pointer_device(uintptr_t ptr) {
#ifdef PKPY_HAVE_CUDA
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, reinterpret_cast<const void *>(ptr)) != cudaSuccess) {
        (void)cudaGetLastError();
        return kHost;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged ? a.device : kHost;
#else
    (void)ptr;
    return kHost;
#endif
}

[[noreturn]] void raise_status(pk_status st, const std::string &msg) {
    nb::tuple errors = nb::borrow<nb::tuple>(hooks().errors);
    size_t i = size_t(st) < errors.size() ? size_t(st) : size_t(PK_ERR_INTERNAL);
    PyErr_SetString(errors[i].ptr(), msg.empty() ? pk_status_str(st) : msg.c_str());
    throw nb::python_error();
}

Call::Call(const View &x, nb::handle stream_arg, const char *fn) {
    if (x.device == kHost) {
        if (!stream_arg.is_none())
            throw nb::value_error((std::string(fn) +
                                   ": stream= applies to CUDA arrays; these are in host memory")
                                      .c_str());
        ctx_ = cpu_context();
        return;
    }
    device_ = true;
    current_ = stream_arg.is_none();
    stream_ = current_ ? x.stream : stream_value(stream_arg);
    ctx_ = cuda_context(x.device);
    // The legacy default stream (0 or 1: CuPy's and PyTorch's default) runs
    // as pk's own stream, a blocking stream, which the legacy stream orders
    // both ways; any other stream is adopted for the call.
    if (stream_ == 0) stream_ = kLegacyStream;
    void *s = stream_ == kLegacyStream ? nullptr : reinterpret_cast<void *>(stream_);
    check(pk_ctx_set_stream(ctx_, s));
}

Call::~Call() {
    // Back to the own stream, so that the context never holds a stream the
    // caller may destroy (the per-thread default stream lives for ever).
    if (device_ && stream_ != kLegacyStream && stream_ != kPerThreadStream)
        (void)pk_ctx_set_stream(ctx_, nullptr);
}

void Call::check(pk_status st) const {
    if (st != PK_OK) raise_status(st, pk_ctx_error(ctx_));
}

} // namespace pkpy
