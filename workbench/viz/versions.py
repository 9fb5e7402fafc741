"""Views of op versions and runtime compatibility, shared by the version widgets and notebooks 02/03.

* :func:`version_html` — a computed :class:`~workbench.versioning.Version`: the number, the reason
  and every rule row tried (the matching row highlighted), traps that shaped it;
* :func:`findings_summary` — why a runtime refuses a model, one line per kind of finding;
* :func:`findings_html` — what a runtime or delegate would refuse, grouped per (op, version);
* :func:`min_runtime_html` — a model's minimum runtime with the (op, version) pairs that drive it;
* :func:`version_diff` — stored versions against today's computed ones, per (op, stored, computed);
* :func:`compatibility_table` — models × TFLite releases: runs / needs custom-op registrations /
  runs only by its stored versions / refused.

Everything returns plain HTML strings or small objects with a text ``repr`` and ``_repr_html_``.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass

from ..schema.enums import BuiltinOperator
from ..versioning import (
    RUNTIME_TABLE,
    Finding,
    MinRuntime,
    Version,
    check,
    compare_runtime_version,
    computed_versions,
    min_runtime,
    one_look_each,
    read_min_runtime_metadata,
    runtime_for,
    update_versions,
)
from . import _html as H

OK, WARN, BAD, CUSTOM = "#e8f5e9", "#fff8e1", "#ffebee", "#e3f2fd"


def releases() -> list[str]:
    """Every release named in the runtime table, oldest first (CompareRuntimeVersion order)."""
    def cmp(a, b):
        return -1 if compare_runtime_version(a, b) else (1 if compare_runtime_version(b, a) else 0)
    return sorted(set(RUNTIME_TABLE.values()), key=functools.cmp_to_key(cmp))


def _explain(rule, v: Version) -> str:
    """The values the matching rule row saw."""
    if v.signature is None:
        return ""
    try:
        return rule.predicate.explain(v.signature)
    except Exception:  # an explanation must never break a view
        return ""


def version_html(v: Version, *, rows: bool = True) -> str:
    """The verdict of the version rules for one operator, with the rows tried."""
    head = (f"<div style='font-size:14px;margin-bottom:4px'>{H.code(v.op)} → "
            f"<b style='font-size:18px'>version {v.number}</b></div>"
            f"<div>{H.esc(v.reason)}</div>")
    parts = [head]
    if rows:
        body, styles = [], []
        for rule, ok in v.tried:
            seen = _explain(rule, v) if ok else ""  # a failed comparison's text reads like a claim
            body.append(["✔" if ok else "·", f"v{rule.version}", H.code(rule.predicate.name), H.esc(seen)])
            styles.append(f"background:{OK};color:{H.INK};font-weight:600" if ok else "color:#555")
        if not any(ok for _, ok in v.tried):
            body.append(["✔", "v1", "<i>no row matched: the default</i>", ""])
            styles.append(f"background:{OK};color:{H.INK};font-weight:600")
        if body:
            parts.append("<div style='margin-top:6px'>rows tried, top to bottom (first match wins):</div>")
            parts.append(H.table(["", "→", "test", "values that matched"], body, styles, nowrap=(0, 1)))
    if v.traps:
        items = "".join(f"<li>{H.esc(t)}</li>" for t in v.traps)
        parts.append(f"<div style='margin-top:4px'>traps:</div><ul style='margin:2px 0'>{items}</ul>")
    return f"<div class='wb-version' style='{H.BOX}'>{''.join(parts)}</div>"


def min_runtime_html(mr: MinRuntime) -> str:
    """The minimum runtime and, per (op, version), the first release that ran it."""
    drivers = {(e.op, e.version) for e in mr.drivers}
    body, styles = [], []
    for (op, v), rt in sorted(mr.by_op().items()):
        body.append([H.code(op), f"v{v}", H.esc(rt or "not in the table")])
        styles.append(f"background:{'#ffe0b2' if (op, v) in drivers else '#fff'};color:{H.INK}")
    kind = "today's computed versions" if mr.computed else "the stored versions"
    return (f"<div class='wb-min-runtime' style='{H.BOX}'>minimum runtime <b>{H.esc(mr.version or '(none)')}</b>"
            f" <small>(from {kind}; orange rows drive it)</small>"
            + H.table(["op", "version", "first release"], body, styles) + "</div>")


def _group(findings) -> list[tuple[Finding, int]]:
    counts: Counter = Counter()
    first: dict = {}
    for f in findings:
        key = (f.kind, f.op, f.version, f.message)
        counts[key] += 1
        first.setdefault(key, f)
    return [(first[k], n) for k, n in counts.items()]


# the order a reader wants the reasons in: what no release can fix first
_SUMMARY_ORDER = ("unsupported-types", "custom-op", "flex-op", "builtin-code", "op-version", "delegate-op",
                  "delegate-version", "min-runtime-metadata", "unknown")


def _names(items, limit: int = 4) -> str:
    """'A ×2, B, C' for the distinct items in order, with counts, at most ``limit`` of them."""
    counts: Counter = Counter(items)
    parts = [f"{k} ×{n}" if n > 1 else k for k, n in counts.items()]
    more = len(parts) - limit
    return ", ".join(parts[:limit]) + (f", … {more} more" if more > 0 else "")


def findings_summary(findings, who: str = "this release") -> list[str]:
    """One line per kind of refusal: why ``who`` cannot run the model (errors only, most serious first)."""
    by: dict[str, list[Finding]] = {}
    for f in findings:
        if f.is_error:
            by.setdefault(f.kind, []).append(f)
    lines = []
    for kind in sorted(by, key=lambda k: _SUMMARY_ORDER.index(k) if k in _SUMMARY_ORDER else 99):
        fs = by[kind]
        if kind == "unsupported-types":
            what = _names(f"{f.op} ({f.detail})" if f.detail else f.op for f in fs)
            lines.append(f"no TFLite kernel takes the tensor types of {what} — no release can run it")
        elif kind == "custom-op":
            lines.append("custom ops no stock release registers — the app must register a kernel for each: "
                         + _names(f.op for f in fs))
        elif kind == "flex-op":
            lines.append("TensorFlow (Flex) ops — they need the Select TF ops delegate linked into the app: "
                         + _names(f.op for f in fs))
        elif kind == "op-version":
            lines.append(f"(op, version) pairs {who} has no kernel for: " + _names(f"{f.op} v{f.version}" for f in fs))
        elif kind == "builtin-code":
            lines.append(f"ops newer than {who}: " + _names(f.op for f in fs))
        else:
            lines.append(f"{fs[0].title}: " + _names(f.op or "the model" for f in fs))
    return lines


def findings_html(findings, who: str) -> str:
    """What ``who`` (a runtime or delegate) would refuse: the verdict with its reasons, then one row per
    distinct (kind, op, version) with the error text and why."""
    findings = list(findings)
    errors = [f for f in findings if f.is_error]
    if not errors:
        verdict = (f"<div style='background:{OK};color:{H.INK};padding:2px 6px'>"
                   f"✔ {H.esc(who)}: no findings — it runs</div>")
    else:
        ops = len({(f.subgraph, f.op_index) for f in errors if f.op_index is not None})
        what = f"{ops} operator{'s' if ops != 1 else ''}" if ops else "the model"
        reasons = "".join(f"<li>{H.esc(line)}</li>" for line in findings_summary(errors, who))
        verdict = (f"<div style='background:{BAD};color:{H.INK};padding:2px 6px'>✘ {H.esc(who)} refuses {what}: "
                   f"it cannot run this model<ul style='margin:2px 0 2px 18px;padding:0'>{reasons}</ul></div>")
    body = []
    for f, n in _group(findings):
        kind = f"{H.esc(f.kind)}<br><small style='color:#555'>{H.esc(f.title)}</small>"
        body.append([kind, H.code(f"{f.op} v{f.version}") if f.op else "", str(n), H.code(f.message),
                     H.esc(f.reason)])
    table = H.table(["kind", "op", "count", "error text", "why"], body) if body else ""
    return f"<div class='wb-findings' style='{H.BOX}'>{verdict}{table}</div>"


# ---------------------------------------------------------------------------------------------
# stored versus computed
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class VersionDiffRow:
    op: str
    stored: int
    computed: int
    count: int
    reason: str
    stored_runtime: str | None
    computed_runtime: str | None


@dataclass(frozen=True, repr=False)
class VersionDiff:
    """Where a file's stored op versions differ from what today's rules compute."""

    name: str
    rows: tuple[VersionDiffRow, ...]
    stored: MinRuntime
    computed: MinRuntime
    metadata: str | None

    def __repr__(self) -> str:
        head = (f"{self.name}: minimum runtime {self.stored.version} from the stored versions, "
                f"{self.computed.version} from today's rules (metadata: {self.metadata or 'none'})")
        if not self.rows:
            return head + "\n  every builtin operator stores the version today's rules compute"
        lines = [head]
        for r in self.rows:
            lines.append(f"  {r.op}: stored v{r.stored} ({r.stored_runtime}) → computed v{r.computed} "
                         f"({r.computed_runtime}) × {r.count} — {r.reason}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        body = [[H.code(r.op), f"v{r.stored}", H.esc(r.stored_runtime or "—"), f"<b>v{r.computed}</b>",
                 f"<b>{H.esc(r.computed_runtime or '—')}</b>", str(r.count), H.esc(r.reason)] for r in self.rows]
        table = (H.table(["op", "stored", "first release", "computed", "first release", "operators", "why"], body)
                 if body else "<div><i>every builtin operator stores the version today's rules compute</i></div>")
        return (f"<div style='{H.BOX}'><b>{H.esc(self.name)}</b>: minimum runtime "
                f"<b>{H.esc(self.stored.version)}</b> from the stored versions, <b>{H.esc(self.computed.version)}</b> "
                f"from today's rules <small>(min_runtime_version metadata: {H.esc(self.metadata or 'none')})</small>"
                f"{table}</div>")


def version_diff(model, name: str = "model") -> VersionDiff:
    """Stored versus computed versions of every builtin operator of ``model``, grouped."""
    counts: Counter = Counter()
    reasons: dict = {}
    for v in computed_versions(model):
        if v.signature is None or v.signature.op == BuiltinOperator.CUSTOM:
            continue
        if v.number != v.stored:
            key = (v.op, v.stored, v.number)
            counts[key] += 1
            reasons.setdefault(key, (v.reason, v.signature.op))
    rows = tuple(VersionDiffRow(op, s, c, n, reasons[(op, s, c)][0], runtime_for(reasons[(op, s, c)][1], s),
                                runtime_for(reasons[(op, s, c)][1], c))
                 for (op, s, c), n in sorted(counts.items()))
    return VersionDiff(name, rows, min_runtime(model), min_runtime(model, computed=True),
                       read_min_runtime_metadata(model))


# ---------------------------------------------------------------------------------------------
# models × releases
# ---------------------------------------------------------------------------------------------
_REGISTRABLE = ("custom-op", "flex-op")  # the app can fix these by registering kernels / linking Flex


@dataclass(frozen=True)
class Cell:
    status: str  # "runs" | "custom ops" | "stored only" | "refused"
    stored_failures: int  # builtin operators refused by their stored versions (or their types)
    computed_failures: int  # builtin operators refused by today's computed versions
    custom: tuple[str, ...] = ()  # custom / Flex ops the release does not register

    @property
    def symbol(self) -> str:
        base = {"runs": "✔", "custom ops": "✚", "stored only": "⚠", "refused": "✘"}[self.status]
        return base + "✚" if self.custom and self.status in ("stored only", "refused") else base

    @property
    def runs(self) -> bool:
        """Can the stock release run the model as shipped?"""
        return self.status == "runs"


def _cell(model, updated, release: str) -> Cell:
    def builtin(findings):
        return [f for f in findings if f.is_error and f.kind not in _REGISTRABLE]

    def ops(findings):
        return len({(f.subgraph, f.op_index) for f in builtin(findings) if f.op_index is not None})
    stored = check(model, release)
    computed = check(updated, release) if updated is not model else stored
    custom = tuple(dict.fromkeys(f.op for f in stored if f.is_error and f.kind in _REGISTRABLE))
    if builtin(stored):
        return Cell("refused", ops(stored), ops(computed), custom)
    if builtin(computed):
        return Cell("stored only", 0, ops(computed), custom)
    return Cell("custom ops" if custom else "runs", 0, 0, custom)


@dataclass(frozen=True, repr=False)
class CompatibilityTable:
    """Which release can run which model: by the stored op versions, and by today's computed ones."""

    models: tuple[str, ...]
    releases: tuple[str, ...]
    cells: dict  # (model, release) -> Cell
    minimum: dict  # model -> (stored min runtime, computed min runtime)

    LEGEND = ("✔ runs · ✚ its builtin operators run, but it has custom ops no stock release registers "
              "(the app must register them, or link the Flex delegate): it cannot run as shipped · ⚠ its stored "
              "versions pass, but today's rules say an operator needs a newer release · ✘ refused (some stored "
              "(op, version) is not in that release, or no kernel takes an operator's types)")

    def __repr__(self) -> str:
        w = max(len(m) for m in self.models) if self.models else 5
        head = f"{'model':<{w}}  {'stored':>7} {'computed':>8}  " + " ".join(f"{r:>7}" for r in self.releases)
        lines = [head]
        for m in self.models:
            s, c = self.minimum[m]
            cells = " ".join(f"{self.cells[(m, r)].symbol:>7}" for r in self.releases)
            lines.append(f"{m:<{w}}  {s:>7} {c:>8}  {cells}")
        lines.append(self.LEGEND)
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        colour = {"runs": OK, "custom ops": CUSTOM, "stored only": WARN, "refused": BAD}
        head = "".join(f"<th style='{H.CELL};white-space:nowrap'>{H.esc(r)}</th>" for r in self.releases)
        body = []
        for m in self.models:
            s, c = self.minimum[m]
            tds = []
            for r in self.releases:
                cell = self.cells[(m, r)]
                tip = (f"{cell.stored_failures} operators refused by their stored versions; "
                       f"{cell.computed_failures} by today's computed versions"
                       + (f"; custom ops to register: {', '.join(cell.custom)}" if cell.custom else ""))
                tds.append(f"<td title='{H.esc(tip)}' style='{H.CELL};text-align:center;background:"
                           f"{colour[cell.status]};color:{H.INK}'>{cell.symbol}</td>")
            body.append(f"<tr><td style='{H.CELL}'>{H.code(m)}</td><td style='{H.CELL}'>{H.esc(s)}</td>"
                        f"<td style='{H.CELL}'><b>{H.esc(c)}</b></td>{''.join(tds)}</tr>")
        return (f"<div class='wb-compat' style='{H.BOX}'><table style='{H.TABLE}'><tr><th style='{H.CELL}'>model</th>"
                f"<th style='{H.CELL}'>stored min</th><th style='{H.CELL}'>computed min</th>{head}</tr>"
                + "".join(body) + f"</table><small>{H.esc(self.LEGEND)}</small></div>")


def compatibility_table(models: dict, release_list=None) -> CompatibilityTable:
    """``models``: name → Model.  ``release_list`` defaults to a spread of releases from 1.5.0 to 2.5.0."""
    rel = tuple(release_list or ("1.5.0", "1.12.0", "1.14.0", "1.15.0", "2.1.0", "2.2.0", "2.3.0", "2.5.0"))
    cells, minimum = {}, {}
    with one_look_each():        # each operator's version and types worked out once, not once per release
        for name, model in models.items():
            updated = update_versions(model)
            minimum[name] = (min_runtime(model).version, min_runtime(updated).version)
            for r in rel:
                cells[(name, r)] = _cell(model, updated, r)
    return CompatibilityTable(tuple(models), rel, cells, minimum)
