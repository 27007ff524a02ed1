r"""Simulated Search Arena 24k release: raw rows in the real parquet schema, and the truth behind the votes.

:func:`search_arena` returns ``(raw, planted)``. ``raw`` has one row per conversation with the columns, nesting
and physical types of ``search-arena-chat-24k.parquet`` (column paths in
``lmarena-search-arena/search-arena-chat-24k.parquet-schema.txt``; row schema in ``DATA.md``), so the loader
(:func:`analysis_lib.data.load_battles`) reads it exactly as it reads the real release. ``planted`` is a
:class:`Planted` record: the ratings, style coefficients and per-battle features that generated the votes.

Sources: SA = the Search Arena paper (seed 000, section given); FACTS = ``published/search_arena_24k_release_facts.md``;
CSV = ``published/search_arena_24k_model_responses_citations.csv``; D.1 = ``published/search_arena_table_d1_leaderboard.csv``;
XA = ``published/search_arena_cross_arena_votes.csv``. Numbers without a source are choices of this simulator.

Generative model (one conversation at a time, all draws vectorised with ``numpy.random.default_rng(seed)``)
--------------------------------------------------------------------------------------------------------
1. **Time and users.** Timestamps 2025-03-18 16:39 .. 2025-05-08 23:59 UTC (SA §2, FACTS), day weights
   Gamma(4) so daily traffic varies (FACTS: mean 454, min 57, peak 796 per day), nanosecond precision, rows in
   time order. ``n * 11,650 / 24,069`` users (SA §2), each with at least one conversation, the remaining
   conversations spread over users with heavy-tailed (lognormal, sigma 1) weights;
   ``judge`` is the user's id.
2. **Country** (``client_country``, ISO alpha-2, per user): US 18.7%, RU 9.9%, DE 5.9%, CN 5.5% (SA App. B.1),
   23 further hand-set shares and a geometric tail, 136 countries in all (SA §2); every country appears at
   least once when ``n >= 5,000``. Null for 8% of conversations (FACTS: "often null"; rate chosen).
3. **Language** (``languages``): first element = prompt language, English 58.3%, Russian 11.8%, Chinese 7.0%
   (SA §2), 15 further hand-set shares and a geometric tail (ratio 0.8), 71 languages (SA App. B.1), each at
   least once when ``n >= 5,000``. 11% of prompts multilingual (SA §2): a second language, English for 70% of
   non-English prompts. Text is drawn from small per-script vocabularies (Latin/English, Cyrillic, CJK,
   other-Latin); it is not meant to be readable.
4. **Intent**: primary intent with question shares from FACTS (Factual Lookup 6,015 ... Text Processing
   1,100; Other 3,044) with Factual Lookup scaled to 19.3% of non-Other prompts (SA §2.2). Secondary intent
   ``Unassigned`` with probability 0.40, else another intent by the same shares. One conversation (any n >= 2)
   has null ``primary_intent`` and ``secondary_intent`` (FACTS: 1 at full size).
5. **Turns**: 1 turn with probability 0.776 (22.4% multi-turn, SA §2); 2/3/4 turns with 3,288/966/460 per
   24,069 (SA App. B.1); the remaining multi-turn mass on 5..10 turns, geometric (ratio 0.5).
6. **Models**: raw model ids of ``resources/model_names.csv``; each side drawn with probability proportional
   to the model's responses in CSV (x 1.4 for the non-search model, which loses the draws that pair it with
   GPT; divided by the fraction of the period the model was served: Gemini 2.5
   Flash from 2025-04-17, Gemini 2.5 Pro grounding from 2025-03-26, the rare ``gemini-2.0-pro-exp-02-05-
   grounding`` (weight 60 responses, not in CSV) only before 2025-03-26). Redrawn until the two sides differ,
   both are served at the timestamp and the non-search ``gemini-2.5-pro-exp-03-25-wo-search`` never meets a
   GPT model or itself (SA §3.3: it fought "the other supported search models"; the authors' GPT models were
   absent from its battles in XA). Exactly one self-battle (``model_a == model_b``) is planted (n >= 2).
7. **Prompt length** (words of the first user message): lognormal, sigma 1.0, with means by intent Text
   Processing 85.1, Analysis 72.7, Explanation 24.7, Factual Lookup 16.3 (SA App. B.1) and chosen means for the
   others (Info Synthesis 65, Recommendation 58, Guidance 80, Creative 95, Other 60) so the overall mean is
   ~57.1 and non-factual prompts average ~66 words (SA §2). Follow-up user turns: half the intent mean.
   0.4% of first prompts are the moderation placeholder (FACTS).
8. **Response length** (words of one assistant message): lognormal, sigma 0.55, mean = intent mean x model
   verbosity. Intent means Factual 168.3, Creative 422.8, Analysis 393.2 (SA §3.1), others chosen in between.
   Verbosity (chosen; SA §3.1 / Fig. 4: reasoning and high-context models answer longer, sonar-reasoning
   does not): see ``VERBOSITY``.
9. **Citations per turn**: zero with a per-family probability (sonar 0.04, Gemini 0.20, GPT 0.55, chosen so
   that ~16.4k of the 64.5k search responses cite nothing, FACTS: 48,130 of 65,768 responses cite at least
   one URL), else 1 + NegBin(dispersion 4), capped at 48 (FACTS max), with overall mean = intent mean x model
   factor. Intent means Factual 5.7, Recommendation 6.9, Info Synthesis 6.8, Text Processing 4.2 (SA §3.2),
   others chosen; model factor = (citations / responses of the model in CSV) / (search-model mean 5.67).
   The non-search model never cites and its ``web_search_trace`` is empty.
10. **Cited URLs**: per citation a source group from a per-family distribution (``SOURCE_MIX``; SA App. E.2,
   Fig. E.2: Perplexity favours YouTube, social media and community sites; OpenAI mainstream news (CSV news
   share ~20% vs ~7-9%); Gemini in between), then a host from the group's pool (real hosts that the authors'
   substring rule maps to that group; checked at run time) with Zipf-like weights, and a random path. The
   ``other`` group is a head of real hosts plus a long tail of ~5n synthetic hosts (FACTS: 83,533 distinct
   domains). The rule's quirks are kept: microsoft.com (a real top-10 domain) would be us_news ("ft.com"),
   so it is left out of the tech pool. 0.05% of URLs are malformed (empty host, ``https:///...``): both the authors' rule and
   :func:`analysis_lib.domains.host_expr` give them group ``other``.
11. **Votes**: a conversation is voted with probability 0.5315 (0.365 for the ~860 battles of the non-search
   model), giving ~52.5% voted (SA: 12,652 of 24,069) and ~315 voted non-search battles at full size (XA).
   Voting is independent of everything else. With

       p = logistic( ln(10) * (R_a - R_b) / 400 + beta . z ),

   a voted battle is a tie or both-bad with probability t * 4p(1 - p) (ties are likelier between close
   responses), split 20.5 : 11.4 between ``tie`` and ``tie (bothbad)``, and model A wins with probability
   p - t * 2p(1 - p). So the expected half-win score P(A) + P(tie)/2 equals p exactly: the authors' estimator,
   which counts ties as half wins, is consistent for R and beta. t is set so that ties and both-bad make up
   ``P_TIE`` + ``P_BOTHBAD`` = 31.9% of voted battles (Search Arena vote split A 33.6 / B 34.5 / tie 20.5 /
   both-bad 11.4%).

   R are planted Elo ratings per paper model name (``resources/simulator_ratings.csv``, anchor gpt-4o-search =
   1000), calibrated by ``scripts/calibrate_simulator.py``: the paper's leaderboard (Table D.1) is a *plain* BT
   fit, which credits each model with its style advantage (long answers, many citations), so R is Table D.1
   minus that advantage, found by fixed-point iteration until a plain fit of simulated releases (seeds 0-2,
   full size) is within 1 Elo of Table D.1 for every model. The style-controlled ratings are therefore R, and
   they converge relative to the plain ones (Fig E.4). The non-search gemini-2.5-pro (dropped from D.1) is
   calibrated in the same iteration so that its decisive votes split ~126 search-preferred : 90
   non-search-preferred (XA): it has no citations, so the citation and cites_* features count against it on
   top of its rating gap.
   z are the paper's normalised style features computed from the generated rows exactly as the authors do
   (``scripts/utils.py``: ``preprocess_for_style``): per side, response length = int32(mean words
   (``str.split``) over assistant messages), citation count = int32(mean over ``web_search_trace`` turn lists
   of the number of ``[marker, url]`` pairs), ``cites_<group>`` = 1 if any cited URL's host (``url.split('/')[2]``)
   falls in the group by the substring rule (all 11 groups); then d = (a - b) / (a + b + 1) and z = d
   z-scored (population std) over all voted battles. Planted beta (SA §3.1-3.2): response_length 0.334,
   citation_count 0.209, cites_tech_coding 0.073, cites_community_blog 0.061, cites_social_media 0.057,
   cites_wiki -0.071, other groups 0.

**What an estimator recovers.** A contextual Bradley-Terry fit with all 13 features on all voted battles,
ties counted as half wins (the paper's estimator), recovers R and beta up to sampling error. Fits that differ from the generative model need not:
(a) with fewer features (e.g. length only) the omitted features are correlated with the included ones
(sonar models are long *and* cite a lot), so the fitted coefficient absorbs part of their effect and differs
from the planted 0.334; (b) a fit on decisive battles only (ties dropped) overstates the coefficients, because ties are
concentrated among close battles; (c) z-scoring over a different battle set
(e.g. without the non-search model) rescales beta slightly. ``Planted.truth`` holds the exact per-battle
features and logits so a chapter can show each of these effects.

**Surprises** (exercise the loader): null ``client_country`` (8%); the moderation placeholder prompt (0.4%);
empty ``web_search_trace`` turns (every zero-citation turn) and, for 0.3% of search sides, an empty trace
(no turn lists at all); 5.6% of conversations have a message count different from 2 x ``turn`` (FACTS: 1,359
of 24,069): multi-turn ones lose the final assistant message on one side (its trace turn is empty), single-turn
ones carry a trailing unanswered user message on both sides; one self-battle; one null intent; malformed URLs.

Other fields are plausible placeholders: ``citation_format_standardized`` is ``"standardized"`` or
``"original"`` (SA App. A: citation style randomisation), ``llm_config`` carries the provider's API model name
and parameters (``web_search_options.user_location`` only for the ``-loc`` model), ``web_search_config`` fields
are null, ``formatted_messages`` is the answer with an HTML citation block, ``llm_trace`` the system prompt and
user turns.
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
import pyarrow as pa

from analysis_lib import bt, data
from analysis_lib.data import MODERATION_PROMPT
from analysis_lib.domains import DOMAIN_GROUPS, group_expr

# --------------------------------------------------------------------------------------------------
# Calibration constants
# --------------------------------------------------------------------------------------------------

N_FULL = 24_069
START = datetime(2025, 3, 18, 16, 39, 0)
END = datetime(2025, 5, 8, 23, 59, 59)
NONSEARCH_RAW = "gemini-2.5-pro-exp-03-25-wo-search"

P_TIE = 0.205
P_BOTHBAD = 0.114
P_VOTE = 0.5315
P_VOTE_NONSEARCH = 0.365
NONSEARCH_PAIR_BOOST = 1.4
ANCHOR = (bt.ANCHOR, 1000.0)

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
    [0.776, 3288 / N_FULL, 966 / N_FULL, 460 / N_FULL]
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
    NONSEARCH_RAW: 1.35,
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
    """Raw models (``data.model_table()``) with pairing weight, verbosity and citation calibration."""
    names = [
        {k: (str(v).lower() if isinstance(v, bool) else v) for k, v in row.items()}
        for row in data.model_table().iter_rows(named=True)
    ]
    counts = {r["raw_model"]: r for r in _read_resource_csv("resources/published/search_arena_24k_model_responses_citations.csv")}
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
    ``p_tie``, ``p_bothbad``: fixed probabilities of a voted battle being a tie / both-bad.
    ``feature_mean``, ``feature_std``: of the raw difference d = (a - b)/(a + b + 1) over the voted battles,
    used to z-score. ``truth``: one row per conversation (``conv_id``, ``voted``, per-side int features
    ``<feature>_a/_b``, ``z_<feature>`` (null when not voted), ``logit`` and ``p_a`` = P(A wins | decisive)).
    ``params``: the remaining calibration constants (vote rates, surprise rates, model table, source mix).
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
    scale: float = 400.0
    base: float = 10.0
    anchor: tuple[str, float] = ANCHOR
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def alpha(self) -> float:
        """ln(base)/scale: the logit per Elo point."""
        return math.log(self.base) / self.scale


# --------------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------------


def _geometric_tail(total: float, k: int, ratio: float) -> np.ndarray:
    w = ratio ** np.arange(k)
    return total * w / w.sum()


def _language_table() -> tuple[list[str], np.ndarray]:
    names = list(LANG_HEAD) + list(LANG_TAIL)
    head = np.array(list(LANG_HEAD.values()))
    p = np.concatenate([head, _geometric_tail(1 - head.sum(), len(LANG_TAIL), 0.8)])
    return names, p / p.sum()


def _country_table() -> tuple[list[str], np.ndarray]:
    codes = list(COUNTRY_HEAD)
    for c in COUNTRY_TAIL:
        if c not in codes:
            codes.append(c)
    if len(codes) < N_COUNTRIES:
        import pycountry

        for c in sorted(x.alpha_2 for x in pycountry.countries):
            if len(codes) >= N_COUNTRIES:
                break
            if c not in codes:
                codes.append(c)
    codes = codes[:N_COUNTRIES]
    head = np.array(list(COUNTRY_HEAD.values()))
    p = np.concatenate([head, _geometric_tail(1 - head.sum(), len(codes) - len(head), 0.97)])
    return codes, p / p.sum()


def _categorical(rng: np.random.Generator, p: np.ndarray, size: int) -> np.ndarray:
    return np.minimum(np.searchsorted(np.cumsum(p), rng.random(size) * p.sum(), side="right"), len(p) - 1)


def _lognormal(rng: np.random.Generator, mean: np.ndarray, sigma: float) -> np.ndarray:
    return np.exp(np.log(mean) - sigma**2 / 2 + sigma * rng.standard_normal(len(mean)))


def _word_buffer(rng: np.random.Generator, vocab: list[str], n_words: int) -> tuple[str, np.ndarray]:
    """A long text of vocabulary words; word k spans buf[off[k]:off[k+1]-1]."""
    idx = rng.integers(0, len(vocab), n_words)
    lens = np.array([len(w) for w in vocab])[idx] + 1
    off = np.concatenate([[0], np.cumsum(lens)])
    return " ".join(np.asarray(vocab, dtype=object)[idx].tolist()) + " ", off


def _texts(rng: np.random.Generator, counts: np.ndarray, script: np.ndarray, buffers: list[tuple[str, np.ndarray]]) -> list[str]:
    """Texts with exactly ``counts[i]`` whitespace-separated words in script ``script[i]``."""
    out: list[str] = [""] * len(counts)
    for s, (buf, off) in enumerate(buffers):
        idx = np.flatnonzero(script == s)
        if not len(idx):
            continue
        k = counts[idx]
        start = (rng.random(len(idx)) * (len(off) - 1 - k)).astype(np.int64)
        a = off[start].tolist()
        b = (off[start + k] - 1).tolist()
        for j, i in enumerate(idx.tolist()):
            out[i] = buf[a[j] : b[j]]
    return out


def _host_pools(rng: np.random.Generator, n: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per group: host array and sampling weights; `other` gets a synthetic long tail. Checked against the rule."""
    hosts: list[np.ndarray] = []
    weights: list[np.ndarray] = []
    n_tail = int(min(150_000, max(2_000, 5 * n)))
    syl = np.asarray(SYLLABLES, dtype=object)
    tl = np.asarray(TLDS, dtype=object)
    a, b, c = (rng.integers(0, len(syl), n_tail) for _ in range(3))
    t = rng.integers(0, len(tl), n_tail)
    www = np.where(rng.random(n_tail) < 0.6, "www.", "")
    tail = pl.DataFrame({"w": www, "a": syl[a].astype(str), "b": syl[b].astype(str), "c": syl[c].astype(str), "t": tl[t].astype(str)})
    tail_hosts = tail.select(h=pl.concat_str(["w", "a", "b", "c", pl.lit("."), "t"]))["h"].unique(maintain_order=True)
    tail_ok = pl.DataFrame({"host": tail_hosts}).filter(group_expr(pl.col("host")) == "other")["host"].to_numpy()
    for g in DOMAIN_GROUPS:
        head = np.asarray(HOSTS[g], dtype=object)
        got = pl.DataFrame({"host": head.astype(str)}).select(g=group_expr(pl.col("host")))["g"].to_list()
        wrong = [h for h, gg in zip(head, got) if gg != g]
        if wrong:
            raise AssertionError(f"host pool for {g!r} has hosts the substring rule puts elsewhere: {wrong}")
        w_head = 1.0 / (np.arange(len(head)) + 1.0) ** 1.1
        if g == "other":
            w_head = w_head / w_head.sum() * 0.25  # real-host head: a quarter of `other` citations
            w_tail = 1.0 / (np.arange(len(tail_ok)) + 1.0) ** 0.6
            w_tail = w_tail / w_tail.sum() * 0.75
            head = np.concatenate([head, tail_ok.astype(object)])
            w_head = np.concatenate([w_head, w_tail])
        hosts.append(head)
        weights.append(w_head / w_head.sum())
    return hosts, weights


def _list_array(offsets: np.ndarray, values: pa.Array) -> pa.Array:
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), values)


def _msg_struct(content: list[str] | np.ndarray, role: list[str] | np.ndarray) -> pa.Array:
    return pa.StructArray.from_arrays(
        [pa.array(list(content), pa.string()), pa.array(list(role), pa.string())], names=["content", "role"]
    )


# --------------------------------------------------------------------------------------------------
# The simulator
# --------------------------------------------------------------------------------------------------


def search_arena(n: int = N_FULL, seed: int = 0) -> tuple[pl.DataFrame, Planted]:
    """Simulate a Search Arena release of ``n`` conversations; see the module docstring for the model."""
    if n < 2:
        raise ValueError("n must be at least 2")
    rng = np.random.default_rng(seed)
    models = model_calibration()
    n_models = len(models)
    raw_ids = np.array([m["raw"] for m in models], dtype=object)
    paper = np.array([m["model"] for m in models], dtype=object)
    family = np.array([m["family"] for m in models], dtype=object)
    is_search = np.array([m["search"] for m in models])
    is_gpt = family == "gpt"
    ns_idx = int(np.flatnonzero(~is_search)[0])
    ratings = planted_ratings()
    r_model = np.array([ratings[p] for p in paper])

    # 1. time (sorted) and users
    n_days = (END.date() - START.date()).days + 1
    day_w = rng.gamma(4.0, 1.0, n_days)
    day_w[0] *= (24 * 3600 - (START.hour * 3600 + START.minute * 60)) / (24 * 3600)
    day = _categorical(rng, day_w, n)
    day_start = np.datetime64(START.date(), "ns") + day.astype("timedelta64[D]")
    lo = np.where(day == 0, np.datetime64(START, "ns"), day_start)
    span = (day_start + np.timedelta64(1, "D") - lo).astype(np.int64)
    span = np.where(day == n_days - 1, np.minimum(span, (np.datetime64(END, "ns") - lo).astype(np.int64)), span)
    ts = np.sort(lo + (rng.random(n) * span).astype(np.int64).astype("timedelta64[ns]"))

    n_users = max(1, round(n * 11_650 / N_FULL))
    user_w = rng.lognormal(0.0, 1.0, n_users)
    # every user holds at least one conversation (so n_users distinct judges appear); the rest heavy tailed
    user = rng.permutation(np.concatenate([np.arange(n_users), _categorical(rng, user_w, n - n_users)]))
    user_hex = [f"{x:012x}" for x in rng.integers(0, 2**48, n_users).tolist()]
    judge = [f"arena_user_{user_hex[u]}" for u in user.tolist()]

    # 2. country
    codes, cp = _country_table()
    user_country = _categorical(rng, cp, n_users)
    country_idx = user_country[user]
    lang_names, lp = _language_table()
    lang = _categorical(rng, lp, n)
    if n >= 5_000:  # every country / language at least once
        pos = rng.choice(n, len(codes) + len(lang_names), replace=False)
        country_idx[pos[: len(codes)]] = np.arange(len(codes))
        lang[pos[len(codes) :]] = np.arange(len(lang_names))
    country = np.asarray(codes, dtype=object)[country_idx]
    country[rng.random(n) < P_NULL_COUNTRY] = None

    # 3. languages
    multi = rng.random(n) < P_MULTILINGUAL
    second = _categorical(rng, lp, n)
    to_en = (lang != 0) & (rng.random(n) < 0.7)
    second = np.where(to_en, 0, second)
    clash = second == lang
    second[clash] = np.where(lang[clash] == 0, 1, 0)
    lang_lists = [
        [lang_names[a], lang_names[b]] if m else [lang_names[a]]
        for a, b, m in zip(lang.tolist(), second.tolist(), multi.tolist())
    ]
    lname = np.asarray(lang_names, dtype=object)[lang]
    script = np.where(np.isin(lname, list(CYRILLIC)), 1, np.where(np.isin(lname, list(CJK)), 2, np.where(lang == 0, 0, 3)))

    # 4. intent
    intent = _categorical(rng, INTENT_WEIGHTS, n)
    sec = _categorical(rng, INTENT_WEIGHTS, n)
    while (bad := sec == intent).any():
        sec[bad] = _categorical(rng, INTENT_WEIGHTS, int(bad.sum()))
    intents = np.asarray(INTENTS, dtype=object)
    primary = intents[intent].copy()
    secondary = np.where(rng.random(n) < P_SECONDARY_UNASSIGNED, "Unassigned", intents[sec]).astype(object)
    null_intent = int(rng.integers(0, n))
    primary[null_intent] = None
    secondary[null_intent] = None

    # 5. turns
    turns = _categorical(rng, TURN_P, n) + 1

    # 6. models
    served = np.ones((n_models, n), dtype=bool)
    frac = np.ones(n_models)
    for k, raw in enumerate(raw_ids):
        if raw in SERVED:
            first, last = SERVED[raw]
            ok = np.ones(n, dtype=bool)
            if first is not None:
                ok &= ts >= np.datetime64(first, "ns")
            if last is not None:
                ok &= ts < np.datetime64(last, "ns")
            served[k] = ok
            span_all = (np.datetime64(END) - np.datetime64(START)).astype(float)
            a0 = np.datetime64(first or START)
            a1 = np.datetime64(last or END)
            frac[k] = max((a1 - a0).astype(float) / span_all, 0.02)
    pair_w = np.array([m["responses"] for m in models], dtype=float) / frac
    pair_w[ns_idx] *= NONSEARCH_PAIR_BOOST  # it meets no GPT model: compensate the rejected draws
    ma = _categorical(rng, pair_w, n)
    mb = _categorical(rng, pair_w, n)
    rows = np.arange(n)
    for _ in range(10_000):
        bad = (
            (ma == mb)
            | ~served[ma, rows]
            | ~served[mb, rows]
            | ((ma == ns_idx) & is_gpt[mb])
            | ((mb == ns_idx) & is_gpt[ma])
        )
        if not bad.any():
            break
        ma[bad] = _categorical(rng, pair_w, int(bad.sum()))
        mb[bad] = _categorical(rng, pair_w, int(bad.sum()))
    candidates = np.flatnonzero((ma != ns_idx) & (mb != ns_idx))
    self_row = int(rng.choice(candidates)) if len(candidates) else 0
    mb[self_row] = ma[self_row]

    # 7-9. per-turn counts (conv-major, turn-minor)
    n_turns = int(turns.sum())
    conv_of = np.repeat(rows, turns)
    first = np.concatenate([[0], np.cumsum(turns)[:-1]])
    turn_no = np.arange(n_turns) - np.repeat(first, turns)
    t_intent = intent[conv_of]
    prompt_mean = PROMPT_WORDS[t_intent] * np.where(turn_no == 0, 1.0, 0.5)
    user_words = np.clip(np.rint(_lognormal(rng, prompt_mean, PROMPT_SIGMA)), 1, 3000).astype(np.int64)
    moderated = (rng.random(n) < P_MODERATION) & (np.arange(n) != null_intent)

    verbosity = np.array([m["verbosity"] for m in models])
    cfac = np.array([m["citation_factor"] for m in models])
    zero_p = np.array([m["zero_p"] for m in models])

    def side(m: np.ndarray) -> dict[str, np.ndarray]:
        mt = m[conv_of]
        words = np.clip(np.rint(_lognormal(rng, RESPONSE_WORDS[t_intent] * verbosity[mt], RESPONSE_SIGMA)), 3, 4000)
        mean_c = CITATIONS[t_intent] * cfac[mt]
        zp = zero_p[mt]
        pos_mean = np.maximum(mean_c / np.maximum(1 - zp, 1e-9) - 1.0, 0.05)
        k = CITATION_DISPERSION
        extra = rng.negative_binomial(k, k / (k + pos_mean))
        cites = np.where(rng.random(n_turns) < zp, 0, np.minimum(1 + extra, MAX_CITATIONS))
        cites = np.where(is_search[mt], cites, 0)
        return {"words": words.astype(np.int64), "cites": cites.astype(np.int64)}

    sa, sb = side(ma), side(mb)

    # surprises on structure
    odd = rng.random(n) < P_ODD_MESSAGES
    drop_final = odd & (turns >= 2)
    drop_side_b = rng.random(n) < 0.5
    extra_user = odd & (turns == 1)
    last_turn = turn_no == turns[conv_of] - 1
    keep_a = ~(last_turn & drop_final[conv_of] & ~drop_side_b[conv_of])
    keep_b = ~(last_turn & drop_final[conv_of] & drop_side_b[conv_of])
    sa["cites"] = np.where(keep_a, sa["cites"], 0)
    sb["cites"] = np.where(keep_b, sb["cites"], 0)
    empty_a = is_search[ma] & (rng.random(n) < P_EMPTY_TRACE) | ~is_search[ma]
    empty_b = is_search[mb] & (rng.random(n) < P_EMPTY_TRACE) | ~is_search[mb]
    sa["cites"] = np.where(empty_a[conv_of], 0, sa["cites"])
    sb["cites"] = np.where(empty_b[conv_of], 0, sb["cites"])

    # 10. URLs
    pools, pool_w = _host_pools(rng, n)
    group_cdf = {f: np.array(v + [max(1 - sum(v), 0.0)]) for f, v in SOURCE_MIX.items()}

    def urls(s: dict[str, np.ndarray], m: np.ndarray) -> dict[str, Any]:
        c = s["cites"]
        n_c = int(c.sum())
        cit_turn = np.repeat(np.arange(n_turns), c)
        fam = family[m[conv_of[cit_turn]]]
        grp = np.empty(n_c, dtype=np.int64)
        for f, p in group_cdf.items():
            sel = np.flatnonzero(fam == f)
            grp[sel] = _categorical(rng, p, len(sel))
        host = np.empty(n_c, dtype=object)
        for g in range(len(DOMAIN_GROUPS)):
            sel = np.flatnonzero(grp == g)
            host[sel] = pools[g][_categorical(rng, pool_w[g], len(sel))]
        w_en = np.asarray(WORDS_EN, dtype=object)
        path = pl.DataFrame(
            {
                "a": w_en[rng.integers(0, len(w_en), n_c)].astype(str),
                "b": w_en[rng.integers(0, len(w_en), n_c)].astype(str),
                "k": rng.integers(1, 100_000, n_c),
                "v": rng.integers(0, 2**62, n_c),
            }
        )
        host_s = pl.Series("host", host.astype(str), dtype=pl.String)
        malformed = rng.random(n_c) < P_MALFORMED_URL
        grp[malformed] = len(DOMAIN_GROUPS) - 1
        url = (
            path.with_columns(host=host_s, malformed=pl.Series(malformed))
            .select(
                pl.when(pl.col("malformed"))
                .then(pl.concat_str([pl.lit("https:///"), "a", pl.lit("-"), "b"]))
                .when(pl.col("host").str.contains("youtube.com", literal=True))
                .then(pl.concat_str([pl.lit("https://"), "host", pl.lit("/watch?v="), pl.col("v").cast(pl.String).str.slice(0, 11)]))
                .otherwise(pl.concat_str([pl.lit("https://"), "host", pl.lit("/"), "a", pl.lit("-"), "b", pl.lit("-"), pl.col("k").cast(pl.String)]))
                .alias("url")
            )["url"]
        )
        # marker numbers restart at 1 in each turn
        starts = np.concatenate([[0], np.cumsum(c)[:-1]])
        marker_no = np.arange(n_c) - np.repeat(starts, c) + 1
        return {"grp": grp, "url": url, "marker_no": marker_no, "cit_turn": cit_turn, "host": np.where(malformed, "", host)}

    ua, ub = urls(sa, ma), urls(sb, mb)

    # features per side (the authors' definitions; int32 cast as in preprocess_for_style)
    def feats(s: dict[str, np.ndarray], u: dict[str, Any], keep: np.ndarray, empty: np.ndarray) -> dict[str, np.ndarray]:
        wsum = np.bincount(conv_of, weights=np.where(keep, s["words"], 0), minlength=n)
        wcnt = np.bincount(conv_of, weights=keep.astype(float), minlength=n)
        length = (wsum / wcnt).astype(np.int32)
        n_lists = np.where(empty, 0, turns)
        csum = np.bincount(conv_of, weights=s["cites"], minlength=n)
        cit = np.where(n_lists > 0, csum / np.maximum(n_lists, 1), 0.0).astype(np.int32)
        out = {"response_length": length, "citation_count": cit}
        conv_cit = conv_of[u["cit_turn"]]
        for gi, g in enumerate(DOMAIN_GROUPS):
            cnt = np.bincount(conv_cit[u["grp"] == gi], minlength=n)
            out[f"num_cites_{g}"] = cnt.astype(np.int64)
            out[f"cites_{g}"] = (cnt > 0).astype(np.int32)
        return out

    fa, fb = feats(sa, ua, keep_a, empty_a), feats(sb, ub, keep_b, empty_b)

    # 11. votes and outcomes
    has_ns = (ma == ns_idx) | (mb == ns_idx)
    voted = rng.random(n) < np.where(has_ns, P_VOTE_NONSEARCH, P_VOTE)
    beta = np.array([BETAS[f] for f in FEATURES])
    d = np.column_stack(
        [(fa[f].astype(float) - fb[f]) / (fa[f].astype(float) + fb[f] + 1.0) for f in FEATURES]
    )
    mu = d[voted].mean(axis=0) if voted.any() else np.zeros(len(FEATURES))
    sd = d[voted].std(axis=0) if voted.any() else np.ones(len(FEATURES))
    sd_safe = np.where(sd > 0, sd, 1.0)
    z = np.where(sd > 0, (d - mu) / sd_safe, 0.0)
    logit = math.log(10.0) / 400.0 * (r_model[ma] - r_model[mb]) + z @ beta
    p_a = 1.0 / (1.0 + np.exp(-logit))
    # Ties are likelier between close responses: P(tie or both-bad) = t * 4 p (1 - p), and the half-win
    # convention then holds exactly: P(A) + P(tie) / 2 = p. t makes the voted tie share P_TIE + P_BOTHBAD.
    closeness = 4.0 * p_a * (1.0 - p_a)
    t_scale = min((P_TIE + P_BOTHBAD) / closeness[voted].mean(), 0.5) if voted.any() else 0.0
    p_any_tie = t_scale * closeness
    u_out = rng.random(n)
    winner = np.select(
        [u_out < p_any_tie * P_TIE / (P_TIE + P_BOTHBAD), u_out < p_any_tie, u_out < p_any_tie + p_a - p_any_tie / 2],
        ["tie", "tie (bothbad)", "model_a"],
        default="model_b",
    ).astype(object)
    winner[~voted] = None

    # ---------------- text and nested columns ----------------
    buffers = [
        _word_buffer(rng, list(WORDS_EN), 400_000),
        _word_buffer(rng, list(WORDS_RU), 120_000),
        _word_buffer(rng, list(WORDS_ZH), 120_000),
        _word_buffer(rng, list(WORDS_XX), 120_000),
    ]
    t_script = script[conv_of]
    user_text = _texts(rng, user_words, t_script, buffers)
    for i in np.flatnonzero(moderated).tolist():
        user_text[first[i]] = MODERATION_PROMPT
    extra_rows = np.flatnonzero(extra_user)
    extra_text = _texts(rng, np.clip(np.rint(_lognormal(rng, PROMPT_WORDS[intent[extra_rows]] * 0.5, PROMPT_SIGMA)), 1, 3000).astype(np.int64), script[extra_rows], buffers)
    a_text = _texts(rng, sa["words"], t_script, buffers)
    b_text = _texts(rng, sb["words"], t_script, buffers)

    user_arr = np.asarray(user_text, dtype=object)

    def messages(asst: list[str], keep: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Flat content/role in conversation order + per-conversation offsets; also the kept-turn order."""
        conv = np.concatenate([conv_of, conv_of, extra_rows])
        key = np.concatenate([2 * turn_no, 2 * turn_no + 1, 2 * turns[extra_rows]])
        content = np.concatenate([user_arr, np.asarray(asst, dtype=object), np.asarray(extra_text, dtype=object)])
        role = np.concatenate([np.full(n_turns, "user", object), np.full(n_turns, "assistant", object), np.full(len(extra_rows), "user", object)])
        ok = np.concatenate([np.ones(n_turns, bool), keep, np.ones(len(extra_rows), bool)])
        conv, key, content, role = conv[ok], key[ok], content[ok], role[ok]
        order = np.lexsort((key, conv))
        counts = np.bincount(conv, minlength=n)
        offs = np.concatenate([[0], np.cumsum(counts)])
        return content[order], role[order], offs, conv[order]

    def formatted(asst: list[str], u: dict[str, Any], s: dict[str, np.ndarray], keep: np.ndarray) -> list[str]:
        url_list = u["url"].to_list()
        ends = np.cumsum(s["cites"]).tolist()
        begins = (np.cumsum(s["cites"]) - s["cites"]).tolist()
        out = []
        for j, text in enumerate(asst):
            if ends[j] > begins[j]:
                links = "\n".join(f'<a href="{url}">[{k + 1}]</a>' for k, url in enumerate(url_list[begins[j] : ends[j]]))
                out.append(f"{text}\n\n<details><summary>Citations</summary>\n{links}\n</details>")
            else:
                out.append(text)
        return out

    conv_id = [rng.bytes(16).hex() for _ in range(n)]
    conv_id = [f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}" for h in conv_id]
    cfs = np.where(rng.random(n) < 0.5, "standardized", "original")

    def metadata(m: np.ndarray, s, u, asst, keep, empty) -> pa.Array:
        fm_content, fm_role, fm_offs, _ = messages(formatted(asst, u, s, keep), keep)
        fmsg = _list_array(fm_offs, _msg_struct(fm_content, fm_role))
        # llm_config
        fam = family[m]
        raw = raw_ids[m]
        api = np.array([_api_name(r) for r in raw], dtype=object)
        ctx = np.array([models[k]["search_context"] for k in m], dtype=object)
        is_loc = np.array([r.endswith("-loc") for r in raw])
        max_ct = pa.array(np.where(fam == "gpt", 16384, 0), pa.int64(), mask=fam != "gpt")
        max_ot = pa.array(np.where(fam == "gemini", 8192, 0), pa.int64(), mask=fam != "gemini")
        max_t = pa.array(np.where(fam == "sonar", 8192, 0), pa.int64(), mask=fam != "sonar")
        temp = pa.array(np.where(fam == "gemini", 1.0, 0.7), pa.float64(), mask=fam == "gpt")
        top_p = pa.array(np.where(fam == "gemini", 0.95, 1.0), pa.float64(), mask=fam == "gpt")
        has_wso = (fam != "gemini")
        loc_country = np.where(is_loc, country, None)
        approx = pa.StructArray.from_arrays([pa.array(loc_country.tolist(), pa.string())], names=["country"])
        user_loc = pa.StructArray.from_arrays(
            [approx, pa.array(np.where(is_loc, "approximate", None).tolist(), pa.string())],
            names=["approximate", "type"],
            mask=pa.array(~is_loc),
        )
        wso = pa.StructArray.from_arrays(
            [pa.array(np.where(has_wso, ctx, None).tolist(), pa.string()), user_loc],
            names=["search_context_size", "user_location"],
            mask=pa.array(~has_wso),
        )
        params = pa.StructArray.from_arrays(
            [max_ct, max_ot, max_t, temp, top_p, wso],
            names=["max_completion_tokens", "max_output_tokens", "max_tokens", "temperature", "top_p", "web_search_options"],
        )
        llm_config = pa.StructArray.from_arrays([pa.array(api.tolist(), pa.string()), params], names=["name", "params"])
        # llm_trace: system prompt + the user turns
        sys_prompt = "You are a helpful assistant with access to web search. Cite your sources."
        tr_conv = np.concatenate([rows, conv_of])
        tr_key = np.concatenate([np.full(n, -1), turn_no])
        tr_content = np.concatenate([np.full(n, sys_prompt, object), user_arr])
        tr_role = np.concatenate([np.full(n, "system", object), np.full(n_turns, "user", object)])
        order = np.lexsort((tr_key, tr_conv))
        tr_offs = np.concatenate([[0], np.cumsum(np.bincount(tr_conv, minlength=n))])
        llm_trace = _list_array(tr_offs, _msg_struct(tr_content[order], tr_role[order]))
        none = pa.nulls(n, pa.string())
        wsc = pa.StructArray.from_arrays([none, none, none], names=["context_manager", "scrape_engine", "search_engine"])
        # web_search_trace: conv -> turn lists -> [marker, url]
        n_lists = np.where(empty, 0, turns)
        list_turn = np.flatnonzero(~empty[conv_of])  # turns that own a list, in order
        pair_counts = s["cites"][list_turn]
        markers = np.array([f"[{k}]" for k in range(MAX_CITATIONS + 2)], dtype=object)[u["marker_no"]]
        vals = np.empty(2 * len(markers), dtype=object)
        vals[0::2] = markers
        vals[1::2] = np.asarray(u["url"].to_list(), dtype=object)
        inner = _list_array(np.arange(0, len(vals) + 1, 2), pa.array(vals.tolist(), pa.string()))
        middle = _list_array(np.concatenate([[0], np.cumsum(pair_counts)]), inner)
        trace = _list_array(np.concatenate([[0], np.cumsum(n_lists)]), middle)
        return pa.StructArray.from_arrays(
            [
                pa.array(cfs.tolist(), pa.string()),
                pa.array(country.tolist(), pa.string()),
                pa.array(conv_id, pa.string()),
                fmsg,
                llm_config,
                llm_trace,
                wsc,
                trace,
            ],
            names=[
                "citation_format_standardized", "client_country", "conv_id", "formatted_messages", "llm_config",
                "llm_trace", "web_search_config", "web_search_trace",
            ],
        )

    ca, ra, oa, _ = messages(a_text, keep_a)
    cb, rb, ob, _ = messages(b_text, keep_b)
    langs_flat = [x for ls in lang_lists for x in ls]
    lang_offs = np.concatenate([[0], np.cumsum([len(ls) for ls in lang_lists])])
    table = pa.table(
        {
            "model_a": pa.array(raw_ids[ma].tolist(), pa.string()),
            "model_b": pa.array(raw_ids[mb].tolist(), pa.string()),
            "winner": pa.array(winner.tolist(), pa.string()),
            "judge": pa.array(judge, pa.string()),
            "turn": pa.array(turns.astype(np.int64)),
            "timestamp": pa.array(ts, pa.timestamp("ns")),
            "messages_a": _list_array(oa, _msg_struct(ca, ra)),
            "messages_b": _list_array(ob, _msg_struct(cb, rb)),
            "system_a_metadata": metadata(ma, sa, ua, a_text, keep_a, empty_a),
            "system_b_metadata": metadata(mb, sb, ub, b_text, keep_b, empty_b),
            "primary_intent": pa.array(primary.tolist(), pa.string()),
            "secondary_intent": pa.array(secondary.tolist(), pa.string()),
            "languages": _list_array(lang_offs, pa.array(langs_flat, pa.string())),
        }
    )
    raw_frame = pl.from_arrow(table)
    assert isinstance(raw_frame, pl.DataFrame)

    truth_cols: dict[str, Any] = {
        "conv_id": conv_id,
        "model_a": paper[ma].tolist(),
        "model_b": paper[mb].tolist(),
        "voted": voted,
    }
    for f in FEATURES:
        truth_cols[f"{f}_a"] = fa[f]
        truth_cols[f"{f}_b"] = fb[f]
    for g in DOMAIN_GROUPS:
        truth_cols[f"num_cites_{g}_a"] = fa[f"num_cites_{g}"]
        truth_cols[f"num_cites_{g}_b"] = fb[f"num_cites_{g}"]
    for j, f in enumerate(FEATURES):
        truth_cols[f"z_{f}"] = pl.Series(np.where(voted, z[:, j], np.nan)).fill_nan(None)
    truth_cols["logit"] = logit
    truth_cols["p_a"] = p_a
    truth = pl.DataFrame(truth_cols)

    planted = Planted(
        ratings=ratings,
        betas=dict(BETAS),
        features=FEATURES,
        p_tie=P_TIE,
        p_bothbad=P_BOTHBAD,
        n=n,
        seed=seed,
        feature_mean={f: float(mu[j]) for j, f in enumerate(FEATURES)},
        feature_std={f: float(sd[j]) for j, f in enumerate(FEATURES)},
        truth=truth,
        params={
            "p_vote": P_VOTE,
            "p_vote_nonsearch": P_VOTE_NONSEARCH,
            "nonsearch_model": "gemini-2.5-pro",
            "nonsearch_rating": ratings["gemini-2.5-pro"],
            "self_battle_row": self_row,
            "null_intent_row": null_intent,
            "rates": {
                "null_country": P_NULL_COUNTRY, "moderation": P_MODERATION, "empty_trace": P_EMPTY_TRACE,
                "odd_messages": P_ODD_MESSAGES, "malformed_url": P_MALFORMED_URL, "multilingual": P_MULTILINGUAL,
            },
            "models": models,
            "source_mix": {f: dict(zip(DOMAIN_GROUPS, v + [1 - sum(v)])) for f, v in SOURCE_MIX.items()},
            "z_population": "all voted battles (winner not null), population std",
        },
    )
    return raw_frame, planted


def _api_name(raw: str) -> str:
    for suffix in ("-high-loc", "-high", "-grounding", "-wo-search"):
        if raw.endswith(suffix):
            raw = raw[: -len(suffix)]
            break
    return raw
