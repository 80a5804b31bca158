"""Fixtures of the grader tests."""

import os
import time

import pytest

from grader.running.sandbox import unavailable


@pytest.fixture(scope="session")
def sandbox():
    """The sandbox works here; on CI (root, bubblewrap installed by the setup) it must."""
    reason = unavailable()
    if reason and os.environ.get("CI"):
        pytest.fail(reason)
    if reason:
        pytest.skip(reason)


@pytest.fixture
def machine_five_hours_behind_utc(monkeypatch):
    """This process's local time zone is UTC-5 all year (POSIX ``EST5``), then as before:
    the zone in which a time without one (an LMS zip's) is read."""
    monkeypatch.setenv("TZ", "EST5")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()
