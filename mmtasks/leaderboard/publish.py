"""``mmtasks leaderboard publish OUT --repo ORG/NAME``: a built leaderboard to the Hugging Face Hub.

It uploads ``leaderboard.json`` (with ``--with-site`` also the page, ``leaderboard.js`` and the
runs' views in ``views/``) in one commit with the real client, ``huggingface_hub.HfApi.upload_folder``,
to a dataset repo (the JSON, where people look for data) or a Space (``--repo-type space``: a
static Space that serves the page). The token is the client's usual one (``HF_TOKEN``, else the
one ``hf auth login`` stored); it travels only in the client's ``Authorization`` header and is
never written or printed by mmtasks (it is registered for redaction). ``HF_ENDPOINT`` points the
client at another Hub (a mirror, or the loopback Hub of the tests).

A second publish replaces what the first put there: changed files are uploaded again, and files
of ours that the new build no longer has (a view of a run no longer on the board) are deleted in
the same commit. Other files of the repo (its README, a model card) are left alone.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mmtasks.errors import ConfigError, MmtasksError
from mmtasks.leaderboard.build import VIEWS_DIR
from mmtasks.leaderboard.site import ASSETS, DATA_JS, DATA_JSON
from mmtasks.secrets import redact, register_secret

#: ``ORG/NAME`` as the Hub spells repo ids (letters, digits, ``-``, ``_``, ``.``; no ``..``, no ``--``)
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$")
REPO_TYPES = ("dataset", "space")
#: the paths of a repo this command owns: deleted when a new build no longer has them (a Space's
#: README.md too, which this command writes; a dataset's README is the user's)
OWNED = [DATA_JSON, DATA_JS, *ASSETS, f"{VIEWS_DIR}/**"]
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


def describe(upload: Upload) -> list[str]:
    """``--dry-run``: one line per file, then the total."""
    lines = [f"{path}  ({upload.size(path):,} bytes)" for path in upload.files]
    total = sum(upload.size(p) for p in upload.files)
    lines.append(f"{len(upload.files)} file(s), {total:,} bytes -> {upload.repo_type} {upload.repo} (one commit)")
    return lines


def publish(upload: Upload, *, message: str | None = None) -> str:
    """Upload the files in one commit; returns the commit's URL. Creates the repo when it does not
    exist (a Space as a static one). Errors name the repo and the cause."""
    try:
        from huggingface_hub import HfApi, get_token
        from huggingface_hub.errors import HfHubHTTPError
    except ImportError:
        raise ConfigError("publishing needs huggingface_hub: pip install 'mmtasks[publish]'") from None
    from huggingface_hub import constants as hub_constants

    where = f"{upload.repo_type} {upload.repo}"
    if hub_constants.HF_HUB_OFFLINE:
        raise PublishError(f"cannot publish to {where}: offline mode is on (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE)",
                           hint="unset HF_HUB_OFFLINE and TRANSFORMERS_OFFLINE to publish")
    token = get_token()  # HF_TOKEN, else the token `hf auth login` stored
    if not token:
        raise PublishError(f"cannot publish to {where}: no Hugging Face token",
                           hint="set HF_TOKEN to a token with write access, or run `hf auth login`")
    register_secret(token)  # whatever goes wrong, no message shows it
    endpoint = os.environ.get("HF_ENDPOINT") or None
    api = HfApi(endpoint=endpoint, token=token)
    try:
        with tempfile.TemporaryDirectory(prefix="mmtasks-publish-") as tmp:
            staged = Path(tmp)
            for path, source in upload.files.items():
                target = staged / path
                target.parent.mkdir(parents=True, exist_ok=True)
                if isinstance(source, str):
                    target.write_text(source, encoding="utf-8")
                else:
                    shutil.copyfile(source, target, follow_symlinks=False)
            extra: dict[str, Any] = {"space_sdk": "static"} if upload.repo_type == "space" else {}
            api.create_repo(upload.repo, repo_type=upload.repo_type, exist_ok=True, **extra)
            info = api.upload_folder(
                repo_id=upload.repo, repo_type=upload.repo_type, folder_path=staged,
                commit_message=message or f"mmtasks leaderboard publish: {len(upload.files)} file(s)",
                delete_patterns=OWNED + (["README.md"] if upload.repo_type == "space" else []),
            )
    except HfHubHTTPError as exc:
        raise PublishError(_http_cause(where, exc)) from None
    except OSError as exc:  # the Hub cannot be reached (connection refused, DNS, TLS)
        raise PublishError(f"cannot publish to {where}: cannot reach the Hub at {endpoint or 'https://huggingface.co'} "
                           f"({redact(str(exc)) or type(exc).__name__})") from None
    except ValueError as exc:  # the client refused the Hub's answer (a malformed reply)
        raise PublishError(f"cannot publish to {where}: {redact(str(exc))}") from None
    return str(getattr(info, "commit_url", info))


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
    detail = f": {redact(server)[:200]}" if server else ""
    if status == 401:
        return f"cannot publish to {where}: the Hub refused the token (401{detail}); check HF_TOKEN or `hf auth login`"
    if status == 403:
        return f"cannot publish to {where}: no permission to write to it (403{detail}); the token needs write access to the repo"
    if status == 404:
        return f"cannot publish to {where}: not found (404{detail}); check the name, and that the token's account can see it"
    return f"cannot publish to {where}: the Hub answered {status}{detail}"
