"""MobileNet v1 1.0/224 built in code with TF-slim's tensor names: the model of the TI paper's Fig. 8.

The paper's MobileNet demo names the tensor ``MobilenetV1/MobilenetV1/Conv2d_13_pointwise/Relu6`` on the
import tool's command line and offloads "all nodes before" it.  Those are TF-slim's scope names
(``research/slim/nets/mobilenet_v1.py`` in tensorflow/models): 14 convolution blocks, then the head
``Logits/AvgPool_1a`` (a 7x7 AVERAGE_POOL_2D), ``Logits/Conv2d_1c_1x1`` (a 1x1 CONV_2D to 1001 classes),
``Logits/SpatialSqueeze`` (RESHAPE) and ``Predictions`` (SOFTMAX).  The activation names are those of
Coral's converted slim file (google-coral/test_data ``mobilenet_v1_1.0_224_quant_embedding_extractor.tflite``:
``MobilenetV1/MobilenetV1/Conv2d_<k>_{depthwise,pointwise}/Relu6``, ``MobilenetV1/Logits/AvgPool_1a/AvgPool``).

No float slim file is in a package or repository this project reads, so the graph is built here, layer
for layer, with seeded random weights (He-scaled, so the ReLU6 activations stay in range): the shapes,
ops and names are the real network's; the weights are not (use it for cuts and outputs, not accuracy).
"""

from __future__ import annotations

import numpy as np

from workbench.schema import (
    Conv2DOptions,
    DepthwiseConv2DOptions,
    ModelBuilder,
    Pool2DOptions,
    ReshapeOptions,
    SoftmaxOptions,
)
from workbench.schema.enums import ActivationFunctionType as A
from workbench.schema.enums import BuiltinOperator as B
from workbench.schema.enums import Padding

# (stride, output channels) of the 13 depthwise-separable blocks (slim's MOBILENETV1_CONV_DEFS)
BLOCKS = ((1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512), (1, 512), (1, 512), (1, 512), (1, 512),
          (1, 512), (2, 1024), (1, 1024))
RELU6_13 = "MobilenetV1/MobilenetV1/Conv2d_13_pointwise/Relu6"
NUM_CLASSES = 1001


def slim_mobilenet_v1(size: int = 224, seed: int = 0):
    """The float Model (input ``input`` [1, size, size, 3], output ``MobilenetV1/Predictions/Reshape_1``)."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder("MobileNet v1 1.0/224, TF-slim names, seeded random weights (tests/helpers/slim_mobilenet.py)")

    def weights(name, shape, fan_in):
        return b.constant(name, (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32))

    def bias(name, n):
        return b.constant(name, rng.uniform(0.0, 0.1, n).astype(np.float32))

    x = b.input("input", [1, size, size, 3])
    h = -(-size // 2)
    y = b.tensor("MobilenetV1/MobilenetV1/Conv2d_0/Relu6", [1, h, h, 32])
    b.op(B.CONV_2D, [x, weights("MobilenetV1/Conv2d_0/weights", (32, 3, 3, 3), 27),
                     bias("MobilenetV1/Conv2d_0/Conv2D_bias", 32)], [y],
         Conv2DOptions(padding=Padding.SAME, stride_w=2, stride_h=2, fused_activation_function=A.RELU6))
    x, c = y, 32
    for k, (stride, cout) in enumerate(BLOCKS, start=1):
        h = -(-h // stride)
        dw = b.tensor(f"MobilenetV1/MobilenetV1/Conv2d_{k}_depthwise/Relu6", [1, h, h, c])
        b.op(B.DEPTHWISE_CONV_2D, [x, weights(f"MobilenetV1/Conv2d_{k}_depthwise/depthwise_weights", (1, 3, 3, c), 9),
                                   bias(f"MobilenetV1/Conv2d_{k}_depthwise/depthwise_bias", c)], [dw],
             DepthwiseConv2DOptions(padding=Padding.SAME, stride_w=stride, stride_h=stride, depth_multiplier=1,
                                    fused_activation_function=A.RELU6))
        pw = b.tensor(f"MobilenetV1/MobilenetV1/Conv2d_{k}_pointwise/Relu6", [1, h, h, cout])
        b.op(B.CONV_2D, [dw, weights(f"MobilenetV1/Conv2d_{k}_pointwise/weights", (cout, 1, 1, c), c),
                         bias(f"MobilenetV1/Conv2d_{k}_pointwise/Conv2D_bias", cout)], [pw],
             Conv2DOptions(padding=Padding.SAME, stride_w=1, stride_h=1, fused_activation_function=A.RELU6))
        x, c = pw, cout
    pool = b.tensor("MobilenetV1/Logits/AvgPool_1a/AvgPool", [1, 1, 1, c])
    b.op(B.AVERAGE_POOL_2D, [x], [pool], Pool2DOptions(padding=Padding.VALID, stride_w=2, stride_h=2,
                                                       filter_width=h, filter_height=h))
    logits = b.tensor("MobilenetV1/Logits/Conv2d_1c_1x1/BiasAdd", [1, 1, 1, NUM_CLASSES])
    b.op(B.CONV_2D, [pool, weights("MobilenetV1/Logits/Conv2d_1c_1x1/weights", (NUM_CLASSES, 1, 1, c), c),
                     b.constant("MobilenetV1/Logits/Conv2d_1c_1x1/biases", np.zeros(NUM_CLASSES, np.float32))],
         [logits], Conv2DOptions(padding=Padding.SAME, stride_w=1, stride_h=1, fused_activation_function=A.NONE))
    squeezed = b.tensor("MobilenetV1/Logits/SpatialSqueeze", [1, NUM_CLASSES])
    b.op(B.RESHAPE, [logits, b.constant("MobilenetV1/Logits/SpatialSqueeze_shape",
                                        np.array([1, NUM_CLASSES], np.int32))], [squeezed],
         ReshapeOptions(new_shape=(1, NUM_CLASSES)))
    probs = b.tensor("MobilenetV1/Predictions/Reshape_1", [1, NUM_CLASSES])
    b.op(B.SOFTMAX, [squeezed], [probs], SoftmaxOptions(beta=1.0))
    b.output(probs)
    return b.build()
