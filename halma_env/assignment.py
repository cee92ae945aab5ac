"""Minimum-cost assignment (Hungarian algorithm with potentials), for the remaining distance."""

from __future__ import annotations

from collections.abc import Sequence

INF = float("inf")


def min_cost_assignment(cost: Sequence[Sequence[float]]) -> float:
    """Least total cost of giving every row its own column (rows <= columns). O(n^2 m)."""
    n = len(cost)
    if n == 0:
        return 0
    m = len(cost[0])
    if n > m:
        raise ValueError(f"{n} rows cannot be assigned to {m} columns")
    u = [0.0] * (n + 1)
    v = [0.0] * (m + 1)
    match = [0] * (m + 1)  # column -> row (1-based), 0 = free
    way = [0] * (m + 1)
    for i in range(1, n + 1):
        match[0] = i
        j0 = 0
        minv = [INF] * (m + 1)
        used = [False] * (m + 1)
        while True:
            used[j0] = True
            i0 = match[j0]
            row = cost[i0 - 1]
            ui0 = u[i0]
            delta = INF
            j1 = 0
            for j in range(1, m + 1):
                if not used[j]:
                    cur = row[j - 1] - ui0 - v[j]
                    if cur < minv[j]:
                        minv[j] = cur
                        way[j] = j0
                    if minv[j] < delta:
                        delta = minv[j]
                        j1 = j
            for j in range(m + 1):
                if used[j]:
                    u[match[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if match[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            match[j0] = match[j1]
            j0 = j1
    return sum(cost[match[j] - 1][j - 1] for j in range(1, m + 1) if match[j])
