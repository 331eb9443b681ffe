"""Validity of the counterfactual generator: exact-variant rate on labelled sentence pairs.

    python benchmarks/validity_counterfactuals.py [--split dev|heldout|all] [--errors N]

Every case is a source text, a dimension, the attribute to move it to, and the gold variant
written by someone else (a public dataset's own counterpart sentence) or labelled by hand. The
generator runs once per set (``counterfactuals``, group strategy, default options unless the set
says otherwise) and a case counts as exact when the variant equals the gold text byte for byte.
Failures are put in error classes by the first word that differs ("expected him, got his").
A gold of ``-`` says the variant must be left out (its subject cannot change whole, e.g. a name
the lexicon does not know); a variant made there is counted as ``half_changed``.

Each set has a tuning split (``dev``: the rules were written looking at it) and a held-out split
(``heldout``: never looked at while writing rules; see benchmarks/validity/README.md). Results
and the command that produced them go to benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from pairwise_polars.counterfactual import counterfactuals

HERE = Path(__file__).resolve().parent / "validity"
_MARK = re.compile(r"\[([^\]>]+)>([^\]]+)\]")
_OBJECT, _DETERMINER = {"him", "them"}, {"his", "their"}
_PERSON_NOUN = re.compile(r"\b(?:man|woman|men|women|guy|lady|gentleman)\b", re.IGNORECASE)
_HE_TO_SHE = {"he": "she", "him": "her", "his": "her", "himself": "herself"}
LEFT_OUT = "-"
"""A gold of ``-``: the generator must leave the variant out (and report it)."""


@dataclass(frozen=True)
class Case:
    set: str
    split: str
    dimension: str
    source: str
    target: str  # the attribute to move the source to
    gold: str
    options: tuple[tuple[str, Any], ...] = field(default=())  # counterfactuals() keywords


# -- the sets -------------------------------------------------------------------------------------


def winobias(path: Path, split: str | None = None, suffix: str = "") -> Iterator[Case]:
    """WinoBias pro/anti-stereotyped pairs: each line once as written (pro) and once with the
    anti-stereotyped line's pronouns; each is the other's gold. A pair whose pronouns do not
    correspond by grammatical case (``her`` -> ``he``) is a labelling slip and is left out, and
    so is a line that also calls someone a man or a woman (WinoBias swaps pronouns only, so its
    gold keeps "a generous man" for "she"). ``split`` None: the file's own ``split`` column."""
    for row in pl.read_csv(path, separator="\t", quote_char=None).iter_rows(named=True):
        marks = _MARK.findall(row["sentence"])
        if not all(_same_case(a, b) for a, b in marks):
            continue
        if suffix and _PERSON_NOUN.search(row["sentence"]):
            continue
        pro = _MARK.sub(lambda m: m.group(1), row["sentence"])
        anti = _MARK.sub(lambda m: m.group(2), row["sentence"])
        name = f"winobias-type{row['type']}{suffix}"
        part = split or row["split"]
        first = marks[0][0].lower()
        pro_gender = "male" if first in ("he", "him", "his") else "female"
        anti_gender = "female" if pro_gender == "male" else "male"
        yield Case(name, part, "gender", pro, anti_gender, anti)
        yield Case(name, part, "gender", anti, pro_gender, pro)


def _same_case(a: str, b: str) -> bool:
    forms = [{"he", "she"}, {"him", "her"}, {"his", "her"}, {"his", "hers"}, {"himself", "herself"}]
    return {a.lower(), b.lower()} in forms


def discrim_eval(path: Path, split: str) -> Iterator[Case]:
    """discrim-eval scenarios filled for 4 races x 2 genders: from each row, every other value of
    one dimension must give the dataset's own row for that value (the rest held fixed)."""
    rows = pl.read_ndjson(path)
    races = {"white": "White", "Black": "Black", "Asian": "Asian", "Hispanic": "Hispanic"}
    options = (("values", {"race": list(races.values())}), ("case_style", "ap"))
    for row in rows.iter_rows(named=True):
        for dim, other in (("gender", "race"), ("race", "gender")):
            same = rows.filter(
                (pl.col("decision_question_id") == row["decision_question_id"])
                & (pl.col(other) == row[other])
                & (pl.col(dim) != row[dim])
            )
            for gold in same.iter_rows(named=True):
                target = races.get(gold[dim], gold[dim]) if dim == "race" else gold[dim]
                yield Case(
                    "discrim-eval", split, dim, row["filled_template"], target,
                    gold["filled_template"], options,
                )  # fmt: skip


def winogender(path: Path) -> Iterator[Case]:
    """WinoGender sentences (one per template, the participant named): the masculine sentence
    as the dataset fills it, and the feminine one made from it by he/him/his -> she/her/her
    (unambiguous in that direction); each is the other's gold. The dataset's feminine fill is
    the same text, so the gold for "her" (him or his) is the dataset's own masculine sentence."""
    for row in pl.read_csv(path, separator="\t", quote_char=None).iter_rows(named=True):
        male = row["sentence"]
        female = re.sub(
            r"\b(?:he|him|his|himself)\b",
            lambda m: _same_letter_case(_HE_TO_SHE[m.group(0).lower()], m.group(0)),
            male,
            flags=re.IGNORECASE,
        )
        yield Case("winogender", row["split"], "gender", male, "female", female)
        yield Case("winogender", row["split"], "gender", female, "male", male)


def _same_letter_case(word: str, like: str) -> str:
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


_DE_RACES = {"White": "white", "Black": "Black", "Asian": "Asian", "Hispanic": "Hispanic",
             "Native American": "Native American"}  # fmt: skip
_DE_DEV = {0, 1, 3, 4}  # the scenarios of discrim_eval_templated_subset.jsonl (dev already)


def discrim_eval_templates(path: Path) -> Iterator[Case]:
    """discrim-eval's decision scenarios as templates (SelfBlindingLLMs' placeholder version):
    filled for 5 races x 2 genders in the dataset's style (AP case: "white", "Black"), each fill
    moved to every other value of one dimension. Split: a hash of the scenario id (the four
    scenarios of the dev subset stay dev)."""
    genders: dict[str, dict[str, str]] = {
        "male": {"gender": "male", "Sub": "He", "sub": "he", "obj": "him", "pos": "his",
                 "Pos": "His", "reflex": "himself"},
        "female": {"gender": "female", "Sub": "She", "sub": "she", "obj": "her", "pos": "her",
                   "Pos": "Her", "reflex": "herself"},
    }  # fmt: skip
    templates = []
    for row in pl.read_ndjson(path).iter_rows(named=True):
        text = re.sub(r"\b([Aa]) \{race\}", lambda m: "{" + m.group(1) + "_race}",
                      row["filled_template"])  # fmt: skip
        for verb in set(re.findall(r"\{(\w+)\}", text)) - {"race", "a_race", "A_race"}:
            for forms in genders.values():
                forms.setdefault(verb, verb)  # {has}, {is}, {needs}: singular for both
        qid = row["decision_question_id"]
        split = "dev" if qid in _DE_DEV else stable_split(f"discrim-eval-templates:{qid}")
        templates.append({"split": split, "text": text})
    races = {
        race: {"race": form, "a_race": f"{_article(form)} {form}",
               "A_race": f"{_article(form).title()} {form}"}
        for race, form in _DE_RACES.items()
    }  # fmt: skip
    options = {"values": {"race": list(_DE_RACES)}, "case_style": "ap"}
    spec = {"slots": {"gender": genders, "race": races}, "templates": templates, "options": options}
    yield from _templated(spec, "discrim-eval-templates")


def _article(word: str) -> str:
    return "an" if word[0].lower() in "aeiou" else "a"


def stable_split(key: str) -> str:
    """The split of a case key: held out for 2 keys in 5 (the first 8 hex digits of the key's
    SHA-1, modulo 5, below 2), dev for the rest. How the sets added after issue 13 were split."""
    return "heldout" if int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) % 5 < 2 else "dev"


def labelled(path: Path) -> Iterator[Case]:
    """Hand-labelled pairs: set, split, dimension, source, target, gold[, options as JSON]."""
    for row in pl.read_csv(path, separator="\t", quote_char=None).iter_rows(named=True):
        options = tuple(json.loads(row.get("options") or "{}").items())
        yield Case(row["set"], row["split"], row["dimension"], row["source"], row["target"],
                   row["gold"], options)  # fmt: skip


def pairs(path: Path) -> Iterator[Case]:
    """Sentence pairs written by hand, the same prompt about a woman and about a man (split
    column written in the file): each is the other's gold, so every pair is two cases."""
    for row in pl.read_csv(path, separator="\t", quote_char=None).iter_rows(named=True):
        name = path.stem.replace("_", "-")
        yield Case(name, row["split"], "gender", row["female"], "male", row["male"])
        yield Case(name, row["split"], "gender", row["male"], "female", row["female"])


def all_cases() -> list[Case]:
    cases = [*winobias(HERE / "winobias_dev.tsv", "dev")]
    if (HERE / "winobias_heldout.tsv").exists():
        cases += winobias(HERE / "winobias_heldout.tsv", "heldout")
    cases += winobias(HERE / "winobias_type1_test.tsv", suffix="-test")
    cases += winogender(HERE / "winogender.tsv")
    cases += discrim_eval(HERE / "discrim_eval_templated_subset.jsonl", "dev")
    cases += discrim_eval_templates(HERE / "discrim_eval_templates.jsonl")
    for path in sorted(HERE.glob("labelled_*.tsv")):
        cases += labelled(path)
    for path in sorted(HERE.glob("templated_*.json")):
        cases += templated(path)
    cases += pairs(HERE / "subject_pairs.tsv")
    return cases


def templated(path: Path) -> Iterator[Case]:
    """Decision scenarios written as templates: every fill of a template is a source, and the
    fill with one slot changed is its gold for that dimension."""
    yield from _templated(json.loads(path.read_text("utf-8")),
                          f"templated-{path.stem.removeprefix('templated_')}")  # fmt: skip


def _templated(spec: dict[str, Any], name: str) -> Iterator[Case]:
    slots: dict[str, dict[str, dict[str, str]]] = spec["slots"]  # dim -> value -> {key: text}
    for template in spec["templates"]:
        split, text = template["split"], template["text"]
        dims = [d for d in slots if any("{" + k for k in _keys(slots[d]) if "{" + k in text)]
        fills = _fills(slots, dims)
        for fill in fills:
            source = _render(text, slots, fill)
            for dim in dims:
                for value in slots[dim]:
                    if value == fill[dim]:
                        continue
                    gold = _render(text, slots, {**fill, dim: value})
                    yield Case(name, split, dim, source, value, gold,
                               tuple(spec.get("options", {}).items()))  # fmt: skip


def _keys(values: dict[str, dict[str, str]]) -> set[str]:
    return {k for forms in values.values() for k in forms}


def _fills(slots: dict[str, dict[str, dict[str, str]]], dims: list[str]) -> list[dict[str, str]]:
    fills: list[dict[str, str]] = [{}]
    for dim in dims:
        fills = [{**f, dim: v} for f in fills for v in slots[dim]]
    return fills


def _render(text: str, slots: dict[str, dict[str, dict[str, str]]], fill: dict[str, str]) -> str:
    for dim, value in fill.items():
        for key, form in slots[dim][value].items():
            text = text.replace("{" + key + "}", form)
    return text[:1].upper() + text[1:]


# -- running and scoring --------------------------------------------------------------------------


def run(cases: list[Case]) -> pl.DataFrame:
    """One row per case with the generator's output (null when no variant was made)."""
    frame = pl.DataFrame(
        [{**c.__dict__, "options": json.dumps(dict(c.options), sort_keys=True)} for c in cases]
    )
    outputs = []
    for (dim, options), part in frame.group_by("dimension", "options", maintain_order=True):
        sources = part.select("source").unique(maintain_order=True)
        made = counterfactuals(
            sources, dim, text="source", control=False, report=True, **json.loads(options)
        ).frame
        variants = made.filter(pl.col("role") == "variant").select(
            "source", target="attribute", output="input"
        )
        outputs.append(part.join(variants, on=["source", "target"], how="left"))
    result = pl.concat(outputs)
    left_out = pl.col("gold") == LEFT_OUT
    return result.with_columns(
        # a gold of "-": the variant must be left out (the subject cannot change whole)
        exact=pl.when(left_out)
        .then(pl.col("output").is_null())
        .otherwise(pl.col("output") == pl.col("gold")),
        half_changed=left_out & pl.col("output").is_not_null(),
        error=pl.struct("output", "gold").map_elements(
            lambda r: _error_class(r["output"], r["gold"]), return_dtype=pl.String
        ),
    )


def _error_class(output: str | None, gold: str) -> str | None:
    if gold == LEFT_OUT:
        return None if output is None else "made, but the subject cannot change whole"
    if output is None:
        return "no variant made"
    if output == gold:
        return None
    got, want = re.findall(r"\w+|\W", output), re.findall(r"\w+|\W", gold)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=want, b=got, autojunk=False).get_opcodes():
        if tag != "equal":
            expected = "".join(want[i1:i2]).strip() or "(nothing)"
            found = "".join(got[j1:j2]).strip() or "(nothing)"
            return f"expected {expected!r}, got {found!r}"
    return "other"


def summary(result: pl.DataFrame) -> pl.DataFrame:
    return (
        result.group_by("set", "split", "dimension")
        .agg(
            cases=pl.len(),
            exact=pl.col("exact").fill_null(False).sum(),
            left_out_as_expected=((pl.col("gold") == LEFT_OUT) & pl.col("output").is_null()).sum(),
            half_changed=pl.col("half_changed").sum(),
        )
        .with_columns(rate=(pl.col("exact") / pl.col("cases")).round(4))
        .sort("split", "set", "dimension")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "heldout", "all"), default="all")
    parser.add_argument("--errors", type=int, default=8, help="error classes listed per set")
    parser.add_argument("--show", type=int, default=0, help="failing cases printed per set")
    parser.add_argument("--set", help="only sets whose name contains this")
    args = parser.parse_args(argv)
    cases = all_cases()
    if args.split != "all":
        cases = [c for c in cases if c.split == args.split]
    if args.set:
        cases = [c for c in cases if args.set in c.set]
    started = time.perf_counter()
    result = run(cases)
    seconds = time.perf_counter() - started
    with pl.Config(tbl_rows=100, tbl_formatting="MARKDOWN", tbl_hide_column_data_types=True,
                   tbl_hide_dataframe_shape=True, fmt_str_lengths=200):  # fmt: skip
        print(summary(result))
        print(f"\n{len(cases):,} cases in {seconds:.1f} s\n")
        for (name, split, dim), part in result.group_by("set", "split", "dimension",
                                                        maintain_order=True):  # fmt: skip
            errors = Counter(e for e in part["error"] if e is not None)
            if errors:
                listed = "; ".join(f"{e} ({n})" for e, n in errors.most_common(args.errors))
                print(f"- {name} / {split} / {dim}: {listed}")
            for row in (
                part.filter(~pl.col("exact").fill_null(False)).head(args.show).iter_rows(named=True)
            ):
                print(f"    source: {row['source']}\n    output: {row['output']}\n"
                      f"    gold:   {row['gold']}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
