"""wrk, the load generator, for bench_serve.py: the Lua script (STATUS_SCRIPT) that counts the
responses by status and the body bytes of the 200s; `wrk`, one run against a URL, parsed into
requests/s, p50 and p99 latency (ms), socket errors, statuses, 200 bytes and 200s/s; and `summary`,
the medians and sums over several runs. wrk must be on PATH (bash packaging/install-deps.sh --bench).
"""
import re
import statistics
import subprocess
import sys

STATUS_SCRIPT = r'''
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) statuses = {} ok_bytes = 0 end
function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  if status == 200 then ok_bytes = ok_bytes + #body end
end
function done(summary, latency, requests)
  local total, bytes = {}, 0
  for _, t in ipairs(threads) do
    for k, v in pairs(t:get("statuses")) do total[k] = (total[k] or 0) + v end
    bytes = bytes + t:get("ok_bytes")
  end
  for k, v in pairs(total) do io.write(string.format("status %d %d\n", k, v)) end
  io.write(string.format("ok_bytes %.0f\n", bytes))
  io.write(string.format("duration_us %.0f\n", summary.duration))
end
'''


def millis(text):
    match = re.match(r'([\d.]+)(us|ms|s|m|h)$', text)
    if not match:
        return float('nan')
    value, unit = match.groups()
    return float(value) * {'us': 0.001, 'ms': 1.0, 's': 1000.0, 'm': 60000.0, 'h': 3600000.0}[unit]


def wrk(url, seconds, connections, threads, script):
    # A 60 s timeout: a request waiting in a queue is measured, not counted as a socket error.
    out = subprocess.run(['wrk', f'-t{threads}', f'-c{connections}', f'-d{seconds}s', '--timeout', '60s', '--latency',
                          '-s', script, url],
                         capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r'Requests/sec:\s+([\d.]+)', out).group(1))
    # The distribution's own lines ("     50%  951.43ms"), not the "+/- Stdev" column (e.g. 75.50%).
    p50_match = re.search(r'^\s+50%\s+(\S+)\s*$', out, re.M)
    p99_match = re.search(r'^\s+99%\s+(\S+)\s*$', out, re.M)
    if not p50_match or not p99_match:
        raise SystemExit(f'wrk printed no latency distribution for {url}:\n{out}')
    p50, p99 = millis(p50_match.group(1)), millis(p99_match.group(1))
    for text, value in ((p50_match.group(1), p50), (p99_match.group(1), p99)):
        if value != value:
            print(f'unparsed latency {text!r}', file=sys.stderr)
    errors = re.search(r'Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)', out)
    socket_errors = sum(int(x) for x in errors.groups()) if errors else 0
    statuses = {int(k): int(v) for k, v in re.findall(r'status (\d+) (\d+)', out)}
    ok_bytes = int(re.search(r'ok_bytes (\d+)', out).group(1))
    duration = int(re.search(r'duration_us (\d+)', out).group(1)) / 1e6
    return {'rps': rps, 'p50': p50, 'p99': p99, 'socket_errors': socket_errors, 'statuses': statuses,
            'ok_bytes': ok_bytes, 'ok_per_s': statuses.get(200, 0) / duration if duration > 0 else 0.0}


def summary(runs):
    ok = sum(r['statuses'].get(200, 0) for r in runs)
    return {
        'rps': statistics.median(r['rps'] for r in runs),
        'ok_per_s': statistics.median(r['ok_per_s'] for r in runs),
        'p50': statistics.median(r['p50'] for r in runs),
        'p99': statistics.median(r['p99'] for r in runs),
        'bytes': sum(r['ok_bytes'] for r in runs) / ok if ok else None,
        'socket_errors': sum(r['socket_errors'] for r in runs),
        'ok': ok,
        '503': sum(r['statuses'].get(503, 0) for r in runs),
        'other': sum(v for r in runs for k, v in r['statuses'].items() if k not in (200, 503)),
        'runs': [round(r['rps'], 1) for r in runs],
    }
