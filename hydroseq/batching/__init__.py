"""Batching stage: length-aware batch samplers, the loader, and ``hydroseq stats``.

:func:`padding_by_strategy` is the padding table ``hydroseq stats`` prints (one epoch of each
strategy, from the sample lengths alone), as :class:`PaddingFigures`.
"""

from hydroseq.batching.loader import BatchLoader, make_loader
from hydroseq.batching.padding import PaddingFigures, padding_by_strategy
from hydroseq.batching.samplers import LengthBucketBatchSampler, RandomBatchSampler, make_batch_sampler
from hydroseq.dataset.batch import Batch

__all__ = ["Batch", "BatchLoader", "LengthBucketBatchSampler", "PaddingFigures", "RandomBatchSampler",
           "make_batch_sampler", "make_loader", "padding_by_strategy"]
