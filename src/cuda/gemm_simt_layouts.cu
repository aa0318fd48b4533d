/* The f32 SIMT GEMM in the TN, NT and TT layouts (NN and f64: gemm_simt.cu).
 *
 * A file of their own for one ptxas option, --register-usage-level=0
 * (CMakeLists.txt; the default is 5): with it ptxas keeps the three sources
 * of an FFMA off one register bank in these layouts (kRotateB), which the
 * default level does only for NN. On an H100 at 4096^3 TN went 3.27 -> 3.04 ms, NT 3.59 -> 3.36, TT 3.44 ->
 * 3.32; NN was 1.5% slower at level 0, so it stays with the default. The
 * kernels and their arithmetic are the same as before: the same bits. */
#include "cuda/gemm_simt.cuh"

namespace pk_cuda {

namespace {

template <int BN>
pk_status launch_layout(pk_ctx *ctx, const Prob<float> &p, bool ka, bool kb, int64_t splits)
{
    if (ka) return launch_one<float, 128, BN, true, true>(ctx, p, splits);
    return kb ? launch_one<float, 128, BN, false, true>(ctx, p, splits)
              : launch_one<float, 128, BN, false, false>(ctx, p, splits);
}

} // namespace

pk_status gemm_simt_f32_layouts(pk_ctx *ctx, const Prob<float> &p, bool ka, bool kb, bool wide,
                                int64_t splits)
{
    if (ka && !kb) return pk__fail(ctx, PK_ERR_INTERNAL, "gemm_simt_f32_layouts: NN");
    return wide ? launch_layout<128>(ctx, p, ka, kb, splits)
                : launch_layout<64>(ctx, p, ka, kb, splits);
}

pk_status gemm_simt_f32_layouts_guarded(pk_ctx *ctx, const Prob<float> &p, bool ka, bool kb,
                                        const int *run_if)
{
    if (ka && !kb) return pk__fail(ctx, PK_ERR_INTERNAL, "gemm_simt_f32_layouts_guarded: NN");
    if (ka) return launch_guarded<true, true>(ctx, p, run_if);
    return kb ? launch_guarded<false, true>(ctx, p, run_if)
              : launch_guarded<false, false>(ctx, p, run_if);
}

} // namespace pk_cuda
