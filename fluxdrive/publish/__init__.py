"""Publishing a review where people read it: GitHub pull request reviews, comments and check runs.

``publish_github(output_dir, root=..., env=os.environ)`` is what ``fluxdrive
publish github`` (and ``fluxdrive review --publish github``) call; see
:mod:`fluxdrive.publish.github`.
"""

from __future__ import annotations

from fluxdrive.publish.api import GitHubApiError, GitHubClient
from fluxdrive.publish.github import PublishResult, Target, describe, publish_github, resolve_target

__all__ = ["GitHubApiError", "GitHubClient", "PublishResult", "Target", "describe", "publish_github", "resolve_target"]
