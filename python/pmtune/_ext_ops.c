/* _ext_ops.c: the Python extension's calls of the built-in ops, matadd, add, reduce_sum and
 * filter: each reads its arrays, checks them against each other, makes its output where none is
 * given and calls the library without the GIL. */
#include "_ext.h"

/* matadd(ctx, a, b, out, stream) */
static PyObject *do_matadd(PyObject *h, PyObject *a, PyObject *b, PyObject *out, PyObject *stream) {
  PyObject *ret = NULL;
  view va = {0}, vb = {0}, vc = {0};
  uint64_t s;
  int oa, ob, oc;
  size_t rows, cols, pa, pb, pc;
  if (ext_first_array(a, "a", stream, 0, &va, &s) < 0) goto done;
  if (ext_layout_2d(&va, "a", -1, &oa, &rows, &cols, &pa) < 0) goto done;
  if (ext_read_view(b, "b", s, 0, &vb) < 0 || ext_need_same_shape(&va, "a", &vb, "b") < 0 ||
      ext_layout_2d(&vb, "b", oa, &ob, &rows, &cols, &pb) < 0)
    goto done;
  if (ext_output(out, a, &va, va.shape, 2, oa, "matadd", va.dtype, s, &ret, &vc) < 0 ||
      ext_need_same_shape(&vc, "out", &va, "a") < 0 ||
      ext_layout_2d(&vc, "out", oa, &oc, &rows, &cols, &pc) < 0 ||
      ext_same_type((const view *const[]){&va, &vb, &vc}, 3) < 0 ||
      ext_same_device((const view *const[]){&va, &vb, &vc}, (const char *const[]){"a", "b", "out"},
                      3))
    goto fail;
  if (ob != oa || oc != oa) { /* a single line or column fits both orders: the other, for all */
    int o = ob != oa ? ob : oc;
    ext_layout_2d(&va, "a", o, &oa, &rows, &cols, &pa); /* read before: no error now */
    ext_layout_2d(&vb, "b", o, &ob, &rows, &cols, &pb);
    ext_layout_2d(&vc, "out", o, &oc, &rows, &cols, &pc);
  }
  if (!(oa == ob && ob == oc)) {
    PyErr_Format(PyExc_ValueError, "a, b and out are stored in different orders (row-major: %s, "
                 "%s, %s): pmtune's matadd takes one", oa ? "False" : "True",
                 ob ? "False" : "True", oc ? "False" : "True");
    goto fail;
  }
  pm_ctx *c = ext_context(h, va.device);
  if (c == NULL) goto fail;
  int rc;
  GIL_RELEASED(rc = ext_lib.pm_matadd_t(c, va.dtype, rows, cols, oa, (void *)vc.ptr, pc,
                                        (void *)va.ptr, pa, (void *)vb.ptr, pb,
                                        (void *)(uintptr_t)s));
  if (ext_called(c, rc) < 0) goto fail;
  goto done;
fail:
  Py_CLEAR(ret);
done:
  ext_release(&va), ext_release(&vb), ext_release(&vc);
  return ret;
}

/* matadd(a, b, out=None, stream=None, ctx=None): on ctx (a pmtune.Context's handle), else on the
 * array's device's own context */
PyObject *ext_matadd_kw(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames) {
  (void)self;
  static const char *const names[] = {"a", "b", "out", "stream", "ctx"};
  PyObject *v[] = {NULL, NULL, Py_None, Py_None, Py_None};
  if (ext_parse("matadd", names, 2, 5, args, nargs, kwnames, v) < 0) return NULL;
  return do_matadd(v[4], v[0], v[1], v[2], v[3]);
}

/* add(ctx, a, b, out, stream) */
static PyObject *do_add(PyObject *h, PyObject *a, PyObject *b, PyObject *out, PyObject *stream) {
  PyObject *ret = NULL;
  view va = {0}, vb = {0}, vc = {0};
  uint64_t s;
  size_t n, m;
  if (ext_first_array(a, "a", stream, 0, &va, &s) < 0 || ext_read_view(b, "b", s, 0, &vb) < 0 ||
      ext_need_same_shape(&vb, "b", &va, "a") < 0 || ext_packed_vector(&va, "a", &n) < 0 ||
      ext_packed_vector(&vb, "b", &m) < 0)
    goto done;
  if (ext_output(out, a, &va, va.shape, va.ndim, 0, "add", va.dtype, s, &ret, &vc) < 0 ||
      ext_need_same_shape(&vc, "out", &va, "a") < 0 || ext_packed_vector(&vc, "out", &m) < 0 ||
      ext_same_type((const view *const[]){&va, &vb, &vc}, 3) < 0 ||
      ext_same_order((const view *const[]){&va, &vb, &vc}, (const char *const[]){"a", "b", "out"},
                     3) ||
      ext_same_device((const view *const[]){&va, &vb, &vc}, (const char *const[]){"a", "b", "out"},
                      3))
    goto fail;
  pm_ctx *c = ext_context(h, va.device);
  if (c == NULL) goto fail;
  int rc;
  GIL_RELEASED(rc = ext_lib.pm_add_t(c, va.dtype, n, (void *)vc.ptr, (void *)va.ptr, (void *)vb.ptr,
                                     (void *)(uintptr_t)s));
  if (ext_called(c, rc) < 0) goto fail;
  goto done;
fail:
  Py_CLEAR(ret);
done:
  ext_release(&va), ext_release(&vb), ext_release(&vc);
  return ret;
}

/* add(a, b, out=None, stream=None, ctx=None): on ctx (a pmtune.Context's handle), else on the
 * array's device's own context */
PyObject *ext_add_kw(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  (void)self;
  static const char *const names[] = {"a", "b", "out", "stream", "ctx"};
  PyObject *v[] = {NULL, NULL, Py_None, Py_None, Py_None};
  if (ext_parse("add", names, 2, 5, args, nargs, kwnames, v) < 0) return NULL;
  return do_add(v[4], v[0], v[1], v[2], v[3]);
}

/* reduce_sum(ctx, x, out, stream, dtype) */
static PyObject *do_reduce_sum(PyObject *h, PyObject *x, PyObject *out, PyObject *stream,
                               PyObject *dtype) {
  PyObject *ret = NULL;
  view vx = {0}, vo = {0};
  uint64_t s;
  size_t n;
  if (ext_first_array(x, "x", stream, 0, &vx, &s) < 0 || ext_packed_vector(&vx, "x", &n) < 0)
    goto done;
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
  if (ext_output(out, x, &vx, NULL, 0, 0, "reduce_sum", sum_t, s, &ret, &vo) < 0) goto fail;
  if (vo.dtype != vx.dtype && vo.dtype != F32) {
    if (vx.dtype == F32)
      PyErr_Format(PyExc_TypeError, "out: reduce_sum takes float32 arrays, not %s",
                   NAMES[vo.dtype]);
    else
      PyErr_Format(PyExc_TypeError, "out: reduce_sum takes float32 or %s arrays, not %s",
                   NAMES[vx.dtype], NAMES[vo.dtype]);
    goto fail;
  }
  if (ext_same_device((const view *const[]){&vx, &vo}, (const char *const[]){"x", "out"}, 2) < 0)
    goto fail;
  int64_t count = 1;
  for (int i = 0; i < vo.ndim; i++) count *= vo.shape[i];
  if (count != 1) {
    PyObject *sr = ext_shape_repr(&vo);
    if (sr) PyErr_Format(PyExc_ValueError, "out: one element is needed, not %U", sr);
    Py_XDECREF(sr);
    goto fail;
  }
  pm_ctx *c = ext_context(h, vx.device);
  if (c == NULL) goto fail;
  int rc;
  GIL_RELEASED(rc = ext_lib.pm_reduce_sum_t(c, vx.dtype, n, (void *)vx.ptr, vo.dtype,
                                            (void *)vo.ptr, (void *)(uintptr_t)s));
  if (ext_called(c, rc) < 0) goto fail;
  goto done;
fail:
  Py_CLEAR(ret);
done:
  ext_release(&vx), ext_release(&vo);
  return ret;
}

/* reduce_sum(x, out=None, stream=None, dtype=None, ctx=None): on ctx (a pmtune.Context's
 * handle), else on the array's device's own context */
PyObject *ext_reduce_sum_kw(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
  (void)self;
  static const char *const names[] = {"x", "out", "stream", "dtype", "ctx"};
  PyObject *v[] = {NULL, Py_None, Py_None, Py_None, Py_None};
  if (ext_parse("reduce_sum", names, 1, 5, args, nargs, kwnames, v) < 0) return NULL;
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
  if (PyObject_HasAttr(weights, ext_str.cai) ||
      (PyObject_HasAttr(weights, ext_str.dlpack_device) &&
       !PyObject_HasAttr(weights, ext_str.array)))
    return PyErr_Format(PyExc_TypeError, "weights: a host sequence or NumPy array (pmtune copies "
                        "it at the call)");
  double *w = NULL;
  size_t nw = 0, cap = 0;
  PyObject *list =
      PyObject_HasAttr(weights, ext_str.tolist) ? ext_call0(weights, ext_str.tolist) : weights;
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
  if (ext_first_array(x, "x", stream, 0, &vx, &s) < 0 ||
      ext_layout_2d(&vx, "x", 0, &ox, &rows, &cols, &px) < 0)
    goto done;
  if (ox != 0) {
    PyErr_SetString(PyExc_ValueError, "x: filter takes a row-major image (its rows' floats next "
                    "to each other)");
    goto done;
  }
  if (ext_output(out, x, &vx, vx.shape, 2, 0, "filter", vx.dtype, s, &ret, &vo) < 0 ||
      ext_same_type((const view *const[]){&vx, &vo}, 2) < 0 ||
      ext_same_device((const view *const[]){&vx, &vo}, (const char *const[]){"x", "out"}, 2) < 0 ||
      ext_need_same_shape(&vo, "out", &vx, "x") < 0 ||
      ext_layout_2d(&vo, "out", 0, &oo, &rows, &cols, &po) < 0)
    goto fail;
  if (oo != 0) {
    PyErr_SetString(PyExc_ValueError, "out: filter writes a row-major image");
    goto fail;
  }
  if (vx.dtype != F64) /* floats, in place: float i lies below double i, not yet read */
    for (size_t i = 0; i < nw; i++) ((float *)w)[i] = (float)w[i];
  pm_ctx *c = ext_context(h, vx.device);
  if (c == NULL) goto fail;
  int rc;
  GIL_RELEASED(rc = ext_lib.pm_filter_t(
                   c, vx.dtype, rows, cols, (void *)vo.ptr, po, (void *)vx.ptr, px, w,
                   (int)(side / 2), zero ? PM_BORDER_ZERO : PM_BORDER_CLAMP, (void *)(uintptr_t)s));
  if (ext_called(c, rc) < 0) goto fail;
  goto done;
fail:
  Py_CLEAR(ret);
done:
  ext_release(&vx), ext_release(&vo);
free_w:
  PyMem_Free(w);
  return ret;
}

/* filter(x, weights, border='clamp', out=None, stream=None, ctx=None): on ctx (a pmtune.Context's
 * handle), else on the array's device's own context */
PyObject *ext_filter_kw(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames) {
  (void)self;
  static const char *const names[] = {"x", "weights", "border", "out", "stream", "ctx"};
  PyObject *v[] = {NULL, NULL, ext_str.clamp, Py_None, Py_None, Py_None};
  if (ext_parse("filter", names, 2, 6, args, nargs, kwnames, v) < 0) return NULL;
  return do_filter(v[5], v[0], v[1], v[2], v[3], v[4]);
}
