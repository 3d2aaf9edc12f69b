"""Containers under capture: BUILD_* opcodes, unpacking (starred too), list and
dict methods on containers made in the function, indexing and slicing of lists
and tuples, membership, and containers of tensors as inputs and outputs."""
from __future__ import annotations

import numpy as np

import frame

from .helpers import last_entry, array, assert_same_as_eager, tensor


# -- building ---------------------------------------------------------------------------------

def test_build_tuple_of_tensors():
    assert_same_as_eager(lambda x, y: (x + y, x - y, 3), tensor(), tensor(seed=1))


def test_build_list_of_tensors():
    assert_same_as_eager(lambda x, y: [x * 2, y, None], tensor(), tensor(seed=1))


def test_build_dict_literal():
    assert_same_as_eager(lambda x, k: {"sum": x.sum(), k: x * 2, 3: "three"}, tensor(), "key")


def test_build_dict_with_const_keys():
    assert_same_as_eager(lambda x: {"a": x, "b": x + 1, "c": x + 2}, tensor())


def test_build_string_and_fstring_of_constants():
    assert_same_as_eager(lambda x, n: (x * n, f"n={n}, twice={n * 2:03d}"), tensor(), 7)


def test_nested_containers_keep_structure():
    assert_same_as_eager(lambda x: {"layers": [(x, x.T), [x.sum()]], "n": (1, [2])}, tensor())


def test_same_new_list_returned_twice_is_one_object():
    def f(x):
        out = [x + 1]
        return out, out
    assert_same_as_eager(f, tensor())


def test_del_local_variable():
    def f(x, read_after):
        tmp = x * 2
        out = tmp + 1
        del tmp
        if read_after:
            return tmp  # noqa: F821 - UnboundLocalError, as natively
        return out
    assert_same_as_eager(f, tensor(), False)
    assert_same_as_eager(f, tensor(), True)


def test_empty_containers():
    assert_same_as_eager(lambda x: (x, [], {}, ()), tensor())


# -- unpacking ------------------------------------------------------------------------------------

def test_unpack_tuple():
    def f(pair):
        a, b = pair
        return b - a
    assert_same_as_eager(f, (tensor(), tensor(seed=1)))


def test_unpack_tensor_rows():
    def f(x):
        a, b = x
        return a * b
    assert_same_as_eager(f, tensor((2, 3)))


def test_unpack_wrong_length_raises():
    def f(t):
        a, b = t
        return a
    assert_same_as_eager(f, (1, 2, 3))


def test_starred_unpack_middle():
    def f(x):
        first, *mid, last = [x, x + 1, x + 2, x + 3]
        return first, mid, last
    assert_same_as_eager(f, tensor())


def test_starred_unpack_front_and_back():
    def f(t):
        *init, tail = t
        head, *rest = t
        return init, tail, head, rest
    assert_same_as_eager(f, (1, 2.0, "three", tensor()))


def test_nested_unpack():
    def f(items):
        (a, b), [c, (d, e)] = items
        return a + b + c + d + e
    assert_same_as_eager(f, ((1, 2), [3, (4, tensor())]))


def test_unpack_in_for_loop_targets():
    def f(pairs):
        total = 0
        for a, (b, c) in pairs:
            total = total + a * b - c
        return total
    assert_same_as_eager(f, [(tensor(), (2, 1)), (tensor(seed=1), (3, 0.5))])


def test_star_into_list_and_tuple_displays():
    def f(a, b):
        return [*a, *b], (*a, 0, *b), [*range(3)]
    assert_same_as_eager(f, [tensor(), 1], (2, tensor(seed=1)))


def test_dict_unpacking_merge():
    def f(a, b):
        return {**a, **b, "z": 0}
    assert_same_as_eager(f, {"x": tensor(), "y": 1}, {"y": 2, "w": tensor(seed=1)})


# -- list methods ------------------------------------------------------------------------------------

def test_list_append_extend_insert():
    def f(x):
        out = [x]
        out.append(x + 1)
        out.extend([x + 2, 5])
        out.insert(1, "mid")
        out.insert(-1, x * 0)
        return out
    assert_same_as_eager(f, tensor())


def test_list_pop_variants():
    def f(x):
        out = [x, x + 1, x + 2, x + 3]
        last = out.pop()
        first = out.pop(0)
        return out, last, first
    assert_same_as_eager(f, tensor())


def test_list_pop_empty_raises():
    def f(x):
        return [].pop()
    assert_same_as_eager(f, tensor())


def test_list_index_count_remove_reverse():
    def f(values):
        out = list(values)
        out.remove(2)
        out.reverse()
        return out, out.index(3), out.count(1), values.index(2)
    assert_same_as_eager(f, [1, 2, 3, 1])


def test_list_copy_clear():
    def f(x):
        a = [x, 1]
        b = a.copy()
        a.clear()
        return a, b
    assert_same_as_eager(f, tensor())


def test_list_setitem_delitem_slices():
    def f(x):
        out = [0, 1, 2, 3, 4]
        out[1] = x
        out[-1] = x * 2
        out[2:4] = [7]
        del out[0]
        return out
    assert_same_as_eager(f, tensor())


def test_list_concat_and_repeat():
    def f(a, n):
        return a + [n], [n] * 3, 2 * (n,), a + a
    assert_same_as_eager(f, [tensor(), 1], 4)


def test_list_sort_is_traced():
    def f(values):
        out = list(values)
        out.sort()
        values.sort(reverse=True)
        return out
    j = assert_same_as_eager(f, [3, 1, 2])
    assert not last_entry(j).breaks


# -- dict methods -------------------------------------------------------------------------------------------

def test_dict_get_setdefault():
    def f(d, x):
        a = d.get("a", 0)
        b = d.get("missing", x)
        c = d.setdefault("c", x * 2)
        return a, b, c, d
    assert_same_as_eager(f, {"a": 1}, tensor())


def test_dict_pop_update_copy():
    def f(x):
        d = {"a": x, "b": 2}
        b = d.pop("b")
        missing = d.pop("zz", None)
        e = d.copy()
        d.update({"c": x + 1}, d=4)
        e.update([("k", 1)])
        return d, e, b, missing
    assert_same_as_eager(f, tensor())


def test_dict_keys_values_items():
    def f(d):
        return list(d.keys()), list(d.values()), list(d.items()), len(d.keys())
    assert_same_as_eager(f, {"w": tensor(), "b": 2})


def test_dict_missing_key_raises():
    assert_same_as_eager(lambda d: d["nope"], {"a": 1})


def test_dict_int_and_tuple_keys():
    def f(x):
        d = {0: x, (1, 2): x + 1}
        d[3] = x * 2
        return d[0] + d[(1, 2)] + d[3], list(d)
    assert_same_as_eager(f, tensor())


def test_dict_key_order_after_overwrite():
    def f(x):
        d = {"a": 1, "b": 2}
        d["a"] = x
        d["c"] = 3
        del d["b"]
        d["b"] = 4
        return d
    assert_same_as_eager(f, tensor())


# -- indexing and slicing ---------------------------------------------------------------------------------

def test_index_list_and_tuple():
    assert_same_as_eager(lambda l, t: (l[0], l[-1], t[1], t[-2]), [tensor(), 2, 3], (4, tensor(seed=1)))


def test_slice_list():
    assert_same_as_eager(lambda l: (l[1:3], l[::-1], l[::2], l[-2:], l[:0]), [1, 2, 3, 4, 5])


def test_slice_tuple():
    assert_same_as_eager(lambda t: (t[1:], t[:-1], t[::-2]), (tensor(), 1, 2.5, "x"))


def test_slice_with_variables():
    assert_same_as_eager(lambda l, a, b: l[a:b], [1, 2, 3, 4, 5], 1, 4)


def test_index_out_of_range_raises():
    assert_same_as_eager(lambda l: l[5], [1, 2])


def test_string_indexing_and_slicing():
    assert_same_as_eager(lambda s: (s[0], s[-1], s[1:3], s[::-1]), "frame")


# -- membership, length, conversions --------------------------------------------------------------------------

def test_contains_on_containers():
    def f(l, d, s):
        return 2 in l, 5 not in l, "a" in d, "zz" in d, "am" in s, (1, 2) in [(1, 2)]
    assert_same_as_eager(f, [1, 2, 3], {"a": 1}, "frame")


def test_len_of_containers():
    assert_same_as_eager(lambda l, t, d, x: (len(l), len(t), len(d), len(x)),
                         [1, 2], (3,), {"a": 1}, tensor((4, 2)))


def test_list_and_tuple_constructors():
    assert_same_as_eager(lambda x, t: (list(t), tuple([x, 1]), list(range(3)), tuple("ab")),
                         tensor(), (1, 2))


def test_tuple_of_tensor_iterates_rows():
    assert_same_as_eager(lambda x: tuple(x), tensor((3, 2)))


def test_container_equality():
    def f(l, t):
        return l == [1, 2], l != [1, 2], t == (1, 2), l == t, [l] == [[1, 2]], {"a": 1} == {"a": 1}
    assert_same_as_eager(f, [1, 2], (1, 2))


def test_sum_min_max_sorted_on_constants():
    assert_same_as_eager(lambda l: (sum(l), min(l), max(l, default=0), sorted(l, reverse=True)),
                         [3, 1, 2])


def test_builtin_sum_over_tensors():
    assert_same_as_eager(lambda xs: sum(xs), [tensor(), tensor(seed=1), tensor(seed=2)])


def test_tensors_in_input_dict_are_graph_inputs():
    def f(params, x):
        return x @ params["w"] + params["b"]
    fn = assert_same_as_eager(f, {"w": tensor((3, 2)), "b": tensor((2,), seed=1)}, tensor((4, 3)))
    entry = fn._frame_cache.entries[0]
    assert len(entry.graph.inputs) == 3


def test_ndarray_in_list_input():
    assert_same_as_eager(lambda xs: xs[0] * xs[1], [array(), np.float32(2.0)])


def test_set_literal_membership():
    assert_same_as_eager(lambda x, n: x * (n in {1, 2, 3}), tensor(), 2)


def test_frame_functions_take_lists_of_tensors():
    assert_same_as_eager(lambda x, y: (frame.concat([x, y], axis=0), frame.stack((x, y))),
                         tensor(), tensor(seed=1))


def test_set_literal_comprehension_and_len():
    def f(x, n):
        s = {1, 2, n}
        t = {i % 3 for i in range(10)}
        return x * len(s), len(t), n in s, 7 in t, sorted(s | t)
    assert_same_as_eager(f, tensor(), 5)


def test_set_methods():
    def f(x):
        s = set([3, 1])
        s.add(2)
        s.discard(3)
        s.update([4, 5])
        return x, sorted(s), sorted(s & {1, 4, 9}), s.issubset({1, 2, 4, 5, 6}), len(s - {1})
    assert_same_as_eager(f, tensor())


def test_returning_a_new_set():
    assert_same_as_eager(lambda x, a: (x, {a, "b"}), tensor(), "a")


def test_membership_and_index_compare_nested_containers_by_value():
    def f(x, items):
        return x, [1] in items, (2, [3]) in items, items.index([1]), items.count([1]), "a" in items
    assert_same_as_eager(f, tensor(), [[0], [1], (2, [3]), [1]])


def test_namedtuple_equals_tuple_and_fields_compare():
    import collections
    P = collections.namedtuple("P", "a b")

    def f(x, p):
        return x, p == (1, 2), p._fields == ("a", "b"), (1, 2) == p, p != [1, 2]
    assert_same_as_eager(f, tensor(), P(1, 2))
