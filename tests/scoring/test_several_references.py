"""Several references (issue 27): a target can be a list of references; metrics declare whether
they take several (``bleu``, ``chrf``, ``rouge_l_char``, ``rouge_l_zh``; the corpus metrics
``corpus_bleu`` and ``cider_d``) or one (``exact_match``); a list target for a metric that takes
one is a ``check`` error. CIDEr-D is pycocoevalcap's (the COCO reference implementation): its
value is checked on hand-derived cases and against the package on the shape's captions.

The multi-reference captioning shape (tests/shapes/captions_multi_ref) is run with ``replay:`` to
the values computed here, and with ``--model random`` to the end."""

from __future__ import annotations

import json
import math
import shutil
from functools import lru_cache
from pathlib import Path

import pytest

from mmtasks.cli import main
from mmtasks.errors import DataError
from mmtasks.scoring.caption_metrics import cider_d, corpus_bleu, ptb_tokens
from mmtasks.scoring.text_metrics import bleu, rouge_l_char

pytest.importorskip("pycocoevalcap")

SHAPE = (Path(__file__).resolve().parents[2] / "tests") / "shapes" / "captions_multi_ref"
TASK = "captions_multi_ref"


def shape_records() -> tuple[list[dict], dict[str, str]]:
    records = [json.loads(line) for line in (SHAPE / "data" / TASK / "captions.jsonl").read_text().splitlines()]
    answers = {r["doc_id"]: r["responses"][0] for r in map(json.loads, (SHAPE / "model_replies.jsonl").read_text().splitlines())}
    return records, answers


def copy_shape(tmp_path: Path, old: str, new: str) -> Path:
    folder = tmp_path / "shape"
    shutil.copytree(SHAPE, folder)
    yaml_file = folder / f"{TASK}.yaml"
    text = yaml_file.read_text(encoding="utf-8")
    assert old in text
    yaml_file.write_text(text.replace(old, new), encoding="utf-8")
    return folder


def run(folder: Path, out: Path, model: str, *args: str) -> tuple[int, dict]:
    code = main(["--tasks", TASK, "--include-path", str(folder), "--data-dir", str(folder / "data"), "--model", model,
                 "--output-path", str(out), "--no-cache", "--no-progress", *args])
    return code, json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_cider_d_of_a_hand_derived_corpus() -> None:
    # Two images: "a cat" against ["a cat", "a dog"], "a fish" against ["a bird"]. N = 2 images,
    # idf(g) = log(N) - log(max(1, df(g))): "a" (in both images' references) has idf 0; every
    # other n-gram log 2. Image 1: against "a cat" the unigram and bigram cosines are 1, tri- and
    # 4-grams 0 (none), no length penalty (equal lengths): mean [1, 1, 0, 0] = 0.5; against "a dog"
    # 0 (only "a" is shared, weight 0). Summed over references and divided by 2: 0.25, x10 = 2.5.
    # Image 2 shares only "a": 0. CIDEr-D = (2.5 + 0) / 2 = 1.25, reported x100.
    assert cider_d(["a cat", "a fish"], [["a cat", "a dog"], ["a bird"]]) == pytest.approx(125.0)
    # The length penalty: "a cat" against ["a cat sat"]. Unigram cosine: log2^2 / (log2 * sqrt(2) log2)
    # = 1/sqrt(2), bigrams the same, trigrams 0 (the answer has none); the code's length is its count
    # of bigrams (1 against 2): delta -1, penalty exp(-1 / (2 * 6^2)). Image 1: 10 * (sqrt(2)/4)
    # * exp(-1/72); image 2 ("a dog" / ["a bird"]) 0; mean x100.
    expected = 100 * 10 * (math.sqrt(2) / 4) * math.exp(-1 / 72) / 2
    assert cider_d(["a cat", "a dog"], [["a cat sat"], ["a bird"]]) == pytest.approx(expected)
    # tokenization: lowercase, punctuation dropped in answers and references alike
    assert cider_d(["A cat.", "A fish!"], [["A cat.", "a DOG"], "A bird."]) == pytest.approx(125.0)


TRICKY = ["A dog's ball, don't you think?", "Black-and-white photo of 3.5 m tall giraffe.",
          "The cat can't sleep; it's (very) late!", 'Two "quoted" words -- and more...', "e.g. a U.S. flag at 5:30 p.m.",
          "A [boxed] sign: 'stop' here", "Two dogs, three cats & a bird.", "The children's toys aren't here.",
          "A 10-year-old boy with a red-and-blue kite!!"]


def test_ptb_tokens() -> None:
    assert ptb_tokens("A dog's ball, don't you think? Black-and-white... 3.5 m.") == [
        "a", "dog", "'s", "ball", "do", "n't", "you", "think", "black-and-white", "3.5", "m"]
    # what the Java tokenizer gives (checked against it below where Java is installed)
    assert ptb_tokens("The cat can't sleep; it's (very) late!") == ["the", "cat", "ca", "n't", "sleep", "it", "'s", "-lrb-",
                                                                    "very", "-rrb-", "late"]
    assert ptb_tokens("e.g. a U.S. flag at 5:30 p.m.") == ["e.g.", "a", "u.s.", "flag", "at", "5:30", "p.m."]


@pytest.mark.skipif(shutil.which("java") is None, reason="the COCO code's PTB tokenizer runs on Java")
def test_tokens_and_cider_d_equal_the_coco_pipeline_with_its_java_tokenizer() -> None:
    """The whole COCO evaluation (its Stanford PTB tokenizer, then Cider) on the shape's captions
    and on captions with clitics, brackets, quotes and abbreviations gives our tokens and our value."""
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    records, answers = shape_records()
    tokenized = PTBTokenizer().tokenize({i: [{"caption": c}] for i, c in enumerate(TRICKY)})
    assert [" ".join(ptb_tokens(c)) for c in TRICKY] == [tokenized[i][0] for i in range(len(TRICKY))]
    refs = {r["id"]: r["captions"] + ([TRICKY[k]] if k < len(TRICKY) else []) for k, r in enumerate(records)}
    gts = PTBTokenizer().tokenize({d: [{"caption": c} for c in refs[d]] for d in refs})
    res = PTBTokenizer().tokenize({d: [{"caption": answers[d]}] for d in refs})
    reference, _ = Cider().compute_score(gts, res)
    assert cider_d([answers[d] for d in refs], [refs[d] for d in refs]) == pytest.approx(100 * reference)


def test_replayed_captions_score_as_computed_here(tmp_path: Path) -> None:
    from pycocoevalcap.cider.cider import Cider
    import sacrebleu

    code, res = run(SHAPE, tmp_path / "out", f"replay:{SHAPE / 'model_replies.jsonl'}")
    assert code == 0
    result = res["results"][TASK]
    records, answers = shape_records()
    refs = {r["id"]: r["captions"] for r in records}
    # CIDEr-D: the reference implementation on the captions tokenized as the COCO code would
    # (these captions have no clitics: lowercase, drop the periods, split on spaces)
    tok = lambda s: " ".join(s.lower().replace(".", " ").split())  # noqa: E731
    reference, _ = Cider().compute_score({d: [tok(c) for c in refs[d]] for d in refs}, {d: [tok(answers[d])] for d in refs})
    assert result["cider_d"] == pytest.approx(100 * reference)
    # corpus BLEU: sacrebleu's corpus_bleu, the references as streams, missing ones None
    width = max(len(c) for c in refs.values())
    streams = [[refs[d][k] if k < len(refs[d]) else None for d in refs] for k in range(width)]
    assert result["bleu"] == pytest.approx(sacrebleu.corpus_bleu([answers[d] for d in refs], streams).score)
    # ROUGE-L (characters, whitespace removed): the best F1 over the references, mean over captions.
    # d1 and d6 equal a reference: 100; d2 is its first reference without the period: 18 of 19
    # characters, F1 = 2 * 18 / (18 + 19) = 36/37; d3-d5 by an independent LCS below.
    per_doc = {d: max(_rouge(answers[d], c) for c in refs[d]) for d in refs}
    assert per_doc["d1"] == per_doc["d6"] == 100.0 and per_doc["d2"] == pytest.approx(100 * 36 / 37)
    assert result["rouge_l"] == pytest.approx(sum(per_doc.values()) / 6)
    samples = [json.loads(line) for line in (tmp_path / "out" / "samples" / f"{TASK}.jsonl").read_text().splitlines()]
    assert samples[0]["target"] == refs["d1"] and samples[0]["parsed"] == "A small red square."


def _rouge(hyp: str, ref: str) -> float:
    a, b = "".join(hyp.split()), "".join(ref.split())

    @lru_cache(maxsize=None)
    def lcs(i: int, j: int) -> int:
        if i == len(a) or j == len(b):
            return 0
        return lcs(i + 1, j + 1) + 1 if a[i] == b[j] else max(lcs(i + 1, j), lcs(i, j + 1))

    n = lcs(0, 0)
    return 0.0 if n == 0 else 100 * 2 * n / (len(a) + len(b))


def test_the_text_parser_would_drop_the_final_period(tmp_path: Path) -> None:
    """Captions are scored as written (``verbatim``): with ``text``, the final period of the
    answers is dropped while the references keep theirs, and BLEU falls."""
    _, kept = run(SHAPE, tmp_path / "kept", f"replay:{SHAPE / 'model_replies.jsonl'}")
    folder = copy_shape(tmp_path, "answer: {parser: verbatim}", "answer: {parser: text}")
    _, dropped = run(folder, tmp_path / "dropped", f"replay:{SHAPE / 'model_replies.jsonl'}")
    assert dropped["results"][TASK]["bleu"] < kept["results"][TASK]["bleu"]


def test_random_captions_run_to_the_end(tmp_path: Path) -> None:
    code, res = run(SHAPE, tmp_path / "out", "random", "--judge", "random")
    assert code == 0 and res["coverage"][TASK]["scored"] == 6
    assert res["results"][TASK]["cider_d"] is not None and res["results"][TASK]["bleu"] is not None


def test_a_one_reference_metric_given_a_list_is_a_check_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = copy_shape(tmp_path, "function: rouge_l_char}", "function: exact_match}")
    code = main(["check", "--tasks", TASK, "--include-path", str(folder), "--data-dir", str(folder / "data")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "document 'd1', field 'captions'" in err and "metric 'rouge_l' (exact_match) takes one reference" in err
    assert "metrics that take several:" in err and "cider_d" in err


@pytest.mark.parametrize("old, new, field, message", [
    ("function: cider_d,", "function: cider_d, aggregation: mean,", "metrics[0].aggregation", "computed over the whole corpus"),
    ("function: rouge_l_char}", "function: rouge_l_char, aggregation: corpus}", "metrics[2].aggregation",
     "aggregation: corpus needs an evaluate: metric or a corpus metric function"),
])
def test_corpus_metric_settings_are_load_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str,
                                                field: str, message: str) -> None:
    folder = copy_shape(tmp_path, old, new)
    code = main(["check", "--tasks", TASK, "--include-path", str(folder), "--data-dir", str(folder / "data")])
    err = capsys.readouterr().err
    assert code == 2 and f"field '{field}'" in err and message in err, err


def test_sentence_metrics_over_several_references() -> None:
    import sacrebleu

    refs = ["A dog runs on the grass.", "A brown dog running in a park."]
    hyp = "A brown dog runs in a park."
    assert bleu(hyp, refs, {}) == pytest.approx(sacrebleu.sentence_bleu(hyp, refs).score)
    # the best over the references: "Abrowndogrunsinapark." against the second, 20 of 23 + 19 -> ...
    assert rouge_l_char(hyp, refs, {}) == pytest.approx(max(_rouge(hyp, r) for r in refs))
    assert rouge_l_char("abc", ["xyz", "abc"], {}) == 100.0
    with pytest.raises(DataError, match="non-empty string or a non-empty list"):
        bleu(hyp, ["ok", ""], {})
    assert corpus_bleu(["a b c d"], [["a b c d", "x"]]) == pytest.approx(100.0)


def test_a_plugin_declares_references_and_corpus_metrics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = copy_shape(tmp_path, "  - {name: rouge_l, function: rouge_l_char}",
                        "  - {name: rouge_l, function: rouge_l_char}\n  - {name: agreement, function: share_of_exact}\nplugins: [caption_plugin.py]")
    (folder / "caption_plugin.py").write_text(
        "from mmtasks.plugin import corpus_metric, metric, takes_references\n\n"
        "@corpus_metric('share_of_exact')\n"
        "def share_of_exact(answers, targets):\n"
        "    return 100.0 * sum(a in (t if isinstance(t, list) else [t]) for a, t in zip(answers, targets)) / len(answers)\n\n"
        "@metric('first_word')\n@takes_references('one')\n"
        "def first_word(parsed, target, doc):\n    return 100.0 * (parsed.split()[:1] == target.split()[:1])\n", encoding="utf-8")
    code, res = run(folder, tmp_path / "out", f"replay:{SHAPE / 'model_replies.jsonl'}")
    assert code == 0
    assert res["results"][TASK]["agreement"] == pytest.approx(100 * 2 / 6)  # d1 and d6 equal one of their references
    text = (folder / f"{TASK}.yaml").read_text()
    (folder / f"{TASK}.yaml").write_text(text.replace("function: share_of_exact}", "function: first_word}"))
    assert main(["check", "--tasks", TASK, "--include-path", str(folder), "--data-dir", str(folder / "data")]) == 2
    assert "metric 'agreement' (first_word) takes one reference" in capsys.readouterr().err
