"""The exercises of 09_bert_and_gpt: one record each (``course_utils.exercises``)."""

from course_utils.exercises.allowance import (
    DEFAULT,
    ELEMENTARY,
    MODEL_MODULES,
    MODEL_OPS,
    Allowance,
)
from course_utils.exercises.record import Compare, Exercise

NOTEBOOK = "09_bert_and_gpt"

EXERCISES = (
    Exercise("masked_lm_loss", NOTEBOOK, points=2, check="check_masked_lm_loss",
             twins=("torch.nn.modules.loss.*",
                    "course_utils.checks.pretraining._pytorch_oracle",
                    "course_utils.checks.pretraining.check_masked_lm_loss"),
             torch_twins=("cross_entropy", "nll_loss")),
    # the tiny BERT's forward pass from the weights a TinyGPT holds; its check judges
    # properties, and the grader compares the hidden tests' values with the stored answers
    Exercise("encoder_logits", NOTEBOOK, points=3, check="check_encoder_logits",
             allowance=Allowance(
                 says=DEFAULT.says + ", and the model's own layers",
                 modules=DEFAULT.modules + MODEL_MODULES, torch_ops=ELEMENTARY | MODEL_OPS),
             twins=("course_utils.models.library_gpt.gpt2_holding",
                    "course_utils.checks.pretraining._gpt_scores")),
    # the best loss of a model that reads its own position only, derived from the words'
    # frequencies: its visible check looks at the form only; the grade compares it with the
    # stored answer, to the two decimals the text asks for
    Exercise("own_position_loss", NOTEBOOK, points=1, check="check_own_position_loss",
             compare=Compare(rtol=0.0, atol=0.01)),
    # while it runs, no nn.Module can be built or counted (every torch.nn.Module method is
    # refused, so BertModel and friends cannot be either); a count is one whole number: the
    # default rtol would let ±0.1 % of 10⁸ parameters through
    Exercise("bert_parameters", NOTEBOOK, points=1, check="check_bert_parameters",
             compare=Compare(rtol=0.0, atol=0.5),
             twins=("torch.nn.modules.module.Module*",
                    "course_utils.checks.pretraining._hugging_face_bert")),
    # its visible tests state the best span; the grader compares the hidden tests' spans
    Exercise("best_span", NOTEBOOK, points=3, check="check_best_span",
             twins=("transformers.pipelines.document_question_answering.decode_spans",
                    "transformers.pipelines.document_question_answering.select_starts_ends",
                    "course_utils.checks.pretraining._decoded_from_probabilities")),
)
