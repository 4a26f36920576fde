"""mano.torch.score: a small PyTorch model over a DataLoader gives mano.score's result on the
concatenated logits (concatenated by PyTorch itself, from the same batches: a matrix product's
float32 rounding depends on the batch) to 1e-12, the difference of summing rows in blocks (the
nuclear norm's Gram matrix) rather than at once, and the true accuracy exactly, checked against
NumPy; bad loaders and models are one clear error; the CUDA path runs
when a GPU is present and says it skipped otherwise."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (Debian: python3-torch)")

import mano  # noqa: E402
import mano.torch  # noqa: E402
from api_support import assert_same  # noqa: E402
from test_stubs import runtime_parameters, stub_functions, stub_parameters  # noqa: E402

K = 7
METHODS = "mano,confscore,entropy,nuclear,mde,cot"


def small_model(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.ReLU(), torch.nn.Dropout(0.5), torch.nn.Linear(16, K))


def dataset(n=203, seed=1):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 12, generator=g)
    y = torch.randint(0, K, (n,), generator=g)
    return torch.utils.data.TensorDataset(x, y)


def all_logits(model, data, batch_size, device="cpu"):
    model.eval()
    with torch.no_grad():
        return torch.cat([model(x.to(device)).cpu() for x, _ in torch.utils.data.DataLoader(data, batch_size=batch_size)])


def test_score_over_a_loader_equals_mano_score_on_the_concatenated_logits():
    model, data = small_model(), dataset()
    loader = torch.utils.data.DataLoader(data, batch_size=32)
    got = mano.torch.score(model, loader, METHODS)
    logits = all_logits(model, data, 32).numpy()
    labels = data.tensors[1].numpy()
    want = mano.score(logits, METHODS, labels=labels)
    assert_same(got, want)
    assert got["accuracy"] == float(np.mean(logits.argmax(axis=1) == labels))
    assert got["n"] == len(data) and got["k"] == K


def test_batches_of_inputs_alone_give_no_accuracy_and_options_reach_the_accumulator():
    model, data = small_model(2), dataset(seed=3)
    inputs = [x for x, _ in torch.utils.data.DataLoader(data, batch_size=50)]  # a plain list is a loader too
    got = mano.torch.score(model, inputs, ["mano"], p=2.0, temperature=1.5)
    want = mano.score(all_logits(model, data, 50).numpy(), ["mano"], p=2.0, temperature=1.5)
    assert_same(got, want)
    assert "accuracy" not in got


def test_the_model_runs_in_eval_mode_and_gets_its_mode_back():
    model, data = small_model(), dataset()
    model.train()
    got = mano.torch.score(model, torch.utils.data.DataLoader(data, batch_size=64), "confscore")
    assert model.training
    model.train()
    want = mano.score(all_logits(model, data, 64).numpy(), "confscore", labels=data.tensors[1].numpy())
    assert_same(got, want)  # dropout was off, as it is in all_logits's eval mode


def test_bfloat16_outputs_are_scored_as_float32():
    model, data = small_model(), dataset()
    half = lambda x: model(x).to(torch.bfloat16)  # noqa: E731
    model.eval()
    got = mano.torch.score(half, torch.utils.data.DataLoader(data, batch_size=40), "confscore")
    with torch.no_grad():
        want = mano.score(torch.cat([half(x) for x, _ in torch.utils.data.DataLoader(data, batch_size=40)]).float()
                          .numpy(), "confscore", labels=data.tensors[1].numpy())
    assert_same(got, want)


def test_bad_loaders_and_models_are_one_clear_error():
    model, data = small_model(), dataset()
    cases = [
        (model, [], "the loader gave no batch"),
        (model, [{"x": data.tensors[0]}], "batch 0 is a dict; the loader must give tensors or (inputs, labels)"),
        (model, [data.tensors, (data.tensors[0],)], "batch 1 has no labels and the batches before it had"),
        (lambda x: x.reshape(len(x), 3, 4), [data.tensors[0]], "the model gave a tensor of shape (203, 3, 4) for batch 0"),
        (lambda x: (x, x), [data.tensors[0]], "the model gave a tuple for batch 0"),
    ]
    for m, loader, says in cases:
        with pytest.raises(mano.InputError) as e:
            mano.torch.score(m, loader)
        assert says in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(mano.InputError, match="class"):  # labels out of range: the core's own message
        mano.torch.score(model, [(data.tensors[0], data.tensors[1] + K)])


def test_the_stub_matches_the_function():
    stub = stub_functions(mano.torch)["score"]
    assert stub_parameters(stub) == runtime_parameters(mano.torch.score)


def test_cuda_copies_overlap_and_give_the_same_result():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: the CUDA path (pinned buffers, a copy stream) was not run")
    model, data = small_model().cuda(), dataset(n=5000)
    loader = torch.utils.data.DataLoader(data, batch_size=256, pin_memory=True)
    got = mano.torch.score(model, loader, METHODS, device="cuda")
    logits = all_logits(model, data, 256, "cuda").numpy()  # the same kernels on the same batches
    want = mano.score(logits, METHODS, labels=data.tensors[1].numpy())
    assert_same(got, want)
