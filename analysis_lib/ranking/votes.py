"""The vote vocabulary and the battle format: which columns hold the two competitors and the vote, and what the
labels mean.

A battle is one row with the two competitors and the vote. By default the columns and labels are the LMArena
convention (:data:`LMARENA`): columns ``model_a``, ``model_b``, ``winner``; ``winner`` ∈ {``model_a``,
``model_b``, ``tie``, ``tie (bothbad)``}. The outcome for model A is ``y = 1`` (A won), ``0`` (B won) or ``0.5``
(either kind of tie: half a win, as LMArena and the Search Arena authors count it). :class:`BattleFormat` sets
other column names and labels, or names a numeric column of outcomes for A in ``[0, 1]`` instead of labels
(``outcome=``: graded or expected votes). The checks every battle frame passes are
:meth:`analysis_lib.ranking.Battles.from_frame`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The LMArena ``winner`` labels (null = no vote): the one definition of the library's vote vocabulary (the Search
#: Arena schema, the nugget records and the simulators use these).
WINNERS: tuple[str, str, str, str] = ("model_a", "model_b", "tie", "tie (bothbad)")
#: The two labels of a decided battle.
DECISIVE: tuple[str, ...] = WINNERS[:2]
#: Outcome for model A of each LMArena label: 1, 0, or 0.5 for either kind of tie.
OUTCOME_OF_WINNER: dict[str, float] = dict(zip(WINNERS, (1.0, 0.0, 0.5, 0.5), strict=True))


class InvalidBattlesError(ValueError):
    """Battles that cannot be fitted as given (missing column, rows without a vote, unknown labels, …)."""


@dataclass(frozen=True)
class BattleFormat:
    """Column names and outcome labels of a battle frame (defaults: the LMArena convention).

    ``a_wins`` / ``b_wins`` / ``ties`` list the ``winner`` labels meaning "A won" (y = 1), "B won" (y = 0) and
    "tie" (y = 0.5). ``outcome``: the name of a numeric column holding the outcome for A in ``[0, 1]`` (e.g. an
    expected vote), used instead of the ``winner`` labels (null there = no vote).
    """

    model_a: str = "model_a"
    model_b: str = "model_b"
    winner: str = "winner"
    a_wins: tuple[str, ...] = WINNERS[:1]
    b_wins: tuple[str, ...] = WINNERS[1:2]
    ties: tuple[str, ...] = WINNERS[2:]
    outcome: str | None = None

    def __post_init__(self) -> None:
        labels = [*self.a_wins, *self.b_wins, *self.ties]
        if len(set(labels)) != len(labels):
            raise ValueError(f"an outcome label is listed twice: {labels}")
        if not self.a_wins or not self.b_wins:
            raise ValueError("the format needs at least one label for 'A won' and one for 'B won'")

    @property
    def outcome_of_label(self) -> dict[str, float]:
        """``label -> y`` (outcome for A)."""
        return {**dict.fromkeys(self.a_wins, 1.0), **dict.fromkeys(self.b_wins, 0.0), **dict.fromkeys(self.ties, 0.5)}

    @property
    def vote_column(self) -> str:
        """The column holding the vote: ``outcome`` when given, else ``winner``."""
        return self.outcome or self.winner


LMARENA = BattleFormat()
