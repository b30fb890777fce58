#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The built PAPI's own tools see the mpxkit component active and read one of its events.
if [ -z "${PAPI_PREFIX-}" ]; then
	echo "SKIP: PAPI with the mpxkit component was not built (configured with --disable-papi)"
	exit 77
fi
bin=$PAPI_PREFIX/bin
fail() {
	echo "FAIL: $*"
	exit 1
}

avail=$("$bin/papi_component_avail") || fail "papi_component_avail exited with $?"
echo "$avail" | sed -n '/^Compiled-in components:/,$p'

# The component's own line in the "Active components:" section.
active=$(echo "$avail" | sed -n '/^Active components:/,$p' | grep -c '^Name: *mpxkit ')
if [ "$active" != 1 ]; then
	reason=$(echo "$avail" | sed -n '/^Name: *mpxkit /{n;p;}' | sed -n 's/.*Disabled: //p')
	case "$reason" in
	*perf_event_open*) echo "SKIP: mpxkit disabled here: $reason"; exit 77 ;;
	esac
	fail "mpxkit is not listed as active (disabled: ${reason:-not compiled in})"
fi

native=$("$bin/papi_native_avail" -i mpxkit:::) || fail "papi_native_avail exited with $?"
echo "$native" | grep -q '| *mpxkit:::perf::TASK-CLOCK *|' ||
	fail "papi_native_avail does not list mpxkit:::perf::TASK-CLOCK"

# papi_command_line prints "NAME : <tab>VALUE(u) UNIT" once per event it counted.
out=$("$bin/papi_command_line" mpxkit:::perf::TASK-CLOCK mpxkit:::perf::PAGE-FAULTS) ||
	fail "papi_command_line exited with $?"
echo "$out"
for ev in TASK-CLOCK PAGE-FAULTS; do
	value=$(echo "$out" | sed -n "s/^mpxkit:::perf::$ev :[[:space:]]*\([0-9][0-9]*\).*/\1/p")
	[ -n "$value" ] || fail "papi_command_line printed no value for mpxkit:::perf::$ev"
	[ "$value" -gt 0 ] || fail "mpxkit:::perf::$ev counted $value during papi_command_line's workload"
done
# Bad reference settings disable the component with a reason naming the variable.
disabled_reason() {
	env "$@" "$bin/papi_component_avail" | sed -n '/^Name: *mpxkit /{n;p;}' | sed -n 's/.*Disabled: //p'
}
reason=$(disabled_reason MPXKIT_ESTIMATOR=ref-rate)
echo "$reason" | grep -q '^MPXKIT_ESTIMATOR=ref-rate: it needs a reference' ||
	fail "ref-rate without MPXKIT_REFERENCE: disabled reason '$reason'"
reason=$(disabled_reason MPXKIT_REFERENCE=perf::NOPE)
echo "$reason" | grep -q '^MPXKIT_REFERENCE=perf::NOPE: .*no such perf event' ||
	fail "MPXKIT_REFERENCE=perf::NOPE: disabled reason '$reason'"

# ref-rate online, task-clock in every slice, through PAPI's own tool.
out=$(MPXKIT_ESTIMATOR=ref-rate MPXKIT_REFERENCE=perf::TASK-CLOCK MPXKIT_COUNTERS=1 \
	"$bin/papi_command_line" mpxkit:::perf::CPU-CLOCK mpxkit:::perf::PAGE-FAULTS) ||
	fail "papi_command_line with ref-rate exited with $?"
echo "$out"
value=$(echo "$out" | sed -n "s/^mpxkit:::perf::CPU-CLOCK :[[:space:]]*\([0-9][0-9]*\).*/\1/p")
[ -n "$value" ] && [ "$value" -gt 0 ] || fail "ref-rate: CPU-CLOCK '$value'"
echo "PASS: mpxkit active; papi_command_line read TASK-CLOCK and PAGE-FAULTS; ref-rate online"
