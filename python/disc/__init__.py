"""DISC from Python: compile an ONNX model once, run it at any valid shape.

    import disc, numpy as np
    exe = disc.compile("resnet18.onnx", dims={"N": (1, 8)})
    sess = disc.Session(exe, memory_limit=64 << 20)
    out = sess.run({"input": np.zeros((2, 3, 160, 192), np.float32)})
    out["output"].shape, sess.stats["peak_bytes"]

The compiler runs in this process (the library behind ``disc-compile``,
lib/Driver); the runtime is libdisc_runtime's C++ API. Arrays go in and
come out without copies where the layout allows. Every failure raises
``disc.Error`` with ``.status`` (the CLIs' exit status: 1 compiler failure,
2 bad input or load failure, 3 memory, 4 internal), ``.code`` and
``.message``. See docs/python.md.
"""

import os
import tempfile

from ._disc import Error, Executable, Session, TensorInfo, has_compiler

__all__ = ["compile", "Error", "Executable", "Session", "TensorInfo",
           "STATUS_COMPILE_FAILED", "STATUS_BAD_INPUT", "STATUS_MEMORY",
           "STATUS_INTERNAL"]

# Error.status values (the exit codes of disc-compile and disc-run).
STATUS_COMPILE_FAILED = 1
STATUS_BAD_INPUT = 2
STATUS_MEMORY = 3
STATUS_INTERNAL = 4

# Keyword options of compile() that pass through unchanged (the fields of
# CompileOptions, include/disc/Driver/Driver.h; docs/cli.md for each flag).
_PLAIN_OPTIONS = {
    "gpu_arch": str, "remat_max_ops": int, "force_dynamic": bool,
    "gpu_elements_per_thread": int, "gpu_row_elements_per_thread": int,
    "library_calls": str, "timing": bool, "fusion": bool,
    "report_codegen": bool, "compile_jobs": int, "train": bool,
    "loss": str, "optimizer": str, "lr": float, "momentum": float,
    "weight_decay": float, "beta1": float, "beta2": float, "eps": float,
    "in_place_state": bool, "recompute_elementwise": bool,
}


def _bad_input(message):
    err = Error(message)
    err.status, err.code, err.message = STATUS_BAD_INPUT, "bad input", message
    return err


def _dim_flag(name, value):
    """One ``--dim`` entry: NAME=VALUE for an int, NAME=MIN:MAX[:LIKELY] for
    a (min, max[, likely]) tuple; a str is passed as it is."""
    if isinstance(value, str):
        return "%s=%s" % (name, value)
    if isinstance(value, int) and not isinstance(value, bool):
        return "%s=%d" % (name, value)
    if isinstance(value, (tuple, list)) and len(value) in (2, 3) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        return "%s=%s" % (name, ":".join(str(v) for v in value))
    raise _bad_input("dims['%s']: expected an int, (min, max) or "
                     "(min, max, likely), got %r" % (name, value))


def _on_off(key, value, on, off):
    if value in (True, on):
        return True
    if value in (False, off):
        return False
    raise _bad_input("%s=%r: expected True/False, '%s' or '%s'" %
                     (key, value, on, off))


def compile(path, output=None, dims=None, target="cpu", **options):
    """Compiles the ONNX (or disc-dialect .mlir) model at ``path`` into a
    model.so and loads it, as ``disc-compile PATH -o OUTPUT`` does, in this
    process.

    path:    the model file (str or os.PathLike).
    output:  where the model.so goes; None: a temporary file removed with
             the returned Executable.
    dims:    ranges of named input dims, {name: value}: an int specializes
             the dim (``--dim NAME=VALUE``), (min, max) or (min, max,
             likely) bounds it (``--dim NAME=MIN:MAX[:LIKELY]``, likely only
             breaks ties in scheduling).
    target:  "cpu", "cuda" or "cuda-emulate".
    options: schedule ("memory"/"none" or bool), remat ("on"/"off" or
             bool), remat_max_ops, library_calls ("onednn"/"none"), fusion,
             force_dynamic, gpu_arch, gpu_elements_per_thread,
             gpu_row_elements_per_thread, compile_jobs, timing,
             report_codegen;
             training: train, loss, trainable and frozen (lists of names),
             optimizer ("sgd", "momentum", "adamw", "none"), lr, momentum,
             weight_decay, beta1, beta2, eps. Each is the disc-compile flag
             of the same name (docs/cli.md, docs/training.md).

    Returns an Executable. Raises disc.Error with status 2 for bad input (a
    bad option or dim, a missing or malformed model, an unsupported op: the
    message names it) and 1 when the compiler fails; the message holds the
    diagnostics. TypeError for an unknown keyword.
    """
    if not has_compiler:
        raise _bad_input("this disc module was built without the compiler "
                         "(DISC_BUILD_COMPILER=OFF); use Executable.load")
    kw = {"input": os.fspath(path), "target": target}
    if dims:
        kw["dims"] = [_dim_flag(n, v) for n, v in dims.items()]
    for key, value in options.items():
        if key == "schedule":
            kw[key] = _on_off(key, value, "memory", "none")
        elif key == "remat":
            kw[key] = _on_off(key, value, "on", "off")
        elif key in ("trainable", "frozen"):
            kw[key] = ([n for n in value.split(",") if n]
                       if isinstance(value, str) else list(value))
        elif key in _PLAIN_OPTIONS:
            kw[key] = _PLAIN_OPTIONS[key](value)
        else:
            raise TypeError("compile() got an unexpected keyword argument "
                            "'%s'" % key)
    tmpdir = None
    if output is None:
        tmpdir = tempfile.TemporaryDirectory(prefix="disc-")
        stem = os.path.splitext(os.path.basename(kw["input"]))[0] or "model"
        output = os.path.join(tmpdir.name, stem + ".so")
    kw["output"] = os.fspath(output)
    try:
        from ._disc import _compile
        _compile(**kw)
        exe = Executable.load(kw["output"])
    except BaseException:
        if tmpdir is not None:
            tmpdir.cleanup()
        raise
    if tmpdir is not None:
        exe._tmpdir = tmpdir  # removed when the Executable goes
    return exe
