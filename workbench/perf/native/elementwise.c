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

#define EW_MIN_SPLIT (1 << 15)      /* values from which the pool shares an ADD / SUB / MUL: below, the
                                     * hand-off costs more than the half it saves (a trace of each pool
                                     * job inside MobileNet v2 at 2 threads: 14x14x64 ADD 2-3 us on one
                                     * thread, 4.7-5.7 us on two; 28x28x32 7.1 and 6.5 us; 56x56x24 29 and
                                     * 18 us) */
#define EW_SUM_MIN_SPLIT (1 << 16)  /* values (of A * R * B) from which a SUM / MEAN is shared: a MobileNet's
                                     * global pool (7x7x1024, 50 176 values) took 2.2 us on one thread and
                                     * 4.7 us cut for two (hot, in a loop) */
#define EW_PARTS_PER_THREAD 8       /* as CONVF_PARTS_PER_THREAD (conv_f32.c) */

typedef struct {
    const float *a, *b;
    float *out;
    int64_t n, per_part;
    int op;                         /* 0 add, 1 subtract, 2 multiply */
    float lo, hi;
    int threads, parts;             /* the pool's threads and pieces for this call */
} ewb_t;

#if EW_X86

EW_TARGET static inline __attribute__((always_inline)) __m512 ewb_op(__m512 x, __m512 y, const int op)
{
    /* x the first source: with two NaNs its payload comes out (conv_f32.c's ordered_add) */
    return op == 0 ? ordered_add(x, y) : op == 1 ? _mm512_sub_ps(x, y) : ordered_mul(x, y);
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
 * -1: not taken (no AVX-512 here, or arrays that do not fit), out untouched.  ewb_setup / ewb_exec: as
 * convf_setup / convf_exec (conv_f32.c). */
static int ewb_setup(PyObject *const *args, Py_ssize_t nargs, ewb_t *g)
{
    static const native_arg_t spec[4] = {{1, NPY_FLOAT32, 0}, {1, NPY_FLOAT32, 0}, {1, NPY_FLOAT32, 1},
                                         {1, NPY_FLOAT32, 0}};
    static const char usage[] = "binary_f32(threads, a, b, out, clamp, op)";
    PyArrayObject *a[4];
    long threads, op;
    int fit, parts;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -2;
    }
    fit = native_args(args, nargs - 1, usage, spec, 4, &threads, a);
    if (fit < 0)
        return -2;
    op = PyLong_AsLong(args[5]);
    if (op == -1 && PyErr_Occurred())
        return -2;
    if (!convf_cpu_ok() || !fit || op < 0 || op > 2 || PyArray_DIM(a[1], 0) != PyArray_DIM(a[0], 0)
        || PyArray_DIM(a[2], 0) != PyArray_DIM(a[0], 0) || PyArray_DIM(a[3], 0) != 2)
        return -1;
    g->a = (const float *)PyArray_DATA(a[0]);
    g->b = (const float *)PyArray_DATA(a[1]);
    g->out = (float *)PyArray_DATA(a[2]);
    g->n = PyArray_DIM(a[0], 0);
    g->op = (int)op;
    g->lo = ((const float *)PyArray_DATA(a[3]))[0];
    g->hi = ((const float *)PyArray_DATA(a[3]))[1];
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    parts = threads > 1 && g->n >= EW_MIN_SPLIT ? (int)(EW_PARTS_PER_THREAD * threads) : 1;
    g->per_part = ((g->n + parts - 1) / parts + 15) / 16 * 16;   /* pieces of whole vectors */
    g->parts = g->per_part > 0 ? (int)((g->n + g->per_part - 1) / g->per_part) : 1;
    g->threads = (int)threads;
    return 1;
}

/* run what ewb_setup made ready, the GIL let go: 0 */
static int ewb_exec(void *state)
{
    ewb_t *g = (ewb_t *)state;
    native_pieces(ewb_part, g, g->parts, g->threads);
    return 0;
}

NATIVE_FUNCTION(kernel_binary_f32, ewb_t, ewb_setup, ewb_exec)

/* sum_f32(threads, x, out, shape, divisor): x float32 flat [A, R, B], out float32 flat [A, B]; each
 * output the sum of its R values in memory order from the first (out = x[a, 0, b], then + x[a, 1, b],
 * ..., each sum rounded to float32: optimized_ops::ReduceImpl's order, the teaching layer's
 * sequential sum), then divided by divisor[0] unless it is 0 (a MEAN's count, as float32).  shape int64
 * [A, R, B] with R >= 1.  From EW_SUM_MIN_SPLIT values on, the outputs are cut among threads (ranges of
 * 16 along B, or of A where B is short): each output is still one sequential sum.  0: done; -1: not
 * taken. */
typedef struct {
    const float *x;
    float *out;
    int64_t na, nr, nb, per_part;   /* per_part: outputs b (by_b) or a a piece */
    int by_b;
    float divisor;
    int threads, parts;             /* the pool's threads and pieces for this call */
} ews_t;

#if EW_X86
EW_TARGET static void ews_sum(const ews_t *g, int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
    const __m512 d = _mm512_set1_ps(g->divisor);
    const int64_t nr = g->nr, nb = g->nb;
    int64_t a, r, b;
    for (a = a0; a < a1; a++) {
        const float *xa = g->x + a * nr * nb;
        float *oa = g->out + a * nb;
        /* eight vectors of outputs at a time: each row's loads are one run of 512 bytes, and eight sums
         * advance together (one vector's sum alone waits on every add's latency, and its loads, one a
         * row of B values, reach a new page each: 8 us for MobileNet's 7x7x1024 mean, 1.5 us so) */
        for (b = b0; b + 128 <= b1; b += 128) {
            __m512 acc[8];
            int k;
#pragma GCC unroll 8
            for (k = 0; k < 8; k++)
                acc[k] = _mm512_loadu_ps(xa + b + 16 * k);
            for (r = 1; r < nr; r++) {
#pragma GCC unroll 8
                for (k = 0; k < 8; k++)
                    acc[k] = _mm512_add_ps(acc[k], _mm512_loadu_ps(xa + r * nb + b + 16 * k));
            }
#pragma GCC unroll 8
            for (k = 0; k < 8; k++)
                _mm512_storeu_ps(oa + b + 16 * k, g->divisor != 0.0f ? _mm512_div_ps(acc[k], d) : acc[k]);
        }
        for (; b < b1; b += 16) {
            __mmask16 m = b1 - b >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (b1 - b)) - 1u);
            __m512 acc = _mm512_maskz_loadu_ps(m, xa + b);
            for (r = 1; r < nr; r++)
                acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(m, xa + r * nb + b));
            if (g->divisor != 0.0f)
                acc = _mm512_div_ps(acc, d);
            _mm512_mask_storeu_ps(oa + b, m, acc);
        }
    }
}
#else
static void ews_sum(const ews_t *g, int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
    (void)g; (void)a0; (void)a1; (void)b0; (void)b1;
}
#endif

static void ews_part(void *ctx, int part, int thread)
{
    const ews_t *g = (const ews_t *)ctx;
    const int64_t n = g->by_b ? g->nb : g->na, i0 = part * g->per_part;
    const int64_t i1 = i0 + g->per_part < n ? i0 + g->per_part : n;
    (void)thread;
    if (g->by_b)
        ews_sum(g, 0, g->na, i0, i1);
    else
        ews_sum(g, i0, i1, 0, g->nb);
}

/* sum_f32's setup / exec (as conv_f32.c's convf_setup / convf_exec) */
static int ews_setup(PyObject *const *args, Py_ssize_t nargs, ews_t *gp)
{
    static const native_arg_t spec[4] = {{1, NPY_FLOAT32, 0}, {1, NPY_FLOAT32, 1}, {1, NPY_INT64, 0},
                                         {1, NPY_FLOAT32, 0}};
    PyArrayObject *a[4];
    const int64_t *shape;
    ews_t g;
    long threads;
    int parts = 1, fit = native_args(args, nargs, "sum_f32(threads, x, out, shape, divisor)", spec, 4, &threads, a);
    if (fit < 0)
        return -2;
    if (!convf_cpu_ok() || !fit || PyArray_DIM(a[2], 0) != 3 || PyArray_DIM(a[3], 0) != 1)
        return -1;
    shape = (const int64_t *)PyArray_DATA(a[2]);
    if (shape[0] < 0 || shape[1] < 1 || shape[2] < 0 || PyArray_DIM(a[0], 0) != shape[0] * shape[1] * shape[2]
        || PyArray_DIM(a[1], 0) != shape[0] * shape[2])
        return -1;
    g.x = (const float *)PyArray_DATA(a[0]);
    g.out = (float *)PyArray_DATA(a[1]);
    g.na = shape[0], g.nr = shape[1], g.nb = shape[2];
    g.divisor = ((const float *)PyArray_DATA(a[3]))[0];
    g.by_b = g.nb >= 16 * 2 * (threads > 1 ? threads : 1) || g.na < 2;
    {   /* pieces of whole vectors along B, or of rows of A */
        const int64_t n = g.by_b ? g.nb : g.na, unit = g.by_b ? 16 : 1;
        if (threads > MAX_THREADS)
            threads = MAX_THREADS;
        if (threads > 1 && PyArray_DIM(a[0], 0) >= EW_SUM_MIN_SPLIT)
            parts = (int)(EW_PARTS_PER_THREAD * threads);
        g.per_part = ((n + parts - 1) / parts + unit - 1) / unit * unit;
        parts = g.per_part > 0 ? (int)((n + g.per_part - 1) / g.per_part) : 1;
    }
    g.parts = parts;
    g.threads = (int)threads;
    *gp = g;
    return 1;
}

static int ews_exec(void *state)
{
    ews_t *g = (ews_t *)state;
    native_pieces(ews_part, g, g->parts, g->threads);
    return 0;
}

NATIVE_FUNCTION(kernel_sum_f32, ews_t, ews_setup, ews_exec)

/* ------------------------------------------------------------------------------------------
 * softmax_f32(threads, x, out, n, beta): float32 SOFTMAX over rows of n values, in the arithmetic of
 * litert-x86's optimized kernel (tensorflow/lite/kernels/internal/optimized/optimized_ops.h, Softmax:
 * an Eigen tensor expression), which the teaching layer spells out in
 * workbench/interpreter/kernels/_softmax.py: each row's maximum and, later, its sum by Eigen's packet
 * reductions (packets of 4 from the row's first 16-byte boundary of the flat tensor, two packet
 * accumulators, then the values before and after them one by one); exp((x - max) * beta) by Eigen's
 * packet exp (a Cody-Waite reduction, a degree-6 polynomial, 2^k as three factors) wherever the flat
 * tensor has a whole packet of 4, expf of the C library for the last few values; then each value times
 * 1 / sum.  The packet exp is lane by lane, so sixteen lanes give each lane's bits.  x, out float32 flat
 * (may be one array); n int64 [n] (the rows' length, dividing the size); beta float32 [beta].  One
 * thread.  0: done; -1: not taken. */
#if EW_X86
static inline float smx_fold(float a, float b, int is_max)
{
    return is_max ? (a < b ? b : a) : a + b;
}

/* Eigen's maximum or sum of v[0..n) with `head` values before the first packet */
static float smx_redux(const float *v, int64_t n, int64_t head, int is_max)
{
    int64_t body, body2, i, k;
    float r, a0, a1, a2, a3;
    if (head > n)
        head = n;
    body = (n - head) / 4 * 4;
    if (body == 0) {
        r = v[0];
        for (k = 1; k < n; k++)
            r = smx_fold(r, v[k], is_max);
        return r;
    }
    body2 = (n - head) / 8 * 8;
    a0 = v[head], a1 = v[head + 1], a2 = v[head + 2], a3 = v[head + 3];
    if (body > 4) {
        float b0 = v[head + 4], b1 = v[head + 5], b2 = v[head + 6], b3 = v[head + 7];
        for (i = head + 8; i < head + body2; i += 8) {
            a0 = smx_fold(a0, v[i], is_max), a1 = smx_fold(a1, v[i + 1], is_max);
            a2 = smx_fold(a2, v[i + 2], is_max), a3 = smx_fold(a3, v[i + 3], is_max);
            b0 = smx_fold(b0, v[i + 4], is_max), b1 = smx_fold(b1, v[i + 5], is_max);
            b2 = smx_fold(b2, v[i + 6], is_max), b3 = smx_fold(b3, v[i + 7], is_max);
        }
        a0 = smx_fold(a0, b0, is_max), a1 = smx_fold(a1, b1, is_max);
        a2 = smx_fold(a2, b2, is_max), a3 = smx_fold(a3, b3, is_max);
        if (body > body2) {
            i = head + body2;
            a0 = smx_fold(a0, v[i], is_max), a1 = smx_fold(a1, v[i + 1], is_max);
            a2 = smx_fold(a2, v[i + 2], is_max), a3 = smx_fold(a3, v[i + 3], is_max);
        }
    }
    if (is_max) {
        float t0 = a0 > a2 ? a0 : a2, t1 = a1 > a3 ? a1 : a3;
        r = t0 > t1 ? t0 : t1;
    } else {
        r = (a0 + a2) + (a1 + a3);
    }
    for (k = 0; k < head; k++)
        r = smx_fold(r, v[k], is_max);
    for (k = head + body; k < n; k++)
        r = smx_fold(r, v[k], is_max);
    return r;
}

/* 2^k for integers k in [-126, 127], exactly */
EW_TARGET static inline __m512 smx_pow2(__m512i k)
{
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(k, _mm512_set1_epi32(127)), 23));
}

/* Eigen's packet exp, sixteen lanes; each product and sum rounded to float32 (no fused multiply-add) */
EW_TARGET static __m512 smx_exp(__m512 v)
{
    /* the constants' exact float32 values (as the teaching layer's np.float32 of its decimals) */
    const __m512 hi_x = _mm512_set1_ps(0x1.62e45ap+6f), lo_x = _mm512_set1_ps(-104.0f);
    const __m512 log2e = _mm512_set1_ps(0x1.715476p+0f), half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
    const __m512 ln2_hi = _mm512_set1_ps(-0x1.63p-1f), ln2_lo = _mm512_set1_ps(0x1.bd0106p-13f);
    const __m512 p6 = _mm512_set1_ps(0x1.6850e4p-10f), p5 = _mm512_set1_ps(0x1.123bccp-7f);
    const __m512 p4 = _mm512_set1_ps(0x1.555b98p-5f), p3 = _mm512_set1_ps(0x1.55548ep-3f);
    const __m512 p2 = _mm512_set1_ps(0x1.fffff8p-2f);
    const __m512 x = _mm512_min_ps(v, hi_x);          /* v < hi ? v : hi */
    const __m512 m = _mm512_roundscale_ps(_mm512_add_ps(_mm512_mul_ps(x, log2e), half),
                                          _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_add_ps(_mm512_mul_ps(m, ln2_hi), x), r2, even, odd, y, e;
    __m512i k, b;
    r = _mm512_add_ps(_mm512_mul_ps(m, ln2_lo), r);
    r2 = _mm512_mul_ps(r, r);
    even = _mm512_add_ps(_mm512_mul_ps(r2, _mm512_add_ps(_mm512_mul_ps(r2, p6), p4)), p2);
    odd = _mm512_add_ps(_mm512_mul_ps(r2, p5), p3);
    y = _mm512_add_ps(_mm512_mul_ps(r2, _mm512_add_ps(_mm512_mul_ps(r, odd), even)), _mm512_add_ps(r, one));
    k = _mm512_cvttps_epi32(m);
    b = _mm512_srai_epi32(k, 2);                       /* 2^k = 2^b * 2^b * 2^b * 2^(k - 3b) */
    e = _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(y, smx_pow2(b)), smx_pow2(b)), smx_pow2(b));
    e = _mm512_mul_ps(e, smx_pow2(_mm512_sub_epi32(k, _mm512_mullo_epi32(b, _mm512_set1_epi32(3)))));
    e = _mm512_max_ps(v, e);                           /* e < v ? v : e (+inf stays +inf) */
    e = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, lo_x, _CMP_LT_OQ), e, _mm512_setzero_ps());
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), e, v);   /* NaN stays */
}

EW_TARGET static void smx_rows(const float *x, float *out, int64_t total, int64_t n, float beta)
{
    const int64_t packet_end = total - total % 4;
    const __m512 vb = _mm512_set1_ps(beta);
    int64_t base, j;
    for (base = 0; base < total; base += n) {
        const int64_t head = (4 - base % 4) % 4;
        const float mx = smx_redux(x + base, n, head, 1);
        const __m512 vm = _mm512_set1_ps(mx);
        const int64_t packed = packet_end - base < n ? packet_end - base : n;   /* values on the packet exp */
        float inv;
        __m512 vi;
        for (j = 0; j < packed; j += 16) {
            const __mmask16 m = packed - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (packed - j)) - 1u);
            const __m512 z = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + base + j), vm), vb);
            _mm512_mask_storeu_ps(out + base + j, m, smx_exp(z));
        }
        for (j = packed > 0 ? packed : 0; j < n; j++)
            out[base + j] = expf((x[base + j] - mx) * beta);
        inv = 1.0f / smx_redux(out + base, n, head, 0);
        vi = _mm512_set1_ps(inv);
        for (j = 0; j < n; j += 16) {
            const __mmask16 m = n - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - j)) - 1u);
            _mm512_mask_storeu_ps(out + base + j, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, out + base + j), vi));
        }
    }
}
#else
static void smx_rows(const float *x, float *out, int64_t total, int64_t n, float beta)
{
    (void)x; (void)out; (void)total; (void)n; (void)beta;
}
#endif

typedef struct {
    const float *x;
    float *out;
    int64_t total, n;
    float beta;
} smx_t;

/* softmax_f32's setup / exec (as conv_f32.c's convf_setup / convf_exec) */
static int smx_setup(PyObject *const *args, Py_ssize_t nargs, smx_t *g)
{
    static const native_arg_t spec[4] = {{1, NPY_FLOAT32, 0}, {1, NPY_FLOAT32, 1}, {1, NPY_INT64, 0},
                                         {1, NPY_FLOAT32, 0}};
    PyArrayObject *a[4];
    long threads;
    int fit = native_args(args, nargs, "softmax_f32(threads, x, out, n, beta)", spec, 4, &threads, a);
    if (fit < 0)
        return -2;
    if (!convf_cpu_ok() || !fit || PyArray_DIM(a[2], 0) != 1 || PyArray_DIM(a[3], 0) != 1)
        return -1;
    g->total = PyArray_DIM(a[0], 0);
    g->n = ((const int64_t *)PyArray_DATA(a[2]))[0];
    if (g->n < 1 || g->total % g->n != 0 || PyArray_DIM(a[1], 0) != g->total)
        return -1;
    g->x = (const float *)PyArray_DATA(a[0]);
    g->out = (float *)PyArray_DATA(a[1]);
    g->beta = ((const float *)PyArray_DATA(a[3]))[0];
    return 1;
}

static int smx_exec(void *state)
{
    smx_t *g = (smx_t *)state;
    smx_rows(g->x, g->out, g->total, g->n, g->beta);
    return 0;
}

NATIVE_FUNCTION(kernel_softmax_f32, smx_t, smx_setup, smx_exec)
