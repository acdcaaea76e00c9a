# SPDX-License-Identifier: MIT
"""CPU time of a whole process, for the benchmarks' CPU figures."""
import os

_TICK = os.sysconf("SC_CLK_TCK")


def _stat_ticks(path):
    """utime + stime of a /proc .../stat file, in clock ticks (proc(5): fields 14 and 15,
    counted after the command name, which may hold spaces and parentheses)."""
    with open(path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def live_threads_cpu_ns(pid):
    """Time on CPU of pid's threads that are alive now (task/*/schedstat), ns; for a delta
    over which no thread ends (an isolated change: rdmad's pass runs on the loop's thread),
    without process_cpu_ns()'s tick of rounding."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


def process_cpu_ns(pid):
    """Time on CPU of every thread pid has had, ns; None once it is gone. The live threads'
    /proc/<pid>/task/*/schedstat (ns), plus what threads that have ended used: /proc/<pid>/stat
    counts them (proc(5): utime and stime of the whole process), so they are its ticks less the
    live threads' (10 ms a tick; the two are rounded apart, so a delta may be a tick off). Summing task/*/schedstat alone lost rdmad's read threads
    (util/parallel_reads.hpp), which end within each pass."""
    try:
        total_ticks = _stat_ticks("/proc/%d/stat" % pid)
        live_ns = live_ticks = 0
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                    ns = int(f.read().split()[0])
                ticks = _stat_ticks("/proc/%d/task/%s/stat" % (pid, tid))
            except OSError:  # ended meanwhile: /proc/<pid>/stat has it
                continue
            live_ns += ns
            live_ticks += ticks
    except OSError:
        return None
    return live_ns + max(0, total_ticks - live_ticks) * 1_000_000_000 // _TICK
