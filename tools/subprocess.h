/* subprocess.h: running another program with no shell anywhere: posix_spawn with an argument vector,
 * its standard output read through a pipe, its end waited for (pmtune bench runs its peer so). */
#ifndef PM_SUBPROCESS_H
#define PM_SUBPROCESS_H

#include <stddef.h>

/* Runs the program at path (no search of $PATH, nothing interpreted: path and every argument
 * reach it as they are) with argv (argv[0] first, NULL last), its standard input as this
 * process's, and reads all it writes to its standard output and error (one pipe, in the order
 * written, so that its own words on a failure are the caller's to show): the first cap - 1 bytes
 * into out, NUL-terminated (the rest is read and dropped, so that it never blocks on a full
 * pipe). Returns 0 where it ran and exited with status 0; otherwise 1, with why (whycap bytes)
 * saying in a few words what happened: "cannot start PATH: REASON", "exited with status N",
 * "killed by signal N (NAME)". out holds what it wrote either way. */
int cli_spawn_read(const char *path, char *const argv[], char *out, size_t cap, char *why,
                   size_t whycap);

#endif /* PM_SUBPROCESS_H */
