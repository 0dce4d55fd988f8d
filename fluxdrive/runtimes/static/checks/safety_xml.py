"""XML parsers told to resolve external entities (XXE, CWE-611).

Python's parsers are safe by default: ``xml.sax`` leaves external general
entities off, lxml does not load DTDs or use the network. The danger is code
that switches it on - ``parser.setFeature(feature_external_ges, True)``,
``lxml.etree.XMLParser(resolve_entities=True, no_network=False)`` - and then
parses a document. When the document comes from the request, a reader gets
``<!ENTITY x SYSTEM "file:///etc/passwd">`` expanded into the response: P1.
With data of unknown origin the parser is still a loaded gun: P2.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks._common import example, first_arg, is_literal, name_tail, walk_function
from fluxdrive.runtimes.static.checks._flows import tainted_at
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, python_check
from fluxdrive.runtimes.static.checks.engine.syntax import call_name, keyword

EXTERNAL_FEATURES = ("feature_external_ges", "feature_external_pes")
PARSE_CALLS = {"parse", "parseString", "fromstring", "XML", "iterparse", "feed"}
LXML_UNSAFE = (("resolve_entities", True), ("load_dtd", True), ("no_network", False), ("huge_tree", True))


def _unsafe_parsers(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """Names bound to parsers this function configured to resolve external entities -> how."""
    unsafe: dict[str, str] = {}
    for node in walk_function(function):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and len(node.targets) == 1:
            target = node.targets[0]
            flags = [f"{k}={v}" for k, v in LXML_UNSAFE if is_literal(keyword(node.value, k), v)]
            if isinstance(target, ast.Name) and name_tail(call_name(node.value)) == "XMLParser" and flags:
                unsafe[target.id] = f"XMLParser({', '.join(flags)})"
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "setFeature"):
            continue
        receiver, args = node.func.value, node.args
        feature = call_name(args[0]).rsplit(".", 1)[-1] if args else ""
        if (
            isinstance(receiver, ast.Name)
            and len(args) == 2
            and is_literal(args[1], True)
            and feature in EXTERNAL_FEATURES
        ):
            unsafe[receiver.id] = f"setFeature({feature}, True)"
    return unsafe


def _parser_used(node: ast.Call, unsafe: dict[str, str]) -> str | None:
    """The unsafe parser a parse call uses: as an argument, the ``parser=`` keyword or the receiver."""
    candidates = [*node.args[1:], keyword(node, "parser")]
    if isinstance(node.func, ast.Attribute):
        candidates.append(node.func.value)
    return next((c.id for c in candidates if isinstance(c, ast.Name) and c.id in unsafe), None)


@python_check(
    "py-xxe",
    tag="security",
    severity="P2",
    summary="an XML parser is configured to resolve external entities (XXE); P1 when it parses request data",
    match=[
        example("""
            import xml.dom.minidom
            import xml.sax
            import xml.sax.handler
            from flask import request
            def upload():
                parser = xml.sax.make_parser()
                parser.setFeature(xml.sax.handler.feature_external_ges, True)
                return xml.dom.minidom.parseString(request.data, parser).toxml()
        """),
        example("""
            from lxml import etree
            def load(path):
                parser = etree.XMLParser(resolve_entities=True, no_network=False)
                return etree.parse(path, parser)
        """),
    ],
    no_match=[
        example("""
            import xml.dom.minidom
            import xml.sax
            from flask import request
            def upload():
                parser = xml.sax.make_parser()
                return xml.dom.minidom.parseString(request.data, parser).toxml()
        """),
        example("""
            from lxml import etree
            def load(path):
                return etree.parse(path, etree.XMLParser(resolve_entities=False))
        """),
    ],
    nodes=(ast.Call,),
)
def xxe(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    function = module.enclosing_function(node)
    if function is None or name_tail(call_name(node)) not in PARSE_CALLS:
        return
    unsafe = module.memo(("xxe parsers", function), lambda: _unsafe_parsers(function))
    parser = _parser_used(node, unsafe) if unsafe else None
    if parser is None:
        return
    data = first_arg(node, "source", "string", "text", "data")
    source = tainted_at(module, node, data) if data is not None and data is not node.func else None
    yield CheckHit(
        line=node.lineno,
        title=(
            f"{call_name(node)}() parses {f'data from {source}' if source else 'a document'} with a parser that "
            f"resolves external entities ({unsafe[parser]}) {module.where(node)}"
        ),
        why="A document that declares <!ENTITY x SYSTEM 'file:///etc/passwd'> gets the file's text (or any URL "
        "the server can reach) expanded into the parsed result.",
        fix="Leave external entities off (the default), or parse untrusted XML with defusedxml.",
        severity="P1" if source else None,
    )
