/* progress.h - a progress bar on stderr for long jobs, drawn only when stderr
 * is a terminal (so logs and CI output stay clean), redrawn at most ~10 times
 * a second. */
#ifndef MDSD_PROGRESS_H
#define MDSD_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    bool enabled;
    uint64_t total;
    uint64_t done;
    uint64_t skipped;  /* of done: resumed work, not counted in the rate */
    double started;    /* seconds, monotonic */
    double last_draw;
    char label[64];
    /* told after every add (set after mdsd_progress_start); NULL = none */
    void (*callback)(uint64_t done, uint64_t total, void *ctx);
    void *ctx;
} mdsd_progress;

void mdsd_progress_start(mdsd_progress *pr, const char *label, uint64_t total);
void mdsd_progress_add(mdsd_progress *pr, uint64_t done);
/* Work finished by an earlier run (resume): advances the bar, not the rate. */
void mdsd_progress_skip(mdsd_progress *pr, uint64_t done);
/* Erases the bar's line, so what follows starts on a clean line. */
void mdsd_progress_finish(mdsd_progress *pr);

#endif
