// pk.pack_bits, pk.unpack_bits, pk.bgemm, pk.hamming, pk.hamming_topk.
// Bit matrices are uint64 (or int64) words, one row per code, as pk_bits_*;
// uint8 rows (FAISS's binary codes, n x d/8) are read as little-endian words
// in place when each row is a whole number of aligned words, else copied
// into zero-padded words (pk/_adapters.py pad_codes), which changes no
// distance.
#include "pk_py.h"

#include <memory>

namespace pkpy {

namespace {
// A bit-matrix argument: rows x words, ldw words between rows.
struct Bits {
    View v;
    std::unique_ptr<View> padded;  // the zero-padded copy of unaligned uint8 codes
    nb::handle obj;
    const char *name = "";
    bool one_d = false;
    bool codes = false;       // uint8 codes
    bool needs_pad = false;
    int64_t rows = 0, words = 0, ldw = 1;
    int64_t bits = 0;         // bits per row the array holds (the default nbits)
    const void *ptr() const { return padded ? padded->ptr : v.ptr; }
};

void import_bits(Bits &b, nb::handle obj, const char *fn, const char *name) {
    b.obj = obj;
    b.name = name;
    import_view(b.v, obj, fn, name, false);
    require_dtype(b.v, bit(DType::u64) | bit(DType::i64) | bit(DType::u8), fn, name);
    Matrix m = matrix_of(b.v, false, fn, name);
    b.one_d = b.v.ndim == 1;
    b.rows = m.rows;
    if (b.v.dtype != DType::u8) {
        b.words = m.cols;
        b.ldw = m.ld;
        b.bits = 64 * m.cols;
        return;
    }
    b.codes = true;
    b.bits = 8 * m.cols;
    const bool aligned = m.cols % 8 == 0 && reinterpret_cast<uintptr_t>(b.v.ptr) % 8 == 0 &&
                         (m.rows <= 1 || m.ld % 8 == 0);
    b.words = (m.cols + 7) / 8;
    if (aligned) {
        b.ldw = m.rows <= 1 ? (b.words > 1 ? b.words : 1) : m.ld / 8;
    } else {
        b.needs_pad = true;
        b.ldw = b.words > 1 ? b.words : 1;
    }
}

// The padded copy, made on the call's stream (device codes) before pk runs.
void pad_if_needed(Bits &b, const Call &call, const char *fn) {
    if (!b.needs_pad || b.rows == 0 || b.words == 0) return;
    nb::object words = hooks().pad_codes(b.obj, call.device() ? nb::cast(call.stream())
                                                              : nb::none());
    b.padded = std::make_unique<View>();
    import_view(*b.padded, words, fn, b.name, false);
    b.padded->keep = words;
    Matrix m = matrix_of(*b.padded, false, fn, b.name);
    b.ldw = m.ld;
}

int64_t nbits_of(nb::handle nbits, const Bits &a, const Bits &b, const char *fn) {
    if (nbits.is_none()) {
        if (a.bits != b.bits)
            throw nb::value_error((std::string(fn) + ": " + a.name + " holds " +
                                   std::to_string(a.bits) + " bits per row, " + b.name + " " +
                                   std::to_string(b.bits) + "; pass nbits=")
                                      .c_str());
        return a.bits;
    }
    int64_t k = nb::cast<int64_t>(nbits);
    const int64_t have = a.bits < b.bits ? a.bits : b.bits;
    if (k < 0 || k > have)
        throw nb::value_error((std::string(fn) + ": nbits = " + std::to_string(k) +
                               ", but the rows hold " + std::to_string(have) + " bits")
                                  .c_str());
    return k;
}

void require_same_place(const Bits &a, const Bits &b, const char *fn) {
    require_same_device(a.v, b.v, fn, b.name);
}

nb::object pack_bits(nb::handle x, nb::handle stream) {
    const char *fn = "pk.pack_bits";
    View v;
    import_view(v, x, fn, "x", false);
    require_dtype(v, bit(DType::f32) | bit(DType::u8) | bit(DType::boolean), fn, "x");
    Matrix m = matrix_of(v, false, fn, "x");
    const pk_bits_format fmt = v.dtype == DType::f32 ? PK_BITS_F32_SIGN : PK_BITS_U8;
    const int64_t words = pk_bits_words(m.cols);
    Call call(v, stream, fn);
    const int64_t shape[2] = {m.rows, words};
    Output o = v.ndim == 1 ? allocate(v, shape + 1, 1, DType::u64, call.alloc_stream())
                           : allocate(v, shape, 2, DType::u64, call.alloc_stream());
    if (m.rows == 0 || m.cols == 0) return o.obj;
    pk_status st;
    {
        Unlocked u(call.device() || m.rows * m.cols >= kReleaseBytes);
        st = pk_bits_pack(call.ctx(), fmt, m.rows, m.cols, v.ptr, m.ld,
                          static_cast<uint64_t *>(o.ptr), words);
    }
    call.check(st);
    return o.obj;
}

nb::object unpack_bits(nb::handle bits, int64_t nbits, nb::handle dtype, nb::handle stream) {
    const char *fn = "pk.unpack_bits";
    Bits b;
    import_bits(b, bits, fn, "bits");
    if (nbits < 0 || nbits > b.bits)
        throw nb::value_error((std::string(fn) + ": nbits = " + std::to_string(nbits) +
                               ", but the rows hold " + std::to_string(b.bits) + " bits")
                                  .c_str());
    std::string name = dtype_arg_name(dtype);
    DType t = parse_dtype_name(name.c_str());
    if (t != DType::f32 && t != DType::u8)
        throw nb::value_error((std::string(fn) + ": dtype must be float32 (+1.0/-1.0) or "
                                                 "uint8 (1/0), not " + name)
                                  .c_str());
    Call call(b.v, stream, fn);
    pad_if_needed(b, call, fn);
    const int64_t shape[2] = {b.rows, nbits};
    Output o = b.one_d ? allocate(b.v, shape + 1, 1, t, call.alloc_stream())
                       : allocate(b.v, shape, 2, t, call.alloc_stream());
    if (b.rows == 0 || nbits == 0) return o.obj;
    pk_status st;
    {
        Unlocked u(call.device() || b.rows * nbits >= kReleaseBytes);
        st = pk_bits_unpack(call.ctx(), t == DType::f32 ? PK_BITS_F32_SIGN : PK_BITS_U8, b.rows,
                            nbits, static_cast<const uint64_t *>(b.ptr()), b.ldw, o.ptr,
                            nbits > 1 ? nbits : 1);
    }
    call.check(st);
    return o.obj;
}

// The shared front of bgemm, hamming and hamming_topk.
struct Pair {
    Bits a, b;
    int64_t k = 0;
    // Padded copies of unaligned codes, made on the call's stream.
    void pad(const Call &call, const char *fn) {
        pad_if_needed(a, call, fn);
        pad_if_needed(b, call, fn);
    }
    bool empty() const { return a.rows == 0 || b.rows == 0; }
    int64_t work() const { return a.rows * b.rows * (k / 64 + 1); }
};
void import_pair(Pair &p, nb::handle a, nb::handle b, nb::handle nbits, const char *fn,
                 const char *an, const char *bn, bool nbits_required) {
    import_bits(p.a, a, fn, an);
    import_bits(p.b, b, fn, bn);
    require_same_place(p.a, p.b, fn);
    if (nbits_required && nbits.is_none())
        throw nb::type_error((std::string(fn) + ": nbits is required (the +-1 entries per "
                                                "row; padding bits would count as -1)")
                                 .c_str());
    p.k = nbits_of(nbits, p.a, p.b, fn);
}

nb::object bgemm(nb::handle a, nb::handle b, nb::handle nbits, nb::handle stream) {
    const char *fn = "pk.bgemm";
    Pair p;
    import_pair(p, a, b, nbits, fn, "a", "b", true);
    Call call(p.a.v, stream, fn);
    p.pad(call, fn);
    const int64_t shape[2] = {p.a.rows, p.b.rows};
    Output o = allocate(p.a.v, shape, 2, DType::i32, call.alloc_stream());
    if (p.empty()) return o.obj;
    pk_status st;
    {
        Unlocked u(call.device() || p.work() >= kReleaseBytes);
        st = pk_bgemm(call.ctx(), p.a.rows, p.b.rows, p.k,
                      static_cast<const uint64_t *>(p.a.ptr()), p.a.ldw,
                      static_cast<const uint64_t *>(p.b.ptr()), p.b.ldw,
                      static_cast<int32_t *>(o.ptr), p.b.rows > 1 ? p.b.rows : 1);
    }
    call.check(st);
    return o.obj;
}

nb::object hamming(nb::handle q, nb::handle db, nb::handle nbits, nb::handle dtype,
                   nb::handle stream) {
    const char *fn = "pk.hamming";
    std::string name = dtype_arg_name(dtype);
    DType t = parse_dtype_name(name.c_str());
    if (t != DType::i32 && t != DType::u16)
        throw nb::value_error(
            (std::string(fn) + ": dtype must be int32 or uint16, not " + name).c_str());
    Pair p;
    import_pair(p, q, db, nbits, fn, "q", "db", false);
    Call call(p.a.v, stream, fn);
    p.pad(call, fn);
    const int64_t shape[2] = {p.a.rows, p.b.rows};
    Output o = p.a.one_d ? allocate(p.a.v, shape + 1, 1, t, call.alloc_stream())
                         : allocate(p.a.v, shape, 2, t, call.alloc_stream());
    if (p.empty()) return o.obj;
    pk_status st;
    {
        Unlocked u(call.device() || p.work() >= kReleaseBytes);
        st = pk_hamming(call.ctx(), t == DType::u16 ? PK_HAMMING_U16 : PK_HAMMING_I32, p.a.rows,
                        p.b.rows, p.k, static_cast<const uint64_t *>(p.a.ptr()), p.a.ldw,
                        static_cast<const uint64_t *>(p.b.ptr()), p.b.ldw, o.ptr,
                        p.b.rows > 1 ? p.b.rows : 1);
    }
    call.check(st);
    return o.obj;
}

nb::object hamming_topk(nb::handle q, nb::handle db, int64_t k, nb::handle nbits,
                        nb::handle stream) {
    const char *fn = "pk.hamming_topk";
    Pair p;
    import_pair(p, q, db, nbits, fn, "q", "db", false);
    if (k < 1 || k > p.b.rows)
        throw nb::value_error((std::string(fn) + ": k = " + std::to_string(k) +
                               "; it must be 1 .. " + std::to_string(p.b.rows) +
                               " (the database's rows)")
                                  .c_str());
    Call call(p.a.v, stream, fn);
    p.pad(call, fn);
    const int64_t shape[2] = {p.a.rows, k};
    const int nd = p.a.one_d ? 1 : 2;
    const int64_t *sh = p.a.one_d ? shape + 1 : shape;
    Output dist = allocate(p.a.v, sh, nd, DType::i32, call.alloc_stream());
    Output idx = allocate(p.a.v, sh, nd, DType::i64, call.alloc_stream());
    if (p.a.rows > 0) {
        pk_status st;
        {
            Unlocked u(call.device() || p.work() >= kReleaseBytes);
            st = pk_hamming_topk(call.ctx(), p.a.rows, p.b.rows, p.k,
                                 static_cast<const uint64_t *>(p.a.ptr()), p.a.ldw,
                                 static_cast<const uint64_t *>(p.b.ptr()), p.b.ldw, k,
                                 static_cast<int32_t *>(dist.ptr),
                                 static_cast<int64_t *>(idx.ptr));
        }
        call.check(st);
    }
    return nb::make_tuple(dist.obj, idx.obj);
}

constexpr const char *kCodesDoc =
    "Bit matrices: uint64 (or int64) words as pk.pack_bits makes them (bit j of a row is "
    "bit j % 64 of word j // 64), or uint8 rows such as FAISS binary codes (n x d/8): read "
    "in place as little-endian words when each row is a whole number of 8-byte-aligned "
    "words, else copied into zero-padded words first (a copy of the codes; distances are "
    "unchanged). A 1-D array is one row.";
} // namespace

void bind_bits(nb::module_ &m) {
    static const std::string doc_pack = std::string(R"doc(Pack a rows x k array (1-D: one row) into a bit matrix of uint64 words,
rows x ceil(k/64): float32 by sign (x >= 0, -0.0 too, is 1; x < 0 and NaN
are 0), uint8 or bool nonzero as 1. Padding bits are 0.)doc");
    m.def("pack_bits", &pack_bits, nb::arg("x"), nb::kw_only(), nb::arg("stream") = nb::none(),
          nb::sig("def pack_bits(x, *, stream=None)"), doc_pack.c_str());
    static const std::string doc_unpack = std::string(R"doc(The inverse of pack_bits: rows x nbits of float32 (+1.0 / -1.0) or uint8
(1 / 0). )doc") + kCodesDoc;
    m.def("unpack_bits", &unpack_bits, nb::arg("bits"), nb::arg("nbits"), nb::kw_only(),
          nb::arg("dtype") = "float32", nb::arg("stream") = nb::none(),
          nb::sig("def unpack_bits(bits, nbits, *, dtype=\"float32\", stream=None)"), doc_unpack.c_str());
    static const std::string doc_bgemm = std::string(R"doc(Binary (+-1) matrix product: C[i, j] = sum over the nbits entries of row i
of a and row j of b (bit 1 = +1, 0 = -1) = nbits - 2 * Hamming(a_i, b_j),
int32, m x n. b holds one row per output column. )doc") + kCodesDoc;
    m.def("bgemm", &bgemm, nb::arg("a"), nb::arg("b"), nb::arg("nbits"),
          nb::kw_only(), nb::arg("stream") = nb::none(),
          nb::sig("def bgemm(a, b, nbits, *, stream=None)"), doc_bgemm.c_str());
    static const std::string doc_hamming = std::string(R"doc(Hamming distances between every row of q and every row of db: m x n of
int32 or uint16 (nbits <= 65535). nbits defaults to all the bits of a row.
)doc") + kCodesDoc;
    m.def("hamming", &hamming, nb::arg("q"), nb::arg("db"), nb::arg("nbits") = nb::none(),
          nb::kw_only(), nb::arg("dtype") = "int32", nb::arg("stream") = nb::none(),
          nb::sig("def hamming(q, db, nbits=None, *, dtype=\"int32\", stream=None)"), doc_hamming.c_str());
    static const std::string doc_topk = std::string(R"doc(For each row of q, the k rows of db nearest in Hamming distance, nearest
first, ties by the lower index: (distances int32, indices int64), each
m x k (k for a 1-D q), as FAISS's IndexBinaryFlat.search returns (D, I);
the m x n distance matrix is never built. 1 <= k <= len(db).
)doc") + kCodesDoc;
    m.def("hamming_topk", &hamming_topk, nb::arg("q"), nb::arg("db"), nb::arg("k"),
          nb::arg("nbits") = nb::none(), nb::kw_only(), nb::arg("stream") = nb::none(),
          nb::sig("def hamming_topk(q, db, k, nbits=None, *, stream=None)"), doc_topk.c_str());
}

} // namespace pkpy
