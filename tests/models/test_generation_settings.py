"""Generation settings that are true (issue 27), bounded (issue 31, item 7) and thinking settings
that reach the model (issue 28).

What results.json records under ``generation`` is what each backend put on the requests it built:
checked here against every body the loopback server received (the model's and the judge's), and
in tests/models/test_hf_backend.py / tests/models/test_vllm_backend.py against the ``hf`` and ``vllm`` backends'
own records of what they passed to ``generate`` / ``SamplingParams``.

The task is issue 27's shape "a system prompt with --gen-kwargs" (tests/shapes/system_prompt: YAML
and data only), scored by hand from replayed replies."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from mmtasks.cli import main
from mmtasks.results.schema import read_results
from tests.chat_server import ChatServer

SHAPE = (Path(__file__).resolve().parents[2] / "tests") / "shapes" / "system_prompt"
SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
TASK = "shape_system_prompt"
INSTRUCTION = "Answer with the letter of the image only."


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().err


def shape_args(*more: str) -> list[str]:
    return ["--tasks", TASK, "--include-path", str(SHAPE), "--data-dir", str(SHAPE / "data"),
            "--no-cache", "--no-progress", *more]


def openai(server: ChatServer, name: str = "test-model") -> list[str]:
    return ["--model", f"openai:{name}", "--model-args", f"base_url={server.base_url},api_key_env=MMTASKS_TEST_KEY"]


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMTASKS_TEST_KEY", "sk-test-not-a-real-key")


def settings_of(body: dict[str, Any]) -> dict[str, Any]:
    """A chat-completions body's generation settings: every field but the model and the messages."""
    return {k: v for k, v in body.items() if k not in ("model", "messages")}


# -- recorded = sent, openai ----------------------------------------------------------------


def test_gen_kwargs_on_a_greedy_task_turn_sampling_on_and_results_record_the_bodies_sent(
        chat_server: ChatServer, capsys: pytest.CaptureFixture[str], tmp_path: Path, api_key: None) -> None:
    """Before: temperature 0.0 and no top_p were sent, results.json said 0.7 and 0.9; top_k and
    chat_template_kwargs were refused as unknown settings."""
    chat_server.reply = lambda body: "A"
    out = tmp_path / "out"
    code, err = run_cli(capsys, *shape_args(*openai(chat_server), "--output-path", str(out), "--gen-kwargs",
                        'temperature=0.7,top_p=0.9,top_k=20,min_p=0.05,repetition_penalty=1.1,seed=7,stop=###,'
                        'chat_template_kwargs={"enable_thinking": false},reasoning_effort=low',
                        "--system-instruction", INSTRUCTION))
    assert code == 0, err
    bodies = chat_server.bodies
    assert len(bodies) == 6
    sent = {json.dumps(settings_of(b), sort_keys=True) for b in bodies}
    assert len(sent) == 1
    expected = {"max_tokens": 8, "temperature": 0.7, "top_p": 0.9, "top_k": 20, "min_p": 0.05,
                "repetition_penalty": 1.1, "seed": 7, "stop": ["###"], "reasoning_effort": "low",
                "chat_template_kwargs": {"enable_thinking": False}}
    assert settings_of(bodies[0]) == expected
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["generation"][TASK] == {"model": expected}
    # the task's own settings as run: sampling on (one line says so)
    assert results["configs"][TASK]["generation"]["do_sample"] is True
    [line] = [line for line in err.splitlines() if "turns sampling on" in line]
    assert "--gen-kwargs temperature=0.7,top_p=0.9,top_k=20,min_p=0.05" in line and TASK in line
    # --system-instruction replaced the task's system prompt, and is recorded like --gen-kwargs
    assert all(b["messages"][0] == {"role": "system", "content": INSTRUCTION} for b in bodies)
    assert results["config"]["system_instruction"] == INSTRUCTION
    config = read_results(out / "results.json").config
    assert not config.official_protocol
    assert [p for p in config.variant() if p.startswith("system instruction ")] == [
        f'system instruction "{INSTRUCTION[:60]}{"..." if len(INSTRUCTION) > 60 else ""}" '
        f'#{hashlib.sha256(INSTRUCTION.encode()).hexdigest()[:8]}']


def test_a_sampling_setting_without_a_temperature_samples_at_1_and_do_sample_false_keeps_greedy(
        chat_server: ChatServer, capsys: pytest.CaptureFixture[str], tmp_path: Path, api_key: None) -> None:
    chat_server.reply = lambda body: "A"
    code, err = run_cli(capsys, *shape_args(*openai(chat_server), "--output-path", str(tmp_path / "a"),
                                            "--gen-kwargs", "top_p=0.5"))
    assert code == 0, err
    assert {(b["temperature"], b["top_p"]) for b in chat_server.bodies} == {(1.0, 0.5)}
    assert "at temperature 1.0 (no temperature given)" in err
    before = len(chat_server.bodies)
    code, err = run_cli(capsys, *shape_args(*openai(chat_server), "--output-path", str(tmp_path / "b"),
                                            "--gen-kwargs", "top_p=0.5,do_sample=false"))
    assert code == 0, err
    assert {json.dumps(settings_of(b)) for b in chat_server.bodies[before:]} == {json.dumps({"max_tokens": 8, "temperature": 0.0})}
    assert "turns sampling on" not in err
    results = json.loads((tmp_path / "b" / "results.json").read_text(encoding="utf-8"))
    assert results["generation"][TASK]["model"] == {"max_tokens": 8, "temperature": 0.0}


def test_chat_template_kwargs_from_the_task_go_over_the_model_args_key_by_key(
        chat_server: ChatServer, capsys: pytest.CaptureFixture[str], tmp_path: Path, api_key: None) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    text = (SHAPE / "system_prompt.yaml").read_text(encoding="utf-8")
    (tasks / "t.yaml").write_text(text.replace(
        "generation: {max_new_tokens: 8, temperature: 0.0, do_sample: false}",
        "generation: {max_new_tokens: 8, temperature: 0.0, chat_template_kwargs: {enable_thinking: false}}"), encoding="utf-8")
    chat_server.reply = lambda body: "B"
    out = tmp_path / "out"
    code, err = run_cli(capsys, "--tasks", TASK, "--include-path", str(tasks), "--data-dir", str(SHAPE / "data"),
                        "--model", "openai:test-model", "--no-cache", "--no-progress", "--output-path", str(out),
                        "--model-args", f'base_url={chat_server.base_url},api_key_env=MMTASKS_TEST_KEY,'
                                        'chat_template_kwargs={"enable_thinking": true, "add_vision_id": true}')
    assert code == 0, err
    wanted = {"enable_thinking": False, "add_vision_id": True}
    assert all(b["chat_template_kwargs"] == wanted for b in chat_server.bodies)
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["generation"][TASK]["model"]["chat_template_kwargs"] == wanted
    # a thinking switch in the model args is not the benchmark's protocol: marked as --gen-kwargs is
    config = read_results(out / "results.json").config
    assert not config.official_protocol
    assert any(p.startswith("chat_template_kwargs ") for p in config.protocol_changes())


def test_the_judges_requests_are_recorded_as_sent(chat_server: ChatServer, capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The judge is another backend instance: its settings (the task's judge.generation) are
    recorded beside the model's, from the bodies it built."""
    chat_server.models = ("test-model", "judge-model")
    chat_server.reply = lambda body: "8 6\nfine." if body["model"] == "judge-model" else "A red car."
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    out = tmp_path / "out"
    code, err = run_cli(capsys, "--tasks", "llava_bench_wild", "--model", "openai:test-model", "--judge",
                        "openai:judge-model", "--data-dir", str(SAMPLE), "--limit", "2", "--output-path", str(out),
                        "--no-cache", "--no-progress", "--gen-kwargs", "max_new_tokens=64,seed=3")
    assert code == 0, err
    by_model: dict[str, set[str]] = {}
    for body in chat_server.bodies:
        by_model.setdefault(body["model"], set()).add(json.dumps(settings_of(body), sort_keys=True))
    assert set(by_model) == {"test-model", "judge-model"} and all(len(v) == 1 for v in by_model.values())
    recorded = json.loads((out / "results.json").read_text(encoding="utf-8"))["generation"]["llava_bench_wild"]
    assert json.dumps(recorded["model"], sort_keys=True) in by_model["test-model"]
    assert json.dumps(recorded["judge"], sort_keys=True) in by_model["judge-model"]
    assert recorded["model"]["max_tokens"] == 64 and recorded["model"]["seed"] == 3
    assert "seed" not in recorded["judge"]  # --gen-kwargs are the model's, not the judge's


# -- the shape: replay to a hand-computed score, random to the end --------------------------

#: replies in document order (golds A B B B A A): s3 reads A (wrong), s5 has no letter (unparsed)
REPLIES = ["A", "(B)", "The answer is A.", "B", "I cannot tell.", "A"]


def test_the_system_prompt_shape_replays_to_its_hand_computed_score(capsys: pytest.CaptureFixture[str],
                                                                    tmp_path: Path) -> None:
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps({"task": TASK, "doc_id": f"s{i}", "responses": [r]}) + "\n"
                                   for i, r in enumerate(REPLIES, 1)), encoding="utf-8")
    out = tmp_path / "out"
    code, err = run_cli(capsys, *shape_args("--model", f"replay:{predictions}", "--output-path", str(out),
                                            "--gen-kwargs", "temperature=0.7,top_p=0.9",
                                            "--system-instruction", INSTRUCTION, "--allow-failures"))
    assert code == 0, err
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["results"][TASK]["acc"] == pytest.approx(100 * 4 / 6)  # s1 s2 s4 s6 right
    assert results["generation"][TASK] == {"model": None}  # replay sends nothing
    samples = [json.loads(line) for line in (out / "samples" / f"{TASK}.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(s["prompt"][0]["role"] == "system" and INSTRUCTION in json.dumps(s["prompt"][0]) for s in samples)


def test_the_system_prompt_shape_runs_with_the_random_model_to_the_end(capsys: pytest.CaptureFixture[str],
                                                                      tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, err = run_cli(capsys, *shape_args("--model", "random", "--judge", "random", "--output-path", str(out),
                                            "--gen-kwargs", "temperature=0.7,top_p=0.9", "--system-instruction", INSTRUCTION))
    assert code == 0, err
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["n-samples"][TASK]["effective"] == 6 and results["results"][TASK]["acc"] is not None
    # without the flags the task's own system prompt is sent
    code, err = run_cli(capsys, *shape_args("--model", "random", "--output-path", str(tmp_path / "plain")))
    assert code == 0, err
    first = json.loads((tmp_path / "plain" / "samples" / f"{TASK}.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert "You look at pictures carefully." in json.dumps(first["prompt"][0])


# -- bounds: refused before any model is built (issue 31, item 7) ----------------------------


@pytest.mark.parametrize("setting, words", [
    ("max_new_tokens=-5", "max_new_tokens=-5: input should be greater than or equal to 1"),
    ("temperature=nan", "temperature=nan: input should be a finite number"),
    ("top_p=inf", "top_p=inf: input should be a finite number"),
    ("top_p=0", "top_p=0: input should be greater than 0"),
    ("temperature=-1", "temperature=-1: input should be greater than or equal to 0"),
    ("top_k=0", "top_k=0: input should be greater than or equal to 1"),
    ("min_p=2", "min_p=2: input should be less than or equal to 1"),
    ("repetition_penalty=0", "repetition_penalty=0: input should be greater than 0"),
    ("seed=-1", "seed=-1: input should be greater than or equal to 0"),
    ("max_new_tokens=1e400", "max_new_tokens=inf"),
])
def test_out_of_range_generation_values_are_one_line_before_any_model(
        setting: str, words: str, chat_server: ChatServer, capsys: pytest.CaptureFixture[str], api_key: None) -> None:
    """Before: max_new_tokens=-5 reached the server as max_tokens: -5, nan and inf were sent and
    recorded as null."""
    code, err = run_cli(capsys, *shape_args(*openai(chat_server), "--gen-kwargs", setting))
    assert code == 2
    errors = [line for line in err.splitlines() if line.startswith("mmtasks: error:")]
    assert len(errors) == 1 and "field '--gen-kwargs'" in errors[0] and words in errors[0], err
    assert "Traceback" not in err and chat_server.log == []  # not even GET /v1/models: no model was built


def test_out_of_range_values_in_a_task_name_the_file_and_setting(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    text = (SHAPE / "system_prompt.yaml").read_text(encoding="utf-8")
    (tasks / "t.yaml").write_text(text.replace("max_new_tokens: 8,", "max_new_tokens: -5,"), encoding="utf-8")
    code, err = run_cli(capsys, "check", "--tasks", TASK, "--include-path", str(tasks), "--data-dir", str(SHAPE / "data"))
    assert code == 2 and "t.yaml" in err and "generation.max_new_tokens" in err, err


# -- a setting a backend cannot take: refused at load, naming the backend --------------------


def test_a_setting_the_backend_cannot_take_is_refused_before_it_loads(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """hf has no reasoning_effort (an API field): refused naming the backend, before the
    checkpoint is looked for (the path does not exist)."""
    code, err = run_cli(capsys, *shape_args("--model", f"hf:{tmp_path / 'no-such-checkpoint'}",
                                            "--gen-kwargs", "reasoning_effort=high"))
    assert code == 2
    assert "the hf backend cannot take reasoning_effort" in err and "field '--gen-kwargs'" in err, err
    assert "could not be found" not in err and "no-such-checkpoint" not in err


# -- thinking settings per preset (issue 28) ---------------------------------------------------


def test_a_presets_generation_settings_reach_the_model_are_recorded_and_marked(
        chat_server: ChatServer, capsys: pytest.CaptureFixture[str], tmp_path: Path, api_key: None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from mmtasks.models import presets

    presets_dir = tmp_path / "presets"
    presets_dir.mkdir()
    (presets_dir / "thinker.yaml").write_text(f"""\
name: thinker
weights: test-model
backend: openai
generation: {{max_new_tokens: 4096, chat_template_kwargs: {{enable_thinking: true}}}}
backends:
  openai:
    args: {{base_url: "{chat_server.base_url}", api_key_env: MMTASKS_TEST_KEY}}
    generation: {{reasoning_effort: high}}
""", encoding="utf-8")
    monkeypatch.setattr(presets, "BUILTIN_PRESETS_DIR", presets_dir)
    chat_server.reply = lambda body: "A"
    out = tmp_path / "out"
    code, err = run_cli(capsys, *shape_args("--model", "thinker", "--output-path", str(out),
                                            "--gen-kwargs", "max_new_tokens=2048"))
    assert code == 0, err
    expected = {"max_tokens": 2048, "temperature": 0.0, "reasoning_effort": "high",
                "chat_template_kwargs": {"enable_thinking": True}}
    assert all(settings_of(b) == expected for b in chat_server.bodies)
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["generation"][TASK]["model"] == expected
    config = read_results(out / "results.json").config
    assert config.model_spec["generation"] == {"max_new_tokens": 4096, "chat_template_kwargs": {"enable_thinking": True},
                                               "reasoning_effort": "high"}
    assert not config.official_protocol
    assert [p.split(" ")[0] for p in config.protocol_changes()] == ["gen-kwargs", "preset"]


def test_a_preset_with_an_out_of_range_generation_setting_is_refused(tmp_path: Path) -> None:
    from mmtasks.errors import ConfigError
    from mmtasks.models.base import parse_model_spec

    (tmp_path / "bad.yaml").write_text("name: bad\nweights: x\ngeneration: {temperature: -1}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="generation.temperature"):
        parse_model_spec("bad", presets_dirs=[tmp_path])


# -- recorded = sent, hf (its own record: the arguments generate was called with) -------------


def test_hf_generates_with_the_recorded_settings_and_renders_the_template_kwargs(
        tiny_llava_dir: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    import shutil

    import transformers

    from mmtasks.models.hf import HFModel

    checkpoint = tmp_path / "tiny-llava"
    shutil.copytree(tiny_llava_dir, checkpoint)
    template = (checkpoint / "chat_template.jinja").read_text(encoding="utf-8")
    (checkpoint / "chat_template.jinja").write_text(
        template + "{% if enable_thinking is defined and not enable_thinking %}{{ '<|nothink|> ' }}{% endif %}", encoding="utf-8")
    calls: list[dict[str, Any]] = []
    prompts: list[str] = []
    records: list[dict[str, Any] | None] = []
    generate = transformers.LlavaForConditionalGeneration.generate

    def spy_generate(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append({k: v for k, v in kwargs.items() if k not in ("input_ids", "attention_mask", "pixel_values", "image_sizes")})
        return generate(self, *args, **kwargs)

    render = HFModel._render
    close = HFModel.close

    def spy_render(self: HFModel, *args: Any, **kwargs: Any) -> str:
        prompts.append(render(self, *args, **kwargs))
        return prompts[-1]

    def spy_close(self: HFModel) -> None:
        records.append(self.last_batch)
        close(self)

    monkeypatch.setattr(transformers.LlavaForConditionalGeneration, "generate", spy_generate)
    monkeypatch.setattr(HFModel, "_render", spy_render)
    monkeypatch.setattr(HFModel, "close", spy_close)
    out = tmp_path / "out"
    code, err = run_cli(capsys, *shape_args("--model", f"hf:{checkpoint}", "--batch-size", "6", "--output-path", str(out),
                                            "--model-args", "device=cpu", "--gen-kwargs",
                                            'temperature=0.7,top_p=0.9,top_k=5,min_p=0.1,repetition_penalty=1.2,seed=11,'
                                            'chat_template_kwargs={"enable_thinking": false}', "--allow-failures"))
    assert code == 0, err
    recorded = json.loads((out / "results.json").read_text(encoding="utf-8"))["generation"][TASK]["model"]
    assert recorded == {"max_new_tokens": 8, "do_sample": True, "temperature": 0.7, "top_p": 0.9, "top_k": 5, "min_p": 0.1,
                        "repetition_penalty": 1.2, "seed": 11, "chat_template_kwargs": {"enable_thinking": False}}
    assert records == [recorded]  # the backend's own record of its last batch
    assert calls == [{k: v for k, v in recorded.items() if k not in ("seed", "chat_template_kwargs")}]
    assert len(prompts) == 6 and all(p.endswith("<|assistant|> <|nothink|> ") for p in prompts)


# -- check: the task file's errors and the data's together (issue 27 frictions) --------------


def test_check_reports_a_yaml_key_error_and_the_data_errors_together(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: the unknown key stopped the task at load, and the missing image of s4 and the
    record without an answer were not reported until the key was fixed."""
    import shutil

    tasks, data = tmp_path / "tasks", tmp_path / "data"
    tasks.mkdir()
    shutil.copytree(SHAPE / "data", data)
    text = (SHAPE / "system_prompt.yaml").read_text(encoding="utf-8")
    (tasks / "t.yaml").write_text(text.replace("target:", "descripton: typo\ntarget:"), encoding="utf-8")
    docs = data / "system_prompt" / "docs.jsonl"
    records = [json.loads(line) for line in docs.read_text(encoding="utf-8").splitlines()]
    records[3]["images"][1] = "images/missing.png"
    del records[4]["answer"]
    docs.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    code, err = run_cli(capsys, "check", "--tasks", TASK, "--include-path", str(tasks), "--data-dir", str(data))
    assert code == 2
    assert "field 'descripton': unknown key (did you mean 'description'?)" in err, err
    assert "missing.png" in err and "document 's4'" in err, err
    assert "document 's5'" in err and "answer" in err, err


def test_the_note_takers_requests_are_recorded_as_sent(chat_server: ChatServer, capsys: pytest.CaptureFixture[str],
                                                      tmp_path: Path, api_key: None) -> None:
    """--strategy notetaking: the note taker (here the model itself, another generation config:
    MMRC's protocol_args.notes.generation) is recorded beside the model."""
    chat_server.reply = lambda body: '{"name": "Ann"}' if "taking notes" in json.dumps(body["messages"]) else "A cat."
    out = tmp_path / "out"
    code, err = run_cli(capsys, "--tasks", "mmrc_cr", *openai(chat_server), "--data-dir", str(SAMPLE), "--limit", "1",
                        "--strategy", "notetaking", "--predict-only", "--output-path", str(out), "--no-cache", "--no-progress",
                        "--allow-failures")
    assert code == 0, err
    recorded = json.loads((out / "results.json").read_text(encoding="utf-8"))["generation"]["mmrc_cr"]
    notes = [b for b in chat_server.bodies if "taking notes" in json.dumps(b["messages"])]
    answers = [b for b in chat_server.bodies if "taking notes" not in json.dumps(b["messages"])]
    assert notes and answers
    assert {json.dumps(settings_of(b), sort_keys=True) for b in notes} == {json.dumps(recorded["notetaker"], sort_keys=True)}
    assert {json.dumps(settings_of(b), sort_keys=True) for b in answers} == {json.dumps(recorded["model"], sort_keys=True)}
    assert recorded["notetaker"] == {"max_tokens": 1024, "temperature": 0.0} and recorded["model"] == {"max_tokens": 256}
