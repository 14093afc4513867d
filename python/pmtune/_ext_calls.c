/* _ext_calls.c: what every call of the Python extension shares: its stream, its context, the
 * library's status raised as pmtune.Error, its output (given, or made like its input), and its
 * arguments read as Python reads them. */
#include "_ext.h"

/* ---- Streams and contexts ------------------------------------------------------------------- */

static int explicit_stream(PyObject *stream, uint64_t *out) {
  PyObject *names[] = {ext_str.cuda_stream, ext_str.ptr, ext_str.handle};
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
  PyObject *r, *d = PyLong_FromLong(device); /* a small int: CPython's own, not made */
  if (d == NULL) return -1;
  if (ext_torch.raw_stream != NULL) { /* called with the int as it is, no tuple built */
    r = PyObject_CallFunctionObjArgs(ext_torch.raw_stream, d, NULL);
  } else {
    PyObject *s = PyObject_CallFunctionObjArgs(ext_torch.current_stream, d, NULL);
    r = s ? PyObject_GetAttr(s, ext_str.cuda_stream) : NULL;
    Py_XDECREF(s);
  }
  Py_DECREF(d);
  if (r == NULL) return -1;
  *out = PyLong_AsUnsignedLongLong(r);
  Py_DECREF(r);
  return PyErr_Occurred() ? -1 : 0;
}

/* CuPy's current stream where obj is CuPy's, else the legacy default stream (0). */
static int other_stream(PyObject *obj, uint64_t *out) {
  *out = 0;
  PyObject *mod = PyObject_GetAttr((PyObject *)Py_TYPE(obj), ext_str.module);
  if (mod == NULL) {
    PyErr_Clear();
    return 0;
  }
  int cupy = PyUnicode_Check(mod) && PyUnicode_Tailmatch(mod, ext_str.cupy, 0, 4, -1) == 1;
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
  PyObject *p = s ? PyObject_GetAttr(s, ext_str.ptr) : NULL;
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
int ext_first_array(PyObject *obj, const char *what, PyObject *stream, int writable, view *v,
                    uint64_t *s) {
  if (ext_lib_ready() < 0) return -1; /* the types are the library's: torch's are matched to them */
  if (ext_is_torch(obj)) {
    memset(v, 0, sizeof *v);
    if (ext_read_torch(obj, what, v) < 0) return -1;
    return stream != Py_None ? explicit_stream(stream, s) : torch_stream(v->device, s);
  }
  if (stream != Py_None ? explicit_stream(stream, s) : other_stream(obj, s)) return -1;
  return ext_read_protocols(obj, what, *s, writable, v);
}

/* The context to call: h where given (a pmtune.Context's), else the device's own, opened on
 * first use. */
pm_ctx *ext_context(PyObject *h, int device) {
  if (h != Py_None) {
    pm_ctx *c = PyLong_AsVoidPtr(h);
    return PyErr_Occurred() ? NULL : c;
  }
  if (device >= 0 && device < MAXDEV && ext_device_ctx[device] != NULL)
    return ext_device_ctx[device];
  PyObject *r = PyObject_CallFunction(ext_context_of_device, "i", device);
  if (r == NULL) return NULL;
  pm_ctx *c = PyLong_AsVoidPtr(r);
  Py_DECREF(r);
  if (c != NULL && device >= 0 && device < MAXDEV) ext_device_ctx[device] = c;
  return c;
}

PyObject *ext_raise_status(pm_ctx *c, int rc) {
  const char *msg = c != NULL ? ext_lib.pm_errmsg(c) : NULL;
  PyObject *text = ext_text_or_none(msg != NULL ? msg : ext_lib.pm_strerror(rc));
  PyObject *e = text != NULL ? PyObject_CallFunction(ext_error, "iN", rc, text) : NULL;
  if (e != NULL) {
    PyErr_SetObject(ext_error, e);
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
  PyObject *d = Py_BuildValue("{sOsi}", "dtype", ext_torch.dtypes[dtype], "device", device);
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
 * read their arrays). For a torch.Tensor, torch.empty_like(like) where like is dense and of this
 * shape and type (it keeps a dense tensor's strides; one call without keywords, the cheapest),
 * else torch.empty_strided packed in that order: either way its strides are known here, and only
 * its pointer is asked. Else _arrays.empty_like (CuPy; ValueError "pass out=" for the rest). */
static PyObject *new_array(PyObject *like, const view *lv, const int64_t *shape, int n,
                           int col_major, const char *what, int dtype, view *out) {
  if (!lv->torch) {
    PyObject *dims = int_tuple(shape, n);
    PyObject *o = dims ? PyObject_CallFunction(ext_empty_like, "OOssi", like, dims,
                                               col_major ? "F" : "C", what, dtype)
                       : NULL;
    Py_XDECREF(dims);
    if (o != NULL && ext_read_view(o, what, 0, 1, out) < 0) Py_CLEAR(o);
    return o;
  }
  memset(out, 0, sizeof *out);
  out->torch = 1, out->dtype = dtype, out->esize = SIZES[dtype], out->device = lv->device;
  out->ndim = n;
  if (n > 0) memcpy(out->shape, shape, (size_t)n * sizeof *shape);
  int same = dtype == lv->dtype && n == lv->ndim;
  for (int i = 0; same && i < n; i++) same = shape[i] == lv->shape[i] && shape[i] > 0;
  int keep = same && ext_dense(lv); /* like's strides, as torch.empty_like keeps a dense one's */
  int64_t st[MAXDIM], acc = 1;
  for (int k = 0; k < n; k++) { /* innermost first */
    int i = col_major ? k : n - 1 - k;
    st[i] = keep ? lv->strides[i] / lv->esize : acc;
    acc *= shape[i] > 1 ? shape[i] : 1;
  }
  for (int i = 0; i < n; i++) out->strides[i] = st[i] * out->esize;
  PyObject *o = NULL;
  if (keep && ext_torch.empty_like != NULL) {
    o = PyObject_CallFunctionObjArgs(ext_torch.empty_like, like, NULL);
  } else {
    PyObject *dims = int_tuple(shape, n), *strides = dims ? int_tuple(st, n) : NULL;
    PyObject *args = strides ? PyTuple_Pack(2, dims, strides) : NULL;
    PyObject *kw = args ? torch_kw(dtype, lv->device) : NULL;
    o = kw ? PyObject_Call(ext_torch.empty_strided, args, kw) : NULL;
    Py_XDECREF(dims), Py_XDECREF(strides), Py_XDECREF(args), Py_XDECREF(kw);
  }
  if (o == NULL) return NULL;
  PyObject *r = ext_call0(o, ext_str.data_ptr);
  out->ptr = r ? (uintptr_t)PyLong_AsUnsignedLongLong(r) : 0;
  Py_XDECREF(r);
  if (r == NULL || PyErr_Occurred()) Py_CLEAR(o);
  return o;
}

/* Reads a vectorcall's arguments into vals (nreq required, the rest keeping the defaults vals
 * holds), by position and by the names in names; TypeError as Python words it. */
int ext_parse(const char *fn, const char *const *names, int nreq, int nmax, PyObject *const *args,
              Py_ssize_t nargs, PyObject *kwnames, PyObject **vals) {
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

/* ---- Outputs and status ------------------------------------------------------------------- */

/* The call's output: out where given (read as every array is, writable), else a new array made
 * like `like` (new_array); a new reference in *ret either way (NULL where none was made). */
int ext_output(PyObject *out, PyObject *like, const view *lv, const int64_t *shape, int n,
               int col_major, const char *what, int dtype, uint64_t s, PyObject **ret, view *v) {
  if (out == Py_None)
    return (*ret = new_array(like, lv, shape, n, col_major, what, dtype, v)) == NULL ? -1 : 0;
  Py_INCREF(out);
  *ret = out;
  return ext_read_view(out, "out", s, 1, v);
}

/* -1 with pmtune.Error set where the library's call returned rc != 0. */
int ext_called(pm_ctx *c, int rc) {
  if (rc == 0) return 0;
  ext_raise_status(c, rc);
  return -1;
}
