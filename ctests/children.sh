# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the CLI tests that signal a tool while it waits for its program (record, stat).

# first_child PID [PATTERN]: prints the first child process of PID (whose command line matches
# PATTERN, when given), waiting up to 60 s for one (a tool under memcheck on a loaded machine
# takes seconds to start its child); nothing when none appeared.  PATTERN keeps
# out the short-lived helpers of a wrapper: PID is a libtool script (utils/mpxkit, and libtool
# --mode=execute under make check-valgrind) until it execs the tool, and its subshells and the
# sed it runs are children too, whose command lines hold the tool's: match what only the
# tool's own child runs, after its exec.
first_child() {
	_i=0
	_child=
	while [ -z "$_child" ] && [ $_i -lt 600 ]; do
		sleep 0.1
		if [ $# -gt 1 ]; then
			_child=$(pgrep -P "$1" -f "$2" | head -n 1)
		else
			_child=$(pgrep -P "$1" | head -n 1)
		fi
		_i=$((_i + 1))
	done
	echo "$_child"
}

# still_runs PID: true when PID runs.  A dead child whose parent is gone is a zombie until init
# reaps it: that counts as gone.
still_runs() {
	case $(ps -o stat= -p "$1" 2>/dev/null) in
	'' | Z*) return 1 ;;
	*) return 0 ;;
	esac
}
