"""Step 4 of :mod:`workbench.delegate.quantize`: writing the int8 model from a quantization plan.

The plan (``quantize._Plan``) holds every tensor's int8 parameters and every weight's int8 copy; the
:class:`Writer` turns the float model into the int8 one the device runs and LiteRT can run too: float
in and out (QUANTIZE / DEQUANTIZE at the boundary), one operator code per (op, version) with the
versions the converter would write, and the minimum-runtime metadata.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..schema import CLASSES
from ..schema.enums import BuiltinOperator as B
from ..schema.enums import TensorType
from ..schema.types import PLACEHOLDER_FOR_GREATER_OP_CODES, buffer_bytes, builtin_code
from ..schema.validate import validate_model
from ..versioning import op_version, write_min_runtime_metadata
from .quantize import _F32, WEIGHTED, quantize_tensor, symmetric_scale

Tensor, Operator, OperatorCode, Buffer, QuantizationParameters, SubGraph = (
    CLASSES[k] for k in ("Tensor", "Operator", "OperatorCode", "Buffer", "QuantizationParameters", "SubGraph"))


class Writer:
    """Step 4: the int8 model.  Works on the float model's tensor list: tensor k is rewritten in place
    (an activation becomes INT8, a weight its int8 copy) and new tensors are appended (int8 twins of the
    graph's inputs and outputs, biases, requantized inputs, a second quantization of a shared constant);
    :meth:`_model` then drops what no operator uses and renumbers."""

    def __init__(self, plan):
        self.plan = plan
        graph = plan.graph
        self.graph = graph
        src = graph.tensors
        self.tensors: list = list(src)
        self.data: dict = {}                    # tensor → bytes of its constant data
        self.consts: dict = {}                  # (float tensor, how) → int8 model tensor
        self.q_of: dict = {}                    # float activation → the tensor holding its int8 values
        self.ops: list = []                     # (op code, Operator)
        self.written = {t for nd, rule in zip(graph.g.nodes, graph.rule) if rule != "fold" for t in nd.outputs}
        sg = graph.sg
        for t in graph.activations:
            self.q_of[t] = t
            self.tensors[t] = self._int8_like(src[t], src[t].name, plan.params[t], plan.stats.ranges.get(t))
        # non-float tensors keep their data (int32 shapes, axes …); unused float constants are dropped
        for t, meta in enumerate(src):
            if graph.g.constant[t] and meta.type != _F32:
                self.data[t] = bytes(buffer_bytes(graph.model, meta.buffer))
            elif t in plan.stats.static and meta.type != _F32 and t not in self.written:
                # an unpacked constant whose op is folded away (a DENSIFY feeding int8 weights) keeps its
                # value; one an op of the copy still writes (a DENSIFY whose fp16 result the partition hands
                # on to the CPU's DEQUANTIZE) stays that op's output, with no data of its own
                self.data[t] = np.ascontiguousarray(plan.stats.static[t]).tobytes()
        # the boundary: float in, QUANTIZE; DEQUANTIZE, float out
        acts = set(graph.activations)
        for t in sg.inputs or ():
            if t in acts:
                self.tensors[t] = src[t]
                twin = self._add(self._int8_like(src[t], f"{src[t].name}/int8", plan.params[t],
                                                 plan.stats.ranges.get(t)))
                self.q_of[t] = twin
                self.ops.append((B.QUANTIZE, Operator(opcode_index=0, inputs=(t,), outputs=(twin,))))
        outs = [t for t in dict.fromkeys(sg.outputs or ()) if t in acts and t not in (sg.inputs or ())]
        for t in outs:
            self.tensors[t] = src[t]
            self.q_of[t] = self._add(self._int8_like(src[t], f"{src[t].name}/int8", plan.params[t],
                                                     plan.stats.ranges.get(t)))
        for nd, rule in zip(graph.g.nodes, graph.rule):
            if rule != "fold":
                self._op(nd, rule, sg.operators[nd.index])
        for t in outs:
            self.ops.append((B.DEQUANTIZE, Operator(opcode_index=0, inputs=(self.q_of[t],), outputs=(t,))))
        self.model = self._model()

    # -- tensors ---------------------------------------------------------------------------------
    @staticmethod
    def _int8_like(meta, name, params, rng=None):
        s, zp = params
        q = QuantizationParameters(scale=(float(s),), zero_point=(int(zp),), quantized_dimension=0,
                                   min=None if rng is None else (float(rng[0]),),
                                   max=None if rng is None else (float(rng[1]),))
        return Tensor(shape=meta.shape, type=TensorType.INT8, buffer=0, name=name, quantization=q,
                      shape_signature=meta.shape_signature, has_rank=meta.has_rank)

    def _add(self, meta) -> int:
        self.tensors.append(meta)
        return len(self.tensors) - 1

    def _const_tensor(self, t: int, how, make) -> int:
        """The int8 model tensor for float constant ``t`` quantized ``how``: ``t`` itself the first time,
        a copy for a second, different quantization of the same constant."""
        key = (t, how)
        if key not in self.consts:
            meta, array, qp = make()
            # a constant an op of the copy still writes (an fp16 DEQUANTIZE the partition hands on in
            # float) keeps its tensor: the quantized data goes to a new one, or the op would write a constant
            taken = t in self.written or any(k[0] == t for k in self.consts)
            tensor = Tensor(shape=tuple(array.shape), type=_TYPE[array.dtype], buffer=0,
                            name=f"{meta.name}/{how[0]}" if taken else meta.name, quantization=qp,
                            shape_signature=meta.shape_signature, has_rank=meta.has_rank)
            if taken:
                index = self._add(tensor)
            else:
                index, self.tensors[t] = t, tensor
            self.data[index] = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
            self.consts[key] = index
        return self.consts[key]

    def _per_tensor_const(self, t: int, params=None) -> int:
        plan, meta = self.plan, self.graph.tensors[t]
        value = plan._const(t)
        if params is None:
            lo, hi = (float(value.min()), float(value.max())) if value.size else (0.0, 0.0)
            params = (symmetric_scale(max(abs(lo), abs(hi)), plan.scale_type), 0)
        s, zp = params

        def make():
            qp = QuantizationParameters(scale=(float(s),), zero_point=(int(zp),), quantized_dimension=0)
            return meta, quantize_tensor(value, s, zp), qp

        return self._const_tensor(t, ("q", s, zp), make)

    # -- operators ---------------------------------------------------------------------------------
    def _op(self, nd, rule: str, op) -> None:
        graph, plan = self.graph, self.plan
        ins = list(op.inputs or ())
        if rule == "copy":
            self.ops.append((nd.op, op))
            return
        if rule == "weighted":
            a, w, axis, b = WEIGHTED[nd.op]
            qw, ws, _ = plan.weights[nd.index]
            wt = ins[w]

            def make_w():
                qp = QuantizationParameters(scale=tuple(float(x) for x in ws), zero_point=(0,) * len(ws),
                                            quantized_dimension=axis)
                return graph.tensors[wt], qw, qp

            ins[w] = self._const_tensor(wt, ("w",), make_w)
            qb, bs = plan.bias[nd.index]
            has_bias = len(ins) > b and ins[b] >= 0
            bmeta = graph.tensors[ins[b]] if has_bias else None
            bname = bmeta.name if has_bias else f"{graph.tensors[wt].name}/bias"
            qp = QuantizationParameters(scale=tuple(float(x) for x in bs), zero_point=(0,) * len(bs),
                                        quantized_dimension=0)
            bias_t = self._add(Tensor(shape=(len(qb),), type=TensorType.INT32, buffer=0, name=bname, quantization=qp))
            self.data[bias_t] = qb.astype("<i4").tobytes()
            while len(ins) <= b:
                ins.append(-1)
            ins[b] = bias_t
            ins[a] = self.q_of[ins[a]]
        else:
            for k, t in enumerate(ins):
                if not graph.is_float(t):
                    continue
                if t in self.q_of:                                  # an activation
                    src = self.q_of[t]
                    need = plan.requantize.get((nd.index, k))
                    if need is not None:
                        src = self._requantize(src, need)
                    ins[k] = src
                elif rule == "tied":                                # a constant in a tied group
                    ins[k] = self._per_tensor_const(t, plan.params[t])
                else:                                               # a constant of its own
                    ins[k] = self._per_tensor_const(t)
        outs = [self.q_of.get(t, t) for t in op.outputs or ()]
        self.ops.append((nd.op, dataclasses.replace(op, inputs=tuple(ins), outputs=tuple(outs))))

    def _requantize(self, src: int, params) -> int:
        meta = self.tensors[src]
        dst = self._add(self._int8_like(meta, f"{meta.name}/requantized", params))
        self.ops.append((B.QUANTIZE, Operator(opcode_index=0, inputs=(src,), outputs=(dst,))))
        return dst

    # -- the model -----------------------------------------------------------------------------
    def _model(self):
        """Tensors no operator uses any more (float weights replaced, unpacked fp16 constants) are dropped
        and the rest renumbered; one operator code per op; versions and min_runtime_version as the
        converter writes them."""
        src_model, sg = self.graph.model, self.graph.sg
        used = {t for _, op in self.ops for t in (*op.inputs, *op.outputs) if t >= 0}
        used.update(sg.inputs or ())
        used.update(sg.outputs or ())
        new = {old: k for k, old in enumerate(sorted(used))}
        renum = lambda ts: tuple(-1 if t < 0 else new[t] for t in ts)   # noqa: E731
        buffers, tensors = [Buffer()], []
        for old in sorted(used):
            meta = self.tensors[old]
            if old in self.data:
                buffers.append(Buffer(data=memoryview(self.data[old])))
                meta = dataclasses.replace(meta, buffer=len(buffers) - 1)
            elif meta.buffer:
                meta = dataclasses.replace(meta, buffer=0)
            tensors.append(meta)
        codes = list(dict.fromkeys(code for code, _ in self.ops))
        operators = tuple(dataclasses.replace(op, opcode_index=codes.index(code), inputs=renum(op.inputs),
                                              outputs=renum(op.outputs)) for code, op in self.ops)
        subgraph = SubGraph(tensors=tuple(tensors), inputs=renum(sg.inputs or ()), outputs=renum(sg.outputs or ()),
                            operators=operators, name=sg.name)
        signatures = None
        if src_model.signature_defs:
            signatures = tuple(dataclasses.replace(
                sig, inputs=tuple(dataclasses.replace(m, tensor_index=new[m.tensor_index]) for m in sig.inputs or ()),
                outputs=tuple(dataclasses.replace(m, tensor_index=new[m.tensor_index]) for m in sig.outputs or ()))
                for sig in src_model.signature_defs)
        desc = f"int8 ({self.plan.mode}) from: {src_model.description or 'a float model'}"
        model = dataclasses.replace(src_model, operator_codes=tuple(_opcode(c, 1) for c in codes),
                                    subgraphs=(subgraph,), buffers=tuple(buffers), description=desc, metadata=None,
                                    signature_defs=signatures)
        for attr in ("_source", "load_notes"):
            model.__dict__.pop(attr, None)
        model = _with_versions(model)
        model = write_min_runtime_metadata(model)
        validate_model(model)
        return model


_TYPE = {np.dtype(np.int8): TensorType.INT8, np.dtype(np.int32): TensorType.INT32}


def _opcode(code, version: int):
    return OperatorCode(deprecated_builtin_code=min(int(code), PLACEHOLDER_FOR_GREATER_OP_CODES),
                        builtin_code=code, version=version)


def _with_versions(model):
    """One operator code per (op, version), each version what today's rules compute for the op: what the
    converter writes (an int8 CONV_2D is v3, an int8 FULLY_CONNECTED v4 ...)."""
    sg = model.subgraphs[0]
    keyed = []
    for i, op in enumerate(sg.operators):
        code = builtin_code(model.operator_codes[op.opcode_index])
        keyed.append((code, op_version(model, 0, i).number))
    codes = list(dict.fromkeys(keyed))
    index = {k: n for n, k in enumerate(codes)}
    ops = tuple(dataclasses.replace(op, opcode_index=index[k]) for op, k in zip(sg.operators, keyed))
    return dataclasses.replace(model, operator_codes=tuple(_opcode(c, v) for c, v in codes),
                               subgraphs=(dataclasses.replace(sg, operators=ops),))
