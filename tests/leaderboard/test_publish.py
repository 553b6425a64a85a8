"""``mmtasks leaderboard publish`` through the real huggingface_hub client against a loopback Hub
(tests/hub_server.py, reached through ``HF_ENDPOINT``): one commit, a second publish replaces the
files, errors name the repo and the cause, and the token goes only into the Authorization header."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mmtasks.leaderboard.cli import main as leaderboard_main
from tests.builders import serving
from tests.hub_server import Repo, hub_server

REPO = Path(__file__).resolve().parents[2]
RUNS = REPO / "tests" / "fixtures" / "runs"
TOKEN = "hf_loopbackTokenValue0123456789abcdef"
OTHER_TOKEN = "hf_readerWhoMayNotWriteAnything0123"

pytest.importorskip("huggingface_hub", reason="leaderboard publish needs huggingface_hub (the [publish] extra)")


def publish(args: list[str], tmp_path: Path, endpoint: str, token: str | None = TOKEN) -> subprocess.CompletedProcess[str]:
    """``mmtasks leaderboard publish ARGS`` in a child with a clean Hub environment (the test process
    runs with HF_HUB_OFFLINE=1, which the client reads when it is imported)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING", "TRANSFORMERS_"))}
    env.update({"HF_ENDPOINT": endpoint, "HF_HOME": str(tmp_path / "hf-home"), "PYTHONPATH": str(REPO),
                "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"})
    if token is not None:
        env["HF_TOKEN"] = token
    return subprocess.run([sys.executable, "-m", "mmtasks", "leaderboard", "publish", *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture()
def board(tmp_path: Path) -> Path:
    out = tmp_path / "board"
    assert leaderboard_main(["build", str(RUNS / "qwen2vl7b-realbench-2025-11-26"), "--out", str(out)]) == 0
    return out


@pytest.fixture()
def hub():
    server, state = hub_server({TOKEN: {"mmtasks-org"}, OTHER_TOKEN: set()})
    with serving(server) as port:
        yield f"http://127.0.0.1:{port}", state


def test_publish_uploads_in_one_commit_and_a_second_publish_replaces(board: Path, hub, tmp_path: Path) -> None:
    endpoint, state = hub
    done = publish([str(board), "--repo", "mmtasks-org/leaderboard", "--with-site"], tmp_path, endpoint)
    assert done.returncode == 0, done.stderr
    assert "in one commit" in done.stdout
    repo = state.repos[("dataset", "mmtasks-org/leaderboard")]
    published = {"leaderboard.json", "leaderboard.js", "index.html", "app.js", "style.css"}
    assert set(repo.files) == published | {".gitattributes", ".mmtasks-publish.json"}
    assert len(repo.commits) == 2  # the repo's creation, then every file in one commit
    assert set(repo.commits[1]["paths"]) == published | {".mmtasks-publish.json"}
    assert json.loads(repo.files[".mmtasks-publish.json"])["files"] == sorted(published)
    for name in published:
        assert repo.files[name] == (board / name).read_bytes(), name

    # a second build (another run; a view of ours, published before, that the new build no longer has)
    repo.files["NOTES.md"] = b"the maintainers' own file"
    repo.files["views/theirs/index.html"] = b"<p>the maintainers' own page under views/</p>"
    _publish_a_view(board, tmp_path, endpoint)
    assert "views/old-run/index.html" in repo.files
    assert leaderboard_main(["build", str(RUNS / "qwen2vl7b-realbench-2025-11-26"),
                             str(RUNS / "random-baseline-2025-11-25"), "--out", str(board)]) == 0
    done = publish([str(board), "--repo", "mmtasks-org/leaderboard", "--with-site"], tmp_path, endpoint)
    assert done.returncode == 0, done.stderr
    assert "deleting 1 file(s) it published before" in done.stdout
    assert len(repo.commits) == 4
    last = repo.commits[3]
    assert set(last["paths"]) == {"leaderboard.json", "leaderboard.js", ".mmtasks-publish.json"}  # unchanged page files are not re-sent
    assert last["deleted"] == ["views/old-run/index.html"]
    assert repo.files["views/theirs/index.html"].startswith(b"<p>the maintainers'")  # never ours: left alone
    assert repo.files["leaderboard.json"] == (board / "leaderboard.json").read_bytes()
    assert b"random" in repo.files["leaderboard.json"]
    assert repo.files["NOTES.md"] == b"the maintainers' own file"  # not ours: left alone


def _publish_a_view(board: Path, tmp_path: Path, endpoint: str) -> None:
    """Publish ``board`` with a view of a run in ``views/old-run/``, then take the view away."""
    view = board / "views" / "old-run"
    view.mkdir(parents=True)
    (view / "index.html").write_text("<p>a view of a run no longer on the board</p>")
    done = publish([str(board), "--repo", "mmtasks-org/leaderboard", "--with-site"], tmp_path, endpoint)
    assert done.returncode == 0, done.stderr
    shutil.rmtree(board / "views")


def test_dry_run_lists_uploads_and_deletions_and_changes_nothing(board: Path, hub, tmp_path: Path) -> None:
    endpoint, state = hub
    done = publish([str(board), "--repo", "mmtasks-org/leaderboard", "--dry-run"], tmp_path, endpoint)
    assert done.returncode == 0, done.stderr
    assert "upload leaderboard.json" in done.stdout and "index.html" not in done.stdout
    assert "1 file(s)" in done.stdout and "0 to delete" in done.stdout and "dataset mmtasks-org/leaderboard" in done.stdout
    assert all(r.method == "GET" for r in state.requests) and not state.repos
    _publish_a_view(board, tmp_path, endpoint)
    repo = state.repos[("dataset", "mmtasks-org/leaderboard")]
    before = (dict(repo.files), len(repo.commits), len(state.requests))
    done = publish([str(board), "--repo", "mmtasks-org/leaderboard", "--with-site", "--dry-run"], tmp_path, endpoint)
    assert done.returncode == 0, done.stderr
    assert "delete views/old-run/index.html" in done.stdout  # before: uploads only, the deletion hidden
    assert "to upload and 1 to delete" in done.stdout
    assert (dict(repo.files), len(repo.commits)) == before[:2]
    assert all(r.method == "GET" for r in state.requests[before[2]:])


def test_a_publish_changes_only_what_it_published_before(board: Path, hub, tmp_path: Path) -> None:
    """The owner's page and notes in an existing dataset repo; mmtasks never published them."""
    endpoint, state = hub
    server_repo = Repo("dataset", "mmtasks-org/leaderboard")
    server_repo.files.update({"index.html": b"<p>the owner's page</p>", "views/notes.md": b"the owner's notes",
                              "leaderboard.js": b"the owner's script"})
    server_repo.commits.append({"oid": "1" * 40, "summary": "owner", "paths": list(server_repo.files), "deleted": []})
    state.repos[("dataset", "mmtasks-org/leaderboard")] = server_repo
    done = publish([str(board), "--repo", "mmtasks-org/leaderboard"], tmp_path, endpoint)
    assert done.returncode == 0, done.stderr
    assert server_repo.files["index.html"] == b"<p>the owner's page</p>"  # before: deleted
    assert server_repo.files["views/notes.md"] == b"the owner's notes"  # before: deleted
    assert server_repo.files["leaderboard.js"] == b"the owner's script"
    assert server_repo.commits[-1]["deleted"] == []
    assert json.loads(server_repo.files[".mmtasks-publish.json"])["files"] == ["leaderboard.json"]


def test_a_hostile_hubs_commit_url_is_printed_escaped_without_the_token(board: Path, hub, tmp_path: Path) -> None:
    endpoint, state = hub
    state.commit_url = f"{endpoint}/datasets/mmtasks-org/leaderboard/commit/{TOKEN}\x1b]0;owned\x07\x1b[2J"
    done = publish([str(board), "--repo", "mmtasks-org/leaderboard"], tmp_path, endpoint)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout  # before: raw, token and escapes included
    assert TOKEN not in done.stdout and "\\x1b]0;owned" in done.stdout


def test_a_space_gets_the_page_and_a_static_readme(board: Path, hub, tmp_path: Path) -> None:
    endpoint, state = hub
    refused = publish([str(board), "--repo", "mmtasks-org/board", "--repo-type", "space"], tmp_path, endpoint)
    assert refused.returncode == 2 and "--with-site" in refused.stderr
    done = publish([str(board), "--repo", "mmtasks-org/board", "--repo-type", "space", "--with-site"], tmp_path, endpoint)
    assert done.returncode == 0, done.stderr
    space = state.repos[("space", "mmtasks-org/board")]
    assert space.sdk == "static"
    assert b"sdk: static" in space.files["README.md"] and "index.html" in space.files


@pytest.mark.parametrize(("token", "repo", "cause"), [
    (None, "mmtasks-org/leaderboard", "no Hugging Face token"),
    ("hf_wrongTokenValue000000000000000", "mmtasks-org/leaderboard", "refused the token (401"),
    (OTHER_TOKEN, "mmtasks-org/leaderboard", "no permission to write to it (403"),
    (TOKEN, "ghost/leaderboard", "not found (404"),
])
def test_errors_name_the_repo_and_the_cause(board: Path, hub, tmp_path: Path, token: str | None, repo: str, cause: str) -> None:
    endpoint, _ = hub
    done = publish([str(board), "--repo", repo], tmp_path, endpoint, token=token)
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr  # one line, no traceback
    assert f"dataset {repo}" in lines[0] and cause in lines[0], lines[0]
    if token:
        assert token not in done.stderr + done.stdout


def test_bad_repo_id_and_unbuilt_folder_are_one_line(tmp_path: Path, hub) -> None:
    endpoint, state = hub
    done = publish([str(tmp_path), "--repo", "no-slash"], tmp_path, endpoint)
    assert done.returncode == 2 and "ORG/NAME" in done.stderr
    done = publish([str(tmp_path), "--repo", "mmtasks-org/x"], tmp_path, endpoint)
    assert done.returncode == 2 and "leaderboard build" in done.stderr
    assert state.requests == []


def test_the_token_goes_only_in_the_authorization_header(board: Path, hub, tmp_path: Path) -> None:
    endpoint, state = hub
    done = publish([str(board), "--repo", "mmtasks-org/leaderboard", "--with-site"], tmp_path, endpoint)
    assert done.returncode == 0, done.stderr
    assert state.requests
    for request in state.requests:
        headers = {k.lower(): v for k, v in request.headers.items()}
        assert headers.get("authorization") == f"Bearer {TOKEN}"
        others = {k: v for k, v in headers.items() if k != "authorization"}
        assert TOKEN not in repr(others) and TOKEN not in request.path
        assert TOKEN.encode() not in request.body
    assert TOKEN not in done.stdout + done.stderr  # nor in any log line
    # never into a file: the board, the Hub home and the working folder
    for path in tmp_path.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert TOKEN.encode() not in path.read_bytes(), path
    for repo in state.repos.values():
        for name, data in repo.files.items():
            assert TOKEN.encode() not in data, name
