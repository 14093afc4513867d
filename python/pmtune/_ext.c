/* _ext.c: pmtune's compiled Python extension: each call's work (reading the arrays, checking the
 * arguments, calling libpmtune) done in C, so that a warm call costs about what a torch op does.
 *
 * Arrays are read from a torch.Tensor's own accessors (no protocol object is built), else from
 * __cuda_array_interface__ (CuPy, Numba), else from a DLPack capsule (JAX and the rest). The
 * library is dlopen()ed from the path _lib.py chose (one search, the package's own copy first),
 * so the extension itself links nothing but libc. Written against the limited API of Python 3.10
 * (abi3): one build loads in every CPython from 3.10 on. The messages are those the tests read. */
#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "pmtune.h"

/* ---- The library, opened by path ------------------------------------------------------------ */

#define PM_FUNCS(X)                                                                               \
  X(pm_version) X(pm_strerror) X(pm_errname) X(pm_open) X(pm_close) X(pm_reload) X(pm_errmsg)    \
  X(pm_notice) X(pm_matadd_t) X(pm_add_t) X(pm_reduce_sum_t) X(pm_filter_t) X(pm_kernel_open)   \
  X(pm_kernel_launch_with) X(pm_dtype_count) X(pm_dtype_name) X(pm_dtype_size)

#define PM_FIELD(name) __typeof__(name) *name;
static struct {
  void *handle;
  PM_FUNCS(PM_FIELD)
} L;
#undef PM_FIELD

/* What the Python side hands over once (setup): pmtune.Error, the function that opens (or
 * finds) a device's own context and returns its handle, the function that loads the library
 * where it is not loaded yet, and the function that makes an output for a library other than
 * PyTorch. */
static PyObject *Error, *context_of_device, *load_library, *empty_like;

enum { MAXDIM = 32, MAXDEV = 64, MAXTYPES = 16 };
/* The types the array protocols are read into (each protocol spells them its own way). */
enum { F32 = PM_F32, F16 = PM_F16, BF16 = PM_BF16, F64 = PM_F64 };
/* The element types as the library lists them (pm_dtype_count, pm_dtype_name, pm_dtype_size),
 * read when it is loaded: type t's size, its name in the array libraries ("float32" for f32),
 * and all the names as a message gives them ("float32, float16, bfloat16 or float64"). */
static int NTYPES, SIZES[MAXTYPES];
static char NAMES[MAXTYPES][16], TYPES_TEXT[MAXTYPES * 20];

static pm_ctx *device_ctx[MAXDEV]; /* the devices' own contexts, once asked for (never closed) */

/* Interned attribute names, made at module init. */
static PyObject *s_cai, *s_dlpack, *s_dlpack_device, *s_get_device, *s_dtype,
    *s_data_ptr, *s_shape, *s_stride, *s_device, *s_type, *s_index, *s_id,
    *s_module, *s_tolist, *s_array, *s_cuda_stream, *s_ptr, *s_handle, *s_cupy, *s_clamp;

/* PyTorch, once some code imported it (pmtune never imports it). */
static struct {
  PyObject *Tensor, *dtypes[MAXTYPES], *raw_stream, *current_stream, *empty_strided;
} T;

static PyObject *text_or_none(const char *s);

static int lib_ready(void) {
  if (L.handle != NULL) return 0;
  PyObject *r = PyObject_CallObject(load_library, NULL);
  Py_XDECREF(r);
  return r == NULL ? -1 : 0;
}

static PyObject *ext_load(PyObject *self, PyObject *arg) {
  (void)self;
  if (L.handle != NULL) Py_RETURN_NONE;
  PyObject *bytes;
  if (!PyUnicode_FSConverter(arg, &bytes)) return NULL;
  void *h = dlopen(PyBytes_AsString(bytes), RTLD_NOW | RTLD_LOCAL);
  Py_DECREF(bytes);
  if (h == NULL) return PyErr_Format(PyExc_OSError, "%s", dlerror());
#define PM_SYM(name)                                                                               \
  if ((*(void **)&L.name = dlsym(h, #name)) == NULL) {                                            \
    dlclose(h);                                                                                   \
    return PyErr_Format(PyExc_OSError, "%S has no %s: not a libpmtune", arg, #name);              \
  }
  PM_FUNCS(PM_SYM)
#undef PM_SYM
  int n = L.pm_dtype_count();
  if (n < 1 || n > MAXTYPES) {
    dlclose(h);
    return PyErr_Format(PyExc_OSError, "%S lists %d element types: not a libpmtune", arg, n);
  }
  size_t len = 0;
  for (int t = 0; t < n; t++) {
    const char *name = L.pm_dtype_name((pm_dtype)t), *f = strchr(name, 'f');
    /* the array libraries spell the library's "f" out: f32 float32, bf16 bfloat16 */
    if (f != NULL)
      snprintf(NAMES[t], sizeof NAMES[t], "%.*sfloat%s", (int)(f - name), name, f + 1);
    else
      snprintf(NAMES[t], sizeof NAMES[t], "%s", name);
    SIZES[t] = (int)L.pm_dtype_size((pm_dtype)t);
    len += (size_t)snprintf(TYPES_TEXT + len, sizeof TYPES_TEXT - len, "%s%s",
                            t == 0 ? "" : t == n - 1 ? " or " : ", ", NAMES[t]);
  }
  NTYPES = n;
  L.handle = h;
  Py_RETURN_NONE;
}

/* dtypes() -> ((name, array name, bytes), ...): the element types as the library lists them,
 * in pm_dtype's order (the library is loaded where it is not yet). */
static PyObject *ext_dtypes(PyObject *self, PyObject *unused) {
  (void)self, (void)unused;
  if (lib_ready() < 0) return NULL;
  PyObject *r = PyTuple_New(NTYPES);
  for (int t = 0; r != NULL && t < NTYPES; t++) {
    PyObject *e = Py_BuildValue("ssi", L.pm_dtype_name((pm_dtype)t), NAMES[t], SIZES[t]);
    if (e == NULL) {
      Py_DECREF(r);
      return NULL;
    }
    PyTuple_SetItem(r, t, e);
  }
  return r;
}

/* ---- PyTorch, where it is imported ---------------------------------------------------------- */

/* Fills T the first time torch is in sys.modules once the library (whose types T matches) is
 * loaded; 0 where either is not (yet), -1 on an error. */
static int torch_seen(void) {
  static int failed; /* a torch without what pmtune reads: its tensors go through the protocols */
  if (T.Tensor != NULL) return 1;
  if (failed) return 0;
  PyObject *torch = PyDict_GetItemString(PyImport_GetModuleDict(), "torch"); /* borrowed */
  if (torch == NULL || NTYPES == 0) return 0; /* T's types are the library's, once it is loaded */
  int ok = (T.empty_strided = PyObject_GetAttrString(torch, "empty_strided")) != NULL;
  for (int i = 0; ok && i < NTYPES; i++)
    ok = (T.dtypes[i] = PyObject_GetAttrString(torch, NAMES[i])) != NULL;
  PyObject *c = ok ? PyObject_GetAttrString(torch, "_C") : NULL; /* the stream as an int */
  T.raw_stream = c != NULL ? PyObject_GetAttrString(c, "_cuda_getCurrentRawStream") : NULL;
  Py_XDECREF(c);
  if (ok && T.raw_stream == NULL) {
    PyErr_Clear();
    PyObject *cuda = PyObject_GetAttrString(torch, "cuda");
    T.current_stream = cuda != NULL ? PyObject_GetAttrString(cuda, "current_stream") : NULL;
    Py_XDECREF(cuda);
    ok = T.current_stream != NULL;
  }
  PyObject *tensor = ok ? PyObject_GetAttrString(torch, "Tensor") : NULL;
  if (tensor == NULL) {
    failed = 1;
    return -1;
  }
  T.Tensor = tensor;
  return 1;
}

static int is_torch(PyObject *obj) {
  if (T.Tensor == NULL && torch_seen() <= 0) {
    PyErr_Clear();
    return 0;
  }
  PyTypeObject *t = Py_TYPE(obj);
  return t == (PyTypeObject *)T.Tensor || PyType_IsSubtype(t, (PyTypeObject *)T.Tensor);
}

/* ---- Arrays ---------------------------------------------------------------------------------- */

/* A GPU array as pmtune sees it: strides in bytes. */
typedef struct view {
  uintptr_t ptr;
  int ndim, dtype, esize, device, readonly, torch;
  int64_t shape[MAXDIM], strides[MAXDIM];
  PyObject *keep; /* a DLPack capsule: the memory stays valid while it lives */
} view;

static void release(view *v) {
  Py_CLEAR(v->keep);
}

/* A new reference to obj.name() */
static PyObject *call0(PyObject *obj, PyObject *name) {
  return PyObject_CallMethodObjArgs(obj, name, NULL);
}

static int as_i64(PyObject *o, int64_t *out) {
  long long v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred()) return -1;
  *out = v;
  return 0;
}

/* Reads a sequence of ints (a tuple, a torch.Size, a list) into out[]; n receives its length. */
static int int_seq(PyObject *seq, const char *what, const char *field, int64_t *out, int *n) {
  Py_ssize_t len = PySequence_Size(seq);
  if (len < 0) return -1;
  if (len > MAXDIM) {
    PyErr_Format(PyExc_ValueError, "%s: %zd dimensions in its %s; pmtune reads at most %d", what,
                 len, field, MAXDIM);
    return -1;
  }
  for (Py_ssize_t i = 0; i < len; i++) {
    PyObject *e = PySequence_GetItem(seq, i);
    int rc = e == NULL ? -1 : as_i64(e, &out[i]);
    Py_XDECREF(e);
    if (rc < 0) return -1;
  }
  *n = (int)len;
  return 0;
}

static void packed_strides(view *v) {
  int64_t acc = v->esize;
  for (int i = v->ndim - 1; i >= 0; i--) {
    v->strides[i] = acc;
    acc *= v->shape[i] > 1 ? v->shape[i] : 1;
  }
}

/* The ordinal an array's `device` attribute names: CuPy's and Numba's .id, torch's .index; else
 * 0 (what has none lives on the current device, 0 as pmtune opens it). */
static int device_of(PyObject *obj) {
  PyObject *d = PyObject_GetAttr(obj, s_device);
  if (d == NULL) {
    PyErr_Clear();
    return 0;
  }
  int ordinal = 0;
  PyObject *id = PyObject_GetAttr(d, s_id);
  if (id == NULL) {
    PyErr_Clear();
    id = PyObject_GetAttr(d, s_index);
  }
  if (id == NULL) PyErr_Clear();
  else if (PyLong_Check(id)) ordinal = (int)PyLong_AsLong(id);
  Py_XDECREF(id);
  Py_DECREF(d);
  if (ordinal < 0 || PyErr_Occurred()) PyErr_Clear(), ordinal = 0;
  return ordinal;
}

static int read_torch(PyObject *obj, const char *what, view *v) {
  int64_t i64;
  PyObject *r = call0(obj, s_get_device); /* -1: on the host (or meta); a CUDA ordinal else */
  int rc = r == NULL ? -1 : as_i64(r, &i64);
  Py_XDECREF(r);
  if (rc < 0) return -1;
  if (i64 < 0) {
    PyObject *d = PyObject_GetAttr(obj, s_device), *kind = d ? PyObject_GetAttr(d, s_type) : NULL;
    Py_XDECREF(d);
    if (kind == NULL) return -1;
    int host = PyUnicode_CompareWithASCIIString(kind, "cpu") == 0;
    PyErr_Format(PyExc_TypeError, "%s: the array is in %s memory (a torch tensor on %S): pmtune "
                 "takes arrays in GPU memory", what, host ? "host" : "non-CUDA", kind);
    Py_DECREF(kind);
    return -1;
  }
  v->device = (int)i64;
  PyObject *dtype = PyObject_GetAttr(obj, s_dtype);
  if (dtype == NULL) return -1;
  v->dtype = -1;
  for (int i = 0; i < NTYPES; i++)
    if (dtype == T.dtypes[i]) v->dtype = i;
  if (v->dtype < 0) {
    PyErr_Format(PyExc_TypeError, "%s: pmtune takes %s arrays, not %S", what, TYPES_TEXT,
                 dtype);
    Py_DECREF(dtype);
    return -1;
  }
  Py_DECREF(dtype);
  v->esize = SIZES[v->dtype];
  if ((r = call0(obj, s_data_ptr)) == NULL) return -1;
  v->ptr = (uintptr_t)PyLong_AsUnsignedLongLong(r);
  Py_DECREF(r);
  if (PyErr_Occurred()) return -1;
  if ((r = PyObject_GetAttr(obj, s_shape)) == NULL) return -1;
  rc = int_seq(r, what, "shape", v->shape, &v->ndim);
  Py_DECREF(r);
  if (rc < 0 || (r = call0(obj, s_stride)) == NULL) return -1;
  int n;
  rc = int_seq(r, what, "strides", v->strides, &n);
  Py_DECREF(r);
  if (rc < 0) return -1;
  for (int i = 0; i < n; i++) v->strides[i] *= v->esize;
  v->torch = 1;
  return 0;
}

/* The element type a __cuda_array_interface__'s typestr names, or -1. */
static int cai_dtype(PyObject *typestr) {
  if (typestr == NULL || !PyUnicode_Check(typestr)) return -1;
  PyObject *b = PyUnicode_AsUTF8String(typestr);
  if (b == NULL) {
    PyErr_Clear();
    return -1;
  }
  const char *s = PyBytes_AsString(b);
  int big = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  big = 1;
#endif
  int t = -1;
  if (s[0] == '<' || s[0] == '=' || s[0] == '|' || (s[0] == '>' && big)) {
    if (strcmp(s + 1, "f4") == 0) t = F32;
    else if (strcmp(s + 1, "f2") == 0) t = F16;
    else if (strcmp(s + 1, "f8") == 0) t = F64;
  }
  Py_DECREF(b);
  return t;
}

/* Reads a __cuda_array_interface__ dict; 1 where its type is none pmtune takes but the object
 * has __dlpack__ too (PyTorch's bfloat16 is "<V2": DLPack can name it). */
static int read_cai(PyObject *obj, PyObject *cai, const char *what, int writable, view *v) {
  if (!PyDict_Check(cai)) {
    PyErr_Format(PyExc_TypeError, "%s: __cuda_array_interface__ is not a dict", what);
    return -1;
  }
  PyObject *typestr = PyDict_GetItemString(cai, "typestr");
  v->dtype = cai_dtype(typestr);
  if (v->dtype < 0) {
    if (PyObject_HasAttr(obj, s_dlpack)) return 1;
    PyErr_Format(PyExc_TypeError, "%s: pmtune takes %s arrays, not %S", what, TYPES_TEXT,
                 typestr ? typestr : Py_None);
    return -1;
  }
  v->esize = SIZES[v->dtype];
  PyObject *shape = PyDict_GetItemString(cai, "shape"), *strides = PyDict_GetItemString(cai,
                                                                                      "strides");
  PyObject *data = PyDict_GetItemString(cai, "data");
  if (shape == NULL || data == NULL || !PyTuple_Check(data) || PyTuple_Size(data) != 2) {
    PyErr_Format(PyExc_TypeError, "%s: __cuda_array_interface__ lacks its shape or data", what);
    return -1;
  }
  if (int_seq(shape, what, "shape", v->shape, &v->ndim) < 0) return -1;
  if (strides == NULL || strides == Py_None) {
    packed_strides(v);
  } else {
    int n;
    if (int_seq(strides, what, "strides", v->strides, &n) < 0) return -1;
    if (n != v->ndim) {
      PyErr_Format(PyExc_ValueError, "%s: %d strides for %d dimensions", what, n, v->ndim);
      return -1;
    }
  }
  PyObject *ptr = PyTuple_GetItem(data, 0);
  v->ptr = ptr == Py_None ? 0 : (uintptr_t)PyLong_AsUnsignedLongLong(ptr);
  if (PyErr_Occurred()) return -1;
  v->readonly = PyObject_IsTrue(PyTuple_GetItem(data, 1));
  if (v->readonly < 0) return -1;
  if (writable && v->readonly) {
    PyErr_Format(PyExc_ValueError, "%s: the array is read-only", what);
    return -1;
  }
  v->device = device_of(obj);
  return 0;
}

typedef struct {
  int32_t device_type, device_id;
} DLDevice;
typedef struct {
  uint8_t code, bits;
  uint16_t lanes;
} DLDataType;
typedef struct { /* DLManagedTensor begins with it */
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape, *strides;
  uint64_t byte_offset;
} DLTensor;
enum { DL_CPU = 1, DL_CUDA = 2, DL_CUDA_HOST = 3, DL_CUDA_MANAGED = 13, DL_FLOAT = 2, DL_BF = 4 };

static const char *dl_name(long kind) {
  switch (kind) {
  case DL_CPU: case DL_CUDA_HOST: return "host";
  case 4: return "OpenCL";
  case 7: return "Vulkan";
  case 8: return "Metal";
  case 10: return "ROCm";
  case 14: return "oneAPI";
  default: return "non-CUDA";
  }
}

static int read_dlpack(PyObject *obj, const char *what, uint64_t stream, view *v) {
  PyObject *dev = PyObject_GetAttr(obj, s_dlpack_device);
  if (dev == NULL) {
    PyErr_Clear();
  } else { /* asked first: a host array's producer may refuse a CUDA stream */
    PyObject *pair = PyObject_CallObject(dev, NULL);
    Py_DECREF(dev);
    if (pair == NULL) return -1;
    PyObject *k = PySequence_GetItem(pair, 0);
    Py_DECREF(pair);
    long kind = k ? PyLong_AsLong(k) : -1;
    Py_XDECREF(k);
    if (PyErr_Occurred()) return -1;
    if (kind != DL_CUDA && kind != DL_CUDA_MANAGED) {
      PyErr_Format(PyExc_TypeError, "%s: the array is in %s memory (DLPack device type %ld): "
                   "pmtune takes arrays in GPU memory", what, dl_name(kind), kind);
      return -1;
    }
  }
  /* the producer makes the data ready on our stream (1: the legacy default stream) */
  PyObject *method = PyObject_GetAttr(obj, s_dlpack);
  if (method == NULL) return -1;
  PyObject *args = PyTuple_New(0), *kw = Py_BuildValue("{sK}", "stream",
                                                       (unsigned long long)(stream ? stream : 1));
  PyObject *capsule = args && kw ? PyObject_Call(method, args, kw) : NULL;
  Py_XDECREF(args);
  Py_XDECREF(kw);
  if (capsule == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    capsule = PyObject_CallObject(method, NULL);
  }
  Py_DECREF(method);
  if (capsule == NULL) return -1;
  /* the capsule keeps the tensor alive and frees it when collected, since it is not renamed
   * "used_dltensor" (pmtune takes no ownership) */
  DLTensor *t = PyCapsule_GetPointer(capsule, "dltensor");
  if (t == NULL) {
    Py_DECREF(capsule);
    return -1;
  }
  v->keep = capsule;
  if (t->device.device_type != DL_CUDA && t->device.device_type != DL_CUDA_MANAGED) {
    PyErr_Format(PyExc_TypeError, "%s: pmtune takes arrays in GPU memory (DLPack device type %d)",
                 what, (int)t->device.device_type);
    return -1;
  }
  v->dtype = -1;
  if (t->dtype.lanes == 1 && t->dtype.code == DL_FLOAT)
    v->dtype = t->dtype.bits == 32 ? F32 : t->dtype.bits == 16 ? F16 : t->dtype.bits == 64 ? F64
                                                                                           : -1;
  if (t->dtype.lanes == 1 && t->dtype.code == DL_BF && t->dtype.bits == 16) v->dtype = BF16;
  if (v->dtype < 0) {
    PyErr_Format(PyExc_TypeError, "%s: pmtune takes %s arrays, not DLPack type (%d, %d, %d)",
                 what, TYPES_TEXT, t->dtype.code, t->dtype.bits, t->dtype.lanes);
    return -1;
  }
  if (t->ndim < 0 || t->ndim > MAXDIM) {
    PyErr_Format(PyExc_ValueError, "%s: %d dimensions; pmtune reads at most %d", what,
                 (int)t->ndim, MAXDIM);
    return -1;
  }
  v->esize = SIZES[v->dtype];
  v->ndim = t->ndim;
  for (int i = 0; i < v->ndim; i++) v->shape[i] = t->shape[i];
  if (t->strides != NULL)
    for (int i = 0; i < v->ndim; i++) v->strides[i] = t->strides[i] * v->esize;
  else
    packed_strides(v);
  v->ptr = (uintptr_t)t->data + (uintptr_t)t->byte_offset;
  v->device = t->device.device_id;
  return 0;
}

/* Reads obj, an array other than a torch.Tensor, into v through __cuda_array_interface__ or
 * DLPack; TypeError where it is no GPU array pmtune can take. v is released on an error too. */
static int read_protocols(PyObject *obj, const char *what, uint64_t stream, int writable,
                          view *v) {
  memset(v, 0, sizeof *v);
  PyObject *cai = PyObject_GetAttr(obj, s_cai);
  if (cai == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError) && !PyErr_ExceptionMatches(PyExc_TypeError))
      return -1;
    PyErr_Clear();
  } else {
    int rc = read_cai(obj, cai, what, writable, v);
    Py_DECREF(cai);
    if (rc <= 0) return rc;
  }
  if (PyObject_HasAttr(obj, s_dlpack)) {
    int rc = read_dlpack(obj, what, stream, v);
    if (rc < 0) release(v);
    return rc;
  }
  PyObject *tn = PyObject_GetAttrString((PyObject *)Py_TYPE(obj), "__name__");
  PyErr_Format(PyExc_TypeError, "%s: %S is not a GPU array (it has neither "
               "__cuda_array_interface__ nor __dlpack__)", what, tn ? tn : Py_None);
  Py_XDECREF(tn);
  return -1;
}

/* Reads obj into v; TypeError where it is no GPU array pmtune can take. v is released on an
 * error too. */
static int read_view(PyObject *obj, const char *what, uint64_t stream, int writable, view *v) {
  memset(v, 0, sizeof *v);
  if (lib_ready() < 0) return -1; /* the types are the library's */
  return is_torch(obj) ? read_torch(obj, what, v) : read_protocols(obj, what, stream, writable, v);
}

/* The shape as Python writes a tuple: "(4, 5)", "(3,)", "()". */
static PyObject *shape_repr(const view *v) {
  PyObject *t = PyTuple_New(v->ndim);
  if (t == NULL) return NULL;
  for (int i = 0; i < v->ndim; i++) PyTuple_SetItem(t, i, PyLong_FromLongLong(v->shape[i]));
  PyObject *r = PyObject_Repr(t);
  Py_DECREF(t);
  return r;
}

static int same_shape(const view *x, const view *y) {
  if (x->ndim != y->ndim) return 0;
  for (int i = 0; i < x->ndim; i++)
    if (x->shape[i] != y->shape[i]) return 0;
  return 1;
}

/* ValueError "X is (..), Y is (..): the same shape is needed" where they differ. */
static int need_same_shape(const view *x, const char *xn, const view *y, const char *yn) {
  if (same_shape(x, y)) return 0;
  PyObject *sx = shape_repr(x), *sy = shape_repr(y);
  if (sx && sy)
    PyErr_Format(PyExc_ValueError, "%s is %U, %s is %U: the same shape is needed", xn, sx, yn, sy);
  Py_XDECREF(sx);
  Py_XDECREF(sy);
  return -1;
}

/* (order, rows, cols, pitch) of a 2-D view, order 0 row-major or 1 column-major: the elements
 * of a line next to each other (esize bytes apart), lines `pitch` bytes apart (a packed array, a
 * slice of a wider one, a transposed one). ValueError for any other. */
static int layout(const view *v, const char *what, int *order, size_t *rows, size_t *cols,
                  size_t *pitch) {
  if (v->ndim != 2) {
    PyErr_Format(PyExc_ValueError, "%s: a 2-D array is needed, not %d-D", what, v->ndim);
    return -1;
  }
  int64_t r = v->shape[0], c = v->shape[1], s0 = v->strides[0], s1 = v->strides[1], e = v->esize;
  *rows = (size_t)r, *cols = (size_t)c;
  if (r == 1 && (c == 1 || s1 == e)) *order = 0, *pitch = (size_t)(e * c); /* one line */
  else if (c == 1 && s0 == e) *order = 1, *pitch = (size_t)(e * r);  /* a packed column */
  else if ((s1 == e || c == 1) && s0 >= e * c) *order = 0, *pitch = (size_t)s0;
  else if (s0 == e && s1 >= e * r) *order = 1, *pitch = (size_t)s1;
  else {
    PyErr_Format(PyExc_ValueError, "%s: strides (%lld, %lld) bytes: one of the two must be %d (a "
                 "line's elements next to each other) and the other at least a line", what,
                 (long long)s0, (long long)s1, (int)e);
    return -1;
  }
  return 0;
}

/* Whether a view's elements fill its extent, in any order of its dimensions (what torch calls
 * non-overlapping and dense: torch.empty_like gives such a tensor's strides to its new one). */
static int dense(const view *v) {
  int idx[MAXDIM];
  for (int i = 0; i < v->ndim; i++) { /* by stride, as packed_vector orders them */
    int j = i;
    for (; j > 0 && v->strides[idx[j - 1]] > v->strides[i]; j--) idx[j] = idx[j - 1];
    idx[j] = i;
  }
  int64_t stride = v->esize;
  for (int k = 0; k < v->ndim; k++) {
    int i = idx[k];
    if (v->shape[i] != 1 && v->strides[i] != stride) return 0;
    stride *= v->shape[i];
  }
  return 1;
}

/* The number of elements of a view whose elements are next to each other in memory. */
static int packed_vector(const view *v, const char *what, size_t *n) {
  if (!dense(v)) {
    PyObject *t = PyTuple_New(v->ndim);
    for (int d = 0; t && d < v->ndim; d++)
      PyTuple_SetItem(t, d, PyLong_FromLongLong(v->strides[d]));
    if (t) PyErr_Format(PyExc_ValueError, "%s: not contiguous (strides %R bytes)", what, t);
    Py_XDECREF(t);
    return -1;
  }
  int64_t count = 1;
  for (int i = 0; i < v->ndim; i++) count *= v->shape[i];
  *n = (size_t)count;
  return 0;
}

/* TypeError where the arrays of one call hold different element types. */
static int same_type(const view *const *vs, int n) {
  int differ = 0;
  for (int i = 1; i < n; i++) differ |= vs[i]->dtype != vs[0]->dtype;
  if (!differ) return 0;
  char text[128] = "";
  for (int i = 0; i < n; i++) {
    strcat(text, i ? ", " : "");
    strcat(text, NAMES[vs[i]->dtype]);
  }
  PyErr_Format(PyExc_TypeError, "the arrays hold %s: one type is needed", text);
  return -1;
}

/* ValueError where the arrays of one call are on different devices. */
static int same_device(const view *const *vs, const char *const *names, int n) {
  for (int i = 1; i < n; i++)
    if (vs[i]->device != vs[0]->device) {
      PyErr_Format(PyExc_ValueError, "%s is on device %d, %s on device %d: one device is needed",
                   names[i], vs[i]->device, names[0], vs[0]->device);
      return -1;
    }
  return 0;
}

/* ValueError where the packed arrays of an elementwise call lay their elements out in different
 * orders (a transposed one beside a row-major one): their memory is added element by element. */
static int same_order(const view *const *vs, const char *const *names, int n) {
  for (int i = 1; i < n; i++)
    for (int d = 0; d < vs[0]->ndim; d++)
      if (vs[0]->shape[d] > 1 && vs[i]->strides[d] != vs[0]->strides[d]) {
        PyErr_Format(PyExc_ValueError, "%s and %s lay their elements out in different orders "
                     "(strides differ): add takes arrays of one layout", names[0], names[i]);
        return -1;
      }
  return 0;
}

/* ---- Streams and contexts ------------------------------------------------------------------- */

static int explicit_stream(PyObject *stream, uint64_t *out) {
  PyObject *names[] = {s_cuda_stream, s_ptr, s_handle};
  for (int i = 0; i < 3; i++) {
    PyObject *a = PyObject_GetAttr(stream, names[i]);
    if (a == NULL) {
      PyErr_Clear();
      continue;
    }
    PyObject *n = PyNumber_Long(a);
    Py_DECREF(a);
    if (n == NULL) return -1;
    *out = PyLong_AsUnsignedLongLong(n);
    Py_DECREF(n);
    return PyErr_Occurred() ? -1 : 0;
  }
  if (PyBool_Check(stream) || !PyLong_Check(stream)) {
    PyObject *tn = PyObject_GetAttrString((PyObject *)Py_TYPE(stream), "__name__");
    PyErr_Format(PyExc_TypeError, "stream: an int (a cudaStream_t), a torch or CuPy stream, not "
                 "%S", tn ? tn : Py_None);
    Py_XDECREF(tn);
    return -1;
  }
  *out = PyLong_AsUnsignedLongLong(stream);
  if (PyErr_Occurred()) {
    PyErr_Clear();
    PyErr_Format(PyExc_ValueError, "stream: a cudaStream_t is 0 to 2^64 - 1, not %R", stream);
    return -1;
  }
  return 0;
}

static int torch_stream(int device, uint64_t *out) {
  PyObject *r;
  if (T.raw_stream != NULL) {
    r = PyObject_CallFunction(T.raw_stream, "i", device);
  } else {
    PyObject *s = PyObject_CallFunction(T.current_stream, "i", device);
    r = s ? PyObject_GetAttr(s, s_cuda_stream) : NULL;
    Py_XDECREF(s);
  }
  if (r == NULL) return -1;
  *out = PyLong_AsUnsignedLongLong(r);
  Py_DECREF(r);
  return PyErr_Occurred() ? -1 : 0;
}

/* CuPy's current stream where obj is CuPy's, else the legacy default stream (0). */
static int other_stream(PyObject *obj, uint64_t *out) {
  *out = 0;
  PyObject *mod = PyObject_GetAttr((PyObject *)Py_TYPE(obj), s_module);
  if (mod == NULL) {
    PyErr_Clear();
    return 0;
  }
  int cupy = PyUnicode_Check(mod) && PyUnicode_Tailmatch(mod, s_cupy, 0, 4, -1) == 1;
  Py_DECREF(mod);
  if (!cupy) return 0;
  static PyObject *current; /* cupy.cuda.get_current_stream, once found */
  if (current == NULL) {
    PyObject *m = PyImport_ImportModule("cupy.cuda");
    current = m ? PyObject_GetAttrString(m, "get_current_stream") : NULL;
    Py_XDECREF(m);
    if (current == NULL) return -1;
  }
  PyObject *s = PyObject_CallObject(current, NULL);
  PyObject *p = s ? PyObject_GetAttr(s, s_ptr) : NULL;
  Py_XDECREF(s);
  if (p == NULL) return -1;
  *out = PyLong_AsUnsignedLongLong(p);
  Py_DECREF(p);
  return PyErr_Occurred() ? -1 : 0;
}

/* Reads a call's first array and its stream: `stream` where given, else the current stream of
 * the array's library (PyTorch's, CuPy's), else the legacy default stream. A torch.Tensor is
 * read first (its device names its current stream); any other array after (DLPack asks for the
 * stream the data must be ready on). */
static int first_array(PyObject *obj, const char *what, PyObject *stream, int writable, view *v,
                       uint64_t *s) {
  if (lib_ready() < 0) return -1; /* the types are the library's: torch's are matched to them */
  if (is_torch(obj)) {
    memset(v, 0, sizeof *v);
    if (read_torch(obj, what, v) < 0) return -1;
    return stream != Py_None ? explicit_stream(stream, s) : torch_stream(v->device, s);
  }
  if (stream != Py_None ? explicit_stream(stream, s) : other_stream(obj, s)) return -1;
  return read_protocols(obj, what, *s, writable, v);
}

/* The context to call: h where given (a pmtune.Context's), else the device's own, opened on
 * first use. */
static pm_ctx *context(PyObject *h, int device) {
  if (h != Py_None) {
    pm_ctx *c = PyLong_AsVoidPtr(h);
    return PyErr_Occurred() ? NULL : c;
  }
  if (device >= 0 && device < MAXDEV && device_ctx[device] != NULL) return device_ctx[device];
  PyObject *r = PyObject_CallFunction(context_of_device, "i", device);
  if (r == NULL) return NULL;
  pm_ctx *c = PyLong_AsVoidPtr(r);
  Py_DECREF(r);
  if (c != NULL && device >= 0 && device < MAXDEV) device_ctx[device] = c;
  return c;
}

static PyObject *raise_status(pm_ctx *c, int rc) {
  const char *msg = c != NULL ? L.pm_errmsg(c) : NULL;
  PyObject *text = text_or_none(msg != NULL ? msg : L.pm_strerror(rc));
  PyObject *e = text != NULL ? PyObject_CallFunction(Error, "iN", rc, text) : NULL;
  if (e != NULL) {
    PyErr_SetObject(Error, e);
    Py_DECREF(e);
  }
  return NULL;
}

/* ---- Outputs --------------------------------------------------------------------------------- */

/* The keywords of torch.empty_strided for a tensor of type dtype on device: made once a pair
 * for the first MAXDEV devices (a new dict each call for the rest). A new reference. */
static PyObject *torch_kw(int dtype, int device) {
  static PyObject *kw[MAXTYPES][MAXDEV];
  int keep = device >= 0 && device < MAXDEV;
  if (keep && kw[dtype][device] != NULL) return Py_NewRef(kw[dtype][device]);
  PyObject *d = Py_BuildValue("{sOsi}", "dtype", T.dtypes[dtype], "device", device);
  if (d != NULL && keep) kw[dtype][device] = Py_NewRef(d);
  return d;
}

/* A tuple of n ints. */
static PyObject *int_tuple(const int64_t *v, int n) {
  PyObject *t = PyTuple_New(n);
  for (int i = 0; t != NULL && i < n; i++) {
    PyObject *e = PyLong_FromLongLong(v[i]);
    if (e == NULL) Py_CLEAR(t);
    else PyTuple_SetItem(t, i, e);
  }
  return t;
}

/* A new array of the shape (n dims) and element type dtype on like's device, in order
 * (row-major, or column-major for a 2-D one), from like's library, into out (read as the calls
 * read their arrays). For a torch.Tensor, torch.empty_strided with like's strides where like is
 * dense and of this shape and type (as torch.empty_like lays it out), else packed in that order:
 * its strides are known here, and only its pointer is asked. Else _arrays.empty_like (CuPy;
 * ValueError "pass out=" for the rest). */
static PyObject *new_array(PyObject *like, const view *lv, const int64_t *shape, int n,
                           int col_major, const char *what, int dtype, view *out) {
  if (!lv->torch) {
    PyObject *dims = int_tuple(shape, n);
    PyObject *o = dims ? PyObject_CallFunction(empty_like, "OOssi", like, dims,
                                               col_major ? "F" : "C", what, dtype) : NULL;
    Py_XDECREF(dims);
    if (o != NULL && read_view(o, what, 0, 1, out) < 0) Py_CLEAR(o);
    return o;
  }
  memset(out, 0, sizeof *out);
  out->torch = 1, out->dtype = dtype, out->esize = SIZES[dtype], out->device = lv->device;
  out->ndim = n;
  if (n > 0) memcpy(out->shape, shape, (size_t)n * sizeof *shape);
  int same = dtype == lv->dtype && n == lv->ndim;
  for (int i = 0; same && i < n; i++) same = shape[i] == lv->shape[i];
  int64_t st[MAXDIM], acc = 1;
  if (same && dense(lv)) {
    for (int i = 0; i < n; i++) st[i] = lv->strides[i] / lv->esize;
  } else {
    for (int k = 0; k < n; k++) { /* innermost first */
      int i = col_major ? k : n - 1 - k;
      st[i] = acc;
      acc *= shape[i] > 1 ? shape[i] : 1;
    }
  }
  for (int i = 0; i < n; i++) out->strides[i] = st[i] * out->esize;
  PyObject *dims = int_tuple(shape, n), *strides = dims ? int_tuple(st, n) : NULL;
  PyObject *args = strides ? PyTuple_Pack(2, dims, strides) : NULL;
  PyObject *kw = args ? torch_kw(dtype, lv->device) : NULL;
  PyObject *o = kw ? PyObject_Call(T.empty_strided, args, kw) : NULL;
  Py_XDECREF(dims), Py_XDECREF(strides), Py_XDECREF(args), Py_XDECREF(kw);
  if (o == NULL) return NULL;
  PyObject *r = call0(o, s_data_ptr);
  out->ptr = r ? (uintptr_t)PyLong_AsUnsignedLongLong(r) : 0;
  Py_XDECREF(r);
  if (r == NULL || PyErr_Occurred()) Py_CLEAR(o);
  return o;
}

/* Reads a vectorcall's arguments into vals (nreq required, the rest keeping the defaults vals
 * holds), by position and by the names in names; TypeError as Python words it. */
static int parse(const char *fn, const char *const *names, int nreq, int nmax,
                 PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject **vals) {
  if (nargs > nmax) {
    PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%zd given)", fn, nmax, nargs);
    return -1;
  }
  for (Py_ssize_t i = 0; i < nargs; i++) vals[i] = args[i];
  Py_ssize_t nkw = kwnames != NULL ? PyTuple_Size(kwnames) : 0;
  int given = (int)nargs;
  for (Py_ssize_t k = 0; k < nkw; k++) {
    PyObject *key = PyTuple_GetItem(kwnames, k);
    int j = 0;
    while (j < nmax && PyUnicode_CompareWithASCIIString(key, names[j]) != 0) j++;
    if (j == nmax) {
      PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", fn, key);
      return -1;
    }
    if (j < nargs) {
      PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fn, names[j]);
      return -1;
    }
    vals[j] = args[nargs + k];
    given += j < nreq;
  }
  if (given < nreq) {
    PyErr_Format(PyExc_TypeError, "%s() missing required arguments: %d given, %d needed", fn,
                 given, nreq);
    return -1;
  }
  return 0;
}

/* ---- The operations ------------------------------------------------------------------------ */

#define GIL_RELEASED(stmt)                                                                        \
  do {                                                                                            \
    PyThreadState *ts_ = PyEval_SaveThread();                                                     \
    stmt;                                                                                         \
    PyEval_RestoreThread(ts_);                                                                    \
  } while (0)

/* The call's output: out where given (read as every array is, writable), else a new array made
 * like `like` (new_array); a new reference in *ret either way (NULL where none was made). */
static int output(PyObject *out, PyObject *like, const view *lv, const int64_t *shape, int n,
                  int col_major, const char *what, int dtype, uint64_t s, PyObject **ret,
                  view *v) {
  if (out == Py_None)
    return (*ret = new_array(like, lv, shape, n, col_major, what, dtype, v)) == NULL ? -1 : 0;
  Py_INCREF(out);
  *ret = out;
  return read_view(out, "out", s, 1, v);
}

/* -1 with pmtune.Error set where the library's call returned rc != 0. */
static int called(pm_ctx *c, int rc) {
  if (rc == 0) return 0;
  raise_status(c, rc);
  return -1;
}

/* matadd(ctx, a, b, out, stream) */
static PyObject *do_matadd(PyObject *h, PyObject *a, PyObject *b, PyObject *out, PyObject *stream) {
  PyObject *ret = NULL;
  view va = {0}, vb = {0}, vc = {0};
  uint64_t s;
  int oa, ob, oc;
  size_t rows, cols, pa, pb, pc;
  if (first_array(a, "a", stream, 0, &va, &s) < 0) goto done;
  if (layout(&va, "a", &oa, &rows, &cols, &pa) < 0) goto done;
  if (read_view(b, "b", s, 0, &vb) < 0 || need_same_shape(&va, "a", &vb, "b") < 0 ||
      layout(&vb, "b", &ob, &rows, &cols, &pb) < 0)
    goto done;
  if (output(out, a, &va, va.shape, 2, oa, "matadd", va.dtype, s, &ret, &vc) < 0 ||
      need_same_shape(&vc, "out", &va, "a") < 0 ||
      layout(&vc, "out", &oc, &rows, &cols, &pc) < 0 ||
      same_type((const view *const[]){&va, &vb, &vc}, 3) < 0 ||
      same_device((const view *const[]){&va, &vb, &vc}, (const char *const[]){"a", "b", "out"}, 3))
    goto fail;
  if (!(oa == ob && ob == oc)) {
    PyErr_Format(PyExc_ValueError, "a, b and out are stored in different orders (row-major: %s, "
                 "%s, %s): pmtune's matadd takes one", oa ? "False" : "True",
                 ob ? "False" : "True", oc ? "False" : "True");
    goto fail;
  }
  pm_ctx *c = context(h, va.device);
  if (c == NULL) goto fail;
  int rc;
  GIL_RELEASED(rc = L.pm_matadd_t(c, va.dtype, rows, cols, oa, (void *)vc.ptr, pc,
                                  (void *)va.ptr, pa, (void *)vb.ptr, pb, (void *)(uintptr_t)s));
  if (called(c, rc) < 0) goto fail;
  goto done;
fail:
  Py_CLEAR(ret);
done:
  release(&va), release(&vb), release(&vc);
  return ret;
}

/* matadd(a, b, out=None, stream=None, ctx=None): on ctx (a pmtune.Context's handle), else on the
 * array's device's own context */
static PyObject *ext_matadd_kw(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  (void)self;
  static const char *const names[] = {"a", "b", "out", "stream", "ctx"};
  PyObject *v[] = {NULL, NULL, Py_None, Py_None, Py_None};
  if (parse("matadd", names, 2, 5, args, nargs, kwnames, v) < 0) return NULL;
  return do_matadd(v[4], v[0], v[1], v[2], v[3]);
}

/* add(ctx, a, b, out, stream) */
static PyObject *do_add(PyObject *h, PyObject *a, PyObject *b, PyObject *out, PyObject *stream) {
  PyObject *ret = NULL;
  view va = {0}, vb = {0}, vc = {0};
  uint64_t s;
  size_t n, m;
  if (first_array(a, "a", stream, 0, &va, &s) < 0 || read_view(b, "b", s, 0, &vb) < 0 ||
      need_same_shape(&vb, "b", &va, "a") < 0 || packed_vector(&va, "a", &n) < 0 ||
      packed_vector(&vb, "b", &m) < 0)
    goto done;
  if (output(out, a, &va, va.shape, va.ndim, 0, "add", va.dtype, s, &ret, &vc) < 0 ||
      need_same_shape(&vc, "out", &va, "a") < 0 || packed_vector(&vc, "out", &m) < 0 ||
      same_type((const view *const[]){&va, &vb, &vc}, 3) < 0 ||
      same_order((const view *const[]){&va, &vb, &vc}, (const char *const[]){"a", "b", "out"}, 3) ||
      same_device((const view *const[]){&va, &vb, &vc}, (const char *const[]){"a", "b", "out"}, 3))
    goto fail;
  pm_ctx *c = context(h, va.device);
  if (c == NULL) goto fail;
  int rc;
  GIL_RELEASED(rc = L.pm_add_t(c, va.dtype, n, (void *)vc.ptr, (void *)va.ptr, (void *)vb.ptr,
                               (void *)(uintptr_t)s));
  if (called(c, rc) < 0) goto fail;
  goto done;
fail:
  Py_CLEAR(ret);
done:
  release(&va), release(&vb), release(&vc);
  return ret;
}

/* add(a, b, out=None, stream=None, ctx=None): on ctx (a pmtune.Context's handle), else on the
 * array's device's own context */
static PyObject *ext_add_kw(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  (void)self;
  static const char *const names[] = {"a", "b", "out", "stream", "ctx"};
  PyObject *v[] = {NULL, NULL, Py_None, Py_None, Py_None};
  if (parse("add", names, 2, 5, args, nargs, kwnames, v) < 0) return NULL;
  return do_add(v[4], v[0], v[1], v[2], v[3]);
}

/* reduce_sum(ctx, x, out, stream, dtype) */
static PyObject *do_reduce_sum(PyObject *h, PyObject *x, PyObject *out, PyObject *stream,
                               PyObject *dtype) {
  PyObject *ret = NULL;
  view vx = {0}, vo = {0};
  uint64_t s;
  size_t n;
  if (first_array(x, "x", stream, 0, &vx, &s) < 0 || packed_vector(&vx, "x", &n) < 0) goto done;
  int sum_t = vx.dtype;
  if (dtype != Py_None) {
    int is_own = PyUnicode_Check(dtype) && PyUnicode_CompareWithASCIIString(dtype,
                                                                            NAMES[vx.dtype]) == 0;
    int is_f32 = PyUnicode_Check(dtype) &&
                 PyUnicode_CompareWithASCIIString(dtype, NAMES[F32]) == 0;
    if (!is_own && !is_f32) { /* the names sorted, as the message always was */
      const char *x1 = NAMES[vx.dtype], *x2 = NAMES[F32];
      if (strcmp(x1, x2) > 0) x1 = NAMES[F32], x2 = NAMES[vx.dtype];
      if (vx.dtype == F32)
        PyErr_Format(PyExc_TypeError, "dtype: 'float32', not %R", dtype);
      else
        PyErr_Format(PyExc_TypeError, "dtype: '%s' or '%s', not %R", x1, x2, dtype);
      goto done;
    }
    if (is_f32) sum_t = F32;
  }
  if (output(out, x, &vx, NULL, 0, 0, "reduce_sum", sum_t, s, &ret, &vo) < 0) goto fail;
  if (vo.dtype != vx.dtype && vo.dtype != F32) {
    if (vx.dtype == F32)
      PyErr_Format(PyExc_TypeError, "out: reduce_sum takes float32 arrays, not %s",
                   NAMES[vo.dtype]);
    else
      PyErr_Format(PyExc_TypeError, "out: reduce_sum takes float32 or %s arrays, not %s",
                   NAMES[vx.dtype], NAMES[vo.dtype]);
    goto fail;
  }
  if (same_device((const view *const[]){&vx, &vo}, (const char *const[]){"x", "out"}, 2) < 0)
    goto fail;
  int64_t count = 1;
  for (int i = 0; i < vo.ndim; i++) count *= vo.shape[i];
  if (count != 1) {
    PyObject *sr = shape_repr(&vo);
    if (sr) PyErr_Format(PyExc_ValueError, "out: one element is needed, not %U", sr);
    Py_XDECREF(sr);
    goto fail;
  }
  pm_ctx *c = context(h, vx.device);
  if (c == NULL) goto fail;
  int rc;
  GIL_RELEASED(rc = L.pm_reduce_sum_t(c, vx.dtype, n, (void *)vx.ptr, vo.dtype, (void *)vo.ptr,
                                      (void *)(uintptr_t)s));
  if (called(c, rc) < 0) goto fail;
  goto done;
fail:
  Py_CLEAR(ret);
done:
  release(&vx), release(&vo);
  return ret;
}

/* reduce_sum(x, out=None, stream=None, dtype=None, ctx=None): on ctx (a pmtune.Context's
 * handle), else on the array's device's own context */
static PyObject *ext_reduce_sum_kw(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  (void)self;
  static const char *const names[] = {"x", "out", "stream", "dtype", "ctx"};
  PyObject *v[] = {NULL, Py_None, Py_None, Py_None, Py_None};
  if (parse("reduce_sum", names, 1, 5, args, nargs, kwnames, v) < 0) return NULL;
  return do_reduce_sum(v[4], v[0], v[1], v[2], v[3]);
}

/* Appends w's numbers (a NumPy array, nested sequences, flat) to *buf. */
static int flat_numbers(PyObject *w, double **buf, size_t *n, size_t *cap, int depth) {
  if (depth > 16) {
    PyErr_SetString(PyExc_ValueError, "weights: nested too deep");
    return -1;
  }
  if (PyList_Check(w) || PyTuple_Check(w)) {
    Py_ssize_t len = PySequence_Size(w);
    for (Py_ssize_t i = 0; i < len; i++) {
      PyObject *e = PySequence_GetItem(w, i);
      int rc = e == NULL ? -1 : flat_numbers(e, buf, n, cap, depth + 1);
      Py_XDECREF(e);
      if (rc < 0) return -1;
    }
    return 0;
  }
  double d = PyFloat_AsDouble(w);
  if (d == -1.0 && PyErr_Occurred()) return -1;
  if (*n == *cap) {
    size_t c2 = *cap ? 2 * *cap : 64;
    double *b = PyMem_Realloc(*buf, c2 * sizeof **buf);
    if (b == NULL) {
      PyErr_NoMemory();
      return -1;
    }
    *buf = b, *cap = c2;
  }
  (*buf)[(*n)++] = d;
  return 0;
}

/* filter(ctx, x, weights, border, out, stream) */
static PyObject *do_filter(PyObject *h, PyObject *x, PyObject *weights, PyObject *border,
                           PyObject *out, PyObject *stream) {
  PyObject *ret = NULL;
  int zero = PyUnicode_Check(border) && PyUnicode_CompareWithASCIIString(border, "zero") == 0;
  if (!zero && !(PyUnicode_Check(border) && PyUnicode_CompareWithASCIIString(border,
                                                                              "clamp") == 0))
    return PyErr_Format(PyExc_ValueError, "border: 'clamp' or 'zero', not %R", border);
  if (PyObject_HasAttr(weights, s_cai) ||
      (PyObject_HasAttr(weights, s_dlpack_device) && !PyObject_HasAttr(weights, s_array)))
    return PyErr_Format(PyExc_TypeError, "weights: a host sequence or NumPy array (pmtune copies "
                        "it at the call)");
  double *w = NULL;
  size_t nw = 0, cap = 0;
  PyObject *list = PyObject_HasAttr(weights, s_tolist) ? call0(weights, s_tolist) : weights;
  if (list == NULL) return NULL;
  if (list != weights) {
    int rc = flat_numbers(list, &w, &nw, &cap, 0);
    Py_DECREF(list);
    if (rc < 0) goto free_w;
  } else if (flat_numbers(weights, &w, &nw, &cap, 0) < 0) {
    goto free_w;
  }
  size_t side = 0;
  while ((side + 1) * (side + 1) <= nw) side++;
  if (side * side != nw || side % 2 == 0) {
    PyErr_Format(PyExc_ValueError, "weights: (2 radius + 1)^2 values are needed, not %zu", nw);
    goto free_w;
  }
  view vx = {0}, vo = {0};
  uint64_t s;
  int ox, oo;
  size_t rows, cols, px, po;
  if (first_array(x, "x", stream, 0, &vx, &s) < 0 || layout(&vx, "x", &ox, &rows, &cols, &px) < 0)
    goto done;
  if (ox != 0) {
    PyErr_SetString(PyExc_ValueError, "x: filter takes a row-major image (its rows' floats next "
                    "to each other)");
    goto done;
  }
  if (output(out, x, &vx, vx.shape, 2, 0, "filter", vx.dtype, s, &ret, &vo) < 0 ||
      same_type((const view *const[]){&vx, &vo}, 2) < 0 ||
      same_device((const view *const[]){&vx, &vo}, (const char *const[]){"x", "out"}, 2) < 0 ||
      need_same_shape(&vo, "out", &vx, "x") < 0 || layout(&vo, "out", &oo, &rows, &cols, &po) < 0)
    goto fail;
  if (oo != 0) {
    PyErr_SetString(PyExc_ValueError, "out: filter writes a row-major image");
    goto fail;
  }
  if (vx.dtype != F64) /* floats, in place: float i lies below double i, not yet read */
    for (size_t i = 0; i < nw; i++) ((float *)w)[i] = (float)w[i];
  pm_ctx *c = context(h, vx.device);
  if (c == NULL) goto fail;
  int rc;
  GIL_RELEASED(rc = L.pm_filter_t(c, vx.dtype, rows, cols, (void *)vo.ptr, po, (void *)vx.ptr, px,
                                  w, (int)(side / 2), zero ? PM_BORDER_ZERO : PM_BORDER_CLAMP,
                                  (void *)(uintptr_t)s));
  if (called(c, rc) < 0) goto fail;
  goto done;
fail:
  Py_CLEAR(ret);
done:
  release(&vx), release(&vo);
free_w:
  PyMem_Free(w);
  return ret;
}

/* filter(x, weights, border='clamp', out=None, stream=None, ctx=None): on ctx (a pmtune.Context's
 * handle), else on the array's device's own context */
static PyObject *ext_filter_kw(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  (void)self;
  static const char *const names[] = {"x", "weights", "border", "out", "stream", "ctx"};
  PyObject *v[] = {NULL, NULL, s_clamp, Py_None, Py_None, Py_None};
  if (parse("filter", names, 2, 6, args, nargs, kwnames, v) < 0) return NULL;
  return do_filter(v[5], v[0], v[1], v[2], v[3], v[4]);
}

/* kernel(spec, ctx, k, dims, buffers, scalars, stream): a kernel of one's own. spec is the
 * tuple Kernel made from its description: (name, ndims, buffer names, buffer types (-1: any),
 * scalar names, scalar kinds (0 i32, 1 i64, 2 f32, 3 f64, -1 none pmtune knows), the handles
 * by device (a dict: device -> (ctx, kernel)), the function opening one). ctx and k are the
 * handles where the Kernel has a context of its own, else None. */
static PyObject *ext_kernel(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *spec, *h, *kh, *dims, *buffers, *scalars, *stream;
  if (!PyArg_UnpackTuple(args, "kernel", 7, 7, &spec, &h, &kh, &dims, &buffers, &scalars,
                         &stream))
    return NULL;
  PyObject *name, *bnames, *btypes, *snames, *skinds, *handles, *opener;
  int ndims;
  if (!PyArg_ParseTuple(spec, "OiOOOOOO", &name, &ndims, &bnames, &btypes, &snames, &skinds,
                        &handles, &opener))
    return NULL;
  Py_ssize_t nd = PySequence_Size(dims), nb = PySequence_Size(buffers);
  Py_ssize_t want_b = PyTuple_Size(bnames), want_s = PyTuple_Size(snames);
  if (nd < 0 || nb < 0) return NULL;
  if (nd != ndims)
    return PyErr_Format(PyExc_ValueError, "%U: %zd dims given, its description has %d", name, nd,
                        ndims);
  if (nd < 1 || nd > 3)
    return PyErr_Format(PyExc_ValueError, "%U: a description has 1 to 3 dims, not %zd", name, nd);
  if (nb == 0)
    return PyErr_Format(PyExc_ValueError, "%U: no buffers given (it takes %zd)", name, want_b);
  if (nb != want_b) {
    PyObject *sep = PyUnicode_FromString(", "), *j = sep ? PyUnicode_Join(sep, bnames) : NULL;
    if (j) PyErr_Format(PyExc_ValueError, "%U: %zd buffers given, its description has %zd (%U)",
                        name, nb, want_b, j);
    Py_XDECREF(sep);
    Py_XDECREF(j);
    return NULL;
  }
  size_t cdims[3];
  for (Py_ssize_t i = 0; i < nd; i++) {
    PyObject *d = PySequence_GetItem(dims, i);
    if (d == NULL) return NULL;
    long long v = PyLong_Check(d) && !PyBool_Check(d) ? PyLong_AsLongLong(d) : 0;
    if (PyErr_Occurred()) PyErr_Clear(), v = 0;
    if (v < 1 || v > INT32_MAX) {
      PyErr_Format(PyExc_ValueError, "%U: dims[%zd] = %R: an int from 1 to 2^31 - 1", name, i, d);
      Py_DECREF(d);
      return NULL;
    }
    Py_DECREF(d);
    cdims[i] = (size_t)v;
  }
  /* the scalars' values: checked, and set aside for the call */
  union {
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
  } vals[64];
  const void *sptr[64];
  Py_ssize_t ns = 0;
  if (scalars != Py_None) {
    if ((ns = PySequence_Size(scalars)) < 0) return NULL;
    if (ns != want_s) {
      PyObject *sep = PyUnicode_FromString(", "), *j = sep ? PyUnicode_Join(sep, snames) : NULL;
      if (j) PyErr_Format(PyExc_ValueError, "%U: %zd scalars given, its description has %zd (%U)",
                          name, ns, want_s, j);
      Py_XDECREF(sep);
      Py_XDECREF(j);
      return NULL;
    }
    if (ns > 64) return PyErr_Format(PyExc_ValueError, "%U: more than 64 scalars", name);
    for (Py_ssize_t i = 0; i < ns; i++) {
      PyObject *x = PySequence_GetItem(scalars, i);
      if (x == NULL) return NULL;
      long kind = PyLong_AsLong(PyTuple_GetItem(skinds, i));
      PyObject *sn = PyTuple_GetItem(snames, i);
      sptr[i] = NULL;
      if (x == Py_None || kind < 0) {
        Py_DECREF(x);
        continue;
      }
      if (PyBool_Check(x) || !(PyLong_Check(x) || PyFloat_Check(x))) {
        PyErr_Format(PyExc_TypeError, "%U: scalar %U: a number, not %R", name, sn, x);
        Py_DECREF(x);
        return NULL;
      }
      if (kind == 0 || kind == 1) {
        int overflow = 0;
        long long v = PyLong_Check(x) ? PyLong_AsLongLongAndOverflow(x, &overflow) : 0;
        if (!PyLong_Check(x) || overflow || (kind == 0 && (v < INT32_MIN || v > INT32_MAX))) {
          PyErr_Format(PyExc_ValueError, "%U: scalar %U: an int of %d bits, not %R", name, sn,
                       kind == 0 ? 32 : 64, x);
          Py_DECREF(x);
          return NULL;
        }
        if (kind == 0) vals[i].i32 = (int32_t)v;
        else vals[i].i64 = v;
      } else {
        double d = PyFloat_AsDouble(x);
        if (d == -1.0 && PyErr_Occurred()) {
          Py_DECREF(x);
          return NULL;
        }
        if (kind == 2) vals[i].f32 = (float)d;
        else vals[i].f64 = d;
      }
      Py_DECREF(x);
      sptr[i] = &vals[i];
    }
  }
  view vs[16] = {{0}};
  void *ptrs[16];
  if (nb > 16) return PyErr_Format(PyExc_ValueError, "%U: more than 16 buffers", name);
  Py_ssize_t read = 0;
  PyObject *ret = NULL;
  uint64_t s = 0;
  for (; read < nb; read++) {
    PyObject *obj = PySequence_GetItem(buffers, read);
    if (obj == NULL) goto done;
    PyObject *bn = PyTuple_GetItem(bnames, read);
    PyObject *bytes = PyUnicode_AsUTF8String(bn);
    const char *what = bytes ? PyBytes_AsString(bytes) : "buffer";
    int rc = read == 0 ? first_array(obj, what, stream, 1, &vs[0], &s)
                       : read_view(obj, what, s, 1, &vs[read]);
    size_t n;
    Py_DECREF(obj);
    if (rc == 0) rc = packed_vector(&vs[read], what, &n);
    Py_XDECREF(bytes);
    if (rc < 0) {
      read++; /* released below with the others */
      goto done;
    }
    long want = PyLong_AsLong(PyTuple_GetItem(btypes, read));
    if (want >= 0 && vs[read].dtype != want) {
      PyErr_Format(PyExc_TypeError, "%U: %U is %s, its description says %s", name, bn,
                   NAMES[vs[read].dtype], NAMES[want]);
      read++;
      goto done;
    }
    if (vs[read].device != vs[0].device) {
      PyErr_Format(PyExc_ValueError, "%U: %U is on device %d, the first buffer on device %d: one "
                   "device is needed", name, bn, vs[read].device, vs[0].device);
      read++;
      goto done;
    }
    ptrs[read] = (void *)vs[read].ptr;
  }
  pm_ctx *c;
  pm_kernel *k;
  if (h != Py_None) {
    c = PyLong_AsVoidPtr(h), k = PyLong_AsVoidPtr(kh);
  } else {
    PyObject *key = PyLong_FromLong(vs[0].device), *pair = key ? PyDict_GetItem(handles, key)
                                                                : NULL;
    if (pair == NULL && key != NULL) {
      pair = PyObject_CallFunctionObjArgs(opener, key, NULL);
      if (pair != NULL && PyDict_SetItem(handles, key, pair) < 0) Py_CLEAR(pair);
      Py_XDECREF(pair); /* the dict holds it */
    }
    Py_XDECREF(key);
    if (pair == NULL) goto done;
    c = PyLong_AsVoidPtr(PyTuple_GetItem(pair, 0)), k = PyLong_AsVoidPtr(PyTuple_GetItem(pair, 1));
  }
  if (PyErr_Occurred()) goto done;
  int rc;
  GIL_RELEASED(rc = L.pm_kernel_launch_with(k, cdims, ptrs,
                                            scalars != Py_None ? sptr : NULL, (size_t)ns,
                                            (void *)(uintptr_t)s));
  if (rc != 0) {
    raise_status(c, rc);
  } else {
    ret = Py_None;
    Py_INCREF(ret);
  }
done:
  for (Py_ssize_t i = 0; i < read; i++) release(&vs[i]);
  return ret;
}

/* ---- The library's other functions ----------------------------------------------------------- */

static PyObject *ext_open(PyObject *self, PyObject *args) {
  (void)self;
  pm_options o = {0};
  PyObject *path;
  if (!PyArg_ParseTuple(args, "iOiii", &o.device, &path, &o.autotune, &o.autotune_budget,
                        &o.record) || lib_ready() < 0)
    return NULL;
  if (path != Py_None && (o.db_path = PyBytes_AsString(path)) == NULL) return NULL;
  pm_ctx *c = NULL;
  int rc;
  GIL_RELEASED(rc = L.pm_open(&c, &o));
  if (rc == 0) return PyLong_FromVoidPtr(c);
  raise_status(c, rc);
  if (c != NULL) L.pm_close(c);
  return NULL;
}

static PyObject *ext_close(PyObject *self, PyObject *h) {
  (void)self;
  pm_ctx *c = PyLong_AsVoidPtr(h);
  if (PyErr_Occurred()) return NULL;
  for (int i = 0; i < MAXDEV; i++)
    if (device_ctx[i] == c) device_ctx[i] = NULL;
  if (c != NULL && L.handle != NULL) GIL_RELEASED(L.pm_close(c));
  Py_RETURN_NONE;
}

static PyObject *ext_reload(PyObject *self, PyObject *h) {
  (void)self;
  pm_ctx *c = PyLong_AsVoidPtr(h);
  if (PyErr_Occurred()) return NULL;
  int rc;
  GIL_RELEASED(rc = L.pm_reload(c));
  if (rc != 0) return raise_status(c, rc);
  Py_RETURN_NONE;
}

static PyObject *text_or_none(const char *s) {
  if (s == NULL) Py_RETURN_NONE;
  return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

static PyObject *ext_notice(PyObject *self, PyObject *h) {
  (void)self;
  pm_ctx *c = PyLong_AsVoidPtr(h);
  return PyErr_Occurred() ? NULL : text_or_none(L.pm_notice(c));
}

static PyObject *ext_version(PyObject *self, PyObject *unused) {
  (void)self, (void)unused;
  return lib_ready() < 0 ? NULL : text_or_none(L.pm_version());
}

static PyObject *ext_errname(PyObject *self, PyObject *rc) {
  (void)self;
  long v = PyLong_AsLong(rc);
  return PyErr_Occurred() || lib_ready() < 0 ? NULL : text_or_none(L.pm_errname((int)v));
}

static PyObject *ext_kernel_open(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *h, *path;
  if (!PyArg_ParseTuple(args, "OO&", &h, PyUnicode_FSConverter, &path)) return NULL;
  pm_ctx *c = PyLong_AsVoidPtr(h);
  pm_kernel *k = NULL;
  int rc = -1;
  if (!PyErr_Occurred()) GIL_RELEASED(rc = L.pm_kernel_open(c, PyBytes_AsString(path), &k));
  Py_DECREF(path);
  if (PyErr_Occurred()) return NULL;
  return rc == 0 ? PyLong_FromVoidPtr(k) : raise_status(c, rc);
}

/* ---- What the tests read: an array as the calls see it ------------------------------------- */

/* view(obj, what, writable) -> (dtype, shape, strides in bytes) */
static PyObject *ext_view(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *obj;
  const char *what;
  int writable = 0;
  if (!PyArg_ParseTuple(args, "Os|p", &obj, &what, &writable)) return NULL;
  view v;
  if (read_view(obj, what, 0, writable, &v) < 0) return NULL;
  PyObject *shape = PyTuple_New(v.ndim), *strides = PyTuple_New(v.ndim);
  for (int i = 0; shape && strides && i < v.ndim; i++) {
    PyTuple_SetItem(shape, i, PyLong_FromLongLong(v.shape[i]));
    PyTuple_SetItem(strides, i, PyLong_FromLongLong(v.strides[i]));
  }
  release(&v);
  PyObject *r = shape && strides ? Py_BuildValue("iOO", v.dtype, shape, strides) : NULL;
  Py_XDECREF(shape);
  Py_XDECREF(strides);
  return r;
}

/* layout(obj, what) -> (order, rows, cols, pitch) */
static PyObject *ext_layout(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *obj;
  const char *what;
  if (!PyArg_ParseTuple(args, "Os", &obj, &what)) return NULL;
  view v;
  int order;
  size_t rows, cols, pitch;
  if (read_view(obj, what, 0, 0, &v) < 0) return NULL;
  int rc = layout(&v, what, &order, &rows, &cols, &pitch);
  release(&v);
  return rc < 0 ? NULL : Py_BuildValue("innn", order, (Py_ssize_t)rows, (Py_ssize_t)cols,
                                       (Py_ssize_t)pitch);
}

/* packed(obj, what) -> the number of elements of a contiguous array */
static PyObject *ext_packed(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *obj;
  const char *what;
  if (!PyArg_ParseTuple(args, "Os", &obj, &what)) return NULL;
  view v;
  size_t n;
  if (read_view(obj, what, 0, 0, &v) < 0) return NULL;
  int rc = packed_vector(&v, what, &n);
  release(&v);
  return rc < 0 ? NULL : PyLong_FromSize_t(n);
}

static PyObject *ext_setup(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *e, *ctx, *load, *empty;
  if (!PyArg_ParseTuple(args, "OOOO", &e, &ctx, &load, &empty)) return NULL;
  Py_INCREF(e), Py_INCREF(ctx), Py_INCREF(load), Py_INCREF(empty);
  Py_XDECREF(Error), Py_XDECREF(context_of_device), Py_XDECREF(load_library),
      Py_XDECREF(empty_like);
  Error = e, context_of_device = ctx, load_library = load, empty_like = empty;
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"load", ext_load, METH_O, "load(path): opens libpmtune at path (OSError where it cannot)"},
    {"setup", ext_setup, METH_VARARGS, "setup(Error, context_of_device, load_library, empty_like)"},
    {"version", ext_version, METH_NOARGS, "the library's version"},
    {"dtypes", ext_dtypes, METH_NOARGS, "((name, array name, bytes), ...): the element types"},
    {"errname", ext_errname, METH_O, "errname(status): PM_EINVAL ..."},
    {"open", ext_open, METH_VARARGS, "open(device, db, autotune, budget, record) -> handle"},
    {"close", ext_close, METH_O, "close(handle)"},
    {"reload", ext_reload, METH_O, "reload(handle)"},
    {"notice", ext_notice, METH_O, "notice(handle) -> str or None"},
    {"kernel_open", ext_kernel_open, METH_VARARGS, "kernel_open(handle, path) -> kernel handle"},
    {"matadd", (PyCFunction)(void (*)(void))ext_matadd_kw, METH_FASTCALL | METH_KEYWORDS,
     "matadd(a, b, out=None, stream=None)\n--\n\n"
     "out = a + b over 2-D arrays of one type (float32, float16, bfloat16, float64), each\n"
     "row-major or column-major (the same order for all three) with any pitch; out is made\n"
     "(PyTorch, CuPy) where not given. Returns out. On the array's device's own context;\n"
     "stream: a cudaStream_t as an int, a torch or CuPy stream, or None for the array library's\n"
     "current stream."},
    {"add", (PyCFunction)(void (*)(void))ext_add_kw, METH_FASTCALL | METH_KEYWORDS,
     "add(a, b, out=None, stream=None)\n--\n\n"
     "out = a + b over contiguous arrays of one type (float32, float16, bfloat16, float64), any\n"
     "shape and one layout (one flat vector). Returns out. On the array's device's own context."},
    {"reduce_sum", (PyCFunction)(void (*)(void))ext_reduce_sum_kw, METH_FASTCALL | METH_KEYWORDS,
     "reduce_sum(x, out=None, stream=None, dtype=None)\n--\n\n"
     "The sum of a contiguous array's elements (float16 and bfloat16 summed in float or double,\n"
     "float64 in double), into out: one element on the GPU of x's type or float32 (made, 0-d,\n"
     "where not given: of x's type, or of dtype, \"float32\" for the float sum of a 16-bit\n"
     "array). Returns out. On the array's device's own context."},
    {"filter", (PyCFunction)(void (*)(void))ext_filter_kw, METH_FASTCALL | METH_KEYWORDS,
     "filter(x, weights, border='clamp', out=None, stream=None)\n--\n\n"
     "out = x correlated with the (2r + 1) x (2r + 1) weights (a host sequence, nested or flat,\n"
     "or a NumPy array; r 1 to 3), over a row-major 2-D image of any of the four types with any\n"
     "pitch (the weights taken as float32, float64 for a float64 image; the sums in that type,\n"
     "rounded once to the image's); border \"clamp\" (the edge repeated) or \"zero\". Returns\n"
     "out. On the array's device's own context."},
    {"kernel", ext_kernel, METH_VARARGS, "kernel(spec, ctx, k, dims, buffers, scalars, stream)"},
    {"view", ext_view, METH_VARARGS, "view(obj, what, writable=False) -> (dtype, shape, strides)"},
    {"layout", ext_layout, METH_VARARGS, "layout(obj, what) -> (order, rows, cols, pitch)"},
    {"packed", ext_packed, METH_VARARGS, "packed(obj, what) -> elements of a contiguous array"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_ext", "pmtune's per-call work, in C",
                                    -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__ext(void) {
  struct {
    PyObject **slot;
    const char *name;
  } names[] = {{&s_cai, "__cuda_array_interface__"}, {&s_dlpack, "__dlpack__"},
               {&s_dlpack_device, "__dlpack_device__"},
               {&s_get_device, "get_device"}, {&s_dtype, "dtype"}, {&s_data_ptr, "data_ptr"},
               {&s_shape, "shape"}, {&s_stride, "stride"}, {&s_device, "device"},
               {&s_type, "type"}, {&s_index, "index"}, {&s_id, "id"},
               {&s_module, "__module__"},
               {&s_tolist, "tolist"}, {&s_array, "__array__"}, {&s_cupy, "cupy"},
               {&s_clamp, "clamp"},
               {&s_cuda_stream, "cuda_stream"}, {&s_ptr, "ptr"}, {&s_handle, "handle"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if ((*names[i].slot = PyUnicode_InternFromString(names[i].name)) == NULL) return NULL;
  return PyModule_Create(&module);
}
