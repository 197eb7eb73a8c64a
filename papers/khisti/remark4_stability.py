#!/usr/bin/python3
"""How stable is Remark 4's count (papers/khisti/remark4.py: GLPK's stage-1 optimum falls
short of alpha* on 154 of 1000 instances)? The count depends on which optimal vertex of
stage 1's LP the solver returns. This script re-implements successive pairing for n = 3
(Khisti et al. Remark 4 as in src/core/iws.c: each stage's weight LP, tokens ordered by
p - a b decreasing, then speculative sampling with the residual; the exact acceptance by
enumerating the V^3 draft tuples) and solves the stage LPs in several ways:

  glpk           GLPK's primal simplex with the C library's settings (as `is` runs it);
                 checked to reproduce the C library's `is` rate on every instance
  glpk-exact     GLPK's exact rational simplex (glp_exact)
  glpk-dual      GLPK's dual simplex (GLP_DUALP)
  glpk-presolve  GLPK's simplex with its LP presolver
  glpk-scaled    GLPK's simplex after automatic scaling and an advanced initial basis
  glpk-textbook  GLPK's simplex with Dantzig pricing and the textbook ratio test
  glpk-reversed  GLPK's simplex with the pair columns in reverse order
  highs-ds       HiGHS dual simplex (scipy.optimize.linprog)
  highs-ipm      HiGHS interior point with crossover (a vertex)
  vertices       K random optimal vertices of stage 1 per instance (a random objective
                 maximised over stage 1's optimal face, GLPK), stage 2 by `glpk`:
                 the instances where at least one of them falls short, and where all do

(each solver runs both stages), on the same 1000 instances as remark4.py (V = 3..6, n = 3,
Dirichlet p and q, seed 2026), and writes remark4_stability.csv: per way, the instances
that fall short of alpha*_iid by more than 1e-9 and the largest shortfall. Run from the
repository root after `make`:

    PYTHONPATH=src/python /usr/bin/python3 papers/khisti/remark4_stability.py [N] [K]
"""
import csv
import ctypes as C
import os
import sys

import numpy as np
from scipy.optimize import linprog

import mdsd

HERE = os.path.dirname(os.path.abspath(__file__))
SHORT = 1e-9

glpk = C.CDLL("libglpk.so.40")


class Smcp(C.Structure):  # glp_smcp of glpk.h (GLPK 5.0)
    _fields_ = [("msg_lev", C.c_int), ("meth", C.c_int), ("pricing", C.c_int),
                ("r_test", C.c_int), ("tol_bnd", C.c_double), ("tol_dj", C.c_double),
                ("tol_piv", C.c_double), ("obj_ll", C.c_double), ("obj_ul", C.c_double),
                ("it_lim", C.c_int), ("tm_lim", C.c_int), ("out_frq", C.c_int),
                ("out_dly", C.c_int), ("presolve", C.c_int), ("excl", C.c_int),
                ("shift", C.c_int), ("aorn", C.c_int), ("foo_bar", C.c_double * 33)]


glpk.glp_create_prob.restype = C.c_void_p
for name, args in (("glp_set_obj_dir", [C.c_int]), ("glp_add_rows", [C.c_int]),
                   ("glp_add_cols", [C.c_int]), ("glp_set_obj_coef", [C.c_int, C.c_double]),
                   ("glp_set_row_bnds", [C.c_int, C.c_int, C.c_double, C.c_double]),
                   ("glp_set_col_bnds", [C.c_int, C.c_int, C.c_double, C.c_double]),
                   ("glp_load_matrix", [C.c_int, C.c_void_p, C.c_void_p, C.c_void_p]),
                   ("glp_simplex", [C.POINTER(Smcp)]), ("glp_exact", [C.POINTER(Smcp)]),
                   ("glp_get_status", []), ("glp_get_col_prim", [C.c_int]),
                   ("glp_get_obj_val", []), ("glp_delete_prob", []),
                   ("glp_scale_prob", [C.c_int]), ("glp_adv_basis", [C.c_int])):
    getattr(glpk, name).argtypes = [C.c_void_p] + args
glpk.glp_get_col_prim.restype = C.c_double
glpk.glp_get_obj_val.restype = C.c_double
glpk.glp_init_smcp.argtypes = [C.POINTER(Smcp)]
glpk.glp_term_out.argtypes = [C.c_int]
glpk.glp_term_out(0)
GLP_MAX, GLP_FR, GLP_LO, GLP_UP, GLP_DB, GLP_FX, GLP_OPT = 2, 1, 2, 3, 4, 5, 5


class StageLP:
    """Stage LP for pair laws (a, b) (iws.c, full LP): variables t_x in [0, p] per token of
    the stage order and u_xy in [0, m_xy], the mass of pair {x, y} (x before y) kept as x;
    row x: t_x - sum_{y>x} u_xy + sum_{y<x} u_yx <= a b + sum_{y<x} m_yx; maximise sum t."""

    def __init__(self, p, a, b):
        V = len(p)
        drawn = [i for i in range(V) if a[i] > 0 or b[i] > 0]
        self.order = sorted(drawn, key=lambda i: (-(p[i] - a[i] * b[i]), i))
        o, s = self.order, len(self.order)
        self.s = s
        self.p = [p[i] for i in o]
        self.m = {(x, y): a[o[x]] * b[o[y]] + a[o[y]] * b[o[x]]
                  for x in range(s) for y in range(x + 1, s)}
        self.pairs = [k for k in sorted(self.m) if self.m[k] > 0]
        self.ub = [a[o[x]] * b[o[x]] + sum(self.m[y, x] for y in range(x)) for x in range(s)]

    def weights(self, u, V):
        """W[i][j]: probability that the stage keeps i from {i, j} (pairs that never occur:
        the earlier token, as iws.c)."""
        W = np.zeros((V, V))
        for (x, y), mass in self.m.items():
            w = 1.0
            if mass > 0:
                w = min(1.0, max(0.0, u[x, y] / mass))
            W[self.order[x], self.order[y]] = w
            W[self.order[y], self.order[x]] = 1.0 - w
        return W

    def glpk(self, how, objective=None, floor=None):
        """Solves with GLPK; objective = coefficients of the u (a random vertex of the face
        sum t >= floor) or None (maximise sum t). Returns ({pair: u}, optimum)."""
        s, pairs = self.s, list(self.pairs)
        if how == "glpk-reversed":
            pairs = pairs[::-1]
        lp = glpk.glp_create_prob()
        glpk.glp_set_obj_dir(lp, GLP_MAX)
        rows = s + (floor is not None)
        glpk.glp_add_rows(lp, rows)
        glpk.glp_add_cols(lp, s + len(pairs))
        ia, ja, ar = [0], [0], [0.0]
        for x in range(s):
            glpk.glp_set_row_bnds(lp, x + 1, GLP_UP, 0.0, self.ub[x])
            glpk.glp_set_col_bnds(lp, x + 1, GLP_DB if self.p[x] > 0 else GLP_FX, 0.0, self.p[x])
            glpk.glp_set_obj_coef(lp, x + 1, 1.0 if objective is None else 0.0)
            ia.append(x + 1), ja.append(x + 1), ar.append(1.0)
            if floor is not None:
                ia.append(s + 1), ja.append(x + 1), ar.append(1.0)
        for k, (x, y) in enumerate(pairs):
            col = s + 1 + k
            glpk.glp_set_col_bnds(lp, col, GLP_DB, 0.0, self.m[x, y])
            if objective is not None:
                glpk.glp_set_obj_coef(lp, col, objective[x, y])
            ia += [x + 1, y + 1]
            ja += [col, col]
            ar += [-1.0, 1.0]
        if floor is not None:
            glpk.glp_set_row_bnds(lp, s + 1, GLP_LO, floor, 0.0)
        nz = len(ia) - 1
        ia_c, ja_c, ar_c = (C.c_int * len(ia))(*ia), (C.c_int * len(ja))(*ja), (C.c_double * len(ar))(*ar)
        glpk.glp_load_matrix(lp, nz, ia_c, ja_c, ar_c)
        parm = Smcp()
        glpk.glp_init_smcp(C.byref(parm))
        parm.msg_lev = 0
        if how == "glpk-dual":
            parm.meth = 2
        elif how == "glpk-presolve":
            parm.presolve = 1
        elif how == "glpk-textbook":
            parm.pricing, parm.r_test = 0x11, 0x11
        elif how == "glpk-scaled":
            glpk.glp_scale_prob(lp, 0x80)
            glpk.glp_adv_basis(lp, 0)
        rc = (glpk.glp_exact if how == "glpk-exact" else glpk.glp_simplex)(lp, C.byref(parm))
        if rc != 0 or glpk.glp_get_status(lp) != GLP_OPT:
            glpk.glp_delete_prob(lp)
            raise RuntimeError(f"{how}: GLPK code {rc}")
        u = {k: glpk.glp_get_col_prim(lp, s + 1 + i) for i, k in enumerate(pairs)}
        opt = sum(glpk.glp_get_col_prim(lp, x + 1) for x in range(s))
        glpk.glp_delete_prob(lp)
        return u, opt

    def highs(self, how):
        s, pairs = self.s, self.pairs
        n = s + len(pairs)
        c = np.zeros(n)
        c[:s] = -1.0
        A = np.zeros((s, n))
        for x in range(s):
            A[x, x] = 1.0
        for k, (x, y) in enumerate(pairs):
            A[x, s + k], A[y, s + k] = -1.0, 1.0
        bounds = [(0.0, px) for px in self.p] + [(0.0, self.m[k]) for k in pairs]
        res = linprog(c, A_ub=A, b_ub=self.ub, bounds=bounds, method=how)
        if res.status != 0:
            raise RuntimeError(f"{how}: {res.message}")
        return {k: res.x[s + i] for i, k in enumerate(pairs)}, -res.fun

    def solve(self, how, V):
        u, _ = self.highs(how) if how.startswith("highs") else self.glpk(how)
        return self.weights(u, V)


def law(a, b, W):
    """The kept token's law: r(i) = a(i)b(i) + sum_{j != i} (a(i)b(j) + a(j)b(i)) W(i, j)."""
    r = a * b
    for i in range(len(a)):
        for j in range(len(a)):
            if j != i:
                r[i] += (a[i] * b[j] + a[j] * b[i]) * W[i, j]
    return r


def accept_sum(p, r):
    return float(np.minimum(p, r).sum())


def pairing(p, q, how, stage1=None):
    """Weights of both stages (stage 1's given, or solved by HOW) and the exact rate."""
    V = len(p)
    W1 = stage1 if stage1 is not None else StageLP(p, q, q).solve(how, V)
    stages = []
    r, acc = q.copy(), accept_sum(p, q)
    for k, W in enumerate((W1, None)):
        if W is None:
            W = StageLP(p, r, q).solve(how if stage1 is None else "glpk", V)
        r_new = law(r, q, W)
        if accept_sum(p, r_new) < acc:  # a stage that does worse passes u_k through
            stages.append(None)
            continue
        stages.append(W)
        r, acc = r_new, accept_sum(p, r_new)
    return rate(p, q, stages, r)


def rate(p, q, stages, r):
    """Exact acceptance of the pairing with STAGES and final law r: every draft tuple."""
    V = len(p)
    acc = np.where(r > 0, np.minimum(1.0, p / np.where(r > 0, r, 1.0)), 0.0)
    excess = np.maximum(p - r, 0.0)
    res = excess / excess.sum() if excess.sum() > 0 else p
    total = 0.0
    for x1 in range(V):
        for x2 in range(V):
            for x3 in range(V):
                prob = q[x1] * q[x2] * q[x3]
                if prob == 0:
                    continue
                branches = {x1: 1.0}
                for W, v in zip(stages, (x2, x3)):
                    if W is None:
                        continue
                    nxt = {}
                    for u, pu in branches.items():
                        keep = 1.0 if v == u else W[u, v]
                        nxt[u] = nxt.get(u, 0.0) + pu * keep
                        if keep < 1.0:
                            nxt[v] = nxt.get(v, 0.0) + pu * (1.0 - keep)
                    branches = nxt
                drafts = {x1, x2, x3}
                for u, pu in branches.items():
                    total += prob * pu * (acc[u] + (1.0 - acc[u]) *
                                          sum(res[y] for y in drafts if y != u))
    return total


def random_vertex(p, q, rng):
    """A random optimal vertex of stage 1: maximise a random objective over the u on the face
    sum t >= optimum - 1e-12."""
    lp = StageLP(p, q, q)
    _, opt = lp.glpk("glpk")
    c = {k: rng.normal() for k in lp.pairs}
    u, _ = lp.glpk("glpk", objective=c, floor=opt - 1e-12)
    return lp.weights(u, len(p))


HOWS = ("glpk", "glpk-exact", "glpk-dual", "glpk-presolve", "glpk-scaled", "glpk-textbook",
        "glpk-reversed", "highs-ds", "highs-ipm")


def main():
    N = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    K = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    rng = np.random.default_rng(2026)  # the instances of remark4.py
    vrng = np.random.default_rng(29)
    short = dict.fromkeys(HOWS, 0)
    gap = dict.fromkeys(HOWS, 0.0)
    c_mismatch = 0.0
    some_vertex = all_vertices = 0
    vertex_short = vertex_total = 0
    vertex_gap = 0.0
    for t in range(N):
        V = int(rng.integers(3, 7))
        p = rng.dirichlet(np.ones(V) * rng.uniform(0.3, 2))
        q = rng.dirichlet(np.ones(V) * rng.uniform(0.3, 2))
        a = mdsd.alpha_star(p, q, n=3, scheme="iid")
        for how in HOWS:
            r = pairing(p, q, how)
            if how == "glpk":
                c_mismatch = max(c_mismatch, abs(r - mdsd.verifier_rate("is", p, q, n=3)[0]))
            short[how] += r < a - SHORT
            gap[how] = max(gap[how], a - r)
        falls = 0
        for _ in range(K):
            r = pairing(p, q, None, stage1=random_vertex(p, q, vrng))
            falls += r < a - SHORT
            vertex_gap = max(vertex_gap, a - r)
        some_vertex += falls > 0
        all_vertices += falls == K
        vertex_short += falls
        vertex_total += K
        if (t + 1) % 100 == 0:
            print(f"{t + 1}/{N}: " + ", ".join(f"{h} {short[h]}" for h in HOWS) +
                  f"; vertices: some {some_vertex}, all {all_vertices}", file=sys.stderr)
    rows = [("instances", "", N), ("glpk_vs_c_is_largest_difference", "", c_mismatch)]
    for how in HOWS:
        rows += [(how, "short", short[how]), (how, "largest_gap", gap[how])]
    rows += [("vertices", "per_instance", K), ("vertices", "some_short", some_vertex),
             ("vertices", "all_short", all_vertices), ("vertices", "short_fraction", vertex_short / vertex_total),
             ("vertices", "largest_gap", vertex_gap)]
    path = os.path.join(HERE, "remark4_stability.csv")
    with open(path + ".tmp", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["way", "quantity", "value"])
        for way, quantity, value in rows:
            w.writerow([way, quantity, repr(float(value)) if isinstance(value, float) else value])
    os.replace(path + ".tmp", path)
    for r in rows:
        print(*r)


if __name__ == "__main__":
    main()
