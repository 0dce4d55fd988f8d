"""Publishing a review where people read it: GitHub pull requests, GitLab merge requests, any plugin's forge.

``post(publisher, output_dir, root=..., env=os.environ)`` is what ``fluxdrive
publish github|gitlab`` (and ``fluxdrive review --publish NAME``) call, with
the :class:`Publisher` that :func:`publisher` finds by name among the
``fluxdrive.publishers`` entry points; see :mod:`fluxdrive.publish.base`
(the protocol) and :mod:`fluxdrive.publish.driver` (what every forge shares).
``publish_github`` and ``publish_gitlab`` are the same with the forge fixed.
"""

from __future__ import annotations

from fluxdrive.publish.api import GitHubApiError, GitHubClient
from fluxdrive.publish.base import InlineComment, Publisher, PublishResult
from fluxdrive.publish.driver import post, publish
from fluxdrive.publish.github import GitHubPublisher, Target, describe, publish_github, resolve_target
from fluxdrive.publish.gitlab import GitLabPublisher, publish_gitlab
from fluxdrive.publish.registry import publisher, publishers

__all__ = [
    "GitHubApiError",
    "GitHubClient",
    "GitHubPublisher",
    "GitLabPublisher",
    "InlineComment",
    "PublishResult",
    "Publisher",
    "Target",
    "describe",
    "post",
    "publish",
    "publish_github",
    "publish_gitlab",
    "publisher",
    "publishers",
    "resolve_target",
]
