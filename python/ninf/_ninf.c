/*
 * _ninf.c - the C half of the Python client (python/ninf/__init__.py is the
 * other): Ninf_call and grpc_call over the binding API (ninf_binding.h),
 * with each argument taken from a Python object.
 *
 * Arrays come through the buffer protocol, so a numpy array's own memory
 * goes to the wire and the results land in it: no copy either way. The
 * interface decides what each argument must be; the checks below refuse,
 * with the argument's position, name and what to pass instead, whatever
 * would be misread (a wrong dtype, a C-ordered matrix, a strided view, a
 * read-only OUT array, too few elements).
 *
 * The call runs without the GIL, so other Python threads (and the futures
 * of call_async) go on meanwhile; the binding's callbacks take it back
 * while they read Python objects, and so does the interrupt check that
 * lets Ctrl-C stop a call of the main thread.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdalign.h>
#include <stdarg.h>
#include <string.h>

#include "client/ninf_binding.h"

/* ----------------------------------------------------------------------
 * One call's arguments, kept until the call has been waited for.
 */

typedef struct {
  Py_buffer view; /* arrays: the caller's memory */
  int has_view;
  PyObject *text; /* IN strings: the UTF-8 bytes the call reads */
  /* An OUT pointer given as None (`info` in dgesv): the result lands
   * here and is returned by the call. */
  int use_slot;
  alignas(16) unsigned char slot[16];
  int type, mode;
  char name[64];
} py_arg;

typedef struct {
  PyObject *args; /* the caller's tuple, held */
  char label[128];
  int nparams;
  py_arg *a;
} py_call;

static void call_release(py_call *c) {
  if (c->a) {
    for (int i = 0; i < c->nparams; i++) {
      if (c->a[i].has_view) PyBuffer_Release(&c->a[i].view);
      Py_XDECREF(c->a[i].text);
    }
    PyMem_Free(c->a);
    c->a = NULL;
  }
  c->nparams = 0;
  Py_CLEAR(c->args);
}

/* numpy's name for what each IDL type needs ("float64"), from the type's
 * class and element size in ninf_types.h; filled once at import, read-only
 * after (verify() reads it without the GIL). */
static char dtype_names[NINF_TYPE_COUNT][16];

static void fill_dtype_names(void) {
  for (int type = 0; type < NINF_TYPE_COUNT; type++) {
    const ninf_type_info *t = ninf_type_info_of(type);
    const char *kind = "str";
    switch (t->cls) {
      case NINF_CLASS_INTEGER:
        kind = "int";
        break;
      case NINF_CLASS_REAL:
        kind = "float";
        break;
      case NINF_CLASS_COMPLEX:
        kind = "complex";
        break;
      case NINF_CLASS_STRING:
        break;
    }
    if (t->cls == NINF_CLASS_STRING)
      snprintf(dtype_names[type], sizeof dtype_names[type], "%s", kind);
    else
      snprintf(dtype_names[type], sizeof dtype_names[type], "%s%u", kind, t->element_size * 8);
  }
}

static const char *dtype_name(int type) {
  return type >= 0 && type < NINF_TYPE_COUNT ? dtype_names[type] : "?";
}

static const char *mode_name(int mode) {
  switch ((ninf_mode)mode) {
#define MODE_NAME_(NAME, value, word) \
  case NINF_MODE_##NAME:              \
    return word;
    NINF_MODE_MAP(MODE_NAME_)
#undef MODE_NAME_
  }
  return "?";
}

/* "argument 3 'a' of dgesv", the start of every message. */
static int where(char *err, size_t errlen, const py_call *c, int i) {
  return snprintf(err, errlen, "argument %d '%s' of %s", i + 1, c->a[i].name, c->label);
}

/* Refuses argument i: where() followed by the reason, so that every refusal
 * reads the same way. Returns -1, what a collector returns then. */
static int refuse(char *err, size_t errlen, const py_call *c, int i, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int refuse(char *err, size_t errlen, const py_call *c, int i, const char *fmt, ...) {
  int n = where(err, errlen, c, i);
  if (n < 0 || (size_t)n >= errlen) return -1; /* the buffer holds no more */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
  va_end(ap);
  return -1;
}

/* ----------------------------------------------------------------------
 * Buffer formats (struct module syntax): what the memory holds.
 */

typedef enum { KIND_SIGNED, KIND_UNSIGNED, KIND_CHAR, KIND_FLOAT, KIND_COMPLEX, KIND_OTHER } kind;

/* The element kind of a buffer, and numpy's name for it in `desc`. */
static kind buffer_kind(const Py_buffer *v, char *desc, size_t desclen) {
  const char *f = v->format ? v->format : "B";
  if (*f == '@' || *f == '=' || *f == '<') f++;
  unsigned bits = (unsigned)v->itemsize * 8;
  kind k = KIND_OTHER;
  if (f[0] && !f[1] && strchr("bhilq", f[0])) k = KIND_SIGNED;
  if (f[0] && !f[1] && strchr("BHILQ?", f[0])) k = KIND_UNSIGNED;
  if (f[0] == 'c' && !f[1]) k = KIND_CHAR;
  if (f[0] && !f[1] && strchr("efdg", f[0])) k = KIND_FLOAT;
  if (f[0] == 'Z' && f[1] && !f[2] && strchr("efdg", f[1])) k = KIND_COMPLEX;
  switch (k) {
    case KIND_SIGNED:
      snprintf(desc, desclen, "int%u", bits);
      break;
    case KIND_UNSIGNED:
      snprintf(desc, desclen, "uint%u", bits);
      break;
    case KIND_CHAR:
      snprintf(desc, desclen, "bytes");
      break;
    case KIND_FLOAT:
      snprintf(desc, desclen, "float%u", bits);
      break;
    case KIND_COMPLEX:
      snprintf(desc, desclen, "complex%u", bits);
      break;
    case KIND_OTHER:
      snprintf(desc, desclen, "format '%s'", v->format ? v->format : "B");
      break;
  }
  return k;
}

/* Whether a buffer's elements are the IDL type's, bit for bit. char
 * arrays also take bytes and bytearray (unsigned bytes). */
static int buffer_matches(const Py_buffer *v, int type, kind k) {
  const ninf_type_info *t = ninf_type_info_of(type);
  if (!t || (unsigned)v->itemsize != t->element_size) return 0;
  switch (t->cls) {
    case NINF_CLASS_INTEGER:
      return k == KIND_SIGNED || (type == NINF_TYPE_CHAR && (k == KIND_UNSIGNED || k == KIND_CHAR));
    case NINF_CLASS_REAL:
      return k == KIND_FLOAT;
    case NINF_CLASS_COMPLEX:
      return k == KIND_COMPLEX;
    case NINF_CLASS_STRING:
      return 0;
  }
  return 0;
}

/* ----------------------------------------------------------------------
 * Collecting the arguments (the binding's collect callback, GIL held).
 */

static int fits(long long x, unsigned bytes) {
  if (bytes >= 8) return 1;
  long long lim = 1LL << (bytes * 8 - 1);
  return x >= -lim && x < lim;
}

/* A Python exception raised while reading an argument becomes the
 * message; the exception itself is dropped (the call reports it). */
static void append_python_error(char *err, size_t errlen) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyObject *s = value ? PyObject_Str(value) : NULL;
  const char *text = s ? PyUnicode_AsUTF8(s) : NULL;
  size_t used = strlen(err);
  if (text && used < errlen) snprintf(err + used, errlen - used, " (%s)", text);
  PyErr_Clear();
  Py_XDECREF(s);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
}

/* Scalars: one function per type class, each producing its own message;
 * the class switch below names every class, so a new one is a compile
 * error until it has a collector. */
static int collect_integer(py_call *c, int i, PyObject *o, const ninf_type_info *t,
                           ninf_binding_value *v, char *err, size_t errlen) {
  PyObject *index = PyFloat_Check(o) || PyComplex_Check(o) ? NULL : PyNumber_Index(o);
  if (!index) {
    PyErr_Clear();
    return refuse(err, errlen, c, i, " takes an integer (IDL %s), got %s%s", t->name,
                  Py_TYPE(o)->tp_name, PyFloat_Check(o) ? ": use int(x) if it is whole" : "");
  }
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(index, &overflow);
  Py_DECREF(index);
  if (overflow || !fits(x, t->element_size)) {
    PyObject *s = PyObject_Str(o);
    refuse(err, errlen, c, i, " = %s does not fit the IDL type %s (%u bytes)",
           s ? PyUnicode_AsUTF8(s) : "?", t->name, t->element_size);
    Py_XDECREF(s);
    PyErr_Clear();
    return -1;
  }
  v->i = x;
  return 0;
}

static int collect_real(py_call *c, int i, PyObject *o, const ninf_type_info *t,
                        ninf_binding_value *v, char *err, size_t errlen) {
  /* Refused by type before any conversion: numpy's complex scalars would
   * convert, silently dropping the imaginary part. */
  double d =
      PyComplex_Check(o) || PyUnicode_Check(o) || PyBytes_Check(o) ? -1.0 : PyFloat_AsDouble(o);
  if (PyComplex_Check(o) || PyUnicode_Check(o) || PyBytes_Check(o) ||
      (d == -1.0 && PyErr_Occurred())) {
    PyErr_Clear();
    return refuse(err, errlen, c, i, " takes a real number (IDL %s), got %s", t->name,
                  Py_TYPE(o)->tp_name);
  }
  v->d = d;
  return 0;
}

static int collect_complex(py_call *c, int i, PyObject *o, const ninf_type_info *t,
                           ninf_binding_value *v, char *err, size_t errlen) {
  Py_complex z =
      PyUnicode_Check(o) || PyBytes_Check(o) ? (Py_complex){-1.0, 0.0} : PyComplex_AsCComplex(o);
  if (PyUnicode_Check(o) || PyBytes_Check(o) || (z.real == -1.0 && PyErr_Occurred())) {
    PyErr_Clear();
    return refuse(err, errlen, c, i, " takes a complex number (IDL %s), got %s", t->name,
                  Py_TYPE(o)->tp_name);
  }
  v->re = z.real;
  v->im = z.imag;
  return 0;
}

/* The bytes object is kept in the argument (released by call_release), so
 * the pointer handed to the call stays valid until it ends. */
static int collect_string(py_call *c, int i, PyObject *o, ninf_binding_value *v, char *err,
                          size_t errlen) {
  py_arg *a = &c->a[i];
  if (PyUnicode_Check(o))
    a->text = PyUnicode_AsUTF8String(o);
  else if (PyBytes_Check(o))
    a->text = Py_NewRef(o);
  if (!a->text) {
    refuse(err, errlen, c, i, " takes a str or bytes, got %s", Py_TYPE(o)->tp_name);
    append_python_error(err, errlen);
    return -1;
  }
  const char *s = PyBytes_AS_STRING(a->text);
  if (strlen(s) != (size_t)PyBytes_GET_SIZE(a->text)) {
    return refuse(err, errlen, c, i, " holds a NUL character: strings end at the first");
  }
  v->s = s;
  return 0;
}

static int collect_scalar(py_call *c, int i, PyObject *o, ninf_binding_value *v, char *err,
                          size_t errlen) {
  const ninf_type_info *t = ninf_type_info_of(c->a[i].type);
  switch (t->cls) {
    case NINF_CLASS_INTEGER:
      return collect_integer(c, i, o, t, v, err, errlen);
    case NINF_CLASS_REAL:
      return collect_real(c, i, o, t, v, err, errlen);
    case NINF_CLASS_COMPLEX:
      return collect_complex(c, i, o, t, v, err, errlen);
    case NINF_CLASS_STRING:
      return collect_string(c, i, o, v, err, errlen);
  }
  return -1;
}

/* An array parameter given None: refused for data the call reads; for OUT a
 * one-element result, returned by the call (verify() refuses more); WORK is
 * never touched on this side. */
static int collect_none_array(py_call *c, int i, ninf_binding_value *v, char *err, size_t errlen) {
  py_arg *a = &c->a[i];
  if (a->mode == NINF_MODE_IN || a->mode == NINF_MODE_INOUT) {
    return refuse(err, errlen, c, i,
                  " is %s: pass a %s array (numpy.asfortranarray(..., dtype=numpy.%s)), not None",
                  mode_name(a->mode), dtype_name(a->type), dtype_name(a->type));
  }
  a->use_slot = 1;
  memset(a->slot, 0, sizeof a->slot);
  v->p = a->slot;
  return 0;
}

/* The buffer's element type and writability against the parameter's IDL
 * type and mode. */
static int check_array_type(py_call *c, int i, char *err, size_t errlen) {
  py_arg *a = &c->a[i];
  int writes = a->mode == NINF_MODE_OUT || a->mode == NINF_MODE_INOUT;
  char got[48];
  kind k = buffer_kind(&a->view, got, sizeof got);
  if (!buffer_matches(&a->view, a->type, k)) {
    return refuse(err, errlen, c, i,
                  " is IDL %s: pass a numpy.%s array, got %s (convert with .astype(numpy.%s), "
                  "which copies)",
                  ninf_type_info_of(a->type)->name, dtype_name(a->type), got, dtype_name(a->type));
  }
  if (writes && a->view.readonly) {
    return refuse(err, errlen, c, i,
                  " is %s and the array is read-only: the result is written into it, so pass a "
                  "writable array (numpy.array(x) makes one)",
                  mode_name(a->mode));
  }
  return 0;
}

/* The buffer's shape and memory order: the call reads and writes it as one
 * column-major block. */
static int check_array_layout(py_call *c, int i, int rank, char *err, size_t errlen) {
  py_arg *a = &c->a[i];
  if (a->view.ndim > 1 && a->view.ndim != rank) {
    return refuse(err, errlen, c, i,
                  " has %d dimension%s in the interface, the array has %d (a flat array is "
                  "taken too)",
                  rank, rank == 1 ? "" : "s", a->view.ndim);
  }
  /* The IDL writes dimensions outermost first, a[n][lda]: lda varies
   * fastest, as in Fortran's A(LDA, N). That is a numpy array of shape
   * (lda, n) in Fortran order; a C-ordered one would be its transpose. */
  if (a->view.ndim > 1 && !PyBuffer_IsContiguous(&a->view, 'F')) {
    return refuse(err, errlen, c, i, "%s",
                  PyBuffer_IsContiguous(&a->view, 'C')
                      ? " is in C order: Ninf arrays are column-major, as in Fortran and LAPACK; "
                        "pass numpy.asfortranarray(x), or create it with order='F'"
                      : " is not contiguous (a strided view?): pass numpy.asfortranarray(x), "
                        "which copies it into one block");
  }
  if (a->view.ndim <= 1 && !PyBuffer_IsContiguous(&a->view, 'A')) {
    return refuse(err, errlen, c, i,
                  " is not contiguous (a slice with a step?): pass numpy.ascontiguousarray(x), "
                  "which copies it into one block");
  }
  return 0;
}

/* Arrays and pointer parameters: the caller's buffer itself. */
static int collect_array(py_call *c, int i, PyObject *o, int rank, ninf_binding_value *v, char *err,
                         size_t errlen) {
  py_arg *a = &c->a[i];
  if (o == Py_None) return collect_none_array(c, i, v, err, errlen);
  if (PyObject_GetBuffer(o, &a->view, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();
    return refuse(err, errlen, c, i, " is an array: pass a numpy.%s array, not %s",
                  dtype_name(a->type), Py_TYPE(o)->tp_name);
  }
  a->has_view = 1; /* released by call_release, whatever the checks say */
  if (check_array_type(c, i, err, errlen) != 0) return -1;
  if (check_array_layout(c, i, rank, err, errlen) != 0) return -1;
  /* The pointer is the caller's memory; an empty buffer may have none. */
  v->p = a->view.buf ? a->view.buf : a->slot;
  return 0;
}

static int collect_locked(py_call *c, int nparams, const ninf_param_info *params,
                          ninf_binding_value *values, char *err, size_t errlen) {
  Py_ssize_t given = PyTuple_GET_SIZE(c->args);
  if (given != nparams) {
    int n = snprintf(err, errlen, "%s takes %d argument%s (", c->label, nparams,
                     nparams == 1 ? "" : "s");
    for (int i = 0; i < nparams && (size_t)n < errlen; i++)
      n += snprintf(err + n, errlen - (size_t)n, "%s%s %s", i ? ", " : "",
                    mode_name(params[i].mode), params[i].name);
    if ((size_t)n < errlen) snprintf(err + n, errlen - (size_t)n, "), got %zd", given);
    return -1;
  }
  c->a = PyMem_Calloc((size_t)(nparams ? nparams : 1), sizeof *c->a);
  if (!c->a) return snprintf(err, errlen, "out of memory"), -1;
  c->nparams = nparams;
  for (int i = 0; i < nparams; i++) {
    py_arg *a = &c->a[i];
    a->type = params[i].type;
    a->mode = params[i].mode;
    snprintf(a->name, sizeof a->name, "%s", params[i].name ? params[i].name : "?");
    if (!ninf_type_info_of(a->type)) {
      where(err, errlen, c, i);
      return -1;
    }
    PyObject *o = PyTuple_GET_ITEM(c->args, i);
    int rc = params[i].is_array ? collect_array(c, i, o, params[i].rank, &values[i], err, errlen)
                                : collect_scalar(c, i, o, &values[i], err, errlen);
    if (rc != 0) return -1;
  }
  return 0;
}

static int collect(void *ctx, int nparams, const ninf_param_info *params,
                   ninf_binding_value *values, char *err, size_t errlen) {
  py_call *c = ctx;
  PyGILState_STATE gil = PyGILState_Ensure();
  /* A call collected twice (a retry) starts from scratch. */
  PyObject *args = Py_NewRef(c->args);
  call_release(c);
  c->args = args;
  int rc = collect_locked(c, nparams, params, values, err, errlen);
  PyGILState_Release(gil);
  return rc;
}

/* How many elements the call moves, against what the argument holds.
 * Reads only C fields: no GIL needed. */
static int verify(void *ctx, int index, unsigned long long elements, char *err, size_t errlen) {
  py_call *c = ctx;
  if (index < 0 || index >= c->nparams) return 0;
  py_arg *a = &c->a[index];
  if (a->mode == NINF_MODE_WORK) return 0;
  if (a->use_slot) {
    if (elements <= 1) return 0;
    return refuse(err, errlen, c, index,
                  " is an OUT array of %llu elements: pass numpy.empty(%llu, dtype=numpy.%s) (None "
                  "stands only for a single value)",
                  elements, elements, dtype_name(a->type));
  }
  unsigned long long have =
      (unsigned long long)(a->view.len / (a->view.itemsize ? a->view.itemsize : 1));
  if (have >= elements) return 0;
  return refuse(err, errlen, c, index,
                ": the call moves %llu elements, the array has %llu (check the dimensions "
                "given before it)",
                elements, have);
}

/* The OUT values that came back in slots, as Python objects: None for
 * none, the value for one, a tuple for several. */
static PyObject *slot_value(const py_arg *a) {
  switch ((ninf_type)a->type) {
    case NINF_TYPE_CHAR:
      return PyLong_FromLong(*(const signed char *)a->slot);
    case NINF_TYPE_SHORT:
      return PyLong_FromLong(*(const short *)a->slot);
    case NINF_TYPE_INT:
      return PyLong_FromLong(*(const int *)a->slot);
    case NINF_TYPE_LONG:
      return PyLong_FromLongLong(*(const long long *)a->slot);
    case NINF_TYPE_FLOAT:
      return PyFloat_FromDouble(*(const float *)a->slot);
    case NINF_TYPE_DOUBLE:
      return PyFloat_FromDouble(*(const double *)a->slot);
    case NINF_TYPE_SCOMPLEX: {
      const float *z = (const float *)a->slot;
      return PyComplex_FromDoubles(z[0], z[1]);
    }
    case NINF_TYPE_DCOMPLEX: {
      const double *z = (const double *)a->slot;
      return PyComplex_FromDoubles(z[0], z[1]);
    }
    case NINF_TYPE_STRING:
      break;
  }
  Py_RETURN_NONE;
}

static PyObject *call_results(const py_call *c) {
  int count = 0;
  for (int i = 0; i < c->nparams; i++) count += c->a[i].use_slot && c->a[i].mode == NINF_MODE_OUT;
  if (count == 0) Py_RETURN_NONE;
  PyObject *out = PyTuple_New(count);
  if (!out) return NULL;
  for (int i = 0, k = 0; i < c->nparams; i++) {
    if (!(c->a[i].use_slot && c->a[i].mode == NINF_MODE_OUT)) continue;
    PyObject *x = slot_value(&c->a[i]);
    if (!x) return Py_DECREF(out), NULL;
    PyTuple_SET_ITEM(out, k++, x);
  }
  if (count == 1) {
    PyObject *one = Py_NewRef(PyTuple_GET_ITEM(out, 0));
    Py_DECREF(out);
    return one;
  }
  return out;
}

/* ----------------------------------------------------------------------
 * Ctrl-C: libninf's interrupt check (Ninf_binding_set_interrupt).
 *
 * Python runs signal handlers in the main thread only, with the GIL held.
 * A blocking libninf call made from the main thread marks the thread
 * (interrupt_begin); libninf then calls interrupt_check between the slices
 * of its waits (at most 100 ms) and at once when a signal interrupted one.
 * The check takes the GIL and runs the pending handlers
 * (PyErr_CheckSignals). When one raised (KeyboardInterrupt from SIGINT),
 * its exception is kept and libninf told to stop: it resets the call's
 * connection, ninfd kills the executable, and the call returns. Back with
 * the GIL, interrupt_end puts the kept exception back and the call raises
 * it in place of its own error (or result). A handler that returns
 * normally lets the call go on, as it would let time.sleep.
 *
 * Other threads never handle signals: their check answers 0 without the
 * GIL, so libninf's session threads and calls from other Python threads
 * cost nothing here.
 */

/* threading.main_thread().ident, from import time. */
static unsigned long main_thread_id;
/* This thread is the main one, inside a blocking libninf call. */
static _Thread_local int interruptible;
/* Written and read by the main thread only (with the GIL, or inside its
 * own call): a handler raised during the current call, and what. */
static int interrupted;
static PyObject *kept_type, *kept_value, *kept_tb;
/* The main thread's blocking calls in progress: a signal handler that the
 * check runs may itself make a ninf call, which must neither reset the
 * outer call's state nor end its interruptibility. */
static int depth;
/* The check is running the handlers: a nested call's waits do not run
 * them again (they answer what the outer check will). */
static int in_check;

static int interrupt_check(void) {
  if (!interruptible) return 0;
  /* Sticky for the rest of the call: every later wait of it (a fallback
   * server, the report to a metaserver) stops at once too. */
  if (interrupted) return 1;
  if (in_check) return 0;
  PyGILState_STATE gil = PyGILState_Ensure();
  in_check = 1;
  if (PyErr_CheckSignals() != 0) {
    PyErr_Fetch(&kept_type, &kept_value, &kept_tb);
    interrupted = 1;
  }
  in_check = 0;
  PyGILState_Release(gil);
  return interrupted;
}

/* Before a blocking libninf call (GIL held). */
static void interrupt_begin(void) {
  if (PyThread_get_thread_ident() != main_thread_id) return;
  if (depth++ > 0) return; /* a handler's call inside another: the outer's state holds */
  interruptible = 1;
  interrupted = 0;
}

/* After it, with the GIL again: 1 when a signal handler raised during the
 * call, whose exception is then set (the caller returns NULL), else 0. */
static int interrupt_end(void) {
  if (!interruptible) return 0;
  if (--depth > 0) return 0;
  interruptible = 0;
  if (!interrupted) return 0;
  interrupted = 0;
  PyErr_Restore(kept_type, kept_value, kept_tb);
  kept_type = kept_value = kept_tb = NULL;
  return 1;
}

/* Sets libninf's check once the main thread is known. */
static int install_interrupt_check(void) {
  PyObject *threading = PyImport_ImportModule("threading");
  PyObject *main = threading ? PyObject_CallMethod(threading, "main_thread", NULL) : NULL;
  PyObject *ident = main ? PyObject_GetAttrString(main, "ident") : NULL;
  Py_XDECREF(threading);
  Py_XDECREF(main);
  if (!ident) return -1;
  main_thread_id = PyLong_AsUnsignedLong(ident);
  Py_DECREF(ident);
  if (PyErr_Occurred()) return -1;
  Ninf_binding_set_interrupt(interrupt_check);
  return 0;
}

/* ----------------------------------------------------------------------
 * Errors: ninf.Error (code, name, detail) and ninf.ArgumentError.
 */

static PyObject *Error, *ArgumentError;

static PyObject *raise_error(int code, const char *detail) {
  const char *text = Ninf_error_string(code);
  PyObject *type = code == NINF_ERR_ARGUMENT_MISMATCH || code == NINF_ERR_INVALID_ARGUMENT
                       ? ArgumentError
                       : Error;
  PyObject *msg =
      detail && *detail ? PyUnicode_FromFormat("%s: %s", text, detail) : PyUnicode_FromString(text);
  if (!msg) return NULL;
  PyObject *exc = PyObject_CallOneArg(type, msg);
  Py_DECREF(msg);
  if (!exc) return NULL;
  PyObject *pycode = PyLong_FromLong(code);
  PyObject *pydetail = PyUnicode_FromString(detail ? detail : "");
  if (pycode && pydetail) {
    PyObject_SetAttrString(exc, "code", pycode);
    PyObject_SetAttrString(exc, "detail", pydetail);
  }
  Py_XDECREF(pycode);
  Py_XDECREF(pydetail);
  PyErr_SetObject(type, exc);
  Py_DECREF(exc);
  return NULL;
}

/* This thread's last libninf error, raised. */
static PyObject *raise_last(void) {
  int code = Ninf_get_error();
  return raise_error(code ? code : NINF_ERR_INTERNAL, Ninf_get_error_detail());
}

/* ----------------------------------------------------------------------
 * Handles: _ninf.Handle(name, server=None) over grpc_function_handle_t.
 */

typedef struct {
  PyObject_HEAD grpc_function_handle_t h;
  int open;
  char name[128];
} HandleObject;

static int ensure_grpc(void) {
  grpc_error_t e = grpc_initialize(NULL);
  if (e == GRPC_NO_ERROR || e == GRPC_ALREADY_INITIALIZED) return 0;
  raise_error(Ninf_get_error() ? Ninf_get_error() : NINF_ERR_CONFIG, grpc_error_string(e));
  return -1;
}

static int Handle_init(HandleObject *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"name", "server", NULL};
  const char *name, *server = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "s|z", names, &name, &server)) return -1;
  if (self->open) {
    PyErr_SetString(PyExc_RuntimeError, "the handle is already open");
    return -1;
  }
  if (ensure_grpc() != 0) return -1;
  snprintf(self->name, sizeof self->name, "%s", name);
  grpc_error_t e;
  interrupt_begin(); /* it connects and asks the server */
  Py_BEGIN_ALLOW_THREADS;
  e = server ? grpc_function_handle_init(&self->h, (char *)server, (char *)name)
             : grpc_function_handle_default(&self->h, (char *)name);
  Py_END_ALLOW_THREADS;
  if (interrupt_end()) {
    if (e == GRPC_NO_ERROR) grpc_function_handle_destruct(&self->h);
    return -1;
  }
  if (e != GRPC_NO_ERROR) return raise_last(), -1;
  self->open = 1;
  return 0;
}

static PyObject *Handle_close(HandleObject *self, PyObject *unused) {
  (void)unused;
  if (self->open) {
    self->open = 0;
    /* Without the GIL: ending the handle writes FRAME_END to its
     * executable, a socket write that may wait, and takes the handle's
     * call lock. */
    Py_BEGIN_ALLOW_THREADS;
    grpc_function_handle_destruct(&self->h);
    Py_END_ALLOW_THREADS;
  }
  Py_RETURN_NONE;
}

static void Handle_dealloc(HandleObject *self) {
  /* The destruct writes to the socket and takes the handle's lock: not
   * with the GIL held (as Handle_close). */
  if (self->open) {
    Py_BEGIN_ALLOW_THREADS;
    grpc_function_handle_destruct(&self->h);
    Py_END_ALLOW_THREADS;
  }
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static int handle_usable(HandleObject *h) {
  if (h->open) return 1;
  raise_error(NINF_ERR_INVALID_ARGUMENT, "the handle is closed");
  return 0;
}

/* ----------------------------------------------------------------------
 * Calls: _ninf.call(name, args, handle=None) waits; _ninf.start(...)
 * returns a Pending whose wait() finishes it.
 */

typedef struct {
  PyObject_HEAD py_call call;
  int id;           /* Ninf or GridRPC session id (one table: Ninf_wait waits for both) */
  int finished;     /* waited for: the buffers are released */
  int waiting;      /* wait() calls in progress (they drop the GIL) */
  PyObject *handle; /* held so that the handle outlives the call */
} PendingObject;

static PyTypeObject HandleType, PendingType;

static ninf_binding_args binding_of(py_call *c) {
  ninf_binding_args b = {.collect = collect, .verify = verify, .ctx = c};
  return b;
}

static int prepare(py_call *c, const char *name, PyObject *args) {
  if (!PyTuple_Check(args)) {
    PyErr_SetString(PyExc_TypeError, "args must be a tuple");
    return -1;
  }
  memset(c, 0, sizeof *c);
  snprintf(c->label, sizeof c->label, "%s", name);
  c->args = Py_NewRef(args);
  return 0;
}

static int parse_call(PyObject *args, PyObject *kw, const char **name, PyObject **tuple,
                      HandleObject **handle) {
  static char *names[] = {"name", "args", "handle", NULL};
  *handle = NULL;
  PyObject *h = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "sO!|O", names, name, &PyTuple_Type, tuple, &h))
    return -1;
  if (h != Py_None) {
    if (!PyObject_TypeCheck(h, &HandleType)) {
      PyErr_SetString(PyExc_TypeError, "handle must be a ninf.Handle");
      return -1;
    }
    *handle = (HandleObject *)h;
    if (!handle_usable(*handle)) return -1;
  }
  return 0;
}

static PyObject *py_call_sync(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  const char *name;
  PyObject *tuple;
  HandleObject *handle;
  if (parse_call(args, kw, &name, &tuple, &handle) != 0) return NULL;
  py_call c;
  if (prepare(&c, name, tuple) != 0) return NULL;
  ninf_binding_args b = binding_of(&c);
  int failed;
  interrupt_begin();
  Py_BEGIN_ALLOW_THREADS;
  failed = handle ? grpc_call_binding(&handle->h, &b) != GRPC_NO_ERROR
                  : Ninf_call_binding(name, &b) != 0;
  Py_END_ALLOW_THREADS;
  /* An interrupt wins even over a call that got through after it: the
   * handler raised, so the caller gets its exception. */
  PyObject *result = interrupt_end() ? NULL : failed ? raise_last() : call_results(&c);
  call_release(&c);
  return result;
}

static PyObject *py_call_start(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  const char *name;
  PyObject *tuple;
  HandleObject *handle;
  if (parse_call(args, kw, &name, &tuple, &handle) != 0) return NULL;
  PendingObject *p = PyObject_New(PendingObject, &PendingType);
  if (!p) return NULL;
  memset(&p->call, 0, sizeof p->call); /* PyObject_New leaves the fields unset */
  p->finished = 1;                     /* until started: nothing to wait for */
  p->waiting = 0;
  p->handle = NULL;
  if (prepare(&p->call, name, tuple) != 0) return Py_DECREF(p), NULL;
  ninf_binding_args b = binding_of(&p->call);
  int id = -1, failed;
  /* Starting connects and fetches the interface in this thread (call_async
   * does it on a thread of its own, where the check answers 0). */
  interrupt_begin();
  Py_BEGIN_ALLOW_THREADS;
  if (handle)
    failed = grpc_call_async_binding(&handle->h, &id, &b) != GRPC_NO_ERROR;
  else
    failed = (id = Ninf_call_async_binding(name, &b)) < 0;
  Py_END_ALLOW_THREADS;
  if (interrupt_end()) {
    /* Started before the interrupt came: the call holds the arguments, so
     * it is cancelled and waited for before they are let go (dealloc). */
    if (!failed) {
      p->id = id;
      p->handle = handle ? Py_NewRef((PyObject *)handle) : NULL;
      p->finished = 0;
      Py_BEGIN_ALLOW_THREADS;
      (void)grpc_initialize(NULL); /* what grpc_cancel needs; "already" is fine */
      (void)grpc_cancel(id);
      Py_END_ALLOW_THREADS;
    }
    Py_DECREF(p);
    return NULL;
  }
  if (failed) {
    raise_last();
    Py_DECREF(p);
    return NULL;
  }
  p->id = id;
  p->handle = handle ? Py_NewRef((PyObject *)handle) : NULL;
  p->finished = 0;
  return (PyObject *)p;
}

static PyObject *Pending_wait(PendingObject *self, PyObject *unused) {
  (void)unused;
  if (self->finished) return raise_error(NINF_ERR_INVALID_ID, "the call was already waited for");
  int failed;
  self->waiting++;
  Py_BEGIN_ALLOW_THREADS;
  /* Ninf_wait also for a handle's call: it reports the call's own error,
   * and still works after ninf.finalize ended the GridRPC state. */
  failed = Ninf_wait(self->id) != 0;
  Py_END_ALLOW_THREADS;
  self->waiting--;
  /* Two threads may wait on one call, and grpc_finalize (ninf.finalize)
   * waits for every call: libninf gives the result to one wait and
   * NINF_ERR_INVALID_ID to the others. A failed wait leaves the buffers to
   * a wait() of this object still running, which may be the one that got
   * the result and reads it. */
  if (failed) {
    PyObject *none = raise_last();
    if (self->waiting == 0) {
      self->finished = 1;
      call_release(&self->call);
      Py_CLEAR(self->handle);
    }
    return none;
  }
  PyObject *result = call_results(&self->call);
  self->finished = 1;
  call_release(&self->call);
  Py_CLEAR(self->handle);
  return result;
}

/* Asks the call to stop; wait() then reports NINF_ERR_CANCELLED unless it
 * had already finished. */
static PyObject *Pending_cancel(PendingObject *self, PyObject *unused) {
  (void)unused;
  if (self->finished) Py_RETURN_FALSE;
  if (ensure_grpc() != 0) return NULL;
  grpc_error_t e;
  Py_BEGIN_ALLOW_THREADS;
  e = grpc_cancel(self->id);
  Py_END_ALLOW_THREADS;
  return PyBool_FromLong(e == GRPC_NO_ERROR);
}

static void Pending_dealloc(PendingObject *self) {
  /* Dropped without wait(): the call may still be writing into the
   * buffers, so it is waited for before they are let go. */
  if (!self->finished) {
    Py_BEGIN_ALLOW_THREADS;
    Ninf_wait(self->id);
    Py_END_ALLOW_THREADS;
  }
  call_release(&self->call);
  Py_CLEAR(self->handle);
  PyObject_Free(self);
}

/* ----------------------------------------------------------------------
 * Module functions.
 */

/* "host[:port]" or "[v6addr]:port", parsed by libninf as for -server. */
static PyObject *py_set_server(PyObject *self, PyObject *args) {
  (void)self;
  const char *address;
  if (!PyArg_ParseTuple(args, "s", &address)) return NULL;
  if (Ninf_binding_set_server(address, "ninf.set_server()") != 0) return raise_last();
  Py_RETURN_NONE;
}

static PyObject *py_initialize(PyObject *self, PyObject *args) {
  (void)self;
  const char *config = NULL;
  if (!PyArg_ParseTuple(args, "|z", &config)) return NULL;
  grpc_error_t e = grpc_initialize((char *)config);
  if (e == GRPC_NO_ERROR) Py_RETURN_NONE;
  int code = Ninf_get_error();
  const char *detail = Ninf_get_error_detail();
  return raise_error(code ? code : NINF_ERR_CONFIG,
                     detail && *detail ? detail : grpc_error_string(e));
}

/* grpc_finalize cancels every call and waits for them: without the GIL, so
 * that a call that needs it (its arguments are read again when it is
 * retried) can end, and the futures' threads go on meanwhile. */
static PyObject *py_finalize(PyObject *self, PyObject *unused) {
  (void)self, (void)unused;
  Py_BEGIN_ALLOW_THREADS;
  grpc_finalize();
  Py_END_ALLOW_THREADS;
  Py_RETURN_NONE;
}

/* The server's own answers as JSON text (ninf_binding.h), which the
 * Python half parses: functions(server=None), describe(name, server=None). */
static PyObject *json_result(int rc, char *json) {
  if (rc != 0) return raise_last();
  PyObject *text = PyUnicode_FromString(json ? json : "null");
  Ninf_binding_free(json);
  return text;
}

static PyObject *py_functions(PyObject *self, PyObject *args) {
  (void)self;
  const char *server = NULL;
  if (!PyArg_ParseTuple(args, "|z", &server)) return NULL;
  char *json = NULL;
  int rc;
  interrupt_begin();
  Py_BEGIN_ALLOW_THREADS;
  rc = Ninf_binding_functions(server, &json);
  Py_END_ALLOW_THREADS;
  if (interrupt_end()) {
    Ninf_binding_free(json);
    return NULL;
  }
  return json_result(rc, json);
}

static PyObject *py_describe(PyObject *self, PyObject *args) {
  (void)self;
  const char *name, *server = NULL;
  if (!PyArg_ParseTuple(args, "s|z", &name, &server)) return NULL;
  char *json = NULL;
  int rc;
  interrupt_begin();
  Py_BEGIN_ALLOW_THREADS;
  rc = Ninf_binding_describe(server, name, &json);
  Py_END_ALLOW_THREADS;
  if (interrupt_end()) {
    Ninf_binding_free(json);
    return NULL;
  }
  return json_result(rc, json);
}

static PyObject *py_error_string(PyObject *self, PyObject *args) {
  (void)self;
  int code;
  if (!PyArg_ParseTuple(args, "i", &code)) return NULL;
  return PyUnicode_FromString(Ninf_error_string(code));
}

static PyMethodDef handle_methods[] = {
    {"close", (PyCFunction)Handle_close, METH_NOARGS, "Releases the handle (idempotent)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject HandleType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ninf._ninf.Handle",
    .tp_basicsize = sizeof(HandleObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A GridRPC function handle: one function on one server.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Handle_init,
    .tp_dealloc = (destructor)Handle_dealloc,
    .tp_methods = handle_methods,
};

static PyMethodDef pending_methods[] = {
    {"wait", (PyCFunction)Pending_wait, METH_NOARGS, "Waits for the call; returns its OUT values."},
    {"cancel", (PyCFunction)Pending_cancel, METH_NOARGS, "Asks the call to stop."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject PendingType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ninf._ninf.Pending",
    .tp_basicsize = sizeof(PendingObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A call started by start(); wait() finishes it.",
    .tp_dealloc = (destructor)Pending_dealloc,
    .tp_methods = pending_methods,
};

static PyMethodDef module_methods[] = {
    {"call", (PyCFunction)(void (*)(void))py_call_sync, METH_VARARGS | METH_KEYWORDS,
     "call(name, args, handle=None): a remote call; returns the OUT values passed as None."},
    {"start", (PyCFunction)(void (*)(void))py_call_start, METH_VARARGS | METH_KEYWORDS,
     "start(name, args, handle=None): starts a call; returns a Pending."},
    {"set_server", py_set_server, METH_VARARGS, "set_server(\"host[:port]\")"},
    {"initialize", py_initialize, METH_VARARGS, "initialize(config=None): grpc_initialize"},
    {"finalize", py_finalize, METH_NOARGS, "grpc_finalize"},
    {"error_string", py_error_string, METH_VARARGS, "The text of a Ninf error code."},
    {"functions", py_functions, METH_VARARGS,
     "functions(server=None): the served function names, as JSON text."},
    {"describe", py_describe, METH_VARARGS,
     "describe(name, server=None): one function's interface, as JSON text."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "ninf._ninf",
    .m_doc = "Ninf_call and grpc_call for Python (see the ninf package).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__ninf(void) {
  fill_dtype_names();
  if (PyType_Ready(&HandleType) < 0 || PyType_Ready(&PendingType) < 0) return NULL;
  if (install_interrupt_check() < 0) return NULL;
  // A connect error's advice in Python's words, not C's.
  Ninf_binding_set_server_advice(
      "call ninf.set_server(\"host:port\") with a running one, or pass server=\"host:port\" "
      "to the call (NINF_SERVER=host:port in the environment before Python starts works too)");
  PyObject *m = PyModule_Create(&module);
  if (!m) return NULL;
  Error = PyErr_NewExceptionWithDoc("ninf.Error",
                                    "A failed Ninf call; .code is the Ninf error code, .detail "
                                    "the library's message.",
                                    NULL, NULL);
  PyObject *bases = Error ? PyTuple_Pack(2, Error, PyExc_TypeError) : NULL;
  ArgumentError =
      bases ? PyErr_NewExceptionWithDoc("ninf.ArgumentError",
                                        "Arguments that do not match the interface.", bases, NULL)
            : NULL;
  Py_XDECREF(bases);
  if (!ArgumentError || PyModule_AddObjectRef(m, "Error", Error) < 0 ||
      PyModule_AddObjectRef(m, "ArgumentError", ArgumentError) < 0 ||
      PyModule_AddObjectRef(m, "Handle", (PyObject *)&HandleType) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  /* dtypes: IDL type name -> numpy dtype name ("double" -> "float64"),
   * from the type table, for the Python half's conversions. */
  PyObject *dtypes = PyDict_New();
  for (int type = 0; dtypes && type < NINF_TYPE_COUNT; type++) {
    const ninf_type_info *t = ninf_type_info_of(type);
    if (t->cls == NINF_CLASS_STRING) continue;
    PyObject *v = PyUnicode_FromString(dtype_names[type]);
    if (!v || PyDict_SetItemString(dtypes, t->name, v) < 0) Py_CLEAR(dtypes);
    Py_XDECREF(v);
  }
  if (!dtypes || PyModule_AddObjectRef(m, "dtypes", dtypes) < 0) {
    Py_XDECREF(dtypes);
    Py_DECREF(m);
    return NULL;
  }
  Py_DECREF(dtypes);
#define ADD_CODE_(name, value, text, grpc, elsewhere) PyModule_AddIntConstant(m, #name, value);
  NINF_ERROR_MAP(ADD_CODE_)
#undef ADD_CODE_
  return m;
}
