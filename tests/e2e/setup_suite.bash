# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# setup_suite.bash: once per bats run. The run removes the files its own JVMs left in /tmp
# (leftovers.bash): before each test (require_root_bpf) and at the end.

# shellcheck source=tests/e2e/leftovers.bash
source "$(dirname "${BASH_SOURCE[0]}")/leftovers.bash"

setup_suite() {
	JPT_SUITE_MARK=$(mktemp -t jpt-suite.XXXXXX)
	export JPT_SUITE_MARK
}

teardown_suite() {
	[[ -n ${JPT_SUITE_MARK:-} && -e $JPT_SUITE_MARK ]] || return 0
	echo "# removed $(remove_jvm_leftovers) files the run's JVMs left in /tmp" >&3
	rm -f -- "$JPT_SUITE_MARK"
	return 0
}
