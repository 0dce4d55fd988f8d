"""JavaScript/TypeScript and Go data flow: every declared sink's examples, sources of each framework,
summaries across files, a project's own declarations, and a real review through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fluxdrive.runtimes.static.flows import FlowHit, PollutionHit, analyse
from fluxdrive.runtimes.static.flows.spec import FlowSpecError, parse, project_spec, shipped

FAMILIES = {"javascript": ("javascript", "app.js"), "go": ("go", "main.go")}


def _examples() -> list[tuple[str, str, str, str]]:
    return [
        (family, name, kind, code)
        for family in FAMILIES
        for name, sink in shipped(family).raw["sinks"].items()
        for kind in ("match", "no_match")
        for code in sink["examples"][kind]
    ]


def _hits(code: str, family: str = "javascript", prelude: bool = True) -> list[FlowHit | PollutionHit]:
    language, name = FAMILIES[family]
    text = (shipped(family).raw["examples_prelude"] if prelude else "") + code + "\n"
    return list(analyse([(name, language, text)]).hits)


@pytest.mark.parametrize(("family", "sink", "kind", "code"), _examples())
def test_every_sink_class_reports_its_match_and_not_its_no_match(family: str, sink: str, kind: str, code: str) -> None:
    found = [h for h in _hits(code, family) if isinstance(h, FlowHit) and h.sink.name == sink]
    if kind == "match":
        assert found, f"{family} {sink}: nothing reported for {code}"
        assert found[0].severity in ("P0", "P1"), found[0]
        assert found[0].origin.kind == "outside"
    else:
        assert found == [], f"{family} {sink}: reported {[h.title for h in found]} for {code}"


def test_every_shipped_sink_class_has_examples_and_a_cwe() -> None:
    for family in FAMILIES:
        spec = shipped(family)
        for name, sink in spec.raw["sinks"].items():
            assert sink["examples"]["match"] and sink["examples"]["no_match"], (family, name)
            assert spec.sinks[name].cwe.startswith("CWE-"), (family, name)


def test_prototype_pollution_examples() -> None:
    examples = shipped("javascript").raw["checks"]["prototype-pollution"]["examples"]
    for code in examples["match"]:
        found = [h for h in _hits(code, prelude=False) if isinstance(h, PollutionHit)]
        assert found and found[0].severity == "P1" and "merge()" in found[0].title
    for code in examples["no_match"]:
        assert not [h for h in _hits(code, prelude=False) if isinstance(h, PollutionHit)]


def test_prototype_pollution_shapes() -> None:
    code = """
    function setPath(obj, path, value) {          // walks obj = obj[key]: pollutes
      const keys = path.split(".");
      let cur = obj;
      for (let i = 0; i < keys.length - 1; i++) { const k = keys[i]; if (!cur[k]) cur[k] = {}; cur = cur[k]; }
      cur[keys[keys.length - 1]] = value;
    }
    function deep(a, b) { Object.keys(b).forEach(k => { if (typeof b[k] === "object") deep(a[k], b[k]); else a[k] = b[k]; }); }
    function shallow(a, b) { for (const k in b) a[k] = b[k]; }    // one object's own prototype at most
    function guarded(a, b) { for (const k in b) { if (isSafeKey(k)) { a[k] = guarded(a[k] || {}, b[k]); } } }
    module.exports = { setPath };
    """
    found = {h.function: h.severity for h in _hits(code, prelude=False) if isinstance(h, PollutionHit)}
    assert found == {"setPath": "P1", "deep": "P2"}


def _review(project: Path, tmp_path: Path) -> list[dict[str, object]]:
    """The findings of ``fluxdrive review PROJECT --yes --agents fd-safety``, run as a user runs it."""
    out = tmp_path / "out"
    subprocess.run(
        [sys.executable, "-m", "fluxdrive", "review", str(project), "--yes", "--agents", "fd-safety",
         "--output-dir", str(out)],
        check=False, capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    findings: list[dict[str, object]] = json.loads((out / "findings.json").read_text(encoding="utf-8"))["findings"]
    return findings


def _titles(code: str, family: str = "javascript") -> dict[int, tuple[str, str]]:
    """line -> (severity, title) of the flow hits, the prelude's lines not counted."""
    offset = shipped(family).raw["examples_prelude"].count("\n")
    return {h.line - offset: (h.severity, h.title) for h in _hits(code, family) if isinstance(h, FlowHit)}


def test_origin_sets_severity_and_constants_are_not_findings() -> None:
    code = """\
app.get("/a", (req, res) => { child_process.exec("ls " + req.query.dir); });
module.exports.run = function (cmd) { child_process.exec(cmd); };
function helper(cmd) { child_process.exec(cmd); }
child_process.exec(settings.command);
child_process.exec("ls -la");
const DIR = "/tmp"; child_process.exec("ls " + DIR);
child_process.exec("ls " + parseInt(process.argv[2]));
"""
    found = _titles(code)
    assert found[1][0] == "P0" and "req.query.dir" in found[1][1]
    assert found[2][0] == "P1" and "parameter cmd" in found[2][1]
    assert found[3][0] == "P2"  # a private helper: its callers decide
    assert found[4][0] == "P2" and "settings" in found[4][1]
    assert {5, 6, 7}.isdisjoint(found)


def test_framework_sources() -> None:
    code = """\
router.get("/k", async (ctx) => { child_process.exec(ctx.query.cmd); ctx.body = ctx.request.body; });
fastify.route({ method: "GET", url: "/f", handler: async (request, reply) => { fs.readFile(request.params.file, () => {}); } });
export default function handler(req, res) { res.redirect(req.query.to); }
export async function GET(request) { const body = await request.json(); eval(body.code); }
const resolvers = { Query: { user: (parent, args) => db.query("SELECT * FROM u WHERE id = " + args.id) } };
document.body.innerHTML = decodeURIComponent(location.hash);
"""
    found = _titles(code)
    assert {line for line, (severity, _) in found.items() if severity in ("P0", "P1")} == {1, 2, 3, 4, 5, 6}


def test_nestjs_decorated_parameters_are_request_data() -> None:
    code = """
@Controller("files")
export class FilesController {
  @Get(":name")
  read(@Param("name") name: string, @Query() query: Record<string, string>) {
    return fs.readFileSync(path.join("/srv", name));
  }
  private internal(name: string) { return fs.readFileSync(name); }
}
"""
    hits = analyse([("files.controller.ts", "typescript", 'import * as fs from "fs";\n' + code)]).hits
    assert [(h.severity, h.rule) for h in hits if isinstance(h, FlowHit)] == [("P0", "path-traversal")]


def test_checks_in_an_if_and_sanitizers_clear_their_sink() -> None:
    code = """\
app.get("/a", (req, res) => { if (!req.query.next.startsWith("/")) return; res.redirect(req.query.next); });
app.get("/b", (req, res) => { const p = path.resolve(base, req.query.f); if (!p.startsWith(base)) throw new Error(); fs.readFile(p, () => {}); });
app.get("/c", (req, res) => { fs.readFile(path.basename(req.query.f), () => {}); });
app.get("/d", (req, res) => { if (ALLOWED.includes(req.query.cmd)) child_process.exec(req.query.cmd); });
app.get("/e", (req, res) => { child_process.exec("kill " + Number(req.query.pid)); });
app.get("/f", (req, res) => { if (/^[a-z]+$/.test(req.query.name)) child_process.exec("id " + req.query.name); });
"""
    assert _titles(code) == {}


def test_a_helper_in_another_file_is_reported_at_its_sink_when_request_data_reaches_it(tmp_path: Path) -> None:
    files = [
        ("lib/run.js", "javascript", 'const cp = require("child_process");\nexports.run = (c) => cp.execSync(c);\n'),
        (
            "routes.js",
            "javascript",
            'const { run } = require("./lib/run");\napp.post("/x", (req, res) => run(req.body.c));\n',
        ),
        (
            "util/shell.go",
            "go",
            'package util\nimport "os/exec"\nfunc Shell(c string) { exec.Command("sh", "-c", c).Run() }\n',
        ),
        (
            "cmd/server.go",
            "go",
            'package main\nimport (\n"net/http"\n"example.com/app/util"\n)\n'
            'func h(w http.ResponseWriter, r *http.Request) {\nutil.Shell(r.FormValue("c"))\n}\n',
        ),
    ]
    hits = [h for h in analyse(files).hits if isinstance(h, FlowHit)]
    at_sink = {(h.path, h.line): h for h in hits if h.severity == "P0"}  # where the fix goes, naming the call
    assert set(at_sink) == {("lib/run.js", 2), ("util/shell.go", 3)}
    assert "req.body.c" in at_sink[("lib/run.js", 2)].title
    assert "through run() called at routes.js:2" in at_sink[("lib/run.js", 2)].title
    assert "through Shell() called at cmd/server.go:7" in at_sink[("util/shell.go", 3)].title


def test_go_sources_binders_archives_and_guards() -> None:
    code = """
import "archive/zip"
import "strings"
func bind(c *gin.Context) {
	var in struct{ Host string }
	c.ShouldBindJSON(&in)
	exec.Command("ping", "-c", "1", in.Host).Run()
}
func Unzip(src, dst string) {
	zr, _ := zip.OpenReader(src)
	for _, f := range zr.File {
		p := filepath.Join(dst, f.Name)
		os.Create(p)
	}
	for _, f := range zr.File {
		p := filepath.Join(dst, f.Name)
		if !strings.HasPrefix(p, filepath.Clean(dst)+string(os.PathSeparator)) {
			continue
		}
		os.Create(p)
	}
}
"""
    prelude = shipped("go").raw["examples_prelude"]
    text = prelude.replace('"path/filepath"', '"path/filepath"\n\t"github.com/gin-gonic/gin"') + code
    hits = {(h.line, h.rule, h.severity) for h in analyse([("main.go", "go", text)]).hits}
    offset = text[: text.index(code)].count("\n")
    lines = {(line - offset, rule, severity) for line, rule, severity in hits}
    assert lines == {(7, "argument-injection", "P1"), (12, "path-traversal", "P0")}


def test_a_project_declares_its_own_sources_and_sinks() -> None:
    declared = (
        b"sources:\n  globals:\n    bus.payload: a message from the bus\n"
        b"sinks:\n  command:\n    calls:\n      runner.shell: [0]\n"
    )
    code = 'const runner = require("runner");\nfunction onMessage() { runner.shell(bus.payload.cmd); }\n'
    without = analyse([("worker.js", "javascript", code)])
    with_project = analyse([("worker.js", "javascript", code)], {"javascript": (declared, None)})
    assert not [h for h in without.hits if h.severity in ("P0", "P1")]
    assert [(h.line, h.severity) for h in with_project.hits] == [(2, "P0")]
    spec, problem = project_spec("javascript", (b"sinks: [not, a, table]\n", None))
    assert spec is shipped("javascript") and problem and "taint-javascript.yaml ignored" in problem
    assert (
        project_spec("go", (None, "outside the project"))[1] == ".fluxdrive/taint-go.yaml ignored: outside the project"
    )


def test_a_review_reads_the_declarations_of_the_project(tmp_path: Path) -> None:
    project = tmp_path / "app"
    (project / ".fluxdrive").mkdir(parents=True)
    (project / ".fluxdrive" / "taint-javascript.yaml").write_text(
        "sinks:\n  command:\n    calls:\n      runner.shell: [0]\n", encoding="utf-8"
    )
    (project / "server.js").write_text(
        'const runner = require("runner");\nconst app = require("express")();\n'
        'app.get("/x", (req, res) => runner.shell(req.query.cmd));\n',
        encoding="utf-8",
    )
    findings = _review(project, tmp_path)
    assert [(f["location"], f["severity"]) for f in findings if "runner.shell" in f["title"]] == [("server.js:3", "P0")]


def test_bad_declarations_say_what_is_wrong() -> None:
    with pytest.raises(FlowSpecError, match="severity"):
        parse({"sinks": {"x": {"severity": {"outside": "P9"}}}}, "javascript", "t.yaml")
    with pytest.raises(FlowSpecError, match="backtrack"):  # it would run on text from the reviewed code
        parse({"sinks": {"x": {"safe_prefix": "^(a+)+$"}}}, "javascript", "t.yaml")
    with pytest.raises(FlowSpecError, match="argument mode"):
        parse({"sinks": {"x": {"calls": {"f": ["loud 0"]}}}}, "javascript", "t.yaml")


def test_a_review_reports_flow_findings_with_their_cwe(tmp_path: Path) -> None:
    project = tmp_path / "app"
    project.mkdir()
    (project / "server.js").write_text(
        'const { exec } = require("child_process");\nconst express = require("express");\n'
        'const app = express();\napp.get("/ping", (req, res) => { exec("ping -c 1 " + req.query.host); });\n',
        encoding="utf-8",
    )
    findings = _review(project, tmp_path)
    flow = [f for f in findings if "host" in f["title"]]
    assert flow and flow[0]["severity"] == "P0" and flow[0]["location"] == "server.js:4"
    assert flow[0].get("cwe") in ("CWE-78", ["CWE-78"]) or "CWE-78" in json.dumps(flow[0])


def test_yaml_tables_are_valid_documents() -> None:
    for family in FAMILIES:
        text = (Path(__file__).parents[2] / "fluxdrive" / "data" / "taint" / f"{family}.yaml").read_text()
        assert yaml.safe_load(text)["schema"] == 1


def test_javascript_archive_entries_are_outside_names() -> None:
    code = """\
const AdmZip = require("adm-zip");
module.exports = function extract(file, dest) {
  new AdmZip(file).getEntries().forEach((entry) => {
    fs.writeFileSync(path.join(dest, entry.entryName), entry.getData());
  });
};
function checked(file, dest) {
  for (const entry of new AdmZip(file).getEntries()) {
    const target = path.resolve(dest, entry.entryName);
    if (!target.startsWith(path.resolve(dest) + path.sep)) continue;
    fs.writeFileSync(target, entry.getData());
  }
}
"""
    found = _titles(code)
    assert list(found) == [4] and found[4][0] == "P0" and "entry.entryName" in found[4][1]


def test_every_flow_rule_has_its_cwe_in_the_one_table() -> None:
    from fluxdrive.runtimes.static.cwe import cwe_of

    for family, prefix in (("javascript", "js"), ("go", "go")):
        for sink in shipped(family).sinks.values():
            assert sink.cwe in cwe_of(f"flow:{prefix}-{sink.rule}"), (family, sink.name)
    assert cwe_of("flow:js-prototype-pollution") == ("CWE-1321",)


def test_request_data_rendered_into_a_view_that_prints_it_unescaped() -> None:
    views = {
        "views/search.ejs": "<h1>Results for <%- output.term %></h1>\n<p><%= output.term %></p>\n<%- include('footer') %>\n",
        "views/profile.hbs": "<div>{{{bio}}}</div>\n<div>{{name}}</div>\n",
        "views/safe.ejs": "<p><%= term %></p>\n",
    }
    handler = """\
app.get("/search", (req, res) => res.render("search", { output: { term: req.query.q, count: 3 } }));
app.get("/profile", (req, res) => res.render("profile", { bio: req.body.bio, name: req.body.name }));
app.get("/safe", (req, res) => res.render("safe", { term: req.query.q }));
app.get("/stored", async (req, res) => res.render("profile", { bio: (await User.findById(req.params.id)).bio }));
"""
    found = analyse([("app.js", "javascript", handler)], None, views.get).hits
    places = {(h.path, h.line, h.severity) for h in found}
    assert places == {("views/search.ejs", 1, "P1"), ("views/profile.hbs", 1, "P1")}
    search = next(h for h in found if h.path == "views/search.ejs")
    assert "req.query.q" in search.title and "app.js:1" in search.title


def test_a_review_reads_views_inside_the_project_only(tmp_path: Path) -> None:
    project = tmp_path / "app"
    (project / "views").mkdir(parents=True)
    (project / "views" / "page.ejs").write_text("<p><%- term %></p>\n", encoding="utf-8")
    outside = tmp_path / "elsewhere.ejs"
    outside.write_text("<p><%- term %></p>\n", encoding="utf-8")
    (project / "views" / "linked.ejs").symlink_to(outside)
    (project / "server.js").write_text(
        'const express = require("express");\nconst app = express();\n'
        'app.get("/a", (req, res) => res.render("page", { term: req.query.t }));\n'
        'app.get("/b", (req, res) => res.render("linked", { term: req.query.t }));\n',
        encoding="utf-8",
    )
    findings = _review(project, tmp_path)
    views = [f for f in findings if "unescaped" in f["title"]]
    assert [f["location"] for f in views] == ["views/page.ejs:1"]
    assert views[0]["severity"] == "P1"


def test_closures_run_in_place_and_unmarshal_fills_from_the_body() -> None:
    code = """
type pushEvent struct{ Ref string }
func Handler() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var event pushEvent
		json.Unmarshal(body, &event)
		script := "git clone --branch " + event.Ref
		go func() {
			exec.Command("sh", "-c", script).Run()
		}()
	}
}
"""
    prelude = shipped("go").raw["examples_prelude"].replace('"fmt"', '"encoding/json"\n\t"fmt"\n\t"io"')
    hits = [h for h in analyse([("push.go", "go", prelude + code)]).hits if isinstance(h, FlowHit)]
    assert [(h.rule, h.severity) for h in hits] == [("command-injection", "P0")]
    assert "r.Body" in hits[0].title


def test_where_text_is_judged_where_the_query_object_is_written() -> None:
    dao = """\
function OrdersDAO(db) {
  const orders = db.collection("orders");
  this.findByCustomerAndMinimum = (customer, minimum, callback) => {
    const criteria = () => ({ $where: `this.customer == '${customer}' && this.total > ${minimum}` });
    orders.find(criteria()).toArray(callback);
  };
}
module.exports.OrdersDAO = OrdersDAO;
"""
    routes = """\
const { OrdersDAO } = require("./dao");
function OrdersHandler(db) {
  const dao = new OrdersDAO(db);
  this.list = (req, res) => dao.findByCustomerAndMinimum(req.session.user, req.query.min, (e, docs) => res.json(docs));
}
module.exports = OrdersHandler;
"""
    hits = [h for h in analyse([("dao.js", "javascript", dao), ("routes.js", "javascript", routes)]).hits]
    assert [(h.path, h.line, h.severity, h.rule) for h in hits] == [("dao.js", 4, "P0", "code-injection")]
    assert "req.query.min" in hits[0].title


def test_prototype_pollution_through_a_path_or_its_split() -> None:
    code = """\
function set(target, path, value) {
  const keys = Array.isArray(path) ? path : splitPath(path);
  for (let i = 0; i < keys.length; i++) {
    const prop = keys[i];
    if (i === keys.length - 1) { target[prop] = value; break; }
    if (typeof target[prop] !== "object") target[prop] = {};
    target = target[prop];
  }
}
module.exports = set;
"""
    found = [h for h in _hits(code, prelude=False) if isinstance(h, PollutionHit)]
    assert [(h.line, h.severity) for h in found] == [(5, "P1")]


def test_a_function_nested_too_deep_is_listed_and_the_rest_reviewed() -> None:
    from fluxdrive.runtimes.static.flows.project import Project
    from fluxdrive.runtimes.static.flows.syntax import read_module

    deep = "function deep() { return " + "f(" * 150 + "x" + ")" * 150 + "; }\n"
    fine = 'app.get("/a", (req, res) => { eval(req.query.code); });\n'
    modules = [read_module(deep, "deep.js", "javascript"), read_module(fine, "fine.js", "javascript")]
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(300)  # the engine needs more frames per level than the reader
    try:
        project = Project(modules, shipped("javascript"))
        hits = project.analyse()
    finally:
        sys.setrecursionlimit(limit)
    assert project.notes == {"data flow skipped deep in deep.js: nested too deep"}
    assert [(h.path, h.rule) for h in hits] == [("fine.js", "code-injection")]
