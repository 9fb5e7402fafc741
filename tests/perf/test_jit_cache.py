"""numba's disk cache under ``workbench.perf.jit.njit``: a jitted caller's cached code holds its callees'
code, so an edit to a callee in another file must compile the caller again (numba alone keys the cache
on the caller's own file and would run the old callee).  Each step runs in a fresh process, as a user's
sessions would, with its own cache folder."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from workbench.perf import jit

CALLEE = """
from workbench.perf.jit import njit


@njit(nogil=True)
def scaled(x):
    out = x.copy()
    for i in range(x.shape[0]):
        out[i] = x[i] * {factor}
    return out
"""

CALLER = """
from callee_mod import scaled
from workbench.perf.jit import njit


@njit(nogil=True)
def first_plus_one(x):
    return scaled(x)[0] + 1
"""

RUN = """
import numpy as np
from caller_mod import first_plus_one
from callee_mod import scaled
x = np.array([2, 5], np.int64)
print(first_plus_one(x), scaled(x).tolist())
"""


def _run(folder) -> str:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(folder / "cache"), "WORKBENCH_PRECOMPILED": "0",
           "PYTHONPATH": os.pathsep.join([str(folder), *sys.path])}
    proc = subprocess.run([sys.executable, "-c", RUN], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.split()


def test_an_edit_to_a_callee_in_another_file_compiles_the_caller_again(tmp_path):
    (tmp_path / "caller_mod.py").write_text(textwrap.dedent(CALLER))
    (tmp_path / "callee_mod.py").write_text(textwrap.dedent(CALLEE.format(factor=2)))
    assert _run(tmp_path)[0] == "5"
    assert _run(tmp_path)[0] == "5"                    # from the cache
    assert any(p.suffix == ".nbi" for p in (tmp_path / "cache").rglob("*"))
    (tmp_path / "callee_mod.py").write_text(textwrap.dedent(CALLEE.format(factor=3)))
    out = _run(tmp_path)                               # the callee called from Python too, after its caller
    assert out[0] == "7", out
    assert "".join(out[1:]) == "[6,15]"


def test_callee_files_follow_callees_of_callees():
    """vnni.conv_rq's code holds tiles_rq's (same file) and the gather's native copy; depthwise3x3_int8_rows
    (fast/depthwise_conv_2d.py) holds vnni.shift_parts's."""
    from workbench.interpreter.fast import depthwise_conv_2d
    from workbench.perf import vnni

    assert jit._callee_files(vnni.conv_rq.py_func) == {vnni.__file__}
    assert vnni.__file__ in jit._callee_files(depthwise_conv_2d.depthwise3x3_int8_rows.py_func)
    assert jit._callee_files(vnni.shift_parts.py_func) == set()
