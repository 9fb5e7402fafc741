"""Speed layer for LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM and BIDIRECTIONAL_SEQUENCE_LSTM.

The recurrent kernels' fast paths run the teaching layer's own routines (``kernels/_lstm_*.py``, the
same numpy operations in the same order, so the same bits) with what can be made once at prepare instead
of at every invoke:

* hybrid: the SSE row sums of the int8 weights (TFLite's ``ComputeRowSums``, which TFLite also runs
  once); the teaching layer makes them at every invoke;
* integer 8x8_16: gemmlowp's sigmoid and tanh as lookup tables over all 65536 int16 inputs, made from
  ``quant.fp_logistic`` / ``quant.fp_tanh`` themselves (so a lookup is bit for bit the function); the
  teaching layer runs the fixed-point polynomials on every gate.

The float LSTM has no fast path: its teaching layer already makes every time step's input products in
one matrix product.  LiteRT's two op resolvers run the same recurrent kernels, so these paths serve both
arithmetic variants.
"""

from __future__ import annotations

import functools

import numpy as np

from ...schema.enums import BuiltinOperator
from .. import quant
from ..kernels import bidirectional_sequence_lstm as bidirectional
from ..kernels import lstm
from ..kernels import unidirectional_sequence_lstm as unidirectional
from ..kernels._lstm_hybrid import row_sums
from ..variants import VARIANTS
from . import FastPath, fast_path

ALL = tuple(VARIANTS)


class Prepared(FastPath):
    """The kernel module's ``run`` with keyword arguments made at prepare."""

    __slots__ = ("name", "run", "prepared")

    def __init__(self, name: str, run, **prepared):
        self.name, self.run, self.prepared = name, run, prepared

    def __call__(self, context, node, data) -> None:
        self.run(context, node, data, **self.prepared)


@functools.lru_cache(maxsize=None)
def int16_activation_table(name: str, integer_bits: int) -> np.ndarray:
    """gemmlowp's ``name`` ("logistic" or "tanh") on every int16 input with ``integer_bits`` integer bits,
    as an int64 table indexed by value + 32768, made from quant.fp_logistic / quant.fp_tanh themselves."""
    fn = quant.fp_tanh if name == "tanh" else quant.fp_logistic
    table = fn(np.arange(-32768, 32768, dtype=np.int64), integer_bits, 16).astype(np.int64)
    table.flags.writeable = False
    return table


def table_sigmoid(v) -> np.ndarray:
    return int16_activation_table("logistic", 3)[v + 32768]


def table_tanh(v, integer_bits: int = 3) -> np.ndarray:
    return int16_activation_table("tanh", integer_bits)[v + 32768]


def _sums(context, d, hp) -> dict:
    """The hybrid row sums of a direction from its constant weights."""
    return row_sums({role: context.value(t) for role, t in d.tensors.items()
                     if role in hp.weight_scales and not role.startswith("cell_to_")}, hp)


@fast_path(BuiltinOperator.UNIDIRECTIONAL_SEQUENCE_LSTM, unidirectional.UnidirectionalSequenceLSTMHybridData,
           variants=ALL)
@fast_path(BuiltinOperator.LSTM, lstm.LSTMHybridData, variants=ALL)
def bind_hybrid(context, node, data):
    run = lstm.run if type(data) is lstm.LSTMHybridData else unidirectional.run
    return Prepared("hybrid(row sums at prepare)", run, sums=_sums(context, data.direction, data.hybrid))


@fast_path(BuiltinOperator.BIDIRECTIONAL_SEQUENCE_LSTM, bidirectional.BidirectionalSequenceLSTMHybridData,
           variants=ALL)
def bind_bidirectional_hybrid(context, node, data):
    return Prepared("hybrid(row sums at prepare)", bidirectional.run, fw_sums=_sums(context, data.fw, data.fw_hybrid),
                    bw_sums=_sums(context, data.bw, data.bw_hybrid))


@fast_path(BuiltinOperator.UNIDIRECTIONAL_SEQUENCE_LSTM, unidirectional.UnidirectionalSequenceLSTMIntegerData,
           variants=ALL)
@fast_path(BuiltinOperator.LSTM, lstm.LSTMIntegerData, variants=ALL)
def bind_integer(context, node, data):
    int16_activation_table("logistic", 3)                               # the tables, made once
    int16_activation_table("tanh", 3)
    int16_activation_table("tanh", 15 + data.integer_lstm_param.cell_scale)
    run = lstm.run if type(data) is lstm.LSTMIntegerData else unidirectional.run
    return Prepared("8x8_16(activation tables)", run, sigmoid=table_sigmoid, tanh=table_tanh)
