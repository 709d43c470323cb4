"""tokconf's pytest plugin (entry point ``pytest11: tokconf``): the conformance suite as tests.

Installed with tokconf, so it is loaded by every pytest run on the machine; it therefore
adds nothing unless asked. It is asked in one of two ways:

1. **Any ``--tokconf-*`` option** on the command line. In another project::

       pytest --tokconf-plugin mypkg.adapter:factory --tokconf-impl mine:cl100k_base

   runs the shipped cases and the generated checks against that adapter (and the
   reference of its encoding), next to the project's own tests; ``--tokconf-plugin
   path/to/adapter.py:factory`` loads a file instead of a module.
2. **A test module that requests it**, which is how this repository runs it in CI::

       # tests/test_conformance.py
       from harness.pytest.plugin import tokconf_suite
       test_tokconf = tokconf_suite()

   Its items are then collected with that module only, so ``pytest tests/test_x.py``
   does not pay for them. Options given to ``tokconf_suite`` are defaults the command
   line extends (plugins, references) or replaces (the rest).

Items are the units of the plan ``tokconf run`` would run with the same options
(:mod:`harness.pytest.suite`), in its order; ids are readable and never hold an install
path (select them with ``-k``):

- ``tokconf::vocab[<adapter>]``: the vocabulary-consistency check of one adapter.
- ``tokconf::<case file, relative to its cases folder>::<case id>``: one per case, over
  every adapter it applies to. Documented divergences pass when they reproduce and fail
  as *stale* when they do not (strict xfail); any other divergence fails.
- ``tokconf::generated[<encoding>]::NNN``: one slice of the generated pools, the same
  hostile inputs ``tokconf run`` generates (``--tokconf-profile``, default
  ``$HYPOTHESIS_PROFILE`` or ``ci``); then ``tokconf::steered``, the coverage-steered ones.
- ``tokconf::everyday[<source>#<first>-<last>]``: up to 24 documents of the everyday text
  (docs/everyday.md), each finding naming its document ``everyday:<source>#<n>``.
- ``tokconf::unavailable[<adapter>]``: an adapter asked for that cannot run; it fails with the reason.

A failure shows the minimal input escaped, both outcomes, the token pieces and the
command that reproduces it. Unavailable adapters are listed in the terminal summary, each
with its whole reason (wrapped to the terminal, never cut). The items count in pytest's
"collected N items" header, also when the suite is added by the options alone.
``--tokconf-report DIR`` also writes the parity report ``tokconf run`` would write, from
the items' own results (no second run; every tokconf item must have run).

Isolation and parallelism mirror ``tokconf run``: foreign adapters run in worker
processes (``--tokconf-isolate``, ``--tokconf-no-isolate``, ``--tokconf-timeout``,
``--tokconf-memory-limit``); ``--tokconf-jobs N`` runs the pre-pass (vocabulary checks,
documented cases) and every case item ahead over N processes, each item then judged as
it runs. ``--tokconf-long`` adds the cases tagged long and the long tier of ``tokconf run
--long``, one item per (encoding, kind): ``tokconf::long[cl100k_base:spaces]``;
the default run's long inputs are items of the same kind (``--tokconf-no-default-long``
leaves them out); ``--tokconf-no-every-token`` leaves out the every-token items (one per
adapter; neither is under the dev profile).

``--tokconf-golden FILE`` adds one item that gates on a golden (``tokconf snapshot``),
``--tokconf-update-golden`` rewrites it instead (:mod:`harness.pytest.golden`).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

__all__ = ["SuiteRequest", "tokconf_suite"]

_OPTIONS = ("tokconf_impl", "tokconf_encoding", "tokconf_cases", "tokconf_plugin", "tokconf_reference",
            "tokconf_report", "tokconf_profile", "tokconf_no_generated", "tokconf_jobs", "tokconf_isolate",
            "tokconf_no_isolate", "tokconf_timeout", "tokconf_memory_limit", "tokconf_long", "tokconf_long_sizes",
            "tokconf_shrink_seconds", "tokconf_encoding_file", "tokconf_no_every_token", "tokconf_no_default_long",
            "tokconf_no_cache", "tokconf_no_everyday")
_SUITES = pytest.StashKey[dict]()
_USED = pytest.StashKey[list]()
#: each suite's last item in the session's order (id of the suite -> item)
_LAST = pytest.StashKey[dict]()


@dataclass(frozen=True)
class SuiteRequest:
    """What a test module asks for (see :func:`tokconf_suite`).

    It mirrors ``harness.pytest.suite.SuiteOptions`` on purpose: this module is imported by every
    pytest run on the machine, so it must not import the runner (and hypothesis, the
    adapters...) until a suite is actually requested.
    """

    impls: tuple[str, ...] = ()
    encodings: tuple[str, ...] = ()
    cases: tuple[str, ...] | None = None
    plugins: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    profile: str | None = None
    generated: bool = True


def tokconf_suite(
    *,
    impls: tuple[str, ...] = (),
    encodings: tuple[str, ...] = (),
    cases: tuple[str, ...] | None = None,
    plugins: tuple[str, ...] = (),
    references: tuple[str, ...] = (),
    profile: str | None = None,
    generated: bool = True,
) -> SuiteRequest:
    """Put the conformance suite into a test module: ``test_tokconf = tokconf_suite()``."""
    return SuiteRequest(tuple(impls), tuple(encodings), tuple(cases) if cases is not None else None,
                        tuple(plugins), tuple(references), profile, generated)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tokconf", "tokconf conformance suite (adds tests only when one of these is given)")
    group.addoption("--tokconf-impl", action="append", default=[], metavar="NAME",
                    help="run the suite on this adapter (repeatable; default: every available adapter)")
    group.addoption("--tokconf-encoding", action="append", default=[], metavar="ENC",
                    help="only adapters of this encoding (repeatable)")
    group.addoption("--tokconf-encoding-file", action="append", default=[], metavar="FILE.yaml",
                    help="an encoding described as data, as tokconf run --encoding-file (repeatable)")
    group.addoption("--tokconf-cases", action="append", default=[], metavar="PATH",
                    help="case file or folder (repeatable; default: the shipped cases)")
    group.addoption("--tokconf-plugin", action="append", default=[], metavar="MODULE:ATTR|FILE.py:ATTR",
                    help="register adapters from MODULE:ATTR or path/to/file.py:ATTR (repeatable)")
    group.addoption("--tokconf-reference", action="append", default=[], metavar="ENC=NAME",
                    help="the reference adapter of an encoding (repeatable)")
    group.addoption("--tokconf-profile", choices=["dev", "ci", "nightly"], default=None,
                    help="profile of the generated inputs, as tokconf run --profile (default: $HYPOTHESIS_PROFILE or ci)")
    group.addoption("--tokconf-no-generated", action="store_true", default=False,
                    help="only the YAML cases, no generated checks")
    group.addoption("--tokconf-report", metavar="DIR", default=None,
                    help="also write the parity report (parity.json, parity.html) into DIR")
    group.addoption("--tokconf-jobs", type=int, default=None, metavar="N",
                    help="run the vocabulary checks and the cases ahead over N processes (the generated "
                         "slices run as their items come)")
    group.addoption("--tokconf-isolate", action="store_true", default=False,
                    help="every adapter in a worker process (default: only foreign ones)")
    group.addoption("--tokconf-no-isolate", action="store_true", default=False,
                    help="every adapter in this process (a crash ends the session)")
    group.addoption("--tokconf-timeout", type=float, default=None, metavar="SECONDS",
                    help="an isolated call taking longer is a timeout outcome (default 60)")
    group.addoption("--tokconf-memory-limit", type=int, default=None, metavar="MB",
                    help="address-space limit of each worker (default 4096; 0 = none)")
    group.addoption("--tokconf-shrink-seconds", type=float, default=None, metavar="SECONDS",
                    help="time bound of shrinking one finding, as tokconf run --shrink-seconds (default 60; 0 = none)")
    group.addoption("--tokconf-long", action="store_true", default=False,
                    help="also the cases tagged long and the long tier, as `tokconf run --long` (on under the nightly profile)")
    group.addoption("--tokconf-long-sizes", default=None, metavar="N,N,...",
                    help="lengths the long tier climbs (default 10000,100000,1000000)")
    group.addoption("--tokconf-no-every-token", action="store_true", default=False,
                    help="no every-token items, as tokconf run --no-every-token")
    group.addoption("--tokconf-no-everyday", action="store_true", default=False,
                    help="no everyday-text items, as tokconf run --no-everyday")
    group.addoption("--tokconf-no-cache", action="store_true", default=False,
                    help="ask every adapter again, as tokconf run --no-cache")
    group.addoption("--tokconf-no-default-long", action="store_true", default=False,
                    help="no default long inputs (10^5 characters per class), as tokconf run --no-default-long")
    group.addoption("--tokconf-golden", metavar="FILE", default=None,
                    help="gate on a golden (tokconf snapshot): one item that fails on any changed outcome")
    group.addoption("--tokconf-update-golden", action="store_true", default=False,
                    help="with --tokconf-golden: rewrite the golden (same inputs) instead of gating")


def _requested_by_options(config: pytest.Config) -> bool:
    return any(config.getoption(name, default=None) for name in _OPTIONS)


def _options(config: pytest.Config, request: SuiteRequest) -> Any:
    from harness.pytest.suite import SuiteOptions

    get = config.getoption
    cases = tuple(get("tokconf_cases")) or request.cases
    if get("tokconf_isolate") and get("tokconf_no_isolate"):
        raise pytest.UsageError("tokconf: --tokconf-isolate and --tokconf-no-isolate exclude each other")
    jobs = get("tokconf_jobs") or 1
    if jobs < 1:
        raise pytest.UsageError(f"tokconf: --tokconf-jobs must be at least 1, got {jobs}")
    memory = get("tokconf_memory_limit")
    return SuiteOptions(
        impls=tuple(get("tokconf_impl")) or request.impls,
        encodings=tuple(get("tokconf_encoding")) or request.encodings,
        encoding_files=tuple(get("tokconf_encoding_file")),
        cases=cases,
        plugins=request.plugins + tuple(get("tokconf_plugin")),
        references=request.references + tuple(get("tokconf_reference")),
        profile=get("tokconf_profile") or request.profile,
        generated=request.generated and not get("tokconf_no_generated"),
        every_token=not get("tokconf_no_every_token"),
        cache=not get("tokconf_no_cache"),
        everyday=not get("tokconf_no_everyday"),
        default_long=not get("tokconf_no_default_long"),
        jobs=jobs,
        isolate="all" if get("tokconf_isolate") else "none" if get("tokconf_no_isolate") else "auto",
        timeout_s=get("tokconf_timeout") or 60.0,
        memory_limit_mb=4096 if memory is None else (memory or None),
        long=bool(get("tokconf_long")),
        long_sizes=_long_sizes(get("tokconf_long_sizes")),
        shrink_seconds=60.0 if get("tokconf_shrink_seconds") is None else (get("tokconf_shrink_seconds") or None),
    )


def _long_sizes(text: str | None) -> tuple[int, ...]:
    from harness.generate.long_inputs import LONG_LENGTHS, parse_sizes

    if text is None:
        return LONG_LENGTHS
    try:
        return parse_sizes(text)
    except ValueError as exc:
        raise pytest.UsageError(f"tokconf: --tokconf-long-sizes {exc}") from exc


def _suite(config: pytest.Config, request: SuiteRequest) -> tuple[Any, Any]:
    """(the suite of ``request``, its :class:`~harness.pytest.listing.Listing`); bad input
    is a usage error. Under pytest-xdist one worker builds the suite to list its items, and
    the others read the list (:mod:`harness.pytest.listing`)."""
    from harness.pytest.listing import listing_of, shared
    from harness.pytest.suite import Suite, SuiteError

    options = _options(config, request)
    suites = config.stash.setdefault(_SUITES, {})
    if options not in suites:
        try:
            suite = Suite(options)
            suites[options] = (suite, shared(options, lambda: listing_of(suite)))
        except SuiteError as exc:
            raise pytest.UsageError(f"tokconf: {exc}") from exc
    return suites[options]


def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> Any:
    if isinstance(obj, SuiteRequest):
        return SuiteCollector.from_parent(collector, name=name, request=obj)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    golden = config.getoption("tokconf_golden", default=None)
    if golden:
        from harness.pytest.golden import GoldenItem

        items.append(GoldenItem.from_parent(session, name=f"tokconf-golden[{golden}]", nodeid=f"tokconf-golden[{golden}]",
                                            golden=golden, update=bool(config.getoption("tokconf_update_golden")),
                                            impls=tuple(config.getoption("tokconf_impl") or ())))
    if not _requested_by_options(config):
        return
    if any(isinstance(i, _TokconfItem) for i in items):
        return  # a test module already asked for the suite
    _suite(config, SuiteRequest())  # bad options are a usage error here, not a collection error
    suite = SuiteCollector.from_parent(session, name="tokconf", nodeid="tokconf", request=SuiteRequest())
    # collected the way pytest collects (collect reports, itemcollected hooks), so the
    # header counts these items instead of saying "collected 0 items"
    items.extend(session.genitems(suite))


class SuiteCollector(pytest.Collector):
    """The suite: case files, then generated and vocabulary items per adapter."""

    def __init__(self, *, request: SuiteRequest, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.request = request

    def collect(self) -> Iterator[Any]:
        suite, listing = _suite(self.config, self.request)
        self.config.stash.setdefault(_USED, [])
        if (suite, listing) not in self.config.stash[_USED]:
            self.config.stash[_USED].append((suite, listing))
        for name, reason in listing.missing:
            yield UnavailableItem.from_parent(self, name=f"unavailable[{name}]", suite=suite, reason=reason)
        by_file: dict[str, list[Any]] = {}
        for listed in listing.items:
            if listed.label:
                by_file.setdefault(listed.label, []).append(listed)
        for listed in listing.items:
            if listed.label:
                if listed.label in by_file:  # a file's cases together, where its first case stands
                    yield CaseFileCollector.from_parent(self, name=listed.label, suite=suite,
                                                        cases=by_file.pop(listed.label))
            else:
                yield UnitItem.from_parent(self, name=listed.name, suite=suite, listed=listed)


class CaseFileCollector(pytest.Collector):
    def __init__(self, *, suite: Any, cases: list[Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.suite, self.cases = suite, cases

    def collect(self) -> Iterator[Any]:
        for listed in self.cases:
            yield CaseItem.from_parent(self, name=listed.name, suite=self.suite, listed=listed)


class TokconfFailure(Exception):
    """A divergence that fails an item; its text is the whole report."""


class _TokconfItem(pytest.Item):
    def __init__(self, *, suite: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.suite = suite

    def _fail_on(self, records: list[Any]) -> None:
        from harness.pytest.suite import describe_record

        documented = [r for r in records if r.status == "documented"]
        if documented:
            self.user_properties.append(("tokconf_documented", len(documented)))
        failing = [r for r in records if r.status in ("unexpected", "stale")]
        if failing:
            raise TokconfFailure("\n\n".join(describe_record(r) for r in failing))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, TokconfFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, self.nodeid


class UnitItem(_TokconfItem):
    """One unit of the plan: a vocabulary check, a slice of generated inputs, the steered ones."""

    def __init__(self, *, listed: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.listed = listed

    @property
    def unit(self) -> Any:
        """The plan's unit at this item's place (the suite is built here if another
        pytest-xdist worker listed the items), which must have the item's name."""
        unit = self.suite.units()[self.listed.index]
        if unit.name != self.listed.name:
            raise RuntimeError(f"tokconf: the plan built in this process has {unit.name!r} where the items were "
                               f"collected with {self.listed.name!r} (the plan changed after collection); "
                               "run again, or with -n 0")
        return unit

    def runtest(self) -> None:
        self._fail_on(self.suite.run(self.unit))


class CaseItem(UnitItem):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        for tag in self.listed.tags:
            self.keywords[tag] = True

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return Path(self.listed.path), self.listed.line - 1, f"case {self.listed.name}"


class UnavailableItem(_TokconfItem):
    """An adapter that was asked for and cannot run: a failure, never a silent skip."""

    def __init__(self, *, reason: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reason = reason

    def runtest(self) -> None:
        raise TokconfFailure(f"asked for, but cannot run (nothing of it was tested): {self.reason}")


def pytest_configure(config: pytest.Config) -> None:
    # pytest-xdist runs the items in several processes, and each would hold a part of the
    # run: the report would be one worker's share, or none (the controller runs no item)
    if config.getoption("tokconf_report", default=None) and not hasattr(config, "workerinput") \
            and getattr(config.option, "dist", "no") != "no":
        raise pytest.UsageError(
            "--tokconf-report writes one report of the items that ran, and pytest-xdist runs them in "
            f"several processes (-n {getattr(config.option, 'numprocesses', '?')}, --dist {config.option.dist}): "
            "add -n 0 to run them in this one")


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    for suite, listing in config.stash.get(_USED, []):
        missing = dict(listing.unavailable)
        if missing:
            terminalreporter.write_line(f"tokconf: {len(missing)} adapter(s) unavailable, not tested:")
            width = max(40, config.get_terminal_writer().fullwidth - 1)
            for name, reason in missing.items():
                # wrapped, never cut: the fix is at the end of the reason
                for line in textwrap.wrap(f"{name}: {' '.join((reason or 'unavailable').split())}", width=width,
                                          initial_indent="  ", subsequent_indent="      ",
                                          break_on_hyphens=False, break_long_words=False):
                    terminalreporter.write_line(line)
        target = config.getoption("tokconf_report", default=None)
        if target:
            terminalreporter.write_line(f"tokconf: parity report: {_write_report(suite, target)}")


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After a suite's last item in this process, close it (:meth:`Suite.close`): a
    pytest-xdist worker kept its Node and isolated workers, adapters and outcomes through
    every later test file. Kept when ``--tokconf-report`` still writes the report from it."""
    if not isinstance(item, _TokconfItem) or item.config.getoption("tokconf_report", default=None):
        return
    last = item.config.stash.setdefault(_LAST, {})
    if not last:
        last.update({id(each.suite): each for each in item.session.items if isinstance(each, _TokconfItem)})
    if last.get(id(item.suite)) is item:
        item.suite.close()


def pytest_unconfigure(config: pytest.Config) -> None:
    from harness.pytest.listing import clean_up

    for suite, _ in config.stash.get(_SUITES, {}).values():
        suite.close()
    clean_up()


def _write_report(suite: Any, target: str) -> str:
    """The report ``tokconf run`` writes with the suite's options, from the items' deltas."""
    options = suite.options
    argv = ["tokconf", "run", "--out", target]
    for flag, values in (("--impl", options.impls), ("--encoding", options.encodings),
                         ("--plugin", options.plugins), ("--reference", options.references),
                         ("--cases", options.cases or ())):
        for value in values:
            argv += [flag, str(value)]
    if options.profile:
        argv += ["--profile", options.profile]
    if not options.generated:
        argv.append("--no-generated")
    if options.shrink_seconds != 60.0:
        argv += ["--shrink-seconds", f"{options.shrink_seconds or 0:g}"]
    return suite.report(target, argv=tuple(argv))
