"""Layer lists of the networks in Coral's and TI's published timing tables, built in code.

    .venv/bin/python benchmarks/networks.py            # print every network's layers, MACs, weights

No .tflite file of these networks is used: most of them are larger than this workbench can fetch (the
stored copies of public repositories hold no file of 4 MiB or more, and VGG16 alone is 138 MB), so each
network is built here from its published architecture, with the shapes that set its cost.  A layer is
one TFLite-like operator (a convolution with its bias and activation fused, a depthwise convolution, a
pool, an element-wise add, a concatenation, a mean, a fully-connected layer, a softmax) and carries::

    op            the TFLite builtin operator name (what ``partition/cost.py`` picks an efficiency by)
    macs          multiply-accumulates, counted as ``workbench.partition.node_macs`` counts them
    in_bytes      the input activations it reads
    out_bytes     the output activation it writes
    weight_bytes  its constant weights (8-bit) and biases (32-bit)

Activations and weights are 8-bit (both tables time quantized networks: Coral's Edge TPU runs 8-bit
models only; TIDL runs 8-bit activations with 8-bit weights by default).  Grouped convolutions
(JacintoNet) are CONV_2D layers with their MACs and weights divided by the group count.

The architectures, and where each one's shapes come from (a source of facts; no code is copied):

* MobileNet v1 1.0 (Howard et al. 2017, table 1), MobileNet v2 1.0 (Sandler et al. 2018, table 2),
  Inception v1 (Szegedy et al. 2014, table 1, as TF-slim's ``inception_v1``), Inception v4 and
  Inception-ResNet v2 (Szegedy et al. 2016, figures 3-9 and 15-18, as TF-slim's ``inception_v4`` /
  ``inception_resnet_v2``), ResNet-50 / ResNet-152 v1 and v2 (He et al. 2015 / 2016, table 1; v2 with
  the stride in the last unit of a block, as TF-slim's ``resnet_v2``), VGG16 / VGG19 (Simonyan &
  Zisserman 2014, table 1, configurations D and E), SqueezeNet 1.1 (the SqueezeNet repository's
  ``SqueezeNet_v1.1``: 3x3/2 conv 64, fire modules 16/64 … 64/256, conv 1000 head), DenseNet-121 (Huang
  et al. 2017, table 1, growth 32, compression 0.5), EfficientNet-EdgeTPU S / M (tensorflow/tpu,
  ``models/official/efficientnet/edgetpu/efficientnet_edgetpu_builder.py``: the block strings, widths and
  depth coefficients 1.0 / 1.1 at 224 / 240 pixels; fused "c1" blocks with a full k x k expansion
  convolution);
* JacintoNet11 v2 and JSegNet21 (TI's own networks): tidsp/caffe-jacinto-models, the model scripts'
  ``jacintonet11_base`` / ``jacintonet11`` / ``jsegnet21`` (5x5/2 conv 32, grouped 3x3 convs with 4
  groups, 2x2 max pools; JSegNet21: stride 1 and dilation 2 in the last stage, a decoder at 1/4
  resolution and three 2x depthwise deconvolutions), 5 output classes for JSegNet21 (TI's Cityscapes
  5-class model).

Each builder's MACs are checked against the MACs TI's table lists where it lists one
(:data:`TI_MMAC`); ``benchmarks/cost_model_check.py`` prints the comparison.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Layer", "Net", "NETWORKS", "build", "TI_MMAC"]


@dataclass(frozen=True)
class Layer:
    op: str
    macs: int
    in_bytes: int
    out_bytes: int
    weight_bytes: int


# TI Processor SDK Linux (AM57x), TIDL, "Performance data", "Computation performance of verified networks"
TI_MMAC = {"MobileNetV1": 567.70, "SqueezeNet1.1": 390.8, "InceptionNetV1": 1497.37, "JacintoNet11_v2": 405.81,
           "JSegNet21": 8506.5}


class Net:
    """A layer list under construction; a tensor is its shape ``(h, w, c)``."""

    def __init__(self, name: str, h: int, w: int | None = None, c: int = 3):
        self.name = name
        self.layers: list[Layer] = []
        self.input = (h, w or h, c)

    def _add(self, op, macs, ins, out, weights=0):
        self.layers.append(Layer(op, int(macs), int(sum(_n(s) for s in ins)), int(_n(out)), int(weights)))
        return out

    def conv(self, x, cout, k, stride=1, groups=1, pad="same", kw=None, dilation=1):
        h, w, c = x
        kh, kw = k, kw or k
        if pad == "same":
            ho, wo = -(-h // stride), -(-w // stride)
        else:
            ho, wo = (h - (kh - 1) * dilation - 1) // stride + 1, (w - (kw - 1) * dilation - 1) // stride + 1
        per_out = kh * kw * c // groups
        return self._add("CONV_2D", ho * wo * cout * per_out, [x], (ho, wo, cout), per_out * cout + 4 * cout)

    def dw(self, x, k, stride=1, pad="same"):
        h, w, c = x
        ho, wo = (-(-h // stride), -(-w // stride)) if pad == "same" else ((h - k) // stride + 1, (w - k) // stride + 1)
        return self._add("DEPTHWISE_CONV_2D", ho * wo * c * k * k, [x], (ho, wo, c), k * k * c + 4 * c)

    def deconv_dw(self, x, k=4, stride=2):
        """A per-channel (group = channels) transposed convolution: TFLite TRANSPOSE_CONV."""
        h, w, c = x
        out = (h * stride, w * stride, c)
        return self._add("TRANSPOSE_CONV", h * w * c * k * k, [x], out, k * k * c)

    def pool(self, x, k, stride, kind="MAX_POOL_2D", pad="valid"):
        h, w, c = x
        ho, wo = (-(-h // stride), -(-w // stride)) if pad == "same" else ((h - k) // stride + 1, (w - k) // stride + 1)
        return self._add(kind, ho * wo * c * k * k, [x], (ho, wo, c))

    def mean(self, x):
        h, w, c = x
        return self._add("MEAN", h * w * c, [x], (1, 1, c))

    def fc(self, x, cout):
        cin = _n(x)
        return self._add("FULLY_CONNECTED", cin * cout, [x], (1, 1, cout), cin * cout + 4 * cout)

    def add(self, a, b):
        return self._add("ADD", _n(a), [a, b], a)

    def concat(self, xs):
        h, w, _ = xs[0]
        return self._add("CONCATENATION", 0, xs, (h, w, sum(s[2] for s in xs)))

    def softmax(self, x):
        return self._add("SOFTMAX", _n(x), [x], x)

    def reshape(self, x):
        return self._add("RESHAPE", 0, [x], x)

    def head(self, x, classes=1001):
        """Global average, fully-connected, softmax (the classification head of Coral's models)."""
        x = self.mean(x)
        x = self.fc(x, classes)
        return self.softmax(x)

    # -- totals ------------------------------------------------------------------------------------
    @property
    def macs(self) -> int:
        return sum(la.macs for la in self.layers)

    @property
    def weight_bytes(self) -> int:
        return sum(la.weight_bytes for la in self.layers)


def _n(shape) -> int:
    return math.prod(shape)


# ------------------------------------------------------------------------------------------------
# the builders


def mobilenet_v1(size=224, classes=1001) -> Net:
    n = Net(f"MobileNet v1 1.0/{size}", size)
    x = n.conv(n.input, 32, 3, 2)
    for cout, s in ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1), (512, 1),
                    (512, 1), (512, 1), (1024, 2), (1024, 1)):
        x = n.dw(x, 3, s)
        x = n.conv(x, cout, 1)
    x = n.pool(x, x[0], 1, "AVERAGE_POOL_2D")
    x = n.conv(x, classes, 1)
    x = n.reshape(x)
    n.softmax(x)
    return n


def mobilenet_v2(size=224, classes=1001) -> Net:
    n = Net(f"MobileNet v2 1.0/{size}", size)
    x = n.conv(n.input, 32, 3, 2)
    for t, c, reps, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                          (6, 160, 3, 2), (6, 320, 1, 1)):
        for r in range(reps):
            inp = x
            if t != 1:
                x = n.conv(x, x[2] * t, 1)
            x = n.dw(x, 3, s if r == 0 else 1)
            x = n.conv(x, c, 1)
            if r > 0:
                x = n.add(x, inp)
    x = n.conv(x, 1280, 1)
    x = n.pool(x, x[0], 1, "AVERAGE_POOL_2D")
    x = n.conv(x, classes, 1)
    x = n.reshape(x)
    n.softmax(x)
    return n


def _inception_v1_block(n, x, b1, b2r, b2, b3r, b3, b4):
    a = n.conv(x, b1, 1)
    b = n.conv(n.conv(x, b2r, 1), b2, 3)
    c = n.conv(n.conv(x, b3r, 1), b3, 3)        # TF-slim's inception_v1 uses 3x3 in the "5x5" branch
    d = n.conv(n.pool(x, 3, 1, pad="same"), b4, 1)
    return n.concat([a, b, c, d])


def inception_v1(size=224, classes=1001) -> Net:
    n = Net(f"Inception v1/{size}", size)
    x = n.conv(n.input, 64, 7, 2)
    x = n.pool(x, 3, 2, pad="same")
    x = n.conv(x, 64, 1)
    x = n.conv(x, 192, 3)
    x = n.pool(x, 3, 2, pad="same")
    x = _inception_v1_block(n, x, 64, 96, 128, 16, 32, 32)
    x = _inception_v1_block(n, x, 128, 128, 192, 32, 96, 64)
    x = n.pool(x, 3, 2, pad="same")
    for args in ((192, 96, 208, 16, 48, 64), (160, 112, 224, 24, 64, 64), (128, 128, 256, 24, 64, 64),
                 (112, 144, 288, 32, 64, 64), (256, 160, 320, 32, 128, 128)):
        x = _inception_v1_block(n, x, *args)
    x = n.pool(x, 2, 2, pad="same")
    x = _inception_v1_block(n, x, 256, 160, 320, 32, 128, 128)
    x = _inception_v1_block(n, x, 384, 192, 384, 48, 128, 128)
    x = n.pool(x, x[0], 1, "AVERAGE_POOL_2D")
    x = n.conv(x, classes, 1)
    x = n.reshape(x)
    n.softmax(x)
    return n


def _resnet(name, size, blocks, v2, classes=1001) -> Net:
    n = Net(name, size)
    x = n.conv(n.input, 64, 7, 2)
    x = n.pool(x, 3, 2, pad="same")
    for stage, (units, depth) in enumerate(zip(blocks, (64, 128, 256, 512))):
        for u in range(units):
            # v1: the stride in the first unit of stages 2-4; v2 (TF-slim): in the last unit of stages 1-3
            if v2:
                stride = 2 if (u == units - 1 and stage < 3) else 1
            else:
                stride = 2 if (u == 0 and stage > 0) else 1
            inp = x
            short = n.conv(x, depth * 4, 1, stride) if u == 0 else (n.pool(x, 1, stride) if stride > 1 else x)
            y = n.conv(x, depth, 1, 1 if v2 else stride)
            y = n.conv(y, depth, 3, stride if v2 else 1)
            y = n.conv(y, depth * 4, 1)
            x = n.add(y, short)
            del inp
    return _with_head(n, x, classes)


def _with_head(n, x, classes):
    x = n.mean(x)
    x = n.fc(x, classes)
    n.softmax(x)
    return n


def vgg(depth, size=224, classes=1000) -> Net:
    n = Net(f"VGG{depth}/{size}", size)
    per_stage = {16: (2, 2, 3, 3, 3), 19: (2, 2, 4, 4, 4)}[depth]
    x = n.input
    for reps, c in zip(per_stage, (64, 128, 256, 512, 512)):
        for _ in range(reps):
            x = n.conv(x, c, 3)
        x = n.pool(x, 2, 2)
    x = n.reshape(x)
    x = n.fc(x, 4096)
    x = n.fc(x, 4096)
    x = n.fc(x, classes)
    n.softmax(x)
    return n


def squeezenet_1_1(size=224, classes=1000) -> Net:
    n = Net(f"SqueezeNet 1.1/{size}", size)
    x = n.conv(n.input, 64, 3, 2, pad="valid")
    x = n.pool(x, 3, 2)

    def fire(x, s, e):
        sq = n.conv(x, s, 1)
        return n.concat([n.conv(sq, e, 1), n.conv(sq, e, 3)])

    x = fire(x, 16, 64)
    x = fire(x, 16, 64)
    x = n.pool(x, 3, 2)
    x = fire(x, 32, 128)
    x = fire(x, 32, 128)
    x = n.pool(x, 3, 2)
    for s, e in ((48, 192), (48, 192), (64, 256), (64, 256)):
        x = fire(x, s, e)
    x = n.conv(x, classes, 1)
    x = n.mean(x)
    n.softmax(x)
    return n


def densenet121(size=224, classes=1000) -> Net:
    n = Net(f"DenseNet-121/{size}", size)
    x = n.conv(n.input, 64, 7, 2)
    x = n.pool(x, 3, 2, pad="same")
    for b, layers in enumerate((6, 12, 24, 16)):
        feats = [x]
        for _ in range(layers):
            y = n.conv(x, 128, 1)
            y = n.conv(y, 32, 3)
            feats.append(y)
            x = n.concat([x, y])
        if b < 3:
            x = n.conv(x, x[2] // 2, 1)
            x = n.pool(x, 2, 2, "AVERAGE_POOL_2D")
    return _with_head(n, x, classes)


def _inc4_stem(n, x):
    x = n.conv(x, 32, 3, 2, pad="valid")
    x = n.conv(x, 32, 3, pad="valid")
    x = n.conv(x, 64, 3)
    x = n.concat([n.pool(x, 3, 2), n.conv(x, 96, 3, 2, pad="valid")])
    a = n.conv(n.conv(x, 64, 1), 96, 3, pad="valid")
    b = n.conv(x, 64, 1)
    b = n.conv(b, 64, 7, kw=1)
    b = n.conv(b, 64, 1, kw=7)
    b = n.conv(b, 96, 3, pad="valid")
    x = n.concat([a, b])
    return n.concat([n.conv(x, 192, 3, 2, pad="valid"), n.pool(x, 3, 2)])


def inception_v4(size=299, classes=1001) -> Net:
    n = Net(f"Inception v4/{size}", size)
    x = _inc4_stem(n, n.input)
    for _ in range(4):                                                    # Inception-A
        a = n.conv(x, 96, 1)
        b = n.conv(n.conv(x, 64, 1), 96, 3)
        c = n.conv(n.conv(n.conv(x, 64, 1), 96, 3), 96, 3)
        d = n.conv(n.pool(x, 3, 1, "AVERAGE_POOL_2D", pad="same"), 96, 1)
        x = n.concat([a, b, c, d])
    a = n.conv(x, 384, 3, 2, pad="valid")                                 # Reduction-A
    b = n.conv(n.conv(n.conv(x, 192, 1), 224, 3), 256, 3, 2, pad="valid")
    x = n.concat([a, b, n.pool(x, 3, 2)])
    for _ in range(7):                                                    # Inception-B
        a = n.conv(x, 384, 1)
        b = n.conv(n.conv(n.conv(x, 192, 1), 224, 1, kw=7), 256, 7, kw=1)
        c = n.conv(x, 192, 1)
        for cout, (kh, kw) in ((192, (7, 1)), (224, (1, 7)), (224, (7, 1)), (256, (1, 7))):
            c = n.conv(c, cout, kh, kw=kw)
        d = n.conv(n.pool(x, 3, 1, "AVERAGE_POOL_2D", pad="same"), 128, 1)
        x = n.concat([a, b, c, d])
    a = n.conv(n.conv(x, 192, 1), 192, 3, 2, pad="valid")                 # Reduction-B
    b = n.conv(n.conv(n.conv(x, 256, 1), 256, 1, kw=7), 320, 7, kw=1)
    b = n.conv(b, 320, 3, 2, pad="valid")
    x = n.concat([a, b, n.pool(x, 3, 2)])
    for _ in range(3):                                                    # Inception-C
        a = n.conv(x, 256, 1)
        b = n.conv(x, 384, 1)
        b1, b2 = n.conv(b, 256, 1, kw=3), n.conv(b, 256, 3, kw=1)
        c = n.conv(n.conv(n.conv(x, 384, 1), 448, 3, kw=1), 512, 1, kw=3)
        c1, c2 = n.conv(c, 256, 1, kw=3), n.conv(c, 256, 3, kw=1)
        d = n.conv(n.pool(x, 3, 1, "AVERAGE_POOL_2D", pad="same"), 256, 1)
        x = n.concat([a, b1, b2, c1, c2, d])
    return _with_head(n, x, classes)


def inception_resnet_v2(size=299, classes=1001) -> Net:
    n = Net(f"Inception-ResNet v2/{size}", size)
    x = n.conv(n.input, 32, 3, 2, pad="valid")                           # TF-slim's stem
    x = n.conv(x, 32, 3, pad="valid")
    x = n.conv(x, 64, 3)
    x = n.pool(x, 3, 2)
    x = n.conv(x, 80, 1, pad="valid")
    x = n.conv(x, 192, 3, pad="valid")
    x = n.pool(x, 3, 2)
    a = n.conv(x, 96, 1)                                                  # Mixed_5b
    b = n.conv(n.conv(x, 48, 1), 64, 5)
    c = n.conv(n.conv(n.conv(x, 64, 1), 96, 3), 96, 3)
    d = n.conv(n.pool(x, 3, 1, "AVERAGE_POOL_2D", pad="same"), 64, 1)
    x = n.concat([a, b, c, d])
    for _ in range(10):                                                   # block35
        a = n.conv(x, 32, 1)
        b = n.conv(n.conv(x, 32, 1), 32, 3)
        c = n.conv(n.conv(n.conv(x, 32, 1), 48, 3), 64, 3)
        y = n.conv(n.concat([a, b, c]), x[2], 1)
        x = n.add(x, y)
    a = n.conv(x, 384, 3, 2, pad="valid")                                 # Mixed_6a
    b = n.conv(n.conv(n.conv(x, 256, 1), 256, 3), 384, 3, 2, pad="valid")
    x = n.concat([a, b, n.pool(x, 3, 2)])
    for _ in range(20):                                                   # block17
        a = n.conv(x, 192, 1)
        b = n.conv(n.conv(n.conv(x, 128, 1), 160, 1, kw=7), 192, 7, kw=1)
        y = n.conv(n.concat([a, b]), x[2], 1)
        x = n.add(x, y)
    a = n.conv(n.conv(x, 256, 1), 384, 3, 2, pad="valid")                 # Mixed_7a
    b = n.conv(n.conv(x, 256, 1), 288, 3, 2, pad="valid")
    c = n.conv(n.conv(n.conv(x, 256, 1), 288, 3), 320, 3, 2, pad="valid")
    x = n.concat([a, b, c, n.pool(x, 3, 2)])
    for _ in range(10):                                                   # block8
        a = n.conv(x, 192, 1)
        b = n.conv(n.conv(n.conv(x, 192, 1), 224, 1, kw=3), 256, 3, kw=1)
        y = n.conv(n.concat([a, b]), x[2], 1)
        x = n.add(x, y)
    x = n.conv(x, 1536, 1)
    return _with_head(n, x, classes)


# EfficientNet-EdgeTPU: (repeats, kernel, stride, expand, out, fused) of each block group; the first
# group has no skip connection (tensorflow/tpu efficientnet_edgetpu_builder.py block strings)
_EDGETPU_BLOCKS = ((1, 3, 1, 4, 24, True), (2, 3, 2, 8, 32, True), (4, 3, 2, 8, 48, True), (5, 5, 2, 8, 96, False),
                   (4, 5, 1, 8, 144, False), (2, 5, 2, 8, 192, False))


def efficientnet_edgetpu(variant="S", classes=1001) -> Net:
    depth, size = {"S": (1.0, 224), "M": (1.1, 240)}[variant]
    n = Net(f"EfficientNet-EdgeTPU-{variant}/{size}", size)
    x = n.conv(n.input, 32, 3, 2)
    first = True
    for reps, k, s, e, cout, fused in _EDGETPU_BLOCKS:
        for r in range(int(math.ceil(reps * depth))):
            inp = x
            stride = s if r == 0 else 1
            if fused:
                x = n.conv(x, x[2] * e, k, stride)
            else:
                x = n.conv(x, x[2] * e, 1)
                x = n.dw(x, k, stride)
            x = n.conv(x, cout, 1)
            if not first and stride == 1 and inp[2] == cout:
                x = n.add(x, inp)
            first = False
    x = n.conv(x, 1280, 1)
    return _with_head(n, x, classes)


def _jacinto_base(n, x, strides, dilations):
    x = n.conv(x, 32, 5, strides[0])
    x = n.conv(x, 32, 3, groups=4)
    outs = {}
    for stage, c in enumerate((64, 128, 256, 512), start=1):
        if strides[stage] > 1:
            x = n.pool(x, strides[stage], strides[stage])
        x = n.conv(x, c, 3, dilation=dilations[stage])
        x = n.conv(x, c, 3, groups=4, dilation=dilations[stage])
        outs[stage] = x
    return x, outs


def jacintonet11_v2(size=224, classes=1000) -> Net:
    n = Net(f"JacintoNet11 v2/{size}", size)
    x, _ = _jacinto_base(n, n.input, (2, 2, 2, 2, 2), (1, 1, 1, 1, 1))
    x = n.mean(x)
    x = n.fc(x, classes)
    n.softmax(x)
    return n


def jsegnet21(h=512, w=1024, classes=5) -> Net:
    n = Net(f"JSegNet21/{w}x{h}", h, w)
    x, outs = _jacinto_base(n, n.input, (2, 2, 2, 2, 1), (1, 1, 1, 1, 2))
    up = n.deconv_dw(n.conv(x, 64, 3, groups=2, dilation=4))
    side = n.conv(outs[2], 64, 3, groups=2)
    x = n.add(up, side)
    x = n.conv(x, 64, 3)
    for _ in range(3):
        x = n.conv(x, 64, 3, dilation=4)
    x = n.conv(x, classes, 3)
    for _ in range(3):
        x = n.deconv_dw(x)
    return n


# name in the published tables → builder (None: not built here; the reason is in cost_model_check.py)
NETWORKS = {
    # Coral, "Edge TPU performance benchmarks", table 1
    "MobileNet v1 (224x224)": lambda: mobilenet_v1(224),
    "MobileNet v2 (224x224)": lambda: mobilenet_v2(224),
    "Inception v1 (224x224)": lambda: inception_v1(224),
    "Inception v4 (299x299)": lambda: inception_v4(299),
    "Inception-ResNet V2 (299x299)": lambda: inception_resnet_v2(299),
    "ResNet-50 V1 (299x299)": lambda: _resnet("ResNet-50 v1/299", 299, (3, 4, 6, 3), v2=False),
    "ResNet-50 V2 (299x299)": lambda: _resnet("ResNet-50 v2/299", 299, (3, 4, 6, 3), v2=True),
    "ResNet-152 V2 (299x299)": lambda: _resnet("ResNet-152 v2/299", 299, (3, 8, 36, 3), v2=True),
    "SqueezeNet (224x224)": lambda: squeezenet_1_1(224),
    "VGG16 (224x224)": lambda: vgg(16),
    "VGG19 (224x224)": lambda: vgg(19),
    "DenseNet (224x224)": lambda: densenet121(224),
    "EfficientNet-EdgeTpu-S": lambda: efficientnet_edgetpu("S"),
    "EfficientNet-EdgeTpu-M": lambda: efficientnet_edgetpu("M"),
    "Unet Mv2 (128x128)": None,
    "DeepLab V3 (513x513)": None,
    "MobileNet v1 SSD (224x224)": None,
    "MobileNet v2 SSD (224x224)": None,
    # TI, TIDL "Performance data", "Computation performance of verified networks"
    "MobileNetV1": lambda: mobilenet_v1(224),
    "MobileNetV2": lambda: mobilenet_v2(224),
    "SqueezeNet1.1": lambda: squeezenet_1_1(227),
    "InceptionNetV1": lambda: inception_v1(224),
    "JacintoNet11_v2": lambda: jacintonet11_v2(224),
    "JSegNet21": lambda: jsegnet21(512, 1024),
    "JDetNet": None,
}


def build(name: str) -> Net:
    """The layer list of the network ``name`` (a row name of ``benchmarks/data/published_timings.json``)."""
    make = NETWORKS.get(name)
    if make is None:
        raise KeyError(f"no layer list for {name!r}")
    return make()


if __name__ == "__main__":
    for name, make in NETWORKS.items():
        if make is None:
            print(f"{name:32s} not built")
            continue
        net = make()
        ti = f"   TI lists {TI_MMAC[name]:.1f} MMAC" if name in TI_MMAC else ""
        print(f"{name:32s} {len(net.layers):4d} layers {net.macs / 1e6:9.1f} MMAC "
              f"{net.weight_bytes / 2**20:7.2f} MB weights{ti}")
