"""The documentation cannot drift from the code or rot:

- every relative link and image in README.md and docs/ points at a file that exists, and a link
  with a #fragment at a heading of that file (GitHub's anchors);
- the generated parts (docs/methods.md, docs/cli-options.md) are what
  docs/make.py writes from this build's `mano`, and the npm and Python types of the JSON shapes
  (web/src/shapes.d.ts, mano/_shapes.pyi) what bindings/make_types.py writes from their schema;
- every code block marked runnable (a `<!-- runnable -->` line before it) runs and exits 0: sh
  blocks with bash, python blocks with /usr/bin/python3, in the repository root, with this
  build's `mano` first on PATH and its Python package importable;
- every output block (a `<!-- output -->` line before it) is what the runnable block before it
  prints, numbers included, and every other plain or `text` block says what it is instead
  (`<!-- not output: why -->`), so that no page shows a program's output that it no longer prints.

  /usr/bin/python3 tests/docs/test_docs.py build/release/native/mano
  /usr/bin/python3 tests/docs/test_docs.py build/release/native/mano --write   # rewrite the output blocks"""
import os
import pathlib
import re
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[2]
MANO = os.path.abspath(sys.argv[1])
WRITE = "--write" in sys.argv[2:]
# Pages written by docs/make.py (checked against it above), whose blocks are --help text.
GENERATED = {"docs/cli-options.md", "docs/methods.md", "docs/cli.md"}
failures = []


def pages():
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def without_code(text):
    """The text with fenced code blocks and inline code blanked (links there are not links)."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def anchors(path):
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to '-', repeats numbered."""
    seen, out = {}, set()
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M)
    for line in text.splitlines():
        m = re.match(r"^#{1,6} (.*)", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def check_links():
    count = 0
    for page in pages():
        for target in re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", without_code(page.read_text())):
            if re.match(r"^(https?:|mailto:)", target):
                continue
            count += 1
            file, _, fragment = target.partition("#")
            dest = page if not file else (page.parent / file).resolve()
            where = f"{page.relative_to(REPO)}: link '{target}'"
            if not dest.exists():
                failures.append(f"{where}: {file} does not exist")
            elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
                failures.append(f"{where}: {dest.relative_to(REPO)} has no heading #{fragment}")
    print(f"links: {count} relative links and images checked")


def check_generated():
    r = subprocess.run(["/usr/bin/python3", str(REPO / "docs/make.py"), MANO, "--check"], capture_output=True, text=True)
    if r.returncode != 0:
        failures.append("docs/make.py --check: the generated docs are stale:\n" + r.stdout[-3000:] + r.stderr)
    r = subprocess.run(["/usr/bin/python3", str(REPO / "bindings/make_types.py"), "--check"], capture_output=True, text=True)
    if r.returncode != 0:
        failures.append("bindings/make_types.py --check: the generated types are stale: " + r.stderr)
    print("generated docs and types: checked")


def fences(lines):
    """(first line, last line, language) of each fenced block, 0-based, the fences included."""
    i = 0
    while i < len(lines):
        m = re.match(r"^\s*```(\S*)", lines[i])
        if m:
            end = next((k for k in range(i + 1, len(lines)) if lines[k].strip().startswith("```")), len(lines) - 1)
            yield i, end, m.group(1)
            i = end
        i += 1


def marker_before(lines, start):
    """The `<!-- ... -->` line just before a fence (blank lines between allowed), or ""."""
    j = start - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    return lines[j].strip() if j >= 0 and lines[j].strip().startswith("<!--") else ""


def blocks(page):
    """Each block of a page: (start, end, language, marker)."""
    lines = page.read_text().splitlines()
    return lines, [(a, b, lang, marker_before(lines, a)) for a, b, lang in fences(lines)]


def run_block(language, code, env):
    runner = {"sh": ["bash", "-euo", "pipefail", "-c"], "python": ["/usr/bin/python3", "-c"]}.get(language)
    if runner is None:
        return None
    return subprocess.run([*runner, code], cwd=REPO, env=env, capture_output=True, text=True, timeout=900)


def tidy(text):
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def check_page(page, env):
    """Runs the page's runnable blocks; compares (or, with --write, rewrites) its output blocks."""
    lines, found = blocks(page)
    name = page.relative_to(REPO).as_posix()
    ran, compared, last = 0, 0, None
    replacements = []
    for start, end, language, marker in found:
        where = f"{name}:{start + 1}"
        code = "\n".join(lines[start + 1:end])
        if marker == "<!-- runnable -->":
            r = run_block(language, code, env)
            if r is None:
                failures.append(f"{where}: runnable blocks are sh or python")
                continue
            ran += 1
            last = r
            if r.returncode != 0:
                failures.append(f"{where} ({language}): exited {r.returncode}:\n{r.stderr[-2000:]}")
        elif marker == "<!-- output -->":
            if last is None:
                failures.append(f"{where}: an output block needs a runnable block before it")
                continue
            compared += 1
            if tidy(last.stdout) != tidy(code):
                if WRITE:
                    replacements.append((start + 1, end, tidy(last.stdout).splitlines()))
                else:
                    failures.append(f"{where}: the output block is not what the command above it prints now "
                                    f"(rewrite it: tests/docs/test_docs.py MANO --write):\n{tidy(last.stdout)[:1500]}")
            last = None
        elif language in ("", "text", "console") and name not in GENERATED and not marker.startswith("<!-- not output"):
            failures.append(f"{where}: a plain block is an output block (<!-- output --> after the runnable block "
                            f"that prints it) or says what it is (<!-- not output: why -->)")
    if replacements:
        for a, b, new in reversed(replacements):
            lines[a:b] = new
        page.write_text("\n".join(lines) + "\n")
        print(f"rewrote {len(replacements)} output blocks of {name}")
    return ran, compared


def check_runnable():
    # the blocks' own mktemp folders go into one that is removed after them
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PATH=f"{os.path.dirname(MANO)}:{os.environ['PATH']}",
                   PYTHONPATH=str(pathlib.Path(MANO).parents[1] / "python"), TMPDIR=tmp)
        ran = compared = 0
        for page in pages():
            r, c = check_page(page, env)
            ran, compared = ran + r, compared + c
    print(f"runnable blocks: {ran} ran; output blocks: {compared} compared")


check_links()
check_generated()
check_runnable()
for f in failures:
    print("FAIL", f)
print(f"{'FAILED' if failures else 'passed'}: {len(failures)} problems")
sys.exit(1 if failures else 0)
