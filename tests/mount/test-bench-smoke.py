#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Smoke test of the benchmark harness (bench/run), so it cannot rot.

Runs `bench/run --tiny --rounds 1` on a small generated tree with real
jailfs, jailfs audit=all and (where installed) bindfs mounts, then checks
that the printed table has every row, that every timing is a time and every
ratio a number, that the daemon peak RSS/fd lines are there, that the
markdown table matches, and that no mount is left behind. Timings are never
judged: benchmarks are not tests.

Needs /dev/fuse: without it the test FAILS when CI=true, else skips (77).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

ROWS = [  # label prefixes, in table order
    "find . -type f", "rg -l MODULE_LICENSE", "tar cf - .", "git status",
    "git log -p -1000", "2000 stat() of absent names", "untar ", "rm -rf of them",
    "dd write ", "dd read ", "jailrun --root MNT", "jailrun --source DIR",
]
# (row prefix, column) cells that are "n/a" by design
NOT_APPLICABLE = {
    ("jailrun --root MNT", "bindfs"), ("jailrun --source DIR", "bindfs"),
    ("jailrun --source DIR", "audit all"),
}
TIME = re.compile(r"^\d+(\.\d+)? (ms|s)$")
RATIO = re.compile(r"^\d+\.\d\dx$")

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("not ok: " + msg)


def parse_table(text):
    """Header cells and rows of the text table that bench/run prints."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("workload ") and i + 1 < len(lines) and lines[i + 1].startswith("---"):
            head = re.split(r"\s{2,}", line.strip())
            rows = []
            for row in lines[i + 2:]:
                if not row.strip():
                    break
                rows.append(re.split(r"\s{2,}", row.strip()))
            return head, rows
    return None, []


def leftover_mounts(tag):
    with open("/proc/self/mountinfo") as f:
        return [ln.split()[4] for ln in f if tag in ln.split()[4]]


def main():
    if not os.path.exists("/dev/fuse"):
        if os.environ.get("CI") == "true":
            print("FAIL: /dev/fuse is missing and CI=true: the bench smoke test must run")
            return 1
        print("SKIP: no /dev/fuse")
        return 77
    src = os.environ.get("JF_SRCDIR") or os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__))))
    build = os.environ.get("JF_BUILDDIR") or os.path.join(src, "build")
    cache = tempfile.mkdtemp(prefix="jf-bench-smoke.")
    md = os.path.join(cache, "table.md")
    cmd = [sys.executable, os.path.join(src, "bench", "run"), "--tiny", "--rounds", "1",
           "--build", build, "--cache", cache, "--markdown", md]
    print("running: " + " ".join(cmd), flush=True)
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
        out = r.stdout.decode(errors="replace")
        print(out)
        print(r.stderr.decode(errors="replace")[-6000:], file=sys.stderr)
        check(r.returncode == 0, "bench/run exited %d (0 expected)" % r.returncode)

        head, rows = parse_table(out)
        check(head is not None, "no table (a 'workload' header over a '---' line) printed")
        if head is None:
            return 1
        want_cols = ["workload", "native", "jailfs", "ratio"]
        if shutil.which("bindfs"):
            want_cols += ["bindfs", "ratio"]
        want_cols += ["audit all", "vs jailfs"]
        check(head == want_cols, "columns %r, expected %r" % (head, want_cols))
        check(len(rows) == len(ROWS), "%d rows, expected %d" % (len(rows), len(ROWS)))
        for prefix, row in zip(ROWS, rows):
            check(row[0].startswith(prefix), "row %r, expected one starting %r"
                  % (row[0], prefix))
            check(len(row) == len(head), "row %r has %d cells, expected %d"
                  % (row[0], len(row), len(head)))
            for i in range(1, min(len(head), len(row))):
                col, cell = head[i], row[i]
                # a ratio column belongs to the time column left of it
                owner = head[i - 1] if col in ("ratio", "vs jailfs") else col
                if (prefix, owner) in NOT_APPLICABLE:
                    check(cell == "n/a", "row %r column %s: %r, expected n/a"
                          % (row[0], col, cell))
                elif col in ("ratio", "vs jailfs"):
                    check(RATIO.match(cell), "row %r: ratio %r after %s is not a number"
                          % (row[0], cell, owner))
                else:
                    check(TIME.match(cell), "row %r column %s: %r is not a time"
                          % (row[0], col, cell))
        for daemon in ("jailfs-tree", "jailfs-work", "audit-tree", "audit-work"):
            check(re.search(r"^%s\s+peak RSS \(VmHWM\) [\d.]+ MiB, peak open fds \d+"
                            % daemon, out, re.M),
                  "no peak RSS / open fds line for %s" % daemon)
        check("machine: nproc" in out, "no machine line")
        try:
            with open(md) as f:
                mdrows = [ln for ln in f if ln.startswith("| ") and not ln.startswith("| ---")]
            check(len(mdrows) == len(ROWS) + 1, "markdown table has %d lines, expected %d"
                  % (len(mdrows), len(ROWS) + 1))
        except OSError as e:
            check(False, "no markdown table: %s" % e)
        left = leftover_mounts(cache)
        check(not left, "mounts left behind: %s" % left)
    finally:
        for mp in leftover_mounts(cache):
            subprocess.run(["umount", "-l", mp])
        shutil.rmtree(cache, ignore_errors=True)
    if failures:
        print("FAIL: %d problem(s)" % len(failures))
        return 1
    print("ok: table with %d rows, every ratio a number" % len(ROWS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
