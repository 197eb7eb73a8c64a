#include "subset.h"

#include <stdint.h>
#include <stdlib.h>

int mdsd_subset_min(const double *p, size_t V, const mdsd_joint *D, size_t max_V,
                    double *fmin, unsigned char *H, mdsd_err *err)
{
    if (!max_V)
        max_V = MDSD_SUBSET_MAX_V;
    if (V > max_V || V > 30)
        return mdsd_fail_option(err, MDSD_ETOOBIG, MDSD_OPTION_METHOD,
                                "brute force over 2^V subsets: V = %zu is above the limit of %zu; use "
                                "`method sort` (iid, wor, greedy, hub, cps) or maxflow", V, max_V);
    if (V == 0)
        return mdsd_fail(err, MDSD_EINVAL, "brute force: empty vocabulary");
    size_t count = (size_t)1 << V;
    double *Q = calloc(count, sizeof *Q);
    if (!Q)
        return mdsd_fail(err, MDSD_ENOMEM, "brute force: out of memory for 2^%zu subsets", V);
    for (size_t t = 0; t < D->count; t++) {
        size_t mask = 0;
        for (size_t j = 0; j < D->n; j++) {
            int x = D->tokens[t * D->n + j];
            if (x < 0 || (size_t)x >= V) {
                free(Q);
                return mdsd_fail(err, MDSD_EINVAL,
                                 "brute force: tuple %zu has token %d outside [0, %zu)", t, x, V);
            }
            mask |= (size_t)1 << x;
        }
        Q[mask] += D->prob[t];
    }
    /* Zeta transform: afterwards Q[H] = sum over S subset of H of Dbar[S]. */
    for (size_t b = 0; b < V; b++) {
        size_t bit = (size_t)1 << b;
        for (size_t mask = 0; mask < count; mask++)
            if (mask & bit)
                Q[mask] += Q[mask ^ bit];
    }
    /* p(H) from two half tables, each a short exact-order sum. */
    size_t lo_bits = V / 2, hi_bits = V - lo_bits;
    double *plo = malloc(((size_t)1 << lo_bits) * sizeof *plo);
    double *phi = malloc(((size_t)1 << hi_bits) * sizeof *phi);
    if (!plo || !phi) {
        free(Q), free(plo), free(phi);
        return mdsd_fail(err, MDSD_ENOMEM, "brute force: out of memory");
    }
    for (size_t m = 0; m < ((size_t)1 << lo_bits); m++) {
        double s = 0.0;
        for (size_t x = 0; x < lo_bits; x++)
            if (m >> x & 1)
                s += p[x];
        plo[m] = s;
    }
    for (size_t m = 0; m < ((size_t)1 << hi_bits); m++) {
        double s = 0.0;
        for (size_t x = 0; x < hi_bits; x++)
            if (m >> x & 1)
                s += p[lo_bits + x];
        phi[m] = s;
    }
    size_t lo_mask = ((size_t)1 << lo_bits) - 1, best_mask = 0;
    double best = 0.0;
    for (size_t mask = 1; mask < count; mask++) {
        double f = plo[mask & lo_mask] + phi[mask >> lo_bits] - Q[mask];
        if (f < best)
            best = f, best_mask = mask;
    }
    if (H)
        for (size_t x = 0; x < V; x++)
            H[x] = best_mask >> x & 1;
    *fmin = best;
    free(Q), free(plo), free(phi);
    return MDSD_OK;
}
