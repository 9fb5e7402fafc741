"""The notebook views: byte maps checked against the raw bytes, summaries, trees, graphs, the explorer.

Every offset a byte map shows is read back from the file with :mod:`struct` and compared with the
decoded value, so the X-ray cannot drift from the file it claims to show.
"""

from __future__ import annotations

import re
import struct

import graphviz
import numpy as np
import pytest

import workbench
from workbench import corpus, viz
from workbench.options import parse
from workbench.schema import (
    ActivationFunctionType,
    AddOptions,
    BuiltinOperator,
    Conv2DOptions,
    FlatTable,
    Padding,
    PadOptions,
    tensor_data,
)
from workbench.schema.builder import ModelBuilder
from workbench.schema.declare import Bytes, Enum, Scalar, String, TableRef, UnionRef, Vector
from workbench.viz import _html

HAVE_DOT = graphviz.ExecutableNotFound is not None
try:
    graphviz.Digraph().pipe(format="svg")
except graphviz.ExecutableNotFound:
    HAVE_DOT = False


# ---------------------------------------------------------------------------------------------
# models


def build_tiny():
    """CONV_2D (options stored), ADD (RELU), CONV_2D without an options table, a custom op."""
    b = ModelBuilder()
    x = b.input("x", [1, 8, 8, 3])
    w = b.constant("w", np.arange(4 * 3 * 3 * 3, dtype=np.float32).reshape(4, 3, 3, 3))
    bias = b.constant("bias", np.ones(4, np.float32))
    y = b.tensor("y", [1, 4, 4, 4])
    b.op(BuiltinOperator.CONV_2D, [x, w, bias], [y],
         Conv2DOptions(padding=Padding.VALID, stride_w=2, stride_h=2))
    z = b.tensor("z", [1, 4, 4, 4])
    b.op(BuiltinOperator.ADD, [y, y], [z], AddOptions(fused_activation_function=ActivationFunctionType.RELU))
    u = b.tensor("u", [1, 2, 2, 4])
    b.op(BuiltinOperator.CONV_2D, [z, w, -1], [u])
    v = b.tensor("v", [1, 2, 2, 4])
    b.op(None, [u], [v], custom_code="MyCustom", custom_options=b"\x01\x00\x00\x00\x02\x00\x00\x00")
    b.output(v)
    b.add_metadata("min_runtime_version", b"2.3.0".ljust(16, b"\0"))
    return b.build()


@pytest.fixture(scope="module")
def tiny_bytes():
    return workbench.dump(build_tiny())


@pytest.fixture(scope="module")
def tiny(tiny_bytes):
    return workbench.load(tiny_bytes)


@pytest.fixture(scope="module")
def face_path():
    return corpus.path("face_landmark")


@pytest.fixture(scope="module")
def face(face_path):
    return workbench.load(face_path)


@pytest.fixture(scope="module")
def face_bytes(face_path):
    return face_path.read_bytes()


# ---------------------------------------------------------------------------------------------
# the byte-map checker


def _read_scalar(data: bytes, t, pos: int):
    if isinstance(t, Enum):
        t = t.scalar
    if t.name == "bool":
        return data[pos] != 0
    return t.struct.unpack_from(data, pos)[0]


def check_byte_map(data: bytes, bm, table) -> None:
    """Every number in ``bm`` agrees with the raw bytes and with the decoded ``table``."""
    u16 = struct.Struct("<H")
    u32 = struct.Struct("<I")
    assert bm.pos == table.origin.pos and bm.vtable == table.origin.vtable
    assert struct.unpack_from("<i", data, bm.pos)[0] == bm.soffset
    assert bm.pos - bm.soffset == bm.vtable
    assert struct.unpack_from("<HH", data, bm.vtable) == (bm.vtable_size, bm.object_size)
    assert bm.table_bytes == data[bm.pos:bm.pos + bm.object_size]
    assert bm.vtable_bytes == data[bm.vtable:bm.vtable + bm.vtable_size]
    decl = table.__decl__
    seen = set()
    for e in bm.entries:
        assert e.slot not in seen
        seen.add(e.slot)
        if e.entry_pos is None:
            assert e.slot >= bm.slots_in_vtable and e.offset == 0
        else:
            assert e.entry_pos == bm.vtable + 4 + 2 * e.slot < bm.vtable + bm.vtable_size
            assert u16.unpack_from(data, e.entry_pos)[0] == e.offset
        if e.field == "?":
            continue
        f = decl.field(e.field)
        union_tag = isinstance(f.type, UnionRef) and e.field != f.name
        x = table.xray(e.field)
        assert (x.slot, x.present, x.offset) == (e.slot, e.present, e.pos)
        assert e.value is getattr(table, e.field) or e.value == getattr(table, e.field)
        if not e.present:
            assert e.pos is None
            if union_tag:
                assert int(e.value) == 0
            elif not isinstance(f.type, UnionRef):
                assert e.value == f.resolved_default() == e.default
            continue
        assert e.pos == bm.pos + e.offset
        assert bm.pos + 4 <= e.pos and e.pos + e.size <= bm.pos + bm.object_size
        if union_tag:
            assert data[e.pos] == int(e.value) and e.size == 1
        elif isinstance(f.type, (Scalar, Enum)):
            assert e.size == f.type.size
            assert _read_scalar(data, f.type, e.pos) == e.value
        else:
            assert e.size == 4
            target = e.pos + u32.unpack_from(data, e.pos)[0]
            assert e.target == target
            t = f.type
            if isinstance(t, (TableRef, UnionRef)):
                assert e.value.origin.pos == target
            elif isinstance(t, String):
                n = u32.unpack_from(data, target)[0]
                assert data[target + 4:target + 4 + n].decode("utf-8") == e.value
            elif isinstance(t, Bytes):
                n = u32.unpack_from(data, target)[0]
                assert data[target + 4:target + 4 + n] == bytes(e.value)
            elif isinstance(t, Vector):
                n = u32.unpack_from(data, target)[0]
                assert n == len(e.value)
                el = t.element
                if isinstance(el, (Scalar, Enum)):
                    size = el.size
                    got = tuple(_read_scalar(data, el, target + 4 + size * i) for i in range(n))
                    assert got == tuple(e.value)
                elif isinstance(el, TableRef):
                    for i, item in enumerate(e.value):
                        p = target + 4 + 4 * i
                        assert item.origin.pos == p + u32.unpack_from(data, p)[0]


def all_tables(obj, seen=None):
    """Every decoded table reachable from ``obj`` (each position once)."""
    seen = {} if seen is None else seen
    if isinstance(obj, FlatTable):
        key = (type(obj).__name__, obj.origin.pos)
        if key in seen:
            return seen
        seen[key] = obj
        for name, _ in obj.__decl__.python_fields():
            all_tables(getattr(obj, name), seen)
    elif isinstance(obj, tuple):
        for item in obj:
            if isinstance(item, (FlatTable, tuple)):
                all_tables(item, seen)
    return seen


# ---------------------------------------------------------------------------------------------
# byte_map


def test_byte_map_of_every_table_of_a_built_model_matches_its_bytes(tiny, tiny_bytes):
    tables = all_tables(tiny)
    assert {"Model", "SubGraph", "Operator", "Tensor", "Buffer", "Conv2DOptions", "AddOptions",
            "OperatorCode", "Metadata"} <= {name for name, _ in tables}
    for table in tables.values():
        check_byte_map(tiny_bytes, viz.byte_map(tiny, table), table)


def test_byte_map_of_every_operator_and_options_table_in_face_landmark(face, face_bytes):
    sg = face.subgraphs[0]
    for op in sg.operators:
        check_byte_map(face_bytes, viz.byte_map(face, op), op)
        if op.builtin_options is not None:
            check_byte_map(face_bytes, viz.byte_map(face, op.builtin_options), op.builtin_options)
    for table in (face, sg, sg.tensors[0], sg.tensors[1], face.buffers[1], *face.operator_codes):
        check_byte_map(face_bytes, viz.byte_map(face, table), table)


@pytest.mark.parametrize("name", ["face_landmark_with_attention", "selfie_segmentation", "sine_float"])
def test_byte_map_of_custom_and_newer_models_matches_their_bytes(name):
    path = corpus.path(name)
    data = path.read_bytes()
    model = workbench.load(path)
    for op in model.subgraphs[0].operators:
        check_byte_map(data, viz.byte_map(model, op), op)


def test_conv_options_in_face_landmark_store_only_the_strides(face):
    bm = viz.byte_map(face, face.subgraphs[0].operators[2].builtin_options)
    assert bm.table == "Conv2DOptions"
    assert bm.present == ("stride_w", "stride_h")
    padding = bm.entry("padding")
    assert padding.entry_pos is not None and padding.offset == 0  # in the vtable, written as 0
    assert bm.entry("dilation_w_factor").entry_pos is None  # past the trimmed vtable's end
    assert bm.entry("quantized_bias_type").since == 8


def test_byte_map_text_and_html_show_present_and_defaulted(tiny):
    bm = viz.byte_map(tiny, tiny.subgraphs[0].operators[0].builtin_options)
    assert set(bm.present) == {"padding", "stride_w", "stride_h"}
    text = str(bm)
    assert "Conv2DOptions" in text and "vtable" in text
    assert re.search(r"dilation_w_factor .*absent .*→ default 1", text)
    assert re.search(r"stride_w .*byte \d+ +2", text)
    assert "A = " in text and "key:" in text
    html = bm._repr_html_()
    assert "wb-xray" in html
    assert html.count(_html.ABSENT) >= 4  # the defaulted rows
    e = bm.entry("stride_w")
    assert f"byte {e.pos}" in html and f"@{e.entry_pos}" in html
    # the value bytes are coloured like their row: the hex cells carry the field as a tooltip
    assert "title='slot 1 stride_w = 2" in html


def test_byte_map_folds_long_runs_of_trimmed_slots(face):
    bm = viz.byte_map(face, face.subgraphs[0].operators[30])  # PAD: no options table
    assert bm.slots_in_vtable == 3
    text = str(bm)
    assert "slots 3-13 lie past the vtable's end" in text
    assert "builtin_options_type=NONE" in text
    assert bm.soffset < 0 and "after the table" in text  # a shared vtable written earlier


def test_byte_map_accepts_paths_and_options(face):
    op = face.subgraphs[0].operators[2]
    by_path = viz.byte_map(face, "model.subgraphs[0].operators[2].builtin_options")
    assert by_path == viz.byte_map(face, op.builtin_options) == viz.byte_map(face, parse(face, op))
    assert viz.byte_map(face, "subgraphs[0].operators[2]").table == "Operator"
    with pytest.raises(ValueError, match="cannot read the path"):
        viz.byte_map(face, "model.subgraphs[0]..x")


def test_byte_map_refuses_what_has_no_bytes(face):
    with pytest.raises(ValueError, match="no .*table in the file"):
        viz.byte_map(face, parse(face, 30))  # PAD without PadOptions
    with pytest.raises(ValueError, match="absent"):
        viz.byte_map(face, face.subgraphs[0].operators[30].builtin_options)
    built = build_tiny()
    with pytest.raises(ValueError, match="built in code"):
        viz.byte_map(built, built.subgraphs[0].operators[0])
    with pytest.raises(TypeError):
        viz.byte_map(face, 42)


# ---------------------------------------------------------------------------------------------
# header, zero copy


def test_file_header_reads_root_offset_and_identifier(face, face_bytes):
    h = viz.file_header(face)
    assert h.root_offset == struct.unpack_from("<I", face_bytes, 0)[0] == face.origin.pos
    assert h.identifier == b"TFL3" and h.size == len(face_bytes)
    assert "TFL3" in str(h) and "TFL3" in h._repr_html_()


def test_file_offset_points_at_the_buffer_data(face, face_bytes):
    sg = face.subgraphs[0]
    for i in (1, 2):
        arr = tensor_data(face, 0, i)
        at = viz.file_offset(face, arr)
        buf = face.buffers[sg.tensors[i].buffer]
        e = viz.byte_map(face, buf).entry("data")
        assert at == e.target + 4  # after the vector's length prefix
        assert face_bytes[at:at + arr.nbytes] == arr.tobytes()
    assert viz.file_offset(face, np.zeros(3)) is None


# ---------------------------------------------------------------------------------------------
# summary, walk


def test_model_summary_counts_codes_metadata(tiny):
    s = viz.model_summary(tiny)
    assert s.subgraphs[0][2:4] == (7, 4)
    ops = {r.op: r for r in s.opcodes}
    assert ops["CONV_2D"].count == 2 and ops["ADD"].count == 1 and ops["MyCustom"].count == 1
    assert ops["CONV_2D"].builtin_code == ops["CONV_2D"].deprecated_builtin_code == 3
    assert "'2.3.0'" in str(s) and "min_runtime_version" in s._repr_html_()


def test_model_summary_of_old_file_shows_zero_builtin_code(face):
    text = str(viz.model_summary(face))
    assert "CONV_2D" in text and "builtin_code=0, deprecated_builtin_code=3" in text


def test_model_summary_shows_signatures():
    s = viz.model_summary(workbench.load(corpus.path("sine_float")))
    assert s.signatures and s.signatures[0][0] == "serving_default"
    assert "serving_default" in str(s) and "'1.5.0'" in str(s)


def test_walk_shows_first_operators_and_how_many_more(face):
    w = viz.walk(face, operators=2)
    text = str(w)
    assert text.count("operators[") == 2 and "… 208 more operators" in text
    assert "buffers[1]  864 bytes of constant data" in text
    assert "└── " in text and "<pre" in w._repr_html_()
    assert len(text.splitlines()) < 20


def test_walk_marks_optional_inputs(tiny):
    assert "-1  (optional input left out)" in str(viz.walk(tiny, operators=4))


# ---------------------------------------------------------------------------------------------
# graph_view


def _nodes(source: str):
    ops = set(re.findall(r"^\s*(o\d+) \[", source, re.M))
    tensors = set(re.findall(r"^\s*(t\d+) \[", source, re.M))
    edges = re.findall(r"^\s*(\w+) -> (\w+)", source, re.M)
    return ops, tensors, edges


def test_graph_view_counts_nodes_and_edges(face):
    sg = face.subgraphs[0]
    g = viz.graph_view(face)
    assert isinstance(g, graphviz.Digraph)
    ops, tensors, edges = _nodes(g.source)
    assert len(ops) == g.operators == len(sg.operators)
    used = {i for op in sg.operators for i in (*op.inputs, *op.outputs) if i >= 0}
    assert len(tensors) == g.tensors == len(used)
    assert len(edges) == sum(len([i for i in (*op.inputs, *op.outputs) if i >= 0]) for op in sg.operators)
    assert g.constants == g.source.count('fillcolor="#eeeeee"') == 116


def test_graph_view_window_and_hidden_constants(face):
    g = viz.graph_view(face, ops=range(0, 3))
    ops, tensors, edges = _nodes(g.source)
    assert ops == {"o0", "o1", "o2"} and len(tensors) == 6 and len(edges) == 2 + 2 + 4
    assert 'label="CONV_2D v1"' in g.source and "[16,3,3,3] FLOAT16" in g.source
    h = viz.graph_view(face, ops=3, constants=False)
    assert h.constants == 0 and h.hidden_constants == 2 and "+1 constant" in h.source


def test_graph_view_draws_a_1000_tensor_graph():
    model = workbench.load(corpus.path("face_landmark_with_attention"))
    g = viz.graph_view(model)
    assert g.tensors > 1000


def test_graph_view_falls_back_to_text_without_dot(face, monkeypatch):
    g = viz.graph_view(face, ops=4)

    def no_dot(*args, **kwargs):
        raise graphviz.ExecutableNotFound(["dot"])

    monkeypatch.setattr(g, "pipe", no_dot)
    bundle = g._repr_mimebundle_()
    assert set(bundle) == {"text/plain"}
    assert "4 of 210 operators" in bundle["text/plain"] and "apt-get install graphviz" in bundle["text/plain"]


@pytest.mark.skipif(not HAVE_DOT, reason="graphviz's dot is not installed")
def test_graph_view_renders_svg(face):
    bundle = viz.graph_view(face, ops=5)._repr_mimebundle_()
    assert bundle["image/svg+xml"].lstrip().startswith("<?xml") and "<svg" in bundle["image/svg+xml"]
    assert viz.graph_view(face, ops=5)._repr_mimebundle_(include={"text/plain"}).keys() == {"text/plain"}


# ---------------------------------------------------------------------------------------------
# XRayExplorer


def test_explorer_follows_slider_dropdown_and_jump(face):
    ex = viz.XRayExplorer(face)
    first = (ex.options_html.value, ex.xray_html.value, ex.tensors_html.value)
    assert "DEQUANTIZE" in ex.header.value and "absent" in first[0]
    ex.slider.value = 2
    assert ex.dropdown.value == 2
    assert "Conv2DOptions" in ex.options_html.value and ex.options_html.value != first[0]
    bm = viz.byte_map(face, face.subgraphs[0].operators[2].builtin_options)
    assert f"table at byte <b>{bm.pos}</b>" in ex.xray_html.value
    assert "input_1" in ex.tensors_html.value
    ex.dropdown.value = 7
    assert ex.slider.value == 7 and "DepthwiseConv2DOptions" in ex.options_html.value
    ex.jump.value = "MAX_POOL_2D"
    assert ex.slider.value == face.subgraphs[0].operators.index(
        next(op for op in face.subgraphs[0].operators if op.opcode_index == 4))
    assert ex.jump.value == "" and "Pool2DOptions" in ex.options_html.value


def test_explorer_table_choice_switches_the_xray(face):
    ex = viz.XRayExplorer(face)
    ex.slider.value = 2
    options_view = ex.xray_html.value
    ex.table_choice.value = "operator"
    assert ex.xray_html.value != options_view and "<b>Operator</b>" in ex.xray_html.value
    ex.table_choice.value = "options"
    assert ex.xray_html.value == options_view
    ex.slider.value = 30  # PAD: no options table → the Operator's empty slots
    assert "stores no builtin options table" in ex.xray_html.value


def test_explorer_shows_constant_data_location_and_custom_options(face, tiny):
    ex = viz.XRayExplorer(face)
    at = viz.file_offset(face, tensor_data(face, 0, 1))
    assert f"at file byte {at:,}" in ex.tensors_html.value
    ex2 = viz.XRayExplorer(tiny)
    ex2.slider.value = 3
    assert "MyCustom" in ex2.options_html.value and "computed at run time" in ex2.tensors_html.value
    ex2.slider.value = 2
    assert "optional input left out" in ex2.tensors_html.value


def _one_op_model(op, options=None):
    """A one-operator model: x → op → y (PAD gets its paddings as a constant)."""
    b = ModelBuilder()
    x = b.input("x", [1, 2, 2, 1])
    y = b.tensor("y", [1, 4, 4, 1] if op == BuiltinOperator.PAD else [1, 2, 2, 1])
    inputs = [x]
    if op == BuiltinOperator.PAD:
        inputs.append(b.constant("paddings", np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32)))
    b.op(op, inputs, [y], options)
    b.output(y)
    return workbench.load(workbench.dump(b.build()))


@pytest.mark.parametrize("index, name, table", [(0, "DEQUANTIZE", "DequantizeOptions"), (30, "PAD", "PadOptions")])
def test_explorer_says_no_options_table_in_words_for_an_operator_without_one(face, index, name, table):
    ex = viz.XRayExplorer(face)
    ex.slider.value = index
    assert name in ex.header.value
    assert face.subgraphs[0].operators[index].builtin_options is None
    html = ex.options_html.value
    assert "no options table" in html and f"<code>{table}</code>" in html and "has no fields" in html
    assert "<table" not in html and "<th>" not in html          # no empty table with only its header row
    ex.slider.value = 2                                          # an operator with options: still the table
    assert "<th>field</th>" in ex.options_html.value


def test_explorer_says_when_the_schema_declares_no_options_table(tiny):
    ex = viz.XRayExplorer(_one_op_model(BuiltinOperator.RELU))
    assert "no options table" in ex.options_html.value and "schema gives this operator none" in ex.options_html.value
    assert "<table" not in ex.options_html.value
    custom = viz.XRayExplorer(tiny)
    custom.slider.value = 3                                      # MyCustom: its parameters are custom_options
    assert "no options table" in custom.options_html.value and "custom_options" in custom.options_html.value
    assert "<table" not in custom.options_html.value


def test_explorer_says_an_empty_options_table_is_stored_but_holds_nothing():
    ex = viz.XRayExplorer(_one_op_model(BuiltinOperator.PAD, PadOptions()))
    assert "empty options table" in ex.options_html.value and "<table" not in ex.options_html.value
    assert "<b>PadOptions</b>" in ex.xray_html.value            # the X-ray shows the (empty) table itself


def test_explorer_displays_as_widget_with_static_fallback(face):
    ex = viz.XRayExplorer(face)
    bundle = ex._repr_mimebundle_()
    assert {"application/vnd.jupyter.widget-view+json", "text/plain", "text/html"} <= set(bundle)
    assert "XRayExplorer over 210 operators" in bundle["text/plain"]
