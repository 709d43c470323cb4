"""Goldens: what each adapter answered on each input, on each API path, kept to gate on.

``tokconf snapshot -o golden.tokconf`` records it (:mod:`harness.golden.snapshot`);
``tokconf gate golden.tokconf`` runs the same inputs again and lists every input and
path whose outcome changed (:mod:`harness.golden.compare`), exit 1 if any did. The
pytest plugin does the same with ``--tokconf-golden FILE``.

- :mod:`harness.golden.format`: the file (versioned, gzip-compressed JSON Lines, written
  atomically and streamed);
- :mod:`harness.golden.inputs`: where the inputs come from (cases, generated, long runs,
  user corpora);
- :mod:`harness.golden.paths`: the paths recorded per adapter (its library's whole API
  surface, or the common operations for adapters without one);
- :mod:`harness.golden.snapshot`, :mod:`harness.golden.compare`: writing one, gating on one.
"""
