"""Parity regressions of the hundred-and-fourteenth wave: realistic PyTorch vision programs run
unchanged under ember (a small channels_last ResNet with mixup, nesterov SGD and top-5 accuracy;
a tiny ViT with hand-written and fused attention, DropPath, LayerScale, AdamW + LambdaLR and EMA
weights; a PixelShuffle / ConvTranspose2d denoiser with reflection / replication padding,
affine_grid + grid_sample augmentation, an SSIM-like loss and PSNR; detection utilities: box IoU,
hand-written NMS, meshgrid anchors, smooth-L1, BCE with pos_weight, focal loss, index_put_
accumulate; segmentation: bincount confusion matrices, weighted cross-entropy with ignore_index
on (N, C, H, W), bilinear upsampling of logits, Dice over one-hot). The values of all five
programs matched torch's; it found:

* a channels_last input pooled (or padded, upsampled, normalized ...) to a result with size-1
  spatial dims whose strides were numpy's (``adaptive_avg_pool2d(x, 1).stride()`` ``(C, 1, 1,
  1)``; torch: ``(C, 1, C, C)``, the strides of a fresh channels_last tensor).

Left: reductions with ``keepdim=True`` of a channels_last tensor keep numpy's strides for the
kept size-1 dims (``x.sum(1, keepdim=True)``: torch ``(HW, HW, W, 1)``; ``x.mean((2, 3),
keepdim=True)``: torch ``(C, 1, 1, 1)``), and batch_norm of a sliced channels_last tensor with
1x1 spatial dims gives ``(C, 1, 1, 1)`` (torch ``(C, 1, C, C)``); no program read them.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember
from harness import outcome


def _cl(m, shape=(2, 8, 4, 4)):
    a = np.random.RandomState(0).randn(*shape).astype(np.float32)
    return m.from_numpy(a).contiguous(memory_format=m.channels_last)


def _same(fn):
    got, want = outcome(fn, ember), outcome(fn, torch)
    assert got == want
    return want


# ops whose channels_last result has size-1 spatial dims: torch gives them channels_last strides
@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, 1),
        lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, (1, 2)),
        lambda m, x: m.nn.AdaptiveAvgPool2d((1, 1))(x),
        lambda m, x: m.nn.functional.adaptive_max_pool2d(x, 1),
        lambda m, x: m.nn.functional.adaptive_max_pool2d(x, 1, return_indices=True)[1],
        lambda m, x: m.nn.functional.max_pool2d(x, 4),
        lambda m, x: m.nn.functional.max_pool2d(x, (4, 2)),
        lambda m, x: m.nn.functional.avg_pool2d(x, 4),
        lambda m, x: m.nn.functional.interpolate(x, size=(1, 1)),
        lambda m, x: m.nn.functional.interpolate(x, size=(1, 3), mode="bilinear"),
        lambda m, x: m.nn.functional.pixel_shuffle(x[:, :4], 2),
        lambda m, x: m.nn.functional.pixel_unshuffle(x, 2),
        lambda m, x: m.nn.functional.pixel_unshuffle(x, 4),
        lambda m, x: m.nn.functional.relu(m.nn.functional.adaptive_avg_pool2d(x, 1)),
        lambda m, x: m.nn.functional.conv2d(x, m.ones(3, 8, 4, 4)),
    ],
)
def test_channels_last_size_one_dims_strides(call):
    def fn(m):
        r = call(m, _cl(m))
        return (
            r.stride(),
            r.is_contiguous(),
            r.is_contiguous(memory_format=m.channels_last),
            np.round(r.double().numpy(), 4).tolist(),
        )

    _same(fn)


def test_channels_last_resnet_head_strides():
    # the head of a channels_last ResNet: avgpool -> flatten -> fc, forward and backward
    def fn(m):
        x = _cl(m).requires_grad_()
        p = m.nn.AdaptiveAvgPool2d((1, 1))(m.nn.functional.relu(x))
        w = m.from_numpy(np.linspace(-1, 1, 24, dtype=np.float32).reshape(3, 8))
        out = m.flatten(p, 1) @ w.t()
        out.sum().backward()
        return p.stride(), m.flatten(p, 1).stride(), x.grad.stride(), round(x.grad.sum().item(), 5)

    _same(fn)


def _box_iou(m, a, b):
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    lt = m.max(a[:, None, :2], b[:, :2])
    rb = m.min(a[:, None, 2:], b[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    return inter / (area_a[:, None] + area_b - inter)


def _nms(m, boxes, scores, thr):
    order = scores.argsort(descending=True)
    keep = []
    while order.numel() > 0:
        i = order[0].item()
        keep.append(i)
        if order.numel() == 1:
            break
        ious = _box_iou(m, boxes[i].unsqueeze(0), boxes[order[1:]]).squeeze(0)
        order = order[1:][ious <= thr]
    return keep


def test_detection_idioms():
    def fn(m):
        rs = np.random.RandomState(1)
        xy = rs.rand(12, 2).astype(np.float32) * 20
        boxes = m.from_numpy(np.concatenate([xy, xy + 4 + rs.rand(12, 2) * 6], 1).astype("f4"))
        scores = m.from_numpy(rs.rand(12).astype(np.float32))
        sy = m.arange(3, dtype=m.float32) * 8 + 4
        yy, xx = m.meshgrid(sy, sy, indexing="ij")
        ctr = m.stack([xx.reshape(-1), yy.reshape(-1)], dim=1)
        anchors = m.cat([ctr - 4, ctr + 4], dim=1)
        iou = _box_iou(m, anchors, boxes)
        best, idx = iou.max(dim=1)
        pos = m.nonzero(best >= 0.1, as_tuple=True)[0]
        tgt = m.zeros(9, 3).scatter_(1, (idx % 3).unsqueeze(1), 1.0)
        counts = m.zeros(3).index_put_((idx % 3,), m.ones(9), accumulate=True)
        logits = m.from_numpy(rs.randn(9, 3).astype(np.float32)).requires_grad_()
        bce = m.nn.functional.binary_cross_entropy_with_logits(
            logits, tgt, pos_weight=m.full((3,), 2.0)
        )
        sl1 = m.nn.functional.smooth_l1_loss(logits[:, :2], anchors[:, :2] / 10, beta=1 / 9)
        (bce + sl1).backward()
        return (
            _nms(m, boxes, scores, 0.3),
            pos.tolist(),
            [t.tolist() for t in m.where(best > 0.05)],
            counts.tolist(),
            round((bce + sl1).item(), 5),
            np.round(logits.grad.numpy(), 5).tolist(),
        )

    _same(fn)


def test_segmentation_idioms():
    def fn(m):
        rs = np.random.RandomState(2)
        F = m.nn.functional
        logits = m.from_numpy(rs.randn(2, 4, 3, 3).astype(np.float32)).requires_grad_()
        lab = rs.randint(0, 4, (2, 6, 6))
        lab[:, 0] = 255
        y = m.from_numpy(lab)
        up = F.interpolate(logits, size=(6, 6), mode="bilinear", align_corners=False)
        ce = F.cross_entropy(up, y, weight=m.tensor([1.0, 2.0, 1.0, 0.5]), ignore_index=255)
        valid = y != 255
        t = y.clone()
        t[~valid] = 0
        onehot = F.one_hot(t, num_classes=4).permute(0, 3, 1, 2).float() * valid.unsqueeze(1)
        probs = up.softmax(dim=1) * valid.unsqueeze(1)
        dice = 1 - (2 * (probs * onehot).sum((0, 2, 3)) / (probs + onehot).sum((0, 2, 3))).mean()
        (ce + dice).backward()
        pred = up.argmax(1)[valid]
        hist = m.bincount(4 * y[valid] + pred, minlength=16).reshape(4, 4)
        iou = m.diag(hist).float() / (hist.sum(0) + hist.sum(1) - m.diag(hist)).float()
        return (
            hist.tolist(),
            round(m.nanmean(iou).item(), 5),
            round(ce.item(), 5),
            round(dice.item(), 5),
            round(logits.grad.abs().sum().item(), 4),
        )

    _same(fn)


@pytest.mark.parametrize(
    ("shape", "wshape", "stride", "weight_cl"),
    [
        ((2, 4, 5, 5), (3, 4, 1, 1), 2, True),  # a ResNet downsample: 1x1 kernel, stride 2
        ((2, 4, 5, 5), (3, 4, 1, 1), 2, False),
        ((2, 4, 3, 3), (1, 4, 3, 3), 1, True),  # a 1x1 output with one channel
        ((2, 4, 3, 3), (5, 4, 3, 3), 1, False),
        ((2, 4, 1, 1), (6, 4, 1, 1), 1, True),
    ],
)
def test_channels_last_conv_gradient_strides(shape, wshape, stride, weight_cl):
    def fn(m):
        rs = np.random.RandomState(3)
        x = m.from_numpy(rs.randn(*shape).astype(np.float32))
        x = x.contiguous(memory_format=m.channels_last).requires_grad_()
        w = m.from_numpy(rs.randn(*wshape).astype(np.float32))
        if weight_cl:
            w = w.contiguous(memory_format=m.channels_last)
        w.requires_grad_()
        y = m.nn.functional.conv2d(x, w, stride=stride)
        y.sum().backward()
        return y.stride(), x.grad.stride(), w.grad.stride(), round(w.grad.sum().item(), 4)

    _same(fn)
