#!/usr/bin/env bash
# Issue 12's one prepared GPU run (a lent device machine: /work/.library/device; its image has
# cupy-cuda13x and torch with CUDA, no network). Run from the repo root; results land in $OUT:
#   bash bench/gpu_check.sh
# 1. ember installs offline; 2. on the real GPU, compared with the cpu: every op row of
# tests/test_device.py, every nn module row of tests/test_device_modules.py, the training path of
# tests/test_device_training.py (optimizers, GradScaler, SWA, checkpoints, DataLoader) and the
# other cuda rows (the fused kernels of core/kernels/ compiled there by cupy for the first time);
# then ember.cuda's API against torch.cuda, every fused kernel body through NVRTC
# (tests/test_fused_nvrtc.py) and every xp.* call the kernels make against cupy's API
# (tests/test_cupy_api.py); 3. the CNN, LSTM and Transformer training steps timed on cuda in
# ember and torch, with and without the fused kernels (bench_gpu.py); 4. the CNN recipe trained
# for three epochs with --device cuda.
set -uo pipefail
OUT=${OUT:-/tmp/ember_gpu_out}
mkdir -p "$OUT"
python -m pip install --no-deps --no-build-isolation -e . >"$OUT/install.log" 2>&1 || {
    echo "install failed (see install.log)"
    exit 1
}
python - >"$OUT/env.txt" 2>&1 <<'PY'
import cupy, ember, torch
print("ember cuda available:", ember.cuda.is_available(), "devices:", ember.cuda.device_count())
print("gpu:", cupy.cuda.runtime.getDeviceProperties(0)["name"].decode())
print("cupy", cupy.__version__, "torch", torch.__version__, "torch cuda", torch.cuda.is_available())
PY
cat "$OUT/env.txt"
# newest rows first (the op sweep of test_device.py passed on the first H200 run): a run cut by
# its time limit loses the best-known rows; --durations shows where the time went
timeout 300 python -m pytest -p no:cacheprovider --maxfail=200 -rf --durations=10 \
    tests/test_device_training.py tests/test_nn_rnn.py tests/test_device_modules.py \
    tests/test_sparse.py tests/test_quantized.py tests/test_nn_conv_winograd.py \
    tests/test_device.py -k "cuda" >"$OUT/tests_cuda.txt" 2>&1
echo "cuda tests: exit $? ($(tail -1 "$OUT/tests_cuda.txt"))"
timeout 90 python -m pytest -p no:cacheprovider -rf tests/test_dropin.py::test_cuda_is_truthful \
    tests/test_dropin.py::test_cuda_api_on_a_gpu tests/test_fused_nvrtc.py tests/test_cupy_api.py \
    >"$OUT/tests_cuda_api.txt" 2>&1
echo "ember.cuda API, NVRTC compiles: exit $? ($(tail -1 "$OUT/tests_cuda_api.txt"))"
timeout 150 python bench/bench_gpu.py --device cuda --repeat 15 >"$OUT/bench_gpu.txt" 2>&1
echo "bench: exit $?"
cat "$OUT/bench_gpu.txt"
timeout 45 python examples/cnn_digits.py --device cuda --epochs 3 --quiet --out "$OUT/cnn_digits" \
    >"$OUT/recipe_cnn.txt" 2>&1
echo "recipe on cuda: exit $? ($(grep '^final' "$OUT/recipe_cnn.txt"))"
