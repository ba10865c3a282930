"""NeuralHydrology side of the benchmark: its own venv, data conversion, config, instrumented run.

NeuralHydrology is never a dependency of hydroseq: it lives in a separate virtual environment
(``experiments/.nh-venv``) and runs in a child process; this package only talks to it through files.
"""
