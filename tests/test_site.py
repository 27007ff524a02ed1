"""The built site without building it (issue 35, points 3, 6 and 7): downloadable notebooks without the build's paths,
figures as lazy-loaded image files, no source maps, index entries and status links under each section heading, the
catalogue in paper order, LLM models named only when used, and AE Table 1's legend."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import polars as pl  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from PIL import Image  # noqa: E402

from analysis_lib.answer_engine import findings, plots_study  # noqa: E402
from bookbuild import book, catalogue, chapter, identity, navigation, site, status_page  # noqa: E402

# --- downloadable notebooks (point 6) -------------------------------------------------------------------------


def _executed(path, root):
    """An executed copy as papermill leaves it: absolute build paths in its metadata and injected cell."""
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('results_dir = "../book/_results"\nseed = 0')
    params.metadata["tags"] = ["parameters"]
    injected = nbformat.v4.new_code_cell(
        f'# Parameters\nresults_dir = "{root}/book/_build/runs/results/01_x"\ncache_dir = "{root}/.cache"\n'
        f'data_source = "{root}/data/my release.parquet"\nseed = 3\n')
    injected.metadata["tags"] = ["injected-parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell("# Title"), params, injected,
                nbformat.v4.new_markdown_cell("(sa-d5)=\n## SA-D5 · Leaderboard (Table D.1)\n\nText.")]
    nb.metadata["papermill"] = {
        "input_path": f"{root}/notebooks/01_x.ipynb", "output_path": f"{root}/book/_build/runs/partial/01_x.ipynb",
        "parameters": {"results_dir": f"{root}/book/_build/runs/results/01_x", "cache_dir": f"{root}/.cache",
                       "data_source": f"{root}/data/my release.parquet", "seed": 3},
        "environment_variables": {"HOME": root}, "default_parameters": {},
    }
    nbformat.write(nb, path)
    return {"results_dir": f"{root}/book/_build/runs/results/01_x", "cache_dir": f"{root}/.cache",
            "data_source": f"{root}/data/my release.parquet", "seed": 3}


def test_finished_page_keeps_no_path_of_the_build_machine(tmp_path):
    root = str(tmp_path / "machine")
    path = tmp_path / "01_x.ipynb"
    injected = _executed(path, root)
    inspected = {"results_dir": {"default": '"../book/_results"'}, "seed": {"default": "0"}}
    chapter.finish_page(path, inspected, injected, {f"{root}/data/my release.parquet": {"name": "my release.parquet"}})
    text = path.read_text()
    assert root not in text
    nb = nbformat.read(path, as_version=4)
    meta = nb.metadata["papermill"]
    assert meta["parameters"] == {"results_dir": "book/_results", "cache_dir": ".cache",
                                  "data_source": "my release.parquet", "seed": 3}
    assert meta["input_path"] == "notebooks/01_x.ipynb" and meta["output_path"] == "book/chapters/01_x.ipynb"
    cell = next(c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", []))
    assert "results_dir = 'book/_results'" in cell.source and "remove-cell" in cell.metadata["tags"]
    shown = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assert "results_dir = 'book/_results'" in shown.source  # the page and the download say the same


def test_finished_page_links_each_section_to_its_status_row_once(tmp_path):
    path = tmp_path / "01_x.ipynb"
    _executed(path, str(tmp_path))
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell("## LLM usage of this chapter"))  # not a catalogued ID
    nbformat.write(nb, path)
    chapter.finish_page(path, {}, {}, {})
    chapter.finish_page(path, {}, {}, {})  # twice: the runner may finish a page again
    section = nbformat.read(path, as_version=4).cells[3].source
    assert section.count('href="99_reproduction_status.html#status-sa-d5"') == 1
    assert section.count(":::{index} single: SA-D5; Leaderboard (Table D.1)") == 1
    assert nbformat.read(path, as_version=4).cells[4].source == "## LLM usage of this chapter"
    _, sections = navigation.parse_sections([section])
    assert [(s.analysis_id, s.anchor, s.paper_ref) for s in sections] == [("SA-D5", "sa-d5", "Table D.1")]


def test_section_links_carry_the_verdict_badge_and_are_refreshed():
    """Issue 43: under each section heading its verdict badge, linked to its status row; a later build's verdict
    replaces it, and the index entry stays one."""
    source = "(sa-d5)=\n## SA-D5 · Leaderboard (Table D.1)\n\nText."
    plain = navigation.link_sections(source, {"SA-D5"})
    assert ">status of SA-D5</a>" in plain
    first = navigation.link_sections(plain, {"SA-D5"}, {"SA-D5": status_page.verdict_badge("simulated")})
    again = navigation.link_sections(first, {"SA-D5"}, {"SA-D5": status_page.verdict_badge("reproduced")})
    for text, verdict in ((first, "simulated"), (again, "reproduced")):
        assert text.count('class="section-status" href="99_reproduction_status.html#status-sa-d5"') == 1
        assert text.count(":::{index} single: SA-D5") == 1 and ">status of SA-D5<" not in text
        assert f'data-verdict="{verdict}"' in text and text.endswith("\n\nText.")
    assert 'data-verdict="simulated"' not in again
    assert navigation.link_sections(again, {"SA-D5"}) == again  # without badges a link stays as it is


def test_index_entries_keep_one_level():
    out = navigation.link_sections("## NG-F4 · Votes; ties! (Figure 4)")
    assert ":::{index} single: NG-F4; Votes, ties, (Figure 4)" in out
    assert navigation.link_sections("## Results of this chapter") == "## Results of this chapter"
    # a heading that reads like an ID but has no status row ("## LLM usage of this chapter") is left alone
    assert navigation.link_sections("## LLM usage of this chapter", {"SA-D5"}) == "## LLM usage of this chapter"
    assert "status-llm" in navigation.link_sections("## LLM usage of this chapter")


# --- weight (point 7) -----------------------------------------------------------------------------------------


def _png(colour: str) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (4, 3), colour).save(buf, format="PNG")
    return buf.getvalue()


def test_inline_figures_become_lazy_image_files(tmp_path):
    html = tmp_path / "html"
    (html / "book" / "chapters").mkdir(parents=True)
    red, blue = _png("red"), _png("blue")
    uri = lambda data: "data:image/png;base64," + base64.b64encode(data).decode()  # noqa: E731
    page = html / "book" / "chapters" / "01_x.html"
    page.write_text(f'<p><img src="{uri(red)}" alt="red" width="4"></p>\n<img alt="b" src="{uri(blue)}">'
                    f'<img src="{uri(red)}" alt="red again">')
    (html / "index.html").write_text(f'<img src="{uri(blue)}" alt="blue" loading="eager">')
    stale = html / book.IMAGE_DIR / ("fig-" + "0" * 20 + ".png")
    stale.parent.mkdir()
    stale.write_bytes(b"old")
    stats = book.externalize_images(html)
    assert stats["images"] == 2 and stats["pages"] == 2
    assert stats["html_bytes_after"] < stats["html_bytes_before"]
    text = page.read_text()
    assert "data:" not in text
    srcs = re.findall(r'src="([^"]+)"', text)
    assert len(srcs) == 3 and srcs[0] == srcs[2]
    assert [(page.parent / s).resolve().read_bytes() for s in srcs] == [red, blue, red]
    assert srcs[0] == f"../../_images/fig-{hashlib.sha256(red).hexdigest()[:20]}.png"
    assert text.count('loading="lazy"') == 3 and 'alt="red" width="4"' in text
    assert 'loading="eager"' in (html / "index.html").read_text()  # a page's own choice is kept
    assert not stale.exists()  # an image no page references is removed
    before = {p.name: p.read_bytes() for p in (html / book.IMAGE_DIR).iterdir()}
    assert book.externalize_images(html)["pages"] == 0  # idempotent
    assert {p.name: p.read_bytes() for p in (html / book.IMAGE_DIR).iterdir()} == before


def test_repeated_inline_styles_become_classes_of_the_page(tmp_path):
    style = "padding:3px 8px;border-bottom:1px solid #ddd;font-family:&quot;Mono&quot;"
    cells = "".join(f'<td style="{style}">{i}</td>' for i in range(3))
    page = tmp_path / "p.html"
    page.write_text(f'<html><head><title>t</title></head><body><table><tr>{cells}'
                    f'<td class="num" style="{style}">3</td><td style="color:red">4</td></tr></table>'
                    f'<img src="a.png" style="{style}"/></body></html>')
    original = page.read_text()
    saved = book.classify_inline_styles(page)
    text = page.read_text()
    name = re.search(r'<td class="(st-[0-9a-f]{10})">0</td>', text).group(1)
    assert saved == len(original.encode()) - len(text.encode()) > 0
    assert style not in text and text.count(name) == 6  # five elements and the rule
    assert f'<td class="{name} num">3</td>' in text and f'<img src="a.png" class="{name}"/>' in text
    assert '<td style="color:red">4</td>' in text  # a style used once stays where it is
    rule = re.search(rf"\.{name} {{([^}}]*)}}", text).group(1)
    assert rule == ('padding:3px 8px !important; border-bottom:1px solid #ddd !important; '
                    'font-family:"Mono" !important')
    assert text.index("compendium-classes") < text.index("</head>")
    assert book.classify_inline_styles(page) == 0  # idempotent


def test_source_maps_are_removed_with_their_comments(tmp_path):
    static = tmp_path / "_static" / "scripts"
    static.mkdir(parents=True)
    (static / "a.js").write_text("var a = 1;\n//# sourceMappingURL=a.js.map")
    (static / "a.js.map").write_text("{" + "x" * 100 + "}")
    (static / "b.css").write_text("p{color:red}\n/*# sourceMappingURL=b.css.map*/")
    removed = book.remove_source_maps(tmp_path)
    assert removed == 102 and not list(tmp_path.rglob("*.map"))
    assert (static / "a.js").read_text() == "var a = 1;" and (static / "b.css").read_text() == "p{color:red}"


def test_unused_theme_scripts_are_removed_from_pages_and_site(tmp_path):
    """Issue 43: fontawesome.js (the theme's icons as SVG, 1.5 MB) leaves every page and the site; the search index
    leaves every page but the search page."""
    scripts = tmp_path / "_static" / "scripts"
    scripts.mkdir(parents=True)
    (scripts / "fontawesome.js").write_text("x" * 100)
    (scripts / "fontawesome.js.LICENSE.txt").write_text("l")
    (scripts / "bootstrap.js").write_text("b")
    (tmp_path / "searchindex.js").write_text("Search.setIndex({})")
    page = tmp_path / "book" / "p.html"
    page.parent.mkdir()
    keep = '<script defer src="../_static/scripts/bootstrap.js?digest=1"></script>'
    search = '<script src="../_static/searchtools.js"></script>\n<script src="../searchindex.js"></script>'
    page.write_text(f'<head>\n  <script defer src="../_static/scripts/fontawesome.js?digest=1"></script>\n  {keep}\n'
                    f"{search}\n</head>")
    search_page = tmp_path / "search.html"
    search_page.write_text(f"<head>{search.replace('../', '')}</head>")
    removed = book.remove_unused_scripts(tmp_path)
    assert removed > 100 and not (scripts / "fontawesome.js").exists() and (scripts / "bootstrap.js").exists()
    assert page.read_text() == f"<head>\n  {keep}\n</head>" and book.remove_unused_scripts(tmp_path) == 0
    assert 'src="searchindex.js"' in search_page.read_text() and (tmp_path / "searchindex.js").exists()


class _Script:
    def __init__(self, filename, **attributes):
        self.filename, self.attributes = filename, attributes


def test_the_book_extension_keeps_each_script_once_and_sets_the_theme():
    thebe = "const THEBE_JS_URL = 1"
    scripts = [_Script("a.js"), _Script(None, body=thebe), _Script("b.js", defer="defer"), _Script("", body=thebe),
               _Script("a.js"), _Script(None, body="other")]
    context = {"script_files": scripts}
    site.unique_scripts(None, "p", "page.html", context, None)
    assert [(s.filename, s.attributes.get("body")) for s in context["script_files"]] == [
        ("a.js", None), (None, thebe), ("b.js", None), (None, "other")]

    class Config:
        html_theme_options = {"launch_buttons": {"x": 1}}
        html_context = {}
    site.configure(None, Config)
    assert Config.html_theme_options == {"navbar_persistent": [], "launch_buttons": {"x": 1}}
    assert Config.html_context == {"default_mode": "light"}
    Config.html_theme_options = {"navbar_persistent": ["search-button-field"]}
    site.configure(None, Config)  # the book's own setting wins
    assert Config.html_theme_options["navbar_persistent"] == ["search-button-field"]


# --- the catalogue in paper order (point 7) -------------------------------------------------------------------


def test_second_pass_ids_stand_in_their_papers_order():
    cat = catalogue.read()
    ids = list(cat["analysis_id"])
    papers = list(cat["paper"])
    blocks = [p for i, p in enumerate(papers) if i == 0 or papers[i - 1] != p]
    assert blocks == list(catalogue.PAPERS)  # one block per paper, in the papers' order
    for aid, after in catalogue.PAPER_PLACE.items():
        block = [a for a, p in zip(ids, papers) if p == aid.split("-")[0]]
        assert block.index(aid) == (0 if after is None else block.index(after) + 1), aid
    raw = pl.read_csv(catalogue.resources.files("bookbuild").joinpath("resources/analyses.csv").read_bytes(),
                      infer_schema_length=0)
    assert sorted(ids) == sorted(raw["analysis_id"])  # nothing lost or added


def test_paper_order_on_a_hand_made_catalogue(monkeypatch):
    monkeypatch.setattr(catalogue, "PAPER_PLACE", {"SA-9": "SA-1", "SA-8": "SA-9", "AE-2": None, "DR-3": "SA-1"})
    frame = pl.DataFrame({"analysis_id": ["SA-1", "SA-2", "AE-1", "DR-1", "SA-9", "SA-8", "DR-3", "AE-2"],
                          "paper": ["SA", "SA", "AE", "DR", "SA", "SA", "DR", "AE"]})
    got = list(catalogue.in_paper_order(frame)["analysis_id"])
    assert got == ["SA-1", "SA-9", "SA-8", "SA-2", "DR-1", "DR-3", "AE-2", "AE-1"]  # DR-3's place is in another paper


# --- the LLM in the environment boxes (point 3) ---------------------------------------------------------------

REFERENCE = {"data_source": {"kind": "simulator", "name": "sample:2000", "seed": 0}, "seed": 0, "n_bootstrap": 20,
             "inputs": {}, "parameters": {},
             "llm": {"endpoint": "https://api.openai.com/v1", "model": "gpt-4.1", "offline": True},
             "environment": {"python": "3.11", "packages": {}, "installed_sha256": "ab", "n_installed": 1}}


def _results(tmp_path, stem, results):
    payload = {"notebook": stem, "results": results, "identity": dict(REFERENCE)}
    (tmp_path / f"{stem}.json").write_text(json.dumps(payload))


def test_llm_model_is_named_only_when_its_outputs_were_used(tmp_path):
    (tmp_path / identity.BUILD_FILE).write_text(json.dumps(REFERENCE))
    _results(tmp_path, "02_prompts", [{"analysis_id": "SA-B5", "quantity": "kappa", "llm": "", "status": "not run"}])
    block = identity.status_block(tmp_path)
    assert f"LLM: {identity.NO_LLM}" in block and "gpt-4.1" not in block
    cell = identity.page_cell_source(REFERENCE, [], identity.read_used_models(tmp_path)["02_prompts"])
    assert f"LLM: {identity.NO_LLM}" in cell and "gpt-4.1" not in cell
    _results(tmp_path, "07_nuggets", [{"analysis_id": "NG-F6", "quantity": "kappa", "llm": "gpt-4.1-mini"}])
    assert identity.read_used_models(tmp_path) == {"02_prompts": [], "07_nuggets": ["gpt-4.1-mini"]}
    block = identity.status_block(tmp_path)
    assert "LLM: model <code>gpt-4.1-mini</code> (cached outputs, no endpoint called)" in block
    live = {"endpoint": "http://127.0.0.1:9/v1", "model": "m", "offline": False}
    assert identity.describe_llm(live, ["m"]) == "model `m` (endpoint `http://127.0.0.1:9/v1`)"
    assert "`m`" not in identity.describe_llm(live, [])
    assert identity.describe_llm({"endpoint": "", "model": "gpt-4.1", "offline": False}, []) == identity.NO_LLM


# --- AE Table 1 (point 7) -------------------------------------------------------------------------------------


def test_ae_table1_bars_have_a_legend_of_their_colours():
    shares = findings.findings_shares(findings.load_findings())
    fig = plots_study.findings_bars(shares)
    try:
        ax = fig.axes[0]
        legend = ax.get_legend()
        assert legend is not None
        named = {t.get_text(): to_hex(h.get_facecolor()) for t, h in zip(legend.get_texts(), legend.legend_handles)}
        bars = {to_hex(p.get_facecolor()) for p in ax.patches}
        shown = set(shares["component"])
        assert set(named) >= shown  # every component drawn is named
        assert {named[c] for c in shown} == bars  # and its colour is the bars' colour
    finally:
        plt.close(fig)
