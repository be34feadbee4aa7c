"""The progress display's columns and times, as Paddle 3.3.1's `ProgressBar` prints
them: step numbers right-aligned to the digits of the total (3 columns without one),
whole seconds from 1s, and an ETA in whole seconds, m:ss or h:mm:ss."""
import io

import pytest

from irflow.hapi.progressbar import ProgressBar, format_duration, format_eta


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("num, current, expected", [
    (12, 5, "step  5/12"), (12, 12, "step 12/12"), (100, 7, "step   7/100"),
    (9, 3, "step 3/9"), (None, 5, "step   5"), (None, 1234, "step 1234"),
])
def test_step_column_is_padded_to_the_total(num, current, expected):
    for out in (io.StringIO(), Terminal()):
        ProgressBar(num, file=out, verbose=2 if type(out) is io.StringIO else 1) \
            .update(current, [("loss", 0.5)])
        assert out.getvalue().lstrip("\r").startswith(expected + (" [" if num and
                                                                  isinstance(out, Terminal)
                                                                  else " - loss"))


@pytest.mark.parametrize("seconds, expected", [
    (0, "0s"), (1.0, "1s"), (1.7, "2s"), (42.4, "42s"), (0.0191, "19ms"), (0.000899, "899us"),
])
def test_format_duration_whole_seconds_from_one(seconds, expected):
    assert format_duration(seconds) == expected


@pytest.mark.parametrize("seconds, expected", [
    (0.004, "0s"), (7.9, "7s"), (60, "60s"), (125, "2:05"), (3600, "60:00"),
    (3725, "1:02:05"),
])
def test_format_eta_in_whole_seconds(seconds, expected):
    assert format_eta(seconds) == expected
