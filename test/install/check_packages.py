#!/usr/bin/python3
"""Builds the Debian packages with CPack and checks them (ctest
package-deb, label `package`).

Runs `cpack -G DEB` for BUILD_DIR into WORK_DIR, then checks that
disc-runtime holds the library (with its shlibs entry), headers, CMake
package and pkg-config file and no tools; that disc-tools holds
disc-compile, disc-run and disc-opt and depends on the same version of
disc-runtime; and that disc-run, unpacked with disc-runtime into one root,
starts (finds libdisc_runtime.so.1 through its RUNPATH).

    /usr/bin/python3 test/install/check_packages.py --build-dir build \
        --work-dir build/test/install/packages

Exit codes: 0 pass, 1 a check failed, 2 bad usage or a tool failed.
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys


class Failure(Exception):
    pass


def run(cmd, ok=(0,)):
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    if res.returncode not in ok:
        raise Failure("`%s` exited with %d:\n%s" %
                      (" ".join(cmd), res.returncode, res.stdout))
    return res.stdout


def field(control, name):
    m = re.search(r"^%s: (.*)$" % name, control, re.M)
    return m.group(1) if m else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    build = os.path.realpath(args.build_dir)
    work = os.path.realpath(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    run(["cpack", "-G", "DEB", "-B", work, "--config",
         os.path.join(build, "CPackConfig.cmake")])
    debs = {}
    for name in ("disc-runtime", "disc-tools"):
        found = glob.glob(os.path.join(work, name + "_*.deb"))
        if len(found) != 1:
            raise Failure("expected one %s_*.deb in %s, found %s" %
                          (name, work, found))
        debs[name] = found[0]

    contents = {n: run(["dpkg-deb", "-c", d]) for n, d in debs.items()}
    control = {n: run(["dpkg-deb", "-f", d]) for n, d in debs.items()}
    for path in ["./usr/lib/libdisc_runtime.so.1",
                 "./usr/include/disc/runtime/Runtime.h",
                 "./usr/include/disc/runtime/c_api.h",
                 "./usr/lib/cmake/DiscRuntime/DiscRuntimeConfig.cmake",
                 "./usr/lib/pkgconfig/disc-runtime.pc"]:
        if path not in contents["disc-runtime"]:
            raise Failure("disc-runtime lacks %s" % path)
    if "./usr/bin/" in contents["disc-runtime"]:
        raise Failure("disc-runtime holds tools:\n" + contents["disc-runtime"])
    for tool in ["disc-compile", "disc-run", "disc-opt"]:
        if "./usr/bin/" + tool not in contents["disc-tools"]:
            raise Failure("disc-tools lacks /usr/bin/%s" % tool)

    version = field(control["disc-runtime"], "Version")
    rt_deps = field(control["disc-runtime"], "Depends")
    if "libstdc++6" not in rt_deps or "libc6" not in rt_deps:
        raise Failure("disc-runtime Depends: '%s' (expected libc6 and "
                      "libstdc++6 from dpkg-shlibdeps)" % rt_deps)
    tools_deps = field(control["disc-tools"], "Depends")
    if "disc-runtime (= %s)" % version not in tools_deps:
        raise Failure("disc-tools Depends: '%s' lacks disc-runtime (= %s)" %
                      (tools_deps, version))
    ctl = os.path.join(work, "control")
    run(["dpkg-deb", "-e", debs["disc-runtime"], ctl])
    shlibs = open(os.path.join(ctl, "shlibs")).read() \
        if os.path.exists(os.path.join(ctl, "shlibs")) else ""
    if not re.match(r"libdisc_runtime 1 disc-runtime", shlibs):
        raise Failure("disc-runtime shlibs: '%s'" % shlibs.strip())

    root = os.path.join(work, "root")
    for deb in debs.values():
        run(["dpkg-deb", "-x", deb, root])
    out = run([os.path.join(root, "usr", "bin", "disc-run")], ok=(2,))
    if "usage" not in out.lower():
        raise Failure("unpacked disc-run printed no usage:\n" + out)

    print("check_packages: %s" % ", ".join(
        "%s (%d bytes)" % (os.path.basename(d), os.path.getsize(d))
        for d in debs.values()))
    print("check_packages: disc-tools Depends: %s" % tools_deps)
    print("check_packages: PASS")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failure as e:
        print("check_packages: FAIL: %s" % e)
        sys.exit(1)
