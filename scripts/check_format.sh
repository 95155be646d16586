#!/usr/bin/env bash
# Fails, naming the files, if any C++ file in the repository differs from what clang-format-14
# makes of it under .clang-format. `clang-format-14 -i FILE` fixes one.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format-14 >/dev/null || { echo "check_format: clang-format-14 is missing" >&2; exit 2; }
bad=()
while IFS= read -r file; do
  clang-format-14 --dry-run -Werror "$file" >/dev/null 2>&1 || bad+=("$file")
done < <(git ls-files '*.cc' '*.h')
if ((${#bad[@]})); then
  printf 'check_format: not clang-format-14 clean:\n' >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check_format: $(git ls-files '*.cc' '*.h' | wc -l) files clean"
