"""Tests for path-match: the strategy alone over a fake timeline, then the whole plugin
inside a real pipeline. Run with `python -m unittest discover -s tests`.
"""

from __future__ import annotations

import tempfile
import unittest
from collections.abc import Sequence
from datetime import datetime
from fnmatch import fnmatchcase
from pathlib import Path

from contextpipe import (
    Backends,
    ConfigError,
    ContextFragment,
    ContextRequest,
    Pipeline,
    RequestFilters,
    Settings,
    SourceRef,
    StrategySelection,
)

import contextpipe_example_plugin as plugin
from contextpipe_example_plugin import PathMatchStrategy


def fragment(path: str, text: str, tokens: int = 10) -> ContextFragment:
    uri = f"uko://doc/{path}#all"
    return ContextFragment(
        id=path,
        uko_uri=uri,
        detail_depth=9,
        text=text,
        token_count=tokens,
        source=SourceRef(uri=uri, path=path, start_line=1, end_line=1, kind="section"),
        content_hash=path,
    )


class FakeTimeline:
    """A timeline: the fragments whose path matches the filters, in the order given."""

    def __init__(self, *fragments: ContextFragment) -> None:
        self.fragments = fragments

    def recent(
        self,
        limit: int,
        filters: RequestFilters,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> Sequence[ContextFragment]:
        return [
            f
            for f in self.fragments
            if any(fnmatchcase(f.source.path, glob) for glob in filters.paths or ("*",))
        ][:limit]

    def after(
        self,
        moment: datetime,
        limit: int,
        filters: RequestFilters,
        until: datetime | None = None,
    ) -> Sequence[ContextFragment]:
        return list(reversed(self.recent(len(self.fragments), filters)))[:limit]


def request(query: str, budget: int = 1000, paths: tuple[str, ...] = ()) -> ContextRequest:
    return ContextRequest(query=query, budget=budget, filters=RequestFilters(paths=paths))


class PathMatchTest(unittest.TestCase):
    def setUp(self) -> None:
        self.backends = Backends(
            timeline=FakeTimeline(
                fragment("src/Allocator.py", "the budget is split here", tokens=30),
                fragment("docs/budget.md", "how the budget is split", tokens=20),
                fragment("docs/other.md", "budget words but no path match", tokens=5),
            )
        )
        self.strategy = PathMatchStrategy()

    def test_words_skip_short_and_common_ones(self) -> None:
        self.assertEqual(
            self.strategy.words("How is the Budget split? budget"), ["budget", "split"]
        )

    def test_cannot_handle_a_query_without_words(self) -> None:
        self.assertEqual(self.strategy.can_handle(request("is it ok?"), self.backends), 0.0)
        self.assertGreater(self.strategy.can_handle(request("budget"), self.backends), 0.0)

    def test_proposes_only_files_whose_path_names_a_query_word(self) -> None:
        found = self.strategy.retrieve(request("allocator budget"), self.backends, 1000)
        self.assertEqual(
            [c.fragment.source.path for c in found], ["docs/budget.md", "src/Allocator.py"]
        )
        self.assertEqual(found[1].reason, "path src/Allocator.py names allocator")

    def test_stays_within_its_budget(self) -> None:
        found = self.strategy.retrieve(request("allocator budget"), self.backends, 25)
        self.assertEqual([c.fragment.source.path for c in found], ["docs/budget.md"])

    def test_honours_the_request_path_filters(self) -> None:
        found = self.strategy.retrieve(
            request("allocator budget", paths=("src/*",)), self.backends, 1000
        )
        self.assertEqual([c.fragment.source.path for c in found], ["src/Allocator.py"])

    def test_options_are_validated_with_the_key_named(self) -> None:
        settings = Settings.model_validate(
            {"strategies": {"path-match": {"options": {"max_results": 0}}}}
        )
        with self.assertRaises(ConfigError) as caught:
            plugin.contextpipe_strategies(settings)
        self.assertEqual(caught.exception.key, "strategies.path-match.options.max_results")


class InPipelineTest(unittest.TestCase):
    def test_a_real_pipeline_cites_path_match(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "docs").mkdir()
            (root / "docs" / "allocator.md").write_text("# Shares\n\nEach strategy gets a share.\n")
            # If the plugin is installed too, use this checkout's module instead.
            pipeline = Pipeline.open(
                project_dir=root, environ={"CONTEXTPIPE_DISABLE_PLUGINS": "path-match"}
            )
            pipeline.registry.register(plugin, "path-match", "contextpipe-example-plugin")
            pipeline.index([root / "docs"])
            context = pipeline.assemble(
                "allocator share",
                budget=500,
                strategies={"path-match": StrategySelection()},
            )
            pipeline.close()
        self.assertEqual([s.status for s in context.strategies], ["ok"])
        self.assertEqual(context.fragments[0].provenance[0].strategy, "path-match")


if __name__ == "__main__":
    unittest.main()
