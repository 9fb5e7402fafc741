"""The errors the workbench raises.

Every error is a :class:`WorkbenchError`, so a notebook can catch them all in one place.  Errors
about a file say *where* the problem is: the FlatBuffer path (``subgraphs[0].tensors[7].shape``)
and the absolute byte offset when one is known.
"""

from __future__ import annotations


class WorkbenchError(Exception):
    """Base class of every error raised by the workbench."""


class ModelError(WorkbenchError):
    """A .tflite file (or a Model built in code) is malformed.

    ``path`` is the FlatBuffer path of the offending value, ``offset`` its absolute byte offset
    in the file (``None`` when the problem is not tied to a byte position).
    """

    def __init__(self, message: str, path: str = "", offset: int | None = None):
        self.message = message
        self.path = path
        self.offset = offset
        where = []
        if path:
            where.append(f"at {path}")
        if offset is not None:
            where.append(f"byte offset {offset}")
        super().__init__(message + (f" ({', '.join(where)})" if where else ""))


class LossyWriteError(WorkbenchError):
    """Writing a model would silently drop data this reader could not interpret."""


class UnsupportedOpError(WorkbenchError):
    """An operator (or an operator version) is not supported by the component asked to handle it."""


class VersionError(WorkbenchError):
    """A version requirement is not met (schema version, op version, runtime release)."""


class TensorError(WorkbenchError, ValueError):
    """A tensor value does not fit where it is put (wrong dtype, shape or index).

    It is also a ``ValueError``, as in ``ai_edge_litert``, so code written for one catches the other.
    """


class DelegateError(WorkbenchError, RuntimeError):
    """A delegate failed: in its prepare (the interpreter then restores the original execution plan), or
    a delegate kernel failed in init, prepare or invoke.  A ``RuntimeError``, as LiteRT raises then."""


class KernelError(WorkbenchError, ValueError):
    """A kernel refused a node: its prepare or invoke met tensors (dtypes, shapes, quantization
    parameters, values) or options it cannot compute on, where TFLite's kernel returns kTfLiteError.

    The message names the op and the node (``"FLOOR_DIV (node 0): division by zero"``).  It is also a
    ``ValueError``, as ai_edge_litert raises then.
    """


class RegistrationError(WorkbenchError, ValueError):
    """A kernel registration is refused (duplicate (op, version), bad version range)."""


class NotAllocatedError(WorkbenchError, RuntimeError):
    """``invoke()`` (or ``steps()``, ``profile()``, ``invoke_node()``) before ``allocate_tensors()``,
    or after a ``resize_tensor_input()`` that needs a new allocation.

    It is also a ``RuntimeError``, as ai_edge_litert's "Invoke called on model that is not ready.", so
    code written for one catches the other.
    """
