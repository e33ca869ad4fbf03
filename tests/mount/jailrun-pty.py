#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run COMMAND... (jailrun and its arguments) on a fresh pseudo-terminal as
its controlling terminal (stdin, stdout, stderr), the way an interactive
shell would, and report what the terminal looks like afterwards:

    exit N                the command's exit status ("exit timeout": killed
                          after 30 s, e.g. stuck writing to a stopped terminal)
    termios same|changed  the pty's settings compared with before the run
    echo on|off           ECHO in c_lflag after the run
    winsize ROWSxCOLS     after the run (set to 40x100 before it)
    exclusive on|off      TIOCEXCL (a second open answers EBUSY but for root)
    nonblock on|off       O_NONBLOCK on the open file description the command
                          was given (shared with whatever runs next)
    output ...            everything the command wrote, on one line
"""
import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import signal
import termios
import time

TIOCGEXCL = 0x80045440  # _IOR('T', 0x40, int)


def winsize(fd):
    rows, cols, _, _ = struct.unpack("HHHH", fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8))
    return rows, cols


def main():
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    before = termios.tcgetattr(slave)

    def ctty():
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(sys.argv[1:], stdin=slave, stdout=slave, stderr=slave,
                            start_new_session=True, preexec_fn=ctty)
    out = b""
    deadline = time.monotonic() + 30
    status = None
    while True:
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            status = "timeout"
            break
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                out += os.read(master, 65536)
            except OSError:
                break
        elif proc.poll() is not None:
            break
    after = termios.tcgetattr(slave)
    rows, cols = winsize(slave)
    print("exit", status or proc.wait())
    print("termios", "same" if after == before else "changed")
    print("echo", "on" if after[3] & termios.ECHO else "off")
    print("winsize %dx%d" % (rows, cols))
    excl = struct.unpack("i", fcntl.ioctl(slave, TIOCGEXCL, b"\0" * 4))[0]
    print("exclusive", "on" if excl else "off")
    print("nonblock", "on" if fcntl.fcntl(slave, fcntl.F_GETFL) & os.O_NONBLOCK else "off")
    print("output", out.decode(errors="replace").replace("\r", "").replace("\n", " | "))


main()
