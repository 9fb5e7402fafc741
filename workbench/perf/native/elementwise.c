/* ------------------------------------------------------------------------------------------
 * Float32 ADD, SUB and MUL of two tensors of the output's shape, with the fused activation's clamp:
 * out[i] = clamp(a[i] op b[i]); and float32 SUM / MEAN over one block of axes (sum_f32, at the end).
 * workbench/perf/build.py puts this file after depthwise.c; shim_tail.c lists binary_f32 and sum_f32
 * in the module's table.
 *
 * Every output is one IEEE operation and one clamp, whatever the order: the bits of the teaching
 * layer (reference_ops::Add / Sub / Mul with their activation) on any number of threads.  The clamp is
 * min(hi, max(lo, v)) with v second: max and min return their second operand when the two are equal or
 * one is NaN, so NaN stays NaN and -0.0 stays -0.0, as "v < lo ? lo : v > hi ? hi : v" leaves them.
 * Sixteen values a vector; pieces of the flat arrays shared on the pool above EW_MIN_SPLIT values.
 * (The CPU check is conv_f32.c's: AVX-512F.) */
#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define EW_X86 1
#define EW_TARGET __attribute__((target("avx512f")))
#else
#define EW_X86 0
#endif

#define EW_MIN_SPLIT (1 << 15)      /* values from which the pool shares the work */
#define EW_PARTS_PER_THREAD 8       /* as CONVF_PARTS_PER_THREAD (conv_f32.c) */

typedef struct {
    const float *a, *b;
    float *out;
    int64_t n, per_part;
    int op;                         /* 0 add, 1 subtract, 2 multiply */
    float lo, hi;
} ewb_t;

#if EW_X86

EW_TARGET static inline __attribute__((always_inline)) __m512 ewb_op(__m512 x, __m512 y, const int op)
{
    return op == 0 ? _mm512_add_ps(x, y) : op == 1 ? _mm512_sub_ps(x, y) : _mm512_mul_ps(x, y);
}

/* values i0..i1, one operation (a constant in each copy the compiler makes) */
EW_TARGET static inline __attribute__((always_inline)) void ewb_range(const ewb_t *g, int64_t i0, int64_t i1,
                                                                      const int op)
{
    const __m512 lo = _mm512_set1_ps(g->lo), hi = _mm512_set1_ps(g->hi);
    int64_t i = i0;
    for (; i + 16 <= i1; i += 16) {
        __m512 v = ewb_op(_mm512_loadu_ps(g->a + i), _mm512_loadu_ps(g->b + i), op);
        _mm512_storeu_ps(g->out + i, _mm512_min_ps(hi, _mm512_max_ps(lo, v)));
    }
    if (i < i1) {
        __mmask16 m = (__mmask16)((1u << (i1 - i)) - 1u);
        __m512 v = ewb_op(_mm512_maskz_loadu_ps(m, g->a + i), _mm512_maskz_loadu_ps(m, g->b + i), op);
        _mm512_mask_storeu_ps(g->out + i, m, _mm512_min_ps(hi, _mm512_max_ps(lo, v)));
    }
}

EW_TARGET static void ewb_part(void *ctx, int part, int thread)
{
    const ewb_t *g = (const ewb_t *)ctx;
    int64_t i0 = part * g->per_part, i1 = i0 + g->per_part < g->n ? i0 + g->per_part : g->n;
    (void)thread;
    if (g->op == 0)
        ewb_range(g, i0, i1, 0);
    else if (g->op == 1)
        ewb_range(g, i0, i1, 1);
    else
        ewb_range(g, i0, i1, 2);
}

#else

static void ewb_part(void *ctx, int part, int thread)
{
    (void)ctx;
    (void)part;
    (void)thread;
}

#endif

/* binary_f32(threads, a, b, out, clamp, op): out = clamp(a op b) on the pool; a, b, out float32 of one
 * dimension and the same length; clamp float32 [lo, hi]; op 0 add, 1 subtract, 2 multiply.  0: done;
 * -1: not taken (no AVX-512 here, or arrays that do not fit), out untouched. */
static PyObject *kernel_binary_f32(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const native_arg_t spec[4] = {{1, NPY_FLOAT32, 0}, {1, NPY_FLOAT32, 0}, {1, NPY_FLOAT32, 1},
                                         {1, NPY_FLOAT32, 0}};
    static const char usage[] = "binary_f32(threads, a, b, out, clamp, op)";
    PyArrayObject *a[4];
    ewb_t g;
    long threads, op;
    int fit, parts;
    (void)self;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, usage);
        return NULL;
    }
    fit = native_args(args, nargs - 1, usage, spec, 4, &threads, a);
    if (fit < 0)
        return NULL;
    op = PyLong_AsLong(args[5]);
    if (op == -1 && PyErr_Occurred())
        return NULL;
    if (!convf_cpu_ok() || !fit || op < 0 || op > 2 || PyArray_DIM(a[1], 0) != PyArray_DIM(a[0], 0)
        || PyArray_DIM(a[2], 0) != PyArray_DIM(a[0], 0) || PyArray_DIM(a[3], 0) != 2)
        return PyLong_FromLong(-1);
    g.a = (const float *)PyArray_DATA(a[0]);
    g.b = (const float *)PyArray_DATA(a[1]);
    g.out = (float *)PyArray_DATA(a[2]);
    g.n = PyArray_DIM(a[0], 0);
    g.op = (int)op;
    g.lo = ((const float *)PyArray_DATA(a[3]))[0];
    g.hi = ((const float *)PyArray_DATA(a[3]))[1];
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    parts = threads > 1 && g.n >= EW_MIN_SPLIT ? (int)(EW_PARTS_PER_THREAD * threads) : 1;
    g.per_part = ((g.n + parts - 1) / parts + 15) / 16 * 16;   /* pieces of whole vectors */
    parts = g.per_part > 0 ? (int)((g.n + g.per_part - 1) / g.per_part) : 1;
    Py_BEGIN_ALLOW_THREADS
    if (parts <= 1)
        ewb_part(&g, 0, 0);
    else
        pool_run(ewb_part, &g, parts, (int)threads, 1);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(0);
}

/* sum_f32(threads, x, out, shape, divisor): x float32 flat [A, R, B], out float32 flat [A, B]; each
 * output the sum of its R values in memory order from the first (out = x[a, 0, b], then + x[a, 1, b],
 * ..., each sum rounded to float32: optimized_ops::ReduceImpl's order, the teaching layer's
 * sequential sum), then divided by divisor[0] unless it is 0 (a MEAN's count, as float32).  shape int64
 * [A, R, B] with R >= 1.  One thread (a network's reductions are small); 0: done; -1: not taken. */
#if EW_X86
EW_TARGET static void ews_sum(const float *x, float *out, int64_t na, int64_t nr, int64_t nb, float divisor)
{
    const __m512 d = _mm512_set1_ps(divisor);
    int64_t a, r, b;
    for (a = 0; a < na; a++) {
        const float *xa = x + a * nr * nb;
        float *oa = out + a * nb;
        for (b = 0; b < nb; b += 16) {
            __mmask16 m = nb - b >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (nb - b)) - 1u);
            __m512 acc = _mm512_maskz_loadu_ps(m, xa + b);
            for (r = 1; r < nr; r++)
                acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(m, xa + r * nb + b));
            if (divisor != 0.0f)
                acc = _mm512_div_ps(acc, d);
            _mm512_mask_storeu_ps(oa + b, m, acc);
        }
    }
}
#else
static void ews_sum(const float *x, float *out, int64_t na, int64_t nr, int64_t nb, float divisor)
{
    (void)x; (void)out; (void)na; (void)nr; (void)nb; (void)divisor;
}
#endif

static PyObject *kernel_sum_f32(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const native_arg_t spec[4] = {{1, NPY_FLOAT32, 0}, {1, NPY_FLOAT32, 1}, {1, NPY_INT64, 0},
                                         {1, NPY_FLOAT32, 0}};
    PyArrayObject *a[4];
    const int64_t *shape;
    long threads;
    int fit = native_args(args, nargs, "sum_f32(threads, x, out, shape, divisor)", spec, 4, &threads, a);
    (void)self;
    if (fit < 0)
        return NULL;
    if (!convf_cpu_ok() || !fit || PyArray_DIM(a[2], 0) != 3 || PyArray_DIM(a[3], 0) != 1)
        return PyLong_FromLong(-1);
    shape = (const int64_t *)PyArray_DATA(a[2]);
    if (shape[0] < 0 || shape[1] < 1 || shape[2] < 0 || PyArray_DIM(a[0], 0) != shape[0] * shape[1] * shape[2]
        || PyArray_DIM(a[1], 0) != shape[0] * shape[2])
        return PyLong_FromLong(-1);
    Py_BEGIN_ALLOW_THREADS
    ews_sum((const float *)PyArray_DATA(a[0]), (float *)PyArray_DATA(a[1]), shape[0], shape[1], shape[2],
            ((const float *)PyArray_DATA(a[3]))[0]);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(0);
}
