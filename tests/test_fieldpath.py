"""bookbuild.fieldpath: the paths a paper-values row names, read from library results of every shape."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import polars as pl
import pytest

from bookbuild import fieldpath
from bookbuild.fieldpath import Missing, PathError, expand, parse, resolve


@dataclass(frozen=True)
class Traffic:
    mean_per_day: float
    peak: int
    reason: str = ""


class Pair(NamedTuple):
    traffic: Traffic
    board: pl.DataFrame


BOARD = pl.DataFrame({"model": ["a", "b", "c, d"], "rating": [1010.0, 990.0, 1000.0], "rank": [1, 3, 2]})


def test_parse_reads_steps_selections_indices_templates_and_a_factor():
    path = parse('board[model="c, d"].rating * 100')
    assert [s.name for s in path.steps] == ["board", "rating"]
    assert path.steps[0].select == (("model", "c, d"),) and path.factor == 100.0
    assert parse("a[0].b").steps[0].index == 0
    assert parse("board[model=*,rank=1].rating").template == ("model",)
    for bad in ("", "a..b", "a[model]", "1a"):
        with pytest.raises(PathError, match="result path"):
            parse(bad)


def test_resolve_reads_attributes_keys_and_one_row_frames():
    root = {"t": Traffic(454.0, 796), "one": pl.DataFrame({"share": [0.25]})}
    assert resolve(root, parse("t.mean_per_day"))[0] == 454.0
    assert resolve(root, parse("one.share * 100"))[0] == 25.0
    assert resolve(Pair(Traffic(1.0, 2), BOARD), parse("board[model=b].rating"))[0] == 990.0
    assert resolve(Pair(Traffic(1.0, 2), BOARD), parse('board[model="c, d"].rank'))[0] == 3 - 1


def test_a_missing_row_or_none_is_no_value_with_the_results_reason():
    value, _ = resolve({"board": BOARD}, parse("board[model=zz].rating"))
    assert isinstance(value, Missing) and "no model zz" in value.reason
    value, _ = resolve({"t": None}, parse("t.peak"))
    assert isinstance(value, Missing)
    value, _ = resolve(Traffic(float("nan"), 1, reason="no timestamps"), parse("mean_per_day"))
    assert value == Missing("no timestamps")


def test_a_field_the_result_lacks_is_an_error_naming_the_path():
    with pytest.raises(PathError, match=r"'t.nope'.*Traffic has no field 'nope'"):
        resolve({"t": Traffic(1.0, 2)}, parse("t.nope"))
    with pytest.raises(PathError, match="no column 'score'"):
        resolve({"board": BOARD}, parse("board[model=a].score"))
    with pytest.raises(PathError, match="frame of 3 rows"):
        resolve({"board": BOARD}, parse("board.rating"))
    with pytest.raises(PathError, match="2 rows"):
        resolve({"board": pl.concat([BOARD, BOARD])}, parse("board[model=a].rating"))
    with pytest.raises(PathError, match="template"):
        resolve({"board": BOARD}, parse("board[model=*].rating"))


def test_expand_gives_one_value_per_row_in_the_frames_order():
    found = expand({"board": BOARD}, parse("board[model=*].rating"))
    assert [(keys, value) for keys, value, _ in found] == [
        ({"model": "a"}, 1010.0), ({"model": "b"}, 990.0), ({"model": "c, d"}, 1000.0)]
    records = [Traffic(1.0, 5), Traffic(2.0, 7)]
    assert [v for _, v, _ in expand({"days": records}, parse("days[peak=*].mean_per_day * 2"))] == [2.0, 4.0]


def test_a_notes_placeholders_read_the_template_keys_then_the_owner_then_the_root():
    (keys, _, owner), *_ = expand(Pair(Traffic(1.0, 2), BOARD), parse("board[model=*].rating"))
    context = fieldpath.Context(keys, owner, Pair(Traffic(1.0, 2), BOARD))
    assert "{model} ranks {rank}; peak {traffic.peak}".replace("{traffic.peak}", "{traffic}").format_map(
        context).startswith("a ranks 1; peak Traffic(")
    with pytest.raises(KeyError):
        "{nowhere}".format_map(context)


def test_a_path_may_start_by_selecting_rows_of_the_root_frame():
    assert resolve(BOARD, parse("[model=b].rating"))[0] == 990.0
    assert [k["model"] for k, _, _ in expand(BOARD, parse("[model=*].rank"))] == ["a", "b", "c, d"]
    with pytest.raises(PathError, match="cannot read step 2"):
        parse("board.[model=a]")


def test_a_none_where_rows_would_be_selected_is_no_value():
    value, _ = resolve({"board": None, "reason": "no votes"}, parse("board[model=a].rating"))
    assert value == Missing("no votes")
