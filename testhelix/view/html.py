"""HTML building blocks for the self-contained reports (`testhelix view`, `autosaddler view`).

Every report is one file that works opened from disk: inline CSS, one small inline script, no
network. All text goes through `esc` (trajectories and optimizer prose are untrusted model output);
only `Markup` values, built here from escaped parts, are inserted as HTML. A Content-Security-Policy
admits exactly the page's own script (by hash) and no network fetch, as a second line of defence.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import html
import json
from collections.abc import Iterable, Sequence
from typing import Any

from testhelix.llm.registry import is_simulated


class Markup(str):
    """HTML that was built from escaped parts; inserted as is."""


def esc(value: Any) -> Markup:
    if isinstance(value, Markup):
        return value
    return Markup(html.escape("" if value is None else str(value), quote=True))


def tag(name: str, *children: Any, **attrs: Any) -> Markup:
    """<name attrs>children</name>; attribute names use _ for - and a trailing _ for keywords (class_)."""
    parts = []
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        key = key.rstrip("_").replace("_", "-")
        parts.append(f" {key}" if value is True else f' {key}="{esc(value)}"')
    return Markup(f"<{name}{''.join(parts)}>{''.join(esc(c) for c in children)}</{name}>")


def join(items: Iterable[Any]) -> Markup:
    return Markup("".join(esc(i) for i in items))


def table(headers: Sequence[Any] | None, rows: Iterable[Sequence[Any]], **attrs: Any) -> Markup:
    """Rows are sequences of cells; a cell may be a (content, css class) pair. No headers: a key-value table."""
    head = tag("tr", *(tag("th", h) for h in headers)) if headers else ""
    body = []
    for row in rows:
        cells = []
        for cell in row:
            content, cls = cell if isinstance(cell, tuple) else (cell, None)
            cells.append(tag("td", content, class_=cls))
        body.append(tag("tr", *cells))
    return tag("table", tag("thead", head), tag("tbody", *body), **attrs)


def section(sid: str, title: str, *body: Any) -> Markup:
    return tag("section", tag("h2", title), *body, id=sid)


def pre(text: Any, cls: str | None = None) -> Markup:
    return tag("pre", text, class_=cls)


def pretty_json(obj: Any) -> str:
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, default=str)


def pct(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{100 * value:.{digits}f}%"


def number(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.0f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def cost(value: float | None, unknown: bool = False, local: bool = False) -> str:
    """Unknown cost (no price for the model) is never shown as 0, nor a local model's (nothing billed)."""
    if unknown or value is None:
        return "unknown (no price)"
    if local and not value:
        return "local (nothing billed)"
    return f"${value:.4f}"


def diff(old: str, new: str, old_name: str, new_name: str) -> Markup:
    """A unified diff, one escaped line per row, added and removed lines classed."""
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), old_name, new_name, lineterm="", n=2))
    if not lines:
        return tag("p", "no difference from the parent", class_="muted")
    rows = []
    for line in lines:
        cls = ("add" if line.startswith("+") and not line.startswith("+++") else
               "del" if line.startswith("-") and not line.startswith("---") else
               "hunk" if line.startswith("@@") else None)
        rows.append(tag("span", line + "\n", class_=cls))
    return tag("pre", *rows, class_="diff")


def line_chart(series: dict[str, list[tuple[float, float]]], xlabel: str, ylabel: str, *, width: int = 640,
               height: int = 260, ymax: float = 1.0, y_as_pct: bool = True, chart_id: str = "chart") -> Markup:
    """A hand-drawn SVG line chart; each point carries data-x / data-y for tests and tooltips."""
    colours = ["#2f6db5", "#d1495b", "#3a9d5d", "#8a5fbf", "#e08a1e"]
    left, right, top, bottom = 56, 16, 14, 40
    xs = [x for pts in series.values() for x, _ in pts] or [0, 1]
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    sx = lambda x: left + (x - x0) / (x1 - x0) * (width - left - right)  # noqa: E731
    sy = lambda y: top + (1 - y / ymax) * (height - top - bottom)  # noqa: E731
    parts = [tag("line", x1=left, y1=sy(0), x2=width - right, y2=sy(0), class_="axis"),
             tag("line", x1=left, y1=top, x2=left, y2=sy(0), class_="axis")]
    for frac in (0, 0.25, 0.5, 0.75, 1.0):
        y = sy(frac * ymax)
        label = f"{100 * frac * ymax:.0f}%" if y_as_pct else f"{frac * ymax:.3g}"
        parts += [tag("line", x1=left, y1=y, x2=width - right, y2=y, class_="grid"),
                  tag("text", label, x=left - 6, y=y + 4, text_anchor="end", class_="tick")]
    for x in sorted(set(xs)):
        parts.append(tag("text", f"{x:g}", x=sx(x), y=sy(0) + 16, text_anchor="middle", class_="tick"))
    parts += [tag("text", xlabel, x=(left + width - right) / 2, y=height - 4, text_anchor="middle", class_="label"),
              tag("text", ylabel, x=12, y=top + (height - top - bottom) / 2, text_anchor="middle", class_="label",
                  transform=f"rotate(-90 12 {top + (height - top - bottom) / 2})")]
    legend = []
    for i, (name, pts) in enumerate(series.items()):
        colour = colours[i % len(colours)]
        if len(pts) > 1:
            path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
            parts.append(tag("polyline", points=path, fill="none", stroke=colour, stroke_width=2))
        for x, y in pts:
            shown = f"{100 * y:.1f}%" if y_as_pct else f"{y:g}"
            parts.append(tag("circle", tag("title", f"{name}: {xlabel} {x:g}, {shown}"), cx=f"{sx(x):.1f}",
                             cy=f"{sy(y):.1f}", r=4, fill=colour, class_="point", data_series=name,
                             data_x=f"{x:g}", data_y=f"{y:.6g}"))
        legend.append(tag("span", tag("span", "", class_="swatch", style=f"background:{colour}"), name))
    svg = tag("svg", *parts, viewBox=f"0 0 {width} {height}", width=width, height=height, role="img",
              id=chart_id, class_="chart")
    return join([svg, tag("div", *legend, class_="legend")])


CSS = """
:root{--fg:#1d2430;--muted:#6b7280;--line:#d7dce3;--bg:#fff;--soft:#f4f6f9}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);
 margin:0;padding:0 24px 40px}
header{padding:16px 0 8px;border-bottom:1px solid var(--line);margin-bottom:8px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:26px 0 8px;border-bottom:1px solid var(--line);
 padding-bottom:4px}h3{font-size:15px;margin:14px 0 6px}
nav a{margin-right:14px}
.banner{padding:8px 12px;border-radius:6px;margin:8px 0;border:1px solid}
.banner.sim{background:#fff6dc;border-color:#e7c35a}.banner.live{background:#e7f0ff;border-color:#7ea6e0}
.muted{color:var(--muted)}
table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}
th,td{border:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top}
th{background:var(--soft)}td.num{text-align:right;font-variant-numeric:tabular-nums}
td.ok{background:#dff3e4}td.bad{background:#fbe0e0}td.gain{background:#dff3e4;font-weight:600}
td.fonly{background:#fff3cd}
td.regression{background:#f6b9b9;font-weight:700}td.na{color:var(--muted)}
pre{background:var(--soft);border:1px solid var(--line);padding:8px;overflow:auto;max-height:420px;
 white-space:pre-wrap;word-break:break-word;font-size:12px}
pre.diff span.add{background:#dff3e4;display:block}pre.diff span.del{background:#fbe0e0;display:block}
pre.diff span.hunk{color:#6b4fa0;display:block}pre.diff span{display:block}
.dagwrap{display:flex;gap:18px;align-items:flex-start;flex-wrap:wrap}
svg.dag{border:1px solid var(--line);background:#fcfcfd}
svg .edge{stroke:#8a94a3;stroke-width:1.5;fill:none}
svg .node{cursor:pointer}svg .node circle{stroke:#1d2430;stroke-width:1}
svg .node.selected circle{stroke:#000;stroke-width:3}svg .node.dim{opacity:.18}
svg .node text{font-size:11px;pointer-events:none}
svg .axis{stroke:#444}svg .grid{stroke:#eee}svg .tick{font-size:10px;fill:#555}svg .label{font-size:11px;fill:#333}
.legend span{margin-right:14px}.swatch{display:inline-block;width:11px;height:11px;border-radius:50%;
 margin-right:4px;vertical-align:-1px;border:1px solid #0003}
.details{flex:1;min-width:420px}.detail{border:1px solid var(--line);border-radius:6px;padding:4px 14px}
.kv td:first-child{font-weight:600;white-space:nowrap}
.msg{border-left:4px solid var(--line);padding:2px 10px;margin:8px 0}
.msg.system{border-color:#9aa5b1}.msg.user{border-color:#2f6db5}.msg.assistant{border-color:#3a9d5d}
.msg.tool{border-color:#e08a1e}.role{font-weight:700;text-transform:uppercase;font-size:11px;color:var(--muted)}
.decision{font-size:16px;font-weight:700;padding:6px 10px;border-radius:6px;display:inline-block}
.decision.yes{background:#dff3e4}.decision.no{background:#fbe0e0}
"""

# The page's only script: node selection in the DAG (click, or #node=ID in the address), and the
# search box that dims the nodes not matching and selects the first that does.
SCRIPT = """
(function(){
  function select(id){
    var panels=document.querySelectorAll('.detail');
    for(var i=0;i<panels.length;i++){panels[i].hidden=(panels[i].getAttribute('data-node')!==id);}
    var nodes=document.querySelectorAll('svg .node');
    for(var j=0;j<nodes.length;j++){
      nodes[j].classList.toggle('selected',nodes[j].getAttribute('data-node')===id);}
    document.body.setAttribute('data-selected',id);
  }
  var nodes=document.querySelectorAll('svg .node');
  for(var k=0;k<nodes.length;k++){
    nodes[k].addEventListener('click',function(ev){
      var id=ev.currentTarget.getAttribute('data-node');select(id);
      if(history.replaceState){history.replaceState(null,'','#node='+id);}
    });
  }
  var box=document.getElementById('node-search');
  if(box){box.addEventListener('input',function(){
    var q=box.value.trim().toLowerCase(),hits=0,first=null;
    for(var i=0;i<nodes.length;i++){
      var hit=!q||(nodes[i].getAttribute('data-text')||'').indexOf(q)>=0;
      nodes[i].classList.toggle('dim',!hit);
      if(hit&&q){hits++;if(first===null){first=nodes[i].getAttribute('data-node');}}}
    var count=document.getElementById('node-search-count');
    if(count){count.textContent=q?(' '+hits+' matching node(s)'):'';}
    if(first!==null){select(first);}
  });}
  var m=/^#node=([A-Za-z0-9_-]+)$/.exec(location.hash);
  if(m){var el=document.querySelector('svg .node[data-node="'+m[1]+'"]');
    if(el){el.dispatchEvent(new MouseEvent('click',{bubbles:true}));}}
})();
"""


def _script_hash(script: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()


def page(title: str, body: Sequence[Any], *, simulated: str | None, live: str | None = None,
         subtitle: str = "", nav: Sequence[tuple[str, str]] = (), script: bool = True) -> str:
    """A whole document. `simulated`: the sentence saying which models were simulated (None: none were)."""
    csp = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
           f"script-src '{_script_hash(SCRIPT)}'; base-uri 'none'; form-action 'none'")
    banners = []
    if simulated:
        banners.append(tag("div", tag("strong", "Simulated models. "), simulated, class_="banner sim", id="simulated"))
    if live:
        banners.append(tag("div", tag("strong", "Run in progress. "), live, class_="banner live", id="live"))
    header = tag("header", tag("h1", title), tag("div", subtitle, class_="muted"), *banners,
                 tag("nav", *(tag("a", label, href=f"#{sid}") for sid, label in nav)))
    doc = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f'<meta http-equiv="Content-Security-Policy" content="{esc(csp)}">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>{esc(title)}</title><style>{CSS}</style></head><body>",
           header, *[esc(b) for b in body]]
    if script:
        doc.append(f"<script>{SCRIPT}</script>")
    doc.append("</body></html>")
    return "\n".join(doc)


def simulated_sentence(models: Iterable[str], served: Iterable[str] = ()) -> str | None:
    """`served`: real-looking model names whose replies a simulated model gave (`testhelix serve`)."""
    sims = sorted({str(m) for m in models if m and is_simulated(str(m))})
    fronted = sorted({str(m) for m in served if m} - set(sims))
    if not sims and not fronted:
        return None
    parts = []
    if sims:
        parts.append(f"{', '.join(sims)} {'is a simulated model' if len(sims) == 1 else 'are simulated models'}")
    if fronted:
        parts.append(f"{', '.join(fronted)} {'was' if len(fronted) == 1 else 'were'} answered by a simulated model "
                     "served behind the provider's protocol (testhelix serve)")
    return (f"{'; '.join(parts)}: deterministic test doubles at the provider boundary, not real models. Every "
            "number on this page that involves them measures the simulation and the harness, never a real "
            "model's ability.")
