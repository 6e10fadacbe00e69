"""PodHeap against a plain model: whatever mix of single adds, adds of many (the sorted run),
updates, deletes and pops, every pop gives the entry with the smallest (key, push order), as
one binary heap of every entry would."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.types import ObjectMeta, Pod, PodSpec
from kubesched.framework.types import QueuedPodInfo
from kubesched.queue.heap import PodHeap


def _qpi(uid: str) -> QueuedPodInfo:
    return QueuedPodInfo(pod=Pod(metadata=ObjectMeta(name=uid, namespace="ns", uid=uid),
                                 spec=PodSpec()))


class _Model:
    def __init__(self) -> None:
        self.entries: dict[str, tuple[int, int]] = {}  # uid -> (key, push order)
        self.pushes = 0

    def add(self, uid: str, key: int) -> None:
        self.pushes += 1
        self.entries[uid] = (key, self.pushes)

    def order(self) -> list[str]:
        return sorted(self.entries, key=lambda u: self.entries[u])


_UIDS = [f"p{i}" for i in range(24)]
_op = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(_UIDS), st.integers(0, 5)),
    st.tuples(st.just("add_all"), st.lists(st.tuples(st.sampled_from(_UIDS),
                                                     st.integers(0, 5)), max_size=30)),
    st.tuples(st.just("delete"), st.sampled_from(_UIDS)),
    st.tuples(st.just("pop"), st.integers(0, 3)),
    st.tuples(st.just("pop_while"), st.integers(0, 12), st.integers(1, 20),
              st.frozensets(st.sampled_from(_UIDS), max_size=8)),
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_op, max_size=40))
def test_pops_follow_key_then_push_order(ops: list[tuple]) -> None:
    keys: dict[str, int] = {}
    qpis = {u: _qpi(u) for u in _UIDS}
    heap = PodHeap(lambda q: keys[q.uid])
    model = _Model()
    for op in ops:
        if op[0] == "add":
            _, uid, key = op
            keys[uid] = key
            heap.add_or_update(qpis[uid])
            model.add(uid, key)
        elif op[0] == "add_all":
            batch = []
            for uid, key in op[1]:
                # (a pod's key is read when it is pushed: later pushes of it in the same
                # call read the same key)
                keys.setdefault(uid, key)
                batch.append(qpis[uid])
            for q in batch:
                model.add(q.uid, keys[q.uid])
            heap.add_all(batch)
        elif op[0] == "delete":
            got = heap.delete(op[1])
            assert (got is not None) == (op[1] in model.entries)
            model.entries.pop(op[1], None)
        elif op[0] == "pop":
            for _ in range(op[1]):
                want = model.order()[:1]
                assert heap.peek() is (qpis[want[0]] if want else None)
                got = heap.pop()
                assert ([got.uid] if got is not None else []) == want
                if want:
                    del model.entries[want[0]]
        else:
            _, refuse_at, limit, dropped = op
            seen: list[str] = []

            def take(q: QueuedPodInfo, seen: list[str] = seen, at: int = refuse_at) -> bool:
                seen.append(q.uid)
                return len(seen) <= at

            got = heap.pop_while(take, limit, dropped)
            want: list[str] = []
            asked: list[str] = []
            for uid in model.order():
                if len(want) >= limit:
                    break
                if uid in dropped:
                    del model.entries[uid]
                    continue
                asked.append(uid)
                if len(asked) > refuse_at:
                    break
                want.append(uid)
                del model.entries[uid]
            assert [q.uid for q in got] == want
            assert seen == asked  # each head asked once, none after a refusal
        assert len(heap) == len(model.entries)
        assert sorted(q.uid for q in heap.items()) == sorted(model.entries)
        assert [q.uid for q in heap.sorted_items()] == model.order()
    while (q := heap.pop()) is not None:
        assert q.uid == model.order()[0]
        del model.entries[q.uid]
    assert not model.entries
