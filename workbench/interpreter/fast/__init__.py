"""The speed layer: fast implementations of the kernels, bound to a node once, at prepare time.

The teaching layer (``workbench/interpreter/kernels/<op>.py``) says what an op computes: its
``prepare`` returns an ``<Op>Data`` of TFLite's facts and its ``invoke`` switches on the type and
calls a named reference routine.  This package says how to compute the same bits quickly — numba
loops, im2col, BLAS products, the VNNI int8 dot product, thread splits, scratch buffers — and keeps
all of that out of the teaching layer.

A fast implementation is registered per (op, ``<Op>Data`` class): the class the kernel's prepare
returns already encodes the type switch (``Conv2DData`` is float32, ``Conv2DInt8Data`` int8, ...)::

    @fast_path(BuiltinOperator.CONV_2D, Conv2DInt8Data)
    def conv_int8(context, node, data) -> FastPath | None:
        ...                       # pack weights, ask for scratch: once, at prepare
        return Im2colInt8(...)    # a FastPath: its state, callable as fn(context, node, data)

The interpreter calls the bind function right after ``prepare`` (and again whenever it prepares the
node again); the :class:`FastPath` it returns is the node's invoke function, so there is no lookup per
invoke.  ``None`` means "no fast path for this node" (the teaching layer runs).  A fast path states
which arithmetic variants it reproduces (:mod:`workbench.interpreter.variants`); under another
variant, or with ``Interpreter(reference=True)``, the teaching layer runs instead.

The fast path's state is its own object: it does not appear in the ``<Op>Data`` repr, and
``Interpreter.fast_path(node)`` shows it.
"""

from __future__ import annotations

import importlib
import math
import pkgutil

import numpy as np

from ..variants import LITERT_X86

__all__ = ["FastPath", "FlatCall", "fast_path", "FAST_PATHS", "bind", "bounded_inputs", "has_fast_path"]

FAST_PATHS: dict = {}      # (op, <Op>Data class) → (bind function, variant names it reproduces)


class FastPath:
    """One node's fast implementation and its state, bound at prepare time.

    Subclasses set ``name`` (shown in traces and profiles, e.g. ``"im2col+blas(float32, exact)"``)
    and implement ``__call__(context, node, data)``, which writes the node's outputs exactly as the
    teaching layer's ``invoke`` would under the variants it reproduces."""

    name: str = "fast"

    def __call__(self, context, node, data) -> None:
        raise NotImplementedError(f"{type(self).__name__}.__call__")

    def native_call(self, context, node):
        """``(function, args)`` when this node's whole work is one call of a kernel library function that
        answers 0 or None when done (anything else: ``__call__`` handles it), with the node's current
        arrays; else None.  Runs of such nodes are made one call from Python (:mod:`..fused`)."""
        return None

    def __repr__(self) -> str:
        return f"<fast path {self.name}>"


class FlatCall(FastPath):
    """``native``: a node whose whole work is one call of a kernel library function on the flat views of
    its first ``n_inputs`` inputs and its outputs: ``fn(threads, *inputs, *outputs, *tail)``, answering 0
    when done; ``fallback`` (the node's numba path) runs where it is not (arrays that are not
    C-contiguous have no flat view, or the library refused them)."""

    __slots__ = ("fn", "fallback", "tail", "n_inputs", "threaded")
    name = "native"

    def __init__(self, fn, fallback, tail: tuple, n_inputs: int, threaded: bool):
        self.fn, self.fallback, self.tail, self.n_inputs, self.threaded = fn, fallback, tail, n_inputs, threaded

    def native_call(self, context, node):
        t = context.tensors
        arrays = [t[i] for i in (*node.inputs[:self.n_inputs], *node.outputs)]
        if not all(isinstance(v, np.ndarray) and v.flags.c_contiguous for v in arrays):
            return None
        threads = context.num_threads if self.threaded else 1
        return self.fn, (threads, *(v.reshape(-1) for v in arrays), *self.tail)

    def __call__(self, context, node, data) -> None:
        call = self.native_call(context, node)
        if call is None or call[0](*call[1]) != 0:
            self.fallback(context, node, data)


class Call(FastPath):
    """A fast path that is one function and no state: ``Call("numba", fn)``."""

    __slots__ = ("name", "fn")

    def __init__(self, name: str, fn):
        self.name, self.fn = name, fn

    def __call__(self, context, node, data) -> None:
        self.fn(context, node, data)


def fast_path(op, *data_classes, variants=(LITERT_X86.name,)):
    """Register ``bind(context, node, data) -> FastPath | None`` for ``op`` (a BuiltinOperator or a custom
    op's name) and each ``<Op>Data`` class its kernel prepares.

    ``variants``: the arithmetic variants the fast path is bit-exact with (float kernels whose
    arithmetic both variants share list both)."""

    def register(bind_fn):
        for cls in data_classes:
            if (op, cls) in FAST_PATHS:
                raise ValueError(f"{op} / {cls.__name__} already has a fast path "
                                 f"({FAST_PATHS[op, cls][0].__qualname__})")
            FAST_PATHS[op, cls] = (bind_fn, frozenset(variants))
        return bind_fn

    return register


CLAMPING_OPS = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D"})   # every path clamps every float output
BOUND_SLACK = 1.001     # a bound computed in float64 covers float32's rounding of a sum of K products


def _linear_bound(context, node, bound: float) -> float:
    """A bound on the float32 outputs of a CONV_2D / DEPTHWISE_CONV_2D whose inputs are at most ``bound`` in
    magnitude (or NaN), from its constant filter and bias: max over output channels of |bias| + bound · Σ|w|
    (inf where the filter or the bias is not constant)."""
    filt = context.value(node.input(1)) if len(node.inputs) > 1 else None
    if filt is None or filt.ndim != 4:
        return math.inf
    a = np.abs(np.asarray(filt, np.float64))
    per_out = a.sum(axis=(1, 2, 3)) if node.op_name == "CONV_2D" else a.sum(axis=(0, 1, 2))
    bias = context.value(node.input(2)) if len(node.inputs) > 2 and node.input(2) >= 0 else np.zeros(1)
    if bias is None:
        return math.inf
    with np.errstate(over="ignore", invalid="ignore"):
        b = float((np.abs(np.asarray(bias, np.float64)).max(initial=0.0) + bound * per_out.max(initial=0.0))
                  * BOUND_SLACK)
    return b if math.isfinite(b) else math.inf


def bounded_inputs(plan: list, context) -> None:
    """A look at the whole plan once it is bound: a fast path with ``input_bounded(bound)`` whose first
    input is a float32 tensor known to hold values of at most ``bound`` in magnitude (or NaN) learns it.
    Known bounds: the output of a convolution that clamps to a finite range (a fused RELU6, say); the
    output of a convolution with constant weights of bounded inputs (|bias| + bound · Σ|w| for its worst
    output channel, the activation only narrowing it: MobileNet v2's linear bottlenecks); a float ADD of
    two bounded tensors (the sum of the bounds: its residual connections)."""
    bound_of = {}
    for fn, node, data in plan:
        hook = getattr(fn, "input_bounded", None)
        if hook is not None and node.inputs and node.inputs[0] in bound_of:
            hook(bound_of[node.inputs[0]])
        if not node.outputs or context.dtype(node.outputs[0]) != np.float32:
            continue
        bound = math.inf
        if node.op_name in CLAMPING_OPS:
            lo = getattr(data, "output_activation_min", None)
            hi = getattr(data, "output_activation_max", None)
            if lo is not None and hi is not None and math.isfinite(lo) and math.isfinite(hi):
                bound = max(abs(float(lo)), abs(float(hi)))
            if node.inputs and node.inputs[0] in bound_of:
                bound = min(bound, _linear_bound(context, node, bound_of[node.inputs[0]]))
        elif node.op_name == "ADD" and len(node.inputs) == 2 and all(t in bound_of for t in node.inputs):
            bound = (bound_of[node.inputs[0]] + bound_of[node.inputs[1]]) * BOUND_SLACK
        if math.isfinite(bound):
            bound_of[node.outputs[0]] = bound


def has_fast_path(node, data) -> bool:
    _load(node.op)
    return (node.op, type(data)) in FAST_PATHS


def bind(context, node, data):
    """The fast path for a node just prepared, or None (the teaching layer runs).  Not called with
    ``reference=True``."""
    _load(node.op)
    entry = FAST_PATHS.get((node.op, type(data)))
    if entry is None:
        return None
    bind_fn, variants = entry
    if context.variant.name not in variants:
        return None
    return bind_fn(context, node, data)


# which modules of this package register fast paths for an op: a node's op loads only these (a model with
# five kinds of op imports five fast modules, and through them five kernel modules, not all of them).
# tests/interpreter/fast/test_fast_modules_table.py checks this table against what the modules register.
MODULES_BY_OP = {
    "CONV_2D": ("conv_2d", "conv_hybrid"), "DEPTHWISE_CONV_2D": ("depthwise_conv_2d",),
    "FULLY_CONNECTED": ("fully_connected",), "BATCH_MATMUL": ("batch_matmul",),
    "TRANSPOSE_CONV": ("transpose_conv",), "Convolution2DTransposeBias": ("transpose_conv",),
    "AVERAGE_POOL_2D": ("pool",), "MAX_POOL_2D": ("pool",), "MEAN": ("reduce",), "SUM": ("reduce",),
    "RESHAPE": ("reshape",), "SQUEEZE": ("reshape",),
    "REDUCE_PROD": ("reduce",), "SOFTMAX": ("softmax",), "LOG_SOFTMAX": ("softmax",), "QUANTIZE": ("quantize",),
    "RESIZE_BILINEAR": ("resize",), "COMPLEX_ABS": ("complex",), "SVDF": ("svdf",),
    "LSTM": ("lstm",), "UNIDIRECTIONAL_SEQUENCE_LSTM": ("lstm",), "BIDIRECTIONAL_SEQUENCE_LSTM": ("lstm",),
    "RNN": ("rnn",), "UNIDIRECTIONAL_SEQUENCE_RNN": ("rnn",), "BIDIRECTIONAL_SEQUENCE_RNN": ("rnn",),
    **{op: ("activations",) for op in ("GELU", "HARD_SWISH", "LEAKY_RELU", "LOGISTIC", "PRELU", "TANH")},
    **{op: ("binary",) for op in ("ADD", "DIV", "EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL", "MUL",
                                   "NOT_EQUAL", "SQUARED_DIFFERENCE", "SUB")},
    **{op: ("unary",) for op in ("ABS", "COS", "ELU", "EXP", "LOG", "RELU", "RELU6", "RELU_0_TO_1", "RELU_N1_TO_1",
                                  "RSQRT", "SIN", "SQRT")},
}


def _load(op=None) -> None:
    """Import the modules of this package that register fast paths for ``op`` (None: every module)."""
    if op is None:
        names = [info.name for info in pkgutil.iter_modules(__path__)]
    else:
        names = MODULES_BY_OP.get(getattr(op, "name", op), ())
    for name in names:
        importlib.import_module(f"{__name__}.{name}")
