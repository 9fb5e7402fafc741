"""What a kernel sees: the :class:`Node` it runs and the :class:`Context` of its subgraph.

During ``prepare`` a kernel reads input shapes/dtypes (``context.shape(t)``), the values of constant
inputs (``context.value(t)``, None when the value is only known at run time) and declares each
output (``context.set_output(t, shape, dtype)``).  During ``invoke`` it reads and writes the arrays
in ``context.tensors`` (a plain list indexed by tensor id).

Dynamic shapes, as TFLite does them.  A tensor is *dynamic* when its shape is only known while the
graph runs; it gets no bytes in the memory plan, its array is made when the shape is known.  Two
ways to get one:

* ``context.require_value(node, slot, what)`` on an input computed at run time (RESHAPE with a
  shape from SHAPE → ... → PACK on a resized input, STRIDED_SLICE with run-time begin/end, ...)
  raises :class:`DynamicValueNeeded` during ``allocate_tensors``.  The interpreter then marks the
  node's outputs dynamic and calls ``prepare`` again *during invoke*, right before the node runs,
  when ``value()`` / ``require_value()`` return the run-time values (TFLite's kernels call
  ``SetTensorToDynamic`` in Prepare and ``ResizeTensor`` in Eval; here the kernel code stays the
  same).  Every node that reads a dynamic tensor is prepared during invoke too.  A node prepared
  during invoke is prepared again only when its input shapes or the run-time values it read change.
* a kernel whose output shape is only known in ``invoke`` (READ_VARIABLE, WHILE whose loop changes
  shapes) calls ``context.set_output_dynamic(t, dtype)`` in prepare and
  ``context.resize_output(t, shape)`` in invoke, which returns the array to write.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ModelError, TensorError, UnsupportedOpError
from ..schema.strings import empty_strings, unpack_strings
from ..schema.types import NUMPY_DTYPE, buffer_bytes, tensor_data
from .arena import Scratch
from .variants import LITERT_X86


class Slots(tuple):
    """A node's input (or output) tensor ids: a tuple whose missing slot is a :class:`ModelError`.

    Kernels index ``node.inputs[1]`` directly; on an operator written with too few inputs that
    raised a bare IndexError.  Here it names the node and what it lacks, as TFLite's
    ``NumInputs(node) == 2`` checks in Prepare do.
    """

    def __new__(cls, values, where: str = "", path: str = ""):
        obj = super().__new__(cls, values)
        obj.where, obj.path = where, path
        return obj

    def __getitem__(self, i):
        try:
            return tuple.__getitem__(self, i)
        except IndexError:
            raise ModelError(f"{self.where} has {len(self)} (it needs at least {i + 1 if i >= 0 else -i})",
                             self.path) from None


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


class DynamicValueNeeded(UnsupportedOpError):
    """``require_value`` was asked for a value that only exists at run time (while allocating).

    The interpreter catches it and prepares the node again during invoke; a kernel never sees it
    unless the value is missing even then.
    """


def _absent(t: int):
    """``shape(-1)`` would be the *last* tensor's shape (Python's negative index): refuse it."""
    raise ModelError(f"a kernel needs input tensor {t}, but {t} marks an absent (optional) input slot; "
                     f"this operator needs that input")


MAX_ELEMENTS = 1 << 58     # beyond this no numpy array can exist (2**63 bytes at most, 16-byte items)
MAX_TENSOR_BYTES = 1 << 32  # one tensor of more than 4 GiB is refused (a clear error, not a MemoryError)


def _check_bytes(name: str, shape: tuple, dtype) -> None:
    if dtype is None:
        return
    n = math.prod(shape) * np.dtype(dtype).itemsize
    if n > MAX_TENSOR_BYTES:
        raise TensorError(f"tensor '{name}' of shape {list(shape)} would need {n} bytes, more than this interpreter "
                          f"allows for one tensor ({MAX_TENSOR_BYTES} bytes: workbench.interpreter.context."
                          f"MAX_TENSOR_BYTES)")


def _check_shape(shape: tuple, path: str) -> None:
    if any(d < 0 for d in shape):
        raise ModelError(f"shape {list(shape)} has a negative dimension", path)
    if math.prod(shape) > MAX_ELEMENTS:
        raise ModelError(f"shape {list(shape)} holds {math.prod(shape)} elements, more than any array can", path)


_RESOURCE = 13   # TensorType.RESOURCE: the tensor holds a resource id (int32), as in TFLite
_STRING = 5      # TensorType.STRING: an object array of Python bytes (workbench.schema.strings)
STRING_DTYPE = np.dtype(object)


_INT4 = 17       # TensorType.INT4: two values a byte, held unpacked as int8 (constants only)
_INT2 = 19       # TensorType.INT2: four values a byte, held unpacked as int8 (constants only)
PACKED_BITS = {_INT4: 4, _INT2: 2}


def unpack_packed_ints(raw, count: int, bits: int) -> np.ndarray:
    """Signed ``bits``-bit integers packed into bytes → an int8 vector of ``count`` values.

    TFLite's packing (``UnpackPackedIntToInt8`` in portable_tensor_utils): value ``i`` lies in byte
    ``i * bits // 8``, the first value in the lowest bits; each value is sign-extended (int4 holds
    -8..7, int2 -2..1).  The bytes must be exactly ``ceil(count * bits / 8)``; an odd int4 count
    leaves the high nibble of the last byte unused.
    """
    per_byte = 8 // bits
    data = np.frombuffer(raw, np.uint8)
    need = -(-count // per_byte)
    if data.size != need:
        raise ModelError(f"{data.size} bytes hold {count} int{bits} values only as {need} bytes")
    shifts = np.arange(per_byte, dtype=np.uint8) * bits
    fields = (data[:, None] >> shifts) & np.uint8((1 << bits) - 1)   # [byte, slot], low bits first
    values = fields.reshape(-1)[:count].astype(np.int8)
    sign = np.int8(1 << (bits - 1))
    return ((values ^ sign) - sign).astype(np.int8)


def _dtype_of(tensor) -> np.dtype | None:
    if int(tensor.type) == _RESOURCE:
        return np.dtype(np.int32)
    if int(tensor.type) == _STRING:
        return STRING_DTYPE
    return NUMPY_DTYPE.get(tensor.type)


def is_string(dtype) -> bool:
    """True for the dtype the interpreter gives STRING tensors (``object``: Python bytes)."""
    return dtype is not None and np.dtype(dtype) == STRING_DTYPE


def new_array(shape, dtype) -> np.ndarray:
    """A fresh tensor array: zeros, or ``b""`` everywhere for a STRING tensor.

    STRING tensors are not fixed-size (TFLite keeps them outside its arena, as dynamic tensors
    whose buffer is rewritten by every kernel that writes them); here each one is its own object
    array, never a view of the memory plan.
    """
    if is_string(dtype):
        return empty_strings(shape)
    return np.zeros(shape, dtype)


def _string_constant(model, subgraph: int, t: int, raw: np.ndarray) -> np.ndarray:
    """A STRING constant decoded from TFLite's packed string buffer (every offset checked)."""
    meta = model.subgraphs[subgraph].tensors[t]
    shape = tuple(int(d) for d in (meta.shape or ()))
    path = f"model.subgraphs[{subgraph}].tensors[{t}] (buffer {meta.buffer})"
    _check_shape(shape, path)
    values = unpack_strings(raw, math.prod(shape), path)
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    arr = arr.reshape(shape)
    arr.flags.writeable = False
    return arr


class Context:
    """Tensor shapes, dtypes, constant values and (after allocation) arrays of one subgraph."""

    def __init__(self, model, subgraph: int, *, reference: bool = False, num_threads: int = 1, variant=None):
        self.model = model
        self.subgraph_index = subgraph
        self.subgraph = model.subgraphs[subgraph]
        self.meta = tuple(self.subgraph.tensors or ())
        n = len(self.meta)
        self.reference = reference
        self.num_threads = num_threads
        self.variant = variant if variant is not None else LITERT_X86   # the arithmetic followed (variants.py)
        self.shapes: list = [None] * n
        self.dtypes: list = [None] * n
        self.constants: list = [None] * n   # values known before invoke: file buffers and folded nodes
        self.tensors: list = [None] * n     # the arrays invoke works on
        self.folded: set[int] = set()
        self.declared: set[int] = set()     # outputs whose shape a kernel set in prepare
        self.dynamic: set[int] = set()      # tensors sized while invoking (no bytes in the memory plan)
        self.kernel_sized: set[int] = set()  # dynamic tensors a kernel resizes itself in invoke
        self.runtime_values = False         # True while a node is prepared during invoke
        self.reads: list[int] = []          # run-time tensors whose values that prepare read
        self.interpreter = None             # the Interpreter (for control flow and resource variables)
        self.scratch = Scratch()            # temporary arrays the nodes share (see arena.Scratch)
        self._file_constants: list = [None] * n
        # constants stored packed (INT4 / INT2) in the file, held unpacked as int8: tensor id → bits
        self.packed_constants: dict[int, int] = {}
        for t, meta in enumerate(self.meta):
            self.dtypes[t] = _dtype_of(meta)
            if meta.buffer and not meta.is_variable and int(meta.type) in PACKED_BITS:
                value = self._packed_constant(model, subgraph, t, meta)
                if value is not None:
                    self._file_constants[t] = value
                    self.packed_constants[t] = PACKED_BITS[int(meta.type)]
                    self.dtypes[t] = value.dtype
                continue
            if meta.buffer and not meta.is_variable:
                try:
                    value = tensor_data(model, subgraph, t)
                except ModelError:
                    raise
                if value is not None:
                    if int(meta.type) == _STRING:
                        if meta.sparsity is not None:
                            raise ModelError("a STRING tensor cannot be sparse (TFLite densifies numbers only)",
                                             f"model.subgraphs[{subgraph}].tensors[{t}].sparsity")
                        value = _string_constant(model, subgraph, t, value)
                    elif meta.sparsity is not None and self.dtypes[t] is not None:
                        raw = buffer_bytes(model, meta.buffer)
                        value = np.frombuffer(raw, self.dtypes[t])  # the stored (compressed) values
                    self._file_constants[t] = value

    @staticmethod
    def _packed_constant(model, subgraph: int, t: int, meta) -> np.ndarray | None:
        """An INT4 / INT2 constant, unpacked once to int8 of its logical shape (None: no data)."""
        path = f"model.subgraphs[{subgraph}].tensors[{t}] (buffer {meta.buffer})"
        if meta.sparsity is not None:
            raise ModelError(f"a sparse {meta.type.name} tensor is not supported (TFLite densifies int8/float only)",
                             path)
        raw = tensor_data(model, subgraph, t)       # the raw bytes (None when the buffer is empty)
        if raw is None:
            return None
        shape = tuple(int(d) for d in (meta.shape or ()))
        _check_shape(shape, path)
        bits = PACKED_BITS[int(meta.type)]
        try:
            value = unpack_packed_ints(raw, math.prod(shape), bits).reshape(shape)
        except ModelError as exc:
            raise ModelError(f"{meta.type.name} tensor of shape {list(shape)}: {exc}", path) from None
        value.flags.writeable = False
        return value

    def packed_bits(self, t: int) -> int | None:
        """4 or 2 when constant ``t`` is stored packed (INT4 / INT2) in the file and held here
        unpacked as int8; None otherwise."""
        return self.packed_constants.get(t) if t >= 0 else None

    # -- called by the interpreter ---------------------------------------------------------
    def reset(self, input_shapes: dict[int, tuple]) -> None:
        self.folded = set()
        self.declared = set()
        self.dynamic = set()
        self.kernel_sized = set()
        self.runtime_values = False
        self.reads = []
        for t, meta in enumerate(self.meta):
            const = self._file_constants[t]
            self.constants[t] = const
            self.tensors[t] = const
            if const is not None and meta.sparsity is None:
                self.shapes[t] = tuple(const.shape)
            else:
                self.shapes[t] = tuple(int(d) for d in (meta.shape or ()))
                _check_shape(self.shapes[t], f"model.subgraphs[{self.subgraph_index}].tensors[{t}].shape")
            self.dtypes[t] = const.dtype if t in self.packed_constants else _dtype_of(meta)
        for t, shape in input_shapes.items():
            self.shapes[t] = tuple(int(d) for d in shape)
            _check_shape(self.shapes[t], f"model.subgraphs[{self.subgraph_index}].tensors[{t}].shape")

    # -- for kernels: prepare ----------------------------------------------------------------
    def shape(self, t: int) -> tuple:
        if t < 0:
            _absent(t)
        return self.shapes[t]

    def dtype(self, t: int) -> np.dtype:
        if t < 0:
            _absent(t)
        return self.dtypes[t]

    def name(self, t: int) -> str:
        return self.meta[t].name or f"tensor {t}"

    def type_name(self, t: int) -> str:
        """The schema type's name (an unknown type number read from a file as ``type 99``)."""
        ty = self.meta[t].type
        return getattr(ty, "name", None) or f"type {int(ty)}"

    def tensor_meta(self, t: int):
        """The schema ``Tensor`` (quantization, sparsity, ...)."""
        return self.meta[t]

    def is_constant(self, t: int) -> bool:
        return t >= 0 and self.constants[t] is not None

    def value(self, t: int):
        """The value of a constant (or folded) tensor, else None.

        While a node is prepared during invoke (see the module docstring) a run-time tensor's
        current value is returned too (read-only), and remembered so that the node is prepared
        again when it changes.
        """
        if t < 0:
            return None
        v = self.constants[t]
        if v is None and self.runtime_values and self.tensors[t] is not None:
            if t not in self.reads:
                self.reads.append(t)
            v = np.array(self.tensors[t])
            v.flags.writeable = False
        return v

    def require_value(self, node: Node, slot: int, what: str) -> np.ndarray:
        t = node.input(slot)
        v = self.value(t)
        if v is None:
            if self.runtime_values or t < 0:
                raise UnsupportedOpError(
                    f"{node.op_name} (node {node.index}): {what} (input {slot}, '{self.name(t) if t >= 0 else '-'}') "
                    f"has no value")
            raise DynamicValueNeeded(
                f"{node.op_name} (node {node.index}): {what} (input {slot}, '{self.name(t)}') is computed at "
                f"run time, so the node is prepared during invoke")
        return v

    def set_output(self, t: int, shape, dtype=None) -> None:
        shape = tuple(int(d) for d in shape)
        if any(d < 0 for d in shape):
            raise TensorError(f"output '{self.name(t)}' would get the shape {list(shape)}, with a negative dimension")
        _check_bytes(self.name(t), shape, dtype if dtype is not None else self.dtypes[t])
        self.declared.add(t)
        self.shapes[t] = shape
        if dtype is not None:
            self.dtypes[t] = np.dtype(dtype)

    def set_output_dynamic(self, t: int, dtype=None) -> None:
        """Prepare: output ``t``'s shape is only known in invoke, where the kernel calls
        :meth:`resize_output` (TFLite's ``SetTensorToDynamic``)."""
        self.declared.add(t)
        self.dynamic.add(t)
        self.kernel_sized.add(t)
        if dtype is not None:
            self.dtypes[t] = np.dtype(dtype)

    def is_dynamic(self, t: int) -> bool:
        return t >= 0 and t in self.dynamic

    def resize_output(self, t: int, shape, dtype=None) -> np.ndarray:
        """Invoke: give dynamic tensor ``t`` the shape ``shape`` and return its (new) array
        (TFLite's ``ResizeTensor`` on a dynamic tensor).  The old array is kept when it fits."""
        if t not in self.dynamic:
            raise UnsupportedOpError(f"resize_output: tensor '{self.name(t)}' is not dynamic (its bytes are "
                                     f"in the memory plan); call set_output_dynamic() in prepare")
        shape = tuple(int(d) for d in shape)
        if any(d < 0 for d in shape):
            raise TensorError(f"tensor '{self.name(t)}' would get the shape {list(shape)}, with a negative "
                              f"dimension (computed while invoking)")
        if dtype is not None:
            self.dtypes[t] = np.dtype(dtype)
        arr = self.tensors[t]
        if arr is None or arr.shape != shape or arr.dtype != self.dtypes[t]:
            _check_bytes(self.name(t), shape, self.dtypes[t])
            try:
                arr = new_array(shape, self.dtypes[t])
            except (MemoryError, ValueError) as exc:
                raise TensorError(f"tensor '{self.name(t)}' of shape {list(shape)} "
                                  f"cannot be allocated: {exc}") from None
            self.tensors[t] = arr
        self.shapes[t] = shape
        return arr

    def subgraph_at(self, index: int):
        """Another subgraph of the model (for IF, WHILE, CALL_ONCE): see ``interpreter._Subgraph``."""
        return self.interpreter._sg(index)

    def expect_dtype(self, node: Node, t: int, allowed, what: str = "input") -> np.dtype:
        dt = self.dtypes[t]
        allowed = tuple(np.dtype(a) for a in allowed)
        if dt not in allowed:
            names = "/".join("string" if is_string(a) else str(a) for a in allowed)
            got = self.type_name(t) if dt is None else "STRING (an object array of bytes)" if is_string(dt) else str(dt)
            raise UnsupportedOpError(f"{node.op_name} v{node.version} (node {node.index}): {what} "
                                     f"'{self.name(t)}' is {got}; this kernel handles {names}")
        return dt
