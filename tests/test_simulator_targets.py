"""The Search Arena simulators keep their own targets (constants in ``analysis_lib.search_arena.simulate``, each
naming the paper's table or section): they must equal the book's paper values (``bookbuild.paper_values``), typed
once each, so that a calibration target and the number the book compares with cannot drift apart."""

from __future__ import annotations

import pytest

from analysis_lib.search_arena.schema import ATTRIBUTION_COUNTS
from analysis_lib.search_arena.simulate import attribution, calibration
from bookbuild import paper_values


@pytest.mark.parametrize("count", ATTRIBUTION_COUNTS)
def test_attribution_betas_are_the_papers_sa_f6r_estimates(count: str) -> None:
    paper = paper_values.lookup("SA-F6R", f"beta {count}").paper
    planted = attribution.BETAS[count]
    # a count the paper reports no number for ("not significant") is planted at 0
    assert planted == (0.0 if paper is None else float(paper))  # type: ignore[arg-type]
    assert set(attribution.BETAS) == set(ATTRIBUTION_COUNTS)


@pytest.mark.parametrize("group", ["tech_coding", "community_blog", "social_media", "wiki"])
def test_release_simulator_source_betas_are_the_papers_sa_f6l_estimates(group: str) -> None:
    paper = paper_values.lookup("SA-F6L", f"beta {group}").paper
    assert calibration.BETAS[f"cites_{group}"] == float(paper)  # type: ignore[arg-type]


def test_attribution_subset_size_is_the_papers() -> None:
    assert attribution.N_SUBSET == paper_values.lookup("SA-F6R", "conversations in the attribution subset").paper
