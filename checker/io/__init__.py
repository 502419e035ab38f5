"""What a user hands leadercheck and what it hands back, as bytes: files read bounded and
written whole to a regular file or a new path (files.py), sizes as a user writes them
(sizes.py). Every room reads and writes through here."""
