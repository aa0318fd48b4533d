/* Run-time choice of the CPU kernel table: the best path CPUID allows, or
 * the one PK_CPU_ISA names (avx512, avx2, generic, reference, auto); on the
 * avx512 path, the prefetch profile of its whole-array loops and axis-0
 * sweeps (vec.h): "l1" on Intel and on AMD family 19h (Zen 4), "l2"
 * elsewhere, or what PK_CPU_PREFETCH names (l1, l2, auto). The profile moves
 * timings only, never results. */
#include "bits.h"
#include "cpu.h"
#include "kernels/udr_kernels.h"

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
static const char *prefetch_profile = "l2";

static int choose_isa(void)
{
    int best = 0;
    while (!isa_supported(best)) best++;
    const char *env = pk__env(PK__ENV_CPU_ISA);
    if (!env || !*env || strcmp(env, "auto") == 0) return best;
    for (int i = 0; i < ISA_COUNT; i++) {
        if (strcmp(env, isas[i].name) != 0) continue;
        if (!isa_supported(i)) {
            choice_status = PK_ERR_UNSUPPORTED;
            snprintf(choice_msg, sizeof choice_msg,
                     "PK_CPU_ISA=%s: this CPU lacks it (best: %s)", env,
                     isas[best].name);
            return best;
        }
        return i;
    }
    choice_status = PK_ERR_ARG;
    snprintf(choice_msg, sizeof choice_msg,
             "PK_CPU_ISA=%s: expected avx512, avx2, generic, reference or auto",
             env);
    return best;
}

/* 1: the "l1" profile (the avx512_l1 table). From DRAM, Intel's and Zen 4's
 * cores kept too few lines in flight with L2 hints alone in the whole-array
 * loops; Zen 5 lost speed to L1 hints. Zen 4's axis-0 sweeps gained from
 * hinting into L2 instead of L1 (vec.h; docs/ARCHITECTURE.md, "Prefetch
 * profile per CPU"). */
static int choose_l1_hints(int isa)
{
    const char *env = pk__env(PK__ENV_CPU_PREFETCH);
    int l1 = isa == 0 && (__builtin_cpu_is("intel") || __builtin_cpu_is("amdfam19h"));
    if (!env || !*env || strcmp(env, "auto") == 0) return l1;
    if (strcmp(env, "l2") == 0) return 0;
    if (strcmp(env, "l1") != 0) {
        choice_status = PK_ERR_ARG;
        snprintf(choice_msg, sizeof choice_msg,
                 "PK_CPU_PREFETCH=%s: expected l1, l2 or auto", env);
        return l1;
    }
    if (isa != 0) {
        choice_status = PK_ERR_UNSUPPORTED;
        snprintf(choice_msg, sizeof choice_msg,
                 "PK_CPU_PREFETCH=l1: only the avx512 path has it (path: %s)",
                 isas[isa].name);
        return 0;
    }
    return 1;
}

static int chosen_isa; /* index into isas */

static void choose(void)
{
    int isa = chosen_isa = choose_isa();
    int l1 = choice_status == PK_OK ? choose_l1_hints(isa) : 0;
    chosen = l1 ? &pk__cpu_kernels_avx512_l1 : isas[isa].table;
    prefetch_profile = l1 ? "l1" : "l2";
}

const pk__cpu_kernels *pk__cpu_table(pk_ctx *ctx, pk_status *status)
{
    pthread_once(&once, choose);
    *status = choice_status;
    if (choice_status != PK_OK) pk__fail(ctx, choice_status, "%s", choice_msg);
    return chosen;
}

const struct pk__udr_kernels *pk__cpu_udr_kernels(void)
{
    pthread_once(&once, choose);
    return chosen->udr;
}

/* The bit-matrix kernels of the chosen path: VPOPCNTDQ is a CPUID feature
 * of its own beside AVX-512, POPCNT beside the generic path. */
static const pk__bits_kernels *bits_chosen;

static void choose_bits(void)
{
    pthread_once(&once, choose);
    __builtin_cpu_init();
    const int isa = chosen_isa; /* avx512, avx2, generic, reference */
    if (isa == 0 && __builtin_cpu_supports("avx512vpopcntdq"))
        bits_chosen = &pk__bits_kernels_vpopcnt;
    else if (isa <= 1)
        bits_chosen = &pk__bits_kernels_avx2;
    else if (isa == 2 && __builtin_cpu_supports("popcnt"))
        bits_chosen = &pk__bits_kernels_popcnt;
    else
        bits_chosen = &pk__bits_kernels_reference;
}

const pk__bits_kernels *pk__bits_table(void)
{
    static pthread_once_t bits_once = PTHREAD_ONCE_INIT;
    pthread_once(&bits_once, choose_bits);
    return bits_chosen;
}

const char *pk_cpu_isa(void)
{
    pthread_once(&once, choose);
    return chosen->name;
}

const char *pk_cpu_prefetch(void)
{
    pthread_once(&once, choose);
    return prefetch_profile;
}
