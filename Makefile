# Two commands for a fresh machine:
#   make lab    set everything up and open JupyterLab on the notebooks
#   make test   set everything up and run the whole test suite (CI runs `make lint` and this)
VENV ?= .venv
PY := $(VENV)/bin/python
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

# `make lab` serves notebooks/ and opens the tour (notebook 00) when it is there; the URL it prints opens it too
LAB_OPEN := $(if $(wildcard notebooks/00_tour.ipynb),--LabApp.default_url=/lab/tree/00_tour.ipynb,) notebooks/
# the browser test's screenshots and executed notebooks (tests/browser)
BROWSER_ARTIFACTS := .pytest_cache/d/browser-artifacts

.PHONY: lab test lint corpus kernels graphviz chromium bench clean

$(VENV)/bin/python:
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed-%: pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e ".[$*]"
	touch $@

# graphviz's `dot` renders the graphs; install it when missing and we can (root + apt)
graphviz:
	@command -v dot >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && apt-get install -y -qq graphviz >/dev/null); \
	  else echo "note: graphviz 'dot' is missing; install it (e.g. apt-get install graphviz) to render graphs"; fi; }

# Debian's chromium runs the notebooks in a real browser (tests/browser, driven by the `playwright`
# package of the test extras; no browser is ever downloaded); without it that test skips
chromium:
	@[ -x /usr/bin/chromium ] || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium for the browser test (apt-get install chromium)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || echo "note: apt-get could not install chromium: the browser test (tests/browser) will skip"; \
	  else echo "note: /usr/bin/chromium is missing and cannot be installed here (needs root and apt-get):" \
	    "the browser test (tests/browser) will skip"; fi; }

corpus: $(VENV)/.installed-lab
	$(PY) -m workbench.corpus

# the numba kernels compiled ahead of time into one native library (no numba at run time; ~1.5 minutes
# from an empty numba cache, ~40 s with a warm one; skipped when built for these sources already)
kernels: $(VENV)/.installed-lab corpus
	$(VENV)/bin/workbench precompile --if-needed --models sample_models $(if $(wildcard ../shared/models),--models ../shared/models,) || echo "note: no precompiled kernel library (see above); numba compiles the kernels instead"

lab: $(VENV)/.installed-lab graphviz corpus kernels
	$(VENV)/bin/jupyter lab $(ROOT_FLAG) $(LAB_OPEN)

# the whole suite on two workers, the 15 slowest tests listed at the end
test: $(VENV)/.installed-test $(VENV)/.installed-lab graphviz chromium corpus kernels
	@rm -rf $(BROWSER_ARTIFACTS); echo "$(PY) -m pytest -n 2 --dist loadfile --durations=15"; \
	  $(PY) -m pytest -n 2 --dist loadfile --durations=15; status=$$?; \
	  if [ -d $(BROWSER_ARTIFACTS) ]; then echo "browser test screenshots: $(CURDIR)/$(BROWSER_ARTIFACTS)"; fi; \
	  exit $$status

# pyflakes, pycodestyle and import order over everything that is Python (configuration in pyproject.toml)
lint: $(VENV)/.installed-test
	$(VENV)/bin/ruff check workbench tests benchmarks dev notebooks

bench: $(VENV)/.installed-test $(VENV)/.installed-bench corpus
	$(PY) benchmarks/bench_parse.py

# the static site: the eight notebooks executed and rendered with their outputs, README.md and docs/*.md
# rendered to HTML (dev/build_docs.py; nbconvert and mistune come with the lab extras); open build/docs/index.html
.PHONY: docs
docs: $(VENV)/.installed-lab graphviz corpus kernels
	$(PY) dev/build_docs.py --out build/docs

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
