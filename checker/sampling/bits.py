"""A Bloom filter over states: the visited set of a bitstate search (Spin's supertrace).

A state sets `hashes` bits of a fixed array of 2^b bits, chosen by double hashing from
its hash times an odd constant (the first index from the low bits, the stride from the
high ones); it counts as new when any of them was clear. A new state whose bits happen
to be set already is skipped: the chance of that, for a state met at the end, is the
fraction of bits set to the power `hashes` (`false_positive`), an upper estimate of the
share of states the search may have missed, since the array only fills up.
"""

from __future__ import annotations

MIX = 0x9E3779B97F4A7C15  # odd: spreads a small int's hash (an int hashes to itself)


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
        self.mask = self.size - 1
        self.hashes = hashes
        self.set_bits = 0

    def add(self, state: object) -> bool:
        x = hash(state) * MIX
        step = (x >> 40) | 1  # from the high bits: the low ones already chose the first index
        mask, data = self.mask, self.data
        new = False
        for _ in range(self.hashes):
            bit = x & mask
            byte, flag = bit >> 3, 1 << (bit & 7)
            if not data[byte] & flag:
                data[byte] |= flag
                self.set_bits += 1
                new = True
            x += step
        return new

    def false_positive(self) -> float:
        """The chance that a state never added looks added: (bits set / bits) ** hashes."""
        return (self.set_bits / self.size) ** self.hashes


def union_bits(arrays: list[bytes]) -> int:
    """How many bits are set in the union (bitwise or) of equally long arrays."""
    total = 0
    for array in arrays:
        total |= int.from_bytes(array, "little")
    return total.bit_count()
