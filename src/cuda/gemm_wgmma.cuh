/* Hopper (sm_90a) device primitives for the wgmma kernels (gemm_wgmma.cu,
 * bits_wgmma.cuh): mbarriers, the bulk tensor copy (TMA), shared-memory
 * matrix descriptors and the wgmma m64nNk8 TF32 (A from shared memory or
 * from registers, B from shared memory) and m64n256k256 b1 instructions,
 * named barriers and shared-memory accesses. The device code is only
 * compiled into the sm_90a pass (__CUDA_ARCH_FEAT_SM90_ALL); the tensor-map
 * helpers are host code (gemm_wgmma.cu). */
#ifndef PK_CUDA_GEMM_WGMMA_CUH
#define PK_CUDA_GEMM_WGMMA_CUH

#include "cuda/cuda_internal.cuh"
#include "cuda/gemm.cuh"

#include <cuda.h> /* CUtensorMap types only: the driver is reached through cudart */

#include <cstdint>

namespace pk_cuda {

/* Whether the driver can encode tensor maps (cuTensorMapEncodeTiled). */
bool tensor_maps_available();

/* Tensor map of a rows x inner matrix of `type` at p (rows ld_bytes apart,
 * a multiple of 16 below 2^40), box box_inner x box_rows with the 128-byte
 * swizzle (box_inner elements must be 128 bytes) or, with swizzle NONE,
 * dense rows of box_inner elements (at most 256, a multiple of 16 bytes);
 * zeros out of range. */
pk_status tensor_map_2d(pk_ctx *ctx, CUtensorMap *m, CUtensorMapDataType type, const void *p,
                        int64_t rows, int64_t inner, int64_t ld_bytes, int box_inner,
                        int box_rows, CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B);

/* The TF32 kernels' k slice (32 floats: one 128-byte swizzle row) and
 * block (a producer and two consumer warpgroups). */
constexpr int kWgmmaBK = 32, kWgmmaThreads = 384;

/* TF32 with op(B) row-contiguous (NN, TN) and fit for the copy engine, read
 * in place (gemm_wgmma_rs.cu). ma: op(A) k-contiguous (in place or packed),
 * boxes of kWgmmaBK x kWgmmaRsBM rows with the 128-byte swizzle. With
 * c_transposed, p is the problem C^T = op(B)^T op(A)^T (TT: m, n and the
 * operands exchanged, C and ldc as they are) and C is written transposed. */
constexpr int kWgmmaRsBM = 256;
pk_status gemm_wgmma_rs_launch(pk_ctx *ctx, const Prob<float> &p, const CUtensorMap &ma,
                               bool c_transposed);

namespace sm90 {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ __forceinline__ uint32_t saddr(const void *p)
{
    return uint32_t(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint64_t *b, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(saddr(b)), "r"(count));
}

/* Make the initialised barriers visible to the copy engine (async proxy). */
__device__ __forceinline__ void mbar_init_fence()
{
    asm volatile("fence.mbarrier_init.release.cluster;\n"
                 "fence.proxy.async.shared::cta;\n" ::: "memory");
}

__device__ __forceinline__ void mbar_expect_tx(uint64_t *b, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(saddr(b)),
                 "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint64_t *b)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(saddr(b)) : "memory");
}

/* Wait until the phase with the given parity has completed. */
__device__ __forceinline__ void mbar_wait(uint64_t *b, uint32_t parity)
{
    uint32_t done;
    do {
        asm volatile("{\n.reg .pred p;\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(saddr(b)), "r"(parity)
                     : "memory");
    } while (!done);
}

/* 2-D tile copy global -> shared (box of the tensor map at (c0 = inner, c1)),
 * completing on mbarrier b. Out-of-range elements arrive as zeros. */
__device__ __forceinline__ void tma_load(void *dst, const void *map, int c0, int c1, uint64_t *b)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(saddr(dst)),
                 "l"(map), "r"(c0), "r"(c1), "r"(saddr(b))
                 : "memory");
}

/* The same copy multicast to the CTAs of the cluster in mask: the data lands
 * at dst's offset in each, and completes on the mbarrier at b's offset in
 * each. */
__device__ __forceinline__ void tma_load_mc(void *dst, const void *map, int c0, int c1, uint64_t *b,
                                            uint16_t mask)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(saddr(dst)),
                 "l"(map), "r"(c0), "r"(c1), "r"(saddr(b)), "h"(mask)
                 : "memory");
}

/* 2-D tile copy shared -> global (box of the tensor map at (c0, c1)); the
 * copy engine clips the box at the tensor's edges. Writes of src by
 * ordinary stores must be fenced (fence_proxy_async) and ordered before
 * this by a barrier. */
__device__ __forceinline__ void tma_store(const void *map, int c0, int c1, const void *src)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
                     map),
                 "r"(c0), "r"(c1), "r"(saddr(src))
                 : "memory");
}
__device__ __forceinline__ void bulk_commit()
{
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
/* The issuing thread's bulk stores: all but N have finished reading shared
 * memory (the buffer may be rewritten) / have completed. */
template <int N> __device__ __forceinline__ void bulk_wait_read()
{
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
template <int N> __device__ __forceinline__ void bulk_wait()
{
    asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}
/* Ordinary shared-memory writes of this thread, visible to the copy engine. */
__device__ __forceinline__ void fence_proxy_async()
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

__device__ __forceinline__ uint32_t cluster_rank()
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

/* All threads of all CTAs of the cluster (release / acquire). */
__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.aligned;\n"
                 "barrier.cluster.wait.aligned;\n" ::: "memory");
}

/* Arrive on the mbarrier at b's offset in CTA `rank` of the cluster. */
__device__ __forceinline__ void mbar_arrive_cluster(uint64_t *b, uint32_t rank)
{
    asm volatile("{\n.reg .b32 ra;\n"
                 "mapa.shared::cluster.u32 ra, %0, %1;\n"
                 "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n" ::"r"(saddr(b)),
                 "r"(rank)
                 : "memory");
}

__device__ __forceinline__ void tma_prefetch_map(const void *map)
{
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
}

/* Descriptor of a K-major tile whose rows are 128 bytes (32 floats) stored
 * with the 128-byte swizzle, 8-row groups 1024 bytes apart (the layout the
 * TMA writes with CU_TENSOR_MAP_SWIZZLE_128B); p 1024-byte aligned, or that
 * plus a multiple of 32 bytes to step k within the row. */
__device__ __forceinline__ uint64_t kmajor_desc(const void *p)
{
    return uint64_t((saddr(p) & 0x3FFFF) >> 4) | uint64_t(1) << 16 /* LBO: unused */
           | uint64_t(1024 >> 4) << 32 /* SBO */ | uint64_t(1) << 62 /* 128B swizzle */;
}

/* The grouped launch order of the TF32 kernels: CTA id of ctas, over mt m
 * tiles, takes tile (x: m tile, y: n tile); groups of `group` m tiles are
 * walked n tile by n tile, m fastest, so that the CTAs resident at once
 * share a few A and B panels in L2 rather than reading every A panel. */
__device__ __forceinline__ int2 grouped_tile(int id, int ctas, int mt, int group)
{
    const int per = group * (ctas / mt), g = id / per;
    const int width = min(group, mt - g * group);
    return make_int2(g * group + (id - g * per) % width, (id - g * per) / width);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N> __device__ __forceinline__ void wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/* Keep the compiler from moving accumulator accesses across wgmma code. */
template <int R> __device__ __forceinline__ void reg_fence(float (&d)[R])
{
#pragma unroll
    for (int i = 0; i < R; i++) asm volatile("" : "+f"(d[i])::"memory");
}

template <int R> __device__ __forceinline__ void set_max_regs()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
}
template <int R> __device__ __forceinline__ void cut_max_regs()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
}

/* The 64 FP32 accumulators of an m64n128 wgmma: their operand numbers in
 * the asm text (%0..%63) and the output list. */
#define PK_WGMMA_D64_TEXT                                                                     \
    "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"                                 \
    "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"                       \
    "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"                       \
    "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
#define PK_WGMMA_D64_OUT(d)                                                                   \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

/* D (64 x N, FP32) = A (64 x 8) B (8 x N) + (scale_d ? D : 0), TF32 operands
 * from shared memory through descriptors; lane l of warp w of the
 * warpgroup holds rows 16w + l/4 (+8) and columns 8j + 2(l%4) (+1) in
 * d[4j .. 4j+3]. */
__device__ __forceinline__ void wgmma_n128(float (&d)[64], uint64_t da, uint64_t db, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {"
                 PK_WGMMA_D64_TEXT
                 "}, %64, %65, p, 1, 1;\n}\n"
                 : PK_WGMMA_D64_OUT(d)
                 : "l"(da), "l"(db), "r"(scale_d));
}

/* The 128 FP32 accumulators of an m64n256 wgmma: %0..%127 and the output
 * list. */
#define PK_WGMMA_D128_TEXT                                                                    \
    PK_WGMMA_D64_TEXT ","                                                                     \
    "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"                       \
    "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"                       \
    "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"           \
    "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"
#define PK_WGMMA_D128_OUT(d)                                                                  \
    PK_WGMMA_D64_OUT(d),                                                                      \
    "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
    "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
    "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
    "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
    "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
    "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
    "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
    "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

__device__ __forceinline__ void wgmma_n256(float (&d)[128], uint64_t da, uint64_t db, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {"
                 PK_WGMMA_D128_TEXT
                 "}, %128, %129, p, 1, 1;\n}\n"
                 : PK_WGMMA_D128_OUT(d)
                 : "l"(da), "l"(db), "r"(scale_d));
}

/* m64n256k8 with A from registers, accumulating (the fragment layout of
 * wgmma_rs_n128 below). */
__device__ __forceinline__ void wgmma_rs_n256(float (&d)[128], const uint32_t (&a)[4], uint64_t db)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {"
                 PK_WGMMA_D128_TEXT
                 "}, {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
                 : PK_WGMMA_D128_OUT(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
}

/* The same m64n128k8 with A from registers: lane l of warp w of the
 * warpgroup holds A rows 16w + l/4 (a[0], a[2]) and 16w + l/4 + 8 (a[1],
 * a[3]) at k = l%4 (a[0], a[1]) and l%4 + 4 (a[2], a[3]), as FP32 bits of
 * which the tensor cores use the TF32 part. The registers are read while
 * the wgmma runs: they must stay unchanged until a wgmma_wait retires it
 * (and, for ptxas not to serialize, be written before the group starts). */
__device__ __forceinline__ void wgmma_rs_n128(float (&d)[64], const uint32_t (&a)[4], uint64_t db,
                                              int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {"
                 PK_WGMMA_D64_TEXT
                 "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
                 : PK_WGMMA_D64_OUT(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d));
}

/* Register-sourced fragments: keep them live and in place up to this point. */
template <int R> __device__ __forceinline__ void reg_fence(uint32_t (&d)[R])
{
#pragma unroll
    for (int i = 0; i < R; i++) asm volatile("" : "+r"(d[i])::"memory");
}

/* Named barrier of consumer warpgroup wg (1 or 2): its 128 threads. */
__device__ __forceinline__ void wg_sync(int wg)
{
    asm volatile("bar.sync %0, 128;\n" ::"r"(wg) : "memory");
}

/* Named barrier 3: the 256 threads of both consumer warpgroups. */
__device__ __forceinline__ void consumers_sync()
{
    asm volatile("bar.sync 3, 256;\n" ::: "memory");
}

/* Byte offset of byte `off` (< 128) of row r in a tile of 128-byte rows
 * laid out with the 128-byte swizzle (what CU_TENSOR_MAP_SWIZZLE_128B
 * writes and reads, in 1024-byte aligned tiles): 16-byte chunk c of row r
 * lies at chunk c ^ (r % 8). */
__device__ __forceinline__ uint32_t swz128(uint32_t r, uint32_t off)
{
    return r * 128 + ((((off >> 4) ^ (r & 7)) << 4) | (off & 15));
}

/* Two floats to shared memory (address from saddr). */
__device__ __forceinline__ void sts_f32x2(uint32_t addr, float a, float b)
{
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(a), "f"(b) : "memory");
}

/* One float from shared memory (address from saddr). Volatile, so that it
 * stays after the mbarrier wait that makes the data visible. */
__device__ __forceinline__ float lds_f32(uint32_t addr)
{
    float v;
    asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr) : "memory");
    return v;
}

/* Two 32-bit words from shared memory (address from saddr), volatile like
 * lds_f32. */
__device__ __forceinline__ void lds_u32x2(uint32_t addr, uint32_t &a, uint32_t &b)
{
    asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];\n" : "=r"(a), "=r"(b) : "r"(addr) : "memory");
}

/* Integer accumulators: keep the compiler from moving their accesses across
 * wgmma code. */
template <int R> __device__ __forceinline__ void reg_fence(int (&d)[R])
{
#pragma unroll
    for (int i = 0; i < R; i++) asm volatile("" : "+r"(d[i])::"memory");
}

/* D (64 x 256, s32) += popc(A AND B) over 256 bits of k: A (64 rows) and B
 * (256 rows) K-major bit tiles in shared memory through descriptors (32
 * bytes of k a step); D's layout is that of wgmma_n256 above. */
__device__ __forceinline__ void wgmma_b1_n256(int (&d)[128], uint64_t da, uint64_t db)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n256k256.s32.b1.b1.and.popc {"
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
                 "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
                 "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"
                 "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"
                 "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"
                 "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"
                 "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"
                 "}, %128, %129, 1;\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
                   "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]),
                   "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),
                   "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]),
                   "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]),
                   "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]),
                   "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]),
                   "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63]),
                   "+r"(d[64]), "+r"(d[65]), "+r"(d[66]), "+r"(d[67]), "+r"(d[68]), "+r"(d[69]), "+r"(d[70]), "+r"(d[71]),
                   "+r"(d[72]), "+r"(d[73]), "+r"(d[74]), "+r"(d[75]), "+r"(d[76]), "+r"(d[77]), "+r"(d[78]), "+r"(d[79]),
                   "+r"(d[80]), "+r"(d[81]), "+r"(d[82]), "+r"(d[83]), "+r"(d[84]), "+r"(d[85]), "+r"(d[86]), "+r"(d[87]),
                   "+r"(d[88]), "+r"(d[89]), "+r"(d[90]), "+r"(d[91]), "+r"(d[92]), "+r"(d[93]), "+r"(d[94]), "+r"(d[95]),
                   "+r"(d[96]), "+r"(d[97]), "+r"(d[98]), "+r"(d[99]), "+r"(d[100]), "+r"(d[101]), "+r"(d[102]), "+r"(d[103]),
                   "+r"(d[104]), "+r"(d[105]), "+r"(d[106]), "+r"(d[107]), "+r"(d[108]), "+r"(d[109]), "+r"(d[110]), "+r"(d[111]),
                   "+r"(d[112]), "+r"(d[113]), "+r"(d[114]), "+r"(d[115]), "+r"(d[116]), "+r"(d[117]), "+r"(d[118]), "+r"(d[119]),
                   "+r"(d[120]), "+r"(d[121]), "+r"(d[122]), "+r"(d[123]), "+r"(d[124]), "+r"(d[125]), "+r"(d[126]), "+r"(d[127])
                 : "l"(da), "l"(db));
}

#endif

} // namespace sm90
} // namespace pk_cuda

#endif
