"""Op versions, minimum runtime and compatibility — TFLite's versioning rules, executable and explained.

    >>> from workbench import versioning as V
    >>> V.signature_of(model, 0, 3)          # what the rules look at (OpSignature)
    >>> V.op_version(model, 0, 3)            # Version(number, reason, rule): "v2: dilation_w_factor=2 ≠ 1"
    >>> V.update_versions(model)             # like the converter: raise stored versions, never lower
    >>> V.min_runtime(model)                 # "2.2.0", and the ops that drive it
    >>> V.check(model, runtime="2.3.0")      # what TFLite 2.3 would refuse, with its error text
    >>> V.KERNEL_TYPES[BuiltinOperator.CONV_2D].describe()   # the type combinations its kernels take
    >>> V.STOCK_CUSTOM_OPS                   # the custom ops a stock release registers, and since when
    >>> V.check_delegate(model, {BuiltinOperator.DEPTHWISE_CONV_2D: 1})
    >>> V.accepts(consumer, min_producer, V.VersionDef(...))   # TensorFlow's GraphDef rule

Extraction (:mod:`.signature`) is kept apart from decision (:mod:`.rules`, data tables), and the
release table (:mod:`.runtime`) from the profiles and findings built on it; what kernels exist
beyond (op, version) is data too: :mod:`.kernel_types` (type combinations) and :mod:`.custom_ops`.
"""

from .compat import SemVer, Verdict, VersionDef, accepts, tflite_accepts
from .custom_ops import STOCK_CUSTOM_OPS, StockCustomOp, is_flex_op
from .kernel_types import KERNEL_TYPES, KernelTypes, TypeVerdict, type_verdict
from .rules import (
    RULES,
    TRAPS,
    Pred,
    Rule,
    Trap,
    Version,
    computed_versions,
    covered_ops,
    op_version,
    update_versions,
    version_of,
)
from .runtime import (
    CANNOT_RUN_KINDS,
    FINDING_KINDS,
    REGISTERED,
    RUNTIME_TABLE,
    Finding,
    MinRuntime,
    RuntimeEntry,
    RuntimeProfile,
    RuntimeVersion,
    check,
    check_delegate,
    compare_runtime_version,
    min_runtime,
    one_look_each,
    read_min_runtime_metadata,
    runtime_for,
    write_min_runtime_metadata,
)
from .signature import ExtOptions, OpSignature, TensorSig, signature_of, signatures

__all__ = [
    "signature_of", "signatures", "OpSignature", "TensorSig", "ExtOptions",
    "op_version", "version_of", "update_versions", "computed_versions", "covered_ops", "Version", "Rule",
    "Pred", "Trap", "RULES", "TRAPS",
    "RUNTIME_TABLE", "REGISTERED", "RuntimeVersion", "compare_runtime_version", "runtime_for", "min_runtime",
    "MinRuntime", "RuntimeEntry", "read_min_runtime_metadata", "write_min_runtime_metadata", "RuntimeProfile",
    "Finding", "FINDING_KINDS", "CANNOT_RUN_KINDS", "check", "check_delegate", "one_look_each",
    "KERNEL_TYPES", "KernelTypes", "TypeVerdict", "type_verdict", "STOCK_CUSTOM_OPS", "StockCustomOp", "is_flex_op",
    "SemVer", "VersionDef", "Verdict", "accepts", "tflite_accepts",
]
