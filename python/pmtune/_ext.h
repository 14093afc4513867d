/* _ext.h: what the files of pmtune's compiled Python extension share. The extension does each
 * call's work (reading the arrays, checking the arguments, calling libpmtune) in C, so that a
 * warm call costs about what a torch op does; it is split by job:
 *
 *   _ext.c         the module: the library opened by path, its functions other than the calls,
 *                  the method table and the module's setup
 *   _ext_arrays.c  reading an array (a torch.Tensor through torch's own DLPack export or its
 *                  accessors, __cuda_array_interface__, DLPack) into a view, and the checks of
 *                  shapes, layouts, types and devices
 *   _ext_calls.c   what every call shares: its stream, its context, its output, its arguments
 *   _ext_ops.c     the built-in ops' calls: matadd, add, reduce_sum, filter
 *   _ext_kernel.c  a kernel of one's own: opening it and calling it
 *
 * Every name one file lends another begins ext_ (the module is built with hidden visibility:
 * none is exported). Written against the limited API of Python 3.10 (abi3): one build loads in
 * every CPython from 3.10 on. The messages are those the tests read. */
#ifndef PM_PY_EXT_H
#define PM_PY_EXT_H

#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

#include "pmtune.h"

/* ---- The library, opened by path (_ext.c) ---------------------------------------------------- */

#define PM_FUNCS(X)                                                                               \
  X(pm_version) X(pm_strerror) X(pm_errname) X(pm_open) X(pm_close) X(pm_reload) X(pm_errmsg)    \
  X(pm_notice) X(pm_matadd_t) X(pm_add_t) X(pm_reduce_sum_t) X(pm_filter_t) X(pm_kernel_open)   \
  X(pm_kernel_launch_with) X(pm_dtype_count) X(pm_dtype_name) X(pm_dtype_size)

/* The library's functions, found by dlsym() once it is loaded (handle not NULL). */
#define PM_FIELD(name) __typeof__(name) *name;
struct ext_lib {
  void *handle;
  PM_FUNCS(PM_FIELD)
};
#undef PM_FIELD
extern struct ext_lib ext_lib;

/* Loads the library where it is not loaded yet (through the Python side's load_library); 0, or
 * -1 with an exception set. */
int ext_lib_ready(void);

/* What the Python side hands over once (setup): pmtune.Error, the function that opens (or
 * finds) a device's own context and returns its handle, the function that loads the library
 * where it is not loaded yet, and the function that makes an output for a library other than
 * PyTorch. */
extern PyObject *ext_error, *ext_context_of_device, *ext_load_library, *ext_empty_like;

enum { MAXDIM = 32, MAXDEV = 64, MAXTYPES = 16 };
/* The types the array protocols are read into (each protocol spells them its own way). */
enum { F32 = PM_F32, F16 = PM_F16, BF16 = PM_BF16, F64 = PM_F64 };
/* The element types as the library lists them (pm_dtype_count, pm_dtype_name, pm_dtype_size),
 * read when it is loaded: type t's size, its name in the array libraries ("float32" for f32),
 * and all the names as a message gives them ("float32, float16, bfloat16 or float64"). */
extern int NTYPES, SIZES[MAXTYPES];
extern char NAMES[MAXTYPES][16], TYPES_TEXT[MAXTYPES * 20];

extern pm_ctx *ext_device_ctx[MAXDEV]; /* the devices' own contexts, once asked for (never
                                          closed) */

/* Interned attribute names, made at module init. */
extern struct ext_str {
  PyObject *cai, *dlpack, *dlpack_device, *get_device, *dtype, *data_ptr, *shape, *stride,
      *device, *type, *index, *id, *module, *tolist, *array, *cuda_stream, *ptr, *handle, *cupy,
      *clamp;
} ext_str;

/* PyTorch, once some code imported it (pmtune never imports it). */
extern struct ext_torch {
  PyObject *Tensor, *dtypes[MAXTYPES], *raw_stream, *current_stream, *empty_strided,
      *empty_like, *to_dlpack;
} ext_torch;

/* A str of s (UTF-8, bad bytes replaced), or None where s is NULL. */
PyObject *ext_text_or_none(const char *s);

/* ---- Arrays (_ext_arrays.c) ------------------------------------------------------------------ */

/* A GPU array as pmtune sees it: strides in bytes. */
typedef struct view {
  uintptr_t ptr;
  int ndim, dtype, esize, device, readonly, torch;
  int64_t shape[MAXDIM], strides[MAXDIM];
  PyObject *keep; /* a DLPack capsule: the memory stays valid while it lives */
} view;

void ext_release(view *v);
/* A new reference to obj.name() */
PyObject *ext_call0(PyObject *obj, PyObject *name);
/* Whether obj is a torch.Tensor (torch imported, the library loaded). */
int ext_is_torch(PyObject *obj);
/* Reads a torch.Tensor into v: a CUDA one of a type pmtune takes in one call (torch._C.
 * _to_dlpack), else through its accessors, which word the errors. */
int ext_read_torch(PyObject *obj, const char *what, view *v);
/* Reads obj, an array other than a torch.Tensor, into v through __cuda_array_interface__ or
 * DLPack (whose producer makes the data ready on stream); TypeError where it is no GPU array
 * pmtune can take. v is released on an error too. */
int ext_read_protocols(PyObject *obj, const char *what, uint64_t stream, int writable, view *v);
/* Reads obj into v; TypeError where it is no GPU array pmtune can take. v is released on an
 * error too. */
int ext_read_view(PyObject *obj, const char *what, uint64_t stream, int writable, view *v);

/* The shape as Python writes a tuple: "(4, 5)", "(3,)", "()". */
PyObject *ext_shape_repr(const view *v);
/* ValueError "X is (..), Y is (..): the same shape is needed" where they differ. */
int ext_need_same_shape(const view *x, const char *xn, const view *y, const char *yn);
/* (order, rows, cols, pitch) of a 2-D view, order 0 row-major or 1 column-major: the elements
 * of a line next to each other (esize bytes apart), lines `pitch` bytes apart (a packed array, a
 * slice of a wider one, a transposed one). In order `prefer` where the view fits it (a single
 * line or column fits both), else its own (-1: its own): row-major, but column-major for a
 * packed column. ValueError for any other. */
int ext_layout_2d(const view *v, const char *what, int prefer, int *order, size_t *rows,
                  size_t *cols, size_t *pitch);
/* Whether a view's elements fill its extent, in any order of its dimensions (what torch calls
 * non-overlapping and dense: torch.empty_like gives such a tensor's strides to its new one). */
int ext_dense(const view *v);
/* The number of elements of a view whose elements are next to each other in memory. */
int ext_packed_vector(const view *v, const char *what, size_t *n);
/* TypeError where the arrays of one call hold different element types. */
int ext_same_type(const view *const *vs, int n);
/* ValueError where the arrays of one call are on different devices. */
int ext_same_device(const view *const *vs, const char *const *names, int n);
/* ValueError where the packed arrays of an elementwise call lay their elements out in different
 * orders (a transposed one beside a row-major one): their memory is added element by element. */
int ext_same_order(const view *const *vs, const char *const *names, int n);

/* ---- What every call shares (_ext_calls.c) --------------------------------------------------- */

/* Reads a call's first array and its stream: `stream` where given, else the current stream of
 * the array's library (PyTorch's, CuPy's), else the legacy default stream. A torch.Tensor is
 * read first (its device names its current stream); any other array after (DLPack asks for the
 * stream the data must be ready on). */
int ext_first_array(PyObject *obj, const char *what, PyObject *stream, int writable, view *v,
                    uint64_t *s);
/* The context to call: h where given (a pmtune.Context's), else the device's own, opened on
 * first use. */
pm_ctx *ext_context(PyObject *h, int device);
/* Raises pmtune.Error(rc, the context's message); returns NULL. */
PyObject *ext_raise_status(pm_ctx *c, int rc);
/* -1 with pmtune.Error set where the library's call returned rc != 0. */
int ext_called(pm_ctx *c, int rc);
/* The call's output: out where given (read as every array is, writable), else a new array made
 * like `like`; a new reference in *ret either way (NULL where none was made). */
int ext_output(PyObject *out, PyObject *like, const view *lv, const int64_t *shape, int n,
               int col_major, const char *what, int dtype, uint64_t s, PyObject **ret, view *v);
/* Reads a vectorcall's arguments into vals (nreq required, the rest keeping the defaults vals
 * holds), by position and by the names in names; TypeError as Python words it. */
int ext_parse(const char *fn, const char *const *names, int nreq, int nmax,
              PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject **vals);

/* Runs stmt (a call of the library) without the GIL. */
#define GIL_RELEASED(stmt)                                                                        \
  do {                                                                                            \
    PyThreadState *ts_ = PyEval_SaveThread();                                                     \
    stmt;                                                                                         \
    PyEval_RestoreThread(ts_);                                                                    \
  } while (0)

/* ---- The module's functions, by file (the method table in _ext.c lists them) ----------------- */

/* _ext.c */
PyObject *ext_load(PyObject *self, PyObject *arg);
PyObject *ext_setup(PyObject *self, PyObject *args);
PyObject *ext_version(PyObject *self, PyObject *unused);
PyObject *ext_dtypes(PyObject *self, PyObject *unused);
PyObject *ext_errname(PyObject *self, PyObject *rc);
PyObject *ext_open(PyObject *self, PyObject *args);
PyObject *ext_close(PyObject *self, PyObject *h);
PyObject *ext_reload(PyObject *self, PyObject *h);
PyObject *ext_notice(PyObject *self, PyObject *h);
/* _ext_arrays.c: what the tests read, an array as the calls see it */
PyObject *ext_view(PyObject *self, PyObject *args);
PyObject *ext_layout(PyObject *self, PyObject *args);
PyObject *ext_packed(PyObject *self, PyObject *args);
/* _ext_ops.c */
PyObject *ext_matadd_kw(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames);
PyObject *ext_add_kw(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *ext_reduce_sum_kw(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames);
PyObject *ext_filter_kw(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames);
/* _ext_kernel.c */
PyObject *ext_kernel_open(PyObject *self, PyObject *args);
PyObject *ext_kernel(PyObject *self, PyObject *args);

#endif /* PM_PY_EXT_H */
