#!/usr/bin/env python3
"""SQLite as an agent's tools use it, for the real-work suite.

sqlite-session.py JOURNAL: a database db/JOURNAL.db in that journal mode
(wal, delete, truncate): a table, 200 rows in 20 transactions, an update and
a delete, then integrity_check; prints "JOURNAL ok ROWS".
sqlite-session.py two JOURNAL: two processes insert 100 rows each, one
transaction a row, into db/two-JOURNAL.db at once; prints "two JOURNAL ok ROWS".
sqlite-session.py make FILE: the sample database (run on the host).
sqlite-session.py read FILE: open FILE read-only (locks, no write), run
integrity_check and a query; prints "read ok ROWS".
"""
import os
import sqlite3
import subprocess
import sys


def connect(path, journal):
    # the file is made first, so a read-only view fails here with EROFS
    os.makedirs("db", exist_ok=True)
    open(path, "ab").close()
    con = sqlite3.connect(path, timeout=60, isolation_level=None)
    mode = con.execute("PRAGMA journal_mode=%s" % journal).fetchone()[0]
    if mode != journal:
        sys.exit("journal_mode is %s, not %s" % (mode, journal))
    con.execute("PRAGMA synchronous=FULL")
    return con


def check(con, label):
    ok = con.execute("PRAGMA integrity_check").fetchone()[0]
    rows = con.execute("SELECT count(*) FROM t").fetchone()[0]
    if ok != "ok":
        sys.exit("%s: integrity_check: %s" % (label, ok))
    print("%s ok %d" % (label, rows))


def single(journal):
    con = connect("db/%s.db" % journal, journal)
    con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, who TEXT, v BLOB)")
    for i in range(20):
        con.execute("BEGIN")
        for k in range(10):
            con.execute("INSERT INTO t (who, v) VALUES (?, ?)", ("one", os.urandom(500)))
        con.execute("COMMIT")
    con.execute("UPDATE t SET who = 'upd' WHERE id % 7 = 0")
    con.execute("DELETE FROM t WHERE id > 190")
    if journal == "wal":
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.execute("VACUUM")
    check(con, journal)


def writer(path, journal, who):
    con = sqlite3.connect(path, timeout=60, isolation_level=None)
    con.execute("PRAGMA journal_mode=%s" % journal)
    for i in range(100):
        con.execute("BEGIN IMMEDIATE")
        con.execute("INSERT INTO t (who, v) VALUES (?, ?)", (who, os.urandom(200)))
        con.execute("COMMIT")


def two(journal):
    path = "db/two-%s.db" % journal
    con = connect(path, journal)
    con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, who TEXT, v BLOB)")
    procs = [subprocess.Popen([sys.executable, __file__, "writer", path, journal, w])
             for w in ("a", "b")]
    if any(p.wait() != 0 for p in procs):
        sys.exit("a writer failed")
    for w in ("a", "b"):
        n = con.execute("SELECT count(*) FROM t WHERE who = ?", (w,)).fetchone()[0]
        if n != 100:
            sys.exit("writer %s: %d rows, not 100" % (w, n))
    check(con, "two " + journal)


def make(path):
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, who TEXT, v BLOB)")
    con.executemany("INSERT INTO t (who, v) VALUES (?, ?)",
                    [("sample", os.urandom(300)) for _ in range(150)])
    con.close()


def read(path):
    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True, isolation_level=None)
    con.execute("BEGIN")
    n = con.execute("SELECT count(*) FROM t WHERE who = 'sample'").fetchone()[0]
    con.execute("COMMIT")
    if n != 150:
        sys.exit("%d sample rows, not 150" % n)
    check(con, "read")


if __name__ == "__main__":
    if sys.argv[1] in ("make", "read"):
        globals()[sys.argv[1]](sys.argv[2])
    elif sys.argv[1] == "writer":
        writer(*sys.argv[2:5])
    elif sys.argv[1] == "two":
        two(sys.argv[2])
    else:
        single(sys.argv[1])
