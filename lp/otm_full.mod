/* otm_full.mod - the full optimal-transport LP of MATH.md section 2
 * (SpecTr eq. 4; Hu et al. eq. 7), in GLPK MathProg.
 *
 * A verifier couples the draft tuple x ~ D with its output token y ~ p. The
 * coupling pi(y, x) has marginals p and D; the verifier accepts when y is
 * one of the drafts, y in S(x). The optimal acceptance rate alpha* is the
 * largest accepted mass over all couplings.
 *
 * Data: `mdsd lp -p P -q Q -n N --scheme S --write-data inst.dat`, then
 *   glpsol -m lp/otm_full.mod -d inst.dat
 * prints a line "alpha* = <value>". */

param V integer > 0;                 /* vocabulary size; tokens 0 .. V-1 */
param n integer > 0;                 /* number of drafts */
param T integer > 0;                 /* number of draft tuples in supp D */

set Y := 0 .. V - 1;                 /* tokens */
set X := 1 .. T;                     /* draft tuples */

param p {Y} >= 0;                    /* target distribution */
param D {X} >= 0;                    /* draft law: probability of tuple t */
param x {X, 1 .. n} integer, >= 0, < V;  /* x[t, j]: the j-th draft of tuple t */

set S {t in X} := setof {j in 1 .. n} x[t, j];   /* S(x): distinct drafts */

check abs(sum {y in Y} p[y] - 1) <= 1e-6;
check abs(sum {t in X} D[t] - 1) <= 1e-6;

var pi {Y, X} >= 0;                  /* the coupling pi(y, x) */

maximize alpha: sum {t in X, y in S[t]} pi[y, t];

s.t. target {y in Y}: sum {t in X} pi[y, t] = p[y];
s.t. draft {t in X}: sum {y in Y} pi[y, t] = D[t];

solve;

printf "alpha* = %.17g\n", sum {t in X, y in S[t]} pi[y, t];

end;
