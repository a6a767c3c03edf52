#!/usr/bin/env python3
"""What a page of `streetgan publish` costs a visitor: the folder's bytes (what a static host
serves; a first visit downloads all of it) and the time from opening the page in a fresh headless
Chromium to its first grid of 16 scenes, generated in the browser by ONNX Runtime Web (WebAssembly,
one thread: a static host sends no cross-origin isolation headers, and the preview sends none
either). Beside it, the same grid from `streetgan serve`'s gallery page at / on the same machine
and checkpoint, where the server renders (the always-on machine the page replaces; its page also
starts a walk at once, as a visitor gets it). Each repeat opens both, the first side rotating;
medians of --repeats. With --out, one JSON line per side and one for the bytes (bench_record.py).

  bash packaging/install-deps.sh --bench
  /usr/bin/python3 bench/bench_publish.py --streetgan build/app/cli/streetgan --run runs/x \\
      --npm build/npm/node_modules --repeats 5 --out bench/results/publish-DATE.jsonl
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_record  # noqa: E402


def start(command, pattern, stream):
    """Starts a server and waits for its address line on `stream` ("stdout" or "stderr")."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    source = process.stdout if stream == "stdout" else process.stderr
    deadline = time.time() + 300
    while time.time() < deadline:
        line = source.readline()
        if not line:
            break
        found = re.search(pattern, line)
        if found:
            return process, found.group(1)
    process.kill()
    sys.exit(f"bench_publish.py: {' '.join(command)} did not start")


def first_grid(url, kind, npm):
    env = dict(os.environ, NODE_PATH=npm)
    done = subprocess.run(["node", os.path.join(HERE, "page_first_grid.js"), url, kind], capture_output=True, text=True,
                          env=env, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["state"] not in ("ready", "yes"):
        sys.exit(f"bench_publish.py: {kind} page at {url} ended {result['state']}")
    return result["ms"] / 1000.0


def folder_bytes(site):
    groups = {"model.onnx": 0, "ort/ (ONNX Runtime Web)": 0, "scenes.json": 0, "page (html, js, css)": 0}
    for root, _, files in os.walk(site):
        for name in files:
            path = os.path.join(root, name)
            relative = os.path.relpath(path, site)
            key = ("ort/ (ONNX Runtime Web)" if relative.startswith("ort/") else
                   relative if relative in groups else "page (html, js, css)")
            groups[key] += os.path.getsize(path)
    return groups


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streetgan", required=True)
    parser.add_argument("--run", required=True, help="a run folder: its newest checkpoint is published and served")
    parser.add_argument("--npm", required=True, help="node_modules with puppeteer-core (the build's npm/node_modules)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", help="append bench_record.py JSON lines here")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="bench-publish-")
    site = os.path.join(work, "site")
    subprocess.run([args.streetgan, "publish", "--run", args.run, "--out", site], check=True, capture_output=True)
    groups = folder_bytes(site)
    preview, site_url = start([args.streetgan, "publish", "--out", site, "--preview", "--port", "0"],
                              r"on (http://127\.0\.0\.1:\d+/)", "stdout")
    serve, gallery_url = start([args.streetgan, "serve", "--run", args.run, "--port", "0"],
                               r"on (http://127\.0\.0\.1:\d+/)", "stderr")
    sides = [("ours: static page, ONNX Runtime Web in the browser", site_url, "site"),
             ("streetgan serve's gallery (the server renders)", gallery_url, "gallery")]
    times = {name: [] for name, _, _ in sides}
    try:
        for repeat in range(args.repeats):
            order = sides[repeat % 2:] + sides[:repeat % 2]
            for name, url, kind in order:
                times[name].append(first_grid(url, kind, args.npm))
    finally:
        preview.terminate()
        serve.terminate()

    print(f"streetgan publish: {args.run}, 16 scenes, the folder {sum(groups.values()):,} bytes")
    for group, size in groups.items():
        print(f"  {group:28s} {size:>12,} bytes")
    print(f"time to the first grid, fresh Chromium each time, medians of {args.repeats}:")
    for name, runs in times.items():
        print(f"  {name:54s} {statistics.median(runs):6.2f} s   runs {', '.join(f'{t:.2f}' for t in runs)}")
        bench_record.write(args.out, bench="publish", case="first grid of 16 scenes", side=name, runs=runs, unit="s",
                           better="lower", settings={"run": args.run, "browser": "chromium --headless"},
                           streetgan=args.streetgan)
    bench_record.write(args.out, bench="publish", case="folder bytes", side="ours: static page",
                       runs=[sum(groups.values())], unit="bytes", better="lower", settings={"groups": groups},
                       streetgan=args.streetgan)


if __name__ == "__main__":
    main()
