"""How the teaching layer's OpData and dispatch are laid out: FULLY_CONNECTED's OpData classes share
FullyConnectedGeometry (kernels/_fc_geometry.py), FULLY_CONNECTED, DEPTHWISE_CONV_2D and SOFTMAX run
their routines from a table keyed by OpData class, and the dtype constants come from kernels/_common.py."""

from __future__ import annotations

import dataclasses
import inspect
import pathlib
import re

import numpy as np

from workbench.interpreter.kernels import _common, _fc_geometry, depthwise_conv_2d, fully_connected, softmax

KERNELS = pathlib.Path(_common.__file__).parent


def _opdata_classes(module, base):
    """The concrete OpData classes of ``module`` and its FULLY_CONNECTED helpers deriving from ``base``."""
    found = set()
    for mod in (module, *[m for _, m in inspect.getmembers(module, inspect.ismodule)]):
        for _, cls in inspect.getmembers(mod, inspect.isclass):
            if issubclass(cls, base) and cls is not base and cls.__name__.endswith("Data"):
                found.add(cls)
    return found


def test_every_fully_connected_opdata_begins_with_the_geometry_fields():
    classes = _opdata_classes(fully_connected, _fc_geometry.FullyConnectedGeometry)
    assert len(classes) == 9          # float, int8, uint8, 16x8, hybrid, int4, blockwise int4, int16 weights, sparse
    head = [f.name for f in dataclasses.fields(_fc_geometry.FullyConnectedGeometry)]
    assert head == ["batch", "units", "depth", "keep_num_dims", "output_shape", "activation"]
    for cls in classes:
        assert [f.name for f in dataclasses.fields(cls)][:len(head)] == head, cls.__name__


def test_every_fully_connected_opdata_has_a_routine_in_the_dispatch_table():
    assert set(fully_connected.REFERENCE) == _opdata_classes(fully_connected, _fc_geometry.FullyConnectedGeometry)


def test_every_depthwise_opdata_has_a_routine_in_the_dispatch_table():
    concrete = {depthwise_conv_2d.DepthwiseConv2DData, depthwise_conv_2d.DepthwiseConv2DInt8Data,
                depthwise_conv_2d.DepthwiseConv2DUint8Data, depthwise_conv_2d.DepthwiseConv2DInt16Data,
                depthwise_conv_2d.DepthwiseConv2DHybridData}
    assert _opdata_classes(depthwise_conv_2d, depthwise_conv_2d.DepthwiseGeometry) == concrete
    assert set(depthwise_conv_2d.REFERENCE) == concrete


def test_every_softmax_opdata_has_a_routine_in_the_dispatch_table():
    assert set(softmax.REFERENCE) == {softmax.SoftmaxData, softmax.SoftmaxFloat16Data, softmax.SoftmaxInt8Data,
                                      softmax.SoftmaxFixedPointData, softmax.SoftmaxInt16Data}


def test_fully_connected_geometry_repr_stays_readable_and_frozen():
    d = fully_connected.FullyConnectedData(batch=2, units=3, depth=4, keep_num_dims=False, output_shape=(2, 3),
                                           activation="NONE", output_activation_min=-1.0, output_activation_max=1.0)
    assert repr(d) == ("FullyConnectedData(batch=2, units=3, depth=4, keep_num_dims=False, output_shape=(2, 3), "
                       "activation='NONE', output_activation_min=-1, output_activation_max=1)")
    try:
        d.batch = 5
    except dataclasses.FrozenInstanceError:
        pass
    else:
        raise AssertionError("OpData must be frozen")


def test_dtype_constants_are_defined_only_in_common():
    assert (_common.I8, _common.U8, _common.I16, _common.I32, _common.I64) == tuple(
        np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.int32, np.int64))
    assert (_common.F16, _common.F32, _common.F64, _common.BOOL, _common.U32) == tuple(
        np.dtype(t) for t in (np.float16, np.float32, np.float64, np.bool_, np.uint32))
    define = re.compile(r"^(?:(?:BOOL|F16|F32|F64|I8|I16|I32|I64|U8|U32)(?:, )?)+ = np\.dtype", re.M)
    copies = [p.name for p in KERNELS.glob("*.py") if p.name != "_common.py" and define.search(p.read_text())]
    assert copies == []
