"""The check engine: how fluxdrive's own checks are declared, found, parsed for and run.

The checks themselves live one package up (``fluxdrive.runtimes.static.checks``)
and reach this engine only through what it exports; the engine never imports
a check. Checks are found through the ``fluxdrive.checks`` entry-point group,
so a built-in check module is loaded exactly as a third-party one (bandit's
``core/`` apart from its ``plugins/``). The modules, bottom up:

- :mod:`.syntax`: pure helpers over ``ast`` nodes (names, constants, assignments);
- :mod:`.taint_spec`: the sources, sanitizers and sinks taint tracking reads;
- :mod:`.pyparse`: parsing newer-Python sources on the running interpreter;
- :mod:`.pymodule` / :mod:`.document`: what a check receives, one file each;
- :mod:`.taint`: the flow of outside data through one function;
- :mod:`.summaries`: what the project's own helpers do with the data passed to them;
- :mod:`.registry`: ``@python_check`` / ``@document_check``, the registered checks, their options;
- :mod:`.runner`: one walk per file, each node handed to the checks that asked for its type.
"""
