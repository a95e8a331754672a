#!/usr/bin/env bash
# Copies Mesa's Vulkan device-select layer and the libraries it needs into .vklayer/ (git-ignored) at
# the repo root, for the GPU machine's data-parallel entry (bench/src/gpu-multi-entry.ts): with it, one
# process opens one Dawn instance per GPU of identical GPUs (bench/src/multi-device/per-gpu-dawn.ts).
# Needs mesa-vulkan-drivers installed here (.ci/run installs it). Carry `.vklayer` and run with
#   VK_LAYER_PATH=$PWD/.vklayer VK_INSTANCE_LAYERS=VK_LAYER_MESA_device_select LD_LIBRARY_PATH=$PWD/.vklayer
set -euo pipefail
root=$(git rev-parse --show-toplevel); cd "$root"
exclude=$(git rev-parse --git-path info/exclude)
grep -qx '/.vklayer/' "$exclude" 2>/dev/null || echo '/.vklayer/' >> "$exclude"
so=$(dpkg -L mesa-vulkan-drivers | grep 'libVkLayer_MESA_device_select.so$')
json=$(dpkg -L mesa-vulkan-drivers | grep 'VkLayer_MESA_device_select.json$')
rm -rf .vklayer && mkdir -p .vklayer && cp "$so" .vklayer/
# The layer's own dependencies, resolved here (the GPU machine's image may lack the X/Wayland ones).
ldd "$so" | awk '/=> \// {print $3}' | grep -vE '/(libc|libpthread|libdl|libm|ld-linux)[.-]' | while read -r lib; do
  cp -L "$lib" .vklayer/
done
sed 's#"library_path": *"libVkLayer_MESA_device_select.so"#"library_path": "./libVkLayer_MESA_device_select.so"#' "$json" \
  > .vklayer/VkLayer_MESA_device_select.json
du -sh .vklayer | sed 's/^/packed: /'
