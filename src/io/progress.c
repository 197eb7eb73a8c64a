#include "progress.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void draw(mdsd_progress *pr)
{
    double elapsed = now() - pr->started;
    double frac = pr->total ? (double)pr->done / (double)pr->total : 0.0;
    int width = 30, filled = (int)(frac * width);
    /* rows skipped on resume took no time: they count for the bar only */
    double rate = elapsed > 0 ? (double)(pr->done - pr->skipped) / elapsed : 0.0;
    double eta = rate > 0 ? (double)(pr->total - pr->done) / rate : 0.0;
    char eta_text[32];
    if (rate > 0)
        snprintf(eta_text, sizeof eta_text, eta < 3600 ? "%.0fs" : "%.1fh", eta < 3600 ? eta : eta / 3600);
    else
        snprintf(eta_text, sizeof eta_text, "?");
    fprintf(stderr, "\r\033[K%s [", pr->label);
    for (int i = 0; i < width; i++)
        fputc(i < filled ? '#' : '.', stderr);
    fprintf(stderr, "] %5.1f%% %llu/%llu  %.*f/s  eta %s", 100 * frac,
            (unsigned long long)pr->done, (unsigned long long)pr->total, rate < 10 ? 1 : 0, rate, eta_text);
    fflush(stderr);
    pr->last_draw = now();
}

void mdsd_progress_start(mdsd_progress *pr, const char *label, uint64_t total)
{
    memset(pr, 0, sizeof *pr);
    pr->enabled = isatty(STDERR_FILENO);
    pr->total = total;
    pr->started = now();
    snprintf(pr->label, sizeof pr->label, "%s", label);
}

void mdsd_progress_add(mdsd_progress *pr, uint64_t done)
{
    pr->done += done;
    if (pr->enabled && now() - pr->last_draw > 0.1)
        draw(pr);
    if (pr->callback)
        pr->callback(pr->done, pr->total, pr->ctx);
}

void mdsd_progress_skip(mdsd_progress *pr, uint64_t done)
{
    pr->skipped += done;
    mdsd_progress_add(pr, done);
}

void mdsd_progress_finish(mdsd_progress *pr)
{
    if (!pr->enabled)
        return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    pr->enabled = false;
}
