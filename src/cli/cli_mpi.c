/* cli_mpi.c - mdsd table and mdsd block over MPI ranks (the MPI=1 build,
 * -DMDSD_MPI): rank r evaluates shard r+1 of N (mdsd/run.h's shard_text), rank 0 gathers the
 * aggregates and merges them in shard order into the outputs a single
 * process writes. Without MDSD_MPI this file is empty. */
#ifdef MDSD_MPI
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "outfile.h"

bool cli_mpi_launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_SIZE");
}

/* Point to point, under MPI's int counts: the length, then chunks. */
#define MPI_CHUNK ((size_t)1 << 30)

static void send_text(const char *text, size_t len)
{
    unsigned long long n = len;
    MPI_Send(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, 1, MPI_COMM_WORLD);
    for (size_t at = 0; at < len; at += MPI_CHUNK)
        MPI_Send(text + at, (int)(len - at < MPI_CHUNK ? len - at : MPI_CHUNK), MPI_CHAR, 0, 2,
                 MPI_COMM_WORLD);
}

static char *recv_text(int from, size_t *len)
{
    unsigned long long n;
    MPI_Recv(&n, 1, MPI_UNSIGNED_LONG_LONG, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    char *text = malloc((size_t)n + 1);
    for (size_t at = 0; at < n; at += MPI_CHUNK) {
        int k = (int)(n - at < MPI_CHUNK ? n - at : MPI_CHUNK);
        if (text)
            MPI_Recv(text + at, k, MPI_CHAR, from, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else /* out of memory: drain the message, the merge reports it */
            MPI_Recv(NULL, 0, MPI_CHAR, from, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (text)
        text[n] = '\0';
    *len = (size_t)n;
    return text;
}

static void partial_name(char *buf, size_t size, const char *output, int rank, int ranks)
{
    snprintf(buf, size, "%s.shard-%d-of-%d.partial", output, rank + 1, ranks);
}

int cli_mpi_run(const char *cmd, int argc, char **argv, const char *output, cli_mpi_part part,
                cli_mpi_merge merge, void *ctx)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *text = NULL, partial[4300];
    size_t len = 0;
    mdsd_err err;
    mdsd_err_clear(&err);
    partial_name(partial, sizeof partial, output, rank, size);
    int rc = part(ctx, (size_t)rank + 1, (size_t)size, &text, &len, &err);
    if (rc) {
        char words[CLI_WORDS_MAX];
        fprintf(stderr, "mdsd %s: rank %d of %d: %s\n", cmd, rank, size, cli_words(err.msg, words, sizeof words));
        char lock[4300];
        snprintf(lock, sizeof lock, "%s.shard-%d-of-%d.lock", output, rank + 1, size);
        /* not when another job holds this rank's lock: those units are its own */
        if (access(partial, F_OK) == 0 && !strstr(err.msg, partial) && !mdsd_lock_busy(lock))
            fprintf(stderr, "mdsd %s: rank %d: finished units are kept in %s: fix the problem and "
                    "rerun the same command (same number of ranks) with --resume\n", cmd, rank,
                    partial);
    }
    /* A rank that finishes first waits for the others asleep, not polling
     * (OpenMPI's collectives spin): its core goes to the ranks still at work. */
    MPI_Request barrier;
    MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    for (int arrived = 0;;) {
        MPI_Test(&barrier, &arrived, MPI_STATUS_IGNORE);
        if (arrived)
            break;
        struct timespec nap = {0, 2000000};
        nanosleep(&nap, NULL);
    }
    /* every rank learns whether any failed: then nothing is written */
    int failed = rc != 0, any = 0, ok = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!any && rank != 0) {
        send_text(text, len);
    } else if (!any) {
        mdsd_shard_text *in = calloc((size_t)size, sizeof *in);
        char (*names)[32] = calloc((size_t)size, sizeof *names);
        for (int r = 0; r < size; r++) {
            size_t n = len;
            char *t = r == 0 ? text : recv_text(r, &n);
            if (in && names) {
                snprintf(names[r], sizeof names[r], "rank %d", r);
                in[r] = (mdsd_shard_text){names[r], t, n};
            } else if (r) {
                free(t);
            }
        }
        rc = !in || !names ? mdsd_fail(&err, MDSD_ENOMEM, "out of memory")
                           : merge(ctx, in, (size_t)size, &err);
        if (rc)
            cli_report(cmd, &err);
        ok = rc == MDSD_OK;
        for (int r = 1; in && r < size; r++)
            free((char *)in[r].text);
        free(in), free(names);
    } else if (rank == 0 && !failed) {
        fprintf(stderr, "mdsd %s: the job stopped: a rank failed (its message is above); no output "
                "was written\n", cmd);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (ok) /* the outputs exist: the rank's checkpoint has served */
        unlink(partial);
    free(text);
    MPI_Finalize();
    return ok ? CLI_EXIT_OK : CLI_EXIT_ERROR;
}
#else
/* ISO C wants a translation unit to declare something. */
typedef int cli_mpi_unused;
#endif
