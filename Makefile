# Two commands do all the set-up on a fresh machine:
#   make report   virtual environment, install, then the comparison of the example workspace
#   make test     the same install, then the test suite on every core (pytest-xdist), the long checks aside
#   make test-slow  the long end-to-end checks (.ci/run runs both)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install report test test-slow format benchmark clean

install: $(STAMP)

# What the installers print goes to $(LOG), shown only when a step fails: `make report` prints
# procure's own lines.
LOG := $(VENV).install.log
QUIET = >>$(LOG) 2>&1 || { cat $(LOG); echo "install failed: the log above is in $(LOG)"; exit 1; }

$(STAMP): pyproject.toml
	@: > $(LOG)
	@# WeasyPrint draws PDFs with Pango and subsets fonts with HarfBuzz (installed here if missing)
	@if ! ldconfig -p 2>/dev/null | grep -q libpangoft2-1.0 || ! ldconfig -p 2>/dev/null | grep -q libharfbuzz-subset; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    (apt-get update -qq && apt-get install -y -qq libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0) >>$(LOG) 2>&1 \
	      || echo "note: could not install Pango/HarfBuzz; PDF output may fail (HTML still works)"; \
	  else echo "note: PDF output needs: apt-get install libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0"; fi; fi
	@# The workbook test recalculates compare's xlsx with LibreOffice's headless Calc (installed here if missing)
	@if ! command -v soffice >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    (apt-get update -qq && apt-get install -y -qq --no-install-recommends libreoffice-calc-nogui) >>$(LOG) 2>&1 \
	      || echo "note: could not install LibreOffice; the workbook recalculation test will not run"; \
	  else echo "note: the workbook recalculation test needs: apt-get install libreoffice-calc-nogui"; fi; fi
	@# The live import test starts a Prometheus server on 127.0.0.1, its storage backfilled by promtool (installed here if missing)
	@if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    (apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus) >>$(LOG) 2>&1 \
	      || echo "note: could not install Prometheus; the live actuals import test will not run"; \
	  else echo "note: the live actuals import test needs: apt-get install prometheus"; fi; fi
	@# The browser test opens the HTML report in Debian's Chromium, driven by Playwright (installed here if missing;
	@# Playwright never downloads a browser of its own: tests/test_browser.py)
	@if ! command -v chromium >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    (apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium) >>$(LOG) 2>&1 \
	      || echo "note: could not install Chromium; the browser test will not run"; \
	  else echo "note: the browser test needs: apt-get install chromium"; fi; fi
	@$(PYTHON) -m venv $(VENV) $(QUIET)
	@$(BIN)/python -m pip install --quiet --upgrade pip $(QUIET)
	@$(BIN)/python -m pip install --quiet -e '.[test]' $(QUIET)
	@# procure's compiled modules, written once here: where PYTHONDONTWRITEBYTECODE is set every command
	@# would otherwise compile its 60 modules again (an editable install compiles nothing itself)
	@$(BIN)/python -m compileall -q procure $(QUIET)
	@touch $(STAMP)

report: install
	@$(BIN)/procure report --out comparison.pdf
	@$(BIN)/procure report --board --out board.pdf

benchmark: install
	$(BIN)/python benchmarks/bench_floors.py --rfp 1000
	$(BIN)/python benchmarks/bench_speed.py --offers 1000 --draws 10000
	$(BIN)/python benchmarks/bench_scale.py --sizes 10,100,1000,10000
	$(BIN)/python benchmarks/bench_report.py --example
	$(BIN)/python benchmarks/bench_report.py --example --board
	$(BIN)/python benchmarks/bench_report.py --offers 50
	$(BIN)/python benchmarks/bench_report.py --pathological
	$(BIN)/python benchmarks/bench_report.py --example --html
	$(BIN)/python benchmarks/bench_plan.py --offers 50 --scenarios 500 --months 24

# One run on every core: the costliest modules (PDF rendering, subprocesses, marked slow) go out first and
# the quick tests fill the gaps (tests/conftest.py); `pytest -m "not slow"` is the quick run while working.
# The long end-to-end checks (the 50-offer layout, kill and concurrency loops, property tests at full
# example counts, LibreOffice recalculating the workbook: tests/conftest.py LONG) are marked long and run by
# `make test-slow`. benchmarks/bench_suite.py times either as it runs here, with the machine's load.
# ruff lints and checks the layout of every Python file first (pyproject.toml [tool.ruff]; `make format` lays them out).
test: install
	$(BIN)/ruff check --quiet .
	$(BIN)/ruff format --check --quiet .
	$(BIN)/python -m pytest -n auto --dist loadscope -m "not long"

format: install
	$(BIN)/ruff check --fix --quiet .
	$(BIN)/ruff format --quiet .

test-slow: install
	$(BIN)/python -m pytest -n auto --dist loadscope -m long

clean:
	rm -rf $(VENV) $(LOG) build *.egg-info comparison.pdf board.pdf
