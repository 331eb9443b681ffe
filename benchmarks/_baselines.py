"""The pairing and aggregation of ``bench_pairs``, written plainly in pandas and in DuckDB SQL.

The same group strategy as ``form_pairs`` (every variant paired with its group's reference, both
sides' ids, roles, attributes and, for the full frame, inputs, outputs and a skip reason), the
same synthetic score, and a summary by dimension (pairs, equivalence and divergence rates, mean).
No group validation: the package's check before the join is extra work these do not do.
"""

from __future__ import annotations

import time

import _data

KEY_COLUMNS = ["id", "group_id", "role", "dimension", "attribute"]
METRIC = "pairwise-bias"
SCORE_SEED = 12345
SUMMARY = ["dimension", "n_pairs", "equivalence_rate", "divergence_rate", "mean_divergence"]


def child_pandas(path: str, keys: bool) -> dict:
    import numpy as np
    import pandas as pd

    t0 = time.perf_counter()
    df = pd.read_parquet(path, columns=KEY_COLUMNS if keys else None)
    t1 = time.perf_counter()
    side = ["id", "role", "attribute"] + ([] if keys else ["input", "output"])
    is_ref = (df["role"] == "reference").to_numpy(dtype=bool, na_value=False)
    is_var = ~is_ref & df["role"].notna().to_numpy()
    ref = df.loc[is_ref, ["group_id", *side]]
    var = df.loc[is_var, ["group_id", "dimension", *side]]
    ref.columns = ["group_id", *(f"{c}_a" for c in side)]
    var.columns = ["group_id", "dimension", *(f"{c}_b" for c in side)]
    pairs = ref.merge(var, on="group_id", how="inner")
    ids = pairs[["group_id", "id_a", "id_b"]]
    pairs.insert(0, "pair_id", pd.util.hash_pandas_object(ids, index=False).to_numpy())
    if not keys:
        flags = {}
        for s in ("a", "b"):
            out = pairs[f"output_{s}"]
            flags[f"null output_{s}"] = out.isna().to_numpy()
            blank = ~out.str.contains(r"\S", regex=True, na=True)
            flags[f"empty output_{s}"] = blank.to_numpy(dtype=bool, na_value=False)
        reason = np.full(len(pairs), None, dtype=object)
        for i in np.flatnonzero(np.logical_or.reduce(list(flags.values()))):
            reason[i] = "; ".join(name for name, hit in flags.items() if hit[i])
        pairs["skip_reason"] = pd.Series(reason, index=pairs.index, dtype="str")
    t2 = time.perf_counter()
    key = (pairs["id_a"] * 7919 + pairs["id_b"] * 104729 + SCORE_SEED) % 1_000_003
    scored = pairs.assign(score=(key * key % 1_000_003) % 5 / 4, metric=METRIC)
    scored["equivalent"] = scored["score"] <= 0.0
    scored["divergent"] = scored["score"] >= 0.5
    summary = (
        scored.groupby(["metric", "dimension"], sort=True)
        .agg(
            n_pairs=("score", "size"),
            n_scored=("score", "count"),
            equivalence_rate=("equivalent", "mean"),
            divergence_rate=("divergent", "mean"),
            mean_divergence=("score", "mean"),
        )
        .reset_index()
    )
    t3 = time.perf_counter()
    return {
        "read_s": t1 - t0,
        "pair_s": t2 - t1,
        "agg_s": t3 - t2,
        "total_s": t3 - t0,
        "n_pairs": len(pairs),
        "summary": [[_plain(v) for v in row] for row in summary[SUMMARY].itertuples(index=False)],
        "string_dtype": str(df["role"].dtype),
    }


def child_duckdb(path: str, keys: bool, memory_limit_gb: float) -> dict:
    import duckdb

    t0 = time.perf_counter()
    con = duckdb.connect()
    con.execute(f"SET memory_limit = '{memory_limit_gb:.1f}GiB'")
    con.execute(f"SET temp_directory = '{_sql_str(str(_data.WORK / 'duckdb_tmp'))}'")
    side = ["id", "role", "attribute"] + ([] if keys else ["input", "output"])
    source = f"read_parquet('{_sql_str(path)}')"
    cols = ", ".join(side)
    selected = ", ".join(f"r.{c} AS {c}_a, v.{c} AS {c}_b" for c in side)
    skip = ""
    if not keys:
        reasons = ", ".join(
            f"CASE WHEN {o} IS NULL THEN 'null {o}' END, "
            # Not trim(x) = '': that copies every text and cost ~10 CPU-s at 5M rows.
            f"CASE WHEN NOT regexp_matches({o}, '\\S') THEN 'empty {o}' END"
            for o in ("output_a", "output_b")
        )
        skip = f", NULLIF(concat_ws('; ', {reasons}), '') AS skip_reason"
    sql = f"""
        WITH ref AS (SELECT group_id, {cols} FROM {source} WHERE role = 'reference'),
        var AS (SELECT group_id, dimension, {cols} FROM {source} WHERE role <> 'reference'),
        pairs AS (
            SELECT hash(r.group_id, r.id, v.id) AS pair_id, r.group_id, v.dimension, {selected}
            FROM ref AS r JOIN var AS v ON r.group_id = v.group_id
        )
        SELECT *{skip} FROM pairs
    """
    pairs = con.sql(sql).to_arrow_table()
    t1 = time.perf_counter()
    con.register("pairs", pairs)
    summary = con.sql(f"""
        WITH scored AS (
            SELECT '{METRIC}' AS metric, dimension,
                (((id_a * 7919 + id_b * 104729 + {SCORE_SEED}) % 1000003) ** 2 % 1000003 % 5)
                    / 4 AS score
            FROM pairs
        )
        SELECT dimension, count(*) AS n_pairs, avg((score <= 0)::INT) AS equivalence_rate,
            avg((score >= 0.5)::INT) AS divergence_rate, avg(score) AS mean_divergence
        FROM scored GROUP BY metric, dimension ORDER BY metric, dimension
    """).fetchall()
    t2 = time.perf_counter()
    return {
        "pair_s": t1 - t0,
        "agg_s": t2 - t1,
        "total_s": t2 - t0,
        "n_pairs": pairs.num_rows,
        "summary": [[_plain(v) for v in row] for row in summary],
    }


def _sql_str(text: str) -> str:
    return text.replace("'", "''")


def _plain(value):
    return value.item() if hasattr(value, "item") else value
