/* The model runner (src/mdsd_runner, Python, and its wrapper src/bin/mdsd-runner): its
 * unittest suites in tests/python, run by Debian's /usr/bin/python3 (python3-numpy,
 * python3-h5py, python3-torch: `make deps`), one Criterion test per suite so that the
 * summary counts them; and the shipped dump checked by the C reader. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "testutil.h"

#define PYTHON "PYTHONPATH=src:src/python:tests/python /usr/bin/python3"

/* Runs a shell command with stderr merged into stdout; returns its exit status. */
static int run_shell(const char *cmd, char **output)
{
    FILE *f = popen(cmd, "r");
    size_t cap = 8192, used = 0, got;
    char *buf = malloc(cap);
    while (f && (got = fread(buf + used, 1, cap - used - 1, f)) > 0) {
        used += got;
        if (cap - used < 2)
            buf = realloc(buf, cap *= 2);
    }
    buf[used] = '\0';
    int status = f ? pclose(f) : -1;
    *output = buf;
    return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void python_suite(const char *module)
{
    char cmd[256], *out;
    int rc = run_shell(PYTHON " -c 'import numpy, h5py, torch' 2>&1", &out);
    cr_assert_eq(rc, 0, "Debian's /usr/bin/python3 with python3-numpy, python3-h5py and "
                 "python3-torch is needed (make deps installs them):\n%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, PYTHON " -m unittest %s 2>&1", module);
    rc = run_shell(cmd, &out);
    size_t len = strlen(out);
    const char *tail = len > 8000 ? out + len - 8000 : out;
    cr_assert_eq(rc, 0, "%s failed (exit %d):\n%s", cmd, rc, tail);
    /* unittest's closing line: "OK", never "OK (skipped=...)". */
    cr_assert(strstr(out, "\nOK\n") != NULL, "%s: no plain OK line:\n%s", cmd, tail);
    free(out);
}

Test(runner, kneser_ney_against_brute_force) { python_suite("test_kneser_ney"); }
Test(runner, batching_padding_and_resume_with_a_fake_model) { python_suite("test_pipeline"); }
Test(runner, ngram_backend_end_to_end) { python_suite("test_ngram_end_to_end"); }
Test(runner, bad_inputs) { python_suite("test_bad_inputs"); }
Test(runner, no_traceback_write_library_and_internal_errors) { python_suite("test_no_traceback"); }
Test(runner, damaged_checkpoints_rebuilt_or_refused) { python_suite("test_checkpoint"); }
Test(runner, fault_injection_kill_9_and_resume, .timeout = 300) { python_suite("test_fault_injection"); }
Test(runner, fuzz_runner_input_parsers, .timeout = 300) { python_suite("test_fuzz_runner_inputs"); }
Test(runner, hf_backend_with_stand_in_transformers_per_version) { python_suite("test_hf_adapter"); }
Test(runner, hf_backend_real_torch_on_a_tiny_causal_lm) { python_suite("test_hf_torch"); }
Test(runner, torch_backend_end_to_end_on_tiny_random_models) { python_suite("test_torch_backend"); }
Test(runner, shipped_neural_pair_loads_and_dumps) { python_suite("test_shipped_models"); }
Test(runner, hf_loading_options_device_placement_and_readme_command) { python_suite("test_hf_loading"); }
Test(runner, wrapper_picks_the_users_python) { python_suite("test_wrapper"); }
Test(runner, dump_validator) { python_suite("test_schema"); }
Test(runner, shipped_dump_is_reproducible) { python_suite("test_shipped_dump"); }
Test(runner, truncated_rows_described_and_refused) { python_suite("test_truncated_rows"); }
Test(runner, tree_dumps_written_from_python_and_markov_arrays, .timeout = 300) { python_suite("test_tree_writer"); }
Test(runner, openai_traces_and_truncation_record_written) { python_suite("test_openai_trace"); }
Test(runner, output_is_never_an_input) { python_suite("test_runner_outputs"); }

Test(runner, shipped_dump_validates_with_mdsd_info)
{
    FILE *f = fopen("data/kjv-ngram.h5", "rb");
    cr_assert(f != NULL, "data/kjv-ngram.h5 is missing (make dump makes it)");
    fclose(f);
    char *out;
    int rc = test_run_mdsd("info --validate data/kjv-ngram.h5", 1, &out);
    cr_assert_eq(rc, 0, "mdsd info --validate data/kjv-ngram.h5:\n%s", out);
    free(out);
}
