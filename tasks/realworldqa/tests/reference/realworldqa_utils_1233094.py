# lmms-eval's RealWorldQA scoring before #1274 (v0.3 to v0.7): lmms_eval/tasks/realworldqa/utils.py of
# github.com/EvolvingLMMs-Lab/lmms-eval at commit 1233094d (MIT License), its filters applied in the order of
# realworldqa.yaml filter_list "flexible-extract" (NumberWordsToDigitsFilter, then MultiChoiceRegexFilter),
# then realworldqa_process_results. Verbatim below from "def realworldqa_process_results" on, except the
# lines marked ours: the two base classes, reduced to what these filters use (MapFilter.__init__ as in
# lmms_eval/filters/transformation.py; ExtendedRegexFilter's arguments are unused by this apply).
# A test reference only (run by tests, never by mmtasks).
import re


class MapFilter:  # ours
    def __init__(self, mapping_dict: dict = {}, default_value=None) -> None:  # ours
        self.mapping_dict = mapping_dict  # ours
        self.default_value = default_value  # ours


class ExtendedRegexFilter:  # ours
    def __init__(self, *args, **kwargs) -> None:  # ours
        pass  # ours


def realworldqa_process_results(doc, results):
    pred = results[0].lower().strip().rstrip(".")
    gt_ans = doc["answer"].lower().strip()

    print(f"Prediction: {pred}, Ground Truth: {gt_ans}")
    # assert gt_ans in ["a", "b", "c", "d"]
    score = 1.0 if pred == gt_ans else 0.0
    return {
        "exact_match": score,
    }


class NumberWordsToDigitsFilter(MapFilter):
    def __init__(self) -> None:
        mapping_dict = {"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10"}
        super().__init__(mapping_dict, default_value=None)

    def apply(self, resps, docs):
        def filter_set(inst):
            return [self.mapping_dict.get(resp.lower(), resp) for resp in inst]

        return [filter_set(resp) for resp in resps]


class MultiChoiceRegexFilter(ExtendedRegexFilter):
    def __init__(self, *args, **kwargs):
        """
        regex_pattern: The basic regex pattern to use. If fails to match, we will use the customized match procedure
                        - step 1 : We parse the choices between ([A-Z])s then try to find these choices in the response.
                        - step 2 : We parse the choice with regex :[\s]*([A-?]), where ? varies by number of choices.
        group_select: Selects the (group_select)th match from the findall result.
        ignore_case: Ignores the case during step 1 matching
        ignore_punctuation: Remove the punctuation during step 1 matching
        regexes_to_ignore: Remove these regexes during step 1 matching
        """
        super().__init__(*args, **kwargs)

    def apply(self, resps, docs):
        # here, we assume we have a list, in which each element is
        # a list of model responses for some particular input/target pair.
        # so we process each of these (same input/target response sets)
        # independently (and keep them a list.)

        filtered_resps = []

        for r, doc in zip(resps, docs):
            fallback_regexes = []
            choice_to_alpha = {}
            next_alpha = "A"

            without_paren_fallback_regexes = []
            without_paren_to_target = {}

            # Regex to extract multiple choice options from the question
            multiple_choices_regex = re.compile(r"\b([A-Z])\.\s+([^\n]*)")
            matches = multiple_choices_regex.findall(doc["question"])

            # Build regex patterns and mappings for each choice
            for m in matches:
                choice_text = m[1].strip()
                fallback_regexes.append(f"{re.escape(choice_text)}")
                choice_to_alpha[choice_text] = next_alpha

                next_alpha = chr(ord(next_alpha) + 1)

            # Compile regex to match any of the extracted choices
            fallback_regex = re.compile("|".join(fallback_regexes))

            # Process each response
            filtered = []
            for resp in r:
                # Remove any punctuation and extra spaces
                cleaned_resp = re.sub(r"[^\w\s]", "", resp).strip()
                # Try to match cleaned response with the choice text
                match = fallback_regex.search(cleaned_resp)
                if match and match.group() in choice_to_alpha:
                    # Map the matched choice text back to its corresponding letter
                    filtered.append(choice_to_alpha[match.group()])
                else:
                    # If no match, return the cleaned response
                    filtered.append(cleaned_resp)

            filtered_resps.append(filtered[0])

        return filtered_resps


def score(doc, reply):  # ours: the pipeline of realworldqa.yaml on one reply
    filtered = NumberWordsToDigitsFilter().apply([[reply]], [doc])  # ours
    filtered = MultiChoiceRegexFilter(group_select=0, ignore_case=True, ignore_punctuation=True,  # ours
                                      regex_pattern="(\\([A-Z]\\))").apply(filtered, [doc])  # ours
    return realworldqa_process_results(doc, filtered)["exact_match"]  # ours
