/* The precompiled kernel library as a Python extension module, last part: the call path and the
 * module definition.  It follows the table of entries that workbench/perf/build.py writes. */
static int first_and_count(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t need, Py_ssize_t *first,
                           Py_ssize_t *count)
{
    if (nargs < need) {
        PyErr_SetString(PyExc_TypeError, "call(first, count, fallback, *args) / match(first, count, *args)");
        return 0;
    }
    *first = PyLong_AsSsize_t(args[0]);
    *count = PyLong_AsSsize_t(args[1]);
    if (PyErr_Occurred())
        return 0;
    if (*first < 0 || *count < 0 || *first + *count > N_ENTRIES) {
        PyErr_SetString(PyExc_IndexError, "entries out of range");
        return 0;
    }
    return 1;
}

static PyObject *kernel_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t first, count, e, n;
    PyObject *const *kargs;
    PyObject *impl, *res;
    slots_t s;
    if (!first_and_count(args, nargs, 3, &first, &count))
        return NULL;
    kargs = args + 3;
    n = nargs - 3;
    for (e = first; e < first + count; e++) {
        const entry_t *en = &ENTRIES[e];
        int32_t status;
        if (!fill(en->spec, kargs, n, &s))
            continue;
        Py_BEGIN_ALLOW_THREADS
        status = en->fn(s.ptrs, s.ints, s.reals);
        Py_END_ALLOW_THREADS
        if (status != 0)
            break;                      /* the kernel raised: numba says what */
        switch (en->ret) {
        case '-': Py_RETURN_NONE;
        case 'f': case 'd': return PyFloat_FromDouble(s.reals[s.nr]);
        case 'Q': return PyLong_FromUnsignedLongLong((unsigned long long)s.ints[s.ni]);
        default: return PyLong_FromLongLong((long long)s.ints[s.ni]);
        }
    }
    impl = PyObject_CallNoArgs(args[2]);
    if (impl == NULL)
        return NULL;
    res = PyObject_Vectorcall(impl, kargs, n, NULL);
    Py_DECREF(impl);
    return res;
}

static PyObject *kernel_match(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t first, count, e;
    slots_t s;
    if (!first_and_count(args, nargs, 2, &first, &count))
        return NULL;
    for (e = first; e < first + count; e++)
        if (fill(ENTRIES[e].spec, args + 2, nargs - 2, &s))
            return PyLong_FromSsize_t(e);
    return PyLong_FromLong(-1);
}

#define PARTS_PER_THREAD 4

/* row pieces of one entry whose last two arguments are the rows r0, r1 it computes */
typedef struct { const entry_t *entry; slots_t *slots; int64_t total, step; volatile int failed; } rows_t;

static void rows_part(void *ctx, int part, int thread)
{
    rows_t *r = (rows_t *)ctx;
    slots_t s = *r->slots;
    int64_t r0 = (int64_t)part * r->step, r1 = r0 + r->step;
    if (r1 > r->total)
        r1 = r->total;
    s.ints[s.ni - 2] = r0;
    s.ints[s.ni - 1] = r1;
    if (r->entry->fn(s.ptrs, s.ints, s.reals) != 0)
        r->failed = 1;
}

/* call_rows(first, count, fallback, threads, total, align, *args): the entry's rows 0..total cut
 * into pieces (multiples of align rows) shared among `threads` threads of the pool; None, or
 * NotImplemented when no entry takes the arguments or the kernel raised (the caller then asks numba) */
static PyObject *kernel_call_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t first, count, e, n;
    long threads, total, align;
    PyObject *const *kargs;
    slots_t s;
    if (!first_and_count(args, nargs, 6, &first, &count))
        return NULL;
    threads = PyLong_AsLong(args[3]);
    total = PyLong_AsLong(args[4]);
    align = PyLong_AsLong(args[5]);
    if (PyErr_Occurred())
        return NULL;
    kargs = args + 6;
    n = nargs - 6;
    if (n + 2 > 128 || align < 1 || total < 0)
        Py_RETURN_NOTIMPLEMENTED;
    for (e = first; e < first + count; e++) {
        PyObject *full[130];
        const entry_t *en = &ENTRIES[e];
        PyObject *zero, *end;
        rows_t r;
        int ok, parts;
        int64_t step;
        if (en->ret != '-')
            continue;
        zero = PyLong_FromLong(0);
        end = PyLong_FromLong(total);
        if (zero == NULL || end == NULL) {
            Py_XDECREF(zero);
            Py_XDECREF(end);
            return NULL;
        }
        memcpy(full, kargs, (size_t)n * sizeof(PyObject *));
        full[n] = zero;
        full[n + 1] = end;
        ok = fill(en->spec, full, n + 2, &s);
        Py_DECREF(zero);
        Py_DECREF(end);
        if (!ok)
            continue;
        if (threads < 1)
            threads = 1;
        /* PARTS_PER_THREAD pieces a thread: when a worker starts late or is descheduled, the
         * others take more of the pieces (see pool_run) */
        step = (total + threads * PARTS_PER_THREAD - 1) / (threads * PARTS_PER_THREAD);
        step = ((step + align - 1) / align) * align;
        if (step < 1)
            step = 1;
        parts = (int)((total + step - 1) / step);
        r.entry = en;
        r.slots = &s;
        r.total = total;
        r.step = step;
        r.failed = 0;
        Py_BEGIN_ALLOW_THREADS
        if (parts <= 1) {
            if (total > 0)
                rows_part(&r, 0, 0);
        } else {
            pool_run(rows_part, &r, parts, (int)threads, 1);
        }
        Py_END_ALLOW_THREADS
        if (r.failed)
            Py_RETURN_NOTIMPLEMENTED;
        Py_RETURN_NONE;
    }
    Py_RETURN_NOTIMPLEMENTED;
}

/* blas_callback(): the address of the function OpenBLAS may hand its jobs to */
static PyObject *kernel_blas_callback(PyObject *self, PyObject *unused)
{
    return PyLong_FromVoidPtr((void *)blas_threads_callback);
}

static PyMethodDef METHODS[] = {
    {"call_rows", (PyCFunction)(void (*)(void))kernel_call_rows, METH_FASTCALL,
     "call_rows(first, count, fallback, threads, total, align, *args): rows 0..total on the pool"},
    {"blas_callback", (PyCFunction)kernel_blas_callback, METH_NOARGS,
     "blas_callback(): address of the OpenBLAS threads callback (each job on a thread of the pool)"},
    {"call", (PyCFunction)(void (*)(void))kernel_call, METH_FASTCALL,
     "call(first, count, fallback, *args): run the first of entries first..first+count that takes args"},
    {"match", (PyCFunction)(void (*)(void))kernel_match, METH_FASTCALL,
     "match(first, count, *args): the index of the entry that would take args, or -1"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "workbench_kernels",
                                    "precompiled kernels of TFLite Workbench", -1, METHODS};

PyMODINIT_FUNC PyInit_workbench_kernels(void)
{
    PyObject *m;
    import_array();
    m = PyModule_Create(&MODULE);
    if (m != NULL && PyModule_AddIntConstant(m, "entries", (long)N_ENTRIES) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
