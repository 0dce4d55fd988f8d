"""The inline style sheet and script of ``summary.html`` (constants: no text from a review ever goes in here).

The script only shows the filter controls (hidden without JavaScript, so the
page without a script is the whole report, every finding visible) and hides
or shows findings by severity and agent. The page's Content-Security-Policy
allows exactly this script, by its hash, and no request of any kind.
"""

from __future__ import annotations

import base64
import hashlib

SEVERITY_NAMES = {"P0": "critical", "P1": "high", "P2": "medium", "P3": "low"}

STYLE = """
:root {
  --ink: #1d2330; --muted: #5b6474; --faint: #8a93a3; --line: #e3e7ee; --paper: #ffffff; --page: #f4f6fa;
  --p0: #c81e1e; --p1: #e8590c; --p2: #c99400; --p3: #2f6fde;
  --p0-bg: #fdecec; --p1-bg: #fff0e6; --p2-bg: #fff8e0; --p3-bg: #eaf1ff;
  --safe: #1f8a4c; --code: #f6f8fb;
}
* { box-sizing: border-box; }
html { background: var(--page); }
body { margin: 0; color: var(--ink); font: 15px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans",
  "Helvetica Neue", Arial, sans-serif; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace;
  font-size: 13px; }
main { max-width: 1160px; margin: 0 auto; padding: 28px 32px 48px; }
header.top { display: flex; justify-content: space-between; align-items: baseline; gap: 16px; flex-wrap: wrap; }
.brand { font-size: 13px; letter-spacing: .08em; text-transform: uppercase; color: var(--muted); font-weight: 600; }
h1 { font-size: 26px; margin: 2px 0 0; word-break: break-word; }
h2 { font-size: 19px; margin: 0 0 14px; }
h3 { font-size: 16px; margin: 0; }
.meta { color: var(--muted); font-size: 13px; }
section.card { background: var(--paper); border: 1px solid var(--line); border-radius: 10px; padding: 20px 24px;
  margin-top: 20px; box-shadow: 0 1px 2px rgba(16, 24, 40, .04); }
.verdict { display: flex; align-items: center; gap: 28px; flex-wrap: wrap; border-left: 8px solid var(--vc); }
.verdict .word { font-size: 40px; font-weight: 800; letter-spacing: .02em; color: var(--vc); line-height: 1.1; }
.verdict .sub { color: var(--muted); margin-top: 4px; }
.v-risky { --vc: var(--p0); } .v-needs-changes { --vc: var(--p1); } .v-safe { --vc: var(--safe); }
.v-error { --vc: #6b3fa0; } .v-incomplete { --vc: var(--p0); }
.counts { display: flex; gap: 10px; flex-wrap: wrap; margin-left: auto; }
.count { min-width: 86px; text-align: center; border-radius: 8px; padding: 8px 12px; background: var(--page); }
.count b { display: block; font-size: 26px; line-height: 1.1; }
.count span { font-size: 12px; color: var(--muted); text-transform: uppercase; letter-spacing: .05em; }
.count.zero b { color: var(--faint); }
.sev-P0 { --sc: var(--p0); --sb: var(--p0-bg); } .sev-P1 { --sc: var(--p1); --sb: var(--p1-bg); }
.sev-P2 { --sc: var(--p2); --sb: var(--p2-bg); } .sev-P3 { --sc: var(--p3); --sb: var(--p3-bg); }
.count.sev-P0 b, .count.sev-P1 b, .count.sev-P2 b, .count.sev-P3 b { color: var(--sc); }
.count.zero.sev-P0 b, .count.zero.sev-P1 b, .count.zero.sev-P2 b, .count.zero.sev-P3 b { color: var(--faint); }
.callout { margin: 14px 0 0; padding: 10px 14px; border-radius: 8px; background: #fff7e6; border: 1px solid #f5d89a;
  font-size: 14px; }
.callout.bad { background: #fdecec; border-color: #f3b4b4; }
.callout ul { margin: 4px 0 0; padding-left: 20px; }
.grid { display: grid; grid-template-columns: 1.15fr 1fr; gap: 20px; align-items: start; }
.grid > section.card { margin-top: 20px; }
@media (max-width: 900px) { .grid { grid-template-columns: 1fr; } }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
th { text-align: left; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted);
  font-weight: 600; border-bottom: 1px solid var(--line); padding: 6px 8px; }
td { border-bottom: 1px solid var(--line); padding: 7px 8px; vertical-align: top; }
tr:last-child td { border-bottom: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num.zero { color: #c3c8d1; }
.status { display: inline-flex; align-items: center; gap: 6px; }
.dot { width: 9px; height: 9px; border-radius: 50%; display: inline-block; background: var(--safe); }
.dot.malformed, .dot.partial { background: var(--p2); } .dot.error, .dot.missing, .dot.failed { background: var(--p0); }
.nowrap { white-space: nowrap; }
.small { font-size: 12px; color: var(--muted); }
.heat td.file { overflow-wrap: normal; word-break: normal; }
.bar { display: flex; height: 14px; border-radius: 4px; overflow: hidden; background: var(--page); min-width: 40px; }
.bar i { display: block; height: 100%; background: var(--sc); }
.chart svg { width: 100%; height: auto; display: block; font-family: inherit; }
.chart .grid { stroke: #e3e7ee; stroke-width: 1; } .chart .tick { font-size: 12px; fill: var(--muted); }
.chart .agent { font-size: 13px; fill: var(--ink); } .chart .lane { fill: #f7f9fc; }
.chart .mk { fill: var(--sc); stroke: #fff; stroke-width: 1.5; }
.chart .mk.ring { fill: #fff; stroke: var(--sc); stroke-width: 2.5; }
.legend { display: flex; gap: 16px; flex-wrap: wrap; font-size: 13px; color: var(--muted); margin-top: 8px; }
.legend span::before { content: ""; display: inline-block; width: 10px; height: 10px; border-radius: 50%;
  margin-right: 6px; background: var(--sc); vertical-align: -1px; }
.legend span.hollow::before { background: transparent; border: 2px solid var(--muted); width: 6px; height: 6px; }
.filters { display: flex; gap: 10px 28px; flex-wrap: wrap; align-items: center; }
.filters[hidden] { display: none; }
.filters fieldset { border: 0; padding: 0; margin: 0; display: flex; gap: 6px 14px; flex-wrap: wrap;
  align-items: center; }
.filters legend { float: left; font-weight: 600; margin-right: 6px; font-size: 13px; color: var(--muted); }
.filters label { font-size: 14px; cursor: pointer; white-space: nowrap; }
.filters button { font: inherit; font-size: 13px; border: 1px solid var(--line); background: var(--page);
  border-radius: 6px; padding: 3px 10px; cursor: pointer; }
#shown { margin-left: auto; font-size: 13px; color: var(--muted); }
.group { margin-top: 26px; }
.group-head { display: flex; align-items: center; gap: 10px; padding-bottom: 8px; border-bottom: 2px solid var(--sc);
  margin-bottom: 12px; }
.group-head h2 { margin: 0; color: var(--sc); }
.group-head .what { color: var(--muted); font-size: 14px; }
article.finding { background: var(--paper); border: 1px solid var(--line); border-left: 5px solid var(--sc);
  border-radius: 8px; padding: 14px 18px; margin-bottom: 12px; }
article.finding[hidden] { display: none; }
.f-head { display: flex; gap: 12px; align-items: flex-start; }
.badge { flex: none; font: 700 12px/1 ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace;
  color: #fff; background: var(--sc); border-radius: 5px; padding: 5px 7px; margin-top: 2px; }
.f-title { font-size: 16px; font-weight: 600; word-break: break-word; }
.f-meta { display: flex; flex-wrap: wrap; gap: 6px 18px; margin: 8px 0 0; font-size: 13px; color: var(--muted); }
.f-meta b { color: var(--ink); font-weight: 600; }
.f-meta code { color: var(--ink); background: var(--code); padding: 1px 5px; border-radius: 4px;
  word-break: break-all; }
.chip { display: inline-block; font-size: 12px; border-radius: 10px; padding: 1px 8px; background: #fff3cd;
  color: #7a5300; border: 1px solid #f0d890; }
.f-body p { margin: 10px 0 0; font-size: 14px; }
.f-body .label { font-weight: 600; }
pre.excerpt { margin: 12px 0 0; background: var(--code); border: 1px solid var(--line); border-radius: 6px;
  padding: 8px 0; overflow-x: auto; line-height: 1.5; }
pre.excerpt .row { display: block; padding: 0 12px 0 0; white-space: pre; }
pre.excerpt .ln { display: inline-block; width: 52px; padding-right: 12px; text-align: right; color: var(--faint);
  user-select: none; }
pre.excerpt .hit { background: var(--sb); box-shadow: inset 3px 0 0 var(--sc); }
pre.excerpt .hit .ln { color: var(--sc); font-weight: 700; }
.excerpt-name { font-size: 12px; color: var(--muted); margin-top: 10px; }
ul.plain { margin: 0; padding-left: 20px; }
ul.plain li { margin: 4px 0; }
details summary { cursor: pointer; color: var(--muted); font-size: 14px; margin-top: 10px; }
footer { margin-top: 28px; color: var(--faint); font-size: 12px; text-align: center; }
@media print { .filters { display: none !important; } article.finding[hidden] { display: block; }
  html { background: #fff; } section.card { box-shadow: none; } }
"""

# Findings carry data-sev (P0..P3) and data-agents (agent numbers a0 a1 ...); the checkboxes carry the same values.
SCRIPT = """
(function () {
  var panel = document.getElementById("filters");
  if (!panel) { return; }
  panel.hidden = false;
  var boxes = panel.querySelectorAll("input[type=checkbox]");
  var findings = document.querySelectorAll("article.finding");
  var groups = document.querySelectorAll("section.group");
  var shown = document.getElementById("shown");
  function checked(kind) {
    var out = {};
    boxes.forEach(function (box) { if (box.name === kind && box.checked) { out[box.value] = true; } });
    return out;
  }
  function apply() {
    var sev = checked("severity"), agent = checked("agent"), count = 0;
    findings.forEach(function (item) {
      var agents = (item.getAttribute("data-agents") || "").split(" ");
      var visible = !!sev[item.getAttribute("data-sev")] && agents.some(function (a) { return !!agent[a]; });
      item.hidden = !visible;
      if (visible) { count += 1; }
    });
    groups.forEach(function (group) {
      group.hidden = group.querySelectorAll("article.finding:not([hidden])").length === 0;
    });
    shown.textContent = "Showing " + count + " of " + findings.length + " findings";
  }
  boxes.forEach(function (box) { box.addEventListener("change", apply); });
  document.getElementById("show-all").addEventListener("click", function () {
    boxes.forEach(function (box) { box.checked = true; });
    apply();
  });
  apply();
})();
"""


def script_hash(script: str = SCRIPT) -> str:
    """The CSP source that allows exactly ``script`` (``'sha256-...'``)."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src 'unsafe-inline'; script-src {script_hash()}; base-uri 'none'; form-action 'none'"
)
