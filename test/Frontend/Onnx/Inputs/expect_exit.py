#!/usr/bin/env python3
"""Runs a command and succeeds iff it exits with the given code.

Usage: expect_exit.py CODE CMD [ARGS...]; the command's stderr goes to stdout.
"""
import subprocess
import sys

code = int(sys.argv[1])
rc = subprocess.call(sys.argv[2:], stderr=subprocess.STDOUT)
if rc != code:
    print(f"expect_exit.py: expected exit code {code}, got {rc}")
sys.exit(0 if rc == code else 1)
