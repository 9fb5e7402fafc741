"""Quantized pools, reductions and data-movement ops (uint8, int8, int16), bit-exact.

One tiny one-op model per (op, dtype, case), built in code, run three ways:

  * our fast kernels vs our plain numpy references (``reference=True``): every element equal;
  * our fast kernels vs ai-edge-litert's builtin kernels (BUILTIN_WITHOUT_DEFAULT_DELEGATES): every
    element equal.  All models go to ONE child process, which imports LiteRT once and runs each
    model in a forked grandchild, so a LiteRT abort only loses that model;
  * the operator versions come from ``update_versions`` (op_version.cc's rules): uint8 mostly
    stays at version 1, int8 and int16 move up, so each case also checks that the version
    TFLite's converter would write is one the kernel registers.

Shapes are odd, zero points sit at the ends of their range, and scales change between input and
output wherever the op rescales (CONCATENATION uint8, MEAN, SUM, REDUCE_PROD).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from helpers.quantized_shape_ops_cases import (
    CASES,
    I8,
    I16,
    OPT,
    STR,
    U8,
    Q,
    V,
    arg,
    build_case,
    concat,
    one_op,
    pool,
    reduce_case,
    unary,
)
from workbench import dump
from workbench.errors import KernelError, UnsupportedOpError
from workbench.interpreter import Interpreter
from workbench.schema import (
    BuiltinOperator as B,
)
from workbench.schema import (
    ModelBuilder,
)
from workbench.versioning import update_versions

# ------------------------------------------------------------------------------------------------
# cases


def perm_shape(shape, perm):
    return tuple(shape[p] for p in perm)


# ------------------------------------------------------------------------------------------------
# running


def run_ours(model, feed, reference=False):
    it = Interpreter(model=model, reference=reference)
    it.allocate_tensors()
    by_name = {d["name"]: d for d in it.get_input_details()}
    for nm, value in feed.items():
        it.set_tensor(by_name[nm]["index"], value)
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]


def assert_equal_all(ours, theirs, what):
    assert len(ours) == len(theirs), f"{what}: {len(ours)} outputs vs {len(theirs)}"
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert a.shape == b.shape and a.dtype == b.dtype, f"{what} output {k}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        bad = a != b
        if bad.any():
            i = tuple(int(j) for j in np.argwhere(bad)[0])
            diff = np.abs(a.astype(np.int64) - b.astype(np.int64)).max() if a.dtype.kind in "iu" else "-"
            raise AssertionError(f"{what} output {k}: {int(bad.sum())}/{a.size} elements differ (max |diff| "
                                 f"{diff}); first at {i}: ours {a[i]!r}, theirs {b[i]!r}")


LITERT_CHILD = r'''
import os, pickle, sys
import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
jobs = pickle.load(open(sys.argv[1], "rb"))
results = []
for k, (model, feed) in enumerate(jobs):
    path = sys.argv[2] + f".{k}"
    pid = os.fork()
    if pid == 0:
        try:
            it = Interpreter(model_content=model,
                             experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
            it.allocate_tensors()
            for d in it.get_input_details():
                it.set_tensor(d["index"], feed[d["name"]])
            it.invoke()
            out = ("ok", [np.array(it.get_tensor(d["index"])) for d in it.get_output_details()])
        except BaseException as exc:
            out = ("error", f"{type(exc).__name__}: {exc}")
        with open(path, "wb") as f:
            pickle.dump(out, f)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if os.path.exists(path):
        with open(path, "rb") as f:
            results.append(pickle.load(f))
    else:
        results.append(("crash", f"the interpreter process ended with status {status}"))
pickle.dump(results, open(sys.argv[2], "wb"))
'''


def litert_batch(jobs: list, timeout: float = 900.0) -> list:
    """Run [(model bytes, {input name: array})] in one LiteRT child process; one result per job:
    ("ok", [outputs]) or ("error" | "crash", message)."""
    with tempfile.TemporaryDirectory() as d:
        src, dst = Path(d) / "jobs.pkl", Path(d) / "results.pkl"
        src.write_bytes(pickle.dumps([(bytes(m), feed) for m, feed in jobs]))
        proc = subprocess.run([sys.executable, "-c", LITERT_CHILD, str(src), str(dst)], capture_output=True,
                              text=True, timeout=timeout, env={**os.environ, "PYTHONHASHSEED": "0"})
        assert proc.returncode == 0, proc.stderr[-3000:]
        return pickle.loads(dst.read_bytes())


@pytest.fixture(scope="session")
def litert_results():
    names = sorted(CASES)
    jobs = []
    for name in names:
        model, feed = build_case(name)
        jobs.append((dump(model), feed))
    return dict(zip(names, litert_batch(jobs)))


# ------------------------------------------------------------------------------------------------
# what TFLite refuses, the workbench refuses too (a typed error at allocate, naming node and op)

def strings(op, ins, n_out=1, options=None):
    return one_op(op, ins, [((1,), STR, None)] * n_out, options)


ERRORS = {
    "padv2_u8_constant_other_quantization": (unary(B.PADV2, (2, 3), U8, Q(0.1, 100), (3, 3), consts=[
        np.array([[1, 0], [0, 0]], np.int32), (np.array([7], np.uint8), Q(0.2, 100))]), "scale"),
    "concat_i8_scales_differ": (concat(I8, [(2, 3), (2, 2)], 1, [Q(0.1, 0), Q(0.2, 0)], Q(0.1, 0)),
                                "requires them equal"),
    "concat_i16_zero_point": (concat(I16, [(2, 3), (2, 2)], 1, [Q(0.1, 3), Q(0.1, 3)], Q(0.1, 3)), "zero point"),
    "pack_u8_scales_differ": (one_op(B.PACK, [("a", (2,), U8, Q(0.1, 0)), ("b", (2,), U8, Q(0.3, 0))],
                                     [((2, 2), U8, Q(0.2, 0))], OPT["PackOptions"](values_count=2, axis=0)), "scale"),
    "reduce_max_i8_scales_differ": (reduce_case(B.REDUCE_MAX, I8, (2, 3), [1], False, (0.1, 3), (0.2, 3)), "equal"),
    "reduce_min_u8_zero_points_differ": (reduce_case(B.REDUCE_MIN, U8, (2, 3), [1], False, (0.1, 3), (0.1, 4)),
                                         "equal"),
    "mean_i16_zero_point": (reduce_case(B.MEAN, I16, (2, 3), [1], False, (0.1, 3), (0.1, 3)), "zero points must be 0"),
    "sum_i16_zero_point": (reduce_case(B.SUM, I16, (2, 3), [1], False, (0.1, 0), (0.1, 5)), "zero points must be 0"),
    "reduce_prod_u8_quantized": (reduce_case(B.REDUCE_PROD, U8, (2, 3), [1], False, (0.1, 3), (0.1, 3)),
                                 "int8 and int16"),
    "l2norm_i8_output_scale": (unary(B.L2_NORMALIZATION, (2, 3), I8, Q(0.1, 0), (2, 3), qo=Q(0.01, 0),
                                     options=OPT["L2NormOptions"]()), "1/128"),
    "l2norm_u8_output_zero_point": (unary(B.L2_NORMALIZATION, (2, 3), U8, Q(0.1, 0), (2, 3), qo=Q(1 / 128, 0),
                                          options=OPT["L2NormOptions"]()), "zero point 128"),
    "l2norm_i16": (unary(B.L2_NORMALIZATION, (2, 3), I16, Q(0.1, 0), (2, 3), qo=Q(1 / 128, 0),
                         options=OPT["L2NormOptions"]()), "int16"),
    "l2_pool_i8": (pool(B.L2_POOL_2D, I8, (1, 4, 4, 2), (2, 2), (2, 2), V), "int8"),
    "space_to_depth_i16": (unary(B.SPACE_TO_DEPTH, (1, 4, 4, 1), I16, Q(0.1, 0), (1, 2, 2, 4),
                                 options=OPT["SpaceToDepthOptions"](block_size=2)), "int16"),
    "depth_to_space_bool": (unary(B.DEPTH_TO_SPACE, (1, 1, 1, 4), np.bool_, None, (1, 2, 2, 1),
                                  options=OPT["DepthToSpaceOptions"](block_size=2)), "bool"),
    "arg_max_i16": (arg(B.ARG_MAX, I16, (2, 3), 1, Q(0.1, 0)), "int16"),
    "arg_min_i64": (arg(B.ARG_MIN, np.int64, (2, 3), 1), "int64"),
    "space_to_batch_u8_zero_points_differ": (unary(B.SPACE_TO_BATCH_ND, (1, 2, 2, 1), U8, Q(0.1, 5), (4, 1, 1, 1),
                                                   qo=Q(0.1, 9), consts=[np.array([2, 2], np.int32),
                                                                         np.array([[0, 0], [0, 0]], np.int32)]),
                                             "zero point"),
    "batch_to_space_i16_zero_point": (unary(B.BATCH_TO_SPACE_ND, (4, 1, 1, 1), I16, Q(0.1, 5), (1, 2, 2, 1),
                                            consts=[np.array([2, 2], np.int32), np.array([[0, 0], [0, 0]], np.int32)]),
                                      "zero points must be 0"),
    "string_transpose": (strings(B.TRANSPOSE, [("x", (2, 3), STR, None), ("const", np.array([1, 0], np.int32))]),
                         "STRING"),
    "string_reverse": (strings(B.REVERSE_V2, [("x", (2, 3), STR, None), ("const", np.array([1], np.int32))]),
                       "STRING"),
    "string_broadcast_to": (strings(B.BROADCAST_TO, [("x", (2, 3), STR, None),
                                                     ("const", np.array([2, 2, 3], np.int32))]),
                            "STRING"),
    "string_split": (strings(B.SPLIT, [("const", np.array(0, np.int32)), ("x", (2, 3), STR, None)], 2,
                             OPT["SplitOptions"](num_splits=2)), "STRING"),
    "string_split_v": (strings(B.SPLIT_V, [("x", (2, 3), STR, None), ("const", np.array([1, 2], np.int32)),
                                           ("const", np.array(1, np.int32))], 2, OPT["SplitVOptions"](num_splits=2)),
                       "STRING"),
    "string_pack": (strings(B.PACK, [("x", (2, 3), STR, None)], 1, OPT["PackOptions"](values_count=1, axis=0)),
                    "STRING"),
    "string_concat": (strings(B.CONCATENATION, [("x", (2, 3), STR, None)], 1, OPT["ConcatenationOptions"](axis=0)),
                      "STRING|object"),
    "cumsum_i8": (unary(B.CUMSUM, (2, 3), I8, Q(0.1, 0), (2, 3), consts=[np.array(1, np.int32)],
                        options=OPT["CumsumOptions"]()), "int8"),
    "string_pad": (strings(B.PAD, [("x", (2, 3), STR, None), ("const", np.array([[0, 1], [0, 0]], np.int32))]),
                   "STRING|object"),
}


def build_error_case(name):
    builder, feed = ERRORS[name][0](name)
    return update_versions(builder.build()), feed


@pytest.fixture(scope="session")
def litert_error_results():
    names = sorted(ERRORS)
    jobs = []
    for name in names:
        model, feed = build_error_case(name)
        jobs.append((dump(model), feed))
    return dict(zip(names, litert_batch(jobs)))


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_refused_like_litert(case, litert_error_results):
    model, feed = build_error_case(case)
    with pytest.raises((UnsupportedOpError, KernelError), match=ERRORS[case][1]) as info:
        it = Interpreter(model=model)
        it.allocate_tensors()
    assert "node 0" in str(info.value)
    status, message = litert_error_results[case]
    assert status != "ok", f"{case}: LiteRT ran it, the workbench refused it"


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_kernels_equal_references(case):
    model, feed = build_case(case)
    assert_equal_all(run_ours(model, feed), run_ours(model, feed, reference=True), case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_exact_with_litert(case, litert_results):
    status, theirs = litert_results[case]
    assert status == "ok", f"{case}: LiteRT {status}: {theirs}"
    model, feed = build_case(case)
    assert_equal_all(run_ours(model, feed), theirs, case)


# ------------------------------------------------------------------------------------------------
# versions, OpData, the workbench's own refusals


def test_case_names_state_the_version_op_version_computes():
    """``..._v3`` in a case name is the version update_versions wrote (op_version.cc's rules); uint8
    cases without one stay at version 1 (TFLite gives uint8 the float version)."""
    import re

    checked = 0
    for name in CASES:
        model, _ = build_case(name)
        version = model.operator_codes[0].version
        m = re.search(r"_v(\d)(_|$)", name)
        if m:
            assert version == int(m.group(1)), (name, version)
            checked += 1
        elif "_u8" in name and not any(k in name for k in ("half_pixel", "align", "8x")):
            assert version == (2 if name.startswith("broadcast_to") else 1), (name, version)
            checked += 1
    assert checked > 40


@pytest.mark.parametrize("op, version", [
    (B.AVERAGE_POOL_2D, 4), (B.MAX_POOL_2D, 4), (B.CONCATENATION, 5), (B.PAD, 6), (B.PADV2, 6), (B.MIRROR_PAD, 4),
    (B.MEAN, 4), (B.SUM, 3), (B.REDUCE_MAX, 4), (B.REDUCE_MIN, 4), (B.REDUCE_PROD, 3), (B.TRANSPOSE, 7),
    (B.SPLIT, 5), (B.SPLIT_V, 3), (B.PACK, 5), (B.TILE, 4), (B.BROADCAST_TO, 1), (B.BROADCAST_TO, 4),
    (B.REVERSE_V2, 4), (B.SPACE_TO_DEPTH, 3), (B.DEPTH_TO_SPACE, 3), (B.SPACE_TO_BATCH_ND, 5),
    (B.BATCH_TO_SPACE_ND, 5), (B.RESIZE_BILINEAR, 5), (B.RESIZE_NEAREST_NEIGHBOR, 5), (B.ARG_MAX, 4),
    (B.ARG_MIN, 4), (B.L2_NORMALIZATION, 3), (B.GATHER_ND, 6), (B.SQUEEZE, 3), (B.RESHAPE, 2), (B.L2_POOL_2D, 2),
])
def test_versions_past_the_registered_ones_fail_at_allocate(op, version):
    from workbench.interpreter.registry import BuiltinOpResolver

    have = BuiltinOpResolver().versions(op)
    assert version not in have
    b = ModelBuilder()
    x = b.input("x", (2, 3))
    y = b.tensor("y", (2, 3))
    b.op(op, [x], [y], version=version)
    b.output(y)
    with pytest.raises(UnsupportedOpError, match=rf"{op.name} version {version} is not registered"):
        Interpreter(model=b.build()).allocate_tensors()


def prepared_data(name):
    model, _ = build_case(name)
    it = Interpreter(model=model)
    it.allocate_tensors()
    return it.prepared()[0][2]


@pytest.mark.parametrize("case, fields", [
    ("mean_u8_hw_keep", ("input_zero_point", "output_zero_point", "output_multiplier", "output_shift", "bias",
                         "algorithm")),
    ("mean_i16_axes_0_2", ("input_zero_point", "output_zero_point", "output_multiplier", "output_shift", "count")),
    ("sum_u8_axis1", ("input_zero_point", "output_zero_point", "scale", "bias", "output_multiplier", "output_shift")),
    ("reduce_prod_i8", ("input_zero_point", "output_zero_point", "multiplier", "shift", "scaling")),
    ("l2norm_u8", ("input_zero_point", "output_zero_point", "output_scale")),
    ("concat_u8_rescale", ("input_scales", "input_zero_points", "output_zero_point", "rescaled", "scale", "bias")),
    ("avg_pool_i16_relu_zp", ("input_zero_point", "output_zero_point", "output_activation_min",
                              "output_activation_max")),
    ("padv2_u8", ("constant", "output_zero_point")),
    ("space_to_batch_u8_zp", ("pad_value",)),
])
def test_opdata_has_the_tflm_field_names(case, fields):
    d = prepared_data(case)
    for f in fields:
        assert hasattr(d, f), f"{type(d).__name__} has no {f}"


def test_opdata_values_that_decide_the_arithmetic():
    d = prepared_data("mean_u8_hw_keep")
    assert d.algorithm.startswith("optimized") and d.count == 20
    assert prepared_data("mean_u8_last_axis").algorithm.startswith("reference")
    assert prepared_data("mean_i8_negative_hw_axes").algorithm.startswith("optimized")   # [1, -2] resolves to {1, 2}
    assert prepared_data("mean_i16_hw_keep_v3").algorithm.startswith("reference")       # int16 never takes the 4-D path
    d = prepared_data("concat_u8_rescale")
    assert d.rescaled == (True, False, True)
    d = prepared_data("avg_pool_i16_relu_zp")
    assert (d.output_activation_min, d.output_activation_max) == (-9, 32767)
    assert prepared_data("avg_pool_u8_relu6_zp200").output_activation_max == 255
    assert prepared_data("padv2_u8").constant == 250 and prepared_data("pad_u8_zp255").constant == 255
    assert prepared_data("space_to_batch_i8_zp").pad_value == -77
    assert prepared_data("reduce_prod_i8_one_value").copy
    assert prepared_data("resize_bilinear_u8_8x_kernel").exact_8x
    assert not prepared_data("resize_bilinear_u8_half_pixel_8x_depth3").exact_8x


def test_quantized_pools_refuse_a_rescale_that_tflite_only_dchecks():
    """TFLite's release build would reuse the input's integers under the output's scale; the workbench
    refuses instead (a documented difference)."""
    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, 2), U8, quantization=Q(0.05, 3))
    y = b.tensor("y", (1, 2, 2, 2), U8, quantization=Q(0.1, 3))
    b.op(B.AVERAGE_POOL_2D, [x], [y], OPT["Pool2DOptions"](padding=V, stride_h=2, stride_w=2, filter_height=2,
                                                            filter_width=2))
    b.output(y)
    with pytest.raises(UnsupportedOpError, match="share scale"):
        Interpreter(model=b.build()).allocate_tensors()


def test_inverse_sqrt_multiplier_is_close_to_one_over_sqrt():
    from workbench.interpreter import quant

    assert quant.inv_sqrt_quantized_multiplier_exp(0) == (2 ** 31 - 1, 0)
    assert quant.inv_sqrt_quantized_multiplier_exp(1) == (2 ** 31 - 1, 0)
    for v in (2, 3, 100, 16129, 123456, 2 ** 29 + 5, 2 ** 31 - 1):
        m, shift = quant.inv_sqrt_quantized_multiplier_exp(v)
        assert shift <= 0 and 0 < m < 2 ** 31
        assert abs(m / 2 ** 31 * 2.0 ** shift * np.sqrt(v) - 1) < 1e-5, v


def test_int64_multiplier_rounds_half_up():
    from workbench.interpreter import quant

    m, s = quant.quantize_multiplier(0.5)
    assert [quant.multiply_by_quantized_multiplier_int64(x, m, s) for x in (5, -5, 7, -7)] == [3, -2, 4, -3]
    assert quant.multiply_by_quantized_multiplier_int64(3 << 40, *quant.quantize_multiplier(2.0 ** -20)) == 3 << 20
