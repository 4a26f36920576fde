#!/usr/bin/env python3
"""No function in src/, native/ or bindings/ is longer than MAX_LINES lines, from its signature's first
line to its closing brace (issue 51: long functions are split into named steps).

C++ (.cpp/.hpp): a small tokenizer drops comments, strings, char literals (raw strings too) and
preprocessor lines, then matches braces. A function body is a '{' at namespace or class scope (or in
a namespace-scope initializer) that follows a parameter list and only what may come after one:
qualifiers, noexcept(...), '-> type', a constructor's initializer list; a lambda with no parameter
list too. Lambdas and blocks inside a function count toward it. PYBIND11_MODULE(...) { and
TEST_CASE(...) { are functions by the same rule. Python (bindings/python/mano/*.py): every def, by
the ast module (a class is not a function, its methods are).

Usage: check_function_length.py [REPO]. Prints one line per function over the limit, exits 1 if any.
"""
import ast
import fnmatch
import json
import pathlib
import re
import subprocess
import sys

MAX_LINES = 80

# Functions let over the limit, as (path, function name): none; a split is the fix, not an entry.
ALLOWED = set()

TOKEN = re.compile(r'''
    (?P<newline>\n)
  | (?P<space>[ \t\r\f\v]+|\\\n)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*.*?\*/)
  | (?P<raw>(?:u8|u|U|L)?R"(?P<delim>[^()\\\s]{0,16})\()
  | (?P<string>(?:u8|u|U|L)?"(?:[^"\\\n]|\\.)*")
  | (?P<char>(?:u8|u|U|L)?'(?:[^'\\\n]|\\.)+')
  | (?P<number>\.?[0-9](?:[0-9a-zA-Z_.]|'[0-9a-zA-Z_]|[eEpP][+-])*)
  | (?P<word>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<punct>->|::|&&|.)
''', re.X | re.S)

QUALIFIERS = {'const', 'volatile', 'noexcept', 'override', 'final', 'mutable', 'constexpr', '&', '&&'}
CONTAINERS = {'namespace', 'class', 'struct', 'union', 'enum', 'extern'}
ACCESS = {'public', 'private', 'protected'}


def cpp_tokens(text):
    """(token, line) pairs of the code, without comments, literals and preprocessor lines."""
    out, line, pos, at_line_start = [], 1, 0, True
    while pos < len(text):
        if at_line_start:
            m = re.match(r'[ \t]*#(?:[^\n\\]|\\.)*', text[pos:], re.S)
            if m:
                line += m.group(0).count('\n')
                pos += m.end()
                continue
        m = TOKEN.match(text, pos)
        kind = m.lastgroup if m.lastgroup != 'delim' else 'raw'
        if m.group('raw') is not None:
            kind = 'raw'
        piece = m.group(0)
        if kind == 'raw':
            close = text.find(')' + m.group('delim') + '"', m.end())
            end = len(text) if close < 0 else close + len(m.group('delim')) + 2
            piece = text[pos:end]
        line_before = line
        line += piece.count('\n')
        pos += len(piece)
        at_line_start = kind == 'newline' or (kind == 'space' and at_line_start)
        if kind in ('word', 'punct', 'number'):
            out.append((piece, line_before))
    return out


def matching(tokens, i, open_, close):
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j] == open_:
            depth += 1
        elif tokens[j] == close:
            depth -= 1
            if depth == 0:
                return j
    return len(tokens)


def skip_template(words):
    """The header without its leading template<...> clauses."""
    while len(words) > 1 and words[0] == 'template' and words[1] == '<':
        depth = 0
        for j in range(1, len(words)):
            depth += {'<': 1, '>': -1}.get(words[j], 0)
            if depth == 0:
                words = words[j + 1:]
                break
        else:
            return []
    return words


def valid_tail(tail):
    """What may follow a function's parameter list before its body."""
    j = 0
    while j < len(tail):
        t = tail[j]
        if t in QUALIFIERS:
            j += 1
            if t == 'noexcept' and j < len(tail) and tail[j] == '(':
                j = matching(tail, j, '(', ')') + 1
        elif t == '[' and tail[j + 1:j + 2] == ['[']:
            j = matching(tail, j, '[', ']') + 1
        elif t == '->':
            return True  # a trailing return type
        elif t == ':':
            return tail[-1] in (')', '}')  # a constructor's initializer list, each member's ( ) or { } closed
        else:
            return False
    return True


def function_name(words):
    """'name', 'a::name', 'lambda' or the macro's name, for a function header; None if it is none."""
    words = skip_template(words)
    if not words:
        return None
    first_paren = words.index('(') if '(' in words else len(words)
    if any(w in CONTAINERS for w in words[:first_paren]):
        return None
    j = 0
    while j < len(words):
        if words[j] == '(':
            close = matching(words, j, '(', ')')
            if valid_tail(words[close + 1:]):
                k, name = j - 1, []
                if k >= 0 and words[k] == ']':
                    return 'lambda'
                if k >= 0 and words[k - 1:k] == ['operator']:
                    return 'operator' + words[k]
                if k >= 1 and words[k] == ')' and words[k - 1] == '(' and words[k - 2:k - 1] == ['operator']:
                    return 'operator()'
                while k >= 0 and re.match(r'[A-Za-z_]', words[k]):
                    name.insert(0, words[k])
                    if k >= 1 and words[k - 1] == '~':
                        name[0] = '~' + name[0]
                        k -= 1
                    if k >= 1 and words[k - 1] == '::':
                        name.insert(0, '::')
                        k -= 2
                    else:
                        break
                return ''.join(name).lstrip(':') or 'lambda'
            j = close + 1
        else:
            j += 1
    if words and words[-1] == ']' and '[' in words:
        return 'lambda'
    return None


def cpp_functions(text):
    """(name, first line, last line) of every function body in a C++ source."""
    tokens = cpp_tokens(text)
    found = []
    # each scope: ['scope' | 'init' | 'function', name, first line]; headers[i] belongs to scopes[:i]
    scopes, header = [], []
    headers = []
    depth_in_function = 0
    for tok, line in tokens:
        if depth_in_function:
            if tok == '{':
                depth_in_function += 1
            elif tok == '}':
                depth_in_function -= 1
                if depth_in_function == 0:
                    kind, name, first = scopes.pop()
                    found.append((name, first, line))
                    header = headers.pop()
                    header.clear()
            continue
        in_init = bool(scopes) and scopes[-1][0] == 'init'
        if tok == '{':
            words = [w for w, _ in header]
            name = function_name(words)
            if name is not None:
                scopes.append(['function', name, header[0][1] if header else line])
                headers.append(header)
                header = []
                depth_in_function = 1
            elif not in_init and skip_template(words)[:1] and any(w in CONTAINERS for w in skip_template(words)):
                scopes.append(['scope', None, line])
                headers.append(header)
                header = []
            else:
                scopes.append(['init', None, line])
                headers.append(header)
                header = []
        elif tok == '}':
            if not scopes:
                continue
            kind, _, _ = scopes.pop()
            header = headers.pop()
            if kind == 'init':
                header.append(('{', line))
                header.append(('}', line))
            else:
                header = []
        elif tok == ';' or (in_init and tok == ','):
            header = []
        elif tok == ':' and len(header) == 1 and header[0][0] in ACCESS:
            header = []
        else:
            header.append((tok, line))
    return found


def python_functions(text, filename):
    for node in ast.walk(ast.parse(text, filename=filename)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node.lineno, node.end_lineno


def tracked_files(repo):
    out = subprocess.run(['git', 'ls-files', '--cached', '--others', '--exclude-standard'], cwd=repo,
                         capture_output=True, text=True, check=True).stdout
    return sorted(f for f in out.splitlines() if (repo / f).is_file())


def scanned(path):
    if path.endswith(('.cpp', '.hpp')):
        return path.startswith(('src/', 'native/', 'bindings/'))
    return path.endswith('.py') and str(pathlib.PurePosixPath(path).parent) == 'bindings/python/mano'


def functions(repo, path):
    text = (repo / path).read_text(encoding='utf-8')
    if path.endswith('.py'):
        return list(python_functions(text, path))
    return cpp_functions(text)


def check(repo, files=None, allowed=ALLOWED, max_lines=MAX_LINES):
    repo = pathlib.Path(repo)
    skip = []
    layers = repo / 'tests/structure/layers.json'
    if layers.is_file():
        skip = json.loads(layers.read_text())['not_hand_written']['paths']
    problems = []
    for path in files if files is not None else tracked_files(repo):
        if not scanned(path) or any(fnmatch.fnmatch(path, p) for p in skip):
            continue
        try:
            found = functions(repo, path)
        except (OSError, UnicodeDecodeError, SyntaxError) as e:
            problems.append(f'{path}: cannot read its functions ({e})')
            continue
        for name, first, last in found:
            length = last - first + 1
            if length > max_lines and (path, name.split('::')[-1]) not in allowed:
                problems.append(f'{path}:{first}: {name} is {length} lines, over the limit of {max_lines}: '
                                'split it into named steps')
    return problems


def report(problems, passed):
    """Prints each problem (and exits 1), or the line that says the repository passed."""
    for p in problems:
        print('mano structure: ' + p)
    if problems:
        sys.exit(1)
    print('mano structure: ' + passed)


def main():
    repo = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2]).resolve()
    report(check(repo), f'no function in src/, native/ or bindings/ is over {MAX_LINES} lines')


if __name__ == '__main__':
    main()
