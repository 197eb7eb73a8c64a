"""Tree dumps at the block starts of live decoding (`--tree-live VERIFIER`; MATH.md §5.9,
data/README.md "Tree dumps").

Each sample is decoded speculatively from its prompt: at the current context one draft tree
is drawn (as trees.py draws them), the verifier is run down it through the mdsd Python
package (libmdsd's own verifier, node by node, as `mdsd block` evaluates it: a drafted
output token is accepted and verification goes on at that child; otherwise it is the
correction and the block ends; past depth L a bonus token from the target), the block's
tau tokens are appended to the response, and the next tree is drawn where the block
stopped, until the response has --max-new-tokens tokens or an end-of-sequence token. The
trees are then at the contexts live decoding visits, weighted as it visits them, so that
the mean over trees of E[tau | tree] that `mdsd block` reports for this verifier and
policy estimates live tokens per target call (every token of a call counted, also those
past the end). Tree i of sample s draws from the stream (seed, s, position, 0x7EE) as in
trees.py; the verifier's randomness from (seed, s, position, 0x11FE)."""


import numpy as np

from .errors import RunnerError
from .pipeline import _checked, pad_right

def live_verifiers():
    """The verifiers --tree-live takes: the library's registry's (mdsd.LIVE_VERIFIERS), read
    through the mdsd package so that no list of names lives here."""
    return load_mdsd().LIVE_VERIFIERS


def load_mdsd():
    """The mdsd Python package, imported as any package is: the wheel and `make install`
    put it on the path, src/bin/mdsd-runner adds src/python in a source tree (no path
    set up here)."""
    try:
        import mdsd
    except ImportError as e:
        raise RunnerError(f"--tree-live runs the verifier through the mdsd Python package and "
                          f"libmdsd (build them with make, or set MDSD_LIBRARY): {e}") from None
    return mdsd


class Walker:
    """The verifier of one live run, prepared per (drafts n, depth)."""

    def __init__(self, name, pol, T):
        self.mdsd = load_mdsd()
        self.name, self.pol, self.T = name, pol, T
        self.scheme = "iid" if pol["policy"] == "seq" else pol["scheme"]
        self.cache = {}
        widths = ([pol["sequences"]] if pol["policy"] == "seq" else sorted(set(pol["widths"])))
        for n in widths:  # refuse a verifier the policy's nodes cannot run, before any work
            try:
                self.verifier(n).prepare(np.full(2, 0.5), np.full(2, 0.5))
            except self.mdsd.MdsdError as e:
                raise RunnerError(f"--tree-live {name} on {self.scheme} drafts, n = {n}: "
                                  f"{e}") from None

    def verifier(self, n):
        if n not in self.cache:
            self.cache[n] = self.mdsd.Verifier(self.name, n=n, scheme=self.scheme)
        return self.cache[n]

    def block(self, tree, rng):
        """The block's output tokens down tree (nodes as trees.py grows them), and whether
        every level was accepted (the bonus token is then still to come)."""
        kids = {(nd["parent"], nd["edge"]): k for k, nd in enumerate(tree) if nd["parent"] >= 0}
        k, out = 0, []
        while True:
            node = tree[k]
            x = np.asarray([t for t in node["slots"] if t >= 0], np.int32)
            p = self.mdsd.softmax(node["target"], self.T)
            q = self.mdsd.softmax(node["draft"], self.T)
            y = self.verifier(x.size).verify(p, q, x, rng)
            out.append(y)
            if y not in x:
                return out, False
            if node["depth"] + 1 == self.pol["depth"]:
                return out, True
            k = kids[(k, y)]


def _bonus_tokens(target, V, prefixes, batch_size, pad_id, dtype, T, rngs):
    from .trees import _draw, _probs, _stored
    out = []
    for s in range(0, len(prefixes), batch_size):
        seqs = prefixes[s:s + batch_size]
        ids, mask, pos = pad_right(seqs, pad_id)
        select = (np.arange(len(seqs)), np.array([len(x) - 1 for x in seqs]))
        logits, _ = target.forward(ids, mask, pos, select)
        rows = _stored(_checked(target, logits, V, "bonus token"), dtype)
        out += [_draw(_probs(rows[k], T), rngs[s + k]) for k in range(len(seqs))]
    return out


def live_trees(args, pol, target, drafter, V, T, encoded, n, eos_ids, pad_id, grow):
    """(specs, trees) of the live runs of samples 0..n-1, in (sample, position) order; each
    spec also holds the block's realised tau. grow: trees.py's _grow."""
    walker = Walker(args.tree_live, pol, T)
    mdsd = walker.mdsd
    done = []
    for first in range(0, n, args.batch_size):
        runs = [{"sample": i, "prompt": encoded[i % len(encoded)], "response": []}
                for i in range(first, min(n, first + args.batch_size))]
        while runs:
            specs = []
            for r in runs:
                t = len(r["response"])
                specs.append({"sample": r["sample"], "position": t,
                              "context": r["prompt"] + r["response"],
                              "rng": np.random.default_rng([args.seed, r["sample"], t, 0x7EE])})
            trees = grow(specs, pol, target, drafter, V, T, args.logits_dtype, args.batch_size,
                         pad_id)
            outs, need = [], []
            for k, (spec, tree) in enumerate(zip(specs, trees)):
                state = np.random.SeedSequence([args.seed, spec["sample"], spec["position"],
                                                0x11FE]).generate_state(1, np.uint64)[0]
                try:
                    out, bonus = walker.block(tree, mdsd.Rng(int(state)))
                except mdsd.MdsdError as e:  # e.g. otm's size limit, known only at V
                    raise RunnerError(f"--tree-live {args.tree_live}: sample {spec['sample']}, "
                                      f"position {spec['position']}: {e}") from None
                outs.append(out)
                if bonus:
                    need.append(k)
            extra = _bonus_tokens(target, V, [specs[k]["context"] + outs[k] for k in need],
                                  args.batch_size, pad_id, args.logits_dtype, T,
                                  [specs[k]["rng"] for k in need])
            for k, t in zip(need, extra):
                outs[k].append(t)
            still = []
            for r, spec, tree, out in zip(runs, specs, trees, outs):
                spec["tau"] = len(out)
                done.append((spec, tree))
                r["response"] += out
                if len(r["response"]) < args.max_new_tokens and not any(t in eos_ids for t in out):
                    still.append(r)
            runs = still
    done.sort(key=lambda st: (st[0]["sample"], st[0]["position"]))
    return [s for s, _ in done], [t for _, t in done]
