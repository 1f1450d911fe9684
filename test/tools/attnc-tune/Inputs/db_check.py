"""Checks on tuning DBs for attnc-tune's lit tests (plain JSON reading, no attnc code).

  db_check.py count DB N            the DB's one entry holds exactly N distinct candidates
  db_check.py same-candidates A B   A and B hold the same (backend, schedule, status) set
  db_check.py wait DB N PID         waits until DB holds >= N candidates, then kills PID
"""
import json
import os
import signal
import sys
import time


def candidates(path):
    with open(path) as f:
        db = json.load(f)
    assert db["format"] == "attnc-tuning-db", path
    (entry,) = db["entries"]
    return [(c["backend"], c["schedule"], c["status"]) for c in entry["candidates"]]


def main():
    cmd = sys.argv[1]
    if cmd == "count":
        got = candidates(sys.argv[2])
        want = int(sys.argv[3])
        assert len(got) == want, f"{len(got)} candidates, want {want}"
        assert len({(b, s) for b, s, _ in got}) == len(got), "a candidate appears twice"
        print(f"{len(got)} distinct candidates")
    elif cmd == "same-candidates":
        a, b = set(candidates(sys.argv[2])), set(candidates(sys.argv[3]))
        assert a == b, f"only in the first: {a - b}; only in the second: {b - a}"
        print(f"same {len(a)} candidates")
    elif cmd == "wait":
        path, n, pid = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                if len(candidates(path)) >= n:
                    break
            except (OSError, ValueError):
                pass  # not written yet
            time.sleep(0.05)
        os.kill(pid, signal.SIGKILL)
        print("killed the search")


if __name__ == "__main__":
    main()
