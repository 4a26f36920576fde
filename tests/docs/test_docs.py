"""The documentation cannot drift from the code or rot:

- every relative link and image in README.md and docs/ points at a file that exists, and a link
  with a #fragment at a heading of that file (GitHub's anchors);
- the generated parts (docs/methods.md, docs/cli-options.md) are what
  docs/make.py writes from this build's `mano`, and the npm and Python types of the JSON shapes
  (web/src/shapes.d.ts, mano/_shapes.pyi) what bindings/make_types.py writes from their schema;
- every code block marked runnable (a `<!-- runnable -->` line before it) runs and exits 0: sh
  blocks with bash, python blocks with /usr/bin/python3, in the repository root, with this
  build's `mano` first on PATH and its Python package importable.

  /usr/bin/python3 tests/docs/test_docs.py build/release/native/mano"""
import os
import pathlib
import re
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
MANO = os.path.abspath(sys.argv[1])
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


def runnable_blocks():
    for page in pages():
        lines = page.read_text().splitlines()
        for i, line in enumerate(lines):
            if line.strip() != "<!-- runnable -->":
                continue
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            fence = re.match(r"^```(\w+)", lines[j]) if j < len(lines) else None
            if not fence:
                failures.append(f"{page.relative_to(REPO)}:{i + 1}: <!-- runnable --> is not followed by a code block")
                continue
            end = next(k for k in range(j + 1, len(lines)) if lines[k].startswith("```"))
            yield page, j + 1, fence.group(1), "\n".join(lines[j + 1:end])


def check_runnable():
    env = dict(os.environ, PATH=f"{os.path.dirname(MANO)}:{os.environ['PATH']}",
               PYTHONPATH=str(pathlib.Path(MANO).parents[1] / "python"))
    count = 0
    for page, line, language, code in runnable_blocks():
        runner = {"sh": ["bash", "-euo", "pipefail", "-c"], "python": ["/usr/bin/python3", "-c"]}.get(language)
        where = f"{page.relative_to(REPO)}:{line} ({language})"
        if runner is None:
            failures.append(f"{where}: runnable blocks are sh or python")
            continue
        r = subprocess.run([*runner, code], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
        count += 1
        if r.returncode != 0:
            failures.append(f"{where}: exited {r.returncode}:\n{r.stderr[-2000:]}")
    print(f"runnable blocks: {count} ran")


check_links()
check_generated()
check_runnable()
for f in failures:
    print("FAIL", f)
print(f"{'FAILED' if failures else 'passed'}: {len(failures)} problems")
sys.exit(1 if failures else 0)
