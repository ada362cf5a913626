"""A tool run with a deadline, for the sweep tests in python: at the
deadline the process and everything it started (its session, and every
descendant that left it: the runs' keepers make process groups of their
own) are killed with SIGKILL, so that nothing outlives the test."""
import os
import signal
import subprocess


def descendants(pid):
    """pid's descendants now, from /proc (children before grandchildren)."""
    kids = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(name))
    out, todo = [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def kill_tree(p):
    """SIGKILL to p's descendants, its session (it leads one) and p; reaps p."""
    for pid in descendants(p.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()


def run(args, deadline, **kw):
    """(exit status, stdout, stderr) of args, stdin /dev/null; the status is
    None when the deadline killed it."""
    p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True, **kw)
    try:
        out, err = p.communicate(timeout=deadline)
    except subprocess.TimeoutExpired:
        kill_tree(p)
        out, err = p.communicate()
        return None, out, err
    return p.returncode, out, err
