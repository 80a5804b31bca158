"""Run a function as soon as one of some modules has been imported, while a block runs.

The guard that refuses the library's answer (``refuse.py``) swaps the code of functions it
can reach. A twin whose module nobody has imported yet (transformers' GPT-J or Llama
modeling code takes seconds to import) is refused the moment an answer imports it instead:
the import runs as usual, then ``then()`` swaps what has just become reachable, before the
``import`` statement returns to the answer.
"""

import contextlib
import importlib.abc
import sys
from collections.abc import Callable, Collection, Iterator


class _LoaderThen(importlib.abc.Loader):
    """``loader``, with ``then()`` called once the module has run; the module keeps
    ``loader`` as its own."""

    def __init__(self, loader: importlib.abc.Loader, then: Callable[[], None]):
        self._loader, self._then = loader, then

    def __getattr__(self, name: str):  # get_source, get_code, get_resource_reader...
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        module.__spec__.loader = module.__loader__ = self._loader
        self._loader.exec_module(module)
        self._then()


class _Watch(importlib.abc.MetaPathFinder):
    """Finds nothing itself: for a module in ``names``, it asks the finders after it and
    hands back their spec with the loader wrapped."""

    def __init__(self, names: Collection[str], then: Callable[[], None]):
        self.names, self.then = frozenset(names), then

    def find_spec(self, name, path=None, target=None):
        if name not in self.names:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None or (spec := find(name, path, target)) is None:
                continue
            if spec.loader is not None:
                spec.loader = _LoaderThen(spec.loader, self.then)
            return spec
        return None


@contextlib.contextmanager
def after_import(names: Collection[str], then: Callable[[], None]) -> Iterator[None]:
    """While the block runs, ``then()`` is called each time a module in ``names`` has been
    imported (a name that is no module is never imported, and costs nothing)."""
    if not names:
        yield
        return
    watch = _Watch(names, then)
    sys.meta_path.insert(0, watch)
    try:
        yield
    finally:
        sys.meta_path.remove(watch)
