"""Time the partitioner on generated graphs of 1k / 10k / 100k nodes (goal: ≤ 0.5 s for 10k, ~linear).

    python benchmarks/bench_partition.py [--sizes 1000 10000 100000]

The graph is a residual chain (x → CONV_2D → RELU/RESIZE_BILINEAR → ADD(skip) ...) so that about one
node in seven is unsupported by the tidl target and the partitioner has real work to do.  Times are
for GraphView construction, then each strategy (target checks included).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from workbench.partition import GraphView, partition
from workbench.schema import BuiltinOperator as B, Conv2DOptions, ModelBuilder, Padding


def generated_model(n_nodes: int):
    b = ModelBuilder()
    x = b.input("x", [1, 8, 8, 4])
    w = b.constant("w", np.ones((4, 1, 1, 4), np.float32))
    bias = b.constant("b", np.zeros(4, np.float32))
    size = b.constant("size", np.array([8, 8], np.int32))
    cur, skip, k = x, x, 0
    while len(b.operators) < n_nodes:
        y = b.tensor(f"t{k}", [1, 8, 8, 4])
        kind = k % 7
        if kind in (0, 3):
            b.op(B.CONV_2D, [cur, w, bias], [y], Conv2DOptions(padding=Padding.SAME, stride_w=1, stride_h=1,
                                                               dilation_w_factor=1, dilation_h_factor=1))
        elif kind == 5:
            b.op(B.RESIZE_BILINEAR, [cur, size], [y])
        elif kind == 6:
            b.op(B.ADD, [cur, skip], [y])
            skip = y
        else:
            b.op(B.RELU, [cur], [y])
        cur, k = y, k + 1
    b.output(cur)
    return b.subgraph(), b


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="*", default=[1000, 10000, 100000])
    args = ap.parse_args()
    from workbench.schema import CLASSES

    print(f"{'nodes':>8} {'graph':>8} " + " ".join(f"{s:>16}" for s in ("tflite/xnnpack", "tidl/tidl",
                                                                        "edgetpu/edgetpu", "tflite/tidl")))
    for n in args.sizes:
        sg, b = generated_model(n)
        model = CLASSES["Model"](version=3, operator_codes=tuple(b.codes), subgraphs=(sg,), buffers=tuple(b.buffers))
        t0 = time.perf_counter()
        g = GraphView(model)
        tg = time.perf_counter() - t0
        row = []
        for target, strategy in (("xnnpack", "tflite"), ("tidl", "tidl"), ("edgetpu", "edgetpu"), ("tidl", "tflite")):
            t0 = time.perf_counter()
            plan = partition(model, target, strategy, graph=g)
            row.append(f"{time.perf_counter() - t0:7.3f}s ({len(plan.partitions):>5}P)")
        print(f"{n:>8} {tg:7.3f}s " + " ".join(f"{r:>16}" for r in row), flush=True)


if __name__ == "__main__":
    main()
