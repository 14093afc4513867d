/* core.h: the bottom layer that every other one builds on, without a CUDA header: errors kept on
 * the context, the context itself, what pmtune knows of a device, NVRTC, the embedded templates. */
#ifndef PM_CORE_H
#define PM_CORE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>

#include "fault.h"
#include "pmtune.h"
#include "template.h"

#ifdef __cplusplus
extern "C" { /* the peer benchmarks (C++) call the tuner's timer through it */
#endif

/* ---- Errors (error.c) ----------------------------------------------------------------------- */

/* Records a failure on c (which may be NULL) and returns status. printf-style message. */
int pm__seterr(pm_ctx *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int pm__vseterr(pm_ctx *c, int status, const char *fmt, va_list ap);

/* ---- Devices (device.c) --------------------------------------------------------------------- */

/* What pmtune needs to know of a device (device.c fills it). */
typedef struct pm__device_info {
  int index;
  char name[256];
  char uuid[48];            /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi -L shows it */
  int cc_major, cc_minor;   /* compute capability */
  char arch[16];            /* "sm_90": what NVRTC compiles for */
  int sm_count;
  size_t mem_bytes;
  int bus_width_bits;
  int mem_clock_khz;
  int l2_bytes;
  int max_threads_per_block;
  size_t smem_per_block_optin; /* the most shared memory a block can have, opted in */
  double peak_gbps;         /* 2 * memory clock * bus width: the datasheet's bandwidth */
} pm__device_info;

/* Number of CUDA devices; PM_ENODEV (with the driver's reason) where there are none. */
int pm__device_count(pm_ctx *c, int *n);
int pm__device_query(pm_ctx *c, int index, pm__device_info *out);

/* Makes c's device current on this thread; *prev receives the device that was, or -1 where it
 * was c's already: pm__device_leave(prev) then makes it current again (one cudaGetDevice a
 * launch, and no more, where the caller's device is pmtune's: the common case). */
int pm__device_enter(pm_ctx *c, int *prev);
void pm__device_leave(int prev);

/* The driver and runtime versions, as cudaDriverGetVersion and cudaRuntimeGetVersion give them
 * (12040 is 12.4); 0 for what cannot be had (no driver). Either pointer may be NULL. Needs no
 * GPU. */
void pm__cuda_versions(int *driver, int *runtime);

/* ---- The context (context.c) ---------------------------------------------------------------- */

struct pm__serve; /* the runtime's serving state (runtime/serve.c) */
struct pm__util;  /* the tuner's utility kernels (tuner/data.c) */

struct pm_ctx {
  int device;               /* CUDA ordinal, or PM_DEVICE_NONE */
  pm__device_info dev;      /* valid when device >= 0 */
  int status;               /* of the last failure */
  char *errmsg;             /* its full message (heap), or NULL; read only under lock */
  pthread_mutex_t lock;     /* guards status, errmsg, notice and util */
  char *db_path;            /* the tuning database the context uses (heap), or NULL: the default */
  int log;                  /* PMTUNE_LOG is set: notices go to stderr too */
  char *notice;             /* the first fallback and why (heap), or NULL */
  struct pm__util *util;    /* the tuner's, once loaded; the tuner frees it (pm__util_free) */
  struct pm__serve *serve;  /* the runtime's, for contexts opened by pm_open with a device */
};

/* Makes a context for device (or PM_DEVICE_NONE) using the database db_path (NULL: the
 * default): what pm_open does before serving, and all that compiling needs. On failure *out is
 * still a context (unless memory ran out: NULL) whose pm_errmsg says why; free it with
 * pm__ctx_free. */
int pm__ctx_create(pm_ctx **out, int device, const char *db_path);
/* Frees what pm__ctx_create made; the layers above free their own state first. */
void pm__ctx_free(pm_ctx *c);

/* Records the context's first fallback (printf-style); later ones are not kept. */
void pm__notice(pm_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- Compiling (nvrtc.c) -------------------------------------------------------------------- */

typedef struct pm__cubin {
  void *data;        /* the cubin (heap) */
  size_t size;
  double compile_ms; /* wall time NVRTC took */
} pm__cubin;

/* Parses "sm_90" (or "sm_90a") into 90 and checks that this NVRTC can target it.
 * PM_EINVAL for a malformed name, PM_EUNSUPPORTED for one NVRTC does not know. */
int pm__arch_check(pm_ctx *c, const char *arch, int *sm);

/* "13.0": the NVRTC this library runs with. */
const char *pm__nvrtc_version(void);

/* Compiles CUDA source to a cubin for arch, with -D defines ("NAME" or "NAME=VALUE").
 * name is the file name NVRTC reports errors under. The templates' shared header
 * (templates/pm_common.cuh) is available to #include, and the element types' names are defined
 * to their pm_dtype values (PM_F32=0, PM_F16=1, ...). On a compile error: PM_ECOMPILE and the
 * whole log in pm_errmsg(c). Needs no GPU. */
int pm__compile(pm_ctx *c, const char *name, const char *source, const char *arch,
                const char *const *defines, size_t ndefines, pm__cubin *out);
void pm__cubin_free(pm__cubin *b);

/* Whether the cubin (an ELF image) defines the symbol `name` (cubin.c): read from its symbol
 * table, with no CUDA call; 0 for anything that is not a well-formed 64-bit ELF image. */
int pm__cubin_has_symbol(const pm__cubin *b, const char *name);

/* ---- Memory --------------------------------------------------------------------------------- */

/* Every allocation of the library (core, db, tuner, runtime) goes through these: malloc, calloc,
 * realloc and strdup, but the fault hook (PM__FAULT_MALLOC) may make one return NULL first, as
 * an exhausted heap would, so that tests walk every caller's out-of-memory path. Each caller
 * handles NULL: PM_ENOMEM and a message, with what it held freed. Freed with free(). The
 * serving hot path allocates nothing. */
#define pm__malloc(n) pm__malloc_at((n), PM__FAULT_SITE)
#define pm__calloc(k, n) pm__calloc_at((k), (n), PM__FAULT_SITE)
#define pm__realloc(p, n) pm__realloc_at((p), (n), PM__FAULT_SITE)
#define pm__strdup(s) pm__strdup_at((s), PM__FAULT_SITE)

static inline void *pm__malloc_at(size_t n, const char *site) {
  return pm__fault(PM__FAULT_MALLOC, site) ? NULL : malloc(n);
}
static inline void *pm__calloc_at(size_t k, size_t n, const char *site) {
  return pm__fault(PM__FAULT_MALLOC, site) ? NULL : calloc(k, n);
}
static inline void *pm__realloc_at(void *p, size_t n, const char *site) {
  return pm__fault(PM__FAULT_MALLOC, site) ? NULL : realloc(p, n); /* p is then kept */
}
static inline char *pm__strdup_at(const char *s, const char *site) {
  return pm__fault(PM__FAULT_MALLOC, site) ? NULL : strdup(s);
}

/* ---- Element types (dtype.c) ---------------------------------------------------------------- */

/* pm_dtype's values are 0 .. PM__NDTYPES - 1: one for each of pmtune.h's PM_DTYPES. */
#define PM__DTYPE_ONE(NAME, value, name, bytes, ctype) +1
#define PM__NDTYPES (0 PM_DTYPES(PM__DTYPE_ONE))
#define PM__DTYPES_ALL ((1u << PM__NDTYPES) - 1) /* a mask of every type: bit t for pm_dtype t */

/* The pm_dtype named `name` ("bf16"), or -1. */
int pm__dtype_find(const char *name);
/* The names, each after a bar, as one literal: "|f32|f16|bf16|f64" (a literal may follow it:
 * (PM__DTYPE_BARS "|all") + 1 is "f32|f16|bf16|f64|all"). */
#define PM__DTYPE_BAR(NAME, value, name, bytes, ctype) "|" #name
#define PM__DTYPE_BARS PM_DTYPES(PM__DTYPE_BAR)
/* The names, "f32|f16|bf16|f64", for messages. */
#define PM__DTYPE_NAMES (PM__DTYPE_BARS + 1)
/* The names of the types in mask (bit t for pm_dtype t), "f32, bf16", into out[cap]. */
void pm__dtype_list(unsigned mask, char *out, size_t cap);

/* Host conversions, round to nearest, ties to even (NaN stays NaN), as the device's
 * __float2half_rn and __float2bfloat16_rn do; the way back is exact. */
unsigned short pm__f32_to_f16(float x);
float pm__f16_to_f32(unsigned short h);
unsigned short pm__f32_to_bf16(float x);
float pm__bf16_to_f32(unsigned short h);

/* ---- Small helpers -------------------------------------------------------------------------- */

double pm__now_ms(void); /* a monotonic clock, in milliseconds */

/* Copies src into dst of cap (>= 1) bytes, cut to fit, as snprintf(dst, cap, "%s", src) would, at
 * a fraction of its cost: for the copies a library call's decision makes. */
void pm__copy_text(char *dst, size_t cap, const char *src);

/* ---- Files (file.c): every path pmtune reads or writes is opened here ------------------------ */

/* Reading takes only a regular file (a symbolic link to one is followed): a directory, FIFO,
 * device or socket is refused at once, with errno EISDIR, PM__EFIFO, PM__EDEVICE or PM__ESOCKET.
 * The open is non-blocking (O_RDONLY | O_NONBLOCK | O_CLOEXEC, then fstat, then O_NONBLOCK
 * cleared), so that a FIFO no one writes to is refused, never waited on.
 * Writing (pm__file_create) takes only a regular file, which is replaced whole, or a new one: a
 * symbolic link (PM__ESYMLINK; never followed: its target is left as it is), directory, FIFO,
 * device or socket is refused (lstat), and so is a file that exists read-only (EACCES). What is
 * written goes to a new temporary beside the file (PATH.tmp.PID.N, opened O_CREAT | O_EXCL |
 * O_NOFOLLOW), renamed over PATH when complete: PATH is never seen half written, a failure
 * leaves it as it was, and a link put there meanwhile is replaced, not written through. A
 * replaced file keeps its permission bits. Standard input or output ("-") is the callers'. */
enum { PM__EFIFO = 0x10001, PM__EDEVICE, PM__ESOCKET, PM__ESYMLINK }; /* beyond the system's */

/* What err says, for a message after the path ("'x': is a FIFO, not a regular file"): the
 * refusals above in words, else strerror(err). */
const char *pm__file_strerror(int err);

/* The refusal above where path names something other than a regular file (a symbolic link
 * followed), such as a directory or FIFO given as a database that another library opens; 0 where
 * it is a regular file, or there is nothing there to look at (nonexistent: the opener says). */
int pm__file_not_regular(const char *path);

/* A regular file at path opened for reading: a descriptor (close it), or -1 with errno set (open's
 * or fstat's, or a refusal above). */
int pm__file_open_fd(const char *path);

/* The same as a stream (fclose it), or NULL with errno set. */
FILE *pm__file_open(const char *path);

/* All that is left of stream f, NUL-terminated (heap; its length in *len where len is given), or
 * NULL with errno set: fread's, ENOMEM, or EFBIG where there are more than max bytes. f stays
 * open. */
char *pm__read_stream(FILE *f, size_t max, size_t *len);

/* The whole file at path, as pm__read_stream reads it, or NULL with errno set: pm__file_open's
 * or pm__read_stream's. */
char *pm__read_file(const char *path, size_t max, size_t *len);

/* Where buf[0, *len) is gzip data (RFC 1952, a shipped results document as results/ keeps it),
 * replaces *buf by what it inflates to (heap, NUL-terminated; the old buffer freed) and *len by
 * its length: 0. A buffer that is not gzip is left as it is: 0. Else an errno value, *buf kept:
 * EFBIG where it inflates to more than max bytes, EILSEQ where the data is damaged or cut short,
 * ENOMEM. */
int pm__gunzip(char **buf, size_t *len, size_t max);

/* A file being written: f, the temporary's stream, until pm__file_commit or pm__file_abort. */
typedef struct pm__file_out {
  FILE *f;
  char *path, *tmp;
} pm__file_out;

/* Starts writing path (see above): 0 with o->f open, or -1 with errno set (a refusal above,
 * lstat's, open's of the temporary, ENOMEM) and nothing created. */
int pm__file_create(pm__file_out *o, const char *path);

/* Closes o->f and renames the temporary over the path: 0, or -1 with errno set, the temporary
 * removed and the path left as it was. Either way o is done with. */
int pm__file_commit(pm__file_out *o);

/* The same, but only where nothing is at the path yet (the temporary linked there, which no
 * second writer can race): EEXIST, the temporary removed and what is there left as it was,
 * where anything is. */
int pm__file_commit_new(pm__file_out *o);

/* Closes o->f and removes the temporary; the path is left as it was. Harmless on a zeroed o, or
 * one committed already; keeps errno. */
void pm__file_abort(pm__file_out *o);

/* The SHA-256 of parts[0..n) (NUL-terminated texts) one after the other, as 64 lowercase hex
 * digits and a NUL (hash.c, through Nettle). */
void pm__sha256_hex(const char *const *parts, size_t n, char out[65]);

#ifdef __cplusplus
}
#endif
#endif /* PM_CORE_H */
