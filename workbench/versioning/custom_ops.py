"""Custom operators and a stock TFLite release — data, and the error texts TFLite prints.

A CUSTOM operator is looked up by its ``custom_code`` (and version) among the custom ops the
application registered; a stock build registers only a handful itself.  Three cases:

* **Stock custom ops** (:data:`STOCK_CUSTOM_OPS`): TFLite's builtin op resolver (``register.cc``,
  ``AddCustom``) registers a few custom ops itself, at version 1 only.  A model using them runs
  on every release from the one that first registered them.
* **Flex ops** (``custom_code`` starting with ``"Flex"``, e.g. ``FlexRFFT``): TensorFlow ops the
  converter kept (``SELECT_TF_OPS``).  They run only with the Select TF ops ("Flex") delegate
  linked into the app (``tensorflow-lite-select-tf-ops`` on Android, the Flex delegate library
  elsewhere); a stock interpreter refuses them when it prepares the node.
* **Any other custom op** (MediaPipe's ``Convolution2DTransposeBias``, an Edge TPU op, …): the
  application must register a kernel for it (``MutableOpResolver.AddCustom``).  A stock release
  cannot run the model as shipped.

Facts, and where they come from:

* The registered names and versions: LiteRT's ``BuiltinOpResolver`` as ai-edge-litert 2.3 builds
  it (probed: each name at versions 1-3; only version 1 resolves) and TensorFlow's
  ``tensorflow/lite/core/kernels/register.cc``.
* The first release of each: the TFLite interpreter inside TensorFlow's own wheels (the first
  wheel that ships one is 1.9.0): ``Mfcc`` and ``AudioSpectrogram`` are registered in 1.9.0 (whether
  1.5-1.8 registered them is not known here: those wheels have no TFLite interpreter);
  ``TFLite_Detection_PostProcess`` is absent from 1.9.0 and present in 1.10.0; ``NumericVerify``
  is absent from 2.1.0 and present in 2.2.0.  ``aeq.hadamard_rotation`` (AI Edge Quantizer's op)
  is registered by ai-edge-litert 2.3; the first TensorFlow release is not known here.
* The error texts (:func:`custom_op_text`, :func:`flex_op_text`): what ai-edge-litert 2.3 prints
  for a one-operator model with such an op, without the trailing "Node number N (X) failed to
  prepare."  Older releases word it differently: TFLite 1.9 and 1.10 refuse while building the
  interpreter ("Didn't find custom op for name 'X' with version 1" / "Registration failed."), and
  TFLite 2.1 and 2.2 print "Encountered unresolved custom op: X." and, for a Flex op, "Regular
  TensorFlow ops are not supported by this interpreter. Make sure you apply/link the Flex delegate
  before inference."
* MediaPipe's ``Convolution2DTransposeBias``, ``MaxPoolingWithArgmax2D`` and ``MaxUnpooling2D`` are
  also known to the XNNPACK delegate (LiteRT's ``BUILTIN`` resolver applies it by default), which
  takes such nodes over before the interpreter looks for a kernel: ai-edge-litert 2.3 runs
  ``selfie_segmentation`` with its default delegates, and refuses it without them
  (``BUILTIN_WITHOUT_DEFAULT_DELEGATES``).  The verdict here is the interpreter's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

__all__ = ["StockCustomOp", "STOCK_CUSTOM_OPS", "XNNPACK_CUSTOM_OPS", "FLEX_PREFIX", "is_flex_op",
           "custom_op_text", "flex_op_text", "node_failed_text", "CUSTOM_OPS_SOURCE"]

CUSTOM_OPS_SOURCE = ("LiteRT's BuiltinOpResolver (ai-edge-litert 2.3) and the TFLite interpreter in TensorFlow "
                     "1.9.0, 1.10.0, 2.1.0 and 2.2.0 wheels")

FLEX_PREFIX = "Flex"


@dataclass(frozen=True)
class StockCustomOp:
    """A custom op TFLite's builtin op resolver registers itself."""

    name: str
    first: str | None  # first release whose resolver registers it; None: not known
    known_from: str | None  # releases below this one were not checked ("cannot tell"); None: all were
    versions: tuple[int, ...] = (1,)
    what: str = ""
    evidence: str = ""


STOCK_CUSTOM_OPS: Mapping[str, StockCustomOp] = {op.name: op for op in (
    StockCustomOp("Mfcc", "1.9.0", "1.9.0", what="TensorFlow's audio op (speech-commands models)",
                  evidence="registered in the TFLite interpreter of tensorflow 1.9.0, the first wheel with one"),
    StockCustomOp("AudioSpectrogram", "1.9.0", "1.9.0", what="TensorFlow's audio op (speech-commands models)",
                  evidence="registered in the TFLite interpreter of tensorflow 1.9.0, the first wheel with one"),
    StockCustomOp("TFLite_Detection_PostProcess", "1.10.0", None,
                  what="the SSD detection post-processing op of the Object Detection API",
                  evidence="absent from tensorflow 1.9.0's TFLite interpreter, registered in 1.10.0"),
    StockCustomOp("NumericVerify", "2.2.0", None, what="the quantization debugger's op",
                  evidence="absent from tensorflow 2.1.0's TFLite interpreter, registered in 2.2.0"),
    StockCustomOp("aeq.hadamard_rotation", None, None, what="AI Edge Quantizer's Hadamard rotation",
                  evidence="registered by ai-edge-litert 2.3; the first TensorFlow release is not known here"),
)}

# MediaPipe's ops the XNNPACK delegate implements itself (see the module docstring)
XNNPACK_CUSTOM_OPS = frozenset({"Convolution2DTransposeBias", "MaxPoolingWithArgmax2D", "MaxUnpooling2D"})


def is_flex_op(name: str) -> bool:
    """TFLite's IsFlexOp: the custom code starts with "Flex"."""
    return bool(name) and name.startswith(FLEX_PREFIX)


def custom_op_text(name: str) -> str:
    """What LiteRT prints for a custom op no one registered."""
    return (f"Encountered unresolved custom op: {name}.\n"
            "See instructions: https://www.tensorflow.org/lite/guide/ops_custom ")


def flex_op_text() -> str:
    """What LiteRT prints for a Flex op when the Flex delegate is not linked."""
    return ("Select TensorFlow op(s), included in the given model, is(are) not supported by this interpreter. "
            "Make sure you apply/link the Flex delegate before inference. For the Android, it can be resolved by "
            "adding \"org.tensorflow:tensorflow-lite-select-tf-ops\" dependency. See instructions: "
            "https://www.tensorflow.org/lite/guide/ops_select")


def node_failed_text(node: int, name: str) -> str:
    """The line LiteRT appends when a node's prepare fails."""
    return f"Node number {node} ({name}) failed to prepare."
