"""tokconf's pytest plugin (registered under ``pytest11``). Filled in by the runner work."""
