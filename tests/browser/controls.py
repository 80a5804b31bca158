"""The controls of ipywidgets, used as a person uses them, and what they display.

Each control is found inside a widget's view by its description (the label on its left)
and changed with the mouse or keyboard: a slider's handle is dragged along its track, a
dropdown gets another option, a checkbox a click, a text box new text (and, for
``interact_manual``, a click on its button). ``Control.move`` returns the readout before
and after, so that a test can see that the control really moved. ``Control.press`` does
the same from the keyboard alone, as a student without a mouse does: Tab from the widget's
first control until the control has the focus, then its keys (a slider's arrow keys, a
dropdown's End or Home, a checkbox's space bar, typing and Enter).

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
FOCUSABLE = "input, select, button, textarea, [tabindex]:not([tabindex='-1'])"
MAX_TABS = 12
HAS_FOCUS = "el => el === document.activeElement || el.contains(document.activeElement)"
FOCUSED = "() => document.activeElement.outerHTML.slice(0, 80)"


def labelled(view: Locator, kind: str, description: str) -> Locator:
    """The control of CSS class ``kind`` in ``view`` whose label reads ``description``."""
    label = re.compile(rf"^\s*{re.escape(description)}\s*$")
    return view.locator(f".{kind}").filter(
        has=view.page.locator(".widget-label, .widget-label-basic", has_text=label)
    ).first


def tab_to(view: Locator, target: Locator) -> None:
    """Press Tab from the first control of ``view`` until ``target`` has the focus."""
    view.locator(FOCUSABLE).first.focus()
    focused = []
    for _ in range(MAX_TABS):
        if target.evaluate(HAS_FOCUS):
            return
        focused.append(view.page.evaluate(FOCUSED))
        view.page.keyboard.press("Tab")
    raise AssertionError(f"{MAX_TABS} presses of Tab did not reach the control "
                         f"{target.evaluate('el => el.outerHTML.slice(0, 80)')}; the focus "
                         f"went to {focused}")


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

    def press(self, view: Locator, steps: int = 3) -> tuple[str, str]:
        """Tab to the handle and press the left arrow ``steps`` times (right at the left end)."""
        slider = labelled(view, "widget-slider", self.description)
        readout = slider.locator(".widget-readout")
        handle = slider.locator(".noUi-handle").first
        before = readout.inner_text()
        tab_to(view, handle)
        key = "ArrowRight" if handle.get_attribute("aria-valuenow") == handle.get_attribute(
            "aria-valuemin") else "ArrowLeft"
        for _ in range(steps):
            view.page.keyboard.press(key)
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

    def press(self, view: Locator) -> tuple[str, str]:
        """Tab to the dropdown and pick its last option with End (its first with Home, when
        the last is chosen). Not the arrow keys: in a notebook JupyterLab takes them, from
        a focused dropdown too, to move to the cell above or below."""
        select = labelled(view, "widget-dropdown", self.description).locator("select")
        before = select.input_value()
        tab_to(view, select)
        last = select.evaluate("el => el.selectedIndex === el.options.length - 1")
        view.page.keyboard.press("Home" if last else "End")
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

    def press(self, view: Locator) -> tuple[str, str]:
        """Tab to the box and press the space bar."""
        box = labelled(view, "widget-checkbox", self.description).locator("input")
        before = box.is_checked()
        tab_to(view, box)
        view.page.keyboard.press("Space")
        return str(before), str(box.is_checked())


@dataclass(frozen=True)
class TextBox:
    """A text box given ``text``, then the button ``button`` clicked (interact_manual)."""

    description: str
    text: str
    button: str | None = None

    def move(self, view: Locator) -> tuple[str, str]:
        """Type ``text`` over the old one and confirm; returns the text before and after."""
        box = labelled(view, "widget-text", self.description).locator("input")
        before = box.input_value()
        box.fill(self.text)
        box.press("Enter")
        if self.button:
            view.locator(".widget-button", has_text=self.button).click()
        return before, box.input_value()

    def press(self, view: Locator) -> tuple[str, str]:
        """Tab to the box, type ``text`` and one more sentence over the old text, and press
        Enter (which runs an ``interact_manual`` as its button does; leaving the box with
        Tab would run it too, and disable the button while it runs)."""
        box = labelled(view, "widget-text", self.description).locator("input")
        before = box.input_value()
        tab_to(view, box)
        view.page.keyboard.press("ControlOrMeta+A")
        view.page.keyboard.type(self.text + " It did so again.")
        view.page.keyboard.press("Enter")
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
