"""The pytest side: the plugin (the ``pytest11`` entry point) and the suite it drives."""
