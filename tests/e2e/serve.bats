#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# serve.bats: `jprof serve` over a store a real daemon wrote (hotab, 1 s segments): the segments
# as JSON, a range in every format with the program's frames, a diff of two ranges; saved
# recordings (--recordings) listed, shown and compared; the token, the Host header, bad
# parameters, a corrupt segment; the page in headless Chromium (brush, filter, base and diff,
# a copied link, two recordings). Screenshots stay in build/test-artifacts/serve/.
bats_require_minimum_version 1.5.0

load helpers

setup_file() {
	export ART=${JPROF_TEST_ARTIFACTS:-$(dirname "$JPROF")/test-artifacts}/serve
	mkdir -p "$ART"
	[[ $EUID -eq 0 && -x $JPROF && -x $APPS/hotab ]] || return 0
	# one store for the file: 6 s of hotab in 1 s segments
	export STORE=$BATS_FILE_TMPDIR/store
	local hp dp
	"$APPS/hotab" 30 >/dev/null 3>&- &
	hp=$!
	"$JPROF" daemon --store "$STORE" -F 99 -p "$hp" --interval 1 2>"$BATS_FILE_TMPDIR/daemon.err" 3>&- &
	dp=$!
	sleep 6
	kill -TERM "$dp"
	wait "$dp" || true
	kill "$hp"
	wait "$hp" 2>/dev/null || true
}

setup() {
	require_root_bpf
	[[ -x $APPS/hotab ]] || { missing "hotab not built in $APPS (make apps)"; return; }
	command -v curl >/dev/null || { missing "curl"; return; }
	OUT=$BATS_TEST_TMPDIR
	SPID=
	PORT=$((20000 + RANDOM % 20000))
	BASE=http://127.0.0.1:$PORT
}

teardown() {
	if [[ -n ${SPID:-} ]]; then
		{ kill -9 "$SPID" && wait "$SPID"; } 2>/dev/null || true
	fi
}

# start_serve [ARGS...]: jprof serve on $PORT over $STORE (or ARGS' --store), TOKEN from its line
start_serve() {
	rm -f "$OUT/serve.err" # the grep below must not read a previous server's line
	"$JPROF" serve --store "$STORE" --listen "127.0.0.1:$PORT" "$@" 2>"$OUT/serve.err" 3>&- &
	SPID=$!
	ready_while_alive "$SPID" grep -q 'token=' "$OUT/serve.err" || { cat "$OUT/serve.err"; return 1; }
	TOKEN=$(grep -oE 'token=[0-9a-zA-Z_-]+' "$OUT/serve.err" | cut -d= -f2)
}

# get PATH [CURL ARGS...]: the answer's body in $OUT/body, its status in $CODE
get() {
	local path=$1
	shift
	CODE=$(curl -s -o "$OUT/body" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$@" \
		"$BASE$path")
	echo "GET $path: $CODE $(head -c 300 "$OUT/body" | tr -d '\0')"
}

# the store's first start, last end and a start in the middle (unix seconds)
range() {
	get /api/segments
	[[ $CODE == 200 ]]
	read -r A Z M < <(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
s = j["segments"]
assert len(s) >= 4, s
assert j["pending"] == 0 and all(x["samples"] is not None for x in s), s
assert sum(x["samples"] for x in s) > 0, s
print(s[0]["start"], s[-1]["end"], s[len(s) // 2]["start"])' "$OUT/body")
}

@test "serve: segments as JSON; a range as HTML, folded, pprof, JFR, top; a diff of two ranges" {
	ls -l "$STORE/segments"
	# the daemon's index: a line per segment (the counts come from it, checked below)
	cat "$STORE/index"
	[[ $(wc -l <"$STORE/index") -eq $(find "$STORE/segments" -name '*.pb.gz' | wc -l) ]]
	[[ $(stat -c %a "$STORE/index") == 600 ]]
	start_serve
	range
	# folded: the program's own functions; their weights add up to the segments' samples
	# (counted: samples=1; the default weighs CPU time)
	get "/api/profile?since=$A&until=$Z&format=folded&samples=1"
	[[ $CODE == 200 ]]
	grep -q 'hotab;.*;hot_a ' "$OUT/body"
	grep -q 'hotab;.*;hot_b ' "$OUT/body"
	# the same range's samples, as the segments count them
	want=$(curl -s -H "Authorization: Bearer $TOKEN" "$BASE/api/segments" |
		python3 -c 'import json,sys; print(sum(s["samples"] for s in json.load(sys.stdin)["segments"]))')
	got=$(awk '{ n += $NF } END { print n }' "$OUT/body")
	echo "samples: segments $want, folded $got"
	((got == want))
	# HTML: the flame graph page, with its header
	get "/api/profile?since=$A&until=$Z"
	[[ $CODE == 200 ]]
	grep -q 'hot_a' "$OUT/body"
	grep -q '<html' "$OUT/body"
	# the segments keep their samples' times: the page has its timeline, at 100 ms slots over
	# the range's seconds (issue 29)
	python3 - "$OUT/body" <<-'PY'
	import json, re, sys
	doc = open(sys.argv[1]).read()
	t = json.loads(re.search(r'<script id="jp-data" type="application/json">(.*?)</script>', doc, re.S).group(1))["time"]
	assert t["res_ms"] == 100 and t["nslots"] >= 20 and len(t["ent"]) >= 60, (t["res_ms"], t["nslots"], len(t["ent"]))
	PY
	# pprof: go tool pprof reads it
	get "/api/profile?since=$A&until=$Z&format=pprof" -D "$OUT/headers"
	[[ $CODE == 200 ]]
	grep -qi 'content-disposition: attachment; filename="jprof-[0-9]*-[0-9]*.pb.gz"' "$OUT/headers"
	if command -v go >/dev/null; then
		cp "$OUT/body" "$OUT/p.pb.gz"
		go tool pprof -top "$OUT/p.pb.gz" 2>&1 | grep -q hot_a
	fi
	# JFR: the JDK's jfr reads it
	get "/api/profile?since=$A&until=$Z&format=jfr"
	[[ $CODE == 200 ]]
	cp "$OUT/body" "$OUT/p.jfr"
	require_jdk "$JDK25"
	"$JDK25/bin/jfr" summary "$OUT/p.jfr" | grep -q 'jdk.ExecutionSample'
	# top: the table
	get "/api/profile?since=$A&until=$Z&format=top"
	[[ $CODE == 200 ]]
	grep -qE '^ +[0-9.]+% +[0-9]+ +[0-9.]+% +[0-9]+ +hot_a' "$OUT/body"
	# a filter: only stacks through hot_b
	get "/api/profile?since=$A&until=$Z&format=folded&include=hot_b"
	[[ $CODE == 200 ]]
	[[ -z $(grep -v 'hot_b' "$OUT/body") ]]
	# a diff of the two halves, as HTML and as folded `stack base new`
	get "/api/diff?base_since=$A&base_until=$M&since=$M&until=$Z"
	[[ $CODE == 200 ]]
	grep -q 'hot_a' "$OUT/body"
	get "/api/diff?base_since=$A&base_until=$M&since=$M&until=$Z&format=folded"
	[[ $CODE == 200 ]]
	grep -qE 'hotab;.*;hot_a [0-9]+ [0-9]+$' "$OUT/body"
	# the same diff on the command line: report --store with a base range
	"$JPROF" report --store "$STORE" --base-since "@$A" --base-until "@$M" --since "@$M" \
		--until "@$Z" -o "$OUT/cli.folded"
	cmp "$OUT/cli.folded" "$OUT/body"
	run -0 "$JPROF" report --store "$STORE" --base-since "@$A" --base-until "@$M" --top 5
	[[ $output == *"grew: "*"shrank: "* ]]
}

@test "serve: every request needs the token; the Host must name it; bad parameters, methods and paths get one line" {
	start_serve
	# no token, a wrong one: 403, and no data
	CODE=$(curl -s -o "$OUT/body" -w '%{http_code}' "$BASE/api/segments")
	[[ $CODE == 403 ]]
	grep -q 'needs the token' "$OUT/body"
	CODE=$(curl -s -o "$OUT/body" -w '%{http_code}' -H "Authorization: Bearer ${TOKEN}x" "$BASE/")
	[[ $CODE == 403 ]]
	# the token in the address: a cookie, and the address without it
	CODE=$(curl -s -o /dev/null -D "$OUT/h" -w '%{http_code}' "$BASE/?token=$TOKEN")
	cat "$OUT/h"
	[[ $CODE == 303 ]]
	grep -qi "^set-cookie: jprof_token=$TOKEN; Path=/; HttpOnly; SameSite=Strict" "$OUT/h"
	grep -qi '^location: /' "$OUT/h"
	CODE=$(curl -s -o "$OUT/body" -w '%{http_code}' -b "jprof_token=$TOKEN" "$BASE/")
	[[ $CODE == 200 ]]
	grep -q 'id="timeline"' "$OUT/body"
	# DNS rebinding: another name for 127.0.0.1 is not this server
	get /api/segments -H "Host: attacker.example:$PORT"
	[[ $CODE == 421 ]]
	# bad parameters: 400 and what is wrong
	get "/api/profile?since=x&until=2"
	[[ $CODE == 400 ]]
	grep -qx "'since' is not unix seconds" "$OUT/body"
	get "/api/profile?since=1&until=2&format=exe"
	[[ $CODE == 400 ]]
	get "/api/profile?since=1&until=2&pid=1;id"
	[[ $CODE == 400 ]]
	get "/api/profile?since=1&until=2&comm=%0a"
	[[ $CODE == 400 ]]
	# an option smuggled in a value stays a value: no file is written
	get "/api/profile?since=1&until=2&include=--output%3D$OUT/owned"
	[[ ! -e $OUT/owned ]]
	# nothing in the range: 404 with report's own words
	get "/api/profile?since=1&until=2"
	[[ $CODE == 404 ]]
	grep -q 'no readable segment in the range' "$OUT/body"
	# paths: only the four; methods: GET; bodies: none
	for p in /etc/passwd /../../etc/passwd /api/segments/../../x "/api/%2e%2e/x"; do
		CODE=$(curl -s --path-as-is -o "$OUT/body" -w '%{http_code}' \
			-H "Authorization: Bearer $TOKEN" "$BASE$p")
		echo "$p: $CODE"
		[[ $CODE == 404 ]]
	done
	CODE=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
		"$BASE/api/segments")
	[[ $CODE == 405 ]]
	CODE=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
		--data-binary "x" -X GET "$BASE/api/segments")
	[[ $CODE == 413 ]]
	kill -0 "$SPID"
}

@test "serve: a corrupt segment is counted unreadable and skipped; the server stays up; marks listed" {
	cp -r "$STORE" "$OUT/store"
	chmod 700 "$OUT/store" "$OUT/store/segments"
	# a segment cut short, as a crash or a full disk leaves one
	first=$(find "$OUT/store/segments" -name '*.pb.gz' | sort | head -1)
	head -c 100 "$first" >"$OUT/cut" && mv "$OUT/cut" "$first"
	chmod 600 "$first"
	# a mark as dump --mark leaves one, and a directory that is none
	mkdir -p -m 700 "$OUT/store/marks/20261127T111737Z-deploy-v2/segments" \
		"$OUT/store/marks/junk"
	STORE=$OUT/store
	start_serve
	get /api/segments
	[[ $CODE == 200 ]]
	grep -q '"samples":null,"unreadable":true' "$OUT/body"
	grep -q '"marks":\[{"name":"deploy-v2","at":1795778257,"dir":"20261127T111737Z-deploy-v2"}\]' \
		"$OUT/body"
	read -r A Z < <(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["segments"]
print(s[0]["start"], s[-1]["end"])' "$OUT/body")
	get "/api/profile?since=$A&until=$Z&format=folded"
	[[ $CODE == 200 ]]
	grep -q 'hot_a' "$OUT/body"
	kill -0 "$SPID"
}

@test "serve: one clear line for no store, a port taken, a bad token file, a bad address" {
	run -1 "$JPROF" serve --store "$OUT/none" --listen "127.0.0.1:$PORT"
	echo "$output"
	[[ $output == *"cannot read the store $OUT/none"* ]]
	start_serve
	run -1 "$JPROF" serve --store "$STORE" --listen "127.0.0.1:$PORT"
	echo "$output"
	[[ $output == *"cannot listen on 127.0.0.1:$PORT"* ]]
	echo "0123456789abcdef" >"$OUT/tok"
	chmod 644 "$OUT/tok"
	run -2 "$JPROF" serve --store "$STORE" --listen "127.0.0.1:$((PORT + 1))" --token-file "$OUT/tok"
	echo "$output"
	[[ $output == *"--token-file $OUT/tok: must be a regular file of yours that only you can read"* ]]
	run -2 "$JPROF" serve --store "$STORE" --listen "localhost:x"
	[[ $output == *"--listen: 'localhost:x' is not ADDR:PORT or PORT"* ]]
	run -2 "$JPROF" serve -p 1 --store "$STORE"
	[[ $output == *"serve takes no INPUT, -a, -p, -d or -o"* ]]
	# a token of one's own
	chmod 600 "$OUT/tok"
	kill "$SPID"
	wait "$SPID" || true
	SPID=
	start_serve --token-file "$OUT/tok"
	[[ $TOKEN == 0123456789abcdef ]]
	get /api/segments
	[[ $CODE == 200 ]]
}

# two saved recordings of the store's halves (the range a running server gives) in $RECS, a
# directory of root's: first.pb.gz, second.pb.gz
make_recs() {
	range
	"$JPROF" report --store "$STORE" --since "@$A" --until "@$M" -o "$RECS/first.pb.gz"
	"$JPROF" report --store "$STORE" --since "@$M" --until "@$Z" -o "$RECS/second.pb.gz"
}

@test "serve --recordings: saved recordings listed (no link, no other file), each a flame graph, two a diff" {
	RECS=$OUT/recs
	mkdir -m 700 "$RECS"
	start_serve
	make_recs
	kill "$SPID"
	wait "$SPID" || true
	SPID=
	ln -s /etc/shadow "$RECS/link.pb.gz"
	echo x >"$RECS/notes.bin"
	mkdir "$RECS/dir.jfr"
	# a directory another user could write: refused
	mkdir -m 777 "$OUT/open"
	run -1 "$JPROF" serve --recordings "$OUT/open" --listen "127.0.0.1:$PORT"
	echo "$output"
	[[ $output == *"--recordings $OUT/open: must be a directory of yours that no other user can write"* ]]
	# recordings alone: no store
	"$JPROF" serve --recordings "$RECS" --listen "127.0.0.1:$PORT" 2>"$OUT/serve.err" 3>&- &
	SPID=$!
	ready_while_alive "$SPID" grep -q 'token=' "$OUT/serve.err" || { cat "$OUT/serve.err"; return 1; }
	TOKEN=$(grep -oE 'token=[0-9a-zA-Z_-]+' "$OUT/serve.err" | cut -d= -f2)
	get /api/recordings
	[[ $CODE == 200 ]]
	python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
names = sorted(r["name"] for r in j["recordings"])
assert names == ["first.pb.gz", "second.pb.gz"], names
assert j["total"] == 2 and all(r["bytes"] > 0 for r in j["recordings"]), j' "$OUT/body"
	get /api/segments
	[[ $CODE == 200 ]] && grep -q '"store":null' "$OUT/body"
	get "/api/profile?rec=first.pb.gz&format=folded"
	[[ $CODE == 200 ]] && grep -q 'hot_a' "$OUT/body"
	# the same as report of the file
	"$JPROF" report "$RECS/first.pb.gz" -f folded | sort >"$OUT/cli.folded"
	sort "$OUT/body" | cmp - "$OUT/cli.folded"
	get "/api/profile?rec=second.pb.gz"
	[[ $CODE == 200 ]] && grep -q '<html' "$OUT/body"
	get "/api/diff?rec=second.pb.gz&base_rec=first.pb.gz&format=top"
	[[ $CODE == 200 ]] && grep -q 'hot_a' "$OUT/body"
	# a link the list leaves out is no recording either; names are never paths
	get "/api/profile?rec=link.pb.gz&format=folded"
	[[ $CODE == 404 ]] && ! grep -q root "$OUT/body"
	get "/api/profile?rec=dir.jfr"
	[[ $CODE == 404 ]]
	get "/api/profile?rec=../recs/first.pb.gz"
	[[ $CODE == 400 ]]
	get "/api/profile?rec=nothing.pb.gz"
	[[ $CODE == 404 ]]
	get "/api/profile?since=1&until=2"
	[[ $CODE == 404 ]] && grep -q 'no --store' "$OUT/body"
}

@test "serve: headless Chromium: load, brush a range, filter, diff against a base, a copied link opens the same view; two recordings" {
	command -v chromium >/dev/null || { missing "chromium (Debian package chromium)"; return; }
	RECS=$OUT/recs
	mkdir -m 700 "$RECS"
	start_serve --recordings "$RECS"
	make_recs
	run python3 "$BATS_TEST_DIRNAME/serve_driver.py" --url "$BASE/?token=$TOKEN" --out "$ART" \
		--frame hot_a --comm hotab --recs first.pb.gz,second.pb.gz 3>&-
	printf '%s\n' "$output" | tee "$ART/serve.jsonl"
	[[ $status -eq 0 ]]
	# the brushed range is in the address; the diff's base too; the link gave them back
	grep -q '"step": "brush".*#since=[0-9]*&until=[0-9]*&view=flame' "$ART/serve.jsonl"
	grep -q '"step": "base".*bsince=[0-9]*&buntil=[0-9]*&view=diff' "$ART/serve.jsonl"
	grep -q '"step": "link", "same": true' "$ART/serve.jsonl"
	grep -q '"step": "recs", "same": true.*rec=second.pb.gz.*brec=first.pb.gz' "$ART/serve.jsonl"
}
