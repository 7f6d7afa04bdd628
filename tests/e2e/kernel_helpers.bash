# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# kernel_helpers.bash: shared by offcpu.bats and syscalls.bats: the kernel-side driver,
# workloads that wait for SIGUSR1, and their clean-up. Load after helpers.

: "${SC_DRIVER:=$REPO/build/tests/kernel/sc_driver}"

setup() {
	[[ $EUID -eq 0 ]] || missing "needs root to load BPF"
	[[ -r /sys/kernel/btf/vmlinux ]] || missing "no kernel BTF (/sys/kernel/btf/vmlinux)"
	OUT=$BATS_TEST_TMPDIR
}

teardown() {
	for p in ${APP_PID:-} ${TOOL_PID:-}; do
		{ kill "$p" && wait "$p"; } 2>/dev/null || true
	done
}

require_driver() {
	[[ -x $SC_DRIVER ]] || missing "sc_driver not built at $SC_DRIVER (make sc-driver)"
}

# start_waiting APP ARGS...: the workload blocks until SIGUSR1 (APP_PID)
start_waiting() {
	"$APPS/$1" "${@:2}" 3>&- &
	APP_PID=$!
}
