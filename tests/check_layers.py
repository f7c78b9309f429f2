#!/usr/bin/env python3
"""Checks every #include "..." of lode's sources against the layer table.

    check_layers.py [SOURCE_ROOT]

cmake/layers.json lists the layers (base, backend_support, the backends,
dispatch, mining, stratum, gbt, cli), each with its folder and the layers it
uses. A source in a layer's folder may include headers of its own layer and
of the layers it uses, a backend's only through the headers the table names
public, and nothing else. The compiler already refuses a header outside the
include views of the libraries a target links (cmake/LodeLayers.cmake); this
check also refuses what compiles only because a library in between links a
layer PUBLIC (core/stratum including core/dispatch/ through core/mining), a
path with "..", and an include of a folder that is no layer.

tests/ is no layer and is not checked. Exit status: 0 clean, 1 violations
(one line each), 2 the table or the check itself is broken.
"""
import json
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCES = (".c", ".h", ".cu", ".cuh")


def load_layers(root):
    with open(os.path.join(root, "cmake", "layers.json")) as f:
        layers = json.load(f)["layers"]
    seen = set()
    for layer in layers:
        for used in layer["uses"]:
            if used not in seen:
                raise ValueError(f"layer {layer['name']} uses {used}, which is not listed before it")
        seen.add(layer["name"])
    return layers


def layer_of(path, layers):
    """The layer whose folder holds path (the longest folder wins), or None."""
    best = None
    for layer in layers:
        folder = layer["folder"] + "/"
        if path.startswith(folder) and (best is None or len(folder) > len(best["folder"]) + 1):
            best = layer
    return best


def check_include(source, included, layers, exists):
    """Why source (a path from the root) may not include `included`, or None."""
    own = layer_of(source, layers)
    if ".." in included.split("/"):
        return f'"{included}": a path with ".." bypasses the layers; name the folder from the root'
    if "/" not in included:
        # Relative to the including file: its own folder, its own layer.
        if exists(os.path.join(os.path.dirname(source), included)):
            return None
        return f'"{included}": name headers by their folder ("core/base/log.h")'
    target = layer_of(included, layers)
    if target is None:
        return f'"{included}" is in no layer (cmake/layers.json)'
    if target is own:
        return None
    by_name = {layer["name"]: layer for layer in layers}
    if target["name"] not in own["uses"]:
        allowed = ", ".join(own["uses"]) or "none"
        return (f'"{included}": layer {own["name"]} does not use layer {target["name"]} '
                f"(it uses: {allowed})")
    public = by_name[target["name"]].get("public")
    if public is not None and os.path.relpath(included, target["folder"]) not in public:
        return (f'"{included}" is private to {target["name"]}; its public headers: '
                + ", ".join(public))
    return None


def self_test(layers):
    """The rules must refuse what they exist to refuse: a broken table or
    pattern must not make every tree look clean."""
    names = {layer["name"] for layer in layers}
    needed = {"base", "backend_support", "backend-cpu", "dispatch", "mining", "stratum"}
    if not needed <= names:
        return f"the table lacks layers {sorted(needed - names)}"
    exists = lambda p: True
    bad = [
        ("backend-cuda/cuda_backend.c", "backend-cpu/sha256_cpu.h"),      # backend -> backend
        ("backend-opencl/ocl_devices.c", "core/dispatch/registry.h"),     # backend -> above
        ("core/base/work.c", "core/backend_support/launch_driver.h"),     # base -> above
        ("core/dispatch/registry.c", "backend-cpu/cpu_features.h"),       # private header
        ("core/stratum/stratum_client.c", "core/dispatch/dispatch.h"),    # only transitively
        ("core/cli/main.c", "../dispatch/dispatch.h"),                    # path games
        ("core/base/log.c", "tests/test_util.h"),                         # no layer
    ]
    good = [
        ("backend-cuda/cuda_backend.c", "core/backend_support/sha256d_lanes.h"),
        ("core/dispatch/registry.c", "backend-cpu/cpu_backend.h"),
        ("core/cli/main.c", "core/dispatch/dispatch.h"),
    ]
    for source, included in bad:
        if check_include(source, included, layers, exists) is None:
            return f"the check lets {source} include {included}"
    for source, included in good:
        why = check_include(source, included, layers, exists)
        if why is not None:
            return f"the check refuses {source} including {included}: {why}"
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    try:
        layers = load_layers(root)
    except (OSError, ValueError, KeyError) as e:
        print(f"check_layers: cmake/layers.json: {e}", file=sys.stderr)
        return 2
    broken = self_test(layers)
    if broken:
        print(f"check_layers: self-test: {broken}", file=sys.stderr)
        return 2

    exists = lambda p: os.path.isfile(os.path.join(root, p))
    violations, files = [], 0
    for folder, dirs, names in os.walk(root):
        rel = os.path.relpath(folder, root)
        # Not sources of lode: the tests, build trees, hidden folders.
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "build"
                         and os.path.normpath(os.path.join(rel, d)) != "tests"
                         and not os.path.isfile(os.path.join(folder, d, "CMakeCache.txt")))
        for name in sorted(names):
            if not name.endswith(SOURCES):
                continue
            path = os.path.normpath(os.path.join(rel, name))
            if layer_of(path, layers) is None:
                violations.append(f"{path}: in no layer's folder (cmake/layers.json)")
                continue
            files += 1
            with open(os.path.join(root, path), errors="replace") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if m:
                        why = check_include(path, m.group(1), layers, exists)
                        if why:
                            violations.append(f"{path}:{number}: {why}")
    for v in violations:
        print(v)
    if files == 0:
        print("check_layers: no source found: wrong root?", file=sys.stderr)
        return 2
    print(f"check_layers: {files} files, {len(violations)} violation(s)")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
