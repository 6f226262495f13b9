"""Evaluation and tuning of the assembled context on public benchmarks (BEIR folders): a
face over `Pipeline`, like the command line, importing only the package root.

    data = read_beir(Path("scifact"), "train")
    with indexed_project(data, config=None) as project:
        print(evaluate(project, data).as_json())
"""

from __future__ import annotations

from .beir import BeirSet, read_beir, write_corpus
from .config_text import NOTE_PREFIX, tuned_config, tuning_note
from .fileloc import (
    ACCURACY_AT,
    FILELOC_BUDGET,
    FilelocEvaluation,
    FilelocTask,
    LocFigures,
    evaluate_fileloc,
    read_tasks,
)
from .locomo import (
    Conversation,
    LocomoEvaluation,
    evaluate_locomo,
    memory_project,
    read_locomo,
)
from .measure import HIT_BUDGETS, RANKING_BUDGET, EvalProgress, Evaluation, Figures, evaluate
from .project import Project, indexed_project
from .tuning import Parameter, Trial, Tuning, searched, tune

__all__ = [
    "ACCURACY_AT",
    "FILELOC_BUDGET",
    "HIT_BUDGETS",
    "NOTE_PREFIX",
    "RANKING_BUDGET",
    "BeirSet",
    "Conversation",
    "EvalProgress",
    "Evaluation",
    "Figures",
    "FilelocEvaluation",
    "FilelocTask",
    "LocFigures",
    "LocomoEvaluation",
    "Parameter",
    "Project",
    "Trial",
    "Tuning",
    "evaluate",
    "evaluate_fileloc",
    "evaluate_locomo",
    "indexed_project",
    "memory_project",
    "read_beir",
    "read_locomo",
    "read_tasks",
    "searched",
    "tune",
    "tuned_config",
    "tuning_note",
    "write_corpus",
]
