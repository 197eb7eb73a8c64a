/* The public API (src/include/mdsd, libmdsd.so): the exported symbols are exactly
 * the list; the error contract (NULL mdsd_err accepted, every error its own code and
 * message); `make install` into a temporary PREFIX (and DESTDIR), a C and a C++
 * program built against it with pkg-config; the Python package's suite
 * (tests/python/test_mdsd.py) and the README's Library and Python examples. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <mdsd/mdsd.h>

#include "batch.h"
#include "err.h"
#include "montecarlo.h"
#include "testutil.h"
#include "verifier.h"

/* Sorted, newline-separated output of a command. */
static char *sorted(const char *cmd)
{
    size_t len = strlen(cmd) + 32;
    char *full = malloc(len);
    snprintf(full, len, "%s | LC_ALL=C sort", cmd);
    char *out = test_shell_ok(full);
    free(full);
    return out;
}

Test(api, exported_symbols_are_exactly_the_list)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "nm -D --defined-only %s/libmdsd.so.0 | awk '$2 == \"T\" {sub(/@.*/, \"\", $3); print $3}'",
             test_build_dir());
    char *exported = sorted(cmd);
    char *listed = sorted("awk '/global:/ {on = 1; next} /local:/ {on = 0} on {gsub(/[ ;]/, \"\"); "
                          "if ($0 != \"\") print}' src/api/libmdsd.map");
    char *declared = sorted("grep -ho 'MDSD_API [^(]*(' src/include/mdsd/*.h | "
                            "grep -o 'mdsd_[a-z0-9_]*($' | tr -d '('");
    cr_assert(strlen(listed) > 200, "the list is empty:\n%s", listed);
    cr_assert_str_eq(exported, listed, "libmdsd.so exports:\n%s\nthe list:\n%s", exported, listed);
    cr_assert_str_eq(declared, listed, "MDSD_API declarations:\n%s\nthe list:\n%s", declared, listed);
    /* every exported name has the prefix, and nothing else leaks (data, weak, ...) */
    snprintf(cmd, sizeof cmd, "nm -D --defined-only %s/libmdsd.so.0 | awk '$3 !~ /^mdsd_|^MDSD_0$/'",
             test_build_dir());
    char *others = test_shell_ok(cmd);
    cr_assert_str_eq(others, "", "exported without the mdsd_ prefix:\n%s", others);
    snprintf(cmd, sizeof cmd, "objdump -p %s/libmdsd.so.0 | awk '$1 == \"SONAME\" {print $2}'",
             test_build_dir());
    char *soname = test_shell_ok(cmd);
    cr_assert_str_eq(soname, "libmdsd.so.0\n");
    free(exported), free(listed), free(declared), free(others), free(soname);
}

Test(api, null_err_is_accepted_everywhere)
{
    double p[3] = {0.5, 0.6, 0.2}, q[3] = {0.2, 0.3, 0.5};
    mdsd_scheme s = {MDSD_SCHEME_IID, 2, 3, q, NULL};
    mdsd_alpha_result res;
    cr_assert_eq(mdsd_alpha(p, &s, MDSD_ALPHA_AUTO, NULL, &res, NULL, NULL), MDSD_EINVAL);
    cr_assert_null(mdsd_verifier_new(MDSD_VERIFIER_RRS, p, &s, NULL, NULL));
    cr_assert_null(mdsd_dump_reader_open("/nonexistent/dump.h5", NULL));
    cr_assert_eq(mdsd_dump_validate_file("/nonexistent/dump.h5", NULL), MDSD_EIO);
    float t[4] = {0, 1, 2, 3}, d[4] = {0, 1, 2, 3};
    t[2] = 0.0f / 0.0f;
    cr_assert_eq(mdsd_batch_eval(t, d, 2, 2, NULL, NULL, NULL, NULL, NULL, NULL), MDSD_EINVAL);
    double alpha;
    cr_assert_eq(mdsd_verifier_rate(MDSD_VERIFIER_KSEQ, q, &(mdsd_scheme){MDSD_SCHEME_WOR, 2, 3, q, NULL},
                                    NULL, &alpha, NULL, NULL),
                 MDSD_EUNSUPPORTED);

    /* the batch job behind `mdsd table` (it dereferenced err) */
    const char *dumps[] = {"/nonexistent/dump.h5"};
    double temps[] = {1.0};
    size_t counts[] = {2};
    mdsd_scheme_kind schemes[] = {MDSD_SCHEME_IID};
    mdsd_batch_opts o = {.pub = {.n_dumps = 1, .dumps = dumps, .n_temperatures = 1,
                                 .temperatures = temps, .n_counts = 1, .draft_counts = counts,
                                 .n_schemes = 1, .schemes = schemes, .seed = 1, .threads = 1,
                                 .output = "build/test-api-out.csv"}};
    cr_assert_eq(mdsd_batch_run(&o, NULL, NULL, NULL), MDSD_EIO);
    o.pub.n_dumps = 0;
    cr_assert_neq(mdsd_batch_run(&o, NULL, NULL, NULL), MDSD_OK);
}

Test(api, every_error_sets_its_own_code_and_message)
{
    mdsd_err stale = {MDSD_ESOLVER, "stale message", MDSD_OPTION_TRIALS}, err;
    /* a verifier kind outside the table: EINVAL (it was EUNSUPPORTED with NULL err) */
    double q[3] = {0.2, 0.3, 0.5};
    mdsd_scheme s = {MDSD_SCHEME_IID, 2, 3, q, NULL};
    cr_assert_eq(mdsd_verifier_check((mdsd_verifier_kind)99, &s, NULL), MDSD_EINVAL);
    err = stale;
    cr_assert_eq(mdsd_verifier_check((mdsd_verifier_kind)99, &s, &err), MDSD_EINVAL);
    cr_assert_eq(err.code, MDSD_EINVAL);
    cr_assert_null(strstr(err.msg, "stale"));
    cr_assert_eq(err.option, MDSD_OPTION_NONE); /* nor the stale option */

    /* a failure that recorded no code is never reported with an earlier one */
    mdsd_err local;
    mdsd_err_clear(&local);
    err = stale;
    cr_assert_eq(mdsd_fail_from(&err, &local, "thing"), MDSD_ENOMEM);
    cr_assert_eq(err.code, MDSD_ENOMEM);
    cr_assert_str_eq(err.msg, "thing: out of memory");
    cr_assert_eq(err.option, MDSD_OPTION_NONE);
    mdsd_fail_option(&local, MDSD_EINVAL, MDSD_OPTION_MAX_PATHS, "raise `max_paths`");
    cr_assert_eq(mdsd_fail_from(&err, &local, "x"), MDSD_EINVAL);
    cr_assert_eq(err.option, MDSD_OPTION_MAX_PATHS); /* copied with the message */
    mdsd_err_clear(&err);
    cr_assert_eq(err.option, MDSD_OPTION_NONE);
    mdsd_fail(&local, MDSD_ETOOBIG, "too big");
    cr_assert_eq(mdsd_fail_from(NULL, &local, "x"), MDSD_ETOOBIG);

    /* Monte Carlo whose sampler refuses the scheme (n > 64): the sampler's own code
     * ETOOBIG, also with NULL err (it was EINVAL) */
    double p[3] = {0.5, 0.3, 0.2};
    mdsd_verifier *v = mdsd_verifier_alloc(MDSD_VERIFIER_RRS, p, &s, NULL, NULL);
    cr_assert_not_null(v);
    mdsd_scheme *own = (mdsd_scheme *)mdsd_verifier_scheme_of(v);
    own->n = 65;
    mdsd_mc_opts mo;
    mdsd_mc_opts_init(&mo);
    mo.trials = 10;
    mdsd_mc_result r;
    cr_assert_eq(mdsd_mc_run(v, &mo, &r, NULL), MDSD_ETOOBIG);
    err = stale;
    cr_assert_eq(mdsd_mc_run(v, &mo, &r, &err), MDSD_ETOOBIG);
    cr_assert_eq(err.code, MDSD_ETOOBIG);
    own->n = 2;
    mdsd_verifier_free(v);

    /* the batch job: a fresh code and message, not the stale ones */
    const char *dumps[] = {"/nonexistent/dump.h5"};
    double temps[] = {1.0};
    size_t counts[] = {2};
    mdsd_scheme_kind schemes[] = {MDSD_SCHEME_IID};
    mdsd_batch_opts o = {.pub = {.n_dumps = 1, .dumps = dumps, .n_temperatures = 1,
                                 .temperatures = temps, .n_counts = 1, .draft_counts = counts,
                                 .n_schemes = 1, .schemes = schemes, .seed = 1, .threads = 1,
                                 .output = "build/test-api-out.csv"}};
    err = stale;
    cr_assert_eq(mdsd_batch_run(&o, NULL, NULL, &err), MDSD_EIO);
    cr_assert_eq(err.code, MDSD_EIO);
    cr_assert(strstr(err.msg, "/nonexistent/dump.h5"), "%s", err.msg);

    /* public layer: a message naming the input */
    float t[6] = {0, 1, 2, 3, 4, 5}, d[6] = {0, 1, 2, 3, 4, 5};
    t[4] = 1.0f / 0.0f;
    err = stale;
    cr_assert_eq(mdsd_batch_eval(t, d, 3, 2, NULL, NULL, NULL, NULL, NULL, &err), MDSD_EINVAL);
    cr_assert(strstr(err.msg, "row 2"), "%s", err.msg);
}

Test(api, each_public_header_stands_alone_in_c_and_cpp)
{
    char *out = test_shell_ok("set -e; for h in src/include/mdsd/*.h; do n=$(basename $h); "
                         "printf '#include <mdsd/%s>\\n' $n | gcc -std=c99 -Wall -Wextra -pedantic "
                         "-Werror -Isrc/include -fsyntax-only -x c -; "
                         "printf '#include <mdsd/%s>\\n' $n | g++ -std=c++11 -Wall -Wextra -pedantic "
                         "-Werror -Isrc/include -fsyntax-only -x c++ -; echo $n; done");
    cr_assert(strstr(out, "mdsd.h") && strstr(out, "verifier.h"), "%s", out);
    /* no internal header reaches the public ones */
    char *leak = test_shell_ok("grep -h '#include' src/include/mdsd/*.h | grep -v '<mdsd/' | "
                          "grep -v -e '<stddef.h>' -e '<stdint.h>' || true");
    cr_assert_str_eq(leak, "", "public headers include: %s", leak);
    free(out), free(leak);
}

Test(api, user_cflags_are_appended)
{
    char *out = test_shell_ok("env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u BUILD make -n -B BUILD=release CFLAGS=-O3 LDFLAGS=-Wl,-O1 build/release/src/core/err.o "
                         "build/release/libmdsd.so.0.1.0 2>&1 | grep -e '-c -o build/release/src/core/err.o' -e '-shared'");
    cr_assert(strstr(out, "-std=c11") && strstr(out, "-fopenmp") && strstr(out, "-O3") &&
              strstr(out, "-fvisibility=hidden") && strstr(out, "-Wl,-O1") &&
              strstr(out, "-Wl,-soname,libmdsd.so.0"), "%s", out);
    free(out);
}

/* make install into tmp (once per process), then everything built against it. */
static char prefix[256];

static void install_once(void)
{
    if (prefix[0])
        return;
    snprintf(prefix, sizeof prefix, "%s/mdsd-install-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf %s && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory "
             "install-files PREFIX=%s",
             prefix, prefix);
    free(test_shell_ok(cmd));
}

static void uninstall(void)
{
    char cmd[600], *out;
    snprintf(cmd, sizeof cmd, "rm -rf %s", prefix);
    test_run_shell(cmd, &out);
    free(out);
}

Test(api, install_and_build_c_and_cpp_with_pkg_config, .timeout = 300)
{
    if (!test_release_build("api"))
        return;
    install_once();
    char cmd[4096];
    const char *env = "PKG_CONFIG_PATH=%s/lib/pkgconfig; export PKG_CONFIG_PATH; "
                      "LD_LIBRARY_PATH=%s/lib; export LD_LIBRARY_PATH; ";
    char envs[1024];
    snprintf(envs, sizeof envs, env, prefix, prefix);
    snprintf(cmd, sizeof cmd,
             "%s set -e; cd %s; for f in lib/libmdsd.so.0 lib/libmdsd.a include/mdsd/mdsd.h "
             "bin/mdsd bin/mdsd-runner share/man/man1/mdsd.1 lib/pkgconfig/mdsd.pc "
             "lib/python3/dist-packages/mdsd/__init__.py "
             "lib/mdsd/python/mdsd_runner/__main__.py; do test -e $f || "
             "{ echo missing $f; exit 1; }; done; grep -q '^.TH MDSD 1' share/man/man1/mdsd.1; "
             "grep -q '^.SH \"mdsd table\"' share/man/man1/mdsd.1; bin/mdsd --version; "
             "bin/mdsd-runner --help >/dev/null",
             envs, prefix);
    free(test_shell_ok(cmd));
    snprintf(cmd, sizeof cmd,
             "%s set -e; gcc -std=c11 -Wall -Wextra -Werror -o %s/ex-c tests/api/example.c "
             "$(pkg-config --cflags --libs mdsd); %s/ex-c",
             envs, prefix, prefix);
    char *out = test_shell_ok(cmd);
    cr_assert(strstr(out, "alpha* = 0.85999999999999988 (sort), rrs = 0.76000000000000001"), "%s", out);
    cr_assert(strstr(out, "error 1 (invalid input): target: probabilities sum to 1.3"), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd,
             "%s set -e; g++ -std=c++11 -Wall -Wextra -Werror -o %s/ex-cpp tests/api/example.cpp "
             "$(pkg-config --cflags --libs mdsd); %s/ex-cpp",
             envs, prefix, prefix);
    out = test_shell_ok(cmd);
    cr_assert(strstr(out, "alpha*(wor, n = 2) sort 0.83452380952380"), "%s", out);
    free(out);
    /* The installed Python package finds the installed library by itself. */
    snprintf(cmd, sizeof cmd,
             "env -u MDSD_LIBRARY PYTHONPATH=%s/lib/python3/dist-packages /usr/bin/python3 -c "
             "'import mdsd, numpy as np; p = np.array([0.5, 0.3, 0.2]); q = p[::-1]; "
             "print(repr(mdsd.alpha_star(p, q, n=2)), repr(mdsd.verifier_rate(\"rrs\", p, q, n=2)[0]), "
             "mdsd._lib.lib._name)'",
             prefix);
    out = test_shell_ok(cmd);
    cr_assert(strstr(out, "0.8599999999999999 0.76 ") && strstr(out, prefix), "%s", out);
    free(out);

    /* The installed runner validates with the installed library. */
    snprintf(cmd, sizeof cmd, "env -u MDSD_LIBRARY -u PYTHONPATH MDSD_PYTHON=/usr/bin/python3 "
             "%s/bin/mdsd-runner validate data/kjv-ngram.h5", prefix);
    out = test_shell_ok(cmd);
    cr_assert(strstr(out, "kjv-ngram.h5: ok:"), "%s", out);
    free(out);

    /* The README's Library example, as printed there, against the installed tree. */
    snprintf(cmd, sizeof cmd,
             "%s set -e; awk '/^## Library/ {on = 1} on && /^```c$/ {code = 1; next} "
             "code && /^```$/ {exit} code' README.md > %s/readme.c; test -s %s/readme.c; "
             "gcc -std=c11 -Wall -Wextra -Werror -o %s/readme %s/readme.c $(pkg-config --cflags --libs mdsd); "
             "%s/readme",
             envs, prefix, prefix, prefix, prefix, prefix);
    out = test_shell_ok(cmd);
    cr_assert(strstr(out, "alpha* = 0.86"), "README Library example printed:\n%s", out);
    free(out);
    uninstall();
}

Test(api, install_honours_destdir, .timeout = 120)
{
    if (!test_release_build("api"))
        return;
    char stage[64], cmd[2048];
    snprintf(stage, sizeof stage, "/tmp/mdsd-stage-%d", (int)getpid());
    snprintf(cmd, sizeof cmd,
             "set -e; rm -rf %s; env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory install-files PREFIX=/opt/mdsd DESTDIR=%s "
             ">/dev/null; test -e %s/opt/mdsd/lib/libmdsd.so.0; test -e %s/opt/mdsd/bin/mdsd; "
             "grep '^prefix=' %s/opt/mdsd/lib/pkgconfig/mdsd.pc; "
             "cat %s/opt/mdsd/lib/python3/dist-packages/mdsd/_install.py; "
             "test ! -e /opt/mdsd/bin/mdsd; rm -rf %s",
             stage, stage, stage, stage, stage, stage, stage);
    char *out = test_shell_ok(cmd);
    cr_assert(strstr(out, "prefix=/opt/mdsd\n") && strstr(out, "LIBDIR = \"/opt/mdsd/lib\""),
              "%s", out);
    free(out);
}

/* Python loads the release library (MDSD_LIBRARY, set by make test-run), also in the
 * sanitizer build. */
Test(api, python_package_suite, .timeout = 600)
{
    char *out = test_shell_ok("PYTHONPATH=src/python:tests/python /usr/bin/python3 -m unittest test_mdsd 2>&1");
    cr_assert(strstr(out, "\nOK\n"), "no plain OK line:\n%s", out);
    free(out);
}

Test(api, readme_python_example, .timeout = 120)
{
    char *out = test_shell_ok("awk '/^## Python/ {on = 1} on && /^```python$/ {code = 1; next} "
                         "code && /^```$/ {exit} code' README.md > /tmp/mdsd-readme-$$.py && "
                         "test -s /tmp/mdsd-readme-$$.py && PYTHONPATH=src/python /usr/bin/python3 "
                         "/tmp/mdsd-readme-$$.py; rc=$?; rm -f /tmp/mdsd-readme-$$.py; exit $rc");
    cr_assert(strstr(out, "alpha* 0.86"), "README Python example printed:\n%s", out);
    free(out);
}
