"""A task declares how closely an API model looks at its images (``prompt.image_detail``): BLINK
sends every image with ``"detail": "low"``, as its authors' ``eval/query_model.py`` does; the
``openai`` backend sends it, its ``image_detail`` model argument wins when given, and a task that
declares none sends none. Checked on the wire of the loopback chat server."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmtasks.api import evaluate
from tests.chat_server import ChatServer

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


def image_details(server: ChatServer) -> list[str | None]:
    return [part["image_url"].get("detail") for body in server.bodies for message in body["messages"]
            if isinstance(message["content"], list) for part in message["content"] if part["type"] == "image_url"]


@pytest.mark.parametrize(("tasks", "model_args", "expected"), [
    ("blink_counting,blink_jigsaw", {}, "low"),                  # the task's: as the authors send it
    ("blink_counting", {"image_detail": "high"}, "high"),       # the model argument, when given, wins
    ("muirbench", {}, None),                                     # a task that declares none sends none
])
def test_the_openai_backend_sends_the_tasks_image_detail(tmp_path: Path, tasks: str, model_args: dict,
                                                         expected: str | None) -> None:
    with ChatServer(reply=lambda body: "(A)") as server:
        evaluate(tasks, "openai:test-model", data_dir=SAMPLE, model_args={"base_url": server.base_url, **model_args},
                 use_cache=False, cache_dir=tmp_path / "cache")
        details = image_details(server)
    assert details and set(details) == {expected}


def test_the_detail_is_part_of_the_request_the_cache_keys(tmp_path: Path) -> None:
    """A reply cached for an image sent without a detail is not served for the same image sent
    with one (the model saw a different request)."""
    from mmtasks.core.conversation import Image, Message, Text
    from mmtasks.core.request import Request

    image = Image(path=next((SAMPLE / "blink" / "images").rglob("*.jpg")))
    plain = Request(messages=(Message("user", (Text("q"), image)),))
    low = Request(messages=(Message("user", (Text("q"), Image(path=image.path, detail="low"))),))
    assert plain.content_key() != low.content_key()
    assert plain.content_key() == Request(messages=(Message("user", (Text("q"), Image(path=image.path))),)).content_key()
