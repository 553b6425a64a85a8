"""A loopback Hugging Face Hub: just the endpoints ``HfApi.create_repo`` and ``HfApi.upload_folder``
call for small text files, answering as the Hub does (status codes, ``X-Error-Code``, JSON shapes),
read from huggingface_hub's client code (``hf_api.py``, ``_commit_api.py``, ``utils/_http.py``):

- ``POST /api/repos/create``: ``{name, organization, type, sdk?}`` -> ``{"url"}``; 409 when it exists;
- ``POST /api/{type}s/{repo}/preupload/{rev}``: per file ``uploadMode`` (``regular`` under 10 MB),
  ``shouldIgnore`` and the ``oid`` (git blob sha1) of the file already there, so unchanged files are skipped;
- ``POST /api/{type}s/{repo}/commit/{rev}``: the NDJSON commit (``header``, ``file`` base64,
  ``deletedFile``, ``deletedFolder``) applied as one commit -> ``{"commitUrl", "commitOid"}``; with
  ``?create_pr=1`` applied to a new pull request's branch instead (``Repo.prs``; the main branch
  unchanged) -> also ``{"pullRequestUrl": ".../discussions/N"}``, as the Hub answers;
- ``POST /api/validate-yaml`` (a README's metadata, checked before upload);
- ``GET /{type}s/{repo}/resolve/{rev}/{path}``: a file's bytes (404 ``EntryNotFound``);
- ``GET /api/{type}s/{repo}/tree/{rev}`` (``list_repo_files``, for ``delete_patterns``) and
  ``GET /api/{type}s/{repo}[/revision/{rev}]`` (``repo_info``).

The read side that ``datasets.load_dataset`` and ``hf_hub_download`` use, for a public repo a test
seeds with :meth:`HubState.seed` (a dataset in its real layout: README with its ``configs``, data files):

- ``GET /api/{type}s/{repo}[/revision/{rev}]`` (``dataset_info``: ``sha``, ``siblings``, ``cardData``);
- ``GET /api/{type}s/{repo}/tree/{rev}[/{path}]`` (``HfFileSystem.ls`` / ``glob``): files and
  folders, one level or, with ``recursive=true``, all;
- ``POST /api/{type}s/{repo}/paths-info/{rev}`` (``paths=...``: the entries that exist);
- ``HEAD``/``GET /{type}s/{repo}/resolve/{rev}/{path}`` (datasets: ``/datasets/...``): the file, with
  ``X-Repo-Commit``, ``ETag`` and ``Content-Length`` as the Hub sends them (no Xet: plain HTTP), and
  ``Range`` requests (``bytes=A-B``, ``A-``, ``-N``) answered 206 with ``Content-Range``, or, with
  ``HubState.ranges`` False, ignored (200, the whole file). :meth:`HubState.fetched` lists the files
  downloaded, ``HubState.served`` counts the body bytes sent per file.

Every request is recorded (method, path, headers, body) so a test can check where the token went.
Auth: ``Authorization: Bearer <token>``; an unknown token is 401 "Invalid credentials in
Authorization header", a namespace the token may not write is 403, a repo that does not exist 404
``RepoNotFound``; the namespace ``ghost`` does not exist (its repos cannot be created: 404).
LFS/Xet uploads are not implemented: a file of 10 MB or more is answered 501, and every smaller file is
``regular`` (the Hub also sends binary files, images, to LFS/Xet; the tests upload text files only).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.server
import json
import threading
from dataclasses import dataclass, field
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote, urlsplit

REGULAR_LIMIT = 10 * 1024 * 1024


def git_blob_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    sdk: str | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    commits: list[dict[str, Any]] = field(default_factory=list)
    #: anyone may read it (a seeded public dataset); writing still needs a token
    public: bool = False
    #: pull requests opened by a commit with ``create_pr=1``: number, title, the branch's files, what it changed
    prs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def head(self) -> str:
        return self.commits[-1]["oid"] if self.commits else "0" * 40


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class HubState:
    def __init__(self, tokens: dict[str, set[str]]) -> None:
        #: token -> namespaces it may write
        self.tokens = tokens
        self.repos: dict[tuple[str, str], Repo] = {}
        self.requests: list[Recorded] = []
        self.lock = threading.Lock()
        #: a hostile Hub's commit URL (answered instead of the real one when set)
        self.commit_url: str | None = None
        #: False: a server that ignores ``Range`` (answers 200 with the whole file, as some proxies do)
        self.ranges = True
        #: (type, repo, path) -> the bytes of the file's body sent, all answers together
        self.served: dict[tuple[str, str, str], int] = {}
        #: files whose ``resolve`` is answered 403 (a gated file the token may not read)
        self.forbidden: set[str] = set()

    def seed(self, kind: str, repo_id: str, files: dict[str, bytes]) -> Repo:
        """A public repo holding ``files`` in one commit (a dataset as its card lays it out)."""
        repo = Repo(kind, repo_id, files=dict(files), public=True)
        repo.commits.append({"oid": hashlib.sha1(f"{repo_id}{sorted(files)}".encode()).hexdigest(), "summary": "seed",
                             "paths": sorted(files), "deleted": []})
        with self.lock:
            self.repos[(kind, repo_id)] = repo
        return repo

    def fetched(self, kind: str, repo_id: str) -> list[str]:
        """The files of ``repo_id`` downloaded (a GET of their ``resolve`` URL), in order, each once."""
        prefix = f"/{kind}s/{repo_id}/resolve/"
        out: list[str] = []
        for r in self.requests:
            path = unquote(urlsplit(r.path).path)
            if r.method == "GET" and path.startswith(prefix):
                name = path[len(prefix):].split("/", 1)[1]
                if name not in out:
                    out.append(name)
        return out


def make_handler(state: HubState) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _body(self) -> bytes:
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def _send(self, status: int, payload: Any, error_code: str | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if error_code:
                self.send_header("X-Error-Code", error_code)
            if status >= 400 and isinstance(payload, dict) and "error" in payload:
                self.send_header("X-Error-Message", payload["error"])
            self.end_headers()
            if self.command != "HEAD":  # a HEAD answer has no body (the next answer on the connection would break)
                self.wfile.write(data)

        def _base(self) -> str:
            """URLs in answers point at this server, as the Hub's point at itself."""
            return f"http://{self.headers.get('Host', '127.0.0.1')}"

        def _record(self, body: bytes) -> None:
            with state.lock:
                state.requests.append(Recorded(self.command, self.path, {k: v for k, v in self.headers.items()}, body))

        def _namespaces(self) -> set[str] | None:
            auth = self.headers.get("Authorization", "")
            if not auth.startswith("Bearer "):
                return None
            return state.tokens.get(auth[len("Bearer "):])

        def _auth(self) -> set[str] | None:
            spaces = self._namespaces()
            if spaces is None:
                self._send(401, {"error": "Invalid credentials in Authorization header"})
            return spaces

        def _repo(self, kind: str, repo_id: str) -> Repo | None:
            repo = state.repos.get((kind, repo_id))
            if repo is None:
                self._send(404, {"error": "Repository not found"}, "RepoNotFound")
            return repo

        def _reader(self, kind: str, repo_id: str) -> Repo | None:
            """The repo, when this request may read it: public, or a valid token (else 401/404 sent)."""
            repo = state.repos.get((kind, repo_id))
            if repo is not None and repo.public and not self.headers.get("Authorization"):
                return repo
            if self._auth() is None:
                return None
            return self._repo(kind, repo_id)

        def _revision(self, repo: Repo, rev: str) -> bool:
            if rev in ("main", repo.head):
                return True
            self._send(404, {"error": f"Invalid rev id: {rev}"}, "RevisionNotFound")
            return False

        def _resolve(self, parts: list[str], head_only: bool) -> None:
            """``/{type}s/{org}/{name}/resolve/{rev}/{path}``: the file's bytes (a Range as 206)."""
            kind, repo_id, rev, path = parts[0][:-1], f"{parts[1]}/{parts[2]}", parts[4], "/".join(parts[5:])
            repo = self._reader(kind, repo_id)
            if repo is None or not self._revision(repo, rev):
                return
            data = repo.files.get(path)
            if data is None:
                self._send(404, {"error": "Entry not found"}, "EntryNotFound")
                return
            if path in state.forbidden:
                self._send(403, {"error": f"Access to file {path} is restricted"}, "GatedRepo")
                return
            status, body = 200, data
            wanted = self.headers.get("Range", "")
            if wanted.startswith("bytes=") and not head_only and state.ranges:
                first, _, last = wanted[len("bytes="):].partition("-")
                start = int(first) if first else max(0, len(data) - int(last))
                end = int(last) if first and last else len(data) - 1
                status, body = 206, data[start:end + 1]
            self.send_response(status)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("ETag", f'"{git_blob_sha(data)}"')
            self.send_header("X-Repo-Commit", repo.head)
            if state.ranges:
                self.send_header("Accept-Ranges", "bytes")
            if status == 206:
                self.send_header("Content-Range", f"bytes {start}-{start + len(body) - 1}/{len(data)}")
            self.end_headers()
            if not head_only:
                with state.lock:
                    state.served[(kind, repo_id, path)] = state.served.get((kind, repo_id, path), 0) + len(body)
                self.wfile.write(body)

        def do_HEAD(self) -> None:  # noqa: N802
            self._record(b"")
            parts = [unquote(p) for p in urlsplit(self.path).path.split("/") if p]
            if len(parts) >= 6 and parts[0] in ("datasets", "spaces", "models") and parts[3] == "resolve":
                self._resolve(parts, head_only=True)
                return
            self._send(404, {"error": "not found"})

        def _tree(self, repo: Repo, rest: list[str]) -> None:
            """``tree/{rev}[/{path}]``: the entries under ``path``, one level (folders as ``directory``)
            or every file with ``recursive=true``."""
            if not self._revision(repo, rest[1]):
                return
            from urllib.parse import parse_qs

            query = parse_qs(urlsplit(self.path).query)
            recursive = (query.get("recursive") or ["false"])[0].lower() in ("true", "1")
            prefix = "/".join(rest[2:]).strip("/")
            base = prefix + "/" if prefix else ""
            if prefix and prefix in repo.files:
                self._send(200, [{"type": "file", "oid": git_blob_sha(repo.files[prefix]), "size": len(repo.files[prefix]),
                                  "path": prefix}])
                return
            out: list[dict[str, Any]] = []
            folders: set[str] = set()
            for path, data in sorted(repo.files.items()):
                if not path.startswith(base):
                    continue
                inner = path[len(base):].split("/")
                for depth in range(1, len(inner)):
                    folder = base + "/".join(inner[:depth])
                    if folder not in folders and (recursive or depth == 1):
                        folders.add(folder)
                        out.append({"type": "directory", "oid": hashlib.sha1(folder.encode()).hexdigest(), "size": 0,
                                    "path": folder})
                if recursive or len(inner) == 1:
                    out.append({"type": "file", "oid": git_blob_sha(data), "size": len(data), "path": path})
            if prefix and not out:
                self._send(404, {"error": f"Entry not found: {prefix}"}, "EntryNotFound")
                return
            self._send(200, out)

        def _info(self, repo: Repo) -> dict[str, Any]:
            card: dict[str, Any] = {}
            readme = repo.files.get("README.md", b"").decode("utf-8", "replace")
            if readme.startswith("---\n"):
                import yaml

                card = yaml.safe_load(readme[4:].split("\n---", 1)[0]) or {}
            return {"id": repo.repo_id, "sha": repo.head, "private": False, "disabled": False, "gated": False,
                    "lastModified": "2024-01-01T00:00:00.000Z", "cardData": card, "tags": [],
                    "siblings": [{"rfilename": p} for p in sorted(repo.files)]}

        def do_GET(self) -> None:  # noqa: N802
            self._record(b"")
            parts = [unquote(p) for p in urlsplit(self.path).path.split("/") if p]
            if len(parts) >= 6 and parts[0] in ("datasets", "spaces", "models") and parts[3] == "resolve":
                self._resolve(parts, head_only=False)
                return
            if len(parts) >= 4 and parts[0] == "api" and (parts[1][:-1], f"{parts[2]}/{parts[3]}") in state.repos:
                repo = self._reader(parts[1][:-1], f"{parts[2]}/{parts[3]}")
                if repo is None:
                    return
                rest = parts[4:]
                if rest[:1] == ["tree"] and len(rest) >= 2:
                    self._tree(repo, rest)
                    return
                if rest == [] or (rest[:1] == ["revision"] and len(rest) == 2 and self._revision(repo, rest[1])):
                    self._send(200, self._info(repo))
                    return
                if rest[:1] != ["revision"]:
                    self._send(404, {"error": "not found"})
                return
            spaces = self._auth()
            if spaces is None:
                return
            # /api/{type}s/{org}/{name}/tree/{rev}[/...]  or  /api/{type}s/{org}/{name}[/revision/{rev}]
            if len(parts) < 4 or parts[0] != "api" or parts[1] not in ("datasets", "spaces", "models"):
                self._send(404, {"error": "not found"})
                return
            kind, repo_id = parts[1][:-1], f"{parts[2]}/{parts[3]}"
            repo = self._repo(kind, repo_id)
            if repo is None:
                return
            rest = parts[4:]
            if rest[:1] == ["tree"]:
                prefix = "/".join(rest[2:])
                files = [{"type": "file", "oid": git_blob_sha(data), "size": len(data), "path": path}
                         for path, data in sorted(repo.files.items()) if not prefix or path.startswith(prefix + "/")]
                self._send(200, files)
                return
            if rest in ([], ["revision", "main"]):
                self._send(200, {"id": repo_id, "sha": repo.head, "private": False,
                                 "siblings": [{"rfilename": p} for p in sorted(repo.files)]})
                return
            self._send(404, {"error": "Revision not found"}, "RevisionNotFound")

        def do_POST(self) -> None:  # noqa: N802
            body = self._body()
            self._record(body)
            parts = [unquote(p) for p in urlsplit(self.path).path.split("/") if p]
            if len(parts) == 6 and parts[0] == "api" and parts[4] == "paths-info":
                self._paths_info(parts, body)
                return
            spaces = self._auth()
            if spaces is None:
                return
            parts = [unquote(p) for p in urlsplit(self.path).path.split("/") if p]
            if parts == ["api", "repos", "create"]:
                self._create(json.loads(body), spaces)
                return
            if parts == ["api", "validate-yaml"]:
                self._validate_yaml(json.loads(body))
                return
            if len(parts) == 6 and parts[0] == "api" and parts[4] in ("preupload", "commit"):
                kind, repo_id = parts[1][:-1], f"{parts[2]}/{parts[3]}"
                repo = self._repo(kind, repo_id)
                if repo is None:
                    return
                if parts[2] not in spaces:
                    self._send(403, {"error": f"You don't have the rights to write to {repo_id}"})
                    return
                if parts[5] != "main":
                    self._send(404, {"error": "Revision not found"}, "RevisionNotFound")
                    return
                (self._preupload if parts[4] == "preupload" else self._commit)(repo, body)
                return
            self._send(404, {"error": "not found"})

        def _paths_info(self, parts: list[str], body: bytes) -> None:
            """``paths-info/{rev}``: for each of the form's ``paths`` that exists, its entry."""
            from urllib.parse import parse_qs

            repo = self._reader(parts[1][:-1], f"{parts[2]}/{parts[3]}")
            if repo is None or not self._revision(repo, parts[5]):
                return
            form = parse_qs(body.decode("utf-8")) if not body.startswith(b"{") else {
                k: v if isinstance(v, list) else [v] for k, v in json.loads(body).items()}
            out: list[dict[str, Any]] = []
            for path in form.get("paths", []):
                path = path.strip("/")
                if path in repo.files:
                    out.append({"type": "file", "oid": git_blob_sha(repo.files[path]), "size": len(repo.files[path]),
                                "path": path})
                elif any(p.startswith(path + "/") for p in repo.files):
                    out.append({"type": "directory", "oid": hashlib.sha1(path.encode()).hexdigest(), "size": 0, "path": path})
            self._send(200, out)

        def _create(self, payload: dict[str, Any], spaces: set[str]) -> None:
            org, name, kind = payload.get("organization"), payload.get("name"), payload.get("type") or "model"
            if org == "ghost":
                self._send(404, {"error": f"Namespace {org} not found"}, "RepoNotFound")
                return
            if org not in spaces:
                self._send(403, {"error": f"You don't have the rights to create a {kind} under the namespace \"{org}\""})
                return
            repo_id = f"{org}/{name}"
            with state.lock:
                if (kind, repo_id) in state.repos:
                    self._send(409, {"error": "You already created this repo", "url": f"{self._base()}/{kind}s/{repo_id}"})
                    return
                repo = Repo(kind, repo_id, sdk=payload.get("sdk"))
                repo.files[".gitattributes"] = b"*.bin filter=lfs diff=lfs merge=lfs -text\n"
                repo.commits.append({"oid": hashlib.sha1(repo_id.encode()).hexdigest(), "summary": "initial commit",
                                     "paths": [".gitattributes"], "deleted": []})
                state.repos[(kind, repo_id)] = repo
            self._send(200, {"url": f"{self._base()}/{kind}s/{repo_id}", "name": repo_id})

        def _validate_yaml(self, payload: dict[str, Any]) -> None:
            """A README's front matter must be a YAML mapping (a Space's needs ``sdk``)."""
            import yaml

            content = payload.get("content") or ""
            errors: list[dict[str, str]] = []
            if content.startswith("---\n"):
                try:
                    meta = yaml.safe_load(content[4:].split("\n---", 1)[0])
                except yaml.YAMLError as exc:
                    meta, errors = None, [{"message": f"invalid YAML: {exc}"}]
                if not errors and not isinstance(meta, dict):
                    errors = [{"message": "metadata must be a mapping"}]
                elif not errors and payload.get("repoType") == "space" and "sdk" not in meta:
                    errors = [{"message": "\"sdk\" is required for a Space"}]
            self._send(400 if errors else 200, {"errors": errors, "warnings": []})

        def _preupload(self, repo: Repo, body: bytes) -> None:
            files = json.loads(body)["files"]
            out = []
            for f in files:
                if f["size"] >= REGULAR_LIMIT:
                    self._send(501, {"error": "LFS/Xet uploads are not implemented by the loopback Hub"})
                    return
                existing = repo.files.get(f["path"])
                out.append({"path": f["path"], "uploadMode": "regular", "shouldIgnore": False,
                            "oid": git_blob_sha(existing) if existing is not None else None})
            self._send(200, {"files": out, "commitOid": repo.head})

        def _commit(self, repo: Repo, body: bytes) -> None:
            from urllib.parse import parse_qs

            create_pr = (parse_qs(urlsplit(self.path).query).get("create_pr") or ["0"])[0] == "1"
            lines = [json.loads(line) for line in body.splitlines() if line.strip()]
            header = next((x["value"] for x in lines if x["key"] == "header"), None)
            if header is None:
                self._send(400, {"error": "missing header"})
                return
            with state.lock:
                files = dict(repo.files)
                added, deleted = [], []
                for item in lines:
                    key, value = item["key"], item["value"]
                    if key == "file":
                        if value.get("encoding") != "base64":
                            self._send(400, {"error": "unsupported encoding"})
                            return
                        files[value["path"]] = base64.b64decode(value["content"])
                        added.append(value["path"])
                    elif key == "deletedFile":
                        if value["path"] not in files:
                            self._send(404, {"error": "A file with this name doesn't exist"}, "EntryNotFound")
                            return
                        del files[value["path"]]
                        deleted.append(value["path"])
                    elif key == "deletedFolder":
                        prefix = value["path"].rstrip("/") + "/"
                        for path in [p for p in files if p.startswith(prefix)]:
                            del files[path]
                            deleted.append(path)
                    elif key != "header":
                        self._send(400, {"error": f"unsupported operation {key}"})
                        return
                oid = hashlib.sha1(f"{repo.head}{json.dumps(sorted(files))}{len(repo.commits)}{len(repo.prs)}".encode()).hexdigest()
                if create_pr:  # a new branch refs/pr/N from main: main keeps its files
                    number = len(repo.prs) + 1
                    repo.prs.append({"num": number, "title": header.get("summary"), "description": header.get("description"),
                                     "oid": oid, "files": files, "paths": added, "deleted": deleted})
                else:
                    repo.files = files
                    repo.commits.append({"oid": oid, "summary": header.get("summary"), "paths": added, "deleted": deleted})
            url = state.commit_url or f"{self._base()}/{repo.repo_type}s/{repo.repo_id}/commit/{oid}"
            answer = {"success": True, "commitOid": oid, "commitUrl": url}
            if create_pr:
                answer["pullRequestUrl"] = f"{self._base()}/{repo.repo_type}s/{repo.repo_id}/discussions/{number}"
            self._send(200, answer)

    return Handler


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):  # a client that closed its kept-alive connection
            return
        super().handle_error(request, client_address)


def hub_server(tokens: dict[str, set[str]]) -> tuple[http.server.ThreadingHTTPServer, HubState]:
    state = HubState(tokens)
    server = _Server(("127.0.0.1", 0), make_handler(state))
    return server, state


@contextlib.contextmanager
def running_hub(tokens: dict[str, set[str]] | None = None) -> Iterator[tuple[str, HubState]]:
    """A loopback Hub serving in a thread while the block runs: its base URL and its state."""
    server, state = hub_server(tokens or {})
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", state
    finally:
        server.shutdown()
        server.server_close()
