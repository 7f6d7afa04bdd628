#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# install-deps.sh: installs every build and test dependency of jprof on Debian 12.
# Idempotent: packages already present are not touched, apt is not called at all then.
set -euo pipefail

PKGS=(make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev liblzma-dev pkg-config
      bats openjdk-17-jdk-headless libclang-rt-14-dev procps util-linux python3 time
      golang-go chromium fonts-dejavu-core libc6-dbg libh2-java openjdk-17-source jruby
      libmicrohttpd-dev prometheus libcurl4-openssl-dev curl protobuf-compiler libtomcat10-java)
# golang-go: go tool pprof reads the pprof output in tests/e2e/formats.bats
# libh2-java: a real application (the H2 SQL database) for make bench
# libtomcat10-java: a real application server (Tomcat 10, embedded by tests/apps/TomcatLoad.java)
# under HTTP load in tests/e2e/realapps.bats and make bench
# chromium: tests/e2e/html_browser.bats drives the HTML flame graph headless (DevTools over a pipe)
# openjdk-17-source: real sources (java.base java/util) that javac compiles in tests/e2e/realapps.bats
# jruby: a real application (Ruby compiled to JVM classes at run time) in tests/e2e/realapps.bats
# libmicrohttpd-dev: jprof daemon --metrics; prometheus: its promtool checks the format and
# its server scrapes the daemon in tests/e2e/daemon_metrics.bats
# libcurl4-openssl-dev: jprof daemon --push-pyroscope; curl: the e2e tests' HTTP client
# protobuf-compiler: protoc --decode checks --push-otlp's bodies against the published schema
# (third_party/opentelemetry-proto) in tests/e2e/daemon_ctl.bats

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
	if [[ $EUID -ne 0 ]]; then
		echo "install-deps: missing packages: ${missing[*]}; run as root: sudo $0" >&2
		exit 1
	fi
	echo "install-deps: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [[ ! -d /usr/lib/jvm/temurin-25-jdk-amd64 ]]; then
	echo "install-deps: note: JDK 25 (/usr/lib/jvm/temurin-25-jdk-amd64) is absent; JDK 25 tests will fail in CI" >&2
fi
exit 0
