# tkgqa — two entry points: `make demo` (install + answer demo questions offline) and `make test`.
# Each has its own environment, so one never changes the other:
#   make demo  -> .venv       tkgqa alone (core dependencies: no torch, no LLM client); the demo runs offline
#   make test  -> .venv-test  tkgqa with every extra in TEST_EXTRAS (torch, sentence-transformers, llama-cpp,
#                             Ray, DuckDB, the MCP SDK, MkDocs…); `make docs` and `make bench` use it too
#   make lint  -> .venv-lint  tkgqa with the `lint` extra only (ruff, mypy, import-linter: no llama-cpp compile)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TEST_VENV ?= .venv-test
TBIN := $(TEST_VENV)/bin
LINT_VENV ?= .venv-lint
LBIN := $(LINT_VENV)/bin
# Extras installed for the test suite; `local` compiles llama-cpp-python from source (~5 min on 2 cores,
# then pip's wheel cache makes reinstalls fast).
TEST_EXTRAS ?= dev,llm,service,retrieval,local,lpkg,distributed,store,mcp,docs
PYTEST_ARGS ?=
# The test suite's worker processes (pytest-xdist): one per CPU core; PYTEST_WORKERS=0 runs it in one process.
PYTEST_WORKERS ?= auto

.PHONY: demo test install-core install-test install-lint lint typecheck bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(TBIN)/python:
	$(PYTHON) -m venv $(TEST_VENV)
	$(TBIN)/python -m pip install -q --upgrade pip

$(LBIN)/python:
	$(PYTHON) -m venv $(LINT_VENV)
	$(LBIN)/python -m pip install -q --upgrade pip

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

# What `make lint` needs: the package and the `lint` extra (ruff, mypy, import-linter, the typed libraries
# mypy reads) — not the test extras, so linting never compiles llama-cpp-python first.
install-lint: $(LBIN)/python
	$(LBIN)/pip install -q -e ".[lint]"

demo: install-core
	$(BIN)/tkgqa demo

# the benchmark data the tests read by name (tests that need it skip when it is absent)
TKGQA_DATA ?= $(or $(TKGQA_SHARED_DATA),$(abspath ../shared/data))

test: install-test
	@TKGQA_DATA="$(TKGQA_DATA)" $(TBIN)/python -m pytest -n $(PYTEST_WORKERS) --dist worksteal $(PYTEST_ARGS); rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest collected no tests: treating as a failure" >&2; fi; exit $$rc

# Also the budgets of pyproject.toml: function complexity/branches/statements (ruff C901, PLR0912, PLR0915)
# and the stricter mypy settings; the duplicates budget (tests/duplicates_budget.py, issue #30).
lint: install-lint
	$(LBIN)/ruff check --no-cache src tests bench  # no cache: a stale one once hid what a clean CI clone found
	$(LBIN)/ruff format --check src tests bench
	$(LBIN)/mypy
	$(LBIN)/lint-imports
	$(LBIN)/python tests/import_cycles.py
	$(LBIN)/python tests/duplicates_budget.py  # pairs of repeated lines in src/ (skipped without `duplicates`)

bench: install-test
	$(TBIN)/python bench/kg_ops.py

# The documentation site (mkdocs.yml, docs/): warnings are errors; the site goes to site/.
docs: install-test
	NO_MKDOCS_2_WARNING=1 $(TBIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) $(TEST_VENV) $(LINT_VENV) $(TEST_PLUGINS) site .pytest_cache .mypy_cache .ruff_cache
