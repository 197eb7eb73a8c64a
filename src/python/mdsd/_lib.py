"""ctypes declarations of libmdsd's public API (src/include/mdsd/*.h). Private: use the
functions of the mdsd package. Every struct here mirrors its C header field by field.
Options structs begin with their size (mdsd/common.h): make them with init(Class), which
calls the C _init with ctypes.sizeof, as the header's macro does for C callers."""

import ctypes
import os
from ctypes import (POINTER, Structure, c_char, c_char_p, c_double, c_int, c_int32, c_longlong,
                    c_size_t, c_uint64, c_void_p)

SONAME = "libmdsd.so.0"


class Err(Structure):
    _fields_ = [("code", c_int), ("msg", c_char * 512), ("option", c_int)]


class Joint(Structure):
    _fields_ = [("n", c_size_t), ("count", c_size_t), ("tokens", c_void_p), ("prob", c_void_p)]


class Scheme(Structure):
    _fields_ = [("kind", c_int), ("n", c_size_t), ("V", c_size_t), ("q", c_void_p),
                ("custom", POINTER(Joint))]


class AlphaOpts(Structure):
    _init = "mdsd_alpha_opts_init"
    _fields_ = [("size", c_size_t), ("exact_arith", c_int), ("max_tuples", c_size_t), ("max_vars", c_size_t),
                ("max_brute_V", c_size_t), ("force", c_int)]


class AlphaResult(Structure):
    _fields_ = [("alpha", c_double), ("method", c_int), ("has_subset", c_int),
                ("alpha_one", c_int), ("k2_margin", c_double), ("lp_vars", c_size_t)]


class AlphaRoute(Structure):
    _fields_ = [("method", c_int), ("applies", c_int), ("status", c_int), ("why", c_char * 512),
                ("seconds", c_double), ("alpha", c_double), ("has_subset", c_int),
                ("alpha_one", c_int), ("k2_margin", c_double), ("evaluations", c_size_t),
                ("lp_vars", c_size_t), ("maxflow_sets", c_size_t), ("certificate_gap", c_double)]


class AlphaRoutes(Structure):
    _init = "mdsd_alpha_routes_init"
    _fields_ = [("size", c_size_t), ("ran", c_size_t), ("alpha", c_double),
                ("max_disagreement", c_double), ("failures", c_int),
                ("routes", AlphaRoute * 6)]


class ToyOpts(Structure):
    _init = "mdsd_toy_opts_init"
    _fields_ = [("size", c_size_t), ("family", c_char_p), ("V", c_size_t), ("positions", c_size_t),
                ("seed", c_uint64), ("drafts", c_char_p), ("samples", c_size_t),
                ("dtype", c_char_p), ("params", c_char_p), ("chunk_rows", c_size_t),
                ("gzip", c_int), ("threads", c_size_t)]


PLOT_NOTE = ctypes.CFUNCTYPE(None, c_char_p, c_void_p)


class PlotOpts(Structure):
    _init = "mdsd_plot_opts_init"
    _fields_ = [("size", c_size_t), ("kind", c_char_p), ("dump", c_char_p), ("dumps", c_char_p),
                ("n", ctypes.c_int64), ("temperature", c_double), ("scheme", c_char_p),
                ("method", c_char_p), ("title", c_char_p), ("n_labels", c_size_t),
                ("labels", POINTER(c_char_p)), ("paper_size", c_char_p), ("legend", c_char_p),
                ("terminal", c_char_p), ("scripts", c_char_p), ("tool", c_char_p),
                ("n_words", c_size_t), ("words", POINTER(c_char_p)), ("on_note", PLOT_NOTE),
                ("note_ctx", c_void_p)]


class PlotFigure(Structure):
    _fields_ = [("kind", c_char_p), ("title", c_char_p), ("xlabel", c_char_p), ("ylabel", c_char_p),
                ("interval", c_char_p), ("z", c_double), ("lines", c_size_t)]


class PlotLine(Structure):
    _fields_ = [("label", c_char_p), ("style", c_char_p), ("scheme", c_char_p), ("method", c_char_p),
                ("dump", c_char_p), ("bound", c_int), ("dash", c_size_t), ("points", c_size_t),
                ("x", POINTER(c_double)), ("y", POINTER(c_double)), ("se", POINTER(c_double)),
                ("half", POINTER(c_double))]
# void (*on_check)(const mdsd_check_outcome *outcome, void *ctx)
CHECK_ON_CHECK = ctypes.CFUNCTYPE(None, c_void_p, c_void_p)
# void (*on_progress)(uint64_t done, uint64_t total, void *ctx)
PROGRESS = ctypes.CFUNCTYPE(None, c_uint64, c_uint64, c_void_p)


class CheckOpts(Structure):
    _init = "mdsd_check_opts_init"
    _fields_ = [("size", c_size_t), ("profile", c_char_p), ("count", c_size_t),
                ("seed", c_uint64), ("trials", c_uint64), ("family", c_char_p),
                ("only", c_char_p), ("threads", c_int), ("on_check", CHECK_ON_CHECK),
                ("on_progress", PROGRESS), ("progress_ctx", c_void_p)]


class CheckOutcome(Structure):  # the library's struct, read through a pointer only
    _fields_ = [("name", c_char_p), ("source", c_char_p), ("claim", c_char_p),
                ("measure", c_char_p), ("must_hold", c_int), ("pvalue", c_int),
                ("tol", c_double), ("bound", c_char_p), ("families", c_char_p),
                ("V_min", c_size_t), ("V_max", c_size_t), ("status", c_int),
                ("status_name", c_char_p), ("instances", c_size_t), ("draws", c_size_t),
                ("cases", c_size_t), ("counterexamples", c_size_t), ("errors", c_size_t),
                ("worst", c_double), ("summary", c_char_p), ("error", c_char_p),
                ("has_worst", c_int), ("worst_draw", c_size_t), ("worst_family", c_char_p),
                ("worst_V", c_size_t), ("worst_n", c_size_t), ("worst_nq", c_size_t),
                ("worst_p", POINTER(c_double)), ("worst_q", POINTER(c_double)),
                ("worst_note", c_char_p)]


class CheckReport(Structure):  # the library's struct, read through a pointer only
    _fields_ = [("profile", c_char_p), ("count", c_size_t), ("seed", c_uint64),
                ("trials", c_uint64), ("family", c_char_p), ("passed", c_size_t),
                ("failed", c_size_t), ("findings", c_size_t), ("skipped", c_size_t),
                ("n_checks", c_size_t), ("checks", POINTER(POINTER(CheckOutcome)))]


class VerifierOpts(Structure):
    _init = "mdsd_verifier_opts_init"
    _fields_ = [("size", c_size_t), ("is_top", c_size_t), ("max_paths", c_double), ("max_tuples", c_size_t)]


class MonteCarloOpts(Structure):
    _init = "mdsd_montecarlo_opts_init"
    _fields_ = [("size", c_size_t), ("trials", c_uint64), ("seed", c_uint64), ("position", c_uint64),
                ("threads", c_int)]


class MonteCarloResult(Structure):
    _fields_ = [("trials", c_uint64), ("alpha", c_double), ("se", c_double),
                ("ci_low", c_double), ("ci_high", c_double)]


class BatchEvalOpts(Structure):
    _init = "mdsd_batch_eval_opts_init"
    _fields_ = [("size", c_size_t), ("temperature", c_double), ("top_k", c_size_t), ("top_p", c_double),
                ("scheme", c_int), ("n", c_size_t), ("verifier", c_int),
                ("verifier_opts", VerifierOpts), ("trials", c_uint64), ("simulate", c_int),
                ("seed", c_uint64), ("row0", c_size_t), ("threads", c_int)]


# void (*on_progress)(uint64_t done, uint64_t total, void *ctx)
TABLE_PROGRESS = ctypes.CFUNCTYPE(None, c_uint64, c_uint64, c_void_p)


class RowArrays(Structure):
    _init = "mdsd_row_arrays_init"
    _fields_ = [("size", c_size_t), ("label", c_char_p), ("N", c_size_t), ("V", c_size_t),
                ("target", c_void_p), ("n_drafters", c_size_t),
                ("drafter_names", POINTER(c_char_p)), ("drafts", POINTER(c_void_p)),
                ("sample_id", c_void_p), ("position", c_void_p)]


class TableOpts(Structure):
    _init = "mdsd_table_opts_init"
    _fields_ = [("size", c_size_t), ("n_dumps", c_size_t), ("dumps", POINTER(c_char_p)),
                ("n_temperatures", c_size_t), ("temperatures", c_void_p),
                ("n_counts", c_size_t), ("draft_counts", c_void_p),
                ("n_schemes", c_size_t), ("schemes", c_void_p),
                ("n_verifiers", c_size_t), ("verifiers", c_void_p),
                ("n_draft_models", c_size_t), ("draft_models", POINTER(c_char_p)),
                ("row_begin", c_size_t), ("row_end", c_size_t), ("top_k", c_size_t),
                ("top_p", c_double), ("trials", c_uint64), ("simulate", c_int),
                ("seed", c_uint64), ("threads", c_int), ("verifier_opts", VerifierOpts),
                ("output", c_char_p), ("resume", c_int),
                ("on_progress", TABLE_PROGRESS), ("progress_ctx", c_void_p),
                ("n_arrays", c_size_t), ("arrays", POINTER(RowArrays)),
                ("discard_partial", c_int), ("checkpoint_seconds", c_double),
                ("shard", c_size_t), ("shards", c_size_t),
                ("markdown", c_char_p), ("latex", c_char_p), ("layout", c_int),
                ("per_position", c_char_p)]


# void (*on_note)(const char *message, void *ctx)
REPORT_NOTE = ctypes.CFUNCTYPE(None, c_char_p, c_void_p)


class ReportOpts(Structure):  # mdsd/report.h
    _init = "mdsd_report_opts_init"
    _fields_ = [("size", c_size_t), ("latex", c_int), ("standalone", c_int), ("layout", c_int),
                ("label_prefix", c_char_p), ("n_labels", c_size_t), ("labels", POINTER(c_char_p)),
                ("temperatures", c_char_p), ("drafts", c_char_p), ("schemes", c_char_p),
                ("methods", c_char_p), ("dumps", c_char_p), ("is_top", ctypes.c_int64),
                ("paired", c_char_p), ("csv", c_int), ("to_stdout", c_int), ("tool", c_char_p),
                ("n_words", c_size_t), ("words", POINTER(c_char_p)), ("on_note", REPORT_NOTE),
                ("note_ctx", c_void_p)]


class RunOpts(Structure):  # mdsd/run.h: how a front end runs a job (the CLI's)
    _init = "mdsd_run_opts_init"
    _fields_ = [("size", c_size_t), ("tool", c_char_p), ("n_words", c_size_t),
                ("words", POINTER(c_char_p)), ("on_note", REPORT_NOTE), ("note_ctx", c_void_p),
                ("progress_bar", c_int), ("stdout_used", c_int), ("cleanup_signals", c_int),
                ("shard_text", POINTER(c_void_p)), ("shard_size", POINTER(c_size_t)),
                ("test_fail", c_int), ("test_fail_column", c_size_t), ("test_fail_row", c_size_t),
                ("test_block_rows", c_size_t), ("test_stop_after", c_size_t), ("usage", c_int)]


class ShardText(Structure):  # mdsd/merge.h: one shard's aggregate in memory
    _fields_ = [("name", c_char_p), ("text", c_void_p), ("size", c_size_t)]


class MergeJobOpts(Structure):  # mdsd/merge.h
    _init = "mdsd_merge_job_opts_init"
    _fields_ = [("size", c_size_t), ("markdown", c_char_p), ("latex", c_char_p), ("layout", c_int)]


class BlockJobOpts(Structure):
    _init = "mdsd_block_job_opts_init"
    _fields_ = [("size", c_size_t), ("n_dumps", c_size_t), ("dumps", POINTER(c_char_p)), ("verifiers", c_char_p),
                ("sequences", c_char_p), ("depths", c_char_p), ("costs", c_char_p),
                ("is_top", c_size_t), ("threads", c_int), ("output", c_char_p),
                ("markdown", c_char_p), ("latex", c_char_p), ("resume", c_int),
                ("discard_partial", c_int), ("on_progress", TABLE_PROGRESS),
                ("progress_ctx", c_void_p), ("engine_metrics", c_char_p),
                ("shard", c_size_t), ("shards", c_size_t)]


class BlockMarkovLiveResult(Structure):
    _fields_ = [("horizon", c_size_t), ("live_block_efficiency", c_double),
                ("position_block_efficiency", c_double), ("live_calls", c_double)]


class BlockMarkovOpts(Structure):
    _init = "mdsd_block_markov_opts_init"
    _fields_ = [("size", c_size_t), ("markov", c_char_p), ("sequences", c_size_t), ("depth", c_size_t),
                ("tree", c_char_p), ("scheme", c_char_p), ("verifier", c_char_p),
                ("trials", c_uint64), ("simulate", c_int), ("seed", c_uint64), ("threads", c_int),
                ("optimal", c_int), ("force", c_int), ("V", c_size_t), ("p", c_void_p),
                ("q", c_void_p)]


BLOCK_MARKOV_MAX_DEPTH = 32


class BlockPolicy(Structure):  # mdsd/block.h: the policy a Markov run evaluated
    _fields_ = [("tree", c_int), ("sequences", c_size_t), ("depth", c_size_t),
                ("widths", c_size_t * BLOCK_MARKOV_MAX_DEPTH), ("scheme", c_char_p),
                ("text", ctypes.c_char * 256)]


class BlockMarkovResult(Structure):
    _fields_ = [("V", c_size_t), ("depth", c_size_t), ("tree_size", c_double),
                ("route", c_char_p), ("verifier", c_char_p), ("block_efficiency", c_double),
                ("se", c_double), ("trials", c_uint64),
                ("reach", c_double * (BLOCK_MARKOV_MAX_DEPTH + 1)),
                ("per_depth", c_double * (BLOCK_MARKOV_MAX_DEPTH + 1)),
                ("optimal_token", c_double)]


class DumpInfo(Structure):
    _fields_ = [("format", c_int), ("N", c_size_t), ("V", c_size_t), ("n_samples", c_size_t),
                ("n_drafts", c_size_t), ("generation_temperature", c_double), ("dtype", c_int)]


class DumpLayout(Structure):
    _init = "mdsd_dump_layout_init"
    _fields_ = [("size", c_size_t), ("V", c_size_t), ("dtype", c_int), ("chunk_rows", c_size_t), ("gzip", c_int),
                ("creator", c_char_p), ("dataset", c_char_p), ("tokenizer", c_char_p),
                ("generation_temperature", c_double), ("target_model", c_char_p),
                ("target_vocab_size", c_longlong), ("n_drafts", c_size_t),
                ("draft_names", POINTER(c_char_p)), ("draft_models", POINTER(c_char_p)),
                ("n_extra", c_size_t), ("extra_names", POINTER(c_char_p)),
                ("extra_values", POINTER(c_char_p)), ("neg_inf", c_int)]


class TreeDumpLayout(Structure):
    _init = "mdsd_tree_dump_layout_init"
    _fields_ = [("size", c_size_t), ("dump", DumpLayout), ("policy", c_char_p), ("sequences", c_size_t),
                ("depth", c_size_t), ("widths", POINTER(c_size_t)), ("scheme", c_char_p),
                ("drafter", c_char_p), ("temperature", c_double), ("live_verifier", c_char_p)]


class RegistryEntry(Structure):  # mdsd/registry.h, mdsd_registry_entry
    _fields_ = [("name", c_char_p), ("cls", c_int), ("kind", c_int), ("description", c_char_p),
                ("jobs", ctypes.c_uint), ("schemes", ctypes.c_uint), ("scheme", c_int),
                ("audit", c_int), ("exact", c_int)]


# mdsd_name_class and the MDSD_JOB_* bits of mdsd/registry.h
NAME_CLASSES = ("verifier", "block-verifier", "block-optimum", "scheme", "policy")
JOBS = ("table", "markov", "trees", "live")


def _candidates():
    env = os.environ.get("MDSD_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    # a wheel (pip install .): the library inside the package
    bundled = [os.path.join(here, SONAME)]
    try:  # an installed package: the library make install put beside it
        from ._install import LIBDIR
        installed = [os.path.join(LIBDIR, SONAME)]
    except ImportError:
        installed = []
    return bundled + installed + [
        # installed: PREFIX/lib/python3/dist-packages/mdsd -> PREFIX/lib
        os.path.join(here, "..", "..", "..", SONAME),
        # source tree: src/python/mdsd -> build/release
        os.path.join(here, "..", "..", "..", "build", "release", SONAME),
        SONAME,  # the system's loader path
    ]


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            return ctypes.CDLL(path)  # CDLL: the GIL is released during every call
        except OSError as e:
            tried.append(f"{path} ({e})")
    raise ImportError("mdsd: cannot load libmdsd (set MDSD_LIBRARY to its path); tried: "
                      + "; ".join(tried))


lib = _load()
P = c_void_p  # array arguments are passed as addresses (ndarray.ctypes.data)
E = POINTER(Err)


def _sig(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


_sig("mdsd_version", c_char_p)
_sig("mdsd_strerror", c_char_p, c_int)
# mdsd/option.h: the options the messages name, in the C, CLI and Python spellings
SPELL_C, SPELL_CLI, SPELL_PYTHON = 0, 1, 2
_sig("mdsd_option_name", c_char_p, c_int, c_int)
_sig("mdsd_option_lookup", c_int, c_char_p)
_sig("mdsd_option_words", c_size_t, c_char_p, c_int, c_char_p, c_size_t)
_sig("mdsd_rng_new", c_void_p, c_uint64, E)
_sig("mdsd_rng_seed", None, c_void_p, c_uint64)
_sig("mdsd_rng_uniform", c_double, c_void_p)
_sig("mdsd_rng_free", None, c_void_p)
_sig("mdsd_softmax", c_int, P, c_size_t, c_double, P, c_char_p, E)
_sig("mdsd_softmax_float", c_int, P, c_size_t, c_double, P, c_char_p, E)
_sig("mdsd_probs_validate", c_int, P, c_size_t, c_char_p, E)
_sig("mdsd_truncate", c_int, P, c_size_t, c_size_t, c_double, E)
_sig("mdsd_scheme_name", c_char_p, c_int)
_sig("mdsd_scheme_parse", c_int, c_char_p, POINTER(c_int), E)
_sig("mdsd_sampler_new", c_void_p, POINTER(Scheme), E)
_sig("mdsd_sampler_draw_drafts", None, c_void_p, c_void_p, P)
_sig("mdsd_sampler_free", None, c_void_p)
_sig("mdsd_alpha_method_name", c_char_p, c_int)
_sig("mdsd_alpha_method_parse", c_int, c_char_p, POINTER(c_int), E)
_sig("mdsd_alpha_opts_init", None, POINTER(AlphaOpts), c_size_t)
_sig("mdsd_alpha", c_int, P, POINTER(Scheme), c_int, POINTER(AlphaOpts), POINTER(AlphaResult),
     P, E)
_sig("mdsd_alpha_routes_init", None, POINTER(AlphaRoutes), c_size_t)
_sig("mdsd_alpha_all", c_int, P, POINTER(Scheme), POINTER(AlphaOpts), POINTER(AlphaRoutes), P, E)
_sig("mdsd_toy_opts_init", None, POINTER(ToyOpts), c_size_t)
_sig("mdsd_toy_dump", c_int, c_char_p, POINTER(ToyOpts), POINTER(c_size_t), c_char_p, c_size_t, E)
_sig("mdsd_plot_opts_init", None, POINTER(PlotOpts), c_size_t)
_sig("mdsd_plot_default_kind", c_int, c_char_p, POINTER(c_char_p), E)
_sig("mdsd_plot_check_opts", c_int, POINTER(PlotOpts), E)
_sig("mdsd_plot_check_paths", c_int, c_char_p, c_char_p, POINTER(PlotOpts), E)
_sig("mdsd_plot_series_read", c_int, c_char_p, POINTER(PlotOpts), POINTER(c_void_p), E)
_sig("mdsd_plot_series_free", None, c_void_p)
_sig("mdsd_plot_check_labels", c_int, c_void_p, POINTER(PlotOpts), E)
_sig("mdsd_plot_series_figure", None, c_void_p, POINTER(PlotFigure))
_sig("mdsd_plot_series_line", POINTER(PlotLine), c_void_p, c_size_t)
_sig("mdsd_plot_draw", c_int, c_void_p, c_char_p, c_char_p, POINTER(PlotOpts), E)
_sig("mdsd_plot", c_int, c_char_p, c_char_p, POINTER(PlotOpts), E)
_sig("mdsd_labels_check", c_int, c_size_t, POINTER(c_char_p), E)
_sig("mdsd_check_opts_init", None, POINTER(CheckOpts), c_size_t)
_sig("mdsd_check_run", c_int, POINTER(CheckOpts), POINTER(POINTER(CheckReport)), E)
_sig("mdsd_check_list", c_int, POINTER(CheckOpts), POINTER(POINTER(CheckReport)), E)
_sig("mdsd_check_report_free", None, POINTER(CheckReport))
_sig("mdsd_lp_export", c_int, P, POINTER(Scheme), c_int, c_char_p, E)
_sig("mdsd_registry_count", c_size_t)
_sig("mdsd_registry_at", POINTER(RegistryEntry), c_size_t)
_sig("mdsd_registry_find", POINTER(RegistryEntry), c_int, c_char_p)
_sig("mdsd_verifier_name", c_char_p, c_int)
_sig("mdsd_verifier_parse", c_int, c_char_p, POINTER(c_int), E)
_sig("mdsd_verifier_scheme", c_int, c_int)
_sig("mdsd_verifier_opts_init", None, POINTER(VerifierOpts), c_size_t)
_sig("mdsd_verifier_rate", c_int, c_int, P, POINTER(Scheme), POINTER(VerifierOpts),
     POINTER(c_double), P, E)
_sig("mdsd_verifier_new", c_void_p, c_int, P, POINTER(Scheme), POINTER(VerifierOpts), E)
_sig("mdsd_verify", c_int32, c_void_p, P, c_void_p, POINTER(c_int), E)
_sig("mdsd_verifier_free", None, c_void_p)
_sig("mdsd_montecarlo_opts_init", None, POINTER(MonteCarloOpts), c_size_t)
_sig("mdsd_montecarlo", c_int, c_void_p, POINTER(MonteCarloOpts), POINTER(MonteCarloResult), P,
     P, E)
_sig("mdsd_subset_probability", c_int, POINTER(Scheme), P, c_size_t, c_size_t,
     POINTER(c_double), E)
_sig("mdsd_output_chisq", c_int, P, P, c_size_t, POINTER(c_double), POINTER(c_size_t),
     POINTER(c_double), E)
_sig("mdsd_batch_eval_opts_init", None, POINTER(BatchEvalOpts), c_size_t)
_sig("mdsd_batch_eval", c_int, P, P, c_size_t, c_size_t, POINTER(BatchEvalOpts), P, P, P, P, E)
_sig("mdsd_batch_eval_double", c_int, P, P, c_size_t, c_size_t, POINTER(BatchEvalOpts), P, P, P,
     P, E)
_sig("mdsd_table_opts_init", None, POINTER(TableOpts), c_size_t)
_sig("mdsd_row_arrays_init", None, POINTER(RowArrays), c_size_t)
_sig("mdsd_table_run", c_int, POINTER(TableOpts), E)
_sig("mdsd_table_run_recorded", c_int, POINTER(TableOpts), c_char_p, c_size_t, POINTER(c_char_p), E)
_sig("mdsd_block_job_opts_init", None, POINTER(BlockJobOpts), c_size_t)
_sig("mdsd_block_run", c_int, POINTER(BlockJobOpts), E)
_sig("mdsd_block_run_recorded", c_int, POINTER(BlockJobOpts), c_char_p, c_size_t,
     POINTER(c_char_p), E)
_sig("mdsd_block_markov_opts_init", None, POINTER(BlockMarkovOpts), c_size_t)
_sig("mdsd_block_markov", c_int, POINTER(BlockMarkovOpts), POINTER(BlockMarkovResult), E)
_sig("mdsd_block_markov_live", c_int, POINTER(BlockMarkovOpts), c_size_t,
     POINTER(BlockMarkovResult), POINTER(BlockMarkovLiveResult), E)
_sig("mdsd_run_opts_init", None, POINTER(RunOpts), c_size_t)
_sig("mdsd_table_run_with", c_int, POINTER(TableOpts), POINTER(RunOpts), E)
_sig("mdsd_table_check", c_int, POINTER(TableOpts), POINTER(RunOpts), E)
_sig("mdsd_table_merge_texts", c_int, POINTER(TableOpts), POINTER(RunOpts), POINTER(ShardText),
     c_size_t, E)
_sig("mdsd_block_run_with", c_int, POINTER(BlockJobOpts), POINTER(RunOpts), E)
_sig("mdsd_block_markov_with", c_int, POINTER(BlockMarkovOpts), POINTER(RunOpts), c_size_t,
     POINTER(BlockMarkovResult), POINTER(BlockMarkovLiveResult), POINTER(BlockPolicy), E)
_sig("mdsd_merge", c_int, POINTER(c_char_p), c_size_t, c_char_p, c_char_p, c_char_p, E)
_sig("mdsd_merge_with", c_int, POINTER(c_char_p), c_size_t, c_char_p, POINTER(MergeJobOpts),
     POINTER(RunOpts), E)
_sig("mdsd_merge_texts", c_int, POINTER(ShardText), c_size_t, c_char_p, POINTER(MergeJobOpts),
     POINTER(RunOpts), E)
_sig("mdsd_merge_job_opts_init", None, POINTER(MergeJobOpts), c_size_t)
_sig("mdsd_merge_run", c_int, POINTER(c_char_p), c_size_t, c_char_p, POINTER(MergeJobOpts), E)
_sig("mdsd_report_opts_init", None, POINTER(ReportOpts), c_size_t)
_sig("mdsd_report", c_int, c_char_p, c_char_p, POINTER(ReportOpts), POINTER(c_void_p),
     POINTER(c_int), E)
_sig("mdsd_report_free", None, c_void_p)
_sig("mdsd_report_layout_parse", c_int, c_char_p, POINTER(c_int), E)
_sig("mdsd_dump_reader_open", c_void_p, c_char_p, E)
_sig("mdsd_dump_reader_open_truncated", c_void_p, c_char_p, E)
_sig("mdsd_dump_reader_info", None, c_void_p, POINTER(DumpInfo))
_sig("mdsd_dump_reader_draft_name", c_char_p, c_void_p, c_size_t)
_sig("mdsd_dump_reader_logits", c_int, c_void_p, c_int, c_size_t, c_size_t, P, E)
_sig("mdsd_dump_reader_rows", c_int, c_void_p, c_size_t, c_size_t, P, P, P, E)
_sig("mdsd_dump_reader_validate", c_int, c_void_p, E)
_sig("mdsd_dump_reader_free", None, c_void_p)
_sig("mdsd_dump_validate_file", c_int, c_char_p, E)
_sig("mdsd_dump_layout_init", None, POINTER(DumpLayout), c_size_t)
_sig("mdsd_dump_writer_new", c_void_p, c_char_p, POINTER(DumpLayout), E)
_sig("mdsd_dump_writer_write", c_int, c_void_p, c_size_t, P, P, P, P, P, E)
_sig("mdsd_dump_writer_finish", c_int, c_void_p, E)
_sig("mdsd_dump_writer_free", None, c_void_p)
_sig("mdsd_tree_dump_layout_init", None, POINTER(TreeDumpLayout), c_size_t)
_sig("mdsd_tree_dump_writer_new", c_void_p, c_char_p, POINTER(TreeDumpLayout), E)
_sig("mdsd_tree_dump_writer_slots", c_size_t, c_void_p)
_sig("mdsd_tree_dump_writer_write", c_int, c_void_p, c_size_t, P, P, P, P, P, P, c_int32, c_int32,
     c_int32, E)
_sig("mdsd_tree_dump_writer_finish", c_int, c_void_p, E)
_sig("mdsd_tree_dump_writer_free", None, c_void_p)


def init(cls):
    """A new options struct of ctypes class cls with its C defaults and its size set."""
    o = cls()
    getattr(lib, cls._init)(ctypes.byref(o), ctypes.sizeof(o))
    return o
