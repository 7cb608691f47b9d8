# Two commands do all the set-up on a fresh machine:
#   make report   virtual environment, install, then the comparison of the example workspace
#   make test     the same install, then the whole test suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install report test benchmark clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

report: install
	$(BIN)/procure compare --format markdown --out comparison.md
	@echo "wrote comparison.md"

test: install
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) build *.egg-info comparison.md comparison.pdf board.pdf
