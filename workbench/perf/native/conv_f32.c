/* ------------------------------------------------------------------------------------------
 * Float convolutions (groups of one) as one "indirect" matrix product, bias, clamp and the overflow
 * guard in the same pass.  workbench/perf/build.py puts this file between the table of entries and
 * shim_tail.c, whose module table lists conv_f32.
 *
 * The product: output pixel m, output channel j = bias[j] + sum over taps (ky, kx) and input channels
 * ci of x[pixel under tap] * w[j, ky, kx, ci].  Rather than copying every tap's pixels into an im2col
 * matrix, a tile of MR output pixels keeps one pointer per (tap, pixel): to the input pixel under the
 * tap, or to a row of zeros where the tap falls in the padding.  This is how XNNPACK's convolution
 * operators feed their GEMM micro-kernels (google/XNNPACK, src/operators/convolution-nhwc.c, the
 * "indirection buffer"); a 1x1 convolution with stride 1 is the plain product, whose tiles read their
 * input in place (CONVF_FOR_VALUES).
 *
 * The weights are packed once, at bind (workbench/perf/fgemm.py): panels of NR = 16 output channels
 * (zeros past the last channel), two panels side by side: K rows of 32 values (K = KH*KW*C, in the
 * filter's own (ky, kx, ci) order); a lone last panel K rows of 16.  The micro-kernel computes MR x 32 outputs (two panels) in 14 AVX-512 registers:
 * for every k it loads two rows of 16 weights and multiplies them by the MR input values, each
 * broadcast to a register (or MR x 16 for a last lone panel, MR x 8 for one of at most 8 channels, MR x
 * 24 for a last pair with at most 8 channels in its second panel: convf_tile8, convf_tile24).  Rows
 * past the last pixel re-read the last one and are not stored; columns past the last channel are not stored (a masked store, only where a
 * panel has such columns: on Zen 4 masked stores of every row made a 112x112x16 -> 96 layer 3 % slower).
 *
 * The guard: the speed layer's sums run in another order than the reference kernels' (fused
 * multiply-adds, other partial sums), which is harmless unless a partial sum can overflow float32;
 * the caller gives the limit below which no input value can make one overflow (1e38 over the
 * weights' max |w| times K, workbench/interpreter/fast/conv_2d.py) and the kernel reports any input
 * value not below it (or NaN): the caller then runs the teaching layer's sums instead.  A negative
 * limit skips that pass: the caller knows every input value is below the limit or NaN (the layer
 * before clamps its outputs to a narrow range), and a NaN gives NaN in any order.
 *
 * Order: when the packed weights fit in L1 (a 1x1 layer with few input channels), each tile meets
 * every panel in turn, so its input stays in L1 and its output row is written at once; else the tiles
 * go in chunks whose input fits in the core's L2 cache, and each panel pair meets every tile of the
 * chunk while its weights stay in L1.
 *
 * Threads: CONVF_PARTS_PER_THREAD pieces a thread, shared by the pool (pool_run).  With more output channels than
 * pixels (the 14x14 and 7x7 layers of a MobileNet, whose weights come from memory, not cache) the
 * panels are cut, so each thread reads only its share of the weights, unless the weights are large and
 * the tiles many (CONVF_PIXEL_CUT_TILES); else the tiles. */
#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define CONVF_X86 1
#define CONVF_TARGET __attribute__((target("avx512f,fma")))
#else
#define CONVF_X86 0
#endif

#define CONVF_MR 7              /* output pixels a tile: 7 divides 112, 56, 28, 14 and 7 */
#define CONVF_NR 16             /* output channels a packed panel */
#define CONVF_L2_CHUNK (256 * 1024)   /* bytes of input a chunk of tiles reads */
#define CONVF_L1_WEIGHTS (32 * 1024)  /* bytes of packed weights that stay in L1 as a whole */
#define CONVF_PARTS_PER_THREAD 8  /* pieces a thread: the pieces are claimed as threads come free, so a
                                   * thread that starts late takes fewer, and the one that finishes first
                                   * waits for about half a piece: with 8 a thread, 1/32 of the node
                                   * (2 a thread left it waiting 1/8; MobileNet v2 float at two threads
                                   * went from 1.22 to 1.13 x XNNPACK's time, docs/benchmarks.md) */
#define CONVF_PANEL_SLICES 12    /* slices of tiles a panel group where the panels are cut: at most 12
                                  * (a 14x14 layer's 28 tiles in 10 slices of 3, a 7x7 layer's 7 in 7 of
                                  * one), so that the pieces each thread ends with are small; with 4
                                  * slices MobileNet v2 at 2 threads took 1.007-1.009 x the time (one
                                  * process, settings alternated; 10, 16 and 28 slices did as 12) */
#define CONVF_SHARED_WEIGHTS (512 * 1024)  /* packed weights up to which both threads may read them all
                                            * (MobileNet v2 at 2 threads, one process, the library's own
                                            * pool, settings alternated: numbering its 14x14 expansions
                                            * group by group took 1.011-1.017 x the time; its 7x7 ones,
                                            * 614 KB and more, did better group by group) */
#define CONVF_PIXEL_CUT_TILES 8  /* tiles a thread from which a layer whose weights are beyond
                                  * CONVF_SHARED_WEIGHTS is cut by pixels even with more output channels
                                  * than pixels: each thread reads all the weights, but writes all the
                                  * channels of its own pixels, which the pixel-cut depthwise layer after
                                  * it then finds in its core's cache (MobileNet v1's 14x14x512 -> 512
                                  * layers, 1 MB of weights, 28 tiles: v1 at 2 threads, one process, the
                                  * two cuts alternated, 0.963-0.991 x the time in three runs) */
#define CONVF_STACK_TAPS 64     /* tiles with up to this many taps keep their pointers on the stack */

typedef struct {
    const float *x, *w, *bias, *zeros;
    float *out;
    int64_t h, wd, c, oh, ow, o, kh, kw, sh, sw, dh, dw, pt, pl;
    int64_t taps, k, m, tiles, panels, values;
    int64_t tile_parts, tiles_per_part, panel_parts, panels_per_part, chunk_tiles;
    int panel_major;                /* pieces numbered panel group first (see convf's cut) */
    float lo, hi, limit;
    int direct;
    int64_t in_len, in_step, in_row;    /* a tile read in place (convf_in_place): a run's values, from one
                                         * pixel's run to the next's, from one filter row's to the next's */
    const float *res;           /* a residual ADD in the epilogue (conv_f32's last two arguments), or NULL */
    float alo, ahi;             /* the ADD's clamp */
    int res_first;              /* the residual is the ADD's first operand */
    atomic_int bad;             /* an input value at or above the guard's limit, or NaN */
    atomic_int failed;          /* no memory for a piece's pointers */
    int threads, parts;         /* the pool's threads and pieces for this call */
} convf_t;

#if CONVF_X86

/* The pointers of the tile of output pixels m0..m0+MR-1, as runs of input values: run r starts at
 * ap[r * MR + i] for pixel i and is len[r] values long; the number of runs.  A run is one tap's C
 * channels, or, where a filter row lies inside the image for every pixel of the tile (no dilation
 * along x), the whole filter row's KW*C values, which follow each other in the input as in the
 * packed weights (a network's first layer, C = 3, then multiplies runs of 9 values, not 3).  One
 * division per tile, not per pixel: the pixels of a tile follow each other along the output rows. */
static int64_t convf_pointers(const convf_t *g, int64_t m0, const float **ap, int64_t *len)
{
    int64_t i, ky, kx, plane = g->oh * g->ow, b[CONVF_MR], oy[CONVF_MR], ox[CONVF_MR], runs = 0;
    if (g->direct) {
        for (i = 0; i < CONVF_MR; i++)
            ap[i] = g->x + (m0 + i < g->m ? m0 + i : g->m - 1) * g->c;
        len[0] = g->c;
        return 1;
    }
    b[0] = m0 / plane;
    oy[0] = m0 % plane / g->ow;
    ox[0] = m0 % g->ow;
    if (ox[0] + CONVF_MR <= g->ow && g->dw == 1 && g->kw > 1) {
        /* the whole tile in one output row: where a filter row lies in the image for the first and
         * the last pixel, it does for all, and the pixels' runs are sw * C values apart */
        int64_t ix0 = ox[0] * g->sw - g->pl, ix1 = (ox[0] + CONVF_MR - 1) * g->sw - g->pl, step = g->sw * g->c;
        int inner = ix0 >= 0 && ix1 + g->kw <= g->wd;
        for (ky = 0; ky < g->kh && inner; ky++) {
            int64_t iy = oy[0] * g->sh - g->pt + ky * g->dh;
            if (iy < 0 || iy >= g->h) {
                for (i = 0; i < CONVF_MR; i++)
                    ap[runs * CONVF_MR + i] = g->zeros;
            } else {
                const float *row = g->x + ((b[0] * g->h + iy) * g->wd + ix0) * g->c;
                for (i = 0; i < CONVF_MR; i++)
                    ap[runs * CONVF_MR + i] = row + i * step;
            }
            len[runs++] = g->kw * g->c;
        }
        if (inner)
            return runs;
        runs = 0;
    }
    for (i = 1; i < CONVF_MR; i++) {        /* past the last pixel: the last one's pointers again */
        b[i] = b[i - 1], oy[i] = oy[i - 1], ox[i] = ox[i - 1];
        if (m0 + i < g->m && ++ox[i] == g->ow) {
            ox[i] = 0;
            if (++oy[i] == g->oh) {
                oy[i] = 0;
                b[i]++;
            }
        }
    }
    for (ky = 0; ky < g->kh; ky++) {
        int whole = g->dw == 1 && g->kw > 1;
        for (i = 0; i < CONVF_MR && whole; i++) {
            int64_t iy = oy[i] * g->sh - g->pt + ky * g->dh, ix = ox[i] * g->sw - g->pl;
            whole = iy < 0 || iy >= g->h || (ix >= 0 && ix + g->kw <= g->wd);
        }
        if (whole) {
            for (i = 0; i < CONVF_MR; i++) {
                int64_t iy = oy[i] * g->sh - g->pt + ky * g->dh, ix = ox[i] * g->sw - g->pl;
                ap[runs * CONVF_MR + i] = iy < 0 || iy >= g->h ? g->zeros : g->x + ((b[i] * g->h + iy) * g->wd + ix) * g->c;
            }
            len[runs++] = g->kw * g->c;
            continue;
        }
        for (kx = 0; kx < g->kw; kx++) {
            for (i = 0; i < CONVF_MR; i++) {
                int64_t iy = oy[i] * g->sh - g->pt + ky * g->dh, ix = ox[i] * g->sw - g->pl + kx * g->dw;
                int inside = iy >= 0 && iy < g->h && ix >= 0 && ix < g->wd;
                ap[runs * CONVF_MR + i] = inside ? g->x + ((b[i] * g->h + iy) * g->wd + ix) * g->c : g->zeros;
            }
            len[runs++] = g->c;
        }
    }
    return runs;
}

/* where the tile of output pixels m0..m0+MR-1 reads its input in place (see CONVF_FOR_VALUES): the start
 * of its first pixel's first run, and *runs; NULL where it needs pointers.  In place: a 1x1 convolution
 * with stride 1, or a tile in one output row whose filter rows all lie inside the image for all its pixels
 * (without dilation along x, or a filter one column wide): run r of pixel i then starts at x0 + r * in_row
 * + i * in_step, KW * C values, which is how convf_pointers would have cut it.  Not: a tile past the
 * last pixel (whose rows past it re-read the last one), or one that meets the padding. */
static inline const float *convf_in_place(const convf_t *g, int64_t m0, int64_t *runs)
{
    int64_t plane, oy, ox, ix0, iy0;
    if (m0 + CONVF_MR > g->m)
        return NULL;
    *runs = g->kh;
    if (g->direct)
        return g->x + m0 * g->c;
    if (g->dw != 1 && g->kw != 1)
        return NULL;
    plane = g->oh * g->ow;
    oy = m0 % plane / g->ow;
    ox = m0 % g->ow;
    ix0 = ox * g->sw - g->pl;
    iy0 = oy * g->sh - g->pt;
    if (ox + CONVF_MR > g->ow || ix0 < 0 || ix0 + (CONVF_MR - 1) * g->sw + g->kw > g->wd || iy0 < 0
        || iy0 + (g->kh - 1) * g->dh >= g->h)
        return NULL;
    return g->x + ((m0 / plane * g->h + iy0) * g->wd + ix0) * g->c;
}

static __mmask16 convf_mask(int64_t cols)
{
    return cols >= 16 ? (__mmask16)0xffff : cols <= 0 ? (__mmask16)0 : (__mmask16)((1u << cols) - 1u);
}

CONVF_TARGET static inline __m512 convf_clamp(__m512 v, __m512 lo, __m512 hi)
{
    /* max / min return their second operand when either is NaN: NaN stays NaN, as with np.clip */
    return _mm512_min_ps(hi, _mm512_max_ps(lo, v));
}

/* a + b (or a * b) with a as the instruction's first source: where both are NaN, x86 returns the first
 * source's payload, and the compiler may swap the operands of _mm512_add_ps / _mm512_mul_ps (IEEE
 * addition and multiplication commute); pinned so that an ADD gives the same bits wherever it is done
 * (elementwise.c's binary_f32 uses these too) */
__attribute__((target("avx512f"))) static inline __m512 ordered_add(__m512 a, __m512 b)
{
    __m512 r;
    __asm__("vaddps %2, %1, %0" : "=v"(r) : "v"(a), "v"(b));
    return r;
}

__attribute__((target("avx512f"))) static inline __m512 ordered_mul(__m512 a, __m512 b)
{
    __m512 r;
    __asm__("vmulps %2, %1, %0" : "=v"(r) : "v"(a), "v"(b));
    return r;
}

/* the residual ADD after the convolution's clamp: clamp(v + r) or clamp(r + v), the operands in the ADD
 * node's order, then the ADD's clamp: elementwise.c's binary_f32 on the stored convolution output, value
 * for value */
CONVF_TARGET static inline __m512 convf_add(__m512 v, const float *r, __mmask16 m, int r_first, __m512 alo,
                                            __m512 ahi)
{
    __m512 x = _mm512_maskz_loadu_ps(m, r);
    return convf_clamp(r_first ? ordered_add(x, v) : ordered_add(v, x), alo, ahi);
}

#define CONVF_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6)
#define CONVF_PTR(i) const float *a##i = p[i];
#define CONVF_PTR_IN_PLACE(i) const float *a##i = r + i * step;
#define CONVF_PTR_DIRECT(i) const float *a##i = x0 + i * c;

/* a tile's loop over its runs of input values: the statements given, once a value j of a run, with a0 ...
 * a6 the run's start in each of the tile's pixels (t, j: the tile's locals).  x0 not NULL: the tile reads
 * its input in place (convf_in_place), run t of pixel i at x0 + t * in_row + i * in_step (a 1x1
 * convolution with stride 1 in a loop of its own: one run, the pixels C values apart); else through the
 * pointers convf_pointers made.  In place, a tile makes and reads no pointers, which had cost a 1x1 layer
 * with few input channels a tenth of its time (a tile and panel pair of 28x28x32 -> 64, the kernel alone
 * in a loop: 501 -> 472 cycles, 448 of them multiply-adds; 112x112x16 -> 96 0.42 -> 0.39 ms) and a first
 * layer (224x224x3 -> 112x112x32, stride 2) an eighth (0.26 -> 0.23 ms) */
#define CONVF_FOR_VALUES(...) \
    if (x0 != NULL && g->direct) { \
        const int64_t c = g->c; \
        CONVF_ROWS(CONVF_PTR_DIRECT) \
        for (j = 0; j < c; j++) { \
            __VA_ARGS__ \
        } \
    } else if (x0 != NULL) { \
        const int64_t c = g->in_len, step = g->in_step; \
        for (t = 0; t < runs; t++) { \
            const float *r = x0 + t * g->in_row; \
            CONVF_ROWS(CONVF_PTR_IN_PLACE) \
            for (j = 0; j < c; j++) { \
                __VA_ARGS__ \
            } \
        } \
    } else { \
        for (t = 0; t < runs; t++) { \
            const float *const *p = ap + t * CONVF_MR; \
            const int64_t c = len[t]; \
            CONVF_ROWS(CONVF_PTR) \
            for (j = 0; j < c; j++) { \
                __VA_ARGS__ \
            } \
        } \
    }

/* what a tile's epilogue needs of the call: the clamp, the residual ADD's clamp and operand order, each
 * panel's mask of the output channels there are (cols from the tile's first panel on) */
typedef struct {
    __m512 lo, hi, alo, ahi;
    __mmask16 m0, m1;
    int r_first;
} convf_ep_t;

CONVF_TARGET static inline __attribute__((always_inline)) convf_ep_t convf_ep(const convf_t *g, int64_t cols)
{
    convf_ep_t e;
    e.lo = _mm512_set1_ps(g->lo), e.hi = _mm512_set1_ps(g->hi);
    e.alo = _mm512_set1_ps(g->alo), e.ahi = _mm512_set1_ps(g->ahi);
    e.m0 = convf_mask(cols), e.m1 = convf_mask(cols - CONVF_NR);
    e.r_first = g->res_first;
    return e;
}

/* one output row of a tile's panel pair: clamp, the residual ADD (res: the row's residual, or NULL), and
 * the store, masked only where a panel has columns past the last channel */
CONVF_TARGET static inline __attribute__((always_inline)) void convf_store_pair(const convf_ep_t *e, __m512 a,
                                                                                   __m512 b, float *out,
                                                                                   const float *res)
{
    __m512 va = convf_clamp(a, e->lo, e->hi), vb = convf_clamp(b, e->lo, e->hi);
    if (res != NULL) {
        va = convf_add(va, res, e->m0, e->r_first, e->alo, e->ahi);
        vb = convf_add(vb, res + CONVF_NR, e->m1, e->r_first, e->alo, e->ahi);
    }
    if (e->m0 == 0xffff)
        _mm512_storeu_ps(out, va);
    else
        _mm512_mask_storeu_ps(out, e->m0, va);
    if (e->m1 == 0xffff)
        _mm512_storeu_ps(out + CONVF_NR, vb);
    else
        _mm512_mask_storeu_ps(out + CONVF_NR, e->m1, vb);
}

/* one output row of a tile's lone panel: convf_store_pair's steps for one register */
CONVF_TARGET static inline __attribute__((always_inline)) void convf_store_one(const convf_ep_t *e, __m512 a,
                                                                                  float *out, const float *res)
{
    __m512 v = convf_clamp(a, e->lo, e->hi);
    if (res != NULL)
        v = convf_add(v, res, e->m0, e->r_first, e->alo, e->ahi);
    if (e->m0 == 0xffff)
        _mm512_storeu_ps(out, v);
    else
        _mm512_mask_storeu_ps(out, e->m0, v);
}

/* MR x 32 outputs: the panel pair at w (rows of 32 weights) times the tile's runs of input values (in
 * place from x0, or through ap and len: see CONVF_FOR_VALUES); rows and cols say which of them to store */
CONVF_TARGET static void convf_tile32(const convf_t *g, const float *x0, int64_t runs, const float *const *ap,
                                      const int64_t *len, const float *w, const float *bias, float *out, const float *res,
                                      int rows, int64_t cols)
{
    const int64_t ldo = g->o;
    const float *w1 = w + CONVF_NR;
    const convf_ep_t e = convf_ep(g, cols);
    __m512 b0 = _mm512_loadu_ps(bias), b1 = _mm512_loadu_ps(bias + CONVF_NR);
    int64_t t, j;
#define CONVF_INIT2(i) __m512 acc##i##a = b0, acc##i##b = b1;
    CONVF_ROWS(CONVF_INIT2)
#define CONVF_FMA2(i) s = _mm512_set1_ps(a##i[j]); acc##i##a = _mm512_fmadd_ps(s, wa, acc##i##a); \
                      acc##i##b = _mm512_fmadd_ps(s, wb, acc##i##b);
    CONVF_FOR_VALUES(__m512 wa = _mm512_loadu_ps(w), wb = _mm512_loadu_ps(w1), s;
                     w += 2 * CONVF_NR;
                     w1 += 2 * CONVF_NR;
                     CONVF_ROWS(CONVF_FMA2))
#define CONVF_STORE2(i) if (i < rows) \
        convf_store_pair(&e, acc##i##a, acc##i##b, out + i * ldo, res != NULL ? res + i * ldo : NULL);
    CONVF_ROWS(CONVF_STORE2)
}

/* MR x 24 outputs: a last panel pair whose second panel has at most 8 channels (24 output channels, as in
 * MobileNet v2's 56x56 projections): the second panel's sums in 256-bit registers, from the first 8 of its
 * 16 weights a row.  A core that runs 512-bit multiply-adds as two 256-bit halves (AMD Zen 4) spends 1.5
 * units a row on 24 lanes where convf_tile32 spent 2 on 32, 8 of them past the last channel.  Each sum in
 * convf_tile32's order (the same bits); the epilogue is convf_tile32's (convf_store_pair), on the 512-bit
 * register whose low half holds the second panel's sums, its store masked to the channels there are. */
CONVF_TARGET static void convf_tile24(const convf_t *g, const float *x0, int64_t runs, const float *const *ap,
                                      const int64_t *len, const float *w, const float *bias, float *out, const float *res,
                                      int rows, int64_t cols)
{
    const int64_t ldo = g->o;
    const float *w1 = w + CONVF_NR;
    const convf_ep_t e = convf_ep(g, cols);
    __m512 b0 = _mm512_loadu_ps(bias);
    __m256 b1 = _mm256_loadu_ps(bias + CONVF_NR);
    int64_t t, j;
#define CONVF_INIT24(i) __m512 acc##i##a = b0; __m256 acc##i##b = b1;
    CONVF_ROWS(CONVF_INIT24)
#define CONVF_FMA24(i) s = _mm512_set1_ps(a##i[j]); acc##i##a = _mm512_fmadd_ps(s, wa, acc##i##a); \
                       acc##i##b = _mm256_fmadd_ps(_mm512_castps512_ps256(s), wb, acc##i##b);
    CONVF_FOR_VALUES(__m512 wa = _mm512_loadu_ps(w), s;
                     __m256 wb = _mm256_loadu_ps(w1);
                     w += 2 * CONVF_NR;
                     w1 += 2 * CONVF_NR;
                     CONVF_ROWS(CONVF_FMA24))
#define CONVF_STORE24(i) if (i < rows) \
        convf_store_pair(&e, acc##i##a, _mm512_castps256_ps512(acc##i##b), out + i * ldo, \
                         res != NULL ? res + i * ldo : NULL);
    CONVF_ROWS(CONVF_STORE24)
}

/* MR x 16 outputs: one panel (the last, when the channels leave a lone one) */
CONVF_TARGET static void convf_tile16(const convf_t *g, const float *x0, int64_t runs, const float *const *ap,
                                      const int64_t *len, const float *w, const float *bias, float *out, const float *res,
                                      int rows, int64_t cols)
{
    const int64_t ldo = g->o;
    const convf_ep_t e = convf_ep(g, cols);
    __m512 b0 = _mm512_loadu_ps(bias);
    int64_t t, j;
#define CONVF_INIT1(i) __m512 acc##i = b0;
    CONVF_ROWS(CONVF_INIT1)
#define CONVF_FMA1(i) s = _mm512_set1_ps(a##i[j]); acc##i = _mm512_fmadd_ps(s, wa, acc##i);
    CONVF_FOR_VALUES(__m512 wa = _mm512_loadu_ps(w), s;
                     w += CONVF_NR;
                     CONVF_ROWS(CONVF_FMA1))
#define CONVF_STORE1(i) if (i < rows) \
        convf_store_one(&e, acc##i, out + i * ldo, res != NULL ? res + i * ldo : NULL);
    CONVF_ROWS(CONVF_STORE1)
}

/* MR x 8 outputs: a lone last panel with at most 8 channels, its sums in 256-bit registers (convf_tile24's
 * reason: half the cost of a 512-bit multiply-add on a core that runs those as two halves); each sum in
 * convf_tile16's order (the same bits) */
CONVF_TARGET static void convf_tile8(const convf_t *g, const float *x0, int64_t runs, const float *const *ap,
                                     const int64_t *len, const float *w, const float *bias, float *out, const float *res,
                                     int rows, int64_t cols)
{
    const int64_t ldo = g->o;
    const convf_ep_t e = convf_ep(g, cols);
    __m256 b0 = _mm256_loadu_ps(bias);
    int64_t t, j;
#define CONVF_INIT8(i) __m256 acc##i = b0;
    CONVF_ROWS(CONVF_INIT8)
#define CONVF_FMA8(i) acc##i = _mm256_fmadd_ps(_mm256_set1_ps(a##i[j]), wa, acc##i);
    CONVF_FOR_VALUES(__m256 wa = _mm256_loadu_ps(w);
                     w += CONVF_NR;
                     CONVF_ROWS(CONVF_FMA8))
#define CONVF_STORE8(i) if (i < rows) \
        convf_store_one(&e, _mm512_castps256_ps512(acc##i), out + i * ldo, res != NULL ? res + i * ldo : NULL);
    CONVF_ROWS(CONVF_STORE8)
}

/* one output pixel (a tile of one row: a classifier's 1x1 convolution after a global pool) times `pairs`
 * panel pairs (1 to 4) at once: up to eight independent sums a k, where convf_tile32 would spend MR - 1 of
 * its multiply-adds on copies of the pixel and, for that one row, wait on each sum's latency.  Each sum in
 * convf_tile32's order (the same bits).  w, bias, out, res: at the first pair's first panel; cols: the
 * output channels from there on.  Sums past `pairs` read the first pair's weights again and are not stored. */
CONVF_TARGET static void convf_row4(const convf_t *g, int64_t runs, const float *const *ap, const int64_t *len,
                                    const float *w, const float *bias, float *out, const float *res, int pairs,
                                    int64_t cols)
{
    const int64_t step = 2 * CONVF_NR * g->k;      /* floats from one pair's weights to the next's */
    const int64_t o1 = pairs > 1 ? step : 0, o2 = pairs > 2 ? 2 * step : 0, o3 = pairs > 3 ? 3 * step : 0;
    const int64_t b1 = pairs > 1 ? 32 : 0, b2 = pairs > 2 ? 64 : 0, b3 = pairs > 3 ? 96 : 0;
    const int r_first = g->res_first;
    __m512 lo = _mm512_set1_ps(g->lo), hi = _mm512_set1_ps(g->hi), alo = _mm512_set1_ps(g->alo);
    __m512 ahi = _mm512_set1_ps(g->ahi);
    __m512 acc[8];
    int64_t t, j;
    int p;
    acc[0] = _mm512_loadu_ps(bias), acc[1] = _mm512_loadu_ps(bias + 16);
    acc[2] = _mm512_loadu_ps(bias + b1), acc[3] = _mm512_loadu_ps(bias + b1 + 16);
    acc[4] = _mm512_loadu_ps(bias + b2), acc[5] = _mm512_loadu_ps(bias + b2 + 16);
    acc[6] = _mm512_loadu_ps(bias + b3), acc[7] = _mm512_loadu_ps(bias + b3 + 16);
    for (t = 0; t < runs; t++) {
        const float *a = ap[t * CONVF_MR];
        const int64_t c = len[t];
        for (j = 0; j < c; j++) {
            const __m512 s = _mm512_set1_ps(a[j]);
            acc[0] = _mm512_fmadd_ps(s, _mm512_loadu_ps(w), acc[0]);
            acc[1] = _mm512_fmadd_ps(s, _mm512_loadu_ps(w + 16), acc[1]);
            acc[2] = _mm512_fmadd_ps(s, _mm512_loadu_ps(w + o1), acc[2]);
            acc[3] = _mm512_fmadd_ps(s, _mm512_loadu_ps(w + o1 + 16), acc[3]);
            acc[4] = _mm512_fmadd_ps(s, _mm512_loadu_ps(w + o2), acc[4]);
            acc[5] = _mm512_fmadd_ps(s, _mm512_loadu_ps(w + o2 + 16), acc[5]);
            acc[6] = _mm512_fmadd_ps(s, _mm512_loadu_ps(w + o3), acc[6]);
            acc[7] = _mm512_fmadd_ps(s, _mm512_loadu_ps(w + o3 + 16), acc[7]);
            w += 2 * CONVF_NR;
        }
    }
    for (p = 0; p < 2 * pairs; p++) {
        const int64_t at = p * CONVF_NR;
        const __mmask16 m = convf_mask(cols - at);
        __m512 v = convf_clamp(acc[p], lo, hi);
        if (res != NULL)
            v = convf_add(v, res + at, m, r_first, alo, ahi);
        if (cols - at >= CONVF_NR)
            _mm512_storeu_ps(out + at, v);
        else
            _mm512_mask_storeu_ps(out + at, m, v);
    }
}

/* 1 when a value of p[0..count) is not below limit in magnitude, or is NaN */
CONVF_TARGET static int convf_bad(const float *p, int64_t count, float limit)
{
    __m512 lim = _mm512_set1_ps(limit);
    __mmask16 bad = 0;
    int64_t j;
    for (j = 0; j + 16 <= count; j += 16)
        bad |= _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(p + j)), lim, _CMP_NLT_UQ);
    if (j < count) {
        __mmask16 tail = convf_mask(count - j);
        bad |= _mm512_mask_cmp_ps_mask(tail, _mm512_abs_ps(_mm512_maskz_loadu_ps(tail, p + j)), lim, _CMP_NLT_UQ);
    }
    return bad != 0;
}

static void convf_part(void *ctx, int part, int thread)
{
    convf_t *g = (convf_t *)ctx;
    int64_t rp = g->panel_major ? part % g->tile_parts : part / g->panel_parts;
    int64_t pp = g->panel_major ? part / g->tile_parts : part % g->panel_parts;
    int64_t t0 = taper_edge(rp, g->tile_parts, g->tiles, TAPER_MIN_ITEMS);
    int64_t t1 = taper_edge(rp + 1, g->tile_parts, g->tiles, TAPER_MIN_ITEMS);
    int64_t q0 = pp * g->panels_per_part, q1 = q0 + g->panels_per_part;
    const float *stack[CONVF_STACK_TAPS * CONVF_MR];
    const float **ap = stack;
    int64_t stack_len[CONVF_STACK_TAPS], *len = stack_len, c0, t, q;
    (void)thread;
    if (t1 > g->tiles)
        t1 = g->tiles;
    if (q1 > g->panels)
        q1 = g->panels;
    if (pp == 0 && !(g->limit < 0)) {   /* the guard: this row piece's share of the input, once */
        int64_t v0 = g->values * rp / g->tile_parts, v1 = g->values * (rp + 1) / g->tile_parts;
        if (convf_bad(g->x + v0, v1 - v0, g->limit))
            atomic_store_explicit(&g->bad, 1, memory_order_relaxed);
    }
    if (g->taps > CONVF_STACK_TAPS) {
        ap = (const float **)malloc((size_t)(g->taps * CONVF_MR) * sizeof(*ap));
        len = (int64_t *)malloc((size_t)g->taps * sizeof(*len));
        if (ap == NULL || len == NULL) {
            free(ap);
            free(len);
            atomic_store_explicit(&g->failed, 1, memory_order_relaxed);
            return;
        }
    }
    for (c0 = t0; c0 < t1; c0 += g->chunk_tiles) {
        int64_t c1 = c0 + g->chunk_tiles < t1 ? c0 + g->chunk_tiles : t1;
        /* a chunk of one tile (weights that stay in L1) meets every panel: its pointers once, where it
         * needs them */
        int64_t runs = 0;
        const float *x0 = NULL;
        if (c1 - c0 == 1 && (x0 = convf_in_place(g, c0 * CONVF_MR, &runs)) == NULL)
            runs = convf_pointers(g, c0 * CONVF_MR, ap, len);
        for (q = q0; q < q1;) {
            int64_t cols = g->o - q * CONVF_NR;
            int pair = cols > CONVF_NR && q + 1 < q1;
            const float *w = g->w + q * g->k * CONVF_NR, *bias = g->bias + q * CONVF_NR;
            if (pair && c1 - c0 == 1 && g->m - c0 * CONVF_MR == 1) {    /* one pixel: up to four pairs at once */
                int64_t pairs = (q1 - q) / 2;   /* q is even: whole pairs of the packing up to q1 */
                int n = pairs < 4 ? (int)pairs : 4;
                convf_row4(g, runs, ap, len, w, bias, g->out + c0 * CONVF_MR * g->o + q * CONVF_NR,
                           g->res != NULL ? g->res + c0 * CONVF_MR * g->o + q * CONVF_NR : NULL, n, cols);
                q += 2 * n;
                continue;
            }
            for (t = c0; t < c1; t++) {
                int64_t m0 = t * CONVF_MR;
                int rows = (int)(g->m - m0 < CONVF_MR ? g->m - m0 : CONVF_MR);
                float *out = g->out + m0 * g->o + q * CONVF_NR;
                const float *res = g->res != NULL ? g->res + m0 * g->o + q * CONVF_NR : NULL;
                if (c1 - c0 > 1 && (x0 = convf_in_place(g, m0, &runs)) == NULL)
                    runs = convf_pointers(g, m0, ap, len);
                if (pair && cols <= CONVF_NR + CONVF_NR / 2)
                    convf_tile24(g, x0, runs, ap, len, w, bias, out, res, rows, cols);
                else if (pair)
                    convf_tile32(g, x0, runs, ap, len, w, bias, out, res, rows, cols);
                else if (cols <= CONVF_NR / 2)
                    convf_tile8(g, x0, runs, ap, len, w, bias, out, res, rows, cols);
                else
                    convf_tile16(g, x0, runs, ap, len, w, bias, out, res, rows, cols);
            }
            q += pair ? 2 : 1;
        }
    }
    if (ap != stack) {
        free(ap);
        free(len);
    }
}

static int convf_cpu_ok(void)
{
    static int known = -1;
    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
    }
    return known;
}

#else

static void convf_part(void *ctx, int part, int thread)
{
    (void)ctx;
    (void)part;
    (void)thread;
}

static int convf_bad(const float *p, int64_t count, float limit)
{
    (void)p;
    (void)count;
    (void)limit;
    return 0;
}

static int convf_cpu_ok(void)
{
    return 0;
}

#endif

/* o as a C-contiguous, aligned, native-order array of ndim dimensions and numpy type `type` (writable
 * when asked), or NULL (the library's own C functions then answer -1: not taken) */
static PyArrayObject *native_array(PyObject *o, int ndim, int type, int writable)
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

typedef struct { int ndim, type, writable; } native_arg_t;

/* a C function's arguments (threads, array, array, ...): the thread count, and each array as `spec`
 * says (NULL where one does not fit).  1: every array fits; 0: one does not; -1: a Python error is set
 * (another number of arguments than n + 1, or a thread count that is not an integer) */
static int native_args(PyObject *const *args, Py_ssize_t nargs, const char *usage, const native_arg_t *spec, int n,
                       long *threads, PyArrayObject **arrays)
{
    int k, ok = 1;
    if (nargs != n + 1) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -1;
    }
    *threads = PyLong_AsLong(args[0]);
    if (*threads == -1 && PyErr_Occurred())
        return -1;
    for (k = 0; k < n; k++) {
        arrays[k] = native_array(args[k + 1], spec[k].ndim, spec[k].type, spec[k].writable);
        ok &= arrays[k] != NULL;
    }
    return ok;
}

static PyArrayObject *convf_array(PyObject *o, int ndim, int writable)
{
    return native_array(o, ndim, NPY_FLOAT32, writable);
}

static int convf_overlap(PyArrayObject *a, PyArrayObject *b)
{
    const char *pa = (const char *)PyArray_DATA(a), *pb = (const char *)PyArray_DATA(b);
    return pa < pb + PyArray_NBYTES(b) && pb < pa + PyArray_NBYTES(a);
}

/* conv_f32(threads, x, packed, bias, zeros, out, geometry, clamp[, residual, add]): out = clamp(conv(x) +
 * bias) on the pool.  zeros: at least KW*C zeros (what a run in the padding reads); geometry: int64 [kh,
 * kw, stride h, stride w, dilation h, dilation w, pad top, pad left]; clamp: float32 [lo, hi, guard limit
 * (negative: no guard)].  With residual (float32 of out's shape) and add (float32 [lo, hi, 1 when the
 * residual is the first operand]): a float ADD of the convolution's output and the residual in the same
 * pass, out = ADD's clamp(clamp(conv(x) + bias) + residual), where the convolution's output would not be
 * read by anything else (workbench/interpreter/fused.py); the residual may be out itself, not a part of
 * it.  0: done; 1: done, but an input value reached the guard's limit (the caller recomputes with the
 * reference sums); -1: not taken (no AVX-512 on this CPU, or arrays that do not fit), out untouched.
 * convf_setup checks the arguments and chooses the cut into g (1: ready; 0: nothing to compute; -1: not
 * taken; -2: a Python error set), convf_exec runs it: a prepared run (shim_tail.c) keeps g from one call
 * to the next. */
static int convf_setup(PyObject *const *args, Py_ssize_t nargs, convf_t *gp)
{
    PyArrayObject *x, *w, *bias, *zeros, *out, *geom, *clamp, *res = NULL, *add = NULL;
    const int64_t *gi;
    const float *cf;
    convf_t g;
    long threads;
    int d;
    if (nargs != 8 && nargs != 10) {
        PyErr_SetString(PyExc_TypeError, "conv_f32(threads, x, packed, bias, zeros, out, geometry, clamp[, residual, add])");
        return -2;
    }
    threads = PyLong_AsLong(args[0]);
    if (threads == -1 && PyErr_Occurred())
        return -2;
    x = convf_array(args[1], 4, 0);
    w = convf_array(args[2], 1, 0);
    bias = convf_array(args[3], 1, 0);
    zeros = convf_array(args[4], 1, 0);
    out = convf_array(args[5], 4, 1);
    geom = PyArray_Check(args[6]) ? (PyArrayObject *)args[6] : NULL;
    clamp = convf_array(args[7], 1, 0);
    if (!convf_cpu_ok() || x == NULL || w == NULL || bias == NULL || zeros == NULL || out == NULL || clamp == NULL
        || geom == NULL || PyArray_TYPE(geom) != NPY_INT64 || PyArray_NDIM(geom) != 1 || PyArray_DIM(geom, 0) != 8
        || !PyArray_IS_C_CONTIGUOUS(geom) || !PyArray_ISALIGNED(geom) || !PyArray_ISNOTSWAPPED(geom)
        || PyArray_DIM(clamp, 0) != 3)
        return -1;
    if (nargs == 10) {
        res = convf_array(args[8], 4, 0);
        add = convf_array(args[9], 1, 0);
        if (res == NULL || add == NULL || PyArray_DIM(add, 0) != 3)
            return -1;
        for (d = 0; d < 4; d++)
            if (PyArray_DIM(res, d) != PyArray_DIM(out, d))
                return -1;
        /* out is the ADD's output now, which the memory plan may put where the convolution's input was
         * (the input's life ends at the convolution): it must lie apart from the input, and the residual
         * read where out is written must be out itself or apart from it */
        if (convf_overlap(x, out) || (PyArray_DATA(res) != PyArray_DATA(out) && convf_overlap(res, out)))
            return -1;
    }
    gi = (const int64_t *)PyArray_DATA(geom);
    cf = (const float *)PyArray_DATA(clamp);
    memset(&g, 0, sizeof g);
    g.kh = gi[0]; g.kw = gi[1]; g.sh = gi[2]; g.sw = gi[3]; g.dh = gi[4]; g.dw = gi[5]; g.pt = gi[6]; g.pl = gi[7];
    g.h = PyArray_DIM(x, 1); g.wd = PyArray_DIM(x, 2); g.c = PyArray_DIM(x, 3);
    g.oh = PyArray_DIM(out, 1); g.ow = PyArray_DIM(out, 2); g.o = PyArray_DIM(out, 3);
    g.taps = g.kh * g.kw;
    g.k = g.taps * g.c;
    g.m = PyArray_DIM(out, 0) * g.oh * g.ow;
    g.panels = (g.o + CONVF_NR - 1) / CONVF_NR;
    g.values = PyArray_SIZE(x);
    if (PyArray_DIM(out, 0) != PyArray_DIM(x, 0) || g.kh < 1 || g.kw < 1 || g.sh < 1 || g.sw < 1 || g.dh < 1
        || g.dw < 1 || g.pt < 0 || g.pl < 0 || g.c < 1 || g.o < 1 || PyArray_DIM(w, 0) != g.panels * g.k * CONVF_NR
        || PyArray_DIM(bias, 0) < g.panels * CONVF_NR || PyArray_DIM(zeros, 0) < g.kw * g.c)
        return -1;
    if (g.m == 0)
        return 0;
    g.x = (const float *)PyArray_DATA(x);
    g.w = (const float *)PyArray_DATA(w);
    g.bias = (const float *)PyArray_DATA(bias);
    g.zeros = (const float *)PyArray_DATA(zeros);
    g.out = (float *)PyArray_DATA(out);
    g.lo = cf[0]; g.hi = cf[1]; g.limit = cf[2];
    if (res != NULL) {
        const float *af = (const float *)PyArray_DATA(add);
        g.res = (const float *)PyArray_DATA(res);
        g.alo = af[0]; g.ahi = af[1]; g.res_first = af[2] != 0.0f;
    }
    g.direct = g.taps == 1 && g.sh == 1 && g.sw == 1 && g.pt == 0 && g.pl == 0 && g.oh == g.h && g.ow == g.wd;
    g.in_len = g.kw * g.c;
    g.in_step = g.sw * g.c;
    g.in_row = g.dh * g.wd * g.c;
    g.tiles = (g.m + CONVF_MR - 1) / CONVF_MR;
    /* weights that stay in L1 as a whole: every tile meets all the panels at once (its input stays
     * in L1, its output row is written in one go); else chunks of tiles whose input stays in L2 */
    if (g.panels * g.k * CONVF_NR * (int64_t)sizeof(float) <= CONVF_L1_WEIGHTS)
        g.chunk_tiles = 1;
    else
        g.chunk_tiles = CONVF_L2_CHUNK / (CONVF_MR * g.k * (int64_t)sizeof(float));
    if (g.chunk_tiles < 1)
        g.chunk_tiles = 1;
    if (threads < 1)            /* the caller passes 1 for a convolution too small to share */
        threads = 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    g.tile_parts = 1;
    g.panel_parts = 1;
    g.panel_major = 0;
    if (threads > 1) {
        int64_t pairs = (g.panels + 1) / 2;
        int64_t most = CONVF_PARTS_PER_THREAD * threads;
        /* cut the bigger operand: with more output channels than pixels (14x14 and 7x7 layers) the
         * weights, which then come from memory, not cache, once per node: each thread reads its
         * share of them; else the pixels.  But weights beyond CONVF_SHARED_WEIGHTS with tiles enough
         * for CONVF_PIXEL_CUT_TILES a thread: the pixels (see there) */
        int64_t wbytes = g.panels * g.k * CONVF_NR * (int64_t)sizeof(float);
        int pixels_anyway = wbytes > CONVF_SHARED_WEIGHTS && g.tiles >= CONVF_PIXEL_CUT_TILES * threads;
        if (pairs >= threads && ((g.o > g.m && !pixels_anyway) || g.tiles < 2 * threads)) {
            g.panel_parts = pairs < most ? pairs : most;
            /* and each panel group in CONVF_PANEL_SLICES slices of tiles, where the two ends meet the last
             * pieces are small.  Weights of more than CONVF_SHARED_WEIGHTS: numbered group by group, so
             * that each thread reads mostly its own share of them.  Fewer: numbered slice by slice, so
             * that each thread writes mostly the first or the last pixels of the output, all their
             * channels, as the pixel-cut layers around it do (a MobileNet v2 14x14 expansion's output
             * is then read by the depthwise layer after it in the same core's cache) */
            g.tile_parts = g.tiles < CONVF_PANEL_SLICES ? g.tiles : CONVF_PANEL_SLICES;
            g.panel_major = wbytes > CONVF_SHARED_WEIGHTS;
        } else {
            g.tile_parts = g.tiles < most ? g.tiles : most;
        }
    }
    g.tiles_per_part = (g.tiles + g.tile_parts - 1) / g.tile_parts;
    g.tile_parts = (g.tiles + g.tiles_per_part - 1) / g.tiles_per_part;
    g.panels_per_part = (g.panels + g.panel_parts - 1) / g.panel_parts;
    g.panels_per_part += g.panels_per_part % 2;      /* whole pairs, so that a piece never splits one */
    g.panel_parts = (g.panels + g.panels_per_part - 1) / g.panels_per_part;
    g.parts = (int)(g.tile_parts * g.panel_parts);
    g.threads = (int)threads;
    *gp = g;
    return 1;
}

/* run what convf_setup made ready, the GIL let go: 0 done; 1 done, but the guard was raised; NATIVE_NOMEM */
static int convf_exec(void *state)
{
    convf_t *g = (convf_t *)state;
    atomic_store(&g->bad, 0);
    atomic_store(&g->failed, 0);
    native_pieces(convf_part, g, g->parts, g->threads);
    return atomic_load(&g->failed) ? NATIVE_NOMEM : atomic_load(&g->bad) ? 1 : 0;
}

NATIVE_FUNCTION(kernel_conv_f32, convf_t, convf_setup, convf_exec)


/* ------------------------------------------------------------------------------------------
 * A float fully connected layer with few rows (a network's classifier: one row of 1024-1280 values
 * against 1000-odd output units): out[m, n] = clamp(x[m] . w[n] + bias[n]), w in the model's own
 * [units, depth] order, unpacked.  Each output unit is one dot product: w's row n read once, from the
 * first value to the last, 64 values a step into four sums of 16 lanes (fused multiply-adds; values
 * past the last multiple of 64 into the first sum, 16 a step), which then add up as (s0 + s1) + (s2 + s3)
 * and across the 16 lanes (fcdot_lanes); then + bias and the clamp.  Rows of x past the first
 * meet w's row n again while it is in L1.
 *
 * Why not the BLAS product: the weights (4-5 MB) come from memory at every invoke, and what costs is
 * reading them.  Read one row after the other they are one sequential stream, which the hardware
 * prefetcher follows best: 1001 x 1280 weights evicted from the caches took ~210 us here against
 * ~330 us for numpy's gemv (OpenBLAS, one thread), ~240 us packed in panels of 16 as XNNPACK packs
 * them, ~280-300 us read eight rows at a time.  Every output's value depends on its own row only, so
 * the threads (pieces of units) never change a bit. */
#define FCDOT_PARTS_PER_THREAD 4

typedef struct {
    const float *x, *w, *bias;
    float *out;
    int64_t m, k, n, per_part;
    float lo, hi, limit;
    int threads, parts;             /* the pool's threads and pieces for this call */
} fcdot_t;

#if CONVF_X86
/* the sum of the 16 lanes, halves first: lane i + lane i + 8 (i < 8), then i + i + 4 (i < 4), i + i + 2,
 * lane 0 + lane 1 (an order of our own, written out so that it is the same with any compiler) */
CONVF_TARGET static inline float fcdot_lanes(__m512 v)
{
    v = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, 0x4E));
    v = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, 0xB1));
    v = _mm512_add_ps(v, _mm512_permute_ps(v, 0x4E));
    v = _mm512_add_ps(v, _mm512_permute_ps(v, 0xB1));
    return _mm512_cvtss_f32(v);
}

CONVF_TARGET static void fcdot_part(void *ctx, int part, int thread)
{
    const fcdot_t *g = (const fcdot_t *)ctx;
    const int64_t k = g->k, k64 = k / 64 * 64;
    int64_t n0 = part * g->per_part, n1 = n0 + g->per_part, n, r, j;
    (void)thread;
    if (n1 > g->n)
        n1 = g->n;
    for (n = n0; n < n1; n++) {
        const float *wr = g->w + n * k;
        for (r = 0; r < g->m; r++) {
            const float *xr = g->x + r * k;
            __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
            float v;
            for (j = 0; j < k64; j += 64) {
                s0 = _mm512_fmadd_ps(_mm512_loadu_ps(wr + j), _mm512_loadu_ps(xr + j), s0);
                s1 = _mm512_fmadd_ps(_mm512_loadu_ps(wr + j + 16), _mm512_loadu_ps(xr + j + 16), s1);
                s2 = _mm512_fmadd_ps(_mm512_loadu_ps(wr + j + 32), _mm512_loadu_ps(xr + j + 32), s2);
                s3 = _mm512_fmadd_ps(_mm512_loadu_ps(wr + j + 48), _mm512_loadu_ps(xr + j + 48), s3);
            }
            for (; j < k; j += 16) {
                __mmask16 mk = convf_mask(k - j);
                s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mk, wr + j), _mm512_maskz_loadu_ps(mk, xr + j), s0);
            }
            v = fcdot_lanes(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
            v += g->bias != NULL ? g->bias[n] : 0.0f;
            /* NaN stays NaN (both comparisons false), as in gemm_epilogue */
            if (v < g->lo)
                v = g->lo;
            else if (v > g->hi)
                v = g->hi;
            g->out[r * g->n + n] = v;
        }
    }
}
#else
static void fcdot_part(void *ctx, int part, int thread)
{
    (void)ctx;
    (void)part;
    (void)thread;
}
#endif

/* fc_dot_f32(threads, x, w, bias, out, lo, hi, limit): out = clamp(x @ w.T + bias, lo, hi) (see above); x
 * float32 [M, K], w [N, K], bias [N] or None (zeros), out [M, N], all C-contiguous, out apart from the
 * others.  The guard, as conv_f32's: an input value not below limit in magnitude (or NaN) answers 1 and
 * leaves out alone (the caller then takes the BLAS product, the teaching layer's sums).  0 done, -1 not
 * taken (no AVX-512, arrays that do not fit). */
/* fc_dot_f32's setup / exec (as convf_setup / convf_exec; the guard on x is the exec's, at every call) */
static int fcdot_setup(PyObject *const *args, Py_ssize_t nargs, fcdot_t *gp)
{
    static const native_arg_t spec[] = {{2, NPY_FLOAT32, 0}, {2, NPY_FLOAT32, 0}, {2, NPY_FLOAT32, 1}};
    PyArrayObject *a[3], *bias = NULL;
    PyObject *call[4];
    fcdot_t g;
    long threads;
    double lo, hi, limit;
    int parts, ok;
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "fc_dot_f32(threads, x, w, bias, out, lo, hi, limit)");
        return -2;
    }
    lo = PyFloat_AsDouble(args[5]);
    hi = PyFloat_AsDouble(args[6]);
    limit = PyFloat_AsDouble(args[7]);
    if (PyErr_Occurred())
        return -2;
    call[0] = args[0], call[1] = args[1], call[2] = args[2], call[3] = args[4];
    ok = native_args(call, 4, "fc_dot_f32(threads, x, w, bias, out, lo, hi, limit)", spec, 3, &threads, a);
    if (ok < 0)
        return -2;
    if (args[3] != Py_None) {
        bias = convf_array(args[3], 1, 0);
        ok &= bias != NULL;
    }
    if (!ok || !convf_cpu_ok())
        return -1;
    memset(&g, 0, sizeof g);
    g.m = PyArray_DIM(a[0], 0);
    g.k = PyArray_DIM(a[0], 1);
    g.n = PyArray_DIM(a[1], 0);
    if (PyArray_DIM(a[1], 1) != g.k || PyArray_DIM(a[2], 0) != g.m || PyArray_DIM(a[2], 1) != g.n
        || (bias != NULL && PyArray_DIM(bias, 0) != g.n) || convf_overlap(a[2], a[0]) || convf_overlap(a[2], a[1])
        || (bias != NULL && convf_overlap(a[2], bias)))
        return -1;
    if (g.m == 0 || g.n == 0)
        return 0;
    g.x = (const float *)PyArray_DATA(a[0]);
    g.w = (const float *)PyArray_DATA(a[1]);
    g.out = (float *)PyArray_DATA(a[2]);
    g.bias = bias != NULL ? (const float *)PyArray_DATA(bias) : NULL;
    g.lo = (float)lo;
    g.hi = (float)hi;
    g.limit = (float)limit;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    parts = (int)(threads > 1 ? FCDOT_PARTS_PER_THREAD * threads : 1);
    if (parts > g.n)
        parts = (int)g.n;
    g.per_part = (g.n + parts - 1) / parts;
    g.parts = (int)((g.n + g.per_part - 1) / g.per_part);
    g.threads = (int)threads;
    *gp = g;
    return 1;
}

/* 0 done; 1 an input value reached the guard's limit (nothing written: the caller sums another way) */
static int fcdot_exec(void *state)
{
    fcdot_t *g = (fcdot_t *)state;
    if (convf_bad(g->x, g->m * g->k, g->limit))
        return 1;
    native_pieces(fcdot_part, g, g->parts, g->threads);
    return 0;
}

NATIVE_FUNCTION(kernel_fc_dot_f32, fcdot_t, fcdot_setup, fcdot_exec)
