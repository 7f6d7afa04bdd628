# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# ruby_work.rb: CPU-bound Ruby for JRuby (realapps.bats): recursion (fib), blocks over a Hash
# with string keys (words), for ARGV[0] seconds; prints "ready" once, after 2 s of warm-up,
# and the work's checksum at the end
def fib(n)
  n < 2 ? n : fib(n - 1) + fib(n - 2)
end

def words(n)
  h = Hash.new(0)
  n.times { |i| h["w#{i % 97}"] += i.to_s.length }
  h.values.sum
end

def now
  Process.clock_gettime(Process::CLOCK_MONOTONIC)
end

def work_until(t_end)
  acc = 0
  acc += fib(22) + words(20_000) while now < t_end
  acc
end

secs = (ARGV[0] || 10).to_f
t0 = now
acc = work_until(t0 + 2)
puts "ready"
$stdout.flush
acc += work_until(t0 + secs)
puts "done #{acc}"
