"""The library must not answer the exercises.

Most exercises have a twin in ``course_utils``: the tested reference that later cells
draw with (``masked_softmax`` for ``causal_softmax``, ``count_pairs`` for ``count_pairs``).
A test cell calls the student's function through ``own_work``::

    weights = checks.own_work(causal_softmax)(S)

While that call runs, every twin listed in ``TWINS`` for the exercise is replaced, in the
notebook's namespace and in every loaded ``course_utils`` module, by a stand-in that
raises ``LibraryTwinError`` (an ``AssertionError``, so the test fails) with a message that
says why. Afterwards the real functions are back, for the checks and for later cells.

``TWINS`` maps an exercise's grade id (the name of the function the student writes, or
of the value they compute) to the dotted paths of its twins. The grading also reads it to
flag answer cells that import a twin (``grader.autograde``, the TA tools in grading/).
"""

import ast
import contextlib
import functools
import importlib
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["TWINS", "LibraryTwinError", "imported_twins", "library_twins_unavailable", "own_work"]

TWINS: dict[str, tuple[str, ...]] = {
    # 01_static_vs_contextual
    "embed": ("course_utils.embeddings.one_hot", "course_utils.embeddings.lookup"),
    "cosine_matrix": (
        "course_utils.embeddings.cosine_similarity",
        "course_utils.checks.embeddings._cosines",
    ),
    "nearest_words": (
        "course_utils.embeddings.nearest_neighbours",
        "course_utils.embeddings.cosine_similarity",
        "course_utils.checks.embeddings._cosines",
    ),
    "updated_embedding": (
        "course_utils.embeddings.contextual_update",
        "course_utils.checks.embeddings._causal_update",
    ),
    "updated_embeddings": (
        "course_utils.embeddings.contextual_update",
        "course_utils.checks.embeddings._causal_update",
        "course_utils.attention.attention",
        "course_utils.attention.attention_weights",
        "course_utils.attention.masked_softmax",
        "course_utils.attention.causal_mask",
    ),
    # 02_skipgram
    "window_pairs": (
        "course_utils.skipgram.window_pairs",
        "course_utils.skipgram.context_pairs",
        "course_utils.checks.skipgram._pairs",
    ),
    "window_loss": (
        "course_utils.skipgram.window_loss",
        "course_utils.skipgram.objective",
        "course_utils.skipgram.predicted_probabilities",
        "course_utils.skipgram._pair_log_probabilities",
        "course_utils.checks.skipgram._window_loss_variants",
    ),
    "sgd_step": (
        "course_utils.skipgram.window_loss",
        "course_utils.skipgram.objective",
        "course_utils.skipgram.objective_gradient",
        "course_utils.skipgram.predicted_probabilities",
        "course_utils.skipgram._pair_log_probabilities",
        "course_utils.checks.skipgram._window_loss_variants",
        "course_utils.checks.skipgram._window_gradient",
    ),
    "negative_sampling_loss": ("course_utils.skipgram.negative_sampling_loss",),
    # 03_bpe
    "count_pairs": ("course_utils.bpe.count_pairs",),
    "merge_pair": ("course_utils.bpe.merge_pair", "course_utils.bpe.merge_word"),
    "learn_vocabulary": (
        "course_utils.bpe.learn_bpe_naive",
        "course_utils.bpe.learn_bpe",
        "course_utils.checks.bpe._vocabulary_with_ties",
    ),
    "segment_word": (
        "course_utils.bpe.segment_word",
        "course_utils.bpe.segment",
        "course_utils.bpe.apply_merges",
    ),
    "merge_chunk": (
        "course_utils.byte_bpe._byte_pair_merge",
        "course_utils.byte_bpe.BytePairTokenizer.encode",
        "course_utils.byte_bpe.BytePairTokenizer.encode_ordinary",
        "course_utils.byte_bpe.BytePairTokenizer._encode_chunk",
        "tiktoken.Encoding.encode",
        "tiktoken.Encoding.encode_ordinary",
    ),
    "encode": (
        "course_utils.byte_bpe.BytePairTokenizer.encode",
        "course_utils.byte_bpe.BytePairTokenizer.encode_ordinary",
        "course_utils.byte_bpe.BytePairTokenizer._encode_chunk",
        "course_utils.byte_bpe.BytePairTokenizer.pre_tokenize",
        "course_utils.byte_bpe.BytePairTokenizer.tokens",
        "course_utils.byte_bpe.pre_tokenize",
        "course_utils.byte_bpe._byte_pair_merge",
        "course_utils.checks.bpe._model_encode",
        "tiktoken.Encoding.encode",
        "tiktoken.Encoding.encode_ordinary",
    ),
    # 04_alpha3_by_hand
    "scores": ("course_utils.attention.attention_scores",),
    "causal_softmax": (
        "course_utils.attention.masked_softmax",
        "course_utils.attention.causal_mask",
        "course_utils.attention.attention_weights",
        "course_utils.attention.attention",
    ),
    "causal_attention": (
        "course_utils.attention.attention",
        "course_utils.attention.attention_weights",
        "course_utils.attention.attention_scores",
        "course_utils.attention.masked_softmax",
        "course_utils.attention.causal_mask",
    ),
    # 05_masked_attention
    "self_attention_update": (
        "course_utils.attention.attention",
        "course_utils.attention.attention_weights",
        "course_utils.attention.masked_softmax",
        "course_utils.attention.attention_scores",
        "course_utils.checks.masked_attention._update",
    ),
    "padding_mask": (
        "course_utils.attention.causal_mask",
        "course_utils.checks.masked_attention._key_mask",
    ),
    "split_heads": (
        "course_utils.attention.MultiHeadAttention.split_heads",
        "course_utils.attention.MultiHeadAttention.forward",
    ),
    "multi_head_attention": (
        "course_utils.attention.MultiHeadAttention.forward",
        "course_utils.attention.MultiHeadAttention.forward_steps",
        "course_utils.attention.MultiHeadAttention.forward_fused",
        "course_utils.attention.MultiHeadAttention.split_heads",
        "course_utils.attention.MultiHeadAttention.merge_heads",
        "course_utils.attention.attention",
        "course_utils.attention.attention_weights",
        "course_utils.attention.masked_softmax",
        "course_utils.attention.attention_scores",
        "course_utils.attention.causal_mask",
        "course_utils.checks.masked_attention._multi_head",
        "course_utils.checks.masked_attention._pytorch_reference",
        "torch.nn.MultiheadAttention.forward",
    ),
    # 06_transformer_blocks
    "positional_encoding": (
        "course_utils.transformer.sinusoidal_positions",
        "course_utils.checks.transformer_blocks._positions",
    ),
    "layer_norm": (
        "course_utils.transformer.layer_norm",
        "course_utils.checks.transformer_blocks._normalise",
        "torch.nn.functional.layer_norm",
        "torch.layer_norm",
        "torch.nn.LayerNorm.forward",
    ),
    "transformer_block": (
        "course_utils.transformer.TransformerBlock.forward",
        "course_utils.transformer.TransformerBlock._sa_block",
        "course_utils.transformer.TransformerBlock._ff_block",
        "course_utils.checks.transformer_blocks._pytorch_block",
        "course_utils.checks.transformer_blocks._block_variant",
        "torch.nn.TransformerEncoderLayer.forward",
    ),
    # 07_linear_attention
    "kernel_attention": (
        "course_utils.linear_attention.linear_attention",
        "course_utils.linear_attention.fmm_attention",
        "course_utils.checks.linear_attention._quadratic",
    ),
    "recurrent_step": (
        "course_utils.linear_attention.recurrent_linear_attention",
        "course_utils.linear_attention.linear_attention",
        "course_utils.checks.linear_attention._step",
    ),
    "causal_linear_attention": (
        "course_utils.linear_attention.linear_attention",
        "course_utils.linear_attention.recurrent_linear_attention",
        "course_utils.linear_attention._chunked_causal",
        "course_utils.linear_attention.fmm_attention",
        "course_utils.checks.linear_attention._quadratic",
        "course_utils.checks.linear_attention._step",
    ),
    "band_mask": (
        "course_utils.linear_attention.band_mask",
        "course_utils.linear_attention._allowed",
        "course_utils.checks.linear_attention._band",
    ),
    # 08_random_fourier_features
    "gaussian_kernel": (
        "sklearn.metrics.pairwise.rbf_kernel",
        "course_utils.checks.random_features._gaussian",
    ),
    "fourier_features": (
        "course_utils.random_features.RandomFourierFeatures._features",
        "sklearn.kernel_approximation.RBFSampler.transform",
        "course_utils.checks.random_features._fourier",
    ),
    "error_slope": ("course_utils.checks.random_features._slope",),
    "positive_features": (
        "course_utils.random_features.PositiveRandomFeatures._features",
        "course_utils.checks.random_features._positive",
    ),
}


class LibraryTwinError(AssertionError):
    """A student's answer called the library function that answers its exercise."""


def _owner(name: str):
    """The module ``name``, or the class ``module.Class`` it names."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError:
        module_name, _, class_name = name.rpartition(".")
        return getattr(importlib.import_module(module_name), class_name)


def _resolve(path: str):
    """The twin at ``path``: ``module.function`` or ``module.Class.method``."""
    owner_name, _, attribute = path.rpartition(".")
    return getattr(_owner(owner_name), attribute)


def _stand_in(exercise: str, path: str) -> Callable:
    def refuse(*args, **kwargs):
        raise LibraryTwinError(
            f"{exercise} called {path}, the library's own answer to this exercise: "
            "write it with your own code (torch, numpy and plain Python are all fine)"
        )

    return refuse


@contextmanager
def library_twins_unavailable(exercise: str, namespace: dict | None = None) -> Iterator[None]:
    """While the block runs, the twins of ``exercise`` raise ``LibraryTwinError``.

    They are swapped wherever they are bound: in ``namespace`` (the notebook's globals)
    and in every loaded ``course_utils`` module, so ``from ... import`` and
    ``module.function`` both reach the stand-in. A method twin (``module.Class.method``) is
    swapped in its class, so it fails on every object of the class, cached ones too; a
    function of another package (``torch.nn.functional.layer_norm``) in its own module.
    """
    twins = {id(_resolve(path)): path for path in TWINS.get(exercise, ())}
    classes, modules = [], {}
    for path in TWINS.get(exercise, ()):
        owner_name, _, attribute = path.rpartition(".")
        owner = _owner(owner_name)
        if isinstance(owner, type):
            classes.append((owner, attribute, vars(owner)[attribute]))
            setattr(owner, attribute, _stand_in(exercise, path))
        else:  # a function of a module: swapped in that module too (torch.layer_norm)
            modules[owner_name] = owner
    library = [m for name, m in list(sys.modules.items()) if name.startswith("course_utils")]
    namespaces = [vars(module) for module in library]
    namespaces += [vars(m) for name, m in modules.items() if not name.startswith("course_utils")]
    if namespace is not None:
        namespaces.append(namespace)
    swapped = []
    for names in namespaces:
        for name, value in list(names.items()):
            if id(value) in twins:
                swapped.append((names, name, value))
                names[name] = _stand_in(exercise, twins[id(value)])
    try:
        yield
    finally:
        for names, name, value in swapped:
            names[name] = value
        for owner, attribute, value in classes:
            setattr(owner, attribute, value)


def own_work(function: Callable) -> Callable:
    """``function`` wrapped so that each call runs with its exercise's twins unavailable.

    The exercise is found by name: ``function.__name__``, or any name the calling
    notebook binds to it (``causal_softmax = my_softmax`` is still ``causal_softmax``).
    Warnings the answer raises are silenced: nbgrader counts any warning in a test cell's
    output as a failure, and a right answer that warns still deserves its points.
    """
    namespace = sys._getframe(1).f_globals
    exercises = {name for name, value in namespace.items() if value is function}
    exercises.add(getattr(function, "__name__", ""))

    @functools.wraps(function)
    def call(*args, **kwargs):
        with contextlib.ExitStack() as stack:
            stack.enter_context(warnings.catch_warnings())
            warnings.simplefilter("ignore")
            for exercise in sorted(exercises & TWINS.keys()):
                stack.enter_context(library_twins_unavailable(exercise, namespace))
            return function(*args, **kwargs)

    return call


def imported_twins(source: str, exercise: str) -> list[str]:
    """The twins of ``exercise`` that the answer cell ``source`` imports or names.

    Catches ``from course_utils.attention import masked_softmax`` and dotted uses such as
    ``attention.masked_softmax``; the grading lists them beside the score.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    used, imports_library = set(), False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            used |= {f"{node.module}.{alias.name}" for alias in node.names}
            imports_library |= node.module.startswith("course_utils")
        elif isinstance(node, ast.Import):
            imports_library |= any(a.name.startswith("course_utils") for a in node.names)
        elif isinstance(node, ast.Attribute):
            used.add(ast.unparse(node))

    def named(path: str) -> bool:
        module, _, function = path.rpartition(".")
        if module.rpartition(".")[2][:1].isupper():  # a method: only Class.method is sure
            return any(name.endswith(path.rpartition(".")[0].rpartition(".")[2] + "." + function)
                       for name in used)
        return any(
            name == path
            or (name.endswith("." + function) and (module.endswith(name.rpartition(".")[0])
                                                    or imports_library))
            for name in used
        )

    return [path for path in TWINS.get(exercise, ()) if named(path)]
