"""A Bloom filter over states: the visited set of a bitstate search (Spin's supertrace).

A state sets `hashes` bits of a fixed array of 2^b bits, chosen by double hashing from
its hash, multiplied by an odd constant and folded (the first index from the low bits,
the stride from the high ones); it counts as new when any of them was clear. A new state
whose bits happen to be set already is skipped: the chance of that, for a state met at
the end, is the fraction of bits set to the power `hashes` (`false_positive`), an upper
estimate of the share of states the search may have missed, since the array only fills.
"""

from __future__ import annotations

import math
from collections.abc import Callable

MIX = 0x9E3779B97F4A7C15  # odd: spreads a small int's hash (an int hashes to itself)
M64 = (1 << 64) - 1


def usable_bytes(nbytes: int) -> int:
    """The bytes a bit array of at most `nbytes` uses: a power of two (indices by mask)."""
    return 1 << (max(1, nbytes).bit_length() - 1)


class BitArray:
    """`usable_bytes(nbytes)` bytes of bits; `add(state)` sets the state's bits and says
    whether any was clear."""

    def __init__(self, nbytes: int, hashes: int) -> None:
        if hashes < 1:
            raise ValueError("a bit array needs at least one hash")
        self.data = bytearray(usable_bytes(nbytes))
        self.size = len(self.data) * 8  # in bits, a power of two
        self.hashes = hashes
        self._set = [0]  # bits set so far (a cell the adder writes)
        self.add: Callable[[object], bool] = self._adder()

    @property
    def set_bits(self) -> int:
        return self._set[0]

    def _adder(self) -> Callable[[object], bool]:
        """`add`, with everything it reads bound once: it runs for every successor."""
        data, mask, hashes, counted = self.data, self.size - 1, range(self.hashes), self._set

        def add(state: object) -> bool:
            x = (hash(state) * MIX) & M64
            x ^= x >> 32  # the product's high bits into the low ones, which pick the first
            bit = x & mask  # the first index from the low bits, the stride from the high ones
            step = ((x >> 32) & mask) | 1  # (indices stay small ints: fast arithmetic)
            new = 0
            for _ in hashes:
                byte, flag = bit >> 3, 1 << (bit & 7)
                if not data[byte] & flag:
                    data[byte] |= flag
                    new += 1
                bit = (bit + step) & mask
            if new:
                counted[0] += new
                return True
            return False

        return add

    def false_positive(self) -> float:
        """The chance that a state never added looks added: (bits set / bits) ** hashes."""
        return (self.set_bits / self.size) ** self.hashes


def union_bits(arrays: list[bytes]) -> int:
    """How many bits are set in the union (bitwise or) of equally long arrays."""
    total = 0
    for array in arrays:
        total |= int.from_bytes(array, "little")
    return total.bit_count()


def implied_states(bits: int, bits_set: int, hashes: int) -> int:
    """How many distinct states `bits_set` of `bits` bits imply, n = -(m/k) ln(1 - X/m)
    (Swamidass and Baldi): a check on a count, and a swarm's union, where nothing counts."""
    if not bits or not hashes or bits_set >= bits:
        return 0
    return round(-(bits / hashes) * math.log1p(-bits_set / bits))
