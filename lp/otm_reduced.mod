/* otm_reduced.mod - the reduced LP of MATH.md section 2 (SpecHub section 3.2;
 * Hu et al. eq. 9), in GLPK MathProg.
 *
 * Only accepting entries of the coupling matter, and the LP sees D only
 * through the masses Dbar(S) of the draft tuples whose set of distinct tokens
 * is S. So: s(y, S) >= 0 for y in S, the mass sent from set S to an
 * accepted token y; each set gives at most Dbar(S), each token receives at
 * most p(y). It is a bipartite max-flow (source -> S -> y -> sink) with the
 * same optimum alpha* as the full LP (otm_full.mod).
 *
 * Data: `mdsd lp -p P -q Q -n N --scheme S --reduced --write-data inst.dat`,
 * then
 *   glpsol -m lp/otm_reduced.mod -d inst.dat
 * prints a line "alpha* = <value>". */

param V integer > 0;                 /* vocabulary size; tokens 0 .. V-1 */
param K integer > 0;                 /* number of distinct token sets */

set Y := 0 .. V - 1;                 /* tokens */
set S {1 .. K} within Y;             /* S[k]: the k-th token set */

param p {Y} >= 0;                    /* target distribution */
param Dbar {1 .. K} >= 0;            /* mass of the tuples whose set is S[k] */

check abs(sum {y in Y} p[y] - 1) <= 1e-6;
check abs(sum {k in 1 .. K} Dbar[k] - 1) <= 1e-6;

var s {k in 1 .. K, y in S[k]} >= 0; /* accepted mass from set k to token y */

maximize alpha: sum {k in 1 .. K, y in S[k]} s[k, y];

s.t. set_mass {k in 1 .. K}: sum {y in S[k]} s[k, y] <= Dbar[k];
s.t. target {y in Y}: sum {k in 1 .. K: y in S[k]} s[k, y] <= p[y];

solve;

printf "alpha* = %.17g\n", sum {k in 1 .. K, y in S[k]} s[k, y];

end;
