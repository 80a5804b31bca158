"""An instructor's deck (``make slides``) opened from disk in Chromium with the network cut:
reveal.js runs, the math is typeset, the saved widgets are drawn, and every file it asks for
is a local one."""

import shutil

import pytest

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

    assert not outside, f"the deck asked the network for {outside}"
