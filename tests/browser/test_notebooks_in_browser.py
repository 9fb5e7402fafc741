"""Every notebook, run the way a learner runs it: JupyterLab in a real (headless) browser.

JupyterLab starts on a free 127.0.0.1 port with a token, its own settings, workspaces, config and
runtime folders, and a ``python3`` kernelspec pinned to the interpreter running the tests; it serves a
*copy* of ``notebooks/`` (JupyterLab autosaves what it opens), with the repository's other top-level
folders linked beside it so that ``../sample_models/...`` resolves as in the repository.  Debian's
Chromium (``/usr/bin/chromium``, driven by the Python ``playwright`` package; no browser is ever
downloaded) then, for each ``notebooks/*.ipynb``:

* opens it, waits for its kernel, and chooses Run → Run All Cells in the menu;
* waits until no cell shows ``[*]`` and the kernel is idle (a hard limit per notebook);
* saves it and finds no error output: no ``error`` output in the saved copy, no traceback in what the
  page shows on stderr (progress bars also write to stderr: they are not errors), no widget that
  failed to display;
* reads the reasons on a partition graph: each numbered CPU badge's tooltip (``[n] reason``) and the
  row ``n`` of the "Left on the CPU" table the badge links to, which must say the same;
* where a :class:`~workbench.viz.widgets.PartitionLab` is shown, types a new "min nodes" value into it
  and waits for the picture (the SVG) to change;
* answers one exercise wrong, then right, as a learner does: the cell's source stays hidden, the wrong
  answer shows "✗" with the reveal still closed (a screenshot of the widget then), the right one "✓" and
  opens the reveal;
* keeps a screenshot of the whole notebook, and of the lab before and after the change.

A notebook that fails is tried once more on a fresh copy with a fresh kernel.  The module stops
starting notebooks after ``BUDGET_S`` seconds.  Artifacts (screenshots, the executed copies, the
server's log) are written to ``.pytest_cache/d/browser-artifacts`` (``WORKBENCH_BROWSER_ARTIFACTS``
overrides it); every failure message names the screenshot to look at.

Deselect with ``-m "not browser"``.  Without playwright, Chromium or JupyterLab the module skips with
one line saying what is missing (``make test`` installs them when it can).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
CHROMIUM = Path(os.environ.get("WORKBENCH_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
SERVER_START_S = 90       # JupyterLab answering /api/status
OPEN_S = 90               # a notebook's page shows its cells and its kernel is idle
RUN_S = 240               # hard limit for Run All on one notebook (the slowest takes ~15 s headless)
RECUT_S = 60              # the partition lab answering a changed control
BUDGET_S = 600            # no notebook (nor retry) is started after this many seconds of the module
ATTEMPTS = 2              # one retry
SHOT_MAX_PX = 16000       # a screenshot of a long notebook is cut at this height
VIEWPORT = {"width": 1400, "height": 1000}

pytestmark = pytest.mark.browser


def _missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the Python package 'playwright' is not installed (it is in the test extras: pip install -e '.[test]')"
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        return (f"no Chromium at {CHROMIUM} (as root with apt, `make test` installs Debian's chromium; "
                f"otherwise: apt-get install chromium, or point WORKBENCH_CHROMIUM at one)")
    if importlib.util.find_spec("jupyterlab") is None:      # found, not imported: collection stays quick
        return "JupyterLab is not installed (it is in the lab extras: pip install -e '.[lab]')"
    return None


_WHY = _missing()
if _WHY:
    pytest.skip(f"browser test skipped: {_WHY}", allow_module_level=True)

from playwright.sync_api import Error as PlaywrightError  # noqa: E402
from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

# -- what the page shows ------------------------------------------------------------------------------

# per code cell: its prompt, whether it has source, its stderr texts
CELLS_JS = """() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-CodeCell')]
  .map(c => ({
    prompt: (c.querySelector('.jp-InputArea-prompt') || {}).textContent || '',
    source: ((c.querySelector('.jp-InputArea-editor .cm-content') || {}).textContent || '').trim().length > 0,
    stderr: [...c.querySelectorAll(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")]
              .map(e => e.textContent),
    widgetErrors: [...c.querySelectorAll('.jp-OutputArea-output')]
              .map(e => e.textContent).filter(t => /Error displaying widget|Failed to load model class/.test(t)),
  }))"""

# the numbered badges of the op-graph views: the SVG link's tooltip and the table row it points at
REASONS_JS = """() => {
  const XL = 'http://www.w3.org/1999/xlink';
  const found = [];
  for (const a of document.querySelectorAll('.jp-OutputArea-output svg a')) {
    const href = a.getAttributeNS(XL, 'href') || a.getAttribute('href') || '';
    const title = a.getAttributeNS(XL, 'title') || a.getAttribute('title') || '';
    const m = /^\\[(\\d+)\\]\\s+([\\s\\S]+)$/.exec(title);
    if (!href.startsWith('#') || !m) continue;
    const row = document.getElementById(href.slice(1));
    const box = a.getBoundingClientRect();
    found.push({number: m[1], reason: m[2], label: a.textContent.trim(), href: href,
                row: row ? row.textContent.replace(/\\s+/g, ' ').trim() : null,
                shown: box.width > 0 && box.height > 0});
  }
  return found;
}"""

# the notebook's scroller, scrolled to the top: its full and its visible height
SCROLLER_JS = """() => {
  const o = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer')
         || document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  if (!o) return null;
  o.scrollTop = 0;
  return {scroll: o.scrollHeight, client: o.clientHeight};
}"""

# node id → the colours of its box (the lab's picture keeps every box where it is; colours change)
SVG_NODES_JS = """(el) => { const s = el.querySelector('svg'); if (!s) return {};
  const m = {};
  for (const g of s.querySelectorAll('g.node[data-node]')) {
    const r = g.querySelector('rect.box');
    m[g.getAttribute('data-node')] = r ? `${r.getAttribute('fill')} ${r.getAttribute('stroke')}` : '';
  }
  return m; }"""
SVG_MARKUP_JS = "(el) => { const s = el.querySelector('svg'); return s ? s.outerHTML : null; }"

# the rendered size (CSS px at the page's zoom) of every non-empty text of the SVGs matching SELECTOR:
# its font size in SVG user units times the SVG's scale on screen
TEXT_PX_JS = """(selector) => {
  const out = [];
  for (const t of document.querySelectorAll(selector)) {
    if (!t.textContent.trim()) continue;
    const m = t.getScreenCTM();
    const size = parseFloat(getComputedStyle(t).fontSize);
    if (m && size) out.push({px: size * Math.hypot(m.a, m.b), text: t.textContent.trim().slice(0, 30)});
  }
  return out;
}"""
MIN_TEXT_PX = 11.0

TRACEBACK = re.compile(r"Traceback \(most recent call last\)|^-{20,}\s*$|^\s*[A-Za-z_.]*(Error|Exception)\b",
                       re.MULTILINE)
PROGRESS = re.compile(r"\d+%\||\d+it \[|it/s\]|s/it\]")


@dataclass
class Visit:
    """What happened when one notebook ran in the browser (the last attempt)."""

    name: str
    attempts: int = 0
    seconds: float = 0.0                           # wall time of the last attempt
    errors: list = field(default_factory=list)     # what makes the run fail
    notes: list = field(default_factory=list)      # stderr that is not an error (warnings), earlier attempts
    reasons: list = field(default_factory=list)    # badge number, reason, matching table row
    lab: dict | None = None                        # the partition lab: control, value, changed fills, shots
    exercise: dict | None = None                   # the exercise answered wrong then right
    text_px: dict = field(default_factory=dict)    # selector → the smallest rendered text (px) and how many
    screenshot: Path | None = None
    executed: Path | None = None

    def problem(self) -> str:
        lines = [f"{self.name} in the browser ({self.attempts} attempt(s), last {self.seconds:.0f} s):"]
        lines += [f"  - {e}" for e in self.errors]
        lines += [f"  note: {n}" for n in self.notes]
        lines.append(f"  screenshot: {self.screenshot}")
        if self.executed:
            lines.append(f"  executed copy: {self.executed}")
        return "\n".join(lines)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _artifact_dir(config) -> Path:
    env = os.environ.get("WORKBENCH_BROWSER_ARTIFACTS")
    if env:
        path = Path(env)
    elif getattr(config, "cache", None) is not None:
        path = Path(config.cache.mkdir("browser-artifacts"))
    else:
        path = ROOT / ".pytest_cache" / "d" / "browser-artifacts"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True, exist_ok=True)
    return path


class JupyterLab:
    """A JupyterLab server of the test's own on a copy of the notebooks."""

    def __init__(self, work: Path, log: Path):
        self.work = work
        self.root = work / "root"
        self.token = secrets.token_hex(16)
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = log
        self.proc: subprocess.Popen | None = None

    def prepare(self) -> dict:
        self.root.mkdir(parents=True)
        shutil.copytree(NOTEBOOK_DIR, self.root / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        for entry in ROOT.iterdir():       # ../sample_models, ../benchmarks … as the notebooks expect them
            if entry.name != "notebooks" and not entry.name.startswith("."):
                (self.root / entry.name).symlink_to(entry)
        settings = self.work / "settings"
        for ext, name, value in (
                ("@jupyterlab/apputils-extension", "notification", {"fetchNews": "false", "checkForUpdates": False}),
                # every cell in the page (no virtual scrolling): the test reads all prompts and outputs
                ("@jupyterlab/notebook-extension", "tracker", {"windowingMode": "none"})):
            (settings / ext).mkdir(parents=True, exist_ok=True)
            (settings / ext / f"{name}.jupyterlab-settings").write_text(json.dumps(value))
        spec = self.work / "jupyter" / "kernels" / "python3"      # the kernel runs this interpreter
        spec.mkdir(parents=True)
        (spec / "kernel.json").write_text(json.dumps({
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (workbench venv)", "language": "python"}))
        env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(settings),
                   JUPYTERLAB_WORKSPACES_DIR=str(self.work / "workspaces"),
                   JUPYTER_CONFIG_DIR=str(self.work / "config"), JUPYTER_RUNTIME_DIR=str(self.work / "runtime"),
                   JUPYTER_PATH=str(self.work / "jupyter"), PYTHONUNBUFFERED="1")
        env.pop("JUPYTER_TOKEN", None)
        return env

    def start(self) -> None:
        env = self.prepare()
        cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={self.port}",
               "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
               f"--ServerApp.root_dir={self.root}"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, cwd=self.root)
        deadline = time.monotonic() + SERVER_START_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with status {self.proc.returncode}:\n{self.log_tail()}")
            try:
                self.api("GET", "/api/status", timeout=2)
                return
            except (urllib.error.URLError, OSError):
                time.sleep(0.3)
        raise RuntimeError(f"JupyterLab did not answer within {SERVER_START_S} s:\n{self.log_tail()}")

    def log_tail(self, n: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def api(self, method: str, path: str, timeout: float = 10):
        req = urllib.request.Request(f"{self.base}{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            body = r.read()
        return json.loads(body) if body else None

    def url(self, name: str, workspace: str) -> str:
        """The notebook alone in a workspace of its own (the default one would reopen earlier tabs)."""
        return f"{self.base}/lab/workspaces/{workspace}/tree/notebooks/{name}?token={self.token}&reset"

    def session(self, name: str) -> dict | None:
        for s in self.api("GET", "/api/sessions"):
            if s.get("path") == f"notebooks/{name}":
                return s
        return None

    def kernel_state(self, name: str) -> str | None:
        s = self.session(name)
        return s["kernel"].get("execution_state") if s and s.get("kernel") else None

    def forget(self) -> None:
        """Shut every kernel down (one notebook runs at a time; none is needed once its page is closed)."""
        try:
            for s in self.api("GET", "/api/sessions"):
                self.api("DELETE", f"/api/sessions/{s['id']}", timeout=30)
        except (urllib.error.URLError, OSError):
            pass

    def answers(self, name: str, key: str) -> tuple[str, str]:
        """A wrong and the right answer of exercise ``key``, computed in the notebook's own kernel (as
        the headless audit does) through the kernel's connection file."""
        from jupyter_client import BlockingKernelClient

        kernel = self.session(name)["kernel"]["id"]
        client = BlockingKernelClient(connection_file=str(self.work / "runtime" / f"kernel-{kernel}.json"))
        client.load_connection_file()
        client.start_channels()
        said = []
        try:
            client.wait_for_ready(timeout=30)
            client.execute_interactive(ANSWERS_IN_KERNEL.replace("KEY", repr(key)), timeout=60, store_history=False,
                                       output_hook=lambda m: said.append(m["content"].get("text", "")))
        finally:
            client.stop_channels()
        text = "".join(said)
        if "DRIVE " not in text:
            raise RuntimeError(f"the kernel did not give the answers of exercise {key!r}: {text[:300]!r}")
        wrong, right = json.loads(text.split("DRIVE ", 1)[1].splitlines()[0])
        return wrong, right

    def restore(self, name: str) -> None:
        shutil.copy2(NOTEBOOK_DIR / name, self.root / "notebooks" / name)

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            if self.proc.poll() is None:
                self.api("POST", "/api/shutdown", timeout=10)     # shuts its kernels down too
                self.proc.wait(20)
        except (urllib.error.URLError, OSError, subprocess.TimeoutExpired):
            pass
        finally:
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(10)
            self.log.close()


class BrowserRun:
    """One JupyterLab and one Chromium for the module; ``visit(path)`` runs a notebook once (cached)."""

    def __init__(self, lab: JupyterLab, context, artifacts: Path, started: float):
        self.lab = lab
        self.context = context
        self.artifacts = artifacts
        self.started = started
        self.visits: dict[str, Visit] = {}

    def visit(self, path: Path) -> Visit:
        name = path.name
        if name in self.visits:
            return self.visits[name]
        v = Visit(name)
        for attempt in range(1, ATTEMPTS + 1):
            spent = time.monotonic() - self.started
            if spent > BUDGET_S:
                v.errors = v.errors or []
                v.errors.append(f"not (re)started: the browser test's time budget of {BUDGET_S} s is spent "
                                f"({spent:.0f} s)")
                break
            if attempt > 1:
                v.notes.append(f"attempt {attempt - 1} failed: " + "; ".join(v.errors))
                self.lab.restore(name)
            v.attempts, v.errors, v.reasons, v.lab = attempt, [], [], None
            t0 = time.monotonic()
            page = self.context.new_page()
            try:
                self._run(page, v)
            except (PlaywrightError, PlaywrightTimeout, RuntimeError, OSError) as exc:
                v.errors.append(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            finally:
                v.seconds = time.monotonic() - t0
                if v.screenshot is None or v.errors:
                    v.screenshot = self._shoot(page, f"{path.stem}.attempt{attempt}.png")
                page.close()
                self.lab.forget()
            if not v.errors:
                break
        print(f"[browser] {name}: {v.seconds:.1f} s, attempt {v.attempts}, "
              f"{'ok' if not v.errors else 'FAILED'}; screenshot {v.screenshot}")
        for note in v.notes:
            print(f"[browser]   note: {note}")
        self.visits[name] = v
        return v

    # -- one attempt ----------------------------------------------------------------------------------
    def _run(self, page, v: Visit) -> None:
        name = v.name
        page.goto(self.lab.url(name, f"{Path(name).stem}-{v.attempts}"), timeout=OPEN_S * 1000)
        page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-CodeCell",
                               timeout=OPEN_S * 1000)
        self._wait_kernel_idle(name, OPEN_S, "the kernel did not start")
        try:                                     # fold the file browser: more room for the notebook
            page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current").first.click(timeout=5000)
        except PlaywrightTimeout:
            pass
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.locator('li[data-command="runmenu:run-all"]').click()
        cells = self._wait_done(page, name)

        # errors: in the saved copy (output type "error") and on the page (a traceback on stderr — a
        # progress bar also writes to stderr: its lines are left out; other stderr text is a note)
        v.executed = self._save(page, name)
        raised = set()
        for i, cell in enumerate(_code_cells(v.executed)):
            for out in cell.get("outputs", ()):
                if out.get("output_type") == "error":
                    raised.add(i)
                    v.errors.append(f"code cell {i + 1} raised {out.get('ename')}: {out.get('evalue')}")
        for i, c in enumerate(cells):
            for text in c["stderr"]:
                if TRACEBACK.search(text):
                    if i not in raised:
                        v.errors.append(f"code cell {i + 1} shows an error: {_first_lines(text)}")
                elif _without_progress(text):
                    v.notes.append(f"code cell {i + 1} writes to stderr: {_first_lines(_without_progress(text))}")
            for text in c["widgetErrors"]:
                v.errors.append(f"code cell {i + 1}: a widget did not display: {_first_lines(text)}")

        # the reasons on the partition graphs: badge tooltip == the row it links to
        for r in page.evaluate(REASONS_JS):
            if r["row"] is None:
                v.errors.append(f"badge [{r['number']}] links to {r['href']}, which is not on the page")
            elif " ".join(r["reason"].split()) not in r["row"] or r["label"] != r["number"]:
                v.errors.append(f"badge [{r['number']}] says {r['reason']!r} (label {r['label']!r}) but its row "
                                f"says {r['row']!r}")
            else:
                v.reasons.append(r)

        self._measure_text(page, v, ".jp-OutputArea-output .wb-graph svg text")
        if page.locator(".wb-partition-lab").count():
            v.lab = self._recut(page, v)
            self._measure_text(page, v, ".wb-partition-lab .wb-pl-picture svg text")
        v.exercise = self._answer_an_exercise(page, v)
        v.screenshot = self._shoot(page, f"{Path(name).stem}.png", whole=True)

    def _wait_kernel_idle(self, name: str, seconds: float, what: str) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.lab.kernel_state(name) == "idle":
                return
            time.sleep(0.25)
        raise RuntimeError(f"{what} within {seconds} s (state {self.lab.kernel_state(name)!r})")

    def _wait_done(self, page, name: str) -> list:
        """Until no prompt shows [*], every cell with source has run (or a cell failed), and the kernel
        is idle — twice in a row, half a second apart."""
        deadline = time.monotonic() + RUN_S
        calm = 0
        while True:
            cells = page.evaluate(CELLS_JS)
            busy = [i + 1 for i, c in enumerate(cells) if "*" in c["prompt"]]
            waiting = [i + 1 for i, c in enumerate(cells) if c["source"] and not re.search(r"\[\d+\]", c["prompt"])]
            failed = any(TRACEBACK.search(t) for c in cells for t in c["stderr"])
            done = cells and not busy and (not waiting or failed) and self.lab.kernel_state(name) == "idle"
            calm = calm + 1 if done else 0
            if calm >= 2:
                return cells
            if time.monotonic() > deadline:
                raise RuntimeError(f"Run All did not finish within {RUN_S} s: code cells running {busy[:5]}, "
                                   f"not run {waiting[:10]}")
            page.wait_for_timeout(500)

    def _save(self, page, name: str) -> Path:
        """File → Save Notebook; the executed copy is kept with the artifacts."""
        copy = self.lab.root / "notebooks" / name
        before = copy.stat().st_mtime_ns
        page.get_by_role("menuitem", name="File", exact=True).click()
        page.locator('li[data-command="docmanager:save"]').click()
        deadline = time.monotonic() + 30
        while copy.stat().st_mtime_ns == before and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(0.3)
        out = self.artifacts / f"{Path(name).stem}.executed.ipynb"
        shutil.copy2(copy, out)
        return out

    def _recut(self, page, v: Visit) -> dict:
        """Type a new 'min nodes' value into the partition lab; wait for its SVG to change."""
        stem = Path(v.name).stem
        lab = page.locator(".wb-partition-lab").first
        lab.scroll_into_view_if_needed()
        graph = lab.locator(".wb-pl-graph").first
        graph.locator("svg").first.wait_for(timeout=RECUT_S * 1000)
        before_svg = graph.evaluate(SVG_MARKUP_JS)
        before_nodes = graph.evaluate(SVG_NODES_JS)
        shot_before = self._shoot_element(page, lab, f"{stem}.lab-before.png")
        box = lab.locator(".wb-pl-min-nodes input").first
        result = {"control": "min nodes", "before": shot_before, "tried": []}
        for value in (10, 50, 100000):           # a learner's try first; the last empties every partition
            box.fill(str(value))
            box.press("Enter")
            try:                                 # the heading says the knob once the recut is drawn
                graph.get_by_text(f"min nodes {value}").first.wait_for(timeout=RECUT_S * 1000)
            except PlaywrightTimeout:
                v.errors.append(f"the partition lab did not answer 'min nodes = {value}' within {RECUT_S} s")
                break
            result["tried"].append(value)
            after_svg = graph.evaluate(SVG_MARKUP_JS)
            if after_svg and after_svg != before_svg:
                after_nodes = graph.evaluate(SVG_NODES_JS)
                result["value"] = value
                result["boxes_recoloured"] = sum(after_nodes.get(k) != c for k, c in before_nodes.items())
                result["summary"] = lab.locator(".wb-pl-summary").first.inner_text().splitlines()[0]
                break
        else:
            v.errors.append(f"the partition lab's picture did not change for min nodes {result['tried']}")
        result["after"] = self._shoot_element(page, lab, f"{stem}.lab-after.png")
        pinned = self._pin_and_look(page, lab, stem)
        result["pinned"] = pinned
        now, old = pinned["boxes"]["now"], pinned["boxes"]["pinned"]
        if not now or not old:
            v.errors.append("after 'pin this plan' the lab does not show both the pinned and the current picture")
        elif not (now["x"] >= 0 and old["x"] >= 0 and now["x"] + 20 < 1280 and old["x"] + 20 < 1280
                  and abs(now["y"] - old["y"]) > 10 and pinned["page_width"] <= 1280):
            v.errors.append(f"at 1280 px the lab's pictures are not both in view (current at {now}, pinned at {old}, "
                            f"page {pinned['page_width']} px wide): see {pinned['shot']}")
        return result

    def _measure_text(self, page, v: Visit, selector: str) -> None:
        """The smallest text of the graphs matching ``selector`` must render at MIN_TEXT_PX or more."""
        sizes = page.evaluate(TEXT_PX_JS, selector)
        if not sizes:
            return
        small = min(sizes, key=lambda s: s["px"])
        v.text_px[selector] = {"min_px": round(small["px"], 2), "texts": len(sizes), "smallest": small["text"]}
        if small["px"] < MIN_TEXT_PX - 0.05:
            tiny = sum(s["px"] < MIN_TEXT_PX - 0.05 for s in sizes)
            v.errors.append(f"{tiny} of {len(sizes)} texts in {selector} render below {MIN_TEXT_PX} px (smallest "
                            f"{small['px']:.2f} px: {small['text']!r})")

    def _pin_and_look(self, page, lab, stem: str) -> dict:
        """Pin the plan, recut, and see both pictures one above the other inside a 1280 px wide page."""
        size = page.viewport_size or VIEWPORT
        page.set_viewport_size({"width": 1280, "height": size["height"]})
        try:
            lab.get_by_role("button", name="pin this plan").first.click()
            box = lab.locator(".wb-pl-min-nodes input").first
            box.fill("3")
            box.press("Enter")
            lab.locator(".wb-pl-picture-pinned svg").first.wait_for(timeout=RECUT_S * 1000)
            page.wait_for_timeout(500)
            boxes = {}
            for which in ("now", "pinned"):
                pic = lab.locator(f".wb-pl-picture-{which}").first
                pic.scroll_into_view_if_needed()
                boxes[which] = pic.bounding_box()
            wide = page.evaluate("() => document.documentElement.scrollWidth")
            shot = self._shoot_element(page, lab, f"{stem}.lab-pinned.png")
        finally:
            page.set_viewport_size(size)
        return {"boxes": boxes, "page_width": wide, "shot": shot}

    def _answer_an_exercise(self, page, v: Visit) -> dict:
        """Answer one exercise wrong, then right, in the widget; see the reveal stay closed, then open."""
        key = first_exercise(NOTEBOOK_DIR / v.name)
        wrong, right = self.lab.answers(v.name, key)
        widget = page.locator(f".wb-ex-{key}").first
        widget.scroll_into_view_if_needed()
        cell = page.locator(".jp-CodeCell", has=page.locator(f".wb-ex-{key}")).first
        result = {"key": key, "source_hidden": not cell.locator(".jp-InputArea-editor").first.is_visible()}
        if not result["source_hidden"]:
            v.errors.append(f"exercise {key!r}: the cell's source is visible")
        feedback = widget.locator(".wb-exercise-result").first
        reveal = widget.locator(".widget-output, .jupyter-widgets-output-area").first

        def answer(value) -> str:
            radios = widget.locator("input[type=radio]")
            if radios.count():
                widget.locator("label", has_text=value).first.click()
            elif widget.locator("select").count():
                widget.locator("select").first.select_option(label=value)
            else:
                widget.locator("input[type=text]").first.fill(str(value))
            widget.get_by_role("button", name="Check").first.click()
            feedback.wait_for(timeout=30_000)
            page.wait_for_timeout(300)
            return feedback.inner_text()

        result["wrong"] = answer(wrong)
        result["closed_after_wrong"] = not reveal.is_visible() or not reveal.inner_text().strip()
        result["shot_wrong"] = self._shoot_element(page, widget, f"{Path(v.name).stem}.exercise-wrong.png")
        result["right"] = answer(right)
        result["open_after_right"] = reveal.is_visible() and bool(reveal.inner_text().strip())
        result["shot_right"] = self._shoot_element(page, widget, f"{Path(v.name).stem}.exercise-right.png")
        if "✗" not in result["wrong"] or not result["closed_after_wrong"]:
            v.errors.append(f"exercise {key!r}: a wrong answer showed {result['wrong']!r} "
                            f"(reveal closed: {result['closed_after_wrong']})")
        if "✓" not in result["right"] or not result["open_after_right"]:
            v.errors.append(f"exercise {key!r}: the right answer showed {result['right']!r} "
                            f"(reveal open: {result['open_after_right']})")
        return result

    def _shoot_element(self, page, locator, filename: str) -> Path:
        """A picture of one element, in a viewport tall enough to hold it (up to SHOT_MAX_PX)."""
        path = self.artifacts / filename
        size = page.viewport_size or VIEWPORT
        box = locator.bounding_box()
        if box and box["height"] + 100 > size["height"]:
            page.set_viewport_size({"width": size["width"], "height": int(min(box["height"] + 200, SHOT_MAX_PX))})
            page.wait_for_timeout(300)
        try:
            locator.scroll_into_view_if_needed()
            locator.screenshot(path=str(path))
        finally:
            page.set_viewport_size(size)
        return path

    def _shoot(self, page, filename: str, whole: bool = False) -> Path | None:
        """A screenshot; ``whole``: the page made as tall as the notebook (up to SHOT_MAX_PX)."""
        path = self.artifacts / filename
        try:
            size = page.viewport_size or VIEWPORT
            dims = page.evaluate(SCROLLER_JS) if whole else None
            if dims:
                tall = min(size["height"] - dims["client"] + dims["scroll"], SHOT_MAX_PX)
                page.set_viewport_size({"width": size["width"], "height": max(int(tall), size["height"])})
                page.evaluate(SCROLLER_JS)
                page.wait_for_timeout(400)
            page.screenshot(path=str(path), full_page=True, timeout=60_000)
            if dims:
                page.set_viewport_size(size)
            return path
        except (PlaywrightError, PlaywrightTimeout):
            return None


# run in the notebook's kernel: a wrong and the right answer of exercise KEY, as the widget takes them
ANSWERS_IN_KERNEL = r"""
import enum as _enum, json as _json
from workbench.viz.exercise import Exercise as _Exercise, show as _show
_ex = next(v for v in [*Out.values(), *globals().values()] if isinstance(v, _Exercise) and v.key == KEY)
def _wrong_one(e):
    if isinstance(e, _enum.Enum):
        return next(m for m in type(e) if m != e).name
    if isinstance(e, (int, float)) and not isinstance(e, bool):
        return str(e * 10 + 1000)
    return "certainly not this"
_e = _ex.expected
if _ex.choices is not None:
    _pair = [next(label for label, value in _ex.choices if not (value == _e and type(value) is type(_e))), _ex.shown]
elif isinstance(_e, (list, tuple)):
    _pair = [", ".join(map(_wrong_one, _e)), ", ".join(repr(x) if isinstance(x, float) else _show(x) for x in _e)]
elif isinstance(_e, (set, frozenset)):
    _pair = ["certainly not this", sorted(map(_show, _e))[0]]
else:
    _pair = [_wrong_one(_e), repr(_e) if isinstance(_e, float) else _show(_e)]
print("DRIVE " + _json.dumps(_pair))
"""


def first_exercise(path: Path) -> str:
    """The key of the notebook's first exercise that is not a coding task."""
    from workbench.viz.exercise import Bank

    bank = Bank(path.parent / "solutions" / f"{path.stem}.md")
    keys = [k for c in _code_cells(path) for k in re.findall(r"""\bask\(\s*["']([\w-]+)["']""",
                                                             "".join(c.get("source", "")))]
    return next(k for k in keys if not bank.spec(k).is_task)


def _code_cells(path: Path) -> list:
    try:
        nb = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    return [c for c in nb.get("cells", ()) if c.get("cell_type") == "code"]


def _without_progress(text: str) -> str:
    """stderr text without progress-bar lines (tqdm redraws its bar after carriage returns)."""
    return "\n".join(ln for ln in re.split(r"[\r\n]+", text) if ln.strip() and not PROGRESS.search(ln))


def _first_lines(text: str, n: int = 3) -> str:
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    lines = [ln for ln in text.strip().splitlines() if ln.strip() and not set(ln.strip()) <= {"-"}]
    return " | ".join(lines[:n])[:400]


@pytest.fixture(scope="module")
def browser_run(tmp_path_factory, request):
    started = time.monotonic()
    artifacts = _artifact_dir(request.config)
    print(f"\n[browser] screenshots and executed copies: {artifacts}")
    lab = JupyterLab(tmp_path_factory.mktemp("jupyterlab"), artifacts / "jupyterlab.log")
    try:
        lab.start()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=60_000)
            try:
                context = browser.new_context(viewport=VIEWPORT)
                context.set_default_timeout(60_000)
                yield BrowserRun(lab, context, artifacts, started)
                context.close()
            finally:
                browser.close()
    finally:
        lab.stop()


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks under notebooks/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_in_the_browser(path, browser_run):
    v = browser_run.visit(path)
    assert not v.errors, v.problem()
    assert v.screenshot is not None and v.screenshot.is_file(), f"no screenshot of {path.name}"


def _showing(word: str) -> list:
    return [p for p in NOTEBOOKS if word in p.read_text()]


def test_a_partition_graph_tells_why_a_node_stays_on_the_cpu(browser_run):
    """At least one notebook's graph has a CPU badge whose tooltip reads the reason of its table row."""
    candidates = _showing("op_graph(")
    assert candidates, "no notebook shows viz.op_graph(...)"
    visits = [browser_run.visit(p) for p in candidates]
    read = [(v.name, r) for v in visits for r in v.reasons]
    assert read, "no partition graph showed a reason badge linked to its row:\n" + \
        "\n".join(v.problem() for v in visits)
    name, r = read[0]
    assert r["shown"] and r["reason"], (name, r)
    print(f"[browser] {name}: badge [{r['number']}] reads {r['reason']!r}; row: {r['row']!r}")


def test_the_partition_lab_recuts_when_a_control_changes(browser_run):
    """A notebook shows a PartitionLab; a new 'min nodes' typed in the browser changes its picture."""
    candidates = _showing("PartitionLab(")
    assert candidates, "no notebook shows a PartitionLab"
    visits = [browser_run.visit(p) for p in candidates]
    drove = [v for v in visits if v.lab and "value" in v.lab]
    assert drove, "the partition lab's picture did not change:\n" + "\n".join(v.problem() for v in visits)
    lab = drove[0].lab
    assert lab["before"].is_file() and lab["after"].is_file()
    print(f"[browser] {drove[0].name}: min nodes {lab['value']} recoloured {lab['boxes_recoloured']} boxes; "
          f"{lab['summary']}; pictures {lab['before']} → {lab['after']}")


def test_partition_graphs_and_the_lab_render_text_a_learner_can_read(browser_run):
    """Notebook 05: every text of its graphs and of the lab's pictures at >= MIN_TEXT_PX at the default zoom,
    and the pinned and current lab pictures both in view at 1280 px."""
    path = NOTEBOOK_DIR / "05_partitioning.ipynb"
    v = browser_run.visit(path)
    assert not v.errors, v.problem()
    graphs = v.text_px.get(".jp-OutputArea-output .wb-graph svg text")
    lab = v.text_px.get(".wb-partition-lab .wb-pl-picture svg text")
    assert graphs and lab, f"no graph text measured in {path.name}: {v.text_px}"
    assert graphs["min_px"] >= MIN_TEXT_PX - 0.05 and lab["min_px"] >= MIN_TEXT_PX - 0.05, v.text_px
    assert v.lab and "pinned" in v.lab and v.lab["pinned"]["page_width"] <= 1280
    print(f"[browser] {path.name}: smallest graph text {graphs['min_px']} px of {graphs['texts']}, lab "
          f"{lab['min_px']} px of {lab['texts']}; pinned + current at 1280 px: {v.lab['pinned']['boxes']}")
