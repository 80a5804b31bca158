ASSIGNMENT = "01_static_vs_contextual"

ROW_OF_W_T = """
def embed(weight_t, n):
    return weight_t[n]
"""

DOT_PRODUCT = """
def cosine_matrix(a, b):
    return a @ b.T
"""

# Divides by |a_i| only: the rows of b keep their lengths.
ONE_NORM = """
def cosine_matrix(a, b):
    return (a / a.norm(dim=1, keepdim=True)) @ b.T
"""

INCLUDES_ITSELF = """
def nearest_words(word, vocabulary, vectors, k):
    me = vocabulary.index(word)
    similarity = F.cosine_similarity(vectors[me].unsqueeze(0), vectors, dim=1)
    return [vocabulary[n] for n in similarity.topk(k).indices.tolist()]
"""

ASCENDING = """
def nearest_words(word, vocabulary, vectors, k):
    me = vocabulary.index(word)
    similarity = F.cosine_similarity(vectors[me].unsqueeze(0), vectors, dim=1)
    similarity[me] = float("inf")
    return [vocabulary[n] for n in similarity.argsort().tolist()[:k]]
"""

NO_SOFTMAX = """
def updated_embedding(E, i, Q, V):
    weights = E[: i + 1] @ Q
    return E[i] + weights @ V[: i + 1]
"""

# Lets the words after position i into the softmax and the sum.
LATER_WORDS = """
def updated_embedding(E, i, Q, V):
    weights = torch.softmax(E @ Q, dim=0)
    return E[i] + weights @ V
"""

WRONG = {
    "takes_a_row": {"embed": ROW_OF_W_T},
    "dot_product_not_cosine": {"cosine_matrix": DOT_PRODUCT, "nearest_words": INCLUDES_ITSELF},
    "one_norm_only": {"cosine_matrix": ONE_NORM},
    "neighbours_ascending": {"nearest_words": ASCENDING},
    "delta_without_softmax": {"updated_embedding": NO_SOFTMAX},
    "later_words_count": {"updated_embedding": LATER_WORDS},
}

CORRECT: dict[str, dict[str, str]] = {}
