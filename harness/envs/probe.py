"""Run inside an environment: which of tokconf's adapters it has, at which versions.

``python -m harness.envs.probe --library tiktoken --entry-point tiktoken=implementations.tiktoken:family ...``
prints one JSON object: ``{"packages": {dist: version}, "adapters": [{name, encoding,
library, version, reason}]}`` for the adapters whose library is one of the ``--library``
distributions (the ones the user asked for). ``reason`` is why one cannot run there,
from the adapter's own availability check: ``tiktoken 0.9.0 has no encoding
'o200k_harmony'``. Started by :mod:`harness.envs.create` with tokconf's source on
``PYTHONPATH`` and the verified vocabulary folder in ``TOKCONF_VOCAB_DIR``; it imports no
adapter library until an availability check does.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
from types import SimpleNamespace
import sys

#: what the registry's provider text of the environment family ends with: its entry point's
#: value in pyproject.toml (a name the engine compares, never imports)
ENVS_PROVIDER_TAIL = "implementations.environments:family"


def normalise(name: str) -> str:
    """PEP 503 normalised distribution name.

    >>> normalise("Tiktoken"), normalise("tokenizers_x.y")
    ('tiktoken', 'tokenizers-x-y')
    """
    return re.sub(r"[-_.]+", "-", name).lower()


def main(argv: list[str] | None = None) -> int:
    from harness.worker.argv import read_flags

    args = SimpleNamespace(**read_flags(argv, prog="python -m harness.envs.probe",
                                        repeated=["--library", "--entry-point"]))
    from harness.registry import Registry, library_version

    registry = Registry()
    registry.load_entry_points()
    for item in args.entry_point:
        name, _, value = item.partition("=")
        registry.load_entry_point(name, value)
    wanted = {normalise(n) for n in args.library}
    adapters = []
    for spec in registry.specs():
        if not spec.library or normalise(spec.library) not in wanted:
            continue
        if spec.provider.endswith(ENVS_PROVIDER_TAIL) or "@" in spec.name.partition(":")[0]:
            # another environment's adapter, seen because tokconf's own entry points are
            # on the path here (its source folder holds tokconf.egg-info): registering it
            # again would nest names, tiktoken@0.9.0@0.10.0:cl100k_base (issue 22)
            continue
        version = library_version(spec.library)
        if version is None:
            continue
        adapters.append({"name": spec.name, "encoding": spec.encoding, "library": spec.library,
                         "version": version, "reason": spec.unavailable_reason()})
    packages = {d.metadata["Name"]: d.version for d in importlib.metadata.distributions() if d.metadata["Name"]}
    json.dump({"packages": packages, "adapters": adapters, "python": sys.version.split()[0],
               "failures": registry.load_failures()}, sys.stdout, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
