#!/usr/bin/env bash
# Fails, naming the files, when a C or C++ source of the project differs from
# what clang-format (.clang-format at the top) makes of it. Generated golden
# outputs of the IDL tests are compared byte for byte elsewhere and are left
# out. Fix a file with: clang-format -i FILE
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.c' '*.cc' '*.h' ':!:tests/idl/golden/**')
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check_format: ${#bad[@]} of ${#files[@]} files are not formatted (clang-format -i FILE):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
