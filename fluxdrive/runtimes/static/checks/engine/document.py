"""A markdown document as a document check receives it: headings and which lines are code."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Heading:
    """A markdown heading: 1-based line, level and text."""

    line: int
    level: int
    text: str


@dataclass
class DocModule:
    """A markdown document with its headings and fenced-code line mask."""

    path: str
    text: str
    exists: Callable[[str], bool] = lambda _path: True
    lines: list[str] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    in_code: list[bool] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.lines = self.text.splitlines()
        fence: str | None = None
        for number, line in enumerate(self.lines, start=1):
            stripped = line.lstrip()
            marker = re.match(r"(`{3,}|~{3,})", stripped)
            if marker and (fence is None or marker.group(1).startswith(fence)):
                fence = None if fence else marker.group(1)[:3]
                self.in_code.append(True)
                continue
            self.in_code.append(fence is not None)
            heading = re.match(r"^(#{1,6})\s+(.+?)\s*#*\s*$", line)
            if heading and fence is None:
                self.headings.append(Heading(number, len(heading.group(1)), heading.group(2).strip()))

    def prose(self) -> Iterator[tuple[int, str]]:
        """(line number, text) of every line outside code fences."""
        for number, (line, code) in enumerate(zip(self.lines, self.in_code, strict=True), start=1):
            if not code:
                yield number, line

    def section_of(self, line: int) -> str:
        """The heading text a line falls under (or the document's file name)."""
        current = self.path.rsplit("/", 1)[-1]
        for heading in self.headings:
            if heading.line > line:
                break
            current = heading.text
        return current
