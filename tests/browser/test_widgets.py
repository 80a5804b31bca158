"""Every widget of the notebooks renders in JupyterLab and answers each of its controls.

For each notebook with widgets, the student's release is opened and run (its blank
answers do not stop the widget cells; a widget that shows what the student's answers
compute runs on the release with the instructor's answers typed in), every control of
every widget is moved, with the mouse and then from the keyboard alone (Tab to it, its
keys: tests/browser/controls.py), and each time the picture the widget shows must change.
The release is what students see; the solutions' widget cells are the same code.
"""

import re
from dataclasses import dataclass

import nbformat
import pytest

from tests.browser.controls import (
    Checkbox,
    Dropdown,
    Slider,
    TextBox,
    displayed,
    wait_for_new_picture,
)
from tests.browser.course import answered_copy, copy_into, release
from tests.browser.notebook_page import open_in_lab
from tests.conftest import ASSIGNMENTS
from tests.support.nbgrader_cells import by_code, exercise_cells

# A code cell that shows a widget: interact, an assembled box, or the course's helper.
WIDGET_CODE = re.compile(r"widgets\.(interact|interact_manual|VBox|HBox)\(|softmax_scale_slider\(")


@dataclass(frozen=True)
class Widget:
    """A widget: the code that shows it, its controls, and where it draws (CSS selectors).

    ``drawn_at_start``: whether it shows something before a control moves (an
    ``interact_manual`` draws on its button's first click only). ``answered``: whether
    it shows the student's answers at work (on a blank release it only says which
    exercises to finish, the same words whatever the controls say).
    """

    code: str
    controls: tuple
    view: str = ".widget-interact"
    output: str = ".widget-output"
    drawn_at_start: bool = True
    answered: bool = False


WIDGETS = {
    "01_static_vs_contextual": (
        Widget("sense_box = widgets.interact_manual(", (
            TextBox("sentence", "The dog's bark woke the whole street.", button="Run Interact"),),
            drawn_at_start=False),
        Widget("update_slider = widgets.interact(", (
            Slider("c", to=0.9), Checkbox("tree_instead_of_dog"))),
    ),
    "02_skipgram": (Widget("widgets.interact(show_noise", (Slider("power p", to=0.2),)),),
    "03_bpe": (Widget("widgets.interact(show_merges", (Slider("k", to=0.8),)),),
    "04_alpha3_by_hand": (Widget("softmax_scale_slider(", (Slider("c", to=0.9),)),),
    "05_masked_attention": (Widget("widgets.interact(draw", (
        Dropdown("sentence", "tree bark"), Slider("layer", to=0.9), Slider("head", to=0.5))),),
    "06_transformer_blocks": (Widget("widgets.interact(show_sample", (
        Slider("temperature", to=0.9),), answered=True),),
    "07_linear_attention": (Widget("widgets.interact(draw_fmm", (
        Slider("layer", to=0.8), Slider("head", to=0.7), Slider("bandwidth", to=0.5),
        Slider("w_near", to=0.2))),),
    "08_random_fourier_features": (Widget("widgets.VBox([slider, picture])", (
        Slider("R", to=0.75),), view=".widget-vbox", output=".widget-image"),),
    "09_bert_and_gpt": (Widget("widgets.interact(show_masking", (
        Slider("share", to=0.8), Slider("draw", to=0.5)), answered=True),),
}


def test_every_widget_of_the_notebooks_is_driven_here():
    shown = {(assignment, i) for assignment in ASSIGNMENTS
             for i, cell in enumerate(nbformat.read(release(assignment), as_version=4).cells)
             if cell.cell_type == "code" and WIDGET_CODE.search(cell.source)}
    driven = {(assignment, by_code(nbformat.read(release(assignment), as_version=4), w.code))
              for assignment, widgets in WIDGETS.items() for w in widgets}
    assert shown == driven


@pytest.mark.parametrize("assignment", sorted(WIDGETS))
def test_widgets_render_and_respond(assignment, page, steps, student_server, workspace):
    blank = nbformat.read(release(assignment), as_version=4)
    cells = [by_code(blank, widget.code) for widget in WIDGETS[assignment]]

    with steps(f"opens {assignment} and runs it down to its last widget"):
        answered = any(widget.answered for widget in WIDGETS[assignment])
        copy = (answered_copy(assignment, workspace) if answered
                else copy_into(release(assignment), workspace))
        notebook = open_in_lab(page, student_server, copy)
        notebook.run_in_sections(alone=exercise_cells(blank), last=max(cells))

    for widget, cell in zip(WIDGETS[assignment], cells, strict=True):
        view = notebook.cell(cell).locator(widget.view).first
        output = view.locator(widget.output).first
        with steps(f"sees the widget of cell {cell}"):
            view.wait_for()
            output.wait_for(state="attached")
            picture = displayed(output)
            assert bool(picture) == widget.drawn_at_start, f"cell {cell} draws {len(picture)} B"
        for control in widget.controls:
            with steps(f"moves {control.description!r} and the picture changes"):
                before, after = control.move(view)
                assert after != before, f"{control.description} stayed at {before}"
                picture = wait_for_new_picture(output, picture)
            with steps(f"moves {control.description!r} from the keyboard: the picture changes"):
                before, after = control.press(view)
                assert after != before, f"{control.description} stayed at {before} (keys)"
                picture = wait_for_new_picture(output, picture)
