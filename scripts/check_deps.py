#!/usr/bin/python3
"""Checks that scripts/bootstrap.sh's package list is complete.

Collects every file under /usr that DISC's build and tests read, maps each to
the Debian package that owns it (the dpkg database), and fails when a package
is neither in the bootstrap list's Depends closure
(`apt-cache depends --recurse --no-recommends --no-suggests`) nor part of
every Debian system (Essential: yes or Priority: required, with their
closure). Such a package was on this machine by chance: a fresh machine would
not have it, and the README's first command would fail there.

Files come from:
  - a fresh CMake configure traced with --trace-expand --trace-format=json-v1
    (every CMake script it ran, every existing path in a command's
    arguments) and the CMakeCache.txt it writes (found programs, libraries);
  - the build directory: `ninja -t deps` (every header a compile read) and
    the absolute paths in build.ninja (compilers, tools, link inputs);
  - `ldd` of the built executables and shared libraries, compiled model.so
    files included;
  - the Python modules the project's scripts and tests import, imported in
    /usr/bin/python3 (module files and the shared objects mapped into the
    process).

Usage: scripts/check_deps.py [--bootstrap FILE] [--build-dir DIR]
Exit status: 0 complete, 1 a package is missing from the list, 2 bad usage or
a collection step failed.
"""

import argparse
import ast
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

# Packages that CMake modules look for on their own and that nothing in the
# build or the tests uses: found when present, skipped when absent.
OPTIONAL = {
    "libxml2-utils": "FindLibXml2 (through LLVM's CMake config) looks for "
                     "xmllint; no build step runs it",
}

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYSTEM_PREFIXES = ("/usr/", "/lib/", "/lib64/", "/bin/", "/sbin/")


def fail(msg):
    print(f"check-deps: error: {msg}", file=sys.stderr)
    sys.exit(2)


def run(cmd, **kw):
    return subprocess.run(cmd, check=False, capture_output=True, text=True, **kw)


def bootstrap_packages(path):
    """The PACKAGES=( ... ) array of a bootstrap script, comments removed."""
    text = open(path).read()
    m = re.search(r"^PACKAGES=\((.*?)^\)", text, re.S | re.M)
    if not m:
        fail(f"{path}: no PACKAGES=( ... ) array")
    pkgs = []
    for line in m.group(1).splitlines():
        pkgs += line.split("#", 1)[0].split()
    return pkgs


def depends_closure(pkgs):
    """Real packages reachable from pkgs through Depends/PreDepends."""
    if not pkgs:
        return set()
    r = run(["apt-cache", "depends", "--recurse", "--no-recommends",
             "--no-suggests", "--no-conflicts", "--no-breaks", "--no-replaces",
             "--no-enhances"] + sorted(pkgs))
    if r.returncode != 0:
        fail(f"apt-cache depends failed: {r.stderr.strip()}")
    out = set()
    for line in r.stdout.splitlines():
        if line and not line[0].isspace():
            out.add(line.strip().strip("<>").split(":")[0])
        elif line.strip() and ":" not in line:
            # Providers of a virtual package are listed indented, alone.
            out.add(line.strip().split(":")[0])
    return out


def base_system():
    """Packages every Debian system has: Essential or Priority required."""
    r = run(["dpkg-query", "-W", "-f=${Package} ${Essential} ${Priority}\n"])
    base = set()
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and ("yes" in parts[1:] or "required" in parts[1:]):
            base.add(parts[0])
    return depends_closure(base) | base


def dpkg_owners():
    """path -> set of owning packages, from /var/lib/dpkg/info/*.list."""
    owners = {}
    for lst in glob.glob("/var/lib/dpkg/info/*.list"):
        pkg = os.path.basename(lst)[:-5].split(":")[0]
        with open(lst, errors="replace") as f:
            for p in f:
                owners.setdefault(p.rstrip("\n"), set()).add(pkg)
    return owners


def aliases(path):
    """The spellings of path under Debian's merged /usr."""
    out = {path, os.path.realpath(path)}
    for p in list(out):
        for short in ("/lib/", "/lib64/", "/bin/", "/sbin/"):
            if p.startswith("/usr" + short):
                out.add(p[4:])
            elif p.startswith(short):
                out.add("/usr" + p)
    return out


def is_system(path):
    return path.startswith(SYSTEM_PREFIXES)


def add_path(files, path, origin):
    path = os.path.normpath(path)
    if is_system(path) and os.path.isfile(path):
        files.setdefault(path, origin)


def paths_in(text):
    return re.findall(r"(/(?:usr|lib|lib64|bin|sbin)/[^\s;:\"'<>$(){}]+)", text)


def collect_cmake(files, build_dir):
    """A fresh configure of the project, traced."""
    with tempfile.TemporaryDirectory(prefix="disc-deps-") as tmp:
        trace = os.path.join(tmp, "trace.json")
        cache_src = os.path.join(build_dir, "CMakeCache.txt")
        cmd = ["cmake", "-G", "Ninja", "-S", ROOT, "-B", os.path.join(tmp, "b"),
               "-DCMAKE_BUILD_TYPE=Release", "--trace-expand",
               "--trace-format=json-v1", f"--trace-redirect={trace}"]
        if os.path.isfile(cache_src):
            for line in open(cache_src):
                if line.startswith("LLVM_EXTERNAL_LIT:"):
                    cmd.append("-DLLVM_EXTERNAL_LIT=" + line.split("=", 1)[1].strip())
        r = run(cmd)
        if r.returncode != 0:
            print(r.stdout[-4000:], r.stderr[-4000:], file=sys.stderr)
            fail("the traced CMake configure failed")
        with open(trace) as f:
            for line in f:
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue
                if "file" in ev:
                    add_path(files, ev["file"], "cmake configure (script)")
                for a in ev.get("args", []):
                    for p in paths_in(a):
                        add_path(files, p, "cmake configure")
        with open(os.path.join(tmp, "b", "CMakeCache.txt")) as f:
            for p in paths_in(f.read()):
                add_path(files, p, "CMakeCache.txt")


def collect_ninja(files, build_dir):
    r = run(["ninja", "-C", build_dir, "-t", "deps"])
    if r.returncode != 0:
        fail(f"ninja -t deps in {build_dir} failed: {r.stderr.strip()}")
    for line in r.stdout.splitlines():
        if line.startswith("    "):
            add_path(files, line.strip(), "ninja deps (compile)")
    with open(os.path.join(build_dir, "build.ninja")) as f:
        for p in paths_in(f.read()):
            add_path(files, p, "build.ninja (tool or link input)")


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def collect_ldd(files, build_dir):
    elfs = []
    for dirpath, _, names in os.walk(build_dir):
        if "CMakeFiles" in dirpath:
            continue
        for n in names:
            p = os.path.join(dirpath, n)
            if (n.endswith(".so") or os.access(p, os.X_OK)) and not os.path.islink(p) \
                    and os.path.isfile(p) and is_elf(p):
                elfs.append(p)
    if not any(p.endswith("model.so") for p in elfs):
        print("check-deps: note: no compiled model.so under the build directory "
              "(run the tests first to include one)")
    for p in elfs:
        r = run(["ldd", p])
        for m in re.finditer(r"=>\s*(\S+)|^\s*(/\S+)", r.stdout, re.M):
            add_path(files, m.group(1) or m.group(2), f"ldd {os.path.relpath(p, build_dir)}")
    return len(elfs)


def project_imports():
    names = set()
    local = set()
    for dirpath, dirs, fnames in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and not d.startswith("build")
                   and d != "node_modules"]
        for n in fnames:
            if n.endswith(".py"):
                local.add(n[:-3])
                try:
                    tree = ast.parse(open(os.path.join(dirpath, n)).read())
                except (SyntaxError, UnicodeDecodeError):
                    continue
                for node in ast.walk(tree):
                    if isinstance(node, ast.Import):
                        names.update(a.name.split(".")[0] for a in node.names)
                    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                        names.add(node.module.split(".")[0])
    return sorted(names - local - set(sys.builtin_module_names))


PY_PROBE = r"""
import importlib, json, sys
# What the interpreter loaded before any import of the project's (site
# hooks of whatever else is installed, such as setuptools' .pth) is not a
# dependency of the project.
startup = set(getattr(m, "__file__", None) for m in list(sys.modules.values()))
startup |= set(l.split()[-1] for l in open("/proc/self/maps") if "/" in l)
mods = json.loads(sys.argv[1])
missing = []
for m in mods:
    try:
        importlib.import_module(m)
    except Exception as e:
        missing.append(m)
files = [getattr(m, "__file__", None) for m in list(sys.modules.values())]
maps = [l.split()[-1] for l in open("/proc/self/maps") if "/" in l]
used = [f for f in files + maps if f and f not in startup]
print(json.dumps({"files": used, "missing": missing}))
"""


def collect_python(files):
    mods = project_imports()
    py = "/usr/bin/python3"
    if not os.path.exists(py):
        fail("/usr/bin/python3 is missing")
    add_path(files, os.path.realpath(py), "python")
    r = run([py, "-c", PY_PROBE, json.dumps(mods)])
    if r.returncode != 0:
        fail(f"the Python import probe failed: {r.stderr.strip()[-2000:]}")
    res = json.loads(r.stdout)
    for f in res["files"]:
        if "__pycache__" in f:
            f = re.sub(r"__pycache__/([^/.]+)\.[^/]*\.pyc$", r"\1.py", f)
        add_path(files, f, "python import")
    return mods, res["missing"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bootstrap", default=os.path.join(ROOT, "scripts", "bootstrap.sh"),
                    help="bootstrap script whose PACKAGES list is checked")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, os.environ.get("BUILD_DIR", "build")),
                    help="a configured and built DISC build directory")
    args = ap.parse_args()
    if not os.path.isfile(os.path.join(args.build_dir, "build.ninja")):
        fail(f"{args.build_dir} is not a Ninja build directory (build first)")

    pkgs = bootstrap_packages(args.bootstrap)
    allowed = depends_closure(pkgs) | set(pkgs)
    base = base_system()
    owners = dpkg_owners()

    files = {}
    collect_cmake(files, args.build_dir)
    collect_ninja(files, args.build_dir)
    n_elf = collect_ldd(files, args.build_dir)
    mods, unimportable = collect_python(files)

    by_pkg = {}
    unowned = {}
    for path, origin in sorted(files.items()):
        found = set()
        for variant in [path, os.path.realpath(path)]:
            for a in aliases(variant):
                found |= owners.get(a, set())
        if not found:
            unowned[path] = origin
            continue
        # Every owner of every spelling must come with the list: a -dev
        # symlink and the library it points to are separate packages.
        for pkg in found:
            if pkg not in allowed and pkg not in base and pkg not in OPTIONAL:
                by_pkg.setdefault(pkg, []).append((path, origin))

    print(f"check-deps: {len(pkgs)} listed packages, {len(allowed)} with their Depends; "
          f"{len(files)} system files read by configure, build, {n_elf} binaries and "
          f"{len(mods)} Python modules")
    if unimportable:
        print("check-deps: note: not importable in /usr/bin/python3 (optional or "
              f"local): {', '.join(unimportable)}")
    outside = sorted(p for p in unowned if not p.startswith("/usr/local/"))
    if unowned:
        local = len(unowned) - len(outside)
        print(f"check-deps: note: {len(unowned)} files are owned by no package "
              f"({local} under /usr/local, e.g. the CUDA toolkit, which is optional)")
        for p in outside[:10]:
            print(f"  {p} ({unowned[p]})")
    for pkg, why in OPTIONAL.items():
        print(f"check-deps: note: {pkg} is not required ({why})")
    if not by_pkg:
        print("check-deps: OK, every package is installed by the bootstrap list")
        return 0
    for pkg in sorted(by_pkg):
        hits = by_pkg[pkg]
        print(f"check-deps: error: package '{pkg}' is not in {os.path.relpath(args.bootstrap, ROOT)}'s "
              f"list or its Depends; {len(hits)} file(s) of it are used, e.g.:", file=sys.stderr)
        for path, origin in hits[:3]:
            print(f"  {path} ({origin})", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
