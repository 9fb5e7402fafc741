"""A small builder for tiny models made in code (tests, sample models, notebooks).

    b = ModelBuilder()
    x = b.input("x", [1, 8, 8, 3])
    w = b.constant("w", np.ones((1, 3, 3, 3), np.float32))
    y = b.tensor("y", [1, 8, 8, 3])
    b.op(BuiltinOperator.DEPTHWISE_CONV_2D, [x, w, -1], [y],
         DepthwiseConv2DOptions(stride_w=1, stride_h=1, dilation_w_factor=2, dilation_h_factor=2))
    b.output(y)
    model = b.build()            # a Model, equal to load(dump(model))

No TensorFlow needed.  Operator codes are shared per (op, custom name, version), and the buffer
table starts with the empty sentinel TFLite requires.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from .declare import CLASSES, UNIONS
from .enums import BuiltinOperator, BuiltinOptions, BuiltinOptions2, TensorType
from .strings import pack_strings, string_array
from .types import NUMPY_DTYPE, PLACEHOLDER_FOR_GREATER_OP_CODES

_DTYPE_TO_TYPE = {v: k for k, v in NUMPY_DTYPE.items()}


def tensor_type_of(dtype) -> TensorType:
    if np.dtype(dtype).kind in "SUO":      # bytes / str / object arrays: TFLite's STRING
        return TensorType.STRING
    dt = np.dtype(dtype).newbyteorder("<") if np.dtype(dtype).itemsize > 1 else np.dtype(dtype)
    try:
        return _DTYPE_TO_TYPE[dt]
    except KeyError:
        raise ModelError(f"no TensorType for numpy dtype {dtype}") from None


def options_slot(table) -> tuple[str, object]:
    """Where an options table goes in an Operator: ("builtin_options" or "builtin_options_2", union tag)."""
    name = type(table).__name__
    for uname, tags in (("BuiltinOptions", BuiltinOptions), ("BuiltinOptions2", BuiltinOptions2)):
        for tag, member in UNIONS[uname].members.items():
            if member == name:
                return ("builtin_options" if uname == "BuiltinOptions" else "builtin_options_2"), tags(tag)
    raise ModelError(f"{name} is not a builtin options table")


class ModelBuilder:
    def __init__(self, description: str = "built by tflite-workbench"):
        self.description = description
        self.tensors: list = []
        self.buffers: list = [CLASSES["Buffer"]()]  # the empty sentinel
        self.codes: list = []
        self.code_index: dict = {}
        self.operators: list = []
        self.inputs: list[int] = []
        self.outputs: list[int] = []
        self.metadata: list = []
        self.subgraphs: list = []  # extra subgraphs (for IF / WHILE / CALL_ONCE), built separately

    # -- tensors -------------------------------------------------------------------------------
    def tensor(self, name: str, shape, dtype=np.float32, *, quantization=None, shape_signature=None,
               buffer: int = 0, is_variable: bool = False) -> int:
        ttype = dtype if isinstance(dtype, TensorType) else tensor_type_of(dtype)
        q = None
        if quantization is not None:
            q = quantization if not isinstance(quantization, dict) else self.quant(**quantization)
        self.tensors.append(CLASSES["Tensor"](
            shape=tuple(int(d) for d in shape), type=ttype, buffer=buffer, name=name, quantization=q,
            is_variable=is_variable,
            shape_signature=None if shape_signature is None else tuple(int(d) for d in shape_signature),
        ))
        return len(self.tensors) - 1

    @staticmethod
    def quant(scale, zero_point, quantized_dimension: int = 0):
        scale = tuple(float(s) for s in np.atleast_1d(scale))
        zp = tuple(int(z) for z in np.atleast_1d(zero_point))
        return CLASSES["QuantizationParameters"](scale=scale, zero_point=zp, quantized_dimension=quantized_dimension)

    def add_buffer(self, data: bytes) -> int:
        self.buffers.append(CLASSES["Buffer"](data=memoryview(bytes(data))))
        return len(self.buffers) - 1

    def constant(self, name: str, array, dtype=None, *, quantization=None) -> int:
        """A constant tensor; an array of bytes/str (numpy 'S', 'U' or object) becomes a STRING
        tensor in TFLite's packed string format (``workbench.schema.strings``)."""
        if dtype is None and np.asarray(array).dtype.kind in "SUO":
            arr = string_array(array, f"constant '{name}'")
            buf = self.add_buffer(pack_strings(arr.reshape(-1)))
            return self.tensor(name, arr.shape, TensorType.STRING, quantization=quantization, buffer=buf)
        # np.asarray(order="C"), not np.ascontiguousarray: that one turns a 0-d array into shape [1]
        arr = np.asarray(array if dtype is None else np.asarray(array, dtype), order="C")
        le = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
        buf = self.add_buffer(le.tobytes())
        return self.tensor(name, arr.shape, arr.dtype, quantization=quantization, buffer=buf)

    def input(self, name: str, shape, dtype=np.float32, **kw) -> int:
        t = self.tensor(name, shape, dtype, **kw)
        self.inputs.append(t)
        return t

    def output(self, *tensors: int) -> None:
        self.outputs.extend(tensors)

    # -- operators -----------------------------------------------------------------------------
    def opcode(self, op, version: int = 1, custom_code: str | None = None) -> int:
        code = BuiltinOperator.CUSTOM if custom_code is not None else BuiltinOperator(op)
        key = (int(code), custom_code, version)
        if key not in self.code_index:
            self.codes.append(CLASSES["OperatorCode"](
                deprecated_builtin_code=min(int(code), PLACEHOLDER_FOR_GREATER_OP_CODES),
                custom_code=custom_code, version=version, builtin_code=code))
            self.code_index[key] = len(self.codes) - 1
        return self.code_index[key]

    def op(self, op, inputs, outputs, options=None, *, version: int = 1, custom_code: str | None = None,
           custom_options: bytes | None = None, intermediates=None) -> int:
        kw = {}
        if options is not None:
            attr, tag = options_slot(options)
            kw[attr] = options
            kw[attr + "_type"] = tag
        if custom_options is not None:
            kw["custom_options"] = memoryview(bytes(custom_options))
        if intermediates is not None:
            kw["intermediates"] = tuple(intermediates)
        self.operators.append(CLASSES["Operator"](
            opcode_index=self.opcode(op, version, custom_code), inputs=tuple(int(i) for i in inputs),
            outputs=tuple(int(o) for o in outputs), **kw))
        return len(self.operators) - 1

    def add_metadata(self, name: str, data: bytes) -> None:
        self.metadata.append(CLASSES["Metadata"](name=name, buffer=self.add_buffer(data)))

    def subgraph(self, name: str = "main"):
        return CLASSES["SubGraph"](tensors=tuple(self.tensors), inputs=tuple(self.inputs),
                                   outputs=tuple(self.outputs), operators=tuple(self.operators), name=name)

    def build(self, name: str = "main"):
        from .validate import validate_model

        model = CLASSES["Model"](
            version=3, operator_codes=tuple(self.codes), subgraphs=(self.subgraph(name), *self.subgraphs),
            description=self.description, buffers=tuple(self.buffers),
            metadata=tuple(self.metadata) or None)
        validate_model(model)
        return model
