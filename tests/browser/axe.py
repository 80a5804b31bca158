"""axe-core, the accessibility engine, run on a page by Playwright.

``make test-browser`` installs axe-core (npm, pinned in the Makefile) into .venv/node.
``violations`` injects it into a page and runs the rules of WCAG 2.0 and 2.1, levels A
and AA; each element that breaks a rule is one ``Violation``. ``Known`` describes one a
page may have because it comes from someone else's code (JupyterLab, nbgrader):
``unexplained`` keeps the violations no ``Known`` entry describes. (axe's preload of the
style sheets is off: it fetches them again, which a page opened from disk may not.)
"""

import re
from dataclasses import dataclass

from playwright.sync_api import Page

from tests.browser.course import REPO

AXE_JS = REPO / ".venv" / "node" / "node_modules" / "axe-core" / "axe.min.js"
WCAG_21_AA = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa")
RUN_AXE = """async ([context, tags]) => {
    const result = await axe.run(context || document, {runOnly: {type: "tag", values: tags},
                                           resultTypes: ["violations"], preload: false});
    return result.violations.flatMap(rule => rule.nodes.map(node => ({
        rule: rule.id, impact: node.impact || rule.impact || "",
        target: node.target.flat(Infinity).join(" "),
        summary: (node.failureSummary || "").replace(/\\s+/g, " ").trim(),
        html: node.html.slice(0, 160)})));
}"""


@dataclass(frozen=True)
class Violation:
    """One element that breaks one rule: axe's rule id, the element's CSS selector."""

    rule: str
    impact: str
    target: str
    summary: str
    html: str

    def __str__(self) -> str:
        return f"{self.rule} ({self.impact}) at {self.target}: {self.summary} [{self.html}]"


@dataclass(frozen=True)
class Known:
    """Violations of ``rule`` at elements whose selector matches ``target`` (a regular
    expression), which are not the course's to fix; ``upstream`` says whose they are."""

    rule: str
    target: str
    upstream: str

    def describes(self, violation: Violation) -> bool:
        return violation.rule == self.rule and re.search(self.target, violation.target) is not None


def violations(page: Page, context: str | None = None) -> list[Violation]:
    """The WCAG 2.1 A and AA violations of ``page`` (or of the elements that the selector
    ``context`` picks), as axe-core finds them in the page as it is now."""
    if not AXE_JS.exists():
        raise FileNotFoundError(f"axe-core is missing at {AXE_JS}: `make test-browser` installs it")
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(path=AXE_JS)
    found = page.evaluate(RUN_AXE, [context, list(WCAG_21_AA)])
    return [Violation(**item) for item in found]


def unexplained(found: list[Violation], known: tuple[Known, ...] = ()) -> list[Violation]:
    """The violations of ``found`` that no entry of ``known`` describes."""
    return [v for v in found if not any(entry.describes(v) for entry in known)]


def report(found: list[Violation]) -> str:
    """``found``, one violation a line, for an assertion's message."""
    return f"{len(found)} WCAG 2.1 AA violation(s):\n" + "\n".join(map(str, found))
