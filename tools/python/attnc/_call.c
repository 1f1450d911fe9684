/* attnc._call: a kernel launch from Python in a few microseconds.
 *
 * Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * The ctypes path spends about 2 microseconds per tensor (a Python object, a capsule lookup
 * and a pointer per argument); here each argument costs one call: its type's converter where
 * the package registered one (torch.Tensor: torch._C._to_dlpack, 0.5 us where the Python
 * method __dlpack__ takes 4.5), else its __dlpack__. run() borrows
 * each object's DLTensor through its capsule without consuming it (the capsule's destructor
 * gives the producer's DLManagedTensor back when it goes), calls attnc_rt_run of the kernel's
 * object with the GIL released, and returns its status. Any exception of __dlpack__ (a
 * read-only NumPy array, a tensor that requires grad) propagates: the package then takes its
 * Python path, which handles those.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "attnc/Runtime/attnc_runtime.h"

typedef int (*run_fn)(const attnc_kernel_desc *, const DLTensor *const *,
                      const attnc_options *);

enum { kMaxArgs = 64 };

static void release(PyObject **capsules, Py_ssize_t n) {
  for (Py_ssize_t i = 0; i < n; ++i)
    Py_XDECREF(capsules[i]);
}

/* run(desc, run, args, num_threads, stream, converters) -> status
 * desc, run: addresses (the kernel's descriptor, attnc_rt_run of its object);
 * args: a list, one DLPack object or None per tensor argument of the kernel;
 * converters: a dict, type -> a function of an object of that exact type to its capsule. */
static PyObject *run(PyObject *self, PyObject *const *argv, Py_ssize_t argc) {
  (void)self;
  if (argc != 6 || !PyList_Check(argv[2]) || !PyDict_Check(argv[5]))
    return PyErr_Format(PyExc_TypeError,
                        "run(desc, run, args: list, num_threads, stream, converters: dict)");
  const attnc_kernel_desc *desc = PyLong_AsVoidPtr(argv[0]);
  run_fn fn = (run_fn)PyLong_AsVoidPtr(argv[1]);
  long threads = PyLong_AsLong(argv[3]);
  void *stream = argv[4] == Py_None ? NULL : PyLong_AsVoidPtr(argv[4]);
  if (PyErr_Occurred())
    return NULL;
  Py_ssize_t n = PyList_GET_SIZE(argv[2]);
  if (n > kMaxArgs)
    return PyErr_Format(PyExc_ValueError, "%zd tensor arguments; at most %d", n, kMaxArgs);
  PyObject *capsules[kMaxArgs] = {0};
  const DLTensor *tensors[kMaxArgs] = {0};
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *obj = PyList_GET_ITEM(argv[2], i);
    if (obj == Py_None)
      continue;
    PyObject *convert = PyDict_GetItem(argv[5], (PyObject *)Py_TYPE(obj));
    capsules[i] = convert ? PyObject_CallOneArg(convert, obj)
                          : PyObject_CallMethod(obj, "__dlpack__", NULL);
    if (!capsules[i]) {
      release(capsules, i);
      return NULL;
    }
    /* A DLManagedTensor starts with its DLTensor. */
    tensors[i] = PyCapsule_GetPointer(capsules[i], "dltensor");
    if (!tensors[i]) {
      release(capsules, i + 1);
      return NULL;
    }
  }
  attnc_options options = {(int32_t)threads, stream};
  int status;
  Py_BEGIN_ALLOW_THREADS status = fn(desc, tensors, &options);
  Py_END_ALLOW_THREADS release(capsules, n);
  return PyLong_FromLong(status);
}

static PyMethodDef methods[] = {
    {"run", (PyCFunction)(void (*)(void))run, METH_FASTCALL,
     "run(desc, run, args, num_threads, stream, converters) -> attnc_rt_run's status"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "attnc._call",
                                    "A kernel launch from Python (DLPack, no copy).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__call(void) { return PyModule_Create(&module); }
