"""Synthetic RealBench records in the local format of shared/specs/realbench.md.

Every image is a small card with coloured shapes or short Latin text; the
Chinese record text refers to what the cards show, so each answer can be
worked out from the images:

- retrieval: the text describes one item (easy) or all items of one colour
  (hard) by colour, shape and sometimes the printed label;
- ranking: a note lists the items in order with ``Figure_`` blanks, the
  images come shuffled, and exactly one of four orders is right;
- extraction: the answer is printed on one card (easy) or spread over
  several cards (hard);
- reasoning: counting, arithmetic, attribute and position questions about
  one card (easy) or across cards (hard);
- unanswerable: questions about something no card shows.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from sample_data.common import cn_count, cn_number, rng_for, save_cards, write_jsonl
from sample_data.drawing import BACKGROUNDS, COLORS, SHAPES, Card, Shape, centered_box, text_width

RECORDS_PER_FILE = 9
UNANSWERABLE = "No relevant content mentioned"

#: category -> (Chinese topic, things the posts talk about). The paper shows
#: its 36 categories only as a word cloud; its text names travel, food
#: (tutorials), home decoration and astrology. The others are illustrative.
CATEGORIES: dict[str, tuple[str, list[str]]] = {
    "travel": ("旅行", ["纪念品", "明信片", "冰箱贴"]),
    "food": ("美食", ["蛋糕", "饼干", "马卡龙"]),
    "home_decoration": ("家居装修", ["抱枕", "地垫", "挂画"]),
    "astrology": ("星座", ["星座卡片", "幸运符", "护身符"]),
    "pets": ("宠物", ["玩具", "项圈", "食盆"]),
    "fashion": ("穿搭", ["包包", "发夹", "耳环"]),
    "crafts": ("手工", ["折纸", "贴纸", "黏土摆件"]),
    "stationery": ("文具", ["便利贴", "印章", "书签"]),
    "fitness": ("健身", ["水杯", "瑜伽垫", "徽章"]),
}


@dataclass(frozen=True)
class Item:
    color: str
    shape: str
    noun: str

    @property
    def zh(self) -> str:
        return f"{COLORS[self.color][0]}{SHAPES[self.shape][0]}的{self.noun}"


def _category(rng: random.Random) -> tuple[str, str, list[str]]:
    slug = rng.choice(sorted(CATEGORIES))
    topic, nouns = CATEGORIES[slug]
    return slug, topic, nouns


def _size(rng: random.Random, low: int = 112, high: int = 200) -> tuple[int, int]:
    return rng.randrange(low, high + 1, 8), rng.randrange(low, high + 1, 8)


def _item_card(rng: random.Random, item: Item, label: str | None, size: tuple[int, int]) -> Card:
    width, height = size
    top = 30 if label else 0
    return Card(width, height, background=rng.choice(BACKGROUNDS),
                shapes=[Shape(item.shape, item.color, centered_box(width, height, top))],
                lines=[label] if label else [])


def _text_card(rng: random.Random, lines: list[str]) -> Card:
    width = max(120, max(text_width(line) for line in lines) + 14)
    height = max(96, len(lines) * 26 + 18)
    return Card(width, height, background=rng.choice(BACKGROUNDS), lines=lines)


def _photo_card(rng: random.Random) -> Card:
    """A distractor: one or two shapes, no text."""
    width, height = _size(rng)
    shapes = []
    for k in range(rng.randint(1, 2)):
        side = min(width // 2, height) - 16
        x0 = 8 + k * (width // 2)
        y0 = rng.randint(8, max(8, height - side - 8))
        shapes.append(Shape(rng.choice(sorted(SHAPES)), rng.choice(sorted(COLORS)),
                            (x0, y0, x0 + side, y0 + side)))
    return Card(width, height, background=rng.choice(BACKGROUNDS), shapes=shapes)


def _distinct_items(rng: random.Random, n: int, nouns: list[str],
                    exclude: Collection[tuple[str, str]] = ()) -> list[Item]:
    pairs = [(c, s) for c in sorted(COLORS) for s in sorted(SHAPES) if (c, s) not in exclude]
    return [Item(c, s, rng.choice(nouns)) for c, s in rng.sample(pairs, n)]


def _record(rid: str, task: str, difficulty: str, category: str, images: list[str],
            text: str, answer: object, options: dict | None = None) -> dict:
    record = {"id": rid, "task": task, "difficulty": difficulty, "category": category,
              "images": images, "text": text}
    if options is not None:
        record["options"] = options
    record["answer"] = answer
    return record


# --- retrieval ---------------------------------------------------------------

_RETRIEVAL_EASY = [
    "{topic}分享｜这次最满意的是那个{item}，颜色很正，强烈推荐！",
    "求同款！图里那个{item}在哪里能买到？",
    "记录一下{topic}日常：{item}终于到手啦，上面还印着“{label}”。",
]


def retrieval_easy(root: Path, rid: str, index: int, rng: random.Random) -> dict:
    slug, topic, nouns = _category(rng)
    n = rng.randint(2, 6)
    target = _distinct_items(rng, 1, nouns)[0]
    # Distractors share the colour or the shape with the target where possible.
    same_color = Item(target.color, rng.choice([s for s in sorted(SHAPES) if s != target.shape]), target.noun)
    same_shape = Item(rng.choice([c for c in sorted(COLORS) if c != target.color]), target.shape, target.noun)
    others = [same_color, same_shape][: n - 1]
    used = {(i.color, i.shape) for i in [target, *others]}
    others += _distinct_items(rng, n - 1 - len(others), nouns, exclude=used)
    items = [target, *others]
    rng.shuffle(items)
    labels = [f"NO.{k}" for k in rng.sample(range(10, 100), len(items))]
    cards = [_item_card(rng, item, label, _size(rng)) for item, label in zip(items, labels)]
    index = items.index(target)
    text = rng.choice(_RETRIEVAL_EASY).format(topic=topic, item=target.zh, label=labels[index])
    images = save_cards(root, f"images/{rid}", cards)
    return _record(rid, "retrieval", "easy", slug, images, text, index + 1)


def retrieval_hard(root: Path, rid: str, index: int, rng: random.Random) -> dict:
    slug, topic, nouns = _category(rng)
    n = rng.randint(7, 12)
    color = rng.choice(sorted(COLORS))
    k = rng.randint(2, 4)
    noun = rng.choice(nouns)
    relevant = [Item(color, s, noun) for s in rng.sample(sorted(SHAPES), k)]
    pairs = [(c, s) for c in sorted(COLORS) if c != color for s in sorted(SHAPES)]
    others = [Item(c, s, rng.choice(nouns)) for c, s in rng.sample(pairs, n - k)]
    items = relevant + others
    rng.shuffle(items)
    cards = [_item_card(rng, item, None, _size(rng, 96, 160)) for item in items]
    answer = sorted(i + 1 for i, item in enumerate(items) if item in relevant)
    text = (f"{topic}合集｜这次入手的{COLORS[color][0]}{noun}全都在这里了，"
            f"一共{cn_count(k)}个，每个形状都不一样，你最喜欢哪个？")
    images = save_cards(root, f"images/{rid}", cards)
    return _record(rid, "retrieval", "hard", slug, images, text, answer)


# --- ranking -------------------------------------------------------------------

def _ranking(root: Path, rid: str, rng: random.Random, n: int, difficulty: str) -> dict:
    slug, topic, nouns = _category(rng)
    steps = _distinct_items(rng, n, nouns)  # in the order the note tells them
    shown = list(range(n))
    rng.shuffle(shown)  # shown[j] = the step drawn on image j + 1
    correct = [shown.index(step) + 1 for step in range(n)]
    wrong: list[list[int]] = []
    while len(wrong) < 3:
        candidate = correct.copy()
        if rng.random() < 0.5:  # a near miss: two images swapped
            a, b = rng.sample(range(n), 2)
            candidate[a], candidate[b] = candidate[b], candidate[a]
        else:
            rng.shuffle(candidate)
        if candidate != correct and candidate not in wrong:
            wrong.append(candidate)
    letter = rng.choice("ABCD")
    orders = iter(wrong)
    options = {key: correct if key == letter else next(orders) for key in "ABCD"}
    size = (104, 128) if difficulty == "hard" else (120, 176)
    cards = [_item_card(rng, steps[step], None, _size(rng, *size)) for step in shown]
    parts = [f"第{cn_number(k + 1)}个是{item.zh}Figure_" for k, item in enumerate(steps)]
    text = f"{topic}笔记｜按顺序给大家介绍一下：" + "，".join(parts) + "。"
    images = save_cards(root, f"images/{rid}", cards)
    return _record(rid, "ranking", difficulty, slug, images, text, letter, options)


_RANKING_EASY_SIZES = [3, 3, 4, 4, 5, 5, 6, 6, 6]
_RANKING_HARD_SIZES = [7, 8, 9, 10, 11, 12, 14, 16, 18]


def ranking_easy(root: Path, rid: str, index: int, rng: random.Random) -> dict:
    # Four distinct orders need at least three images (two images have two orders).
    return _ranking(root, rid, rng, _RANKING_EASY_SIZES[index], "easy")


def ranking_hard(root: Path, rid: str, index: int, rng: random.Random) -> dict:
    return _ranking(root, rid, rng, _RANKING_HARD_SIZES[index], "hard")


# --- extraction -------------------------------------------------------------------

#: A fact printed on a card: (card lines, question, answer).
Fact = tuple[list[str], str, str]


def _fact_hours(rng: random.Random) -> Fact:
    value = f"{rng.randint(7, 10)}:00-{rng.randint(18, 23)}:00"
    return ["OPEN HOURS", value], "图里这家店的营业时间是几点到几点？", value


def _fact_phone(rng: random.Random) -> Fact:
    value = f"{rng.randint(1000, 9999)}-{rng.randint(1000, 9999)}"
    return ["TEL", value], "店家的联系电话是多少？", value


def _fact_wifi(rng: random.Random) -> Fact:
    value = rng.choice(["CAFE", "TEA", "BOOK", "HOME"]) + str(rng.randint(100, 999))
    return ["WIFI PASSWORD", value], "店里的WiFi密码是什么？", value


def _fact_address(rng: random.Random) -> Fact:
    value = f"NO.{rng.randint(2, 199)} {rng.choice(['PINE', 'LAKE', 'RIVER', 'HILL'])} RD"
    return ["ADDRESS", value], "店铺的地址是什么？", value


def _fact_coupons(rng: random.Random) -> Fact:
    codes = [f"{word}{rng.randint(5, 30)}" for word in rng.sample(["SAVE", "FREE", "GIFT", "VIP"], 2)]
    return ["COUPONS", *codes], "图中给出的两个优惠码分别是什么？", "\n".join(codes)


_EASY_FACTS: dict[str, Callable[[random.Random], Fact]] = {
    "hours": _fact_hours, "phone": _fact_phone, "wifi": _fact_wifi,
    "address": _fact_address, "coupons": _fact_coupons,
}


def _spread_itinerary(rng: random.Random, k: int) -> tuple[list[list[str]], str, str]:
    cities = rng.sample(["XIAN", "CHENGDU", "DALI", "LIJIANG", "GUILIN", "HANGZHOU", "SUZHOU", "XIAMEN"], k)
    points = [f"DAY {d} {city}" for d, city in enumerate(cities, 1)]
    cards = [[f"DAY {d}", city] for d, city in enumerate(cities, 1)]
    return cards, "这份攻略里每天分别去哪座城市？请按天列出。", "\n".join(points)


def _spread_ingredients(rng: random.Random, k: int) -> tuple[list[list[str]], str, str]:
    names = rng.sample(["FLOUR", "SUGAR", "MILK", "BUTTER", "CREAM", "COCOA"], k)
    points = [f"{name} {rng.randrange(20, 300, 10)}G" for name in names]
    cards = [point.split(" ") for point in points]
    return cards, "做这道甜品需要哪些材料，各要多少？", "\n".join(points)


def _spread_schedule(rng: random.Random, k: int) -> tuple[list[list[str]], str, str]:
    days = ["MON", "TUE", "WED", "THU", "FRI", "SAT"][:k]
    points = [f"{day} {rng.randint(8, 11)}:00-{rng.randint(17, 22)}:00" for day in days]
    cards = [point.split(" ") for point in points]
    return cards, "这家店每天的营业时间分别是什么？", "\n".join(points)


def extraction_easy(root: Path, rid: str, index: int, rng: random.Random) -> dict:
    slug, _, _ = _category(rng)
    kinds = rng.sample(sorted(_EASY_FACTS), rng.randint(2, 4))
    facts = [_EASY_FACTS[kind](rng) for kind in kinds]
    lines, question, answer = facts[0]
    cards = [_text_card(rng, fact[0]) for fact in facts]
    cards += [_photo_card(rng) for _ in range(rng.randint(0, 2))]
    rng.shuffle(cards)
    images = save_cards(root, f"images/{rid}", cards)
    return _record(rid, "extraction", "easy", slug, images, question, answer)


def extraction_hard(root: Path, rid: str, index: int, rng: random.Random) -> dict:
    slug, _, _ = _category(rng)
    spread = rng.choice([_spread_itinerary, _spread_ingredients, _spread_schedule])
    card_lines, question, answer = spread(rng, rng.randint(3, 5))
    cards = [_text_card(rng, lines) for lines in card_lines]
    cards += [_photo_card(rng) for _ in range(rng.randint(1, 3))]
    rng.shuffle(cards)
    images = save_cards(root, f"images/{rid}", cards)
    return _record(rid, "extraction", "hard", slug, images, question, answer)


# --- reasoning ---------------------------------------------------------------------

def _grid_card(rng: random.Random, items: list[tuple[str, str]], size: int = 40) -> Card:
    """Shapes (colour, shape) in a 3-column grid, in reading order."""
    cols = 3
    rows = (len(items) + cols - 1) // cols
    grid_width, grid_height = cols * (size + 10) - 10, rows * (size + 10) - 10
    width, height = max(120, grid_width + 20), max(96, grid_height + 20)
    left, top = (width - grid_width) // 2, (height - grid_height) // 2
    shapes = []
    for k, (color, shape) in enumerate(items):
        r, c = divmod(k, cols)
        x0, y0 = left + c * (size + 10), top + r * (size + 10)
        shapes.append(Shape(shape, color, (x0, y0, x0 + size, y0 + size)))
    return Card(width, height, background=rng.choice(BACKGROUNDS), shapes=shapes)


def _count_scene(rng: random.Random) -> tuple[list[tuple[str, str]], str, str, int]:
    color, shape = rng.choice(sorted(COLORS)), rng.choice(sorted(SHAPES))
    count = rng.randint(1, 4)
    others = [(c, s) for c in sorted(COLORS) for s in sorted(SHAPES) if (c, s) != (color, shape)]
    items = [(color, shape)] * count + [rng.choice(others) for _ in range(rng.randint(2, 5))]
    rng.shuffle(items)
    return items, color, shape, count


def _reason_count(rng: random.Random) -> tuple[Card, str, str]:
    items, color, shape, count = _count_scene(rng)
    question = f"图中一共有几个{COLORS[color][0]}{SHAPES[shape][0]}？"
    return _grid_card(rng, items), question, f"{count}个"


def _reason_price(rng: random.Random) -> tuple[Card, str, str]:
    (a, pa), (b, pb) = zip(rng.sample(["APPLE", "PEAR", "PEACH", "MANGO"], 2), rng.sample(range(3, 15), 2))
    qa = rng.randint(2, 4)
    question = f"按价目表，买{cn_count(qa)}个{a}和一个{b}一共要多少元？"
    return _text_card(rng, ["PRICE LIST", f"{a} {pa} RMB", f"{b} {pb} RMB"]), question, f"{qa * pa + pb}元"


def _reason_largest(rng: random.Random) -> tuple[Card, str, str]:
    colors = rng.sample(sorted(COLORS), 3)
    sides = rng.sample([28, 48, 72], 3)
    shapes, x = [], 8
    for color, side in zip(colors, sides):
        shapes.append(Shape(rng.choice(sorted(SHAPES)), color, (x, 90 - side, x + side, 90)))
        x += side + 10
    biggest = colors[sides.index(72)]
    card = Card(x, 100, background=rng.choice(BACKGROUNDS), shapes=shapes)
    return card, "图中最大的那个图形是什么颜色？", COLORS[biggest][0]


def _reason_position(rng: random.Random) -> tuple[Card, str, str]:
    kinds = rng.sample(sorted(SHAPES), 4)
    items = [(rng.choice(sorted(COLORS)), kind) for kind in kinds]
    shapes = [Shape(kind, color, (8 + 46 * k, 30, 48 + 46 * k, 70)) for k, (color, kind) in enumerate(items)]
    position = rng.randint(2, 4)
    card = Card(8 + 46 * 4, 100, background=rng.choice(BACKGROUNDS), shapes=shapes)
    return card, f"一排图形中，从左往右数第{cn_number(position)}个是什么形状？", SHAPES[kinds[position - 1]][0]


def reasoning_easy(root: Path, rid: str, index: int, rng: random.Random) -> dict:
    slug, _, _ = _category(rng)
    make = rng.choice([_reason_count, _reason_price, _reason_largest, _reason_position])
    card, question, answer = make(rng)
    # Distractors of the other kind: text cards next to shapes, shapes next to a price list.
    if make is _reason_price:
        others = [_photo_card(rng) for _ in range(rng.randint(1, 3))]
    else:
        others = [_text_card(rng, _EASY_FACTS[k](rng)[0]) for k in rng.sample(sorted(_EASY_FACTS), rng.randint(1, 3))]
    cards = [card, *others]
    rng.shuffle(cards)
    images = save_cards(root, f"images/{rid}", cards)
    return _record(rid, "reasoning", "easy", slug, images, question, answer)


def reasoning_hard(root: Path, rid: str, index: int, rng: random.Random) -> dict:
    slug, topic, _ = _category(rng)
    k = rng.randint(3, 5)
    kind = rng.choice(["total", "cheapest", "difference", "count"])
    if kind == "count":
        color, shape = rng.choice(sorted(COLORS)), rng.choice(sorted(SHAPES))
        cards, total = [], 0
        for _ in range(k):
            count = rng.randint(0, 3)
            others = [(c, s) for c in sorted(COLORS) for s in sorted(SHAPES) if (c, s) != (color, shape)]
            items = [(color, shape)] * count + [rng.choice(others) for _ in range(rng.randint(2, 4))]
            rng.shuffle(items)
            cards.append(_grid_card(rng, items, size=32))
            total += count
        question = f"这几张图里一共出现了几个{COLORS[color][0]}{SHAPES[shape][0]}？"
        answer = f"{total}个"
    else:
        goods = rng.sample(["TEA", "MUG", "CAP", "BAG", "PEN", "BOOK", "LAMP"], k)
        prices = rng.sample(range(8, 99), k)
        cards = [_text_card(rng, [name, f"{price} RMB"]) for name, price in zip(goods, prices)]
        if kind == "total":
            question = f"{topic}好物清单里的东西各买一件，一共要花多少元？"
            answer = f"{sum(prices)}元"
        elif kind == "cheapest":
            question = "这几件商品里哪一件最便宜？多少钱？"
            cheapest = prices.index(min(prices))
            answer = f"{goods[cheapest]}，{prices[cheapest]}元"
        else:
            question = "最贵的商品比最便宜的贵多少元？"
            answer = f"{max(prices) - min(prices)}元"
        cards += [_photo_card(rng) for _ in range(rng.randint(0, 2))]
    rng.shuffle(cards)
    images = save_cards(root, f"images/{rid}", cards)
    return _record(rid, "reasoning", "hard", slug, images, question, answer)


# --- unanswerable ---------------------------------------------------------------------

_UNANSWERABLE_QUESTIONS = [
    "店主的名字叫什么？",
    "这家店的停车费是多少？",
    "博主是哪一年去的这家店？",
    "图中的蛋糕用的是哪个牌子的奶油？",
]


def unanswerable(root: Path, rid: str, index: int, rng: random.Random) -> dict:
    """Extraction-style questions that no card answers (Appendix D of the paper).

    ``difficulty`` alternates: "easy" records have few images, "hard" ones more.
    """
    slug, _, _ = _category(rng)
    difficulty = "easy" if index % 2 == 0 else "hard"
    kinds = sorted(_EASY_FACTS)
    if index % 3 == 2:
        # Ask for a fact type that none of the cards carries.
        missing = rng.choice(kinds)
        shown = rng.sample([k for k in kinds if k != missing], rng.randint(2, 4))
        question = _EASY_FACTS[missing](rng)[1]
    else:
        shown = rng.sample(kinds, rng.randint(2, 4))
        question = rng.choice(_UNANSWERABLE_QUESTIONS)
    cards = [_text_card(rng, _EASY_FACTS[k](rng)[0]) for k in shown]
    cards += [_photo_card(rng) for _ in range(rng.randint(0, 1) if difficulty == "easy" else rng.randint(2, 4))]
    rng.shuffle(cards)
    images = save_cards(root, f"images/{rid}", cards)
    return _record(rid, "unanswerable", difficulty, slug, images, question, UNANSWERABLE)


Builder = Callable[[Path, str, int, random.Random], dict]

#: file stem -> (id prefix, record builder)
SUBSETS: dict[str, tuple[str, Builder]] = {
    "retrieval_easy": ("ret-e", retrieval_easy),
    "retrieval_hard": ("ret-h", retrieval_hard),
    "ranking_easy": ("rank-e", ranking_easy),
    "ranking_hard": ("rank-h", ranking_hard),
    "extraction_easy": ("ext-e", extraction_easy),
    "extraction_hard": ("ext-h", extraction_hard),
    "reasoning_easy": ("rea-e", reasoning_easy),
    "reasoning_hard": ("rea-h", reasoning_hard),
    "unanswerable": ("una", unanswerable),
}


def generate(root: Path) -> None:
    """Write ``root/{subset}.jsonl`` and ``root/images/<id>/<n>.jpg``."""
    for stem, (prefix, build) in SUBSETS.items():
        rng = rng_for(f"realbench/{stem}")
        records = [build(root, f"{prefix}-{i + 1:03d}", i, rng) for i in range(RECORDS_PER_FILE)]
        write_jsonl(root / f"{stem}.jsonl", records)
