# Two commands do all the set-up on a fresh machine:
#   make report   virtual environment, install, then the comparison of the example workspace
#   make test     the same install, then the whole test suite, on every core (pytest-xdist)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install report test benchmark clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@# WeasyPrint draws PDFs with Pango and subsets fonts with HarfBuzz (installed here if missing)
	@if ! ldconfig -p 2>/dev/null | grep -q libpangoft2-1.0 || ! ldconfig -p 2>/dev/null | grep -q libharfbuzz-subset; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    (apt-get update -qq && apt-get install -y -qq libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 >/dev/null) \
	      || echo "note: could not install Pango/HarfBuzz; PDF output may fail (HTML still works)"; \
	  else echo "note: PDF output needs: apt-get install libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0"; fi; fi
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

report: install
	$(BIN)/procure report --out comparison.pdf
	$(BIN)/procure report --board --out board.pdf

benchmark: install
	$(BIN)/python benchmarks/bench_speed.py --offers 1000 --draws 10000
	$(BIN)/python benchmarks/bench_report.py --offers 50
	$(BIN)/python benchmarks/bench_report.py --pathological
	$(BIN)/python benchmarks/bench_plan.py --offers 50 --scenarios 500 --months 24

test: install
	$(BIN)/python -m pytest -n auto --dist loadscope -m "not slow"
	@# PDF rendering, subprocesses, property tests, kill-and-concurrency loops: in their own step
	$(BIN)/python -m pytest -n auto --dist loadscope -m slow

clean:
	rm -rf $(VENV) build *.egg-info comparison.pdf board.pdf
