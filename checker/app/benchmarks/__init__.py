"""The measured runs behind `verify bench`: the catalogue's benchmark models timed each in a
fresh process (timed.py), the sampled strategies (sampled.py), and Spin's `pan` side by side
(spin.py). The command itself is checker/app/bench.py."""
