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

/* a call of `call` prepared (prepare_run): the entry that takes the arguments, found and its slots filled
 * once, where that entry answers None (a kernel that writes its output); 1 ready, -1 not (another entry's
 * answer, or none takes them: the Python call then finds numba's), -2 a Python error set */
typedef struct {
    const entry_t *entry;
    slots_t s;
} call_t;

static int call_setup(PyObject *const *args, Py_ssize_t nargs, call_t *c)
{
    Py_ssize_t first, count, e;
    if (!first_and_count(args, nargs, 3, &first, &count))
        return -2;
    for (e = first; e < first + count; e++)
        if (fill(ENTRIES[e].spec, args + 3, nargs - 3, &c->s)) {
            c->entry = &ENTRIES[e];
            return ENTRIES[e].ret == '-' ? 1 : -1;
        }
    return -1;
}

/* 0 done, 1 the kernel raised (the node's own path then runs it again, and numba says what) */
static int call_exec(void *state)
{
    call_t *c = (call_t *)state;
    return c->entry->fn(c->s.ptrs, c->s.ints, c->s.reals) != 0;
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

#define PARTS_ALONE 4               /* pieces on one thread */
#define PARTS_PER_THREAD 8          /* pieces a thread on several, shrinking toward the middle (taper_edge), as
                                     * the float convolution's: the thread done first waits for a small piece
                                     * (MobileNet v1 int8 at 2 threads, one process, the two cuts alternated
                                     * for 50 rounds: 0.987x the time of 4 equal pieces a thread) */

/* row pieces of one entry whose last two arguments are the rows r0, r1 it computes: `parts` pieces of
 * `step` rows, or, tapered, pieces whose edges taper_edge puts on multiples of `align`, down to one
 * multiple a piece (a 14x14 int8 layer's 196 rows are 49 blocks of 4 in 13 pieces: cut equally, one
 * thread ran 7 pieces and the other waited 14 us of the node's 160 for the seventh; tapered, 3 us) */
typedef struct {
    const entry_t *entry;
    slots_t *slots;
    int64_t total, step, align;
    int parts, taper;
    volatile int failed;
} rows_t;

static void rows_part(void *ctx, int part, int thread)
{
    rows_t *r = (rows_t *)ctx;
    slots_t s = *r->slots;
    int64_t r0 = (int64_t)part * r->step, r1 = r0 + r->step;
    if (r->taper) {
        int64_t units = (r->total + r->align - 1) / r->align;
        r0 = taper_edge(part, r->parts, units, 1) * r->align;
        r1 = taper_edge(part + 1, r->parts, units, 1) * r->align;
    }
    if (r1 > r->total)
        r1 = r->total;
    if (r0 >= r1)
        return;
    s.ints[s.ni - 2] = r0;
    s.ints[s.ni - 1] = r1;
    if (r->entry->fn(s.ptrs, s.ints, s.reals) != 0)
        r->failed = 1;
}

/* call_rows(first, count, fallback, threads, total, align, *args): the entry's rows 0..total cut
 * into pieces (multiples of align rows) shared among `threads` threads of the pool; None, or
 * NotImplemented when no entry takes the arguments or the kernel raised (the caller then asks numba).
 * rows_setup (1: ready; -1: no entry takes them; -2: a Python error set) and rows_exec (0 done, 1 the
 * kernel raised), as convf_setup / convf_exec (conv_f32.c). */
typedef struct {
    rows_t r;
    slots_t s;
    int threads;
} rows_call_t;

static int rows_setup(PyObject *const *args, Py_ssize_t nargs, rows_call_t *c)
{
    Py_ssize_t first, count, e, n;
    long threads, total, align;
    PyObject *const *kargs;
    if (!first_and_count(args, nargs, 6, &first, &count))
        return -2;
    threads = PyLong_AsLong(args[3]);
    total = PyLong_AsLong(args[4]);
    align = PyLong_AsLong(args[5]);
    if (PyErr_Occurred())
        return -2;
    kargs = args + 6;
    n = nargs - 6;
    if (n + 2 > 128 || align < 1 || total < 0)
        return -1;
    for (e = first; e < first + count; e++) {
        PyObject *full[130];
        const entry_t *en = &ENTRIES[e];
        PyObject *zero, *end;
        int ok;
        int64_t step;
        if (en->ret != '-')
            continue;
        zero = PyLong_FromLong(0);
        end = PyLong_FromLong(total);
        if (zero == NULL || end == NULL) {
            Py_XDECREF(zero);
            Py_XDECREF(end);
            return -2;
        }
        memcpy(full, kargs, (size_t)n * sizeof(PyObject *));
        full[n] = zero;
        full[n + 1] = end;
        ok = fill(en->spec, full, n + 2, &c->s);
        Py_DECREF(zero);
        Py_DECREF(end);
        if (!ok)
            continue;
        if (threads < 1)
            threads = 1;
        /* several pieces a thread: when a worker starts late or is descheduled, the others take more
         * of the pieces (see pool_run) */
        c->r.taper = threads > 1;
        step = threads > 1 ? threads * PARTS_PER_THREAD : PARTS_ALONE;
        step = (total + step - 1) / step;
        step = ((step + align - 1) / align) * align;
        if (step < 1)
            step = 1;
        c->r.parts = (int)((total + step - 1) / step);
        c->r.entry = en;
        c->r.total = total;
        c->r.step = step;
        c->r.align = align;
        c->threads = (int)threads;
        return 1;
    }
    return -1;
}

static int rows_exec(void *state)
{
    rows_call_t *c = (rows_call_t *)state;
    c->r.slots = &c->s;
    c->r.failed = 0;
    if (c->r.parts <= 1) {
        if (c->r.total > 0)
            rows_part(&c->r, 0, 0);
    } else {
        pool_run(rows_part, &c->r, c->r.parts, c->threads, 1);
    }
    return c->r.failed ? 1 : 0;
}

static PyObject *kernel_call_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    rows_call_t c;
    int r = rows_setup(args, nargs, &c);
    (void)self;
    if (r == -2)
        return NULL;
    if (r == 1) {
        Py_BEGIN_ALLOW_THREADS
        r = rows_exec(&c);
        Py_END_ALLOW_THREADS
        if (r == 0)
            Py_RETURN_NONE;
    }
    Py_RETURN_NOTIMPLEMENTED;
}

/* ------------------------------------------------------------------------------------------
 * c = a @ b for float32 matrices, cut in pieces shared by the pool, each piece one single-thread
 * cblas_sgemm of the OpenBLAS numpy loaded (its address comes from workbench/perf/blas.py).  OpenBLAS
 * cuts a product among threads itself, but its jobs wait for each other and it shares small
 * products badly (a 196x96 @ 96x576 product took as long on 2 threads as on 1); independent pieces
 * on the claiming pool never wait for a late thread.  Cut by rows (each thread packs its share of a
 * and all of b) when there are at least 32 a thread, else by output columns (pieces a multiple of 16
 * columns): measured inside MobileNet v1 / v2 on 2 cores, rows beat columns for 196 rows and more.
 * cblas order and transpose codes: cblas.h (101 row major, 111 no transpose, 112 transpose). */
typedef void (*sgemm64_fn)(int, int, int, int64_t, int64_t, int64_t, float, const float *, int64_t,
                           const float *, int64_t, float, float *, int64_t);
typedef void (*sgemm32_fn)(int, int, int, int32_t, int32_t, int32_t, float, const float *, int32_t,
                           const float *, int32_t, float, float *, int32_t);
typedef void (*set_threads_fn)(int);
typedef struct {
    void *sgemm;
    int ilp64, by_cols, tb;
    int64_t m, n, k, step;
    const float *a, *b;
    float *c;
    int epilogue;                  /* fc_f32: each piece then adds the bias and clamps (below) */
    const float *bias;             /* n values, or NULL: + 0.0f (what adding a bias of zeros gives) */
    float lo, hi;
} gemm_t;

/* rows x cols of c (row stride ldc) + bias[col], clamped to [lo, hi]: a float fully connected layer's
 * pass after its product, value for value what workbench/interpreter/fast/conv_2d.py's
 * float_epilogue_rows does (a NaN stays NaN: both comparisons are false) */
static void gemm_epilogue(float *c, int64_t ldc, int64_t rows, int64_t cols, const float *bias, float lo, float hi)
{
    int64_t i, j;
    for (i = 0; i < rows; i++) {
        float *row = c + i * ldc;
        for (j = 0; j < cols; j++) {
            float v = row[j] + (bias != NULL ? bias[j] : 0.0f);
            if (v < lo)
                v = lo;
            else if (v > hi)
                v = hi;
            row[j] = v;
        }
    }
}

static void gemm_part(void *ctx, int part, int thread)
{
    gemm_t *g = (gemm_t *)ctx;
    int64_t p0 = (int64_t)part * g->step, p1 = p0 + g->step, m = g->m, n = g->n;
    int64_t ldb = g->tb ? g->k : g->n;
    const float *a = g->a, *b = g->b, *bias = g->bias;
    float *c = g->c;
    (void)thread;
    if (g->by_cols) {
        if (p1 > n)
            p1 = n;
        n = p1 - p0;
        b += g->tb ? p0 * g->k : p0;
        c += p0;
        if (bias != NULL)
            bias += p0;
    } else {
        if (p1 > m)
            p1 = m;
        m = p1 - p0;
        a += p0 * g->k;
        c += p0 * g->n;
    }
    if (m <= 0 || n <= 0)
        return;
    if (g->ilp64)
        ((sgemm64_fn)g->sgemm)(101, 111, g->tb ? 112 : 111, m, n, g->k, 1.0f, a, g->k, b, ldb, 0.0f, c, g->n);
    else
        ((sgemm32_fn)g->sgemm)(101, 111, g->tb ? 112 : 111, (int32_t)m, (int32_t)n, (int32_t)g->k, 1.0f, a,
                               (int32_t)g->k, b, (int32_t)ldb, 0.0f, c, (int32_t)g->n);
    if (g->epilogue)
        gemm_epilogue(c, g->n, m, n, bias, g->lo, g->hi);
}

static PyArrayObject *float_matrix(PyObject *o)
{
    PyArrayObject *x;
    if (!PyArray_Check(o))
        return NULL;
    x = (PyArrayObject *)o;
    if (PyArray_NDIM(x) != 2 || PyArray_TYPE(x) != NPY_FLOAT32 || !PyArray_ISALIGNED(x) || !PyArray_ISNOTSWAPPED(x))
        return NULL;
    return x;
}

/* the operands of a product a @ b -> c (Python arrays) into g, and its cut for `threads` threads: the
 * number of pieces, or 0 when the arrays do not fit (a and c C-contiguous, c writable, b C- or
 * F-contiguous, float32, aligned) */
static int gemm_setup(gemm_t *g, PyObject *oa, PyObject *ob, PyObject *oc, long threads)
{
    PyArrayObject *a = float_matrix(oa), *b = float_matrix(ob), *c = float_matrix(oc);
    if (g->sgemm == NULL || a == NULL || b == NULL || c == NULL || !PyArray_IS_C_CONTIGUOUS(a)
        || !PyArray_IS_C_CONTIGUOUS(c) || !PyArray_ISWRITEABLE(c))
        return 0;
    g->m = PyArray_DIM(a, 0);
    g->k = PyArray_DIM(a, 1);
    g->n = PyArray_DIM(b, 1);
    if (PyArray_DIM(b, 0) != g->k || PyArray_DIM(c, 0) != g->m || PyArray_DIM(c, 1) != g->n || g->m < 1
        || g->n < 1 || g->k < 1 || (!g->ilp64 && (g->m > INT32_MAX || g->n > INT32_MAX || g->k > INT32_MAX)))
        return 0;
    if (PyArray_IS_C_CONTIGUOUS(b))
        g->tb = 0;
    else if (PyArray_IS_F_CONTIGUOUS(b))
        g->tb = 1;
    else
        return 0;
    g->a = (const float *)PyArray_DATA(a);
    g->b = (const float *)PyArray_DATA(b);
    g->c = (float *)PyArray_DATA(c);
    g->by_cols = g->m < 32 * threads && g->n >= 32 * threads;
    if (g->by_cols) {
        g->step = (g->n + threads - 1) / threads;
        g->step = (g->step + 15) / 16 * 16;
        return (int)((g->n + g->step - 1) / g->step);
    }
    g->step = (g->m + threads - 1) / threads;
    return (int)((g->m + g->step - 1) / g->step);
}

/* the pieces of g on up to `threads` threads, OpenBLAS on one thread meanwhile, then on `restore` again
 * (called without the GIL) */
static void gemm_run(gemm_t *g, int parts, long threads, void *setn, long restore)
{
    if (restore != 1)
        ((set_threads_fn)setn)(1);
    if (parts <= 1)
        gemm_part(g, 0, 0);
    else
        pool_run(gemm_part, g, parts, (int)threads, 1);
    if (restore != 1)
        ((set_threads_fn)setn)((int)restore);
}

static long clamp_threads(long threads)
{
    return threads < 1 ? 1 : threads > MAX_THREADS ? MAX_THREADS : threads;
}

/* the arguments gemm_split and fc_f32 share — sgemm, set_threads, ilp64 (0-2), threads (4), a, b, c (5-7) —
 * into g: the number of pieces, 0 when the arrays do not fit, -1 with a Python error set */
static int gemm_args(PyObject *const *args, gemm_t *g, void **setn, long *threads)
{
    memset(g, 0, sizeof *g);
    g->sgemm = PyLong_AsVoidPtr(args[0]);
    *setn = PyLong_AsVoidPtr(args[1]);
    g->ilp64 = (int)PyLong_AsLong(args[2]);
    *threads = clamp_threads(PyLong_AsLong(args[4]));
    if (PyErr_Occurred())
        return -1;
    return *setn == NULL ? 0 : gemm_setup(g, args[5], args[6], args[7], *threads);
}

/* gemm_split(sgemm, set_threads, ilp64, restore, threads, a, b, c): c = a @ b on the pool; False when
 * the arrays do not fit (then the caller multiplies another way).  a and c C-contiguous, b C- or
 * F-contiguous; OpenBLAS runs on one thread meanwhile, then on `restore` threads again. */
static PyObject *kernel_gemm_split(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    gemm_t g;
    void *setn;
    long restore, threads;
    int parts;
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "gemm_split(sgemm, set_threads, ilp64, restore, threads, a, b, c)");
        return NULL;
    }
    restore = PyLong_AsLong(args[3]);
    if ((restore == -1 && PyErr_Occurred()) || (parts = gemm_args(args, &g, &setn, &threads)) < 0)
        return NULL;
    if (parts == 0)
        Py_RETURN_FALSE;
    Py_BEGIN_ALLOW_THREADS
    gemm_run(&g, parts, threads, setn, restore);
    Py_END_ALLOW_THREADS
    Py_RETURN_TRUE;
}

/* fc_f32(sgemm, set_threads, ilp64, get_threads, threads, a, b, c, bias, lo, hi): a float fully connected
 * layer, c = clamp(a @ b + bias, lo, hi), as gemm_split's pieces, each adding the bias and clamping its
 * part of c right after its product (bias: n float32 values, or None for none); OpenBLAS is set to one
 * thread meanwhile and back to what get_threads answered.  0 done, -1 not taken (the arrays do not fit).
 * One library call for the node: it joins the runs of library calls (workbench/interpreter/fused.py). */
typedef int (*get_threads_fn)(void);
typedef struct {
    gemm_t g;
    void *setn, *getn;
    long threads;
    int parts;
} fc_t;

/* fc_f32's setup / exec (as conv_f32.c's convf_setup / convf_exec) */
static int fc_setup(PyObject *const *args, Py_ssize_t nargs, fc_t *f)
{
    double lo, hi;
    if (nargs != 11) {
        PyErr_SetString(PyExc_TypeError, "fc_f32(sgemm, set_threads, ilp64, get_threads, threads, a, b, c, bias, lo, hi)");
        return -2;
    }
    f->getn = PyLong_AsVoidPtr(args[3]);
    lo = PyFloat_AsDouble(args[9]);
    hi = PyFloat_AsDouble(args[10]);
    if (PyErr_Occurred() || (f->parts = gemm_args(args, &f->g, &f->setn, &f->threads)) < 0)
        return -2;
    if (f->parts == 0 || f->getn == NULL)
        return -1;
    if (args[8] != Py_None) {
        PyArrayObject *bias = (PyArrayObject *)args[8];
        if (!PyArray_Check(args[8]) || PyArray_NDIM(bias) != 1 || PyArray_TYPE(bias) != NPY_FLOAT32
            || PyArray_DIM(bias, 0) != f->g.n || !PyArray_IS_C_CONTIGUOUS(bias) || !PyArray_ISALIGNED(bias)
            || !PyArray_ISNOTSWAPPED(bias))
            return -1;
        f->g.bias = (const float *)PyArray_DATA(bias);
    }
    f->g.epilogue = 1;
    f->g.lo = (float)lo;
    f->g.hi = (float)hi;
    return 1;
}

static int fc_exec(void *state)
{
    fc_t *f = (fc_t *)state;
    gemm_run(&f->g, f->parts, f->threads, f->setn, ((get_threads_fn)f->getn)());
    return 0;
}

NATIVE_FUNCTION(kernel_fc_f32, fc_t, fc_setup, fc_exec)

/* blas_callback(): the address of the function OpenBLAS may hand its jobs to */
static PyObject *kernel_blas_callback(PyObject *self, PyObject *unused)
{
    return PyLong_FromVoidPtr((void *)blas_threads_callback);
}

/* pool_stats(): (jobs posted to the pool, of those run by the caller alone): how often the pool's workers
 * actually share the row pieces */
static PyObject *kernel_pool_stats(PyObject *self, PyObject *unused)
{
    return Py_BuildValue("(ll)", pool.stat_jobs, pool.stat_alone);
}

/* copy(x, out): out's bytes = x's (two C-contiguous, aligned arrays of one element type and one size, out
 * writable; the same memory is fine): a RESHAPE or SQUEEZE as one library call, so that a network's last
 * nodes join the runs of library calls (workbench/interpreter/fast/reshape.py).  0 done, -1 not taken. */
typedef struct {
    const void *x;
    void *out;
    size_t bytes;
} copy_t;

/* copy's setup / exec (as conv_f32.c's convf_setup / convf_exec) */
static int copy_setup(PyObject *const *args, Py_ssize_t nargs, copy_t *c)
{
    PyArrayObject *x, *out;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "copy(x, out)");
        return -2;
    }
    if (!PyArray_Check(args[0]) || !PyArray_Check(args[1]))
        return -1;
    x = (PyArrayObject *)args[0];
    out = (PyArrayObject *)args[1];
    if (!PyArray_IS_C_CONTIGUOUS(x) || !PyArray_IS_C_CONTIGUOUS(out) || !PyArray_ISWRITEABLE(out)
        || !PyArray_EquivTypes(PyArray_DESCR(x), PyArray_DESCR(out)) || PyArray_NBYTES(x) != PyArray_NBYTES(out)
        || PyDataType_REFCHK(PyArray_DESCR(x)))
        return -1;      /* object arrays (STRING) hold references: numpy copies those */
    c->x = PyArray_DATA(x);
    c->out = PyArray_DATA(out);
    c->bytes = (size_t)PyArray_NBYTES(x);
    return 1;
}

static int copy_exec(void *state)
{
    copy_t *c = (copy_t *)state;
    if (c->x != c->out)
        memmove(c->out, c->x, c->bytes);
    return 0;
}

NATIVE_FUNCTION(kernel_copy, copy_t, copy_setup, copy_exec)

/* A run of calls prepared once (prepare_run): a call of conv_f32, dw_f32, dw_i8, binary_f32, sum_f32,
 * softmax_f32, fc_f32, fc_dot_f32, copy, call_rows (a numba kernel's rows on the pool) or call (a numba kernel that
 * answers None) whose arguments fit is kept as its function's structure, filled by the function's setup, and
 * run by its exec alone (shim_head.c: NATIVE_NOMEM); every other call stays a Python call.  So a network
 * whose nodes are all such calls runs from its first node to its last with the GIL let go once: each Python
 * call between two prepared ones took the GIL back (~3 us inside MobileNet v1, with its state cold from the
 * cache) and checked its arguments (~2.5 us).  The capsule holds the calls, so the arrays whose data the
 * structures point into live as long as it does; the caller makes a new one when the arrays change
 * (workbench/interpreter/fused.py).  What this saves is the checking of each call's arguments at every
 * invoke: inside a network those Python objects come back cold from the cache (~0.5 us a call). */
typedef int (*native_setup_fn)(PyObject *const *args, Py_ssize_t nargs, void *state);

typedef struct {
    native_exec_fn exec;            /* NULL: a Python call */
    void *state;
} prepared_call_t;

typedef struct {
    PyObject *calls;
    Py_ssize_t n;
    prepared_call_t item[1];
} prepared_run_t;

static const char PREPARED_RUN[] = "workbench_kernels.prepared_run";

/* each loop's setup as a native_setup_fn (its structure behind a void pointer) */
#define PREPARABLE_SETUP(name, setup, type) \
    static int name(PyObject *const *args, Py_ssize_t nargs, void *state) { return setup(args, nargs, (type *)state); }
PREPARABLE_SETUP(setup_conv_f32, convf_setup, convf_t)
PREPARABLE_SETUP(setup_dw_f32, dwf_setup, dwf_t)
PREPARABLE_SETUP(setup_binary_f32, ewb_setup, ewb_t)
PREPARABLE_SETUP(setup_dw_i8, dwi8_setup, dwi8_t)
PREPARABLE_SETUP(setup_call_rows, rows_setup, rows_call_t)
PREPARABLE_SETUP(setup_call, call_setup, call_t)
PREPARABLE_SETUP(setup_sum_f32, ews_setup, ews_t)
PREPARABLE_SETUP(setup_softmax_f32, smx_setup, smx_t)
PREPARABLE_SETUP(setup_fc_f32, fc_setup, fc_t)
PREPARABLE_SETUP(setup_fc_dot_f32, fcdot_setup, fcdot_t)
PREPARABLE_SETUP(setup_copy, copy_setup, copy_t)
#undef PREPARABLE_SETUP

static const struct {
    PyObject *(*function)(PyObject *, PyObject *const *, Py_ssize_t);
    native_setup_fn setup;
    native_exec_fn exec;
    size_t size;
} PREPARABLE[] = {
    {kernel_conv_f32, setup_conv_f32, convf_exec, sizeof(convf_t)},
    {kernel_dw_f32, setup_dw_f32, dwf_exec, sizeof(dwf_t)},
    {kernel_binary_f32, setup_binary_f32, ewb_exec, sizeof(ewb_t)},
    {kernel_dw_i8, setup_dw_i8, dwi8_exec, sizeof(dwi8_t)},
    {kernel_call_rows, setup_call_rows, rows_exec, sizeof(rows_call_t)},
    {kernel_call, setup_call, call_exec, sizeof(call_t)},
    {kernel_sum_f32, setup_sum_f32, ews_exec, sizeof(ews_t)},
    {kernel_softmax_f32, setup_softmax_f32, smx_exec, sizeof(smx_t)},
    {kernel_fc_f32, setup_fc_f32, fc_exec, sizeof(fc_t)},
    {kernel_copy, setup_copy, copy_exec, sizeof(copy_t)},
    {kernel_fc_dot_f32, setup_fc_dot_f32, fcdot_exec, sizeof(fcdot_t)},
};

/* the calls tuple's call i as (function, args tuple), or -1 with TypeError */
static int call_parts(PyObject *calls, Py_ssize_t i, PyObject **fn, PyObject **a)
{
    PyObject *c = PyTuple_GET_ITEM(calls, i);
    if (!PyTuple_Check(c) || PyTuple_GET_SIZE(c) != 2 || !PyTuple_Check(PyTuple_GET_ITEM(c, 1))) {
        PyErr_Format(PyExc_TypeError, "run_calls: call %zd is not a (function, args tuple) pair", i);
        return -1;
    }
    *fn = PyTuple_GET_ITEM(c, 0);
    *a = PyTuple_GET_ITEM(c, 1);
    return 0;
}

/* a Python call of the run: 0 when it answered 0 or None (done), 1 for anything else, -1 on an error */
static int python_call(PyObject *fn, PyObject *a)
{
    PyObject *r = PyObject_Vectorcall(fn, ((PyTupleObject *)a)->ob_item, PyTuple_GET_SIZE(a), NULL);
    long v;
    int overflow = 0;
    if (r == NULL)
        return -1;
    v = r == Py_None ? 0 : PyLong_Check(r) ? PyLong_AsLongAndOverflow(r, &overflow) : 1;
    Py_DECREF(r);
    return v != 0 || overflow ? 1 : 0;
}

static void prepared_run_free(PyObject *capsule)
{
    prepared_run_t *p = (prepared_run_t *)PyCapsule_GetPointer(capsule, PREPARED_RUN);
    Py_ssize_t i;
    if (p == NULL)
        return;
    for (i = 0; i < p->n; i++)
        free(p->item[i].state);
    Py_XDECREF(p->calls);
    free(p);
}

/* prepare_run(calls): calls as run_calls takes them, prepared (see prepared_run_t) into a capsule that
 * run_calls takes in their place */
static PyObject *kernel_prepare_run(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *calls, *capsule, *fn, *a;
    prepared_run_t *p;
    Py_ssize_t i, n;
    size_t j;
    (void)self;
    if (nargs != 1 || !PyTuple_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "prepare_run(calls: tuple of (function, args tuple))");
        return NULL;
    }
    calls = args[0];
    n = PyTuple_GET_SIZE(calls);
    p = (prepared_run_t *)calloc(1, sizeof(prepared_run_t) + (size_t)(n > 0 ? n : 1) * sizeof(prepared_call_t));
    if (p == NULL)
        return PyErr_NoMemory();
    Py_INCREF(calls);
    p->calls = calls;
    p->n = n;
    capsule = PyCapsule_New(p, PREPARED_RUN, prepared_run_free);
    if (capsule == NULL) {
        Py_DECREF(calls);
        free(p);
        return NULL;
    }
    for (i = 0; i < n; i++) {
        if (call_parts(calls, i, &fn, &a) < 0) {
            Py_DECREF(capsule);
            return NULL;
        }
        if (!PyCFunction_Check(fn))
            continue;
        for (j = 0; j < sizeof PREPARABLE / sizeof PREPARABLE[0]; j++) {
            if (PyCFunction_GET_FUNCTION(fn) != (PyCFunction)(void (*)(void))PREPARABLE[j].function)
                continue;
            p->item[i].state = malloc(PREPARABLE[j].size);
            if (p->item[i].state == NULL) {
                Py_DECREF(capsule);
                return PyErr_NoMemory();
            }
            /* ready: its exec from now on; else (nothing to compute, not taken, or arguments the function
             * would refuse with an error) the Python call, which answers or raises as it always did */
            if (PREPARABLE[j].setup(((PyTupleObject *)a)->ob_item, PyTuple_GET_SIZE(a), p->item[i].state) == 1) {
                p->item[i].exec = PREPARABLE[j].exec;
            } else {
                PyErr_Clear();
                free(p->item[i].state);
                p->item[i].state = NULL;
            }
            break;
        }
    }
    return capsule;
}

/* prepared_calls(capsule): for each call of a prepare_run capsule, whether it runs from its prepared
 * structure (True) or stays a Python call (False) */
static PyObject *kernel_prepared_calls(PyObject *self, PyObject *capsule)
{
    prepared_run_t *p;
    PyObject *t;
    Py_ssize_t i;
    (void)self;
    p = (prepared_run_t *)PyCapsule_GetPointer(capsule, PREPARED_RUN);
    if (p == NULL)
        return NULL;
    t = PyTuple_New(p->n);
    for (i = 0; t != NULL && i < p->n; i++)
        PyTuple_SET_ITEM(t, i, PyBool_FromLong(p->item[i].exec != NULL));
    return t;
}

/* run_calls(calls, start): calls[i] = (function, args), or a prepare_run capsule of them; from i = start on,
 * each function called with its arguments in turn until one answers anything but the integer 0 or None
 * (done: the library's C loops answer 0, call_rows None; anything else is a refusal or a raised guard, which
 * the node's own code then handles): the index of that call, or len(calls) when all were done.  Prepared
 * calls in a row run one after the other with the GIL let go once.
 * A run of the speed layer's nodes in one call from Python (workbench/interpreter/fused.py). */
static PyObject *kernel_run_calls(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *calls, *fn, *a;
    prepared_run_t *p = NULL;
    Py_ssize_t i, n, start;
    int r;
    (void)self;
    if (nargs == 2 && PyCapsule_IsValid(args[0], PREPARED_RUN)) {
        p = (prepared_run_t *)PyCapsule_GetPointer(args[0], PREPARED_RUN);
        calls = p->calls;
    } else if (nargs == 2 && PyTuple_Check(args[0])) {
        calls = args[0];
    } else {
        PyErr_SetString(PyExc_TypeError, "run_calls(calls: tuple of (function, args tuple) or prepare_run's "
                                         "capsule, start: int)");
        return NULL;
    }
    n = PyTuple_GET_SIZE(calls);
    start = PyLong_AsSsize_t(args[1]);
    if (start == -1 && PyErr_Occurred())
        return NULL;
    for (i = start < 0 ? 0 : start; i < n;) {
        if (p != NULL && p->item[i].exec != NULL) {
            r = 0;
            Py_BEGIN_ALLOW_THREADS
            for (; i < n && p->item[i].exec != NULL; i++)
                if ((r = p->item[i].exec(p->item[i].state)) != 0)
                    break;
            Py_END_ALLOW_THREADS
            if (r == NATIVE_NOMEM)
                return PyErr_NoMemory();
            if (r != 0)
                break;
            continue;
        }
        if (call_parts(calls, i, &fn, &a) < 0 || (r = python_call(fn, a)) < 0)
            return NULL;
        if (r != 0)
            break;
        i++;
    }
    return PyLong_FromSsize_t(i);
}

/* same_arrays(tensors, indices, arrays): whether tensors[indices[i]] is arrays[i] for every i (a list,
 * two tuples of one length): a run of library calls asks it before it starts, whether the arrays its calls
 * hold are still the context's (workbench/interpreter/fused.py); in C, as a loop in Python took ~20 µs
 * for MobileNet v2's 241 arrays, time the second thread spends waiting */
static PyObject *kernel_same_arrays(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t i, n, size;
    (void)self;
    if (nargs != 3 || !PyList_Check(args[0]) || !PyTuple_Check(args[1]) || !PyTuple_Check(args[2])
        || PyTuple_GET_SIZE(args[1]) != PyTuple_GET_SIZE(args[2])) {
        PyErr_SetString(PyExc_TypeError, "same_arrays(tensors: list, indices: tuple, arrays: tuple of its length)");
        return NULL;
    }
    n = PyTuple_GET_SIZE(args[1]);
    size = PyList_GET_SIZE(args[0]);
    for (i = 0; i < n; i++) {
        Py_ssize_t t = PyLong_AsSsize_t(PyTuple_GET_ITEM(args[1], i));
        if (t == -1 && PyErr_Occurred())
            return NULL;
        if (t < 0 || t >= size || PyList_GET_ITEM(args[0], t) != PyTuple_GET_ITEM(args[2], i))
            Py_RETURN_FALSE;
    }
    Py_RETURN_TRUE;
}

static PyMethodDef METHODS[] = {
    {"pool_stats", (PyCFunction)kernel_pool_stats, METH_NOARGS,
     "pool_stats(): (jobs posted, run by the caller alone)"},
    {"call_rows", (PyCFunction)(void (*)(void))kernel_call_rows, METH_FASTCALL,
     "call_rows(first, count, fallback, threads, total, align, *args): rows 0..total on the pool"},
    {"blas_callback", (PyCFunction)kernel_blas_callback, METH_NOARGS,
     "blas_callback(): address of the OpenBLAS threads callback (each job on a thread of the pool)"},
    {"gemm_split", (PyCFunction)(void (*)(void))kernel_gemm_split, METH_FASTCALL,
     "gemm_split(sgemm, set_threads, ilp64, restore, threads, a, b, c): c = a @ b in pieces on the pool"},
    {"fc_f32", (PyCFunction)(void (*)(void))kernel_fc_f32, METH_FASTCALL,
     "fc_f32(sgemm, set_threads, ilp64, get_threads, threads, a, b, c, bias, lo, hi): c = clamp(a @ b + bias) "
     "in gemm_split's pieces on the pool (0 done, -1 not taken)"},
    {"fc_dot_f32", (PyCFunction)(void (*)(void))kernel_fc_dot_f32, METH_FASTCALL,
     "fc_dot_f32(threads, x, w, bias, out, lo, hi, limit): out = clamp(x @ w.T + bias), one dot product an "
     "output (0 done, 1 guard raised, -1 not taken)"},
    {"conv_f32", (PyCFunction)(void (*)(void))kernel_conv_f32, METH_FASTCALL,
     "conv_f32(threads, x, packed, bias, zeros, out, geometry, clamp): a float convolution on the pool "
     "(0 done, 1 guard raised, -1 not taken)"},
    {"dw_i8", (PyCFunction)(void (*)(void))kernel_dw_i8, METH_FASTCALL,
     "dw_i8(threads, x, w, out, q32, q64, scalars, geometry): an int8 depthwise convolution (depth multiplier 1) "
     "on the pool (0 done, -1 not taken)"},
    {"dw_f32", (PyCFunction)(void (*)(void))kernel_dw_f32, METH_FASTCALL,
     "dw_f32(threads, x, w, out, geometry, clamp): a float32 depthwise convolution (depth multiplier 1) "
     "on the pool, in the reference kernels' order (0 done, -1 not taken)"},
    {"binary_f32", (PyCFunction)(void (*)(void))kernel_binary_f32, METH_FASTCALL,
     "binary_f32(threads, a, b, out, clamp, op): out = clamp(a op b), op 0 add, 1 subtract, 2 multiply, "
     "on the pool (0 done, -1 not taken)"},
    {"sum_f32", (PyCFunction)(void (*)(void))kernel_sum_f32, METH_FASTCALL,
     "sum_f32(threads, x, out, shape, divisor): out[a, b] = sum over r of x[a, r, b] in order, / divisor "
     "unless 0 (0 done, -1 not taken)"},
    {"softmax_f32", (PyCFunction)(void (*)(void))kernel_softmax_f32, METH_FASTCALL,
     "softmax_f32(threads, x, out, n, beta): float32 SOFTMAX over rows of n values in litert-x86's (Eigen's) "
     "arithmetic (0 done, -1 not taken)"},
    {"copy", (PyCFunction)(void (*)(void))kernel_copy, METH_FASTCALL,
     "copy(x, out): out's bytes = x's (C-contiguous, one type, one size; 0 done, -1 not taken)"},
    {"same_arrays", (PyCFunction)(void (*)(void))kernel_same_arrays, METH_FASTCALL,
     "same_arrays(tensors, indices, arrays): whether tensors[indices[i]] is arrays[i] for every i"},
    {"run_calls", (PyCFunction)(void (*)(void))kernel_run_calls, METH_FASTCALL,
     "run_calls(calls, start): call each (function, args) of calls (or of prepare_run's capsule of them) from "
     "start on until one answers other than 0 or None; its index, or len(calls)"},
    {"prepare_run", (PyCFunction)(void (*)(void))kernel_prepare_run, METH_FASTCALL,
     "prepare_run(calls): the calls with the arguments of the library's C loops checked once, for run_calls"},
    {"prepared_calls", (PyCFunction)kernel_prepared_calls, METH_O,
     "prepared_calls(capsule): for each call of a prepare_run capsule, whether it runs without Python"},
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
