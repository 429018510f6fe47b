# tkgqa — two entry points: `make demo` (install + answer demo questions offline) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Extras installed for the test suite; `local` compiles llama-cpp-python from source (~5 min on 2 cores,
# then pip's wheel cache makes reinstalls fast).
TEST_EXTRAS ?= dev,llm,service,retrieval,local,lpkg,distributed,store,mcp,docs
PYTEST_ARGS ?=

.PHONY: demo test install-core install-test lint typecheck bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

install-core: $(BIN)/python
	$(BIN)/pip install -q -e .

# The example plugin of the tests and the example method package (examples/method_plugin) go to their own
# folder ($(TEST_PLUGINS)), which only the test suite puts on the path (tests/conftest.py): they never show up
# in the user's own `tkgqa` or server.
TEST_PLUGINS := .test-plugins

install-test: $(BIN)/python
	$(BIN)/pip install -q -e ".[$(TEST_EXTRAS)]"
	$(BIN)/pip uninstall -q -y tkgqa-example-plugin tkgqa-method-example 2>/dev/null || true
	$(BIN)/pip install -q --no-deps --upgrade --target $(TEST_PLUGINS) tests/plugins/tkgqa_example_plugin \
	  examples/method_plugin

demo: install-core
	$(BIN)/tkgqa demo

test: install-test
	@$(BIN)/python -m pytest $(PYTEST_ARGS); rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest collected no tests: treating as a failure" >&2; fi; exit $$rc

lint: install-test
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python tests/core/import_cycles.py

bench: install-test
	$(BIN)/python bench/kg_ops.py

clean:
	rm -rf $(VENV) $(TEST_PLUGINS) .pytest_cache .mypy_cache .ruff_cache
