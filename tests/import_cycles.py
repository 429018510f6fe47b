"""Import cycles in ``src/tkgqa`` (module-level and function-level imports alike; ``TYPE_CHECKING`` imports
excluded): ``make lint`` runs this file and fails on any cycle; ``test_architecture.py`` checks the same.

Strongly connected components of grimp's import graph (the graph import-linter builds), by Tarjan."""

from __future__ import annotations

import sys


def find_cycles(package: str = "tkgqa") -> list[list[str]]:
    """Every group of modules that import each other (directly or through others), each sorted."""
    import grimp

    graph = grimp.build_graph(package, exclude_type_checking_imports=True)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(root: str) -> None:  # iterative Tarjan (no recursion limit)
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    out.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return out


if __name__ == "__main__":
    cycles = find_cycles()
    for group in cycles:
        print("import cycle: " + " -> ".join(group), file=sys.stderr)
    print(f"import cycles in tkgqa: {len(cycles)}")
    sys.exit(1 if cycles else 0)
