#!/usr/bin/python3
"""Checks the dynamic symbols of the installed libdisc_runtime.so (ctest
install-exports).

Installs the `runtime` component of BUILD_DIR into WORK_DIR/prefix, then:
  * the library is libdisc_runtime.so.MAJOR with that soname, and the
    development link libdisc_runtime.so points to it;
  * `nm -D --defined-only` lists only public API symbols:
      - C: functions named disc_* that the installed headers declare;
      - C++: symbols in namespace disc (or the RTTI/vtable of a disc class)
        whose top-level name the installed headers declare, and nothing
        internal (anonymous namespaces, `Impl`, `detail`);
  * every C function the headers declare is exported, and so is the core of
    the C++ API (REQUIRED_CXX below).

    /usr/bin/python3 test/install/check_exports.py --build-dir build \
        --work-dir build/test/install/exports

Exit codes: 0 pass, 1 a check failed (each offending symbol is listed with
the reason), 2 bad usage or a tool failed.
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

# The core of the C++ API (demangled prefixes). Every entry must be exported.
REQUIRED_CXX = [
    "disc::statusCodeName(",
    "disc::Status::toString",
    "disc::dtypeName(",
    "disc::parseDType(",
    "disc::dtypeSize(",
    "disc::shapeToString",
    "disc::numElementsOf(",
    "disc::Tensor::zeros(",
    "disc::Tensor::fromData(",
    "disc::Tensor::adopt(",
    "disc::Tensor::clone() const",
    "disc::Tensor::elementAsDouble(",
    "disc::Signature::parse(",
    "disc::Signature::findSymbol(",
    "disc::Executable::load(",
    "disc::Executable::~Executable()",
    "disc::Session::Session(",
    "disc::Session::~Session()",
    "disc::Session::run(",
    "disc::Session::stats() const",
    "disc::Session::getState(",
    "disc::Session::setState(",
    "disc::Session::saveState(",
    "disc::Session::loadState(",
    "disc::readNpy(",
    "disc::writeNpy(",
]

INTERNAL_MARKERS = ["(anonymous namespace)", "::Impl", "detail::", "internal::"]
CXX_PREFIXES = ["disc::", "typeinfo for disc::", "typeinfo name for disc::",
                "vtable for disc::"]

HOW_TO = """\
How to fix (docs/runtime-api.md, "Adding a public function"):
  * a public function or class: declare it in include/disc/runtime/*.h,
    in namespace disc (C++) or named disc_* (C); the version script
    runtime/disc_runtime.map exports it;
  * internal code: put it in an anonymous namespace, or define a class that
    a public header must declare with __attribute__((visibility("hidden"))),
    as Session::Impl is."""


def run(cmd, **kw):
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, **kw)
    if res.returncode != 0:
        sys.stderr.write("check_exports: error: %s failed:\n%s%s" %
                         (" ".join(cmd), res.stdout, res.stderr))
        sys.exit(2)
    return res.stdout


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()

    prefix = os.path.join(os.path.abspath(args.work_dir), "prefix")
    shutil.rmtree(prefix, ignore_errors=True)
    run(["cmake", "--install", args.build_dir, "--prefix", prefix,
         "--component", "runtime"])

    libs = sorted(glob.glob(os.path.join(prefix, "lib*", "libdisc_runtime.so.*"))
                  + glob.glob(os.path.join(prefix, "lib*", "*",
                                           "libdisc_runtime.so.*")))
    sonamed = [l for l in libs if re.search(r"\.so\.\d+$", l)]
    if len(sonamed) != 1:
        print("check_exports: FAIL: expected one libdisc_runtime.so.MAJOR "
              "in %s, found %s" % (prefix, libs or "none"))
        return 1
    lib = sonamed[0]
    failures = []

    # Soname and development link.
    dyn = run(["readelf", "-d", lib])
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", dyn)
    if not m or m.group(1) != os.path.basename(lib):
        failures.append("soname is %s, expected %s" %
                        (m.group(1) if m else "missing",
                         os.path.basename(lib)))
    devlink = os.path.join(os.path.dirname(lib), "libdisc_runtime.so")
    if os.path.realpath(devlink) != os.path.realpath(lib):
        failures.append("%s does not point to %s" % (devlink, lib))

    # Declared API, from the installed headers.
    headers = glob.glob(os.path.join(prefix, "include", "disc", "runtime",
                                     "*.h"))
    text = strip_comments("".join(open(h).read() for h in headers))
    declared_c = set(re.findall(r"\b(disc_\w+)\s*\(", text))
    words = set(re.findall(r"\b\w+\b", text))

    # Exported symbols.
    nm = run(["nm", "-D", "--defined-only", lib])
    raw = [line.split()[-1] for line in nm.splitlines() if line.strip()]
    demangled = run(["c++filt"], input="\n".join(raw) + "\n").splitlines()
    exported_c, exported_cxx, unexpected = set(), [], []
    for mangled, name in zip(raw, demangled):
        if not mangled.startswith("_Z"):
            if not mangled.startswith("disc_"):
                unexpected.append((name, "not a disc_* C function"))
            elif mangled not in declared_c:
                unexpected.append((name, "not declared in the installed "
                                   "disc/runtime/*.h"))
            exported_c.add(mangled)
            continue
        prefix_hit = next((p for p in CXX_PREFIXES if name.startswith(p)),
                          None)
        if prefix_hit is None:
            unexpected.append((name, "not in namespace disc"))
            continue
        marker = next((m for m in INTERNAL_MARKERS if m in name), None)
        if marker:
            unexpected.append((name, "internal ('%s')" % marker))
            continue
        top = re.match(r"[A-Za-z_]\w*", name[len(prefix_hit):])
        if not top or top.group(0) not in words:
            unexpected.append((name, "'%s' is not declared in the installed "
                               "disc/runtime/*.h" %
                               (top.group(0) if top else "?")))
            continue
        exported_cxx.append(name)

    for name, why in unexpected:
        failures.append("unexpected exported symbol: %s  [%s]" % (name, why))
    for name in sorted(declared_c - exported_c):
        failures.append("missing C API symbol: %s (declared in "
                        "disc/runtime/*.h, not exported)" % name)
    for req in REQUIRED_CXX:
        if not any(n.startswith(req) for n in exported_cxx):
            failures.append("missing C++ API symbol: %s..." % req)

    print("check_exports: %s: %d C and %d C++ symbols exported, %d C "
          "functions declared" % (os.path.basename(lib), len(exported_c),
                                  len(exported_cxx), len(declared_c)))
    if failures:
        for f in failures:
            print("check_exports: FAIL: " + f)
        print(HOW_TO)
        return 1
    print("check_exports: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
