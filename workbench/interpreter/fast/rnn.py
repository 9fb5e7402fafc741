"""Speed layer for RNN, UNIDIRECTIONAL_SEQUENCE_RNN and BIDIRECTIONAL_SEQUENCE_RNN.

* float: :func:`eval_float` -- the teaching layer's ``_rnn.eval_float`` (every step's RnnBatchStep: bias,
  the three products in NEON order, the activation with Eigen's tanh) as one numba loop over the steps,
  rows and units, every float32 operation in the same order (the same bits);
* hybrid: the SSE row sums of the int8 weights (asymmetric inputs), made once at prepare from the
  constant weights; every invoke runs the teaching layer's routines with them.
The kernel modules' ``run`` takes these as keyword arguments.  Both arithmetic variants: LiteRT's two
resolvers run the same RNN kernels.
"""

from __future__ import annotations

import numpy as np

from ...perf.jit import njit
from ...schema.enums import BuiltinOperator
from ..kernels import _rnn, rnn
from ..kernels import bidirectional_sequence_rnn as bidirectional
from ..kernels import unidirectional_sequence_rnn as unidirectional
from ..quant import recurrent
from ..variants import VARIANTS
from . import fast_path
from .lstm import Prepared

ALL = tuple(VARIANTS)
F32 = np.float32
_TANH_CLAMP = F32(recurrent._EIGEN_TANH_CLAMP)
_TP0, _TP1, _TP2, _TP3 = (F32(c) for c in recurrent._EIGEN_TANH_P)
_TQ0, _TQ1, _TQ2, _TQ3, _TQ4 = (F32(c) for c in recurrent._EIGEN_TANH_Q)
_ZERO, _ONE, _SIX = F32(0.0), F32(1.0), F32(6.0)


@njit
def _multiply_accumulate(m, v, out):
    """out[r] += m[r] · v in NEON order (quant.recurrent.matrix_batch_vector_multiply_accumulate)."""
    rows, cols = m.shape
    body = cols - cols % 4
    for r in range(rows):
        l0 = _ZERO
        l1 = _ZERO
        l2 = _ZERO
        l3 = _ZERO
        for c in range(0, body, 4):
            l0 += m[r, c] * v[c]
            l1 += m[r, c + 1] * v[c + 1]
            l2 += m[r, c + 2] * v[c + 2]
            l3 += m[r, c + 3] * v[c + 3]
        acc = out[r] + (((l0 + l1) + l2) + l3)
        for c in range(body, cols):
            acc += m[r, c] * v[c]
        out[r] = acc


@njit
def _activation(x, code):
    """quant.recurrent.apply_activation_to_vector on one float32 value (NaN as numpy's where / minimum)."""
    if code == 4:                                        # Eigen's tanh
        if x > _TANH_CLAMP:
            x = _TANH_CLAMP
        elif x < -_TANH_CLAMP:
            x = -_TANH_CLAMP
        x2 = x * x
        p = ((_TP0 * x2 + _TP1) * x2 + _TP2) * x2 + _TP3
        q = (((_TQ0 * x2 + _TQ1) * x2 + _TQ2) * x2 + _TQ3) * x2 + _TQ4
        return ((x2 * x) * p + x) / q
    if code == 5:
        return _ONE if np.signbit(x) else _ZERO
    if code == 2:
        x = _ONE if _ONE < x else x
        return x if -_ONE < x else -_ONE
    if code == 3:
        x = _SIX if _SIX < x else x
        return x if _ZERO < x else _ZERO
    if code == 1:
        return x if _ZERO < x else _ZERO
    return x


@njit
def _eval_float_numba(x, aux, has_aux, W, R, b, Waux, h, code, reverse, out):
    T, B = x.shape[0], x.shape[1]
    units = W.shape[0]
    acc = np.empty(units, np.float32)
    for s in range(T):
        t = T - 1 - s if reverse else s
        for k in range(B):
            for u in range(units):
                acc[u] = b[u]
            _multiply_accumulate(W, x[t, k], acc)
            if has_aux:
                _multiply_accumulate(Waux, aux[t, k], acc)
            _multiply_accumulate(R, h[k], acc)
            for u in range(units):
                v = _activation(acc[u], code)
                h[k, u] = v
                out[t, k, u] = v


def eval_float(x, aux, W, R, b, Waux, h, code: int, reverse: bool = False) -> np.ndarray:
    """``_rnn.eval_float`` in numba (same arguments, same bits)."""
    out = np.empty((x.shape[0], x.shape[1], W.shape[0]), np.float32)
    has_aux = Waux is not None and aux is not None
    _eval_float_numba(x, aux if has_aux else x, has_aux, W, R, b, Waux if has_aux else W, h, int(code),
                      bool(reverse), out)
    return out


@fast_path(BuiltinOperator.RNN, rnn.RNNData, variants=ALL)
@fast_path(BuiltinOperator.UNIDIRECTIONAL_SEQUENCE_RNN, unidirectional.UnidirectionalSequenceRNNData, variants=ALL)
@fast_path(BuiltinOperator.BIDIRECTIONAL_SEQUENCE_RNN, bidirectional.BidirectionalSequenceRNNData, variants=ALL)
def bind_float(context, node, d):
    run = {rnn.RNNData: rnn.run, unidirectional.UnidirectionalSequenceRNNData: unidirectional.run,
           bidirectional.BidirectionalSequenceRNNData: bidirectional.run}[type(d)]
    return Prepared("numba", run, eval_float=eval_float)


@fast_path(BuiltinOperator.RNN, rnn.RNNHybridData, variants=ALL)
@fast_path(BuiltinOperator.UNIDIRECTIONAL_SEQUENCE_RNN, unidirectional.UnidirectionalSequenceRNNHybridData,
           variants=ALL)
def bind_hybrid(context, node, d):
    run = rnn.run if type(d) is rnn.RNNHybridData else unidirectional.run
    return Prepared("hybrid(row sums at prepare)", run, sums=_rnn.row_sums(
        context.value(node.inputs[1]), context.value(node.inputs[2]), None, d.asymmetric_quantize_inputs))


@fast_path(BuiltinOperator.BIDIRECTIONAL_SEQUENCE_RNN, bidirectional.BidirectionalSequenceRNNHybridData,
           variants=ALL)
def bind_bidirectional_hybrid(context, node, d):
    if not d.asymmetric_quantize_inputs:
        fw = bw = None
    else:
        with_w = d.aux_mode == "aux weights"
        fw = _rnn.row_sums(context.value(node.inputs[1]), context.value(node.inputs[2]),
                           context.value(node.input(10)) if with_w else None, True)
        bw = _rnn.row_sums(context.value(node.inputs[5]), context.value(node.inputs[6]),
                           context.value(node.input(11)) if with_w else None, True)
    return Prepared("hybrid(row sums at prepare)", bidirectional.run, fw_sums=fw, bw_sums=bw)
