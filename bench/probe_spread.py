"""How steady the estimate's speed test is (core.run.machine_speed.probe): N probes of the median of 5 readings
against N probes of one 0.5 s reading, on 1 and on 2 torch threads, with the load average before and after.

    python bench/probe_spread.py [--probes 8]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.run import machine_speed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--probes", type=int, default=8)
    args = parser.parse_args()
    print("load before", [round(x, 2) for x in os.getloadavg()])
    for threads in (1, 2):
        median, single, spreads = [], [], []
        for _ in range(args.probes):
            probe = machine_speed.probe(threads=threads)
            median.append(probe.rate)
            spreads.append(probe.spread)
            single.append(machine_speed.probe(rounds=1, threads=threads).rate)

        def cv(xs: list[float]) -> float:
            return statistics.pstdev(xs) / statistics.mean(xs)

        print(f"threads {threads}: median of {machine_speed.PROBE_ROUNDS} readings {min(median):.0f}-{max(median):.0f} "
              f"rounds/s (cv {cv(median):.2f}), spread within a probe (median) {statistics.median(spreads):.2f}; "
              f"one 0.5 s reading {min(single):.0f}-{max(single):.0f} (cv {cv(single):.2f})")
    print("load after", [round(x, 2) for x in os.getloadavg()])


if __name__ == "__main__":
    main()
