# make lab   set up (once), then open JupyterLab on the lessons (student versions, in lessons/)
# make test  set up (once), then run the whole test suite
# make bench run the benchmarks (timed comparisons, printed as tables)
# make docs  build the documentation site (HTML) into docs/_build/html
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
ROOT := $(shell [ "$$(id -u)" = 0 ] && echo yes)
APT_UPDATED := $(VENV)/.apt-updated
# apt waits up to 10 minutes for another apt or dpkg (unattended upgrades) to let go of its lock
APT_WAIT := -o DPkg::Lock::Timeout=600
# Graphviz built for WebAssembly (npm's @viz-js/viz, pinned in js/): the widgets draw a search tree with it
# where dot cannot run (Python in a browser, or no Graphviz installed). Shipped in the package, never fetched.
VIZ := ttt/widgets/static/viz.js

.PHONY: setup lessons lab lite test bench docs dot bwrap chromium bytecode clean

setup: $(STAMP) dot bwrap bytecode $(VIZ)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 10), "ttt needs Python 3.10 or newer"' \
	  || { echo "Python 3.10 or newer is needed (PYTHON=$(PYTHON))."; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The package's bytecode, brought up to date as pip does when it installs a wheel: every process of a
# check (the grader's, the sandboxed kernel's and server's) reads it instead of compiling the package
# again, which it would do each time where PYTHONDONTWRITEBYTECODE is set (about 1 CPU s a check).
bytecode: $(STAMP)
	@$(BIN)/python -m compileall -q ttt grader

# Graphviz's dot renders the search trees. Installed with apt when root; otherwise say how.
dot:
	@command -v dot >/dev/null && exit 0; \
	if [ "$(ROOT)" = yes ] && command -v apt-get >/dev/null; then \
	  echo "Installing Graphviz (dot) with apt-get ..."; \
	  apt-get update -qq $(APT_WAIT) && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz $(APT_WAIT) >/dev/null; \
	else \
	  echo "Graphviz's 'dot' program is missing. Install it, then run make again:"; \
	  echo "  Debian/Ubuntu: sudo apt-get install -y graphviz"; \
	  echo "  macOS:         brew install graphviz"; \
	  echo "  conda:         conda install -c conda-forge graphviz"; \
	  exit 1; \
	fi

$(VIZ): js/package.json js/package-lock.json
	@if command -v npm >/dev/null; then \
	  (cd js && npm ci --silent --no-audit --no-fund) && mkdir -p $(@D) && cp js/node_modules/@viz-js/viz/dist/viz.js $@; \
	else \
	  echo "npm is missing: search trees are drawn only where Graphviz's dot runs (Debian/Ubuntu: sudo apt-get install -y npm)."; \
	fi

# bubblewrap (bwrap) is the sandbox student code runs in when graded. Installed with apt when root;
# otherwise say how (without it the grader refuses to run student code).
bwrap:
	@command -v bwrap >/dev/null && exit 0; \
	if [ "$(ROOT)" = yes ] && command -v apt-get >/dev/null; then \
	  echo "Installing bubblewrap (bwrap) with apt-get ..."; \
	  apt-get update -qq $(APT_WAIT) && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap $(APT_WAIT) >/dev/null; \
	else \
	  echo "bubblewrap's 'bwrap' program is missing: grading student code needs it. Install it:"; \
	  echo "  Debian/Ubuntu: sudo apt-get install -y bubblewrap"; \
	  echo "  Fedora:        sudo dnf install -y bubblewrap"; \
	  echo "  Arch:          sudo pacman -S bubblewrap"; \
	fi

# Chromium drives the browser tests. Installed with apt when root; otherwise those tests fail, saying so.
chromium:
	@command -v chromium >/dev/null && exit 0; \
	if [ "$(ROOT)" = yes ] && command -v apt-get >/dev/null; then \
	  echo "Installing Chromium with apt-get (for the browser tests) ..."; \
	  apt-get update -qq $(APT_WAIT) && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium $(APT_WAIT) >/dev/null \
	    || echo "Chromium could not be installed: the browser tests will fail."; \
	else \
	  echo "Chromium is missing: the browser tests will fail (sudo apt-get install -y chromium)."; \
	fi

# The student versions of the lessons (no solutions, no hidden tests) in lessons/, made from
# notebooks/ by nbgrader the first time; a lesson already there (your work) is never overwritten.
LESSONS := lessons
lessons: setup
	@missing=; for nb in notebooks/*.ipynb; do [ -e $(LESSONS)/$$(basename $$nb) ] || missing=yes; done; \
	if [ -n "$$missing" ]; then \
	  tmp=$$(mktemp -d) && $(BIN)/ttt-grader release --course $$tmp/course >/dev/null && mkdir -p $(LESSONS) && \
	  for nb in $$tmp/course/release/*/*.ipynb; do [ -e $(LESSONS)/$$(basename $$nb) ] || cp $$nb $(LESSONS)/; done; \
	  rm -rf $$tmp; echo "The lessons are in $(LESSONS)/."; \
	fi

# The students' JupyterLab: grader/student_lab/ (on JUPYTER_CONFIG_PATH for this run only) hides nbgrader's
# instructor panels and answers Validate (the visible tests) without holding up the server; an instructor's own JupyterLab is unchanged.
lab: lessons
	@$(BIN)/ttt-grader check --prepare || echo "The lessons' checks were not prepared: each lesson's first check releases it."
	JUPYTER_CONFIG_PATH="$(CURDIR)/grader/student_lab$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH}" \
	  $(BIN)/jupyter lab $(LESSONS)/ $(if $(ROOT),--allow-root,)

# The lessons' browser-only site (JupyterLite, the Pyodide kernel): lite/build.py says what is in it.
# Its own virtual environment and Pyodide's core from npm; never part of the set-up above.
LITE_VENV := .venv-lite
lite: lessons
	@command -v npm >/dev/null || { echo "npm is needed for make lite (Debian: apt-get install npm)."; exit 1; }
	@[ -x $(LITE_VENV)/bin/python ] || $(PYTHON) -m venv $(LITE_VENV)
	$(LITE_VENV)/bin/python -m pip install --quiet -r lite/requirements.txt
	cd lite && npm ci --silent --no-audit --no-fund
	$(LITE_VENV)/bin/python lite/build.py

test: setup chromium
	$(BIN)/python -m pytest -n 2 --dist loadfile

# benchmarks/peers.py measures the big boards against OpenSpiel: the peers extra, installed here only
bench: setup
	$(BIN)/python -m pip install --quiet -e '.[peers]'
	@for b in benchmarks/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

# The documentation site: Markdown pages and the API pages made from the docstrings, any warning an error.
docs: $(STAMP) dot
	$(BIN)/sphinx-build -b html -W --keep-going docs docs/_build/html

clean:
	rm -rf $(VENV) $(LITE_VENV) .pytest_cache course build dist *.egg-info docs/_build _site lite/node_modules js/node_modules $(VIZ)
