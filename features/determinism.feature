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
    Given a strategy "tortoise" that finishes slowly on the first request only, proposing:
      | fragment | path     | lines | text                                         |
      | split    | split.md | 1-4   | The allocator splits the budget by weight.   |
      | caps     | caps.md  | 1-4   | Caps keep one strategy from every token.     |
    And a strategy "hare" that proposes:
      | fragment | path     | lines | text                                         |
      | floors   | floor.md | 1-4   | Floors guarantee a minimum share.            |
      | split    | split.md | 1-4   | The allocator splits the budget by weight.   |
    When I ask for "how is the budget split?" within 60 tokens
    And I ask the same again
    Then both answers have byte-identical text, messages, fragments and dropped lists

  Scenario: Threads sharing one pipeline get the answers one thread gets alone
    # A server shares one Pipeline between its worker threads: the caches behind packing
    # fill concurrently, and nothing may leak from one request into another.
    Given the sample documentation is indexed
    When 8 threads share one freshly opened pipeline, each asking every question of the sample list in its own order, in every format
    Then every answer is byte-identical to the one a single thread gets for the same question and format
