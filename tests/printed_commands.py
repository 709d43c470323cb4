"""Running the ``tokconf ...`` commands a report prints, as a user copies them.

A test that checks many printed commands (every fault of the selftest, one per kind of
divergence of a run) paid a Python process for each: 1.2 to 3.3 s of CPU a command, most
of it starting Python, importing tokconf, loading the registry's entry points and the
vocabularies again. :class:`PrintedCommands` runs the first command of each verb (``call``,
``encode``, ``decode``, ...) as its own process, as the user's shell runs it, and the rest
through the same :func:`harness.cli.main` in the test's process, from the same folder.
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Ran:
    """What one printed command did: its exit code and what it printed."""

    command: str
    code: int
    stdout: str
    stderr: str
    in_process: bool

    @property
    def said(self) -> str:
        """The end of each stream, for a failure's message."""
        return self.stdout[-500:] + self.stderr[-500:]


@dataclass
class PrintedCommands:
    """Runs printed commands from ``cwd``; a verb's first as a process, later ones in process."""

    cwd: Path
    #: the verbs that already ran as a process
    verbs_run_as_a_process: set[str] = field(default_factory=set)

    def run(self, command: str, *, timeout: float = 600) -> Ran:
        argv = shlex.split(command)
        if not argv or argv[0] != "tokconf" or len(argv) < 2:
            raise AssertionError(f"a printed command starts with tokconf and a verb: {command}")
        verb = argv[1]
        if verb not in self.verbs_run_as_a_process:
            self.verbs_run_as_a_process.add(verb)
            done = subprocess.run([sys.executable, "-m", "harness", *argv[1:]], cwd=self.cwd, capture_output=True,
                                  text=True, timeout=timeout)
            return Ran(command, done.returncode, done.stdout, done.stderr, in_process=False)
        return self._in_process(command, argv[1:])

    def _in_process(self, command: str, args: list[str]) -> Ran:
        from harness.cli import main

        out, err = io.StringIO(), io.StringIO()
        here = os.getcwd()
        os.chdir(self.cwd)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(args)
        finally:
            os.chdir(here)
        return Ran(command, code, out.getvalue(), err.getvalue(), in_process=True)
