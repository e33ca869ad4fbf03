#!/usr/bin/env python3
"""agent-harness.py: how an agent harness calls jailrun (Python standard library only).

For every shell command its model wants to run, a harness builds one JSON
request, pipes it to `jailrun --json --request -`, and reads back one JSON
result: the command's exit code (or -100 when jailrun refused it, -101 when
it timed out), its captured stdout and stderr, and why it was refused.

    python3 mnt-examples/agent-harness.py --source mnt-examples/demo-project -- ls -la
    python3 mnt-examples/agent-harness.py --root /mnt/agent --timeout 5 -- make test
    python3 mnt-examples/agent-harness.py --source . --shell -- 'make && make test'

Prints the request and the result as JSON, then one summary line; exits 0
when the command ran and succeeded, 1 when it ran and failed, 2 when
jailrun refused it or it timed out.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

DENIED = -100
TIMED_OUT = -101


def build_request(argv, shell, cwd, timeout_s, max_output, env):
    """The whole request as one JSON object (see README, "jailrun")."""
    req = {"timeout_ms": int(timeout_s * 1000), "max_output_bytes": max_output}
    if shell:
        req["command"] = " ".join(argv)
        req["shell"] = True
    else:
        req["argv"] = list(argv)
    if cwd:
        req["cwd"] = cwd
    if env:
        # "NAME" passes the variable from jailrun's environment, "NAME=VALUE" sets it.
        req["env"] = list(env)
    return req


def run_jailed(jailrun, where, request, audit=None):
    """Pipe @request to jailrun and return its parsed JSON result."""
    cmd = [jailrun] + where + ["--json", "--request", "-"]
    if audit:
        cmd += ["--audit", audit]
    # jailrun enforces the timeout itself; ours only guards against a hung jailrun.
    wall = request["timeout_ms"] / 1000 + 30
    proc = subprocess.run(cmd, input=json.dumps(request).encode(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=wall, check=False)
    try:
        return json.loads(proc.stdout.decode("utf-8"))
    except ValueError:
        sys.exit("agent-harness: jailrun (exit %d) gave no JSON result: %s"
                 % (proc.returncode, proc.stderr.decode("utf-8", "replace").strip()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jailrun", default=os.environ.get("JAILRUN") or shutil.which("jailrun")
                    or "jailrun", help="jailrun binary (default: $JAILRUN, then PATH)")
    grp = ap.add_mutually_exclusive_group()
    grp.add_argument("--root", help="an existing jailfs mountpoint to run in")
    grp.add_argument("--source", help="a directory: jailrun mounts a one-shot view of it")
    ap.add_argument("--policy", help="policy file for --source")
    ap.add_argument("--shell", action="store_true", help="run COMMAND as one /bin/sh -c string")
    ap.add_argument("--cwd", help="working directory inside the view")
    ap.add_argument("--timeout", type=float, default=120, help="seconds (default 120)")
    ap.add_argument("--max-output", type=int, default=1 << 20, help="bytes per stream")
    ap.add_argument("--env", action="append", default=[], help="NAME or NAME=VALUE to pass")
    ap.add_argument("--audit", help="write the command's audit log (JSON Lines) here")
    ap.add_argument("command", nargs="+", help="the command and its arguments (after --)")
    args = ap.parse_args()

    if args.root:
        where = ["--root", args.root]
    else:
        where = ["--source", args.source or "."]
        if args.policy:
            where += ["--policy", args.policy]

    request = build_request(args.command, args.shell, args.cwd, args.timeout,
                            args.max_output, args.env)
    result = run_jailed(args.jailrun, where, request, args.audit)

    print(json.dumps({"request": request, "result": result}, indent=2, ensure_ascii=False))
    code = result.get("exit_code")
    if result.get("denied") or code == DENIED:
        print("summary: refused by jailrun: %s (rule %s)"
              % (result.get("reason"), result.get("rule")), file=sys.stderr)
        return 2
    if result.get("timed_out") or code == TIMED_OUT:
        print("summary: timed out after %s ms" % result.get("duration_ms"), file=sys.stderr)
        return 2
    print("summary: exit %s in %s ms%s" % (code, result.get("duration_ms"),
          ", output truncated" if result.get("stdout_truncated") or
          result.get("stderr_truncated") else ""), file=sys.stderr)
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
