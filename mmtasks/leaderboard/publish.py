"""``mmtasks leaderboard publish OUT --repo ORG/NAME``: a built leaderboard to the Hugging Face Hub.

It uploads ``leaderboard.json`` (with ``--with-site`` also the page, ``leaderboard.js`` and the
runs' views in ``views/``) in one commit with the real client, ``huggingface_hub.HfApi.upload_folder``,
to a dataset repo (the JSON, where people look for data) or a Space (``--repo-type space``: a
static Space that serves the page). The token is the client's usual one (``HF_TOKEN``, else the
one ``hf auth login`` stored); it travels only in the client's ``Authorization`` header and is
never written or printed by mmtasks (it is registered for redaction). ``HF_ENDPOINT`` points the
client at another Hub (a mirror, or the loopback Hub of the tests).

A publish changes only what mmtasks published there before. The repo's ``.mmtasks-publish.json``
(the manifest, committed with the files) lists every path of the last publish; the next one uploads
its files (unchanged ones are skipped by the client) and deletes, in the same commit, exactly the
paths of that manifest that the new build no longer has (a view of a run no longer on the board).
Every other file of the repo (its README, a model card, the owner's own page) is left alone, and a
repo published before the manifest existed loses nothing. ``--dry-run`` reads the manifest (a GET,
nothing changed) and lists the uploads and the deletions both.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mmtasks.errors import ConfigError, MmtasksError, printable
from mmtasks.leaderboard.build import VIEWS_DIR
from mmtasks.leaderboard.site import ASSETS, DATA_JS, DATA_JSON
from mmtasks.secrets import redact, register_secret

#: ``ORG/NAME`` as the Hub spells repo ids (letters, digits, ``-``, ``_``, ``.``; no ``..``, no ``--``)
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$")
REPO_TYPES = ("dataset", "space")
#: the repo's record of what the last publish put there (see the module docstring)
MANIFEST = ".mmtasks-publish.json"
#: bounds on a manifest read back from the Hub (a server's answer: bounded like any other)
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
MAX_MANIFEST_PATHS = 200_000
SPACE_README = """---
title: mmtasks leaderboard
emoji: 📊
colorFrom: blue
colorTo: indigo
sdk: static
app_file: index.html
pinned: false
---

The mmtasks leaderboard: `index.html` is the page, `leaderboard.json` its data. Published by
`mmtasks leaderboard publish --repo-type space --with-site`.
"""


class PublishError(MmtasksError):
    """Publishing failed: the message names the repo and the cause."""

    exit_code = 1


@dataclass(frozen=True)
class Upload:
    """What a publish sends: repo-relative path -> local file (or generated text)."""

    repo: str
    repo_type: str
    files: dict[str, Path | str]

    def size(self, path: str) -> int:
        source = self.files[path]
        return len(source.encode("utf-8")) if isinstance(source, str) else source.stat().st_size


def plan(out: Path, repo: str, *, repo_type: str = "dataset", with_site: bool = False) -> Upload:
    """The files to upload from the built leaderboard ``out``; one-line errors for a bad repo id,
    repo type or an ``out`` that holds no build."""
    if not _REPO_ID.match(repo) or ".." in repo or "--" in repo:
        raise ConfigError(f"--repo {repo!r} is not a Hub repo id: ORG/NAME (letters, digits, '-', '_', '.')",
                          field="--repo")
    if repo_type not in REPO_TYPES:
        raise ConfigError(f"--repo-type {repo_type!r}: choose one of {', '.join(REPO_TYPES)}", field="--repo-type")
    if repo_type == "space" and not with_site:
        raise ConfigError("a Space serves the page: publish it with --with-site", field="--repo-type")
    data = out / DATA_JSON
    if not data.is_file() or data.is_symlink():
        raise ConfigError(f"no {DATA_JSON} in this folder: build it first with `mmtasks leaderboard build RUN_DIR... --out {out}`",
                          file=out)
    files: dict[str, Path | str] = {DATA_JSON: data}
    if with_site:
        for name in (*ASSETS, DATA_JS):
            path = out / name
            if not path.is_file() or path.is_symlink():
                raise ConfigError(f"the page's {name} is missing: rebuild with `mmtasks leaderboard build ... --out {out}`",
                                  file=out)
            files[name] = path
        views = out / VIEWS_DIR
        if views.is_dir() and not views.is_symlink():
            for path in sorted(views.rglob("*")):
                if path.is_file() and not path.is_symlink() and not any(p.startswith(".") for p in path.relative_to(out).parts):
                    files[path.relative_to(out).as_posix()] = path
        if repo_type == "space":
            files["README.md"] = SPACE_README
    return Upload(repo=repo, repo_type=repo_type, files=files)


def describe(upload: Upload, deletions: list[str]) -> list[str]:
    """``--dry-run``: one line per file to upload, one per file to delete, then the total."""
    lines = [f"upload {printable(path)}  ({upload.size(path):,} bytes)" for path in upload.files]
    lines += [f"delete {printable(path)}  (published before, not in this build)" for path in deletions]
    total = sum(upload.size(p) for p in upload.files)
    lines.append(f"{len(upload.files)} file(s), {total:,} bytes to upload and {len(deletions)} to delete -> "
                 f"{upload.repo_type} {upload.repo} (one commit)")
    return lines


def manifest_paths(raw: bytes, where: str) -> list[str]:
    """The paths a manifest read from the repo lists; one :class:`PublishError` line when it is not
    mmtasks's (not JSON, too large, a path that is not a plain repo path)."""
    from mmtasks.documents.jsonl import loads_checked

    def bad(why: str) -> PublishError:
        return PublishError(f"cannot publish to {where}: its {MANIFEST} is not mmtasks's ({why}); nothing was changed",
                            hint=f"remove {MANIFEST} from the repo (the next publish then deletes nothing) or publish elsewhere")

    if len(raw) > MAX_MANIFEST_BYTES:
        raise bad(f"more than {MAX_MANIFEST_BYTES:,} bytes")
    try:
        data = loads_checked(raw, file=MANIFEST)
    except MmtasksError as exc:
        raise bad(exc.message) from None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, list) or len(files) > MAX_MANIFEST_PATHS:
        raise bad("no list of files")
    for path in files:
        if not _repo_path(path):
            raise bad(f"{printable(repr(path))[:200]} is not a path of the repo")
    return list(dict.fromkeys(files))


def _repo_path(path: object) -> bool:
    if not isinstance(path, str) or not path or len(path) > 1000 or path.startswith("/") or "\\" in path:
        return False
    return all(part not in ("", ".", "..") for part in path.split("/")) and not any(ord(c) < 0x20 for c in path)


def _manifest_bytes(upload: Upload) -> bytes:
    return (json.dumps({"writer": "mmtasks", "files": sorted(upload.files)}, indent=1) + "\n").encode()


def _read_manifest(api: Any, upload: Upload, where: str) -> list[str]:
    """The paths the repo's manifest lists: none when the repo or the manifest does not exist."""
    from huggingface_hub import hf_hub_url
    from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError
    from huggingface_hub.utils import build_hf_headers, get_session

    url = hf_hub_url(upload.repo, MANIFEST, repo_type=upload.repo_type, endpoint=api.endpoint)
    headers = build_hf_headers(token=api.token)
    try:
        with get_session().stream("GET", url, headers=headers, follow_redirects=True, timeout=60) as response:
            if response.status_code == 404:
                return []
            if response.status_code != 200:
                raise PublishError(_status_cause(where, response.status_code) + f" (reading its {MANIFEST})")
            raw = b""
            for chunk in response.iter_bytes():
                raw += chunk
                if len(raw) > MAX_MANIFEST_BYTES:
                    break
    except (EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError):
        return []
    return manifest_paths(raw, where)


def _client(where: str, *, need_token: bool) -> Any:
    """An ``HfApi`` for the configured Hub, with the user's token (registered for redaction)."""
    try:
        from huggingface_hub import HfApi, get_token
    except ImportError:
        raise ConfigError("publishing needs huggingface_hub: pip install 'mmtasks[publish]'") from None
    from huggingface_hub import constants as hub_constants

    if hub_constants.HF_HUB_OFFLINE:
        raise PublishError(f"cannot publish to {where}: offline mode is on (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE)",
                           hint="unset HF_HUB_OFFLINE and TRANSFORMERS_OFFLINE to publish")
    token = get_token()  # HF_TOKEN, else the token `hf auth login` stored
    if not token and need_token:
        raise PublishError(f"cannot publish to {where}: no Hugging Face token",
                           hint="set HF_TOKEN to a token with write access, or run `hf auth login`")
    register_secret(token)  # whatever goes wrong, no message shows it
    return HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None, token=token or False)


def deletions(upload: Upload) -> list[str]:
    """``--dry-run``: what a publish would delete (read from the repo's manifest; nothing is changed)."""
    where = f"{upload.repo_type} {upload.repo}"
    api = _client(where, need_token=False)
    with _hub_errors(where):
        previous = _read_manifest(api, upload, where)
    return [path for path in previous if path not in upload.files and path != MANIFEST]


def publish(upload: Upload, *, message: str | None = None) -> tuple[str, list[str]]:
    """Upload the files in one commit, deleting what the repo's manifest lists and this build does
    not have; returns the commit's URL (as text fit to print) and the deleted paths. Creates the
    repo when it does not exist (a Space as a static one). Errors name the repo and the cause."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    where = f"{upload.repo_type} {upload.repo}"
    api = _client(where, need_token=True)
    with _hub_errors(where), tempfile.TemporaryDirectory(prefix="mmtasks-publish-") as tmp:
        staged = Path(tmp)
        operations: list[Any] = []
        for path, source in upload.files.items():
            target = staged / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(source, str):
                target.write_text(source, encoding="utf-8")
            else:
                shutil.copyfile(source, target, follow_symlinks=False)
            operations.append(CommitOperationAdd(path_in_repo=path, path_or_fileobj=str(target)))
        extra: dict[str, Any] = {"space_sdk": "static"} if upload.repo_type == "space" else {}
        api.create_repo(upload.repo, repo_type=upload.repo_type, exist_ok=True, **extra)
        previous = _read_manifest(api, upload, where)
        gone = [path for path in previous if path not in upload.files and path != MANIFEST]
        operations.append(CommitOperationAdd(path_in_repo=MANIFEST, path_or_fileobj=_manifest_bytes(upload)))
        operations += [CommitOperationDelete(path_in_repo=path) for path in gone]
        info = api.create_commit(
            repo_id=upload.repo, repo_type=upload.repo_type, operations=operations,
            commit_message=message or f"mmtasks leaderboard publish: {len(upload.files)} file(s)",
        )
    return printable(redact(str(getattr(info, "commit_url", info)))), gone


@contextlib.contextmanager
def _hub_errors(where: str) -> Iterator[None]:
    """The Hub's and the network's errors as one :class:`PublishError` line naming the repo."""
    from huggingface_hub.errors import HfHubHTTPError

    try:
        yield
    except HfHubHTTPError as exc:
        raise PublishError(_http_cause(where, exc)) from None
    except OSError as exc:  # the Hub cannot be reached (connection refused, DNS, TLS)
        endpoint = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
        raise PublishError(f"cannot publish to {where}: cannot reach the Hub at {printable(redact(endpoint))} "
                           f"({printable(redact(str(exc))) or type(exc).__name__})") from None
    except ValueError as exc:  # the client refused the Hub's answer (a malformed reply)
        raise PublishError(f"cannot publish to {where}: {printable(redact(str(exc)))}") from None


def _http_cause(where: str, exc: Any) -> str:
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    server = ""
    try:
        body = response.json() if response is not None else None
        if isinstance(body, dict) and isinstance(body.get("error"), str):
            server = body["error"]
    except ValueError:
        server = ""
    return _status_cause(where, status, printable(redact(server))[:200] if server else "")


def _status_cause(where: str, status: object, server: str = "") -> str:
    detail = f": {server}" if server else ""
    if status == 401:
        return f"cannot publish to {where}: the Hub refused the token (401{detail}); check HF_TOKEN or `hf auth login`"
    if status == 403:
        return f"cannot publish to {where}: no permission to write to it (403{detail}); the token needs write access to the repo"
    if status == 404:
        return f"cannot publish to {where}: not found (404{detail}); check the name, and that the token's account can see it"
    return f"cannot publish to {where}: the Hub answered {status}{detail}"
