/* Installing, as a new user would, with no network: `pip install --no-build-isolation .`
 * (pyproject.toml, setup.py) into a fresh venv builds a wheel holding libmdsd and the
 * package, and the README's Python example runs from it in a clean environment; a
 * default `make install` (staged with DESTDIR) puts the package where Debian's
 * /usr/bin/python3 looks and the plot scripts where the installed `mdsd plot` finds
 * them (release build only: the sanitizer build's library needs its runtime); and the
 * package's input types and error words (tests/python/test_mdsd_inputs.py). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "testutil.h"

/* A clean environment: no MDSD_* variables, no PYTHONPATH, no make jobserver. */
#define CLEAN_ENV "env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=%s LANG=C.UTF-8 "

/* The README's Python example (the first ```python block under "## Python") to FILE. */
static void readme_example(const char *file)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "awk '/^## Python/ {on = 1} on && /^```python$/ {code = 1; next} "
             "code && /^```$/ {exit} code' README.md > %s && test -s %s", file, file);
    free(test_shell_ok(cmd));
}

Test(package, pip_install_builds_a_wheel_with_the_library, .timeout = 600)
{
    if (!test_release_build("package"))
        return;
    char dir[] = "/tmp/mdsd-test-pip-XXXXXX", cmd[4096];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd,
             "set -e; /usr/bin/python3 -m venv --system-site-packages %s/venv; "
             "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MDSD_LIBRARY PIP_NO_INPUT=1 "
             "%s/venv/bin/pip install --no-build-isolation --no-index --no-cache-dir "
             "--disable-pip-version-check -q . 2>&1",
             dir, dir);
    free(test_shell_ok(cmd));
    char example[600];
    snprintf(example, sizeof example, "%s/example.py", dir);
    readme_example(example);
    /* A fresh shell elsewhere: only the venv, none of the source tree. */
    snprintf(cmd, sizeof cmd,
             "cd %s && " CLEAN_ENV "venv/bin/python example.py && " CLEAN_ENV
             "venv/bin/python -c 'import importlib.metadata as m, os, mdsd; "
             "lib = mdsd._lib.lib._name; "
             "print(\"version\", mdsd.__version__, m.version(\"mdsd\"), mdsd.version()); "
             "print(\"bundled\", os.path.dirname(lib) == os.path.dirname(mdsd.__file__), "
             "os.path.basename(lib))'",
             dir, dir, dir);
    char *out = test_shell_ok(cmd);
    cr_assert(strstr(out, "alpha* 0.86\nlp 0.86\n(1000,) True\n"), "README example:\n%s", out);
    cr_assert(strstr(out, "version " MDSD_VERSION " " MDSD_VERSION " " MDSD_VERSION "\n"), "%s", out);
    cr_assert(strstr(out, "bundled True libmdsd.so.0\n"), "%s", out);
    free(out);
    /* a Python table over numpy logits from the installed package, against `mdsd table`
     * on a dump of the same rows: every number within 1e-12 */
    snprintf(cmd, sizeof cmd, "cp tests/python/table_check.py %s/ && cd %s && " CLEAN_ENV
             "venv/bin/python table_check.py %s %s 2>&1", dir, dir, dir, test_mdsd_bin(), dir);
    out = test_shell_ok(cmd);
    cr_assert(strstr(out, "table matches: 48 rows"), "%s", out);
    free(out);
    char root[1024];
    cr_assert_not_null(getcwd(root, sizeof root));
    /* CLEAN_ENV with a fixed HOME (it is used six times in one command) */
#define WHEEL_ENV "env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 "
    /* the wheel's commands: the bundled mdsd program (its version, a bound, a figure from the
     * gnuplot scripts bundled beside it) and the runner (its package imports, its command
     * runs), from the venv's bin only, outside the source tree */
    snprintf(cmd, sizeof cmd,
             "set -e; cd %s && mkdir -p work && cp %s/plots/examples/sweep.csv work/ && cd work && "
             WHEEL_ENV "../venv/bin/mdsd --version && " WHEEL_ENV
             "../venv/bin/mdsd bound -p 0.5,0.3,0.2 -q 0.2,0.3,0.5 -n 2 -s iid | head -1 && "
             WHEEL_ENV "../venv/bin/mdsd plot sweep.csv --kind vs-drafts -o fig.png 2>&1 && "
             "head -c 4 fig.png | od -c | head -1 && " WHEEL_ENV
             "../venv/bin/python -c 'import mdsd; print(\"pyplot\", mdsd.plot(\"sweep.csv\", "
             "\"py.png\", kind=\"vs-drafts\"))' 2>&1 && cmp fig.png py.png && " WHEEL_ENV
             "../venv/bin/python -c 'import mdsd_runner, os; print(\"runner\", "
             "mdsd_runner.__version__, os.path.dirname(mdsd_runner.__file__).endswith(\"site-packages/mdsd_runner\"))' && "
             WHEEL_ENV "../venv/bin/mdsd-runner --help | head -1; "
             WHEEL_ENV "../venv/bin/mdsd bound -p 0.5,0.5 2>&1 || echo \"exit $?\"",
             dir, root);
    out = test_shell_ok(cmd);
    cr_assert(strstr(out, "mdsd " MDSD_VERSION), "mdsd --version from the wheel:\n%s", out);
    cr_assert(strstr(out, "alpha* = 0.86\n"), "%s", out);
    cr_assert(strstr(out, "P   N   G"), "mdsd plot from the wheel:\n%s", out);
    cr_assert(strstr(out, "pyplot py.png\n"), "mdsd.plot from the wheel:\n%s", out);
    cr_assert(strstr(out, "runner 0.1.0 True\n"), "%s", out);
    cr_assert(strstr(out, "usage: mdsd-runner"), "%s", out);
    cr_assert(strstr(out, "exit 2\n"), "the program's exit status through the command:\n%s", out);
    free(out);
    /* issue 40's notebook path (tests/python/test_notebook_path.py) on the installed
     * package, from a directory outside the source tree: the shipped tree dump by
     * absolute path, tqdm and torch from the system site-packages the venv sees */
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/notebook && cp tests/python/test_notebook_path.py %s/notebook/ && "
             "cd %s/notebook && " CLEAN_ENV "MDSD_NOTEBOOK_TREES=%s/data/kjv-trees.h5 "
             "../venv/bin/python -m unittest -v test_notebook_path 2>&1",
             dir, dir, dir, dir, root);
    out = test_shell_ok(cmd);
    cr_assert(strstr(out, "\nOK\n") && strstr(out, "Ran 9 tests"), "notebook path:\n%s", out);
    free(out);
    /* the wheel was built offline and is a platform wheel */
    snprintf(cmd, sizeof cmd, "ls %s/venv/lib/python3*/site-packages/mdsd-" MDSD_VERSION
             ".dist-info/WHEEL && grep -h '^Tag:' %s/venv/lib/python3*/site-packages/mdsd-"
             MDSD_VERSION ".dist-info/WHEEL", dir, dir);
    out = test_shell_ok(cmd);
    cr_assert(strstr(out, "Tag: cp3") && !strstr(out, "none-any"), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    free(test_shell_ok(cmd));
}

/* The default PREFIX (/usr/local), staged: the package lands in a directory on
 * /usr/bin/python3's own sys.path, imports with the staged library, and the staged mdsd
 * finds its plot scripts under PREFIX/share/mdsd/plots from anywhere. */
Test(package, default_make_install_is_importable_and_plots, .timeout = 300)
{
    if (!test_release_build("package"))
        return;
    char stage[] = "/tmp/mdsd-test-stage-XXXXXX", cmd[4096];
    cr_assert_not_null(mkdtemp(stage));
    snprintf(cmd, sizeof cmd,
             "set -e; env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory "
             "install-files DESTDIR=%s > %s/install.log; "
             "init=$(cd %s && ls usr/local/lib/python3*/*-packages/mdsd/__init__.py); "
             "site=/${init%%/mdsd/__init__.py}; echo \"site $site\"; "
             "/usr/bin/python3 -c 'import sys; print(\"on path\", sys.argv[1] in sys.path)' $site; "
             "grep -F \"Python package: $site/mdsd\" %s/install.log; "
             "cd /tmp && " CLEAN_ENV "PYTHONPATH=%s$site /usr/bin/python3 -c "
             "'import mdsd; print(\"import\", mdsd.__version__, mdsd.alpha_star([0.5, 0.3, 0.2], "
             "[0.2, 0.3, 0.5], n=2) > 0.85)'",
             stage, stage, stage, stage, stage, stage);
    char *out = test_shell_ok(cmd);
    cr_assert(strstr(out, "site /usr/local/lib/python3"), "%s", out);
    cr_assert(strstr(out, "on path True\n"), "not on /usr/bin/python3's path:\n%s", out);
    cr_assert(strstr(out, "import " MDSD_VERSION " True\n"), "%s", out);
    cr_assert(!strstr(out, "not on the path"), "%s", out);
    free(out);
    /* mdsd plot from the staged prefix, run from an empty directory */
    snprintf(cmd, sizeof cmd,
             "set -e; test -e %s/usr/local/share/mdsd/plots/styles.gp; mkdir %s/work; "
             "cp plots/examples/sweep.csv %s/work/; cd %s/work; " CLEAN_ENV
             "%s/usr/local/bin/mdsd plot sweep.csv --kind vs-drafts -o fig.png 2>&1; "
             "test -s fig.png && head -c 4 fig.png | od -c | head -1; "
             "site=$(cd %s && ls -d usr/local/lib/python3*/*-packages); " CLEAN_ENV "PYTHONPATH=%s/$site "
             "/usr/bin/python3 -c 'import mdsd; mdsd.plot(\"sweep.csv\", \"py.png\", kind=\"vs-drafts\")' 2>&1; "
             "cmp fig.png py.png && echo same figure",
             stage, stage, stage, stage, stage, stage, stage, stage, stage);
    out = test_shell_ok(cmd);
    cr_assert(strstr(out, "P   N   G"), "%s", out);
    cr_assert(strstr(out, "same figure\n"), "mdsd.plot from the staged prefix:\n%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", stage);
    free(test_shell_ok(cmd));
}

/* A PREFIX outside every site directory: the fallback, and make install says so. */
Test(package, other_prefix_says_where_the_package_went, .timeout = 120)
{
    if (!test_release_build("package"))
        return;
    char stage[] = "/tmp/mdsd-test-stage-XXXXXX", cmd[1024];
    cr_assert_not_null(mkdtemp(stage));
    snprintf(cmd, sizeof cmd,
             "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory install-files "
             "PREFIX=/opt/mdsd-elsewhere DESTDIR=%s | grep '^Python package'; rm -rf %s",
             stage, stage);
    char *out = test_shell_ok(cmd);
    cr_assert(strstr(out, "Python package: /opt/mdsd-elsewhere/lib/python3/dist-packages/mdsd "
                          "(not on the path of /usr/bin/python3: add it to PYTHONPATH)"),
              "%s", out);
    free(out);
}

/* The whole job from Python (tests/python/test_mdsd_tables.py): mdsd.evaluate over
 * logits in memory against `mdsd table` to 1e-12, tidy tables, mdsd.block on tree dumps
 * and Markov toys against the command line. */
Test(package, python_tables_and_block, .timeout = 300)
{
    char *out = test_shell_ok("PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest "
                         "test_mdsd_tables 2>&1");
    cr_assert(strstr(out, "\nOK\n"), "no plain OK line:\n%s", out);
    free(out);
}

/* Ctrl-C in long calls from Python (tests/python/test_mdsd_interrupt.py): a SIGINT well
 * inside mdsd.batch, evaluate, table and block raises KeyboardInterrupt within 1 s (1.5 s
 * allowed), no temporary file left, the checkpoint resumed to an uninterrupted run's
 * bytes; tqdm bars unless progress=False. */
Test(package, python_interrupt_and_progress_bars, .timeout = 300)
{
    char *out = test_shell_ok("PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest "
                         "test_mdsd_interrupt 2>&1");
    cr_assert(strstr(out, "\nOK\n"), "no plain OK line:\n%s", out);
    free(out);
}

/* `mdsd bound --method all` from Python (tests/python/test_mdsd_bound_all.py): the
 * CLI's --json values, methods and skips bit for bit on random instances of every
 * scheme; a disagreement raises MdsdError with the routes. */
Test(package, python_bound_all_equals_the_cli, .timeout = 300)
{
    char *out = test_shell_ok("PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest "
                         "test_mdsd_bound_all 2>&1");
    cr_assert(strstr(out, "\nOK\n"), "no plain OK line:\n%s", out);
    free(out);
}

/* `mdsd toy` from Python (tests/python/test_mdsd_toy.py): the CLI's dump and --json
 * summary for the same options; bad options refused with no file left. */
Test(package, python_toy_writes_the_cli_dump, .timeout = 120)
{
    char *out = test_shell_ok("PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest "
                         "test_mdsd_toy 2>&1");
    cr_assert(strstr(out, "\nOK\n"), "no plain OK line:\n%s", out);
    free(out);
}

/* `mdsd plot` from Python (tests/python/test_mdsd_plot.py): the CLI's figure and gnuplot
 * input for the same options, the series equal to the CSV's rows, matplotlib drawing
 * the same lines, bad inputs refused naming the CSV. */
Test(package, python_plot_draws_the_cli_figure, .timeout = 180)
{
    char *out = test_shell_ok("PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest "
                         "test_mdsd_plot 2>&1");
    cr_assert(strstr(out, "\nOK\n"), "no plain OK line:\n%s", out);
    free(out);
}

/* `mdsd check` from Python (tests/python/test_mdsd_check.py): mdsd.check and
 * mdsd.check_list give the CLI's --json results; bad options refused naming the option;
 * progress per check, and a callback's exception stops the run within an instance; block's
 * live=, shard=, engine_metrics= and table's shard=, discard_partial=, checkpoint_seconds=
 * give the CLI's results and files. */
Test(package, python_check_gives_the_cli_results, .timeout = 300)
{
    char *out = test_shell_ok("PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest "
                              "test_mdsd_check 2>&1");
    cr_assert(strstr(out, "\nOK\n"), "no plain OK line:\n%s", out);
    free(out);
}

/* CLI options bound as Python keywords (tests/python/test_mdsd_binds.py):
 * monte_carlo(check_output=True) gives `accept --check-output --json`'s chi-square
 * statistic, dof and p-value exactly, subset_probability(subset=, max_tuples=) `draft
 * --subset --max-tuples --json`'s Q; bad values refused naming the keyword. */
Test(package, python_binds_equal_the_cli, .timeout = 300)
{
    char *out = test_shell_ok("PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest "
                              "test_mdsd_binds 2>&1");
    cr_assert(strstr(out, "\nOK\n"), "no plain OK line:\n%s", out);
    free(out);
}

/* `mdsd report` and the table job's rendered outputs from Python
 * (tests/python/test_mdsd_report.py): mdsd.report, mdsd.table(markdown=, latex=,
 * layout=, per_position=) and mdsd.merge(layout=) give the CLI's bytes; bad labels,
 * layouts, lists and paths refused naming them, no file left. */
Test(package, python_report_and_table_outputs_equal_the_cli, .timeout = 300)
{
    char *out = test_shell_ok("PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest "
                         "test_mdsd_report 2>&1");
    cr_assert(strstr(out, "\nOK\n"), "no plain OK line:\n%s", out);
    free(out);
}

/* Every long option of every `mdsd COMMAND --help` has a Python keyword or a reason in
 * one table (tests/python/test_cli_coverage.py); the check fails on a planted gap. */
Test(package, python_keyword_for_every_cli_option, .timeout = 120)
{
    char *out = test_shell_ok("PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest "
                         "test_cli_coverage 2>&1");
    cr_assert(strstr(out, "\nOK\n"), "no plain OK line:\n%s", out);
    free(out);
}

/* What the package takes and says (tests/python/test_mdsd_inputs.py): logits of every
 * floating type, numpy or torch; the progress callback; Python's words in errors. The
 * release library (MDSD_LIBRARY), in the sanitizer build too. */
Test(package, python_inputs_and_words, .timeout = 300)
{
    char *out = test_shell_ok("PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest "
                         "test_mdsd_inputs 2>&1");
    cr_assert(strstr(out, "\nOK\n"), "no plain OK line:\n%s", out);
    free(out);
}

/* The package's own writes under the library's output-safety mechanism
 * (tests/python/test_mdsd_outputs.py): mdsd.evaluate(output=) through an O_EXCL
 * temporary file and a rename, never a user's OUT.tmp nor a symlink; under OUT.lock;
 * with its provenance sidecar; the check of outputs against inputs (mdsd/output.h). */
Test(package, python_outputs_never_follow_or_consume, .timeout = 300)
{
    char *out = test_shell_ok("PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest "
                         "test_mdsd_outputs 2>&1");
    cr_assert(strstr(out, "\nOK\n"), "no plain OK line:\n%s", out);
    free(out);
}

/* Every integer parameter of every public function (enumerated from mdsd.__all__ and
 * the signatures) refuses 2**64 + 1, -1, 2.5 and True (tests/python/test_mdsd_integers.py). */
Test(package, python_integers_through_one_converter, .timeout = 300)
{
    char *out = test_shell_ok("PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest "
                         "test_mdsd_integers 2>&1");
    cr_assert(strstr(out, "\nOK\n"), "no plain OK line:\n%s", out);
    free(out);
}

/* The package as numpy and torch users write it (tests/python/test_mdsd_conventions.py):
 * float32 and bfloat16 softmax rows within a tolerance scaled by dtype and V, arrays
 * [..., V] of positions, counts from numpy/torch scalars, one name for a list, a numpy
 * Generator or a seed for rng=, MdsdError a ValueError, VERIFIERS without audit variants. */
Test(package, python_numpy_and_torch_conventions, .timeout = 300)
{
    char *out = test_shell_ok("PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest "
                         "test_mdsd_conventions 2>&1");
    cr_assert(strstr(out, "\nOK"), "no OK line:\n%s", out);
    free(out);
}

/* Bad input refused, never half-used (tests/python/test_mdsd_refusals.py):
 * mdsd.read_table on a number beyond range, naming file, row, column and value;
 * Verifier.verify (mdsd_verify) on a draft tuple of probability 0 under the scheme. */
Test(package, python_refuses_huge_numbers_and_impossible_drafts, .timeout = 300)
{
    char *out = test_shell_ok("PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest "
                         "test_mdsd_refusals 2>&1");
    cr_assert(strstr(out, "\nOK\n"), "no plain OK line:\n%s", out);
    free(out);
}
