"""Kernels, their registration, and op resolvers.

A kernel is a class with four methods, called in this order (TFLite's ``TfLiteRegistration``)::

    init(context, node)             -> user data kept on the node (usually None)
    prepare(context, node)          -> a frozen <Op>Data: output shapes, padding, activation range, ...
    invoke(context, node, data)     arithmetic only: reads context.tensors, writes the outputs
    free(context, node, data)       release what init/prepare took

One registration line puts a kernel in the builtin registry::

    @kernel(BuiltinOperator.SOFTMAX, versions=range(1, 2))
    class Softmax(Kernel): ...

An :class:`OpResolver` maps (op, version) to a kernel, exactly, with no "nearest version" fallback
(``tensorflow/lite/mutable_op_resolver.cc``); :class:`BuiltinOpResolver` holds every registered
kernel.  Asking for a pair that is not there raises :class:`UnsupportedOpError` naming what exists.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from ..errors import RegistrationError, UnsupportedOpError
from ..schema.enums import BuiltinOperator

__all__ = ["Kernel", "OpData", "opdata", "kernel", "OpResolver", "BuiltinOpResolver", "BUILTIN_KERNELS",
           "CUSTOM_KERNELS", "op_label", "format_versions"]


# ----------------------------------------------------------------------------------------------
# OpData: what prepare computes, printable in a notebook


def _short_value(v) -> str:
    if isinstance(v, np.ndarray):
        return f"<{v.dtype} array {list(v.shape)}>"
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, (tuple, list)) and len(v) > 12:
        return f"{type(v).__name__}[{len(v)}]"
    return repr(v)


class OpData:
    """Base of every ``<Op>Data``: a frozen dataclass whose repr abbreviates arrays."""

    def __repr__(self) -> str:
        parts = []
        for f in dataclasses.fields(self):
            if not f.repr:
                continue
            parts.append(f"{f.name}={_short_value(getattr(self, f.name))}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def opdata(cls):
    """``@opdata`` = a frozen dataclass deriving from :class:`OpData` (repr from the base)."""
    return dataclass(frozen=True, repr=False, eq=False)(cls)


# ----------------------------------------------------------------------------------------------
# Kernel base class


class Kernel:
    """Base class of kernels; override ``prepare`` and ``invoke`` (the teaching layer; a fast version
    of ``invoke`` lives in the speed layer, :mod:`workbench.interpreter.fast`).

    Class attributes:
      ``name``           shown in traces and profiles (the fast path may refine it per node through
                         :meth:`kernel_name`);
      ``value_inputs``   which input slots the kernel needs the *values* of (None = all).  When all
                         of those are constants, the node is evaluated once in ``allocate_tensors``
                         and skipped by ``invoke`` (TFLite does this for constant DEQUANTIZE/DENSIFY);
      ``foldable``       set False for kernels with side effects or state.
    """

    op: object = None          # BuiltinOperator or custom name, set by the registration
    versions: tuple = ()
    name: str = "kernel"
    value_inputs: tuple | None = None
    foldable: bool = True

    def init(self, context, node):
        return None

    def prepare(self, context, node):
        return None

    def invoke(self, context, node, data) -> None:
        raise NotImplementedError(f"{type(self).__name__}.invoke")

    def free(self, context, node, data) -> None:
        return None

    def kernel_name(self, data, reference: bool = False) -> str:
        """The name traces show for a node this kernel prepared (``reference``: the interpreter runs the
        teaching layer alone; the interpreter itself adds the speed layer's name or ``/reference``)."""
        path = getattr(data, "impl", None)
        return f"{self.name}/{path}" if path else self.name

    def __repr__(self) -> str:
        return f"<kernel {self.name} {op_label(self.op)} v{format_versions(self.versions)}>"


# ----------------------------------------------------------------------------------------------
# helpers


def op_label(op) -> str:
    if isinstance(op, BuiltinOperator):
        return op.name
    if isinstance(op, int):
        try:
            return BuiltinOperator(op).name
        except ValueError:
            return f"BUILTIN_{op}"
    return str(op)


def format_versions(versions: Iterable[int]) -> str:
    """[1, 2, 3, 5] → '1-3, 5'."""
    vs = sorted(set(int(v) for v in versions))
    if not vs:
        return "none"
    runs, start, prev = [], vs[0], vs[0]
    for v in vs[1:]:
        if v == prev + 1:
            prev = v
            continue
        runs.append((start, prev))
        start = prev = v
    runs.append((start, prev))
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


def _normalize_versions(versions) -> tuple[int, ...]:
    if isinstance(versions, int):
        versions = (versions,)
    vs = tuple(sorted(set(int(v) for v in versions)))
    if not vs or vs[0] < 1:
        raise RegistrationError(f"versions must be positive integers, got {list(versions)}")
    return vs


def _key_op(op):
    """Builtin ops key as BuiltinOperator, custom ops as their name."""
    if isinstance(op, str):
        try:
            return BuiltinOperator[op] if op.isupper() and op in BuiltinOperator.__members__ else op
        except KeyError:
            return op
    return BuiltinOperator(op)


# ----------------------------------------------------------------------------------------------
# the builtin registry, filled by @kernel

BUILTIN_KERNELS: dict[tuple, type] = {}   # (BuiltinOperator, version) -> kernel class
CUSTOM_KERNELS: dict[tuple, type] = {}    # (custom name, version) -> kernel class


def kernel(op, versions=range(1, 2), *, custom: bool = False):
    """Class decorator: register a kernel for ``op`` (a BuiltinOperator, or a custom op name).

    ``versions`` is any iterable of ints (``range(1, 4)`` = 1, 2, 3).  A second registration of
    the same (op, version) is refused with :class:`RegistrationError`.
    """
    vs = _normalize_versions(versions)
    is_custom = custom or (isinstance(op, str) and op not in BuiltinOperator.__members__)
    key_op = op if is_custom else _key_op(op)
    table = CUSTOM_KERNELS if is_custom else BUILTIN_KERNELS

    def register(cls):
        clash = [v for v in vs if (key_op, v) in table]
        if clash:
            other = table[(key_op, clash[0])]
            raise RegistrationError(
                f"{op_label(key_op)} version {format_versions(clash)} is already registered "
                f"(by {other.__module__}.{other.__qualname__})")
        cls.op = key_op
        cls.versions = vs
        for v in vs:
            table[(key_op, v)] = cls
        return cls

    return register


# ----------------------------------------------------------------------------------------------
# resolvers


class OpResolver:
    """An exact (op, version) → kernel map, as ``tflite::MutableOpResolver``.

    ``kernel`` may be a Kernel subclass (instantiated once here) or an instance.
    """

    def __init__(self):
        self._builtin: dict[tuple, Kernel] = {}
        self._custom: dict[tuple, Kernel] = {}

    @staticmethod
    def _instance(k) -> Kernel:
        if isinstance(k, type):
            k = k()
        for attr in ("prepare", "invoke"):
            if not callable(getattr(k, attr, None)):
                raise RegistrationError(f"{k!r} has no {attr}() method, so it is not a kernel")
        return k

    def add_builtin(self, op, kernel, min_version: int = 1, max_version: int = 1) -> None:
        op = _key_op(op)
        if not isinstance(op, BuiltinOperator):
            raise RegistrationError(f"{op!r} is not a builtin operator (use add_custom for custom ops)")
        if max_version < min_version:
            raise RegistrationError(f"version range {min_version}-{max_version} is empty")
        inst = self._instance(kernel)
        clash = [v for v in range(min_version, max_version + 1) if (op, v) in self._builtin]
        if clash:
            raise RegistrationError(f"{op.name} version {format_versions(clash)} is already registered "
                                    f"in this resolver")
        for v in range(min_version, max_version + 1):
            self._builtin[(op, v)] = inst

    def add_custom(self, name: str, kernel, version: int = 1) -> None:
        if not isinstance(name, str) or not name:
            raise RegistrationError(f"a custom op needs a name, got {name!r}")
        inst = self._instance(kernel)
        if (name, version) in self._custom:
            raise RegistrationError(f"custom op {name!r} version {version} is already registered in this resolver")
        self._custom[(name, int(version))] = inst

    # -- lookup ------------------------------------------------------------------------------
    def versions(self, op) -> tuple[int, ...]:
        """The versions this resolver has for ``op`` (a BuiltinOperator or a custom name)."""
        key = _key_op(op) if not isinstance(op, str) or op in BuiltinOperator.__members__ else op
        table = self._builtin if isinstance(key, BuiltinOperator) else self._custom
        return tuple(sorted(v for (o, v) in table if o == key))

    def _table_key(self, op) -> tuple:
        """(the key ``op`` is filed under, the table it is in)."""
        try:
            key = _key_op(op) if not isinstance(op, str) or op in BuiltinOperator.__members__ else op
        except ValueError:
            raise UnsupportedOpError(f"builtin operator code {op!r} is not an operator this schema knows") from None
        return key, (self._builtin if isinstance(key, BuiltinOperator) else self._custom)

    def find(self, op, version: int) -> Kernel:
        """The kernel for exactly (op, version), or :class:`UnsupportedOpError` saying what exists."""
        key, table = self._table_key(op)
        k = table.get((key, int(version)))
        if k is not None:
            return k
        have = self.versions(key)
        label = op_label(key) if isinstance(key, BuiltinOperator) else f"custom op {key!r}"
        if have:
            raise UnsupportedOpError(f"{label} version {version} is not registered "
                                     f"(this resolver has versions {format_versions(have)})")
        raise UnsupportedOpError(f"{label} is not registered in this resolver (it has no kernel for it at "
                                 f"any version; {len(self.ops())} ops are registered)")

    def ops(self) -> dict[str, str]:
        """op label → registered versions, e.g. {'CONV_2D': '1, 6', ...}."""
        out: dict[str, list[int]] = {}
        for (o, v) in list(self._builtin) + list(self._custom):
            out.setdefault(op_label(o), []).append(v)
        return {k: format_versions(v) for k, v in sorted(out.items())}

    def __contains__(self, key) -> bool:
        op, version = key
        try:
            self.find(op, version)
            return True
        except UnsupportedOpError:
            return False

    def __repr__(self) -> str:
        ops = self.ops()
        body = "\n".join(f"  {k}: {v}" for k, v in ops.items())
        return f"{type(self).__name__} with {len(ops)} ops:\n{body}"


KERNEL_PLUGINS = "workbench.kernels"    # entry-point group: modules that register kernels with @kernel
_plugins_loaded: list = []


def load_kernel_plugins() -> list[str]:
    """Import, once, every module an installed package declares under the entry-point group
    ``workbench.kernels``; their ``@kernel`` decorators add to the builtin registry.  This is how a layer
    above the interpreter (``workbench.delegate``'s ``workbench-offload``) or a package of your own adds
    kernels that every :class:`BuiltinOpResolver` then has, without the interpreter importing it.
    Returns the entry points loaded (``name = module``)."""
    if not _plugins_loaded:
        from importlib.metadata import entry_points

        for ep in sorted(entry_points(group=KERNEL_PLUGINS), key=lambda e: e.name):
            try:
                ep.load()
            except Exception as exc:
                raise RegistrationError(f"kernel plugin {ep.name!r} ({ep.value}, entry-point group "
                                        f"{KERNEL_PLUGINS!r}) failed to load: {type(exc).__name__}: {exc}") from exc
            _plugins_loaded.append(f"{ep.name} = {ep.value}")
        _plugins_loaded.append("")      # loaded (possibly nothing): do not scan again
    return [p for p in _plugins_loaded if p]


class BuiltinOpResolver(OpResolver):
    """Every kernel registered with ``@kernel``: this package's kernels and those of kernel plugins.

    The kernels are loaded as they are asked for: the first :meth:`find` of an op imports that op's module
    (``workbench.interpreter.kernels.module_of``), so building an interpreter for a model with five kinds
    of op loads five kernel modules.  Anything that needs the whole set — :meth:`ops`, :meth:`versions`,
    an op whose module is not named after it, a custom op, :meth:`add_builtin` / :meth:`add_custom` (which
    refuse a pair that is already registered) — loads every module and every kernel plugin first.  What
    a resolver can run does not depend on the order of the questions."""

    def __init__(self):
        super().__init__()
        self._instances: dict[tuple, Kernel] = {}     # (op, kernel class) -> its one instance
        self._complete = False
        self._sync()

    def _sync(self) -> None:
        """Take every registered (op, version) this resolver does not hold yet (one instance per op and
        class, as TFLite keeps one registration per op)."""
        for table, mine in ((BUILTIN_KERNELS, self._builtin), (CUSTOM_KERNELS, self._custom)):
            for (op, v), cls in list(table.items()):
                if (op, v) not in mine:
                    inst = self._instances.get((op, cls))
                    if inst is None:
                        inst = self._instances[(op, cls)] = cls()
                    mine[(op, v)] = inst

    def load_everything(self) -> None:
        """Import every kernel module and every kernel plugin, and hold all they register."""
        if not self._complete:
            from . import kernels

            kernels.load_all()
            load_kernel_plugins()
            self._complete = True
        self._sync()

    def _load_for(self, key) -> None:
        if isinstance(key, BuiltinOperator):
            from . import kernels

            name = kernels.module_of(key.name)
            if name is not None:
                kernels.load(name)
                self._sync()

    def find(self, op, version: int) -> Kernel:
        if not self._complete:
            key, table = self._table_key(op)
            if (key, int(version)) not in table:
                self._load_for(key)
                if (key, int(version)) not in table:
                    self.load_everything()
        return super().find(op, version)

    def versions(self, op) -> tuple[int, ...]:
        self.load_everything()
        return super().versions(op)

    def ops(self) -> dict[str, str]:
        self.load_everything()
        return super().ops()

    def add_builtin(self, op, kernel, min_version: int = 1, max_version: int = 1) -> None:
        self.load_everything()
        super().add_builtin(op, kernel, min_version, max_version)

    def add_custom(self, name: str, kernel, version: int = 1) -> None:
        self.load_everything()
        super().add_custom(name, kernel, version)
