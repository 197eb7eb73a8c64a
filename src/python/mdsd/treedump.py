"""Tree dumps written from your own draft-and-verify loop (data/README.md, "Tree dumps"):
the file `mdsd block` reads, through libmdsd's tree-dump writer (mdsd/treewrite.h), which
checks every tree as the reader does."""

import ctypes

import numpy as np

from . import _INT_MAX, POLICIES, MdsdError, _cstr, _int_array, _lib, _raise, _uint
from ._lib import lib
from .dump import _NativeWriter, _layout


class TreeDumpWriter(_NativeWriter):
    """Writes a tree dump atomically: nothing appears at `path` until finish().

        with mdsd.TreeDumpWriter(path, V, draft_names=["small"], policy="seq",
                                 sequences=K, depth=L, temperature=T) as w:
            for each tree your loop drew (row 0 its root; the nodes of depth < L):
                w.write_tree(target [rows, V], [draft [rows, V]], tokens [rows],
                             parent [rows], edge [rows], slots [rows, w.S],
                             sample=s, position=t)
        # leaving the block calls finish(); an exception abandons the file instead

    policy "seq": K i.i.d. draft sequences of length L (`sequences`, `depth`); "tree":
    `widths` (w_1..w_L) with `scheme` (iid, wor, greedy, hub). `drafter` names the
    drafter of draft_names that drew the trees (default the first); `temperature` T: the
    drafts were drawn from softmax(stored logits / T) and the target's law is
    softmax(target logits / T). With dtype float16 or bfloat16 draw from the logits
    rounded to it (or keep float32, exact). `live_verifier`: the trees are the blocks of
    live decoding with that token-level verifier (tau= each block's yield).
    The other arguments are DumpWriter's.

    Per tree: parent[u] = -1 for row 0, else the earlier row u extends by the token
    edge[u] (-1 at the root), which must be one of the parent's slots; slots[u] = the
    node's drafts in draft order, -1 = unused (seq: slot k = the token sequence k drafted
    at u, where it passes; tree: the w_{d+1} children drawn at depth d); every distinct
    drafted token below depth L - 1 has exactly one child row. tokens[u]: at the root the
    token the target emitted at `position` of response `sample`, elsewhere a token the
    target samples after the node's prefix. A tree the reader would refuse is refused
    (MdsdError naming the tree, the argument, the row and the value) and nothing of it is
    written."""
    _finish, _free = "mdsd_tree_dump_writer_finish", "mdsd_tree_dump_writer_free"


    def __init__(self, path, V, draft_names, policy="seq", sequences=None, depth=None,
                 widths=None, scheme=None, drafter=None, temperature=1.0, live_verifier=None,
                 dtype="float32", draft_models=None, target_model="", target_vocab_size=0,
                 chunk_rows=0, gzip=0, creator="", dataset="", tokenizer="",
                 generation_temperature=None, attrs=None):
        self.path = str(path)
        self.V = _uint(V, "V")
        draft_names = [draft_names] if isinstance(draft_names, str) else list(draft_names)
        self.n_drafts = len(draft_names)
        if policy not in POLICIES:
            raise MdsdError(1, f"{self.path}: policy '{policy}' is neither seq nor tree")
        T = float(temperature)
        gt = T if generation_temperature is None else generation_temperature
        lay = _lib.init(_lib.TreeDumpLayout)
        lay.dump, self._keep = _layout(self.path, self.V, draft_names, dtype, draft_models,
                                       target_model, target_vocab_size, chunk_rows, gzip,
                                       creator, dataset, tokenizer, gt, attrs)
        lay.policy = policy.encode()
        if policy == "seq":
            if widths is not None:
                raise MdsdError(1, f"{self.path}: widths= is for policy tree; seq takes "
                                "sequences= and depth=")
            if sequences is None or depth is None:
                raise MdsdError(1, f"{self.path}: policy seq needs sequences=K and depth=L")
            lay.sequences = _uint(sequences, "sequences", _INT_MAX)
            lay.depth = _uint(depth, "depth", _INT_MAX)
        else:
            if widths is None or sequences is not None:
                raise MdsdError(1, f"{self.path}: policy tree needs widths=(W1, ..., WL) "
                                "(and no sequences=)")
            ws = [_uint(w, "widths", _INT_MAX) for w in np.atleast_1d(np.asarray(widths))]
            if depth is not None and _uint(depth, "depth", _INT_MAX) != len(ws):
                raise MdsdError(1, f"{self.path}: depth={depth} but {len(ws)} widths")
            arr = (ctypes.c_size_t * max(1, len(ws)))(*ws)
            self._keep.append(arr)
            lay.widths = ctypes.cast(arr, ctypes.POINTER(ctypes.c_size_t))
            lay.depth = len(ws)
        lay.scheme = None if scheme is None else _cstr(scheme, "scheme")
        lay.drafter = None if drafter is None else _cstr(drafter, "drafter")
        lay.temperature = T
        lay.live_verifier = None if live_verifier is None else _cstr(live_verifier,
                                                                      "live_verifier")
        self.live = live_verifier is not None
        self.trees = 0
        err = _lib.Err()
        self._h = lib.mdsd_tree_dump_writer_new(_cstr(path, "path"), ctypes.byref(lay),
                                                ctypes.byref(err))
        if not self._h:
            _raise(err.code or 2, err)
        self.S = lib.mdsd_tree_dump_writer_slots(self._h)
        self.depth = lay.depth

    def write_tree(self, target, drafts, tokens, parent, edge, slots, sample, position, tau=0):
        """Appends one tree of `rows` nodes: target and each of drafts [rows, V] (logits
        after each node's prefix), tokens, parent, edge [rows], slots [rows, S]; sample,
        position: the response and the position whose prefix is the tree's context;
        tau: live dumps only, the tokens the block yielded (the next tree of the sample
        starts at position + tau)."""
        if not self._h:
            raise MdsdError(1, f"{self.path}: the writer is already closed")
        where = f"{self.path}: tree {self.trees}"
        t = np.ascontiguousarray(target, dtype=np.float32)
        if t.ndim != 2 or t.shape[1] != self.V or t.shape[0] == 0:
            raise MdsdError(1, f"{where}: target logits of shape {t.shape}, expected "
                            f"[rows >= 1, {self.V}]")
        rows = t.shape[0]
        if isinstance(drafts, np.ndarray) or hasattr(drafts, "detach"):
            drafts = [drafts]
        ds = [np.ascontiguousarray(d, dtype=np.float32) for d in drafts]
        if len(ds) != self.n_drafts:
            raise MdsdError(1, f"{where}: {len(ds)} draft arrays, the dump has "
                            f"{self.n_drafts} drafters")
        for j, d in enumerate(ds):
            if d.shape != t.shape:
                raise MdsdError(1, f"{where}: drafts[{j}] has shape {d.shape}, target {t.shape}")
        tok = _int_array(tokens, f"{where}: tokens", 0, _INT_MAX, np.int32)
        par = _int_array(parent, f"{where}: parent", -1, rows - 1, np.int64)
        edg = _int_array(edge, f"{where}: edge", -1, _INT_MAX, np.int32)
        sl = _int_array(slots, f"{where}: slots", -1, _INT_MAX, np.int32)
        for name, a in (("tokens", tok), ("parent", par), ("edge", edg)):
            if a.shape != (rows,):
                raise MdsdError(1, f"{where}: {name} has shape {a.shape}, expected ({rows},)")
        if sl.shape != (rows, self.S):
            raise MdsdError(1, f"{where}: slots has shape {sl.shape}, expected ({rows}, {self.S}) "
                            f"(S = {self.S} slots per row)")
        sample = _uint(sample, "sample", _INT_MAX)
        position = _uint(position, "position", _INT_MAX)
        tau = _uint(tau, "tau", _INT_MAX)
        ptrs = (ctypes.c_void_p * self.n_drafts)(*[d.ctypes.data for d in ds])
        err = _lib.Err()
        _raise(lib.mdsd_tree_dump_writer_write(self._h, rows, t.ctypes.data, ptrs,
                                               tok.ctypes.data, par.ctypes.data,
                                               edg.ctypes.data, sl.ctypes.data, sample,
                                               position, tau, ctypes.byref(err)), err)
        self.trees += 1
