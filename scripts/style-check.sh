#!/bin/sh
# The house layout (.editorconfig) on the lines a change adds to C, header
# and assembly files: indentation by tabs, no trailing whitespace, at most
# 100 columns with tabs of 8. Only added lines: the tree predates the
# check (about 180 older lines are longer than 100 columns), and
# clang-format is advisory (.clang-format says why).
# Usage: scripts/style-check.sh [BASE]  (default: the merge base with main,
# else HEAD; uncommitted changes count too). Exit 1 on a finding.
base=${1:-$(git merge-base HEAD main 2>/dev/null || echo HEAD)}
git diff -U0 --no-color "$base" -- '*.c' '*.h' '*.asm' | awk '
function width(s,   i, c, w) {
	w = 0
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		w = c == "\t" ? w + 8 - w % 8 : w + 1
	}
	return w
}
/^\+\+\+ / { file = substr($0, 7); next }
/^@@/ { split($3, a, ","); line = substr(a[1], 2) + 0; next }
/^\+/ {
	s = substr($0, 2)
	if (s ~ /[ \t]$/) why = "trailing whitespace"
	else if (s ~ /^ +[^ *]/) why = "indented with spaces"
	else if (width(s) > 100) why = "longer than 100 columns"
	else why = ""
	if (why != "") { printf "%s:%d: %s\n", file, line, why; bad = 1 }
	line++
}
END { exit bad }'
