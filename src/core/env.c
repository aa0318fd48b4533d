/* The one table of the environment variables pk reads (env.h). */
#include "env.h"

#include "internal.h"

#include <stdlib.h>

typedef struct {
    const char *name, *values, *what;
} knob;

static const knob knobs[PK__ENV_COUNT] = {
    [PK__ENV_BACKEND] = {"PK_BACKEND", "cpu|cuda|auto",
                         "the backend of PK_BACKEND_AUTO contexts (default: CUDA when a device "
                         "exists, else the CPU)"},
    [PK__ENV_CPU_ISA] = {"PK_CPU_ISA", "avx512|avx2|generic|reference|auto",
                         "the CPU SIMD path (default: the best this CPU has)"},
    [PK__ENV_CPU_PREFETCH] = {"PK_CPU_PREFETCH", "l1|l2|auto",
                              "the avx512 path's prefetch profile (default: l1 on Intel and "
                              "Zen 4, else l2)"},
    [PK__ENV_CACHE_DIR] = {"PK_CACHE_DIR", "a directory",
                           "the compiled-reducer cache (default: ${XDG_CACHE_HOME:-~/.cache}/pk)"},
    [PK__ENV_NVRTC_LIB] = {"PK_NVRTC_LIB", "a path",
                           "the NVRTC library to load (default: libnvrtc.so.13/.12/.so, "
                           "$CUDA_HOME/lib64, /usr/local/cuda/lib64)"},
    [PK__ENV_CUDA_LAUNCH] = {"PK_CUDA_LAUNCH", "runtime",
                             "launch kernels and query pointers through the CUDA runtime "
                             "instead of the driver API (same results; tests, timing)"},
    [PK__ENV_GEMM_SIMT_TMA] = {"PK_GEMM_SIMT_TMA", "always|big|never",
                               "CUDA FP32 GEMM: the copy-engine-fed kernel wherever usable, "
                               "its 256 x 128 tile (big), or never (same bits; tests, timing)"},
    [PK__ENV_GEMM_SIMT_RAW] = {"PK_GEMM_SIMT_RAW", "never",
                               "CUDA FP32 GEMM: the copy-engine kernel's 128 x 128 tile takes "
                               "every k-contiguous operand from a row-contiguous copy (tests)"},
    [PK__ENV_GEMM_ROW_COPY] = {"PK_GEMM_ROW_COPY", "always|never",
                               "CUDA FP32 GEMM: copy every k-contiguous operand row-contiguous "
                               "first, or none (same bits; tests)"},
    [PK__ENV_GEMM_TF32_PACK] = {"PK_GEMM_TF32_PACK", "always|a|b",
                                "Hopper TF32 GEMM: pack the row-contiguous operand (always), or "
                                "op(A) / op(B), instead of reading it in place (same bits; tests)"},
    [PK__ENV_BITS_WGMMA] = {"PK_BITS_WGMMA", "0",
                            "binary GEMM / Hamming: no wgmma kernel, mma.sync only (tests, "
                            "timing)"},
    [PK__ENV_BITS_SLAB] = {"PK_BITS_SLAB", "256",
                           "binary GEMM / Hamming: 256-bit slabs for every code length (tests)"},
    [PK__ENV_BITS_TMA_STORE] = {"PK_BITS_TMA_STORE", "0",
                                "binary GEMM / Hamming: per-thread stores instead of TMA (tests, "
                                "timing)"},
    [PK__ENV_DIST_PANEL] = {"PK_DIST_PANEL", "rows > 0",
                            "pk_dist_gemm's panel height (default: from k and the row size)"},
    [PK__ENV_DIST_TIMEOUT] = {"PK_DIST_TIMEOUT", "seconds >= 0",
                              "how long a pk_dist collective step waits for the other ranks "
                              "before PK_ERR_COMM (default 600; 0: for ever)"},
};

const char *pk__env(pk__env_id id)
{
    return (unsigned)id < PK__ENV_COUNT ? getenv(knobs[id].name) : NULL;
}

const char *pk__env_name(pk__env_id id)
{
    return (unsigned)id < PK__ENV_COUNT ? knobs[id].name : "?";
}

int pk_env_vars(pk_env_var *out, int max)
{
    for (int i = 0; out && i < max && i < PK__ENV_COUNT; i++) {
        out[i].name = knobs[i].name;
        out[i].values = knobs[i].values;
        out[i].what = knobs[i].what;
        out[i].value = getenv(knobs[i].name);
    }
    return PK__ENV_COUNT;
}
