"""fluxdrive's own Python and document checks, one module per agent area.

Each module registers its checks with the engine's decorators
(:mod:`fluxdrive.runtimes.static.checks.engine.registry`) when imported. The
engine imports them through the ``fluxdrive.checks`` entry-point group, where
``pyproject.toml`` declares every module of this package exactly as a plugin
package declares its own; this package's ``_`` modules are helpers the checks
share, not checks. Nothing is imported here: a check module, the engine and
a plugin each import only what they use.
"""
