#!/usr/bin/env python3
"""Checks that every code sample of the product's Tools page is carried verbatim by a test.

The page (`../shared/seeds/tools-page-de.txt` beside the repository, as CI has it; the
Spanish page `tools-page-es.txt` has the same code with its comments translated, and
`tools-typescript-es.md` adds fenced TypeScript samples) is plain text: its samples are the
blocks of several lines between blank lines (a block whose brackets are still open, or
that continues the block before it in the same language, joins it); headings and
paragraphs are single lines (an import statement alone aside), tables hold tabs. Each sample's lines, each without its
leading whitespace (the harness around a fragment indents it; gofmt reindents Go), must
appear as consecutive lines of the test file this script names for it. Exit status 1 when
one does not (unless PENDING gives the reason), or when the page's samples are not the ones
listed here (a changed page).

    scripts/check-tools-page-samples.py [--pages DIR] [--list]
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (page section, language) -> the test file that carries the sample (relative to ROOT), or
# None with the reason when no test can run it on this machine.
CARRIERS = {
    ("define", "typescript"): "bindings-node/test/tools-page.test.ts",
    ("define", "python"): "bindings-python/tests/test_tools_page.py",
    ("define", "go"): "bindings-go/toolspage_test.go",
    ("define", "csharp"): "bindings-dotnet/tests/ToolsPageTests.cs",
    ("define", "php"): "bindings-php/tests/ToolsTest.php",
    ("define", "ruby"): "bindings-ruby/test/tools_test.rb",
    ("define", "java"): "bindings-uniffi/kotlin/src/test/java/app/phaseo/agent/javaapi/ToolsPageTest.java",
    ("define", "rust"): "core/tests/tools_page.rs",
    ("approval", "typescript"): "bindings-node/test/tools-page.test.ts",
    ("approval", "python"): "bindings-python/tests/test_tools_page.py",
    ("approval", "go"): "bindings-go/toolspage_test.go",
    ("approval", "csharp"): "bindings-dotnet/tests/ToolsPageTests.cs",
    ("approval", "php"): "bindings-php/tests/ToolsTest.php",
    ("approval", "ruby"): "bindings-ruby/test/tools_test.rb",
    ("approval", "rust"): "core/tests/tools_page.rs",
    ("handoff", "rust"): "core/tests/tools_page.rs",
    ("progress", "typescript"): "bindings-node/test/tools-page.test.ts",
    ("progress", "python"): "bindings-python/tests/test_tools_page.py",
    ("progress", "go"): "bindings-go/toolspage_test.go",
    ("progress", "csharp"): "bindings-dotnet/tests/ToolsPageTests.cs",
    ("progress", "php"): "bindings-php/tests/ToolsTest.php",
    ("progress", "ruby"): "bindings-ruby/test/tools_test.rb",
    ("progress", "java"): "bindings-uniffi/kotlin/src/test/java/app/phaseo/agent/javaapi/ToolsPageTest.java",
    # tools-typescript-es.md (fenced): the same define sample, a progress sample without
    # `context`, and the concurrency sample.
    ("md-define", "typescript"): "bindings-node/test/tools-page.test.ts",
    ("md-progress", "typescript"): "bindings-node/test/tools-page.test.ts",
    ("md-concurrency", "typescript"): "bindings-node/test/tools-page.test.ts",
}

# Samples no test carries yet, with the reason: printed as PENDING, not a failure. The C#
# samples need C# 8 (`object?`, `!`), which this machine's compiler (Mono's mcs, C# 7.2) lacks.
PENDING = {
    ("define", "csharp"): "C# 8 syntax; no C# 8 compiler on this machine",
    ("approval", "csharp"): "C# 8 syntax; no C# 8 compiler on this machine",
    ("progress", "csharp"): "C# 8 syntax; no C# 8 compiler on this machine",
}

SECTIONS = {
    "Ein Tool definieren": "define",
    "Freigabe verlangen": "approval",
    "Einen Aufruf an einen Menschen oder ein anderes System übergeben": "handoff",
    "Fortschritt melden und Kontext aktualisieren": "progress",
    "Define una herramienta": "define",
    "Exige aprobación": "approval",
    "Pasa una llamada a una persona o a otro sistema": "handoff",
    "Informa del progreso y actualiza el contexto": "progress",
}

# First match wins; each is tried on the whole sample.
LANGUAGES = [
    ("php", re.compile(r"\$[A-Za-z_]")),
    ("ruby", re.compile(r"->\(|PhaseoAgentSdk")),
    ("rust", re.compile(r"^\s*(let|use) |json!\(|Tool::", re.M)),
    ("java", re.compile(r"\) -> |new AgentSdk\.Tool")),
    ("go", re.compile(r":=|phaseoagent\.|Execute: func")),
    ("typescript", re.compile(r"defineTool\(\{|^\s*(const|import \{) ", re.M)),
    ("csharp", re.compile(r"=>|AgentSdk\.DefineTool")),
    ("python", re.compile(r"define_tool\(|^\s*(def|import|from) ", re.M)),
]


def language(text):
    for name, pattern in LANGUAGES:
        if pattern.search(text):
            return name
    return None


def balance(text):
    depth = 0
    for c in text:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
    return depth


def plain_samples(text):
    """[(section, language, lines)] of a plain-text page."""
    chunks = re.split(r"\n[ \t]*\n", text.replace("\r\n", "\n"))
    samples = []
    section = None
    previous_was_code = False
    for chunk in chunks:
        lines = chunk.strip("\n").split("\n")
        one_import = len(lines) == 1 and re.match(r"(import|use) .*;$", lines[0])
        if (len(lines) == 1 and not one_import) or "\t" in chunk:
            heading = lines[0].strip()
            if heading in SECTIONS:
                section = SECTIONS[heading]
            previous_was_code = False
            continue
        if previous_was_code and samples:
            sec, lang, body = samples[-1]
            joined = "\n".join(body)
            if balance(joined) > 0 or language(chunk) == lang:
                samples[-1] = (sec, lang, body + [""] + lines)
                previous_was_code = True
                continue
        samples.append((section, language(chunk), lines))
        previous_was_code = True
    return [(s, language("\n".join(b)) if balance("\n".join(b)) == 0 else l, b) for s, l, b in samples]


def fenced_samples(text):
    out = []
    sections = {"Define una herramienta local": "md-define", "Publica el progreso": "md-progress",
                "Ejecuta herramientas independientes en paralelo": "md-concurrency"}
    section = None
    for m in re.finditer(r"^## ([^\n]*)$|^```(\w+)[^\n]*\n(.*?)^```", text, re.M | re.S):
        if m.group(1):
            section = sections.get(m.group(1).strip())
        elif section:
            out.append((section, m.group(2), m.group(3).rstrip("\n").split("\n")))
    return out


def strip_comments(lines):
    """The code without comments (the Spanish page translates them)."""
    out = []
    for line in lines:
        line = re.sub(r"\s*(//|#) [^\"]*$", "", line)
        if line.strip():
            out.append(line.rstrip())
    return out


def carried(sample, path):
    want = [line.strip() for line in sample]
    with open(path, encoding="utf-8") as f:
        have = [line.strip() for line in f.read().split("\n")]
    n = len(want)
    return any(have[i:i + n] == want for i in range(len(have) - n + 1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", default=os.path.join(ROOT, "..", "shared", "seeds"))
    parser.add_argument("--list", action="store_true", help="print every sample")
    args = parser.parse_args()
    with open(os.path.join(args.pages, "tools-page-de.txt"), encoding="utf-8") as f:
        german = plain_samples(f.read())
    with open(os.path.join(args.pages, "tools-page-es.txt"), encoding="utf-8") as f:
        spanish = plain_samples(f.read())
    with open(os.path.join(args.pages, "tools-typescript-es.md"), encoding="utf-8") as f:
        fenced = fenced_samples(f.read())
    failures = []
    if [(s, l, strip_comments(b)) for s, l, b in german] != [(s, l, strip_comments(b)) for s, l, b in spanish]:
        failures.append("the German and the Spanish page differ in their code (apart from comments)")
    samples = german + fenced
    # The fenced define sample is the plain page's, byte for byte: counted once.
    define_ts = [b for s, l, b in german if (s, l) == ("define", "typescript")]
    samples = [x for x in samples if not (x[0] == "md-define" and [x[2]] == define_ts)]
    keys = [(s, l) for s, l, _ in samples]
    if sorted(keys) != sorted(k for k in CARRIERS if not (k == ("md-define", "typescript") and define_ts)):
        failures.append("the page's samples are not the ones this script lists: " + repr(keys))
    for n, (section, lang, body) in enumerate(samples, 1):
        path = CARRIERS.get((section, lang))
        ok = bool(path) and os.path.exists(os.path.join(ROOT, path)) and carried(body, os.path.join(ROOT, path))
        pending = PENDING.get((section, lang))
        state = "verbatim" if ok else "PENDING " if pending else "MISSING "
        print(f"{n:2} {section:15} {lang:11} {state} {path}" + (f" ({pending})" if pending and not ok else ""))
        if args.list:
            print("\n".join("      | " + line for line in body))
        if ok and pending:
            failures.append(f"sample {n} ({section}, {lang}) is carried now: take it out of PENDING")
        elif not ok and not pending:
            failures.append(f"sample {n} ({section}, {lang}) is not verbatim in {path}")
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    carried_now = sum(1 for s_, l_, b_ in samples if CARRIERS.get((s_, l_))
                      and os.path.exists(os.path.join(ROOT, CARRIERS[(s_, l_)]))
                      and carried(b_, os.path.join(ROOT, CARRIERS[(s_, l_)])))
    print(f"{len(samples)} samples, {carried_now} carried verbatim, {len(samples) - carried_now} not")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
