/* kernel_file.h: a user's kernel described in a JSON file (issue 18), made into an op that the
 * generic space code serves as it serves the built-in ones. The format is README's "Your own
 * kernels"; expressions are SQLite's, evaluated with the parameters and dimensions bound.
 * So far the description gives a search space (`pmtune space --kernel FILE`) and its points
 * compile (`pmtune compile --kernel FILE`): tuning and serving such an op come next. */
#ifndef PM_KERNEL_FILE_H
#define PM_KERNEL_FILE_H

#include "op.h"

typedef struct pm__kernel_file pm__kernel_file;

/* Reads the description at path (its source file is named relative to it). On failure returns
 * PM_EINVAL (a fault in the description: the message names the file, the field and what is
 * wrong), PM_EIO (a file that cannot be read) or PM_ENOMEM, and *out is NULL. */
int pm__kernel_file_load(pm_ctx *c, const char *path, pm__kernel_file **out);
void pm__kernel_file_free(pm__kernel_file *k);

/* The op the description makes: name, params, seed, check (the constraints, and the block's
 * threads and the shared memory against the device's limits), bytes. Valid until
 * pm__kernel_file_free. */
const pm__op *pm__kernel_file_op(const pm__kernel_file *k);

/* The kernel's CUDA source (NUL-terminated), and in *file (may be NULL) its name as the
 * description gives it, which NVRTC reports errors under. */
const char *pm__kernel_file_source(const pm__kernel_file *k, const char **file);

#endif /* PM_KERNEL_FILE_H */
