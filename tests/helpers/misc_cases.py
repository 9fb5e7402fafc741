"""One-op case builders for the resize, reduction, segment, gather, top-k, pad and depth-to-space kernels,
for tests/interpreter/kernels/test_{resize_bilinear,resize_nearest_neighbor,mean,sum,reduce_prod,
segment_sum,unsorted_segment,topk_v2,gather,pad,depth_to_space}.py.

Every builder returns ``build(name) -> (ModelBuilder, {input name: array})`` (what ``op_layers.OpLayers``
takes); inputs are seeded by the case name.  Integers fill their type's range, both ends included;
floats are uniform in [-2, 2) with a few exact ties.
"""

from __future__ import annotations

import zlib

import numpy as np

from workbench.schema import CLASSES, ModelBuilder
from workbench.schema import BuiltinOperator as B

OPT = CLASSES          # options tables by name, e.g. OPT["ReducerOptions"](keep_dims=True)
U8, I8, I16 = np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16)
I32, I64, F32 = np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.float32)


def Q(scale, zero_point) -> dict:
    return {"scale": scale, "zero_point": zero_point}


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def random_values(rng, dtype, shape, lo=-2.0, hi=2.0) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind == "f":
        v = rng.uniform(lo, hi, shape).astype(dtype)
        v.reshape(-1)[::7] = np.round(v.reshape(-1)[::7])
        return v
    info = np.iinfo(dtype)
    v = rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)
    if v.size >= 4:
        v.reshape(-1)[:2] = info.min, info.max
    return v


def one_op(op, inputs, outputs, options=None, values=None, **op_kw):
    """A model with one operator.  ``inputs``: (name, shape, dtype, quantization or None) for a model
    input, ("const", array[, quantization]) for a constant, in the operator's input order;
    ``outputs``: (shape, dtype, quantization or None).  ``values``: name → array instead of random."""
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        ids, feed = [], {}
        for k, spec in enumerate(inputs):
            if spec[0] == "const":
                ids.append(b.constant(f"c{k}", np.asarray(spec[1]), quantization=spec[2] if len(spec) > 2 else None))
                continue
            nm, shape, dt, q = spec
            ids.append(b.input(nm, shape, dt, quantization=q))
            feed[nm] = (values or {}).get(nm)
            if feed[nm] is None:
                feed[nm] = random_values(rng, dt, shape)
        outs = [b.tensor(f"y{k}", shape, dt, quantization=q) for k, (shape, dt, q) in enumerate(outputs)]
        b.op(op, ids, outs, options, **op_kw)
        b.output(*outs)
        return b, feed
    return build


# -- RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR -------------------------------------------------------

def resize(op, dtype, shape, size, q=None, values=None, **opts):
    """x [N, H, W, C] resized to ``size`` (a constant), input and output sharing ``q``."""
    table = OPT["ResizeBilinearOptions" if op == B.RESIZE_BILINEAR else "ResizeNearestNeighborOptions"]
    q = Q(*q) if q else None
    return one_op(op, [("x", shape, dtype, q), ("const", np.array(size, np.int32))],
                  [((shape[0], size[0], size[1], shape[3]), dtype, q)], table(**opts),
                  values=None if values is None else {"x": values})


# -- MEAN, SUM, REDUCE_PROD ------------------------------------------------------------------------------

def reduce(op, dtype, shape, axes, keep, qi=None, qo="same", values=None):
    """x reduced over the constant ``axes`` (negative and repeated allowed); ``qo`` "same" copies ``qi``."""
    rank = len(shape)
    res = {a + rank if a < 0 else a for a in axes}
    out = tuple(1 if i in res else d for i, d in enumerate(shape)) if keep else \
        tuple(d for i, d in enumerate(shape) if i not in res)
    qi_ = Q(*qi) if qi else None
    qo_ = qi_ if qo == "same" else (Q(*qo) if qo else None)
    return one_op(op, [("x", shape, dtype, qi_), ("const", np.array(axes, np.int32))], [(out, dtype, qo_)],
                  OPT["ReducerOptions"](keep_dims=keep), values=None if values is None else {"x": values})


# -- SEGMENT_SUM, UNSORTED_SEGMENT_* ---------------------------------------------------------------------

def segment_sum(dtype, shape, ids):
    ids = np.asarray(ids, np.int32)
    n = int(ids.max()) + 1
    return one_op(B.SEGMENT_SUM, [("data", shape, dtype, None), ("const", ids)],
                  [((n,) + tuple(shape[1:]), dtype, None)])


def unsorted_segment(op, dtype, shape, ids, num_segments):
    ids = np.asarray(ids, np.int32)
    out = (num_segments,) + tuple(shape[ids.ndim:])
    return one_op(op, [("data", shape, dtype, None), ("const", ids), ("const", np.array([num_segments], np.int32))],
                  [(out, dtype, None)])


# -- TOPK_V2 ---------------------------------------------------------------------------------------------

def topk(dtype, shape, k, q=None, ties=False):
    """The k largest along the last axis; ``ties`` draws the values from a handful so many are equal."""
    def build(name):
        rng = rng_for(name)
        dt = np.dtype(dtype)
        if ties:
            x = rng.integers(-2, 3, shape).astype(dt)
        else:
            x = random_values(rng, dt, shape)
        out = tuple(shape[:-1]) + (k,)
        return one_op(B.TOPK_V2, [("x", shape, dt, Q(*q) if q else None), ("const", np.array(k, np.int32))],
                      [(out, dt, Q(*q) if q else None), (out, I32, None)], values={"x": x})(name)
    return build


# -- GATHER ----------------------------------------------------------------------------------------------

def gather(dtype, shape, indices, axis=0, batch_dims=0, q=None, const_indices=True):
    """params [shape] gathered at ``indices`` (int16/int32/int64 array) along ``axis``."""
    idx = np.asarray(indices)
    a = axis + len(shape) if axis < 0 else axis
    out = tuple(shape[:a]) + tuple(idx.shape[batch_dims:]) + tuple(shape[a + 1:])
    qd = Q(*q) if q else None
    index_in = ("const", idx) if const_indices else ("indices", idx.shape, idx.dtype, None)
    return one_op(B.GATHER, [("params", shape, dtype, qd), index_in], [(out, dtype, qd)],
                  OPT["GatherOptions"](axis=axis, batch_dims=batch_dims),
                  values=None if const_indices else {"indices": idx})


# -- PAD, PADV2 ------------------------------------------------------------------------------------------

def pad(op, dtype, shape, paddings, q=None, qo="same", constant=None):
    """x padded by the constant ``paddings``; PADV2 takes ``constant`` (an array, quantized like the output)."""
    qi = Q(*q) if q else None
    qo_ = qi if qo == "same" else Q(*qo)
    p = np.asarray(paddings, np.int32)
    out = tuple(d + int(a) + int(b) for d, (a, b) in zip(shape, p))
    ins = [("x", shape, dtype, qi), ("const", p)]
    if constant is not None:
        ins.append(("const", np.asarray(constant, dtype).reshape(1), qo_))
    return one_op(op, ins, [(out, dtype, qo_)])


# -- DEPTH_TO_SPACE --------------------------------------------------------------------------------------

def depth_to_space(dtype, shape, block, q=None):
    n, h, w, c = shape
    qd = Q(*q) if q else None
    return one_op(B.DEPTH_TO_SPACE, [("x", shape, dtype, qd)],
                  [((n, h * block, w * block, c // block ** 2), dtype, qd)],
                  OPT["DepthToSpaceOptions"](block_size=block))


# -- LiteRT on one case -----------------------------------------------------------------------------------

def litert_one(layers, name: str, resolver: str = "BUILTIN_REF"):
    """LiteRT's ``(status, value)`` on one case of an ``OpLayers``: ("ok", [outputs]) or ("error" |
    "crash", message) — for the cases a test expects LiteRT to refuse or to get wrong."""
    from helpers import litert_batch
    from workbench import dump

    model, inputs = layers.build(name)
    return litert_batch.run_many([(dump(model), inputs)], resolver=resolver)[0]


def prepared(layers, name: str, variant: str = "litert-x86"):
    """The ``<Op>Data`` the kernel of case ``name`` prepares (a one-op model: node 0)."""
    from workbench.interpreter import Interpreter

    it = Interpreter(model=layers.build(name)[0], variant=variant)
    it.allocate_tensors()
    return it.prepared()[0][2]
