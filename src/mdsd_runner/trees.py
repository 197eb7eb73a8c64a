"""Tree dumps (data/README.md, "Tree dumps"): sampled draft trees with the target's and the
drafter's logits at every node, for contexts along the target's own responses.

The target generates a response per sample (as for a flat dump). At every `--tree-stride`-th
response position t (at most `--tree-contexts` per sample) the context is prompt +
response[:t], and one draft tree is drawn from the drafter `--tree-drafter` at temperature
T = --gen-temperature:
    seq    K sequences of length L, each token from q(.|prefix) (autoregressive)
    tree   widths w_1..w_L: a node at depth d-1 draws w_d children by a scheme (iid, wor,
           greedy, hub); equal tokens are one child
Each node of depth < L is one row, with the logits of the target and of the drafter after
its prefix (teacher forcing on context + the node's draft path; an n-gram model reads the
history). The drafts are drawn from the *stored* logits (rounded to --logits-dtype first),
so a reader that applies softmax(logits / T) sees exactly the law they were drawn from.
Every tree draws from its own stream seeded by (seed, sample, position). With --tree-live
VERIFIER the trees are at the block starts of live decoding instead (live.py)."""

import json
import os
import time

import numpy as np

from . import __version__
from .errors import RunnerError
from .pipeline import _checked, generate, pad_right, sample_rng

SCHEMES = ("iid", "wor", "greedy", "hub")


def add_arguments(p):
    """The tree options of the ngram and hf commands (a tree dump when --tree-policy)."""
    g = p.add_argument_group("tree dumps (data/README.md, 'Tree dumps')")
    g.add_argument("--tree-policy", choices=("seq", "tree"),
                   help="write a tree dump: seq = K i.i.d. draft sequences, tree = widths")
    g.add_argument("--tree-depth", type=int, default=4, metavar="L", help="seq: length L (default 4)")
    g.add_argument("--tree-sequences", type=int, default=4, metavar="K", help="seq: K (default 4)")
    g.add_argument("--tree-widths", metavar="W1,W2,...", help="tree: the widths per depth")
    g.add_argument("--tree-scheme", choices=SCHEMES, default="iid", help="tree: children's scheme")
    g.add_argument("--tree-drafter", metavar="NAME",
                   help="the drafter that draws the trees (default: the first)")
    g.add_argument("--tree-contexts", type=int, metavar="C",
                   help="trees per sample (default 4)")
    g.add_argument("--tree-stride", type=int, metavar="S",
                   help="response positions between two trees of a sample (default 8)")
    g.add_argument("--tree-live", metavar="VERIFIER",
                   help="trees at the block starts of live speculative decoding with this "
                        "token-level verifier (sd, rrs, rrsw, kseq, spechub, greedy, is, otm; "
                        "run through the mdsd Python package) instead of at fixed positions: "
                        "`mdsd block` then reports live tokens per target call for it "
                        "(MATH.md 5.9)")


def _policy(args):
    if args.tree_policy == "seq":
        if not 1 <= args.tree_sequences <= 16:
            raise RunnerError(f"--tree-sequences must be in [1, 16], not {args.tree_sequences}")
        if not 1 <= args.tree_depth <= 32:
            raise RunnerError(f"--tree-depth must be in [1, 32], not {args.tree_depth}")
        return {"policy": "seq", "depth": args.tree_depth, "sequences": args.tree_sequences}
    if not args.tree_widths:
        raise RunnerError("--tree-policy tree needs --tree-widths W1,W2,...")
    try:
        widths = [int(w) for w in args.tree_widths.split(",")]
    except ValueError:
        raise RunnerError(f"--tree-widths {args.tree_widths}: not a comma-separated list of "
                          "integers") from None
    if not 1 <= len(widths) <= 32 or any(not 1 <= w <= 16 for w in widths):
        raise RunnerError(f"--tree-widths {args.tree_widths}: 1 to 32 widths in [1, 16]")
    if args.tree_scheme == "hub" and any(w != 2 for w in widths):
        raise RunnerError("--tree-scheme hub drafts two children per node: widths must be 2")
    if args.tree_scheme == "greedy" and any(w < 2 for w in widths):
        raise RunnerError("--tree-scheme greedy needs widths of at least 2")
    return {"policy": "tree", "depth": len(widths), "widths": widths, "scheme": args.tree_scheme}


def _stored(logits, dtype):
    """The logits as the dump stores them, widened back to float32."""
    x = np.asarray(logits, dtype=np.float32)
    if dtype == "float16":
        return x.astype(np.float16).astype(np.float32)
    if dtype == "bfloat16":
        bits = (x.view(np.uint32) + 0x7FFF + ((x.view(np.uint32) >> 16) & 1)) >> 16
        return (bits.astype(np.uint32) << 16).view(np.float32)
    return x


def _probs(logits, T):
    z = np.asarray(logits, dtype=np.float64)
    if T == 0:
        p = np.zeros_like(z)
        p[int(np.argmax(z))] = 1.0
        return p
    w = np.exp((z - z.max()) / T)
    return w / w.sum()


def _draw(p, rng, exclude=()):
    """A token of p (p restricted to the tokens outside `exclude`), by inverse CDF."""
    w = p.copy()
    for t in exclude:
        w[t] = 0.0
    cdf = np.cumsum(w)
    if not cdf[-1] > 0:
        raise RunnerError("a tree scheme ran out of drafter tokens of positive probability")
    t = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
    return t if t < p.size else int(np.flatnonzero(w)[-1])


def _children(q, n, scheme, rng):
    """n draft tokens from q by a scheme (scheme.h's laws)."""
    if scheme == "iid":
        return [_draw(q, rng) for _ in range(n)]
    if scheme == "wor":
        out = []
        for _ in range(n):
            out.append(_draw(q, rng, out))
        return out
    order = np.lexsort((np.arange(q.size), -q))  # by q descending, ties to the lower id
    if scheme == "greedy":
        top = [int(t) for t in order[:n - 1]]
        return top + [_draw(q, rng, top)]
    a = int(order[0])  # hub: (x, a) with x ~ q off a, w.p. 1 - q(a); else (a, x)
    z = _draw(q, rng)
    return [z, a] if z != a else [a, _draw(q, rng, [a])]


def _node_logits(model, V, prefixes, batch_size, pad_id):
    out = []
    for s in range(0, len(prefixes), batch_size):
        seqs = prefixes[s:s + batch_size]
        ids, mask, pos = pad_right(seqs, pad_id)
        select = (np.arange(len(seqs)), np.array([len(x) - 1 for x in seqs]))
        logits, _ = model.forward(ids, mask, pos, select)
        out.append(_checked(model, logits, V, "tree node"))
    return np.concatenate(out)


def _grow(tree_specs, pol, target, drafter, V, T, dtype, batch_size, pad_id):
    """Draws the trees level by level (one batched forward per model and level). Returns,
    per tree, its nodes: dicts with parent (index in the tree), depth, edge, prefix, slots,
    target and draft logits."""
    L = pol["depth"]
    S = pol["sequences"] if pol["policy"] == "seq" else max(pol["widths"])
    trees = []
    for spec in tree_specs:
        root = {"parent": -1, "depth": 0, "edge": -1, "prefix": spec["context"],
                "seqs": list(range(pol.get("sequences", 0)))}
        trees.append([root])
    level = [(i, 0) for i in range(len(trees))]
    for d in range(L):
        if not level:
            break
        prefixes = [trees[i][k]["prefix"] for i, k in level]
        tl = _stored(_node_logits(target, V, prefixes, batch_size, pad_id), dtype)
        ql = _stored(_node_logits(drafter, V, prefixes, batch_size, pad_id), dtype)
        nxt = []
        for r, (i, k) in enumerate(level):
            node, rng = trees[i][k], tree_specs[i]["rng"]
            node["target"], node["draft"] = tl[r], ql[r]
            q = _probs(ql[r], T)
            slots = [-1] * S
            if pol["policy"] == "seq":
                for s in node["seqs"]:
                    slots[s] = _draw(q, rng)
            else:
                slots[:pol["widths"][d]] = _children(q, pol["widths"][d], pol["scheme"], rng)
            node["slots"] = slots
            node["token"] = _draw(_probs(tl[r], T), rng)  # the target's own next token
            if d + 1 < L:
                seen = {}
                for s, t in enumerate(slots):
                    if t < 0:
                        continue
                    if t not in seen:
                        seen[t] = len(trees[i])
                        trees[i].append({"parent": k, "depth": d + 1, "edge": t,
                                         "prefix": node["prefix"] + [t], "seqs": []})
                        nxt.append((i, seen[t]))
                    trees[i][seen[t]]["seqs"].append(s)
        level = nxt
    return trees


def run_trees(args, tokenizer, target, drafts, prompts, encoded_config, backend, dataset,
              progress=None):
    """Writes the tree dump args.output; returns a summary dict."""
    pol = _policy(args)
    V = tokenizer.vocab_size
    names = [n for n, _ in drafts]
    name = args.tree_drafter or names[0]
    if name not in names:
        raise RunnerError(f"--tree-drafter {name}: no such drafter (have {', '.join(names)})")
    drafter = dict(drafts)[name]
    T = float(args.gen_temperature)
    n = args.num_samples if args.num_samples is not None else len(prompts)
    live = getattr(args, "tree_live", None)
    if live:
        from .live import live_verifiers
        verifiers = live_verifiers()
        if live not in verifiers:
            raise RunnerError(f"--tree-live {live}: not a token-level verifier for use "
                              f"({', '.join(verifiers)})")
    if live and (args.tree_contexts is not None or args.tree_stride is not None):
        raise RunnerError("--tree-contexts and --tree-stride place trees at fixed positions; "
                          "--tree-live places them where live decoding starts its blocks: "
                          "give one")
    contexts = 4 if args.tree_contexts is None else args.tree_contexts
    stride = 8 if args.tree_stride is None else args.tree_stride
    if n < 1 or contexts < 1 or stride < 1:
        raise RunnerError("--num-samples, --tree-contexts and --tree-stride must be at least 1")
    encoded = []
    for p in prompts:
        ids = tokenizer.encode(p.record, p.where)
        if not ids:
            raise RunnerError(f"{p.where}: the prompt encodes to no tokens")
        encoded.append(list(ids))
    t0 = time.time()
    if live:
        from .live import live_trees
        specs, trees = live_trees(args, pol, target, drafter, V, T, encoded, n, tokenizer.eos_ids,
                                  tokenizer.pad_id, _grow)
        _write(args.output, pol, specs, trees, V, T, name, tokenizer, target, drafter, backend,
               dataset, args, encoded_config)
        return {"output": args.output, "trees": len(trees), "rows": sum(len(t) for t in trees),
                "vocab_size": V, "seconds": time.time() - t0}
    specs = []
    for first in range(0, n, args.batch_size):
        batch = list(range(first, min(n, first + args.batch_size)))
        bp = [encoded[i % len(encoded)] for i in batch]
        responses = generate(target, V, bp, args.max_new_tokens, T,
                             [sample_rng(args.seed, i) for i in batch], tokenizer.eos_ids,
                             tokenizer.pad_id)
        for k, i in enumerate(batch):
            r = responses[k]
            for c, t in enumerate(range(0, len(r), stride)):
                if c == contexts:
                    break
                specs.append({"sample": i, "position": t, "context": bp[k] + r[:t],
                              "emitted": r[t],
                              "rng": np.random.default_rng([args.seed, i, t, 0x7EE])})
    trees = _grow(specs, pol, target, drafter, V, T, args.logits_dtype, args.batch_size,
                  tokenizer.pad_id)
    _write(args.output, pol, specs, trees, V, T, name, tokenizer, target, drafter, backend,
           dataset, args, encoded_config)
    rows = sum(len(t) for t in trees)
    return {"output": args.output, "trees": len(trees), "rows": rows, "vocab_size": V,
            "seconds": time.time() - t0}


def _write(out, pol, specs, trees, V, T, drafter_name, tokenizer, target, drafter, backend,
           dataset, args, config):
    import h5py
    rows = [(ti, k, node) for ti, tree in enumerate(trees) for k, node in enumerate(tree)]
    N = len(rows)
    S = len(trees[0][0]["slots"])
    base = np.cumsum([0] + [len(t) for t in trees])
    dtype = args.logits_dtype
    tmp = out + ".partial"
    comp = {} if args.compression == "none" else {"compression": "gzip", "shuffle": True}
    chunks = (min(64, N), V)
    try:
        with h5py.File(tmp, "w") as f:
            f.attrs.create("mdsd_format", 1, dtype=np.int32)
            f.attrs["creator"] = f"mdsd-runner {__version__} ({backend} backend, tree dump)"
            f.attrs["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(
                int(os.environ.get("SOURCE_DATE_EPOCH", time.time()))))
            f.attrs["dataset"] = dataset
            f.attrs["tokenizer"] = tokenizer.name
            f.attrs.create("generation_temperature", T, dtype=np.float64)
            f.attrs.create("vocab_size", V, dtype=np.int64)
            f.attrs.create("seed", int(args.seed), dtype=np.int64)
            f.attrs.create("mdsd_tree", 1, dtype=np.int32)
            f.attrs["tree_policy"] = pol["policy"]
            f.attrs.create("tree_depth", pol["depth"], dtype=np.int64)
            if pol["policy"] == "seq":
                f.attrs.create("tree_sequences", pol["sequences"], dtype=np.int64)
                f.attrs["tree_scheme"] = "iid"
            else:
                f.attrs.create("tree_widths", np.asarray(pol["widths"], np.int64))
                f.attrs["tree_scheme"] = pol["scheme"]
            f.attrs["tree_drafter"] = drafter_name
            f.attrs.create("tree_temperature", T, dtype=np.float64)
            if getattr(args, "tree_live", None):  # trees at live block starts (live.py)
                f.attrs["tree_contexts"] = "live"
                f.attrs["tree_live_verifier"] = args.tree_live
                pol = dict(pol, live=args.tree_live)
            f.attrs["runner_config"] = json.dumps(dict(config, tree=pol), sort_keys=True)
            f["tokens"] = np.asarray([node["token"] for _, _, node in rows], np.int32)
            f["sample_id"] = np.asarray([ti for ti, _, _ in rows], np.int32)
            f["position"] = np.asarray([k for _, k, _ in rows], np.int32)
            f["parent"] = np.asarray([-1 if node["parent"] < 0 else base[ti] + node["parent"]
                                      for ti, _, node in rows], np.int64)
            f["depth"] = np.asarray([node["depth"] for _, _, node in rows], np.int32)
            f["edge"] = np.asarray([node["edge"] for _, _, node in rows], np.int32)
            f["slots"] = np.asarray([node["slots"] for _, _, node in rows], np.int32).reshape(N, S)
            f["tree_sample"] = np.asarray([specs[ti]["sample"] for ti, _, _ in rows], np.int32)
            f["tree_position"] = np.asarray([specs[ti]["position"] for ti, _, _ in rows], np.int32)
            if getattr(args, "tree_live", None):
                f["tree_tau"] = np.asarray([specs[ti]["tau"] for ti, _, _ in rows], np.int32)
            for group, model, key in (("target", target, "target"), (f"drafts/{drafter_name}",
                                                                     drafter, "draft")):
                data = np.stack([node[key] for _, _, node in rows])
                if dtype == "bfloat16":
                    bits = (data.view(np.uint32) >> 16).astype(np.uint16)
                    ds = f.create_dataset(f"{group}/logits", data=bits, chunks=chunks, **comp)
                    ds.attrs["dtype"] = "bfloat16"
                else:
                    ds = f.create_dataset(f"{group}/logits", data=data.astype(dtype),
                                          chunks=chunks, **comp)
                f[group].attrs["model"] = model.name
                f[group].attrs.create("vocab_size", model.model_vocab_size, dtype=np.int64)
                f[group].attrs.create("dropped_padding", model.model_vocab_size - V,
                                      dtype=np.int64)
        os.replace(tmp, out)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise

