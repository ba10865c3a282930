"""Batching stage: length-aware batch samplers, the loader, and ``hydroseq stats``."""

from hydroseq.batching.loader import BatchLoader, make_loader
from hydroseq.batching.samplers import LengthBucketBatchSampler, RandomBatchSampler, make_batch_sampler
from hydroseq.dataset.batch import Batch

__all__ = ["Batch", "BatchLoader", "LengthBucketBatchSampler", "RandomBatchSampler", "make_batch_sampler",
           "make_loader"]
