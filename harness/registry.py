"""Find adapters: lazily, once, and without two providers claiming one name.

Adapters come from the entry-point group ``tokconf.implementations`` (the built-in ones
too, registered exactly as a third-party package registers its own) and from
``--plugin module:attr`` or ``--plugin path/to/file.py:attr`` (the file is loaded as a
module, from any folder). An entry point or plugin resolves to any of:

- an :class:`AdapterSpec` or a :class:`Family` (or an iterable of them);
- an :class:`~harness.interface.Adapter` instance;
- a zero-argument callable (an Adapter subclass, a factory) returning an Adapter.

Listing builds specs only; no vocabulary is loaded until an adapter is asked for.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import re
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterable, Iterator

from harness.interface import Adapter
from harness.provenance import Provenance, distribution_of, file_record, library_version, module_record
from harness.hints.raise_site import callable_name, describe_raise
from harness.hints.suggest import unknown_name

__all__ = ["AdapterSpec", "AdapterUnavailable", "DuplicateAdapter", "Family", "Registry", "RegistryError",
           "default_registry", "library_version"]

ENTRY_POINT_GROUP = "tokconf.implementations"


class RegistryError(Exception):
    """A plugin or entry point could not be turned into adapters."""


class DuplicateAdapter(RegistryError):
    """Two providers registered the same adapter name."""


class AdapterUnavailable(Exception):
    """An adapter's dependency or vocabulary is missing; the message says why and the fix."""


@dataclass(frozen=True)
class AdapterSpec:
    """What the registry knows about an adapter before building it."""

    name: str
    encoding: str
    factory: Callable[[], Adapter]
    library: str = ""
    description: str = ""
    #: Cheap availability probe: returns the reason it is unavailable, or None.
    check: Callable[[], str | None] | None = field(default=None, compare=False)
    provider: str = ""
    #: the library's version when it is known without importing it here (an adapter of
    #: another environment, :mod:`harness.envs`); None: ``library_version(library)``
    version: str | None = None
    #: the language its users call it from ("JavaScript" for a Node environment's adapters)
    language: str = "Python"
    #: for an adapter that always runs in a worker of its own (a JavaScript adapter in Node):
    #: builds its executor, given the run's isolation (or None); the run then calls it there
    #: whatever --isolate says (:mod:`harness.run.selection`)
    executor: Callable[[Any], Any] | None = field(default=None, compare=False)

    @property
    def library_version(self) -> str | None:
        return self.version or library_version(self.library)

    @property
    def kind(self) -> str:
        return self.name.split(":", 1)[0]

    def unavailable_reason(self) -> str | None:
        if self.check is None:
            return None
        try:
            return self.check()
        except Exception as exc:  # a broken probe must not stop the listing
            return f"availability check failed: {type(exc).__name__}: {exc}"


@dataclass(frozen=True)
class Family:
    """A group of adapters from one provider.

    ``specs`` lists the fixed names (``tiktoken:cl100k_base``). ``resolve`` handles
    names that carry an argument, such as ``bytebpe:PATH/TO/MODEL.json``: it gets the
    part after ``"<kind>:"`` and returns a spec, or raises :class:`RegistryError`.
    """

    kind: str
    specs: Callable[[], Iterable[AdapterSpec]] = lambda: ()
    resolve: Callable[[str], AdapterSpec] | None = None
    #: Other name prefixes this family's ``resolve`` answers for.
    extra_kinds: tuple[str, ...] = ()
    #: (name, callable): services the engine asks the family for by name
    #: (:meth:`Registry.hook`), so it never imports a family for its options
    hooks: tuple[tuple[str, Callable[..., Any]], ...] = ()


class Registry:
    """Adapter specs by name, and the adapters built from them (built once, cached)."""

    def __init__(self) -> None:
        self._specs: dict[str, AdapterSpec] = {}
        self._families: dict[str, tuple[Family, str]] = {}
        self._hooks: dict[str, tuple[Callable[..., Any], str]] = {}
        self._built: dict[str, Adapter] = {}
        self._failed: dict[str, str] = {}
        #: what each --plugin provider read: its file, hash, commit (see harness.provenance)
        self._plugin_provenance: dict[str, Provenance] = {}
        #: seconds each built adapter's factory took (``tokconf run --profile-harness``)
        self.build_seconds: dict[str, float] = {}
        self.build_cpu_seconds: dict[str, float] = {}

    # -- registration ------------------------------------------------------------------

    def add(self, obj: Any, *, provider: str) -> None:
        """Register whatever a plugin or entry point gave (see module docstring)."""
        for spec_or_family in _coerce(obj, provider):
            if isinstance(spec_or_family, Family):
                self._add_family(spec_or_family, provider)
            else:
                self._add_spec(spec_or_family, provider)

    def _add_spec(self, spec: AdapterSpec, provider: str) -> None:
        if ":" not in spec.name:
            raise RegistryError(
                f"adapter name {spec.name!r} from {provider} must look like '<kind>:<encoding>'"
            )
        existing = self._specs.get(spec.name)
        if existing is not None and existing.provider != provider:
            raise DuplicateAdapter(
                f"adapter {spec.name!r} is registered twice: by {existing.provider} and by "
                f"{provider}; uninstall or rename one of them"
            )
        self._specs[spec.name] = _with_provider(spec, provider)

    def _add_family(self, family: Family, provider: str) -> None:
        for kind in (family.kind, *family.extra_kinds):
            existing = self._families.get(kind)
            if existing is not None and existing[1] != provider:
                raise DuplicateAdapter(
                    f"adapter kind {kind!r} is registered twice: by {existing[1]} and by "
                    f"{provider}; uninstall or rename one of them"
                )
            self._families[kind] = (family, provider)
        for name, hook in family.hooks:
            if self._hooks.setdefault(name, (hook, provider))[1] != provider:
                raise DuplicateAdapter(f"hook {name!r} is registered twice: by {self._hooks[name][1]} and by {provider}")
        for spec in family.specs():
            self._add_spec(spec, provider)

    def load_entry_points(self) -> None:
        for entry_point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            self.load_entry_point(entry_point.name, entry_point.value, load=entry_point.load)

    def load_entry_point(self, name: str, value: str, *, load: Callable[[], Any] | None = None) -> None:
        """Register ``name = module:attr`` (also by hand: another environment's worker)."""
        provider = f"entry point {name} = {value}"
        try:
            self.add(load() if load is not None else _import_target(value), provider=provider)
        except DuplicateAdapter:
            raise
        except Exception as exc:
            # one broken provider must not hide the others; it shows up in `list`
            self._failed[f"{name}:*"] = f"{provider} failed to load: {type(exc).__name__}: {exc}"

    def load_plugin(self, target: str) -> list[str]:
        """Register ``module:attr`` or ``path/to/file.py:attr``; returns the adapter names it added."""
        module, attr, provenance = _import_plugin(target)
        try:
            obj = getattr(module, attr)
        except AttributeError as exc:
            public = [n for n in dir(module) if not n.startswith("_")]
            raise RegistryError(
                f"--plugin {target}: {module.__file__ or module.__name__} has no attribute {attr!r}; "
                f"it has: {', '.join(public[:20])}"
            ) from exc
        self._plugin_provenance[f"plugin {target}"] = provenance
        before = set(self._specs)
        self.add(obj, provider=f"plugin {target}")
        return sorted(set(self._specs) - before)

    # -- lookup ------------------------------------------------------------------------

    def names(self) -> list[str]:
        return sorted(self._specs)

    def specs(self) -> list[AdapterSpec]:
        return [self._specs[n] for n in self.names()]

    def kinds(self) -> list[str]:  # a name's part before ":", registered or resolvable
        return sorted({spec.kind for spec in self._specs.values()} | set(self._families))

    def plugin_names(self) -> list[str]:
        """Names registered by ``--plugin`` (not by entry points)."""
        return [n for n, spec in sorted(self._specs.items()) if spec.provider.startswith("plugin ")]

    def hook(self, name: str) -> Callable[..., Any]:
        """The family service ``name`` (``source-root``, ``claim-encoding``, ``train``, ...)."""
        if name not in self._hooks:
            raise RegistryError(f"no adapter family offers {name!r} here (hooks: {', '.join(sorted(self._hooks)) or 'none'}); "
                                f"is the family that provides it installed? `tokconf list` shows load failures")
        return self._hooks[name][0]

    def load_failures(self) -> dict[str, str]:
        return dict(self._failed)

    def spec(self, name: str) -> AdapterSpec:
        if name in self._specs:
            return self._specs[name]
        kind, sep, argument = name.partition(":")
        family = self._families.get(kind)
        if sep and family is not None and family[0].resolve is not None:
            try:
                spec = family[0].resolve(argument)
            except RegistryError:
                raise
            except Exception as exc:
                raise RegistryError(f"cannot resolve adapter {name!r}: {exc}") from exc
            spec = _with_provider(spec, family[1])
            self._specs[spec.name] = spec
            if spec.name != name:
                self._specs[name] = spec
            return spec
        raise RegistryError(unknown_name(name, self.names(), kinds=sorted(self._families)))

    def get(self, name: str) -> Adapter:
        """Build (once) and return the adapter ``name``.

        Raises :class:`AdapterUnavailable` with the reason if it cannot be built here.
        """
        if name in self._built:
            return self._built[name]
        if name in self._failed:
            raise AdapterUnavailable(self._failed[name])
        spec = self.spec(name)
        reason = spec.unavailable_reason()
        if reason is not None:
            self._failed[name] = reason
            raise AdapterUnavailable(reason)
        started, started_cpu = time.perf_counter(), time.process_time()
        try:
            adapter = spec.factory()
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - foreign code; report, don't die
            reason = f"{type(exc).__name__}: {exc}"
            self._failed[name] = reason
            raise AdapterUnavailable(reason) from exc
        self._built[name] = adapter
        self.build_seconds[name] = time.perf_counter() - started
        self.build_cpu_seconds[name] = time.process_time() - started_cpu
        return adapter

    def provenance(self, name: str, *, reported: Provenance | None = None) -> Provenance:
        """What ``name`` is: its own account (distribution, files; ``reported``: its worker's), plus its plugin file."""
        spec = self.spec(name)
        adapter = self._built.get(spec.name) or self._built.get(name)
        # another environment's adapter: its spec's version ran, not this process's library (issue 22)
        unbuilt = Provenance(spec.library or None, spec.version) if spec.version else Provenance.of(spec.library)
        try:
            own = reported or (adapter.provenance() if adapter is not None else unbuilt)
        except Exception:  # noqa: BLE001 - a foreign override must not sink the report
            own = unbuilt
        plugin = self._plugin_provenance.get(spec.provider)
        return own.adding(plugin) if plugin is not None else own

    def status(self, name: str, *, build: bool = False) -> str | None:
        """``None`` if available, else the reason. ``build=True`` also builds it."""
        try:
            if build:
                self.get(name)
                return None
            if name in self._failed:
                return self._failed[name]
            return self.spec(name).unavailable_reason()
        except (AdapterUnavailable, RegistryError) as exc:
            return str(exc)

    def __iter__(self) -> Iterator[AdapterSpec]:
        return iter(self.specs())


def _import_target(value: str) -> Any:
    module, _, attr = value.partition(":")
    target: Any = importlib.import_module(module.strip())
    for part in attr.strip().split(".") if attr else ():
        target = getattr(target, part)
    return target


def _import_plugin(target: str) -> tuple[ModuleType, str, Provenance]:
    """``module:attr`` imports a module; ``path/to/file.py:attr`` loads that file as one."""
    where, sep, attr = target.rpartition(":")  # rpartition: a Windows path has a colon too
    if not sep or not where or not attr.isidentifier():
        raise RegistryError(
            f"--plugin {target!r} must be MODULE:ATTR or FILE.py:ATTR, e.g. --plugin "
            f"mypkg.adapter:factory or --plugin plugins/mine.py:MyTokenizer"
        )
    if where.endswith(".py") or "/" in where or os.sep in where:
        return _load_file(target, where), attr, Provenance(None, None, (file_record(where, where),))
    # `python -m` puts the current folder on the path and the `tokconf` console script
    # does not; a user's `--plugin mypkg.adapter:factory` must work the same from both
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(where)
    except ModuleNotFoundError as exc:
        if exc.name and (where == exc.name or where.startswith(exc.name + ".")):
            raise RegistryError(_not_found(target, where, exc.name)) from exc
        raise RegistryError(
            f"--plugin {target}: importing {where!r} failed: it imports {exc.name!r}, which is not "
            f"installed here; `pip install` the package that provides {exc.name!r}"
        ) from exc
    except Exception as exc:
        raise RegistryError(f"--plugin {target}: importing {where!r} failed: {describe_raise(exc)}") from exc
    record = module_record(module)
    return module, attr, Provenance.of(distribution_of(where), () if record is None else (record,))


def _load_file(target: str, where: str) -> ModuleType:
    path = Path(where).expanduser()
    if not path.is_file():
        looked = str(path)
        if not path.is_absolute():
            looked = f"{path.resolve()} (relative to the current folder {os.getcwd()})"
        raise RegistryError(f"--plugin {target}: there is no file {looked}; give the path of a .py file")
    real = path.resolve()
    # a stable, private module name: loading the same file twice gives the same module
    name = "tokconf_plugin_" + re.sub(r"\W", "_", real.stem) + "_" + hashlib.sha256(str(real).encode()).hexdigest()[:8]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, real)
    if spec is None or spec.loader is None:
        raise RegistryError(f"--plugin {target}: Python cannot load {where} as a module; give a .py file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before running it: dataclasses and pickling look it up
    if str(real.parent) not in sys.path:
        sys.path.insert(0, str(real.parent))  # as `python file.py` would: its neighbours import
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise RegistryError(f"--plugin {target}: running {where} failed: {describe_raise(exc)}") from exc
    return module


def _not_found(target: str, where: str, missing: str) -> str:
    top = where.split(".", 1)[0]
    here = os.getcwd()
    searched = [p for p in dict.fromkeys(p or here for p in sys.path) if p != here and os.path.isdir(p)]
    parent = sys.modules.get(top)
    at = getattr(parent, "__file__", None) or ", ".join(getattr(parent, "__path__", []))
    found = f" ({top} itself is at {at})" if missing != top and at else ""
    return (
        f"--plugin {target}: no module named {missing!r}{found}; searched the current folder "
        f"{here} and Python's path: {', '.join(searched)}. Fix: run from the "
        f"folder that holds {top}/ (or {top}.py), add that folder to PYTHONPATH, `pip install -e` "
        f"its package, or give the file itself: --plugin path/to/{where.replace('.', '/')}.py:"
        f"{target.rpartition(':')[2]}"
    )


def _with_provider(spec: AdapterSpec, provider: str) -> AdapterSpec:
    return spec if spec.provider else replace(spec, provider=provider)  # every other field kept


def _coerce(obj: Any, provider: str) -> Iterator[AdapterSpec | Family]:
    if isinstance(obj, (AdapterSpec, Family)):
        yield obj
        return
    if isinstance(obj, Adapter):
        yield _spec_of_instance(obj)
        return
    if isinstance(obj, type) and issubclass(obj, Adapter):
        name = getattr(obj, "name", "")
        if name:
            yield AdapterSpec(
                name=name, encoding=obj.encoding, factory=obj, library=getattr(obj, "library", "")
            )
            return
    if isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _coerce(item, provider)
        return
    if callable(obj):
        try:
            produced = obj()
        except Exception as exc:
            raise RegistryError(f"{provider}: calling {callable_name(obj)} failed: {describe_raise(exc)}") from exc
        if isinstance(produced, Adapter):
            yield _spec_of_instance(produced)
            return
        if isinstance(produced, (AdapterSpec, Family, list, tuple)):
            yield from _coerce(produced, provider)
            return
        raise RegistryError(
            f"{provider}: {obj!r} returned {type(produced).__name__}; expected an Adapter, "
            f"AdapterSpec, Family, or a list of them"
        )
    raise RegistryError(
        f"{provider} gave {type(obj).__name__}; expected an Adapter (instance or class), an "
        f"AdapterSpec, a Family, a list of them, or a zero-argument factory returning one"
    )


def _spec_of_instance(adapter: Adapter) -> AdapterSpec:
    if not adapter.name or ":" not in adapter.name:
        raise RegistryError(
            f"adapter {adapter!r} needs a name like '<kind>:<encoding>' (set its `name` attribute)"
        )
    return AdapterSpec(
        name=adapter.name,
        encoding=adapter.encoding,
        factory=lambda: adapter,
        library=adapter.library,
    )


_default: Registry | None = None


def default_registry(*, plugins: Iterable[str] = ()) -> Registry:
    """The process-wide registry: entry points loaded once, then any plugins."""
    global _default
    if _default is None:
        registry = Registry()
        registry.load_entry_points()
        _default = registry
    for plugin in plugins:
        _default.load_plugin(plugin)
    return _default


def reset_default_registry() -> None:
    """Forget the process-wide registry (tests use this)."""
    global _default
    _default = None
