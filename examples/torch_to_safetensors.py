"""Convert a PyTorch checkpoint (torch.save of a state dict) to safetensors, which libops
loads zero-copy (libops.load_safetensors, ops_safetensors_load from C).

    python3 examples/torch_to_safetensors.py model.pt model.safetensors

libops does not read torch.save files itself: they are pickles, and unpickling runs
whatever code the file names (torch.load's weights_only mode is a restricted unpickler
maintained with PyTorch; libops would have to keep its own in step with every PyTorch
release).  This script needs PyTorch, not libops: it writes the safetensors format
directly, as its spec states it (docs/serialization.md), in a few lines.
"""
import json
import struct
import sys

import torch

ST_DTYPE = {torch.bool: "BOOL", torch.uint8: "U8", torch.int8: "I8", torch.int16: "I16",
            torch.int32: "I32", torch.int64: "I64", torch.float16: "F16", torch.bfloat16: "BF16",
            torch.float32: "F32", torch.float64: "F64"}


def save_safetensors(state, path, metadata=None):
    header, chunks, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    # largest elements first, then by name: every tensor aligned once the header is padded
    for name, t in sorted(state.items(), key=lambda kv: (-kv[1].element_size(), kv[0])):
        t = t.detach().cpu().contiguous()
        # the raw little-endian bytes (bfloat16 has no NumPy dtype: view it as int16)
        raw = (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy().tobytes()
        header[name] = {"dtype": ST_DTYPE[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-(8 + len(h)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for c in chunks:
            f.write(c)


def main(argv):
    if len(argv) != 3:
        sys.exit(f"usage: {argv[0]} checkpoint.pt out.safetensors")
    state = torch.load(argv[1], map_location="cpu")
    if isinstance(state, dict) and "state_dict" in state:  # common training checkpoints
        state = state["state_dict"]
    tensors = {k: v for k, v in state.items() if isinstance(v, torch.Tensor)}
    # tied weights (one storage under two names) are written once per name, as copies
    save_safetensors(tensors, argv[2], metadata={"format": "pt"})
    print(f"{argv[2]}: {len(tensors)} tensors")


if __name__ == "__main__":
    main(sys.argv)
