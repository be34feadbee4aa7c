"""Shared by the compare_paddle_* scripts: run a script's Paddle side in another Python
(one with paddlepaddle installed) and read back what it saved."""
import argparse
import json
import os
import subprocess
import tempfile

import numpy as np


def run_paddle_side(script: str, data: dict, paddle_python: str, quiet: bool = False):
    """Save `data`, run ``paddle_python script --paddle-side DATA OUT``, and return the
    arrays it saved in OUT (and the JSON it saved in OUT.json, or None)."""
    with tempfile.TemporaryDirectory() as tmp:
        data_path, out_path = os.path.join(tmp, "data.npz"), os.path.join(tmp, "paddle.npz")
        np.savez(data_path, **data)
        subprocess.run([paddle_python, os.path.abspath(script), "--paddle-side", data_path,
                        out_path], check=True, stderr=subprocess.DEVNULL if quiet else None)
        arrays = dict(np.load(out_path))
        info = None
        if os.path.exists(out_path + ".json"):
            with open(out_path + ".json") as f:
                info = json.load(f)
    return arrays, info


def parse_args(paddle_side):
    """The comparison scripts' command line. Run as the Paddle side (``--paddle-side
    DATA OUT``), call `paddle_side(DATA, OUT)` and return None; else return the args."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--paddle-python", default="/tmp/pdvenv/bin/python")
    ap.add_argument("--paddle-side", nargs=2, metavar=("DATA", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.paddle_side:
        paddle_side(*args.paddle_side)
        return None
    return args
