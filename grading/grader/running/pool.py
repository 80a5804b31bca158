"""Run grading jobs side by side: a local pool, or a Dask cluster, through one code path.

Both are ``concurrent.futures`` executors: a ``ThreadPoolExecutor`` here (each job's work
is an nbgrader process, so threads are enough), or the executor of a
``dask.distributed.Client`` connected to ``tcp://host:8786``. A progress bar shows
done / total, failures so far and the time left.
"""

import contextlib
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, ThreadPoolExecutor, as_completed

from tqdm.auto import tqdm

from grader.running.worker import Job, Result, grade


@contextlib.contextmanager
def executor(workers: int, scheduler: str | None = None) -> Iterator[Executor]:
    """A pool of ``workers`` threads, or the Dask cluster at ``scheduler``."""
    if scheduler:
        from distributed import Client

        with Client(scheduler) as client:
            yield client.get_executor(pure=False)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            yield pool


def run(
    jobs: list[Job],
    workers: int,
    scheduler: str | None = None,
    task: Callable[[Job], Result] = grade,
    progress: bool = True,
) -> Iterable[Result]:
    """Results of ``task`` on each job, as they finish (not in order)."""
    if not jobs:
        return
    with executor(workers, scheduler) as pool, tqdm(
        total=len(jobs), unit="submission", disable=not progress, desc="autograde"
    ) as bar:
        futures = {pool.submit(task, job): job for job in jobs}
        failures = 0
        for future in as_completed(futures):
            job = futures[future]
            try:
                result = future.result()
            except Exception as error:  # noqa: BLE001 - a lost worker must not lose the rest
                result = Result(job.assignment, job.student, graded=False,
                                reason=f"the grading job failed: {type(error).__name__}: {error}")
            failures += not result.graded
            bar.set_postfix(failures=failures)
            bar.update()
            yield result
