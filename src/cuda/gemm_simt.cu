/* FP32 and f64 GEMM on the CUDA cores (the kernel: gemm_simt.cuh): the
 * choice of tile and split k, f64 in every layout and f32 NN; the other f32
 * layouts are built in gemm_simt_layouts.cu. */
#include "cuda/gemm_simt.cuh"
#include <cmath>

namespace pk_cuda {

namespace {

int64_t tile_count(int64_t m, int64_t n, int64_t bm, int64_t bn)
{
    return ((m + bm - 1) / bm) * ((n + bn - 1) / bn);
}

/* A tile shape (wide: the larger of the two) and a split count. */
struct Plan {
    bool wide;
    int64_t splits;
};

/* f64: 64 x 64 tiles when they give at least one block per SM, else
 * 64 x 32, and when that still leaves SMs idle k is split (at least 128
 * deep a split) so that about two blocks per SM run, at most 8 splits. */
Plan plan_f64(int64_t m, int64_t n, int64_t k, int64_t sms)
{
    const bool wide = tile_count(m, n, 64, 64) >= sms;
    const int64_t tiles = tile_count(m, n, 64, wide ? 64 : 32);
    int64_t splits = tiles < sms ? (2 * sms + tiles - 1) / tiles : 1;
    if (splits > 8) splits = 8;
    if (splits > k / 128) splits = k / 128;
    return {wide, splits < 1 ? 1 : splits};
}

/* f32: the tile shape and split count of least estimated time. Blocks
 * run in rounds of the resident slots (2 blocks an SM of 128 x 128, 3 of
 * 128 x 64); a round costs its k per split times the tile's cost per k
 * step of a full SM (128 x 128: 2 blocks sharing it; 128 x 64: 3 blocks
 * of half the work at 0.9 of the rate, 1.67); a split adds a fixed cost
 * and its partials' traffic (each split written and read back, C written)
 * in the same units (~0.1 us). Splits are 1, 2, 3, 4, 6 or 8 and at least
 * 64 deep; ties go to the larger tile and fewer splits. Fitted on an H100
 * (every tile x split on ten shapes from 256^3 to 3000 x 200 x 2000):
 * within 11% of the best
 * measured configuration on each, and at least as fast as the rule it
 * replaced on each (1536^3 313 -> 252 us, 3000 x 200 x 2000 127 -> 101,
 * 1024 x 1024 x 4096 245 -> 221, 768^3 46 -> 42, 1024^3 77 -> 73). */
Plan plan_f32(int64_t m, int64_t n, int64_t k, int64_t sms)
{
    static const int64_t split_counts[] = {1, 2, 3, 4, 6, 8};
    Plan best = {true, 1}; /* wide: 128 x 128, else 128 x 64 */
    double best_cost = -1;
    for (int wide = 1; wide >= 0; wide--) {
        const int64_t tiles = tile_count(m, n, 128, wide ? 128 : 64);
        const double slots = double(sms) * (wide ? 2 : 3), per_k = wide ? 2.0 : 1.67;
        for (int64_t sp : split_counts) {
            if (sp > 1 && k / sp < 64) break;
            double cost = std::ceil(double(tiles) * double(sp) / slots) *
                          double((k + sp - 1) / sp) * per_k;
            if (sp > 1) cost += 20 + double(2 * sp + 1) * double(m) * double(n) * 2e-5;
            if (best_cost < 0 || cost < best_cost) best = {wide != 0, sp}, best_cost = cost;
        }
    }
    return best;
}

template <class T, int BM, int BN>
pk_status launch_tile(pk_ctx *ctx, const Prob<T> &p, bool ka, bool kb, int64_t splits)
{
    if (ka) return kb ? launch_one<T, BM, BN, true, true>(ctx, p, splits)
                      : launch_one<T, BM, BN, true, false>(ctx, p, splits);
    return kb ? launch_one<T, BM, BN, false, true>(ctx, p, splits)
              : launch_one<T, BM, BN, false, false>(ctx, p, splits);
}

/* A k-contiguous f32 operand copied row-contiguous first (a transpose into
 * scratch) turns NN, NT and TT into TN, the fastest layout of the kernel as
 * ptxas builds it (gemm_simt_layouts.cu): TN took 3.04-3.06 ms at 4096^3 on
 * an H100 where NN took 3.25-3.27, NT 3.37-3.38, TT 3.32-3.34. The copy
 * reads and writes the operand once (A: 8 m k bytes, ~50 us at 4096^2) to
 * save ~6% of 2 m n k FLOPs, so it pays when the other dimension is long
 * and the problem is not small: with both at least 2048 and m n k >= 2^33,
 * NN went 3.26 -> 3.10 ms at 4096^3 and 25.4 -> 24.2 ms at 8192^3, NT and
 * TT 6-9% faster; at 2048 x 2048 x 512 the copies broke even (NN, TT) or
 * lost 3% (NT, two copies). Only for
 * the wide tile without split k: the shapes where the kernel is the time.
 * Where the copy-engine kernel's 128 x 128 tile runs, it reads one such
 * operand as it lies instead (gemm_simt_f32), and only NT still copies A. */
constexpr int64_t kRowCopyMinOther = 2048;
constexpr double kRowCopyMinFlops = 8589934592.0; /* m n k */

/* PK_GEMM_ROW_COPY in the environment (read once): "always" copies every
 * k-contiguous operand whatever the shape (tests run the copy path on all
 * their shapes so), "never" none (A/B timing); otherwise the rule. */
int row_copy_forced()
{
    static const int mode = env_choice(PK__ENV_GEMM_ROW_COPY, {"always", "never"});
    return mode == 1 ? 1 : mode == 2 ? -1 : 0;
}

bool row_copy_pays(const Prob<float> &p, bool ka, bool kb, const Plan &plan)
{
    if (!(ka || kb)) return false;
    if (row_copy_forced()) return row_copy_forced() > 0;
    if (!plan.wide || plan.splits != 1) return false;
    if (double(p.m) * double(p.n) * double(p.k) < kRowCopyMinFlops) return false;
    return (!ka || p.n >= kRowCopyMinOther) && (!kb || p.m >= kRowCopyMinOther);
}

/* PK_GEMM_SIMT_TMA in the environment (read once): "always" runs every
 * FP32 problem that reaches the SIMT kernels in the TN layout, whatever its
 * plan, on the copy-engine kernel's 128 x 128 tile where it is usable, and
 * "big" every FP32 problem on its 256 x 128 tile (after the copies it
 * needs); tests run them so on all their shapes. "never": neither (A/B
 * timing). Otherwise the rules below. */
enum { kTmaNever = -1, kTmaRule = 0, kTmaAlways = 1, kTmaBig = 2 };
int simt_tma_forced()
{
    static const int mode = [] {
        static const int modes[] = {kTmaRule, kTmaAlways, kTmaBig, kTmaNever};
        return modes[env_choice(PK__ENV_GEMM_SIMT_TMA, {"always", "big", "never"})];
    }();
    return mode;
}

/* PK_GEMM_SIMT_RAW in the environment (read once): "never" makes the 128 x
 * 128 copy-engine kernel take every k-contiguous operand from a
 * row-contiguous copy, as before it could transpose one itself (A/B
 * timing, tests); otherwise it reads one such operand as it lies. */
bool raw_allowed()
{
    static const bool allowed = env_choice(PK__ENV_GEMM_SIMT_RAW, {"never"}) == 0;
    return allowed;
}

/* p as the row-contiguous copies leave it (copy_a / copy_b; 16-byte rows). */
Prob<float> as_copied(Prob<float> p, bool copy_a, bool copy_b)
{
    if (copy_a) p.a = Opnd<float>{nullptr, (p.m + 3) / 4 * 4, true};
    if (copy_b) p.b = Opnd<float>{nullptr, (p.n + 3) / 4 * 4, true};
    return p;
}

/* C^T's problem: C^T = op(B)^T op(A)^T (m and n, the operands swapped). */
Prob<float> transposed(const Prob<float> &p)
{
    Prob<float> q = p;
    q.m = p.n, q.n = p.m, q.a = p.b, q.b = p.a;
    return q;
}

/* The copy-engine kernel's 256 x 128 tile (gemm_simt_tma.cu) reads B from a
 * rotated copy and A row-contiguous (copied when k-contiguous). The kernel
 * is 2.5-4% faster than the 128 x 128 tile where it fills the SMs (H200;
 * on the H100 at 8192^3, even at 4096^3), but it has half the blocks, one
 * an SM, so it takes shapes of two full waves or more, n >= 2048. Its copy
 * of B costs 8 k n bytes of traffic, ~1.5% of the kernel's time at m =
 * 4096 (~64 / m of it), so it needs m >= 4096, unless that copy replaces
 * one made anyway (row_copy_pays' sizes): NT and TT copy B (the rotation
 * is free in that copy), and NN runs as C^T = B^T A^T (kBigTransposed: B
 * as it lies is the kernel's A^T, and the copy of A that the 128 x 128
 * tile makes becomes the rotated one), then m >= 2048; where the 128 x 128
 * tile reads that operand as it lies instead, m >= 4096 again. H100 / H200,
 * pk bench gemm (NN, the copies of A and B): 8192^3 21.6 -> 21.0 / 21.5 ->
 * 20.9-21.0 ms; NN as C^T (one copy), H100 4096^3 2.73 -> 2.71 ms. */
enum BigPlan { kNoBig, kBig, kBigTransposed };
BigPlan big_tile_plan(pk_ctx *ctx, const Prob<float> &p, bool ka, bool kb, const Plan &plan)
{
    const int forced = simt_tma_forced();
    if (forced == kTmaNever || forced == kTmaAlways) return kNoBig;
    const bool ct = ka && !kb && gemm_simt_tma_usable(ctx, as_copied(transposed(p), false, true));
    if (!ct && !gemm_simt_tma_usable(ctx, as_copied(p, ka, true))) return kNoBig;
    const BigPlan big = ct ? kBigTransposed : kBig;
    if (forced == kTmaBig) return big;
    const int64_t tiles = ct ? tile_count(p.n, p.m, 256, 128) : tile_count(p.m, p.n, 256, 128);
    /* The 128 x 128 tile would copy that operand too, unless it reads it
     * as it lies (NN's A, TT's and NT's B: gemm_simt_f32). */
    const bool read_raw = raw_allowed() && (kb ? p.b.vec : p.a.vec);
    const bool copied_anyway = (kb || ct) && !read_raw &&
                               double(p.m) * double(p.n) * double(p.k) >= kRowCopyMinFlops;
    const bool fit = plan.wide && plan.splits == 1 && p.m >= (copied_anyway ? 2048 : 4096) &&
                     p.n >= 2048 && tiles >= 2 * int64_t(state(ctx)->sms);
    return fit ? big : kNoBig;
}

/* Whether the plan takes the copy-engine kernel's 128 x 128 tile (where
 * the problem allows: gemm_simt_tma.cu, 0.87 -> 0.97x cuBLAS at 4096^3 on
 * an H100), or else the register-staged one. */
bool tma_planned(const Plan &plan)
{
    const int forced = simt_tma_forced();
    return forced == kTmaAlways || forced == kTmaBig ||
           (forced == kTmaRule && plan.wide && plan.splits == 1);
}

/* The TN kernels. */
pk_status launch_tn(pk_ctx *ctx, const Prob<float> &p, const Plan &plan)
{
    if (tma_planned(plan) && gemm_simt_tma_usable(ctx, p)) return gemm_simt_tma_f32(ctx, p, false);
    return gemm_simt_f32_layouts(ctx, p, false, false, plan.wide, plan.splits);
}

/* o (rows x K; kc: k-contiguous, which a plain copy needs) copied
 * row-contiguous into c: element (r, kk) at kk * ld + r, ld = rows rounded
 * up to 4 floats (16-byte runs); rot: with each group of 4 rows rotated
 * (rotated_rows_f32, the 256 x 128 tile's B). */
pk_status to_rows(pk_ctx *ctx, Opnd<float> &o, int64_t rows, int64_t K, DevScratch &c,
                  bool rot = false, bool kc = true)
{
    const int64_t ld = (rows + 3) / 4 * 4;
    pk_status st = dev_alloc(ctx, &c.p, size_t(ld * K) * sizeof(float));
    if (st) return st;
    float *dst = static_cast<float *>(c.p);
    st = rot ? rotated_rows_f32(ctx, o, kc, K, rows, dst, ld)
             : transpose_f32(ctx, o.p, o.ld, rows, K, dst, ld);
    if (st) return st;
    o = Opnd<float>{dst, ld, true};
    return PK_OK;
}

} // namespace

pk_status gemm_simt_f32(pk_ctx *ctx, const Prob<float> &p, bool ka, bool kb)
{
    const Plan plan = plan_f32(p.m, p.n, p.k, state(ctx)->sms);
    const BigPlan bp = big_tile_plan(ctx, p, ka, kb, plan);
    if (bp == kBigTransposed) {
        DevScratch ca(state(ctx));
        Prob<float> q = transposed(p);
        pk_status st = to_rows(ctx, q.b, p.m, p.k, ca, true);
        if (!st) return gemm_simt_tma_f32(ctx, q, true, true);
        if (st != PK_ERR_NOMEM) return st; /* out of scratch: the paths below */
    }
    const bool big = bp == kBig;
    /* The 128 x 128 copy-engine kernel reads NN's A or TT's B as it lies
     * (gemm_simt_tma.cu), where TN would take that kernel; NT copies A and
     * reads B so where it would have copied both. */
    if (!big && (ka || kb) && raw_allowed() && tma_planned(plan) &&
        (ka != kb || row_copy_pays(p, ka, kb, plan)) &&
        gemm_simt_tma_usable(ctx, as_copied(p, ka && kb, false))) {
        DevScratch ca(state(ctx));
        Prob<float> q = p;
        const pk_status st = ka && kb ? to_rows(ctx, q.a, p.m, p.k, ca) : PK_OK;
        if (!st) return gemm_simt_tma_f32(ctx, q, false, false, ka && !kb, kb);
        if (st != PK_ERR_NOMEM) return st; /* out of scratch: the paths below */
    }
    if (big || row_copy_pays(p, ka, kb, plan)) {
        State *s = state(ctx);
        DevScratch ca(s), cb(s);
        Prob<float> q = p;
        pk_status st = PK_OK;
        if (ka) st = to_rows(ctx, q.a, p.m, p.k, ca);
        if (!st && (big || kb)) st = to_rows(ctx, q.b, p.n, p.k, cb, big, kb);
        if (!st) return big ? gemm_simt_tma_f32(ctx, q, true) : launch_tn(ctx, q, plan);
        if (st != PK_ERR_NOMEM) return st; /* out of scratch: the kernel as it is */
    }
    if (!ka && !kb) return launch_tn(ctx, p, plan);
    if (ka && !kb)
        return plan.wide ? launch_one<float, 128, 128, true, false>(ctx, p, plan.splits)
                         : launch_one<float, 128, 64, true, false>(ctx, p, plan.splits);
    return gemm_simt_f32_layouts(ctx, p, ka, kb, plan.wide, plan.splits);
}

pk_status gemm_simt_f32_guarded(pk_ctx *ctx, const Prob<float> &p, bool ka, bool kb,
                                const int *run_if)
{
    if (ka && !kb) return launch_guarded<true, false>(ctx, p, run_if);
    return gemm_simt_f32_layouts_guarded(ctx, p, ka, kb, run_if);
}

pk_status gemm_simt_f64(pk_ctx *ctx, const Prob<double> &p, bool ka, bool kb)
{
    const Plan plan = plan_f64(p.m, p.n, p.k, state(ctx)->sms);
    return plan.wide ? launch_tile<double, 64, 64>(ctx, p, ka, kb, plan.splits)
                     : launch_tile<double, 64, 32>(ctx, p, ka, kb, plan.splits);
}

} // namespace pk_cuda
