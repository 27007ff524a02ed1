"""Text on the book's pages: nothing from data is ever parsed as MyST.

The book renders notebook outputs of type ``text/markdown`` and every Markdown cell as MyST, whose roles and
directives act on the build machine (``{download}`` copies a local file into the site, ``{include}`` reads one,
``{math}`` typesets, ``{doc}`` links). Text from data (model names, file names, labels, any field) must never reach
that parser. So the book's own texts that carry data are HTML, made here:

- :func:`html` renders the book's authored Markdown (bold, code spans, lists, tables) with **CommonMark** alone
  (markdown-it-py's ``commonmark`` preset plus tables): no roles, directives, maths, raw HTML, links or images,
  so a name interpolated into the text can change at most its emphasis, never what the page does;
- :func:`text` and :func:`code` put any text into HTML escaped (as text, or in ``<code>``);
- :func:`link` and :func:`admonition` are the book's own markup (an internal link, a note or warning box in the
  theme's classes), built from escaped parts;
- :class:`Html` marks a string as made here, so :func:`show` and :func:`concat` keep it and render everything else;
- :func:`page_block` puts HTML into a Markdown page (the identity cell under a chapter's title, the front page's
  line) as one raw HTML block, which MyST passes through without parsing it.

:func:`safe_outputs` is the runner's last guard: any ``text/markdown`` output left in an executed notebook (a cell
calling ``IPython.display.Markdown``) is replaced by :func:`html` of it before the book is built.
"""

from __future__ import annotations

import html as _html
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from markdown_it import MarkdownIt

__all__ = ["Html", "admonition", "code", "code_span", "concat", "html", "inline", "link", "page_block", "safe_outputs",
           "show", "text"]


class Html(str):
    """HTML made by this module (every part from data escaped): shown as it is."""

    __slots__ = ()


#: CommonMark with tables; raw HTML escaped, links, autolinks and images not parsed (shown as their text).
_MD = MarkdownIt("commonmark", {"html": False}).enable("table").disable(["link", "image", "autolink"])
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _clean(markdown: str) -> str:
    """Control characters (NUL and the like) out; a lone surrogate, which no page can encode, as U+FFFD."""
    text = _CONTROL.sub(" ", str(markdown))
    return text.encode("utf-8", "replace").decode("utf-8") if re.search("[\ud800-\udfff]", text) else text


def html(markdown: str) -> Html:
    """Authored Markdown as HTML blocks (paragraphs, lists, tables), by CommonMark alone (see the module)."""
    if isinstance(markdown, Html):
        return markdown
    return Html(_MD.render(_clean(markdown)).strip())


def inline(markdown: str) -> Html:
    """One line of authored Markdown as inline HTML (no enclosing paragraph)."""
    if isinstance(markdown, Html):
        return markdown
    return Html(_MD.renderInline(_clean(markdown)))


def code_span(value: object) -> str:
    """Any value as one Markdown code span that nothing in it can close (a fence longer than its longest run of
    backticks; line breaks and control characters as spaces): inside authored Markdown, shown as its text."""
    flat = " ".join(_clean(str(value)).split())
    fence = "`" * (max((len(m) for m in re.findall(r"`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def text(value: object) -> Html:
    """Any value as escaped text."""
    return Html(_html.escape(_clean(str(value))))


def code(value: object) -> Html:
    """Any value as escaped text in ``<code>`` (a name, a path, a command)."""
    return Html(f"<code>{text(value)}</code>")


def link(label: str, href: str) -> Html:
    """An internal link of the book: ``href`` is a relative page address (``chapters/99_reproduction_status.html``,
    ``#figure-index``); ``label`` is authored Markdown, rendered inline."""
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", href) or href.startswith("//"):
        raise ValueError(f"an internal link must be a relative address, got {href!r}")
    return Html(f'<a class="reference internal" href="{quote(href, safe="/#.-_~")}">{inline(label)}</a>')


def concat(*parts: str) -> Html:
    """Parts joined into one inline HTML text: :class:`Html` kept, anything else rendered as inline Markdown."""
    return Html("".join(p if isinstance(p, Html) else inline(p) for p in parts))


def admonition(title: str, *body: str, kind: str = "note", folded: bool = False) -> Html:
    """A box in the theme's admonition classes (``kind``: ``note``, ``warning``, ``error``, ``tip``): its title
    (inline Markdown) and its body (each part :class:`Html`, or Markdown rendered as blocks). ``folded``: a closed
    ``<details>`` whose summary is the title (readable without JavaScript)."""
    inner = "".join(html(b) for b in body if b)
    if folded:
        return Html(f'<details class="admonition {kind}"><summary class="admonition-title">{inline(title)}'
                    f"</summary>{inner}</details>")
    return Html(f'<div class="admonition {kind}"><p class="admonition-title">{inline(title)}</p>{inner}</div>')


def page_block(content: str) -> str:
    """HTML (or Markdown, rendered first) as one raw HTML block of a Markdown page: a single line starting with
    ``<div``, which MyST passes through as HTML without parsing anything inside it."""
    body = html(content).replace("\r", "").replace("\n", "&#10;")
    return f'<div class="book-block">{body}</div>\n' if body else ""


def show(*contents: str) -> None:
    """Show each content in a notebook as HTML: :class:`Html` as it is, anything else as authored Markdown
    (:func:`html`)."""
    from IPython.display import HTML, display  # noqa: PLC0415 - the book's notebooks only

    for content in contents:
        if content:
            display(HTML(html(content)))


def safe_outputs(cells: Iterable[Any]) -> int:
    """Replace every ``text/markdown`` output of the cells (nbformat cells) by its :func:`html` rendering, in place;
    returns how many were replaced. The book then holds no Markdown output for MyST to parse."""
    n = 0
    for cell in cells:
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            data = output.get("data") if isinstance(output, dict) else None
            if isinstance(data, dict) and "text/markdown" in data:
                source = data.pop("text/markdown")
                source = "".join(source) if isinstance(source, list) else str(source)
                data.setdefault("text/html", str(html(source)))
                n += 1
    return n
