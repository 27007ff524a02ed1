"""Issues 37 and 48: a full build with hostile inputs exits 0 with the hostile values shown as text, or exits 2
before any chapter runs.

One small release in the published schema (``release_variants.base``) whose busiest models are renamed to hostile
names (a TeX command between dollars, a script element, a bold element, a 150-character name, non-ASCII text, and
MyST roles and a directive: ``{download}`` of a build machine's file, ``{math}``, ``{abbr}``, ``{doc}``,
``:::{include}``), a Text Arena file, a DR-Arena match log between the same names and answer-engine answers from
engines so named, each input file itself named with a backtick and a role; chapters 01, 03, 05, 08 and 09 and the
status page are built with the HTML. Every page is then read: no element from the data is live (no ``<script>`` or
``<b>`` from a name), no name is typeset as mathematics, abbreviated or linked, no file but the notebooks is copied
into ``_downloads``, and each name that reached a page is there as its own text. Inputs the door check refuses (a
name over the bound, a model meeting itself) stop the runner with exit 2 before any chapter runs.
"""

from __future__ import annotations

import html
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
import release_variants
from conftest import FAKE_KEY, NOTEBOOKS, REPO, STATUS

from analysis_lib.search_arena.models import TEXT_ARENA_SEARCH_MODEL
from bookbuild.inputs import MAX_NAME_CHARS

MATH = "x$\\undefinedcommand$y"
SCRIPT = "<script>alert(1)</script>"
BOLD = "<b>bold</b>"
LONG = "long-" + "n" * 145
UNICODE = "Модель-ünïcødé-搜索"
#: MyST roles and a directive that, parsed, would copy a build machine's file into the site, typeset, abbreviate, link
#: or include (issue 48).
ROLES = ("{download}`../../../../../../../../etc/hostname`", "{download}`/.git/config`", "{math}`x^2+y^2=z^2`",
         "{abbr}`LLM (large language model)`", "{doc}`/book/intro`", ":::{include} /etc/hostname")
HOSTILE = (MATH, SCRIPT, BOLD, LONG, UNICODE, *ROLES)
CHAPTERS = ("01_dataset", "03_preferences", "05_cross_arena", "08_dr_arena", "09_answer_engines")
#: An input file's name with a backtick and a role, which must not break out of the banner's code span.
ROLE_FILE = "x`{math}`a^2`y"


def _release(path: Path, n: int = 600) -> tuple[Path, list[str]]:
    """The simulated release with its five busiest models renamed to :data:`HOSTILE`; the models it then has."""
    raw = release_variants.base(n)
    busiest = (pl.concat([raw["model_a"], raw["model_b"]]).value_counts(sort=True)["model_a"].head(len(HOSTILE))
               .to_list())
    rename = dict(zip(busiest, HOSTILE, strict=True))
    raw = raw.with_columns(pl.col(c).replace(rename) for c in ("model_a", "model_b"))
    raw.write_parquet(path)
    return path, sorted(set(raw["model_a"]) | set(raw["model_b"]))


def _text_arena(path: Path, models: list[str]) -> Path:
    """A Text Arena file: the deployment's search model against each of ``models``, six battles each (each side
    three times), the votes cycling through a win of each side and a tie."""
    turn = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    rows = []
    for k, (model, first) in enumerate(itertools.product(models, range(6))):
        a, b = (TEXT_ARENA_SEARCH_MODEL, model) if first % 2 else (model, TEXT_ARENA_SEARCH_MODEL)
        rows.append({"question_id": f"q{k}", "model_a": a, "model_b": b, "winner": ("model_a", "model_b", "tie")[k % 3],
                     "intent": ("Factual Lookup", "Analysis")[k % 2], "turn": 1, "conversation_a": turn,
                     "conversation_b": turn})
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _match_log(path: Path, models: list[str], *, self_match: bool = False) -> Path:
    """A DR-Arena match log: every ordered pair of ``models`` plays one one-round match (verdicts cycle through A
    better, B better, a tie; scores follow the verdicts); ``self_match`` adds a model meeting itself."""
    pairs = list(itertools.permutations(models, 2)) + ([(models[0], models[0])] if self_match else [])
    rows = []
    for k, (a, b) in enumerate(pairs):
        verdict = ("A_BETTER", "B_BETTER", "TIE")[k % 3]
        score = {"A_BETTER": (1.0, 0.0), "B_BETTER": (0.0, 1.0), "TIE": (0.5, 0.5)}[verdict]
        rows.append({"match_id": f"m{k}", "tree_id": "t", "model_a": a, "model_b": b, "round": 1, "depth": 1,
                     "width": 1, "verdict": verdict, "failure_type": None if verdict == "TIE" else "DEEP",
                     "tie_quality": "high" if verdict == "TIE" else None, "score_a": score[0], "score_b": score[1]})
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _answers(path: Path, engines: list[str]) -> Path:
    """Answer-engine answers in the released layout from ``engines``: two answers each, two statements citing one
    page whose text supports the first."""
    rows = []
    for k, engine in enumerate(e for e in engines for _ in range(2)):
        statements = [f"Topic {k} has supporters [1].", f"Critics of topic {k} disagree [1]."]
        row = {"id": f"q{k}", "Question": f"Why support topic {k}?", "Output": " ".join(statements),
               "answer_engine": engine, "is_charged": k % 2 == 0, "S1": f"https://a{k}.example",
               "S1_content": f"Title: a\n{statements[0]}"}
        rows.append(row | {f"S{j}": "" for j in range(2, 11)})
    path.write_text(json.dumps(rows, indent=1, ensure_ascii=False), encoding="utf-8")
    return path


def _text_of(page: str) -> str:
    """A page as a reader sees its text: tags out, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def _root(tmp: Path) -> Path:
    root = tmp / "bookroot"
    (root / "book").mkdir(parents=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(REPO / name, root / name)
    for page in sorted((REPO / "book").glob("*.md")) + sorted((REPO / "book").glob("*.bib")):
        shutil.copy(page, root / "book" / page.name)
    return root


def _runner(root: Path, chapters: tuple[str, ...], *inputs: str, timeout: int = 1800) -> subprocess.CompletedProcess:
    env = dict(os.environ, OPENAI_API_KEY=FAKE_KEY, ANTHROPIC_API_KEY=FAKE_KEY, HF_TOKEN=FAKE_KEY,
               ANALYSIS_LLM_OFFLINE="1", HF_HUB_OFFLINE="1")
    env.pop("OPENAI_BASE_URL", None)
    cmd = [sys.executable, "-m", "bookbuild", "--root", str(root), "--notebooks-dir", str(NOTEBOOKS),
           "--cache-dir", str(REPO / ".cache"), "--only", ",".join(chapters), "--bootstrap", "10",
           "--jobs", "2", "--memory-gb", "6", *inputs]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, check=False)


def _pages(root: Path) -> dict[str, str]:
    html_dir = root / "book" / "_build" / "html"
    return {str(p.relative_to(html_dir)): p.read_text(encoding="utf-8") for p in html_dir.rglob("*.html")
            if "_static" not in p.parts}


def _shown(name: str, text: str) -> bool:
    """Whether ``name`` is on the page as text: escaped, whole or cut with an ellipsis (bounded cells, labels)."""
    escaped = html.escape(name, quote=False)
    return escaped in text or escaped[:40] in text


@pytest.mark.slow
def test_hostile_names_build_as_text(tmp_path):
    release, models = _release(tmp_path / f"{ROLE_FILE}.parquet")
    hostile_models = [m for m in models if m in HOSTILE]
    assert len(hostile_models) == len(HOSTILE)
    text_arena = _text_arena(tmp_path / f"{ROLE_FILE}.jsonl", hostile_models)
    logs = _match_log(tmp_path / f"m{ROLE_FILE}.jsonl", hostile_models)
    answers = _answers(tmp_path / f"{ROLE_FILE}.json", [*ROLES[:3], "Perplexity"])
    root = _root(tmp_path)
    t0 = time.perf_counter()
    proc = _runner(root, (*CHAPTERS, STATUS), "--data", str(release), "--text-arena", str(text_arena),
                   "--match-logs", str(logs), "--answers", str(answers))
    print(f"\nhostile build ({', '.join(CHAPTERS)} + status page): {time.perf_counter() - t0:.1f} s")
    assert proc.returncode == 0, f"build failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    pages = _pages(root)
    chapter_pages = {k: v for k, v in pages.items() if any(c in k for c in (*CHAPTERS, STATUS))}
    assert len(chapter_pages) == len(CHAPTERS) + 1, sorted(pages)
    for name, text in pages.items():
        assert SCRIPT not in text and "<script>alert" not in text, name
        assert BOLD not in text, name
        # MathJax would typeset \(…\) or a math span; the dollars must stay text
        assert not re.search(r"\\\(\\undefinedcommand\\\)|class=\"math[^\"]*\"[^>]*>[^<]*undefinedcommand", text), name
    everything = "\n".join(chapter_pages.values())
    for model in HOSTILE:
        assert _shown(model, everything), f"{model[:40]!r} reached no page"
    # issue 48: no role or directive from a name or a file name did anything
    downloads = root / "book" / "_build" / "html" / "_downloads"
    copied = [p.name for p in downloads.rglob("*") if p.is_file() and p.suffix != ".ipynb"]
    assert copied == [], f"files copied into the site from data: {copied}"
    readable = "\n".join(_text_of(v) for v in chapter_pages.values())
    for text in chapter_pages.values():
        assert "<abbr" not in text
        assert not re.search(r'class="[^"]*math[^"]*"[^>]*>[^<]*(x\^2\+y\^2|a\^2)', text)  # typeset by {math}
        assert not re.search(r"<a [^>]*>[^<]*(<[^>]+>)*[^<]*Search-augmented LLMs: a reproduction compendium",
                             text.split('<div class="bd-sidebar')[0].split("<main")[-1])  # {doc} made a link
    for name in (*ROLES, ROLE_FILE):
        assert name in readable, f"{name!r} is not on any page as its own text"


@pytest.mark.slow
@pytest.mark.parametrize("case", ["long name", "self match"])
def test_refused_inputs_stop_before_any_chapter(tmp_path, case):
    root = _root(tmp_path)
    if case == "long name":
        release, _ = _release(tmp_path / "release.parquet", n=300)
        raw = pl.read_parquet(release)
        raw.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(pl.lit("n" * (MAX_NAME_CHARS + 1)))
                         .otherwise(pl.col("model_b")).alias("model_b")).write_parquet(release)
        inputs, option = ("--data", str(release)), "DATA"
    else:
        inputs, option = ("--match-logs", str(_match_log(tmp_path / "m.jsonl", list(HOSTILE[:3]), self_match=True))), \
            "MATCH_LOGS"
    proc = _runner(root, CHAPTERS, *inputs, timeout=600)
    assert proc.returncode == 2, f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    assert f"{option}: " in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert not re.search(r"^(run|done|FAIL) ", proc.stdout, flags=re.M)  # no chapter started
    book = root / "book"
    assert not (book / "chapters").exists() or not any((book / "chapters").iterdir())
    assert not (book / "_results").exists() or not any((book / "_results").glob("*.json"))


# --- the fixes the build needed, each on its own -------------------------------------------------------------------


def test_banner_text_keeps_dollars_and_roles_as_text():
    """A user's name with a pair of dollars or a MyST role in a banner's detail (the model list of chapter 01's
    battle-data line): MyST would typeset or act on it; the banner is HTML in which the name is text."""
    from bookbuild import banner

    detail = f"Model ids kept as-is: {MATH}, {SCRIPT}, {ROLES[0]}; code `{MATH}` stays code."
    rendered = banner.data_banner("user", detail)
    assert 'class="math' not in rendered and "<script>" not in rendered and "<a " not in rendered
    assert "x$\\undefinedcommand$y," in rendered and "{download}<code>" in rendered
    assert f"<code>{html.escape(MATH, quote=False)}</code>" in rendered


def test_fig7_marks_only_the_tiers_the_logs_have(tmp_path):
    """Logs without a Much Better verdict (or without a Wide failure): Fig 7 has no such bar, so the paper's mark for
    it is left out instead of stopping the chapter (``Reference.at_marks: no tick labelled``)."""
    from analysis_lib.dr_arena import match_log, verdict_share_plot, verdict_shares
    from analysis_lib.plotting.display import prepare
    from bookbuild.papers import dr_arena as paper

    rounds = match_log.load_match_logs(_match_log(tmp_path / "m.jsonl", list(HOSTILE)))
    shares = verdict_shares(rounds)
    reference = paper.fig7_reference(shares)
    verdicts, failures = reference
    assert set(verdicts.values) == {"Better"} and set(failures.values) == {"DEEP"}  # no Much Better, no Wide
    prepare(verdict_share_plot(shares, "Fig 7"), "user", reference=reference)  # raised before
