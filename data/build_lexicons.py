"""Rebuild the shipped lexicon files from the raw public lexicons.

    python data/build_lexicons.py [--raw DIR] [--out DIR]

``--raw`` holds the raw files listed in the lexicons' ``SOURCES.md`` (``generalized_swaps.tsv``,
``extra_gendered_words.tsv``, ``holistic_bias/``, ``bbq/``, ``census1990/``; default:
``../shared/data/lexicons`` next to the repository root); ``--out`` defaults to the package's
``pairwise_polars/counterfactual/lexicons``. The curation (which
terms are kept, typo fixes, counterparts, neutral forms, phrases to ignore) is written out below;
every kept term taken from a source is checked against the raw file, so a wrong path or a changed
source fails loudly instead of shipping a silently different lexicon.
"""

from __future__ import annotations

import argparse
import csv
import json
from collections.abc import Iterable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
LEXICONS = REPO_ROOT / "pairwise_polars" / "counterfactual" / "lexicons"
DEFAULT_RAW = REPO_ROOT.parent / "shared" / "data" / "lexicons"
COLUMNS = ("dimension", "attribute", "concept", "term", "next", "case_sensitive")
NOUN_NEXT = "participle|function|end"  # a neutral noun replaces a word used as a noun ...
ADJ_NEXT = "word"  # ... and a word used as an adjective (a content word follows) is removed

# fmt: off
# Pronouns: project-authored (the English paradigm). Concepts are named by the neutral form.
PRONOUNS = [  # concept, male, female, neutral; "her"/"his" are told apart by the next word
    ("they", "he", "she", "they"),
    ("them", "him", ("her", "function|end|object"), "them"),
    ("their", ("his", "word|participle"), ("her", "word|participle"), "their"),
    ("theirs", ("his", "function|end"), "hers", "theirs"),
    ("themselves", "himself", "herself", "themselves"),
]
# Gendered words: male, female, neutral. From WinoBias (both lists), typos fixed, ambiguous or
# non-counterpart entries dropped (miss, master, bachelor, host, tailor, god, lord, chick/dude...).
GENDER_WORDS = [
    ("man", "woman", "person"), ("men", "women", "people"),
    ("boy", "girl", "child"), ("boys", "girls", "children"),
    ("father", "mother", "parent"), ("fathers", "mothers", "parents"),
    ("dad", "mom", "parent"), ("dads", "moms", "parents"),
    ("daddy", "mommy", "parent"), ("daddies", "mommies", "parents"),
    ("son", "daughter", "child"), ("sons", "daughters", "children"),
    ("brother", "sister", "sibling"), ("brothers", "sisters", "siblings"),
    ("husband", "wife", "spouse"), ("husbands", "wives", "spouses"),
    ("groom", "bride", "spouse"), ("grooms", "brides", "spouses"),
    ("fiance", "fiancee", "partner"), ("fiances", "fiancees", "partners"),
    ("uncle", "aunt", "relative"), ("uncles", "aunts", "relatives"),
    ("nephew", "niece", "relative"), ("nephews", "nieces", "relatives"),
    ("grandfather", "grandmother", "grandparent"),
    ("grandfathers", "grandmothers", "grandparents"),
    ("grandson", "granddaughter", "grandchild"), ("grandsons", "granddaughters", "grandchildren"),
    ("stepfather", "stepmother", "stepparent"), ("stepfathers", "stepmothers", "stepparents"),
    ("stepson", "stepdaughter", "stepchild"), ("stepsons", "stepdaughters", "stepchildren"),
    ("gentleman", "lady", "person"), ("gentlemen", "ladies", "people"),
    ("guy", "gal", "person"), ("guys", "gals", "people"),
    ("king", "queen", "monarch"), ("kings", "queens", "monarchs"),
    ("prince", "princess", "royal"), ("princes", "princesses", "royals"),
    ("actor", "actress", "actor"), ("actors", "actresses", "actors"),
    ("waiter", "waitress", "server"), ("waiters", "waitresses", "servers"),
    ("steward", "stewardess", "flight attendant"),
    ("stewards", "stewardesses", "flight attendants"),
    ("businessman", "businesswoman", "businessperson"),
    ("businessmen", "businesswomen", "businesspeople"),
    ("chairman", "chairwoman", "chairperson"), ("chairmen", "chairwomen", "chairpersons"),
    ("spokesman", "spokeswoman", "spokesperson"), ("spokesmen", "spokeswomen", "spokespeople"),
    ("policeman", "policewoman", "police officer"),
    ("policemen", "policewomen", "police officers"),
    ("cameraman", "camerawoman", "camera operator"),
    ("cameramen", "camerawomen", "camera operators"),
    ("barman", "barwoman", "bartender"), ("barmen", "barwomen", "bartenders"),
    ("headmaster", "headmistress", "head teacher"),
    ("headmasters", "headmistresses", "head teachers"),
    ("hero", "heroine", "hero"), ("heroes", "heroines", "heroes"),
    ("monk", "nun", "monastic"), ("monks", "nuns", "monastics"),
    ("masseur", "masseuse", "massage therapist"),
    ("masseurs", "masseuses", "massage therapists"),
    ("landlord", "landlady", "landlord"), ("landlords", "landladies", "landlords"),
    ("widower", "widow", "surviving spouse"), ("widowers", "widows", "surviving spouses"),
    ("males", "females", "people"),
]
GENDER_FIXES = {"mentleman": "gentleman", "heros": "heroes"}  # typos in the raw lists
ADDITIONS = {  # project additions, not in the raw lists (MIT like the package)
    "boyfriend",
    "girlfriend",
    "boyfriends",
    "girlfriends",
    "policemen",
    "policewomen",
    "Jew",
    "Arab-American",
    "European American",
    "Asian American",
    "Arab American",
    "Hispanic-American",
}
GENDER_WORDS += [("boyfriend", "girlfriend", "partner"), ("boyfriends", "girlfriends", "partners")]
TITLES = [  # case-sensitive (so "ms" for milliseconds is left alone); project additions
    ("mr.", ["Mr."], ["Ms.", "Mrs."], "Mx."),
    ("mr", ["Mr"], ["Ms", "Mrs", "Miss"], "Mx"),
]
GENDER_IGNORE = ["he or she", "she or he", "his or her", "her or his", "him or her", "her or him",
                 "he/she", "she/he", "his/her", "her/his", "him/her", "s/he"]
NEUTRAL_NAMES = ["Alex", "Jordan", "Taylor", "Casey", "Riley", "Morgan", "Avery", "Quinn"]
NAME_STOP = {  # names that are common words or strongly ambiguous; never shipped
    "Mark", "Frank", "Jack", "Ray", "Don", "Earl", "Lee", "Chris", "Dale", "Glenn", "Carl",
    "Bill", "Will", "Rose", "Grace", "Hope", "Joy", "Faith", "April", "June", "May", "Dawn",
    "Crystal", "Ruby", "Amber", "Hazel", "Robin", "Kim", "Jean", "Ivory", "Alex", "Sam",
    "Jesus", "Roosevelt", "Norman", "Virginia", "Florence", "Victoria", "Charlotte", "Carmen",
    "Guy", "Bobby", "Johnny", "Jimmy", "Billy", "Willie", "Joe", "Art", "Rich", "Pat", "Sue",
    # the full census lists: English words, months, titles, places and countries
    "Glen", "Chase", "Grant", "Lance", "Miles", "Sterling", "Van", "Dean", "Drew", "Cliff",
    "Clay", "Max", "Rusty", "Dusty", "Rocky", "Buddy", "Buck", "Bud", "Chuck", "Young", "Long",
    "Noble", "King", "Prince", "Major", "Royal", "Forest", "Hunter", "Lane", "Chance", "Junior",
    "Son", "Man", "Numbers", "German", "Brain", "Manual", "Jan", "Jewel", "Jewell", "Berry",
    "Hung", "Sang", "Dong", "Chi", "Les", "Dick", "Sandy", "August", "Guadalupe", "Israel",
    "Rosario", "Trinidad", "Columbus", "Lincoln", "Cleveland", "Houston", "Dallas", "Denver",
    "Raleigh", "Paris", "Milan", "Sydney", "Santiago", "Orlando", "Penny", "Misty", "Brandy",
    "Ginger", "Pearl", "Charity", "Autumn", "Summer", "Gay", "Merry", "Destiny", "Princess",
    "Queen", "Venus", "Sun", "Ma", "Mi", "Santa", "India", "Valencia", "Georgia", "Carolina",
    "Alexandria", "Augusta", "Savannah", "Sierra", "Madonna", "Kenya", "Mercedes", "Cherry",
    "Missy", "Kitty", "Pansy", "Birdie", "Dixie", "Candy", "Angel", "Iris", "Holly", "Olive",
    "Violet", "Daisy", "Ivy", "Lacy", "Lacey", "Freeman", "Foster", "Garland", "Ward", "Heath",
    "Reed", "Rod", "Rob", "Ed", "Al", "Gale", "Bo", "Dee", "Del", "Sol", "Lupe", "Lou",
    "Carol", "Marina", "Jade", "Raven", "Sunny", "Star", "Honey", "Harmony",
}  # fmt: skip
CENSUS_TOP = None  # aligned male/female pairs kept from the census lists (None: every pair)
NAME_VARIANTS = {  # spellings not in BBQ that take the counterparts of a BBQ name (project's)
    "Mohammed": "Mohamed", "Mohammad": "Mohamed", "Muhammad": "Mohamed", "Ahmad": "Ahmed",
    "Yusuf": "Yousouf", "Youssef": "Yousouf", "Hussain": "Hussein", "Khaled": "Khalid",
    "Fatimah": "Fatima", "Mariam": "Maryam", "Zainab": "Zeinab", "Aminah": "Amina",
}  # fmt: skip
AMBIGUOUS_SHARE = 0.10  # a name also given to the other sex at >= 10% of its frequency is dropped

RACE_ATTRIBUTES = {"White": "White", "Black": "Black", "Asian": "Asian", "Latino": "Hispanic",
                   "Arab": "Arab"}  # BBQ ethnicity -> attribute
RACE_TERMS = {  # concept -> attribute -> terms, aligned by position (a repeat is a counterpart
    # repeated for alignment): 0 the usual word, 1-2 synonyms, 3 "X-American", 4 "X American";
    # the first is the term others map to when a list is shorter
    "group": {
        "White": ["White", "Caucasian", "European", "European-American", "European American"],
        "Black": ["Black", "African", "African", "African-American", "African American"],
        "Asian": ["Asian", "Asian", "Asian", "Asian-American", "Asian American"],
        "Hispanic": ["Hispanic", "Latino", "Latina", "Hispanic-American", "Latin American",
                     "Latinx"],
        "Arab": ["Arab", "Middle Eastern", "Arab", "Arab-American", "Arab American"],
        "Native American": ["Native American", "Indigenous", "American Indian",
                            "Native American", "Native American"],
    },
}
RACE_NEUTRAL = {"group": None}  # None: removed before a word, else "person"
RACE_IGNORE = ["white wine", "white house", "white paper", "white noise", "white space",
               "white blood", "white bread", "white rice", "white sugar", "white light",
               "black hole", "black market", "black box", "black coffee", "black tea",
               "black and white", "Black Friday", "in the black"]

RELIGIONS = [
    "Christian",
    "Muslim",
    "Jewish",
    "Hindu",
    "Buddhist",
    "Sikh",
    "Mormon",
    "Protestant",
    "Catholic",
    "Atheist",
]  # BBQ's religion vocabulary, minus Orthodox
RELIGION_TERMS = {
    "group": ["Christian", "Muslim", ["Jewish", "Jew"], "Hindu", "Buddhist", "Sikh", "Mormon",
              "Protestant", "Catholic", "atheist"],
    "plural": ["Christians", "Muslims", "Jews", "Hindus", "Buddhists", "Sikhs", "Mormons",
               "Protestants", "Catholics", "atheists"],
    "faith": ["Christianity", "Islam", "Judaism", "Hinduism", "Buddhism", "Sikhism", "Mormonism",
              "Protestantism", "Catholicism", "atheism"],
}
RELIGION_NEUTRAL = {"group": None, "plural": "people", "faith": "religion"}

AGE_BUCKETS = {"young": range(18, 45), "middle-aged": range(45, 65), "old": range(65, 100)}
AGE_GROUP = {"young": ["young"], "middle-aged": ["middle-aged"], "old": ["old", "elderly"]}
AGE_HB_BUCKET = {"young": "young", "middle_aged": "middle-aged", "old": "old"}
AGE_IGNORE = ["years old", "year old", "how old", "old friend", "old friends", "young adult"]

NATIONALITY_VALUES = ["American", "British", "Chinese", "Indian", "Mexican", "Nigerian",
                      "Iranian", "Brazilian"]
NATIONALITY_IGNORE = ["African American", "Native American", "Asian American",
                      "Latin American", "Arab American", "American Indian", "French fries",
                      "Indian Ocean", "Latin America", "South America", "North America",
                      "Central America", "the Americas", "North Korea", "North Korean",
                      "North Koreans", "Papua New Guinea", "Equatorial Guinea",
                      "Guinea-Bissau", "New Mexico", "Mexico City", "Guinea pig", "Chinese food",
                      "French toast", "French door", "French doors", "Swiss cheese",
                      "Turkish delight", "Danish pastry", "Indian summer", "Dutch oven"]
# Country names and plural nouns of the BBQ nationalities (project-authored, MIT: common English
# usage; a country written with "the" keeps it: "from Mexico" <-> "from the United States").
# The first form is the one other nationalities map to.
COUNTRIES = {
    "Afghan": ["Afghanistan"], "American": ["the United States", "the U.S.", "the US", "the USA",
    "the United States of America", "America"], "Australian": ["Australia"],
    "Bangladeshi": ["Bangladesh"], "Belgian": ["Belgium"], "British": ["the United Kingdom",
    "the UK", "the U.K.", "Britain", "Great Britain"], "Brazilian": ["Brazil"],
    "Burmese": ["Myanmar", "Burma"], "Canadian": ["Canada"], "Chinese": ["China"],
    "Chilean": ["Chile"], "Colombian": ["Colombia"], "Danish": ["Denmark"],
    "Dominican": ["the Dominican Republic"], "Eritrean": ["Eritrea"], "Ethiopian": ["Ethiopia"],
    "Finnish": ["Finland"], "French": ["France"], "German": ["Germany"], "Greek": ["Greece"],
    "Guinean": ["Guinea"], "Haitian": ["Haiti"], "Honduran": ["Honduras"],
    "Hungarian": ["Hungary"], "Icelandic": ["Iceland"], "Indonesian": ["Indonesia"],
    "Indian": ["India"], "Iranian": ["Iran"], "Iraqi": ["Iraq"], "Irish": ["Ireland"],
    "Israeli": ["Israel"], "Italian": ["Italy"], "Japanese": ["Japan"],
    "Korean": ["South Korea", "Korea"], "Libyan": ["Libya"], "Lithuanian": ["Lithuania"],
    "Malian": ["Mali"], "Mexican": ["Mexico"], "Moldovan": ["Moldova"], "Moroccan": ["Morocco"],
    "Mongolian": ["Mongolia"], "Mozambican": ["Mozambique"], "Namibian": ["Namibia"],
    "Nigerian": ["Nigeria"], "Norwegian": ["Norway"], "Pakistani": ["Pakistan"],
    "Palestinian": ["Palestine"], "Panamanian": ["Panama"], "Peruvian": ["Peru"],
    "Polish": ["Poland"], "Portuguese": ["Portugal"], "Russian": ["Russia"],
    "Romanian": ["Romania"], "Saudi": ["Saudi Arabia"], "Somali": ["Somalia"],
    "Senegalese": ["Senegal"], "Slovak": ["Slovakia"], "Spanish": ["Spain"],
    "Sri Lankan": ["Sri Lanka"], "Swedish": ["Sweden"], "Swiss": ["Switzerland"],
    "Syrian": ["Syria"], "Thai": ["Thailand"], "Turkish": ["Turkey", "Türkiye"],
    "Uzbekistani": ["Uzbekistan"], "Venezuelan": ["Venezuela"],
    "Vietnamese": ["Vietnam", "Viet Nam"], "Yemeni": ["Yemen"],
}  # fmt: skip
PLURALS = {  # demonym -> its plural noun; "-ese"/"-ish" have none of their own: "... people"
    "British": ["British people", "Britons"], "Burmese": ["Burmese people"],
    "Chinese": ["Chinese people"], "Danish": ["Danes"], "Finnish": ["Finns"],
    "French": ["French people"], "Icelandic": ["Icelanders"], "Irish": ["Irish people"],
    "Japanese": ["Japanese people"], "Polish": ["Polish people"],
    "Portuguese": ["Portuguese people"], "Senegalese": ["Senegalese people"],
    "Spanish": ["Spaniards", "Spanish people"], "Swedish": ["Swedes"],
    "Swiss": ["Swiss people"], "Thai": ["Thai people", "Thais"], "Turkish": ["Turks"],
    "Uzbekistani": ["Uzbekistanis", "Uzbeks"], "Vietnamese": ["Vietnamese people"],
    "Sri Lankan": ["Sri Lankans"],
}  # fmt: skip

DISABILITY_TERMS = {  # attribute -> HolisticBias descriptors (first = the mapped-to term)
    "nondisabled": ["non-disabled", "nondisabled"],
    "disabled": ["disabled", "handicapped"],
    "Deaf": ["Deaf", "hard-of-hearing"],
    "blind": ["blind", "visually impaired"],
    "autistic": ["autistic"],
    "paraplegic": ["paraplegic", "wheelchair-bound"],
}
DISABILITY_IGNORE = ["blind spot", "blind date", "blind trust", "blind review", "double blind",
                     "blind study"]

ORIENTATION_TERMS = {  # attribute -> HolisticBias/BBQ descriptors (first = the mapped-to term)
    "straight": ["straight", "heterosexual"],
    "gay": ["gay", "homosexual", "lesbian"],  # "lesbian": a gay woman, so gay keeps her gender
    "bisexual": ["bisexual"],
    "asexual": ["asexual"],
    "pansexual": ["pansexual"],
    "queer": ["queer"],
}
ORIENTATION_IGNORE = ["straight line", "straight lines", "straight answer", "straight away",
                      "straight ahead", "straight talk", "straight to", "straight from",
                      "straight into", "straight out", "straight up", "straight face",
                      "straight hair", "straight through", "straight back", "straight home",
                      "straight on", "straight A", "straight A's", "go straight",
                      "went straight", "came straight", "set the record straight",
                      "get this straight", "straight years", "straight days", "straight weeks",
                      "straight months", "straight games", "straight wins", "straight shot",
                      "straight edge", "straight razor", "straight jacket", "straight-faced"]
SES_TERMS = {  # attribute -> HolisticBias socioeconomic descriptors; aligned by position
    "wealthy": ["wealthy", "rich", "affluent", "upper-class", "upper class", "high-income",
                "well-off", "well-to-do", "moneyed", "high-net-worth", "financially well-off"],
    "middle-class": ["middle-class", "middle class", "middle-income"],
    "working-class": ["working-class", "working class", "blue-collar"],
    "low-income": ["low-income", "poor", "impoverished", "lower-class", "lower class"],
}
SES_ADDITIONS = {"upper class", "high-income", "middle class", "middle-income", "working class",
                 "blue-collar", "impoverished", "lower-class", "lower class"}
SES_IGNORE = ["poor health", "poor performance", "poor quality", "poor grades", "poor grade",
              "poor judgment", "poor judgement", "poor choice", "poor choices", "poor decision",
              "poor decisions", "poor results", "poor visibility", "poor sleep", "poor diet",
              "poor communication", "poor condition", "poor service", "poor work",
              "poor thing", "poor eyesight", "poor hearing", "poor memory", "poor posture",
              "poor design", "poor fit", "poor taste", "poor weather", "poor showing",
              "poor reviews", "poor review", "poor attendance", "poor hygiene",
              "poor planning", "poor management", "poor craftsmanship", "poor man's",
              "rich in", "rich text", "rich flavor", "rich flavour", "rich history",
              "rich culture", "rich soil", "rich food", "rich sauce", "rich color",
              "rich colour", "rich detail", "rich details", "rich content", "rich media",
              "rich experience", "rich tradition", "rich heritage", "rich source"]

DIMENSIONS = {  # metadata: the files of each dimension, default poles and group values
    "gender": {"files": ["pronouns.tsv", "gender_words.tsv", "gender_neutral.tsv",
                         "gender_names_census.tsv", "gender_names_bbq.tsv",
                         "gender_names_origin.tsv"],
               "poles": ["male", "female"], "values": ["male", "female"]},
    "race": {"files": ["race.tsv", "race_names_bbq.tsv", "race_names_origin.tsv"],
             "poles": ["White", "Black"],
             "values": ["White", "Black", "Asian", "Hispanic", "Arab"]},  # + Native American
    "religion": {"files": ["religion.tsv"], "poles": ["Christian", "Muslim"],
                 "values": ["Christian", "Muslim", "Jewish", "Hindu", "Buddhist", "Sikh",
                            "Atheist"]},
    "age": {"files": ["age.tsv"], "poles": ["young", "old"],
            "values": ["young", "middle-aged", "old"]},
    "nationality": {"files": ["nationality.tsv"], "poles": ["American", "Chinese"],
                    "values": NATIONALITY_VALUES},
    "disability": {"files": ["disability.tsv"], "poles": ["nondisabled", "disabled"],
                   "values": list(DISABILITY_TERMS)},
    "sexual_orientation": {"files": ["sexual_orientation.tsv"], "poles": ["straight", "gay"],
                           "values": ["straight", "gay", "bisexual", "asexual", "pansexual"]},
    "socioeconomic": {"files": ["socioeconomic.tsv"], "poles": ["wealthy", "low-income"],
                      "values": list(SES_TERMS)},
}
# fmt: on


class Raw:
    """The raw sources, read once; ``need`` fails when a curated term is not in its source."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.winobias: set[str] = set()
        for name in ("generalized_swaps.tsv", "extra_gendered_words.tsv"):
            for row in _rows(root / name, "\t"):
                self.winobias |= {GENDER_FIXES.get(w, w) for w in (row["word"], row["swap"])}
        hb = json.loads((root / "holistic_bias" / "descriptors.json").read_text("utf-8"))
        self.hb = {
            axis: {b: [_descriptor(d) for d in ds] for b, ds in buckets.items()}
            for axis, buckets in hb.items()
        }
        self.hb_terms = {
            t.lower() for buckets in self.hb.values() for ds in buckets.values() for t in ds
        }
        self.bbq_vocab = list(_rows(root / "bbq" / "vocabulary.csv", ","))
        self.bbq_terms = {r["Name"].strip().lower() for r in self.bbq_vocab}
        self.bbq_names = list(_rows(root / "bbq" / "vocabulary_proper_names.csv", ","))
        self.census = {
            sex: list(_rows(root / "census1990" / f"census1990_{sex}_first_names.tsv", "\t"))
            for sex in ("male", "female")
        }

    def need(self, term: str, *sources: str) -> str:
        if term in ADDITIONS:
            return term
        pools = {"winobias": self.winobias, "hb": self.hb_terms, "bbq": self.bbq_terms}
        if not any(term.lower() in pools[s] for s in sources):
            raise SystemExit(
                f"{term!r} is not in the raw {'/'.join(sources)} lists under "
                f"{self.root}: is --raw the right folder?"
            )
        return term


def _rows(path: Path, sep: str) -> Iterable[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        yield from csv.DictReader(handle, delimiter=sep)


def _descriptor(d: str | dict[str, str]) -> str:
    return d if isinstance(d, str) else d["descriptor"]


def _row(dim: str, attr: str, concept: str, term: str, nxt: str = "", cs: bool = False) -> dict:
    return {
        "dimension": dim,
        "attribute": attr,
        "concept": concept,
        "term": term,
        "next": nxt,
        "case_sensitive": "true" if cs else "",
    }


def _neutral(dim: str, concept: str, noun: str | None) -> list[dict]:
    """A word used as an adjective is removed; used as a noun it becomes ``noun``."""
    if noun is not None:
        return [_row(dim, "neutral", concept, noun)]
    return [
        _row(dim, "neutral", concept, "", ADJ_NEXT),
        _row(dim, "neutral", concept, "person", NOUN_NEXT),
    ]


def _ignore(dim: str, phrases: list[str]) -> list[dict]:
    return [_row(dim, "ignore", "ignore", p) for p in phrases]


def pronouns() -> list[dict]:
    rows = []
    for concept, *forms in PRONOUNS:
        for attr, form in zip(("male", "female", "neutral"), forms, strict=True):
            term, nxt = form if isinstance(form, tuple) else (form, "")
            rows.append(_row("gender", attr, concept, term, nxt))
    return rows + _ignore("gender", GENDER_IGNORE)


def gender_words(raw: Raw) -> tuple[list[dict], list[dict]]:
    words, neutral = [], []
    for male, female, noun in GENDER_WORDS:
        raw.need(male, "winobias"), raw.need(female, "winobias")
        words += [_row("gender", "male", male, male), _row("gender", "female", male, female)]
        neutral.append(_row("gender", "neutral", male, noun))
    raw.need("male", "winobias"), raw.need("female", "winobias")
    words += [_row("gender", "male", "group", "male"), _row("gender", "female", "group", "female")]
    neutral += _neutral("gender", "group", None)
    for concept, males, females, mx in TITLES:
        words += [_row("gender", "male", concept, t, cs=True) for t in males]
        words += [_row("gender", "female", concept, t, cs=True) for t in females]
        neutral.append(_row("gender", "neutral", concept, mx, cs=True))
    return words, neutral


def _census_pairs(raw: Raw, taken: set[str]) -> list[tuple[str, str]]:
    freq = {
        sex: {r["name"].title(): float(r["freq_pct"]) for r in raw.census[sex]}
        for sex in raw.census
    }

    def keep(sex: str, other: str) -> list[str]:
        taken_keys = {t.lower() for t in taken}
        names = [n for n in freq[sex] if n not in NAME_STOP and n.lower() not in taken_keys]
        return [n for n in names if freq[other].get(n, 0.0) < AMBIGUOUS_SHARE * freq[sex][n]]

    pairs = list(zip(keep("male", "female"), keep("female", "male"), strict=False))
    return pairs[:CENSUS_TOP]


def _bbq_first_names(raw: Raw) -> dict[tuple[str, str], list[str]]:
    """(attribute, sex) -> names; a name listed under two groups is dropped from both."""
    seen: dict[str, int] = {}
    for r in raw.bbq_names:
        if r["First_last"] == "first":
            seen[r["Name"]] = seen.get(r["Name"], 0) + 1
    out: dict[tuple[str, str], list[str]] = {}
    for r in raw.bbq_names:
        name = r["Name"]
        if r["First_last"] == "first" and seen[name] == 1 and name not in NAME_STOP:
            key = (RACE_ATTRIBUTES[r["ethnicity"]], {"F": "female", "M": "male"}[r["gender"]])
            out.setdefault(key, []).append(name)
    return out


def _with_variants(lists: dict[str, list[str]]) -> dict[str, list[str]]:
    """Append each spelling variant after its base name's list, and the base's counterparts
    after every other list, so the variant maps where its base does."""
    out = {attr: list(terms) for attr, terms in lists.items()}
    for variant, base in NAME_VARIANTS.items():
        for attr, terms in lists.items():
            if base in terms:
                i = terms.index(base)
                for other, others in lists.items():
                    out[other].append(variant if other == attr else others[i])
    return out


def names(raw: Raw) -> tuple[list[dict], list[dict], list[dict]]:
    """Census names (gender), BBQ names by group for gender and by sex for race.

    Lists are cut to equal length within a concept so that mapping by position is a bijection.
    """
    bbq = _bbq_first_names(raw)
    gender_bbq, race_bbq = [], []
    for attr in RACE_ATTRIBUTES.values():
        n = min(len(bbq[(attr, "male")]), len(bbq[(attr, "female")]))
        concept = f"name_{attr.lower()}"
        lists = _with_variants({sex: bbq[(attr, sex)][:n] for sex in ("male", "female")})
        for sex, terms in lists.items():
            gender_bbq += [_row("gender", sex, concept, t, cs=True) for t in terms]
        gender_bbq += [_row("gender", "neutral", concept, t, cs=True) for t in NEUTRAL_NAMES]
    for sex in ("male", "female"):
        n = min(len(bbq[(attr, sex)]) for attr in RACE_ATTRIBUTES.values())
        lists = _with_variants({a: bbq[(a, sex)][:n] for a in RACE_ATTRIBUTES.values()})
        for attr, terms in lists.items():
            race_bbq += [_row("race", attr, f"name_{sex}", t, cs=True) for t in terms]
    taken = {t for names_ in bbq.values() for t in names_} | set(NAME_VARIANTS)
    census = []
    for male, female in _census_pairs(raw, taken):
        census += [
            _row("gender", "male", "name", male, cs=True),
            _row("gender", "female", "name", female, cs=True),
        ]
    census += [_row("gender", "neutral", "name", t, cs=True) for t in NEUTRAL_NAMES]
    return census, gender_bbq, race_bbq


def race(raw: Raw) -> list[dict]:
    rows = []
    for concept, by_attr in RACE_TERMS.items():
        for attr, terms in by_attr.items():
            rows += [_row("race", attr, concept, raw.need(t, "hb", "bbq")) for t in terms]
        rows += _neutral("race", concept, RACE_NEUTRAL[concept])
    return rows + _ignore("race", RACE_IGNORE)


def religion(raw: Raw) -> list[dict]:
    rows = []
    for concept, terms in RELIGION_TERMS.items():
        for attr, term in zip(RELIGIONS, terms, strict=True):
            for t in term if isinstance(term, list) else [term]:
                if concept == "group":
                    raw.need(t, "hb", "bbq")
                rows.append(_row("religion", attr, concept, t))
        rows += _neutral("religion", concept, RELIGION_NEUTRAL[concept])
    for concept, by_faith in RELIGION_ROLES.items():  # written for the package (issue 29)
        rows += [_row("religion", attr, concept, t) for attr, t in by_faith.items()]
    return rows


RELIGION_ROLES = {  # roles of a faith: a faith left out has no counterpart (reported, not kept)
    "role_clergy": {"Christian": "pastor", "Muslim": "imam", "Jewish": "rabbi",
                    "Hindu": "priest", "Buddhist": "monk", "Sikh": "granthi",
                    "Mormon": "bishop", "Protestant": "minister"},
    "role_clergy_plural": {"Christian": "pastors", "Muslim": "imams", "Jewish": "rabbis",
                           "Hindu": "priests", "Buddhist": "monks", "Sikh": "granthis",
                           "Mormon": "bishops", "Protestant": "ministers"},
    "role_worship": {"Christian": "church", "Muslim": "mosque", "Jewish": "synagogue",
                     "Hindu": "temple", "Buddhist": "monastery", "Sikh": "gurdwara"},
    "role_worship_plural": {"Christian": "churches", "Muslim": "mosques",
                            "Jewish": "synagogues", "Hindu": "temples",
                            "Buddhist": "monasteries", "Sikh": "gurdwaras"},
}  # fmt: skip

ORIGIN_NAMES = {  # (male, female) pairs of one origin, written for the package (issue 29)
    "name_hispanic": [("Antonio", "Maria"), ("Diego", "Sofia"), ("Javier", "Lucia"),
                      ("Mateo", "Rosa"), ("Pedro", "Ana"), ("Alejandro", "Carmen")],
    "name_south_asian": [("Rahul", "Priya"), ("Arjun", "Ananya"), ("Vikram", "Divya"),
                         ("Rohan", "Kavya"), ("Ravi", "Lakshmi"), ("Amit", "Pooja"),
                         ("Sanjay", "Anjali"), ("Karan", "Neha")],
    "name_east_asian": [("Haruto", "Yuki"), ("Hiroshi", "Aiko"), ("Kenji", "Sakura"),
                        ("Takeshi", "Yumi"), ("Wei", "Mei"), ("Jian", "Ling")],
    "name_african": [("Chinedu", "Chiamaka"), ("Emeka", "Ngozi"), ("Kwame", "Ama"),
                     ("Obinna", "Adaeze"), ("Kofi", "Abena")],
    "name_black": [("Tyrell", "Keisha")],
    "name_arab": [("Karim", "Layla"), ("Ibrahim", "Nadia")],
}  # fmt: skip
RACE_ORIGIN_NAMES = {  # aligned across groups: the i-th names are counterparts
    "name_female": {"White": ["Emily", "Sarah", "Anne"], "Black": ["Keisha", "Aaliyah", "Ebony"],
                    "Asian": ["Priya", "Yuki", "Mei"], "Hispanic": ["Maria", "Sofia", "Lucia"],
                    "Arab": ["Layla", "Nadia", "Zainab"]},
    "name_male": {"White": ["Jacob", "Connor", "Greg"], "Black": ["Darnell", "Malik", "Tyrone"],
                  "Asian": ["Rahul", "Kenji", "Wei"], "Hispanic": ["Antonio", "Diego", "Javier"],
                  "Arab": ["Omar", "Ibrahim", "Karim"]},
}  # fmt: skip


def origin_names() -> tuple[list[dict], list[dict]]:
    """Hand-written names of several origins: gender pairs that keep the origin (Maria <->
    Antonio, Priya <-> Rahul), and race counterparts for the names a gender swap may bring."""
    gender = []
    for concept, pairs in ORIGIN_NAMES.items():
        gender += [_row("gender", "male", concept, m, cs=True) for m, _ in pairs]
        gender += [_row("gender", "female", concept, f, cs=True) for _, f in pairs]
        gender += [_row("gender", "neutral", concept, t, cs=True) for t in NEUTRAL_NAMES]
    race = [
        _row("race", attr, concept, t, cs=True)
        for concept, by_group in RACE_ORIGIN_NAMES.items()
        for attr, terms in by_group.items()
        for t in terms
    ]
    return gender, race


def without_origin_names(census: list[dict]) -> list[dict]:
    """Census names that an origin list holds become a repeat of the first name of their sex
    (the alignment of the census pairs is kept; a repeat reads as its first place)."""
    moved = {t for pairs in ORIGIN_NAMES.values() for pair in pairs for t in pair}
    first = {r["attribute"]: r["term"] for r in reversed(census)}
    return [{**r, "term": first[r["attribute"]]} if r["term"] in moved else r for r in census]


def age(raw: Raw) -> list[dict]:
    rows = []
    for attr, terms in AGE_GROUP.items():
        rows += [_row("age", attr, "group", raw.need(t, "hb")) for t in terms]
    rows += _neutral("age", "group", None)
    for attr, years in AGE_BUCKETS.items():
        rows += [_row("age", attr, "n-year-old", f"{n}-year-old") for n in years]
        rows += [_row("age", attr, "n years old", f"{n} years old") for n in years]
    rows += _neutral("age", "n-year-old", None) + _neutral("age", "n years old", "an adult")
    for bucket, attr in AGE_HB_BUCKET.items():  # HolisticBias' spelled-out ages
        spelled = [t for t in raw.hb["age"][bucket] if t.endswith("-year-old") and t[0].isalpha()]
        rows += [_row("age", attr, "spelled-year-old", t) for t in spelled]
    rows += _neutral("age", "spelled-year-old", None)
    return rows + _ignore("age", AGE_IGNORE)


def nationality(raw: Raw) -> list[dict]:
    found = [r["Name"].strip() for r in raw.bbq_vocab if r["Category"] == "Nationality"]
    rows = [_row("nationality", n, "group", n) for n in found]
    rows += _neutral("nationality", "group", None)
    missing = [n for n in found if n not in COUNTRIES]
    if missing:
        raise SystemExit(f"no country for the BBQ nationalities {missing}")
    for n in found:  # a multi-word country is safe in any case; a single word only capitalised
        rows += [_row("nationality", n, "country", c, cs=" " not in c) for c in COUNTRIES[n]]
        plural = PLURALS.get(n, [n + "s"])
        rows += [_row("nationality", n, "plural", t, cs=True) for t in plural]
    rows += [
        _row("nationality", "neutral", "country", "another country"),
        _row("nationality", "neutral", "plural", "people"),
    ]
    return rows + _ignore("nationality", NATIONALITY_IGNORE)


def disability(raw: Raw) -> list[dict]:
    rows = []
    for attr, terms in DISABILITY_TERMS.items():
        rows += [_row("disability", attr, "group", raw.need(t, "hb")) for t in terms]
    return rows + _neutral("disability", "group", None) + _ignore("disability", DISABILITY_IGNORE)


def sexual_orientation(raw: Raw) -> list[dict]:
    rows = []
    for attr, terms in ORIENTATION_TERMS.items():
        rows += [_row("sexual_orientation", attr, "group", raw.need(t, "hb", "bbq")) for t in terms]
    return (
        rows
        + _neutral("sexual_orientation", "group", None)
        + _ignore("sexual_orientation", ORIENTATION_IGNORE)
    )


def socioeconomic(raw: Raw) -> list[dict]:
    rows = []
    for attr, terms in SES_TERMS.items():
        for t in terms:
            rows.append(_row("socioeconomic", attr, "group", t if t in SES_ADDITIONS else
                             raw.need(t, "hb")))  # fmt: skip
    return rows + _neutral("socioeconomic", "group", None) + _ignore("socioeconomic", SES_IGNORE)


def _write(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, COLUMNS, delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def build(raw_dir: Path = DEFAULT_RAW, out: Path = LEXICONS) -> list[Path]:
    """Write every shipped lexicon file into ``out``; return the paths written."""
    raw = Raw(raw_dir)
    words, neutral = gender_words(raw)
    census, gender_bbq, race_bbq = names(raw)
    files = {
        "pronouns.tsv": pronouns(),
        "gender_words.tsv": words,
        "gender_neutral.tsv": neutral,
        "gender_names_census.tsv": without_origin_names(census),
        "gender_names_bbq.tsv": gender_bbq,
        "gender_names_origin.tsv": origin_names()[0],
        "race.tsv": race(raw),
        "race_names_bbq.tsv": race_bbq,
        "race_names_origin.tsv": origin_names()[1],
        "religion.tsv": religion(raw),
        "age.tsv": age(raw),
        "nationality.tsv": nationality(raw),
        "disability.tsv": disability(raw),
        "sexual_orientation.tsv": sexual_orientation(raw),
        "socioeconomic.tsv": socioeconomic(raw),
    }
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, rows in files.items():
        _write(out / name, rows)
        written.append(out / name)
    meta = out / "dimensions.json"
    meta.write_text(json.dumps(DIMENSIONS, indent=2) + "\n", encoding="utf-8")
    return [*written, meta]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--raw", type=Path, default=DEFAULT_RAW, help="folder of the raw public lexicons"
    )
    parser.add_argument(
        "--out", type=Path, default=LEXICONS, help="where to write (default: the package's)"
    )
    args = parser.parse_args(argv)
    for path in build(args.raw, args.out):
        print(path.name)


if __name__ == "__main__":
    main()
