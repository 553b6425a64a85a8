"""The typed description of a task, validated from YAML.

Every key is declared here with a docstring; an unknown key is an error that
names the file and the key. docs/task-keys.md, the reference page of the task
format, is generated from these models (scripts/make_task_keys.py); a test fails
when it is stale.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from mmtasks.config.bounds import MAX_FEWSHOT, MAX_FPS, MAX_VIDEO_FRAMES
from mmtasks.config.yaml_loader import did_you_mean
from mmtasks.core.pixels import MAX_IMAGE_PIXELS
from mmtasks.core.request import GenerationConfig


#: task and group names: they name files (``samples/<task>.jsonl``), so no path separators, no leading dot
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,127}")


def safe_name(name: str, kind: str) -> str:
    if not SAFE_NAME.fullmatch(name):
        raise ValueError(f"{kind} name {name!r} is not a safe name (letters, digits, '_', '-', '.', '+'; "
                         "starting with a letter or digit; at most 128 characters)")
    return name


#: the keys each kind of answer space reads, besides :data:`COMMON_SPACE_KEYS` (see ``AnswerConfig.space``)
SPACE_KEYS: dict[str, tuple[str, ...]] = {
    "text": ("source_text", "refusal", "refusal_rate"),
    "choice": ("choices",),
    "image_index": (),
    "image_subset": (),
    "verdict": ("format", "fields"),
}
#: the kinds of answer space the ``random`` baseline draws from (see ``AnswerConfig.space``)
SPACE_KINDS = tuple(SPACE_KEYS)
#: the keys every kind reads: ``kind``, and ``n_images`` (how many images an image answer is drawn
#: from; default: the document's)
COMMON_SPACE_KEYS = ("kind", "n_images")
#: how a verdict's fields are written (``format`` of a verdict space)
VERDICT_FORMATS = ("python", "json")
#: the named kinds of verdict field (besides ``[low, high]`` and ``{choices: [...]}``)
VERDICT_FIELD_KINDS = ("bool", "image_subset")


def is_template(value: Any) -> bool:
    """Whether a string is a Jinja template (rendered per document) rather than a literal."""
    return isinstance(value, str) and ("{{" in value or "{%" in value)


def space_problem(space: dict[str, Any], *, any_kind: bool = False) -> tuple[str, str] | None:
    """(key, message) of what is wrong with an answer space whose values are known (rendered,
    or literal), or None. Template values are not judged here: they are checked once rendered.
    Every key at every level is checked: an unknown one gets a "did you mean". ``any_kind``: the
    space's kind was a template, so it may hold the keys of any kind (MMMU's choices or text)."""
    kind = space.get("kind", "text")
    literal_kind = isinstance(kind, str) and not is_template(kind)
    if literal_kind and kind not in SPACE_KINDS:
        return "kind", f"unknown answer space kind {kind!r} ({did_you_mean(kind, SPACE_KINDS, 'one of')})"
    every = [*COMMON_SPACE_KEYS, *dict.fromkeys(k for keys in SPACE_KEYS.values() for k in keys)]
    # a templated kind may be any kind, so a key of any kind may be given (MMMU: choices or text)
    allowed = [*COMMON_SPACE_KEYS, *SPACE_KEYS[kind]] if literal_kind and not any_kind else every
    for key in space:
        if key not in allowed:
            if key in every:
                owners = [k for k, keys in SPACE_KEYS.items() if key in keys]
                return str(key), (f"{key!r} does not apply to a {kind!r} space (it is read by kind "
                                  f"{' or '.join(owners)}; a {kind!r} space reads {', '.join(allowed)})")
            return str(key), f"unknown key ({did_you_mean(str(key), allowed)})"
    if "choices" in space and (kind == "choice" or not literal_kind):  # only a choice space reads them
        choices = space["choices"]
        if is_template(choices):
            return None
        if not isinstance(choices, list) or not choices:
            return "choices", (f"expected a non-empty list of choices, got {str(choices)[:80]!r}: write a YAML list "
                               "(choices: [A, B, C]), a JSON list in a string, or a template rendering one")
    if kind == "verdict":
        return _verdict_problem(space)
    return None


def _verdict_problem(space: dict[str, Any]) -> tuple[str, str] | None:
    """What is wrong with a verdict space's ``format`` and ``fields`` (see ``JudgeConfig.space``)."""
    fmt = space.get("format", "python")
    if not is_template(fmt) and fmt not in VERDICT_FORMATS:
        return "format", f"unknown verdict format {fmt!r} ({did_you_mean(str(fmt), VERDICT_FORMATS, 'one of')})"
    fields = space.get("fields", {})
    if is_template(fields):
        return None
    if not isinstance(fields, dict):
        return "fields", f"expected a mapping of verdict field -> [low, high], {{choices: [...]}}, bool or image_subset, got {str(fields)[:80]!r}"
    for name, spec in fields.items():
        where = f"fields.{name}"
        if isinstance(spec, list):
            if len(spec) != 2 or not all(_is_bound(b) for b in spec):
                return where, f"a range is [low, high] (numbers, or the name of an earlier field), got {str(spec)[:80]!r}"
        elif isinstance(spec, dict):
            for key in spec:
                if key != "choices":
                    return f"{where}.{key}", f"unknown key ({did_you_mean(str(key), ['choices'])})"
            choices = spec.get("choices")
            if not is_template(choices) and (not isinstance(choices, list) or not choices):
                return f"{where}.choices", f"expected a non-empty list of choices, got {str(choices)[:80]!r}"
        elif isinstance(spec, str) and not is_template(spec):
            if spec not in VERDICT_FIELD_KINDS:
                return where, (f"unknown verdict field kind {spec!r} ({did_you_mean(spec, VERDICT_FIELD_KINDS, 'one of')}; "
                               "or [low, high], or {choices: [...]})")
        elif not is_template(spec):
            return where, f"expected [low, high], {{choices: [...]}}, bool or image_subset, got {str(spec)[:80]!r}"
    return None


def _is_bound(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _json_choices(space: dict[str, Any]) -> dict[str, Any]:
    """``choices`` given as a JSON string (not a template) becomes its list; anything else that is
    not a list is an error (a string is never read character by character)."""
    import json

    choices = space.get("choices")
    if isinstance(choices, str) and not is_template(choices):
        try:
            value = json.loads(choices)
        except json.JSONDecodeError:
            raise ValueError(f"choices: {choices[:80]!r} is neither a YAML list nor valid JSON: write a YAML list "
                             "(choices: [A, B, C])") from None
        space = {**space, "choices": value}
    if isinstance(space.get("choices"), list):  # YAML's True / 1 are the labels "True" / "1"
        space = {**space, "choices": [str(c) if isinstance(c, (bool, int, float)) else c for c in space["choices"]]}
    problem = space_problem(space)
    if problem is not None:
        # a custom error: its message is the line shown ("space.kidn: unknown key ..."), with no
        # "Value error," before it
        raise PydanticCustomError("answer_space", "{key}: {message}", {"key": problem[0], "message": problem[1]})
    return space


#: an answer space (``answer.space``, ``judge.space``, a protocol's ``*_space``): every key checked at load
AnswerSpace = Annotated[dict[str, Any], AfterValidator(_json_choices)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class LocalSource(_Strict):
    """Local JSON/JSONL data under the data dir."""

    dir: str
    """Folder under the data root (``--data-dir`` / ``$MMTASKS_DATA_DIR``), e.g. ``realbench``."""
    file: str
    """JSONL (one record per line) or JSON (a list, or a dict of id -> record) inside ``dir``."""


class HFSource(_Strict):
    """A Hugging Face dataset loaded through ``datasets``."""

    path: str
    """The dataset's Hub id (``TIGER-Lab/Mantis-Eval``), or a builder (``json``, ``parquet``) with ``data_files``."""
    name: str | None = None
    """The dataset's config (subset) name, for datasets that have several."""
    split: str = "test"
    """The split read (only that split is downloaded where the dataset allows it)."""
    revision: str | None = None
    """Pin a revision: some benchmarks replaced their files after release."""
    data_files: str | list[str] | dict[str, str | list[str]] | None = None
    """For file-based builders (``path: json``/``parquet``): the files to read (for a Hub dataset,
    paths inside its repository, as ``datasets`` reads them). A builder's relative path resolves against the data root (``--data-dir`` / ``$MMTASKS_DATA_DIR``) when the run has one,
    else against the folder of the task's YAML file, and may not climb out of it (``..``); an
    absolute path or a URL is read as given. A file that does not exist is an error naming it."""


#: a path inside a Hub repository (``json/action_sequence.json``, ``videos_chunked_*.zip``): relative,
#: forward slashes, no ``..``, no empty part
_REPO_PATH = re.compile(r"(?!/)(?!.*//)(?!(?:.*/)?\.\.(?:/|$))[^\\\x00]+(?<!/)")


def _repo_path(value: str) -> str:
    if not _REPO_PATH.fullmatch(value):
        raise ValueError(f"{value!r} is not a path inside the repository (relative, '/' between parts, no '..')")
    return value


RepoPath = Annotated[str, AfterValidator(_repo_path)]


class HubRecordFile(_Strict):
    """One record file of a Hub dataset repository (an entry of ``dataset.hub.files``)."""

    path: RepoPath
    """The file in the repository: a JSON list of records (or a dict of id -> record), or JSONL."""
    fields: dict[str, str | int | float | bool | None] = Field(default_factory=dict)
    """Values set on every record of this file (MVBench: the task's name and its videos' folder),
    taking the place of a field of the same name the record holds."""


class HubFilesSource(_Strict):
    """Records read from JSON/JSONL files of a Hugging Face dataset repository, each file downloaded
    alone (``huggingface_hub``, into the Hub cache; offline, a run after the first reads the cache):
    for datasets that keep their records in a JSON file per config rather than in parquet splits
    (MVBench's ``json/<task>.json``)."""

    repo: str = Field(pattern=r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9_][\w.-]*$")
    """The dataset's Hub id (``OpenGVLab/MVBench``)."""
    revision: str | None = None
    """Pin a revision (a commit, branch or tag; default: ``main``)."""
    files: list[HubRecordFile] = Field(min_length=1)
    """The record files, read in the order listed (a document's index counts across them)."""


class VideoArchive(_Strict):
    """Zip archives of the dataset's Hub repository holding its videos (an entry of
    ``dataset.video_archives``)."""

    path: RepoPath
    """The archive's path in the repository, or a pattern of them (``videos_chunked_*.zip``,
    ``video/*.zip``: ``*`` within a folder)."""
    strip: str | None = None
    """A leading folder removed from the members' paths (MVBench's ``data0613.zip`` holds
    ``data0613/star/...``, merged into ``star/...``); members outside it keep their path."""

    @field_validator("strip")
    @classmethod
    def _strip_inside(cls, v: str | None) -> str | None:
        return None if v is None else _repo_path(v)


class VideoFiles(_Strict):
    """The videos as files of the dataset's Hub repository, each downloaded alone when a document of
    the run needs it (``dataset.video_files``)."""

    under: str | None = None
    """The repository's folder holding the videos (``MLVU/video``): a path a record names (a video,
    its subtitles) outside it is refused, nothing downloaded (default: anywhere in the repository)."""

    @field_validator("under")
    @classmethod
    def _under_inside(cls, v: str | None) -> str | None:
        return None if v is None else _repo_path(v)


class VideoConfig(_Strict):
    """A record's videos (``dataset.video``): which field holds them, which frames are sent, at
    what size (see docs/vocabulary.md, "Videos"). Frames are sent as images in place
    (``{{ video(i) }}``), or as a video to a backend that takes one natively."""

    field: str | list[str] = "video"
    """The record field holding the document's video (a file: MP4, WebM, MKV, MOV, AVI, an
    animated GIF; or a folder of frame images, taken in name order), a list of them, or a list of
    fields whose videos are taken in the order listed."""
    path: str | None = None
    """Instead of ``field``: a template giving the video's path under the data folder from the
    record (Video-MME: ``"data/{{ doc.videoID }}.mp4"``)."""
    start_field: str | None = None
    """A record field holding where the part of the video asked about starts, in seconds (MVBench's
    ``start``): frames are chosen within it. A record without it (or null) uses the whole video."""
    end_field: str | None = None
    """A record field holding where that part ends, in seconds (MVBench's ``end``)."""
    num_frames: int | None = Field(default=None, ge=1, le=MAX_VIDEO_FRAMES)
    """Uniform sampling: this many frames over the whole video (see ``sampling``)."""
    fps: float | None = Field(default=None, gt=0, le=MAX_FPS, allow_inf_nan=False)
    """Sampling by time: one frame every 1/fps seconds from the start, at most ``max_frames``."""
    max_frames: int | None = Field(default=None, ge=1, le=MAX_VIDEO_FRAMES)
    """With ``fps``: the cap; more candidate frames than this are thinned to this many, uniformly."""
    sampling: Literal["linspace", "centers", "segment_middles", "interior", "stride"] = "linspace"
    """How ``num_frames`` spreads: ``linspace``: ``numpy.linspace(0, n-1, k, dtype=int)`` exactly, first
    and last frame included, each frame once when n <= k (lmms-eval's ``read_video_pyav``);
    ``centers``: ``int(s/2 + round(s*i))`` with ``s = (n-1)/k``, the middle of each of k segments,
    repeats kept in a clip shorter than k frames (Ask-Anything's MVBench ``get_index``); a folder
    of frames is then numbered from 1 and bounded by its file count (its ``read_frame``);
    ``segment_middles``: ``(round(s*i) + round(s*(i+1))) // 2`` with ``s = (n-1)/k``, each frame once
    (video-slicer's ``get_seq_frames``, the script the Video-MME README links); ``interior``:
    ``int(i * n/(k+1))`` for i = 1..k, the ends left out (VLMEvalKit's Video-MME frames);
    ``stride``: ``m = min(k, int(D))`` frames (at most one a second of the duration D), ``step * i``
    for i = 0..m-1 with ``step = int(int(D * fps) / m)``, from the first frame (LongVideoBench's
    ``load_video``; D is ``duration_field``'s value, else the video's)."""
    duration_field: str | None = None
    """With ``sampling: stride``: a record field holding the video's duration in seconds, which the
    rule uses instead of the file's (LongVideoBench's ``duration``)."""
    max_side: int | None = Field(default=None, ge=1)
    """Resize bound: each frame is scaled down (aspect kept) so its longer side is at most this."""
    max_pixels: int | None = Field(default=None, ge=1, le=MAX_IMAGE_PIXELS)
    """Resize bound: each frame is scaled down (aspect kept) to at most this many pixels."""
    frames_fps: float = Field(default=1.0, gt=0, le=MAX_FPS, allow_inf_nan=False)
    """The frame rate of a folder of frames (its timestamps are k / frames_fps)."""
    subtitles: bool = False
    """Read each video's SubRip subtitles: ``videos[i].subtitles`` lists the cues shown at the
    sampled frames' times (None: the video has no subtitles file)."""
    subtitles_path: str | None = None
    """A template giving the subtitles file under the data folder (Video-MME:
    ``"subtitle/{{ doc.videoID }}.srt"``); default: the ``.srt`` beside the video, same name."""
    subtitle_lines: Literal["per_cue", "per_frame"] = "per_cue"
    """Which cues ``videos[i].subtitles`` lists: ``per_cue``: each cue shown at a sampled frame's
    time (``start <= t <= end``) once, in order; ``per_frame``: one line per sampled frame, the
    first cue with ``start < t < end`` (ms), a blank or missing one giving no line, a cue over two
    frames listed twice (the Video-MME authors' linked script and VLMEvalKit)."""
    subtitles_required: bool = True
    """A video without its subtitles file is a data error (False: ``videos[i].subtitles`` is None)."""

    @model_validator(mode="after")
    def _one_rule(self) -> "VideoConfig":
        if self.path is not None and "field" in self.model_fields_set:
            raise ValueError("give the video's field or its path template, not both")
        if (self.num_frames is None) == (self.fps is None):
            raise ValueError("give exactly one frame rule: num_frames (uniform) or fps (with max_frames)")
        if self.fps is not None and self.max_frames is None:
            raise ValueError("fps needs max_frames, the cap on frames sent (a long video at 1 fps is thousands of frames)")
        if self.num_frames is not None and self.max_frames is not None:
            raise ValueError("max_frames applies to fps sampling; with num_frames, num_frames is the count")
        if self.duration_field is not None and (self.num_frames is None or self.sampling != "stride"):
            raise ValueError("duration_field applies to num_frames with sampling: stride (LongVideoBench's rule)")
        return self

    def rule(self) -> str:
        """The frame rule as one short string (recorded with the results): ``num_frames=8`` or ``fps=1,max_frames=4``."""
        if self.num_frames is not None:
            return f"num_frames={self.num_frames}" + ("" if self.sampling == "linspace" else f",sampling={self.sampling}")
        return f"fps={self.fps:g},max_frames={self.max_frames}"

#: record problems a dataset may hold, and the treatments a task may declare for each
#: (``dataset.record_policy``); every other record problem stays an error of the preflight
RECORD_PROBLEMS: dict[str, tuple[str, ...]] = {
    "missing_field": ("exclude",),
    "image_tag_unmatched": ("keep_as_text",),
    "target_outside_space": ("score_wrong",),
}


class RecordRule(_Strict):
    """One record problem that the dataset itself holds, and how the benchmark's authors treat it
    (an entry of ``dataset.record_policy``). Each record so treated is counted, by ``reason``, in
    results.json's ``problems`` and ``coverage``, the results table and the viewer."""

    problem: Literal["missing_field", "image_tag_unmatched", "target_outside_space"]
    """``missing_field``: the record lacks ``field`` or holds null there; ``image_tag_unmatched``: an
    image tag of ``prompt.image_tags`` names an image the record does not have;
    ``target_outside_space``: the gold answer is outside the record's answer space (a letter beyond
    its options)."""
    field: str | None = None
    """The field of a ``missing_field`` rule (one rule per field)."""
    treat: Literal["exclude", "keep_as_text", "score_wrong"]
    """``exclude``: the record is left out of the evaluation (not sent, not in the denominator),
    for ``missing_field``; ``keep_as_text``: the unmatched tag stays in the prompt as text, for
    ``image_tag_unmatched``; ``score_wrong``: the record is asked and scored 0 on every metric,
    for ``target_outside_space``."""
    reason: str = Field(min_length=1, max_length=80)
    """How the counts name it (``output missing``): ``excluded: output missing = 3``."""
    source: str | None = None
    """Where the authors' treatment comes from (their script), for the reader of the task file."""

    @model_validator(mode="after")
    def _fits(self) -> "RecordRule":
        allowed = RECORD_PROBLEMS[self.problem]
        if self.treat not in allowed:
            raise ValueError(f"a {self.problem} record can be treated as: {', '.join(allowed)} (not {self.treat})")
        if (self.field is not None) != (self.problem == "missing_field"):
            raise ValueError("field names the field of a missing_field rule, and only there")
        return self


class DatasetConfig(_Strict):
    """Where the documents come from and what every record must hold."""

    local: LocalSource | None = None
    """Local data under ``--data-dir`` (read when a data directory is given)."""
    hf: HFSource | None = None
    """A Hugging Face dataset (read when no data directory is given, or there is no ``local``)."""
    hub: HubFilesSource | None = None
    """Records in JSON/JSONL files of a Hub dataset repository (read as ``hf`` is: when no data
    directory is given, or there is no ``local``); not with ``hf``."""
    video_archives: list[VideoArchive] = Field(default_factory=list)
    """The zip archives of the Hub repository (of ``hf`` or ``hub``, same revision) that hold the
    videos, when the records are read from the Hub: each read by range requests (its directory, then
    only the members the run's documents need), extracted into a cache folder (a member escaping it,
    a link, is refused), under which ``video`` paths and subtitles resolve. Local data
    (``--data-dir``) is read as it is, without them."""
    video_files: VideoFiles | None = None
    """The videos are files of the Hub repository (of ``hf`` or ``hub``, same revision) as they lie
    there, when the records are read from the Hub: each ``video`` path (and ``subtitles_path``) is a
    path in the repository, downloaded alone (``huggingface_hub``, into the Hub cache) when a
    document of the run needs it, at the commit the revision names (a rerun asks for the commit
    only). Not with ``video_archives``. Local data (``--data-dir``) is read as it is, without it."""
    id_field: str = "id"
    """The record field used as ``doc_id`` (falls back to the line number when absent)."""
    images_field: str | list[str] | None = "images"
    """The record field listing the document's images in order (None: no images), or a path
    into a list of records: ``turns[].images`` takes each turn's images, in turn order; or a
    list of such fields (``[image_1, image_2, image_3]``): their images in the order listed,
    where an empty or null value (or a field the record lacks) adds no image."""
    image_resolution: Literal["relative", "basename"] = "relative"
    """``relative``: paths relative to the data folder; ``basename``: find each file by
    name under ``images_dir`` (MMDU's records hold the authors' absolute paths)."""
    images_dir: str = "images"
    """The folder, inside the data folder, that ``image_resolution: basename`` searches."""
    required_fields: dict[str, Literal["str", "int", "list", "dict", "any", "str|int", "str|list"]] = Field(default_factory=dict)
    """Fields every record must have, with their JSON type; checked as records are read."""
    records_field: str | None = None
    """A field of each source record holding a list of records (LVBench's ``video_info.meta.jsonl``:
    one line per video, its questions in ``qa``): each item is a document, with the outer record's
    other fields beside its own (an item's field wins over the outer one of the same name); the
    documents are numbered across the file. Applied before ``adapter``."""
    adapter: str | None = None
    """Name of a registered record adapter (e.g. converting a Hub schema to the local one)."""
    get_data: str | None = None
    """How to get the data, shown when it is missing (where to download it); each benchmark says its own."""
    video: VideoConfig | None = None
    """The record's videos and the frame rule (None: the task has no video input)."""
    record_policy: list[RecordRule] = Field(default_factory=list)
    """Record problems that the dataset itself holds and how its authors treat them (exclude the
    record, keep an unmatched image tag as text, score it as wrong), each counted by reason in
    results.json, the table and the viewer. Every problem no rule names stays a preflight error."""

    def record_rule(self, problem: str, field: str | None = None) -> RecordRule | None:
        """The rule for ``problem`` (of ``field``), when the task declares one."""
        return next((r for r in self.record_policy if r.problem == problem and r.field == field), None)

    @model_validator(mode="after")
    def _one_hub_source(self) -> "DatasetConfig":
        if self.hf is not None and self.hub is not None:
            raise ValueError("give hf (parquet splits through datasets) or hub (JSON record files), not both")
        if self.video_archives and self.hf is None and self.hub is None:
            raise ValueError("video_archives are read from the Hub repository of hf or hub: name one")
        if self.video_archives and self.video is None:
            raise ValueError("video_archives hold videos: give dataset.video too")
        if self.video_files is not None:
            if self.hf is None and self.hub is None:
                raise ValueError("video_files are read from the Hub repository of hf or hub: name one")
            if self.video is None:
                raise ValueError("video_files are videos: give dataset.video too")
            if self.video_archives:
                raise ValueError("give video_archives (zip archives) or video_files (files as they lie), not both")
        return self

    @field_validator("record_policy")
    @classmethod
    def _one_rule_each(cls, v: list[RecordRule]) -> list[RecordRule]:
        seen = set()
        for rule in v:
            key = (rule.problem, rule.field)
            if key in seen:
                raise ValueError(f"record_policy: {rule.problem}{f' of {rule.field}' if rule.field else ''} has two rules")
            seen.add(key)
        return v

    @field_validator("images_field")
    @classmethod
    def _image_fields(cls, v: str | list[str] | None) -> str | list[str] | None:
        if isinstance(v, list):
            if not v:
                raise ValueError("images_field: an empty list names no field (use null for no images)")
            if any(not name for name in v):
                raise ValueError("images_field: a field name is empty")
            repeated = sorted({name for name in v if v.count(name) > 1})
            if repeated:
                raise ValueError(f"images_field: {', '.join(repeated)} listed twice")
        return v


class ImageTagsConfig(_Strict):
    """Images named by tags in the text (MMMU's ``<image 1>``, MUIRBench's ``<image>``): each match
    of ``pattern`` in the rendered prompt is replaced, in place, by the image it names."""

    pattern: str
    """A regular expression. With one capture group, the group is the image's number
    (``'<image (\\d+)>'``: ``<image 1>`` is the first image, see ``base``); without one, the k-th
    tag in the prompt is the k-th image (``'<image>'``)."""
    base: int = 1
    """The number the first image has in the tags (1: ``<image 1>`` is the document's first image)."""
    untagged: Literal["first", "drop"] = "first"
    """Images no tag (and no ``image(i)``) places: ``first``, before the text, in order; ``drop``:
    not sent."""

    @field_validator("pattern")
    @classmethod
    def _valid_pattern(cls, v: str) -> str:
        from mmtasks.config.task_regex import compile_task_pattern

        compiled = compile_task_pattern(v)  # nested quantifiers refused; matching bounded in time
        if compiled.groups > 1:
            raise ValueError("the pattern may have at most one capture group (the image's number)")
        if compiled.fullmatch(""):
            raise ValueError("the pattern must not match the empty string")
        return v


class PromptConfig(_Strict):
    """The model's messages for a document (Jinja templates over ``doc``, the record)."""

    system: str | None = None
    """System message template (None: no system message)."""
    user: str = ""
    """User message template. ``{{ image(i) }}`` places the i-th image (0-based) of the document."""
    variables: dict[str, Any] = Field(default_factory=dict)
    """Constants available to the templates (e.g. the official instruction text)."""
    image_tags: ImageTagsConfig | None = None
    """Tags in the rendered text that name images (``{pattern: '<image (\\d+)>'}``); None: none."""
    video_tags: ImageTagsConfig | None = None
    """Tags in the rendered text that name videos (``{pattern: '<video>'}``): each is replaced by
    every sampled frame of the video it names, as ``{{ video(i) }}`` places them (same keys as
    ``image_tags``; ``untagged: first`` puts the videos no tag names before the text)."""
    strip_around_images: bool = False
    """The text is sent as the template writes it (False). True: newlines at the edges of each
    text piece beside an image are removed, and whitespace-only pieces dropped."""
    image_detail: Literal["auto", "low", "high"] | None = None
    """How closely an API model is asked to look at each image the prompt sends: OpenAI's
    ``detail`` of its ``image_url`` parts (BLINK's authors send ``low``). None: not said. The
    ``openai`` backend sends it (its ``image_detail`` model argument, when given, wins); backends
    without the notion send the pixels as they are."""


class MatcherConfig(_Strict):
    """An LLM answer matcher (``answer.matcher``), as the BLINK and MMIU authors and VLMEvalKit use
    one: when no rule of the task's parser reads an option in a reply, an LLM is asked which
    option the reply chose. Off unless the run asks for it (``--matcher SPEC`` or ``--matcher
    default``); its requests go through the same scheduler and response cache as judge calls."""

    prompt: str = ""
    """Matcher prompt template (Jinja), rendered with ``question``, ``options`` (the rendered
    ``options`` template), ``prediction`` (the model's reply) beside ``doc``; it follows the
    ``prompt_file`` text when both are given."""
    prompt_file: str | None = None
    """A file, relative to the task YAML, whose text starts the matcher prompt: read byte-exact,
    never templated (the authors' prompt is copied verbatim)."""
    question: str = "{{ doc.question }}"
    """Template of the ``question`` variable."""
    options: str = ""
    """Template of the ``options`` variable (how the authors list the options in the prompt)."""
    system: str | None = None
    """System message of every matcher call (None: none)."""
    default_model: str | None = None
    """The matcher the authors used (``openai:gpt-3.5-turbo``), for ``--matcher default``."""
    generation: GenerationConfig = Field(default_factory=GenerationConfig)
    """The matcher's generation settings (``--gen-kwargs`` does not change them)."""
    none_label: str = "Z"
    """The label the matcher answers when no option matches (the authors' ``Z``): the reply
    then stays unread (unparsed, or the parser's random guess)."""
    labels: str | None = None
    """Template rendering the labels the matcher may name for a document, as a JSON list
    (``'["A", "B"]'``); None: the options of the task's parser (or its declared ``choice`` space).
    For a task whose own parser reads no options but a scoring variant's does (``variants[].matcher``)."""

    @model_validator(mode="after")
    def _has_prompt(self) -> "MatcherConfig":
        if not self.prompt and not self.prompt_file:
            raise ValueError("a matcher needs a prompt or a prompt_file")
        return self


class AnswerConfig(_Strict):
    """How a reply is read into the answer that is scored."""

    parser: str = "text"
    """Registered parser turning the raw reply into the compared value (None result = unparsed):
    ``text``, ``choice``, ``integer``, ``integer_set`` or a plugin's (see mmtasks/scoring/parsers.py)."""
    parser_args: dict[str, Any] = Field(default_factory=dict)
    """The parser's arguments (e.g. ``choice``: ``{options_field: options}``), validated at load
    against the parser's own schema."""
    retries: int = 0
    """Re-ask up to this many times while the reply cannot be parsed (RealBench: "retry 5")."""
    space: AnswerSpace = Field(default_factory=lambda: {"kind": "text"})
    """What a valid answer looks like, for the ``random`` baseline: ``{kind: choice, choices: [...]}``,
    ``{kind: image_index}``, ``{kind: image_subset}``, ``{kind: text, source_text: ..., refusal: ...,
    refusal_rate: ...}`` (see :data:`SPACE_KEYS`; an unknown key is an error). String values are templates.
    ``choices`` is a YAML list, a string holding a JSON list, or a template rendering one; anything
    else is an error (checked at load, and once rendered for each document by the preflight).
    A list (``space: [True, False]``, ``[yes, no]``) is ``{kind: choice, choices: LIST}``: a text
    space, which the default ``text`` parser reads replies onto (the ``label`` parser: case,
    surrounding punctuation and emphasis ignored; a reply outside it is unparsed), and which
    every target must be in."""

    matcher: MatcherConfig | None = None
    """An optional LLM answer matcher for replies no rule reads (see :class:`MatcherConfig`);
    used only when the run asks for it (``--matcher``)."""
    unparsed: Literal["scored_wrong", "unscored"] = "scored_wrong"
    """A reply the parser reads nothing from (after the re-asks): ``scored_wrong`` gets 0 on every
    metric function, so it stays in the denominator; ``unscored`` gets no score, so it is left out
    of the metrics (the denominator is the answered replies: Video-MME's authors' rule) and counted
    apart as ``unparsed`` in ``coverage``, the table and the viewer; ``<metric>_all`` counts it as 0."""

    @field_validator("space", mode="before")
    @classmethod
    def _space_list(cls, v: Any) -> Any:
        # ``space: [True, False]`` is a text space: ``{kind: choice, choices: [True, False]}``
        return {"kind": "choice", "choices": v} if isinstance(v, list) else v


class MetricConfig(_Strict):
    """One metric of the task's results."""

    name: str
    """Name in results.json (``acc``, ``rouge_l``, ...)."""
    function: str | None = None
    """Registered per-sample metric function (None: the task's aggregator computes the metric
    from the samples, as MMDU's judge scores are), or a Hugging Face ``evaluate`` metric:
    ``evaluate:meteor`` (by name, from the Hub or the local cache) or ``evaluate:./my_metric.py``
    (a metric script inside the task's folder). On ``multi_turn`` it scores every turn against
    that turn's reference."""
    aggregation: Literal["mean", "corpus"] = "mean"
    """``mean``: the function scores each answer, the scores are averaged; ``corpus``: an
    ``evaluate:`` metric computed once over every (answer, reference) pair of the task. A corpus
    metric function (``corpus_bleu``, ``cider_d``) is always ``corpus``."""
    args: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments of an ``evaluate:`` metric's ``compute`` (e.g. ``{word_order: 2}``), or a
    registered function's own arguments, validated at load (``exact_match``: ``{ignore_case: true,
    ignore_punctuation: true, regexes_to_ignore: [...]}``, lm-evaluation-harness's options)."""
    key: str | None = None
    """Which value of an ``evaluate:`` metric's result is the score (default: the value named like
    the metric, else its only number)."""
    report_factor: float = 1.0
    """An ``evaluate:`` metric's score is multiplied by this (100: a 0-1 score reported on 0-100)."""
    higher_is_better: bool | None = True
    """Whether a larger value is better (the leaderboard's ranking and plots read it); null for a
    metric with no direction, whose ideal lies inside its range (POPE's yes ratio: 50%): no value
    of it is marked best, and it cannot be the headline."""
    primary: bool = False
    """The headline metric (the first metric when none is marked)."""


class BreakdownConfig(_Strict):
    """Scores reported per group of documents, as well as over all of them."""

    name: str
    """Breakdown name in results.json (``n_images``, ``category``, ``length``...)."""
    value: str
    """Template giving the grouping value of a document, e.g. ``{{ doc.images | length }}``."""
    bins: dict[str, tuple[float, float]] | None = None
    """Optional numeric bins, label -> [low, high] inclusive."""


class TransformConfig(_Strict):
    """A change made to every document before its dialogue is built."""

    name: str
    """Registered transform (``shuffle_options``, ``combine_images`` or one from a plugin)."""
    seed: int = 1234
    """The seed of a transform that draws (``shuffle_options``: the permutation of each document)."""
    options_field: str = "options"
    """The record field holding the options (``shuffle_options``)."""
    answer_field: str = "answer"
    """The record field holding the answer letter: ``shuffle_options`` permutes the options so
    that the correct letter changes, and this field follows."""


class JudgeConfig(_Strict):
    """An LLM judge as part of the task (its protocol must use one: ``single_turn``,
    ``multi_turn``, ``replay_probe``)."""

    prompt: str = ""
    """Judge prompt template (Jinja, rendered with the protocol's variables, e.g. ``question``,
    ``reference``, ``answer``: the model's answer without its reasoning, and ``reasoning``: the
    reasoning split from it, for a judge that is to see it); it follows the ``prompt_file`` text
    when both are given."""
    prompt_file: str | None = None
    """A file, relative to the task YAML, whose text starts the judge prompt. It is read
    byte-exact and never templated (official judge prompts are copied verbatim)."""
    system: str | None = None
    """System message of every judge call (None: no system message)."""
    images: Literal["all", "none"] = "none"
    """``all``: attach every image of the document to each judge call; ``none``: text only."""
    parser: str
    """Registered judge-verdict parser (reply -> verdict fields; see mmtasks/scoring/verdicts.py)."""
    parser_args: dict[str, Any] = Field(default_factory=dict)
    """The verdict parser's arguments, validated at load against its own schema."""
    metrics: list[str] | None = None
    """Verdict fields that become per-sample metrics of the same name (None: every numeric field)."""
    report_factor: float = 1.0
    """Verdict values are multiplied by this before they are reported (MMDU: 10, turning the
    judge's 0-10 scores into 0-100)."""
    retries: int = 3
    """Re-ask the judge up to this many times while its reply is not a verdict, then count a
    judge failure."""
    default_model: str | None = None
    """The judge model used when the run gives no ``--judge`` (a model spec)."""
    generation: GenerationConfig = Field(default_factory=GenerationConfig)
    """The judge's generation settings (``--gen-kwargs`` does not change them)."""
    space: AnswerSpace = Field(default_factory=lambda: {"kind": "text"})
    """What a valid verdict looks like, for the ``random`` baseline used as a judge (a chance-level
    judge that exercises the whole pipeline offline): ``{kind: verdict, format: python|json,
    fields: {name: [low, high] | {choices: [...]} | bool | image_subset}}``; a bound may name an
    earlier field. String values are templates rendered with the judge prompt's variables. When
    it is not given, the verdict parser's own description is used (``json_object``: its
    ``required`` and ``ranges``; MMDU's and MMRC's give one); ``{kind: verdict}`` without
    ``fields`` takes the parser's fields. The preflight checks that the parser reads these
    verdicts. Every key is checked at load."""

    @model_validator(mode="after")
    def _has_prompt(self) -> "JudgeConfig":
        if not self.prompt and not self.prompt_file:
            raise ValueError("a judge needs a prompt or a prompt_file")
        return self


class FewshotConfig(_Strict):
    """Demonstrations before each question (few-shot): ``k`` solved examples of the same dataset,
    each rendered by the task's own templates (``prompt.user`` for its question and images, the
    ``answer`` template for its answer), shown as earlier chat turns or inline in one message."""

    file: str | None = None
    """The demonstrations' source for local data: a JSONL/JSON file in the dataset's folder
    (``dataset.local.dir``), read like the documents (same id field, images, adapter, checks)."""
    split: str | None = None
    """The demonstrations' source for a Hugging Face dataset: another split of it (``train``)."""
    k: int = Field(ge=0, le=MAX_FEWSHOT)
    """How many demonstrations each question gets (``--num-fewshot`` overrides it; 0: none)."""
    seed: int = 1234
    """Seed of the draw: each question's demonstrations are drawn from the source with a generator
    seeded by this seed and the question's id, so a run is reproducible and independent of order."""
    sampler: Literal["random", "first_n"] = "random"
    """``random``: k drawn without replacement; ``first_n``: the source's first k, in order (as
    lm-evaluation-harness's ``first_n``). A demonstration with the question's own id is never drawn
    when the source is the documents' own file or split."""
    layout: Literal["turns", "inline"] = "turns"
    """``turns``: each demonstration is a user turn (its question and images) and an assistant turn
    (its answer) before the question; ``inline``: all in the question's user message, each
    demonstration's question, ``target_delimiter``, its answer, ``fewshot_delimiter``, then the question."""
    answer: str | None = None
    """Template of a demonstration's answer (variable ``doc``: the demonstration's record); default:
    the task's ``target``, as text."""
    target_delimiter: str = " "
    """``inline``: the text between a demonstration's question and its answer (lm-evaluation-harness's name and default)."""
    fewshot_delimiter: str = "\n\n"
    """``inline``: the text after a demonstration's answer, before what follows (lm-evaluation-harness's name and default)."""

    @model_validator(mode="after")
    def _one_source(self) -> "FewshotConfig":
        if (self.file is None) == (self.split is None):
            raise ValueError("name the demonstrations' source: file (local data) or split (a Hugging Face dataset), one of them")
        return self


class VariantMetric(_Strict):
    """A metric of the task computed by another function in a scoring variant."""

    function: str
    """Registered per-sample metric function (``exact_match``, ``rouge_l``, a plugin's)."""
    args: dict[str, Any] = Field(default_factory=dict)
    """The function's own arguments, validated at load (as ``metrics[].args``)."""


class VariantMatcherPrompt(_Strict):
    """A scoring variant's own prompt for the LLM answer matcher (``variants[].matcher_prompt``):
    a peer that asks the matcher in its own words (VLMEvalKit's per-dataset matching prompts). It
    replaces the task's ``answer.matcher`` prompt for the replies this variant sends; the matcher
    model, its generation settings, ``labels`` and ``none_label`` stay the task's."""

    prompt: str = ""
    """Template (Jinja) rendered with ``question``, ``options`` and ``prediction`` beside ``doc``;
    it follows the ``prompt_file`` text when both are given."""
    prompt_file: str | None = None
    """A file, relative to the task YAML, whose text starts the prompt (read byte-exact)."""
    question: str | None = None
    """Template of the ``question`` variable (None: the task's ``answer.matcher.question``)."""
    options: str | None = None
    """Template of the ``options`` variable (None: the task's ``answer.matcher.options``)."""

    @model_validator(mode="after")
    def _has_prompt(self) -> "VariantMatcherPrompt":
        if not self.prompt and not self.prompt_file:
            raise ValueError("a matcher_prompt needs a prompt or a prompt_file")
        return self


class ScoringVariant(_Strict):
    """A named other way of scoring the task's replies (an entry of ``variants:``): a peer
    harness's or the authors' own script where the task's rule (the headline) differs. The same
    replies are scored again; no request is sent. Each key left out keeps the task's own. results.json
    gives every variant's metrics, breakdowns and coverage under ``variants[task][name]`` (and a
    group's average where every member declares the variant); ``mmtasks compare --variant NAME``
    compares two runs on it (see docs/scoring-variants.md)."""

    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
    """The variant's name in results.json and ``compare --variant`` (``lmms_eval``, ``authors``)."""
    description: str = ""
    """One line: whose rule this is and how it differs from the headline."""
    source: str | None = None
    """Where the rule comes from (repository, file and commit)."""
    parser: str | None = None
    """Another registered parser reading the same replies (None: the task's reading)."""
    parser_args: dict[str, Any] = Field(default_factory=dict)
    """That parser's arguments, validated at load against its schema."""
    metrics: dict[str, VariantMetric] = Field(default_factory=dict)
    """Task metric name -> another function computing it from the variant's reading (a metric a
    function computes, or one the task's judge gives: the peer's rule in place of the verdict)."""
    unparsed: Literal["scored_wrong", "unscored"] | None = None
    """How a reply read as nothing counts (see ``answer.unparsed``); None: as the task's."""
    aggregator: str | None = None
    """Another registered aggregator turning the (re-scored) samples into the task's metrics
    (e.g. a mean of sub-task means instead of a mean over questions); None: the task's."""
    matcher: bool = False
    """True: a reply this variant's parser reads nothing from is shown to the task's LLM answer
    matcher (``answer.matcher``) when the run has one (``--matcher``), through the same scheduler
    and cache, and the option it names is the variant's reading (VLMEvalKit's ``can_infer`` then
    its LLM step); without ``--matcher`` such a reply stays unread. A reply the task's own rule
    also sent to the matcher is asked once."""
    matcher_prompt: VariantMatcherPrompt | None = None
    """With ``matcher: true``, the variant's own matcher prompt in place of the task's (see
    :class:`VariantMatcherPrompt`): its replies are asked apart, once each, never shared with the
    task's own matcher calls. None: the task's ``answer.matcher`` prompt."""
    group_mean: Literal["by_task", "by_size"] = "by_task"
    """How results.json's ``groups[g].variants[name]`` combines the members' figures for this
    variant: ``by_task`` the plain mean of the members' headlines (every member counts the same, as
    the task's own group average); ``by_size`` each member's headline weighted by the documents it
    scored, i.e. the mean over every question of the group (lmms-eval's ``weight_by_size``, a
    single task's overall over all its questions, VLMEvalKit's ``report_acc`` Overall). Every
    member of a group must declare the same."""

    @model_validator(mode="after")
    def _prompt_needs_matcher(self) -> "ScoringVariant":
        if self.matcher_prompt is not None and not self.matcher:
            raise ValueError("matcher_prompt is the prompt of a variant that asks the matcher: set matcher: true too")
        return self


class TaskConfig(_Strict):
    task: str
    """Unique task name (``realbench_ranking_hard``)."""
    group: list[str] = Field(default_factory=list)
    """Groups this task belongs to (``realbench``, ``realbench_ranking``)."""
    group_aggregators: dict[str, str] = Field(default_factory=dict)
    """Group -> a registered group aggregator (``@group_aggregator`` in a plugin file) that scores
    the group from every member task's samples together (MT-Bench's pairwise rule: the two orders
    of a question disagree -> a tie). The group must be one of ``group``, and every member of it
    must name the same aggregator; its figures are results.json's ``groups[group].metrics``."""
    version: int = 1
    """The task's version, recorded in results.json (raise it when a change alters the scores)."""
    description: str = ""
    """One line shown by ``mmtasks tasks`` and the leaderboard."""
    dataset: DatasetConfig
    """Where the documents come from."""
    protocol: str = "single_turn"
    """Registered protocol (``single_turn``, ``multi_turn``, ``replay_probe`` or one from a plugin)."""
    plugins: list[str] = Field(default_factory=list)
    """Python files (relative to the YAML file that lists them, inside the task's folder tree)
    imported when the task loads; their ``@parser``/``@metric``/``@protocol``... registrations are
    visible to this task only. Inherited through ``include``: a task loads its bases' plugins too."""
    prompt: PromptConfig = Field(default_factory=PromptConfig)
    """The model's messages."""
    generation: GenerationConfig = Field(default_factory=GenerationConfig)
    """The model's generation settings (overridden by a preset's ``generation`` and ``--gen-kwargs``)."""
    target: str = "{{ doc.answer }}"
    """Template for the gold answer, or a bare field name prefixed with ``field:`` to keep its JSON type."""
    answer: AnswerConfig = Field(default_factory=AnswerConfig)
    """How replies are read."""
    fewshot: FewshotConfig | None = None
    """Demonstrations before each question (``single_turn``): their source, ``k``, seed and layout."""
    metrics: list[MetricConfig] = Field(default_factory=list)
    """The task's metrics (the first is the headline one unless one is ``primary``)."""
    breakdowns: list[BreakdownConfig] = Field(default_factory=list)
    """Scores per group of documents (``n_images``, ``category`` ...)."""
    transforms: list[TransformConfig] = Field(default_factory=list)
    """Changes made to every document, in order."""
    judge: JudgeConfig | None = None
    """An LLM judge scoring the replies (None: none)."""
    cluster: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_.]*$")
    """What the task's scored units cluster by, for standard errors and paired intervals that
    resample whole clusters: ``dialogue`` (each document is one conversation whose turns or
    questions are its units), or a document field whose value names the cluster (``video_id``:
    Video-MME's questions about one video). results.json records the cluster count under
    ``n-samples``; None: the documents are independent."""
    aggregator: str | None = None
    """Registered aggregator turning samples into the task's results (``per_sample_mean``,
    ``per_turn_mean``, ``mmdu``, ``mmrc``). None: the protocol's own (``per_turn_mean`` for
    ``multi_turn``, else ``per_sample_mean``); results.json records the one used."""
    protocol_args: dict[str, Any] = Field(default_factory=dict)
    """Protocol settings (``history: self|reference``, ``probe: independent|cumulative`` ...), validated
    when the task loads by the protocol's own args model (an unknown key is an error)."""
    variants: list[ScoringVariant] = Field(default_factory=list)
    """Named other ways of scoring the same replies (a peer's parser, denominator or
    aggregation); the task's own rule stays the headline (see :class:`ScoringVariant`)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Free-form: ``notes`` (choices where the paper is silent), ``paper``, ``license``."""

    @field_validator("variants")
    @classmethod
    def _variant_names(cls, v: list[ScoringVariant]) -> list[ScoringVariant]:
        names = [x.name for x in v]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"variants: {', '.join(repeated)} named twice")
        return v

    @field_validator("group", mode="before")
    @classmethod
    def _group_list(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v

    @field_validator("task")
    @classmethod
    def _safe_task(cls, v: str) -> str:
        return safe_name(v, "task")

    @field_validator("group")
    @classmethod
    def _safe_groups(cls, v: list[str]) -> list[str]:
        return [safe_name(g, "group") for g in v]

    @model_validator(mode="after")
    def _aggregated_groups(self) -> "TaskConfig":
        stray = [g for g in self.group_aggregators if g not in self.group]
        if stray:
            raise ValueError(f"group_aggregators names {stray[0]!r}, which is not one of this task's groups "
                             f"(group: {self.group})")
        return self

    @model_validator(mode="after")
    def _headline_has_direction(self) -> "TaskConfig":
        headline = self.primary_metric
        for i, m in enumerate(self.metrics):
            if m.name == headline and m.higher_is_better is None:
                raise ValueError(f"metrics[{i}].higher_is_better: the headline metric {m.name!r} needs a direction "
                                 "(true or false); null is for a metric that ranks nothing")
        return self

    @property
    def primary_metric(self) -> str | None:
        for m in self.metrics:
            if m.primary:
                return m.name
        return self.metrics[0].name if self.metrics else None
