"""The controls of ipywidgets, used as a person uses them, and what they display.

Each control is found inside a widget's view by its description (the label on its left)
and changed with the mouse or keyboard: a slider's handle is dragged along its track, a
dropdown gets another option, a checkbox a click, a text box new text (and, for
``interact_manual``, a click on its button). ``Control.move`` returns the readout before
and after, so that a test can see that the control really moved.

What a widget displays is compared as pixels: ``displayed`` is a screenshot of the
output element (nothing, until an ``interact_manual`` has run once), and
``wait_for_new_picture`` waits until it differs from the one before the move and has
stopped changing (the kernel has redrawn and the page has painted).
"""

import re
import time
from dataclasses import dataclass

from playwright.sync_api import Locator

REDRAW_TIMEOUT_S = 90
POLL_S = 0.5


def labelled(view: Locator, kind: str, description: str) -> Locator:
    """The control of CSS class ``kind`` in ``view`` whose label reads ``description``."""
    label = re.compile(rf"^\s*{re.escape(description)}\s*$")
    return view.locator(f".{kind}").filter(
        has=view.page.locator(".widget-label, .widget-label-basic", has_text=label)
    ).first


@dataclass(frozen=True)
class Slider:
    """A slider (int, float or selection), dragged to ``to`` (0 = left end, 1 = right end)."""

    description: str
    to: float

    def move(self, view: Locator) -> tuple[str, str]:
        """Drag the handle to ``to`` of the track; returns the readout before and after."""
        slider = labelled(view, "widget-slider", self.description)
        readout = slider.locator(".widget-readout")
        before = readout.inner_text()
        slider.scroll_into_view_if_needed()
        handle = slider.locator(".noUi-handle").first.bounding_box()
        track = slider.locator(".noUi-target").first.bounding_box()
        mouse = view.page.mouse
        mouse.move(handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2)
        mouse.down()
        # Two steps of drag: each value the handle passes is drawn (continuous_update).
        mouse.move(track["x"] + self.to * track["width"], track["y"] + track["height"] / 2,
                   steps=2)
        mouse.up()
        return before, readout.inner_text()


@dataclass(frozen=True)
class Dropdown:
    """A dropdown, set to the option ``choose``."""

    description: str
    choose: str

    def move(self, view: Locator) -> tuple[str, str]:
        """Pick ``choose``; returns the selected option before and after."""
        select = labelled(view, "widget-dropdown", self.description).locator("select")
        before = select.input_value()
        select.select_option(label=self.choose)
        return before, select.input_value()


@dataclass(frozen=True)
class Checkbox:
    """A checkbox, clicked once."""

    description: str

    def move(self, view: Locator) -> tuple[str, str]:
        """Click the box; returns whether it was ticked before and after."""
        box = labelled(view, "widget-checkbox", self.description).locator("input")
        before = box.is_checked()
        box.click()
        return str(before), str(box.is_checked())


@dataclass(frozen=True)
class TextBox:
    """A text box given ``text``, then the button ``press`` clicked (interact_manual)."""

    description: str
    text: str
    press: str | None = None

    def move(self, view: Locator) -> tuple[str, str]:
        """Type ``text`` over the old one and confirm; returns the text before and after."""
        box = labelled(view, "widget-text", self.description).locator("input")
        before = box.input_value()
        box.fill(self.text)
        box.press("Enter")
        if self.press:
            view.locator(".widget-button", has_text=self.press).click()
        return before, box.input_value()


def displayed(output: Locator) -> bytes:
    """What ``output`` shows now, as the PNG bytes of its screenshot (b"" when empty)."""
    box = output.bounding_box()
    if not box or not box["width"] or not box["height"]:
        return b""
    return output.screenshot(animations="disabled")


def wait_for_new_picture(output: Locator, before: bytes,
                         timeout_s: float = REDRAW_TIMEOUT_S) -> bytes:
    """Wait until ``output`` shows something else than ``before``, and holds still."""
    deadline = time.monotonic() + timeout_s
    last = displayed(output)
    while time.monotonic() < deadline:
        time.sleep(POLL_S)
        now = displayed(output)
        if now != before and now == last:
            return now
        last = now
    raise AssertionError(f"the output did not change within {timeout_s:.0f} s")
