"""Other Python environments side by side: another release of a library in one run.

``tokconf env add 'tiktoken==0.9.0'`` makes a virtual environment under tokconf's cache
(:func:`harness.vocab.cache_dir` ``/envs/NAME``), installs the requirements there, and
registers that environment's adapters with the library's version in their name:
``tiktoken@0.9.0:cl100k_base``. A run then holds ``tiktoken:cl100k_base`` (this
environment) and ``tiktoken@0.9.0:cl100k_base`` (that one) at once; the second is always
called through a worker (:mod:`harness.worker`) started with that environment's
interpreter.

- :mod:`harness.envs.store`: what an environment is (``env.json``), where it lives;
- :mod:`harness.envs.create`: making one (``uv`` when installed, else ``venv`` + ``pip``);
- :mod:`harness.envs.probe`: run *inside* an environment, says which adapters it has;
- :mod:`harness.envs.handoff`: what a worker there is handed, and which specs are its adapters.

Its adapters in this process's registry, and their workers, are an adapter family like
any other (:mod:`implementations.environments`, entry point ``envs``), which uses the
public interface only (:mod:`harness.remote`).

How tokconf's own code gets into the environment: it is not installed there. The worker
is started with tokconf's source folder first on ``PYTHONPATH`` (as every worker is), so
the worker in an environment made last month runs today's protocol, and the environment
holds nothing but what was asked for plus ``regex`` (tiktoken's adapter pre-tokenizes
with it). tokconf's engine imports only the standard library, so that is enough; its
built-in adapter families, which an installed tokconf finds through entry points, are
handed to the worker by name (:attr:`harness.worker.setup.WorkerSetup.entry_points`).
Vocabularies come from this process, verified: the worker reads the pinned files from a
folder of verified copies and seeds its own tiktoken cache from them
(``TIKTOKEN_CACHE_DIR`` is set to a folder under tokconf's cache), so an old release reads
exactly the bytes the installed one reads and never goes to the network.
"""
