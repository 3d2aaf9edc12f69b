"""Passes: Pass, PassManager and the standard pipeline."""
from .base import Pass, PassManager, PassError
from .pipeline import PASS_NAMES, fusion_summary, standard_pipeline

__all__ = ["Pass", "PassManager", "PassError", "PASS_NAMES", "standard_pipeline", "fusion_summary"]
