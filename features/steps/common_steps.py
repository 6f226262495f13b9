"""Steps shared by every feature: a project, its config, indexing, asking for context."""

from __future__ import annotations

from behave import given, then, when
from behave.runner import Context
from testkit import (
    SAMPLE_FILES,
    assemble,
    left_for_the_collector,
    named,
    names_in_context,
    pipeline,
    report,
    require_closed_pipeline,
    result,
    toml_value,
    write_files,
)

from contextpipe import ContextRequest, OutputFormat, StrategySelection

# -- the project -----------------------------------------------------------------------------


@given("the sample documentation is indexed")
def sample_documentation_indexed(context: Context) -> None:
    write_files(context.project, SAMPLE_FILES)
    pipeline(context).index([context.project])


@given("the project is indexed")
def project_indexed(context: Context) -> None:
    context.summaries = pipeline(context).index([context.project])


@given('a file "{path}" containing:')
def file_containing(context: Context, path: str) -> None:
    write_files(context.project, {path: context.text + "\n"})


@given("the project config file:")
def project_config_file(context: Context) -> None:
    require_closed_pipeline(context, "the config file")
    (context.project / "config.toml").write_text(context.text + "\n", encoding="utf-8")


@given('the setting "{key}" is {value}')
def setting_override(context: Context, key: str, value: str) -> None:
    """A command-line style override (`Pipeline.open(overrides=...)`)."""
    require_closed_pipeline(context, "a setting")
    context.overrides[key] = toml_value(value)


@given('the environment variable {name} is "{value}"')
def environment_variable(context: Context, name: str, value: str) -> None:
    require_closed_pipeline(context, "an environment variable")
    context.environ[name] = value


# -- asking for context ----------------------------------------------------------------------


@when('I ask for "{query}" within {budget:d} tokens')
def ask(context: Context, query: str, budget: int) -> None:
    assemble(context, query, budget=budget)


@when('I ask for "{query}" within {budget:d} tokens as {output:Output}')
def ask_as(context: Context, query: str, budget: int, output: str) -> None:
    assemble(context, ContextRequest(query=query, budget=budget, output=OutputFormat(output)))


@when('I ask for "{query}" within {budget:d} tokens using only the strategy "{name}"')
def ask_one_strategy(context: Context, query: str, budget: int, name: str) -> None:
    request = ContextRequest(query=query, budget=budget, strategies={name: StrategySelection()})
    assemble(context, request)


@when('I ask for "{query}" within {budget:d} tokens with a deadline of {deadline:d} ms')
def ask_with_deadline(context: Context, query: str, budget: int, deadline: int) -> None:
    context.request = ContextRequest(query=query, budget=budget, deadline_ms=deadline)
    assemble(context, context.request)


@when('I ask for "{query}" within {budget:d} tokens with an mmr_lambda of {lam:g}')
def ask_with_lambda(context: Context, query: str, budget: int, lam: float) -> None:
    assemble(context, query, budget=budget, mmr_lambda=lam)


@when('I ask for "{query}" within {budget:d} tokens {times:d} times with the collector off')
def ask_collector_off(context: Context, query: str, budget: int, times: int) -> None:
    ask(context, query, budget)  # what the first request loads once is not garbage

    def asking() -> None:
        for _ in range(times):
            ask(context, query, budget)
            result(context)

    left_for_the_collector(context, asking)


@then("those requests left nothing in reference cycles")
def no_cycles_left(context: Context) -> None:
    left = sum(context.cycles.values())
    frames = sorted(name for name in context.cycles if name.startswith("frame of"))
    assert left == 0, f"{left} objects left in cycles: {context.cycles.most_common(6)}; {frames}"


# -- what came back --------------------------------------------------------------------------


@then("the context is empty")
def context_is_empty(context: Context) -> None:
    assembled = result(context)
    assert assembled.fragments == (), f"fragments: {[f.uko_uri for f in assembled.fragments]}"
    assert assembled.tokens_used == 0, f"tokens_used is {assembled.tokens_used}"


@then("the context is not empty")
def context_not_empty(context: Context) -> None:
    assert result(context).fragments, "the context holds no fragment"


@then("the context uses at most the budget")
def within_budget(context: Context) -> None:
    assembled = result(context)
    assert assembled.tokens_used <= assembled.budget, (assembled.tokens_used, assembled.budget)


@then("the context uses the whole budget")
def whole_budget(context: Context) -> None:
    assembled = result(context)
    assert assembled.tokens_used == assembled.budget, (assembled.tokens_used, assembled.budget)


@then('the context holds the fragments "{names}" in this order')
def holds_in_order(context: Context, names: str) -> None:
    expected = [name.strip() for name in names.split(",")]
    assert names_in_context(context) == expected, f"the context holds {names_in_context(context)}"


@then('the context holds the fragment "{name}"')
def holds_fragment(context: Context, name: str) -> None:
    uri = named(context, name).uko_uri
    assert uri in [f.uko_uri for f in result(context).fragments], (
        f"{name} is not in the context; it holds {names_in_context(context)}"
    )


@then('the context does not hold the fragment "{name}"')
def lacks_fragment(context: Context, name: str) -> None:
    uri = named(context, name).uko_uri
    assert uri not in [f.uko_uri for f in result(context).fragments], f"{name} is in the context"


@then('the report of "{name}" says {status:Status} with a reason mentioning "{words}"')
def report_says(context: Context, name: str, status: str, words: str) -> None:
    strategy_report = report(context, name)
    assert strategy_report.status == status, f"{name}: {strategy_report}"
    assert words in strategy_report.reason, f"{name}: reason is {strategy_report.reason!r}"


@then('the report of "{name}" says {status:Status}')
def report_status(context: Context, name: str, status: str) -> None:
    strategy_report = report(context, name)
    assert strategy_report.status == status, f"{name}: {strategy_report}"


@then('the assembly fails with {error} saying "{words}"')
def assembly_fails(context: Context, error: str, words: str) -> None:
    assert context.error is not None, "the assembly succeeded"
    assert type(context.error).__name__ == error, f"{type(context.error).__name__}: {context.error}"
    assert words in str(context.error), f"the message is {str(context.error)!r}"
    assert "\n" not in str(context.error), f"the message is not one line: {context.error!r}"
