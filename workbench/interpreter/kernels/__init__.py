"""One module per op, named as the op; importing this package registers every kernel.

Each module holds the op's ``<Op>Data`` (what prepare computes), a plain numpy ``reference``
where the fast path is not already one, and the kernel class with its registration line.
"""

from importlib import import_module

MODULES = (
    "add", "average_pool_2d", "concatenation", "conv_2d", "convolution_2d_transpose_bias", "densify",
    "depth_to_space", "depthwise_conv_2d", "dequantize", "div", "fully_connected", "hard_swish",
    "leaky_relu", "logistic", "max_pool_2d", "mean", "mul", "pack", "pad", "padv2", "prelu", "relu",
    "relu6", "reshape", "resize_bilinear", "resize_nearest_neighbor", "shape", "softmax", "squeeze",
    "strided_slice", "sub", "tanh", "transpose", "transpose_conv",
)

for _name in MODULES:
    import_module(f"{__name__}.{_name}")
