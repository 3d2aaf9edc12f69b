"""Passes: Pass, PassManager and the standard pipeline."""
from .base import Pass, PassManager, PassError
from .pipeline import PASS_NAMES, standard_pipeline

__all__ = ["Pass", "PassManager", "PassError", "PASS_NAMES", "standard_pipeline"]
