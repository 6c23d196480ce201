# Two commands do everything on a fresh clone:
#   make book   build the static website into _build/html
#   make test   run every check: unit tests and doctests, nbval over every chapter,
#               the strict site build, a headless-Chromium test of the site, and the
#               Colab bootstrap test
# Both create .venv and install what they need on the way (Python 3.11+, make, git,
# and the package registries: PyPI, npm for the offline widget manager, Debian for chromium).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
WIDGETS := _offline/widgets/embed-amd.js
export PIP_DISABLE_PIP_VERSION_CHECK := 1
export PYTHONHASHSEED := 0
export PYDEVD_DISABLE_FILE_VALIDATION := 1
export JUPYTER_PLATFORM_DIRS := 1

.PHONY: book test unit nbval site-build site-test bootstrap-test chromium refresh clean bench

book: $(STAMP) $(WIDGETS)
	rm -rf _build/html
	$(BIN)/jupyter-book build . -W -n --keep-going
	@echo "The book is at file://$(CURDIR)/_build/html/index.html"

test: $(STAMP) $(WIDGETS) chromium
	@echo "== 1/5 unit tests, data schema tests and doctests"
	$(BIN)/python -m pytest -q -p no:cacheprovider --doctest-modules tests lib/llmphys \
		--ignore=tests/site --ignore=tests/bootstrap
	@echo "== 2/5 nbval: re-execute every chapter and compare with its stored outputs"
	$(BIN)/python -m pytest -q -p no:cacheprovider --nbval --nbval-current-env \
		--nbval-sanitize-with tests/nbval_sanitize.cfg --durations=0 chapters/
	@echo "== 3/5 site build, warnings as errors"
	$(MAKE) --no-print-directory book
	@echo "== 4/5 + 5/5 browser test of the built site; Colab bootstrap in a fresh venv"
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/site tests/bootstrap

$(STAMP): requirements.txt lib/pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is required"'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "== installing the book's Python packages into $(VENV) (log: $(VENV)/pip.log)"
	$(BIN)/python -m pip install -q --upgrade pip > $(VENV)/pip.log 2>&1
	$(BIN)/python -m pip install -q -r requirements.txt >> $(VENV)/pip.log 2>&1 \
		|| { tail -30 $(VENV)/pip.log; exit 1; }
	$(BIN)/python -m pip install -q -e ./lib >> $(VENV)/pip.log 2>&1 \
		|| { tail -30 $(VENV)/pip.log; exit 1; }
	touch $(STAMP)

# The ipywidgets HTML manager and require.js, served from the site itself so that
# widgets render on the static pages without a CDN (the npm registry is reachable).
$(WIDGETS):
	@command -v npm >/dev/null || { echo "npm is needed once to fetch the widget manager"; exit 1; }
	rm -rf _offline/widgets _offline/tmp && mkdir -p _offline/widgets _offline/tmp
	cd _offline/tmp && npm pack --silent @jupyter-widgets/html-manager@1.0.6 requirejs@2.3.7 >/dev/null
	cd _offline/tmp && for f in *.tgz; do tar xzf $$f; done
	cp -r _offline/tmp/package/dist/. _offline/widgets/
	cp _offline/tmp/package/require.js _offline/widgets/require.js
	rm -rf _offline/tmp

# Debian's chromium for the browser test (never a browser download by a test tool).
chromium:
	@command -v chromium >/dev/null || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

# Authors: re-execute every chapter in place after changing it or the library, so the
# stored outputs (which nbval checks and the site shows) are the library's numbers.
refresh: $(STAMP)
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace \
		--ExecutePreprocessor.timeout=120 --ExecutePreprocessor.kernel_name=python3 \
		--ExecutePreprocessor.record_timing=False chapters/*.ipynb
	$(BIN)/python tools/normalize_notebooks.py chapters/*.ipynb

# Not part of `make test`: times the pipeline's kernels against datasketch and Hugging Face
# tokenizers at three sizes each (tens of minutes on two cores) and rewrites
# data/bench/pipeline.toml, which the data chapter reads. Run it on a quiet machine.
bench: $(STAMP)
	$(BIN)/python tools/bench.py

clean:
	rm -rf _build _offline .pytest_cache
