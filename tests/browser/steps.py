"""Named steps of a browser test, each ending in a screenshot, and the page's own errors.

``Steps`` wraps each thing a person does (``with steps("moves the slider"): ...``): after
the step a screenshot ``NN-moves-the-slider.png`` is saved; if the step fails, the
screenshot is ``NN-moves-the-slider-FAILED.png`` and the error says which step failed and
where its screenshot is. ``PageErrors`` records what the browser reports: uncaught
exceptions of the page's scripts and the messages logged as errors on its console; a
test fails on any of them but the known noise of Notebook 7 listed here.
"""

import re
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse

from playwright.sync_api import BrowserContext, Page

# Taller pages (a deck's print view lays every slide out, 90,000 px for 08) take tens of
# seconds to shoot whole: they are shot as the window shows them.
FULL_PAGE_MAX_PX = 20_000


def slug(text: str) -> str:
    """``text`` as a file name: lower case words joined by hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60]


class Steps:
    """The steps of one test, their screenshots saved in ``folder``."""

    def __init__(self, page: Page, folder: Path):
        self.page = page
        self.folder = folder
        self.count = 0

    def screenshot(self, stem: str) -> Path:
        """Save what the current page shows as ``folder/stem.png``: the whole page, or the
        window alone on a page taller than ``FULL_PAGE_MAX_PX``."""
        path = self.folder / f"{stem}.png"
        self.folder.mkdir(parents=True, exist_ok=True)
        height = self.page.evaluate("document.documentElement.scrollHeight")
        self.page.screenshot(path=path, full_page=height <= FULL_PAGE_MAX_PX)
        return path

    @contextmanager
    def __call__(self, name: str):
        """Run the body as step ``name``: screenshot after it, or on failure, named."""
        self.count += 1
        stem = f"{self.count:02d}-{slug(name)}"
        try:
            yield
        except Exception as error:
            try:
                where = f"screenshot {self.screenshot(stem + '-FAILED')}"
            except Exception as no_picture:  # the page itself may be gone
                where = f"no screenshot ({no_picture.__class__.__name__})"
            error.add_note(f"browser step {self.count} failed: {name!r}; {where}")
            raise
        self.screenshot(stem)


# What Notebook 7.6.5 itself reports on every load of its pages, with or without this
# course's extensions and settings (each disabled in turn): an uncaught TypeError in its
# keyboard-shortcut settings code, and two errors its file browser logs. The pages work,
# and nothing a person does there changes them. Anything else fails the test.
KNOWN_NOISE = {
    ("uncaught", "/tree", "Cannot read properties of undefined (reading 'schema')"),
    ("uncaught", "/notebooks/", "Cannot read properties of undefined (reading 'schema')"),
    ("console error", "/tree", "Cannot convert undefined or null to object"),
    ("console error", "/tree", "Cannot read properties of null (reading 'updateRenderOption')"),
}


def page_path(page) -> str:
    """The path of ``page``'s address ('?' when the page is gone)."""
    return urlparse(page.url).path if page else "?"


class PageErrors:
    """Uncaught exceptions and console errors of every page of a browser context."""

    def __init__(self, context: BrowserContext):
        self.reported: list[str] = []
        self.known: list[str] = []
        context.on("weberror", self.record_uncaught)
        context.on("console", self.record_console)

    def record(self, kind: str, path: str, message: str, where: str) -> None:
        """File a report as known noise or as a problem."""
        known = any(kind == known_kind and path.startswith(prefix) and message == text
                    for known_kind, prefix, text in KNOWN_NOISE)
        (self.known if known else self.reported).append(
            f"{kind}: {message} (page {path}; {where})")

    def record_uncaught(self, web_error) -> None:
        """An exception no script caught, with the top of its stack."""
        stack = (web_error.error.stack or "").splitlines()[1:3]
        self.record("uncaught", page_path(web_error.page), web_error.error.message,
                    " / ".join(line.strip() for line in stack))

    def record_console(self, message) -> None:
        """A console message of type error, with the script that logged it."""
        if message.type == "error":
            self.record("console error", page_path(message.page), message.text,
                        message.location.get("url", "?"))
