"""Which backend a review runs on: this process (None), or the Ray cluster the flag or the config names.

A front door calls :func:`connect_backend` and passes the result to
:func:`~fluxdrive.launch.execute.execute`; the engine itself never builds a
backend or imports Ray.
"""

from __future__ import annotations

from fluxdrive.config.model import Config
from fluxdrive.errors import UsageError
from fluxdrive.runtimes import Backend


def connect_backend(config: Config, cluster: str | None = None) -> Backend | None:
    """``--cluster`` (or the config's ``dispatch.backend = "ray"`` with ``dispatch.cluster`` or ``RAY_ADDRESS``):
    a connected Ray backend; None to run here. An unreachable cluster is one line and exit 2."""
    if cluster is None and config.dispatch.backend != "ray":
        return None
    from fluxdrive.scale.ray_session import cluster_address

    address = cluster_address(cluster, config.dispatch.cluster)
    if address is None:
        raise UsageError(
            'dispatch.backend = "ray" needs a cluster address',
            hint="pass --cluster ADDRESS, set dispatch.cluster, or export RAY_ADDRESS",
        )
    from fluxdrive.scale.ray_backend import RayBackend

    return RayBackend.connect(address, config)
