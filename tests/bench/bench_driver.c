/* bench_driver - mdsd's side of `make bench` (tests/bench/run_bench.py runs
 * it and the numpy/scipy peers of tests/bench/peers.py on the same inputs).
 * Not a test: timings only, printed as one JSON object per call.
 *
 *   gen FILE.f32 --vocab V --positions P [--seed S]
 *       LLM-like logit pairs: float32 [P][2][V], target then draft (the zipf
 *       family of bench_bound: z = -1.2 log(rank) + N(0, 0.5^2) over a random
 *       ranking, draft z + N(0, 1)).
 *   alpha FILE.f32 --vocab V --scheme iid|wor|greedy|none --n N [--temperature T]
 *       [--repeats R] [--full-sort 1]
 *       softmax of both rows (float logits -> double) and alpha* by sort-and-
 *       scan, every position, R times; median wall seconds of a pass, thread
 *       CPU seconds of the fastest pass, and the per-position values.
 *       --scheme none: the two softmaxes alone (the floor); --full-sort 1:
 *       iid through the full q/p order instead of the sort-free route.
 *   pq FILE.f32 --vocab V --position I [--temperature T] -o PQ.txt
 *       p and q of one position as text (%.17g, two lines) for the peers.
 *   lp PQ.txt --n N [--repeats R]
 *       alpha* of the iid scheme by our fastest exact route (auto) and by the
 *       full OTM LP through GLPK (lp-full): values and median seconds.
 *   mc PQ.txt --n N --trials K [--threads T] [--repeats R] [--seed S]
 *       Monte Carlo of the rrs verifier (mdsd_mc_run, no histogram) and its
 *       exact acceptance: estimate, standard error, trials per second.
 *   rrsw FILE.f32 --vocab V --n N [--temperature T] [--trials K] [--max-paths M]
 *       [--positions P]
 *       rrsw's exact rate (the certified interval, width <= 1e-9) at every
 *       position (the first P), the visit guard --max-paths (default 1e7)
 *       as the CLI's, softmax excluded: median and slowest thread CPU seconds,
 *       the widest interval, or the refusal; then what the table job did
 *       before, Monte Carlo with K trials (default 2,000) at every position:
 *       median seconds, and its z against the exact rate over the positions.
 *   flow FILE.f32 --vocab V --n N --method maxflow|lp-reduced|... [--temperature T]
 *       [--repeats R] [--max-tuples M]
 *       alpha* of the multi-drafter scheme: p = softmax of position 0's
 *       target row, drafter j = softmax of position j's draft row (the file
 *       needs n positions); the whole call as the CLI makes it (enumeration,
 *       set law, solve); no LP cost guard. Value and median seconds.
 *   bench_driver ot FILE --vocab V --n N [--temperature T] [--tuples K]
 *       per position (softmax excluded, one thread, CPU seconds, the
 *       fastest of --repeats passes): alpha* by sort-and-scan, the set-up of
 *       rrs, kseq and ot, and K draft tuples drawn and verified by ot; ot's
 *       acceptance against alpha* and the output's chi-square over the
 *       positions (cells of expected count >= 5 pooled). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_randist.h>

#include "mdsd.h"

static double wall(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *x, size_t n)
{
    qsort(x, n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "bench_driver %s: %s\n", what, msg);
    exit(1);
}

/* --name VALUE lookup in argv (NULL if absent). */
static const char *opt(int argc, char **argv, const char *name)
{
    for (int i = 2; i + 1 < argc; i++)
        if (!strcmp(argv[i], name))
            return argv[i + 1];
    return NULL;
}

static double opt_num(int argc, char **argv, const char *name, double dflt)
{
    const char *v = opt(argc, argv, name);
    return v ? strtod(v, NULL) : dflt;
}

static float *read_f32(const char *path, size_t V, size_t *positions)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("read", path);
    fseek(f, 0, SEEK_END);
    long bytes = ftell(f);
    fseek(f, 0, SEEK_SET);
    size_t n = (size_t)bytes / sizeof(float);
    if (n % (2 * V))
        die("read", "file size is not a multiple of 2 V floats");
    float *x = malloc(n * sizeof *x);
    if (!x || fread(x, sizeof *x, n, f) != n)
        die("read", path);
    fclose(f);
    *positions = n / (2 * V);
    return x;
}

static int cmd_gen(int argc, char **argv)
{
    size_t V = (size_t)opt_num(argc, argv, "--vocab", 32000);
    size_t P = (size_t)opt_num(argc, argv, "--positions", 32);
    gsl_rng *r = mdsd_rng_alloc((uint64_t)opt_num(argc, argv, "--seed", 1));
    float *x = malloc(2 * V * sizeof *x);
    size_t *rank = malloc(V * sizeof *rank);
    FILE *f = fopen(argv[2], "wb");
    if (!f || !x || !rank)
        die("gen", argv[2]);
    for (size_t pos = 0; pos < P; pos++) {
        for (size_t i = 0; i < V; i++)
            rank[i] = i + 1;
        gsl_ran_shuffle(r, rank, V, sizeof *rank);
        for (size_t i = 0; i < V; i++) {
            double z = -1.2 * log((double)rank[i]) + gsl_ran_gaussian(r, 0.5);
            x[i] = (float)z;
            x[V + i] = (float)(z + gsl_ran_gaussian(r, 1.0));
        }
        if (fwrite(x, sizeof *x, 2 * V, f) != 2 * V)
            die("gen", "write failed");
    }
    fclose(f);
    free(x), free(rank);
    gsl_rng_free(r);
    printf("{\"file\": \"%s\", \"V\": %zu, \"positions\": %zu}\n", argv[2], V, P);
    return 0;
}

static mdsd_scheme_kind scheme_of(const char *name)
{
    mdsd_scheme_kind k;
    mdsd_err err;
    if (mdsd_scheme_parse(name, &k, &err))
        die("scheme", err.msg);
    return k;
}

static int cmd_alpha(int argc, char **argv)
{
    size_t V = (size_t)opt_num(argc, argv, "--vocab", 32000), P;
    size_t n = (size_t)opt_num(argc, argv, "--n", 3);
    int repeats = (int)opt_num(argc, argv, "--repeats", 7);
    double T = opt_num(argc, argv, "--temperature", 0.7);
    const char *scheme = opt(argc, argv, "--scheme");
    bool floor_only = scheme && !strcmp(scheme, "none");
    mdsd_scheme_kind kind = scheme_of(scheme && !floor_only ? scheme : "iid");
    mdsd_bound_opts bo = {.full_sort = opt_num(argc, argv, "--full-sort", 0) != 0};
    float *x = read_f32(argv[2], V, &P);
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q), *values = malloc(P * sizeof *values);
    double *times = malloc((size_t)repeats * sizeof *times), best_cpu = INFINITY;
    mdsd_bound_workspace *ws = mdsd_bound_workspace_alloc(V, n, NULL);
    mdsd_err err;
    for (int rep = 0; rep < repeats; rep++) {
        double t0 = wall(), c0 = cpu();
        for (size_t pos = 0; pos < P; pos++) {
            const float *lp = x + 2 * pos * V, *lq = lp + V;
            if (mdsd_softmax_float(lp, V, T, p, "target", &err) ||
                mdsd_softmax_float(lq, V, T, q, "draft", &err))
                die("alpha", err.msg);
            if (floor_only) {
                values[pos] = p[0] + q[0];
                continue;
            }
            mdsd_scheme s = {kind, n, V, q, NULL};
            mdsd_bound_result res = {0};
            if (mdsd_bound_alpha(p, &s, MDSD_BOUND_SORT, &bo, ws, &res, &err))
                die("alpha", err.msg);
            values[pos] = res.alpha;
        }
        times[rep] = wall() - t0;
        best_cpu = fmin(best_cpu, cpu() - c0);
    }
    printf("{\"task\": \"alpha\", \"scheme\": \"%s\", \"n\": %zu, \"V\": %zu, \"positions\": %zu, "
           "\"repeats\": %d, \"median_seconds\": %.9g, \"best_cpu_seconds\": %.9g, \"values\": [",
           floor_only ? "none" : mdsd_scheme_name(kind), n, V, P, repeats, median(times, (size_t)repeats), best_cpu);
    for (size_t pos = 0; pos < P; pos++)
        printf("%s%.17g", pos ? ", " : "", values[pos]);
    printf("]}\n");
    mdsd_bound_workspace_free(ws);
    free(x), free(p), free(q), free(values), free(times);
    return 0;
}

static int cmd_pq(int argc, char **argv)
{
    size_t V = (size_t)opt_num(argc, argv, "--vocab", 32000), P;
    size_t pos = (size_t)opt_num(argc, argv, "--position", 0);
    double T = opt_num(argc, argv, "--temperature", 0.7);
    const char *out = opt(argc, argv, "-o");
    float *x = read_f32(argv[2], V, &P);
    if (pos >= P || !out)
        die("pq", "position out of range or no -o");
    double *pq = malloc(2 * V * sizeof *pq);
    mdsd_err err;
    if (mdsd_softmax_float(x + 2 * pos * V, V, T, pq, "target", &err) ||
        mdsd_softmax_float(x + 2 * pos * V + V, V, T, pq + V, "draft", &err))
        die("pq", err.msg);
    FILE *f = fopen(out, "w");
    if (!f)
        die("pq", out);
    for (int row = 0; row < 2; row++)
        for (size_t i = 0; i < V; i++)
            fprintf(f, "%.17g%c", pq[row * V + i], i + 1 < V ? ',' : '\n');
    fclose(f);
    free(x), free(pq);
    printf("{\"file\": \"%s\", \"V\": %zu}\n", out, V);
    return 0;
}

/* p, q from a two-line text file, validated as the CLI does. */
static void read_pq(const char *path, double **p, double **q, size_t *V)
{
    char *buf = NULL;
    size_t cap = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        die("read", path);
    double *rows[2];
    size_t len[2];
    mdsd_err err;
    for (int r = 0; r < 2; r++) {
        if (getline(&buf, &cap, f) < 0)
            die("read", "expected two lines (p, q)");
        buf[strcspn(buf, "\n")] = 0;
        if (mdsd_parse_vector(buf, r ? "q" : "p", &rows[r], &len[r], &err) ||
            mdsd_probs_validate(rows[r], len[r], r ? "q" : "p", &err))
            die("read", err.msg);
    }
    free(buf);
    fclose(f);
    if (len[0] != len[1])
        die("read", "p and q differ in length");
    *p = rows[0], *q = rows[1], *V = len[0];
}

static int cmd_lp(int argc, char **argv)
{
    double *p, *q;
    size_t V, n = (size_t)opt_num(argc, argv, "--n", 2);
    int repeats = (int)opt_num(argc, argv, "--repeats", 5);
    read_pq(argv[2], &p, &q, &V);
    mdsd_scheme s = {MDSD_SCHEME_IID, n, V, q, NULL};
    mdsd_bound_opts o = {.max_vars = (size_t)1 << 30, .max_tuples = (size_t)1 << 30};
    mdsd_bound_workspace *ws = mdsd_bound_workspace_alloc(V, n, NULL);
    mdsd_err err;
    mdsd_bound_result res = {0};
    /* the fast route: many calls per timing, it takes microseconds */
    enum { INNER = 2000 };
    double *t_auto = malloc((size_t)repeats * sizeof *t_auto), *t_lp = malloc((size_t)repeats * sizeof *t_lp);
    double a_auto = 0, a_lp = 0;
    mdsd_bound_method used = MDSD_BOUND_AUTO;
    for (int rep = 0; rep < repeats; rep++) {
        double t0 = wall();
        for (int k = 0; k < INNER; k++)
            if (mdsd_bound_alpha(p, &s, MDSD_BOUND_AUTO, &o, ws, &res, &err))
                die("lp", err.msg);
        t_auto[rep] = (wall() - t0) / INNER;
        a_auto = res.alpha, used = res.method;
    }
    for (int rep = 0; rep < repeats; rep++) {
        double t0 = wall();
        if (mdsd_bound_alpha(p, &s, MDSD_BOUND_LP_FULL, &o, ws, &res, &err))
            die("lp", err.msg);
        t_lp[rep] = wall() - t0;
        a_lp = res.alpha;
    }
    printf("{\"task\": \"lp\", \"V\": %zu, \"n\": %zu, \"auto_method\": \"%s\", \"auto_alpha\": %.17g, "
           "\"auto_seconds\": %.9g, \"glpk_alpha\": %.17g, \"glpk_seconds\": %.9g, \"glpk_vars\": %zu}\n",
           V, n, mdsd_bound_method_name(used), a_auto, median(t_auto, (size_t)repeats), a_lp,
           median(t_lp, (size_t)repeats), res.lp_vars);
    mdsd_bound_workspace_free(ws);
    free(p), free(q), free(t_auto), free(t_lp);
    return 0;
}

static int cmd_mc(int argc, char **argv)
{
    double *p, *q;
    size_t V, n = (size_t)opt_num(argc, argv, "--n", 3);
    int repeats = (int)opt_num(argc, argv, "--repeats", 5);
    read_pq(argv[2], &p, &q, &V);
    mdsd_scheme s = {MDSD_SCHEME_IID, n, V, q, NULL};
    mdsd_err err;
    double exact;
    if (mdsd_verifier_exact(MDSD_VERIFIER_RRS, p, &s, NULL, &exact, NULL, &err))
        die("mc", err.msg);
    mdsd_verifier *v = mdsd_verifier_alloc(MDSD_VERIFIER_RRS, p, &s, NULL, &err);
    if (!v)
        die("mc", err.msg);
    mdsd_mc_opts o;
    mdsd_mc_opts_init(&o);
    o.trials = (uint64_t)opt_num(argc, argv, "--trials", 4e6);
    o.threads = (int)opt_num(argc, argv, "--threads", 1);
    o.seed = (uint64_t)opt_num(argc, argv, "--seed", 1);
    o.histogram = false;
    double *t = malloc((size_t)repeats * sizeof *t);
    mdsd_mc_result res;
    for (int rep = 0; rep < repeats; rep++) {
        double t0 = wall();
        if (mdsd_mc_run(v, &o, &res, &err))
            die("mc", err.msg);
        t[rep] = wall() - t0;
        if (rep + 1 < repeats)
            mdsd_mc_result_free(&res);
    }
    double secs = median(t, (size_t)repeats);
    printf("{\"task\": \"mc\", \"V\": %zu, \"n\": %zu, \"trials\": %llu, \"threads\": %d, "
           "\"value\": %.17g, \"se\": %.9g, \"exact\": %.17g, \"median_seconds\": %.9g, "
           "\"trials_per_second\": %.9g}\n",
           V, n, (unsigned long long)o.trials, o.threads, res.alpha, res.se, exact, secs,
           (double)o.trials / secs);
    mdsd_mc_result_free(&res);
    mdsd_verifier_free(v);
    free(p), free(q), free(t);
    return 0;
}

static int cmd_rrsw(int argc, char **argv)
{
    size_t V = (size_t)opt_num(argc, argv, "--vocab", 32000), P;
    size_t n = (size_t)opt_num(argc, argv, "--n", 3);
    double T = opt_num(argc, argv, "--temperature", 0.7);
    uint64_t trials = (uint64_t)opt_num(argc, argv, "--trials", 2000);
    float *x = read_f32(argv[2], V, &P);
    size_t P_max = (size_t)opt_num(argc, argv, "--positions", (double)P);
    P = P_max < P ? P_max : P;
    mdsd_verifier_opts vo;
    mdsd_verifier_opts_init(&vo);
    vo.max_paths = opt_num(argc, argv, "--max-paths", 0.0); /* 0: the default guard */
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q), *t = malloc(P * sizeof *t);
    double *t_mc = malloc(P * sizeof *t_mc), *exact = malloc(P * sizeof *exact);
    double per_draft[64], widest = 0.0, mc_sum = 0.0, exact_sum = 0.0;
    mdsd_scheme s = {MDSD_SCHEME_WOR, n, V, q, NULL};
    mdsd_err err;
    for (size_t pos = 0; pos < P; pos++) {
        if (mdsd_softmax_float(x + 2 * pos * V, V, T, p, "target", &err) ||
            mdsd_softmax_float(x + 2 * pos * V + V, V, T, q, "draft", &err))
            die("rrsw", err.msg);
        double lo, hi, t0 = cpu();
        int rc = mdsd_verifier_exact_bounds(MDSD_VERIFIER_RRSW, p, &s, &vo, &exact[pos], per_draft,
                                            &lo, &hi, &err);
        t[pos] = cpu() - t0;
        if (rc) {
            printf("{\"task\": \"rrsw\", \"V\": %zu, \"n\": %zu, \"refused\": true, "
                   "\"seconds\": %.9g, \"message\": \"%s\"}\n", V, n, t[pos], err.msg);
            free(x), free(p), free(q), free(t), free(t_mc), free(exact);
            return 0;
        }
        widest = hi - lo > widest ? hi - lo : widest;
        mdsd_verifier *v = mdsd_verifier_alloc(MDSD_VERIFIER_RRSW, p, &s, NULL, &err);
        if (!v)
            die("rrsw", err.msg);
        mdsd_mc_opts o;
        mdsd_mc_opts_init(&o);
        o.trials = trials;
        o.threads = 1;
        o.seed = 1;
        o.position = pos;
        o.histogram = false;
        mdsd_mc_result res;
        t0 = cpu();
        if (mdsd_mc_run(v, &o, &res, &err))
            die("rrsw", err.msg);
        t_mc[pos] = cpu() - t0;
        mc_sum += res.alpha;
        exact_sum += exact[pos];
        mdsd_mc_result_free(&res);
        mdsd_verifier_free(v);
    }
    double var = 0.0;
    for (size_t pos = 0; pos < P; pos++)
        var += exact[pos] * (1.0 - exact[pos]) / (double)trials;
    double z = (mc_sum - exact_sum) / sqrt(var > 0.0 ? var : 1.0);
    double med = median(t, P), slowest = t[P - 1]; /* median sorts t */
    printf("{\"task\": \"rrsw\", \"V\": %zu, \"n\": %zu, \"refused\": false, \"positions\": %zu, "
           "\"median_seconds\": %.9g, \"slowest_seconds\": %.9g, \"positions_per_second\": %.9g, "
           "\"widest\": %.3g, \"mean_alpha\": %.12f, \"mc_trials\": %llu, \"mc_median_seconds\": "
           "%.9g, \"mc_z\": %.3f}\n",
           V, n, P, med, slowest, 1.0 / med, widest, exact_sum / (double)P,
           (unsigned long long)trials, median(t_mc, P), z);
    free(x), free(p), free(q), free(t), free(t_mc), free(exact);
    return 0;
}

static int cmd_flow(int argc, char **argv)
{
    size_t V = (size_t)opt_num(argc, argv, "--vocab", 100), positions;
    size_t n = (size_t)opt_num(argc, argv, "--n", 2);
    double T = opt_num(argc, argv, "--temperature", 0.7);
    int repeats = (int)opt_num(argc, argv, "--repeats", 3);
    const char *name = opt(argc, argv, "--method");
    mdsd_bound_method m;
    mdsd_err err;
    if (mdsd_bound_method_parse(name ? name : "maxflow", &m, &err))
        die("flow", err.msg);
    float *x = read_f32(argv[2], V, &positions);
    if (positions < n)
        die("flow", "the file has fewer positions than drafters");
    double *p = malloc(V * sizeof *p), *q = malloc(n * V * sizeof *q);
    if (mdsd_softmax_float(x, V, T, p, "target", &err))
        die("flow", err.msg);
    for (size_t j = 0; j < n; j++)
        if (mdsd_softmax_float(x + (2 * j + 1) * V, V, T, q + j * V, "draft", &err))
            die("flow", err.msg);
    mdsd_scheme s = {MDSD_SCHEME_MULTI, n, V, q, NULL};
    mdsd_bound_opts o = {.max_vars = (size_t)1 << 40, .lp_max_seconds = INFINITY,
                         .max_tuples = (size_t)opt_num(argc, argv, "--max-tuples", 0)};
    double *t = malloc((size_t)repeats * sizeof *t);
    mdsd_bound_result res = {0};
    for (int rep = 0; rep < repeats; rep++) {
        double t0 = wall();
        if (mdsd_bound_alpha(p, &s, m, &o, NULL, &res, &err))
            die("flow", err.msg);
        t[rep] = wall() - t0;
    }
    printf("{\"task\": \"flow\", \"scheme\": \"multi\", \"method\": \"%s\", \"V\": %zu, "
           "\"n\": %zu, \"alpha\": %.17g, \"median_seconds\": %.9g, \"sets\": %zu, "
           "\"lp_vars\": %zu, \"certificate_gap\": %.3g}\n",
           mdsd_bound_method_name(res.method), V, n, res.alpha, median(t, (size_t)repeats),
           res.maxflow_sets, res.lp_vars, res.maxflow_gap);
    free(x), free(p), free(q), free(t);
    return 0;
}

/* Per position: alpha* sort-free, rrs / kseq / ot set-up, K tuples through ot. */
static int cmd_ot(int argc, char **argv)
{
    size_t V = (size_t)opt_num(argc, argv, "--vocab", 32000), P;
    size_t n = (size_t)opt_num(argc, argv, "--n", 3);
    size_t tuples = (size_t)opt_num(argc, argv, "--tuples", 2000);
    int repeats = (int)opt_num(argc, argv, "--repeats", 3);
    double T = opt_num(argc, argv, "--temperature", 0.7);
    float *x = read_f32(argv[2], V, &P);
    double *p = malloc(P * V * sizeof *p), *q = malloc(P * V * sizeof *q);
    mdsd_err err;
    for (size_t pos = 0; pos < P; pos++)
        if (mdsd_softmax_float(x + 2 * pos * V, V, T, p + pos * V, "target", &err) ||
            mdsd_softmax_float(x + 2 * pos * V + V, V, T, q + pos * V, "draft", &err))
            die("ot", err.msg);
    mdsd_bound_workspace *ws = mdsd_bound_workspace_alloc(V, n, NULL);
    /* best CPU seconds of a pass over the positions: alpha*, rrs, kseq, ot, verify */
    double best[5] = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY}, worst_gap = 0.0;
    double chi = 0.0, accepted = 0.0;
    int *d = malloc(n * sizeof *d);
    uint64_t *hist = calloc(V, sizeof *hist);
    long dof = 0;
    gsl_rng *r = mdsd_rng_alloc(7);
    for (int rep = 0; rep < repeats; rep++) {
        double t[5] = {0};
        for (size_t pos = 0; pos < P; pos++) {
            mdsd_scheme s = {MDSD_SCHEME_IID, n, V, q + pos * V, NULL};
            const double *pp = p + pos * V;
            mdsd_bound_result res = {0};
            double c0 = cpu();
            if (mdsd_bound_alpha(pp, &s, MDSD_BOUND_SORT, NULL, ws, &res, &err))
                die("ot", err.msg);
            double c1 = cpu();
            mdsd_verifier *vr = mdsd_verifier_alloc(MDSD_VERIFIER_RRS, pp, &s, NULL, &err);
            double c2 = cpu();
            mdsd_verifier *vk = mdsd_verifier_alloc(MDSD_VERIFIER_KSEQ, pp, &s, NULL, &err);
            double c3 = cpu();
            mdsd_verifier *vo = mdsd_verifier_alloc(MDSD_VERIFIER_OT, pp, &s, NULL, &err);
            double c4 = cpu();
            if (!vr || !vk || !vo)
                die("ot", err.msg);
            mdsd_sampler *sm = mdsd_sampler_alloc(&s, &err);
            if (!sm)
                die("ot", err.msg);
            /* the drafts are drawn outside the clock; the verification inside */
            int *all = malloc(tuples * n * sizeof *all);
            for (size_t k = 0; k < tuples; k++)
                mdsd_sampler_draw(sm, r, all + k * n);
            double c5 = cpu();
            for (size_t k = 0; k < tuples; k++) {
                int j, y = mdsd_verifier_verify(vo, all + k * n, r, &j);
                if (rep == 0)
                    hist[y]++, accepted += j >= 0;
            }
            double c6 = cpu();
            double alpha, per[64];
            if (rep == 0) {
                if (mdsd_verifier_exact(MDSD_VERIFIER_OT, pp, &s, NULL, &alpha, per, &err))
                    die("ot", err.msg);
                worst_gap = fmax(worst_gap, fabs(alpha - res.alpha));
                double e = 0.0, o = 0.0; /* chi-square cells of expected count >= 5 */
                for (size_t v = 0; v < V; v++) {
                    e += pp[v] * (double)tuples, o += (double)hist[v];
                    hist[v] = 0;
                    if (e >= 5.0 || v + 1 == V) {
                        if (e > 0.0)
                            chi += (o - e) * (o - e) / e, dof++;
                        e = o = 0.0;
                    }
                }
                dof--;
            }
            t[0] += c1 - c0, t[1] += c2 - c1, t[2] += c3 - c2, t[3] += c4 - c3, t[4] += c6 - c5;
            free(all);
            mdsd_sampler_free(sm);
            mdsd_verifier_free(vr), mdsd_verifier_free(vk), mdsd_verifier_free(vo);
        }
        for (int k = 0; k < 5; k++)
            best[k] = fmin(best[k], t[k]);
    }
    printf("{\"task\": \"ot\", \"V\": %zu, \"n\": %zu, \"positions\": %zu, \"tuples\": %zu, "
           "\"alpha_seconds\": %.9g, \"rrs_setup_seconds\": %.9g, \"kseq_setup_seconds\": %.9g, "
           "\"ot_setup_seconds\": %.9g, \"ot_verify_seconds\": %.9g, \"worst_gap\": %.3g, "
           "\"acceptance\": %.6f, \"chi_square\": %.6g, \"dof\": %ld}\n",
           V, n, P, tuples, best[0] / P, best[1] / P, best[2] / P, best[3] / P,
           best[4] / (double)(P * tuples), worst_gap, accepted / (double)(P * tuples), chi, dof);
    gsl_rng_free(r);
    mdsd_bound_workspace_free(ws);
    free(x), free(p), free(q), free(d), free(hist);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_driver gen|alpha|pq|lp|mc|rrsw|flow|ot FILE [options] (see the source)\n");
        return 2;
    }
    if (!strcmp(argv[1], "gen"))
        return cmd_gen(argc, argv);
    if (!strcmp(argv[1], "alpha"))
        return cmd_alpha(argc, argv);
    if (!strcmp(argv[1], "pq"))
        return cmd_pq(argc, argv);
    if (!strcmp(argv[1], "lp"))
        return cmd_lp(argc, argv);
    if (!strcmp(argv[1], "mc"))
        return cmd_mc(argc, argv);
    if (!strcmp(argv[1], "rrsw"))
        return cmd_rrsw(argc, argv);
    if (!strcmp(argv[1], "flow"))
        return cmd_flow(argc, argv);
    if (!strcmp(argv[1], "ot"))
        return cmd_ot(argc, argv);
    fprintf(stderr, "bench_driver: unknown task '%s'\n", argv[1]);
    return 2;
}
