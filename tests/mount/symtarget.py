#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Helper of test-symtarget.sh: which system-directory symlink targets a view
must accept, computed on the host without jailfs, and what a view did.

  symtarget.py expect LIST OUT     LIST: NUL-separated absolute paths (find
                                   -print0); OUT: JSON {path: expected}
  symtarget.py create DIR EXPECT   symlink(path, DIR/N) for each path of
                                   EXPECT (N its index); prints JSON
                                   {path: 0 or errno name}
  symtarget.py plant DIR EXPECT    the same on the backing tree, no checks
  symtarget.py plant-some DIR EXPECT  plant the refused paths and up to 300
                                   accepted ones of at most 64 KiB; prints
                                   the N of each accepted one planted
  symtarget.py archive EXPECT      reads a tar stream on stdin; prints JSON:
                                   its member names, how many of its files
                                   hold what a file of /etc behind a refused
                                   path holds, of how many such files
  symtarget.py accepted EXPECT     prints "links/N" for each path to accept
  symtarget.py readback DIR EXPECT prints how many accepted links DIR/N do
                                   not read back as their path

A target is expected to be accepted iff resolving it as the kernel does
(component by component, at most 40 links) reaches only paths equal to or
below a system directory ("/" in passing is fine: an absolute link text
starts from it) and ends at a regular file.
"""
import errno
import hashlib
import json
import os
import stat
import sys
import tarfile

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
MAX_HOPS = 40


def in_system(path):
    return any(path == d or path.startswith(d + "/") for d in SYSTEM)


def stays_in_system(target):
    done = []
    todo = list(reversed(target.split("/")))
    hops = 0
    while todo:
        c = todo.pop()
        if c in ("", "."):
            continue
        if c == "..":
            if done:
                done.pop()
            continue
        path = "/" + "/".join(done + [c])
        if not in_system(path):
            return False
        try:
            st = os.lstat(path)
        except OSError:
            return False
        if stat.S_ISLNK(st.st_mode):
            hops += 1
            if hops > MAX_HOPS:
                return False
            text = os.readlink(path)
            if text.startswith("/"):
                done = []
            todo.extend(reversed(text.split("/")))
            continue
        if not stat.S_ISDIR(st.st_mode) and any(x not in ("", ".") for x in todo):
            return False
        done.append(c)
    path = "/" + "/".join(done)
    if not done or not in_system(path):
        return False
    ok = stat.S_ISREG(os.lstat(path).st_mode)
    # Cross-check with the C library's resolution: what is accepted must
    # end, by realpath too, at a regular file below a system directory.
    if ok:
        real = os.path.realpath(target)
        assert in_system(real) and os.path.isfile(real), (target, real)
    return ok


def files(top):
    if os.path.isfile(top):
        yield top
    for r, _, fs in os.walk(top):
        yield from (os.path.join(r, f) for f in fs)


def digests(tops):
    out = set()
    for t in tops:
        for f in files(t):
            if os.path.isfile(f) and os.path.getsize(f) > 0:
                with open(f, "rb") as fh:
                    out.add(hashlib.sha256(fh.read()).hexdigest())
    return out


def archive(expect):
    """By content: the names in the archive are the view's. Files of /etc
    that a file of the system directories also holds do not count."""
    etc = digests(os.path.realpath(p) for p, ok in expect.items()
                  if not ok and os.path.realpath(p).startswith("/etc/"))
    etc -= digests(os.path.realpath(p) for p, ok in expect.items() if ok)
    names, hits, total = [], 0, 0
    with tarfile.open(fileobj=sys.stdin.buffer, mode="r|") as tf:
        for m in tf:
            names.append(m.name.removeprefix("./").rstrip("/"))
            if m.isfile():
                data = tf.extractfile(m).read()
                total += len(data)
                if data and hashlib.sha256(data).hexdigest() in etc:
                    hits += 1
            if total > (256 << 20):  # /usr's directories let through
                names.append("(over 256 MiB: stopped)")
                break
    json.dump({"names": names, "etc_hits": hits, "etc_files": len(etc)}, sys.stdout)
    return 0


def main():
    cmd = sys.argv[1]
    if cmd == "expect":
        with open(sys.argv[2], "rb") as f:
            paths = [p.decode("utf-8", "surrogateescape") for p in f.read().split(b"\0") if p]
        out = {p: stays_in_system(p) for p in paths}
        with open(sys.argv[3], "w") as f:
            json.dump(out, f)
        return 0
    with open(sys.argv[-1]) as f:
        expect = json.load(f)
    paths = sorted(expect)
    if cmd == "archive":
        return archive(expect)
    if cmd == "plant-some":
        small = [i for i, p in enumerate(paths) if expect[p] and
                 os.path.getsize(os.path.realpath(p)) <= 65536][:300]
        for i, p in enumerate(paths):
            if not expect[p] or i in small:
                os.symlink(p, os.path.join(sys.argv[2], str(i)))
        print("\n".join(str(i) for i in small))
        return 0
    if cmd == "accepted":
        print("\n".join("links/%d" % i for i, p in enumerate(paths) if expect[p]))
        return 0
    if cmd == "readback":
        d = sys.argv[2]
        print(sum(1 for i, p in enumerate(paths) if expect[p] and
                  os.readlink(os.path.join(d, str(i))) != p))
        return 0
    res = {}
    for i, p in enumerate(paths):
        try:
            os.symlink(p, os.path.join(sys.argv[2], str(i)))
            res[p] = 0
        except OSError as e:
            if cmd == "plant":
                raise
            res[p] = errno.errorcode.get(e.errno, str(e.errno))
    if cmd == "create":
        json.dump(res, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
