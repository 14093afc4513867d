/* _ext.c: pmtune's compiled Python extension, the module: the library dlopen()ed from the path
 * _lib.py chose (one search, the package's own copy first), so that the extension links nothing
 * but libc; the library's functions other than the calls; the method table and the module's
 * setup. _ext.h says which file does what. */
#include "_ext.h"

#include <dlfcn.h>

struct ext_lib ext_lib;
PyObject *ext_error, *ext_context_of_device, *ext_load_library, *ext_empty_like;
int NTYPES, SIZES[MAXTYPES];
char NAMES[MAXTYPES][16], TYPES_TEXT[MAXTYPES * 20];
pm_ctx *ext_device_ctx[MAXDEV];
struct ext_str ext_str;
struct ext_torch ext_torch;

/* ---- The library, opened by path ------------------------------------------------------------ */

int ext_lib_ready(void) {
  if (ext_lib.handle != NULL) return 0;
  PyObject *r = PyObject_CallObject(ext_load_library, NULL);
  Py_XDECREF(r);
  return r == NULL ? -1 : 0;
}

PyObject *ext_load(PyObject *self, PyObject *arg) {
  (void)self;
  if (ext_lib.handle != NULL) Py_RETURN_NONE;
  PyObject *bytes;
  if (!PyUnicode_FSConverter(arg, &bytes)) return NULL;
  void *h = dlopen(PyBytes_AsString(bytes), RTLD_NOW | RTLD_LOCAL);
  Py_DECREF(bytes);
  if (h == NULL) return PyErr_Format(PyExc_OSError, "%s", dlerror());
#define PM_SYM(name)                                                                               \
  if ((*(void **)&ext_lib.name = dlsym(h, #name)) == NULL) {                                       \
    dlclose(h);                                                                                    \
    return PyErr_Format(PyExc_OSError, "%S has no %s: not a libpmtune", arg, #name);               \
  }
  PM_FUNCS(PM_SYM)
#undef PM_SYM
  int n = ext_lib.pm_dtype_count();
  if (n < 1 || n > MAXTYPES) {
    dlclose(h);
    return PyErr_Format(PyExc_OSError, "%S lists %d element types: not a libpmtune", arg, n);
  }
  size_t len = 0;
  for (int t = 0; t < n; t++) {
    const char *name = ext_lib.pm_dtype_name((pm_dtype)t), *f = strchr(name, 'f');
    /* the array libraries spell the library's "f" out: f32 float32, bf16 bfloat16 */
    if (f != NULL)
      snprintf(NAMES[t], sizeof NAMES[t], "%.*sfloat%s", (int)(f - name), name, f + 1);
    else
      snprintf(NAMES[t], sizeof NAMES[t], "%s", name);
    SIZES[t] = (int)ext_lib.pm_dtype_size((pm_dtype)t);
    len += (size_t)snprintf(TYPES_TEXT + len, sizeof TYPES_TEXT - len, "%s%s",
                            t == 0 ? "" : t == n - 1 ? " or " : ", ", NAMES[t]);
  }
  NTYPES = n;
  ext_lib.handle = h;
  Py_RETURN_NONE;
}

/* dtypes() -> ((name, array name, bytes), ...): the element types as the library lists them,
 * in pm_dtype's order (the library is loaded where it is not yet). */
PyObject *ext_dtypes(PyObject *self, PyObject *unused) {
  (void)self, (void)unused;
  if (ext_lib_ready() < 0) return NULL;
  PyObject *r = PyTuple_New(NTYPES);
  for (int t = 0; r != NULL && t < NTYPES; t++) {
    PyObject *e = Py_BuildValue("ssi", ext_lib.pm_dtype_name((pm_dtype)t), NAMES[t], SIZES[t]);
    if (e == NULL) {
      Py_DECREF(r);
      return NULL;
    }
    PyTuple_SetItem(r, t, e);
  }
  return r;
}

/* ---- The library's other functions ----------------------------------------------------------- */

PyObject *ext_open(PyObject *self, PyObject *args) {
  (void)self;
  pm_options o = {0};
  PyObject *path;
  if (!PyArg_ParseTuple(args, "iOiii", &o.device, &path, &o.autotune, &o.autotune_budget,
                        &o.record) || ext_lib_ready() < 0)
    return NULL;
  if (path != Py_None && (o.db_path = PyBytes_AsString(path)) == NULL) return NULL;
  pm_ctx *c = NULL;
  int rc;
  GIL_RELEASED(rc = ext_lib.pm_open(&c, &o));
  if (rc == 0) return PyLong_FromVoidPtr(c);
  ext_raise_status(c, rc);
  if (c != NULL) ext_lib.pm_close(c);
  return NULL;
}

PyObject *ext_close(PyObject *self, PyObject *h) {
  (void)self;
  pm_ctx *c = PyLong_AsVoidPtr(h);
  if (PyErr_Occurred()) return NULL;
  for (int i = 0; i < MAXDEV; i++)
    if (ext_device_ctx[i] == c) ext_device_ctx[i] = NULL;
  if (c != NULL && ext_lib.handle != NULL) GIL_RELEASED(ext_lib.pm_close(c));
  Py_RETURN_NONE;
}

PyObject *ext_reload(PyObject *self, PyObject *h) {
  (void)self;
  pm_ctx *c = PyLong_AsVoidPtr(h);
  if (PyErr_Occurred()) return NULL;
  int rc;
  GIL_RELEASED(rc = ext_lib.pm_reload(c));
  if (rc != 0) return ext_raise_status(c, rc);
  Py_RETURN_NONE;
}

PyObject *ext_text_or_none(const char *s) {
  if (s == NULL) Py_RETURN_NONE;
  return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

PyObject *ext_notice(PyObject *self, PyObject *h) {
  (void)self;
  pm_ctx *c = PyLong_AsVoidPtr(h);
  return PyErr_Occurred() ? NULL : ext_text_or_none(ext_lib.pm_notice(c));
}

PyObject *ext_version(PyObject *self, PyObject *unused) {
  (void)self, (void)unused;
  return ext_lib_ready() < 0 ? NULL : ext_text_or_none(ext_lib.pm_version());
}

PyObject *ext_errname(PyObject *self, PyObject *rc) {
  (void)self;
  long v = PyLong_AsLong(rc);
  return PyErr_Occurred() || ext_lib_ready() < 0 ? NULL
                                                 : ext_text_or_none(ext_lib.pm_errname((int)v));
}

PyObject *ext_setup(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *e, *ctx, *load, *empty;
  if (!PyArg_ParseTuple(args, "OOOO", &e, &ctx, &load, &empty)) return NULL;
  Py_INCREF(e), Py_INCREF(ctx), Py_INCREF(load), Py_INCREF(empty);
  Py_XDECREF(ext_error), Py_XDECREF(ext_context_of_device), Py_XDECREF(ext_load_library),
      Py_XDECREF(ext_empty_like);
  ext_error = e, ext_context_of_device = ctx, ext_load_library = load, ext_empty_like = empty;
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
  } names[] = {{&ext_str.cai, "__cuda_array_interface__"}, {&ext_str.dlpack, "__dlpack__"},
               {&ext_str.dlpack_device, "__dlpack_device__"}, {&ext_str.get_device, "get_device"},
               {&ext_str.dtype, "dtype"}, {&ext_str.data_ptr, "data_ptr"},
               {&ext_str.shape, "shape"}, {&ext_str.stride, "stride"},
               {&ext_str.device, "device"}, {&ext_str.type, "type"}, {&ext_str.index, "index"},
               {&ext_str.id, "id"}, {&ext_str.module, "__module__"},
               {&ext_str.tolist, "tolist"}, {&ext_str.array, "__array__"},
               {&ext_str.cupy, "cupy"}, {&ext_str.clamp, "clamp"},
               {&ext_str.cuda_stream, "cuda_stream"}, {&ext_str.ptr, "ptr"},
               {&ext_str.handle, "handle"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if ((*names[i].slot = PyUnicode_InternFromString(names[i].name)) == NULL) return NULL;
  return PyModule_Create(&module);
}
