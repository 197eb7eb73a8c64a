"""mdsd-runner: writes target and drafter logits of language models to HDF5 dumps
(format: data/README.md) for the mdsd toolkit.

Backends: `ngram` (numpy only, Kneser-Ney n-gram models) and `hf` (PyTorch and
transformers, imported only when that backend runs)."""

__version__ = "0.1.0"
