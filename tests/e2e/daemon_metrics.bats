#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# daemon_metrics.bats: `jprof daemon --metrics`: /metrics in the Prometheus text format
# (promtool checks it), with counters that follow the recording; the real prometheus server
# scrapes it; nothing but GET /metrics is served; a port taken is a clear error.
bats_require_minimum_version 1.5.0

load helpers

setup() {
	require_root_bpf
	command -v promtool >/dev/null || { missing "promtool (Debian prometheus)"; return; }
	command -v prometheus >/dev/null || { missing "prometheus (Debian prometheus)"; return; }
	command -v curl >/dev/null || { missing "curl"; return; }
	OUT=$BATS_TEST_TMPDIR
	STORE=$OUT/store
	APP_PID= DPID= PROM_PID=
	# a port of its own for this file's run (the suite may run beside other daemons)
	PORT=$((20000 + RANDOM % 20000))
}

teardown() {
	for p in PROM_PID DPID APP_PID; do
		if [[ -n ${!p:-} ]]; then
			{ kill -9 "${!p}" && wait "${!p}"; } 2>/dev/null || true
		fi
	done
}

# start_daemon (helpers.bash) waits for this: the daemon serves /metrics
daemon_is_ready() {
	curl -sf "http://127.0.0.1:$PORT/metrics" >/dev/null
}

# metric NAME [FILE]: its value in a scrape saved in FILE ($OUT/m.txt)
metric() {
	awk -v n="$1" '$1 == n { print $2 }' "${2:-$OUT/m.txt}"
}

@test "metrics: the text format promtool accepts, counters that follow the recording" {
	"$APPS/hotab" 30 >/dev/null 3>&- &
	APP_PID=$!
	start_daemon -p "$APP_PID" --interval 1 --metrics "$PORT"
	sleep 3.5
	run -0 curl -sS -D "$OUT/h.txt" -o "$OUT/m.txt" "http://127.0.0.1:$PORT/metrics"
	cat "$OUT/m.txt"
	grep -qi '^content-type: text/plain; version=0.0.4' "$OUT/h.txt"
	run -0 promtool check metrics <"$OUT/m.txt"
	echo "promtool: $output"
	local s1 w1 b1 t1
	s1=$(metric jprof_samples_total)
	w1=$(metric jprof_segments_written_total)
	b1=$(metric jprof_store_bytes)
	t1=$(metric jprof_last_segment_timestamp_seconds)
	((s1 > 0 && w1 >= 2 && b1 > 0))
	# the newest segment was written within the last few seconds
	(($(date +%s) - t1 <= 3))
	(($(metric jprof_processes_held) >= 1))
	(($(metric jprof_resident_memory_bytes) > 1000000))
	grep -Eq '^jprof_cpu_seconds_total [0-9]+\.[0-9]+$' "$OUT/m.txt"
	grep -q '^jprof_samples_lost_total{reason="ring_buffer_full"} [0-9]' "$OUT/m.txt"
	grep -q '^jprof_segments_dropped_total{reason="no_space"} 0$' "$OUT/m.txt"
	# a dump counts
	run -0 "$JPROF" dump --store "$STORE" -o "$OUT/d.folded"
	sleep 2.2
	curl -sS -o "$OUT/m2.txt" "http://127.0.0.1:$PORT/metrics"
	(($(metric jprof_samples_total "$OUT/m2.txt") > s1))
	(($(metric jprof_segments_written_total "$OUT/m2.txt") > w1))
	(($(metric jprof_dumps_total "$OUT/m2.txt") == 1))
	# nothing else is served: another path, another method, a body
	run -0 curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/"
	[[ $output == 404 ]]
	run -0 curl -s -o /dev/null -w '%{http_code}' -X POST --data x "http://127.0.0.1:$PORT/metrics"
	[[ $output == 405 ]]
	run -0 curl -s -o /dev/null -w "%{http_code}" -X GET --data x \
		"http://127.0.0.1:$PORT/metrics"
	[[ $output == 413 ]]
	# loopback only when a port alone is given
	run ss -Hltn "sport = :$PORT"
	echo "$output"
	[[ $output == *"127.0.0.1:$PORT"* ]]
	stop_daemon
}

@test "metrics: the prometheus server scrapes the daemon" {
	"$APPS/hotab" 30 >/dev/null 3>&- &
	APP_PID=$!
	start_daemon -p "$APP_PID" --interval 1 --metrics "127.0.0.1:$PORT"
	local web=$((PORT + 1))
	cat >"$OUT/prometheus.yml" <<-YML
		global:
		  scrape_interval: 1s
		scrape_configs:
		  - job_name: jprof
		    static_configs:
		      - targets: ['127.0.0.1:$PORT']
	YML
	run -0 promtool check config "$OUT/prometheus.yml"
	prometheus --config.file="$OUT/prometheus.yml" --storage.tsdb.path="$OUT/tsdb" \
		--web.listen-address="127.0.0.1:$web" >"$OUT/prom.log" 2>&1 3>&- &
	PROM_PID=$!
	local up= n=
	for ((i = 0; i < 150; i++)); do
		sleep 0.2
		up=$(curl -sf "http://127.0.0.1:$web/api/v1/query?query=up%7Bjob%3D%22jprof%22%7D" |
			python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")' 2>/dev/null) || true
		n=$(curl -sf "http://127.0.0.1:$web/api/v1/query?query=jprof_samples_total" |
			python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")' 2>/dev/null) || true
		[[ $up == 1 && -n $n && $n != 0 ]] && break
	done
	echo "prometheus: up=$up jprof_samples_total=$n"
	[[ $up == 1 ]] || { tail -20 "$OUT/prom.log"; false; }
	((n > 0))
	# its scrape found no fault in what was served
	run -0 curl -sf "http://127.0.0.1:$web/api/v1/targets"
	[[ $output == *'"health":"up"'* ]]
	kill "$PROM_PID"
	wait "$PROM_PID" 2>/dev/null || true
	PROM_PID=
	stop_daemon
}

@test "metrics: a port that is taken or a bad address is a clear error" {
	run -2 "$JPROF" daemon --store "$STORE" --metrics "localhost:x"
	[[ $output == *"--metrics: 'localhost:x' is not ADDR:PORT"* ]]
	run -2 "$JPROF" record --metrics 9100 -d 1
	[[ $output == *"--metrics, --config and --mark-on-pause are daemon options"* ]]
	python3 -c 'import socket,sys,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); time.sleep(30)' "$PORT" 3>&- &
	APP_PID=$!
	sleep 0.5
	run -4 "$JPROF" daemon --store "$STORE" --metrics "$PORT"
	echo "$output"
	[[ $output == *"--metrics: cannot listen on $PORT"* ]]
}
