/* libFuzzer harness: the per-position entry points (alpha* by every route,
 * every verifier's exact rate and sampler) on instances built from the input
 * bytes, with invariants:
 *   - sort (or the closed forms) = brute force within 1e-9, the reduced LP
 *     within 1e-7, or a refusal that names its problem;
 *   - every valid verifier's exact rate is finite, >= 0 and <= alpha* of its
 *     scheme + 1e-9 (the audit variants are invalid by design and skipped);
 *   - sampled drafts and verified outputs are tokens in [0, V), and an
 *     accepted index points at a draft equal to the output.
 *   - with two more bytes (top-k 0..V, top-p code), both models are truncated
 *     first (MATH.md §0.3) and the cut checked: a nonempty prefix of the
 *     ranking, at most k tokens, summing to 1, reaching P on the top-k
 *     distribution unless every positive token is kept, and minimal.
 * Bytes: V (2..8), n (1..4), the scheme, a temperature code (1, 0.3, 0.05,
 * 0.01: wide logit gaps make subnormal masses), then 2V logits of one byte
 * each (0 = -inf, else value/4 - 30: gaps up to 64, ties when bytes repeat),
 * then optionally top-k and top-p (code c: c/255, 1 for 0 and 255, or one
 * ulp below 1 or 0.5 for c = 1 or 2).
 *
 *   build: `make fuzz` (every tests/fuzz/fuzz_*.c)
 *   run:   build/fuzz/fuzz_position -max_total_time=60 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "bound.h"
#include "dist.h"
#include "rng.h"
#include "scheme.h"
#include "verifier.h"

static const mdsd_scheme_kind kinds[] = {MDSD_SCHEME_IID, MDSD_SCHEME_WOR, MDSD_SCHEME_GREEDY,
                                         MDSD_SCHEME_HUB, MDSD_SCHEME_CPS};
static const double temps[] = {1.0, 0.3, 0.05, 0.01};

/* Truncates x in place and checks the cut (tolerances for rounding: the
 * library decides exactly, this harness in long double). */
static void truncate_checked(double *x, size_t V, size_t k, double P)
{
    double orig[8], step[8];
    memcpy(orig, x, V * sizeof *x);
    memcpy(step, x, V * sizeof *x);
    if (mdsd_truncate(step, V, k, 1.0, NULL) != MDSD_OK || mdsd_truncate(x, V, k, P, NULL) != MDSD_OK)
        abort(); /* a softmax output is a valid distribution */
    long double kept = 0.0L, last = 0.0L, sum = 0.0L;
    size_t count = 0, positive = 0;
    for (size_t i = 0; i < V; i++) {
        positive += step[i] > 0.0;
        sum += x[i];
        if (x[i] > 0.0) {
            count++, kept += step[i];
            if (step[i] <= 0.0)
                abort(); /* kept by top-p, dropped by top-k */
            if (last == 0.0L || step[i] < last)
                last = step[i];
        }
        for (size_t j = 0; j < V; j++)
            if (x[i] > 0.0 && x[j] == 0.0 && orig[j] > 0.0 &&
                (orig[j] > orig[i] || (orig[j] == orig[i] && j < i)))
                abort(); /* a dropped token ranks above a kept one */
    }
    if (count == 0 || (k > 0 && count > k) || fabsl(sum - 1.0L) > 1e-12L)
        abort();
    if (P < 1.0 && count < positive && kept < (long double)P - 1e-12L)
        abort(); /* stopped below P */
    if (P < 1.0 && count > 1 && kept - last >= (long double)P + 1e-12L)
        abort(); /* not the smallest such set */
}

static int audit_variant(mdsd_verifier_kind k)
{
    return k == MDSD_VERIFIER_RRS_SKIPDUP || k == MDSD_VERIFIER_SPECHUB_HUBACCEPT ||
           k == MDSD_VERIFIER_RRSW_F32;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    size_t V = 2 + data[0] % 7, n = 1 + data[1] % 4;
    mdsd_scheme_kind kind = kinds[data[2] % 5];
    double T = temps[data[3] % 4];
    if (kind == MDSD_SCHEME_HUB)
        n = 2;
    if (size < 4 + 2 * V)
        return 0;
    double lp[8], lq[8], p[8], q[8];
    for (size_t x = 0; x < V; x++) {
        lp[x] = data[4 + x] ? data[4 + x] / 4.0 - 30.0 : -INFINITY;
        lq[x] = data[4 + V + x] ? data[4 + V + x] / 4.0 - 30.0 : -INFINITY;
    }
    if (mdsd_softmax(lp, V, T, p, "p", NULL) || mdsd_softmax(lq, V, T, q, "q", NULL))
        return 0; /* every logit -inf: refused, fine */
    if (size >= 6 + 2 * V) {
        size_t k = data[4 + 2 * V] % (V + 1);
        unsigned c = data[5 + 2 * V];
        double P = c == 0 || c == 255 ? 1.0 : c == 1 ? nextafter(1.0, 0.0) : c == 2 ? 0.5 : c / 255.0;
        truncate_checked(p, V, k, P);
        truncate_checked(q, V, k, P);
    }
    mdsd_scheme s = {kind, n, V, q, NULL};
    if (mdsd_scheme_check(&s, NULL) != MDSD_OK)
        return 0;
    mdsd_err err;
    mdsd_bound_result brute = {0}, fast = {0}, lp_res = {0};
    if (mdsd_bound_alpha(p, &s, MDSD_BOUND_BRUTE, NULL, NULL, &brute, &err) != MDSD_OK)
        abort(); /* V <= 8: brute force always runs */
    int rc = mdsd_bound_alpha(p, &s, MDSD_BOUND_SORT, NULL, NULL, &fast, &err);
    if (rc == MDSD_OK && !(fabs(fast.alpha - brute.alpha) <= 1e-9))
        abort(); /* a wrong number */
    if (rc != MDSD_OK && err.msg[0] == '\0')
        abort();
    rc = mdsd_bound_alpha(p, &s, MDSD_BOUND_LP_REDUCED, NULL, NULL, &lp_res, &err);
    if (rc == MDSD_OK && !(fabs(lp_res.alpha - brute.alpha) <= 1e-7))
        abort();
    gsl_rng *r = mdsd_rng_alloc(data[0] + 256u * data[1]);
    for (int k = 0; k < MDSD_VERIFIER_KINDS; k++) {
        mdsd_verifier_kind vk = (mdsd_verifier_kind)k;
        if (audit_variant(vk) || mdsd_verifier_scheme(vk) != kind)
            continue;
        mdsd_scheme sv = s;
        if (vk == MDSD_VERIFIER_SD)
            sv.n = 1;
        if ((vk == MDSD_VERIFIER_OTM || vk == MDSD_VERIFIER_IS_FACE) && (V > 5 || n > 3))
            continue; /* LP per position: keep executions fast */
        if (mdsd_verifier_check(vk, &sv, NULL) != MDSD_OK)
            continue;
        double bound = brute.alpha;
        if (vk == MDSD_VERIFIER_SD) {
            mdsd_bound_result one = {0};
            if (mdsd_bound_alpha(p, &sv, MDSD_BOUND_BRUTE, NULL, NULL, &one, NULL) != MDSD_OK)
                abort();
            bound = one.alpha;
        }
        double rate, per[8];
        rc = mdsd_verifier_exact(vk, p, &sv, NULL, &rate, per, &err);
        if (rc == MDSD_OK && !(isfinite(rate) && rate >= 0.0 && rate <= bound + 1e-9))
            abort();
        mdsd_verifier *v = mdsd_verifier_alloc(vk, p, &sv, NULL, &err);
        mdsd_sampler *sm = mdsd_sampler_alloc(&sv, &err);
        for (int t = 0; v && sm && t < 8; t++) {
            int drafts[8], j;
            mdsd_sampler_draw(sm, r, drafts);
            for (size_t i = 0; i < sv.n; i++)
                if (drafts[i] < 0 || (size_t)drafts[i] >= V || q[drafts[i]] <= 0.0)
                    abort(); /* a draft the scheme cannot make */
            int y = mdsd_verifier_verify(v, drafts, r, &j);
            if (y < 0 || (size_t)y >= V || p[y] <= 0.0)
                abort(); /* an output the target cannot make */
            if (j >= 0 && ((size_t)j >= sv.n || drafts[j] != y))
                abort();
        }
        mdsd_sampler_free(sm);
        mdsd_verifier_free(v);
    }
    gsl_rng_free(r);
    return 0;
}
