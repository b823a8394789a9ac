"""Convert a PyTorch checkpoint (torch.save of a state dict) to safetensors, which libops
loads zero-copy (libops.load_safetensors, ops_safetensors_load from C).  PyTorch is not
needed:

    python3 examples/torch_to_safetensors.py model.pt model.safetensors

libops.load_torch reads the torch.save file itself (zip or legacy format) with an
allow-listed unpickler: only tensors, storages and plain containers are rebuilt, and a
checkpoint naming anything else (a pickled module, a class of the training script) is
refused by name without running it (docs/serialization.md, "PyTorch checkpoints").  From
Python the checkpoint can also be used directly, without converting:

    net.load_state_dict(libops.load_torch("model.pt"))
"""
import sys

import libops


def tensors_of(obj):
    """The name -> tensor entries of a state dict (or of a training checkpoint's
    'state_dict' / 'model' entry), nested dicts flattened with dots as torch names them."""
    if isinstance(obj, dict):
        for key in ("state_dict", "model"):
            if isinstance(obj.get(key), dict):
                obj = obj[key]
                break
    out = {}

    def walk(prefix, d):
        for k, v in d.items():
            if isinstance(v, libops.Tensor):
                out[prefix + str(k)] = v
            elif isinstance(v, dict):
                walk(prefix + str(k) + ".", v)

    if not isinstance(obj, dict):
        sys.exit(f"the checkpoint holds a {type(obj).__name__}, not a state dict")
    walk("", obj)
    return out


def main(argv):
    if len(argv) != 3:
        sys.exit(f"usage: {argv[0]} checkpoint.pt out.safetensors")
    tensors = tensors_of(libops.load_torch(argv[1]))
    # tied weights (one storage under two names) are written once per name, as copies;
    # views are written as their own values
    libops.save_safetensors(tensors, argv[2], metadata={"format": "pt"})
    print(f"{argv[2]}: {len(tensors)} tensors")


if __name__ == "__main__":
    main(sys.argv)
