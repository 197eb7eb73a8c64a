/* The CLI is a thin program over the public API (issue 39, item 5): no file of
 * src/cli includes a header of src/job or src/block (nor src/mdsd.h, the internal
 * umbrella that includes them); the jobs are reached through <mdsd/...> only. Every
 * #include of a CLI file is read: a quoted or bracketed name that is a header of
 * those folders fails the test, naming the file, the line and the header; a quoted
 * one must be a header of the CLI's own layers (src/cli, src/core, src/verify,
 * src/io, src/check). The Makefile's cli layer (-I flags) enforces the same at
 * compile time; this test says which line is wrong. MDSD_CLI_DIR points the scan
 * elsewhere (the test's own check that it can fail). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#define MAX_NAMES 512

typedef struct {
    char name[MAX_NAMES][64];
    char dir[MAX_NAMES][16];
    size_t n;
} name_list;

/* The *.h basenames of folder src/DIR into l. */
static void list_headers(const char *dir, name_list *l)
{
    char path[64];
    snprintf(path, sizeof path, "src/%s", dir);
    DIR *d = opendir(path);
    cr_assert_not_null(d, "cannot open %s (run from the repository root)", path);
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len > 2 && len < 64 && !strcmp(e->d_name + len - 2, ".h") && l->n < MAX_NAMES) {
            memcpy(l->name[l->n], e->d_name, len + 1); /* len < 64: fits */
            snprintf(l->dir[l->n], sizeof l->dir[l->n], "%s", dir);
            l->n++;
        }
    }
    closedir(d);
}

static const char *find(const name_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->name[i], name))
            return l->dir[i];
    return NULL;
}

/* Scans the #include lines of every *.c and *.h file of dir; the failures, one a
 * line, into report (empty: none); returns the number of files read. */
static size_t scan_cli(const char *dir, const name_list *forbidden, const name_list *allowed,
                       char *report, size_t size)
{
    report[0] = '\0';
    size_t at = 0, files = 0;
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot open %s", dir);
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 3 || (strcmp(e->d_name + len - 2, ".c") && strcmp(e->d_name + len - 2, ".h")))
            continue;
        char path[512], line[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        cr_assert_not_null(f, "cannot read %s", path);
        files++;
        for (size_t no = 1; fgets(line, sizeof line, f); no++) {
            const char *p = line + strspn(line, " \t");
            if (*p != '#')
                continue;
            p += 1 + strspn(p + 1, " \t");
            if (strncmp(p, "include", 7))
                continue;
            p += 7 + strspn(p + 7, " \t");
            char open = *p, close = open == '"' ? '"' : '>', name[256];
            if (open != '"' && open != '<')
                continue;
            size_t k = strcspn(p + 1, close == '"' ? "\"" : ">");
            snprintf(name, sizeof name, "%.*s", (int)k, p + 1);
            const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
            const char *bad = strncmp(name, "mdsd/", 5) ? find(forbidden, base) : NULL;
            if (!bad && open == '"' && !strcmp(name, "mdsd.h"))
                bad = "mdsd.h, the internal umbrella of src/job and src/block";
            if (bad)
                at += (size_t)snprintf(report + at, size - at, "%s:%zu includes \"%s\" (src/%s): "
                                       "use the public <mdsd/...> headers\n", path, no, name, bad);
            else if (open == '"' && !find(allowed, base))
                at += (size_t)snprintf(report + at, size - at, "%s:%zu includes \"%s\", not a header "
                                       "of src/cli, core, verify, io or check\n", path, no, name);
            if (at >= size)
                at = size - 1;
        }
        fclose(f);
    }
    closedir(d);
    return files;
}

static void lists(name_list *forbidden, name_list *allowed)
{
    memset(forbidden, 0, sizeof *forbidden);
    memset(allowed, 0, sizeof *allowed);
    list_headers("job", forbidden);
    list_headers("block", forbidden);
    const char *ok[] = {"cli", "core", "verify", "io", "check"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        list_headers(ok[i], allowed);
    cr_assert(find(forbidden, "batch.h") && find(forbidden, "shard.h") &&
              find(forbidden, "blockjob.h") && find(forbidden, "block.h"),
              "the lists of src/job and src/block headers look wrong");
}

Test(cli_layers, no_cli_file_includes_a_header_of_src_job_or_src_block)
{
    static name_list forbidden, allowed;
    lists(&forbidden, &allowed);
    const char *dir = getenv("MDSD_CLI_DIR") ? getenv("MDSD_CLI_DIR") : "src/cli";
    static char report[16384];
    size_t files = scan_cli(dir, &forbidden, &allowed, report, sizeof report);
    cr_assert(files >= 10, "%s: only %zu files", dir, files);
    cr_assert_str_empty(report, "%s", report);
}

/* The scan finds a planted include: a copy of src/cli with cmd_table.c including
 * batch.h (src/job) and cmd_block.c including "../block/live.h" fails it. */
Test(cli_layers, a_planted_internal_include_is_found)
{
    static name_list forbidden, allowed;
    lists(&forbidden, &allowed);
    char dir[] = "/tmp/mdsd-cli-layers-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cp src/cli/*.c src/cli/*.h %s/ && sed -i '1i #include \"batch.h\"' "
             "%s/cmd_table.c && sed -i '1i #  include <../block/live.h>' %s/cmd_block.c", dir, dir, dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    static char report[16384];
    scan_cli(dir, &forbidden, &allowed, report, sizeof report);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert(strstr(report, "cmd_table.c:1 includes \"batch.h\" (src/job)"), "%s", report);
    cr_assert(strstr(report, "cmd_block.c:1 includes \"../block/live.h\" (src/block)"), "%s", report);
}
