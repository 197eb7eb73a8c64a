"""Training the neural KJV pair (data/README.md, "The neural pair"), and held-out perplexities
of it and of the Kneser-Ney pair on the same split. Not run by `make test`; `make
neural-models` runs it.

    python3 -m mdsd_runner.train model --out DIR --d-model D --n-layer L ... --seed S
    python3 -m mdsd_runner.train perplexity [--ngram-order K ...] [--model DIR ...]
    python3 -m mdsd_runner.train prompts -o FILE    (the held-out verses' openings)

Data: the KJV verses of Debian's `bible` (ngram.kjv_verses), split into words as the ngram
backend does, with its 8,192-id vocabulary built from the whole text (so the neural and the
n-gram dumps share token ids). Verse i is held out when i % 20 == 19 (1,555 verses); the
models are trained on the others. A verse is one sequence `<s> w1 .. wm </s>` from position 0
(no context crosses a verse, as for the n-gram models, and as the prompts are given);
perplexity is exp(mean -log p) over every predicted token of the held-out verses, `</s>`
included, `<s>` never predicted.

Deterministic from --seed with one thread (torch.set_num_threads(1); the Makefile sets
OPENBLAS_NUM_THREADS=1 too): the same machine and libraries give the same weights."""

import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
from torch.nn import functional as F

from . import ngram
from .outputs import atomic_file
from .pipeline import token_groups
from .tinylm import FORMAT, TinyLM, load_folder, save_folder

HELD_OUT_EVERY = 20
VOCAB_SIZE = 8192


def kjv_split(vocab_size=VOCAB_SIZE):
    """(vocab WordVocab, tokenizer name, train sequences, held-out sequences): sequences are
    int64 arrays <s> w.. </s>."""
    lines = ngram.kjv_verses()
    words = [ngram.split_words(line) for line in lines]
    vocab = ngram.WordVocab.build(words, vocab_size)
    name = f"ngram-words:kjv:{len(vocab)}"
    seqs = [np.concatenate(([ngram.BOS], vocab.encode(w), [ngram.EOS])) for w in words]
    train = [s for i, s in enumerate(seqs) if i % HELD_OUT_EVERY != HELD_OUT_EVERY - 1]
    held = [s for i, s in enumerate(seqs) if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1]
    return vocab, name, train, held


def batches(seqs, max_tokens, n_ctx, generator):
    """Batches of right-padded sequences (padding -1) of at most max_tokens input tokens,
    similar lengths together, in a random order drawn from generator."""
    order = torch.randperm(len(seqs), generator=generator).tolist()
    order.sort(key=lambda i: min(len(seqs[i]), n_ctx + 1))  # stable: random within a length
    inputs = [min(len(seqs[i]), n_ctx + 1) - 1 for i in order]
    out = [[order[k] for k in g] for g in token_groups(inputs, max_tokens)]
    tensors = []
    for b in out:
        L = max(min(len(seqs[i]), n_ctx + 1) for i in b)
        x = torch.full((len(b), L), -1, dtype=torch.int64)
        for r, i in enumerate(b):
            s = seqs[i][:n_ctx + 1]
            x[r, :len(s)] = torch.from_numpy(s)
        tensors.append(x)
    perm = torch.randperm(len(tensors), generator=generator).tolist()
    return [tensors[i] for i in perm]


def batch_loss(model, x):
    """Summed NLL and the number of predicted tokens of one padded batch."""
    inp, tgt = x[:, :-1].clamp(min=0), x[:, 1:]
    logits = model(inp)
    nll = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1),
                          ignore_index=-1, reduction="sum")
    return nll, int((tgt >= 0).sum())


def perplexity(model, seqs, n_ctx):
    g = torch.Generator().manual_seed(0)
    total, count = 0.0, 0
    with torch.no_grad():
        for x in batches(seqs, 8192, n_ctx, g):
            nll, n = batch_loss(model, x)
            total, count = total + float(nll), count + n
    return math.exp(total / count), count


def train_model(args):
    torch.set_num_threads(args.threads)
    cpu0 = time.process_time()
    vocab, tok_name, train, held = kjv_split()
    config = {"format": FORMAT, "version": 1, "name": args.name, "vocab_size": len(vocab),
              "n_ctx": args.n_ctx, "d_model": args.d_model, "n_layer": args.n_layer,
              "n_head": args.n_head, "d_ff": 4 * args.d_model, "tokenizer": tok_name,
              "training": {"corpus": "kjv (Debian bible-kjv-text), verses i % 20 != 19",
                           "seed": args.seed, "steps": args.steps, "batch_tokens": args.batch_tokens,
                           "lr": args.lr, "warmup": args.warmup, "weight_decay": 0.1,
                           "dropout": 0.0, "optimizer": "AdamW(0.9, 0.98)",
                           "schedule": "linear warmup, cosine to lr/10",
                           "weights": "float16"}}
    torch.manual_seed(args.seed)
    model = TinyLM(config)
    model.init_weights(torch.Generator().manual_seed(args.seed))
    decay = [p for n, p in model.named_parameters() if p.dim() == 2]
    rest = [p for n, p in model.named_parameters() if p.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": rest, "weight_decay": 0.0}], lr=args.lr, betas=(0.9, 0.98))
    g = torch.Generator().manual_seed(args.seed)
    queue, epoch, tokens = [], 0, 0
    model.train()
    for step in range(args.steps):
        if not queue:
            queue = batches(train, args.batch_tokens, args.n_ctx, g)
            epoch += 1
        x = queue.pop()
        frac = (step - args.warmup) / max(1, args.steps - 1 - args.warmup)
        lr = args.lr * ((step + 1) / args.warmup if step < args.warmup else
                        0.1 + 0.45 * (1 + math.cos(math.pi * frac)))
        for group in opt.param_groups:
            group["lr"] = lr
        nll, n = batch_loss(model, x)
        opt.zero_grad(set_to_none=True)
        (nll / n).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        tokens += n
        if step % args.log_every == 0 or step == args.steps - 1:
            print(f"{args.name}: step {step}/{args.steps} epoch {epoch} loss {float(nll) / n:.3f} "
                  f"lr {lr:.2e} cpu {time.process_time() - cpu0:.0f} s", file=sys.stderr, flush=True)
    train_cpu = time.process_time() - cpu0
    model.eval()
    save_folder(args.out, config, vocab.tokens, model)
    _, _, shipped = load_folder(args.out)         # the float16 weights, as shipped
    ppl, count = perplexity(shipped, held, args.n_ctx)
    params = sum(p.numel() for p in model.parameters())
    log = {"name": args.name, "parameters": params, "train_tokens": tokens, "epochs": epoch,
           "train_cpu_seconds": round(train_cpu, 1), "threads": args.threads,
           "held_out_perplexity": round(ppl, 3), "held_out_tokens": count,
           "torch": torch.__version__}
    with atomic_file(os.path.join(args.out, "train.json")) as f:
        f.write((json.dumps(log, indent=1, sort_keys=True) + "\n").encode())
    print(json.dumps(log, sort_keys=True))
    return 0


def ngram_perplexity(order, train, held, V):
    kn = ngram.KneserNey(order, V).fit([s[1:-1] for s in train])
    total, count = 0.0, 0
    for s in held:
        for t in range(1, len(s)):
            total -= math.log(kn.dist(s[:t])[s[t]])
            count += 1
    return math.exp(total / count), count


def perplexities(args):
    torch.set_num_threads(args.threads)
    vocab, _, train, held = kjv_split()
    rows = []
    for k in args.ngram_order or []:
        t0 = time.process_time()
        ppl, n = ngram_perplexity(k, train, held, len(vocab))
        rows.append({"model": f"kneser-ney-{k}gram", "held_out_perplexity": round(ppl, 3),
                     "held_out_tokens": n, "cpu_seconds": round(time.process_time() - t0, 1)})
    for folder in args.model or []:
        config, tokens, model = load_folder(folder)
        if tokens != vocab.tokens:
            raise SystemExit(f"{folder}: vocab.txt is not the KJV vocabulary of this split")
        ppl, n = perplexity(model, held, config["n_ctx"])
        rows.append({"model": config["name"], "held_out_perplexity": round(ppl, 3),
                     "held_out_tokens": n})
    for r in rows:
        print(json.dumps(r, sort_keys=True))
    return 0


def held_out_prompts(args):
    """The openings of the held-out verses (their first --words whitespace-separated words,
    fewer for a verse of at most that many), one {"prompt": TEXT} a line, verse order."""
    lines = ngram.kjv_verses()
    out = []
    for i, line in enumerate(lines):
        if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1:
            words = line.split()
            out.append(json.dumps({"prompt": " ".join(words[:min(args.words, len(words) - 1)])}))
    with atomic_file(args.output) as f:
        f.write("".join(o + "\n" for o in out).encode("utf-8"))
    print(f"wrote {args.output}: {len(out)} prompts")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m mdsd_runner.train", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    m = sub.add_parser("model", help="train one model into a model folder")
    m.add_argument("--out", required=True, metavar="DIR")
    m.add_argument("--name", required=True)
    m.add_argument("--d-model", type=int, required=True)
    m.add_argument("--n-layer", type=int, required=True)
    m.add_argument("--n-head", type=int, default=4)
    m.add_argument("--n-ctx", type=int, default=128)
    m.add_argument("--steps", type=int, required=True)
    m.add_argument("--batch-tokens", type=int, default=4096)
    m.add_argument("--lr", type=float, default=2e-3)
    m.add_argument("--warmup", type=int, default=100)
    m.add_argument("--seed", type=int, default=1)
    m.add_argument("--threads", type=int, default=1)
    m.add_argument("--log-every", type=int, default=50)
    e = sub.add_parser("perplexity", help="held-out perplexities")
    e.add_argument("--ngram-order", type=int, action="append")
    e.add_argument("--model", action="append", metavar="DIR")
    e.add_argument("--threads", type=int, default=1)
    o = sub.add_parser("prompts", help="the held-out verses' openings as a prompt file")
    o.add_argument("-o", "--output", required=True)
    o.add_argument("--words", type=int, default=4)
    args = p.parse_args(argv)
    return {"model": train_model, "perplexity": perplexities, "prompts": held_out_prompts}[
        args.command](args)


if __name__ == "__main__":
    sys.exit(main())
