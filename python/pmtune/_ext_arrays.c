/* _ext_arrays.c: the Python extension's reading of arrays: a torch.Tensor in one call of
 * torch's own (torch._C._to_dlpack, no stream asked) or through its accessors, else
 * __cuda_array_interface__ (CuPy, Numba), else a DLPack capsule (JAX and the rest), into a
 * view; and the checks of a call's arrays (shape, layout, contiguity, type, device, order). */
#include "_ext.h"

/* ---- PyTorch, where it is imported ---------------------------------------------------------- */

/* Fills T the first time torch is in sys.modules once the library (whose types T matches) is
 * loaded; 0 where either is not (yet), -1 on an error. */
static int torch_seen(void) {
  static int failed; /* a torch without what pmtune reads: its tensors go through the protocols */
  if (ext_torch.Tensor != NULL) return 1;
  if (failed) return 0;
  PyObject *torch = PyDict_GetItemString(PyImport_GetModuleDict(), "torch"); /* borrowed */
  if (torch == NULL || NTYPES == 0) return 0; /* T's types are the library's, once it is loaded */
  int ok = (ext_torch.empty_strided = PyObject_GetAttrString(torch, "empty_strided")) != NULL;
  if (ok && (ext_torch.empty_like = PyObject_GetAttrString(torch, "empty_like")) == NULL)
    PyErr_Clear(); /* outputs through empty_strided alone */
  for (int i = 0; ok && i < NTYPES; i++)
    ok = (ext_torch.dtypes[i] = PyObject_GetAttrString(torch, NAMES[i])) != NULL;
  PyObject *c = ok ? PyObject_GetAttrString(torch, "_C") : NULL; /* the stream as an int */
  ext_torch.raw_stream = c != NULL ? PyObject_GetAttrString(c, "_cuda_getCurrentRawStream") : NULL;
  ext_torch.to_dlpack = c != NULL ? PyObject_GetAttrString(c, "_to_dlpack") : NULL;
  if (ext_torch.to_dlpack == NULL) PyErr_Clear(); /* a tensor is read through its accessors */
  Py_XDECREF(c);
  if (ok && ext_torch.raw_stream == NULL) {
    PyErr_Clear();
    PyObject *cuda = PyObject_GetAttrString(torch, "cuda");
    ext_torch.current_stream = cuda != NULL ? PyObject_GetAttrString(cuda, "current_stream") : NULL;
    Py_XDECREF(cuda);
    ok = ext_torch.current_stream != NULL;
  }
  PyObject *tensor = ok ? PyObject_GetAttrString(torch, "Tensor") : NULL;
  if (tensor == NULL) {
    failed = 1;
    return -1;
  }
  ext_torch.Tensor = tensor;
  return 1;
}

int ext_is_torch(PyObject *obj) {
  if (ext_torch.Tensor == NULL && torch_seen() <= 0) {
    PyErr_Clear();
    return 0;
  }
  PyTypeObject *t = Py_TYPE(obj);
  return t == (PyTypeObject *)ext_torch.Tensor ||
         PyType_IsSubtype(t, (PyTypeObject *)ext_torch.Tensor);
}

/* ---- Arrays ---------------------------------------------------------------------------------- */

void ext_release(view *v) {
  Py_CLEAR(v->keep);
}

/* A new reference to obj.name() */
PyObject *ext_call0(PyObject *obj, PyObject *name) {
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
  if (PyTuple_Check(seq)) { /* a torch.Size, stride()'s tuple: borrowed items, no new ones */
    for (Py_ssize_t i = 0; i < len; i++)
      if (as_i64(PyTuple_GetItem(seq, i), &out[i]) < 0) return -1;
    *n = (int)len;
    return 0;
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
  PyObject *d = PyObject_GetAttr(obj, ext_str.device);
  if (d == NULL) {
    PyErr_Clear();
    return 0;
  }
  int ordinal = 0;
  PyObject *id = PyObject_GetAttr(d, ext_str.id);
  if (id == NULL) {
    PyErr_Clear();
    id = PyObject_GetAttr(d, ext_str.index);
  }
  if (id == NULL) PyErr_Clear();
  else if (PyLong_Check(id)) ordinal = (int)PyLong_AsLong(id);
  Py_XDECREF(id);
  Py_DECREF(d);
  if (ordinal < 0 || PyErr_Occurred()) PyErr_Clear(), ordinal = 0;
  return ordinal;
}

static int read_torch_dlpack(PyObject *obj, view *v);

int ext_read_torch(PyObject *obj, const char *what, view *v) {
  if (read_torch_dlpack(obj, v)) return 0; /* one call where torch exports it, else accessors */
  int64_t i64;
  PyObject *r =
      ext_call0(obj, ext_str.get_device); /* -1: on the host (or meta); a CUDA ordinal else */
  int rc = r == NULL ? -1 : as_i64(r, &i64);
  Py_XDECREF(r);
  if (rc < 0) return -1;
  if (i64 < 0) {
    PyObject *d = PyObject_GetAttr(obj, ext_str.device),
             *kind = d ? PyObject_GetAttr(d, ext_str.type) : NULL;
    Py_XDECREF(d);
    if (kind == NULL) return -1;
    int host = PyUnicode_CompareWithASCIIString(kind, "cpu") == 0;
    PyErr_Format(PyExc_TypeError, "%s: the array is in %s memory (a torch tensor on %S): pmtune "
                 "takes arrays in GPU memory", what, host ? "host" : "non-CUDA", kind);
    Py_DECREF(kind);
    return -1;
  }
  v->device = (int)i64;
  PyObject *dtype = PyObject_GetAttr(obj, ext_str.dtype);
  if (dtype == NULL) return -1;
  v->dtype = -1;
  for (int i = 0; i < NTYPES; i++)
    if (dtype == ext_torch.dtypes[i]) v->dtype = i;
  if (v->dtype < 0) {
    PyErr_Format(PyExc_TypeError, "%s: pmtune takes %s arrays, not %S", what, TYPES_TEXT,
                 dtype);
    Py_DECREF(dtype);
    return -1;
  }
  Py_DECREF(dtype);
  v->esize = SIZES[v->dtype];
  if ((r = ext_call0(obj, ext_str.data_ptr)) == NULL) return -1;
  v->ptr = (uintptr_t)PyLong_AsUnsignedLongLong(r);
  Py_DECREF(r);
  if (PyErr_Occurred()) return -1;
  if ((r = PyObject_GetAttr(obj, ext_str.shape)) == NULL) return -1;
  rc = int_seq(r, what, "shape", v->shape, &v->ndim);
  Py_DECREF(r);
  if (rc < 0 || (r = ext_call0(obj, ext_str.stride)) == NULL) return -1;
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
    if (PyObject_HasAttr(obj, ext_str.dlpack)) return 1;
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

/* The element type a DLPack type names, or -1. */
static int dl_type(DLDataType t) {
  if (t.lanes == 1 && t.code == DL_FLOAT)
    return t.bits == 32 ? F32 : t.bits == 16 ? F16 : t.bits == 64 ? F64 : -1;
  return t.lanes == 1 && t.code == DL_BF && t.bits == 16 ? BF16 : -1;
}

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

/* v filled from a DLPack tensor whose element type is dtype (one pmtune takes) and whose
 * dimensions are at most MAXDIM: packed strides where it gives none. */
static void dl_view(const DLTensor *t, int dtype, view *v) {
  v->dtype = dtype, v->esize = SIZES[dtype], v->ndim = t->ndim;
  for (int i = 0; i < v->ndim; i++) v->shape[i] = t->shape[i];
  if (t->strides != NULL)
    for (int i = 0; i < v->ndim; i++) v->strides[i] = t->strides[i] * v->esize;
  else
    packed_strides(v);
  v->ptr = (uintptr_t)t->data + (uintptr_t)t->byte_offset;
  v->device = t->device.device_id;
}

static int read_dlpack(PyObject *obj, const char *what, uint64_t stream, view *v) {
  PyObject *dev = PyObject_GetAttr(obj, ext_str.dlpack_device);
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
  PyObject *method = PyObject_GetAttr(obj, ext_str.dlpack);
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
  int dtype = dl_type(t->dtype);
  if (dtype < 0) {
    PyErr_Format(PyExc_TypeError, "%s: pmtune takes %s arrays, not DLPack type (%d, %d, %d)",
                 what, TYPES_TEXT, t->dtype.code, t->dtype.bits, t->dtype.lanes);
    return -1;
  }
  if (t->ndim < 0 || t->ndim > MAXDIM) {
    PyErr_Format(PyExc_ValueError, "%s: %d dimensions; pmtune reads at most %d", what,
                 (int)t->ndim, MAXDIM);
    return -1;
  }
  dl_view(t, dtype, v);
  return 0;
}

/* A CUDA torch.Tensor of a type pmtune takes read in one call, torch._C._to_dlpack (no stream
 * is asked: the tensor is torch's, on torch's stream): 1 where read, 0 where it is to be read
 * through its accessors (torch exports none, it refused, or the tensor is on the host or of
 * another type: the accessors word the error). */
static int read_torch_dlpack(PyObject *obj, view *v) {
  if (ext_torch.to_dlpack == NULL) return 0;
  PyObject *capsule = PyObject_CallFunctionObjArgs(ext_torch.to_dlpack, obj, NULL);
  if (capsule == NULL) {
    PyErr_Clear();
    return 0;
  }
  DLTensor *t = PyCapsule_GetPointer(capsule, "dltensor");
  int rc = 0;
  if (t == NULL) {
    PyErr_Clear();
  } else if (t->device.device_type == DL_CUDA && t->ndim >= 0 && t->ndim <= MAXDIM) {
    int d = dl_type(t->dtype);
    if (d >= 0 && d < NTYPES) {
      dl_view(t, d, v);
      v->torch = 1;
      rc = 1;
    }
  }
  Py_DECREF(capsule); /* not consumed: its deleter lets the tensor go */
  return rc;
}

/* Reads obj, an array other than a torch.Tensor, into v through __cuda_array_interface__ or
 * DLPack; TypeError where it is no GPU array pmtune can take. v is released on an error too. */
int ext_read_protocols(PyObject *obj, const char *what, uint64_t stream, int writable, view *v) {
  memset(v, 0, sizeof *v);
  PyObject *cai = PyObject_GetAttr(obj, ext_str.cai);
  if (cai == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError) && !PyErr_ExceptionMatches(PyExc_TypeError))
      return -1;
    PyErr_Clear();
  } else {
    int rc = read_cai(obj, cai, what, writable, v);
    Py_DECREF(cai);
    if (rc <= 0) return rc;
  }
  if (PyObject_HasAttr(obj, ext_str.dlpack)) {
    int rc = read_dlpack(obj, what, stream, v);
    if (rc < 0) ext_release(v);
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
int ext_read_view(PyObject *obj, const char *what, uint64_t stream, int writable, view *v) {
  memset(v, 0, sizeof *v);
  if (ext_lib_ready() < 0) return -1; /* the types are the library's */
  return ext_is_torch(obj) ? ext_read_torch(obj, what, v)
                           : ext_read_protocols(obj, what, stream, writable, v);
}

/* The shape as Python writes a tuple: "(4, 5)", "(3,)", "()". */
PyObject *ext_shape_repr(const view *v) {
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
int ext_need_same_shape(const view *x, const char *xn, const view *y, const char *yn) {
  if (same_shape(x, y)) return 0;
  PyObject *sx = ext_shape_repr(x), *sy = ext_shape_repr(y);
  if (sx && sy)
    PyErr_Format(PyExc_ValueError, "%s is %U, %s is %U: the same shape is needed", xn, sx, yn, sy);
  Py_XDECREF(sx);
  Py_XDECREF(sy);
  return -1;
}

/* Whether a 2-D view can be read in order (0 row-major, 1 column-major): a line's elements next
 * to each other, lines at least a line apart; its pitch where it can. A single line (one row) or
 * a single column can be read in either order where its elements are next to each other, and a
 * dimension of one has any stride (torch keeps its parent's, a DLPack export writes 1). */
static int read_as(const view *v, int order, size_t *pitch) {
  int64_t r = v->shape[0], c = v->shape[1], s0 = v->strides[0], s1 = v->strides[1], e = v->esize;
  if (order == 0 && (s1 == e || c == 1) && (r == 1 || s0 >= e * c))
    return *pitch = (size_t)(r == 1 ? e * c : s0), 1;
  if (order == 1 && (s0 == e || r == 1) && (c == 1 || s1 >= e * r))
    return *pitch = (size_t)(c == 1 ? e * r : s1), 1;
  return 0;
}

int ext_layout_2d(const view *v, const char *what, int prefer, int *order, size_t *rows,
                  size_t *cols, size_t *pitch) {
  if (v->ndim != 2) {
    PyErr_Format(PyExc_ValueError, "%s: a 2-D array is needed, not %d-D", what, v->ndim);
    return -1;
  }
  *rows = (size_t)v->shape[0], *cols = (size_t)v->shape[1];
  int packed_column = v->shape[0] > 1 && v->shape[1] == 1 && v->strides[0] == v->esize;
  int own = packed_column ? 1 : 0; /* its own order where both fit: column-major for a column */
  if (prefer >= 0 && read_as(v, prefer, pitch)) *order = prefer;
  else if (read_as(v, own, pitch)) *order = own;
  else if (read_as(v, !own, pitch)) *order = !own;
  else {
    PyErr_Format(PyExc_ValueError, "%s: strides (%lld, %lld) bytes: one of the two must be %d (a "
                 "line's elements next to each other) and the other at least a line", what,
                 (long long)v->strides[0], (long long)v->strides[1], (int)v->esize);
    return -1;
  }
  return 0;
}

/* Whether a view's elements fill its extent, in any order of its dimensions (what torch calls
 * non-overlapping and dense: torch.empty_like gives such a tensor's strides to its new one). */
int ext_dense(const view *v) {
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
int ext_packed_vector(const view *v, const char *what, size_t *n) {
  if (!ext_dense(v)) {
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
int ext_same_type(const view *const *vs, int n) {
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
int ext_same_device(const view *const *vs, const char *const *names, int n) {
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
int ext_same_order(const view *const *vs, const char *const *names, int n) {
  for (int i = 1; i < n; i++)
    for (int d = 0; d < vs[0]->ndim; d++)
      if (vs[0]->shape[d] > 1 && vs[i]->strides[d] != vs[0]->strides[d]) {
        PyErr_Format(PyExc_ValueError, "%s and %s lay their elements out in different orders "
                     "(strides differ): add takes arrays of one layout", names[0], names[i]);
        return -1;
      }
  return 0;
}

/* ---- What the tests read: an array as the calls see it ------------------------------------- */

/* view(obj, what, writable) -> (dtype, shape, strides in bytes) */
PyObject *ext_view(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *obj;
  const char *what;
  int writable = 0;
  if (!PyArg_ParseTuple(args, "Os|p", &obj, &what, &writable)) return NULL;
  view v;
  if (ext_read_view(obj, what, 0, writable, &v) < 0) return NULL;
  PyObject *shape = PyTuple_New(v.ndim), *strides = PyTuple_New(v.ndim);
  for (int i = 0; shape && strides && i < v.ndim; i++) {
    PyTuple_SetItem(shape, i, PyLong_FromLongLong(v.shape[i]));
    PyTuple_SetItem(strides, i, PyLong_FromLongLong(v.strides[i]));
  }
  ext_release(&v);
  PyObject *r = shape && strides ? Py_BuildValue("iOO", v.dtype, shape, strides) : NULL;
  Py_XDECREF(shape);
  Py_XDECREF(strides);
  return r;
}

/* layout(obj, what) -> (order, rows, cols, pitch) */
PyObject *ext_layout(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *obj;
  const char *what;
  if (!PyArg_ParseTuple(args, "Os", &obj, &what)) return NULL;
  view v;
  int order;
  size_t rows, cols, pitch;
  if (ext_read_view(obj, what, 0, 0, &v) < 0) return NULL;
  int rc = ext_layout_2d(&v, what, -1, &order, &rows, &cols, &pitch);
  ext_release(&v);
  return rc < 0 ? NULL : Py_BuildValue("innn", order, (Py_ssize_t)rows, (Py_ssize_t)cols,
                                       (Py_ssize_t)pitch);
}

/* packed(obj, what) -> the number of elements of a contiguous array */
PyObject *ext_packed(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *obj;
  const char *what;
  if (!PyArg_ParseTuple(args, "Os", &obj, &what)) return NULL;
  view v;
  size_t n;
  if (ext_read_view(obj, what, 0, 0, &v) < 0) return NULL;
  int rc = ext_packed_vector(&v, what, &n);
  ext_release(&v);
  return rc < 0 ? NULL : PyLong_FromSize_t(n);
}
