"""An instructor's deck (``make slides``) opened from disk in Chromium with the network cut:
reveal.js runs, the math is typeset (with a MathML copy of each formula for screen readers),
the saved widgets are drawn, and every file it asks for is a local one. And the instructor
drives it from the keyboard alone: the space bar walks every slide, step and fragment,
Page Up goes back, Home returns to the title."""

import json
import shutil

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.course import REPO
from tools import slides

NOTEBOOK = REPO / "solutions" / "04_alpha3_by_hand" / "04_alpha3_by_hand.ipynb"
MATH = "span.MathJax, span.MathJax_CHTML, span.MathJax_SVG"
SLIDER = ".jupyter-widgets.widget-slider"
TYPESET = ("s => window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0"
           " && document.querySelectorAll(s).length > 0")
SHOWN_MATH = """s => [...document.querySelectorAll("section.present")].pop()
    .querySelectorAll(s).length >= 3 && [...document.querySelectorAll("section.present")].pop()
    .querySelector(s).getBoundingClientRect().width > 0"""
# MathJax's AssistiveMML: the picture of a formula is hidden from screen readers, and a
# MathML copy beside it is what they read. [formulas shown, formulas with that copy]
READABLE_MATH = """() => {
    const shown = [...document.querySelectorAll("section.present .MathJax_CHTML")];
    return [shown.length, shown.filter(f => f.firstElementChild.getAttribute("aria-hidden")
        && f.querySelector(":scope > .MJX_Assistive_MathML:not([aria-hidden]) > math")).length];
}"""
# reveal.js (loaded by require.js, so no global) follows the address: #/<slide>/<step>
GO_TO_SLIDE_OF = """selector => {
    const step = document.querySelector(selector).closest("section");
    const slide = step.parentElement.closest("section") || step;
    const h = [...document.querySelectorAll(".reveal .slides > section")].indexOf(slide);
    const v = slide === step ? 0 : [...slide.querySelectorAll(":scope > section")].indexOf(step);
    location.hash = `#/${h}/${v}`;
}"""


@pytest.fixture(scope="module")
def deck(tmp_path_factory):
    """04's deck, as ``make slides`` writes it, with the pinned assets of slides/assets."""
    if shutil.which("npm") is None:
        pytest.fail("npm is missing: `make test-browser` installs Debian's nodejs and npm")
    slides.install_assets()
    return slides.write_deck(NOTEBOOK, tmp_path_factory.mktemp("slides"),
                             assets_dir=slides.SLIDES / "assets")


def test_a_deck_from_disk_draws_its_math_and_widgets_without_the_network(
        context, page, steps, deck):
    """(The ``page`` fixture fails the test on any script error of the deck.)"""
    outside = []

    def local_only(route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    context.route("**/*", local_only)
    with steps("opens 04's deck from disk"):
        page.goto(deck.as_uri())
        page.locator(".reveal.ready").wait_for(state="attached")
        assert page.locator(".reveal .slides section").count() > 10

    with steps("sees the formulas typeset by the deck's own MathJax"):
        page.wait_for_function(TYPESET, arg=MATH)
        assert page.locator(".MathJax_Error").count() == 0

    with steps("goes to the softmax-scale slider, drawn from the saved widget state"):
        page.locator(SLIDER).first.wait_for(state="attached")
        page.evaluate(GO_TO_SLIDE_OF, SLIDER)
        page.locator(SLIDER).first.wait_for(state="visible")
        # the deck typesets a slide's math again when it is shown: c, q₃·k_j, 1/√d_k
        page.wait_for_function(SHOWN_MATH, arg=MATH)

    with steps("finds every formula shown readable by a screen reader"):
        shown, readable = page.evaluate(READABLE_MATH)
        assert shown >= 3 and readable == shown, f"{readable} of {shown} formulas have MathML"

    assert not outside, f"the deck asked the network for {outside}"


STEPS = ".reveal .slides section:not(:has(section))"  # a slide, or a step of a vertical stack
# Where the deck is (reveal.js's address, #/<slide>/<step>/<fragment>, and how many
# fragments are shown); the step shown is marked as visited.
POSITION = f"""() => {{
    document.querySelectorAll("{STEPS}.present").forEach(step => step.dataset.visited = "yes");
    return [location.hash, document.querySelectorAll(".reveal .slides .fragment.visible").length];
}}"""
MOVED = f"before => JSON.stringify(({POSITION})()) !== before"
LAST_MOVE_WAIT_MS = 3000


def test_an_instructor_drives_a_deck_and_its_fragments_from_the_keyboard(page, steps, deck):
    with steps("opens 04's deck and gives it the keyboard's focus"):
        page.goto(deck.as_uri())
        page.locator(".reveal.ready").wait_for(state="attached")
        page.locator("body").focus()
        total_steps = page.locator(STEPS).count()
        total_fragments = page.locator(".reveal .slides .fragment").count()
        assert total_fragments > 5   # 04 has 9: enough to walk forwards and back

    with steps("walks the deck with the space bar: every step, every fragment, in order"):
        where = page.evaluate(POSITION)
        for _ in range(2 * (total_steps + total_fragments)):
            page.keyboard.press("Space")
            try:
                page.wait_for_function(MOVED, arg=json.dumps(where), timeout=LAST_MOVE_WAIT_MS)
            except PlaywrightTimeout:
                break  # the last fragment of the last slide
            where = page.evaluate(POSITION)
        visited = page.locator(f"{STEPS}[data-visited]").count()
        assert visited == total_steps, f"{visited} of {total_steps} steps reached"
        assert where[1] == total_fragments, f"{where[1]} of {total_fragments} fragments shown"

    with steps("goes back with Page Up (a clicker's key) until a fragment hides, then Home"):
        for _ in range(total_steps):
            page.keyboard.press("PageUp")
            if page.evaluate(POSITION)[1] < total_fragments:
                break
        assert page.evaluate(POSITION)[1] == total_fragments - 1
        page.keyboard.press("Home")
        page.locator(".reveal .slides > section").first.and_(
            page.locator("section.present")).wait_for()
