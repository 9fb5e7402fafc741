"""The int8 fast paths of the speed work, element by element against the references and litert.

* :mod:`workbench.perf.vnni` (int8 CONV_2D / FULLY_CONNECTED on the AVX-512 VNNI
  dot-product instruction): its packing, its Python twin, and whole kernels on models big enough
  to take that path, equal to our int64 numpy references and to litert's builtin kernels;
* every small int8 conv / FC case of test_quantized_ops forced onto the VNNI path;
* ``num_threads=2`` (rows split between threads) gives the same bytes as 1 thread.

On a CPU without AVX-512 VNNI the kernels keep the float BLAS path; the tests below then check
that path instead (and the Python twin, which runs anywhere).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from helpers import litert_runner
from helpers.quantized_ops_cases import CASES as OPS_CASES
from helpers.quantized_ops_cases import V, assert_equal_all, conv_i8, depthwise_i8, fc_i8
from helpers.quantized_ops_cases import build_case as ops_case
from workbench import dump
from workbench.interpreter import Interpreter
from workbench.interpreter.fast import conv_2d as fast_conv
from workbench.interpreter.kernels import conv_2d
from workbench.perf import fgemm as _fgemm
from workbench.perf import jit as _jit
from workbench.perf import vnni as _vnni
from workbench.schema import ActivationFunctionType as Act
from workbench.versioning import update_versions

VNNI = _vnni.available()
NO_VNNI = "the VNNI path is off here (no AVX-512 VNNI, WORKBENCH_JIT=0 or WORKBENCH_VNNI=0)"

# products of at least _vnni.MIN_MACS multiply-adds: the default path on a VNNI CPU
BIG = {
    "vnni_conv_1x1_40ch": conv_i8((1, 20, 20, 48), (40, 1, 1, 48)),
    "vnni_conv_3x3_s2_relu6_zp_min": conv_i8((1, 41, 37, 5), (24, 3, 3, 5), stride=(2, 2), act=Act.RELU6,
                                             in_zp=-128),
    "vnni_conv_dilated_valid_zp_max": conv_i8((2, 24, 22, 8), (33, 3, 3, 8), padding=V, dilation=(2, 2),
                                              in_zp=127, out_zp=-128),
    "vnni_conv_5x3_s2x1_per_tensor": conv_i8((1, 30, 28, 6), (20, 5, 3, 6), stride=(2, 1), act=Act.RELU_N1_TO_1,
                                             per_channel=False),
    "vnni_conv_1x1_relu": conv_i8((1, 16, 16, 64), (70, 1, 1, 64), act=Act.RELU),
    "vnni_fc_no_bias": fc_i8((4, 256), 300, bias=False),
    "vnni_fc_7x300": fc_i8((7, 300), 130, act=Act.RELU),
    "vnni_fc_keep_dims_per_channel": fc_i8((2, 5, 200), 300, keep=True, per_channel=True, in_zp=100),
    # depthwise: output rows in bands (one row per band when a row holds more than 8192 values)
    "dw_mult2_stride2": depthwise_i8((1, 40, 40, 24), (3, 3), mult=2, stride=(2, 2), act=Act.RELU6),
    "dw_wide_rows_one_per_band": depthwise_i8((1, 5, 200, 48), (3, 3), padding=V, in_zp=127),
}
# few channels on wide rows: C·M = 3 < 8, so litert's x86 depthwise requantizes every value in its
# scalar loop (ties away from zero); compared with litert too
DW_TAIL = {"dw_row_tail_two_images": depthwise_i8((2, 9, 301, 3), (3, 3), in_zp=-128)}
BIG.update(DW_TAIL)
SMALL = sorted(k for k in OPS_CASES if k.startswith(("conv", "fc")))
DEPTHWISE = sorted(k for k in OPS_CASES if k.startswith("depthwise"))


def build(name):
    if name in BIG or name in DW_TAIL:
        builder, inputs = {**BIG, **DW_TAIL}[name](name)
        return update_versions(builder.build()), inputs
    return ops_case(name)


def run(model, inputs, reference=False, threads=1):
    it = Interpreter(model=model, reference=reference, num_threads=threads)
    it.allocate_tensors()
    by_name = {d["name"]: d for d in it.get_input_details()}
    for name, value in inputs.items():
        it.set_tensor(by_name[name]["index"], value)
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()], it.prepared()[0][1]


@pytest.fixture
def split_everything(monkeypatch):
    """Share rows between threads however small the node (normally only from ~2 M multiply-adds, or
    ~32 k on the kernel library's pool)."""
    monkeypatch.setattr(_jit, "MIN_PARALLEL_WORK", 0)
    monkeypatch.setattr(_jit, "MIN_POOL_WORK", 0)


@pytest.mark.parametrize("case", sorted(BIG))
def test_big_int8_products_take_the_fast_path_and_equal_references(case, split_everything):
    model, inputs = build(case)
    fast, kname = run(model, inputs)
    if not case.startswith("dw"):
        assert ("vnni" in kname) == VNNI, kname
    ref, _ = run(model, inputs, reference=True)
    assert_equal_all(fast, ref, case)
    two, _ = run(model, inputs, threads=2)
    assert_equal_all(two, fast, case + " (2 threads)")


@pytest.fixture(scope="module")
def litert_big(tmp_path_factory):
    root = tmp_path_factory.mktemp("litert_fast")

    def one(name):
        model, inputs = build(name)
        path = root / f"{name}.tflite"
        path.write_bytes(dump(model))
        it = Interpreter(model=model)
        np.savez(root / f"{name}_in.npz", **{f"input_{k}": inputs[d["name"]]
                                              for k, d in enumerate(it.get_input_details())})
        return name, litert_runner.run(path, root / f"{name}_in.npz", root / f"{name}_out.npz")

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, sorted(BIG)))


@pytest.mark.parametrize("case", sorted(BIG))
def test_big_int8_products_bit_exact_with_litert(case, litert_big):
    result = litert_big[case]
    assert result.ok, result.describe()
    model, inputs = build(case)
    ours, _ = run(model, inputs)
    assert_equal_all(ours, [result.outputs[f"output_{k}"] for k in range(len(result.outputs))], case)


@pytest.mark.skipif(not VNNI, reason=NO_VNNI)
@pytest.mark.parametrize("case", SMALL)
def test_small_cases_forced_onto_vnni_equal_references(case, monkeypatch):
    monkeypatch.setattr(_vnni, "MIN_MACS", 0)
    model, inputs = build(case)
    fast, kname = run(model, inputs)
    if "big_k" not in case:
        assert "vnni" in kname, kname
    ref, _ = run(model, inputs, reference=True)
    assert_equal_all(fast, ref, case)


@pytest.mark.parametrize("case", DEPTHWISE + sorted(DW_TAIL))
def test_depthwise_rows_split_between_threads_equal_references(case, split_everything):
    model, inputs = build(case)
    two, _ = run(model, inputs, threads=2)
    ref, _ = run(model, inputs, reference=True)
    assert_equal_all(two, ref, case)


def test_depthwise_with_fewer_than_8_channels_is_all_scalar_tail():
    model, inputs = build("dw_row_tail_two_images")
    it = Interpreter(model=model)
    it.allocate_tensors()
    d = it.prepared()[0][2]
    # C·M = 3: no channel in litert-x86's 8-wide vector loop, every value of every row rounded one by one
    # (ties away), as the reference kernel does: the two variants give the same bits
    assert d.output_shape[3] == 3 and d.vector_channels == 0
    outs = []
    for variant in ("litert-x86", "reference"):
        it = Interpreter(model=model, variant=variant)
        it.allocate_tensors()
        assert it.prepared()[0][2].vector_channels == 0
        it.set_tensor(it.get_input_details()[0]["index"], inputs["x"])
        it.invoke()
        outs.append(it.get_tensor(it.get_output_details()[0]["index"]))
    assert_equal_all([outs[0]], [outs[1]], "dw_row_tail_two_images: litert-x86 vs reference")


def test_pack_filter_round_trip_and_layout():
    rng = np.random.default_rng(0)
    for n, k in ((1, 1), (16, 4), (17, 5), (40, 27), (130, 300)):
        w = rng.integers(-128, 128, (n, k)).astype(np.int8)
        p = _vnni.pack_filter(w)
        assert p.shape == (-(-n // 16), -(-k // 4), 64) and p.dtype == np.int8
        assert (_vnni.unpack_filter(p, n, k) == w).all()
        # 64 bytes = 16 channels × 4 consecutive k: byte 4·j + i of group g in block b is w[16b + j, 4g + i]
        b, g, j, i = (n - 1) // 16, (k - 1) // 4, (n - 1) % 16, (k - 1) % 4
        assert p[b, g, 4 * j + i] == w[n - 1, k - 1]
        assert int(np.abs(p.astype(np.int64)).sum()) == int(np.abs(w.astype(np.int64)).sum())      # padding is zero


def test_unsigned_input_identity_of_the_folded_bias():
    """Σ (x + 128)·w + bias − (zp + 128)·Σw  ==  Σ (x − zp)·w + bias, for every zero point."""
    rng = np.random.default_rng(1)
    x = rng.integers(-128, 128, (9, 30)).astype(np.int64)
    w = rng.integers(-128, 128, (7, 30)).astype(np.int8)
    bias = rng.integers(-9999, 9999, 7)
    for zp in (-128, -1, 0, 5, 127):
        lhs = (x + 128) @ w.astype(np.int64).T + _vnni.folded_bias(bias, w, zp)
        assert (lhs == (x - zp) @ w.astype(np.int64).T + bias).all()


def test_overflow_bound():
    assert _vnni.fits(65_000) and not _vnni.fits(66_000) and not _vnni.fits(0)


def _reference_conv(x, f, bias, stride, dilation, pad, out_hw, zp, mult, shift, out_zp, lo, hi, half_up):
    d = conv_2d.Conv2DInt8Data(
        "", stride[0], stride[1], dilation[0], dilation[1], f.shape[1], f.shape[2], pad[0], pad[1], 1,
        (x.shape[0], *out_hw, f.shape[0]), "", 1.0, zp, None, 1.0, out_zp, None, mult, shift, lo, hi, True,
        "up" if half_up else "away")
    return conv_2d.conv_int8(x, f, bias, d)


@pytest.mark.parametrize("half_up", [True, False])
@pytest.mark.parametrize("compiled", [True, False])
def test_conv_rows_equal_reference_conv(half_up, compiled):
    """conv_rows compiled (VNNI CPUs only) and as plain Python (numpy twin of the micro-kernel):
    padding, stride, dilation, ragged 16-channel blocks and 4-row blocks, both rounding modes."""
    if compiled and not VNNI:
        pytest.skip(NO_VNNI)
    fn = _vnni.conv_rows if compiled else _vnni.conv_rows.py_func
    rng = np.random.default_rng(2)
    n, h, w, c, o, kh, kw = 2, 9, 7, 5, 37, 3, 2
    (sh, sw), (dh, dw), (pt, pl) = (2, 1), (1, 2), (1, 2)
    oh, ow = 5, 7
    x = rng.integers(-128, 128, (n, h, w, c)).astype(np.int8)
    f = rng.integers(-128, 128, (o, kh, kw, c)).astype(np.int8)
    bias = rng.integers(-20000, 20000, o).astype(np.int32)
    mult = rng.integers(2 ** 30, 2 ** 31, o).astype(np.int64)
    shift = rng.integers(-9, 2, o).astype(np.int64)
    for zp, out_zp, lo, hi in ((-7, 3, -128, 127), (-128, -128, -128, 127), (127, 0, -20, 90)):
        want = _reference_conv(x, f, bias, (sh, sw), (dh, dw), (pt, pl), (oh, ow), zp, mult, shift, out_zp, lo, hi,
                               half_up)
        w2d = f.reshape(o, -1)
        out = np.full((n * oh * ow, o), 99, np.int8)
        fn(x, _vnni.pack_filter(w2d), _vnni.folded_bias(bias, w2d, zp), mult, shift, out_zp, lo, hi, half_up, out,
           np.uint8(zp + 128), oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, 0, n * oh * ow)
        assert (out.reshape(want.shape) == want).all(), (zp, int((out.reshape(want.shape) != want).sum()))


def test_threads_split_rows_identically(split_everything):
    """_vnni.conv with 1, 2 and 3 threads (2 is capped by the CPUs) writes the same bytes."""
    if not VNNI:
        pytest.skip(NO_VNNI)
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, (1, 23, 19, 16)).astype(np.int8)
    w2d = rng.integers(-128, 128, (50, 16)).astype(np.int8)
    args = (_vnni.pack_filter(w2d), _vnni.folded_bias(rng.integers(-99, 99, 50), w2d, 4),
            np.full(50, 1 << 30, np.int64), np.full(50, -5, np.int64), 1, -128, 127, True)
    outs = []
    for threads in (1, 2, 3):
        out = np.zeros((23 * 19, 50), np.int8)
        _vnni.conv(x, *args, out, (23, 19, 1, 1, 1, 1, 1, 1, 0, 0, 132), threads)
        outs.append(out)
    assert (outs[0] == outs[1]).all() and (outs[0] == outs[2]).all()
    assert len(np.unique(outs[0])) > 50


def test_float_depthwise_rows_shared_between_threads_equal_one_call(split_everything):
    """The float depthwise kernel cut into row pieces (2 threads) writes exactly what one call writes."""
    from workbench.interpreter.fast import depthwise_conv_2d as fast_dw
    from workbench.interpreter.kernels import depthwise_conv_2d as dwc
    from workbench.perf.jit import run_rows

    rng = np.random.default_rng(4)
    for (n, h, w, c, mult, stride, pad) in ((2, 13, 11, 8, 1, 1, 1), (1, 17, 9, 3, 2, 2, 0)):
        x = rng.standard_normal((n, h, w, c)).astype(np.float32)
        wt = rng.standard_normal((3, 3, c * mult)).astype(np.float32)
        bias = rng.standard_normal(c * mult).astype(np.float32)
        oh, ow = (h + 2 * pad - 3) // stride + 1, (w + 2 * pad - 3) // stride + 1
        one = np.zeros((n, oh, ow, c * mult), np.float32)
        two = np.ones_like(one)
        args = (stride, stride, 1, 1, pad, pad, np.float32(-2.0), np.float32(3.0))
        fast_dw.depthwise_numba(x, wt, bias, one, *args)
        run_rows(fast_dw.depthwise_rows, n * oh, 2, x, wt, bias, two, *args)
        assert (one == two).all()
        d = dwc.DepthwiseConv2DData("", stride, stride, 1, 1, pad, pad, mult, one.shape, "", -2.0, 3.0)
        want = dwc.depthwise_float(x, wt[None], bias, d, bias_first=True)      # litert-x86's order: the same bits
        assert (one.view(np.uint32) == want.view(np.uint32)).all()


@pytest.mark.parametrize("case", sorted(k for k in BIG if k.startswith("vnni_conv")))
def test_big_convs_on_the_blas_path_share_scratch_and_equal_references(case, monkeypatch):
    """The portable path (CPUs without VNNI): exact float BLAS, im2col / sums / padded input in the
    scratch buffer every node shares."""
    monkeypatch.setattr(_vnni, "MIN_MACS", 1 << 62)
    model, inputs = build(case)
    fast, kname = run(model, inputs)
    assert "blas" in kname or "matmul" in kname, kname
    it = Interpreter(model=model)
    it.allocate_tensors()
    path = it._sg(0).fast[0]                  # im2col, sums (and padded input): views of the shared buffer
    assert not hasattr(path, "cols") and not hasattr(path, "acc") and path.layout[0][0] == 0
    assert it._sg(0).context.scratch.nbytes >= sum(np.prod(shape) * dt.itemsize for _, shape, dt in path.layout)
    ref, _ = run(model, inputs, reference=True)
    assert_equal_all(fast, ref, case)


def test_scratch_layout_is_aligned_and_views_share_one_buffer():
    from workbench.interpreter.arena import ALIGNMENT, Scratch

    s = Scratch()
    a = s.reserve(((3, 5), np.float32), ((7,), np.int8), ((2, 2, 2), np.int64))
    b = s.reserve(((10,), np.float64))
    assert [off % ALIGNMENT for off, _, _ in a] == [0, 0, 0] and b[0][0] == 0
    assert s.nbytes >= 64 + 64 + 64
    x, y, z = s.views(a)
    assert x.shape == (3, 5) and x.dtype == np.float32 and y.shape == (7,) and z.dtype == np.int64
    assert all(v.ctypes.data % ALIGNMENT == 0 for v in (x, y, z))
    x[...] = 1.5
    (w,) = s.views(b)
    assert np.shares_memory(w, x)                      # every node's scratch starts at the same bytes
    s.reserve(((1000,), np.float64))                   # a later, larger request: the buffer grows
    (big,) = s.views(((0, (1000,), np.dtype(np.float64)),))
    big[...] = 2.0
    assert big.sum() == 2000.0


def test_small_work_stays_in_the_calling_thread(monkeypatch):
    """Below MIN_PARALLEL_WORK for Python's pool, below MIN_POOL_WORK for any, or with 1 thread,
    run_rows makes exactly one plain call."""
    import threading

    calls = []

    def record(r0, r1):
        calls.append((r0, r1, threading.current_thread() is threading.main_thread()))

    _jit.run_rows(record, 100, 2, work=_jit.MIN_PARALLEL_WORK - 1)
    _jit.run_rows(record, 100, 1)
    _jit.run_rows(record, 100, 2, work=_jit.MIN_POOL_WORK - 1)
    assert calls == [(0, 100, True), (0, 100, True), (0, 100, True)]
    calls.clear()
    monkeypatch.setattr(_jit, "cpu_count", lambda: 2)
    _jit.run_rows(record, 100, 2, align=4, work=_jit.MIN_PARALLEL_WORK)
    assert sorted(c[:2] for c in calls) == [(0, 52), (52, 100)]
    assert [c[2] for c in calls if c[0] == 0] == [True] and [c[2] for c in calls if c[0] == 52] == [False]


FLOAT_CONVS = {
    "f32_conv_1x1_two_images": ((2, 9, 7, 24), (40, 1, 1, 24), (1, 1)),
    "f32_conv_3x3_s2_same_pad": ((1, 19, 17, 5), (16, 3, 3, 5), (2, 2)),
    "f32_conv_3x3_three_images": ((3, 8, 6, 4), (9, 3, 3, 4), (1, 1)),
}


@pytest.mark.parametrize("path", ["igemm", "blas"])
@pytest.mark.parametrize("case", sorted(FLOAT_CONVS))
def test_float_conv_rows_shared_between_threads(case, path, split_everything, monkeypatch):
    """The float CONV_2D fast paths: the kernel library's own product (igemm, where the library and
    AVX-512 are there), or OpenBLAS's product then bias and clamp in row pieces (1x1 matmul, im2col),
    on two threads: what one thread writes, and the reference's values; a NaN in one piece's rows
    (or a sum that overflows) sends the whole node to the reference."""
    from helpers.interpreter_ops_cases import conv as conv_f32

    if path == "igemm" and _fgemm.function() is None:
        pytest.skip("no kernel library with AVX-512 here: the BLAS case covers this machine")
    if path == "blas":
        monkeypatch.setattr(_fgemm, "function", lambda: None)
    monkeypatch.setattr(_fgemm, "MIN_SPLIT_WORK", 0)
    x_shape, w_shape, stride = FLOAT_CONVS[case]
    builder, inputs = conv_f32(x_shape, w_shape, stride=stride, act=Act.RELU6)(case)
    inputs = {"x": inputs["x"] * np.float32(8)}
    model = update_versions(builder.build())
    one, kname = run(model, inputs, threads=1)
    two, _ = run(model, inputs, threads=2)
    ref, _ = run(model, inputs, reference=True)
    assert ("igemm" in kname) if path == "igemm" else ("matmul" in kname or "im2col" in kname), kname
    np.testing.assert_allclose(two[0], one[0], rtol=1e-5, atol=1e-5)   # BLAS may sum in another order
    np.testing.assert_allclose(two[0], ref[0], rtol=1e-5, atol=1e-5)
    assert 0 < (two[0] == 6).sum() < two[0].size and (two[0] == 0).any()        # the clamp happened per piece
    x = inputs["x"].copy()
    x[-1, -1, -1, 0] = np.nan                     # only the last piece sees it
    nan_two, _ = run(model, {"x": x}, threads=2)
    nan_ref, _ = run(model, {"x": x}, reference=True)
    assert nan_two[0].tobytes() == nan_ref[0].tobytes()
    huge = inputs["x"].copy()
    huge[0, 0, 0, :] = np.float32(3e38)           # products overflow to inf in one pixel's sums
    huge_two, _ = run(model, {"x": huge}, threads=2)
    huge_ref, _ = run(model, {"x": huge}, reference=True)
    assert huge_two[0].tobytes() == huge_ref[0].tobytes()


def test_float_guard_pieces_and_limit(split_everything):
    """The float conv guard reads its input as pieces of GUARD_CHUNK values: a value at or above the
    limit (or NaN / inf) raises the flag wherever it sits: first or last value of a piece, in the
    short last piece, with one or two threads; the float32 limit is never laxer than 1e38 / bound."""
    size = 3 * fast_conv.GUARD_CHUNK + 17
    pieces = -(-size // fast_conv.GUARD_CHUNK)
    limit = fast_conv.guard_limit(1e30)
    assert float(limit) <= 1e8 and float(np.nextafter(limit, np.float32(np.inf))) > 1e8
    assert fast_conv.guard_limit(0.0) == np.inf and fast_conv.guard_limit(np.nan) == np.inf
    assert fast_conv.guard_limit(1e-30) == fast_conv.guard_limit(0.29) == np.inf and fast_conv.guard_limit(0.3) < np.inf
    for bound in (3.0, 7.1e30, 1.01, 123456.789):
        lf = fast_conv.guard_limit(bound)
        assert float(lf) <= 1e38 / bound and float(np.nextafter(lf, np.float32(np.inf))) > 1e38 / bound
    for threads in (1, 2):
        flat = np.full(size, np.float32(-1e8) * np.float32(0.999), np.float32)
        flags = np.zeros(1, np.int8)
        _jit.run_rows(fast_conv.float_guard_rows, pieces, threads, flat, limit, flags)
        assert flags[0] == 0
        for where in (0, fast_conv.GUARD_CHUNK - 1, fast_conv.GUARD_CHUNK, 2 * fast_conv.GUARD_CHUNK + 5, size - 1):
            for value in (np.float32(1e8), np.float32(-np.inf), np.float32(np.nan)):
                bad = flat.copy()
                bad[where] = value
                flags[0] = 0
                _jit.run_rows(fast_conv.float_guard_rows, pieces, threads, bad, limit, flags)
                assert flags[0] == 1, (threads, where, value)
