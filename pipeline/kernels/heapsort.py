"""A sort that compiles fast: heapsort of indices, ties broken by index (so the stable order).

Numba's ``np.sort`` and ``np.argsort`` are generic quicksort / mergesort implementations of
several functions each; on an empty cache one of them took 1.7-1.9 s of CPU to compile on this
project's 2-vCPU VM, against 0.3 s for :func:`sort_indices` (one function). Kernels whose
results do not depend on which sort orders their values (the recs kernel's ideal DCG, its
duplicate search) use it. Heapsort (J. W. J. Williams, "Algorithm 232: Heapsort", CACM 7(6),
1964; the heap built bottom-up, R. W. Floyd, "Algorithm 245: Treesort 3", CACM 7(12), 1964)
takes O(n log n) time in the worst case and no memory beyond the index array.
"""

from __future__ import annotations

from mobeval.kernels.jit import njit


@njit(cache=True)
def sort_indices(keys, order):
    """Sort ``order`` (indices into ``keys``) in place by ``(keys[i], i)`` ascending.

    Comparing the index after the key makes every pair of entries ordered, so the result is the
    one a stable sort of the indices by key gives (e.g. ``np.argsort(keys, kind="stable")`` when
    ``order`` is ``arange``). First every subtree rooted at ``n // 2 - 1 .. 0`` is made a heap
    (parent after its children), then the root (the largest) is swapped to the end and the heap
    shrinks by one, ``n - 1`` times; both phases sift an entry down to its place.
    """
    n = order.shape[0]
    for step in range(n + n // 2 - 1, 0, -1):
        if step >= n:  # phase 1: make the subtree at step - n a heap
            root, end = step - n, n
        else:  # phase 2: the largest of order[:step + 1] to its place
            order[0], order[step] = order[step], order[0]
            root, end = 0, step
        while 2 * root + 1 < end:
            child = 2 * root + 1
            if child + 1 < end:
                a, b = order[child], order[child + 1]
                if keys[a] < keys[b] or (keys[a] == keys[b] and a < b):
                    child += 1
            a, b = order[root], order[child]
            if not (keys[a] < keys[b] or (keys[a] == keys[b] and a < b)):
                break  # the root's entry comes after both children's: in place
            order[root], order[child] = b, a
            root = child
