#!/usr/bin/env python3
"""The repository's structure, checked (tests/structure/layers.json says the rules):

- every C++ include, JS import and Python import inside src/mano, native, bindings and web goes
  to the file's own layer or one below it, never up;
- no circle of files: no file reaches itself through includes or imports;
- no hand-written file tracked by git is longer than max_lines;
- no function in src/, native/ or bindings/ is longer than 80 lines (check_function_length.py).

Usage: check_structure.py [REPO]   (default: the repository holding this script). Prints one line
per breach and exits 1 when there is one; a file it cannot read is a breach too.
"""
import ast
import fnmatch
import json
import pathlib
import re
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import check_function_length  # noqa: E402

CPP = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)
JS = re.compile(r'''^\s*(?:import|export)\b[^'"`;]*?(?:from\s*)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)''', re.M)
CODE = ('.cpp', '.hpp', '.h', '.js', '.mjs', '.cjs', '.py')


def tracked_files(repo):
    out = subprocess.run(['git', 'ls-files', '--cached', '--others', '--exclude-standard'], cwd=repo, capture_output=True,
                         text=True, check=True).stdout
    return sorted({f for f in out.splitlines() if (repo / f).is_file()})


def layer_of(path, layers):
    best = None
    for name in layers:
        if path == name or path.startswith(name + '/'):
            if best is None or len(name) > len(best):
                best = name
    return best


def reachable(layers):
    """Each layer's own path and every layer below it, through `uses`."""
    below = {}

    def walk(name, seen):
        for lower in layers[name]:
            if lower not in seen:
                seen.add(lower)
                walk(lower, seen)
        return seen

    for name in layers:
        below[name] = walk(name, {name})
    return below


def resolve_cpp(repo, source, kind, target, roots, files):
    candidates = []
    if kind == '"':
        candidates.append((pathlib.PurePosixPath(source).parent / target).as_posix())
    candidates += [f'{root}/{target}' for root in roots]
    for c in candidates:
        normal = pathlib.PurePosixPath(*[p for p in pathlib.PurePosixPath(c).parts])
        text = str(normal)
        parts = []
        for p in text.split('/'):
            if p == '..' and parts:
                parts.pop()
            elif p != '.':
                parts.append(p)
        text = '/'.join(parts)
        if text in files:
            return text
    return None


def resolve_js(source, target, packages, files):
    if target.startswith('.'):
        parts = list(pathlib.PurePosixPath(source).parent.parts)
        for p in target.split('?')[0].split('/'):
            if p == '..':
                parts.pop()
            elif p != '.':
                parts.append(p)
        text = '/'.join(parts)
        return text if text in files else None
    bare = target.split('?')[0]
    return packages.get(bare)


def python_targets(source, text, packages, files):
    """The repository's modules a Python file imports (anywhere in it, functions included)."""
    package = pathlib.PurePosixPath(source).parent
    out = []

    def module_file(base, dotted):
        for c in (base / (dotted.replace('.', '/') + '.py'), base / dotted.replace('.', '/') / '__init__.py'):
            if str(c) in files:
                out.append(str(c))

    for node in ast.walk(ast.parse(text, filename=source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package
                for _ in range(node.level - 1):
                    base = base.parent
                if node.module:
                    module_file(base, node.module)
                else:
                    for alias in node.names:
                        module_file(base, alias.name)
            elif node.module and node.module.split('.')[0] in packages:
                out.append(packages[node.module.split('.')[0]])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split('.')[0] in packages:
                    out.append(packages[alias.name.split('.')[0]])
    return out


def arrows(repo, files, rules):
    roots = rules['include_roots']
    packages = rules['packages']
    scoped = [f for f in files if f.endswith(CODE) and layer_of(f, {l['path'] for l in rules['layers']})]
    graph = {}
    for f in scoped:
        text = (repo / f).read_text(encoding='utf-8')
        targets = []
        if f.endswith(('.cpp', '.hpp', '.h')):
            for kind, target in CPP.findall(text):
                t = resolve_cpp(repo, f, kind, target, roots, files)
                if t:
                    targets.append(t)
        elif f.endswith(('.js', '.mjs', '.cjs')):
            for a, b in JS.findall(text):
                t = resolve_js(f, a or b, packages, files)
                if t:
                    targets.append(t)
        else:
            targets = python_targets(f, text, packages, files)
        graph[f] = sorted(set(t for t in targets if t != f))
    return graph


def circles(graph):
    """Strongly connected components of more than one file (Tarjan, iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph.get(start, [])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.get(child, []))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    x = stack.pop()
                    on_stack.discard(x)
                    component.append(x)
                    if x == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def check(repo):
    rules = json.loads((repo / 'tests/structure/layers.json').read_text())
    layers = {l['path']: l['uses'] for l in rules['layers']}
    for name, uses in layers.items():
        for u in uses:
            if u not in layers:
                return [f'tests/structure/layers.json: layer {name} uses {u}, which is not a layer']
    allowed = reachable(layers)
    files = tracked_files(repo)
    fileset = set(files)
    problems = []
    graph = arrows(repo, fileset, rules)
    for source, targets in sorted(graph.items()):
        here = layer_of(source, layers)
        for t in targets:
            there = layer_of(t, layers)
            if there is None:
                continue
            if there not in allowed[here]:
                problems.append(f'{source}: includes {t}, but {here} may not use {there} (tests/structure/layers.json)')
    for component in circles(graph):
        problems.append('circle of includes/imports: ' + ' -> '.join(component) + ' (each reaches the others)')
    skip = rules['not_hand_written']['paths']
    for f in files:
        if any(fnmatch.fnmatch(f, p) for p in skip):
            continue
        try:
            lines = (repo / f).read_bytes().count(b'\n')
        except OSError as e:
            problems.append(f'{f}: cannot read it ({e.strerror})')
            continue
        if lines > rules['max_lines']:
            problems.append(f'{f}: {lines} lines, over the limit of {rules["max_lines"]}: split it by the jobs it does '
                            '(or, if a program writes it, name it in not_hand_written in tests/structure/layers.json)')
    return problems + check_function_length.check(repo, files)


def main():
    repo = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2]).resolve()
    check_function_length.report(check(repo), 'every arrow runs down, no circle, no hand-written file over the line '
                                 f'limit, no function over {check_function_length.MAX_LINES} lines')


if __name__ == '__main__':
    main()
