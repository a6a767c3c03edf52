#!/usr/bin/env python3
"""`streetgan serve` under load, beside the original tool's Flask server (reference_gallery.py)
on the same weights, both measured with wrk in one run: requests/s, p50 and p99 latency, socket
errors, and the responses by status (503s are the queue limit's answers; any other non-2xx counts
as an error). Medians of --repeats runs of each.

  bash packaging/install-deps.sh --bench
  /usr/bin/python3 bench/bench_serve.py --streetgan build/app/cli/streetgan \
      --checkpoint runs/x/checkpoints/step-....pt --seconds 10 --connections 32 --repeats 3
"""
import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

STATUS_SCRIPT = r'''
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) statuses = {} end
function response(status, headers, body) statuses[status] = (statuses[status] or 0) + 1 end
function done(summary, latency, requests)
  local total = {}
  for _, t in ipairs(threads) do
    for k, v in pairs(t:get("statuses")) do total[k] = (total[k] or 0) + v end
  end
  for k, v in pairs(total) do io.write(string.format("status %d %d\n", k, v)) end
end
'''


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def wait_for(port, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with socket.create_connection(('127.0.0.1', port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f'nothing listens on port {port}')


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
    if millis(p50_match.group(1)) != millis(p50_match.group(1)):
        print(f'unparsed latency {p50_match.group(1)!r}', file=sys.stderr)
    p50, p99 = millis(p50_match.group(1)), millis(p99_match.group(1))
    errors = re.search(r'Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)', out)
    socket_errors = sum(int(x) for x in errors.groups()) if errors else 0
    statuses = {int(k): int(v) for k, v in re.findall(r'status (\d+) (\d+)', out)}
    return {'rps': rps, 'p50': p50, 'p99': p99, 'socket_errors': socket_errors, 'statuses': statuses}


def summary(runs):
    return {
        'rps': statistics.median(r['rps'] for r in runs),
        'p50': statistics.median(r['p50'] for r in runs),
        'p99': statistics.median(r['p99'] for r in runs),
        'socket_errors': sum(r['socket_errors'] for r in runs),
        'ok': sum(r['statuses'].get(200, 0) for r in runs),
        '503': sum(r['statuses'].get(503, 0) for r in runs),
        'other': sum(v for r in runs for k, v in r['statuses'].items() if k not in (200, 503)),
        'runs': [round(r['rps'], 1) for r in runs],
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--streetgan', required=True)
    parser.add_argument('--checkpoint', required=True)
    parser.add_argument('--seconds', type=int, default=10)
    parser.add_argument('--connections', type=int, default=32)
    parser.add_argument('--threads', type=int, default=2, help='wrk threads')
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--queue', type=int, default=8, help="streetgan serve's --queue")
    parser.add_argument('--workers', type=int, default=2, help="streetgan serve's --workers, and the reference's torch threads")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix='bench-serve-')
    script = os.path.join(work, 'statuses.lua')
    open(script, 'w').write(STATUS_SCRIPT)
    state = os.path.join(work, 'G.pt')
    subprocess.run([args.streetgan, 'export', '--checkpoint', args.checkpoint, '--out', state], check=True,
                   stdout=subprocess.DEVNULL)

    ours_port, ref_port = free_port(), free_port()
    ours = subprocess.Popen([args.streetgan, 'serve', '--checkpoint', args.checkpoint, '--port', str(ours_port),
                             '--workers', str(args.workers), '--queue', str(args.queue)],
                            stderr=subprocess.DEVNULL)
    ref = subprocess.Popen([sys.executable, os.path.join(HERE, 'reference_gallery.py'), '--state', state,
                            '--sidecar', os.path.join(work, 'G.json'), '--port', str(ref_port),
                            '--threads', str(args.workers)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for name, process, port in [('streetgan serve', ours, ours_port), ('the reference (Flask)', ref, ref_port)]:
            try:
                wait_for(port)
            except SystemExit:
                code = process.poll()
                raise SystemExit(f'{name} did not start' + (f' (exit {code}; is python3-flask installed? '
                                 'bash packaging/install-deps.sh --bench)' if code is not None else ''))
        rows = []
        for route in ['/gan_imgs?n=16', '/health']:
            results = {'streetgan serve': [], 'original (Flask)': []}
            for _ in range(args.repeats):  # alternate, so load on the machine hits both alike
                for name, port in [('streetgan serve', ours_port), ('original (Flask)', ref_port)]:
                    results[name].append(wrk(f'http://127.0.0.1:{port}{route}', args.seconds, args.connections,
                                             args.threads, script))
            for name, runs in results.items():
                rows.append((route, name, summary(runs)))
        print(f'\nwrk -c{args.connections} -d{args.seconds}s, median of {args.repeats}; streetgan serve '
              f'--workers {args.workers} --queue {args.queue}; the reference with {args.workers} torch threads\n')
        print('| route | server | requests/s | p50 ms | p99 ms | 200 | 503 | other status | socket errors | runs (req/s) |')
        print('|---|---|---|---|---|---|---|---|---|---|')
        for route, name, s in rows:
            print(f"| `{route}` | {name} | {s['rps']:.1f} | {s['p50']:.1f} | {s['p99']:.1f} | {s['ok']} | {s['503']} | "
                  f"{s['other']} | {s['socket_errors']} | {', '.join(map(str, s['runs']))} |")
        for route in ['/gan_imgs?n=16', '/health']:
            o = next(s for r, n, s in rows if r == route and n == 'streetgan serve')
            p = next(s for r, n, s in rows if r == route and n != 'streetgan serve')
            print(f'\n{route}: streetgan serve / original = {o["rps"] / p["rps"]:.2f}× requests/s')
    finally:
        for process in (ours, ref):
            process.terminate()
            process.wait(timeout=30)


if __name__ == '__main__':
    main()
