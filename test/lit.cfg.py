# lit configuration for DISC's FileCheck tests.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "DISC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.disc_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in",
                   "unittests", "onnx", "e2e", "Inputs"]
config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%python", "/usr/bin/python3"))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
tool_dirs = [config.disc_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(
    ["disc-opt", "disc-compile", "disc-run"], tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.disc_tools_dir, append_path=True)
