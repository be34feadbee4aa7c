"""Run the frontend corpus (tests/frontend/corpus) against real PaddlePaddle (by hand).

    python benchmarks/corpus_paddle_bar.py [--paddle-python /tmp/paddle-venv/bin/python]
                                           [--sot] [--keep DIR] [--corpus DIR]

--corpus picks the folder (default tests/frontend/corpus; the second corpus is
tests/frontend/corpus2, which imports the first one's harness).

The corpus files are written as users write Paddle code (``import irflow as paddle``).
This script runs them three times, each in a subprocess under pytest (``--runxfail``,
so irflow's known-failure markers do not apply):

1. irflow: the outcome of every program compiled by irflow, and irflow's eager outputs;
2. Paddle: the same files with ``irflow`` bound to ``paddle`` (in the interpreter given
   by --paddle-python, which needs paddlepaddle and pytest); there the harness compares
   Paddle's own ``to_static`` (AST mode, ``full_graph=True``; ``--sot`` for Paddle's
   default bytecode mode) with Paddle's eager mode, and records Paddle's eager outputs;
3. compares irflow's eager outputs with Paddle's (parameters come from a fixed NumPy
   stream, so they agree).

Prints, per theme, how many programs each compiler gets right, the programs Paddle's
to_static gets wrong, and the programs whose eager results differ between irflow and
Paddle. irflow's process never imports paddle.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join("tests", "frontend", "corpus")


class Recorder:
    """pytest plugin: the outcome of every test, saved after each one (with the test
    that is running, so that a crash of the interpreter can be told and skipped), and
    the eager log at the end."""

    def __init__(self, out):
        self.out = out
        self.results = json.load(open(out)) if os.path.exists(out) else {}

    def _save(self, running=None):
        with open(self.out, "w") as f:
            json.dump(self.results, f, indent=1)
        with open(self.out + ".running", "w") as f:
            f.write(running or "")

    def pytest_runtest_logstart(self, nodeid, location):
        self._save(nodeid)

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or (report.failed and report.nodeid not in self.results):
            message = ""
            if report.failed and hasattr(report.longrepr, "reprcrash"):
                message = report.longrepr.reprcrash.message
            self.results[report.nodeid] = {"outcome": report.outcome, "message": message}

    def pytest_runtest_logfinish(self, nodeid, location):
        self._dump()
        self._save()

    def pytest_sessionfinish(self, session):
        self._dump()
        self._save()

    def _dump(self):
        """The eager log so far (a later crash of the interpreter keeps it)."""
        harness = sys.modules.get("tests.frontend.corpus.harness")
        if harness is not None:
            harness.dump_eager_log()


def side(out, sot=False, skip=(), corpus=CORPUS):
    """Run the corpus here (irflow, or Paddle when CORPUS_PADDLE=1) and save outcomes."""
    import pytest
    if os.environ.get("CORPUS_PADDLE") == "1":
        import functools
        import paddle
        to_static = paddle.jit.to_static
        paddle.jit.to_static = functools.partial(to_static, full_graph=not sot) \
            if not sot else to_static
        for name, module in [("irflow", paddle), ("irflow.nn", paddle.nn),
                             ("irflow.nn.functional", paddle.nn.functional),
                             ("irflow.static", paddle.static), ("irflow.jit", paddle.jit)]:
            sys.modules[name] = module
    os.chdir(ROOT)
    sys.path.insert(0, ROOT)
    recorder = Recorder(out)
    deselect = [f"--deselect={n}" for n in [*recorder.results, *skip]]
    pytest.main([corpus, f"--ignore={corpus}/test_harness.py", "-q", "--runxfail",
                 "--noconftest", "-p", "no:cacheprovider",
                 "--tb=no", "-W", "ignore", *deselect], plugins=[recorder])


def run(python, out, dump, paddle, sot=False, corpus=CORPUS):
    """Run one side, again after each crash of the interpreter (the crashing test is
    recorded as "crashed"; each run's eager log goes to its own file)."""
    env = dict(os.environ, CORPUS_PADDLE="1" if paddle else "0", GLOG_minloglevel="3")
    for f in (out, out + ".running"):
        if os.path.exists(f):
            os.remove(f)
    logs = []
    for attempt in range(50):
        logs.append(f"{dump}.{attempt}.npz")
        if os.path.exists(logs[-1]):
            os.remove(logs[-1])
        cmd = [python, os.path.abspath(__file__), "--side", out, "--corpus", corpus] + \
            (["--sot"] if sot else [])
        child = subprocess.Popen(cmd, env=dict(env, CORPUS_DUMP=logs[-1]),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        code = _wait(child, out + ".running")
        running = open(out + ".running").read().strip() if os.path.exists(out + ".running") \
            else ""
        if code == 0 or not running:
            break
        results = json.load(open(out)) if os.path.exists(out) else {}
        results[running] = {"outcome": "crashed" if code != "timeout" else "timeout",
                            "message": f"signal {-code}" if code != "timeout" else
                            f"still running after {TIMEOUT} s"}
        with open(out, "w") as f:
            json.dump(results, f, indent=1)
    merged = {}
    for log in logs:
        if os.path.exists(log):
            merged.update(np.load(log))
    np.savez(dump, **merged)
    with open(out) as f:
        return json.load(f)


TIMEOUT = 60  # seconds for one test


def _wait(child, running_file):
    """The child's exit code, or "timeout" (and the child killed) when one test has
    been running for TIMEOUT seconds."""
    import time
    while True:
        try:
            return child.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        if os.path.exists(running_file) and open(running_file).read().strip() and \
                time.time() - os.path.getmtime(running_file) > TIMEOUT:
            child.kill()
            child.wait()
            return "timeout"


def theme(nodeid):
    return nodeid.split("::")[0].rsplit("/", 1)[-1].removeprefix("test_").removesuffix(".py")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--paddle-python", default="/tmp/paddle-venv/bin/python")
    ap.add_argument("--sot", action="store_true", help="Paddle's default (SOT) mode")
    ap.add_argument("--keep", help="keep the outcome files in this folder")
    ap.add_argument("--corpus", default=CORPUS, help="the corpus folder (from the repo root)")
    ap.add_argument("--side", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.side:
        side(args.side, args.sot, corpus=args.corpus)
        return
    tmp = args.keep or tempfile.mkdtemp()
    os.makedirs(tmp, exist_ok=True)
    ours = run(sys.executable, f"{tmp}/irflow.json", f"{tmp}/irflow_eager.npz", False,
               corpus=args.corpus)
    theirs = run(args.paddle_python, f"{tmp}/paddle.json", f"{tmp}/paddle_eager.npz", True,
                 args.sot, corpus=args.corpus)
    eager_ours = dict(np.load(f"{tmp}/irflow_eager.npz"))
    eager_theirs = dict(np.load(f"{tmp}/paddle_eager.npz"))

    differ = collections.defaultdict(list)
    for key, a in eager_ours.items():
        b = eager_theirs.get(key)
        test = key.split("#")[0]
        if b is None:
            continue
        same = a.shape == b.shape and (np.allclose(a, b, rtol=1e-4, atol=1e-5)
                                       if a.dtype.kind == "f" else np.array_equal(a, b))
        if not same:
            differ[test].append(key.split("#", 1)[1])

    rows = collections.defaultdict(lambda: [0, 0, 0])
    wrong = []
    for nodeid, r in sorted(ours.items()):
        t = theme(nodeid)
        rows[t][0] += 1
        rows[t][1] += r["outcome"] == "passed"
        p = theirs.get(nodeid, {"outcome": "missing", "message": ""})
        rows[t][2] += p["outcome"] == "passed"
        if p["outcome"] != "passed":
            wrong.append((nodeid, " ".join(p["message"].split())[:150]))
    mode = "SOT" if args.sot else "AST (full_graph=True)"
    print(f"{'theme':24} programs  irflow  paddle to_static [{mode}]")
    for t, (n, a, b) in sorted(rows.items()):
        print(f"{t:24} {n:8} {a:7} {b:7}")
    total = [sum(r[i] for r in rows.values()) for i in range(3)]
    print(f"{'total':24} {total[0]:8} {total[1]:7} {total[2]:7}")
    print("\nPaddle's to_static wrong or failing:")
    for nodeid, message in wrong:
        print(f"  {nodeid.split('::')[-1]} ({theme(nodeid)}): {message}")
    print("\nEager results that differ between irflow and Paddle:")
    for test, keys in sorted(differ.items()):
        print(f"  {test.split('::')[-1]}: {', '.join(keys[:4])}")
    print(f"\noutcome files in {tmp}")


if __name__ == "__main__":
    main()
