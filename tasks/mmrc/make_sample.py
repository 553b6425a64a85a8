"""Synthetic MMRC conversations in the local format of shared/specs/mmrc.md.

Six conversations of 4, 5, 7, 8, 10 and 11 turns (length buckets [4,6),
[6,9) and [9,12) twice each). In each, the user shares facts and pictures,
updates some facts later, and the questions probe all six abilities (IE, CR,
IU, IM, MR, AR) in open, multiple-choice and true/false form. A question's
``images`` are 1-based over all images of the conversation in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sample_data.common import save_cards, write_jsonl
from sample_data.drawing import BACKGROUNDS, Card, info_card


@dataclass(frozen=True)
class Turn:
    user: str
    assistant: str
    images: list[Card] = field(default_factory=list)


@dataclass(frozen=True)
class Conversation:
    id: str
    category: str
    turns: list[Turn]
    questions: list[dict]


def _card(lines: list[str], shape: str | None = None, color: str | None = None, background: int = 0) -> Card:
    return info_card(lines, shape=shape, color=color, background=BACKGROUNDS[background])


def _ie(question: str, answer: str, items: list[str], fmt: str = "open") -> dict:
    return {"ability": "IE", "format": fmt, "question": question, "answer": answer, "items": items}


def _im(question: str, answer: str, images: list[int]) -> dict:
    return {"ability": "IM", "format": "open", "question": question, "answer": answer, "images": images}


def _ar(question: str, answer: str, refuse: bool = True) -> dict:
    return {"ability": "AR", "format": "open", "question": question, "answer": answer, "refuse": refuse}


def _iu(question: str, answer: str, updates: int, fmt: str = "open") -> dict:
    return {"ability": "IU", "format": fmt, "question": question, "answer": answer, "updates": updates}


def _plain(ability: str, question: str, answer: str) -> dict:
    return {"ability": ability, "format": "open", "question": question, "answer": answer}


def _choice(ability: str, question: str, options: dict[str, str], answer: str) -> dict:
    return {"ability": ability, "format": "choice", "question": question, "options": options, "answer": answer}


def _conversations() -> list[Conversation]:
    trip = Conversation("mmrc-001", "travel", [
        Turn("Hi! I'm planning a trip to Lakeside Town with my sister Mia in May. Our budget is 600 dollars.",
             "That sounds lovely! 600 dollars for two people is a workable budget for a short trip. Do you "
             "already have a place to stay in mind?"),
        Turn("Here is the hotel I'm looking at, the Blue Lake Inn.",
             "The photo shows the Blue Lake Inn at 120 dollars per night. That leaves a good part of your "
             "budget for activities.",
             [_card(["BLUE LAKE INN", "120 USD/NIGHT"], "square", "blue")]),
        Turn("And this is the boat tour we saw online.",
             "The boat tour costs 35 dollars per person, so 70 dollars for you and Mia.",
             [_card(["BOAT TOUR", "35 USD/PERSON"], "triangle", "orange", 1)]),
        Turn("Actually we changed our minds: we will go in June instead of May, and we'll stay two nights.",
             "Noted: June instead of May, two nights. Two nights at the Blue Lake Inn cost 240 dollars."),
    ], [
        _ie("Which hotel did I mention, and what does it cost per night?",
            "The Blue Lake Inn, 120 dollars per night.", ["Blue Lake Inn", "120 dollars per night"]),
        _choice("CR", "With two nights at the hotel and the boat tour for both of us, how much of our budget is left?",
                {"A": "220 dollars", "B": "290 dollars", "C": "360 dollars", "D": "480 dollars"}, "B"),
        _iu("True or false: the trip is planned for May.", "false", 1, "tf"),
        _im("Which image showed the price of the boat tour?", "The second image.", [2]),
        _plain("MR", "Who am I travelling with?", "Your sister Mia."),
        _ar("What is the number of our flight to Lakeside Town?",
            "You have not mentioned a flight, so I cannot tell the flight number."),
    ])

    cake = Conversation("mmrc-002", "food", [
        Turn("I'm baking a birthday cake for my friend Leo this Saturday. He is allergic to peanuts.",
             "What a nice idea! I'll keep the peanut allergy in mind: no peanut butter or peanut oil."),
        Turn("This is the recipe card I found.",
             "It is a chocolate cake with 200 g flour, 150 g sugar and 3 eggs. None of these contain peanuts.",
             [_card(["CHOC CAKE", "FLOUR 200G", "SUGAR 150G", "EGGS 3"])]),
        Turn("And here is the page of my oven's manual.",
             "The manual suggests 180 C for 35 minutes, which fits a chocolate sponge.",
             [_card(["BAKE 180 C", "35 MIN"], "square", "black", 4)]),
        Turn("I only have 2 eggs at home. What should I do?",
             "The recipe needs 3 eggs, so buy one more, or replace the missing egg with 60 g of yogurt."),
        Turn("This is the decoration I want to copy. Also, the party moved from Saturday to Sunday.",
             "A round pink cake, easy to copy with pink fondant. And Sunday gives you one more day to bake.",
             [_card(["MY TOPPING"], "circle", "pink", 2)]),
    ], [
        _ie("What ingredients and amounts are on the recipe card?", "200 g flour, 150 g sugar and 3 eggs.",
            ["flour 200 g", "sugar 150 g", "3 eggs"]),
        _plain("CR", "How many more eggs do I need to buy for the recipe?",
               "One: the recipe needs 3 eggs and you have 2."),
        _iu("True or false: the cake must be ready on Saturday.", "false", 1, "tf"),
        _im("Which image shows the baking temperature?", "The second image, the oven manual page: 180 C.", [2]),
        _plain("MR", "What is my friend allergic to?", "Peanuts."),
        _ar("Which flavour of ice cream does Leo like best?",
            "You did not say which ice cream Leo likes, so I cannot answer that."),
    ])

    shoes = Conversation("mmrc-003", "shopping", [
        Turn("I need new running shoes. My size is 42 and my budget is 90 dollars.",
             "Got it: size 42, up to 90 dollars. Where do you usually run?"),
        Turn("Here are two pairs I found.",
             "The AIR RUN costs 85 dollars and fits your budget; the SPEED X costs 110 dollars and does not.",
             [_card(["AIR RUN", "85 USD"], "triangle", "red"), _card(["SPEED X", "110 USD"], "diamond", "blue", 1)]),
        Turn("I mostly run on trails, about 20 km a week.",
             "For trails you want a grippy sole. The AIR RUN is a road shoe, but fine for light trails."),
        Turn("This third pair is on sale.",
             "The TRAIL PRO is 95 dollars with 10% off, so 85.50 dollars, and it is built for trails.",
             [_card(["TRAIL PRO", "95 USD", "-10%"], "star", "green", 3)]),
        Turn("Bad news: the TRAIL PRO is sold out in size 42, they only have 43.",
             "A size 43 would likely be too big for running. Let's keep the AIR RUN as the main option."),
        Turn("Update: my budget went up to 100 dollars because I got a gift card.",
             "With 100 dollars the AIR RUN fits easily; the SPEED X at 110 dollars still does not."),
        Turn("Here is the gift card.",
             "The card is worth 10 dollars, which explains the new budget of 100 dollars.",
             [_card(["GIFT CARD", "10 USD"], "rect", "yellow", 2)]),
    ], [
        _ie("List the shoes I showed you and their prices.",
            "AIR RUN 85 dollars, SPEED X 110 dollars, TRAIL PRO 95 dollars with 10% off.",
            ["AIR RUN 85 dollars", "SPEED X 110 dollars", "TRAIL PRO 95 dollars with 10% off"]),
        _ie("True or false: the gift card is worth 10 dollars.", "true", ["gift card 10 dollars"], "tf"),
        _choice("CR", "Which pair fits my current budget and is available in my size?",
                {"A": "AIR RUN", "B": "SPEED X", "C": "TRAIL PRO"}, "A"),
        _iu("What is my current budget for shoes?", "100 dollars (it was 90 before the gift card).", 1),
        _im("Which images showed shoes that cost less than 100 dollars before any discount?",
            "The first image (AIR RUN, 85 dollars) and the third image (TRAIL PRO, 95 dollars).", [1, 3]),
        _plain("MR", "What shoe size do I wear?", "42."),
        _ar("What colour are my current running shoes?",
            "You have not told me about your current shoes, so I don't know their colour."),
    ])

    race = Conversation("mmrc-004", "sport", [
        Turn("I'm training for a 10 km race on 12 October. My best time so far is 58 minutes.",
             "Great goal! With a 58-minute best, aiming for 55 minutes on race day is realistic."),
        Turn("This is my weekly plan.",
             "Three runs a week: 5 km on Monday, 8 km on Wednesday and 12 km on Saturday, 25 km in total.",
             [_card(["MON 5 KM", "WED 8 KM", "SAT 12 KM"])]),
        Turn("How should I warm up before the Saturday long run?",
             "Walk briskly for five minutes, then jog slowly for five, then do a few leg swings and strides."),
        Turn("Here is my heart-rate summary from yesterday.",
             "An average of 152 bpm with a maximum of 181 bpm: yesterday's run was fairly hard.",
             [_card(["AVG HR 152", "MAX HR 181"], "circle", "red", 1)]),
        Turn("My coach, Anna, says I should keep my average below 150 on easy days.",
             "That's sound advice. Slow down a little on easy days to stay under 150 bpm."),
        Turn("I changed Wednesday's run from 8 km to 6 km because of knee pain.",
             "Sensible. Your week is now 5 + 6 + 12 = 23 km. See a physio if the pain continues."),
        Turn("Here are my new shoes.",
             "Orange trail shoes in size 42, they look light. Break them in on the short Monday run first.",
             [_card(["NEW SHOES", "SIZE 42"], "star", "orange", 3)]),
        Turn("What should I eat the evening before the race?",
             "A familiar, carbohydrate-rich dinner such as pasta or rice, not too late, and plenty of water."),
    ], [
        _ie("Which runs did the weekly plan in my picture list?", "Monday 5 km, Wednesday 8 km, Saturday 12 km.",
            ["Monday 5 km", "Wednesday 8 km", "Saturday 12 km"]),
        _plain("CR", "How many kilometres do I run per week after changing Wednesday's run?",
               "23 km: 5 + 6 + 12."),
        _iu("True or false: I still run 8 km on Wednesdays.", "false", 1, "tf"),
        _im("Which image showed my heart-rate data?", "The second image.", [2]),
        _plain("MR", "What is my coach's name, and what did she advise?",
               "Anna; she advised keeping your average heart rate below 150 on easy days."),
        _choice("MR", "When is my race?", {"A": "12 September", "B": "12 October", "C": "21 October"}, "B"),
        _ar("What was my finishing time in last year's race?",
            "You did not mention last year's race, so I cannot tell your time."),
    ])

    flat = Conversation("mmrc-005", "house", [
        Turn("We're moving to a new flat next month with our cat, Pepper.",
             "Exciting! Moving with a cat takes a little planning. How can I help?"),
        Turn("This is the floor plan.",
             "Four rooms: a 24 m2 living room, a 14 m2 bedroom, an 8 m2 kitchen and a 5 m2 bathroom.",
             [_card(["LIVING 24 M2", "BED 14 M2", "KITCHEN 8 M2", "BATH 5 M2"])]),
        Turn("Our sofa is 2.2 m long. Will it fit along a 4 m living room wall?",
             "Yes, a 2.2 m sofa leaves 1.8 m of that wall free, for example for a side table."),
        Turn("Here is the sofa.",
             "A green sofa, 2.2 m long as you said. It will look nice in the living room.",
             [_card(["SOFA", "2.2 M"], "rect", "green", 3)]),
        Turn("The rent is 1,500 a month, and utilities are about 120.",
             "So about 1,620 a month for rent and utilities together."),
        Turn("The moving company quoted 400.",
             "400 for the move is reasonable for a small flat. Ask whether packing material is included."),
        Turn("Here are two rug options for the living room.",
             "Rug A is 160 x 230 cm and red, rug B is 200 x 300 cm and blue. Rug B would cover more of the room.",
             [_card(["RUG A", "160X230"], "rect", "red", 2), _card(["RUG B", "200X300"], "rect", "blue", 1)]),
        Turn("Good news: the landlord lowered the rent to 1,400.",
             "That brings rent plus utilities down to about 1,520 a month."),
        Turn("Pepper needs a quiet corner for her litter box. Where would you put it?",
             "The bathroom is the quietest small room; keep the box away from her food bowl."),
        Turn("Thanks! Please remind me what we still need to decide.",
             "Which rug to buy, whether the movers bring packing material, and where Pepper's food goes."),
    ], [
        _ie("What rooms does the floor plan show, and how large is each?",
            "Living room 24 m2, bedroom 14 m2, kitchen 8 m2, bathroom 5 m2.",
            ["living room 24 m2", "bedroom 14 m2", "kitchen 8 m2", "bathroom 5 m2"]),
        _plain("CR", "How much will rent plus utilities cost per month now?", "1,520: 1,400 rent plus 120 utilities."),
        _iu("True or false: the monthly rent is 1,500.", "false", 1, "tf"),
        _im("Which images show the rug options?", "The third and the fourth image.", [3, 4]),
        _plain("MR", "What is my cat's name?", "Pepper."),
        _ar("On which floor is the new flat?", "You have not said which floor the flat is on."),
        _ar("How much did the moving company quote?", "400.", refuse=False),
    ])

    guitar = Conversation("mmrc-006", "music", [
        Turn("I started learning the guitar three weeks ago. I practise 20 minutes a day.",
             "Well done! 20 minutes every day is a great habit for a beginner."),
        Turn("Here's my guitar.",
             "A six-string acoustic guitar, a good instrument to learn on.",
             [_card(["ACOUSTIC", "6 STRINGS"], "triangle", "orange", 2)]),
        Turn("Which chords should a beginner learn first?",
             "Start with G, C, D, E minor and A minor: they cover many popular songs."),
        Turn("Here is the chord chart my teacher gave me.",
             "The chart shows G, C and D in the first row and Em and Am in the second: the five beginner chords.",
             [_card(["G  C  D", "EM  AM"])]),
        Turn("My teacher is called Mr. Lin. Lessons are on Tuesdays at 6 pm.",
             "Noted: lessons with Mr. Lin on Tuesdays at 6 pm."),
        Turn("My fingertips hurt after practice. Is that normal?",
             "Yes, quite normal in the first weeks; calluses form and the pain fades. Take short breaks."),
        Turn("I now practise 30 minutes a day instead of 20.",
             "Great progress: 30 minutes a day is 210 minutes a week."),
        Turn("Here's the song I want to play.",
             "RIVER SONG with a capo on the second fret, a nice goal.",
             [_card(["RIVER SONG", "CAPO 2"], "circle", "blue", 1)]),
        Turn("What does capo 2 mean?",
             "Clamp the capo across the second fret; the chord shapes stay the same but sound two semitones higher."),
        Turn("Lessons moved to Thursdays at 6 pm.",
             "Updated: lessons with Mr. Lin are now on Thursdays at 6 pm."),
        Turn("Here's a photo from my first small concert at school.",
             "The school stage with a big yellow star, congratulations on your first concert!",
             [_card(["SCHOOL STAGE"], "star", "yellow", 4)]),
    ], [
        _ie("Which chords are on my teacher's chord chart?", "G, C, D, Em and Am.", ["G", "C", "D", "Em", "Am"]),
        _plain("CR", "How many minutes do I practise per week now?", "210 minutes: 30 minutes a day for 7 days."),
        _iu("When are my guitar lessons?", "Thursdays at 6 pm (they moved from Tuesdays).", 1),
        _iu("True or false: I practise 20 minutes a day and my lessons are on Tuesdays.", "false", 2, "tf"),
        _im("Which image shows the song I want to play?", "The third image.", [3]),
        _plain("MR", "What is my teacher's name?", "Mr. Lin."),
        _ar("What is the name of my school?", "You have not told me the name of your school."),
    ])
    return [trip, cake, shoes, race, flat, guitar]


def generate(root: Path) -> None:
    """Write ``root/mmrc.jsonl`` and ``root/images/<conversation id>/<n>.jpg``."""
    records = []
    for conversation in _conversations():
        cards = [card for turn in conversation.turns for card in turn.images]
        paths = iter(save_cards(root, f"images/{conversation.id}", cards))
        turns = [{"user": turn.user, "images": [next(paths) for _ in turn.images], "assistant": turn.assistant}
                 for turn in conversation.turns]
        records.append({"id": conversation.id, "category": conversation.category,
                        "turns": turns, "questions": conversation.questions})
    write_jsonl(root / "mmrc.jsonl", records)
