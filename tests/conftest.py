"""Hypothesis profiles: "ci" (default: fast, and derandomized, so a run on a clean
machine sees the examples the last one saw) and "deep" (for hand runs, random, so
each explores anew): HYPOTHESIS_PROFILE=deep python -m pytest"""
import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("deep", max_examples=1000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
