/* plot_gnuplot.c - what `mdsd plot` needs of gnuplot (cmd_plot.c draws the
 * results CSV's figures, plot_block.c reshapes a block CSV's rows): running
 * it, choosing its terminal and the size presets, finding the scripts,
 * temporary files, and checking the figure it wrote is whole. */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>


#include "outfile.h"
#include "plot.h"

/* Runs gnuplot with the given arguments; stderr goes to the log file.
 * Returns the exit status, or -1 if it could not be started. */
int plot_run_gnuplot(char *const argv[], const char *log)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int null = open("/dev/null", O_RDWR);
        if (fd >= 0)
            dup2(fd, STDERR_FILENO);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDIN_FILENO);
        }
        execvp("gnuplot", argv);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int terminal_available(const char *name, const char *log)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "set terminal %s", name);
    char *argv[] = {"gnuplot", "-e", cmd, NULL};
    return plot_run_gnuplot(argv, log) == 0;
}

/* The presets of --size (plot.h). */
static const size_preset presets[] = {
    {"screen", "6in,4in", "900,600", ",10", ",12", 0.6},
    {"column", "3.4in,2.6in", "1020,780", ",7", ",17", 0.4},
    {"full", "7in,3in", "1400,600", ",9", ",15", 0.5},
};

const size_preset *plot_find_preset(const char *name)
{
    for (size_t i = 0; i < sizeof presets / sizeof *presets; i++)
        if (!strcmp(presets[i].name, name ? name : "screen"))
            return &presets[i];
    return NULL;
}

/* gnuplot `set key` for --legend (NULL: outside, or below for a column). */
const char *plot_legend_spec(const char *legend, const char *size)
{
    static const char *const map[][2] = {
        {"outside", "outside right top vertical box"},
        {"below", "at screen 0.5, screen 0.01 center bottom horizontal box maxcols 3 samplen 2; set bmargin at screen 0.25"},
        {"inside", "inside right bottom vertical box opaque"},
        {"top-left", "inside left top vertical box opaque"},
        {"top-right", "inside right top vertical box opaque"},
        {"bottom-left", "inside left bottom vertical box opaque"},
        {"bottom-right", "inside right bottom vertical box opaque"},
        {"none", "off"},
    };
    if (!legend)
        legend = size && !strcmp(size, "column") ? "below" : "outside";
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strcmp(map[i][0], legend))
            return map[i][1];
    return NULL;
}

int plot_choose_terminal(const char *output, const char *size_name, const char *log, char *term,
                         size_t size, const mdsd_plot_opts *o, mdsd_err *err)
{
    const char *dot = strrchr(output, '.');
    const char *ext = dot ? dot + 1 : "";
    const char *png[] = {"pngcairo", "png", NULL}, *svg[] = {"svg", NULL}, *pdf[] = {"pdfcairo", "pdf", NULL};
    const char *const *cands = !strcmp(ext, "png") ? png : !strcmp(ext, "svg") ? svg : !strcmp(ext, "pdf") ? pdf : NULL;
    if (!cands)
        return mdsd_fail_option(err, MDSD_EINVAL, MDSD_OPTION_TERMINAL,
                                "output '%s': extension must be .png, .svg or .pdf (or give `terminal`)", output);
    for (size_t i = 0; cands[i]; i++) {
        if (!terminal_available(cands[i], log))
            continue;
        if (i > 0)
            plot_note(o->on_note, o->note_ctx, "gnuplot has no %s terminal; using %s", cands[0], cands[i]);
        const size_preset *ps = plot_find_preset(size_name);
        bool vector = !strcmp(ext, "pdf");
        snprintf(term, size, "%s size %s font \"%s\"", cands[i], vector ? ps->inches : ps->pixels,
                 vector ? ps->font_pt : ps->font_px);
        return MDSD_OK;
    }
    return mdsd_fail(err, MDSD_EUNSUPPORTED, "gnuplot is missing or has no terminal for .%s (tried %s%s%s)", ext,
                     cands[0], cands[1] ? ", " : "", cands[1] ? cands[1] : "");
}

/* 'text' with gnuplot's quote doubling. */
void plot_gp_string(char *out, size_t size, const char *s)
{
    size_t k = 0;
    if (k + 1 < size)
        out[k++] = '\'';
    for (; *s && k + 3 < size; s++) {
        if (*s == '\'')
            out[k++] = '\'';
        out[k++] = *s;
    }
    if (k + 1 < size)
        out[k++] = '\'';
    out[k] = '\0';
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* plots/KIND.gp: --scripts, $MDSD_PLOTS, beside the binary (./mdsd in the
 * repository), PREFIX/share/mdsd/plots of an installed PREFIX/bin/mdsd (make
 * install), two levels up (build/<flavour>/mdsd), ./plots. */
int plot_find_script(const char *dir_opt, const char *kind, char *path, size_t size, mdsd_err *err)
{
    char exe[4096] = "";
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[len > 0 ? len : 0] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    const char *env = getenv("MDSD_PLOTS");
    const char *fmt[] = {"%s/%s.gp", "%s/%s.gp", "%s/plots/%s.gp", "%s/../share/mdsd/plots/%s.gp",
                         "%s/../../plots/%s.gp", "%s/%s.gp"};
    const char *self = exe[0] ? exe : NULL;
    const char *dirs[] = {dir_opt, env, self, self, self, "plots"};
    if (dir_opt) {
        snprintf(path, size, "%s/%s.gp", dir_opt, kind);
        return file_exists(path) ? MDSD_OK : mdsd_fail(err, MDSD_EIO, "no gnuplot script %s", path);
    }
    for (size_t i = 1; i < sizeof dirs / sizeof *dirs; i++) {
        if (!dirs[i] || !dirs[i][0])
            continue;
        snprintf(path, size, fmt[i], dirs[i], kind);
        if (file_exists(path))
            return MDSD_OK;
    }
    return mdsd_fail_option(err, MDSD_EIO, MDSD_OPTION_SCRIPTS,
                            "cannot find the gnuplot script %s.gp (give `scripts DIR` or set MDSD_PLOTS)", kind);
}


/* Last lines of gnuplot's stderr, for the error message. */
void plot_log_tail(const char *log, char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen(log, "r");
    if (!f)
        return;
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == ' '))
        text[--n] = '\0';
    const char *start = n > size - 1 ? text + n - (size - 1) : text;
    size_t len = strlen(start) < size - 1 ? strlen(start) : size - 1;
    memcpy(buf, start, len);
    buf[len] = '\0';
    for (char *p = buf; *p; p++)
        if (*p == '\n')
            *p = ' ';
}

int plot_make_temp(char *path, size_t size, const char *what, mdsd_err *err)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, size, "%s/mdsd-plot-%s-XXXXXX", dir && *dir && strlen(dir) < 32 ? dir : "/tmp", what);
    int fd = mkstemp(path);
    if (fd < 0) {
        path[0] = '\0';
        return mdsd_fail(err, MDSD_EIO, "cannot create a temporary file: %s", strerror(errno));
    }
    close(fd);
    mdsd_cleanup_register(path);
    return MDSD_OK;
}

/* gnuplot exits 0 when it could not write the whole figure (a full disk):
 * a PNG must end with its IEND chunk, a PDF with %%EOF, an SVG with </svg>
 * (other formats, --terminal's: not empty). */
bool plot_figure_complete(const char *path, const char *output)
{
    const char *dot = strrchr(output, '.'), *ext = dot ? dot + 1 : "";
    FILE *f = fopen(path, "rb");
    char tail[1025];
    long size = f && fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    size_t got = 0;
    if (size > 0 && fseek(f, size > 1024 ? size - 1024 : 0, SEEK_SET) == 0)
        got = fread(tail, 1, sizeof tail - 1, f);
    if (f)
        fclose(f);
    if (got == 0)
        return false;
    tail[got] = '\0';
    if (!strcmp(ext, "png"))
        return got >= 12 && !memcmp(tail + got - 12, "\0\0\0\0IEND\xae\x42\x60\x82", 12);
    if (!strcmp(ext, "pdf"))
        return memmem(tail, got, "%%EOF", 5) != NULL;
    if (!strcmp(ext, "svg"))
        return memmem(tail, got, "</svg>", 6) != NULL;
    return true;
}
