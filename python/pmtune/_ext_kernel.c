/* _ext_kernel.c: the Python extension's kernels of one's own (pmtune.Kernel): opening a
 * description, and a call checked against what Kernel read of it (dims, buffers, scalars). */
#include "_ext.h"

PyObject *ext_kernel_open(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *h, *path;
  if (!PyArg_ParseTuple(args, "OO&", &h, PyUnicode_FSConverter, &path)) return NULL;
  pm_ctx *c = PyLong_AsVoidPtr(h);
  pm_kernel *k = NULL;
  int rc = -1;
  if (!PyErr_Occurred()) GIL_RELEASED(rc = ext_lib.pm_kernel_open(c, PyBytes_AsString(path), &k));
  Py_DECREF(path);
  if (PyErr_Occurred()) return NULL;
  return rc == 0 ? PyLong_FromVoidPtr(k) : ext_raise_status(c, rc);
}
/* ValueError "NAME: N WHAT given, its description has M (its names, comma-separated)"; NULL. */
static PyObject *count_error(PyObject *name, const char *what, Py_ssize_t given, Py_ssize_t want,
                             PyObject *names) {
  PyObject *sep = PyUnicode_FromString(", "), *j = sep ? PyUnicode_Join(sep, names) : NULL;
  if (j) PyErr_Format(PyExc_ValueError, "%U: %zd %s given, its description has %zd (%U)", name,
                      given, what, want, j);
  Py_XDECREF(sep);
  Py_XDECREF(j);
  return NULL;
}

/* kernel(spec, ctx, k, dims, buffers, scalars, stream): a kernel of one's own. spec is the
 * tuple Kernel made from its description: (name, ndims, buffer names, buffer types (-1: any),
 * scalar names, scalar kinds (0 i32, 1 i64, 2 f32, 3 f64, -1 none pmtune knows), the handles
 * by device (a dict: device -> (ctx, kernel)), the function opening one). ctx and k are the
 * handles where the Kernel has a context of its own, else None. */
PyObject *ext_kernel(PyObject *self, PyObject *args) {
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
  if (nb != want_b) return count_error(name, "buffers", nb, want_b, bnames);
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
    if (ns != want_s) return count_error(name, "scalars", ns, want_s, snames);
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
    int rc = read == 0 ? ext_first_array(obj, what, stream, 1, &vs[0], &s)
                       : ext_read_view(obj, what, s, 1, &vs[read]);
    size_t n;
    Py_DECREF(obj);
    if (rc == 0) rc = ext_packed_vector(&vs[read], what, &n);
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
  GIL_RELEASED(rc = ext_lib.pm_kernel_launch_with(k, cdims, ptrs, scalars != Py_None ? sptr : NULL,
                                                  (size_t)ns, (void *)(uintptr_t)s));
  if (rc != 0) {
    ext_raise_status(c, rc);
  } else {
    ret = Py_None;
    Py_INCREF(ret);
  }
done:
  for (Py_ssize_t i = 0; i < read; i++) ext_release(&vs[i]);
  return ret;
}
