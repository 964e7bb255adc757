#!/usr/bin/env bash
# Checks that scripts/bootstrap.sh installs every Debian package the build and
# the tests use (scripts/check_deps.py has the method). Run after a build and,
# for a model.so and the Python imports to be seen, after the tests.
#
#   scripts/check-deps.sh                        # the current list, BUILD_DIR
#   scripts/check-deps.sh --bootstrap OLD.sh     # another list, same build
#
# Exit status: 0 complete, 1 a package is missing (named with its files),
# 2 bad usage or a collection step failed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec /usr/bin/python3 "$ROOT/scripts/check_deps.py" \
  --build-dir "$ROOT/${BUILD_DIR:-build}" "$@"
