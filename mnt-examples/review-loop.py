#!/usr/bin/env python3
"""review-loop.py: an agent harness's review loop over an overlay view (Python standard library only).

Each step (one shell command string, as a model would ask for) runs with
`jailrun --changes LAYER --json`: the project is never written, the changes
go to LAYER, and jailrun takes a checkpoint before the step and names it in
its result. After each step the loop shows `jailfs diff LAYER`; a step that
fails or is refused is undone with `jailfs restore LAYER CHECKPOINT`, so the
next step starts from the tree as it was before it. At the end, --apply
writes what is left into the project (`jailfs apply LAYER`); without it the
layer stays for review.

    python3 mnt-examples/review-loop.py --source proj --changes /var/tmp/layer \\
        'sed -i s/old/new/ main.c' 'make test' --apply

Exits 0 when every step succeeded, 1 when some step was undone, 2 when
jailrun or jailfs failed.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys


def fail(msg):
    print("review-loop: " + msg, file=sys.stderr)
    sys.exit(2)


def tool(name, env):
    return os.environ.get(env) or shutil.which(name) or name


def run_step(jailrun, source, layer, command, timeout_s):
    """One step in the overlay view; returns jailrun's parsed JSON result."""
    request = {"command": command, "shell": True, "timeout_ms": int(timeout_s * 1000)}
    proc = subprocess.run([jailrun, "--source", source, "--changes", layer, "--json",
                           "--request", "-"], input=json.dumps(request).encode(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=timeout_s + 60, check=False)
    try:
        return json.loads(proc.stdout.decode("utf-8"))
    except ValueError:
        fail("jailrun gave no JSON result: %s" % proc.stderr.decode("utf-8", "replace").strip())


def jailfs(binary, *args):
    """Run a jailfs review command; its stdout, or exit 2 when it fails."""
    proc = subprocess.run([binary] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, check=False)
    if proc.returncode != 0:
        fail("jailfs %s failed: %s"
             % (" ".join(args), proc.stderr.decode("utf-8", "replace").strip()))
    return proc.stdout.decode("utf-8", "replace")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", required=True, help="the project directory")
    ap.add_argument("--changes", required=True, help="the layer (made when absent)")
    ap.add_argument("--apply", action="store_true", help="apply the layer at the end")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per step")
    ap.add_argument("steps", nargs="+", help="shell command strings, one per step")
    args = ap.parse_args()
    jailrun = tool("jailrun", "JAILRUN")
    jfs = tool("jailfs", "JAILFS")

    undone = 0
    for n, step in enumerate(args.steps, 1):
        res = run_step(jailrun, args.source, args.changes, step, args.timeout)
        if res.get("denied"):
            print("step %d: %s -> refused by jailrun: %s" % (n, step, res.get("reason")))
            undone += 1  # nothing ran, nothing to undo
            continue
        changes = res.get("changes") or {}
        cp = changes.get("checkpoint")
        if res.get("error") or not cp:
            fail("step %d: %s" % (n, res.get("error") or changes.get("error")))
        print("step %d: %s -> exit %s (checkpoint %s)" % (n, step, res["exit_code"], cp))
        print(jailfs(jfs, "diff", args.changes), end="")
        if res["exit_code"] != 0:
            # failed or refused: put the layer back as it was before this step
            jailfs(jfs, "restore", args.changes, cp)
            print("step %d: undone (jailfs restore %s %s)" % (n, args.changes, cp))
            undone += 1
    if args.apply:
        jailfs(jfs, "apply", args.changes)
        print("applied to %s" % args.source)
    else:
        print("review with: jailfs diff %s; then jailfs apply %s" % (args.changes, args.changes))
    return 1 if undone else 0


if __name__ == "__main__":
    sys.exit(main())
