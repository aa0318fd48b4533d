// pk.Reducer: a user-defined reduction from C expressions (pk_reducer_*),
// called on arrays like pk.sum. The expressions are checked when the Reducer
// is made; each (backend, input dtype) gets its pk_reducer on first use (on
// CUDA: compiled by NVRTC or loaded from pk's caches, without the GIL).
#include "reduce.h"

namespace pkpy {

namespace {
const char *const kFields[3] = {"map", "combine", "final"};
const char *const kOrigins[] = {"interpreted", "compiled", "memory_cache", "disk_cache"};

std::string text_of(nb::handle h, const char *name) {
    if (!PyUnicode_Check(h.ptr()))
        throw nb::type_error(
            (std::string("pk.Reducer: ") + name + " must be a str (a C expression)").c_str());
    return nb::cast<std::string>(h);
}

DType acc_of(nb::handle acc) {
    std::string name = dtype_arg_name(acc);
    DType t = parse_dtype_name(name.c_str());
    if (t != DType::f32 && t != DType::f64)
        throw nb::value_error(
            ("pk.Reducer: acc must be float32 or float64, not " + name).c_str());
    return t;
}
} // namespace

Reducer::Reducer(nb::handle map, nb::handle combine, nb::handle identity, nb::handle final,
                 nb::handle acc, nb::handle kind) {
    if (combine.is_none()) throw nb::type_error("pk.Reducer: combine= is required");
    if (identity.is_none()) throw nb::type_error("pk.Reducer: identity= is required");
    nb::handle fields[3] = {map, combine, final};
    for (int j = 0; j < 3; j++)
        if (!fields[j].is_none()) {
            text_[j] = text_of(fields[j], kFields[j]);
            has_[j] = true;
        }
    identity_ = PyFloat_AsDouble(identity.ptr());
    if (identity_ == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        throw nb::type_error("pk.Reducer: identity must be a number (float('inf') and "
                             "float('nan') are allowed)");
    }
    acc_ = acc_of(acc);
    std::string k = PyUnicode_Check(kind.ptr()) ? nb::cast<std::string>(kind) : "";
    if (k == "value")
        kind_ = PK_REDUCER_VALUE;
    else if (k == "arg")
        kind_ = PK_REDUCER_ARG;
    else
        throw nb::value_error("pk.Reducer: kind must be \"value\" or \"arg\"");
    // Parse and check the expressions now (on the CPU, where nothing is
    // compiled): a bad expression fails here, not at the first call.
    pk_reducer *red = build(cpu_context(), PK_BACKEND_CPU, DType::f64, false);
    if (!red) raise_status(PK_ERR_INTERNAL, "pk.Reducer: no reducer was built");
}

Reducer::~Reducer() {
    // A CUDA reducer's code must not be unloaded under running work, which
    // may have been launched from any thread, on any stream.
    bool cuda = false;
    for (const Built &b : built_) cuda = cuda || b.backend == PK_BACKEND_CUDA;
    if (cuda) sync_all_devices();
    for (Built &b : built_) pk_reducer_destroy(b.red);
}

pk_reducer *Reducer::build(pk_ctx *ctx, pk_backend backend, DType input, bool release_gil) {
    pk_reducer_desc d{};
    d.input = to_pk(input);
    d.acc = to_pk(acc_);
    d.kind = kind_;
    d.map = has_[0] ? text_[0].c_str() : nullptr;
    d.combine = text_[1].c_str();
    d.final = has_[2] ? text_[2].c_str() : nullptr;
    d.identity = identity_;
    pk_reducer *red = nullptr;
    pk_status st;
    {
        Unlocked u(release_gil);
        std::lock_guard<std::mutex> lk(mu_);
        for (const Built &b : built_)
            if (b.backend == backend && b.input == input) red = b.red;
        st = red ? PK_OK : pk_reducer_create(ctx, &d, &red);
        if (st == PK_OK && red) {
            bool known = false;
            for (const Built &b : built_) known = known || b.red == red;
            if (!known) built_.push_back({backend, input, red});
            last_ = red;
        }
    }
    if (st != PK_OK) raise_status(st, pk_ctx_error(ctx));
    return red;
}

const pk_reducer *Reducer::get(const Call &call, DType input) {
    return build(call.ctx(), call.device() ? PK_BACKEND_CUDA : PK_BACKEND_CPU, input, true);
}

nb::object Reducer::info() const {
    pk_reducer_info i{};
    {
        std::lock_guard<std::mutex> lk(const_cast<std::mutex &>(mu_));
        if (!last_) return nb::none();
        if (pk_reducer_get_info(last_, &i) != PK_OK) return nb::none();
    }
    nb::dict d;
    unsigned o = unsigned(i.origin);
    d["origin"] = o < 4 ? kOrigins[o] : "?";
    d["cache_rejected"] = bool(i.cache_rejected);
    d["cache_written"] = bool(i.cache_written);
    d["build_ms"] = i.build_ms;
    d["nvrtc_version"] = i.nvrtc_version;
    d["arch"] = i.arch;
    return d;
}

nb::object Reducer::field(int which) const {
    if (!has_[which]) return nb::none();
    return nb::str(text_[which].c_str());
}

nb::object Reducer::repr() const {
    std::string s = "pk.Reducer(";
    for (int j = 0; j < 3; j++) {
        if (!has_[j] || j == 2) continue;
        s += std::string(kFields[j]) + "=" + nb::cast<std::string>(nb::repr(field(j))) + ", ";
    }
    s += "identity=" + nb::cast<std::string>(nb::repr(nb::float_(identity_)));
    if (has_[2]) s += ", final=" + nb::cast<std::string>(nb::repr(field(2)));
    s += std::string(", acc='") + dtype_name(acc_) + "', kind='" +
         (kind_ == PK_REDUCER_ARG ? "arg" : "value") + "')";
    return nb::str(s.c_str());
}

void bind_reducer(nb::module_ &m) {
    nb::class_<Reducer>(m, "Reducer", R"doc(Reducer(map=None, combine=..., identity=..., final=None, acc="float64", kind="value")

A user-defined reduction, from C expressions evaluated in the accumulator
dtype acc (float32 or float64):

  map      over x (the element) and i (its index along the reduced range);
           None = "x"
  combine  over a and b (a covers earlier elements); associative, with
           identity as its identity (need not be commutative)
  final    over r, the combined value; None = "r" (kind="value" only)

kind="value" gives final(combined) in acc's dtype; kind="arg" the int64 index
of the element the combine keeps (e.g. combine="fmax(a, b)", map="fabs(x)",
identity=float("nan"): the first index of the largest magnitude).
The expression language is pk.h's (+ - * / %, comparisons, && || ?:, fabs,
sqrt, exp, log, sin, cos, floor, ceil, isnan, isinf, fmin, fmax, pow, min,
max, INFINITY, NAN). Bad expressions raise pk.CompileError here.

Call it as pk.sum: r(x, axis=None, out=None, stream=None). On CUDA the code
is generated and compiled by NVRTC on first use for each input dtype and
cached in memory and on disk ($PK_CACHE_DIR, else ~/.cache/pk); .info says
where the last used one came from.)doc")
        .def(nb::init<nb::handle, nb::handle, nb::handle, nb::handle, nb::handle, nb::handle>(),
             nb::arg("map") = nb::none(), nb::arg("combine") = nb::none(),
             nb::arg("identity") = nb::none(), nb::arg("final") = nb::none(),
             nb::arg("acc") = "float64", nb::arg("kind") = "value")
        .def(
            "__call__",
            [](Reducer &self, nb::handle x, nb::handle axis, nb::handle out, nb::handle stream) {
                Reduction r;
                r.fn = "pk.Reducer";
                r.red = &self;
                return run_reduction(r, x, axis, out, stream);
            },
            nb::arg("x"), nb::arg("axis") = nb::none(), nb::arg("out") = nb::none(),
            nb::arg("stream") = nb::none(),
            "Reduce x as pk.sum does (axis, out, stream alike); the result has dtype acc "
            "(kind=\"value\") or int64 (kind=\"arg\").")
        .def_prop_ro("info", &Reducer::info,
                     "Where the last used pk_reducer came from: a dict with origin "
                     "('interpreted' on the CPU, 'compiled', 'memory_cache' or 'disk_cache' "
                     "on CUDA), cache_rejected, cache_written, build_ms, nvrtc_version, arch.")
        .def_prop_ro("map", [](const Reducer &r) { return r.field(0); })
        .def_prop_ro("combine", [](const Reducer &r) { return r.field(1); })
        .def_prop_ro("final", [](const Reducer &r) { return r.field(2); })
        .def_prop_ro("identity", &Reducer::identity)
        .def_prop_ro("acc", [](const Reducer &r) { return dtype_name(r.acc()); })
        .def_prop_ro("kind",
                     [](const Reducer &r) { return r.kind() == PK_REDUCER_ARG ? "arg" : "value"; })
        .def("__repr__", &Reducer::repr);
}

} // namespace pkpy
