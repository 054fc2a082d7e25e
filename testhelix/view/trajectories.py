"""Rendered agent trajectories: one sibling page per (run label, task) with every session of it.

A report links to these pages instead of embedding them (a split's trajectories are megabytes).
Each page is self-contained like the report. Everything in a trajectory is model output or tool
output, so everything is escaped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from testhelix.view.html import Markup, join, page, pre, pretty_json, simulated_sentence, table, tag


def safe_name(label: str) -> str:
    """The folder name the runner uses for a run label (work/<safe label>/<task>)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", label)


def trajectory_files(run_dir: Path, label: str, task_id: str) -> list[Path]:
    folder = Path(run_dir) / "work" / safe_name(label) / task_id
    if not folder.is_dir():
        return []
    return sorted(folder.glob("pair*/trajectory-*.json"), key=lambda p: (p.parent.name, p.name))


class TrajectoryPages:
    """Writes the pages next to the report and hands out relative links."""

    def __init__(self, out: Path, run_dir: Path):
        self.out = Path(out)
        self.run_dir = Path(run_dir)
        self.folder_name = self.out.stem + "_trajectories"
        self.written = 0

    def link(self, label: str, task_id: str) -> str | None:
        files = trajectory_files(self.run_dir, label, task_id)
        if not files:
            return None
        rel = f"{self.folder_name}/{safe_name(label)}/{safe_name(task_id)}.html"
        target = self.out.parent / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_task_page(label, task_id, files, back=f"../../{self.out.name}"), encoding="utf-8")
        self.written += 1
        return rel


def render_task_page(label: str, task_id: str, files: list[Path], back: str) -> str:
    body, models, served = [tag("p", tag("a", "← back to the report", href=back))], [], []
    for path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            body.append(tag("section", tag("h2", f"{path.parent.name}/{path.name}"),
                            tag("p", f"cannot read this trajectory: {err}", class_="muted")))
            continue
        meta = data.get("meta") or {}
        models.append(str(meta.get("model", "")))
        if any(isinstance(st, dict) and st.get("simulated") for st in data.get("steps") or ()):
            served.append(str(meta.get("model", "")))
        body.append(render_trajectory(f"{path.parent.name} · {path.stem.removeprefix('trajectory-')}", data))
    return page(f"Trajectories: {task_id} ({label})", body, simulated=simulated_sentence(models + [label.split("/")[0]], served),
                subtitle=f"{len(files)} session(s); tool calls and observations as recorded", script=False)


def render_trajectory(title: str, data: dict) -> Markup:
    meta = data.get("meta") or {}
    steps = data.get("steps") or []
    results = {m.get("tool_call_id"): m for m in data.get("messages", []) if m.get("role") == "tool"}
    shown = set()
    parts = [tag("h2", title),
             table(["model", "phase", "pair", "round", "exit", "steps", "input tokens", "output tokens"],
                   [[meta.get("model"), meta.get("phase"), meta.get("pair"), meta.get("round"), data.get("exit"),
                     len(steps), sum(int((s.get("usage") or {}).get("input_tokens") or 0) for s in steps),
                     sum(int((s.get("usage") or {}).get("output_tokens") or 0) for s in steps)]], class_="kv")]
    for msg in data.get("messages", []):
        role = str(msg.get("role", "?"))
        if role == "tool" and msg.get("tool_call_id") in shown:
            continue  # already shown under the call it answers
        inner = [tag("div", role, class_="role")]
        if msg.get("content") and role in ("system", "user"):
            # prompts are long and the same in every session: folded, one click away
            text = str(msg.get("content"))
            inner.append(tag("details", tag("summary", f"{text[:90]}… ({len(text):,} characters)"), pre(text)))
        elif msg.get("content"):
            inner.append(pre(msg.get("content")))
        for call in msg.get("tool_calls") or []:
            inner.append(_tool_call(call, results.get(call.get("id"))))
            shown.add(call.get("id"))
        parts.append(tag("div", *inner, class_=f"msg {role if role in ('system', 'user', 'assistant', 'tool') else ''}"))
    return tag("section", *parts, class_="trajectory")


def _tool_call(call: dict, result: dict | None) -> Markup:
    args = call.get("arguments")
    blocks = []
    if isinstance(args, dict):
        # long text arguments (file contents) read better as their own block than inside JSON
        long_items = {k: v for k, v in args.items() if isinstance(v, str) and "\n" in v}
        short = {k: v for k, v in args.items() if k not in long_items}
        blocks.append(pre(pretty_json(short)))
        blocks += [join([tag("div", f"{k}:", class_="muted"), pre(v)]) for k, v in long_items.items()]
    else:
        blocks.append(pre(args))
    observation = (tag("div", tag("div", "observation", class_="role"), pre((result or {}).get("content")), class_="msg tool")
                   if result else tag("p", "no observation recorded", class_="muted"))
    return tag("div", tag("div", f"tool call: {call.get('name')}", class_="role"), *blocks, observation, class_="call")

