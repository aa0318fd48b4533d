// The reductions' planner and runner, shared by the built-in ops (reduce.cpp)
// and pk.Reducer (reducer.cpp).
#pragma once

#include "pk_py.h"

#include <mutex>
#include <vector>

namespace pkpy {

// How a reduction maps onto pk_reduce (whole) or pk_reduce_axis.
struct ReducePlan {
    bool whole = true;
    int64_t n = 0;                 // the reduced length
    int64_t rows = 0, cols = 0, ld = 1;
    int axis = 0;                  // pk's axis (0: down the columns, 1: along rows)
    int out_ndim = 0;
    int64_t out_shape[kMaxDims];
};
ReducePlan plan_reduction(const View &v, nb::handle axis, const char *fn);

class Reducer;

// A built-in op, or a user-defined reducer when red is set.
struct Reduction {
    const char *fn = "pk";
    pk_op op = PK_SUM;
    Reducer *red = nullptr;
    DType result(DType in) const;
    bool empty_ok() const;
};
nb::object run_reduction(const Reduction &r, nb::handle x, nb::handle axis, nb::handle out,
                         nb::handle stream);

// pk.Reducer: the description, and the pk_reducer built from it for each
// (backend, input dtype) it has been called with (built on first use).
class Reducer {
  public:
    Reducer(nb::handle map, nb::handle combine, nb::handle identity, nb::handle final,
            nb::handle acc, nb::handle kind);
    ~Reducer();
    Reducer(const Reducer &) = delete;
    Reducer &operator=(const Reducer &) = delete;

    DType result_dtype() const { return kind_ == PK_REDUCER_ARG ? DType::i64 : acc_; }
    pk_reducer_kind kind() const { return kind_; }
    // The reducer for call's backend and this input dtype (built if new; the
    // build may compile, with the GIL released).
    const pk_reducer *get(const Call &call, DType input);
    nb::object info() const;
    nb::object repr() const;
    nb::object field(int which) const;  // map, combine, final (None if unset)
    double identity() const { return identity_; }
    DType acc() const { return acc_; }

  private:
    struct Built {
        pk_backend backend;
        DType input;
        pk_reducer *red;
    };
    pk_reducer *build(pk_ctx *ctx, pk_backend backend, DType input, bool release_gil);

    std::string text_[3];  // map, combine, final
    bool has_[3] = {false, false, false};
    double identity_ = 0;
    DType acc_ = DType::f64;
    pk_reducer_kind kind_ = PK_REDUCER_VALUE;
    std::mutex mu_;  // guards built_ and last_ (the build runs without the GIL)
    std::vector<Built> built_;
    const pk_reducer *last_ = nullptr;
};

} // namespace pkpy
