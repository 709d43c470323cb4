"""The golden as a pytest item: ``pytest --tokconf-golden golden.tokconf``.

One item, ``tokconf-golden[<file>]``, does what ``tokconf gate`` does and fails with its
list of changes (each input and path, before and after). With
``--tokconf-update-golden`` it rewrites the golden instead: the same inputs (the ones
stored in it) through the same adapters (or ``--tokconf-impl``), and passes; a missing
golden is then created from the shipped cases and generated inputs. Without that flag a
missing golden fails and says which command creates it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

__all__ = ["GoldenItem"]


class GoldenFailure(Exception):
    pass


class GoldenItem(pytest.Item):
    def __init__(self, *, golden: str, update: bool, impls: tuple[str, ...], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.golden, self.update, self.impls = golden, update, impls

    def runtest(self) -> None:
        from harness.golden.format import GoldenError
        from harness.run.selection import SelectionError

        try:
            if self.update:
                self._rewrite()
            else:
                self._gate()
        except (GoldenError, SelectionError) as exc:
            raise GoldenFailure(f"tokconf golden {self.golden}: {exc}") from exc

    def _registry(self) -> Any:
        from harness.registry import default_registry

        return default_registry(plugins=tuple(self.config.getoption("tokconf_plugin") or ()))

    def _gate(self) -> None:
        from harness.cli.gate_cmd import missing_golden_message
        from harness.golden.compare import run_gate
        from harness.golden.format import read_golden
        from harness.golden.snapshot import build_adapters
        from harness.report.gate_page import format_gate_text
        from harness.worker.setup import Isolation

        if not Path(self.golden).is_file():
            raise GoldenFailure(f"{missing_golden_message(self.golden)}, or run pytest with "
                                f"--tokconf-golden {self.golden} --tokconf-update-golden")
        header, _ = read_golden(self.golden)
        selected = build_adapters(self._registry(), self.impls or [a.name for a in header.adapters],
                                  isolation=Isolation())
        try:
            result = run_gate(self.golden, selected)
        finally:
            selected.close()
        if result.exit_code:
            raise GoldenFailure(format_gate_text(result.to_json(), limit=50)
                                + f"if these changes are intended: pytest --tokconf-golden {self.golden} "
                                  f"--tokconf-update-golden")

    def _rewrite(self) -> None:
        from harness.golden.format import read_golden
        from harness.golden.inputs import Input
        from harness.golden.snapshot import InputOptions, build_adapters, input_stream, write_snapshot
        from harness.worker.setup import Isolation

        if Path(self.golden).is_file():
            header, stored = read_golden(self.golden)
            names = self.impls or tuple(a.name for a in header.adapters)
            inputs = (Input(item.source, item.text) for item in stored)
            options = header.inputs
        else:
            names, options = self.impls, InputOptions()
            inputs = None
        selected = build_adapters(self._registry(), names, isolation=Isolation())
        try:
            if inputs is None:
                literals = {lit for c in selected.calls.values() for lit, _ in c.info.special_tokens}
                inputs = input_stream(options, literals)
                options = options.to_json()
            count = write_snapshot(self.golden, selected, inputs, options=options)
        finally:
            selected.close()
        self.user_properties.append(("tokconf_golden_written", count))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, GoldenFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.golden, None, f"tokconf golden {self.golden}"
