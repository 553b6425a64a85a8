"""One registry type for every extension point, and the plugin loaders that fill it.

A :class:`Registry` maps names (as task YAML and the CLI spell them) to objects:
protocols, transforms, dataset adapters, answer parsers, metrics, aggregators,
judge-verdict parsers, model backends, and extra task folders. Entries are
registered three ways:

- built in: ``registry.register("name")`` as a decorator in a module that the
  registry imports the first time it is asked (``builtin_modules``), or a lazy
  ``"module:attr"`` string (``registry.register_lazy``) imported only when that
  name is used, so an optional dependency (torch, vllm) is needed only by the run
  that uses it;
- plugin files: Python files in a task folder, listed in the task's ``plugins:``
  key (see :func:`load_plugin_file`), registering with the same decorators;
- installed packages: entry points in the group ``mmtasks`` (see
  :func:`load_entry_points`), whose modules register with the same decorators
  (and may add task folders with ``task_folders.register``).

An unknown name is a one-line :class:`~mmtasks.errors.ConfigError` with a "did you
mean" hint. An import error inside a plugin or a lazy entry is shown as itself
(its type and message, and the file), never turned into "unknown name".

A name registered by a plugin file is visible only to tasks that list that file
in ``plugins:`` (or include a base that does), so whether a task loads never
depends on which other tasks were loaded before it, and two task folders may each
have a plugin name of their own (a task that sees both gets an error). A plugin
name may not reuse a built-in one. What a module of mmtasks or of an installed
package registers stays built in even when a plugin file's import imports it
first. Plugin files of one folder are imported as modules of one package, so a
plugin may import a helper beside it relatively (``from .helpers import x``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import hashlib
import importlib
import importlib.util
import sys
import types
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Generic, TypeVar

from mmtasks.errors import ConfigError

T = TypeVar("T")

#: the entry-point group installed packages use to extend mmtasks
ENTRY_POINT_GROUP = "mmtasks"
#: the package under which plugin files are imported (``mmtasks_plugins.d<folder hash>.<stem>``)
PLUGIN_PACKAGE = "mmtasks_plugins"


@dataclass(frozen=True)
class Entry(Generic[T]):
    """A registered object, or a lazy ``"module:attr"`` reference to one."""

    name: str
    obj: T | None = None
    lazy: str | None = None
    #: the plugin file that registered it (None: built in or from an installed package)
    origin: Path | None = None
    #: what to ``pip install`` when a lazy entry's import fails for a missing package
    extra: str | None = None


class Registry(Generic[T]):
    """Names -> objects of one kind of extension."""

    def __init__(self, kind: str, *, field: str, builtin_modules: Iterable[str] = ()) -> None:
        #: what an entry is, for messages ("parser", "metric", "protocol" ...)
        self.kind = kind
        #: the task YAML key (or CLI flag) that names entries, for messages
        self.field = field
        self._builtin_modules = tuple(builtin_modules)
        self._builtins_loaded = False
        #: built-ins and installed packages': visible to every task
        self._entries: dict[str, Entry[T]] = {}
        #: plugin files': name -> plugin file -> entry, visible to the tasks that load that file
        #: (two task folders may each have a plugin with the same name)
        self._plugin_entries: dict[str, dict[Path, Entry[T]]] = {}

    # -- registering ---------------------------------------------------------
    def register(self, name: str, obj: T | None = None) -> Any:
        """Register ``obj`` under ``name``; without ``obj``, a decorator that does."""
        if obj is not None:
            self._add(Entry(name=name, obj=obj, origin=_registering_plugin()))
            return obj

        def deco(fn: T) -> T:
            self._add(Entry(name=name, obj=fn, origin=_registering_plugin()))
            return fn

        return deco

    def register_lazy(self, name: str, target: str, *, extra: str | None = None) -> None:
        """Register ``"module:attr"``, imported when ``name`` is first used."""
        if ":" not in target:
            raise ValueError(f"lazy {self.kind} entry {name!r}: expected 'module:attr', got {target!r}")
        self._add(Entry(name=name, lazy=target, origin=_registering_plugin(), extra=extra))

    def _forget(self, origin: Path) -> None:
        """Drop what the plugin file ``origin`` registered (its import failed)."""
        for by_origin in self._plugin_entries.values():
            by_origin.pop(origin, None)

    def _add(self, entry: Entry[T]) -> None:
        if entry.origin is None:
            old = self._entries.get(entry.name)
        else:
            self._load_builtins()  # so that a plugin reusing a built-in name is refused, whatever the order
            old = self._entries.get(entry.name) or self._plugin_entries.get(entry.name, {}).get(entry.origin)
        if old is not None and not _same(old, entry):
            where = f" (in {entry.origin})" if entry.origin else ""
            raise ConfigError(f"{self.kind} {entry.name!r} is registered twice{where}; it already names {_describe(old)}",
                              field=self.field, hint="give one of them another name")
        self._store(entry)

    def _store(self, entry: Entry[T]) -> None:
        if entry.origin is None:
            self._entries[entry.name] = entry
        else:
            self._plugin_entries.setdefault(entry.name, {})[entry.origin] = entry

    # -- looking up ----------------------------------------------------------
    def get(self, name: str, *, plugins: Collection[Path] = (), file: str | Path | None = None,
            field: str | None = None) -> T:
        """The object named ``name``, visible from a task that loaded ``plugins``.

        ``file`` and ``field`` say where the name was written, for the error message.
        """
        field = field or self.field
        allowed = {Path(p).resolve() for p in plugins}
        found = [e for e in (self._lookup(name),) if e is not None]
        found += [e for origin, e in self._plugin_entries.get(name, {}).items() if origin in allowed]
        if len(found) > 1:
            raise ConfigError(f"{self.kind} {name!r} is defined twice for this task: by {_describe(found[0])} and by {_describe(found[1])}",
                              file=file, field=field, hint="give one of them another name")
        if not found:
            elsewhere = sorted(self._plugin_entries.get(name, {}))
            if elsewhere:
                raise ConfigError(f"{self.kind} {name!r} is defined in the plugin file {elsewhere[0]}, which this task does not load",
                                  file=file, field=field, hint=f"add {elsewhere[0].name!r} to the task's plugins:")
            raise ConfigError(f"unknown {self.kind} {name!r}", file=file, field=field, hint=self._hint(name, plugins))
        entry = found[0]
        if entry.obj is None:
            entry = self._resolve(entry, file=file, field=field)
        assert entry.obj is not None  # _resolve imports it, or raises
        return entry.obj

    def names(self, plugins: Collection[Path] = ()) -> list[str]:
        """Every name visible from a task that loaded ``plugins`` (built-ins and installed packages always)."""
        self._load_builtins()
        load_entry_points()
        allowed = {Path(p).resolve() for p in plugins}
        mine = {n for n, by_origin in self._plugin_entries.items() if allowed & set(by_origin)}
        return sorted(set(self._entries) | mine)

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is visible to every task (a built-in or an installed package's)."""
        return isinstance(name, str) and self._lookup(name) is not None

    def _lookup(self, name: str) -> Entry[T] | None:
        self._load_builtins()
        entry = self._entries.get(name)
        if entry is None:
            load_entry_points()
            entry = self._entries.get(name)
        return entry

    def _load_builtins(self) -> None:
        if self._builtins_loaded:
            return
        self._builtins_loaded = True
        for module in self._builtin_modules:
            importlib.import_module(module)  # a broken built-in module is a bug: let it show

    def _resolve(self, entry: Entry[T], *, file: str | Path | None, field: str) -> Entry[T]:
        assert entry.lazy is not None
        module_name, _, attr = entry.lazy.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            hint = f"pip install '{entry.extra}'" if entry.extra else None
            missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
            if missing and not module_name.startswith(missing):  # a dependency of the module, not the module
                raise ConfigError(f"{self.kind} {entry.name!r} needs a package that is not installed: {missing}",
                                  file=file, field=field, hint=hint) from exc
            raise ConfigError(f"{self.kind} {entry.name!r} cannot be imported from {module_name}: {type(exc).__name__}: {exc}",
                              file=file, field=field, hint=hint) from exc
        try:
            obj = getattr(module, attr)
        except AttributeError:
            raise ConfigError(f"{self.kind} {entry.name!r}: module {module_name} has no attribute {attr!r}",
                              file=file, field=field) from None
        resolved = Entry(name=entry.name, obj=obj, lazy=entry.lazy, origin=entry.origin, extra=entry.extra)
        self._store(resolved)
        return resolved

    def _hint(self, name: str, plugins: Collection[Path]) -> str:
        known = self.names(plugins)
        close = list(dict.fromkeys(difflib.get_close_matches(name, known, n=3)))
        if close:
            return "did you mean " + " or ".join(repr(c) for c in close) + "?"
        return f"known: {', '.join(known)}" if known else f"no {self.kind} is registered"


def _same(a: Entry[Any], b: Entry[Any]) -> bool:
    """Whether two registrations are the same thing (a module imported twice, a lazy entry resolved)."""
    if a.lazy is not None and a.lazy == b.lazy:
        return True
    if a.obj is not None and b.obj is not None:
        return a.obj is b.obj or (a.origin == b.origin and _identity(a.obj) == _identity(b.obj))
    return False


def _identity(obj: Any) -> Any:
    """What a registered object is, across imports of its module: a function or class by its
    qualified name; a spec dataclass (ProtocolSpec, AggregatorSpec) by its fields' identities."""
    if hasattr(obj, "__qualname__"):
        return _qualname(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return (_qualname(type(obj)), tuple(_identity(getattr(obj, f.name)) for f in dataclasses.fields(obj)))
    return repr(obj)


def _describe(entry: Entry[Any]) -> str:
    return str(entry.origin) if entry.origin else (entry.lazy or _qualname(entry.obj))


def _qualname(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}:{getattr(obj, '__qualname__', type(obj).__name__)}"


# --- plugin files -------------------------------------------------------------

#: resolved path -> module, for plugin files already imported (each is imported once per process)
_PLUGIN_MODULES: dict[Path, Any] = {}
#: the plugin file being imported now (registrations made meanwhile belong to it)
_LOADING: list[Path] = []


def _registering_plugin() -> Path | None:
    """The plugin file a registration made now belongs to, or None (built in, installed package).

    It is the plugin file being loaded when the module whose top-level code is running the
    registration (the innermost ``<module>`` frame) is a plugin module. A module of mmtasks
    or of an installed package imported for the first time while a plugin file loads (a
    plugin's ``from mmtasks.scoring.metrics import ...``) registers as a built-in.
    """
    if not _LOADING:
        return None
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_name != "<module>":
        frame = frame.f_back
    if frame is None or not str(frame.f_globals.get("__name__", "")).startswith(PLUGIN_PACKAGE + "."):
        return None
    return _LOADING[-1]


def load_plugin_file(path: Path, *, roots: Iterable[Path], task_file: str | Path | None = None) -> Path:
    """Import a plugin file once; its decorators register its extensions. Returns its resolved path.

    ``path`` must be a regular ``.py`` file inside one of ``roots`` (the task's folder
    or an include path). Any error raised while importing it is shown as itself.
    """
    resolved = path.resolve()
    field = "plugins"
    if not any(resolved.is_relative_to(Path(r).resolve()) for r in roots):
        raise ConfigError(f"plugin file {path} is outside the task's folder and the include paths", file=task_file, field=field)
    if resolved.suffix != ".py" or not resolved.is_file():
        raise ConfigError(f"plugin file {path} is not a Python file", file=task_file, field=field)
    if resolved in _PLUGIN_MODULES:
        return resolved
    module_name = f"{_folder_package(resolved.parent)}.{_identifier(resolved.stem)}"
    if module_name in sys.modules:  # already imported by a sibling plugin file (``from .name import ...``)
        module = sys.modules[module_name]
        if Path(getattr(module, "__file__", "") or "").resolve() != resolved:
            raise ConfigError(f"plugin file {path} has the module name of {module.__file__} (rename one of them)",
                              file=task_file, field=field)
        _PLUGIN_MODULES[resolved] = module
        return resolved
    spec = importlib.util.spec_from_file_location(module_name, resolved)
    if spec is None or spec.loader is None:
        raise ConfigError(f"cannot import plugin file {path}", file=task_file, field=field)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    _LOADING.append(resolved)
    try:
        with _plugin_argv(str(resolved)):
            spec.loader.exec_module(module)
    except ConfigError:
        _unload(module_name, resolved)
        raise
    except (Exception, SystemExit, KeyboardInterrupt) as exc:  # noqa: BLE001 - user code: reported as itself, with its file
        _unload(module_name, resolved)
        where, line = _error_line(exc, resolved)
        raise ConfigError(f"plugin file failed to import: {_what_failed(exc)}", file=where, line=line,
                          hint=f"loaded for {task_file}" if task_file else None) from exc
    finally:
        _LOADING.pop()
    _PLUGIN_MODULES[resolved] = module
    return resolved


@contextlib.contextmanager
def _plugin_argv(name: str) -> Iterator[None]:
    """``sys.argv`` while a plugin imports: only its own name, never the command line of the run
    (a plugin that parses ``sys.argv`` at import must not read, or print the usage of, mmtasks')."""
    saved = sys.argv
    sys.argv = [name]
    try:
        yield
    finally:
        sys.argv = saved


def _what_failed(exc: BaseException) -> str:
    """The error of a plugin's import in words; an exit (``SystemExit``, ``KeyboardInterrupt``
    raised by the plugin) is an error like any other, never the end of the run."""
    if isinstance(exc, SystemExit):
        return f"it called exit ({type(exc).__name__}: {exc.code!r}) while being imported"
    if isinstance(exc, KeyboardInterrupt):
        return f"it raised {type(exc).__name__} while being imported"
    return f"{type(exc).__name__}: {exc}"


def _folder_package(folder: Path) -> str:
    """The package a folder's plugin files are imported into (created on first use), so that
    they can import their siblings relatively: ``from .helpers import x``."""
    if PLUGIN_PACKAGE not in sys.modules:
        root = types.ModuleType(PLUGIN_PACKAGE, "plugin files of mmtasks task folders")
        root.__path__ = []
        sys.modules[PLUGIN_PACKAGE] = root
    name = f"{PLUGIN_PACKAGE}.d{hashlib.sha256(str(folder).encode()).hexdigest()[:12]}"
    if name not in sys.modules:
        package = types.ModuleType(name, f"plugin files in {folder}")
        package.__path__ = [str(folder)]
        package.__package__ = name
        sys.modules[name] = package
    return name


def _unload(module_name: str, origin: Path) -> None:
    """Forget a plugin file whose import failed: its module and whatever it registered before failing."""
    sys.modules.pop(module_name, None)
    for reg in ALL.values():
        reg._forget(origin)


def _identifier(stem: str) -> str:
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in stem)
    return out if out and not out[0].isdigit() else f"p_{out}"


def _error_line(exc: BaseException, file: Path) -> tuple[Path, int | None]:
    """Where the error happened: the innermost frame in the plugin's folder (a sibling it
    imports may be the broken one), or the plugin file itself."""
    folder = file.parent
    if isinstance(exc, SyntaxError) and exc.filename and Path(exc.filename).resolve().is_relative_to(folder):
        return Path(exc.filename).resolve(), exc.lineno
    where, line = file, None
    tb = exc.__traceback__
    while tb is not None:
        frame_file = Path(tb.tb_frame.f_code.co_filename)
        if frame_file.is_absolute() and frame_file.resolve().is_relative_to(folder):
            where, line = frame_file.resolve(), tb.tb_lineno
        tb = tb.tb_next
    return where, line


# --- installed packages -------------------------------------------------------

_ENTRY_POINTS_LOADED: list[bool] = []


def load_entry_points() -> None:
    """Import every ``mmtasks`` entry point of the installed packages (once per process)."""
    if _ENTRY_POINTS_LOADED:
        return
    _ENTRY_POINTS_LOADED.append(True)
    loading = _LOADING[:]
    _LOADING.clear()  # what installed packages register belongs to no plugin file, even when a file's import got here
    try:
        for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
            try:
                with _plugin_argv(ep.value):
                    ep.load()
            except ConfigError:
                raise
            except (Exception, SystemExit, KeyboardInterrupt) as exc:  # noqa: BLE001 - reported as itself
                dist = getattr(ep.dist, "name", None) or "an installed package"
                raise ConfigError(f"the mmtasks plugin {ep.name!r} of {dist} ({ep.value}) failed to import: "
                                  f"{_what_failed(exc)}", hint="fix or uninstall that package") from exc
    finally:
        _LOADING[:] = loading


# --- the registries -------------------------------------------------------------
# Objects are typed loosely here (this module sits below the layers that define them);
# each layer documents the shape its registry holds.

#: protocol name -> ProtocolSpec (mmtasks.dialogues.protocols): turns a document into a dialogue
protocols: Registry[Any] = Registry("protocol", field="protocol", builtin_modules=("mmtasks.dialogues.builtin",))
#: transform name -> document transform (mmtasks.dialogues.transforms)
transforms: Registry[Any] = Registry("transform", field="transforms", builtin_modules=("mmtasks.dialogues.transforms",))
#: adapter name -> record adapter (source schema -> the local one)
adapters: Registry[Any] = Registry("dataset adapter", field="dataset.adapter", builtin_modules=("mmtasks.documents.adapters",))
#: parser name -> answer parser (reply text -> compared value, None: unparsed)
parsers: Registry[Any] = Registry("parser", field="answer.parser", builtin_modules=("mmtasks.scoring.builtin",))
#: metric name -> per-sample metric function
metrics: Registry[Any] = Registry("metric function", field="metrics", builtin_modules=("mmtasks.scoring.builtin",))
#: aggregator name -> AggregatorSpec (mmtasks.scoring.aggregation): samples -> a task's results, and the metrics it reports
aggregators: Registry[Any] = Registry("aggregator", field="aggregator", builtin_modules=("mmtasks.scoring.builtin",))
#: group aggregator name -> GroupAggregatorSpec (mmtasks.scoring.group_aggregation): every member task's samples -> the group's figures
group_aggregators: Registry[Any] = Registry("group aggregator", field="group_aggregators")
#: verdict parser name -> judge-reply parser (reply text -> verdict fields, None: not a verdict)
verdict_parsers: Registry[Any] = Registry("judge verdict parser", field="judge.parser", builtin_modules=("mmtasks.scoring.verdicts",))
#: backend name -> ChatModel subclass (mmtasks.models), registered lazily
backends: Registry[Any] = Registry("model backend", field="--model", builtin_modules=("mmtasks.models.builtin",))
#: name -> a folder of task YAML contributed by an installed package
task_folders: Registry[Path] = Registry("task folder", field="--include-path")

ALL: dict[str, Registry[Any]] = {
    "protocol": protocols, "transform": transforms, "adapter": adapters, "parser": parsers, "metric": metrics,
    "aggregator": aggregators, "group_aggregator": group_aggregators, "verdict_parser": verdict_parsers, "backend": backends, "task_folder": task_folders,
}
