"""tokconf's built-in adapters, one module per tokenizer family.

Each module exposes a ``family()`` registered in ``pyproject.toml`` under the
``tokconf.implementations`` entry-point group, exactly as a third-party package would.
"""
