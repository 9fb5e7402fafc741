"""One module per op, named as the op; importing a module registers its kernel.

Each module holds the op's ``<Op>Data`` (what prepare computes), a plain numpy ``reference``
where the fast path is not already one, and the kernel class with its registration line.

Importing this package registers nothing by itself: :class:`workbench.interpreter.BuiltinOpResolver`
imports the module of an op the first time a model asks for it (:func:`module_of`), so a model with
five kinds of op loads five modules, not all of them.  :func:`load_all` imports every module (a listing
of every registered kernel needs them all).
"""

from importlib import import_module

MODULES = (
    "add", "average_pool_2d", "concatenation", "conv_2d", "convolution_2d_transpose_bias", "densify",
    "depth_to_space", "depthwise_conv_2d", "dequantize", "div", "fully_connected", "hard_swish",
    "leaky_relu", "logistic", "max_pool_2d", "mean", "mul", "pack", "pad", "padv2", "prelu", "quantize", "relu",
    "relu6", "reshape", "resize_bilinear", "resize_nearest_neighbor", "shape", "softmax", "squeeze",
    "strided_slice", "sub", "tanh", "transpose", "transpose_conv",
)


# float32 / int32 / bool / int64 kernels for the rest of the builtin op list
MORE_MODULES = (
    "abs", "arg_max", "arg_min", "batch_matmul", "batch_to_space_nd", "broadcast_to", "cast", "ceil", "cos",
    "cumsum", "elu", "equal", "exp", "expand_dims", "fill", "floor", "floor_div", "floor_mod", "gather",
    "gather_nd", "gelu", "greater", "greater_equal", "l2_normalization", "l2_pool_2d", "less", "less_equal", "log",
    "log_softmax", "logical_and", "logical_not", "logical_or", "maximum", "minimum", "mirror_pad", "neg",
    "not_equal", "pow", "range", "reduce_all", "reduce_any", "reduce_max", "reduce_min",
    "reduce_prod", "relu_0_to_1", "relu_n1_to_1", "reverse_v2", "round", "rsqrt", "select", "select_v2",
    "sin", "slice", "space_to_batch_nd", "space_to_depth", "split", "split_v", "sqrt", "square",
    "squared_difference", "sum", "tile", "unpack", "where", "zeros_like",
)


# multi-subgraph control flow and resource variables (they call other subgraphs / keep state)
CONTROL_FLOW_MODULES = ("call_once", "var_handle", "read_variable", "assign_variable", "if_", "while_")


# MediaPipe custom ops (face_landmark_with_attention)
CUSTOM_OP_MODULES = ("mediapipe_ops",)

# ops of "models we don't have": detectors, keyword spotters, recurrent audio/text models
MODEL_OPS_MODULES = (
    "bidirectional_sequence_lstm", "bidirectional_sequence_rnn", "detection_postprocess", "lstm", "rnn",
    "svdf", "unidirectional_sequence_lstm", "unidirectional_sequence_rnn",
    "add_n", "atan2", "bitwise_xor", "broadcast_args", "bucketize", "dynamic_update_slice", "embedding_lookup",
    "local_response_normalization", "matrix_diag", "matrix_set_diag", "one_hot", "rank", "reverse_sequence",
    "rfft2d", "right_shift", "scatter_nd", "segment_sum", "sign", "sparse_to_dense", "topk_v2", "unique",
    "unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_prod", "unsorted_segment_sum",
    "non_max_suppression_v4", "non_max_suppression_v5",
    "complex_abs", "real", "imag",
)

ALL_MODULES = MODULES + MORE_MODULES + CONTROL_FLOW_MODULES + CUSTOM_OP_MODULES + MODEL_OPS_MODULES


def module_of(op_name: str) -> str | None:
    """The module that registers the builtin op named ``op_name`` by this package's naming rule (the op's
    name in lower case, with a trailing ``_`` where that is a Python keyword: ``if_``, ``while_``), or
    None when no module is named so (the op may still be registered by another one: :func:`load_all`)."""
    for name in (op_name.lower(), op_name.lower() + "_"):
        if name in ALL_MODULES:
            return name
    return None


def load(name: str) -> None:
    """Import the kernel module ``name`` (its ``@kernel`` lines register it; a second call does nothing)."""
    import_module(f"{__name__}.{name}")


def load_all() -> None:
    """Import every kernel module: afterwards the builtin registry holds every kernel of this package."""
    for name in ALL_MODULES:
        load(name)
