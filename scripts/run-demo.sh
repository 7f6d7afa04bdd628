#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# run-demo.sh: `make run`: starts the bundled demo JVM (tests/apps JavaHot: a Java thread
# calling a JNI method that makes system calls), records the whole host with jprof for
# SECONDS_TO_RECORD seconds into OUT/profile.html (Java, native and kernel frames), stops it.
set -euo pipefail
OUT=${1:-build}
[[ $OUT == /* ]] || OUT=./$OUT # OUT=/abs/path works as well as the relative default
SECS=${SECONDS_TO_RECORD:-10}
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
demo=
cleanup() { [[ -n $demo ]] && kill "$demo" 2>/dev/null || true; }
trap cleanup EXIT
"$JAVA_HOME/bin/java" -Djava.library.path="$OUT/tests/apps" -cp "$OUT/tests/apps" \
	JavaHot jni $((SECS + 30)) >/dev/null &
demo=$!
sleep 1 # the JVM is live: jprof attaches its agent at once
"$OUT/jprof" record -a -d "$SECS" -o "$OUT/profile.html"
echo "run-demo: the demo JVM was pid $demo (JavaHot, JNI and system calls); open $OUT/profile.html"
