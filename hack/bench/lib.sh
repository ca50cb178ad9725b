# Helpers the bench scripts source.

# timed NAME CMD...: runs CMD, appends its seconds to the array NAME, and shows its output on
# failure. Its output is kept in $work/step.log, each line after the seconds since CMD began,
# so that a bench can say where the time went. The bench scripts set pipefail, which makes
# CMD's failure the pipe's.
timed() {
	local -n into=$1
	shift
	local start end
	start=$EPOCHREALTIME
	if ! "$@" 2>&1 | while IFS= read -r line; do
		printf '%6.1f %s\n' "$(echo "$EPOCHREALTIME - $start" | bc)" "$line"
	done >"$work/step.log"; then
		echo "failed: $*"
		cat "$work/step.log"
		exit 1
	fi
	end=$EPOCHREALTIME
	into+=("$(echo "$end - $start" | bc)")
}

# median N...: the median of the numbers.
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
