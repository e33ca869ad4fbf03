#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A file watcher for test-watchers.sh, run inside the jail (copied into the
project: the jail runs scripts, not inline code).

watcher.py inotify DIR SECONDS   print one line per inotify event on DIR
watcher.py poll DIR SECONDS      print "changed NAME" for each entry of DIR
                                 created, deleted or whose size or mtime
                                 changed, polling every 100 ms (as chokidar's
                                 usePolling, watchdog's PollingObserver)
Prints "ready" once watching; ends after SECONDS."""
import ctypes
import os
import select
import struct
import sys
import time

NAMES = {0x2: "MODIFY", 0x4: "ATTRIB", 0x8: "CLOSE_WRITE", 0x40: "MOVED_FROM",
         0x80: "MOVED_TO", 0x100: "CREATE", 0x200: "DELETE"}


def inotify(path, secs):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    if fd < 0 or libc.inotify_add_watch(fd, path.encode(), sum(NAMES)) < 0:
        sys.exit("inotify: %s" % os.strerror(ctypes.get_errno()))
    print("ready", flush=True)
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if not select.select([fd], [], [], 0.1)[0]:
            continue
        buf, i = os.read(fd, 65536), 0
        while i < len(buf):
            _, mask, _, n = struct.unpack_from("iIII", buf, i)
            name = buf[i + 16:i + 16 + n].rstrip(b"\0").decode()
            kinds = [v for k, v in NAMES.items() if mask & k]
            print("event %s %s" % (",".join(kinds), name), flush=True)
            i += 16 + n


def snapshot(path):
    out = {}
    for e in os.scandir(path):
        st = e.stat(follow_symlinks=False)
        out[e.name] = (st.st_size, st.st_mtime_ns)
    return out


def poll(path, secs):
    last = snapshot(path)
    print("ready", flush=True)
    end = time.monotonic() + secs
    while time.monotonic() < end:
        time.sleep(0.1)
        now = snapshot(path)
        for name in sorted(set(last) | set(now)):
            if last.get(name) != now.get(name):
                print("changed %s" % name, flush=True)
        last = now


if __name__ == "__main__":
    {"inotify": inotify, "poll": poll}[sys.argv[1]](sys.argv[2], float(sys.argv[3]))
