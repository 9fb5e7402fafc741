"""RuntimeExplorer: pick a model and a TFLite release — can that release run it, and if not, why?

The verdict follows :func:`workbench.versioning.check`: every (op, version) the release lacks, every
custom op it does not register (MediaPipe's, Flex ops: the app would have to register them) and
every operator whose tensor types no TFLite kernel takes; each reason on its own line.

Models are the corpus models (``workbench.corpus``, fetched on first use), the ``*.tflite`` files of a
folder the caller names (``sample_dir=``: the notebooks pass the repository's ``sample_models``), plus
any ``models={name: Model or path}`` passed in.  Releases are the ones named in the runtime table.  A
plain class holding ipywidgets, so tests drive it without a browser::

    ex = RuntimeExplorer()
    ex.model_name.value = "selfie_segmentation"
    ex.release.value = "1.15.0"
    ex.versions.value = "computed"      # judge by today's rules instead of the stored versions
    ex.verdict_html.value, ex.findings_html.value, ex.drivers_html.value
    ex.findings                         # the Finding objects behind the view
"""

from __future__ import annotations

import time
from pathlib import Path

import ipywidgets as W

from ... import corpus
from ...schema import load
from ...schema.enums import BuiltinOperator
from ...versioning import check, compare_runtime_version, min_runtime, read_min_runtime_metadata, update_versions
from .. import _html as H
from ..versions import findings_html, findings_summary, min_runtime_html, releases, version_diff


def available_models(sample_dir: Path | None = None) -> dict[str, object]:
    """name → path-or-loader: corpus models by name, then the models of ``sample_dir`` (``sample:<stem>``)."""
    out: dict[str, object] = {name: name for name in sorted(corpus.MODELS)}
    if sample_dir is None:
        return out
    folder = Path(sample_dir)
    if not folder.is_dir():
        raise FileNotFoundError(f"sample_dir {str(folder)!r} is not a folder (from {str(Path.cwd())!r})")
    for p in sorted(folder.glob("*.tflite")):
        out[f"sample:{p.stem}"] = p
    return out


class RuntimeExplorer:
    """Widgets for one (model, release) pair: the verdict, the findings per op, what drives the minimum."""

    def __init__(self, model: str | None = None, release: str = "1.15.0", *, models: dict | None = None,
                 sample_dir: Path | None = None):
        self.sources = available_models(sample_dir)
        self._cache: dict = {}  # name → Model; ("computed", name) → Model; ("facts", name) → tuple
        for name, m in (models or {}).items():
            if isinstance(m, (str, Path)):
                self.sources[name] = Path(m)
            else:
                self.sources[name] = name
                self._cache[name] = m
        names = list(self.sources)
        if model is None:
            model = "selfie_segmentation" if "selfie_segmentation" in self.sources else names[0]
        self.model_name = W.Dropdown(options=names, value=model, description="model",
                                     layout=W.Layout(width="380px"))
        self.release = W.Dropdown(options=releases(), value=release, description="TFLite release",
                                  style={"description_width": "initial"}, layout=W.Layout(width="220px"))
        self.versions = W.ToggleButtons(options=[("stored versions", "stored"),
                                                 ("today's computed versions", "computed")],
                                        value="stored", style={"button_width": "230px"})
        self.verdict_html = W.HTML()
        self.findings_html = W.HTML()
        self.drivers_html = W.HTML()
        self.diff_html = W.HTML()
        self.tabs = W.Tab(children=[self.findings_html, self.drivers_html, self.diff_html])
        self.tabs.titles = ("findings", "minimum runtime", "stored vs computed")
        self.widget = W.VBox([W.HBox([self.model_name, self.release]), self.versions, self.verdict_html, self.tabs])
        self.widget.add_class("wb-runtime-explorer")
        self.findings: list = []
        self.elapsed = 0.0
        for w in (self.model_name, self.release, self.versions):
            w.observe(lambda _c: self.update(), names="value")
        self.update()

    # -- models ---------------------------------------------------------------------------------
    def model(self, name: str | None = None):
        """The chosen model (stored versions), loaded once."""
        name = name or self.model_name.value
        if name not in self._cache:
            src = self.sources[name]
            self._cache[name] = load(corpus.path(src) if isinstance(src, str) else src)
        return self._cache[name]

    def _judged(self):
        key = ("computed", self.model_name.value)
        if self.versions.value == "stored":
            return self.model()
        if key not in self._cache:
            self._cache[key] = update_versions(self.model())
        return self._cache[key]

    def _facts(self, name: str):
        """Per model, computed once: stored and computed minimum runtime, metadata, the diff view."""
        key = ("facts", name)
        if key not in self._cache:
            m = self.model(name)
            self._cache[key] = (min_runtime(m), min_runtime(update_versions(m)), read_min_runtime_metadata(m),
                                 version_diff(m, name)._repr_html_())
        return self._cache[key]

    # -- rendering ------------------------------------------------------------------------------
    def update(self) -> None:
        t0 = time.perf_counter()
        name, release = self.model_name.value, self.release.value
        model = self._judged()
        self.findings = check(model, release)
        stored, computed, meta, diff = self._facts(name)
        errors = [f for f in self.findings if f.is_error]
        builtin_errors = [f for f in errors if f.kind not in ("custom-op", "flex-op")]
        basis = "its stored op versions" if self.versions.value == "stored" else "today's computed op versions"
        if errors:
            shipped = "" if builtin_errors else " as shipped"
            verdict, colour = f"✘ TFLite {release} cannot run {name}{shipped}", "#ffebee"
        else:
            verdict, colour = f"✔ TFLite {release} can run {name}", "#e8f5e9"
        reasons = findings_summary(errors, f"TFLite {release}")
        notes = []
        if errors and not builtin_errors:
            notes.append("its builtin operators are all registered there: only the custom ops stop it")
        if self.versions.value == "stored" and not builtin_errors and _lower(release, computed.version):
            notes.append(f"but today's rules say it needs {computed.version}: some operators store a version "
                         "older than the features they use (see “stored vs computed”)")
        unknown = [f for f in self.findings if f.kind == "unknown"]
        if unknown:
            notes.append("cannot tell: " + "; ".join(dict.fromkeys(f.message for f in unknown)))
        outside = sorted({f"{e.op} v{e.version}" for e in stored.entries
                          if e.runtime is None and not _custom(e)})
        if outside:
            notes.append("not in the runtime table (the minimum runtime skips them): " + ", ".join(outside))
        self.verdict_html.value = (
            f"<div style='{H.BOX}'><div style='background:{colour};color:{H.INK};padding:3px 6px;font-size:14px'>"
            f"<b>{H.esc(verdict)}</b> <small>(judged by {basis})</small></div>"
            + "".join(f"<div>✘ {H.esc(r)}</div>" for r in reasons)
            + f"<div>minimum runtime: <b>{H.esc(stored.version)}</b> from the stored versions, "
            f"<b>{H.esc(computed.version)}</b> from today's rules; min_runtime_version metadata: "
            f"{H.esc(meta or 'none')}</div>"
            + "".join(f"<div>• {H.esc(n)}</div>" for n in notes) + "</div>")
        self.findings_html.value = findings_html(self.findings, f"TFLite {release}")
        self.drivers_html.value = min_runtime_html(min_runtime(model))
        self.diff_html.value = diff
        self.elapsed = time.perf_counter() - t0

    @property
    def runs(self) -> bool:
        return not any(f.is_error for f in self.findings)

    # -- display --------------------------------------------------------------------------------
    def __repr__(self) -> str:
        errors = [f for f in self.findings if f.is_error]
        state = "runs" if self.runs else f"cannot run ({len(errors)} finding{'s' if len(errors) != 1 else ''})"
        return (f"RuntimeExplorer: {self.model_name.value} on TFLite {self.release.value} "
                f"({self.versions.value} versions): {state}")

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude, **kwargs) or {})
        bundle["text/plain"] = repr(self)
        bundle["text/html"] = f"<div>{self.verdict_html.value}{self.findings_html.value}</div>"
        return bundle


def _custom(entry) -> bool:
    """A CUSTOM operator's entry (its op is the custom code, not a builtin name)."""
    return entry.code == int(BuiltinOperator.CUSTOM)


def _lower(a: str, b: str) -> bool:
    """Release ``a`` is lower than ``b`` (False when ``b`` is empty)."""
    return bool(b) and compare_runtime_version(a, b)


__all__ = ["RuntimeExplorer", "available_models"]
