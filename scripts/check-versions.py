#!/usr/bin/env python3
"""One version everywhere: every package manifest carries the workspace version.

    scripts/check-versions.py              check the repository; print each manifest's version
    scripts/check-versions.py --version    print the workspace version (what `make dist` stamps)
    scripts/check-versions.py --self-test  prove the check fails: in a copy of the manifests,
                                           change each one's version and expect a failure
                                           naming that file

The workspace version is `[workspace.package] version` of the root Cargo.toml. Checked
against it: each workspace member's Cargo.toml (`version.workspace = true` or the same
version), every pyproject.toml of a `phaseo` project, every package.json of an `@phaseo/`
package (and its package-lock.json, and the `optionalDependencies` pins on the platform
packages), every pom.xml of group `app.phaseo`, the Ruby gemspec and `PhaseoAgentSdk::VERSION`.
A further binding's manifest gets a reader in `OTHER_CHECKS` below.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

SKIP_DIRS = {"target", "node_modules", ".git", ".venvs", ".venv", "dist", "__pycache__"}
MAVEN = "{http://maven.apache.org/POM/4.0.0}"


def manifests(root: Path, name: str) -> list[Path]:
    """Files called `name` under `root`, outside build outputs and installed packages."""
    found = []
    for path in sorted(root.rglob(name)):
        if not SKIP_DIRS.intersection(path.relative_to(root).parts[:-1]):
            found.append(path)
    return found


def workspace_version(root: Path) -> str:
    with open(root / "Cargo.toml", "rb") as f:
        return tomllib.load(f)["workspace"]["package"]["version"]


def cargo_versions(root: Path) -> list[tuple[Path, str]]:
    with open(root / "Cargo.toml", "rb") as f:
        members = tomllib.load(f)["workspace"]["members"]
    out = []
    for member in members:
        path = root / member / "Cargo.toml"
        with open(path, "rb") as f:
            version = tomllib.load(f)["package"].get("version")
        if isinstance(version, dict) and version.get("workspace") is True:
            continue  # inherits the workspace version
        out.append((path, str(version)))
    return out


def pyproject_versions(root: Path) -> list[tuple[Path, str]]:
    out = []
    for path in manifests(root, "pyproject.toml"):
        with open(path, "rb") as f:
            project = tomllib.load(f).get("project", {})
        if not str(project.get("name", "")).startswith("phaseo"):
            continue
        if "version" in project.get("dynamic", []):
            continue  # maturin takes it from Cargo.toml
        out.append((path, str(project.get("version"))))
    return out


def npm_versions(root: Path) -> list[tuple[Path, str]]:
    out = []
    for path in manifests(root, "package.json"):
        package = json.loads(path.read_text())
        if not str(package.get("name", "")).startswith("@phaseo/"):
            continue
        out.append((path, str(package.get("version"))))
        for dep, pin in package.get("optionalDependencies", {}).items():
            if dep.startswith("@phaseo/"):
                out.append((path, str(pin)))
        lock = path.parent / "package-lock.json"
        if lock.exists():
            data = json.loads(lock.read_text())
            out.append((lock, str(data.get("version"))))
            out.append((lock, str(data.get("packages", {}).get("", {}).get("version"))))
    return out


def maven_versions(root: Path) -> list[tuple[Path, str]]:
    out = []
    for path in manifests(root, "pom.xml"):
        project = ET.parse(path).getroot()
        if project.findtext(f"{MAVEN}groupId") != "app.phaseo":
            continue
        out.append((path, str(project.findtext(f"{MAVEN}version"))))
    return out


def gem_versions(root: Path) -> list[tuple[Path, str]]:
    """The Ruby gem: `s.version` of each gemspec and the module's `VERSION` constant."""
    out = []
    for path in manifests(root, "*.gemspec"):
        found = re.search(r'^\s*\w+\.version\s*=\s*"([^"]*)"', path.read_text(), re.M)
        out.append((path, found.group(1) if found else "(no version line)"))
    for path in manifests(root, "phaseo_agent_sdk.rb"):
        found = re.search(r'^\s*VERSION\s*=\s*"([^"]*)"', path.read_text(), re.M)
        if found:
            out.append((path, found.group(1)))
    return out


def csproj_versions(root: Path) -> list[tuple[Path, str]]:
    """The C# project (`<Version>` of every `Phaseo.*` .csproj)."""
    out = []
    for path in manifests(root, "*.csproj"):
        text = path.read_text()
        if not re.search(r"<PackageId>Phaseo\.", text):
            continue
        found = re.search(r"<Version>([^<]*)</Version>", text)
        out.append((path, found.group(1) if found else "(no <Version>)"))
    return out


# Readers of the further bindings' manifests (a Go module has no version line: its
# version is the repository tag).
OTHER_CHECKS = [gem_versions, csproj_versions]
CHECKS = [cargo_versions, pyproject_versions, npm_versions, maven_versions, *OTHER_CHECKS]


def check(root: Path, verbose: bool = True) -> list[str]:
    """The mismatches (empty when every manifest carries the workspace version)."""
    expected = workspace_version(root)
    problems = []
    for reader in CHECKS:
        for path, version in reader(root):
            rel = path.relative_to(root)
            if version != expected:
                problems.append(f"{rel}: version {version}, the workspace version is {expected}")
            elif verbose:
                print(f"ok {rel}: {version}")
    return problems


def self_test(root: Path) -> int:
    """Every checked manifest, changed alone in a copy, must make the check fail."""
    expected = workspace_version(root)
    files = {root / "Cargo.toml"}
    for reader in CHECKS:
        files.update(path for path, _ in reader(root))
    with open(root / "Cargo.toml", "rb") as f:
        members = tomllib.load(f)["workspace"]["members"]
    files.update(root / m / "Cargo.toml" for m in members)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp)
        for path in files:
            target = copy / path.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
        if check(copy, verbose=False):
            print("FAIL the unchanged copy does not pass")
            return 1
        bumped = expected + "-changed"
        for path in sorted(files):
            rel = path.relative_to(root)
            target = copy / rel
            original = target.read_text()
            if rel == Path("Cargo.toml"):
                changed = re.sub(r'(\[workspace\.package\]\s*\nversion = )"[^"]*"', rf'\1"{bumped}"', original)
            elif "version.workspace = true" in original:
                changed = original.replace("version.workspace = true", f'version = "{bumped}"', 1)
            else:
                changed = original.replace(expected, bumped, 1)
            target.write_text(changed)
            problems = check(copy, verbose=False)
            target.write_text(original)
            if problems:
                print(f"PASS a changed version in {rel} fails the check: {problems[0]}")
            else:
                print(f"FAIL a changed version in {rel} passes the check")
                failures += 1
    return 1 if failures else 0


def main() -> int:
    root = Path(__file__).resolve().parent.parent
    if sys.argv[1:] == ["--version"]:
        print(workspace_version(root))
        return 0
    if sys.argv[1:] == ["--self-test"]:
        return self_test(root)
    problems = check(root)
    for problem in problems:
        print(f"FAIL {problem}", file=sys.stderr)
    if problems:
        print("every manifest must carry the workspace version (root Cargo.toml [workspace.package])", file=sys.stderr)
        return 1
    print(f"one version everywhere: {workspace_version(root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
