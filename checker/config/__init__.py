"""A system's real configuration, read and judged (`verify config`).

`knobs.py` reads each system's own file format (Patroni's YAML, a Kubernetes controller's
leader-election settings or flags, an etcd configuration, ZooKeeper's zoo.cfg, a Redlock
settings file) into timing knobs in seconds; `environment.py` reads the assumed environment
(the longest pause, clock drift, delays, partitions); `rules.py` checks each system's own
documented rules; `questions.py` says what the knobs mean to the catalogue's timing models,
`resolution.py` turns seconds into ticks without flattering, and `judge.py` decides each
claim by an exhaustive search; `region.py` asks z3 how far each knob may move. Every read
goes through checker/io/files.py, bounded in size.
"""
