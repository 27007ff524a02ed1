"""Step 0 of the Search Arena simulator: calibration constants, the calibrated model table, the planted truth type.

Every number here is either a published figure (source in the package docstring of
:mod:`analysis_lib.search_arena.simulate.conversations`) or a choice of the simulator; nothing here draws random
numbers.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from datetime import datetime
from importlib import resources
from typing import Any

import numpy as np
import polars as pl

from analysis_lib.ranking import BASE, INIT_RATING, SCALE
from analysis_lib.search_arena.domains import DOMAIN_GROUPS
from analysis_lib.search_arena.models import ANCHOR as ANCHOR_MODEL
from analysis_lib.search_arena.models import NON_SEARCH_MODEL, NON_SEARCH_RAW, model_table
from analysis_lib.search_arena.schema import FULL_SIZE
from analysis_lib.search_arena.schema import INTENTS as SCHEMA_INTENTS

# --------------------------------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------------------------------

START = datetime(2025, 3, 18, 16, 39, 0)
END = datetime(2025, 5, 8, 23, 59, 59)

P_TIE = 0.205
P_BOTHBAD = 0.114
P_VOTE = 0.5315
P_VOTE_NONSEARCH = 0.365
NONSEARCH_PAIR_BOOST = 1.4
ANCHOR = (ANCHOR_MODEL, INIT_RATING)

P_NULL_COUNTRY = 0.08
P_MODERATION = 0.004
P_EMPTY_TRACE = 0.003
P_ODD_MESSAGES = 0.056
P_MALFORMED_URL = 0.0005
P_MULTILINGUAL = 0.11
P_SECONDARY_UNASSIGNED = 0.40

INTENTS = (
    "Factual Lookup", "Info Synthesis", "Analysis", "Recommendation", "Explanation",
    "Creative Generation", "Guidance", "Text Processing", "Other",
)
if sorted(INTENTS) != sorted(SCHEMA_INTENTS):  # the order above is that of the weights (and of the RNG draws)
    raise AssertionError(f"simulator intents {INTENTS} are not the release's {SCHEMA_INTENTS}")
# FACTS question counts; Factual Lookup scaled to 19.3% of non-Other (SA §2.2): 0.193 * 23,824 / 0.807.
INTENT_WEIGHTS = np.array([5698, 5763, 3568, 3357, 3415, 3264, 3357, 1100, 3044], dtype=float)
PROMPT_WORDS = np.array([16.3, 65.0, 72.7, 58.0, 24.7, 95.0, 80.0, 85.1, 60.0])
RESPONSE_WORDS = np.array([168.3, 330.0, 393.2, 360.0, 340.0, 422.8, 370.0, 260.0, 230.0])
CITATIONS = np.array([5.7, 6.8, 6.4, 6.9, 6.0, 5.0, 5.3, 4.2, 4.8])
PROMPT_SIGMA = 1.0
RESPONSE_SIGMA = 0.55
CITATION_DISPERSION = 4.0
MAX_CITATIONS = 48

TURN_P = np.array(
    [0.776, 3288 / FULL_SIZE, 966 / FULL_SIZE, 460 / FULL_SIZE]
    + [0.0] * 6
)
_tail = 1.0 - TURN_P[:4].sum()
TURN_P[4:] = _tail * (0.5 ** np.arange(6)) / (0.5 ** np.arange(6)).sum()

VERBOSITY = {
    "sonar": 0.85,
    "sonar-pro": 1.0,
    "sonar-pro-high": 1.15,
    "sonar-reasoning": 0.8,
    "sonar-reasoning-pro-high": 1.25,
    "gemini-2.0-flash-grounding": 0.9,
    "gemini-2.5-flash-preview-04-17-grounding": 1.15,
    "gemini-2.0-pro-exp-02-05-grounding": 1.1,
    "gemini-2.5-pro-exp-03-25-grounding": 1.25,
    NON_SEARCH_RAW: 1.35,
    "gpt-4o-mini-search-preview": 0.8,
    "gpt-4o-search-preview": 0.85,
    "gpt-4o-search-preview-high": 0.95,
    "gpt-4o-search-preview-high-loc": 0.95,
}
ZERO_CITATION_P = {"sonar": 0.04, "gemini": 0.20, "gpt": 0.55}
RARE_MODEL_RESPONSES = {"gemini-2.0-pro-exp-02-05-grounding": 60}
SERVED = {  # raw model -> (first day, last day) served; None = whole period
    "gemini-2.5-flash-preview-04-17-grounding": (datetime(2025, 4, 17), None),
    "gemini-2.5-pro-exp-03-25-grounding": (datetime(2025, 3, 26), None),
    "gemini-2.0-pro-exp-02-05-grounding": (None, datetime(2025, 3, 26)),
}

# Source-group mix per family, order of DOMAIN_GROUPS (the last, `other`, takes the rest).
SOURCE_MIX = {
    "sonar": [0.085, 0.05, 0.04, 0.045, 0.028, 0.04, 0.06, 0.04, 0.015, 0.012],
    "gemini": [0.04, 0.07, 0.05, 0.05, 0.03, 0.02, 0.03, 0.04, 0.02, 0.01],
    "gpt": [0.01, 0.06, 0.06, 0.13, 0.065, 0.01, 0.015, 0.03, 0.015, 0.015],
}

BETAS = {
    "response_length": 0.334,
    "citation_count": 0.209,
    **{f"cites_{g}": 0.0 for g in DOMAIN_GROUPS},
}
BETAS.update(cites_tech_coding=0.073, cites_community_blog=0.061, cites_social_media=0.057, cites_wiki=-0.071)
FEATURES = ("response_length", "citation_count", *(f"cites_{g}" for g in DOMAIN_GROUPS))

HOSTS: dict[str, list[str]] = {
    "youtube": ["www.youtube.com", "m.youtube.com", "music.youtube.com"],
    "gov_edu": [
        "pmc.ncbi.nlm.nih.gov", "www.ncbi.nlm.nih.gov", "www.cdc.gov", "www.nasa.gov", "www.irs.gov",
        "www.gov.uk", "www.census.gov", "www.state.gov", "www.fda.gov", "www.harvard.edu", "web.mit.edu",
        "www.stanford.edu", "www.bls.gov", "www.usa.gov", "www.army.mil", "www.ed.gov",
    ],
    "wiki": [
        "en.wikipedia.org", "ru.wikipedia.org", "zh.wikipedia.org", "de.wikipedia.org", "es.wikipedia.org",
        "fr.wikipedia.org", "ja.wikipedia.org", "www.wikihow.com", "commons.wikimedia.org",
    ],
    "us_news": [
        "www.forbes.com", "apnews.com", "www.cnn.com", "www.cnbc.com", "www.investopedia.com",
        "finance.yahoo.com", "www.nytimes.com", "www.bloomberg.com", "www.npr.org", "www.washingtonpost.com",
        "www.wsj.com", "www.nbcnews.com", "www.usatoday.com", "www.foxnews.com", "www.axios.com", "time.com",
        "www.cbsnews.com", "www.newsweek.com", "fortune.com", "www.theatlantic.com", "www.politico.com",
        "www.latimes.com",
    ],
    "foreign_news": [
        "www.reuters.com", "www.bbc.com", "www.theguardian.com", "www.aljazeera.com", "www.dw.com",
        "www.france24.com", "www.independent.co.uk", "www.hindustantimes.com", "www.thehindu.com",
        "www.ndtv.com", "www.lemonde.fr", "elpais.com", "www.cbc.ca", "www.abc.net.au", "www.straitstimes.com",
        "vnexpress.net", "www.japantimes.co.jp",
    ],
    "social_media": [
        "www.linkedin.com", "www.tiktok.com", "www.facebook.com", "www.instagram.com", "x.com", "twitter.com",
        "www.pinterest.com",
    ],
    "community_blog": [
        "www.reddit.com", "www.quora.com", "medium.com", "blog.google", "thegradient.substack.com",
        "techcrunchy.wordpress.com", "www.tumblr.com", "travelnotes.blogspot.com", "old.reddit.com",
    ],
    "tech_coding": [
        # microsoft.com is absent on purpose: the substring rule puts it in us_news ("ft.com").
        "github.com", "stackoverflow.com", "docs.github.com", "math.stackexchange.com", "gitlab.com", "dev.to",
        "unix.stackexchange.com", "www.codecademy.com",
    ],
    "academic_journal": [
        "arxiv.org", "www.nature.com", "www.sciencedirect.com", "link.springer.com", "www.jstor.org",
        "www.biorxiv.org", "www.researchgate.com",
    ],
    "retail": ["www.amazon.com", "www.ebay.com", "www.walmart.com", "www.target.com", "www.bestbuy.com",
               "www.costco.com"],
    "other": [
        "www.google.com", "support.google.com", "www.apple.com", "www.imdb.com", "www.britannica.com",
        "www.mayoclinic.org", "www.healthline.com", "www.webmd.com", "www.espn.com", "www.tripadvisor.com",
        "www.investing.com", "coinmarketcap.com", "www.statista.com", "habr.com", "ria.ru", "www.zhihu.com",
        "baike.baidu.com", "www.spiegel.de", "www.researchgate.net", "www.goodreads.com", "play.google.com",
        "www.timeanddate.com", "www.bbc.co.uk", "tass.ru", "www.gazeta.ru",
    ],
}

LANG_HEAD = {
    "English": 0.583, "Russian": 0.118, "Chinese": 0.070, "German": 0.030, "Spanish": 0.022, "French": 0.018,
    "Portuguese": 0.015, "Japanese": 0.013, "Korean": 0.010, "Italian": 0.009, "Polish": 0.008,
    "Ukrainian": 0.008, "Turkish": 0.007, "Vietnamese": 0.006, "Arabic": 0.006, "Persian": 0.005,
    "Indonesian": 0.005, "Dutch": 0.004,
}
LANG_TAIL = (
    "Hindi", "Czech", "Swedish", "Greek", "Hebrew", "Thai", "Hungarian", "Romanian", "Finnish", "Danish",
    "Norwegian", "Bulgarian", "Serbian", "Croatian", "Slovak", "Lithuanian", "Latvian", "Estonian", "Slovenian",
    "Kazakh", "Belarusian", "Bengali", "Tamil", "Urdu", "Malay", "Tagalog", "Swahili", "Catalan", "Basque",
    "Galician", "Armenian", "Georgian", "Azerbaijani", "Uzbek", "Mongolian", "Nepali", "Sinhala", "Khmer",
    "Burmese", "Amharic", "Yoruba", "Afrikaans", "Icelandic", "Irish", "Welsh", "Albanian", "Macedonian",
    "Bosnian", "Telugu", "Marathi", "Gujarati", "Punjabi", "Kannada",
)
CYRILLIC = {"Russian", "Ukrainian", "Bulgarian", "Serbian", "Kazakh", "Belarusian", "Macedonian", "Mongolian"}
CJK = {"Chinese", "Japanese"}

COUNTRY_HEAD = {
    "US": 0.187, "RU": 0.099, "DE": 0.059, "CN": 0.055, "GB": 0.03, "IN": 0.03, "FR": 0.025, "BR": 0.022,
    "UA": 0.02, "JP": 0.02, "KR": 0.018, "CA": 0.018, "TR": 0.016, "PL": 0.015, "IT": 0.015, "ES": 0.014,
    "VN": 0.013, "KZ": 0.012, "NL": 0.011, "ID": 0.011, "HK": 0.01, "TW": 0.01, "AU": 0.01, "IR": 0.009,
    "BY": 0.008, "SG": 0.008, "MX": 0.008,
}
COUNTRY_TAIL = (
    "AE SA EG IL TH MY PH AR CO CL PE SE NO FI DK CH AT BE CZ RO HU PT GR BG RS HR LT LV EE GE AM AZ UZ KG PK BD "
    "LK NG KE ZA NZ IE MA DZ TN VE EC UY MD SK SI CY LU IS MN NP KH MM QA KW JO LB IQ ET GH TZ UG CR PA GT DO BO "
    "PY BA MK AL ME TJ TM AF OM BH SN CM CI ZW ZM AO MZ LY SD SY YE HN SV NI JM TT PR MT LA BN MO BT MV RW NA BW"
).split()
N_COUNTRIES = 136

WORDS_EN = (
    "the of and to in is for that with on as are this be by from or an it at which can more its new data search "
    "results model system answer question source information based most also their these use time year world "
    "first two people other such one between where how about market price report study history city state "
    "company development research analysis energy health water food travel music film game team season player "
    "league policy government economy growth rate global local users online service product design quality "
    "performance support features version release update security network cloud software hardware device "
    "battery screen camera review best top list guide steps option cost value average total number percent "
    "million billion recent latest current official according article website page summary overview details "
    "example key important main different similar major early late high low large small long short strong "
    "weather climate science biology physics chemistry medicine treatment symptoms risk benefits effects"
).split()
WORDS_RU = (
    "и в не на что с по как это для из к от о но же да так все его она они был была было мы вы ты он "
    "год году время люди город страна мир данные ответ вопрос система модель поиск результат информация "
    "история цена рынок компания развитие анализ энергия здоровье вода еда музыка фильм игра команда "
    "политика экономика рост новый новые лучший первый основной важный большой малый высокий низкий"
).split()
WORDS_ZH = (
    "我们 你们 他们 这个 那个 什么 怎么 为什么 可以 没有 因为 所以 但是 如果 已经 还是 问题 答案 "
    "系统 模型 搜索 结果 信息 数据 时间 世界 国家 城市 公司 市场 价格 历史 发展 研究 分析 能源 健康 "
    "音乐 电影 游戏 政策 经济 增长 最新 主要 重要 不同 相同 推荐 比较 介绍 方法 步骤 原因 影响 建议"
).split()
WORDS_XX = (
    "el la los las de que y en un una por con para como más pero sus le les des une est pas sur avec "
    "der die das und ist nicht mit auf für dem den von zu im o os as um uma não com para mais muito "
    "il lo gli di che e non per con una sono het een van en niet op dat"
).split()
SYLLABLES = (
    "ka ri mo na te lu so vi pa ze do ga hu ni ro ta me li be fa go ju ke la mi no pe qu ra se ti "
    "um va wo xi yo zu ber con dor fen gal hol jin kor lan mer nor pol quin ras sol tor ur vel win yor zan"
).split()
TLDS = ("com", "org", "net", "ru", "de", "cn", "co.uk", "io", "fr", "jp", "info", "in", "es", "it", "com.br")


def _read_resource_csv(path: str) -> list[dict[str, str]]:
    text = resources.files("analysis_lib").joinpath(path).read_text()
    return list(csv.DictReader(text.splitlines()))


def model_calibration() -> list[dict[str, Any]]:
    """Raw models (:func:`analysis_lib.search_arena.models.model_table`) with pairing weight, verbosity and citation
    calibration."""
    names = [
        {k: (str(v).lower() if isinstance(v, bool) else v) for k, v in row.items()}
        for row in model_table().iter_rows(named=True)
    ]
    published = _read_resource_csv("resources/published/search_arena_24k_model_responses_citations.csv")
    counts = {r["raw_model"]: r for r in published}
    search_resp = sum(int(r["responses"]) for r in counts.values() if int(r["citations"]) > 0)
    search_cit = sum(int(r["citations"]) for r in counts.values())
    search_mean = search_cit / search_resp
    out = []
    for r in names:
        raw = r["raw_model"]
        c = counts.get(raw)
        responses = int(c["responses"]) if c else RARE_MODEL_RESPONSES[raw]
        per_resp = int(c["citations"]) / int(c["responses"]) if c else 27446 / 5920
        out.append(
            dict(
                raw=raw,
                model=r["model"],
                family=r["family"],
                search=r["search"] == "true",
                search_context=r["search_context"],
                responses=responses,
                verbosity=VERBOSITY[raw],
                citation_factor=per_resp / search_mean,
                zero_p=ZERO_CITATION_P[r["family"]] if r["search"] == "true" else 1.0,
            )
        )
    return out


def planted_ratings() -> dict[str, float]:
    """Planted Elo ratings per paper model name (``resources/simulator_ratings.csv``).

    Calibrated by ``scripts/calibrate_simulator.py`` so that a plain BT fit of a simulated release reproduces
    Table D.1 (the planted ratings are Table D.1 minus each model's style advantage), and so that the
    non-search model's decisive votes split like the published 126 : 90.
    """
    rows = _read_resource_csv("resources/simulator_ratings.csv")
    return {r["model"]: float(r["planted_rating"]) for r in rows}


@dataclass(frozen=True, eq=False)
class Planted:
    """The truth behind a simulated release.

    ``ratings``: paper model name -> Elo (anchor gpt-4o-search = 1000, scale 400, base 10).
    ``betas``: feature -> coefficient on the z-scored feature; ``features``: their order.
    ``p_tie``, ``p_bothbad``: the *target shares* of ties and both-bad ties among voted battles (20.5% and
    11.4%), not per-battle probabilities: a voted battle is a tie of either kind with probability
    ``t · 4 p (1 − p)`` (likelier between close responses), ``t`` set so that the two kinds together make up
    ``p_tie + p_bothbad`` of the voted battles, split ``p_tie : p_bothbad``.
    ``feature_mean``, ``feature_std``: of the raw difference d = (a - b)/(a + b + 1) over the voted battles,
    used to z-score. ``truth``: one row per conversation (``conv_id``, ``voted``, per-side int features
    ``<feature>_a/_b``, ``z_<feature>`` (null when not voted), ``logit`` and ``p_a`` = σ(logit), the expected
    half-win score of A, P(A wins) + P(tie of either kind) / 2 (not P(A wins | decisive), which is larger for
    ``p_a > 1/2`` because ties are concentrated among close battles); under ``params["tie_model"] ==
    "independent"`` ``p_a`` is P(A wins | decisive) and the half-win score is ``q/2 + (1 − q) p_a``).
    ``params``: the remaining calibration constants (vote rates, surprise rates, model table, source mix, the tie
    model).
    """

    ratings: dict[str, float]
    betas: dict[str, float]
    features: tuple[str, ...]
    p_tie: float
    p_bothbad: float
    n: int
    seed: int
    feature_mean: dict[str, float]
    feature_std: dict[str, float]
    truth: pl.DataFrame
    scale: float = SCALE
    base: float = BASE
    anchor: tuple[str, float] = ANCHOR
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def alpha(self) -> float:
        """ln(base)/scale: the logit per Elo point."""
        return math.log(self.base) / self.scale


@dataclass(frozen=True)
class Models:
    """The calibrated model table as arrays (one entry per raw model id, in table order)."""

    table: list[dict[str, Any]]
    raw_ids: np.ndarray
    paper: np.ndarray
    family: np.ndarray
    is_search: np.ndarray
    ns_idx: int
    ratings: dict[str, float]
    r_model: np.ndarray
    verbosity: np.ndarray
    citation_factor: np.ndarray
    zero_p: np.ndarray

    @property
    def is_gpt(self) -> np.ndarray:
        """OpenAI models (the non-search model never meets them)."""
        return self.family == "gpt"


def calibrated_models() -> Models:
    """:func:`model_calibration` and :func:`planted_ratings` as arrays; no random draws."""
    models = model_calibration()
    paper = np.array([m["model"] for m in models], dtype=object)
    is_search = np.array([m["search"] for m in models])
    ns_idx = int(np.flatnonzero(~is_search)[0])
    if paper[ns_idx] != NON_SEARCH_MODEL:
        raise AssertionError(f"the non-search model of the table is {paper[ns_idx]!r}, expected {NON_SEARCH_MODEL!r}")
    ratings = planted_ratings()
    return Models(
        table=models,
        raw_ids=np.array([m["raw"] for m in models], dtype=object),
        paper=paper,
        family=np.array([m["family"] for m in models], dtype=object),
        is_search=is_search,
        ns_idx=ns_idx,
        ratings=ratings,
        r_model=np.array([ratings[p] for p in paper]),
        verbosity=np.array([m["verbosity"] for m in models]),
        citation_factor=np.array([m["citation_factor"] for m in models]),
        zero_p=np.array([m["zero_p"] for m in models]),
    )
