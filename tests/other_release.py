"""The suite's "other release" book: one build on inputs the papers never saw, shared by the next-release checks
(``test_next_release.py``) and the hostile-name checks (``test_hostile_build.py``).

The release is ``release_variants``' combined variant (new models, no citation-style field, no intent and language
labels, the columns in another order with extra ones) whose busiest models are then renamed to :data:`HOSTILE`
names (a TeX command between dollars, a script element, a bold element, a 150-character name, non-ASCII text, and
MyST roles and a directive: ``{download}`` of a build machine's file, ``{math}``, ``{abbr}``, ``{doc}``,
``:::{include}``); beside it a Text Arena file, a DR-Arena match log between the same names and answer-engine answers
from engines so named, each input file itself named with a backtick and a role. The chapters that read these inputs
and the status page are built with the HTML, on five bootstrap rounds.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import release_variants as variants
from conftest import REPO, book_root, offline_env

from analysis_lib.search_arena.models import TEXT_ARENA_SEARCH_MODEL

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
#: An input file's name with a backtick and a role, which must not break out of the banner's code span.
ROLE_FILE = "x`{math}`a^2`y"
#: Two of the next release's new models keep their plain names (the other models are renamed to :data:`HOSTILE`).
KEPT = (variants.NEW_MODEL, variants.RENAMED["sonar-pro"])
#: The chapters that read the release.
RELEASE_CHAPTERS = ("01_dataset", "03_preferences", "04_citations", "05_cross_arena")
#: Every chapter built: the release's, DR-Arena on the match log, the answer engines on the answers.
CHAPTERS = (*RELEASE_CHAPTERS, "08_dr_arena", "09_answer_engines")
STATUS = "99_reproduction_status"


def rename_busiest(raw: pl.DataFrame, names: tuple[str, ...], keep: tuple[str, ...] = ()) -> pl.DataFrame:
    """``raw`` with its busiest models (but ``keep``) renamed to ``names``, in order of battles fought."""
    counts = pl.concat([raw["model_a"], raw["model_b"]]).value_counts(sort=True)
    busiest = [m for m in counts["model_a"].to_list() if m not in keep][: len(names)]
    rename = dict(zip(busiest, names, strict=True))
    return raw.with_columns(pl.col(c).replace(rename) for c in ("model_a", "model_b"))


def release(path: Path, n: int = 900, seed: int = 3) -> tuple[Path, list[str]]:
    """The combined next-release variant with :data:`HOSTILE` names, written to ``path``; the models it has."""
    base = variants.base(n, seed)
    raw = variants.reordered(variants.no_labels(variants.no_citation_style(variants.new_models(base))))
    raw = rename_busiest(raw, HOSTILE, keep=KEPT)
    raw.write_parquet(path)
    return path, sorted(set(raw["model_a"]) | set(raw["model_b"]))


def text_arena(path: Path, models: list[str]) -> Path:
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


def match_log(path: Path, models: list[str], *, self_match: bool = False) -> Path:
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


def answers(path: Path, engines: list[str]) -> Path:
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


def runner(root: Path, chapters: tuple[str, ...], *inputs: str, timeout: int = 1800) -> subprocess.CompletedProcess:
    """``python -m bookbuild`` on ``chapters`` with ``inputs``, offline with keys present, five bootstrap rounds."""
    cmd = [sys.executable, "-m", "bookbuild", "--root", str(root), "--notebooks-dir", str(REPO / "notebooks"),
           "--cache-dir", str(REPO / ".cache"), "--only", ",".join(chapters), "--bootstrap", "5",
           "--jobs", "2", "--memory-gb", "6", *inputs]
    return subprocess.run(cmd, capture_output=True, text=True, env=offline_env(), timeout=timeout, check=False)


def build(folder: Path) -> dict[str, object]:
    """Write the inputs into ``folder``, build the book into ``folder/bookroot``: the run's return code, seconds,
    output, and the inputs it was given."""
    folder.mkdir(parents=True, exist_ok=True)
    path, models = release(folder / f"{ROLE_FILE}.parquet")
    hostile_models = [m for m in models if m in HOSTILE]
    inputs = {"release": str(path), "models": models,
              "text_arena": str(text_arena(folder / f"{ROLE_FILE}.jsonl", hostile_models)),
              "match_logs": str(match_log(folder / f"m{ROLE_FILE}.jsonl", hostile_models)),
              "answers": str(answers(folder / f"{ROLE_FILE}.json", [*ROLES[:3], "Perplexity"]))}
    root = book_root(folder / "bookroot")
    t0 = time.perf_counter()
    proc = runner(root, (*CHAPTERS, STATUS), "--data", inputs["release"], "--text-arena", inputs["text_arena"],
                  "--match-logs", inputs["match_logs"], "--answers", inputs["answers"])
    return {"returncode": proc.returncode, "seconds": time.perf_counter() - t0, "stdout": proc.stdout,
            "stderr": proc.stderr, "root": str(root), "inputs": inputs}
