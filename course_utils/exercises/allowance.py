"""What an exercise's text allows its answer, the parts its record is made of: what it may
compute with (``allowance``), the fragments of torch's names that answer it
(``torch_twins``), and the rules it keeps (``rules``).

While an answer runs (``checks/guards/allowlist.py``), every Python function the answer's
own code calls (or hands to ``map``, ``sorted``, ``functools``...) must come from a module or
be a function its ``Allowance`` names, every C function it calls must be one it names, and
every torch function must be one of its ``torch_ops`` (an in-place ``op_`` and a documented
alias of an allowed op are allowed with it). What an allowed function does inside is its own
business.
What is not named is refused where it is called. Each exercise's text says what it may use
in the words of ``Allowance.says``; a student who follows the text is never refused (the
``CORRECT`` cases of tests/grading_cases/ prove it).

Every table here is read-only: tuples, frozensets, frozen ``Allowance`` objects, and
mapping proxies over dicts of those.

**Rules.** A rule (``Rule``) is made from the answer's arguments; ``TorchWatch``
(``checks/guards/refuse.py``) calls ``before(name)`` ahead of each torch call and
``after(name, result)`` with what the call returned. A broken rule raises ``RuleBroken``
(an ``AssertionError``: the test fails) naming the rule.
* ``NoAutograd`` (02's ``sgd_step``, a gradient in closed form): no tensor may require a
  gradient and nothing may call autograd, even under ``torch.enable_grad()``.
* ``NoSquareMatrix`` (07's linear attention): no tensor with an axis as long as the
  queries and another as long as the keys, the N_q × N_k matrix the exercise avoids.
* ``OneRow`` (04's KV cache): given the cached keys of n tokens, no tensor with two axes as
  long as the sequence (n or n + 1): the new token's row only, never the earlier rows again.
* ``LinearWork`` (07's linear attention, with ``NoSquareMatrix``): the answer's work grows
  linearly with the number of positions, whatever form it takes; ``checks/guards/cost.py``
  measures it after the call, at two lengths.
* ``ChunkedWork`` (07's causal linear attention, chunk by chunk): the answer takes a chunk
  size C; it runs a few operations per chunk, not per position, and makes no tensor larger
  than the inputs, their features, the output, the chunks' C × C scores and one state per
  chunk together; ``checks/guards/cost.py`` measures it after the call, at 4C and 8C.
"""

from dataclasses import dataclass
from types import MappingProxyType

import torch

__all__ = ["ALIASES", "ATTENTION", "Allowance", "BYTE_LEVEL", "DEFAULT", "ELEMENTARY", "LOSSES",
           "MODEL_MODULES", "MODEL_OPS", "NORMALISATIONS", "NO_AUTOGRAD", "NO_SOFTMAX",
           "ChunkedWork", "LinearWork", "NoAutograd", "NoSquareMatrix", "OneRow", "Rule",
           "RuleBroken", "ShapeRule"]

# Python's statistics, by function: not linear_regression, which fits a line in one call.
STATISTICS = tuple(f"statistics.{name}" for name in (
    "mean", "fmean", "geometric_mean", "harmonic_mean", "median", "median_low", "median_high",
    "median_grouped", "mode", "multimode", "quantiles", "pstdev", "pvariance", "stdev",
    "variance", "covariance", "correlation", "NormalDist", "StatisticsError"))
# Python code an answer may call, by module or by name: the plain modules of the standard
# library, NumPy and the parts of torch its tensor operations are written in.
PLAIN = ("typing", "collections", "_collections_abc", "functools", "heapq", "bisect", "re",
         "string", "copy", "copyreg", "dataclasses", "enum", "abc", "numbers", "contextlib",
         "operator", "keyword", "reprlib", "random", "fractions", "decimal", "_pydecimal",
         "warnings", "weakref", "_weakrefset", "encodings", "codecs", "textwrap",
         "unicodedata", "locale", *STATISTICS,
         # what an import statement runs, and reading the environment (os.environ)
         "importlib._bootstrap._find_and_load", "importlib._bootstrap._handle_fromlist",
         "importlib._bootstrap._lock_unlock_module", "os._Environ", "os._createenviron",
         # what NumPy's random generators call from C: a lock
         "threading.RLock")
NUMPY = ("numpy",)
TORCH = ("torch._tensor", "torch._tensor_str", "torch.functional", "torch.nn", "torch._VF",
         "torch.utils._contextlib", "torch.autograd.grad_mode",
         "torch._jit_internal", "torch.random", "torch.types", "torch._utils",
         "torch._namedtensor_internals", "torch.linalg", "torch.special", "torch.fft",
         "torch.utils._device", "torch.storage", "torch._refs", "torch._prims_common",
         "torch._decomp", "torch.fx.experimental.symbolic_shapes", "torch._check",
         "torch._check_with", "torch.jit._trace.is_tracing", "torch.utils._config_module",
         "torch._library", "torch.backends", "torch.is_tensor", "torch.is_storage",
         "torch.typename", "torch.set_default_dtype", "torch.get_default_device",
         "torch.cuda.is_available", "torch.cuda.device_count",
         # the wrapper torch puts around some of its functions (torch.manual_seed)
         "torch._compile._disable_dynamo.<locals>.inner")
# Parts of those that do a whole job for the answer or step outside it.
NEVER = ("numpy.ctypeslib", "numpy.f2py", "numpy.distutils", "numpy.testing",
         "torch.nn.parallel", "torch.nn.utils.stateless", "torch.nn.modules.transformer",
         "torch.nn.modules.activation.MultiheadAttention")

# C functions an answer may call (by module, or by builtin name): plain Python's.
BUILTINS = frozenset({
    "abs", "all", "any", "ascii", "bin", "callable", "chr", "divmod", "format", "hash", "hex",
    "isinstance", "issubclass", "iter", "len", "max", "min", "next", "oct", "ord", "pow",
    "print", "repr", "round", "sorted", "sum", "__build_class__", "aiter", "anext", "hasattr",
    "id",
})
C_MODULES = ("math", "cmath", "_collections", "collections", "itertools", "_functools",
             "functools", "_heapq", "heapq", "_bisect", "bisect", "_operator", "operator",
             "_random", "random", "re", "_sre", "unicodedata", "_string", "string",
             "_abc", "numpy", "torch", "_codecs", "codecs", "_struct", "_json", "_warnings",
             "warnings", "decimal", "_decimal")

# torch's elementary operations, by the name its function mode sees: making tensors,
# arithmetic, comparisons, elementwise functions, reductions, products, shapes, indexing,
# conversions. Not: a layer's or a library routine's whole job (attention, normalisation,
# distances, similarities, embeddings), autograd, TorchScript, compilation, dispatch.
# With each op its in-place op_ (``Allowance.allows_op``) and its ALIASES.
ELEMENTARY = frozenset("""
tensor as_tensor from_numpy zeros ones full empty zeros_like ones_like full_like empty_like
rand randn randint randperm rand_like randn_like normal manual_seed Generator
arange linspace logspace eye tril triu tril_indices triu_indices diag diagonal diag_embed
new_zeros new_ones new_full new_empty new_tensor
add sub mul div true_divide floor_divide remainder fmod neg negative pow float_power
__add__ __radd__ __iadd__ __sub__ __rsub__ __isub__ __mul__ __rmul__ __imul__ __truediv__
__rtruediv__ __itruediv__ __div__ __rdiv__ __idiv__ __floordiv__ __rfloordiv__ __mod__
__rmod__ __pow__ __rpow__ __ipow__ __neg__ __pos__ __abs__ __matmul__ __rmatmul__
__and__ __rand__ __iand__ __or__ __ror__ __ior__ __xor__ __rxor__ __invert__
__lshift__ __rshift__ __eq__ __ne__ __lt__ __le__ __gt__ __ge__
add_ sub_ mul_ div_ pow_ neg_ clamp_ fill_ zero_ copy_ masked_fill_ exp_ log_ sqrt_
abs_ index_add_ index_fill_ scatter_ scatter_add_ index_put_ addmm_ addcmul_ addcdiv_
eq ne lt le gt ge equal isclose allclose isnan isinf isfinite logical_and logical_or
logical_not logical_xor bitwise_and bitwise_or bitwise_not bitwise_xor
abs exp exp2 expm1 log log2 log10 log1p sqrt rsqrt square sign sgn sin cos tan asin acos
atan atan2 sinh cosh tanh asinh acosh atanh sigmoid relu erf erfc clamp clip clamp_min
elu selu celu gelu silu mish softplus softsign leaky_relu relu6 hardtanh logsigmoid tanhshrink
threshold exp_ sigmoid_ relu_ tanh_ elu_ erfinv log_sigmoid logsigmoid
clamp_max floor ceil round trunc frac reciprocal maximum minimum fmax fmin where lerp
hypot logaddexp logsumexp softmax log_softmax cumsum cumprod cummax cummin addcmul addcdiv
sum mean prod max min amax amin argmax argmin median mode var std var_mean std_mean
norm normalize count_nonzero nonzero any all sort argsort topk kthvalue unique unique_consecutive
bincount histc searchsorted bucketize
matmul mm bmm mv dot vdot inner outer ger einsum tensordot kron addmm addmv addbmm baddbmm
cross linalg_vector_norm vector_norm matrix_norm linalg_norm inverse linalg_inv det slogdet
view_as_real view_as_complex polar complex angle conj broadcast_shapes
view view_as reshape reshape_as flatten unflatten squeeze unsqueeze expand expand_as
repeat repeat_interleave tile permute transpose t T mT H mH adjoint movedim moveaxis
swapaxes swapdims contiguous clone detach flip fliplr flipud roll rot90 narrow split
chunk unbind cat concat concatenate stack hstack vstack dstack column_stack pad
broadcast_to broadcast_tensors meshgrid cartesian_prod combinations
__getitem__ __setitem__ index_select masked_select masked_fill masked_scatter gather
scatter scatter_add take take_along_dim index_add index_fill index_put select slice
one_hot
to type type_as float double half bfloat16 int long bool short char byte cpu cuda numpy
tolist item __len__ __iter__ __contains__ __bool__ __float__ __int__ __index__ __hash__
__format__ __repr__ __str__ __array__ __array_wrap__ __reversed__ __deepcopy__ __reduce_ex__
size dim ndim ndimension numel nelement shape.__get__ dtype.__get__ device.__get__
ndim.__get__ T.__get__ mT.__get__ H.__get__ mH.__get__ data.__get__ real.__get__
imag.__get__ is_cuda.__get__ layout.__get__ names.__get__ requires_grad.__get__
grad.__get__ is_leaf.__get__ grad_fn.__get__ is_floating_point is_complex is_contiguous
element_size stride storage_offset data_ptr get_device is_nonzero is_tensor is_same_size
result_type promote_types can_cast get_default_dtype set_printoptions device
lift_fresh lift_fresh.default
__torch_function__ requires_grad_ no_grad enable_grad set_grad_enabled is_grad_enabled
_set_grad_enabled
tensor_split hsplit vsplit dsplit split_with_sizes unsafe_split unsafe_chunk atleast_1d
atleast_2d atleast_3d ravel block_diag diff trace unfold narrow_copy index_copy index_reduce
select_scatter slice_scatter diagonal_scatter argwhere fill_diagonal_ put put_ msort
resize_ resize_as_ vander tril_indices triu_indices
signbit heaviside nan_to_num nansum nanmean nanmedian quantile nanquantile aminmax
isneginf isposinf isreal cov corrcoef sinc lgamma digamma polygamma i0 logit xlogy deg2rad
rad2deg frexp ldexp copysign nextafter positive trapezoid trapz cumulative_trapezoid
bernoulli multinomial poisson uniform_ random_ bernoulli_ exponential_ cauchy_ geometric_
log_normal_ randint_like seed initial_seed get_rng_state set_rng_state
scalar_tensor empty_strided vecdot
is_sparse.__get__ is_quantized.__get__ is_meta.__get__ is_mps.__get__ itemsize.__get__
nbytes.__get__ is_nested.__get__ ndimension dim_order
""".split())
# Other names of the ops above, as torch documents them ("alias for torch.sub"...).
ALIASES = MappingProxyType({
    "subtract": "sub", "multiply": "mul", "divide": "div", "absolute": "abs", "fix": "trunc",
    "arccos": "acos", "arcsin": "asin", "arctan": "atan", "arctan2": "atan2",
    "arccosh": "acosh", "arcsinh": "asinh", "arctanh": "atanh", "greater": "gt",
    "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne",
    "row_stack": "vstack", "special_expit": "sigmoid", "special_exp2": "exp2",
    "special_expm1": "expm1", "special_log1p": "log1p", "special_logsumexp": "logsumexp",
    "special_softmax": "softmax", "special_log_softmax": "log_softmax",
    "special_round": "round", "special_erf": "erf", "special_erfc": "erfc",
    "special_erfinv": "erfinv", "special_logit": "logit", "special_xlogy": "xlogy",
    "special_sinc": "sinc", "special_psi": "digamma", "special_digamma": "digamma",
    "special_gammaln": "lgamma", "special_i0": "i0", "linalg_matmul": "matmul",
    "linalg_diagonal": "diagonal", "linalg_det": "det", "linalg_vecdot": "vecdot",
    "linalg_cross": "cross", "linalg_matrix_norm": "matrix_norm",
})


@dataclass(frozen=True)
class Allowance:
    """What one exercise's answer may compute with (see the module docstring)."""

    says: str = ("plain Python (math, collections, itertools...), NumPy, and torch's "
                 "elementary tensor operations")
    modules: tuple[str, ...] = PLAIN + NUMPY + TORCH
    torch_ops: frozenset = ELEMENTARY
    builtins: frozenset = BUILTINS
    c_modules: tuple[str, ...] = C_MODULES
    never: tuple[str, ...] = NEVER

    def allows_op(self, name: str) -> bool:
        """Whether the torch function mode may let the op ``name`` run: one of ``torch_ops``,
        an alias of one (``subtract``), or the in-place form of one (``tril_``,
        ``clamp_min_``, ``__ifloordiv__``)."""
        ops = self.torch_ops
        if name in ops or ALIASES.get(name) in ops:
            return True
        if name.startswith("__i") and name.endswith("__"):  # __iadd__: in place of __add__
            return f"__{name[3:]}" in ops
        if name.endswith("_") and not name.endswith("__"):  # add_: in place of add
            return name[:-1] in ops or ALIASES.get(name[:-1]) in ops
        return False


DEFAULT = Allowance()
# What running a given model takes: the course's layers it is built from, and theirs in torch.
MODEL_MODULES = (
    "course_utils.models.attention", "course_utils.models.transformer", "course_utils.validation")
MODEL_OPS = frozenset({"linear", "dropout", "layer_norm", "scaled_dot_product_attention",
                       "multi_head_attention_forward", "embedding"})
# 02's losses may take PyTorch's cross-entropy (log-softmax and the negative log-likelihood
# of the text); its closed-form gradient no autograd.
LOSSES = frozenset({"cross_entropy", "nll_loss"})
NO_AUTOGRAD = Allowance(torch_ops=(ELEMENTARY | LOSSES) - {
    "requires_grad_", "enable_grad", "set_grad_enabled", "grad.__get__"})
# Exercises whose softmax is the student's own work.
NO_SOFTMAX = Allowance(
    says=DEFAULT.says + ", but not torch's softmax functions (softmax, log_softmax, "
                        "logsumexp, logaddexp)",
    torch_ops=ELEMENTARY - {"softmax", "log_softmax", "logsumexp", "logaddexp"})

BYTE_LEVEL = Allowance(
    says=DEFAULT.says + ", the regex module, and reading a tokenizer's ranks",
    modules=DEFAULT.modules + ("regex", "course_utils.validation"),
    c_modules=DEFAULT.c_modules + ("regex", "_regex"))

# Fragments of the names of torch functions that do an exercise's whole job (a record's
# ``torch_twins``): "layer_norm" refuses F.layer_norm, torch.layer_norm,
# torch.native_layer_norm and torch.ops.aten.native_layer_norm.
ATTENTION = ("scaled_dot_product", "multi_head_attention")
NORMALISATIONS = ("layer_norm", "group_norm", "batch_norm", "instance_norm", "rms_norm")


# --- rules ---------------------------------------------------------------------------

class RuleBroken(AssertionError):
    """An answer broke a rule its exercise states."""


def _tensors(result) -> list[torch.Tensor]:
    items = result if isinstance(result, tuple | list) else (result,)
    return [item for item in items if isinstance(item, torch.Tensor)]


class Rule:
    """A rule made from the answer's arguments, that watches nothing until a subclass says
    what: ``before(name)`` ahead of each torch call, ``after(name, result)`` after it."""

    def __init__(self, exercise: str, args: tuple, kwargs: dict):
        self.exercise = exercise

    def before(self, name: str) -> None:
        pass

    def after(self, name: str, result) -> None:
        pass


class ShapeRule(Rule):
    """A rule on the tensors the answer makes: while ``active``, a tensor that ``refuses``
    fails the test, with a message naming its shape, the call that made it and ``reason``."""

    active = False

    def refuses(self, tensor: torch.Tensor) -> bool:
        raise NotImplementedError

    def reason(self) -> str:
        raise NotImplementedError

    def after(self, name: str, result) -> None:
        if not self.active:
            return
        for tensor in _tensors(result):
            if self.refuses(tensor):
                raise RuleBroken(f"{self.exercise} made a tensor of shape {tuple(tensor.shape)} "
                                 f"with {name}: {self.reason()}")


class NoAutograd(Rule):
    """The exercise asks for a gradient worked out in closed form."""

    CALLS = {"backward", "grad", "requires_grad_", "requires_grad.__set__", "vjp", "jvp",
             "jacobian", "hessian", "vmap"}

    def _broken(self, what: str) -> RuleBroken:
        return RuleBroken(
            f"{self.exercise} used autograd ({what}): write the gradient in closed form with "
            "tensor operations; autograd is not allowed while the tests run your function"
        )

    def before(self, name: str) -> None:
        if name in self.CALLS:
            raise self._broken(name)

    def after(self, name: str, result) -> None:
        if any(tensor.requires_grad for tensor in _tensors(result)):
            raise self._broken(f"{name} returned a tensor that requires a gradient")


class NoSquareMatrix(ShapeRule):
    """No N_q × N_k matrix: the answer's first two arguments are the queries ``(..., N_q, D)``
    and the keys ``(..., N_k, D)``. The rule holds only where it is unambiguous: both
    lengths above 1 and unlike every other size of the inputs."""

    def __init__(self, exercise: str, args: tuple, kwargs: dict):
        super().__init__(exercise, args, kwargs)
        q, k = args[:2]
        self.n_q, self.n_k = q.shape[-2], k.shape[-2]
        other = {size for tensor in args if isinstance(tensor, torch.Tensor)
                 for axis, size in enumerate(tensor.shape) if axis != tensor.dim() - 2}
        self.active = min(self.n_q, self.n_k) > 1 and not {self.n_q, self.n_k} & other

    def refuses(self, tensor: torch.Tensor) -> bool:
        sizes = list(tensor.shape)
        if self.n_q in sizes:
            sizes.remove(self.n_q)  # one axis for the queries, another for the keys
        return len(sizes) < tensor.dim() and self.n_k in sizes

    def reason(self) -> str:
        return (f"that is the {self.n_q} × {self.n_k} matrix of every query against every key, "
                "which this exercise refuses (no N × N matrix): look at which of your products "
                "makes it, and in what order your products are taken")


class OneRow(ShapeRule):
    """The new token's row only: the answer takes ``(x_new, K_cache, V_cache, ...)``, the
    cache's n tokens on the axis -2 of ``K_cache``, and makes no tensor with two axes as long
    as the sequence (n or n + 1 each), the matrix of every position against every position
    that recomputing the earlier rows takes. The rule holds only where it is unambiguous: n
    above 1, and n and n + 1 unlike every other size of the inputs."""

    def __init__(self, exercise: str, args: tuple, kwargs: dict):
        super().__init__(exercise, args, kwargs)
        self.n = args[1].shape[-2]
        self.lengths = {self.n, self.n + 1}
        other = {size for position, tensor in enumerate(args) if isinstance(tensor, torch.Tensor)
                 for axis, size in enumerate(tensor.shape)
                 if not (position in (1, 2) and axis == tensor.dim() - 2)}
        self.active = self.n > 1 and not self.lengths & other

    def refuses(self, tensor: torch.Tensor) -> bool:
        return sum(size in self.lengths for size in tensor.shape) >= 2

    def reason(self) -> str:
        return (f"that is every one of the {self.n + 1} positions against every other, the "
                "earlier rows computed again, which this exercise asks you to avoid (the new "
                "token's row only)")


class LinearWork(Rule):
    """The answer takes ``(q, k, v, feature_map)``, the positions on the axis -2 of ``q``,
    ``k`` and ``v``, and its work must grow linearly with them. Nothing to watch call by
    call: ``checks.guards.cost`` runs the answer again at two lengths and counts its work."""


class ChunkedWork(LinearWork):
    """The answer takes ``(q, k, v, feature_map, chunk_size)`` and works chunk by chunk: its
    operations grow with the number of chunks, not of positions, and no tensor it makes
    outgrows the chunked form's. Nothing to watch call by call: ``checks.guards.cost`` runs
    the answer again at 4 and 8 chunks and measures both."""

