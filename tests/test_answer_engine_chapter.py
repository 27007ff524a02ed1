"""The answer-engine chapter's book side (:mod:`bookbuild.papers.answer_engine`: the sections as chapter 09's cells
build them, recorded through ``Recorder.record`` against the real paper values; :mod:`bookbuild.sections`), the two
new analyses (AE-F6: Fig 6 implied by Table 3; AE-T1: Table 1 and its checks) and the figures' legibility."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import pytest
from scipy import integrate, stats

from analysis_lib import answer_engine as ae
from analysis_lib import plotting
from analysis_lib.answer_engine import findings, implied, plots, usability
from analysis_lib.answer_engine.scorecard import classify_scorecard
from analysis_lib.fetch import published
from bookbuild.papers import answer_engine as book
from bookbuild.papers.answer_engine import answers as book_answers
from bookbuild.recorder import Recorder, Result
from bookbuild.sections import Figure, Section

FIXTURES = Path(__file__).parent / "fixtures" / "answer_engine"
NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "09_answer_engines.ipynb"


class FakeRecorder:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def number(self, analysis_id, quantity, ours, *, note="", data=None, planted=None):
        self.calls.append(("number", analysis_id, quantity, ours, note, data, planted))

    def not_run(self, analysis_id, quantity, *, reason):
        self.calls.append(("not_run", analysis_id, quantity, reason))


@pytest.fixture(scope="module")
def card():
    return pl.read_csv(published("aee_figure8_scorecard"))


@pytest.fixture(scope="module")
def thresholds():
    return ae.load_thresholds()


@pytest.fixture(scope="module")
def simulated():
    return ae.load_answers()


@pytest.fixture
def rec(tmp_path) -> Recorder:
    return Recorder(tmp_path / "results", "09_answer_engines", data="published")


def recorded(rec: Recorder, analysis_id: str) -> dict[str, Result]:
    return {r.quantity: r for r in rec.results if r.analysis_id == analysis_id}


# The sections as chapter 09's cells build them: the analysis, its figure, its record by path.


def findings_section(rec) -> Section:
    table = findings.load_findings()
    shares = findings.findings_shares(table)
    rec.record("AE-T1", book.t1_result(findings.check_findings(table, findings.load_participants())))
    return Section([Figure(ae.findings_bars(shares), "published")], [book.t1_table(shares)])


def implied_section(rec, family="gamma") -> Section:
    tables = ae.load_usability_tables()
    table = ae.implied_table(tables, family)
    rec.record("AE-F6", table)
    fig = ae.implied_violins(ae.implied_distributions(tables, family), table, family=family)
    return Section([Figure(fig, "published")], [book.f6_table(table, family)])


def figure7_section(rec) -> Section:
    ex = ae.figure7_example()
    necessity = {m: ae.source_necessity(ex.support, ex.relevant, m) for m in ("greedy", "konig")}
    covers = ae.minimum_source_covers(ex.support, ex.relevant)
    rec.record("AE-M", book.m_result(ae.answer_metrics(ex, convention="paper"), covers, necessity,
                                     ae.minimum_vertex_cover(ex.support[ex.relevant])))
    return Section([Figure(ae.figure7_matrices(ex.citations, ex.support, ex.relevant), "published")])


def table2_section(rec) -> Section:
    t2 = ae.table2_cited_share(pl.read_csv(published("aee_table2_sources")))
    rec.record("AE-T2", t2)
    return Section([Figure(ae.sources_bars(t2), "published")])


def usability_section(rec) -> tuple[Section, Section]:
    comparisons = ae.usability_comparisons(ae.load_usability_tables())
    rec.record("AE-T34", comparisons)
    rec.record("AE-T5", comparisons)
    return Section(tables=[book.t34_table(comparisons)]), Section(tables=[book.t5_table(comparisons)])


def scorecard_section(rec, data, card, thresholds, *, n_bootstrap, seed, level=0.95) -> Section:
    """AE-F8: the published and the recomputed scorecard recorded, the recomputed one's figure and tables."""
    metrics = long = None
    if data.converted.meta.height:
        metrics = data.metrics()
        long = ae.bootstrap_scorecard(metrics, rounds=n_bootstrap, seed=seed, level=level, convention=data.convention)
    f8 = book.f8_record(data, ae.classify_scorecard(card, thresholds), metrics, long, thresholds, level=level)
    rec.record("AE-F8", f8.result, reason=f8.reason, planted=f8.planted, notes=f8.notes)
    if metrics is None or long is None:
        return Section()
    return book.f8_recomputed_section(data, metrics, long, card, thresholds, n_bootstrap=n_bootstrap, level=level)


def confidence_section(rec, data) -> Section:
    conf = ae.confidence_frame(data.records)
    figures = []
    if conf.height:
        names = book.engine_names(list(dict.fromkeys(conf["engine"].to_list())))
        reference = book.paper_strongly_confident(list(names.values()))
        figures.append(Figure(ae.confidence_bars(ae.confidence_distribution(conf), names, reference=reference),
                              data.kind))
    f8b = book.f8b_record(data, conf)
    rec.record("AE-F8b", f8b.result, reason=f8b.reason, planted=f8b.planted, notes=f8b.notes,
               data=book.number_kind(data))
    return Section(figures)


def agreement_section(rec, data, answer_labels="", *, seed=0) -> Section:
    judged = ae.judge_values(data.records, data.support)
    labels = sim = agreement = None
    if str(answer_labels).strip():
        labels = ae.load_answer_labels(answer_labels)
    elif data.kind == "simulated":
        sim = ae.simulate_labels(judged, seed=seed)
        labels = sim.labels
    if labels is not None:
        agreement = ae.judge_agreement(labels, judged)
    p = book.p_record(agreement, sim)
    rec.record("AE-P", p.result, data="simulated" if sim is not None else data.kind, reason=p.reason,
               planted=p.planted, notes=p.notes)
    return Section(tables=book.p_tables(agreement, sim))


# --- AE-T1 ------------------------------------------------------------------------------------------------------


def test_table1_checks_against_table8_and_the_headings():
    table, people = findings.load_findings(), findings.load_participants()
    chk = findings.check_findings(table, people)
    assert chk.n_findings == 16 and chk.per_component == dict.fromkeys(findings.COMPONENTS, 4)
    assert chk.final_participants == 21 and chk.per_engine == {"perplexity": 7, "bing_copilot": 7, "youchat": 7}
    assert (chk.out_of_range, chk.text_mismatch, chk.partial) == ((), (), (("S.III", 12, 20),))
    # the checks find what they look for
    broken = table.with_columns(participants=pl.when(pl.col("finding_id") == "A.II").then(22)
                                .otherwise(pl.col("participants")))
    chk = findings.check_findings(broken, people)
    assert chk.out_of_range == ("A.II",) and chk.text_mismatch == ("A.II",)
    pilot_counted = people.with_columns(study=pl.lit("final"))
    assert findings.check_findings(table, pilot_counted).final_participants == 24


def test_share_bounds_closed_form():
    assert findings.share_bounds(12, 20, 21) == pytest.approx((100 * 12 / 21, 100 * 13 / 21))
    assert findings.share_bounds(21, 21, 21) == (100.0, 100.0)
    with pytest.raises(ValueError):
        findings.share_bounds(13, 12, 21)


def test_findings_section_records_the_checks(rec):
    sec = findings_section(rec)
    got = recorded(rec, "AE-T1")
    assert got["findings in Table 1"].ours == 16
    assert got["final-study participants (Table 8, pilot excluded)"].ours == 21
    assert got["final-study participants who used You.com (Table 8)"].status == "match"
    s3 = got["S.III: % of participants who raised it, as printed (12/20)"]
    assert s3.ours == pytest.approx(60.0) and s3.note == (
        "among all 21 final-study participants: 57.1% if the uncounted one did not raise it, 61.9% if they did")
    assert got["findings counted out of fewer participants than the final study had"].note.endswith("; S.III (12/20)")
    assert sec.tables[0].frame["participants"].to_list()[10] == "12/20"


# --- AE-F6 ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("mean", "sd"), [(2.12, 1.39), (0.76, 0.89), (11.81, 3.56)])
def test_moment_fits_match_their_moments(mean, sd):
    for family in implied.FAMILIES.values():
        d = family(mean, sd)
        assert d.mean() == pytest.approx(mean) and d.std() == pytest.approx(sd)
    with pytest.raises(ValueError):
        implied.gamma_from_moments(0.0, 1.0)


def test_mixture_moments_and_median_by_integration():
    parts = (stats.gamma(2.0, scale=1.0), stats.gamma(0.6, scale=2.0), stats.gamma(5.0, scale=0.5))
    mix = implied.Mixture(parts)
    pdf = lambda x: float(np.mean([p.pdf(x) for p in parts]))  # noqa: E731
    m1 = integrate.quad(lambda x: x * pdf(x), 0, np.inf, limit=200)[0]
    m2 = integrate.quad(lambda x: x * x * pdf(x), 0, np.inf, limit=200)[0]
    assert mix.mean() == pytest.approx(m1, rel=1e-6)
    assert mix.std() == pytest.approx(math.sqrt(m2 - m1**2), rel=1e-6)
    assert float(mix.cdf(mix.median())) == pytest.approx(0.5, abs=1e-10)
    # equal groups: the population version of usability.combine_groups (whose SD uses N − 1)
    n = 10**6
    grand, sd = usability.combine_groups([p.mean() for p in parts], [p.std() for p in parts], [n, n, n])
    assert mix.mean() == pytest.approx(grand) and mix.std() == pytest.approx(sd, rel=1e-5)


def test_binned_density_keeps_the_mass_of_a_spike_at_zero():
    d = stats.gamma(0.5, scale=2.0)  # infinite density at 0
    centres, dens = implied.binned_density(d, 10.0, width=0.2)
    assert np.isfinite(dens).all() and len(centres) == 50
    assert float((dens * 0.2).sum()) == pytest.approx(d.cdf(10.0))


def test_implied_table_against_table3():
    tab = implied.implied_table(usability.load_usability_tables())
    google = tab.filter((pl.col("group") == "google") & (pl.col("measure") == "hovered")).row(0, named=True)
    assert google["implied_mean"] == pytest.approx(11.81) and google["implied_sd"] == pytest.approx(3.56)
    assert google["shape"] == pytest.approx((11.81 / 3.56) ** 2)
    assert google["implied_median"] == pytest.approx(stats.gamma(google["shape"], scale=3.56**2 / 11.81).median())
    assert google["median_gap"] == pytest.approx(google["implied_median"] - 11.0)
    both = tab.filter(pl.col("group") == "all")
    assert both["median"].is_null().all() and both["implied_mean"].to_list() == pytest.approx(
        [np.mean([2.12, 2.10, 2.00]), np.mean([1.29, 0.76, 1.07])])
    assert tab.filter(pl.col("group") != "all")["outside_range"].is_between(0, 1).all()


def test_implied_section_records_the_gamma_fits(rec):
    implied_section(rec)
    got = recorded(rec, "AE-F6")
    google = got["Google, hovered: median of the implied gamma"]
    assert google.ours == pytest.approx(stats.gamma((11.81 / 3.56) ** 2, scale=3.56**2 / 11.81).median())
    assert google.note.endswith("of the implied gamma lies outside Table 3's [6, 24]") and google.status == "match"
    assert got["All three engines, hovered: SD of the implied mixture"].status == "differs"
    assert all(r.status != "not run" for r in got.values())
    assert len(got) == len(implied.implied_table(usability.load_usability_tables())) + 4  # mixtures: mean and SD


# --- published sections -------------------------------------------------------------------------------------------


def test_published_sections_record_rows_that_exist(rec, card, thresholds, simulated):
    figure7_section(rec)
    table2_section(rec)
    t34_section = usability_section(rec)[0]
    scorecard_section(rec, simulated, card, thresholds, n_bootstrap=5, seed=0)
    m = recorded(rec, "AE-M")
    assert m["relevant_statements (fraction)"].ours == "6/7" and m["citation_accuracy (fraction)"].ours == "4/7"
    konig = m["source_necessity, König minimum vertex cover / sources"]
    assert "matching size 4 = cover size 4" in konig.note and konig.status == "inconsistent"
    counts = recorded(rec, "AE-F8")
    # Fig 8a by hand against Table 7: You.com acceptable = overconfident 19.4 and uncited 1.1
    assert counts["You.com: metrics acceptable, published values"].ours == 2
    assert counts["Perplexity: metrics acceptable, published values"].ours == 0
    assert counts["BingChat: uncited_sources category, published value"].note == "36.2%"
    assert {r.status for r in recorded(rec, "AE-T2").values()} == {"match"}
    assert {r.status for r in recorded(rec, "AE-T34").values()} == {"assumption", "computed"}
    assert set(t34_section.tables[0].frame["Google vs"]) == {"all", "Perplexity", "BingChat", "You.com"}
    assert len(recorded(rec, "AE-T5")) == 4


# --- sections from answers ----------------------------------------------------------------------------------------


def test_sections_on_a_users_engine_and_a_paper_engine(tmp_path, rec, card, thresholds):
    shutil.copy(FIXTURES / "answers_two_engines.json", tmp_path / "a.json")
    data = ae.load_answers(tmp_path / "a.json", cache_dir=tmp_path / "cache")
    sec = scorecard_section(rec, data, card, thresholds, n_bootstrap=20, seed=0)
    got = [r for r in rec.results if "recomputed" in r.quantity]
    assert all("MyEngine" not in r.quantity for r in rec.results)  # no paper value: not recorded ...
    extra = sec.tables[-1].frame  # ... but analysed and shown
    assert set(extra["engine"]) == {"MyEngine"} and "acceptable" in extra.columns
    assert {r.quantity.split(":")[0] for r in got if r.status != "not run"} == {"You.com"}
    assert {r.reason.split(",")[0] for r in got if r.status == "not run"} == {
        "the data have no engine BingChat", "the data have no engine Perplexity"}
    confidence_section(rec, data)
    agreement_section(rec, data, FIXTURES / "labels.csv")
    assert recorded(rec, "AE-F8b")["You.com: % strongly confident (5), all queries"].ours == pytest.approx(50.0)
    assert recorded(rec, "AE-P")["labelled items matched, answer confidence"].ours == 4


def test_sections_on_unjudged_answers_say_not_run(tmp_path, rec, card, thresholds, monkeypatch):
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    shutil.copy(FIXTURES / "answers_unjudged.json", tmp_path / "a.json")
    data = ae.load_answers(tmp_path / "a.json", cache_dir=tmp_path / "cache")
    scorecard_section(rec, data, card, thresholds, n_bootstrap=20, seed=0)
    recomputed = [r for r in rec.results if "published value" not in r.quantity]
    assert [(r.quantity, r.ours) for r in recomputed if r.status != "not run"] == [
        ("answers excluded (not judged, no statements or no scraped source)", 2)]
    reason = next(r.reason for r in recomputed if r.status == "not run")
    assert reason.startswith("2 of 2 answer records not judged (no LLM endpoint")  # "not run: " is the status's
    confidence_section(rec, data)
    conf = recorded(rec, "AE-F8b")
    assert conf and all(r.reason == reason for r in conf.values())
    agreement_section(rec, data)
    assert {r.reason for r in recorded(rec, "AE-P").values()} == {book_answers.LABELS_REASON}


def test_sections_on_the_simulator_plant_and_record(rec, card, thresholds, simulated):
    sec = scorecard_section(rec, simulated, card, thresholds, n_bootstrap=20, seed=0, level=0.9)
    assert not any(r.status == "not run" for r in rec.results) and len(sec.tables) == 1
    one = recorded(rec, "AE-F8")["Perplexity: % one_sided_answer, recomputed from answers"]
    assert one.planted == pytest.approx(83.4) and one.note.startswith("90% bootstrap CI")
    confidence_section(rec, simulated)
    conf = recorded(rec, "AE-F8b")
    assert conf["Perplexity: % strongly confident (5), all queries"].planted is not None
    assert conf["Perplexity: mean confidence (1–5), debate queries"].planted is None
    sec = agreement_section(rec, simulated, seed=0)
    assert [r.data for r in recorded(rec, "AE-P").values()] == ["simulated"] * 4
    assert sec.tables[0].caption.startswith("Simulated")


# --- figures and the notebook ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("book_style", [False, True])
def test_every_chapter_figure_is_legible_at_display_size(rec, card, thresholds, simulated, book_style):
    """At matplotlib's defaults and under the book's style (the chapter calls plotting.apply_style())."""
    with plt.rc_context():
        if book_style:
            plotting.apply_style()
        _every_figure_legible(rec, card, thresholds, simulated)


def _every_figure_legible(rec, card, thresholds, data):
    published_card = Section([Figure(ae.scorecard_figure(card, thresholds), "published")])
    sections = [figure7_section(rec), published_card, table2_section(rec), findings_section(rec),
                implied_section(rec), scorecard_section(rec, data, card, thresholds, n_bootstrap=10, seed=0),
                confidence_section(rec, data)]
    for sec in sections:
        for shown in sec.figures:
            plotting.display.prepare(shown.figure)
            assert plotting.display.smallest_font_pt(shown.figure) >= plotting.display.MIN_FONT_PT
            plt.close(shown.figure)


def test_recomputed_scorecard_draws_the_paper_values_with_a_paper_legend(card, thresholds):
    long = pl.DataFrame([{"engine": e, "metric": k, "value": 50.0, "lo": 40.0, "hi": 60.0}
                         for e in ("YouCom", "MyEngine") for k in ae.metrics.METRICS])
    fig = plots.scorecard_intervals(long, card, thresholds, {})
    ax = fig.axes[ae.metrics.METRICS.index("uncited_sources")]
    diamonds = np.ma.filled(ax.collections[-1].get_offsets()[:, 1], np.nan)
    assert diamonds[0] == pytest.approx(1.1) and np.isnan(diamonds[1])  # no paper value for the user's engine
    assert "paper" in [t.get_text() for t in fig.legends[0].get_texts()]
    plt.close(fig)


def test_notebook_code_cells_are_short_and_headings_unique():
    nb = json.loads(NOTEBOOK.read_text())
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    assert max(len(c.splitlines()) for c in code) <= 25
    headings = [line for c in nb["cells"] if c["cell_type"] == "markdown"
                for line in "".join(c["source"]).splitlines() if line.startswith("## ")]
    ids = [h.split()[1] for h in headings if h.split()[1].startswith("AE-")]
    assert len(ids) == len(set(ids)) and {"AE-F6", "AE-T1", "AE-F8", "AE-F8b"} <= set(ids)
    text = "\n".join("".join(c["source"]) for c in nb["cells"][2:] if c["cell_type"] == "markdown")
    for jargon in ("seed 004", "catalogue", "BATTLE", "PUB "):
        assert jargon not in text


def test_the_conclusions_most_metrics_claim_counts_acceptable_metrics_per_engine(card, thresholds):
    """§7: "none met acceptable performance across most metrics". On the published scorecard You.com is the best
    with 2 acceptable of 8; an engine acceptable on 5 of 8 breaks the claim, 4 of 8 (half, not most) does not."""
    claim = book.most_metrics_claim(classify_scorecard(card, thresholds))
    assert claim == {"holds": "holds", "best": "You.com", "n": 2, "of": 8}

    def made(n_acceptable: int) -> pl.DataFrame:
        return pl.DataFrame({"engine": ["x"] * 8 + ["y"] * 8, "metric": [f"m{i}" for i in range(8)] * 2,
                             "category": ["acceptable"] * n_acceptable + ["problematic"] * (16 - n_acceptable)})

    assert book.most_metrics_claim(made(5))["holds"] == "does not hold"
    assert book.most_metrics_claim(made(4))["holds"] == "holds"


def test_the_library_knows_nothing_of_the_book():
    """``analysis_lib.answer_engine`` never imports ``bookbuild``, and its face (``__all__``) resolves."""
    root = Path(ae.__file__).parent
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "import bookbuild" not in text and "from bookbuild" not in text, path
    assert len(ae.__all__) == len(set(ae.__all__)) and all(hasattr(ae, name) for name in ae.__all__)
