"""A system's real configuration, read and judged (`verify config`, issue 27; in progress).

`knobs.py` reads each system's own file format (Patroni's YAML, a Kubernetes controller's
leader-election settings or flags, an etcd configuration, ZooKeeper's zoo.cfg, a Redlock
settings file) into timing knobs in seconds; `environment.py` reads the assumed environment
(the longest pause, clock drift, delays, partitions); `rules.py` checks each system's own
documented rules. Every read goes through checker/files.py, bounded in size.
"""
