"""Counts calls inside a def or lambda written in the loop: their bodies run when called, not every iteration."""

MODULE = "async_exec"
REJECTED_BY = {"find_implicit_syncs": ["correctness"]}


def find_implicit_syncs(source: str) -> list[tuple[int, str]]:
    if not isinstance(source, str):
        raise ValueError(f"source must be a str of Python code, got {type(source).__name__}")
    try:
        tree = ast.parse(source)
    except SyntaxError as err:
        raise ValueError(f"source is not valid Python: {err}") from None

    def sync_kind(node: ast.AST) -> tuple[int, int, str] | None:
        """``(line, column, kind)`` when ``node`` is a call that syncs the host with the GPU, else None.

        Line and column are where the method's name (or ``bool``) is written, so that a chain
        ``x.cpu().numpy()`` reads cpu, then numpy.
        """
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        if isinstance(func, ast.Attribute):
            where = (func.end_lineno, func.end_col_offset - len(func.attr))
            if func.attr in SYNC_METHODS:
                return (*where, func.attr)
            if func.attr == "to":
                device = [kw.value for kw in node.keywords if kw.arg == "device"]
                target = node.args[0] if node.args else (device[0] if device else None)
                if isinstance(target, ast.Constant) and target.value == "cpu":
                    return (*where, "cpu")
            return None
        one_arg = len(node.args) == 1 and not node.keywords
        if isinstance(func, ast.Name) and func.id == "bool" and one_arg and not isinstance(node.args[0], ast.Constant):
            return (func.lineno, func.col_offset, "bool")
        return None

    hits: list[tuple[int, int, str]] = []

    def visit(node: ast.AST, in_loop: bool) -> None:
        if in_loop and (hit := sync_kind(node)) is not None:
            hits.append(hit)
        if isinstance(node, ast.For | ast.AsyncFor):
            visit(node.target, in_loop)
            visit(node.iter, in_loop)
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, in_loop)
        elif isinstance(node, ast.While):
            visit(node.test, True)
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, in_loop)
        else:
            for child in ast.iter_child_nodes(node):
                visit(child, in_loop)

    visit(tree, False)
    return [(line, kind) for line, _col, kind in sorted(hits)]
