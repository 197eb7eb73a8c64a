/* mdsd/output.h - the output-safety mechanism of the mdsd command line, for
 * callers that write files themselves (the Python package, the model runner):
 *
 *   - mdsd_output_check: every output compared with every input and every
 *     other output - by device and inode where the file exists (hard links,
 *     symlinks), else by the path it would be created at (its directory
 *     resolved, a dangling symlink followed) - and a clash refused naming both
 *     files; each output checked on its own (not empty, not a directory or
 *     other non-regular file, in an existing, writable directory);
 *   - mdsd_output_temp / mdsd_output_publish / mdsd_output_discard: a new
 *     temporary file beside an output, created with O_EXCL (never through a
 *     file or symlink already at its name), renamed onto the output once
 *     written (a symlink at the output is replaced, never followed);
 *   - mdsd_output_lock / mdsd_output_unlock: one writer per output, the lock
 *     file of the command line's jobs (OUTPUT.lock). */
#ifndef MDSD_PUBLIC_OUTPUT_H
#define MDSD_PUBLIC_OUTPUT_H

#include <mdsd/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The files a command reads (inputs[0..n_inputs)) and writes
 * (outputs[0..n_outputs)), each with how the command names it in a message
 * (roles: "--prompts", "-o", "the checkpoint of -o out.h5"; a NULL roles array
 * or entry names it "input" / "output"). MDSD_OK, or MDSD_EINVAL / MDSD_EIO
 * with a message naming both files of a clash. */
MDSD_API mdsd_status mdsd_output_check(size_t n_inputs, const char *const *inputs,
                               const char *const *input_roles, size_t n_outputs,
                               const char *const *outputs, const char *const *output_roles,
                               mdsd_err *err);

/* A new temporary file in the directory of `path` (PATH.tmp.PID, another
 * suffix if that name is taken), open for writing: its descriptor (the
 * caller's to close), its name in tmp[0..size); -1 on failure. */
MDSD_API int mdsd_output_temp(const char *path, char *tmp, size_t size, mdsd_err *err);
/* Renames the written (and closed) temporary file tmp onto path; on failure
 * tmp is removed. */
MDSD_API mdsd_status mdsd_output_publish(const char *tmp, const char *path, mdsd_err *err);
/* Removes an unpublished temporary file. */
MDSD_API void mdsd_output_discard(const char *tmp);

/* An exclusive lock on the lock file `lock_path` (created if absent), e.g.
 * "results.csv.lock": its descriptor, or -1, naming the file, when another
 * process holds it (`what` names the output in that message: "-o r.csv").
 * Unlock removes the lock file and closes the descriptor. */
MDSD_API int mdsd_output_lock(const char *lock_path, const char *what, mdsd_err *err);
MDSD_API void mdsd_output_unlock(int fd, const char *lock_path);

#ifdef __cplusplus
}
#endif

#endif
