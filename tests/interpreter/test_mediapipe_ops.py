"""MediaPipe's custom ops (Landmarks2TransformMatrix, TransformLandmarks, TransformTensorBilinear, v2).

ai-edge-litert cannot run these (they are not in its resolver), so they are validated by:
  * values worked out by hand (identity and translation matrices, an axis-aligned and a rotated
    landmark box, out-of-image sampling);
  * an independent re-implementation below, written the way MediaPipe's C++ is structured (float32,
    3x3 / 4x4 matrix products in the same order, one output pixel at a time), compared with the
    interpreter's outputs with and without reference=True on random inputs, and with every custom node of
    face_landmark_with_attention during a real run;
  * end to end on face_landmark_with_attention: it runs, every output has the declared shape and
    is finite, and the refined lips / eye landmarks -- predicted in crops cut out by
    TransformTensorBilinear and mapped back by TransformLandmarks -- land on the matching points of
    the face mesh the model predicts directly (within a few pixels of a 192-pixel image), which
    only holds when the three ops agree on the crop geometry.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from flatbuffers import flexbuffers

from workbench import load
from workbench.errors import UnsupportedOpError, WorkbenchError
from workbench.interpreter import Interpreter
from workbench.interpreter.registry import BuiltinOpResolver
from workbench.options import parse
from workbench.schema import BuiltinOperator as B
from workbench.schema import ModelBuilder

F32 = np.float32


# ------------------------------------------------------------------------------------------------
# an independent re-implementation, structured like MediaPipe's C++ (float32 throughout)


def mat_mul(a, b):
    n = a.shape[0]
    out = np.zeros((n, n), F32)
    for r in range(n):
        for c in range(n):
            s = F32(0)
            for k in range(n):
                s = F32(s + F32(a[r, k] * b[k, c]))
            out[r, c] = s
    return out


def mp_landmarks_to_matrix(lm, subset, left, right, target, oh, ow, sx, sy):
    lm = lm.reshape(-1, 3).astype(F32)
    rot = F32(math.atan2(float(lm[right, 1] - lm[left, 1]), float(lm[right, 0] - lm[left, 0])))
    r = F32(F32(target) - rot)
    pairs = [(subset[2 * i], subset[2 * i + 1]) for i in range(len(subset) // 2)]
    if len(subset) % 2:
        pairs.append((subset[-1], subset[-1]))
    pts = [lm[i] for p in pairs for i in p]
    c, s = F32(math.cos(r)), F32(math.sin(r))
    rotated = [(F32(c * p[0] - s * p[1]), F32(s * p[0] + c * p[1])) for p in pts]
    xs, ys = [p[0] for p in rotated], [p[1] for p in rotated]
    w, h = F32(max(xs) - min(xs)), F32(max(ys) - min(ys))
    mx, my = F32((min(xs) + max(xs)) / 2), F32((min(ys) + max(ys)) / 2)
    ci, si = F32(math.cos(-r)), F32(math.sin(-r))
    cx, cy = F32(ci * mx - si * my), F32(si * mx + ci * my)
    t = np.eye(4, dtype=F32)
    t = mat_mul(t, np.array([[1, 0, 0, cx], [0, 1, 0, cy], [0, 0, 1, 0], [0, 0, 0, 1]], F32))
    rr = -r
    t = mat_mul(t, np.array([[math.cos(rr), -math.sin(rr), 0, 0], [math.sin(rr), math.cos(rr), 0, 0],
                             [0, 0, 1, 0], [0, 0, 0, 1]], F32))
    t = mat_mul(t, np.diag([F32(sx * w / ow), F32(sy * h / oh), 1, 1]).astype(F32))
    t = mat_mul(t, np.array([[1, 0, 0, -ow / 2.0], [0, 1, 0, -oh / 2.0], [0, 0, 1, 0], [0, 0, 0, 1]], F32))
    return t.reshape(1, 4, 4)


def mp_transform_landmarks(points, m):
    m = m.reshape(-1).astype(F32)
    out = points.astype(F32).copy()
    for i in range(points.shape[1]):
        x, y = points[0, i, 0], points[0, i, 1]
        out[0, i, 0] = m[0] * x + m[1] * y + m[2] * F32(0) + m[3]
        out[0, i, 1] = m[4] * x + m[5] * y + m[6] * F32(0) + m[7]
    return out


def mp_transform_tensor_bilinear(x, m, oh, ow):
    _, h, w, c = x.shape
    m = m.reshape(-1).astype(F32)
    xt, yt = m[0:4].copy(), m[4:8].copy()
    xt[3] += xt[0] * 0.5 + xt[1] * 0.5 - 0.5
    yt[3] += yt[0] * 0.5 + yt[1] * 0.5 - 0.5
    out = np.zeros((1, oh, ow, c), F32)

    def read(hh, ww):
        return np.zeros(c, F32) if hh < 0 or ww < 0 or hh >= h or ww >= w else x[0, hh, ww]

    for oy in range(oh):
        for ox in range(ow):
            tx = F32(xt[0] * ox + xt[1] * oy + xt[2] * 0 + xt[3])
            ty = F32(yt[0] * ox + yt[1] * oy + yt[2] * 0 + yt[3])
            if tx < 0 or tx > w - 1 or ty < 0 or ty > h - 1:
                continue
            fx, fy = int(math.floor(tx)), int(math.floor(ty))
            rc, lc = F32(tx - fx), F32(ty - fy)
            upper = (1 - rc) * read(fy, fx) + rc * read(fy, fx + 1)
            lower = (1 - rc) * read(fy + 1, fx) + rc * read(fy + 1, fx + 1)
            out[0, oy, ox] = lc * lower + (1 - lc) * upper
    return out


# ------------------------------------------------------------------------------------------------
# tiny models


def custom_model(name, inputs, out_shape, options=None):
    b = ModelBuilder()
    ids = [b.input(f"in{k}", a.shape) for k, a in enumerate(inputs)]
    y = b.tensor("y", out_shape)
    b.op(B.CUSTOM, ids, [y], custom_code=name, version=2,
         custom_options=None if options is None else flexbuffers.Dumps(options))
    b.output(y)
    return b.build(), {f"in{k}": a for k, a in enumerate(inputs)}


def run(model, feed, reference=False):
    it = Interpreter(model=model, reference=reference)
    it.allocate_tensors()
    names = {d["name"]: d["index"] for d in it.get_input_details()}
    for k, v in feed.items():
        it.set_tensor(names[k], v)
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"])


def close(a, b, rtol=1e-5):
    scale = max(1.0, float(np.abs(b).max()))
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale)


def matrix(rows):
    m = np.eye(4, dtype=F32)
    m[:2] = np.asarray(rows, F32)
    return m.reshape(1, 4, 4)


L2T_OPTS = dict(output_height=16, output_width=16, scale_x=1.5, scale_y=1.5, target_rotation_radians=0.0)


# -- TransformLandmarks ---------------------------------------------------------------------------


def test_transform_landmarks_identity_and_translation():
    pts = np.arange(10, dtype=F32).reshape(1, 5, 2)
    out = run(*custom_model("TransformLandmarks", [pts, matrix([[1, 0, 0, 0], [0, 1, 0, 0]])], (1, 5, 2)))
    np.testing.assert_array_equal(out, pts)
    out = run(*custom_model("TransformLandmarks", [pts, matrix([[2, 0, 9, 3], [0, -1, 9, 4]])], (1, 5, 2)))
    # column 2 multiplies z = 0, so the 9s do not matter
    np.testing.assert_array_equal(out[0, :, 0], 2 * pts[0, :, 0] + 3)
    np.testing.assert_array_equal(out[0, :, 1], -pts[0, :, 1] + 4)


def test_transform_landmarks_3d_copies_z():
    rng = np.random.default_rng(1)
    pts = rng.uniform(-5, 5, (1, 7, 3)).astype(F32)
    m = matrix(rng.uniform(-2, 2, (2, 4)))
    out = run(*custom_model("TransformLandmarks", [pts, m], (1, 7, 3)))
    np.testing.assert_array_equal(out[..., 2], pts[..., 2])
    close(out, mp_transform_landmarks(pts, m))


# -- Landmarks2TransformMatrix ------------------------------------------------------------------


def test_landmarks_to_matrix_axis_aligned_box():
    # four landmarks on a 40 x 20 box centred at (100, 50); left/right on a horizontal line
    lm = np.zeros((1, 6, 3), F32)
    lm[0, :4, :2] = [[80, 40], [120, 40], [80, 60], [120, 60]]
    lm[0, 4, :2], lm[0, 5, :2] = [80, 50], [120, 50]
    opts = dict(L2T_OPTS, subset_idxs=[0, 1, 2, 3], left_rotation_idx=4, right_rotation_idx=5)
    out = run(*custom_model("Landmarks2TransformMatrix", [lm], (1, 4, 4), opts))[0]
    sx, sy = 1.5 * 40 / 16, 1.5 * 20 / 16
    expected = np.array([[sx, 0, 0, 100 - sx * 8], [0, sy, 0, 50 - sy * 8], [0, 0, 1, 0], [0, 0, 0, 1]], F32)
    close(out, expected)
    # the crop's centre pixel maps to the box centre
    centre = out @ np.array([8, 8, 0, 1], F32)
    close(centre[:2], np.array([100, 50], F32))


def test_landmarks_to_matrix_follows_a_rotated_box():
    theta = math.radians(30)
    rot = np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])
    box = np.array([[-20, -10], [20, -10], [-20, 10], [20, 10], [-20, 0], [20, 0]], float)
    lm = np.zeros((1, 6, 3), F32)
    lm[0, :, :2] = box @ rot.T + [100, 50]
    opts = dict(L2T_OPTS, subset_idxs=[0, 1, 2, 3], left_rotation_idx=4, right_rotation_idx=5)
    out = run(*custom_model("Landmarks2TransformMatrix", [lm], (1, 4, 4), opts))[0]
    # the crop's x axis runs along the box's long side, scaled by 1.5 * 40 / 16
    s = 1.5 * 40 / 16
    close(out[:2, 0], s * rot[:, 0].astype(F32), 1e-5)
    close((out @ np.array([8, 8, 0, 1], F32))[:2], np.array([100, 50], F32), 1e-5)
    close(out[None], mp_landmarks_to_matrix(lm, [0, 1, 2, 3], 4, 5, 0.0, 16, 16, 1.5, 1.5))


def test_landmarks_to_matrix_random_against_reimplementation():
    rng = np.random.default_rng(7)
    lm = rng.uniform(0, 192, (1, 30, 3)).astype(F32)
    subset = [int(i) for i in rng.choice(30, 11, replace=False)]     # odd: the last one is paired with itself
    opts = dict(output_height=12, output_width=20, scale_x=1.2, scale_y=0.8, target_rotation_radians=0.3,
                subset_idxs=subset, left_rotation_idx=3, right_rotation_idx=17)
    out = run(*custom_model("Landmarks2TransformMatrix", [lm], (1, 4, 4), opts))
    close(out, mp_landmarks_to_matrix(lm, subset, 3, 17, 0.3, 12, 20, 1.2, 0.8))


def test_landmarks_to_matrix_index_out_of_range_names_the_node():
    lm = np.zeros((1, 5, 3), F32)
    opts = dict(L2T_OPTS, subset_idxs=[0, 9], left_rotation_idx=0, right_rotation_idx=1)
    with pytest.raises(WorkbenchError, match=r"Landmarks2TransformMatrix.*node 0.*subset_idxs 9"):
        run(*custom_model("Landmarks2TransformMatrix", [lm], (1, 4, 4), opts))


# -- TransformTensorBilinear ----------------------------------------------------------------------


def test_bilinear_identity_copies_the_input():
    x = np.random.default_rng(2).uniform(-1, 1, (1, 6, 5, 3)).astype(F32)
    out = run(*custom_model("TransformTensorBilinear", [x, matrix([[1, 0, 0, 0], [0, 1, 0, 0]])], (1, 6, 5, 3),
                            dict(output_height=6, output_width=5)))
    np.testing.assert_allclose(out, x, atol=1e-7)


def test_bilinear_half_pixel_shift_and_outside_is_zero():
    x = np.arange(16, dtype=F32).reshape(1, 4, 4, 1)
    # shift by half a pixel right: samples between columns; the last column falls outside -> 0
    out = run(*custom_model("TransformTensorBilinear", [x, matrix([[1, 0, 0, 0.5], [0, 1, 0, 0]])], (1, 4, 4, 1),
                            dict(output_height=4, output_width=4)))
    np.testing.assert_allclose(out[0, :, :3, 0], x[0, :, :3, 0] + 0.5)
    assert (out[0, :, 3, 0] == 0).all()


def test_bilinear_scaled_crop_uses_pixel_centres():
    x = np.arange(64, dtype=F32).reshape(1, 8, 8, 1)
    # a 4x4 crop covering the whole 8x8 input (scale 2): with the pixel-centre correction, output
    # pixel i samples input coordinate 2 i + 0.5, the centre of the 2x2 block it covers
    out = run(*custom_model("TransformTensorBilinear", [x, matrix([[2, 0, 0, 0], [0, 2, 0, 0]])], (1, 4, 4, 1),
                            dict(output_height=4, output_width=4)))
    blocks = x[0, :, :, 0].reshape(4, 2, 4, 2).mean(axis=(1, 3))
    np.testing.assert_allclose(out[0, :, :, 0], blocks)


def test_bilinear_random_against_reimplementation_and_reference_path():
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (1, 20, 17, 4)).astype(F32)
    m = matrix([[0.9, -0.4, 0, 6.0], [0.35, 0.8, 0, -1.5]])
    model, feed = custom_model("TransformTensorBilinear", [x, m], (1, 11, 13, 4),
                               dict(output_height=11, output_width=13))
    fast, ref = run(model, feed), run(model, feed, reference=True)
    theirs = mp_transform_tensor_bilinear(x, m, 11, 13)
    assert (theirs == 0).any() and (theirs != 0).any()      # the crop leaves the image somewhere
    close(fast, theirs)
    close(ref, theirs)


def test_custom_ops_are_registered_at_version_2_only():
    r = BuiltinOpResolver()
    for name in ("Landmarks2TransformMatrix", "TransformLandmarks", "TransformTensorBilinear"):
        assert r.versions(name) == (2,)
        with pytest.raises(UnsupportedOpError, match="version 1"):
            r.find(name, 1)


# ------------------------------------------------------------------------------------------------
# face_landmark_with_attention end to end


@pytest.fixture(scope="module")
def face_model(corpus_paths) -> Path:
    path = corpus_paths.get("face_landmark_with_attention")
    if path is None:
        pytest.skip("face_landmark_with_attention is not in the corpus")
    return path


def _run_face(path, seed):
    it = Interpreter(model_path=str(path))
    it.allocate_tensors()
    d = it.get_input_details()[0]
    it.set_tensor(d["index"], np.random.default_rng(seed).uniform(0, 1, d["shape"]).astype(F32))
    events = [e for e in it.steps() if e.op in ("Landmarks2TransformMatrix", "TransformLandmarks",
                                                 "TransformTensorBilinear")]
    outs = {o["name"]: np.array(it.get_tensor(o["index"])) for o in it.get_output_details()}
    return it, events, outs


def test_face_landmark_with_attention_runs(face_model):
    model = load(face_model.read_bytes())
    declared = {model.subgraphs[0].tensors[t].name: tuple(model.subgraphs[0].tensors[t].shape)
                for t in model.subgraphs[0].outputs}
    _, events, outs = _run_face(face_model, 0)
    assert len(events) == 11          # 3 + 3 + 5 custom nodes, all executed
    assert set(outs) == set(declared)
    for name, v in outs.items():
        assert v.shape == declared[name], name
        assert np.isfinite(v).all(), name


def test_face_custom_nodes_match_the_reimplementation(face_model):
    model = load(face_model.read_bytes())
    sg = model.subgraphs[0]
    _, events, _ = _run_face(face_model, 1)
    for e in events:
        opts = parse(model, sg.operators[e.node]).custom.value
        if e.op == "Landmarks2TransformMatrix":
            theirs = mp_landmarks_to_matrix(e.inputs[0], opts["subset_idxs"], opts["left_rotation_idx"],
                                            opts["right_rotation_idx"], opts["target_rotation_radians"],
                                            opts["output_height"], opts["output_width"], opts["scale_x"],
                                            opts["scale_y"])
        elif e.op == "TransformLandmarks":
            theirs = mp_transform_landmarks(e.inputs[0], e.inputs[1])
        else:
            theirs = mp_transform_tensor_bilinear(e.inputs[0], e.inputs[1], opts["output_height"],
                                                  opts["output_width"])
        close(e.outputs[0], theirs, 1e-4)


@pytest.mark.parametrize("seed", [0, 1])
def test_face_refined_landmarks_land_on_the_mesh(face_model, seed):
    model = load(face_model.read_bytes())
    sg = model.subgraphs[0]
    subsets = [parse(model, op).custom.value["subset_idxs"] for op in sg.operators
               if model.operator_codes[op.opcode_index].custom_code == "Landmarks2TransformMatrix"]
    _, _, outs = _run_face(face_model, seed)
    mesh = outs["output_mesh_identity"].reshape(468, 3)[:, :2]
    for name, subset in zip(("output_lips", "output_left_eye", "output_right_eye"), subsets):
        refined = outs[name].reshape(-1, 2)
        assert refined.shape[0] == len(subset)
        err = np.abs(refined - mesh[subset]).mean()
        spread = mesh[subset].std(axis=0).max()
        assert err < 4.0 and err < 0.5 * spread, (name, err, spread)
