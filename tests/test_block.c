/* Block efficiency (src/block): the verifiers' conditional output laws
 * against their exact acceptance and against their own sampler, tuple by
 * tuple (with a planted wrong law rejected); depth 1 against the flat
 * per-position alpha; the exact recursion against an independent
 * enumeration of every draft outcome; sampled trees and plain simulation
 * against the exact route within 5 standard errors (fixed seeds); thread
 * invariance; the optimal token-level verifier above every verifier and
 * equal to 1 + alpha* at depth 1; the Markov file parser's refusals. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "block.h"
#include "testutil.h"
#include "verifier.h"

#define VMAX 5

/* A random Markov pair: every row from toy_pair (kind cycling through the
 * hard cases), or Dirichlet rows with full support when full. */
static void make_markov(gsl_rng *r, size_t V, unsigned kind, int full, mdsd_markov *m)
{
    m->V = V;
    m->p = malloc(V * V * sizeof *m->p);
    m->q = malloc(V * V * sizeof *m->q);
    for (size_t i = 0; i < V; i++) {
        if (full) {
            toy_distribution(r, TOY_DIRICHLET, V, m->p + i * V);
            toy_distribution(r, TOY_DIRICHLET, V, m->q + i * V);
            for (size_t x = 0; x < V; x++) { /* keep every token drawable */
                m->q[i * V + x] = 0.9 * m->q[i * V + x] + 0.1 / (double)V;
            }
        } else {
            toy_pair(r, kind + (unsigned)i, V, m->p + i * V, m->q + i * V);
        }
    }
}

/* Verifier, tree scheme and width of the combinations the suite covers. */
typedef struct {
    mdsd_verifier_kind v;
    mdsd_scheme_kind scheme;  /* of the tree policy; seq is iid */
    int seq;                  /* also run on the seq policy */
} combo;

static const combo combos[] = {
    {MDSD_VERIFIER_RRS, MDSD_SCHEME_IID, 1},   {MDSD_VERIFIER_KSEQ, MDSD_SCHEME_IID, 1},
    {MDSD_VERIFIER_IS, MDSD_SCHEME_IID, 1},    {MDSD_VERIFIER_OTM, MDSD_SCHEME_IID, 1},
    {MDSD_VERIFIER_RRSW, MDSD_SCHEME_WOR, 0},  {MDSD_VERIFIER_GREEDY, MDSD_SCHEME_GREEDY, 0},
    {MDSD_VERIFIER_SPECHUB, MDSD_SCHEME_HUB, 0}, {MDSD_VERIFIER_OTM, MDSD_SCHEME_WOR, 0},
};
#define NCOMBOS (sizeof combos / sizeof *combos)

static mdsd_policy seq_policy(size_t K, size_t L)
{
    mdsd_policy pol = {0};
    pol.kind = MDSD_POLICY_SEQ;
    pol.sequences = K;
    pol.depth = L;
    return pol;
}

static mdsd_policy tree_policy(mdsd_scheme_kind s, size_t L, const size_t *w)
{
    mdsd_policy pol = {0};
    pol.kind = MDSD_POLICY_TREE;
    pol.scheme = s;
    pol.depth = L;
    for (size_t d = 0; d < L; d++)
        pol.width[d] = s == MDSD_SCHEME_HUB ? 2 : w[d];
    return pol;
}

/* ---- the output laws --------------------------------------------------- */

/* Every verifier on its scheme: sum_x D(x) P(accept | x) is its exact alpha,
 * and no token is output more often than p allows. */
/* The audit variants (rrs-skipdup, spechub-hubaccept, rrsw-f32) reproduce
 * peers' implementations for comparison; they have an exact rate and a
 * sampler but no conditional law, and say so (MDSD_EUNSUPPORTED). */
static int law_expected(mdsd_verifier_kind kind)
{
    return kind != MDSD_VERIFIER_RRS_SKIPDUP && kind != MDSD_VERIFIER_SPECHUB_HUBACCEPT &&
           kind != MDSD_VERIFIER_RRSW_F32;
}

Test(block, law_integrates_to_exact_alpha)
{
    gsl_rng *r = mdsd_rng_alloc(15001);
    for (unsigned inst = 0; inst < 60; inst++) {
        size_t V = 3 + inst % 3, n = 1 + inst % 3;
        double p[VMAX], q[VMAX];
        toy_pair(r, inst, V, p, q);
        for (int k = 0; k < MDSD_VERIFIER_KINDS; k++) {
            mdsd_verifier_kind kind = (mdsd_verifier_kind)k;
            mdsd_scheme s = {mdsd_verifier_scheme(kind), kind == MDSD_VERIFIER_SD ? 1 : n, V, q,
                             NULL};
            if (kind == MDSD_VERIFIER_SPECHUB)
                s.n = 2;
            if (mdsd_verifier_check(kind, &s, NULL) != MDSD_OK)
                continue; /* e.g. wor with n > |supp q| */
            double alpha;
            if (mdsd_verifier_exact(kind, p, &s, NULL, &alpha, NULL, NULL) != MDSD_OK)
                continue;
            mdsd_verifier *v = mdsd_verifier_alloc(kind, p, &s, NULL, NULL);
            cr_assert(v, "alloc %s", mdsd_verifier_name(kind));
            if (!law_expected(kind)) {
                double py0[8];
                cr_assert_eq(mdsd_verifier_law(v, (int[8]){0}, py0, NULL), MDSD_EUNSUPPORTED);
                mdsd_verifier_free(v);
                continue;
            }
            mdsd_joint D;
            cr_assert_eq(mdsd_scheme_joint(&s, 1u << 20, &D, NULL), MDSD_OK);
            double acc = 0.0, out[VMAX] = {0}, py[8];
            for (size_t t = 0; t < D.count; t++) {
                const int *x = D.tokens + t * s.n;
                cr_assert_eq(mdsd_verifier_law(v, x, py, NULL), MDSD_OK);
                for (size_t j = 0; j < s.n; j++) {
                    int first = 1;
                    for (size_t l = 0; l < j; l++)
                        first &= x[l] != x[j];
                    cr_assert(py[j] >= 0.0 && py[j] <= 1.0 + 1e-12);
                    if (first) {
                        acc += D.prob[t] * py[j];
                        out[x[j]] += D.prob[t] * py[j];
                    }
                }
            }
            cr_assert(fabs(acc - alpha) <= 1e-9, "%s V=%zu n=%zu inst %u: law %.17g exact %.17g",
                      mdsd_verifier_name(kind), V, s.n, inst, acc, alpha);
            for (size_t y = 0; y < V; y++)
                cr_assert(out[y] <= p[y] + 1e-9, "%s: accepted token %zu beyond p",
                          mdsd_verifier_name(kind), y);
            mdsd_joint_free(&D);
            mdsd_verifier_free(v);
        }
    }
    gsl_rng_free(r);
}

/* Tuple by tuple against the verifier's own sampler: the frequency of
 * y == x_j over 40000 calls within 5 s.e. of the law; a law off by 0.03
 * (planted) is rejected by the same comparison. */
Test(block, law_matches_verify_per_tuple)
{
    gsl_rng *r = mdsd_rng_alloc(15002), *u = mdsd_rng_alloc(15003);
    const uint64_t T = 40000;
    int planted_caught = 0, planted_tried = 0;
    for (unsigned inst = 0; inst < 6; inst++) {
        size_t V = 4, n = 2 + inst % 2;
        double p[VMAX], q[VMAX];
        toy_distribution(r, TOY_DIRICHLET, V, p);
        toy_distribution(r, TOY_DIRICHLET, V, q);
        for (int k = 0; k < MDSD_VERIFIER_KINDS; k++) {
            mdsd_verifier_kind kind = (mdsd_verifier_kind)k;
            mdsd_scheme s = {mdsd_verifier_scheme(kind), kind == MDSD_VERIFIER_SD ? 1 : n, V, q,
                             NULL};
            if (kind == MDSD_VERIFIER_SPECHUB)
                s.n = 2;
            if (mdsd_verifier_check(kind, &s, NULL) != MDSD_OK)
                continue;
            if (!law_expected(kind))
                continue;
            mdsd_verifier *v = mdsd_verifier_alloc(kind, p, &s, NULL, NULL);
            cr_assert(v);
            mdsd_sampler *sm = mdsd_sampler_alloc(&s, NULL);
            for (int rep = 0; rep < 3; rep++) {
                int x[4], y, j;
                double py[4];
                mdsd_sampler_draw(sm, u, x);
                cr_assert_eq(mdsd_verifier_law(v, x, py, NULL), MDSD_OK);
                uint64_t hits[4] = {0};
                for (uint64_t t = 0; t < T; t++) {
                    y = mdsd_verifier_verify(v, x, u, &j);
                    for (size_t l = 0; l < s.n; l++)
                        hits[l] += y == x[l];
                }
                for (size_t l = 0; l < s.n; l++) {
                    char what[96];
                    snprintf(what, sizeof what, "%s tuple draft %zu", mdsd_verifier_name(kind), l);
                    test_assert_within_5se((double)hits[l] / (double)T, py[l], T, what);
                    double wrong = py[l] < 0.5 ? py[l] + 0.03 : py[l] - 0.03;
                    double se = sqrt(wrong * (1.0 - wrong) / (double)T);
                    planted_tried++;
                    planted_caught += fabs((double)hits[l] / (double)T - wrong) > 5.0 * se;
                }
            }
            mdsd_sampler_free(sm);
            mdsd_verifier_free(v);
        }
    }
    cr_assert_eq(planted_caught, planted_tried, "planted laws caught %d of %d", planted_caught,
                 planted_tried);
    gsl_rng_free(r);
    gsl_rng_free(u);
}

/* ---- exact route ------------------------------------------------------- */

/* Depth 1: E[tau] = 1 + the verifier's flat alpha at the root. */
Test(block, depth_one_is_one_plus_alpha)
{
    gsl_rng *r = mdsd_rng_alloc(15004);
    for (unsigned inst = 0; inst < 12; inst++) {
        size_t V = 3 + inst % 3;
        mdsd_markov m;
        make_markov(r, V, inst, inst % 2, &m);
        for (size_t c = 0; c < NCOMBOS; c++) {
            size_t w = 1 + inst % 3;
            mdsd_policy pol = combos[c].seq && inst % 2 ? seq_policy(w, 1)
                                                        : tree_policy(combos[c].scheme, 1, &w);
            mdsd_scheme s = {pol.kind == MDSD_POLICY_SEQ ? MDSD_SCHEME_IID : pol.scheme,
                             pol.kind == MDSD_POLICY_SEQ ? pol.sequences : pol.width[0], V, m.q,
                             NULL};
            if (mdsd_verifier_check(combos[c].v, &s, NULL) != MDSD_OK)
                continue;
            double alpha;
            if (mdsd_verifier_exact(combos[c].v, m.p, &s, NULL, &alpha, NULL, NULL) != MDSD_OK)
                continue;
            mdsd_block_result res;
            mdsd_err err;
            cr_assert_eq(mdsd_block_exact(&m, &pol, combos[c].v, NULL, &res, &err), MDSD_OK,
                         "%s", err.msg);
            cr_assert(fabs(res.tau - (1.0 + alpha)) <= 1e-12, "%s: %.17g vs 1 + %.17g",
                      mdsd_verifier_name(combos[c].v), res.tau, alpha);
            cr_assert(fabs(res.rate[1] - alpha) <= 1e-12);
        }
        mdsd_markov_free(&m);
    }
    gsl_rng_free(r);
}

/* Independent reference for seq: every assignment of the K sequences
 * (V^(K L) of them) weighted by its probability, the verifier's law applied
 * down the resulting tree by direct recursion (no memo, fresh verifiers). */
static double brute_accepted(const mdsd_markov *m, mdsd_verifier_kind kind, size_t K, size_t L,
                             const int (*seqs)[4], size_t d, int tok, const size_t *idx,
                             size_t mcount)
{
    if (d == L)
        return 0.0;
    int x[4];
    double py[4];
    for (size_t j = 0; j < mcount; j++)
        x[j] = seqs[idx[j]][d];
    mdsd_scheme s = {MDSD_SCHEME_IID, mcount, m->V, m->q + (size_t)tok * m->V, NULL};
    mdsd_verifier *v = mdsd_verifier_alloc(kind, m->p + (size_t)tok * m->V, &s, NULL, NULL);
    cr_assert(v);
    mdsd_verifier_law(v, x, py, NULL);
    mdsd_verifier_free(v);
    double total = 0.0;
    for (size_t j = 0; j < mcount; j++) {
        int first = 1;
        size_t sub[4], c = 0;
        for (size_t l = 0; l < mcount; l++) {
            if (x[l] == x[j]) {
                sub[c++] = idx[l];
                first &= l >= j;
            }
        }
        if (first && py[j] > 0.0)
            total += py[j] * (1.0 + brute_accepted(m, kind, K, L, seqs, d + 1, x[j], sub, c));
    }
    (void)K;
    return total;
}

Test(block, exact_matches_enumeration_of_every_draft)
{
    gsl_rng *r = mdsd_rng_alloc(15005);
    const mdsd_verifier_kind kinds[] = {MDSD_VERIFIER_RRS, MDSD_VERIFIER_KSEQ, MDSD_VERIFIER_IS,
                                        MDSD_VERIFIER_OTM};
    for (unsigned inst = 0; inst < 4; inst++) {
        size_t V = 3, K = 2, L = 2 + inst % 2;
        if (L == 3)
            V = 2;
        mdsd_markov m;
        make_markov(r, V, inst, inst % 2, &m);
        size_t cells = 1;
        for (size_t i = 0; i < K * L; i++)
            cells *= V;
        for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
            double expect = 0.0;
            for (size_t code = 0; code < cells; code++) {
                int seqs[4][4];
                size_t c = code;
                double prob = 1.0;
                for (size_t s = 0; s < K; s++) {
                    int prev = 0;
                    for (size_t d = 0; d < L; d++) {
                        seqs[s][d] = (int)(c % V);
                        c /= V;
                        prob *= m.q[(size_t)prev * V + (size_t)seqs[s][d]];
                        prev = seqs[s][d];
                    }
                }
                if (prob == 0.0)
                    continue;
                size_t idx[4] = {0, 1, 2, 3};
                expect += prob * brute_accepted(&m, kinds[k], K, L, (const int(*)[4])seqs, 0, 0,
                                                idx, K);
            }
            mdsd_policy pol = seq_policy(K, L);
            mdsd_block_result res;
            mdsd_err err;
            cr_assert_eq(mdsd_block_exact(&m, &pol, kinds[k], NULL, &res, &err), MDSD_OK, "%s",
                         err.msg);
            cr_assert(fabs(res.tau - 1.0 - expect) <= 1e-12, "%s inst %u: %.17g vs %.17g",
                      mdsd_verifier_name(kinds[k]), inst, res.tau, 1.0 + expect);
        }
        mdsd_markov_free(&m);
    }
    gsl_rng_free(r);
}

/* ---- sampled and simulated against exact -------------------------------- */

static void assert_within_5se(const mdsd_block_result *est, const mdsd_block_result *exact,
                              const char *what)
{
    double tol = 5.0 * est->se + 1e-12;
    cr_assert(fabs(est->tau - exact->tau) <= tol, "%s: %.9f vs exact %.9f (5 se = %.3g)", what,
              est->tau, exact->tau, tol);
}

static void routes_agree(int simulate, uint64_t trials, uint64_t seed0)
{
    gsl_rng *r = mdsd_rng_alloc(seed0);
    for (unsigned inst = 0; inst < 2; inst++) {
        size_t V = 3 + inst;
        mdsd_markov m;
        make_markov(r, V, inst, 1, &m);
        const size_t w[3] = {2, 2, 1 + inst};
        for (size_t c = 0; c < NCOMBOS; c++) {
            for (int asseq = 0; asseq <= combos[c].seq; asseq++) {
                mdsd_policy pol = asseq ? seq_policy(2 + inst, 3)
                                        : tree_policy(combos[c].scheme, 3, w);
                if (combos[c].scheme == MDSD_SCHEME_GREEDY && !asseq)
                    pol.width[2] = 2;
                mdsd_block_result ex, est;
                mdsd_block_opts o;
                mdsd_block_opts_init(&o);
                o.trials = trials;
                o.seed = seed0 + c;
                mdsd_err err;
                int rc = mdsd_block_exact(&m, &pol, combos[c].v, &o, &ex, &err);
                cr_assert_eq(rc, MDSD_OK, "%s: %s", mdsd_verifier_name(combos[c].v), err.msg);
                rc = (simulate ? mdsd_block_simulate : mdsd_block_sampled)(&m, &pol, combos[c].v,
                                                                           &o, &est, &err);
                cr_assert_eq(rc, MDSD_OK, "%s", err.msg);
                char what[128], desc[64];
                snprintf(what, sizeof what, "%s %s", mdsd_verifier_name(combos[c].v),
                         mdsd_policy_describe(&pol, desc, sizeof desc));
                assert_within_5se(&est, &ex, what);
            }
        }
        mdsd_markov_free(&m);
    }
    gsl_rng_free(r);
}

Test(block, sampled_trees_agree_with_exact)
{
    routes_agree(0, 20000, 15100);
}

Test(block, simulation_agrees_with_exact)
{
    routes_agree(1, 20000, 15200);
}

Test(block, sampled_is_thread_count_invariant)
{
    gsl_rng *r = mdsd_rng_alloc(15006);
    mdsd_markov m;
    make_markov(r, 4, 0, 1, &m);
    mdsd_policy pol = seq_policy(3, 3);
    mdsd_block_opts o;
    mdsd_block_opts_init(&o);
    o.trials = 3 * MDSD_BLOCK_TRIAL_BLOCK + 17;
    mdsd_block_result a, b;
    o.threads = 1;
    cr_assert_eq(mdsd_block_sampled(&m, &pol, MDSD_VERIFIER_KSEQ, &o, &a, NULL), MDSD_OK);
    o.threads = 3;
    cr_assert_eq(mdsd_block_sampled(&m, &pol, MDSD_VERIFIER_KSEQ, &o, &b, NULL), MDSD_OK);
    cr_assert(a.tau == b.tau && a.se == b.se && !memcmp(a.reach, b.reach, sizeof a.reach));
    mdsd_markov_free(&m);
    gsl_rng_free(r);
}

/* ---- the optimal token-level verifier ----------------------------------- */

Test(block, optimal_dominates_every_verifier)
{
    gsl_rng *r = mdsd_rng_alloc(15007);
    for (unsigned inst = 0; inst < 8; inst++) {
        size_t V = 3 + inst % 2;
        mdsd_markov m;
        make_markov(r, V, inst, inst % 2, &m);
        const size_t w[3] = {2, 2, 2};
        for (size_t c = 0; c < NCOMBOS; c++) {
            for (int asseq = 0; asseq <= combos[c].seq; asseq++) {
                mdsd_policy pol = asseq ? seq_policy(2, 3) : tree_policy(combos[c].scheme, 3, w);
                mdsd_block_result ex, opt;
                if (mdsd_block_exact(&m, &pol, combos[c].v, NULL, &ex, NULL) != MDSD_OK)
                    continue; /* a scheme the sparse rows cannot draw */
                cr_assert_eq(mdsd_block_optimal_token(&m, &pol, NULL, &opt, NULL), MDSD_OK);
                cr_assert(ex.tau <= opt.tau + 1e-9, "%s: %.17g above the optimum %.17g",
                          mdsd_verifier_name(combos[c].v), ex.tau, opt.tau);
            }
        }
        /* depth 1: the optimum is 1 + alpha* of the root (subset enumeration) */
        for (size_t n = 1; n <= 3; n++) {
            mdsd_policy pol = seq_policy(n, 1);
            mdsd_block_result opt;
            cr_assert_eq(mdsd_block_optimal_token(&m, &pol, NULL, &opt, NULL), MDSD_OK);
            mdsd_scheme s = {MDSD_SCHEME_IID, n, V, m.q, NULL};
            double star = test_alpha_star(m.p, &s);
            cr_assert(fabs(opt.tau - 1.0 - star) <= 1e-9, "n=%zu: %.17g vs 1 + %.17g", n,
                      opt.tau, star);
        }
        mdsd_markov_free(&m);
    }
    gsl_rng_free(r);
}

/* ---- Markov file parser ------------------------------------------------- */

static int read_text(const char *text, mdsd_err *err)
{
    char path[] = "/tmp/mdsd-test-markov-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    mdsd_markov m;
    int rc = mdsd_markov_read(path, &m, err);
    mdsd_markov_free(&m);
    unlink(path);
    return rc;
}

Test(block, markov_parser)
{
    mdsd_err err;
    cr_assert_eq(read_text("2\n0.5 0.5\n1 0\n\n0.5 0.5\n0 1\n", &err), MDSD_OK, "%s", err.msg);
    cr_assert_eq(read_text("2\n0.5 0.5\n1 0\n\n\n0.5 0.5\n0 1\n\n", &err), MDSD_OK);
    static const char *const bad[] = {
        "",                                       /* empty */
        "x\n",                                    /* V not a number */
        "0\n",                                    /* V = 0 */
        "2 3\n",                                  /* junk after V */
        "2\n0.5 0.5\n1 0\n0.5 0.5\n0 1\n",        /* no blank line */
        "2\n0.5 0.5\n\n1 0\n\n0.5 0.5\n0 1\n",    /* blank inside the target */
        "2\n0.5 0.5 0\n1 0\n\n0.5 0.5\n0 1\n",    /* too many values */
        "2\n0.5\n1 0\n\n0.5 0.5\n0 1\n",          /* too few values */
        "2\n0.5 0.6\n1 0\n\n0.5 0.5\n0 1\n",      /* not summing to 1 */
        "2\n0.5 0.5\n1 0\n\n-0.5 1.5\n0 1\n",     /* negative */
        "2\n0.5 nan\n1 0\n\n0.5 0.5\n0 1\n",      /* NaN */
        "2\n0.5 0.5x\n1 0\n\n0.5 0.5\n0 1\n",     /* junk in a number */
        "2\n0.5 0.5\n1 0\n\n0.5 0.5\n",           /* truncated draft */
        "2\n0.5 0.5\n1 0\n\n0.5 0.5\n0 1\n1 0\n", /* extra row */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = read_text(bad[i], &err);
        cr_assert_neq(rc, MDSD_OK, "case %zu accepted", i);
        cr_assert(strstr(err.msg, "/tmp/mdsd-test-markov-"), "case %zu: message '%s' names no "
                  "file", i, err.msg);
    }
}
