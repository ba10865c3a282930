"""Experiments: the NeuralHydrology comparison, recipes, DDP and GPU checks, profiling (see README.md)."""
