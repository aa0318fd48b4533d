/* pk_hamming_topk on the CUDA backend, fused: the distance matrix is never
 * built. Queries go in blocks (as many as the scratch budget holds), the
 * database in chunks, in index order. Each (query, code) pair is the unique
 * 64-bit key (distance << 33 | index), so "nearest first, ties to the lower
 * index" is plain key order and the top-k are the k smallest keys.
 *
 * Per chunk: the binary GEMM (bits_mma.cuh) with an epilogue that appends
 * the keys of distances below the query's threshold to the query's
 * candidate buffer (one atomic per thread and row); then k_select (one block
 * per query) keeps the k smallest of list + candidates: radix selection of
 * the k-th key over 11-bit digits (histograms in shared memory), then every
 * key <= it. Once a query's list holds k keys, its threshold is the k-th
 * key's distance: a later code (higher index) at that distance loses the tie,
 * so only distances strictly below it are candidates. A full list takes
 * candidates without a selection until it would pass 2k keys (the old
 * threshold still bounds the k-th distance from above), so a selection runs
 * about once per k candidates rather than once per chunk; a last k_select
 * (final) cuts a list longer than k. Then k_finish sorts each list
 * (bitonic in shared memory, 4096 keys at a time, the next 4096 found by
 * selection). */
#include "cuda/bits_mma.cuh"

namespace pk_cuda {

namespace {

constexpr int kSelThreads = 128; /* small blocks: many per SM hide the syncs */
constexpr int kDigitBits = 11, kBins = 1 << kDigitBits;
constexpr int kSortKeys = 4096;
constexpr int kSelKeys = 1024; /* keys k_select's passes may keep in shared memory */
constexpr int64_t kChunk = 65536;           /* database codes per chunk */
constexpr int64_t kFirstMin = 2048;         /* the first chunk: at least this, */
constexpr size_t kBudget = size_t(1) << 30; /* scratch of one query block */
constexpr int kIdxBits = 33;
constexpr uint64_t kIdxMask = (uint64_t(1) << kIdxBits) - 1;

struct EpiTopk {
    static constexpr bool kTileStore = false; /* candidates, not a matrix */
    const uint32_t *thr; /* per query: candidates need h < thr */
    unsigned *cnt;       /* per query: candidates appended */
    uint64_t *buf;       /* per query: cap keys */
    int64_t cap, c0;

    __device__ __forceinline__ uint64_t key(int h, int64_t j) const
    {
        return uint64_t(uint32_t(h)) << kIdxBits | uint64_t(c0 + j);
    }
    __device__ __forceinline__ void one(int64_t i, int64_t j, int h) const
    {
        if (uint32_t(h) >= thr[i]) return;
        const unsigned pos = atomicAdd(cnt + i, 1u);
        buf[i * cap + pos] = key(h, j);
    }
    __device__ __forceinline__ void row(int64_t i, int64_t j0, const int (&h)[16],
                                        unsigned valid) const
    {
        const uint32_t t = thr[i];
        unsigned take = 0;
#pragma unroll
        for (int e = 0; e < 16; e++)
            take |= unsigned((valid >> e) & 1u && uint32_t(h[e]) < t) << e;
        if (!take) return;
        unsigned pos = atomicAdd(cnt + i, unsigned(__popc(take)));
        uint64_t *out = buf + i * cap;
#pragma unroll
        for (int e = 0; e < 16; e++)
            if ((take >> e) & 1u) out[pos++] = key(h[e], j0 + 8 * (e / 2) + (e % 2));
    }
};

struct SelectShared {
    unsigned hist[kBins];
    unsigned long long warp_sum[kSelThreads / 32];
    unsigned long long rem, matching;
    unsigned digit;
    unsigned n_out, n_copied;
};

/* Exclusive prefix over the block of one value per thread; *total = sum. */
__device__ unsigned long long block_exclusive(unsigned long long v, SelectShared &sh,
                                              unsigned long long *total)
{
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    unsigned long long x = v;
    for (int o = 1; o < 32; o *= 2) {
        unsigned long long y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31) sh.warp_sum[w] = x;
    __syncthreads();
    unsigned long long before = 0, all = 0;
    for (int i = 0; i < kSelThreads / 32; i++) {
        if (i < w) before += sh.warp_sum[i];
        all += sh.warp_sum[i];
    }
    __syncthreads();
    *total = all;
    return before + x - v;
}

/* Keys as the selection sees them: the index field cut to ib bits (every
 * index of the call is below 2^ib), so that the radix passes skip the
 * index field's always-zero high bits (n = 10^6: 29 bits, 3 passes, instead
 * of 42 bits and 4). Order-preserving. nbits = ib + the distance's bits. */
struct KeyForm {
    int ib, nbits;
    __device__ __forceinline__ uint64_t squeeze(uint64_t key) const
    {
        return (key >> kIdxBits) << ib | (key & ((uint64_t(1) << ib) - 1));
    }
    __device__ __forceinline__ uint64_t expand(uint64_t c) const
    {
        return (c >> ib) << kIdxBits | (c & ((uint64_t(1) << ib) - 1));
    }
};

/* The rank-th smallest (1-based) of the keys get(e), e < total, that are
 * above `lower` (when has_lower); keys are unique. Radix selection over
 * 11-bit digits of the squeezed keys. Once the keys that match the digits
 * chosen so far number at most cap, the next pass also copies them into
 * sk (shared memory) and the passes after it read only those: two scans of
 * the keys in memory instead of one a digit. */
template <class Get>
__device__ uint64_t kth_key(Get get, int64_t total, unsigned long long rank, KeyForm f,
                            bool has_lower, uint64_t lower, SelectShared &sh, uint64_t *sk,
                            int cap)
{
    uint64_t prefix = 0;
    int hi = f.nbits;
    unsigned long long matching = total; /* an upper bound before the first pass */
    int in_sk = -1;                      /* keys held in sk, once copied */
    while (hi > 0) {
        const int lo = hi > kDigitBits ? hi - kDigitBits : 0;
        const unsigned dmask = (1u << (hi - lo)) - 1u;
        const bool copy = in_sk < 0 && matching <= (unsigned long long)cap;
        for (int b = threadIdx.x; b < kBins; b += kSelThreads) sh.hist[b] = 0;
        if (threadIdx.x == 0) sh.n_copied = 0;
        __syncthreads();
        if (in_sk >= 0) {
            for (int e = threadIdx.x; e < in_sk; e += kSelThreads) {
                const uint64_t key = sk[e];
                if (hi < 64 && (key >> hi) != (prefix >> hi)) continue;
                atomicAdd(&sh.hist[unsigned(key >> lo) & dmask], 1u);
            }
        } else {
            for (int64_t e = threadIdx.x; e < total; e += kSelThreads) {
                const uint64_t raw = get(e);
                if (has_lower && raw <= lower) continue;
                const uint64_t key = f.squeeze(raw);
                if (hi < 64 && (key >> hi) != (prefix >> hi)) continue;
                atomicAdd(&sh.hist[unsigned(key >> lo) & dmask], 1u);
                if (copy) sk[atomicAdd(&sh.n_copied, 1u)] = key;
            }
        }
        __syncthreads();
        if (copy) in_sk = int(sh.n_copied);
        constexpr int per = kBins / kSelThreads;
        const int b0 = threadIdx.x * per;
        unsigned long long s = 0;
        for (int b = 0; b < per; b++) s += sh.hist[b0 + b];
        unsigned long long all;
        unsigned long long before = block_exclusive(s, sh, &all);
        if (before < rank && rank <= before + s) {
            for (int b = 0; b < per; b++) {
                const unsigned c = sh.hist[b0 + b];
                if (rank <= before + c) {
                    sh.digit = unsigned(b0 + b);
                    sh.rem = rank - before;
                    sh.matching = c;
                    break;
                }
                before += c;
            }
        }
        __syncthreads();
        prefix |= uint64_t(sh.digit) << lo;
        rank = sh.rem;
        matching = sh.matching;
        __syncthreads();
        hi = lo;
    }
    return f.expand(prefix);
}

__global__ void k_init(unsigned *par, unsigned *lcount, unsigned *cnt, uint32_t *thr,
                       int64_t qb, uint32_t open)
{
    for (int64_t q = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; q < qb;
         q += int64_t(gridDim.x) * blockDim.x) {
        par[q] = 0;
        lcount[q] = 0;
        cnt[q] = 0;
        thr[q] = open;
    }
}

/* The largest key of L[0, count). */
__device__ uint64_t block_max(const uint64_t *L, int64_t count, SelectShared &sh)
{
    uint64_t v = 0;
    for (int64_t e = threadIdx.x; e < count; e += kSelThreads) v = max(v, L[e]);
    for (int o = 16; o > 0; o /= 2) v = max(v, __shfl_down_sync(0xffffffffu, v, o));
    if ((threadIdx.x & 31) == 0) sh.warp_sum[threadIdx.x >> 5] = v;
    __syncthreads();
    uint64_t all = 0;
    for (int i = 0; i < kSelThreads / 32; i++) all = max(all, uint64_t(sh.warp_sum[i]));
    return all;
}

/* One block per query: the list (two halves of 2 topk keys each, par[q]
 * says which is current) takes the candidates. They are appended in place
 * while the list is not full (<= topk keys), or is full and stays within
 * 2 topk keys (the threshold stands); otherwise, and at the end (final) for
 * a list longer than topk, the topk-th key T is selected and every key <= T
 * goes to the other half. */
__global__ void __launch_bounds__(kSelThreads)
k_select(uint64_t *__restrict__ Lbuf, unsigned *par, unsigned *lcount, unsigned *cnt,
         const uint64_t *__restrict__ buf, int64_t cap, uint32_t *thr, int64_t topk,
         KeyForm form, bool final)
{
    __shared__ SelectShared sh;
    __shared__ uint64_t sk[kSelKeys];
    const int64_t q = blockIdx.x;
    const int64_t cc = cnt[q];
    const int64_t lc = lcount[q], total = lc + cc, lcap = 2 * topk;
    if (cc == 0 && !(final && lc > topk)) return; /* the list stands */
    const unsigned p = par[q];
    uint64_t *L = Lbuf + (2 * q + p) * lcap;
    const uint64_t *C = buf + q * cap;
    uint32_t t = 0xffffffffu;
    if (total <= topk || (!final && lc >= topk && total <= lcap)) {
        for (int64_t e = threadIdx.x; e < cc; e += kSelThreads) L[lc + e] = C[e];
        if (total == topk) {
            __syncthreads();
            t = uint32_t(block_max(L, topk, sh) >> kIdxBits);
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            lcount[q] = unsigned(total);
            cnt[q] = 0;
            if (total == topk) thr[q] = t;
        }
        return;
    }
    auto get = [&](int64_t e) { return e < lc ? L[e] : C[e - lc]; };
    if (threadIdx.x == 0) sh.n_out = 0;
    const uint64_t T = kth_key(get, total, (unsigned long long)topk, form, false, 0, sh, sk,
                               kSelKeys);
    uint64_t *out = Lbuf + (2 * q + (p ^ 1u)) * lcap;
    for (int64_t e = threadIdx.x; e < total; e += kSelThreads) {
        const uint64_t key = get(e);
        if (key <= T) out[atomicAdd(&sh.n_out, 1u)] = key;
    }
    if (threadIdx.x == 0) {
        lcount[q] = unsigned(topk);
        cnt[q] = 0;
        par[q] = p ^ 1u;
        thr[q] = uint32_t(T >> kIdxBits); /* later codes tie-lose at T's distance */
    }
}

/* One block per query: the list's topk keys in order, as dist and idx. */
__global__ void __launch_bounds__(kSelThreads)
k_finish(const uint64_t *__restrict__ Lbuf, const unsigned *par, int64_t topk, KeyForm form,
         int32_t *__restrict__ dist, int64_t *__restrict__ idx)
{
    __shared__ SelectShared sh;
    __shared__ uint64_t keys[kSortKeys];
    const int64_t q = blockIdx.x;
    const uint64_t *Lq = Lbuf + (2 * q + par[q]) * (2 * topk);
    auto get = [&](int64_t e) { return Lq[e]; };
    uint64_t lower = 0;
    for (int64_t base = 0; base < topk; base += kSortKeys) {
        const int cnt = int(topk - base < kSortKeys ? topk - base : kSortKeys);
        if (topk <= kSortKeys) {
            for (int e = threadIdx.x; e < cnt; e += kSelThreads) keys[e] = Lq[e];
        } else {
            /* keys[] is free until the selected keys go in: the scratch */
            const uint64_t T = kth_key(get, topk, (unsigned long long)cnt, form, base > 0,
                                       lower, sh, keys, kSortKeys);
            if (threadIdx.x == 0) sh.n_out = 0;
            __syncthreads();
            for (int64_t e = threadIdx.x; e < topk; e += kSelThreads) {
                const uint64_t key = Lq[e];
                if ((base == 0 || key > lower) && key <= T) keys[atomicAdd(&sh.n_out, 1u)] = key;
            }
            lower = T;
        }
        int P = 1;
        while (P < cnt) P *= 2;
        for (int e = cnt + threadIdx.x; e < P; e += kSelThreads) keys[e] = ~uint64_t(0);
        __syncthreads();
        for (int size = 2; size <= P; size *= 2)
            for (int stride = size / 2; stride > 0; stride /= 2) {
                for (int i = threadIdx.x; i < P / 2; i += kSelThreads) {
                    const int lo = 2 * i - (i & (stride - 1)), hi = lo + stride;
                    const uint64_t a = keys[lo], b = keys[hi];
                    if ((a > b) == ((lo & size) == 0)) {
                        keys[lo] = b;
                        keys[hi] = a;
                    }
                }
                __syncthreads();
            }
        for (int e = threadIdx.x; e < cnt; e += kSelThreads) {
            dist[q * topk + base + e] = int32_t(keys[e] >> kIdxBits);
            idx[q * topk + base + e] = int64_t(keys[e] & kIdxMask);
        }
        __syncthreads();
    }
}

int bit_length(int64_t v)
{
    int b = 0;
    while (v >> b) b++;
    return b;
}

/* The chunk after one of `size` codes: 1.5 times as many (whole 256-code
 * tiles), at most kChunk. */
int64_t next_chunk(int64_t size)
{
    const int64_t next = (size + size / 2 + 255) / 256 * 256;
    return next < kChunk ? next : kChunk;
}

BitsOperand rows_from(const BitsOperand &o, int64_t r0)
{
    BitsOperand r = o;
    r.p = o.p + r0 * o.ld;
    if (o.popc) r.popc = o.popc + r0;
    return r;
}

} // namespace

pk_status hamming_topk(pk_ctx *ctx, const pk__bits_args *a, int64_t topk,
                       int32_t *dist, int64_t *idx)
{
    const int64_t m = a->m, n = a->n, k = a->k;
    if (n > int64_t(kIdxMask) || topk > (int64_t(1) << 31) - kChunk)
        return pk__fail(ctx, PK_ERR_UNSUPPORTED,
                        "pk_hamming_topk: CUDA takes n < 2^33 codes and topk < 2^31 - 2^15");
    DeviceGuard g(ctx);
    if (g.status()) return g.status();
    State *st = state(ctx);
    CallBuffers bufs(ctx);
    const bool mma = bits_use_mma(ctx, m, n, k);
    BitsOperand Q, X;
    Output od, oi;
    pk_status s;
    if ((s = prepare_operand(ctx, bufs, a->A, "Q", m, a->lda, k, mma, &Q)) ||
        (s = prepare_operand(ctx, bufs, a->B, "X", n, a->ldb, k, mma, &X)) ||
        (s = output_on_device(ctx, bufs, dist, "dist", m, topk, topk, 4, &od)) ||
        (s = output_on_device(ctx, bufs, idx, "idx", m, topk, topk, 8, &oi)))
        return s;
    /* The first chunk is small (the lists fill, thresholds tighten), later
     * ones grow 1.5x up to kChunk: a chunk of s codes after t codes yields
     * about topk * s / t candidates, so a first chunk of 4096 followed by
     * 65536 codes at k = 1000 gave ~16,000 candidates a query there alone.
     * Growing 1.5x (topk / 2 candidates a chunk) rather than 2x, from
     * max(2048, 2 topk) rather than max(4096, 2 topk), cut the candidates
     * by about a quarter: on an H100, 10^4 x 10^6 x 256 bits, k = 1000
     * 24.9-25.1 -> 24.4-24.5 ms, k = 10 14.4-14.9 -> 14.1-14.2 ms. A
     * chunk's candidates fit its query's buffer of cap keys. */
    int64_t first = 2 * topk > kFirstMin ? 2 * topk : kFirstMin;
    first = (first + 255) / 256 * 256;
    if (first > n) first = n;
    const int64_t cap = first > kChunk ? first : (n < kChunk ? n : kChunk);
    const size_t per_q = size_t(cap + 4 * topk) * 8 + 16;
    int64_t QB = int64_t(kBudget / per_q);
    if (QB < 1) QB = 1;
    if (QB > m) QB = m;
    void *buf, *L, *par, *lcount, *cnt, *thr;
    if ((s = bufs.get(&buf, size_t(QB * cap) * 8)) ||
        (s = bufs.get(&L, size_t(QB * 4 * topk) * 8)) || (s = bufs.get(&par, size_t(QB) * 4)) ||
        (s = bufs.get(&lcount, size_t(QB) * 4)) || (s = bufs.get(&cnt, size_t(QB) * 4)) ||
        (s = bufs.get(&thr, size_t(QB) * 4)))
        return s;
    KeyForm form;
    form.ib = n > 1 ? bit_length(n - 1) : 1;
    form.nbits = form.ib + bit_length(k);
    const uint32_t open = uint32_t(k) + 1u; /* every distance passes */
    for (int64_t q0 = 0; q0 < m; q0 += QB) {
        const int64_t qb = m - q0 < QB ? m - q0 : QB;
        k_init<<<int((qb + 255) / 256), 256, 0, st->stream>>>(
            static_cast<unsigned *>(par), static_cast<unsigned *>(lcount), static_cast<unsigned *>(cnt),
            static_cast<uint32_t *>(thr), qb, open);
        PK_CU_LAUNCH(ctx, "k_init launch");
        const BitsOperand Qb = rows_from(Q, q0);
        for (int64_t c0 = 0, size = first; c0 < n;
             c0 += size, size = next_chunk(size)) {
            const int64_t nb = n - c0 < size ? n - c0 : size;
            EpiTopk epi;
            epi.thr = static_cast<const uint32_t *>(thr);
            epi.cnt = static_cast<unsigned *>(cnt);
            epi.buf = static_cast<uint64_t *>(buf);
            epi.cap = cap;
            epi.c0 = c0;
            if ((s = bmma::launch(ctx, Qb, rows_from(X, c0), qb, nb, k, mma, epi))) return s;
            k_select<<<unsigned(qb), kSelThreads, 0, st->stream>>>(
                static_cast<uint64_t *>(L), static_cast<unsigned *>(par),
                static_cast<unsigned *>(lcount), static_cast<unsigned *>(cnt),
                static_cast<const uint64_t *>(buf), cap, static_cast<uint32_t *>(thr), topk,
                form, false);
            PK_CU_LAUNCH(ctx, "k_select launch");
        }
        k_select<<<unsigned(qb), kSelThreads, 0, st->stream>>>(
            static_cast<uint64_t *>(L), static_cast<unsigned *>(par),
            static_cast<unsigned *>(lcount), static_cast<unsigned *>(cnt),
            static_cast<const uint64_t *>(buf), cap, static_cast<uint32_t *>(thr), topk, form,
            true);
        PK_CU_LAUNCH(ctx, "k_select (final) launch");
        k_finish<<<unsigned(qb), kSelThreads, 0, st->stream>>>(
            static_cast<const uint64_t *>(L), static_cast<const unsigned *>(par), topk, form, static_cast<int32_t *>(od.dev) + q0 * topk,
            static_cast<int64_t *>(oi.dev) + q0 * topk);
        PK_CU_LAUNCH(ctx, "k_finish launch");
    }
    if ((s = finish_output(ctx, od)) || (s = finish_output(ctx, oi))) return s;
    return PK_OK;
}

} // namespace pk_cuda
