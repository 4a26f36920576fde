#!/usr/bin/env python3
"""check_function_length.py finds the long functions planted in a small repository made here, in C++
and Python, with their file:line, name and length; is not fooled by braces in comments, strings,
char and raw literals, initializers, classes and namespaces; counts lambdas and blocks toward their
function; and passes once the long ones are short. Then it checks this repository."""
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import check_function_length  # noqa: E402


def body(n):
    """n lines of statements (so that the function spans n + 2 lines with its signature and brace)."""
    return ''.join(f'    x += {i};\n' for i in range(n))


def repo_with(files):
    root = pathlib.Path(tempfile.mkdtemp())
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    subprocess.run(['git', 'init', '-q'], cwd=root, check=True)
    return root


CPP_NOISE = (
    '// a comment with { braces } and void f() {\n'
    '/* a block comment { spanning\n   lines */\n'
    '#define OPEN {\n'
    'namespace mano::detail {\n'
    'const char* s = "}{ \\" {";\n'
    "const char c = '{';\n"
    "const long big = 1'000'000;\n"
    'const char* r = R"x(raw } { ")" text)x";\n'
    'int table[] = {1, 2, {3}};\n'
    'struct point : base<decltype(f())> {\n'
    '    int x{0};\n'
    'public:\n'
)


def cpp_file(short, long_method, long_free, long_ctor, long_lambda_holder):
    return (CPP_NOISE
            + '    int method(int a) const noexcept override {\n' + body(long_method) + '    }\n'
            + '};\n'
            + 'point::point(int a) : x_(a), y_{a} {\n' + body(long_ctor) + '}\n'
            + 'auto trailing(int a) -> std::vector<int> {\n' + body(short) + '}\n'
            + 'template <class T, int N = 3>\nstatic inline T free_function(T a) {\n'
            + '    if (a) { auto f = [&](int y) { return y; }; }\n' + body(long_free) + '}\n'
            + 'void holder() {\n    auto g = [] {\n' + body(long_lambda_holder) + '    };\n}\n'
            + 'PYBIND11_MODULE(_core, m) {\n' + body(short) + '}\n'
            + 'TEST_CASE("a {", "[x]") {\n' + body(short) + '}\n'
            + '}  // namespace mano::detail\n')


def python_file(long_method, long_function):
    return ('class Thing:\n'
            '    """A class is not a function."""\n'
            + ''.join(f'    a{i} = {i}\n' for i in range(100))
            + '    def method(self):\n' + ''.join(f'        x = {i}\n' for i in range(long_method)) + '\n'
            + 'def function(a):\n' + ''.join(f'    x = {i}\n' for i in range(long_function)) + '\n'
            + 'async def short():\n    return 1\n')


def main():
    bad = repo_with({
        'src/mano/a.cpp': cpp_file(short=3, long_method=79, long_free=78, long_ctor=79, long_lambda_holder=78),
        'bindings/python/mano/_x.py': python_file(long_method=80, long_function=80),
        'tests/core/skipped.cpp': 'void f() {\n' + body(200) + '}\n',
        'bindings/python/mano/sub/skipped.py': 'def f():\n' + '    x = 1\n' * 200,
    })
    problems = check_function_length.check(bad, allowed=set())
    lines = (bad / 'src/mano/a.cpp').read_text().splitlines()
    def where(text):
        return next(i for i, l in enumerate(lines, 1) if text in l)
    want = [
        f'src/mano/a.cpp:{where("int method(int a)")}: method is 81 lines',
        f'src/mano/a.cpp:{where("point::point")}: point::point is 81 lines',
        f'src/mano/a.cpp:{where("template <class T")}: free_function is 82 lines',  # the lambda counts
        f'src/mano/a.cpp:{where("void holder")}: holder is 82 lines',
        'bindings/python/mano/_x.py:103: method is 81 lines',
        'bindings/python/mano/_x.py:185: function is 81 lines',
    ]
    for w in want:
        assert any(p.startswith(w + ', over the limit of 80') for p in problems), f'not reported: {w}\n got: {problems}'
    assert len(problems) == len(want), problems

    # the allowlist names (file, function)
    allowed = {('src/mano/a.cpp', 'method'), ('src/mano/a.cpp', 'point'), ('src/mano/a.cpp', 'free_function'),
               ('src/mano/a.cpp', 'holder'), ('bindings/python/mano/_x.py', 'method'),
               ('bindings/python/mano/_x.py', 'function')}
    assert check_function_length.check(bad, allowed=allowed) == []

    good = repo_with({
        'src/mano/a.cpp': cpp_file(short=3, long_method=78, long_free=76, long_ctor=78, long_lambda_holder=76),
        'bindings/python/mano/_x.py': python_file(long_method=79, long_function=79),
    })
    assert check_function_length.check(good, allowed=set()) == [], check_function_length.check(good, allowed=set())
    names = {n for n, _, _ in check_function_length.cpp_functions((good / 'src/mano/a.cpp').read_text())}
    assert names == {'method', 'point::point', 'trailing', 'free_function', 'holder', 'PYBIND11_MODULE',
                     'TEST_CASE'}, names

    mine = check_function_length.check(HERE.parents[1])
    assert mine == [], '\n'.join(mine)
    print('structure: the check reports functions over 80 lines in C++ and Python, and this repository has none')


if __name__ == '__main__':
    main()
