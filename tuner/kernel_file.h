/* kernel_file.h: a user's kernel described in a JSON file, made into an op that the
 * generic space code serves as it serves the built-in ones. The format is docs/kernels.md's "Your own
 * kernels"; expressions are SQLite's, evaluated with the parameters and dimensions bound.
 * The description gives a search space (`pmtune space --kernel FILE`), points that compile
 * (`pmtune compile --kernel FILE`) and an op that `pmtune tune --kernel FILE` tunes. */
#ifndef PM_KERNEL_FILE_H
#define PM_KERNEL_FILE_H

#include "op.h"

/* A kernel description read (its space, launch expressions and arguments) and the op made from
 * it; pm_kernel, the public handle, holds one. */
typedef struct pm__kernel_desc pm__kernel_desc;

/* Reads the description at path (its source file is named relative to its folder, and must be
 * inside it). On failure returns PM_EINVAL (a fault in the description, an expression that is
 * not one bounded, read-only SQL value among them, refused here rather than when evaluated: the
 * message, one line, names the file, the field and what is wrong), PM_EIO (a file that cannot be
 * read) or PM_ENOMEM, and *out is NULL. */
int pm__kernel_desc_load(pm_ctx *c, const char *path, pm__kernel_desc **out);
void pm__kernel_desc_free(pm__kernel_desc *k);

/* The op the description makes, valid until pm__kernel_desc_free: name, params, seed, check
 * (the constraints; the block's threads, the grid and the shared memory against the device's
 * limits), bytes, its template (the source, named by the SHA-256 of the description and the
 * source: pm__op_template), and prepare (random inputs, and the seed configuration run once on
 * them: its outputs are the reference), launch and verify (each output buffer against the
 * seed's, bit for bit or within the file's tolerance). Tuning and serving take it as they take
 * a built-in op; its callbacks may be called from several threads. */
const pm__op *pm__kernel_desc_op(const pm__kernel_desc *k);

/* Checks before anything runs or is stored: that every buffer's count gives 1 to 2^40 bytes
 * for pr (PM_EINVAL naming the file and the argument), and that the seed compiles for arch with
 * its entry (and reference) unmangled in the cubin (PM_ECOMPILE with NVRTC's log on one line, or
 * PM_EINVAL naming the field). */
int pm__kernel_desc_check_size(pm_ctx *c, pm__kernel_desc *k, const pm__problem *pr);
int pm__kernel_desc_compile_seed(pm_ctx *c, pm__kernel_desc *k, const char *arch);
/* PM_EINVAL, naming the file and the field, where a cubin of k's source lacks its entry (or
 * reference) as written: a kernel not declared extern "C" has a mangled name. */
int pm__kernel_desc_check_cubin(pm_ctx *c, const pm__kernel_desc *k, const pm__cubin *bin);

/* Whether s is a C identifier of at most max characters: what a kernel's name, entry, parameters
 * and arguments must be (`pmtune kernel new` checks a name the same way). */
int pm__is_identifier(const char *s, size_t max);

/* The name of dimension i ("n"; "rows", "cols"; "batch", "rows", "cols"), or NULL. */
const char *pm__kernel_desc_dim_name(const pm__kernel_desc *k, int i);

/* How many buffer arguments the kernel takes, and buffer i's name (its dtype in *dtype, where
 * given); NULL where there is no buffer i. */
int pm__kernel_desc_buffers(const pm__kernel_desc *k);
const char *pm__kernel_desc_buffer(const pm__kernel_desc *k, int i, int *dtype);

/* How many scalar arguments it takes, and scalar i's name (its type, "i32", "i64", "f32" or
 * "f64", in *type, and whether its description gives its value in *has_value, where given); NULL
 * where there is no scalar i. A call gives scalar i's value as pm__data's described.scalars[i], else the
 * description's serves (1 where it gives none: what tuning and checking run with). */
int pm__kernel_desc_scalars(const pm__kernel_desc *k);
int pm__kernel_desc_scalar_needed(const pm__kernel_desc *k); /* the first with no value, or -1 */
/* The scalar marked "tuned" (its value part of the size: pm__problem.radius, 1 to 2^31 - 1; each
 * call gives it), or -1; *is_i64 (where given) whether it is an i64. */
int pm__kernel_desc_tuned(const pm__kernel_desc *k, int *is_i64);
const char *pm__kernel_desc_scalar(const pm__kernel_desc *k, int i, const char **type,
                                   int *has_value);

#endif /* PM_KERNEL_FILE_H */
