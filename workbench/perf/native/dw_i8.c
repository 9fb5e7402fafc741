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
 * Threads: the output rows are cut among threads (two pieces a thread, on the pool), or, for
 * layers with more channels than output pixels (14x14 and 7x7 in a MobileNet), the 16-channel
 * blocks: a piece then converts only its own channels. */
#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define DWI8_X86 1
#define DWI8_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma")))
#else
#define DWI8_X86 0
#endif

#define DWI8_PX 4                   /* output pixels side by side in the 3x3 loop */
#define DWI8_MAX_KH 16              /* filter rows the ring of converted rows can hold */
#define DWI8_MAX_TAPS 256           /* 256 * 255 * 128 < 2^24: the exact range holds some bias */
#define DWI8_PARTS_PER_THREAD 2

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

typedef struct {
    const int8_t *x;
    const float *w;                 /* [KH*KW, c16]: the filter as float32, zeros past channel C */
    const int32_t *q32;             /* requant_tables: [6, n16] (rows as described there) */
    const int64_t *q64;             /* [7, n16] */
    int8_t *out;
    void *blocks;                   /* dwi8_block_t per 16 channels (made before the pieces run) */
    int64_t n16, h, wd, c, c16, nb, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, wp, rows;
    int64_t row_parts, rows_per_part, block_parts, blocks_per_part;
    int32_t in_zp, out_zp, lo, hi;
    int mode;                       /* the tables' rounding mode */
    atomic_int failed;              /* no memory for a thread's rows */
} dwi8_t;

#if DWI8_X86

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
 * ring of converted rows, and a row of zeros that nothing writes */
static _Thread_local float *dwi8_ring;
static _Thread_local size_t dwi8_ring_floats;
static _Thread_local float *dwi8_zero;
static _Thread_local size_t dwi8_zero_floats;

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

static __mmask16 dwi8_mask(int64_t lanes)
{
    return lanes >= 16 ? (__mmask16)0xffff : lanes <= 0 ? (__mmask16)0 : (__mmask16)((1u << lanes) - 1u);
}

DWI8_TARGET static void dwi8_make_block(const dwi8_t *g, int64_t cb, dwi8_block_t *k)
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
    k->valid = dwi8_mask(g->c - ch);
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

DWI8_TARGET static inline __attribute__((always_inline)) dwi8_ep_t dwi8_ep(const dwi8_t *g, const dwi8_block_t *k)
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
DWI8_TARGET static inline __attribute__((always_inline)) void dwi8_store(__m512 acc, const dwi8_ep_t *e, int mode,
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
DWI8_TARGET static void dwi8_convert(const dwi8_t *g, int64_t gy, int64_t cb0, int64_t nblk, float *dst)
{
    const int64_t plane = g->wp * 16, right = g->wp - g->pl - g->wd;
    const __m512i zp = _mm512_set1_epi32(g->in_zp);
    const __mmask16 last = dwi8_mask(g->c - (cb0 + nblk - 1) * 16);
    const int8_t *src = g->x + gy * g->wd * g->c + cb0 * 16;
    int64_t ix, j;
    for (j = 0; j < nblk; j++) {
        memset(dst + j * plane, 0, (size_t)(g->pl * 16) * sizeof(float));
        memset(dst + j * plane + (g->pl + g->wd) * 16, 0, (size_t)(right * 16) * sizeof(float));
    }
    dst += g->pl * 16;
    for (ix = 0; ix < g->wd; ix++, src += g->c, dst += 16) {
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
DWI8_TARGET static inline __attribute__((always_inline)) void dwi8_row3x3(const dwi8_t *g, const float *const *rp,
                                                                            const float *w, const dwi8_block_t *k,
                                                                            int mode, int sat, int64_t sw,
                                                                            int64_t dw, int8_t *o)
{
    const int64_t ps = sw * 16, ts = dw * 16, c = g->c, c16 = g->c16, ow = g->ow;
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
DWI8_TARGET static inline __attribute__((always_inline)) void dwi8_row_any(const dwi8_t *g, const float *const *rp,
                                                                             const float *w, const dwi8_block_t *k,
                                                                             int mode, int sat, int8_t *o)
{
    const int64_t ps = g->sw * 16, ts = g->dw * 16, c16 = g->c16;
    const dwi8_ep_t e = dwi8_ep(g, k);
    int64_t ox, ky, kx;
    for (ox = 0; ox < g->ow; ox++) {
        __m512 a = e.bias;
        for (ky = 0; ky < g->kh; ky++) {
            const float *r = rp[ky] + ox * ps, *wk = w + ky * g->kw * c16;
            for (kx = 0; kx < g->kw; kx++)
                a = _mm512_fmadd_ps(_mm512_loadu_ps(r + kx * ts), _mm512_loadu_ps(wk + kx * c16), a);
        }
        dwi8_store(a, &e, mode, sat, o + ox * g->c);
    }
}

#define DWI8_ROWS(mode, sat) \
    if (g->kh != 3 || g->kw != 3) \
        dwi8_row_any(g, rp, w, k, mode, sat, o); \
    else if (g->sw == 1 && g->dw == 1) \
        dwi8_row3x3(g, rp, w, k, mode, sat, 1, 1, o); \
    else if (g->sw == 2 && g->dw == 1) \
        dwi8_row3x3(g, rp, w, k, mode, sat, 2, 1, o); \
    else \
        dwi8_row3x3(g, rp, w, k, mode, sat, g->sw, g->dw, o);

/* one output row of one block: the loop compiled for its rounding and clamp */
DWI8_TARGET static void dwi8_row(const dwi8_t *g, const float *const *rp, const float *w, const dwi8_block_t *k,
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
    const dwi8_block_t *blocks = (const dwi8_block_t *)g->blocks;
    int64_t rpart = part / g->block_parts, bpart = part % g->block_parts;
    int64_t r0 = rpart * g->rows_per_part, r1 = r0 + g->rows_per_part;
    int64_t cb0 = bpart * g->blocks_per_part, cb1 = cb0 + g->blocks_per_part;
    int64_t nblk, row_floats, tag[DWI8_MAX_KH], r, ky, cb, s;
    float *ring, *zero;
    (void)thread;
    if (r1 > g->rows)
        r1 = g->rows;
    if (cb1 > g->nb)
        cb1 = g->nb;
    if (r0 >= r1 || cb0 >= cb1)
        return;
    nblk = cb1 - cb0;
    row_floats = g->wp * 16 * nblk;
    ring = dwi8_grow(&dwi8_ring, &dwi8_ring_floats, (size_t)(g->kh * row_floats), 0);
    zero = dwi8_grow(&dwi8_zero, &dwi8_zero_floats, (size_t)(g->wp * 16), 1);
    if (ring == NULL || zero == NULL) {
        atomic_store_explicit(&g->failed, 1, memory_order_relaxed);
        return;
    }
    for (s = 0; s < g->kh; s++)
        tag[s] = -1;
    for (r = r0; r < r1; r++) {
        const int64_t b = r / g->oh, oy = r % g->oh;
        const float *rp[DWI8_MAX_KH];
        int64_t need[DWI8_MAX_KH];
        int used[DWI8_MAX_KH] = {0};
        /* the filter rows' input rows: in the ring already, or converted into a slot no filter row of
         * this output row needs */
        for (ky = 0; ky < g->kh; ky++) {
            int64_t iy = oy * g->sh - g->pt + ky * g->dh;
            need[ky] = iy < 0 || iy >= g->h ? -1 : b * g->h + iy;
            rp[ky] = NULL;
            for (s = 0; s < g->kh && need[ky] >= 0; s++)
                if (tag[s] == need[ky]) {
                    rp[ky] = ring + s * row_floats;
                    used[s] = 1;
                }
        }
        for (ky = 0; ky < g->kh; ky++) {
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
            const float *at[DWI8_MAX_KH];
            const int64_t off = (cb - cb0) * g->wp * 16;      /* this block's plane of each converted row */
            for (ky = 0; ky < g->kh; ky++)
                at[ky] = rp[ky] == zero ? zero : rp[ky] + off;
            dwi8_row(g, at, g->w + cb * 16, &blocks[cb], g->out + r * g->ow * g->c + cb * 16);
        }
    }
}

static int dwi8_cpu_ok(void)
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

static void *dwi8_make_blocks(dwi8_t *g)
{
    dwi8_block_t *k = (dwi8_block_t *)aligned_alloc(64, (size_t)g->nb * sizeof(dwi8_block_t));
    int64_t cb;
    if (k != NULL)
        for (cb = 0; cb < g->nb; cb++)
            dwi8_make_block(g, cb, &k[cb]);
    return k;
}

#else

static void dwi8_part(void *ctx, int part, int thread)
{
    (void)ctx;
    (void)part;
    (void)thread;
}

static int dwi8_cpu_ok(void)
{
    return 0;
}

static void *dwi8_make_blocks(dwi8_t *g)
{
    (void)g;
    return NULL;
}

#endif

static PyArrayObject *dwi8_array(PyObject *o, int ndim, int type, int writable)
{
    PyArrayObject *a;
    if (!PyArray_Check(o))
        return NULL;
    a = (PyArrayObject *)o;
    if (PyArray_NDIM(a) != ndim || PyArray_TYPE(a) != type || !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a)
        || !PyArray_ISNOTSWAPPED(a) || (writable && !PyArray_ISWRITEABLE(a)))
        return NULL;
    return a;
}

/* dw_i8(threads, x, w, out, q32, q64, scalars, geometry): out = requantize(depthwise(x)) on the pool.
 * x int8 [N, H, W, C]; w float32 [KH*KW, C16] (C16: C rounded up to 16, zeros past C); out int8
 * [N, OH, OW, C]; q32, q64, scalars: workbench/perf/vnni.py requant_tables for at least C16
 * channels; geometry int64 [kh, kw, stride h, stride w, dilation h, dilation w, pad top, pad left,
 * input zero point].  0: done; -1: not taken (no AVX-512 here, or arrays that do not fit), out
 * untouched. */
static PyObject *kernel_dw_i8(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyArrayObject *x, *w, *out, *q32, *q64, *scalars, *geom;
    const int64_t *gi, *sc;
    dwi8_t g;
    long threads;
    int parts;
    (void)self;
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "dw_i8(threads, x, w, out, q32, q64, scalars, geometry)");
        return NULL;
    }
    threads = PyLong_AsLong(args[0]);
    if (threads == -1 && PyErr_Occurred())
        return NULL;
    x = dwi8_array(args[1], 4, NPY_INT8, 0);
    w = dwi8_array(args[2], 2, NPY_FLOAT32, 0);
    out = dwi8_array(args[3], 4, NPY_INT8, 1);
    q32 = dwi8_array(args[4], 2, NPY_INT32, 0);
    q64 = dwi8_array(args[5], 2, NPY_INT64, 0);
    scalars = dwi8_array(args[6], 1, NPY_INT64, 0);
    geom = dwi8_array(args[7], 1, NPY_INT64, 0);
    if (!dwi8_cpu_ok() || x == NULL || w == NULL || out == NULL || q32 == NULL || q64 == NULL || scalars == NULL
        || geom == NULL || PyArray_DIM(geom, 0) != 9 || PyArray_DIM(scalars, 0) != 5 || PyArray_DIM(q32, 0) != 6
        || PyArray_DIM(q64, 0) != 7 || PyArray_DIM(q64, 1) != PyArray_DIM(q32, 1) || PyArray_DIM(q32, 1) % 2)
        return PyLong_FromLong(-1);
    gi = (const int64_t *)PyArray_DATA(geom);
    sc = (const int64_t *)PyArray_DATA(scalars);
    memset(&g, 0, sizeof g);
    g.kh = gi[0]; g.kw = gi[1]; g.sh = gi[2]; g.sw = gi[3]; g.dh = gi[4]; g.dw = gi[5]; g.pt = gi[6]; g.pl = gi[7];
    g.h = PyArray_DIM(x, 1); g.wd = PyArray_DIM(x, 2); g.c = PyArray_DIM(x, 3);
    g.oh = PyArray_DIM(out, 1); g.ow = PyArray_DIM(out, 2);
    g.nb = (g.c + 15) / 16;
    g.c16 = g.nb * 16;
    g.n16 = PyArray_DIM(q32, 1);
    g.rows = PyArray_DIM(out, 0) * g.oh;
    if (PyArray_DIM(out, 0) != PyArray_DIM(x, 0) || PyArray_DIM(out, 3) != g.c || g.kh < 1 || g.kw < 1
        || g.kh > DWI8_MAX_KH || g.kh * g.kw > DWI8_MAX_TAPS || g.sh < 1 || g.sw < 1 || g.dh < 1 || g.dw < 1
        || g.pt < 0 || g.pl < 0 || g.c < 1 || PyArray_DIM(w, 0) != g.kh * g.kw || PyArray_DIM(w, 1) != g.c16
        || g.n16 < g.c16 || sc[4] != g.c || sc[3] < DWI8_AWAY || sc[3] > DWI8_UP_FAST || gi[8] < -128
        || gi[8] > 127 || sc[1] < -128 || sc[2] > 127
        || sc[1] > sc[2] || sc[0] < -128 || sc[0] > 127)
        return PyLong_FromLong(-1);
    {   /* the float sums start at the bias: exact while |bias| + 255 * 128 * taps stays below 2^24 */
        const int32_t *bias = (const int32_t *)PyArray_DATA(q32);
        int64_t j, room = ((int64_t)1 << 24) - 255 * 128 * g.kh * g.kw;
        for (j = 0; j < g.c; j++)
            if (bias[j] >= room || -(int64_t)bias[j] >= room)
                return PyLong_FromLong(-1);
    }
    /* columns a filter can reach: the left padding, the image, and whatever lies right of it */
    g.wp = (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1;
    if (g.wp < g.pl + g.wd)
        g.wp = g.pl + g.wd;
    if (g.rows == 0 || g.ow == 0)
        return PyLong_FromLong(0);
    g.in_zp = (int32_t)gi[8];
    g.out_zp = (int32_t)sc[0]; g.lo = (int32_t)sc[1]; g.hi = (int32_t)sc[2]; g.mode = (int)sc[3];
    g.x = (const int8_t *)PyArray_DATA(x);
    g.w = (const float *)PyArray_DATA(w);
    g.q32 = (const int32_t *)PyArray_DATA(q32);
    g.q64 = (const int64_t *)PyArray_DATA(q64);
    g.out = (int8_t *)PyArray_DATA(out);
    if (threads < 1)
        threads = 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    g.row_parts = g.block_parts = 1;
    if (threads > 1) {
        int64_t most = DWI8_PARTS_PER_THREAD * threads;
        /* more channels than output pixels: cut the channels, so no piece converts another's rows */
        if (g.nb >= threads && g.c > g.rows * g.ow)
            g.block_parts = g.nb < most ? g.nb : most;
        else
            g.row_parts = g.rows < most ? g.rows : most;
    }
    g.rows_per_part = (g.rows + g.row_parts - 1) / g.row_parts;
    g.row_parts = (g.rows + g.rows_per_part - 1) / g.rows_per_part;
    g.blocks_per_part = (g.nb + g.block_parts - 1) / g.block_parts;
    g.block_parts = (g.nb + g.blocks_per_part - 1) / g.blocks_per_part;
    parts = (int)(g.row_parts * g.block_parts);
    g.blocks = dwi8_make_blocks(&g);
    if (g.blocks == NULL)
        return PyErr_NoMemory();
    Py_BEGIN_ALLOW_THREADS
    if (parts <= 1)
        dwi8_part(&g, 0, 0);
    else
        pool_run(dwi8_part, &g, parts, (int)threads, 1);
    Py_END_ALLOW_THREADS
    free(g.blocks);
    if (atomic_load(&g.failed))
        return PyErr_NoMemory();
    return PyLong_FromLong(0);
}
