#!/usr/bin/env python3
"""`streetgan serve` under load beside the original tool's Flask app (reference_gallery.py) on
the same weights (`streetgan export`), like with like, both measured with wrk in one run:
requests/s, 200s/s, p50 and p99 latency, the mean body bytes of a 200 response, socket errors, and
the responses by status (503s are the queue limit's answers; any other non-2xx counts as an error).

The reference runs as a production Flask app runs: under gunicorn (`python3 -m gunicorn`, gthread
workers), --gunicorn-workers processes (default: the machine's cores, os.cpu_count()) of --threads
request threads each, where ours runs `streetgan serve --workers THREADS` (THREADS render threads,
each forward on cores/THREADS torch threads; app/serve/gallery_renderer.cpp). Each gunicorn worker
runs torch on max(1, cores / (workers × threads)) threads, the same share of the cores.

Both encode PNG alike: ours has no PNG option (`streetgan serve --help`) and calls cv::imencode
with no parameters (core/data/image_grid.cpp), which is OpenCV's default: zlib level 1
(Z_BEST_SPEED), strategy Z_RLE, the SUB filter on every row. The reference saves with PIL at
compress_level=1, compress_type=Z_RLE, optimize=False. PIL cannot fix the row filter (it picks one
per row); the header says so, and shows what one response of each side holds (size, zlib level
flag, row filters).

--flask-dev adds a third column, "the tool replaced": the same app as the original ran it, on
Flask's development server with PIL's PNG defaults (level 6, default strategy) and torch's default
threads.

Each repeat runs every side once, one after the other (the first side rotating), so load on the
machine hits all alike; the figures are medians of --repeats. With --out, one JSON line per route
and side (bench_record.py).

  bash packaging/install-deps.sh --bench
  /usr/bin/python3 bench/bench_serve.py --streetgan build/app/cli/streetgan \\
      --checkpoint runs/x/checkpoints/step-....pt --seconds 10 --connections 32 --repeats 3 \\
      --queue 64 --out bench/results/serve-DATE.jsonl
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_record  # noqa: E402
from serve_png import describe_png, png_facts  # noqa: E402
from wrk_load import STATUS_SCRIPT, summary, wrk  # noqa: E402

# What `streetgan serve` does: cv::imencode(".png", bgr, bytes) with no parameters, i.e. OpenCV's
# PngEncoder defaults (modules/imgcodecs/src/grfmt_png.cpp): png_set_filter(SUB),
# png_set_compression_level(Z_BEST_SPEED), png_set_compression_strategy(Z_RLE). It has no option
# to change them; the reference is set to the same level and strategy.
OURS_PNG_LEVEL = 1
OURS_PNG_STRATEGY = 'rle'

OURS = 'ours'
TOOL_REPLACED = 'the tool replaced: Flask development server'

# gunicorn calls this in each worker once the app is loaded: the bench waits for every worker, so
# no timed run starts while a worker still loads torch and the model.
GUNICORN_CONFIG = '''
import os
def post_worker_init(worker):
    open(os.path.join({ready!r}, str(os.getpid())), 'w').close()
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


def fetch(url, timeout=300):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.read()


class Servers:
    """The servers this run started, each the leader of its own process group (so a Ctrl-C reaches
    the bench, not them, and stopping one stops its workers too)."""

    def __init__(self, work):
        self.work = work
        self.started = []

    def start(self, name, command, env=None):
        log = open(os.path.join(self.work, re.sub(r'\W+', '-', name) + '.log'), 'w')
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        log.close()
        self.started.append((name, process, log.name))
        return process

    def log_tail(self, process, lines=20):
        for _, started, path in self.started:
            if started is process:
                try:
                    return ''.join(open(path, errors='replace').readlines()[-lines:])
                except OSError:
                    return ''
        return ''

    def stop(self):
        for _, process, _ in self.started:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for name, process, _ in self.started:
            deadline = time.time() + 30
            while time.time() < deadline:
                try:
                    os.killpg(process.pid, 0)  # any of the group (gunicorn's workers) still there?
                except ProcessLookupError:
                    break
                process.poll()
                time.sleep(0.1)
            else:
                print(f'{name} did not stop in 30 s: killed', file=sys.stderr)
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            process.wait()
        self.started = []


def started_or_exit(servers, name, process, port, hint=''):
    try:
        wait_for(port)
    except SystemExit:
        code = process.poll()
        raise SystemExit(f'{name} did not start' + (f' (exit {code}){hint}' if code is not None else '') +
                         f':\n{servers.log_tail(process)}')


def wait_for_workers(servers, name, process, ready, count, timeout=300):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if process.poll() is not None:
            raise SystemExit(f'{name} stopped (exit {process.returncode}):\n{servers.log_tail(process)}')
        if len(os.listdir(ready)) >= count:
            return
        time.sleep(0.2)
    raise SystemExit(f'{name}: {len(os.listdir(ready))} of {count} workers loaded the app in {timeout} s:\n'
                     f'{servers.log_tail(process)}')


def version_of(module):
    done = subprocess.run([sys.executable, '-c', f'import {module}; print({module}.__version__)'],
                          capture_output=True, text=True)
    return done.stdout.strip() or '?'


def parse_args():
    cores = os.cpu_count() or 1
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--streetgan', required=True)
    parser.add_argument('--checkpoint', required=True)
    parser.add_argument('--seconds', type=int, default=10)
    parser.add_argument('--connections', type=int, default=32)
    parser.add_argument('--wrk-threads', type=int, default=2, help='wrk threads (default 2)')
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--n', type=int, default=16, help='images in the /gan_imgs grid (default 16)')
    parser.add_argument('--threads', type=int, default=2,
                        help="streetgan serve's --workers (render threads) and each gunicorn worker's --threads "
                             "(default 2, serve's default)")
    parser.add_argument('--queue', type=int, default=8, help="streetgan serve's --queue (default 8, serve's default)")
    parser.add_argument('--gunicorn-workers', type=int, default=cores,
                        help=f"the reference's gunicorn worker processes (default: the cores, {cores})")
    parser.add_argument('--ref-torch-threads', type=int, default=None,
                        help='torch threads in each gunicorn worker (default: max(1, cores / (workers × threads)))')
    parser.add_argument('--flask-dev', action='store_true',
                        help="also measure the tool replaced: the app on Flask's development server, PIL's PNG "
                             "defaults")
    parser.add_argument('--out', help='append one JSON line per route and side to this file (bench_record.py)')
    args = parser.parse_args()
    for name in ('seconds', 'connections', 'wrk_threads', 'repeats', 'n', 'threads', 'queue', 'gunicorn_workers'):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.ref_torch_threads is None:
        args.ref_torch_threads = max(1, cores // (args.gunicorn_workers * args.threads))
    return args


def main():
    args = parse_args()
    cores = os.cpu_count() or 1
    if not shutil.which('wrk'):
        raise SystemExit('bench_serve: no wrk on PATH; bash packaging/install-deps.sh --bench')

    def on_term(signum, frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, on_term)

    work = tempfile.mkdtemp(prefix='bench-serve-')
    servers = Servers(work)
    try:
        run(args, cores, work, servers)
    except KeyboardInterrupt:
        print('\nbench_serve: interrupted; stopping the servers', file=sys.stderr)
        sys.exit(130)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the servers' stop short
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        servers.stop()
        shutil.rmtree(work, ignore_errors=True)


def run(args, cores, work, servers):
    script = os.path.join(work, 'statuses.lua')
    open(script, 'w').write(STATUS_SCRIPT)
    state = os.path.join(work, 'G.pt')
    subprocess.run([args.streetgan, 'export', '--checkpoint', args.checkpoint, '--out', state], check=True,
                   stdout=subprocess.DEVNULL)
    sidecar = os.path.join(work, 'G.json')
    meta = json.load(open(sidecar))
    gunicorn_version, pil_version = version_of('gunicorn'), version_of('PIL')
    reference = f'reference: Flask app under gunicorn ({args.gunicorn_workers} workers)'
    ours_compute = max(1, cores // args.threads)

    ports = {OURS: free_port(), reference: free_port()}
    ours = servers.start(OURS, [args.streetgan, 'serve', '--checkpoint', args.checkpoint, '--port', str(ports[OURS]),
                                '--workers', str(args.threads), '--queue', str(args.queue)])

    ready = os.path.join(work, 'ready')
    os.mkdir(ready)
    config = os.path.join(work, 'gunicorn.conf.py')
    open(config, 'w').write(GUNICORN_CONFIG.format(ready=ready))
    factory = (f'reference_gallery:create_app({state!r}, {sidecar!r}, torch_threads={args.ref_torch_threads}, '
               f'png_level={OURS_PNG_LEVEL}, png_strategy={OURS_PNG_STRATEGY!r})')
    ref_env = dict(os.environ, **{name: str(args.ref_torch_threads) for name in bench_record.THREAD_VARIABLES})
    ref = servers.start(reference, [sys.executable, '-m', 'gunicorn', '--config', config, '--pythonpath', HERE,
                                    '--bind', f'127.0.0.1:{ports[reference]}', '--workers', str(args.gunicorn_workers),
                                    '--threads', str(args.threads), '--worker-class', 'gthread', '--timeout', '300',
                                    '--graceful-timeout', '5', '--log-level', 'warning', factory], env=ref_env)
    sides = [(OURS, ours), (reference, ref)]
    if args.flask_dev:
        ports[TOOL_REPLACED] = free_port()
        dev = servers.start(TOOL_REPLACED, [sys.executable, os.path.join(HERE, 'reference_gallery.py'),
                                            '--state', state, '--sidecar', sidecar,
                                            '--port', str(ports[TOOL_REPLACED])])
        sides.append((TOOL_REPLACED, dev))

    hint = '; are python3-flask and gunicorn installed? bash packaging/install-deps.sh --bench'
    for name, process in sides:
        started_or_exit(servers, name, process, ports[name], '' if name == OURS else hint)
    wait_for_workers(servers, reference, ref, ready, args.gunicorn_workers)

    grid_route = f'/gan_imgs?n={args.n}'
    routes = [grid_route, '/health']
    # One grid from each side before the timed runs: it warms them up, and shows what each encodes.
    pngs = {name: png_facts(fetch(f'http://127.0.0.1:{ports[name]}{grid_route}')) for name, _ in sides}
    grid = pngs[OURS]['size']
    for name, facts in pngs.items():
        if facts['size'] != grid:
            raise SystemExit(f"{name}'s grid is {facts['size']}, ours {grid}: not the same picture")
    warnings = []
    if pngs[OURS].get('filters', {}).keys() - {'sub'} or pngs[OURS]['flevel'] != 0:
        warnings.append("ours' PNG is not OpenCV's default (SUB rows, level 1, Z_RLE) any more: update OURS_PNG_* "
                        "in bench_serve.py so the reference encodes alike")

    columns = f'{grid[0]} × {grid[1]} px'
    header = [
        f'bench_serve: wrk -t{args.wrk_threads} -c{args.connections} -d{args.seconds}s --timeout 60s; '
        f'{args.repeats} repeat(s), every side once in each (the first rotating); medians; {cores} cores',
        f'endpoint: GET {grid_route}: a grid of {args.n} images of {meta["img_size"]} px ({columns}, padding 2); '
        f'and GET /health',
        f'{OURS}: streetgan serve --workers {args.threads} --queue {args.queue}: {args.threads} render threads, each '
        f'forward on {ours_compute} torch thread(s) (cores / workers)',
        f'{reference}: bench/reference_gallery.py under gunicorn {gunicorn_version}, {args.gunicorn_workers} '
        f'workers × {args.threads} threads (gthread), {args.ref_torch_threads} torch thread(s) per worker',
        f'PNG, both sides zlib level {OURS_PNG_LEVEL}, strategy Z_RLE: ours has no PNG option and takes OpenCV\'s '
        f'cv::imencode default (level 1, Z_RLE, the SUB filter on every row); the reference is set to match: '
        f'PIL {pil_version} save(compress_level={OURS_PNG_LEVEL}, compress_type=Z_RLE, optimize=False). '
        f'The row filters differ: PIL picks one per row and has no option to fix it. (With Z_RLE, zlib ignores '
        f'the level from 1 to 9.)',
    ]
    if args.flask_dev:
        header.append(f"{TOOL_REPLACED}: reference_gallery.py as the original ran: Flask's development server "
                      f"(threaded), PIL's PNG defaults (level 6, default strategy, a filter per row), torch's "
                      f"default threads")
    header.append('one grid response of each:')
    header += [f'  {name}: {describe_png(facts)}' for name, facts in pngs.items()]
    print('\n'.join(header), flush=True)

    rows = []
    names = [name for name, _ in sides]
    for route in routes:
        results = {name: [] for name in names}
        for repeat in range(args.repeats):
            order = names[repeat % len(names):] + names[:repeat % len(names)]
            for name in order:
                results[name].append(wrk(f'http://127.0.0.1:{ports[name]}{route}', args.seconds, args.connections,
                                         args.wrk_threads, script))
        for name in names:
            rows.append((route, name, summary(results[name]), results[name]))

    print()
    print('| route | server | requests/s | 200s/s | p50 ms | p99 ms | bytes/200 response | 200 | 503 | other status '
          '| socket errors | runs (req/s) |')
    print('|---|---|---|---|---|---|---|---|---|---|---|---|')
    for route, name, s, _ in rows:
        print(f"| `{route}` | {name} | {s['rps']:,.1f} | {s['ok_per_s']:,.1f} | {s['p50']:,.1f} | {s['p99']:,.1f} | "
              f"{'–' if s['bytes'] is None else format(s['bytes'], ',.0f')} | {s['ok']:,} | {s['503']:,} | {s['other']:,} | {s['socket_errors']:,} | "
              f"{', '.join(map(str, s['runs']))} |")
    print()
    for route in routes:
        by_name = {name: s for r, name, s, _ in rows if r == route}
        o = by_name[OURS]
        for other in names[1:]:
            p = by_name[other]
            if p['rps'] > 0 and p['ok_per_s'] > 0:
                print(f"{route}: ours / {other} = {o['rps'] / p['rps']:.2f}× requests/s, "
                      f"{o['ok_per_s'] / p['ok_per_s']:.2f}× 200s/s")
        if o['503']:
            warnings.append(f"{route}: ours answered {o['503']:,} requests 503 (the queue was full), which count in "
                            f"its requests/s; compare 200s/s, or give --queue {args.connections} or more")
    for warning in warnings:
        print(f'warning: {warning}')

    common = {'endpoint': None, 'n': args.n, 'image_px': meta['img_size'], 'grid_px': list(grid),
              'seconds': args.seconds, 'connections': args.connections, 'wrk_threads': args.wrk_threads,
              'repeats': args.repeats, 'cores': cores, 'order': 'each side once a repeat, the first rotating'}
    side_settings = {
        OURS: {'server': 'streetgan serve', 'workers': args.threads, 'queue': args.queue,
               'torch_threads_per_render': ours_compute, 'png_level': OURS_PNG_LEVEL, 'png_strategy': 'rle',
               'png_filter': 'sub (OpenCV default)', 'png_bytes_sample': pngs[OURS]['bytes']},
        reference: {'server': f'gunicorn {gunicorn_version}', 'gunicorn_workers': args.gunicorn_workers,
                    'gunicorn_threads': args.threads, 'worker_class': 'gthread',
                    'torch_threads_per_worker': args.ref_torch_threads, 'png_level': OURS_PNG_LEVEL,
                    'png_strategy': 'rle', 'png_filter': f'adaptive per row (PIL {pil_version})',
                    'png_bytes_sample': pngs[reference]['bytes']},
    }
    if args.flask_dev:
        side_settings[TOOL_REPLACED] = {'server': 'Flask development server (threaded)', 'png_level': 6,
                                        'png_strategy': 'default', 'png_filter': f'adaptive per row (PIL {pil_version})',
                                        'torch_threads_per_worker': "torch's default",
                                        'png_bytes_sample': pngs[TOOL_REPLACED]['bytes']}
    for route, name, s, runs in rows:
        bench_record.write(path=args.out, bench='serve', case=route, side=name, runs=[r['rps'] for r in runs],
                           unit='requests/s', better='higher', settings={**common, 'endpoint': route, **side_settings[name]},
                           streetgan=args.streetgan, p50_ms=s['p50'], p99_ms=s['p99'], bytes=s['bytes'],
                           ok_per_s=s['ok_per_s'], ok_per_s_runs=[r['ok_per_s'] for r in runs],
                           statuses={'200': s['ok'], '503': s['503'], 'other': s['other']},
                           socket_errors=s['socket_errors'])
    if args.out:
        print(f'\nwrote {len(rows)} records to {args.out}')


if __name__ == '__main__':
    main()
