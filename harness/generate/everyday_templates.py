"""The composed sources of the everyday-text corpus: chat, URLs, numbers, emoji, JSON,
Markdown and code, from tokconf's own templates and word lists.

Each source is :data:`COUNT` documents; document ``n`` of source ``s`` fills its template
with words picked by :func:`pick`, a SHA-256 of ``(s, n, slot)``: the same documents on
every machine and every Python version (``random``'s streams are not promised to stay),
and a change to one source's lists leaves the others' documents as they were.

What each source is for (a tokenizer fault users would meet in their first minute):

- ``chat``: role markers (``User:``, ``### Assistant``, ``[INST]``) and turns, as chat
  logs are pasted; no special-token literals (``<|...|>``: the cases' and the generated
  phase's domain, where the policies are declared);
- ``urls``: schemes, ports, paths, percent escapes, queries, fragments, e-mail
  addresses, IPv6, internationalised domain names;
- ``numbers``: digit runs of every length (cl100k_base splits them in threes), decimal
  and thousands separators of several locales (no-break and narrow no-break spaces),
  signs, percentages, fractions, dates and times in many formats, currency symbols,
  non-ASCII digits;
- ``emoji``: skin-tone modifiers, ZWJ families and professions, flags (regional indicator
  pairs, tag sequences), keycaps, variation selectors, in sentences;
- ``json``, ``markdown``, ``code``: structured text with the whitespace and punctuation
  runs that pre-tokenizers treat specially (indentation, ``\\n\\n``, ``"},``, ``}}``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Callable, Sequence

__all__ = ["COUNT", "TEMPLATE_SOURCES", "pick"]

#: documents per composed source
COUNT = 32

NAMES = ("Ana", "Bilal", "Chen Wei", "Dagny", "Émile", "Fatima", "Giorgos", "Hana", "Ivan", "José", "Kwame",
         "Léa", "Mei", "Nikolai", "Olusegun", "Priya", "Quentin", "Rosa", "Søren", "Tomasz", "Umar", "Valentina",
         "Wen", "Ximena", "Yusuf", "Zoë")
CITIES = ("Lisbon", "Kraków", "São Paulo", "Reykjavík", "Zürich", "Montréal", "Düsseldorf", "Nairobi", "Hà Nội",
          "Istanbul", "Kyoto", "Oaxaca", "Tromsø", "Bogotá", "Marrakesh", "Chennai")
THINGS = ("the invoice", "the train tickets", "the dentist appointment", "the spreadsheet", "the birthday cake",
          "the rent", "the flight to the conference", "the new laptop", "the library books", "the quarterly report",
          "the kitchen tiles", "the password reset", "the parcel", "the team lunch")
QUESTIONS = ("Can you summarise this email for me?", "What's the difference between a list and a tuple?",
             "How do I convert 350 °F to Celsius?", "Write a short poem about the sea.",
             "Why does my bread not rise?", "Translate 'good morning' into Portuguese, please.",
             "How many days are there between 3 March and 17 April?", "Is it safe to eat raw cookie dough?",
             "Explain recursion like I'm five.", "What should I pack for a weekend in the mountains?")
ANSWERS = ("Sure! Here's a short summary:", "Good question. In short:", "Of course. The quick answer is:",
           "Here you go:", "There are a few things to check first:", "Happy to help. Step by step:")
STEPS = ("First, check that the oven is hot enough.", "Then let it rest for ten minutes.",
         "The result is 176.67 °C, or about 177 °C.", "A tuple can't be changed after it's created; a list can.",
         "Make sure the yeast isn't older than six months.", "Bom dia! (or 'bom dia' in lower case.)",
         "That's 45 days, counting the start but not the end.", "No, it isn't: raw flour and eggs can carry germs.",
         "Pack layers, a rain jacket, water and a map.", "It's a function that calls itself on a smaller piece.")
ROLES = (("User", "Assistant"), ("### Human", "### Assistant"), ("Q", "A"), ("user", "assistant"),
         ("[INST]", "[/INST]"), ("<user>", "<assistant>"), ("Customer", "Agent"), ("Me", "Bot"))
HOSTS = ("example.com", "www.example.org", "docs.example.net", "api.example.io:8443", "bücher.example",
         "例え.テスト", "пример.испытание", "xn--r8jz45g.xn--zckzah", "192.0.2.17", "[2001:db8::1]",
         "localhost:3000", "sub.domain.example.co.uk")
PATHS = ("/", "/index.html", "/en-US/docs/Web/API", "/users/42/settings", "/search", "/a/b/c/d/e/f/",
         "/wiki/Stra%C3%9Fe", "/files/report%202024%20(final).pdf", "/~alice/notes.txt", "/v1/items;type=a",
         "/blog/2024/03/01/hello-world", "/straße/café")
QUERIES = ("", "?q=tokenizer+bpe", "?page=2&sort=desc", "?utm_source=newsletter&utm_medium=email&utm_campaign=spring",
           "?name=J%C3%BCrgen&city=K%C3%B6ln", "?ids=1,2,3&flag", "?redirect=https%3A%2F%2Fexample.com%2F")
FRAGMENTS = ("", "#top", "#section-2.3", "#L10-L20", "#:~:text=hello")
SCHEMES = ("https://", "http://", "ftp://", "ws://", "file://")
CURRENCIES = ("$", "€", "£", "¥", "₹", "₩", "₽", "₺", "₫", "฿", "₦", "CHF ", "R$", "zł", "kr", "₪", "USD ", "EUR ")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
DIGITS = ("0123456789", "٠١٢٣٤٥٦٧٨٩", "۰۱۲۳۴۵۶۷۸۹", "०१२३४५६७८९", "০১২৩৪৫৬৭৮৯", "０１２３４５６７８９", "๐๑๒๓๔๕๖๗๘๙")
SKIN = ("", "\U0001F3FB", "\U0001F3FC", "\U0001F3FD", "\U0001F3FE", "\U0001F3FF")
PEOPLE = ("👍", "👋", "🙏", "💪", "✌️", "🤝", "👏", "🧑‍💻", "👩‍🍳", "👨‍🚀", "🧑‍🏫", "👩‍⚕️")
JOINED = ("👨‍👩‍👧‍👦", "👩‍❤️‍👨", "🏳️‍🌈", "🏳️‍⚧️", "🐕‍🦺", "🐻‍❄️", "❤️‍🔥", "😶‍🌫️", "🧑🏽‍🤝‍🧑🏻", "👩🏾‍💻", "🧔🏻‍♂️")
FLAGS = ("🇯🇵", "🇫🇷", "🇧🇷", "🇮🇳", "🇳🇬", "🇺🇦", "🇰🇷", "🇪🇺", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "🏴󠁧󠁢󠁷󠁬󠁳󠁿")
SYMBOLS = ("1️⃣", "#️⃣", "*️⃣", "❤️", "❤︎", "☀️", "✔️", "⚠️", "©️", "™", "🎉", "😂", "🥲", "🫠", "🍕", "☕")


def pick(options: Sequence[str], *key: object) -> str:
    """One of ``options``, chosen by the SHA-256 of ``key`` (stable everywhere)."""
    digest = hashlib.sha256("\x1f".join(map(str, key)).encode("utf-8")).digest()
    return options[int.from_bytes(digest[:8], "big") % len(options)]


def number(*key: object, digits: int) -> int:
    digest = hashlib.sha256("\x1f".join(map(str, ("n", *key))).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % (10 ** digits)


def _chat(n: int) -> str:
    user, bot = pick(ROLES, "chat", n, "roles")
    turns = []
    for turn in range(1 + n % 3):
        question = pick(QUESTIONS, "chat", n, turn, "q")
        answer = f"{pick(ANSWERS, 'chat', n, turn, 'a')} {pick(STEPS, 'chat', n, turn, 's1')} {pick(STEPS, 'chat', n, turn, 's2')}"
        if user.startswith("["):
            turns.append(f"{user} {question} {bot} {answer}")
        elif user.startswith("<"):
            turns.append(f"{user}{question}</{user[1:]}\n{bot}{answer}</{bot[1:]}")
        elif user.startswith("#"):
            turns.append(f"{user}:\n{question}\n\n{bot}:\n{answer}")
        else:
            turns.append(f"{user}: {question}\n{bot}: {answer}")
    system = "" if n % 4 else f"System: You are a helpful assistant. Today is {_date(n)}.\n"
    return system + "\n\n".join(turns)


def _url(n: int, slot: int) -> str:
    return (pick(SCHEMES, "url", n, slot, "s") + pick(HOSTS, "url", n, slot, "h") + pick(PATHS, "url", n, slot, "p")
            + pick(QUERIES, "url", n, slot, "q") + pick(FRAGMENTS, "url", n, slot, "f"))


def _urls(n: int) -> str:
    name = pick(NAMES, "urls", n, "name")
    mail = f"{name.split()[0].lower()}.{pick(CITIES, 'urls', n, 'c').lower()}@{pick(HOSTS[:3], 'urls', n, 'm')}"
    return (f"Hi {name}, the link is {_url(n, 0)} (mirror: <{_url(n, 1)}>).\n"
            f"[docs]({_url(n, 2)}) · write to {mail} · see also {_url(n, 3)}, or {_url(n, 4)}.")


def _date(n: int) -> str:
    day, month, year = 1 + number("d", n, digits=2) % 28, 1 + number("m", n, digits=2) % 12, 1990 + number("y", n, digits=2) % 45
    hour, minute = number("h", n, digits=2) % 24, number("min", n, digits=2) % 60
    forms = (f"{year:04d}-{month:02d}-{day:02d}", f"{day}/{month}/{year}", f"{month}/{day}/{year % 100:02d}",
             f"{day} {MONTHS[month - 1]} {year}", f"{MONTHS[month - 1]} {day}, {year}", f"{day}.{month:02d}.{year}",
             f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:00Z", f"{year}年{month}月{day}日",
             f"{hour % 12 or 12}:{minute:02d} {'a.m.' if hour < 12 else 'p.m.'}", f"{hour:02d}h{minute:02d}")
    return pick(forms, "date", n)


def _amount(n: int, slot: int) -> str:
    whole, cents = number("amt", n, slot, digits=1 + n % 9), number("cents", n, slot, digits=2)
    grouped = f"{whole:,}"
    forms = (f"{grouped}.{cents:02d}", grouped.replace(",", ".") + f",{cents:02d}",
             grouped.replace(",", "\u00a0") + f",{cents:02d}", grouped.replace(",", "\u202f") + f",{cents:02d}",
             grouped.replace(",", "'") + f".{cents:02d}", f"{whole}", f"-{whole}.{cents:02d}", f"{whole}.{cents}%")
    symbol = pick(CURRENCIES, "cur", n, slot)
    amount = pick(forms, "form", n, slot)
    return f"{symbol}{amount}" if n % 2 else f"{amount} {symbol.strip()}"


def _numbers(n: int) -> str:
    digits = pick(DIGITS, "digits", n)
    native = "".join(digits[int(c)] for c in str(number("native", n, digits=6)))
    run = str(number("run", n, digits=18))[: 1 + n % 18]
    return (f"Order #{number('order', n, digits=7)} from {pick(NAMES, 'numbers', n)} in {pick(CITIES, 'numbers', n)}: "
            f"{1 + n % 12} × {pick(THINGS, 'numbers', n)} at {_amount(n, 0)}, total {_amount(n, 1)} "
            f"(VAT {number('vat', n, digits=2) % 25}%). Due {_date(n)}, paid {_date(n + 1000)}.\n"
            f"Ref. {run}; tel. +{number('cc', n, digits=2)} {number('tel', n, digits=3)} {number('tel2', n, digits=4)}; "
            f"{native}; {n / 7:.4f}; {n ** 5}; ½ + ¾ = 1¼; 3.0e-{n % 9}; 0x{number('hex', n, digits=6):X}.")


def _emoji(n: int) -> str:
    person = pick(PEOPLE, "emoji", n, "p")
    if person.endswith("\ufe0f") or "\u200d" in person:
        toned = person
    else:
        toned = person + pick(SKIN, "emoji", n, "s")
    name = pick(NAMES, "emoji", n)
    return (f"{name} {toned} sent {pick(JOINED, 'emoji', n, 'j')} from {pick(CITIES, 'emoji', n)} "
            f"{pick(FLAGS, 'emoji', n, 'f')}! {pick(SYMBOLS, 'emoji', n, 's1')}{pick(SYMBOLS, 'emoji', n, 's2')}"
            f"{pick(SYMBOLS, 'emoji', n, 's3')} See you at {_date(n)} {pick(JOINED, 'emoji', n, 'j2')}"
            f"{pick(SKIN[1:], 'emoji', n, 'tail') if n % 5 == 0 else ''}")


def _json(n: int) -> str:
    record = {"id": number("jid", n, digits=6), "name": pick(NAMES, "json", n), "city": pick(CITIES, "json", n),
              "price": {"amount": number("jp", n, digits=4) / 100, "currency": pick(("EUR", "USD", "JPY", "INR"), "j", n)},
              "tags": [pick(("new", "sale", "café", "日本", "✓", "a\tb", "line\nbreak"), "json", n, i) for i in range(n % 4)],
              "active": n % 2 == 0, "note": None if n % 3 else f"{pick(THINGS, 'json', n)} 👍", "created": _date(n)}
    indent = (None, 2, 4, "\t")[n % 4]
    return json.dumps(record if n % 5 else [record, {"nested": {"deeper": [record["tags"], {}]}}],
                      ensure_ascii=n % 6 == 0, indent=indent, sort_keys=n % 2 == 1)


def _markdown(n: int) -> str:
    name, city = pick(NAMES, "md", n), pick(CITIES, "md", n)
    return (f"# Trip to {city}\n\n## Day {1 + n % 5}\n\n"
            f"- [x] Book {pick(THINGS, 'md', n, 1)}\n- [ ] Ask **{name}** about _{pick(THINGS, 'md', n, 2)}_\n"
            f"  1. nested item with `inline code`\n  2. and a [link]({_url(n, 0)})\n\n"
            f"> {pick(STEPS, 'md', n)}\n\n| Item | Cost |\n|------|-----:|\n| Hotel | {_amount(n, 0)} |\n"
            f"| Food | {_amount(n, 1)} |\n\n```python\nprint(\"{city}\")\n```\n\n---\n*{_date(n)}*")


CODE = (
    'def total(prices: list[float], *, tax: float = 0.2) -> float:\n    """Sum the prices and add the tax."""\n'
    '    return round(sum(prices) * (1 + tax), 2)\n\n\nif __name__ == "__main__":\n    print(total([{a}, {b}]))\n',
    'const items = [{a}, {b}];\nfunction total(list) {{\n  return list.reduce((acc, x) => acc + x, 0);\n}}\n'
    'console.log(`Total: ${{total(items)}}`);\n',
    'SELECT name, SUM(amount) AS total\nFROM orders\nWHERE created_at >= \'{date}\' AND amount > {a}\n'
    'GROUP BY name\nORDER BY total DESC\nLIMIT {b};\n',
    '#!/bin/sh\nset -eu\nfor f in *.txt; do\n  wc -l "$f" >> counts.log\ndone\necho "done: $(date +%F)" && exit 0\n',
    '#include <stdio.h>\n\nint main(void) {{\n    int values[] = {{{a}, {b}}};\n'
    '    printf("%d\\n", values[0] + values[1]);\n    return 0;\n}}\n',
    '<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8"><title>{city}</title></head>\n'
    '<body>\n  <p class="note">Price: &euro;{a} &amp; more&hellip;</p>\n</body>\n</html>\n',
    '.card {{\n  margin: 0 auto;\n  padding: {a}px {b}px;\n  font-family: "Helvetica Neue", sans-serif;\n}}\n'
    '.card:hover > a::after {{ content: "→"; }}\n',
    'server:\n  host: 0.0.0.0\n  port: {b}\n  allowed:\n    - "{city}"\n    - \'*.example.org\'\nretries: {a}\n',
    'fn main() {{\n    let v: Vec<u32> = vec![{a}, {b}];\n    let s: u32 = v.iter().sum();\n'
    '    println!("{{}}", s);\n}}\n',
    'package main\n\nimport "fmt"\n\nfunc main() {{\n\tx := []int{{{a}, {b}}}\n\tfmt.Println(len(x), x)\n}}\n',
)


def _code(n: int) -> str:
    return pick(CODE, "code", n).format(a=number("ca", n, digits=3), b=number("cb", n, digits=3),
                                        date=_date(n), city=pick(CITIES, "code", n))


def _source(build: Callable[[int], str]) -> Callable[[], list[str]]:
    return lambda: [build(n) for n in range(COUNT)]


#: (source name, texts) in corpus order
TEMPLATE_SOURCES: tuple[tuple[str, Callable[[], list[str]]], ...] = (
    ("chat", _source(_chat)), ("urls", _source(_urls)), ("numbers", _source(_numbers)), ("emoji", _source(_emoji)),
    ("json", _source(_json)), ("markdown", _source(_markdown)), ("code", _source(_code)),
)
