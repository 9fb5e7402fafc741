/* ------------------------------------------------------------------------------------------
 * Int8 depthwise convolutions with a depth multiplier of 1 (each output channel reads its own input
 * channel), requantized in registers.  workbench/perf/build.py puts this file after conv_f32.c;
 * shim_tail.c's module table lists dw_i8.
 *
 * The sums.  Output pixel (oy, ox), channel c: sum over the taps (ky, kx) of
 * (x[iy, ix, c] - input_zero_point) * w[ky, kx, c], then + bias[c], then TFLite's requantization.
 * Taps in the padding add nothing (the padding of an int8 convolution is the zero point).
 *
 * Rather than test every tap of every pixel against the image's border, each input row the kernel
 * needs is first converted once into a row of float32 values x - input_zero_point, with zero columns
 * on the left and right wherever the filter reaches past the image; a filter row above or below the
 * image reads a row of zeros.  Every output pixel is then the same nine (KH*KW) fused multiply-adds
 * on 16 channels, the borders included, starting from the bias.  The float32 sums are exact: every
 * product is an integer of magnitude at most 255 * 128, and the call is refused unless |bias| +
 * 255 * 128 * KH * KW < 2^24, so every partial sum is an integer that float32 holds exactly: they
 * equal the int32 sums of the reference kernels.  A converted row serves the KH output rows that
 * read it (a ring of KH rows per thread).
 *
 * The requantization (the tables of workbench/perf/vnni.py, requant_tables): per channel the bias,
 * the multiplier m, and how the final shift rounds its ties.  With ties up, one rounding:
 * (s * m + 2^30 + nudge * 2^31) >> (31 + right); with ties away from zero, TFLite's two steps
 * (tensorflow/lite/kernels/internal/common.h, MultiplyByQuantizedMultiplier): v = (s * m + 2^30) >> 31,
 * then v >> right, plus one where the dropped bits are more than half the divisor, or exactly half
 * with v >= 0 (ties away from zero).  AVX-512 multiplies 32 x 32 -> 64
 * bits in the even lanes (vpmuldq), so the even and the odd channels of 16 take one multiply each,
 * and a two-source permute puts the 16 results back in order.  Then + the output zero point, the
 * clamp, and 16 int8 stores (see DWI8_UP_FAST and the others below for the variants).
 *
 * Threads: the output rows are cut among threads (DWI8_PARTS_PER_THREAD pieces a thread, on the pool), or,
 * where there are too few rows for that, the 16-channel blocks: a piece then converts only its own
 * channels.  Rows, not blocks, even where a layer has more channels than pixels: the layer before
 * (a 1x1 convolution cut by rows) left each thread's rows in its own core's cache, and the next one
 * reads this one's rows the same way.  Cut by blocks, each thread read half its input from the other
 * core: a 14x14x512 layer took 50 us on two threads inside MobileNet v1, cut by rows 30 us, and the
 * 1x1 convolution after it 178 -> 156 us (both cuts alternated in one process). */
#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define DW_X86 1
#define DW_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma")))
#else
#define DW_X86 0
#endif

#define DWI8_PX 4                   /* output pixels side by side in the 3x3 loop */
#define DW_MAX_KH 16              /* filter rows the ring of converted rows can hold */
#define DW_MAX_TAPS 256           /* 256 * 255 * 128 < 2^24: the exact range holds some bias */
#define DW_PARTS_PER_THREAD 8      /* float: as CONVF_PARTS_PER_THREAD (conv_f32.c) */
#define DWI8_PARTS_PER_THREAD 2    /* int8: each piece converts the KH - 1 rows above its first again */
#define DWF_LONG_ROW 48            /* output columns from which dw_f32 runs the pixels outer (stride 1) */
#define DWF_MIN_BLOCKS_PX 4        /* channel blocks from which dw_f32 runs short rows one pixel at a time */
#define DWF_PX_TILE 16             /* at most this many blocks (10 KB of weights) a pass of dwf_row_px */
#define DWF_PX_MIN_PIXELS 12       /* pixels a piece of dwf_row_px at least, on several threads: a 7x7 layer
                                    * in 16 pieces of three pixels read every block's weights in each and
                                    * never ran four pixels at a time (7x7x960 on 2 threads: 4 pieces 0.77x
                                    * the time of 16, 7x7x1024 0.85x) */

/* how a block of 16 channels rounds, the epilogue's variants (the tables' modes, MODE_* in
 * workbench/perf/vnni.py):
 *  - UP_FAST: every tie goes up and every shift is 32..54 bits: the output zero point rides in the
 *    rounding term (+ zp * 2^shift moves the floor of the quotient by exactly zp), and the high
 *    halves of the 64-bit products, put in order by one permute, take a 32-bit shift of 0..22;
 *  - UP: every tie up, any shift (64-bit shifts, then the zero point);
 *  - AWAY: every tie away from zero (TFLite's two roundings);
 *  - MIXED: both, chosen per channel. */
#define DWI8_AWAY 0
#define DWI8_UP 1
#define DWI8_MIXED 2
#define DWI8_UP_FAST 3

/* what the int8 and the float kernels share: the geometry, and how the work is cut into pieces */
typedef struct {
    int64_t h, wd, c, c16, nb, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, rows;
    int64_t row_parts, block_parts;   /* piece i of n: rows (or blocks) total * i / n .. total * (i + 1) / n */
} dw_shape_t;

/* a piece's output rows r0..r1 and channel blocks cb0..cb1; 0 when it is empty */
static int dw_piece(const dw_shape_t *s, int part, int64_t *r0, int64_t *r1, int64_t *cb0, int64_t *cb1)
{
    int64_t rpart = part / s->block_parts, bpart = part % s->block_parts;
    *r0 = s->rows * rpart / s->row_parts;
    *r1 = s->rows * (rpart + 1) / s->row_parts;
    *cb0 = s->nb * bpart / s->block_parts;
    *cb1 = s->nb * (bpart + 1) / s->block_parts;
    return *r0 < *r1 && *cb0 < *cb1;
}

typedef struct {
    const int8_t *x;
    const float *w;                 /* [KH*KW, c16]: the filter as float32, zeros past channel C */
    const int32_t *q32;             /* requant_tables: [6, n16] (rows as described there) */
    const int64_t *q64;             /* [7, n16] */
    int8_t *out;
    dw_shape_t s;
    int64_t n16, wp;
    int32_t in_zp, out_zp, lo, hi;
    int mode;                       /* the tables' rounding mode */
    atomic_int failed;              /* no memory for a thread's rows */
    int threads, parts;             /* the pool's threads and pieces for this call */
} dwi8_t;

#if DW_X86

/* the requantization constants of 16 channels, in the form the epilogue uses them */
typedef struct {
    __m512 bias;                    /* where the float sums start (exact: an integer below 2^24) */
    __m512i mult, mult_odd;         /* mult_odd: the odd channels' multipliers in the even lanes */
    __m512i rnd_even, rnd_odd, shr_even, shr_odd;    /* 64-bit lanes: channels 0, 2, ... and 1, 3, ... */
    __m512i shr32, right, mask;     /* 32-bit lanes: the fast ties-up shift; ties away from zero */
    __mmask16 up, valid;            /* channels whose ties go up; channels below C */
    int mode;                       /* DWI8_UP_FAST, DWI8_UP, DWI8_AWAY or DWI8_MIXED */
} dwi8_block_t;


/* per thread, kept between calls (never freed: at most a few rows of the largest layer met): the
 * ring of converted rows, a row of zeros that nothing writes, and the requantization constants of the
 * blocks a piece computes (made by each piece, in parallel: made once before the pieces, the caller
 * read the layer's tables alone, 7 us of a 14x14x512 layer's 36 us, while the other thread waited) */
static _Thread_local float *dwi8_ring;
static _Thread_local size_t dwi8_ring_floats;
static _Thread_local float *dwi8_zero;
static _Thread_local size_t dwi8_zero_floats;
static _Thread_local float *dwi8_blocks;
static _Thread_local size_t dwi8_blocks_floats;

static float *dwi8_grow(float **buf, size_t *have, size_t need, int zero)
{
    if (*have < need) {
        size_t bytes = (need * sizeof(float) + 63) / 64 * 64;
        float *p = (float *)aligned_alloc(64, bytes);
        if (p == NULL)
            return NULL;
        if (zero)
            memset(p, 0, bytes);
        free(*buf);
        *buf = p;
        *have = bytes / sizeof(float);
    }
    return *buf;
}

static __mmask16 dw_mask(int64_t lanes)
{
    return lanes >= 16 ? (__mmask16)0xffff : lanes <= 0 ? (__mmask16)0 : (__mmask16)((1u << lanes) - 1u);
}

DW_TARGET static void dwi8_make_block(const dwi8_t *g, int64_t cb, dwi8_block_t *k)
{
    const int32_t *q32 = g->q32;
    const int64_t ch = cb * 16, n = g->n16, even = ch / 2, odd = n / 2 + ch / 2;
    const int64_t *rnd = g->q64 + (g->mode == DWI8_UP_FAST ? 6 : 4) * n, *shr = g->q64 + 5 * n;
    __mmask16 up;
    k->bias = _mm512_cvtepi32_ps(_mm512_loadu_si512(q32 + ch));
    k->mult = _mm512_loadu_si512(q32 + n + ch);
    k->mult_odd = _mm512_srli_epi64(k->mult, 32);
    k->up = _mm512_test_epi32_mask(_mm512_loadu_si512(q32 + 2 * n + ch), _mm512_set1_epi32(-1));
    k->shr32 = _mm512_loadu_si512(q32 + 3 * n + ch);
    k->right = _mm512_loadu_si512(q32 + 4 * n + ch);
    k->mask = _mm512_loadu_si512(q32 + 5 * n + ch);
    k->rnd_even = _mm512_loadu_si512(rnd + even);
    k->rnd_odd = _mm512_loadu_si512(rnd + odd);
    k->shr_even = _mm512_loadu_si512(shr + even);
    k->shr_odd = _mm512_loadu_si512(shr + odd);
    k->valid = dw_mask(g->s.c - ch);
    up = k->up & k->valid;
    k->mode = g->mode;
    if (g->mode == DWI8_MIXED)      /* a block whose channels all round alike takes that loop */
        k->mode = up == k->valid ? DWI8_UP : up == 0 ? DWI8_AWAY : DWI8_MIXED;
}

/* a block's constants as locals of the loop that uses them (the int8 stores could alias anything
 * read through a pointer, which would reload it after every store) */
typedef struct {
    __m512 bias;
    __m512i mult, mult_odd, rnd_even, rnd_odd, shr_even, shr_odd, shr32, right, mask, zp, lo, hi;
    __mmask16 up, valid;
} dwi8_ep_t;

DW_TARGET static inline __attribute__((always_inline)) dwi8_ep_t dwi8_ep(const dwi8_t *g, const dwi8_block_t *k)
{
    dwi8_ep_t e;
    e.bias = k->bias; e.mult = k->mult; e.mult_odd = k->mult_odd;
    e.rnd_even = k->rnd_even; e.rnd_odd = k->rnd_odd; e.shr_even = k->shr_even; e.shr_odd = k->shr_odd;
    e.shr32 = k->shr32; e.right = k->right; e.mask = k->mask; e.up = k->up; e.valid = k->valid;
    e.zp = _mm512_set1_epi32(g->out_zp); e.lo = _mm512_set1_epi32(g->lo); e.hi = _mm512_set1_epi32(g->hi);
    return e;
}

/* 16 exact float sums (the bias included) -> 16 requantized int8 values in `o` (channels below C).
 * mode and sat (the clamp is int8's own range: the narrowing store saturates) are constants where
 * this is inlined, so each loop carries one variant only */
DW_TARGET static inline __attribute__((always_inline)) void dwi8_store(__m512 acc, const dwi8_ep_t *e, int mode,
                                                                           int sat, int8_t *o)
{
    const __m512i low = _mm512_set_epi32(30, 14, 28, 12, 26, 10, 24, 8, 22, 6, 20, 4, 18, 2, 16, 0);
    __m512i s = _mm512_cvttps_epi32(acc);
    __m512i pe = _mm512_mul_epi32(s, e->mult), po = _mm512_mul_epi32(_mm512_srli_epi64(s, 32), e->mult_odd);
    __m512i q, up = _mm512_setzero_si512();
    if (mode == DWI8_UP_FAST) {
        const __m512i high = _mm512_set_epi32(31, 15, 29, 13, 27, 11, 25, 9, 23, 7, 21, 5, 19, 3, 17, 1);
        q = _mm512_srav_epi32(_mm512_permutex2var_epi32(_mm512_add_epi64(pe, e->rnd_even), high,
                                                        _mm512_add_epi64(po, e->rnd_odd)), e->shr32);
    } else {
        if (mode != DWI8_AWAY)      /* one rounding: (p + 2^30 + nudge * 2^31) >> (31 + right) */
            up = _mm512_permutex2var_epi32(_mm512_srav_epi64(_mm512_add_epi64(pe, e->rnd_even), e->shr_even), low,
                                           _mm512_srav_epi64(_mm512_add_epi64(po, e->rnd_odd), e->shr_odd));
        if (mode != DWI8_UP) {      /* v = (p + 2^30) >> 31 (it fits 32 bits), then v / 2^right, ties away */
            const __m512i half = _mm512_set1_epi64((int64_t)1 << 30);
            __m512i v = _mm512_permutex2var_epi32(_mm512_srai_epi64(_mm512_add_epi64(pe, half), 31), low,
                                                  _mm512_srai_epi64(_mm512_add_epi64(po, half), 31));
            __m512i r = _mm512_srav_epi32(v, e->right);
            /* + 1 where the dropped bits exceed mask / 2 (rounded down), + 1 more when v < 0 */
            __m512i threshold = _mm512_sub_epi32(_mm512_srai_epi32(e->mask, 1), _mm512_srai_epi32(v, 31));
            __mmask16 more = _mm512_cmpgt_epi32_mask(_mm512_and_si512(v, e->mask), threshold);
            q = _mm512_mask_add_epi32(r, more, r, _mm512_set1_epi32(1));
            if (mode == DWI8_MIXED)
                q = _mm512_mask_blend_epi32(e->up, q, up);
        } else {
            q = up;
        }
        q = _mm512_add_epi32(q, e->zp);
    }
    if (sat)
        _mm512_mask_cvtsepi32_storeu_epi8(o, e->valid, q);
    else
        _mm512_mask_cvtepi32_storeu_epi8(o, e->valid, _mm512_min_epi32(_mm512_max_epi32(q, e->lo), e->hi));
}

/* input row `gy` (image row b * H + iy) as float32 x - zero point into `dst`, block by block (the
 * piece's nblk blocks from cb0): per block wp columns of 16 values, zeros in the padding columns and
 * past channel C.  A block's columns are 64 bytes apart, so the taps' offsets are constants */
DW_TARGET static void dwi8_convert(const dwi8_t *g, int64_t gy, int64_t cb0, int64_t nblk, float *dst)
{
    const int64_t plane = g->wp * 16;
    const __m512i zp = _mm512_set1_epi32(g->in_zp);
    const __mmask16 last = dw_mask(g->s.c - (cb0 + nblk - 1) * 16);
    const int8_t *src = g->x + gy * g->s.wd * g->s.c + cb0 * 16;
    int64_t ix, j;
    for (j = 0; j < nblk; j++) {       /* the padding columns (a few): zeros */
        for (ix = 0; ix < g->s.pl; ix++)
            _mm512_storeu_ps(dst + j * plane + ix * 16, _mm512_setzero_ps());
        for (ix = g->s.pl + g->s.wd; ix < g->wp; ix++)
            _mm512_storeu_ps(dst + j * plane + ix * 16, _mm512_setzero_ps());
    }
    dst += g->s.pl * 16;
    for (ix = 0; ix < g->s.wd; ix++, src += g->s.c, dst += 16) {
        for (j = 0; j + 1 < nblk; j++) {
            __m512i v = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(src + j * 16)));
            _mm512_storeu_ps(dst + j * plane, _mm512_cvtepi32_ps(_mm512_sub_epi32(v, zp)));
        }
        {
            __m512i v = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(last, src + j * 16));
            _mm512_storeu_ps(dst + j * plane, _mm512_cvtepi32_ps(_mm512_maskz_sub_epi32(last, v, zp)));
        }
    }
}

/* one output row, one block of 16 channels, 3x3: nine weights in registers, DWI8_PX pixels at a time.
 * rp: the three filter rows' converted input rows (this block's plane); sw, dw: the strides along x
 * (constants where inlined for the common ones, so every tap is a fixed offset from three pointers) */
DW_TARGET static inline __attribute__((always_inline)) void dwi8_row3x3(const dwi8_t *g, const float *const *rp,
                                                                            const float *w, const dwi8_block_t *k,
                                                                            int mode, int sat, int64_t sw,
                                                                            int64_t dw, int8_t *o)
{
    const int64_t ps = sw * 16, ts = dw * 16, c = g->s.c, c16 = g->s.c16, ow = g->s.ow;
    const dwi8_ep_t e = dwi8_ep(g, k);
    const float *r0 = rp[0], *r1 = rp[1], *r2 = rp[2];
    const __m512 w0 = _mm512_loadu_ps(w), w1 = _mm512_loadu_ps(w + c16), w2 = _mm512_loadu_ps(w + 2 * c16);
    const __m512 w3 = _mm512_loadu_ps(w + 3 * c16), w4 = _mm512_loadu_ps(w + 4 * c16), w5 = _mm512_loadu_ps(w + 5 * c16);
    const __m512 w6 = _mm512_loadu_ps(w + 6 * c16), w7 = _mm512_loadu_ps(w + 7 * c16), w8 = _mm512_loadu_ps(w + 8 * c16);
    int64_t ox = 0;
#define DWI8_SUM(a, at) \
    a = _mm512_fmadd_ps(_mm512_loadu_ps(r0 + (at)), w0, e.bias); \
    a = _mm512_fmadd_ps(_mm512_loadu_ps(r0 + (at) + ts), w1, a); \
    a = _mm512_fmadd_ps(_mm512_loadu_ps(r0 + (at) + 2 * ts), w2, a); \
    a = _mm512_fmadd_ps(_mm512_loadu_ps(r1 + (at)), w3, a); \
    a = _mm512_fmadd_ps(_mm512_loadu_ps(r1 + (at) + ts), w4, a); \
    a = _mm512_fmadd_ps(_mm512_loadu_ps(r1 + (at) + 2 * ts), w5, a); \
    a = _mm512_fmadd_ps(_mm512_loadu_ps(r2 + (at)), w6, a); \
    a = _mm512_fmadd_ps(_mm512_loadu_ps(r2 + (at) + ts), w7, a); \
    a = _mm512_fmadd_ps(_mm512_loadu_ps(r2 + (at) + 2 * ts), w8, a);
    for (; ox + DWI8_PX <= ow; ox += DWI8_PX, r0 += DWI8_PX * ps, r1 += DWI8_PX * ps, r2 += DWI8_PX * ps,
                                o += DWI8_PX * c) {
        __m512 a0, a1, a2, a3;
        DWI8_SUM(a0, 0)
        DWI8_SUM(a1, ps)
        DWI8_SUM(a2, 2 * ps)
        DWI8_SUM(a3, 3 * ps)
        dwi8_store(a0, &e, mode, sat, o);
        dwi8_store(a1, &e, mode, sat, o + c);
        dwi8_store(a2, &e, mode, sat, o + 2 * c);
        dwi8_store(a3, &e, mode, sat, o + 3 * c);
    }
    for (; ox < ow; ox++, r0 += ps, r1 += ps, r2 += ps, o += c) {
        __m512 a0;
        DWI8_SUM(a0, 0)
        dwi8_store(a0, &e, mode, sat, o);
    }
#undef DWI8_SUM
}

/* one output row, one block of 16 channels, any KH x KW: the taps in a loop, weights from memory */
DW_TARGET static inline __attribute__((always_inline)) void dwi8_row_any(const dwi8_t *g, const float *const *rp,
                                                                             const float *w, const dwi8_block_t *k,
                                                                             int mode, int sat, int8_t *o)
{
    const int64_t ps = g->s.sw * 16, ts = g->s.dw * 16, c16 = g->s.c16;
    const dwi8_ep_t e = dwi8_ep(g, k);
    int64_t ox, ky, kx;
    for (ox = 0; ox < g->s.ow; ox++) {
        __m512 a = e.bias;
        for (ky = 0; ky < g->s.kh; ky++) {
            const float *r = rp[ky] + ox * ps, *wk = w + ky * g->s.kw * c16;
            for (kx = 0; kx < g->s.kw; kx++)
                a = _mm512_fmadd_ps(_mm512_loadu_ps(r + kx * ts), _mm512_loadu_ps(wk + kx * c16), a);
        }
        dwi8_store(a, &e, mode, sat, o + ox * g->s.c);
    }
}

#define DWI8_ROWS(mode, sat) \
    if (g->s.kh != 3 || g->s.kw != 3) \
        dwi8_row_any(g, rp, w, k, mode, sat, o); \
    else if (g->s.sw == 1 && g->s.dw == 1) \
        dwi8_row3x3(g, rp, w, k, mode, sat, 1, 1, o); \
    else if (g->s.sw == 2 && g->s.dw == 1) \
        dwi8_row3x3(g, rp, w, k, mode, sat, 2, 1, o); \
    else \
        dwi8_row3x3(g, rp, w, k, mode, sat, g->s.sw, g->s.dw, o);

/* one output row of one block: the loop compiled for its rounding and clamp */
DW_TARGET static void dwi8_row(const dwi8_t *g, const float *const *rp, const float *w, const dwi8_block_t *k,
                                 int8_t *o)
{
    if (g->lo == -128 && g->hi == 127) {
        switch (k->mode) {
        case DWI8_UP_FAST: DWI8_ROWS(DWI8_UP_FAST, 1) break;
        case DWI8_UP: DWI8_ROWS(DWI8_UP, 1) break;
        case DWI8_AWAY: DWI8_ROWS(DWI8_AWAY, 1) break;
        default: DWI8_ROWS(DWI8_MIXED, 1) break;
        }
    } else {
        switch (k->mode) {
        case DWI8_UP_FAST: DWI8_ROWS(DWI8_UP_FAST, 0) break;
        case DWI8_UP: DWI8_ROWS(DWI8_UP, 0) break;
        case DWI8_AWAY: DWI8_ROWS(DWI8_AWAY, 0) break;
        default: DWI8_ROWS(DWI8_MIXED, 0) break;
        }
    }
}
#undef DWI8_ROWS

static void dwi8_part(void *ctx, int part, int thread)
{
    dwi8_t *g = (dwi8_t *)ctx;
    int64_t r0, r1, cb0, cb1, nblk, row_floats, tag[DW_MAX_KH], r, ky, cb, s;
    float *ring, *zero;
    dwi8_block_t *blocks;
    (void)thread;
    if (!dw_piece(&g->s, part, &r0, &r1, &cb0, &cb1))
        return;
    nblk = cb1 - cb0;
    row_floats = g->wp * 16 * nblk;
    ring = dwi8_grow(&dwi8_ring, &dwi8_ring_floats, (size_t)(g->s.kh * row_floats), 0);
    zero = dwi8_grow(&dwi8_zero, &dwi8_zero_floats, (size_t)(g->wp * 16), 1);
    blocks = (dwi8_block_t *)dwi8_grow(&dwi8_blocks, &dwi8_blocks_floats,
                                       (size_t)nblk * (sizeof(dwi8_block_t) / sizeof(float)), 0);
    if (ring == NULL || zero == NULL || blocks == NULL) {
        atomic_store_explicit(&g->failed, 1, memory_order_relaxed);
        return;
    }
    for (cb = cb0; cb < cb1; cb++)
        dwi8_make_block(g, cb, &blocks[cb - cb0]);
    for (s = 0; s < g->s.kh; s++)
        tag[s] = -1;
    for (r = r0; r < r1; r++) {
        const int64_t b = r / g->s.oh, oy = r % g->s.oh;
        const float *rp[DW_MAX_KH];
        int64_t need[DW_MAX_KH];
        int used[DW_MAX_KH] = {0};
        /* the filter rows' input rows: in the ring already, or converted into a slot no filter row of
         * this output row needs */
        for (ky = 0; ky < g->s.kh; ky++) {
            int64_t iy = oy * g->s.sh - g->s.pt + ky * g->s.dh;
            need[ky] = iy < 0 || iy >= g->s.h ? -1 : b * g->s.h + iy;
            rp[ky] = NULL;
            for (s = 0; s < g->s.kh && need[ky] >= 0; s++)
                if (tag[s] == need[ky]) {
                    rp[ky] = ring + s * row_floats;
                    used[s] = 1;
                }
        }
        for (ky = 0; ky < g->s.kh; ky++) {
            if (need[ky] < 0) {
                rp[ky] = zero;
                continue;
            }
            if (rp[ky] != NULL)
                continue;
            for (s = 0; used[s]; s++)
                ;
            used[s] = 1;
            tag[s] = need[ky];
            rp[ky] = ring + s * row_floats;
            dwi8_convert(g, need[ky], cb0, nblk, ring + s * row_floats);
        }
        for (cb = cb0; cb < cb1; cb++) {
            const float *at[DW_MAX_KH];
            const int64_t off = (cb - cb0) * g->wp * 16;      /* this block's plane of each converted row */
            for (ky = 0; ky < g->s.kh; ky++)
                at[ky] = rp[ky] == zero ? zero : rp[ky] + off;
            dwi8_row(g, at, g->w + cb * 16, &blocks[cb - cb0], g->out + r * g->s.ow * g->s.c + cb * 16);
        }
    }
}

static int dw_cpu_ok(void)
{
    static int known = -1;
    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
                && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")
                && __builtin_cpu_supports("fma");
    }
    return known;
}

#else

static void dwi8_part(void *ctx, int part, int thread)
{
    (void)ctx;
    (void)part;
    (void)thread;
}

static int dw_cpu_ok(void)
{
    return 0;
}

#endif


/* the geometry of x [N, H, W, C] -> out [N, OH, OW, C] with gi = [kh, kw, stride h, stride w, dilation h,
 * dilation w, pad top, pad left]; 0 when it does not fit together (the callers check their filter) */
static int dw_shape(dw_shape_t *s, PyArrayObject *x, PyArrayObject *out, const int64_t *gi)
{
    memset(s, 0, sizeof *s);
    s->kh = gi[0]; s->kw = gi[1]; s->sh = gi[2]; s->sw = gi[3]; s->dh = gi[4]; s->dw = gi[5]; s->pt = gi[6];
    s->pl = gi[7];
    s->h = PyArray_DIM(x, 1); s->wd = PyArray_DIM(x, 2); s->c = PyArray_DIM(x, 3);
    s->oh = PyArray_DIM(out, 1); s->ow = PyArray_DIM(out, 2);
    s->nb = (s->c + 15) / 16;
    s->c16 = s->nb * 16;
    s->rows = PyArray_DIM(out, 0) * s->oh;
    return PyArray_DIM(out, 0) == PyArray_DIM(x, 0) && PyArray_DIM(out, 3) == s->c && s->kh >= 1 && s->kw >= 1
           && s->kh <= DW_MAX_KH && s->kh * s->kw <= DW_MAX_TAPS && s->sh >= 1 && s->sw >= 1 && s->dh >= 1
           && s->dw >= 1 && s->pt >= 0 && s->pl >= 0 && s->c >= 1;
}

/* cut the output rows among threads (per_thread pieces a thread), or, where `blocks` and with fewer rows
 * than that, the 16-channel blocks; how many pieces */
static int dw_cut(dw_shape_t *s, long threads, int per_thread, int blocks)
{
    s->row_parts = s->block_parts = 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if (threads > 1) {
        int64_t most = per_thread * threads;
        if (blocks && s->nb >= threads && s->rows < most)
            s->block_parts = s->nb < most ? s->nb : most;
        else
            s->row_parts = s->rows < most ? (s->rows > 1 ? s->rows : 1) : most;
    }
    return (int)(s->row_parts * s->block_parts);
}

/* dw_i8(threads, x, w, out, q32, q64, scalars, geometry): out = requantize(depthwise(x)) on the pool.
 * x int8 [N, H, W, C]; w float32 [KH*KW, C16] (C16: C rounded up to 16, zeros past C); out int8
 * [N, OH, OW, C]; q32, q64, scalars: workbench/perf/vnni.py requant_tables for at least C16
 * channels; geometry int64 [kh, kw, stride h, stride w, dilation h, dilation w, pad top, pad left,
 * input zero point].  0: done; -1: not taken (no AVX-512 here, or arrays that do not fit), out
 * untouched.  dwi8_setup / dwi8_exec: as convf_setup / convf_exec (conv_f32.c). */
static int dwi8_setup(PyObject *const *args, Py_ssize_t nargs, dwi8_t *gp)
{
    static const native_arg_t spec[7] = {{4, NPY_INT8, 0}, {2, NPY_FLOAT32, 0}, {4, NPY_INT8, 1}, {2, NPY_INT32, 0},
                                         {2, NPY_INT64, 0}, {1, NPY_INT64, 0}, {1, NPY_INT64, 0}};
    PyArrayObject *a[7], *x, *w, *out, *q32, *q64, *scalars, *geom;
    const int64_t *gi, *sc;
    dwi8_t g;
    long threads;
    int fit = native_args(args, nargs, "dw_i8(threads, x, w, out, q32, q64, scalars, geometry)", spec, 7, &threads,
                          a);
    if (fit < 0)
        return -2;
    x = a[0], w = a[1], out = a[2], q32 = a[3], q64 = a[4], scalars = a[5], geom = a[6];
    if (!dw_cpu_ok() || !fit || PyArray_DIM(geom, 0) != 9 || PyArray_DIM(scalars, 0) != 5 || PyArray_DIM(q32, 0) != 6
        || PyArray_DIM(q64, 0) != 7 || PyArray_DIM(q64, 1) != PyArray_DIM(q32, 1) || PyArray_DIM(q32, 1) % 2)
        return -1;
    gi = (const int64_t *)PyArray_DATA(geom);
    sc = (const int64_t *)PyArray_DATA(scalars);
    memset(&g, 0, sizeof g);
    g.n16 = PyArray_DIM(q32, 1);
    if (!dw_shape(&g.s, x, out, gi) || PyArray_DIM(w, 0) != g.s.kh * g.s.kw || PyArray_DIM(w, 1) != g.s.c16
        || g.n16 < g.s.c16 || sc[4] != g.s.c || sc[3] < DWI8_AWAY
        || sc[3] > DWI8_UP_FAST || gi[8] < -128 || gi[8] > 127 || sc[1] < -128 || sc[2] > 127 || sc[1] > sc[2]
        || sc[0] < -128 || sc[0] > 127)
        return -1;
    {   /* the float sums start at the bias: exact while |bias| + 255 * 128 * taps stays below 2^24 */
        const int32_t *bias = (const int32_t *)PyArray_DATA(q32);
        int64_t j, room = ((int64_t)1 << 24) - 255 * 128 * g.s.kh * g.s.kw;
        for (j = 0; j < g.s.c; j++)
            if (bias[j] >= room || -(int64_t)bias[j] >= room)
                return -1;
    }
    /* columns a filter can reach: the left padding, the image, and whatever lies right of it */
    g.wp = (g.s.ow - 1) * g.s.sw + (g.s.kw - 1) * g.s.dw + 1;
    if (g.wp < g.s.pl + g.s.wd)
        g.wp = g.s.pl + g.s.wd;
    if (g.s.rows == 0 || g.s.ow == 0)
        return 0;
    g.in_zp = (int32_t)gi[8];
    g.out_zp = (int32_t)sc[0]; g.lo = (int32_t)sc[1]; g.hi = (int32_t)sc[2]; g.mode = (int)sc[3];
    g.x = (const int8_t *)PyArray_DATA(x);
    g.w = (const float *)PyArray_DATA(w);
    g.q32 = (const int32_t *)PyArray_DATA(q32);
    g.q64 = (const int64_t *)PyArray_DATA(q64);
    g.out = (int8_t *)PyArray_DATA(out);
    g.parts = dw_cut(&g.s, threads, DWI8_PARTS_PER_THREAD, 1);
    g.threads = (int)threads;
    *gp = g;
    return 1;
}

/* run what dwi8_setup made ready, the GIL let go: 0 done, or NATIVE_NOMEM */
static int dwi8_exec(void *state)
{
    dwi8_t *g = (dwi8_t *)state;
    atomic_store(&g->failed, 0);
    native_pieces(dwi8_part, g, g->parts, g->threads);
    return atomic_load(&g->failed) ? NATIVE_NOMEM : 0;
}

NATIVE_FUNCTION(kernel_dw_i8, dwi8_t, dwi8_setup, dwi8_exec)


/* ------------------------------------------------------------------------------------------
 * Float32 depthwise convolutions with a depth multiplier of 1, in the reference kernels' order:
 * each sum starts at the bias and adds the in-image taps' products one by one, filter row by filter
 * row, column by column, each product and each sum rounded to float32 (no fused multiply-add: the
 * library is compiled with -ffp-contract=off), then the clamp; so the bits are the teaching layer's
 * (workbench/interpreter/kernels/depthwise_conv_2d.py with the bias first, as litert-x86's optimized
 * kernel does).  16 channels to a vector register.  A pixel whose taps all lie in the image is the
 * unrolled loop (four pixels side by side for a 3x3 filter); a pixel at a padded edge skips its
 * taps outside the image, one test per tap for all 16 channels.
 *
 * Threads: always the output's pixels, even where the channels outnumber them (unlike dw_i8): the
 * next node (a 1x1 convolution cut by pixels, an ADD) then finds each thread's pixels in its own
 * core's cache (the pool's front / back claiming), and each thread's loads run through whole pixels
 * (MobileNet v1 float at two threads, in one process with XNNPACK: 1.09 -> 1.02 x its time).  The
 * one-pixel loop's pieces are ranges of pixels that may end inside a row, smaller toward the middle
 * (taper_edge): a 7x7 layer cut in seven rows left one thread waiting up to a seventh of the node. */

typedef struct {
    const float *x;
    const float *w;                 /* [nb, 1 + KH*KW, 16]: each block of 16 channels, its bias then its taps */
    float *out;
    dw_shape_t s;
    int64_t wb;                     /* floats a block of w: (1 + KH*KW) * 16 */
    float lo, hi;
    int one_pixel;                  /* 3x3 rows by dwf_row_px (see there) */
    int64_t pixels, pixel_parts;    /* dwf_row_px's pieces: ranges of the output's pixels (all rows in a line) */
    int pixels_outer;               /* 3x3 rows by dwf_row_po (see there) */
    int64_t xa, xb;                 /* the output columns whose taps all lie inside the image's columns */
    int zeros_add_nothing;          /* a filter row above or below the image may read a row of zeros rather
                                     * than be skipped: the same bits exactly when every weight is finite
                                     * (0 * w is then +0 or -0) and no bias is -0.0.  Adding -0 never changes a
                                     * sum; adding +0 changes only -0, and a sum that starts at a bias other
                                     * than -0 is never -0 (x + y is -0 only when both are).  Then every row is
                                     * the unrolled loop.  Told by the caller, who packed the weights
                                     * (workbench/perf/depthwise.py zeros_add_nothing): checked here, the
                                     * packed weights were read once more at every call, by the caller alone
                                     * while the other threads waited */
    atomic_int failed;              /* no memory for a thread's row of zeros */
    int threads, parts;             /* the pool's threads and pieces for this call */
} dwf_t;

#if DW_X86

DW_TARGET static inline __attribute__((always_inline)) void dwf_put(float *o, __m512 v, __m512 lo, __m512 hi,
                                                                      __mmask16 valid)
{
    /* max / min return their second operand when either is NaN: NaN stays NaN, as in the reference */
    _mm512_mask_storeu_ps(o, valid, _mm512_min_ps(hi, _mm512_max_ps(lo, v)));
}

/* one pixel, any filter: the taps inside the image only; rows: the filter rows' input rows or NULL; w: the
 * block's weights (its bias first) */
DW_TARGET static inline __attribute__((always_inline)) __m512 dwf_pixel(const dwf_t *g, const float *const *rows,
                                                                          int64_t x0, const float *w, __m512 acc,
                                                                          __mmask16 valid)
{
    const int64_t c = g->s.c;
    int64_t ky, kx;
    for (ky = 0; ky < g->s.kh; ky++) {
        if (rows[ky] == NULL)
            continue;
        for (kx = 0; kx < g->s.kw; kx++) {
            int64_t ix = x0 + kx * g->s.dw;
            if (ix >= 0 && ix < g->s.wd)
                acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_maskz_loadu_ps(valid, rows[ky] + ix * c),
                                                       _mm512_loadu_ps(w + 16 * (1 + ky * g->s.kw + kx))));
        }
    }
    return acc;
}

/* a 3x3 block's nine taps in registers w0..w8 (w: the block's weights, its bias first) */
#define DWF_B3 160                  /* floats of a 3x3 block's weights: (1 + 9) * 16 */
#define DWF_NINE(w) \
    const __m512 w0 = _mm512_loadu_ps((w) + 16), w1 = _mm512_loadu_ps((w) + 32), w2 = _mm512_loadu_ps((w) + 48); \
    const __m512 w3 = _mm512_loadu_ps((w) + 64), w4 = _mm512_loadu_ps((w) + 80), w5 = _mm512_loadu_ps((w) + 96); \
    const __m512 w6 = _mm512_loadu_ps((w) + 112), w7 = _mm512_loadu_ps((w) + 128), w8 = _mm512_loadu_ps((w) + 144);
#define DWF_TAP(a, p, wk) a = _mm512_add_ps(a, _mm512_mul_ps(_mm512_maskz_loadu_ps(valid, p), wk));
#define DWF_SUM(a, p0, p1, p2, p3, p4, p5, p6, p7, p8) a = b; \
    DWF_TAP(a, p0, w0) DWF_TAP(a, p1, w1) DWF_TAP(a, p2, w2) DWF_TAP(a, p3, w3) DWF_TAP(a, p4, w4) \
    DWF_TAP(a, p5, w5) DWF_TAP(a, p6, w6) DWF_TAP(a, p7, w7) DWF_TAP(a, p8, w8)

/* four pixels side by side, stride 1 or 2 along x: they read 3 + 3 * stride columns of a filter row
 * (`row` at the first pixel's first tap), each column loaded once and meeting the weights wa, wb, wc of
 * every tap it is; each pixel's sum still adds its taps in order.  Six loads a row instead of twelve,
 * or nine.  Both 3x3 loops below use them (sums a0..a3, c, valid in scope). */
#define DWF_LOAD(k) const __m512 x##k = _mm512_maskz_loadu_ps(valid, r + (k) * c);
#define DWF_ADD(j, k, wk) a##j = _mm512_add_ps(a##j, _mm512_mul_ps(x##k, wk));
#define DWF_WINDOW1(row, wa, wb, wc) { const float *r = row; \
    DWF_LOAD(0) DWF_LOAD(1) DWF_LOAD(2) DWF_LOAD(3) DWF_LOAD(4) DWF_LOAD(5) \
    DWF_ADD(0, 0, wa) DWF_ADD(1, 1, wa) DWF_ADD(2, 2, wa) DWF_ADD(3, 3, wa) \
    DWF_ADD(0, 1, wb) DWF_ADD(1, 2, wb) DWF_ADD(2, 3, wb) DWF_ADD(3, 4, wb) \
    DWF_ADD(0, 2, wc) DWF_ADD(1, 3, wc) DWF_ADD(2, 4, wc) DWF_ADD(3, 5, wc) }
#define DWF_WINDOW2(row, wa, wb, wc) { const float *r = row; \
    DWF_LOAD(0) DWF_LOAD(1) DWF_LOAD(2) DWF_LOAD(3) DWF_LOAD(4) DWF_LOAD(5) DWF_LOAD(6) DWF_LOAD(7) DWF_LOAD(8) \
    DWF_ADD(0, 0, wa) DWF_ADD(1, 2, wa) DWF_ADD(2, 4, wa) DWF_ADD(3, 6, wa) \
    DWF_ADD(0, 1, wb) DWF_ADD(1, 3, wb) DWF_ADD(2, 5, wb) DWF_ADD(3, 7, wb) \
    DWF_ADD(0, 2, wc) DWF_ADD(1, 4, wc) DWF_ADD(2, 6, wc) DWF_ADD(3, 8, wc) }

/* one output row, one block of 16 channels (rows already at the block's first channel; a row above or
 * below the image is NULL, or `zero` where zeros add nothing; w: the block's weights) */
DW_TARGET static void dwf_row(const dwf_t *g, const float *const *rows, const float *zero, const float *w,
                              float *o, __mmask16 valid)
{
    const int64_t c = g->s.c, sw = g->s.sw, dw = g->s.dw, ow = g->s.ow, xa = g->xa, xb = g->xb;
    const __m512 lo = _mm512_set1_ps(g->lo), hi = _mm512_set1_ps(g->hi), b = _mm512_loadu_ps(w);
    int64_t ox, ky, whole = 1;
    for (ky = 0; ky < g->s.kh; ky++)
        whole &= rows[ky] != NULL;
    if (!whole || g->s.kh != 3 || g->s.kw != 3) {
        for (ox = 0; ox < ow; ox++)
            dwf_put(o + ox * c, dwf_pixel(g, rows, ox * sw - g->s.pl, w, b, valid), lo, hi, valid);
        return;
    }
    {
        DWF_NINE(w)
        const int64_t t1 = dw * c, t2 = 2 * dw * c, ps = sw * c;
        const float *r0 = rows[0] + (xa * sw - g->s.pl) * c, *r1 = rows[1] + (xa * sw - g->s.pl) * c;
        const float *r2 = rows[2] + (xa * sw - g->s.pl) * c;
        /* a pixel at the left or right edge: a tap outside the image's columns reads zeros (zero is
         * NULL only when a whole row is missing, which took the loop above) */
#define DWF_EDGE(ox) { \
            const int64_t x0 = (ox) * sw - g->s.pl, x1 = x0 + dw, x2 = x0 + 2 * dw; \
            const int in0 = x0 >= 0 && x0 < g->s.wd, in1 = x1 >= 0 && x1 < g->s.wd, in2 = x2 >= 0 && x2 < g->s.wd; \
            __m512 a; \
            if (zero == NULL) { \
                a = dwf_pixel(g, rows, x0, w, b, valid); \
            } else { \
                DWF_SUM(a, in0 ? rows[0] + x0 * c : zero, in1 ? rows[0] + x1 * c : zero, in2 ? rows[0] + x2 * c : zero, \
                        in0 ? rows[1] + x0 * c : zero, in1 ? rows[1] + x1 * c : zero, in2 ? rows[1] + x2 * c : zero, \
                        in0 ? rows[2] + x0 * c : zero, in1 ? rows[2] + x1 * c : zero, in2 ? rows[2] + x2 * c : zero) \
            } \
            dwf_put(o + (ox) * c, a, lo, hi, valid); }
        for (ox = 0; ox < xa; ox++)
            DWF_EDGE(ox)
        ox = xa;
#define DWF_PUT4 dwf_put(o + ox * c, a0, lo, hi, valid); dwf_put(o + (ox + 1) * c, a1, lo, hi, valid); \
                 dwf_put(o + (ox + 2) * c, a2, lo, hi, valid); dwf_put(o + (ox + 3) * c, a3, lo, hi, valid);
        if (sw == 1 && dw == 1) {
            for (; ox + 4 <= xb; ox += 4, r0 += 4 * c, r1 += 4 * c, r2 += 4 * c) {
                __m512 a0 = b, a1 = b, a2 = b, a3 = b;
                DWF_WINDOW1(r0, w0, w1, w2) DWF_WINDOW1(r1, w3, w4, w5) DWF_WINDOW1(r2, w6, w7, w8)
                DWF_PUT4
            }
        } else if (sw == 2 && dw == 1) {
            for (; ox + 4 <= xb; ox += 4, r0 += 8 * c, r1 += 8 * c, r2 += 8 * c) {
                __m512 a0 = b, a1 = b, a2 = b, a3 = b;
                DWF_WINDOW2(r0, w0, w1, w2) DWF_WINDOW2(r1, w3, w4, w5) DWF_WINDOW2(r2, w6, w7, w8)
                DWF_PUT4
            }
        }
        for (; ox + 4 <= xb; ox += 4, r0 += 4 * ps, r1 += 4 * ps, r2 += 4 * ps) {
            __m512 a0, a1, a2, a3;
            DWF_SUM(a0, r0, r0 + t1, r0 + t2, r1, r1 + t1, r1 + t2, r2, r2 + t1, r2 + t2)
            DWF_SUM(a1, r0 + ps, r0 + ps + t1, r0 + ps + t2, r1 + ps, r1 + ps + t1, r1 + ps + t2, r2 + ps,
                    r2 + ps + t1, r2 + ps + t2)
            DWF_SUM(a2, r0 + 2 * ps, r0 + 2 * ps + t1, r0 + 2 * ps + t2, r1 + 2 * ps, r1 + 2 * ps + t1,
                    r1 + 2 * ps + t2, r2 + 2 * ps, r2 + 2 * ps + t1, r2 + 2 * ps + t2)
            DWF_SUM(a3, r0 + 3 * ps, r0 + 3 * ps + t1, r0 + 3 * ps + t2, r1 + 3 * ps, r1 + 3 * ps + t1,
                    r1 + 3 * ps + t2, r2 + 3 * ps, r2 + 3 * ps + t1, r2 + 3 * ps + t2)
            DWF_PUT4
        }
        for (; ox < xb; ox++, r0 += ps, r1 += ps, r2 += ps) {
            __m512 a0;
            DWF_SUM(a0, r0, r0 + t1, r0 + t2, r1, r1 + t1, r1 + t2, r2, r2 + t1, r2 + t2)
            dwf_put(o + ox * c, a0, lo, hi, valid);
        }
        for (ox = xb; ox < ow; ox++)
            DWF_EDGE(ox)
#undef DWF_EDGE
#undef DWF_PUT4
    }
}
#undef DWF_SUM

/* 3x3, stride 1 or 2, no dilation along x, every filter row readable (an image row or `zero`): one
 * output row, the pixels outer (four at a time) and the channel blocks cb0..cb1 inner, so that the
 * loads walk each input pixel's channels in order and the columns a group shares stay in L1; the
 * weights are loaded again for each group (from L1).  The same sums as dwf_row, tap by tap. */
DW_TARGET static void dwf_row_po(const dwf_t *g, const float *const *rows, const float *zero, int64_t cb0,
                                 int64_t cb1, float *o)
{
    const int64_t c = g->s.c, sw = g->s.sw, ow = g->s.ow, xa = g->xa, xb = g->xb, pl = g->s.pl;
    const int64_t wd = g->s.wd;
    const __m512 lo = _mm512_set1_ps(g->lo), hi = _mm512_set1_ps(g->hi);
    const __mmask16 last = dw_mask(c - (cb1 - 1) * 16);
    int64_t ox, cb;
#define DWF_W const float *w = g->w + cb * DWF_B3; const __mmask16 valid = cb + 1 == cb1 ? last : 0xFFFF; \
    const __m512 b = _mm512_loadu_ps(w); \
    DWF_NINE(w)
    /* one pixel: a tap outside the image's columns reads zeros */
#define DWF_ONE(ox) { \
        const int64_t x0 = (ox) * sw - pl, x1 = x0 + 1, x2 = x0 + 2; \
        const int in0 = x0 >= 0 && x0 < wd, in1 = x1 >= 0 && x1 < wd, in2 = x2 >= 0 && x2 < wd; \
        for (cb = cb0; cb < cb1; cb++) { \
            DWF_W \
            const float *z = zero + cb * 16, *q0 = rows[0] + cb * 16, *q1 = rows[1] + cb * 16; \
            const float *q2 = rows[2] + cb * 16; \
            __m512 a = b; \
            DWF_TAP(a, in0 ? q0 + x0 * c : z, w0) DWF_TAP(a, in1 ? q0 + x1 * c : z, w1) \
            DWF_TAP(a, in2 ? q0 + x2 * c : z, w2) DWF_TAP(a, in0 ? q1 + x0 * c : z, w3) \
            DWF_TAP(a, in1 ? q1 + x1 * c : z, w4) DWF_TAP(a, in2 ? q1 + x2 * c : z, w5) \
            DWF_TAP(a, in0 ? q2 + x0 * c : z, w6) DWF_TAP(a, in1 ? q2 + x1 * c : z, w7) \
            DWF_TAP(a, in2 ? q2 + x2 * c : z, w8) \
            dwf_put(o + (ox) * c + cb * 16, a, lo, hi, valid); \
        } }
    for (ox = 0; ox < xa; ox++)
        DWF_ONE(ox)
    for (ox = xa; ox + 4 <= xb; ox += 4) {
        const int64_t x0 = ox * sw - pl;
        for (cb = cb0; cb < cb1; cb++) {
            DWF_W
            const float *q0 = rows[0] + x0 * c + cb * 16, *q1 = rows[1] + x0 * c + cb * 16;
            const float *q2 = rows[2] + x0 * c + cb * 16;
            float *op = o + ox * c + cb * 16;
            __m512 a0 = b, a1 = b, a2 = b, a3 = b;
            if (sw == 1) {
                DWF_WINDOW1(q0, w0, w1, w2) DWF_WINDOW1(q1, w3, w4, w5) DWF_WINDOW1(q2, w6, w7, w8)
            } else {
                DWF_WINDOW2(q0, w0, w1, w2) DWF_WINDOW2(q1, w3, w4, w5) DWF_WINDOW2(q2, w6, w7, w8)
            }
            dwf_put(op, a0, lo, hi, valid);
            dwf_put(op + c, a1, lo, hi, valid);
            dwf_put(op + 2 * c, a2, lo, hi, valid);
            dwf_put(op + 3 * c, a3, lo, hi, valid);
        }
    }
    for (; ox < ow; ox++)
        DWF_ONE(ox)
#undef DWF_ONE
#undef DWF_W
}
/* 3x3, every filter row readable (an image row or `zero`): one output row, one pixel at a time, all its
 * channel blocks before the next pixel, as XNNPACK's depthwise loop goes: each input pixel's channels are
 * read in order, the three columns a pixel reads stay in L1 for the next two pixels, and the weights
 * (bias and nine taps, 640 contiguous bytes a block) come from L1.  With more than DWF_PX_TILE blocks the
 * row is walked once for each of a few equal tiles of blocks, so that a tile's weights and the columns
 * stay in L1 together (7x7x960: 1.11 -> 0.95 x XNNPACK's time with 36 blocks a tile; 16: a further 0.85 x).
 * The pixels whose taps all lie in the image go four at a time, then two (dwf_block_n: each block's weights
 * and shared columns loaded once for them; 14x14x576 0.70 x, 28x28x192 0.70 x, 112x112x64 stride 2 0.87 x
 * the time of one at a time).  The same sums as dwf_row, tap by tap. */
DW_TARGET static inline __attribute__((always_inline)) void dwf_px(
    const float *const p0, const float *const p1, const float *const p2, const float *const p3,
    const float *const p4, const float *const p5, const float *const p6, const float *const p7,
    const float *const p8, const float *w, float *op, int64_t t0, int64_t whole, int64_t t1, __mmask16 last,
    __m512 lo, __m512 hi)
{
    int64_t cb;
#define DWF_PX(load) { __m512 a = _mm512_loadu_ps(w); \
    a = _mm512_add_ps(a, _mm512_mul_ps(load(p0 + cb * 16), _mm512_loadu_ps(w + 16))); \
    a = _mm512_add_ps(a, _mm512_mul_ps(load(p1 + cb * 16), _mm512_loadu_ps(w + 32))); \
    a = _mm512_add_ps(a, _mm512_mul_ps(load(p2 + cb * 16), _mm512_loadu_ps(w + 48))); \
    a = _mm512_add_ps(a, _mm512_mul_ps(load(p3 + cb * 16), _mm512_loadu_ps(w + 64))); \
    a = _mm512_add_ps(a, _mm512_mul_ps(load(p4 + cb * 16), _mm512_loadu_ps(w + 80))); \
    a = _mm512_add_ps(a, _mm512_mul_ps(load(p5 + cb * 16), _mm512_loadu_ps(w + 96))); \
    a = _mm512_add_ps(a, _mm512_mul_ps(load(p6 + cb * 16), _mm512_loadu_ps(w + 112))); \
    a = _mm512_add_ps(a, _mm512_mul_ps(load(p7 + cb * 16), _mm512_loadu_ps(w + 128))); \
    a = _mm512_add_ps(a, _mm512_mul_ps(load(p8 + cb * 16), _mm512_loadu_ps(w + 144)));
#define DWF_LAST(q) _mm512_maskz_loadu_ps(last, q)
    for (cb = t0; cb < whole; cb++, w += DWF_B3)
        DWF_PX(_mm512_loadu_ps) _mm512_storeu_ps(op + cb * 16, _mm512_min_ps(hi, _mm512_max_ps(lo, a))); }
    if (whole < t1)         /* the last block, part past channel C */
        DWF_PX(DWF_LAST) dwf_put(op + cb * 16, a, lo, hi, last); }
#undef DWF_LAST
#undef DWF_PX
}

/* n neighbouring output pixels (2 or 4) of one block at stride s (1 or 2), a 3x3 filter without dilation: the
 * weights loaded once for the n pixels, and each filter row's (n - 1) s + 3 input columns that they read once
 * (dwf_px loads nine columns and ten weight vectors for each pixel: a block of four pixels at stride 1 is 28
 * loads, not 76).  Each sum is dwf_px's, tap by tap (the same bits).  r0, r1, r2: the first pixel's leftmost
 * input column in the three filter rows, at the block; c: floats from one column to the next; mask: the
 * block's channels (full: all 16). */
DW_TARGET static inline __attribute__((always_inline)) void dwf_block_n(
    const float *r0, const float *r1, const float *r2, const int64_t c, const int n, const int s, const float *w,
    float *op, __mmask16 mask, const int full, __m512 lo, __m512 hi)
{
    __m512 wk[9], acc[4], x[9];
    const float *rows[3] = {r0, r1, r2};
    int k, i, j, ky;
#pragma GCC unroll 9
    for (k = 0; k < 9; k++)
        wk[k] = _mm512_loadu_ps(w + 16 * (k + 1));
#pragma GCC unroll 4
    for (i = 0; i < n; i++)
        acc[i] = _mm512_loadu_ps(w);
#pragma GCC unroll 3
    for (ky = 0; ky < 3; ky++) {
#pragma GCC unroll 9
        for (j = 0; j < (n - 1) * s + 3; j++)
            x[j] = full ? _mm512_loadu_ps(rows[ky] + j * c) : _mm512_maskz_loadu_ps(mask, rows[ky] + j * c);
#pragma GCC unroll 4
        for (i = 0; i < n; i++) {
            acc[i] = _mm512_add_ps(acc[i], _mm512_mul_ps(x[i * s], wk[3 * ky]));
            acc[i] = _mm512_add_ps(acc[i], _mm512_mul_ps(x[i * s + 1], wk[3 * ky + 1]));
            acc[i] = _mm512_add_ps(acc[i], _mm512_mul_ps(x[i * s + 2], wk[3 * ky + 2]));
        }
    }
#pragma GCC unroll 4
    for (i = 0; i < n; i++) {
        if (full)
            _mm512_storeu_ps(op + i * c, _mm512_min_ps(hi, _mm512_max_ps(lo, acc[i])));
        else
            dwf_put(op + i * c, acc[i], lo, hi, mask);
    }
}

/* n pixels (dwf_block_n) through blocks t0..t1 */
DW_TARGET static inline __attribute__((always_inline)) void dwf_pxn(
    const float *r0, const float *r1, const float *r2, const int64_t c, const int n, const int s, const float *w,
    float *op, int64_t t0, int64_t whole, int64_t t1, __mmask16 last, __m512 lo, __m512 hi)
{
    int64_t cb;
    for (cb = t0; cb < whole; cb++, w += DWF_B3)
        dwf_block_n(r0 + cb * 16, r1 + cb * 16, r2 + cb * 16, c, n, s, w, op + cb * 16, 0xFFFF, 1, lo, hi);
    if (whole < t1)         /* the last block, part past channel C */
        dwf_block_n(r0 + cb * 16, r1 + cb * 16, r2 + cb * 16, c, n, s, w, op + cb * 16, last, 0, lo, hi);
}

DW_TARGET static void dwf_row_px(const dwf_t *g, const float *const *rows, const float *zero, int64_t cb0,
                                 int64_t cb1, float *o, int64_t ox0, int64_t ox1)
{
    const int64_t c = g->s.c, sw = g->s.sw, dw = g->s.dw, pl = g->s.pl, wd = g->s.wd;
    const int64_t xa = g->xa < ox0 ? ox0 : g->xa > ox1 ? ox1 : g->xa;   /* this piece's columns ox0..ox1 */
    const int64_t xb = g->xb < xa ? xa : g->xb > ox1 ? ox1 : g->xb;
    const int64_t step = sw * c, t1c = dw * c, t2c = 2 * dw * c;
    const __m512 lo = _mm512_set1_ps(g->lo), hi = _mm512_set1_ps(g->hi);
    const int64_t tiles = (cb1 - cb0 + DWF_PX_TILE - 1) / DWF_PX_TILE;
    int64_t t, ox, k;
    for (t = 0; t < tiles; t++) {
        /* this tile's blocks t0..t1, the last of them partly past channel C at the end of the row */
        const int64_t t0 = cb0 + (cb1 - cb0) * t / tiles, t1 = cb0 + (cb1 - cb0) * (t + 1) / tiles;
        const __mmask16 last = t1 == cb1 ? dw_mask(c - (t1 - 1) * 16) : 0xFFFF;
        const int64_t whole = last == 0xFFFF ? t1 : t1 - 1;   /* blocks of 16 real channels */
        const float *const w = g->w + t0 * DWF_B3;
        /* a pixel at the left or right edge: a tap outside the image reads zeros */
#define DWF_PX_EDGE(ox) { const float *p[9]; \
            for (k = 0; k < 9; k++) { \
                const int64_t ix = (ox) * sw - pl + (k % 3) * dw; \
                p[k] = ix >= 0 && ix < wd ? rows[k / 3] + ix * c : zero; \
            } \
            dwf_px(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], w, o + (ox) * c, t0, whole, t1, last, lo, \
                   hi); }
        for (ox = ox0; ox < xa; ox++)
            DWF_PX_EDGE(ox)
        {   /* the pixels whose taps all lie in the image: nine pointers that move sw pixels at a time */
            const float *q0 = rows[0] + (xa * sw - pl) * c, *q1 = rows[1] + (xa * sw - pl) * c;
            const float *q2 = rows[2] + (xa * sw - pl) * c;
            ox = xa;
            if (dw == 1 && (sw == 1 || sw == 2)) {      /* four pixels at a time, then two */
                for (; ox + 3 < xb; ox += 4, q0 += 4 * step, q1 += 4 * step, q2 += 4 * step) {
                    if (sw == 1)
                        dwf_pxn(q0, q1, q2, c, 4, 1, w, o + ox * c, t0, whole, t1, last, lo, hi);
                    else
                        dwf_pxn(q0, q1, q2, c, 4, 2, w, o + ox * c, t0, whole, t1, last, lo, hi);
                }
                if (ox + 1 < xb) {
                    if (sw == 1)
                        dwf_pxn(q0, q1, q2, c, 2, 1, w, o + ox * c, t0, whole, t1, last, lo, hi);
                    else
                        dwf_pxn(q0, q1, q2, c, 2, 2, w, o + ox * c, t0, whole, t1, last, lo, hi);
                    ox += 2, q0 += 2 * step, q1 += 2 * step, q2 += 2 * step;
                }
            }
            for (; ox < xb; ox++, q0 += step, q1 += step, q2 += step)
                dwf_px(q0, q0 + t1c, q0 + t2c, q1, q1 + t1c, q1 + t2c, q2, q2 + t1c, q2 + t2c, w, o + ox * c, t0,
                       whole, t1, last, lo, hi);
        }
        for (ox = xb; ox < ox1; ox++)
            DWF_PX_EDGE(ox)
#undef DWF_PX_EDGE
    }
}

#undef DWF_WINDOW2
#undef DWF_WINDOW1
#undef DWF_ADD
#undef DWF_LOAD
#undef DWF_TAP
#undef DWF_NINE
#undef DWF_B3

static void dwf_part(void *ctx, int part, int thread)
{
    dwf_t *g = (dwf_t *)ctx;
    int64_t r0, r1, cb0, cb1, r, ky, cb, p0 = 0, p1 = 0;
    const float *zero = NULL;
    (void)thread;
    if (g->one_pixel) {             /* a range of pixels p0..p1, in the rows r0..r1 it touches */
        p0 = taper_edge(part, g->pixel_parts, g->pixels, TAPER_MIN_ITEMS);
        p1 = taper_edge(part + 1, g->pixel_parts, g->pixels, TAPER_MIN_ITEMS);
        if (p0 >= p1)
            return;
        r0 = p0 / g->s.ow, r1 = (p1 - 1) / g->s.ow + 1, cb0 = 0, cb1 = g->s.nb;
    } else if (!dw_piece(&g->s, part, &r0, &r1, &cb0, &cb1)) {
        return;
    }
    if (g->zeros_add_nothing) {
        zero = dwi8_grow(&dwi8_zero, &dwi8_zero_floats, (size_t)(g->s.wd * g->s.c), 1);
        if (zero == NULL) {
            atomic_store_explicit(&g->failed, 1, memory_order_relaxed);
            return;
        }
    }
    for (r = r0; r < r1; r++) {
        const int64_t b = r / g->s.oh, oy = r % g->s.oh;
        const float *rows[DW_MAX_KH];
        for (ky = 0; ky < g->s.kh; ky++) {
            int64_t iy = oy * g->s.sh - g->s.pt + ky * g->s.dh;
            rows[ky] = iy < 0 || iy >= g->s.h ? zero : g->x + (b * g->s.h + iy) * g->s.wd * g->s.c;
        }
        if (g->one_pixel) {
            const int64_t first = r * g->s.ow;
            dwf_row_px(g, rows, zero, cb0, cb1, g->out + first * g->s.c, p0 > first ? p0 - first : 0,
                       p1 < first + g->s.ow ? p1 - first : g->s.ow);
            continue;
        }
        if (g->pixels_outer) {
            dwf_row_po(g, rows, zero, cb0, cb1, g->out + r * g->s.ow * g->s.c);
            continue;
        }
        for (cb = cb0; cb < cb1; cb++) {
            const float *at[DW_MAX_KH];
            for (ky = 0; ky < g->s.kh; ky++)
                at[ky] = rows[ky] == NULL ? NULL : rows[ky] + cb * 16;
            dwf_row(g, at, zero == NULL ? NULL : zero + cb * 16, g->w + cb * g->wb, g->out + r * g->s.ow * g->s.c + cb * 16,
                    dw_mask(g->s.c - cb * 16));
        }
    }
}

#else

static void dwf_part(void *ctx, int part, int thread)
{
    (void)ctx;
    (void)part;
    (void)thread;
}

#endif

/* dw_f32(threads, x, w, out, geometry, clamp): out = clamp(depthwise(x) + bias) on the pool, in the reference
 * kernels' order.  x float32 [N, H, W, C]; w float32 [NB, 1 + KH*KW, 16] (NB = C / 16 rounded up): for each
 * block of 16 channels its bias, then its taps row by row (workbench/perf/depthwise.py pack_float; zeros past
 * C); out float32 [N, OH, OW, C]; geometry int64 [kh, kw, stride h, stride w, dilation h, dilation w, pad
 * top, pad left]; clamp float32 [lo, hi, 1 where the zeros add nothing (see dwf_t)].  0: done; -1: not
 * taken (no AVX-512 here, or arrays that do not fit), out untouched.  dwf_setup / dwf_exec: as
 * convf_setup / convf_exec (conv_f32.c). */
static int dwf_setup(PyObject *const *args, Py_ssize_t nargs, dwf_t *gp)
{
    static const native_arg_t spec[5] = {{4, NPY_FLOAT32, 0}, {3, NPY_FLOAT32, 0}, {4, NPY_FLOAT32, 1},
                                         {1, NPY_INT64, 0}, {1, NPY_FLOAT32, 0}};
    PyArrayObject *a[5], *x, *w, *out, *geom, *clamp;
    dwf_t g;
    long threads;
    int fit = native_args(args, nargs, "dw_f32(threads, x, w, out, geometry, clamp)", spec, 5, &threads, a);
    if (fit < 0)
        return -2;
    x = a[0], w = a[1], out = a[2], geom = a[3], clamp = a[4];
    if (!dw_cpu_ok() || !fit || PyArray_DIM(geom, 0) != 8 || PyArray_DIM(clamp, 0) != 3
        || !dw_shape(&g.s, x, out, (const int64_t *)PyArray_DATA(geom)) || PyArray_DIM(w, 0) != g.s.nb
        || PyArray_DIM(w, 1) != 1 + g.s.kh * g.s.kw || PyArray_DIM(w, 2) != 16)
        return -1;
    if (g.s.rows == 0 || g.s.ow == 0)
        return 0;
    g.x = (const float *)PyArray_DATA(x);
    g.w = (const float *)PyArray_DATA(w);
    g.wb = (1 + g.s.kh * g.s.kw) * 16;
    g.out = (float *)PyArray_DATA(out);
    g.lo = ((const float *)PyArray_DATA(clamp))[0];
    g.hi = ((const float *)PyArray_DATA(clamp))[1];
    g.zeros_add_nothing = ((const float *)PyArray_DATA(clamp))[2] == 1.0f;
    /* 3x3 rows: one pixel at a time, all its channels (XNNPACK's order) where the rows are short or the
     * stride 2, and the channels many; the pixels outer, four at a time, in long rows of stride 1 (four
     * pixels share each column they load); else the blocks outer, whose weights stay in registers for the
     * whole row (docs/benchmarks.md has the measurements) */
    g.one_pixel = g.zeros_add_nothing && g.s.kh == 3 && g.s.kw == 3 && (g.s.sw >= 2 || g.s.ow < DWF_LONG_ROW)
                  && g.s.nb >= DWF_MIN_BLOCKS_PX;
    g.pixels_outer = g.zeros_add_nothing && g.s.kh == 3 && g.s.kw == 3 && g.s.dw == 1
                     && (g.s.sw == 2 || (g.s.sw == 1 && g.s.ow >= DWF_LONG_ROW));
    {   /* xa: the first output column whose first tap is in the image; xb: one past the last whose last is */
        int64_t last = g.s.wd - 1 - (g.s.kw - 1) * g.s.dw + g.s.pl;
        g.xa = (g.s.pl + g.s.sw - 1) / g.s.sw;
        g.xa = g.xa < g.s.ow ? g.xa : g.s.ow;
        g.xb = last < 0 ? g.xa : last / g.s.sw + 1;
        g.xb = g.xb < g.xa ? g.xa : g.xb > g.s.ow ? g.s.ow : g.xb;
    }
    atomic_init(&g.failed, 0);
    if (g.one_pixel) {              /* pieces of pixels, so that short rows still cut evenly */
        const int64_t t = threads < MAX_THREADS ? threads : MAX_THREADS;
        g.pixels = g.s.rows * g.s.ow;
        g.pixel_parts = t > 1 ? DW_PARTS_PER_THREAD * t : 1;
        if (g.pixel_parts > g.pixels / DWF_PX_MIN_PIXELS)
            g.pixel_parts = g.pixels / DWF_PX_MIN_PIXELS > t ? g.pixels / DWF_PX_MIN_PIXELS : t;
        g.pixel_parts = g.pixel_parts < g.pixels ? g.pixel_parts : g.pixels;
        g.parts = (int)g.pixel_parts;
    } else {
        g.parts = dw_cut(&g.s, threads, DW_PARTS_PER_THREAD, 0);
    }
    g.threads = (int)threads;
    *gp = g;
    return 1;
}

/* run what dwf_setup made ready, the GIL let go: 0 done, or NATIVE_NOMEM */
static int dwf_exec(void *state)
{
    dwf_t *g = (dwf_t *)state;
    atomic_store(&g->failed, 0);
    native_pieces(dwf_part, g, g->parts, g->threads);
    return atomic_load(&g->failed) ? NATIVE_NOMEM : 0;
}

NATIVE_FUNCTION(kernel_dw_f32, dwf_t, dwf_setup, dwf_exec)
