"""The HTML of `extoll-vec report`: one self-contained page (inline CSS, figures as base64 PNG,
no script, no external file), every piece of text from the store escaped.

page() takes a Report (what store_report.py gathered) and returns the document. Element ids
and classes the test reads: ``facts``, ``summary`` (rows ``data-point``), ``failed``, ``plot``.
"""
from __future__ import annotations

import base64
import html
import math
from dataclasses import dataclass, field
from typing import Any

CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222;
       max-width: 1320px; margin: 1.5em auto; padding: 0 1.2em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 1.8em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
p.lead { font-size: 1.05em; color: #444; margin-top: 0; }
table { border-collapse: collapse; font-size: 13px; }
th, td { padding: 3px 6px; border: 1px solid #ddd; text-align: left; vertical-align: top; }
th { background: #f0f0f0; position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) { background: #fafafa; }
table.facts th { position: static; white-space: nowrap; }
.wide { overflow: auto; max-height: 40em; max-width: 100%; display: inline-block; }
figure { display: inline-block; margin: 0.6em 1.2em 1em 0; max-width: 100%; vertical-align: top; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 13px; color: #444; max-width: 557px; }
pre { background: #f5f5f5; padding: 0.6em 0.8em; overflow-x: auto; font-size: 13px; }
code { background: #f5f5f5; padding: 0 0.2em; }
ul.notes { font-size: 13px; color: #444; }
.bad { color: #a00; }
footer { margin-top: 3em; font-size: 12px; color: #777; }
"""


MAX_LISTED = 200         # points not computed listed one by one (a sweep still running)


@dataclass
class Report:
    title: str
    lead: str                                  # the sweep's description
    facts: list[tuple[str, str]]               # heading -> text (plain, escaped here)
    summary: Any                               # registry.Table
    plots: list = field(default_factory=list)  # report_plots.Plot
    no_plots: str = ""                         # why there is no figure, if there is none
    failed: list[tuple[int, str, str]] = field(default_factory=list)   # point, where, message
    failed_note: str = ""
    missing: list[tuple[int, str]] = field(default_factory=list)       # not computed: point, where
    command: str = ""                          # the command that made the store ("" unknown)
    command_note: str = ""
    spec: str = ""                             # the sweep spec's text
    spec_label: str = "the sweep spec stored with the results"
    target: Any = None                         # a target's Table (tables NAME --out DIR)
    target_pngs: list[tuple[str, bytes]] = field(default_factory=list)
    footer: str = ""


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _cell(v: Any) -> str:
    if isinstance(v, bool):
        return f"<td>{esc(v)}</td>"
    if isinstance(v, (int, float)):
        text = "nan" if isinstance(v, float) and math.isnan(v) else \
            (f"{v:.6g}" if isinstance(v, float) else str(v))
        return f'<td class="num">{esc(text)}</td>'
    return f"<td>{esc(v)}</td>"


def table_html(table, table_id: str, point_column: bool = False) -> str:
    """A registry.Table as an HTML table (values as `Table.to_text` prints them) and its notes.
    With point_column, each row carries data-point (its first cell)."""
    head = "".join(f"<th>{esc(c)}</th>" for c in table.columns)
    body = []
    for r in table.rows:
        attr = f' data-point="{esc(r[0])}"' if point_column and r else ""
        body.append(f"<tr{attr}>" + "".join(_cell(v) for v in r) + "</tr>")
    notes = "".join(f"<li>{esc(n.strip())}</li>" for n in table.notes if n.strip())
    return (f'<p>{esc(table.title)}</p><div class="wide"><table id="{esc(table_id)}"><thead><tr>'
            f'{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'
            + (f'<ul class="notes">{notes}</ul>' if notes else ""))


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img class="plot" alt="{esc(alt)}" src="data:image/png;base64,{data}">'


def page(r: Report) -> str:
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>{esc(r.title)}</title><style>{CSS}</style></head><body>",
           f"<h1>{esc(r.title)}</h1>"]
    if r.lead:
        out.append(f'<p class="lead">{esc(r.lead)}</p>')
    if r.target is not None:
        out.append("<h2>Target</h2>" + table_html(r.target, "target"))
        for name, png in r.target_pngs:
            out.append(f"<figure>{_img(png, name)}<figcaption>{esc(name)}</figcaption></figure>")
    if r.summary is not None:
        out += _store_sections(r)
    if r.footer:
        out.append(f"<footer>{esc(r.footer)}</footer>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _store_sections(r: Report) -> list[str]:
    out = ['<h2>Store</h2><table class="facts" id="facts"><tbody>']
    out += [f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in r.facts]
    out.append("</tbody></table>")
    out.append("<h2>Summary</h2>" + table_html(r.summary, "summary", point_column=True))
    out.append("<h2>Plots</h2>")
    if r.plots:
        for p in r.plots:
            out.append(f'<figure>{_img(p.png, "plot against " + p.axis)}'
                       f"<figcaption>{esc(p.caption)}</figcaption></figure>")
    else:
        out.append(f"<p>No plot: {esc(r.no_plots)}.</p>")
    if r.failed:
        out.append(f'<h2 class="bad">Failed points ({len(r.failed)})</h2>')
        rows = "".join(f'<tr data-point="{p}"><td class="num">{p}</td><td>{esc(w)}</td>'
                       f"<td>{esc(m)}</td></tr>" for p, w, m in r.failed)
        out.append('<div class="wide"><table id="failed"><thead><tr><th>point</th>'
                   f"<th>axes</th><th>message</th></tr></thead><tbody>{rows}</tbody></table>"
                   "</div>")
        if r.failed_note:
            out.append(f"<p>{esc(r.failed_note)}</p>")
    if r.missing:
        out.append(f"<h2>Points not computed ({len(r.missing)})</h2>")
        items = "".join(f"<li>point {p}: {esc(w)}</li>" for p, w in r.missing[:MAX_LISTED])
        more = (f"<li>... and {len(r.missing) - MAX_LISTED} more</li>"
                if len(r.missing) > MAX_LISTED else "")
        out.append(f'<ul id="missing">{items}{more}</ul>')
    out.append("<h2>Command</h2>")
    if r.command:
        out.append(f'<pre id="command">{esc(r.command)}</pre>')
    if r.command_note:
        out.append(f"<p>{esc(r.command_note)}</p>")
    if r.spec:
        out.append(f"<details><summary>{esc(r.spec_label)}</summary>"
                   f'<pre id="spec">{esc(r.spec)}</pre></details>')
    return out
