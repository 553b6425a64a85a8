"""What produced a run's results: results.json's ``run_card`` (typed here, built by
:mod:`mmtasks.results.run_card`; the backends name their weights with :func:`model_revision`).

- ``data[task]``: a Hub dataset's repository and the commit its files came from (the revision the
  task pins, else the Hugging Face cache's record of the ref it downloaded, else one question to
  the Hub); local data's records file and the SHA-256 of its bytes (a changed record changes it).
- ``doc_ids[task]``: SHA-256 of the document ids scored, in document order, one per line.
- ``model``: the Hub commit of the weights, or for a local folder a SHA-256 over its
  ``config.json``, its ``*.index.json`` files and the headers of its ``*.safetensors`` files (the
  first 8 bytes give the header's length; the tensors are never read), names and sizes of other
  weight files; a backend says which (:meth:`mmtasks.models.base.ChatModel.revision`).
- ``versions``: mmtasks, transformers, vLLM, torch, datasets, huggingface_hub and Python, read from
  the installed packages' metadata (nothing is imported for it).
- ``hardware``: the CPU's name and count, the GPUs (torch's names when the run imported torch,
  else ``nvidia-smi``'s, else none), the platform.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import struct
import subprocess
import sys
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt

#: packages whose versions the card records (importlib.metadata: nothing imported)
VERSIONED = ("mmtasks", "transformers", "vllm", "torch", "datasets", "huggingface_hub")
_COMMIT = re.compile(r"[0-9a-f]{40}")
#: the most bytes of a safetensors header read (a header past it is hashed by its length alone)
_MAX_HEADER = 100 * 1024 * 1024


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", protected_namespaces=(), populate_by_name=True)


class DataRevision(_Strict):
    """``run_card.data[task]``: which data the task read. A Hub dataset is named by its repository
    and the commit its files came from; local data by the SHA-256 of its records file (a changed
    record changes it; media files are named by the records, not hashed here)."""

    source: Literal["hub", "local"]
    repo: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The Hub dataset (``org/name``)."""
    revision: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The revision the task asked for (a branch, tag or commit; None: the default branch)."""
    commit: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The Hub commit of the files read (None when it could not be known: offline and never cached)."""
    file: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The local records file, relative to the data root."""
    sha256: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """SHA-256 of the local records file's bytes."""

    @property
    def key(self) -> str | None:
        """What names this revision (the commit, or the content hash); None when unknown."""
        return self.commit if self.source == "hub" else self.sha256


class ModelRevision(_Strict):
    """``run_card.model``: which weights answered. A Hub checkpoint is named by its commit; a local
    folder by the SHA-256 of its config, weight index and safetensors headers (never the weights
    read whole); an API model by its name only."""

    source: Literal["hub", "local", "api", "none"]
    name: str | None = Field(default=None, exclude_if=lambda v: v is None)
    commit: str | None = Field(default=None, exclude_if=lambda v: v is None)
    sha256: str | None = Field(default=None, exclude_if=lambda v: v is None)


class Hardware(_Strict):
    """``run_card.hardware``: the machine the run's process ran on."""

    cpu: str | None = None
    cpus: NonNegativeInt | None = None
    gpus: list[str] = Field(default_factory=list)
    platform: str | None = None


class RunCard(BaseModel):
    """``run_card``: what produced the results (mmtasks.results.run_card), so another run can be
    told apart from this one: the data read, the documents scored, the weights, the software, the
    machine. Unknown keys load (a newer writer's additions are kept)."""

    model_config = ConfigDict(extra="allow")

    data: dict[str, DataRevision] = Field(default_factory=dict)
    """task -> the revision of the data it read."""
    doc_ids: dict[str, str] = Field(default_factory=dict)
    """task -> SHA-256 of its scored document ids, in document order, one per line."""
    model: ModelRevision | None = None
    versions: dict[str, str | None] = Field(default_factory=dict)
    """package -> its installed version (``mmtasks``, ``transformers``, ``vllm``, ``torch``,
    ``python``); None: not installed."""
    hardware: Hardware | None = None

    def model_label(self) -> str | None:
        """``hub ORG/NAME@<commit 12>``, ``local NAME sha256 <12>``, ``api NAME``; None: unknown."""
        m = self.model
        if m is None:
            return None
        ref = m.commit[:12] if m.commit else m.sha256[:12] if m.sha256 else "?"
        return f"{m.source} {m.name or ''}@{ref}" if m.source in ("hub", "local") else f"{m.source} {m.name or ''}".strip()

    def data_labels(self) -> dict[str, str]:
        """task -> ``hub ORG/NAME@<commit 12>`` or ``local DIR/FILE sha256 <12>`` (``?``: unknown)."""
        return {task: f"{d.source} {d.repo or d.file}@{(d.key or '?')[:12]}" for task, d in self.data.items()}

    def hardware_label(self) -> str | None:
        h = self.hardware
        if h is None:
            return None
        gpus: dict[str, int] = {}
        for name in h.gpus:
            gpus[name] = gpus.get(name, 0) + 1
        parts = [f"{n}x {name}" for name, n in gpus.items()] + ([f"{h.cpu} ({h.cpus} CPUs)" if h.cpus else h.cpu] if h.cpu else [])
        return ", ".join(parts) or None

    def lines(self) -> list[str]:
        """The card as a page shows it, one fact a line."""
        out = []
        if (model := self.model_label()) is not None:
            out.append(f"weights: {model}")
        out += [f"data {task}: {label}" for task, label in self.data_labels().items()]
        software = ", ".join(f"{k} {v}" for k, v in self.versions.items() if v)
        if software:
            out.append(f"software: {software}")
        if (hw := self.hardware_label()) is not None:
            out.append(f"hardware: {hw}")
        return out


def versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in VERSIONED:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    out["python"] = platform.python_version()
    return out


def _cpu_name() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith(("model name", "Model", "Hardware")) and ":" in line:
                    return line.split(":", 1)[1].strip() or None
    except OSError:
        pass
    return platform.processor() or None


def _gpu_names() -> list[str]:
    torch = sys.modules.get("torch")  # only when the run imported it (a local backend)
    if torch is not None:
        try:
            if torch.cuda.is_available():
                return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        except (RuntimeError, AssertionError):  # a broken driver: named by nvidia-smi below, or none
            pass
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return []
    try:
        out = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in out.stdout.splitlines() if line.strip()] if out.returncode == 0 else []


def hardware() -> Hardware:
    return Hardware(cpu=_cpu_name(), cpus=os.cpu_count(), gpus=_gpu_names(), platform=platform.platform())


def doc_ids_hash(doc_ids: Iterable[str]) -> str:
    """SHA-256 of the ids, in order, each once (a repeated document counts once), one per line."""
    digest = hashlib.sha256()
    seen: set[str] = set()
    for doc_id in doc_ids:
        if doc_id not in seen:
            seen.add(doc_id)
            digest.update(doc_id.encode("utf-8", "surrogatepass") + b"\n")
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def hub_commit(repo: str, revision: str | None, repo_type: str) -> str | None:
    """The commit ``revision`` of ``repo`` names: itself when it is one; else the Hugging Face
    cache's ref (written by the download that read the files); else asked of the Hub, unless
    offline. None when none of these knows it (never an error: the card says it is unknown)."""
    rev = revision or "main"
    if _COMMIT.fullmatch(rev):
        return rev
    try:
        from huggingface_hub import HfApi, constants
        from huggingface_hub.file_download import repo_folder_name
    except ImportError:
        return None
    ref = Path(constants.HF_HUB_CACHE) / repo_folder_name(repo_id=repo, repo_type=repo_type) / "refs" / rev
    try:
        cached = ref.read_text(encoding="utf-8").strip()
    except OSError:
        cached = ""
    if _COMMIT.fullmatch(cached):
        return cached
    if constants.HF_HUB_OFFLINE:
        return None
    from huggingface_hub.errors import HfHubHTTPError

    try:
        sha = HfApi().repo_info(repo, repo_type=repo_type, revision=rev).sha
    except (HfHubHTTPError, OSError, ValueError, ConnectionError):  # no access, no network: unknown
        return None
    return sha if isinstance(sha, str) and _COMMIT.fullmatch(sha) else None


def _safetensors_header(path: Path) -> bytes:
    """The 8-byte length and the JSON header of a safetensors file (its tensors are not read)."""
    with open(path, "rb") as fh:
        head = fh.read(8)
        if len(head) < 8:
            return head
        (length,) = struct.unpack("<Q", head)
        return head + (fh.read(length) if length <= _MAX_HEADER else b"")


def local_checkpoint_hash(folder: Path) -> str:
    """SHA-256 over a checkpoint folder's config, weight indexes and safetensors headers, each
    under its name; other weight files (``*.bin``, ``*.pt``, ``*.gguf``) by name and size."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        name = path.name
        if name == "config.json" or name.endswith(".index.json"):
            part = path.read_bytes()
        elif name.endswith(".safetensors"):
            part = _safetensors_header(path)
        elif name.endswith((".bin", ".pt", ".pth", ".gguf", ".ckpt")):
            part = str(path.stat().st_size).encode()
        else:
            continue
        digest.update(json.dumps([name, len(part)]).encode() + b"\n" + part)
    return digest.hexdigest()


def model_revision(name: str, revision: str | None = None, commit: str | None = None) -> ModelRevision:
    """A checkpoint's revision: a local folder's hash (:func:`local_checkpoint_hash`), else the Hub
    commit (``commit`` when the loader knows it, e.g. transformers' ``config._commit_hash``)."""
    folder = Path(name).expanduser()
    if folder.is_dir():
        try:
            return ModelRevision(source="local", name=folder.name, sha256=local_checkpoint_hash(folder))
        except OSError:
            return ModelRevision(source="local", name=folder.name)
    if commit is None or not _COMMIT.fullmatch(commit):
        commit = hub_commit(name, revision, "model")
    return ModelRevision(source="hub", name=name, commit=commit)


