#!/usr/bin/python3
"""`make bench`: mdsd beside its numpy / scipy peers on identical inputs, in
one invocation, and the table of README's Performance section.

Our side runs through tests/bench/bench_driver.c (the library called as the
CLI does) and the `mdsd` binary itself; the peers are tests/bench/peers.py
(Debian's python3-numpy / python3-scipy). Every input is written once and read
by both sides: float32 logit pairs (softmax on both sides), p/q text files
(%.17g, exact round trip) and HDF5 dumps made by `mdsd toy`. Each time is the
median of repeated runs (wall clock: the peers' time.perf_counter and the
driver's CLOCK_MONOTONIC); positions/s/core come from CPU time. Values are
cross-checked in the same run (largest absolute difference per position, or
the Monte-Carlo estimate against the exact value in standard errors).

Usage: run_bench.py --driver BIN --mdsd BIN [--out DIR] [--quick]
  --quick   smaller inputs and fewer repeats (a smoke run, not for the README)
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

PEERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers.py")
PY = "/usr/bin/python3"


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def run_rusage(cmd, env=None):
    """Runs cmd (env: variables added to ours); returns (wall seconds, CPU seconds of the
    child, peak RSS in MB)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=None if env is None else {**os.environ, **env})
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"run_bench: {' '.join(cmd)} failed:\n{err}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0


def median(xs):
    xs = sorted(xs)
    k = len(xs)
    return xs[k // 2] if k % 2 else 0.5 * (xs[k // 2 - 1] + xs[k // 2])


def machine():
    model, cores = "?", "?"
    try:
        info = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        m = re.search(r"Model name:\s*(.+)", info)
        model = m.group(1).strip() if m else model
        m = re.search(r"^CPU\(s\):\s*(\d+)", info, re.M)
        cores = m.group(1) if m else cores
    except OSError:
        pass
    load = open("/proc/loadavg").read().split()[:3]
    return model, cores, " ".join(load)


def fmt_time(s):
    if s >= 1.0:
        return f"{s:.3g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} µs"


def fmt_rate(r, unit):
    if r >= 1e6:
        return f"{r / 1e6:.3g} M {unit}"
    if r >= 1e3:
        return f"{r / 1e3:.3g} k {unit}"
    return f"{r:.3g} {unit}"


class Bench:
    def __init__(self, a):
        self.a = a
        self.rows = []      # what, size, ours, peer, ratio, check
        self.cores = []     # V, scheme, positions/s/core
        self.notes = []
        self.data = {}
        os.makedirs(a.out, exist_ok=True)

    def path(self, name):
        return os.path.join(self.a.out, name)

    def driver(self, *args):
        return run_json([self.a.driver, *map(str, args)])

    def peer(self, *args):
        return run_json([PY, PEERS, *map(str, args)])

    def row(self, what, size, ours, peer, ratio, check):
        self.rows.append((what, size, ours, peer, ratio, check))
        print(f"  {what} [{size}]: ours {ours}, peer {peer}, ratio {ratio}, check {check}",
              file=sys.stderr, flush=True)

    # ---- alpha* by sort-and-scan, softmax included ---------------------------------

    def alpha(self, V, positions):
        """Rounds alternate the peer and ours, so that both see the same load;
        each side's time is the median over the rounds. `none` is the two
        softmaxes alone (the floor every route pays); `iid-full` the iid scan
        over the full q/p order (the reference of the sort-free route)."""
        f32 = self.path(f"logits-{V}.f32")
        self.driver("gen", f32, "--vocab", V, "--positions", positions, "--seed", 1)
        rounds = 2 if self.a.quick else 5
        runs = {"none": ["--scheme", "none"], "iid": ["--scheme", "iid"],
                "iid-full": ["--scheme", "iid", "--full-sort", 1], "wor": ["--scheme", "wor"],
                "wor-full": ["--scheme", "wor", "--full-sort", 1],
                "greedy": ["--scheme", "greedy"]}
        peer_t, ours_t, ours_cpu, ours = [], {}, {}, {}
        for _ in range(rounds):
            peer = self.peer("alpha-iid", f32, "--f32", "--vocab", V, "--n", 3, "--temperature", 0.7,
                             "--repeats", 1)
            peer_t.append(peer["median_seconds"])
            for name, args in runs.items():
                ours[name] = self.driver("alpha", f32, "--vocab", V, *args, "--n", 3,
                                         "--temperature", 0.7, "--repeats", 3)
                ours_t.setdefault(name, []).append(ours[name]["median_seconds"])
                ours_cpu.setdefault(name, []).append(ours[name]["best_cpu_seconds"])
        t_peer = median(peer_t) / positions
        t_floor = median(ours_t["none"]) / positions
        for name in runs:
            t_ours = median(ours_t[name]) / positions
            self.cores.append((V, name, positions / min(ours_cpu[name])))
            self.data[f"alpha-{name}-{V}"] = dict(ours[name], round_seconds=ours_t[name])
            if name in ("greedy", "none"):
                continue
            if name.startswith("iid"):
                diff = max(abs(x - y) for x, y in zip(ours[name]["values"], peer["values"]))
                check = f"max abs diff {diff:.1e}"
                what = ("α\\*_iid sort-free, n = 3 (softmax incl.) vs numpy" if name == "iid" else
                        "α\\*_iid over the full q/p order (the reference route) vs numpy")
            elif name == "wor":
                lower = min(w - i for w, i in zip(ours["wor"]["values"], ours["iid"]["values"]))
                check = f"α\\*_wor − α\\*_iid ≥ {lower:+.1e}"
                what = "exact `wor` α\\* without the full order, n = 3 (softmax incl.) vs the numpy iid peer"
            else:
                diff = max(abs(x - y) for x, y in zip(ours["wor"]["values"], ours[name]["values"]))
                check = f"max abs diff to the row above {diff:.1e}"
                what = "exact `wor` α\\* over the full q/p order (the reference route) vs the numpy iid peer"
            self.row(what, f"V = {V:,}", f"{fmt_time(t_ours)}/pos", f"{fmt_time(t_peer)}/pos",
                     f"{t_peer / t_ours:.1f}×", check)
        self.row("the floor: the two softmaxes alone; α\\*_iid sort-free, `wor` above it",
                 f"V = {V:,}", f"{fmt_time(t_floor)}/pos", "–",
                 f"iid {median(ours_t['iid']) / positions / t_floor:.2f}×, "
                 f"wor {median(ours_t['wor']) / positions / t_floor:.2f}× the floor",
                 f"iid: floor + {fmt_time(median(ours_t['iid']) / positions - t_floor)}")
        self.data[f"peer-alpha-iid-{V}"] = {"round_seconds": peer_t, "positions": positions}

    # ---- small instance: exact alpha* against the full LP ------------------------------

    def lp(self):
        f32, pq = self.path("logits-50.f32"), self.path("pq-50.txt")
        self.driver("gen", f32, "--vocab", 50, "--positions", 1, "--seed", 3)
        self.driver("pq", f32, "--vocab", 50, "--position", 0, "--temperature", 0.7, "-o", pq)
        ours = self.driver("lp", pq, "--n", 2, "--repeats", 3 if self.a.quick else 5)
        peer = self.peer("lp-full", pq, "--n", 2, "--repeats", 3)
        t_h = peer["median_seconds"]
        d = abs(ours["auto_alpha"] - peer["value"])
        self.row(f"exact α\\* ({ours['auto_method']}) vs scipy HiGHS on the full OTM LP, iid",
                 "V = 50, n = 2", fmt_time(ours["auto_seconds"]), fmt_time(t_h),
                 f"{t_h / ours['auto_seconds']:.3g}×", f"abs diff {d:.1e}")
        d = abs(ours["glpk_alpha"] - peer["value"])
        self.row(f"full OTM LP: GLPK (`lp-full`, {ours['glpk_vars']:,} vars) vs scipy HiGHS",
                 "V = 50, n = 2", fmt_time(ours["glpk_seconds"]), fmt_time(t_h),
                 f"{t_h / ours['glpk_seconds']:.3g}×", f"abs diff {d:.1e}")
        self.data["lp"] = ours
        self.data["peer-lp"] = peer

    # ---- alpha* of multi-drafter laws: the certified max-flow against the reduced LP -----

    def flow(self):
        """`maxflow` beside GLPK's reduced LP on the same multi-drafter instances
        (drafter j = softmax of position j's draft logits), then maxflow alone
        at sizes the LP cannot reach in reasonable time."""
        reps = 1 if self.a.quick else 3
        for V, n in ((100, 2), (30, 3)):
            f32 = self.path(f"flow-{V}.f32")
            self.driver("gen", f32, "--vocab", V, "--positions", n, "--seed", 7)
            ours = self.driver("flow", f32, "--vocab", V, "--n", n, "--method", "maxflow",
                               "--repeats", reps)
            lp = self.driver("flow", f32, "--vocab", V, "--n", n, "--method", "lp-reduced",
                             "--repeats", 1)
            t, t_lp = ours["median_seconds"], lp["median_seconds"]
            self.row(f"α\\* of a `multi` law ({n} drafters): `maxflow` vs GLPK `lp-reduced` "
                     f"({lp['lp_vars']:,} vars)", f"V = {V}, n = {n}", fmt_time(t), fmt_time(t_lp),
                     f"{t_lp / t:.3g}×", f"abs diff {abs(ours['alpha'] - lp['alpha']):.1e}")
            self.data[f"flow-{V}-{n}"] = {"maxflow": ours, "lp-reduced": lp}
        for V, n in ((2000, 2), (150, 3)):
            if self.a.quick:
                V //= 4
            f32 = self.path(f"flow-{V}.f32")
            self.driver("gen", f32, "--vocab", V, "--positions", n, "--seed", 7)
            ours = self.driver("flow", f32, "--vocab", V, "--n", n, "--method", "maxflow",
                               "--repeats", reps, "--max-tuples", 10**9)
            self.row(f"α\\* of a `multi` law ({n} drafters) by `maxflow`, {ours['sets']:,} token "
                     "sets (enumeration and set law included)", f"V = {V:,}, n = {n}",
                     fmt_time(ours["median_seconds"]), "–", "–",
                     f"certificate: cut − flow = {abs(ours['certificate_gap']):.1e}")
            self.data[f"flow-{V}-{n}"] = {"maxflow": ours}

    # ---- Monte Carlo of rrs ------------------------------------------------------------

    def mc(self, V):
        f32, pq = self.path(f"logits-{V}.f32"), self.path(f"pq-{V}.txt")
        self.driver("pq", f32, "--vocab", V, "--position", 0, "--temperature", 0.7, "-o", pq)
        trials = 10**6 if self.a.quick else 4 * 10**6
        ours = self.driver("mc", pq, "--n", 3, "--trials", trials, "--threads", 1,
                           "--repeats", 3 if self.a.quick else 5)
        vec = self.peer("rrs-mc", pq, "--n", 3, "--trials", 10**6, "--repeats", 3)
        loop = self.peer("rrs-loop", pq, "--n", 3, "--trials", 300 if self.a.quick else 2000,
                         "--repeats", 1 if self.a.quick else 3)
        exact, se = ours["exact"], ours["se"]

        def z(est, n):
            s = (exact * (1 - exact) / n) ** 0.5
            return f"|est − exact| = {abs(est - exact) / s:.1f} s.e."

        r = ours["trials_per_second"]
        self.row("Monte-Carlo `rrs` trials/s, 1 thread, vs numpy literal per-trial loop",
                 f"V = {V:,}, n = 3", fmt_rate(r, "/s"), fmt_rate(loop["trials_per_second"], "/s"),
                 f"{r / loop['trials_per_second']:.3g}×",
                 f"ours {abs(ours['value'] - exact) / se:.1f} s.e.; loop: {z(loop['value'], loop['trials'])}")
        self.row("Monte-Carlo `rrs` trials/s, 1 thread, vs numpy vectorised (all trials at once)",
                 f"V = {V:,}, n = 3", fmt_rate(r, "/s"), fmt_rate(vec["trials_per_second"], "/s"),
                 f"{r / vec['trials_per_second']:.3g}×", f"numpy: {z(vec['value'], vec['trials'])}")
        self.data["mc"] = ours
        self.data["peer-rrs-mc"] = vec
        self.data["peer-rrs-loop"] = loop

    # ---- rrsw's exact rate (certified interval) ------------------------------------------------

    def rrsw(self, V):
        f32 = self.path(f"logits-{V}.f32")
        for n in (3, 4, 5):
            ours = self.driver("rrsw", f32, "--vocab", V, "--n", n, "--temperature", 0.7,
                               "--trials", 2000)
            self.data[f"rrsw-{n}"] = ours
            what = "exact `rrsw` (certified, width ≤ 1e-9), 1 thread, vs Monte Carlo at 2,000 trials/pos"
            if n == 4 and ours["refused"]:
                self.row(what, f"V = {V:,}, n = {n}", "refused", "–", "–",
                         ours["message"].split(";")[0].replace("rrsw: ", ""))
                # the same rate with the visit guard lifted (--max-paths 1e10): every
                # sequence of two rejections is a node (~1e8 visits), the time it takes
                npos = 1 if self.a.quick else 2
                ours = self.driver("rrsw", f32, "--vocab", V, "--n", n, "--temperature", 0.7,
                                   "--trials", 2000, "--max-paths", "1e10", "--positions", npos)
                self.data[f"rrsw-{n}-unguarded"] = ours
                what = (f"exact `rrsw` with the visit guard lifted (`--max-paths 1e10`), "
                        f"first {npos} position{'s' if npos > 1 else ''}")
            if ours["refused"]:
                self.row(what, f"V = {V:,}, n = {n}", "refused", "–", "–",
                         ours["message"].split(";")[0].replace("rrsw: ", ""))
                continue
            t, t_mc = ours["median_seconds"], ours["mc_median_seconds"]
            self.row(what, f"V = {V:,}, n = {n}",
                     f"{fmt_time(t)}/pos ({1 / t:,.0f}/s; slowest {fmt_time(ours['slowest_seconds'])})"
                     if t < 0.1 else f"{fmt_time(t)}/pos (slowest {fmt_time(ours['slowest_seconds'])})",
                     f"{fmt_time(t_mc)}/pos (s.e. ~0.01)", f"{t_mc / t:.3g}×",
                     f"widest interval {ours['widest']:.1e}; MC z = {ours['mc_z']:.2f}")

    # ---- ot: the optimal verifier's set-up and verification ---------------------------------

    def ot(self, V, positions):
        """ot's set-up per position and its cost per verified draft tuple, one core,
        beside alpha* by sort-and-scan and rrs's and kseq's set-up in the same pass
        (softmax excluded: the same p, q for all four)."""
        f32 = self.path(f"logits-{V}.f32")
        if not os.path.exists(f32):
            self.driver("gen", f32, "--vocab", V, "--positions", positions, "--seed", 1)
        for n in (2, 3, 4, 6, 8):
            ours = self.driver("ot", f32, "--vocab", V, "--n", n, "--temperature", 0.7,
                               "--repeats", 2 if self.a.quick else 3,
                               "--tuples", 500 if self.a.quick else 2000)
            self.data[f"ot-{V}-{n}"] = ours
            t_ot, t_a = ours["ot_setup_seconds"], ours["alpha_seconds"]
            t_rrs, t_kseq, t_v = ours["rrs_setup_seconds"], ours["kseq_setup_seconds"], ours["ot_verify_seconds"]
            self.row("`ot` set-up per position (1 core, CPU) vs α\\* by sort-and-scan; rrs, kseq set-up",
                     f"V = {V:,}, n = {n}", f"{fmt_time(t_ot)}/pos",
                     f"α\\* {fmt_time(t_a)}; rrs {fmt_time(t_rrs)}; kseq {fmt_time(t_kseq)}",
                     f"{t_ot / t_a:.1f}× α\\*, {t_ot / t_rrs:.1f}× rrs",
                     f"|α(ot) − α\\*| ≤ {ours['worst_gap']:.1e}")
            self.row("`ot` per verified draft tuple, and per verified token (set-up + one tuple)",
                     f"V = {V:,}, n = {n}", f"{fmt_time(t_v)}/tuple; {fmt_time(t_ot + t_v)}/token",
                     "–", "–", f"χ² {ours['chi_square']:.0f} on {ours['dof']} d.f., "
                     f"acceptance {ours['acceptance']:.4f}")

    # ---- mdsd table end to end, and its memory ----------------------------------------------

    def dump(self, V, N, family="zipf", dtype="float16"):
        path = self.path(f"{family}-{V}-{N}{'' if dtype == 'float16' else '-' + dtype}.h5")
        if not os.path.exists(path):
            subprocess.run([self.a.mdsd, "toy", "--family", family, "--vocab", str(V),
                            "--positions", str(N), "--seed", "1", "--dtype", dtype, "-o", path],
                           check=True, stdout=subprocess.DEVNULL)
        return path

    def table_iid(self):
        """The iid-only table job end to end (its reading, validation,
        provenance and output included) in CPU-seconds, one thread, beside
        the numpy peer's loop on the same float32 logits already in memory;
        rounds alternate the two."""
        V, N = 32000, 100 if self.a.quick else 400
        dump = self.dump(V, N, dtype="float32")
        f32 = self.path(f"table-iid-{V}-{N}.f32")
        subprocess.run([PY, "-c", "import sys, h5py, numpy as np\n"
                        "f = h5py.File(sys.argv[1], 'r')\n"
                        "np.stack([f['/target/logits'][:], f['/drafts/draft/logits'][:]], axis=1)"
                        ".astype('<f4').tofile(sys.argv[2])", dump, f32], check=True)
        cmd = [self.a.mdsd, "table", dump, "-o", self.path("table-iid.csv"), "-t", "0.7", "-d", "3",
               "-s", "iid", "-v", "none", "--threads", "1"]
        peer_t, cpu = [], []
        for _ in range(2 if self.a.quick else 5):
            peer = self.peer("alpha-iid", f32, "--f32", "--vocab", V, "--n", 3, "--temperature", 0.7,
                             "--repeats", 1)
            peer_t.append(peer["cpu_seconds"])
            cpu.append(run_rusage(cmd)[1])
        t_peer, t_ours = median(peer_t) / N, median(cpu) / N
        with open(self.path("table-iid.csv")) as f:
            ours = float(f.read().splitlines()[1].split(",")[5])
        mean_peer = sum(peer["values"]) / len(peer["values"])
        self.row("`mdsd table -s iid -v none` end to end (reading, validation, provenance and "
                 "output included), CPU-seconds, --threads 1, vs the numpy loop on the logits in "
                 "memory", f"V = {V:,} float32 dump, {N} positions, n = 3",
                 f"{fmt_time(t_ours)}/pos ({1 / t_ours:,.0f} per CPU-second)",
                 f"{fmt_time(t_peer)}/pos (CPU)", f"{t_peer / t_ours:.1f}×",
                 f"mean α\\* {ours:.10g} vs numpy {mean_peer:.10g}")
        self.data["table-iid"] = {"positions": N, "cpu": cpu, "peer_round_seconds": peer_t}

    def table_cmd(self, dump, out, threads=2):
        return [self.a.mdsd, "table", dump, "-o", out, "-t", "0.7", "-d", "3", "-s", "iid,wor,greedy",
                "-v", "rrs,kseq,greedy", "--threads", str(threads)]

    def table(self):
        N = 500 if self.a.quick else 2000
        dump = self.dump(32000, N)
        out = self.path("table.csv")
        runs = [run_rusage(self.table_cmd(dump, out)) for _ in range(2 if self.a.quick else 5)]
        wall = median([r[0] for r in runs])
        cpu = median([r[1] for r in runs])
        rss = max(r[2] for r in runs)
        one = [run_rusage(self.table_cmd(dump, out, 1)) for _ in range(1 if self.a.quick else 3)]
        wall1 = median([r[0] for r in one])
        cpu1 = median([r[1] for r in one])
        self.row("`mdsd table` end to end: T = 0.7, n = 3, iid,wor,greedy α\\* + exact rrs,kseq,greedy, "
                 "--threads 2", f"V = 32,000 Zipf dump (float16), {N:,} positions",
                 f"{N / wall:,.0f} positions/s ({N / cpu:,.0f} per CPU-second; --threads 1: "
                 f"{N / wall1:,.0f}/s, {N / cpu1:,.0f} per CPU-second; 2 threads "
                 f"{wall1 / wall:.2f}× the wall speed of 1)", "–", "–", f"peak RSS {rss:.0f} MB")
        self.data["table"] = {"positions": N, "wall": [r[0] for r in runs], "cpu": [r[1] for r in runs],
                              "wall_1_thread": [r[0] for r in one], "cpu_1_thread": [r[1] for r in one],
                              "rss_mb": rss}
        # exact rrsw at n = 3 inside the job (the wor alpha* beside it), one thread
        Nr = 100 if self.a.quick else 400
        dump_r = self.dump(32000, Nr)
        cmd = [self.a.mdsd, "table", dump_r, "-o", self.path("table-rrsw.csv"), "-t", "0.7", "-d", "3",
               "-s", "wor", "-v", "rrsw", "--threads", "1"]
        rr = [run_rusage(cmd) for _ in range(1 if self.a.quick else 3)]
        cpu_r = median([r[1] for r in rr])
        self.row("`mdsd table` end to end: T = 0.7, n = 3, α\\* of wor + exact rrsw (certified), "
                 "--threads 1", f"V = 32,000 Zipf dump (float16), {Nr:,} positions",
                 f"{Nr / cpu_r:,.0f} positions per CPU-second ({Nr / median([r[0] for r in rr]):,.0f}/s)",
                 "–", "–", f"peak RSS {max(r[2] for r in rr):.0f} MB")
        self.data["table-rrsw"] = {"positions": Nr, "wall": [r[0] for r in rr], "cpu": [r[1] for r in rr]}
        # Memory does not grow with the number of positions: the same job on
        # 10^4 and 10^5 positions (V = 1,000 keeps the 10^5-row dump at 400 MB;
        # at V = 32,000 it would be 12.8 GB).
        sizes = [10**4, 10**5] if not self.a.quick else [2000, 10**4]
        peaks = []
        for n_pos in sizes:
            d = self.dump(1000, n_pos)
            wall, cpu, rss = run_rusage(self.table_cmd(d, self.path(f"table-1000-{n_pos}.csv")))
            peaks.append((n_pos, rss, n_pos / wall))
        self.row("`mdsd table` peak RSS (same job) vs the number of positions", "V = 1,000",
                 ", ".join(f"{p / 1000:,.0f}k positions: {r:.0f} MB" for p, r, _ in peaks), "–", "–",
                 ", ".join(f"{t:,.0f} positions/s" for _, _, t in peaks))
        self.data["rss"] = peaks

    # ---- mdsd.evaluate (rows in memory through the table job) beside mdsd.batch -------------

    EVALUATE_CHILD = """
import json, sys, time, warnings
import numpy as np
import mdsd
N, V, rounds = (int(x) for x in sys.argv[1:4])
rng = np.random.default_rng(1)
t = (3 * rng.standard_normal((N, V))).astype(np.float32)
d = (0.8 * t + rng.standard_normal((N, V))).astype(np.float32)
kw = dict(temperature=0.7, n=3, scheme="iid", threads=1, progress=False)
cpu = {"batch": [], "evaluate": []}
for _ in range(rounds):
    c0 = time.process_time(); b = mdsd.batch(t, d, **kw); c1 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = mdsd.evaluate(t, d, temperatures=(0.7,), draft_counts=(3,), schemes=("iid",),
                          threads=1, progress=False, pandas=False)
    c2 = time.process_time()
    cpu["batch"].append(c1 - c0); cpu["evaluate"].append(c2 - c1)
print(json.dumps({"cpu": cpu, "batch_mean": float(np.mean(b.alpha_star)),
                  "evaluate_mean": float(e["alpha"][0])}))
"""

    def evaluate(self):
        """mdsd.evaluate (the table job over the arrays in memory: no temporary dump) beside
        mdsd.batch on the same float32 arrays, CPU-seconds, one thread, rounds alternating."""
        N, V = (500 if self.a.quick else 2000), 32000
        env = dict(os.environ, PYTHONPATH="src/python")
        out = subprocess.run([PY, "-c", self.EVALUATE_CHILD, str(N), str(V), "2" if self.a.quick else "5"],
                             check=True, capture_output=True, text=True, env=env).stdout
        r = json.loads(out.splitlines()[-1])
        tb, te = median(r["cpu"]["batch"]), median(r["cpu"]["evaluate"])
        self.row("`mdsd.evaluate` (the table job over arrays in memory, no temporary dump) vs "
                 "`mdsd.batch` on the same arrays, CPU-seconds, threads=1, T = 0.7, n = 3, iid α\*",
                 f"V = {V:,} float32 arrays, {N:,} positions",
                 f"{tb / te * N / tb:,.0f} positions per CPU-second ({te:.3g} s)",
                 f"batch {N / tb:,.0f} per CPU-second ({tb:.3g} s)", f"{tb / te:.2f}×",
                 f"mean α\* evaluate {r['evaluate_mean']:.10g} vs batch {r['batch_mean']:.10g}")
        self.data["evaluate"] = {"positions": N, "V": V, "cpu": r["cpu"]}

    # ---- the provenance's SHA-256 (in process, GNU Nettle; cached beside the dump) ----------

    def hashing(self):
        """The iid-only table job (the job of issue 27's profile, where a sha256sum child
        was 53 % of the CPU) with the dump's digest read from its cache, computed (no
        cache) and recomputed (MDSD_REHASH=1); the three alternate round by round."""
        N = 500 if self.a.quick else 2000
        dump = self.dump(32000, N)
        out = self.path("table-hash.csv")
        cmd = [self.a.mdsd, "table", dump, "-o", out, "-t", "0.7", "-d", "3", "-s", "iid",
               "-v", "none", "--threads", "1"]
        run_rusage(cmd)  # leaves the cache beside the dump
        ways = {"cached": {}, "no cache": {"MDSD_HASH_CACHE": "0"}, "rehash": {"MDSD_REHASH": "1"}}
        cpu = {w: [] for w in ways}
        for _ in range(3 if self.a.quick else 7):
            for w, env in ways.items():
                cpu[w].append(run_rusage(cmd, env)[1])
        c = {w: median(v) for w, v in cpu.items()}
        mb = os.path.getsize(dump) / 1e6
        hashing = c["no cache"] - c["cached"]
        self.row("`mdsd table -s iid -v none --threads 1` CPU-seconds: dump digest from the cache "
                 "beside it vs hashed in process (no cache; MDSD_REHASH=1)",
                 f"V = 32,000 Zipf dump (float16), {N:,} positions, {mb:,.0f} MB",
                 f"cached {c['cached']:.3g} s; hashed {c['no cache']:.3g} s; rehash {c['rehash']:.3g} s",
                 "–", f"{c['no cache'] / c['cached']:.3g}×",
                 f"hashing ≈ {mb / hashing:,.0f} MB per CPU-second" if hashing > 0 else "–")
        self.data["hashing"] = {"positions": N, "megabytes": mb, "cpu": cpu}

    # ---- output -------------------------------------------------------------------------------

    def report(self, model, cores, load_before, load_after):
        lines = ["| what | size | ours (median) | peer (median) | ratio | cross-check |",
                 "| --- | --- | ---: | ---: | ---: | --- |"]
        for r in self.rows:
            lines.append("| " + " | ".join(r) + " |")
        lines += ["", "Positions/s/core (CPU time of the fastest pass, softmax of both models included, "
                  "n = 3, T = 0.7):", "",
                  "| scheme | V = 32,000 | V = 152,064 |", "| --- | ---: | ---: |"]
        for scheme in ("none", "iid", "iid-full", "wor", "wor-full", "greedy"):
            cells = []
            for V in (32000, 152064):
                hit = [c for c in self.cores if c[0] == V and c[1] == scheme]
                cells.append(f"{hit[0][2]:,.0f}" if hit else "–")
            label = {"none": "the two softmaxes alone (floor)", "iid": "iid (sort-free)",
                     "iid-full": "iid (full q/p order)", "wor": "wor (exact, without the full order)",
                     "wor-full": "wor (exact, full q/p order)",
                     "greedy": "greedy (closed form)"}
            lines.append(f"| {label[scheme]} | " + " | ".join(cells) + " |")
        lines += ["", f"Machine: {model}, {cores} cores; load average {load_before} before, "
                  f"{load_after} after (shared machine)."]
        text = "\n".join(lines)
        print(text)
        with open(self.path("results.md"), "w") as f:
            f.write(text + "\n")
        with open(self.path("results.json"), "w") as f:
            json.dump({"machine": model, "cores": cores, "load": [load_before, load_after],
                       "rows": self.rows, "per_core": self.cores, "data": self.data}, f, indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--driver", required=True)
    ap.add_argument("--mdsd", required=True)
    ap.add_argument("--out", default="build/bench")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    model, cores, load_before = machine()
    print(f"make bench: {model}, {cores} cores, load {load_before}", file=sys.stderr)
    b = Bench(a)
    b.alpha(32000, 8 if a.quick else 32)
    b.alpha(152064, 4 if a.quick else 8)
    b.lp()
    b.flow()
    b.mc(32000)
    b.rrsw(32000)
    b.ot(32000, 8 if a.quick else 16)
    b.ot(152064, 4 if a.quick else 8)
    b.table_iid()
    b.table()
    b.evaluate()
    b.hashing()
    b.report(model, cores, load_before, machine()[2])


if __name__ == "__main__":
    main()
