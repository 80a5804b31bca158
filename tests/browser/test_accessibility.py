"""The pages the workbook writes meet WCAG 2.1 A and AA, as axe-core checks them in Chromium.

The course's own pages must have no violation: every slide of the nine decks (reveal.js's
print view lays every slide and fragment out at once; none may stay marked hidden), a
student's feedback pages (one right, one blank submission of 04, graded and given feedback
as ``make autograde`` and ``make feedback`` do), the class report, and every page of the
documentation site as ``make docs`` builds it. Their figures must say what they show: no
image may carry nbconvert's fallback text or an empty one. The widgets a deck draws (with
ipywidgets' HTML manager), JupyterLab with a notebook open and nbgrader's Formgrader are
someone else's: the violations listed in KNOWN_* are theirs, and any other fails the test.
"""

import re
import shutil

import pytest

from tests.browser import axe
from tests.browser.conftest import GRADED
from tests.browser.course import copy_into, release, solution
from tests.browser.notebook_page import open_in_lab
from tests.conftest import ASSIGNMENTS
from tests.notebooks.test_docs import DOC_PAGES, DOCS, build
from tools import slides

FALLBACK_ALT = "No description has been provided for this image"
# The notebooks' figures; not those a saved widget draws in a deck: ipywidgets' HTML manager
# writes an image without alt (its Image view, and JupyterLab's image renderer in an Output).
IMAGES_WITHOUT_TEXT = """fallback => [...document.images]
    .filter(img => !img.closest(".jupyter-widgets, .widget-output"))
    .filter(img => !(img.getAttribute("alt") || "").trim() || img.alt === fallback)
    .map(img => img.outerHTML.slice(0, 120))"""
TYPESET = "() => window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0"
# A slide of the print view marked as off screen (reveal.js's print view lays them all out).
PRINT_HIDDEN = ".reveal .pdf-page section[hidden], .reveal .pdf-page section[aria-hidden]"

# A feedback page loads MathJax 2.7.7 from cdnjs; the tests have no network, and get the
# decks' pinned copy of MathJax 2 (slides/assets) instead (its latest.js, run from a page,
# loads the MathJax.js beside it).
MATHJAX_CDN = re.compile(r"https://cdnjs\.cloudflare\.com/ajax/libs/mathjax/[^/]+/([^?]+)")

# Sphinx's default MathJax, from jsDelivr.
SPHINX_MATHJAX = re.compile(r"https://cdn\.jsdelivr\.net/npm/mathjax@")

# JupyterLab 4.6.6's own, with 04 open (no upstream issue is cited: none could be looked up
# from this offline machine).
KNOWN_IN_JUPYTERLAB = (
    axe.Known("aria-allowed-attr", r"jp-button|validate-button|jp-DebuggerBugButton",
              "JupyterLab's toolbar buttons (the jp-button web component, nbgrader's Validate "
              "among them) carry aria-pressed on a role that does not allow it"),
    axe.Known("aria-input-field-name", r"\.cm-content",
              "each cell's CodeMirror editor is a textbox without an accessible name"),
    axe.Known("aria-required-children", r"\.jp-WindowedPanel-viewport",
              "the notebook's cell list has role=feed, but its cells are not articles"),
    axe.Known("button-name", r"button\[data-heading-level",
              "the button that collapses a markdown heading's section has no name"),
    axe.Known("scrollable-region-focusable", r"\.jp-RenderedMarkdown",
              "a rendered markdown cell wider than the panel (04's table) scrolls sideways "
              "but cannot take the keyboard's focus"),
)
# The saved widgets a deck draws with ipywidgets' HTML manager (@jupyter-widgets/html-manager
# 1.0.15, slides.ASSETS): the course's decks hold nothing else of someone else's. (No upstream
# issue is cited: none could be looked up from this offline machine.)
KNOWN_IN_DECKS = (
    axe.Known("aria-input-field-name", r"\.noUi-handle|\.noUi-origin > div",
              "a slider's handle (noUiSlider) has role=slider but no name: the slider's "
              "description is a label tied to no control"),
    axe.Known("image-alt", r"\.widget-image|\.jp-mod-trusted[^ ]* > img$",
              "an Image widget, and a figure an Output widget draws with JupyterLab's image "
              "renderer, have no alt (assert_figures_described leaves them out for this)"),
)
# nbgrader 0.9.6's Formgrader (Manage Assignments, Bootstrap 3), on a course without an
# exchange folder (hence its warning).
KNOWN_IN_FORMGRADER = (
    axe.Known("color-contrast", r"\.breadcrumb|\.label-info|#warning-exchange",
              "Bootstrap 3's grey breadcrumb (4.1:1), white on light-blue labels (2.1:1), "
              "the link in the warning (4.3:1)"),
    axe.Known("html-has-lang", r"^html$", "Formgrader's pages do not say their language"),
    axe.Known("link-in-text-block", r"#warning-exchange",
              "the warning's link is told apart by colour alone"),
    axe.Known("link-name", r"\.(edit|assign|preview) > a",
              "the edit, generate and preview links are icons without a name"),
    axe.Known("list", r"^ul$", "the side menu's list holds role=presentation items"),
    axe.Known("nested-interactive", r"#heading(One|Config)",
              "the collapsible panels' headings (role=tab) hold links"),
)


def assert_no_violation(page, known: tuple[axe.Known, ...] = ()) -> None:
    found = axe.unexplained(axe.violations(page), known)
    assert not found, axe.report(found)


def assert_figures_described(page) -> None:
    undescribed = page.evaluate(IMAGES_WITHOUT_TEXT, FALLBACK_ALT)
    assert not undescribed, f"images without a text alternative: {undescribed}"


@pytest.fixture(scope="module")
def decks(tmp_path_factory):
    """The nine decks, as ``make slides`` writes them, with the pinned assets."""
    if shutil.which("npm") is None:
        pytest.fail("npm is missing: `make test-browser` installs Debian's nodejs and npm")
    slides.install_assets()
    folder = tmp_path_factory.mktemp("decks")
    return {name: slides.write_deck(solution(name), folder, assets_dir=slides.SLIDES / "assets")
            for name in ASSIGNMENTS}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_slide_of_a_deck_meets_wcag_aa(assignment, page, steps, decks):
    with steps(f"opens {assignment}'s deck with every slide laid out"):
        page.goto(decks[assignment].as_uri() + "?print-pdf")
        page.locator(".reveal.ready").wait_for(state="attached")
        page.locator(".reveal .pdf-page").first.wait_for(state="attached")
        page.wait_for_function(TYPESET)
    with steps("checks it with axe-core"):
        # No slide hidden from screen readers: reveal.js 4.6.1 leaves all but the first
        # marked so (the deck's own script unmarks them). axe-core would then check the
        # title slide alone, and report the marks (aria-hidden-focus) only where it does not
        # take a title slide filling 3/4 of the window for an open dialog (09's does not).
        assert page.locator(PRINT_HIDDEN).count() == 0, "slides left hidden in the print view"
        assert_no_violation(page, KNOWN_IN_DECKS)
        assert_figures_described(page)


@pytest.fixture(scope="module")
def docs_site(tmp_path_factory):
    """The documentation site, built as ``make docs`` builds it."""
    out = tmp_path_factory.mktemp("site")
    result = build(DOCS, out)
    assert result.returncode == 0, result.stderr
    return out


@pytest.mark.parametrize("name", DOC_PAGES)
def test_every_page_of_the_documentation_meets_wcag_aa(name, context, page, steps, docs_site):
    # Sphinx loads MathJax from a CDN: offline (as here) the formulas stay as TeX source.
    context.route(SPHINX_MATHJAX, lambda route: route.fulfill(
        body="", content_type="application/javascript"))
    with steps(f"opens the documentation's page {name}"):
        page.goto((docs_site / f"{name}.html").as_uri())
        page.wait_for_load_state("load")
    with steps("checks it with axe-core"):
        assert_no_violation(page)
        assert_figures_described(page)


def serve_mathjax_locally(route) -> None:
    """Answer a request for cdnjs's MathJax 2 with the decks' pinned copy of it."""
    file = MATHJAX_CDN.match(route.request.url)[1]
    route.fulfill(path=slides.SLIDES / "assets" / "mathjax" / file)


@pytest.mark.parametrize("student", ["right", "blank"])
def test_a_feedback_page_meets_wcag_aa(student, context, page, steps, graded_course):
    feedback = graded_course.folder("feedback", student, GRADED) / f"{GRADED}.html"
    slides.install_assets()
    context.route(MATHJAX_CDN, serve_mathjax_locally)
    with steps(f"opens the feedback page of the {student} submission"):
        page.goto(feedback.as_uri())
        page.wait_for_function(TYPESET)
    with steps("checks it with axe-core"):
        assert_no_violation(page)
        assert_figures_described(page)


def test_the_class_report_meets_wcag_aa(page, steps, graded_course):
    with steps("opens the class report"):
        page.goto((graded_course.root / "report.html").as_uri())
    with steps("checks it with axe-core"):
        assert_no_violation(page)
        assert_figures_described(page)


def test_jupyterlab_with_a_notebook_open_has_only_its_known_violations(
        page, steps, student_server, workspace):
    with steps(f"opens {GRADED} in JupyterLab"):
        open_in_lab(page, student_server, copy_into(release(GRADED), workspace))
    with steps("checks the page with axe-core"):
        assert_no_violation(page, KNOWN_IN_JUPYTERLAB)


def test_formgrader_has_only_its_known_violations(page, steps, ta_server):
    with steps("opens Formgrader"):
        page.goto(ta_server.page_url("formgrader"))
        page.get_by_role("heading", name="Manage Assignments").wait_for()
        page.locator("table tbody tr td:first-child").nth(len(ASSIGNMENTS) - 1).wait_for()
    with steps("checks the page with axe-core"):
        assert_no_violation(page, KNOWN_IN_FORMGRADER)
