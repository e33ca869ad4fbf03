#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Smoke test of the benchmark harness (bench/run), so it cannot rot.

Runs `bench/run --tiny --rounds 1` on a small generated tree with real
jailfs, jailfs audit=all and (where installed) bindfs mounts, then checks
that the printed table has every row, that every timing is a time and every
ratio a number, that the footer gives each daemon side's peak RSS and fds,
that the daemon peak RSS/fd lines are there, that the cold rows print
the requests per entry of their fresh views, that the jailrun and session
rows are timed against native only and the session rows print their
per-command totals and slowest command, that the markdown table
matches, that npm-ci is left out offline, and that no mount is left behind.
Then a few rows again as the ordinary user jftest (--user): the table must
say so and every cell be a time. Timings are never judged: benchmarks are
not tests.

Needs /dev/fuse: without it the test FAILS when CI=true, else skips (77).
"""

import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile

ROWS = [  # label prefixes, in table order
    "find . -type f", "rg -l MODULE_LICENSE", "tar cf - .", "git status",
    "git log -p -1000", "rg -l MODULE_LICENSE, a fresh view", "git status, a fresh view",
    "rg -l MODULE_LICENSE, jailrun --source --fresh", "rg -l MODULE_LICENSE, jailrun --source, the",
    "rg -l MODULE_LICENSE, jailrun --source, a later", "git status, jailrun --source --fresh",
    "git status, jailrun --source, the", "git status, jailrun --source, a later",
    "session of 20 commands", "the same session",
    "2000 stat() of absent names", "untar ", "rm -rf of them",
    "dd write ", "dd read ", "jailrun --root MNT", "jailrun --source DIR",
    "python3 -m venv --without-pip", "git clone --local",
]
FOOTER = ["daemon peak RSS, tree/work", "daemon peak open fds, tree/work"]
FOOTER_CELL = {FOOTER[0]: re.compile(r"^\d+\.\d/\d+\.\d MiB$"), FOOTER[1]: re.compile(r"^\d+/\d+$")}
USER = "jftest"
# (row prefix, column) cells that are "n/a" by design
# the jailrun rows: jailrun's own views against native, no bindfs or audit side
JAILRUN_ONLY = [r for r in ROWS if ", jailrun --source" in r or "session" in r]
NOT_APPLICABLE = {
    ("jailrun --root MNT", "bindfs"), ("jailrun --source DIR", "bindfs"),
    ("jailrun --source DIR", "audit all"),
} | {(r, col) for r in JAILRUN_ONLY for col in ("bindfs", "audit all")}
TIME = re.compile(r"^\d+(\.\d+)? (ms|s)$")
RATIO = re.compile(r"^\d+\.\d\dx$")

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("not ok: " + msg)


def parse_table(text):
    """Header cells, rows and footer rows (those below a second "---" line)
    of the text table that bench/run prints."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("workload ") and i + 1 < len(lines) and lines[i + 1].startswith("---"):
            head = re.split(r"\s{2,}", line.strip())
            parts = [[]]
            for row in lines[i + 2:]:
                if not row.strip():
                    break
                if row.startswith("---"):
                    parts.append([])
                    continue
                parts[-1].append(re.split(r"\s{2,}", row.strip()))
            return head, parts[0], parts[1] if len(parts) > 1 else []
    return None, [], []


def leftover_mounts(tag):
    with open("/proc/self/mountinfo") as f:
        return [ln.split()[4] for ln in f if tag in ln.split()[4]]


def check_cells(head, rows, prefixes):
    """Each row starts with its prefix; every cell is a time, a ratio or n/a
    where that is by design."""
    check(len(rows) == len(prefixes), "%d rows, expected %d" % (len(rows), len(prefixes)))
    for prefix, row in zip(prefixes, rows):
        check(row[0].startswith(prefix), "row %r, expected one starting %r" % (row[0], prefix))
        check(len(row) == len(head), "row %r has %d cells, expected %d"
              % (row[0], len(row), len(head)))
        for i in range(1, min(len(head), len(row))):
            col, cell = head[i], row[i]
            # a ratio column belongs to the time column left of it
            owner = head[i - 1] if col in ("ratio", "vs jailfs") else col
            if (prefix, owner) in NOT_APPLICABLE:
                check(cell == "n/a", "row %r column %s: %r, expected n/a" % (row[0], col, cell))
            elif col in ("ratio", "vs jailfs"):
                check(RATIO.match(cell), "row %r: ratio %r after %s is not a number"
                      % (row[0], cell, owner))
            else:
                check(TIME.match(cell), "row %r column %s: %r is not a time"
                      % (row[0], col, cell))


def check_footer(head, footer):
    """A peak RSS and a peak fds row: a value per daemon side, "-" elsewhere."""
    check([f[0] for f in footer] == FOOTER, "footer rows %r, expected %r"
          % ([f[0] for f in footer], FOOTER))
    for row in footer:
        for col, cell in zip(head[1:], row[1:]):
            if col in ("jailfs", "bindfs", "audit all"):
                check(FOOTER_CELL[row[0]].match(cell), "footer %r column %s: %r"
                      % (row[0], col, cell))
            else:
                check(cell == "-", "footer %r column %s: %r, expected -" % (row[0], col, cell))


def run_bench(src, args):
    cmd = [sys.executable, os.path.join(src, "bench", "run"), "--tiny", "--rounds", "1"] + args
    print("running: " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    out = r.stdout.decode(errors="replace")
    print(out)
    print(r.stderr.decode(errors="replace")[-6000:], file=sys.stderr)
    check(r.returncode == 0, "bench/run exited %d (0 expected)" % r.returncode)
    return out


def as_user(src, build, cache):
    """A few rows as the ordinary user: its daemons mount via fusermount3."""
    try:
        pwd.getpwnam(USER)
    except KeyError:
        if os.environ.get("CI") == "true":
            check(False, "no user %s (.ci/run creates it)" % USER)
        else:
            print("skip: no user %s, no --user run" % USER)
        return
    fuse_mode = os.stat("/dev/fuse").st_mode
    out = run_bench(src, ["--build", build, "--cache", cache, "--plain", "--user", USER,
                          "--sides", "native,jailfs", "--only", "find,untar,venv-pip,git-clone"])
    check("daemons and workloads run as user %s" % USER in out, "no 'run as user' line")
    head, rows, footer = parse_table(out)
    check(head == ["workload", "native", "jailfs", "ratio"], "--user columns %r" % head)
    if head:
        check_cells(head, rows, ["find . -type f", "untar ", "rm -rf of them",
                                 "python3 -m venv --without-pip", "git clone --local"])
        check_footer(head, footer)
    check(re.search(r"^jailfs-work\s+.*passthrough opens 0$", out, re.M),
          "no 'passthrough opens 0' for the user's daemon (it has no CAP_SYS_ADMIN)")
    check(os.stat("/dev/fuse").st_mode == fuse_mode, "/dev/fuse's mode not put back")


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
    os.chmod(cache, 0o755)  # the --user run's cache is inside
    md = os.path.join(cache, "table.md")
    try:
        out = run_bench(src, ["--build", build, "--cache", cache, "--markdown", md])
        head, rows, footer = parse_table(out)
        check(head is not None, "no table (a 'workload' header over a '---' line) printed")
        if head is None:
            return 1
        want_cols = ["workload", "native", "jailfs", "ratio"]
        if shutil.which("bindfs"):
            want_cols += ["bindfs", "ratio"]
        want_cols += ["audit all", "vs jailfs"]
        check(head == want_cols, "columns %r, expected %r" % (head, want_cols))
        check_cells(head, rows, ROWS)
        check_footer(head, footer)
        for daemon in ("jailfs-tree", "jailfs-work", "audit-tree", "audit-work"):
            check(re.search(r"^%s\s+peak RSS \(VmHWM\) [\d.]+ MiB, peak open fds \d+"
                            % daemon, out, re.M),
                  "no peak RSS / open fds line for %s" % daemon)
        check("machine: nproc" in out, "no machine line")
        # each fresh view's daemon counts its requests: a LOOKUP or a
        # READDIRPLUS per entry at least, or the row measured a warm view
        for row in ("cold-rg", "cold-git-status"):
            for side in ("jailfs", "audit"):
                m = re.search(r"^note: requests per entry, %s on %s: ([\d.]+) \((.*)\)$"
                              % (row, side), out, re.M)
                check(m and float(m.group(1)) > 0.5 and
                      re.search(r"(LOOKUP|READDIRPLUS) [\d.]+", m.group(2)),
                      "no requests-per-entry note of a cold view for %s on %s" % (row, side))
        # the session rows' per-command medians: totals and the slowest command
        for row in ("session-source", "session-source-fresh"):
            check(re.search(r"^note: %s \(sums of per-command medians\): jailfs [\d.]+ m?s, "
                            r"native [\d.]+ m?s \([\d.]+x\); after the first command .*; "
                            r"slowest on jailfs: `[^`]+` [\d.]+ m?s" % row, out, re.M),
                  "no per-command note for %s" % row)
        # the clone's requests are counted too, per entry of the tree: it
        # creates about one file per entry, so a CREATE is among them
        for side in ("jailfs", "audit"):
            m = re.search(r"^note: requests per entry, git-clone on %s: ([\d.]+) \((.*)\)$"
                          % side, out, re.M)
            check(m and float(m.group(1)) > 0.5 and re.search(r"CREATE [\d.]+", m.group(2)),
                  "no requests-per-entry note of git-clone on %s" % side)
        check("note: npm-ci left out: --tiny runs offline" in out,
              "no note that npm-ci is left out offline")
        try:
            with open(md) as f:
                mdrows = [ln for ln in f if ln.startswith("| ") and not ln.startswith("| ---")]
            want = len(ROWS) + len(FOOTER) + 1
            check(len(mdrows) == want, "markdown table has %d lines, expected %d"
                  % (len(mdrows), want))
        except OSError as e:
            check(False, "no markdown table: %s" % e)
        as_user(src, build, os.path.join(cache, "user"))
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
