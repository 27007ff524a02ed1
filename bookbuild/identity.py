"""One identity per build: what every chapter's numbers were computed from, and whether the book agrees with itself.

A chapter's identity (:func:`chapter_identity`) holds, for the parameters its ``parameters`` cell declares only:

- ``data_source``: the release (a user's file by name, sha256 and rows; ``hf`` by its pinned revision and rows;
  the simulator by ``sample:N`` and its seed);
- ``seed``, ``n_bootstrap``;
- ``inputs``: each declared user input (nugget records, match logs, answers, labels, attribution, Text Arena) by
  name, sha256 and rows, or ``default`` when not given (the chapter's own simulator);
- ``llm``: the LLM endpoint's identity (origin, model, offline mode; never a secret), for chapters using it; the
  boxes name a model only when the chapter's numbers rest on its outputs (:func:`describe_llm`);
- ``environment`` (:func:`environment`): Python, the key packages' versions and the sha256 of the whole
  installed set (every distribution's ``name==version``, sorted).

The runner stores it with the chapter's results (``"identity"`` in ``<results>/<chapter>.json``) and this build's
reference identity (every field, from the build's options) in ``<results>/_build.json``. A chapter whose identity
differs from the reference in any field it declares is *stale* (:func:`differences`): the runner says so after
``--only``, the chapter's page carries a warning (:func:`page_cell_source`), and the status page's top
(:func:`status_block`) lists every stale chapter. :func:`front_page_line` is the one line of the book's front page.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import platform
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from analysis_lib.search_arena import encoder
from bookbuild import markup
from bookbuild.banner import md_code
from bookbuild.config import MANAGED_PARAMETERS

#: The packages whose versions the status page shows (the whole set is hashed).
KEY_PACKAGES = ("numpy", "scipy", "polars", "statsmodels", "scikit-learn", "matplotlib", "sentence-transformers",
                "bertopic", "jupyter-book", "torch")
#: The project itself is not part of the environment's identity (its code is in the rebuild key).
OWN_DISTRIBUTIONS = ("analysis-lib",)
BUILD_FILE = "_build.json"
#: The markdown cell the runner puts under a chapter's title: its identity, and a warning when stale.
CELL_ID = "bookbuild-identity"
FRONT_PAGE_FILE = "identity.md"

_FIELDS = ("data_source", "seed", "n_bootstrap", "inputs", "parameters", "llm", "environment")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _name_version(dist: importlib.metadata.Distribution) -> tuple[str | None, str | None]:
    """``Name`` and ``Version`` from the head of a distribution's metadata: the header lines before the first blank
    line (the same values ``dist.metadata`` gives, without parsing the long description of ~200 packages)."""
    name = version = None
    for line in (dist.read_text("METADATA") or dist.read_text("PKG-INFO") or "").splitlines():
        if not line:
            break
        if line.startswith("Name:"):
            name = line[5:].strip()
        elif line.startswith("Version:"):
            version = line[8:].strip()
    return name, version


def installed() -> dict[str, str]:
    """Every installed distribution of this interpreter: canonical name -> version (the project itself left out)."""
    out: dict[str, str] = {}
    for dist in importlib.metadata.distributions():
        name, version = _name_version(dist)
        if name and version and canonical(name) not in OWN_DISTRIBUTIONS:
            out[canonical(name)] = version
    return dict(sorted(out.items()))


def environment(packages: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Python's version, the key packages' versions, ``installed_sha256``, the sha256 of the sorted
    ``name==version`` lines of every installed distribution (``packages``: that set, default :func:`installed`),
    and ``offline_encoder``, the precision the offline encoder's ``"auto"`` takes on this processor
    (:func:`analysis_lib.search_arena.encoder.resolve_precision`)."""
    packages = installed() if packages is None else dict(packages)
    lines = "\n".join(f"{n}=={v}" for n, v in sorted(packages.items()))
    return {
        "python": platform.python_version(),
        "packages": {k: packages.get(canonical(k)) for k in KEY_PACKAGES},
        "n_installed": len(packages),
        "installed_sha256": hashlib.sha256(lines.encode()).hexdigest(),
        "offline_encoder": encoder.resolve_precision("auto"),
    }


def environment_key(env: Mapping[str, Any] | None) -> tuple[Any, ...]:
    """What must be equal for two environments to give the same results: the installed set, Python's version and
    the offline encoder's precision (a book moved to a processor without native bfloat16 embeds in float32)."""
    env = env or {}
    return env.get("installed_sha256"), env.get("python"), env.get("offline_encoder")


def chapter_identity(declared: set[str] | frozenset[str], reference: Mapping[str, Any], *, uses_llm: bool) -> dict:
    """The part of the build's ``reference`` identity that a chapter declaring ``declared`` depends on."""
    out: dict[str, Any] = {}
    for name in ("data_source", "seed", "n_bootstrap"):
        if name in declared and name in reference:
            out[name] = reference[name]
    out["inputs"] = {k: v for k, v in reference.get("inputs", {}).items() if k in declared}
    out["parameters"] = {k: v for k, v in (reference.get("parameters") or {}).items() if k in declared}
    out["declares"] = sorted(set(declared) - MANAGED_PARAMETERS)  # what a later build's --set would change
    if uses_llm:
        out["llm"] = reference.get("llm")
    out["environment"] = reference.get("environment")
    return out


def _key(field: str, value: Any) -> Any:
    """What must be equal for a field to agree (descriptions may differ in wording, not in content)."""
    if field == "environment":
        return environment_key(value)
    if field == "data_source":
        return (value or {}).get("id")
    if field == "inputs":
        return {k: (v or {}).get("id") for k, v in (value or {}).items()}
    return value


def differences(chapter: Mapping[str, Any] | None, reference: Mapping[str, Any]) -> list[str]:
    """The fields in which a chapter's identity differs from the reference, as short phrases (empty: agrees).

    A chapter without a recorded identity (built before identities were recorded) differs in everything."""
    if not chapter:
        return ["no identity recorded with its results"]
    out = []
    for field in _FIELDS:
        if field not in chapter:
            continue
        ref = reference.get(field)
        if field == "inputs":
            for name, value in (chapter.get("inputs") or {}).items():
                want = (reference.get("inputs") or {}).get(name)
                if _key("data_source", value) != _key("data_source", want):
                    out.append(f"{name}: {describe_input(value)} (this build: {describe_input(want)})")
        elif field == "parameters":
            mine = chapter.get("parameters") or {}
            declares = set(chapter.get("declares", mine))
            theirs = {k: v for k, v in (reference.get("parameters") or {}).items() if k in declares}
            if mine != theirs:
                out.append(f"parameters set: {describe_settings(mine) or 'none'} "
                           f"(this build: {describe_settings(theirs) or 'none'})")
        elif _key(field, chapter[field]) != _key(field, ref):
            out.append(f"{field.replace('_', ' ')}: {describe(field, chapter[field])} "
                       f"(this build: {describe(field, ref)})")
    return out


def describe_input(value: Mapping[str, Any] | None) -> str:
    """Markdown for one input's description (names in code spans, hashes shortened)."""
    if not value:
        return "not recorded"
    if value.get("kind") == "default":
        return "not given (the chapter's simulator)"
    if value.get("kind") == "simulator":
        rows = f"{int(value['rows']):,} {value.get('unit', 'rows')}, " if value.get("rows") else ""
        return f"simulator {md_code(value.get('name', ''))} ({rows}seed {value.get('seed')})"
    facts = []
    if value.get("sha256"):
        facts.append(f"sha256 {str(value['sha256'])[:12]}…")
    if value.get("tree_sha256"):
        facts.append(f"sha256 of its files {str(value['tree_sha256'])[:12]}…")
    if value.get("revision"):
        facts.append(f"revision {str(value['revision'])[:12]}")
    if value.get("rows") is not None:
        facts.append(f"{int(value['rows']):,} {value.get('unit', 'rows')}")
    who = "the user's " + ("folder" if value.get("kind") == "folder" else "file") if value.get("kind") in (
        "file", "folder") else "the pinned public release" if value.get("pinned") else "release"
    return f"{who} {md_code(value.get('name', ''))}" + (f" ({', '.join(facts)})" if facts else "")


def describe_settings(settings: Mapping[str, Any] | None) -> str:
    """``--set`` values as Markdown (``name = value``, comma-separated; empty when none)."""
    return ", ".join(md_code(f"{k} = {json.dumps(v)}") for k, v in sorted((settings or {}).items()))


def describe_environment(env: Mapping[str, Any] | None) -> str:
    if not env:
        return "not recorded"
    versions = ", ".join(f"{k} {v}" for k, v in (env.get("packages") or {}).items() if v)
    encoder_part = f"; offline encoder in {env['offline_encoder']}" if env.get("offline_encoder") else ""
    return (f"Python {env.get('python')}; {versions}; {env.get('n_installed')} packages installed, set sha256 "
            f"{str(env.get('installed_sha256'))[:12]}…{encoder_part}")


#: What an environment box says when no LLM output was used: the model is named only when one was.
NO_LLM = "none (no endpoint configured, so the steps that need one did not run)"


def describe_llm(llm: Mapping[str, Any] | None, used: Sequence[str] | None = None) -> str:
    """Markdown for the LLM part of an identity.

    ``used``: the models whose outputs the numbers rest on (:func:`used_models`); ``None`` when unknown (a difference
    between two identities: then the endpoint and model as configured). With ``used`` given, the model is named only
    when outputs of it were used (read from the endpoint or its cache); otherwise :data:`NO_LLM`, or, when a live
    endpoint was configured and nothing used it, the endpoint alone. A configured model name is never shown by itself:
    without an endpoint it names nothing that ran."""
    llm = llm or {}
    endpoint = str(llm.get("endpoint") or "")
    live = bool(endpoint) and not llm.get("offline")
    if used is None:
        if not endpoint:
            return "no endpoint"
        mode = ", offline (cached outputs only)" if llm.get("offline") else ""
        return f"endpoint {md_code(endpoint)}, model {md_code(llm.get('model') or '?')}{mode}"
    if used:
        models = ", ".join(md_code(m) for m in used)
        where = f"endpoint {md_code(endpoint)}" if live else "cached outputs, no endpoint called"
        return f"model {models} ({where})"
    if live:
        return f"endpoint {md_code(endpoint)}: no LLM output used"
    return NO_LLM


def describe(field: str, value: Any) -> str:
    if field == "data_source":
        return describe_input(value)
    if field == "environment":
        return describe_environment(value)
    if field == "llm":
        return describe_llm(value)
    return md_code(value)


def identity_lines(ident: Mapping[str, Any], used: Sequence[str] | None = None) -> list[str]:
    """One Markdown bullet per field of an identity; ``used``, the LLM models the numbers rest on
    (:func:`describe_llm`)."""
    lines = []
    if "data_source" in ident:
        lines.append(f"data: {describe_input(ident['data_source'])}")
    if "seed" in ident or "n_bootstrap" in ident:
        lines.append(", ".join(f"{k.replace('n_bootstrap', 'bootstrap rounds')} {ident[k]}"
                               for k in ("seed", "n_bootstrap") if k in ident))
    for name, value in (ident.get("inputs") or {}).items():
        lines.append(f"{md_code(name)}: {describe_input(value)}")
    if ident.get("parameters"):
        lines.append(f"parameters set for this build: {describe_settings(ident['parameters'])}")
    if "llm" in ident:
        lines.append(f"LLM: {describe_llm(ident['llm'], used)}")
    lines.append(f"environment: {describe_environment(ident.get('environment'))}")
    return lines


def _results_files(results_dir: str | Path) -> Iterator[tuple[str, dict]]:
    """``(chapter stem, payload)`` of each readable results file in ``results_dir`` (the runner's ``_*.json``
    left out)."""
    for path in sorted(Path(results_dir).glob("*.json")):
        if path.name.startswith("_"):
            continue
        try:
            payload = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        yield payload.get("notebook", path.stem), payload


def read_identities(results_dir: str | Path) -> dict[str, dict | None]:
    """Each chapter's recorded identity, by results file stem (``None``: results without an identity)."""
    return {stem: payload.get("identity") for stem, payload in _results_files(results_dir)}


def used_models(results: Iterable[Mapping[str, Any]]) -> list[str]:
    """The LLM models whose outputs recorded numbers rest on: the ``llm`` of each result (the recorder names the
    model only for an LLM output that ran, from the endpoint or its cache), each once, sorted."""
    return sorted({str(r.get("llm")) for r in results if r.get("llm")})


def read_used_models(results_dir: str | Path) -> dict[str, list[str]]:
    """:func:`used_models` of each chapter's results in ``results_dir``, by chapter stem."""
    return {stem: used_models(payload.get("results") or []) for stem, payload in _results_files(results_dir)}


def read_reference(results_dir: str | Path) -> dict | None:
    try:
        return json.loads((Path(results_dir) / BUILD_FILE).read_text())
    except (OSError, ValueError):
        return None


def stale_chapters(results_dir: str | Path, reference: Mapping[str, Any] | None = None) -> dict[str, list[str]]:
    """Chapters whose recorded identity differs from the reference (default: the one in ``_build.json``)."""
    reference = reference if reference is not None else (read_reference(results_dir) or {})
    out = {}
    for stem, ident in read_identities(results_dir).items():
        diff = differences(ident, reference)
        if diff:
            out[stem] = diff
    return out


def page_cell_source(ident: Mapping[str, Any] | None, stale: list[str], used: Sequence[str] = (),
                     lead: str = "") -> str:
    """The cell the runner puts under a chapter's title, as one raw HTML block (:func:`bookbuild.markup.page_block`:
    nothing in it is parsed as MyST): ``lead`` (HTML made by :mod:`bookbuild.markup`: what the chapter's sections ran
    on, :func:`bookbuild.status_page.chapter_data_line`), a warning listing the differences when the chapter was
    computed from other inputs than the book's, and the chapter's identity (folded; ``used``: the LLM models its
    numbers rest on, :func:`read_used_models`)."""
    parts = [markup.Html(lead)] if lead else []
    if stale:
        parts.append(markup.admonition(
            "Computed from other inputs than the rest of this book",
            "This chapter was not rebuilt with this build's options, so its numbers come from other inputs than the "
            "status page's (see its top):", _bullets(stale),
            "Run `make book` with the same options to bring it up to date.", kind="warning"))
    if ident:
        parts.append(markup.admonition("What this page was computed from", _bullets(identity_lines(ident, list(used))),
                                       kind="note", folded=True))
    return markup.page_block(markup.Html("".join(parts))) if parts else ""


def _bullets(lines: Iterable[str]) -> markup.Html:
    """Markdown lines as one HTML list (each line rendered inline)."""
    return markup.Html("<ul>" + "".join(f"<li>{markup.inline(line)}</li>" for line in lines) + "</ul>")


def status_block(results_dir: str | Path, folded: bool = False) -> markup.Html:
    """HTML for the top of the status page: this build's identity (``folded``: in a closed box whose title opens it),
    and a warning listing every chapter computed from other inputs (a mixed book)."""
    reference = read_reference(results_dir)
    if reference is None:
        return markup.admonition("Build identity unknown", "This page was not built by the runner (`python -m "
                                 "bookbuild`), so it cannot say which inputs the chapters were computed from.",
                                 kind="warning")
    stale = stale_chapters(results_dir, reference)
    used = sorted({m for models in read_used_models(results_dir).values() for m in models})
    block = markup.admonition("This build's inputs and environment", _bullets(identity_lines(reference, used)),
                              folded=folded)
    if not stale:
        return block
    listed = _bullets(f"{md_code(stem)}: " + "; ".join(diff) for stem, diff in sorted(stale.items()))
    return markup.Html(markup.admonition(
        "Mixed book: some chapters were computed from other inputs",
        f"{len(stale)} chapter(s) were not rebuilt with this build's options; their numbers below come from other "
        "inputs or another environment:", listed, "Run `make book` with the same options to rebuild them.",
        kind="warning") + block)


def front_page_line(reference: Mapping[str, Any], stale: Mapping[str, list[str]], status_doc: str | None,
                    counts: str = "", used: Sequence[str] | None = None) -> str:
    """The front page's one line, as a raw HTML block (:func:`bookbuild.markup.page_block`): simulator or release
    (name, sha256 prefix, rows), the user inputs given, the LLM (:func:`describe_llm` of the endpoint and ``used``,
    the models whose outputs numbers rest on: named only when used), a link to the status page (``status_doc``, its
    address from the front page without ``.html``), and a warning when the book is mixed; then ``counts``, the
    analyses by verdict class (:func:`bookbuild.status_page.front_page_counts`, HTML), on a line of its own."""
    data = reference.get("data_source") or {}
    if data.get("kind") == "simulator":
        what = "the project's **" + describe_input(data) + "**, not on a release"
    else:
        what = describe_input(data)
    given = [f"{md_code(k)} = {describe_input(v)}" for k, v in (reference.get("inputs") or {}).items()
             if (v or {}).get("kind") != "default"]
    line = f"**This build** ran on {what}; user inputs: {'; '.join(given) if given else 'none'}"
    line += f"; LLM: {describe_llm(reference.get('llm'), list(used or []))}."
    if reference.get("parameters"):
        line += f" Chapter parameters set for it: {describe_settings(reference['parameters'])}."
    parts: list[str] = [line]
    if status_doc:
        parts += [" The ", markup.link("reproduction status", f"{status_doc}.html"),
                  " lists every analysis with its data."]
    if stale:
        parts.append(f" **Mixed book:** {len(stale)} chapter(s) come from other inputs (listed there).")
    paragraph = markup.Html("<p>" + markup.concat(*parts) + "</p>")
    return markup.page_block(markup.Html(paragraph + (markup.html(counts) if counts else "")))
