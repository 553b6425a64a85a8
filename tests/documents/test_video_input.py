"""Videos as inputs: an MP4 and an animated GIF whose every frame is a distinct solid colour, so a
frame sent is known by its content. The frame rules send exactly the frames they name, in order,
with their timestamps, as images to the openai backend and as one video (``video_url``) to a
native-video server; the preflight reports every bad video; each video is decoded once per run."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

av = pytest.importorskip("av")
import numpy as np  # noqa: E402
from PIL import Image as PILImage  # noqa: E402

import mmtasks  # noqa: E402
from mmtasks.config.task_config import VideoConfig  # noqa: E402
from mmtasks.documents.video import VideoInfo, parse_srt, probe, sample_indices, windowed  # noqa: E402
from mmtasks.core.request import Reply, Request  # noqa: E402
from mmtasks.errors import MmtasksError  # noqa: E402
from mmtasks.models.base import ChatModel, ModelContext, ModelSpec, backend_names, register_model  # noqa: E402
from tests.chat_server import ChatServer  # noqa: E402

#: frame k of every test video is COLOURS[k]; the MP4 runs at 2 fps (10 frames, 5 s)
COLOURS = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), (255, 0, 255),
           (0, 255, 255), (128, 128, 128), (255, 128, 0), (0, 128, 255), (128, 0, 255)]


def write_mp4(path: Path, fps: int = 2, size: int = 64) -> Path:
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width = stream.height = size
        stream.pix_fmt = "yuv420p"
        stream.options = {"g": "4"}  # a key frame every 4 frames: the decoder seeks between them
        for colour in COLOURS:
            frame = av.VideoFrame.from_ndarray(np.full((size, size, 3), colour, np.uint8), format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def write_gif(path: Path, frame_ms: int = 500) -> Path:
    frames = [PILImage.new("RGB", (32, 32), c) for c in COLOURS]
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=frame_ms, loop=0)
    return path


def colour_index(img: PILImage.Image) -> int:
    """Which frame an image shows: the nearest of COLOURS to its centre pixel."""
    px = img.convert("RGB").getpixel((img.width // 2, img.height // 2))
    return min(range(len(COLOURS)), key=lambda k: sum((a - b) ** 2 for a, b in zip(px, COLOURS[k])))


TASK = """
task: {name}
dataset:
  local: {{dir: vids, file: vids.jsonl}}
  images_field: null
  video: {video}
prompt:
  user: "{user}"
{prompt_extra}target: "{{{{ doc.answer }}}}"
metrics:
  - {{name: em, function: exact_match, primary: true}}
"""

TIMESTAMPED = "{% for t in videos[0].timestamps %}Frame at {{ t }} s: {{ frame(0, loop.index0) }}\\n{% endfor %}Which colour?"


def make_task(root: Path, name: str, video: str, user: str = TIMESTAMPED, records: list[dict] | None = None,
              prompt_extra: str = "") -> Path:
    tasks = root / "tasks"
    tasks.mkdir(exist_ok=True)
    (tasks / f"{name}.yaml").write_text(TASK.format(name=name, video=video, user=user, prompt_extra=prompt_extra), encoding="utf-8")
    data = root / "data" / "vids"
    data.mkdir(parents=True, exist_ok=True)
    if not (data / "clip.mp4").exists():
        write_mp4(data / "clip.mp4")
        write_gif(data / "clip.gif")
    records = records if records is not None else [{"id": "mp4", "video": "clip.mp4", "answer": "x"},
                                                   {"id": "gif", "video": "clip.gif", "answer": "x"}]
    (data / "vids.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return tasks


def decode_url(url: str) -> PILImage.Image:
    return PILImage.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))


def run(tmp_path: Path, server: ChatServer, name: str, **model_args: object) -> list[dict]:
    tasks = tmp_path / "tasks"
    mmtasks.evaluate(tasks=name, model="openai:test-model", include_path=str(tasks), data_dir=tmp_path / "data",
                     output_path=tmp_path / f"run-{name}-{len(list(tmp_path.glob('run-*')))}", use_cache=False,
                     model_args={"base_url": server.base_url, "max_retries": 0, **model_args})
    return [json.loads(b) if isinstance(b, str) else b for b in server.bodies]


def sent(body: dict) -> list[tuple[str, object]]:
    """The user message's parts: ("text", text) and ("frame", colour index)."""
    out: list[tuple[str, object]] = []
    for part in body["messages"][-1]["content"]:
        if part["type"] == "text":
            out.append(("text", part["text"]))
        elif part["type"] == "image_url":
            out.append(("frame", colour_index(decode_url(part["image_url"]["url"]))))
        else:
            header, frames = part["video_url"]["url"].split(",", 1)
            out.append(("video", [colour_index(decode_url("x," + f)) for f in frames.split(",")]))
    return out


def test_the_rules_name_their_frames() -> None:
    info = VideoInfo(duration=5.0, frames=10, fps=2.0, width=64, height=64)
    assert sample_indices(info, VideoConfig(num_frames=8)) == [0, 1, 2, 3, 5, 6, 7, 9]  # linspace(0, 9, 8), floored
    # Ask-Anything: s = 9 / 4 = 2.25; int(1.125 + round(2.25 i)) = 1, 3, 5, 8
    assert sample_indices(info, VideoConfig(num_frames=4, sampling="centers")) == [1, 3, 5, 8]
    assert sample_indices(info, VideoConfig(num_frames=2, sampling="centers"), start=1.0, end=3.0) == [3, 5]  # frames 2..6: s = 2
    # 1 fps: 0, 1, 2, 3, 4 s -> frames 0, 2, 4, 6, 8; capped at 4: positions 0, 1, 2, 4 of those
    assert sample_indices(info, VideoConfig(fps=1, max_frames=4)) == [0, 2, 4, 8]
    assert sample_indices(info, VideoConfig(fps=1, max_frames=8)) == [0, 2, 4, 6, 8]
    assert sample_indices(info, VideoConfig(num_frames=20)) == list(range(10))  # fewer frames than asked: each once
    # stride (LongVideoBench's load_video): min(3, int(5.0)) = 3 frames, int(int(10.0) / 3) = 3 apart
    assert sample_indices(info, VideoConfig(num_frames=3, sampling="stride")) == [0, 3, 6]
    # at most one a second: min(8, 5) = 5 frames, 2 apart; a record's 4.2 s: 4 frames, int(8 / 4) = 2
    assert sample_indices(info, VideoConfig(num_frames=8, sampling="stride")) == [0, 2, 4, 6, 8]
    assert sample_indices(info, VideoConfig(num_frames=8, sampling="stride"), duration=4.2) == [0, 2, 4, 6]
    # a record's 9 s of a 5 s file: 9 frames int(18 / 9) = 2 apart, past the last frame clamped to it
    assert sample_indices(info, VideoConfig(num_frames=16, sampling="stride"), duration=9.0) == [0, 2, 4, 6, 8, 9, 9, 9, 9]
    with pytest.raises(ValueError, match="duration_field applies to num_frames with sampling: stride"):
        VideoConfig(num_frames=8, duration_field="duration")
    with pytest.raises(ValueError, match="exactly one frame rule"):
        VideoConfig(num_frames=8, fps=1)
    with pytest.raises(ValueError, match="fps needs max_frames"):
        VideoConfig(fps=1)


def test_the_header_gives_duration_and_frames(tmp_path: Path) -> None:
    mp4, gif = write_mp4(tmp_path / "a.mp4"), write_gif(tmp_path / "a.gif")
    assert (probe(mp4).frames, probe(mp4).fps, probe(mp4).duration) == (10, 2.0, 5.0)
    assert (probe(gif).frames, probe(gif).duration) == (10, 5.0)


@pytest.mark.parametrize("video, frames, times", [
    ("{field: video, num_frames: 8}", [0, 1, 2, 3, 5, 6, 7, 9], [0.0, 0.5, 1.0, 1.5, 2.5, 3.0, 3.5, 4.5]),
    ("{field: video, fps: 1, max_frames: 4}", [0, 2, 4, 8], [0.0, 1.0, 2.0, 4.0]),
])
def test_frames_sent_as_images_in_place_with_timestamps(tmp_path: Path, video: str, frames: list[int], times: list[float]) -> None:
    make_task(tmp_path, "vid", video)
    with ChatServer() as server:
        bodies = run(tmp_path, server, "vid")
    assert len(bodies) == 2  # the MP4 and the GIF
    for body in bodies:
        expected: list[tuple[str, object]] = []
        for k, t in zip(frames, times):
            expected += [("text", ("" if not expected else "\n") + f"Frame at {t} s: "), ("frame", k)]
        expected.append(("text", "\nWhich colour?"))
        assert sent(body) == expected


def test_a_native_video_server_gets_the_same_frames_as_one_video(tmp_path: Path) -> None:
    make_task(tmp_path, "vidnative", "{field: video, fps: 1, max_frames: 4, max_side: 16}",
              user="{{ video(0) }}Frames at {{ videos[0].timestamps | join(', ') }} s. Which colour?")
    with ChatServer() as server:
        bodies = run(tmp_path, server, "vidnative", video="video_url")
    for body in bodies:
        assert sent(body) == [("video", [0, 2, 4, 8]), ("text", "Frames at 0.0, 1.0, 2.0, 4.0 s. Which colour?")]
        # vLLM's per-request media_io_kwargs: every frame kept, and the true times of the frames sent
        assert body["media_io_kwargs"] == {"video": {"num_frames": -1, "fps": 2.0, "frames_indices": [0, 2, 4, 8],
                                                     "total_num_frames": 10, "duration": 5.0}}
        frames = body["messages"][-1]["content"][0]["video_url"]["url"].split(",", 1)[1].split(",")
        assert {decode_url("x," + f).size for f in frames} == {(16, 16)}  # the declared bound
    # the same task without the native setting: the same frames, as images in place
    with ChatServer() as server:
        bodies = run(tmp_path, server, "vidnative")
    assert sent(bodies[0])[:4] == [("frame", 0), ("frame", 2), ("frame", 4), ("frame", 8)]


def test_each_video_is_decoded_once_per_run(tmp_path: Path) -> None:
    """Several questions about one video (Video-MME asks three): the video is decoded once."""
    from mmtasks.documents.video import FrameStore
    from mmtasks.task import Task

    tasks = make_task(tmp_path, "vidonce", "{field: video, num_frames: 4}", user="{{ video(0) }}Q{{ doc.id }}",
                      records=[{"id": f"q{k}", "video": "clip.mp4" if k < 3 else "clip.gif", "answer": "x"} for k in range(5)])
    from mmtasks.config.task_registry import TaskRegistry

    config, file = TaskRegistry.discover([tasks]).load("vidonce")
    task = Task(config, file)
    store = FrameStore()
    docs = list(task.documents(tmp_path / "data", frames=store))
    seen = [[colour_index(p.load()) for p in task.state(d).messages[-1].parts if hasattr(p, "frame") and p.frame] for d in docs]
    assert seen == [[0, 3, 6, 9]] * 5
    assert store.decoded == 2  # two videos, five documents
    assert store.frames_decoded == 8


def test_preflight_reports_every_bad_video(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_task(tmp_path, "vidbad", "{field: video, num_frames: 4}", user="{{ video(0) }}",
              records=[{"id": "ok", "video": "clip.mp4", "answer": "x"}, {"id": "gone", "video": "missing.mp4", "answer": "x"},
                       {"id": "junk", "video": "junk.mp4", "answer": "x"}, {"id": "escape", "video": "../../x.mp4", "answer": "x"}])
    (tmp_path / "data" / "vids" / "junk.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 64)
    from mmtasks.cli import main

    code = main(["check", "--tasks", "vidbad", "--include-path", str(tmp_path / "tasks"), "--data-dir", str(tmp_path / "data")])
    assert code == 2
    err = capsys.readouterr().err
    assert "document 'gone', field 'video': video not found" in err
    assert "document 'junk', field 'video': not a readable video" in err
    assert "document 'escape'" in err and "document 'ok'" not in err

def test_subtitles_windowed_to_the_sampled_frames() -> None:
    cues = parse_srt("1\n00:00:00,000 --> 00:00:00,900\nHello there\n\n2\n00:00:01,200 --> 00:00:02,100\nsecond\n line\n\n"
                     "3\n00:00:03,000 --> 00:00:04,000\nthird\n")
    assert [(c.start, c.end, c.text) for c in cues] == [(0.0, 0.9, "Hello there"), (1.2, 2.1, "second line"), (3.0, 4.0, "third")]
    assert windowed(cues, [0.0, 2.0, 2.1, 4.5]) == ["Hello there", "second line"]


def test_a_video_in_a_task_without_pyav_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    make_task(tmp_path, "vidnoav", "{field: video, num_frames: 2}", user="{{ video(0) }}")
    monkeypatch.setitem(sys.modules, "av", None)
    with pytest.raises(MmtasksError, match=r"mmtasks\[video\]") as raised:
        mmtasks.evaluate(tasks="vidnoav", model="random", include_path=str(tmp_path / "tasks"), data_dir=tmp_path / "data",
                         output_path=tmp_path / "run", use_cache=False)
    # one line for the task, at load (not one per video)
    assert "vidnoav.yaml" in str(raised.value) and "dataset.video" in str(raised.value)
    assert str(raised.value).count("PyAV") == 1


def test_num_frames_and_fps_flags_override_the_task_and_are_recorded(tmp_path: Path) -> None:
    from mmtasks.cli import main
    from mmtasks.results.schema import read_results

    make_task(tmp_path, "vidflags", "{field: video, num_frames: 8}", user="{{ video(0) }}Q")
    with ChatServer() as server:
        args = ["--tasks", "vidflags", "--model", "openai:test-model", "--model-args", f"base_url={server.base_url},max_retries=0",
                "--include-path", str(tmp_path / "tasks"), "--data-dir", str(tmp_path / "data"), "--no-cache", "--no-progress"]
        assert main([*args, "--output-path", str(tmp_path / "a"), "--fps", "1", "--max-frames", "4"]) == 0
        assert [k for kind, k in sent(server.bodies[0]) if kind == "frame"] == [0, 2, 4, 8]
        assert main([*args, "--output-path", str(tmp_path / "b"), "--num-frames", "2"]) == 0
        assert [k for kind, k in sent(server.bodies[-1]) if kind == "frame"] == [0, 9]
        assert main([*args, "--output-path", str(tmp_path / "c"), "--fps", "1"]) == 2  # no cap: the task samples by count
    config = read_results(tmp_path / "a" / "results.json").config
    assert config.video == {"fps": 1.0, "max_frames": 4}
    assert not config.official_protocol and "frames fps=1,max_frames=4" in config.display_name
    assert read_results(tmp_path / "b" / "results.json").config.video == {"num_frames": 2}
    # the leaderboard marks the run: not the benchmark's official setting
    assert main(["leaderboard", "build", str(tmp_path / "a"), "--out", str(tmp_path / "board"), "--no-paper"]) == 0
    board = json.loads((tmp_path / "board" / "leaderboard.json").read_text())
    rows = [entry for bench in board["benchmarks"] for entry in bench["entries"]]
    assert rows and all(row["official_protocol"] is False and "frames fps=1,max_frames=4" in row["model"] for row in rows)
    # mmtasks check takes the same flags, with the same refusal
    where = ["--tasks", "vidflags", "--include-path", str(tmp_path / "tasks"), "--data-dir", str(tmp_path / "data")]
    assert main(["check", *where, "--fps", "1"]) == 2
    assert main(["check", *where, "--fps", "1", "--max-frames", "3"]) == 0


def test_the_viewer_shows_each_frame_sent(tmp_path: Path) -> None:
    """A frame part in the samples (``video`` and ``timestamp`` beside the image) becomes the
    thumbnail of that frame, decoded from the video; a video gone since the run says so."""
    from mmtasks.view.images import ImageStore
    from mmtasks.view.records import for_page

    video = write_mp4(tmp_path / "v.mp4")
    store = ImageStore(tmp_path / "site", lambda path, data: (path.parent.mkdir(parents=True, exist_ok=True), path.write_bytes(data)))
    parts = [{"type": "image", "image": f"{video}@{t}s", "video": str(video), "timestamp": t} for t in (0.0, 1.5, 4.5)]
    parts.append({"type": "image", "image": "gone.mp4@1s", "video": str(tmp_path / "gone.mp4"), "timestamp": 1.0})
    shown = for_page({"prompt": [{"role": "user", "content": parts}]}, store)["prompt"][0]["content"]
    assert [colour_index(PILImage.open(tmp_path / "site" / s["thumb"])) for s in shown[:3]] == [0, 3, 9]
    assert shown[0]["name"] == "v.mp4@0s" and shown[3]["missing"].startswith("video not found")


def test_a_video_tag_in_the_text_places_the_frames(tmp_path: Path) -> None:
    """``prompt.video_tags``: each ``<video>`` of the record's text is replaced by the frames of the
    video it names (here the k-th tag, the k-th video), as ``{{ video(i) }}`` places them."""
    from mmtasks.config.task_registry import TaskRegistry
    from mmtasks.task import Task

    tasks = make_task(tmp_path, "vidtag", "{field: [first, second], num_frames: 2}", user="{{ doc.question }}",
                      records=[{"id": "t", "first": "clip.mp4", "second": "clip.gif", "answer": "x",
                                "question": "Compare <video> with <video>."}],
                      prompt_extra="  video_tags: {pattern: '<video>'}\n")
    config, file = TaskRegistry.discover([tasks]).load("vidtag")
    task = Task(config, file)
    [doc] = list(task.documents(tmp_path / "data"))
    parts = task.state(doc).messages[-1].parts
    shown = [("text", p.text) if not hasattr(p, "frame") else (p.frame.clip.path.suffix, colour_index(p.load())) for p in parts]
    assert shown == [("text", "Compare "), (".mp4", 0), (".mp4", 9), ("text", " with "), (".gif", 0), (".gif", 9), ("text", ".")]


def test_tasks_of_one_run_share_the_decoded_videos(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two tasks asking about the same two videos (Video-MME with and without subtitles): each
    video is decoded once in the run, counted at the decoder."""
    from mmtasks.documents import video as video_module

    calls: list[str] = []
    original = video_module.decode_frames
    monkeypatch.setattr(video_module, "decode_frames", lambda path, *a, **k: (calls.append(path.name), original(path, *a, **k))[1])
    records = [{"id": f"q{k}", "video": "clip.mp4" if k % 2 else "clip.gif", "answer": "x"} for k in range(6)]
    make_task(tmp_path, "vidrun_a", "{field: video, num_frames: 3}", user="{{ video(0) }}A", records=records)
    make_task(tmp_path, "vidrun_b", "{field: video, num_frames: 3}", user="{{ video(0) }}B", records=records)
    with ChatServer() as server:
        mmtasks.evaluate(tasks="vidrun_a,vidrun_b", model="openai:test-model", include_path=str(tmp_path / "tasks"),
                         data_dir=tmp_path / "data", output_path=tmp_path / "run", use_cache=False,
                         model_args={"base_url": server.base_url, "max_retries": 0})
        assert len(server.bodies) == 12
    assert sorted(calls) == ["clip.gif", "clip.mp4"]


@pytest.mark.parametrize("codec, suffix", [("libx264", ".mp4"), ("libvpx-vp9", ".webm"), ("libvpx-vp9", ".mkv"), ("mpeg4", ".avi")])
def test_the_decoder_finds_each_frame_across_key_frames(tmp_path: Path, codec: str, suffix: str) -> None:
    """30 frames at 5 fps, a key frame every 5, frame k a grey of level 8k: the frames the rules
    name are decoded, seeking between key frames, in every container."""
    from mmtasks.documents.video import decode_frames

    path = tmp_path / f"long{suffix}"
    with av.open(str(path), "w") as container:
        stream = container.add_stream(codec, rate=5)
        stream.width = stream.height = 32
        stream.pix_fmt = "yuv420p"
        stream.bit_rate = 4_000_000  # near lossless: the grey levels survive
        stream.options = {"g": "5"}
        for k in range(30):
            for packet in stream.encode(av.VideoFrame.from_ndarray(np.full((32, 32, 3), 8 * k, np.uint8), format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    info = probe(path)
    assert (info.frames, info.fps) == (30, 5.0)
    for rule, expected in ((VideoConfig(num_frames=5), [0, 7, 14, 21, 29]),
                           (VideoConfig(fps=2, max_frames=20), [0, 2, 5, 7, 10, 12, 15, 17, 20, 22, 25, 27]),
                           (VideoConfig(num_frames=3, sampling="centers"), [4, 14, 23])):
        indices = sample_indices(info, rule)
        assert indices == expected
        levels = [round(f.getpixel((16, 16))[0] / 8) for f in decode_frames(path, indices, info)]
        assert levels == expected, rule


def test_a_gif_whose_frames_last_unequal_times(tmp_path: Path) -> None:
    """An animated GIF's frames may each last their own time (delays 0.2, 0.8, 0.5, 0.5 s): the
    timestamps are when each frame starts (its packets, no frame decoded), and fps sampling takes
    the frame showing at each time."""
    from mmtasks.documents.video import decode_frames

    path = tmp_path / "vfr.gif"
    pictures = [PILImage.new("RGB", (16, 16), c) for c in COLOURS[:4]]
    pictures[0].save(path, save_all=True, append_images=pictures[1:], duration=[200, 800, 500, 500], loop=0)
    info = probe(path)
    assert (info.frames, info.duration, info.times) == (4, 2.0, (0.0, 0.2, 1.0, 1.5))
    # 2 fps: 0, 0.5, 1.0, 1.5 s show frames 0, 1, 2, 3 (0.5 s is inside the second frame's 0.8 s)
    rule = VideoConfig(fps=2, max_frames=8)
    assert sample_indices(info, rule) == [0, 1, 2, 3]
    # 4 fps: 0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75 s -> frames 0, 1, 1, 1, 2, 2, 3, 3
    assert sample_indices(info, VideoConfig(fps=4, max_frames=8)) == [0, 1, 2, 3]
    assert sample_indices(info, VideoConfig(fps=1, max_frames=8)) == [0, 2]  # 0 s and 1 s
    assert [colour_index(f) for f in decode_frames(path, [0, 2], info)] == [0, 2]
    from mmtasks.documents.video import Bound, FrameStore, VideoClip

    clip = VideoClip(path=path, info=info, indices=(0, 1, 2, 3), bound=Bound(), store=FrameStore())
    assert clip.timestamps == (0.0, 0.2, 1.0, 1.5)


class ContextProbe(ChatModel):
    """A backend that keeps the run settings it was built with and answers "x"."""

    contexts: list[ModelContext] = []

    def __init__(self, spec: ModelSpec, context: ModelContext | None = None) -> None:
        super().__init__(spec, context)
        ContextProbe.contexts.append(self.context)

    def generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Reply]]:
        for i, _ in enumerate(requests):
            yield i, Reply(text="x")


def test_a_backend_is_told_the_most_videos_and_frames_a_request_carries(tmp_path: Path) -> None:
    """vLLM sizes limit_mm_per_prompt from these: each sampled frame counts as an image (a model
    that takes no video gets them so), and the videos are counted for one that does."""
    make_task(tmp_path, "vidcount", "{field: video, fps: 1, max_frames: 4, max_side: 16}")
    if "contextprobe" not in backend_names():  # (this module may be imported twice: tests/models/test_vllm_video.py imports it)
        register_model("contextprobe", ContextProbe)
    ContextProbe.contexts.clear()
    mmtasks.evaluate(tasks="vidcount", model="contextprobe:probe", include_path=str(tmp_path / "tasks"),
                     data_dir=tmp_path / "data", output_path=tmp_path / "run", use_cache=False)
    (context,) = ContextProbe.contexts
    assert (context.max_images_per_request, context.max_videos_per_request) == (4, 1)
