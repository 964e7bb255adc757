#!/usr/bin/python3
"""Installs DISC into a temporary prefix and uses the installed `disc`
Python module from there (ctest install-python; docs/python.md).

  1. `cmake --install BUILD_DIR --prefix WORK/prefix`; checks that the
     package is in lib/python3/dist-packages/disc and that no file of it
     refers to the build or source tree.
  2. In a fresh /usr/bin/python3 with PYTHONPATH=that site directory only
     (and the working directory outside both trees): imports disc, checks
     that it and libdisc_runtime.so.1 come from the prefix, compiles
     ResNet-18 (examples/models, random init) once with disc.compile and
     runs it at two shapes against PyTorch (rtol 1e-3, atol 1e-4).
  3. `python3 -m disc compile` runs the prefix's disc-compile.

    /usr/bin/python3 test/install/check_python_install.py --build-dir build \\
        --source-dir . --work-dir build/test/install/python

Exit codes: 0 pass, 1 a check failed.
"""

import argparse
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_install import (Failure, check_prefix, clean_env,  # noqa: E402
                           run)

SITE = os.path.join("lib", "python3", "dist-packages")

# Runs in the installed module's interpreter: argv = prefix, models dir,
# work dir.
SCRIPT = r'''
import os, sys
prefix, models, work = sys.argv[1:4]
import disc
assert os.path.realpath(disc.__file__).startswith(prefix + os.sep), disc.__file__
sys.path.insert(0, models)
import numpy as np, torch, disc_models
model = disc_models.MODELS["resnet18"]["build"]()
path = os.path.join(work, "resnet18.onnx")
disc_models.export_onnx("resnet18", model, path)
exe = disc.compile(path, dims={"N": (1, 4)})
maps = open("/proc/self/maps").read()
libs = {l.split()[-1] for l in maps.splitlines() if "libdisc_runtime" in l}
assert libs and all(os.path.realpath(l).startswith(prefix + os.sep)
                    for l in libs), libs
sess = disc.Session(exe)
for shape in [(1, 3, 64, 64), (2, 3, 96, 80)]:
    x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
    out = sess.run({"input": x})["output"]
    with torch.no_grad():
        ref = model(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-4)
    print("installed disc: resnet18 %s -> %s matches PyTorch, peak %d bytes"
          % (shape, out.shape, sess.stats["peak_bytes"]))
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    build = os.path.realpath(args.build_dir)
    source = os.path.realpath(args.source_dir)
    work = os.path.realpath(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    prefix = os.path.join(work, "prefix")

    # 1. Install.
    run(["cmake", "--install", build, "--prefix", prefix])
    check_prefix(prefix, [build, source],
                 expect=[SITE + "/disc/__init__.py",
                         SITE + "/disc/__main__.py",
                         SITE + "/disc/_config.py",
                         SITE + "/disc/_disc*.so",
                         "share/doc/disc/python.md"],
                 reject=["lib*/*.a"])

    # 2. The installed module, from a clean environment.
    env = clean_env()
    env["PYTHONPATH"] = os.path.join(prefix, SITE)
    out = run([sys.executable, "-c", SCRIPT, prefix,
               os.path.join(source, "examples", "models"), work],
              env=env, cwd=work)
    print(out, end="")

    # 3. The CLI alias runs the prefix's disc-compile.
    found = run([sys.executable, "-c", "from disc.__main__ import _find; "
                 "print(_find('disc-compile'))"], env=env, cwd=work).strip()
    if os.path.realpath(found) != os.path.join(prefix, "bin", "disc-compile"):
        raise Failure("python3 -m disc compile runs %s, not the prefix's" %
                      found)
    out = run([sys.executable, "-m", "disc", "compile", "--help"], env=env,
              cwd=work)
    if "DISC model compiler" not in out:
        raise Failure("python3 -m disc compile --help printed:\n" + out)
    print("check_python_install: PASS")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failure as e:
        print("check_python_install: FAIL: %s" % e)
        sys.exit(1)
