/* Run-time choice of the CPU kernel table: the best path CPUID allows, or
 * the one PK_CPU_ISA names (avx512, avx2, generic, reference, auto). */
#include "cpu.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    const pk__cpu_kernels *table;
} isas[] = {
    {"avx512", &pk__cpu_kernels_avx512},
    {"avx2", &pk__cpu_kernels_avx2},
    {"generic", &pk__cpu_kernels_generic},
    {"reference", &pk__cpu_kernels_reference},
};
#define ISA_COUNT (int)(sizeof isas / sizeof *isas)

static bool isa_supported(int i)
{
    __builtin_cpu_init();
    switch (i) {
    case 0:
        return __builtin_cpu_supports("avx512f") &&
               __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("fma");
    case 1:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    default:
        return true;
    }
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const pk__cpu_kernels *chosen;
static pk_status choice_status;
static char choice_msg[256];

static void choose(void)
{
    int best = 0;
    while (!isa_supported(best)) best++;
    chosen = isas[best].table;
    const char *env = getenv("PK_CPU_ISA");
    if (!env || !*env || strcmp(env, "auto") == 0) return;
    for (int i = 0; i < ISA_COUNT; i++) {
        if (strcmp(env, isas[i].name) != 0) continue;
        if (!isa_supported(i)) {
            choice_status = PK_ERR_UNSUPPORTED;
            snprintf(choice_msg, sizeof choice_msg,
                     "PK_CPU_ISA=%s: this CPU lacks it (best: %s)", env,
                     isas[best].name);
            return;
        }
        chosen = isas[i].table;
        return;
    }
    choice_status = PK_ERR_ARG;
    snprintf(choice_msg, sizeof choice_msg,
             "PK_CPU_ISA=%s: expected avx512, avx2, generic, reference or auto",
             env);
}

const pk__cpu_kernels *pk__cpu_table(pk_ctx *ctx, pk_status *status)
{
    pthread_once(&once, choose);
    *status = choice_status;
    if (choice_status != PK_OK) pk__fail(ctx, choice_status, "%s", choice_msg);
    return chosen;
}

const char *pk_cpu_isa(void)
{
    pthread_once(&once, choose);
    return chosen->name;
}
