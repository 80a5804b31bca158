"""The library must not answer the exercises: which functions answer which exercise.

Most exercises have twins: the tested reference in ``course_utils`` that later cells draw
with (``masked_softmax`` for ``causal_softmax``), the library function that does the whole
job (scikit-learn's ``rbf_kernel``, tiktoken's ``Encoding``, PyTorch's
``scaled_dot_product_attention``), and the notebook's own reference helpers defined before
the exercise (07's ``similarity_attention``). While a test cell runs the student's function
through ``own_work``, they are refused where they compute (``refuse.py``).

``TWINS`` maps an exercise's grade id (the name of the function the student writes) to the
Python twins: ``module.function``, ``module.Class.method``, ``module.<fnmatch pattern>``
(every function and method the module defines that matches, e.g. ``tiktoken.core.*``) or
``notebook.name``. ``TORCH_TWINS`` maps it to fragments of torch function names
(``"layer_norm"`` refuses ``F.layer_norm``, ``torch.layer_norm``, ``torch.native_layer_norm``
and ``torch.ops.aten.native_layer_norm``). Each exercise's text names what it may not use;
these tables are that list. The grading also reads ``TWINS`` to flag answer cells that
import a twin (``grader.integrity.tamper.twins``, the TA tools in grading/).
"""

from types import MappingProxyType

__all__ = ["TORCH_TWINS", "TWINS"]

# Both tables are read-only (a mapping proxy over tuples): a notebook cannot edit them.
TWINS: MappingProxyType[str, tuple[str, ...]] = MappingProxyType({
    # 01_static_vs_contextual
    "embed": ("course_utils.words.embeddings.one_hot", "course_utils.words.embeddings.lookup"),
    "cosine_matrix": (
        "course_utils.words.embeddings.cosine_similarity",
        "course_utils.checks.embeddings._cosines",
    ),
    "nearest_words": (
        "course_utils.words.embeddings.nearest_neighbours",
        "course_utils.words.embeddings.cosine_similarity",
        "course_utils.checks.embeddings._cosines",
    ),
    "updated_embedding": (
        "course_utils.words.embeddings.contextual_update",
        "course_utils.checks.embeddings._causal_update",
    ),
    "updated_embeddings": (
        "course_utils.words.embeddings.contextual_update",
        "course_utils.checks.embeddings._causal_update",
        "course_utils.models.attention.attention_weights",
    ),
    # 02_skipgram
    "window_pairs": (
        "course_utils.words.skipgram.window_pairs",
        "course_utils.words.skipgram.context_pairs",
        "course_utils.checks.skipgram._pairs",
    ),
    "window_loss": (
        "course_utils.words.skipgram.window_loss",
        "course_utils.words.skipgram.objective",
        "course_utils.words.skipgram.predicted_probabilities",
        "course_utils.words.skipgram._pair_log_probabilities",
        "course_utils.checks.skipgram._window_loss_variants",
    ),
    "sgd_step": (
        "course_utils.words.skipgram.window_loss",
        "course_utils.words.skipgram.objective",
        "course_utils.words.skipgram.objective_gradient",
        "course_utils.words.skipgram.predicted_probabilities",
        "course_utils.words.skipgram._pair_log_probabilities",
        "course_utils.checks.skipgram._window_loss_variants",
        "course_utils.checks.skipgram._window_gradient",
    ),
    "negative_sampling_loss": ("course_utils.words.skipgram.negative_sampling_loss",),
    # 03_bpe
    "count_pairs": ("course_utils.tokens.bpe.count_pairs",),
    "merge_pair": ("course_utils.tokens.bpe.merge_pair", "course_utils.tokens.bpe.merge_word"),
    "learn_vocabulary": (
        "course_utils.tokens.bpe.learn_bpe_naive",
        "course_utils.tokens.bpe.learn_bpe",
        "course_utils.checks.bpe._vocabulary_with_ties",
    ),
    "segment_word": (
        "course_utils.tokens.bpe.segment_word",
        "course_utils.tokens.bpe.segment",
        "course_utils.tokens.bpe.apply_merges",
    ),
    "merge_chunk": (
        "course_utils.tokens.byte_merges._byte_pair_merge",
        "course_utils.tokens.byte_merges._byte_pair_merge_fast",
        "course_utils.tokens.byte_merges._lowest_pair",
        "course_utils.tokens.byte_merges.merge_steps",
        "course_utils.tokens.byte_bpe.BytePairTokenizer.encode",
        "course_utils.tokens.byte_bpe.BytePairTokenizer.encode_ordinary",
        "course_utils.tokens.byte_bpe.BytePairTokenizer._encode_chunk",
        # every encoding method (encode_batch, encode_ordinary_batch, encode_single_token...)
        "course_utils.tokens.byte_bpe.*encode*",
        "tiktoken.Encoding.encode",
        "tiktoken.Encoding.encode_ordinary",
        "tiktoken.core.*",
    ),
    "encode": (
        "course_utils.tokens.byte_bpe.BytePairTokenizer.encode",
        "course_utils.tokens.byte_bpe.BytePairTokenizer.encode_ordinary",
        "course_utils.tokens.byte_bpe.BytePairTokenizer._encode_chunk",
        "course_utils.tokens.byte_bpe.*encode*",
        "course_utils.tokens.byte_merges._byte_pair_merge_fast",
        "course_utils.tokens.byte_bpe.BytePairTokenizer.pre_tokenize",
        "course_utils.tokens.byte_bpe.BytePairTokenizer.tokens",
        "course_utils.tokens.pre_tokenizer.pre_tokenize",
        "course_utils.tokens.pre_tokenizer.*",
        "course_utils.tokens.byte_merges._byte_pair_merge",
        "course_utils.tokens.byte_merges._lowest_pair",
        "course_utils.tokens.byte_merges.merge_steps",
        "course_utils.checks.bpe._model_encode",
        "tiktoken.Encoding.encode",
        "tiktoken.Encoding.encode_ordinary",
        "tiktoken.core.*",
    ),
    # 04_alpha3_by_hand
    "causal_softmax": (
        "course_utils.models.attention.attention_weights",
    ),
    "causal_attention": (
        "course_utils.models.attention.attention_weights",
    ),
    # 05_masked_attention
    "attention_update": (
        "course_utils.models.attention.attention_weights",
    ),
    "padding_mask": (
    ),
    "split_heads": (
        "course_utils.models.attention.MultiHeadAttention.forward",
    ),
    "multi_head_attention": (
        "course_utils.models.attention.MultiHeadAttention.forward",
        "course_utils.models.attention.attention_weights",
        "course_utils.checks.masked_attention._pytorch_reference",
        "torch.nn.MultiheadAttention.forward",
    ),
    # 06_transformer_blocks: the course's versions are the libraries' (Hugging Face's table
    # and rotation, PyTorch's layers), which the checks compute their expected values with
    "positional_encoding": (
        "course_utils.models.transformer.sinusoidal_positions",
        "course_utils.checks.transformer_blocks._sinusoids",
        "transformers.models.distilbert.modeling_distilbert.create_sinusoidal_embeddings",
        "transformers.models.distilbert.modeling_distilbert._create_sinusoidal_embeddings",
    ),
    "rope": (
        "course_utils.models.transformer.rotary_embedding",
        "course_utils.checks.transformer_blocks._rotated",
        "transformers.models.gptj.modeling_gptj.apply_rotary_pos_emb",
        "transformers.models.gptj.modeling_gptj.rotate_every_two",
        "transformers.models.roformer.modeling_roformer.RoFormerSelfAttention"
        ".apply_rotary_position_embeddings",
        "transformers.models.llama.modeling_llama.apply_rotary_pos_emb",
        "transformers.models.llama.modeling_llama.rotate_half",
        "notebook.shift_matrix",
    ),
    "layer_norm": (
        "torch.nn.functional.layer_norm",
        "torch.nn.LayerNorm.forward",
    ),
    "transformer_block": (
        "course_utils.models.transformer.TransformerBlock.forward",
        "course_utils.models.transformer.TransformerBlock._sa_block",
        "course_utils.checks.transformer_blocks._pytorch_block",
        "torch.nn.TransformerEncoderLayer.forward",
        "torch.nn.TransformerEncoderLayer._sa_block",
        "torch.nn.TransformerEncoderLayer._ff_block",
    ),
    # 09_bert_and_gpt: while bert_parameters runs, no nn.Module can be built or counted
    # (every torch.nn.Module method is refused, so BertModel and friends cannot be either)
    "bert_parameters": (
        "torch.nn.modules.module.Module*",
        "course_utils.checks.pretraining._hugging_face_bert",
    ),
    "masked_lm_loss": (
        "torch.nn.modules.loss.*",
        "course_utils.checks.pretraining._library_losses",
        "course_utils.checks.pretraining.check_masked_lm_loss",
    ),
    "best_span": (
        "transformers.pipelines.document_question_answering.decode_spans",
        "transformers.pipelines.document_question_answering.select_starts_ends",
        "course_utils.checks.pretraining._best_score",
        "course_utils.checks.pretraining._decoded_from_probabilities",
    ),
    # 07_linear_attention
    "kernel_attention": (
        "course_utils.models.linear_attention.linear_attention",
        "course_utils.models.linear_attention.fmm_attention",
        "course_utils.checks.linear_attention._quadratic",
        "notebook.softmax_attention",
        "notebook.similarity_attention",
    ),
    "recurrent_step": (
        "course_utils.models.linear_attention.recurrent_linear_attention",
        "course_utils.models.linear_attention.linear_attention",
        "course_utils.checks.linear_attention._step",
    ),
    "causal_linear_attention": (
        "course_utils.models.linear_attention.linear_attention",
        "course_utils.models.linear_attention.recurrent_linear_attention",
        "course_utils.models.linear_attention._chunked_causal",
        "course_utils.models.linear_attention.fmm_attention",
        "course_utils.checks.linear_attention._quadratic",
        "course_utils.checks.linear_attention._step",
        "notebook.softmax_attention",
        "notebook.similarity_attention",
        "notebook.masked_kernel_attention",
    ),
    "separation": (
        "course_utils.models.linear_attention.well_separation",
        "course_utils.checks.linear_attention._separation",
    ),
    # 08_random_fourier_features: the library's answers, and the check's integration
    "gaussian_kernel": (
        "sklearn.metrics.pairwise.rbf_kernel",
        "sklearn.metrics.pairwise.*kernel*",
        "sklearn.gaussian_process.kernels.*",
    ),
    "ard_features": (
        "sklearn.kernel_approximation.RBFSampler.transform",
        "sklearn.kernel_approximation.*",
        "sklearn.gaussian_process.kernels.*",
    ),
    "error_slope": ("numpy.lib._polynomial_impl.polyfit", "scipy.stats._stats_py.linregress"),
    "cos_sin_variance": (
        "course_utils.checks.feature_statistics._moments",
        "scipy.integrate._quad_vec.quad_vec",
        "scipy.integrate._quadpack_py.quad",
    ),
})

# Fragments of the torch functions that answer an exercise (see the module docstring).
ATTENTION = ("scaled_dot_product", "multi_head_attention")
NORMALISATIONS = ("layer_norm", "group_norm", "batch_norm", "instance_norm", "rms_norm")
TORCH_TWINS: MappingProxyType[str, tuple[str, ...]] = MappingProxyType({
    "updated_embedding": ATTENTION,
    "updated_embeddings": ATTENTION,
    "causal_attention": ATTENTION,
    "attention_update": ATTENTION,
    "multi_head_attention": ATTENTION,
    "layer_norm": NORMALISATIONS,
    "transformer_block": ("transformer_encoder_layer",),
    "masked_lm_loss": ("cross_entropy", "nll_loss"),
    "kernel_attention": ATTENTION,
    "causal_linear_attention": ATTENTION,
})
