#!/usr/bin/env python3
"""Replays, on SQLCipher 4 over a recent SQLite (the `sqlcipher3-binary`
package), the exact statements Strongroom's migration runner issued on
SQLCipher 3.4.1 / SQLite 3.15.2, then a follow-up script.

Input (JSON on stdin): a list of jobs {"path", "statements", "then"}.
Each job's database is a new plaintext file at "path".
Output (JSON on stdout): a list of {"sqlite_version", "error", "statement"};
"error" is null when every statement and the follow-up ran.
"""
import json
import sys

import sqlcipher3


def replay(job):
    con = sqlcipher3.connect(job["path"], isolation_level=None)
    version = con.execute("SELECT sqlite_version()").fetchone()[0]
    statement = None
    try:
        for statement in job["statements"]:
            con.execute(statement).fetchall()
        statement = job["then"]
        con.execute("PRAGMA foreign_keys = ON")
        if statement.strip():
            con.executescript(statement)
        return {"sqlite_version": version, "error": None, "statement": None}
    except Exception as error:  # noqa: BLE001 - every failure is reported
        return {"sqlite_version": version, "error": str(error), "statement": statement}
    finally:
        con.close()


def main():
    jobs = json.load(sys.stdin)
    json.dump([replay(job) for job in jobs], sys.stdout)


if __name__ == "__main__":
    main()
