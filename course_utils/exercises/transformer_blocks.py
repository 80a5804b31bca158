"""The exercises of 06_transformer_blocks: one record each (``course_utils.exercises``)."""

from course_utils.exercises.allowance import (
    ATTENTION,
    DEFAULT,
    ELEMENTARY,
    MODEL_MODULES,
    MODEL_OPS,
    NORMALISATIONS,
    Allowance,
)
from course_utils.exercises.masked_attention import MULTI_HEAD_TWINS
from course_utils.exercises.record import Compare, Exercise

NOTEBOOK = "06_transformer_blocks"

EXERCISES = (
    # the course's versions are the libraries' (Hugging Face's table and rotation, PyTorch's
    # layers), which the checks compute their expected values with
    Exercise("positional_encoding", NOTEBOOK, points=1, check="check_positional_encoding",
             twins=("course_utils.models.transformer.sinusoidal_positions",
                    "course_utils.checks.transformer_blocks._sinusoids",
                    "transformers.models.distilbert.modeling_distilbert.create_sinusoidal_embeddings",
                    "transformers.models.distilbert.modeling_distilbert._create_sinusoidal_embeddings")),
    Exercise("rope", NOTEBOOK, points=1, check="check_rope_answer",
             twins=("course_utils.models.transformer.rotary_embedding",
                    "course_utils.checks.transformer_blocks._rotated",
                    "transformers.models.gptj.modeling_gptj.apply_rotary_pos_emb",
                    "transformers.models.gptj.modeling_gptj.rotate_every_two",
                    "transformers.models.roformer.modeling_roformer.RoFormerSelfAttention.apply_rotary_position_embeddings",
                    "transformers.models.llama.modeling_llama.apply_rotary_pos_emb",
                    "transformers.models.llama.modeling_llama.rotate_half",
                    "notebook.shift_matrix")),
    Exercise("layer_norm", NOTEBOOK, points=1, check="check_layer_norm",
             twins=("torch.nn.functional.layer_norm",
                    "torch.nn.LayerNorm.forward"),
             torch_twins=NORMALISATIONS),
    # notebook 05's multi-head attention with the layer's biases, each head's queries and keys
    # turned by the rotation the test hands it (a right one): the layer's own output
    # projection may run (a linear layer), not the layer itself
    Exercise("my_attention", NOTEBOOK, points=2, check="check_attention_layer",
             allowance=Allowance(says=DEFAULT.says + ", the rotation it is given, and the "
                                                     "layer's output projection (out_proj)",
                                 # the course's rotation marks its table constant
                                 torch_ops=ELEMENTARY | {"linear", "requires_grad.__set__"}),
             twins=MULTI_HEAD_TWINS + ("notebook.window_attention",
                                       "course_utils.checks.masked_attention._rotary_layer"),
             torch_twins=ATTENTION),
    # the given block's parts arranged around the attention the test hands it (a right one:
    # PyTorch's, whose ops it may run); not the block's or PyTorch's whole layer
    Exercise("transformer_block", NOTEBOOK, points=3, check="check_transformer_block",
             allowance=Allowance(
                 says=DEFAULT.says + ", the attention it is given, and the block's own layers "
                                     "(its layer norms, linear layers, activation and "
                                     "attention)",
                 modules=DEFAULT.modules + MODEL_MODULES,
                 torch_ops=ELEMENTARY | MODEL_OPS),
             twins=("course_utils.models.transformer.TransformerBlock.forward",
                    "course_utils.checks.transformer_blocks._pytorch_block",
                    "torch.nn.TransformerEncoderLayer.forward",
                    "torch.nn.TransformerEncoderLayer._sa_block",
                    "torch.nn.TransformerEncoderLayer._ff_block"),
             torch_twins=("transformer_encoder_layer",)),
    # runs the model it is given; it may read the model's dependence from autograd's
    # Jacobian (a way to test causality, not the test)
    Exercise("is_causal", NOTEBOOK, points=2, check="check_is_causal_of",
             allowance=Allowance(
                 says=DEFAULT.says + ", the model it is given, and autograd",
                 modules=DEFAULT.modules + MODEL_MODULES + ("torch.autograd",),
                 torch_ops=ELEMENTARY | MODEL_OPS | {"grad", "backward", "jacobian"})),
    # the whole GPT's forward pass, its blocks run by the function it is given
    Exercise("gpt_logits", NOTEBOOK, points=3, check="check_gpt_logits",
             allowance=Allowance(
                 says=DEFAULT.says + ", the model's own layers, and the block function it is "
                                     "given",
                 modules=DEFAULT.modules + MODEL_MODULES, torch_ops=ELEMENTARY | MODEL_OPS),
             twins=("course_utils.models.library_gpt.gpt2_holding",
                    "course_utils.models.library_gpt.gpt2_logits")),
    # one draw per row from the law exercise 7's requirements set, by any exact sampler (PyTorch's
    # categorical laws too): the draws are compared as samples of one law
    Exercise("sample_next", NOTEBOOK, points=2, check="check_sample_next",
             allowance=Allowance(says=DEFAULT.says + ", and torch.distributions",
                                 modules=DEFAULT.modules + ("torch.distributions",),
                                 # what its laws call to check their arguments
                                 torch_ops=ELEMENTARY | {"_is_all_true", "new"}),
             compare=Compare(distribution=True),
             twins=("course_utils.models.gpt.generate",)),
)
