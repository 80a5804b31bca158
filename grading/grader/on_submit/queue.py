"""The queue of the grading service: a few jobs at once, never two of one key at once.

    queue = KeyedQueue(workers=2, task=handle)      handle(key) does one key's work
    queue.submit(("ada", "04_alpha3_by_hand"), "ada+04_alpha3_by_hand+2026-...")
    queue.busy(key)                                  waiting or running
    queue.close()                                    forget what waits, wait for what runs

``submit`` never blocks: the work runs on ``workers`` threads, so a slow submission holds
one thread and the others go on. A key is never run by two threads at once: submitting a
key that runs already, with another ``version`` (a newer submission), runs it once more
when the running one ends; with the same version it changes nothing.
"""

import logging
import threading
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor

log = logging.getLogger(__name__)


class KeyedQueue:
    """``task(key)`` on ``workers`` threads, one thread per key at a time."""

    def __init__(self, workers: int, task: Callable[[Hashable], None]):
        if not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers: expected a whole number >= 1, got {workers!r}")
        self.task = task
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="grading")
        self.lock = threading.Lock()
        self.versions: dict[Hashable, object] = {}  # the version each busy key runs for
        self.again: dict[Hashable, object] = {}  # busy keys to run once more, for a version

    def busy(self, key: Hashable) -> bool:
        with self.lock:
            return key in self.versions

    def submit(self, key: Hashable, version: object = None) -> None:
        """Run ``task(key)`` soon; once more after the running one if ``version`` is new."""
        with self.lock:
            if key not in self.versions:
                self.versions[key] = version
                self.pool.submit(self._run, key)
            elif self.versions[key] != version:
                self.again[key] = version

    def _run(self, key: Hashable) -> None:
        while True:
            try:
                self.task(key)
            except Exception:  # one key's failure must not stop the others
                log.exception("grading %s failed", key)
            with self.lock:
                if key not in self.again:
                    del self.versions[key]
                    return
                self.versions[key] = self.again.pop(key)

    def close(self) -> None:
        """Drop the keys that wait for a thread; return when the running ones are done."""
        self.pool.shutdown(wait=True, cancel_futures=True)
