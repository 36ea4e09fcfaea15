# SPDX-License-Identifier: GPL-2.0
"""Per-switch costs from a benchmark cell's runs (bench/report.py for whole
runs, bench/profile.py for the scheduling path).

Every column of a cell runs the same hackbench (the same messages, tasks
and start-up), but hackbench on one vCPU falls into modes with 2-10x the
context switches for the same messages. So a run's instructions are fitted
as a cost common to the cell's columns plus a per-switch cost of its column
times the run's switches, over all the cell's runs at once; what a column
adds per switch is its per-switch cost minus psi=0's.
"""


def solve(m, y):
    """Least squares: the coefficients of y ~ m (rows of regressors) and
    their covariance matrix (residual variance times (m'm)^-1)."""
    n, k = len(m), len(m[0])
    # the normal equations, inverted by Gauss-Jordan
    a = [[sum(r[i] * r[j] for r in m) for j in range(k)] +
         [1.0 if i == j else 0.0 for j in range(k)] for i in range(k)]
    for i in range(k):
        piv = max(range(i, k), key=lambda r: abs(a[r][i]))
        a[i], a[piv] = a[piv], a[i]
        d = a[i][i]
        a[i] = [x / d for x in a[i]]
        for r in range(k):
            if r != i and a[r][i]:
                f = a[r][i]
                a[r] = [x - f * z for x, z in zip(a[r], a[i])]
    inv = [row[k:] for row in a]
    xty = [sum(r[i] * v for r, v in zip(m, y)) for i in range(k)]
    coef = [sum(inv[i][j] * xty[j] for j in range(k)) for i in range(k)]
    res = sum((v - sum(c * x for c, x in zip(coef, r))) ** 2 for r, v in zip(m, y))
    s2 = res / (n - k) if n > k else float('nan')
    return coef, [[s2 * x for x in row] for row in inv]


def per_switch_fit(runs_by_col):
    """{column: [(switches, instructions) per run]} of one cell: fits
    instructions = a + b[column] * switches, a common to the columns.
    Returns {column: b} and diff(x, y): b[x] - b[y] and its standard
    error."""
    cols = list(runs_by_col)
    # switches in thousands, so that the normal equations stay well
    # conditioned beside the intercept
    k = 1e3
    m, y = [], []
    for i, c in enumerate(cols):
        for ctxt, ins in runs_by_col[c]:
            m.append([1.0] + [ctxt / k if j == i else 0.0 for j in range(len(cols))])
            y.append(float(ins))
    coef, cov = solve(m, y)
    b = {c: coef[1 + i] / k for i, c in enumerate(cols)}

    def diff(x, z):
        i, j = 1 + cols.index(x), 1 + cols.index(z)
        return b[x] - b[z], max(cov[i][i] + cov[j][j] - 2 * cov[i][j], 0) ** 0.5 / k
    return b, diff
