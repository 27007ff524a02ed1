"""Issue 48: text from data never reaches the MyST parser (:mod:`bookbuild.markup`).

MyST's parser (myst-parser with the book's extensions) is the reference: a role in a name is a ``myst_role`` token
when MyST parses the text, and must be nowhere once the text is the book's HTML; a Markdown page's block made by
:func:`markup.page_block` must reach MyST as one raw HTML block, whatever the data in it.
"""

from __future__ import annotations

import html

import nbformat
import pytest
from markdown_it.renderer import RendererHTML
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.mdit import create_md_parser

from bookbuild import banner, identity, markup

#: Roles of docutils, Sphinx, MyST and the book's extensions (sphinxcontrib-bibtex, sphinx-design, myst-nb).
ROLES = ("download", "doc", "ref", "numref", "eq", "math", "abbr", "any", "term", "file", "samp", "kbd", "command",
         "guilabel", "menuselection", "pep", "rfc", "raw-html", "sub-ref", "cite:t", "cite:p", "glue:text", "eval",
         "octicon", "fa", "bdg-primary", "button-ref", "code", "index", "keyword", "option", "envvar")
#: Directives as a name or a file name could carry them (colon and backtick fences; the book enables colon_fence).
DIRECTIVES = (":::{include} /etc/hostname\n:::", "```{include} /etc/hostname\n```",
              "```{literalinclude} /etc/passwd\n```",
              ":::{raw} html\n<script>alert(1)</script>\n:::", "```{eval-rst}\n.. include:: /etc/hostname\n```",
              ":::{figure} /etc/hostname\n:::", "$$x^2$$")
MYST = create_md_parser(MdParserConfig(enable_extensions={"colon_fence", "dollarmath"}), RendererHTML)


def _myst_types(text: str) -> set[str]:
    """Every token type MyST's parser makes of ``text``, nested ones included."""
    out, stack = set(), list(MYST.parse(text))
    while stack:
        token = stack.pop()
        out.add(token.type)
        stack.extend(token.children or [])
    return out


def _hostile() -> list[str]:
    return [f"{{{r}}}`/etc/hostname`" for r in ROLES] + list(DIRECTIVES)


@pytest.mark.parametrize("name", _hostile())
def test_a_name_in_authored_markdown_is_text_in_the_books_html(name):
    parsed = _myst_types(f"Model ids kept as-is: {name}.")
    assert parsed & {"myst_role", "colon_fence", "fence", "math_inline", "math_block", "html_block"}  # live in MyST
    out = markup.html(f"Model ids kept as-is: {name}; **bold** `code`.")
    assert "<strong>bold</strong>" in out and "<code>code</code>" in out
    assert "<script" not in out and "<a " not in out and "<img" not in out and 'class="math' not in out
    plain = html.unescape(out.replace("<code>", "").replace("</code>", "").replace("<p>", "").replace("</p>", ""))
    assert name.replace("`", "").split()[0] in plain.replace("`", "")  # the name is there, as its text


@pytest.mark.parametrize("name", _hostile())
def test_a_page_block_reaches_myst_as_one_raw_html_block(name):
    block = markup.page_block(markup.admonition(f"Data: {markup.code_span(name)}", f"from {name}\n\n{name}",
                                                kind="warning"))
    assert _myst_types(block) == {"html_block"}
    assert "\n" not in block.rstrip("\n")


def test_links_images_and_raw_html_stay_text():
    out = markup.html("[click](javascript:alert(1)) ![x](/etc/hostname) <https://a.example> <b>b</b>")
    assert "<a " not in out and "<img" not in out and "<b>" not in out and "&lt;b&gt;" in out
    assert markup.link("the status", "chapters/99_reproduction_status.html").startswith('<a class="reference internal"')
    with pytest.raises(ValueError, match="relative address"):
        markup.link("x", "javascript:alert(1)")


def test_code_span_holds_any_name():
    for name in ("a``b", "`a", "x`{math}`a^2`y", "plain"):
        out = markup.html(markup.code_span(name))
        assert out.count("<code>") == 1 and html.unescape(out[len("<p><code>"):-len("</code></p>")]) == name


def test_html_outputs_only_after_the_runner(tmp_path):
    """A Markdown output left by a cell (``IPython.display.Markdown``) is replaced by its HTML in the executed copy."""
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("display(Markdown(name))")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/markdown": "{download}`/etc/hostname`",
                                                                 "text/plain": "<IPython.core.display.Markdown>"})]
    nb.cells = [cell]
    assert markup.safe_outputs(nb.cells) == 1
    data = nb.cells[0].outputs[0]["data"]
    assert "text/markdown" not in data and data["text/html"] == "<p>{download}<code>/etc/hostname</code></p>"


def test_banners_identity_and_front_page_are_html(monkeypatch):
    monkeypatch.delenv(banner.INPUTS_ENV, raising=False)
    name = "x`{download}`hostname`.parquet"
    out = banner.data_banner("user", banner.source_line(f"/data/{name}"))
    assert isinstance(out, markup.Html) and out.startswith('<div class="admonition note">')
    assert f"<code>{html.escape(name, quote=False)}</code>" in out and "/data/" not in out
    ident = {"data_source": {"kind": "file", "name": name, "sha256": "ab" * 32, "rows": 3}, "seed": 0}
    cell = identity.page_cell_source(ident, [f"data: {markup.code_span(name)}"])
    assert _myst_types(cell) == {"html_block"}
    front = identity.front_page_line(ident, {}, "chapters/99_reproduction_status", "")
    assert _myst_types(front) == {"html_block"} and 'href="chapters/99_reproduction_status.html"' in front
