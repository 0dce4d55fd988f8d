"""Go syntax trees (tree-sitter, through ast-grep) as the flow engine's values.

Go states what JavaScript leaves to conventions: parameter types name the
request (``r *http.Request``, ``c *gin.Context``), imports name packages by
path (``exec`` is ``os/exec``), and a capital letter exports. Three Go idioms
get their own reading: ``fmt.Sprintf`` is text built from its arguments
(``%d`` arguments are numbers, not text), ``a, err := f()`` gives every name
the call's value, and ``&x`` / ``*p`` / ``[]byte(x)`` are the value itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from fluxdrive.runtimes.static.flows import ir
from fluxdrive.runtimes.static.flows.javascript import line_of, named

Node = Any  # ast_grep_py.SgNode

LITERALS: dict[str, ir.ConstKind] = {
    "interpreted_string_literal": "string", "raw_string_literal": "string", "int_literal": "number",
    "float_literal": "number", "imaginary_literal": "number", "rune_literal": "number", "iota": "number",
    "true": "bool", "false": "bool", "nil": "null",
}  # fmt: skip
FORMAT_VERB = re.compile(r"%[-+# 0]*(\d+|\*)?(\.(\d+|\*))?[a-zA-Z%]")
NUMBER_VERBS = frozenset("dbcoOxXeEfFgGtUp")
COMPARISONS = frozenset({"==", "!=", "<", ">", "<=", ">=", "&&", "||"})
NUMERIC = frozenset({"-", "*", "/", "%", "|", "&", "^", "<<", ">>", "&^"})
EXITS = frozenset({"return_statement", "continue_statement", "break_statement", "goto_statement"})
VERSION = re.compile(r"^v\d+$")


def package_name(path: str) -> str:
    """The name a package is used by: the last path element, skipping ``/v2`` and ``.v3`` suffixes."""
    parts = [p for p in path.split("/") if p]
    if len(parts) > 1 and VERSION.match(parts[-1]):
        parts.pop()
    last = parts[-1] if parts else path
    last = re.sub(r"\.v\d+$", "", last)
    return last.removeprefix("go-").replace("-", "_")


def string_value(node: Node) -> str:
    text = str(node.text())
    return text[1:-1] if len(text) >= 2 and text[0] in '"`' else text


class GoReader:
    """Builds a :class:`Module` from one Go file's syntax tree."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.imports: dict[str, str] = {}
        self.functions: list[ir.Function] = []
        self._read = self._readers()
        self._statement_readers = self._statement_kinds()

    def module(self, root: Node) -> ir.Module:
        top: list[ir.Statement] = []
        for node in named(root):
            kind = node.kind()
            if kind == "import_declaration":
                self._imports(node)
            elif kind in ("function_declaration", "method_declaration"):
                self.functions.append(self._function(node))
            elif kind in ("var_declaration", "const_declaration"):
                top.extend(self._statement(node, False))
        return ir.Module(
            path=self.path,
            language="go",
            imports=dict(self.imports),
            functions=tuple(self.functions),
            top=ir.Function("<module>", (), tuple(top), 1, line_of(root), role="module"),
            exports=frozenset(f.name for f in self.functions if f.name[:1].isupper()),
        )

    def _imports(self, node: Node) -> None:
        specs = [s for s in node.find_all(kind="import_spec")]
        for spec in specs:
            path_node = spec.field("path")
            if path_node is None:
                continue
            path = string_value(path_node)
            alias = spec.field("name")
            local = alias.text() if alias is not None else package_name(path)
            if local in ("_", "."):
                continue
            self.imports[local] = path

    # --------------------------------------------------------------- functions
    def _function(self, node: Node) -> ir.Function:
        name_node = node.field("name")
        name = name_node.text() if name_node is not None else "<func>"
        owner = receiver_name = ""
        receiver = node.field("receiver")
        if receiver is not None:
            types = [t.text() for t in receiver.find_all(kind="type_identifier")]
            owner = types[0] if types else ""
            names = [t.text() for t in receiver.find_all(kind="identifier")]
            receiver_name = names[0] if names else ""
        function = self.function(node, name, owner=owner)
        exported = name[:1].isupper() and (not owner or owner[:1].isupper())
        return replace(function, exported=exported, role="method" if owner else "function", receiver=receiver_name)

    def function(self, node: Node, name: str, *, owner: str = "") -> ir.Function:
        params: list[ir.Param] = []
        variadic = False
        parameters = node.field("parameters")
        position = 0
        for declaration in named(parameters) if parameters is not None else []:
            type_node = declaration.field("type")
            type_text = type_node.text() if type_node is not None else ""
            variadic = variadic or declaration.kind() == "variadic_parameter_declaration"
            idents = [c for c in named(declaration) if c.kind() == "identifier"]
            for ident in idents or [None]:
                params.append(
                    ir.Param(ident.text() if ident is not None else f"<arg{position}>", position, (), type_text)
                )
                position += 1
        body_node = node.field("body")
        body = tuple(self._block(body_node, False)) if body_node is not None else ()
        return ir.Function(
            name,
            tuple(params),
            body,
            line_of(node),
            int(node.range().end.line) + 1,
            owner=owner,
            variadic=variadic,
        )

    # -------------------------------------------------------------- statements
    def _block(self, node: Node, nested: bool) -> Iterator[ir.Statement]:
        for child in named(node):
            if child.kind() == "statement_list":
                for statement in named(child):
                    yield from self._statement(statement, nested)
            else:
                yield from self._statement(child, nested)

    def _statement(self, node: Node, nested: bool) -> Iterator[ir.Statement]:
        """One statement, dispatched on its kind (kinds data flow does not need are skipped)."""
        read = self._statement_readers.get(node.kind())
        if read is not None:
            yield from read(node, nested)

    def _statement_kinds(self) -> dict[str, Callable[[Node, bool], Iterator[ir.Statement]]]:
        return {
            "short_var_declaration": self._assignment,
            "assignment_statement": self._assignment,
            "var_declaration": self._declaration,
            "const_declaration": self._declaration,
            "expression_statement": self._evaluate,
            "go_statement": self._evaluate,
            "defer_statement": self._evaluate,
            "send_statement": self._evaluate,
            "return_statement": self._return,
            "if_statement": self._if,
            "for_statement": lambda node, nested: self._for(node),
            "block": self._block,
            "statement_list": self._block,
            "expression_switch_statement": self._switch,
            "type_switch_statement": self._switch,
            "select_statement": self._switch,
            "labeled_statement": lambda node, nested: (
                s for c in named(node) if c.kind() != "label_name" for s in self._statement(c, nested)
            ),
        }

    def _declaration(self, node: Node, nested: bool) -> Iterator[ir.Statement]:
        for spec in named(node):
            if spec.kind() in ("var_spec", "const_spec", "var_spec_list"):
                yield from self._spec(spec, nested)

    def _evaluate(self, node: Node, nested: bool) -> Iterator[ir.Statement]:
        for expression in named(node):
            yield ir.Evaluate(self.expr(expression), line_of(node))

    def _return(self, node: Node, nested: bool) -> Iterator[ir.Statement]:
        line = line_of(node)
        values = [self.expr(v) for c in named(node) for v in (named(c) if c.kind() == "expression_list" else [c])]
        yield ir.Return(values[0] if len(values) == 1 else (ir.Other(tuple(values), line) if values else None), line)

    def _if(self, node: Node, nested: bool) -> Iterator[ir.Statement]:
        initializer = node.field("initializer")
        if initializer is not None:
            yield from self._statement(initializer, nested)
        condition, consequence = node.field("condition"), node.field("consequence")
        if condition is not None:
            until = int(consequence.range().end.line) + 1 if consequence is not None else 0
            yield ir.Guard(self.expr(condition), line_of(node), _exits(consequence), until)
        if consequence is not None:
            yield from self._block(consequence, True)
        alternative = node.field("alternative")
        if alternative is not None:
            yield from (self._statement if alternative.kind() == "if_statement" else self._block)(alternative, True)

    def _switch(self, node: Node, nested: bool) -> Iterator[ir.Statement]:
        line = line_of(node)
        for child in named(node):
            kind = child.kind()
            if kind in ("expression_case", "default_case", "type_case", "communication_case"):
                for inner in named(child):
                    if inner.kind() == "statement_list":
                        yield from self._block(inner, True)
                    elif inner.kind().endswith("statement"):
                        yield from self._statement(inner, True)
            elif kind == "short_var_declaration":
                yield from self._statement(child, nested)
            elif kind not in ("expression_list", "type_identifier") and not kind.endswith("type"):
                yield ir.Evaluate(self.expr(child), line)

    def _for(self, node: Node) -> Iterator[ir.Statement]:
        line = line_of(node)
        for child in named(node):
            if child.kind() == "range_clause":
                left, right = child.field("left"), child.field("right")
                if right is None:
                    continue
                names = [n.text() for n in named(left)] if left is not None else []
                key = names[0] if names and names[0] != "_" else None
                item = names[1] if len(names) > 1 and names[1] != "_" else None
                yield ir.Loop(key, item, self.expr(right), line, keys_of=False)
            elif child.kind() == "for_clause":
                for part in named(child):
                    if part.kind().endswith(("statement", "declaration")):
                        yield from self._statement(part, True)
            elif child.kind() == "block":
                yield from self._block(child, True)

    def _targets(self, node: Node | None) -> list[Node]:
        if node is None:
            return []
        return named(node) if node.kind() == "expression_list" else [node]

    def _assignment(self, node: Node, nested: bool) -> Iterator[ir.Statement]:
        line = line_of(node)
        left, right = self._targets(node.field("left")), self._targets(node.field("right"))
        operator = node.field("operator")
        add = operator is not None and operator.text() == "+="
        nested = nested and node.kind() != "short_var_declaration"  # x := ... in a block is a new x
        if len(left) == len(right):
            for target, value in zip(left, right, strict=True):
                if target.text() != "_":
                    yield ir.Assign(self.expr(target), self.expr(value), line, nested, add)
        elif len(right) == 1:  # a, err := f()
            names = tuple((t.text(), None) for t in left if t.kind() == "identifier" and t.text() != "_")
            yield ir.Unpack(names, self.expr(right[0]), line, nested)

    def _spec(self, spec: Node, nested: bool) -> Iterator[ir.Statement]:
        line = line_of(spec)
        names = [c.text() for c in named(spec) if c.kind() == "identifier"]
        value = spec.field("value")
        values = self._targets(value)
        if len(values) == len(names):
            for target, expression in zip(names, values, strict=True):
                yield ir.Assign(ir.Name(target, line), self.expr(expression), line, nested)
        elif len(values) == 1:
            yield ir.Unpack(tuple((n, None) for n in names), self.expr(values[0]), line, nested)

    # ------------------------------------------------------------- expressions
    def expr(self, node: Node) -> ir.Expr:
        """One expression node as an :data:`Expr` (dispatched on its kind; anything else keeps its parts)."""
        kind = node.kind()
        line = line_of(node)
        if kind in LITERALS:
            text = string_value(node) if LITERALS[kind] == "string" else node.text()
            return ir.Const(LITERALS[kind], text, line)
        if kind in ("identifier", "field_identifier", "package_identifier", "type_identifier"):
            return ir.Name(node.text(), line)
        read = self._read.get(kind)
        if read is not None:
            return read(node, line)
        return ir.Other(tuple(self.expr(c) for c in named(node) if not c.kind().endswith("type")), line)

    def _readers(self) -> dict[str, Callable[[Node, int], ir.Expr]]:
        return {
            "selector_expression": self._selector,
            "call_expression": self._call,
            "binary_expression": self._binary,
            "unary_expression": self._unary,
            "type_assertion_expression": self._assertion,
            "parenthesized_expression": self._inside,
            "slice_expression": self._inside,
            "type_conversion_expression": self._inside,
            "index_expression": self._index,
            "composite_literal": self._composite,
            "func_literal": lambda node, line: ir.Lambda(self.function(node, "<func>"), line),
            "literal_value": self._elements,
            "literal_element": self._elements,
            "expression_list": self._elements,
        }

    def _selector(self, node: Node, line: int) -> ir.Expr:
        operand, field = node.field("operand"), node.field("field")
        if operand is None or field is None:
            return ir.Other((), line)
        return ir.Member(self.expr(operand), field.text(), line)

    def _binary(self, node: Node, line: int) -> ir.Expr:
        operator = node.field("operator")
        op = operator.text() if operator is not None else ""
        parts = tuple(self.expr(c) for c in (node.field("left"), node.field("right")) if c is not None)
        if op == "+":
            flat: list[ir.Expr] = []
            for part in parts:
                flat.extend(part.parts if isinstance(part, ir.Concat) else (part,))
            return ir.Concat(tuple(flat), line)
        return ir.Other(parts, line, number=op in COMPARISONS or op in NUMERIC)

    def _unary(self, node: Node, line: int) -> ir.Expr:
        operator, operand = node.field("operator"), node.field("operand")
        op = operator.text() if operator is not None else ""
        inner = self.expr(operand) if operand is not None else ir.Other((), line)
        return inner if op in ("&", "*", "<-") else ir.Other((inner,), line, number=True)

    def _assertion(self, node: Node, line: int) -> ir.Expr:
        """``x.(*tar.Header)``: the same value, under a type the engine may know (an archive entry)."""
        operand, asserted = node.field("operand"), node.field("type")
        inner = self.expr(operand) if operand is not None else ir.Other((), line)
        type_name = asserted.text() if asserted is not None else "?"
        return ir.Call(ir.Name(f"<as:{type_name}>", line), (inner,), line)

    def _inside(self, node: Node, line: int) -> ir.Expr:
        operand = node.field("operand") or (named(node)[0] if named(node) else None)
        return self.expr(operand) if operand is not None else ir.Other((), line)

    def _index(self, node: Node, line: int) -> ir.Expr:
        operand, index = node.field("operand"), node.field("index")
        if operand is None or index is None:
            return ir.Other((), line)
        return ir.Index(self.expr(operand), self.expr(index), line)

    def _elements(self, node: Node, line: int) -> ir.Expr:
        parts = tuple(self.expr(c) for c in named(node))
        return parts[0] if len(parts) == 1 else ir.Arr(parts, line)

    def _call(self, node: Node, line: int) -> ir.Expr:
        func, arguments = node.field("function"), node.field("arguments")
        if func is None:
            return ir.Other((), line)
        argument_nodes = [a for a in named(arguments)] if arguments is not None else []
        spread = arguments is not None and any(c.text() == "..." for c in arguments.children() if not c.is_named())
        args = tuple(self.expr(a) for a in argument_nodes if not a.kind().endswith("type"))
        function = self.expr(func)
        if isinstance(function, ir.Member) and isinstance(function.obj, ir.Name):
            package = self.imports.get(function.obj.id)
            if package == "fmt" and function.name in ("Sprintf", "Errorf") and args:
                return _formatted(args, line)
            if package == "fmt" and function.name in ("Sprint", "Sprintln"):
                return ir.Concat(args, line)
        if func.kind() in ("slice_type", "array_type", "parenthesized_type", "map_type") and args:
            return args[0]  # []byte(x): the same data
        return ir.Call(function, args, line, spread=spread)

    def _composite(self, node: Node, line: int) -> ir.Expr:
        body = node.field("body")
        elements = named(body) if body is not None else []
        keyed = [e for e in elements if e.kind() == "keyed_element"]
        if keyed and len(keyed) == len(elements):
            entries: list[tuple[str | None, ir.Expr]] = []
            for element in keyed:
                parts = named(element)
                if len(parts) == 2:
                    key = parts[0].text()
                    entries.append((key.strip('"'), self.expr(parts[1])))
            return ir.Obj(tuple(entries), line)
        return ir.Arr(tuple(self.expr(e) for e in elements), line)


def _formatted(args: tuple[ir.Expr, ...], line: int) -> ir.Expr:
    """``fmt.Sprintf(format, a, b)`` as the text it builds; ``%d`` arguments are numbers."""
    template = args[0]
    if not isinstance(template, ir.Const):
        return ir.Concat(args, line)
    parts: list[ir.Expr] = []
    rest = list(args[1:])
    position = 0
    for match in FORMAT_VERB.finditer(template.value):
        parts.append(ir.Const("string", template.value[position : match.start()], line))
        position = match.end()
        verb = match.group(0)[-1]
        if verb == "%":
            parts.append(ir.Const("string", "%", line))
            continue
        value = rest.pop(0) if rest else ir.Const("string", "", line)
        parts.append(ir.Other((value,), line, number=True) if verb in NUMBER_VERBS else value)
    parts.append(ir.Const("string", template.value[position:], line))
    parts.extend(rest)
    return ir.Concat(tuple(parts), line)


def _exits(node: Node | None) -> bool:
    if node is None:
        return False
    for child in named(node):
        if child.kind() == "statement_list":
            return any(s.kind() in EXITS for s in named(child))
        if child.kind() in EXITS:
            return True
    return False


def read_module(text: str, path: str) -> ir.Module:
    """Parse one Go file into a :class:`Module`."""
    from ast_grep_py import SgRoot

    return GoReader(path).module(SgRoot(text, "go").root())
