"""lmms-eval's shared multiple-choice reading, ``extract_mcq_answer``, reimplemented from its rules.

Source: github.com/EvolvingLMMs-Lab/lmms-eval ``lmms_eval/tasks/_task_utils/mcq_extract.py``
(commit 75571cfe), which its MLVU, LVBench, MMStar ... tasks call. The rule, for choice letters
``choices`` (lmms-eval's default A-H; its tasks pass their own):

1. an empty or blank reply reads nothing;
2. the reply, stripped, loses the characters ``, . ! ? ; : ' "`` at its two ends (each kind in
   turn, in that order) and gets a space added at both ends;
3. every letter gives candidates in each format it appears in, each at its **last** occurrence:
   ``(A)`` (rank 6), ``A.`` (5), ``A:`` (4), ``A)`` (3), ``A`` followed by a space (2); after each of
   a list of answer phrases ("the answer is", "i choose", "答案是" ... :data:`PHRASES`, found
   case-folded, at their first occurrence), the letter's first occurrence after it (rank 7);
   the trimmed reply starting with the letter not followed by a letter (10) or ending with it
   not preceded by one (9);
4. no candidate: every letter anywhere (rank 0, last occurrence);
5. the candidate of the highest rank wins, of equal ranks the later position.

Matching is case-sensitive: "b" is no B. A reply read as nothing is ``None`` here (lmms-eval: "").
Each benchmark that uses it compares this with lmms-eval's code run verbatim in its own tests.
"""

from __future__ import annotations

from collections.abc import Sequence

#: lmms-eval's ``_ANSWER_PHRASES``, in its order (the first occurrence of each is searched)
PHRASES = ("the answer is", "answer is", "the correct answer is", "correct answer is", "the best answer is",
           "best answer is", "the correct option is", "correct option is", "the best option is", "best option is",
           "the choice is", "choice is", "the correct choice is", "correct choice is", "i choose", "i select",
           "i pick", "my answer is", "my choice is", "옵션", "정답은", "답은", "답:", "答案是", "答案为", "选", "答えは")
#: lmms-eval's ``_FORMAT_PRIORITY``
RANKS = {"start": 10, "end": 9, "phrase": 7, "parentheses": 6, "period": 5, "colon": 4, "right_paren": 3, "space": 2,
         "fallback": 0}
_FORMATS = (("parentheses", "({})"), ("period", "{}."), ("colon", "{}:"), ("right_paren", "{})"), ("space", "{} "))


def lmms_eval_mcq_letter(response: str, choices: Sequence[str] = "ABCDEFGH") -> str | None:
    """The letter lmms-eval's ``extract_mcq_answer`` reads in ``response``, None where it reads ""."""
    if not response or not response.strip():
        return None
    text = response.strip()
    for char in ",.!?;:'\"":
        text = text.strip(char)
    text = f" {text} "
    found: list[tuple[str, int, str]] = []
    for name, pattern in _FORMATS:
        for c in choices:
            form = pattern.format(c)
            if form in text:
                found.append((c, text.rfind(form), name))
    lower = text.lower()
    for phrase in PHRASES:
        at = lower.find(phrase)
        if at != -1:
            for c in choices:
                pos = text.find(c, at + len(phrase))
                if pos != -1:
                    found.append((c, pos, "phrase"))
    bare = text.strip()
    for c in choices:
        if bare.startswith(c) and (len(bare) == 1 or not bare[1].isalpha()):
            found.append((c, 0, "start"))
    for c in choices:
        if bare.endswith(c) and (len(bare) == 1 or not bare[-2].isalpha()):
            found.append((c, len(text) - 1, "end"))
    if not found:
        found = [(c, text.rfind(c), "fallback") for c in choices if c in text]
    if not found:
        return None
    return max(found, key=lambda f: (RANKS[f[2]], f[1]))[0]


__all__ = ["PHRASES", "RANKS", "lmms_eval_mcq_letter"]
