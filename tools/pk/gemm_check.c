/* `pk gemm --check` (gemm_check.h). The reference converts op(A) and op(B)
 * to double once (exact for both dtypes), then sums row by row. */
#include "gemm_check.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double get(pk_dtype t, const void *p, int64_t i)
{
    return t == PK_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

/* op(X) (rows x cols) from X with leading dimension ld, as doubles. */
static double *op_matrix(pk_dtype t, const void *X, int64_t ld, int trans, int64_t rows,
                         int64_t cols)
{
    double *d = malloc((size_t)(rows * cols) * sizeof *d + 8);
    if (!d) return NULL;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            d[i * cols + j] = get(t, X, trans ? j * ld + i : i * ld + j);
    return d;
}

static double element_error(pk_dtype t, double c, long double ref, double den, double slack)
{
    const double rounded = t == PK_F32 ? (double)(float)ref : (double)ref;
    if (isnan(rounded) || isnan(c)) return isnan(rounded) && isnan(c) ? 0 : INFINITY;
    if (isinf(rounded) || isinf(c)) return rounded == c ? 0 : INFINITY;
    double diff = (double)fabsl((long double)c - ref) - slack;
    if (diff <= 0) return 0;
    return den > 0 ? diff / den : INFINITY;
}

double gemm_check_bytes(const gemm_check_args *g)
{
    return 8.0 * ((double)g->m * (double)g->k + (double)g->k * (double)g->n);
}

void gemm_check_nomem_text(char *buf, size_t len, const gemm_check_args *g)
{
    const double b = gemm_check_bytes(g);
    snprintf(buf, len, "--check: out of memory: its f64 reference of op(A) and op(B) needs "
             "%.1f %s; run without --check, or check a smaller product",
             b >= 1e9 ? b / 1e9 : b / 1e6, b >= 1e9 ? "GB" : "MB");
}

int gemm_max_rel_error(const gemm_check_args *g, double *err)
{
    const int64_t m = g->m, n = g->n, k = g->k;
    double *a = op_matrix(g->t, g->A, g->lda, g->ta, m, k);
    double *b = op_matrix(g->t, g->B, g->ldb, g->tb, k, n);
    const double slack = (double)(k + 2) * (g->t == PK_F32 ? FLT_MIN : DBL_MIN);
    double worst = 0;
    int nomem = !a || !b;
    /* nomem is shared: every thread reads one value after the barrier, so
     * that all of them take the loop's worksharing, or none */
#pragma omp parallel reduction(max : worst)
    {
        long double *sum = malloc((size_t)n * sizeof *sum + 16);
        double *sumd = malloc((size_t)n * sizeof *sumd + 8);
        double *mag = malloc((size_t)n * sizeof *mag + 8);
        if (!sum || !sumd || !mag) {
#pragma omp atomic write
            nomem = 1;
        }
#pragma omp barrier
        int skip;
#pragma omp atomic read
        skip = nomem;
        if (!skip) {
#pragma omp for schedule(dynamic, 1)
            for (int64_t i = 0; i < m; i++) {
                for (int64_t j = 0; j < n; j++) sum[j] = 0, sumd[j] = 0, mag[j] = 0;
                for (int64_t l = 0; l < k; l++) {
                    const double ail = a[i * k + l];
                    const double *brow = b + l * n;
                    if (g->t == PK_F32) { /* exact products, double sums */
                        for (int64_t j = 0; j < n; j++) {
                            const double p = ail * brow[j];
                            sumd[j] += p;
                            mag[j] += fabs(p);
                        }
                        continue;
                    }
                    for (int64_t j = 0; j < n; j++) {
                        sum[j] += (long double)ail * brow[j];
                        mag[j] += fabs(ail * brow[j]);
                    }
                }
                for (int64_t j = 0; j < n; j++) {
                    const double c0 = g->C0 ? get(g->t, g->C0, i * n + j) : 0;
                    if (g->t == PK_F32) sum[j] = sumd[j];
                    const long double ref = (long double)g->alpha * sum[j] +
                                            (g->C0 ? (long double)g->beta * c0 : 0);
                    const double den = fabs(g->alpha) * mag[j] + fabs(g->beta) * fabs(c0);
                    const double e = element_error(g->t, get(g->t, g->C, i * n + j), ref, den,
                                                   slack);
                    if (!(e <= worst)) worst = e;
                }
            }
        }
        free(sum);
        free(sumd);
        free(mag);
    }
    free(a);
    free(b);
    *err = worst;
    return nomem ? -1 : 0;
}

double gemm_error_bound(pk_dtype t, pk_gemm_mode mode, int64_t k)
{
    const double u = t == PK_F32 ? 0x1p-24 : 0x1p-53;
    const double v = mode == PK_GEMM_TF32 ? 0x1p-10 : 0;
    return 2 * ((double)(k + 2) * u + 2 * v);
}
