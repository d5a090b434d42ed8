"""/runs' import card: the rank-order field's placeholder is the order an import takes when
dp/tp/pp are given and the field is left empty. It showed tp-dp-pp, while such an import
lays the run out as tp-pp-dp (the probe's own default), so a user who trusted it read a
different layout from the one stored."""

import pytest

from app.core.layout.topology import DEFAULT_ORDER

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_order_placeholder_is_the_order_an_import_takes(page, base_url, lang):
    page.goto(f"{base_url}/runs?lang={lang}", wait_until="domcontentloaded")
    shown = page.get_attribute("#upload-order", "placeholder")
    assert shown == "-".join(DEFAULT_ORDER) == "tp-pp-dp"
