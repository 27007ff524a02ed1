"""Nugget-record simulator: latent response quality drives both the human vote and the nugget assignments.

For every single-turn battle with a vote (from any release or the Search Arena simulator), the model is

    z ~ N(0, 1 + σ_h²) truncated to the vote's region:  model_a: z < −c;  model_b: z > c;
        tie: |z| ≤ c;  tie (bothbad): |z| ≤ c_bb                     (z = Δ + σ_h e, e ~ N(0, 1) human noise)
    Δ | z ~ N(z / (1 + σ_h²), σ_h² / (1 + σ_h²))   (the quality difference q_b − q_a, a priori N(0, 1))
    q̄ ~ N(0, s_q²);  q_a = q̄ − Δ/2,  q_b = q̄ + Δ/2
    n ~ 1 + NegBin(mean μ_n − 1, dispersion r)  nuggets; each vital with probability π_v
    u_is = γ q_s + σ_b η_s + ξ_i + ε_is       (η_s, ε_is ~ N(0, 1); ξ_i ~ N(0, σ_ξ²) the nugget's difficulty)
    assignment = support if u > t_1, partial_support if t_0 < u ≤ t_1, else not_support

except that a share π of the votes is unrelated to quality (for those battles Δ ~ N(0, 1) whatever the vote:
careless or idiosyncratic voters; without it no setting of the other parameters gives both the published
33% nugget ties among human ties and 22% among decided votes). The human vote and the nugget scores share only
the latent Δ. The vote is taken from the battles (not
redrawn): the simulator draws Δ given the vote.

Calibration (:func:`calibrate`, ``python -m analysis_lib.nuggets.simulate.quality``): ``c``, ``c_bb``, ``γ`` and
``σ_b`` are (and π) fitted by minimising the multinomial deviance between the simulated row-conditional nugget
preferences at threshold 0.07 and the published overall matrix (``published/nuggets_confusion_matrices.csv``,
NG Figure 4), with common random numbers and Nelder–Mead. The other parameters are planted by hand, not fitted:
μ_n = 12.5 nuggets per battle (NG §4), r = 6, π_v = 0.5, σ_h = 0.25, s_q = 0.5, σ_ξ = 1, t_0 = −0.5, t_1 = 0.5. The K-S
statistics of Figure 2, the threshold sweep and everything else then *fall out* of the model; they are not fitted.

What the fit gives (deviance ≈ 4 on the 12 cells): c ≈ 0.11, c_bb ≈ 1.89, γ ≈ 6.5, σ_b ≈ 0.10 and π ≈ 0.59 — a
strong quality signal in the nuggets and a large share of uninformative votes. A consequence to keep in mind: the
simulated All differences are far more extreme than real ones (many battles at ±1 and at exactly 0), so the
Figure 3 densities have spikes the paper's do not; the K-S D fall out near the published ones (≈ 0.34 / 0.24 /
0.20 against 0.313 / 0.209 / 0.205). Fits with γ fixed at 1–3 reached deviances of 18–360 (Nelder–Mead on this
step-like objective is start-dependent; the default start is the best fit found).
Query classes are drawn with the class shares of the published per-class matrices (no class effect is planted,
so every class has the same expected inversion rate). Nugget texts are pseudo-words from a per-battle topic
vocabulary (for NG-T2 only: their Jaccard and cosine are properties of this generator, not of real nuggets).
With ``responses=True`` (the default when ``texts=True``) every side also gets an ``answer_text`` and every
battle its ``chunks``, built from those nugget texts and the assignments (:mod:`analysis_lib.nuggets.simulate.texts`,
a separate random stream, so nothing above changes); :func:`analysis_lib.nuggets.simulate.texts.second_assigner`
gives a second model's assignments with a planted agreement (NG-F7).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np
import polars as pl
from scipy import optimize, special

from analysis_lib.fetch import published
from analysis_lib.nuggets.agreement import NuggetConfusion
from analysis_lib.nuggets.published import published_confusions
from analysis_lib.nuggets.records import (
    NO_VOTE,
    NUGGET_SCHEMA,
    SIDE_SCHEMA,
    NuggetRecords,
    _exclude,
)
from analysis_lib.nuggets.scores import TIE_THRESHOLD
from analysis_lib.nuggets.simulate.texts import response_texts
from analysis_lib.search_arena.schema import VOTES_BY_SIDE


@dataclass(frozen=True)
class NuggetSimParams:
    """Planted parameters (see the module docstring for the model)."""

    vote_cutoff: float = 0.1096      # c (fitted)
    bothbad_cutoff: float = 1.8921   # c_bb (fitted)
    signal: float = 6.4884           # γ (fitted)
    side_noise: float = 0.1048       # σ_b (fitted)
    random_vote_share: float = 0.5947  # π: share of votes unrelated to quality (fitted)
    mean_nuggets: float = 12.5       # μ_n
    nb_dispersion: float = 6.0       # r
    vital_share: float = 0.5         # π_v
    human_noise: float = 0.25        # σ_h
    quality_sd: float = 0.5          # s_q
    difficulty_sd: float = 1.0       # σ_ξ
    partial_cut: float = -0.5        # t_0
    support_cut: float = 0.5         # t_1


DEFAULT_PARAMS = NuggetSimParams()
_FITTED = ("vote_cutoff", "bothbad_cutoff", "signal", "side_noise", "random_vote_share")


def _region(vote: np.ndarray, p: NuggetSimParams) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of z / sd(z) (standardised) for each vote."""
    s2 = np.sqrt(1.0 + p.human_noise**2)
    lo = np.select([vote == 0, vote == 2, vote == 1, vote == 3],
                   [-np.inf, p.vote_cutoff / s2, -p.vote_cutoff / s2, -p.bothbad_cutoff / s2])
    hi = np.select([vote == 0, vote == 2, vote == 1, vote == 3],
                   [-p.vote_cutoff / s2, np.inf, p.vote_cutoff / s2, p.bothbad_cutoff / s2])
    return lo, hi


@dataclass(frozen=True)
class _Noise:
    """Standard draws reused across parameter values (common random numbers)."""

    u_z: np.ndarray
    u_random: np.ndarray
    e_delta: np.ndarray
    q_mean: np.ndarray
    n: np.ndarray
    battle: np.ndarray   # battle index of each nugget
    vital: np.ndarray
    eta: np.ndarray      # (battles, 2)
    xi: np.ndarray       # (nuggets,)
    eps: np.ndarray      # (nuggets, 2)


def _draw_noise(n_battles: int, rng: np.random.Generator, p: NuggetSimParams) -> _Noise:
    mean_extra = p.mean_nuggets - 1.0
    prob = p.nb_dispersion / (p.nb_dispersion + mean_extra)
    n = 1 + rng.negative_binomial(p.nb_dispersion, prob, size=n_battles)
    battle = np.repeat(np.arange(n_battles), n)
    return _Noise(
        u_z=rng.uniform(size=n_battles), u_random=rng.uniform(size=n_battles),
        e_delta=rng.standard_normal(n_battles), q_mean=rng.standard_normal(n_battles),
        n=n, battle=battle, vital=rng.uniform(size=battle.size) < p.vital_share,
        eta=rng.standard_normal((n_battles, 2)), xi=rng.standard_normal(battle.size),
        eps=rng.standard_normal((battle.size, 2)),
    )


def _assign(vote: np.ndarray, noise: _Noise, p: NuggetSimParams) -> tuple[np.ndarray, np.ndarray]:
    """Latent Δ per battle and assignment codes (0 not, 1 partial, 2 support) per (nugget, side)."""
    lo, hi = _region(vote, p)
    flo, fhi = special.ndtr(lo), special.ndtr(hi)
    v = 1.0 + p.human_noise**2
    z = np.sqrt(v) * special.ndtri(np.clip(flo + noise.u_z * (fhi - flo), 1e-15, 1 - 1e-15))
    delta = z / v + p.human_noise / np.sqrt(v) * noise.e_delta
    # a share π of votes carries no information: there Δ is drawn from its prior N(0, 1)
    random_vote = noise.u_random < p.random_vote_share
    delta = np.where(random_vote, special.ndtri(np.clip(noise.u_z, 1e-15, 1 - 1e-15)), delta)
    qbar = p.quality_sd * noise.q_mean
    q = np.stack([qbar - delta / 2.0, qbar + delta / 2.0], axis=1)          # (battles, 2)
    u = (p.signal * q + p.side_noise * noise.eta)[noise.battle] + p.difficulty_sd * noise.xi[:, None] + noise.eps
    code = (u > p.partial_cut).astype(np.int8) + (u > p.support_cut).astype(np.int8)
    return delta, code


def _all_scores(code: np.ndarray, noise: _Noise) -> np.ndarray:
    """All score per (battle, side): mean of support values 1 / 0.5 / 0."""
    value = code.astype(float) / 2.0
    n_b = noise.n.size
    sums = np.stack([np.bincount(noise.battle, weights=value[:, s], minlength=n_b) for s in (0, 1)], axis=1)
    return sums / noise.n[:, None]


def _row_conditional(vote: np.ndarray, scores: np.ndarray, threshold: float) -> np.ndarray:
    d = scores[:, 1] - scores[:, 0]
    pref = np.where(np.abs(d) <= threshold + 1e-9, 1, np.where(d < 0, 0, 2))
    counts = np.zeros((4, 3))
    np.add.at(counts, (vote, pref), 1)
    return counts


def target_matrix() -> NuggetConfusion:
    """The calibration target: the published overall matrix (NG Figure 4, threshold 0.07)."""
    return published_confusions()[("overall", "all")]


def calibrate(
    per_row: int = 4000, seed: int = 12345, start: NuggetSimParams = DEFAULT_PARAMS
) -> tuple[NuggetSimParams, float]:
    """Fit ``c``, ``c_bb``, ``γ``, ``σ_b`` to the published overall matrix (module docstring); returns the fitted
    parameters and the final deviance 2 Σ O log(O / E) over the 12 cells (E from the simulated row shares)."""
    target = target_matrix().counts.astype(float)
    vote = np.repeat(np.arange(4), per_row)
    noise = _draw_noise(vote.size, np.random.default_rng(seed), start)

    def deviance(x: np.ndarray) -> float:
        if np.any(x <= 0) or x[-1] >= 1:
            return 1e9
        p = replace(start, **dict(zip(_FITTED, x.tolist(), strict=True)))
        _, code = _assign(vote, noise, p)
        sim = _row_conditional(vote, _all_scores(code, noise), TIE_THRESHOLD)
        share = (sim + 0.5) / (sim + 0.5).sum(axis=1, keepdims=True)
        expected = share * target.sum(axis=1, keepdims=True)
        return float(2.0 * np.sum(target * np.log(np.where(target > 0, target / expected, 1.0))))

    x0 = np.array([getattr(start, k) for k in _FITTED])
    res = optimize.minimize(deviance, x0, method="Nelder-Mead", options={"xatol": 1e-3, "fatol": 1e-3, "maxiter": 400})
    return replace(start, **dict(zip(_FITTED, res.x.round(4).tolist(), strict=True))), float(res.fun)


def _class_shares() -> tuple[list[str], np.ndarray, float]:
    """Query classes, their shares, and the share of battles with a class, from the published per-class matrices."""
    frame = pl.read_csv(published("nuggets_confusion_matrices"))
    per = (frame.filter(pl.col("subset_type") == "query_category")
           .group_by("subset", maintain_order=True)
           .agg(pl.sum_horizontal("nugget_model_a", "nugget_tie", "nugget_model_b").sum().alias("n")))
    total = frame.filter(pl.col("subset_type") == "overall").select(
        pl.sum_horizontal("nugget_model_a", "nugget_tie", "nugget_model_b").sum()).item()
    n = per["n"].to_numpy().astype(float)
    return per["subset"].to_list(), n / n.sum(), float(min(1.0, n.sum() / total))


_SYLLABLES = np.array(["ka", "lo", "mi", "ne", "ru", "ta", "vi", "so", "pe", "da", "zu", "ri", "mo", "fa", "ge", "xi"])


def zipf_cdf(size: int) -> np.ndarray:
    """The cumulative distribution of word ranks 1 … ``size`` with P(rank r) ∝ 1/r, normalised exactly as
    numpy's ``Generator.choice(size, p=...)`` normalises it, so ``searchsorted(cdf, rng.random(k), "right")``
    draws the same ranks as ``rng.choice(size, size=k, p=p)`` from the same stream, without re-checking ``p``
    (O(size)) on every call."""
    p = 1.0 / np.arange(1, size + 1)
    p /= p.sum()
    cdf = p.cumsum()
    cdf /= cdf[-1]
    return cdf


def _texts(noise: _Noise, rng: np.random.Generator, vocab_size: int = 4000, topic_size: int = 30) -> list[str]:
    """Pseudo-word nugget texts: 5–10 words, 70% from the battle's topic words, 30% from the global vocabulary
    (word ranks Zipf-distributed, :func:`zipf_cdf`)."""
    vocab = np.array(["".join(rng.choice(_SYLLABLES, size=3)) for _ in range(vocab_size)])
    zipf = 1.0 / np.arange(1, vocab_size + 1)
    zipf /= zipf.sum()
    topics = rng.choice(vocab_size, size=(noise.n.size, topic_size), p=zipf)
    cdf = zipf_cdf(vocab_size)
    out = []
    lengths = rng.integers(5, 11, size=noise.battle.size)
    # one nugget at a time: the draws of consecutive nuggets interleave on one stream (kept for reproducibility)
    for b, k in zip(noise.battle.tolist(), lengths.tolist(), strict=True):
        from_topic = rng.uniform(size=k) < 0.7
        words = np.where(from_topic, topics[b, rng.integers(0, topic_size, size=k)],
                         cdf.searchsorted(rng.random(k), side="right"))
        out.append(" ".join(vocab[words].tolist()))
    return out


@dataclass(frozen=True)
class SimulatedNuggets:
    """Simulated nugget records: ``records`` in the layout :func:`analysis_lib.nuggets.records.load_nugget_records`
    returns, and ``planted``: the model parameters plus per-battle truth summaries (see :func:`simulate_nuggets`)."""

    records: NuggetRecords
    planted: dict[str, float]


def simulate_nuggets(
    battles: pl.DataFrame, *, seed: int = 0, params: NuggetSimParams = DEFAULT_PARAMS, texts: bool = True,
    responses: bool | None = None,
) -> SimulatedNuggets:
    """Nugget records for the battles with a vote (columns ``conv_id``, ``winner``; ``prompt``, ``model_a``,
    ``model_b``, ``language`` used when present), and the planted quantities.

    Battles with a null winner are left out (counted in ``records.excluded``). The planted dict holds the model
    parameters plus the per-battle truth summaries: the correlation of Δ with the All-score difference and the
    mean nuggets per battle actually drawn. ``responses`` (default: ``texts``; needs ``texts``) adds response
    texts (``answer_text``) and retrieved ``chunks`` from their own random stream (module docstring).
    """
    responses = texts if responses is None else responses
    if responses and not texts:
        raise ValueError("responses=True needs texts=True (response texts are built from the nugget texts)")
    missing = [c for c in ("conv_id", "winner") if c not in battles.columns]
    if missing:
        raise ValueError(f"battles lack column(s) {missing} needed by the nugget simulator")
    no_vote = int(battles["winner"].null_count())
    battles = battles.filter(pl.col("winner").is_not_null())
    bad = sorted(set(battles["winner"].unique().to_list()) - set(VOTES_BY_SIDE))
    if bad:
        raise ValueError(f"battles: winner values {bad} outside {list(VOTES_BY_SIDE)}")
    rng = np.random.default_rng(seed)
    codes = {v: k for k, v in enumerate(VOTES_BY_SIDE)}
    vote = battles["winner"].replace_strict(codes, return_dtype=pl.Int64).to_numpy()
    noise = _draw_noise(vote.size, rng, params)
    delta, code = _assign(vote, noise, params)
    classes, shares, with_class = _class_shares()
    has_class = rng.uniform(size=vote.size) < with_class
    cls = rng.choice(len(classes), size=vote.size, p=shares)
    qid = battles["conv_id"].cast(pl.String).to_numpy()

    def col(name: str) -> list[str | None]:
        return battles[name].to_list() if name in battles.columns else [None] * battles.height

    cats = [[classes[c]] if h else [] for c, h in zip(cls, has_class, strict=True)]
    text = _texts(noise, rng) if texts else [""] * noise.battle.size
    answers: list[str | None] = [None] * (2 * vote.size)
    chunks: list[list[str] | None] = [None] * (2 * vote.size)
    if responses:
        ans_a, ans_b, per_battle = response_texts(text, noise.battle, noise.n, code, np.random.default_rng([seed, 1]))
        answers, chunks = [*ans_a, *ans_b], [*per_battle, *per_battle]
    side_rows = {
        "qid": np.r_[qid, qid], "side": ["a"] * vote.size + ["b"] * vote.size,
        "winner": battles["winner"].to_list() * 2, "query": col("prompt") * 2,
        "model": col("model_a") + col("model_b"), "language": col("language") * 2,
        "query_categories": cats * 2, "answer_text": answers, "chunks": chunks,
    }
    position = np.arange(noise.battle.size) - np.repeat(np.cumsum(noise.n) - noise.n, noise.n)
    labels = np.array(["not_support", "partial_support", "support"])
    importance = np.where(noise.vital, "vital", "okay")
    nug = {
        "qid": np.r_[qid[noise.battle], qid[noise.battle]],
        "side": ["a"] * noise.battle.size + ["b"] * noise.battle.size,
        "position": np.r_[position, position], "text": text * 2, "importance": np.r_[importance, importance],
        "assignment": np.r_[labels[code[:, 0]], labels[code[:, 1]]],
    }
    sides = pl.DataFrame(side_rows, schema=SIDE_SCHEMA)
    nuggets = pl.DataFrame(nug, schema=NUGGET_SCHEMA)
    records = _exclude(sides, nuggets, f"nugget simulator (seed={seed}) on {battles.height:,} voted battles")
    records.excluded[NO_VOTE] += no_vote
    scores = _all_scores(code, noise)
    planted = {**asdict(params), "corr(Δ, All_B − All_A)": float(np.corrcoef(delta, scores[:, 1] - scores[:, 0])[0, 1]),
               "mean nuggets per battle (drawn)": float(noise.n.mean())}
    return SimulatedNuggets(records, planted)


if __name__ == "__main__":  # the documented fit
    fitted, dev = calibrate()
    print({k: getattr(fitted, k) for k in _FITTED}, f"deviance {dev:.2f} on 8 degrees of freedom")
