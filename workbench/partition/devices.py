"""Several compute cores on one chip: which core runs each node of a partition, and what the copies cost.

A target file may list its chip's cores in a ``devices`` table (``am5729.json``: 4 EVEs and 2 C66x
DSPs).  Each kind of core has a ``count`` and ``cost`` figures that override the target's own ``cost``
table (the rates of :mod:`workbench.partition.cost`); ``policy`` says which ops go to which kind (the
layer groups of TI's TIDL API: a network split into groups, each group run by an Execution Object on
one core — TIDL API User's Guide, "Using the API", downloads.ti.com/mctools/esd/docs/tidl-api/using_api.html);
``link`` gives the copies between the host and a core, and between two cores, their bandwidth and a fixed
cost per tensor; ``host`` the host's per-node overhead (the modeled clock of
:func:`workbench.delegate.trace.timeline`).  Every figure carries its source in the file.

For one run of a partition, :func:`schedule` lists the steps in order: the copies in (host → the
core of the first node that reads the tensor), each node on its core (instance 0 of its kind: one frame
runs on one core of each kind), a copy between cores whenever a node reads a tensor another core made,
and the copies out.  Their sum is the partition's modeled time: :func:`with_devices` writes it into a
delegate's plan, so the plan's estimate and the simulated device's count stay one figure.

:func:`core_times` compares the ways of running a network: EVE only, DSP only, EVE + DSP (the policy).
``python -m workbench.partition.devices MODEL`` prints them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .cost import device_node_us
from .plan import node_macs
from .target import TargetError, load_target

__all__ = ["CoreKind", "Devices", "Step", "devices_of", "place", "schedule", "with_devices", "core_times",
           "COPY_KINDS"]

RESERVED = ("policy", "link", "host")
COPY_KINDS = ("copy in", "copy out", "copy", "stream")


@dataclass(frozen=True)
class CoreKind:
    """One kind of core: how many the chip has, and its cost figures (the target's, with its overrides)."""

    name: str
    count: int
    cost: dict
    source: str = ""

    def unit(self, k: int = 0) -> str:
        """The lane name of instance ``k``: ``eve:0``."""
        return f"{self.name}:{k}"


@dataclass(frozen=True)
class Devices:
    """A target's cores, its layer-group policy and its link figures."""

    kinds: dict                 # name → CoreKind, in the file's order
    policy: dict                # op name → kind name
    other: str                  # the kind of every op the policy does not name
    link: dict                  # bandwidth_mb_s, transfer_overhead_us
    source: str = ""

    def kind_of(self, op_name: str, use=None) -> str:
        """The kind of core that runs ``op_name`` when only the kinds in ``use`` (None: all) are used."""
        use = tuple(self.kinds) if use is None else use
        want = self.policy.get(op_name, self.other)
        return want if want in use else use[0]

    def copy_us(self, nbytes: int) -> float:
        """Modeled time of copying one tensor between the host and a core, or between two cores."""
        return nbytes / self.link["bandwidth_mb_s"] + self.link.get("transfer_overhead_us", 0.0)


def _number(where, key, v, positive=True) -> float:
    if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0 or (positive and v == 0):
        raise TargetError(f"{where}: devices.{key}: expected a {'positive' if positive else 'non-negative'} "
                          f"number, got {v!r}")
    return float(v)


def devices_of(target) -> Devices | None:
    """The :class:`Devices` of ``target`` (a Target or a name); None for a target without a ``devices`` table.
    A malformed table raises :class:`workbench.partition.TargetError` naming the key."""
    target = load_target(target)
    raw = getattr(target, "devices", None) or {}
    if not raw:
        return None
    where = target.path or target.name
    kinds = {}
    for name, spec in raw.items():
        if name in RESERVED:
            continue
        if not isinstance(spec, dict):
            raise TargetError(f"{where}: devices.{name}: expected a table with count and cost")
        count = spec.get("count")
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise TargetError(f"{where}: devices.{name}.count: expected a whole number >= 1, got {count!r}")
        over = spec.get("cost", {})
        if not isinstance(over, dict):
            raise TargetError(f"{where}: devices.{name}.cost: expected a table of cost figures")
        cost = {**target.cost, **{k: _number(where, f"{name}.cost.{k}", v, False) for k, v in over.items()}}
        kinds[name] = CoreKind(name, count, cost, str(spec.get("source", "")))
    if not kinds:
        raise TargetError(f"{where}: devices: no kind of core (only {', '.join(raw)})")
    pol = raw.get("policy", {})
    policy = {}
    for kind, ops in pol.items():
        if kind in ("other", "source"):
            continue
        if kind not in kinds:
            raise TargetError(f"{where}: devices.policy.{kind}: no such kind of core (known: {', '.join(kinds)})")
        policy.update((str(op), kind) for op in ops)
    other = pol.get("other", next(iter(kinds)))
    if other not in kinds:
        raise TargetError(f"{where}: devices.policy.other: no such kind of core {other!r} (known: {', '.join(kinds)})")
    link = raw.get("link", {})
    if not isinstance(link, dict) or "bandwidth_mb_s" not in link:
        raise TargetError(f"{where}: devices.link: expected a table with bandwidth_mb_s (and transfer_overhead_us)")
    link = {"bandwidth_mb_s": _number(where, "link.bandwidth_mb_s", link["bandwidth_mb_s"]),
            "transfer_overhead_us": _number(where, "link.transfer_overhead_us", link.get("transfer_overhead_us", 0),
                                            False)}
    return Devices(kinds, policy, other, link, str(pol.get("source", "")))


def _use(devices: Devices, use) -> tuple:
    """``use`` as a tuple of kind names: None → all; "eve+dsp" → ("eve", "dsp")."""
    if use is None:
        return tuple(devices.kinds)
    names = tuple(use.split("+")) if isinstance(use, str) else tuple(use)
    bad = [n for n in names if n not in devices.kinds]
    if bad or not names:
        raise ValueError(f"cores {use!r}: expected kinds among {', '.join(devices.kinds)} joined by '+'")
    return names


def place(graph, nodes, devices: Devices, use=None) -> dict:
    """node → kind of core, by the policy (only the kinds in ``use``)."""
    use = _use(devices, use)
    return {i: devices.kind_of(graph.nodes[i].name, use) for i in nodes}


@dataclass(frozen=True)
class Step:
    """One step of a partition's run: a node on a core, or a copy (its lane: the core that receives it;
    a copy out: the core that sends it)."""

    kind: str           # "node", "copy in", "copy out", "copy" (between cores), "stream"
    unit: str           # "eve:0", "dsp:0"
    us: float
    node: int = -1      # the original node (node steps; for a copy between cores: the node that reads it)
    tensor: int = -1
    bytes: int = 0
    source: str = ""    # a copy between cores: the unit it comes from


def schedule(plan, part, devices: Devices, use=None) -> tuple:
    """The steps of one run of ``part`` (a Partition of ``plan``) on the cores, in order (see the module)."""
    g = plan.graph
    kinds = place(g, part.nodes, devices, use)
    unit = {i: devices.kinds[k].unit(0) for i, k in kinds.items()}
    mine = set(part.nodes)
    runtime = set(part.runtime_inputs)
    where: dict = {}            # tensor → units holding it
    steps: list = []
    for i in part.nodes:
        u = unit[i]
        for t in g.nodes[i].inputs:
            if t < 0 or u in where.get(t, ()):
                continue
            if t in runtime:
                steps.append(Step("copy in", u, devices.copy_us(g.nbytes(t)), i, t, g.nbytes(t)))
                where.setdefault(t, set()).add(u)
            elif g.producer[t] in mine:
                src = unit[g.producer[t]]
                steps.append(Step("copy", u, devices.copy_us(g.nbytes(t)), i, t, g.nbytes(t), src))
                where.setdefault(t, set()).add(u)
        steps.append(Step("node", u, device_node_us(devices.kinds[kinds[i]].cost, node_macs(g, i)), i))
        for t in g.nodes[i].outputs:
            if t >= 0:
                where.setdefault(t, set()).add(u)
    for t in part.outputs:
        p = g.producer[t]
        steps.append(Step("copy out", unit.get(p, unit[part.nodes[-1]]), devices.copy_us(g.nbytes(t)), p, t,
                          g.nbytes(t)))
    if part.streamed_bytes:
        first = unit[part.nodes[0]]
        steps.insert(0, Step("stream", first, part.streamed_bytes / plan.target.cost["bandwidth_mb_s"], -1, -1,
                             part.streamed_bytes))
    return tuple(steps)


def with_devices(plan, use=None):
    """``plan`` with each partition's ``est_us`` the sum of its :func:`schedule` (in place; returned).  A
    target without devices: ``plan`` unchanged."""
    devices = devices_of(plan.target) if plan.partitions else None
    if devices is None:
        return plan
    plan.partitions = tuple(dataclasses.replace(p, est_us=sum(s.us for s in schedule(plan, p, devices, use)))
                            for p in plan.partitions)
    return plan


@dataclass(frozen=True)
class CoreTimes:
    """A network's modeled offload time (ms) for each way of using the cores, with the host's rest."""

    model: str
    target: str
    rows: tuple          # (label, device ms, host rest ms, total ms)
    published: dict      # label → published ms, or None (not known)

    def __str__(self) -> str:
        out = [f"{self.model} on {self.target}: modeled; 'published ms' where a published time was given "
               f"(an empty cell: none)",
               f"{'cores':<10} {'device ms':>10} {'host ms':>9} {'total ms':>9} {'published ms':>13}"]
        for label, dev, host, total in self.rows:
            pub = self.published.get(label)
            out.append(f"{label:<10} {dev:>10.2f} {host:>9.2f} {total:>9.2f} {'' if pub is None else pub:>13}")
        return "\n".join(out)


def core_times(model, target="am5729", strategy: str = "tidl", published=None, **knobs) -> CoreTimes:
    """EVE only, DSP only and EVE + DSP: the offloaded partitions' modeled time on each choice of cores,
    the host's rest (its nodes at the host's rate) and the total.  ``published``: label → TI's measured ms."""
    from ..schema import load
    from .strategies import partition

    m = load(model) if not hasattr(model, "subgraphs") else model
    target = load_target(target)
    devices = devices_of(target)
    if devices is None:
        raise TargetError(f"target {target.name} lists no devices (a 'devices' table)")
    base = partition(m, target, strategy, **knobs)
    rows = []
    host = base.estimate()["cpu_rest_us"] / 1000.0
    choices = [(k.upper() + " only", (k,)) for k in devices.kinds] + [(" + ".join(k.upper() for k in devices.kinds),
                                                                     None)]
    for label, use in choices:
        dev = sum(sum(s.us for s in schedule(base, p, devices, use)) for p in base.partitions) / 1000.0
        rows.append((label, dev, host, dev + host))
    name = getattr(model, "name", None) or str(model).rsplit("/", 1)[-1]
    return CoreTimes(name, target.name, tuple(rows), dict(published or {}))


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m workbench.partition.devices",
                                 description="A network's modeled time on each choice of cores (EVE, DSP, both).")
    ap.add_argument("model")
    ap.add_argument("--target", default="am5729")
    ap.add_argument("--strategy", default="tidl")
    args = ap.parse_args(argv)
    print(core_times(args.model, args.target, args.strategy))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
