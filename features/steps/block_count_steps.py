"""Steps for the packer's block counts made from a text's known count."""

from __future__ import annotations

import hashlib
import random

from behave import given, then, when
from behave.runner import Context

from contextpipe import ContextFragment, OutputFormat, SourceRef, get_tokenizer
from contextpipe.assembly._block_costs import BlockCosts
from contextpipe.assembly._packing_cache import PackingCache
from contextpipe.assembly.rendering import renderer_for

_LINES = (
    "def handle(request):",
    "    return request.budget",
    "        # nested comment",
    "/usr/lib/contextpipe",
    "// a C comment",
    "  trailing spaces  ",
    "The budget is split by weight, quality and confidence.",
    "- a list item",
    "## A heading",
    ")]}",
    "  ",
    "",
    "naïve café — 日本語のテキスト",
    "x = 1\t",
    "```python",
    "12345678901234567890",
    "'s contraction's",
    '<tag attr="&amp;">',
    "a  b, then  c",
    "don 't stop 's now",
    "tab\tthen space \t mixed",
    "1 234 567.89 x",
    "emoji 😀 here 日本 語",
    "((x)) y -- z ;",
    "word.\u00a0nbsp then",
)


@given(
    "texts of every awkward shape: indented code, trailing spaces and line breaks, lines"
    ' starting with "/" or punctuation, one line, empty lines, unicode'
)
def awkward_texts(context: Context) -> None:
    generator = random.Random(20261125)
    texts = list(_LINES)
    for _ in range(400):
        lines = [generator.choice(_LINES) for _ in range(generator.randint(1, 8))]
        ending = generator.choice(("", "\n", "\n\n", " ", "  \n", "\n  "))
        texts.append("\n".join(lines) + ending)
    context.texts = [text for text in texts if text]


def _fragment(number: int, text: str, language: str) -> ContextFragment:
    path = f"docs/part{number}.{'py' if language else 'md'}"
    return ContextFragment(
        id=f"f{number}",
        uko_uri=f"uko://doc/{path}",
        detail_depth=9,
        text=text,
        token_count=1,
        source=SourceRef(
            uri=f"uko://doc/{path}", path=path, start_line=1, end_line=9, kind="section"
        ),
        content_hash=hashlib.sha256(text.encode()).hexdigest(),
        metadata={"title": "Part", **({"language": language} if language else {})},
    )


class _Recording:
    """The tokenizer, recording the length of each text it encodes."""

    def __init__(self, name: str) -> None:
        self._tokenizer = get_tokenizer(name)
        self.name = self._tokenizer.name
        self.additive_at_line_starts = self._tokenizer.additive_at_line_starts
        self.additive_before_spaces = self._tokenizer.additive_before_spaces
        self.max_token_chars = self._tokenizer.max_token_chars
        self.lengths: list[int] = []

    def count(self, text: str) -> int:
        self.lengths.append(len(text))
        return self._tokenizer.count(text)


@when("the packer counts each as a block of {output} output, knowing each text's count")
def count_blocks(context: Context, output: str) -> None:
    count_blocks_with(context, output, "o200k_base")


@when(
    "the packer counts each as a block of {output} output with {tokenizer}, knowing each"
    " text's count"
)
def count_blocks_with(context: Context, output: str, tokenizer: str) -> None:
    exact = get_tokenizer(tokenizer)
    recording = _Recording(tokenizer)
    renderer = renderer_for(OutputFormat(output))
    costs = BlockCosts(
        renderer,
        recording,  # pyright: ignore[reportArgumentType] - a Tokenizer in all but name
        PackingCache(),
        text_tokens=lambda fragment: exact.count(fragment.text),
    )
    context.counts = []
    context.by_parts = 0
    context.by_words = 0
    for number, text in enumerate(context.texts):
        for language in ("", "python"):
            fragment = _fragment(number, text, language)
            block = renderer.block(fragment)
            recording.lengths.clear()
            unit = costs.unit(block, fragment)
            whole = block + renderer.separator
            context.counts.append((whole, unit.tokens, exact.count(whole)))
            context.by_parts += bool(recording.lengths) and max(recording.lengths) < len(text)
            # Cut at the last line start, the packer would encode that line twice, then the
            # rest of the block around it.
            by_line = 2 * len(text.rsplit("\n", 1)[-1]) + len(whole) - len(text)
            context.by_words += bool(recording.lengths) and sum(recording.lengths) < by_line


@then("every count equals the count of the block and its separator, encoded whole")
def counts_exact(context: Context) -> None:
    wrong = [(whole, ours, real) for whole, ours, real in context.counts if ours != real]
    assert not wrong, f"{len(wrong)} of {len(context.counts)} wrong, e.g. {wrong[0]!r}"


@then("the texts' last lines were encoded instead of the whole text for at least {count:d} of them")
def counted_by_parts(context: Context, count: int) -> None:
    assert context.by_parts >= count, f"only {context.by_parts} blocks were counted by parts"


@then(
    "the texts' last words were encoded instead of their whole last line for at least"
    " {count:d} of them"
)
def counted_by_words(context: Context, count: int) -> None:
    assert context.by_words >= count, f"only {context.by_words} blocks were counted by words"
