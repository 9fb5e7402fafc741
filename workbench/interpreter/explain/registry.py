"""Which explainer works out which node: an explainer registers for the kernel's ``<Op>Data`` classes.

A kernel's prepare returns an instance of its ``<Op>Data`` (the int8 CONV_2D's ``Conv2DInt8Data``,
the hybrid one's ``Conv2DHybridData``, ...), so the class of ``node``'s data says which arithmetic the
kernel runs.  Each family module decorates its explainers with the classes they know::

    @explains(Conv2DInt8Data, FullyConnectedInt8Data, ...)
    def _explain_matrix(w): ...

and :func:`~.core.explain` looks the class object up (the exact class, as the kernel made it), never
its name: renaming or moving an OpData class moves its explainer with it, and a class explain() does
not know is an error naming it (:func:`describe`).

An OpData that float or plain-integer variants share (``UnaryData``, ``ElementwiseData``,
``ArgData``, ...) registers for named ops only, ``@explains(ArgData, ops=("ARG_MAX", "ARG_MIN"))``:
the explainer is used for those ops when the output is an integer and an input is quantized.
``fused_activation=True``: the explainer's real (float) result still has to go through the node's
fused activation.
"""

from __future__ import annotations

from typing import Callable

from ...errors import RegistrationError
from ..registry import OpData

Explainer = Callable  # (w: _Work) -> (by_hand, real)

_EXPLAINERS: dict[type, Explainer] = {}             # OpData class -> explainer
_BY_OP: dict[tuple[str, type], Explainer] = {}       # (op name, shared OpData class) -> explainer
_FUSED_ACTIVATION: set = set()                       # explainers whose real result is clamped after


def explains(*data_classes: type, ops: tuple = (), fused_activation: bool = False):
    """Register the decorated explainer for the OpData classes ``data_classes`` (for ``ops`` only, when
    given); the function is returned unchanged."""
    for cls in data_classes:
        if not (isinstance(cls, type) and issubclass(cls, OpData)):
            raise RegistrationError(f"explains() takes OpData classes, not {cls!r}")
    if not data_classes:
        raise RegistrationError("explains() needs at least one OpData class")

    def register(fn: Explainer) -> Explainer:
        table: dict = _BY_OP if ops else _EXPLAINERS
        keys = [(op, cls) for cls in data_classes for op in ops] if ops else list(data_classes)
        for key in keys:
            known = table.get(key)
            if known is not None and known is not fn:
                raise RegistrationError(f"{describe(key[1] if ops else key)}"
                                        f"{f' ({key[0]})' if ops else ''} is already explained by "
                                        f"{known.__name__}, not {fn.__name__}")
        for key in keys:
            table[key] = fn
        if fused_activation:
            _FUSED_ACTIVATION.add(fn)
        return fn

    return register


def describe(data_class: type) -> str:
    """``LutData (workbench.interpreter.kernels._unary)``: an OpData class named for a message."""
    return f"{data_class.__qualname__} ({data_class.__module__})"


def explainer_for(data_class: type) -> Explainer | None:
    """The explainer registered for ``data_class`` whatever the op, or None."""
    return _EXPLAINERS.get(data_class)


def op_explainer_for(op_name: str, data_class: type) -> Explainer | None:
    """The explainer registered for the shared ``data_class`` on op ``op_name``, or None."""
    return _BY_OP.get((op_name, data_class))


def clamps_after(fn: Explainer) -> bool:
    """True when ``fn`` was registered with ``fused_activation=True``."""
    return fn in _FUSED_ACTIVATION
