"""Text that came from a model or a repository, made safe to keep and to put in a prompt.

Knowledge entries outlive the review that wrote them and are pasted into
later agents' prompts, so two things must never get in: instructions aimed
at those agents (prompt injection) and things that belong to nobody else
(secrets, hosts, other machines' paths, people's addresses). One function
per concern, and :func:`for_prompt` / :func:`for_entry` apply them in order.
"""

from __future__ import annotations

import re
import unicodedata

from fluxdrive.core.masking import mask_text

PROMPT_CAP = 2_000
TRUNCATED = " [... truncated]"
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_ROLE_TAG = re.compile(r"</?\s*(system|assistant|user|human|instructions?|im_start|im_end)[^>]*>", re.IGNORECASE)
_DIRECTIVE = re.compile(
    r"(ignore|disregard|forget|override)\s+(all\s+|any\s+|the\s+)?(previous|prior|above|earlier|your)\s+"
    r"(instructions|prompts?|rules|context)|you\s+are\s+now\b|new\s+instructions\s*:|system\s+prompt",
    re.IGNORECASE,
)
_FENCE = re.compile(r"```.*?(```|\Z)", re.DOTALL)
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/=_-]{60,}")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(\.[\w-]+)+\b")
_HOST = re.compile(r"\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|dev|internal|local|corp|cloud|ai|co)\b", re.IGNORECASE)
_IP = re.compile(r"\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b")
_FOREIGN_PATH = re.compile(r"(?<![\w.])(?:~|/(?:home|Users|root|var|etc|opt|tmp|srv|mnt)|[A-Za-z]:\\)[^\s,;)]*")


def strip_injection(text: str) -> str:
    """Remove what could steer an agent: role tags, invisible characters, directive lines, code, long blobs."""
    text = unicodedata.normalize("NFKC", text)
    text = _INVISIBLE.sub("", text)
    text = _ROLE_TAG.sub("", text)
    text = _FENCE.sub("[code removed]", text)
    text = _BASE64_RUN.sub("[blob removed]", text)
    return "\n".join(line for line in text.splitlines() if not _DIRECTIVE.search(line))


def strip_foreign(text: str) -> str:
    """Remove what belongs to other places and people: URLs, hosts, IPs, emails, absolute paths, secrets."""
    text = mask_text(text, aggressive=True)
    for pattern, marker in ((_URL, "[url]"), (_EMAIL, "[email]"), (_IP, "[address]"), (_HOST, "[host]")):
        text = pattern.sub(marker, text)
    return _FOREIGN_PATH.sub("[path]", text)


def capped(text: str, cap: int = PROMPT_CAP) -> str:
    """At most ``cap`` characters, with a visible marker when cut."""
    return text if len(text) <= cap else text[: cap - len(TRUNCATED)].rstrip() + TRUNCATED


def for_prompt(text: str, cap: int = PROMPT_CAP) -> str:
    """Retrieved knowledge on its way into a prompt."""
    return capped(strip_injection(text).strip(), cap)


def for_entry(text: str, cap: int = 400) -> str:
    """A finding's text on its way into a new entry: one paragraph, nothing foreign, nothing steering."""
    return capped(" ".join(strip_foreign(strip_injection(text)).split()), cap)
