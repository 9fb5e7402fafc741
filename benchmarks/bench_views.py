"""Time the graph views on big graphs, graphviz's ``dot`` included (goal: ≤ 2 s per view).

    python benchmarks/bench_views.py [--repeat 3] [--nodes 1000]

Graphs: the corpus's largest (``face_landmark_with_attention``, 712 operators) and a generated graph of
1 000 operators (residual blocks with squeeze-excite branches, big average pools and resizes the tidl
target refuses, so the plan has partitions, reasons and crossing edges).  For each: the model view and
the tidl plan view, each timed as build (view model) + dot (SVG, the ``dot`` process) + html (the
page around it); then the collapsed view (chains of ≥ 3) and a focus (radius 3).  Times are the best
of N runs; each run builds a new view, so ``dot`` really runs every time.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from workbench import corpus, load
from workbench.partition import partition
from workbench.schema import (
    ActivationFunctionType as A,
)
from workbench.schema import (
    AddOptions,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    ModelBuilder,
    MulOptions,
    Padding,
    Pool2DOptions,
)
from workbench.schema import (
    BuiltinOperator as B,
)
from workbench.viz import op_graph

GOAL_S = 2.0


def generated_model(n_ops: int = 1000):
    """About ``n_ops`` operators: blocks of CONV(+RELU6) → DEPTHWISE → RELU → CONV → ADD(skip); every
    third block a squeeze-excite branch (AVERAGE_POOL 16x16 → CONV → LOGISTIC → MUL), every fifth a
    RESIZE_BILINEAR."""
    b = ModelBuilder("bench_views generated graph")
    c = 8
    shape = [1, 16, 16, c]
    x = b.input("x", shape)
    w = b.constant("w", np.full((c, 1, 1, c), 0.01, np.float32))
    dw = b.constant("dw", np.full((1, 3, 3, c), 0.1, np.float32))
    bias = b.constant("b", np.zeros(c, np.float32))
    size = b.constant("size", np.array([16, 16], np.int32))
    conv = Conv2DOptions(padding=Padding.SAME, stride_w=1, stride_h=1, dilation_w_factor=1, dilation_h_factor=1)
    conv6 = Conv2DOptions(padding=Padding.SAME, stride_w=1, stride_h=1, dilation_w_factor=1, dilation_h_factor=1,
                          fused_activation_function=A.RELU6)
    dwo = DepthwiseConv2DOptions(padding=Padding.SAME, stride_w=1, stride_h=1, depth_multiplier=1,
                                 dilation_w_factor=1, dilation_h_factor=1)
    pool = Pool2DOptions(padding=Padding.VALID, stride_w=1, stride_h=1, filter_width=16, filter_height=16)
    k = 0

    def t(s=shape):
        nonlocal k
        k += 1
        return b.tensor(f"t{k}", s)

    cur, block = x, 0
    while len(b.operators) < n_ops:
        skip = cur
        y = t()
        b.op(B.CONV_2D, [cur, w, bias], [y], conv6)
        cur = y
        y = t()
        b.op(B.DEPTHWISE_CONV_2D, [cur, dw, bias], [y], dwo)
        cur = y
        y = t()
        b.op(B.RELU, [cur], [y])
        cur = y
        if block % 3 == 2:
            p = t([1, 1, 1, c])
            b.op(B.AVERAGE_POOL_2D, [cur], [p], pool)
            q = t([1, 1, 1, c])
            b.op(B.CONV_2D, [p, w, bias], [q], conv)
            r = t([1, 1, 1, c])
            b.op(B.LOGISTIC, [q], [r])
            y = t()
            b.op(B.MUL, [cur, r], [y], MulOptions())
            cur = y
        y = t()
        b.op(B.CONV_2D, [cur, w, bias], [y], conv)
        cur = y
        if block % 5 == 4:
            y = t()
            b.op(B.RESIZE_BILINEAR, [cur, size], [y])
            cur = y
        y = t()
        b.op(B.ADD, [cur, skip], [y], AddOptions())
        cur = y
        block += 1
    b.output(cur)
    return b.build()


def _best(fn, repeat: int):
    best, out = None, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t0
        best = dt if best is None or dt < best else best
    return best, out


def _timed_view(make, repeat: int):
    """(build s, dot s, html s, view) — best of ``repeat`` each, a fresh view every time."""
    tb, view = _best(make, repeat)
    td = _best(lambda: make().svg(), repeat)[0] - tb
    th, _ = _best(lambda: view.html(), repeat)
    return tb, max(td, 0.0), th, view


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--nodes", type=int, default=1000, help="operators in the generated graph")
    args = ap.parse_args()
    graphs = [("face_landmark_with_attention", load(corpus.path("face_landmark_with_attention"))),
              (f"generated {args.nodes}", generated_model(args.nodes))]
    print(f"seconds, best of {args.repeat}; total = build + dot + html; goal ≤ {GOAL_S:g} s")
    print(f"{'graph':<30}{'view':<22}{'ops':>6}{'nodes':>7}{'edges':>7}{'build':>8}{'dot':>8}{'html':>8}"
          f"{'total':>8}  verdict")
    worst = 0.0
    for name, model in graphs:
        ops = len(model.subgraphs[0].operators)
        plan = partition(model, "tidl", "tidl")
        views = [("model", lambda m=model: op_graph(m)),
                 ("plan tidl/tidl", lambda p=plan: op_graph(p)),
                 ("plan, collapsed ≥3", lambda p=plan: op_graph(p).collapse(3)),
                 ("plan, focus r=3", lambda p=plan, c=ops // 2: op_graph(p).focus(c, 3))]
        for vname, make in views:
            tb, td, th, view = _timed_view(make, args.repeat)
            total = tb + td + th
            worst = max(worst, total)
            print(f"{name:<30}{vname:<22}{ops:>6}{len(view.nodes):>7}{len(view.edges):>7}{tb:>8.3f}{td:>8.3f}"
                  f"{th:>8.3f}{total:>8.3f}  {'ok' if total <= GOAL_S else 'SLOW'}")
    print(f"slowest view: {worst:.3f} s — {'within' if worst <= GOAL_S else 'ABOVE'} the {GOAL_S:g} s goal")


if __name__ == "__main__":
    main()
