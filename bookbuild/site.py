"""The book's Sphinx extension (``_config.yml``: ``sphinx.extra_extensions``): the theme as the book uses it.

- one search box: the theme's header bar repeats the sidebar's search field (``navbar_persistent``), so it is
  emptied unless the book's configuration sets it;
- a colour mode the theme accepts: without ``default_mode`` the page's first script sets an empty mode, which the
  theme's script reports as an error ("Got invalid theme mode") on every page; the book's tables are drawn on white,
  so ``light``;
- each script once: in a Jupyter Book build sphinx-thebe and sphinx-togglebutton register their inline configuration
  twice (once with no file name, once with an empty one), so every page declared ``const THEBE_JS_URL`` twice (a
  ``SyntaxError`` on every page); a page's scripts are kept in their first order without repeats.

The theme's ``fontawesome.js`` (1.5 MB, the icons drawn as SVG; its style sheet draws the same icons from the web
font) is removed after the build with the site's other excess (:func:`bookbuild.book.lighten_site`).
"""

from __future__ import annotations

from typing import Any

#: Theme options the book sets unless its configuration sets them: no search field in the header bar.
THEME_DEFAULTS: dict[str, Any] = {"navbar_persistent": []}
#: The colour mode of the theme's pages (its template variable ``default_mode``).
DEFAULT_MODE = "light"


def configure(app: Any, config: Any) -> None:
    """``config-inited``: the book's theme options and colour mode, where the configuration leaves them unset."""
    config.html_theme_options = {**THEME_DEFAULTS, **(config.html_theme_options or {})}
    config.html_context = {"default_mode": DEFAULT_MODE, **(config.html_context or {})}


def unique_scripts(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """``html-page-context``: the page's scripts without repeats (a script equals another with the same file or
    inline body and attributes), in their first order."""
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    seen: set[tuple] = set()
    kept = []
    for script in scripts:
        # an inline script is registered with no file name once as None and once as "": the same script
        key = (str(getattr(script, "filename", script) or ""),
               tuple(sorted((k, str(v)) for k, v in (getattr(script, "attributes", None) or {}).items())))
        if key not in seen:
            seen.add(key)
            kept.append(script)
    scripts[:] = kept


def setup(app: Any) -> dict[str, Any]:
    app.connect("config-inited", configure)
    app.connect("html-page-context", unique_scripts, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
