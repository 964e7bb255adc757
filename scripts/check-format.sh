#!/usr/bin/env bash
# Checks C/C++ formatting with clang-format and the repo's .clang-format.
#
#   scripts/check-format.sh            # every tracked C/C++ file
#   scripts/check-format.sh REV        # only lines changed since the merge
#                                      # base with REV (git clang-format)
#
# Exit status: 0 clean, 1 a file needs formatting (named, with the diff).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CLANG_FORMAT="${CLANG_FORMAT:-clang-format}"

if [ $# -gt 0 ]; then
  base="$(git merge-base "$1" HEAD)"
  out="$(git clang-format --binary "$(command -v "$CLANG_FORMAT")" --diff \
         "$base" -- '*.c' '*.cpp' '*.h' '*.cc' || true)"
  case "$out" in
    ""|"no modified files to format"|"clang-format did not modify any files")
      echo "check-format: lines changed since $base are clean"; exit 0 ;;
  esac
  echo "$out"
  echo "check-format: error: lines changed since $base need clang-format" >&2
  exit 1
fi

bad=()
while IFS= read -r f; do
  if ! "$CLANG_FORMAT" --dry-run -Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done < <(git ls-files '*.c' '*.cpp' '*.h' '*.cc')
if [ ${#bad[@]} -eq 0 ]; then
  echo "check-format: every tracked C/C++ file is clean"
  exit 0
fi
for f in "${bad[@]}"; do
  echo "check-format: error: $f needs clang-format -i" >&2
  "$CLANG_FORMAT" "$f" | diff -u "$f" - | head -20 >&2 || true
done
exit 1
