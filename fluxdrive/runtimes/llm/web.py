"""Web research tools for a model: ``web_search`` (Brave Search or Tavily) and ``fetch_url``, cached per run.

The framework-docs and best-practices research agents get these two tools
when a search key is in the environment (:func:`choose_provider`); without
one they are absent and the answer says there was no web access.

**The providers' wire shapes** (checked against their documentation and
client code before this was written):

- *Brave Search*: ``GET https://api.search.brave.com/res/v1/web/search?q=...&count=N``
  (``count`` 1-20) with headers ``Accept: application/json`` and
  ``X-Subscription-Token: <key>``; the answer's results are
  ``web.results[]`` with ``title``, ``url`` and ``description`` (which may
  carry ``<strong>`` marks). Sources: Brave's quickstart
  (api-dashboard.search.brave.com/documentation/quickstart), its web search
  reference as linked from docs.litellm.ai/docs/search/brave, and clients
  such as TenBlueLinks/core ``helpers/search_engines/brave.rb`` (endpoint,
  header, ``web.results[].url/title/description``).
- *Tavily*: ``POST https://api.tavily.com/search`` with
  ``Authorization: Bearer <key>`` and a JSON body ``{"query", "max_results",
  "search_depth": "basic", ...}``; the answer's ``results[]`` carry ``title``,
  ``url``, ``content`` (a snippet) and ``score``. Sources:
  docs.tavily.com/api-reference/introduction (the bearer key and the JSON
  body), the response example in curios-devops/curios
  ``docs/guides/TAVILY_GUIDE.md``, and LangChain's TavilySearchAPIWrapper
  reference (parameters and result fields).

**What leaves the machine**: the model's search query (and the result count)
goes to the chosen provider, with the key from the environment
(``BRAVE_SEARCH_API_KEY`` or ``BRAVE_API_KEY``; ``TAVILY_API_KEY``) - never
project content fluxdrive adds itself. ``fetch_url`` requests the page the
model names, from public addresses only (:mod:`.web_fetch`). The key is never
logged: every error text is masked (:func:`fluxdrive.core.masking.mask_text`
knows the key variables, and the key's value is replaced explicitly too).
``FLUXDRIVE_SEARCH_BASE_URL`` replaces the provider's ``https://host`` (tests
point it at a fake on 127.0.0.1).

**The cache** (:class:`WebCache`) belongs to the run: the same query (same
provider and count) or the same URL is asked over HTTP once; the executor
persists it as ``research/.web-cache.json`` in the run's output directory
when it knows that directory.

**Sources** (:meth:`WebResearch.sources`): every URL the tools handed the
model ends up in the answer's sources - pages read with ``fetch_url`` as
plain URLs, search results that were not read as ``search result (not read):
URL`` after them - and a source citing only URLs that no tool returned in
this run is dropped (the gap says which): a URL recalled from training is
not evidence that anything was checked. Project paths and entries labelled
"from model knowledge: ..." (URLs in them included) are kept as they are.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TypeGuard

import httpx2

from fluxdrive.core.atomic import atomic_write_json
from fluxdrive.core.masking import MASK, mask_text
from fluxdrive.runtimes.llm.web_fetch import (
    FETCH_DEADLINE_S,
    FetchRefused,
    clean_text,
    fetch_client,
    fetch_page,
    loopback_allowed,
    strip_tags,
    wrap_untrusted,
)

if TYPE_CHECKING:
    from pydantic_ai import Tool

ProviderName = Literal["brave", "tavily"]
KEY_VARIABLES: dict[ProviderName, tuple[str, ...]] = {
    "brave": ("BRAVE_SEARCH_API_KEY", "BRAVE_API_KEY"),
    "tavily": ("TAVILY_API_KEY",),
}
DEFAULT_BASE_URLS: dict[ProviderName, str] = {
    "brave": "https://api.search.brave.com",
    "tavily": "https://api.tavily.com",
}
_CHOICES: dict[str, tuple[ProviderName, ...]] = {
    "auto": ("brave", "tavily"),
    "brave": ("brave",),
    "tavily": ("tavily",),
}
BASE_URL_ENV = "FLUXDRIVE_SEARCH_BASE_URL"
CACHE_FILE = ".web-cache.json"
MAX_QUERY_CHARS = 400  # Tavily refuses longer queries ("Max query length is 400 characters")
MAX_RESULTS = 10
MAX_SEARCHES = 8  # per question
MAX_FETCHES = 8
SEARCH_TIMEOUT_S = 20.0
NOT_READ = "search result (not read): "
_URL = re.compile(r"https?://[^\s<>\"'`]+", re.I)


class SearchError(Exception):
    """The provider could not answer (the message is masked and goes back to the model)."""


@dataclass(frozen=True, slots=True)
class SearchResult:
    title: str
    url: str
    snippet: str


@dataclass(frozen=True)
class SearchProvider:
    """One search API with its key (never in ``repr``) and base URL."""

    name: ProviderName
    key: str = field(repr=False)
    base_url: str

    @property
    def label(self) -> str:
        return "Brave Search" if self.name == "brave" else "Tavily"

    def masked(self, text: str) -> str:
        """``text`` with the key and every configured secret masked."""
        return mask_text(text.replace(self.key, MASK) if self.key else text)

    async def search(self, client: httpx2.AsyncClient, query: str, count: int) -> list[SearchResult]:
        """The provider's results for ``query`` (at most ``count``), or :class:`SearchError`."""
        try:
            if self.name == "brave":
                response = await client.get(
                    f"{self.base_url}/res/v1/web/search",
                    params={"q": query, "count": count},
                    headers={"Accept": "application/json", "X-Subscription-Token": self.key},
                )
            else:
                response = await client.post(
                    f"{self.base_url}/search",
                    json={"query": query, "max_results": count, "search_depth": "basic", "include_answer": False},
                    headers={"Accept": "application/json", "Authorization": f"Bearer {self.key}"},
                )
        except httpx2.TimeoutException:
            raise SearchError(f"{self.label} did not answer in time") from None
        except httpx2.HTTPError as exc:
            raise SearchError(self.masked(f"cannot reach {self.label}: {type(exc).__name__}: {exc}")) from None
        if response.status_code != 200:
            hint = f" (is {' or '.join(KEY_VARIABLES[self.name])} valid?)" if response.status_code in (401, 403) else ""
            detail = " ".join(response.text[:200].split())
            raise SearchError(self.masked(f"{self.label} answered HTTP {response.status_code}{hint}: {detail}"))
        try:
            data = response.json()
        except ValueError:
            raise SearchError(f"{self.label} answered with something that is not JSON") from None
        items = _items(data, ("web", "results") if self.name == "brave" else ("results",))
        snippet_key = "description" if self.name == "brave" else "content"
        results = []
        for item in items:
            url = str(item.get("url") or "").strip()
            if not url.lower().startswith(("http://", "https://")):
                continue
            title, snippet = strip_tags(str(item.get("title") or "")), strip_tags(str(item.get(snippet_key) or ""))
            results.append(SearchResult(clean_text(title)[:200], clean_text(url)[:500], clean_text(snippet)[:500]))
        return results[:count]


def _items(data: object, path: tuple[str, ...]) -> list[dict[str, Any]]:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return [item for item in data if isinstance(item, dict)] if isinstance(data, list) else []


def choose_provider(
    choice: str = "auto", env: Mapping[str, str] | None = None
) -> tuple[SearchProvider | None, str | None]:
    """The search provider ``choice`` (``auto``, ``brave``, ``tavily``, ``off``) gives, or None and why not."""
    environ = os.environ if env is None else env
    if choice == "off":
        return None, "research.search_provider is off"
    candidates = _CHOICES.get(choice)
    if candidates is None:
        return None, f"unknown search provider {choice!r}"
    base = environ.get(BASE_URL_ENV, "").strip().rstrip("/")
    for name in candidates:
        key = next((environ[v].strip() for v in KEY_VARIABLES[name] if environ.get(v, "").strip()), "")
        if key:
            return SearchProvider(name, key, base or DEFAULT_BASE_URLS[name]), None
    wanted = [v for name in candidates for v in KEY_VARIABLES[name]]
    return None, f"none of {', '.join(wanted)} is set"


class WebCache:
    """What ``web_search`` and ``fetch_url`` got in this run, by query or URL; optionally kept in a JSON file.

    Thread-safe (research executors run in worker threads). The file is
    best effort: unreadable, it starts empty; unwritable, the cache lives in
    memory only.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()
        self._entries: dict[str, Any] = {}
        if self.path is not None:
            with contextlib.suppress(OSError, ValueError):
                data = json.loads(self.path.read_text(encoding="utf-8"))
                if isinstance(data, dict) and data.get("version") == 1 and isinstance(data.get("entries"), dict):
                    self._entries = dict(data["entries"])

    def get(self, key: str) -> Any | None:
        with self._lock:
            return self._entries.get(key)

    def put(self, key: str, value: Any) -> None:
        with self._lock:
            self._entries[key] = value
            snapshot = {"version": 1, "entries": dict(self._entries)}
        if self.path is not None:
            with contextlib.suppress(OSError):
                atomic_write_json(self.path, snapshot)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


class WebResearch:
    """One question's web tools: the provider, the run's cache, and every URL handed to the model.

    Use as an async context manager (it owns its HTTP clients); :meth:`tools`
    are the pydantic-ai tools, bound to this object.
    """

    def __init__(
        self,
        provider: SearchProvider,
        cache: WebCache | None = None,
        *,
        allow_loopback: bool | None = None,
        max_searches: int = MAX_SEARCHES,
        max_fetches: int = MAX_FETCHES,
    ) -> None:
        self.provider = provider
        self.cache = cache if cache is not None else WebCache()
        self.allow_loopback = loopback_allowed() if allow_loopback is None else allow_loopback
        self.max_searches = max_searches
        self.max_fetches = max_fetches
        self.queries: list[str] = []
        self.result_urls: dict[str, None] = {}  # URLs web_search returned, in order
        self.read_urls: dict[str, None] = {}  # URLs fetch_url read (the final URL after redirects)
        self.known: set[str] = set()  # every URL a tool gave the model, normalized
        self.failures: list[str] = []
        self.fetches = 0
        self._search_client: httpx2.AsyncClient | None = None
        self._fetch_client: httpx2.AsyncClient | None = None
        self._locks: dict[str, asyncio.Lock] = {}

    async def __aenter__(self) -> WebResearch:
        self._search_client = httpx2.AsyncClient(timeout=httpx2.Timeout(SEARCH_TIMEOUT_S, connect=10.0))
        self._fetch_client = fetch_client()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for client in (self._search_client, self._fetch_client):
            if client is not None:
                await client.aclose()
        self._search_client = self._fetch_client = None

    def tools(self) -> list[Tool[Any]]:
        """``web_search`` and ``fetch_url`` as pydantic-ai tools."""
        from pydantic_ai import Tool

        return [Tool(self.web_search, takes_ctx=False), Tool(self.fetch_url, takes_ctx=False)]

    # ------------------------------------------------------------------ the tools

    async def web_search(self, query: str, count: int = 5) -> str:
        """Search the web; returns titles, URLs and snippets (untrusted data). Cite the URLs you rely on.

        Args:
            query: what to search for, e.g. 'Django 4.2 QuerySet.raw parameters documentation'
            count: how many results (1-10)
        """
        query = clean_text(" ".join(str(query).split()))[:MAX_QUERY_CHARS]
        if not query:
            return "web_search needs a query"
        if len(self.queries) >= self.max_searches:
            return (
                f"web_search limit reached ({self.max_searches} searches for this question): answer with what you have"
            )
        self.queries.append(query)
        count = max(1, min(MAX_RESULTS, int(count)))
        key = f"search\x00{self.provider.name}\x00{count}\x00{query}"
        async with self._lock(key):
            cached = self.cache.get(key)
            if not _search_entry(cached):
                if self._search_client is None:
                    raise RuntimeError("WebResearch is used outside its 'async with' block")
                try:
                    results = await self.provider.search(self._search_client, query, count)
                except SearchError as exc:
                    self.failures.append(f"web_search: {exc}")
                    return f"web_search failed: {exc}"
                cached = [[r.title, r.url, r.snippet] for r in results]
                self.cache.put(key, cached)
        results = [SearchResult(*item) for item in cached]
        for result in results:
            self.result_urls.setdefault(result.url, None)
            self.known.add(normalize_url(result.url))
        if not results:
            return f'web_search ({self.provider.label}): no results for "{query}"'
        listing = "\n".join(
            f"{n}. {r.title or '(no title)'}\n   URL: {r.url}\n   {r.snippet}" for n, r in enumerate(results, 1)
        )
        body = wrap_untrusted(listing, source=f"{self.provider.label} results for: {query}")
        return (
            f'web_search ({self.provider.label}): {len(results)} result(s) for "{query}"\n{body}\n'
            "Read a page with fetch_url before relying on it; list every URL you rely on in sources."
        )

    async def fetch_url(self, url: str) -> str:
        """Fetch a public web page (http or https) and return its text (untrusted data, at most 20,000 characters).

        Args:
            url: the page's full URL, e.g. one web_search returned
        """
        url = str(url).strip()
        if self.fetches >= self.max_fetches:
            return f"fetch_url limit reached ({self.max_fetches} pages for this question): answer with what you have"
        self.fetches += 1
        key = f"fetch\x00{url}"
        async with self._lock(key):
            cached = self.cache.get(key)
            if not _fetch_entry(cached):
                if self._fetch_client is None:
                    raise RuntimeError("WebResearch is used outside its 'async with' block")
                try:
                    page = await asyncio.wait_for(
                        fetch_page(self._fetch_client, url, allow_loopback=self.allow_loopback), FETCH_DEADLINE_S
                    )
                except TimeoutError:
                    return self._refused(url, f"no answer within {FETCH_DEADLINE_S:g} s")
                except FetchRefused as exc:
                    return self._refused(url, str(exc))
                cached = {
                    "final_url": page.final_url,
                    "status": page.status,
                    "content_type": page.content_type,
                    "text": page.text,
                    "truncated": page.truncated,
                }
                self.cache.put(key, cached)
        asked, final = shown_url(url), shown_url(str(cached["final_url"]))  # a redirect's Location is the page's
        self.read_urls.setdefault(final, None)
        self.known.update({normalize_url(asked), normalize_url(final)})
        text = str(cached["text"]) + ("\n[cut here: the page is longer]" if cached["truncated"] else "")
        moved = f", redirected to {final}" if final != asked else ""
        kind = shown_url(str(cached["content_type"]))[:100]
        header = f"fetch_url: {asked} (HTTP {cached['status']}, {kind}, {len(text):,} characters{moved})"
        return f"{header}\n{wrap_untrusted(text, url=final)}"

    def _refused(self, url: str, reason: str) -> str:
        reason = clean_text(self.provider.masked(reason))
        self.failures.append(f"fetch_url {shown_url(url)[:200]}: {reason}")
        return f"fetch_url {reason if reason.startswith('refused') else 'failed: ' + reason}"

    def _lock(self, key: str) -> asyncio.Lock:
        """One request per key at a time: parallel tool calls for the same query make one HTTP call."""
        return self._locks.setdefault(key, asyncio.Lock())

    # ------------------------------------------------------------------ the answer

    def used(self) -> bool:
        return bool(self.queries or self.fetches)

    def summary(self) -> str:
        """``Brave Search: 2 searches, 1 page read``."""
        searches = f"{len(self.queries)} search{'es' if len(self.queries) != 1 else ''}"
        pages = f"{len(self.read_urls)} page{'s' if len(self.read_urls) != 1 else ''} read"
        return f"{self.provider.label}: {searches}, {pages}"

    def sources(self, cited: Sequence[str]) -> tuple[list[str], list[str]]:
        """The answer's sources and the cited URLs dropped because no tool returned them (see the module doc)."""
        kept: list[str] = []
        dropped: list[str] = []
        mentioned: set[str] = set()
        for entry in cited:
            urls = [normalize_url(u) for u in _URL.findall(entry)]
            recalled = entry.strip().lower().startswith("from model knowledge")  # labelled as unchecked: kept
            if urls and not recalled and not any(u in self.known for u in urls):
                dropped.extend(_URL.findall(entry))
                continue
            mentioned.update(urls)
            kept.append(entry)
        kept += [u for u in self.read_urls if normalize_url(u) not in mentioned]
        mentioned.update(normalize_url(u) for u in self.read_urls)
        kept += [f"{NOT_READ}{u}" for u in self.result_urls if normalize_url(u) not in mentioned]
        return kept, dropped


def _search_entry(value: object) -> TypeGuard[list[list[str]]]:
    """A cached search answer of the right shape (the file may be from another version, or damaged)."""
    return isinstance(value, list) and all(
        isinstance(item, list) and len(item) == 3 and all(isinstance(part, str) for part in item) for item in value
    )


def _fetch_entry(value: object) -> TypeGuard[dict[str, Any]]:
    """A cached page of the right shape."""
    return isinstance(value, dict) and {"final_url", "status", "content_type", "text", "truncated"} <= set(value)


def shown_url(url: str) -> str:
    """A URL as the model and the sources see it: no whitespace or control characters, masked, bounded."""
    return clean_text("".join(url.split()))[:500]


def normalize_url(url: str) -> str:
    """A URL as compared for citations: scheme and host lowercased, no fragment, no trailing slash or punctuation."""
    url = url.strip().rstrip(".,;:)]}>'\"")
    url = url.split("#", 1)[0]
    match = re.match(r"(?i)(https?://)([^/?]*)(.*)", url)
    if match is None:
        return url
    scheme, host, rest = match.groups()
    return f"{scheme.lower()}{host.lower()}{rest}".rstrip("/")
