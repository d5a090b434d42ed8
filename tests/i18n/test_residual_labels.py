"""The run page's "Replay vs measured" table draws, per kind, the mean of each action's
measured minus replayed duration (app/core/fidelity/measured.py residual_summary). Its en
header said "mean duration", so an imported run read "F  mean duration  -1.15 ms", a negative
duration; zh already said 时长平均偏差 (mean duration deviation). Each language's header must
say the column is a difference, in the word the chart's hover uses ("duration off by")."""

import pytest

from app import i18n

DIFFERENCE = {"en": "off", "zh": "偏差"}


@pytest.mark.parametrize("lang", sorted(DIFFERENCE))
def test_the_duration_residual_column_is_named_as_a_difference(lang):
    words = i18n.strings(lang)
    assert DIFFERENCE[lang] in words["live.table.mean_duration"]
