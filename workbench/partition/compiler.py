"""Reserialize a plan: each partition becomes ONE custom operator holding a complete .tflite.

Like the TIDL import tool ("TensorFlow Lite Heterogeneous Execution with TI Deep Learning Offload"): the partition's
operators, their tensors and buffers become a small model of their own (``workbench.dump``), embedded with its
boundary tensors in the custom op's options (a FlexBuffer map); the remaining operators keep their builtin options
with tensor indices remapped; tensors and buffers nobody uses any more are dropped; the opcode table is
rebuilt; metadata and signatures follow the new indices; ``min_runtime_version`` is recomputed for the
operators left on the CPU and written.  The offload kernel
(:mod:`workbench.delegate.offload`) runs the embedded model, so the result runs with a plain
``workbench.Interpreter``.

Custom options (FlexBuffer map)::

    {"format": "workbench-offload/1", "target": "tidl", "strategy": "tidl", "partition": 0,
     "nodes": [original node indices], "model": <bytes of the sub-model>,
     "variables": "private" | "shared",    # shared: the sub-model uses the outer interpreter's variables
     "boundary": [{"role": "input", "name": ..., "dtype": "FLOAT32", "shape": [...],
                   "scale": [...], "zero_point": [...], "calibrated": bool}, ...]}

Float boundary tensors carry the quantization parameters the accelerator would use to convert them
to fixed point when the model has them (``calibrated`` true).  Otherwise ``compile(plan, params=...)``
writes the parameters it is given for each boundary tensor: finished ones, computed from the tensors'
ranges over calibration runs by :func:`workbench.delegate.boundary.boundary_params` (a power-of-two
scale, as TIDL quantizes feature maps; ``min``, ``max``, ``signed`` and ``power_of_two`` are added to
the entry).  The compiler does no scale arithmetic of its own.  Without params ``calibrated`` stays false.

:func:`boundary_config` gives the same as text: one block per offloaded subgraph, the file the TI paper's
import tool writes beside the model as ``subgraph0.cfg`` (the subgraph's inputs and outputs, their
shapes, and their scale and zero point for the fixed-point conversion at the boundary).
"""

from __future__ import annotations

import dataclasses

from flatbuffers import flexbuffers

from ..schema import CLASSES, dump
from ..schema.enums import BuiltinOperator, CustomOptionsFormat, TensorType
from ..schema.types import PLACEHOLDER_FOR_GREATER_OP_CODES
from ..versioning.runtime import min_runtime, write_min_runtime_metadata
from .plan import execution_order

__all__ = ["compile", "submodel", "boundary_config", "boundary_entries", "OFFLOAD_OP", "FORMAT"]

OFFLOAD_OP = "workbench-offload"
FORMAT = "workbench-offload/1"

Model, SubGraph, OperatorCode, Operator, Buffer = (CLASSES[k] for k in
                                                   ("Model", "SubGraph", "OperatorCode", "Operator", "Buffer"))


def _remap(seq, m):
    return None if seq is None else tuple(-1 if t < 0 else m[t] for t in seq)


def _with_calls_remapped(model, op, smap: dict):
    """``op`` with the subgraph indices in its options renumbered by ``smap`` (old → new)."""
    from .graph import _options_table, subgraph_fields

    table = _options_table(model, op)
    fields = subgraph_fields(table)
    if not fields:
        return op
    new = {}
    for f in fields:
        v = getattr(table, f)
        if isinstance(v, (tuple, list)):
            new[f] = tuple(smap.get(int(x), int(x)) for x in v)
        elif v is not None:
            new[f] = smap.get(int(v), int(v))
    table = dataclasses.replace(table, **new)
    from ..schema.declare import FlatTable

    if isinstance(op.builtin_options, FlatTable):
        return dataclasses.replace(op, builtin_options=table)
    if isinstance(op.builtin_options_2, FlatTable):
        return dataclasses.replace(op, builtin_options_2=table)
    from ..schema.builder import options_slot  # the options were defaulted: store them, with their union tag

    attr, tag = options_slot(table)
    return dataclasses.replace(op, **{attr: table, attr + "_type": tag})


def submodel(plan, k: int):
    """The sub-model of partition ``k``: its operators, tensors, buffers; inputs = runtime inputs.

    Subgraphs the partition's operators call (a target that takes IF / WHILE / CALL_ONCE with their
    subgraphs) come along, renumbered from 1, with their tensors, buffers and operator codes."""
    model, sg = plan.model, plan.model.subgraphs[plan.subgraph]
    part = plan.partitions[k]
    g = plan.graph
    # static inputs (fp16 DEQUANTIZE / DENSIFY of constants made outside) are unpacked again inside, so the
    # kernels see weights exactly as in the original model
    extra, stack = set(), [t for t in part.inputs if g.static[t] and not g.constant[t]]
    while stack:
        t = stack.pop()
        i = g.producer[t]
        if i >= 0 and i not in extra:
            extra.add(i)
            stack.extend(u for u in g.nodes[i].inputs if u >= 0 and g.static[u] and not g.constant[u])
    ops = [sg.operators[i] for i in sorted(extra)] + [sg.operators[i] for i in part.nodes]
    called: list[int] = []
    for i in part.nodes:
        for s in g.reachable_subgraphs(i):
            if s not in called:
                called.append(s)
    smap = {s: j + 1 for j, s in enumerate(called)}
    buffers = [Buffer()]
    bmap: dict[int, int] = {}
    codes, cmap = [], {}

    def rebuild(src, src_ops, used, inputs, outputs, name):
        tmap = {t: j for j, t in enumerate(used)}
        tensors = []
        for t in used:
            meta = src.tensors[t]
            if meta.buffer:
                if meta.buffer not in bmap:
                    bmap[meta.buffer] = len(buffers)
                    buffers.append(model.buffers[meta.buffer])
                meta = dataclasses.replace(meta, buffer=bmap[meta.buffer])
            tensors.append(meta)
        new_ops = []
        for op in src_ops:
            if op.opcode_index not in cmap:
                cmap[op.opcode_index] = len(codes)
                codes.append(model.operator_codes[op.opcode_index])
            if smap:
                op = _with_calls_remapped(model, op, smap)
            new_ops.append(dataclasses.replace(op, opcode_index=cmap[op.opcode_index], inputs=_remap(op.inputs, tmap),
                                               outputs=_remap(op.outputs, tmap),
                                               intermediates=_remap(op.intermediates, tmap)))
        return SubGraph(tensors=tuple(tensors), inputs=tuple(tmap[t] for t in inputs),
                        outputs=tuple(tmap[t] for t in outputs), operators=tuple(new_ops), name=name)

    used = sorted({t for op in ops for t in (*(op.inputs or ()), *(op.outputs or ()), *(op.intermediates or ()))
                   if t >= 0})
    subgraphs = [rebuild(sg, ops, used, part.runtime_inputs, part.outputs, f"partition_{k}")]
    for s in called:   # whole, as they are: every tensor, in the same order
        other = model.subgraphs[s]
        subgraphs.append(rebuild(other, other.operators or (), range(len(other.tensors or ())), other.inputs or (),
                                 other.outputs or (), other.name))
    return Model(version=3, operator_codes=tuple(codes), subgraphs=tuple(subgraphs),
                 description=f"{plan.target.name} partition {k} (workbench)", buffers=tuple(buffers))


def _boundary_entry(meta, role: str) -> dict:
    q = meta.quantization
    scale = [float(s) for s in (q.scale or ())] if q is not None else []
    zp = [int(z) for z in (q.zero_point or ())] if q is not None else []
    try:
        dtype = TensorType(meta.type).name
    except ValueError:
        dtype = str(int(meta.type))
    return {"role": role, "name": meta.name or "", "dtype": dtype, "shape": [int(d) for d in meta.shape or ()],
            "scale": scale, "zero_point": zp, "calibrated": bool(scale)}


_PARAM_KEYS = ("scale", "zero_point", "min", "max", "signed", "power_of_two")


def _options(plan, k: int, params: dict | None = None) -> bytes:
    sg = plan.model.subgraphs[plan.subgraph]
    part = plan.partitions[k]
    blob = dump(submodel(plan, k))
    boundary = ([_boundary_entry(sg.tensors[t], "input") for t in part.runtime_inputs]
                + [_boundary_entry(sg.tensors[t], "output") for t in part.outputs])
    for t, entry in zip((*part.runtime_inputs, *part.outputs), boundary):
        if not entry["calibrated"] and params and t in params and entry["dtype"] == "FLOAT32":
            given = params[t]
            entry.update({key: given[key] for key in _PARAM_KEYS if key in given}, calibrated=True)
    doc = {"format": FORMAT, "target": plan.target.name, "strategy": plan.strategy, "partition": k,
           "nodes": [int(i) for i in part.nodes], "model": blob, "boundary": boundary,
           "variables": getattr(plan.target, "variables", "private")}
    return bytes(flexbuffers.Dumps(doc))


def _order(plan) -> list:
    """Items ('n', node) / ('p', partition) in a dependency order, ties broken by original position
    (a :class:`PlanError` naming the cycle if a partition is not convex over data and control edges)."""
    where = [None] * plan.graph.num_nodes
    for p in plan.partitions:
        for i in p.nodes:
            where[i] = p.index
    extra = tuple(plan.knobs.get("control_edges") or ()) if isinstance(plan.knobs, dict) else ()
    return execution_order(plan.graph, where, extra, f"plan {plan.name}")


def compile(plan, custom_op_name: str = OFFLOAD_OP, params: dict | None = None):
    """A new Model: every partition of ``plan`` replaced by one CUSTOM ``custom_op_name`` operator.
    ``params``: {tensor: {"scale": [s], "zero_point": [z], "min", "max", "signed", "power_of_two"}}, the
    finished fixed-point parameters of float boundary tensors
    (:func:`workbench.delegate.boundary.boundary_params`), written into the offload ops' boundary entries
    (see the module's docstring)."""
    model, s = plan.model, plan.subgraph
    sg = model.subgraphs[s]
    order = _order(plan)
    # -- operators (old tensor indices for now) -------------------------------------------------
    staged = []   # (old opcode index or None for the custom op, operator with OLD tensor indices)
    for kind, x in order:
        if kind == "n":
            staged.append((sg.operators[x].opcode_index, sg.operators[x]))
        else:
            p = plan.partitions[x]
            staged.append((None, Operator(opcode_index=0, inputs=tuple(p.runtime_inputs), outputs=tuple(p.outputs),
                                          custom_options=memoryview(_options(plan, x, params)),
                                          custom_options_format=CustomOptionsFormat.FLEXBUFFERS)))
    # unpacking nodes (DEQUANTIZE / DENSIFY of constants) whose every reader moved into a partition
    g = plan.graph
    while True:
        read = set(sg.outputs or ())
        for _, op in staged:
            read.update(t for t in op.inputs or () if t >= 0)
        dead = [k for k, (c, op) in enumerate(staged)
                if c is not None and op.outputs and all(g.static[t] and t not in read for t in op.outputs)]
        if not dead:
            break
        staged = [x for k, x in enumerate(staged) if k not in set(dead)]
    # -- tensors ----------------------------------------------------------------------------------
    keep = set(sg.inputs or ()) | set(sg.outputs or ())
    for _, op in staged:
        keep.update(t for t in (*(op.inputs or ()), *(op.outputs or ()), *(op.intermediates or ())) if t >= 0)
    for sig in model.signature_defs or ():
        if sig.subgraph_index == s:
            keep.update(m.tensor_index for m in (*(sig.inputs or ()), *(sig.outputs or ())))
    kept = sorted(keep)
    tmap = {t: j for j, t in enumerate(kept)}
    # -- buffers: sentinel, then every buffer still referenced, in the old order ---------------------
    refs = {sg.tensors[t].buffer for t in kept}
    for j, other in enumerate(model.subgraphs):
        if j != s:
            refs.update(t.buffer for t in other.tensors or ())
    refs.update(m.buffer for m in model.metadata or ())
    refs.update(model.metadata_buffer or ())
    refs.discard(0)
    bmap = {0: 0}
    buffers = [model.buffers[0] if model.buffers else Buffer()]
    for b in sorted(refs):
        bmap[b] = len(buffers)
        buffers.append(model.buffers[b])
    # -- opcode table ----------------------------------------------------------------------------
    used_codes = {c for c, _ in staged if c is not None}
    for j, other in enumerate(model.subgraphs):
        if j != s:
            used_codes.update(op.opcode_index for op in other.operators or ())
    cmap = {c: j for j, c in enumerate(sorted(used_codes))}
    codes = [model.operator_codes[c] for c in sorted(used_codes)]
    custom_index = len(codes)
    if plan.partitions:
        codes.append(OperatorCode(deprecated_builtin_code=min(int(BuiltinOperator.CUSTOM),
                                                              PLACEHOLDER_FOR_GREATER_OP_CODES),
                                  custom_code=custom_op_name, version=1, builtin_code=BuiltinOperator.CUSTOM))
    # -- rebuild --------------------------------------------------------------------------------------
    ops = []
    for c, op in staged:
        ops.append(dataclasses.replace(op, opcode_index=custom_index if c is None else cmap[c],
                                       inputs=_remap(op.inputs, tmap), outputs=_remap(op.outputs, tmap),
                                       intermediates=_remap(op.intermediates, tmap)))
    tensors = tuple(dataclasses.replace(sg.tensors[t], buffer=bmap[sg.tensors[t].buffer]) for t in kept)
    main = dataclasses.replace(sg, tensors=tensors, inputs=_remap(sg.inputs, tmap), outputs=_remap(sg.outputs, tmap),
                               operators=tuple(ops))
    subgraphs = []
    for j, other in enumerate(model.subgraphs):
        if j == s:
            subgraphs.append(main)
        else:
            subgraphs.append(dataclasses.replace(
                other, tensors=tuple(dataclasses.replace(t, buffer=bmap[t.buffer]) for t in other.tensors or ()),
                operators=tuple(dataclasses.replace(op, opcode_index=cmap[op.opcode_index])
                                for op in other.operators or ())))
    metadata = None
    if model.metadata:
        metadata = tuple(dataclasses.replace(m, buffer=bmap[m.buffer]) for m in model.metadata)
    sigs = None
    if model.signature_defs:
        TensorMap = CLASSES["TensorMap"]

        def fix(ms):
            return tuple(TensorMap(name=m.name, tensor_index=tmap[m.tensor_index]) for m in ms or ())

        sigs = []
        for sig in model.signature_defs:
            if sig.subgraph_index != s:
                sigs.append(sig)
                continue
            sigs.append(dataclasses.replace(sig, inputs=fix(sig.inputs), outputs=fix(sig.outputs)))
        sigs = tuple(sigs)
    out = dataclasses.replace(
        model, operator_codes=tuple(codes), subgraphs=tuple(subgraphs), buffers=tuple(buffers), metadata=metadata,
        signature_defs=sigs,
        metadata_buffer=None if model.metadata_buffer is None else tuple(bmap[b] for b in model.metadata_buffer))
    # the operators that moved into partitions no longer count: recompute min_runtime_version over what is
    # left (the CUSTOM offload op has no runtime entry and is skipped, like any custom op) and write it, as
    # the converter's UpdateMinimumRuntimeVersionForModel would for this file.  "" when no CPU-side op is
    # in the runtime table (everything offloaded): the converter writes an all-zero buffer then.
    return write_min_runtime_metadata(out, min_runtime(out))


def boundary_entries(compiled) -> list[dict]:
    """The offload ops of a compiled model: ``[{"partition", "target", "nodes", "boundary": [...]}]``, read
    back from their custom options (subgraph 0)."""
    sg = compiled.subgraphs[0]
    out = []
    for op in sg.operators or ():
        code = compiled.operator_codes[op.opcode_index]
        if code.custom_code != OFFLOAD_OP or op.custom_options is None:
            continue
        doc = flexbuffers.Loads(bytes(op.custom_options))
        if isinstance(doc, dict) and doc.get("format") == FORMAT:
            out.append({"partition": doc["partition"], "target": doc["target"], "nodes": list(doc["nodes"]),
                        "boundary": list(doc["boundary"])})
    return out


def boundary_config(compiled, partition: int = 0) -> str:
    """The boundary parameters of one offloaded subgraph as text (``subgraph<k>.cfg``): for each input and
    output, its name, type, shape, and the scale / zero point that convert it to and from fixed point."""
    entries = {e["partition"]: e for e in boundary_entries(compiled)}
    if partition not in entries:
        from ..errors import WorkbenchError

        raise WorkbenchError(f"the model has no offloaded subgraph {partition} (it has: "
                             f"{', '.join(map(str, sorted(entries))) or 'none'})")
    e = entries[partition]
    lines = [f"# subgraph {partition} boundary parameters, target {e['target']}: {len(e['nodes'])} node(s) "
             f"offloaded (original nodes {e['nodes'][0]}-{e['nodes'][-1]})" if e["nodes"] else
             f"# subgraph {partition} boundary parameters, target {e['target']}",
             "# each boundary tensor: its name, type and shape; scale and zero point convert it to fixed",
             "# point on the way in and back on the way out (real = scale * (q - zero_point))"]
    for role in ("input", "output"):
        group = [b for b in e["boundary"] if b["role"] == role]
        lines.append(f"num{role.capitalize()}s = {len(group)}")
        for j, b in enumerate(group):
            key = f"{role}{j}"
            lines.append(f"{key}.name = {b['name']}")
            lines.append(f"{key}.type = {b['dtype']}")
            lines.append(f"{key}.shape = {' '.join(str(d) for d in b['shape'])}")
            if b["calibrated"]:
                lines.append(f"{key}.scale = {' '.join(f'{x:.9g}' for x in b['scale'])}")
                lines.append(f"{key}.zeroPoint = {' '.join(str(z) for z in b['zero_point'])}")
                if "min" in b:
                    lines.append(f"{key}.range = {b['min']:.6g} {b['max']:.6g}")
                    lines.append(f"{key}.signed = {int(b.get('signed', True))}")
            else:
                lines.append(f"{key}.scale = (not calibrated: compile with calibration inputs)")
    return "\n".join(lines) + "\n"
