"""The FlatBuffer layer: declared TFLite tables, a bounds-checked reader and a writer.

``load`` turns .tflite bytes into immutable dataclasses in the schema's own spelling
(``Model``, ``SubGraph``, ``Operator``, ``Tensor``, ``Conv2DOptions`` ...); ``dump`` writes them
back.  Every decoded table can X-ray its fields: ``op.builtin_options.xray("dilation_w_factor")``.
"""

from . import tables  # noqa: F401  (declares the core tables)
from .builder import ModelBuilder
from .declare import CLASSES, TABLES, UNIONS, FieldXRay, FlatTable, Origin
from .enums import *  # noqa: F401,F403  (the schema enums: TensorType, BuiltinOperator, ...)
from .reader import LoadNote, Reader, UnknownTable, load
from .types import (
    NUMPY_DTYPE,
    buffer_bytes,
    builtin_code,
    metadata,
    op_name,
    stored_min_runtime,
    tensor_data,
)
from .writer import dump


def __getattr__(name: str):
    """The table classes as attributes (``schema.Model``, ``schema.Conv2DOptions``, ...), each made when
    first asked for (see ``declare.CLASSES``)."""
    if name in TABLES:
        cls = CLASSES[name]
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["load", "dump", "ModelBuilder", "LoadNote", "Reader", "UnknownTable", "FieldXRay", "FlatTable", "Origin",
           "TABLES", "UNIONS", "CLASSES", "NUMPY_DTYPE", "buffer_bytes", "builtin_code", "metadata",
           "op_name", "stored_min_runtime", "tensor_data", *sorted(TABLES)]
