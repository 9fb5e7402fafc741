"""Work out one output element of a quantized node by hand, step by step, next to what the kernel wrote.

    it = Interpreter(model_path="mobilenet_int8.tflite", keep_intermediates=True)
    it.allocate_tensors(); it.set_tensor(...); it.invoke()
    explain(it, 3, 1234)          # node 3, flat output index 1234
    explain(it, 3, (0, 5, 7, 2))  # or a multi-index

An :class:`Explanation` lists the steps the node's kernel takes for that one element — what each step
is, its formula with the concrete numbers, its value — then the value those steps give ("by hand"),
the value the kernel wrote, the real number the output stands for, and the float result: the same op
computed in float64 on the dequantized inputs.  ``agrees`` says whether the hand computation equals
the kernel; the tests demand it for every op, type and recipe listed here, on tiny models and on
whole sample models.

The arithmetic follows the workbench's kernels, which follow what TFLite runs (see each kernel's
module docstring for the facts), so the steps show where the recipes differ — including the
interpreter's arithmetic variant (``Interpreter(variant="reference")``: TFLite's reference kernels,
e.g. SOFTMAX / LOG_SOFTMAX on 8-bit inputs in gemmlowp fixed point, SUM's fixed-point rescale,
uint8 RESIZE_BILINEAR's reference formula, QUANTIZE / DEQUANTIZE without litert's NEON blocks):

* matrix ops — CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV, BATCH_MATMUL:
  int8 and uint8 (with a filter zero point): int32 sums, then the *double rounding* of
  MultiplyByQuantizedMultiplier — a rounding high multiply, then a rounding shift whose ties go up
  (ruy / NEON on x86) or away from zero (reference kernels), element by element as the kernel does;
  16x8 (int16 activations): the "int64" recipe (int64 sums, a 16-bit multiplier and ONE rounding),
  the "int32" recipe (int32 sums that wrap, double rounding) or the "double" recipe (round(acc·scale)
  in double); hybrid (float input, int8 weights): the run-time quantization of the input row, the
  integer dot product, the float32 scaling, bias and activation — for a grouped CONV_2D the int32
  sum over the output channel's group, × filter scale, × scaling factor; for TRANSPOSE_CONV every
  tap its own float32 product added in litert's order, then bias and clamp;
* ADD / SUB / MUL (int8, uint8, int16: general scales, power-of-two int16, int16 → 8 bit, plain
  int16; litert's NEON 8-bit variants where they apply), AVERAGE_POOL_2D, MAX_POOL_2D, MEAN, SUM,
  REDUCE_PROD, CONCATENATION with requantization, QUANTIZE (from float, per channel, requantize),
  DEQUANTIZE, SOFTMAX, LOG_SOFTMAX, LOGISTIC, TANH and every other table activation (the LUT lookup:
  index, entry, for int16 the interpolation), RELU / RELU6 / RELU_N1_TO_1 / RELU_0_TO_1, LEAKY_RELU,
  PRELU, HARD_SWISH, ABS, NEG, SQRT, RSQRT, DIV, SQUARED_DIFFERENCE, RESIZE_BILINEAR,
  L2_NORMALIZATION;
* data movement (RESHAPE, TRANSPOSE, PAD, CONCATENATION without rescaling, GATHER, TILE, ... see
  :data:`DATA_MOVEMENT`) and selections (MAXIMUM / MINIMUM, REDUCE_MAX / REDUCE_MIN, ARG_MAX /
  ARG_MIN, SHAPE): no arithmetic happens; ``kind == "copy"`` and the step names the input element
  that was taken.  For data movement it is found by running the node's kernel on inputs whose values
  encode their own positions (the interpreter's tensors are put back afterwards);
* a node with no quantized tensor (float32 or plain integers) is reported as ``kind ==
  "not quantized"`` with nothing worked out (``by_hand`` is None).

Any other quantized node raises NotImplementedError naming the op and its OpData.  A node with
several outputs: ``explain(it, node, index, output=k)`` (data movement only).

The package: :mod:`.core` (the entry point and the dispatch on OpData), :mod:`.registry` (each
explainer registers for the kernels' ``<Op>Data`` classes with ``@explains(...)``), :mod:`.result` (Step,
Explanation), :mod:`._steps` (the node being explained and the shared arithmetic steps), and one module
a family of ops: :mod:`.matrix`, :mod:`.hybrid`, :mod:`.elementwise`, :mod:`.tables`, :mod:`.pooling`,
:mod:`.conversion`, :mod:`.movement`.
"""

from ._steps import _Work  # noqa: F401  (the tests look inside a node with it)
from .core import explain, explained_kinds
from .movement import DATA_MOVEMENT
from .registry import _EXPLAINERS, explains  # noqa: F401  (_EXPLAINERS: the dispatch table, by OpData class)
from .result import Explanation, Step

__all__ = ["explain", "Explanation", "Step", "DATA_MOVEMENT", "explained_kinds"]
