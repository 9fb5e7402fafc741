"""Building the precompiled kernel library (see :mod:`workbench.perf.precompiled`).

Only the build imports numba and llvmlite; the library it writes is used without either.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from .. import config

# The two functions of numba's runtime that a kernel's own arrays need, written for the library:
# a block of 48 header bytes (reference count, destructor, destructor data, data pointer, size,
# external allocator — the order numba's generated code reads them in) followed by the data,
# aligned as asked; freeing the block frees both.  Nothing here runs a destructor: the library's
# arrays are plain memory.
RUNTIME_IR = r"""
declare ptr @malloc(i64)
declare void @free(ptr)

define ptr @NRT_MemInfo_alloc_aligned(i64 %size, i32 %align) {
entry:
  %align64 = zext i32 %align to i64
  %nonzero = icmp ugt i64 %align64, 1
  %step = select i1 %nonzero, i64 %align64, i64 1
  %head = add i64 %size, 48
  %total = add i64 %head, %step
  %block = call ptr @malloc(i64 %total)
  %failed = icmp eq ptr %block, null
  br i1 %failed, label %none, label %fill
none:
  ret ptr null
fill:
  %base = ptrtoint ptr %block to i64
  %after = add i64 %base, 48
  %less = sub i64 %step, 1
  %up = add i64 %after, %less
  %mask = xor i64 %less, -1
  %start = and i64 %up, %mask
  %data = inttoptr i64 %start to ptr
  store i64 1, ptr %block, align 8
  %dtor = getelementptr i8, ptr %block, i64 8
  store ptr null, ptr %dtor, align 8
  %info = getelementptr i8, ptr %block, i64 16
  store ptr null, ptr %info, align 8
  %dataslot = getelementptr i8, ptr %block, i64 24
  store ptr %data, ptr %dataslot, align 8
  %sizeslot = getelementptr i8, ptr %block, i64 32
  store i64 %size, ptr %sizeslot, align 8
  %allocslot = getelementptr i8, ptr %block, i64 40
  store ptr null, ptr %allocslot, align 8
  ret ptr %block
}

define ptr @NRT_MemInfo_alloc_safe_aligned(i64 %size, i32 %align) {
entry:
  %block = call ptr @NRT_MemInfo_alloc_aligned(i64 %size, i32 %align)
  ret ptr %block
}

define void @NRT_MemInfo_call_dtor(ptr %block) {
entry:
  call void @free(ptr %block)
  ret void
}
"""

# The library is also a small Python extension module: its one function takes a kernel call from
# Python, checks the arguments against each entry the function has (numpy's own checks: type, kind,
# item size, dimensions, C order, alignment, writability), fills the entry's slots, lets the GIL go
# and calls it.  When no entry fits, or the kernel raised, it hands the same arguments to numba (the
# ``fallback`` callable returns the dispatcher), so the caller sees numba's result or exception.
SHIM = r"""
#define PY_SSIZE_T_CLEAN
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <Python.h>
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>
#include <stdint.h>
#include <string.h>

#define MAX_SLOTS 96

typedef int32_t (*entry_fn)(void **, int64_t *, double *);
typedef struct { entry_fn fn; const char *spec; char ret; } entry_t;
typedef struct {
    void *ptrs[MAX_SLOTS + 1];
    int64_t ints[MAX_SLOTS + 1];
    double reals[MAX_SLOTS + 1];
    int np, ni, nr;
} slots_t;

/* the numpy kind and item size of a type letter */
static int letter_type(char letter, char *kind, int *size)
{
    switch (letter) {
    case 'f': *kind = 'f'; *size = 4; return 1;
    case 'd': *kind = 'f'; *size = 8; return 1;
    case 'b': *kind = 'i'; *size = 1; return 1;
    case 'B': *kind = 'u'; *size = 1; return 1;
    case 'h': *kind = 'i'; *size = 2; return 1;
    case 'H': *kind = 'u'; *size = 2; return 1;
    case 'i': *kind = 'i'; *size = 4; return 1;
    case 'I': *kind = 'u'; *size = 4; return 1;
    case 'q': *kind = 'i'; *size = 8; return 1;
    case 'Q': *kind = 'u'; *size = 8; return 1;
    case '?': *kind = 'b'; *size = 1; return 1;
    }
    return 0;
}

static int take_array(PyObject *o, char kind_letter, char letter, int ndim, slots_t *s)
{
    char kind;
    int size, d;
    PyArrayObject *a;
    if (!PyArray_Check(o) || !letter_type(letter, &kind, &size))
        return 0;
    a = (PyArrayObject *)o;
    if (PyArray_NDIM(a) != ndim || PyArray_DESCR(a)->kind != kind || PyArray_ITEMSIZE(a) != size)
        return 0;
    if (!PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a) || !PyArray_ISNOTSWAPPED(a))
        return 0;
    if (kind_letter == 'a' && !PyArray_ISWRITEABLE(a))
        return 0;                       /* the kernel may write it */
    if (s->np >= MAX_SLOTS || s->ni + ndim > MAX_SLOTS)
        return 0;
    s->ptrs[s->np++] = PyArray_DATA(a);
    for (d = 0; d < ndim; d++)
        s->ints[s->ni++] = (int64_t)PyArray_DIM(a, d);
    return 1;
}

static int take_scalar(PyObject *o, char letter, slots_t *s)
{
    char kind;
    int size, overflow = 0;
    if (!letter_type(letter, &kind, &size) || s->ni >= MAX_SLOTS || s->nr >= MAX_SLOTS)
        return 0;
    if (PyBool_Check(o)) {
        if (letter != '?')
            return 0;
        s->ints[s->ni++] = (o == Py_True);
        return 1;
    }
    if (PyLong_CheckExact(o)) {         /* numba types a Python int as int64 */
        long long v;
        if (letter != 'q')
            return 0;
        v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow || (v == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0;
        }
        s->ints[s->ni++] = (int64_t)v;
        return 1;
    }
    if (PyFloat_CheckExact(o)) {
        if (letter != 'd')
            return 0;
        s->reals[s->nr++] = PyFloat_AS_DOUBLE(o);
        return 1;
    }
    if (PyArray_IsScalar(o, Generic)) {
        union { int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32; int64_t i64;
                uint64_t u64; float f32; double f64; npy_bool flag; char raw[16]; } v;
        PyArray_Descr *descr = PyArray_DescrFromScalar(o);
        int same;
        if (descr == NULL) {
            PyErr_Clear();
            return 0;
        }
        same = descr->kind == kind && PyDataType_ELSIZE(descr) == size;
        Py_DECREF(descr);
        if (!same)
            return 0;
        memset(&v, 0, sizeof v);
        PyArray_ScalarAsCtype(o, &v);
        switch (letter) {
        case 'f': s->reals[s->nr++] = (double)v.f32; break;
        case 'd': s->reals[s->nr++] = v.f64; break;
        case 'b': s->ints[s->ni++] = v.i8; break;
        case 'B': s->ints[s->ni++] = v.u8; break;
        case 'h': s->ints[s->ni++] = v.i16; break;
        case 'H': s->ints[s->ni++] = v.u16; break;
        case 'i': s->ints[s->ni++] = v.i32; break;
        case 'I': s->ints[s->ni++] = v.u32; break;
        case 'q': s->ints[s->ni++] = v.i64; break;
        case 'Q': s->ints[s->ni++] = (int64_t)v.u64; break;
        case '?': s->ints[s->ni++] = v.flag != 0; break;
        default: return 0;
        }
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * A small pool of worker threads for work cut in parts: row pieces of a kernel, and OpenBLAS's
 * jobs when OpenBLAS is told to hand them over (its threads_callback).  A worker that has just
 * finished spins for a short while before it sleeps, so the parts of the next node (tens of
 * microseconds later) start at once: waking a sleeping thread costs tens to hundreds of
 * microseconds on a virtual machine, and a node takes about a millisecond.  Parts of one job:
 * part p runs on thread p % T (thread 0 is the caller). */
#include <pthread.h>
#include <stdatomic.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#else
#define CPU_RELAX() atomic_signal_fence(memory_order_seq_cst)
#endif

#define MAX_THREADS 64
#define SPIN_ROUNDS 4000

typedef void (*part_fn)(void *ctx, int part, int thread);

static struct {
    pthread_mutex_t lock;          /* the sleepers' lock, and the one that orders posts */
    pthread_cond_t wake;
    pthread_cond_t finished;       /* the caller sleeps here when the parts take long */
    int caller_waits;
    pthread_mutex_t busy;          /* one job at a time: another caller runs its parts itself */
    pthread_t threads[MAX_THREADS];
    int started;                   /* workers running (threads 1..started) */
    long first_seen;               /* the generation a new worker starts from (set before it starts) */
    int sleepers;
    atomic_long generation;        /* bumped for every job */
    atomic_int done;               /* workers finished with the current job */
    part_fn fn;
    void *ctx;
    int parts, width;              /* parts of the job, threads sharing it (caller included) */
    int claim;                     /* parts go to whichever thread asks first (else part p -> thread p % T) */
    atomic_int next;               /* the next part to claim */
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0,
           PTHREAD_MUTEX_INITIALIZER};

static void run_parts(int thread)
{
    int p;
    if (pool.claim) {              /* independent parts: a late worker leaves its share to the others */
        while ((p = atomic_fetch_add(&pool.next, 1)) < pool.parts)
            pool.fn(pool.ctx, p, thread);
        return;
    }
    for (p = thread; p < pool.parts; p += pool.width)   /* OpenBLAS's jobs wait for each other: */
        pool.fn(pool.ctx, p, thread);                   /* each must have its own thread */
}

static void *worker(void *arg)
{
    int thread = (int)(intptr_t)arg;
    long seen = pool.first_seen;   /* not the current generation: the job it was made for may be posted */
    for (;;) {
        long now;
        int k;
        for (k = 0; k < SPIN_ROUNDS && (now = atomic_load_explicit(&pool.generation, memory_order_acquire)) == seen; k++)
            CPU_RELAX();
        if (now == seen) {
            pthread_mutex_lock(&pool.lock);
            pool.sleepers++;
            while ((now = atomic_load(&pool.generation)) == seen)
                pthread_cond_wait(&pool.wake, &pool.lock);
            pool.sleepers--;
            pthread_mutex_unlock(&pool.lock);
        }
        seen = now;
        if (thread < pool.width)
            run_parts(thread);
        atomic_fetch_add_explicit(&pool.done, 1, memory_order_release);
        pthread_mutex_lock(&pool.lock);
        if (pool.caller_waits)
            pthread_cond_signal(&pool.finished);
        pthread_mutex_unlock(&pool.lock);
    }
    return NULL;
}

/* fn(ctx, part, thread) for part in 0..parts on up to `threads` threads; returns when all are done.
 * claim: the parts are independent (any thread may run any number of them) */
static void pool_run(part_fn fn, void *ctx, int parts, int threads, int claim)
{
    int k, workers;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if (threads > parts)
        threads = parts;
    if (threads <= 1 || (claim && pthread_mutex_trylock(&pool.busy) != 0)) {
        for (k = 0; k < parts; k++)     /* independent parts: the caller can do them all */
            fn(ctx, k, 0);
        return;
    }
    if (!claim)                         /* jobs that wait for each other need their threads: queue up */
        pthread_mutex_lock(&pool.busy);
    pool.first_seen = atomic_load(&pool.generation);
    while (pool.started < threads - 1) {
        if (pthread_create(&pool.threads[pool.started], NULL, worker, (void *)(intptr_t)(pool.started + 1)) != 0)
            break;
        pool.started++;
    }
    if (threads > pool.started + 1)
        threads = pool.started + 1;
    workers = pool.started;
    pool.fn = fn;
    pool.ctx = ctx;
    pool.parts = parts;
    pool.width = threads;
    pool.claim = claim;
    atomic_store(&pool.next, 0);
    atomic_store(&pool.done, 0);
    pthread_mutex_lock(&pool.lock);
    atomic_fetch_add_explicit(&pool.generation, 1, memory_order_release);
    if (pool.sleepers)
        pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);
    run_parts(0);
    for (k = 0; k < SPIN_ROUNDS && atomic_load_explicit(&pool.done, memory_order_acquire) < workers; k++)
        CPU_RELAX();
    if (atomic_load_explicit(&pool.done, memory_order_acquire) < workers) {
        /* a worker is late (the machine is busy): sleep rather than spin its CPU away */
        pthread_mutex_lock(&pool.lock);
        pool.caller_waits = 1;
        while (atomic_load_explicit(&pool.done, memory_order_acquire) < workers)
            pthread_cond_wait(&pool.finished, &pool.lock);
        pool.caller_waits = 0;
        pthread_mutex_unlock(&pool.lock);
    }
    pthread_mutex_unlock(&pool.busy);
}

/* OpenBLAS's caller-managed threading: it hands its jobs to this function */
typedef void (*blas_job_fn)(int thread, void *job, int data);
typedef struct { blas_job_fn job; char *jobs; size_t size; int data; } blas_jobs_t;

static void blas_part(void *ctx, int part, int thread)
{
    blas_jobs_t *b = (blas_jobs_t *)ctx;
    b->job(thread, b->jobs + (size_t)part * b->size, b->data);
}

static void blas_threads_callback(int sync, blas_job_fn job, int count, size_t size, void *jobs, int data)
{
    blas_jobs_t b;
    b.job = job;
    b.jobs = (char *)jobs;
    b.size = size;
    b.data = data;
    pool_run(blas_part, &b, count, count, 0);   /* every job its own thread: they wait for each other */
}

/* the arguments in the slots of an entry described by spec (3 letters an argument), or 0 */
static int fill(const char *spec, PyObject *const *args, Py_ssize_t n, slots_t *s)
{
    Py_ssize_t k;
    if ((Py_ssize_t)strlen(spec) != 3 * n)
        return 0;
    s->np = s->ni = s->nr = 0;
    for (k = 0; k < n; k++) {
        const char *a = spec + 3 * k;
        int ok = (a[0] == 's') ? take_scalar(args[k], a[1], s) : take_array(args[k], a[0], a[1], a[2] - '0', s);
        if (!ok)
            return 0;
    }
    return 1;
}
"""

SHIM_TAIL = r"""
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
        step = (total + threads - 1) / threads;
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
"""

PROVIDED = frozenset({"NRT_MemInfo_alloc_aligned", "NRT_MemInfo_alloc_safe_aligned", "NRT_MemInfo_call_dtor"})
# what the C library and libm give every shared library
LIBC = frozenset(
    "memcpy memmove memset malloc free "
    "exp expf exp2 exp2f expm1 expm1f log logf log2 log2f log10 log10f log1p log1pf pow powf sqrt sqrtf "
    "cbrt cbrtf hypot hypotf sin sinf cos cosf tan tanf asin asinf acos acosf atan atanf atan2 atan2f sinh "
    "sinhf cosh coshf tanh tanhf asinh asinhf acosh acoshf atanh atanhf erf erff erfc erfcf lgamma lgammaf "
    "tgamma tgammaf floor floorf ceil ceilf round roundf trunc truncf rint rintf nearbyint nearbyintf fmod "
    "fmodf fabs fabsf fma fmaf fmin fminf fmax fmaxf ldexp ldexpf frexp frexpf modf modff sincos sincosf".split())


def _spec(t):
    """A numba argument type as the manifest writes it, or None when the library cannot take it."""
    from numba.core import types

    t = types.unliteral(t)
    if isinstance(t, types.Array):
        if t.layout != "C" or not 0 < t.ndim < 10 or not isinstance(t.dtype, (types.Integer, types.Float, types.Boolean)):
            return None
        return ["array", np.dtype(str(t.dtype)).str, t.ndim, not t.mutable]
    if isinstance(t, (types.Integer, types.Float, types.Boolean)):
        return ["scalar", np.dtype(str(t) if not isinstance(t, types.Boolean) else "bool").str]
    return None


# dtype code (numpy's dtype.str) → the letter the C shim knows it by; which slot a scalar travels in
LETTERS = {"<f4": "f", "<f8": "d", "|i1": "b", "|u1": "B", "<i2": "h", "<u2": "H", "<i4": "i", "<u4": "I",
           "<i8": "q", "<u8": "Q", "|b1": "?"}
MAX_SLOTS = 96          # pointers, integers or reals one call may carry (the shim's fixed arrays)


def _slots(specs: list, ret) -> tuple[int, int, int]:
    """(pointers, integers, reals) one call of this entry fills, its result's slot included."""
    ptrs = sum(1 for s in specs if s[0] == "array")
    ints = sum(s[2] for s in specs if s[0] == "array") + sum(1 for s in specs if s[0] == "scalar" and
                                                          LETTERS[s[1]] not in "fd")
    reals = sum(1 for s in specs if s[0] == "scalar" and LETTERS[s[1]] in "fd")
    if ret is not None:
        if LETTERS[ret] in "fd":
            reals += 1
        else:
            ints += 1
    return ptrs, ints, reals


def _entry_source(specs: list, ret) -> tuple[str, dict]:
    """Python source (and its globals) of one specialisation's C entry, compiled by ``numba.cfunc``.

    Every entry has one signature, ``int32 entry(void **ptrs, int64 *ints, double *reals)``: the
    arguments in order, arrays as a data pointer in ``ptrs`` and their sizes in ``ints``, integer and
    boolean scalars in ``ints``, real ones in ``reals``; a scalar result goes to the next free slot.
    It returns 0, or 1 when the kernel raised."""
    glb, call = {}, []
    p = i = r = 0
    for k, spec in enumerate(specs):
        glb[f"T{k}"] = np.dtype(spec[1]).type
        if spec[0] == "array":
            dims = ", ".join(f"ints[{i + d}]" for d in range(spec[2]))
            call.append(f"carray(ptrs[{p}], ({dims},), T{k})")
            p, i = p + 1, i + spec[2]
        elif spec[1] == "|b1":
            call.append(f"ints[{i}] != 0")
            i += 1
        elif LETTERS[spec[1]] in "fd":
            call.append(f"T{k}(reals[{r}])")
            r += 1
        else:
            call.append(f"T{k}(ints[{i}])")
            i += 1
    # the unpacking is a function of its own: a try block of many statements makes numba's SSA
    # pass recurse once per statement
    lines = ["def unpack(ptrs, ints, reals):"]
    lines += [f"    v{k} = {expr}" for k, expr in enumerate(call)]
    names = ", ".join(f"v{k}" for k in range(len(call)))
    if ret is None:
        lines.append(f"    kernel({names})")
    else:
        slot = f"reals[{r}]" if LETTERS[ret] in "fd" else f"ints[{i}]"
        lines.append(f"    {slot} = kernel({names})")
    lines += ["", "", "def entry(ptrs, ints, reals):", "    status = 0", "    try:", "        unpack_jit(ptrs, ints, reals)",
              "    except Exception:", "        status = 1", "    return status"]
    return "\n".join(lines) + "\n", glb


def _compile_entry(lazy, specs: list, ret):
    """numba cfunc of one specialisation → (LLVM IR of its module, its symbol)."""
    import numba
    from numba.core import types

    src, glb = _entry_source(specs, ret)
    glb.update(kernel=lazy.compile(), carray=numba.carray)
    exec(compile(src, f"<entry of {lazy.__name__}>", "exec"), glb)
    glb["unpack_jit"] = numba.njit(glb["unpack"])
    sig = types.int32(types.CPointer(types.voidptr), types.CPointer(types.int64), types.CPointer(types.float64))
    cf = numba.cfunc(sig)(glb["entry"])
    return cf._library.get_llvm_str(), cf.native_name


def spec_string(specs: list) -> str:
    """The shim's description of an entry's arguments: per argument its kind ('a' an array the
    kernel may write, 'r' one it only reads, 's' a scalar), its type letter and its number of
    dimensions (a digit, 0 for scalars)."""
    return "".join(f"{('r' if s[3] else 'a') if s[0] == 'array' else 's'}{LETTERS[s[1]]}"
                   f"{s[2] if s[0] == 'array' else 0}" for s in specs)


def _checked_module(ir: str, symbol: str, new_name: str):
    """Parse one entry's module, keep only its entry visible, and name what it needs from outside."""
    import llvmlite.binding as llvm

    mod = llvm.parse_assembly(ir)
    missing = []
    for fn in mod.functions:
        if fn.is_declaration:
            if not (fn.name.startswith("llvm.") or fn.name in PROVIDED or fn.name in LIBC):
                missing.append(fn.name)
        elif fn.name == symbol:
            fn.name = new_name
        else:
            fn.linkage = "internal"
    for gv in mod.global_variables:
        if gv.is_declaration:
            missing.append(gv.name)
        else:
            gv.linkage = "internal"
    return mod, missing


def _target_machine():
    import llvmlite.binding as llvm
    from numba.core import config as nconfig
    from numba.core.registry import cpu_target

    codegen = cpu_target.target_context.codegen()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(cpu=codegen._get_host_cpu_name(), features=codegen._tm_features,
                                        opt=int(nconfig.OPT), reloc="pic", codemodel="default")


def build(workload=None, directory=None, log=print, functions=None) -> dict:
    """Build the library for the current sources and CPU; returns the manifest written.

    ``workload``: a callable ``workload(log) -> [failure notes]`` that runs the kernels once on real
    models (the command line passes :func:`workbench.cli.precompile_workload`; this package knows
    no models); ``functions``: instead of a workload, an explicit list of ``(lazy jitted function,
    [argument tuples])`` to call once each (tests)."""
    from . import jit as _jit, precompiled

    if not config.JIT:
        raise precompiled.PrecompileError("WORKBENCH_JIT=0: there is no numba to compile the kernels with")
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        raise precompiled.PrecompileError("no C compiler driver (cc, gcc or clang) to link the kernel library with")
    t0 = time.perf_counter()
    saved = config.PRECOMPILED
    config.PRECOMPILED = False          # the workload must meet numba's dispatchers, not an old library
    _jit.forget_callables()
    _jit.CALLED.clear()
    try:
        failed = []
        if functions is not None:
            for lazy, calls in functions:
                for args in calls:
                    lazy(*args)
        elif workload is not None:
            failed = list(workload(log))
        else:
            raise precompiled.PrecompileError("nothing to compile from: give a workload or functions")
        seen = list(_jit.CALLED)
    finally:
        config.PRECOMPILED = saved
        _jit.forget_callables()
    t_workload = time.perf_counter() - t0

    from numba.core import types

    entries, skipped, modules = [], [], []
    for lazy in sorted(seen, key=lambda f: precompiled.function_name(f.py_func)):
        name = precompiled.function_name(lazy.py_func)
        dispatcher = lazy.compile()
        done = set()
        for sig in list(dispatcher.signatures):
            ret_t = dispatcher.overloads[sig].signature.return_type
            specs = [_spec(t) for t in sig]
            if any(s is None for s in specs):
                skipped.append(f"{name}{tuple(str(t) for t in sig)}: an argument that is not a C-contiguous "
                               f"numeric array or a number")
                continue
            ret = None
            if ret_t != types.none:
                rs = _spec(ret_t)
                if rs is None or rs[0] != "scalar" or rs[1] == "|b1":
                    skipped.append(f"{name}: returns {ret_t}")
                    continue
                ret = rs[1]
            key = json.dumps([specs, ret])
            if key in done:
                continue
            done.add(key)
            if max(_slots(specs, ret)) > MAX_SLOTS:
                skipped.append(f"{name}{tuple(str(t) for t in sig)}: more than {MAX_SLOTS} values per call")
                continue
            symbol = f"workbench_kernel_{len(entries)}"
            try:
                ir, native = _compile_entry(lazy, specs, ret)
                mod, missing = _checked_module(ir, native, symbol)
            except Exception as exc:
                skipped.append(f"{name}{tuple(str(t) for t in sig)}: {type(exc).__name__}: {str(exc)[:200]}")
                continue
            if missing:
                skipped.append(f"{name}{tuple(str(t) for t in sig)}: needs {', '.join(sorted(missing)[:4])} "
                               f"from numba's runtime")
                continue
            modules.append(mod)
            entries.append({"function": name, "symbol": symbol, "args": specs, "ret": ret,
                            "spec": spec_string(specs)})
    t_compile = time.perf_counter() - t0 - t_workload
    so, man = precompiled.library_paths(directory)
    so.parent.mkdir(parents=True, exist_ok=True)
    manifest = {"format": precompiled.FORMAT, "fingerprint": precompiled.fingerprint(), "entries": entries,
                "skipped": skipped, "workload_failures": failed,
                "seconds": {"workload": round(t_workload, 1), "compile": round(t_compile, 1)}}
    _link(modules, entries, so, cc)
    for old in so.parent.glob("kernels-*"):
        if old not in (so, man):
            old.unlink(missing_ok=True)
    manifest["seconds"]["total"] = round(time.perf_counter() - t0, 1)
    tmp = man.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp, man)
    precompiled.forget()
    log(f"{len(entries)} kernel specialisation(s) of {len({e['function'] for e in entries})} function(s) in {so} "
        f"({manifest['seconds']['total']} s); left to numba: {len(skipped)}")
    return manifest


def _shim_source(entries: list) -> str:
    """The C source of the library's Python module: :data:`SHIM` and the table of its entries."""
    lines = [SHIM]
    for e in entries:
        lines.append(f"extern int32_t {e['symbol']}(void **, int64_t *, double *);")
    rows = []
    for e in entries:
        ret = "-" if e["ret"] is None else LETTERS[e["ret"]]
        rows.append(f'    {{{e["symbol"]}, "{e["spec"]}", \'{ret}\'}},')
    lines.append(f"static const entry_t ENTRIES[] = {{\n{chr(10).join(rows) or '    {0, 0, 0},'}\n}};")
    lines.append(f"static const Py_ssize_t N_ENTRIES = {len(entries)};")
    lines.append(SHIM_TAIL)
    return "\n".join(lines) + "\n"


def _link(modules, entries: list, so: Path, cc: str) -> None:
    """One object file for the entries and the allocator, one for the shim, linked into ``so``
    (replaced atomically)."""
    import sysconfig

    import llvmlite.binding as llvm

    from . import precompiled

    runtime = llvm.parse_assembly(RUNTIME_IR)
    combined = modules[0] if modules else runtime
    if modules:
        runtime.triple = combined.triple
        runtime.data_layout = combined.data_layout
        for mod in modules[1:]:
            combined.link_in(mod)
        combined.link_in(runtime)
    else:
        combined.triple = llvm.get_process_triple()
    combined.verify()
    obj = _target_machine().emit_object(combined)
    with tempfile.TemporaryDirectory() as tmp:
        kernels_o, shim_c, shim_o = Path(tmp) / "kernels.o", Path(tmp) / "shim.c", Path(tmp) / "shim.o"
        kernels_o.write_bytes(obj)
        shim_c.write_text(_shim_source(entries))
        out = Path(tmp) / "kernels.so"
        steps = [[cc, "-O2", "-fPIC", "-pthread", "-c", str(shim_c), "-o", str(shim_o), "-I",
                  sysconfig.get_paths()["include"], "-I", np.get_include()],
                 [cc, "-shared", "-pthread", "-o", str(out), str(kernels_o), str(shim_o), "-lm"]]
        for cmd in steps:
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                raise precompiled.PrecompileError(f"building the kernel library failed ({' '.join(cmd[:3])} ...):\n"
                                                  f"{proc.stderr[-2000:]}")
        partial = so.with_suffix(".so.tmp")
        shutil.copyfile(out, partial)
        os.replace(partial, so)
