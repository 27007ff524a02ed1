"""The nugget chapter's library (issue #20 item 3, #22, #23): samples, the loader, figures (legibility and the
paper's values), the notebook's shape, and the fast paths that must give the old results. The book's side of the
chapter (recorded numbers, claims, tables, the rules of the model steps) is tested in test_nuggets_book.py."""

import json
import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis_lib import nuggets as ng
from analysis_lib import plotting
from analysis_lib.nuggets import diversity, embedding, plots, rouge, sampling
from analysis_lib.nuggets import loader as ng_loader
from analysis_lib.nuggets.battles import single_turn, single_turn_urls, vote_and_language_shares
from analysis_lib.nuggets.sentences import regex_cache, split_sentences
from analysis_lib.nuggets.simulate import simulate_nuggets
from analysis_lib.nuggets.simulate.quality import zipf_cdf
from analysis_lib.search_arena import loader
from analysis_lib.search_arena.release import read_raw
from bookbuild.papers import nuggets as book

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "notebooks" / "07_nuggets.ipynb"
FIXTURES = Path(__file__).parent / "fixtures" / "nuggets"


@pytest.fixture(scope="module")
def inputs():
    return ng_loader.load_inputs("sample:400", seed=3)


# ------------------------------------------------------------------------------------------- samples

def test_sample_ids_is_numpys_draw_and_keeps_everything_when_asked_for_all():
    ids = np.array([f"q{k}" for k in range(50)])
    assert sampling.sample_ids(ids, 7, 4).tolist() == np.random.default_rng(4).choice(ids, 7, replace=False).tolist()
    assert sampling.sample_ids(ids, None, 4).tolist() == ids.tolist() == sampling.sample_ids(ids, 50, 4).tolist()
    with pytest.raises(ValueError, match="positive or None"):
        sampling.sample_ids(ids, -1, 0)


def test_sample_rows_is_the_index_draw_the_chapter_used_before():
    """Drawing ids from a frame sorted by id equals the former ``frame[np.sort(choice(height, n))]``."""
    frame = pl.DataFrame({"qid": [f"{k:03d}" for k in range(40)], "x": range(40)}).sort("qid")
    before = frame[np.sort(np.random.default_rng(9).choice(frame.height, size=12, replace=False))]
    assert sampling.sample_rows(frame, 12, 9).equals(before)


def test_sample_records_and_notes(inputs):
    recs = inputs.records
    sub = sampling.sample_records(recs, 25, 1)
    assert sub.n_battles == 25 and set(sub.nuggets["qid"]) <= set(sub.sides["qid"])
    assert sampling.sample_records(recs, None, 1) is recs
    assert sampling.sample_note(25, 400) == "a random 25 of 400 battles"
    assert sampling.sample_note(9, 9) == "all 9 battles"
    assert sampling.record_order_ids(recs).to_list() == diversity.battle_diversity(recs.nuggets)["qid"].to_list()


# ------------------------------------------------------------------------------------------- loader

def test_loader_reads_the_release_once_and_says_what_it_ran_on(inputs):
    raw, _ = read_raw("sample:400", seed=3)
    assert inputs.urls == single_turn_urls(raw)
    single, left = single_turn(loader.load_battles("sample:400", seed=3))
    assert inputs.single.equals(single) and inputs.left_out == left
    assert inputs.kind == inputs.battles_kind == inputs.queries_kind == "simulated"
    assert inputs.records.sides.equals(simulate_nuggets(single, seed=3).records.sides)
    detail = book.inputs_detail(inputs, "", "sample:400")  # the banner's sentence, on the book side
    assert "simulated nugget records" in detail and inputs.planted["mean_nuggets"] == 12.5


def test_with_a_cache_the_chapter_reads_the_kept_release_and_gets_the_same_inputs(inputs, tmp_path, monkeypatch):
    """With the build's cache, a release another chapter simulated is read back (its traces only), never simulated
    again, and the chapter's inputs are those of the uncached path."""
    cache = tmp_path / "cache"
    loader.load_battles("sample:400", seed=3, cache_dir=cache)  # another chapter of the build, first
    kept = list((cache / "battles").glob("*.release.parquet"))
    assert len(kept) == 1 and not list((cache / "battles").glob("*.part"))

    def no_simulation(*args, **kwargs):
        raise AssertionError("the kept release was not used")

    monkeypatch.setattr(loader, "read_raw", no_simulation)
    monkeypatch.setattr(ng_loader, "read_raw", no_simulation)
    cached = ng_loader.load_inputs("sample:400", seed=3, cache_dir=cache)
    assert cached.urls == inputs.urls
    assert cached.single.equals(inputs.single) and cached.left_out == inputs.left_out
    assert cached.records.sides.equals(inputs.records.sides)
    traces = loader.read_release("sample:400", seed=3, cache_dir=cache, columns=["turn", "winner"])
    assert set(traces.columns) == {"turn", "winner"} and traces.height == 400


def test_a_release_file_is_read_by_columns(tmp_path):
    raw, _ = read_raw("sample:50", seed=1)
    path = tmp_path / "release.parquet"
    raw.write_parquet(path)
    got, origin = read_raw(path, columns=["turn", "winner", "not-a-column"])
    assert origin == str(path) and set(got.columns) == {"turn", "winner"} and got.equals(raw.select(got.columns))
    assert loader.read_release(path, cache_dir=tmp_path / "cache", columns=["turn"]).columns == ["turn"]
    assert not (tmp_path / "cache").exists()  # a file is not copied into the cache


def test_loader_with_records_shows_no_absolute_path():
    got = ng_loader.load_inputs("sample:200", FIXTURES / "valid.jsonl", seed=0)
    assert got.kind == "user" and got.planted == {} and got.queries_kind == "llm-cache"
    detail = book.inputs_detail(got, str(FIXTURES / "valid.jsonl"), "sample:200")
    assert str(REPO) not in detail and "valid.jsonl" in detail
    assert "3 battles after exclusions (1 without a vote (winner null), 1 with only one side)" in detail


# ------------------------------------------------------------------------------------------- figures

@pytest.fixture(scope="module")
def figures(inputs):
    plotting.apply_style()
    scores = ng.battle_scores(inputs.records)
    groups = ng.diffs_by_vote(scores)
    ks = ng.ks_by_vote(scores["diff"].to_numpy(), scores["winner"].to_numpy())
    conf = ng.published_confusions()
    sweep = ng.threshold_sweep(scores["all_a"].to_numpy(), scores["all_b"].to_numpy(), scores["winner"].to_numpy())
    shares = vote_and_language_shares(inputs.single)
    figs = {
        "Figure 2": plots.ecdf_panels(groups, ks, "Figure 2: ECDFs", paper_d=book.ks_reference()),
        "Figure 3": plots.kde_by_vote(groups, "Figure 3"),
        "Figure 9": plots.shares_figure(shares, "Figure 9", book.share_marks(shares)),
        "Figure 11": plots.confusion_grid(conf, "query_category", "Figure 11 (published)"),
        "Figure 12": plots.confusion_grid(conf, "language", "Figure 12 (published)"),
        "sweep": plots.sweep_figure(sweep, "Figure 4 sweep", *book.sweep_reference(sweep)),
        "Figure 13": plots.histogram(np.array([0.1, 0.2]), "x", "Figure 13", paper_mean=0.06),
        "Figure 4": plots.confusion_heatmap(conf[("overall", "all")], "Figure 4"),
    }
    for fig in figs.values():
        plotting.mark_simulated(fig)
    yield figs
    plt.close("all")


def test_every_text_reads_at_10_pt_as_displayed(figures):
    """Each figure, prepared as a page shows it (plotting's one display path), fits the column with no text under
    the display's minimum."""
    small = {}
    for name, fig in figures.items():
        plotting.display.prepare(fig)
        small[name] = round(plotting.display.smallest_font_pt(fig), 1)
    assert all(v >= plotting.display.MIN_FONT_PT for v in small.values()), small
    assert all(plotting.display.display_scale(fig) == 1.0 for fig in figures.values())


def test_figures_draw_the_papers_values(figures):
    def labels(fig):
        return [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]

    assert [lab for lab in labels(figures["Figure 2"]) if "(paper)" in lab] == [
        "D = 0.313 (paper)", "D = 0.209 (paper)", "D = 0.205 (paper)"]
    assert labels(figures["Figure 9"]).count("paper") == 2 and len(figures["Figure 9"].axes) == 2
    assert any(lab.startswith("paper: κ 0.29–0.31") for lab in labels(figures["sweep"]))
    assert "mean 0.06 (paper)" in labels(figures["Figure 13"])


def test_votes_and_languages_have_their_own_axes(figures):
    votes, langs = figures["Figure 9"].axes
    assert [t.get_text() for t in votes.get_yticklabels()] == ["model_a", "model_b", "tie", "tie (bothbad)"]
    assert "languages" in langs.get_xlabel() and "votes" in votes.get_xlabel()


def test_sweep_axis_is_honest(figures):
    lo, hi = figures["sweep"].axes[0].get_ylim()
    assert lo == 0 and hi >= 0.5


# ------------------------------------------------------------------------------------------- the notebook

def _cells():
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]


def test_notebook_is_thin_and_uses_one_figure_helper():
    code = ["".join(c["source"]) for c in _cells()[2:] if c["cell_type"] == "code"]  # after the parameters
    assert max(len(c.splitlines()) for c in code) <= 25
    assert max(len(line) for c in code for line in c.splitlines()) <= 110  # the book's code width
    everything = "\n".join(code)
    for gone in ("plt.close", "stamp(", "mark_simulated(", "default_rng(", "not_run_reason",
                 "def llm_reason"):
        assert gone not in everything, gone


def test_notebook_prose_has_no_jargon_and_no_cut_sentence():
    cells = _cells()
    text = "\n".join("".join(c["source"]) for c in cells[1:])  # the title cell is the book engineer's
    assert "seed 00" not in text
    for c in cells:
        if c["cell_type"] == "markdown":
            assert not any(line.lstrip().startswith("%") for line in "".join(c["source"]).splitlines())


# ------------------------------------------------------------------------------------------- fast paths, same results

@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.text(alphabet="ab cdé.", max_size=12), min_size=1, max_size=6), min_size=1, max_size=8))
def test_vectorised_diversity_equals_the_pairwise_definitions(battles):
    rows = [{"qid": f"b{k}", "side": s, "position": p, "text": t, "importance": "vital", "assignment": "support"}
            for k, texts in enumerate(battles) for s in "ab" for p, t in enumerate(texts)]
    frame = pl.DataFrame(rows)
    rng = np.random.default_rng(len(rows))
    emb = rng.normal(size=(sum(len(t) for t in battles), 4))
    got = diversity.battle_diversity(frame, emb)
    start = np.cumsum([0] + [len(t) for t in battles])
    want_j = [diversity.mean_pairwise_jaccard(t) for t in battles]
    want_c = [diversity.mean_pairwise_cosine(emb[start[k]:start[k + 1]]) for k in range(len(battles))]
    np.testing.assert_allclose(got["jaccard"].to_numpy(), want_j, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got["cosine"].to_numpy(), want_c, rtol=1e-9, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet="ab cd", min_size=0, max_size=15), min_size=1, max_size=5),
       st.lists(st.text(alphabet="ab cde", min_size=0, max_size=15), min_size=1, max_size=6))
def test_pruned_rouge_maxima_equal_the_full_matrix_to_the_bit(response, chunks):
    tok = rouge.UnicodeTokenizer(use_stemmer=False)
    scorer = rouge.rouge_l_scorer(tok)
    assert np.array_equal(rouge.best_f1(response, chunks, scorer, tok),
                          rouge.rouge_l_matrix(response, chunks, scorer).max(axis=1))


def test_regex_cache_is_restored_and_changes_no_sentence():
    text = "Dr. Smith went to Washington. He arrived at 5 p.m. on Jan. 3! Was it late? Yes."
    before = re._MAXCACHE
    with regex_cache(4096):
        assert re._MAXCACHE == 4096
    assert re._MAXCACHE == before
    re._MAXCACHE, saved = 50, re._MAXCACHE
    try:
        import pysbd

        plain = [s.strip() for s in pysbd.Segmenter(language="en", clean=False).segment(text) if s.strip()]
    finally:
        re._MAXCACHE = saved
    assert split_sentences(text) == plain and len(plain) == 4


def test_zipf_table_draws_what_choice_with_p_draws():
    p = 1.0 / np.arange(1, 301)
    p /= p.sum()
    cdf = zipf_cdf(300)
    for seed in range(20):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        assert np.array_equal(a.choice(300, size=11, p=p), cdf.searchsorted(b.random(11), side="right"))


def test_torch_threads_are_restored():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    with embedding.torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
