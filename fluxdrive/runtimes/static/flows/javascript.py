"""JavaScript and TypeScript syntax trees (tree-sitter, through ast-grep) as the flow engine's values.

What is kept: imports (``require``, ``import``), which names a file exports
(``export``, ``module.exports``, ``exports.x``), every function-like
definition at the top of a file (declarations, ``const f = () => ...``,
class methods, ``X.prototype.m = function``, methods of exported object
literals) with its class, and each body's statements in order. Decorators are
kept by name (NestJS's ``@Query()``), and a JSX ``dangerouslySetInnerHTML``
attribute becomes a call the HTML sinks can name. Types are dropped: data
flow does not need them, and a TypeScript file parses the same way as
JavaScript once they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any

from fluxdrive.runtimes.static.flows import ir

Node = Any  # ast_grep_py.SgNode (a native class without stubs)

FUNCTION_KINDS = frozenset(
    {"function_declaration", "generator_function_declaration", "function_expression", "function",
     "arrow_function", "generator_function", "method_definition"}
)  # fmt: skip
LITERALS: dict[str, ir.ConstKind] = {
    "string": "string", "number": "number", "true": "bool", "false": "bool",
    "null": "null", "undefined": "null", "regex": "regex",
}  # fmt: skip
NAMES = frozenset({"identifier", "shorthand_property_identifier", "this", "super", "property_identifier"})
TRANSPARENT = frozenset(
    {"parenthesized_expression", "await_expression", "as_expression", "satisfies_expression",
     "non_null_expression", "type_assertion", "spread_element", "yield_expression"}
)  # fmt: skip
NUMERIC_OPERATORS = frozenset({"-", "*", "/", "%", "**", "|", "&", "^", "<<", ">>", ">>>"})
COMPARISONS = frozenset({"==", "===", "!=", "!==", "<", ">", "<=", ">=", "instanceof", "in"})
EXITS = frozenset({"return_statement", "throw_statement", "continue_statement", "break_statement"})
SKIPPED_STATEMENTS = frozenset(
    {"interface_declaration", "type_alias_declaration", "enum_declaration", "ambient_declaration",
     "empty_statement", "comment", "break_statement", "continue_statement", "debugger_statement",
     "import_statement", "abstract_class_declaration"}
)  # fmt: skip


def member_of(module: str, name: str) -> str:
    """``child_process.exec``; ``./utils#run`` for a project file (its path has dots of its own)."""
    return f"{module}#{name}" if module.startswith(".") else f"{module}.{name}"


def line_of(node: Node) -> int:
    """The 1-based line a node starts on."""
    return int(node.range().start.line) + 1


def named(node: Node) -> list[Node]:
    """A node's named children (tree-sitter's anonymous tokens dropped)."""
    return [c for c in node.children() if c.is_named() and c.kind() != "comment"]


def string_text(node: Node) -> str:
    """The text of a string literal without its quotes (escapes as written)."""
    text = str(node.text())
    return text[1:-1] if len(text) >= 2 and text[0] in "'\"`" else text


def _require_path(node: Node | None) -> str | None:
    """``'child_process'`` for ``require('child_process')`` (also through ``.promises``/``.default``)."""
    if node is None:
        return None
    if node.kind() == "member_expression":
        inner = _require_path(node.field("object"))
        prop = node.field("property")
        return member_of(inner, prop.text()) if inner and prop is not None and prop.text() != "default" else inner
    if node.kind() != "call_expression":
        return None
    func, args = node.field("function"), node.field("arguments")
    if func is None or func.text() != "require" or args is None:
        return None
    first = named(args)
    return string_text(first[0]) if first and first[0].kind() == "string" else None


class JavaScriptReader:
    """Builds a :class:`Module` from one file's syntax tree."""

    def __init__(self, path: str, language: str) -> None:
        self.path = path
        self.language = language
        self.imports: dict[str, str] = {}
        self.exports: set[str] = set()
        self.functions: list[ir.Function] = []
        self.classes: dict[str, str] = {}
        self._members: list[tuple[str, str]] = []  # ejs.render = render: exported when ejs is
        self._read = self._readers()
        self._statement_readers = self._statement_kinds()

    # ------------------------------------------------------------------ module
    def module(self, root: Node) -> ir.Module:
        """Read every statement at the top of the file."""
        top: list[ir.Statement] = []
        for node in named(root):
            top.extend(self._top_statement(node))
        for owner, member in self._members:
            if owner in self.exports:
                self.exports.add(member)
        functions = tuple(self._exported(f) for f in self.functions)
        return ir.Module(
            path=self.path,
            language=self.language,
            imports=dict(self.imports),
            functions=functions,
            top=ir.Function("<module>", (), tuple(top), 1, line_of(root), role="module"),
            exports=frozenset(self.exports),
            classes=dict(self.classes),
        )

    def _exported(self, function: ir.Function) -> ir.Function:
        public = function.name in self.exports or (function.owner and function.owner in self.exports)
        if function.owner and (function.name.startswith(("#", "_")) or "private " in function.decorators):
            public = False
        return replace(function, exported=bool(public) or function.exported)

    def _top_statement(self, node: Node) -> list[ir.Statement]:
        kind = node.kind()
        if kind == "import_statement":
            self._import(node)
            return []
        if kind == "export_statement":
            return self._export(node)
        if kind in ("function_declaration", "generator_function_declaration"):
            self._define(node, node.field("name").text() if node.field("name") else "<anonymous>")
            return []
        if kind in ("class_declaration", "abstract_class_declaration", "class"):
            self._class(node)
            return []
        if kind in ("lexical_declaration", "variable_declaration"):
            return self._top_declaration(node)
        if kind == "expression_statement":
            expression = named(node)[0] if named(node) else None
            if expression is not None and expression.kind() == "assignment_expression":
                return self._top_assignment(expression)
        return list(self.statements([node], nested=False))

    def _import(self, node: Node) -> None:
        source = node.field("source")
        if source is None:
            return
        module = string_text(source)
        for clause in (c for c in named(node) if c.kind() == "import_clause"):
            for part in named(clause):
                if part.kind() == "identifier":  # import fs from 'fs'
                    self.imports[part.text()] = module
                elif part.kind() == "namespace_import":  # import * as fs from 'fs'
                    for ident in named(part):
                        self.imports[ident.text()] = module
                elif part.kind() == "named_imports":  # import { exec as run } from 'child_process'
                    for spec in named(part):
                        names = [n.text() for n in named(spec)]
                        if names:
                            self.imports[names[-1]] = member_of(module, names[0])

    def _export(self, node: Node) -> list[ir.Statement]:
        declaration = node.field("declaration")
        value = node.field("value")
        default = any(c.kind() == "default" for c in node.children())
        if declaration is not None:
            for ident in self._declared_names(declaration):
                self.exports.add(ident)
            if default and declaration.kind() in FUNCTION_KINDS | {"class_declaration"}:
                self.exports.add(declaration.field("name").text() if declaration.field("name") else "default")
            if declaration.kind() in ("class_declaration", "abstract_class_declaration") and default:
                self._class(declaration, exported=True)
                return []
            return self._top_statement(declaration)
        if value is not None:
            if value.kind() in FUNCTION_KINDS:
                self._define(value, "default", exported=True)
                return []
            if value.kind() == "identifier":
                self.exports.add(value.text())
            return [ir.Evaluate(self.expr(value), line_of(node))]
        for clause in (c for c in named(node) if c.kind() == "export_clause"):
            for spec in named(clause):
                names = [n.text() for n in named(spec)]
                if names:
                    self.exports.add(names[0])
        return []

    def _declared_names(self, node: Node) -> Iterator[str]:
        name = node.field("name")
        if name is not None and node.kind() != "lexical_declaration":
            yield name.text()
        for declarator in (c for c in named(node) if c.kind() == "variable_declarator"):
            target = declarator.field("name")
            if target is not None and target.kind() == "identifier":
                yield target.text()

    def _top_declaration(self, node: Node) -> list[ir.Statement]:
        out: list[ir.Statement] = []
        for declarator in (c for c in named(node) if c.kind() == "variable_declarator"):
            target, value = declarator.field("name"), declarator.field("value")
            if target is not None and value is not None and target.kind() == "identifier":
                required = _require_path(value)
                if required is not None:
                    self.imports[target.text()] = required
                    continue
                if value.kind() in FUNCTION_KINDS:
                    self._define(value, target.text())
                    continue
                if value.kind() == "class":
                    self._class(value, name=target.text())
                    continue
            elif target is not None and target.kind() == "object_pattern" and value is not None:
                required = _require_path(value)
                if required is not None:  # const { exec: run } = require('child_process')
                    for bound, field_name in self._pattern_names(target):
                        self.imports[bound] = member_of(required, field_name) if field_name else required
                    continue
            out.extend(self._declarator(declarator, nested=False))
        return out

    def _top_assignment(self, node: Node) -> list[ir.Statement]:
        left, right = node.field("left"), node.field("right")
        if left is None or right is None:
            return []
        target = left.text()
        while right.kind() == "assignment_expression":  # module.exports = exports = fn
            right = right.field("right")
            if right is None:
                return []
        if target in ("module.exports", "exports"):
            return self._module_exports(right, node)
        if left.kind() == "member_expression":
            obj, prop = left.field("object"), left.field("property")
            owner = obj.text() if obj is not None else ""
            name = prop.text() if prop is not None else ""
            if owner in ("module.exports", "exports"):
                self.exports.add(name)
                if right.kind() in FUNCTION_KINDS:
                    self._define(right, name, exported=True)
                    return []
                if right.kind() == "identifier":
                    self.exports.add(right.text())
            elif right.kind() in FUNCTION_KINDS and "." not in owner and owner:
                self._members.append((owner, name))
                self._define(right, name)
                return []
            elif right.kind() == "identifier" and "." not in owner and owner:
                self._members.append((owner, right.text()))
            elif owner.endswith(".prototype") and right.kind() in FUNCTION_KINDS:
                self._define(right, name, owner=owner.removesuffix(".prototype"), role="method")
                return []
            elif name == "prototype" and right.kind() == "object":
                self._object_methods(right, owner)
                return []
        return list(self.statements([node.parent()], nested=False)) if node.parent() is not None else []

    def _module_exports(self, right: Node, node: Node) -> list[ir.Statement]:
        kind = right.kind()
        if kind in FUNCTION_KINDS:
            name = right.field("name").text() if right.field("name") is not None else "default"
            self._define(right, name, exported=True)
            self.exports.add(name)
            return []
        if kind == "identifier":
            self.exports.add(right.text())
            return []
        if kind == "object":
            for entry in named(right):
                if entry.kind() == "shorthand_property_identifier":
                    self.exports.add(entry.text())
                elif entry.kind() == "pair":
                    key, value = entry.field("key"), entry.field("value")
                    if key is None or value is None:
                        continue
                    self.exports.add(key.text())
                    if value.kind() in FUNCTION_KINDS:
                        self._define(value, key.text(), exported=True)
                    elif value.kind() == "identifier":
                        self.exports.add(value.text())
                elif entry.kind() == "method_definition":
                    self._define(entry, entry.field("name").text(), exported=True)
            return []
        if kind in ("class", "class_declaration"):
            self._class(right, exported=True)
            return []
        return [ir.Evaluate(self.expr(right), line_of(node))]

    def _object_methods(self, node: Node, owner: str) -> None:
        for entry in named(node):
            if entry.kind() == "pair":
                key, value = entry.field("key"), entry.field("value")
                if key is not None and value is not None and value.kind() in FUNCTION_KINDS:
                    self._define(value, string_text(key), owner=owner, role="method")
            elif entry.kind() == "method_definition" and entry.field("name") is not None:
                self._define(entry, entry.field("name").text(), owner=owner, role="method")

    def _class(self, node: Node, *, exported: bool = False, name: str | None = None) -> None:
        ident = node.field("name")
        class_name = name or (ident.text() if ident is not None else "<class>")
        if exported:
            self.exports.add(class_name)
        heritage = next((c for c in named(node) if c.kind() == "class_heritage"), None)
        self.classes[class_name] = heritage.text().removeprefix("extends").strip() if heritage is not None else ""
        body = node.field("body")
        if body is None:
            return
        decorators: list[str] = [d.text() for d in named(node) if d.kind() == "decorator"]
        pending: list[str] = []
        for member in named(body):
            if member.kind() == "decorator":
                pending.append(member.text())
                continue
            if member.kind() == "method_definition":
                method = member.field("name")
                method_name = method.text() if method is not None else "<method>"
                modifiers = tuple(c.text() + " " for c in named(member) if c.kind() == "accessibility_modifier")
                role = "constructor" if method_name == "constructor" else "method"
                self._define(
                    member, method_name, owner=class_name, role=role, decorators=(*decorators, *pending, *modifiers)
                )
            pending = []

    def _define(
        self,
        node: Node,
        name: str,
        *,
        owner: str = "",
        role: str = "function",
        exported: bool = False,
        decorators: Iterable[str] = (),
    ) -> None:
        function = self.function(node, name, owner=owner, role=role, decorators=tuple(decorators))
        self.functions.append(replace(function, exported=exported))
        if not owner:  # function Dao(db) { this.find = function (id) {...} }: methods of the constructor
            for statement in function.body:
                if (
                    isinstance(statement, ir.Assign)
                    and isinstance(statement.target, ir.Member)
                    and isinstance(statement.target.obj, ir.Name)
                    and statement.target.obj.id == "this"
                    and isinstance(statement.value, ir.Lambda)
                ):
                    method = replace(statement.value.function, name=statement.target.name, owner=name, role="method")
                    self.functions.append(method)

    # --------------------------------------------------------------- functions
    def function(
        self, node: Node, name: str, *, owner: str = "", role: str = "function", decorators: tuple[str, ...] = ()
    ) -> ir.Function:
        """One function-like node as a :class:`Function`."""
        params = self._params(node)
        body_node = node.field("body")
        body: list[ir.Statement]
        if body_node is None:
            body = []
        elif body_node.kind() == "statement_block":
            body = list(self.statements(named(body_node), nested=False))
        else:  # an arrow function's expression body
            body = [ir.Return(self.expr(body_node), line_of(body_node))]
        return ir.Function(
            name=name,
            params=params,
            body=tuple(body),
            line=line_of(node),
            end=int(node.range().end.line) + 1,
            owner=owner,
            role=role,  # type: ignore[arg-type]
            variadic=any(p.kind() == "rest_pattern" for p in self._param_nodes(node)),
            decorators=decorators,
        )

    def _param_nodes(self, node: Node) -> list[Node]:
        single = node.field("parameter")
        if single is not None:
            return [single]
        params = node.field("parameters")
        return named(params) if params is not None else []

    def _params(self, node: Node) -> tuple[ir.Param, ...]:
        out: list[ir.Param] = []
        for position, param in enumerate(self._param_nodes(node)):
            decorators = tuple(d.text() for d in named(param) if d.kind() == "decorator")
            pattern = param
            if param.kind() in ("required_parameter", "optional_parameter"):
                pattern = param.field("pattern") or next(
                    (c for c in named(param) if c.kind() not in ("decorator", "accessibility_modifier")), param
                )
                kind_type = param.field("type")
                type_text = kind_type.text().lstrip(":").strip() if kind_type is not None else ""
            else:
                type_text = ""
            if pattern.kind() == "assignment_pattern":
                pattern = pattern.field("left") or pattern
            if pattern.kind() == "rest_pattern":
                pattern = named(pattern)[0] if named(pattern) else pattern
            if pattern.kind() in ("object_pattern", "array_pattern"):
                fields = tuple((bound, field_name or "") for bound, field_name in self._pattern_names(pattern))
                out.append(ir.Param(f"<arg{position}>", position, fields, type_text, decorators))
            else:
                out.append(ir.Param(pattern.text(), position, (), type_text, decorators))
        return tuple(out)

    def _pattern_names(self, pattern: Node) -> Iterator[tuple[str, str | None]]:
        """(bound name, field read) for each name a destructuring pattern binds."""
        for part in named(pattern):
            kind = part.kind()
            if kind in ("shorthand_property_identifier_pattern", "shorthand_property_identifier"):
                yield part.text(), part.text()
            elif kind == "pair_pattern":
                yield from self._pair_names(part)
            elif kind == "object_assignment_pattern":  # { a = 1 }
                left = part.field("left")
                if left is not None:
                    yield left.text(), left.text()
            elif kind == "identifier":  # array pattern element
                yield part.text(), None
            elif kind == "assignment_pattern":
                left = part.field("left")
                if left is not None and left.kind() == "identifier":
                    yield left.text(), None
            elif kind == "rest_pattern":
                for inner in named(part):
                    yield inner.text(), None
            elif kind in ("object_pattern", "array_pattern"):
                yield from self._pattern_names(part)

    def _pair_names(self, part: Node) -> Iterator[tuple[str, str | None]]:
        """``{ key: name }`` and ``{ key: { nested } }`` in a destructuring pattern."""
        key, value = part.field("key"), part.field("value")
        if value is not None and value.kind() == "assignment_pattern":
            value = value.field("left")
        if key is None or value is None:
            return
        if value.kind() == "identifier":
            yield value.text(), string_text(key)
        else:
            for bound, _ in self._pattern_names(value):
                yield bound, string_text(key)

    # -------------------------------------------------------------- statements
    def statements(self, nodes: Iterable[Node], *, nested: bool) -> Iterator[ir.Statement]:
        """The statements of a block, in order, branches and loops marked ``nested``."""
        for node in nodes:
            yield from self._statement(node, nested)

    def _statement(self, node: Node, nested: bool) -> Iterator[ir.Statement]:
        """One statement (dispatched on its kind; an expression otherwise)."""
        kind = node.kind()
        if kind in SKIPPED_STATEMENTS:
            return
        read = self._statement_readers.get(kind)
        if read is not None:
            yield from read(node, nested)
        elif kind.endswith(("statement", "declaration")):
            for part in named(node):
                yield from self._statement(part, True)
        else:
            yield from self._expression_statement(node, nested)

    def _statement_kinds(self) -> dict[str, Callable[[Node, bool], Iterator[ir.Statement]]]:
        return {
            "lexical_declaration": self._declaration,
            "variable_declaration": self._declaration,
            "expression_statement": lambda node, nested: (
                s for e in named(node) for s in self._expression_statement(e, nested)
            ),
            "return_statement": self._return,
            "throw_statement": self._throw,
            "if_statement": self._if,
            "for_in_statement": lambda node, nested: self._for_in(node),
            "for_statement": self._loop,
            "while_statement": self._loop,
            "do_statement": self._loop,
            "statement_block": self._inner,
            "else_clause": self._inner,
            "finally_clause": self._inner,
            "labeled_statement": self._inner,
            "try_statement": lambda node, nested: (s for part in named(node) for s in self._block(part)),
            "catch_clause": self._catch,
            "switch_statement": self._switch,
            "function_declaration": self._local_function,
            "generator_function_declaration": self._local_function,
            "class_declaration": self._local_class,
            "class": self._local_class,
        }

    def _declaration(self, node: Node, nested: bool) -> Iterator[ir.Statement]:
        nested = nested and node.kind() == "variable_declaration"  # let/const in a block is a new name; var is not
        for declarator in (c for c in named(node) if c.kind() == "variable_declarator"):
            yield from self._declarator(declarator, nested)

    def _return(self, node: Node, nested: bool) -> Iterator[ir.Statement]:
        values = named(node)
        yield ir.Return(self.expr(values[0]) if values else None, line_of(node))

    def _throw(self, node: Node, nested: bool) -> Iterator[ir.Statement]:
        values = named(node)
        if values:
            yield ir.Evaluate(self.expr(values[0]), line_of(node))

    def _if(self, node: Node, nested: bool) -> Iterator[ir.Statement]:
        condition, consequence = node.field("condition"), node.field("consequence")
        if condition is not None:
            until = int(consequence.range().end.line) + 1 if consequence is not None else 0
            yield ir.Guard(self.expr(condition), line_of(node), _exits(consequence), until)
        if consequence is not None:
            yield from self._block(consequence)
        alternative = node.field("alternative")
        if alternative is not None:
            yield from self._block(alternative)

    def _loop(self, node: Node, nested: bool) -> Iterator[ir.Statement]:
        for part in ("initializer", "condition", "increment"):
            child = node.field(part)
            if child is None:
                continue
            if child.kind().endswith(("declaration", "statement")):
                yield from self._statement(child, True)
            else:
                yield from self._expression_statement(child, True)
        body = node.field("body")
        if body is not None:
            yield from self._block(body)

    def _inner(self, node: Node, nested: bool) -> Iterator[ir.Statement]:
        yield from self.statements(named(node), nested=nested)

    def _catch(self, node: Node, nested: bool) -> Iterator[ir.Statement]:
        body = node.field("body")
        if body is not None:
            yield from self._block(body)

    def _switch(self, node: Node, nested: bool) -> Iterator[ir.Statement]:
        value = node.field("value")
        if value is not None:
            yield ir.Evaluate(self.expr(value), line_of(node))
        body = node.field("body")
        for case in named(body) if body is not None else []:
            statements = (c for c in named(case) if c.kind().endswith(("statement", "declaration")))
            yield from self.statements(statements, nested=True)

    def _local_function(self, node: Node, nested: bool) -> Iterator[ir.Statement]:
        line = line_of(node)
        name = node.field("name")
        fn_name = name.text() if name is not None else "<function>"
        yield ir.Assign(ir.Name(fn_name, line), ir.Lambda(self.function(node, fn_name), line), line, nested)

    def _local_class(self, node: Node, nested: bool) -> Iterator[ir.Statement]:
        self._class(node)
        return iter(())

    def _block(self, node: Node) -> Iterator[ir.Statement]:
        if node.kind() in ("statement_block", "else_clause", "finally_clause"):
            yield from self.statements(named(node), nested=True)
        else:
            yield from self._statement(node, True)

    def _for_in(self, node: Node) -> Iterator[ir.Statement]:
        left, right = node.field("left"), node.field("right")
        line = line_of(node)
        keys_of = any(c.kind() == "in" for c in node.children())
        if left is not None and right is not None:
            if left.kind() in ("lexical_declaration", "variable_declaration"):
                declarators = [c for c in named(left) if c.kind() == "variable_declarator"]
                left = declarators[0].field("name") if declarators else left
            if left is not None and left.kind() in ("object_pattern", "array_pattern"):
                names = tuple(self._pattern_names(left))
                yield ir.Unpack(names, ir.Call(ir.Name("<element>", line), (self.expr(right),), line), line, True)
            elif left is not None:
                bound = left.text()
                yield ir.Loop(bound if keys_of else None, None if keys_of else bound, self.expr(right), line, keys_of)
        body = node.field("body")
        if body is not None:
            yield from self._block(body)

    def _declarator(self, node: Node, nested: bool) -> Iterator[ir.Statement]:
        target, value = node.field("name"), node.field("value")
        line = line_of(node)
        if target is None or value is None:
            return
        if target.kind() == "identifier":
            if value.kind() in FUNCTION_KINDS:
                yield ir.Assign(
                    ir.Name(target.text(), line), ir.Lambda(self.function(value, target.text()), line), line, nested
                )
                return
            yield ir.Assign(ir.Name(target.text(), line), self.expr(value), line, nested)
        elif target.kind() in ("object_pattern", "array_pattern"):
            yield ir.Unpack(tuple(self._pattern_names(target)), self.expr(value), line, nested)

    def _expression_statement(self, node: Node, nested: bool) -> Iterator[ir.Statement]:
        line = line_of(node)
        kind = node.kind()
        if kind == "assignment_expression":
            left, right = node.field("left"), node.field("right")
            if left is None or right is None:
                return
            if right.kind() == "assignment_expression":  # a = b = value
                yield from self._expression_statement(right, nested)
                inner = right.field("left")
                value: ir.Expr = self.expr(inner) if inner is not None else ir.Other((), line)
            else:
                value = self.expr(right)
            if left.kind() in ("object_pattern", "array_pattern"):
                yield ir.Unpack(tuple(self._pattern_names(left)), value, line, nested)
            else:
                yield ir.Assign(self.expr(left), value, line, nested)
        elif kind == "augmented_assignment_expression":
            left, right = node.field("left"), node.field("right")
            if left is not None and right is not None:
                yield ir.Assign(self.expr(left), self.expr(right), line, nested, add=True)
        elif kind == "sequence_expression":
            for part in named(node):
                yield from self._expression_statement(part, nested)
        else:
            yield ir.Evaluate(self.expr(node), line)

    # ------------------------------------------------------------- expressions
    def expr(self, node: Node) -> ir.Expr:
        """One expression node as an :data:`Expr` (dispatched on its kind; anything else keeps its parts)."""
        kind = node.kind()
        line = line_of(node)
        if kind in LITERALS:
            return ir.Const(LITERALS[kind], string_text(node) if kind == "string" else node.text(), line)
        if kind in NAMES:
            return ir.Name(node.text(), line)
        if kind in TRANSPARENT:
            parts = named(node)
            return self.expr(parts[0]) if parts else ir.Other((), line)
        if kind in FUNCTION_KINDS:
            return ir.Lambda(self.function(node, "<callback>"), line)
        read = self._read.get(kind)
        if read is not None:
            return read(node, line)
        return ir.Other(tuple(self.expr(c) for c in named(node)), line)

    def _readers(self) -> dict[str, Callable[[Node, int], ir.Expr]]:
        return {
            "member_expression": self._member,
            "subscript_expression": self._subscript,
            "call_expression": self._call,
            "new_expression": self._new,
            "template_string": self._template,
            "binary_expression": self._binary,
            "unary_expression": self._unary,
            "update_expression": self._unary,
            "ternary_expression": self._ternary,
            "object": self._object,
            "array": lambda node, line: ir.Arr(tuple(self.expr(c) for c in named(node)), line),
            "jsx_element": self._jsx,
            "jsx_self_closing_element": self._jsx,
            "jsx_fragment": self._jsx,
            "jsx_opening_element": self._jsx,
            "assignment_expression": self._assigned,
        }

    def _member(self, node: Node, line: int) -> ir.Expr:
        obj, prop = node.field("object"), node.field("property")
        if obj is None or prop is None:
            return ir.Other((), line)
        return ir.Member(self.expr(obj), prop.text(), line)

    def _subscript(self, node: Node, line: int) -> ir.Expr:
        obj, index = node.field("object"), node.field("index")
        if obj is None or index is None:
            return ir.Other((), line)
        if index.kind() == "string":
            return ir.Member(self.expr(obj), string_text(index), line)
        return ir.Index(self.expr(obj), self.expr(index), line)

    def _new(self, node: Node, line: int) -> ir.Expr:
        constructor, arguments = node.field("constructor"), node.field("arguments")
        args = tuple(self.expr(a) for a in named(arguments)) if arguments is not None else ()
        return ir.Call(self.expr(constructor) if constructor is not None else ir.Other((), line), args, line, new=True)

    def _unary(self, node: Node, line: int) -> ir.Expr:
        operator = next((c.text() for c in node.children() if not c.is_named()), "")
        return ir.Other(tuple(self.expr(c) for c in named(node)), line, number=operator != "delete")

    def _ternary(self, node: Node, line: int) -> ir.Expr:
        branches = (node.field("consequence"), node.field("alternative"))
        return ir.Other(tuple(self.expr(c) for c in branches if c is not None), line)

    def _assigned(self, node: Node, line: int) -> ir.Expr:
        right = node.field("right")
        return self.expr(right) if right is not None else ir.Other((), line)

    def _call(self, node: Node, line: int) -> ir.Expr:
        func, arguments = node.field("function"), node.field("arguments")
        if func is None:
            return ir.Other((), line)
        if arguments is not None and arguments.kind() == "template_string":  # tagged template: sql`...`
            parts = tuple(self.expr(s) for s in named(arguments) if s.kind() == "template_substitution")
            return ir.Call(self.expr(func), tuple(p for part in parts for p in _flatten(part)), line)
        argument_nodes = named(arguments) if arguments is not None else []
        spread = bool(argument_nodes) and argument_nodes[-1].kind() == "spread_element"
        return ir.Call(self.expr(func), tuple(self.expr(a) for a in argument_nodes), line, spread=spread)

    def _template(self, node: Node, line: int) -> ir.Expr:
        parts: list[ir.Expr] = []
        for child in named(node):
            if child.kind() == "string_fragment" or child.kind() == "escape_sequence":
                parts.append(ir.Const("string", child.text(), line_of(child)))
            elif child.kind() == "template_substitution":
                inner = named(child)
                if inner:
                    parts.append(self.expr(inner[0]))
        if all(isinstance(p, ir.Const) for p in parts):
            return ir.Const("string", "".join(p.value for p in parts if isinstance(p, ir.Const)), line)
        return ir.Concat(tuple(parts), line)

    def _binary(self, node: Node, line: int) -> ir.Expr:
        left, right = node.field("left"), node.field("right")
        operator = node.field("operator")
        op = operator.text() if operator is not None else ""
        parts = tuple(self.expr(c) for c in (left, right) if c is not None)
        if op == "+":
            flat: list[ir.Expr] = []
            for part in parts:
                flat.extend(part.parts if isinstance(part, ir.Concat) else (part,))
            if all(isinstance(p, ir.Const) and p.kind == "number" for p in flat):
                return ir.Other(tuple(flat), line, number=True)
            return ir.Concat(tuple(flat), line)
        if op in COMPARISONS or op in NUMERIC_OPERATORS:
            return ir.Other(parts, line, number=True)
        return ir.Other(parts, line)  # && || ??: one of the parts

    def _object(self, node: Node, line: int) -> ir.Expr:
        entries: list[tuple[str | None, ir.Expr]] = []
        for entry in named(node):
            kind = entry.kind()
            if kind == "pair":
                key, value = entry.field("key"), entry.field("value")
                if value is None:
                    continue
                name = string_text(key) if key is not None and key.kind() != "computed_property_name" else None
                entries.append((name, self.expr(value)))
            elif kind == "shorthand_property_identifier":
                entries.append((entry.text(), ir.Name(entry.text(), line_of(entry))))
            elif kind == "spread_element":
                entries.append((None, self.expr(entry)))
            elif kind == "method_definition" and entry.field("name") is not None:
                method = entry.field("name").text()
                entries.append((method, ir.Lambda(self.function(entry, method), line_of(entry))))
        return ir.Obj(tuple(entries), line)

    def _jsx(self, node: Node, line: int) -> ir.Expr:
        parts: list[ir.Expr] = []
        for child in named(node):
            if child.kind() == "jsx_attribute":
                attribute = named(child)
                if len(attribute) == 2 and attribute[0].text() == "dangerouslySetInnerHTML":
                    value = self.expr(attribute[1])
                    html = (
                        next((v for k, v in value.entries if k == "__html"), value)
                        if isinstance(value, ir.Obj)
                        else value
                    )
                    parts.append(ir.Call(ir.Name("dangerouslySetInnerHTML", line_of(child)), (html,), line_of(child)))
                elif len(attribute) == 2:
                    parts.append(self.expr(attribute[1]))
            elif child.is_named() and child.kind() not in ("jsx_text", "identifier", "member_expression"):
                parts.append(self.expr(child))
        return ir.Other(tuple(parts), line)


def _flatten(expr: ir.Expr) -> tuple[ir.Expr, ...]:
    return expr.parts if isinstance(expr, ir.Concat) else (expr,)


def _exits(node: Node | None) -> bool:
    """The branch returns, throws, continues or breaks (so code after the ``if`` ran only when the check passed)."""
    if node is None:
        return False
    if node.kind() in EXITS:
        return True
    if node.kind() == "statement_block":
        return any(c.kind() in EXITS for c in named(node))
    return False


def read_module(text: str, path: str, language: str) -> ir.Module:
    """Parse ``text`` (javascript, typescript or tsx) into a :class:`Module`."""
    from ast_grep_py import SgRoot

    grammar = {"javascript": "javascript", "typescript": "typescript", "tsx": "tsx"}[language]
    return JavaScriptReader(path, language).module(SgRoot(text, grammar).root())
