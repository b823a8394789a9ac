"""Networks written with libops.nn for the whole-network tests (test_nn_models.py) and
bench/bench_models.py: a GPT-2-style decoder written once over any torch.nn-like
namespace (torch.nn or libops.nn), and torchvision's ResNet-18 in libops.nn with
torchvision's layout and parameter names."""
import libops as L
import libops.nn as lnn


# ---- the GPT-2-style decoder, written once for torch.nn and for libops.nn --------------

def make_gpt(nn, lib, vocab=97, ctx=32, d=64, heads=4, layers=4):
    """token + position embeddings, pre-LN blocks (causal multi-head attention, GELU MLP),
    final LayerNorm, output head tied to the token embedding."""
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(d)
            self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
            self.ln_2 = nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x, mask):
            h = self.ln_1(x)
            x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab, d)
            self.wpe = nn.Embedding(ctx, d)
            self.h = nn.ModuleList([Block() for _ in range(layers)])
            self.ln_f = nn.LayerNorm(d)
            self.lm_head = nn.Linear(d, vocab, bias=False)
            self.lm_head.weight = self.wte.weight  # tied output head

        def forward(self, idx):
            t = idx.shape[1]
            x = self.wte(idx) + self.wpe(lib.arange(t))
            mask = lib.ones(t, t, dtype=lib.bool).triu(1)  # causal: True = not attended
            for block in self.h:
                x = block(x, mask)
            return self.lm_head(self.ln_f(x))

    return GPT()


# ---- ResNet-18 in libops.nn, torchvision's layout and names ----------------------------

class BasicBlock(lnn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = lnn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = lnn.BatchNorm2d(planes)
        self.relu = lnn.ReLU(inplace=True)
        self.conv2 = lnn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = lnn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class ResNet18(lnn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.inplanes = 64
        self.conv1 = lnn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = lnn.BatchNorm2d(64)
        self.relu = lnn.ReLU(inplace=True)
        self.maxpool = lnn.MaxPool2d(3, 2, 1)
        self.layer1 = self._make_layer(64, 2)
        self.layer2 = self._make_layer(128, 2, 2)
        self.layer3 = self._make_layer(256, 2, 2)
        self.layer4 = self._make_layer(512, 2, 2)
        self.avgpool = lnn.AdaptiveAvgPool2d((1, 1))
        self.fc = lnn.Linear(512, num_classes)

    def _make_layer(self, planes, blocks, stride=1):
        down = None
        if stride != 1 or self.inplanes != planes:
            down = lnn.Sequential(lnn.Conv2d(self.inplanes, planes, 1, stride, bias=False), lnn.BatchNorm2d(planes))
        layers = [BasicBlock(self.inplanes, planes, stride, down)]
        self.inplanes = planes
        layers += [BasicBlock(planes, planes) for _ in range(1, blocks)]
        return lnn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(L.flatten(self.avgpool(x), 1))
