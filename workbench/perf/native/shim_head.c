/* The precompiled kernel library as a Python extension module, first part: argument checks and
 * slot filling.  workbench/perf/build.py (SHIM) writes the table of entries after it, then shim_tail.c. */
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
 * microseconds on a virtual machine, and a node takes about a millisecond.
 *
 * Two kinds of job:
 *  - independent parts (kernel rows, "claim"): every thread, the caller included, takes the next
 *    part not yet taken until none is left (the caller from the front, the workers from the back).
 *    The caller waits only for the parts that were taken, never for a worker to show up: when the
 *    other cores are busy and a worker is not scheduled in time, the caller simply runs every part
 *    itself, so two threads are never much slower than one.  The job's number, its part count and
 *    the parts taken from each end share one atomic word, so a worker that wakes late can only take
 *    a part of a job that still has one free.  There is no stretch of jobs the caller runs alone after
 *    the workers missed some: such a stretch (64 jobs after 3 missed) turned a millisecond in which
 *    another process held one core into an invoke or two on one thread (MobileNet v1 int8 on two
 *    threads with another process busy 1 ms in 5 on one core: 3.75 ms a median invoke with it, 2.57
 *    without; XNNPACK's pthreadpool 2.7), and saved nothing where the other core stayed busy.
 *  - OpenBLAS's jobs, which wait for each other: job p must run on its own thread p (thread 0 is
 *    the caller), and the caller waits for every worker. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#else
#define CPU_RELAX() atomic_signal_fence(memory_order_seq_cst)
#endif

#define MAX_THREADS 64
#define MAX_PARTS 0xffffff
#define SPIN_ROUNDS 4000
#define YIELD_EVERY 256            /* a spinning worker lets another thread of its core run this often */

typedef void (*part_fn)(void *ctx, int part, int thread);

/* An independent-parts job's parts are dealt in equal blocks, one a thread, each block's range of parts in
 * a claim word of its own cache line: first part (24 bits) | one past the last (24).  The caller's block
 * is the first and it takes its parts from the front, worker t's the t-th from the back and it takes them
 * from the back; a thread whose block is empty takes from another's block at the other end.  So
 * consecutive jobs cut the same way (rows of one image, node after node) give each thread mostly the rows
 * it wrote in the job before, still in its core's cache (measured: a 14x14x576 depthwise layer took
 * 0.12 ms on one thread, 0.055 ms on two run alone, but 0.10 ms inside the network, where half its input
 * sat in the other core's cache), and a thread's claims stay in its own cache until the blocks meet (one
 * word for all made each claim move a cache line between the cores: the pool's claims took 1.1 % of
 * MobileNet v2's two-thread samples).  A word with a free part always belongs to the current job: a job
 * ends only when every part was taken. */
#define CLAIM(lo, hi) (((uint64_t)(lo) << 24) | (uint64_t)(hi))
#define CLAIM_LO(w) ((int)(((w) >> 24) & 0xffffff))
#define CLAIM_HI(w) ((int)((w) & 0xffffff))

typedef struct {
    _Alignas(64) _Atomic uint64_t range;   /* CLAIM(first, end) */
} claim_t;

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
    /* the words the threads write during a job each on a cache line of its own, away from what they only
     * read (fn, ctx: a write to their line would make every thread miss on them at its next part) */
    _Alignas(64) atomic_long generation;   /* 2 * (jobs posted) + 1 when the last one is independent parts */
    claim_t claims[MAX_THREADS];   /* the last independent-parts job's blocks, by thread (see claim_t) */
    _Alignas(64) atomic_int finished_parts;  /* its parts run to the end */
    int job_parts;                 /* how many it has (set before its blocks) */
    _Alignas(64) atomic_int done;          /* workers finished with the current OpenBLAS job */
    _Alignas(64) part_fn fn;
    void *ctx;
    int parts, width;              /* parts of an OpenBLAS job, threads sharing it (caller included) */
    long stat_jobs, stat_alone;    /* independent-parts jobs: posted, run by the caller alone */
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0,
           PTHREAD_MUTEX_INITIALIZER};

/* one free part of thread `owner`'s block, from its front or its back: 1 and *part, or 0 (none left) */
static int take_part(int owner, int from_front, int *part)
{
    _Atomic uint64_t *r = &pool.claims[owner].range;
    uint64_t w = atomic_load_explicit(r, memory_order_acquire);
    while (CLAIM_LO(w) < CLAIM_HI(w)) {
        if (atomic_compare_exchange_weak_explicit(r, &w, from_front ? w + ((uint64_t)1 << 24) : w - 1,
                                                  memory_order_acq_rel, memory_order_acquire)) {
            *part = from_front ? CLAIM_LO(w) : CLAIM_HI(w) - 1;
            return 1;
        }
    }
    return 0;
}

/* take and run free parts of the current independent-parts job until none is left, its own block's first,
 * then the others' from their far ends; how many it ran.  The parts it ran are counted as done once, at the
 * end (the job cannot finish before, so every part it takes is of one job): one atomic add a thread and a
 * job on the line the caller watches, not one a part (measured: 80 % of this function's samples were that
 * add while the caller spun on the same line). */
static int claim_parts(int thread)
{
    int ran = 0, part, o;
    for (;;) {
        int got = take_part(thread, thread == 0, &part);
        for (o = 0; !got && o <= pool.started; o++)
            if (o != thread)
                got = take_part(o, o != 0, &part);
        if (!got)
            break;
        /* the part is ours: the job cannot finish (nor its fn / ctx change) before we are done */
        pool.fn(pool.ctx, part, thread);
        ran++;
    }
    if (ran && atomic_fetch_add_explicit(&pool.finished_parts, ran, memory_order_acq_rel) + ran == pool.job_parts) {
        pthread_mutex_lock(&pool.lock);
        if (pool.caller_waits)
            pthread_cond_signal(&pool.finished);
        pthread_mutex_unlock(&pool.lock);
    }
    return ran;
}

static void *worker(void *arg)
{
    int thread = (int)(intptr_t)arg;
    long seen = pool.first_seen;   /* not the current generation: the job it was made for may be posted */
    for (;;) {
        long now;
        int k;
        for (k = 0; k < SPIN_ROUNDS && (now = atomic_load_explicit(&pool.generation, memory_order_acquire)) == seen; k++) {
            CPU_RELAX();
            if (k % YIELD_EVERY == YIELD_EVERY - 1)
                sched_yield();     /* if it shares a core with the caller, the caller goes first */
        }
        if (now == seen) {
            pthread_mutex_lock(&pool.lock);
            pool.sleepers++;
            while ((now = atomic_load(&pool.generation)) == seen)
                pthread_cond_wait(&pool.wake, &pool.lock);
            pool.sleepers--;
            pthread_mutex_unlock(&pool.lock);
        }
        seen = now;
        if (now & 1) {             /* independent parts: whatever is still free, if anything */
            (void)claim_parts(thread);
            continue;
        }
        /* an OpenBLAS job: its caller waits for every worker, so its fields stay put until then */
        if (thread < pool.width) {
            int p;
            for (p = thread; p < pool.parts; p += pool.width)
                pool.fn(pool.ctx, p, thread);
        }
        atomic_fetch_add_explicit(&pool.done, 1, memory_order_release);
        pthread_mutex_lock(&pool.lock);
        if (pool.caller_waits)
            pthread_cond_signal(&pool.finished);
        pthread_mutex_unlock(&pool.lock);
    }
    return NULL;
}

/* start workers up to threads - 1 (fewer if the system refuses); the threads that can share a job */
static int start_workers(int threads)
{
    pool.first_seen = atomic_load(&pool.generation);
    while (pool.started < threads - 1) {
        if (pthread_create(&pool.threads[pool.started], NULL, worker, (void *)(intptr_t)(pool.started + 1)) != 0)
            break;
        pool.started++;
    }
    return threads > pool.started + 1 ? pool.started + 1 : threads;
}

static void post(long generation)
{
    pthread_mutex_lock(&pool.lock);
    atomic_store_explicit(&pool.generation, generation, memory_order_release);
    if (pool.sleepers)
        pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);
}

/* The first of n items in piece i of `parts` that the pool shares (the caller claims from the front, the
 * workers from the back, so the last pieces to run are the middle ones): piece sizes shrink by TAPER_RATIO
 * from each end toward the middle, so that the thread that finishes first waits for a small piece only.
 * With fewer than `min_items` items a piece, equal pieces (TAPER_MIN_ITEMS: a float convolution's tiles, a
 * depthwise layer's pixels).  edge(0) = 0, edge(parts) = n. */
#define TAPER_RATIO 0.8
#define TAPER_MIN_ITEMS 4
static double taper_sum(int64_t k)     /* the first k weights from an end: 1 + r + ... + r^(k-1) */
{
    double sum = 0.0, w = 1.0;
    int64_t j;
    for (j = 0; j < k; j++, w *= TAPER_RATIO)
        sum += w;
    return sum;
}

static int64_t taper_edge(int64_t i, int64_t parts, int64_t n, int64_t min_items)
{
    double total, below;
    int64_t e;
    if (parts <= 2 || n < min_items * parts)
        return n * i / parts;
    if (i <= 0 || i >= parts)
        return i <= 0 ? 0 : n;
    /* piece j weighs r^min(j, parts - 1 - j): the pieces before i from the front, or all but those after */
    total = taper_sum(parts / 2) * 2.0 + (parts % 2 ? taper_sum(parts / 2 + 1) - taper_sum(parts / 2) : 0.0);
    below = i <= parts / 2 ? taper_sum(i) : total - taper_sum(parts - i);
    e = (int64_t)(below / total * (double)n + 0.5);
    return e < n ? e : n;
}

/* fn(ctx, part, thread) for part in 0..parts on up to `threads` threads; returns when all are done.
 * claim: the parts are independent (any thread may run any number of them, in any order) */
static void pool_run(part_fn fn, void *ctx, int parts, int threads, int claim)
{
    int k, workers;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if (threads > parts)
        threads = parts;
    if (threads <= 1 || (claim && (parts > MAX_PARTS || pthread_mutex_trylock(&pool.busy) != 0))) {
        for (k = 0; k < parts; k++)     /* independent parts: the caller can do them all */
            fn(ctx, k, 0);
        return;
    }
    if (!claim)                         /* jobs that wait for each other need their threads: queue up */
        pthread_mutex_lock(&pool.busy);
    threads = start_workers(threads);
    pool.fn = fn;
    pool.ctx = ctx;
    if (claim) {
        long g = atomic_load(&pool.generation);
        atomic_store_explicit(&pool.finished_parts, 0, memory_order_relaxed);
        pool.job_parts = parts;
        /* block b of `threads`: the caller's the first, worker t's the t-th from the back; none for the others */
        for (k = 0; k <= pool.started; k++) {
            int b = k == 0 ? 0 : threads - k;
            atomic_store_explicit(&pool.claims[k].range,
                                  k < threads ? CLAIM((int64_t)parts * b / threads, (int64_t)parts * (b + 1) / threads)
                                              : CLAIM(0, 0), memory_order_release);
        }
        post((g | 1) + 2);              /* odd: independent parts */
        pool.stat_jobs++;
        if (claim_parts(0) == parts)    /* no worker came in time */
            pool.stat_alone++;
        for (k = 0; k < SPIN_ROUNDS && atomic_load_explicit(&pool.finished_parts, memory_order_acquire) < parts; k++)
            CPU_RELAX();
        if (atomic_load_explicit(&pool.finished_parts, memory_order_acquire) < parts) {
            /* a worker took a part and is still on it (descheduled?): sleep rather than spin */
            pthread_mutex_lock(&pool.lock);
            pool.caller_waits = 1;
            while (atomic_load_explicit(&pool.finished_parts, memory_order_acquire) < parts)
                pthread_cond_wait(&pool.finished, &pool.lock);
            pool.caller_waits = 0;
            pthread_mutex_unlock(&pool.lock);
        }
        pthread_mutex_unlock(&pool.busy);
        return;
    }
    workers = pool.started;
    pool.parts = parts;
    pool.width = threads;
    atomic_store(&pool.done, 0);
    post((atomic_load(&pool.generation) | 1) + 1);   /* even: an OpenBLAS job */
    for (k = 0; k < parts; k += threads)
        fn(ctx, k, 0);
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

/* The C loops of conv_f32.c, depthwise.c and elementwise.c come in two halves: a setup that checks a
 * call's arguments and fills the loop's own structure (pointers, sizes, the cut into pieces), and an exec
 * that runs that structure on the pool with the GIL let go, answering what the Python function answers
 * (0 done; 1 a raised guard) or NATIVE_NOMEM.  The Python function is the two in a row; a prepared run
 * (shim_tail.c, prepare_run) keeps the structures and calls only the execs. */
#define NATIVE_NOMEM (-1000)
typedef int (*native_exec_fn)(void *state);

static PyObject *native_exec(native_exec_fn exec, void *state)
{
    int r;
    Py_BEGIN_ALLOW_THREADS
    r = exec(state);
    Py_END_ALLOW_THREADS
    return r == NATIVE_NOMEM ? PyErr_NoMemory() : PyLong_FromLong(r);
}

/* the Python function's answer after its setup answered r: the exec's (1: ready), the error set (-2), or r
 * itself (0: nothing to compute; -1: not taken) */
static PyObject *native_answer(int r, native_exec_fn exec, void *state)
{
    return r == 1 ? native_exec(exec, state) : r == -2 ? NULL : PyLong_FromLong(r);
}

/* the Python function `name` of a loop: its setup into a structure of `type` on the stack, then its exec */
#define NATIVE_FUNCTION(name, type, setup, exec) \
    static PyObject *name(PyObject *self, PyObject *const *args, Py_ssize_t nargs) \
    { \
        type g; \
        (void)self; \
        return native_answer(setup(args, nargs, &g), exec, &g); \
    }

/* an exec's pieces: on the pool, or the only one on this thread */
static void native_pieces(part_fn fn, void *ctx, int parts, int threads)
{
    if (parts <= 1)
        fn(ctx, 0, 0);
    else
        pool_run(fn, ctx, parts, threads, 1);
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
