"""Run Paddle scripts unchanged under ``python -m irflow.paddle`` and under Paddle, by
hand, and show where their printed output differs (times per step ignored)::

    python benchmarks/compare_paddle_script.py [--paddle-python /tmp/pdvenv/bin/python]
        [SCRIPT ...]        (default: every script in benchmarks/paddle_scripts/)

A script prints what it computes; one whose weights come from NumPy prints the same
numbers on both sides, up to float32 rounding in the last digits.
"""
import argparse
import difflib
import os
import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
TIMING = re.compile(r" - [0-9.]+(s|ms|us)/step")


def output(command, script) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    done = subprocess.run([*command, str(script)], capture_output=True, text=True, env=env,
                          timeout=600)
    lines = done.stdout.splitlines() + ([f"exit status {done.returncode}"]
                                        if done.returncode else [])
    return [TIMING.sub("", line) for line in lines]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--paddle-python", default="/tmp/pdvenv/bin/python")
    ap.add_argument("scripts", nargs="*")
    args = ap.parse_args()
    scripts = args.scripts or sorted((HERE / "paddle_scripts").glob("*.py"))
    for script in scripts:
        ours = output([sys.executable, "-m", "irflow.paddle"], script)
        theirs = output([args.paddle_python], script)
        diff = list(difflib.unified_diff(theirs, ours, "paddle", "irflow", lineterm="", n=0))
        print(f"{pathlib.Path(script).name}: {len(ours)} lines, "
              f"{'identical' if not diff else f'{len(diff) - 2} diff lines'}")
        for line in diff[2:]:
            print("    " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
