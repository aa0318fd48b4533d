"""pk.pack_bits, unpack_bits, bgemm, hamming, hamming_topk against NumPy bit
arithmetic (packbits / unpackbits), with FAISS-layout uint8 codes."""

import numpy as np
import pytest
from helpers import assert_same

import pk


def ref_pack(bits01):
    """rows x k of 0/1 -> rows x ceil(k/64) uint64 words, LSB first."""
    rows, k = bits01.shape
    words = (k + 63) // 64
    packed = np.packbits(bits01.astype(np.uint8), axis=1, bitorder="little")
    full = np.zeros((rows, words * 8), np.uint8)
    full[:, : packed.shape[1]] = packed
    return full.view("<u8")


def ref_hamming(qbytes, dbbytes, nbits):
    """Distances between byte rows over their first nbits bits."""
    qb = np.unpackbits(qbytes, axis=1, bitorder="little")[:, :nbits]
    db = np.unpackbits(dbbytes, axis=1, bitorder="little")[:, :nbits]
    return (qb[:, None, :] != db[None, :, :]).sum(axis=2).astype(np.int32)


def ref_topk(dist, k):
    order = np.argsort(dist, axis=1, kind="stable")[:, :k]  # ties: the lower index
    return np.take_along_axis(dist, order, axis=1), order.astype(np.int64)


def as_bytes(words):
    return np.ascontiguousarray(words).view(np.uint8).reshape(words.shape[0], -1)


@pytest.mark.parametrize("k", (1, 7, 64, 65, 130, 1000))
def test_pack_unpack(rng, k):
    x = rng.standard_normal((9, k)).astype(np.float32)
    x[0, 0] = -0.0
    x[1, :: max(1, k // 3)] = np.nan
    w = pk.pack_bits(x)
    assert w.dtype == np.uint64 and w.shape == (9, (k + 63) // 64)
    assert_same(w, ref_pack(x >= 0))  # -0.0 packs as 1, NaN as 0
    u = pk.unpack_bits(w, k)
    assert_same(u, np.where(x >= 0, np.float32(1), np.float32(-1)))
    b = rng.integers(0, 3, (9, k)).astype(np.uint8)
    wb = pk.pack_bits(b)
    assert_same(wb, ref_pack(b != 0))
    assert_same(pk.pack_bits(b.astype(bool)), wb)
    assert_same(pk.unpack_bits(wb, k, dtype=np.uint8), (b != 0).astype(np.uint8))
    assert_same(pk.pack_bits(x[3]), ref_pack(x[3:4] >= 0)[0])  # 1-D: one row


def test_pack_edges():
    assert pk.pack_bits(np.zeros((0, 5), np.float32)).shape == (0, 1)
    assert pk.pack_bits(np.zeros((3, 0), np.float32)).shape == (3, 0)
    with pytest.raises(TypeError, match="float32"):
        pk.pack_bits(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="nbits"):
        pk.unpack_bits(np.zeros((2, 1), np.uint64), 65)
    with pytest.raises(ValueError, match="dtype"):
        pk.unpack_bits(np.zeros((2, 1), np.uint64), 5, dtype=np.float64)


@pytest.mark.parametrize("mnk", ((1, 1, 1), (5, 7, 64), (13, 17, 100), (33, 65, 1000)), ids=str)
def test_bgemm_and_hamming(rng, mnk):
    m, n, k = mnk
    a = rng.integers(0, 2, (m, k))
    b = rng.integers(0, 2, (n, k))
    wa, wb = pk.pack_bits(a.astype(np.uint8)), pk.pack_bits(b.astype(np.uint8))
    pm_a, pm_b = 2 * a - 1, 2 * b - 1
    assert_same(pk.bgemm(wa, wb, k), (pm_a @ pm_b.T).astype(np.int32))
    want = ref_hamming(as_bytes(wa), as_bytes(wb), k)
    assert_same(pk.hamming(wa, wb), want)  # padding bits are 0: the default nbits is right
    assert_same(pk.hamming(wa, wb, k, dtype="uint16"), want.astype(np.uint16))
    assert_same(pk.hamming(wa[0], wb), want[0])  # a 1-D query
    for topk in sorted({1, min(3, n), n}):
        d, i = pk.hamming_topk(wa, wb, topk)
        rd, ri = ref_topk(want, topk)
        assert_same(d, rd)
        assert_same(i, ri)


@pytest.mark.parametrize("code_bytes", (8, 12, 16, 32))
@pytest.mark.parametrize("offset", (0, 1))
def test_faiss_codes(rng, code_bytes, offset):
    """uint8 codes (n x d/8), aligned words read in place, others padded."""
    n, m = 200, 11
    raw = np.empty(n * code_bytes + offset, np.uint8)
    db = raw[offset:].reshape(n, code_bytes)
    db[:] = rng.integers(0, 256, db.shape)
    q = rng.integers(0, 256, (m, code_bytes)).astype(np.uint8)
    q[3] = db[42]  # an exact match
    want = ref_hamming(q, db, 8 * code_bytes)
    assert_same(pk.hamming(q, db), want)
    d, i = pk.hamming_topk(q, db, 5)
    rd, ri = ref_topk(want, 5)
    assert_same(d, rd)
    assert_same(i, ri)
    assert d[3, 0] == 0 and i[3, 0] == np.flatnonzero(want[3] == 0)[0]
    # the same codes as uint64 words give the same answer
    if code_bytes % 8 == 0:
        assert_same(pk.hamming(np.ascontiguousarray(q).view(np.uint64), np.ascontiguousarray(db).view(np.uint64)), want)


def test_bits_bad(rng):
    w = np.zeros((4, 2), np.uint64)
    with pytest.raises(TypeError, match="nbits"):
        pk.bgemm(w, w, None)
    with pytest.raises(ValueError, match="nbits"):
        pk.bgemm(w, w, 129)
    with pytest.raises(ValueError, match="nbits"):
        pk.hamming(w, np.zeros((4, 3), np.uint64))
    assert pk.hamming(w, np.zeros((4, 3), np.uint64), 128).shape == (4, 4)
    with pytest.raises(ValueError, match="k = 5"):
        pk.hamming_topk(w, w, 5)
    with pytest.raises(ValueError, match="k = 0"):
        pk.hamming_topk(w, w, 0)
    with pytest.raises(TypeError, match="uint64"):
        pk.hamming(np.zeros((4, 2), np.float32), w)
    with pytest.raises(ValueError, match="int32 or uint16"):
        pk.hamming(w, w, dtype="int64")
    with pytest.raises(ValueError, match="row-major"):
        pk.hamming(np.zeros((2, 4), np.uint64).T, w)
