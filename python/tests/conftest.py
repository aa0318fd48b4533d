"""Shared fixtures: a fresh random seed per run (printed in the header;
PK_TEST_SEED=N replays it) and a generator per test derived from it."""

import os
import random
import zlib

import numpy as np
import pytest

SEED = int(os.environ.get("PK_TEST_SEED", random.SystemRandom().randrange(2**32)))


def pytest_report_header(config):
    return f"pk test seed: {SEED} (replay with PK_TEST_SEED={SEED})"


@pytest.fixture
def rng(request):
    """A generator seeded by the run's seed and the test's id."""
    return np.random.default_rng([SEED, zlib.crc32(request.node.nodeid.encode())])


