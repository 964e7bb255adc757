#!/usr/bin/python3
"""Installs DISC into temporary prefixes and embeds the runtime out of tree
(ctest install-examples).

  1. `cmake --install BUILD_DIR --prefix WORK/full` (everything) and
     `--component runtime --prefix WORK/runtime` (what an application that
     only loads models needs); checks what each holds and that no installed
     file or RUNPATH refers to the build or source tree.
  2. Builds the installed copies of the examples against WORK/runtime only:
     examples/embed_cpp with CMake (find_package(DiscRuntime)) and
     examples/embed_c with `cc` and `pkg-config --cflags --libs
     disc-runtime`; checks that they load libdisc_runtime.so.1 from there.
  3. Makes a tiny ONNX model with a symbolic batch dim
     (y = Relu(x @ W + b), s = ReduceSum(y, axis 1)), compiles it once with
     the installed disc-compile, runs both examples (and the installed
     disc-run) at batch 2 and 5, and compares the printed outputs with NumPy.

    /usr/bin/python3 test/install/check_install.py --build-dir build \
        --source-dir . --work-dir build/test/install/examples

Exit codes: 0 pass, 1 a check failed, 2 bad usage or a tool failed.
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RTOL = 1e-4
ATOL = 1e-5
BATCHES = [2, 5]


class Failure(Exception):
    pass


def run(cmd, env=None, cwd=None):
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, env=env, cwd=cwd)
    if res.returncode != 0:
        raise Failure("`%s` exited with %d:\n%s" %
                      (" ".join(cmd), res.returncode, res.stdout))
    return res.stdout


def clean_env():
    """The environment without variables that could point a build or the
    loader at the build tree."""
    env = dict(os.environ)
    for var in ["CMAKE_PREFIX_PATH", "LD_LIBRARY_PATH", "PKG_CONFIG_PATH",
                "LIBRARY_PATH", "CPATH", "CPLUS_INCLUDE_PATH",
                "C_INCLUDE_PATH", "DiscRuntime_DIR", "DiscRuntime_ROOT"]:
        env.pop(var, None)
    return env


def make_model(path):
    """x: float32 [batch, 4] -> y = Relu(x @ W + b) [batch, 3],
    s = ReduceSum(y, axes=[1]) [batch]. Returns (W, b)."""
    rng = np.random.default_rng(14)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["xw"]),
        helper.make_node("Add", ["xw", "b"], ["pre"]),
        helper.make_node("Relu", ["pre"], ["y"]),
        helper.make_node("ReduceSum", ["y", "axes"], ["s"], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, "embed_tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, ["batch"])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b"),
         numpy_helper.from_array(np.array([1], dtype=np.int64), "axes")])
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return w, b


def reference(w, b, batch):
    """NumPy outputs for the examples' input pattern: element k of input 0
    is ((k mod 7) - 3) / 4."""
    x = ((np.arange(batch * 4) % 7 - 3) / 4).astype(np.float32)
    y = np.maximum(x.reshape(batch, 4) @ w + b, 0).astype(np.float32)
    return {"y": y, "s": y.sum(axis=1)}


def check_outputs(tool, text, expected):
    """Parses `output 'NAME': DTYPE [D0, D1] values: v0 v1 ...` lines."""
    got = {}
    for m in re.finditer(r"^output '(\w+)': (\w+) \[([\d, ]*)\] values:(.*)$",
                         text, re.M):
        shape = [int(d) for d in m.group(3).split(",") if d.strip()]
        values = [float(v) for v in m.group(4).split()]
        got[m.group(1)] = (m.group(2), shape, values)
    for name, ref in expected.items():
        if name not in got:
            raise Failure("%s printed no output '%s':\n%s" % (tool, name, text))
        dtype, shape, values = got[name]
        if dtype != "float32" or shape != list(ref.shape):
            raise Failure("%s: output '%s' is %s %s, expected float32 %s" %
                          (tool, name, dtype, shape, list(ref.shape)))
        want = ref.reshape(-1)[:16]
        if len(values) != len(want) or not np.allclose(
                values, want, rtol=RTOL, atol=ATOL):
            raise Failure("%s: output '%s' values %s, NumPy %s" %
                          (tool, name, values, want.tolist()))


def elf_files(root):
    for path in glob.glob(os.path.join(root, "**", "*"), recursive=True):
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    yield path


def check_prefix(prefix, forbidden, expect, reject):
    for rel in expect:
        if not glob.glob(os.path.join(prefix, rel)):
            raise Failure("%s: missing %s" % (prefix, rel))
    for rel in reject:
        if glob.glob(os.path.join(prefix, rel)):
            raise Failure("%s: should not contain %s" % (prefix, rel))
    for path in glob.glob(os.path.join(prefix, "**", "*"), recursive=True):
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            data = f.read()
        if data[:4] == b"\x7fELF":
            dyn = run(["readelf", "-d", path])
            paths = re.findall(r"\((?:RUNPATH|RPATH)\).*\[(.*)\]", dyn)
            hits = [p for p in paths if any(d in p for d in forbidden)]
        else:
            hits = [d for d in forbidden if d.encode() in data]
        if hits:
            raise Failure("%s refers to the build/source tree: %s" %
                          (path, hits))


def check_loads_from(exe, libdir, env):
    out = run(["ldd", exe], env=env)
    m = re.search(r"libdisc_runtime\.so\.\d+ => (\S+)", out)
    if not m or os.path.dirname(os.path.realpath(m.group(1))) != \
            os.path.realpath(libdir):
        raise Failure("%s does not load libdisc_runtime from %s:\n%s" %
                      (exe, libdir, out))


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
    env = clean_env()
    full = os.path.join(work, "full")
    rt = os.path.join(work, "runtime")

    # 1. Install.
    run(["cmake", "--install", build, "--prefix", full])
    run(["cmake", "--install", build, "--prefix", rt, "--component",
         "runtime"])
    forbidden = [build, source]
    check_prefix(full, forbidden,
                 expect=["bin/disc-compile", "bin/disc-run", "bin/disc-opt",
                         "lib*/libdisc_runtime.so.1"],
                 reject=["lib*/*.a"])
    check_prefix(rt, forbidden,
                 expect=["lib*/libdisc_runtime.so.1", "lib*/libdisc_runtime.so",
                         "include/disc/runtime/Runtime.h",
                         "include/disc/runtime/c_api.h",
                         "include/disc/runtime/abi.h",
                         "lib*/cmake/DiscRuntime/DiscRuntimeConfig.cmake",
                         "lib*/pkgconfig/disc-runtime.pc",
                         "share/doc/disc/runtime-api.md",
                         "share/doc/disc/examples/embed_cpp/CMakeLists.txt",
                         "share/doc/disc/examples/embed_c/main.c"],
                 reject=["bin", "lib*/*.a"])
    examples = os.path.join(rt, "share", "doc", "disc", "examples")

    # 2a. The C++ example with CMake against the runtime prefix only.
    cpp_build = os.path.join(work, "embed_cpp")
    run(["cmake", "-G", "Ninja", "-S", os.path.join(examples, "embed_cpp"),
         "-B", cpp_build,
         "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_PREFIX_PATH=" + rt,
         "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Werror",
         "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF",
         "-DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF"], env=env)
    cache = open(os.path.join(cpp_build, "CMakeCache.txt")).read()
    m = re.search(r"^DiscRuntime_DIR:PATH=(.*)$", cache, re.M)
    if not m or not os.path.realpath(m.group(1)).startswith(rt + os.sep):
        raise Failure("find_package(DiscRuntime) did not use %s: %s" %
                      (rt, m.group(1) if m else "not found"))
    run(["cmake", "--build", cpp_build], env=env)
    embed_cpp = os.path.join(cpp_build, "embed_cpp")

    # 2b. The C example with the pkg-config flags.
    pc_env = dict(env)
    pc_env["PKG_CONFIG_LIBDIR"] = os.pathsep.join(
        glob.glob(os.path.join(rt, "lib*", "pkgconfig")))
    flags = run(["pkg-config", "--cflags", "--libs", "disc-runtime"],
                env=pc_env).split()
    libdir = run(["pkg-config", "--variable=libdir", "disc-runtime"],
                 env=pc_env).strip()
    embed_c = os.path.join(work, "embed_c")
    run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror",
         os.path.join(examples, "embed_c", "main.c")] + flags +
        ["-Wl,-rpath," + os.path.realpath(libdir), "-o", embed_c], env=env)
    rt_libdir = os.path.dirname(glob.glob(
        os.path.join(rt, "lib*", "libdisc_runtime.so.1"))[0])
    for exe in (embed_cpp, embed_c):
        check_loads_from(exe, rt_libdir, env)

    # 3. A model compiled by the installed disc-compile, run by the examples.
    onnx_path = os.path.join(work, "tiny.onnx")
    so_path = os.path.join(work, "tiny.so")
    w, b = make_model(onnx_path)
    run([os.path.join(full, "bin", "disc-compile"), onnx_path, "-o", so_path],
        env=env)
    for batch in BATCHES:
        expected = reference(w, b, batch)
        out = run([embed_cpp, so_path, "--dim", "batch=%d" % batch], env=env)
        check_outputs("embed_cpp", out, expected)
        out = run([embed_c, so_path, "%dx4" % batch], env=env)
        check_outputs("embed_c", out, expected)
        run([os.path.join(full, "bin", "disc-run"), so_path, "--input",
             "x=%dx4:random" % batch], env=env)
        print("check_install: batch %d: embed_cpp and embed_c match NumPy "
              "(y %s, s %s)" % (batch, list(expected["y"].shape),
                                list(expected["s"].shape)))
    print("check_install: PASS")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failure as e:
        print("check_install: FAIL: %s" % e)
        sys.exit(1)
