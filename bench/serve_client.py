"""Posts the same image to two servers' `/predict_raw` alternately (A, B, A, B, ...), one request at
a time, and prints each one's median (p50) wall time per request, as seen by the client. Last
line: `serve: python <a> ms, ours <b> ms, ratio <a/b>` (the first server is the baseline).

    bench/.venv/bin/python bench/serve_client.py IMAGE BASELINE_URL OURS_URL [--requests 20] [--warmup 3]
"""

import argparse
import os
import statistics
import time
import urllib.request


def post(url, data):
    request = urllib.request.Request(url + "/predict_raw", data=data, method="POST")
    start = time.perf_counter()
    with urllib.request.urlopen(request) as response:
        body = response.read()
    elapsed = (time.perf_counter() - start) * 1e3
    if b'"keypoints"' not in body:
        raise SystemExit(f"{url}: unexpected answer {body[:200]!r}")
    return elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("image")
    ap.add_argument("baseline")
    ap.add_argument("ours")
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args()
    with open(args.image, "rb") as f:
        data = f.read()
    times = {args.baseline: [], args.ours: []}
    for i in range(args.warmup + args.requests):
        for url in (args.baseline, args.ours):
            ms = post(url, data)
            if i >= args.warmup:
                times[url].append(ms)
        if i >= args.warmup:
            load = os.getloadavg()[0]
            print(f"request {i - args.warmup + 1}: python {times[args.baseline][-1]:.1f} ms, "
                  f"ours {times[args.ours][-1]:.1f} ms (load average {load:.2f})")
    a, b = statistics.median(times[args.baseline]), statistics.median(times[args.ours])
    print(f"serve: python {a:.1f} ms, ours {b:.1f} ms, ratio {a / b:.2f}")


if __name__ == "__main__":
    main()
