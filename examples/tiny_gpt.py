#!/usr/bin/env python3
"""A tiny GPT-2-style character model for examples/gpt_generate.c, trained with libops.

    tiny_gpt.py train OUT.safetensors [--steps N]   train on a few lines of Hamlet, save
    tiny_gpt.py check WEIGHTS.safetensors RUN.npz    compare gpt_generate's logits (--save)
                                                     with a NumPy forward of the weights

`make run` trains the model (a few seconds), then runs gpt_generate on the file, which
continues a prompt greedily; `make check-install` also runs `check`.  The model: token
and position embeddings, 2 blocks of pre-LayerNorm causal self-attention (4 heads) and
a GELU MLP, a final LayerNorm and an output head tied to the token embedding, as GPT-2.
Training: libops' autograd, cross-entropy, Adam written here in a few lines.

The safetensors file names the tensors as GPT-2's checkpoints do (wte, wpe, h.N.ln_1,
h.N.attn.c_attn, ...; linear weights stored [out, in], as torch.nn.Linear) and keeps
the configuration and the vocabulary in its __metadata__."""

import argparse
import json
import math
import struct
import sys

TEXT = ("To be, or not to be, that is the question: Whether 'tis nobler in the mind to "
        "suffer the slings and arrows of outrageous fortune, or to take arms against a sea "
        "of troubles and by opposing end them. To die: to sleep; no more; and by a sleep to "
        "say we end the heart-ache and the thousand natural shocks that flesh is heir to.")
CONFIG = {"n_layer": 2, "n_head": 4, "n_embd": 64, "n_ctx": 64}


# ---- training, with libops ------------------------------------------------------------

def train(out, steps, seed):
    import libops as L

    L.manual_seed(seed)
    L.set_num_threads(1)  # a model this small gains nothing from threads
    vocab = "".join(sorted(set(TEXT)))
    V, C, T = len(vocab), CONFIG["n_embd"], CONFIG["n_ctx"]
    H = CONFIG["n_head"]
    data = [vocab.index(c) for c in TEXT]

    params = {}

    def param(name, shape, kind):
        if kind == "normal":
            t = L.randn(shape) * 0.02
        elif kind == "ones":
            t = L.ones(shape)
        else:
            t = L.zeros(shape)
        params[name] = t.requires_grad_(True)

    param("wte.weight", (V, C), "normal")
    param("wpe.weight", (T, C), "normal")
    for layer in range(CONFIG["n_layer"]):
        p = f"h.{layer}."
        for ln in ("ln_1", "ln_2"):
            param(p + ln + ".weight", (C,), "ones")
            param(p + ln + ".bias", (C,), "zeros")
        for name, n_out, n_in in (("attn.c_attn", 3 * C, C), ("attn.c_proj", C, C),
                                  ("mlp.c_fc", 4 * C, C), ("mlp.c_proj", C, 4 * C)):
            param(p + name + ".weight", (n_out, n_in), "normal")
            param(p + name + ".bias", (n_out,), "zeros")
    param("ln_f.weight", (C,), "ones")
    param("ln_f.bias", (C,), "zeros")

    causal = L.triu(L.ones((T, T), dtype=L.bool), 1)
    pos = L.arange(T)

    def forward(idx):  # idx [B, T] int64 -> logits [B, T, V]
        B = idx.shape[0]
        x = L.embedding(params["wte.weight"], idx) + L.embedding(params["wpe.weight"], pos)
        for layer in range(CONFIG["n_layer"]):
            w = lambda n: params[f"h.{layer}.{n}"]  # noqa: E731
            h = L.layer_norm(x, [C], w("ln_1.weight"), w("ln_1.bias"))
            qkv = L.linear(h, w("attn.c_attn.weight"), w("attn.c_attn.bias")).reshape(B, T, 3, H, C // H)
            q, k, v = (qkv.select(2, i).transpose(1, 2) for i in range(3))  # [B, H, T, D]
            s = L.matmul(q, k.transpose(2, 3)) * (1.0 / math.sqrt(C // H))
            a = L.matmul(L.softmax(s.masked_fill(causal, float("-inf")), -1), v)
            x = x + L.linear(a.transpose(1, 2).reshape(B, T, C), w("attn.c_proj.weight"), w("attn.c_proj.bias"))
            h = L.layer_norm(x, [C], w("ln_2.weight"), w("ln_2.bias"))
            h = L.linear(L.gelu(L.linear(h, w("mlp.c_fc.weight"), w("mlp.c_fc.bias"))),
                         w("mlp.c_proj.weight"), w("mlp.c_proj.bias"))
            x = x + h
        x = L.layer_norm(x, [C], params["ln_f.weight"], params["ln_f.bias"])
        return L.matmul(x, params["wte.weight"].t())

    # Adam (lr 3e-3, betas 0.9 / 0.99)
    lr, b1, b2, eps = 3e-3, 0.9, 0.99, 1e-8
    moments = {n: (L.zeros_like(p), L.zeros_like(p)) for n, p in params.items()}
    gen = __import__("random").Random(seed)
    B = 16
    loss_value = float("nan")
    for step in range(1, steps + 1):
        starts = [gen.randrange(0, len(data) - T - 1) for _ in range(B)]
        idx = L.tensor([data[s:s + T] for s in starts])
        tgt = L.tensor([data[s + 1:s + T + 1] for s in starts])
        logits = forward(idx)
        loss = L.cross_entropy_loss(logits.reshape(B * T, V), tgt.reshape(B * T))
        for p in params.values():
            p.grad = None
        loss.backward()
        with L.no_grad():
            for n, p in params.items():
                m, v = moments[n]
                g = p.grad
                m.mul_(b1).add_(g, alpha=1 - b1)
                v.mul_(b2).addcmul_(g, g, value=1 - b2)
                step_size = lr * math.sqrt(1 - b2 ** step) / (1 - b1 ** step)
                p.addcdiv_(m, v.sqrt() + eps, value=-step_size)
        loss_value = loss.item()
        if step == 1 or step % 100 == 0:
            print(f"tiny_gpt: step {step:4d}  loss {loss_value:.3f}", flush=True)
    tensors = {n: p.detach() for n, p in params.items()}
    meta = {k: str(v) for k, v in CONFIG.items()}
    meta["vocab"] = vocab
    L.save_safetensors(tensors, out, metadata=meta)
    print(f"tiny_gpt: wrote {out} ({sum(p.numel() for p in params.values())} parameters, "
          f"final training loss {loss_value:.3f})")
    return 0


# ---- the NumPy check of gpt_generate's output ------------------------------------------

def read_safetensors(path):
    """The file's tensors as float64 NumPy arrays and its metadata, read from the format's
    definition (an 8-byte length, a JSON header, the raw bytes): not with libops."""
    import numpy as np
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    base = 8 + n
    out = {}
    for name, info in header.items():
        assert info["dtype"] == "F32", (name, info["dtype"])
        a, b = info["data_offsets"]
        out[name] = np.frombuffer(raw[base + a:base + b], dtype="<f4").reshape(info["shape"]).astype(np.float64)
    return out, meta


def numpy_forward(w, meta, tokens):
    import numpy as np
    C, H = int(meta["n_embd"]), int(meta["n_head"])
    T = len(tokens)
    D = C // H

    def ln(x, p):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-5) * w[p + ".weight"] + w[p + ".bias"]

    def lin(x, p):
        return x @ w[p + ".weight"].T + w[p + ".bias"]

    erf = np.vectorize(math.erf)
    x = w["wte.weight"][tokens] + w["wpe.weight"][:T]
    mask = np.triu(np.ones((T, T), bool), 1)
    for layer in range(int(meta["n_layer"])):
        p = f"h.{layer}."
        qkv = lin(ln(x, p + "ln_1"), p + "attn.c_attn").reshape(T, 3, H, D)
        q, k, v = (qkv[:, i].transpose(1, 0, 2) for i in range(3))
        s = q @ k.transpose(0, 2, 1) / math.sqrt(D)
        s[:, mask] = -np.inf
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        x = x + lin((s @ v).transpose(1, 0, 2).reshape(T, C), p + "attn.c_proj")
        h = lin(ln(x, p + "ln_2"), p + "mlp.c_fc")
        h = 0.5 * h * (1 + erf(h / math.sqrt(2)))
        x = x + lin(h, p + "mlp.c_proj")
    return ln(x, "ln_f") @ w["wte.weight"].T


def check(weights, run):
    import numpy as np
    w, meta = read_safetensors(weights)
    with np.load(run) as z:
        tokens, logits, n_prompt = z["tokens"], z["logits"], int(z["n_prompt"])
    ref = numpy_forward(w, meta, tokens)
    err = np.abs(logits - ref).max() / max(1.0, np.abs(ref).max())
    # greedy: each generated token is the argmax of the previous position's logits
    # (NumPy's), wherever the best two are not within rounding of each other; only when
    # the whole run fits the window (n_prompt >= 0: gpt_generate says so)
    top2 = np.sort(ref, -1)[:, -2:]
    clear = (top2[:, 1] - top2[:, 0]) > 1e-3
    chosen = range(n_prompt - 1, len(tokens) - 1) if n_prompt > 0 else range(0)
    greedy_ok = all(tokens[i + 1] == ref[i].argmax() for i in chosen if clear[i])
    print(f"tiny_gpt check: {len(tokens)} positions, max logit error {err:.2e} relative to NumPy (float64); "
          f"{len(chosen)} greedy choices {'match' if greedy_ok else 'DIFFER'}")
    return 0 if err < 1e-4 and greedy_ok and len(chosen) > 0 else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("out")
    t.add_argument("--steps", type=int, default=300)
    t.add_argument("--seed", type=int, default=0)
    c = sub.add_parser("check")
    c.add_argument("weights")
    c.add_argument("run")
    args = ap.parse_args()
    if args.cmd == "train":
        return train(args.out, args.steps, args.seed)
    return check(args.weights, args.run)


if __name__ == "__main__":
    sys.exit(main())
