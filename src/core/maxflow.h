/* maxflow.h - alpha*(p, D) as a maximum flow (MATH.md §2.2): the reduced LP
 * of SpecHub 3.2 / Hu eq. 9 is the max-flow problem on the network
 *
 *   source -> set S      capacity Dbar(S) (the set law of D, lp.h)
 *   set S  -> token y    y in S, unbounded
 *   token y -> sink      capacity p(y)
 *
 * whose minimum cuts are the subset form: a cut leaves a token set H on the
 * source side and costs p(H) + Dbar(sets not inside H) = 1 + p(H) - Q(H).
 *
 * Solved by push-relabel (Goldberg-Tarjan: a greedy start, highest label,
 * global relabels and the gap heuristic) on doubles, then certified: the cut read off the final residual graph is
 * valued directly (compensated sums of p over H and of Dbar over the sets
 * not inside H), a feasible flow is rebuilt from the computed one, and the
 * two must agree to MDSD_MAXFLOW_CERT_TOL or the call fails. The cut value
 * is reported: alpha* lies between the two, so it is exact to that tolerance.
 *
 * GLPK's graph routine glp_maxflow_ffalg does not fit: it copies every arc
 * capacity into an int and refuses (GLP_EDATA) any that is not an integer
 * in [0, INT_MAX], so masses would have to be scaled to integers below
 * 2^31 - a resolution of 5e-10 per arc, far from 1e-9 once summed over the
 * tokens, and every subnormal mass lost - and Ford-Fulkerson's augmenting
 * paths then take time proportional to the capacities. glp_maxflow_lp
 * only writes the reduced LP again (lp.h). */
#ifndef MDSD_MAXFLOW_H
#define MDSD_MAXFLOW_H

#include <stddef.h>

#include "err.h"
#include "lp.h"

/* Largest accepted |cut value - feasible flow value|: far below 1e-9, far
 * above the rounding of the flow (about 1e-16 per push). */
#define MDSD_MAXFLOW_CERT_TOL 1e-11

typedef struct {
    double alpha;         /* the cut value 1 + p(H) - Q(H), an upper bound on alpha* */
    double flow;          /* value of a feasible flow, a lower bound on alpha* */
    size_t sets;          /* set nodes (distinct token sets of positive mass) */
    size_t arcs;          /* set -> token arcs */
    size_t pushes, relabels, global_relabels, gaps;
} mdsd_maxflow_result;

/* alpha*(p, D) for the set law S over V tokens, with p[0..V) a validated
 * probability vector. H (NULL, or [V]) receives the source side of the
 * minimum cut found (1 = in H), a minimiser of p(H) - Q(H). Fails with
 * MDSD_ESOLVER when the certificate does not close. */
int mdsd_maxflow_alpha(const double *p, size_t V, const mdsd_set_law *S,
                       mdsd_maxflow_result *res, unsigned char *H, mdsd_err *err);

#endif
