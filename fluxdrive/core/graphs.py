"""Strongly connected components of a directed graph, for the import graph and for regex automata alike.

Iterative Tarjan (no recursion: an import graph or an automaton of a long
pattern is deeper than Python's stack), components in the order Tarjan closes
them; successors are visited in the order ``successors`` gives them, so a
caller that wants a deterministic result passes sorted nodes and successors.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import TypeVar

Node = TypeVar("Node", bound=Hashable)


def strongly_connected(nodes: Iterable[Node], successors: Callable[[Node], Iterable[Node]]) -> list[list[Node]]:
    """Every strongly connected component reachable from ``nodes``, one list of nodes each."""
    index: dict[Node, int] = {}
    low: dict[Node, int] = {}
    stack: list[Node] = []
    on_stack: set[Node] = set()
    found: list[list[Node]] = []
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work: list[tuple[Node, Iterator[Node]]] = [(root, iter(successors(root)))]
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:  # go down; this node's iterator resumes when the child is done
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(successors(child))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component: list[Node] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    found.append(component)
    return found
