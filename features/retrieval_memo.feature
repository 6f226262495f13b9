Feature: Pipelines that share a retrieval memo run each strategy once per request and allocation
  `contextpipe tune` assembles every judged query once per trial, and most trials change
  only fusion or packing (`rrf_k`, `mmr_lambda`), which do not change what a strategy is
  asked. Pipelines opened with one `RetrievalMemo` take a strategy's answer to a request at
  an allocation from the memo when one of them already ran it, so only fusion and packing
  run again, and the context is the one a pipeline without the memo assembles.

  Background:
    Given the sample documentation is indexed
    And a strategy "lexical" of quality 1.0 that proposes:
      | fragment | path     | lines | text                                          |
      | split    | split.md | 1-2   | The budget is split by weight and by quality. |
      | floors   | floor.md | 1-2   | Each strategy first receives its floor.       |

  Scenario: A second pipeline with other fusion and packing settings does not run the strategies again
    When I assemble "how is the budget split?" within 600 tokens with "fusion.rrf_k" 60, then with "fusion.rrf_k" 5 and "packing.mmr_lambda" 0.5, sharing a memo
    Then the strategy "lexical" was run once
    And the memo answered 2 strategy runs
    And the last context is the one a pipeline without the memo assembles

  Scenario: Another allocation is another question: a new weight runs the strategy again
    When I assemble "how is the budget split?" within 600 tokens with "strategies.lexical.weight" 1, then with "strategies.lexical.weight" 3, sharing a memo
    Then the strategy "lexical" was run 2 times
    And the last context is the one a pipeline without the memo assembles

  Scenario: A strategy that failed is asked again, never answered from the memo
    Given the strategy "lexical" raises RuntimeError "index offline" on its first run
    When I assemble "how is the budget split?" within 600 tokens with "fusion.rrf_k" 60, then with "fusion.rrf_k" 5, sharing a memo
    Then the strategy "lexical" was run 2 times
    And the report of "lexical" says ok
    And the context holds the fragment "split"
