"""Answer parsers (the generic ones and RealBench's plugin), metrics and bootstrap stderr,
with hand-computed values."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from mmtasks.errors import ConfigError, DataError
from mmtasks.scoring import metrics as m
from mmtasks.scoring import parsers as p
from mmtasks.scoring.bootstrap import bootstrap_stderr
from mmtasks import registry
from mmtasks.scoring.rouge import segment
from mmtasks.scoring.text_normalize import strip_answer_prefix
from tests.plugins import plugin

DOC = {"id": "t-001"}
rb, RB = plugin("realbench")
ABCD = {"id": "t-001", "options": {"A": [1, 2], "B": [2, 1], "C": [1, 3], "D": [3, 1]}}
CHOICE = p.bind("choice", {"options_field": "options"})


# --- strip_answer_prefix ---------------------------------------------------

@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("The answer is: 豆腐", "豆腐"),
        ("The answer is: 豆腐 ", "豆腐"),            # the prompt's 'The answer is: …… ' form
        ("the answer is 7", "7"),                    # colon optional after "is"
        ("Answer: No relevant content mentioned. ", "No relevant content mentioned"),
        ("Answer：3.", "3"),                          # fullwidth colon, trailing period
        ("答案是：上午九点。", "上午九点"),
        ("答案是:C", "C"),
        ("答案：豆腐", "豆腐"),
        ("'The answer is: 豆腐。'", "豆腐"),          # quotes copied from the prompt
        ('"Answer: "x"."', "x"),
        ("The answer is: \"3\".", "3"),
        ("**Answer:** B", "B"),
        ("**The answer is**: x", "x"),
        ("答案：\n1. 豆腐\n2. 青菜", "1. 豆腐\n2. 青菜"),  # several answer points kept
        ("The answer is: …… ", ""),                  # the placeholder echoed, no answer
        ("The answer is: ......", ""),
        ("", ""),
        ("   \n ", ""),
        ("Answers vary", "Answers vary"),            # "Answer" needs a colon
        ("答案不确定", "答案不确定"),                  # "答案" needs a colon
        ("The answer issue", "The answer issue"),    # word boundary after "is"
        ("“豆腐”和“青菜”", "“豆腐”和“青菜”"),          # inner quotes: outer pair kept
        ("etc...", "etc..."),                        # an ellipsis is not a period
    ],
)
def test_strip_answer_prefix(raw: str, expected: str) -> None:
    assert strip_answer_prefix(raw) == expected


# --- parsers ---------------------------------------------------------------

@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("3", 3),
        ("The answer is: 7.", 7),
        ("Image 3", 3),
        ("图3", 3),
        ("３", 3),                 # fullwidth digit
        ("第三张图片", 3),          # Chinese numeral as an image number
        ("答案是：第十二张", 12),
        ("2, 5", 2),               # the first integer
        ("no idea", None),
        ("", None),
    ],
)
def test_retrieval_single(raw: str, expected: int | None) -> None:
    assert rb.retrieval_single(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1,3", [1, 3]),
        ("3, 1, 3", [1, 3]),                   # sorted, repeats dropped
        ("图1和图3", [1, 3]),
        ("１，３，５", [1, 3, 5]),               # fullwidth digits and commas
        ("Image 2, Image 5", [2, 5]),
        ("图一、图三", [1, 3]),
        ("The answer is: 2-4", [2, 3, 4]),    # a range
        ("2到4，7", [2, 3, 4, 7]),
        ("Answer: 4-2", [2, 4]),              # not an increasing range: two numbers
        ("none of them", None),
        ("", None),
    ],
)
def test_retrieval_multi(raw: str, expected: list[int] | None) -> None:
    assert rb.retrieval_multi(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("C", "C"),
        ("Answer: C", "C"),        # the "A" of "Answer" is not standalone
        ("(B)", "B"),
        ("B.", "B"),
        ("选B", "B"),
        ("B选项", "B"),
        ("答案：C", "C"),
        ("答案是：D。", "D"),
        ("Ｄ", "D"),                # fullwidth letter
        ("I choose option D.", "D"),
        ("The answer is A", "A"),
        ("Apple", None),           # not standalone
        ("ABCD", None),
        ("E", None),
        ("b", "B"),                # a lone lowercase letter counts...
        ("(c)", "C"),
        ("a cat", None),           # ...a lowercase letter in a sentence does not
        ("", None),
    ],
)
def test_choice(raw: str, expected: str | None) -> None:
    assert CHOICE(raw, ABCD) == expected


def test_text_and_unanswerable_parsers() -> None:
    assert p.text_answer("The answer is: 1. 豆腐\n2. 青菜 ", DOC) == "1. 豆腐\n2. 青菜"
    assert p.text_answer("   ", DOC) == ""
    assert rb.unanswerable("Answer: No  relevant\nContent MENTIONED. ") == "no relevant content mentioned"
    assert rb.unanswerable("答案：未提及相关内容。") == "未提及相关内容"


# --- the generic parsers beyond RealBench's shapes ------------------------------

def test_choice_takes_the_letters_of_the_documents_options() -> None:
    six = {"id": "m1", "options": ["a cat", "a dog", "a cow", "a hen", "a pig", "a fox"]}  # a list: A-F
    assert CHOICE("The answer is F.", six) == "F"
    assert CHOICE("(e)", six) == "E"
    assert CHOICE("G", six) is None                          # not an option of this document
    assert CHOICE("F", ABCD) is None                         # ... nor of a four-option one
    assert p.bind("choice", {"letters": ["a", "b"]})("B, surely", {"id": "m5"}) == "B"   # fixed letters, no options read
    two = {"id": "m2", "choices": {"X": "yes", "Y": "no"}}
    assert p.bind("choice", {"options_field": "choices"})("I pick Y", two) == "Y"
    with pytest.raises(DataError) as err:
        CHOICE("A", {"id": "m3"})
    assert err.value.doc_id == "m3" and err.value.field == "options"
    with pytest.raises(DataError, match="read the same"):          # word keys are labels, but not two alike
        CHOICE("A", {"id": "m4", "options": {"Yes": 1, "yes!": 2}})
    with pytest.raises(DataError, match="letter or digit"):
        CHOICE("A", {"id": "m4", "options": {"**": 1}})


def test_integer_and_integer_set() -> None:
    integer, integer_set = p.bind("integer", {}), p.bind("integer_set", {})
    assert integer("Image ３ and 5", DOC) == 3 and integer("none", DOC) is None
    assert integer("第三张", DOC) is None                     # Chinese image numbers are RealBench's
    assert integer_set("The answer is: 5, 1-3, 3", DOC) == [1, 2, 3, 5]
    assert integer_set("nothing", DOC) is None
    assert p.bind("integer_set", {"max_range": 0})("1-3", DOC) == [1, 3]


def test_parser_args_are_checked_when_bound() -> None:
    with pytest.raises(ConfigError) as err:
        p.bind("choice", {"option_field": "x"}, file="t.yaml")
    assert err.value.field == "answer.parser_args.option_field" and "unknown key" in err.value.message
    with pytest.raises(ConfigError) as err:
        p.bind("integer_set", {"max_range": "many"}, file="t.yaml")
    assert err.value.field == "answer.parser_args.max_range"
    with pytest.raises(ConfigError, match="read the same"):
        p.bind("choice", {"letters": ["A", "a"]})
    with pytest.raises(ConfigError, match="non-empty list of labels"):
        p.bind("choice", {"letters": []})
    with pytest.raises(ConfigError, match="takes no arguments"):
        p.bind("text", {"x": 1})
    with pytest.raises(ConfigError, match="did you mean 'choice'"):
        p.bind("choise", {})


def test_registry_names() -> None:
    assert registry.parsers.get("choice").fn is p.choice
    assert registry.parsers.get("integer").fn is p.integer
    assert registry.parsers.get("integer_set").fn is p.integer_set
    assert registry.parsers.get("text").fn is p.text_answer
    assert registry.parsers.get("realbench_retrieval_single", plugins=[RB]).fn is rb.retrieval_single
    assert registry.parsers.get("realbench_retrieval_multi", plugins=[RB]).fn is rb.retrieval_multi
    assert registry.parsers.get("realbench_unanswerable", plugins=[RB]).fn is rb.unanswerable
    with pytest.raises(ConfigError, match="which this task does not load"):
        registry.parsers.get("realbench_unanswerable")
    for name, fn in [("exact_integer", m.exact_integer), ("exact_set", m.exact_set),
                     ("set_f1", m.set_f1), ("choice_acc", m.choice_acc), ("rouge_l_zh", m.rouge_l_zh)]:
        assert registry.metrics.get(name) is fn
    assert registry.metrics.get("realbench_unanswerable_acc", plugins=[RB]) is rb.unanswerable_acc
    with pytest.raises(ConfigError, match="did you mean 'set_f1'"):
        registry.metrics.get("set_f")


# --- exact metrics -----------------------------------------------------------

def test_exact_integer() -> None:
    assert m.exact_integer(3, 3, DOC) == 100.0
    assert m.exact_integer(2, 3, DOC) == 0.0
    assert m.exact_integer(None, 3, DOC) == 0.0
    assert m.exact_integer(3, "3", DOC) == 100.0
    with pytest.raises(DataError, match="t-001"):
        m.exact_integer(3, [3], DOC)
    with pytest.raises(DataError):
        m.exact_integer(1, True, DOC)


def test_exact_set_and_f1() -> None:
    assert m.exact_set([1, 3], [3, 1], DOC) == 100.0
    assert m.exact_set([1], [1, 3], DOC) == 0.0
    assert m.exact_set(None, [1, 3], DOC) == 0.0
    # {1,2,5} vs {1,3,5}: 2 hits, F1 = 2*2 / (3+3) = 2/3
    assert m.set_f1([1, 2, 5], [1, 3, 5], DOC) == pytest.approx(200 / 3)
    # {2} vs {2,4,6,8}: 1 hit, F1 = 2*1 / (1+4) = 0.4
    assert m.set_f1([2], [2, 4, 6, 8], DOC) == pytest.approx(40.0)
    assert m.set_f1([7], [2, 4], DOC) == 0.0
    assert m.set_f1([2, 4], [4, 2], DOC) == 100.0
    assert m.set_f1(None, [2, 4], DOC) == 0.0
    with pytest.raises(DataError, match="answer"):
        m.set_f1([1], [], DOC)


def test_choice_acc() -> None:
    assert m.choice_acc("C", "C", DOC) == 100.0
    assert m.choice_acc("C", "c ", DOC) == 100.0
    assert m.choice_acc("B", "C", DOC) == 0.0
    assert m.choice_acc(None, "C", DOC) == 0.0
    assert m.choice_acc("E", "E", DOC) == 100.0        # any letter, when the record has no options
    with pytest.raises(DataError):
        m.choice_acc("A", "E", ABCD)                    # not one of the record's options
    with pytest.raises(DataError):
        m.choice_acc("A", "AB", ABCD)                   # a word that is none of the record's options
    with pytest.raises(DataError):
        m.choice_acc("A", "**", DOC)                    # no label at all
    assert m.choice_acc("True", "true", DOC) == 100.0   # a word label, compared without case
    assert m.choice_acc("False", True, DOC) == 0.0      # a JSON true is the label True
    assert m.choice_acc("yes", "Yes", {"options": {"yes": "a", "no": "b"}}) == 100.0


def test_unanswerable_acc() -> None:
    gold = "No relevant content mentioned"
    for reply in ["Answer: No relevant content mentioned. ", "no relevant content mentioned",
                  "The images say nothing: NO RELEVANT CONTENT MENTIONED", "答案：未提及相关内容。"]:
        assert rb.unanswerable_acc(rb.unanswerable(reply), gold, DOC) == 100.0, reply
    for reply in ["Answer: 上午九点", "No relevant content", ""]:
        assert rb.unanswerable_acc(rb.unanswerable(reply), gold, DOC) == 0.0, reply
    assert rb.unanswerable_acc(None, gold, DOC) == 0.0


# --- ROUGE-L -------------------------------------------------------------------

def test_jieba_segmentation_assumed_by_the_rouge_cases() -> None:
    assert segment("我爱北京天安门") == "我 爱 北京 天安门"
    assert segment("我爱北京") == "我 爱 北京"
    assert segment("1. 豆腐\n2. 白菜") == "1 .   豆腐 \n 2 .   白菜"


def test_rouge_l_hand_computed() -> None:
    # hyp 我/爱/北京 (3 tokens), ref 我/爱/北京/天安门 (4 tokens): LCS = 我 爱 北京 = 3,
    # P = 3/3, R = 3/4, F = 2PR/(P+R) = 1.5/1.75 = 6/7
    assert m.rouge_l_zh("我爱北京", "我爱北京天安门", DOC) == pytest.approx(600 / 7, abs=1e-4)
    # hyp red/green/blue, ref red/blue/green/yellow: LCS = "red green" (or "red blue") = 2,
    # P = 2/3, R = 2/4, F = (2 * 1/3) / (7/6) = 4/7
    assert m.rouge_l_zh("red green blue", "red blue green yellow", DOC) == pytest.approx(400 / 7, abs=1e-4)
    # two answer lines, tokens 1 . 豆腐 2 . 青菜 vs 1 . 豆腐 2 . 白菜:
    # LCS = 1 . 豆腐 2 . = 5 of 6 on both sides, F = 5/6
    assert m.rouge_l_zh("1. 豆腐\n2. 青菜", "1. 豆腐\n2. 白菜", DOC) == pytest.approx(500 / 6, abs=1e-4)
    # rouge-chinese gives 0.999999995 for identical texts and compares case-sensitively
    assert m.rouge_l_zh("上午九点", "上午九点", DOC) == pytest.approx(100.0, abs=1e-5)
    assert m.rouge_l_zh("ABC", "abc", DOC) == 0.0


def test_rouge_l_after_parsing() -> None:
    # The parser drops the prefix and the final period; the gold loses its period too.
    parsed = p.text_answer("答案：上午九点到晚上九点。", DOC)
    assert parsed == "上午九点到晚上九点"
    assert m.rouge_l_zh(parsed, "上午九点到晚上九点。", DOC) == pytest.approx(100.0, abs=1e-5)
    multi_line = p.text_answer("The answer is: \n1. 豆腐\n2. 青菜\n", DOC)
    assert m.rouge_l_zh(multi_line, "1. 豆腐\n2. 青菜", DOC) == pytest.approx(100.0, abs=1e-5)


def test_rouge_l_empty_and_bad_inputs() -> None:
    assert m.rouge_l_zh("", "上午九点", DOC) == 0.0
    assert m.rouge_l_zh("  \n", "上午九点", DOC) == 0.0
    assert m.rouge_l_zh(p.text_answer("The answer is: …… ", DOC), "上午九点", DOC) == 0.0
    assert m.rouge_l_zh(None, "上午九点", DOC) == 0.0
    with pytest.raises(DataError, match="non-empty"):
        m.rouge_l_zh("x", "  ", DOC)
    with pytest.raises(DataError, match="string"):
        m.rouge_l_zh("x", [1], DOC)
    # several references (issue 27): the best F1 over them
    assert m.rouge_l_zh("上午九点", ["晚上", "上午九点。"], DOC) == pytest.approx(100.0, abs=1e-5)


def test_jieba_initialises_quietly() -> None:
    code = "from mmtasks.scoring.rouge import rouge_l_f1; print(round(rouge_l_f1('我爱北京', '我爱北京'), 3))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "1.0"
    assert done.stderr == ""


# --- bootstrap -------------------------------------------------------------------

def test_bootstrap_constant_and_tiny_samples() -> None:
    assert bootstrap_stderr([100.0] * 50) == 0.0
    assert bootstrap_stderr([42.0]) == 0.0
    assert bootstrap_stderr([]) == 0.0


def test_bootstrap_matches_analytic_stderr() -> None:
    values = [0.0, 100.0] * 200  # n = 400, population std 50 -> std/sqrt(n) = 2.5
    se = bootstrap_stderr(values, n_boot=2000, seed=0)
    assert se == pytest.approx(50 / math.sqrt(400), rel=0.1)
    rng = np.random.default_rng(7)
    sample = rng.normal(10.0, 3.0, size=3000)  # several chunks of resamples
    assert bootstrap_stderr(sample) == pytest.approx(sample.std() / math.sqrt(3000), rel=0.1)


def test_bootstrap_is_deterministic() -> None:
    values = [0.0, 100.0, 100.0, 0.0, 100.0, 37.5]
    assert bootstrap_stderr(values, seed=3) == bootstrap_stderr(values, seed=3)
    assert bootstrap_stderr(values, seed=3) != bootstrap_stderr(values, seed=4)


def test_bootstrap_rejects_non_finite() -> None:
    with pytest.raises(ValueError, match="finite"):
        bootstrap_stderr([1.0, float("nan")])


def test_rouge_l_matches_rouge_chinese_on_random_texts() -> None:
    """rouge_l_f1 (rouge-chinese asked for ROUGE-L only) gives the full ``Rouge().get_scores``
    ROUGE-L F1 exactly (same floats), on texts with Chinese, Latin, digits, sentence ends, line
    breaks and odd whitespace."""
    import random

    from rouge_chinese import Rouge

    from mmtasks.scoring.rouge import rouge_l_f1, segment

    rng = random.Random(7)
    pieces = ["我", "爱", "北京", "天安门", "上午", "九点", "。", "！", "？", "?", "……", "......", "”", "，", " ", "  ",
              "\n", "\t", "DAY", "1", "价格", "¥", "38", "元", "the", "answer", "is", ":", "A", "a"]
    reference_rouge = Rouge()
    compared = 0
    for _ in range(400):
        hyp = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 25)))
        ref = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 25)))
        if not hyp.strip() or not ref.strip():
            continue
        try:
            expected = reference_rouge.get_scores(segment(hyp), segment(ref))[0]["rouge-l"]["f"]
        except ValueError:
            continue
        assert rouge_l_f1(hyp, ref) == expected, (hyp, ref)
        compared += 1
    assert compared > 300
