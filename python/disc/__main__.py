"""``python3 -m disc compile|run ARGS...``: runs disc-compile or disc-run
with ARGS (the CLIs of the same build or install prefix, else those on
PATH); their output and exit status are the command's. See docs/cli.md.
"""

import os
import shutil
import sys

_TOOLS = {"compile": "disc-compile", "run": "disc-run"}


def _find(tool):
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        from ._config import BINDIR
        path = os.path.normpath(os.path.join(here, BINDIR, tool))
        if os.access(path, os.X_OK):
            return path
    except ImportError:
        pass
    return shutil.which(tool)


def main(argv):
    if len(argv) < 1 or argv[0] not in _TOOLS:
        sys.stderr.write("usage: python3 -m disc compile|run ARGS...\n"
                         "  compile: disc-compile ARGS (--help for its "
                         "flags)\n  run:     disc-run ARGS\n")
        return 2
    tool = _TOOLS[argv[0]]
    path = _find(tool)
    if path is None:
        sys.stderr.write("disc: error: %s not found next to the disc "
                         "package or on PATH\n" % tool)
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(path, [tool] + argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
