r"""Simulated Search Arena 24k release: raw rows in the real parquet schema, and the truth behind the votes.

:func:`simulate_release` returns a :class:`SimulatedRelease`: ``raw`` has one row per conversation with the columns,
nesting and physical types of ``search-arena-chat-24k.parquet`` (column paths in
``lmarena-search-arena/search-arena-chat-24k.parquet-schema.txt``; row schema in ``DATA.md``), so the loader
(:func:`analysis_lib.search_arena.loader.load_battles`) reads it exactly as it reads the real release. ``planted`` is a
:class:`Planted` record: the ratings, style coefficients and per-battle features that generated the votes.

Sources: SA = the Search Arena paper (seed 000, section given); FACTS = ``published/search_arena_24k_release_facts.md``;
CSV = ``published/search_arena_24k_model_responses_citations.csv``;
D.1 = ``published/search_arena_table_d1_leaderboard.csv``;
XA = ``published/search_arena_cross_arena_votes.csv``. Numbers without a source are choices of this simulator.
The simulation runs in steps over one ``numpy.random.default_rng(seed)`` generator, each step a module, called
in this order (the order of the draws is what a seed reproduces, byte for byte):

- :mod:`~.calibration`: constants and the calibrated model table (no draws);
- :mod:`~.population`: items 1-6 below (time, users, country, language, intent, turns, models);
- :mod:`~.content`: items 7-10 (lengths, citations, structural surprises, URLs) and the per-side features;
- :mod:`~.voting`: item 11 (who votes, the outcome);
- :mod:`~.output`: the text, the release table and the :class:`Planted` truth.

:func:`simulate_release` (``simulate_release(n, seed)``) runs them.


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
   so it is left out of the tech pool. 0.05% of URLs are malformed (empty host, ``https:///...``): both the
   authors' rule and
   :func:`analysis_lib.search_arena.domains.host_expr` give them group ``other``.
11. **Votes**: a conversation is voted with probability 0.5315 (0.365 for the ~860 battles of the non-search
   model), giving ~52.5% voted (SA: 12,652 of 24,069) and ~315 voted non-search battles at full size (XA).
   Voting is independent of everything else. With

       p = logistic( ln(10) * (R_a - R_b) / 400 + beta . z ),

   a voted battle is a tie or both-bad with probability t * 4p(1 - p) (ties are likelier between close
   responses), split 20.5 : 11.4 between ``tie`` and ``tie (bothbad)``, and model A wins with probability
   p - t * 2p(1 - p). So the expected half-win score P(A) + P(tie)/2 equals p exactly: the authors' estimator,
   which counts ties as half wins, is consistent for R and beta. (``tie_model="independent"``, a sensitivity
   check, draws ties with the same probability for every voted battle instead; the half-win estimator is then
   not consistent: :mod:`~.voting`.) t is set so that ties and both-bad make up
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
ties counted as half wins (the paper's estimator), recovers R and beta up to sampling error. Fits that differ
from the generative model need not:
(a) with fewer features (e.g. length only) the omitted features are correlated with the included ones
(sonar models are long *and* cite a lot), so the fitted coefficient absorbs part of their effect and differs
from the planted 0.334; (b) a fit on decisive battles only (ties dropped) overstates the coefficients, because ties are
concentrated among close battles; (c) z-scoring over a different battle set
(e.g. without the non-search model) rescales beta slightly. ``Planted.truth`` holds the exact per-battle
features and logits so an analysis can recover each of these effects.

**Surprises** (exercise the loader): null ``client_country`` (8%); the moderation placeholder prompt (0.4%);
empty ``web_search_trace`` turns (every zero-citation turn) and, for 0.3% of search sides, an empty trace
(no turn lists at all); 5.6% of conversations have a message count different from 2 x ``turn`` (FACTS: 1,359
of 24,069): multi-turn ones lose the final assistant message on one side (its trace turn is empty), single-turn
ones carry a trailing unanswered user message on both sides; one self-battle; one null intent; malformed URLs.

Other fields are plausible placeholders: ``citation_format_standardized`` is ``"standardized"`` or
``"original"`` with probability 1/2 each, drawn independently for the two sides (SA App. A.2: citation style
randomisation; the authors record "model A's and B's citation style" per battle), and has **no effect** on the
votes (no planted style effect: SA App. A.2 finds none), ``llm_config`` carries the provider's API model name
and parameters (``web_search_options.user_location`` only for the ``-loc`` model), ``web_search_config`` fields
are null, ``formatted_messages`` is the answer with an HTML citation block, ``llm_trace`` the system prompt and
user turns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from analysis_lib.search_arena.schema import FULL_SIZE
from analysis_lib.search_arena.simulate.calibration import Planted, calibrated_models
from analysis_lib.search_arena.simulate.content import draw_content
from analysis_lib.search_arena.simulate.output import planted_truth, release_table, write_texts
from analysis_lib.search_arena.simulate.population import draw_population
from analysis_lib.search_arena.simulate.voting import TieModel, draw_votes


@dataclass(frozen=True)
class SimulatedRelease:
    """A simulated Search Arena release: ``raw``, the rows in the release's schema (what
    :func:`analysis_lib.search_arena.loader.load_battles` reads), and ``planted``, the truth behind its votes."""

    raw: pl.DataFrame
    planted: Planted


def simulate_release(n: int = FULL_SIZE, seed: int = 0, tie_model: TieModel = "closeness") -> SimulatedRelease:
    """Simulate a Search Arena release of ``n`` conversations; see the module docstring for the model.

    ``tie_model="independent"`` draws ties independent of strength instead (a sensitivity check of the
    half-win estimator: :mod:`~analysis_lib.search_arena.simulate.voting`); the same seed gives the same
    conversations, features and voters, only the outcomes differ."""
    if n < 2:
        raise ValueError("n must be at least 2")
    rng = np.random.default_rng(seed)
    models = calibrated_models()
    pop = draw_population(rng, n, models)
    content = draw_content(rng, pop, models)
    votes = draw_votes(rng, pop, content, models, tie_model)
    texts = write_texts(rng, pop, content)
    raw = release_table(pop, content, votes, texts, models)
    return SimulatedRelease(raw, planted_truth(pop, content, votes, texts, models, seed))

