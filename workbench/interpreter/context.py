"""What a kernel sees: the :class:`Node` it runs and the :class:`Context` of its subgraph.

During ``prepare`` a kernel reads input shapes/dtypes (``context.shape(t)``), the values of constant
inputs (``context.value(t)``, None when the value is only known at run time) and declares each
output (``context.set_output(t, shape, dtype)``).  During ``invoke`` it reads and writes the arrays
in ``context.tensors`` (a plain list indexed by tensor id).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ModelError, UnsupportedOpError
from ..schema.types import NUMPY_DTYPE, buffer_bytes, tensor_data


@dataclass(frozen=True, eq=False)
class Node:
    """One operator of a subgraph, as a kernel sees it.

    ``params`` is TFLite's C-parser view of the builtin options (``Options.runtime()``: zero-filled
    when the options table is absent), which is what kernels must use; ``options`` is the full
    parsed :class:`workbench.options.Options` for explanations.
    """

    subgraph: int
    index: int
    op: Any              # BuiltinOperator, or the custom op's name
    op_name: str
    version: int
    inputs: tuple
    outputs: tuple
    params: dict = field(repr=False)
    options: Any = field(repr=False, default=None)
    custom: Any = field(repr=False, default=None)      # CustomOptions of a custom op
    operator: Any = field(repr=False, default=None)    # the schema Operator

    def input(self, i: int) -> int:
        """Tensor id of input slot ``i``, or -1 when the slot is absent or marked optional."""
        return self.inputs[i] if i < len(self.inputs) else -1

    def __repr__(self) -> str:
        return (f"Node({self.subgraph}:{self.index} {self.op_name} v{self.version}, "
                f"inputs={list(self.inputs)}, outputs={list(self.outputs)})")


def _dtype_of(tensor) -> np.dtype | None:
    return NUMPY_DTYPE.get(tensor.type)


class Context:
    """Tensor shapes, dtypes, constant values and (after allocation) arrays of one subgraph."""

    def __init__(self, model, subgraph: int, *, reference: bool = False, num_threads: int = 1):
        self.model = model
        self.subgraph_index = subgraph
        self.subgraph = model.subgraphs[subgraph]
        self.meta = tuple(self.subgraph.tensors or ())
        n = len(self.meta)
        self.reference = reference
        self.num_threads = num_threads
        self.shapes: list = [None] * n
        self.dtypes: list = [None] * n
        self.constants: list = [None] * n   # values known before invoke: file buffers and folded nodes
        self.tensors: list = [None] * n     # the arrays invoke works on
        self.folded: set[int] = set()
        self.declared: set[int] = set()     # outputs whose shape a kernel set in prepare
        self._file_constants: list = [None] * n
        for t, meta in enumerate(self.meta):
            self.dtypes[t] = _dtype_of(meta)
            if meta.buffer and not meta.is_variable:
                try:
                    value = tensor_data(model, subgraph, t)
                except ModelError:
                    raise
                if value is not None:
                    if meta.sparsity is not None and self.dtypes[t] is not None:
                        raw = buffer_bytes(model, meta.buffer)
                        value = np.frombuffer(raw, self.dtypes[t])  # the stored (compressed) values
                    self._file_constants[t] = value

    # -- called by the interpreter ---------------------------------------------------------
    def reset(self, input_shapes: dict[int, tuple]) -> None:
        self.folded = set()
        self.declared = set()
        for t, meta in enumerate(self.meta):
            const = self._file_constants[t]
            self.constants[t] = const
            self.tensors[t] = const
            if const is not None and meta.sparsity is None:
                self.shapes[t] = tuple(const.shape)
            else:
                self.shapes[t] = tuple(int(d) for d in (meta.shape or ()))
            self.dtypes[t] = _dtype_of(meta)
        for t, shape in input_shapes.items():
            self.shapes[t] = tuple(int(d) for d in shape)

    # -- for kernels: prepare ----------------------------------------------------------------
    def shape(self, t: int) -> tuple:
        return self.shapes[t]

    def dtype(self, t: int) -> np.dtype:
        return self.dtypes[t]

    def name(self, t: int) -> str:
        return self.meta[t].name or f"tensor {t}"

    def tensor_meta(self, t: int):
        """The schema ``Tensor`` (quantization, sparsity, ...)."""
        return self.meta[t]

    def is_constant(self, t: int) -> bool:
        return t >= 0 and self.constants[t] is not None

    def value(self, t: int):
        """The value of a constant (or folded) tensor, else None."""
        return None if t < 0 else self.constants[t]

    def require_value(self, node: Node, slot: int, what: str) -> np.ndarray:
        t = node.input(slot)
        v = self.value(t)
        if v is None:
            raise UnsupportedOpError(
                f"{node.op_name} (node {node.index}): {what} (input {slot}, '{self.name(t)}') is computed at "
                f"run time; this interpreter needs it to be constant (dynamic shapes are not supported)")
        return v

    def set_output(self, t: int, shape, dtype=None) -> None:
        self.declared.add(t)
        self.shapes[t] = tuple(int(d) for d in shape)
        if dtype is not None:
            self.dtypes[t] = np.dtype(dtype)

    def expect_dtype(self, node: Node, t: int, allowed, what: str = "input") -> np.dtype:
        dt = self.dtypes[t]
        allowed = tuple(np.dtype(a) for a in allowed)
        if dt not in allowed:
            names = "/".join(str(a) for a in allowed)
            got = self.meta[t].type.name if dt is None else str(dt)
            raise UnsupportedOpError(f"{node.op_name} v{node.version} (node {node.index}): {what} "
                                     f"'{self.name(t)}' is {got}; this kernel handles {names}")
        return dt
