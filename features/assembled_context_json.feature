Feature: The assembled context as JSON
  A tool that calls contextpipe with `--format json` reads everything it needs from one
  JSON document: each fragment with its citation and the strategies that proposed it, a
  report per strategy, what was left out and why, and how long it took. The JSON schema
  published in docs/ describes the same fields.

  Background:
    Given the sample documentation is indexed

  Scenario: The JSON carries the request, the budget and the tokenizer
    When I ask for "how is the token budget split between strategies?" within 300 tokens as json
    And I read the assembled context as JSON
    Then the JSON has the fields "query, budget, tokens_used, tokenizer, fragments, strategies, dropped, elapsed_ms"
    And the JSON field "query" is "how is the token budget split between strategies?"
    And the JSON field "budget" is 300
    And the JSON field "tokenizer" is "o200k_base"
    And the JSON field "tokens_used" is at most the budget

  Scenario: Every fragment in the JSON is cited and says who proposed it
    When I ask for "how is the token budget split between strategies?" within 300 tokens as json
    And I read the assembled context as JSON
    Then every entry of "fragments" has the fields "id, uko_uri, detail_depth, text, token_count, score, source, provenance"
    And every entry of "fragments[].source" has the fields "uri, path, start_line, end_line"
    And every entry of "fragments[].provenance" has the fields "strategy, plugin, rank, score, reason"
    And every fragment's token_count is the token count of its text
    And the first fragment was proposed by "simple-keyword" of plugin "contextpipe 0.1.0" with a reason mentioning "BM25 matched"

  Scenario: The JSON reports every strategy and every fragment left out
    When I ask for "how is the token budget split between strategies?" within 300 tokens as json
    And I read the assembled context as JSON
    Then every entry of "strategies" has the fields "name, status, allocated_tokens, used_tokens, proposed, accepted, elapsed_ms, reason"
    And every entry of "dropped" has the fields "id, uko_uri, reason"
    And the JSON report of "simple-keyword" has status "ok"

  Scenario: A client reading the JSON back gets the same context, dropped list included
    When I ask for "how is the token budget split between strategies?" within 60 tokens as json
    And I read the JSON back into an AssembledContext
    Then it equals the assembled context, with the same dropped entries in the same order

  Scenario: The JSON schema describes the fields of the JSON output
    When I generate the JSON schema of the assembled context
    Then the schema describes these fields:
      | field                         |
      | query                         |
      | budget                        |
      | tokens_used                   |
      | tokenizer                     |
      | elapsed_ms                    |
      | fragments[].id                |
      | fragments[].uko_uri           |
      | fragments[].detail_depth      |
      | fragments[].text              |
      | fragments[].token_count       |
      | fragments[].score             |
      | fragments[].source.uri        |
      | fragments[].source.path       |
      | fragments[].source.start_line |
      | fragments[].source.end_line   |
      | fragments[].provenance[].strategy |
      | fragments[].provenance[].plugin   |
      | fragments[].provenance[].rank     |
      | fragments[].provenance[].score    |
      | fragments[].provenance[].reason   |
      | strategies[].name             |
      | strategies[].status           |
      | strategies[].allocated_tokens |
      | strategies[].used_tokens      |
      | strategies[].proposed         |
      | strategies[].rejected         |
      | strategies[].accepted         |
      | strategies[].elapsed_ms       |
      | strategies[].reason           |
      | dropped[].id                  |
      | dropped[].reason              |

  Scenario: Nothing in the JSON output is missing from the schema
    When I ask for "how is the token budget split between strategies?" within 300 tokens as json
    And I read the assembled context as JSON
    And I generate the JSON schema of the assembled context
    Then every field of the JSON output is described by the schema

  Scenario: The schema published in docs/ is the schema of this version
    When I generate the JSON schema of the assembled context
    Then it is exactly docs/assembled-context.schema.json
