/* lp_export.c - the OTM LP of (p, D) written for other solvers: MathProg data
 * for lp/otm_full.mod and lp/otm_reduced.mod, CPLEX LP and free MPS through
 * GLPK's writers (lp_export.h); each file written atomically. The model is
 * core/lp.c's (lp_model.h). */
#include "lp_export.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lp_model.h"
#include "outfile.h"

/* ---------------------------------------------------------------------------
 * Export */

static void write_p(FILE *f, const double *p, double p_scale, size_t V)
{
    fprintf(f, "param p :=\n");
    for (size_t y = 0; y < V; y++)
        fprintf(f, "  %zu %.17g\n", y, p[y] * p_scale);
    fprintf(f, ";\n");
}

static void write_full_data(FILE *f, const double *p, double p_scale, size_t V,
                            const mdsd_joint *D, double d_scale)
{
    fprintf(f, "# Full OTM LP instance for lp/otm_full.mod (written by mdsd_lp_export).\n"
               "# Tokens 0..V-1, tuples 1..T; x[t,j] = j-th draft token of tuple t.\n"
               "data;\n\nparam V := %zu;\nparam n := %zu;\nparam T := %zu;\n\n",
            V, D->n, D->count);
    write_p(f, p, p_scale, V);
    fprintf(f, "\nparam D :=\n");
    for (size_t t = 0; t < D->count; t++)
        fprintf(f, "  %zu %.17g\n", t + 1, D->prob[t] * d_scale);
    fprintf(f, ";\n\nparam x :");
    for (size_t j = 0; j < D->n; j++)
        fprintf(f, " %zu", j + 1);
    fprintf(f, " :=\n");
    for (size_t t = 0; t < D->count; t++) {
        fprintf(f, "  %zu", t + 1);
        for (size_t j = 0; j < D->n; j++)
            fprintf(f, " %d", D->tokens[t * D->n + j]);
        fprintf(f, "\n");
    }
    fprintf(f, ";\n\nend;\n");
}

static void write_reduced_data(FILE *f, const double *p, double p_scale, size_t V,
                               const mdsd_set_law *S)
{
    fprintf(f, "# Reduced LP instance for lp/otm_reduced.mod (written by mdsd_lp_export,\n"
               "# reduced). Tokens 0..V-1; S[k] = token set k, Dbar[k] = its mass.\n"
               "data;\n\nparam V := %zu;\nparam K := %zu;\n\n",
            V, S->count);
    write_p(f, p, p_scale, V);
    fprintf(f, "\nparam Dbar :=\n");
    for (size_t k = 0; k < S->count; k++)
        fprintf(f, "  %zu %.17g\n", k + 1, S->mass[k]);
    fprintf(f, ";\n\n");
    for (size_t k = 0; k < S->count; k++) {
        fprintf(f, "set S[%zu] :=", k + 1);
        for (size_t m = S->start[k]; m < S->start[k + 1]; m++)
            fprintf(f, " %d", S->members[m]);
        fprintf(f, ";\n");
    }
    fprintf(f, "\nend;\n");
}

/* What the exporters write: the checked instance and its rescaling. */
typedef struct {
    const double *p;
    double p_scale;
    size_t V;
    const mdsd_joint *D;
    double d_scale;
    const mdsd_set_law *S;  /* reduced LP: the aggregated sets; NULL for the full LP */
} lp_instance;

static int write_data(const lp_instance *in, const char *path, mdsd_err *err)
{
    mdsd_outfile o;
    int rc = mdsd_outfile_open(&o, path, err);
    if (rc)
        return rc;
    if (in->S)
        write_reduced_data(o.f, in->p, in->p_scale, in->V, in->S);
    else
        write_full_data(o.f, in->p, in->p_scale, in->V, in->D, in->d_scale);
    if ((rc = mdsd_outfile_commit(&o, err)))
        mdsd_outfile_abort(&o);
    return rc;
}

/* CPLEX LP or free MPS through GLPK's writers, into a temporary file that is
 * then renamed. MPS has no objective sense, so its objective is -alpha,
 * minimised (any solver reads that the same way). */
/* GLPK's writers do not check the final flush (a full disk leaves an empty
 * or cut file and a success): the file is read back and must give the same
 * rows, columns and coefficients, and is synced. */
static bool written_whole(glp_prob *P, mdsd_lp_format format, const char *tmp)
{
    glp_prob *R = glp_create_prob();
    int old_out = glp_term_out(GLP_OFF);
    int ret = format == MDSD_LP_FORMAT_MPS ? glp_read_mps(R, GLP_MPS_FILE, NULL, tmp)
                                           : glp_read_lp(R, NULL, tmp);
    glp_term_out(old_out);
    bool same = ret == 0 && glp_get_num_rows(R) == glp_get_num_rows(P) &&
                glp_get_num_cols(R) == glp_get_num_cols(P) && glp_get_num_nz(R) == glp_get_num_nz(P);
    glp_delete_prob(R);
    int fd = same ? open(tmp, O_RDONLY) : -1;
    same = same && fd >= 0 && fsync(fd) == 0;
    if (fd >= 0)
        close(fd);
    return same;
}

static int write_glpk(const lp_instance *in, mdsd_lp_format format, const char *path,
                      mdsd_err *err)
{
    char tmp[4096];
    int rc = mdsd_tmpname(path, tmp, sizeof tmp, err);
    if (rc)
        return rc;
    glp_prob *P = glp_create_prob();
    size_t rows = 0;
    if (in->S)
        rc = mdsd_lp_build_reduced(P, in->p, in->p_scale, in->V, in->S, true, &rows, err);
    else
        mdsd_lp_build_full(P, in->p, in->p_scale, in->V, in->D, in->d_scale, true);
    if (rc == MDSD_OK && format == MDSD_LP_FORMAT_MPS) {
        glp_set_obj_dir(P, GLP_MIN);
        glp_set_obj_name(P, "neg_alpha");
        for (int j = 1; j <= glp_get_num_cols(P); j++)
            glp_set_obj_coef(P, j, -glp_get_obj_coef(P, j));
    }
    if (rc == MDSD_OK) {
        int old_out = glp_term_out(GLP_OFF);
        errno = 0;
        int ret = format == MDSD_LP_FORMAT_MPS ? glp_write_mps(P, GLP_MPS_FILE, NULL, tmp)
                                               : glp_write_lp(P, NULL, tmp);
        int e = errno;
        glp_term_out(old_out);
        if (ret) {
            remove(tmp);
            rc = mdsd_fail(err, MDSD_EIO, "cannot write '%s'%s%s", path, e ? ": " : "",
                           e ? strerror(e) : "");
        }
    }
    if (rc == MDSD_OK && !written_whole(P, format, tmp)) {
        remove(tmp);
        rc = mdsd_fail(err, MDSD_EIO, "cannot write '%s': the file came out incomplete (a full disk?)",
                       path);
    }
    glp_delete_prob(P);
    if (rc)
        mdsd_cleanup_unregister(tmp);
    return rc ? rc : mdsd_publish(tmp, path, err);
}

int mdsd_lp_write(const double *p, size_t V, const mdsd_joint *D, bool reduced,
                  mdsd_lp_format format, const char *path, mdsd_err *err)
{
    lp_instance in = {.p = p, .V = V, .D = D};
    int rc = mdsd_lp_check_input(p, V, D, &in.p_scale, &in.d_scale, err);
    if (rc)
        return rc;
    if (format != MDSD_LP_FORMAT_MATHPROG_DATA && format != MDSD_LP_FORMAT_CPLEX &&
        format != MDSD_LP_FORMAT_MPS)
        return mdsd_fail(err, MDSD_EINVAL, "LP export: unknown format %d", (int)format);
    if (!reduced && mdsd_lp_full_vars(V, D) > (size_t)INT_MAX / 2)
        return mdsd_fail(err, MDSD_ETOOBIG, "full OTM LP: %zu variables are too many to write",
                         mdsd_lp_full_vars(V, D));
    mdsd_set_law S;
    if (reduced) {
        if ((rc = mdsd_set_law_build(D, in.d_scale, &S, err)))
            return rc;
        in.S = &S;
    }
    if (format == MDSD_LP_FORMAT_MATHPROG_DATA)
        rc = write_data(&in, path, err);
    else
        rc = write_glpk(&in, format, path, err);
    if (reduced)
        mdsd_set_law_free(&S);
    return rc;
}

int mdsd_lp_format_parse(const char *path, mdsd_lp_format *format, mdsd_err *err)
{
    const char *dot = path ? strrchr(path, '.') : NULL;
    if (dot && !strcmp(dot, ".lp"))
        *format = MDSD_LP_FORMAT_CPLEX;
    else if (dot && !strcmp(dot, ".mps"))
        *format = MDSD_LP_FORMAT_MPS;
    else if (dot && !strcmp(dot, ".dat"))
        *format = MDSD_LP_FORMAT_MATHPROG_DATA;
    else
        return mdsd_fail(err, MDSD_EINVAL,
                         "'%s': cannot tell the LP format from the name (use .lp, .mps or .dat)",
                         path ? path : "");
    return MDSD_OK;
}
