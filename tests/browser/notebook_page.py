"""A notebook open in JupyterLab or Notebook 7, driven as a student drives it.

Cells are selected with clicks on their prompts and run with Ctrl+Enter, code is typed
into a cell's editor, and the notebook is saved with Ctrl+S. Both front ends draw a
notebook with the same components (``.jp-Notebook``, ``.jp-Cell``, the input prompt
``[n]:``), so one class serves both. The server renders every cell (no windowing, see
``jupyter_server``), so cell ``i`` of the file is the ``i``-th ``.jp-Cell`` on the page.

A blank release raises in its answer and test cells; ``run_in_sections`` runs a notebook
top to bottom past them, as a student reading it would, every cell once and in order.
"""

import re
import time
from collections.abc import Callable
from pathlib import Path

import nbformat
from playwright.sync_api import Page

PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
CELLS = f"{PANEL} .jp-Notebook .jp-Cell"
KERNEL_STATUS = f"{PANEL} .jp-Notebook-ExecutionIndicator"
COUNTED = re.compile(r"\[\d+\]:")  # the prompt of a cell that ran; "[*]:" runs or waits
RUN_TIMEOUT_S = 300
POLL_S = 0.25


class NotebookPage:
    """The notebook in front on ``page``; ``path`` is its file on disk (the server's copy)."""

    def __init__(self, page: Page, path: Path):
        self.page = page
        self.path = path

    # --- looking ------------------------------------------------------------------------

    def cell(self, index: int):
        """The locator of cell ``index`` (0-based, markdown cells included)."""
        return self.page.locator(CELLS).nth(index)

    def prompt(self, index: int):
        """The locator of cell ``index``'s prompt area (a click there selects the cell)."""
        return self.cell(index).locator(".jp-InputPrompt").first

    def cells_js(self, expression: str):
        """Evaluate ``expression`` over ``cells``, the array of the page's cell elements."""
        return self.page.evaluate(
            f"() => {{ const cells = [...document.querySelectorAll({CELLS!r})]; "
            f"return {expression}; }}")

    def prompts(self) -> list[str | None]:
        """Each cell's input prompt text (None for markdown and raw cells)."""
        return self.cells_js("cells.map(cell => cell.classList.contains('jp-CodeCell') "
                             "? cell.querySelector('.jp-InputPrompt').innerText.trim() : null)")

    def selected(self) -> list[int]:
        """The indices of the selected cells (the active one included)."""
        return self.cells_js("cells.flatMap((cell, i) => cell.classList.contains('jp-mod-active')"
                             " || cell.classList.contains('jp-mod-selected') ? [i] : [])")

    def output_text(self, index: int) -> str:
        """The text shown in cell ``index``'s output area."""
        return self.cell(index).locator(".jp-OutputArea").inner_text()

    def kernel_idle(self) -> bool:
        """True when the notebook's kernel indicator says idle."""
        return self.page.get_attribute(KERNEL_STATUS, "data-status") == "idle"

    def saved(self) -> nbformat.NotebookNode:
        """The notebook as last saved to disk."""
        return nbformat.read(self.path, as_version=4)

    # --- doing --------------------------------------------------------------------------

    def wait_until_open(self, timeout_s: float = 120) -> None:
        """Wait until every cell of the file is drawn and the kernel is started and idle.

        A notebook first comes up as one empty code cell, until its content has loaded.
        """
        cells = len(nbformat.read(self.path, as_version=4).cells)
        self.page.wait_for_function(
            f"document.querySelectorAll({CELLS!r}).length === {cells}",
            timeout=timeout_s * 1000)
        self.page.wait_for_selector(f"{KERNEL_STATUS}[data-status='idle']",
                                    timeout=timeout_s * 1000)

    def select(self, first: int, last: int | None = None, attempts: int = 5) -> None:
        """Select cells ``first``..``last`` in command mode: a click, then a shift-click.

        Outputs still being drawn above may move a cell under the pointer, so the clicks
        are repeated until exactly those cells are selected.
        """
        last = first if last is None else last
        for _ in range(attempts):
            self.page.keyboard.press("Escape")
            self.prompt(first).click()
            if last != first:
                self.prompt(last).click(modifiers=["Shift"])
            if self.selected() == list(range(first, last + 1)):
                return
        raise AssertionError(f"cells {first}..{last} could not be selected: {self.selected()}")

    def type_code(self, index: int, code: str) -> None:
        """Replace the code of cell ``index`` with ``code``, typed into its editor."""
        self.cell(index).locator(".cm-content").click()
        self.page.keyboard.press("ControlOrMeta+A")
        self.page.keyboard.insert_text(code)
        self.page.keyboard.press("Escape")

    def run_cell(self, index: int, timeout_s: float = RUN_TIMEOUT_S) -> None:
        """Run cell ``index`` alone (Ctrl+Enter) and wait until it has finished."""
        self.select(index)
        self.run_and_wait(index, self.run_selected, time.monotonic() + timeout_s)

    def run_in_sections(self, alone: set[int], last: int | None = None,
                        timeout_s: float = RUN_TIMEOUT_S) -> None:
        """Run the code cells up to cell ``last`` (default: all) in order, each once.

        The cells in ``alone`` (those that may raise, such as a blank release's answer
        and test cells) run on their own, the cells between them together, selected and
        run with Ctrl+Enter. Not one run of them all: the browser sends a run's cells to
        the kernel at once, and after a cell raises the kernel drops only those that have
        already arrived (jupyter_client#569), so some cells below an error would still
        run, without the ones above them. A section stopped by another cell that raises
        goes on from its first cell that has not run.
        """
        deadline = time.monotonic() + timeout_s
        while (section := self.next_section(alone, last)) is not None:
            self.select(section[0], section[-1])
            self.run_and_wait(section[0], self.run_selected, deadline)

    def next_section(self, alone: set[int], last: int | None) -> list[int] | None:
        """The code cells to run next: from the first that has not run, to before ``alone``."""
        prompts = self.prompts()
        last = len(prompts) - 1 if last is None else last
        code_cells = [i for i, p in enumerate(prompts[: last + 1]) if p is not None]
        waiting = [i for i in code_cells if not COUNTED.fullmatch(prompts[i])]
        if not waiting:
            return None
        section = [waiting[0]]
        for index in code_cells:
            if index > section[-1] and section[0] not in alone and index not in alone:
                section.append(index)
            elif index > section[-1]:
                break
        return section

    def run_selected(self) -> None:
        """Run the selected cells and stay there (Ctrl+Enter)."""
        self.page.keyboard.press("ControlOrMeta+Enter")

    def run_and_wait(self, start: int, run: Callable[[], None], deadline: float) -> None:
        """Start a run with ``run()`` and wait until cell ``start`` has run and all is idle.

        Cell ``start`` must show a new count, nothing may run or wait, and the kernel must
        be idle, on two polls in a row: between two cells the kernel is idle for a moment.
        """
        before = self.prompts()[start]
        run()
        settled = 0
        while time.monotonic() < deadline:
            prompts = self.prompts()
            ran = prompts[start] != before and COUNTED.fullmatch(prompts[start] or "")
            settled = settled + 1 if ran and "[*]:" not in prompts and self.kernel_idle() else 0
            if settled == 2:
                return
            time.sleep(POLL_S)
        raise TimeoutError(f"cell {start} or a cell after it still runs or waits "
                           f"(prompts {self.prompts()})")

    def save(self, timeout_s: float = 30) -> None:
        """Save with Ctrl+S and wait until the file on disk has changed."""
        before = self.path.stat().st_mtime_ns
        self.page.keyboard.press("Escape")
        self.page.keyboard.press("ControlOrMeta+S")
        deadline = time.monotonic() + timeout_s
        while self.path.stat().st_mtime_ns == before:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.path.name} was not saved within {timeout_s} s")
            time.sleep(POLL_S)


def menu(page: Page, *labels: str) -> None:
    """Click through the menu bar of JupyterLab or Notebook 7: ``menu(page, "Run", ...)``."""
    top, *items = labels
    page.locator(".lm-MenuBar-itemLabel", has_text=exact(top)).click()
    for label in items:
        page.locator(".lm-Menu-itemLabel", has_text=exact(label)).first.click()


def exact(label: str) -> re.Pattern:
    """A pattern matching ``label`` and nothing longer (menus share prefixes)."""
    return re.compile(rf"^{re.escape(label)}$")


def open_in_lab(page: Page, server, notebook: Path) -> NotebookPage:
    """Open ``notebook`` (a file under the server's root) in JupyterLab, kernel ready.

    Each notebook gets a workspace of its own, named after its first folder under the
    root, so that JupyterLab does not bring back the tabs an earlier test left open.
    """
    path = notebook.relative_to(server.root)
    page.goto(server.page_url(f"lab/workspaces/{path.parts[0]}/tree/{path.as_posix()}"))
    opened = NotebookPage(page, notebook)
    opened.wait_until_open()
    return opened
