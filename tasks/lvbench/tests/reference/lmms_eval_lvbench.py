# lmms-eval's LVBench prompt, verbatim: lvbench_doc_to_text of lmms_eval/tasks/lvbench/utils.py,
# github.com/EvolvingLMMs-Lab/lmms-eval at commit 75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3 (the
# folder last changed in 4be7ee0e), with the post_prompt of its lvbench.yaml. MIT License,
# Copyright (c) 2025 LMMs-Lab (the repository's LICENSE). A test reference only. Ours: this header
# and LMMS_EVAL_SPECIFIC_KWARGS, the yaml's lmms_eval_specific_kwargs.default as the test passes it.

LMMS_EVAL_SPECIFIC_KWARGS = {"pre_prompt": "", "post_prompt": "\nAnswer the question with the option letter"}


def lvbench_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    if lmms_eval_specific_kwargs is None:
        lmms_eval_specific_kwargs = {}
    if "pre_prompt" not in lmms_eval_specific_kwargs:
        lmms_eval_specific_kwargs["pre_prompt"] = ""
    if "post_prompt" not in lmms_eval_specific_kwargs:
        lmms_eval_specific_kwargs["post_prompt"] = "\nAnswer the question with the option letter."

    question = doc["question"]
    options = doc.get("options", [])
    if options:
        option_letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
        option_text = "\n".join(f"({option_letters[i]}) {opt}" for i, opt in enumerate(options))
        question = question + "\n" + option_text

    return lmms_eval_specific_kwargs["pre_prompt"] + question + lmms_eval_specific_kwargs["post_prompt"]

