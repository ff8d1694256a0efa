"""A kernel's arrays read and written without counting references to them.

Numba's runtime keeps an array's memory alive by a count of references held in the memory's
record (its ``meminfo``). Every copy of an array value that compiled code makes (a slice, an
array passed to a function that is not inlined, an array bound to another name) adds one to the
count and takes it away again (``NRT_incref``, ``NRT_decref``): each a ``lock``-prefixed add, an
atomic read-modify-write that waits for the stores in flight. Numba's pruning pass removes the
pairs it can prove cancel; in a loop over units that slices its arrays or calls functions on
them, most remain, a few tens a unit. Measured with ``perf`` on a 2-vCPU VM (a ``mobeval recs``
run of 100 M list rows under ``trec_eval``): 38 % of the metric kernel's samples, 12 % of the
whole process's, were in those two functions; one call of ``ranked_hits`` a user made 14 of the
atomic adds, on entry and exit, one a list argument.

:func:`borrowed` gives the same array (data, shape, strides) without the memory's record: the
runtime's functions see a null record and return at once (a test and a return, no atomic add).
Such a view is safe while something else keeps the memory alive for as long as it is used: a
compiled function's own arguments, which its caller holds until the call returns. So a kernel
borrows its arguments, never an array it allocates (Numba frees an array after the last
statement that names it: a view borrowed from it would outlive it), and never returns a borrowed
view or stores one where it outlives the call (the box of a view without a record has no owner).
A kernel with scratch arrays allocates them in an outer function that hands them, as arguments,
to the function of its loop, which borrows them.
"""

from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def borrowed(typingctx, *arrays):
    """``arrays`` (Numba arrays) as views without their memory's record: one array, or a tuple
    of them in the same order (see the module docstring for when a view is safe)."""
    if not arrays or not all(isinstance(array, types.Array) for array in arrays):
        return None
    result = arrays[0] if len(arrays) == 1 else types.Tuple(arrays)

    def codegen(context, builder, signature, args):
        (packed,) = args
        views = []
        for array_type, value in zip(arrays, cgutils.unpack_tuple(builder, packed), strict=True):
            source = context.make_array(array_type)(context, builder, value=value)
            view = context.make_array(array_type)(context, builder)
            for field in ("nitems", "itemsize", "data", "shape", "strides"):
                setattr(view, field, getattr(source, field))
            view.meminfo = cgutils.get_null_value(view.meminfo.type)
            view.parent = cgutils.get_null_value(view.parent.type)
            views.append(view._getvalue())
        if len(views) == 1:
            return views[0]
        return context.make_tuple(builder, signature.return_type, views)

    return result(types.StarArgTuple.from_types(arrays)), codegen
