/* The environment variables pk reads: one table (env.c), shown by `pk info`
 * and pk_env_vars. Library code reads them only through pk__env, so that a
 * knob cannot exist without its row (tests/env_check.sh checks it). */
#ifndef PK_ENV_H
#define PK_ENV_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pk__env_id {
    PK__ENV_BACKEND,
    PK__ENV_CPU_ISA,
    PK__ENV_CPU_PREFETCH,
    PK__ENV_CACHE_DIR,
    PK__ENV_NVRTC_LIB,
    PK__ENV_CUDA_LAUNCH,
    PK__ENV_GEMM_SIMT_TMA,
    PK__ENV_GEMM_SIMT_RAW,
    PK__ENV_GEMM_ROW_COPY,
    PK__ENV_GEMM_TF32_PACK,
    PK__ENV_BITS_WGMMA,
    PK__ENV_BITS_SLAB,
    PK__ENV_BITS_TMA_STORE,
    PK__ENV_DIST_PANEL,
    PK__ENV_DIST_TIMEOUT,
    PK__ENV_COUNT
} pk__env_id;

/* The variable's value, NULL when it is unset. */
const char *pk__env(pk__env_id id);
/* Its name ("PK_CPU_ISA"), for messages. */
const char *pk__env_name(pk__env_id id);

#ifdef __cplusplus
}
#endif
#endif
