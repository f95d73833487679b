"""Correct alternative: an ast.NodeVisitor that counts enclosing loops and saves/clears the count at functions."""

MODULE = "async_exec"
ACCEPTED = ["find_implicit_syncs"]


class _SyncVisitor(ast.NodeVisitor):
    def __init__(self):
        self.loops = 0
        self.hits = []

    def _scope(self, node):
        saved, self.loops = self.loops, 0
        self.generic_visit(node)
        self.loops = saved

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _scope

    def _in_loop(self, nodes):
        self.loops += 1
        for n in nodes:
            self.visit(n)
        self.loops -= 1

    def visit_For(self, node):
        self.visit(node.target)
        self.visit(node.iter)
        self._in_loop(node.body)
        for n in node.orelse:
            self.visit(n)

    visit_AsyncFor = visit_For

    def visit_While(self, node):
        self._in_loop([node.test, *node.body])
        for n in node.orelse:
            self.visit(n)

    def visit_Call(self, node):
        if self.loops:
            f = node.func
            if isinstance(f, ast.Attribute):
                kind = f.attr if f.attr in SYNC_METHODS else None
                if f.attr == "to":
                    args = list(node.args) + [kw.value for kw in node.keywords if kw.arg == "device"]
                    if args and isinstance(args[0], ast.Constant) and args[0].value == "cpu":
                        kind = "cpu"
                if kind:
                    self.hits.append((f.end_lineno, f.end_col_offset - len(f.attr), kind))
            elif (isinstance(f, ast.Name) and f.id == "bool" and len(node.args) == 1 and not node.keywords
                  and not isinstance(node.args[0], ast.Constant)):
                self.hits.append((f.lineno, f.col_offset, "bool"))
        self.generic_visit(node)


def find_implicit_syncs(source):
    if not isinstance(source, str):
        raise ValueError("source must be a str")
    try:
        tree = ast.parse(source)
    except SyntaxError as err:
        raise ValueError(f"source does not parse: {err}") from None
    v = _SyncVisitor()
    v.visit(tree)
    v.hits.sort()
    return [(line, kind) for line, _, kind in v.hits]
