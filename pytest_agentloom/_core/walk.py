"""Walking a graph depth first without recursion: step dependencies, nested values.

Python's recursion limit is about 1,000 frames, and a workflow may chain 2,000 steps or a value nest
as deep as a file allows, so nothing that walks user data recurses.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import TypeVar

__all__ = ["post_order"]

T = TypeVar("T")


def post_order(roots: Iterable[T], children: Callable[[T], Iterable[T]],
               key: Callable[[T], Hashable] = id) -> Iterator[T]:
    """Each node reachable from ``roots``, once, after every node it reaches.

    A child that is an ancestor of the node being walked (a loop) is not followed, so a loop ends the walk
    instead of hanging it. ``key`` tells nodes apart (``id`` by default: the same object is one node).
    """
    done: set[Hashable] = set()
    walking: set[Hashable] = set()  # the current path: expanded, not finished
    for root in roots:
        stack = [root]
        while stack:
            node = stack[-1]
            name = key(node)
            if name in done:
                stack.pop()
                continue
            if name not in walking:
                walking.add(name)
                todo = [child for child in children(node) if key(child) not in done and key(child) not in walking]
                if todo:
                    stack.extend(todo)
                    continue
            stack.pop()
            walking.discard(name)
            done.add(name)
            yield node
