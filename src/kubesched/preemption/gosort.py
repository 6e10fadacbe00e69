"""Go's ``sort.Slice`` (pattern-defeating quicksort, Go 1.19+), step for step.

Upstream sorts preemption victims with ``sort.Slice`` and ``util.MoreImportantPod``. For two
pods of equal priority without a start time that comparator answers "true" both ways (each
call reads the clock anew), which is not a strict weak order: the order Go's algorithm then
produces is a property of the algorithm, and it decides which victims are reprieved first.
So kubesched runs the same algorithm, with the same comparisons and swaps, rather than
Python's stable sort. For a strict weak order the result is a correctly sorted list, as with
any unstable sort.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

_MASK64 = (1 << 64) - 1
_UNKNOWN, _INCREASING, _DECREASING = 0, 1, 2


class _LessSwap(Generic[T]):
    __slots__ = ("data", "less_fn")

    def __init__(self, data: list[T], less_fn: Callable[[T, T], bool]) -> None:
        self.data = data
        self.less_fn = less_fn

    def less(self, i: int, j: int) -> bool:
        d = self.data
        return self.less_fn(d[i], d[j])

    def swap(self, i: int, j: int) -> None:
        d = self.data
        d[i], d[j] = d[j], d[i]


def sort_slice(data: list[T], less: Callable[[T, T], bool]) -> None:
    """Sort ``data`` in place exactly as Go's ``sort.Slice(data, less)`` would."""
    n = len(data)
    _pdqsort(_LessSwap(data, less), 0, n, n.bit_length())


def _insertion_sort(d: _LessSwap[T], a: int, b: int) -> None:
    for i in range(a + 1, b):
        j = i
        while j > a and d.less(j, j - 1):
            d.swap(j, j - 1)
            j -= 1


def _sift_down(d: _LessSwap[T], lo: int, hi: int, first: int) -> None:
    root = lo
    while True:
        child = 2 * root + 1
        if child >= hi:
            return
        if child + 1 < hi and d.less(first + child, first + child + 1):
            child += 1
        if not d.less(first + root, first + child):
            return
        d.swap(first + root, first + child)
        root = child


def _heap_sort(d: _LessSwap[T], a: int, b: int) -> None:
    first, lo, hi = a, 0, b - a
    for i in range((hi - 1) // 2, -1, -1):
        _sift_down(d, i, hi, first)
    for i in range(hi - 1, -1, -1):
        d.swap(first, first + i)
        _sift_down(d, lo, i, first)


def _pdqsort(d: _LessSwap[T], a: int, b: int, limit: int) -> None:
    max_insertion = 12
    was_balanced = True
    was_partitioned = True
    while True:
        length = b - a
        if length <= max_insertion:
            _insertion_sort(d, a, b)
            return
        if limit == 0:
            _heap_sort(d, a, b)
            return
        if not was_balanced:
            _break_patterns(d, a, b)
            limit -= 1
        pivot, hint = _choose_pivot(d, a, b)
        if hint == _DECREASING:
            _reverse_range(d, a, b)
            pivot = (b - 1) - (pivot - a)
            hint = _INCREASING
        if was_balanced and was_partitioned and hint == _INCREASING \
                and _partial_insertion_sort(d, a, b):
            return
        if a > 0 and not d.less(a - 1, pivot):
            a = _partition_equal(d, a, b, pivot)
            continue
        mid, already = _partition(d, a, b, pivot)
        was_partitioned = already
        left_len, right_len = mid - a, b - mid
        balance_threshold = length // 8
        if left_len < right_len:
            was_balanced = left_len >= balance_threshold
            _pdqsort(d, a, mid, limit)
            a = mid + 1
        else:
            was_balanced = right_len >= balance_threshold
            _pdqsort(d, mid + 1, b, limit)
            b = mid


def _partition(d: _LessSwap[T], a: int, b: int, pivot: int) -> tuple[int, bool]:
    d.swap(a, pivot)
    i, j = a + 1, b - 1
    while i <= j and d.less(i, a):
        i += 1
    while i <= j and not d.less(j, a):
        j -= 1
    if i > j:
        d.swap(j, a)
        return j, True
    d.swap(i, j)
    i += 1
    j -= 1
    while True:
        while i <= j and d.less(i, a):
            i += 1
        while i <= j and not d.less(j, a):
            j -= 1
        if i > j:
            break
        d.swap(i, j)
        i += 1
        j -= 1
    d.swap(j, a)
    return j, False


def _partition_equal(d: _LessSwap[T], a: int, b: int, pivot: int) -> int:
    d.swap(a, pivot)
    i, j = a + 1, b - 1
    while True:
        while i <= j and not d.less(a, i):
            i += 1
        while i <= j and d.less(a, j):
            j -= 1
        if i > j:
            break
        d.swap(i, j)
        i += 1
        j -= 1
    return i


def _partial_insertion_sort(d: _LessSwap[T], a: int, b: int) -> bool:
    max_steps, shortest_shifting = 5, 50
    i = a + 1
    for _ in range(max_steps):
        while i < b and not d.less(i, i - 1):
            i += 1
        if i == b:
            return True
        if b - a < shortest_shifting:
            return False
        d.swap(i, i - 1)
        if i - a >= 2:  # shift the smaller one to the left (Go stops at index 1, not at a)
            j = i - 1
            while j >= 1:
                if not d.less(j, j - 1):
                    break
                d.swap(j, j - 1)
                j -= 1
        if b - i >= 2:  # shift the greater one to the right
            j = i + 1
            while j < b:
                if not d.less(j, j - 1):
                    break
                d.swap(j, j - 1)
                j += 1
    return False


def _break_patterns(d: _LessSwap[T], a: int, b: int) -> None:
    length = b - a
    if length < 8:
        return
    r = length  # xorshift seeded with the length
    modulus = 1 << length.bit_length()
    mid = a + (length // 4) * 2
    for idx in range(mid - 1, mid + 2):
        r ^= (r << 13) & _MASK64
        r ^= r >> 7
        r ^= (r << 17) & _MASK64
        other = r & (modulus - 1)
        if other >= length:
            other -= length
        d.swap(idx, a + other)


def _choose_pivot(d: _LessSwap[T], a: int, b: int) -> tuple[int, int]:
    shortest_ninther, max_swaps = 50, 4 * 3
    length = b - a
    swaps = [0]
    i = a + length // 4 * 1
    j = a + length // 4 * 2
    k = a + length // 4 * 3
    if length >= 8:
        if length >= shortest_ninther:
            i = _median(d, i - 1, i, i + 1, swaps)
            j = _median(d, j - 1, j, j + 1, swaps)
            k = _median(d, k - 1, k, k + 1, swaps)
        j = _median(d, i, j, k, swaps)
    if swaps[0] == 0:
        return j, _INCREASING
    if swaps[0] == max_swaps:
        return j, _DECREASING
    return j, _UNKNOWN


def _order2(d: _LessSwap[T], a: int, b: int, swaps: list[int]) -> tuple[int, int]:
    if d.less(b, a):
        swaps[0] += 1
        return b, a
    return a, b


def _median(d: _LessSwap[T], a: int, b: int, c: int, swaps: list[int]) -> int:
    a, b = _order2(d, a, b, swaps)
    b, c = _order2(d, b, c, swaps)
    a, b = _order2(d, a, b, swaps)
    return b


def _reverse_range(d: _LessSwap[T], a: int, b: int) -> None:
    i, j = a, b - 1
    while i < j:
        d.swap(i, j)
        i += 1
        j -= 1
