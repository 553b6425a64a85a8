"""No module imports upward across the layers.

``LAYERS`` is the one list of layers, bottom-up; docs/contributors/architecture.md quotes it
(checked below). A module may import modules of its own layer and of the layers
below it, never of a layer above. Every import counts: at module level, inside
functions, and under ``TYPE_CHECKING``. (The registries name their built-in
modules as strings and import them on first use: that is how the bottom layer
reaches the built-in extensions without importing upward.)
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "mmtasks"

#: bottom-up; each entry is a module file or a folder (``name/``) relative to ``mmtasks/``
LAYERS: tuple[tuple[str, ...], ...] = (
    ("__init__.py", "errors.py", "registry.py", "secrets.py", "logs.py", "package_data.py", "core/"),
    ("config/", "templates.py"),
    ("documents/",),
    ("scoring/", "prompts.py", "answers.py"),
    ("dialogues/",),
    ("task.py", "plugin.py"),
    ("models/", "cache/", "scheduling/", "distributed.py", "rank_agreement.py", "ray_launcher.py"),
    ("results/", "comparison/", "leaderboard/", "agreement/", "view/", "trackers/"),
    ("runner.py", "preflight.py", "api.py", "cli.py", "commands/", "report.py", "progress.py", "__main__.py", "integrations/",
     "estimate.py", "run_file.py", "shards.py", "run_set.py"),
)


def layers_text() -> str:
    """The layer list as the architecture page quotes it (top layer first, as a stack is drawn)."""
    width = max(len(str(i)) for i in range(len(LAYERS)))
    return "\n".join(f"{i:>{width}}  {'  '.join(entries)}" for i, entries in reversed(list(enumerate(LAYERS))))


def layer_of(relative: str) -> int | None:
    """The layer of a module file (path relative to ``mmtasks/``); None when no entry covers it."""
    for i, entries in enumerate(LAYERS):
        for entry in entries:
            if relative == entry or (entry.endswith("/") and relative.startswith(entry)):
                return i
    return None


def module_file(name: str) -> str | None:
    """The file of module ``mmtasks.x.y`` relative to ``mmtasks/`` (None: not a module of the package)."""
    parts = name.split(".")
    if parts[0] != "mmtasks":
        return None
    base = PACKAGE.joinpath(*parts[1:])
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py").relative_to(PACKAGE).as_posix()
    if (base / "__init__.py").is_file():
        return (base / "__init__.py").relative_to(PACKAGE).as_posix()
    return None


def imported_modules(source: str, module: str, is_package: bool) -> Iterator[tuple[int, str]]:
    """(line, module name) of every ``mmtasks`` import in ``source``, wherever it is written.

    ``from mmtasks.a import b`` imports ``mmtasks.a.b`` when that is a module, else ``mmtasks.a``.
    """
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                yield node.lineno, sub if module_file(sub) is not None else target


def violations(files: dict[str, str]) -> list[str]:
    """Upward imports in ``files`` (path relative to ``mmtasks/`` -> source), one line each."""
    out: list[str] = []
    for relative, source in sorted(files.items()):
        here = layer_of(relative)
        if here is None:
            out.append(f"mmtasks/{relative}: in no layer (add it to LAYERS in tests/project/test_layers.py and docs/contributors/architecture.md)")
            continue
        is_package = relative.endswith("__init__.py")
        dotted = ".".join(["mmtasks", *Path(relative).with_suffix("").parts])
        module = dotted.removesuffix(".__init__")
        for line, name in imported_modules(source, module, is_package):
            target = module_file(name)
            if target is None:
                continue
            there = layer_of(target)
            if there is not None and there > here:
                out.append(f"mmtasks/{relative}:{line} imports {name} (layer {there}) from layer {here}")
    return out


def package_sources() -> dict[str, str]:
    return {p.relative_to(PACKAGE).as_posix(): p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py"))}


def test_no_module_imports_upward() -> None:
    problems = violations(package_sources())
    assert not problems, "\n".join(problems)


def test_the_architecture_page_quotes_the_layers() -> None:
    page = (REPO / "docs" / "contributors" / "architecture.md").read_text(encoding="utf-8")
    assert layers_text() in page, "docs/contributors/architecture.md must quote the layers exactly:\n" + layers_text()


def test_an_upward_import_is_found_wherever_it_is_written() -> None:
    files = {
        "core/x.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from mmtasks.documents.dataset import Document\n",
        "config/y.py": "def f():\n    import mmtasks.scheduling.scheduler\n",
        "documents/z.py": "from ..scoring import metrics\nfrom . import dataset\nfrom mmtasks import errors, runner\n",
        "task.py": "from mmtasks.scoring.aggregation import TaskResult\nfrom mmtasks.dialogues import protocols\n",
        "newthing.py": "",
    }
    assert violations(files) == [
        "mmtasks/config/y.py:2 imports mmtasks.scheduling.scheduler (layer 6) from layer 1",
        "mmtasks/core/x.py:3 imports mmtasks.documents.dataset (layer 2) from layer 0",
        "mmtasks/documents/z.py:1 imports mmtasks.scoring.metrics (layer 3) from layer 2",
        "mmtasks/documents/z.py:3 imports mmtasks.runner (layer 8) from layer 2",
        "mmtasks/newthing.py: in no layer (add it to LAYERS in tests/project/test_layers.py and docs/contributors/architecture.md)",
    ]


# -- import cycles ----------------------------------------------------------------------------

#: the import cycles left among the package's modules, each within one folder (a module and the
#: helper it was split into). Any other cycle fails; one taken apart must be removed here.
KNOWN_CYCLES: tuple[frozenset[str], ...] = (
    frozenset({"core/conversation.py", "core/pixels.py"}),
    frozenset({"documents/dataset.py", "documents/hub_files.py"}),
    frozenset({"models/base.py", "models/presets.py"}),
    frozenset({"scheduling/barrier_free.py", "scheduling/scheduler.py", "scheduling/waves.py"}),
    frozenset({"trackers/__init__.py", "trackers/backends.py"}),
)


def import_graph(files: dict[str, str]) -> dict[str, set[str]]:
    """Module file -> the package's module files it imports (every import, as :func:`violations` counts them)."""
    graph: dict[str, set[str]] = {}
    for relative, source in files.items():
        dotted = ".".join(["mmtasks", *Path(relative).with_suffix("").parts]).removesuffix(".__init__")
        targets = {module_file(name) for _, name in imported_modules(source, dotted, relative.endswith("__init__.py"))}
        graph[relative] = {t for t in targets if t is not None and t != relative and t in files}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_no_import_cycle_between_task_dialogues_and_scoring() -> None:
    """A protocol gets a document's state and an aggregator its TaskScoring, never the Task:
    nothing under dialogues/ or scoring/ imports task.py, and scoring/ imports no dialogue."""
    groups = {"task": ("task.py", "prompts.py", "answers.py"), "dialogues": ("dialogues/",), "scoring": ("scoring/",)}

    def group(relative: str) -> str | None:
        return next((g for g, entries in groups.items() for e in entries
                     if relative == e or (e.endswith("/") and relative.startswith(e))), None)

    mixed = [sorted(c) for c in cycles(import_graph(package_sources())) if len({group(m) for m in c} - {None}) > 1]
    assert not mixed, mixed


def test_the_only_import_cycles_are_the_known_ones() -> None:
    found = set(cycles(import_graph(package_sources())))
    assert found == set(KNOWN_CYCLES), (f"new cycles: {[sorted(c) for c in found - set(KNOWN_CYCLES)]}; "
                                        f"gone (remove from KNOWN_CYCLES): {[sorted(c) for c in set(KNOWN_CYCLES) - found]}")


def test_a_cycle_is_found_wherever_its_imports_are_written() -> None:
    files = {
        "task.py": "from mmtasks.dialogues.protocols import ProtocolSpec\n",
        "dialogues/protocols.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from mmtasks.scoring import aggregation\n",
        "scoring/aggregation.py": "def f():\n    from mmtasks import task\n",
        "scoring/metrics.py": "from mmtasks.scoring.aggregation import mean\n",
    }
    assert cycles(import_graph(files)) == [frozenset({"task.py", "dialogues/protocols.py", "scoring/aggregation.py"})]
