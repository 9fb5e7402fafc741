"""The cost model checked against published accelerator timings: fit on half the networks, report the rest.

    .venv/bin/python benchmarks/cost_model_check.py                  # fit, check, write the results
    .venv/bin/python benchmarks/cost_model_check.py --write-targets  # … and put the fitted figures into
                                                                     #     targets/edgetpu.json and am5729.json

For two targets this script takes published inference times (``benchmarks/data/published_timings.json``,
every row with its source) and the layer lists of the same networks (``benchmarks/networks.py``, built in
code), models every network with ``workbench.partition.cost`` exactly as the partitioner models one
partition holding the whole network (its nodes, its input and output copies, its weights beyond the
device's memory streamed from the host), fits at most four figures of the target on one half of the
networks and reports how far the model is off on the other half:

* ``edgetpu`` against Coral's "Edge TPU performance benchmarks", table 1, column "Desktop CPU + USB
  Accelerator (USB 3.0) with Edge TPU".  Fitted: ``conv_efficiency``, ``depthwise_efficiency``,
  ``op_overhead_us`` and ``bandwidth_mb_s`` (the USB link, over which weights beyond the 8 MB of on-chip
  memory are read on every run).  Kept: 4000 MACs/cycle at 500 MHz (Coral's 4 TOPS, 2 TMAC/s),
  ``memory_mb`` 8 and the other figures of the file.
* ``am5729`` against TI's TIDL "Performance data", table "Computation performance of verified networks",
  column "EVE using dense model" (one EVE at 650 MHz).  Fitted: ``conv_efficiency``,
  ``depthwise_efficiency`` and ``op_overhead_us``.  Kept: 16 MACs/cycle (TI: "Each EVE core can do 16 MAC
  operation per cycle", same page, "Mapping to EVE capabilities") at 650 MHz, ``memory_bandwidth_mb_s``
  1960 (the EVE's DMA traffic to DDR at TI's LMBench bw_mem-bcopy figure for the AM572x EVM, cited in
  ``benchmarks/table1.py``) and the other figures of the file.

Revision, said plainly: the first run fitted a fourth am5729 figure, ``memory_bandwidth_mb_s``, too.  Four
figures on three networks are not determined by them; that run put the EVE's memory at 109 MB/s and its
per-layer overhead at 0, and missed the goal (:data:`FIRST_RUN`).  The memory bandwidth was then fixed
to TI's measured figure.  That change was made AFTER the held-out errors of the first run were seen, so
the am5729 held-out figures are not a clean test: read them as an upper bound on how good the model is.
Nothing else (the split, the edgetpu figures, the layer lists) changed after the first run.

The split (:data:`SPLITS`) was chosen and written down before any error was computed, by one rule: sort a
target's networks by their published time and give every other one, starting with the fastest, to the
fit.  The rule spreads both halves over the whole range of sizes (so neither half is only small or only
large networks) and it does not depend on the model.  Networks without a layer list here are left out of
both halves (:data:`NOT_MODELED` says why).

A second look, declared on 2026-11-29 before any of its errors was computed (:data:`SECOND_LOOK`).  The
goal above was missed, and the am5729 held-out half has been seen, so no change to the model can be
tested on it cleanly.  Instead the same model, unchanged, is checked on columns of TI's table whose
errors had never been computed:

* ``dsp``: one C66x DSP, column "DSP using dense model".  Kept: 750 MHz (TI's page), 32 MACs per cycle
  (TI, "TMS320C66x DSP CPU and Instruction Set Reference Guide", SPRUGH7: 32 16-bit multiplies per
  cycle), memory bandwidth 1960 MB/s (the same DDR).  Fitted: ``conv_efficiency``,
  ``depthwise_efficiency``, ``op_overhead_us`` on half the column, split by the same rule (sorted by
  published time, every other one from the fastest fitted); reported on the other half.
* ``eve-sparse`` and ``dsp-sparse``: columns "EVE / DSP using sparse model" (two networks each).  Nothing
  is fitted: the dense figures, with every convolution's multiply-accumulates scaled by the share of
  non-zero weights, 1 - sparsity, from TI's table (TI's TIDL page: sparse weights give "3x-4x
  performance boost of convolutions layers").
These results are reported beside the goal, not in it, and nothing in the model, the split or the goal
changes because of them.

Goal, per target, on the held-out half: median |modeled - published| / published <= 25 %, and no network
off by more than 2x.  The script exits 0 only when both targets meet it.  It writes
``benchmarks/results/cost_model_check.{txt,json,png}``; the PNG needs matplotlib (``pip install -e
'.[bench]'``, which ``make bench`` does).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import networks  # noqa: E402  (benchmarks/networks.py)

from workbench.partition.cost import MB, NodeWork, partition_cost  # noqa: E402

DATA = HERE / "data" / "published_timings.json"
RESULTS = HERE / "results"
TARGETS = ROOT / "workbench" / "partition" / "targets"
GOAL_MEDIAN, GOAL_WORST = 0.25, 2.0

CHECKS = {
    "edgetpu": {"device": "edgetpu-usb", "fitted": ("conv_efficiency", "depthwise_efficiency", "op_overhead_us",
                                                    "bandwidth_mb_s"),
                "fixed": {"macs_per_cycle": 4000, "clock_mhz": 500}},
    "am5729": {"device": "eve-dense", "fitted": ("conv_efficiency", "depthwise_efficiency", "op_overhead_us"),
               "fixed": {"macs_per_cycle": 16, "clock_mhz": 650, "memory_bandwidth_mb_s": 1960}},
}

# Written down before any error was computed (the rule is in the module docstring): sorted by published
# time, every other network from the fastest on is fitted, the others are held out.
SPLITS = {
    "edgetpu": {   # USB times (ms): 2.1, 2.4, 2.6, 3.4, 5.1, 8.7, 20, 49, 50, 57, 85, 128, 296, 308
        "fit": ("SqueezeNet (224x224)", "MobileNet v2 (224x224)", "EfficientNet-EdgeTpu-S", "DenseNet (224x224)",
                "ResNet-50 V2 (299x299)", "Inception v4 (299x299)", "VGG16 (224x224)"),
        "held_out": ("MobileNet v1 (224x224)", "Inception v1 (224x224)", "EfficientNet-EdgeTpu-M",
                     "ResNet-50 V1 (299x299)", "Inception-ResNet V2 (299x299)", "ResNet-152 V2 (299x299)",
                     "VGG19 (224x224)"),
    },
    "am5729": {    # one EVE, dense (ms): 146, 155, 180, 181, 362, 1005.49
        "fit": ("MobileNetV2", "SqueezeNet1.1", "InceptionNetV1"),
        "held_out": ("MobileNetV1", "JacintoNet11_v2", "JSegNet21"),
    },
}
# the first run (the model as first declared: am5729 fitted memory_bandwidth_mb_s as well), kept as it came out
FIRST_RUN = {
    "edgetpu": {"figures": {"conv_efficiency": 0.198799, "depthwise_efficiency": 1.0, "op_overhead_us": 22.9537,
                            "bandwidth_mb_s": 574.581},
                "held_out_median_error": 0.1545, "held_out_worst_ratio": 2.1859, "goal_met": False},
    "am5729": {"figures": {"conv_efficiency": 0.427942, "depthwise_efficiency": 0.155992,
                           "op_overhead_us": 7.52608e-11, "memory_bandwidth_mb_s": 109.349},
               "held_out_median_error": 0.4161, "held_out_worst_ratio": 2.1178, "goal_met": False},
}
# The second look (module docstring), declared before any of its errors was computed.
SECOND_LOOK = {
    "declared": "2026-11-29",
    "dsp": {"device": "dsp-dense", "fitted": ("conv_efficiency", "depthwise_efficiency", "op_overhead_us"),
            "fixed": {"macs_per_cycle": 32, "clock_mhz": 750, "memory_bandwidth_mb_s": 1960},
            # DSP times (ms): 370.64, 409, 433.73, 717.11, 1454.91, 3825.95
            "fit": ("JacintoNet11_v2", "SqueezeNet1.1", "InceptionNetV1"),
            "held_out": ("MobileNetV2", "MobileNetV1", "JSegNet21")},
    "sparse": {"eve-sparse": "am5729", "dsp-sparse": "dsp"},   # column -> whose dense figures predict it
}
NOT_MODELED = {
    "Unet Mv2 (128x128)": "no layer list here (the decoder's shapes were not read for this check)",
    "DeepLab V3 (513x513)": "no layer list here; its Edge TPU model leaves part of the graph on the CPU",
    "MobileNet v1 SSD (224x224)": "detection head and post-processing (a CPU custom op) not built here",
    "MobileNet v2 SSD (224x224)": "detection head and post-processing (a CPU custom op) not built here",
    "JDetNet": "no EVE-only time published (EVE + DSP only)",
}


def published(device: str) -> dict:
    rows = json.loads(DATA.read_text(encoding="utf-8"))["rows"]
    return {r["network"]: r["time_ms"] for r in rows if r["device"] == device}


def network_work(name: str, density: float = 1.0):
    """The nodes (NodeWork: MACs, op, bytes), the input and output bytes and the weight bytes of ``name``;
    ``density`` < 1 scales every convolution's multiply-accumulates (a sparse model: only its non-zero
    weights are multiplied)."""
    net = networks.build(name)
    nodes = [NodeWork(la.macs * (density if la.op == "CONV_2D" else 1.0), la.op, la.in_bytes, la.out_bytes,
                      la.weight_bytes) for la in net.layers]
    out = net.layers[-1].out_bytes
    return nodes, [math.prod(net.input)], [out], net.weight_bytes


def modeled_ms(cost: dict, work) -> float:
    """One run of the whole network as one partition on the target (what the partitioner would estimate):
    its nodes, its input and output copies, and the weights beyond ``memory_mb`` streamed from the host."""
    nodes, ins, outs, weights = work
    free = cost.get("memory_mb", 0.0) * MB or float("inf")
    streamed = int(max(0, weights - free))
    return partition_cost(cost, nodes, ins, outs, streamed).total_us / 1000.0


# ------------------------------------------------------------------------------------------------
# the fit: least squares on log(modeled / published), Nelder-Mead in a transformed space


_EFF = ("conv_efficiency", "depthwise_efficiency", "other_efficiency")


def _to_cost(base: dict, names, z) -> dict:
    cost = dict(base)
    for k, v in zip(names, z):
        cost[k] = 1.0 / (1.0 + math.exp(-v)) if k in _EFF else math.exp(v)   # efficiencies in (0, 1)
    return cost


def _loss(base, names, z, works, times) -> float:
    cost = _to_cost(base, names, z)
    return sum(math.log(modeled_ms(cost, w) / t) ** 2 for w, t in zip(works, times))


def _nelder_mead(f, x0, step=1.0, iters=600):
    n = len(x0)
    pts = [list(x0)] + [[x0[j] + (step if j == i else 0.0) for j in range(n)] for i in range(n)]
    vals = [f(p) for p in pts]
    for _ in range(iters):
        order = sorted(range(n + 1), key=vals.__getitem__)
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        c = [sum(p[j] for p in pts[:-1]) / n for j in range(n)]
        r = [c[j] + (c[j] - pts[-1][j]) for j in range(n)]
        fr = f(r)
        if fr < vals[0]:
            e = [c[j] + 2 * (c[j] - pts[-1][j]) for j in range(n)]
            fe = f(e)
            pts[-1], vals[-1] = (e, fe) if fe < fr else (r, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = r, fr
        else:
            k = [c[j] + 0.5 * (pts[-1][j] - c[j]) for j in range(n)]
            fk = f(k)
            if fk < vals[-1]:
                pts[-1], vals[-1] = k, fk
            else:
                pts = [pts[0]] + [[pts[0][j] + 0.5 * (p[j] - pts[0][j]) for j in range(n)] for p in pts[1:]]
                vals = [vals[0]] + [f(p) for p in pts[1:]]
    best = min(range(n + 1), key=vals.__getitem__)
    return pts[best], vals[best]


def fit(target: str, base: dict, spec: dict | None = None, split: dict | None = None) -> dict:
    spec, split = spec or CHECKS[target], split or SPLITS[target]
    times = published(spec["device"])
    works = [network_work(n) for n in split["fit"]]
    ts = [times[n] for n in split["fit"]]
    names = spec["fitted"]
    start = {"conv_efficiency": 0.0, "depthwise_efficiency": -1.0, "op_overhead_us": math.log(10.0),
             "bandwidth_mb_s": math.log(300.0), "memory_bandwidth_mb_s": math.log(2000.0)}
    best = None
    for shift in (0.0, -2.0, 2.0):           # a few starts; keep the best
        z0 = [start[k] + (shift if k not in _EFF else shift / 2) for k in names]
        z, v = _nelder_mead(lambda z: _loss(base, names, z, works, ts), z0)
        z, v = _nelder_mead(lambda z: _loss(base, names, z, works, ts), z, step=0.3)
        if best is None or v < best[1]:
            best = (z, v)
    cost = _to_cost(base, names, best[0])
    return {k: float(f"{cost[k]:.6g}") for k in names}


# ------------------------------------------------------------------------------------------------
# the check


def check(target: str, figures: dict, base: dict, spec: dict | None = None, split: dict | None = None) -> dict:
    spec, split = spec or CHECKS[target], split or SPLITS[target]
    cost = {**base, **figures}
    times = published(spec["device"])
    rows = []
    for half in ("fit", "held_out"):
        for name in split[half]:
            m, p = modeled_ms(cost, network_work(name)), times[name]
            net = networks.build(name)
            rows.append({"network": name, "half": half, "published_ms": p, "modeled_ms": round(m, 4),
                         "error": round(abs(m - p) / p, 4), "ratio": round(m / p, 4),
                         "macs": net.macs, "weight_bytes": net.weight_bytes, "layers": len(net.layers)})
    held = [r for r in rows if r["half"] == "held_out"]
    median = statistics.median(r["error"] for r in held)
    worst = max(max(r["ratio"], 1 / r["ratio"]) for r in held)
    fitted_rows = [r for r in rows if r["half"] == "fit"]
    return {"target": target, "device": spec["device"], "figures": figures,
            "fixed": {k: v for k, v in cost.items() if k not in figures},
            "rows": rows, "held_out_median_error": round(median, 4), "held_out_worst_ratio": round(worst, 4),
            "fit_median_error": round(statistics.median(r["error"] for r in fitted_rows), 4),
            "goal_met": median <= GOAL_MEDIAN and worst <= GOAL_WORST}


def _source_of(vendor: str) -> dict:
    rows = json.loads(DATA.read_text(encoding="utf-8"))["rows"]
    return next(r["source"] for r in rows if r["vendor"] == vendor)


def _target_block(target: str, r: dict) -> list:
    src = _source_of("Coral" if target == "edgetpu" else "TI")
    lines = [f"{target}: published = {src['title']}, {src['table']} ({src['url']}), device {r['device']}",
             "  fitted: " + ", ".join(f"{k} {v:g}" for k, v in r["figures"].items()),
             "  kept:   " + ", ".join(f"{k} {v:g}" for k, v in r["fixed"].items()),
             f"  {'network':32s} {'half':9s} {'MMAC':>9s} {'weights MB':>10s} {'published':>10s} "
             f"{'modeled':>10s} {'error':>7s} {'ratio':>6s}"]
    for row in r["rows"]:
        lines.append(f"  {row['network']:32s} {row['half']:9s} {row['macs'] / 1e6:9.1f} "
                     f"{row['weight_bytes'] / MB:10.2f} {row['published_ms']:10.2f} {row['modeled_ms']:10.2f} "
                     f"{row['error']:7.1%} {row['ratio']:6.2f}")
    lines.append(f"  held out: median error {r['held_out_median_error']:.1%}, worst ratio "
                 f"{r['held_out_worst_ratio']:.2f}x -> goal {'MET' if r['goal_met'] else 'NOT met'}"
                 f"   (fit half: median error {r['fit_median_error']:.1%})")
    return lines + [""]


# USB 3.0 SuperSpeed signals at 5 Gbit/s with 8b/10b line coding (USB-IF, "Universal Serial Bus 3.0
# Specification", chapter 6, physical layer): at most 4 Gbit/s = 500 MB/s of payload, before any protocol cost.
USB3_PAYLOAD_B_PER_S = 500e6


def link_floor(result: dict, base: dict) -> list:
    """For every Edge TPU network: the least time its weights beyond the on-chip memory need to cross a USB
    3.0 link (:data:`USB3_PAYLOAD_B_PER_S`), whatever the chip does meanwhile.  A published time below it
    cannot hold for the network as built here: Coral's model must be a different one (fewer weights), or the
    published figure is not what it says.  Nothing here is fitted."""
    free = base.get("memory_mb", 0.0) * MB
    out = []
    for row in result["rows"]:
        streamed = max(0.0, row["weight_bytes"] - free)
        floor = streamed / USB3_PAYLOAD_B_PER_S * 1000.0
        out.append({"network": row["network"], "half": row["half"], "streamed_mb": round(streamed / MB, 2),
                    "floor_ms": round(floor, 2), "published_ms": row["published_ms"],
                    "below_floor": row["published_ms"] < floor})
    return out


# Two TI documents time the same network on the same kind of core: the SDK's table and the TIDL API
# guide's test log (whose EVEs run at 535 MHz, not 650: its EVE times are scaled by 535 / 650, as if all
# of the time were the EVE's clock cycles).  Which of the SDK's columns a test_tidl config matches: the
# config's DSP time is within 2 % of the SDK's sparse column for j11_v2 and jseg21 (so those are read as
# the sparse models); squeeze1_1 has only a dense column to compare with.
SAME_NETWORK = (("JacintoNet11_v2", "eve-535-tidlapi", "eve-sparse", 535 / 650),
                ("JacintoNet11_v2", "dsp-tidlapi", "dsp-sparse", 1.0),
                ("JSegNet21", "eve-535-tidlapi", "eve-sparse", 535 / 650),
                ("JSegNet21", "dsp-tidlapi", "dsp-sparse", 1.0),
                ("SqueezeNet1.1", "eve-535-tidlapi", "eve-dense", 535 / 650),
                ("SqueezeNet1.1", "dsp-tidlapi", "dsp-dense", 1.0))


def vendor_consistency() -> list:
    """How far apart two TI documents put the same network on the same core (:data:`SAME_NETWORK`):
    the spread a model cannot be expected to beat.  Nothing here is modeled or fitted."""
    times = {(r["network"], r["device"]): r["time_ms"]
             for r in json.loads(DATA.read_text(encoding="utf-8"))["rows"]}
    out = []
    for net, guide, sdk, scale in SAME_NETWORK:
        a, b = times[(net, guide)] * scale, times[(net, sdk)]
        out.append({"network": net, "guide_device": guide, "sdk_device": sdk, "guide_ms": times[(net, guide)],
                    "guide_ms_at_sdk_clock": round(a, 2), "sdk_ms": b, "ratio": round(a / b, 4)})
    return out


def second_look(results: dict, bases: dict) -> dict:
    """The checks declared in :data:`SECOND_LOOK`: TI's DSP column (fitted on half, checked on the other)
    and the sparse columns (nothing fitted)."""
    spec = {k: SECOND_LOOK["dsp"][k] for k in ("device", "fitted", "fixed")}
    split = {k: SECOND_LOOK["dsp"][k] for k in ("fit", "held_out")}
    base = {**bases["am5729"], **spec["fixed"]}
    for k in spec["fitted"]:
        base.pop(k, None)
    out = {"dsp": check("dsp", fit("dsp", base, spec, split), base, spec, split)}
    dense = {"am5729": {**bases["am5729"], **results["am5729"]["figures"]},
             "dsp": {**base, **out["dsp"]["figures"]}}
    rows = json.loads(DATA.read_text(encoding="utf-8"))["rows"]
    for column, whose in SECOND_LOOK["sparse"].items():
        out[column] = []
        for r in rows:
            if r["device"] != column:
                continue
            density = 1.0 - r["sparsity_pct"] / 100.0
            m = modeled_ms(dense[whose], network_work(r["network"], density))
            out[column].append({"network": r["network"], "sparsity_pct": r["sparsity_pct"],
                                "published_ms": r["time_ms"], "modeled_ms": round(m, 4),
                                "error": round(abs(m - r["time_ms"]) / r["time_ms"], 4),
                                "ratio": round(m / r["time_ms"], 4), "figures_of": whose})
    return out


def second_look_report(second: dict) -> list:
    lines = ["Second look (declared before any of its errors was computed; reported beside the goal, not in it)",
             "-" * 78]
    lines += _target_block("dsp", second["dsp"])
    for column in SECOND_LOOK["sparse"]:
        lines.append(f"{column}: nothing fitted; the dense figures of {SECOND_LOOK['sparse'][column]}, convolution "
                     f"MACs x (1 - sparsity)")
        for row in second[column]:
            lines.append(f"  {row['network']:32s} sparsity {row['sparsity_pct']:5.1f}% published "
                         f"{row['published_ms']:9.2f} modeled {row['modeled_ms']:9.2f} error {row['error']:6.1%} "
                         f"ratio {row['ratio']:5.2f}")
        lines.append("")
    return lines


def report(results: dict, second: dict | None = None, floor: list | None = None,
           consistency: list | None = None) -> str:
    lines = ["Cost model checked against published timings (benchmarks/cost_model_check.py)",
             "=" * 78,
             "Each network is modeled as one partition holding all of it (partition/cost.py): per layer",
             "max(MACs at the op's efficiency, bytes at memory_bandwidth_mb_s) + op_overhead_us; input and output",
             "copies; weights beyond memory_mb streamed over the host link on every run. Layer lists: built in",
             "code (benchmarks/networks.py). At most 4 figures FITTED per target on the 'fit' half (split fixed",
             "before any error was computed: sorted by published time, every other network). Goal on the",
             f"held-out half: median |modeled - published| / published <= {GOAL_MEDIAN:.0%}, none off by more "
             f"than {GOAL_WORST:g}x.", ""]
    for target, r in results.items():
        lines += _target_block(target, r)
    lines.append("First run (the model as first declared; am5729 also fitted memory_bandwidth_mb_s): " + "; ".join(
        f"{t}: held-out median error {r['held_out_median_error']:.1%}, worst {r['held_out_worst_ratio']:.2f}x, goal "
        f"{'MET' if r['goal_met'] else 'NOT met'}" for t, r in FIRST_RUN.items()))
    lines.append("Revision after the first run: am5729's memory_bandwidth_mb_s fixed to TI's measured 1960 MB/s (4 "
                 "figures on 3 networks were not determined). Made after seeing the first run's held-out errors: "
                 "the am5729 held-out figures above are not a clean test.")
    if second:
        lines += [""] + second_look_report(second)
    if consistency:
        lines.append("The same network on the same core in two TI documents (the TIDL API guide's test log, EVE "
                     "times scaled from 535 to 650 MHz, against the SDK's table; nothing modeled): " + "; ".join(
                         f"{r['network']} {r['sdk_device'].split('-')[0].upper()} {r['guide_ms_at_sdk_clock']:g} vs "
                         f"{r['sdk_ms']:g} ms ({r['ratio']:.2f}x)" for r in consistency))
        lines.append("")
    if floor:
        lines.append("Edge TPU rows below the USB 3.0 floor (weights beyond the 8 MB on-chip memory at no more than "
                     "500 MB/s, 5 Gbit/s with 8b/10b coding; nothing fitted): " + ("; ".join(
                         f"{r['network']}: {r['streamed_mb']:.1f} MB streamed need >= {r['floor_ms']:.1f} ms, "
                         f"published {r['published_ms']:g} ms" for r in floor if r["below_floor"]) or "none"))
        lines.append("")
    lines.append("Not modeled (left out of both halves): " + "; ".join(f"{k}: {v}" for k, v in NOT_MODELED.items()))
    lines.append("MACs of the built layer lists beside TI's table: " + ", ".join(
        f"{k} {networks.build(k).macs / 1e6:.1f} vs {v:.1f} MMAC" for k, v in networks.TI_MMAC.items()))
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------
# the figure: a small PNG writer (no plotting library in this environment)

def plot(results: dict, path: Path) -> None:
    """Log-log scatter, one panel per check (the two targets, then the DSP of the second look): modeled (y)
    against published (x), the line y = x, dashed
    lines at 2x and 1/2x; fit networks as filled squares, held-out ones as open circles, each labelled.
    Drawn with matplotlib (the ``bench`` extra): axes, log ticks and labels that do not collide are its
    job, not this script's."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(5.4 * len(results), 5.6), squeeze=False,
                             layout="constrained")
    for ax, (target, r) in zip(axes[0], results.items()):
        vals = [v for row in r["rows"] for v in (row["published_ms"], row["modeled_ms"])]
        lo, hi = min(vals) / 2.5, max(vals) * 2.5
        ax.plot([lo, hi], [lo, hi], color="0.3", lw=1, label="y = x")
        for f in (2.0, 0.5):
            ax.plot([lo, hi], [lo * f, hi * f], color="0.6", lw=1, ls="--", label="2x and 1/2x" if f > 1 else None)
        for half, style in (("fit", dict(marker="s", color="#1f50c8", label="fit")),
                            ("held_out", dict(marker="o", mfc="none", color="#d22828", label="held out"))):
            rows = [row for row in r["rows"] if row["half"] == half]
            ax.plot([row["published_ms"] for row in rows], [row["modeled_ms"] for row in rows], ls="none", ms=7,
                    **style)
            for row in rows:     # fit labels below their point, held-out ones above: neighbours overlap less
                ax.annotate(row["network"].split(" (")[0], (row["published_ms"], row["modeled_ms"]), fontsize=7,
                            xytext=(5, -9 if half == "fit" else 3), textcoords="offset points")
        ax.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(lo, hi), aspect="equal",
               xlabel="published time per inference (ms, log scale)", ylabel="modeled time (ms, log scale)",
               title=f"{target} ({r['device']})\nheld out: median error {r['held_out_median_error'] * 100:.0f} %, "
                     f"worst {r['held_out_worst_ratio']:.2f}x")
        ax.grid(True, which="major", color="0.9")
        ax.legend(loc="upper left", fontsize=8)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


# ------------------------------------------------------------------------------------------------
# the target files


def _note(target: str, figures: dict) -> str:
    src = _source_of("Coral" if target == "edgetpu" else "TI")
    return (f"cost figures {', '.join(f'{k} = {v:g}' for k, v in figures.items())}: FITTED by "
            f"benchmarks/cost_model_check.py to {src['title']} ({src['url']}, {src['table']}, column "
            f"'{CHECKS[target]['device']}') on half the networks, checked on the other half "
            f"(benchmarks/results/cost_model_check.txt)")


def write_targets(results: dict) -> None:
    """Put the fitted figures (and the kept macs_per_cycle / clock_mhz) into the targets' cost blocks and a
    note into their source text; nothing else of the files changes.  am5729.json is written by
    ``benchmarks/table1.py`` (its one writer), which reads the figures from the results file."""
    import table1

    table1.write_profile(table1.fit_am5729())
    for target, r in results.items():
        if target == "am5729":
            continue
        path = TARGETS / f"{target}.json"
        text = path.read_text(encoding="utf-8")
        doc = json.loads(text)
        cost = dict(doc["cost"])
        cost.update(CHECKS[target]["fixed"])
        cost.update(r["figures"])
        block = "{\n" + ",\n".join(f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in cost.items()) + "\n  }"
        text = re.sub(r'"cost": \{.*?\}', lambda _m: '"cost": ' + block, text, flags=re.S)
        source = re.sub(r" FITTED cost figures: .*?\(end of fitted figures\)", "", doc["source"])
        source = source.replace("cost figures: 4 TOPS (2 TMAC/s), USB 3 link, simulated overheads; ",
                                "cost figures: 4 TOPS (2 TMAC/s = macs_per_cycle x clock_mhz), transfer_overhead_us "
                                "simulated, the rest FITTED (below); ")
        source += f" FITTED cost figures: {_note(target, r['figures'])} (end of fitted figures)"
        text = text.replace(json.dumps(doc["source"], ensure_ascii=False)[1:-1],
                            json.dumps(source, ensure_ascii=False)[1:-1])
        json.loads(text)
        path.write_text(text, encoding="utf-8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--write-targets", action="store_true",
                    help="write the fitted figures into targets/edgetpu.json and targets/am5729.json")
    args = ap.parse_args(argv)
    results, bases = {}, {}
    for target, spec in CHECKS.items():
        base = json.loads((TARGETS / f"{target}.json").read_text(encoding="utf-8"))["cost"]
        base = {**{k: float(v) for k, v in base.items()}, **spec["fixed"]}
        for k in spec["fitted"]:
            base.pop(k, None)
        bases[target] = base
        results[target] = check(target, fit(target, base), base)
    second = second_look(results, bases)
    floor = link_floor(results["edgetpu"], bases["edgetpu"])
    consistency = vendor_consistency()
    text = report(results, second, floor, consistency)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "cost_model_check.txt").write_text(text, encoding="utf-8")
    doc = {"goal": {"held_out_median_error_max": GOAL_MEDIAN, "held_out_worst_ratio_max": GOAL_WORST},
           "splits": SPLITS, "not_modeled": NOT_MODELED, "results": results, "first_run": FIRST_RUN,
           "second_look": {"declared": SECOND_LOOK, "results": second},
           "usb3_floor": {"payload_bytes_per_s": USB3_PAYLOAD_B_PER_S, "rows": floor},
           "same_network_two_ti_documents": consistency,
           "revision": ("am5729: memory_bandwidth_mb_s fixed to 1960 MB/s (TI's LMBench) instead of fitted, after the "
                        "first run's held-out errors were seen; its held-out figures are therefore not a clean test"),
           "sources": {"edgetpu": _source_of("Coral"), "am5729": _source_of("TI")}}
    (args.out / "cost_model_check.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    plot({**results, "dsp (second look)": second["dsp"]}, args.out / "cost_model_check.png")
    if args.write_targets:
        write_targets(results)
    return 0 if all(r["goal_met"] for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
