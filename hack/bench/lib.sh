# Helpers the bench scripts source.

# timed NAME CMD...: runs CMD, appends its seconds to the array NAME, and shows its output on
# failure (kept in $work/step.log).
timed() {
	local -n into=$1
	shift
	local start end
	start=$(date +%s.%N)
	"$@" >"$work/step.log" 2>&1 || { echo "failed: $*"; cat "$work/step.log"; exit 1; }
	end=$(date +%s.%N)
	into+=("$(echo "$end - $start" | bc)")
}

# median N...: the median of the numbers.
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
