"""Time the partitioner on generated graphs of 1k / 10k / 100k nodes (goal: ≤ 0.5 s for 10k, ~linear).

    python benchmarks/bench_partition.py [--sizes 1000 10000 100000]

The graph is a residual chain (x → CONV_2D → RELU/RESIZE_BILINEAR → ADD(skip) ...) so that about one
node in seven is unsupported by the tidl target and the partitioner has real work to do.  Times are
for GraphView construction, then each strategy (target checks included); then the growth factor from
one size to the next (linear = the size ratio) and the 10k verdict (GraphView + strategy ≤ 0.5 s).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from workbench.partition import GraphView, partition
from workbench.schema import BuiltinOperator as B
from workbench.schema import Conv2DOptions, ModelBuilder, Padding


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


RUNS = (("xnnpack", "tflite"), ("tidl", "tidl"), ("edgetpu", "edgetpu"), ("tidl", "tflite"))
GOAL_S = 0.5          # for 10k nodes, GraphView + strategy


def _best(fn, repeat: int):
    best, out = None, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="*", default=[1000, 10000, 100000])
    ap.add_argument("--repeat", type=int, default=3, help="best of N (at most 2 above 10k nodes)")
    args = ap.parse_args()
    from workbench.schema import CLASSES

    names = ["tflite/xnnpack", "tidl/tidl", "edgetpu/edgetpu", "tflite/tidl"]
    print("seconds, best of N; strategy columns exclude the shared GraphView; (kP) = partitions")
    print(f"{'nodes':>8} {'graph':>8} " + " ".join(f"{s:>16}" for s in names))
    times: dict[int, list[float]] = {}
    for n in args.sizes:
        sg, b = generated_model(n)
        model = CLASSES["Model"](version=3, operator_codes=tuple(b.codes), subgraphs=(sg,), buffers=tuple(b.buffers))
        repeat = args.repeat if n <= 10000 else min(args.repeat, 2)
        tg, g = _best(lambda: GraphView(model), repeat)
        row, ts = [], [tg]
        for target, strategy in RUNS:
            dt, plan = _best(lambda: partition(model, target, strategy, graph=g), repeat)
            ts.append(dt)
            row.append(f"{dt:7.3f}s ({len(plan.partitions):>5}P)")
        times[n] = ts
        print(f"{n:>8} {tg:7.3f}s " + " ".join(f"{r:>16}" for r in row), flush=True)
    sizes = sorted(times)
    for a, b in zip(sizes, sizes[1:]):
        ratio = [tb / ta if ta > 0 else float("nan") for ta, tb in zip(times[a], times[b])]
        print(f"{'x' + str(b // a if a else 0):>8} " + f"{ratio[0]:7.1f}x "
              + " ".join(f"{r:>15.1f}x" for r in ratio[1:])
              + f"   (growth {a} -> {b} nodes; linear = {b / a:.0f}x)")
    if 10000 in times:
        tg = times[10000][0]
        verdict = ", ".join(f"{name} {tg + t:.3f}s" for name, t in zip(names, times[10000][1:]))
        ok = all(tg + t <= GOAL_S for t in times[10000][1:])
        print(f"10k nodes, GraphView + strategy: {verdict} -> goal <= {GOAL_S} s {'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
