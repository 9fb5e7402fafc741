"""One-op case builders for ADD, SUB, MUL, DIV, SQUARED_DIFFERENCE, the comparisons, QUANTIZE,
DEQUANTIZE and CONCATENATION (tests/interpreter/kernels/test_{add_mul,sub,div,squared_difference,
compare,quantize,dequantize,concatenation}.py).

Each builder returns ``build(name) -> (ModelBuilder, {input name: array})`` with inputs seeded by the
case name (``op_layers.OpLayers`` runs them).  8-bit cases can take every (a, b) pair, so litert's
vector blocks and their scalar tails both occur; quantized parameters are chosen per case to reach
the places where TFLite's builds differ (int16 narrowing, exact ties, multipliers ≥ 1).
"""

from __future__ import annotations

import zlib

import numpy as np

from workbench.interpreter import Interpreter
from workbench.schema import AddOptions, BuiltinOperator, ConcatenationOptions, ModelBuilder

U8, I8, I16, I32, I64, U32 = (np.dtype(t) for t in (np.uint8, np.int8, np.int16, np.int32, np.int64, np.uint32))
F16, F32, C64, BOOL, STR = (np.dtype(t) for t in (np.float16, np.float32, np.complex64, np.bool_, object))


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def q(scale, zp, dim=0):
    return {"scale": scale, "zero_point": zp, "quantized_dimension": dim}


def values(rng, dt, shape) -> np.ndarray:
    """Seeded values of ``dt``: integers over the whole range (int32 / int64 / uint32 near the ends
    too, so sums wrap), floats in [-4, 4) with exact ties and a few specials, bools, short strings."""
    dt = np.dtype(dt)
    if dt == BOOL:
        return rng.integers(0, 2, shape).astype(bool)
    if dt == STR:
        words = np.array([b"", b"a", b"ab", b"\x00b", b"beta"], dtype=object)
        return words[rng.integers(0, len(words), shape)]
    if dt == C64:
        return (rng.uniform(-4, 4, shape) + 1j * rng.uniform(-4, 4, shape)).astype(dt)
    if dt.kind == "f":
        x = rng.uniform(-4, 4, shape).astype(dt)
        flat = x.reshape(-1)
        flat[::7] = np.round(flat[::7])
        if flat.size > 40:
            flat[3:9] = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30], np.float32).astype(dt)
        return x
    info = np.iinfo(dt)
    if dt.itemsize >= 4:
        edge = rng.integers(info.max - 1000, info.max, shape, endpoint=True)
        mid = rng.integers(-1000 if dt.kind == "i" else 0, 1000, shape)
        return np.where(rng.integers(0, 2, shape) == 1, edge, mid).astype(dt)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dt)


def every_pair(dt, tail=13):
    """Every (a, b) pair of an 8-bit type, then ``tail`` more pairs (not a multiple of 8 or 16)."""
    v = np.arange(np.iinfo(dt).min, np.iinfo(dt).max + 1)
    a = np.concatenate([np.repeat(v, v.size), v[:tail]])
    b = np.concatenate([np.tile(v, v.size), v[7:7 + tail]])
    return a.astype(dt).reshape(1, -1), b.astype(dt).reshape(1, -1)


def binary(op, dt, sa, sb, qa=None, qb=None, qo=None, options=None, out_dt=None, nonzero_b=None,
           const_b=False):
    """``op(a, b)``; ``sa`` None: every pair of an 8-bit type; ``sa`` "every int16": all 65536 int16
    values against a seeded permutation of them (and a tail); ``nonzero_b``: b avoids that raw value."""
    def build(name):
        rng = rng_for(name)
        if sa is None:
            a, bv = every_pair(dt)
        elif sa == "every int16":
            every = np.arange(-32768, 32768)
            a = np.concatenate([every, every[4:17]]).astype(dt)
            bv = np.concatenate([rng.permutation(every), every[-13:]]).astype(dt)
        else:
            a, bv = values(rng, dt, sa), values(rng, dt, sb)
        if nonzero_b is not None:
            bv = np.where(bv == nonzero_b, nonzero_b + (1 if nonzero_b < np.iinfo(dt).max else -1), bv).astype(dt)
        b = ModelBuilder()
        ta = b.input("a", a.shape, dt, quantization=None if qa is None else q(*qa))
        tb = (b.constant("b", bv, quantization=None if qb is None else q(*qb)) if const_b else
              b.input("b", bv.shape, dt, quantization=None if qb is None else q(*qb)))
        y = b.tensor("y", tuple(np.broadcast_shapes(a.shape, bv.shape)), out_dt or dt,
                     quantization=None if qo is None else q(*qo))
        b.op(op, [ta, tb], [y], options)
        b.output(y)
        return b, ({"a": a} if const_b else {"a": a, "b": bv})
    return build


def scalar_broadcast_pairs(op, dt, qa, qb, qo, options=None, swap=False):
    """Every value of ``a`` (shape (256, 1)) against every value of ``b`` (shape (256, 259)): each
    row is one of litert's scalar-broadcast runs, with a tail."""
    def build(name):
        v = np.arange(np.iinfo(dt).min, np.iinfo(dt).max + 1)
        a = v.astype(dt).reshape(256, 1)
        bv = np.tile(np.concatenate([v, v[:3]]), (256, 1)).astype(dt)
        if swap:
            a, bv = bv, a
        b = ModelBuilder()
        ta = b.input("a", a.shape, dt, quantization=q(*qa))
        tb = b.input("b", bv.shape, dt, quantization=q(*qb))
        y = b.tensor("y", (256, 259), dt, quantization=q(*qo))
        b.op(op, [ta, tb], [y], options)
        b.output(y)
        return b, {"a": a, "b": bv}
    return build


def comparison(op, dt, sa, sb, qa=None, qb=None):
    """``op(a, b)`` → bool; equal shapes get some equal pairs."""
    def build(name):
        rng = rng_for(name)
        a, bv = values(rng, dt, sa), values(rng, dt, sb)
        if sa == sb:
            bv.reshape(-1)[::3] = a.reshape(-1)[::3]
        b = ModelBuilder()
        ta = b.input("a", sa, dt, quantization=None if qa is None else q(*qa))
        tb = b.input("b", sb, dt, quantization=None if qb is None else q(*qb))
        y = b.tensor("y", tuple(np.broadcast_shapes(sa, sb)), BOOL)
        b.op(op, [ta, tb], [y])
        b.output(y)
        return b, {"a": a, "b": bv}
    return build


def float32_division_ties(rng, scale: float, count: int) -> np.ndarray:
    """float32 values x whose float32 quotient x / scale is exactly k + ½ while the exact quotient is
    not: rounding the float32 quotient (the reference) and the double one (litert's scalar tail) part."""
    s = np.float32(scale)
    found = np.zeros(0, np.float32)
    while found.size < count:
        x = (rng.uniform(-150, 150, 100000) * s).astype(np.float32)
        q = (x / s).astype(np.float32)
        hit = (np.abs(q - np.trunc(q)) == 0.5) & (x.astype(np.float64) / np.float64(s) != q)
        found = np.concatenate([found, x[hit]])
    return found[:count]


def float_quantize(op, dt, shape, qo, axis=None, ties=True, specials=False, division_ties=False):
    """QUANTIZE float32 → ``dt``: values across the range, exact ties (x = (k + ½)·scale) in the
    vector blocks and in the tail, optionally NaN / ±inf / huge values, or values whose float32
    division by the scale lands on a tie the exact quotient misses (``division_ties``, everywhere)."""
    def build(name):
        rng = rng_for(name)
        scale = float(np.max(qo[0]))
        xs = (rng.uniform(-1, 1, shape) * scale * (40000 if dt == I16 else 150)).astype(np.float32)
        flat = xs.reshape(-1)
        if ties:
            flat[:12] = ((np.arange(12) - 6 + 0.5) * np.float32(scale)).astype(np.float32)
            flat[-3:] = (np.array([-2.5, 2.5, 3.5]) * np.float32(scale)).astype(np.float32)
        if specials:
            flat[12:18] = [np.nan, np.inf, -np.inf, 3e38, -3e38, 2.0 ** 31 * scale]
        if division_ties:
            flat[::2] = float32_division_ties(rng, scale, flat[::2].size)
        b = ModelBuilder()
        x = b.input("x", shape, np.float32)
        y = b.tensor("y", shape, dt, quantization=q(*qo) if axis is None else q(*qo, axis))
        b.op(op, [x], [y])
        b.output(y)
        return b, {"x": xs}
    return build


def requantize(op, src, dst, qi, qo, n=203, ties=False):
    """QUANTIZE ``src`` → ``dst`` (integer → integer); ``ties``: values whose requantization ends at ½."""
    def build(name):
        rng = rng_for(name)
        if ties:
            x = (np.resize(np.array([-2, -6, -10, 2, 6, -14]), n) + qi[1]).astype(src).reshape(1, n)
        elif src == I32:
            x = rng.integers(-300000, 300000, (1, n)).astype(src)
        else:
            x = values(rng, src, (1, n))
        b = ModelBuilder()
        t = b.input("x", x.shape, src, quantization=q(*qi))
        y = b.tensor("y", x.shape, dst, quantization=q(*qo))
        b.op(op, [t], [y])
        b.output(y)
        return b, {"x": x}
    return build


def dequantize(op, dt, shape, qi, axis=None, const=False):
    """DEQUANTIZE ``dt`` → float32, per tensor or (``axis``) per channel; ``const``: a constant input."""
    def build(name):
        rng = rng_for(name)
        x = values(rng, dt, shape) if dt != F16 else rng.uniform(-4, 4, shape).astype(F16)
        b = ModelBuilder()
        quant = None if qi is None else (q(*qi) if axis is None else q(*qi, axis))
        t = b.constant("x", x, quantization=quant) if const else b.input("x", shape, dt, quantization=quant)
        y = b.tensor("y", shape)
        b.op(op, [t], [y])
        if const:                       # a constant DEQUANTIZE is folded: feed its output onward
            z = b.input("z", shape)
            s = b.tensor("s", shape)
            b.op(BuiltinOperator.ADD, [y, z], [s], AddOptions())
            b.output(s)
            return b, {"z": np.zeros(shape, np.float32)}
        b.output(y)
        return b, {"x": x}
    return build


def concatenation(op, dt, shapes, axis, qs=None, qo=None):
    """CONCATENATION of inputs of ``shapes`` along ``axis``; ``qs``: each input's (scale, zero point)."""
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        ins, feeds = [], {}
        for k, s in enumerate(shapes):
            x = values(rng, dt, s)
            ins.append(b.input(f"x{k}", s, dt, quantization=None if qs is None else q(*qs[k])))
            feeds[f"x{k}"] = x
        out = list(shapes[0])
        out[axis] = sum(s[axis] for s in shapes)
        y = b.tensor("y", out, dt, quantization=None if qo is None else q(*qo))
        b.op(op, ins, [y], ConcatenationOptions(axis=axis))
        b.output(y)
        return b, feeds
    return build


def int16_rounding_ties(op, qa, qb, qo, options, n=4096, tail=13):
    """int16 ``op`` on equal shapes: ``n`` pairs (a multiple of 16: litert's int16 ADD vector loop) and a
    ``tail``, half of them pairs on which the kernel's two int16 ADD arithmetics — the reference's two
    roundings per input rescale and the vector loop's one — part (found by trying every a against
    seeded b), the rest seeded; LiteRT then says which arithmetic each build runs."""
    def build(name):
        from workbench.interpreter.kernels._binary import add_sub_general
        from workbench.interpreter.quant.elementwise import add_int16_neon

        rng = rng_for(name)
        probe = binary(op, I16, (16,), (16,), qa, qb, qo, options)(name)[0]
        it = Interpreter(model=probe.build(), variant="reference")
        it.allocate_tensors()
        d = it.prepared()[0][2]
        every = np.arange(-32768, 32768)
        found_a, found_b = [], []
        for y in rng.integers(-32768, 32768, 64):
            exact = add_sub_general(every, y, d, 1)
            vector = np.clip(add_int16_neon(every, y, d), d.output_activation_min, d.output_activation_max)
            hits = every[exact != vector]
            found_a += hits[: 8].tolist()
            found_b += [int(y)] * min(8, hits.size)
        m = n + tail
        a = rng.integers(-32768, 32768, m)
        bv = rng.integers(-32768, 32768, m)
        k = min(len(found_a), m // 2)
        where = rng.choice(m, k, replace=False)
        a[where], bv[where] = found_a[:k], found_b[:k]
        return binary(op, I16, (m,), (m,), qa, qb, qo, options)(name)[0], {"a": a.astype(I16), "b": bv.astype(I16)}
    return build


def differing_bits(layers, name: str) -> int:
    """Like ``OpLayers.differing_variants`` but floats compared bit for bit (NaN equals NaN)."""
    a, b = layers.run(name), layers.run(name, variant="reference")
    return sum(int((x.view(f"u{x.dtype.itemsize}") != y.view(f"u{y.dtype.itemsize}")).sum()) if x.dtype.kind in "fc"
               else int((x != y).sum()) for x, y in zip(a, b))


def builtin_ref_outcome(layers, name: str) -> tuple[str, object]:
    """LiteRT's BUILTIN_REF resolver on case ``name``: ("ok", outputs), ("error", message) or ("crash", ...)."""
    from helpers import litert_batch
    from workbench import dump

    model, inputs = layers.build(name)
    return litert_batch.run_many([(dump(model), inputs)], resolver="BUILTIN_REF")[0]


def fast_path_of(layers, name: str):
    """The speed layer's state bound for case ``name``'s one node (None: the teaching layer runs)."""
    model, _ = layers.build(name)
    it = Interpreter(model=model)
    it.allocate_tensors()
    return it._sg(0).fast.get(0)


def prepared_data(layers, name: str, variant: str = "litert-x86"):
    """The OpData prepare made for case ``name``'s one node under ``variant``."""
    model, _ = layers.build(name)
    it = Interpreter(model=model, variant=variant)
    it.allocate_tensors()
    return it.prepared()[0][2]
