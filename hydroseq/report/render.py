"""A :class:`~hydroseq.report.content.Page` as one self-contained HTML file: Jinja2 template, bokeh inline.

Everything the page needs is in the file: the page's style and script (``templates/``), bokeh's
JavaScript (only its core bundle) and the data. Text from the data files reaches the page only
through Jinja2's autoescaping, bokeh's own serialisation, or :func:`json_for_script` (the page's
script sets it as text, never as HTML).
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
from bokeh.embed import components
from bokeh.resources import Resources
from markupsafe import Markup

from hydroseq import __version__
from hydroseq.fileio import atomic_path
from hydroseq.report.content import Page

_TEMPLATES = resources.files("hydroseq.report") / "templates"
_BOKEH_ID = re.compile(r"\b(?:p\d{4,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b")
_SEPARATOR = "\x00"
# Characters that could end the <script> element or open a comment inside it, as JSON escapes.
_SCRIPT_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def json_for_script(data: Any) -> str:
    """``data`` as JSON that is safe inside ``<script type="application/json">`` (no ``</script>``, no ``<!--``)."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    return "".join(_SCRIPT_ESCAPES.get(character, character) for character in text)


def render_page(page: Page) -> str:
    """The HTML text of ``page``."""
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                                     lstrip_blocks=True, loader=jinja2.FunctionLoader(_template))
    script, divs = _stable_ids(*components(page.charts))
    bokeh = Resources(mode="inline", components=["bokeh"])
    return environment.get_template("report.html.j2").render(
        page=page, version=__version__, chart_script=Markup(script),
        charts={name: Markup(div) for name, div in divs.items()},
        bokeh_js=Markup(bokeh.render_js()),
        style=Markup(_template("report.css")),
        page_script=Markup(_template("report.js")),
        data=Markup(json_for_script(page.data)))


def write_page(page: Page, out: str | Path) -> Path:
    """Render ``page`` and write it to ``out`` atomically (the old page stays until the new one is complete)."""
    out = Path(out)
    html = render_page(page)
    with atomic_path(out) as tmp:
        tmp.write_text(html, encoding="utf-8")
    return out


def _stable_ids(script: str, divs: dict[str, str]) -> tuple[str, dict[str, str]]:
    """Bokeh's random (uuid) and per-process (``p1234``) ids renumbered in order of appearance, so that the same
    forecast gives the same page. Safe because no text of the data is in bokeh's document (the page's script
    fills the charts from the page's own JSON)."""
    names: dict[str, str] = {}

    def stable(match: re.Match[str]) -> str:
        return names.setdefault(match.group(0), f"hydroseq{len(names) + 1}")

    text = _BOKEH_ID.sub(stable, script + _SEPARATOR + _SEPARATOR.join(divs.values()))
    script, *rendered = text.split(_SEPARATOR)
    return script, dict(zip(divs, rendered, strict=True))


def _template(name: str) -> str:
    return (_TEMPLATES / name).read_text(encoding="utf-8")
