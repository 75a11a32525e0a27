"""A failed allocation raises torch's error: ember.OutOfMemoryError (torch.OutOfMemoryError,
also ember.cuda.OutOfMemoryError), a RuntimeError like torch's cpu allocator's, and a MemoryError
like numpy's, from factories and from ops alike."""

import ember
import pytest

# 400 TB: more than any machine's address space, so numpy refuses at once
HUGE = 10**14


def test_one_class_at_torchs_names():
    assert ember.OutOfMemoryError is ember.cuda.OutOfMemoryError
    assert issubclass(ember.OutOfMemoryError, RuntimeError)
    assert issubclass(ember.OutOfMemoryError, MemoryError)
    assert repr(ember.OutOfMemoryError) == "<class 'ember.OutOfMemoryError'>"


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.empty(HUGE),
        lambda m: m.zeros(HUGE, dtype=m.float64),
        lambda m: m.ones(1).expand(10**7, 10**7) * 2,
        lambda m: m.ones(1).expand(10**7, 10**7).exp(),
    ],
    ids=["empty", "zeros", "mul", "exp"],
)
def test_failed_allocations_say_what_torchs_cpu_allocator_says(make):
    torch = pytest.importorskip("torch")
    msgs = []
    for m, err in ((ember, ember.OutOfMemoryError), (torch, RuntimeError)):
        with pytest.raises(err, match="DefaultCPUAllocator: can't allocate memory: you tried to "):
            make(m)
    for m in (ember, torch):
        try:
            make(m)
        except RuntimeError as e:
            msgs.append(str(e).split("you tried to allocate ")[1].split(" bytes")[0])
    assert msgs[0] == msgs[1]
