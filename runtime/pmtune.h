/* pmtune.h: the public API of pmtune, an autotuning runtime for memory-bound CUDA kernels. */
#ifndef PMTUNE_H
#define PMTUNE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Every error code, once: (name, value, description). Makes the enum, pm_strerror and pm_errname. */
#define PM_ERRORS(X)                                                   \
  X(EINVAL, -1, "invalid argument")                                    \
  X(ENOMEM, -2, "out of memory")                                       \
  X(ENODEV, -3, "no CUDA device")                                      \
  X(ECUDA, -4, "CUDA runtime error")                                   \
  X(ECOMPILE, -5, "kernel template failed to compile")                 \
  X(ELAUNCH, -6, "kernel failed to launch")                            \
  X(ENOTFOUND, -7, "not found")                                        \
  X(EUNSUPPORTED, -8, "not supported")                                 \
  X(EDB, -9, "tuning database error")                                  \
  X(EIO, -10, "input/output error")                                    \
  X(EVERIFY, -11, "result differs from the reference")

typedef enum pm_status {
  PM_OK = 0,
#define PM__ERROR_ENUM(name, value, text) PM_##name = value,
  PM_ERRORS(PM__ERROR_ENUM)
#undef PM__ERROR_ENUM
} pm_status;

/* Text for a status code ("invalid argument"), and its name ("PM_EINVAL"). Never NULL. */
const char *pm_strerror(int status);
const char *pm_errname(int status);

/* The version of this library, "MAJOR.MINOR.PATCH". */
const char *pm_version(void);

/* An open context: one CUDA device and the state pmtune keeps for it. */
typedef struct pm_ctx pm_ctx;

#define PM_DEVICE_NONE (-1) /* pm_options.device: open without a device (compiling only) */

/* Options for pm_open. A zeroed struct (or NULL) means: device 0. */
typedef struct pm_options {
  int device; /* CUDA device ordinal, or PM_DEVICE_NONE */
} pm_options;

/* Opens a context. On success *out is the context and PM_OK is returned. On failure the
 * status says why and, unless memory ran out, *out is still a context whose pm_errmsg
 * gives the detail; it must be closed with pm_close like any other. */
int pm_open(pm_ctx **out, const pm_options *opts);

/* Closes a context and frees everything it holds. pm_close(NULL) does nothing. */
void pm_close(pm_ctx *c);

/* What the last failed call on this context said, in full (for a failed compilation, the
 * whole NVRTC log). Never NULL; valid until the next call on the context. */
const char *pm_errmsg(const pm_ctx *c);

#ifdef __cplusplus
}
#endif
#endif /* PMTUNE_H */
