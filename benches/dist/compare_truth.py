#!/usr/bin/env python3
"""Compares a clustering (one cluster per line, node ids separated by white space) with a
planted ground truth in the same format (`trident generate planted --truth`): how many
clusters equal a planted community exactly, and the nodes in clusters that do not.

    python3 compare_truth.py clusters.txt truth.txt
"""
import sys


def read(path):
    with open(path) as f:
        return [frozenset(int(x) for x in line.split()) for line in f if line.strip()]


got, truth = read(sys.argv[1]), read(sys.argv[2])
want = set(truth)
exact = sum(1 for c in got if c in want)
off = sum(len(c) for c in got if c not in want)
nodes = sum(len(c) for c in got)
print(
    f"{len(got)} clusters, {len(truth)} planted communities; {exact} clusters equal a "
    f"planted community exactly; {off} of {nodes} nodes in clusters that do not"
)
