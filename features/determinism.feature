Feature: The same request gives the same output
  Same store, same request, same config: byte-identical output, whatever order the
  strategies happen to finish in.

  Scenario Outline: Asking twice gives byte-identical <output> text
    Given the sample documentation is indexed
    When I ask for "how is the token budget split between strategies?" within 300 tokens as <output>
    And I ask the same again from a freshly opened pipeline
    Then both answers have byte-identical text, messages, fragments and dropped lists

    Examples:
      | output   |
      | markdown |
      | xml      |
      | json     |
      | messages |

  Scenario: The order in which strategies finish does not change the output
    # "snail" comes first in plan order (strategies are planned by name) but finishes last
    # the first time; the second time "swift" finishes last. The budget leaves candidates
    # out, at the packer and at each strategy's allocation, so the dropped list has an order
    # to keep too.
    Given a strategy "snail" that finishes slowly on the first request only, proposing:
      | fragment | path      | lines | text                                                            |
      | split    | split.md  | 1-4   | The allocator splits the budget by weight, quality and confidence. |
      | caps     | caps.md   | 1-4   | Caps keep one strategy from taking every token of the budget.   |
      | pool     | pool.md   | 1-4   | Tokens a strategy leaves go back to the pool for the packer.    |
      | fusion   | fusion.md | 1-4   | Fusion merges the lists and keeps every strategy's provenance.  |
      | ranks    | ranks.md  | 1-4   | Reciprocal ranks decide which candidates the packer sees first. |
    And a strategy "swift" that finishes slowly on the second request only, proposing:
      | fragment | path      | lines | text                                                            |
      | floors   | floor.md  | 1-4   | Floors guarantee each strategy a minimum share of the budget.   |
      | split    | split.md  | 1-4   | The allocator splits the budget by weight, quality and confidence. |
      | packer   | pack.md   | 1-4   | The packer fills the budget with the best candidates that fit.  |
      | pool     | pool.md   | 1-4   | Tokens a strategy leaves go back to the pool for the packer.    |
      | ranks    | ranks.md  | 1-4   | Reciprocal ranks decide which candidates the packer sees first. |
      | render   | render.md | 1-4   | Renderers count every header and separator against the budget.  |
    When I ask for "how is the budget split?" within 90 tokens
    And I ask the same again
    Then "snail" finished after "swift" the first time and before it the second time
    And both answers dropped candidates
    And both answers have byte-identical text, messages, fragments and dropped lists

  Scenario: Processes with different hash seeds index and answer byte for byte alike
    # Python salts the hash of every string per process: anything that follows the order
    # of a set or a hash shows up as a difference between two processes.
    Given the sample documentation, not yet indexed, in two project folders
    When the contextpipe command indexes each and asks "how is the token budget split between strategies?" within 300 tokens in every format, in one with PYTHONHASHSEED=1 and in the other with PYTHONHASHSEED=2
    Then both processes printed byte-identical output in every format, apart from timings

  Scenario: Threads sharing one pipeline get the answers one thread gets alone
    # A server shares one Pipeline between its worker threads: the caches behind packing
    # fill concurrently, and nothing may leak from one request into another.
    Given the sample documentation is indexed
    When 8 threads share one freshly opened pipeline, each asking every question of the sample list in its own order, in every format
    Then every answer is byte-identical to the one a single thread gets for the same question and format

  Scenario: A pipeline whose memos are full and forgetting answers as one that remembers
    # A service that has answered for hours: the memos of hashes, token counts, word sets
    # and node variants are full and forget their oldest entries at every miss.
    Given the sample documentation is indexed
    When 4 threads share one freshly opened pipeline whose memos keep 3 entries each, each asking every question of the sample list in its own order, in every format
    Then every answer is byte-identical to the one a single thread gets for the same question and format
    And none of its memos holds more entries than that
