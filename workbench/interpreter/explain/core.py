"""The entry point: :func:`explain` finds the node's explainer by its OpData class object (or op and
OpData class for shared OpData), as the family modules registered it (:mod:`.registry`), runs it and
builds the :class:`Explanation`."""

from __future__ import annotations

import math

import numpy as np

from ..kernels.concatenation import ConcatenationData
from . import conversion, elementwise, hybrid, matrix, pooling, tables  # noqa: F401  (importing registers their explainers)
from ._steps import _act_real, _Work
from .movement import DATA_MOVEMENT, _explain_concatenation, _explain_copy
from .registry import _EXPLAINERS, clamps_after, describe, explainer_for, op_explainer_for
from .result import Explanation, Step, _item, _number


def explained_kinds() -> dict:
    """OpData class name → what explain() does with it (for documentation and tests); the explainers
    themselves are registered by class (:mod:`.registry`)."""
    return {cls.__name__: fn.__name__.removeprefix("_explain_") for cls, fn in _EXPLAINERS.items()}


def _dequantized(w: _Work, value, output: int) -> float:
    t = w.n.outputs[output]
    if isinstance(value, (float, np.floating)) or not w.is_quantized(t):
        return _number(value)
    s, z, dim = w.quantization(t)
    if len(s) > 1:
        return float(s[w.pos[dim]]) * (int(value) - int(z[w.pos[dim]]))
    return float(s[0]) * (int(value) - int(z[0]))


def explain(interpreter, node, output_index, output: int = 0) -> Explanation:
    """Compute element ``output_index`` (flat int or a tuple) of output ``output`` of ``node`` by hand.

    The interpreter must have run (``invoke``) and keep the node's inputs readable
    (``keep_intermediates=True``, or the node reads model inputs/constants only).
    """
    index = node.index if hasattr(node, "index") else int(node)
    w = _Work(interpreter, index)
    n = w.n
    if not 0 <= output < len(n.outputs):
        raise IndexError(f"node {index} {n.op_name} has {len(n.outputs)} output(s), not {output + 1}")
    out = w.get(n.outputs[output])
    if np.isscalar(output_index) or np.ndim(output_index) == 0:
        k = int(output_index)
        if not -out.size <= k < out.size:
            raise IndexError(f"output element {k} is outside node {index}'s output of {out.size} elements")
        pos = np.unravel_index(k % max(out.size, 1), out.shape)
    else:
        pos = tuple(output_index)
        if len(pos) != out.ndim or any(not 0 <= int(p) < s for p, s in zip(pos, out.shape)):
            raise IndexError(f"output element {list(pos)} is outside node {index}'s output of shape "
                             f"{list(out.shape)}")
    w.out, w.pos = out, tuple(int(p) for p in pos)
    data_class = type(w.d)
    fn = explainer_for(data_class)
    if fn is None and op_explainer_for(n.op_name, data_class) is not None and out.dtype.kind in "iu" and \
            any(w.is_quantized(t) for t in n.inputs if t >= 0):
        fn = op_explainer_for(n.op_name, data_class)
    if fn is not None and output != 0:
        raise IndexError(f"node {index} {n.op_name}: explain() works out output 0 only")
    if fn is not None:
        by_hand, real = fn(w)
        if clamps_after(fn):
            real = _act_real(w.d, real)
    elif n.op_name in DATA_MOVEMENT and not (data_class is ConcatenationData and any(w.d.rescaled or ())):
        by_hand, real = _explain_copy(w, output)
    elif data_class is ConcatenationData:
        by_hand, real = _explain_concatenation(w)
    elif not any(w.is_quantized(t) for t in tuple(n.inputs) + tuple(n.outputs) if t >= 0):
        value = _item(out[w.pos])
        return Explanation(index, n.op_name, w.pos, (Step("no quantized tensor", "the kernel computes in "
                                                          f"{out.dtype}; nothing quantized to work out", value),),
                           None, value, math.nan, _number(value), "not quantized", f"{out.dtype}")
    else:
        raise NotImplementedError(f"explain() does not know node {index} {n.op_name}: no explainer is registered "
                                  f"for its OpData class {describe(data_class)}; it explains "
                                  f"{', '.join(sorted(explained_kinds()))} and data movement "
                                  f"({', '.join(sorted(DATA_MOVEMENT))})")
    value = out[w.pos] if out.dtype == np.float32 else _item(out[w.pos])
    if isinstance(by_hand, np.floating) or (isinstance(by_hand, float) and out.dtype == np.float32):
        by_hand = np.float32(by_hand)
    elif isinstance(by_hand, np.integer):
        by_hand = int(by_hand)
    return Explanation(index, n.op_name, w.pos, tuple(w.steps), by_hand, value, float(real),
                       _dequantized(w, value, output), w.kind, w.recipe)
