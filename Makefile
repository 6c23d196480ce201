# Two commands do everything on a fresh clone:
#   make book   build the static website into _build/html
#   make test   run every check: lint (ruff on the library, tests and tools; mypy on the
#               library), unit tests and doctests, nbval over every chapter, the strict
#               site build and the PDF, a headless-Chromium test of the site, and the
#               Colab bootstrap test; each step's time and a summary at the end
# Both create .venv and install what they need on the way (Python 3.11+, make, git,
# and the package registries: PyPI, and Debian for chromium).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export PIP_DISABLE_PIP_VERSION_CHECK := 1
export PYTHONHASHSEED := 0
export PYDEVD_DISABLE_FILE_VALIDATION := 1
export JUPYTER_PLATFORM_DIRS := 1

.PHONY: book test test-site-lane test-colab-lane test-portable lint unit chromium refresh clean bench bench-roofline student pdf

book: $(STAMP)
	rm -rf _build/html
	$(BIN)/jupyter-book build . -W -n --keep-going
	@echo "The book is at file://$(CURDIR)/_build/html/index.html"

# `make test` times every step (tools/steps.sh) and closes with a summary: each step's wall-clock
# and CPU seconds, its passed/skipped/failed counts (from pytest's JUnit reports in $(REPORTS)/)
# and the total. After the install, three lanes share the cores, since none needs another's
# results (the site is built from the notebooks' stored outputs, which nbval only reads):
#   - in the foreground: lint, the unit tests and doctests, nbval;
#   - in the background: the strict site build and the PDF, then the browser, HTML and PDF
#     tests of that build (its steps recorded one by one);
#   - in the background: the Colab bootstrap (a fresh venv, a pip install and every reader
#     notebook), then nbval of one chapter (NBVAL_BESIDE, below).
# Each is mostly one process on one core and the site lane waits on the browser, so on a
# 2-core machine the cores stay busy until the end. A background lane's output is shown when
# it is waited for; one that fails is reported after the foreground step it finished beside.
# LLMPHYS_STRICT=1 makes a missing input (the built site, the source documents in
# ../shared/seeds or $$LLMPHYS_SEEDS) fail a test instead of skipping it.
REPORTS := .test-reports
STEPS := REPORTS=$(REPORTS) tools/steps.sh
PYTEST := env LLMPHYS_STRICT=1 $(BIN)/python -m pytest -q -p no:cacheprovider -rs
test:
	@$(STEPS) begin
	@$(STEPS) run install "0/6 install: .venv, the book's packages, chromium, pdftotext" \
		$(MAKE) --no-print-directory $(STAMP) chromium
	@$(STEPS) start colab "6/6 and 3/6: the Colab bootstrap, and nbval of $(NBVAL_BESIDE)" \
		$(MAKE) --no-print-directory test-colab-lane
	@$(STEPS) start site "4/6 and 5/6: the site build, the PDF and their tests" \
		$(MAKE) --no-print-directory test-site-lane
	@$(STEPS) run lint "1/6 lint: ruff (library, tests, tools) and mypy (library)" \
		$(MAKE) --no-print-directory lint
	@$(STEPS) run unit "2/6 unit tests, data schema tests and doctests" \
		$(PYTEST) --junitxml=$(REPORTS)/unit.xml --durations=10 tests lib/llmphys \
		--ignore=tests/site --ignore=tests/bootstrap
	@$(STEPS) run nbval "3/6 nbval: every other chapter against its stored outputs" \
		$(NBVAL) --junitxml=$(REPORTS)/nbval.xml chapters/ $(NBVAL_BESIDE:%=--ignore=%)
	@$(STEPS) wait site
	@$(STEPS) wait colab
	@$(STEPS) summary

# make test's third lane: the Colab lane is the shortest of the three (on two cores), so it also
# runs nbval on NBVAL_BESIDE, which evens the lanes out; nbval on every chapter is the two nbval
# steps together.
NBVAL := $(PYTEST) --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
	--durations=5
NBVAL_BESIDE := chapters/06_economics.ipynb chapters/05_scaling_laws.ipynb chapters/hardware_tour.ipynb
test-colab-lane:
	@$(STEPS) step bootstrap "6/6 Colab bootstrap and reader notebooks, fresh venv" \
		$(PYTEST) --junitxml=$(REPORTS)/bootstrap.xml --durations=5 tests/bootstrap
	@$(STEPS) step nbval-beside "3/6 nbval: $(NBVAL_BESIDE) against its stored outputs" \
		$(NBVAL) --junitxml=$(REPORTS)/nbval-beside.xml $(NBVAL_BESIDE)

# make test's second lane (run it through `make test`, which starts it in the background).
test-site-lane:
	@$(STEPS) step book "4/6 site build (warnings are errors) and the PDF" \
		bash -c '$(MAKE) --no-print-directory book && $(BIN)/python tools/make_pdf.py'
	@$(STEPS) step site "5/6 the built site in a browser, its HTML and the PDF" \
		$(PYTEST) --junitxml=$(REPORTS)/site.xml --durations=5 tests/site

# The student edition: every chapter as a Colab/JupyterLab notebook without the solutions (the
# exercises and the Implement exercises' check cells stay), into student/chapters/ (not
# committed; tests/test_student_edition.py proves nothing of a solution leaks into it).
student: $(STAMP)
	$(BIN)/python tools/reader_edition.py --student --out student
	@echo "The student edition is in $(CURDIR)/student/chapters/ (hand-out: see the instructor guide)"

# The printable book: every page of the built site in one PDF (Debian's Chromium through
# Playwright), with contents, page numbers, chapter-numbered figures and exercises, the version
# and build date; solutions omitted. Builds the site first if there is none.
pdf: $(STAMP) chromium
	test -f _build/html/index.html || $(MAKE) --no-print-directory book
	$(BIN)/python tools/make_pdf.py

# Lint and type check, configured in lib/pyproject.toml ([tool.ruff] and [tool.mypy]); ruff.toml
# at the root extends it, so tests/ and tools/ are checked with the library's rules (without it
# ruff falls back to its own defaults there). Seconds, so it runs first. Formatting is checked
# on the library only.
lint: $(STAMP)
	$(BIN)/ruff check lib/llmphys tests tools
	$(BIN)/ruff format --check lib/llmphys
	$(BIN)/mypy --config-file lib/pyproject.toml lib/llmphys
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml

# Unit tests, the registries' schema tests and every docstring's example (plain `pytest`
# runs these too, and the site and bootstrap tests when their inputs are there).
unit: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider -rs tests lib/llmphys \
		--ignore=tests/site --ignore=tests/bootstrap

# nbval again with numpy's SIMD dispatch held to AVX2 (X86_V3; numpy 2.x names its AVX-512
# groups X86_V4 and AVX512_ICL, and ignores names it does not know) and OpenBLAS on its Haswell
# kernels, standing in for another CPU: the stored outputs must pass on both (issue 13;
# tests/test_notebook_outputs.py keeps their digits few enough). Not in `make test`: it
# re-executes every chapter again (about 5 minutes on 2 cores).
PORTABLE_ENV := NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" OPENBLAS_CORETYPE=Haswell
test-portable: $(STAMP)
	@$(PORTABLE_ENV) $(BIN)/python -c 'import threadpoolctl; \
		from numpy._core._multiarray_umath import __cpu_features__ as f, __cpu_dispatch__ as d; \
		print("== nbval with numpy SIMD dispatch", [x for x in d if f.get(x)], \
		      "and OpenBLAS kernels", [i.get("architecture") for i in threadpoolctl.threadpool_info()])'
	$(PORTABLE_ENV) $(BIN)/python -m pytest -q -p no:cacheprovider --nbval --nbval-current-env \
		--nbval-sanitize-with tests/nbval_sanitize.cfg chapters/

# --no-compile: pip would byte-compile every module of every package (half the install's CPU,
# on one core, before anything else can start); Python compiles, and caches, only the modules
# that are imported, the first time they are.
$(STAMP): requirements.txt lib/pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is required"'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "== installing the book's Python packages into $(VENV) (log: $(VENV)/pip.log)"
	$(BIN)/python -m pip install -q --upgrade pip > $(VENV)/pip.log 2>&1
	$(BIN)/python -m pip install -q --no-compile -r requirements.txt >> $(VENV)/pip.log 2>&1 \
		|| { tail -30 $(VENV)/pip.log; exit 1; }
	$(BIN)/python -m pip install -q --no-compile -e ./lib >> $(VENV)/pip.log 2>&1 \
		|| { tail -30 $(VENV)/pip.log; exit 1; }
	touch $(STAMP)

# Debian's chromium for the browser test and the PDF (never a browser download by a test
# tool), and poppler-utils, whose pdftotext reads the PDF back in tests/site/test_pdf.py.
chromium:
	@{ command -v chromium && command -v pdftotext; } >/dev/null || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium poppler-utils \
			>/dev/null; }

# Authors: re-execute every chapter in place after changing it or the library, so the
# stored outputs (which nbval checks and the site shows) are the library's numbers; then
# regenerate the reader edition (reader/chapters/), whose prose carries those numbers.
refresh: $(STAMP)
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace \
		--ExecutePreprocessor.timeout=120 --ExecutePreprocessor.kernel_name=python3 \
		--ExecutePreprocessor.record_timing=False chapters/*.ipynb
	$(BIN)/python tools/normalize_notebooks.py chapters/*.ipynb
	$(BIN)/python tools/reader_edition.py

# Not part of `make test`: times the pipeline's kernels against datasketch and Hugging Face
# tokenizers at three sizes each (tens of minutes on two cores) and rewrites
# data/bench/pipeline.toml, which the data chapter reads; and measures the roofline at one
# thread and at all, with its seven held-out kernels, into data/bench/roofline.toml (with the
# machine named), which chapter 4 quotes (`make bench-roofline` alone: a minute or two, and
# about 3 GB of memory). Run it on a quiet machine, then re-execute chapter 4 (it prints the
# record in a cell nbval compares).
bench: $(STAMP)
	$(BIN)/python tools/bench.py

bench-roofline: $(STAMP)
	$(BIN)/python tools/bench.py --only roofline

clean:
	rm -rf _build _offline .pytest_cache .mypy_cache .ruff_cache $(REPORTS)
