"""MATH-Vision (MATH-V) scoring: the authors' answer extraction and answer check.

Loaded as a plugin file by the MathVision tasks (``plugins:``). Reimplemented from the authors' code,
github.com/mathllm/MATH-V at commit ``a1f5cc3`` (MIT): ``evaluation/evaluate.py`` ``evaluate`` and
``evaluation/utils.py`` (``find_math_answer``, ``_strip_string`` and its helpers, ``eval_tuple``,
``is_equal``); ``tests/test_mathvision_reference.py`` runs their functions verbatim on the same replies.

- ``mathvision_answer`` (parser): ``evaluate``'s reading of ``response``: a final option letter (" C.",
  " (C).", "C\\n" ...), the number after the last "is ", the text after "the answer is" and its kin (up
  to the line's end or ". "), the last ``\\boxed{...}``, then ``find_math_answer`` (the boxed content
  or the whole text, after "=", LaTeX spacing, units, ``\\left``/``\\right``, degrees, dollars and
  percent signs dropped, ``\\frac``/``\\sqrt`` braced, ``a/b`` as ``\\frac{a}{b}``) and the option
  brackets "(a)" dropped. Every reply is read (possibly as "").
- ``mathvision_acc`` (metric): ``is_equal(answer, reading) or is_equal(option text, reading)``: equal
  text (lower case, stripped), equal tuples once each element is evaluated, or equal values (rounded
  to 2 decimals) of both sides read by ``latex2sympy2``. Their ``eval`` of sympy's text is done here
  by a small evaluator of arithmetic and ``math`` names (ours: the same value on every expression
  sympy prints; nothing else is run).
- ``mathvision_prefetch_vlmevalkit`` / ``mathvision_acc_vlmevalkit_prefetch``: VLMEvalKit's
  ``post_check(prefetch=True)`` (``vlmeval/dataset/utils/mathv.py`` at ``e8e78f0``): the option letter
  ``can_infer`` reads, or the whole reply for a free-form question when it equals the answer by their
  ``is_equal``; what it scores without its GPT extraction.

The LaTeX parser is ``latex2sympy2_extended``, the ``math`` extra of mmtasks (``pip install
'mmtasks[math]'``); the authors' ``utils.py`` imports ``latex2sympy2`` (see :func:`_latex2sympy`).
"""

from __future__ import annotations

import ast
import functools
import math
import operator
import re
from collections.abc import Callable, Mapping
from typing import Any

from mmtasks.errors import ConfigError
from mmtasks.plugin import metric, parser
from mmtasks.scoring.vlmevalkit_matching import infer_option, infer_text

LETTERS = "ABCDE"


@functools.cache
def _latex2sympy() -> Callable[[str], Any]:
    """The LaTeX parser: ``latex2sympy2_extended`` (the ``math`` extra) with its basic LaTeX clean-up
    only (the authors' code normalises first) and without reading "2\\frac{1}{2}" as a mixed number. Ours:
    the authors import ``latex2sympy2`` (1.9.1), whose wheel also installs top-level ``tests`` and
    ``gen`` packages that shadow a project's own; the extended fork is the one VLMEvalKit prefers."""
    try:
        from latex2sympy2_extended import latex2sympy
        from latex2sympy2_extended.latex2sympy2 import ConversionConfig
        from latex2sympy2_extended.math_normalization import NormalizationConfig
    except ImportError:
        raise ConfigError("MathVision's answer check (the authors' is_equal) needs latex2sympy2_extended",
                          hint="pip install 'mmtasks[math]'") from None
    config = ConversionConfig(interpret_as_mixed_fractions=False, interpret_simple_eq_as_assignment=False,
                              interpret_contains_as_eq=False, lowercase_symbols=False)

    # its basic LaTeX clean-up only ("$" delimiters, spacing commands: what latex2sympy2's grammar
    # skips), none of its unit, boxed or equation rewriting
    normal = NormalizationConfig(basic_latex=True, units=False, malformed_operators=False, nits=False, boxed="none",
                                 equations=False)

    def parse(text: str) -> Any:
        return latex2sympy(text, normalization_config=normal, conversion_config=config)

    return parse


# --- reading a reply: evaluate.py ------------------------------------------------------------------

def is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def _fix_fracs(string: str) -> str:
    substrs = string.split("\\frac")
    new_str = substrs[0]
    if len(substrs) > 1:
        for substr in substrs[1:]:
            new_str += "\\frac"
            if len(substr) > 0 and substr[0] == "{":
                new_str += substr
            else:
                if len(substr) < 2:
                    return string
                a, b = substr[0], substr[1]
                if b != "{":
                    new_str += "{" + a + "}{" + b + "}" + substr[2:]
                else:
                    new_str += "{" + a + "}" + b + substr[2:]
    return new_str


def _fix_a_slash_b(string: str) -> str:
    if len(string.split("/")) != 2:
        return string
    a, b = string.split("/")
    try:
        a_int, b_int = int(a), int(b)
    except ValueError:
        return string
    if string != f"{a_int}/{b_int}":
        return string
    return "\\frac{" + str(a_int) + "}{" + str(b_int) + "}"


def _fix_sqrt(string: str) -> str:
    if "\\sqrt" not in string:
        return string
    splits = string.split("\\sqrt")
    new_string = splits[0]
    for split in splits[1:]:
        if len(split) > 0 and split[0] != "{":
            new_string += "\\sqrt{" + split[0] + "}" + split[1:]
        else:
            new_string += "\\sqrt" + split
    return new_string


def _strip_string(string: str) -> str:
    string = string.replace("\n", "").replace("\\!", "").replace("\\\\", "\\")
    string = string.replace("tfrac", "frac").replace("dfrac", "frac")
    string = string.replace("\\left", "").replace("\\right", "")
    string = string.replace("^{\\circ}", "").replace("^\\circ", "")
    string = string.replace("\\$", "").replace("$", "")
    string = string.split("\\text{ ")[0]  # _remove_right_units
    string = string.replace("\\%", "").replace("\\%", "")
    string = string.replace(" .", " 0.").replace("{.", "{0.")
    if len(string) == 0:
        return string
    if string[0] == ".":
        string = "0" + string
    if len(string.split("=")) == 2:
        string = string.split("=")[-1]
    if len(string.split("\\approx")) == 2:
        string = string.split("\\approx")[-1]
    if "sqrt" in string:
        string = _fix_sqrt(string)
    string = string.replace(" ", "")
    if "sqrt" in string:
        string = _fix_fracs(string)
    if string == "0.5":
        string = "\\frac{1}{2}"
    return _fix_a_slash_b(string)


_BOXED = re.compile("oxed{(.*)}", flags=re.S)


def find_math_answer(s: str) -> str:
    s = s.lower()
    if "{}" in s:
        s = s.replace("{}", "")
    found = _BOXED.findall(s)
    ans = found[-1] if found else s
    if ans.find("}") != -1 and (ans.find("{") == -1 or ans.find("}") < ans.find("{")):
        ans = ans.split("}")[0]
    ans = ans.split("=")[-1]
    ans = ans.split("\\approx")[-1]
    ans = ans.replace(" ", "").replace("\\,", "").replace("∞", "\\infty")
    ans = ans.replace("+\\infty", "\\infty").replace("\\\\", "\\").replace("\n", "")
    ans = ans.replace("\\text", "").replace("\\mbox", "").replace("bmatrix", "pmatrix")
    ans = ans.replace("\\left", "").replace("\\right", "").replace("^{\\circ}", "")
    ans = ans.replace("^\\circ", "").replace("{m}^3", "").replace("m^3", "")
    ans = ans.replace("{units}", "").replace("units", "").replace("{km}", "").replace("km", "")
    return _strip_string(ans)


_FLAGS = ("the final answer is", "the answer is", "the correct answer is", "the answer should be")


def read_answer(response: str) -> str:
    """``evaluate``'s ``model_answer`` of a response."""
    model_answer = response.strip()
    for c in LETTERS:
        if (model_answer.endswith(f" {c}.") or model_answer.endswith(f" ({c}).") or model_answer.startswith(f"{c}\n")
                or model_answer.startswith(f"({c})\n") or model_answer.startswith(f"({c}) {c}\n")):
            model_answer = c
    if is_number(model_answer.split("is ")[-1].rstrip(".")):
        model_answer = model_answer.split("is ")[-1].rstrip(".")
    if "oxed{" not in model_answer:
        for flag in _FLAGS:
            for spelled in (flag, flag.replace("the", "The")):
                raw = model_answer
                model_answer = model_answer.split(spelled)[-1].strip()
                if spelled in raw:
                    model_answer = model_answer.split("\n")[0].split(". ")[0]
    elif model_answer.count("oxed{") > 1:
        model_answer = "\\boxed{" + model_answer.split("oxed{")[-1]
    model_answer = find_math_answer(model_answer)
    for c in "abcde":
        model_answer = model_answer.replace(f"({c})", c)
    for c in "abcde":
        model_answer = model_answer.replace("{" + c + "}", c)
    return model_answer.rstrip(".").lstrip(":").strip()


@parser("mathvision_answer", target="raw")
def mathvision_answer(text: str, record: Mapping[str, Any]) -> str:
    """The authors' reading of a reply (every reply is read, possibly as "")."""
    return read_answer(text)


# --- checking it: utils.py is_equal -----------------------------------------------------------------

_MATH_NAMES: dict[str, Any] = {name: getattr(math, name) for name in dir(math) if not name.startswith("_")}
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.Pow: operator.pow, ast.Mod: operator.mod, ast.FloorDiv: operator.floordiv}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}
#: the largest exponent evaluated (ours: a bound; Python would compute any power, for as long as it takes)
MAX_EXPONENT = 10_000


def eval_math(text: str) -> Any:
    """The value of sympy's text of an expression, as ``eval`` gives it in the authors' module (which
    imports ``*`` from ``math``): numbers, + - * / ** % //, and ``math``'s names and functions. Anything
    else raises (as a name their ``eval`` does not know does)."""
    return _eval(ast.parse(text.strip(), mode="eval").body)


def _eval(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name) and node.id in _MATH_NAMES:
        return _MATH_NAMES[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and isinstance(right, (int, float)) and abs(right) > MAX_EXPONENT:
            raise ValueError("exponent too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.Call) and not node.keywords:
        fn = _eval(node.func)
        if callable(fn):
            return fn(*(_eval(a) for a in node.args))
    raise ValueError(f"not evaluated: {ast.dump(node)[:60]}")


def _sympy_value(text: str) -> Any:
    return eval_math(str(_latex2sympy()(text)))


def eval_tuple(s: str) -> str:
    sl = s[1:-1].split(",")
    try:
        if s[0] == "(" and s[-1] == ")" and len(sl) > 1:
            s = ",".join([str(round(_sympy_value(sub), 2)) if "infty" not in sub and sub not in ["a", "-a"] else sub
                          for sub in sl])
            return f"({s})"
        if s[0] == "[" and s[-1] == "]" and len(sl) > 1:
            s = ",".join([str(round(_sympy_value(sub), 2)) if "infty" not in sub and sub not in ["a", "-a"] else sub
                          for sub in sl])
            return f"[{s}]"
    except ConfigError:
        raise
    except Exception:  # noqa: BLE001 - the authors' bare except: any failure keeps the text
        return s
    return s


def is_equal(asw: str, gt_asw: str) -> bool:
    asw, gt_asw = asw.lower(), gt_asw.lower()
    if asw.replace(" ", "") == "" or gt_asw.replace(" ", "") == "":
        return False
    if gt_asw.strip() == asw.strip():
        return True
    asw, gt_asw = eval_tuple(asw), eval_tuple(gt_asw)
    if gt_asw == asw:
        return True
    try:
        return bool(round(_sympy_value(gt_asw), 2) == round(_sympy_value(asw), 2))
    except ConfigError:
        raise
    except Exception:  # noqa: BLE001 - the authors' bare except: not equal
        return False


def gold_value(record: Mapping[str, Any]) -> str:
    """The text of the gold option ('' for a free-form question), as ``evaluate`` takes it."""
    options = list(record.get("options") or [])
    answer = str(record.get("answer"))
    if options and len(answer) == 1 and 0 <= ord(answer) - ord("A") < len(options):
        return str(options[ord(answer) - ord("A")])
    return ""


@metric("mathvision_acc")
def mathvision_acc(parsed: str | None, target: Any, record: Mapping[str, Any]) -> float:
    """``is_equal(answer, reading) or is_equal(option text, reading)``: 100 or 0."""
    if parsed is None:
        return 0.0
    right = is_equal(str(target), parsed) or is_equal(gold_value(record), parsed)
    return 100.0 if right else 0.0


# --- VLMEvalKit's prefetch (a scoring variant) -------------------------------------------------------

def vlmeval_is_equal(asw: str, gt_asw: str) -> bool:
    """VLMEvalKit's ``is_equal`` (mathv.py): equal text, values within 1e-6 (their ``eval`` of each
    text: ours the arithmetic evaluator, Python's names unknown), or the same of latex2sympy's
    expressions (printed by sympy)."""
    asw, gt_asw = str(asw).lower().strip(), str(gt_asw).lower().strip()
    if gt_asw == asw:
        return True
    try:
        if abs(_python_value(gt_asw) - _python_value(asw)) < 1e-6:
            return True
    except Exception:  # noqa: BLE001 - theirs: any failure goes on
        pass
    latex2sympy = _latex2sympy()
    try:
        a, b = latex2sympy(gt_asw), latex2sympy(asw)
        if abs(_python_value(str(a)) - _python_value(str(b))) < 1e-6:
            return True
        if abs(a - b) < 1e-6:
            return True
    except Exception:  # noqa: BLE001 - theirs: any failure is not equal
        pass
    return False


def _python_value(text: str) -> Any:
    """``eval`` of a text in VLMEvalKit's module, for arithmetic (names other than Python's are unknown there)."""
    node = ast.parse(text, mode="eval").body
    if any(isinstance(n, (ast.Name, ast.Call)) for n in ast.walk(node)):
        raise ValueError("names are not evaluated")
    return _eval(node)


def _options(record: Mapping[str, Any]) -> dict[str, str]:
    return {chr(65 + i): str(v) for i, v in enumerate(record.get("options") or [])}


@parser("mathvision_prefetch_vlmevalkit", target="raw")
def mathvision_prefetch_vlmevalkit(text: str, record: Mapping[str, Any]) -> str | None:
    """VLMEvalKit's ``post_check(line, prefetch=True)``: the letter ``can_infer`` reads (right or wrong),
    or the whole reply when it equals the answer; None where VLMEvalKit asks GPT."""
    options = _options(record)
    if options:
        return infer_option(text, options) or infer_text(text, options)
    return text if text and vlmeval_is_equal(text, str(record.get("answer"))) else None


@metric("mathvision_acc_vlmevalkit_prefetch")
def mathvision_acc_vlmevalkit_prefetch(parsed: str | None, target: Any, record: Mapping[str, Any]) -> float:
    """VLMEvalKit's ``post_check(line, prefetch=False)`` on the prefetched reading."""
    if parsed is None:
        return 0.0
    options = _options(record)
    read = (infer_option(parsed, options) or infer_text(parsed, options)) if options else parsed
    return 100.0 if read is not None and vlmeval_is_equal(read, str(target)) else 0.0
