# Two commands set everything up on a fresh machine (no GPU needed):
#   make demo   - create .venv if missing, install the core package, PyAV for the video tasks and
#                 latex2sympy2_extended for MathVision (no torch, no transformers: the demo runs the `random`
#                 baseline), run every benchmark folder's demo tasks (its README card's `demo:`) on the bundled
#                 sample data with the `random` baseline (and random chance-level judge), build the run's view and the leaderboard that links to it
#   make test   - create .venv if missing, install everything (torch + torchvision, transformers, datasets, plots, stats, evaluate, captions,
#                 the Anthropic and Gemini SDKs, the trackers, the docs site, test tools, plus the vLLM CPU venv and
#                 Chromium for the browser test), run all tests
#   make test-fast - the tests not marked slow (docs/contributors/tests.md); make docs - the site, strictly
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# two install stamps: the core package (what the demo needs) and everything (what the tests need)
DEMO_STAMP := $(VENV)/.demo-installed
STAMP := $(VENV)/.mmtasks-installed

.PHONY: demo test test-fast lint docs install install-demo vllm-venv browser clean

$(DEMO_STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --no-compile --disable-pip-version-check -e '.[video,math]'
	touch $(DEMO_STAMP)

$(STAMP): pyproject.toml $(DEMO_STAMP)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch and torchvision as a matching pair (the Qwen2-VL processor needs torchvision; PyPI's
	# torchvision fails to import beside a torch it was not built for). pip takes both from this
	# machine's local wheel folder; the plain `torch` requirement would download a multi-GB build.
	$(PY) -m pip install -q torch==2.14.1 torchvision==0.29.1
	$(PY) -m pip install -q -e '.[hf,datasets,plot,stats,evaluate,video,captions,math,test,anthropic,gemini,tokens,trackers,docs]'
	# bytecode for every installed module, the ones the demo install left uncompiled (--no-compile:
	# the openai SDK and its HTTP stack) too: the suite starts many Python processes, and where
	# PYTHONDONTWRITEBYTECODE is set each compiled them again (0.4 s for each that imports the SDK). A module that
	# does not compile (a package's Python 2 fixture) only keeps its source: not an install error.
	$(PY) -m compileall -q -j 0 $$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])') > /dev/null || true
	touch $(STAMP)

install-demo: $(DEMO_STAMP)

install: $(STAMP)

# the tasks and groups each benchmark folder's README card names under `demo:` (tasks/<name>/README.md)
DEMO_TASKS = $$($(PY) scripts/make_benchmark_pages.py --demo-tasks)

demo: $(DEMO_STAMP)
	$(PY) -m mmtasks --tasks $(DEMO_TASKS) \
		--model random --judge random --data-dir data/sample --output-path runs/demo-random --no-cache
	$(PY) -m mmtasks view runs/demo-random --out runs/leaderboard/views/demo-random
	$(PY) -m mmtasks leaderboard build runs/demo-random --out runs/leaderboard
	@echo "leaderboard: runs/leaderboard/index.html (each answer of the demo run: runs/leaderboard/views/demo-random/index.html)"

vllm-venv:
	bash scripts/setup_vllm_venv.sh

browser:
	@command -v chromium >/dev/null 2>&1 || (apt-get update -q && apt-get install -y -q chromium) \
		|| echo "could not install chromium: the browser test will say how to install it"

# pytest-xdist: TEST_WORKERS processes, each test file on one worker (--dist loadfile), so a
# file's module fixtures (the vLLM engine, the runs a file reads) are built once, not once per worker;
# the files in collection order (--no-loadscope-reorder), which conftest.py starts with the longest
TEST_WORKERS ?= 2

test: $(STAMP) vllm-venv browser
	$(PY) -m compileall -q -j 0 mmtasks tasks tests > /dev/null  # the same for this tree's own modules
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# the fast tier: every test not marked `slow` (conftest.py marks the longest files), for the edit-test loop;
# docs/contributors/tests.md has its measured time and what it covers (scripts/fast_tier_coverage.py)
test-fast: $(STAMP)
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile -m "not slow"

# lint (.ci/run runs it before the tests): ruff with pyproject's [tool.ruff] rules over the code, the tests,
# the task folders and the scripts; mypy with its [tool.mypy] settings over mmtasks/ (Python 3.10, the pydantic plugin)
lint: $(STAMP)
	$(PY) -m ruff check mmtasks tests tasks scripts benchmarks conftest.py
	$(PY) -m mypy

# the documentation site (mkdocs-material, the `docs` extra) into site/; strict: a broken link or anchor fails
docs: $(STAMP)
	$(PY) -m mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) .venv-vllm runs
