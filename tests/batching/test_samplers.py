"""Batch samplers: once per epoch, buckets, token budget, tail policy, ranks, reproducibility."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hydroseq.batching import LengthBucketBatchSampler, RandomBatchSampler


def _mixed_lengths(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    lengths = np.full(n, 365)
    short = rng.random(n) < 0.3
    lengths[short] = rng.integers(30, 365, short.sum())
    return lengths


def _flatten(batches) -> np.ndarray:
    return np.concatenate([np.asarray(batch) for batch in batches]) if batches else np.array([], int)


@settings(max_examples=50, deadline=None)
@given(n=st.integers(1, 700), batch_size=st.integers(1, 64), bucket_width=st.integers(1, 6),
       budget=st.one_of(st.none(), st.integers(365, 6000)), seed=st.integers(0, 1000), epoch=st.integers(0, 5))
def test_keep_yields_every_sample_exactly_once(n, batch_size, bucket_width, budget, seed, epoch) -> None:
    lengths = _mixed_lengths(n, seed)
    sampler = LengthBucketBatchSampler(lengths, batch_size, token_budget=budget, bucket_width=bucket_width,
                                       seed=seed)
    sampler.set_epoch(epoch)
    batches = list(sampler)
    assert len(batches) == len(sampler)
    assert sorted(_flatten(batches).tolist()) == list(range(n))
    for batch in batches:
        if budget is None:
            assert len(batch) <= batch_size
        else:
            assert lengths[batch].sum() <= budget or len(batch) == 1


def test_batches_of_a_bucket_have_lengths_within_the_bucket() -> None:
    lengths = _mixed_lengths(3000)
    sampler = LengthBucketBatchSampler(lengths, 32, bucket_width=4, seed=3)
    sampler.set_epoch(2)
    buckets = sampler.buckets()
    bucket_of = np.empty(len(lengths), int)
    for number, bucket in enumerate(buckets):
        bucket_of[bucket] = number
        assert len(bucket) <= 4 * 32
    spans = [(lengths[b].min(), lengths[b].max()) for b in buckets]
    assert all(low_a >= high_b for (low_a, _), (_, high_b) in itertools.pairwise(spans))  # sorted, no overlap
    for batch in sampler:
        assert len(set(bucket_of[batch])) == 1
    padding = sum(len(b) * lengths[b].max() - lengths[b].sum() for b in sampler) / sum(
        len(b) * lengths[b].max() for b in sampler)
    assert padding < 0.05


def test_same_seed_and_epoch_give_the_same_order_and_epochs_differ() -> None:
    lengths = _mixed_lengths(1000)
    a, b = (LengthBucketBatchSampler(lengths, 16, seed=7) for _ in range(2))
    a.set_epoch(4), b.set_epoch(4)
    assert [x for x in a] == [x for x in b]
    b.set_epoch(5)
    assert [x for x in a] != [x for x in b]
    other_seed = LengthBucketBatchSampler(lengths, 16, seed=8)
    other_seed.set_epoch(4)
    assert [x for x in a] != [x for x in other_seed]


def test_equal_lengths_are_still_shuffled_across_epochs() -> None:
    sampler = LengthBucketBatchSampler(np.full(512, 365), 32, bucket_width=4)
    first = sorted(map(sorted, sampler))
    sampler.set_epoch(1)
    assert first != sorted(map(sorted, sampler))  # different batch compositions, not only a new batch order


def test_drop_tail_keeps_only_full_batches() -> None:
    lengths = _mixed_lengths(1000)
    sampler = LengthBucketBatchSampler(lengths, 30, bucket_width=3, tail="drop")
    batches = list(sampler)
    assert all(len(batch) == 30 for batch in batches)
    assert len(set(_flatten(batches).tolist())) == len(_flatten(batches)) >= 1000 - 12 * 30
    budget = LengthBucketBatchSampler(lengths, 30, token_budget=3000, bucket_width=3, tail="drop")
    for batch in budget:
        assert lengths[batch].sum() + lengths[batch].max() > 3000  # no room for another sample


def test_token_budget_makes_batch_size_follow_length() -> None:
    lengths = np.array([365] * 200 + [40] * 200)
    sampler = LengthBucketBatchSampler(lengths, 16, token_budget=3650, bucket_width=4, shuffle=False)
    batches = list(sampler)
    assert max(len(b) for b in batches if lengths[b].max() == 365) == 10  # 10 * 365 = 3650
    assert max(len(b) for b in batches if lengths[b].max() == 40) == 91  # 91 * 40 = 3640
    assert all(lengths[b].sum() <= 3650 for b in batches)
    assert sum(len(b) for b in batches) == 400


def test_no_shuffle_is_longest_first_and_stable() -> None:
    lengths = _mixed_lengths(300)
    sampler = LengthBucketBatchSampler(lengths, 50, shuffle=False)
    flat = _flatten(list(sampler))
    assert np.all(np.diff(lengths[flat]) <= 0)
    sampler.set_epoch(9)
    assert np.array_equal(_flatten(list(sampler)), flat)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 600), batch_size=st.integers(1, 50), replicas=st.integers(2, 5),
       tail=st.sampled_from(["keep", "drop"]), bucket=st.booleans(), epoch=st.integers(0, 3))
def test_ranks_get_equal_batch_counts_and_disjoint_samples(n, batch_size, replicas, tail, bucket, epoch) -> None:
    lengths = _mixed_lengths(n, seed=n)
    per_rank = []
    for rank in range(replicas):
        if bucket:
            sampler = LengthBucketBatchSampler(lengths, batch_size, bucket_width=2, tail=tail, seed=1,
                                               num_replicas=replicas, rank=rank)
        else:
            sampler = RandomBatchSampler(lengths, batch_size, tail=tail, seed=1, num_replicas=replicas, rank=rank)
        sampler.set_epoch(epoch)
        per_rank.append(list(sampler))
    assert len({len(batches) for batches in per_rank}) == 1
    seen = [set(_flatten(batches).tolist()) for batches in per_rank]
    assert sum(len(s) for s in seen) == len(set().union(*seen))  # disjoint
    if tail == "keep":  # at most a leftover smaller than the rank count is skipped
        assert n - len(set().union(*seen)) < replicas


def test_random_batches_tail_policy() -> None:
    lengths = _mixed_lengths(103)
    keep = RandomBatchSampler(lengths, 10, seed=2)
    assert sorted(_flatten(list(keep)).tolist()) == list(range(103)) and len(keep) == 11
    drop = RandomBatchSampler(lengths, 10, tail="drop", seed=2)
    assert len(drop) == 10 and all(len(b) == 10 for b in drop)


@pytest.mark.parametrize("kwargs, message", [
    ({"batch_size": 0}, "batch_size"), ({"tail": "pad"}, "tail"), ({"rank": 2, "num_replicas": 2}, "rank"),
    ({"token_budget": 0}, "token_budget"), ({"bucket_width": 0}, "bucket_width"),
])
def test_invalid_arguments_are_rejected(kwargs, message) -> None:
    arguments = {"batch_size": 4, **kwargs}
    with pytest.raises(ValueError, match=message):
        LengthBucketBatchSampler(np.ones(10, int), **arguments)
