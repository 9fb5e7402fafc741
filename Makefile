# Two commands for a fresh machine:
#   make lab    set everything up and open JupyterLab on the notebooks
#   make test   set everything up and run the whole test suite (CI runs this)
VENV ?= .venv
PY := $(VENV)/bin/python
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: lab test corpus kernels graphviz bench clean

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

corpus: $(VENV)/.installed-lab
	$(PY) -m workbench.corpus

# the numba kernels compiled ahead of time into one native library (no numba at run time; a few
# seconds with a warm numba cache, ~2 minutes cold; skipped when built for these sources already)
kernels: $(VENV)/.installed-lab corpus
	$(VENV)/bin/workbench precompile --if-needed || echo "note: no precompiled kernel library (see above); numba compiles the kernels instead"

lab: $(VENV)/.installed-lab graphviz corpus kernels
	$(VENV)/bin/jupyter lab $(ROOT_FLAG) notebooks/

test: $(VENV)/.installed-test $(VENV)/.installed-lab graphviz corpus kernels
	$(PY) -m pytest -n 2 --dist loadfile

bench: $(VENV)/.installed-test corpus
	$(PY) benchmarks/bench_parse.py

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
