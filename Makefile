# tkgqa — two entry points: `make demo` (install + answer demo questions offline) and `make test`.
# Each has its own environment, so one never changes the other:
#   make demo  -> .venv       tkgqa alone (core dependencies: no torch, no LLM client); the demo runs offline
#   make test  -> .venv-test  tkgqa with every extra in TEST_EXTRAS (torch, sentence-transformers, llama-cpp,
#                             Ray, DuckDB, the MCP SDK, MkDocs…); `make lint`, `make docs`, `make bench` use it too
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TEST_VENV ?= .venv-test
TBIN := $(TEST_VENV)/bin
# Extras installed for the test suite; `local` compiles llama-cpp-python from source (~5 min on 2 cores,
# then pip's wheel cache makes reinstalls fast).
TEST_EXTRAS ?= dev,llm,service,retrieval,local,lpkg,distributed,store,mcp,docs
PYTEST_ARGS ?=

.PHONY: demo test install-core install-test lint typecheck bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(TBIN)/python:
	$(PYTHON) -m venv $(TEST_VENV)
	$(TBIN)/python -m pip install -q --upgrade pip

install-core: $(BIN)/python
	$(BIN)/pip install -q -e .

# The example plugin of the tests and the example method package (examples/method_plugin) go to their own
# folder ($(TEST_PLUGINS)), which only the test suite puts on the path (tests/conftest.py): they never show up
# in the user's own `tkgqa` or server.
TEST_PLUGINS := .test-plugins

install-test: $(TBIN)/python
	@echo "make test: installing tkgqa[$(TEST_EXTRAS)] into $(TEST_VENV) (not $(VENV), which make demo uses)"
	$(TBIN)/pip install -q -e ".[$(TEST_EXTRAS)]"
	$(TBIN)/pip uninstall -q -y tkgqa-example-plugin tkgqa-method-example 2>/dev/null || true
	$(TBIN)/pip install -q --no-deps --upgrade --target $(TEST_PLUGINS) tests/plugins/tkgqa_example_plugin \
	  examples/method_plugin

demo: install-core
	$(BIN)/tkgqa demo

test: install-test
	@$(TBIN)/python -m pytest $(PYTEST_ARGS); rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest collected no tests: treating as a failure" >&2; fi; exit $$rc

lint: install-test
	$(TBIN)/ruff check src tests bench
	$(TBIN)/ruff format --check src tests bench
	$(TBIN)/mypy
	$(TBIN)/lint-imports
	$(TBIN)/python tests/core/import_cycles.py

bench: install-test
	$(TBIN)/python bench/kg_ops.py

# The documentation site (mkdocs.yml, docs/): warnings are errors; the site goes to site/.
docs: install-test
	NO_MKDOCS_2_WARNING=1 $(TBIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) $(TEST_VENV) $(TEST_PLUGINS) site .pytest_cache .mypy_cache .ruff_cache
