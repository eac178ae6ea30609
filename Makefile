# The two commands of the README: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: run test lint setup setup-test bench clean firmware

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

setup: $(BIN)/python
	$(BIN)/pip install --quiet -e .

setup-test: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'

## run: set up and start the service with simulated pads
run: setup
	$(BIN)/tabletop serve --pads sim

## lint: ruff and mypy with the settings in pyproject.toml (make test runs them first)
lint: setup-test
	$(BIN)/ruff check .
	$(BIN)/mypy

## test: set up, lint, and run the whole test suite
test: lint
	$(BIN)/python -m pytest -ra $(PYTEST_ARGS)

## bench: run every benchmark under bench/
bench: setup-test
	$(BIN)/python -m bench

firmware:
	$(MAKE) -C firmware

clean:
	rm -rf $(VENV) build *.egg-info
