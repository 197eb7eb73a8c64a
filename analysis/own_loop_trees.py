#!/usr/bin/python3
"""A tree dump from your own draft-and-verify loop (data/README.md, "Tree dumps"), written
with mdsd.TreeDumpWriter and read by `mdsd block`: the worked example, on the shipped neural
pair (data/kjv-neural: target tf4, drafter tf1; any pair of tinylm folders works).

Everything model-side is plain PyTorch written here, as it would be in your own serving
loop: the target samples a response per prompt; at every STRIDE-th response position (at
most CONTEXTS per response) the drafter drafts K i.i.d. sequences of length L at temperature
T from the context; equal prefixes are one node (a trie); each node of depth < L gets the
target's and the drafter's logits after its prefix; the tree goes to the writer. The file
then answers `mdsd block OUT.h5` (E[tau] of every token-level verifier, K' <= K, L' <= L)
as a dump of `mdsd-runner torch ... --tree-policy seq` with the same options does: the
same contexts in law, so the two estimates agree within their standard errors
(tests/python/test_tree_writer.py checks it).

    PYTHONPATH=src/python:src /usr/bin/python3 analysis/own_loop_trees.py \\
        --prompts data/kjv-prompts.jsonl -o build/own-trees.h5
    ./mdsd block build/own-trees.h5 -o build/own-block.csv

Your own models: replace State (a model's KV cache and next-token logits after a prefix)
and the tokenizer; on a GPU pass --device cuda (the models run there, the writer takes numpy).
Draw the drafts from the logits you store (float32 here, exact): with --dtype float16 or
bfloat16 round them to that type first, as the reader's draft law is softmax(stored / T)."""

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "src", "python"), os.path.join(HERE, "..", "src")]

import mdsd  # noqa: E402
from mdsd_runner import ngram, tinylm  # noqa: E402  (the shipped pair's loader and tokenizer)

NEURAL = os.path.join(HERE, "..", "data", "kjv-neural")


def arguments(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--target", default=os.path.join(NEURAL, "tf4"), metavar="DIR")
    p.add_argument("--drafter", default=os.path.join(NEURAL, "tf1"), metavar="DIR")
    p.add_argument("--prompts", required=True, metavar="FILE.jsonl",
                   help='one {"prompt": TEXT} per line; sample s uses prompt s mod P')
    p.add_argument("-o", "--output", required=True, metavar="OUT.h5")
    p.add_argument("--num-samples", type=int, default=None, help="default: one per prompt")
    p.add_argument("--max-new-tokens", type=int, default=32)
    p.add_argument("--temperature", type=float, default=1.0, metavar="T")
    p.add_argument("--tree-sequences", type=int, default=4, metavar="K")
    p.add_argument("--tree-depth", type=int, default=4, metavar="L")
    p.add_argument("--tree-contexts", type=int, default=4, metavar="C")
    p.add_argument("--tree-stride", type=int, default=8, metavar="S")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", default="cpu")
    return p.parse_args(argv)


def load(folder, device):
    import torch
    config, vocab, model = tinylm.load_folder(folder, device, torch.float32)
    return config, vocab, model


class State:
    """A model after a token prefix: its keys and values (your engine's KV cache) and its
    logits [V] (float32 numpy) for the next token. extend() feeds more tokens; a state is
    never changed in place, so a tree's nodes branch from their parents' states."""

    def __init__(self, model, device, cache=None, n=0, logits=None):
        self.model, self.device, self.cache, self.n, self.logits = model, device, cache, n, logits

    def extend(self, tokens):
        import torch
        m, n = len(tokens), self.n
        with torch.inference_mode():
            ids = torch.tensor([list(tokens)], device=self.device)
            pos = torch.arange(n, n + m, device=self.device)[None]
            key = torch.arange(n + m, device=self.device)[None, :]
            query = torch.arange(n, n + m, device=self.device)[:, None]
            bias = torch.zeros(m, n + m, device=self.device).masked_fill(key > query,
                                                                         float("-inf"))
            h, cache = self.model.hidden(ids, pos, bias[None, None], self.cache)
            logits = self.model.head(h[0, -1]).float().cpu().numpy()
        return State(self.model, self.device, cache, n + m, logits)


def draw(logits, T, rng):
    z = logits.astype(np.float64) / T
    w = np.exp(z - z.max())
    return int(rng.choice(w.size, p=w / w.sum()))


def tree_at(target, drafter, K, L, T, rng):
    """One seq tree from the states after the context: K draft sequences of length L,
    equal prefixes one node (a trie); per node its parent, edge, slots and logits."""
    nodes = [{"parent": -1, "edge": -1, "depth": 0, "seqs": list(range(K)), "p": target,
              "q": drafter}]
    u = 0
    while u < len(nodes):            # nodes are appended level by level while we walk them
        node = nodes[u]
        node["token"] = draw(node["p"].logits, T, rng)  # a token the target samples here
        slots = [-1] * K
        for k in node["seqs"]:
            slots[k] = draw(node["q"].logits, T, rng)   # sequence k's next draft token
        node["slots"] = slots
        if node["depth"] + 1 < L:                     # rows are the nodes of depth < L
            child = {}
            for k in node["seqs"]:
                t = slots[k]
                if t not in child:
                    child[t] = len(nodes)
                    nodes.append({"parent": u, "edge": t, "depth": node["depth"] + 1,
                                  "seqs": [], "p": node["p"].extend([t]),
                                  "q": node["q"].extend([t])})
                nodes[child[t]]["seqs"].append(k)
        u += 1
    return nodes


def main(argv=None):
    a = arguments(argv)
    tconfig, vocab, target = load(a.target, a.device)
    dconfig, dvocab, drafter = load(a.drafter, a.device)
    if dvocab != vocab:
        sys.exit(f"{a.drafter}: its vocabulary differs from the target's")
    tok = ngram.NgramTokenizer(ngram.WordVocab(vocab[3:]), tconfig["tokenizer"])
    with open(a.prompts, encoding="utf-8") as f:
        prompts = [tok.encode(json.loads(line), f"{a.prompts}:{i + 1}")
                   for i, line in enumerate(f) if line.strip()]
    n = a.num_samples if a.num_samples is not None else len(prompts)
    V, T, K, L = len(vocab), a.temperature, a.tree_sequences, a.tree_depth
    rng = np.random.default_rng(a.seed)
    trees = 0
    with mdsd.TreeDumpWriter(a.output, V, [dconfig["name"]], policy="seq", sequences=K,
                             depth=L, temperature=T, target_model=tconfig["name"],
                             tokenizer=tconfig["tokenizer"], dataset=a.prompts,
                             creator="analysis/own_loop_trees.py") as w:
        for s in range(n):
            prompt = list(prompts[s % len(prompts)])
            p = State(target, a.device).extend(prompt)   # after the prompt
            q = State(drafter, a.device).extend(prompt)
            response, at = [], {}
            while len(response) < a.max_new_tokens:  # the target's own response
                pos = len(response)
                if pos % a.tree_stride == 0 and pos // a.tree_stride < a.tree_contexts:
                    at[pos] = (p, q)                 # after prompt + response[:pos]
                t = draw(p.logits, T, rng)
                response.append(t)
                if t == ngram.EOS:
                    break
                p, q = p.extend([t]), q.extend([t])
            for pos, (p, q) in sorted(at.items()):
                nodes = tree_at(p, q, K, L, T, rng)
                nodes[0]["token"] = response[pos]    # at the root: what the target emitted
                w.write_tree(np.stack([x["p"].logits for x in nodes]),
                             [np.stack([x["q"].logits for x in nodes])],
                             [x["token"] for x in nodes], [x["parent"] for x in nodes],
                             [x["edge"] for x in nodes], [x["slots"] for x in nodes],
                             sample=s, position=pos)
                trees += 1
    print(f"{a.output}: {trees} trees of {n} samples (seq K={K} L={L}, T={T})")


if __name__ == "__main__":
    main()
