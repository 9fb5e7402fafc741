"""benchmarks/bench_vs_xnnpack.py's CPU steadiness probe (printed before and after its rounds): every CPU
this process may run on is probed at once, and each gets a median, a 10th percentile, a share of slow
windows and its fastest window, as fractions of the fastest window of all."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_vs_xnnpack.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_vs_xnnpack_under_test", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_each_cpu_gets_its_speed_as_a_share_of_the_fastest_window():
    bench = load_bench()
    got = bench.cpu_steadiness(seconds=0.1, window=0.005)
    assert sorted(got) == sorted(os.sched_getaffinity(0))
    for median, p10, slow, top in got.values():
        assert 0.0 <= p10 <= median <= top <= 1.0 and 0.0 <= slow <= 1.0
    # the fastest window of all is the unit (a probe that counted nothing would leave every share at 0); on a
    # loaded machine (the test suite's other workers) a CPU's slower windows may count nothing at all
    assert max(top for *_, top in got.values()) == 1.0
    line = bench.steadiness_line("before")
    assert line.startswith("CPU speed before") and all(f"cpu{c} median" in line for c in got)
