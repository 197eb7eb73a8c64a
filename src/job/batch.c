#include "batch.h"
#include "batch_impl.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <omp.h>

#include "bound.h"
#include "csv.h"
#include "cluster.h"
#include "dist.h"
#include "dump.h"
#include "fnv.h"
#include "montecarlo.h"
#include "outfile.h"
#include "progress.h"
#include "rng.h"
#include "shard.h"

#define MAX_CELLS MDSD_BATCH_MAX_CELLS
/* Float logits per block of rows; two blocks are held (one read while the
 * other is evaluated), so memory is about 2 x this, whatever the dump's size. */
#define BLOCK_BYTES ((size_t)16 << 20)

typedef mdsd_batch_cell cell;
typedef mdsd_batch_plan plan;

/* Everything a worker needs to evaluate one row. */
typedef struct {
    const mdsd_batch_opts *o;
    const plan *pl;
    const char *label;   /* dump label for messages */
    size_t V;
    double T;
    uint64_t unit_seed;  /* seed mixed with the unit, for Monte Carlo */
    size_t fail_row;     /* test hook (see test_hook_row); SIZE_MAX = none */
    size_t row_offset;   /* rows of the dump's files before the one being read */
} unit_ctx;

typedef struct {
    double *p, *q;                 /* [V] */
    mdsd_bound_workspace *bound;   /* per-thread scratch of the alpha* solvers */
    uint64_t pq_tag;               /* bumped with each new (p, q): lets the alpha* cells
                                      of one position share the q/p order */
} worker;

/* ---- planning ------------------------------------------------------------- */

static void note(const mdsd_batch_opts *o, const char *fmt, const char *a, size_t n, const char *why)
{
    if (!o->note)
        return;
    char msg[768];
    snprintf(msg, sizeof msg, fmt, a, n, why);
    o->note(msg, o->note_ctx);
}

/* Whether scheme `kind` with n drafts is defined at all (with a full-support
 * q; a given position may still fail on support, which is then an error). */
static int scheme_applies(mdsd_scheme_kind kind, size_t n, const double *uniform, size_t V,
                          mdsd_err *err)
{
    mdsd_scheme s = {kind, n, V, uniform, NULL};
    return mdsd_scheme_check(&s, err);
}

static int find_bound_cell(const plan *pl, mdsd_scheme_kind kind, size_t n)
{
    for (size_t c = 0; c < pl->count; c++)
        if (pl->cells[c].verifier < 0 && pl->cells[c].scheme == kind && pl->cells[c].n == n)
            return (int)c;
    return -1;
}

static int add_cell(plan *pl, cell c, mdsd_err *err)
{
    if (pl->count == MAX_CELLS)
        return mdsd_fail(err, MDSD_ETOOBIG, "table: more than %d (n, scheme, method) rows per "
                         "temperature; split the job", MAX_CELLS);
    pl->cells[pl->count++] = c;
    if (c.n > pl->max_n)
        pl->max_n = c.n;
    return MDSD_OK;
}

static int add_bound(plan *pl, mdsd_scheme_kind kind, size_t n, mdsd_err *err)
{
    if (find_bound_cell(pl, kind, n) >= 0)
        return MDSD_OK;
    return add_cell(pl, (cell){n, kind, -1, -1}, err);
}

static int make_plan(const mdsd_batch_opts *o, size_t V, plan *pl, mdsd_err *err)
{
    memset(pl, 0, sizeof *pl);
    double *uniform = malloc(V * sizeof *uniform);
    if (!uniform)
        return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    for (size_t v = 0; v < V; v++)
        uniform[v] = 1.0 / (double)V;
    int rc = MDSD_OK;
    mdsd_err why;
    for (size_t k = 0; k < o->n_counts && rc == MDSD_OK; k++) {
        size_t n = o->draft_counts[k];
        for (size_t i = 0; i < o->n_schemes && rc == MDSD_OK; i++) {
            mdsd_scheme_kind kind = o->schemes[i];
            if (scheme_applies(kind, n, uniform, V, &why) == MDSD_OK)
                rc = add_bound(pl, kind, n, err);
            else
                note(o, "skipping the %s scheme at n = %zu: %s", mdsd_scheme_name(kind), n, why.msg);
        }
        for (size_t i = 0; i < o->n_verifiers && rc == MDSD_OK; i++) {
            mdsd_verifier_kind v = o->verifiers[i];
            mdsd_scheme s = {mdsd_verifier_scheme(v), n, V, uniform, NULL};
            if (mdsd_verifier_check(v, &s, &why) != MDSD_OK) {
                note(o, "skipping verifier %s at n = %zu: %s", mdsd_verifier_name(v), n, why.msg);
                continue;
            }
            if ((rc = add_bound(pl, s.kind, n, err)))
                break;
            rc = add_cell(pl, (cell){n, s.kind, (int)v, find_bound_cell(pl, s.kind, n)}, err);
        }
    }
    free(uniform);
    if (rc == MDSD_OK && pl->count == 0)
        rc = mdsd_fail(err, MDSD_EINVAL, "table: no (scheme, verifier, n) combination applies");
    if (rc == MDSD_OK && pl->max_n > MDSD_REPORT_MAX_DRAFTS)
        rc = mdsd_fail(err, MDSD_EINVAL, "table: n = %zu is above the limit of %d drafts", pl->max_n,
                       MDSD_REPORT_MAX_DRAFTS);
    return rc;
}

/* ---- one position --------------------------------------------------------- */

static int cell_bound(const unit_ctx *u, worker *w, const mdsd_scheme *s, double *alpha,
                      mdsd_err *err)
{
    mdsd_bound_result res = {0};
    mdsd_bound_opts opts = {.pq_tag = w->pq_tag};
    int rc = mdsd_bound_alpha(w->p, s, MDSD_BOUND_AUTO, &opts, w->bound, &res, err);
    *alpha = res.alpha;
    (void)u;
    return rc;
}

/* Monte Carlo for a verifier without an exact form at this size. */
static int cell_simulate(const unit_ctx *u, worker *w, mdsd_verifier_kind kind,
                         const mdsd_scheme *s, size_t row, double *alpha, double *per_draft,
                         mdsd_err *err)
{
    mdsd_err e;
    mdsd_err_clear(&e);
    mdsd_verifier *v = mdsd_verifier_alloc(kind, w->p, s, &u->o->verifier_opts, &e);
    if (!v)
        return mdsd_fail_from(err, &e, "table: verifier");
    mdsd_mc_opts mc;
    mdsd_mc_opts_init(&mc);
    mc.trials = u->o->trials;
    mc.seed = u->unit_seed;
    mc.position = row;
    mc.threads = 1; /* the rows are already spread over the threads */
    mc.histogram = false;
    mdsd_mc_result res;
    int rc = mdsd_mc_run(v, &mc, &res, err);
    if (rc == MDSD_OK) {
        *alpha = res.alpha;
        for (size_t j = 0; j < s->n; j++)
            per_draft[j] = (double)res.per_draft[j] / (double)res.trials;
        mdsd_mc_result_free(&res);
    }
    mdsd_verifier_free(v);
    return rc;
}

static int cell_verifier(const unit_ctx *u, worker *w, mdsd_verifier_kind kind,
                         const mdsd_scheme *s, size_t row, double *alpha, double *per_draft,
                         bool *exact, mdsd_err *err)
{
    *exact = false;
    if (u->o->simulate)
        return cell_simulate(u, w, kind, s, row, alpha, per_draft, err);
    int rc = mdsd_verifier_exact(kind, w->p, s, &u->o->verifier_opts, alpha, per_draft, err);
    *exact = rc == MDSD_OK;
    if ((rc == MDSD_EUNSUPPORTED || rc == MDSD_ETOOBIG) && u->o->trials > 0)
        rc = cell_simulate(u, w, kind, s, row, alpha, per_draft, err);
    else if (rc == MDSD_EUNSUPPORTED || rc == MDSD_ETOOBIG)
        rc = mdsd_fail(err, rc, "no exact acceptance at this size; pass --trials K for Monte Carlo");
    return rc;
}

static bool truncates(const mdsd_batch_opts *o)
{
    return o->top_k > 0 || (o->top_p > 0.0 && o->top_p < 1.0);
}

/* Decoding truncation (top-k, then top-p) of both models, as a decoder
 * applies it before speculative sampling. */
static int truncate_pair(const mdsd_batch_opts *o, worker *w, size_t V, mdsd_err *err)
{
    double top_p = o->top_p > 0.0 ? o->top_p : 1.0;
    int rc = mdsd_truncate(w->p, V, o->top_k, top_p, err);
    return rc ? rc : mdsd_truncate(w->q, V, o->top_k, top_p, err);
}

/* Evaluates every cell at one row: alpha[cells], per_draft[cells * max_n]. */
static int evaluate_row(const unit_ctx *u, worker *w, const float *target, const float *draft,
                        size_t row, double *alpha, double *per_draft, bool *exact, mdsd_err *err)
{
    if (row == u->fail_row)
        return mdsd_fail(err, MDSD_EINVAL, "%s, row %zu: failed on purpose (test hook "
                         "MDSD_TABLE_FAIL)", u->label, row);
    int rc = mdsd_softmax_float(target, u->V, u->T, w->p, "target", err);
    if (rc == MDSD_OK)
        rc = mdsd_softmax_float(draft, u->V, u->T, w->q, "draft", err);
    if (rc == MDSD_OK && truncates(u->o))
        rc = truncate_pair(u->o, w, u->V, err);
    w->pq_tag++;
    const plan *pl = u->pl;
    for (size_t c = 0; c < pl->count && rc == MDSD_OK; c++) {
        const cell *ce = &pl->cells[c];
        mdsd_scheme s = {ce->scheme, ce->n, u->V, w->q, NULL};
        double *pd = per_draft + c * pl->max_n;
        memset(pd, 0, pl->max_n * sizeof *pd);
        exact[c] = true;
        if (ce->verifier < 0)
            rc = cell_bound(u, w, &s, &alpha[c], err);
        else
            rc = cell_verifier(u, w, (mdsd_verifier_kind)ce->verifier, &s, row, &alpha[c], pd,
                               &exact[c], err);
        if (rc) {
            char what[600];
            snprintf(what, sizeof what, "%s", err->msg);
            mdsd_fail(err, rc, "%s, row %zu (T = %g, n = %zu, %s, %s): %s", u->label, row, u->T,
                      ce->n, mdsd_scheme_name(ce->scheme),
                      ce->verifier < 0 ? "alpha*" : mdsd_verifier_name((mdsd_verifier_kind)ce->verifier),
                      what);
        }
    }
    if (rc && strncmp(err->msg, u->label, strlen(u->label)) != 0) {
        char what[600];
        snprintf(what, sizeof what, "%s", err->msg);
        mdsd_fail(err, rc, "%s, row %zu (T = %g): %s", u->label, row, u->T, what);
    }
    return rc;
}

/* ---- one (dump, temperature) unit ----------------------------------------- */

/* A unit being accumulated: the fold of its closed samples, the open one,
 * and (shard jobs) the closed samples' lines. */
typedef struct {
    mdsd_batch_fold fold;
    mdsd_batch_group open;
    FILE *groups;        /* shard jobs: each closed sample as a line; NULL = none */
    size_t n_groups;
    size_t open_row;     /* the open sample's first row (rows before it are closed) */
    /* finer checkpoints (single-process jobs): the samples closed since the
     * last one, as lines; NULL = none */
    FILE *ckpt;
    char *ckpt_text;
    size_t ckpt_len, ckpt_groups;
} unit_acc;

/* Per-block results, filled in parallel, consumed in row order. */
typedef struct {
    size_t cap, cells, max_n;
    double *alpha;      /* [cap * cells] */
    double *per_draft;  /* [cap * cells * max_n] */
    bool *exact;        /* [cap * cells] */
    double *stats;      /* [cap * 3] entropy_p, entropy_q, tv (per-position output only) */
    int *rc;            /* [cap] */
    mdsd_err *err;      /* [cap] */
} block_results;

static void block_results_free(block_results *b)
{
    free(b->alpha), free(b->per_draft), free(b->exact), free(b->rc), free(b->err), free(b->stats);
}

static int block_results_alloc(block_results *b, size_t cap, const plan *pl, mdsd_err *err)
{
    b->cap = cap, b->cells = pl->count, b->max_n = pl->max_n;
    b->alpha = malloc(cap * pl->count * sizeof *b->alpha);
    b->per_draft = malloc(cap * pl->count * pl->max_n * sizeof *b->per_draft);
    b->exact = malloc(cap * pl->count * sizeof *b->exact);
    b->rc = malloc(cap * sizeof *b->rc);
    b->err = malloc(cap * sizeof *b->err);
    b->stats = malloc(cap * 3 * sizeof *b->stats);
    if (!b->alpha || !b->per_draft || !b->exact || !b->rc || !b->err || !b->stats) {
        block_results_free(b);
        return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory for a block of %zu rows", cap);
    }
    return MDSD_OK;
}

void mdsd_batch_group_reset(mdsd_batch_group *g, const mdsd_batch_plan *pl, long long sample)
{
    g->sample = sample;
    g->rows = 0;
    for (size_t c = 0; c < pl->count; c++) {
        mdsd_welford_init(&g->alpha[c]);
        mdsd_welford_init(&g->gap[c]);
        memset(g->per_draft[c], 0, sizeof g->per_draft[c]);
        g->exact[c] = true;
    }
}

void mdsd_batch_fold_init(mdsd_batch_fold *f, const mdsd_batch_plan *pl)
{
    for (size_t c = 0; c < pl->count; c++) {
        mdsd_cluster_init(&f->alpha[c]);
        mdsd_cluster_init(&f->gap[c]);
        memset(f->per_draft_sum[c], 0, sizeof f->per_draft_sum[c]);
        f->exact[c] = true;
    }
}

void mdsd_batch_fold_group(mdsd_batch_fold *f, const mdsd_batch_plan *pl, const mdsd_batch_group *g)
{
    if (g->rows == 0)
        return;
    for (size_t c = 0; c < pl->count; c++) {
        const cell *ce = &pl->cells[c];
        mdsd_cluster_add_group(&f->alpha[c], &g->alpha[c]);
        if (ce->verifier >= 0)
            mdsd_cluster_add_group(&f->gap[c], &g->gap[c]);
        for (size_t j = 0; j < ce->n; j++)
            f->per_draft_sum[c][j] += g->per_draft[c][j];
        f->exact[c] = f->exact[c] && g->exact[c];
    }
}

void mdsd_batch_group_write(FILE *out, const mdsd_batch_plan *pl, const mdsd_batch_group *g)
{
    fprintf(out, "g %lld %llu", g->sample, (unsigned long long)g->rows);
    for (size_t c = 0; c < pl->count; c++) {
        const cell *ce = &pl->cells[c];
        fprintf(out, " %a %a", g->alpha[c].mean, g->alpha[c].m2);
        if (ce->verifier >= 0) {
            fprintf(out, " %a %a", g->gap[c].mean, g->gap[c].m2);
            for (size_t j = 0; j < ce->n; j++)
                fprintf(out, " %a", g->per_draft[c][j]);
        }
        fprintf(out, " %d", g->exact[c] ? 1 : 0);
    }
    fputc('\n', out);
}

static bool parse_double(const char **s, double *x)
{
    char *end;
    *x = strtod(*s, &end);
    if (end == *s || (*end != ' ' && *end != '\n' && *end != '\0'))
        return false;
    *s = end;
    return true;
}

int mdsd_batch_group_parse(const char *line, const mdsd_batch_plan *pl, mdsd_batch_group *g)
{
    long long sample;
    unsigned long long rows;
    int used = 0;
    if (sscanf(line, "g %lld %llu%n", &sample, &rows, &used) != 2 || rows == 0)
        return MDSD_EFORMAT;
    mdsd_batch_group_reset(g, pl, sample);
    g->rows = rows;
    const char *s = line + used;
    for (size_t c = 0; c < pl->count; c++) {
        const cell *ce = &pl->cells[c];
        g->alpha[c].count = g->gap[c].count = rows;
        if (!parse_double(&s, &g->alpha[c].mean) || !parse_double(&s, &g->alpha[c].m2))
            return MDSD_EFORMAT;
        if (ce->verifier >= 0) {
            if (!parse_double(&s, &g->gap[c].mean) || !parse_double(&s, &g->gap[c].m2))
                return MDSD_EFORMAT;
            for (size_t j = 0; j < ce->n; j++)
                if (!parse_double(&s, &g->per_draft[c][j]))
                    return MDSD_EFORMAT;
        }
        int flag, n = 0;
        if (sscanf(s, " %d%n", &flag, &n) != 1 || (flag != 0 && flag != 1))
            return MDSD_EFORMAT;
        g->exact[c] = flag == 1;
        s += n;
    }
    return *s == '\n' || *s == '\0' ? MDSD_OK : MDSD_EFORMAT;
}

/* Closes the open sample: folded, and (shard jobs) written as a line. */
static void close_group(unit_acc *acc, const plan *pl)
{
    if (acc->open.rows == 0)
        return;
    mdsd_batch_fold_group(&acc->fold, pl, &acc->open);
    if (acc->groups)
        mdsd_batch_group_write(acc->groups, pl, &acc->open);
    if (acc->ckpt)
        mdsd_batch_group_write(acc->ckpt, pl, &acc->open), acc->ckpt_groups++;
    acc->n_groups++;
    acc->open.rows = 0;
}

static void accumulate(unit_acc *acc, const plan *pl, const block_results *br, size_t i,
                       long long sample, size_t row)
{
    if (acc->open.rows == 0 || sample != acc->open.sample) {
        close_group(acc, pl);
        mdsd_batch_group_reset(&acc->open, pl, sample);
        acc->open_row = row;
    }
    mdsd_batch_group *g = &acc->open;
    const double *alpha = br->alpha + i * pl->count;
    g->rows++;
    for (size_t c = 0; c < pl->count; c++) {
        const cell *ce = &pl->cells[c];
        mdsd_welford_add(&g->alpha[c], alpha[c]);
        if (ce->verifier >= 0)
            mdsd_welford_add(&g->gap[c], alpha[c] - alpha[ce->bound_cell]);
        for (size_t j = 0; j < ce->n; j++)
            g->per_draft[c][j] += br->per_draft[(i * pl->count + c) * pl->max_n + j];
        g->exact[c] = g->exact[c] && br->exact[i * pl->count + c];
    }
}

void mdsd_batch_finish_rows(const mdsd_batch_fold *f, const mdsd_batch_plan *pl, const char *label,
                            double T, mdsd_report_row *out)
{
    for (size_t c = 0; c < pl->count; c++) {
        const cell *ce = &pl->cells[c];
        mdsd_report_row *r = &out[c];
        memset(r, 0, sizeof *r);
        snprintf(r->dump, sizeof r->dump, "%s", label);
        r->temperature = T;
        r->n = ce->n;
        snprintf(r->scheme, sizeof r->scheme, "%s", mdsd_scheme_name(ce->scheme));
        snprintf(r->method, sizeof r->method, "%s",
                 ce->verifier < 0 ? "bound" : mdsd_verifier_name((mdsd_verifier_kind)ce->verifier));
        r->alpha = mdsd_cluster_mean(&f->alpha[c]);
        r->se = mdsd_cluster_stderr(&f->alpha[c]);
        r->gap = ce->verifier < 0 ? NAN : mdsd_cluster_mean(&f->gap[c]);
        r->gap_se = ce->verifier < 0 ? NAN : mdsd_cluster_stderr(&f->gap[c]);
        r->positions = (size_t)mdsd_cluster_count(&f->alpha[c]);
        r->samples = (size_t)mdsd_cluster_groups(&f->alpha[c]);
        r->exact = f->exact[c];
        r->n_per_draft = ce->verifier < 0 ? 0 : ce->n;
        for (size_t j = 0; j < r->n_per_draft; j++)
            r->per_draft[j] = f->per_draft_sum[c][j] / (double)r->positions;
    }
}

/* One column of the table: a dump with one of its drafters. */
typedef struct {
    mdsd_dump *dump;          /* the first file's (V, drafters) */
    int draft;                /* drafter index in the dump */
    /* A dump split across files (a directory, mdsd_dump_parts): its files'
     * dumps, drafter indices and first rows in the concatenation ([n_parts + 1]);
     * one file: n_parts = 1. Rows are numbered across the files. */
    size_t n_parts;
    mdsd_dump **parts;
    int *part_draft;
    size_t *part_row0;
    char label[512];          /* dump label, ":drafter" when several drafters are compared */
    size_t begin, end;        /* rows */
    size_t index;             /* job index: a stream coordinate for Monte Carlo */
    size_t all_begin, all_end; /* shard jobs: the rows of every shard (begin, end: this one's) */
    struct per_position_out *per_position; /* NULL = no per-position output */
} dump_job;

/* ---- per-position output (--per-position) --------------------------------- */

/* The rows are streamed to PERPOS.partial, renamed to PERPOS when the job
 * succeeds. Every marker of the results' .partial file (a finished unit, a
 * finer checkpoint) is preceded by "#perpos bytes=N fnv1a=H": the length and
 * FNV-1a hash of the per-position stream that the marker covers (synced
 * first). --resume checks the stream against the last marker's record,
 * truncates it there and goes on appending, so the file equals an
 * uninterrupted run's byte for byte. */
typedef struct per_position_out {
    FILE *f;
    char path[4096];      /* final name */
    char partial[4200];   /* PERPOS.partial */
    size_t bytes;         /* written so far, and their hash */
    uint64_t hash;
    size_t mark_bytes;    /* up to the open sample's first row (what a */
    uint64_t mark_hash;   /* finer checkpoint covers) */
} per_position_out;

/* A "#perpos" record: the per-position stream a marker covers. */
typedef struct {
    bool set;
    size_t bytes;
    uint64_t hash;
} perpos_mark;

static int perpos_mark_write(FILE *partial, const perpos_mark *mark)
{
    return !mark || !mark->set ? 0
           : fprintf(partial, "#perpos bytes=%zu fnv1a=%016llx\n", mark->bytes,
                     (unsigned long long)mark->hash) < 0;
}

/* Flushes and syncs the stream: the bytes a marker records must be on disk first. */
static int per_position_sync(per_position_out *pp, mdsd_err *err)
{
    if (fflush(pp->f) != 0 || ferror(pp->f) || fsync(fileno(pp->f)) != 0)
        return mdsd_fail(err, MDSD_EIO, "error writing '%s': %s", pp->partial, strerror(errno));
    return MDSD_OK;
}

static void per_position_write(per_position_out *pp, const char *text, size_t len)
{
    fwrite(text, 1, len, pp->f);
    pp->hash = mdsd_fnv1a(pp->hash, text, len);
    pp->bytes += len;
}

/* Entropies (nats) of p and q and their total variation distance. */
static void position_stats(const double *p, const double *q, size_t V, double out[3])
{
    double hp = 0, hq = 0, tv = 0;
    for (size_t v = 0; v < V; v++) {
        if (p[v] > 0)
            hp -= p[v] * log(p[v]);
        if (q[v] > 0)
            hq -= q[v] * log(q[v]);
        tv += fabs(p[v] - q[v]);
    }
    out[0] = hp, out[1] = hq, out[2] = 0.5 * tv;
}

/* Starts PERPOS.partial afresh (header), or with from->set (--resume) checks
 * that its first from->bytes bytes hash to from->hash, drops the rest and
 * appends after them. */
static int per_position_open(per_position_out *pp, const char *path, const plan *pl,
                             const perpos_mark *from, const char *results_partial, mdsd_err *err)
{
    memset(pp, 0, sizeof *pp);
    snprintf(pp->path, sizeof pp->path, "%s", path);
    snprintf(pp->partial, sizeof pp->partial, "%s.partial", path);
    pp->hash = MDSD_FNV_OFFSET;
    if (from && from->set) {
        if (!(pp->f = fopen(pp->partial, "r+")))
            return mdsd_fail(err, errno == ENOENT ? MDSD_EFORMAT : MDSD_EIO, "cannot read '%s' (the "
                             "per-position rows that '%s' records): %s; pass --discard-partial to start "
                             "over", pp->partial, results_partial, strerror(errno));
        char buf[65536];
        size_t left = from->bytes, got;
        while (left > 0 && (got = fread(buf, 1, left < sizeof buf ? left : sizeof buf, pp->f)) > 0)
            pp->hash = mdsd_fnv1a(pp->hash, buf, got), left -= got;
        pp->bytes = from->bytes - left;
        if (left > 0 || pp->hash != from->hash) {
            fclose(pp->f);
            pp->f = NULL;
            return mdsd_fail(err, MDSD_EFORMAT, "'%s': its per-position rows do not match the checkpoint "
                             "in '%s' (%zu bytes with FNV-1a %016llx recorded; the file is shorter or "
                             "was altered); pass --discard-partial to start over", pp->partial,
                             results_partial, from->bytes, (unsigned long long)from->hash);
        }
        if (fflush(pp->f) != 0 || ftruncate(fileno(pp->f), (off_t)from->bytes) != 0 ||
            fseeko(pp->f, (off_t)from->bytes, SEEK_SET) != 0) {
            fclose(pp->f);
            pp->f = NULL;
            return mdsd_fail(err, MDSD_EIO, "cannot truncate '%s': %s", pp->partial, strerror(errno));
        }
        pp->mark_bytes = pp->bytes, pp->mark_hash = pp->hash;
        return MDSD_OK;
    }
    if (!(pp->f = fopen(pp->partial, "w")))
        return mdsd_fail(err, MDSD_EIO, "cannot write '%s': %s", pp->partial, strerror(errno));
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        fclose(pp->f);
        pp->f = NULL;
        return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    }
    fputs("dump,temperature,row,sample,position,entropy_p,entropy_q,tv", f);
    for (size_t c = 0; c < pl->count; c++) {
        const cell *ce = &pl->cells[c];
        if (ce->verifier < 0)
            fprintf(f, ",alpha_star_%s_n%zu", mdsd_scheme_name(ce->scheme), ce->n);
        else
            fprintf(f, ",rate_%s_n%zu", mdsd_verifier_name((mdsd_verifier_kind)ce->verifier), ce->n);
    }
    fputc('\n', f);
    fclose(f);
    per_position_write(pp, text, len);
    free(text);
    pp->mark_bytes = pp->bytes, pp->mark_hash = pp->hash;
    return MDSD_OK;
}

/* A block's rows; open_row (the open sample's first row, after the block was
 * accumulated): where a finer checkpoint would end, marked if in this block. */
static int per_position_rows(per_position_out *pp, const plan *pl, const char *label, double T,
                             size_t row_offset, const mdsd_dump_block *b, size_t rows,
                             const block_results *br, size_t open_row, mdsd_err *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    for (size_t i = 0; i < rows; i++) {
        if (row_offset + b->row0 + i == open_row) {
            fflush(f);
            pp->mark_bytes = pp->bytes + len, pp->mark_hash = mdsd_fnv1a(pp->hash, text, len);
        }
        mdsd_csv_write_field(f, label);
        const double *st = br->stats + 3 * i;
        fprintf(f, ",%.10g,%zu,%d,%d,%.12g,%.12g,%.12g", T, row_offset + b->row0 + i, b->sample_id[i],
                b->position[i], st[0], st[1], st[2]);
        for (size_t c = 0; c < pl->count; c++)
            fprintf(f, ",%.12g", br->alpha[i * pl->count + c]);
        fputc('\n', f);
    }
    if (fclose(f) != 0) {
        free(text);
        return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    }
    per_position_write(pp, text, len);
    free(text);
    return MDSD_OK;
}

/* The next block to read while one is evaluated. */
typedef struct {
    mdsd_dump *dump;
    mdsd_dump_block *block; /* NULL: nothing to read */
    size_t row0;
    int rc;
    mdsd_err err;
} prefetch;

/* Evaluates one block's rows in parallel, while one thread first reads the
 * next block (HDF5 is called from that thread only); returns the first
 * failing row's error (the read's error is left in pf). */
static int evaluate_block(const unit_ctx *u, worker *workers, const mdsd_dump_block *b,
                          size_t rows, block_results *br, prefetch *pf, mdsd_err *err)
{
    size_t V = u->V, cells = u->pl->count, max_n = u->pl->max_n;
    int threads = u->o->threads > 0 ? u->o->threads : omp_get_max_threads();
    pf->rc = MDSD_OK;
#pragma omp parallel num_threads(threads)
    {
#pragma omp single nowait
        if (pf->block)
            pf->rc = mdsd_dump_block_read(pf->dump, pf->block, pf->row0, 1, &pf->err);
#pragma omp for schedule(dynamic, 4)
        for (size_t i = 0; i < rows; i++) {
            worker *w = &workers[omp_get_thread_num()];
            mdsd_err_clear(&br->err[i]);
            br->rc[i] = evaluate_row(u, w, b->target + i * V, b->draft[0] + i * V,
                                     u->row_offset + b->row0 + i,
                                     br->alpha + i * cells, br->per_draft + i * cells * max_n,
                                     br->exact + i * cells, &br->err[i]);
            if (u->o->per_position && br->rc[i] == MDSD_OK)
                position_stats(w->p, w->q, V, br->stats + 3 * i);
        }
    }
    for (size_t i = 0; i < rows; i++)
        if (br->rc[i]) {
            *err = br->err[i];
            return br->rc[i];
        }
    return MDSD_OK;
}

/* The streaming validation of a block's metadata (the logits were checked
 * when the block was read): the rows [b->row0, b->row0 + rows) only. */
static int check_block_meta(mdsd_dump *d, const mdsd_dump_block *b, size_t rows,
                            mdsd_dump_meta_check *meta, mdsd_err *err)
{
    mdsd_dump_block part = *b;
    part.rows = rows;
    return mdsd_dump_check_meta(d, &part, meta, err);
}

/* Test hook (tests/test_scale.c): MDSD_TABLE_FAIL=COLUMN:ROW makes that
 * row of that dump column fail as a bad row would, so that a test can stop
 * one shard or rank after others have finished units. */
static size_t test_hook_row(size_t column)
{
    const char *spec = getenv("MDSD_TABLE_FAIL");
    unsigned long long c, r;
    if (!spec || sscanf(spec, "%llu:%llu", &c, &r) != 2 || c != column)
        return SIZE_MAX;
    return (size_t)r;
}

/* A sample's key in the fold: its id, made distinct per file of a split
 * dump (a sample never spans two files). */
static long long sample_key(size_t part, int sample)
{
    return part == 0 ? (long long)sample : (long long)(((uint64_t)part << 32) | (uint32_t)sample);
}

/* Finer checkpoints than a unit (single-process jobs): every `seconds`
 * (after a block of rows), the samples closed since the last checkpoint go
 * to the .partial file as their summary lines and a marker
 * "#checkpoint LABEL,T next=R groups=K fnv1a=H" (R: the first row not
 * covered), synced; --resume folds them back (the same bits) and goes on
 * from row R. */
typedef struct {
    FILE *partial;
    const char *key;
    double seconds;       /* < 0: after every block */
    double last;          /* time of the last checkpoint */
    per_position_out *pp; /* NULL = no per-position output */
} unit_checkpoint;

static int checkpoint_write(FILE *partial, const char *key, const char *text, size_t len,
                            size_t groups, size_t next, const perpos_mark *mark, mdsd_err *err)
{
    uint64_t hash = mdsd_fnv1a(MDSD_FNV_OFFSET, text, len);
    if (fwrite(text, 1, len, partial) != len || perpos_mark_write(partial, mark) ||
        fprintf(partial, "#checkpoint %s next=%zu groups=%zu fnv1a=%016llx\n", key, next, groups,
                (unsigned long long)hash) < 0 ||
        fflush(partial) != 0 || fsync(fileno(partial)) != 0)
        return mdsd_fail(err, MDSD_EIO, "error writing the partial results: %s", strerror(errno));
    return MDSD_OK;
}

static int checkpoint_maybe(unit_acc *acc, unit_checkpoint *ck, mdsd_err *err)
{
    if (!ck || !acc->ckpt || acc->ckpt_groups == 0 ||
        (ck->seconds >= 0 && omp_get_wtime() - ck->last < ck->seconds))
        return MDSD_OK;
    if (fflush(acc->ckpt) != 0)
        return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    perpos_mark mark = {false, 0, 0};
    if (ck->pp) {
        int rc = per_position_sync(ck->pp, err);
        if (rc)
            return rc;
        mark = (perpos_mark){true, ck->pp->mark_bytes, ck->pp->mark_hash};
    }
    int rc = checkpoint_write(ck->partial, ck->key, acc->ckpt_text, acc->ckpt_len, acc->ckpt_groups,
                              acc->open_row, &mark, err);
    fclose(acc->ckpt);
    free(acc->ckpt_text);
    acc->ckpt_text = NULL, acc->ckpt_len = 0, acc->ckpt_groups = 0;
    acc->ckpt = open_memstream(&acc->ckpt_text, &acc->ckpt_len);
    if (rc == MDSD_OK && !acc->ckpt)
        rc = mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    ck->last = omp_get_wtime();
    return rc;
}

/* Test hook (tests/test_scale.c): MDSD_TABLE_BLOCK_ROWS=K reads K rows per
 * block, so that a small dump has several blocks (and checkpoints). */
static size_t block_rows_cap(size_t cap)
{
    const char *spec = getenv("MDSD_TABLE_BLOCK_ROWS");
    unsigned long long k;
    if (spec && sscanf(spec, "%llu", &k) == 1 && k > 0 && k < cap)
        return (size_t)k;
    return cap;
}

/* Rows [begin, end) of file p of the dump (its own row numbers), into acc. */
static int run_part(unit_ctx *u, const dump_job *job, size_t p, size_t begin, size_t end,
                    worker *workers, block_results *br, unit_acc *acc, mdsd_progress *progress,
                    unit_checkpoint *ck, mdsd_err *err)
{
    mdsd_dump *d = job->parts[p];
    size_t cap = block_rows_cap(mdsd_dump_block_rows(d, 1, BLOCK_BYTES));
    cap = cap < br->cap ? cap : br->cap;
    const plan *pl = u->pl;
    mdsd_err e;
    mdsd_err_clear(&e);
    mdsd_dump_block *blk[2] = {mdsd_dump_block_alloc(d, cap, 1, &job->part_draft[p], &e), NULL};
    if (blk[0])
        blk[1] = mdsd_dump_block_alloc(d, cap, 1, &job->part_draft[p], &e);
    int rc = !blk[0] || !blk[1] ? mdsd_fail_from(err, &e, "table: row block") : MDSD_OK;
    u->row_offset = job->part_row0[p];
    if (rc == MDSD_OK)
        rc = mdsd_dump_block_read(d, blk[0], begin, 1, err);
    mdsd_dump_meta_check meta;
    mdsd_dump_meta_check_init(&meta);
    size_t k = 0;
    for (size_t row0 = begin; row0 < end && rc == MDSD_OK; row0 += cap, k++) {
        mdsd_dump_block *b = blk[k % 2];
        size_t rows = b->rows < end - row0 ? b->rows : end - row0;
        prefetch pf = {d, row0 + cap < end ? blk[(k + 1) % 2] : NULL, row0 + cap, MDSD_OK, {0}};
        if ((rc = check_block_meta(d, b, rows, &meta, err)))
            break;
        if ((rc = evaluate_block(u, workers, b, rows, br, &pf, err)))
            break;
        for (size_t i = 0; i < rows; i++)
            accumulate(acc, pl, br, i, sample_key(p, b->sample_id[i]), u->row_offset + b->row0 + i);
        if (job->per_position &&
            (rc = per_position_rows(job->per_position, pl, job->label, u->T, u->row_offset, b, rows,
                                    br, acc->open_row, err)))
            break;
        mdsd_progress_add(progress, rows);
        if (pf.rc) {
            *err = pf.err;
            rc = pf.rc;
        }
        if (rc == MDSD_OK)
            rc = checkpoint_maybe(acc, ck, err);
    }
    /* a dump rewritten while it was read gives void results */
    if (rc == MDSD_OK)
        rc = mdsd_dump_check_unchanged(d, err);
    mdsd_dump_block_free(blk[0]);
    mdsd_dump_block_free(blk[1]);
    return rc;
}

/* A unit's checkpointed part read back (read_partial). */
typedef struct {
    char key[600];
    char *text;           /* the summary lines */
    size_t len, groups, next;
} unit_progress;

typedef struct {
    unit_progress *items;
    size_t count;
} progress_list;

static unit_progress *progress_find(const progress_list *l, const char *key)
{
    for (size_t i = 0; l && i < l->count; i++)
        if (!strcmp(l->items[i].key, key))
            return &l->items[i];
    return NULL;
}

/* Folds a checkpointed part of a unit back into acc; the next row to run. */
static int resume_progress(const unit_progress *from, const plan *pl, const dump_job *job,
                           const char *path, unit_acc *acc, size_t *next, mdsd_err *err)
{
    mdsd_batch_group *g = malloc(sizeof *g);
    if (!g)
        return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    int rc = MDSD_OK;
    size_t rows = 0;
    for (const char *s = from->text; rc == MDSD_OK && s < from->text + from->len;
         s += strcspn(s, "\n") + 1) {
        if (mdsd_batch_group_parse(s, pl, g) != MDSD_OK)
            rc = mdsd_fail(err, MDSD_EFORMAT, "'%s.partial': unit %s: a checkpointed sample summary is "
                           "not one of this job's cells; pass --discard-partial to start over", path,
                           from->key);
        else
            mdsd_batch_fold_group(&acc->fold, pl, g), acc->n_groups++, rows += g->rows;
    }
    free(g);
    if (rc == MDSD_OK && (from->next <= job->begin || from->next > job->end ||
                          rows != from->next - job->begin))
        rc = mdsd_fail(err, MDSD_EFORMAT, "'%s.partial': unit %s: its checkpoint covers %zu rows up to "
                       "row %zu, not the job's rows from %zu; pass --discard-partial to start over", path,
                       from->key, rows, from->next, job->begin);
    *next = from->next;
    return rc;
}

static int run_unit(const mdsd_batch_opts *o, const plan *pl, const dump_job *job, double T,
                    size_t t_index, worker *workers, mdsd_progress *progress, FILE *groups,
                    size_t *n_groups, const unit_progress *from, unit_checkpoint *ck,
                    mdsd_report_row *rows_out, mdsd_err *err)
{
    unit_ctx u = {o, pl, job->label, job->dump->V, T,
                  mdsd_seed_mix(o->seed, job->index, t_index), test_hook_row(job->index), 0};
    size_t cap = 0;
    for (size_t p = 0; p < job->n_parts; p++) {
        size_t c = block_rows_cap(mdsd_dump_block_rows(job->parts[p], 1, BLOCK_BYTES));
        cap = c > cap ? c : cap;
    }
    unit_acc *acc = calloc(1, sizeof *acc);
    block_results br = {0};
    int rc = !acc ? mdsd_fail(err, MDSD_ENOMEM, "table: out of memory")
                  : block_results_alloc(&br, cap, pl, err);
    size_t start = job->begin;
    if (rc == MDSD_OK) {
        mdsd_batch_fold_init(&acc->fold, pl);
        acc->groups = groups;
        if (ck && !(acc->ckpt = open_memstream(&acc->ckpt_text, &acc->ckpt_len)))
            rc = mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    }
    if (rc == MDSD_OK && from && (rc = resume_progress(from, pl, job, o->output, acc, &start, err)) == MDSD_OK)
        mdsd_progress_skip(progress, start - job->begin);
    /* the files that hold rows [start, end); a shard may hold none */
    for (size_t p = 0; p < job->n_parts && rc == MDSD_OK; p++) {
        size_t lo = job->part_row0[p], hi = job->part_row0[p + 1];
        size_t b = start > lo ? start : lo, e = job->end < hi ? job->end : hi;
        if (b < e)
            rc = run_part(&u, job, p, b - lo, e - lo, workers, &br, acc, progress, ck, err);
    }
    if (rc == MDSD_OK) {
        close_group(acc, pl);
        mdsd_batch_finish_rows(&acc->fold, pl, job->label, T, rows_out);
        if (n_groups)
            *n_groups = acc->n_groups;
    }
    block_results_free(&br);
    if (acc && acc->ckpt)
        fclose(acc->ckpt);
    if (acc)
        free(acc->ckpt_text);
    free(acc);
    return rc;
}

/* ---- up-front cost warning ----------------------------------------------- */

static double seconds_now(void)
{
    return omp_get_wtime();
}

/* Warns (through o->note) about each verifier cell that will run by Monte
 * Carlo at the dump's V, with its cost measured on a probe position where
 * every draft is rejected (p uniform on half the vocabulary, q on the other
 * half: each trial draws all n drafts and then the residual), a few trials
 * scaled to --trials: a Monte-Carlo verifier costs trials x (n draws + a
 * verification) per position, which at large V can be far above the single
 * pass of the exact ones (rrsw at V = 32,000: about 3 rows/s with 2,000
 * trials). The estimate is for that verifier alone. */
static void warn_monte_carlo(const mdsd_batch_opts *o, const plan *pl, size_t V, size_t positions)
{
    if (!o->note || o->trials == 0 || V < 2)
        return;
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    if (!p || !q) {
        free(p), free(q);
        return;
    }
    size_t half = V / 2;
    for (size_t v = 0; v < V; v++) {
        p[v] = v < half ? 1.0 / (double)half : 0.0;
        q[v] = v < half ? 0.0 : 1.0 / (double)(V - half);
    }
    for (size_t c = 0; c < pl->count; c++) {
        const cell *ce = &pl->cells[c];
        if (ce->verifier < 0)
            continue;
        mdsd_verifier_kind kind = (mdsd_verifier_kind)ce->verifier;
        mdsd_scheme s = {ce->scheme, ce->n, V, q, NULL};
        mdsd_err err;
        double alpha, per_draft[MDSD_REPORT_MAX_DRAFTS];
        int rc = o->simulate ? MDSD_EUNSUPPORTED
                             : mdsd_verifier_exact(kind, p, &s, &o->verifier_opts, &alpha, per_draft, &err);
        if (rc != MDSD_EUNSUPPORTED && rc != MDSD_ETOOBIG)
            continue;
        mdsd_verifier *v = mdsd_verifier_alloc(kind, p, &s, &o->verifier_opts, &err);
        if (!v)
            continue;
        mdsd_mc_opts mc;
        mdsd_mc_opts_init(&mc);
        mc.trials = o->trials < 64 ? o->trials : 64;
        mc.threads = 1;
        mc.histogram = false;
        mdsd_mc_result res;
        double t0 = seconds_now();
        rc = mdsd_mc_run(v, &mc, &res, &err);
        double per_position = (seconds_now() - t0) * (double)o->trials / (double)mc.trials;
        mdsd_verifier_free(v);
        if (rc)
            continue;
        mdsd_mc_result_free(&res);
        int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
        double total = per_position * (double)positions / (double)threads;
        char msg[768];
        snprintf(msg, sizeof msg, "verifier %s at n = %zu has no exact form at V = %zu and runs by Monte "
                 "Carlo, %llu trials per position: up to about %.3g s per position (%.3g rows/s per "
                 "thread, measured on a probe position where every draft is rejected), so up to about "
                 "%.2g %s for this verifier alone over the %zu positions x temperatures on %d thread%s%s",
                 mdsd_verifier_name(kind), ce->n, V, (unsigned long long)o->trials, per_position,
                 1.0 / per_position, total > 3600 ? total / 3600 : total > 60 ? total / 60 : total,
                 total > 3600 ? "hours" : total > 60 ? "minutes" : "seconds", positions, threads,
                 threads == 1 ? "" : "s",
                 total > 60 ? ". Lower --trials, subsample with --positions a:b, or leave it out" : "");
        o->note(msg, o->note_ctx);
    }
    free(p), free(q);
}

/* ---- resumable job -------------------------------------------------------- */

typedef struct {
    mdsd_report_row *rows;
    size_t count, cap;
} row_list;

static int row_list_push(row_list *l, const mdsd_report_row *r, size_t k, mdsd_err *err)
{
    if (l->count + k > l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        while (cap < l->count + k)
            cap *= 2;
        mdsd_report_row *rows = realloc(l->rows, cap * sizeof *rows);
        if (!rows)
            return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
        l->rows = rows;
        l->cap = cap;
    }
    memcpy(l->rows + l->count, r, k * sizeof *r);
    l->count += k;
    return MDSD_OK;
}

/* The first line of the .partial file: resuming is refused unless the job is
 * the same one. Version 2: units carry their row count and hash. */
static void job_signature(const mdsd_batch_opts *o, const plan *pl, char *sig, size_t size)
{
    size_t len = (size_t)snprintf(sig, size,
                                  "#mdsd-table 2 trials=%llu%s seed=%llu rows=%zu:%zu top-k=%zu top-p=%.17g "
                                  "is-top=%zu draft=",
                                  (unsigned long long)o->trials, o->simulate ? " simulate" : "",
                                  (unsigned long long)o->seed, o->row_begin, o->row_end, o->top_k,
                                  o->top_p > 0.0 ? o->top_p : 1.0, o->verifier_opts.is_top);
    for (size_t i = 0; i < o->n_draft_models && len < size; i++)
        len += (size_t)snprintf(sig + len, size - len, "%s%s", i ? "," : "", o->draft_models[i]);
    len += (size_t)snprintf(sig + len, size - len, " cells=");
    for (size_t c = 0; c < pl->count && len < size; c++)
        len += (size_t)snprintf(sig + len, size - len, "%zu/%s/%d;", pl->cells[c].n,
                                mdsd_scheme_name(pl->cells[c].scheme), pl->cells[c].verifier);
    for (size_t i = 0; i < o->n_dumps && len < size; i++)
        len += (size_t)snprintf(sig + len, size - len, " %s", o->dumps[i]);
}

static bool unit_done(const row_list *done, const char *label, double T)
{
    for (size_t i = 0; i < done->count; i++)
        if (!strcmp(done->rows[i].dump, label) && done->rows[i].temperature == T)
            return true;
    return false;
}

/* ---- the .partial file: units with their row count and hash --------------- */


/* "LABEL,T": how a unit is named in its marker and in messages. */
static void unit_key(const mdsd_report_row *r, char *key, size_t size)
{
    snprintf(key, size, "%s,%.10g", r->dump, r->temperature);
}

/* One unit being read back: its rows since the last marker. */
typedef struct {
    row_list rows;
    uint64_t hash;
} partial_unit;

/* Checks the rows read since the last marker against the marker line
 * "#done KEY rows=K fnv1a=H"; on success moves them to done. */
static int accept_unit(const char *path, size_t lineno, const char *marker, partial_unit *u,
                       size_t cells, row_list *done, mdsd_err *err)
{
    const char *rows_at = strstr(marker, " rows=");
    for (const char *next; rows_at && (next = strstr(rows_at + 1, " rows=")); rows_at = next)
        ;
    unsigned long long k, h;
    int end = 0;
    if (strncmp(marker, "#done ", 6) != 0 || !rows_at ||
        sscanf(rows_at, " rows=%llu fnv1a=%16llx%n", &k, &h, &end) != 2 ||
        (rows_at[end] != '\n' && rows_at[end] != '\0'))
        return mdsd_fail(err, MDSD_EFORMAT, "'%s', line %zu: a unit marker without its row count and "
                         "checksum; resume with the mdsd that wrote it, or pass --discard-partial to "
                         "start over", path, lineno);
    char key[600];
    snprintf(key, sizeof key, "%.*s", (int)(rows_at - (marker + 6)), marker + 6);
    const char *fix = "pass --discard-partial to start over";
    if (k != u->rows.count || k != cells)
        return mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %s has %zu rows where its marker (line %zu) "
                         "records %llu and the job makes %zu per unit (a row is missing or extra); %s",
                         path, key, u->rows.count, lineno, k, cells, fix);
    if (h != u->hash)
        return mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %s: its rows do not match the checksum of its "
                         "marker (line %zu): a row was altered or reordered; %s", path, key, lineno, fix);
    for (size_t i = 0; i < u->rows.count; i++) {
        char rk[600];
        unit_key(&u->rows.rows[i], rk, sizeof rk);
        if (strcmp(rk, key) != 0)
            return mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %s holds a row of %s; %s", path, key, rk, fix);
    }
    if (unit_done(done, u->rows.rows[0].dump, u->rows.rows[0].temperature))
        return mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %s appears twice; %s", path, key, fix);
    int rc = row_list_push(done, u->rows.rows, u->rows.count, err);
    u->rows.count = 0;
    u->hash = MDSD_FNV_OFFSET;
    return rc;
}

/* Reads the finished units of a previous run; rows after the last marker
 * belong to an interrupted unit and are dropped. */
/* A "#checkpoint KEY next=R groups=K fnv1a=H" marker over the summary lines
 * read since the last marker (text, count, hash): kept in prog under KEY. */
static int accept_checkpoint(const char *path, size_t lineno, const char *marker, const char *text,
                             size_t len, size_t groups, uint64_t hash, progress_list *prog,
                             mdsd_err *err)
{
    const char *at = strstr(marker, " next=");
    for (const char *more; at && (more = strstr(at + 1, " next=")); at = more)
        ;
    unsigned long long next, k, h;
    int end = 0;
    if (!at || sscanf(at, " next=%llu groups=%llu fnv1a=%16llx%n", &next, &k, &h, &end) != 3 ||
        (at[end] != '\n' && at[end] != '\0'))
        return mdsd_fail(err, MDSD_EFORMAT, "'%s', line %zu: a malformed checkpoint marker; pass "
                         "--discard-partial to start over", path, lineno);
    char key[600];
    snprintf(key, sizeof key, "%.*s", (int)(at - (marker + 12)), marker + 12);
    if (k != groups || h != hash)
        return mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %s: the sample summaries before its checkpoint "
                         "(line %zu) do not match the marker (%zu lines, it records %llu; or a line was "
                         "altered); pass --discard-partial to start over", path, key, lineno, groups, k);
    unit_progress *u = progress_find(prog, key);
    if (!u) {
        unit_progress *grown = realloc(prog->items, (prog->count + 1) * sizeof *grown);
        if (!grown)
            return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
        prog->items = grown;
        u = &prog->items[prog->count++];
        memset(u, 0, sizeof *u);
        snprintf(u->key, sizeof u->key, "%s", key);
    }
    char *t = realloc(u->text, u->len + len + 1);
    if (!t)
        return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    memcpy(t + u->len, text, len);
    t[u->len + len] = '\0';
    u->text = t, u->len += len, u->groups += groups, u->next = (size_t)next;
    return MDSD_OK;
}

static void progress_drop(progress_list *prog, const char *key)
{
    unit_progress *u = progress_find(prog, key);
    if (!u)
        return;
    free(u->text);
    *u = prog->items[--prog->count];
}

static void progress_free(progress_list *prog)
{
    for (size_t i = 0; i < prog->count; i++)
        free(prog->items[i].text);
    free(prog->items);
    prog->items = NULL, prog->count = 0;
}

/* last (out): the "#perpos" record before the file's last marker (unset if
 * it had none), last_key: that marker's unit. */
static int read_partial(const char *path, const char *signature, size_t cells, row_list *done,
                        progress_list *prog, perpos_mark *last, char last_key[600], mdsd_err *err)
{
    perpos_mark seen = {false, 0, 0};
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT ? MDSD_OK
                               : mdsd_fail(err, MDSD_EIO, "cannot read '%s': %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0, lineno = 1;
    ssize_t len = getline(&line, &cap, f);
    int rc = MDSD_OK;
    if (len < 0 || strncmp(line, signature, strlen(signature)) != 0 ||
        (line[strlen(signature)] != '\n' && line[strlen(signature)] != '\0'))
        rc = mdsd_fail(err, MDSD_EINVAL, "'%s' was made by a different table job (or another mdsd "
                       "version); pass --discard-partial to delete it and start over, or run the "
                       "job that made it", path);
    partial_unit u = {{0}, MDSD_FNV_OFFSET};
    /* A bad line is fatal only if a marker follows it: after the last marker
     * it is the tail of a unit that was being written when the job stopped,
     * and is dropped with that unit. */
    mdsd_err pending;
    mdsd_err_clear(&pending);
    /* summary lines since the last marker (finer checkpoints) */
    char *gtext = NULL;
    size_t glen = 0, gcap = 0, gcount = 0;
    uint64_t ghash = MDSD_FNV_OFFSET;
    while (rc == MDSD_OK && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (!strncmp(line, "#done", 5) && (size_t)len == strlen(line)) {
            if (pending.code) {
                *err = pending;
                rc = pending.code;
            } else {
                char key[600] = "";
                if (u.rows.count)
                    unit_key(&u.rows.rows[0], key, sizeof key);
                rc = accept_unit(path, lineno, line, &u, cells, done, err);
                if (rc == MDSD_OK) /* the unit is whole: its checkpoints have served */
                    progress_drop(prog, key);
                *last = seen;
                snprintf(last_key, 600, "%s", key);
            }
            seen.set = false;
            glen = gcount = 0, ghash = MDSD_FNV_OFFSET;
        } else if (!strncmp(line, "#checkpoint ", 12) && (size_t)len == strlen(line)) {
            if (pending.code) {
                *err = pending;
                rc = pending.code;
            } else if (u.rows.count) {
                rc = mdsd_fail(err, MDSD_EFORMAT, "'%s', line %zu: a checkpoint marker among the rows "
                               "of a unit; pass --discard-partial to start over", path, lineno);
            } else {
                rc = accept_checkpoint(path, lineno, line, gtext, glen, gcount, ghash, prog, err);
                *last = seen;
                const char *at = strstr(line, " next=");
                for (const char *more; at && (more = strstr(at + 1, " next=")); at = more)
                    ;
                if (rc == MDSD_OK && at)
                    snprintf(last_key, 600, "%.*s", (int)(at - (line + 12)), line + 12);
            }
            seen.set = false;
            glen = gcount = 0, ghash = MDSD_FNV_OFFSET;
        } else if (!strncmp(line, "g ", 2) && !pending.code && (size_t)len == strlen(line)) {
            if (glen + (size_t)len + 1 > gcap) {
                gcap = 2 * (glen + (size_t)len + 1);
                char *grown = realloc(gtext, gcap);
                if (!grown) {
                    rc = mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
                    break;
                }
                gtext = grown;
            }
            memcpy(gtext + glen, line, (size_t)len);
            glen += (size_t)len;
            gcount++;
            ghash = mdsd_fnv1a(ghash, line, (size_t)len);
        } else if (!strncmp(line, "#perpos ", 8) && !pending.code && (size_t)len == strlen(line)) {
            unsigned long long bytes, h;
            int end = 0;
            if (sscanf(line, "#perpos bytes=%llu fnv1a=%16llx%n", &bytes, &h, &end) != 2 ||
                (line[end] != '\n' && line[end] != '\0'))
                mdsd_fail(&pending, MDSD_EFORMAT, "'%s', line %zu: a malformed per-position record; "
                          "pass --discard-partial to start over", path, lineno);
            else
                seen = (perpos_mark){true, (size_t)bytes, (uint64_t)h};
        } else if (lineno == 2 && !strncmp(line, "dump,", 5)) {
            continue; /* the CSV header */
        } else if (pending.code) {
            continue;
        } else if ((size_t)len != strlen(line)) {
            mdsd_fail(&pending, MDSD_EFORMAT, "'%s', line %zu: a NUL byte; pass --discard-partial "
                      "to start over", path, lineno);
        } else {
            mdsd_report_row r;
            if (mdsd_report_csv_parse(line, &r, &pending) == MDSD_OK) {
                u.hash = mdsd_fnv1a(u.hash, line, (size_t)len);
                rc = row_list_push(&u.rows, &r, 1, err);
            } else {
                char why[600];
                snprintf(why, sizeof why, "%s", pending.msg);
                mdsd_fail(&pending, MDSD_EFORMAT, "'%s', line %zu: %s; pass --discard-partial to "
                          "start over", path, lineno, why);
            }
        }
    }
    free(gtext);
    free(u.rows.rows);
    free(line);
    fclose(f);
    return rc;
}

/* Writes a unit's rows and its marker, and syncs: the unit is then safe. */
static int append_unit(FILE *partial, const mdsd_report_row *rows, size_t k, size_t max_n,
                       const perpos_mark *mark, mdsd_err *err)
{
    uint64_t hash = MDSD_FNV_OFFSET;
    char *buf = NULL;
    size_t len = 0;
    for (size_t i = 0; i < k; i++) {
        FILE *m = open_memstream(&buf, &len);
        if (!m)
            return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
        mdsd_report_csv_row(m, &rows[i], max_n);
        fclose(m);
        hash = mdsd_fnv1a(hash, buf, len);
        fputs(buf, partial);
        free(buf);
        buf = NULL;
    }
    char key[600];
    unit_key(&rows[0], key, sizeof key);
    perpos_mark_write(partial, mark);
    fprintf(partial, "#done %s rows=%zu fnv1a=%016llx\n", key, k, (unsigned long long)hash);
    if (fflush(partial) != 0 || fsync(fileno(partial)) != 0)
        return mdsd_fail(err, MDSD_EIO, "error writing the partial results: %s", strerror(errno));
    return MDSD_OK;
}

/* The results CSV: written to a temporary file, then (after before_publish,
 * which may add outputs of its own) renamed into place. */
int mdsd_batch_write_csv(const char *output, const mdsd_report_row *rows, size_t count, size_t max_n,
                         int (*before_publish)(const mdsd_report_row *, size_t, void *, mdsd_err *),
                         void *ctx, mdsd_err *err)
{
    mdsd_outfile out;
    int rc = mdsd_outfile_open(&out, output, err);
    if (rc)
        return rc;
    mdsd_report_csv_header(out.f, max_n);
    for (size_t i = 0; i < count; i++)
        mdsd_report_csv_row(out.f, &rows[i], max_n);
    rc = mdsd_outfile_finish(&out, err);
    if (rc == MDSD_OK && before_publish)
        rc = before_publish(rows, count, ctx, err);
    if (rc == MDSD_OK)
        rc = mdsd_outfile_publish(&out, err);
    mdsd_outfile_abort(&out);
    return rc;
}

static int write_output(const mdsd_batch_opts *o, const row_list *all, size_t max_n, mdsd_err *err)
{
    return mdsd_batch_write_csv(o->output, all->rows, all->count, max_n, o->before_publish,
                                o->publish_ctx, err);
}

/* Without --resume an existing partial file is never dropped silently. */
static int partial_policy(const mdsd_batch_opts *o, const char *partial_path, mdsd_err *err)
{
    struct stat st;
    if (o->discard_partial && o->per_position) {
        char pp_partial[4200];
        snprintf(pp_partial, sizeof pp_partial, "%s.partial", o->per_position);
        if (unlink(pp_partial) != 0 && errno != ENOENT)
            return mdsd_fail(err, MDSD_EIO, "cannot delete '%s': %s", pp_partial, strerror(errno));
    }
    if (stat(partial_path, &st) != 0)
        return MDSD_OK;
    if (o->discard_partial) {
        if (unlink(partial_path) != 0)
            return mdsd_fail(err, MDSD_EIO, "cannot delete '%s': %s", partial_path, strerror(errno));
        return MDSD_OK;
    }
    if (o->resume)
        return MDSD_OK;
    return mdsd_fail(err, MDSD_EINVAL, "'%s' holds the finished units of an interrupted job on this "
                     "output: pass --resume to continue it, or --discard-partial to delete it and "
                     "start over", partial_path);
}

/* Whether a finer checkpoint was written to the partial file. */
static bool partial_has_checkpoint(const char *path)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    bool found = false;
    while (f && !found && getline(&line, &cap, f) >= 0)
        found = !strncmp(line, "#checkpoint ", 12);
    free(line);
    if (f)
        fclose(f);
    return found;
}

/* Rewrites the partial file with the job's signature and the verified
 * finished units (atomically: an interrupt here loses nothing), then opens
 * it for appending. */
static FILE *start_partial(const char *partial_path, const char *signature, const row_list *done,
                           const progress_list *prog, const plan *pl, const perpos_mark *last,
                           const char *last_key, mdsd_err *err)
{
    mdsd_outfile out;
    if (mdsd_outfile_open(&out, partial_path, err))
        return NULL;
    fprintf(out.f, "%s\n", signature);
    mdsd_report_csv_header(out.f, pl->max_n);
    int rc = MDSD_OK;
    /* the per-position record goes with the last marker, which must be the
     * unit that the previous run's last marker named */
    size_t n_prog = prog ? prog->count : 0;
    if (last && last->set) {
        char key[600] = "";
        if (n_prog)
            snprintf(key, sizeof key, "%s", prog->items[n_prog - 1].key);
        else if (done->count)
            unit_key(&done->rows[done->count - pl->count], key, sizeof key);
        if (strcmp(key, last_key) != 0)
            rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': its last marker (unit %s) is not the last unit "
                           "of the job's order; pass --discard-partial to start over", partial_path,
                           last_key);
    }
    for (size_t i = 0; i < done->count && rc == MDSD_OK; i += pl->count)
        rc = append_unit(out.f, done->rows + i, pl->count, pl->max_n,
                         !n_prog && i + pl->count == done->count ? last : NULL, err);
    /* the checkpointed parts of unfinished units, each under one marker */
    for (size_t i = 0; i < n_prog && rc == MDSD_OK; i++)
        rc = checkpoint_write(out.f, prog->items[i].key, prog->items[i].text, prog->items[i].len,
                              prog->items[i].groups, prog->items[i].next,
                              i + 1 == n_prog ? last : NULL, err);
    if (rc == MDSD_OK)
        rc = mdsd_outfile_commit(&out, err);
    mdsd_outfile_abort(&out);
    if (rc)
        return NULL;
    FILE *f = fopen(partial_path, "a");
    if (!f)
        mdsd_fail(err, MDSD_EIO, "cannot write '%s': %s", partial_path, strerror(errno));
    return f;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The dump's label: its base name, or the path if two dumps share a name. */
static const char *dump_label(const mdsd_batch_opts *o, size_t i)
{
    for (size_t k = 0; k < o->n_dumps; k++)
        if (k != i && !strcmp(base_name(o->dumps[k]), base_name(o->dumps[i])))
            return o->dumps[i];
    return base_name(o->dumps[i]);
}

static int check_options(const mdsd_batch_opts *o, mdsd_err *err)
{
    if (o->n_dumps == 0)
        return mdsd_fail(err, MDSD_EINVAL, "table: no dump given");
    if (o->n_temperatures == 0 || o->n_counts == 0)
        return mdsd_fail(err, MDSD_EINVAL, "table: give --temperatures and --drafts");
    for (size_t i = 0; i < o->n_temperatures; i++)
        if (!(o->temperatures[i] >= 0) || isinf(o->temperatures[i]))
            return mdsd_fail(err, MDSD_EINVAL, "table: temperature %g is not a finite value >= 0 "
                             "(0 means argmax)", o->temperatures[i]);
    for (size_t i = 0; i < o->n_counts; i++)
        if (o->draft_counts[i] < 1)
            return mdsd_fail(err, MDSD_EINVAL, "table: the number of drafts must be >= 1");
    for (size_t i = 0; i < o->n_schemes; i++)
        if (o->schemes[i] == MDSD_SCHEME_MULTI || o->schemes[i] == MDSD_SCHEME_CUSTOM)
            return mdsd_fail(err, MDSD_EUNSUPPORTED, "table: the %s scheme is not available in "
                             "batch jobs (one drafter per dump)", mdsd_scheme_name(o->schemes[i]));
    for (size_t i = 0; i < o->n_dumps; i++)
        for (size_t k = 0; k < i; k++)
            if (!strcmp(o->dumps[i], o->dumps[k]))
                return mdsd_fail(err, MDSD_EINVAL, "table: dump '%s' is given twice", o->dumps[i]);
    for (size_t i = 0; i < o->n_draft_models; i++)
        for (size_t k = 0; k < i; k++)
            if (!strcmp(o->draft_models[i], o->draft_models[k]))
                return mdsd_fail(err, MDSD_EINVAL, "table: drafter '%s' is given twice",
                                 o->draft_models[i]);
    if (!o->output)
        return mdsd_fail(err, MDSD_EINVAL, "table: no output file (-o)");
    int rc = mdsd_output_check(o->output, o->dumps, o->n_dumps, err);
    if (rc)
        return rc;
    if (o->resume && o->discard_partial)
        return mdsd_fail(err, MDSD_EINVAL, "table: --resume and --discard-partial exclude each other");
    if (o->top_p < 0.0 || o->top_p > 1.0 || isnan(o->top_p))
        return mdsd_fail(err, MDSD_EINVAL, "table: top-p %g is not in (0, 1]", o->top_p);
    if (o->simulate && o->trials == 0)
        return mdsd_fail(err, MDSD_EINVAL, "table: --simulate needs --trials K");
    if (o->shards && (o->shard < 1 || o->shard > o->shards))
        return mdsd_fail(err, MDSD_EINVAL, "table: shard %zu/%zu: I must be in 1..N", o->shard,
                         o->shards);
    if (o->shards && o->per_position)
        return mdsd_fail(err, MDSD_EINVAL, "table: --per-position cannot be combined with --shard "
                         "or MPI ranks (each would hold a part of the rows)");
    return MDSD_OK;
}

static size_t job_count(const mdsd_batch_opts *o)
{
    return o->n_dumps * (o->n_draft_models ? o->n_draft_models : 1);
}

/* Without --draft-model a dump of several drafters is read with its first by name:
 * said on the note channel, with the others and how to choose. */
static void note_default_drafter(const mdsd_batch_opts *o, const char *path, const char *label,
                                 const mdsd_dump *d)
{
    if (!o->note)
        return;
    char msg[1024];
    size_t len = (size_t)snprintf(msg, sizeof msg, "%s has %zu drafters (", path, d->n_drafts);
    for (size_t k = 0; k < d->n_drafts && len < sizeof msg; k++)
        len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s", k ? ", " : "", d->drafts[k].name);
    if (len < sizeof msg)
        snprintf(msg + len, sizeof msg - len, "); using %s, the first by name (column %s:%s); "
                 "--draft-model NAME picks one, --draft-model A,B compares them",
                 d->drafts[0].name, label, d->drafts[0].name);
    o->note(msg, o->note_ctx);
}

/* Job j: dump j / drafters, drafter j % drafters. A directory is one dump
 * split across its *.h5 files (mdsd_dump_parts). */
static int open_job(const mdsd_batch_opts *o, size_t j, dump_job *job, mdsd_err *err)
{
    size_t drafters = o->n_draft_models ? o->n_draft_models : 1, i = j / drafters;
    char **paths = NULL;
    size_t n = 0;
    int rc = mdsd_dump_parts(o->dumps[i], &paths, &n, err);
    if (rc)
        return rc;
    job->parts = calloc(n, sizeof *job->parts);
    job->part_draft = calloc(n, sizeof *job->part_draft);
    job->part_row0 = calloc(n + 1, sizeof *job->part_row0);
    if (!job->parts || !job->part_draft || !job->part_row0)
        rc = mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    const char *model = o->n_draft_models ? o->draft_models[j % drafters] : NULL;
    for (size_t p = 0; p < n && rc == MDSD_OK; p++) {
        if ((rc = mdsd_dump_open(paths[p], &job->parts[p], err)))
            break;
        job->n_parts = p + 1;
        mdsd_dump *d = job->parts[p];
        /* refused as `mdsd info --validate` refuses it: the clustered standard
         * errors count a sample's rows as one run */
        if ((rc = mdsd_dump_check_samples(d, err)))
            break;
        /* without --draft-model: the first file's first drafter, by name */
        const char *name = model ? model : job->parts[0]->drafts[0].name;
        job->part_draft[p] = mdsd_dump_find_draft(d, name);
        if (job->part_draft[p] < 0)
            rc = mdsd_fail(err, MDSD_EINVAL, "%s: no drafter named '%s' under /drafts", paths[p], name);
        else if (p > 0)
            rc = mdsd_dump_check_part(job->parts[0], d, job->part_draft[0], job->part_draft[p], err);
        job->part_row0[p + 1] = job->part_row0[p] + d->N;
    }
    mdsd_dump_parts_free(paths, n);
    if (rc)
        return rc;
    job->dump = job->parts[0];
    job->draft = job->part_draft[0];
    job->index = j;
    /* The column names the drafter wherever the dump has a choice of them. */
    const mdsd_dump *d0 = job->parts[0];
    if (drafters > 1 || d0->n_drafts > 1)
        snprintf(job->label, sizeof job->label, "%s:%s", dump_label(o, i), d0->drafts[job->draft].name);
    else
        snprintf(job->label, sizeof job->label, "%s", dump_label(o, i));
    if (!model && d0->n_drafts > 1)
        note_default_drafter(o, o->dumps[i], dump_label(o, i), d0);
    size_t N = job->part_row0[n];
    job->begin = o->row_begin;
    job->end = o->row_end ? o->row_end : N;
    if (job->begin >= job->end || job->end > N)
        return mdsd_fail(err, MDSD_EINVAL, "%s: rows %zu:%zu are outside the dump's %zu rows",
                         o->dumps[i], job->begin, job->end, N);
    return MDSD_OK;
}

static void close_job(dump_job *job)
{
    for (size_t p = 0; job->parts && p < job->n_parts; p++)
        mdsd_dump_close(job->parts[p]);
    free(job->parts), free(job->part_draft), free(job->part_row0);
    job->parts = NULL, job->dump = NULL;
}

/* Every resumed unit must be one this job makes. */
static int check_done_units(const char *path, const mdsd_batch_opts *o, const dump_job *jobs,
                            size_t n_jobs, const row_list *done, mdsd_err *err)
{
    for (size_t i = 0; i < done->count; i++) {
        const mdsd_report_row *r = &done->rows[i];
        bool known = false;
        for (size_t j = 0; j < n_jobs && !known; j++)
            for (size_t t = 0; t < o->n_temperatures && !known; t++)
                known = !strcmp(jobs[j].label, r->dump) && o->temperatures[t] == r->temperature;
        if (!known) {
            char key[600];
            unit_key(r, key, sizeof key);
            return mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %s is not part of this job; pass "
                             "--discard-partial to start over", path, key);
        }
    }
    return MDSD_OK;
}

/* Every checkpointed part of a unit must be one of this job's unfinished
 * units, hold whole summaries of its cells and cover its rows up to the
 * recorded next row: checked before the partial file is rewritten. */
static int check_progress(const char *path, const mdsd_batch_opts *o, const dump_job *jobs,
                          size_t n_jobs, const progress_list *prog, const plan *pl, mdsd_err *err)
{
    mdsd_batch_group *g = malloc(sizeof *g);
    int rc = g ? MDSD_OK : mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    for (size_t i = 0; i < prog->count && rc == MDSD_OK; i++) {
        const unit_progress *u = &prog->items[i];
        const dump_job *job = NULL;
        for (size_t j = 0; j < n_jobs && !job; j++)
            for (size_t t = 0; t < o->n_temperatures && !job; t++) {
                char key[600];
                snprintf(key, sizeof key, "%s,%.10g", jobs[j].label, o->temperatures[t]);
                if (!strcmp(key, u->key))
                    job = &jobs[j];
            }
        if (!job) {
            rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': the checkpoint of unit %s is not part of this "
                           "job; pass --discard-partial to start over", path, u->key);
            break;
        }
        size_t rows = 0;
        for (const char *s = u->text; rc == MDSD_OK && s < u->text + u->len; s += strcspn(s, "\n") + 1)
            if (mdsd_batch_group_parse(s, pl, g) != MDSD_OK)
                rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %s: a checkpointed sample summary is not "
                               "one of this job's cells; pass --discard-partial to start over", path,
                               u->key);
            else
                rows += g->rows;
        if (rc == MDSD_OK && (u->next <= job->begin || u->next > job->end || rows != u->next - job->begin))
            rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %s: its checkpoint covers %zu rows up to row "
                           "%zu, not the job's rows from %zu; pass --discard-partial to start over",
                           path, u->key, rows, u->next, job->begin);
    }
    free(g);
    return rc;
}

static void workers_free(worker *w, int count)
{
    for (int i = 0; w && i < count; i++) {
        free(w[i].p), free(w[i].q);
        mdsd_bound_workspace_free(w[i].bound);
    }
    free(w);
}

static worker *workers_alloc(int count, size_t V, size_t max_n, mdsd_err *err)
{
    worker *w = calloc((size_t)count, sizeof *w);
    for (int i = 0; w && i < count; i++) {
        w[i].p = malloc(V * sizeof *w[i].p);
        w[i].q = malloc(V * sizeof *w[i].q);
        w[i].bound = mdsd_bound_workspace_alloc(V, max_n, err);
        if (!w[i].p || !w[i].q || !w[i].bound) {
            workers_free(w, count);
            w = NULL;
        }
    }
    if (!w)
        mdsd_fail(err, MDSD_ENOMEM, "table: out of memory for V = %zu", V);
    return w;
}

/* A shard job's units (shard.h): the text of each finished (column,
 * temperature) unit, resumed or computed; [job * temperatures + t]. */
typedef struct {
    char **text;
    size_t *len;
} shard_units;

/* A finished unit of a shard job as its block of text; appended to the
 * checkpoint and synced. */
static int shard_unit_finish(const mdsd_batch_opts *o, const dump_job *job, size_t t, char *groups,
                             size_t groups_len, size_t n_groups, FILE *partial, shard_units *su,
                             mdsd_err *err)
{
    char head[128], tail[800];
    int hl = snprintf(head, sizeof head, "#unit %zu %zu rows=%zu:%zu\n", job->index, t, job->begin,
                      job->end);
    uint64_t hash = mdsd_fnv1a(MDSD_FNV_OFFSET, head, (size_t)hl);
    hash = mdsd_fnv1a(hash, groups, groups_len);
    int tl = snprintf(tail, sizeof tail, "#done %s,%.10g groups=%zu fnv1a=%016llx\n", job->label,
                      o->temperatures[t], n_groups, (unsigned long long)hash);
    size_t len = (size_t)hl + groups_len + (size_t)tl, k = job->index * o->n_temperatures + t;
    char *text = malloc(len + 1);
    if (!text)
        return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    memcpy(text, head, (size_t)hl);
    if (groups_len)
        memcpy(text + hl, groups, groups_len);
    memcpy(text + hl + groups_len, tail, (size_t)tl + 1);
    su->text[k] = text;
    su->len[k] = len;
    if (fwrite(text, 1, len, partial) != len || fflush(partial) != 0 || fsync(fileno(partial)) != 0)
        return mdsd_fail(err, MDSD_EIO, "error writing the partial results: %s", strerror(errno));
    return MDSD_OK;
}

/* Runs every temperature of one dump, appending finished units (shard jobs:
 * their per-sample summaries, into su). */
static int run_dump(const mdsd_batch_opts *o, const plan *pl, const dump_job *job,
                    const row_list *done, const progress_list *prog, row_list *all, FILE *partial,
                    mdsd_progress *progress, shard_units *su, mdsd_err *err)
{
    int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    mdsd_err e;
    mdsd_err_clear(&e);
    worker *workers = workers_alloc(threads, job->dump->V, pl->max_n, &e);
    mdsd_report_row *rows = malloc(pl->count * sizeof *rows);
    int rc = !workers ? mdsd_fail_from(err, &e, "table: workers")
             : !rows  ? mdsd_fail(err, MDSD_ENOMEM, "table: out of memory")
                      : MDSD_OK;
    for (size_t t = 0; t < o->n_temperatures && rc == MDSD_OK; t++) {
        double T = o->temperatures[t];
        if (su ? su->text[job->index * o->n_temperatures + t] != NULL : unit_done(done, job->label, T)) {
            mdsd_progress_skip(progress, job->end - job->begin);
            continue;
        }
        char key[600];
        snprintf(key, sizeof key, "%s,%.10g", job->label, T);
        unit_checkpoint ck = {partial, key, o->checkpoint_seconds > 0 ? o->checkpoint_seconds
                                            : o->checkpoint_seconds < 0 ? -1.0 : 60.0, omp_get_wtime(),
                              job->per_position};
        const unit_progress *from = progress_find(prog, key);
        if (su) {
            char *groups = NULL;
            size_t len = 0, n_groups = 0;
            FILE *m = open_memstream(&groups, &len);
            if (!m) {
                rc = mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
                break;
            }
            if (from) /* the samples of the unit's checkpoints come first */
                fwrite(from->text, 1, from->len, m);
            rc = run_unit(o, pl, job, T, t, workers, progress, m, &n_groups, from, &ck, rows, err);
            if (fclose(m) != 0 && rc == MDSD_OK)
                rc = mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
            if (rc == MDSD_OK)
                rc = shard_unit_finish(o, job, t, groups, len, n_groups, partial, su, err);
            free(groups);
            continue;
        }
        rc = run_unit(o, pl, job, T, t, workers, progress, NULL, NULL, from, &ck, rows, err);
        perpos_mark mark = {false, 0, 0};
        if (rc == MDSD_OK && job->per_position && (rc = per_position_sync(job->per_position, err)) == MDSD_OK)
            mark = (perpos_mark){true, job->per_position->bytes, job->per_position->hash};
        if (rc == MDSD_OK)
            rc = append_unit(partial, rows, pl->count, pl->max_n, &mark, err);
        if (rc == MDSD_OK)
            rc = row_list_push(all, rows, pl->count, err);
    }
    free(rows);
    workers_free(workers, threads);
    return rc;
}

/* Orders the final rows as the job lists them: columns, temperatures, cells;
 * resumed units take their place. */
static int collect(const mdsd_batch_opts *o, const dump_job *jobs, size_t n_jobs,
                   const row_list *done, const row_list *fresh, row_list *out, mdsd_err *err)
{
    int rc = MDSD_OK;
    for (size_t i = 0; i < n_jobs && rc == MDSD_OK; i++)
        for (size_t t = 0; t < o->n_temperatures && rc == MDSD_OK; t++) {
            const char *label = jobs[i].label;
            const row_list *src = unit_done(done, label, o->temperatures[t]) ? done : fresh;
            for (size_t k = 0; k < src->count && rc == MDSD_OK; k++)
                if (!strcmp(src->rows[k].dump, label) && src->rows[k].temperature == o->temperatures[t])
                    rc = row_list_push(out, &src->rows[k], 1, err);
        }
    return rc;
}

/* ---- shard jobs (shard.h) -------------------------------------------------- */

/* Row k of N of the job's rows: the k-th equal share's first row, moved on
 * to the start of the sample that holds it (shards take whole samples). */
static int shard_boundary(const dump_job *job, size_t k, size_t N, size_t *row, mdsd_err *err)
{
    size_t a = job->all_begin, b = job->all_end, R = b - a;
    size_t r = a + (R / N) * k + (R % N) * k / N;
    if (k == 0 || k == N || r == a) {
        *row = k == N ? b : r;
        return MDSD_OK;
    }
    /* the file holding row r: the start of a file is a sample's start */
    size_t p = 0;
    while (p + 1 < job->n_parts && job->part_row0[p + 1] <= r)
        p++;
    size_t lo = job->part_row0[p], hi = job->part_row0[p + 1] < b ? job->part_row0[p + 1] : b;
    mdsd_dump *d = job->parts[p];
    size_t chunk = d->max_sample_rows + 1;
    int *ids = malloc(chunk * sizeof *ids);
    if (!ids)
        return mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    int rc = MDSD_OK;
    while (r > lo && r < hi && rc == MDSD_OK) {
        /* ids[0] is row r - 1's sample: find where the next one starts */
        size_t n = chunk < hi - r + 1 ? chunk : hi - r + 1, i = 1;
        if ((rc = mdsd_dump_read_meta(d, r - 1 - lo, n, NULL, ids, NULL, err)))
            break;
        while (i < n && ids[i] == ids[0])
            i++;
        r = r - 1 + i;
        if (i < n)
            break;
    }
    free(ids);
    *row = r < hi ? r : hi;
    return rc;
}

static int shard_rows(const mdsd_batch_opts *o, dump_job *job, mdsd_err *err)
{
    job->all_begin = job->begin, job->all_end = job->end;
    int rc = shard_boundary(job, o->shard - 1, o->shards, &job->begin, err);
    return rc ? rc : shard_boundary(job, o->shard, o->shards, &job->end, err);
}

/* The aggregate's header (shard.h): everything a merge checks and needs. */
static char *shard_header(const mdsd_batch_opts *o, const plan *pl, const dump_job *jobs,
                          size_t n_jobs, const char *signature, mdsd_err *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
        return NULL;
    }
    fputs(MDSD_SHARD_MAGIC, f);
    fprintf(f, "shard %zu/%zu\njob %s\n", o->shard, o->shards, signature);
    fprintf(f, "seed %llu\ntrials %llu\nsimulate %d\ntop_k %zu\ntop_p %a\nis_top %zu\n"
            "positions %zu:%zu\nmax_n %zu\n", (unsigned long long)o->seed,
            (unsigned long long)o->trials, o->simulate ? 1 : 0, o->top_k,
            o->top_p > 0.0 ? o->top_p : 1.0, o->verifier_opts.is_top, o->row_begin, o->row_end,
            pl->max_n);
    for (size_t c = 0; c < pl->count; c++)
        fprintf(f, "cell %zu %s %s\n", pl->cells[c].n, mdsd_scheme_name(pl->cells[c].scheme),
                pl->cells[c].verifier < 0 ? "bound"
                                          : mdsd_verifier_name((mdsd_verifier_kind)pl->cells[c].verifier));
    for (size_t t = 0; t < o->n_temperatures; t++)
        fprintf(f, "temperature %a\n", o->temperatures[t]);
    size_t drafters = o->n_draft_models ? o->n_draft_models : 1;
    for (size_t i = 0; i < o->n_dumps; i++) /* every file of a split dump */
        for (size_t p = 0; p < jobs[i * drafters].n_parts; p++) {
            const mdsd_dump *d = jobs[i * drafters].parts[p];
            fprintf(f, "dump %lld %lld %s\n", d->file_size, d->file_mtime_ns, d->path);
        }
    for (size_t j = 0; j < n_jobs; j++)
        fprintf(f, "column %s\n", jobs[j].label);
    fputs("end\n", f);
    if (fclose(f) != 0) {
        free(text);
        mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
        return NULL;
    }
    return text;
}

/* A shard's checkpoint read back: the header must be this shard's, and each
 * finished unit one of its units with its rows. */
/* The finer checkpoints between the units of a shard's checkpoint file
 * (body: after its header) into prog. */
static int shard_progress(const char *path, const char *body, size_t len, progress_list *prog,
                          mdsd_err *err)
{
    const char *s = body, *end = body + len, *gtext = NULL;
    size_t glen = 0, gcount = 0, lineno = 0;
    uint64_t ghash = MDSD_FNV_OFFSET;
    bool in_unit = false;
    int rc = MDSD_OK;
    while (rc == MDSD_OK && s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t n = nl ? (size_t)(nl - s) + 1 : (size_t)(end - s);
        lineno++;
        if (!nl) {
            break; /* a line cut short: the tail of an interrupted write */
        } else if (!strncmp(s, "#unit ", 6)) {
            in_unit = true;
        } else if (!strncmp(s, "#done ", 6)) {
            in_unit = false;
        } else if (!in_unit && !strncmp(s, "g ", 2)) {
            if (gcount == 0)
                gtext = s;
            glen += n, gcount++;
            ghash = mdsd_fnv1a(ghash, s, n);
        } else if (!in_unit && !strncmp(s, "#checkpoint ", 12)) {
            char *marker = strndup(s, n);
            rc = marker ? accept_checkpoint(path, lineno, marker, gtext, glen, gcount, ghash, prog, err)
                        : mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
            free(marker);
            glen = gcount = 0, ghash = MDSD_FNV_OFFSET;
        }
        s += n;
    }
    return rc;
}

static int shard_resume(const mdsd_batch_opts *o, const char *path, const char *header,
                        const dump_job *jobs, size_t n_jobs, shard_units *su, progress_list *prog,
                        const plan *pl, mdsd_err *err)
{
    char *text = NULL;
    size_t size = 0, hl = strlen(header);
    struct stat st;
    if (stat(path, &st) != 0)
        return MDSD_OK;
    int rc = mdsd_shard_read_file(path, &text, &size, err);
    if (rc)
        return rc;
    if (size < hl || memcmp(text, header, hl) != 0) {
        free(text);
        return mdsd_fail(err, MDSD_EINVAL, "'%s' was made by a different table job, shard or "
                         "dump (or another mdsd version); pass --discard-partial to delete it and "
                         "start over, or run the job that made it", path);
    }
    mdsd_shard_unit *units = NULL;
    size_t count = 0;
    rc = mdsd_shard_units_parse(path, text + hl, size - hl, true, &units, &count, err);
    for (size_t i = 0; i < count && rc == MDSD_OK; i++) {
        const mdsd_shard_unit *u = &units[i];
        size_t k = u->job * o->n_temperatures + u->temp;
        if (u->job >= n_jobs || u->temp >= o->n_temperatures || u->begin != jobs[u->job].begin ||
            u->end != jobs[u->job].end)
            rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %s is not part of this shard; pass "
                           "--discard-partial to start over", path, u->key);
        else if (su->text[k])
            rc = mdsd_fail(err, MDSD_EFORMAT, "'%s': unit %s appears twice; pass "
                           "--discard-partial to start over", path, u->key);
        else if (!(su->text[k] = malloc(u->len + 1)))
            rc = mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
        else {
            memcpy(su->text[k], u->text, u->len);
            su->text[k][u->len] = '\0';
            su->len[k] = u->len;
        }
    }
    if (rc == MDSD_OK)
        rc = shard_progress(path, text + hl, size - hl, prog, err);
    /* a finished unit's checkpoints have served */
    for (size_t i = 0; i < count && rc == MDSD_OK; i++)
        progress_drop(prog, units[i].key);
    if (rc == MDSD_OK)
        rc = check_progress(path, o, jobs, n_jobs, prog, pl, err);
    free(units);
    free(text);
    return rc;
}

/* The header and every unit, in job order. */
static char *shard_join(const char *header, const shard_units *su, size_t n_units, size_t *size)
{
    size_t len = strlen(header);
    for (size_t k = 0; k < n_units; k++)
        len += su->len[k];
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    size_t at = strlen(header);
    memcpy(out, header, at);
    for (size_t k = 0; k < n_units; k++) {
        if (su->len[k]) /* unfinished units have no text yet */
            memcpy(out + at, su->text[k], su->len[k]);
        at += su->len[k];
    }
    out[at] = '\0';
    *size = len;
    return out;
}

static int run_shard(const mdsd_batch_opts *o, const plan *pl, dump_job *jobs, size_t n_jobs,
                     const char *signature, const char *partial_path, mdsd_err *err)
{
    size_t n_units = n_jobs * o->n_temperatures, total = 0;
    shard_units su = {calloc(n_units, sizeof *su.text), calloc(n_units, sizeof *su.len)};
    progress_list prog = {0};
    int rc = su.text && su.len ? MDSD_OK : mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    for (size_t j = 0; j < n_jobs && rc == MDSD_OK; j++)
        if ((rc = shard_rows(o, &jobs[j], err)) == MDSD_OK)
            total += (jobs[j].end - jobs[j].begin) * o->n_temperatures;
    char *header = rc == MDSD_OK ? shard_header(o, pl, jobs, n_jobs, signature, err) : NULL;
    if (rc == MDSD_OK && !header)
        rc = err->code;
    if (rc == MDSD_OK && o->resume)
        rc = shard_resume(o, partial_path, header, jobs, n_jobs, &su, &prog, pl, err);
    if (rc == MDSD_OK)
        warn_monte_carlo(o, pl, jobs[0].dump->V, total);
    /* the checkpoint: rewritten with the header and the finished units */
    FILE *partial = NULL;
    if (rc == MDSD_OK) {
        mdsd_outfile out;
        size_t size;
        char *kept = shard_join(header, &su, n_units, &size);
        if (!kept)
            rc = mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
        else if ((rc = mdsd_outfile_open(&out, partial_path, err)) == MDSD_OK) {
            fwrite(kept, 1, size, out.f);
            /* and the checkpointed parts of unfinished units */
            for (size_t i = 0; i < prog.count && rc == MDSD_OK; i++)
                rc = checkpoint_write(out.f, prog.items[i].key, prog.items[i].text, prog.items[i].len,
                                      prog.items[i].groups, prog.items[i].next, NULL, err);
            if (rc == MDSD_OK)
                rc = mdsd_outfile_commit(&out, err);
            mdsd_outfile_abort(&out);
        }
        free(kept);
        if (rc == MDSD_OK && !(partial = fopen(partial_path, "a")))
            rc = mdsd_fail(err, MDSD_EIO, "cannot write '%s': %s", partial_path, strerror(errno));
    }
    mdsd_progress progress;
    mdsd_progress_start(&progress, "mdsd table", total);
    if (!o->progress)
        progress.enabled = false;
    for (size_t j = 0; j < n_jobs && rc == MDSD_OK; j++)
        rc = run_dump(o, pl, &jobs[j], NULL, &prog, NULL, partial, &progress, &su, err);
    mdsd_progress_finish(&progress);
    if (partial)
        fclose(partial);
    size_t size = 0;
    char *agg = rc == MDSD_OK ? shard_join(header, &su, n_units, &size) : NULL;
    if (rc == MDSD_OK && !agg)
        rc = mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    if (rc == MDSD_OK && o->shard_data) {
        *o->shard_data = agg;
        *o->shard_size = size;
        agg = NULL;
    } else if (rc == MDSD_OK) {
        mdsd_outfile out;
        if ((rc = mdsd_outfile_open(&out, o->output, err)) == MDSD_OK) {
            fwrite(agg, 1, size, out.f);
            rc = mdsd_outfile_commit(&out, err);
            mdsd_outfile_abort(&out);
        }
    }
    if (rc == MDSD_OK && !o->keep_partial)
        unlink(partial_path);
    free(agg);
    free(header);
    progress_free(&prog);
    for (size_t k = 0; su.text && k < n_units; k++)
        free(su.text[k]);
    free(su.text), free(su.len);
    return rc;
}

int mdsd_batch_run(const mdsd_batch_opts *o, mdsd_report_row **rows_out, size_t *count_out,
                   mdsd_err *err)
{
    /* The job reads its own messages back (row labels): it always has one. */
    mdsd_err local;
    if (!err)
        err = &local;
    mdsd_err_clear(err);
    int rc = check_options(o, err);
    if (rc)
        return rc;
    size_t max_n = 1;
    for (size_t k = 0; k < o->n_counts; k++)
        max_n = o->draft_counts[k] > max_n ? o->draft_counts[k] : max_n;
    plan pl;
    if ((rc = make_plan(o, max_n + 1, &pl, err)))
        return rc;
    char signature[8192], partial_path[4200], lock_path[4200];
    job_signature(o, &pl, signature, sizeof signature);
    if (o->shards && o->shard_data) { /* MPI ranks: one checkpoint each beside the CSV */
        snprintf(partial_path, sizeof partial_path, "%s.shard-%zu-of-%zu.partial", o->output,
                 o->shard, o->shards);
        snprintf(lock_path, sizeof lock_path, "%s.shard-%zu-of-%zu.lock", o->output, o->shard,
                 o->shards);
    } else {
        snprintf(partial_path, sizeof partial_path, "%s.partial", o->output);
        snprintf(lock_path, sizeof lock_path, "%s.lock", o->output);
    }
    mdsd_lock lock;
    char what[4300];
    snprintf(what, sizeof what, "'%s'", o->output);
    if ((rc = mdsd_lock_acquire(&lock, lock_path, what, err)))
        return rc;
    rc = partial_policy(o, partial_path, err);

    row_list done = {0}, fresh = {0}, all = {0};
    progress_list prog = {0};
    size_t n_jobs = job_count(o);
    dump_job *jobs = calloc(n_jobs, sizeof *jobs);
    if (!jobs && rc == MDSD_OK)
        rc = mdsd_fail(err, MDSD_ENOMEM, "table: out of memory");
    size_t total = 0;
    for (size_t i = 0; i < n_jobs && rc == MDSD_OK; i++)
        if ((rc = open_job(o, i, &jobs[i], err)) == MDSD_OK)
            total += (jobs[i].end - jobs[i].begin) * o->n_temperatures;
    if (o->shards) {
        if (rc == MDSD_OK)
            rc = run_shard(o, &pl, jobs, n_jobs, signature, partial_path, err);
        for (size_t i = 0; jobs && i < n_jobs; i++)
            close_job(&jobs[i]);
        free(jobs);
        mdsd_lock_release(&lock);
        if (rows_out)
            *rows_out = NULL, *count_out = 0;
        return rc;
    }
    perpos_mark last = {false, 0, 0};
    char last_key[600] = "";
    if (rc == MDSD_OK && o->resume)
        rc = read_partial(partial_path, signature, pl.count, &done, &prog, &last, last_key, err);
    if (rc == MDSD_OK)
        rc = check_done_units(partial_path, o, jobs, n_jobs, &done, err);
    if (rc == MDSD_OK)
        rc = check_progress(partial_path, o, jobs, n_jobs, &prog, &pl, err);
    bool resumed = done.count > 0 || prog.count > 0;
    if (rc == MDSD_OK && o->per_position && resumed && !last.set)
        rc = mdsd_fail(err, MDSD_EFORMAT, "'%s' records no per-position rows (its job ran without "
                       "--per-position); pass --discard-partial to start over", partial_path);
    per_position_out pp;
    bool pp_open = false;
    if (rc == MDSD_OK && o->per_position &&
        (rc = per_position_open(&pp, o->per_position, &pl, resumed ? &last : NULL, partial_path,
                                err)) == MDSD_OK) {
        pp_open = true;
        for (size_t i = 0; i < n_jobs; i++)
            jobs[i].per_position = &pp;
    }
    if (rc == MDSD_OK)
        warn_monte_carlo(o, &pl, jobs[0].dump->V, total);
    /* Rewrite the partial file with what is kept, then append as units finish. */
    mdsd_err e;
    mdsd_err_clear(&e);
    FILE *partial = rc == MDSD_OK ? start_partial(partial_path, signature, &done, &prog, &pl,
                                                  o->per_position ? &last : NULL, last_key, &e)
                                  : NULL;
    if (rc == MDSD_OK && !partial)
        rc = mdsd_fail_from(err, &e, partial_path);
    mdsd_progress progress;
    mdsd_progress_start(&progress, "mdsd table", total);
    if (!o->progress)
        progress.enabled = false;
    for (size_t i = 0; i < n_jobs && rc == MDSD_OK; i++)
        rc = run_dump(o, &pl, &jobs[i], &done, &prog, &fresh, partial, &progress, NULL, err);
    mdsd_progress_finish(&progress);
    if (partial)
        fclose(partial);
    /* Keep the partial file only if it holds finished work to resume from
     * (and the per-position rows with it). */
    bool dropped = partial && rc != MDSD_OK && done.count == 0 && fresh.count == 0 &&
                   !partial_has_checkpoint(partial_path);
    if (dropped)
        unlink(partial_path);
    if (rc == MDSD_OK)
        rc = collect(o, jobs, n_jobs, &done, &fresh, &all, err);
    if (rc == MDSD_OK)
        rc = write_output(o, &all, pl.max_n, err);
    if (pp_open) {
        if (rc == MDSD_OK)
            rc = per_position_sync(&pp, err);
        if (fclose(pp.f) != 0 && rc == MDSD_OK)
            rc = mdsd_fail(err, MDSD_EIO, "error writing '%s': %s", pp.partial, strerror(errno));
        if (rc == MDSD_OK && rename(pp.partial, pp.path) != 0)
            rc = mdsd_fail(err, MDSD_EIO, "cannot rename '%s' to '%s': %s", pp.partial, pp.path,
                           strerror(errno));
        else if (rc != MDSD_OK && (dropped || !partial))
            unlink(pp.partial);
    }
    if (rc == MDSD_OK)
        unlink(partial_path);
    for (size_t i = 0; jobs && i < n_jobs; i++)
        close_job(&jobs[i]);
    free(jobs);
    free(done.rows), free(fresh.rows);
    progress_free(&prog);
    mdsd_lock_release(&lock);
    if (rc == MDSD_OK && rows_out) {
        *rows_out = all.rows;
        *count_out = all.count;
    } else {
        free(all.rows);
    }
    return rc;
}
