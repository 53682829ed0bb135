"""What the tests that compare with torch 1.13's tables share: the autograd
fallback set to "nothing" for the module (an operator with no autograd
kernel lets the autograd keys fall through, as torch 1.13's tables show),
whatever the process default or TURNOUT_AUTOGRAD_FALLBACK_MODE says.

    from torch113_tables import autograd_fallback_nothing  # noqa: F401 (autouse)
"""

import pytest

import turnout


@pytest.fixture(autouse=True, scope="module")
def autograd_fallback_nothing():
    mode = turnout._C._get_autograd_fallback_mode()
    turnout._C._set_autograd_fallback_mode("nothing")
    yield
    turnout._C._set_autograd_fallback_mode(mode)
